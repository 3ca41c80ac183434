#!/bin/bash
# Boot Debian's kernel KVER in QEMU (TCG) and run a guest suite (tests/qemu/guest/SUITE.sh).
# stdout: only "PASS qemu-<series>/<suite>/<check>", "FAIL ...: why" and "SKIP ...: why" (a
# check whose precondition the kernel lacks) lines (plus qemu-<series>/boot); diagnostics
# on stderr; exit 0 iff nothing failed.
# Run dir (disks, console.log, results.txt, dmesg.txt): $FLAZ_CACHE/qemu/KVER/SUITE.
# FLAZ_ONLY=PREFIX[,PREFIX...] (e2e only) runs just the checks whose names start with one of
# them (and the module's load and unload), e.g. FLAZ_ONLY=flazctl; the default runs all.
# usage: run.sh KVER [SUITE]
set -uo pipefail
KVER=${1:?usage: run.sh KVER [SUITE]}
SUITE=${2:-e2e}
. "$(dirname "$0")/lib.sh"
SERIES=$(series_of "$KVER")
# FLAZ_SUITE_ARGS: words for the suite after its name (replay: "paged", "points=N"); they
# name the run too, apart from a sample's size
SUITE_ARGS=${FLAZ_SUITE_ARGS:-}
NAME_ARGS=$(tr ' ' '\n' <<<"$SUITE_ARGS" | grep -v '^points=' | paste -sd-)
NAME=$SUITE${NAME_ARGS:+-$NAME_ARGS}
PREFIX=qemu-$SERIES/$NAME
# the guest's suite and its arguments, on the kernel command line after "--"
GUEST_ARGS=$SUITE${SUITE_ARGS:+ $SUITE_ARGS}${FLAZ_ONLY:+ only=$FLAZ_ONLY}
RUN=$FLAZ_CACHE/qemu/$KVER/$NAME
FAILED=0

pass() { echo "PASS $1"; }
failed() {
	echo "FAIL $1: $2"
	FAILED=1
}

# The last lines of the console, on one line, for a FAIL message.
console_tail() {
	grep -av '^\s*$' "$RUN/console.log" | tail -n 4 | tr -d '\r' | tr '\n' '|' | cut -c 1-400
}

report_boot() {
	local rc=$1 why
	case $rc in
	33)
		grep -q '^PASS \|^FAIL \|^SKIP ' "$RUN/results.txt" && pass "qemu-$SERIES/boot" && return
		why="the suite recorded no check" ;;
	124) why="timed out after ${QEMU_TIMEOUT}s" ;;
	0) why="the guest panicked or stopped before the suite ended" ;;
	*) why="qemu exited $rc" ;;
	esac
	failed "qemu-$SERIES/boot" "$why; console: $(console_tail)"
	tail -n 40 "$RUN/console.log" >&2
}

# The guest's kernel log (or the console if the guest never saved it) has no oops or warning.
report_dmesg() {
	local log=$RUN/dmesg.txt bad
	[ -s "$log" ] || log=$RUN/console.log
	bad=$(grep -a -m 1 -E 'BUG:|WARNING:|Oops|Call Trace|general protection' "$log")
	if [ -n "$bad" ]; then
		failed "$PREFIX/dmesg-clean" "$(tr -d '\r' <<<"$bad" | cut -c 1-300) (see $log)"
	else
		pass "$PREFIX/dmesg-clean"
	fi
}

main() {
	local initrd rc t0=$SECONDS
	mkdir -p "$RUN"
	if ! initrd=$(initramfs_for "$KVER"); then
		failed "qemu-$SERIES/boot" "could not build the module, flazctl or the initramfs (see stderr)"
		return
	fi
	make_disks "$RUN"
	rm -f "$RUN"/console*.log
	boot_started "$KVER" "$initrd" "$RUN" "$GUEST_ARGS" "$RUN/console.log" fresh
	rc=$?
	echo "qemu exited $rc after $((SECONDS - t0)) s; logs in $RUN" >&2
	report_checks "$PREFIX" "$RUN/results.txt"
	[ -z "$UNFINISHED" ] ||
		failed "$PREFIX/$UNFINISHED" "the guest stopped during this check (see $RUN/console.log)"
	report_boot "$rc"
	report_dmesg
}

main
exit $FAILED

#!/bin/bash
# Crash safety by resetting the VM or cutting its power: boot Debian's kernel KVER in QEMU
# (TCG) ROUNDS times (default 3) on the same disks. Each round boots guest/crash-write.sh
# (creates the flaz volume, cold in round 1 only; runs mixed fio writes and reads; after a
# delay drawn from the round's seed, resets the machine with sysrq-b or has the power cut,
# its disks' volatile write caches lost, as round_kind says), then
# guest/crash-check.sh (re-creates the volume without cold: it must come back; every block
# must equal the HDD's; clean remove). stdout: only "PASS crash-<series>/roundN/<check>",
# "FAIL ...: why" and "SKIP ...: why" lines; diagnostics
# (blocks_cached after each crash, the seed) on stderr; exit 0 iff nothing failed.
# Run dir (disks; per boot console, results and dmesg): $FLAZ_CACHE/qemu/KVER/crash.
# FLAZ_CRASH_SEED=N repeats a run's delays and fio streams (the seed is printed on stderr).
# FLAZ_CRASH_PAGED=1 runs the rounds at paging geometry (crash-<series>-paged).
# usage: crash.sh KVER [ROUNDS]
set -uo pipefail
KVER=${1:?usage: crash.sh KVER [ROUNDS]}
ROUNDS=${2:-3}
. "$(dirname "$0")/lib.sh"
SERIES=$(series_of "$KVER")
# FLAZ_CRASH_PAGED=1: the volume at paging geometry (guest/crash-lib.sh "paged")
PAGED=${FLAZ_CRASH_PAGED:+paged}
NAME=crash-$SERIES${PAGED:+-paged}
RUN=$FLAZ_CACHE/qemu/$KVER/crash${PAGED:+-paged}
# a boot takes well under a minute; a hung one should not cost the whole budget
QEMU_TIMEOUT=${FLAZ_QEMU_TIMEOUT:-240}
SEED=${FLAZ_CRASH_SEED:-$(((RANDOM << 15) | RANDOM))}
FAILED=0

pass() { echo "PASS $1"; }
failed() {
	echo "FAIL $1: $2"
	FAILED=1
}

# The last lines of console $1, on one line, for a FAIL message.
console_tail() {
	grep -av '^\s*$' "$1" | tail -n 4 | tr -d '\r' | tr '\n' '|' | cut -c 1-400
}

# boot TAG SUITE ARGS...: boot guest suite SUITE with ARGS on the run dir's disks with a
# fresh results disk; leaves TAG.console, TAG.results and TAG.dmesg in the run dir and
# sets BOOT_RC to qemu's status.
boot() {
	local tag=$1 t0=$SECONDS
	shift
	rm -f "$RUN/$tag".*
	boot_started "$KVER" "$INITRD" "$RUN" "$*" "$RUN/$tag.console"
	BOOT_RC=$?
	mv "$RUN/results.txt" "$RUN/$tag.results"
	mv "$RUN/dmesg.txt" "$RUN/$tag.dmesg"
	echo "$tag: qemu exited $BOOT_RC after $((SECONDS - t0)) s" >&2
}

# dmesg_clean NAME TAG: the boot's kernel log (as saved by the guest, and the console, which
# also has whatever came after it) has no oops or warning.
dmesg_clean() {
	local bad
	bad=$(cat "$RUN/$2.dmesg" "$RUN/$2.console" 2>/dev/null |
		grep -a -m 1 -E 'BUG:|WARNING:|Oops|Call Trace|general protection|Kernel panic')
	if [ -n "$bad" ]; then
		failed "$1" "$(tr -d '\r' <<<"$bad" | cut -c 1-300) (see $RUN/$2.console)"
	else
		pass "$1"
	fi
}

# A power cut, where a reset keeps every write the disks completed: in a cut round the HDD
# and SSD images are served by nbdkit through its cache filter in writeback mode, so a
# write reaches the image only through a FLUSH, as on a disk with a volatile write cache
# (virtio-blk has no FUA: the guest's FUA writes come as writes and a FLUSH). When the guest
# prints CUT_LINE on its console (where it would reset), the watcher stops QEMU, kills both
# servers, which loses their caches, then kills QEMU.
CUT_LINE=FLAZ-POWER-CUT
NBD=$RUN/nbd
NBD_PIDS=()

# round_kind R: what ends round R: the power cut right after an fsync, following writes
# (1, 5, ...), a reset a second or two after a quiet, committed point (2, 6, ...), the power
# cut once the commits have cleared every region the writes marked, with no fsync since
# (3, 7, ...), or a reset amid the writes (4, 8, ...). An fsync flushes the HDD, which hides
# a commit that cleared regions without flushing it: the two cuts see different faults.
round_kind() {
	case $(($1 % 4)) in
	1) echo cut ;;
	2) echo quiet ;;
	3) echo cleared ;;
	*) echo amid ;;
	esac
}

# power_cut_arm TAG: start the two servers and the watcher of boot TAG's console; fails,
# saying why in ARM_WHY, if they do not come up.
power_cut_arm() {
	local console=$RUN/$1.console dev n
	# not an earlier run's console or QEMU, whose line or pid would cut this one
	rm -rf "$NBD" "$console" "$RUN/qemu.pid"
	mkdir -p "$NBD"
	trap power_cut_disarm EXIT
	NBD_PIDS=()
	for dev in hdd ssd; do
		TMPDIR=$NBD nbdkit -f -U "$NBD/$dev.sock" --filter=cache \
			file "$RUN/$dev.img" cache=writeback cache-min-block-size=4k \
			>"$NBD/$dev.log" 2>&1 &
		NBD_PIDS+=($!)
	done
	for n in $(seq 100); do
		[ -S "$NBD/hdd.sock" ] && [ -S "$NBD/ssd.sock" ] && break
		sleep 0.1
	done
	if [ ! -S "$NBD/hdd.sock" ] || [ ! -S "$NBD/ssd.sock" ]; then
		ARM_WHY="nbdkit did not start: $(tail -q -n 2 "$NBD"/*.log | tr '\n' ' ')"
		return 1
	fi
	(
		until grep -aqF "$CUT_LINE" "$console" 2>/dev/null; do
			[ -e "$NBD/disarm" ] && exit 0
			sleep 0.1
		done
		q=$(cat "$RUN/qemu.pid" 2>/dev/null)
		[ -z "$q" ] || kill -STOP "$q"
		kill -9 "${NBD_PIDS[@]}"
		touch "$NBD/cut"
		[ -z "$q" ] || kill -9 "$q"
	) &
	CUT_WATCH=$!
}

# power_cut_disarm: stop the watcher and a server still up (no cut came): ours only, by
# the pid its launch gave and the socket on its command line.
power_cut_disarm() {
	local p
	touch "$NBD/disarm"
	[ -z "${CUT_WATCH:-}" ] || wait "$CUT_WATCH"
	CUT_WATCH=
	for p in "${NBD_PIDS[@]}"; do
		grep -aqF "$NBD/" "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p"
	done
	wait "${NBD_PIDS[@]}" 2>/dev/null
	NBD_PIDS=()
	trap - EXIT
}

# Round $1, first boot: the suite must reach its reset ("CRASH" record, then qemu exits 0
# because of -no-reboot), or in a cut round its power cut (killed, 137).
write_boot() {
	local r=$1 p=$NAME/round$1 tag=round$1-write kind cut= rc=0 how=reset
	kind=$(round_kind "$r")
	case $kind in
	cut | cleared)
		cut=cut rc=137 how=power-cut
		if ! power_cut_arm "$tag"; then
			failed "$p/write-then-$how" "$ARM_WHY"
			power_cut_disarm
			return
		fi
		;;
	esac
	FLAZ_NBD_DIR=${cut:+$NBD} boot "$tag" crash-write "$r" $((SEED + r)) "$kind" $PAGED
	[ -z "$cut" ] || power_cut_disarm
	report_checks "$p/write" "$RUN/$tag.results"
	if [ -n "$cut" ] && [ ! -e "$NBD/cut" ]; then
		failed "$p/write-then-$how" "the guest did not reach the $how (qemu exited $BOOT_RC, last check '${UNFINISHED:-none}'); console: $(console_tail "$RUN/$tag.console")"
	elif grep -q '^CRASH ' "$RUN/$tag.results" && [ "$BOOT_RC" -eq $rc ] &&
		[ "$UNFINISHED" = crash ]; then
		pass "$p/write-then-$how"
	elif [ "$BOOT_RC" -eq 124 ]; then
		failed "$p/write-then-$how" "timed out after ${QEMU_TIMEOUT}s; console: $(console_tail "$RUN/$tag.console")"
	else
		failed "$p/write-then-$how" "the guest did not reach the $how (qemu exited $BOOT_RC, last check '${UNFINISHED:-none}'); console: $(console_tail "$RUN/$tag.console")"
	fi
	dmesg_clean "$p/write-dmesg-clean" "$tag"
	[ "$kind" != cut ] || [ ! -e "$NBD/cut" ] || durable "$p/durable" "$RUN/$tag.results"
}

# durable NAME RESULTS: the MiB the guest wrote through the volume and fsynced right before
# the power cut ("DURABLE MIB SHA" in RESULTS) is on the HDD image, as the FLUSH promised.
durable() {
	local mib sha got
	read -r mib sha < <(sed -n 's/^DURABLE \([0-9]*\) \([0-9a-f]*\)$/\1 \2/p' "$2" | tail -n 1)
	if [ -z "$sha" ]; then
		failed "$1" "no DURABLE record: the guest did not write its fsynced MiB before the cut"
		return
	fi
	got=$(dd if="$RUN/hdd.img" bs=1M skip="$mib" count=1 2>/dev/null | sha256sum | cut -d' ' -f1)
	if [ "$got" = "$sha" ]; then
		pass "$1"
	else
		failed "$1" "MiB $mib of the HDD after the power cut is not what the guest wrote there through the volume and fsynced before it"
	fi
}

# Round $1, second boot: the checks after the crash; the suite must run to its end.
check_boot() {
	local r=$1 p=$NAME/round$1 tag=round$1-check
	boot "$tag" crash-check "$r" "$(round_kind "$r")" $PAGED
	report_checks "$p" "$RUN/$tag.results"
	[ -z "$UNFINISHED" ] ||
		failed "$p/$UNFINISHED" "the guest stopped during this check (see $RUN/$tag.console)"
	if [ "$BOOT_RC" -ne 33 ]; then
		failed "$p/check-boot" "qemu exited $BOOT_RC (33 = the suite ended); console: $(console_tail "$RUN/$tag.console")"
		tail -n 40 "$RUN/$tag.console" >&2
	fi
	dmesg_clean "$p/check-dmesg-clean" "$tag"
}

main() {
	local r t0=$SECONDS
	mkdir -p "$RUN"
	if ! INITRD=$(initramfs_for "$KVER"); then
		failed "$NAME/boot" "could not build the module, flazctl or the initramfs (see stderr)"
		return
	fi
	if ! command -v nbdkit >/dev/null; then
		failed "$NAME/boot" "nbdkit, which serves the power-cut rounds' disks, is not installed (tests/setup.sh installs it)"
		return
	fi
	echo "crash: $ROUNDS rounds, seed $SEED (FLAZ_CRASH_SEED=$SEED repeats this run); logs in $RUN" >&2
	make_disks "$RUN"
	for r in $(seq 1 "$ROUNDS"); do
		write_boot "$r"
		check_boot "$r"
		[ "$(round_kind "$r")" = quiet ] && warm_share "$r"
	done
	echo "crash: $ROUNDS rounds in $((SECONDS - t0)) s" >&2
	during_load
	# a cut or amid round may come back empty (regions marked at the crash drop their
	# lines); the quiet ones are judged by warm_share
	[ "$ROUNDS" -ge 2 ] ||
		echo "SKIP $NAME/quiet-round-warm: one round only, and only quiet rounds (2, 6, ...) commit before the reset"
}

# warm_share R: round R stopped its writes (crash-write.sh, quiet rounds), waited until no
# region was marked (the commits clear a region idle for a whole age: meta.c, intent.c),
# stopped its reads, flushed the volume until a commit followed, and recorded blocks_cached
# (its "quiet" INFO line); then it read for a second or two more and reset. The volume must
# come back with half at least of that quiet figure, or, if less, of what the SSD's committed
# table held after the reset in the table blocks the load brings in (flazctl dump's slots
# and zero blocks: crash-check.sh held_loaded). The evictions of those seconds take some
# (a CI run: 2,152 at the quiet point, 1,920 held in all), and at paging geometry
# blocks_cached counts resident pages' lines only: the pages resident at the quiet point
# (the clock's) held 4,327, the table blocks the load warms (the first, in order) 1,779 in a
# run. A loader that drops lines it should keep (a table page or generation misread), fills
# never written into the committed table, or a commit that leaves the table behind the
# superblock take more.
warm_share() {
	local r=$1 p=$NAME/round$1/warm-share before warm held want
	before=$(grep -a '^INFO round .*: quiet, ' "$RUN/round$r-write.results" |
		grep -o ' blocks_cached=[0-9]*' | tail -n 1 | cut -d= -f2)
	warm=$(sed -n 's/^INFO WARM \([0-9]*\)$/\1/p' "$RUN/round$r-check.results" | tail -n 1)
	held=$(sed -n 's/^INFO HELD \([0-9]*\)$/\1/p' "$RUN/round$r-check.results" | tail -n 1)
	want=$before
	[ -n "$held" ] && [ -n "$before" ] && [ "$held" -lt "$before" ] && want=$held
	if [ -z "$before" ] || [ -z "$warm" ] || [ -z "$held" ]; then
		failed "$p" "no blocks_cached at the quiet point ('$before') or after the reset ('$warm'), or no count of what the SSD held ('$held'), in the round's records"
	elif [ "$want" -gt 0 ] && [ $((warm * 2)) -ge "$want" ]; then
		pass "$p"
	else
		failed "$p" "the volume came back with blocks_cached=$warm; it held $before committed with no I/O and no region marked, a second or two before the reset, and its SSD held $held in the table blocks the load brings in after it: want half at least of the smaller"
	fi
	echo "round $r: blocks_cached $before at the quiet point, $held held on the SSD in the loaded table blocks, $warm after the reset" >&2
}

# during_load: in every round the check's first read started while the volume was loading
# (crash-check.sh: the load pauses before each read), so reads during a post-crash load
# were compared; a round whose load was over first compared nothing of the kind.
during_load() {
	local r n loading
	n=0
	for r in $(seq 1 "$ROUNDS"); do
		loading=$(sed -n 's/^INFO LOADING \([0-9]*\)$/\1/p' "$RUN/round$r-check.results" | tail -n 1)
		[ "${loading:-0}" -gt 0 ] && n=$((n + 1))
	done
	if [ $n -eq "$ROUNDS" ]; then
		pass "$NAME/read-during-load"
	else
		failed "$NAME/read-during-load" "$n of $ROUNDS rounds' first reads started while the volume was loading, want all"
	fi
}

main
exit $FAILED

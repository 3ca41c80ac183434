# Helpers for the guest suites (busybox sh). A suite is a list of named checks; each check's
# result goes to the results disk as soon as it is known ("RUN name", then "PASS name",
# "FAIL name: why" or, for a check whose precondition this kernel lacks, "SKIP name: why"),
# so the host learns everything up to a panic. The kernel log goes there
# too, after the results, when the suite ends.
HDD=/dev/vda
SSD=/dev/vdb
RESULTS_DEV=/dev/vdc
# where the kernel log starts on the results disk (host: run.sh reads both parts)
DMESG_OFFSET_MIB=1
RESULTS=/tmp/results
LOGS=/tmp/logs
mkdir -p $LOGS
: >$RESULTS

# Append a line to the results and rewrite them onto the results disk right away.
record() {
	echo "$*" >>$RESULTS
	dd if=$RESULTS of=$RESULTS_DEV conv=notrunc,fsync 2>/dev/null
}

# Store the kernel log on the results disk for the host's dmesg-clean check.
save_dmesg() {
	dmesg >/tmp/dmesg.txt
	dd if=/tmp/dmesg.txt of=$RESULTS_DEV bs=1M seek=$DMESG_OFFSET_MIB conv=notrunc,fsync 2>/dev/null
}

uptime_s() { cut -d. -f1 /proc/uptime; }

# Fail the current check (checks run in a subshell, so this only ends the check).
fail() {
	echo "$*" >/tmp/why
	echo "FAILED: $*"
	exit 1
}

# Skip the current check: a precondition this kernel lacks (a dm-flakey feature, ...). The
# check ends here and is recorded as "SKIP name: why", neither passed nor failed. Only for
# what a kernel the tests boot may really lack: a precondition that always holds on them
# is a fail.
skip_check() {
	echo "$*" >/tmp/skip
	echo "SKIPPED: $*"
	exit 0
}

# kernel_before MAJOR MINOR: whether the running kernel is older than MAJOR.MINOR.
kernel_before() {
	kb_rel=$(uname -r)
	kb_maj=${kb_rel%%.*}
	kb_min=${kb_rel#*.}
	kb_min=${kb_min%%[!0-9]*}
	[ "$kb_maj" -lt "$1" ] || { [ "$kb_maj" -eq "$1" ] && [ "$kb_min" -lt "$2" ]; }
}

# Read faults come from dm-flakey's error_reads, which Linux 6.5 added: Debian 12's 6.1 has
# none (its dm-flakey.ko lacks the word), so the check is skipped there; from 6.5 on it must
# be there, and a table with it that is refused fails the check. Call before the check
# creates any device (a skipped check is not cleaned up after).
need_flakey_error_reads() {
	kernel_before 6 5 &&
		skip_check "dm-flakey has no error_reads before Linux 6.5 (this is $(uname -r))"
	return 0
}

# Run a command whose output is only logged; fail the check with its last line if it fails.
must() {
	"$@" >/tmp/must.out 2>&1
	must_rc=$?
	cat /tmp/must.out
	[ $must_rc -eq 0 ] || fail "'$*' exited $must_rc: $(tail -n 1 /tmp/must.out)"
}

# The cache keeps its state on the SSD, so each check starts from a blank one (a check
# would otherwise find the last one's superblock, and come back warm or be refused): the
# superblock copies and the start of the table, which also blanks dm-linear slices at the
# SSD's start. Not while a device-mapper device is left: that is a check going on with the
# volume of the one before (and a live volume's SSD is not ours to overwrite).
# Suites whose SSD must survive from boot to boot (the crash suites) set KEEP_SSD=1.
blank_ssd() {
	[ "${KEEP_SSD:-0}" = 1 ] && return 0
	dmsetup ls 2>/dev/null | grep -q '(' && return 0
	dd if=/dev/zero of=$SSD bs=64k count=1 conv=fsync 2>/dev/null
}

# check NAME FUNCTION [ARGS...]: run one named check. Its output goes to the console only
# if it fails; after a failure every device-mapper device and mount is removed so that
# later checks start clean.
# FLAZ_ONLY (set by a suite, e.g. e2e.sh only=...) runs only the checks whose names start
# with one of its words; the others are not run and not reported.
check() {
	name=$1
	shift
	if [ -n "${FLAZ_ONLY:-}" ]; then
		only_hit=0
		for only_w in $FLAZ_ONLY; do
			case $name in "$only_w"*) only_hit=1 ;; esac
		done
		[ $only_hit = 1 ] || return 0
	fi
	record "RUN $name"
	rm -f /tmp/why /tmp/skip /tmp/unloaded
	blank_ssd
	t0=$(uptime_s)
	# a wait_loaded that gave up fails the check even where its caller went on (in $(...))
	if ("$@") >"$LOGS/$name.log" 2>&1 && [ ! -e /tmp/unloaded ]; then
		if [ -e /tmp/skip ]; then
			record "SKIP $name: $(head -n 1 /tmp/skip)"
			echo "SKIP $name: $(head -n 1 /tmp/skip)"
			return 0
		fi
		record "PASS $name"
		echo "PASS $name ($(($(uptime_s) - t0)) s)"
		return 0
	fi
	why=$(cat /tmp/why 2>/dev/null)
	[ -e /tmp/unloaded ] && why=$(head -n 1 /tmp/unloaded)
	record "FAIL $name: ${why:-$* failed}"
	echo "FAIL $name: ${why:-$* failed} ($(($(uptime_s) - t0)) s)"
	tail -n 30 "$LOGS/$name.log" | sed 's/^/    /'
	umount /mnt 2>/dev/null
	dmsetup remove_all
	return 1
}

# The kernel log lines added since the last call to kmsg_mark.
kmsg_mark() { dmesg | wc -l >/tmp/kmsg.mark; }
kmsg_new() { dmesg | tail -n +$(($(cat /tmp/kmsg.mark) + 1)); }

# refused PATTERN COMMAND...: COMMAND must fail, and the kernel log must gain a
# "flaz: ..." line matching PATTERN (an extended regular expression).
refused() {
	pat=$1
	shift
	kmsg_mark
	if "$@" >/tmp/refused.out 2>&1; then
		fail "'$*' succeeded, expected a refusal"
	fi
	kmsg_new >/tmp/kmsg.new
	cat /tmp/refused.out /tmp/kmsg.new
	grep -Eq "flaz: .*($pat)" /tmp/kmsg.new ||
		fail "'$*' was refused but the kernel log has no 'flaz: ...$pat' (new lines: $(tr '\n' '|' </tmp/kmsg.new | tail -c 300))"
}

# Size in 512-byte sectors.
sectors() { blockdev --getsz "$1"; }

# flaz_table [OPTIONS...]: a flaz table over the whole HDD with these optional arguments.
flaz_table() { echo "0 $(sectors $HDD) flaz $HDD $SSD $# $*"; }

# status_now VOL KEY: KEY's value in VOL's status as it is now, loading or not (status_val
# waits for the load).
status_now() { dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Wait (60 s at most) until flaz volume $1 has read its table in (status loading=0), so
# what its status says is the warm state; a device without the key does not wait. Still
# loading after 60 s: returns 1 and leaves the reason in /tmp/unloaded, which fails the
# check (check()) even when the caller cannot, in a command substitution.
wait_loaded() {
	# once one wait gave up, the check has failed: the next ones do not wait 60 s again
	[ -e /tmp/unloaded ] && return 1
	wl_i=0
	while wl=$(status_now "$1" loading 2>/dev/null) &&
		[ -n "$wl" ] && [ "$wl" != 0 ]; do
		if [ $wl_i -ge 600 ]; then
			echo "volume $1 still loading its table after 60 s (loading=$wl): $(dmsetup status "$1")" |
				cut -c 1-400 >>/tmp/unloaded
			echo "wait_loaded: $(tail -n 1 /tmp/unloaded)" >&2
			return 1
		fi
		sleep 0.1
		wl_i=$((wl_i + 1))
	done
	return 0
}

# The value of key $2 in the status line of volume $1 (once its table is in; fails the
# check if it never is).
status_val() {
	wait_loaded "$1" || fail "$(head -n 1 /tmp/unloaded)"
	status_now "$1" "$2"
}

# wait_status VOL KEY OP N SECS: wait (SECS seconds at most, polling every 0.1 s) until
# status key KEY of volume VOL satisfies [ value OP N ] (OP: -ge, -le, -eq, ...); fails the
# check, saying what it was, if it never does. For waiting on what the kernel does in the
# background (a commit, a trim, reads) instead of sleeping and hoping it did. A volume
# gone, or a status without KEY, fails it too: it never passes for want of a value.
wait_status() {
	wt_i=0
	while :; do
		wt_v=$(status_val "$1" "$2")
		[ -n "$wt_v" ] || fail "no $2 in the status of $1: $(dmsetup status "$1" 2>&1 | cut -c 1-300)"
		test "$wt_v" "$3" "$4" && return 0
		[ $wt_i -ge $(($5 * 10)) ] &&
			fail "$1's $2 still $wt_v after $5 s, want $3 $4 (status: $(dmsetup status "$1" | cut -c 1-300))"
		sleep 0.1
		wt_i=$((wt_i + 1))
	done
}

# flush_commits VOL: on flaz volume VOL with no I/O of its own, once the installs of the
# I/O before are done (fills_pending 0), a FLUSH (it seals the extent buffer and asks for a
# commit), then a commit after it, three times over: a commit leaves out the lines of an
# extent whose write was still in flight at its SSD flush (meta.c), so the later ones take
# what the first could not, and the last takes every line cached.
flush_commits() {
	wait_status "$1" fills_pending -eq 0 60
	for fc_i in 1 2 3; do
		fc_n=$(status_val "$1" commits)
		dd if=/dev/null of="/dev/mapper/$1" conv=notrunc,fsync 2>/dev/null ||
			fail "a FLUSH of $1 failed"
		wait_status "$1" commits -gt "$fc_n" 30
	done
}

# same_blocks A B WHAT [MIB]: every 4 KiB block of A equals B's (both read with O_DIRECT),
# over the smaller of the two or their first MIB MiB; ON_DIFFER, if set, is run before the
# check fails on a difference. blkcmp (blkcmp.c) rather than two sha256sums: it names the
# blocks that differ, and hashes nothing (sha256sum reads about 19 MB/s under TCG).
same_blocks() {
	blkcmp "$1" "$2" --show 5 ${4:+--blocks $(($4 * 256))} >/tmp/blkcmp.out 2>&1
	sb_rc=$?
	cat /tmp/blkcmp.out
	[ $sb_rc -le 1 ] || fail "blkcmp $1 $2 failed: $(tail -n 1 /tmp/blkcmp.out)"
	sb_sum=$(tail -n 1 /tmp/blkcmp.out)
	if [ $sb_rc -ne 0 ]; then
		[ -n "${ON_DIFFER:-}" ] && $ON_DIFFER
		fail "$3: $sb_sum (blkcmp $1 $2: differ = differing 4 KiB blocks, first = the first of them)"
	fi
	echo "$3: $sb_sum"
}

# sha256 of $3 MiB of device $1 from MiB $2, read with O_DIRECT so no page cache answers.
sha_mib() { dd if="$1" bs=1M skip="$2" count="$3" iflag=direct 2>/dev/null | sha256sum; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

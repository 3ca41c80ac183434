# shellcheck shell=sh
# flazctl check and dump on SSDs the kernel wrote: clean after a remove, unclean
# while live, refused --repair on a live SSD, a damaged table block found,
# repaired, and the volume warm with the right data afterwards. One check: the
# steps build on each other's SSD (check() blanks the SSD before each check).

ck_fill() {
	must dd if=/tmp/ck.data of=/dev/mapper/v bs=4k seek=$1 oflag=direct
	must dd if=/dev/mapper/v of=/dev/null bs=4k count=256 skip=$1 iflag=direct
}

ck_run() {
	flazctl check "$@" >/tmp/ck.out 2>&1
	ck_rc=$?
	echo "flazctl check $* -> $ck_rc"
	cat /tmp/ck.out
}

t_flazctl_check_kernel_ssd() {
	must dd if=/dev/urandom of=/tmp/ck.data bs=4k count=256
	must flazctl create v --hdd $HDD --ssd $SSD --cold
	ck_fill 0
	must dd if=/dev/zero of=/dev/mapper/v bs=4k count=64 seek=1000 oflag=direct
	must flazctl remove v
	ck_run $SSD
	[ $ck_rc -eq 0 ] || fail "check after a clean remove: exit $ck_rc: $(grep -m1 -E 'corrupt|warning' /tmp/ck.out)"
	flazctl dump $SSD --json >/tmp/ck.json || fail "dump exited $?"
	grep -q '"clean":true' /tmp/ck.json || fail "dump shows no clean superblock"
	grep -Eq '"slot":[1-9]' /tmp/ck.json || fail "dump shows no slots in the table"

	must flazctl create v --hdd $HDD --ssd $SSD
	wait_loaded v || fail "$(head -n 1 /tmp/unloaded)"
	ck_c0=$(status_val v commits)
	ck_fill 5000
	# a commit after the writes puts their table on the SSD, under a superblock still unclean
	wait_status v commits -ge $((ck_c0 + 1)) 30
	ck_run $SSD
	live=$ck_rc
	ck_run --repair $SSD
	busy=$ck_rc
	grep -q 'in use' /tmp/ck.out || busy="$busy without 'in use'"
	must flazctl remove v
	[ $live -eq 3 ] || fail "check of a live volume's SSD: exit $live, want 3 (unclean)"
	[ "$busy" = 1 ] || fail "--repair of a live SSD: exit $busy, want 1 and 'in use'"

	printf 'XXXX' | dd of=$SSD bs=1 seek=$((16 * 512 + 100)) conv=notrunc,fsync 2>/dev/null
	ck_run $SSD
	[ $ck_rc -eq 4 ] || fail "check of a damaged table block: exit $ck_rc, want 4"
	ck_run --repair $SSD
	[ $ck_rc -eq 3 ] || fail "repair: exit $ck_rc, want 3"
	ck_run $SSD
	[ $ck_rc -eq 0 ] || fail "check after repair: exit $ck_rc, want 0"
	must flazctl create v --hdd $HDD --ssd $SSD
	wait_loaded v || fail "$(head -n 1 /tmp/unloaded)"
	dmsetup status v | grep -q 'blocks_cached=[1-9]' || fail "not warm after repair: $(dmsetup status v)"
	must dd if=/dev/mapper/v of=/tmp/ck.back bs=4k count=256 skip=5000 iflag=direct
	cmp /tmp/ck.data /tmp/ck.back || fail "data differs after the repair"
	must flazctl remove v
}

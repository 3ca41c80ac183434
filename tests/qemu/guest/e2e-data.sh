# e2e checks that data survives: file systems, fio verify, table reloads, and the HDD copy.

# A file system on the volume keeps real files across umount, dropped caches and remount,
# and its checker finds it clean.
t_fs_data() {
	fs=$1
	must dmsetup create vol --table "$(flaz_table)"
	case $fs in
	ext4) must mkfs.ext4 -q -F /dev/mapper/vol ;;
	xfs) must mkfs.xfs -f -q /dev/mapper/vol ;;
	esac
	must mount -t "$fs" /dev/mapper/vol /mnt
	# the image's own programs, modules and scripts (symlinks and all), and random bytes;
	# not all of /lib: fio's libraries are 70 MiB, which TCG would take long to hash
	must mkdir -p /mnt/lib /mnt/usr
	must cp -a /bin /etc /flaz /mnt/
	must cp -a /usr/sbin /mnt/usr/
	must cp -a /lib/modules /mnt/lib/
	must dd if=/dev/urandom of=/mnt/random bs=1M count=32
	(cd /mnt && find . -type f | sort | xargs sha256sum) >/tmp/manifest
	nfiles=$(wc -l </tmp/manifest)
	[ "$nfiles" -gt 40 ] || fail "only $nfiles files copied"
	must umount /mnt
	drop_caches
	must mount -t "$fs" /dev/mapper/vol /mnt
	(cd /mnt && sha256sum -c /tmp/manifest) >/tmp/verify 2>&1 ||
		fail "files differ after remount: $(grep -v ': OK$' /tmp/verify | head -n 3 | tr '\n' ' ')"
	must umount /mnt
	case $fs in
	ext4) must fsck.ext4 -fn /dev/mapper/vol ;;
	xfs) must xfs_repair -n /dev/mapper/vol ;;
	esac
	must dmsetup remove vol
}

# fio jobs on separate 64 MiB regions, all verified with crc32c: 4 KiB, 64 KiB and mixed sizes.
t_fio_verify() {
	must dmsetup create vol --table "$(flaz_table)"
	fio --filename=/dev/mapper/vol --ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
		--size=64M --verify=crc32c --verify_fatal=1 --group_reporting \
		--name=bs4k --bs=4k --offset=0 \
		--name=bs64k --bs=64k --offset=64M \
		--name=mixed --bssplit=4k/40:8k/20:16k/15:64k/15:128k/10 --offset=128M \
		>/tmp/fio.out 2>&1
	rc=$?
	cat /tmp/fio.out
	must dmsetup remove vol
	[ $rc -eq 0 ] || fail "fio exited $rc: $(grep -iE 'verify|error' /tmp/fio.out | head -n 2 | tr '\n' ' ')"
	errs=$(grep -o 'err= *[0-9]*' /tmp/fio.out | grep -v 'err= *0$')
	[ -z "$errs" ] || fail "fio reported errors: $errs"
}

# The suspend checks write $PASSES copies of a random pattern to consecutive chunks.
PATTERN_MIB=4
PASSES=8
# The writer goes on past its $PASSES passes, round again, until /tmp/reloads says
# RELOADS_DURING reloads happened (so they came while it wrote, however fast it is), for
# 120 passes at most (returns 1 then, as on a failed write).
RELOADS_DURING=3
write_passes() {
	p=0
	# (read while the reloader rewrites it, the file may be empty: 0 reloads then)
	while wp_r=$(cat /tmp/reloads 2>/dev/null) && { [ $p -lt $PASSES ] || [ "${wp_r:-0}" -lt $RELOADS_DURING ]; }; do
		[ $p -lt 120 ] || { echo "the writer gave up after $p passes with ${wp_r:-0} reloads" >&2 && return 1; }
		dd if=/tmp/pattern of=/dev/mapper/vol bs=4k seek=$((p % PASSES * PATTERN_MIB * 256)) \
			oflag=direct conv=notrunc 2>/dev/null || return 1
		p=$((p + 1))
	done
}

# Every chunk must still hold the pattern.
verify_passes() {
	want=$(sha256sum </tmp/pattern)
	p=0
	while [ $p -lt $PASSES ]; do
		got=$(sha_mib /dev/mapper/vol $((p * PATTERN_MIB)) $PATTERN_MIB)
		[ "$got" = "$want" ] || fail "chunk $p (at $((p * PATTERN_MIB)) MiB) differs from what was written"
		p=$((p + 1))
	done
}

reload_same() {
	table=$(dmsetup table vol)
	must dmsetup suspend vol
	must dmsetup reload vol --table "$table"
	must dmsetup resume vol
}

# Suspend, reload the same table and resume again and again while a writer runs.
t_suspend_during_io() {
	must dd if=/dev/urandom of=/tmp/pattern bs=1M count=$PATTERN_MIB
	must dmsetup create vol --table "$(flaz_table)"
	echo 0 >/tmp/reloads
	write_passes &
	writer=$!
	# a failed check must not leave the writer holding the volume open
	trap 'kill $writer 2>/dev/null' EXIT
	cycles=0
	while kill -0 $writer 2>/dev/null; do
		reload_same
		cycles=$((cycles + 1))
		echo $cycles >/tmp/reloads
		sleep 0.2
	done
	wait $writer || fail "the writer failed during the reloads"
	echo "$cycles reloads during the writes"
	[ $cycles -ge $RELOADS_DURING ] || fail "only $cycles reloads happened during the writes"
	verify_passes
}

# Still intact after one more reload with the I/O finished and the caches dropped.
t_suspend_after_io() {
	[ -b /dev/mapper/vol ] || fail "no volume left by suspend-reload-during-io"
	reload_same
	drop_caches
	verify_passes
}

# The HDD holds everything: its bytes, read directly after the volume is gone, are the
# bytes the volume returned.
t_hdd_has_data() {
	[ -b /dev/mapper/vol ] || fail "no volume left by suspend-reload-after-io"
	mib=$((PASSES * PATTERN_MIB))
	vol=$(sha_mib /dev/mapper/vol 0 $mib)
	must dmsetup remove vol
	must blockdev --flushbufs $HDD
	[ "$(sha_mib $HDD 0 $mib)" = "$vol" ] || fail "the HDD's first $mib MiB differ from what the volume returned"
}

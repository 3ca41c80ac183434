#!/bin/bash
# PID 1 of the UML test kernel. The root is the host's / over hostfs, so host tools run
# here; everything written goes under $FLAZ_RUN (from the kernel command line).
# Loads dm-flaz, then dm-flaz-test (which runs the KUnit suites), and saves each suite's
# KTAP to ktap/, then runs a short e2e under KASAN/lockdep/kmemleak: one PASS/FAIL line per
# check in e2e.txt.
# Writes `done` last: run.sh treats its absence as a crash or a hang.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export DM_DISABLE_UDEV=1 # no udev: libdevmapper makes the /dev/mapper nodes itself
R=$FLAZ_RUN/e2e.txt
HDD=/dev/ubda
SSD=/dev/ubdb
MNT=/run/mnt

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/mapper "$MNT" "$FLAZ_RUN/ktap"

# check NAME CMD...: the command's success is the check's result; its output says why not.
check() {
	local name=$1 out
	shift
	echo "== $name" >/dev/console
	if out=$("$@" 2>&1); then
		echo "PASS uml/e2e/$name" >>"$R"
	else
		echo "FAIL uml/e2e/$name: $(tail -5 <<<"$out" | tr '\n' ' ')" >>"$R"
	fi
}

save_ktap() {
	local f
	for f in /sys/kernel/debug/kunit/*/results; do
		[ -e "$f" ] && cat "$f" >"$FLAZ_RUN/ktap/$(basename "$(dirname "$f")").ktap"
	done
	return 0
}

# 16 MiB of random data through the volume at an 8 MiB offset, read back with O_DIRECT.
data_round_trip() {
	dd if=/dev/urandom of=/run/data bs=1M count=16 status=none &&
		dd if=/run/data of=/dev/mapper/vol bs=1M seek=8 oflag=direct status=none &&
		read_back
}
read_back() {
	dd if=/dev/mapper/vol of=/run/back bs=1M skip=8 count=16 iflag=direct status=none &&
		cmp /run/data /run/back
}

status_has_mode() {
	local s
	s=$(dmsetup status vol) || return 1
	grep -q ' mode=' <<<"$s" || { echo "status: $s"; return 1; }
}

suspend_resume() {
	dmsetup suspend vol && dmsetup resume vol && read_back
}

tree_sums() { (cd "$MNT" && find . -type f -exec sha256sum {} + | sort -k2); }
ext4_cycle() {
	mkfs.ext4 -q -F /dev/mapper/vol && mount /dev/mapper/vol "$MNT" &&
		cp -r /usr/share/doc/e2fsprogs /usr/share/doc/dmsetup "$MNT"/ &&
		dd if=/dev/urandom of="$MNT/random" bs=1M count=8 status=none &&
		tree_sums >/run/sums && umount "$MNT" &&
		echo 3 >/proc/sys/vm/drop_caches &&
		mount /dev/mapper/vol "$MNT" && tree_sums >/run/sums2 && umount "$MNT" &&
		cmp /run/sums /run/sums2
}

table_round_trip() {
	local t
	dmsetup create opts --table "0 $H flaz $HDD $SSD 5 compressor lzo overbook 300 cold" || return 1
	t=$(dmsetup table opts)
	dmsetup remove opts || return 1
	grep -q 'compressor lzo' <<<"$t" && grep -q 'overbook 300' <<<"$t" && return 0
	echo "table: $t"
	return 1
}

# refused PATTERN TABLE: the bad table must be refused, with a new "flaz:" line in the kernel
# log saying why, the message the module gives for it (PATTERN, an extended regular
# expression; dm-table logs "flaz: <ti->error> (-Exxx)"): the last such line (time-stamped)
# changes and matches. Not a count of them: once the log buffer is full, a new line pushes
# an old one out.
refused() {
	local before after
	before=$(dmesg | grep 'flaz: ' | tail -n 1)
	if dmsetup create bad --table "$2"; then
		dmsetup remove bad
		echo "accepted: $2"
		return 1
	fi
	after=$(dmesg | grep 'flaz: ' | tail -n 1)
	[ -n "$after" ] && [ "$after" != "$before" ] ||
		{ echo "refused without a 'flaz:' kernel message"; return 1; }
	grep -Eq "flaz: ($1)" <<<"$after" ||
		{ echo "refused, but the kernel said '$after', want 'flaz: $1'"; return 1; }
}

# A table like the SSD's superblock but for its compressor is refused for that: a cold
# volume (lz4, the default) writes the superblock, then deflate is asked for without cold.
other_compressor() {
	dmsetup create oc --table "0 $H flaz $HDD $SSD 1 cold" && dmsetup remove oc || return 1
	refused "SSD superblock is for another volume: compressor differs \\(give 'cold' to start empty\\)" \
		"0 $H flaz $HDD $SSD 2 compressor deflate"
}

# Tunables and the mode change online; what needs a reload or is unknown is refused.
messages() {
	dmsetup message vol 0 seq_cutoff_kib 512 &&
		dmsetup table vol | grep -q 'seq_cutoff_kib 512' &&
		! dmsetup message vol 0 compressor zstd 2>/dev/null &&
		! dmsetup message vol 0 nosuch 1 2>/dev/null &&
		! dmsetup message vol 0 low_watermark 99 2>/dev/null &&
		dmsetup message vol 0 passthrough 1 && dmsetup status vol | grep -q mode=passthrough &&
		dmsetup message vol 0 passthrough 0 && dmsetup status vol | grep -q mode=normal
}

# Reload with another table while the old instance is live, then read the data back.
reload() {
	dmsetup suspend vol &&
		dmsetup reload vol --table "0 $H flaz $HDD $SSD 3 compressor zstd cold" &&
		dmsetup resume vol && dmsetup table vol | grep -q ' 3 compressor zstd cold$' && read_back
}

# writers_fio VOL MIB [OPTION...]: two fio writers over volume VOL, each over its own MIB MiB
# region (verify needs regions nobody else writes), with crc32c verify headers; the options
# select the phase. fio's errors, if any, are the output.
writers_fio() {
	local vol=$1 mib=$2
	shift 2
	fio --name="$vol" --filename="/dev/mapper/$vol" --rw=randwrite --bs=4k --size="${mib}M" \
		--offset_increment="${mib}M" --numjobs=2 --ioengine=libaio --iodepth=8 --direct=1 \
		--verify=crc32c --output="/run/$vol.out" "$@" ||
		{ grep -E 'err=|verify|bad' "/run/$vol.out"; return 1; }
}

# Two writers over 8 MiB each, each verifying its own region.
fio_verify() {
	writers_fio vol 8 --do_verify=1
}

# Once flaz volume $1 has read its table in (loading=0; 60 s at most). Still loading then:
# no value, a message on stderr (the failing check's output) and status 1.
status_val() {
	local i=0 l
	# once a wait gave up the run has failed: later calls (a loop's) do not wait 60 s each
	[ -e /run/unloaded ] && return 1
	while l=$(dmsetup status "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^loading=//p') &&
		[ -n "$l" ] && [ "$l" != 0 ]; do
		if [ $i -ge 600 ]; then
			echo "volume $1 still loading its table after 60 s: $(dmsetup status "$1")" |
				tee /run/unloaded >&2
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# wait_val VOL KEY OP N SECS: wait (SECS s at most, polling every 0.1 s) until status key KEY
# of VOL satisfies [ value OP N ]; says what it was and returns 1 if it never does.
wait_val() {
	local i=0 v
	while v=$(status_val "$1" "$2") && ! test "${v:-0}" "$3" "$4"; do
		if [ $i -ge $(($5 * 10)) ]; then
			echo "$1's $2 still $v after $5 s, want $3 $4: $(dmsetup status "$1")"
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# Remove and re-create: the table comes back, and re-reading the data hits.
warm_restart() {
	local before after hits
	dd if=/dev/urandom of=/run/wdata bs=4k count=64 status=none
	dmsetup create warm --table "0 $H flaz $HDD $SSD 1 cold" &&
		dd if=/run/wdata of=/dev/mapper/warm bs=4k seek=100 conv=fsync status=none &&
		dd if=/dev/mapper/warm of=/run/warm1 bs=4k skip=100 count=64 iflag=direct status=none &&
		before=$(status_val warm blocks_cached) && dmsetup remove warm &&
		dmsetup create warm --table "0 $H flaz $HDD $SSD 0" || return 1
	after=$(status_val warm blocks_cached)
	dd if=/dev/mapper/warm of=/run/warm2 bs=4k skip=100 count=64 iflag=direct status=none
	hits=$(status_val warm read_hits)
	dmsetup remove warm || return 1
	echo "cached $before, after restart $after, hits $hits"
	[ "$before" -ge 64 ] && [ "$after" -ge "$before" ] && [ "$hits" -ge 64 ] &&
		cmp /run/wdata /run/warm1 && cmp /run/warm1 /run/warm2
}

# A crash right after a write: the SSD as it was then (copied while live), with
# the HDD holding the write. The write's region was marked before the HDD saw
# it, so its lines are dropped at load and the volume returns the new data.
crash_image() {
	local ssd_sectors=$(blockdev --getsz $SSD)
	dmsetup create crash --table "0 $H flaz $HDD $SSD 1 cold" || return 1
	dd if=/dev/urandom of=/run/old bs=4k count=256 status=none
	dd if=/dev/urandom of=/run/new bs=4k count=256 status=none
	dd if=/run/old of=/dev/mapper/crash bs=4k seek=2048 conv=fsync status=none &&
		dd if=/dev/mapper/crash of=/dev/null bs=4k skip=2048 count=256 iflag=direct status=none ||
		return 1
	# the region's mark goes a whole age (1 s) after its last write, at a commit (1 s tick)
	local i=0
	while [ "$(status_val crash marked_regions)" != 0 ] && [ $i -lt 30 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	[ "$(status_val crash marked_regions)" = 0 ] || {
		echo "old data not settled: $(dmsetup status crash)"
		return 1
	}
	dd if=/run/new of=/dev/mapper/crash bs=4k seek=2048 oflag=direct status=none &&
		dd if=$SSD of=/run/ssd.img bs=1M iflag=direct status=none || return 1
	dmsetup remove crash &&
		dd if=/run/ssd.img of=$SSD bs=1M oflag=direct status=none || return 1
	dmsetup create crash --table "0 $H flaz $HDD $SSD 0" || return 1
	echo "after the crash: $(dmsetup status crash)"
	dd if=/dev/mapper/crash of=/run/back bs=4k skip=2048 count=256 iflag=direct status=none
	dmsetup remove crash && rm -f /run/ssd.img && cmp /run/new /run/back
}

# The SSD fails every I/O under a filled cache (dm-flakey, always down): the data
# still reads back right, the errors are counted and the SSD goes out of use;
# healthy again, passthrough 0 brings the cache back.
ssd_fails() {
	local s=$(blockdev --getsz $SSD) mode errs
	dd if=/dev/urandom of=/run/fdata bs=4k count=512 status=none
	dmsetup create fssd --table "0 $s flakey $SSD 0 100000 0" &&
		dmsetup create flt --table "0 $H flaz $HDD /dev/mapper/fssd 1 cold" &&
		dd if=/run/fdata of=/dev/mapper/flt bs=4k seek=300 oflag=direct status=none &&
		wait_val flt blocks_cached -ge 512 30 || return 1
	dmsetup suspend fssd && dmsetup reload fssd --table "0 $s flakey $SSD 0 0 100000" &&
		dmsetup resume fssd || return 1
	dd if=/dev/mapper/flt of=/run/fback bs=4k skip=300 count=512 iflag=direct status=none &&
		cmp /run/fdata /run/fback || return 1
	dd if=/dev/urandom of=/run/fdata bs=4k count=512 status=none
	dd if=/run/fdata of=/dev/mapper/flt bs=4k seek=300 oflag=direct status=none &&
		dd if=/dev/mapper/flt of=/run/fback bs=4k skip=300 count=512 iflag=direct status=none &&
		cmp /run/fdata /run/fback || return 1
	mode=$(status_val flt mode)
	errs=$(($(status_val flt ssd_errors) + $(status_val flt meta_errors)))
	echo "SSD down: mode $mode, $errs errors: $(dmsetup status flt)"
	[ "$mode" = passthrough ] && [ "$errs" -ge 32 ] || return 1
	dmsetup suspend fssd && dmsetup reload fssd --table "0 $s flakey $SSD 0 100000 0" &&
		dmsetup resume fssd && dmsetup message flt 0 passthrough 0 || return 1
	dd if=/dev/mapper/flt of=/dev/null bs=4k skip=300 count=512 iflag=direct status=none &&
		wait_val flt blocks_cached -ge 512 30 && mode=$(status_val flt mode) &&
		echo "SSD back: $(dmsetup status flt)" && [ "$mode" = normal ] &&
		dd if=/dev/mapper/flt of=/run/fback bs=4k skip=300 count=512 iflag=direct status=none &&
		cmp /run/fdata /run/fback && dmsetup remove flt && dmsetup remove fssd
}

# Fault injection on the allocations that cannot wait (ignore-gfp-wait): fills' copies, the
# hit path's tracking, the mempools' first tries. $1: percent of them that fail.
inject() {
	local d
	for d in fail_page_alloc failslab; do
		echo "$1" >/sys/kernel/debug/$d/probability && echo 1 >/sys/kernel/debug/$d/interval &&
			echo -1 >/sys/kernel/debug/$d/times && echo 0 >/sys/kernel/debug/$d/verbose &&
			echo Y >/sys/kernel/debug/$d/ignore-gfp-wait || return 1
	done
	echo 0 >/sys/kernel/debug/fail_page_alloc/min-order
}

# fio over two 8 MiB regions of volume "mp"; extra arguments select the phase.
mp_fio() {
	writers_fio mp 8 --randseed=5 "$@"
}

# Memory pressure: a quarter of those allocations fail while 16 MiB are written, read back
# cold (misses that fill) and read again (hits). Fills may be skipped, and say so in
# fills_skipped; no I/O may fail and every byte must verify, also after the injection stops.
mem_pressure() {
	local skipped errs
	dmsetup create mp --table "0 $H flaz $HDD $SSD 1 cold" || return 1
	inject 25 || { inject 0; return 1; }
	mp_fio --do_verify=0 && dmsetup message mp 0 invalidate && mp_fio --verify_only &&
		mp_fio --verify_only || { inject 0; return 1; }
	skipped=$(status_val mp fills_skipped)
	inject 0
	mp_fio --verify_only || return 1
	errs=$(($(status_val mp ssd_errors) + $(status_val mp hdd_errors)))
	echo "under injection: $(dmsetup status mp)"
	dmsetup remove mp && [ "$skipped" -gt 0 ] && [ "$errs" = 0 ]
}

# The cleaner flat out under KASAN and lockdep: 24 MiB of 2:1 data on a 12 MiB SSD slice with
# 16 KiB extents. In each of two rounds every other 64 KiB of the last 8 MiB is read twice
# (hits on the slots the writes installed, beside cold ones in the same extents), then the
# first 16 MiB stream through (misses whose fills keep the cleaner busy: seq_cutoff_kib 0, so
# the stream fills): passes move the hit slots out of extents that are partly cold and keep
# the mostly hit ones where they are.
# Every byte must verify, slots must have been moved and kept, no SSD error.
cleaner() {
	local moved kept errs round
	dmsetup create cslice --table "0 $((12 * 2048)) linear $SSD 0" &&
		dmsetup create cl --table "0 $H flaz $HDD /dev/mapper/cslice 11 extent_kib 16 cleaner_rate_mib 65536 low_watermark 20 high_watermark 40 seq_cutoff_kib 0 cold" ||
		return 1
	cl_fio --rw=write --size=24M --iodepth=4 --refill_buffers --buffer_compress_percentage=50 \
		--do_verify=0 || return 1
	for round in 1 2; do
		cl_fio --rw=read:64k --offset=16M --size=8M --iodepth=8 --verify_only &&
			cl_fio --rw=read:64k --offset=16M --size=8M --iodepth=8 --verify_only &&
			cl_fio --rw=read --size=16M --iodepth=4 --verify_only || return 1
	done
	moved=$(status_val cl slots_moved)
	kept=$(status_val cl slots_kept)
	errs=$(($(status_val cl ssd_errors) + $(status_val cl hdd_errors)))
	echo "after cleaning: $(dmsetup status cl)"
	dmsetup remove cl && dmsetup remove cslice && [ "$moved" -gt 0 ] && [ "$kept" -gt 0 ] &&
		[ "$errs" = 0 ]
}

# The table paged under KASAN and lockdep (crash-lib.sh's "paged" geometry: 4 KiB extents at
# overbook 1000 give the 16 MiB slice 40,960 lines in 6 pages, table_cache_kib 64 keeps one
# resident) with the cleaner flat out: two writers over 24 MiB of 2:1 data, read back twice
# (hits beside fills that page lines in and evict). Once the writes' marks are gone, the
# slice's image is taken with the slice suspended (no write of flaz in flight; every write
# that completed is in it, flushed or not, the gentlest power cut), and the volume is
# committed, stopped and activated warm (a clean load), and stopped again and activated on
# that image (a recovery). Every byte verifies after each; each of the three instances pages
# the table in, the first evicts, the recovered cache hits.
paged() {
	local o="overbook 1000 extent_kib 4 table_cache_kib 64 cleaner_rate_mib 65536"
	local round
	o="$o low_watermark 20 high_watermark 40 seq_cutoff_kib 0"
	dmsetup create pslice --table "0 $((16 * 2048)) linear $SSD 0" &&
		dmsetup create pg --table "0 $H flaz $HDD /dev/mapper/pslice 15 $o cold" || return 1
	pg_fio --do_verify=0 && pg_fio --verify_only && pg_fio --verify_only &&
		wait_val pg marked_regions -eq 0 30 && dmsetup suspend pslice || return 1
	dd if=$SSD of=/run/pg.img bs=1M count=16 iflag=direct status=none ||
		{ dmsetup resume pslice; return 1; }
	dmsetup resume pslice && dmsetup suspend pg && dmsetup resume pg && pg_fio --verify_only &&
		pg_used evictions || return 1
	for round in clean crash; do
		pg_sound || return 1
		dmsetup remove pg || return 1
		[ $round = crash ] &&
			{ dd if=/run/pg.img of=$SSD bs=1M oflag=direct status=none || return 1; }
		dmsetup create pg --table "0 $H flaz $HDD /dev/mapper/pslice 14 $o" &&
			pg_fio --verify_only || return 1
	done
	pg_sound && pg_used read_hits || return 1
	rm -f /run/pg.img
	dmsetup remove pg && dmsetup remove pslice
}

# pg_used KEY: volume "pg"'s status KEY is above 0, or it says which is not.
pg_used() {
	local v
	v=$(status_val pg "$1") && [ "$v" -gt 0 ] && return 0
	echo "$1 is ${v:-unknown}: $(dmsetup status pg)"
	return 1
}

# This instance of volume "pg" paged its table in, and no SSD, HDD or metadata I/O failed.
pg_sound() {
	local errs
	pg_used table_page_ins || return 1
	errs=$(($(status_val pg ssd_errors) + $(status_val pg hdd_errors) + $(status_val pg meta_errors)))
	[ "$errs" = 0 ] && return 0
	echo "$errs I/O errors: $(dmsetup status pg)"
	return 1
}

# fio over two 12 MiB regions of volume "pg", 2:1 data; extra arguments select the phase.
pg_fio() {
	writers_fio pg 12 --refill_buffers --buffer_compress_percentage=50 --randseed=7 "$@"
}

# One fio job over volume "cl" in 64 KiB blocks with crc32c verify headers; the phase's options follow.
cl_fio() {
	fio --name=cw --filename=/dev/mapper/cl --bs=64k --direct=1 --ioengine=libaio \
		--verify=crc32c --output=/run/cl.out "$@" ||
		{ grep -E 'err=|verify|bad' /run/cl.out; return 1; }
}

# kmemleak reports an object once it is older than 5 s (mm/kmemleak.c's MSECS_MIN_AGE, not
# tunable) and two scans in a row found it unreferenced (the first scan only records its
# checksum). The sleep waits out that age: no state of flaz to poll instead.
kmemleak_scan() {
	sleep 5.2
	echo scan >/sys/kernel/debug/kmemleak && echo scan >/sys/kernel/debug/kmemleak &&
		cat /sys/kernel/debug/kmemleak >>"$FLAZ_RUN/kmemleak.txt"
}
# No suspect may come from dm-flaz or its KUnit module: while they are loaded their frames
# name them ([dm_flaz], [dm_flaz_test]); after rmmod they show as bare addresses (these two
# are the only modules this kernel ever loads). The scan before rmmod gives the readable
# backtrace, the one after catches what module exit leaks.
no_flaz_leaks() {
	local k=$FLAZ_RUN/kmemleak.txt
	kmemleak_scan || { echo "kmemleak unusable: $(dmesg | grep -m1 'kmemleak:.*disabled')"; return 1; }
	if grep -q -E 'flaz|^ +0x[0-9a-f]+$' "$k"; then
		echo "$(grep '^unreferenced object' "$k" | sort -u | wc -l) suspects, first:" \
			"$(grep -m1 -A20 '^unreferenced object' "$k" | grep -E '^unref|flaz|^ +0x' | head -4)"
		return 1
	fi
}

echo clear >/sys/kernel/debug/kmemleak # forget what boot leaked: only ours counts
# dm-flaz-test needs dm-flaz's symbols: loaded after it, it runs the suites as it loads
check module-load sh -c 'insmod "$1" && insmod "$2"' sh "$FLAZ_KO" "$FLAZ_TEST_KO"
save_ktap
check target-registered sh -c 'dmsetup targets | grep -q "^flaz "'
H=$(blockdev --getsz $HDD)
check create dmsetup create vol --table "0 $H flaz $HDD $SSD 0"
check data-round-trip data_round_trip
check status-mode status_has_mode
check suspend-resume suspend_resume
check messages messages
check reload reload
check fio-verify fio_verify
check ext4 ext4_cycle
check remove dmsetup remove vol
check table-round-trip table_round_trip
check warm-restart warm_restart
check crash-image crash_image
check ssd-fails ssd_fails
check mem-pressure mem_pressure
check cleaner cleaner
check paged paged
check bad-table/other-compressor other_compressor
check bad-table/same-device refused 'HDD and SSD must be different devices' "0 $H flaz $HDD $HDD 0"
check bad-table/unknown-option refused 'Unknown option \(known: [a-z_ ]+\)' "0 $H flaz $HDD $SSD 2 bogus 1"
check bad-table/extent-kib-3 refused 'extent_kib must be a power of two from 4 to 256' "0 $H flaz $HDD $SSD 2 extent_kib 3"
check bad-table/missing-args refused 'Not enough arguments: flaz <hdd> <ssd> <#opt args> \[opt args\]\.\.\.' "0 $H flaz $HDD"
check bad-table/no-such-device refused 'Cannot open the HDD device' "0 $H flaz /dev/nonexistent $SSD 0"
check bad-table/beyond-hdd refused 'Volume is larger than the HDD' "0 $((H + 8)) flaz $HDD $SSD 0"
check bad-table/watermarks refused 'low_watermark must be below high_watermark' "0 $H flaz $HDD $SSD 4 low_watermark 30 high_watermark 20"
check bad-table/extra-args refused 'Too many arguments' "0 $H flaz $HDD $SSD 0 junk"
dmsetup create tiny --table "0 64 linear $SSD 0"
check bad-table/ssd-too-small refused 'SSD too small for the superblock, metadata and 16 extents' "0 $H flaz $HDD /dev/mapper/tiny 0"
dmsetup remove tiny
kmemleak_scan
check module-unload rmmod dm_flaz_test dm_flaz
check kmemleak no_flaz_leaks
touch "$FLAZ_RUN/done"
sync
poweroff -f

# e2e checks of the target's table, status and messages.

# The module's refusals (drivers/md/dm-flaz: ti->error, DMERR) as extended regular expressions.
MSG_NOT_ENOUGH_ARGS='Not enough arguments: flaz <hdd> <ssd> <#opt args> \[opt args\]\.\.\.'
MSG_COMPRESSOR='compressor must be lzo, lz4, zstd or deflate'
MSG_WATERMARKS='low_watermark must be below high_watermark'
MSG_RELOAD='this option can only be changed by reloading the table'
# how a message's refusal names the volume (dm_table_device_name(): major:minor)
VOL_DEV='[0-9]+:[0-9]+'

t_module_load() {
	must modprobe dm-flaz
	dmsetup targets | grep -q '^flaz ' || fail "dmsetup targets does not list flaz"
}

# Each refusal must fail the create and log its reason, the very message the module gives
# for that line (dm-table prints it as "flaz: <ti->error> (-Exxx)"); a refused create leaves
# no device.
t_bad_missing_args() {
	refused "$MSG_NOT_ENOUGH_ARGS" dmsetup create bad --table "0 8 flaz $HDD"
	refused "$MSG_NOT_ENOUGH_ARGS" dmsetup create bad --table "0 8 flaz $HDD $SSD"
}

t_bad_no_device() {
	refused 'Cannot open the HDD device' dmsetup create bad --table "0 8 flaz /dev/nonexistent $SSD 0"
	refused 'Cannot open the SSD device' dmsetup create bad --table "0 8 flaz $HDD /dev/nonexistent 0"
}

t_bad_same_device() {
	refused 'HDD and SSD must be different devices' dmsetup create bad --table "0 8 flaz $HDD $HDD 0"
}

t_bad_beyond_hdd() {
	refused 'Volume is larger than the HDD' dmsetup create bad --table "0 $(($(sectors $HDD) + 8)) flaz $HDD $SSD 0"
}

t_bad_unknown_option() {
	refused 'Unknown option \(known: [a-z_ ]+\)' dmsetup create bad --table "$(flaz_table frobnicate 1)"
}

t_bad_option_without_value() {
	refused "$MSG_COMPRESSOR" dmsetup create bad --table "$(flaz_table compressor)"
}

t_bad_compressor() {
	refused "$MSG_COMPRESSOR" dmsetup create bad --table "$(flaz_table compressor snappy)"
}

t_bad_extent_kib() {
	for v in 3 512 48; do
		refused 'extent_kib must be a power of two from 4 to 256' dmsetup create bad --table "$(flaz_table extent_kib $v)"
	done
}

t_bad_overbook() {
	refused 'overbook must be a percentage from 100 to 1000' dmsetup create bad --table "$(flaz_table overbook 50)"
}

t_bad_watermarks() {
	refused "$MSG_WATERMARKS" dmsetup create bad --table "$(flaz_table low_watermark 30 high_watermark 30)"
	refused "$MSG_WATERMARKS" dmsetup create bad --table "$(flaz_table low_watermark 40 high_watermark 30)"
}

t_bad_duplicate_option() {
	refused 'Option given more than once' dmsetup create bad --table "$(flaz_table overbook 300 overbook 300)"
}

# The SSD is a 64-sector slice of vdb: far below a superblock, metadata and 16 extents.
t_bad_ssd_too_small() {
	must dmsetup create tiny --table "0 64 linear $SSD 0"
	refused 'SSD too small for the superblock, metadata and 16 extents' dmsetup create bad --table "0 $(sectors $HDD) flaz $HDD /dev/mapper/tiny 0"
	must dmsetup remove tiny
}

t_nothing_left() {
	left=$(dmsetup ls)
	[ "$left" = "No devices found" ] || fail "devices left after the refusals: $left"
}

t_create_remove() {
	must dmsetup create vol --table "$(flaz_table)"
	[ -b /dev/mapper/vol ] || fail "no /dev/mapper/vol after create"
	[ "$(sectors /dev/mapper/vol)" = "$(sectors $HDD)" ] || fail "volume size $(sectors /dev/mapper/vol) != HDD size"
	must dmsetup remove vol
	dmsetup info vol >/dev/null 2>&1 && fail "vol still exists after remove"
	[ -e /dev/mapper/vol ] && fail "/dev/mapper/vol left after remove"
	return 0
}

# The table prints back the devices and exactly the options given, and loads again as is.
t_table_roundtrip() {
	opts="compressor zstd extent_kib 64 overbook 300 cold"
	must dmsetup create vol --table "$(flaz_table $opts)"
	want="0 $(sectors $HDD) flaz $(cat /sys/block/${HDD#/dev/}/dev) $(cat /sys/block/${SSD#/dev/}/dev) 7 $opts"
	got=$(dmsetup table vol)
	[ "$got" = "$want" ] || fail "table is '$got', want '$want'"
	must dmsetup reload vol --table "$got"
	must dmsetup resume vol
	again=$(dmsetup table vol)
	[ "$again" = "$want" ] || fail "after reloading its own table: '$again', want '$want'"
	must dmsetup remove vol
}

t_table_no_options() {
	must dmsetup create vol --table "$(flaz_table)"
	got=$(dmsetup table vol | cut -d' ' -f6-)
	must dmsetup remove vol
	[ "$got" = 0 ] || fail "options of a table created with none: '$got', want '0'"
}

# Only reads, writes, flushes and discards reach the target (cache.c refuses any other op):
# the volume offers no write zeroes, so the kernel zeroes a range with plain writes, which
# the cache takes like any other, and no secure erase, which is refused before the target.
t_table_ops() {
	must dmsetup create vol --table "$(flaz_table)"
	q=/sys/block/dm-$(dmsetup info -c --noheadings -o minor vol)/queue
	wz=$(cat "$q/write_zeroes_max_bytes")
	disc=$(cat "$q/discard_max_bytes")
	secure=0
	blkdiscard -s -o 0 -l 4096 /dev/mapper/vol 2>/dev/null && secure=1
	must dmsetup remove vol
	# a read of sysfs that finds nothing must not pass for a 0
	[ "$disc" -gt 0 ] || fail "discard_max_bytes='$disc' ($q): the volume offers no discards"
	[ "$wz" = 0 ] || fail "write_zeroes_max_bytes='$wz': the volume offers write zeroes, which the target refuses"
	[ $secure = 0 ] || fail "a secure discard of the volume succeeded"
}

STATUS_KEYS="mode reads writes read_hits read_misses write_hits write_misses fills bypasses
blocks_cached logical_bytes physical_bytes ratio raw_blocks zero_blocks free_extents
total_extents evictions cleaner_runs extents_cleaned slots_moved slots_dropped discards
hdd_errors ssd_errors table_bytes commits meta_errors marked_regions mode_reason dram_bytes meta_bytes
marks mark_waits mark_wait_us commit_us loading fills_skipped compress_skipped hot_blocks
recompressed cold_bytes codec_bytes raw_bytes table_resident_bytes table_page_ins slots_kept
seq_bypass_kib skipped_space skipped_busy skipped_memory skipped_table
probation_extents main_extents slots_promoted ghost_hits skipped_hot partial_hits partial_fills partial_updates partial_drops partial_passes seq_bypasses fills_pending"

t_status_keys() {
	must dmsetup create vol --table "$(flaz_table)"
	st=$(dmsetup status vol)
	echo "$st"
	must dmsetup remove vol
	case $st in "0 $(sectors $HDD) flaz mode=normal "*) ;; *) fail "status does not start with 'flaz mode=normal': $st" ;; esac
	for k in $STATUS_KEYS; do
		echo "$st" | tr ' ' '\n' | grep -Eq "^$k=[0-9a-z.]+$" || fail "status has no '$k=': $st"
	done
}

# N direct 4 KiB writes and reads must each add at least N to writes= and reads=.
t_status_counters() {
	n=200
	must dmsetup create vol --table "$(flaz_table)"
	r0=$(status_val vol reads)
	w0=$(status_val vol writes)
	must dd if=/dev/urandom of=/dev/mapper/vol bs=4k count=$n oflag=direct
	must dd if=/dev/mapper/vol of=/dev/null bs=4k count=$n iflag=direct
	r1=$(status_val vol reads)
	w1=$(status_val vol writes)
	must dmsetup remove vol
	[ $((w1 - w0)) -ge $n ] || fail "writes went $w0 -> $w1 after $n writes"
	[ $((r1 - r0)) -ge $n ] || fail "reads went $r0 -> $r1 after $n reads"
}

t_message_tunable() {
	must dmsetup create vol --table "$(flaz_table)"
	must dmsetup message vol 0 seq_cutoff_kib 1024
	must dmsetup message vol 0 cleaner_rate_mib 0
	got=$(dmsetup table vol | cut -d' ' -f6-)
	must dmsetup remove vol
	want="4 seq_cutoff_kib 1024 cleaner_rate_mib 0"
	[ "$got" = "$want" ] || fail "options after the messages: '$got', want '$want'"
}

t_message_refusals() {
	must dmsetup create vol --table "$(flaz_table)"
	refused "$VOL_DEV: message frobnicate: unknown key" dmsetup message vol 0 frobnicate 1
	refused "$VOL_DEV: message seq_cutoff_kib: seq_cutoff_kib must be from 0 \(off\) to 1048576" dmsetup message vol 0 seq_cutoff_kib lots
	refused "$VOL_DEV: message low_watermark: low_watermark must be a percentage from 1 to 98" dmsetup message vol 0 low_watermark 0
	refused "$VOL_DEV: message cleaner_rate_mib: cleaner_rate_mib must be from 0 \(off\) to 65536" dmsetup message vol 0 cleaner_rate_mib 65537
	refused "$VOL_DEV: message compressor: $MSG_RELOAD" dmsetup message vol 0 compressor lz4
	refused "$VOL_DEV: message cold_compressor: $MSG_RELOAD" dmsetup message vol 0 cold_compressor zstd
	got=$(dmsetup table vol | cut -d' ' -f6-)
	# suspended, the SSD is not the volume's to write: messages that write it are refused
	must dmsetup suspend vol
	refused "$VOL_DEV: invalidate: the volume is suspended" dmsetup message vol 0 invalidate
	refused "$VOL_DEV: passthrough: the volume is suspended" dmsetup message vol 0 passthrough 1
	mode=$(status_val vol mode)
	must dmsetup resume vol
	must dmsetup message vol 0 invalidate
	must dmsetup remove vol
	[ "$got" = 0 ] || fail "refused messages changed the options to '$got'"
	[ "$mode" = normal ] || fail "mode=$mode after a refused 'passthrough 1', want normal"
}

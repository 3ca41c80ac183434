# e2e checks of the persistent cache (on-SSD format: drivers/md/dm-flaz/format.h):
#   warm restart: after a clean remove the volume comes back with its cache, and hits;
#   refusals: saved state for another table, another HDD, a corrupt superblock or a
#     non-flaz SSD is refused unless `cold`, which starts empty;
#   resize: another length is the HDD grown (the cache stays) or shrunk (it starts empty);
#   SSD faults (dm-flakey under the SSD): errors and bad bytes cost misses, never data, and
#     move the mode to degraded and passthrough at the spec's thresholds;
#   fuzzed metadata on a real SSD image never gives wrong data.
# All on dm-linear slices, so that they stay quick under TCG: a P_SSD_MIB MiB slice at the
# SSD's start (check() blanks it) and a P_HDD_MIB MiB slice at the HDD's start.
# Uses wait_settled and show_status (e2e-cache.sh) and no_device (e2e-flazctl.sh).

P_SSD_MIB=16
P_HDD_MIB=128
PSSD=/dev/mapper/pssd
PHDD=/dev/mapper/phdd
PV=/dev/mapper/pv
# The known data set: P_DATA_MIB MiB of 2:1 compressible bytes, written at the volume's start.
P_DATA_MIB=4
P_DATA=/tmp/pdata
# The messages of the kernel's refusals (persist-spec, "Kernel behaviour").
MSG_OTHER_VOLUME="SSD superblock is for another volume"
MSG_OTHER_HDD="SSD caches another HDD: its first block differs"
MSG_CORRUPT="SSD superblock is corrupt"
MSG_NOT_FLAZ="SSD holds no flaz superblock and is not blank"
# Mode thresholds: ssd_errors + meta_errors since the last reset.
DEGRADED_AT=8
PASSTHROUGH_AT=32

# A line for the console even when the check passes (notes on what was skipped).
note() {
	echo "note: $*"
	echo "    note ($name): $*" >/dev/console
}

p_data() {
	if [ ! -s $P_DATA ]; then
		must fio --name=gen --filename=$P_DATA --ioengine=psync --rw=write --bs=64k \
			--size=${P_DATA_MIB}M --refill_buffers --buffer_compress_percentage=50
	fi
	P_SHA=$(sha256sum <$P_DATA)
}

p_slices() {
	must dmsetup create pssd --table "0 $((P_SSD_MIB * 2048)) linear $SSD 0"
	must dmsetup create phdd --table "0 $((P_HDD_MIB * 2048)) linear $HDD 0"
}

# p_slice_table NAME TABLE: the slice's device, its number kept, maps TABLE.
p_slice_table() {
	must dmsetup load "$1" --table "$2"
	must dmsetup resume "$1"
}

p_remove_slices() {
	must dmsetup remove pssd
	must dmsetup remove phdd
}

# p_table [OPTIONS...]: the table of volume pv over the slices.
p_table() { echo "0 $(sectors $PHDD) flaz $PHDD $PSSD $# $*"; }
p_create() { must dmsetup create pv --table "$(p_table "$@")"; }

# Write the data set through pv, read it back, and wait until the cache has settled.
p_fill() {
	must dd if=$P_DATA of=$PV bs=1M oflag=direct
	[ "$(sha_mib $PV 0 $P_DATA_MIB)" = "$P_SHA" ] || fail "the data set written through pv reads back wrong"
	wait_settled pv
}

# The SSD slice to and from a file (/tmp is RAM).
p_save() { must dd if=$PSSD of="$1" bs=1M iflag=direct; }
p_restore() { must dd if="$1" of=$PSSD bs=1M oflag=direct; }
# Only the first MiB: the superblocks and the table (what a create or a refusal touches
# before any data is written), quicker under TCG.
p_restore_head() { must dd if="$1" of=$PSSD bs=1M count=1 oflag=direct; }

# Warm state of pv: blocks_cached (P_C), then the data set read back (P_GOT) and the
# read_hits that read added (P_HITS).
p_read_back() {
	P_C=$(status_val pv blocks_cached)
	p_h0=$(status_val pv read_hits)
	P_GOT=$(sha_mib $PV 0 $P_DATA_MIB)
	P_HITS=$(($(status_val pv read_hits) - p_h0))
	show_status pv
}

# t_persist_warm dmsetup|flazctl: a cold volume with the data set written and read back,
# removed cleanly, comes back (without cold) with >= 90% of its cached blocks, and reading
# the data set again hits >= 90% of those and returns the same bytes.
t_persist_warm() {
	how=$1
	p_data
	p_slices
	case $how in
	dmsetup) p_create cold ;;
	flazctl) must flazctl create pv --hdd $PHDD --ssd $PSSD --cold ;;
	esac
	p_fill
	c0=$(status_val pv blocks_cached)
	show_status pv
	case $how in
	dmsetup)
		must dmsetup remove pv
		p_create
		;;
	flazctl)
		must flazctl remove pv
		must flazctl create pv --hdd $PHDD --ssd $PSSD
		;;
	esac
	p_read_back
	must dmsetup remove pv
	p_remove_slices
	blocks=$((P_DATA_MIB * 256))
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the restart"
	[ "$c0" -ge $((blocks * 9 / 10)) ] ||
		fail "blocks_cached=$c0 after writing and reading $blocks blocks, want >= $((blocks * 9 / 10))"
	[ "$P_C" -ge $((c0 * 9 / 10)) ] ||
		fail "blocks_cached=$P_C right after the restart, $c0 before: want >= 90%"
	[ "$P_HITS" -ge $((P_C * 9 / 10)) ] ||
		fail "re-reading the data set after the restart added $P_HITS read_hits, want >= $((P_C * 9 / 10)) (90% of blocks_cached=$P_C)"
}

# t_persist_background_load: the table is read after resume, in the background. Over an
# SSD whose reads are slowed (dm-delay, 200 ms each: the table of overbook 1000 on 4 KiB
# extents takes over 2 s to read), a warm volume is created again: the create returns while
# the table is still being read (loading > 0: resume did not hold I/O for it); the first MiB
# of the data set, rewritten meanwhile, reads back new while the table loads, once it is
# in, and after another clean restart (the loader never brings back an entry a write made
# stale, and the next commit rewrites its table block); the rest comes back warm. An
# invalidate while the table loads stops the load and empties the cache, and the data stays
# right after it and after one more restart.
t_persist_background_load() {
	p_data
	bl_n=$(sectors $SSD)
	bl_vol="0 $(sectors $HDD) flaz $HDD /dev/mapper/sslow"
	must dmsetup create sslow --table "0 $bl_n delay $SSD 0 0"
	must dmsetup create pv --table "$bl_vol 5 overbook 1000 extent_kib 4 cold"
	p_fill
	c0=$(status_val pv blocks_cached)
	must dmsetup remove pv
	must dmsetup suspend sslow
	must dmsetup reload sslow --table "0 $bl_n delay $SSD 0 200 $SSD 0 0"
	must dmsetup resume sslow
	must dmsetup create pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	left=$(status_now pv loading)
	must dd if=/dev/urandom of=/tmp/bl.new bs=1M count=1
	must dd if=/tmp/bl.new of=$PV bs=1M oflag=direct
	cp $P_DATA /tmp/bl.want
	must dd if=/tmp/bl.new of=/tmp/bl.want bs=1M conv=notrunc
	want=$(sha256sum </tmp/bl.want)
	during=$(sha_mib $PV 0 $P_DATA_MIB)
	left2=$(status_now pv loading)
	c1=$(status_val pv blocks_cached)
	after=$(sha_mib $PV 0 $P_DATA_MIB)
	show_status pv
	must dmsetup remove pv
	must dmsetup create pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	again=$(sha_mib $PV 0 $P_DATA_MIB)
	c2=$(status_val pv blocks_cached)
	show_status pv
	must dmsetup remove pv
	# a suspend, then a reload, while the table loads: postsuspend stops the load (and
	# commits clean), resume and the new table's load take it up again; nothing read is
	# stale and the cache comes back whole
	must dmsetup create pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	left5=$(status_now pv loading)
	must dmsetup suspend pv
	must dmsetup resume pv
	left6=$(status_now pv loading)
	resumed=$(sha_mib $PV 0 $P_DATA_MIB)
	# (status_val waits for the load to end: 60 s at most, then the check fails)
	c5=$(status_val pv blocks_cached)
	must dmsetup reload pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	must dmsetup suspend pv
	must dmsetup resume pv
	reloaded=$(sha_mib $PV 0 $P_DATA_MIB)
	c4=$(status_val pv blocks_cached)
	must dmsetup remove pv
	# invalidate while the table loads: the load stops, nothing stays cached, and what the
	# SSD pointed at is void at the next load
	must dmsetup create pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	left3=$(status_now pv loading)
	must dmsetup message pv 0 invalidate
	c3=$(status_now pv blocks_cached)
	left4=$(status_now pv loading)
	inval=$(sha_mib $PV 0 $P_DATA_MIB)
	must dmsetup remove pv
	must dmsetup create pv --table "$bl_vol 4 overbook 1000 extent_kib 4"
	last=$(sha_mib $PV 0 $P_DATA_MIB)
	must dmsetup remove pv
	must dmsetup remove sslow
	echo "suspend and reload during the load: loading=$left5, then $left6 after the resume; blocks_cached=$c5 once loaded, $c4 after the reload"
	[ "${left5:-0}" -gt 0 ] && [ "${left6:-0}" -gt 0 ] ||
		fail "the table was all read before the suspend or the reload (loading=$left5, then $left6)"
	[ "$resumed" = "$want" ] || fail "reading after a suspend during the load returned wrong bytes"
	[ "$reloaded" = "$want" ] || fail "reading after a suspend and a reload during the load returned wrong bytes"
	[ "$c4" -ge $((c2 * 9 / 10)) ] ||
		fail "blocks_cached=$c4 after a suspend and a reload during the load, $c2 after a plain restart: want >= 90%"
	echo "invalidate during the load: loading=$left3 before, $left4 after; blocks_cached=$c3"
	[ "${left3:-0}" -gt 0 ] || fail "the table was all read when the create returned (loading=$left3)"
	[ "$left4" = 0 ] && [ "$c3" = 0 ] ||
		fail "invalidate during the load left loading=$left4 blocks_cached=$c3, want 0 and 0"
	[ "$inval" = "$want" ] || fail "reading after an invalidate during the load returned wrong bytes"
	[ "$last" = "$want" ] || fail "reading after a restart that followed the invalidate returned wrong bytes"
	echo "blocks_cached: $c0 before, $c1 once loaded, $c2 after another restart; loading=$left after the create, $left2 after the rewrite and a read"
	[ "${left:-0}" -gt 0 ] ||
		fail "the table was all read when the create returned (loading=$left): resume held I/O for it"
	[ "$during" = "$want" ] || fail "reading while the table loaded returned wrong bytes (stale or lost)"
	[ "$after" = "$want" ] || fail "reading once the table was in returned wrong bytes"
	[ "$again" = "$want" ] || fail "reading after another clean restart returned wrong bytes"
	[ "$c1" -ge $(((c0 - 256) * 9 / 10)) ] ||
		fail "blocks_cached=$c1 once loaded, $c0 before the restart with 256 rewritten: want >= 90% of the rest"
}

# The devices the refusals use besides the slices: a 24 MiB SSD slice with the same start
# (another SSD size), and a second HDD slice of the same size whose first block differs.
P_OTHER_SSD=/dev/mapper/pssd24
P_OTHER_HDD=/dev/mapper/phdd2

# p_variant VARIANT: the table (P_VT, options to follow) of a volume that differs from the
# saved one in VARIANT, and the reason the kernel must give (P_WHY).
p_variant() {
	vt_len=$(sectors $PHDD) vt_hdd=$PHDD vt_ssd=$PSSD vt_opts=
	case $1 in
	compressor) vt_opts="compressor zstd" P_WHY="$MSG_OTHER_VOLUME: compressor differs" ;;
	extent_kib) vt_opts="extent_kib 64" P_WHY="$MSG_OTHER_VOLUME: extent_kib differs" ;;
	overbook) vt_opts="overbook 300" P_WHY="$MSG_OTHER_VOLUME: overbook differs" ;;
	ssd-size) vt_ssd=$P_OTHER_SSD P_WHY="$MSG_OTHER_VOLUME: SSD size differs" ;;
	hdd) vt_hdd=$P_OTHER_HDD P_WHY=$MSG_OTHER_HDD ;;
	esac
}

# p_variant_table [EXTRA...]: the table of the current variant with EXTRA options added.
p_variant_table() {
	# shellcheck disable=SC2086 # the options are words
	set -- $vt_opts "$@"
	echo "0 $vt_len flaz $vt_hdd $vt_ssd $# $*"
}

# After a clean remove, a table that differs from the saved one in compressor, extent_kib,
# overbook, SSD size or HDD is refused with the spec's reason (another length is a resize:
# persist-resize); with cold each is accepted and starts empty. The unchanged table still
# comes back warm (so the refusals are the differences'), and a non-flaz SSD (ext4) is
# refused unless cold.
t_persist_refusals() {
	p_data
	p_slices
	p_create cold
	p_fill
	must dmsetup remove pv
	p_save /tmp/base.img
	must dmsetup create pssd24 --table "0 $((24 * 2048)) linear $SSD 0"
	must dmsetup create phdd2 --table "0 $((P_HDD_MIB * 2048)) linear $HDD $((P_HDD_MIB * 2048))"
	must dd if=/dev/urandom of=$P_OTHER_HDD bs=4k count=1 oflag=direct
	for v in compressor extent_kib overbook ssd-size hdd; do
		p_variant $v
		p_restore_head /tmp/base.img
		refused "$P_WHY" dmsetup create pv --table "$(p_variant_table)"
		no_device pv "after the $v refusal"
		must dmsetup create pv --table "$(p_variant_table cold)"
		c=$(status_val pv blocks_cached)
		must dmsetup remove pv
		[ "$c" = 0 ] || fail "$v differs, created cold: blocks_cached=$c, want 0"
	done
	must dmsetup remove pssd24
	must dmsetup remove phdd2
	# the saved state itself is fine
	p_restore /tmp/base.img
	p_create
	p_read_back
	must dmsetup remove pv
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong from the unchanged table"
	[ "$P_C" -gt 0 ] || fail "the unchanged table came back with blocks_cached=0, want warm"
	# a file system on the SSD
	must mkfs.ext4 -q -F $PSSD
	refused "$MSG_NOT_FLAZ" dmsetup create pv --table "$(p_table)"
	no_device pv "after the refusal of an ext4 SSD"
	p_create cold
	p_read_back
	must dmsetup remove pv
	p_remove_slices
	[ "$P_C" = 0 ] || fail "an ext4 SSD created cold: blocks_cached=$P_C, want 0"
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong over the ext4 SSD formatted cold"
}

# p_resize MIB [flazctl]: the HDD slice grown or shrunk to MIB MiB (as lvextend or
# lvreduce would), then pv reloaded at the slice's new length (by dmsetup, or by flazctl
# resize), its kernel log lines in /tmp/kmsg.new.
p_resize() {
	p_slice_table phdd "0 $(($1 * 2048)) linear $(dmsetup table phdd | cut -d' ' -f4) 0"
	kmsg_mark
	if [ "${2:-}" = flazctl ]; then
		flazctl resize pv >/tmp/resize.out 2>&1 || fail "flazctl resize pv: $(cat /tmp/resize.out)"
		cat /tmp/resize.out
	else
		must dmsetup reload pv --table "$(p_table)"
		must dmsetup resume pv
	fi
	kmsg_new | grep 'flaz: ' >/tmp/kmsg.new
	cat /tmp/kmsg.new
	[ "$(sectors $PV)" = $(($1 * 2048)) ] || fail "pv has $(sectors $PV) sectors after its reload, want $(($1 * 2048))"
}

# p_resize_under_fio WHAT MIB: p_resize MIB while a fio verify run writes and reads back
# its data set (below either size), which must have started before and end after it.
p_resize_under_fio() {
	rf_w=$(status_val pv writes)
	p_fio "$1" 11 --loops=40 >/tmp/fio.bg 2>&1 &
	fio_pid=$!
	wait_status pv writes -ge $((rf_w + 64)) 60
	p_resize "$2"
	kill -0 $fio_pid 2>/dev/null || fail "fio ended before the $1: it did not run across it"
	wait $fio_pid || fail "fio across the $1: $(tail -n 3 /tmp/fio.bg | tr '\n' ' ')"
}

# Resizing a live volume (the shape of dmtest-python's cache resize_origin tests): grown
# (a reload at the HDD's new length), its cache stays warm and a fio verify run across the
# reload reads back its bytes; the new part caches. Shrunk, it starts empty, the kernel
# saying why (nothing read as damaged); grown back, the part past the shrink reads what the
# HDD holds there now, not what was cached there before the shrink; shrunk and grown again
# under fio. Stopped, the HDD grown, activated from a flaztab (as at boot), it comes back
# warm at the new size; a state saved while it ran (a crash), at a new size, starts empty.
t_persist_resize() {
	p_data
	p_slices
	half=$((P_HDD_MIB / 2))
	p_slice_table phdd "0 $((half * 2048)) linear $HDD 0"
	p_create cold
	p_fill
	c0=$(status_val pv blocks_cached)
	# the SSD as a crash would leave it: saved while the volume runs (unclean)
	p_save /tmp/live.img
	# grown: warm (no other I/O, which could evict some of the data set meanwhile)
	p_resize $((half * 3 / 2))
	p_read_back
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the grow"
	[ "$P_C" -ge $((c0 * 9 / 10)) ] || fail "blocks_cached=$P_C after the grow, $c0 before: want >= 90%"
	[ "$P_HITS" -ge $((c0 * 9 / 10)) ] ||
		fail "reading the data set after the grow hit $P_HITS blocks, $c0 were cached: want >= 90%"
	grep -q "grew from $((half * 2048)) to $((half * 3072)) sectors: the saved cache stays" \
		/tmp/kmsg.new || fail "no 'grew ... the saved cache stays' line after the grow"
	# grown again under a fio verify run, in the middle of its writes
	p_resize_under_fio grow $P_HDD_MIB
	grep -q "grew from $((half * 3072)) to $((P_HDD_MIB * 2048)) sectors: the saved cache stays" \
		/tmp/kmsg.new || fail "no 'grew ... the saved cache stays' line after the grow under fio"
	# the new part caches: the data set written past the old end, read back from the SSD
	top=$((P_HDD_MIB - 2 * P_DATA_MIB))
	must dd if=$P_DATA of=$PV bs=1M seek=$top oflag=direct
	wait_settled pv
	h0=$(status_val pv read_hits)
	[ "$(sha_mib $PV $top $P_DATA_MIB)" = "$P_SHA" ] || fail "the data set past the old end read back wrong"
	h1=$(($(status_val pv read_hits) - h0))
	[ "$h1" -ge $((P_DATA_MIB * 256 * 9 / 10)) ] ||
		fail "the data set past the old end hit $h1 blocks of $((P_DATA_MIB * 256)), want >= 90%"
	# shrunk (nothing else running: the part past the new end is still cached): empty
	p_resize $half
	p_read_back
	e=$(status_val pv meta_errors)
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the shrink"
	[ "$P_HITS" = 0 ] && [ "$e" = 0 ] ||
		fail "reading the data set after the shrink hit $P_HITS blocks, meta_errors=$e: want 0 and 0 (an empty cache)"
	grep -q "went from $((P_HDD_MIB * 2048)) to $((half * 2048)) sectors and it shrank: starting empty" \
		/tmp/kmsg.new || fail "no 'shrank: starting empty' line after the shrink"
	# the HDD past the new end written as another user of the freed space would; grown
	# back, the volume must read that, not the data set cached there before the shrink
	must dd if=/dev/urandom of=$HDD bs=1M seek=$top count=$P_DATA_MIB oflag=direct
	now=$(sha_mib $HDD $top $P_DATA_MIB)
	p_resize $P_HDD_MIB flazctl
	grep -q "grew from $((half * 2048))" /tmp/kmsg.new || fail "no 'grew' line after growing back"
	grep -q "^pv: kernel: .*the volume grew from $((half * 2048)) to" /tmp/resize.out ||
		fail "flazctl resize did not pass on the kernel's 'grew' line: $(tr '\n' '|' </tmp/resize.out)"
	[ "$(sha_mib $PV $top $P_DATA_MIB)" = "$now" ] ||
		fail "after the shrink and the grow back, pv's blocks past the shrink are not the HDD's: stale cached data served"
	# shrunk and grown again, each under a fio verify run
	p_resize_under_fio shrink $half
	p_resize_under_fio grow $P_HDD_MIB
	e=$(status_val pv meta_errors)
	[ "$e" = 0 ] || fail "meta_errors=$e after the shrinks and grows, want 0"
	# stopped, the HDD grown, activated from a flaztab (as at boot): warm at the new size.
	# fio's range is discarded first: its lines held a quarter of the data set out
	# (skipped_hot), and filling those after the activation set off the cleaner's first pass,
	# which knows neither heat nor order then (design.md, "After a restart"): on this 16 MiB
	# SSD it evicted an eighth of the extents, by index, and up to 60% of the data set with
	# them (3 runs in 9).
	must blkdiscard -o $((P_FS_MIB << 20)) -l $((P_FIO_MIB << 20)) $PV
	p_read_back
	p_read_back
	hb=$P_HITS
	must dmsetup remove pv
	grown=$((P_HDD_MIB + 16))
	p_slice_table phdd "0 $((grown * 2048)) linear $HDD 0"
	echo "pv $PHDD $PSSD" >/tmp/flaztab.rs
	kmsg_mark
	FLAZ_STATE_DIR=/tmp/flaz-state-rs must flazctl activate --flaztab /tmp/flaztab.rs pv
	[ "$(sectors $PV)" = $((grown * 2048)) ] || fail "pv activated with $(sectors $PV) sectors, want $((grown * 2048))"
	p_read_back
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the activation at the grown size"
	[ "$P_HITS" -ge $((hb * 9 / 10)) ] && [ "$P_HITS" -ge $((P_DATA_MIB * 256 / 2)) ] ||
		fail "the data set hit $P_HITS blocks after the activation at the grown size, $hb before its stop: want >= 90% (and half the set)"
	kmsg_new | grep -q "grew from $((P_HDD_MIB * 2048)) to $((grown * 2048)) sectors: the saved cache stays" ||
		fail "no 'grew ... the saved cache stays' line after the activation at the grown size"
	# the state saved while the volume ran, of its first length: at this one it starts empty
	must dmsetup remove pv
	p_restore /tmp/live.img
	kmsg_mark
	p_create
	p_read_back
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong over the crashed state at another length"
	[ "$P_HITS" = 0 ] ||
		fail "the data set hit $P_HITS blocks over a crashed state at another length, want 0 (an empty cache)"
	kmsg_new | grep -q "went from $((half * 2048)) to $((grown * 2048)) sectors and it was not stopped cleanly" ||
		fail "no 'was not stopped cleanly: starting empty' line over the crashed state at another length"
	must dmsetup remove pv
	p_remove_slices
}

# The write-intent regions change size with the volume's (1 MiB up to 30 GiB, larger
# beyond): a volume on a 256 GiB sparse HDD grown from 16 to 48 GiB must write a superblock
# of the new regions (one of the old would be refused as corrupt at the next load), and
# come back warm from it.
t_persist_resize_regions() {
	p_data
	must dmsetup create pssd --table "0 $((P_SSD_MIB * 2048)) linear $SSD 0"
	must dmsetup create phdd --table "0 $((16 << 21)) linear $HDDBIG 0"
	p_create cold
	p_fill
	c0=$(status_val pv blocks_cached)
	p_resize 49152 flazctl
	grep -q "grew from $((16 << 21)) to $((48 << 21)) sectors: the saved cache stays" /tmp/kmsg.new ||
		fail "no 'grew ... the saved cache stays' line after the grow to 48 GiB"
	must dmsetup remove pv
	kmsg_mark
	p_create
	p_read_back
	must dmsetup remove pv
	p_remove_slices
	kmsg_new
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the grow to 48 GiB and a restart"
	[ "$P_HITS" -ge $((c0 * 9 / 10)) ] ||
		fail "the data set hit $P_HITS blocks after the grow to 48 GiB and a restart, $c0 were cached: want >= 90%"
}

# Both superblock copies damaged past their magic: refused as corrupt. Both overwritten
# with random bytes: refused (as corrupt, or as no flaz superblock: with no magic left the
# kernel cannot tell them from another format's). Either copy alone overwritten: the other
# one brings the volume back warm, with the right data.
t_persist_corrupt_sb() {
	p_data
	p_slices
	p_create cold
	p_fill
	# a commit that cleared every mark after the I/O, so the older copy (the remove writes
	# the other) is as good as the newer
	wait_status pv marked_regions -eq 0 30
	must dmsetup remove pv
	p_save /tmp/base.img
	# the magic (4 bytes), then random bytes to the end of the block, over each copy
	head -c 4 /tmp/base.img >/tmp/sb.bad
	head -c 4092 /dev/urandom >>/tmp/sb.bad
	must dd if=/tmp/sb.bad of=$PSSD bs=4k seek=0 oflag=direct conv=notrunc
	must dd if=/tmp/sb.bad of=$PSSD bs=4k seek=1 oflag=direct conv=notrunc
	refused "$MSG_CORRUPT" dmsetup create pv --table "$(p_table)"
	no_device pv "after the refusal of damaged copies"
	must dd if=/dev/urandom of=$PSSD bs=512 count=16 oflag=direct conv=notrunc
	refused "$MSG_CORRUPT|$MSG_NOT_FLAZ" dmsetup create pv --table "$(p_table)"
	no_device pv "after the refusal of random copies"
	for copy in 0 1; do
		p_restore /tmp/base.img
		must dd if=/dev/urandom of=$PSSD bs=4k seek=$copy count=1 oflag=direct conv=notrunc
		p_create
		p_read_back
		must dmsetup remove pv
		[ "$P_GOT" = "$P_SHA" ] || fail "superblock copy $copy overwritten: the data set read back wrong"
		[ "$P_C" -gt 0 ] || fail "superblock copy $copy overwritten: blocks_cached=0, want warm from the other copy"
	done
	p_remove_slices
}

# ---- SSD faults: dm-flakey between the cache and the SSD slice.

PFLK=/dev/mapper/pflk
# The volume's first P_FS_MIB MiB hold an ext4 (device pfs), the P_FIO_MIB MiB after them
# the fio data set.
P_FS_MIB=32
P_FIO_MIB=2

# fk_table DEV MIB MODE: a dm-flakey table over DEV's first MIB MiB, in MODE (healthy,
# error-reads, corrupt-reads, drop-writes or error-writes). Healthy is up for ever; a fault
# is down for ever (up 0).
fk_table() {
	fk_t="0 $(($2 * 2048)) flakey $1 0"
	case $3 in
	healthy) fk_t="$fk_t 1000000 0" ;;
	error-reads) fk_t="$fk_t 0 1000000 1 error_reads" ;;
	corrupt-reads) fk_t="$fk_t 0 1000000 5 corrupt_bio_byte 513 r 90 0" ;;
	drop-writes) fk_t="$fk_t 0 1000000 1 drop_writes" ;;
	error-writes) fk_t="$fk_t 0 1000000 1 error_writes" ;;
	esac
	echo "$fk_t"
}

# p_flakey healthy|error-reads|corrupt-reads|drop-writes|error-writes: reload pflk.
# Fails if the kernel refuses.
p_flakey() {
	fk_t=$(fk_table $SSD $P_SSD_MIB $1)
	echo "pflk: $fk_t"
	dmsetup reload pflk --table "$fk_t" && dmsetup resume pflk
}

# The HDD slice and the SSD slice behind dm-flakey (pflk, healthy), and their removal.
p_flakey_slices() {
	must dmsetup create phdd --table "0 $((P_HDD_MIB * 2048)) linear $HDD 0"
	must dmsetup create pflk --table "0 $((P_SSD_MIB * 2048)) flakey $SSD 0 1000000 0"
}
p_flakey_remove() {
	must dmsetup remove pflk
	must dmsetup remove phdd
}

# pv, cold, over the slices through pflk; writes wait 2 s (not 30) for a failing SSD.
p_flakey_create() {
	must dmsetup create pv --table "0 $(sectors $PHDD) flaz $PHDD $PFLK 3 ssd_hold_s 2 cold"
}

# p_fio WHAT SEED [ARGS...]: the fio data set of seed SEED (crc32c headers in 64 KiB blocks)
# on pv; fails the check on a non-zero exit, a verify failure or any job error.
p_fio() {
	pf_what=$1
	pf_seed=$2
	shift 2
	fio --name=set --filename=$PV --ioengine=libaio --direct=1 --iodepth=8 --rw=write \
		--bs=64k --offset=${P_FS_MIB}M --size=${P_FIO_MIB}M --randseed="$pf_seed" \
		--refill_buffers --buffer_compress_percentage=50 --buffer_compress_chunk=512 \
		--verify=crc32c --verify_fatal=1 \
		"$@" >/tmp/fio.out 2>&1
	pf_rc=$?
	echo "fio $pf_what (seed $pf_seed): exit $pf_rc at $(cut -d' ' -f1 /proc/uptime) s"
	grep -E 'err=|verify|rror' /tmp/fio.out
	[ $pf_rc -eq 0 ] ||
		fail "fio $pf_what exited $pf_rc: $(grep -iE 'verify|error' /tmp/fio.out | head -n 2 | tr '\n' ' ')"
	pf_errs=$(grep -o 'err= *[0-9]*' /tmp/fio.out | grep -v 'err= *0$')
	[ -z "$pf_errs" ] || fail "fio $pf_what reported errors: $pf_errs"
}

# The ext4 workload on pfs: mkfs, a part of the corpus copied, synced, the caches dropped,
# every file compared with the host's sha256.
p_ext4() {
	grep ' \./perl5/' /corpus/manifest >/tmp/perl5.manifest
	[ -s /tmp/perl5.manifest ] || fail "no perl5 files in /corpus/manifest"
	echo "ext4 workload from $(cut -d' ' -f1 /proc/uptime) s"
	must mkfs.ext4 -q -F /dev/mapper/pfs
	must mount -t ext4 -o noinit_itable /dev/mapper/pfs /mnt
	must cp -a /corpus/files/perl5 /mnt/
	must umount /mnt
	drop_caches
	must mount -t ext4 -o ro /dev/mapper/pfs /mnt
	(cd /mnt && sha256sum -c /tmp/perl5.manifest) >/tmp/verify 2>&1 ||
		fail "files on ext4 differ from the host's: $(grep -v ': OK$' /tmp/verify | head -n 3 | tr '\n' ' ')"
	must umount /mnt
	echo "ext4 workload done at $(cut -d' ' -f1 /proc/uptime) s"
}

# Errors that count towards the mode, from one status line on stdin.
errors_of() { tr ' ' '\n' | awk -F= '$1 == "ssd_errors" || $1 == "meta_errors" { n += $2 } END { print n + 0 }'; }

# 0 normal, 1 degraded, 2 passthrough
mode_rank() {
	case $1 in
	normal) echo 0 ;;
	degraded) echo 1 ;;
	passthrough) echo 2 ;;
	*) echo 9 ;;
	esac
}

# mode_for ERRORS: the mode the spec's thresholds give.
mode_for() {
	if [ "$1" -ge $PASSTHROUGH_AT ]; then
		echo passthrough
	elif [ "$1" -ge $DEGRADED_AT ]; then
		echo degraded
	else
		echo normal
	fi
}

# wait_commit VOL: the last writes of VOL committed (no region marked: only a durable
# commit clears a mark, a second or two after the region's last write), or a commit failed
# since the call (meta_errors moved: with the SSD failing writes the marks stay), or VOL is
# passthrough (no commits there); 20 s at most.
wait_commit() {
	wc0=$(status_val "$1" meta_errors)
	wc_i=0
	while [ "$(status_val "$1" mode)" != passthrough ] &&
		[ "$(status_val "$1" marked_regions)" != 0 ] &&
		[ "$(status_val "$1" meta_errors)" -le "$wc0" ]; do
		[ $wc_i -ge 200 ] &&
			fail "the writes of $1 neither committed nor failed to in 20 s: $(dmsetup status "$1" | cut -c 1-300)"
		sleep 0.1
		wc_i=$((wc_i + 1))
	done
}

# settled_mode VOL KMSG: wait, 10 s at most, for VOL's mode to be the one its error count
# gives (passthrough once a write's mark failed, as the kernel log since kmsg_mark, saved
# to KMSG, says): a change the faults ask for runs in a work item, or at resume if it came
# while suspended. Sets errors, want and mode as last read; the caller judges them.
settled_mode() {
	sm_i=0
	while :; do
		errors=$(dmsetup status "$1" | errors_of)
		want=$(mode_for "$errors")
		kmsg_new >"$2"
		grep -Eq "$MSG_FAIL_CLOSED" "$2" && want=passthrough
		mode=$(status_val "$1" mode)
		if [ "$mode" = "$want" ] || [ $sm_i -ge 100 ]; then
			return 0
		fi
		sleep 0.1
		sm_i=$((sm_i + 1))
	done
}

# Whether this kernel's dm-flakey corrupts reads: a block read through pflk in
# corrupt-reads mode must differ from the same block read from the SSD.
flakey_corrupts_reads() {
	a=$(dd if=$PFLK bs=4k count=1 iflag=direct 2>/dev/null | sha256sum)
	b=$(dd if=$SSD bs=4k count=1 iflag=direct 2>/dev/null | sha256sum)
	[ "$a" != "$b" ]
}

# t_persist_fault FAULT: pv is cached on the SSD slice through dm-flakey (pflk). With the
# cache filled, pflk turns to FAULT while fio verifies the data set; then, with the fault
# on, fio writes (write faults) and verifies the data set and the ext4 workload runs.
# Nothing the user sees fails or differs; the errors are counted, and the mode is the one
# the thresholds give (passthrough for read faults, which hit every cached block). With
# pflk healthy again, "passthrough 0" brings back mode normal and the cache fills again.
t_persist_fault() {
	fault=$1
	[ $fault = error-reads ] && need_flakey_error_reads
	p_flakey_slices
	# whether this kernel's dm-flakey corrupts reads (probed on the blank SSD, before the
	# cache): Debian 12's 6.1 leaves them as they are, so the check is skipped there; 6.12's
	# corrupts them, and so must every kernel from 6.12 on
	if [ $fault = corrupt-reads ]; then
		must p_flakey corrupt-reads
		if ! flakey_corrupts_reads; then
			must p_flakey healthy
			p_flakey_remove
			kernel_before 6 12 ||
				fail "dm-flakey's corrupt_bio_byte left the reads as they were on $(uname -r)"
			skip_check "dm-flakey does not corrupt reads on $(uname -r) (6.1's does not, 6.12's does)"
		fi
	fi
	must p_flakey healthy
	# A dropped write leaves what the SSD held before. Give it a history: an earlier life
	# of the cache whose second fill (extents are used in turn) left valid slots of the
	# same blocks, with other data, where this life's writes will go.
	if [ $fault = drop-writes ]; then
		p_flakey_create
		p_fio history-write 1 --do_verify=0
		must dmsetup message pv 0 invalidate
		p_fio history-fill 1 --verify_only
		wait_settled pv
		must dmsetup remove pv
	fi
	p_flakey_create
	must dmsetup create pfs --table "0 $((P_FS_MIB * 2048)) linear $PV 0"
	# written and verified (read back from the cache)
	p_fio write 1
	wait_settled pv
	c0=$(status_val pv blocks_cached)
	show_status pv
	[ "$c0" -ge $((P_FIO_MIB * 256 * 9 / 10)) ] ||
		fail "blocks_cached=$c0 after writing and reading $((P_FIO_MIB * 256)) blocks healthy"
	kmsg_mark
	# the fault arrives while fio verifies: once it has read a few blocks. The verify is
	# paced (128 reads of 64 KiB at 16 a second: some 8 s, long enough for this loop's
	# status reads on a busy host) so that it is still reading when the fault comes; one
	# that ended before fails the check: the fault met no I/O in flight
	p_fio during 1 --verify_only --loops=4 --rate_iops=16 &
	fio_pid=$!
	r0=$(status_val pv reads)
	while kill -0 $fio_pid 2>/dev/null && [ "$(status_val pv reads)" -lt $((r0 + 8)) ]; do
		sleep 0.05
	done
	kill -0 $fio_pid 2>/dev/null ||
		fail "fio's verify ended before the $fault fault arrived ($(($(status_val pv reads) - r0)) reads): the fault met no verify in flight"
	must p_flakey $fault
	wait $fio_pid || fail "$(cat /tmp/why)"
	seed=1
	case $fault in
	*-writes)
		seed=2
		p_fio write-faulty 2
		wait_settled pv
		;;
	esac
	p_fio verify-faulty $seed --verify_only
	p_ext4
	# the workload's last writes committed, or their commit failed and counted
	wait_commit pv
	wait_settled pv
	settled_mode pv /tmp/kmsg.fault
	st=$(dmsetup status pv)
	show_status pv
	kmsg_new >/tmp/kmsg.fault
	grep -E 'EXT4-fs error|Buffer I/O error|I/O error, dev' /tmp/kmsg.fault && fail "I/O errors in the kernel log above"
	# the kernel logs every mode change: "flaz: <dev>: mode <old> -> <new>"
	grep -o 'mode [a-z]* -> [a-z]*' /tmp/kmsg.fault | cut -d' ' -f2,4 >/tmp/modes
	errors=$(echo "$st" | errors_of)
	mode=$(status_val pv mode)
	cached=$(status_val pv blocks_cached)
	hdd_errors=$(status_val pv hdd_errors)
	echo "mode changes: $(tr ' \n' '>,' </tmp/modes)"
	# recovery
	must p_flakey healthy
	must dmsetup message pv 0 passthrough 0
	mode1=$(status_val pv mode)
	c1=$(status_val pv blocks_cached)
	h0=$(status_val pv read_hits)
	# the first pass fills the cache, the second hits it
	p_fio refill $seed --verify_only --loops=2
	wait_settled pv
	c2=$(status_val pv blocks_cached)
	h1=$(status_val pv read_hits)
	mode2=$(status_val pv mode)
	show_status pv
	must dmsetup remove pfs
	must dmsetup remove pv
	p_flakey_remove
	[ "$hdd_errors" = 0 ] || fail "hdd_errors=$hdd_errors, want 0 (only the SSD failed)"
	[ "$errors" -gt 0 ] || fail "ssd_errors + meta_errors = 0 after $fault, want > 0"
	# a write whose mark the SSD did not take sends the volume passthrough at once
	want=$(mode_for "$errors")
	grep -Eq "$MSG_FAIL_CLOSED" /tmp/kmsg.fault && want=passthrough
	[ "$mode" = "$want" ] ||
		fail "mode=$mode with $errors errors after $fault, want $want (degraded at $DEGRADED_AT, passthrough at $PASSTHROUGH_AT or when a mark fails)"
	case $fault in
	*-reads) [ "$mode" = passthrough ] || fail "mode=$mode after $fault on every cached block ($errors errors), want passthrough" ;;
	esac
	[ "$mode" != passthrough ] || [ "$cached" = 0 ] || fail "blocks_cached=$cached in passthrough, want 0 (emptied)"
	# the mode only goes up, one step at a time: normal, degraded (at $DEGRADED_AT errors),
	# passthrough (at $PASSTHROUGH_AT)
	while read -r from to; do
		[ "$(mode_rank "$to")" = $(($(mode_rank "$from") + 1)) ] ||
			fail "mode $from -> $to after $fault (changes: $(tr ' \n' '>,' </tmp/modes)), want normal -> degraded -> passthrough"
	done </tmp/modes
	[ "$(tail -n 1 /tmp/modes | cut -d' ' -f2)" = "${mode#normal}" ] ||
		fail "the kernel logged the mode changes $(tr ' \n' '>,' </tmp/modes) but the status says mode=$mode"
	[ "$mode1" = normal ] || fail "mode=$mode1 after 'passthrough 0', want normal"
	[ "$mode2" = normal ] || fail "mode=$mode2 after refilling with the SSD healthy, want normal"
	# The data set is $((P_FIO_MIB * 256)) blocks, read twice in mode normal with the SSD
	# healthy: the first pass caches each block it misses (2 MiB, under the sequential
	# cutoff's 4 MiB; the SSD has room), the second hits every one of them. Nine tenths of
	# the blocks, as for c0 above: room for a block whose fill lost a race, not for a cache
	# that stays shut after 'passthrough 0' (0 and 0), fills that stop after a few blocks,
	# or fills the lookups cannot find (cached, but the second pass misses).
	ds=$((P_FIO_MIB * 256))
	echo "recovery: blocks_cached $c1 -> $c2, read_hits +$((h1 - h0)) reading $ds blocks twice"
	[ "$c2" -ge "$c1" ] && [ "$c2" -ge $((ds * 9 / 10)) ] ||
		fail "blocks_cached went $c1 -> $c2 reading the $ds blocks of the data set twice after 'passthrough 0', want >= $c1 and >= $((ds * 9 / 10))"
	[ $((h1 - h0)) -ge $((ds * 9 / 10)) ] ||
		fail "reading the $ds blocks of the data set twice after 'passthrough 0' added $((h1 - h0)) read_hits, want >= $((ds * 9 / 10)) (the second pass's)"
}

# Wait up to $2 s for status key $1 of pv to read $3.
p_wait_val() {
	pw_i=0
	while [ "$(status_val pv "$1")" != "$3" ] && [ $pw_i -lt $(($2 * 4)) ]; do
		sleep 0.25
		pw_i=$((pw_i + 1))
	done
	[ "$(status_val pv "$1")" = "$3" ]
}

# What the kernel logs when writes went on without their marks (meta.c fail_closed()).
MSG_FAIL_CLOSED="the SSD took no write for|the SSD failed a write-intent mark"

# ssd_sb_gen DEV: the generation of DEV's newest superblock copy (the highest seq of the
# copies with the magic), read with O_DIRECT; empty if neither has it.
ssd_sb_gen() {
	dd if="$1" of=/tmp/sbs bs=4k count=2 iflag=direct 2>/dev/null
	sg_seq=-1 sg_gen=
	for sg_o in 0 4096; do
		[ "$(u32_at /tmp/sbs $sg_o)" = $SB_MAGIC ] || continue
		sg_s=$(u64_at /tmp/sbs $((sg_o + 16)))
		[ "$sg_s" -gt "$sg_seq" ] && sg_seq=$sg_s sg_gen=$(u64_at /tmp/sbs $((sg_o + 24)))
	done
	echo "$sg_gen"
}

# t_persist_fail_closed: a warm volume, no region marked, whose SSD then fails every
# write while the user rewrites the cached blocks with fsync. The writes wait for their
# marks (ssd_hold_s 2), then the volume goes passthrough and every write completes. The
# SSD recovers; the volume is removed, the module reloaded (so nothing is remembered in
# memory) and the volume created again without cold: every block reads back as the HDD
# holds it, the new data, never the old cached one.
# t_persist_fail_closed unmarked|marked|hung: the SSD starts failing every write when no
# region is marked (every rewrite needs a mark, which fails), or right after the regions were
# marked (the marks are durable; the commits and installs that follow fail); or, hung, it
# takes I/O and never ends it (pflk suspended without flushing) until it recovers: the
# writes wait ssd_hold_s for their marks, as for a failing SSD, not for the SSD.
t_persist_fail_closed() {
	p_data
	p_flakey_slices
	p_flakey_create
	p_fill
	c0=$(status_val pv blocks_cached)
	g0=$(ssd_sb_gen $SSD)
	# idle regions are cleared by the commits that follow: then every write needs a mark
	p_wait_val marked_regions 15 0 || fail "marked_regions=$(status_val pv marked_regions) 15 s after the writes, want 0"
	must dd if=/dev/urandom of=/tmp/pnew bs=1M count=$P_DATA_MIB
	new_sha=$(sha256sum </tmp/pnew)
	kmsg_mark
	if [ "$1" = marked ]; then
		# the same bytes again and again, so the regions stay marked (a commit clears
		# only a region idle since the one before) until the SSD fails
		rm -f /tmp/flipped
		while [ ! -e /tmp/flipped ]; do
			dd if=$P_DATA of=$PV bs=1M oflag=direct conv=fsync 2>/dev/null
		done &
		bg=$!
		# read before the flip: once installs fail, passthrough forgets the marks
		marked=0
		for _ in $(seq 100); do
			marked=$(status_val pv marked_regions)
			[ "$marked" -gt 0 ] && break
			sleep 0.1
		done
		must p_flakey error-writes
		touch /tmp/flipped
		wait $bg
		[ "$marked" -gt 0 ] || fail "no region marked in 10 s of rewrites before the SSD began failing writes"
	elif [ "$1" = hung ]; then
		must dmsetup suspend --noflush --nolockfs pflk
	else
		must p_flakey error-writes
	fi
	t0=$(uptime_s)
	if [ "$1" = hung ]; then
		dd if=/tmp/pnew of=$PV bs=64k oflag=direct 2>/tmp/dd.err &
		dd_pid=$!
		i=0
		while kill -0 $dd_pid 2>/dev/null && [ $i -lt 240 ]; do
			sleep 0.25
			i=$((i + 1))
		done
		hung=
		kill -0 $dd_pid 2>/dev/null && hung=1
		must dmsetup resume pflk
		wait $dd_pid || fail "the writes failed with the SSD hung: $(tail -n 1 /tmp/dd.err)"
		[ -z "$hung" ] ||
			fail "the writes were still waiting 60 s after the SSD hung (ssd_hold_s 2; mode $(status_val pv mode))"
	else
		must dd if=/tmp/pnew of=$PV bs=64k oflag=direct conv=fsync
	fi
	t1=$(uptime_s)
	[ "$1" = marked ] || p_wait_val mode 10 passthrough ||
		fail "mode=$(status_val pv mode) with the SSD failing every write, want passthrough"
	got=$(sha_mib $PV 0 $P_DATA_MIB)
	show_status pv
	kmsg_new >/tmp/kmsg.fc
	cat /tmp/kmsg.fc
	must p_flakey healthy
	# the void generation lands on the recovered SSD (tried every second): the newest
	# superblock there no longer carries the generation the stale entries belong to. Not
	# when marked: the marks were durable, so the generation was not voided (the lines of
	# the marked regions are dropped at load)
	i=0
	while [ "$1" != marked ] && [ "$(ssd_sb_gen $SSD)" = "$g0" ]; do
		[ $i -lt 300 ] || fail "the SSD's newest superblock still has generation $g0 30 s after it recovered (mode $(status_val pv mode))"
		sleep 0.1
		i=$((i + 1))
	done
	echo "generation $g0 -> $(ssd_sb_gen $SSD) $((i / 10)) s after the SSD recovered"
	must dmsetup remove pv
	must rmmod dm_flaz
	must modprobe dm-flaz
	must dmsetup create pv --table "0 $(sectors $PHDD) flaz $PHDD $PFLK 2 ssd_hold_s 2"
	c1=$(status_val pv blocks_cached)
	warm=$(sha_mib $PV 0 $P_DATA_MIB)
	hdd=$(sha_mib $PHDD 0 $P_DATA_MIB)
	show_status pv
	must dmsetup remove pv
	p_flakey_remove
	echo "cached $c0 before, $c1 after the reload; writes took $((t1 - t0)) s"
	[ "$c0" -gt 0 ] || fail "blocks_cached=0 before the fault: nothing to go stale"
	[ "$got" = "$new_sha" ] || fail "the rewritten blocks read back wrong in passthrough"
	[ "$hdd" = "$new_sha" ] || fail "the HDD does not hold the rewritten blocks"
	[ "$warm" = "$new_sha" ] ||
		fail "after the SSD recovered and the volume was created again without cold, the blocks read back stale ($c1 blocks loaded)"
	[ "$1" = marked ] || grep -Eq "$MSG_FAIL_CLOSED" /tmp/kmsg.fc ||
		fail "the kernel did not log that writes went on without their marks"
	[ "$1" != hung ] || grep -q "the SSD took more than 2 s to write a superblock" /tmp/kmsg.fc ||
		fail "the kernel did not log the superblock write that outlived ssd_hold_s"
}

# t_persist_unusable: an SSD that fails every I/O (its slice reloaded with a dm "error"
# table), or one that is read-only, at activation: the volume is created all the same, in
# passthrough with the reason in the status, and the data is right. Data written while the
# SSD failed every I/O reads back once the same device works again and the volume is
# created without cold: its saved cache, which no superblock read could identify, is void
# by the device's number. The read-only SSD is never written, and its
# saved state, left behind by the writes made meanwhile, is not loaded when the SSD is
# writable again: the volume then starts empty and reads the new data. Last, a volume that
# started over the read-only SSD writes its new, empty generation once the SSD is writable:
# its seqs go on from the old generation's (next_seq rises), not from 0.
t_persist_unusable() {
	p_data
	p_slices
	p_create cold
	p_fill
	must dmsetup remove pv
	# the same device (its number kept) fails every I/O, then works again
	p_slice_table pssd "0 $((P_SSD_MIB * 2048)) error"
	p_create
	d_mode=$(status_val pv mode)
	d_why=$(status_val pv mode_reason)
	d_got=$(sha_mib $PV 0 $P_DATA_MIB)
	# written past the HDD's first block, which a clean superblock's fingerprint covers
	must dd if=/dev/urandom of=/tmp/pdead bs=1M count=$P_DATA_MIB
	must dd if=/tmp/pdead of=$PV bs=64k skip=1 seek=1 oflag=direct conv=fsync
	must cp $P_DATA /tmp/pdead.want
	must dd if=/tmp/pdead of=/tmp/pdead.want bs=64k skip=1 seek=1 conv=notrunc
	show_status pv
	must dmsetup remove pv
	p_slice_table pssd "0 $((P_SSD_MIB * 2048)) linear $SSD 0"
	p_create
	b_cached=$(status_val pv blocks_cached)
	b_got=$(sha_mib $PV 0 $P_DATA_MIB)
	must dmsetup remove pv
	ssd0=$(sha_mib $PSSD 0 $P_SSD_MIB)
	must blockdev --setro $PSSD
	must dd if=/dev/urandom of=/tmp/pnew bs=1M count=$P_DATA_MIB
	new_sha=$(sha256sum </tmp/pnew)
	p_create
	r_mode=$(status_val pv mode)
	r_why=$(status_val pv mode_reason)
	must dd if=/tmp/pnew of=$PV bs=64k oflag=direct conv=fsync
	r_got=$(sha_mib $PV 0 $P_DATA_MIB)
	show_status pv
	must dmsetup remove pv
	ssd1=$(sha_mib $PSSD 0 $P_SSD_MIB)
	must blockdev --setrw $PSSD
	p_create
	w_mode=$(status_val pv mode)
	w_cached=$(status_val pv blocks_cached)
	w_got=$(sha_mib $PV 0 $P_DATA_MIB)
	show_status pv
	must dmsetup remove pv
	seq0=$(sb_next_seq $PSSD)
	must blockdev --setro $PSSD
	p_create
	must dd if=/tmp/pnew of=$PV bs=64k count=16 oflag=direct conv=fsync
	must blockdev --setrw $PSSD
	must dd if=/tmp/pnew of=$PV bs=64k count=16 seek=16 oflag=direct conv=fsync
	must dmsetup remove pv
	seq1=$(sb_next_seq $PSSD)
	p_remove_slices
	[ "$d_mode/$d_why" = passthrough/ssd_unusable ] ||
		fail "over an SSD failing every I/O: mode=$d_mode mode_reason=$d_why, want passthrough/ssd_unusable"
	[ "$d_got" = "$P_SHA" ] || fail "over an SSD failing every I/O the data set read back wrong"
	[ "$b_got" = "$(sha256sum </tmp/pdead.want)" ] ||
		fail "the SSD back after failing every I/O at activation: the volume returned the data from before the writes it missed ($b_cached blocks loaded)"
	[ "$r_mode/$r_why" = passthrough/ssd_read_only ] ||
		fail "over a read-only SSD: mode=$r_mode mode_reason=$r_why, want passthrough/ssd_read_only"
	[ "$r_got" = "$new_sha" ] || fail "over a read-only SSD the rewritten data read back wrong"
	[ "$ssd0" = "$ssd1" ] || fail "the read-only SSD was written"
	[ "$w_mode" = normal ] || fail "mode=$w_mode with the SSD writable again, want normal"
	[ "$w_got" = "$new_sha" ] ||
		fail "with the SSD writable again the volume returned the old data ($w_cached blocks loaded)"
	awk -v a="$seq1" -v b="$seq0" 'BEGIN { exit !(a + 0 > b + 0 && b + 0 > 0) }' ||
		fail "the generation written once the SSD was writable again has next_seq $seq1, the one before $seq0: seqs went backwards"
}

# sb_next_seq SSD: the highest next_seq of the superblock copies on SSD.
sb_next_seq() {
	flazctl dump "$1" --json | grep -o '"next_seq":[0-9]*' | cut -d: -f2 |
		awk '$1 + 0 > m + 0 { m = $1 } END { print m }'
}

# t_persist_mode_vs_suspend: the SSD fails every read while fio verifies the cached data
# set and the volume is suspended and resumed over and over, so the mode changes that the
# faults ask for race the suspends (a change is completed or deferred to resume, never
# lost, never run while suspended). fio sees every byte right, and in the end the mode is
# the one the fault count gives.
t_persist_mode_vs_suspend() {
	need_flakey_error_reads
	p_flakey_slices
	p_flakey_create
	p_fio write 1
	wait_settled pv
	kmsg_mark
	must p_flakey error-reads
	# verify passes back to back for as long as the suspends go on (a pass alone is short
	# now that failed SSD reads fall back to the HDD asynchronously)
	rm -f /tmp/race.stop
	(
		n=0
		until [ -e /tmp/race.stop ]; do
			p_fio during 1 --verify_only
			n=$((n + 1))
		done
		echo $n >/tmp/race.passes
	) &
	fio_pid=$!
	i=0
	while [ $i -lt 12 ] && kill -0 $fio_pid 2>/dev/null; do
		must dmsetup suspend pv
		sleep 0.2
		must dmsetup resume pv
		sleep 0.3
		i=$((i + 1))
	done
	touch /tmp/race.stop
	wait $fio_pid || fail "$(cat /tmp/why)"
	echo "$(cat /tmp/race.passes) verify passes"
	settled_mode pv /tmp/kmsg.race
	show_status pv
	must p_flakey healthy
	must dmsetup message pv 0 passthrough 0
	mode1=$(status_val pv mode)
	must dmsetup remove pv
	p_flakey_remove
	echo "$i suspend/resume cycles; $errors errors; mode $mode"
	[ $i -eq 12 ] || fail "fio ended after $i suspend/resume cycles, want 12"
	[ "$errors" -gt 0 ] || fail "no SSD error counted with every SSD read failing"
	want=$(mode_for "$errors")
	grep -Eq "$MSG_FAIL_CLOSED" /tmp/kmsg.race && want=passthrough
	[ "$mode" = "$want" ] || fail "mode=$mode with $errors errors after the suspends, want $want"
	[ "$mode1" = normal ] || fail "mode=$mode1 after 'passthrough 0', want normal"
}

# ---- eviction costs a gen block, not a table rewrite

# The commit numbers of table blocks 0..$1-1 of the SSD slice, on one line.
p_table_commits() {
	i=0
	while [ $i -lt "$1" ]; do
		# a table block's header: magic, crc, gen, then its commit at byte 16
		dd if=$PSSD bs=4096 skip=$((2 + i)) count=1 iflag=direct 2>/dev/null |
			od -An -t u8 -j 16 -N 8 | tr -d ' \n'
		echo -n " "
		i=$((i + 1))
	done
}

# p_same_as_hdd MIB WHAT: pv's first MIB MiB read the same as the HDD's.
p_same_as_hdd() { same_blocks $PV $PHDD "$2: pv's first $1 MiB against the HDD's" "$1"; }

t_persist_evict() {
	p_data
	p_slices
	# 16 MiB of 2:1 data on the HDD: ~4096 lines, about half of the SSD slice's
	i=0
	while [ $i -lt 4 ]; do
		must dd if=$P_DATA of=$PHDD bs=1M seek=$((i * P_DATA_MIB)) oflag=direct
		i=$((i + 1))
	done
	# and 256 KiB at 24 MiB: lines ~6144 on, in a table block of their own
	must dd if=$P_DATA of=$PHDD bs=256k count=1 seek=96 oflag=direct
	p_create cold
	p_same_as_hdd 16 "after the first read"
	wait_settled pv
	must dmsetup suspend pv
	must dmsetup resume pv
	n_tb=$(( ($(status_val pv blocks_cached) + 507) / 508 ))
	before=$(p_table_commits "$n_tb")
	c0=$(status_val pv blocks_cached)
	ev0=$(status_val pv evictions)
	# evict nearly everything: reclaim runs when the next extent opens
	must dmsetup message pv 0 high_watermark 95
	must dmsetup message pv 0 low_watermark 90
	must dd if=$PV of=/dev/null bs=256k count=1 skip=96 iflag=direct
	wait_settled pv
	must dmsetup suspend pv
	must dmsetup resume pv
	ev=$(($(status_val pv evictions) - ev0))
	c1=$(status_val pv blocks_cached)
	after=$(p_table_commits "$n_tb")
	show_status pv
	echo "table blocks 0..$((n_tb - 1)) commits before: $before; after: $after"
	must dmsetup remove pv
	flazctl check $PSSD >/tmp/check.out 2>&1 ||
		fail "flazctl check after the evictions: $(tail -n 3 /tmp/check.out | tr '\n' ' ')"
	cat /tmp/check.out
	p_create
	p_read_back
	c2=$P_C
	p_same_as_hdd 16 "after the warm restart"
	# refill: the evicted extents get new tenants next to the void entries of the old
	must dmsetup suspend pv
	must dmsetup resume pv
	must dmsetup remove pv
	p_create
	c3=$(status_val pv blocks_cached)
	p_same_as_hdd 16 "after the refill and a second warm restart"
	must dmsetup remove pv
	p_remove_slices
	echo "cached $c0; $ev lines evicted; $c1 cached after; $c2 loaded; $c3 loaded after the refill"
	[ "$ev" -ge $((c0 / 2)) ] || fail "only $ev of $c0 cached blocks evicted at high_watermark 95"
	[ "$before" = "$after" ] ||
		fail "the evictions rewrote table blocks (commit numbers before: $before; after: $after)"
	[ "$c2" -eq "$c1" ] || fail "$c2 blocks loaded warm, $c1 were cached at the remove"
	[ "$c3" -ge $((c0 * 9 / 10)) ] || fail "$c3 blocks loaded after the refill, want >= 90% of $c0"
}

# t_persist_flush_covers: after a FLUSH and the commit it asks for, the SSD's table holds
# every line cached, so a power cut loses none of them. 8 MiB of 2:1 data and 2 MiB of
# zeros (zero entries, no slot) are read through a cold volume (no sequential bypass, so
# every block fills); with no I/O, FLUSHes and commits (flush_commits); then flazctl
# check's walk of the live SSD's table must count as many slot and zero entries as
# blocks_cached, and the SSD as it stands (an unclean image, as a power cut leaves it) must
# load exactly that many lines, and the same bytes.
t_persist_flush_covers() {
	p_data
	p_slices
	must dd if=$P_DATA of=$PHDD bs=1M oflag=direct
	must dd if=$P_DATA of=$PHDD bs=1M seek=$P_DATA_MIB oflag=direct
	must dd if=/dev/zero of=$PHDD bs=1M count=2 seek=$((2 * P_DATA_MIB)) oflag=direct
	# no sequential bypass: the first read fills every block
	p_create cold seq_cutoff_kib 0
	p_same_as_hdd 10 "the first read"
	wait_settled pv
	flush_commits pv
	[ "$(status_val pv marked_regions)" = 0 ] || fail "regions marked, though nothing was written"
	c0=$(status_val pv blocks_cached)
	flazctl check $PSSD >/tmp/check.out 2>&1
	rc=$?
	cat /tmp/check.out
	# 3: ignorable (the superblock of a live volume is not clean)
	[ $rc = 0 ] || [ $rc = 3 ] ||
		fail "flazctl check of the live SSD exited $rc: $(tail -n 3 /tmp/check.out | tr '\n' ' ')"
	set -- $(sed -n 's/.* \([0-9][0-9]*\) slots ([0-9]* bytes), \([0-9][0-9]*\) zero blocks,.*/\1 \2/p' /tmp/check.out)
	[ $# = 2 ] || fail "no slot and zero counts in flazctl check's summary"
	slots=$1
	zeros=$2
	p_save /tmp/flush.img
	show_status pv
	must dmsetup remove pv
	p_restore /tmp/flush.img
	rm -f /tmp/flush.img
	p_create seq_cutoff_kib 0
	c1=$(status_val pv blocks_cached)
	p_same_as_hdd 10 "after loading the SSD as it was"
	must dmsetup remove pv
	p_remove_slices
	echo "blocks_cached $c0; the table on the SSD: $slots slots and $zeros zero entries; $c1 loaded from it"
	[ "$zeros" -gt 0 ] || fail "no zero entry in the table: 2 MiB of zeros were read"
	[ $((slots + zeros)) -eq "$c0" ] ||
		fail "the SSD's table holds $slots slot and $zeros zero entries after the FLUSH and its commits, blocks_cached is $c0"
	[ "$c1" -eq "$c0" ] || fail "$c1 lines loaded from the SSD as it stood, $c0 were cached"
}

# ---- fuzzed metadata

# A seeded generator (an LCG; busybox has no seeded one): rnd N sets RND to 0..N-1.
rnd() {
	P_RNG=$(((P_RNG * 1103515245 + 12345) % 2147483648))
	RND=$(((P_RNG >> 8) % $1))
}

# Little-endian integers of file $1 at byte $2.
u8_at() { od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '; }
u16_at() { od -An -tu2 -j "$2" -N 2 "$1" | tr -d ' '; }
u32_at() { od -An -tu4 -j "$2" -N 4 "$1" | tr -d ' '; }
u64_at() { od -An -tu8 -j "$2" -N 8 "$1" | tr -d ' '; }

# flip FILE OFFSET: xor the byte at OFFSET with a random non-zero value.
flip() {
	rnd 255
	fl_old=$(u8_at "$1" "$2")
	fl_new=$((fl_old ^ (RND + 1)))
	# shellcheck disable=SC2059 # the format is the byte
	printf "\\$(printf %03o $fl_new)" | dd of="$1" bs=1 seek="$2" count=1 conv=notrunc 2>/dev/null
	echo "  byte $2: $fl_old -> $fl_new"
}

# flip_in FILE START LEN: 1 to 4 random bytes of FILE in [START, START + LEN).
flip_in() {
	rnd 4
	fi_n=$((RND + 1))
	while [ $fi_n -gt 0 ]; do
		rnd "$3"
		flip "$1" $(($2 + RND))
		fi_n=$((fi_n - 1))
	done
}

SB_MAGIC=1112758854	# 0x42535a46
META_MAGIC=1096041805	# 0x4154454d
EXTENT_MAGIC=1514228806	# 0x5a414c46
SLOT_MAGIC=1397509972	# 0x534c4f54

# The geometry from the image's superblock (struct flaz_sb): G_META_START, G_META_BLOCKS,
# G_DATA_START (bytes), G_EXTENT_BYTES, G_EXTENTS; and the table blocks written
# (G_TABLE: their numbers).
image_geometry() {
	sb=0
	[ "$(u32_at "$1" 0)" = $SB_MAGIC ] || sb=4096
	[ "$(u32_at "$1" $sb)" = $SB_MAGIC ] || fail "neither superblock copy of the image has the magic"
	G_EXTENT_BYTES=$(($(u32_at "$1" $((sb + 64))) * 1024))
	G_EXTENTS=$(u64_at "$1" $((sb + 80)))
	G_META_START=$(($(u64_at "$1" $((sb + 88))) * 512))
	G_META_BLOCKS=$(($(u64_at "$1" $((sb + 96))) / 8))
	G_DATA_START=$(($(u64_at "$1" $((sb + 104))) * 512))
	G_TABLE=
	i=0
	while [ $i -lt "$G_META_BLOCKS" ]; do
		[ "$(u32_at "$1" $((G_META_START + i * 4096)))" = $META_MAGIC ] && G_TABLE="$G_TABLE $i"
		i=$((i + 1))
	done
	echo "geometry: meta at $G_META_START ($G_META_BLOCKS blocks, written:$G_TABLE), data at $G_DATA_START, $G_EXTENTS extents of $G_EXTENT_BYTES bytes"
	[ -n "$G_TABLE" ] || fail "the image has no table block written"
}

# fuzz_table FILE: bytes of a random written table block.
fuzz_table() {
	set -- "$1" $G_TABLE
	ft_file=$1
	shift
	rnd $#
	shift $RND
	echo "table block $1"
	flip_in "$ft_file" $((G_META_START + $1 * 4096)) 4096
}

# fuzz_extent FILE: bytes of a random written extent: its header, or one of its slots'
# header and payload (what the slot's crc covers; padding is not checked).
fuzz_extent() {
	tries=0
	while :; do
		tries=$((tries + 1))
		[ $tries -le 400 ] || fail "found no written extent in 400 tries"
		rnd "$G_EXTENTS"
		fe_x=$RND
		fe_at=$((G_DATA_START + fe_x * G_EXTENT_BYTES))
		[ "$(u32_at "$1" $fe_at)" = $EXTENT_MAGIC ] && break
	done
	fe_used=$(u32_at "$1" $((fe_at + 20)))
	fe_slots=$(u32_at "$1" $((fe_at + 24)))
	rnd 4
	if [ $RND = 0 ] || [ "$fe_slots" = 0 ]; then
		echo "extent $fe_x: header (used $fe_used, $fe_slots slots)"
		flip_in "$1" $fe_at 32
		return
	fi
	rnd "$fe_slots"
	fe_k=$RND
	fe_off=32
	while [ $fe_k -gt 0 ]; do
		[ "$(u32_at "$1" $((fe_at + fe_off)))" = $SLOT_MAGIC ] || fail "extent $fe_x: no slot at $fe_off"
		fe_len=$(u16_at "$1" $((fe_at + fe_off + 28)))
		fe_off=$((fe_off + (32 + fe_len + 31) / 32 * 32))
		fe_k=$((fe_k - 1))
	done
	fe_len=$(u16_at "$1" $((fe_at + fe_off + 28)))
	echo "extent $fe_x: slot at $fe_off of $fe_len bytes (used $fe_used, $fe_slots slots)"
	flip_in "$1" $((fe_at + fe_off)) $((32 + fe_len))
}

# What each round damages. The seed is random and logged on the console ("note ... fuzz
# seed N"); to replay a round set FLAZ_FUZZ_SEED=N in the guest's environment.
P_FUZZ_ROUNDS="sb table extent table extent sb extent table both-sb extent"

# A volume filled with the data set and removed cleanly; its SSD image, with random bytes
# flipped (seeded) in a superblock copy, a written table block or an extent, comes back
# without cold and returns the data set exactly (refused only when both superblock copies
# were hit); flazctl check finds the damage.
# The data set on a volume made cold over an SSD slice blanked whole: every extent or table
# block with a header is then this volume's, in use (check() blanks only the start; earlier
# checks leave extents and table blocks further on, which no table refers to and flazctl
# check rightly ignores).
p_blank_fill() {
	p_data
	p_slices
	must dd if=/dev/zero of=$PSSD bs=1M count=$P_SSD_MIB oflag=direct
	p_create cold
	p_fill
}

t_persist_fuzz() {
	p_blank_fill
	must dmsetup remove pv
	p_save /tmp/fuzz.img
	image_geometry /tmp/fuzz.img
	seed=$(od -An -tu4 -N 4 /dev/urandom | tr -d ' ')
	[ -n "${FLAZ_FUZZ_SEED:-}" ] && seed=$FLAZ_FUZZ_SEED
	P_RNG=$((seed % 2147483648))
	note "fuzz seed $seed"
	# the undamaged image is clean: so a non-zero exit below is the damage's
	flazctl check $PSSD >/tmp/check.out 2>&1
	rc=$?
	echo "flazctl check (undamaged) -> $rc: $(tail -n 3 /tmp/check.out)"
	[ $rc = 0 ] || fail "flazctl check exited $rc on the undamaged image: $(tail -n 2 /tmp/check.out | tr '\n' ' ')"
	round=0
	for what in $P_FUZZ_ROUNDS; do
		round=$((round + 1))
		cp /tmp/fuzz.img /tmp/work.img
		echo "round $round: $what"
		case $what in
		sb) rnd 2 && flip_in /tmp/work.img $((RND * 4096)) 4096 ;;
		both-sb) flip_in /tmp/work.img 0 4096 && flip_in /tmp/work.img 4096 4096 ;;
		table) fuzz_table /tmp/work.img ;;
		extent) fuzz_extent /tmp/work.img ;;
		esac
		cmp -s /tmp/fuzz.img /tmp/work.img && fail "round $round ($what, seed $seed): the image did not change"
		p_restore /tmp/work.img
		flazctl check $PSSD >/tmp/check.out 2>&1
		rc=$?
		echo "flazctl check -> $rc: $(tail -n 3 /tmp/check.out)"
		[ $rc != 0 ] || fail "round $round ($what, seed $seed): flazctl check exited 0 on the damaged image"
		if [ $what = both-sb ]; then
			refused "$MSG_CORRUPT|$MSG_NOT_FLAZ" dmsetup create pv --table "$(p_table)"
			continue
		fi
		dmsetup create pv --table "$(p_table)" >/tmp/create.out 2>&1 ||
			fail "round $round ($what, seed $seed): refused: $(cat /tmp/create.out; dmesg | grep 'flaz:' | tail -n 1)"
		p_read_back
		must dmsetup remove pv
		[ "$P_GOT" = "$P_SHA" ] || fail "round $round ($what, seed $seed): the data set read back wrong"
	done
	p_remove_slices
}

GEN_MAGIC=1313163096	# 0x4e454758, "XGEN"
MSG_GENS_DAMAGED="the SSD's extent generations are damaged: starting empty"

# pbf_set healthy|error-reads: put both slices of t_persist_both_fail in that state.
pbf_set() {
	must p_flakey $1
	must dmsetup reload phfk --table "$(fk_table $HDD $P_HDD_MIB $1)"
	must dmsetup resume phfk
}

# t_persist_both_fail: a cached block whose SSD read fails is read from the HDD instead
# (hit.c); when that read fails too, the read ends with an error, not with whatever the
# buffer held. Both slices sit behind dm-flakey: healthy while 4 MiB of random data is
# written (installed, write-through), then failing every read, then healthy again.
t_persist_both_fail() {
	need_flakey_error_reads
	must dmsetup create pflk --table "$(fk_table $SSD $P_SSD_MIB healthy)"
	must dmsetup create phfk --table "$(fk_table $HDD $P_HDD_MIB healthy)"
	must dmsetup create pv --table "0 $((P_HDD_MIB * 2048)) flaz /dev/mapper/phfk $PFLK 3 ssd_hold_s 2 cold"
	must dd if=/dev/urandom of=/tmp/both.dat bs=1M count=4
	must dd if=/tmp/both.dat of=$PV bs=1M oflag=direct
	wait_settled pv
	c=$(status_val pv blocks_cached)
	[ "$c" -ge 1000 ] || fail "blocks_cached=$c after writing 1024 blocks: want 1000 or more cached"
	# a block the committed table holds, so that its read goes to the SSD first
	flush_commits pv
	flazctl dump $PFLK --entries >/tmp/dump.out 2>&1 || fail "flazctl dump exited $?: $(tail -n 1 /tmp/dump.out)"
	b=$(sed -n 's/^  line [0-9]*: block \([0-9]*\) in extent .*/\1/p' /tmp/dump.out | awk '$1 < 1024 { print; exit }')
	[ -n "$b" ] || fail "none of the 1024 blocks written in the SSD's table (flazctl dump)"
	s0=$(status_val pv ssd_errors)
	h0=$(status_val pv hdd_errors)
	pbf_set error-reads
	dd if=$PV of=/tmp/both.out bs=4k count=1 skip=$b iflag=direct 2>/tmp/dd.err &&
		fail "a cached block read while the SSD and the HDD both fail reads ended well ($(od -An -tx1 -N 8 /tmp/both.out))"
	grep -q 'Input/output error' /tmp/dd.err || fail "the read failed, but not with EIO: $(cat /tmp/dd.err)"
	s1=$(status_val pv ssd_errors)
	h1=$(status_val pv hdd_errors)
	[ "$s1" -gt "$s0" ] && [ "$h1" -gt "$h0" ] ||
		fail "ssd_errors $s0 -> $s1, hdd_errors $h0 -> $h1: want both to count the failed read (the SSD's slot, then the HDD's block)"
	pbf_set healthy
	must dd if=$PV of=/tmp/both.out bs=1M count=4 iflag=direct
	cmp -s /tmp/both.dat /tmp/both.out || fail "the data read back with both disks healthy again differs from what was written"
	rm -f /tmp/both.dat /tmp/both.out
	must dmsetup remove pv
	must dmsetup remove phfk
	must dmsetup remove pflk
}

# t_persist_damaged_gen: a clean volume's SSD whose first gen block (the last blocks of the
# metadata, after the table: design.md, "On the SSD") has the generation of an extent in
# use changed (still odd: in use; so only the block's crc tells). flazctl check finds the
# damage; the volume created again without cold loads, says the generations are damaged,
# starts empty (blocks_cached=0) and serves nothing from the old state: the data set reads
# back right with no read hit. Removed and created again, the new generation loads warm
# and clean (flazctl check 0 after the clean remove).
t_persist_damaged_gen() {
	p_blank_fill
	c_full=$(status_val pv blocks_cached)
	must dmsetup remove pv
	p_save /tmp/gen.img
	image_geometry /tmp/gen.img
	# 2,032 gens of 16 bits after a 32-byte header per gen block, the gen blocks last
	gen_blocks=$(((G_EXTENTS + 2031) / 2032))
	gb=$((G_META_START + (G_META_BLOCKS - gen_blocks) * 4096))
	[ "$(u32_at /tmp/gen.img $gb)" = $GEN_MAGIC ] ||
		fail "no gen block magic at byte $gb (meta at $G_META_START, $G_META_BLOCKS blocks, $gen_blocks gen blocks)"
	x=0
	while [ $x -lt "$G_EXTENTS" ] && [ $x -lt 2032 ] && [ $(($(u16_at /tmp/gen.img $((gb + 32 + 2 * x))) % 2)) = 0 ]; do
		x=$((x + 1))
	done
	[ $x -lt "$G_EXTENTS" ] && [ $x -lt 2032 ] || fail "no extent of the first gen block is in use (odd gen)"
	at=$((gb + 32 + 2 * x))
	old=$(u8_at /tmp/gen.img $at)
	# shellcheck disable=SC2059 # the format is the byte
	printf "\\$(printf %03o $((old ^ 2)))" | dd of=/tmp/gen.img bs=1 seek=$at count=1 conv=notrunc 2>/dev/null
	echo "extent $x: gen byte at $at $old -> $(u8_at /tmp/gen.img $at)"
	p_restore /tmp/gen.img
	flazctl check $PSSD >/tmp/check.out 2>&1
	ck=$?
	echo "flazctl check -> $ck: $(tail -n 3 /tmp/check.out)"
	kmsg_mark
	p_create
	kmsg_new >/tmp/kmsg.gen
	cat /tmp/kmsg.gen
	p_read_back
	must dmsetup remove pv
	flazctl check $PSSD >/tmp/check.out 2>&1
	ck2=$?
	echo "flazctl check after the remove -> $ck2: $(tail -n 3 /tmp/check.out)"
	p_create
	c_warm=$(status_val pv blocks_cached)
	warm=$(sha_mib $PV 0 $P_DATA_MIB)
	must dmsetup remove pv
	p_remove_slices
	note "blocks_cached $c_full before the damage, $P_C after it, $c_warm after a clean restart; $P_HITS hits reading the data set after the damage"
	[ "$c_full" -gt 0 ] || fail "blocks_cached=0 after the fill: nothing to lose"
	[ "$P_C" = 0 ] || fail "blocks_cached=$P_C after loading a damaged gen block, want 0 (start empty)"
	[ "$P_HITS" = 0 ] || fail "$P_HITS read hits through a damaged gen block's state, want 0"
	[ "$P_GOT" = "$P_SHA" ] || fail "the data set read back wrong after the damaged load"
	grep -qF "$MSG_GENS_DAMAGED" /tmp/kmsg.gen ||
		fail "no '$MSG_GENS_DAMAGED' in the kernel log of the load"
	[ $ck != 0 ] || fail "flazctl check exited 0 on an SSD with a damaged gen block"
	[ $ck2 = 0 ] || fail "flazctl check exited $ck2 after a clean remove of the new generation: $(tail -n 2 /tmp/check.out | tr '\n' ' ')"
	[ "$c_warm" -gt 0 ] || fail "blocks_cached=0 after a clean restart of the new generation"
	[ "$warm" = "$P_SHA" ] || fail "the data set read back wrong after the clean restart"
}

# ext_seqs IMAGE: "extent seq" for every extent of IMAGE with the extent magic (geometry
# from image_geometry; the extent header's seq, when it was sealed, is at byte 8).
ext_seqs() {
	es_x=0
	while [ $es_x -lt "$G_EXTENTS" ]; do
		es_at=$((G_DATA_START + es_x * G_EXTENT_BYTES))
		[ "$(u32_at "$1" $es_at)" = $EXTENT_MAGIC ] && echo "$es_x $(u64_at "$1" $((es_at + 8)))"
		es_x=$((es_x + 1))
	done
}

# t_persist_seq_restart: sequence numbers never go backwards across a restart (design.md,
# "Ordering on a volatile write cache": each superblock leases the next 2^32 and a load
# starts no lower than the wall clock). A cold volume caches the data set and is removed;
# created again warm, with the clock set a day back, it caches other data, written further
# on, and is removed: every extent
# sealed in the second life has a seq above every one of the first (a later slot of a block
# supersedes by seq, so one that went backwards would lose to a stale one).
t_persist_seq_restart() {
	p_data
	p_slices
	must dd if=/dev/zero of=$PSSD bs=1M count=$P_SSD_MIB oflag=direct
	p_create cold
	p_fill
	must dmsetup remove pv
	p_save /tmp/seq1.img
	image_geometry /tmp/seq1.img
	ext_seqs /tmp/seq1.img >/tmp/seq1.txt
	max1=$(cut -d' ' -f2 /tmp/seq1.txt | sort -n | tail -n 1)
	# the second life loads with the wall clock a day behind the first's (a clock set
	# back, a lost RTC): only the superblock's lease keeps its seqs above the first's
	sq_t=$(date +%s)
	sq_u=$(uptime_s)
	must date -s "@$((sq_t - 86400))"
	sq_back=$(date +%s)
	p_create
	wait_loaded pv || fail "$(head -n 1 /tmp/unloaded)"
	must date -s "@$((sq_t + $(uptime_s) - sq_u))"
	[ "$sq_back" -le $((sq_t - 86000)) ] || fail "the clock did not go back a day ($sq_t -> $sq_back)"
	must dd if=/dev/urandom of=/tmp/seq.data bs=1M count=$P_DATA_MIB
	must dd if=/tmp/seq.data of=$PV bs=1M seek=64 oflag=direct
	[ "$(sha_mib $PV 64 $P_DATA_MIB)" = "$(sha256sum </tmp/seq.data)" ] || fail "the second data set reads back wrong"
	wait_settled pv
	must dmsetup remove pv
	p_save /tmp/seq2.img
	p_remove_slices
	ext_seqs /tmp/seq2.img >/tmp/seq2.txt
	# the extents sealed in the second life: absent from the first image, or with another seq
	grep -vxFf /tmp/seq1.txt /tmp/seq2.txt >/tmp/seq.new
	min2=$(cut -d' ' -f2 /tmp/seq.new | sort -n | head -n 1)
	note "$(wc -l </tmp/seq1.txt) extents sealed in the first life (highest seq $max1), $(wc -l </tmp/seq.new) in the second (lowest seq $min2)"
	[ -s /tmp/seq1.txt ] || fail "no extent sealed in the first life"
	[ -s /tmp/seq.new ] || fail "no extent sealed in the second life"
	# seqs are u64 (wall-clock nanoseconds: beyond sh's signed compare only after 2262)
	[ "$min2" -gt "$max1" ] ||
		fail "an extent sealed after the restart has seq $min2, not above the first life's $max1: $(awk -v m="$max1" '$2 <= m' /tmp/seq.new | head -n 3 | tr '\n' ' ')"
}

# t_persist_paging: the table at paging geometry (issue 28, finding 1). The 128 MiB SSD of 4 KiB
# extents at overbook 1000 has a table of 327,680 lines (645 pages of 508 lines, some 1.9
# MB); table_cache_kib 64 holds 21 of them, so pages go out and come back all the time. A
# cold volume is filled with fio's crc32c data over 160 MiB, then created again warm over an
# SSD whose reads are slowed (dm-delay, 20 ms), and rewritten at once at random with new
# data while the pages come in slowly for fills and commits (warming at this budget is two
# reads and is over by then: writes during a load are persist-background-load's). Afterwards,
# after a clean restart and after yet another rewrite, fio verifies every block against what
# it wrote last, and the volume reads the same bytes as its HDD: no write was forgotten by a
# page that went out and came back.
PG_MIB=160
PG_FIO="--name=pg --rw=randwrite --bs=4k --size=${PG_MIB}M --refill_buffers
	--buffer_compress_percentage=50 --verify=crc32c --verify_state_save=0"
# pg_debug: on a mismatch, which blocks of the volume differ from its HDD's, whether a second
# read gives the same, and the kernel's flaz lines: what a failure here needs to be understood.
pg_debug() {
	dmsetup status pv
	pg_m=0
	while [ $pg_m -lt $PG_MIB ]; do
		dd if=$PV bs=1M skip=$pg_m count=1 iflag=direct of=/tmp/pgv 2>/dev/null
		dd if=$pg_hdd bs=1M skip=$pg_m count=1 iflag=direct of=/tmp/pgh 2>/dev/null
		if ! cmp -s /tmp/pgv /tmp/pgh; then
			echo "MiB $pg_m differs in blocks:" $(cmp -l /tmp/pgv /tmp/pgh | awk -v m=$pg_m '{print m*256+int(($1-1)/4096)}' | uniq)
			dd if=$PV bs=1M skip=$pg_m count=1 iflag=direct of=/tmp/pgv2 2>/dev/null
			cmp -s /tmp/pgv /tmp/pgv2 && echo " same on a second read" || echo " differs on a second read"
		fi
		pg_m=$((pg_m + 1))
	done
	dmesg | grep -i flaz | tail -40
	rm -f /tmp/pgv /tmp/pgh /tmp/pgv2
}
t_persist_paging() {
	pg_n=$(sectors $SSD)
	pg_hdd=/dev/mapper/pghdd
	pg_ssd=/dev/mapper/pgssd
	pg_vol="0 $((PG_MIB * 2048)) flaz $pg_hdd $pg_ssd"
	must dmsetup create pghdd --table "0 $((PG_MIB * 2048)) linear $HDD 0"
	must dmsetup create pgssd --table "0 $pg_n delay $SSD 0 0"
	must dmsetup create pv --table "$pg_vol 7 overbook 1000 extent_kib 4 table_cache_kib 64 cold"
	tb=$(status_val pv table_bytes)
	# shellcheck disable=SC2086 # a list of options
	FIO_DEV=$PV run_fio fill $PG_FIO --randseed=1 --io_size=64M
	must dd if=$PV of=/dev/null bs=1M count=$PG_MIB iflag=direct
	wait_settled pv
	c0=$(status_val pv blocks_cached)
	must dmsetup remove pv
	must dmsetup suspend pgssd
	must dmsetup reload pgssd --table "0 $pg_n delay $SSD 0 20 $SSD 0 0"
	must dmsetup resume pgssd
	must dmsetup create pv --table "$pg_vol 6 overbook 1000 extent_kib 4 table_cache_kib 64"
	left=$(status_now pv loading)
	# new data at once, while the table's pages come in slowly
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio rewrite-while-warming $PG_FIO --randseed=2 --io_size=16M
	must dmsetup suspend pgssd
	must dmsetup reload pgssd --table "0 $pg_n delay $SSD 0 0 $SSD 0 0"
	must dmsetup resume pgssd
	# reads that page in for fills
	must dd if=$PV of=/dev/null bs=1M count=$PG_MIB iflag=direct
	wait_loaded pv || fail "$(head -n 1 /tmp/unloaded)"
	wait_settled pv
	pi=$(status_val pv table_page_ins)
	held=$(status_val pv table_resident_bytes)
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio verify-after-warming $PG_FIO --randseed=2 --io_size=16M --verify_only
	ON_DIFFER=pg_debug same_blocks $PV $pg_hdd "after the rewrite while warming, the volume against its HDD"
	must dmsetup remove pv
	must dmsetup create pv --table "$pg_vol 6 overbook 1000 extent_kib 4 table_cache_kib 64"
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio verify-after-restart $PG_FIO --randseed=2 --io_size=16M --verify_only
	h0=$(status_val pv read_hits)
	ON_DIFFER=pg_debug same_blocks $PV $pg_hdd "after a clean restart, the volume against its HDD"
	h1=$(status_val pv read_hits)
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio rewrite-paged $PG_FIO --randseed=3 --io_size=32M
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio verify-rewrite $PG_FIO --randseed=3 --io_size=32M --verify_only
	ON_DIFFER=pg_debug same_blocks $PV $pg_hdd "after a rewrite at paging geometry, the volume against its HDD"
	errors="$(status_val pv ssd_errors)/$(status_val pv meta_errors)"
	show_status pv
	must dmsetup remove pv
	must dmsetup remove pgssd
	must dmsetup remove pghdd
	note "table $tb bytes, budget 65536; loading=$left at the create; $pi pages in; held $held; $c0 blocks cached before the restart; $((h1 - h0)) hits reading it back"
	[ "$tb" -gt $((10 * 65536)) ] || fail "table_bytes=$tb: want over ten times the 64 KiB budget"
	# the data's 40,960 lines are in 81 pages (508 lines each): some came in more than once
	[ "$pi" -gt 81 ] || fail "table_page_ins=$pi: want the data's 81 pages in, out and in again"
	[ $((h1 - h0)) -gt 0 ] || fail "reading the volume after the restart hit nothing"
	[ "$errors" = 0/0 ] || fail "ssd_errors/meta_errors $errors, want 0/0"
}

# t_persist_gen_wear: generations that reach their end (module parameter debug_gen_start,
# tests only). With new formats starting every extent 6 generations before the last of 16
# bits (65534: a 16 MiB SSD's entries have 16 bits for it), an extent can be filled 3
# times. A cold volume over a 16 MiB SSD slice is rewritten at random, a lap of the SSD at a
# time: after one lap, flazctl dump --entries lists slots at generations in use (odd, below
# the last); after six, extents have worn out: the kernel logs each, no worn extent is ever
# free again (free_extents stays at most total_extents minus the worn ones, also after a
# warm restart), the entries listed are still only at generations in use, fio verifies the
# last rewrite, and the volume reads what its HDD holds, before and after the restart.
GW_FIO="--name=w --rw=randwrite --bs=4k --size=${P_HDD_MIB}M --io_size=24M --refill_buffers
	--buffer_compress_percentage=50 --verify=crc32c --verify_state_save=0"
gw_entries() { # gw_entries FILE: the generations of live slot entries, one a line
	grep -E '^  line [0-9]+: block .*, gen [0-9]+' "$1" | sed -E 's/.*, gen ([0-9]+).*/\1/'
}
t_persist_gen_wear() {
	param=/sys/module/dm_flaz/parameters/debug_gen_start
	[ -w $param ] || fail "no $param"
	p_slices
	echo 65528 >$param
	kmsg_mark
	must dmsetup create pv --table "$(p_table extent_kib 32 cold)"
	echo 0 >$param
	total=$(status_val pv total_extents)
	for i in 1 2 3 4 5 6; do
		# shellcheck disable=SC2086 # a list of options
		FIO_DEV=$PV run_fio wear-$i $GW_FIO --randseed=$i
		if [ $i = 1 ]; then
			wait_settled pv
			must dmsetup suspend pv
			must flazctl dump --entries $PSSD >/tmp/entries.1
			must dmsetup resume pv
		fi
	done
	wait_settled pv
	worn=$(kmsg_new | grep -c 'reached its last generation')
	free=$(status_val pv free_extents)
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio verify-worn $GW_FIO --randseed=6 --verify_only
	same_blocks $PV $PHDD "after the wear, the volume against its HDD"
	show_status pv
	must dmsetup remove pv
	must flazctl dump --entries $PSSD >/tmp/entries.2
	p_create extent_kib 32
	free2=$(status_val pv free_extents)
	# shellcheck disable=SC2086
	FIO_DEV=$PV run_fio verify-restart $GW_FIO --randseed=6 --verify_only
	same_blocks $PV $PHDD "after the wear and a restart, the volume against its HDD"
	must dmsetup remove pv
	p_remove_slices
	n1=$(gw_entries /tmp/entries.1 | wc -l)
	bad1=$(gw_entries /tmp/entries.1 | awk '($1 % 2 == 0) || ($1 < 65529) || ($1 > 65533)' | head -3 | tr '\n' ' ')
	bad2=$(gw_entries /tmp/entries.2 | awk '($1 % 2 == 0) || ($1 >= 65534)' | head -3 | tr '\n' ' ')
	note "$total extents, $worn worn; free $free, $free2 after the restart; $n1 entries after a lap, $(gw_entries /tmp/entries.2 | wc -l) at the end"
	[ "$n1" -gt 0 ] || fail "dump --entries listed no slot after a lap"
	[ -z "$bad1" ] || fail "after a lap, entries at generations other than 65529-65533 (odd): $bad1"
	[ "$worn" -gt 0 ] || fail "no extent reached its last generation after six laps of three lives"
	[ "$free" -le $((total - worn)) ] || fail "free_extents=$free with $worn of $total worn out"
	[ "$free2" -le $((total - worn)) ] ||
		fail "after a restart free_extents=$free2 with $worn of $total worn out: worn ones free again"
	[ -z "$bad2" ] || fail "at the end, entries at a free or the last generation: $bad2"
}

# t_persist_big: a 64 GiB SSD over a 256 GiB HDD (sparse images: only what is written takes
# room), at the default options: a table of 33 M lines, 65,000 pages, of which the default
# budget (128 KiB per GiB of SSD) holds about a thirtieth, so random I/O across the whole HDD
# pages the table in and out for real. fio writes 32 MiB at random over all 256 GiB with
# crc32c, reads it back twice (fills, then hits: nearly all, for a read whose page is out
# reads the page in and looks again, cache.c), and verifies; the volume is created again
# (warm) and fio verifies again and rewrites a part. Every block must read what was written
# last.
HDDBIG=/dev/vdg
SSDBIG=/dev/vdh
BIG_FIO="--name=big --rw=randwrite --bs=4k --size=256G --io_size=32M --refill_buffers
	--buffer_compress_percentage=50 --verify=crc32c --verify_state_save=0"
t_persist_big() {
	big_vol="0 $(sectors $HDDBIG) flaz $HDDBIG $SSDBIG"
	must dmsetup create bv --table "$big_vol 1 cold"
	tb=$(status_val bv table_bytes)
	# shellcheck disable=SC2086 # a list of options
	FIO_DEV=/dev/mapper/bv run_fio big-write $BIG_FIO --randseed=7
	# shellcheck disable=SC2086
	FIO_DEV=/dev/mapper/bv run_fio big-fill $BIG_FIO --randseed=7 --verify_only
	h0=$(status_val bv read_hits)
	# shellcheck disable=SC2086
	FIO_DEV=/dev/mapper/bv run_fio big-hit $BIG_FIO --randseed=7 --verify_only
	h1=$(status_val bv read_hits)
	pi=$(status_val bv table_page_ins)
	held=$(status_val bv table_resident_bytes)
	show_status bv
	must dmsetup remove bv
	must dmsetup create bv --table "$big_vol 0"
	left=$(dmsetup status bv | tr ' ' '\n' | sed -n 's/^loading=//p')
	# shellcheck disable=SC2086
	FIO_DEV=/dev/mapper/bv run_fio big-warm $BIG_FIO --randseed=7 --verify_only
	# shellcheck disable=SC2086
	FIO_DEV=/dev/mapper/bv run_fio big-rewrite $BIG_FIO --randseed=8 --io_size=8M
	# shellcheck disable=SC2086
	FIO_DEV=/dev/mapper/bv run_fio big-reverify $BIG_FIO --randseed=8 --io_size=8M --verify_only
	errors="$(status_val bv ssd_errors)/$(status_val bv meta_errors)"
	show_status bv
	must dmsetup remove bv
	note "table $tb bytes; $pi pages in, $held resident; the second read hit $((h1 - h0)); loading=$left at the warm create"
	[ "$tb" -gt $((128 << 20)) ] || fail "table_bytes=$tb: want a table of over 128 MiB"
	[ "$held" -lt "$tb" ] || fail "table_resident_bytes=$held of $tb: the table was not paged"
	[ "$pi" -gt 1000 ] || fail "table_page_ins=$pi: want the table paged in (over 1000)"
	# a block whose page is out is read in, not missed: the second read hits nearly all
	[ $((h1 - h0)) -ge $((8192 * 9 / 10)) ] ||
		fail "the second read of 8192 blocks hit $((h1 - h0)), want >= 9/10 ($held of the table's $tb bytes resident)"
	[ "$errors" = 0/0 ] || fail "ssd_errors/meta_errors $errors, want 0/0"
}

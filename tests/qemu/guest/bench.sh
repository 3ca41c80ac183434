#!/bin/sh
# make bench: flaz against dm-cache (writethrough, smq), bcache (writethrough) and no cache,
# side by side on the same emulated devices in one VM, an HDD slowed by dm-delay holding 2:1-compressible data,
# read with fio's zipf random reads. Figures only, no pass/fail; goals are reported against.
#   1. main: a 256 MiB working set (2x the SSD): none, dm-cache, flaz with each codec,
#      flaz-off (compress_min_saving 100: every block stored raw, i.e. compression off), and
#      flaz-paged (lz4 with a third of its table resident: table_cache_kib)
#   2. fits: a working set of half the SSD's data area: flaz-lz4 against flaz-off; then the
#      hit path on that set (hits-seq128k: 128 KiB sequential re-reads; hits-zipf4: the zipf
#      reads from four jobs): dm-cache, flaz-lz4 and flaz-off
#   3. the DRAM cost of flaz's logical-to-physical table (status key table_bytes), and of all
#      its metadata (dram_bytes), extrapolated to a 1 TiB SSD over a 10 TiB HDD
#   4. writes: fio 4 KiB random writes with an fsync after each, and stock PostMark on ext4,
#      on the bare HDD, dm-cache, bcache and flaz; for flaz, what its metadata costs (commits/s,
#      table and superblock bytes per MiB written)
#   5. nbd: the main read load with the HDD a network volume: the disk served by nbd-server
#      over the guest's loopback, the kernel's nbd client, dm-delay on top; none, dm-cache and
#      flaz-lz4
#   6. cleaner: what eviction keeps (zipf over 2x and 4x the SSD, zipf over 2x the SSD of real
#      text (the corpus), a hot set read amid a scan of 3x the SSD): dm-cache, flaz with FIFO
#      eviction, flaz with the cleaner, and an ideal LRU of flaz's compressed capacity simulated
#      from the same trace; and the capacity cold_compressor zstd gains on text (clean-cold);
#      run alone with `make bench BENCH=only=cleaner` (its hot set and scan rows with
#      BENCH=only=scan, its random one-pass scan rows alone with BENCH=only=rscan; section 2
#      with BENCH=only=hits; the zipf loads across a restart, BENCH=only=restart;
#      flaz-lz4 and flaz-paged of section 1 with the DRAM figures, BENCH=only=paged)
#   7. scale: the table paged at a 64 GiB SSD over a 256 GiB HDD, hit ratio against the table's
#      budget (BENCH=only=scale)
#   8. mixed: 60% random writes over 3x the SSD beside zipf reads over part of it: read hits
#      and SSD bytes written, none, dm-cache, bcache, flaz (written blocks on probation) and
#      flaz-wcached (only those cached or ghosts before the write) (BENCH=only=mixed)
#   9. misaligned: zipf reads and writes of 512 B to 64 KiB at 512-byte offsets, and the
#      aligned load beside it: none, dm-cache, bcache, flaz (blocks written in part updated),
#      flaz-drop (dropped) and flaz-before (dropped, and reads of parts of blocks not cached)
#      (BENCH=only=misaligned)
# Lines for the user start with "::" (the host's bench.sh shows only those); "@csv " lines are
# the same rows as CSV, which the host collects into a file and plots.
set -e -o pipefail
HDD=/dev/vda
SSD=/dev/vdb
DELAY_MS=${BENCH_DELAY_MS:-2}
WSET_MIB=256
# Each row warms and measures under TCG: 15 s each keeps the read rows near 9 min.
WARM_S=15	# a first pass lets the caches fill; only the second is measured
RUN_S=15
# flaz runs at its defaults (the table section assumes them)
EXTENT_KIB=32
OVERBOOK=200
CODECS="lz4 lzo zstd deflate"
# Goals: flaz against dm-cache on the main set, lz4 against no compression on the fits set,
# and the table's DRAM per SSD capacity.
GOAL_HIT=1.8
GOAL_IOPS=1.5
GOAL_FITS=0.95
GOAL_TABLE_MB_PER_GB=1
PAPER_TABLE_MB_PER_GB=2.31
GOAL_WRITE=0.97	# a write-through cache must not slow writes down
WRITE_S=15
# flaz's per-extent DRAM besides the table (dram_bytes): allocator chain (4), the tenant's
# opening (4, tenant.c), generation (2), live bytes and slot count (8), the cleaner's hot
# count (1), seven bitmaps (failed, unflushed, written, meta's in use at activation, the
# cleaner's victims, kept and hit); l2p.c's entry: 8 length bits + offset + extent + tag (at most 4 bits) (+ 1
# with a cold codec, not at the defaults) + the extent's generation (what 64 bits leave of
# offset, extent, a cold bit and 4 tag bits, 16 at most), and per line 2 bits of heat (the
# cleaner) and a tombstone bit. The entries are paged: at most table_cache_kib of them
# resident, by default 128 KiB per GiB of SSD, and fills may page in an eighth more before they
# wait for a commit; per page (a table block of 508 lines) a pointer, two state bytes and a
# dirty bit.
PER_EXTENT_BYTES=19.875
L2P_LINE_BITS=3	# heat (2) and the tombstone bit (1)
L2P_LEN_BITS=8
L2P_MAX_TAG_BITS=4
L2P_PAGE_LINES=508
L2P_PAGE_BYTES=10
TABLE_CACHE_PER_GIB=131072
. "$(dirname "$0")/dmcache.sh"
. "$(dirname "$0")/postmark.sh"
ROWS=/tmp/rows	# "table name hit% IOPS table_bytes total_extents CPUs/GiB" per row, for the summaries
dmesg -n 1
# the boot leaves escape codes on the console's current line: start the "::" lines on a new one
echo

say() { echo "::$*"; }

# Busy CPU time since boot, in 1/100 s, from /proc/stat (user+nice+system+irq+softirq).
cpu_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }

# The value after "<pct>%=" in fio's terse line (clat percentiles, in microseconds).
pct() { tr ';' '\n' <"$1" | sed -n "s/^$2\.000000%=//p" | head -n1; }

# zipf_reads DEV WSET_MIB SECONDS OUT: fio's zipf random 4 KiB reads over the first
# WSET_MIB of DEV, terse output to OUT. Every random load here has --randrepeat=0: by
# default fio draws the same sequence in every run, so a measured pass would re-read its
# warm-up's blocks in the same order.
zipf_reads() {
	fio --name=zipf --filename="$1" --size="$2M" --rw=randread --randrepeat=0 --bs=4k \
		--random_distribution=zipf:1.2 --ioengine=libaio --iodepth=8 --direct=1 \
		--time_based --runtime="$3" --norandommap --eta=never --minimal --output="$4"
}

# The hit path's loads (the hits table): 128 KiB sequential re-reads, warmed by 128 KiB random
# reads of the whole set; and the zipf reads with four jobs of iodepth 8 instead of one.
rand128k_reads() {
	fio --name=r128k --filename="$1" --size="$2M" --rw=randread --randrepeat=0 --bs=128k \
		--ioengine=libaio --iodepth=8 --direct=1 --time_based --runtime="$3" --eta=never --minimal --output="$4"
}
seq128k_reads() {
	fio --name=s128k --filename="$1" --size="$2M" --rw=read --bs=128k --ioengine=libaio \
		--iodepth=8 --direct=1 --time_based --runtime="$3" --eta=never --minimal --output="$4"
}
zipf4_reads() {
	fio --name=zipf4 --filename="$1" --size="$2M" --rw=randread --randrepeat=0 --bs=4k \
		--random_distribution=zipf:1.2 --ioengine=libaio --iodepth=8 --numjobs=4 \
		--group_reporting --direct=1 --time_based --runtime="$3" --norandommap --eta=never \
		--minimal --output="$4"
}
# bench's warm and measured loads
WARM_LOAD=zipf_reads
RUN_LOAD=zipf_reads

# The columns of both tables; the last two are flaz's only.
row() { printf '::%-12s %6s %8s %9s %9s %10s %6s %10s\n' "$@"; }
header() {
	say
	say "$1"
	row config "hit%" IOPS "p50(us)" "p99(us)" "CPUs/GiB" ratio "cachedMiB"
}

# hit_pct "HITS MISSES" "HITS MISSES": the hit % between two readings of a cache's counters
# ("-" where there are none, or nothing was read).
hit_pct() {
	echo "$1 $2" | awk 'NF == 4 && $3 + $4 > $1 + $2 {
		printf "%.1f", 100 * ($3 - $1) / ($3 + $4 - $1 - $2); exit } { printf "-" }'
}

# bench TABLE NAME DEV WSET_MIB HITS_CMD: warm up, measure, print one row and record it under
# TABLE (main or fits). HITS_CMD prints "hits misses" counted by the cache, or nothing where there is none.
bench() {
	tbl=$1 name=$2 dev=$3 wset=$4 hits_cmd=$5
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if [ "$hits_cmd" = flaz_hits ]; then
		dmsetup status vol >/tmp/status
		fc0="$(flaz_val fills) $(flaz_val evictions) $(flaz_val meta_bytes)"
	fi
	$WARM_LOAD "$dev" "$wset" $WARM_S /tmp/warm.terse
	h0=$($hits_cmd)
	[ "$hits_cmd" != flaz_hits ] || pi0=$(flaz_val table_page_ins)
	c0=$(cpu_ticks)
	$RUN_LOAD "$dev" "$wset" $RUN_S /tmp/run.terse
	c1=$(cpu_ticks)
	h1=$($hits_cmd)
	# terse v3: field 6 is KiB read, field 8 read IOPS
	kib=$(cut -d';' -f6 /tmp/run.terse)
	iops=$(cut -d';' -f8 /tmp/run.terse)
	hit=$(hit_pct "$h0" "$h1")
	cpu=$(echo "$c0 $c1 $kib" | awk '$3 > 0 { printf "%.1f", ($2 - $1) / 100 / ($3 / 1048576) }')
	# flaz's state after the measured pass: ratio, MiB cached, table bytes, extents
	ratio=- mib=- tbytes=- extents=-
	if [ "$hits_cmd" = flaz_hits ]; then
		dmsetup status vol >/tmp/status
		ratio=$(flaz_val ratio)
		PAGE_INS=$(($(flaz_val table_page_ins) - ${pi0:-0}))
		RESIDENT_KIB=$(($(flaz_val table_resident_bytes) / 1024))
		mib=$(flaz_val logical_bytes | awk '{ printf "%.1f", $1 / 1048576 }')
		tbytes=$(flaz_val table_bytes)
		extents=$(flaz_val total_extents)
		[ "$tbl/$name" != main/flaz-lz4 ] ||
			echo "$(flaz_val dram_bytes) $tbytes $extents" >/tmp/dram
		[ "$tbl/$name" != main/flaz-lz4 ] ||
			echo "$fc0 $(flaz_val fills) $(flaz_val evictions) $(flaz_val meta_bytes)" \
				>/tmp/fillcost
	fi
	p50=$(pct /tmp/run.terse 50) p99=$(pct /tmp/run.terse 99)
	row "$name" "$hit" "$iops" "$p50" "$p99" "${cpu:--}" "${ratio:--}" "${mib:--}"
	csv "$tbl" "$name" "$hit" "$iops" "$p50" "$p99" "${cpu:--}" "${ratio:--}" "${mib:--}" -
	echo "$tbl $name $hit $iops ${tbytes:--} ${extents:--} ${cpu:--}" >>$ROWS
}

# The CSV's columns; the last four are clean-cold's only.
CSV_COLUMNS=table,config,hit_pct,iops,p50_us,p99_us,cpu_s_per_gib,ratio,cached_mib,postmark_s,cached_blocks,physical_bytes,bytes_per_block,recompressed
# csv FIELDS...: one CSV row for the host ("-" becomes an empty field), padded with empty
# fields to CSV_COLUMNS.
csv() {
	echo "@csv $(printf '%s\n' "$@" | awk -v cols=$CSV_COLUMNS '{ printf "%s%s", (NR > 1 ? "," : ""), ($0 == "-" ? "" : $0) }
		END { for (i = NR; i < split(cols, c, ","); i++) printf "," }')"
}

no_hits() { :; }
# dm-cache status: ... <read hits> <read misses> are words 8 and 9 after the target name.
dmcache_hits() { dmsetup status cached | awk '{print $8, $9}'; }
# The value of key $1 in the flaz status saved in /tmp/status.
flaz_val() { tr ' ' '\n' </tmp/status | sed -n "s/^$1=//p"; }
flaz_hits() {
	dmsetup status vol >/tmp/status
	echo "$(flaz_val read_hits) $(flaz_val read_misses)"
}
bcache_hits() {
	echo "$(cat /sys/block/bcache0/bcache/stats_total/cache_hits)" \
		"$(cat /sys/block/bcache0/bcache/stats_total/cache_misses)"
}

# bcache_up: bcache in writethrough over the slow HDD with the whole SSD as its cache set, at
# /dev/bcache0. Its superblock takes the HDD's first 8 KiB (the first 128 KiB are saved, and
# put back by bcache_down),
# so bcache0 shows the HDD from byte 8192 on: the same kind of data. No bypass: every read
# may be cached (sequential cutoff and the congestion thresholds off). Buckets of 64 KiB:
# the default 512 KiB gives the 128 MiB SSD too few for the kernel ("cache device is too
# small"). A bcache that does not come up is taken down again, so the rows after it run.
bcache_up() {
	dd if=/dev/mapper/slowhdd of=/tmp/hddhead bs=128k count=1 iflag=direct 2>/dev/null
	# make-bcache refuses a device with another signature (PostMark's ext4, after a write row)
	dd if=/dev/zero of=/dev/mapper/slowhdd bs=128k count=1 oflag=direct 2>/dev/null
	make-bcache --wipe-bcache --bucket 64k -C $SSD -B /dev/mapper/slowhdd >/tmp/bcache.out 2>&1 || {
		cat /tmp/bcache.out; return 1; }
	echo $SSD >/sys/fs/bcache/register
	echo /dev/mapper/slowhdd >/sys/fs/bcache/register
	bc_i=0
	while [ ! -e /sys/block/bcache0/bcache/cache ] && [ $bc_i -lt 100 ]; do
		sleep 0.1
		bc_i=$((bc_i + 1))
	done
	[ -e /sys/block/bcache0/bcache/cache ] || {
		echo "bcache0 did not attach: $(dmesg | grep -i bcache | tail -n 1)" | tee /tmp/bcache.out
		bcache_down
		return 1
	}
	echo writethrough >/sys/block/bcache0/bcache/cache_mode
	echo 0 >/sys/block/bcache0/bcache/sequential_cutoff
	echo 0 >/sys/block/bcache0/bcache/cache/congested_read_threshold_us
	echo 0 >/sys/block/bcache0/bcache/cache/congested_write_threshold_us
}
# The backing device is stopped and gone before its cache set is stopped: with both stopped
# at once, 6.12's cached_dev_free() once met bios still out (a kmem_cache_destroy() WARN in
# bioset_exit(), which panic_on_warn made a panic that ended the bench).
bcache_down() {
	[ ! -e /sys/block/bcache0/bcache/stop ] || echo 1 >/sys/block/bcache0/bcache/stop
	bc_i=0
	while [ -e /sys/block/bcache0 ] && [ $bc_i -lt 100 ]; do
		sleep 0.1
		bc_i=$((bc_i + 1))
	done
	for cs in /sys/fs/bcache/*-*; do [ -e "$cs/stop" ] && echo 1 >"$cs/stop"; done
	while ls -d /sys/fs/bcache/*-* >/dev/null 2>&1 && [ $bc_i -lt 200 ]; do
		sleep 0.1
		bc_i=$((bc_i + 1))
	done
	dd if=/tmp/hddhead of=/dev/mapper/slowhdd bs=128k count=1 oflag=direct conv=fsync 2>/dev/null
	dd if=/dev/zero of=$SSD bs=8k count=1 oflag=direct conv=fsync 2>/dev/null
}

# flaz_table [OPTIONS...]: flaz_bench's table line for vol with these options.
flaz_table() { echo "0 $N flaz $BACKING $SSD $(($# + 2)) seq_cutoff_kib 0 $*"; }

# flaz_bench TABLE NAME WSET_MIB [OPTIONS...]: one row for a fresh flaz volume over BACKING
# (cold: the SSD's saved state from the previous row is ignored) with these table options
# (kept in FB_OPTS for the row's loads). A refused table prints a row saying so rather than
# ending the bench. seq_cutoff_kib 0, as bcache's sequential_cutoff here: the loads warm the
# cache with sequential reads.
flaz_bench() {
	tbl=$1 name=$2 wset=$3
	shift 3
	FB_OPTS=$*
	if ! dmsetup create vol --table "$(flaz_table "$@" cold)" 2>/tmp/create.err; then
		say "$(printf '%-12s' "$name") table refused: $(tail -n 1 /tmp/create.err)"
		return 0
	fi
	bench "$tbl" "$name" /dev/mapper/vol "$wset" flaz_hits
	dmsetup remove vol
}

# The hit ratio as less of the table is resident: flaz-lz4 with a third (flaz-paged), a
# tenth, a sixteenth and a thirtieth of
# its table's bytes as table_cache_kib, after the flaz-lz4 main row that gives the table's
# size (fully resident). The table is paged a table block (508 lines) at a time.
paged_row() {
	pr_tb=$(awk '$1 == "main" && $2 == "flaz-lz4" && $5 + 0 > 0 { print $5 }' $ROWS)
	[ -n "$pr_tb" ] || return 0
	: >/tmp/curve
	for pr_f in 3 10 16 30; do
		pr_name=flaz-paged
		[ $pr_f = 3 ] || pr_name=flaz-1/$pr_f
		pr_kib=$((pr_tb / pr_f / 1024))
		[ $pr_kib -gt 0 ] || pr_kib=1
		PAGE_INS= RESIDENT_KIB=
		flaz_bench main $pr_name $WSET_MIB compressor lz4 table_cache_kib $pr_kib
		echo "$pr_name $pr_f $pr_kib ${PAGE_INS:--} ${RESIDENT_KIB:--}" >>/tmp/curve
	done
	say
	say "table resident vs hit ratio (main set; the table $((pr_tb / 1024)) KiB, fully resident in flaz-lz4)"
	printf '::%-12s %8s %15s %13s %6s %10s\n' config budget table_cache_kib "resident KiB" "hit%" "page-ins/s"
	awk -v run=$RUN_S 'NR == FNR { f[$1] = $2; k[$1] = $3; p[$1] = $4; r[$1] = $5; next }
		$1 == "main" && ($2 == "flaz-lz4" || $2 in f) {
			printf "::%-12s %8s %15s %13s %6s %10s\n", $2, $2 in f ? "1/" f[$2] : "all",
				$2 in f ? k[$2] : "-", $2 in r ? r[$2] : "-", $3,
				($2 in p && p[$2] != "-") ? sprintf("%.1f", p[$2] / run) : "-"
		}' /tmp/curve $ROWS
}

# The table at scale: the sparse 64 GiB SSD (vdh) over the sparse 256 GiB HDD (vdg, behind
# dm-delay), read with the main set's zipf:1.2 over the whole HDD, so the hot blocks spread
# over all of the table's lines and pages, as on an HDD of many TiB (the main set's lines fill
# only 8 pages). The holes read as zeros, which the table keeps as zero entries (no slot):
# the rows differ in the table's residency alone. Each row's budget (table_cache_kib) is the
# table's bytes over 1 (fully resident), 3, 10, 30 and 100, and the default (table_cache_kib 0,
# dram_size). Per row: hit ratio of the measured pass, table
# page-ins and fills skipped (fills past the budget's margin wait for a commit) per second,
# the table's resident MiB after it.
BIG_HDD=/dev/vdg
BIG_SSD=/dev/vdh
big_val() { dmsetup status bv | tr ' ' '\n' | sed -n "s/^$1=//p"; }
scale_section() {
	say
	dmsetup create bighdd --table "0 $(blockdev --getsz $BIG_HDD) delay $BIG_HDD 0 $DELAY_MS"
	sb_n=$(blockdev --getsz $BIG_HDD)
	sb_tbl="0 $sb_n flaz /dev/mapper/bighdd $BIG_SSD"
	dmsetup create bv --table "$sb_tbl 1 cold"
	sb_tb=$(big_val table_bytes)
	dmsetup remove bv
	say "scale: 64 GiB SSD over 256 GiB HDD (sparse), zipf:1.2 4 KiB reads over the whole HDD; table $((sb_tb >> 20)) MiB"
	say "each row: warmed ${WARM_S} s, measured ${RUN_S} s"
	printf '::%-8s %15s %6s %10s %15s %13s\n' budget table_cache_kib "hit%" "page-ins/s" "fills-skipped/s" "resident MiB"
	sb_stops=
	for sb_f in 1 0 3 10 30 100; do
		# 0: the default budget (table_cache_kib 0)
		sb_kib=0
		[ $sb_f = 0 ] || sb_kib=$((sb_tb / sb_f / 1024 + 1))
		dmsetup create bv --table "$sb_tbl 3 table_cache_kib $sb_kib cold"
		zipf_reads /dev/mapper/bv $((sb_n / 2048)) $WARM_S /tmp/warm.terse
		sb_h0=$(big_val read_hits) sb_m0=$(big_val read_misses)
		sb_p0=$(big_val table_page_ins) sb_s0=$(big_val fills_skipped)
		zipf_reads /dev/mapper/bv $((sb_n / 2048)) $RUN_S /tmp/run.terse
		sb_h=$(($(big_val read_hits) - sb_h0)) sb_m=$(($(big_val read_misses) - sb_m0))
		sb_p=$(($(big_val table_page_ins) - sb_p0)) sb_s=$(($(big_val fills_skipped) - sb_s0))
		sb_r=$(big_val table_resident_bytes)
		[ $sb_f != 0 ] || cc_big=$(commit_cost bv /dev/mapper/bv 256G)
		# the kernel's line on this stop's order: the first after those before it
		sb_k=$(dmesg | grep -c 'the reclaim order' || true)
		sb_t0=$(cut -d' ' -f1 /proc/uptime)
		dmsetup remove bv
		sb_t1=$(cut -d' ' -f1 /proc/uptime)
		sb_o=$(dmesg | grep 'the reclaim order' | tail -n +$((sb_k + 1)) | head -n 1 |
			sed 's/.*the reclaim order //' || true)
		case $sb_f in
		0) sb_name=default ;;
		1) sb_name=all ;;
		*) sb_name=1/$sb_f ;;
		esac
		sb_stops="$sb_stops
::  budget $sb_name: dmsetup remove took $(echo "$sb_t0 $sb_t1" | awk '{ printf "%.2f", $2 - $1 }') s; the reclaim order ${sb_o:-: no line}"
		echo "$sb_name $sb_kib $sb_h $sb_m $sb_p $sb_s $sb_r" | awk -v run=$RUN_S '{
			printf "::%-8s %15s %6.1f %10.1f %15.1f %13.1f\n", $1, $2,
				($3 + $4 > 0) ? 100 * $3 / ($3 + $4) : 0, $5 / run, $6 / run, $7 / 1048576 }'
		csv scale "flaz-$sb_name" "$(echo "$sb_h $sb_m" | awk '{ printf "%.1f", ($1 + $2 > 0) ? 100 * $1 / ($1 + $2) : 0 }')"
		[ $sb_f != 1 ] || warm_start "$sb_h" "$sb_m"
	done
	[ -z "${cc_big:-}" ] || say "at the default budget, ${cc_big#::  }"
	say "the clean stop after each row (its commit and the reclaim order's save, issue 33):"
	echo "${sb_stops#?}"
	dmsetup remove bighdd
}

# warm_start HITS MISSES: the volume the fully resident row left on the SSD, created again
# (warm) at the defaults, the same zipf load started at once: the time from dmsetup create
# to the first hit, and to the first second whose hit ratio is 90% of the row's (HITS,
# MISSES) or more; loading is the pages warming still had to read then.
warm_start() {
	ws_goal=$(echo "$1 $2" | awk '{ printf "%d", ($1 + $2 > 0) ? 900 * $1 / ($1 + $2) : 0 }')
	ws_t0=$(cut -d' ' -f1 /proc/uptime)
	dmsetup create bv --table "$sb_tbl 0"
	ws_t1=$(cut -d' ' -f1 /proc/uptime)
	# fio itself in the background (not zipf_reads in a subshell): kill must reach it
	fio --name=warm-start --filename=/dev/mapper/bv --rw=randread --randrepeat=0 --bs=4k \
		--random_distribution=zipf:1.2 --ioengine=libaio --iodepth=8 --direct=1 \
		--time_based --runtime=60 --norandommap --eta=never --minimal \
		--output=/tmp/ws.terse &
	ws_fio=$!
	ws_first=- ws_full=- ws_h=0 ws_m=0 ws_left=-
	while kill -0 $ws_fio 2>/dev/null; do
		sleep 1
		ws_now=$(cut -d' ' -f1 /proc/uptime)
		ws_hn=$(big_val read_hits) ws_mn=$(big_val read_misses)
		[ "$ws_first" != - ] || [ "$ws_hn" -eq 0 ] ||
			{ ws_first=$(echo "$ws_t0 $ws_now" | awk '{ printf "%.1f", $2 - $1 }'); ws_left=$(big_val loading); }
		if [ "$ws_full" = - ] && [ $((ws_hn + ws_mn - ws_h - ws_m)) -gt 0 ] &&
			[ $((1000 * (ws_hn - ws_h) / (ws_hn + ws_mn - ws_h - ws_m))) -ge "$ws_goal" ]; then
			ws_full=$(echo "$ws_t0 $ws_now" | awk '{ printf "%.1f", $2 - $1 }')
			kill $ws_fio 2>/dev/null || true
		fi
		ws_h=$ws_hn ws_m=$ws_mn
	done
	wait $ws_fio || true
	dmsetup remove bv
	say "warm restart at the defaults: dmsetup create took $(echo "$ws_t0 $ws_t1" | awk '{ printf "%.1f", $2 - $1 }') s; first hit after $ws_first s (loading=$ws_left then); hit ratio at 90% of the row's after $ws_full s"
}

# x A B: A / B as "1.23x", or "-" when either is missing or B is 0.
ratio_awk='function x(a, b) { return (a == "-" || b == "-" || b + 0 <= 0) ? "-" : sprintf("%.2fx", a / b) }
function goal(a, b, g) { return (a == "-" || b == "-" || b + 0 <= 0) ? "-" : (a / b >= g ? "met" : "not met") }'

main_ratios() {
	say
	say "main: flaz against dm-cache (goals: hit ratio >= ${GOAL_HIT}x, IOPS >= ${GOAL_IOPS}x) and no cache"
	printf '::%-12s %10s %11s %11s %9s %9s\n' config "hit/dmc" "IOPS/dmc" "IOPS/none" "hit goal" "IOPS goal"
	awk -v gh=$GOAL_HIT -v gi=$GOAL_IOPS "$ratio_awk"'
		$1 != "main" { next }
		$2 == "none" { ni = $4 }
		$2 == "dm-cache" { dh = $3; di = $4 }
		$2 ~ /^flaz/ { n++; name[n] = $2; h[n] = $3; i[n] = $4 }
		END {
			for (k = 1; k <= n; k++)
				printf "::%-12s %10s %11s %11s %9s %9s\n", name[k], x(h[k], dh),
					x(i[k], di), x(i[k], ni), goal(h[k], dh, gh), goal(i[k], di, gi)
		}' $ROWS
}

# The hits table: per load, flaz-lz4 against dm-cache and flaz-off when the set fits.
hits_ratios() {
	say
	say "hits: flaz-lz4 against dm-cache (goal >= 1.0x) and flaz-off (goal >= ${GOAL_FITS}x), set fits"
	awk -v g=$GOAL_FITS "$ratio_awk"'
		$1 !~ /^hits-/ { next }
		{ i[$1 " " $2] = $4; t[$1] = 1 }
		END {
			for (l in t) {
				lz = (l " flaz-lz4") in i ? i[l " flaz-lz4"] : "-"
				dmc = (l " dm-cache") in i ? i[l " dm-cache"] : "-"
				off = (l " flaz-off") in i ? i[l " flaz-off"] : "-"
				printf "::%-14s flaz-lz4 IOPS %s of dm-cache (%s), %s of flaz-off (%s)\n",
					substr(l, 6), x(lz, dmc), goal(lz, dmc, 1), x(lz, off), goal(lz, off, g)
			}
		}' $ROWS
}

# Where a hit's time goes under TCG: the guest CPU time per 4 KiB hit of each config of
# hits-zipf4 (from its CPU s/GiB), beside what lz4's slot checks (header, crc32c) and
# decompression alone take in this kernel (debugfs dm-flaz/codec_costs, same boot). Every
# byte flaz checks and decompresses is emulated; dm-cache's data moves in QEMU's own code.
hit_cpu() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	lz4=$(awk '$1 == "lz4" { for (i = 2; i <= NF; i++) if ($i ~ /^check_decompress_ns=/) {
		sub(/.*=/, "", $i); printf "%.1f", $i / 1000 } }' /sys/kernel/debug/dm-flaz/codec_costs)
	say
	say "hits-zipf4: guest CPU per 4 KiB hit (us), and lz4's checks + decompression alone (codec_costs)"
	awk -v lz4="${lz4:--}" '
		$1 == "hits-zipf4" && $7 != "-" { printf "::%-12s %8.1f\n", $2, $7 * 4096 / 1073741824 * 1e6 }
		END { printf "::%-12s %8s\n", "lz4-alone", lz4 }' $ROWS
}

fits_ratios() {
	say
	say "fits: flaz-lz4 against flaz-off (goal: IOPS within 5%, >= ${GOAL_FITS}x) and no cache"
	awk -v g=$GOAL_FITS "$ratio_awk"'
		$1 != "fits" { next }
		{ i[$2] = $4 }
		END {
			lz = ("flaz-lz4" in i) ? i["flaz-lz4"] : "-"
			off = ("flaz-off" in i) ? i["flaz-off"] : "-"
			none = ("none" in i) ? i["none"] : "-"
			printf "::flaz-lz4 IOPS: %s of flaz-off (goal %s), %s of none; flaz-off: %s of none\n",
				x(lz, off), goal(lz, off, g), x(lz, none), x(off, none)
		}' $ROWS
}

# The logical-to-physical table's DRAM cost, from the flaz-lz4 main row's table_bytes (taken
# after its measured pass, with the cache as full as it gets). Lines: total_extents x blocks
# per extent x overbook / 100. A GiB of a large SSD holds 2^30 / (extent + its metadata)
# extents, so the per-line cost extrapolates to any SSD size.
table_size() {
	say
	say "L2P table (status table_bytes), extent_kib $EXTENT_KIB, overbook $OVERBOOK (defaults)"
	awk -v ssd=$((S * 512)) -v ek=$EXTENT_KIB -v ob=$OVERBOOK \
		-v goal=$GOAL_TABLE_MB_PER_GB -v paper=$PAPER_TABLE_MB_PER_GB '
		$1 == "main" && $2 == "flaz-lz4" { tb = $5; ext = $6 }
		END {
			if (ext == "" || ext == "-" || tb == "" || tb == "-") {
				print "::  no flaz-lz4 status (table refused?): nothing to report"; exit }
			bpe = ek / 4; lines = ext * bpe * ob / 100
			printf "::  bench SSD %d MiB: %d extents (%.1f MiB data), %d lines\n",
				ssd / 1048576, ext, ext * ek / 1024, lines
			if (tb + 0 <= 0) {
				print "::  table_bytes=0: the module does not report its table yet"; exit }
			printf "::  table_bytes %d = %.2f MiB per GiB of SSD (%.2f MB per GB)\n",
				tb, tb / ssd * 1024, tb / ssd * 1000
			bpl = tb / lines
			per_gib = 1073741824 / (ek * 1024 + bpe * ob / 100 * 8) * bpe * ob / 100
			mb = bpl * per_gib / 1073741824 * 1000	# MB of table per GB of SSD
			printf "::  per line %.2f bytes; any SSD (%d lines per GiB): %.2f MiB per GiB (%.2f MB per GB)\n",
				bpl, per_gib, bpl * per_gib / 1048576, mb
			printf "::  all of it resident; a large SSD keeps table_cache_kib of it (the DRAM below); FlaZ paper: %s MB per GB\n",
				paper
		}' $ROWS
}

# What the main read load (fills, and evictions to make room) cost flaz-lz4 in metadata
# writes: an eviction bumps a gen byte instead of rewriting the table blocks of its lines.
fill_cost() {
	say
	say "metadata written under the main read load (flaz-lz4, warm-up and measured pass)"
	[ -s /tmp/fillcost ] || { say "  no flaz-lz4 status: nothing to report"; return 0; }
	awk '{ f = $4 - $1; e = $5 - $2; m = $6 - $3
		printf "::  %d fills, %d lines evicted, %.0f KiB of table, gen and superblocks: %.1f KiB per MiB filled\n",
			f, e, m / 1024, (f > 0 ? m / 1024 / (f * 4 / 1024) : 0) }' /tmp/fillcost
}

# All of flaz's metadata DRAM (dram_bytes, saved by the flaz-lz4 main row), per GiB of the
# bench SSD, and extrapolated to a 1 TiB SSD over a 10 TiB HDD at the defaults: the table's
# resident pages (the smaller of l2p.c's entries for that geometry and the default
# table_cache_kib), the heat and page state, PER_EXTENT_BYTES per extent, and what is left of
# the bench figure as a fixed part (the bench's table fits its budget: all of it resident).
dram_size() {
	say
	say "DRAM for metadata (status dram_bytes), extent_kib $EXTENT_KIB, overbook $OVERBOOK"
	[ -s /tmp/dram ] || { say "  no flaz-lz4 status: nothing to report"; return 0; }
	awk -v ssd=$((S * 512)) -v ek=$EXTENT_KIB -v ob=$OVERBOOK -v pe=$PER_EXTENT_BYTES \
		-v lenb=$L2P_LEN_BITS -v heat=$L2P_LINE_BITS -v maxtag=$L2P_MAX_TAG_BITS -v goal=$GOAL_TABLE_MB_PER_GB \
		-v paper=$PAPER_TABLE_MB_PER_GB -v pl=$L2P_PAGE_LINES -v pb=$L2P_PAGE_BYTES \
		-v budget=$TABLE_CACHE_PER_GIB '
		function bits(v) { b = 1; while (v >= 2) { v /= 2; b++ } return b }
		{ dram = $1; tb = $2; ext = $3 }
		END {
			fixed = dram - tb - pe * ext
			printf "::  bench SSD %d MiB: dram_bytes %d (table %d, %d extents, fixed %d): %.2f MiB per GiB\n",
				ssd / 1048576, dram, tb, ext, fixed, dram / ssd * 1024
			tssd = 1099511627776; thdd = 10 * tssd	# busybox awk has no ^
			e = tssd / (ek * 1024); lines = e * ek / 4 * ob / 100
			tag = bits((thdd / 4096 - 1) / lines); if (tag > maxtag) tag = maxtag
			gen = 64 - 8 - bits(ek * 1024 / 32 - 1) - bits(e - 1) - 1 - 4
			if (gen > 16) gen = 16
			w = lenb + bits(ek * 1024 / 32 - 1) + bits(e - 1) + tag + gen
			table = lines * w / 8; cache = budget * 1024 * 9 / 8
			held = table < cache ? table : cache
			total = held + lines * heat / 8 + lines / pl * pb + lines / 508 / 8 + pe * e + fixed
			printf "::  1 TiB SSD over 10 TiB HDD: %d lines of %d bits (%.0f MiB of table, %.0f MiB resident at most) + %d extents: %.2f MB per GB of SSD\n",
				lines, w, table / 1048576, held / 1048576, e, total / tssd * 1000
			printf "::  target <= %s MB per GB: %s; FlaZ paper: %s MB per GB\n", goal,
				total / tssd * 1000 <= goal ? "met" : "not met", paper
		}' /tmp/dram
}

# fio_writes DEV OUT: 4 KiB random writes over 64 MiB of DEV, an fsync after each, for
# WRITE_S seconds; terse output to OUT.
fio_writes() {
	fio --name=w --filename="$1" --size=64M --rw=randwrite --bs=4k --ioengine=psync \
		--fsync=1 --direct=1 --refill_buffers --buffer_compress_percentage=50 \
		--time_based --runtime=$WRITE_S --eta=never --minimal --output="$2"
}

# The write clat percentile $2 of terse file $1 (the second list: reads come first).
wpct() { tr ';' '\n' <"$1" | sed -n "s/^$2\.000000%=//p" | sed -n 2p; }

# PostMark on a fresh ext4 on DEV, then a sync: prints the seconds it took (PostMark's own
# figures are in whole seconds, too coarse here).
postmark_secs() {
	mkfs.ext4 -q -F "$1" && mount -t ext4 "$1" /mnt || return 1
	printf '%s\n' "set location /mnt" "set number 1000" "set transactions 3000" \
		"set size 512 16384" "set buffering false" "run" "quit" >/tmp/pm.cfg
	pm0=$(cut -d' ' -f1 /proc/uptime)
	postmark /tmp/pm.cfg >/tmp/pm.out 2>&1 && sync
	pm1=$(cut -d' ' -f1 /proc/uptime)
	umount /mnt
	grep -q 'seconds total' /tmp/pm.out && echo "$pm0 $pm1" | awk '{ printf "%.2f", $2 - $1 }'
}

# where_time BEFORE AFTER: where flaz's write time went during the fio run, from two status
# lines: writes held for their write-intent mark and for how long, the superblock writes for
# marks, and the commits (in the background: they cost the writes only the device time).
where_time() {
	for f in "$1" "$2"; do
		for k in writes marks mark_waits mark_wait_us commits commit_us; do
			tr ' ' '\n' <"$f" | sed -n "s/^$k=//p"
		done | tr '\n' ' '
		echo
	done | awk -v s=$WRITE_S 'NR == 1 { split($0, a) } NR == 2 { split($0, b)
		w = b[1] - a[1]; mk = b[2] - a[2]; mw = b[3] - a[3]; mus = b[4] - a[4]; c = b[5] - a[5]; cus = b[6] - a[6]
		printf "::  flaz-lz4 write time: %d of %d writes waited for a mark (%.0f us each on average, %.1f%% of the run), %d mark superblocks; %d commits took %.0f ms in all (%.1f%% of the run, in the background)\n",
			mw, w, mw ? mus / mw : 0, mus / (s * 10000), mk, c, cus / 1000, cus / (s * 10000) }'
}

wrow() { printf '::%-12s %10s %9s %9s %12s %9s %12s\n' "$@"; }

# write_bench NAME DEV: one row of the writes table (flaz's metadata columns from vol's status).
write_bench() {
	wb_name=$1 wb_dev=$2
	meta0=- meta1=- com0=- com1=- w0=- w1=-
	if [ "$wb_name" = flaz-lz4 ]; then
		dmsetup status vol >/tmp/status
		cp /tmp/status /tmp/status.0
		com0=$(flaz_val commits) meta0=$(flaz_val meta_bytes)
	fi
	fio_writes "$wb_dev" /tmp/w.terse
	wiops=$(cut -d';' -f49 /tmp/w.terse)
	wkib=$(cut -d';' -f47 /tmp/w.terse)
	if [ "$wb_name" = flaz-lz4 ]; then
		dmsetup status vol >/tmp/status
		com1=$(flaz_val commits) meta1=$(flaz_val meta_bytes)
		cp /tmp/status /tmp/status.1
	fi
	pms=$(postmark_secs "$wb_dev" || true)
	cps=$(echo "$com0 $com1" | awk '$1 != "-" { printf "%.1f", ($2 - $1) / '$WRITE_S' }')
	mpm=$(echo "$meta0 $meta1 $wkib" | awk '$1 != "-" && $3 > 0 { printf "%.0f", ($2 - $1) / ($3 / 1024) }')
	wp50=$(wpct /tmp/w.terse 50) wp99=$(wpct /tmp/w.terse 99)
	wrow "$wb_name" "$wiops" "$wp50" "$wp99" "${pms:--}" "${cps:--}" "${mpm:--}"
	[ "$wb_name" != flaz-lz4 ] || where_time /tmp/status.0 /tmp/status.1
	csv write "$wb_name" - "$wiops" "$wp50" "$wp99" - - - "${pms:--}"
	echo "write $wb_name $wiops ${pms:--}" >>$ROWS
}

write_ratios() {
	say
	say "writes against the bare HDD (goal >= ${GOAL_WRITE}x on both)"
	awk -v g=$GOAL_WRITE "$ratio_awk"'
		$1 != "write" { next }
		$2 == "none" { ni = $3; nt = $4 }
		$2 != "none" { n++; name[n] = $2; i[n] = $3; t[n] = $4 }
		END {
			for (k = 1; k <= n; k++)
				printf "::%-12s fio IOPS %s (%s), PostMark speed %s (%s)\n", name[k],
					x(i[k], ni), goal(i[k], ni, g), x(nt, t[k]), goal(nt, t[k], g)
		}' $ROWS
}

nbd_ratios() {
	say
	say "nbd: against no cache and dm-cache on the same network volume"
	awk "$ratio_awk"'
		$1 != "nbd" { next }
		{ h[$2] = $3; i[$2] = $4 }
		END {
			f = ("flaz-lz4" in i) ? i["flaz-lz4"] : "-"
			printf "::flaz-lz4 IOPS: %s of none, %s of dm-cache; hit ratio %s of dm-cache\n",
				x(f, i["none"]), x(f, i["dm-cache"]), x(h["flaz-lz4"], h["dm-cache"])
		}' $ROWS
}

# The main read load with the HDD served over the network: nbd-server exports the whole HDD
# on the guest's loopback (flush and FUA passed on), /dev/nbd0 is the kernel's client (I/O
# timeout 30 s), and dm-delay adds the same DELAY_MS. The write rows put ext4 on the HDD, so
# the working set is written again first.
nbd_section() {
	header "nbd: working set ${WSET_MIB} MiB, the HDD an NBD device (loopback) + dm-delay ${DELAY_MS} ms"
	fio --name=fill --filename=$HDD --rw=write --bs=1M --size=${WSET_MIB}M --direct=1 \
		--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
	printf '[generic]\n\tlistenaddr = 127.0.0.1\n\tport = 10809\n[hdd]\n\texportname = %s\n\tflush = true\n\tfua = true\n' \
		$HDD >/tmp/nbd.conf
	if ! { ifconfig lo 127.0.0.1 up && modprobe nbd && nbd-server -C /tmp/nbd.conf >/tmp/nbd.out 2>&1; }; then
		say "nbd: nbd-server did not start: $(tail -n 1 /tmp/nbd.out)"
		return 0
	fi
	nb_i=0
	until nbd-client -N hdd -t 30 127.0.0.1 10809 /dev/nbd0 >>/tmp/nbd.out 2>&1; do
		nb_i=$((nb_i + 1))
		[ $nb_i -lt 50 ] || { say "nbd: nbd-client could not connect: $(tail -n 1 /tmp/nbd.out)"; return 0; }
		sleep 0.2
	done
	dmsetup create nbdslow --table "0 $N delay /dev/nbd0 0 $DELAY_MS"
	BACKING=/dev/mapper/nbdslow
	bench nbd none $BACKING $WSET_MIB no_hits
	dmcache_up $BACKING
	bench nbd dm-cache /dev/mapper/cached $WSET_MIB dmcache_hits
	dmcache_down
	flaz_bench nbd flaz-lz4 $WSET_MIB compressor lz4
	dmsetup remove nbdslow
	nbd-client -d /dev/nbd0 >/dev/null 2>&1
	nbd_ratios
}

# ---- The cleaner: what eviction keeps. Per load: dm-cache, flaz-lz4 with whole-extent FIFO
# eviction (cleaner_rate_mib 0), flaz-lz4 with the cleaner, and an ideal LRU of flaz's
# compressed capacity simulated from the cleaner row's own I/O trace (fio --write_iolog).
# flaz runs with overbook 400 here: lines for the whole 512 MiB HDD, so no two blocks share a
# line and what is lost is lost to eviction alone (the direct-mapped table's conflicts are
# the main table's business).
CLEAN_OPTS="compressor lz4 overbook 400 seq_cutoff_kib 0"
# the same with the default seq_cutoff_kib (4 MiB): the rows that show what the cutoff does
SEQ_OPTS="compressor lz4 overbook 400"

# lru_sim CAP PRE [cnt=0|1 FILE...]: hit % of an LRU cache of CAP 4 KiB blocks that first
# reads blocks 0..PRE-1 in order, then the reads of fio iologs ("[TIME] FILE read OFFSET
# LENGTH") in order; only files after cnt=1 count. With SIM_FIFO=1, a FIFO cache instead
# (a hit leaves the block where it is).
lru_sim() {
	lru_cap=$1 lru_pre=$2
	shift 2
	awk -v cap="$lru_cap" -v pre="$lru_pre" -v fifo="${SIM_FIFO:-0}" '
		function unlink(b) { nx[pv[b]] = nx[b]; pv[nx[b]] = pv[b] }
		function access(b,  t) {
			if (b in nx) { if (cnt) hit++; if (fifo) return; unlink(b) }
			else { if (cnt) miss++; n++ }
			nx[b] = nx[-1]; pv[b] = -1; pv[nx[-1]] = b; nx[-1] = b
			if (n > cap) { t = pv[-1]; unlink(t); delete nx[t]; delete pv[t]; n-- }
		}
		BEGIN { nx[-1] = -1; pv[-1] = -1; for (b = 0; b < pre; b++) access(b) }
		{ f = $2 == "read" ? 3 : $3 == "read" ? 4 : 0 }
		f { for (b = int($f / 4096); b <= int(($f + $(f + 1) - 1) / 4096); b++) access(b) }
		END { if (hit + miss) printf "%.1f", 100 * hit / (hit + miss); else printf "-" }' "$@"
}

# lru_cap: blocks flaz's SSD data area holds at the ratio of its last row (/tmp/status).
lru_cap() {
	awk -v ext="$(flaz_val total_extents)" -v ek=$EXTENT_KIB -v r="$(flaz_val ratio)" \
		'BEGIN { if (r + 0 <= 0) r = 1; printf "%d", ext * ek / 4 * r }'
}

# held_cap: blocks flaz's last row held at its end (/tmp/status: logical bytes), below
# lru_cap by the free extents the watermarks keep, slot headers and extents' unused tails.
held_cap() { echo $(($(flaz_val logical_bytes) / 4096)); }

# lru_rows TABLE PRE FILES...: the simulated caches' rows: lru-ideal with flaz's capacity
# (lru_cap), lru-held and fifo-held with what flaz-clean held (held_cap; /tmp/status is its
# status): the gap between the last two is what a policy can win at that capacity.
lru_rows() {
	lr_tbl=$1
	shift
	for lr_name in lru-ideal lru-held fifo-held; do
		if [ $lr_name = lru-ideal ]; then lr_cap=$(lru_cap); else lr_cap=$(held_cap); fi
		lr_fifo=0
		[ $lr_name != fifo-held ] || lr_fifo=1
		lr_hit=$(SIM_FIFO=$lr_fifo lru_sim "$lr_cap" "$@")
		row $lr_name "$lr_hit" - - - - - "$((lr_cap * 4 / 1024))"
		csv "$lr_tbl" $lr_name "$lr_hit" - - - - - "$((lr_cap * 4 / 1024))" -
		echo "$lr_tbl $lr_name $lr_hit - - -" >>$ROWS
	done
}

# HOTSCAN_ROUNDS rounds of: one random pass over a hot 16 MiB, then the next 32 MiB of a
# sequential scan from 128 MiB on (3x the SSD in all, read once).
HOTSCAN_ROUNDS=12
# hotscan TABLE NAME DEV HITS_CMD: the hit % of the hot passes of rounds 2 on (the first
# fills the cache) and their mean IOPS; traces in /tmp/hs.N.hot and /tmp/hs.N.scan.
hotscan() {
	hs_tbl=$1 hs_name=$2 hs_dev=$3 hs_cmd=$4
	sync
	echo 3 >/proc/sys/vm/drop_caches
	hs_h=0 hs_m=0 hs_iops=0
	for hs_r in $(seq 1 $HOTSCAN_ROUNDS); do
		hs_0=$($hs_cmd)
		fio --name=hot --filename="$hs_dev" --size=16M --rw=randread --randrepeat=0 --bs=4k \
			--ioengine=libaio --iodepth=8 --direct=1 --eta=never --minimal --output=/tmp/hs.terse \
			--write_iolog=/tmp/hs.$hs_r.hot
		hs_1=$($hs_cmd)
		fio --name=scan --filename="$hs_dev" --offset=$((128 + 32 * (hs_r - 1)))M --size=32M \
			--rw=read --bs=64k --ioengine=libaio --iodepth=8 --direct=1 --eta=never \
			--output=/dev/null --write_iolog=/tmp/hs.$hs_r.scan
		[ "$hs_r" -gt 1 ] || continue
		set -- $hs_0 $hs_1
		[ $# -eq 4 ] && { hs_h=$((hs_h + $3 - $1)); hs_m=$((hs_m + $4 - $2)); }
		hs_iops=$((hs_iops + $(cut -d';' -f8 /tmp/hs.terse)))
	done
	hs_hit=$(echo "$hs_h $hs_m" | awk '$1 + $2 > 0 { printf "%.1f", 100 * $1 / ($1 + $2); exit } { printf "-" }')
	hs_iops=$((hs_iops / (HOTSCAN_ROUNDS - 1)))
	row "$hs_name" "$hs_hit" "$hs_iops" - - - - -
	csv "$hs_tbl" "$hs_name" "$hs_hit" "$hs_iops" - - - - - -
	echo "$hs_tbl $hs_name $hs_hit $hs_iops - -" >>$ROWS
}

# rscan NAME DEV HITS_CMD: issue 33's case that no sequential bypass helps: a hot 16 MiB read
# three times at random, one pass at random (4 KiB reads, each block once) over 384 MiB from
# 128 MiB on (3x the SSD), then the hot 16 MiB once more: the hit % of that last read.
rscan() {
	rs_name=$1 rs_dev=$2 rs_cmd=$3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for _ in 1 2 3; do
		fio --name=hot --filename="$rs_dev" --size=16M --rw=randread --bs=4k \
			--ioengine=libaio --iodepth=8 --direct=1 --eta=never --output=/dev/null
	done
	fio --name=scan --filename="$rs_dev" --offset=128M --size=384M --rw=randread --bs=4k \
		--randrepeat=0 --ioengine=libaio --iodepth=8 --direct=1 --eta=never --output=/dev/null
	rs_0=$($rs_cmd)
	fio --name=hot --filename="$rs_dev" --size=16M --rw=randread --bs=4k --ioengine=libaio \
		--iodepth=8 --direct=1 --eta=never --output=/dev/null
	rs_1=$($rs_cmd)
	set -- $rs_0 $rs_1
	rs_hit=-
	[ $# -eq 4 ] && rs_hit=$(echo "$(($3 - $1)) $(($4 - $2))" |
		awk '$1 + $2 > 0 { printf "%.1f", 100 * $1 / ($1 + $2); exit } { printf "-" }')
	row "$rs_name" "$rs_hit" - - - - - -
	csv clean-rscan "$rs_name" "$rs_hit" - - - - - - -
	echo "clean-rscan $rs_name $rs_hit - - -" >>$ROWS
}

# rscan_flaz NAME OPTIONS...: rscan on a fresh flaz-lz4 volume.
rscan_flaz() {
	rf_name=$1
	shift
	dmsetup create vol --table "0 $N flaz $BACKING $SSD $(($# + 1)) $* cold"
	rscan "$rf_name" /dev/mapper/vol flaz_hits
	dmsetup remove vol
}

# hotscan_flaz NAME OPTIONS...: hotscan on a fresh flaz-lz4 volume.
hotscan_flaz() {
	hf_name=$1
	shift
	dmsetup create vol --table "0 $N flaz $BACKING $SSD $(($# + 1)) $* cold"
	hotscan clean-hotscan "$hf_name" /dev/mapper/vol flaz_hits
	dmsetup status vol >/tmp/status
	dmsetup remove vol
}

# fg_row NAME SCAN OPTIONS...: the foreground's cost of cleaning. On a fresh flaz-lz4 volume
# with OPTIONS, zipf reads over a hot 16 MiB (warmed first) for RUN_S seconds, with SCAN=1
# while a sequential read of 384 MiB of cold data runs beside them, whose fills keep the
# cleaner (or FIFO eviction) busy; one row of IOPS and latency.
fg_row() {
	fg_name=$1 fg_scan=$2
	shift 2
	dmsetup create vol --table "0 $N flaz $BACKING $SSD $(($# + 1)) $* cold"
	dd if=/dev/mapper/vol of=/dev/null bs=1M count=16 iflag=direct 2>/dev/null
	dd if=/dev/mapper/vol of=/dev/null bs=1M count=16 iflag=direct 2>/dev/null
	# FG_CUTOFF: the seq_cutoff_kib to measure with, once the hot set is warm
	[ -z "${FG_CUTOFF:-}" ] || dmsetup message vol 0 seq_cutoff_kib "$FG_CUTOFF"
	fg_pid=
	if [ "$fg_scan" = 1 ]; then
		fio --name=scan --filename=/dev/mapper/vol --offset=128M --size=384M --rw=read \
			--bs=64k --ioengine=libaio --iodepth=4 --direct=1 --time_based \
			--runtime=$((RUN_S + 10)) --eta=never --output=/dev/null &
		fg_pid=$!
		sleep 3
	fi
	dmsetup status vol >/tmp/status
	fg_c0=$(flaz_val extents_cleaned) fg_e0=$(flaz_val evictions)
	zipf_reads /dev/mapper/vol 16 $RUN_S /tmp/fg.terse
	dmsetup status vol >/tmp/status
	fg_c1=$(flaz_val extents_cleaned) fg_e1=$(flaz_val evictions)
	[ -z "$fg_pid" ] || wait $fg_pid
	dmsetup remove vol
	fg_iops=$(cut -d';' -f8 /tmp/fg.terse)
	row "$fg_name" - "$fg_iops" "$(pct /tmp/fg.terse 50)" "$(pct /tmp/fg.terse 99)" - - -
	csv clean-fg "$fg_name" - "$fg_iops" "$(pct /tmp/fg.terse 50)" "$(pct /tmp/fg.terse 99)" - - - -
	echo "clean-fg $fg_name - $fg_iops - -" >>$ROWS
	say "  $fg_name: $((fg_c1 - fg_c0)) extents cleaned, $((fg_e1 - fg_e0)) blocks evicted while measured"
}

# The foreground's loss to cleaning: IOPS beside the scan with the cleaner against the same
# with FIFO eviction (goal: at most 10% lower), and against no scan at all.
fg_ratios() {
	awk "$ratio_awk"'
		$1 != "clean-fg" { next }
		{ i[$2] = $4 }
		END {
			printf "::  with the cleaner busy: %s of the IOPS with FIFO eviction busy (goal >= 0.90x: %s), %s of idle\n",
				x(i["scan-clean"], i["scan-fifo"]), goal(i["scan-clean"], i["scan-fifo"], 0.9),
				x(i["scan-clean"], i["idle"])
			printf "::  with the scan bypassing (seq_cutoff_kib 4096, the default): %s of idle\n",
				x(i["scan-seq"], i["idle"])
		}' $ROWS
}

# Per load: the cleaner's share of the gap between FIFO eviction and the ideal LRU (goal
# >= 80%), and the same against the LRU of what flaz-clean held (the policy's part of the
# gap, without the capacity the watermarks keep free); flaz's hit ratio against dm-cache's
# where that is below 50% (goal >= 1.8x).
cleaner_ratios() {
	say
	say "cleaner: share of the FIFO-to-LRU hit gap it closes (goal >= 80%), [against lru-held]; hit/dm-cache where dm-cache < 50% (goal >= ${GOAL_HIT}x)"
	awk -v gh=$GOAL_HIT "$ratio_awk"'
		function gap(f, c, u) {
			if (f == "" || c == "" || u == "" || f == "-" || c == "-" || u == "-")
				return "-"
			if (u - f <= 0)
				return "no gap"
			return sprintf("%.0f%%", 100 * (c - f) / (u - f))
		}
		$1 !~ /^clean-/ { next }
		{ h[$1 " " $2] = $3; t[$1] = 1 }
		END {
			for (l in t) {
				f = h[l " flaz-fifo"]; c = h[l " flaz-clean"]; u = h[l " lru-ideal"]
				d = h[l " dm-cache"]
				g = gap(f, c, u)
				if (g ~ /%$/)
					g = g sprintf(" (%s)", (c - f) / (u - f) >= 0.8 ? "met" : "not met")
				vs = (d == "" || d == "-" || d + 0 >= 50) ? "dm-cache >= 50%: no goal" : \
					sprintf("%s (%s)", x(c, d), goal(c, d, gh))
				printf "::%-16s gap closed %s [%s], without admission (flaz-onelog) %s; hit/dm-cache %s\n",
					substr(l, 7), g, gap(f, c, h[l " lru-held"]), gap(f, h[l " flaz-onelog"], u), vs
			}
		}' $ROWS
}

# The cleaner's zipf loads: less skewed than the main table's, after a sequential read of the
# whole set (so the cache starts full and eviction decides what is kept from the first read).
# Every row of a table replays the same reads, drawn once by zipf09_trace, so that the caches
# and the simulated LRU differ in their policy only, not in the draw or in how many reads
# their speed let in: ZIPF_WARM reads to warm up (/tmp/zipf.warm), then ZIPF_RUN measured
# (/tmp/zipf.run).
ZIPF_WARM=60000
ZIPF_RUN=60000
# zipf09_trace MIB: draw the reads over the first MIB MiB with fio's null engine (no I/O).
zipf09_trace() {
	fio --name=zipf09 --ioengine=null --filename=trace --size="$1M" --rw=randread \
		--randrepeat=0 --bs=4k --random_distribution=zipf:0.9 --norandommap \
		--number_ios=$((ZIPF_WARM + ZIPF_RUN)) --write_iolog=/tmp/zipf.all --output=/dev/null
	# the log's header and its open and close lines go to both parts
	awk -v w=$ZIPF_WARM '$3 != "read" { print >"/tmp/zipf.warm"; print >"/tmp/zipf.run"; next }
		{ print >(++n <= w ? "/tmp/zipf.warm" : "/tmp/zipf.run") }' /tmp/zipf.all
}
# replay DEV IOLOG OUT: IOLOG's reads on DEV, as fast as they complete, terse output to OUT.
replay() {
	fio --name=replay --read_iolog="$2" --replay_redirect="$1" --replay_no_stall=1 \
		--ioengine=libaio --iodepth=8 --direct=1 --eta=never --minimal --output="$3"
}
# bench's loads (DEV WSET_MIB SECONDS OUT; the trace sets the set and the length)
prefilled_zipf09_warm() {
	dd if="$1" of=/dev/null bs=1M count="$2" iflag=direct 2>/dev/null
	replay "$1" /tmp/zipf.warm "$4"
}
zipf09_run() { replay "$1" /tmp/zipf.run "$4"; }

# clean_work NAME: what eviction did over flaz row NAME (warm-up and measured pass), from
# its status after it: fills made and skipped, blocks evicted, slots moved and dropped by the
# cleaner, extents it cleaned.
clean_work() {
	say "  $1: fills $(flaz_val fills), fills_skipped $(flaz_val fills_skipped) ($(echo "$(flaz_val fills_skipped) $(flaz_val fills)" | awk '{ printf "%.2f", $2 ? 100 * $1 / $2 : 0 }')% of fills; space $(flaz_val skipped_space), busy $(flaz_val skipped_busy), memory $(flaz_val skipped_memory), table $(flaz_val skipped_table), hot $(flaz_val skipped_hot)), evictions $(flaz_val evictions), slots_moved $(flaz_val slots_moved), slots_dropped $(flaz_val slots_dropped), slots_promoted $(flaz_val slots_promoted), ghost_hits $(flaz_val ghost_hits), extents_cleaned $(flaz_val extents_cleaned)"
}

# The SSD's sectors written so far (its block device's stat, whatever wrote them).
ssd_wsect() { awk '{ print $7 }' "/sys/block/${SSD#/dev/}/stat"; }
# ssd_written NAME SECTORS_BEFORE MIB_READ: what a row wrote to the SSD, per GiB it read.
ssd_written() {
	echo "$2 $(ssd_wsect) $3" | awk -v n="$1" '{ w = ($2 - $1) / 2048
		printf "::  %s: %.0f MiB written to the SSD, %.0f MiB per GiB read\n", n, w, w * 1024 / $3 }'
}

# clean_zipf TABLE MIB [WHAT]: one table of the zipf:0.9 load over the HDD's first MIB MiB
# (WHAT, e.g. " of text", says what they hold when it is not the 2:1 data): dm-cache,
# flaz-fifo (no cleaner), flaz-onelog (the cleaner without admission: probation_percent 0),
# flaz-clean (the defaults), and the LRU and FIFO simulated over the same reads.
clean_zipf() {
	cz_tbl=$1 cz_mib=$2
	header "$cz_tbl: zipf:0.9 reads over ${cz_mib} MiB${3:-} ($((cz_mib / 128))x the SSD), the same $ZIPF_WARM + $ZIPF_RUN for each"
	zipf09_trace "$cz_mib"
	WARM_LOAD=prefilled_zipf09_warm RUN_LOAD=zipf09_run
	# each row reads the set once in order, then the trace's 4 KiB reads
	cz_read=$((cz_mib + (ZIPF_WARM + ZIPF_RUN) / 256))
	cz_w=$(ssd_wsect)
	dmcache_up $BACKING
	bench "$cz_tbl" dm-cache /dev/mapper/cached "$cz_mib" dmcache_hits
	dmcache_down
	ssd_written dm-cache "$cz_w" $cz_read
	cz_w=$(ssd_wsect)
	# SEQ_OPTS: flaz_bench gives seq_cutoff_kib 0 itself (CLEAN_OPTS' would be refused twice)
	# shellcheck disable=SC2086 # a list of options
	flaz_bench "$cz_tbl" flaz-fifo "$cz_mib" $SEQ_OPTS cleaner_rate_mib 0
	clean_work flaz-fifo
	ssd_written flaz-fifo "$cz_w" $cz_read
	cz_w=$(ssd_wsect)
	# shellcheck disable=SC2086
	flaz_bench "$cz_tbl" flaz-onelog "$cz_mib" $SEQ_OPTS probation_percent 0
	clean_work flaz-onelog
	ssd_written flaz-onelog "$cz_w" $cz_read
	cz_w=$(ssd_wsect)
	# shellcheck disable=SC2086
	flaz_bench "$cz_tbl" flaz-clean "$cz_mib" $SEQ_OPTS
	clean_work flaz-clean
	ssd_written flaz-clean "$cz_w" $cz_read
	WARM_LOAD=zipf_reads RUN_LOAD=zipf_reads
	lru_rows "$cz_tbl" $((cz_mib * 256)) cnt=0 /tmp/zipf.warm cnt=1 /tmp/zipf.run
}

# The cleaner's zipf loads across a restart: flaz-clean as in clean_zipf, and flaz-restart,
# the same volume stopped after the warm-up and activated again (its table kept, the queues'
# order and the lines' heat not: design.md, "After a restart") before the measured pass;
# its clean_work line counts that pass only (the counters start at the activation).
restart_warm() {
	prefilled_zipf09_warm "$@"
	dmsetup remove vol
	# the row's table without cold: a warm activation
	# shellcheck disable=SC2086 # a list of options
	dmsetup create vol --table "$(flaz_table $FB_OPTS)"
}
restart_section() {
	hdd_fill_rest
	for rs_mib in $WSET_MIB $((2 * WSET_MIB)); do
		header "restart-zipf$((rs_mib / 128))x: zipf:0.9 reads over ${rs_mib} MiB, the same $ZIPF_WARM + $ZIPF_RUN for each; flaz-restart stopped and activated warm between them"
		zipf09_trace "$rs_mib"
		WARM_LOAD=prefilled_zipf09_warm RUN_LOAD=zipf09_run
		# shellcheck disable=SC2086
		flaz_bench restart-zipf$((rs_mib / 128))x flaz-clean "$rs_mib" $SEQ_OPTS
		clean_work flaz-clean
		WARM_LOAD=restart_warm
		# shellcheck disable=SC2086
		flaz_bench restart-zipf$((rs_mib / 128))x flaz-restart "$rs_mib" $SEQ_OPTS
		clean_work flaz-restart
		WARM_LOAD=zipf_reads RUN_LOAD=zipf_reads
	done
}

# hdd_fill21 MIB: 2:1 compressible data (fio's buffers) over the HDD's first MIB MiB.
hdd_fill21() {
	fio --name=fill --filename=$HDD --rw=write --bs=1M --size="$1M" --direct=1 \
		--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
}

# text_fill MIB: real text over the HDD's first MIB MiB: the corpus's files (plain text,
# 24 MiB) concatenated, over and over. Once dd has its MIB, the next cat fails on the
# closed pipe and find with it, which ends the loop (64 rounds at most).
text_fill() {
	tf_n=0
	while [ $tf_n -lt 64 ] && find /corpus/files -type f -exec cat {} +; do
		tf_n=$((tf_n + 1))
	done 2>/dev/null | dd of=$HDD bs=1M count="$1" iflag=fullblock oflag=direct 2>/dev/null
}

# flaz_settle: wait, 60 s at most, until vol's fills, cached blocks, slot bytes and cleaned
# extents stay the same over two 0.5 s samples in a row (installs and the cleaner's passes
# run in the background).
flaz_settle() {
	fs_prev='' fs_same=0 fs_i=0
	while [ $fs_same -lt 2 ] && [ $fs_i -lt 120 ]; do
		sleep 0.5
		fs_cur=$(dmsetup status vol | tr ' ' '\n' |
			grep -E '^(fills|blocks_cached|physical_bytes|extents_cleaned)=' | tr '\n' ' ')
		if [ "$fs_cur" = "$fs_prev" ]; then fs_same=$((fs_same + 1)); else fs_same=0; fi
		fs_prev=$fs_cur fs_i=$((fs_i + 1))
	done
}

# The cold codec's gain on text: the hot half of COLD_MIB MiB of it on a fresh lz4 volume
# over a COLD_SLICE_MIB MiB slice of the SSD, once moved by the cleaner; with compressor lz4
# alone, and with cold_compressor zstd, which recompresses what the cleaner moves.
COLD_MIB=8
COLD_FILLER_MIB=12
COLD_SLICE_MIB=32
crow() { printf '::%-12s %6s %14s %11s %12s %11s %13s %13s\n' "$@"; }

# cold_used: extents in use on vol (from /tmp/status).
cold_used() { echo $(($(flaz_val total_extents) - $(flaz_val free_extents))); }

# cold_vol NAME [OPTIONS...]: one clean-cold row, on a fresh volume with 16 KiB extents and
# overbook 1000 (as in the e2e cleaner checks: no two blocks share a line). The text is read
# (fills), every other 64 KiB of it again (hits: the hot half, heat 1), then the filler,
# COLD_FILLER_MIB MiB more text read once: their extents are the oldest, in that order. One
# more fill starts the cleaner, which takes the oldest extents a pass at a time, moves their
# hot slots (recompressed with the cold codec, if any) and drops the rest, and stops at a
# low_watermark set to what it has freed after the whole text (its cold half, half of its
# extents; zstd under 2x lz4 frees less than another quarter from the hot half) and 64 of
# the filler's extents. Half hot, as a pass must free a quarter of its victims and drops the
# smallest slots that do not fit, which would skew the bytes per block; the filler, so the
# pass that ends the text takes filler, not the moved slots (heat 0 by then: dropped). What
# is left of the filler is then written with zeros through the volume: a zero block is a
# flag without a slot, in blocks_cached but not in logical or physical bytes, so the hot
# half alone is left (blocks = logical_bytes / 4096). The text goes onto the HDD anew first:
# the volume before zeroed the filler.
cold_vol() {
	cv_name=$1
	shift
	text_fill $((COLD_MIB + COLD_FILLER_MIB + 1))
	dmsetup create cslice --table "0 $((COLD_SLICE_MIB * 2048)) linear $SSD 0"
	# seq_cutoff_kib 0: the text and the filler are read in order, and must fill
	if ! dmsetup create vol --table "0 $N flaz $BACKING /dev/mapper/cslice $(($# + 11)) compressor lz4 extent_kib 16 overbook 1000 cleaner_rate_mib 65536 seq_cutoff_kib 0 $* cold" \
		2>/tmp/create.err; then
		say "$(printf '%-12s' "$cv_name") table refused: $(tail -n 1 /tmp/create.err)"
		dmsetup remove cslice
		return 0
	fi
	dd if=/dev/mapper/vol of=/dev/null bs=1M count=$COLD_MIB iflag=direct 2>/dev/null
	flaz_settle
	fio --name=hot --filename=/dev/mapper/vol --rw=read:64k --bs=64k --size=${COLD_MIB}M \
		--io_size=$((COLD_MIB * 512))k --direct=1 --eta=never --output=/dev/null
	flaz_settle
	dmsetup status vol >/tmp/status
	cv_text=$(cold_used)
	dd if=/dev/mapper/vol of=/dev/null bs=1M skip=$COLD_MIB count=$COLD_FILLER_MIB iflag=direct 2>/dev/null
	flaz_settle
	dmsetup status vol >/tmp/status
	cv_filler=$(($(cold_used) - cv_text))
	cv_low=$(awk -v f="$(flaz_val free_extents)" -v t="$(flaz_val total_extents)" -v e="$cv_text" \
		'BEGIN { l = int(((f + e * 3 / 4 + 64) * 100 + t - 1) / t); print (l > 98 ? 98 : l) }')
	dmsetup message vol 0 high_watermark $((cv_low + 1))
	dmsetup message vol 0 low_watermark "$cv_low"
	# a fill past the filler opens an extent, which starts the cleaner
	dd if=/dev/mapper/vol of=/dev/null bs=64k skip=$(((COLD_MIB + COLD_FILLER_MIB) * 16)) count=1 \
		iflag=direct 2>/dev/null
	flaz_settle
	dmsetup message vol 0 low_watermark 1
	dmsetup message vol 0 high_watermark 2
	dd if=/dev/zero of=/dev/mapper/vol bs=64k seek=$((COLD_MIB * 16)) \
		count=$((COLD_FILLER_MIB * 16 + 1)) oflag=direct 2>/dev/null
	flaz_settle
	dmsetup status vol >/tmp/status
	dmsetup remove vol
	dmsetup remove cslice
	cv_blocks=$(($(flaz_val logical_bytes) / 4096)) cv_bytes=$(flaz_val physical_bytes)
	cv_bpb=$(echo "$cv_bytes $cv_blocks" | awk '$2 > 0 { printf "%.1f", $1 / $2; exit } { printf "-" }')
	crow "$cv_name" "$cv_blocks" "$cv_bytes" "$cv_bpb" "$(flaz_val recompressed)" \
		"$(flaz_val slots_moved)" "$(flaz_val slots_dropped)" \
		"$(flaz_val extents_cleaned)/$cv_text+$cv_filler"
	csv clean-cold "$cv_name" - - - - - "$(flaz_val ratio)" "$((cv_blocks * 4 / 1024))" - \
		"$cv_blocks" "$cv_bytes" "$cv_bpb" "$(flaz_val recompressed)"
	echo "$cv_name $cv_bpb" >>/tmp/cold.rows
}

# The random one-pass scan (BENCH=only=rscan): dm-cache, bcache, flaz with FIFO eviction, with
# one log (probation_percent 0: the cleaner as before this admission) and with probation.
rscan_rows() {
	header "clean-rscan: a hot 16 MiB read 3 times, one random pass over 384 MiB (3x the SSD), the hot 16 MiB again: hit% of that last read"
	dmcache_up $BACKING
	rscan dm-cache /dev/mapper/cached dmcache_hits
	dmcache_down
	if bcache_up; then
		rscan bcache /dev/bcache0 bcache_hits
		bcache_down
	fi
	# shellcheck disable=SC2086
	rscan_flaz flaz-fifo $SEQ_OPTS probation_percent 0 cleaner_rate_mib 0
	# shellcheck disable=SC2086
	rscan_flaz flaz-one-log $SEQ_OPTS probation_percent 0
	# shellcheck disable=SC2086
	rscan_flaz flaz-probation $SEQ_OPTS
}

# The hot set beside a scan: the random one-pass rows, then hotscan for dm-cache and flaz (FIFO
# eviction, the cleaner, and the cleaner with the default seq_cutoff_kib), then the zipf reads
# beside a scan (BENCH=only=scan).
scan_rows() {
	rscan_rows
	header "clean-hotscan: a hot 16 MiB read after each 32 MiB of a 384 MiB scan (3x the SSD), ${HOTSCAN_ROUNDS} rounds; hit% of the hot reads from round 2"
	dmcache_up $BACKING
	hotscan clean-hotscan dm-cache /dev/mapper/cached dmcache_hits
	dmcache_down
	# first: lru_rows reads the capacity flaz-clean held, the last one's status
	# shellcheck disable=SC2086
	hotscan_flaz flaz-seq $SEQ_OPTS
	# shellcheck disable=SC2086
	hotscan_flaz flaz-fifo $CLEAN_OPTS cleaner_rate_mib 0
	# shellcheck disable=SC2086
	hotscan_flaz flaz-clean $CLEAN_OPTS
	hs_args="cnt=0 /tmp/hs.1.hot /tmp/hs.1.scan"
	for hs_r in $(seq 2 $HOTSCAN_ROUNDS); do
		hs_args="$hs_args cnt=1 /tmp/hs.$hs_r.hot cnt=0 /tmp/hs.$hs_r.scan"
	done
	# shellcheck disable=SC2086 # a list of arguments
	lru_rows clean-hotscan 0 $hs_args
	header "clean-fg: zipf reads over a cached 16 MiB, alone and beside a 384 MiB scan (${RUN_S} s)"
	# shellcheck disable=SC2086
	fg_row idle 0 $CLEAN_OPTS
	# shellcheck disable=SC2086
	fg_row scan-fifo 1 $CLEAN_OPTS cleaner_rate_mib 0
	# shellcheck disable=SC2086
	fg_row scan-clean 1 $CLEAN_OPTS
	FG_CUTOFF=4096
	# shellcheck disable=SC2086
	fg_row scan-seq 1 $CLEAN_OPTS
	FG_CUTOFF=
	fg_ratios
}

# clean-cold: cold_vol with lz4 alone and with cold_compressor zstd, and the capacity the
# cold codec gains: bytes per cached block of the one over the other. Rows in /tmp/cold.rows
# only (not in ROWS: they have no hit ratio for cleaner_ratios).
cold_table() {
	say
	say "clean-cold: the hot half of ${COLD_MIB} MiB of text, moved once by the cleaner (compressor lz4, extent_kib 16, a ${COLD_SLICE_MIB} MiB slice of the SSD)"
	crow config blocks physical_bytes bytes/block recompressed slots_moved slots_dropped cleaned/text+fill
	: >/tmp/cold.rows
	cold_vol lz4
	cold_vol lz4+zstd cold_compressor zstd
	awk "$ratio_awk"'
		{ b[$1] = $2 }
		END {
			g = x(("lz4" in b) ? b["lz4"] : "-", ("lz4+zstd" in b) ? b["lz4+zstd"] : "-")
			printf "::  capacity gained by cold_compressor zstd: %s\n", g
			printf "%s\n", g > "/tmp/cold.gain"
		}' /tmp/cold.rows
	csv clean-cold gain - - - - - "$(sed 's/x$//' /tmp/cold.gain)" - - - - - -
}

# the whole HDD holds data: the 4x set and the scan reach its end
hdd_fill_rest() {
	fio --name=fill2 --filename=$HDD --rw=write --bs=1M --offset=${WSET_MIB}M \
		--size=$((N / 2048 - WSET_MIB))M --direct=1 --buffer_compress_percentage=50 \
		--refill_buffers --eta=never --output=/dev/null
}

# The write-heavy mixed load (issue 33): fio writes 4 KiB blocks of 2:1 data uniformly over
# the HDD's first MIXED_W_MIB (3x the SSD) while a second job reads zipf:1.2 over its first
# MIXED_R_MIB; fio's flow weights keep the writes at about 60% of the I/Os (3 against 2).
MIXED_W_MIB=384
MIXED_R_MIB=128
MIXED_S=30
MIXED_LOAD=mixed_load
mixed_load() {
	fio --filename="$1" --ioengine=libaio --direct=1 --bs=4k --randrepeat=0 --norandommap \
		--time_based --runtime="$2" --eta=never --minimal --output="$3" \
		--name=w --rw=randwrite --size=${MIXED_W_MIB}M --iodepth=4 --flow=3 \
		--buffer_compress_percentage=50 --refill_buffers \
		--name=r --rw=randread --size=${MIXED_R_MIB}M --iodepth=4 --flow=2 \
		--random_distribution=zipf:1.2
}
mrow() { printf '::%-12s %6s %9s %9s %7s %12s\n' "$@"; }

# The misaligned load (issue 29), as a production VM's trace gives it: zipf:1.2 reads and
# writes over the HDD's first MISAL_MIB (2:1 data), of 512 B to 64 KiB at any 512-byte
# offset (MISAL_ALIGN=4k, MISAL_BS=4k-64k: the aligned load beside it), about 30% writes.
MISAL_MIB=128
MISAL_ALIGN=512
MISAL_BS=512-64k
misal_load() {
	fio --filename="$1" --ioengine=libaio --direct=1 --bsrange=$MISAL_BS \
		--blockalign=$MISAL_ALIGN --randrepeat=0 --norandommap --time_based --runtime="$2" \
		--eta=never --minimal --output="$3" --random_distribution=zipf:1.2 \
		--size=${MISAL_MIB}M --iodepth=4 \
		--name=w --rw=randwrite --flow=3 --buffer_compress_percentage=50 --refill_buffers \
		--name=r --rw=randread --flow=7
}

# mixed_row NAME DEV HITS_CMD: a warm-up pass and a measured one of MIXED_LOAD on DEV: the
# reads' hit ratio (the cache's counters over the measured pass), read and write IOPS (fio's
# terse lines: the writer's first, its write IOPS field 49; the reader's read IOPS field 8),
# the writes' share of the I/Os, and what the SSD took (both passes) per GiB of user I/O.
mixed_row() {
	mr_name=$1 mr_dev=$2 mr_hits=$3
	mr_w=$(ssd_wsect)
	$MIXED_LOAD "$mr_dev" $MIXED_S /tmp/mwarm.terse
	mr_h0=$($mr_hits)
	$MIXED_LOAD "$mr_dev" $MIXED_S /tmp/mrun.terse
	mr_h1=$($mr_hits)
	mr_hit=$(hit_pct "$mr_h0" "$mr_h1")
	mr_wiops=$(sed -n 1p /tmp/mrun.terse | cut -d';' -f49)
	mr_riops=$(sed -n 2p /tmp/mrun.terse | cut -d';' -f8)
	# KiB moved in both passes: the writer's written (field 47), the reader's read (field 6)
	mr_kib=$(cat /tmp/mwarm.terse /tmp/mrun.terse | awk -F';' '
		NR % 2 == 1 { k += $47 } NR % 2 == 0 { k += $6 } END { print k }')
	mr_ssd=$(echo "$mr_w $(ssd_wsect) $mr_kib" | awk '$3 > 0 {
		printf "%.0f", ($2 - $1) / 2048 * 1048576 / $3 }')
	mr_wpct=$(echo "$mr_wiops $mr_riops" | awk '$1 + $2 > 0 { printf "%.0f", 100 * $1 / ($1 + $2) }')
	mrow "$mr_name" "$mr_hit" "$mr_riops" "$mr_wiops" "${mr_wpct:--}" "${mr_ssd:--}"
	echo "$mr_name $mr_hit $mr_riops $mr_wiops $mr_ssd" >>/tmp/mixed
}

# mixed_others: the mixed_rows of no cache, dm-cache and bcache.
mixed_others() {
	mixed_row none "$BACKING" no_hits
	dmcache_up "$BACKING"
	mixed_row dm-cache /dev/mapper/cached dmcache_hits
	dmcache_down
	if bcache_up; then
		mixed_row bcache /dev/bcache0 bcache_hits
		bcache_down
	else
		say "$(printf '%-12s' bcache) not set up: $(tail -n 1 /tmp/bcache.out)"
	fi
}

# flaz_mrow NAME "KEY..." OPTION...: a mixed_row of a fresh flaz volume with OPTIONs (and
# cold), then the values of its status keys KEY...
flaz_mrow() {
	fr_name=$1 fr_keys=$2 fr_line=
	shift 2
	dmsetup create vol --table "0 $N flaz $BACKING $SSD $(($# + 1)) $* cold"
	mixed_row "$fr_name" /dev/mapper/vol flaz_hits
	dmsetup status vol >/tmp/status
	for fr_k in $fr_keys; do
		fr_line="$fr_line${fr_line:+, }$fr_k $(flaz_val "$fr_k")"
	done
	say "  $fr_name: $fr_line"
	dmsetup remove vol
}

# flaz_mixed NAME WRITE_ADMIT_CACHED [OPTIONS...]: flaz_mrow with the bench module's
# write_admit_cached (fill.c) as given, and what its installs did.
flaz_mixed() {
	fm_name=$1
	echo "$2" >/sys/module/dm_flaz/parameters/write_admit_cached
	shift 2
	flaz_mrow "$fm_name" "fills write_hits write_misses evictions ghost_hits fills_skipped skipped_space skipped_busy skipped_hot logical_bytes" "$@"
	echo 0 >/sys/module/dm_flaz/parameters/write_admit_cached
}

mixed_section() {
	hdd_fill21 $MIXED_W_MIB
	say
	say "mixed: 4 KiB writes over ${MIXED_W_MIB} MiB (uniform) beside zipf:1.2 reads over its first ${MIXED_R_MIB} MiB, about 60% writes; ${MIXED_S} s warm-up, ${MIXED_S} s measured"
	say "flaz-wcached: a written block installed only if it was cached or a ghost before the write (bench module's write_admit_cached); flaz-lz4: every written block, on probation"
	mrow config "hit%" "read IOPS" "wr IOPS" "write%" "SSD MiB/GiB"
	: >/tmp/mixed
	mixed_others
	flaz_mixed flaz-lz4 0 compressor lz4
	flaz_mixed flaz-wcached 1 compressor lz4
	awk '$1 == "flaz-lz4" { h = $2; s = $5 } $1 == "flaz-wcached" { wh = $2; ws = $5 }
		$1 == "dm-cache" { dh = $2 } $1 == "bcache" { bh = $2 }
		END { printf "::  read hits: flaz-lz4 %s%%, flaz-wcached %s%%, dm-cache %s%%, bcache %s%%; SSD MiB per GiB: flaz-lz4 %s, flaz-wcached %s\n",
			h, wh, dh, bh, s, ws }' /tmp/mixed
}

# flaz_misal NAME DROP [PASS]: flaz_mrow (lz4) under the misaligned load, with the bench
# module's partial_write_drop (patch.c) and partial_read_pass (partial.c) as given.
flaz_misal() {
	echo "$2" >/sys/module/dm_flaz/parameters/partial_write_drop
	echo "${3:-0}" >/sys/module/dm_flaz/parameters/partial_read_pass
	flaz_mrow "$1" "partial_hits partial_fills partial_updates partial_drops partial_passes seq_bypasses fills_skipped ratio" compressor lz4
	echo 0 >/sys/module/dm_flaz/parameters/partial_write_drop
	echo 0 >/sys/module/dm_flaz/parameters/partial_read_pass
}

# misal_rows ALIGN BS: the load's rows, none, dm-cache, bcache, flaz-lz4 (a cached block
# written in part is updated), flaz-drop (dropped), flaz-before (dropped, and reads of parts
# of blocks sent to the HDD as they come: flaz before issue 29); the last two only misaligned.
misal_rows() {
	MISAL_ALIGN=$1 MISAL_BS=$2
	say
	say "misaligned: zipf:1.2 reads and writes of $2 at $1-byte offsets over ${MISAL_MIB} MiB (the SSD's size), about 30% writes; ${MIXED_S} s warm-up, ${MIXED_S} s measured"
	mrow config "hit%" "read IOPS" "wr IOPS" "write%" "SSD MiB/GiB"
	: >/tmp/mixed
	mixed_others
	flaz_misal flaz-lz4 0
	# the aligned load has no part of a block: the other two would be flaz-lz4 again
	if [ "$1" = 512 ]; then
		flaz_misal flaz-drop 1
		flaz_misal flaz-before 1 1
	fi
	awk 'function q(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
		$1 == "flaz-lz4" { h = $2; r = $3 } $1 == "flaz-drop" { dh = $2; dr = $3 }
		$1 == "flaz-before" { bfh = $2; bfr = $3 }
		$1 == "dm-cache" { ch = $2; cr = $3 } $1 == "bcache" { bh = $2 }
		END { if (dh == "") printf "::  read hits: flaz-lz4 %s%%, dm-cache %s%%, bcache %s%%; read IOPS flaz-lz4/dm-cache %s\n",
				h, ch, bh, q(r, cr)
			else printf "::  read hits: flaz-lz4 %s%%, flaz-drop %s%%, flaz-before %s%%, dm-cache %s%%, bcache %s%%; read IOPS flaz-lz4/flaz-before %s, flaz-lz4/flaz-drop %s, flaz-lz4/dm-cache %s\n",
				h, dh, bfh, ch, bh, q(r, bfr), q(r, dr), q(r, cr) }' /tmp/mixed
}

misal_section() {
	hdd_fill21 $MISAL_MIB
	MIXED_LOAD=misal_load
	misal_rows 512 512-64k
	misal_rows 4096 4k-64k
	MIXED_LOAD=mixed_load
}

cleaner_section() {
	hdd_fill_rest
	for cl_mib in $WSET_MIB $((2 * WSET_MIB)); do
		clean_zipf clean-zipf$((cl_mib / 128))x $cl_mib
	done
	# The 2x load again with text in place of fio's 2:1 data, and the cold codec on that text;
	# then the 2:1 data back, which the rows after read (the hot set, the scan, the main set).
	text_fill $WSET_MIB
	clean_zipf clean-text2x $WSET_MIB " of text"
	say "  data: the text corpus over and over (real text, not fio's 2:1 buffers); flaz-clean held it at a ratio of $(flaz_val ratio) (lz4)"
	cold_table
	hdd_fill21 $WSET_MIB
	scan_rows
	cleaner_ratios
}

# Half the SSD's data area (total_extents x extent_kib, from main's rows; else half the
# SSD), the start of the same data; then the hit path under other loads on that set: 128 KiB
# sequential re-reads, and the zipf reads from four jobs at once.
fits_section() {
	ext=$(awk '$1 == "main" && $6 != "-" { print $6; exit }' $ROWS)
	FITS_MIB=$((S / 2048 / 2))
	[ -z "$ext" ] || FITS_MIB=$((ext * EXTENT_KIB / 1024 / 2))
	header "fits: working set ${FITS_MIB} MiB (half the SSD's data area)"
	bench fits none /dev/mapper/slowhdd $FITS_MIB no_hits
	flaz_bench fits flaz-lz4 $FITS_MIB compressor lz4
	flaz_bench fits flaz-off $FITS_MIB compressor lz4 compress_min_saving 100
	fits_ratios

	for load in seq128k zipf4; do
		case $load in
		seq128k) WARM_LOAD=rand128k_reads RUN_LOAD=seq128k_reads ;;
		zipf4) WARM_LOAD=zipf4_reads RUN_LOAD=zipf4_reads ;;
		esac
		header "hits-$load: working set ${FITS_MIB} MiB"
		dmcache_up /dev/mapper/slowhdd
		bench hits-$load dm-cache /dev/mapper/cached $FITS_MIB dmcache_hits
		dmcache_down
		flaz_bench hits-$load flaz-lz4 $FITS_MIB compressor lz4
		flaz_bench hits-$load flaz-off $FITS_MIB compressor lz4 compress_min_saving 100
	done
	WARM_LOAD=zipf_reads RUN_LOAD=zipf_reads
	hits_ratios
	hit_cpu
}

for m in dm-delay dm-cache dm-cache-smq dm-flaz bcache; do modprobe $m; done
N=$(blockdev --getsz $HDD)
S=$(blockdev --getsz $SSD)
dmsetup create slowhdd --table "0 $N delay $HDD 0 $DELAY_MS"
BACKING=/dev/mapper/slowhdd
say "HDD: 512 MiB file + dm-delay ${DELAY_MS} ms; SSD: 128 MiB file"
say "data: fio buffer_compress_percentage=50 (2:1 compressible); reads: 4 KiB zipf:1.2, iodepth 8"
say "each row: warmed for ${WARM_S} s, then measured for ${RUN_S} s (short, to fit TCG); CPU s/GiB"
say "covers the measured pass only; ratio and cachedMiB are flaz's status after it"
hdd_fill21 $WSET_MIB
: >$ROWS
echo "@csv $CSV_COLUMNS"
case ${1:-} in
only=cleaner)
	cleaner_section
	exit 0 ;;
only=hits)
	fits_section
	exit 0 ;;
only=scan)
	hdd_fill_rest
	scan_rows
	exit 0 ;;
only=rscan)
	hdd_fill_rest
	rscan_rows
	exit 0 ;;
only=zipf)
	hdd_fill_rest
	for cl_mib in $WSET_MIB $((2 * WSET_MIB)); do
		clean_zipf clean-zipf$((cl_mib / 128))x $cl_mib
	done
	cleaner_ratios
	exit 0 ;;
only=restart)
	restart_section
	exit 0 ;;
only=paged)
	flaz_bench main flaz-lz4 $WSET_MIB compressor lz4
	paged_row
	main_ratios
	scale_section
	dram_size
	exit 0 ;;
only=scale)
	scale_section
	exit 0 ;;
only=mixed)
	mixed_section
	exit 0 ;;
only=misaligned)
	misal_section
	exit 0 ;;
only=postmark)
	dmsetup remove slowhdd
	postmark_section
	exit 0 ;;
esac

header "main: working set ${WSET_MIB} MiB (2x the SSD)"
bench main none /dev/mapper/slowhdd $WSET_MIB no_hits

dmcache_up /dev/mapper/slowhdd
bench main dm-cache /dev/mapper/cached $WSET_MIB dmcache_hits
dmcache_down

if bcache_up; then
	bench main bcache /dev/bcache0 $WSET_MIB bcache_hits
	bcache_down
else
	say "$(printf '%-12s' bcache) not set up: $(tail -n 1 /tmp/bcache.out)"
fi

for c in $CODECS; do
	flaz_bench main "flaz-$c" $WSET_MIB compressor $c
done
flaz_bench main flaz-off $WSET_MIB compressor lz4 compress_min_saving 100
paged_row
main_ratios

fits_section
cleaner_section
restart_section

say
say "writes: fio 4 KiB randwrite + fsync each, ${WRITE_S} s; PostMark (1000 files of 0.5-16 KiB, 3000 transactions) on ext4"
wrow config "fio IOPS" "p50(us)" "p99(us)" "PostMark s" "commits/s" "meta B/MiB"
write_bench none /dev/mapper/slowhdd
dmcache_up /dev/mapper/slowhdd
write_bench dm-cache /dev/mapper/cached
dmcache_down
if bcache_up; then
	write_bench bcache /dev/bcache0
	bcache_down
else
	say "$(printf '%-12s' bcache) not set up: $(tail -n 1 /tmp/bcache.out)"
fi
dmsetup create vol --table "0 $N flaz /dev/mapper/slowhdd $SSD 3 compressor lz4 cold"
write_bench flaz-lz4 /dev/mapper/vol
dmsetup remove vol
write_ratios
mixed_section
misal_section

dmsetup remove slowhdd
nbd_section
scale_section
table_size
dram_size
fill_cost

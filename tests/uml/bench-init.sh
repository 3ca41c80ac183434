#!/bin/bash
# PID 1 of the UML bench kernel (tests/uml/bench.sh): the time a 4 KiB read takes with every
# read a hit (one at a time on one CPU: the path's CPU work plus one SSD read), and CPU per
# 4 KiB fill, for no cache, dm-cache, flaz-lz4, flaz-zstd and flaz-off (lz4
# with compression off), over 64 MiB of 2:1-compressible data that fits the SSD; CPU per
# 512-byte write of a cached block, updated or dropped; and the
# in-kernel cost of a slot's checks + decompression, of a fill's slot, and of the compressor
# bypass against trying the codec on random blocks, measured in the same boot (debugfs
# dm-flaz/codec_costs); then issue 30's zipf loads and queue depths (bench-hits.sh). Lines for
# the user start with "::". Writes `done` last.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export DM_DISABLE_UDEV=1
. "$(dirname "$0")/../qemu/guest/dmcache.sh"
. "$(dirname "$0")/../qemu/guest/postmark.sh"
. "$(dirname "$0")/bench-fills.sh"
. "$(dirname "$0")/bench-hits.sh"
HDD=/dev/ubda
SSD=/dev/ubdb
WSET_MIB=64
RUN_S=10
GOAL=1.3

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
# the root is the host's (hostfs): a /tmp of its own, or benches side by side share fio's outputs
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/mapper
say() { echo "::$*"; }
# Busy CPU time in 1/100 s (user+nice+system+irq+softirq): one CPU, so it is the work done.
ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
reads() { # reads DEV OUT [FIO OPTIONS...]: 4 KiB random reads over the set, one at a time
	local dev=$1 out=$2
	shift 2
	fio --name=r --filename="$dev" --size=${WSET_MIB}M --rw=randread --bs=4k --ioengine=psync \
		--direct=1 --eta=never --minimal --output="$out" "$@"
}
flaz_val() { dmsetup status vol | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# hit_pct "HITS MISSES" "HITS MISSES": the hit % between two readings of hits (or "-")
hit_pct() { echo "$1 $2" | awk '{ n = $3 + $4 - $1 - $2; if (n > 0) printf "%.1f", 100 * ($3 - $1) / n; else printf "-" }'; }
settled() { # until flaz's fills stop moving
	local prev=-1 cur i=0
	while cur=$(flaz_val fills) && [ "$cur" != "$prev" ] && [ $i -lt 120 ]; do
		prev=$cur
		sleep 0.5
		i=$((i + 1))
	done
}
hits() {
	case $1 in
	flaz*) echo "$(flaz_val read_hits) $(flaz_val read_misses)" ;;
	dm-cache) dmsetup status cached | awk '{print $8, $9}' ;;
	*) echo "0 0" ;;
	esac
}

insmod "$FLAZ_KO" || { say "insmod failed"; poweroff -f; }
modprobe dm-cache 2>/dev/null
N=$(blockdev --getsz $HDD)
S=$(blockdev --getsz $SSD)
# the second boot (bench.sh, less RAM): PostMark alone, its per-write CPU at native speed
if [ "${FLAZ_PART:-}" = postmark ]; then
	say "UML $(uname -r), one CPU at the host's speed, no sanitizers; disks are files on the host's tmpfs"
	postmark_section
	touch "$FLAZ_RUN/done"
	poweroff -f
fi
# the third boot: fills at native speed (bench-fills.sh)
if [ "${FLAZ_PART:-}" = fills ]; then
	fills_section
	touch "$FLAZ_RUN/done"
	poweroff -f
fi
fio --name=gen --filename=$HDD --rw=write --bs=1M --size=${WSET_MIB}M --direct=1 \
	--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
say "UML $(uname -r), one CPU at the host's speed, no sanitizers; HDD 512 MiB and SSD 128 MiB"
say "files on the host's tmpfs; ${WSET_MIB} MiB of 2:1 data (fits the SSD); 4 KiB random reads, one"
say "at a time: us/rd is the time a read takes (1/IOPS over ${RUN_S} s once warm; hit% of them);"
say "CPUus (busy ticks, coarse under UML) per read then, and per fill on the cold pass"
printf '::%-10s %6s %8s %8s %8s %9s %11s\n' config "hit%" "us/rd" "p50(us)" "IOPS" "CPUus/rd" "CPUus/fill"
NONE_COLD=
for cfg in none dm-cache flaz-lz4 flaz-zstd flaz-off; do
	dev=$HDD
	case $cfg in
	dm-cache)
		dmcache_up $HDD
		dev=/dev/mapper/cached ;;
	# seq_cutoff_kib 0: the set is warmed by sequential reads
	flaz-lz4) opts="3 seq_cutoff_kib 0 cold" ;;
	flaz-zstd) opts="5 compressor zstd seq_cutoff_kib 0 cold" ;;
	flaz-off) opts="5 compress_min_saving 100 seq_cutoff_kib 0 cold" ;;
	esac
	if [ "${cfg#flaz}" != "$cfg" ]; then
		dmsetup create vol --table "0 $N flaz $HDD $SSD $opts" || { say "$cfg: refused"; continue; }
		dev=/dev/mapper/vol
	fi
	if [ ! -b $dev ]; then
		say "$cfg: not set up"
		dmsetup remove_all
		continue
	fi
	echo 3 >/proc/sys/vm/drop_caches
	# the cold pass: every block read once (misses, and the fills they start)
	c0=$(ticks)
	reads $dev /tmp/cold
	[ "${cfg#flaz}" = "$cfg" ] || settled
	c1=$(ticks)
	cold=$(((c1 - c0) * 10000 / (WSET_MIB * 256)))
	[ $cfg = none ] && NONE_COLD=$cold
	fill=-
	[ "${cfg#flaz}" = "$cfg" ] || fill=$((cold - NONE_COLD))
	# dm-cache promotes over several passes: warm until a pass hits 95%
	for p in 1 2 3 4 5; do
		[ $cfg = none ] && break
		h0=$(hits $cfg)
		reads $dev /tmp/warm
		h1=$(hits $cfg)
		echo "$h0 $h1" | awk '{ n = $3 + $4 - $1 - $2; exit !(n > 0 && ($3 - $1) / n >= 0.95) }' && break
	done
	h0=$(hits $cfg)
	c0=$(ticks)
	reads $dev /tmp/run --time_based --runtime=$RUN_S --norandommap
	c1=$(ticks)
	h1=$(hits $cfg)
	kib=$(cut -d';' -f6 /tmp/run)
	iops=$(cut -d';' -f8 /tmp/run)
	p50=$(tr ';' '\n' </tmp/run | sed -n 's/^50\.000000%=//p' | head -n1)
	us=$(echo "$c0 $c1 $kib" | awk '$3 > 0 { printf "%.1f", ($2 - $1) * 10000 / ($3 / 4) }')
	hit=$(hit_pct "$h0" "$h1")
	wall=$(echo "$iops" | awk '$1 > 0 { printf "%.1f", 1000000 / $1 }')
	printf '::%-10s %6s %8s %8s %8s %9s %11s\n' $cfg "$hit" "$wall" "$p50" "$iops" "$us" "$fill"
	echo "$cfg $wall" >>/tmp/rows
	case $cfg in
	dm-cache) dmcache_down ;;
	flaz*) dmsetup remove vol ;;
	esac
done

# Writes of 512 bytes at random 512-byte offsets over the set, one at a time, once it is
# cached: CPU per write when flaz updates the block written in part (patch.c: its slot read
# and decompressed, the bytes patched in, the block compressed into a new slot) against
# dropping it (the bench module's partial_write_drop), and what reads of the set hit after.
say
say "writes of 512 B at random 512-byte offsets over the ${WSET_MIB} MiB once cached, one at a time,"
say "${RUN_S} s; CPUus per write (busy ticks); then hit% of 4 KiB random reads of the set (${RUN_S} s)"
printf '::%-12s %8s %8s %10s %6s\n' config "us/wr" "IOPS" "CPUus/wr" "hit%"
for cfg in none flaz-update flaz-drop; do
	dev=$HDD
	if [ $cfg != none ]; then
		echo $([ $cfg = flaz-drop ] && echo 1 || echo 0) >/sys/module/dm_flaz/parameters/partial_write_drop
		dmsetup create vol --table "0 $N flaz $HDD $SSD 3 seq_cutoff_kib 0 cold" || { say "$cfg: refused"; continue; }
		dev=/dev/mapper/vol
		reads $dev /tmp/cold
		settled
	fi
	c0=$(ticks)
	fio --name=w --filename="$dev" --size=${WSET_MIB}M --rw=randwrite --bs=512 --blockalign=512 \
		--ioengine=psync --direct=1 --eta=never --minimal --output=/tmp/pw --time_based \
		--runtime=$RUN_S --norandommap --buffer_compress_percentage=50 --refill_buffers
	[ $cfg = none ] || settled
	c1=$(ticks)
	# terse v3: field 49 is write IOPS
	iops=$(cut -d';' -f49 /tmp/pw)
	n=$((iops * RUN_S))
	cpu=$(echo "$c0 $c1 $n" | awk '$3 > 0 { printf "%.1f", ($2 - $1) * 10000 / $3 }')
	wall=$(echo "$iops" | awk '$1 > 0 { printf "%.1f", 1000000 / $1 }')
	hit=-
	if [ $cfg != none ]; then
		h0=$(hits flaz)
		reads $dev /tmp/run --time_based --runtime=$RUN_S --norandommap
		h1=$(hits flaz)
		hit=$(hit_pct "$h0" "$h1")
		dmsetup remove vol
	fi
	printf '::%-12s %8s %8s %10s %6s\n' $cfg "$wall" "$iops" "$cpu" "$hit"
done
echo 0 >/sys/module/dm_flaz/parameters/partial_write_drop

say
say "in-kernel cost per 4 KiB block: a hit's slot checks (header + crc32c) and decompression;"
say "a fill's slot as an install builds it (2:1 data); on random data, a fill trying the codec"
say "against one with the compressor bypass (the region's history or the entropy sample, then the block raw):"
cat /sys/kernel/debug/dm-flaz/codec_costs >/tmp/costs
sed 's/^/::  /' /tmp/costs
say
# The bypass's goal: on incompressible data, deciding to store a block raw costs at most 10%
# of compressing it. The decision is the bypass's as a fill makes it (bypass.c: the 1 MiB
# region's history, the entropy sample while the region has none, and one block in 16 after);
# the sample alone is shown too, and the whole fill (slot copy, header, crc32c), which both pay.
awk '
	function v(k,  i, a) { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } }
	{
		printf "::%-8s random data, a 1 MiB region at a time: bypass %.3f us = %.1f%% of the codec tried (%.2f us) (goal <= 10%%: %s); the sample alone %.2f us (%.0f%%); whole fill %.2f us with the bypass, %.2f us without; stored raw by the bypass %d of %d random, %d of %d 2:1 blocks\n",
			$1, v("random_decide_ns") / 1000, 100 * v("random_decide_ns") / v("random_codec_ns"),
			v("random_codec_ns") / 1000,
			v("random_decide_ns") <= 0.1 * v("random_codec_ns") ? "met" : "not met",
			v("random_predict_ns") / 1000, 100 * v("random_predict_ns") / v("random_codec_ns"),
			v("random_bypass_ns") / 1000, v("random_fill_ns") / 1000,
			v("random_predicted_raw"), v("blocks"), v("predicted_raw"), v("blocks")
	}' /tmp/costs
say
awk -v goal=$GOAL '
	FILENAME == "/tmp/costs" { split($2, a, "="); raw[$1] = a[2] / 1000; next }
	{ us[$1] = $2 }
	END {
		for (c in raw) if (("flaz-" c) in us && "dm-cache" in us) {
			want = raw[c] + us["dm-cache"]
			printf "::flaz-%s hit: %.1f us = %.2fx (raw %s %.1f us + dm-cache hit %.1f us); goal <= %.1fx: %s\n",
				c, us["flaz-" c], us["flaz-" c] / want, c, raw[c], us["dm-cache"], goal,
				us["flaz-" c] / want <= goal ? "met" : "not met"
		}
		if ("flaz-off" in us && "dm-cache" in us)
			printf "::flaz-off hit (no decompression): %.2fx dm-cache hit\n", us["flaz-off"] / us["dm-cache"]
	}' /tmp/costs /tmp/rows
# issue 30: zipf over a set that fits and 2x the SSD behind dm-delay, CPU per hit by queue depth
hits_section
touch "$FLAZ_RUN/done"
poweroff -f

#!/bin/sh
# make bench: flaz against dm-cache (writethrough, smq) and no cache, side by side on the
# same emulated devices in one VM: a 256 MiB working set (2x the SSD) of 2:1-compressible
# data on a dm-delay "HDD", read with fio's zipf random reads. Figures only, no pass/fail.
# Lines for the user start with "::" (the host's bench.sh shows only those).
set -e -o pipefail
HDD=/dev/vda
SSD=/dev/vdb
DELAY_MS=${BENCH_DELAY_MS:-2}
WSET_MIB=256
WARM_S=20	# a first pass lets the caches fill; only the second is measured
RUN_S=20
dmesg -n 1

say() { echo "::$*"; }

# Busy CPU time since boot, in 1/100 s, from /proc/stat (user+nice+system+irq+softirq).
cpu_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }

# The value after "<pct>%=" in fio's terse line (clat percentiles, in microseconds).
pct() { tr ';' '\n' <"$1" | sed -n "s/^$2\.000000%=//p" | head -n1; }

# fio's zipf random 4 KiB reads over the working set of device $1 for $2 seconds.
zipf_reads() {
	fio --name=zipf --filename="$1" --size=${WSET_MIB}M --rw=randread --bs=4k \
		--random_distribution=zipf:1.2 --ioengine=libaio --iodepth=8 --direct=1 \
		--time_based --runtime="$2" --norandommap --eta=never --minimal --output="$3"
}

# bench NAME DEV HITS_CMD: warm up, measure, and print one row. HITS_CMD prints
# "hits misses" counted by the cache, or nothing where there is no cache.
bench() {
	name=$1 dev=$2 hits_cmd=$3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	zipf_reads "$dev" $WARM_S /tmp/warm.terse
	h0=$($hits_cmd)
	c0=$(cpu_ticks)
	zipf_reads "$dev" $RUN_S /tmp/run.terse
	c1=$(cpu_ticks)
	h1=$($hits_cmd)
	# terse v3: field 6 is KiB read, field 8 read IOPS
	kib=$(cut -d';' -f6 /tmp/run.terse)
	iops=$(cut -d';' -f8 /tmp/run.terse)
	hit=$(echo "$h0 $h1" | awk 'NF == 4 && $3 + $4 > $1 + $2 {
		printf "%.1f", 100 * ($3 - $1) / ($3 + $4 - $1 - $2); exit } { printf "-" }')
	cpu=$(echo "$c0 $c1 $kib" | awk '$3 > 0 { printf "%.1f", ($2 - $1) / 100 / ($3 / 1048576) }')
	printf '::%-12s %6s %8s %9s %9s %10s\n' "$name" "$hit" "$iops" \
		"$(pct /tmp/run.terse 50)" "$(pct /tmp/run.terse 99)" "$cpu"
	echo "$name $iops" >>/tmp/iops
}

no_hits() { :; }
# dm-cache status: ... <read hits> <read misses> are words 8 and 9 after the target name.
dmcache_hits() { dmsetup status cached | awk '{print $8, $9}'; }
flaz_hits() {
	dmsetup status vol | tr ' ' '\n' | awk -F= '$1 == "read_hits" {h = $2} $1 == "read_misses" {m = $2}
		END {print h, m}'
}

for m in dm-delay dm-cache dm-cache-smq dm-flaz; do modprobe $m; done
N=$(blockdev --getsz $HDD)
S=$(blockdev --getsz $SSD)
dmsetup create slowhdd --table "0 $N delay $HDD 0 $DELAY_MS"
say "HDD: 512 MiB file + dm-delay ${DELAY_MS} ms; SSD: 128 MiB file; working set ${WSET_MIB} MiB"
say "data: fio buffer_compress_percentage=50 (2:1 compressible); reads: 4 KiB zipf:1.2, iodepth 8"
say "each cache is warmed for ${WARM_S} s, then measured for ${RUN_S} s"
fio --name=fill --filename=$HDD --rw=write --bs=1M --size=${WSET_MIB}M --direct=1 \
	--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
say
printf '::%-12s %6s %8s %9s %9s %10s\n' config "hit%" IOPS "p50(us)" "p99(us)" "CPUs/GiB"
: >/tmp/iops

bench none /dev/mapper/slowhdd no_hits

# dm-cache: 8 MiB of the SSD for metadata, the rest for 32 KiB cache blocks.
dmsetup create cmeta --table "0 16384 linear $SSD 0"
dmsetup create cdata --table "0 $((S - 16384)) linear $SSD 16384"
dd if=/dev/zero of=/dev/mapper/cmeta bs=4k count=1 conv=fsync 2>/dev/null
dmsetup create cached --table \
	"0 $N cache /dev/mapper/cmeta /dev/mapper/cdata /dev/mapper/slowhdd 64 1 writethrough smq 0"
bench dm-cache /dev/mapper/cached dmcache_hits
dmsetup remove cached
dmsetup remove cdata
dmsetup remove cmeta

dmsetup create vol --table "0 $N flaz /dev/mapper/slowhdd $SSD 0"
bench flaz /dev/mapper/vol flaz_hits
dmsetup remove vol
dmsetup remove slowhdd

say
awk '$1 == "none" {n = $2} $1 == "dm-cache" {d = $2} $1 == "flaz" {f = $2}
	END {
		if (n > 0) printf "::IOPS vs no cache: dm-cache %.2fx, flaz %.2fx\n", d / n, f / n
		if (d > 0) printf "::flaz vs dm-cache: %.2fx IOPS\n", f / d
	}' /tmp/iops
say "flaz does not cache yet (issue 3): its row is the HDD path through the target."

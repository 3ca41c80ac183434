# Sourced by bench-init.sh (the UML bench's first boot, FLAZ_PART=hits): issue 30's figures at
# the CPU's own speed, after the hit-path rows. (1) zipf:0.9 4 KiB random reads over a set that
# fits the SSD and one twice its size, HDD behind dm-delay 4 ms, for no cache, dm-cache and
# flaz-lz4: IOPS, hit %, p50/p99 at queue depth 16 and 1; (2) CPU per hit at queue depth 1, 8
# and 32 on a set that fits, all hits, HDD with no delay (hits never reach it). Figures only.
# Uses bench-init.sh's say, ticks, flaz_val, settled, hits, hit_pct, dmcache_up/down, N, HDD, SSD.

HB_FIT_MIB=96		# fits dm-cache's 120 MiB of 32 KiB blocks, and flaz's SSD compressed
HB_BIG_MIB=256		# twice the 128 MiB SSD (2:1 data: about 1.1x flaz's capacity compressed)
# zipf:0.9 with its hot spot centred at the set's start (":0"): without a centre fio places it
# at an offset drawn from the run's seed, so under --randrepeat=0 every run (each warm-up pass,
# each measured run) has a different hot set and no warm-up warms the measured run
HB_ZIPF=zipf:0.9:0
HB_DELAY_MS=4		# dm-delay on every HDD read (and write): a disk's seek + rotation
HB_RUN_S=10
HB_QD_S=8

# hb_fio DEV OUT MIB QD [FIO OPTIONS...]: 4 KiB random reads over the first MIB of DEV
hb_fio() {
	local dev=$1 out=$2 mib=$3 qd=$4
	shift 4
	fio --name=r --filename="$dev" --size="${mib}M" --rw=randread --bs=4k --ioengine=$HB_ENGINE \
		--iodepth="$qd" --direct=1 --randrepeat=0 --norandommap --eta=never --minimal \
		--output="$out" "$@"
}
# hb_lat OUT PCT: a read completion-latency percentile (us) from fio's terse output
hb_lat() { tr ';' '\n' <"$1" | sed -n "s/^$2\.000000%=//p" | head -n1; }

# hb_up CFG ORIGIN: CFG's device over ORIGIN, printed; hb_down CFG takes it away
hb_up() {
	echo "bench-hits: $1 over $2" >&2	# console only: where a stuck run stopped
	case $1 in
	none) echo "$2" ;;
	dm-cache) dmcache_up "$2" && echo /dev/mapper/cached ;;
	# seq_cutoff_kib 0 as in the rows above (no sequential reads here anyway)
	flaz-lz4) dmsetup create vol --table "0 $N flaz $2 $SSD 3 seq_cutoff_kib 0 cold" &&
		echo /dev/mapper/vol ;;
	esac
}
hb_down() {
	case $1 in
	dm-cache) dmcache_down ;;
	flaz*) dmsetup remove vol ;;
	esac
}

# hb_warm CFG DEV MIB [FIO OPTIONS...]: passes of one read per block of the set (16 at a time)
# until one hits >= 99% or, from the third, gains under a point on the last, at most 6:
# dm-cache promotes over several passes, flaz installs on misses.
# Prints the passes and the last one's hit %.
hb_warm() {
	local cfg=$1 dev=$2 mib=$3 p h0 h1 hit last=-1
	shift 3
	for p in 1 2 3 4 5 6; do
		h0=$(hits "$cfg")
		hb_fio "$dev" /dev/null "$mib" 16 "$@"
		[ "$cfg" = flaz-lz4 ] && settled
		h1=$(hits "$cfg")
		hit=$(hit_pct "$h0" "$h1")
		echo "$hit $last $p" | awk '{ exit !($1 >= 99 || ($3 >= 3 && $1 - $2 < 1)) }' && break
		last=$hit
	done
	# for the console log only: flaz's counters (fills, skips by reason) after the warm-up
	[ "$cfg" = flaz-lz4 ] && echo "warm $mib MiB $*: $(dmsetup status vol)" >&2
	echo "$p $hit"
}

# (1) zipf over a set that fits and one twice the SSD, HDD behind dm-delay.
hb_zipf() {
	local mib cfg dev qd h0 h1 warm
	say
	say "issue 30: $HB_ZIPF 4 KiB random reads (fio $HB_ENGINE) over ${HB_FIT_MIB} MiB (fits the SSD) and"
	say "${HB_BIG_MIB} MiB (2x the SSD) of 2:1 data, HDD behind dm-delay ${HB_DELAY_MS} ms; warmed by passes of"
	say "one read per block of the same load, 16 at a time, until one hits >= 99% or, from the third,"
	say "gains < 1 point (warm: passes, the last one's hit%); then ${HB_RUN_S} s at queue depth 16 and ${HB_RUN_S} s at 1"
	printf '::%-5s %-9s %9s %3s %6s %8s %8s %8s\n' set config warm qd "hit%" IOPS "p50(us)" "p99(us)"
	# 2:1-compressible data, so flaz's compression counts
	fio --name=gen --filename=$HDD --rw=write --bs=1M --size=${HB_BIG_MIB}M --direct=1 \
		--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
	dmsetup create slow --table "0 $N delay $HDD 0 $HB_DELAY_MS" || { say "dm-delay refused"; return; }
	: >/tmp/hbz
	for mib in $HB_FIT_MIB $HB_BIG_MIB; do
		for cfg in none dm-cache flaz-lz4; do
			dev=$(hb_up $cfg /dev/mapper/slow)
			[ -b "$dev" ] || { say "$cfg: not set up"; hb_down $cfg; continue; }
			warm="- -"
			[ $cfg = none ] || warm=$(hb_warm $cfg "$dev" $mib --random_distribution=$HB_ZIPF)
			for qd in 16 1; do
				h0=$(hits $cfg)
				hb_fio "$dev" /tmp/hbrun $mib $qd --random_distribution=$HB_ZIPF \
					--time_based --runtime=$HB_RUN_S
				[ $cfg = flaz-lz4 ] && settled
				h1=$(hits $cfg)
				echo "$mib $cfg $qd $(cut -d';' -f8 /tmp/hbrun) $(hb_lat /tmp/hbrun 99)" >>/tmp/hbz
				printf '::%-5s %-9s %9s %3s %6s %8s %8s %8s\n' ${mib}M $cfg "${warm/ /, }" $qd \
					"$(hit_pct "$h0" "$h1")" "$(cut -d';' -f8 /tmp/hbrun)" \
					"$(hb_lat /tmp/hbrun 50)" "$(hb_lat /tmp/hbrun 99)"
			done
			hb_down $cfg
		done
	done
	dmsetup remove slow
}

# (2) CPU per hit by queue depth: a set that fits, all hits once warm (the HDD with no delay:
# hits never reach it; for none, reads of the tmpfs file itself). CPUus/rd from busy ticks.
hb_qd() {
	local cfg dev qd h0 h1 c0 c1 warm kib
	say
	say "issue 30: CPU per hit by queue depth: uniform 4 KiB random reads (fio $HB_ENGINE) over ${WSET_MIB} MiB"
	say "of 2:1 data (fits the SSD), HDD with no delay, warmed as above; ${HB_QD_S} s per queue depth;"
	say "CPUus/rd from busy ticks (one CPU, coarse under UML)"
	printf '::%-9s %9s %3s %6s %8s %8s %8s %9s\n' config warm qd "hit%" IOPS "p50(us)" "p99(us)" "CPUus/rd"
	: >/tmp/hbq
	for cfg in none dm-cache flaz-lz4; do
		dev=$(hb_up $cfg $HDD)
		[ -b "$dev" ] || { say "$cfg: not set up"; hb_down $cfg; continue; }
		warm="- -"
		[ $cfg = none ] || warm=$(hb_warm $cfg "$dev" $WSET_MIB)
		for qd in 1 8 32; do
			h0=$(hits $cfg)
			c0=$(ticks)
			hb_fio "$dev" /tmp/hbrun $WSET_MIB $qd --time_based --runtime=$HB_QD_S
			c1=$(ticks)
			h1=$(hits $cfg)
			kib=$(cut -d';' -f6 /tmp/hbrun)
			echo "$cfg $qd $(cut -d';' -f8 /tmp/hbrun) $(hb_lat /tmp/hbrun 99)" >>/tmp/hbq
			printf '::%-9s %9s %3s %6s %8s %8s %8s %9s\n' $cfg "${warm/ /, }" $qd \
				"$(hit_pct "$h0" "$h1")" "$(cut -d';' -f8 /tmp/hbrun)" \
				"$(hb_lat /tmp/hbrun 50)" "$(hb_lat /tmp/hbrun 99)" \
				"$(echo "$c0 $c1 $kib" | awk '$3 > 0 { printf "%.1f", ($2 - $1) * 10000 / ($3 / 4) }')"
		done
		hb_down $cfg
	done
}

# flaz/dm-cache against issue 30's goals
hb_ratios() {
	say
	awk -v fit=$HB_FIT_MIB -v big=$HB_BIG_MIB '
		function r(a, b) { return b > 0 ? a / b : 0 }
		function line(what, a, b, goal, le) {
			if (a == "" || b == "") return
			printf "::%s: %.2fx (%s / %s); goal %s %.2fx: %s\n", what, r(a, b), a, b,
				le ? "<=" : ">=", goal, (le ? r(a, b) <= goal : r(a, b) >= goal) ? "met" : "not met"
		}
		FILENAME == "/tmp/hbz" { iops[$1, $2, $3] = $4; next }
		{ p99[$1, $2] = $4 }
		END {
			split("16 1", q)
			for (i = 1; i <= 2; i++) {
				qd = q[i]
				line("flaz-lz4/dm-cache IOPS, " fit " MiB (fits), qd " qd, iops[fit, "flaz-lz4", qd], iops[fit, "dm-cache", qd], 0.95, 0)
				line("flaz-lz4/dm-cache IOPS, " big " MiB (2x the SSD), qd " qd, iops[big, "flaz-lz4", qd], iops[big, "dm-cache", qd], 1.5, 0)
			}
			line("flaz-lz4/dm-cache hit p99 at qd 1 (all hits, the rows just above)", p99["flaz-lz4", 1], p99["dm-cache", 1], 1.25, 1)
		}' /tmp/hbz /tmp/hbq
}

hits_section() {
	# /tmp is the host's (hostfs): no figure of an earlier boot may stand in for this one's
	rm -f /tmp/hbz /tmp/hbq
	# One of three runs hung (UML busy, no output) in the queue-depth part: if this boot
	# nears bench.sh's 1200 s, dump the blocked tasks and every task's stack to the console.
	(sleep $((1100 - $(cut -d. -f1 /proc/uptime))) && echo "bench-hits: still running near 1200 s" >&2 &&
		echo w >/proc/sysrq-trigger && echo t >/proc/sysrq-trigger) &
	# io_uring if the UML kernel and the host's fio have it, libaio otherwise
	HB_ENGINE=libaio
	fio --name=t --filename=$HDD --size=1M --rw=read --bs=4k --ioengine=io_uring --direct=1 \
		--eta=never --output=/dev/null 2>/dev/null && HB_ENGINE=io_uring
	hb_zipf
	hb_qd
	hb_ratios
}

#!/bin/bash
# make bench: boot Debian's 6.12 kernel in QEMU and compare flaz, dm-cache, bcache and no
# cache on the same emulated devices (the guest side is guest/bench.sh). Prints figures, never
# pass/fail: the machine is shared, so compare the ratios, not the absolute numbers. The rows
# also go to $FLAZ_CACHE/bench/bench.csv, plotted into bench.png (gnuplot) beside it.
set -uo pipefail
# about twenty rows of 30 s each plus boot, fills and PostMark: 12-15 min under TCG, the
# scale rows 6 more and the mixed load's 6 (2026-11-28's host runs about 1.7x slower)
export FLAZ_QEMU_TIMEOUT=${FLAZ_QEMU_TIMEOUT:-3600}
# the module with the codec-cost debugfs (costs.c), which users' builds leave out
export FLAZ_BENCH=1
[ "${BENCH:-}" != only=postmark ] || export FLAZ_QEMU_MEM=${FLAZ_QEMU_MEM:-512}
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
# BENCH: words for the guest's bench.sh (only=cleaner, only=zipf (its zipf tables), only=scan, only=rscan,
# only=hits, only=paged, only=scale, only=mixed, only=misaligned, only=restart or
# only=postmark: just that section; PostMark's in a VM of 512 MiB, whose page cache is about
# what issue 28's VM of 384 MiB had: the guest's root file system is a 135 MB initramfs)
show_suite "$KVER" bench "Benchmark" "${BENCH:-}" || exit 1
OUT=$FLAZ_CACHE/bench
mkdir -p "$OUT"
sed -n 's/^@csv //p' "$FLAZ_CACHE/qemu/$KVER/bench/console.log" >"$OUT/bench.csv"
echo
echo "== CSV: $OUT/bench.csv ($(($(wc -l <"$OUT/bench.csv") - 1)) rows)"
if ! command -v gnuplot >/dev/null; then
	echo "== no plot: gnuplot is not installed (apt install gnuplot-nox)"
	exit 0
fi
# Four panels: the main read table's hit ratio and IOPS per configuration, and the writes
# table's fio IOPS and PostMark time, each as bars side by side.
for t in main write; do
	awk -F, -v t=$t '$1 == t { print $2, ($3 == "" ? 0 : $3), ($4 == "" ? 0 : $4), ($10 == "" ? 0 : $10) }' \
		"$OUT/bench.csv" >"$OUT/$t.dat"
done
if [ ! -s "$OUT/main.dat" ]; then
	echo "== no plot: the plot is of the main read table, which this run (BENCH=$BENCH) has not"
	exit 0
fi
gnuplot <<EOF 2>"$OUT/gnuplot.log" || { echo "== no plot: gnuplot failed (see $OUT/gnuplot.log)"; exit 0; }
set terminal pngcairo size 1500,420 font ",10" noenhanced
set output "$OUT/bench.png"
set multiplot layout 1,4 title "dm-flaz make bench ($KVER, QEMU TCG, HDD + dm-delay): $(date -u +%Y-%m-%d)"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -45 scale 0
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set key off
set title "reads, working set 2x the SSD: hit %"
plot "$OUT/main.dat" using 2:xtic(1) lc rgb "#4477aa"
set title "reads: IOPS"
plot "$OUT/main.dat" using 3:xtic(1) lc rgb "#228833"
set title "writes (4 KiB + fsync): IOPS"
plot "$OUT/write.dat" using 3:xtic(1) lc rgb "#cc6677"
set title "PostMark on ext4: seconds (lower is better)"
plot "$OUT/write.dat" using 4:xtic(1) lc rgb "#aa3377"
unset multiplot
EOF
rm -f "$OUT/main.dat" "$OUT/write.dat"
echo "== plot: $OUT/bench.png"

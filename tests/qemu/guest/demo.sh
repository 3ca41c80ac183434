#!/bin/sh
# make demo: what a flaz volume buys an application that reads the way applications do.
# Real files on ext4 on a slow file-backed HDD (dm-delay); one load, random 4 KiB reads over
# every block of the files, one at a time, with direct I/O (fio), run three times: on the HDD
# alone, then through a flaz volume made with flazctl over the same HDD, cold (every miss is
# read from the HDD and filled into the SSD) and warm. Same files, same HDD, same latency,
# and a cold page cache before each pass (remount, drop_caches).
# Lines meant for the user's terminal start with "::" (the host's demo.sh shows only those);
# any failing step ends the script, so init does not report a completed run.
set -e -o pipefail
HDD=/dev/vda
SSD=/dev/vdb
DELAY_MS=5
# real files: the guest's programs, about 5 MiB (every block of them is read once a pass,
# and a read from the slowed HDD takes about 13 ms under emulation: 20 s a pass)
FILES=/usr/sbin
MNT=/mnt/demo
# keep kernel messages off the console, which the user watches
dmesg -n 1

say() { echo "::$*"; }
heading() {
	say
	say "== $*"
}
# Show a command and its indented output.
show() {
	say "\$ $*"
	"$@" 2>&1 | sed 's/^/::    /'
}

# The load: every 4 KiB block of every file once, in random order, one read at a time,
# O_DIRECT (no page cache, no readahead): a lookup load, as a database or an index does it.
FIO="fio --name=lookups --opendir=$MNT --readonly --rw=randread --bs=4k --direct=1 --ioengine=psync --iodepth=1 --file_service_type=random"

# status key $1 of volume demo
val() { dmsetup status demo | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# pass DEV LABEL: mount DEV with cold caches, run the load, unmount; appends a row
# "LABEL reads seconds iops mean_us p99_us hits misses" to /tmp/rows. fio's terse (v3)
# fields: 6 KiB read, 8 IOPS, 9 runtime ms, 16 mean completion latency us, 30 its 99th
# percentile ("99.000000%=N").
pass() {
	local dev="$1" label="$2" h0=0 m0=0 h1=0 m1=0 out
	if [ "$dev" = /dev/mapper/demo ]; then
		h0=$(val read_hits)
		m0=$(val read_misses)
	fi
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 "$dev" $MNT
	out=$($FIO --output-format=terse --terse-version=3 2>/dev/null | grep '^3;')
	umount $MNT
	if [ "$dev" = /dev/mapper/demo ]; then
		h1=$(val read_hits)
		m1=$(val read_misses)
	fi
	echo "$out" | awk -F';' -v l="$label" -v h=$((h1 - h0)) -v m=$((m1 - m0)) '{
		p = $30; sub(/.*=/, "", p)
		printf "%s %d %.1f %d %.0f %d %d %d\n", l, $6 / 4, $9 / 1000, $8, $16, p, h, m }' >>/tmp/rows
	awk -v l="$label" '$1 == l {
		printf "::%s: %d reads in %.1f s: %d reads/s, %.2f ms per read (99%% within %.2f ms)",
			l, $2, $3, $4, $5 / 1000, $6 / 1000
		if ($7 + $8) printf ", hit ratio %.1f%%", 100 * $7 / ($7 + $8)
		printf "\n" }' /tmp/rows
}

heading "Disks: files on the host, attached as virtio disks"
modprobe dm-delay
dmsetup create slowhdd --table "0 $(blockdev --getsz $HDD) delay $HDD 0 $DELAY_MS"
say "HDD: $HDD, 512 MiB (hdd.img), slowed by dm-delay to ${DELAY_MS} ms per I/O: /dev/mapper/slowhdd"
say "SSD: $SSD, 128 MiB (ssd.img)"

heading "An HDD that holds real files: ext4 on the HDD, the guest's programs copied"
show mkfs.ext4 -q /dev/mapper/slowhdd
mkdir -p $MNT
mount -t ext4 /dev/mapper/slowhdd $MNT
cp -a "$FILES" $MNT/
sync
say "$(find $MNT -type f | wc -l) files, $(du -sm $MNT | cut -f1) MiB"
umount $MNT

heading "The load: random 4 KiB reads over the files, as applications read"
say "\$ $FIO"
say "(every 4 KiB block of every file read once, in random order, one read at a time; direct"
say " I/O, so neither the page cache nor readahead serves any of it; caches dropped before each pass)"
: >/tmp/rows

heading "1. The HDD alone"
pass /dev/mapper/slowhdd "HDD-alone"

heading "2. Put flaz in front of the same HDD (the files stay where they are)"
show flazctl create demo --hdd /dev/mapper/slowhdd --ssd $SSD
show dmsetup table demo

heading "3. Through flaz, first pass: cold (each miss read from the HDD, then filled into the SSD)"
pass /dev/mapper/demo "flaz-cold"
say "filled $(val fills) blocks into the SSD, skipped $(val fills_skipped)"

heading "4. Through flaz, second pass: warm"
pass /dev/mapper/demo "flaz-warm"

heading "Volume statistics"
show flazctl status demo
held=$(val logical_bytes)
used=$(val physical_bytes)

heading "Clean up"
show flazctl remove demo
dmsetup remove slowhdd
say "the volume is gone; the HDD holds the file system as it was (every write went through)"

heading "Side by side: the same reads of the same files"
awk 'BEGIN {
	printf "::  %-10s %7s %8s %9s %9s %9s %10s\n", "", "reads", "time s", "reads/s", "mean ms", "p99 ms", "hit ratio" }
{
	hr = ($7 + $8) ? sprintf("%.1f%%", 100 * $7 / ($7 + $8)) : "-"
	printf "::  %-10s %7d %8.1f %9d %9.2f %9.2f %10s\n", $1, $2, $3, $4, $5 / 1000, $6 / 1000, hr
	t[NR] = $3
}
END {
	if (t[2] > 0 && t[3] > 0)
		printf "::the cold pass took %.2fx the HDD'\''s time (the cost of filling); the warm pass %.1fx faster than the HDD alone\n",
			t[2] / t[1], t[1] / t[3]
}' /tmp/rows
say "$(echo "$held $used" | awk '{ printf "the SSD holds %.1f MiB of data in %.1f MiB (compression saved %.0f%%)",
	$1 / 1048576, $2 / 1048576, ($1 > 0 ? 100 * (1 - $2 / $1) : 0) }')"

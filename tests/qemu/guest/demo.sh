#!/bin/sh
# make demo: a flaz volume made with flazctl over a slow file-backed HDD, with ext4 on it.
# Lines meant for the user's terminal start with "::" (the host's demo.sh shows only those);
# any failing step ends the script, so init does not report a completed run.
set -e -o pipefail
HDD=/dev/vda
SSD=/dev/vdb
DELAY_MS=5
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
# Seconds since boot, to two decimals.
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { echo "$(now) $1" | awk '{printf "%.1f", $1 - $2}'; }

heading "Disks: files on the host, attached as virtio disks"
modprobe dm-delay
dmsetup create slowhdd --table "0 $(blockdev --getsz $HDD) delay $HDD 0 $DELAY_MS"
say "HDD: $HDD, 512 MiB (hdd.img), slowed by dm-delay to ${DELAY_MS} ms per I/O: /dev/mapper/slowhdd"
say "SSD: $SSD, 128 MiB (ssd.img)"

heading "Create the cached volume with flazctl"
show flazctl create demo --hdd /dev/mapper/slowhdd --ssd $SSD
show dmsetup table demo

heading "Make an ext4 file system on it and copy real files"
show mkfs.ext4 -q /dev/mapper/demo
mkdir -p /mnt/demo
mount -t ext4 /dev/mapper/demo /mnt/demo
t0=$(now)
cp -a /bin /lib /usr /mnt/demo/
sync
say "copied $(find /mnt/demo -type f | wc -l) files, $(du -sm /mnt/demo | cut -f1) MiB, in $(elapsed "$t0") s (written through to the HDD)"
(cd /mnt/demo && find . -type f | sort | xargs sha256sum) >/tmp/manifest

heading "Read everything back after remounting with cold page caches"
umount /mnt/demo
echo 3 >/proc/sys/vm/drop_caches
mount -t ext4 /dev/mapper/demo /mnt/demo
t0=$(now)
(cd /mnt/demo && sha256sum -c -s /tmp/manifest)
flaz_s=$(elapsed "$t0")
say "all $(wc -l </tmp/manifest) files match their sha256, read in $flaz_s s"
umount /mnt/demo

heading "Volume statistics"
show flazctl status demo
st=$(dmsetup status demo)
val() { echo "$st" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
held=$(val logical_bytes)
used=$(val physical_bytes)

heading "Clean up"
show flazctl remove demo
say "the volume is gone; the HDD holds the whole file system (every write went through)"

heading "What the cache bought: the same cold re-read from the HDD alone"
echo 3 >/proc/sys/vm/drop_caches
mount -t ext4 -o ro /dev/mapper/slowhdd /mnt/demo
t0=$(now)
(cd /mnt/demo && sha256sum -c -s /tmp/manifest)
hdd_s=$(elapsed "$t0")
umount /mnt/demo
dmsetup remove slowhdd
say "HDD alone: $hdd_s s; through flaz: $flaz_s s (flaz read at $(echo "$hdd_s $flaz_s" |
	awk '$2 > 0 { printf "%.2fx", $1 / $2; exit } { printf "-" }') the HDD's speed)"
say "$(echo "$held $used" | awk '{ printf "%.1f MiB of data held in %.1f MiB of SSD (compression saved %.0f%%)",
	$1 / 1048576, $2 / 1048576, ($1 > 0 ? 100 * (1 - $2 / $1) : 0) }')"

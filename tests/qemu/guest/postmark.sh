# PostMark as the benches run it (guest/bench.sh in QEMU, tests/uml/bench-init.sh in UML at
# the host CPU's speed), with the callers' HDD, SSD, N (the HDD's sectors), S (the SSD's),
# say and dmcache_up: the issue-28 PostMark on the bare HDD, dm-cache and flaz, and flaz's
# commit cost. busybox sh and bash alike.
: "${WRITE_S:=15}"

# commit_cost VOL DEV SIZE: 4 KiB random writes with an fsync each over SIZE of DEV (flaz
# volume VOL) for WRITE_S s, then what flaz wrote for its metadata meanwhile (meta_bytes:
# table and generation blocks, superblocks) per MiB of those writes and per commit.
commit_cost() {
	cc_m0=$(dmsetup status "$1" | tr ' ' '\n' | sed -n 's/^meta_bytes=//p')
	cc_c0=$(dmsetup status "$1" | tr ' ' '\n' | sed -n 's/^commits=//p')
	if ! fio --name=cc --filename="$2" --size="$3" --rw=randwrite --bs=4k --ioengine=psync \
		--fsync=1 --direct=1 --refill_buffers --buffer_compress_percentage=50 \
		--time_based --runtime=$WRITE_S --eta=never --minimal --output=/tmp/cc.terse \
		>/tmp/cc.err 2>&1; then
		say "  commit cost over $3: fio failed: $(tail -n 2 /tmp/cc.err /tmp/cc.terse | tr '\n' ' ')"
		return 0
	fi
	# let the last commit go out: it belongs to these writes
	sleep 2
	cc_m1=$(dmsetup status "$1" | tr ' ' '\n' | sed -n 's/^meta_bytes=//p')
	cc_c1=$(dmsetup status "$1" | tr ' ' '\n' | sed -n 's/^commits=//p')
	# (a bare > in awk's printf arguments is a redirection: the conditions are in parentheses)
	echo "$cc_m0 $cc_m1 $cc_c0 $cc_c1 $(cut -d';' -f47 /tmp/cc.terse)" | awk -v sz="$3" '{
		m = $2 - $1; c = $4 - $3; kib = $5
		printf "::  commit cost, writes over %s: %.0f KiB written by the user, %d commits, %.0f KiB of metadata: %.0f KiB per MiB written, %.1f KiB per commit\n",
			sz, kib, c, m / 1024, (kib > 0 ? m / 1024 / (kib / 1024) : 0), (c > 0 ? m / 1024 / c : 0) }'
}

# The PostMark of issue 28: stock PostMark (8,000 files of 4 to 64 KiB, 20,000 transactions,
# buffering false) on a fresh ext4 over the HDD behind dm-delay PM_DELAY_MS, cached on 64 MiB
# of the SSD, with little RAM so the page cache does not hide the disks (QEMU: a VM of 512 MiB,
# its root file system taking 135 MB, as tests/qemu/bench.sh boots BENCH=only=postmark; UML:
# 384 MiB, its root on the host): transactions per second (PostMark's own figure) for the
# bare HDD, dm-cache and flaz-lz4, side by side; then flaz's writes held for a write-intent
# mark, and its commit cost at this SSD size.
PM_DELAY_MS=4
pm_tps() { # pm_tps DEV: PostMark's transactions per second on a fresh ext4 on DEV
	mkfs.ext4 -q -F "$1" && mount -t ext4 "$1" /mnt || return 1
	printf '%s\n' "set location /mnt" "set number 8000" "set transactions 20000" \
		"set size 4096 65536" "set buffering false" "run" "quit" >/tmp/pm.cfg
	postmark /tmp/pm.cfg >/tmp/pm.out 2>&1 && sync
	umount /mnt
	sed -n 's/.*seconds of transactions (\([0-9]*\) per second).*/\1/p' /tmp/pm.out
}
postmark_section() {
	say
	say "PostMark: 8000 files of 4-64 KiB, 20000 transactions, buffering false, ext4; HDD + dm-delay ${PM_DELAY_MS} ms, 64 MiB SSD, $(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024)) MiB of RAM"
	dmsetup create pmhdd --table "0 $N delay $HDD 0 $PM_DELAY_MS"
	dmsetup create ssd64 --table "0 131072 linear $SSD 0"
	pm_none=$(pm_tps /dev/mapper/pmhdd)
	say "$(printf '%-12s' none) $pm_none transactions/s"
	pm_ssd=$SSD pm_s=$S
	SSD=/dev/mapper/ssd64 S=131072
	dmcache_up /dev/mapper/pmhdd
	pm_dmc=$(pm_tps /dev/mapper/cached)
	dmcache_down
	SSD=$pm_ssd S=$pm_s
	say "$(printf '%-12s' dm-cache) $pm_dmc transactions/s"
	dmsetup create vol --table "0 $N flaz /dev/mapper/pmhdd /dev/mapper/ssd64 3 compressor lz4 cold"
	dmsetup status vol >/tmp/status.0
	pm_flaz=$(pm_tps /dev/mapper/vol)
	dmsetup status vol >/tmp/status.1
	say "$(printf '%-12s' flaz-lz4) $pm_flaz transactions/s"
	echo "$pm_none $pm_dmc $pm_flaz" | awk '$1 > 0 { printf "::PostMark against the bare HDD: dm-cache %.2fx, flaz-lz4 %.2fx (goal >= 1.0x)\n", $2 / $1, $3 / $1 }'
	for f in /tmp/status.0 /tmp/status.1; do
		for k in writes mark_waits mark_wait_us marks commits meta_bytes discards; do
			tr ' ' '\n' <$f | sed -n "s/^$k=//p"
		done | tr '\n' ' '
		echo
	done | awk 'NR == 1 { split($0, a) } NR == 2 { split($0, b)
		printf "::  flaz-lz4: %d of %d writes and %d discards (mkfs'"'"'s among them) waited for a mark (%.1f s of waits summed), %d mark superblocks, %d commits, %.0f KiB of metadata\n",
			b[2] - a[2], b[1] - a[1], b[7] - a[7], (b[3] - a[3]) / 1e6, b[4] - a[4], b[5] - a[5], (b[6] - a[6]) / 1024 }'
	commit_cost vol /dev/mapper/vol 64M
	dmsetup remove vol
	dmsetup remove ssd64
	dmsetup remove pmhdd
}

#!/bin/sh
# Crash suite, first boot of a round (tests/qemu/crash.sh): create the flaz volume on slices
# of the disks (HDD 64 MiB of /dev/vda, SSD 16 MiB of /dev/vdb; cold in round 1 only, later
# rounds load what the previous round left), run a mixed fio workload on it and, after a
# delay drawn from SEED, reset the machine with sysrq-b while the I/O runs (KIND: amid
# the writes, or amid reads a second or two after a quiet, committed point). The host then
# boots crash-check.sh on the same disks. In a cut round the host cuts the power instead,
# the disks' volatile caches lost: the suite prints FLAZ-POWER-CUT on the console where it
# would reset, and waits.
# Records: checks as lib.sh's check does, "INFO ..." lines, and "CRASH ..." right before the
# reset (the host requires it: a suite that ends or dies otherwise failed).
# usage: crash-write.sh ROUND SEED KIND [paged]   (KIND: crash.sh round_kind)
. /flaz/lib.sh
. /flaz/crash-lib.sh
ROUND=${1:?usage: crash-write.sh ROUND SEED KIND}
SEED=${2:?usage: crash-write.sh ROUND SEED KIND}
KIND=${3:?usage: crash-write.sh ROUND SEED KIND}
CUT=
[ "$KIND" = cut ] || [ "$KIND" = cleared ] && CUT=1

t_create() {
	must modprobe dm-flaz
	# a power cut loses only what the disks hold in a write cache: they must have one
	if [ -n "$CUT" ]; then
		for d in $HDD $SSD; do
			wc=$(cat "/sys/block/${d#/dev/}/queue/write_cache")
			[ "$wc" = "write back" ] || fail "$d has no volatile write cache to lose ($wc)"
		done
	fi
	linear chdd $HDD 0 $HDD_MIB
	linear cssd $SSD 0 $SSD_MIB
	if [ "$ROUND" = 1 ]; then
		create_vol /dev/mapper/chdd /dev/mapper/cssd cold
	else
		create_vol /dev/mapper/chdd /dev/mapper/cssd
	fi
	vol_status
}

# The workload: random writes of 4-64 KiB (direct with an fsync every 8, buffered with an
# fdatasync every 4, buffered without syncs, direct mixed with reads and an fdatasync every
# 16) over overlapping ranges, plus direct random reads that fill the cache. Data: fio's
# verify headers (offset, seed, a crc) on the direct writer, fresh 30-60% compressible
# buffers elsewhere, so every write differs from what it overwrites.
write_jobs() {
	cat <<EOF
[global]
filename=/dev/mapper/vol
time_based=1
runtime=3600
randseed=$SEED
bsrange=4k-64k
size=${HDD_MIB}m
refill_buffers=1
# jobs as threads of one process, so killing it stops every writer (the quiet tail)
thread=1

[direct-fsync]
ioengine=libaio
iodepth=4
direct=1
rw=randwrite
fsync=8
verify=crc32c
do_verify=0
offset=0
size=32m

[buffered-fdatasync]
ioengine=psync
rw=randwrite
fdatasync=4
buffer_compress_percentage=50
offset=16m
size=32m

[buffered]
ioengine=psync
rw=randwrite
buffer_compress_percentage=70
offset=32m
size=32m

[direct-read]
ioengine=libaio
iodepth=4
direct=1
rw=randread

[mixed]
ioengine=psync
direct=1
rw=randrw
rwmixread=60
fdatasync=16
buffer_compress_percentage=30
EOF
}

# The reads alone, for a quiet tail.
read_jobs() {
	write_jobs | awk '/^\[/ { keep = ($0 == "[global]" || $0 == "[direct-read]") } keep'
}

# Start the workload, wait, and reset (or have the power cut). Never returns if that works.
# Amid rounds reset amid the writes. Cut and cleared rounds stop the writers with no sync
# and cut the power amid the reads after them, once no region is marked; a cut round right
# after writing and fsyncing a MiB. Quiet rounds stop the writers
# and sync, let the reads go on filling for 4 s (regions idle for a mark's age, 1 s, are
# cleared by the next commit), then stop the reads and commit, then read again for a second
# or two and reset amid those fills: the crash leaves a state that loads most cached blocks,
# and the check compares them.
t_crash() {
	delay=$(awk -v s="$SEED" 'BEGIN { srand(s); print 3 + int(rand() * 10) }')
	write_jobs >/tmp/crash.fio
	fio /tmp/crash.fio >/tmp/fio.out 2>&1 &
	fio_pid=$!
	tail=0
	[ "$KIND" = quiet ] && tail=4
	echo "round $ROUND seed $SEED: resetting in $((delay + tail)) s, the last $tail s without writes"
	sleep "$delay"
	kill -0 $fio_pid 2>/dev/null || fail "fio ended before the reset: $(tail -n 3 /tmp/fio.out | tr '\n' ' ')"
	if [ -n "$CUT" ] || [ "$tail" != 0 ]; then
		# the writers stop, the reads go on filling
		read_jobs >/tmp/reads.fio
		fio /tmp/reads.fio >/tmp/fio-reads.out 2>&1 &
		reads_pid=$!
		kill -9 $fio_pid
		wait $fio_pid 2>/dev/null
	fi
	if [ -n "$CUT" ]; then
		# The writers stopped with no sync, their page cache written back at once
		# (writes, no FLUSH). A commit that clears a region must first flush the HDD,
		# whose cache alone holds that region's last writes until then: a cut after
		# the clear finds on the HDD what the SSD's table says.
		echo 10 >/proc/sys/vm/dirty_writeback_centisecs
		echo 10 >/proc/sys/vm/dirty_expire_centisecs
		wait_status vol marked_regions -eq 0 30
		sleep "$(awk -v s="$SEED" 'BEGIN { srand(s + 1); print 1 + rand() }')"
		kill -0 $reads_pid 2>/dev/null || fail "the reads ended before the cut: $(tail -n 3 /tmp/fio-reads.out | tr '\n' ' ')"
	elif [ "$tail" != 0 ]; then
		sync
		sleep "$tail"
		# and no region left marked: a commit clears one idle for a whole age, two or
		# three commits (seconds) after its last write, so by now none should be.
		# Marks that never clear fail here, loudly, not as a cache that came back empty.
		wait_status vol marked_regions -eq 0 20
		# Then the reads stop too, and FLUSHes and commits take every line cached
		# (flush_commits): the host judges how much of that came back (crash.sh
		# warm_share), however slow the host. The reads start again for a second or
		# two, so the reset still meets fills in flight and a table behind them.
		kill -9 $reads_pid
		wait $reads_pid 2>/dev/null
		flush_commits vol
		info "round $ROUND: quiet, no region marked, committed; status: $(vol_status)"
		fio /tmp/reads.fio >/tmp/fio-reads.out 2>&1 &
		sleep "$(awk -v s="$SEED" 'BEGIN { srand(s + 1); print 1 + rand() }')"
		kill -0 $! 2>/dev/null || fail "the reads ended before the reset: $(tail -n 3 /tmp/fio-reads.out | tr '\n' ' ')"
	fi
	info "round $ROUND seed $SEED: reset after ${delay}s of I/O; status: $(vol_status)"
	save_dmesg
	record "CRASH round $ROUND after ${delay}s"
	if [ "$KIND" = cut ]; then
		# What the volume acknowledged as durable must survive the cut, which comes
		# right after: its last MiB, written and fsynced (a FLUSH, which must reach the
		# HDD before it ends, not with a commit later). The host compares the HDD
		# image's MiB with the record (crash.sh durable).
		must dd if=/dev/urandom of=/tmp/durable bs=1M count=1
		must dd if=/tmp/durable of=/dev/mapper/vol bs=1M seek=$((HDD_MIB - 1)) \
			oflag=direct conv=fsync,notrunc
		record "DURABLE $((HDD_MIB - 1)) $(sha256sum </tmp/durable | cut -d' ' -f1)"
	fi
	if [ -n "$CUT" ]; then
		echo "FLAZ-POWER-CUT" >/dev/console
		sleep 60
		fail "the power was not cut"
	fi
	echo 1 >/proc/sys/kernel/sysrq
	echo b >/proc/sysrq-trigger
	sleep 10
	fail "the machine did not reset"
}

check create t_create || exit 1
check crash t_crash
save_dmesg

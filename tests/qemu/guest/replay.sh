#!/bin/sh
# The replay suite (tests/qemu/run.sh KVER replay): crash safety at the FLUSH/FUA points of
# a recorded workload. The HDD area (16 MiB of /dev/vda) and the SSD area (8 MiB of
# /dev/vdb, so the cache fills and evicts) are one dm-linear device, "both", under one dm-log-writes target, so the log has
# the writes of both disks in the order they became durable. A flaz volume (cold) runs fio
# and ext4 on slices of the logged device, then goes passthrough while fio writes. Then replay-log replays the log, point by point,
# onto "target" (a 24 MiB slice of /dev/vda, zero like the fresh disks); at each point a
# non-persistent snapshot of the target takes the writes of loading the volume, flaz is
# created over the snapshot's slices WITHOUT cold, and every block of the volume must equal
# the HDD slice's.
# Disks keep completed writes in a volatile cache until a FLUSH, so each point is a crash
# state of that model (CrashMonkey's): on top of the entries up to the point, a seeded
# random subset of the writes logged before the next point, which no flush had covered
# yet, among the SSD's writes, the HDD's or both's, in turn (replay-log --subset). The
# single log records a flush of either disk as a flush of both, so a state where one disk
# flushed and the other did not is not built. FLAZ_REPLAY_SEED=N repeats a run's states.
# Layout: vda [0,16) MiB HDD area, [16,40) replay target, [40,512) log; vdb [0,8) SSD
# area, [32,128) the snapshot's COW.
. /flaz/lib.sh
. /flaz/crash-lib.sh
# smaller than the crash suite's: a check reads the whole volume
HDD_MIB=16
SSD_MIB=8
BOTH_MIB=$((HDD_MIB + SSD_MIB))
# By default every point is checked (about 1.5 s each under TCG: load the volume, compare
# it with the HDD); the suite argument points=N checks N of them, evenly spread, plus the
# last (make test gives it).
MAX_POINTS=0
for arg in "$@"; do
	case $arg in
	points=*) MAX_POINTS=${arg#points=} ;;
	esac
done
# at paging geometry (crash-lib.sh "paged"), without points=N, a sample: 120 points
[ -n "$PAGED" ] && [ "$MAX_POINTS" = 0 ] && MAX_POINTS=120
LOG=/dev/mapper/logdev
TARGET=/dev/mapper/target

# "both" (the recorded device), "target" (the replay target) and "logdev", unless they exist
# (a failed check's cleanup removes every device-mapper device; the data stays).
base_devices() {
	[ -b /dev/mapper/both ] ||
		must dmsetup create both --table "0 $((HDD_MIB * 2048)) linear $HDD 0
$((HDD_MIB * 2048)) $((SSD_MIB * 2048)) linear $SSD 0"
	[ -b $TARGET ] || linear target $HDD $HDD_MIB $BOTH_MIB
	[ -b $LOG ] || linear logdev $HDD $((HDD_MIB + BOTH_MIB)) $((512 - HDD_MIB - BOTH_MIB))
}

t_setup() {
	for m in dm-flaz dm-log-writes dm-snapshot; do must modprobe $m; done
	# The recorded areas and the replay target start equal: all zero, as run.sh makes fresh
	# sparse disks for every run (zeroing them here would cost seconds under TCG).
	[ "$(sha_mib $HDD 0 1)" = "$(sha_mib $HDD $HDD_MIB 1)" ] ||
		fail "the disks are not fresh (the HDD area and the replay target differ)"
	# no stale log header
	must dd if=/dev/zero of=$HDD bs=1M seek=$((HDD_MIB + BOTH_MIB)) count=1 oflag=direct conv=notrunc
	base_devices
	must dmsetup create lw --table "0 $((BOTH_MIB * 2048)) log-writes /dev/mapper/both $LOG"
	linear hdd /dev/mapper/lw 0 $HDD_MIB
	linear ssd /dev/mapper/lw $HDD_MIB $SSD_MIB
}

# The writing jobs run one after the other: two writes to the same blocks in flight at once
# may reach the disk in either order, whatever order the log records them in, and then the
# whole log replayed would not give the recorded device.
# A few thousand I/Os with frequent syncs, reads that fill the cache, writes of parts of
# cached blocks (they update them), writes and at once a suspend and resume, then ext4
# (mounted with discard) with files written, synced and some deleted. The cleaner runs
# flat out and early (16 KiB extents, watermarks at 80-90% free, since the workload fills
# less than half the SSD): a first 2 MiB read twice (hit slots get a second chance) and
# then 8 MiB read once make it move slots as well as drop them, so the log holds moves.
t_record() {
	create_vol /dev/mapper/hdd /dev/mapper/ssd cleaner_rate_mib 65536 \
		low_watermark 80 high_watermark 90 cold
	must fio --filename=/dev/mapper/vol --size=${HDD_MIB}m --refill_buffers \
		--buffer_compress_percentage=50 \
		--name=w --ioengine=libaio --iodepth=4 --direct=1 --rw=randwrite --bsrange=4k-64k \
		--fsync=4 --number_ios=120 --randseed=1 \
		--name=rw --stonewall --ioengine=psync --rw=randrw --rwmixread=50 --bsrange=4k-32k \
		--fdatasync=8 --number_ios=120 --randseed=2 \
		--name=r --ioengine=libaio --iodepth=4 --direct=1 --rw=randread --bsrange=4k-64k \
		--number_ios=200 --randseed=3
	must dd if=/dev/mapper/vol of=/dev/null bs=64k count=32 iflag=direct
	must dd if=/dev/mapper/vol of=/dev/null bs=64k count=32 iflag=direct
	must dd if=/dev/mapper/vol of=/dev/null bs=64k skip=128 count=128 iflag=direct
	# writes of parts of blocks, over the first 2 MiB read twice: cached blocks are updated
	# in new slots (patch.c), with syncs between
	must fio --filename=/dev/mapper/vol --size=2m --name=pw --ioengine=libaio --iodepth=4 \
		--direct=1 --rw=randwrite --bsrange=512-6656 --blockalign=512 --serialize_overlap=1 \
		--fsync=4 --number_ios=80 --randseed=5
	# the commits that clear the last writes' marks (timed ones: a region's mark clears a
	# second or two after its last write) land in the log too
	wait_status vol marked_regions -eq 0 20
	# writes over cached blocks and at once a suspend, which commits clean (a load after
	# it trusts the table, with no marks to recover from): at a crash right after that
	# superblock, the table blocks of its commit must be durable already (its PREFLUSH)
	must fio --filename=/dev/mapper/vol --size=2m --name=sw --ioengine=libaio --iodepth=4 \
		--direct=1 --rw=randwrite --bsrange=4k-16k --serialize_overlap=1 --number_ios=24 --randseed=6
	must dmsetup suspend vol
	must dmsetup resume vol
	vol_status
	moved=$(status_val vol slots_moved)
	[ "${moved:-0}" -gt 0 ] || fail "the recorded run moved no slot (slots_moved=$moved): the points would not cover the cleaner's moves"
	updated=$(status_val vol partial_updates)
	[ "${updated:-0}" -gt 0 ] || fail "the recorded run updated no block written in part (partial_updates=$updated)"
	must mkfs.ext4 -q -E nodiscard -b 4096 /dev/mapper/vol
	must mount -t ext4 -o discard /dev/mapper/vol /mnt
	must cp -r /corpus/files/perl5 /mnt/a
	sync
	rm -rf /mnt/a/Dpkg
	must cp -r /corpus/files/perl5/Dpkg /mnt/b
	sync
	must umount /mnt
	vol_status
	# passthrough while writes run: from the switch on they reach the HDD unmarked, so at
	# every point after it the saved state must already be void (issue 28, finding 2)
	w0=$(status_val vol writes)
	fio --filename=/dev/mapper/vol --size=${HDD_MIB}m --refill_buffers --name=pt \
		--ioengine=libaio --iodepth=4 --direct=1 --rw=randwrite --bsrange=4k-32k --fsync=4 \
		--number_ios=96 --randseed=4 >/tmp/fio-pt.out 2>&1 &
	pt_fio=$!
	wait_status vol writes -gt "$w0" 10
	must dmsetup message vol 0 passthrough 1
	wait $pt_fio || fail "fio during the switch to passthrough failed: $(tail -n 2 /tmp/fio-pt.out)"
	[ "$(status_val vol mode)" = passthrough ] || fail "the volume is not in passthrough: $(vol_status)"
	vol_status
	must dmsetup remove vol
	must dmsetup remove hdd
	must dmsetup remove ssd
	must dmsetup remove lw
	info "log: $(replay-log --log $LOG --info)"
}

# Every FLUSH/FUA point (or MAX_POINTS of them spread evenly, plus the last): replay up to
# it, load the volume over a snapshot of the result, compare.
t_points() {
	base_devices
	replay-log --log $LOG --list-flush >/tmp/points || fail "replay-log --list-flush failed"
	n=$(wc -l </tmp/points)
	[ "$n" -ge 2 ] || fail "the log has $n FLUSH/FUA points; the workload should make many"
	seed=${FLAZ_REPLAY_SEED:-$(od -An -tu4 -N 4 /dev/urandom | tr -d ' ')}
	info "replay crash states: seed $seed (FLAZ_REPLAY_SEED=$seed repeats them)"
	if [ "$MAX_POINTS" -eq 0 ] || [ "$n" -le "$MAX_POINTS" ]; then
		cp /tmp/points /tmp/chosen
	else
		# evenly spread from an offset the seed picks, so runs cover different points
		awk -v n="$n" -v k="$MAX_POINTS" -v f="$((seed % 1000))" \
			'{ p[NR] = $1 } END { for (i = 0; i < k; i++) print p[int((i + f / 1000) * n / k) + 1]; print p[n] }' \
			/tmp/points | uniq >/tmp/chosen
	fi
	linear cow $SSD 32 96
	start=0
	checked=0
	warm=0
	during=0
	bad=0
	: >/tmp/bad
	for p in $(cat /tmp/chosen); do
		t_replay=$(now)
		must replay-log --log $LOG --replay $TARGET --start $start --end "$p"
		start=$((p + 1))
		checked=$((checked + 1))
		# the writes after p that the next point would make durable, some of them lost
		q=$(awk -v p="$p" '$1 > p { print $1; exit }' /tmp/points)
		state="entries 0..$p"
		if [ -n "$q" ] && [ "$q" -gt $((p + 1)) ]; then
			case $((checked % 3)) in
			0) disk=both range= ;;
			1) disk=SSD range="--range $((HDD_MIB * 2048)):$((BOTH_MIB * 2048 - 1))" ;;
			2) disk=HDD range="--range 0:$((HDD_MIB * 2048 - 1))" ;;
			esac
			# shellcheck disable=SC2086 # range is empty or two words
			sub=$(replay-log --log $LOG --replay $TARGET --start $((p + 1)) --end $((q - 1)) \
				--subset $((seed + p)) $range) || fail "replay-log --subset failed at entry $p"
			state="$state, then of $((p + 1))..$((q - 1)) on the $disk: $sub (subset seed $((seed + p)))"
		fi
		one_point "$p" "$state" || bad=$((bad + 1))
	done
	must dmsetup remove cow
	info "$checked of $n FLUSH/FUA points checked; $warm loaded cached blocks, $during of them compared while loading; $bad failed"
	[ "$bad" -eq 0 ] || fail "$bad of $checked replay points failed: $(tr '\n' ' ' </tmp/bad | cut -c 1-400)"
	[ "$checked" -gt 0 ] || fail "no point was checked"
	# a load that always came back empty would pass the comparisons: about 3 points in 10
	# load cached blocks (the points before the first commit, and those after the switch
	# to passthrough, cannot)
	[ "$warm" -gt 0 ] && [ $((warm * 10)) -ge "$checked" ] ||
		fail "only $warm of $checked points loaded cached blocks: want a tenth at least"
	# and the reads during the load were compared: a load that ended before the compare
	# began would leave that untested
	[ "$during" -gt 0 ] && [ $((during * 2)) -ge "$warm" ] ||
		fail "only $during of the $warm points that loaded cached blocks began their compare while the volume loaded: want half at least"
}

now() { cut -d' ' -f1 /proc/uptime; }
# since T0 [T1]: seconds from uptime T0 to T1 (default now)
since() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.1f", b - a }'; }

# one_point ENTRY STATE: the check at one replay point (the target holds entries 0..ENTRY,
# and what STATE says); sets warm; appends a reason to /tmp/bad and returns 1 on failure.
one_point() {
	op=$1
	op_state=$2
	t_load=$(now)
	dmsetup create snap --table "0 $((BOTH_MIB * 2048)) snapshot $TARGET /dev/mapper/cow N 8" ||
		{ echo "entry $op: no snapshot; " >>/tmp/bad; return 1; }
	dmsetup create rhdd --table "0 $((HDD_MIB * 2048)) linear /dev/mapper/snap 0"
	dmsetup create rssd --table "0 $((SSD_MIB * 2048)) linear /dev/mapper/snap $((HDD_MIB * 2048))"
	op_rc=0
	kmsg_mark
	# The compare starts while the volume still reads its saved table in: the background
	# load pauses before each of its reads, so what reads return during the load is
	# checked, as after a real crash, where nobody waits for it.
	echo 100 >/sys/module/dm_flaz/parameters/debug_load_delay_ms ||
		{ echo "entry $op: no debug_load_delay_ms parameter; " >>/tmp/bad; op_rc=1; }
	# shellcheck disable=SC2086 # words
	if dmsetup create vol --table "0 $((HDD_MIB * 2048)) flaz /dev/mapper/rhdd /dev/mapper/rssd $(echo $GEOMETRY | wc -w) $GEOMETRY" \
		>/tmp/create.out 2>&1; then
		t_cmp=$(now)
		op_loading=$(status_now vol loading)
		# misses of the compare's 1 MiB reads bypass the cache (hits are still served),
		# which saves filling the cache (and the snapshot) with the whole volume
		dmsetup message vol 0 seq_cutoff_kib 4 ||
			{ echo "entry $op: cannot set seq_cutoff_kib; " >>/tmp/bad; op_rc=1; }
		blkcmp /dev/mapper/vol /dev/mapper/rhdd --show 3 >/tmp/blkcmp.out 2>&1
		op_cmp=$?
		echo 0 >/sys/module/dm_flaz/parameters/debug_load_delay_ms
		# what the load brought back: the blocks cached once it ended, less those the
		# compare's reads filled (the first 4 KiB of each stream)
		op_cached=$(status_val vol blocks_cached)
		op_cached=$((${op_cached:-0} - $(status_now vol fills)))
		if [ "$op_cached" -gt 0 ]; then
			warm=$((warm + 1))
			[ "${op_loading:-0}" -gt 0 ] && during=$((during + 1))
		fi
		# progress on the console: seconds to replay, to load the volume, to compare
		echo "replay: $op_state: blocks_cached=$op_cached loading=$op_loading at the compare's start $(tail -n 1 /tmp/blkcmp.out)" \
			"(replay $(since $t_replay $t_load) s, create $(since $t_load $t_cmp) s, compare $(since $t_cmp) s)" |
			tee /dev/console
		if [ $op_cmp -ne 0 ]; then
			cat /tmp/blkcmp.out
			echo "entry $op ($op_state; blocks_cached=$op_cached): $(tail -n 1 /tmp/blkcmp.out); " >>/tmp/bad
			op_rc=1
		fi
		dmsetup remove vol || { echo "entry $op: cannot remove the volume; " >>/tmp/bad; op_rc=1; }
	else
		cat /tmp/create.out
		echo "entry $op: create without cold refused: $(kmsg_new | grep flaz | tail -n 2 | tr '\n' ' '); " >>/tmp/bad
		op_rc=1
		echo 0 >/sys/module/dm_flaz/parameters/debug_load_delay_ms
	fi
	dmsetup remove rhdd
	dmsetup remove rssd
	dmsetup remove snap
	return $op_rc
}

# The replayer itself: replaying the whole log onto a zeroed target gives the recorded
# device, block for block. Here DISCARD entries are skipped: QEMU's default (discard=ignore)
# left the recorded disks' data in place (the points above replay them as zeros: stricter).
t_replay_all() {
	base_devices
	must dd if=/dev/zero of=$TARGET bs=1M count=$BOTH_MIB oflag=direct
	must replay-log --log $LOG --replay $TARGET --discard skip --all
	same_blocks $TARGET /dev/mapper/both "the whole log replayed vs the recorded device"
}

check setup t_setup
check record t_record
check replay-points t_points
check replay-all t_replay_all
dmsetup remove_all
save_dmesg

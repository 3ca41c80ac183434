# e2e check of the order in which a commit reaches the disks (meta.c: commit()), read from
# the block layer's trace of the bios the kernel queues (the block_bio_queue tracepoint),
# not from the code. A crash test sees a wrong order only when a crash state happens to
# expose it, and the replay's one log records a flush of either disk as a flush of both;
# the trace names the disk of every flush. What must hold, each a crash-safety rule of
# meta.c's opening comment:
#   superblock  every superblock write is PREFLUSH|FUA (rwbs FWF...);
#   gens        no table block is written after a gen block with no SSD flush between:
#               an entry on the SSD never carries a generation its gen block lacks;
#   opening     a commit flushes the SSD before its first gen or table block, so no entry
#               points at a slot still in the SSD's volatile cache;
#   hdd         after the last write to the HDD, an HDD flush, then a superblock, before the
#               marked regions are seen cleared (marked_regions=0, a trace marker): a cleared
#               region's writes are on the HDD for good, not only in its cache;
#   reuse       an extent is written again only after its eviction, and after a gen block
#               then a superblock written since that eviction: it is reused only once its
#               new generation is on the SSD (alloc.c, meta.c's free_work), so no entry on
#               the SSD can point at the new tenant's slots. Evictions are traced by a
#               kprobe on flaz_meta_evict(). (The SSD here has one gen block.)
# The order judged is the order the bios were queued in (a flush waits for its completion
# before the next bio of a commit is queued), on the global trace clock of both CPUs.
# The load: writes through the volume (marks, evictions), then, with no more writes to the
# HDD (the quiet tail, where only commits write the superblock), reads of 64 MiB of the
# HDD through a 16 MiB SSD (fills, evictions, commits with gen and table blocks). The
# "opening" and "hdd" rules are checked in the tail, the others everywhere. The volume is
# e2e-persist.sh's: pv over its 16 MiB SSD and 128 MiB HDD slices (p_slices, p_create).

O_TRACE=/sys/kernel/tracing
O_EVENT=$O_TRACE/events/block/block_bio_queue

# o_dev NAME: the device-mapper device's number as the trace prints it (MAJOR,MINOR).
o_dev() { dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' ' | tr : ,; }
# o_dev_t MAJOR,MINOR: the same as the tracepoint's dev field holds it, for its filter.
o_dev_t() { echo "$1" | awk -F, '{ print $1 * 1048576 + $2 }'; }

# o_geo FIELD: a number of the SSD's geometry (flazctl dump --json).
o_geo() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" /tmp/dump.json | head -n 1; }

# o_judge TRACE: the rules above over the trace's bios of O_SSD and O_HDD (as o_dev prints
# them); prints "ok ..." or the first breach.
o_judge() {
	awk -v ssd="$O_SSD" -v hdd="$O_HDD" -v meta="$(o_geo meta_start)" \
		-v gen="$(o_geo gen_start)" -v data="$(o_geo data_start)" \
		-v ext="$(o_geo extent_sectors)" '
	function breach(why) { if (!bad) bad = why }
	/tracing_mark_write: flaz: marks cleared/ { mark = ++k; next }
	/ evict: \(/ {
		for (i = 1; i <= NF && $i !~ /^ext=/; i++)
			;
		evicted[substr($i, 5) + 0] = ++k; nev++
		next
	}
	/block_bio_queue:/ {
		for (i = 1; i <= NF && $i != "block_bio_queue:"; i++)
			;
		dev = $(i + 1); rwbs = $(i + 2); sec = $(i + 3) + 0; n = $(i + 5) + 0
		if (dev != ssd && dev != hdd)
			next
		# a PREFLUSH (an empty flush, or the superblock write that carries one)
		fl = rwbs ~ /^F/
		wr = rwbs ~ /^F?W/ && n > 0
		k++
		if (dev == hdd) {
			if (fl) kind[k] = "HF"
			else if (wr) { kind[k] = "HW"; last_hw = k }
			next
		}
		if (fl) gen_out = 0
		if (!wr) { if (fl) kind[k] = "SF"; next }
		if (sec < meta) {
			kind[k] = "SB"; nsb++
			if (rwbs !~ /^FWF/) breach("superblock write " rwbs " at sector " sec ", not PREFLUSH|FUA")
			if (gens_then_table) ngt++
			gen_since_sb = 0; gens_then_table = 0; gen_before_sb = last_gen
		} else if (sec < gen) {
			kind[k] = "TAB"; ntab++
			if (gen_out) breach("table block at sector " sec " written after a gen block with no SSD flush between")
			if (gen_since_sb) gens_then_table = 1
		} else if (sec < data) {
			kind[k] = "GEN"; ngen++
			gen_out = 1; gen_since_sb = 1; last_gen = k
		} else if ((sec - data) % ext == 0) {
			# an extent written (the cleaner and the extent buffer start at its first sector)
			e = (sec - data) / ext
			if (e in wrote) {
				nreuse++
				if (!(e in evicted) || evicted[e] < wrote[e])
					breach("extent " e " written again (bio " k ") with no eviction since its last write (bio " wrote[e] ")")
				else if (gen_before_sb < evicted[e])
					breach("extent " e " written again (bio " k ") with no gen block then superblock written since its eviction (event " evicted[e] ")")
			}
			wrote[e] = k
		}
	}
	END {
		if (!last_hw) breach("no HDD write in the trace: the load did not run")
		if (mark < last_hw) breach("no trace marker after the last HDD write")
		# the tail: commits only
		for (i = last_hw + 1; i <= k; i++) {
			if (kind[i] == "HF" && i < mark) hf = 1
			if (kind[i] == "SB" && hf && i < mark) hdd_ok = 1
			if (kind[i] == "SB") { open = 1; flushed = 0; continue }
			if (!open) continue
			if (kind[i] == "SF") flushed = 1
			if (kind[i] == "GEN" || kind[i] == "TAB") {
				if (!flushed) breach("a commit wrote a " kind[i] " block (bio " i ") with no SSD flush since the superblock before it")
				windows++; open = 0
			}
		}
		if (!hdd_ok) breach("no HDD flush then superblock after the last HDD write (bio " last_hw ") before the marked regions were cleared (event " mark ")")
		if (!windows) breach("no commit in the quiet tail wrote a gen or table block: the opening flush went unchecked")
		if (!ngt) breach("no commit wrote gen blocks then table blocks: the gens rule went unchecked")
		if (!nreuse || !nev) breach("no extent was evicted and written again: the reuse rule went unchecked")
		if (bad) { print bad; exit 1 }
		printf "ok: %d events (bios of the two disks, evictions), %d superblock, %d gen and %d table block writes, %d commits with gens then table blocks, %d tail commits checked, %d extents reused\n", k, nsb, ngen, ntab, ngt, windows, nreuse
	}' "$1"
}

# o_untrace: the tracing this check set, undone (also after a failure).
o_untrace() {
	echo 0 >$O_TRACE/tracing_on
	echo 0 >$O_EVENT/enable
	echo 0 >$O_EVENT/filter
	[ -d $O_TRACE/events/flaz/evict ] && echo 0 >$O_TRACE/events/flaz/evict/enable
	echo '-:flaz/evict' >>$O_TRACE/kprobe_events 2>/dev/null
	echo local >$O_TRACE/trace_clock
	echo 1408 >$O_TRACE/buffer_size_kb
}

# o_load: the load, traced: writes, the marks cleared, reads, two more commits.
o_load() {
	must fio --name=w --filename=$PV --ioengine=psync --rw=write --bs=64k \
		--size=24m --direct=1 --refill_buffers --buffer_compress_percentage=50
	wait_status pv marked_regions -eq 0 60
	echo "flaz: marks cleared" >$O_TRACE/trace_marker
	must dd if=$PV of=/dev/null bs=1M skip=32 count=64 iflag=direct
	c=$(status_val pv commits)
	wait_status pv commits -ge $((c + 2)) 30
}

t_persist_commit_order() {
	[ -d $O_TRACE/events ] || mount -t tracefs nodev $O_TRACE || fail "cannot mount tracefs"
	[ -d $O_EVENT ] || fail "this kernel has no block_bio_queue tracepoint"
	for d in vda vdb; do
		# without a volatile cache the block layer drops flushes before the tracepoint
		grep -q 'write back' /sys/block/$d/queue/write_cache ||
			fail "$d has no volatile write cache ($(cat /sys/block/$d/queue/write_cache)): no flush would be traced"
	done
	p_slices
	# the read phase's data, on the HDD before the volume exists
	must fio --name=hdd --filename=$PHDD --ioengine=psync --rw=write --bs=1m \
		--offset=32m --size=64m --direct=1 --refill_buffers --buffer_compress_percentage=50
	# no sequential bypass: the load's streams must reach the cache
	p_create cold seq_cutoff_kib 0
	O_SSD=$(o_dev pssd)
	O_HDD=$(o_dev phdd)
	flazctl dump $PSSD --json >/tmp/dump.json 2>/tmp/dump.err ||
		fail "flazctl dump --json: $(cat /tmp/dump.err)"
	for f in meta_start gen_start data_start extent_sectors; do
		[ -n "$(o_geo $f)" ] || fail "no $f in flazctl dump --json"
	done
	[ "$(o_geo gen_blocks)" = 1 ] || fail "the SSD has $(o_geo gen_blocks) gen blocks: the reuse rule assumes one"
	o_untrace
	echo 16384 >$O_TRACE/buffer_size_kb
	echo global >$O_TRACE/trace_clock
	: >$O_TRACE/trace
	echo "dev == $(o_dev_t "$O_HDD") || dev == $(o_dev_t "$O_SSD")" >$O_EVENT/filter ||
		{ o_untrace; fail "the tracepoint refused its filter"; }
	echo 1 >$O_EVENT/enable
	echo 'p:flaz/evict dm_flaz:flaz_meta_evict ext=$arg2:u32' >>$O_TRACE/kprobe_events ||
		{ o_untrace; fail "the kernel refused a kprobe on flaz_meta_evict"; }
	echo 1 >$O_TRACE/events/flaz/evict/enable
	echo 1 >$O_TRACE/tracing_on
	(o_load)
	load_rc=$?
	echo 0 >$O_TRACE/tracing_on
	cat $O_TRACE/trace >/tmp/trace
	lost=$(grep -h '^overrun:' $O_TRACE/per_cpu/cpu*/stats | awk '{ s += $2 } END { print s + 0 }')
	# after the read: removing the kprobe empties the buffer
	o_untrace
	[ $load_rc = 0 ] || fail "$(cat /tmp/why)"
	show_status pv
	must dmsetup remove pv
	p_remove_slices
	[ "$lost" = 0 ] || fail "the trace buffer overran ($lost events lost): the order cannot be judged"
	head -n 20 /tmp/trace
	o_judge /tmp/trace >/tmp/judge.out
	rc=$?
	[ $rc = 0 ] || fail "$(head -n 1 /tmp/judge.out)"
	note "$(cat /tmp/judge.out)"
}

#!/bin/sh
# Crash suite, second boot of a round (tests/qemu/crash.sh): the machine was reset during I/O
# (crash-write.sh). Re-create the volume over the same slices without "cold": it must come
# back (warm), and every 4 KiB block it returns must equal the HDD's, read directly: on a
# read started right after the create, while the volume is still loading, on the first
# read after the load (lines loaded from the SSD) and on two more reads (hits).
# Then remove it cleanly (the next round starts from that).
# usage: crash-check.sh ROUND KIND [paged]   (KIND: crash.sh round_kind)
. /flaz/lib.sh
. /flaz/crash-lib.sh
ROUND=${1:?usage: crash-check.sh ROUND KIND}
KIND=${2:?usage: crash-check.sh ROUND KIND}

# held_loaded: how many blocks (slots and zero blocks) the crashed SSD's committed table held
# (flazctl dump, before the create) in the table blocks the load brought in: the first
# table_resident_bytes' worth, in order, as the load warms them (all of them unpaged).
held_loaded() {
	hl_blocks=$(sed -n 's/^  lines *[0-9]* in \([0-9]*\) table blocks.*/\1/p' /tmp/fdump.out | head -n 1)
	hl_lines=$(sed -n 's/^  lines *\([0-9]*\) in [0-9]* table blocks.*/\1/p' /tmp/fdump.out | head -n 1)
	hl_res=$(status_now vol table_resident_bytes)
	hl_bytes=$(status_now vol table_bytes)
	awk -v blocks="$hl_blocks" -v lines="$hl_lines" -v res="$hl_res" -v bytes="$hl_bytes" '
		BEGIN { per = int((lines + blocks - 1) / blocks); n = int(res * blocks / bytes)
			if (n > blocks) n = blocks; below = n * per }
		/^  line [0-9]*: (block|tag|zero block) / { l = $2; sub(":", "", l); if (l + 0 < below) c++ }
		END { print c + 0 }' /tmp/fdump.out
}

# The volume loads without cold; the host reports blocks_cached.
t_warm() {
	must modprobe dm-flaz
	linear chdd $HDD 0 $HDD_MIB
	linear cssd $SSD 0 $SSD_MIB
	# flazctl's offline view of the crashed SSD, for the record (not a verdict here)
	flazctl check /dev/mapper/cssd >/tmp/fcheck.out 2>&1
	info "round $ROUND: flazctl check of the SSD after the crash exited $? (0 clean, 3 ignorable, 4 corrupt): $(tail -n 2 /tmp/fcheck.out | tr '\n' ' ' | cut -c 1-240)"
	# its committed table's entries, for the count crash.sh warm_share judges by (held_loaded)
	flazctl dump /dev/mapper/cssd --entries >/tmp/fdump.out 2>&1 ||
		info "round $ROUND: flazctl dump of the SSD after the crash exited $?"
	# the background load (recovering the crashed state, then warming) pauses 1 s before
	# each read, so the first read, started at once, meets it: what it returns must be
	# right then too
	echo 1000 >/sys/module/dm_flaz/parameters/debug_load_delay_ms ||
		fail "no debug_load_delay_ms parameter"
	create_vol /dev/mapper/chdd /dev/mapper/cssd
	loading=$(status_now vol loading)
	info "LOADING $loading"
	same_blocks /dev/mapper/vol /dev/mapper/chdd "a read started with loading=$loading"
	echo 0 >/sys/module/dm_flaz/parameters/debug_load_delay_ms
	cached=$(status_val vol blocks_cached)
	[ -n "$cached" ] || fail "no blocks_cached in the status: $(vol_status)"
	info "round $ROUND: after the crash the volume came back with blocks_cached=$cached; status: $(vol_status)"
	info "WARM $cached"
	info "HELD $(held_loaded)"
	# Other rounds than quiet ones may crash with regions marked (writes to every region,
	# or the cut's fsynced MiB): every line may have been in a marked region and dropped. Quiet rounds
	# stopped writing and reset with no region marked, amid reads a second or two after a
	# committed point: an empty cache there lost it all (the host also compares the count
	# with that point's: crash.sh warm_share).
	if [ "$cached" = 0 ]; then
		[ "$KIND" = quiet ] &&
			fail "round $ROUND: the cache came back EMPTY, though no region was marked at the reset: $(vol_status)"
		info "round $ROUND: the cache came back EMPTY (a crash amid writes may leave every region marked; nothing loaded was checked)"
	fi
}

t_no_stale() {
	# the pause stays off whatever ended the check before
	echo 0 >/sys/module/dm_flaz/parameters/debug_load_delay_ms
	dmsetup status vol >/dev/null 2>&1 || fail "no volume (an earlier check failed; its cleanup removed it)"
	h0=$(status_val vol read_hits)
	same_blocks /dev/mapper/vol /dev/mapper/chdd "first read after the crash"
	info "round $ROUND: the first read after the crash was served $(($(status_val vol read_hits) - h0)) blocks from loaded lines"
}

t_reread() {
	dmsetup status vol >/dev/null 2>&1 || fail "no volume (an earlier check failed; its cleanup removed it)"
	h0=$(status_val vol read_hits)
	same_blocks /dev/mapper/vol /dev/mapper/chdd "second read"
	same_blocks /dev/mapper/vol /dev/mapper/chdd "third read"
	h1=$(status_val vol read_hits)
	info "round $ROUND: the two re-reads hit $((h1 - h0)) blocks; status: $(vol_status)"
}

# A crash is no fault of the SSD's: every slot the committed table points at was durable
# before the table was (meta.c's commit flushes the SSD first), so none fails its checks.
t_faults() {
	dmsetup status vol >/dev/null 2>&1 || fail "no volume (an earlier check failed; its cleanup removed it)"
	e=$(status_val vol ssd_errors)
	m=$(status_val vol mode)
	[ "$e" = 0 ] && [ "$m" = normal ] ||
		fail "round $ROUND: slots the loaded table points at failed their checks (ssd_errors=$e, mode $m): the table outlived slots the crash lost"
}

t_remove() {
	dmsetup status vol >/dev/null 2>&1 || fail "no volume (an earlier check failed; its cleanup removed it)"
	must dmsetup remove vol
	must dmsetup remove chdd
	must dmsetup remove cssd
}

check warm t_warm
check no-stale-blocks t_no_stale
check reread-no-stale-blocks t_reread
check no-ssd-faults t_faults
check clean-remove t_remove
save_dmesg

# e2e checks of flazctl against the real kernel, and the module's unload.

# flazctl COMMAND...: run flazctl; its exit code lands in $rc and its output (both streams)
# in /tmp/flazctl.out and the log.
flazctl_run() {
	flazctl "$@" >/tmp/flazctl.out 2>&1
	rc=$?
	echo "flazctl $* -> $rc"
	cat /tmp/flazctl.out
}

no_device() {
	dmsetup info "$1" >/dev/null 2>&1 && fail "$2: device $1 exists"
	[ -e "/dev/mapper/$1" ] && fail "$2: /dev/mapper/$1 exists"
	return 0
}

t_flazctl_create() {
	must flazctl create v --hdd $HDD --ssd $SSD --compressor lzo
	[ -b /dev/mapper/v ] || fail "no /dev/mapper/v after flazctl create"
	dmsetup table v | grep -q ' compressor lzo' || fail "dmsetup table v lacks 'compressor lzo': $(dmsetup table v)"
	must dd if=/dev/urandom of=/dev/mapper/v bs=4k count=16 oflag=direct
}

t_flazctl_status() {
	flazctl_run status v
	[ $rc -eq 0 ] || fail "flazctl status v exited $rc"
	# "v: <hdd> -> cache <ssd>", then one "  <key>  <value>" line per status key
	grep -q '^v: .* -> cache ' /tmp/flazctl.out ||
		fail "flazctl status v has no 'v: <hdd> -> cache <ssd>' line: $(head -c 200 /tmp/flazctl.out)"
	grep -Eq '^  mode +normal$' /tmp/flazctl.out ||
		fail "flazctl status v shows no '  mode  normal' line: $(head -c 200 /tmp/flazctl.out)"
}

t_flazctl_status_json() {
	flazctl_run status v --json
	[ $rc -eq 0 ] || fail "flazctl status v --json exited $rc"
	grep -q '"status"' /tmp/flazctl.out || fail "JSON status has no \"status\""
	grep -Eq '"reads": *[0-9]+' /tmp/flazctl.out || fail "JSON status has no numeric \"reads\""
}

t_flazctl_remove() {
	must flazctl remove v
	no_device v "after flazctl remove"
}

t_flazctl_same_device() {
	flazctl_run create v --hdd $HDD --ssd $HDD
	[ $rc -eq 1 ] || fail "same device for HDD and SSD: exit $rc, want 1"
	no_device v "after the refusal"
}

t_flazctl_ssd_too_small() {
	must dmsetup create tiny --table "0 64 linear $SSD 0"
	flazctl_run create v --hdd $HDD --ssd /dev/mapper/tiny
	must dmsetup remove tiny
	[ $rc -eq 1 ] || fail "64-sector SSD: exit $rc, want 1"
	grep -q minimum /tmp/flazctl.out || fail "64-sector SSD: message lacks 'minimum': $(cat /tmp/flazctl.out)"
	no_device v "after the refusal"
}

t_flazctl_bad_compressor() {
	flazctl_run create v --hdd $HDD --ssd $SSD --compressor snappy
	[ $rc -eq 2 ] || fail "unknown compressor: exit $rc, want 2"
	no_device v "after the refusal"
}

# The kernel refuses a name in use; the existing volume keeps its table and stays usable.
t_flazctl_existing_name() {
	must dmsetup create v --table "$(flaz_table overbook 300)"
	before=$(dmsetup table v)
	flazctl_run create v --hdd $HDD --ssd $SSD --compressor zstd
	[ $rc -eq 1 ] || fail "existing name: exit $rc, want 1"
	after=$(dmsetup table v)
	[ "$after" = "$before" ] || fail "existing volume's table changed: '$before' -> '$after'"
	dmsetup info v | grep -q 'State: *ACTIVE' || fail "existing volume no longer active: $(dmsetup info v | tr '\n' ' ')"
	must dd if=/dev/mapper/v of=/dev/null bs=4k count=16 iflag=direct
	must dmsetup remove v
}

# A table the kernel refuses (the HDD is mounted, so it cannot be opened) leaves no device.
t_flazctl_kernel_refusal() {
	must mkfs.ext4 -q -F $HDD
	must mount $HDD /mnt
	flazctl_run create v --hdd $HDD --ssd $SSD
	must umount /mnt
	[ $rc -eq 1 ] || fail "HDD in use: exit $rc, want 1"
	no_device v "after the kernel refused the table"
}

t_module_unload() {
	left=$(dmsetup ls)
	[ "$left" = "No devices found" ] || fail "devices left before unload: $left"
	must rmmod dm_flaz
	dmsetup targets | grep -q '^flaz ' && fail "dmsetup targets still lists flaz after rmmod"
	return 0
}

# --- the reporting commands (list, status without NAME, stats, set/get, --prometheus) on two
# volumes, fa and fb, each over its own dm-linear slices: FZ_HDD_MIB of the HDD and FZ_SSD_MIB
# of the SSD. The SSD slices are blanked first (the one at FZ_SSD_MIB may hold an earlier
# check's extents), so both volumes start fresh without --cold.
FZ_HDD_MIB=64
FZ_SSD_MIB=16

# Two HDD slices and two blank SSD slices: fz_h1, fz_h2, fz_s1, fz_s2.
fz_slices() {
	must dmsetup create fz_h1 --table "0 $((FZ_HDD_MIB * 2048)) linear $HDD 0"
	must dmsetup create fz_h2 --table "0 $((FZ_HDD_MIB * 2048)) linear $HDD $((FZ_HDD_MIB * 2048))"
	must dmsetup create fz_s1 --table "0 $((FZ_SSD_MIB * 2048)) linear $SSD 0"
	must dmsetup create fz_s2 --table "0 $((FZ_SSD_MIB * 2048)) linear $SSD $((FZ_SSD_MIB * 2048))"
	must dd if=/dev/zero of=/dev/mapper/fz_s1 bs=64k count=1 conv=fsync
	must dd if=/dev/zero of=/dev/mapper/fz_s2 bs=64k count=1 conv=fsync
}

two_volumes() {
	fz_slices
	must flazctl create fa --hdd /dev/mapper/fz_h1 --ssd /dev/mapper/fz_s1
	must flazctl create fb --hdd /dev/mapper/fz_h2 --ssd /dev/mapper/fz_s2 --compressor zstd
	# what flazctl shows for them: /dev/<DEVNAME> from sysfs, dm-<minor> for dm devices
	H1=$(dm_dev fz_h1)
	H2=$(dm_dev fz_h2)
	S1=$(dm_dev fz_s1)
	S2=$(dm_dev fz_s2)
}

two_volumes_remove() {
	for d in fa fb fz_h1 fz_h2 fz_s1 fz_s2; do
		must dmsetup remove $d
	done
}

dm_dev() { echo "/dev/dm-$(dmsetup info -c --noheadings -o minor "$1" | tr -d ' ')"; }

t_flazctl_list() {
	two_volumes
	flazctl_run list
	[ $rc -eq 0 ] || fail "flazctl list exited $rc"
	head -n 1 /tmp/flazctl.out | grep -Eq '^Name +HDD +SSD +Mode +Cached +Hit +Saving$' ||
		fail "flazctl list header: $(head -n 1 /tmp/flazctl.out)"
	# the linear slices are not flaz volumes: a header and two lines
	[ "$(wc -l </tmp/flazctl.out)" -eq 3 ] || fail "flazctl list: want 3 lines, got $(wc -l </tmp/flazctl.out)"
	grep -Eq "^fa +$H1 +$S1 +normal " /tmp/flazctl.out || fail "no 'fa $H1 $S1 normal' line"
	grep -Eq "^fb +$H2 +$S2 +normal " /tmp/flazctl.out || fail "no 'fb $H2 $S2 normal' line"
	two_volumes_remove
}

t_flazctl_status_all() {
	two_volumes
	flazctl_run status
	[ $rc -eq 0 ] || fail "flazctl status (all) exited $rc"
	grep -qx "fa: $H1 -> cache $S1" /tmp/flazctl.out || fail "flazctl status lacks 'fa: $H1 -> cache $S1'"
	grep -qx "fb: $H2 -> cache $S2" /tmp/flazctl.out || fail "flazctl status lacks 'fb: $H2 -> cache $S2'"
	[ "$(grep -c '^  mode ' /tmp/flazctl.out)" -eq 2 ] || fail "flazctl status: want two mode lines"
	flazctl_run status --json
	[ $rc -eq 0 ] || fail "flazctl status --json exited $rc"
	[ "$(wc -l </tmp/flazctl.out)" -eq 2 ] || fail "flazctl status --json: want one line per volume"
	grep -q '^{"schema":2,"name":"fa",' /tmp/flazctl.out || fail "status --json has no fa object"
	grep -q '^{"schema":2,"name":"fb",' /tmp/flazctl.out || fail "status --json has no fb object"
	grep -Eq '"ssd_used":[0-9.]+}$' /tmp/flazctl.out || fail "status --json has no numeric ssd_used"
	grep -q '"hit_ratio":null' /tmp/flazctl.out || fail "status --json: hit_ratio before any read is not null"
	two_volumes_remove
}

t_flazctl_list_fields() {
	two_volumes
	must dd if=/dev/mapper/fa of=/dev/null bs=4k count=16 iflag=direct
	flazctl_run list -o name,hdd,ssd,read_misses,size --csv
	[ $rc -eq 0 ] || fail "flazctl list -o ... --csv exited $rc"
	[ "$(sed -n 1p /tmp/flazctl.out)" = "name,hdd,ssd,read_misses,size" ] ||
		fail "CSV header: $(sed -n 1p /tmp/flazctl.out)"
	size=$((FZ_HDD_MIB * 1024 * 1024))
	[ "$(sed -n 2p /tmp/flazctl.out)" = "fa,$H1,$S1,16,$size" ] ||
		fail "CSV fa: '$(sed -n 2p /tmp/flazctl.out)', want 'fa,$H1,$S1,16,$size'"
	[ "$(sed -n 3p /tmp/flazctl.out)" = "fb,$H2,$S2,0,$size" ] ||
		fail "CSV fb: '$(sed -n 3p /tmp/flazctl.out)', want 'fb,$H2,$S2,0,$size'"
	flazctl_run list -o name,mode,hit_ratio
	grep -Eq '^fa +normal +0\.0%$' /tmp/flazctl.out || fail "list -o name,mode,hit_ratio: no 'fa normal 0.0%'"
	grep -Eq '^fb +normal +-$' /tmp/flazctl.out || fail "list -o name,mode,hit_ratio: no 'fb normal -'"
	flazctl_run list --json
	[ $rc -eq 0 ] || fail "flazctl list --json exited $rc"
	grep -q '^\[{"schema":2,"name":"fa",.*},{"schema":2,"name":"fb",.*}\]$' /tmp/flazctl.out || fail "list --json is not an array of fa and fb"
	flazctl_run list -o name,colour
	[ $rc -eq 2 ] || fail "list -o with an unknown field: exit $rc, want 2"
	two_volumes_remove
}

# stats: the totals line, then rates; reads go on while it runs, so the rates move. The
# blocks are cached first (fills are asynchronous: wait_settled, e2e-cache.sh), so they hit.
t_flazctl_stats() {
	two_volumes
	must dd if=/dev/mapper/fa of=/dev/null bs=4k count=64 iflag=direct
	wait_settled fa
	flazctl stats fa --interval 1 --count 2 >/tmp/stats.out 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		dd if=/dev/mapper/fa of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null
	done
	wait $pid
	rc=$?
	cat /tmp/stats.out
	[ $rc -eq 0 ] || fail "flazctl stats exited $rc: $(tail -n 1 /tmp/stats.out)"
	[ "$(wc -l </tmp/stats.out)" -eq 4 ] || fail "flazctl stats: want a header, totals and 2 lines"
	grep -Eq '^time +reads +writes +hit% +ssd_read +hdd_read +fills +evicts +commits +meta$' /tmp/stats.out ||
		fail "flazctl stats header: $(head -n 1 /tmp/stats.out)"
	grep -Eq '^total +[0-9]+ +[0-9]+ ' /tmp/stats.out || fail "flazctl stats has no totals line"
	# sizes are human (12.0 MiB: two words), so the line is matched, not its word count
	n=$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2} +[0-9]+ +[0-9]+ +([0-9.]+%|-) +[0-9.]+ [KMGT]?i?B +[0-9.]+ [KMGT]?i?B +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ [KMGT]?i?B$' /tmp/stats.out)
	[ "$n" -eq 2 ] || fail "flazctl stats: $n interval lines of the header's columns, want 2"
	n=$(awk '$1 ~ /:/ && $2 > 0' /tmp/stats.out | wc -l)
	[ "$n" -ge 1 ] || fail "flazctl stats: no interval with reads > 0 while reading"
	n=$(awk '$1 ~ /:/ && $4 + 0 > 0' /tmp/stats.out | wc -l)
	[ "$n" -ge 1 ] || fail "flazctl stats: no interval with hit% > 0 while re-reading cached blocks"
	flazctl_run stats fb --count 1 --json
	[ $rc -eq 0 ] || fail "flazctl stats --json exited $rc"
	grep -q '^{"schema":2,"volume":"fb","kind":"total",' /tmp/flazctl.out || fail "stats --json: no total object"
	grep -q '^{"schema":2,"volume":"fb","kind":"interval",.*"reads_per_s":' /tmp/flazctl.out || fail "stats --json: no interval object"
	two_volumes_remove
}

t_flazctl_set_get() {
	must flazctl create v --hdd $HDD --ssd $SSD
	flazctl_run get v
	[ $rc -eq 0 ] || fail "flazctl get v exited $rc"
	grep -qx 'low-watermark=1' /tmp/flazctl.out || fail "get v: no default low-watermark=1"
	grep -qx 'compressor=lz4' /tmp/flazctl.out || fail "get v: no default compressor=lz4"
	must flazctl set v seq_cutoff_kib 1024
	# either spelling
	must flazctl set v high-watermark 9
	must flazctl set v low_watermark 6
	[ "$(flazctl get v seq_cutoff_kib)" = 1024 ] || fail "get seq_cutoff_kib after set: $(flazctl get v seq_cutoff_kib 2>&1)"
	[ "$(flazctl get v low_watermark)" = 6 ] || fail "get low_watermark after set: $(flazctl get v low_watermark 2>&1)"
	dmsetup table v | grep -q ' seq_cutoff_kib 1024' || fail "dmsetup table lacks seq_cutoff_kib 1024: $(dmsetup table v)"
	flazctl get v --json | grep -q '"low-watermark":6,' || fail "get --json: $(flazctl get v --json 2>&1)"
	# in range, but not below high_watermark (9): the kernel refuses, flazctl says why
	flazctl_run set v low_watermark 50
	[ $rc -eq 1 ] || fail "set low_watermark 50 (above high): exit $rc, want 1"
	grep -q 'kernel refused low-watermark 50: .*low_watermark must be below high_watermark' /tmp/flazctl.out ||
		fail "set refused without the kernel's reason: $(cat /tmp/flazctl.out)"
	[ "$(flazctl get v low_watermark)" = 6 ] || fail "a refused set changed low_watermark"
	# refused before the kernel
	flazctl_run set v compressor zstd
	[ $rc -eq 2 ] || fail "set compressor: exit $rc, want 2"
	flazctl_run set v high_watermark 100
	[ $rc -eq 2 ] || fail "set high_watermark 100: exit $rc, want 2"
	must flazctl remove v
}

t_flazctl_prometheus() {
	two_volumes
	must dd if=/dev/mapper/fa of=/dev/null bs=4k count=16 iflag=direct
	wait_settled fa
	must dd if=/dev/mapper/fa of=/dev/null bs=4k count=16 iflag=direct
	flazctl status --prometheus >/tmp/flaz.prom 2>/tmp/flazctl.err
	rc=$?
	head -n 40 /tmp/flaz.prom
	[ $rc -eq 0 ] || fail "status --prometheus exited $rc: $(cat /tmp/flazctl.err)"
	for want in '# TYPE flaz_reads_total counter' '# TYPE flaz_blocks_cached gauge' \
		'flaz_mode{volume="fa",mode="normal"} 1' 'flaz_mode{volume="fb",mode="normal"} 1' \
		'flaz_read_hits_total{volume="fb"} 0' 'flaz_read_misses_total{volume="fb"} 0'; do
		grep -qxF "$want" /tmp/flaz.prom || fail "--prometheus lacks '$want'"
	done
	grep -Eq '^flaz_meta_bytes_total[{]volume="fb"[}] [0-9]+$' /tmp/flaz.prom || fail "--prometheus lacks flaz_meta_bytes_total for fb"
	misses=$(sed -n 's/^flaz_read_misses_total{volume="fa"} \([0-9]*\)$/\1/p' /tmp/flaz.prom)
	[ "${misses:-0}" -ge 16 ] || fail "--prometheus: flaz_read_misses_total for fa is '$misses', want >= 16"
	grep -Eq '^flaz_read_hits_total[{]volume="fa"[}] [1-9][0-9]*$' /tmp/flaz.prom || fail "--prometheus: no read hits for fa after a re-read"
	grep -Eq '^flaz_blocks_cached[{]volume="fa"[}] [1-9][0-9]*$' /tmp/flaz.prom || fail "--prometheus: no blocks cached for fa"
	bad=$(grep -v '^#' /tmp/flaz.prom | grep -Ev '^flaz_[a-z_]+[{]volume="f[ab]"[^}]*[}] -?[0-9.]+$' | head -n 1)
	[ -z "$bad" ] || fail "--prometheus: bad sample line '$bad'"
	flazctl status fb --prometheus >/tmp/flaz.prom 2>&1 || fail "status fb --prometheus failed"
	grep -q 'volume="fa"' /tmp/flaz.prom && fail "status fb --prometheus shows fa"
	grep -qF 'flaz_reads_total{volume="fb"} ' /tmp/flaz.prom || fail "status fb --prometheus lacks fb"
	two_volumes_remove
}

# --cold over an SSD holding a filesystem is refused (nothing is created); --force overwrites it
t_flazctl_cold_foreign() {
	must mkfs.ext4 -q -F $SSD
	flazctl_run create v --hdd $HDD --ssd $SSD --cold
	[ $rc -eq 1 ] || fail "--cold over ext4: exit $rc, want 1"
	grep -q 'holds an ext2/3/4 filesystem.*--force' /tmp/flazctl.out || fail "--cold over ext4: $(cat /tmp/flazctl.out)"
	no_device v "after the refusal"
	must flazctl create v --hdd $HDD --ssd $SSD --cold --force
	must flazctl remove v
	# now it holds a flaz cache: --cold alone is fine
	must flazctl create v --hdd $HDD --ssd $SSD --cold
	must flazctl remove v
}

# --- activation from a flaztab (flazctl activate/deactivate) over the slices two_volumes uses

# The device-mapper UUID flazctl derives from the cache on SSD $1: FLAZ- and the superblock's uuid.
sb_dm_uuid() {
	flazctl dump "$1" --json | sed -n 's/.*"uuid":"\([0-9a-f-]*\)".*/\1/p' | head -n 1 | tr -d '-' | sed 's/^/FLAZ-/'
}

dm_uuid() { dmsetup info -c --noheadings -o uuid "$1"; }

# want_flaz NAME SSD: NAME is a flaz volume whose UUID is the one derived from SSD's cache
want_flaz() {
	dmsetup table "$1" 2>/dev/null | grep -q ' flaz ' || fail "$1 is not a flaz volume: $(dmsetup table "$1" 2>&1)"
	u=$(dm_uuid "$1")
	want=$(sb_dm_uuid "$2")
	[ "$want" != FLAZ- ] || fail "no superblock uuid on $2: $(flazctl dump "$2" 2>&1 | head -n 3)"
	[ "$u" = "$want" ] || fail "$1 has dm UUID '$u', want '$want' (from $2's superblock)"
	flazctl status "$1" --json | grep -q "^{\"schema\":2,\"name\":\"$1\",\"uuid\":\"$u\"," ||
		fail "status --json of $1 lacks uuid $u: $(flazctl status "$1" --json | head -c 120)"
	flazctl status "$1" | grep -Eq "^  uuid +$u\$" || fail "status of $1 lacks its uuid"
}

t_flazctl_activate() {
	fz_slices
	export FLAZTAB=/tmp/flaztab FLAZ_STATE_DIR=/tmp/flaz-state
	rm -rf /tmp/flaz-state
	cat >/tmp/flaztab <<-EOT
	# two volumes and a bad line
	fa /dev/mapper/fz_h1 /dev/mapper/fz_s1 compressor=zstd,extent-kib=64

	fb /dev/mapper/fz_h2 /dev/mapper/fz_s2   # defaults
	bad /dev/mapper/fz_h1 /dev/mapper/fz_s1 extent-kib=48
	EOT
	flazctl_run activate --all
	[ $rc -eq 1 ] || fail "activate --all with a bad line: exit $rc, want 1"
	grep -q '^flazctl: /tmp/flaztab:5: extent-kib must be a power of two' /tmp/flazctl.out ||
		fail "the bad line is not reported with its FILE:LINE: $(cat /tmp/flazctl.out)"
	no_device bad "after its bad line"
	want_flaz fa /dev/mapper/fz_s1
	want_flaz fb /dev/mapper/fz_s2
	dmsetup table fa | grep -q ' compressor zstd extent_kib 64' || fail "fa's options: $(dmsetup table fa)"
	ua=$(dm_uuid fa)
	ub=$(dm_uuid fb)
	[ "$ua" != "$ub" ] || fail "fa and fb have the same UUID $ua"
	# again: nothing to do
	sed -i '/^bad /d' /tmp/flaztab
	flazctl_run activate --all
	[ $rc -eq 0 ] || fail "activate --all with both active: exit $rc, want 0"
	must dd if=/dev/urandom of=/tmp/data bs=1M count=4
	must dd if=/tmp/data of=/dev/mapper/fa bs=1M oflag=direct
	must dd if=/dev/mapper/fa of=/dev/null bs=4k count=1024 iflag=direct
	wait_settled fa
	sum=$(sha_mib /dev/mapper/fa 0 4)
	# deactivate, activate: the same UUIDs, and the cache comes back warm
	flazctl_run deactivate --all
	[ $rc -eq 0 ] || fail "deactivate --all: exit $rc"
	no_device fa "after deactivate --all"
	no_device fb "after deactivate --all"
	flazctl_run activate --all
	[ $rc -eq 0 ] || fail "activate --all again: exit $rc"
	[ "$(dm_uuid fa)" = "$ua" ] || fail "fa's UUID changed across activations: $ua -> $(dm_uuid fa)"
	[ "$(dm_uuid fb)" = "$ub" ] || fail "fb's UUID changed across activations: $ub -> $(dm_uuid fb)"
	want_flaz fa /dev/mapper/fz_s1
	cached=$(status_val fa blocks_cached)
	[ "${cached:-0}" -gt 0 ] || fail "fa came back cold (blocks_cached=$cached)"
	[ "$(sha_mib /dev/mapper/fa 0 4)" = "$sum" ] || fail "fa's data differs after re-activation"
	hits=$(status_val fa read_hits)
	[ "${hits:-0}" -gt 0 ] || fail "no read hits on fa after re-activation (read_hits=$hits)"
	# fb caches blocks of other data first, so that the cache its SSD comes back with
	# holds them: only cold keeps them from loading (warm, they would load, blocks_cached
	# would not be 0, and reads would return this old data over what fb wrote uncached).
	# The uncached writes below leave the HDD's first block as it was, as a filesystem's
	# writes to its files do: the kernel also refuses an SSD whose recorded first block
	# of the HDD differs, which would catch a lost cold only when that block changed.
	must dd if=/dev/urandom of=/tmp/old bs=1M count=4
	must dd if=/tmp/old of=/dev/mapper/fb bs=1M oflag=direct
	must dd if=/dev/mapper/fb of=/dev/null bs=4k count=1024 iflag=direct
	wait_settled fb
	old_cached=$(status_val fb blocks_cached)
	[ "${old_cached:-0}" -ge 900 ] ||
		fail "fb cached $old_cached blocks of the 1024 written and read, want >= 900: the cold check below would test nothing"
	# fb's SSD goes missing: fb comes up as its HDD alone (dm-linear), the mark is made
	must flazctl deactivate fb
	sed -i 's|/dev/mapper/fz_s2|/dev/mapper/fz_late|' /tmp/flaztab
	flazctl_run activate --all
	[ $rc -eq 0 ] || fail "activate --all with fb's SSD missing: exit $rc, want 0"
	grep -q 'SSD /dev/mapper/fz_late is missing: fb is the HDD .* alone, uncached' /tmp/flazctl.out ||
		fail "no warning about fb's missing SSD: $(cat /tmp/flazctl.out)"
	dmsetup table fb | grep -q ' linear ' || fail "fb is not the HDD alone: $(dmsetup table fb)"
	[ -e /tmp/flaz-state/fb ] || fail "no mark that fb ran uncached"
	must dd if=/tmp/data of=/dev/mapper/fb bs=1M seek=1 count=3 oflag=direct
	sum=$(sha_mib /dev/mapper/fb 0 4)
	[ "$(dd if=/tmp/data bs=1M count=3 2>/dev/null | sha256sum)" = "$(sha_mib /dev/mapper/fb 1 3)" ] ||
		fail "fb uncached does not read back what was written"
	[ "$(sha_mib /dev/mapper/fz_h2 0 4)" = "$sum" ] || fail "fb uncached does not write the HDD"
	# the SSD appears (udev would run activate --device): fb becomes its flaz volume, cold
	must dmsetup create fz_late --table "0 $((FZ_SSD_MIB * 2048)) linear $SSD $((FZ_SSD_MIB * 2048))"
	flazctl_run activate --device /dev/mapper/fz_h1
	[ $rc -eq 0 ] || fail "activate --device for fa's HDD (active): exit $rc"
	flazctl_run activate --device /dev/mapper/fz_late
	[ $rc -eq 0 ] || fail "activate --device fz_late: exit $rc: $(cat /tmp/flazctl.out)"
	want_flaz fb /dev/mapper/fz_late
	late_cached=$(status_val fb blocks_cached)
	[ "$late_cached" = 0 ] ||
		fail "fb's cache did not start cold after running uncached: blocks_cached=$late_cached (it held $old_cached)"
	[ -e /tmp/flaz-state/fb ] && fail "the uncached mark of fb is left"
	[ "$(sha_mib /dev/mapper/fb 0 4)" = "$sum" ] || fail "fb's data differs after it was cached again"
	# a device no line names: quiet, exit 0
	flazctl_run activate --device /dev/mapper/fz_s1
	[ $rc -eq 0 ] && [ ! -s /tmp/flazctl.out ] || fail "activate --device of an unnamed device: exit $rc, '$(cat /tmp/flazctl.out)'"
	# a missing HDD fails its line only
	echo "fc /dev/mapper/fz_nohdd /dev/mapper/fz_s1" >>/tmp/flaztab
	flazctl_run activate --all
	[ $rc -eq 1 ] || fail "activate --all with a missing HDD: exit $rc, want 1"
	grep -q '^flazctl: /tmp/flaztab:[0-9]*: fc: HDD /dev/mapper/fz_nohdd is missing' /tmp/flazctl.out ||
		fail "missing HDD: $(cat /tmp/flazctl.out)"
	flazctl_run deactivate --all
	[ $rc -eq 0 ] || fail "deactivate --all: exit $rc"
	for v in fa fb fc; do no_device $v "after deactivate --all"; done
	for d in fz_h1 fz_h2 fz_s1 fz_s2 fz_late; do must dmsetup remove $d; done
}

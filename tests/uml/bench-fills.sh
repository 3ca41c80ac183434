# Sourced by bench-init.sh (the UML bench's third boot, FLAZ_PART=fills): issue 33's fills at
# the CPU's own speed, where the emulated VM's figures were CPU-bound (an install compresses):
# whether a set that fits gets cached, how many fills are skipped and why, on zipf loads, and
# the write-heavy mixed load. The HDD is a file on the host's tmpfs with no delay, so reads
# come in as fast as the CPU takes them: the hardest case for the install backlog. Figures
# only. Uses bench-init.sh's say, flaz_val, settled, hits, hit_pct, N, S, HDD and SSD.

FL_SET_MIB=160			# 2:1 data: about 90 MiB compressed, in the 128 MiB SSD
FL_ZIPF_READS=120000
FL_KEYS="fills fills_skipped skipped_space skipped_busy skipped_memory skipped_table skipped_hot"

# fl_gen MIB: the HDD's first MIB of 2:1 data
fl_gen() {
	fio --name=gen --filename=$HDD --rw=write --bs=1M --size="$1"M --direct=1 \
		--buffer_compress_percentage=50 --refill_buffers --eta=never --output=/dev/null
}

# fl_create [OPTION...]: a cold volume vol over FL_HDD (the HDD unless set)
fl_create() { dmsetup create vol --table "0 $N flaz ${FL_HDD:-$HDD} $SSD $(($# + 1)) $* cold"; }
fl_cached_pct() { echo "$(flaz_val blocks_cached) $1" | awk '{ printf "%.1f", 100 * $1 / ($2 * 256) }'; }
# the skips of FL_KEYS as "fills F, skipped K (P%): space S, busy B, ..."
fl_skips() {
	dmsetup status vol | tr ' ' '\n' | awk -F= -v keys="$FL_KEYS" '
		{ v[$1] = $2 }
		END {
			t = v["fills"] + v["fills_skipped"]
			printf "fills %d, skipped %d (%.1f%%):", v["fills"], v["fills_skipped"],
				(t > 0 ? 100 * v["fills_skipped"] / t : 0)
			n = split(keys, k, " ")
			for (i = 3; i <= n; i++) printf " %s %d", substr(k[i], 9), v[k[i]]
		}'
}
ssd_sect() { awk '{ print $7 }' /sys/block/ubdb/stat; }

# A set that fits, read three times at random (4 KiB, 16 at a time, each block once a pass):
# cached after each pass (goal >= 95% after the third); then the issue's convergence case, the
# set read twice in order in 1 MiB reads.
fl_fits() {
	say
	say "a set of ${FL_SET_MIB} MiB of 2:1 data that fits the 128 MiB SSD compressed, lz4, no sequential"
	say "cutoff: blocks cached after each pass (% of the set), and the fills skipped so far, by reason"
	fl_gen $FL_SET_MIB
	fl_create seq_cutoff_kib 0
	for p in 1 2 3; do
		fio --name=r --filename=/dev/mapper/vol --size=${FL_SET_MIB}M --rw=randread --bs=4k \
			--ioengine=libaio --iodepth=16 --direct=1 --eta=never --output=/dev/null
		settled
		say "  random 4 KiB, pass $p: cached $(fl_cached_pct $FL_SET_MIB)%; $(fl_skips)"
	done
	say "  a set that fits, read three times at random: $(fl_cached_pct $FL_SET_MIB)% cached (goal >= 95%)"
	dmsetup remove vol
	fl_create seq_cutoff_kib 0
	for p in 1 2; do
		fio --name=r --filename=/dev/mapper/vol --size=${FL_SET_MIB}M --rw=read --bs=1M \
			--ioengine=libaio --iodepth=4 --direct=1 --eta=never --output=/dev/null
		settled
		say "  in order, 1 MiB reads, pass $p: cached $(fl_cached_pct $FL_SET_MIB)%; $(fl_skips)"
	done
	dmsetup remove vol
}

# fl_zipf TIMES MODE [OPTION...]: zipf:0.9 over TIMES times the SSD: the set read once in
# order, then FL_ZIPF_READS random 4 KiB reads, 16 at a time: their hit %, and the fills
# skipped over both, by reason. MODE tmpfs: the HDD as it is; disk: behind dm-delay 4 ms,
# the in-order read paced to 200 MB/s, as a disk streams.
fl_zipf() {
	local times=$1 mode=$2 mib=$(($1 * 128)) h0 h1 rate=
	shift 2
	fl_gen $mib
	if [ "$mode" = disk ]; then
		dmsetup create fldisk --table "0 $N delay $HDD 0 4"
		FL_HDD=/dev/mapper/fldisk
		rate=--rate=200m
	fi
	fl_create seq_cutoff_kib 0 "$@"
	fio --name=r --filename=/dev/mapper/vol --size=${mib}M --rw=read --bs=1M --ioengine=libaio \
		--iodepth=4 --direct=1 $rate --eta=never --output=/dev/null
	settled
	h0=$(hits flaz)
	fio --name=z --filename=/dev/mapper/vol --size=${mib}M --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=16 --direct=1 --random_distribution=zipf:0.9 \
		--number_ios=$FL_ZIPF_READS --norandommap --randrepeat=0 --eta=never --output=/dev/null
	settled
	h1=$(hits flaz)
	say "  zipf:0.9 over ${times}x the SSD, HDD $mode${*:+, $*}: hit $(hit_pct "$h0" "$h1")%; $(fl_skips)"
	dmsetup remove vol
	if [ "$mode" = disk ]; then
		dmsetup remove fldisk
		FL_HDD=
	fi
}

# The QEMU bench's rscan row at native speed: a hot 16 MiB read three times at random, one
# random pass of 4 KiB reads over 384 MiB (3x the SSD, each block once, 16 at a time), then
# the hot 16 MiB again: the hit % of that last read. OPTIONs for the volume.
fl_hotscan() {
	local h0 h1
	fl_gen 400
	fl_create "$@"
	for p in 1 2 3; do
		fio --name=h --filename=/dev/mapper/vol --offset=384M --size=16M --rw=randread --bs=4k \
			--ioengine=libaio --iodepth=16 --direct=1 --eta=never --output=/dev/null
	done
	settled
	fio --name=s --filename=/dev/mapper/vol --size=384M --rw=randread --bs=4k --ioengine=libaio \
		--iodepth=16 --direct=1 --eta=never --output=/dev/null
	settled
	h0=$(hits flaz)
	fio --name=h --filename=/dev/mapper/vol --offset=384M --size=16M --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=16 --direct=1 --eta=never --output=/dev/null
	h1=$(hits flaz)
	say "  hot 16 MiB after a random one-pass read of 3x the SSD${*:+, $*}: hit $(hit_pct "$h0" "$h1")%; $(fl_skips)"
	dmsetup remove vol
}

# The QEMU bench's write-heavy mixed load (issue 33): 4 KiB writes of 2:1 data uniformly over
# 384 MiB (3x the SSD) beside zipf:1.2 reads over its first 128 MiB, about 60% writes; a 30 s
# warm-up, then 30 s measured: the reads' hit % and SSD MiB written per GiB of user I/O (fio's
# flow weights pace the jobs, so their IOPS say nothing of the devices here).
fl_mixed_load() {
	fio --filename="$1" --ioengine=libaio --direct=1 --bs=4k --randrepeat=0 --norandommap \
		--time_based --runtime=30 --eta=never --minimal --output="$2" \
		--name=w --rw=randwrite --size=384M --iodepth=4 --flow=3 \
		--buffer_compress_percentage=50 --refill_buffers \
		--name=r --rw=randread --size=128M --iodepth=4 --flow=2 \
		--random_distribution=zipf:1.2
}

fl_mixed_row() {
	local name=$1 dev=$2 cfg=$3 w0 h0 h1 kib ssd
	w0=$(ssd_sect)
	fl_mixed_load "$dev" /tmp/mwarm
	h0=$(hits "$cfg")
	fl_mixed_load "$dev" /tmp/mrun
	h1=$(hits "$cfg")
	kib=$(cat /tmp/mwarm /tmp/mrun | awk -F';' 'NR % 2 == 1 { k += $47 } NR % 2 == 0 { k += $6 } END { print k }')
	ssd=$(echo "$w0 $(ssd_sect) $kib" | awk '$3 > 0 { printf "%.0f", ($2 - $1) / 2048 * 1048576 / $3 }')
	printf '::%-14s %6s %12s\n' "$name" \
		"$(hit_pct "$h0" "$h1")" \
		"${ssd:--}"
}

fl_mixed() {
	say
	say "mixed: 4 KiB writes over 384 MiB (uniform) beside zipf:1.2 reads over its first 128 MiB, about"
	say "60% writes, 30 s warm-up, 30 s measured; flaz-wcached: a written block installed only if"
	say "it was cached or a ghost (the bench module's write_admit_cached); flaz-lz4: all, on probation"
	printf '::%-14s %6s %12s\n' config "hit%" "SSD MiB/GiB"
	fl_gen 384
	fl_mixed_row none $HDD none
	dmcache_up $HDD
	fl_mixed_row dm-cache /dev/mapper/cached dm-cache
	dmcache_down
	for w in 0 1; do
		echo $w >/sys/module/dm_flaz/parameters/write_admit_cached
		fl_create
		fl_mixed_row "flaz-$([ $w = 1 ] && echo wcached || echo lz4)" /dev/mapper/vol flaz
		say "  $(fl_skips)"
		dmsetup remove vol
	done
	echo 0 >/sys/module/dm_flaz/parameters/write_admit_cached
}

fills_section() {
	say "UML $(uname -r), one CPU at the host's speed, no sanitizers; HDD 1 GiB and SSD 128 MiB, files"
	say "on the host's tmpfs, the HDD with no delay (reads as fast as the CPU takes them)"
	fl_fits
	say
	say "zipf loads, lz4, no sequential cutoff: the set read once in order, then $FL_ZIPF_READS reads;"
	say "probation_percent 0: one log (admission off)"
	fl_zipf 2 tmpfs
	fl_zipf 2 tmpfs probation_percent 0
	fl_zipf 4 tmpfs
	fl_zipf 4 tmpfs probation_percent 0
	fl_zipf 4 disk
	fl_hotscan
	fl_hotscan probation_percent 0
	fl_mixed
}

# e2e checks with a network block device as the HDD: a slice of the HDD (nhdd) is served over
# the guest's own loopback by nbd-server and connected with the kernel's nbd client
# (nbd-client, netlink, I/O timeout N_TIMEOUT s); volume nv caches it on a slice of the SSD.
#   nbd-data: fio verify through the volume, re-reads hit, the bytes are the served disk's;
#   nbd-warm-restart: removed and created again without cold, the volume comes back warm;
#   nbd-server-gone (killed) and nbd-server-hung (stopped: its socket stays open), mid-I/O:
#     I/O that needs the HDD fails with an error within the timeout and a margin (the
#     kernel's nbd fails the requests in flight at the timeout, also when the server died,
#     and new ones at once), hits are still served and right, hdd_errors counts, and the
#     mode stays normal (modes follow SSD faults only: docs/operations.md "Faults and modes"); once a server is
#     back the volume works again and returns nothing stale, also after a warm restart.
# flaz's HDD is a dm-linear (nlin) over the nbd device, so that once a server is back nlin
# can be reloaded onto a new nbd device: nbd-client 3.24 cannot give the old device a new
# connection while flaz holds it open (a netlink connect is refused, "nbdX already in use";
# -persist reconnects only once, the moment the link drops, while the server is still gone,
# and then exits).
# Uses wait_settled, show_status, sha_block, run_fio (e2e-cache.sh), p_data, errors_of and note
# (e2e-persist.sh).

N_HDD_MIB=64
N_SSD_MIB=32
N_PORT=10809
N_TIMEOUT=10
# what a command that needs the HDD may take with the server gone: the timeout, and a margin
# for TCG on a loaded host
N_BOUND=$((N_TIMEOUT + 20))
# the fio data set at the volume's start
N_FIO_MIB=16
# where nbd-server-gone's writer writes (4 MiB), after its data set (p_data)
N_W_MIB=8
NHDD=/dev/mapper/nhdd
NSSD=/dev/mapper/nssd
NLIN=/dev/mapper/nlin
NV=/dev/mapper/nv
# what a check has running, for n_down: nbd-server's pid, the connected nbd devices' numbers
# and a background fio's pid
N_SRV=
N_NBDS=
N_WRITER=

# Hundredths of a second since boot, and the seconds since such a time (X.YY).
uptime_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }
secs_since() {
	ss_d=$(($(uptime_cs) - $1))
	printf '%d.%02d' $((ss_d / 100)) $((ss_d % 100))
}

# Start an nbd-server that exports nhdd on 127.0.0.1:N_PORT and serves one connection
# (-d: no fork, so the connection dies with N_SRV); wait until it accepts. Listening is not
# enough: nbd-server 3.24 listens first and then generates its TLS Diffie-Hellman parameters
# (0.1 to 0.9 s of CPU natively, tens of seconds under TCG), and a client that connects in
# between waits in negotiation; it accepts once it blocks in pselect6 (270) or select (23),
# x86_64's numbers (the guests are x86_64).
n_serve() {
	nbd-server -C /tmp/nbd.conf -d >/tmp/nbd-server.log 2>&1 &
	N_SRV=$!
	ns_t0=$(uptime_cs)
	until case $(cut -d' ' -f1 "/proc/$N_SRV/syscall" 2>/dev/null) in 270 | 23) true ;; *) false ;; esac; do
		kill -0 $N_SRV 2>/dev/null || fail "nbd-server exited: $(tail -n 2 /tmp/nbd-server.log | tr '\n' ' ')"
		[ $(($(uptime_cs) - ns_t0)) -lt 30000 ] ||
			fail "nbd-server does not wait for connections after 300 s (its syscall: $(cat "/proc/$N_SRV/syscall"))"
		sleep 0.1
	done
	grep -q ":$(printf '%04X' $N_PORT) 00000000:0000 0A" /proc/net/tcp ||
		fail "nbd-server waits for connections but does not listen on port $N_PORT"
	note "nbd-server accepts after $(secs_since "$ns_t0") s"
}

# Connect /dev/nbd$1 to the server.
n_connect() {
	timeout 30 nbd-client -N hdd -t $N_TIMEOUT 127.0.0.1 $N_PORT "/dev/nbd$1" >/tmp/nc.out 2>&1 ||
		fail "nbd-client /dev/nbd$1 exited $?: $(tail -n 1 /tmp/nc.out); nbd-server (pid $N_SRV, $(kill -0 "$N_SRV" 2>/dev/null && echo alive || echo gone)) said: $(tail -n 3 /tmp/nbd-server.log | tr '\n' ' '); sockets on the port: $(grep -c ":$(printf '%04X' $N_PORT) " /proc/net/tcp)"
	N_NBDS="$N_NBDS $1"
	[ "$(sectors "/dev/nbd$1")" = $((N_HDD_MIB * 2048)) ] ||
		fail "/dev/nbd$1 has $(sectors "/dev/nbd$1") sectors connected, want $((N_HDD_MIB * 2048))"
	[ "$(cat "/sys/block/nbd$1/queue/write_cache")" = "write back" ] ||
		fail "/dev/nbd$1 has write_cache '$(cat "/sys/block/nbd$1/queue/write_cache")', want 'write back' (flush = true)"
}

n_disconnect() {
	must timeout 30 nbd-client -d "/dev/nbd$1"
	N_NBDS=$(echo "$N_NBDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

# The slices, the loopback, the server, /dev/nbd0 and nlin over it.
# shellcheck disable=SC2153 # HDD and SSD are lib.sh's
n_up() {
	must ifconfig lo 127.0.0.1 up
	must modprobe nbd
	must dmsetup create nhdd --table "0 $((N_HDD_MIB * 2048)) linear $HDD 0"
	must dmsetup create nssd --table "0 $((N_SSD_MIB * 2048)) linear $SSD 0"
	# flush and fua: the nbd device then has a write cache, and flaz's HDD flushes reach the
	# server (fdatasync), as they would a real disk
	printf '[generic]\n\tlistenaddr = 127.0.0.1\n\tport = %s\n[hdd]\n\texportname = %s\n\tflush = true\n\tfua = true\n' \
		$N_PORT $NHDD >/tmp/nbd.conf
	n_serve
	n_connect 0
	must dmsetup create nlin --table "0 $((N_HDD_MIB * 2048)) linear /dev/nbd0 0"
}

# n_down check|trap: take down whatever the check left, the server last (removing nv writes
# to the HDD). "check" fails the check if anything stays; "trap" (trap 'n_down trap' EXIT,
# for a check that failed) only says so: the failure's own reason is the one to report.
n_down() {
	[ -n "$N_WRITER" ] && kill -9 "$N_WRITER" 2>/dev/null && wait "$N_WRITER"
	N_WRITER=
	for nd in nv nlin; do
		dmsetup info $nd >/dev/null 2>&1 && dmsetup remove $nd
	done
	for nd in $N_NBDS; do
		timeout 30 nbd-client -d "/dev/nbd$nd"
	done
	[ -n "$N_SRV" ] && kill -9 $N_SRV 2>/dev/null && wait $N_SRV
	for nd in nssd nhdd; do
		dmsetup info $nd >/dev/null 2>&1 && dmsetup remove $nd
	done
	nd_left=$(dmsetup ls | grep -E '^(nv|nlin|nssd|nhdd)[[:space:]]' | cut -f1 | tr '\n' ' ')
	for nd in $N_NBDS; do
		[ "$(cat "/sys/block/nbd$nd/size")" = 0 ] || nd_left="$nd_left nbd$nd"
	done
	N_NBDS=
	N_SRV=
	trap - EXIT
	[ -z "$nd_left" ] && return 0
	[ "$1" = trap ] && echo "left after the check: $nd_left" && return 0
	fail "left after the check: $nd_left"
}

# n_create [OPTIONS...]: volume nv over nlin, cached on nssd.
n_create() { must dmsetup create nv --table "0 $(sectors $NLIN) flaz $NLIN $NSSD $# $*"; }

# n_fio WHAT ARGS...: fio's data set on nv (random 4 KiB and 64 KiB writes of 2:1
# compressible data, verified with crc32c); fails the check on any error.
n_fio() {
	nf_what=$1
	shift
	FIO_DEV=$NV
	run_fio "$nf_what" --name=nbd --rw=randwrite --bssplit=4k/50:64k/50 --size=${N_FIO_MIB}M \
		--randseed=7 --refill_buffers --buffer_compress_percentage=50 --buffer_compress_chunk=512 \
		--verify=crc32c "$@"
	FIO_DEV=
}

# Every block of nv equals the served disk's (O_DIRECT on both).
n_same_as_hdd() {
	ns_t0=$(uptime_cs)
	same_blocks $NV $NHDD "$1: nv against the disk behind the server"
	echo "blkcmp $1: $(secs_since "$ns_t0") s"
}

# The read_hits and read_misses (N_HITS, N_MISSES) that fio's verify pass over the data set adds.
n_reread() {
	nr_h=$(status_val nv read_hits)
	nr_m=$(status_val nv read_misses)
	n_fio "$1" --verify_only
	N_HITS=$(($(status_val nv read_hits) - nr_h))
	N_MISSES=$(($(status_val nv read_misses) - nr_m))
	echo "$1: $N_HITS read_hits, $N_MISSES read_misses"
}

# fio writes and verifies its data set through the volume; once the installs have settled,
# reading it again hits >= 90%; the volume returns the served disk's bytes.
t_nbd_data() {
	trap 'n_down trap' EXIT
	n_up
	n_create cold
	n_fio write
	wait_settled nv
	n_reread re-read
	n_same_as_hdd "after fio"
	show_status nv
	must dmsetup remove nv
	n_down check
	[ $N_HITS -ge $(((N_HITS + N_MISSES) * 9 / 10)) ] ||
		fail "re-reading fio's data set: $N_HITS read_hits, $N_MISSES read_misses, want >= 90% hits"
}

# The volume, removed cleanly and created again without cold, loads >= 90% of what it had
# cached, fio verifies its data set with >= 90% hits, and it returns the served disk's bytes.
t_nbd_warm_restart() {
	trap 'n_down trap' EXIT
	n_up
	n_create cold
	n_fio write
	wait_settled nv
	c0=$(status_val nv blocks_cached)
	must dmsetup remove nv
	n_create
	c1=$(status_val nv blocks_cached)
	n_reread warm-read
	n_same_as_hdd "after the warm restart"
	show_status nv
	must dmsetup remove nv
	n_down check
	echo "blocks_cached: $c0 before the restart, $c1 after"
	[ "$c0" -gt 0 ] || fail "blocks_cached=0 after fio wrote and verified $N_FIO_MIB MiB"
	[ "$c1" -ge $((c0 * 9 / 10)) ] || fail "blocks_cached=$c1 after the warm restart, $c0 before: want >= 90%"
	[ $N_HITS -ge $(((N_HITS + N_MISSES) * 9 / 10)) ] ||
		fail "verifying fio's data set after the warm restart: $N_HITS read_hits, $N_MISSES read_misses, want >= 90% hits"
}

# n_timed CMD...: run CMD, stopped after N_BOUND s; N_RC is its status (timeout's when it
# had to be stopped), N_T the seconds it took.
n_timed() {
	nt_t0=$(uptime_cs)
	timeout $N_BOUND "$@" >/tmp/timed.out 2>&1
	N_RC=$?
	N_T=$(secs_since "$nt_t0")
	cat /tmp/timed.out
	echo "'$*' -> $N_RC after $N_T s"
}

# n_failed WHAT: what n_timed ran last failed with an error of its own.
n_failed() {
	case $N_RC in
	0) fail "$1 succeeded with the server $N_HOW" ;;
	124 | 137 | 143) fail "$1 still hung after $N_BOUND s with the server $N_HOW (NBD timeout $N_TIMEOUT s)" ;;
	esac
	return 0
}

# t_nbd_server_gone kill|stop: the data set is cached at the volume's start and a fio writer
# runs further on when the server is killed (gone) or stopped (hung). Right away, while the
# writer's requests wait for the NBD timeout, reading most of the data set hits and returns
# its bytes (a hit never waits for the HDD); within the timeout and the margin the writer
# fails with EIO, and then so do a write into the data set, a read of the block it wrote
# (the failed write dropped its line) and a read of a block never cached; a suspend (its
# commit cannot flush the HDD) and resume still end, and the data set is still served;
# hdd_errors counts, ssd_errors and meta_errors do not, the mode stays normal. A new server
# on a new nbd device under nlin: the block whose write failed reads what the disk holds
# (the data set's), fio writes and verifies where the writer was, every block equals the
# disk's, also after a remove and a warm create.
t_nbd_server_gone() {
	N_HOW=killed
	[ "$1" = stop ] && N_HOW=stopped
	trap 'n_down trap' EXIT
	p_data
	n_up
	n_create cold
	blocks=$((P_DATA_MIB * 256))
	must dd if="$P_DATA" of=$NV bs=1M oflag=direct
	[ "$(sha_mib $NV 0 "$P_DATA_MIB")" = "$P_SHA" ] || fail "the data set written through nv reads back wrong"
	wait_settled nv
	h0=$(status_val nv read_hits)
	[ "$(sha_mib $NV 0 "$P_DATA_MIB")" = "$P_SHA" ] || fail "the data set read back wrong from the cache"
	h1=$(status_val nv read_hits)
	[ $((h1 - h0)) -eq $blocks ] ||
		fail "re-reading the data set added $((h1 - h0)) read_hits, want all $blocks blocks cached before the server goes"
	# the block the failed write goes to, and one never read or written through nv
	wblk=$((blocks * 3 / 4))
	cold=$(((N_HDD_MIB - 1) * 256))
	want_w=$(dd if="$P_DATA" bs=4k skip=$wblk count=1 2>/dev/null | sha256sum)
	want_hit=$(dd if="$P_DATA" bs=4k count=$wblk 2>/dev/null | sha256sum)
	e0=$(status_val nv hdd_errors)
	# the writer: 4 KiB random writes over 4 MiB from N_W_MIB, until one fails
	fio --name=writer --filename=$NV --ioengine=libaio --direct=1 --iodepth=4 --rw=randwrite \
		--bs=4k --offset=${N_W_MIB}M --size=4M --loops=1000 >/tmp/writer.out 2>&1 &
	N_WRITER=$!
	w0=$(status_val nv writes)
	i=0
	while kill -0 $N_WRITER 2>/dev/null && [ "$(status_val nv writes)" -lt $((w0 + 64)) ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 $N_WRITER 2>/dev/null || fail "the writer ended before the server went: $(tail -n 3 /tmp/writer.out | tr '\n' ' ')"
	[ "$(status_val nv writes)" -ge $((w0 + 64)) ] || fail "the writer wrote < 64 blocks in 60 s"
	case $1 in
	kill) kill -9 $N_SRV ;;
	stop) kill -STOP $N_SRV ;;
	esac
	t_gone=$(uptime_cs)
	echo "server $N_HOW at $(cut -d' ' -f1 /proc/uptime) s, $(($(status_val nv writes) - w0)) writes in"
	# hits, while the writer's requests wait for the timeout
	h2=$(status_val nv read_hits)
	n_timed dd if=$NV of=/tmp/nhit bs=64k count=$((wblk / 16)) iflag=direct
	hit_rc=$N_RC hit_t=$N_T
	# the writer's requests are still stuck on the gone server (they end at the NBD timeout):
	# a read that ended before them did not wait for the HDD
	hit_first=
	kill -0 $N_WRITER 2>/dev/null && hit_first=1
	hit_sha=$(sha256sum </tmp/nhit)
	h3=$(status_val nv read_hits)
	while kill -0 $N_WRITER 2>/dev/null && [ "$(secs_since "$t_gone" | cut -d. -f1)" -lt $N_BOUND ]; do
		sleep 0.1
	done
	writer_t=$(secs_since "$t_gone")
	kill -0 $N_WRITER 2>/dev/null &&
		fail "the writer still runs $writer_t s after the server was $N_HOW (NBD timeout $N_TIMEOUT s)"
	wait $N_WRITER
	writer_rc=$?
	N_WRITER=
	cat /tmp/writer.out
	echo "the writer ended $writer_t s after the server was $N_HOW, exit $writer_rc"
	[ $writer_rc -ne 0 ] || fail "the writer succeeded with the server $N_HOW"
	grep -q 'Input/output error' /tmp/writer.out ||
		fail "the writer failed, but not with an I/O error: $(grep -i error /tmp/writer.out | head -n 2 | tr '\n' ' ')"
	[ "$hit_rc" = 0 ] || fail "reading the cached data set failed ($hit_rc after $hit_t s) with the server $N_HOW"
	[ "$hit_sha" = "$want_hit" ] || fail "the cached data set read back wrong with the server $N_HOW"
	[ $((h3 - h2)) -eq "$wblk" ] ||
		fail "reading $wblk cached blocks with the server $N_HOW added $((h3 - h2)) read_hits, want $wblk (evictions=$(status_val nv evictions))"
	must dd if=/dev/urandom of=/tmp/nblk bs=4k count=1
	n_timed dd if=/tmp/nblk of=$NV bs=4k seek=$wblk count=1 oflag=direct conv=notrunc
	n_failed "a write into the cached data set"
	write_t=$N_T
	n_timed dd if=$NV of=/dev/null bs=4k skip=$wblk count=1 iflag=direct
	n_failed "reading the block whose write failed"
	n_timed dd if=$NV of=/dev/null bs=4k skip=$cold count=1 iflag=direct
	n_failed "reading a block never cached"
	miss_t=$N_T
	# a suspend commits, and cannot flush the HDD (its superblock is then not clean): it
	# still ends, and so does the resume
	e_s=$(status_val nv hdd_errors)
	n_timed dmsetup suspend nv
	[ "$N_RC" = 0 ] || fail "suspending nv with the server $N_HOW: exit $N_RC after $N_T s"
	suspend_t=$N_T
	n_timed dmsetup resume nv
	[ "$N_RC" = 0 ] || fail "resuming nv with the server $N_HOW: exit $N_RC after $N_T s"
	[ "$(status_val nv hdd_errors)" -gt "$e_s" ] ||
		fail "hdd_errors=$e_s before and after a suspend with the server $N_HOW: its HDD flush did not fail?"
	# again: the rest of the data set is still there
	[ "$(sha_block $NV 0)" = "$(dd if="$P_DATA" bs=4k count=1 2>/dev/null | sha256sum)" ] ||
		fail "the data set's first block read back wrong after the failed I/O and a suspend"
	e1=$(status_val nv hdd_errors)
	mode=$(status_val nv mode)
	errors=$(dmsetup status nv | errors_of)
	show_status nv
	[ "$e1" -gt "$e0" ] || fail "hdd_errors=$e1 after I/O failed on the HDD, $e0 before: want more"
	[ "$errors" = 0 ] || fail "ssd_errors + meta_errors = $errors with only the HDD failing, want 0"
	[ "$mode" = normal ] || fail "mode=$mode with only the HDD failing, want normal"
	# the server back, on a new nbd device under nlin
	kill -9 $N_SRV 2>/dev/null
	wait $N_SRV
	n_serve
	n_connect 1
	must dmsetup suspend nlin
	must dmsetup load nlin --table "0 $((N_HDD_MIB * 2048)) linear /dev/nbd1 0"
	must dmsetup resume nlin
	n_disconnect 0
	# from here on no HDD I/O may fail
	e_back=$(status_val nv hdd_errors)
	[ "$(sha_block $NV $wblk)" = "$want_w" ] ||
		fail "the block whose write failed does not read what the disk holds (the data set's) with the server back"
	n_fio write-again --offset=${N_W_MIB}M --size=4M
	must dd if=/tmp/nblk of=$NV bs=4k seek=$wblk count=1 oflag=direct conv=notrunc
	[ "$(sha_block $NV $wblk)" = "$(sha256sum </tmp/nblk)" ] || fail "the block written with the server back reads back wrong"
	n_same_as_hdd "with the server back"
	mode1=$(status_val nv mode)
	e_end=$(status_val nv hdd_errors)
	show_status nv
	must dmsetup remove nv
	n_create
	c1=$(status_val nv blocks_cached)
	echo "blocks_cached=$c1 after the warm restart"
	n_same_as_hdd "after a warm restart with the server back"
	mode2=$(status_val nv mode)
	show_status nv
	must dmsetup remove nv
	n_down check
	echo "hdd_errors: $e0 before the server went, $e1 after the failed I/O, $e_back once it was back, $e_end at the end"
	note "times after the server was $N_HOW: cached read $hit_t s, writer failed $writer_t s, write $write_t s, uncached read $miss_t s, suspend $suspend_t s"
	[ "$mode1" = normal ] || fail "mode=$mode1 with the server back, want normal"
	[ "$e_end" = "$e_back" ] || fail "hdd_errors went $e_back -> $e_end with the server back, want no more"
	[ "$mode2" = normal ] || fail "mode=$mode2 after the warm restart, want normal"
	[ "$c1" -gt 0 ] || fail "blocks_cached=0 after the warm restart with the server back"
	# a hit must not wait for the HDD: it ends while the writer still waits for the timeout
	[ -n "$hit_first" ] ||
		fail "reading the cached data set ended after the writer's requests to the $N_HOW server had failed ($hit_t s; NBD timeout $N_TIMEOUT s): it waited for the HDD"
}

# shellcheck shell=bash
# Host helpers shared by run.sh, demo.sh and bench.sh (bash; sourced). Set KVER before sourcing.
QEMU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$QEMU_DIR/../.." && pwd)
export FLAZ_CACHE=${FLAZ_CACHE:-$REPO/.cache}
# a bound that catches a hung guest; the 6.12 e2e suite took 857 to 968 s alone until stop
# 40, 1,602 s alone on the slower host of 2026-11-28 and 2,345 s alone on 2026-12-02, and
# make test runs a second guest beside it: about 1.5x as long (3,000 s was passed at 2d9a97e)
QEMU_TIMEOUT=${FLAZ_QEMU_TIMEOUT:-4000}
# the results disk holds the results from offset 0 and the guest's dmesg from 1 MiB
# (guest/lib.sh: DMESG_OFFSET_MIB)
DMESG_OFFSET=$((1024 * 1024))

# 6.12.117+deb12-amd64 -> 6.12, 6.1.0-56-amd64 -> 6.1, 6.12.117+deb12-rt-amd64 -> 6.12-rt,
# 7.3.4+deb13-amd64 -> 7.3
series_of() {
	local s
	s=$(cut -d. -f1,2 <<<"$1")
	case $1 in *-rt-*) s+=-rt ;; esac
	echo "$s"
}

# Where kernel KVER's boot/ and lib/modules/ are: / for a kernel installed on this host,
# else the unpacked Debian 13 backports package (tests/lib/trixie.sh).
kroot_of() {
	if [ -f "/boot/vmlinuz-$1" ]; then
		echo /
	else
		"$REPO/tests/lib/trixie.sh" prepare "$1"
	fi
}

# The module for KVER, built by the caller or else here, in its own copy of the sources;
# built again when a source is newer than it, so a bench or a suite run alone after an edit
# never boots the module as it was.
module_for() {
	# the bench's module (FLAZ_BENCH: costs.c, write_admit_cached) is kept apart from the tests'
	local cache=$FLAZ_CACHE${FLAZ_BENCH:+/bench}
	local ko=$cache/build/$1/drivers/md/dm-flaz/dm-flaz.ko
	if [ ! -f "$ko" ] || [ -n "$(find "$REPO/Kbuild" "$REPO/drivers" -newer "$ko" -print -quit)" ]; then
		echo "building dm-flaz.ko for $1" >&2
		FLAZ_CACHE=$cache "$REPO/tests/lib/build-module.sh" "$1" >&2 || return 1
	fi
	echo "$ko"
}

# flazctl, made again if a source changed (make decides).
flazctl_bin() {
	make -s -C "$REPO/tools/flazctl" >&2 || return 1
	echo "$REPO/tools/flazctl/flazctl"
}

# Build the initramfs for KVER; prints its path.
initramfs_for() {
	local ko ctl kroot out=$FLAZ_CACHE/qemu/$1/initramfs.cpio
	kroot=$(kroot_of "$1") && ko=$(module_for "$1") && ctl=$(flazctl_bin) &&
		KROOT=$kroot "$QEMU_DIR/build-initramfs.sh" "$1" "$out" "$ko" "$ctl" >&2 && echo "$out"
}

# Fresh sparse disks in run dir $1: vda HDD 512 MiB, vdb SSD 128 MiB, vdc results 8 MiB;
# then vdd HDD 64 MiB and vde SSD 32 MiB with 4096-byte logical blocks (4Kn), and vdf an
# SSD of 32 MiB that takes discards (QEMU punches holes: a discarded extent reads zeros).
make_disks() {
	rm -f "$1"/{hdd,ssd,results,hdd4k,ssd4k,ssddisc,hddbig,ssdbig}.img
	truncate -s 512M "$1/hdd.img"
	truncate -s 128M "$1/ssd.img"
	truncate -s 8M "$1/results.img"
	truncate -s 64M "$1/hdd4k.img"
	truncate -s 32M "$1/ssd4k.img"
	truncate -s 32M "$1/ssddisc.img"
	# sparse: only what is written takes room on the host
	truncate -s 256G "$1/hddbig.img"
	truncate -s 64G "$1/ssdbig.img"
}

# boot_vm KVER INITRD RUNDIR SUITE SERIAL: boot the guest on run dir RUNDIR's disks and run
# SUITE; SERIAL is a qemu -serial value; FLAZ_QEMU_MEM its RAM in MiB (2048). Each disk is
# an explicit -device, so the guest names them vda, vdb, ... in this order. Returns qemu's
# status (33 = the suite completed, 124 = timeout). tsc=reliable: on a loaded host the
# clocksource watchdog finds the emulated TSC unstable mid-run, and the kernel's switch away
# from it patches its own text, which multi-threaded TCG now and then turns into an int3 oops
# (seen on 7.3).
boot_vm() {
	local kroot hdd="file=$3/hdd.img,format=raw,cache=unsafe" ssd="file=$3/ssd.img,format=raw,cache=unsafe"
	kroot=$(kroot_of "$1") || return 1
	# FLAZ_NBD_DIR: the HDD and SSD from the nbdkit servers on its hdd.sock and ssd.sock
	# (crash.sh power_cut_arm), with a volatile write cache the guest sees and flushes
	if [ -n "${FLAZ_NBD_DIR:-}" ]; then
		hdd="file=nbd+unix:///?socket=$FLAZ_NBD_DIR/hdd.sock,format=raw,cache=writeback"
		ssd="file=nbd+unix:///?socket=$FLAZ_NBD_DIR/ssd.sock,format=raw,cache=writeback"
	fi
	timeout -k 10 "$QEMU_TIMEOUT" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -smp 2 -m "${FLAZ_QEMU_MEM:-2048}" \
		-nographic -no-reboot -nodefaults -serial "$5" -pidfile "$3/qemu.pid" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "${kroot%/}/boot/vmlinuz-$1" -initrd "$2" \
		-drive "$hdd,if=none,id=hdd" \
		-device virtio-blk-pci,drive=hdd \
		-drive "$ssd,if=none,id=ssd" \
		-device virtio-blk-pci,drive=ssd \
		-drive "file=$3/results.img,if=none,id=results,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=results \
		-drive "file=$3/hdd4k.img,if=none,id=hdd4k,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=hdd4k,logical_block_size=4096,physical_block_size=4096 \
		-drive "file=$3/ssd4k.img,if=none,id=ssd4k,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=ssd4k,logical_block_size=4096,physical_block_size=4096 \
		-drive "file=$3/ssddisc.img,if=none,id=ssddisc,format=raw,cache=unsafe,discard=unmap" \
		-device virtio-blk-pci,drive=ssddisc,discard=on \
		-drive "file=$3/hddbig.img,if=none,id=hddbig,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=hddbig \
		-drive "file=$3/ssdbig.img,if=none,id=ssdbig,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=ssdbig \
		-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 loglevel=4 tsc=reliable -- $4" \
		</dev/null
}

# boot_started KVER INITRD RUNDIR SUITE CONSOLE [FRESH]: boot_vm on RUNDIR's disks, with a
# blank results disk and the console in file CONSOLE, then read_results; returns qemu's
# status. Multi-threaded TCG now and then oopses while the kernel patches its own text in
# early boot: when a late initcall turns sched_clock's static key on, the other vCPU, in
# a timer interrupt, meets the int3 in sched_clock_cpu() after the patch is done (1 boot
# of 7.3 in 40, four guests at once; twice in a row once in CI). No module is loaded
# yet and a guest that oopsed before its first check touched no disk, so it boots again,
# up to 3 boots in all (FRESH=1: on fresh disks); one that hung or stopped without an oops
# is not. Each earlier console is kept (console.1.log for console.log), its oops on stderr.
boot_started() {
	local n rc kept
	for n in 1 2 3; do
		truncate -s 0 "$3/results.img" && truncate -s 8M "$3/results.img"
		boot_vm "$1" "$2" "$3" "$4" "file:$5"
		rc=$?
		read_results "$3"
		if [ "$rc" = 33 ] || grep -q '^RUN ' "$3/results.txt" || [ "$n" = 3 ] ||
			! grep -a -q -E 'Oops|Kernel panic|BUG:' "$5"; then
			return "$rc"
		fi
		kept=${5%.*}.$n.${5##*.}
		mv "$5" "$kept"
		echo "boot $n of the guest died before its first check (qemu exited $rc): booting once more; its console ($kept) says:" >&2
		grep -a -m 1 -A 14 -E 'Oops|Kernel panic|BUG:' "$kept" | tr -d '\r' >&2
		[ -z "${6:-}" ] || make_disks "$3"
	done
}

# report_checks PREFIX RESULTS: turn the guest's RUN/PASS/FAIL/SKIP records in file RESULTS
# into output lines named PREFIX/<check> (through the caller's pass and failed), its INFO
# records into "info:" lines on stderr; sets UNFINISHED to the check that started and never
# ended (where the guest died; empty if none). Used by run.sh and crash.sh.
report_checks() {
	local prefix=$1 word rest running=
	while read -r word rest; do
		case $word in
		RUN) running=$rest ;;
		PASS) pass "$prefix/$rest" && running= ;;
		FAIL) failed "$prefix/${rest%%: *}" "${rest#*: }" && running= ;;
		SKIP) echo "SKIP $prefix/$rest" && running= ;;
		INFO) echo "info: $rest" >&2 ;;
		esac
	done <"$2"
	# shellcheck disable=SC2034 # read by the caller
	UNFINISHED=$running
}

# Copy the results and the guest's dmesg off the results disk of run dir $1.
read_results() {
	head -c "$DMESG_OFFSET" "$1/results.img" | tr -d '\0' >"$1/results.txt"
	tail -c +$((DMESG_OFFSET + 1)) "$1/results.img" | tr -d '\0' >"$1/dmesg.txt"
}

# show_suite KVER SUITE TITLE [ARGS]: boot guest suite SUITE (given the words ARGS) for the
# user to watch (demo, bench): builds what is missing, shows only the guest's "::" lines,
# keeps the whole console in the run dir. Fails unless the suite ran to its end.
show_suite() {
	local kver=$1 suite=$2 run=$FLAZ_CACHE/qemu/$1/$2 initrd rc
	echo "== Building the module, flazctl and the initramfs for $kver"
	initrd=$(initramfs_for "$kver") || return 1
	mkdir -p "$run"
	make_disks "$run"
	echo "== $3 in QEMU (TCG, 2 CPUs); disks and console in $run"
	boot_vm "$kver" "$initrd" "$run" "$suite${4:+ $4}" stdio | tr -d '\r' | tee "$run/console.log" |
		sed -u -n 's/^:://p'
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 33 ]; then
		echo "$suite FAILED (qemu exited $rc); the console's end ($run/console.log):" >&2
		grep -v '^::' "$run/console.log" | tail -n 20 >&2
		return 1
	fi
}

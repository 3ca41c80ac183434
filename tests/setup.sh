#!/bin/bash
# Install what the build, the tests and the demo need, once. Idempotent: a machine that has
# everything runs no apt at all. INITRD=No: the test bed boots its own initramfs.
set -euo pipefail
PKGS=(
	linux-image-amd64 linux-headers-amd64             # Debian 12's 6.1
	linux-image-6.12-amd64 linux-headers-6.12-amd64   # Debian 12's 6.12 (bookworm-security)
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64  # its PREEMPT_RT build
	debootstrap                                       # Debian 13's chroot for its 7.x kernel (tests/lib/trixie.sh)
	linux-source-6.12                                 # UML kernel for KUnit/KASAN/lockdep
	build-essential bc flex bison libelf-dev libssl-dev cpio xz-utils zstd kmod
	qemu-system-x86 qemu-utils busybox-static
	dmsetup libdevmapper-dev libjson-c-dev e2fsprogs xfsprogs fio bcache-tools dkms postmark
	python3
	gnuplot-nox                                       # make bench: the plot
	systemd strace                                    # host tests: systemd-analyze verify, no-dm checks
	nbd-server nbd-client                             # e2e nbd-*: the HDD served over the guest's loopback
	nbdkit                                            # crash.sh: disks whose volatile cache a power cut loses
)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: need root to install packages: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive INITRD=No
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null

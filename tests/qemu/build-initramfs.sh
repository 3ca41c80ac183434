#!/bin/bash
# Build the uncompressed initramfs the QEMU suites boot (uncompressed boots ~2 s faster):
# busybox, dmsetup, e2fsprogs, xfsprogs, fio, postmark, nbd-server, nbd-client, flazctl with their
# shared libraries, the static test helpers replay-log and blkcmp (replay-log.c, blkcmp.c), Debian's
# modules for KVER (decompressed, so busybox modprobe can load them), the project's module
# under extra/, the guest scripts (tests/qemu/guest/) and the text corpus (corpus.py) in
# /corpus, built once into $FLAZ_CACHE/corpus and again whenever corpus.py changes.
# KROOT=DIR takes KVER's modules from DIR/lib/modules (an unpacked kernel package) instead of /.
# usage: build-initramfs.sh KVER OUT MODULE_KO FLAZCTL_BIN
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KVER=${1:?usage: build-initramfs.sh KVER OUT MODULE_KO FLAZCTL_BIN}
OUT=${2:?missing OUT}
KO=${3:?missing MODULE_KO}
FLAZCTL=${4:?missing FLAZCTL_BIN}
MODDIR=/lib/modules/$KVER
KROOT=${KROOT:-/}
SRCMOD=${KROOT%/}$MODDIR
CORPUS=${FLAZ_CACHE:-$HERE/../../.cache}/corpus
# modprobe, depmod and the tools copied below live in sbin
export PATH=$PATH:/usr/sbin:/sbin
# Kernel modules the suites use: a kernel without one of the required ones cannot run them;
# the optional ones are skipped if the kernel lacks them.
REQUIRED_MODS="dm-mod ext4 xfs virtio_blk"
OPTIONAL_MODS="virtio_pci dm-delay dm-flakey dm-log-writes dm-snapshot dm-cache dm-cache-smq brd loop crc32c_generic crc32c_intel
	libcrc32c lzo lz4 lz4_compress lz4_decompress zstd_compress zstd zlib_deflate deflate bcache nbd"

die() { echo "build-initramfs: $*" >&2; exit 1; }

# Copy binary $1 to path $2 in the image, with every shared library ldd names.
copy_bin() {
	local bin=$1 dst=$2 lib
	mkdir -p "$ROOT$(dirname "$dst")"
	cp -L "$bin" "$ROOT$dst"
	# ldd fails on a static binary, which needs no libraries
	{ ldd "$bin" 2>/dev/null || true; } | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' | while read -r lib; do
		[ -e "$ROOT$lib" ] && continue
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done
}

# Print the module files (with dependencies) that modprobe would insert for module $1;
# nothing for a builtin one, and fail if KVER has no such module.
module_files() {
	local out
	out=$(modprobe -d "$KROOT" -S "$KVER" --show-depends "$1" 2>/dev/null) || return 1
	awk '$1 == "insmod" {print $2}' <<<"$out"
}

# Copy one module file into the image at its own relative path, decompressed.
copy_module() {
	local f=$1 rel dst
	rel=${f#"$SRCMOD"/}
	rel=${rel#"${KROOT%/}"/usr"$MODDIR"/}
	dst=$ROOT$MODDIR/${rel%.[xg]z}
	dst=${dst%.zst}
	mkdir -p "$(dirname "$dst")"
	case $f in
	*.xz) xz -dc "$f" >"$dst" ;;
	*.gz) gzip -dc "$f" >"$dst" ;;
	*.zst) zstd -qdc "$f" >"$dst" ;;
	*) cp "$f" "$dst" ;;
	esac
}

add_modules() {
	local m deps files=
	for m in $REQUIRED_MODS; do
		files+=$(module_files "$m")$'\n' || die "kernel $KVER has no module $m"
	done
	for m in $OPTIONAL_MODS; do
		files+=$(module_files "$m")$'\n' || true
	done
	# whatever the project's module links against (dm-bufio, compression libraries...)
	deps=$(modinfo -F depends "$KO" | tr ',' ' ')
	for m in $deps; do
		files+=$(module_files "$m")$'\n' || die "dm-flaz needs module $m, which $KVER lacks"
	done
	sort -u <<<"$files" | while read -r f; do
		[ -z "$f" ] || copy_module "$f"
	done
	mkdir -p "$ROOT$MODDIR/extra"
	cp "$KO" "$ROOT$MODDIR/extra/dm-flaz.ko"
	cp "$SRCMOD"/modules.builtin* "$SRCMOD/modules.order" "$ROOT$MODDIR/"
	depmod -b "$ROOT" "$KVER"
}

# Busybox applets in /bin; the real tools in /usr/sbin, which comes first in the guest's PATH.
add_programs() {
	local b a
	mkdir -p "$ROOT"/{bin,sbin,etc,proc,sys,dev,tmp,mnt,run,usr/bin,usr/sbin}
	cp /bin/busybox "$ROOT/bin/busybox"
	for a in $("$ROOT/bin/busybox" --list); do
		[ -e "$ROOT/bin/$a" ] || ln -s busybox "$ROOT/bin/$a"
	done
	# the kernel's request_module() runs /sbin/modprobe
	for a in modprobe insmod rmmod lsmod; do ln -s ../bin/busybox "$ROOT/sbin/$a"; done
	for b in dmsetup mke2fs e2fsck mkfs.xfs xfs_repair blockdev fio postmark make-bcache nbd-server nbd-client; do
		b=$(command -v "$b") || die "$b is not installed (run tests/setup.sh)"
		copy_bin "$b" "/usr/sbin/$(basename "$b")"
	done
	ln -s mke2fs "$ROOT/usr/sbin/mkfs.ext4"
	ln -s e2fsck "$ROOT/usr/sbin/fsck.ext4"
	cp /etc/mke2fs.conf "$ROOT/etc/"
	copy_bin "$FLAZCTL" /usr/sbin/flazctl
	# the crash tests' helpers, static: replay a dm-log-writes log, compare two devices
	for b in replay-log blkcmp; do
		gcc -static -O2 -Wall -o "$ROOT/usr/sbin/$b" "$HERE/$b.c" || die "cannot build $b.c"
	done
}

add_scripts() {
	cp "$HERE/guest/init" "$ROOT/init"
	mkdir -p "$ROOT/flaz"
	cp "$HERE"/guest/*.sh "$ROOT/flaz/"
	chmod +x "$ROOT/init" "$ROOT"/flaz/*.sh
}

# The corpus is stamped with the hash of the script that made it, and made again when a
# file of its manifest is gone (a cache is a directory anyone may have touched).
add_corpus() {
	local stamp
	stamp=$(sha256sum "$HERE/corpus.py" | cut -c 1-16)
	if [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ] ||
		[ "$(find "$CORPUS/files" -type f 2>/dev/null | wc -l)" != "$(wc -l <"$CORPUS/manifest")" ]; then
		echo "build-initramfs: building the text corpus in $CORPUS" >&2
		rm -rf "$CORPUS" "$CORPUS.tmp"
		python3 "$HERE/corpus.py" "$CORPUS.tmp" || die "corpus.py failed"
		echo "$stamp" >"$CORPUS.tmp/stamp"
		mv "$CORPUS.tmp" "$CORPUS"
	fi
	cp -a "$CORPUS" "$ROOT/corpus"
}

[ -f "$KO" ] || die "no module at $KO"
[ -x "$FLAZCTL" ] || die "no flazctl at $FLAZCTL"
mkdir -p "$(dirname "$OUT")"
ROOT=$(mktemp -d "$(dirname "$OUT")/root.XXXXXX")
# the image is written beside OUT and renamed onto it: a guest of another suite of the same
# kernel (make test runs two at once) that boots from OUT meanwhile reads a whole image
IMG=$(mktemp "$OUT.XXXXXX")
trap 'rm -rf "$ROOT" "$IMG"' EXIT
add_programs
add_modules
add_scripts
add_corpus
(cd "$ROOT" && find . -print0 | cpio --null -o -H newc --quiet) >"$IMG"
mv "$IMG" "$OUT"

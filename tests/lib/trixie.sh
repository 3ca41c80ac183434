#!/bin/bash
# The newest Debian 13 (trixie) backports kernel, as a Debian 13 user has it: its headers'
# build tools need trixie's libc and gcc, so the module is built in a trixie chroot made
# by debootstrap, with linux-headers-KVER from trixie-backports, as that user's DKMS would.
# The kernel image package is unpacked (never installed on this Debian 12 host) for QEMU.
#   trixie.sh kver          the newest linux-image-7.*-amd64 trixie-backports offers now
#   trixie.sh prepare KVER  the chroot with KVER's headers, and KVER unpacked; prints the
#                           unpacked root (boot/vmlinuz-KVER, lib/modules/KVER)
#   trixie.sh make KVER DIR ARGS...  make -C <KVER's headers> M=DIR ARGS in the chroot
#                           (DIR is copied in and back)
#   trixie.sh dkms KVER SRC OUT  dkms add and build for KVER in the chroot, as that user runs
#                           it, of SRC (a NAME-VERSION source tree); the module lands in OUT
# Cached outside the clone in $FLAZ_KCACHE/trixie (default /var/cache/dm-flaz): the chroot
# (made again when its package list changes), and kernels/KVER (KVER names its package version).
# The mirror is the host's own Debian mirror (FLAZ_DEBIAN_MIRROR overrides it).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
KCACHE=${FLAZ_KCACHE:-/var/cache/dm-flaz}
mkdir -p "$KCACHE" 2>/dev/null && [ -w "$KCACHE" ] || KCACHE=${FLAZ_CACHE:-$REPO/.cache}
T=$KCACHE/trixie
INCLUDE=make,gcc,libc6-dev,dkms,kmod,xz-utils
# the chroot is made again only when what goes into it changes
STAMP="trixie minbase $INCLUDE trixie-backports"
CH=$T/chroot
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

die() { echo "trixie.sh: $*" >&2; exit 1; }

# The host's Debian mirror: the first non-security URI of its apt sources.
mirror() {
	[ -n "${FLAZ_DEBIAN_MIRROR:-}" ] && { echo "$FLAZ_DEBIAN_MIRROR"; return; }
	{
		grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{ print $2 }' || true
		grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '{ print ($2 ~ /^\[/) ? $3 : $2 }'
	} | grep -v security | head -n 1 || true
}

# A command in the chroot, with /proc (objtool reads it) mounted in a mount namespace of its
# own, so the mount goes away with the command whatever happens.
in_chroot() {
	unshare --mount --propagation private sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' \
		"$CH" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"
}

# The chroot: trixie with gcc, make and apt pointed at trixie and trixie-backports.
# Made aside and renamed, so an interrupted debootstrap never leaves a half chroot.
chroot_ready() {
	[ "$(cat "$CH/.stamp" 2>/dev/null)" = "$STAMP" ] && return 0
	local m tmp=$T/chroot.tmp
	m=$(mirror)
	[ -n "$m" ] || die "no Debian mirror in the host's apt sources (set FLAZ_DEBIAN_MIRROR)"
	command -v debootstrap >/dev/null || die "debootstrap is not installed (run tests/setup.sh)"
	echo "trixie.sh: debootstrap trixie into $CH (once)" >&2
	rm -rf "$tmp" "$CH"
	mkdir -p "$T"
	debootstrap --variant=minbase --include="$INCLUDE" \
		trixie "$tmp" "$m" >"$T/debootstrap.log" 2>&1 ||
		die "debootstrap failed: $(tail -n 3 "$T/debootstrap.log" | tr '\n' ' ')"
	printf 'deb %s trixie main\ndeb %s trixie-backports main\n' "$m" "$m" >"$tmp/etc/apt/sources.list"
	echo "$STAMP" >"$tmp/.stamp"
	mv "$tmp" "$CH"
}

apt_updated() {
	# once an hour is "now" enough for the newest kernel, and spares the mirror
	if [ -z "$(find "$CH/var/lib/apt/lists" -maxdepth 1 -name '*backports*Packages*' -mmin -60 2>/dev/null)" ]; then
		in_chroot apt-get update -q >"$T/apt-update.log" 2>&1 ||
			die "apt-get update in the chroot failed: $(tail -n 2 "$T/apt-update.log" | tr '\n' ' ')"
	fi
}

newest_kver() {
	in_chroot apt-cache search --names-only '^linux-image-7\.[0-9.]+\+deb13-amd64$' |
		awk '{ print $1 }' | sed 's/^linux-image-//' | sort -V | tail -n 1
}

prepare() {
	local kver=$1 k=$T/kernels/$1 deb
	in_chroot dpkg-query -W -f '${Status}' "linux-headers-$kver" 2>/dev/null | grep -q 'ok installed' || {
		echo "trixie.sh: installing linux-headers-$kver in the chroot" >&2
		apt_updated
		in_chroot apt-get install -y -q --no-install-recommends -t trixie-backports \
			"linux-headers-$kver" >"$T/apt-headers.log" 2>&1 ||
			die "cannot install linux-headers-$kver: $(tail -n 3 "$T/apt-headers.log" | tr '\n' ' ')"
	}
	if [ ! -f "$k/.done" ]; then
		echo "trixie.sh: unpacking linux-image-$kver into $k" >&2
		apt_updated
		rm -rf "$k" "$CH/tmp/image"
		mkdir -p "$k" "$CH/tmp/image"
		# the image package may be split (linux-binary-KVER, linux-modules-KVER,
		# linux-base-KVER): take it and those of its dependencies
		pkgs="linux-image-$kver $(in_chroot apt-cache depends "linux-image-$kver" |
			sed -n "s/^ *Depends: \(linux-[a-z]*-$kver\)\$/\1/p" | tr '\n' ' ')"
		in_chroot sh -c "cd /tmp/image && apt-get download -q $pkgs" >"$T/apt-image.log" 2>&1 ||
			die "cannot download $pkgs: $(tail -n 2 "$T/apt-image.log" | tr '\n' ' ')"
		for deb in "$CH"/tmp/image/*.deb; do
			dpkg-deb -x "$deb" "$k/root" || die "cannot unpack $deb"
		done
		rm -rf "$CH/tmp/image"
		# newer packages ship the image in the modules directory (postinst puts it in /boot)
		if [ ! -e "$k/root/boot/vmlinuz-$kver" ] && [ -f "$k/root/usr/lib/modules/$kver/vmlinuz" ]; then
			mkdir -p "$k/root/boot"
			ln -s "../usr/lib/modules/$kver/vmlinuz" "$k/root/boot/vmlinuz-$kver"
		fi
		[ -f "$k/root/boot/vmlinuz-$kver" ] || die "linux-image-$kver has no vmlinuz"
		# trixie keeps modules in /usr/lib/modules; depmod -b and modprobe -d look in lib/
		[ -d "$k/root/lib" ] || ln -s usr/lib "$k/root/lib"
		# the package's postinst makes modules.dep
		depmod -b "$k/root" "$kver" || die "depmod $kver failed"
		touch "$k/.done"
		# older kernels of the series are not used again
		find "$T/kernels" -mindepth 1 -maxdepth 1 ! -name "$kver" -exec rm -rf {} + 2>/dev/null || true
	fi
	echo "$k/root"
}

cmd=${1:?usage: trixie.sh kver | prepare KVER | make KVER DIR ARGS... | dkms KVER SRC OUT}
shift
mkdir -p "$T"
# one user of the chroot at a time (a background prepare and a build may overlap)
exec 9>"$T/.lock"
flock 9
chroot_ready
case $cmd in
kver)
	apt_updated
	k=$(newest_kver)
	[ -n "$k" ] || die "trixie-backports offers no linux-image-7.*-amd64"
	echo "$k"
	;;
prepare)
	prepare "${1:?usage: trixie.sh prepare KVER}"
	;;
make)
	kver=${1:?usage: trixie.sh make KVER DIR ARGS...}
	dir=${2:?missing DIR}
	shift 2
	prepare "$kver" >/dev/null
	rm -rf "$CH/tmp/m"
	cp -a "$dir" "$CH/tmp/m"
	rc=0
	in_chroot make -C "/usr/src/linux-headers-$kver" M=/tmp/m "$@" || rc=$?
	# back only what the build made or changed (-u: not the caller's log, written meanwhile)
	cp -a -u "$CH/tmp/m/." "$dir/" && rm -rf "$CH/tmp/m"
	exit $rc
	;;
dkms)
	kver=${1:?usage: trixie.sh dkms KVER SRC OUT}
	src=${2:?missing SRC}
	out=${3:?missing OUT}
	prepare "$kver" >/dev/null
	name=$(basename "$src")
	mod=${name%-*}
	ver=${name##*-}
	rm -rf "$CH/usr/src/$name" "$CH/var/lib/dkms/$mod" "$out"
	cp -a "$src" "$CH/usr/src/$name"
	rc=0
	in_chroot dkms add -m "$mod" -v "$ver" && in_chroot dkms build -m "$mod" -v "$ver" -k "$kver" || rc=$?
	mkdir -p "$out"
	find "$CH/var/lib/dkms/$mod" -name "$mod.ko*" -exec cp {} "$out/" \; 2>/dev/null || true
	rm -rf "$CH/usr/src/$name" "$CH/var/lib/dkms/$mod"
	exit $rc
	;;
*) die "unknown command $cmd" ;;
esac

#!/bin/bash
# DKMS as users run it (dkms add + build against Debian's headers), for each kernel
# series given, in a private source and dkms tree so the host's DKMS state is untouched.
# Prints PASS/FAIL lines; exits non-zero on any failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FLAZ_CACHE:-$REPO/.cache}
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
T=$CACHE/dkms
fails=0

pass() { echo "PASS dkms/$1"; }
fail() { echo "FAIL dkms/$1: $2"; fails=$((fails + 1)); }

rm -rf "$T"
mkdir -p "$T/src/dm-flaz-$VER" "$T/tree"
# Only what a release tarball ships: the module sources and the build files.
(cd "$REPO" && cp -r Kbuild Makefile dkms.conf drivers "$T/src/dm-flaz-$VER/")
dkms_() { dkms "$@" --sourcetree "$T/src" --dkmstree "$T/tree"; }

if dkms_ add -m dm-flaz -v "$VER" >"$T/add.log" 2>&1; then
	pass add
else
	fail add "$(tail -5 "$T/add.log")"
	exit 1
fi
for series in "$@"; do
	kver=$("$REPO/tests/lib/kvers.sh" "$series") || { fail "$series/build" "no kernel"; continue; }
	if [ "$series" = 7 ]; then
		# Debian 13's kernel: its DKMS, in the Debian 13 chroot
		if ! "$REPO/tests/lib/trixie.sh" dkms "$kver" "$T/src/dm-flaz-$VER" "$T/out-$series" \
			>"$T/build-$series.log" 2>&1; then
			fail "$series/build" "$(tail -15 "$T/build-$series.log")"
			continue
		fi
		ko=$(find "$T/out-$series" -name 'dm-flaz.ko*' | head -n1)
	elif ! dkms_ build -m dm-flaz -v "$VER" -k "$kver" >"$T/build-$series.log" 2>&1; then
		fail "$series/build" "$(tail -15 "$T/build-$series.log")"
		continue
	else
		ko=$(find "$T/tree/dm-flaz/$VER/$kver" -name 'dm-flaz.ko*' | head -n1)
	fi
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	if [ "$magic" = "$kver" ]; then
		pass "$series/build"
	else
		fail "$series/build" "built module '$ko' has vermagic '$magic', want $kver"
	fi
done
[ $fails -eq 0 ]

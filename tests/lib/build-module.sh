#!/bin/bash
# Build dm-flaz.ko for one kernel in its own copy of the sources, so builds for
# different kernels never share objects:
#   $FLAZ_CACHE/build/<KVER>/drivers/md/dm-flaz/dm-flaz.ko   (log: .../build.log)
# A kernel whose headers this host lacks (Debian 13's, tests/lib/trixie.sh) is built in the
# Debian 13 chroot against its own headers, as its users' DKMS builds it.
# FLAZ_BENCH=1 in the environment builds the bench's module (with the codec-cost debugfs).
# usage: build-module.sh KVER [KDIR [ARCH]]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
KVER=${1:?usage: build-module.sh KVER [KDIR [ARCH]]}
KDIR=${2:-/lib/modules/$KVER/build}
ARCH_ARG=${3:+ARCH=$3}
B=${FLAZ_CACHE:-$REPO/.cache}/build/$KVER
rm -rf "$B"
mkdir -p "$B"
cp -r "$REPO/Kbuild" "$REPO/drivers" "$B/"
if [ ! -d "$KDIR" ] && [ $# -eq 1 ]; then
	build() { "$REPO/tests/lib/trixie.sh" make "$KVER" "$B" modules ${FLAZ_BENCH:+FLAZ_BENCH=1}; }
else
	# shellcheck disable=SC2086 # ARCH_ARG is empty or one word
	build() { make -C "$KDIR" $ARCH_ARG M="$B" modules ${FLAZ_BENCH:+FLAZ_BENCH=1}; }
fi
if ! build >"$B/build.log" 2>&1; then
	tail -30 "$B/build.log" >&2
	exit 1
fi
echo "$B/drivers/md/dm-flaz/dm-flaz.ko"

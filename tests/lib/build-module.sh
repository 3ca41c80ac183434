#!/bin/bash
# Build dm-flaz.ko for one kernel in its own copy of the sources, so builds for
# different kernels never share objects:
#   $FLAZ_CACHE/build/<KVER>/drivers/md/dm-flaz/dm-flaz.ko   (log: .../build.log)
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
# shellcheck disable=SC2086 # ARCH_ARG is empty or one word
if ! make -C "$KDIR" $ARCH_ARG M="$B" modules >"$B/build.log" 2>&1; then
	tail -30 "$B/build.log" >&2
	exit 1
fi
echo "$B/drivers/md/dm-flaz/dm-flaz.ko"

#!/bin/bash
# make bench, native part: the hit path's CPU cost at the host CPU's own speed, in a UML
# kernel without sanitizers (build.sh bench), one CPU, both disks files on the host's tmpfs
# (no dm-delay, no emulation). bench-init.sh runs in it; its "::" lines are printed here.
# Figures only, never pass/fail.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export FLAZ_CACHE=${FLAZ_CACHE:-$REPO/.cache}
RUN=$FLAZ_CACHE/uml/bench
MOD=$FLAZ_CACHE/build/uml-6.12-bench
mkdir -p "$FLAZ_CACHE/uml"
echo "== UML bench: building (or reusing) the kernel without sanitizers" >&2
B=$("$HERE/build.sh" bench) || { echo "== UML bench: kernel build failed" >&2; exit 1; }
# with the codec-cost debugfs (costs.c), which users' builds leave out
FLAZ_BENCH=1 "$REPO/tests/lib/build-module.sh" uml-6.12-bench "$B" um >/dev/null ||
	{ echo "== UML bench: module build failed (see $MOD/build.log)" >&2; exit 1; }
rm -rf "$RUN"
mkdir -p "$RUN/home"
DISKS=$(mktemp -d /dev/shm/flaz-bench.XXXXXX)
trap 'rm -rf "$DISKS"' EXIT
truncate -s 512M "$DISKS/hdd.img"
truncate -s 128M "$DISKS/ssd.img"
HOME=$RUN/home TMPDIR=/dev/shm timeout --kill-after=10 1200 "$B/linux" mem=1G \
	ubd0="$DISKS/hdd.img" ubd1="$DISKS/ssd.img" root=/dev/root rootfstype=hostfs rootflags=/ \
	rw init="$HERE/bench-init.sh" con=null con0=null,fd:1 \
	FLAZ_RUN="$RUN" FLAZ_KO="$MOD/drivers/md/dm-flaz/dm-flaz.ko" \
	</dev/null >"$RUN/console.log" 2>&1
rc=$?
echo
sed -n 's/^:://p' "$RUN/console.log"
[ -f "$RUN/done" ] || echo "== UML bench: the kernel exited $rc before the end; console: $RUN/console.log"

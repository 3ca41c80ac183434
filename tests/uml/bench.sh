#!/bin/bash
# make bench, native part: the hit path's CPU cost at the host CPU's own speed, in a UML
# kernel without sanitizers (build.sh bench), one CPU, both disks files on the host's tmpfs
# (no emulation); then, in a second boot with less RAM, PostMark over an HDD behind dm-delay,
# whose per-write CPU the emulated VM inflates; in a third, issue 33's fills (bench-fills.sh).
# bench-init.sh runs in it; its "::" lines are printed here. Figures only, never pass/fail.
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
DISKS=$(mktemp -d /dev/shm/flaz-bench.XXXXXX)
trap 'rm -rf "$DISKS"' EXIT

# boot PART MEM HDD_SIZE: one boot of bench-init.sh on fresh disks; prints its "::" lines
boot() {
	local rc
	rm -rf "$RUN" "$DISKS"/*
	mkdir -p "$RUN/home"
	truncate -s "$3" "$DISKS/hdd.img"
	truncate -s 128M "$DISKS/ssd.img"
	HOME=$RUN/home TMPDIR=/dev/shm timeout --kill-after=10 1200 "$B/linux" mem="$2" \
		ubd0="$DISKS/hdd.img" ubd1="$DISKS/ssd.img" root=/dev/root rootfstype=hostfs rootflags=/ \
		rw init="$HERE/bench-init.sh" con=null con0=null,fd:1 \
		FLAZ_RUN="$RUN" FLAZ_KO="$MOD/drivers/md/dm-flaz/dm-flaz.ko" FLAZ_PART="$1" \
		</dev/null >"$RUN/console.log" 2>&1
	rc=$?
	echo
	sed -n 's/^:://p' "$RUN/console.log"
	[ -f "$RUN/done" ] || echo "== UML bench ($1): the kernel exited $rc before the end; console: $RUN/console.log"
}

# UML_BENCH="hits postmark fills" (the default) or a part of it
for part in ${UML_BENCH:-hits postmark fills}; do
	case $part in
	hits) boot hits 1G 512M ;;
	# PostMark as issue 28 runs it, with 384 MiB of RAM so the page cache does not hide the disks
	postmark) boot postmark 384M 1G ;;
	# issue 33's fills: sets up to 4x the SSD
	fills) boot fills 1G 1G ;;
	*) echo "== UML bench: no part '$part' (hits, postmark, fills)" >&2 ;;
	esac
done

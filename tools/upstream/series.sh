#!/bin/bash
# make upstream: dm-flaz as a patch series against a kernel tree, in the form
# `git am` takes (cover letter + 3 patches):
#   1. the target: drivers/md/dm-flaz/ (the module's sources, bench code left out),
#      its Kconfig (DM_FLAZ, sourced from drivers/md/Kconfig), the drivers/md
#      Makefile line and a MAINTAINERS entry;
#   2. its KUnit tests (DM_FLAZ_KUNIT_TEST, module dm-flaz-test);
#   3. Documentation/admin-guide/device-mapper/dm-flaz.rst (docs/dm-flaz.rst).
# What the out-of-tree module chooses at build time (compat.h's feature tests,
# format.c's userspace twin, the bench build) is chosen once here, for the tree
# given, by resolve.py: the series has one kernel and no #ifdef for it.
#
# series.sh [TREE [OUT]]: TREE is a kernel source tree (default: the files it
# reads, taken from Debian's linux-source-6.12 into $FLAZ_CACHE/upstream); OUT the
# folder for the patches (default ./upstream-series), emptied first. Prints OUT.
# series.sh --files: the tree's files it reads, one a line (all a tree needs to
# make the series from).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SRC=$REPO/drivers/md/dm-flaz
TREE=${1:-}
OUT=${2:-$PWD/upstream-series}
TARBALL=/usr/src/linux-source-6.12.tar.xz
# the tree's files the series changes, and the headers compat.h's tests read
CHANGED=(drivers/md/Kconfig drivers/md/Makefile MAINTAINERS
	Documentation/admin-guide/device-mapper/index.rst)
PROBED=(include/linux/dm-io.h include/linux/workqueue.h include/linux/blkdev.h
	include/kunit/visibility.h include/linux/zstd.h lib/Kconfig Makefile)

if [ "${1:-}" = --files ]; then
	printf '%s\n' "${CHANGED[@]}" "${PROBED[@]}"
	exit 0
fi

die() {
	echo "upstream: $*" >&2
	exit 1
}

if [ -z "$TREE" ]; then
	[ -f "$TARBALL" ] || die "no kernel tree given and no $TARBALL (apt-get install linux-source-6.12)"
	ver=$(dpkg-query -W -f '${Version}' linux-source-6.12)
	D=${FLAZ_CACHE:-$REPO/.cache}/upstream/$ver
	TREE=$D/linux-source-6.12
	for f in "${CHANGED[@]}" "${PROBED[@]}"; do
		[ -f "$TREE/$f" ] && continue
		# into a new folder first: an interrupted tar leaves no file that looks whole
		rm -rf "$D" "$D.new" && mkdir -p "$D.new"
		tar -C "$D.new" -xf "$TARBALL" "${CHANGED[@]/#/linux-source-6.12/}" \
			"${PROBED[@]/#/linux-source-6.12/}"
		mv "$D.new" "$D"
		break
	done
fi
TREE=$(cd "$TREE" && pwd) || die "no kernel tree at $1"
for f in "${CHANGED[@]}" "${PROBED[@]}"; do
	[ -f "$TREE/$f" ] || die "$TREE is not a kernel tree: no $f"
done
[ -f "$REPO/docs/dm-flaz.rst" ] || die "no docs/dm-flaz.rst"
grep -q 'config DM_FLAZ$' "$TREE/drivers/md/Kconfig" "$TREE/drivers/md/dm-flaz/Kconfig" 2>/dev/null &&
	die "$TREE has dm-flaz already: give a tree without it"

# The objects of each module, from the out-of-tree Kbuild: one list for both builds.
objs() {
	sed -n "s/^$1-y := //p" "$SRC/Kbuild"
}
MAIN_OBJS=$(objs dm-flaz)
TEST_OBJS=$(objs dm-flaz-test)
[ -n "$MAIN_OBJS" ] && [ -n "$TEST_OBJS" ] || die "no object lists in $SRC/Kbuild"

# compat.h's choices for this tree: Kbuild's own probes (each line
# `ccflags-y += $(if $(shell grep -s PATTERN $(srctree)/FILE),-DNAME)`), run here.
FLAGS=(-D __KERNEL__ -U FLAZ_BENCH)
while read -r pattern file name; do
	[ -f "$TREE/$file" ] || die "a Kbuild probe reads $file, which is not among the files taken here"
	if eval "grep -qs $pattern \"\$TREE/$file\""; then
		FLAGS+=(-D "$name")
	else
		FLAGS+=(-U "$name")
	fi
done < <(sed -n 's/^ccflags-y += $(if $(shell grep -s \(.*\) $(srctree)\/\([^)]*\)),-D\([A-Z_0-9]*\))$/\1 \2 \3/p' "$SRC/Kbuild")
probes=$(grep -c '^ccflags-y += $(if ' "$SRC/Kbuild" || true)
[ ${#FLAGS[@]} -eq $((4 + 2 * probes)) ] && [ "$probes" -gt 0 ] ||
	die "$SRC/Kbuild has $probes feature probes, $(((${#FLAGS[@]} - 4) / 2)) understood here"
if grep -qs 'define BLK_OPEN_READ' "$TREE/include/linux/blkdev.h"; then
	FLAGS+=(-D BLK_OPEN_READ)
else
	FLAGS+=(-U BLK_OPEN_READ)
fi

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
g() { git -C "$W" "$@"; }
NAME=$(git -C "$REPO" config user.name 2>/dev/null || echo "dm-flaz developers")
EMAIL=$(git -C "$REPO" config user.email 2>/dev/null || echo "dm-flaz@localhost")
# the repository's last commit date: the same sources give the same series
DATE=$(git -C "$REPO" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
export GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL GIT_COMMITTER_NAME=$NAME
export GIT_COMMITTER_EMAIL=$EMAIL GIT_AUTHOR_DATE=$DATE GIT_COMMITTER_DATE=$DATE
g init -q
for f in "${CHANGED[@]}"; do
	mkdir -p "$W/$(dirname "$f")"
	cp "$TREE/$f" "$W/$f"
done
g add -A && g commit -q -m base

commit() { # commit SUBJECT BODY
	g add -A
	g commit -q -F - <<-EOF
		$1

		$2

		Signed-off-by: $NAME <$EMAIL>
	EOF
}

# put FILE (under the tree) resolved for this tree, from $SRC/NAME
put() {
	python3 "$HERE/resolve.py" "${FLAGS[@]}" <"$SRC/$1" >"$W/drivers/md/dm-flaz/$1" ||
		die "cannot resolve $1"
}

# insert TEXT into FILE after the first line matching PATTERN (else before the
# first line matching FALLBACK)
insert_after() {
	python3 - "$W/$1" "$2" "$3" "$4" <<-'EOF'
		import re, sys
		path, pattern, fallback, text = sys.argv[1:]
		lines = open(path).read().split('\n')
		for i, l in enumerate(lines):
		    if re.search(pattern, l):
		        lines[i + 1:i + 1] = text.split('\n')
		        break
		else:
		    for i, l in enumerate(lines):
		        if re.search(fallback, l):
		            lines[i:i] = text.split('\n')
		            break
		    else:
		        sys.exit('%s: no place for the new lines' % path)
		open(path, 'w').write('\n'.join(lines))
	EOF
}

# kbuild's form of a long object list: one object a line
objlist() { # objlist VAR OBJS
	printf '%s := \\\n' "$1"
	printf '\t%s \\\n' $2 | sed '$ s/ \\$//'
}

# 1: the target
mkdir -p "$W/drivers/md/dm-flaz"
for o in $MAIN_OBJS; do
	put "${o%.o}.c"
done
for h in "$SRC"/*.h; do
	put "$(basename "$h")"
done
# a tree without LIBCRC32C has crc32c() in CRC32 itself (newer kernels)
if grep -q '^config LIBCRC32C$' "$TREE/lib/Kconfig"; then
	cp "$HERE/Kconfig" "$W/drivers/md/dm-flaz/Kconfig"
else
	sed 's/select LIBCRC32C$/select CRC32/' "$HERE/Kconfig" >"$W/drivers/md/dm-flaz/Kconfig"
fi
{
	echo "# SPDX-License-Identifier: GPL-2.0-only"
	echo
	echo 'obj-$(CONFIG_DM_FLAZ) += dm-flaz.o'
	echo
	objlist dm-flaz-y "$MAIN_OBJS"
} >"$W/drivers/md/dm-flaz/Makefile"
insert_after drivers/md/Kconfig '^source "drivers/md/dm-vdo/Kconfig"' '^endif # MD' \
	'source "drivers/md/dm-flaz/Kconfig"'
insert_after drivers/md/Makefile '^obj-\$\(CONFIG_DM_VDO\)' '^obj-\$\(CONFIG_DM_CACHE\)' \
	'obj-$(CONFIG_DM_FLAZ)		+= dm-flaz/'
# in order: before the VDO target's entry (and a blank line between them)
insert_after MAINTAINERS '(?!)' '^DEVICE-MAPPER VDO TARGET$' \
	"$(printf 'DEVICE-MAPPER FLAZ TARGET\nM:\t%s <%s>\nL:\tdm-devel@lists.linux.dev\nS:\tMaintained\nF:\tdrivers/md/dm-flaz/' "$NAME" "$EMAIL")"
sed -i 's|^F:\tdrivers/md/dm-flaz/$|&\n|' "$W/MAINTAINERS"
commit "dm flaz: add a compressed write-through SSD cache target" \
"$(cat <<'EOF'
dm-flaz caches reads of a slow block device (an HDD) on a fast one (an
SSD), after the FlaZ design (Makatos et al., EuroSys 2010). Each cached
4 KiB block is compressed (lzo, lz4, zstd or deflate) into a slot of an
extent written log-style; a table on the SSD maps cache lines to slots,
and DRAM holds pages of it. Writes go to both devices (write-through),
so the HDD always holds a complete, current copy: losing the SSD loses
no data, and any doubt about the cache's state is resolved by missing.

The cache is direct-mapped: block B of the HDD can only be held in line
B modulo the number of lines, a configurable multiple (overbook) of the
blocks the SSD's extents hold. New fills enter a probation part of the
log; a cleaner compacts hit slots into the main log and drops the rest,
and sequential streams bypass the cache. The table is committed with
write intent marks ahead of writes, so a crash never serves stale data.
EOF
)"

# 2: the tests
for o in $TEST_OBJS; do
	put "${o%.o}.c"
done
cat "$HERE/Kconfig.test" >>"$W/drivers/md/dm-flaz/Kconfig"
{
	echo
	echo 'obj-$(CONFIG_DM_FLAZ_KUNIT_TEST) += dm-flaz-test.o'
	echo
	objlist dm-flaz-test-y "$TEST_OBJS"
} >>"$W/drivers/md/dm-flaz/Makefile"
commit "dm flaz: add KUnit tests" \
"$(cat <<'EOF'
The on-SSD format, the table and its paging, the allocator, the extent
buffer, write intent, the codecs, fills, partial writes and the
cleaner's decisions, checked against expectations worked out by hand.
They build into a module of their own, dm-flaz-test, which runs them
when loaded; dm-flaz exports what they call only to it
(EXPORT_SYMBOL_IF_KUNIT).
EOF
)"

# 3: the documentation
cp "$REPO/docs/dm-flaz.rst" "$W/Documentation/admin-guide/device-mapper/dm-flaz.rst"
insert_after Documentation/admin-guide/device-mapper/index.rst '^    dm-flakey$' '^    dm-ima$' \
	'    dm-flaz'
# the entry patch 1 made names the document too
sed -i 's|^F:\tdrivers/md/dm-flaz/$|F:\tDocumentation/admin-guide/device-mapper/dm-flaz.rst\n&|' "$W/MAINTAINERS"
commit "Documentation: dm-flaz: document the flaz target" \
"$(cat <<'EOF'
The table line and its options, the messages, the status keys, and
what an operator must know: the HDD is always current, and writing it
directly while the cache is not attached makes the cache stale.
EOF
)"

# OUT holds the series and nothing else: a folder with other files in it is refused
if [ -e "$OUT" ]; then
	[ -d "$OUT" ] || die "$OUT is not a folder"
	[ -z "$(find "$OUT" -mindepth 1 ! -name '*.patch')" ] ||
		die "$OUT holds files other than patches: give an empty or new folder"
	rm -f "$OUT"/*.patch
fi
mkdir -p "$OUT"
g format-patch -q --cover-letter --subject-prefix=PATCH -o "$OUT" HEAD~3 >/dev/null
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
cover=$(ls "$OUT"/0000-*.patch)
base=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' "$TREE/Makefile" 2>/dev/null | paste -sd.)
base=${base:+Linux $base}
python3 - "$cover" "$ver" "${base:-the tree it was made against}" <<'EOF'
import sys
path, ver, base = sys.argv[1:]
text = open(path).read()
text = text.replace('*** SUBJECT HERE ***', 'dm flaz: a compressed write-through SSD cache target')
text = text.replace('*** BLURB HERE ***', f'''dm-flaz puts a compressed, write-through cache on an SSD in front of an
HDD. Compression lets the same SSD hold about twice the hot data, so
more reads hit flash; the HDD always holds a complete, current copy.
dm-cache and bcache cache uncompressed blocks; dm-vdo compresses but is
a primary store.

Patch 1 adds the target, patch 2 its KUnit tests, patch 3 its
documentation. The out-of-tree module this series is made from is
version {ver}; it is tested on Debian's 6.1, 6.12, 6.12-rt and 7.x
kernels (QEMU) and in a UML kernel with KASAN, lockdep and kmemleak,
where the KUnit tests run.

The series is made for, and tested on, {base}.''')
open(path, 'w').write(text)
EOF
echo "$OUT"

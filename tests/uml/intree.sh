#!/bin/bash
# The UML test kernel's dm-flaz is built in tree, from make upstream's series
# (tools/upstream/series.sh): what CI tests is what the series holds.
#
# intree.sh sync K: make the series of this checkout's sources against the
#   pristine files kept in K/pristine (from the tarball) and
#   apply it to the kernel's source tree K/linux-source-6.12, rewriting only the
#   files that differ, so kbuild rebuilds only what changed. Quiet; exit status.
# intree.sh build K OUT: sync, then the kernel's own make (CONFIG_DM_FLAZ=m and
#   CONFIG_DM_FLAZ_KUNIT_TEST=m in its .config), the modules copied to
#   OUT/drivers/md/dm-flaz/, the series to OUT/series and the log to
#   OUT/build.log; then checkpatch --strict, from the tree, on the series.
#   Prints PASS/FAIL lines: uml/upstream/series, uml/module-build,
#   uml/upstream/checkpatch.
# One run at a time per kernel (flock): the tree and its build are shared.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
MODE=$1
K=$2
S=$K/linux-source-6.12
B=$K/build
SERIES=$K/series
# what the series may write in the tree: the files it changes and the target's folder
PRISTINE=$K/pristine
TARBALL=/usr/src/linux-source-6.12.tar.xz

oneline() { tr -s '\n\t ' ' ' | cut -c1-"${1:-1500}"; }

# make the series into $SERIES, stage it over the pristine files, copy what differs
sync_tree() {
	local stage=$K/stage p f missing=()
	# what the series reads, as the tarball has it (the tree itself is patched), taken
	# once, in one pass over the tarball; a file the series reads from a later commit on
	# is taken then
	while read -r f; do
		[ -f "$PRISTINE/$f" ] || missing+=("linux-source-6.12/$f")
	done < <("$REPO/tools/upstream/series.sh" --files)
	if [ ${#missing[@]} -gt 0 ]; then
		rm -rf "$K/pristine.new" && mkdir -p "$K/pristine.new" &&
			tar -C "$K/pristine.new" -xf "$TARBALL" "${missing[@]}" &&
			mkdir -p "$PRISTINE" && cp -r "$K/pristine.new/linux-source-6.12/." "$PRISTINE/" &&
			rm -rf "$K/pristine.new" || return 1
	fi
	"$REPO/tools/upstream/series.sh" "$PRISTINE" "$SERIES" >/dev/null || return 1
	rm -rf "$stage"
	cp -a "$PRISTINE" "$stage"
	for p in "$SERIES"/000[1-9]-*.patch; do
		patch -s -p1 -d "$stage" --no-backup-if-mismatch -i "$p" || return 1
	done
	# the target's sources: added, changed or gone
	mkdir -p "$S/drivers/md/dm-flaz"
	for f in "$S"/drivers/md/dm-flaz/*; do
		[ -e "$stage/drivers/md/dm-flaz/${f##*/}" ] || rm -f "$f"
	done
	(cd "$stage" && find . -type f) | while read -r f; do
		cmp -s "$stage/$f" "$S/$f" || cp "$stage/$f" "$S/$f" || exit 1
	done
}

case $MODE in
sync)
	exec 9>"$K/.lock"
	flock 9
	sync_tree
	;;
build)
	OUT=$3
	D=$OUT/drivers/md/dm-flaz
	rm -rf "$OUT"
	mkdir -p "$D"
	exec 9>"$K/.lock"
	flock 9
	if ! sync_tree >"$OUT/build.log" 2>&1; then
		echo "FAIL uml/upstream/series: $(tail -5 "$OUT/build.log" | oneline)"
		exit 1
	fi
	cp -r "$SERIES" "$OUT/series"
	echo "PASS uml/upstream/series"
	# -Werror: a warning leaves no object, so a rerun that compiles nothing fails as well
	# (the module is this kernel's only one)
	if ! make -s -C "$S" ARCH=um O="$B" CFLAGS_MODULE=-Werror -j"$(nproc)" >>"$OUT/build.log" 2>&1 ||
		! cp "$B"/drivers/md/dm-flaz/dm-flaz.ko "$B"/drivers/md/dm-flaz/dm-flaz-test.ko "$D/"; then
		echo "FAIL uml/module-build: $(grep -m5 -E 'error|Error|No such' "$OUT/build.log" | oneline)"
		exit 1
	fi
	# the KUnit files are compiled nowhere else (Debian's kernels have no KUnit)
	if grep -E 'drivers/md/dm-flaz/.*(warning|error):' "$OUT/build.log" >"$OUT/warnings"; then
		echo "FAIL uml/module-build: warnings: $(head -3 "$OUT/warnings" | oneline)"
		exit 1
	fi
	echo "PASS uml/module-build"
	# with the tree: checkpatch finds MAINTAINERS, the spelling list and the kernel's headers.
	# Patch 2 adds the tests under the folder patch 1's MAINTAINERS entry names: the
	# "does MAINTAINERS need updating?" warning on a patch that adds files is moot there.
	if out=$(cd "$S" && for p in "$SERIES"/000[1-9]-*.patch; do
		ignore=
		[[ $p == */0002-* ]] && ignore=--ignore=FILE_PATH_CHANGES
		scripts/checkpatch.pl --strict --quiet --show-types $ignore "$p"
	done 2>&1) && [ -z "$out" ]; then
		echo "PASS uml/upstream/checkpatch"
	else
		echo "FAIL uml/upstream/checkpatch: $(oneline 1500 <<<"$out")"
	fi
	;;
*)
	echo "usage: intree.sh sync K | build K OUT" >&2
	exit 2
	;;
esac

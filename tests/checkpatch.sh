#!/bin/bash
# Kernel style: scripts/checkpatch.pl --no-tree -f on every module source, taken
# from Debian's linux-source-6.12 (only checkpatch and its data files are extracted).
# The sources are the tracked ones (git ls-files), so the files kbuild generates in the
# module's folder (dm-flaz.mod.c) are left out; outside a git checkout, every *.[ch]
# there but *.mod.c. $CHECKPATCH names another checkpatch.pl (the host tests use a stub).
# Prints a PASS/FAIL line per file.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FLAZ_CACHE:-$REPO/.cache}
TARBALL=/usr/src/linux-source-6.12.tar.xz

if [ -n "${CHECKPATCH:-}" ]; then
	CP=$CHECKPATCH
else
	ver=$(dpkg-query -W -f '${Version}' linux-source-6.12)
	D=$CACHE/checkpatch/$ver
	CP=$D/linux-source-6.12/scripts/checkpatch.pl
	if [ ! -x "$CP" ]; then
		rm -rf "$CACHE/checkpatch"
		mkdir -p "$D"
		tar -C "$D" -xf "$TARBALL" linux-source-6.12/scripts/checkpatch.pl \
			linux-source-6.12/scripts/spelling.txt \
			linux-source-6.12/scripts/const_structs.checkpatch >&2 ||
			{ echo "FAIL style/checkpatch: cannot extract checkpatch.pl"; exit 1; }
	fi
fi

# The module's sources, one a line, relative to $REPO.
sources() {
	local list f
	list=$(git -C "$REPO" ls-files -- 'drivers/md/dm-flaz/*.[ch]' 2>/dev/null)
	if [ -n "$list" ]; then
		printf '%s\n' "$list"
		return
	fi
	for f in "$REPO"/drivers/md/dm-flaz/*.[ch]; do
		case $f in
		*.mod.c) ;;
		*) [ -f "$f" ] && printf '%s\n' "${f#"$REPO"/}" ;;
		esac
	done
}

fails=0
checked=0
while IFS= read -r rel; do
	f=$REPO/$rel
	# tracked but removed in this working tree
	[ -f "$f" ] || continue
	checked=$((checked + 1))
	name=style/checkpatch/$rel
	if out=$("$CP" --no-tree --quiet --show-types -f "$f" 2>&1) && [ -z "$out" ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: $(tr '\n' ' ' <<<"$out" | cut -c1-600)"
		fails=$((fails + 1))
	fi
done < <(sources)
if [ $checked -eq 0 ]; then
	echo "FAIL style/checkpatch: no module source found in $REPO/drivers/md/dm-flaz"
	exit 1
fi
[ $fails -eq 0 ]

#!/bin/bash
# Kernel style: scripts/checkpatch.pl --no-tree -f on every module source, taken
# from Debian's linux-source-6.12 (only checkpatch and its data files are extracted).
# Prints a PASS/FAIL line per file.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FLAZ_CACHE:-$REPO/.cache}
TARBALL=/usr/src/linux-source-6.12.tar.xz
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
fails=0
for f in "$REPO"/drivers/md/dm-flaz/*.[ch]; do
	name=style/checkpatch/${f#"$REPO"/}
	if out=$("$CP" --no-tree --quiet --show-types -f "$f" 2>&1) && [ -z "$out" ]; then
		echo "PASS $name"
	else
		echo "FAIL $name: $(tr '\n' ' ' <<<"$out" | cut -c1-600)"
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ]

#!/bin/bash
# The table's and metadata's model test: the module's meta.c, sb.c, order.c, paging.c,
# intent.c, alloc.c, l2p.c, resident.c, table.c and format.c built in userspace and driven by
# tests/host/model/model.c against an oracle, millions of random steps across crashes and
# reloads of devices with volatile caches (see model.c). One PASS/FAIL line per run.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$REPO/drivers/md/dm-flaz
M=$REPO/tests/host/model
OUT=${FLAZ_CACHE:-$REPO/.cache}/model
STEPS=${FLAZ_MODEL_STEPS:-1000000}
mkdir -p "$OUT"
# format.c is plain C against the system's headers; the others see the shim. paging.c's
# calls of flaz_table_load() go through the model's wrapper, where fills meet a page-in, and
# meta.c's of flaz_alloc_put() through one that checks the extent may be free.
if ! gcc -O2 -g -Wall -I "$SRC" -c -o "$OUT/format.o" "$SRC/format.c" 2>"$OUT/build.log" ||
   ! gcc -O2 -g -Wall -I "$M/inc" -I "$SRC" -Wl,--wrap=flaz_table_load,--wrap=flaz_alloc_put -o "$OUT/model" \
	"$M/model.c" "$M/devices.c" "$SRC/meta.c" "$SRC/sb.c" "$SRC/order.c" "$SRC/paging.c" "$SRC/intent.c" \
	"$SRC/alloc.c" "$SRC/l2p.c" "$SRC/resident.c" "$SRC/table.c" "$OUT/format.o" \
	2>>"$OUT/build.log"; then
	echo "FAIL model/build: $(grep -m3 error "$OUT/build.log" | tr '\n' ' ')"
	exit 1
fi
echo "PASS model/build"
rc=0
# hdd/lines 3: whole tags; 40: cut tags that alias
for run in "1 3" "2 3" "3 40" "4 40"; do
	set -- $run
	if out=$("$OUT/model" "$STEPS" "$1" "$2" 2>&1); then
		echo "PASS model/seed-$1-ratio-$2" && echo "$out" >&2
	else
		echo "FAIL model/seed-$1-ratio-$2: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
		rc=1
	fi
done
exit $rc

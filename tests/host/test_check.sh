#!/bin/bash
# flazctl check and dump on the host, without the flaz module: SSD image files written
# by tests/host/mkimage.c (the module's own format.c encoders, as the kernel writes them),
# then damaged on purpose. Ends with the fuzzer (tests/host/fuzz_check.sh).
# Usage: tests/host/test_check.sh [path/to/flazctl]
# Prints one PASS/FAIL line per check (SKIP name: why where this host lacks strace, script(1)
# or working loop devices); exits non-zero iff any check failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$REPO/tools/flazctl/flazctl}
[[ $BIN == /* ]] || BIN=$PWD/$BIN
FLAZ=$REPO/drivers/md/dm-flaz
fails=0

pass() { echo "PASS host/check/$1"; }
fail() { echo "FAIL host/check/$1: $2"; fails=$((fails + 1)); }
skip() { echo "SKIP host/check/$1: $2"; }

if [ ! -x "$BIN" ]; then
	fail build "no executable flazctl at $BIN"
	exit 1
fi

T=$(mktemp -d)
LOOP=
cleanup() {
	[ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

MK=$T/mkimage
if ! gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$FLAZ" -o "$MK" \
	"$REPO/tests/host/mkimage.c" "$FLAZ/format.c" 2>"$T/gcc.err"; then
	fail build-mkimage "$(head -n3 "$T/gcc.err")"
	exit 1
fi

# img NAME [mkimage options]: $T/NAME.img, its map $T/NAME.map; its summary
# (slots=N zeros=N ...) becomes shell variables NAME_slots, NAME_zeros, ...
img() {
	local name=$1
	shift
	"$MK" "$T/$name.img" --map "$T/$name.map" "$@" >"$T/$name.sum" || return 1
	# shellcheck disable=SC1090
	. <(tr ' ' '\n' <"$T/$name.sum" | sed "s/^/${name}_/")
}

# flip FILE OFFSET: change the byte at OFFSET (xor 0x5a)
flip() {
	python3 - "$@" <<'EOF'
import sys
with open(sys.argv[1], 'r+b') as f:
    off = int(sys.argv[2])
    f.seek(off)
    b = f.read(1)[0]
    f.seek(off)
    f.write(bytes([b ^ 0x5a]))
EOF
}

# nth KIND N MAP: the offset of the Nth (from 1) range of KIND in a map
nth() { awk -v k="$1" -v n="$2" '$1 == k && ++i == n { print $2 }' "$3"; }

# run ARGS...: flazctl ARGS, output in $T/out and $T/err, exit code in $rc; a run
# that takes over 10 s (a loop bounded by a header field, not the device) is 124
run() {
	timeout 10 "$BIN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# expect NAME RC REGEX ARGS...: flazctl ARGS exits RC and prints REGEX (stdout or stderr)
expect() {
	local name=$1 want=$2 re=$3
	shift 3
	run "$@"
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, want $want ($(grep -m1 -E '^(corrupt|warning)|flazctl:' "$T/out" "$T/err" -h))"
	# not cat | grep -q: with pipefail, cat's SIGPIPE when grep stops early fails the check
	elif ! grep -qE -- "$re" "$T/out" "$T/err"; then
		fail "$name" "output lacks /$re/: '$(tail -n1 "$T/out")'"
	else
		pass "$name"
	fi
}

# jexpect NAME PYEXPR ARGS...: flazctl ARGS prints one JSON object d with PYEXPR true
# (rc is its exit code)
jexpect() {
	local name=$1 expr=$2 out
	shift 2
	run "$@"
	if ! out=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rc = int(sys.argv[3])
ok = eval("(" + sys.argv[2] + ")")
print("ok" if ok else "false: " + json.dumps(d)[:300])' "$T/out" "$expr" "$rc" 2>&1); then
		fail "$name" "not one JSON object (exit $rc): $(tail -n1 <<<"$out")"
	elif [ "$out" != ok ]; then
		fail "$name" "($expr) is $out"
	else
		pass "$name"
	fi
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# --- a clean image: what mkimage wrote is what check and dump find
img clean
expect clean 0 '^result: clean$' check "$T/clean.img"
jexpect dump-json "d['current'] == 0 and d['superblocks'][0]['valid'] and
	d['superblocks'][1]['seq'] == 9 and d['superblocks'][0]['clean'] and
	d['superblocks'][0]['codec'] == 'lz4' and d['superblocks'][0]['marked_regions'] == [] and
	d['table']['blocks'] == $clean_table_blocks and d['table']['valid'] == $clean_table_blocks and
	d['table']['bad'] == 0 and d['table']['entries']['slot'] == $clean_slots and
	d['table']['entries']['zero'] == $clean_zeros and
	d['table']['entries']['empty'] == $clean_lines - $clean_slots - $clean_zeros and
	d['table']['extents_referenced'] == $clean_extents and d['table']['slot_bytes'] == $clean_slot_bytes" \
	dump "$T/clean.img" --json
# a 1 GiB volume has more blocks per line than a cut tag names: zero blocks alone tell theirs
jexpect dump-json-entries "len(d['entries']) == $clean_slots + $clean_zeros and
	sum(e['kind'] == 'slot' for e in d['entries']) == $clean_slots and
	all(('block' in e) == (e['kind'] == 'zero') for e in d['entries']) and
	all(e['gen'] % 2 == 1 and e['gen'] < 65534 for e in d['entries'] if e['kind'] == 'slot')" \
	dump --json --entries "$T/clean.img"
jexpect dump-json-gens "d['gens']['blocks'] == $clean_gen_blocks and
	d['gens']['valid'] == $clean_gen_blocks and d['gens']['bad'] == 0 and
	d['table']['entries']['void'] == 0 and d['table']['entries']['unusable'] == 0 and
	d['superblocks'][0]['version'] == 4 and
	d['superblocks'][0]['geometry']['gen_blocks'] == $clean_gen_blocks and
	d['superblocks'][0]['geometry']['gen_start'] == d['superblocks'][0]['geometry']['meta_start']
	+ 8 * $clean_table_blocks and d['superblocks'][0]['geometry']['data_start'] >=
	d['superblocks'][0]['geometry']['gen_start'] + 8 * $clean_gen_blocks" dump --json "$T/clean.img"
# the default image's geometry, by hand: 16384 sectors, 32 KiB extents (64 sectors, 8
# blocks), overbook 200 (16 lines an extent). 254 extents have 4064 lines, 8 table blocks
# of 508 entries, and 1 gen block of 2032 gens: 16 + 9 * 8 = 88 sectors before the
# extents, 128 rounded up to the extent size, and 128 + 254 * 64 = 16384 (255 extents
# need 9 table blocks and 128 + 255 * 64 > 16384). A slot entry: 10 bits of offset (1024
# 32-byte units), 8 of extent (0-253), and 64 - 8 - 10 - 8 - 1 - 4 = 33 bits left, so
# the generation has its most, 16, and 65534 is the last even (free) one: worn out
jexpect geometry-json "[(c['geometry']['nr_extents'], c['geometry']['nr_lines'],
	c['geometry']['table_blocks'], c['geometry']['gen_blocks'], c['geometry']['meta_start'],
	c['geometry']['gen_start'], c['geometry']['meta_sectors'], c['geometry']['data_start'],
	c['geometry']['off_bits'], c['geometry']['ext_bits'], c['geometry']['gen_bits'],
	c['geometry']['gen_worn']) for c in d['superblocks']] ==
	2 * [(254, 4064, 8, 1, 16, 80, 72, 128, 10, 8, 16, 65534)]" dump --json "$T/clean.img"
expect geometry-human 0 '^  entry bits +offset 10, extent 8, generation 16 \(an extent at 65534 is worn out\)$' \
	dump "$T/clean.img"
# 16 MiB of 4 KiB extents, overbook 100 (a line an extent): 4082 extents, 9 table blocks
# (4082 > 8 * 508) and 3 gen blocks (4082 > 2 * 2032; format 3's one-byte gens took 2),
# so the extents start at 16 + 12 * 8 = 112: 112 + 4082 * 8 = 32768, and 4083 extents
# would end past it. An entry: 7 bits of offset (128 units), 12 of extent.
img g3 --ssd-kib 16384 --extent-kib 4 --overbook 100 --slots 100 --zeros 10 --evict 2
jexpect geometry-gen-blocks "(g := d['superblocks'][0]['geometry'])['nr_extents'] == 4082 and
	g['table_blocks'] == 9 and g['gen_blocks'] == 3 and $g3_gen_blocks == 3 and
	g['gen_start'] == 16 + 9 * 8 and g['data_start'] == 112 and g['off_bits'] == 7 and
	g['ext_bits'] == 12 and g['gen_bits'] == 16 and d['gens']['valid'] == 3" dump --json "$T/g3.img"
expect geometry-gen-blocks-clean 0 "^result: clean$" check "$T/g3.img"
img g3bad --ssd-kib 16384 --extent-kib 4 --overbook 100 --slots 100 --zeros 10 --bad-gen-block 2
expect geometry-gen-block-last 4 'corrupt: gen block 2 \(sector 104\): bad checksum; entries into extents 4064-4081 are unusable' \
	check "$T/g3bad.img"
# every entry of the table as the documented layout has it (units in bits 0-7; a slot's
# offset in 8-17, extent in 18-25, cold bit 26, low tag bits 27-30, gen 31-46, nothing
# above; a zero block's whole tag from bit 8) against what dump makes of it
dump_entries_vs_layout() {
	python3 - "$1" "$2" <<'EOF'
import json, struct, sys
img, dump = open(sys.argv[1], 'rb').read(), json.load(open(sys.argv[2]))
lines = dump['superblocks'][dump['current']]['geometry']['nr_lines']
got = {e['line']: e for e in dump['entries']}
seen = 0
for line in range(lines):
    off = 16 * 512 + (line // 508) * 4096 + 32 + (line % 508) * 8
    v = struct.unpack('<Q', img[off:off + 8])[0]
    units = v & 0xff
    if not units:
        continue
    seen += 1
    e = got.get(line)
    if units == 255:
        want = {'kind': 'zero', 'block': (v >> 8) * lines + line}
    else:
        if v >> 47:
            sys.exit(f'line {line}: {v:016x} has bits above 46')
        want = {'bytes': units * 32, 'off': ((v >> 8) & 1023) * 32, 'ext': (v >> 18) & 255,
                'tag': (v >> 27) & 15, 'gen': (v >> 31) & 0xffff}
        if (v >> 26) & 1:
            want['cold'] = True
    if e is None or any(e.get(k) != w for k, w in want.items()):
        sys.exit(f'line {line}: {v:016x} is {want}, dump says {e}')
if seen != len(got):
    sys.exit(f'{seen} entries in the table, dump lists {len(got)}')
print(seen)
EOF
}
"$BIN" dump --json --entries "$T/clean.img" >"$T/entries.json"
if out=$(dump_entries_vs_layout "$T/clean.img" "$T/entries.json" 2>&1); then
	pass entry-layout
else
	fail entry-layout "$out"
fi
img whole --hdd-mib 128
jexpect dump-json-entries-blocks "len(d['entries']) == $whole_slots + $whole_zeros and
	all('block' in e for e in d['entries'])" dump --json --entries "$T/whole.img"
expect dump-human 0 'superblock copy 0 \(sector 0\): valid, current' dump "$T/clean.img"
expect dump-human-gens 0 "gen blocks +$clean_gen_blocks from sector [0-9]+" dump "$T/clean.img"
expect dump-human-gens-summary 0 "^gens: $clean_gen_blocks blocks from sector" dump "$T/clean.img"
expect dump-human-entries 0 "entries +$clean_slots slot, $clean_zeros zero" dump --entries "$T/clean.img"
if [ "$(grep -c '^  line ' "$T/out")" -ne $((clean_slots + clean_zeros)) ]; then
	fail dump-human-entries-lines "$(grep -c '^  line ' "$T/out") entry lines, want $((clean_slots + clean_zeros))"
else
	pass dump-human-entries-lines
fi

# --superblock: the two copies only, as bcache-super-show; no gen block or table is read
expect dump-superblock 0 'superblock copy 1 \(sector 8\): valid' dump --superblock "$T/clean.img"
if grep -qE '^(gens|table)' "$T/out"; then
	fail dump-superblock-only "shows more than the superblock: $(grep -m1 -E '^(gens|table)' "$T/out")"
else
	pass dump-superblock-only
fi
jexpect dump-superblock-json "rc == 0 and d['current'] == 0 and d['superblocks'][0]['valid'] and
	d['superblocks'][0]['geometry']['nr_lines'] == $clean_lines and
	'table' not in d and 'gens' not in d" dump --json --superblock "$T/clean.img"
expect dump-superblock-entries 2 '^flazctl: --entries reads the table; --superblock reads the superblock only$' \
	dump --superblock --entries "$T/clean.img"
# a damaged table is not its business
cp "$T/clean.img" "$T/sbonly.img"
flip "$T/sbonly.img" $(($(nth table 2 "$T/clean.map") + 100))
jexpect dump-superblock-bad-table "rc == 0 and d['current'] == 0 and 'table' not in d" \
	dump --superblock --json "$T/sbonly.img"
# what it reads: strace's pread64 calls on the image, none past the two copies
# (SSD_PROBE_BYTES); the whole dump reads further, so the check can tell them apart
sb_reads() {
	strace -P "$1" -e trace=pread64 -o "$T/strace" "$BIN" dump "$@" >/dev/null 2>&1 || return 1
	awk -F', ' '/^pread64\(/ { sub(/\).*/, "", $NF); if ($NF + 0 >= 8192) n++ } END { print n + 0 }' "$T/strace"
}
if ! command -v strace >/dev/null || ! strace -o /dev/null true 2>/dev/null; then
	skip dump-superblock-reads "strace is missing or cannot trace here"
elif ! far=$(sb_reads "$T/clean.img" --superblock) || ! all=$(sb_reads "$T/clean.img"); then
	fail dump-superblock-reads "strace of flazctl dump failed: $(head -n1 "$T/strace")"
elif [ "$far" -ne 0 ] || [ "$all" -eq 0 ]; then
	fail dump-superblock-reads "$far reads past the superblock copies with --superblock, $all without"
else
	pass dump-superblock-reads
fi

img cur1 --current 1 --codec 2 --seed 7
expect current-copy-1 0 'copy 1 \(sector 8\): valid, seq 11 \(current\)' check "$T/cur1.img"
jexpect current-copy-1-json "d['current'] == 1 and d['superblocks'][1]['codec'] == 'zstd'" \
	dump --json "$T/cur1.img"

# --- superblock copies: one bad is ignorable (the other serves), both bad is corrupt
cp "$T/clean.img" "$T/sb.img"
flip "$T/sb.img" 300
expect sb-current-bad 3 'warning: superblock copy 0 \(sector 0\): corrupt; copy 1 is used' \
	check "$T/sb.img"
cp "$T/clean.img" "$T/sbold.img"
flip "$T/sbold.img" $((4096 + 17))
expect sb-other-bad 3 'warning: superblock copy 1 .*: corrupt; copy 0 is used' check "$T/sbold.img"
flip "$T/sb.img" 5000
flip "$T/sb.img" $((4096 + 8))
expect sb-both-bad 4 'corrupt: both superblock copies are bad' check "$T/sb.img"
# nothing --repair can do without a sound copy: the result says so, and suggests no --repair
expect sb-both-bad-result 4 '^result: corrupt \(1 problem\), none repairable: no superblock copy is sound \(recreate the volume with --cold: it starts empty\)$' \
	check "$T/sb.img"
sum=$(sha "$T/sb.img")
expect sb-both-bad-repair 4 '^result: corrupt \(1 problem\), none repairable: no superblock copy is sound' \
	check --repair "$T/sb.img"
[ "$(sha "$T/sb.img")" = "$sum" ] && pass sb-both-bad-repair-writes-nothing ||
	fail sb-both-bad-repair-writes-nothing "the image changed"
expect sb-both-bad-dump 4 'holds no valid flaz superblock' dump "$T/sb.img"
cp "$T/clean.img" "$T/sbr.img"
flip "$T/sbr.img" 100
# copy 0 held seq 10, copy 1 seq 9: copy 0 comes back as seq 8, the one before copy 1's
expect sb-repair 3 'repaired: superblock copy 0 rewritten from copy 1 \(seq 8\)' \
	check --repair "$T/sbr.img"
expect sb-repaired-clean 0 '^result: clean$' check "$T/sbr.img"
jexpect sb-repaired-json "d['current'] == 1 and d['superblocks'][0]['seq'] == 8 and
	d['superblocks'][0]['gen'] == d['superblocks'][1]['gen']" dump --json "$T/sbr.img"
cp "$T/clean.img" "$T/sbr2.img"
flip "$T/sbr2.img" 5000
expect sb-repair-other 3 'repaired: superblock copy 1 rewritten from copy 0 \(seq 9\)' \
	check --repair "$T/sbr2.img"

# --- table blocks
cp "$T/clean.img" "$T/tb.img"
flip "$T/tb.img" $(($(nth table 3 "$T/clean.map") + 1000))
sum=$(sha "$T/tb.img")
expect table-crc 4 'corrupt: table block 2 \(sector [0-9]+\): bad checksum' check "$T/tb.img"
# repairable: the result suggests --repair
expect table-crc-result 4 '^result: corrupt \(1 problem; flazctl check --repair may fix some\)$' \
	check "$T/tb.img"
run dump --json --entries "$T/tb.img"
[ "$(sha "$T/tb.img")" = "$sum" ] && pass check-dump-write-nothing ||
	fail check-dump-write-nothing "check or dump changed the image"
expect table-repair 3 'repaired: table block 2: rewritten as an empty block' \
	check --repair "$T/tb.img"
run check "$T/tb.img"
[ "$rc" -le 1 ] && pass table-repaired || fail table-repaired "check exits $rc after --repair"
jexpect table-repaired-json "d['table']['valid'] == $clean_table_blocks and
	d['table']['entries']['slot'] + d['table']['entries']['zero'] < $clean_slots + $clean_zeros" \
	dump --json "$T/tb.img"
cp "$T/clean.img" "$T/tbm.img"
flip "$T/tbm.img" "$(nth table 1 "$T/clean.map")"
expect table-magic 4 'table block 0 .*: bad magic' check "$T/tbm.img"

img stale --stale-block 2
expect table-stale-gen 0 '^result: clean$' check "$T/stale.img"
jexpect table-stale-gen-json "d['table']['void'] == 1 and d['table']['valid'] == $clean_table_blocks - 1
	and d['table']['entries']['slot'] == $stale_slots" dump --json "$T/stale.img"
img unwritten --unwritten-block 1
expect table-unwritten 0 '^result: clean$' check "$T/unwritten.img"
# the kernel does not clear the table area at a format: leftovers there hold nothing
img foreign --foreign-block 0
expect table-foreign 0 'note: 1 table block is neither blank nor of a flaz format' \
	check "$T/foreign.img"
jexpect table-foreign-json "d['table']['foreign'] == 1 and d['table']['bad'] == 0" \
	dump --json "$T/foreign.img"
sum=$(sha "$T/foreign.img")
expect table-foreign-no-repair 0 '^result: clean$' check --repair "$T/foreign.img"
[ "$(sha "$T/foreign.img")" = "$sum" ] && pass table-foreign-left-alone ||
	fail table-foreign-left-alone "--repair rewrote a block that holds nothing"
# a table block of this format whose magic is gone is damage, not leftovers
cp "$T/clean.img" "$T/tbm2.img"
off=$(nth table 2 "$T/clean.map")
flip "$T/tbm2.img" "$off"
flip "$T/tbm2.img" $((off + 2000))
expect table-magic-and-more 4 'table block 1 .*: bad magic' check "$T/tbm2.img"

# --- extent generations: entries left by evictions are void, not damage
img evict --evict 3
expect gen-evicted 0 '^result: clean$' check "$T/evict.img"
expect gen-evicted-void 0 "$evict_slots slots .*, $evict_void void entries \(left by evictions\), 0 unusable" \
	check "$T/evict.img"
[ "$evict_void" -gt 0 ] && pass gen-evicted-has-void ||
	fail gen-evicted-has-void "mkimage left no void entry"
jexpect gen-evicted-json "d['table']['entries']['void'] == $evict_void and
	d['table']['entries']['slot'] == $evict_slots and d['table']['extents_referenced'] == $evict_extents
	and d['gens']['valid'] == $evict_gen_blocks" dump --json "$T/evict.img"
# extent 1 was at gen 65533, the last odd (in use) one of 16 bits: its eviction wears it
# out (65534); an evicted extent is free, its gen even
jexpect gen-evicted-entries "sum(e['kind'] == 'void' for e in d['entries']) == $evict_void and
	all(e['gen'] != e['extent_gen'] and e['extent_gen'] % 2 == 0
	    for e in d['entries'] if e['kind'] == 'void') and
	any(e.get('ext') == 1 and e['gen'] == 65533 and e['extent_gen'] == 65534 for e in d['entries'])" \
	dump --json --entries "$T/evict.img"
expect gen-evicted-entries-human 0 '^  line [0-9]+: void: .* gen [0-9]+ \(the extent is at gen [0-9]+: evicted since\)' \
	dump --entries "$T/evict.img"
# the slots and extent headers void entries point at are not looked at: they may be anything now
cp "$T/evict.img" "$T/evictslot.img"
flip "$T/evictslot.img" $(($(nth void 2 "$T/evict.map") + 40))
flip "$T/evictslot.img" $(($(nth voidext 1 "$T/evict.map") + 12))
expect gen-evicted-slot-unread 0 '^result: clean$' check "$T/evictslot.img"
# void entries are no cached lines: the kernel drops none of them for a marked region
img evunclean --evict 3 --unclean 3
expect gen-evicted-unclean 3 "3 write-intent regions marked .*drops the $evunclean_dropped cached line" \
	check "$T/evunclean.img"
# no gen block of this format: every extent at gen 0, as after a format
img gunwritten --gens unwritten
expect gen-unwritten 0 '^result: clean$' check "$T/gunwritten.img"
jexpect gen-unwritten-json "d['gens']['unwritten'] == $gunwritten_gen_blocks and
	d['table']['entries']['slot'] == $gunwritten_slots" dump --json "$T/gunwritten.img"
img gvoid --gens void
expect gen-void 0 '^result: clean$' check "$T/gvoid.img"
jexpect gen-void-json "d['gens']['void'] == $gvoid_gen_blocks and
	d['table']['entries']['slot'] == $gvoid_slots" dump --json "$T/gvoid.img"
img gforeign --gens foreign
expect gen-foreign 0 'note: 1 gen block is neither blank nor of a flaz format' check "$T/gforeign.img"
# a damaged gen block is damage, as a damaged table block is: no entry into its extents is usable
img badgen --evict 2 --bad-gen-block 0
sum=$(sha "$T/badgen.img")
expect gen-block-crc 4 'corrupt: gen block 0 \(sector [0-9]+\): bad checksum; entries into extents 0-[0-9]+ are unusable' \
	check "$T/badgen.img"
expect gen-block-crc-summary 4 "0 slots .*, 0 void entries \(left by evictions\), $((badgen_slots + badgen_void)) unusable entries" \
	check "$T/badgen.img"
jexpect gen-block-crc-json "d['gens']['bad'] == 1 and d['gens']['bad_blocks'] == [0] and
	d['table']['entries']['unusable'] == $badgen_slots + $badgen_void and
	d['table']['entries']['slot'] == 0" dump --json "$T/badgen.img"
jexpect gen-block-crc-entries "all(e['kind'] == 'unusable' for e in d['entries'] if 'ext' in e)" \
	dump --json --entries "$T/badgen.img"
[ "$(sha "$T/badgen.img")" = "$sum" ] && pass gen-block-check-writes-nothing ||
	fail gen-block-check-writes-nothing "check or dump changed the image"
expect gen-block-repair 3 'repaired: gen block 0: rewritten at generation 0' check --repair "$T/badgen.img"
expect gen-block-repaired 0 '^result: clean$' check "$T/badgen.img"
jexpect gen-block-repaired-json "d['gens']['valid'] == 1 and d['table']['entries']['slot'] == 0 and
	d['table']['entries']['unusable'] == 0 and d['table']['entries']['zero'] == $badgen_zeros" \
	dump --json "$T/badgen.img"
cp "$T/clean.img" "$T/genmagic.img"
flip "$T/genmagic.img" "$(nth gen 1 "$T/clean.map")"
expect gen-block-magic 4 'corrupt: gen block 0 .*: bad magic' check "$T/genmagic.img"

# --- slots and extents
cp "$T/clean.img" "$T/slot.img"
flip "$T/slot.img" $(($(nth slot 5 "$T/clean.map") + 40))
expect slot-flip 4 'corrupt: line [0-9]+: no valid slot at extent' check "$T/slot.img"
expect slot-repair 3 'cleared 1 bad entry' check --repair "$T/slot.img"
expect slot-repaired 0 '^result: clean$' check "$T/slot.img"
jexpect slot-repaired-json "d['table']['entries']['slot'] == $clean_slots - 1" dump --json "$T/slot.img"
cp "$T/clean.img" "$T/slothdr.img"
flip "$T/slothdr.img" $(($(nth slot 9 "$T/clean.map") + 8))
expect slot-header-flip 4 'corrupt: line [0-9]+: no valid slot' check "$T/slothdr.img"
cp "$T/clean.img" "$T/ext.img"
flip "$T/ext.img" $(($(nth exthdr 2 "$T/clean.map") + 12))
expect extent-header-flip 4 'corrupt: line [0-9]+: extent [0-9]+ has a bad header' check "$T/ext.img"
# slots whose checksum holds but that are not what the entry says
img wcold --wrong cold
expect slot-wrong-cold 4 'corrupt: line [0-9]+: slot at extent 0 offset [0-9]+ is lz4, the entry says it is in the cold codec' \
	check "$T/wcold.img"
img wcodec --wrong codec
expect slot-wrong-codec 4 'corrupt: line [0-9]+: slot at extent 0 offset [0-9]+ is zstd, the superblock says lz4' \
	check "$T/wcodec.img"
img wline --wrong line
expect slot-wrong-line 4 'corrupt: line ([0-9]+): slot at extent 0 offset [0-9]+ was written for line [0-9]+' \
	check "$T/wline.img"
img wblock --wrong block
expect slot-wrong-block 4 'holds block [0-9]+, not one of tag [0-9]+ on this line' check "$T/wblock.img"
img wsize --wrong size
expect slot-wrong-size 4 'slot at extent 0 offset [0-9]+ is [0-9]+ bytes, the entry says [0-9]+' \
	check "$T/wsize.img"
expect slot-wrong-repair 3 'cleared 1 bad entry' check --repair "$T/wsize.img"
cp "$T/clean.img" "$T/dead.img"
flip "$T/dead.img" $(($(nth dead 3 "$T/clean.map") + 100))
expect dead-slot-flip 0 '^result: clean$' check "$T/dead.img"
img small --ssd-kib 4096 --extent-kib 8 --overbook 1000 --slots 200 --codec 3
expect small-extents 0 '^result: clean$' check "$T/small.img"
img tagcut --hdd-mib 131072
expect tag-cut 0 '^result: clean$' check "$T/tagcut.img"
expect tag-cut-entries 0 'tag [0-9]+ \(low bits\) in extent' dump --entries "$T/tagcut.img"

# --- write-intent bitmap: an unclean shutdown is ignorable, its regions' lines are dropped
img unclean --unclean 3
expect unclean 3 "unclean shutdown: 3 write-intent regions marked .*drops the $unclean_dropped cached line" \
	check "$T/unclean.img"
img pastbit --past-bit 1
expect bitmap-past-end 3 'warning: the write-intent bitmap has 1 bit set past its 1024 regions' \
	check "$T/pastbit.img"
jexpect unclean-json "not d['superblocks'][0]['clean'] and
	len(d['superblocks'][0]['marked_regions']) == 3" dump --json "$T/unclean.img"

# --- the reclaim order a clean stop saved: read through, chunk by chunk; damage is a
# warning (the kernel places what it read before the chunk, the rest by index), never
# corrupt, and --repair leaves it (the next clean stop writes a new one)
img order --order 3
expect order-sound 0 "reclaim order: $order_extents extents \\([0-9]+ probation, [0-9]+ main\\), .* in 3 chunks from extent $(( ($(nth order 1 "$T/order.map") / 512 - 128) / 64 ))," \
	check "$T/order.img"
for k in 0 1 2; do
	cp "$T/order.img" "$T/order-$k.img"
	# chunk 0's payload, chunk 1's magic, chunk 2's next (the last names none)
	flip "$T/order-$k.img" $(($(nth order $((k + 1)) "$T/order.map") + (k == 0 ? 100 : k == 1 ? 0 : 28)))
	expect order-damaged-$k 3 "warning: the reclaim order saved at the clean stop is damaged in its chunk $k \\(0 to 2, extent [0-9]+\\): it fails its checks" \
		check "$T/order-$k.img"
done
jexpect order-damaged-json "rc == 3 and [(p['area'], p['chunk'], p['kind']) for p in d['problems']] == [('order', 1, 'warning')]" \
	check --json "$T/order-1.img"
img orderdmg --order 4 --order-damage 3
expect order-damaged-last 3 'damaged in its chunk 3 \(0 to 3' check "$T/orderdmg.img"
before=$(sha "$T/order-1.img")
expect order-repair-leaves-it 3 'damaged in its chunk 1' check --repair "$T/order-1.img"
[ "$(sha "$T/order-1.img")" = "$before" ] && pass order-repair-unchanged ||
	fail order-repair-unchanged "check --repair wrote to an image whose only problem is the order"
# the chain not as the superblock counts it: more chunks named than the payload takes (the
# kernel reads it whole all the same), or fewer (the payload goes on past them)
img ordermore --order 3 --order-count 4
expect order-count-more 3 "warning: the reclaim order saved at the clean stop is not as its superblock says in its chunk 2 \\(0 to 3, extent [0-9]+\\): more chunks or bytes follow its end; the next activation reads it all the same" \
	check "$T/ordermore.img"
img orderfewer --order 3 --order-count 2
expect order-count-fewer 3 "damaged in its chunk 1 \\(0 to 1, extent [0-9]+\\): its payload goes on past the superblock's count of chunks" \
	check "$T/orderfewer.img"
img orderunclean --order 2 --unclean 1
expect order-unclean 3 'warning: the superblock names a reclaim order but is not clean: the kernel ignores it' \
	check "$T/orderunclean.img"

# --- a superblock of another format version: not corrupt, just not readable here
img v1 --sb-version 1
sum=$(sha "$T/v1.img")
expect sb-version-1 4 '^unsupported: superblock of format version 1; this flazctl reads version 4 \(recreate the volume with --cold' \
	check "$T/v1.img"
if grep -q '^corrupt' "$T/out"; then
	fail sb-version-1-not-corrupt "$(grep -m1 '^corrupt' "$T/out")"
else
	pass sb-version-1-not-corrupt
fi
expect sb-version-1-repair 4 'format version 1, which this flazctl does not read' check --repair "$T/v1.img"
[ "$(sha "$T/v1.img")" = "$sum" ] && pass sb-version-1-repair-writes-nothing ||
	fail sb-version-1-repair-writes-nothing "the image changed"
expect sb-version-1-dump 4 'superblock of format version 1; this flazctl reads version 4' dump "$T/v1.img"
expect sb-version-1-dump-copy 4 'superblock copy 1 \(sector 8\): format version 1 \(this flazctl reads version 4\)' \
	dump "$T/v1.img"
jexpect sb-version-1-json "d['current'] is None and d['gens'] is None and
	all(c['state'] == 'other format version' and c['version'] == 1 for c in d['superblocks'])" \
	dump --json "$T/v1.img"
# the format just before (8-bit generations, a byte each in the gen blocks): refused too
img v3 --sb-version 3
expect sb-version-3 4 '^unsupported: superblock of format version 3; this flazctl reads version 4' \
	check "$T/v3.img"
# one copy left of the earlier version beside a sound one: that one is used
cp "$T/clean.img" "$T/v1copy.img"
dd if="$T/v1.img" of="$T/v1copy.img" bs=4096 skip=1 seek=1 count=1 conv=notrunc status=none
expect sb-version-1-other-copy 3 'warning: superblock copy 1 \(sector 8\): of format version 1; copy 0 is used' \
	check "$T/v1copy.img"

# --- not a flaz SSD, or not this one: the result says what the SSD holds (as create --cold
# names it), and suggests no --repair, which has nothing to fix there
truncate -s 8M "$T/blank.img"
expect blank 4 'no flaz superblock: the superblock area is blank' check "$T/blank.img"
expect blank-result 4 '^result: not a flaz SSD: its superblock area is blank \(a new SSD, or never used by flaz\)$' \
	check "$T/blank.img"
expect blank-repair-result 4 '^result: not a flaz SSD: its superblock area is blank' check --repair "$T/blank.img"
expect blank-dump 4 'holds no valid flaz superblock' dump "$T/blank.img"
truncate -s 8M "$T/ext4.img"
if command -v mkfs.ext4 >/dev/null || PATH=$PATH:/sbin:/usr/sbin command -v mkfs.ext4 >/dev/null; then
	PATH=$PATH:/sbin:/usr/sbin mkfs.ext4 -q -F "$T/ext4.img" >&2
else
	# the ext2/3/4 superblock's magic, at byte 1080
	printf '\123\357' | dd of="$T/ext4.img" bs=1 seek=1080 conv=notrunc status=none
fi
sum=$(sha "$T/ext4.img")
expect ext4 4 "^corrupt: $T/ext4.img holds an ext2/3/4 filesystem, not a flaz SSD\$" check "$T/ext4.img"
expect ext4-result 4 "^result: not a flaz SSD: $T/ext4.img holds an ext2/3/4 filesystem\$" check "$T/ext4.img"
expect ext4-repair-result 4 "^result: not a flaz SSD: $T/ext4.img holds an ext2/3/4 filesystem\$" \
	check --repair "$T/ext4.img"
[ "$(sha "$T/ext4.img")" = "$sum" ] && pass ext4-repair-writes-nothing ||
	fail ext4-repair-writes-nothing "check --repair changed the ext4 image"
jexpect ext4-json "d['verdict'] == 'corrupt' and d['problems'][0]['area'] == 'superblock' and
	d['problems'][0]['message'].endswith('holds an ext2/3/4 filesystem, not a flaz SSD')" check --json "$T/ext4.img"
head -c 1M /dev/urandom >"$T/random.img"
expect not-flaz 4 "^corrupt: $T/random.img holds .*, not a flaz SSD\$" check "$T/random.img"
expect not-flaz-result 4 "^result: not a flaz SSD: $T/random.img holds " check "$T/random.img"
cp "$T/clean.img" "$T/grown.img"
truncate -s +1M "$T/grown.img"
expect size-mismatch-result 4 '^result: corrupt \(1 problem\), none repairable: the superblock does not match this SSD$' \
	check "$T/grown.img"
sum=$(sha "$T/grown.img")
expect size-mismatch 4 'superblock is for an SSD of 16384 sectors' check --repair "$T/grown.img"
[ "$(sha "$T/grown.img")" = "$sum" ] && pass size-mismatch-no-repair ||
	fail size-mismatch-no-repair "--repair wrote to an SSD whose superblock does not fit it"
img shrunk --ssd-kib 1048576 --slots 20 --zeros 0
truncate -s 2M "$T/shrunk.img"
# a superblock for a larger SSD is never used: its areas would lie past the device's end
expect ssd-shrunk 4 'corrupt: superblock copy 0 \(sector 0\): superblock field ssd_sectors=2097152 impossible for a device of 2097152 bytes' \
	check "$T/shrunk.img"
jexpect ssd-shrunk-json "d['current'] is None and d['table'] is None and
	all(c['state'] == 'impossible' and c['field'] == 'ssd_sectors' and c['value'] == 2097152
	for c in d['superblocks'])" dump --json "$T/shrunk.img"

# --- crafted superblocks (checksums right): every loop is bounded by the device, so
# check and dump answer at once (run() gives each 10 s), whatever the header says
img hugessd --sb-ssd-sectors $((1 << 62))
expect crafted-ssd-sectors 4 "superblock field ssd_sectors=$((1 << 62)) impossible for a device of 8388608 bytes" \
	check "$T/hugessd.img"
expect crafted-ssd-sectors-dump 4 "impossible \(superblock field ssd_sectors=$((1 << 62)) impossible" \
	dump "$T/hugessd.img"
# one copy so: the other serves, and --repair rewrites it from that one
cp "$T/clean.img" "$T/hugessd1.img"
dd if="$T/hugessd.img" of="$T/hugessd1.img" bs=4096 skip=1 seek=1 count=1 conv=notrunc status=none
expect crafted-ssd-sectors-one-copy 3 'warning: superblock copy 1 \(sector 8\): superblock field ssd_sectors=[0-9]+ impossible .*; copy 0 is used' \
	check "$T/hugessd1.img"
expect crafted-ssd-sectors-repair 3 'repaired: superblock copy 1 rewritten from copy 0' \
	check --repair "$T/hugessd1.img"
expect crafted-ssd-sectors-repaired 0 '^result: clean$' check "$T/hugessd1.img"
# 8 EiB and more: no block device is that large (a loff_t)
img hugehdd --hdd-mib $((1 << 44))
expect crafted-hdd-sectors 4 "superblock field hdd_sectors=$((1 << 55)) impossible: no block device holds more" \
	check "$T/hugehdd.img"
expect crafted-hdd-sectors-dump 4 'holds no valid flaz superblock' dump --json "$T/hugehdd.img"
# a 1 EiB volume, unclean: the kernel's rule for cut tags asks 2^48 / (16 * lines) blocks
# per entry; check asks each marked range once
img exa --hdd-mib $((1 << 40)) --unclean 3
expect crafted-huge-volume-unclean 3 "3 write-intent regions marked .*drops the $exa_dropped cached line" \
	check "$T/exa.img"
jexpect crafted-huge-volume-dump "d['table']['entries']['slot'] == $exa_slots" \
	dump --json --entries "$T/exa.img"
# the most lines an SSD of this size can have: 4 KiB extents, overbook 1000
img dense --extent-kib 4 --overbook 1000 --slots 1500 --zeros 100 --unclean 30 --hdd-mib 65536
expect crafted-dense-unclean 3 "30 write-intent regions marked .*drops the $dense_dropped cached line" \
	check "$T/dense.img"

# --- the command line: check's usage errors are 64, apart from corrupt (2)
expect usage-check 2 'usage: flazctl check SSD' check
expect usage-check-extra 2 'usage: flazctl check SSD' check a b
expect usage-check-option 2 'unknown option --yaml' check --yaml "$T/clean.img"
expect help-check-exit 0 'Exit status: 0 clean, 3 ignorable problems or repaired, 4 corrupt, 1 cannot be' check -h
expect help-dump-exit 0 'Exit status: 0 ok, 4 no valid superblock' dump -h
expect usage-dump-option 2 'unknown option --yaml' dump "$T/clean.img" --yaml
expect check-missing 1 "/nonexistent/ssd: No such file or directory" check /nonexistent/ssd
expect dump-missing 1 "/nonexistent/ssd: No such file or directory" dump /nonexistent/ssd
expect check-directory 1 'neither a block device nor an image file' check "$T"
expect help-check 0 'flazctl check SSD \[--repair\]' --help

# --- check --json: the verdict, counts and every problem with where it is
jexpect check-json-clean "rc == 0 and d['verdict'] == 'clean' and not d['damaged'] and
	d['exit_code'] == 0 and d['problems'] == [] and d['current'] == 0 and
	d['summary']['entries']['slot'] == $clean_slots and d['summary']['entries']['zero'] == $clean_zeros
	and d['summary']['table_blocks']['valid'] == $clean_table_blocks and
	d['summary']['extent_reads'] == $clean_extents and d['counts']['corrupt'] == 0" \
	check --json "$T/clean.img"
cp "$T/clean.img" "$T/tbj.img"
flip "$T/tbj.img" $(($(nth table 3 "$T/clean.map") + 1000))
jexpect check-json-table "rc == 4 and d['verdict'] == 'corrupt' and d['damaged'] and
	d['exit_code'] == 4 and d['counts']['corrupt'] == 1 and d['problems'][0]['kind'] == 'corrupt'
	and d['problems'][0]['area'] == 'table' and d['problems'][0]['block'] == 2 and
	'bad checksum' in d['problems'][0]['message']" check "$T/tbj.img" --json
cp "$T/clean.img" "$T/slotj.img"
flip "$T/slotj.img" $(($(nth slot 5 "$T/clean.map") + 40))
jexpect check-json-slot "rc == 4 and [(p['area'], p['line'] >= 0, p['extent'] >= 0, p['offset'] >= 32)
	for p in d['problems']] == [('slot', True, True, True)]" check --json "$T/slotj.img"
jexpect check-json-repair "rc == 3 and d['verdict'] == 'repaired' and d['repair'] and
	d['counts']['repaired'] == 1 and d['problems'][-1]['kind'] == 'repaired' and
	d['problems'][-1]['area'] == 'table' and not d['damaged']" check --json --repair "$T/slotj.img"
jexpect check-json-unclean "rc == 3 and d['verdict'] == 'ignorable' and
	d['summary']['marked_regions'] == 3 and d['summary']['dropped_lines'] == $unclean_dropped and
	d['problems'][0]['kind'] == 'warning' and d['problems'][0]['area'] == 'bitmap'" \
	check --json "$T/unclean.img"
jexpect check-json-unsupported "rc == 4 and d['verdict'] == 'unsupported' and
	d['counts']['unsupported'] == 1 and d['summary'] is None" check --json "$T/v1.img"
jexpect check-json-impossible "rc == 4 and d['verdict'] == 'corrupt' and d['current'] is None and
	[(p['area'], p['copy']) for p in d['problems']] == [('superblock', 0), ('superblock', 1)]" \
	check --json "$T/hugessd.img"
jexpect check-json-missing "rc == 1 and d['verdict'] == 'unreadable' and d['exit_code'] == 1" \
	check --json /nonexistent/ssd
# every JSON object flazctl prints opens with its schema version
jexpect check-json-schema "list(d)[0] == 'schema' and d['schema'] == 2" check --json "$T/clean.img"
jexpect check-json-missing-schema "list(d)[0] == 'schema' and d['schema'] == 2" check --json /nonexistent/ssd
jexpect dump-json-missing "rc == 1 and d['verdict'] == 'unreadable' and d['exit_code'] == 1" \
	dump --json /nonexistent/ssd
jexpect dump-json-schema "list(d)[0] == 'schema' and d['schema'] == 2" dump --json "$T/clean.img"

# --- the userspace crc32c (slicing-by-8) against known vectors (RFC 3720) and bit by bit
cat >"$T/crc.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format.h"

static __u32 bitwise(__u32 crc, const unsigned char *b, size_t len)
{
	int k;

	while (len--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return crc;
}

static int bad;

static void want(const char *what, const void *p, __u32 len, __u32 crc)
{
	__u32 got = ~flaz_crc32c(~0U, p, len);

	if (got != crc) {
		printf("%s: %08x, want %08x\n", what, got, crc);
		bad = 1;
	}
}

int main(void)
{
	unsigned char buf[4200], v[32];
	__u32 i, off, len, split, a, b;

	want("123456789", "123456789", 9, 0xe3069283);
	memset(v, 0, 32);
	want("32 zeros", v, 32, 0x8a9136aa);
	memset(v, 0xff, 32);
	want("32 ones", v, 32, 0x62a8ab43);
	for (i = 0; i < 32; i++)
		v[i] = i;
	want("0..31", v, 32, 0x46dd794e);
	for (i = 0; i < 32; i++)
		v[i] = 31 - i;
	want("31..0", v, 32, 0x113fdb5c);
	srand(1);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = rand();
	for (i = 0; i < 3000 && !bad; i++) {
		off = rand() % 8;
		len = i < 100 ? i : (__u32)rand() % (sizeof(buf) - 8);
		split = len ? rand() % len : 0;
		a = flaz_crc32c(~0U, buf + off, split);
		a = flaz_crc32c(a, buf + off + split, len - split);
		b = bitwise(~0U, buf + off, len);
		if (a != b) {
			printf("%u bytes at %u (split at %u): %08x, bit by bit %08x\n", len, off,
			       split, a, b);
			bad = 1;
		}
	}
	return bad;
}
EOF
if ! gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$FLAZ" -o "$T/crc" "$T/crc.c" "$FLAZ/format.c" \
	2>"$T/gcc.err"; then
	fail crc32c "$(head -n3 "$T/gcc.err")"
elif ! out=$("$T/crc" 2>&1); then
	fail crc32c "$out"
else
	pass crc32c
fi

# --- each extent is read once: check reads at most the device's bytes (strace sums what
# every pread64 returned), and as many extents as the table references
img reads --ssd-kib 65536 --slots 4000 --zeros 0 --dead 0
if ! command -v strace >/dev/null || ! strace -o /dev/null true 2>/dev/null; then
	skip read-once "no working strace here"
else
	strace -e trace=pread64 -o "$T/strace" "$BIN" check "$T/reads.img" >"$T/out" 2>&1
	bytes=$(awk -F'= ' '/^pread64/ { s += $NF } END { print s + 0 }' "$T/strace")
	size=$(stat -c %s "$T/reads.img")
	if [ "$bytes" -gt "$size" ]; then
		fail read-once "check read $bytes bytes of a $size-byte image"
	elif ! grep -q "$reads_slots slots .* $reads_extents extent reads$" "$T/out"; then
		fail read-once "$reads_extents extents referenced, but: $(grep summary "$T/out")"
	else
		pass read-once
		echo "check read $bytes bytes of a $size-byte image ($reads_slots slots in $reads_extents extents)"
	fi
fi

# --- a progress line on a terminal only
if ! command -v script >/dev/null; then
	skip progress-tty "no script(1) here"
	skip progress-not-tty "no script(1) here"
else
	script -qec "timeout 10 '$BIN' check '$T/reads.img'" /dev/null >"$T/tty" 2>&1
	if grep -qE "checking extents: $reads_extents/$reads_extents \(100%\)" "$T/tty"; then
		pass progress-tty
	else
		fail progress-tty "no progress line on a terminal: $(tr '\r' '\n' <"$T/tty" | head -n3)"
	fi
	run check "$T/reads.img"
	[ ! -s "$T/err" ] && pass progress-not-tty || fail progress-not-tty "stderr: $(head -c 200 "$T/err")"
fi

# --- a loop device reads the same as the file, where losetup works
if LOOP=$(losetup -f --show -r "$T/clean.img" 2>/dev/null); then
	expect loop-device 0 '^result: clean$' check "$LOOP"
else
	LOOP=
	skip loop-device "losetup does not work on this host"
fi

# --- JSON on a hostile path: bytes that are not UTF-8 (stray, overlong, a surrogate, past
# U+10FFFF, cut short), control characters, a newline and 4,000 characters; every output parses and names the path as Python decodes it with
# errors="replace" (each bad run of bytes one U+FFFD, as flazctl(8) says)
HP=$T/$'\xff\xfe\x01\x1b\n\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82.\xf0\x9f\x98\x80\xc3\xa9'
while [ ${#HP} -lt 4000 ]; do HP=$HP/$(printf 'p%.0s' {1..200}); done
mkdir -p "$(dirname "$HP")" && cp "$T/clean.img" "$HP"
# hostile NAME ARGS...: flazctl ARGS prints one JSON object whose "device" is its last
# argument, decoded
hostile() {
	local name=$1 out
	shift
	run "$@"
	if out=$(python3 -c '
import json, os, sys
d = json.loads(open(sys.argv[1], "rb").read())
assert d["device"] == os.fsencode(sys.argv[2]).decode("utf-8", "replace"), d["device"][:40]' \
		"$T/out" "${@: -1}" 2>&1); then
		pass "$name"
	else
		fail "$name" "(exit $rc) $(tail -n1 <<<"$out")"
	fi
}
hostile hostile-check-json check --json "$HP"
hostile hostile-check-json-repair check --json --repair "$HP"
hostile hostile-check-json-unreadable check --json "$HP.none"
hostile hostile-dump-json dump --json "$HP"
hostile hostile-dump-json-entries dump --json --entries "$HP"
hostile hostile-dump-json-superblock dump --json --superblock "$HP"
hostile hostile-dump-json-unreadable dump --json "$HP.none"

# --- random damage under the sanitizers
bash "$REPO/tests/host/fuzz_check.sh" "${FUZZ_ITERATIONS:-100000}" || fails=$((fails + 1))

[ $fails -eq 0 ]

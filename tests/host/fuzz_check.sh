#!/bin/bash
# Fuzz flazctl check and dump: flazctl and mkimage built with ASan and UBSan into a temp
# dir, one clean image (two of its extents evicted: their entries are void), then
# ITERATIONS rounds of flipping 1-8 bytes where they matter (superblock copies, table
# blocks, gen blocks, extent headers, the checksummed bytes of live slots, superseded
# slots, the slots and headers of evicted extents) and running `check` and `dump --json`
# on it. Neither may crash or trip a sanitizer; check must exit non-zero when a flip hit
# the current superblock, a table block, a gen block, an extent header or a live slot,
# exactly 1 when only the other superblock copy was hit, 0 when only superseded slots or
# evicted extents were (a table or gen block whose magic and gen are both hit looks like
# leftovers from before the format and may pass as empty, as the kernel takes it);
# dump --json must print valid JSON.
# Every 10th round also runs check --repair on a copy: afterwards check must exit 0 or 1
# (2 only when both superblock copies were hit). The image must be unchanged at the end:
# plain check and dump never write. The rounds stop early at a time budget
# (FUZZ_SECONDS, 20) so that a busy machine does not stall the host suite.
# Usage: tests/host/fuzz_check.sh [ITERATIONS (300)] [SEED]
# Prints PASS/FAIL host/check/fuzz* lines; exits non-zero iff one failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLAZ=$REPO/drivers/md/dm-flaz
ITERATIONS=${1:-300}
SEED=${2:-$RANDOM}
BUDGET=${FUZZ_SECONDS:-20}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

pass() { echo "PASS host/check/$1"; }
fail() { echo "FAIL host/check/$1: $2"; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# a private copy of flazctl's sources, so the normal build's objects are left alone
mkdir "$T/src"
cp "$REPO"/tools/flazctl/{*.c,*.h,Makefile} "$T/src/"
if ! make -s -j2 -C "$T/src" FLAZ_DIR="$FLAZ" CFLAGS="-O0 -g $SAN" LDFLAGS="$SAN" \
	>"$T/build.log" 2>&1 ||
   ! gcc -std=gnu11 -O0 -g $SAN -Wall -Wextra -Werror -I"$FLAZ" -o "$T/mkimage" \
	"$REPO/tests/host/mkimage.c" "$FLAZ/format.c" >>"$T/build.log" 2>&1; then
	fail fuzz-build "$(grep -m1 -iE 'error|undefined' "$T/build.log")"
	exit 1
fi

if ! "$T/mkimage" "$T/base.img" --map "$T/base.map" --slots 200 --zeros 20 --dead 30 \
	--evict 2 --seed 11 >"$T/base.sum" 2>"$T/mk.err"; then
	fail fuzz-image "mkimage failed: $(head -n1 "$T/mk.err")"
	exit 1
fi
if ! "$T/src/flazctl" check "$T/base.img" >"$T/base.out" 2>&1; then
	fail fuzz-image "the unharmed image is not clean: $(grep -m1 -E 'corrupt|warning' "$T/base.out")"
	exit 1
fi

export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1
echo "fuzz seed $SEED, $ITERATIONS iterations" >&2
python3 - "$T" "$ITERATIONS" "$SEED" "$BUDGET" <<'EOF'
import hashlib, json, random, shutil, subprocess, sys, time

T, iterations, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + float(sys.argv[4])
rng = random.Random(seed)
img, flazctl = f'{T}/base.img', f'{T}/src/flazctl'
ranges = {}
for l in open(f'{T}/base.map'):
    kind, off, length = l.split()
    ranges.setdefault(kind, []).append((int(off), int(length)))
MUST_FAIL = {'sbcur', 'table', 'gen', 'exthdr', 'slot'}
UNREAD = {'dead', 'void', 'voidext'}	# no live entry points there: check never fails for them
SANITIZER = ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'UndefinedBehaviorSanitizer')
original = hashlib.sha256(open(img, 'rb').read()).hexdigest()
failures, counts = [], {'runs': 0, 'detected': 0, 'warned': 0, 'clean': 0, 'repairs': 0}

def run(*args):
    p = subprocess.run([flazctl, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr

def crashed(rc, err):
    return rc < 0 or rc >= 64 or any(s in err for s in SANITIZER)

def flips():
    """1-8 distinct offsets, each in a range of a random kind: {offset: (kind, range start)}"""
    chosen = {}
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(sorted(ranges))
        off, length = rng.choice(ranges[kind])
        chosen[off + rng.randrange(length)] = (kind, off)
    return chosen

def leftover_like(chosen):
    """Table and gen blocks whose magic (bytes 0-3) and gen (8-15) were both hit: they look
    like leftovers from before the format, which the kernel takes as empty (a gen block: all
    its extents at gen 0), so check may too."""
    blocks = {}
    for off, (kind, start) in chosen.items():
        if kind in ('table', 'gen'):
            blocks.setdefault(start, set()).add(off - start)
    return {s for s, rel in blocks.items()
            if any(r < 4 for r in rel) and any(8 <= r < 16 for r in rel)}

for it in range(iterations):
    if time.monotonic() > deadline:
        print(f'fuzz: time budget reached after {it} of {iterations} iterations', file=sys.stderr)
        break
    chosen = flips()
    spared = leftover_like(chosen)
    hit = {k for k, start in chosen.values() if not (k in ('table', 'gen') and start in spared)}
    table_spared = bool(spared)
    what = f'iteration {it}: flips {sorted((o, k) for o, (k, _) in chosen.items())}'
    with open(img, 'r+b') as f:
        saved = {}
        for off in chosen:
            f.seek(off)
            saved[off] = f.read(1)[0]
            f.seek(off)
            f.write(bytes([saved[off] ^ rng.randint(1, 255)]))
    try:
        rc, out, err = run('check', img)
        counts['runs'] += 1
        if crashed(rc, err):
            failures.append(f'{what}: check crashed (exit {rc}): {err.strip()[:400]}')
        elif hit & MUST_FAIL and rc == 0:
            failures.append(f'{what}: check exited 0')
        elif not hit & MUST_FAIL and 'sbold' in hit and rc != 1 and not table_spared:
            failures.append(f'{what}: check exited {rc}, want 1 (only the other copy hit)')
        elif hit <= UNREAD and rc != 0 and not table_spared:
            failures.append(f'{what}: check exited {rc}, want 0 (only superseded slots or evicted extents hit)')
        counts[['clean', 'warned', 'detected'][min(max(rc, 0), 2)]] += 1
        rc, out, err = run('dump', '--json', '--entries', img)
        if crashed(rc, err) or rc not in (0, 1):
            failures.append(f'{what}: dump crashed (exit {rc}): {err.strip()[:400]}')
        else:
            try:
                json.loads(out)
            except ValueError as e:
                failures.append(f'{what}: dump --json printed no JSON ({e})')
        if it % 10 == 0:
            copy = f'{T}/repair.img'
            shutil.copyfile(img, copy)
            rc, out, err = run('check', '--repair', copy)
            rc2, out2, err2 = run('check', copy)
            counts['repairs'] += 1
            both = 'sbcur' in hit and 'sbold' in hit
            if crashed(rc, err) or crashed(rc2, err2):
                failures.append(f'{what}: check --repair crashed: {(err + err2).strip()[:400]}')
            elif rc2 > 1 and not both:
                failures.append(f'{what}: check exits {rc2} after --repair (exit {rc}): '
                                + ' | '.join(l for l in out2.splitlines() if l.startswith('corrupt'))[:300])
    finally:
        with open(img, 'r+b') as f:
            for off, b in saved.items():
                f.seek(off)
                f.write(bytes([b]))

print(f'fuzz: {counts["runs"]} runs: exit 2 {counts["detected"]}, exit 1 {counts["warned"]}, '
      f'exit 0 {counts["clean"]}; {counts["repairs"]} repairs', file=sys.stderr)
for f in failures[:10]:
    print(f, file=sys.stderr)
if hashlib.sha256(open(img, 'rb').read()).hexdigest() != original:
    failures.append('the image changed: check or dump wrote to it')
    print(failures[-1], file=sys.stderr)
if failures:
    print(f'FAIL host/check/fuzz: {len(failures)} of {counts["runs"]} iterations failed '
          f'(seed {seed}; first: {failures[0][:300]})')
    sys.exit(1)
print('PASS host/check/fuzz')
EOF

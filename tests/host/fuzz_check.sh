#!/bin/bash
# Fuzz flazctl check and dump: flazctl (with a small CHECK_BATCH, so that the table's
# slots are checked in many batches) and mkimage built with ASan and UBSan into a temp
# dir, then seed images from mkimage: clean ones (one with two extents evicted: their
# entries are void), unclean ones, small extents, cut tags, a 1 EiB volume, and crafted
# superblocks no device can have. Each round damages a copy of a random seed in one of
# three ways and runs `check`, `check --json` (every third round) and `dump --json
# --entries` on it, each under a 5 s limit (a run over it is a failure: a loop bounded
# by a header field, not the device):
#   - flip 1-8 bytes where they matter (superblock copies, table blocks, gen blocks,
#     extent headers, the checksummed bytes of live slots, superseded slots, the slots
#     and headers of evicted extents, the chunks of a saved reclaim order);
#   - set a field of a superblock copy to a boundary value (0, 1, 2^32, 2^63, the
#     device's size +-1, ...) and make its checksum right again, so the decoder and
#     everything after it see the value;
#   - set table entries to boundary values (largest extent, offset, size, tag) with
#     the table block's checksum made right.
# Nothing may crash or trip a sanitizer, and the JSON must parse (check --json's
# exit_code being check's exit status). On a seed that checks clean or with warnings
# only, byte flips must also give the right verdict: check exits non-zero when a flip
# hit the current superblock, a table block, a gen block, an extent header, a live
# slot or a chunk of the reclaim order, 3 (ignorable) when only the other superblock copy was hit, as on the unharmed seed when only
# superseded slots or evicted extents were (a table or gen block whose magic and gen are
# both hit looks like leftovers from before the format and may pass as empty, as the
# kernel takes it). Every 10th round runs check --repair on a copy: afterwards check
# must exit 0 or 3 (4, corrupt, only when both superblock copies were hit, or the seed was
# beyond repair). The image must be unchanged after check and dump: they never write
# without --repair. Two workers run until FUZZ_SECONDS (60) or ITERATIONS rounds.
# Usage: tests/host/fuzz_check.sh [ITERATIONS (100000)] [SEED]
# Prints PASS/FAIL host/check/fuzz* lines; exits non-zero iff one failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FLAZ=$REPO/drivers/md/dm-flaz
ITERATIONS=${1:-100000}
SEED=${2:-$RANDOM}
BUDGET=${FUZZ_SECONDS:-60}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

pass() { echo "PASS host/check/$1"; }
fail() { echo "FAIL host/check/$1: $2"; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# a private copy of flazctl's sources, so the normal build's objects are left alone
mkdir "$T/src"
cp "$REPO"/tools/flazctl/{*.c,*.h,Makefile} "$T/src/"
if ! make -s -j2 -C "$T/src" FLAZ_DIR="$FLAZ" CFLAGS="-O0 -g $SAN -DCHECK_BATCH=64" \
	LDFLAGS="$SAN" >"$T/build.log" 2>&1 ||
   ! gcc -std=gnu11 -O0 -g $SAN -Wall -Wextra -Werror -I"$FLAZ" -o "$T/mkimage" \
	"$REPO/tests/host/mkimage.c" "$FLAZ/format.c" >>"$T/build.log" 2>&1; then
	fail fuzz-build "$(grep -m1 -iE 'error|undefined' "$T/build.log")"
	exit 1
fi

# NAME MKIMAGE-OPTIONS: the seeds
seeds=(
	"base --slots 200 --zeros 20 --dead 30 --evict 2 --seed 11"
	"cur1 --slots 150 --current 1 --codec 2 --seed 12"
	"unclean --slots 150 --evict 1 --unclean 4 --seed 13"
	"small --ssd-kib 4096 --extent-kib 8 --overbook 1000 --slots 200 --codec 3 --seed 14"
	"dense --extent-kib 4 --overbook 1000 --slots 400 --hdd-mib 65536 --unclean 8 --seed 15"
	"tagcut --hdd-mib 131072 --slots 150 --unclean 5 --seed 16"
	"exa --hdd-mib $((1 << 40)) --slots 100 --unclean 3 --seed 17"
	"hugessd --slots 50 --sb-ssd-sectors $((1 << 62)) --seed 18"
	"hugehdd --slots 50 --hdd-mib $((1 << 44)) --seed 19"
	"order --slots 150 --evict 1 --order 3 --seed 20"
)
for s in "${seeds[@]}"; do
	read -r name opts <<<"$s"
	# shellcheck disable=SC2086
	if ! "$T/mkimage" "$T/$name.img" --map "$T/$name.map" $opts >/dev/null 2>"$T/mk.err"; then
		fail fuzz-image "mkimage $opts failed: $(head -n1 "$T/mk.err")"
		exit 1
	fi
done
if ! "$T/src/flazctl" check "$T/base.img" >"$T/base.out" 2>&1; then
	fail fuzz-image "the unharmed image is not clean: $(grep -m1 -E 'corrupt|warning' "$T/base.out")"
	exit 1
fi

export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1
echo "fuzz seed $SEED, up to $ITERATIONS iterations in ${BUDGET}s" >&2
python3 - "$T" "$ITERATIONS" "$SEED" "$BUDGET" "${seeds[@]%% *}" <<'EOF'
import hashlib, json, random, shutil, struct, subprocess, sys, threading, time

T, iterations, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + float(sys.argv[4])
names = sys.argv[5:]
flazctl = f'{T}/src/flazctl'
MUST_FAIL = {'sbcur', 'table', 'gen', 'exthdr', 'slot'}
MUST_WARN = {'order'}	# the saved reclaim order: damage costs the order, a warning
UNREAD = {'dead', 'void', 'voidext'}	# no live entry points there: check never fails for them
SANITIZER = ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'UndefinedBehaviorSanitizer')
LIMIT = 5	# seconds per run

CRC = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (0x82f63b78 & -(c & 1))
    CRC.append(c)

def reseal(blk):
    """Make the checksum of a superblock, table or gen block (crc32c of the block with
    bytes 4-7 zero, at bytes 4-7) right again."""
    blk[4:8] = b'\0\0\0\0'
    c = 0xffffffff
    for b in blk:
        c = (c >> 8) ^ CRC[(c ^ b) & 0xff]
    blk[4:8] = struct.pack('<I', c ^ 0xffffffff)

def run(*args):
    """(exit code, stdout, stderr); exit code None if the run took over LIMIT seconds"""
    try:
        p = subprocess.run([flazctl, *args], capture_output=True, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        return None, '', ''
    return p.returncode, p.stdout, p.stderr

# check's exit code as a level: 0 clean, 1 ignorable or repaired (exit 3), 2 corrupt (exit 4)
def level(rc):
    return {0: 0, 3: 1}.get(rc, 2)

def crashed(rc, err):
    return rc < 0 or rc >= 64 or any(s in err for s in SANITIZER)

class Seed:
    def __init__(self, name):
        self.name, self.img = name, f'{T}/{name}.img'
        self.data = open(self.img, 'rb').read()
        self.size = len(self.data)
        self.digest = hashlib.sha256(self.data).hexdigest()
        self.ranges = {}
        for l in open(f'{T}/{name}.map'):
            kind, off, length = l.split()
            self.ranges.setdefault(kind, []).append((int(off), int(length)))
        self.rc = level(run('check', self.img)[0])
        d = json.loads(run('dump', '--json', self.img)[1])
        cur = d['superblocks'][d['current']] if d['current'] is not None else None
        self.nr_extents = cur['geometry']['nr_extents'] if cur else 64
        extent_kib = cur['extent_kib'] if cur else 32
        # a slot entry's fields, by the documented layout (not flazctl's word): units in
        # bits 0-7, then the offset in 32-byte units, the extent, the cold bit, the low 4
        # bits of the tag, and the generation in what is left of 64 bits, 16 at most
        self.off_bits = max(1, (extent_kib * 1024 // 32 - 1).bit_length())
        self.ext_bits = max(1, (self.nr_extents - 1).bit_length())
        self.gen_bits = min(16, 64 - 8 - self.off_bits - self.ext_bits - 1 - 4)
        # where the extents' generations are (2032 16-bit ones a gen block, after a
        # 32-byte header), so that a crafted entry can carry its extent's
        self.gen_start = cur['geometry']['gen_start'] * 512 if cur else None

    def ext_gen(self, ext):
        if self.gen_start is None or ext >= self.nr_extents:
            return 0
        off = self.gen_start + ext // 2032 * 4096 + 32 + ext % 2032 * 2
        return int.from_bytes(self.data[off:off + 2], 'little')

seeds = [Seed(n) for n in names]
print('fuzz seeds: ' + ', '.join(f'{s.name} (check {(0, 3, 4)[s.rc]})' for s in seeds), file=sys.stderr)

U64 = [0, 1, 2**31, 2**32 - 1, 2**32, 2**54 - 1, 2**54, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
U32 = [0, 1, 3, 4, 8, 32, 100, 255, 256, 1000, 1001, 30720, 30721, 2**31, 2**32 - 1]
# struct flaz_sb: (offset, bytes) of every field the checksum covers
SB_FIELDS = [(8, 4), (12, 4), (16, 8), (24, 8), (48, 8), (56, 8), (64, 4), (68, 4), (72, 8),
             (80, 8), (88, 8), (96, 8), (104, 8), (112, 4), (116, 4), (120, 4), (124, 4),
             (128, 8), (136, 8), (144, 4), (148, 4), (152, 4)]

def flips(rng, s):
    """1-8 distinct offsets, each in a range of a random kind: {offset: (kind, range start)}"""
    chosen = {}
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(sorted(s.ranges))
        off, length = rng.choice(s.ranges[kind])
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

def sb_field(rng, s, img):
    """A superblock copy's field set to a boundary value, the checksum made right."""
    copy = rng.randrange(2)
    off, size = rng.choice(SB_FIELDS)
    sectors = s.size // 512
    values = (U64 + [sectors - 1, sectors, sectors + 1, rng.getrandbits(64)]) if size == 8 \
        else U32 + [rng.getrandbits(32)]
    value = rng.choice(values) % (1 << (8 * size))
    blk = bytearray(img[copy * 4096:(copy + 1) * 4096])
    blk[off:off + size] = value.to_bytes(size, 'little')
    reseal(blk)
    img[copy * 4096:(copy + 1) * 4096] = blk
    return f'superblock copy {copy} bytes {off}-{off + size - 1} = {value}'

def entries(rng, s, img):
    """Table entries set to boundary values, the block's checksum made right."""
    start, _ = rng.choice(s.ranges['table'])
    blk = bytearray(img[start:start + 4096])
    what = []
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(508)
        units = rng.choice([1, 2, 3, 129, 130, 254, 255, rng.randrange(256)])
        if units == 255:
            v = 255 | rng.choice([0, 1, 2**40, 2**56 - 1, rng.getrandbits(56)]) << 8
        else:
            ob, eb, gb = s.off_bits, s.ext_bits, s.gen_bits
            off = rng.choice([0, 1, 2, 2**ob - 1, rng.randrange(2**ob)])
            ext = rng.choice([0, s.nr_extents - 1, s.nr_extents, 2**eb - 1,
                              rng.randrange(max(s.nr_extents, 1))]) & (2**eb - 1)
            # 2**gb - 2: the last even (free) one, worn out; the extent's own: a live entry
            gen = rng.choice([0, 1, 2**gb - 2, 2**gb - 1, rng.randrange(2**gb),
                              s.ext_gen(ext), s.ext_gen(ext)]) & (2**gb - 1)
            pos = 8 + ob + eb
            v = (units | off << 8 | ext << (8 + ob) | rng.randrange(2) << pos |
                 rng.randrange(16) << (pos + 1) | gen << (pos + 5))
        blk[32 + 8 * k:40 + 8 * k] = v.to_bytes(8, 'little')
        what.append(f'{k}={v:016x}')
    reseal(blk)
    img[start:start + 4096] = blk
    return f'table block at {start}: entries ' + ' '.join(what)

lock = threading.Lock()
failures, counts = [], {'runs': 0, 'detected': 0, 'warned': 0, 'clean': 0, 'repairs': 0,
                        'flips': 0, 'fields': 0, 'entries': 0}
next_it = [0]

def failed(msg):
    with lock:
        failures.append(msg)

def round_(it, rng, work):
    s = rng.choice(seeds)
    img = bytearray(s.data)
    mode = rng.choices(['flips', 'fields', 'entries'], [6, 2, 2])[0]
    if mode == 'entries' and 'table' not in s.ranges:
        mode = 'fields'
    hit, spared = set(), set()
    if mode == 'flips':
        chosen = flips(rng, s)
        spared = leftover_like(chosen)
        hit = {k for k, start in chosen.values() if not (k in ('table', 'gen') and start in spared)}
        for off in chosen:
            img[off] ^= rng.randint(1, 255)
        what = f'{s.name} iteration {it}: flips {sorted((o, k) for o, (k, _) in chosen.items())}'
    elif mode == 'fields':
        what = f'{s.name} iteration {it}: {sb_field(rng, s, img)}'
    else:
        what = f'{s.name} iteration {it}: {entries(rng, s, img)}'
    path = f'{work}/fuzz.img'
    with open(path, 'wb') as f:
        f.write(img)
    semantic = mode == 'flips' and s.rc <= 1
    rc, out, err = run('check', path)
    with lock:
        counts['runs'] += 1
        counts[mode] += 1
        if rc is not None:
            counts[['clean', 'warned', 'detected'][level(rc)]] += 1
    if rc is None:
        return failed(f'{what}: check ran over {LIMIT} s')
    if crashed(rc, err):
        return failed(f'{what}: check crashed (exit {rc}): {err.strip()[:400]}')
    if semantic and hit & (MUST_FAIL | MUST_WARN) and rc == 0:
        failed(f'{what}: check exited 0')
    elif semantic and not hit & MUST_FAIL and 'sbold' in hit and rc != 3 and not spared:
        failed(f'{what}: check exited {rc}, want 3 (only the other copy hit)')
    elif semantic and hit <= UNREAD and level(rc) != s.rc and not spared:
        failed(f'{what}: check exited {rc}, want what the unharmed image gave (level {s.rc}; only superseded slots or evicted extents hit)')
    if it % 3 == 0:
        rcj, out, err = run('check', '--json', path)
        if rcj is None or crashed(rcj, err):
            failed(f'{what}: check --json crashed or ran over {LIMIT} s (exit {rcj}): {err.strip()[:300]}')
        else:
            try:
                d = json.loads(out)
                if d['exit_code'] != rcj or rcj != rc:
                    failed(f'{what}: check --json exit_code {d["exit_code"]}, exited {rcj}, check {rc}')
            except (ValueError, KeyError) as e:
                failed(f'{what}: check --json printed no JSON verdict ({e})')
    rcd, out, err = run('dump', '--json', '--entries', path)
    if rcd is None or crashed(rcd, err) or rcd not in (0, 1, 4):
        failed(f'{what}: dump crashed or ran over {LIMIT} s (exit {rcd}): {err.strip()[:400]}')
    else:
        try:
            json.loads(out)
        except ValueError as e:
            failed(f'{what}: dump --json printed no JSON ({e})')
    if open(path, 'rb').read() != img:
        return failed(f'{what}: check or dump wrote to the image')
    if it % 10 == 0:
        rc, out, err = run('check', '--repair', path)
        rc2, out2, err2 = run('check', path)
        with lock:
            counts['repairs'] += 1
        both = 'sbcur' in hit and 'sbold' in hit
        if rc is None or rc2 is None:
            failed(f'{what}: check --repair or the check after it ran over {LIMIT} s')
        elif crashed(rc, err) or crashed(rc2, err2):
            failed(f'{what}: check --repair crashed: {(err + err2).strip()[:400]}')
        elif level(rc2) > 1 and not both and semantic:
            failed(f'{what}: check exits {rc2} after --repair (exit {rc}): '
                   + ' | '.join(l for l in out2.splitlines() if l.startswith('corrupt'))[:300])

def worker(n):
    rng = random.Random(seed * 2 + n)
    work = f'{T}/w{n}'
    subprocess.run(['mkdir', '-p', work], check=True)
    while time.monotonic() < deadline:
        with lock:
            it = next_it[0]
            next_it[0] += 1
        if it >= iterations:
            return
        try:
            round_(it, rng, work)
        except Exception as e:	# a bug here is a failure too, not a silent stop
            failed(f'iteration {it}: the fuzzer failed: {e!r}')

threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()

print(f'fuzz: {counts["runs"]} runs ({counts["flips"]} byte flips, {counts["fields"]} superblock '
      f'fields, {counts["entries"]} table entries): exit 4 {counts["detected"]}, exit 3 '
      f'{counts["warned"]}, exit 0 {counts["clean"]}; {counts["repairs"]} repairs', file=sys.stderr)
for f in failures[:10]:
    print(f, file=sys.stderr)
for s in seeds:
    if hashlib.sha256(open(s.img, 'rb').read()).hexdigest() != s.digest:
        failures.append(f'seed {s.name} changed')
        print(failures[-1], file=sys.stderr)
if failures:
    print(f'FAIL host/check/fuzz: {len(failures)} of {counts["runs"]} iterations failed '
          f'(seed {seed}; first: {failures[0][:300]})')
    sys.exit(1)
print('PASS host/check/fuzz')
EOF

#!/bin/bash
# flazctl on the host, without the flaz module: the command line, userspace validation
# (options, names, devices, SSD size, what --cold would overwrite) and the table it
# would load; the reporting commands (list, status, stats, get, set) against a fake
# device-mapper (tests/host/fakedm.c); the bash completion and the systemd units.
# Loop devices are used when losetup works here; otherwise those checks print SKIP.
# Usage: tests/host/test_flazctl.sh [path/to/flazctl]
# Prints one PASS/FAIL line per check; exits non-zero iff any check failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$REPO/tools/flazctl/flazctl}
fails=0

pass() { echo "PASS host/flazctl/$1"; }
fail() { echo "FAIL host/flazctl/$1: $2"; fails=$((fails + 1)); }
skip() { echo "SKIP host/flazctl/$1: $2"; }

if [ ! -x "$BIN" ]; then
	fail build "no executable flazctl at $BIN"
	exit 1
fi

T=$(mktemp -d)
LOOPS=()
cleanup() {
	local l
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# check NAME RC STREAM REGEX ARGS...: run flazctl ARGS, want exit RC and REGEX in STREAM
# (out or err). Failures must explain themselves in exactly one stderr line.
check() {
	local name=$1 want=$2 stream=$3 re=$4 rc text lines
	shift 4
	"$BIN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	text=$(cat "$T/$stream")
	lines=$(wc -l <"$T/err")
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, want $want ($(head -n1 "$T/err"))"
	elif ! grep -qE -- "$re" <<<"$text"; then
		fail "$name" "std$stream lacks /$re/: '$(head -n1 <<<"$text")'"
	elif [ "$want" -ne 0 ] && [ "$lines" -ne 1 ]; then
		fail "$name" "want one line on stderr, got $lines"
	else
		pass "$name"
	fi
}

# A loop device over a sparse file of SIZE, or nothing when loop devices do not work here.
mkloop() {
	local f
	f=$(mktemp "$T/img.XXXXXX") && truncate -s "$1" "$f" && losetup -f --show "$f" 2>/dev/null
}

NOHDD=/nonexistent/flaz-hdd
NOSSD=/nonexistent/flaz-ssd

# --- the command line
check help 0 out 'flazctl create NAME' --help
check help-word 0 out 'flazctl status \[NAME\]' help
check version 0 out "^flazctl $(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")$" --version
check no-args 2 err '^flazctl: .*command'
check unknown-command 2 err "unknown command 'frobnicate'" frobnicate
check create-help 0 out '--extent-kib' create --help

# --- create: usage errors come before any device is looked at (the devices do not exist)
check create-no-name 2 err 'NAME' create --hdd $NOHDD --ssd $NOSSD
check create-no-hdd 2 err 'needs --hdd' create vol --ssd $NOSSD
check create-no-ssd 2 err 'needs --ssd' create vol --hdd $NOHDD
check create-unknown-option 2 err "unknown option --frob" create vol --hdd $NOHDD --ssd $NOSSD --frob
check create-missing-value 2 err 'needs a value' create vol --ssd $NOSSD --hdd
check create-extra-arg 2 err "unexpected argument 'extra'" create vol extra --hdd $NOHDD --ssd $NOSSD
check create-bad-compressor 2 err "unknown compressor 'gzip'" \
	create vol --hdd $NOHDD --ssd $NOSSD --compressor gzip
check create-extent-kib-3 2 err 'extent-kib must be a power of two from 4 to 256' \
	create vol --hdd $NOHDD --ssd $NOSSD --extent-kib 3
check create-extent-kib-512 2 err 'extent-kib must be a power of two from 4 to 256' \
	create vol --hdd $NOHDD --ssd $NOSSD --extent-kib 512
check create-extent-kib-48 2 err 'extent-kib must be a power of two from 4 to 256' \
	create vol --hdd $NOHDD --ssd $NOSSD --extent-kib 48
check create-overbook-50 2 err 'overbook must be from 100 to 1000' \
	create vol --hdd $NOHDD --ssd $NOSSD --overbook 50
check create-bad-number 2 err "'12x' is not a number" \
	create vol --hdd $NOHDD --ssd $NOSSD --seq-cutoff-kib 12x
check create-negative-number 2 err "'-1' is not a number" \
	create vol --hdd $NOHDD --ssd $NOSSD --compress-min-saving -1
check create-hot-uncompressed-2 2 err 'hot-uncompressed must be from 0 to 1' \
	create vol --hdd $NOHDD --ssd $NOSSD --hot-uncompressed 2
check create-low-eq-high 2 err 'low-watermark \(30\) must be below --high-watermark \(30\)' \
	create vol --hdd $NOHDD --ssd $NOSSD --low-watermark 30 --high-watermark 30
check create-low-above-default-high 2 err 'high-watermark \(20, the default\)' \
	create vol --hdd $NOHDD --ssd $NOSSD --low-watermark 25
check create-option-twice 2 err 'cold given twice' \
	create vol --hdd $NOHDD --ssd $NOSSD --cold --cold
check create-name-slash 2 err 'invalid volume name' create a/b --hdd $NOHDD --ssd $NOSSD
check create-name-too-long 2 err 'longer than 127' \
	create "$(printf 'n%.0s' {1..128})" --hdd $NOHDD --ssd $NOSSD

# --- create: runtime failures on the devices themselves
check create-missing-device 1 err "HDD $NOHDD: No such file or directory" \
	create vol --hdd $NOHDD --ssd $NOSSD
touch "$T/plain"
check create-regular-file 1 err "HDD $T/plain is not a block device" \
	create vol --hdd "$T/plain" --ssd "$T/plain"

HDD=$(mkloop 64M) && LOOPS+=("$HDD")
SSD=$(mkloop 16M) && LOOPS+=("$SSD")
TINY=$(mkloop 256K) && LOOPS+=("$TINY")
if [ -b "$HDD" ] && [ -b "$SSD" ] && [ -b "$TINY" ]; then
	ln -s "$HDD" "$T/hdd-link"
	check create-same-device 1 err 'same device' create vol --hdd "$HDD" --ssd "$T/hdd-link"
	check create-ssd-too-small 1 err "SSD $TINY is too small .*minimum .* is [0-9]+ sectors" \
		create vol --hdd "$HDD" --ssd "$TINY"
	check create-ssd-too-small-for-options 1 err 'minimum for extent_kib 256 and overbook 1000' \
		create vol --hdd "$SSD" --ssd "$TINY" --extent-kib 256 --overbook 1000
	# -v prints the table before device-mapper is asked. Without the flaz module (the
	# point of this script) the create then fails; should it succeed, undo it.
	name=flazctl-host-test-$$
	hdd_mm=$(printf '%d:%d' 0x"$(stat -c %t "$HDD")" 0x"$(stat -c %T "$HDD")")
	ssd_mm=$(printf '%d:%d' 0x"$(stat -c %t "$SSD")" 0x"$(stat -c %T "$SSD")")
	"$BIN" create "$name" --hdd "$HDD" --ssd "$SSD" --cold --compressor zstd \
		--low-watermark 5 -v >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 0 ] || "$BIN" remove "$name"
	want="table: 0 131072 flaz $hdd_mm $ssd_mm 5 compressor zstd low_watermark 5 cold"
	if [ $rc -gt 1 ]; then
		fail create-table-line "exit $rc ($(head -n1 "$T/err"))"
	elif [ "$(head -n1 "$T/out")" != "$want" ]; then
		fail create-table-line "got '$(head -n1 "$T/out")', want '$want'"
	else
		pass create-table-line
	fi
else
	for c in create-same-device create-ssd-too-small create-ssd-too-small-for-options \
		 create-table-line; do
		skip $c "losetup does not work on this host"
	done
fi

# --- remove and status: argument errors, and an absent volume (with or without device-mapper)
check remove-no-name 2 err 'usage: flazctl remove NAME' remove
check status-extra-arg 2 err 'usage: flazctl status \[NAME\]' status a b
check status-unknown-option 2 err 'unknown option --yaml' status vol --yaml
check status-missing 1 err 'no such device: flazctl-no-such-volume|cannot talk to device-mapper' \
	status flazctl-no-such-volume
check remove-missing 1 err 'no such device: flazctl-no-such-volume|cannot talk to device-mapper' \
	remove flazctl-no-such-volume


# --- every command's own --help, and the usage errors of the reporting commands
for c in create remove list status stats set get check dump; do
	check "help/$c" 0 out "^Usage: flazctl $c" $c --help
	check "help-short/$c" 0 out "^Usage: flazctl $c" $c -h
done
check help-after-args 0 out '^Usage: flazctl set' set vol low_watermark -h
check list-o-help 0 out 'hit_ratio .*read_hits' list -o help
check list-o-help-keys 0 out 'read_misses' list -o help
check list-o-unknown 2 err "unknown field 'colour'" list -o name,colour
check list-o-empty 2 err 'no field' list -o ,
check list-o-no-value 2 err 'needs a value' list -o
check list-json-and-csv 2 err 'one of --json and --csv' list --json --csv
check list-extra-arg 2 err "unexpected argument 'vol'" list vol
check status-json-and-prometheus 2 err 'one of --json and --prometheus' status --json --prometheus
check status-bad-name 2 err 'invalid volume name' status a/b --prometheus
check stats-no-name 2 err 'usage: flazctl stats NAME' stats
check stats-interval-0 2 err 'interval must be from 1 to 86400' stats vol --interval 0
check stats-interval-word 2 err 'interval must be from 1 to 86400' stats vol --interval soon
check stats-count-0 2 err 'count must be a positive number' stats vol --count 0
check stats-interval-no-value 2 err 'needs a value' stats vol --interval
check stats-unknown-option 2 err 'unknown option --yaml' stats vol --yaml
check set-no-value 2 err 'usage: flazctl set NAME KEY VALUE' set vol low_watermark
check set-unknown-key 2 err "unknown key 'frobnicate' \\(one of low_watermark" set vol frobnicate 1
check set-offline-key 2 err 'compressor cannot change on a live volume: re-create it with flazctl create --compressor' \
	set vol compressor zstd
check set-offline-key-2 2 err 'extent_kib cannot change .*--extent-kib' set vol extent_kib 64
check set-not-a-number 2 err "seq_cutoff_kib: 'lots' is not a number" set vol seq_cutoff_kib lots
check set-negative 2 err "'-1' is not a number" set vol compress_min_saving -1
check set-out-of-range 2 err 'low_watermark must be from 1 to 98, not 0' set vol low_watermark 0
check set-out-of-range-2 2 err 'hot_uncompressed must be from 0 to 1, not 2' set vol hot_uncompressed 2
check set-out-of-range-3 2 err 'ssd_hold_s must be from 1 to 3600, not 3601' set vol ssd_hold_s 3601
check set-bad-name 2 err 'invalid volume name' set a/b low_watermark 5
check set-option 2 err 'unknown option --frob' set --frob vol low_watermark 5
check get-unknown-key 2 err "unknown key 'colour' \\(one of compressor" get vol colour
check get-extra-arg 2 err 'usage: flazctl get NAME' get vol low_watermark extra
check get-unknown-option 2 err 'unknown option --yaml' get vol --yaml

# nothing above may reach device-mapper: no open of /dev/mapper/control (when strace works)
# no_dm NAME ARGS...: flazctl ARGS must fail without opening /dev/mapper/control
no_dm() {
	local name=$1
	shift
	if ! command -v strace >/dev/null || ! strace -f -o /dev/null true 2>/dev/null; then
		skip "no-dm/$name" "strace does not work here"
		return
	fi
	strace -f -e trace=open,openat -o "$T/strace" "$BIN" "$@" >/dev/null 2>&1
	if grep -q 'mapper/control' "$T/strace"; then
		fail "no-dm/$name" "flazctl $* opened /dev/mapper/control"
	else
		pass "no-dm/$name"
	fi
}
no_dm set-unknown-key set vol frobnicate 1
no_dm set-out-of-range set vol low_watermark 0
no_dm set-offline-key set vol overbook 300

# --- create --cold: an SSD holding something else is refused unless --force, before any
# device or device-mapper is asked (the HDD here does not even exist)
python3 - "$T" <<'EOF'
import os, struct, sys
t = sys.argv[1]
def img(name, writes, size=1 << 20):
    with open(os.path.join(t, name), 'wb') as f:
        f.truncate(size)
        for off, data in writes:
            f.seek(off)
            f.write(data)
img('zero.img', [])
img('flaz0.img', [(0, struct.pack('<I', 0x42535a46) + os.urandom(4000))])
img('flaz4k.img', [(0, os.urandom(4096)), (4096, struct.pack('<I', 0x42535a46))])
img('ext4.img', [(1080, b'\x53\xef'), (1024, b'\x01\x02')])
img('xfs.img', [(0, b'XFSB')])
img('junk.img', [(5000, b'junk')])
img('flaz-late.img', [(100, b'x'), (8192, struct.pack('<I', 0x42535a46))])
img('tiny.img', [(0, b'hello')], size=5)
EOF
check cold-foreign-junk 1 err "SSD $T/junk.img holds data \\(not zeros at byte 5000, and no flaz superblock\\), not a flaz cache; --cold would overwrite it \\(add --force to do so\\)" \
	create vol --hdd $NOHDD --ssd "$T/junk.img" --cold
check cold-foreign-ext4 1 err "holds an ext2/3/4 filesystem, not a flaz cache.*--force" \
	create vol --hdd $NOHDD --ssd "$T/ext4.img" --cold
check cold-foreign-xfs 1 err "holds an XFS filesystem" create vol --hdd $NOHDD --ssd "$T/xfs.img" --cold
check cold-foreign-magic-too-late 1 err "holds data" \
	create vol --hdd $NOHDD --ssd "$T/flaz-late.img" --cold
check cold-foreign-short 1 err "holds data" create vol --hdd $NOHDD --ssd "$T/tiny.img" --cold
no_dm cold-foreign create vol --hdd $NOHDD --ssd "$T/junk.img" --cold
# blank and flaz SSDs, --force, and no --cold go on to the device checks
check cold-blank 1 err "HDD $NOHDD: No such file" create vol --hdd $NOHDD --ssd "$T/zero.img" --cold
check cold-flaz-sb0 1 err "HDD $NOHDD: No such file" create vol --hdd $NOHDD --ssd "$T/flaz0.img" --cold
check cold-flaz-sb1 1 err "HDD $NOHDD: No such file" create vol --hdd $NOHDD --ssd "$T/flaz4k.img" --cold
check cold-force 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd "$T/junk.img" --cold --force
check warm-foreign 1 err "HDD $NOHDD: No such file" create vol --hdd $NOHDD --ssd "$T/junk.img"
check force-without-cold 2 err -- '--force only goes with --cold' \
	create vol --hdd $NOHDD --ssd "$T/junk.img" --force

# --- the reporting commands against a fake device-mapper (tests/host/fakedm.c): flazctl
# built from its own sources with dm.c swapped out, under ASan/UBSan
FAKE=$T/flazctl-fake
FLAZ=$REPO/drivers/md/dm-flaz
srcs=$(ls "$REPO"/tools/flazctl/*.c | grep -v '/dm\.c$')
# shellcheck disable=SC2086
if ! gcc -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	-Wall -Wextra -Werror -I"$FLAZ" -I"$REPO/tools/flazctl" -o "$FAKE" $srcs "$FLAZ/format.c" \
	"$REPO/tests/host/fakedm.c" 2>"$T/gcc.err"; then
	fail build-fake "$(head -n3 "$T/gcc.err")"
else
	pass build-fake
fi
ST="reads=100 writes=20 read_hits=300 read_misses=100 write_hits=1 write_misses=2 fills=100 bypasses=0"
ST2="raw_blocks=0 zero_blocks=3"
ST3="evictions=7 cleaner_runs=0 extents_cleaned=0 slots_moved=0 slots_dropped=0 discards=0 hdd_errors=0 ssd_errors=0 table_bytes=8192 commits=12 meta_errors=0 marked_regions=0"
{
	printf 'fast\t131072\t9999:0 9999:1 4 compressor zstd low_watermark 5\tmode=normal %s blocks_cached=1000 logical_bytes=4000000 physical_bytes=2000000 ratio=2.00 %s free_extents=400 total_extents=500 %s mode_reason=none dram_bytes=20000 meta_bytes=65536\n' "$ST" "$ST2" "$ST3"
	printf 'lin\t2048\t!linear\tx\n'
	printf 'abc\t2048\t9999:2 9999:3 0\tmode=passthrough reads=0 read_hits=0 read_misses=0 fills=0 blocks_cached=0 logical_bytes=0 physical_bytes=0 free_extents=16 total_extents=16 mode_reason=asked new_key=5\n'
} >"$T/vols"
export FAKE_DM=$T/vols
# fcheck NAME RC STREAM REGEX ARGS...: check, with the fake flazctl
fcheck() {
	local name=$1 want=$2 stream=$3 re=$4
	shift 4
	BIN=$FAKE check "fake/$name" "$want" "$stream" "$re" "$@"
}
# fsame NAME WANT ARGS...: the fake flazctl's whole stdout must be WANT, exit 0
fsame() {
	local name=$1 want=$2 got
	shift 2
	got=$("$FAKE" "$@" 2>"$T/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "fake/$name" "exit $rc ($(head -n1 "$T/err"))"
	elif [ "$got" != "$want" ]; then
		fail "fake/$name" "got '$(tr '\n' '|' <<<"$got")', want '$(tr '\n' '|' <<<"$want")'"
	else
		pass "fake/$name"
	fi
}
fcheck list-header 0 out '^Name +HDD +SSD +Mode +Cached +Hit +Saving$' list
fcheck list-row 0 out '^fast +9999:0 +9999:1 +normal +3\.9 MiB +75\.0% +50\.0%$' list
fcheck list-undefined 0 out '^abc +9999:2 +9999:3 +passthrough +0 B +- +-$' list
fsame list-sorted-flaz-only "$(printf '%s\n' 'Name  HDD     SSD     Mode          Cached    Hit  Saving' \
	'abc   9999:2  9999:3  passthrough      0 B      -       -' \
	'fast  9999:0  9999:1  normal       3.9 MiB  75.0%   50.0%')" list
fsame list-csv "$(printf '%s\n' name,hdd,ssd,mode,cached,hit_ratio,saving \
	abc,9999:2,9999:3,passthrough,0,, fast,9999:0,9999:1,normal,4096000,0.7500,0.5000)" list --csv
fcheck list-o 0 out '^fast +2\.00 +3\.8 MiB +none +64\.0 MiB +20\.0%$' list -o name,ratio,logical_bytes,mode_reason,size,ssd_used
fsame list-o-csv "$(printf '%s\n' name,reads,ssd_used abc,0,0.0000 fast,100,0.2000)" \
	list -o name,reads,ssd_used --csv
"$FAKE" list --json >"$T/list.json" 2>&1
if python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
assert [x["name"] for x in v] == ["abc", "fast"], v
f = v[1]
assert f["hit_ratio"] == 0.75 and f["saving"] == 0.5 and f["cached"] == 4096000, f
assert v[0]["hit_ratio"] is None and v[0]["saving"] is None, v[0]' "$T/list.json" 2>"$T/py.err"; then
	pass fake/list-json
else
	fail fake/list-json "$(tail -n1 "$T/py.err")"
fi
got=$("$FAKE" status 2>&1 | grep -e ' -> cache ' | tr '\n' '|')
[ "$got" = 'abc: 9999:2 -> cache 9999:3|fast: 9999:0 -> cache 9999:1|' ] && pass fake/status-all ||
	fail fake/status-all "volume headers: '$got'"
fcheck status-derived 0 out '^  hit ratio +75\.0%$' status fast
fcheck status-saving 0 out '^  saving +50\.0%$' status fast
fcheck status-ssd-used 0 out '^  ssd used +20\.0%$' status fast
fcheck status-new-key 0 out '^  new_key +5$' status abc
fcheck status-not-flaz 1 err 'lin is not a flaz volume' status lin
"$FAKE" status --json >"$T/status.json" 2>&1
if python3 -c 'import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert [x["name"] for x in v] == ["abc", "fast"], v
f = v[1]
assert f["status"]["reads"] == 100 and f["status"]["ratio"] == 2.0, f
assert f["hit_ratio"] == 0.75 and f["saving"] == 0.5 and f["ssd_used"] == 0.2, f
assert f["table"] == "9999:0 9999:1 4 compressor zstd low_watermark 5" and f["size_sectors"] == 131072
assert v[0]["hit_ratio"] is None and v[0]["ssd_used"] == 0.0, v[0]' "$T/status.json" 2>"$T/py.err"; then
	pass fake/status-json
else
	fail fake/status-json "$(tail -n1 "$T/py.err")"
fi

# --prometheus: the text format as node_exporter's textfile collector parses it
"$FAKE" status --prometheus >"$T/flaz.prom" 2>"$T/err"
if python3 - "$T/flaz.prom" 2>"$T/py.err" <<'EOF'
import re, sys
name_re = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
sample = re.compile(r'^(%s)(\{(%s="(?:[^"\\\n]|\\.)*")(,%s="(?:[^"\\\n]|\\.)*")*\})? (-?[0-9.]+(e[+-]?[0-9]+)?)$' % (name_re, name_re, name_re))
types, helps, done, cur, samples = {}, set(), set(), None, {}
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    if line.startswith('# HELP '):
        n = line.split()[2]
        assert n not in helps, 'HELP twice: ' + n
        helps.add(n)
        continue
    if line.startswith('# TYPE '):
        _, _, n, t = line.split()
        assert n not in types, 'TYPE twice: ' + n
        assert t in ('counter', 'gauge'), line
        if t == 'counter':
            assert n.endswith('_total'), 'counter without _total: ' + n
        if cur:
            done.add(cur)
        types[n], cur = t, n
        continue
    m = sample.match(line)
    assert m, 'bad line: ' + line
    n = m.group(1)
    assert n == cur and n not in done, 'sample outside its family: ' + line
    assert 'volume="' in line, 'no volume label: ' + line
    samples[line.rsplit(' ', 1)[0]] = line.rsplit(' ', 1)[1]
want = {
    'flaz_reads_total{volume="fast"}': '100',
    'flaz_read_hits_total{volume="fast"}': '300',
    'flaz_meta_bytes_total{volume="fast"}': '65536',
    'flaz_blocks_cached{volume="fast"}': '1000',
    'flaz_blocks_cached{volume="abc"}': '0',
    'flaz_mode{volume="fast",mode="normal"}': '1',
    'flaz_mode{volume="fast",mode="passthrough"}': '0',
    'flaz_mode{volume="abc",mode="passthrough"}': '1',
    'flaz_mode_reason{volume="abc",reason="asked"}': '1',
    'flaz_hit_ratio{volume="fast"}': '0.750000',
    'flaz_info{volume="fast",hdd="9999:0",ssd="9999:1"}': '1',
    'flaz_size_bytes{volume="fast"}': '67108864',
    'flaz_new_key{volume="abc"}': '5',
}
for k, v in want.items():
    assert samples.get(k) == v, '%s is %s, want %s' % (k, samples.get(k), v)
assert not any('lin' in k for k in samples), 'the linear device is exported'
assert 'flaz_hit_ratio{volume="abc"}' not in samples, 'a hit ratio before any read'
EOF
then
	pass fake/prometheus-format
else
	fail fake/prometheus-format "$(tail -n1 "$T/py.err")"
fi
fcheck prometheus-one 0 out '^flaz_reads_total\{volume="fast"\} 100$' status fast --prometheus
if "$FAKE" status fast --prometheus | grep -q 'volume="abc"'; then
	fail fake/prometheus-one-only "status fast --prometheus shows abc too"
else
	pass fake/prometheus-one-only
fi

# stats: the totals, then rates from the counters' growth (50 reads and hits per reading)
FAKE_DM_GROW=50 "$FAKE" stats fast --interval 1 --count 2 >"$T/stats" 2>"$T/err"
if [ "$(wc -l <"$T/stats")" -ne 4 ]; then
	fail fake/stats "want a header, the totals and 2 rates: $(tr '\n' '|' <"$T/stats") $(head -n1 "$T/err")"
elif ! grep -Eq '^time +reads/s +writes/s +hit% +ssdMiB/s +hddMiB/s +fills/s +evicts/s +commits/s +metaKiB/s$' "$T/stats"; then
	fail fake/stats "bad header: $(head -n1 "$T/stats")"
elif ! grep -Eq '^total +100 +20 +75\.0% +1\.2 +0\.4 +100 +7 +12 +64\.0$' "$T/stats"; then
	fail fake/stats "bad totals: $(sed -n 2p "$T/stats")"
elif [ "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2} +(49\.[5-9]|50\.[0-4]) +0\.0 +100\.0% +0\.2 +0\.0 +(49\.[5-9]|50\.[0-4]) ' "$T/stats")" -ne 2 ]; then
	fail fake/stats "bad rates: $(tail -n2 "$T/stats" | tr '\n' '|')"
else
	pass fake/stats
fi
FAKE_DM_GROW=50 "$FAKE" stats fast --count 1 --json >"$T/stats.json" 2>"$T/err"
if python3 -c 'import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert len(v) == 2 and v[0]["kind"] == "total" and v[1]["kind"] == "interval", v
assert v[0]["reads"] == 100 and v[0]["ssd_read_bytes"] == 300 * 4096 and v[0]["hit_ratio"] == 0.75, v[0]
assert 45 < v[1]["reads_per_s"] < 55 and v[1]["hit_ratio"] == 1 and v[1]["volume"] == "fast", v[1]
assert 0.9 < v[1]["seconds"] < 1.5, v[1]' "$T/stats.json" 2>"$T/py.err"; then
	pass fake/stats-json
else
	fail fake/stats-json "$(tail -n1 "$T/py.err")"
fi
fcheck stats-missing 1 err 'no such device: nope' stats nope --count 1

# get: the table's options, defaults for the rest; set: the message, and a refusal
fsame get-all "$(printf '%s\n' compressor=zstd extent_kib=32 overbook=200 low_watermark=5 \
	high_watermark=20 seq_cutoff_kib=0 compress_min_saving=10 hot_uncompressed=0 ssd_hold_s=30)" get fast
fcheck get-one 0 out '^5$' get fast low_watermark
fcheck get-default 0 out '^lz4$' get abc compressor
fcheck get-json 0 out '^\{"compressor":"lz4","extent_kib":32,"overbook":200,"low_watermark":10,"high_watermark":20,"seq_cutoff_kib":0,"compress_min_saving":10,"hot_uncompressed":0,"ssd_hold_s":30\}$' get abc --json
fcheck get-json-one 0 out '^\{"low_watermark":5\}$' get fast low_watermark --json
fcheck get-not-flaz 1 err 'lin is not a flaz volume' get lin
rm -f "$T/vols.msgs"
fcheck set 0 out '^$' set fast seq_cutoff_kib 1024
[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast seq_cutoff_kib 1024" ] && pass fake/set-message ||
	fail fake/set-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want 'fast seq_cutoff_kib 1024'"
FAKE_DM_REFUSE=1 fcheck set-refused 1 err '^flazctl: kernel refused low_watermark 50: ' set fast low_watermark 50
fcheck set-missing 1 err 'no such device: nope' set nope low_watermark 5
unset FAKE_DM

# --- bash completion: sources cleanly, completes commands, volumes and keys
mkdir -p "$T/bin"
ln -s "$FAKE" "$T/bin/flazctl"
COMP=$REPO/tools/flazctl/flazctl.bash-completion
out=$(PATH=$T/bin:$PATH FAKE_DM=$T/vols bash -c '
set -u
. "$1" || exit 1
complete -p flazctl >/dev/null || exit 1
t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _flazctl; echo "${COMPREPLY[*]}"; }
t flazctl st
t flazctl status ""
t flazctl set fast ""
t flazctl create v --compressor z
t flazctl list -o name,hi
t flazctl check /dev/nul' _ "$COMP" 2>&1)
want='status stats
abc fast
low_watermark high_watermark seq_cutoff_kib compress_min_saving hot_uncompressed ssd_hold_s
zstd
name,hit_ratio
/dev/null'
[ "$out" = "$want" ] && pass completion || fail completion "got '$(tr '\n' '|' <<<"$out")'"

# --- the systemd units: systemd-analyze verify, and the service's command writes the file
# atomically (run here with the fake flazctl and a temporary directory)
UNITS=$T/units
mkdir -p "$UNITS" "$T/man/man8"
sed "s|/usr/local/sbin/flazctl|$T/bin/flazctl|" "$REPO/tools/systemd/flaz-textfile.service" \
	>"$UNITS/flaz-textfile.service"
cp "$REPO/tools/systemd/flaz-textfile.timer" "$UNITS/"
cp "$REPO/tools/flazctl/flazctl.8" "$T/man/man8/"
if ! command -v systemd-analyze >/dev/null; then
	echo "NOTE host/flazctl/systemd-verify: systemd-analyze is missing (apt install systemd)"
else
	# Documentation=man:flazctl(8) is looked up with man(1), in the uninstalled page
	if command -v man >/dev/null; then man_opt=; else man_opt=--man=no; fi
	if MANPATH=$T/man systemd-analyze verify $man_opt "$UNITS/flaz-textfile.service" \
		"$UNITS/flaz-textfile.timer" >"$T/verify" 2>&1 && ! [ -s "$T/verify" ]; then
		pass systemd-verify
	else
		fail systemd-verify "$(head -n2 "$T/verify" | tr '\n' ' ')"
	fi
fi
grep -q '^OnUnitActiveSec=15s$' "$UNITS/flaz-textfile.timer" && pass systemd-timer-15s ||
	fail systemd-timer-15s "the timer does not run every 15 s"
# ExecStart with systemd's escapes undone ($$ -> $, %% -> %), the output in $T/prom
cmd=$(sed -n "s/^ExecStart=\/bin\/sh -c '\(.*\)'$/\1/p" "$UNITS/flaz-textfile.service" |
	sed 's/\$\$/$/g; s/%%/%/g')
prom=$T/prom/node-exporter/flaz.prom
FLAZ_PROM=$prom FAKE_DM=$T/vols sh -c "$cmd" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ -z "$cmd" ]; then
	fail systemd-command "exit $rc: $(head -n1 "$T/out")"
elif ! grep -q '^flaz_reads_total{volume="fast"} 100$' "$prom"; then
	fail systemd-command "$prom lacks flaz_reads_total"
elif [ -e "$prom.tmp" ]; then
	fail systemd-command "$prom.tmp left behind"
else
	pass systemd-command
fi
# a failing flazctl keeps the last good file and leaves no temporary one
before=$(cat "$prom")
FLAZ_PROM=$prom sh -c "$cmd" >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ "$(cat "$prom")" != "$before" ] || [ -e "$prom.tmp" ]; then
	fail systemd-command-fails "exit $rc; the file changed or $prom.tmp is left"
else
	pass systemd-command-fails
fi

# --- make install: the completion and the units, at DESTDIR/PREFIX, the units naming SBINDIR
if make -s -C "$REPO/tools/flazctl" install DESTDIR="$T/dest" PREFIX=/usr >"$T/out" 2>&1; then
	missing=
	for f in usr/sbin/flazctl usr/share/man/man8/flazctl.8 \
		 usr/share/bash-completion/completions/flazctl \
		 usr/lib/systemd/system/flaz-textfile.service usr/lib/systemd/system/flaz-textfile.timer; do
		[ -f "$T/dest/$f" ] || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		fail install "not installed:$missing"
	elif ! grep -q ' /usr/sbin/flazctl status --prometheus ' "$T/dest/usr/lib/systemd/system/flaz-textfile.service"; then
		fail install "the installed service does not run /usr/sbin/flazctl"
	else
		pass install
	fi
else
	fail install "$(tail -n1 "$T/out")"
fi

# --- the docs agree with --help: every command and every option of every command's --help
# is in the README's flazctl section and in the man page
readme_ctl=$(sed -n '/^## flazctl/,/^## Layout/p' "$REPO/README.md")
man_text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$REPO/tools/flazctl/flazctl.8")
cmds=$("$BIN" --help | sed -n 's/^  flazctl \([a-z][a-z-]*\).*/\1/p' | grep -vx COMMAND | sort -u)
[ -n "$cmds" ] || fail docs/commands "flazctl --help lists no command"
for c in $cmds; do
	missing=
	grep -q "flazctl $c" <<<"$readme_ctl" || missing="$missing README"
	grep -Eq "^\.B(I)? \"?$c( |\"|$)|^\.B flazctl $c$" <<<"$man_text" || missing="$missing man"
	for o in $("$BIN" "$c" --help | grep -oE -- '(^|[ [|])--?[a-z][a-z-]*' | grep -oE -- '--?[a-z][a-z-]*' |
		grep -vxE -- '-h|--help' | sort -u); do
		grep -qF -- "$o" <<<"$readme_ctl" || missing="$missing README:$o"
		grep -qF -- "$o" <<<"$man_text" || missing="$missing man:$o"
	done
	[ -z "$missing" ] && pass "docs/$c" || fail "docs/$c" "not documented in:$missing"
done

[ $fails -eq 0 ]

#!/bin/bash
# flazctl on the host, without the flaz module: the command line, userspace validation
# (options, names, devices, SSD size, what --cold would overwrite) and the table it
# would load; the reporting commands (list, status, stats, get, set) against a fake
# device-mapper (tests/host/fakedm.c); the bash completion and the systemd units.
# Loop devices are used when losetup works here; otherwise those checks print SKIP.
# Usage: tests/host/test_flazctl.sh [path/to/flazctl]
# Prints one PASS/FAIL line per check (SKIP name: why where this host lacks what the check
# needs); exits non-zero iff any check failed.
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
check create-cleaner-rate-mib 2 err 'cleaner-rate-mib must be from 0 to 65536, not 70000' \
	create vol --hdd $NOHDD --ssd $NOSSD --cleaner-rate-mib 70000
check create-hot-max-percent 2 err 'hot-max-percent must be from 0 to 100, not 101' \
	create vol --hdd $NOHDD --ssd $NOSSD --hot-max-percent 101
check create-table-cache-kib 2 err 'table-cache-kib must be from 0 to 1073741824, not 1073741825' \
	create vol --hdd $NOHDD --ssd $NOSSD --table-cache-kib 1073741825
check create-probation-percent 2 err 'probation-percent must be from 0 to 50, not 51' \
	create vol --hdd $NOHDD --ssd $NOSSD --probation-percent 51
check create-table-cache-kib-word 2 err "table-cache-kib: 'lots' is not a number" \
	create vol --hdd $NOHDD --ssd $NOSSD --table-cache-kib lots
# a number too large for an unsigned long is out of range, not "not a number"
HUGE=99999999999999999999
check create-extent-kib-huge 2 err "^flazctl: --extent-kib must be a power of two from 4 to 256, not $HUGE\$" \
	create vol --hdd $NOHDD --ssd $NOSSD --extent-kib $HUGE
check create-overbook-huge 2 err "^flazctl: --overbook must be from 100 to 1000, not $HUGE\$" \
	create vol --hdd $NOHDD --ssd $NOSSD --overbook $HUGE
check create-huge-not-a-number 2 err "'${HUGE}x' is not a number" \
	create vol --hdd $NOHDD --ssd $NOSSD --overbook ${HUGE}x
# in range: past the option checks, on to the (missing) devices
check create-table-cache-kib-0 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd $NOSSD --table-cache-kib 0
check create-table-cache-kib-64 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd $NOSSD --table-cache-kib 64
check create-table-cache-kib-max 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd $NOSSD --table-cache-kib 1073741824
check create-probation-percent-0 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd $NOSSD --probation-percent 0
check create-probation-percent-max 1 err "HDD $NOHDD: No such file" \
	create vol --hdd $NOHDD --ssd $NOSSD --probation-percent 50
check create-cold-compressor 2 err "unknown cold compressor 'gzip' \\(choose none, lzo, lz4, zstd or deflate\\)" \
	create vol --hdd $NOHDD --ssd $NOSSD --cold-compressor gzip
check create-low-eq-high 2 err 'low-watermark \(30\) must be below --high-watermark \(30\)' \
	create vol --hdd $NOHDD --ssd $NOSSD --low-watermark 30 --high-watermark 30
check create-low-above-default-high 2 err 'high-watermark \(2, the default\)' \
	create vol --hdd $NOHDD --ssd $NOSSD --low-watermark 25
check create-option-twice 2 err 'cold given twice' \
	create vol --hdd $NOHDD --ssd $NOSSD --cold --cold
check create-name-slash 2 err 'invalid volume name' create a/b --hdd $NOHDD --ssd $NOSSD
check create-name-too-long 2 err 'longer than 127' \
	create "$(printf 'n%.0s' {1..128})" --hdd $NOHDD --ssd $NOSSD
# /dev/mapper/control is device-mapper's own node
check create-name-control 2 err "^flazctl: invalid volume name 'control': /dev/mapper/control is device-mapper's control node\$" \
	create control --hdd $NOHDD --ssd $NOSSD
check create-name-control-like 1 err "HDD $NOHDD: No such file" create control2 --hdd $NOHDD --ssd $NOSSD

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
	# table_line NAME WANT OPTIONS...: create -v with OPTIONS must print "table: ... WANT"
	name=flazctl-host-test-$$
	hdd_mm=$(printf '%d:%d' 0x"$(stat -c %t "$HDD")" 0x"$(stat -c %T "$HDD")")
	ssd_mm=$(printf '%d:%d' 0x"$(stat -c %t "$SSD")" 0x"$(stat -c %T "$SSD")")
	table_line() {
		local check=$1 want="table: 0 131072 flaz $hdd_mm $ssd_mm $2" rc
		shift 2
		"$BIN" create "$name" --hdd "$HDD" --ssd "$SSD" "$@" -v >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc -ne 0 ] || "$BIN" remove "$name"
		if [ $rc -gt 1 ]; then
			fail "$check" "exit $rc ($(head -n1 "$T/err"))"
		elif [ "$(head -n1 "$T/out")" != "$want" ]; then
			fail "$check" "got '$(head -n1 "$T/out")', want '$want'"
		else
			pass "$check"
		fi
	}
	table_line create-table-line "7 compressor zstd low_watermark 1 cleaner_rate_mib 0 cold" \
		--cold --compressor zstd --low-watermark 1 --cleaner-rate-mib 0
	# in the kernel's order: after cold, whatever the command line's
	table_line create-table-line-table-cache-kib "5 compressor lz4 cold table_cache_kib 64" \
		--table-cache-kib 64 --cold --compressor lz4
	table_line create-table-line-table-cache-kib-0 "2 table_cache_kib 0" --table-cache-kib 0
	table_line create-table-line-probation-percent "5 cold table_cache_kib 64 probation_percent 0" \
		--probation-percent 0 --table-cache-kib 64 --cold
else
	for c in create-same-device create-ssd-too-small create-ssd-too-small-for-options \
		 create-table-line create-table-line-table-cache-kib create-table-line-table-cache-kib-0 \
		 create-table-line-probation-percent; do
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
# each field once: mode is a fixed field and a status key
"$BIN" list -o help >"$T/out" 2>&1
dups=$(awk '/^and/ { keys = 1; next } /^  / { if (keys) { for (i = 1; i <= NF; i++) print $i } else print $1 }' \
	"$T/out" | sort | uniq -d | tr '\n' ' ')
[ -z "$dups" ] && grep -q '^  mode ' "$T/out" && pass list-o-help-once ||
	fail list-o-help-once "listed twice: '$dups'"
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
check set-unknown-key 2 err "unknown key 'frobnicate' \\(one of low-watermark" set vol frobnicate 1
check set-offline-key 2 err 'compressor cannot change on a live volume: re-create it with flazctl create --compressor' \
	set vol compressor zstd
check set-offline-key-2 2 err 'extent-kib cannot change .*--extent-kib' set vol extent_kib 64
check set-offline-key-3 2 err 'cold-compressor cannot change .*--cold-compressor' \
	set vol cold_compressor zstd
check set-not-a-number 2 err "seq-cutoff-kib: 'lots' is not a number" set vol seq_cutoff_kib lots
check set-negative 2 err "'-1' is not a number" set vol compress_min_saving -1
check set-out-of-range 2 err 'low-watermark must be from 1 to 98, not 0' set vol low_watermark 0
check set-out-of-range-2 2 err 'hot-uncompressed must be from 0 to 1, not 2' set vol hot_uncompressed 2
check set-out-of-range-3 2 err 'ssd-hold-s must be from 1 to 3600, not 3601' set vol ssd_hold_s 3601
check set-out-of-range-4 2 err 'cleaner-rate-mib must be from 0 to 65536, not 70000' \
	set vol cleaner_rate_mib 70000
check set-out-of-range-5 2 err 'hot-max-percent must be from 0 to 100, not 101' \
	set vol hot_max_percent 101
check set-out-of-range-6 2 err 'table-cache-kib must be from 0 to 1073741824, not 1073741825' \
	set vol table_cache_kib 1073741825
check set-out-of-range-7 2 err 'probation-percent must be from 0 to 50, not 51' \
	set vol probation_percent 51
check set-out-of-range-huge 2 err "^flazctl: table-cache-kib must be from 0 to 1073741824, not $HUGE\$" \
	set vol table_cache_kib $HUGE
# option names: dashes and underscores alike in create, flaztab, set and get; printed with dashes
check create-underscore-option 2 err '^flazctl: --extent-kib must be a power of two from 4 to 256, not 3$' \
	create vol --hdd $NOHDD --ssd $NOSSD --extent_kib 3
check create-both-spellings-twice 2 err '^flazctl: --extent-kib given twice$' \
	create vol --hdd $NOHDD --ssd $NOSSD --extent-kib 32 --extent_kib 64
check set-dashed-key 2 err '^flazctl: low-watermark must be from 1 to 98, not 0$' set vol low-watermark 0
check set-dashed-offline-key 2 err '^flazctl: extent-kib cannot change on a live volume' set vol extent-kib 64
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
no_dm set-out-of-range-4 set vol cleaner_rate_mib 70000
no_dm set-out-of-range-6 set vol table_cache_kib 1073741825
no_dm set-out-of-range-7 set vol probation_percent 51
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
jsonc=$(pkg-config --cflags --libs json-c 2>/dev/null || echo -ljson-c)
# shellcheck disable=SC2086
if ! gcc -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	-Wall -Wextra -Werror -I"$FLAZ" -I"$REPO/tools/flazctl" -o "$FAKE" $srcs "$FLAZ/format.c" \
	"$REPO/tests/host/fakedm.c" $jsonc 2>"$T/gcc.err"; then
	fail build-fake "$(head -n3 "$T/gcc.err")"
else
	pass build-fake
fi
ST="reads=100 writes=20 read_hits=300 read_misses=100 write_hits=1 write_misses=2 fills=100 bypasses=0"
ST2="raw_blocks=0 zero_blocks=3"
ST3="evictions=7 cleaner_runs=0 extents_cleaned=0 slots_moved=0 slots_dropped=0 discards=0 hdd_errors=0 ssd_errors=0 table_bytes=8192 commits=12 meta_errors=0 marked_regions=0"
ST4="loading=7 fills_skipped=0 compress_skipped=4 hot_blocks=9 recompressed=2"
ST5="marks=3 mark_waits=2 mark_wait_us=1500000 commit_us=2500"
ST6="probation_extents=40 main_extents=360 slots_promoted=11 ghost_hits=5"
{
	printf 'fast\t131072\t9999:0 9999:1 6 compressor zstd low_watermark 1 cleaner_rate_mib 0\tmode=normal %s blocks_cached=1000 logical_bytes=4000000 physical_bytes=2000000 ratio=2.00 %s free_extents=400 total_extents=500 %s mode_reason=none dram_bytes=20000 meta_bytes=65536 %s %s %s\n' "$ST" "$ST2" "$ST3" "$ST5" "$ST4" "$ST6"
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
assert all(x["schema"] == 2 for x in v), v
f = v[1]
assert f["hit_ratio"] == 0.75 and f["saving"] == 0.5 and f["cached"] == 4096000, f
assert v[0]["hit_ratio"] is None and v[0]["saving"] is None, v[0]' "$T/list.json" 2>"$T/py.err"; then
	pass fake/list-json
else
	fail fake/list-json "$(tail -n1 "$T/py.err")"
fi
# the table's options, as lvs(8) has them: --noheadings, --units, --nosuffix, --separator, -O
fsame list-noheadings "$(printf '%s\n' 'abc   9999:2  9999:3  passthrough      0 B      -      -' \
	'fast  9999:0  9999:1  normal       3.9 MiB  75.0%  50.0%')" list --noheadings
fsame list-units-m "$(printf '%s\n' 'Name       Size    Cached' 'abc    1.00 MiB  0.00 MiB' \
	'fast  64.00 MiB  3.91 MiB')" list -o name,size,cached --units m
fsame list-units-si "$(printf '%s\n' 'Name      Cached' 'abc      0.00 kB' 'fast  4096.00 kB')" \
	list -o name,cached --units K
fsame list-units-b-nosuffix "$(printf '%s\n' 'Name:Cached:logical_bytes' 'abc:0:0' \
	'fast:4096000:4000000')" list -o name,cached,logical_bytes --units b --nosuffix --separator :
# in bytes, exact past 2^53, where a double rounds (to ...992)
printf 'big\t2048\t9999:4 9999:5 0\tmode=normal blocks_cached=1 logical_bytes=9007199254740993\n' >"$T/vols-big"
FAKE_DM=$T/vols-big fsame list-units-b-exact 'big:9007199254740993' \
	list -o name,logical_bytes --units b --nosuffix --separator : --noheadings
fsame list-separator "$(printf '%s\n' 'abc|passthrough|0 B' 'fast|normal|3.9 MiB')" \
	list -o name,mode,cached --separator '|' --noheadings
fsame list-sort-desc "$(printf '%s\n' 'fast,4096000' 'abc,0')" \
	list -o name,cached -O -cached --csv --noheadings
fsame list-sort-two "$(printf '%s\n' 'Name  Mode' 'fast  normal' 'abc   passthrough')" \
	list -o name,mode --sort mode,-name
fsame list-sort-hidden-field "$(printf '%s\n' name fast abc)" list -o name --sort -reads --csv
fsame list-sort-undefined-first "$(printf '%s\n' abc fast)" list -o name --sort +hit_ratio --csv --noheadings
check list-units-bad 2 err "--units takes one of hHbBkKmMgGtT, not 'x'" list --units x
check list-units-json 2 err 'shape the table' list --units m --json
check list-separator-csv 2 err 'shape the table' list --separator : --csv
check list-noheadings-json 2 err 'noheadings goes with' list --noheadings --json
check list-sort-unknown 2 err "-O: unknown field 'colour'" list -O -colour
got=$("$FAKE" status 2>&1 | grep -e ' -> cache ' | tr '\n' '|')
[ "$got" = 'abc: 9999:2 -> cache 9999:3|fast: 9999:0 -> cache 9999:1|' ] && pass fake/status-all ||
	fail fake/status-all "volume headers: '$got'"
fcheck status-derived 0 out '^  hit ratio +75\.0%$' status fast
fcheck status-saving 0 out '^  saving +50\.0%$' status fast
fcheck status-ssd-used 0 out '^  ssd used +20\.0%$' status fast
fcheck status-new-key 0 out '^  new_key +5$' status abc
# sizes in human units, as lvs and df -h show them; --bytes the kernel's numbers
fcheck status-human-bytes 0 out '^  logical_bytes +3\.8 MiB$' status fast
fcheck status-human-meta 0 out '^  meta_bytes +64\.0 KiB$' status fast
fcheck status-human-small 0 out '^  physical_bytes +0 B$' status abc
fcheck status-human-counts 0 out '^  reads +100$' status fast
fcheck status-bytes 0 out '^  logical_bytes +4000000$' status fast --bytes
fcheck status-bytes-meta 0 out '^  meta_bytes +65536$' status --bytes fast
printf 'kib\t2048\t9999:4 9999:5 0\tmode=normal seq_bypass_kib=3145728\n' >"$T/vols-kib"
FAKE_DM=$T/vols-kib fcheck status-human-kib 0 out '^  seq_bypass_kib +3\.0 GiB$' status kib
FAKE_DM=$T/vols-kib fcheck status-bytes-kib 0 out '^  seq_bypass_kib +3145728$' status kib --bytes
fcheck status-not-flaz 1 err 'lin is not a flaz volume' status lin
"$FAKE" status --json >"$T/status.json" 2>&1
if python3 -c 'import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert [x["name"] for x in v] == ["abc", "fast"], v
assert all(x["schema"] == 2 for x in v), v
f = v[1]
assert f["status"]["reads"] == 100 and f["status"]["ratio"] == 2.0, f
assert f["hit_ratio"] == 0.75 and f["saving"] == 0.5 and f["ssd_used"] == 0.2, f
assert f["table"] == "9999:0 9999:1 6 compressor zstd low_watermark 1 cleaner_rate_mib 0" and f["size_sectors"] == 131072
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
    'flaz_compress_skipped_total{volume="fast"}': '4',
    'flaz_hot_blocks{volume="fast"}': '9',
    'flaz_recompressed_total{volume="fast"}': '2',
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
# the keys a dm-flaz of this tree emits have their own types and names: counters, the sums of
# microseconds as counters in seconds, gauges; none is left to the newer-key fallback
if python3 - "$T/flaz.prom" 2>"$T/py.err" <<'EOF'
import sys
text = open(sys.argv[1]).read()
want = {
    'flaz_marks_total': ('counter', '3'),
    'flaz_mark_waits_total': ('counter', '2'),
    'flaz_mark_wait_seconds_total': ('counter', '1.500000'),
    'flaz_commit_seconds_total': ('counter', '0.002500'),
    'flaz_loading': ('gauge', '7'),
    'flaz_probation_extents': ('gauge', '40'),
    'flaz_main_extents': ('gauge', '360'),
    'flaz_slots_promoted_total': ('counter', '11'),
    'flaz_ghost_hits_total': ('counter', '5'),
}
for name, (typ, value) in want.items():
    assert '# TYPE %s %s\n' % (name, typ) in text, 'no TYPE %s %s' % (name, typ)
    help = [l for l in text.splitlines() if l.startswith('# HELP %s ' % name)]
    assert help and 'newer dm-flaz' not in help[0], 'HELP of %s: %s' % (name, help)
    assert '%s{volume="fast"} %s\n' % (name, value) in text, '%s is not %s' % (name, value)
for old in ('flaz_marks{', 'flaz_mark_waits{', 'flaz_mark_wait_us', 'flaz_commit_us', 'flaz_loading_total'):
    assert old not in text, 'still exported as ' + old
EOF
then
	pass fake/prometheus-typed-keys
else
	fail fake/prometheus-typed-keys "$(tail -n1 "$T/py.err")"
fi
# every status key stats.c emits (its counter names and the gauges of flaz_stats_emit())
keys=$( (sed -n 's/^\t\[FLAZ_STAT_[A-Z_]*\] = "\([a-z_]*\)",$/\1/p' "$FLAZ/stats.c"
	sed -n '/^void flaz_stats_emit/,/^}/p' "$FLAZ/stats.c" | grep -o ' [a-z_]*=%' | tr -d ' =%') |
	sort -u)
line=
for k in $keys; do
	case $k in
	mode) line="$line mode=normal" ;;
	mode_reason) line="$line mode_reason=none" ;;
	*) line="$line $k=1" ;;
	esac
done
printf 'all\t2048\t9999:8 9999:9 0\t%s\n' "${line# }" >"$T/vols-all"
untyped=$(FAKE_DM=$T/vols-all "$FAKE" status --prometheus 2>&1 |
	sed -n 's/^# HELP flaz_\([a-z0-9_]*\) Status key of a newer dm-flaz\.$/\1/p' | tr '\n' ' ')
if [ "$(wc -w <<<"$keys")" -lt 40 ]; then
	fail fake/prometheus-kernel-keys "found only $(wc -w <<<"$keys") status keys in $FLAZ/stats.c"
elif [ -n "$untyped" ]; then
	fail fake/prometheus-kernel-keys "exported as keys of a newer dm-flaz: $untyped"
else
	pass fake/prometheus-kernel-keys
fi
# not a pipe into grep -q: with pipefail, a SIGPIPE would read as no match
if grep -q 'volume="abc"' <<<"$("$FAKE" status fast --prometheus)"; then
	fail fake/prometheus-one-only "status fast --prometheus shows abc too"
else
	pass fake/prometheus-one-only
fi

# stats: the totals, then the counters' growth over each interval (50 reads and hits per
# reading), under one header: the same columns, counts and sizes in both
FAKE_DM_GROW=50 "$FAKE" stats fast --interval 1 --count 2 >"$T/stats" 2>"$T/err"
if [ "$(wc -l <"$T/stats")" -ne 4 ]; then
	fail fake/stats "want a header, the totals and 2 intervals: $(tr '\n' '|' <"$T/stats") $(head -n1 "$T/err")"
elif ! grep -Eq '^time +reads +writes +hit% +ssd_read +hdd_read +fills +evicts +commits +meta$' "$T/stats"; then
	fail fake/stats "bad header: $(head -n1 "$T/stats")"
elif ! grep -Eq '^total +100 +20 +75\.0% +1\.2 MiB +400\.0 KiB +100 +7 +12 +64\.0 KiB$' "$T/stats"; then
	fail fake/stats "bad totals: $(sed -n 2p "$T/stats")"
elif [ "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2} +50 +0 +100\.0% +200\.0 KiB +0 B +50 +0 +0 +0 B$' "$T/stats")" -ne 2 ]; then
	fail fake/stats "bad intervals: $(tail -n2 "$T/stats" | tr '\n' '|')"
else
	pass fake/stats
fi
# -o and --units: the rates are columns of their own, undefined (-) for the totals
FAKE_DM_GROW=50 "$FAKE" stats fast --count 1 -o time,seconds,reads,reads_per_s,ssd_read_bytes,ssd_read_bytes_per_s \
	--units b >"$T/stats" 2>"$T/err"
if ! grep -Eq '^time +secs +reads +reads/s +ssd_read +ssd_read/s$' "$T/stats"; then
	fail fake/stats-o "bad header: $(head -n1 "$T/stats") $(head -n1 "$T/err")"
elif ! grep -Eq '^total +- +100 +- +1228800 B +-$' "$T/stats"; then
	fail fake/stats-o "bad totals: $(sed -n 2p "$T/stats")"
elif ! grep -Eq '^[0-9:]{8} +(0\.9|1\.[0-4]) +50 +(4[5-9]|5[0-5])\.[0-9] +204800 B +[0-9]+ B$' "$T/stats"; then
	fail fake/stats-o "bad interval: $(sed -n 3p "$T/stats")"
else
	pass fake/stats-o
fi
# figures right-aligned wherever they stand, the time left-aligned, no trailing blank
fcheck stats-o-align 0 out '^     100 total$' stats fast --count 1 -o reads,time
FAKE_DM_GROW=50 fcheck stats-units-m 0 out '^total +1\.17 MiB +0\.06 MiB$' stats fast --count 1 -o time,ssd_read_bytes,meta_bytes --units m
check stats-o-help 0 out '^  ssd_read_bytes_per_s$' stats -o help
check stats-o-unknown 2 err "unknown field 'colour' \(see flazctl stats -o help\)" stats vol -o reads,colour
check stats-units-bad 2 err "--units takes one of hHbBkKmMgGtT, not 'q'" stats vol --units q
check stats-units-json 2 err '--units shapes the table' stats vol --units m --json
FAKE_DM_GROW=50 "$FAKE" stats fast --count 1 --json >"$T/stats.json" 2>"$T/err"
if python3 -c 'import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert len(v) == 2 and v[0]["kind"] == "total" and v[1]["kind"] == "interval", v
assert all(x["schema"] == 2 for x in v), v
assert list(v[0]) == list(v[1]), "the totals and the intervals have other keys: %s" % v
assert v[0]["reads"] == 100 and v[0]["ssd_read_bytes"] == 300 * 4096 and v[0]["hit_ratio"] == 0.75, v[0]
assert v[0]["reads_per_s"] is None and v[0]["seconds"] is None and v[0]["meta_bytes"] == 65536, v[0]
assert v[1]["reads"] == 50 and v[1]["ssd_read_bytes"] == 50 * 4096, v[1]
assert 45 < v[1]["reads_per_s"] < 55 and v[1]["hit_ratio"] == 1 and v[1]["volume"] == "fast", v[1]
assert 45 * 4096 < v[1]["ssd_read_bytes_per_s"] < 55 * 4096, v[1]
assert 0.9 < v[1]["seconds"] < 1.5, v[1]' "$T/stats.json" 2>"$T/py.err"; then
	pass fake/stats-json
else
	fail fake/stats-json "$(tail -n1 "$T/py.err")"
fi
FAKE_DM_GROW=50 "$FAKE" stats fast --count 1 --json -o reads,hit_ratio >"$T/stats.json" 2>"$T/err"
if python3 -c 'import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert [list(x) for x in v] == 2 * [["schema", "volume", "kind", "reads", "hit_ratio"]], v' \
	"$T/stats.json" 2>"$T/py.err"; then
	pass fake/stats-json-o
else
	fail fake/stats-json-o "$(tail -n1 "$T/py.err")"
fi
fcheck stats-missing 1 err 'no such device: nope' stats nope --count 1

# get: the table's options, defaults for the rest; set: the message, and a refusal
fsame get-all "$(printf '%s\n' compressor=zstd extent-kib=32 overbook=200 low-watermark=1 \
	high-watermark=2 seq-cutoff-kib=0 compress-min-saving=10 hot-uncompressed=0 ssd-hold-s=30 \
	cleaner-rate-mib=0 hot-max-percent=10 cold-compressor=none table-cache-kib=0 \
	probation-percent=10)" get fast
fcheck get-one 0 out '^1$' get fast low_watermark
fcheck get-one-dashed 0 out '^1$' get fast low-watermark
fcheck get-json-one-dashed 0 out '^\{"schema":2,"low-watermark":1\}$' get fast low-watermark --json
fcheck get-default 0 out '^lz4$' get abc compressor
fcheck get-json 0 out '^\{"schema":2,"compressor":"lz4","extent-kib":32,"overbook":200,"low-watermark":1,"high-watermark":2,"seq-cutoff-kib":0,"compress-min-saving":10,"hot-uncompressed":0,"ssd-hold-s":30,"cleaner-rate-mib":32,"hot-max-percent":10,"cold-compressor":"none","table-cache-kib":0,"probation-percent":10\}$' get abc --json
fcheck get-json-one 0 out '^\{"schema":2,"low-watermark":1\}$' get fast low_watermark --json
fcheck get-not-flaz 1 err 'lin is not a flaz volume' get lin
rm -f "$T/vols.msgs"
fcheck set 0 out '^$' set fast seq_cutoff_kib 1024
[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast seq_cutoff_kib 1024" ] && pass fake/set-message ||
	fail fake/set-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want 'fast seq_cutoff_kib 1024'"
rm -f "$T/vols.msgs"
fcheck set-dashed 0 out '^$' set fast seq-cutoff-kib 2048
[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast seq_cutoff_kib 2048" ] && pass fake/set-dashed-message ||
	fail fake/set-dashed-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want the kernel's spelling 'fast seq_cutoff_kib 2048'"
rm -f "$T/vols.msgs"
fcheck set-cleaner-rate-mib 0 out '^$' set fast cleaner_rate_mib 65536
[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast cleaner_rate_mib 65536" ] && pass fake/set-cleaner-rate-mib-message ||
	fail fake/set-cleaner-rate-mib-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want 'fast cleaner_rate_mib 65536'"
for v in 0 64; do
	rm -f "$T/vols.msgs"
	fcheck set-table-cache-kib-$v 0 out '^$' set fast table_cache_kib $v
	[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast table_cache_kib $v" ] && pass fake/set-table-cache-kib-$v-message ||
		fail fake/set-table-cache-kib-$v-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want 'fast table_cache_kib $v'"
done
for v in 0 50; do
	rm -f "$T/vols.msgs"
	fcheck set-probation-percent-$v 0 out '^$' set fast probation-percent $v
	[ "$(cat "$T/vols.msgs" 2>/dev/null)" = "fast probation_percent $v" ] && pass fake/set-probation-percent-$v-message ||
		fail fake/set-probation-percent-$v-message "sent '$(cat "$T/vols.msgs" 2>/dev/null)', want 'fast probation_percent $v'"
done
# a table_cache_kib in the table, after the cold flag as the kernel emits it
printf 'tc\t2048\t9999:6 9999:7 3 cold table_cache_kib 64\tmode=normal reads=0\n' >"$T/vols-tc"
FAKE_DM=$T/vols-tc fcheck get-table-cache-kib 0 out '^64$' get tc table_cache_kib
FAKE_DM=$T/vols-tc fcheck get-table-cache-kib-json 0 out '"cold-compressor":"none","table-cache-kib":64,"probation-percent":10\}$' get tc --json
# a probation_percent in the table (0: off)
printf 'pp\t2048\t9999:6 9999:7 2 probation_percent 0\tmode=normal reads=0\n' >"$T/vols-pp"
FAKE_DM=$T/vols-pp fcheck get-probation-percent 0 out '^0$' get pp probation_percent
# resize: the table reloaded at its HDD's size (a real block device of this host, by its
# number), with the same devices and options but cold, which would empty the cache
rdev=
for d in /sys/dev/block/*; do
	[ "$(cat "$d/size" 2>/dev/null)" -gt 0 ] 2>/dev/null && rdev=${d##*/} && break
done
if [ -z "$rdev" ]; then
	skip fake/resize "this host has no block device of a size in /sys/dev/block"
else
	rsz=$(cat "/sys/dev/block/$rdev/size")
	{
		printf 'rs\t%s\t%s 9999:9 5 cold compressor zstd low_watermark 1\tmode=normal reads=0\n' \
			$((rsz + 8)) "$rdev"
		printf 'same\t%s\t%s 9999:9 0\tmode=normal reads=0\n' "$rsz" "$rdev"
	} >"$T/vols-rs"
	rm -f "$T/vols-rs.msgs"
	FAKE_DM=$T/vols-rs fcheck resize 0 out "^rs: $((rsz + 8)) -> $rsz sectors\$" resize rs
	want="rs reload $rsz $rdev 9999:9 4 compressor zstd low_watermark 1"
	[ "$(cat "$T/vols-rs.msgs" 2>/dev/null)" = "$want" ] && pass fake/resize-table ||
		fail fake/resize-table "reloaded '$(cat "$T/vols-rs.msgs" 2>/dev/null)', want '$want' (cold dropped)"
	rm -f "$T/vols-rs.msgs"
	FAKE_DM=$T/vols-rs fcheck resize-same 0 out "^same: already $rsz sectors, as its HDD\$" resize same
	[ ! -e "$T/vols-rs.msgs" ] && pass fake/resize-same-no-reload ||
		fail fake/resize-same-no-reload "reloaded '$(cat "$T/vols-rs.msgs")' at the size it has"
	FAKE_DM=$T/vols-rs FAKE_DM_REFUSE=1 fcheck resize-refused 1 err \
		"^flazctl: cannot reload rs at $rsz sectors: .*\\(see dmsetup info rs\\)\$" resize rs
fi
{
	printf 'gone\t2048\t9999:8 9999:9 0\tmode=normal reads=0\n'
	printf 'short\t2048\t9999:7 9999:9 3 compressor zstd\tmode=normal reads=0\n'
} >>"$T/vols-rs"
FAKE_DM=$T/vols-rs fcheck resize-bad-table 1 err "^flazctl: cannot read the volume's table '.* 3 compressor zstd'\$" resize short
FAKE_DM=$T/vols-rs fcheck resize-no-hdd 1 err '^flazctl: cannot get the size of HDD 9999:8: /sys/dev/block/9999:8/size: ' resize gone
FAKE_DM=$T/vols-rs fcheck resize-not-flaz 1 err 'no such device|not a flaz volume' resize nosuch
fcheck resize-no-name 2 err '^flazctl: usage: flazctl resize NAME$' resize
fcheck resize-option 2 err '^flazctl: unknown option --force$' resize --force
FAKE_DM_REFUSE=1 fcheck set-refused 1 err '^flazctl: kernel refused low-watermark 50: ' set fast low_watermark 50
fcheck set-missing 1 err 'no such device: nope' set nope low_watermark 5
unset FAKE_DM
# JSON on hostile input (bytes that are not UTF-8: stray, overlong, a surrogate, past
# U+10FFFF, cut short; control characters, a newline, 4,000 characters) in a name, a device, a table, a status key and value: every output parses,
# and holds the bytes as Python decodes them with errors="replace" (U+FFFD for bad ones)
H=$'\xff\xfe\x01\x1b\n\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82.\xf0\x9f\x98\x80\xc3\xa9'$(printf 'h%.0s' {1..4000})
HW=${H//$'\n'/'\n'}	# as the FAKE_DM file writes a newline
HS=${H//$'\n'/}	# no newline where the status line's words are split
printf '%s\t2048\t/dev/%s 9999:1 0\tmode=normal k%s=1 mode_reason=%s\n' "$HW" "$HW" "$HS" "$HS" \
	>"$T/vols-hostile"
printf 'hostile\t2048\t9999:0 9999:1 2 compressor %s\tmode=normal\n' "$HW" >>"$T/vols-hostile"
# hjson NAME PYEXPR ARGS...: the fake flazctl ARGS prints JSON (one value a line) with
# PYEXPR true of v, the list of those values, h, the hostile string decoded, and hs, h
# without its newline (volumes sort by name: "hostile" comes first)
hjson() {
	local name=$1 expr=$2 out
	shift 2
	FAKE_DM=$T/vols-hostile "$FAKE" "$@" >"$T/out" 2>"$T/err"
	if out=$(python3 -c '
import json, os, sys
h = os.fsencode(sys.argv[3]).decode("utf-8", "replace")
hs = h.replace("\n", "")
v = [json.loads(l) for l in open(sys.argv[1], "rb")]
assert eval("(" + sys.argv[2] + ")"), json.dumps(v)[:200]' "$T/out" "$expr" "$H" 2>&1); then
		pass "fake/$name"
	else
		fail "fake/$name" "$(tail -n1 <<<"$out")"
	fi
}
# (list cuts a field at 287 bytes: a device-mapper name is at most 127)
hjson hostile-list-json 'h.startswith(v[0][1]["name"]) and len(v[0][1]["name"]) > 270 and v[0][1]["hdd"].startswith("/dev/\ufffd\ufffd\x01\x1b")' list --json
hjson hostile-list-json-o 'hs.startswith(v[0][1]["mode_reason"]) and len(v[0][1]["mode_reason"]) > 270' list --json -o name,mode_reason
hjson hostile-status-json 'v[1]["name"] == h and v[1]["table"] == "/dev/%s 9999:1 0" % h and
	v[1]["status"]["mode_reason"] == hs and v[1]["status"]["k" + hs] == 1' status --json
hjson hostile-get-json 'v[0]["compressor"] == h' get hostile --json
hjson hostile-get-json-one 'v == [{"schema": 2, "compressor": h}]' get hostile compressor --json

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
t flazctl check /dev/nul
t flazctl list -O name,-hi
t flazctl list --units ""
t flazctl list --no
t flazctl stats fast -o reads,ssd_read_bytes_p
t flazctl stats fast --u' _ "$COMP" 2>&1)
want='status stats
abc fast
low-watermark high-watermark seq-cutoff-kib compress-min-saving hot-uncompressed ssd-hold-s cleaner-rate-mib hot-max-percent table-cache-kib probation-percent
zstd
name,hit_ratio
/dev/null
name,-hit_ratio
h H b B k K m M g G t T
--noheadings --nosuffix
reads,ssd_read_bytes_per_s
--units'
[ "$out" = "$want" ] && pass completion || fail completion "got '$(tr '\n' '|' <<<"$out")'"
# the fields of -o, each once (mode is a fixed field and a status key)
out=$(PATH=$T/bin:$PATH FAKE_DM=$T/vols bash -c '
. "$1" || exit 1
COMP_WORDS=(flazctl list -o ""); COMP_CWORD=3; _flazctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" 2>&1)
dups=$(sort <<<"$out" | uniq -d | tr '\n' ' ')
[ -z "$dups" ] && grep -qx mode <<<"$out" && grep -qx slots_kept <<<"$out" && pass completion-fields-once ||
	fail completion-fields-once "repeated: '$dups' (of $(wc -l <<<"$out") fields)"

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
		 usr/lib/systemd/system/flaz-textfile.service usr/lib/systemd/system/flaz-textfile.timer \
		 usr/lib/systemd/system/flaz-activate.service \
		 'usr/lib/systemd/system/flaz-activate-device@.service' \
		 usr/lib/udev/rules.d/60-flaz.rules etc/flaztab; do
		[ -f "$T/dest/$f" ] || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		fail install "not installed:$missing"
	elif ! grep -q ' /usr/sbin/flazctl status --prometheus ' "$T/dest/usr/lib/systemd/system/flaz-textfile.service" ||
		! grep -q '^ExecStart=-/usr/sbin/flazctl activate ' "$T/dest/usr/lib/systemd/system/flaz-activate.service"; then
		fail install "the installed services do not run /usr/sbin/flazctl"
	else
		pass install
	fi
	# an existing /etc/flaztab is the admin's: a second install keeps it
	echo "mine /dev/a /dev/b" >"$T/dest/etc/flaztab"
	make -s -C "$REPO/tools/flazctl" install DESTDIR="$T/dest" PREFIX=/usr >"$T/out" 2>&1
	[ "$(cat "$T/dest/etc/flaztab")" = "mine /dev/a /dev/b" ] && pass install-keeps-flaztab ||
		fail install-keeps-flaztab "make install overwrote an existing /etc/flaztab"
	"$BIN" activate --all --dry-run --flaztab "$REPO/tools/flazctl/flaztab.example" >"$T/out" 2>&1 &&
		pass install-example-valid || fail install-example-valid "the example flaztab: $(head -n1 "$T/out")"
else
	fail install "$(tail -n1 "$T/out")"
fi

# --- flaztab: parsing and checking (activate --dry-run touches no device-mapper), the
# usage errors, --flaztab over $FLAZTAB; then activate/deactivate against the fake
# device-mapper. Block devices for the device fields: the loop devices above, or none.
FT=$T/flaztab
mkdir -p "$T/disk/by-uuid" "$T/disk/by-label"
if [ -b "${HDD:-}" ] && [ -b "${SSD:-}" ]; then
	ln -s "$SSD" "$T/disk/by-uuid/1234-abcd"
	ln -s "$HDD" "$T/disk/by-label/my\x20hdd"
	BHDD=$HDD BSSD=$SSD
else
	BHDD= BSSD=
fi
export FLAZ_DISK_DIR=$T/disk FLAZ_STATE_DIR=$T/state
unset FLAZTAB
cat >"$FT" <<EOF
# comment, then a blank line

	 # an indented comment
v1 ${BHDD:-/dev/nohdd} UUID=1234-abcd compressor=zstd,extent-kib=64,ssd-hold-s=10
v2 LABEL=my\\x20hdd /dev/nossd   # a trailing comment
v3 /dev/nohdd /dev/nossd noauto,cold,low-watermark=1
v4 /dev/disk/by-id/none PARTUUID=0c5e-01 defaults
EOF
# A dry run fails (exit 1) the lines whose HDD is missing, as activation would, and warns of
# a missing SSD (activation brings the volume up uncached). Its other messages are errors.
# dry NAME RC REGEX ARGS...: activate --dry-run ARGS must exit RC with REGEX on stdout, and
# stderr hold nothing but missing devices
dry() {
	local name=$1 want=$2 re=$3 rc other
	shift 3
	"$BIN" activate --dry-run "$@" >"$T/out" 2>"$T/err"
	rc=$?
	other=$(grep -vE '^flazctl: [^ ]*:[0-9]+: ([^ ]+: HDD .* is missing|warning: SSD .* is missing: [^ ]+ would come up uncached)$' "$T/err" | head -n1)
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, want $want ($(head -n1 "$T/err"))"
	elif ! grep -qE -- "$re" "$T/out"; then
		fail "$name" "stdout lacks /$re/: '$(tr '\n' '|' <"$T/out")'"
	elif [ -n "$other" ]; then
		fail "$name" "stderr: $other"
	else
		pass "$name"
	fi
}
dry flaztab-dry-run 1 '^v4: hdd /dev/disk/by-id/none -> missing, ssd PARTUUID=0c5e-01 -> missing, options none$' \
	--all --flaztab "$FT"
grep -q "^flazctl: $FT:7: v4: HDD /dev/disk/by-id/none is missing\$" "$T/err" &&
	pass flaztab-dry-run-says-missing ||
	fail flaztab-dry-run-says-missing "stderr: '$(tr '\n' '|' <"$T/err")'"
if [ -n "$BHDD" ]; then
	dry flaztab-resolve-uuid 1 "^v1: hdd $BHDD -> $BHDD, ssd UUID=1234-abcd -> $BSSD, options compressor=zstd,extent-kib=64,ssd-hold-s=10\$" \
		--all --flaztab "$FT"
else
	skip flaztab-resolve-uuid "losetup does not work on this host"
fi
"$BIN" activate --all --dry-run --flaztab "$FT" >"$T/out" 2>"$T/err"
got=$(cut -d: -f1 "$T/out" | tr '\n' ' ')
bad=$(grep -vE ': (HDD|warning: SSD) .* is missing' "$T/err" | head -n1)
[ "$got" = "v1 v2 v4 " ] && [ -z "$bad" ] && pass flaztab-comments-noauto ||
	fail flaztab-comments-noauto "lines shown: '$got' (want v1 v2 v4: comments, blank lines and noauto left out), stderr '$bad'"
dry flaztab-noauto-by-name 1 '^v3: .*options low-watermark=1,cold,noauto$' v3 --flaztab "$FT"
echo "tc /dev/nohdd /dev/nossd table-cache-kib=64,cold" >"$T/tctab"
dry flaztab-table-cache-kib 1 '^tc: .*options cold,table-cache-kib=64$' --all --flaztab "$T/tctab"
echo "tc /dev/nohdd /dev/nossd table_cache_kib=64,cold" >"$T/tctab"
dry flaztab-underscore-option 1 '^tc: .*options cold,table-cache-kib=64$' --all --flaztab "$T/tctab"
echo "pp /dev/nohdd /dev/nossd probation_percent=0,table-cache-kib=64" >"$T/pptab"
dry flaztab-probation-percent 1 '^pp: .*options table-cache-kib=64,probation-percent=0$' --all --flaztab "$T/pptab"
# a dry run says what activation would do: exit 0 when it would bring every line up (the
# SSD may be missing: uncached), 1 when a line's HDD is missing, every line shown
printf 'gone /dev/nohdd /dev/nossd\nstays %s /dev/nossd\n' "${BHDD:-/dev/nohdd2}" >"$T/drytab"
dry flaztab-dry-run-missing-hdd 1 '^gone: hdd /dev/nohdd -> missing, ' --all --flaztab "$T/drytab"
if ! grep -q '^stays: ' "$T/out"; then
	fail flaztab-dry-run-missing-hdd-others "the other line was not shown: '$(tr '\n' '|' <"$T/out")'"
elif ! grep -qx "flazctl: $T/drytab:1: gone: HDD /dev/nohdd is missing" "$T/err"; then
	fail flaztab-dry-run-missing-hdd-others "stderr: '$(tr '\n' '|' <"$T/err")'"
else
	pass flaztab-dry-run-missing-hdd-others
fi
if [ -n "$BHDD" ]; then
	printf 'ok %s UUID=1234-abcd\n' "$BHDD" >"$T/oktab"
	check flaztab-dry-run-ok 0 out "^ok: hdd $BHDD -> $BHDD, ssd UUID=1234-abcd -> $BSSD, options none\$" \
		activate --all --dry-run --flaztab "$T/oktab"
	[ -s "$T/err" ] && fail flaztab-dry-run-ok-quiet "stderr: $(head -n1 "$T/err")" ||
		pass flaztab-dry-run-ok-quiet
	printf 'nossd %s /dev/nossd\n' "$BHDD" >"$T/nossdtab"
	check flaztab-dry-run-missing-ssd 0 err "^flazctl: $T/nossdtab:1: warning: SSD /dev/nossd is missing: nossd would come up uncached\$" \
		activate --all --dry-run --flaztab "$T/nossdtab"
else
	for c in flaztab-dry-run-ok flaztab-dry-run-ok-quiet flaztab-dry-run-missing-ssd; do
		skip $c "losetup does not work on this host"
	done
fi
# --flaztab wins over $FLAZTAB, which wins over /etc/flaztab
echo "other /dev/a /dev/b" >"$T/other"
FLAZTAB=$T/other dry flaztab-env 1 '^other: ' --all
FLAZTAB=$T/other dry flaztab-option-over-env 1 '^v1: ' --all --flaztab "$FT"
# a flaztab named by --flaztab or $FLAZTAB must be there; no /etc/flaztab is nothing to do
check flaztab-missing-all 1 err "^flazctl: no flaztab at $T/none\$" activate --all --flaztab "$T/none"
check flaztab-missing-dry-run 1 err "^flazctl: no flaztab at $T/none\$" activate --all --dry-run --flaztab "$T/none"
FLAZTAB=$T/none check flaztab-missing-env 1 err "^flazctl: no flaztab at $T/none\$" activate --all
FLAZTAB=$T/none check flaztab-missing-env-deactivate 1 err "^flazctl: no flaztab at $T/none\$" deactivate --all
check flaztab-missing-name 1 err "no flaztab at $T/none" activate v1 --flaztab "$T/none"
if [ -e /etc/flaztab ]; then
	skip flaztab-missing-default "this host has an /etc/flaztab"
	skip flaztab-missing-default-quiet "this host has an /etc/flaztab"
else
	check flaztab-missing-default 0 out '^$' activate --all
	[ -s "$T/err" ] && fail flaztab-missing-default-quiet "stderr: $(head -n1 "$T/err")" ||
		pass flaztab-missing-default-quiet
fi
check flaztab-unknown-name 1 err "nope has no valid line in $FT" activate nope --dry-run --flaztab "$FT"
# a FIFO (or anything but a regular file) is refused, not read: it would block activation
mkfifo "$T/fifo"
timeout 10 "$BIN" activate --all --flaztab "$T/fifo" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 124 ]; then
	fail flaztab-fifo "activate --flaztab FIFO blocked"
elif [ $rc -ne 1 ] || ! grep -qx "flazctl: flaztab $T/fifo is not a regular file" "$T/err"; then
	fail flaztab-fifo "exit $rc, stderr '$(tr '\n' '|' <"$T/err")'"
else
	pass flaztab-fifo
fi
FLAZTAB=$T/fifo timeout 10 "$BIN" activate --all --dry-run >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'is not a regular file' "$T/err" && pass flaztab-fifo-env ||
	fail flaztab-fifo-env "exit $rc, stderr '$(tr '\n' '|' <"$T/err")'"
check flaztab-directory 1 err "^flazctl: flaztab $T/disk is not a regular file\$" \
	activate --all --flaztab "$T/disk"
# a message names the flaztab whole, however long its path
long=$T/$(printf 'a-long-directory-name%.0s' 1 2 3)/flaztab
mkdir -p "$(dirname "$long")"
echo 'vol /dev/a /dev/b frob=1' >"$long"
check flaztab-long-path 1 err "^flazctl: $long:1: unknown option 'frob'\$" activate --all --dry-run --flaztab "$long"
# defaults: no option, alone or among others, as in fstab; noauto among others too
printf 'd1 /dev/nohdd /dev/nossd defaults,cold\nd2 /dev/nohdd /dev/nossd noauto,defaults\nd3 /dev/nohdd /dev/nossd defaults,noauto,defaults\nd4 /dev/nohdd /dev/nossd -\n' >"$T/deftab"
dry flaztab-defaults-among-others 1 '^d1: .*options cold$' --all --flaztab "$T/deftab"
got=$(cut -d: -f1 "$T/out" | tr '\n' ' ')
[ "$got" = "d1 d4 " ] && pass flaztab-noauto-among-others ||
	fail flaztab-noauto-among-others "activate --all showed '$got', want 'd1 d4 ' (d2 and d3 are noauto)"
dry flaztab-noauto-defaults-by-name 1 '^d2: .*options noauto$' d2 --flaztab "$T/deftab"
dry flaztab-defaults-noauto-by-name 1 '^d3: .*options noauto$' d3 --flaztab "$T/deftab"

# device fields with blanks: fstab's octal escapes (\040 a space, \011 a tab, \134 a
# backslash), udev's \xHH in a tag's value, each decoded once; a path is taken as written
# but for the octal escapes
if [ -n "$BHDD" ]; then
	ln -s "$SSD" "$T/disk/by-label/my\\x5cx20ssd"
	mkdir -p "$T/dev dir"
	ln -s "$HDD" "$T/dev dir/hdd"
	# esc NAME SPEC WANT: a flaztab line with device SPEC must show it found as WANT (a regex)
	esc() {
		printf 'e %s /dev/nossd\n' "$2" >"$T/esctab"
		dry "$1" 0 "^e: hdd .* -> $3, ssd /dev/nossd -> missing" --all --flaztab "$T/esctab"
	}
	esc flaztab-escape-label-x20 'LABEL=my\x20hdd' "$BHDD"
	esc flaztab-escape-label-octal 'LABEL=my\040hdd' "$BHDD"
	esc flaztab-escape-label-octal-x 'LABEL=my\040h\x64d' "$BHDD"
	esc flaztab-escape-once 'LABEL=my\134x20ssd' "$BSSD"
	# a path is shown as written (decoded), not resolved
	esc flaztab-escape-path-octal "$T/dev\\040dir/hdd" "$T/dev dir/hdd"
	esc flaztab-escape-path-x20-as-written "$T/disk/by-label/my\\x20hdd" "$T/disk/by-label/my\\\\x20hdd"
else
	for c in flaztab-escape-label-x20 flaztab-escape-label-octal flaztab-escape-label-octal-x \
		 flaztab-escape-once flaztab-escape-path-octal flaztab-escape-path-x20-as-written; do
		skip $c "losetup does not work on this host"
	done
fi

# each kind of bad line: reported with FILE:LINE, and the good line before it still shown
# (its missing devices are reported too)
# bad_line NAME REGEX LINE: the flaztab "comment, good line, LINE" must give exit 1 and REGEX
bad_line() {
	local name=flaztab-bad/$1 rc other
	printf '# bad line test\ngood /dev/a /dev/b\n%s\n' "$3" >"$T/bad"
	"$BIN" activate --all --dry-run --flaztab "$T/bad" >"$T/out" 2>"$T/err"
	rc=$?
	other=$(grep -vx "flazctl: $T/bad:2: good: HDD /dev/a is missing" "$T/err")
	if [ $rc -ne 1 ]; then
		fail "$name" "exit $rc, want 1 ($(head -n1 "$T/err"))"
	elif ! grep -qE -- "^flazctl: $T/bad:3: $2" <<<"$other"; then
		fail "$name" "stderr lacks /$2/: '$(tr '\n' '|' <"$T/err")'"
	elif [ "$(wc -l <<<"$other")" -ne 1 ]; then
		fail "$name" "want one line on stderr for the bad line, got '$(tr '\n' '|' <<<"$other")'"
	elif ! grep -q '^good: ' "$T/out"; then
		fail "$name-others" "the good line was not shown: '$(cat "$T/out")'"
	else
		pass "$name"
	fi
}
bad_line too-few 'want NAME HDD SSD \[OPTIONS\], got 2 fields' 'vol /dev/a'
bad_line too-many "unexpected field 'x' after the options" 'vol /dev/a /dev/b cold x'
bad_line name "invalid volume name 'a/b'" 'a/b /dev/a /dev/b'
bad_line duplicate 'volume good is already on line 2' 'good /dev/c /dev/d'
bad_line relative-path "HDD 'sda' is neither an absolute path nor UUID=" 'vol sda /dev/b'
bad_line empty-tag 'SSD UUID=: the UUID is empty' 'vol /dev/a UUID='
bad_line unknown-tag "SSD 'ID=x' is neither" 'vol /dev/a ID=x'
bad_line same-device 'HDD and SSD are the same device /dev/a' 'vol /dev/a /dev/a'
bad_line unknown-option "unknown option 'frob'" 'vol /dev/a /dev/b frob=1'
bad_line bad-compressor "unknown compressor 'gzip'" 'vol /dev/a /dev/b compressor=gzip'
bad_line extent-kib 'extent-kib must be a power of two from 4 to 256, not 48' 'vol /dev/a /dev/b extent-kib=48'
bad_line not-a-number "ssd-hold-s: '10s' is not a number" 'vol /dev/a /dev/b ssd-hold-s=10s'
bad_line huge-number "extent-kib must be a power of two from 4 to 256, not $HUGE\$" "vol /dev/a /dev/b extent-kib=$HUGE"
bad_line name-control "invalid volume name 'control'" 'control /dev/a /dev/b'
bad_line cleaner-rate-mib 'cleaner-rate-mib must be from 0 to 65536, not 70000' 'vol /dev/a /dev/b cleaner-rate-mib=70000'
bad_line table-cache-kib 'table-cache-kib must be from 0 to 1073741824, not 1073741825' 'vol /dev/a /dev/b table-cache-kib=1073741825'
bad_line probation-percent 'probation-percent must be from 0 to 50, not 51' 'vol /dev/a /dev/b probation-percent=51'
bad_line no-value 'compressor needs a value' 'vol /dev/a /dev/b compressor'
bad_line bare-with-value 'cold takes no value' 'vol /dev/a /dev/b cold=1'
bad_line twice 'extent-kib given twice' 'vol /dev/a /dev/b extent-kib=32,extent-kib=64'
bad_line twice-both-spellings 'extent-kib given twice' 'vol /dev/a /dev/b extent-kib=32,extent_kib=64'
bad_line underscore-option 'extent-kib must be a power of two from 4 to 256, not 48' 'vol /dev/a /dev/b extent_kib=48'
bad_line empty-option "empty option in 'cold,,noauto'" 'vol /dev/a /dev/b cold,,noauto'
bad_line watermarks 'low-watermark \(30\) must be below high-watermark \(2, the default\)' 'vol /dev/a /dev/b low-watermark=30'
bad_line force 'force is not a flaztab option' 'vol /dev/a /dev/b cold,force'
bad_line defaults-value 'defaults takes no value' 'vol /dev/a /dev/b defaults=1'
bad_line nul-escape 'HDD: a device cannot hold a NUL byte' 'vol /dev/a\000 /dev/b'
bad_line nul-escape-tag 'SSD: a device cannot hold a NUL byte' 'vol /dev/a LABEL=a\x00'
bad_line tag-escaped-slash "SSD LABEL=a/b: a LABEL cannot hold '/'" 'vol /dev/a LABEL=a\057b'

# usage errors: exit 2, before the flaztab is read
check activate-usage-none 2 err 'activate needs exactly one of --all, --device DEV, NAME' activate
check activate-usage-two 2 err 'exactly one of' activate --all v1
check activate-usage-unknown 2 err 'unknown option --frob' activate --all --frob
check activate-usage-no-value 2 err 'needs a value' activate --all --flaztab
check activate-usage-wait 2 err 'wait must be from 0 to 600 seconds, not 601' activate --all --wait 601
check activate-usage-name 2 err 'invalid volume name' activate a/b
check deactivate-usage-none 2 err 'deactivate needs exactly one of --all, NAME' deactivate
check deactivate-usage-device 2 err 'deactivate takes no --device' deactivate --device /dev/null
# --device: a device no line names is no error and says nothing
if [ -n "$BHDD" ]; then
	echo "v9 /dev/nohdd /dev/nossd" >"$T/devtab"
	check activate-device-none 0 out '^$' activate --device "$BHDD" --flaztab "$T/devtab"
	[ -s "$T/err" ] && fail activate-device-quiet "stderr: $(head -n1 "$T/err")" || pass activate-device-quiet
else
	skip activate-device-none "losetup does not work on this host"
	skip activate-device-quiet "losetup does not work on this host"
fi
check activate-device-missing 1 err '/dev/nonexistent: No such file' activate --device /dev/nonexistent --flaztab "$FT"
check activate-device-not-blk 1 err "$T/plain is not a block device" activate --device "$T/plain" --flaztab "$FT"

# against the fake device-mapper: a missing HDD fails its line only; a device of the
# line's name that is not its volume is left alone; deactivate of what is not there is fine
if [ -n "$BHDD" ]; then
	printf 'lin %s %s\n' "$BHDD" "$BSSD" >"$T/tab2b"
	FAKE_DM=$T/vols fcheck activate-not-ours 1 err "^flazctl: $T/tab2b:1: a device named lin exists and is not this line's volume: left alone" \
		activate --all --flaztab "$T/tab2b"
	FAKE_DM=$T/vols fcheck deactivate-not-ours 1 err "tab2b:1: a device named lin exists and is not this line's volume: left alone" \
		deactivate --all --flaztab "$T/tab2b"
fi
printf 'nohdd /dev/nohdd /dev/nossd\nlin /dev/a /dev/b\n' >"$T/tab2"
FAKE_DM=$T/vols "$FAKE" activate --all --flaztab "$T/tab2" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -qx "flazctl: $T/tab2:1: nohdd: HDD /dev/nohdd is missing" "$T/err" ||
	! grep -q "^flazctl: $T/tab2:2: lin: HDD /dev/a is missing" "$T/err"; then
	fail fake/activate-missing-hdd "exit $rc, stderr '$(tr '\n' '|' <"$T/err")'"
else
	pass fake/activate-missing-hdd
fi
printf 'gone /dev/nohdd /dev/nossd\n' >"$T/tab3"
FAKE_DM=$T/vols fcheck deactivate-absent 0 out '^$' deactivate --all --flaztab "$T/tab3"
# status shows the device-mapper UUID
printf 'u\t2048\t9999:4 9999:5 0\tmode=normal reads=0\tFLAZ-00112233445566778899aabbccddeeff\n' >"$T/vols-uuid"
FAKE_DM=$T/vols-uuid fcheck status-uuid 0 out '^  uuid +FLAZ-00112233445566778899aabbccddeeff$' status u
FAKE_DM=$T/vols-uuid fcheck status-uuid-json 0 out '^\{"schema":2,"name":"u","uuid":"FLAZ-00112233445566778899aabbccddeeff",' status u --json
FAKE_DM=$T/vols fcheck status-no-uuid-json 0 out '^\{"schema":2,"name":"fast","uuid":null,' status fast --json

# --- the activation units and the udev rule: systemd-analyze verify, and udevadm test
# (systemd 252, Debian 12, has no `udevadm verify`: the rule is put in /run/udev/rules.d
# for a moment and run against a loop device's add event, which parses every rule)
if ! command -v systemd-analyze >/dev/null; then
	fail systemd-verify-activate "systemd-analyze is missing (apt install systemd)"
else
	for u in flaz-activate.service flaz-activate-device@.service; do
		sed "s|/usr/local/sbin/flazctl|$T/bin/flazctl|" "$REPO/tools/systemd/$u" >"$UNITS/$u"
	done
	# verify instantiates a template itself (as @i); it refuses a file named as an
	# instance with a ':' ("Couldn't process aliases"), so the template it is
	if command -v man >/dev/null; then man_opt=; else man_opt=--man=no; fi
	if MANPATH=$T/man systemd-analyze verify $man_opt "$UNITS/flaz-activate.service" \
		"$UNITS/flaz-activate-device@.service" >"$T/verify" 2>&1 && ! [ -s "$T/verify" ]; then
		pass systemd-verify-activate
	else
		fail systemd-verify-activate "$(head -n2 "$T/verify" | tr '\n' ' ')"
	fi
fi
act=$REPO/tools/systemd/flaz-activate.service
grep -qx 'ExecStart=-/usr/local/sbin/flazctl activate --all --wait 10' "$act" &&
	grep -qx 'ExecStop=-/usr/local/sbin/flazctl deactivate --all' "$act" &&
	grep -qx 'RemainAfterExit=yes' "$act" && grep -qx 'DefaultDependencies=no' "$act" &&
	grep -q '^Before=local-fs-pre.target' "$act" && grep -qx 'WantedBy=local-fs-pre.target' "$act" &&
	pass systemd-activate-never-fails ||
	fail systemd-activate-never-fails "flaz-activate.service lacks a '-' ExecStart/ExecStop, RemainAfterExit, or its place before local-fs-pre.target"
RULE=$REPO/tools/udev/60-flaz.rules
loopdev=$(ls -d /sys/class/block/loop0 2>/dev/null)
if ! udevadm test --help >/dev/null 2>&1; then
	fail udev-rule "udevadm is missing (apt install udev)"
elif [ -z "$loopdev" ]; then
	fail udev-rule "no /sys/class/block/loop0 to run the rule against"
else
	made_dir=
	[ -d /run/udev ] || made_dir=1
	mkdir -p /run/udev/rules.d
	tmp_rule=/run/udev/rules.d/60-flaz-host-test-$$.rules
	cp "$RULE" "$tmp_rule"
	timeout 60 udevadm test --action=add "$loopdev" >"$T/udev" 2>&1
	rm -f "$tmp_rule"
	# udevadm test leaves its database under /run/udev: gone if it was not there before
	[ -n "$made_dir" ] && rm -rf /run/udev
	mm=$(cat "$loopdev/dev")
	if grep -q "60-flaz-host-test-$$.rules:[0-9]" "$T/udev"; then
		fail udev-rule "$(grep "60-flaz-host-test-$$.rules:[0-9]" "$T/udev" | head -n1)"
	elif ! grep -q "^SYSTEMD_WANTS=.*flaz-activate-device@$mm.service" "$T/udev"; then
		fail udev-rule "udevadm test shows no SYSTEMD_WANTS=flaz-activate-device@$mm.service: $(tail -n2 "$T/udev" | tr '\n' ' ')"
	else
		pass udev-rule
	fi
fi

# --- the docs agree with --help: every command and every option of every command's --help
# is in the README's flazctl section and in the man page
readme_ctl=$(sed -n '/^## flazctl/,/^## Where the rest lives/p' "$REPO/README.md")
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

# one exit-status table: the codes of flazctl.h's enum are the man page's EXIT STATUS entries
codes=$(grep -oE '^[[:space:]]*EXIT_[A-Z]+ = [0-9]+' "$REPO/tools/flazctl/flazctl.h" | awk '{print $3}' | sort -n | tr '\n' ' ')
man_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$REPO/tools/flazctl/flazctl.8" | grep -A1 '^\.TP' |
	sed -n 's/^\.B \([0-9]*\)$/\1/p' | sort -n | tr '\n' ' ')
[ -n "$codes" ] && [ "$codes" = "$man_codes" ] && pass docs/exit-codes ||
	fail docs/exit-codes "flazctl.h's exit codes '$codes', the man page's EXIT STATUS '$man_codes'"
# the flaztab options the man page lists are create's long options, every one of them (the
# bare words cold, noauto and defaults apart)
flaz_opts=$("$BIN" create --help | sed -n 's/^  --\([a-z][a-z-]*\).*/\1/p' | grep -vxE 'cold|force' | sort)
man_opts=$(sed -n '/^\.IB key = value$/,/^\.B cold$/p' <<<"$man_text" |
	sed -n 's/^\.\(RB\|BR\) (\{0,1\} *\([a-z][a-z-]*\).*/\2/p' | sort)
if [ -z "$flaz_opts" ] || [ -z "$man_opts" ]; then
	fail docs/flaztab-options "no options found: create --help '$flaz_opts', man page '$man_opts'"
elif [ "$man_opts" != "$flaz_opts" ]; then
	fail docs/flaztab-options "the man page's flaztab options differ from create's: $(diff <(echo "$man_opts") <(echo "$flaz_opts") | grep '^[<>]' | tr '\n' ' ')"
else
	pass docs/flaztab-options
fi
# the example flaztab's key=value words, but for its example volume lines, are the defaults
# create --help shows
"$BIN" create --help >"$T/create-help"
if python3 - "$T/create-help" "$REPO/tools/flazctl/flaztab.example" 2>"$T/py.err" <<'EOF'
import re, sys
defaults, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^  --([a-z][a-z-]*)', line)
    if m:
        cur = m.group(1)
    elif not line.startswith('   '):
        cur = None
    d = re.search(r'\(([^()]*)\)\s*$', line)
    if cur and d:
        defaults[cur] = d.group(1)
assert len(defaults) >= 13, 'defaults in create --help: %s' % defaults
seen = {}
for line in open(sys.argv[2]):
    if not line.startswith('#'):
        continue
    # an example volume line: NAME HDD SSD [OPTIONS], commented out
    if re.match(r'^#\s*[A-Za-z0-9._+:@-]+\s+(/|UUID=|PARTUUID=|LABEL=|PARTLABEL=)\S*\s+\S', line):
        continue
    for k, v in re.findall(r'\b([a-z][a-z-]*)=([A-Za-z0-9]+)', line):
        if k in defaults:
            seen[k] = v
            assert v == defaults[k], '%s=%s, but the default is %s' % (k, v, defaults[k])
missing = sorted(set(defaults) - set(seen))
assert not missing, 'not shown: ' + ' '.join(missing)
EOF
then
	pass docs/flaztab-example-defaults
else
	fail docs/flaztab-example-defaults "$(tail -n1 "$T/py.err")"
fi

# --- tests/checkpatch.sh checks the tracked module sources only: not the dm-flaz.mod.c a
# module build leaves (nor any other untracked file); outside a git checkout, every *.[ch]
# but *.mod.c. Run in a copy of the layout, with a stub for checkpatch.pl.
CPR=$T/cprepo
mkdir -p "$CPR/tests" "$CPR/drivers/md/dm-flaz"
cp "$REPO/tests/checkpatch.sh" "$CPR/tests/"
printf '#!/bin/sh\nexit 0\n' >"$T/checkpatch-stub"
chmod +x "$T/checkpatch-stub"
for f in a.c b.h dm-flaz.mod.c; do echo '/* x */' >"$CPR/drivers/md/dm-flaz/$f"; done
# checkpatch_files: the files tests/checkpatch.sh checked in the copy, one line
checkpatch_files() {
	CHECKPATCH=$T/checkpatch-stub FLAZ_CACHE=$T/cpcache timeout 600 "$CPR/tests/checkpatch.sh" 2>/dev/null |
		sed -n 's|^[A-Z]* style/checkpatch/drivers/md/dm-flaz/\([^:]*\).*|\1|p' | sort | tr '\n' ' '
}
if git -C "$CPR" init -q 2>/dev/null && git -C "$CPR" add drivers/md/dm-flaz/a.c drivers/md/dm-flaz/b.h; then
	echo '/* untracked */' >"$CPR/drivers/md/dm-flaz/new.c"
	got=$(checkpatch_files)
	[ "$got" = "a.c b.h " ] && pass checkpatch-tracked-only ||
		fail checkpatch-tracked-only "checked '$got', want 'a.c b.h ' (the tracked sources)"
	rm -rf "$CPR/.git"
else
	fail checkpatch-tracked-only "cannot make a git repository in $CPR"
fi
got=$(checkpatch_files)
[ "$got" = "a.c b.h new.c " ] && pass checkpatch-no-git ||
	fail checkpatch-no-git "checked '$got', want 'a.c b.h new.c ' (*.[ch] but *.mod.c)"

[ $fails -eq 0 ]

#!/bin/bash
# flazctl on the host, without the flaz module: the command line, userspace validation
# (options, names, devices, SSD size) and the table it would load. Loop devices are
# used when losetup works here; otherwise those checks print SKIP.
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
check help-word 0 out 'flazctl status NAME' help
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
check status-extra-arg 2 err 'usage: flazctl status NAME' status a b
check status-unknown-option 2 err 'unknown option --yaml' status vol --yaml
check status-missing 1 err 'no such device: flazctl-no-such-volume|cannot talk to device-mapper' \
	status flazctl-no-such-volume
check remove-missing 1 err 'no such device: flazctl-no-such-volume|cannot talk to device-mapper' \
	remove flazctl-no-such-volume

[ $fails -eq 0 ]

#!/bin/bash
# replay-log's crash states (tests/qemu/replay-log.c, the replay suite's replayer) on a
# hand-made dm-log-writes log: what a FLUSH made durable is always replayed, a FUA write
# up to the crash point is kept (it made itself durable, and only itself), and the writes
# after the last FLUSH are lost in some states. One PASS/FAIL line a check.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass() { echo "PASS replay-log/$1"; }
failed() { echo "FAIL replay-log/$1: $2"; }

gcc -O2 -Wall -o "$T/replay-log" "$REPO/tests/qemu/replay-log.c" ||
	{ failed build "gcc failed"; exit 1; }

# The log: 512-byte sectors; each entry writes one sector of its own, byte value = its
# index + 1, at sector = its index. Entry flags (dm-log-writes.c): 1 FLUSH, 2 FUA.
#   0 write, 1 FLUSH (empty), 2 write, 3 write FUA, 4 write, 5 write, 6 FLUSH (empty)
python3 - "$T/log" <<'PY'
import struct, sys
FLUSH, FUA = 1, 2
entries = [(0, 0), (None, FLUSH), (2, 0), (3, FUA), (4, 0), (5, 0), (None, FLUSH)]
out = bytearray(struct.pack('<QQQI', 0x6a736677736872, 1, len(entries), 512).ljust(512, b'\0'))
for i, (sector, flags) in enumerate(entries):
    n = 0 if sector is None else 1
    out += struct.pack('<QQQQ', sector or 0, n, flags, 0).ljust(512, b'\0')
    if n:
        out += bytes([i + 1]) * 512
open(sys.argv[1], 'wb').write(out)
PY

# which of sectors 0..5 hold their entry's data after replaying ARGS onto a blank device
state() {
	truncate -s 0 "$T/dev" && truncate -s 4096 "$T/dev"
	"$T/replay-log" --log "$T/log" --replay "$T/dev" "$@" >/dev/null || return 1
	python3 -c 'import sys; d = open(sys.argv[1], "rb").read()
print("".join("1" if d[s * 512] == s + 1 else "0" for s in range(6)))' "$T/dev"
}

got=$("$T/replay-log" --log "$T/log" --list-flush | tr '\n' ' ')
[ "$got" = "1 3 6 " ] && pass list-flush || failed list-flush "points '$got', want '1 3 6 '"
got=$("$T/replay-log" --log "$T/log" --list-preflush | tr '\n' ' ')
[ "$got" = "1 6 " ] && pass list-preflush || failed list-preflush "flushes '$got', want '1 6 '"

# A crash after the FUA write (entry 3): the target holds 0..1 (the last FLUSH), then
# entries 2..5 as a subset with the crash after 3. Over many seeds: entry 3 is always
# there, 2 (before the FUA, never flushed) is missing in some states, and 4 and 5 too.
seen2=0 miss2=0 miss3=0 miss4=0 bad=
for seed in $(seq 1 64); do
	s=$(state --start 2 --end 5 --subset "$seed" --point 3) || { bad="seed $seed failed"; break; }
	[ "${s:0:1}" = 0 ] && [ "${s:1:1}" = 0 ] || { bad="seed $seed wrote sectors 0-1: $s"; break; }
	case ${s:2:1} in 0) miss2=$((miss2 + 1)) ;; *) seen2=$((seen2 + 1)) ;; esac
	[ "${s:3:1}" = 1 ] || miss3=$((miss3 + 1))
	[ "${s:4:1}" = 1 ] || miss4=$((miss4 + 1))
done
if [ -n "$bad" ]; then
	failed fua-point "$bad"
else
	[ $miss3 = 0 ] && pass fua-kept || failed fua-kept "the FUA write (entry 3) was lost in $miss3 of 64 states"
	[ $miss2 -gt 0 ] && [ $seen2 -gt 0 ] && pass before-fua-volatile ||
		failed before-fua-volatile "entry 2 (before the FUA, no FLUSH since) lost in $miss2 of 64 states, want some but not all"
	[ $miss4 -gt 0 ] && pass after-point-volatile ||
		failed after-point-volatile "entry 4 (after the crash point) never lost in 64 states"
fi

# Without --subset every entry in the range is replayed (sector 1: the empty FLUSH's
# index, written by none); --point needs --subset.
s=$(state --start 0 --end 6)
[ "$s" = 101111 ] && pass replay-all || failed replay-all "state $s, want 101111"
if "$T/replay-log" --log "$T/log" --replay "$T/dev" --end 5 --point 3 2>/dev/null; then
	failed point-needs-subset "--point without --subset was accepted"
else
	pass point-needs-subset
fi

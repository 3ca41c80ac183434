#!/bin/bash
# make bench: boot Debian's 6.12 kernel in QEMU and compare flaz, dm-cache and no cache on
# the same emulated devices (the guest side is guest/bench.sh). Prints figures, never
# pass/fail: the machine is shared, so compare the ratios, not the absolute numbers.
set -uo pipefail
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
RUN=$FLAZ_CACHE/qemu/$KVER/bench

echo "== Building the module, flazctl and the initramfs for $KVER"
initrd=$(initramfs_for "$KVER") || exit 1
mkdir -p "$RUN"
make_disks "$RUN"
echo "== Benchmark in QEMU (TCG, 2 CPUs); console in $RUN/console.log"
boot_vm "$KVER" "$initrd" "$RUN" bench stdio | tr -d '\r' | tee "$RUN/console.log" |
	sed -u -n 's/^:://p'
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 33 ]; then
	echo "bench FAILED (qemu exited $rc); the console's end ($RUN/console.log):" >&2
	grep -v '^::' "$RUN/console.log" | tail -n 20 >&2
	exit 1
fi

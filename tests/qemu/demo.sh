#!/bin/bash
# make demo: boot Debian's 6.12 kernel in QEMU and show a flaz volume at work (the guest
# side is guest/demo.sh). Builds the module, flazctl and the initramfs if missing; shows
# the guest's own lines and hides kernel noise; the full console is kept in the run dir.
# Exits non-zero if any step fails.
set -uo pipefail
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
RUN=$FLAZ_CACHE/qemu/$KVER/demo

echo "== Building the module, flazctl and the initramfs for $KVER"
initrd=$(initramfs_for "$KVER") || exit 1
mkdir -p "$RUN"
make_disks "$RUN"
echo "== Booting Debian's $KVER in QEMU (TCG, 2 CPUs); disks in $RUN"
boot_vm "$KVER" "$initrd" "$RUN" demo stdio | tr -d '\r' | tee "$RUN/console.log" |
	sed -u -n 's/^:://p'
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 33 ]; then
	echo "demo FAILED (qemu exited $rc); the console's end ($RUN/console.log):" >&2
	grep -v '^::' "$RUN/console.log" | tail -n 20 >&2
	exit 1
fi
echo "== Demo completed"

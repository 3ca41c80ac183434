#!/bin/bash
# make bench: boot Debian's 6.12 kernel in QEMU and compare flaz, dm-cache and no cache on
# the same emulated devices (the guest side is guest/bench.sh). Prints figures, never
# pass/fail: the machine is shared, so compare the ratios, not the absolute numbers.
set -uo pipefail
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
show_suite "$KVER" bench "Benchmark"

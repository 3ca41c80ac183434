#!/bin/bash
# make bench: boot Debian's 6.12 kernel in QEMU and compare flaz, dm-cache and no cache on
# the same emulated devices (the guest side is guest/bench.sh). Prints figures, never
# pass/fail: the machine is shared, so compare the ratios, not the absolute numbers.
set -uo pipefail
# ten rows of 30 s each plus boot and fill: about 6 min under TCG, so more than the suites' 600 s
export FLAZ_QEMU_TIMEOUT=${FLAZ_QEMU_TIMEOUT:-1200}
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
show_suite "$KVER" bench "Benchmark"

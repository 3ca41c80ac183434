#!/bin/bash
# make demo: boot Debian's 6.12 kernel in QEMU and show a flaz volume at work (the guest
# side is guest/demo.sh), hiding kernel noise. Exits non-zero if any step fails.
set -uo pipefail
KVER=$("$(dirname "$0")/../lib/kvers.sh" 6.12) || exit 1
. "$(dirname "$0")/lib.sh"
show_suite "$KVER" demo "Booting Debian's $KVER" && echo "== Demo completed"

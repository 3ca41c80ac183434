#!/bin/bash
# Print the kernel release of a Debian kernel series the tests boot:
#   6.1     Debian 12's linux-image-amd64          (installed by tests/setup.sh)
#   6.12    Debian 12's linux-image-6.12-amd64     (installed by tests/setup.sh)
#   6.12-rt Debian 12's linux-image-6.12-rt-amd64, PREEMPT_RT (installed by tests/setup.sh)
#   7       the newest linux-image-7.*-amd64 in Debian 13's backports now (tests/lib/trixie.sh;
#           unpacked, never installed on this host)
# usage: kvers.sh 6.1|6.12|6.12-rt|7   (the host runs another kernel, so never use uname -r)
set -euo pipefail
case "${1:?usage: kvers.sh 6.1|6.12|6.12-rt|7}" in
6.12) pkg=linux-image-6.12-amd64 ;;
6.12-rt) pkg=linux-image-6.12-rt-amd64 ;;
6.1) pkg=linux-image-amd64 ;;
7) exec "$(dirname "$0")/trixie.sh" kver ;;
*) echo "kvers.sh: unknown kernel series '$1' (want 6.1, 6.12, 6.12-rt or 7)" >&2; exit 2 ;;
esac
dep=$(dpkg-query -W -f '${Depends}' "$pkg" 2>/dev/null | grep -o 'linux-image-[0-9][^ ,]*' | head -n1) || true
[ -n "$dep" ] || { echo "kvers.sh: $pkg is not installed (run tests/setup.sh)" >&2; exit 1; }
echo "${dep#linux-image-}"

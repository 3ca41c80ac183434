#!/bin/bash
# Print the kernel release that a Debian kernel meta/image package installs.
# usage: kvers.sh 6.12|6.1   (the host runs another kernel, so never use uname -r)
set -euo pipefail
case "${1:?usage: kvers.sh 6.12|6.1}" in
6.12) pkg=linux-image-6.12-amd64 ;;
6.1) pkg=linux-image-amd64 ;;
*) echo "kvers.sh: unknown kernel series '$1' (want 6.12 or 6.1)" >&2; exit 2 ;;
esac
dep=$(dpkg-query -W -f '${Depends}' "$pkg" 2>/dev/null | grep -o 'linux-image-[0-9][^ ,]*' | head -n1) || true
[ -n "$dep" ] || { echo "kvers.sh: $pkg is not installed (run tests/setup.sh)" >&2; exit 1; }
echo "${dep#linux-image-}"

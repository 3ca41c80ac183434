#!/bin/bash
# Build (or reuse) a UML kernel: Debian's linux-source-6.12 with the AMX FP-size patch,
# `make ARCH=um defconfig` + uml-e2e.config, + uml-debug.config for the test kernel (the
# default), which also has make upstream's series applied and dm-flaz built in tree
# (intree.sh; run.sh syncs the series to the sources of the day and rebuilds);
# `build.sh bench` leaves the sanitizers and the series out, so its figures are the code's own.
# Cached under $FLAZ_KCACHE/uml/kernel/<key> (bench-<key> for the bench kernel; default
# /var/cache/dm-flaz, outside the clone, so a fresh clone on a warm machine reuses it), the
# key hashing the source package version, the patch and the fragments: changing any of them
# rebuilds, an unchanged rerun takes a second.
# Prints the build directory (for `make -C <dir> ARCH=um M=...`); progress goes to stderr.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
KCACHE=${FLAZ_KCACHE:-/var/cache/dm-flaz}
mkdir -p "$KCACHE" 2>/dev/null && [ -w "$KCACHE" ] || KCACHE=${FLAZ_CACHE:-$REPO/.cache}
KERNELS=$KCACHE/uml/kernel
TARBALL=/usr/src/linux-source-6.12.tar.xz
INPUTS=("$HERE/0001-um-x86-fp-size-for-amx-hosts.patch" "$HERE/uml-e2e.config" "$HERE/uml-debug.config")
VARIANT=
if [ "${1:-}" = bench ]; then
	INPUTS=("${INPUTS[@]:0:2}")
	VARIANT=bench-
fi
FRAGMENTS=("${INPUTS[@]:1}")
# the test kernel's key: also the series' Kconfig, what configure needs of it (its
# sources are synced every run)
[ -z "$VARIANT" ] && INPUTS+=("$REPO/tools/upstream/Kconfig" "$REPO/tools/upstream/Kconfig.test")

ver=$(dpkg-query -W -f '${Version}' linux-source-6.12)
key=$VARIANT$( (echo "$ver"; sha256sum "${INPUTS[@]}" | cut -d' ' -f1) | sha256sum | cut -c1-16)
K=$KERNELS/$key
S=$K/linux-source-6.12
B=$K/build

kmake() { make -s -C "$S" ARCH=um O="$B" "$@"; }

extract() {
	echo "uml: extracting linux-source $ver into $K" >&2
	rm -rf "$K"
	mkdir -p "$K"
	tar -C "$K" -xf "$TARBALL"
	patch -s -d "$S" -p1 <"${INPUTS[0]}"
	touch "$K/.extracted"
}

configure() {
	echo "uml: configuring" >&2
	rm -f "$B/.config"
	# The fragments override defconfig on purpose: keep kconfig's warnings about it in a log.
	if ! { kmake defconfig && cat "${FRAGMENTS[@]}" >>"$B/.config" && kmake olddefconfig; } \
		>"$K/config.log" 2>&1; then
		tail -20 "$K/config.log" >&2
		return 1
	fi
	local line missing=0
	# olddefconfig silently drops what it cannot satisfy: every requested option must survive.
	while read -r line; do
		grep -qx "$line" "$B/.config" || { echo "uml: config option not applied: $line" >&2; missing=1; }
	done < <(grep -h '^CONFIG_' "${FRAGMENTS[@]}")
	return $missing
}

compile() {
	echo "uml: building the kernel with -j$(nproc) (~5 min on 2 cores), log in $K/build.log" >&2
	# The test kernel alone: its only modules are dm-flaz's, which intree.sh builds (a
	# source that does not compile is then the module's failure, not the kernel's). The
	# bench kernel whole: out-of-tree modules need the Module.symvers that `all` writes.
	local goal=linux
	[ -n "$VARIANT" ] && goal=all
	if ! kmake -j"$(nproc)" $goal >"$K/build.log" 2>&1; then
		tail -40 "$K/build.log" >&2
		return 1
	fi
	test -x "$B/linux"
}

if [ ! -f "$K/.done" ]; then
	# Each kernel is ~2 GB with its source tree: keep only the current one of each kind.
	if [ -n "$VARIANT" ]; then
		find "$KERNELS" -mindepth 1 -maxdepth 1 -name "$VARIANT*" ! -name "$key" \
			-exec rm -rf {} + 2>/dev/null || true
	else
		find "$KERNELS" -mindepth 1 -maxdepth 1 ! -name "bench-*" ! -name "$key" \
			-exec rm -rf {} + 2>/dev/null || true
	fi
	[ -f "$K/.extracted" ] || extract
	if [ -z "$VARIANT" ] && ! "$HERE/intree.sh" sync "$K" >&2; then
		echo "uml: make upstream's series could not be made or applied to the tree" >&2
		exit 1
	fi
	configure
	compile
	touch "$K/.done"
fi
echo "$B"

#!/bin/bash
# make test: every suite, one PASS/FAIL line per test, then "N passed, N failed".
# Suites print only PASS/FAIL lines on stdout; their diagnostics go to
# $FLAZ_CACHE/logs/<suite>.log. A suite that dies without saying why counts as a failure.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
export FLAZ_CACHE=${FLAZ_CACHE:-$REPO/.cache}
LOGS=$FLAZ_CACHE/logs
RESULTS=$LOGS/results.txt
SERIES=(6.12 6.1)
TIMES=
cd "$REPO"
mkdir -p "$LOGS"
: >"$RESULTS"

# Run one suite: keep its PASS/FAIL lines, log the rest, and flag a silent failure.
suite() {
	local name=$1 out rc t0=$SECONDS
	shift
	echo "== $name" >&2
	out=$("$@" 2>"$LOGS/$name.log")
	rc=$?
	out=$(grep -E '^(PASS|FAIL) ' <<<"$out")
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
		out+=$'\n'"FAIL $name: exited $rc without naming a failure (see $LOGS/$name.log)"
	elif [ -z "$out" ]; then
		out="FAIL $name: ran no test (see $LOGS/$name.log)"
	fi
	sed '/^$/d' <<<"$out" | tee -a "$RESULTS"
	echo "   ($name: $((SECONDS - t0)) s)" >&2
	TIMES+="$name $((SECONDS - t0)) s, "
}

# Module for each Debian kernel: must build with zero warnings.
build_modules() {
	local series kver ko
	for series in "${SERIES[@]}"; do
		if ! kver=$(tests/lib/kvers.sh "$series"); then
			echo "FAIL build/$series/module: kernel $series not installed"
			continue
		fi
		if ! ko=$(tests/lib/build-module.sh "$kver"); then
			echo "FAIL build/$series/module: build failed (see $FLAZ_CACHE/build/$kver/build.log)"
		elif grep -i 'warning' "$FLAZ_CACHE/build/$kver/build.log" >&2; then
			echo "FAIL build/$series/module: compiler warnings"
		else
			echo "PASS build/$series/module"
			echo "built $ko" >&2
		fi
	done
}

build_flazctl() {
	if make -s -C tools/flazctl >&2; then
		echo "PASS build/flazctl"
	else
		echo "FAIL build/flazctl: build failed"
	fi
}

echo "== setup" >&2
if ! tests/setup.sh >&2; then
	echo "FAIL setup: could not install the packages the tests need" | tee -a "$RESULTS"
else
	suite build build_modules
	suite build-flazctl build_flazctl
	suite host tests/host/test_flazctl.sh tools/flazctl/flazctl
	suite host-check tests/host/test_check.sh tools/flazctl/flazctl
	suite readme tests/host/test_readme.sh tools/flazctl/flazctl
	suite dkms tests/dkms.sh "${SERIES[@]}"
	suite checkpatch tests/checkpatch.sh
	suite uml tests/uml/run.sh
	for series in "${SERIES[@]}"; do
		suite "qemu-$series" tests/qemu/run.sh "$(tests/lib/kvers.sh "$series")"
		suite "crash-$series" tests/qemu/crash.sh "$(tests/lib/kvers.sh "$series")"
		suite "replay-$series" tests/qemu/run.sh "$(tests/lib/kvers.sh "$series")" replay
	done
fi

echo "suite times: ${TIMES%, } (total $SECONDS s)"
passed=$(grep -c '^PASS ' "$RESULTS")
failed=$(grep -c '^FAIL ' "$RESULTS")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

#!/bin/bash
# The UML suite: build (or reuse) the KASAN/lockdep/kmemleak UML kernel, build dm-flaz
# against it, boot it with init.sh as PID 1, and turn what init.sh saved into PASS/FAIL
# lines on stdout: one per KUnit case, one per e2e check, one for the boot and one for a
# console free of kernel splats; a KUnit case (or suite) that KUnit skipped ("ok N name #
# SKIP why") is a "SKIP name: why" line, not a pass. Diagnostics go to stderr. Exits 0 iff nothing failed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export FLAZ_CACHE=${FLAZ_CACHE:-$REPO/.cache}
UML=$FLAZ_CACHE/uml
# the in-tree build's modules, series and log (intree.sh)
MOD=$FLAZ_CACHE/build/uml-6.12
RUN=$UML/run
TIMEOUT=${FLAZ_UML_TIMEOUT:-600} # seconds for the boot and every test in it
SPLATS='BUG:|WARNING:|Kernel panic|KASAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|unreferenced object|Call Trace'
FAILED=0

result() { # result PASS|FAIL NAME [WHY]
	emit "$1 $2${3:+: $3}"
}
emit() { # emit LINE: a whole PASS/FAIL/SKIP line, from a KTAP parse or init.sh
	[[ $1 == FAIL* ]] && FAILED=1
	echo "$1"
}
oneline() { tr -s '\n\t ' ' ' | cut -c1-"${1:-1500}"; }

# in tree, from make upstream's series (intree.sh): its PASS/FAIL lines, the series
# included; the modules land in $MOD
build_module() {
	local line ok=0
	while IFS= read -r line; do
		emit "$line"
		[ "$line" = "PASS uml/module-build" ] && ok=1
	done < <("$HERE/intree.sh" build "$(dirname "$1")" "$MOD")
	[ $ok = 1 ]
}

boot() {
	local b=$1 rc t0=$SECONDS
	rm -rf "$RUN"
	mkdir -p "$RUN/home" "$RUN/ktap"
	truncate -s 256M "$RUN/hdd.img"
	truncate -s 64M "$RUN/ssd.img"
	echo "uml: booting, console in $RUN/console.log" >&2
	# UML keeps its RAM in a file under TMPDIR; unknown name=value words of the kernel
	# command line reach init as environment variables.
	HOME=$RUN/home TMPDIR=/dev/shm timeout --kill-after=10 "$TIMEOUT" "$b/linux" mem=1G \
		ubd0="$RUN/hdd.img" ubd1="$RUN/ssd.img" root=/dev/root rootfstype=hostfs rootflags=/ \
		rw init="$HERE/init.sh" con=null con0=null,fd:1 \
		FLAZ_RUN="$RUN" FLAZ_KO="$MOD/drivers/md/dm-flaz/dm-flaz.ko" \
		FLAZ_TEST_KO="$MOD/drivers/md/dm-flaz/dm-flaz-test.ko" </dev/null >"$RUN/console.log" 2>&1
	rc=$?
	echo "uml: exited $rc after $((SECONDS - t0)) s" >&2
	[ -f "$RUN/done" ] && { result PASS uml/boot; return; }
	local c=$RUN/console.log how last panic
	how="UML exited $rc"
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && how="timed out after $TIMEOUT s"
	last=$(grep '^== ' "$c" | tail -1)
	panic=$(grep -m1 'Kernel panic' "$c")
	result FAIL uml/boot "$how during ${last:-== boot}${panic:+ ($panic)}; console tail: $(tail -12 "$c" | oneline 1000)"
}

# One line per test case of a suite's KTAP (cases are the lines indented one level, 4
# spaces, under the suite); a failure carries the diagnostic lines logged before it, a
# skipped case (or a whole suite skipped) the reason KUnit gives.
parse_ktap() {
	awk -v s="$1" '
		{ line = $0; sub(/^[ \t]+/, "", line); indent = length($0) - length(line) }
		indent == 4 && line ~ /^1\.\.[0-9]+$/ { planned = substr(line, 4) + 0; next }
		line ~ /^(KTAP version|# Subtest:|1\.\.)/ { next }
		indent == 4 && match(line, /^(not )?ok [0-9]+ /) {
			name = substr(line, RLENGTH + 1); sub(/ # .*/, "", name); cases++
			if (line ~ /^not ok/) print "FAIL uml/kunit/" s "/" name ": " substr(diag, 1, 1500)
			else if (line ~ / # SKIP/) { why = line; sub(/.* # SKIP */, "", why); print "SKIP uml/kunit/" s "/" name ": " (why == "" ? "skipped" : why) }
			else print "PASS uml/kunit/" s "/" name
			diag = ""; next
		}
		indent == 0 && line ~ /^not ok / { suite_failed = 1; next }
		indent == 0 && line ~ /^ok .* # SKIP/ { suite_skip = line; sub(/.* # SKIP */, "", suite_skip); if (suite_skip == "") suite_skip = "skipped"; next }
		indent > 0 { diag = diag (diag == "" ? "" : " | ") line }
		END {
			if (cases < planned)
				print "FAIL uml/kunit/" s ": " cases " of " planned " cases reported (crashed?)"
			else if (!cases && suite_failed)
				print "FAIL uml/kunit/" s ": " substr(diag, 1, 1500)
			else if (!cases && suite_skip != "")
				print "SKIP uml/kunit/" s ": " suite_skip
		}' "$RUN/ktap/$1.ktap"
}

# Every suite named in the test module's *_test.c files must have reported.
kunit_results() {
	local expected suite line
	expected=$(sed -n '/struct kunit_suite/,/};/ s/.*\.name *= *"\([^"]*\)".*/\1/p' \
		"$REPO"/drivers/md/dm-flaz/*_test.c 2>/dev/null)
	ls "$RUN"/ktap/*.ktap >/dev/null 2>&1 || result FAIL uml/kunit "no results"
	for suite in $( (echo "$expected"; find "$RUN/ktap" -name '*.ktap' -printf '%f\n' | sed 's/\.ktap$//') | sort -u); do
		if [ -s "$RUN/ktap/$suite.ktap" ]; then
			while read -r line; do emit "$line"; done < <(parse_ktap "$suite")
		else
			result FAIL "uml/kunit/$suite" "no results"
		fi
	done
}

e2e_results() {
	local line
	[ -f "$RUN/e2e.txt" ] || return 0
	while read -r line; do emit "$line"; done <"$RUN/e2e.txt"
	if [ -s "$RUN/kmemleak.txt" ]; then
		echo "uml: kmemleak report:" >&2
		cat "$RUN/kmemleak.txt" >&2
	fi
}

console_clean() {
	local c=$RUN/console.log
	if grep -E -q "$SPLATS" "$c"; then
		echo "uml: kernel splats on the console:" >&2
		grep -E -B2 -A25 "$SPLATS" "$c" | head -300 >&2
		result FAIL uml/console-clean "$(grep -E -m1 -A12 "$SPLATS" "$c" | oneline)"
	else
		result PASS uml/console-clean
	fi
}

mkdir -p "$UML"
B=$("$HERE/build.sh" 2>"$UML/kernel-build.err")
rc=$?
cat "$UML/kernel-build.err" >&2
if [ $rc -ne 0 ]; then
	result FAIL uml/kernel-build "$(tail -5 "$UML/kernel-build.err" | oneline)"
	exit 1
fi
result PASS uml/kernel-build
build_module "$B" || exit 1
boot "$B"
kunit_results
e2e_results
console_clean
exit $FAILED

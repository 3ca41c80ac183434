#!/bin/bash
# Mutation check: apply each deliberate bug of tests/mutate/mutants.txt to a scratch copy
# of the tree, one at a time, run the test it names there, and report whether the test
# caught it (KILLED) or not (SURVIVED); a mutant that names several tests is killed only
# when each of them catches it. Slow (each uml or e2e mutant boots a kernel), so
# not part of make test: run it once per change to the core, and add a mutant for every
# bug found. usage: tests/mutate.sh [NAME...]   (default: every mutant)
# Exits 1 if a mutant survived or could not be applied.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
export FLAZ_CACHE=${FLAZ_CACHE:-$REPO/.cache}
WORK=$FLAZ_CACHE/mutate
mkdir -p "$WORK"
# the cache's path in the tree, if it is in it (else a name no file has)
CACHE_IN_TREE=$(realpath --relative-to="$REPO" "$FLAZ_CACHE")

# The mutants as NAME<TAB>FILE<TAB>TEST lines; apply NAME DIR patches DIR's copy.
list() { python3 "$REPO/tests/mutate/mutants.py" list "$REPO/tests/mutate/mutants.txt"; }
apply() { python3 "$REPO/tests/mutate/mutants.py" apply "$REPO/tests/mutate/mutants.txt" "$1" "$2"; }

run_test() { # run_test DIR TEST: 0 when the test passed (the mutant survived)
	local dir=$1 test=$2 kver
	case $test in
	model) FLAZ_MODEL_STEPS=${FLAZ_MODEL_STEPS:-1000000} "$dir/tests/host/test_model.sh" ;;
	uml) "$dir/tests/uml/run.sh" ;;
	e2e:*) kver=$("$REPO/tests/lib/kvers.sh" 6.12) &&
		FLAZ_ONLY=${test#e2e:} "$dir/tests/qemu/run.sh" "$kver" ;;
	crash | replay) kver=$("$REPO/tests/lib/kvers.sh" 6.12) &&
		if [ "$test" = crash ]; then "$dir/tests/qemu/crash.sh" "$kver"; else
			"$dir/tests/qemu/run.sh" "$kver" replay; fi ;;
	*) echo "unknown test $test" >&2; return 2 ;;
	esac
}

survived=0 killed=0 broken=0
while IFS=$'\t' read -r name file test; do
	[ $# -eq 0 ] || [[ " $* " == *" $name "* ]] || continue
	dir=$WORK/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	# the tree's files (tracked, and new ones not ignored), as they are in the working tree;
	# never the cache: one inside the tree that .gitignore misses would put every earlier
	# mutant's copy into each new one (a run of them filled a disk so)
	(cd "$REPO" && git ls-files -z --cached --others --exclude-standard --exclude="/$CACHE_IN_TREE/" |
		xargs -0 cp --parents -t "$dir")
	if ! apply "$name" "$dir"; then
		echo "BROKEN $name: does not apply to $file"
		broken=$((broken + 1))
		continue
	fi
	# every test it names must catch it, the cheap ones named first
	read -ra tests <<<"$test"
	verdict=KILLED why=
	[ ${#tests[@]} -gt 0 ] || verdict=BROKEN why="no test named"
	rm -f "$dir".*.log
	for t in "${tests[@]}"; do
		log=$dir.${t//[:,]/_}.log
		if FLAZ_CACHE=$dir/.cache run_test "$dir" "$t" >"$log" 2>&1; then
			verdict=SURVIVED why=$t
			break
		elif w=$(grep -m1 '^FAIL' "$log") && [[ $w != "FAIL model/build"* ]]; then
			why+="${why:+; }$(cut -c1-200 <<<"${w#FAIL }")"
		else
			# a test that failed without naming a check (or did not build) caught nothing
			verdict=BROKEN why="$t failed to run (see $log)"
			break
		fi
	done
	case $verdict in
	KILLED) echo "KILLED $name by $why"; killed=$((killed + 1)) ;;
	SURVIVED) echo "SURVIVED $name ($why): $file"; survived=$((survived + 1)) ;;
	*) echo "BROKEN $name: $why"; broken=$((broken + 1)) ;;
	esac
done < <(list)
echo "mutants: $killed killed, $survived survived, $broken broken"
[ $survived -eq 0 ] && [ $broken -eq 0 ]

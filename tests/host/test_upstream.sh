#!/bin/bash
# make upstream on the host: resolve.py keeps the branch that holds and nothing
# else, and the series made against Debian's linux-source-6.12 holds one kernel
# (no compat #ifdef, no userspace twin, no bench code), the tests and the rst,
# and applies to that tree's files. (Building the series and checkpatch with the
# tree: the UML suite, uml/upstream/*.) Prints one PASS/FAIL line per check.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
R=$REPO/tools/upstream/resolve.py
fails=0
pass() { echo "PASS host/upstream/$1"; }
fail() { echo "FAIL host/upstream/$1: $2"; fails=$((fails + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# check NAME FLAGS INPUT EXPECTED: resolve.py FLAGS turns INPUT into EXPECTED
check() {
	local got
	got=$(printf '%s' "$3" | python3 "$R" $2 2>&1)
	if [ "$got" = "$4" ]; then
		pass "resolve/$1"
	else
		fail "resolve/$1" "got '$(tr '\n' '|' <<<"$got")', want '$(tr '\n' '|' <<<"$4")'"
	fi
}
IN=$'a\n#ifdef X\nx\n#else\nnot x\n#endif\nb\n'
check ifdef-defined "-D X" "$IN" $'a\nx\nb'
check ifdef-undefined "-U X" "$IN" $'a\nnot x\nb'
check ifndef $'-D X' $'#ifndef X\nno\n#endif\nyes\n' 'yes'
# a conditional on a name not given passes through whole, inside a resolved one too
check other-kept "-D X" $'#ifdef X\n#ifdef Y\ny\n#endif\n#endif\n' $'#ifdef Y\ny\n#endif'
check nested-dropped "-U X" $'#ifdef X\n#if Y\ny\n#else\nz\n#endif\n#endif\nw\n' 'w'
check else-of-other "-D X" $'#if Y\n#ifdef X\nx\n#endif\n#else\nz\n#endif\n' $'#if Y\nx\n#else\nz\n#endif'
if printf '#if defined(X)\nx\n#endif\n' | python3 "$R" -D X >/dev/null 2>&1; then
	fail resolve/other-form "an #if defined() of a name given passed as it is"
else
	pass resolve/other-form
fi
if printf '#ifdef X\nx\n' | python3 "$R" -D X >/dev/null 2>&1; then
	fail resolve/unterminated "an #ifdef without #endif was accepted"
else
	pass resolve/unterminated
fi

if [ ! -f /usr/src/linux-source-6.12.tar.xz ]; then
	echo "SKIP host/upstream/series: no linux-source-6.12"
	exit $((fails > 0))
fi
if ! FLAZ_CACHE=$W/cache "$REPO/tools/upstream/series.sh" "" "$W/series" >"$W/log" 2>&1; then
	fail series "series.sh failed: $(tail -3 "$W/log" | tr '\n' ' ')"
	exit 1
fi
n=$(ls "$W"/series/*.patch | wc -l)
[ "$n" = 4 ] && pass series/count || fail series/count "$n patches, want a cover letter and 3"
# what the out-of-tree build chooses is chosen: no feature test, no userspace, no bench
left=$(grep -hE '^\+\s*#\s*(if|elif).*(FLAZ_HAVE|FLAZ_DM_IO|FLAZ_NS|FLAZ_BENCH|__KERNEL__|BLK_OPEN_READ)' \
	"$W"/series/000[1-3]-*.patch)
[ -z "$left" ] && pass series/resolved || fail series/resolved "left in the series: $left"
grep -q '^+#define flaz_bh_wq() system_bh_wq' "$W"/series/0001-*.patch &&
	pass series/bh-wq || fail series/bh-wq "6.12 has system_bh_wq but the series does not use it"
grep -qE '^\+\+\+ b/drivers/md/dm-flaz/(costs|.*_test|test_mod)\.c$' "$W"/series/0001-*.patch &&
	fail series/split "patch 1 holds test or bench code" || pass series/split
grep -q '^+++ b/drivers/md/dm-flaz/l2p_test.c' "$W"/series/0002-*.patch &&
	grep -q '^+config DM_FLAZ_KUNIT_TEST' "$W"/series/0002-*.patch &&
	pass series/tests || fail series/tests "patch 2 lacks the KUnit tests or their Kconfig"
grep -q '^+++ b/Documentation/admin-guide/device-mapper/dm-flaz.rst' "$W"/series/0003-*.patch &&
	pass series/doc || fail series/doc "patch 3 lacks the rst"
# every source of the module but the bench's is in the series
missing=
for f in "$REPO"/drivers/md/dm-flaz/*.[ch]; do
	b=${f##*/}
	[ "$b" = costs.c ] && continue
	grep -q "^+++ b/drivers/md/dm-flaz/$b\$" "$W"/series/000[12]-*.patch || missing+=" $b"
done
[ -z "$missing" ] && pass series/all-sources || fail series/all-sources "not in the series:$missing"
# it applies to the tree's files it was made from
# as git am takes it, whitespace errors (a blank line at a file's end) included
cp -r "$(ls -d "$W"/cache/upstream/*/linux-source-6.12)" "$W/tree"
if (cd "$W/tree" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base &&
	git -c user.name=t -c user.email=t@t am -q --whitespace=error-all "$W"/series/000[1-3]-*.patch) \
	>"$W/apply" 2>&1; then
	pass series/applies
else
	fail series/applies "$(head -3 "$W/apply" | tr '\n' ' ')"
fi
exit $((fails > 0))

#!/bin/bash
# The README is the front door and docs/ holds the rest: the README keeps the set-up commands,
# the install and uninstall steps and fits in 300 lines; the versions it names agree with
# dkms.conf (the one place the version is set); its uninstall names every file the installs
# put down; every relative link in the README and docs/*.md resolves; every flazctl command
# shown exists. (docs/operations.md's status table: test_status_keys.sh.)
# Usage: tests/host/test_readme.sh [path/to/flazctl]
# Prints one PASS/FAIL line per check; exits non-zero iff any check failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$REPO/tools/flazctl/flazctl}
README=$REPO/README.md
MOD=$REPO/drivers/md/dm-flaz
DOCS=("$README" "$REPO"/docs/*.md)
MAX_LINES=300
fails=0

pass() { echo "PASS host/readme/$1"; }
fail() { echo "FAIL host/readme/$1: $2"; fails=$((fails + 1)); }
rel() { echo "${1#"$REPO"/}"; }

# A newcomer reads the README in two minutes: short, with the commands and the install steps.
n=$(wc -l <"$README")
[ "$n" -le $MAX_LINES ] && pass length ||
	fail length "the README has $n lines, more than $MAX_LINES: move detail to docs/"
for cmd in 'make demo' 'make test' 'make bench' 'sudo make install' 'dkms add' 'dkms install' \
	'make -C tools/flazctl install' 'dkms remove' 'depmod' 'flazctl create' 'flazctl remove' \
	'--cold'; do
	if grep -qF -- "$cmd" "$README"; then
		pass "top-has/${cmd// /-}"
	else
		fail "top-has/${cmd// /-}" "the README no longer shows '$cmd'"
	fi
done
for target in demo test bench install; do
	if grep -q "^$target:" "$REPO/Makefile"; then
		pass "make-target/$target"
	else
		fail "make-target/$target" "the README names 'make $target' but the Makefile has no such target"
	fi
done

# One version: dkms.conf's, everywhere else it is written.
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$REPO/dkms.conf")
bad=$(grep -ohE 'dm-flaz[-/][0-9]+\.[0-9]+\.[0-9]+|-v [0-9]+\.[0-9]+\.[0-9]+' "${DOCS[@]}" |
	grep -vE "(dm-flaz[-/]|-v )$ver\$" | sort -u | tr '\n' ' ')
if [ -z "$ver" ]; then
	fail version/dkms-conf "no PACKAGE_VERSION in dkms.conf"
elif ! grep -q "dm-flaz-$ver" "$README"; then
	fail version/readme "the README's DKMS steps do not use $ver"
elif ! grep -q "dkms remove dm-flaz/$ver" "$README"; then
	fail version/readme "the README's DKMS uninstall does not name dm-flaz/$ver"
elif [ -n "$bad" ]; then
	fail version/readme "the README or docs/ name other versions than dkms.conf's $ver: $bad"
else
	pass version/readme
fi
modver=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$MOD"/*.c)
[ "$modver" = "$ver" ] && pass version/module ||
	fail version/module "MODULE_VERSION is '$modver', dkms.conf says '$ver'"
ctlver=$("$BIN" --version 2>&1)
[ "$ctlver" = "flazctl $ver" ] && pass version/flazctl ||
	fail version/flazctl "flazctl --version says '$ctlver', dkms.conf says '$ver'"
grep -q "dm-flaz $ver" "$REPO/tools/flazctl/flazctl.8" && pass version/man ||
	fail version/man "flazctl.8 does not name dm-flaz $ver"

# The uninstall removes what the installs put down. make install: the module goes to
# /lib/modules/KVER/INSTALL_MOD_DIR/ under its folder in the top Kbuild.
moddir=$(sed -n 's/.*INSTALL_MOD_DIR=\([^ ]*\).*/\1/p' "$REPO/Makefile" | head -n1)
sub=$(sed -n 's|^obj-m *+= *\(.*\)/$|\1|p' "$REPO/Kbuild" | head -n1)
kopath="/lib/modules/\$(uname -r)/$moddir/$sub/dm-flaz.ko"
if [ -z "$moddir" ] || [ -z "$sub" ]; then
	fail uninstall/module "cannot tell where make install puts the module (Makefile INSTALL_MOD_DIR '$moddir', Kbuild folder '$sub')"
elif grep -qF "$kopath" "$README"; then
	pass uninstall/module
else
	fail uninstall/module "the README's uninstall does not remove $kopath"
fi
# make -C tools/flazctl install, into a scratch DESTDIR (flazctl itself not rebuilt)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if ! make -s -C "$REPO/tools/flazctl" -o flazctl install DESTDIR="$T/root" >"$T/log" 2>&1; then
	fail uninstall/flazctl "make -C tools/flazctl install DESTDIR=... failed: $(tail -n2 "$T/log" | tr '\n' ' ')"
else
	missing=
	for f in $(cd "$T/root" && find . -type f | sed 's|^\.||' | sort); do
		grep -qF "$f" "$README" || missing="$missing $f"
	done
	[ -z "$missing" ] && pass uninstall/flazctl ||
		fail uninstall/flazctl "the README's uninstall does not name what make -C tools/flazctl install puts down:$missing"
fi

# Every relative link of the README and docs/ leads to a file that exists, and an #anchor
# to a heading of that file (GitHub's ids: lower case, punctuation dropped, blanks as -).
prose() { awk '/^```/ { inblock = !inblock; next } !inblock' "$1"; }
anchors() { prose "$1" | sed -n 's/^#\{1,6\} \{1,\}//p' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }
nlinks=0
for doc in "${DOCS[@]}"; do
	for link in $(prose "$doc" | sed 's/`[^`]*`//g' | grep -oE '\]\([^) ]+\)' | sed 's/^](//; s/)$//' | sort -u); do
		case $link in [a-z]*:*) continue ;; esac
		nlinks=$((nlinks + 1))
		path=${link%%#*}
		anchor=
		[ "$path" != "$link" ] && anchor=${link#*#}
		if [ -z "$path" ]; then
			target=$doc
		else
			target=$(dirname "$doc")/$path
		fi
		if [ ! -e "$target" ]; then
			fail "link/$(rel "$doc")/$link" "$(rel "$doc") links to $path, which does not exist"
		elif [ -n "$anchor" ] && [[ $target == *.md ]] && ! anchors "$target" | grep -qx -- "$anchor"; then
			fail "link/$(rel "$doc")/$link" "$(rel "$doc") links to #$anchor, which is no heading of $(rel "$(cd "$(dirname "$target")" && pwd)/$(basename "$target")")"
		else
			pass "link/$(rel "$doc")/$link"
		fi
	done
done
[ $nlinks -gt 0 ] || fail links "no relative link found in the README and docs/"

# Every "flazctl WORD" the README and docs/ show is a command flazctl knows.
known=$("$BIN" --help 2>&1 | sed -n 's/^  flazctl \([a-z][a-z-]*\).*/\1/p' | sort -u)
# Commands are lines of code blocks and `code spans` that start with flazctl; prose is not.
shown=$(for doc in "${DOCS[@]}"; do
	awk '/^```/ { inblock = !inblock; next } inblock' "$doc" | grep -oE '^(sudo )?flazctl [a-z][a-z-]*'
	grep -oE '`(sudo )?flazctl [a-z][a-z-]*' "$doc"
done | awk '{print $NF}' | sort -u)
[ -n "$shown" ] || fail flazctl-commands "the README and docs/ show no flazctl command"
for cmd in $shown; do
	if grep -qx "$cmd" <<<"$known"; then
		pass "flazctl-command/$cmd"
	else
		fail "flazctl-command/$cmd" "the README or docs/ show 'flazctl $cmd', which flazctl --help does not list"
	fi
done

# The status table of docs/operations.md against the keys the module emits: test_status_keys.sh.

[ $fails -eq 0 ]

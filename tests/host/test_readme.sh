#!/bin/bash
# The README is the front door: its top keeps the set-up commands and the install steps,
# the versions it names agree with dkms.conf (the one place the version is set), and every
# flazctl command and status key it documents exists.
# Usage: tests/host/test_readme.sh [path/to/flazctl]
# Prints one PASS/FAIL line per check; exits non-zero iff any check failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${1:-$REPO/tools/flazctl/flazctl}
README=$REPO/README.md
MOD=$REPO/drivers/md/dm-flaz
fails=0

pass() { echo "PASS host/readme/$1"; }
fail() { echo "FAIL host/readme/$1: $2"; fails=$((fails + 1)); }

# The part a newcomer reads first: everything before "How it works".
top=$(sed '/^## How it works/q' "$README")
for cmd in 'make demo' 'make test' 'make bench' 'sudo make install' 'dkms add' 'dkms install' \
	'make -C tools/flazctl install'; do
	if grep -qF "$cmd" <<<"$top"; then
		pass "top-has/${cmd// /-}"
	else
		fail "top-has/${cmd// /-}" "the README's top no longer shows '$cmd'"
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
bad=$(grep -oE 'dm-flaz-[0-9]+\.[0-9]+\.[0-9]+|-v [0-9]+\.[0-9]+\.[0-9]+' "$README" |
	grep -vE "(dm-flaz-|-v )$ver\$" | sort -u | tr '\n' ' ')
if [ -z "$ver" ]; then
	fail version/dkms-conf "no PACKAGE_VERSION in dkms.conf"
elif ! grep -q "dm-flaz-$ver" <<<"$top"; then
	fail version/readme "the README's DKMS steps do not use $ver"
elif [ -n "$bad" ]; then
	fail version/readme "the README names other versions than dkms.conf's $ver: $bad"
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

# Every "flazctl WORD" the README shows is a command flazctl knows.
known=$("$BIN" --help 2>&1 | sed -n 's/^  flazctl \([a-z][a-z-]*\).*/\1/p' | sort -u)
# Commands are lines of code blocks and `code spans` that start with flazctl; prose is not.
shown=$( (awk '/^```/ { inblock = !inblock; next } inblock' "$README" |
	grep -oE '^(sudo )?flazctl [a-z][a-z-]*'
	grep -oE '`(sudo )?flazctl [a-z][a-z-]*' "$README") | awk '{print $NF}' | sort -u)
[ -n "$shown" ] || fail flazctl-commands "the README shows no flazctl command"
for cmd in $shown; do
	if grep -qx "$cmd" <<<"$known"; then
		pass "flazctl-command/$cmd"
	else
		fail "flazctl-command/$cmd" "the README shows 'flazctl $cmd', which flazctl --help does not list"
	fi
done

# Every key of the README's status table is one the module emits (stats.c).
keys=$(sed -n '/^## Status/,/^## /p' "$README" | grep '^| `' | cut -d'|' -f2 |
	grep -oE '`[a-z_]+`' | tr -d '`' | sort -u)
[ -n "$keys" ] || fail status-keys "no status table found in the README"
for k in $keys; do
	if grep -qE "\"$k\"|[\" ]$k=" "$MOD/stats.c"; then
		pass "status-key/$k"
	else
		fail "status-key/$k" "the README documents status key '$k', which stats.c does not emit"
	fi
done
[ $fails -eq 0 ]

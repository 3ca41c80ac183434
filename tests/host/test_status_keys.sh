#!/bin/bash
# One source of truth for the status keys: the keys the module emits (stats.c: the counters'
# names table stat_names and the "key=%..." of its DMEMITs) are the keys of flazctl's
# Prometheus metrics (prom.c), of docs/operations.md's status table, of docs/dm-flaz.rst's
# Status section, of the man page's list
# (flazctl.8, after its "the status keys" comment), of flazctl's own list (vol.c, as
# `list -o help` prints it) and of what the bash completion offers after `list -o`. A key
# missing from one of them, or one of them naming a key the module does not emit, fails.
# Usage: tests/host/test_status_keys.sh [path/to/flazctl]
# Prints one PASS/FAIL line per source; exits non-zero iff any check failed.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-$REPO/tools/flazctl/flazctl}")
MOD=$REPO/drivers/md/dm-flaz
CTL=$REPO/tools/flazctl
fails=0

pass() { echo "PASS host/status-keys/$1"; }
fail() { echo "FAIL host/status-keys/$1: $2"; fails=$((fails + 1)); }
words() { tr -s ' ' '\n' | grep -E '^[a-z_]+$' | sort -u; }

emitted=$( (grep -oE '\] = "[a-z_]+"' "$MOD/stats.c" | grep -oE '[a-z_]+'
	grep -oE '[" ][a-z_]+=%' "$MOD/stats.c" | grep -oE '[a-z_]+') | sort -u)
if [ -z "$emitted" ] || ! grep -qx mode <<<"$emitted" || ! grep -qx reads <<<"$emitted"; then
	fail kernel "cannot read the keys stats.c emits (found: $(tr '\n' ' ' <<<"$emitted"))"
	exit 1
fi
pass kernel

# same NAME KEYS: KEYS (one a line) are the module's keys, or say which differ
same() {
	local missing extra
	if [ -z "$2" ]; then
		fail "$1" "no status key found there (has its layout changed?)"
		return
	fi
	missing=$(comm -23 <(echo "$emitted") <(echo "$2") | tr '\n' ' ')
	extra=$(comm -13 <(echo "$emitted") <(echo "$2") | tr '\n' ' ')
	if [ -n "$missing" ]; then
		fail "$1" "the module emits status keys that $1 lacks: $missing"
	elif [ -n "$extra" ]; then
		fail "$1" "$1 names status keys the module does not emit: $extra"
	else
		pass "$1"
	fi
}

# prom.c: a metrics[] entry per key, but mode and mode_reason, which are state sets
same prom.c "$( (grep -oE '^[[:space:]]*\{ "[a-z_]+", (COUNTER|GAUGE|US_COUNTER),' "$CTL/prom.c" |
	cut -d'"' -f2
	grep -oE 'state_family\("[a-z_]+", "[a-z_]+", "[a-z_]+"' "$CTL/prom.c" | cut -d'"' -f6) | sort -u)"

# docs/operations.md: the first column of the table under "## Status"
same docs/operations.md "$(sed -n '/^## Status/,/^## /p' "$REPO/docs/operations.md" | grep '^| `' |
	cut -d'|' -f2 | grep -oE '`[a-z_]+`' | tr -d '`' | sort -u)"

# docs/dm-flaz.rst (the kernel's admin guide in make upstream's series): the term lines of
# its "Status" section (a key, or keys separated by ", ", at the start of a line)
same docs/dm-flaz.rst "$(sed -n '/^Status$/,/^Messages$/p' "$REPO/docs/dm-flaz.rst" |
	grep -E '^[a-z_]+(, [a-z_]+)*$' | tr -d ',' | words)"

# the man page: the list after its marker comment, up to the .hy that ends it
same flazctl.8 "$(sed -n '/^\.\\" the status keys/,/^\.hy/p' "$CTL/flazctl.8" | grep -E '^\.BR? ' |
	sed 's/^\.BR\{0,1\} //; s/ ,$//' | words)"

# flazctl's own list (vol.c status_keys), which list -o accepts: the words after its "and
# every other status key" line, and mode, which it lists among its own fields
same flazctl-list "$( ("$BIN" list -o help 2>&1 | sed -n '/^and every other status key/,$p' | tail -n +2
	"$BIN" list -o help 2>&1 | grep -oE '^  mode ' ) | words)"

# the bash completion of `flazctl list -o ` (it runs flazctl list -o help itself)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ln -s "$BIN" "$T/flazctl"
offered=$(PATH=$T:$PATH bash -c '
	. "$1"
	COMP_WORDS=(flazctl list -o "")
	COMP_CWORD=3
	_flazctl
	printf "%s\n" "${COMPREPLY[@]}"' _ "$CTL/flazctl.bash-completion")
# its fields that are not status keys: list's derived columns, and help
derived=$("$BIN" list -o help 2>&1 | sed -n '2,/^and every other/p' | awk '/^  / { print $1 }' |
	grep -vx mode)
same completion "$(grep -vxF -f <(echo "$derived"; echo help) <<<"$offered" | words)"

[ $fails -eq 0 ]

# Helpers for the crash suites (crash-write.sh, crash-check.sh, replay.sh; busybox sh, sourced
# after lib.sh). Volumes are small so a TCG guest gets through them in seconds.
HDD_MIB=64
SSD_MIB=16
# What the SSD holds is what the crash left: no check may blank it (lib.sh blank_ssd).
KEEP_SSD=1
# The volume's geometry: the suites' default, or with "paged" (an argument of the suite) the
# table at paging geometry: 4 KiB extents at overbook 1000 give the 16 MiB SSD 40,960 lines
# (6 pages of about 45 KiB) and table_cache_kib 64 keeps one of them resident, so fills,
# commits and loads page the table in and out (warming brings the first page back).
GEOMETRY="extent_kib 16"
PAGED=
for arg in "$@"; do
	[ "$arg" = paged ] && PAGED=1 && GEOMETRY="overbook 1000 extent_kib 4 table_cache_kib 64"
done

# info TEXT: a line the host copies to its stderr (not a check).
info() {
	echo "info: $*"
	record "INFO $*"
}

# linear NAME DEV START_MIB SIZE_MIB: a dm-linear slice of DEV.
linear() {
	must dmsetup create "$1" --table "0 $(($4 * 2048)) linear $2 $(($3 * 2048))"
}

# create_vol HDD SSD [OPTIONS...]: the flaz volume "vol" over HDD cached on SSD. Fails the
# check, with the kernel's "flaz: ..." lines, if the kernel refuses the table.
create_vol() {
	cv_hdd=$1
	cv_ssd=$2
	shift 2
	# shellcheck disable=SC2086 # words
	set -- $GEOMETRY "$@"
	kmsg_mark
	if ! dmsetup create vol --table "0 $(sectors "$cv_hdd") flaz $cv_hdd $cv_ssd $# $*" \
		>/tmp/create.out 2>&1; then
		cat /tmp/create.out
		kmsg_new | grep 'flaz' >/tmp/create.kmsg
		fail "creating the volume ($*) was refused: $(tail -n 3 /tmp/create.kmsg | tr '\n' '|' | cut -c 1-300)"
	fi
}

# The status line's counters after the target name, for the log and INFO lines.
vol_status() {
	wait_loaded vol || fail "$(head -n 1 /tmp/unloaded)"
	dmsetup status vol | cut -d' ' -f4-
}


# e2e checks of flazctl against the real kernel, and the module's unload.

# flazctl COMMAND...: run flazctl; its exit code lands in $rc and its output (both streams)
# in /tmp/flazctl.out and the log.
flazctl_run() {
	flazctl "$@" >/tmp/flazctl.out 2>&1
	rc=$?
	echo "flazctl $* -> $rc"
	cat /tmp/flazctl.out
}

no_device() {
	dmsetup info "$1" >/dev/null 2>&1 && fail "$2: device $1 exists"
	[ -e "/dev/mapper/$1" ] && fail "$2: /dev/mapper/$1 exists"
	return 0
}

t_flazctl_create() {
	must flazctl create v --hdd $HDD --ssd $SSD --compressor lzo
	[ -b /dev/mapper/v ] || fail "no /dev/mapper/v after flazctl create"
	dmsetup table v | grep -q ' compressor lzo' || fail "dmsetup table v lacks 'compressor lzo': $(dmsetup table v)"
	must dd if=/dev/urandom of=/dev/mapper/v bs=4k count=16 oflag=direct
}

t_flazctl_status() {
	flazctl_run status v
	[ $rc -eq 0 ] || fail "flazctl status v exited $rc"
	grep -q mode /tmp/flazctl.out || fail "flazctl status v shows no mode: $(head -c 200 /tmp/flazctl.out)"
}

t_flazctl_status_json() {
	flazctl_run status v --json
	[ $rc -eq 0 ] || fail "flazctl status v --json exited $rc"
	grep -q '"status"' /tmp/flazctl.out || fail "JSON status has no \"status\""
	grep -Eq '"reads": *[0-9]+' /tmp/flazctl.out || fail "JSON status has no numeric \"reads\""
}

t_flazctl_remove() {
	must flazctl remove v
	no_device v "after flazctl remove"
}

t_flazctl_same_device() {
	flazctl_run create v --hdd $HDD --ssd $HDD
	[ $rc -eq 1 ] || fail "same device for HDD and SSD: exit $rc, want 1"
	no_device v "after the refusal"
}

t_flazctl_ssd_too_small() {
	must dmsetup create tiny --table "0 64 linear $SSD 0"
	flazctl_run create v --hdd $HDD --ssd /dev/mapper/tiny
	must dmsetup remove tiny
	[ $rc -eq 1 ] || fail "64-sector SSD: exit $rc, want 1"
	grep -q minimum /tmp/flazctl.out || fail "64-sector SSD: message lacks 'minimum': $(cat /tmp/flazctl.out)"
	no_device v "after the refusal"
}

t_flazctl_bad_compressor() {
	flazctl_run create v --hdd $HDD --ssd $SSD --compressor snappy
	[ $rc -eq 2 ] || fail "unknown compressor: exit $rc, want 2"
	no_device v "after the refusal"
}

# The kernel refuses a name in use; the existing volume keeps its table and stays usable.
t_flazctl_existing_name() {
	must dmsetup create v --table "$(flaz_table overbook 300)"
	before=$(dmsetup table v)
	flazctl_run create v --hdd $HDD --ssd $SSD --compressor zstd
	[ $rc -eq 1 ] || fail "existing name: exit $rc, want 1"
	after=$(dmsetup table v)
	[ "$after" = "$before" ] || fail "existing volume's table changed: '$before' -> '$after'"
	dmsetup info v | grep -q 'State: *ACTIVE' || fail "existing volume no longer active: $(dmsetup info v | tr '\n' ' ')"
	must dd if=/dev/mapper/v of=/dev/null bs=4k count=16 iflag=direct
	must dmsetup remove v
}

# A table the kernel refuses (the HDD is mounted, so it cannot be opened) leaves no device.
t_flazctl_kernel_refusal() {
	must mkfs.ext4 -q -F $HDD
	must mount $HDD /mnt
	flazctl_run create v --hdd $HDD --ssd $SSD
	must umount /mnt
	[ $rc -eq 1 ] || fail "HDD in use: exit $rc, want 1"
	no_device v "after the kernel refused the table"
}

t_module_unload() {
	left=$(dmsetup ls)
	[ "$left" = "No devices found" ] || fail "devices left before unload: $left"
	must rmmod dm_flaz
	dmsetup targets | grep -q '^flaz ' && fail "dmsetup targets still lists flaz after rmmod"
	return 0
}

# dm-cache as the benches set it up (guest/bench.sh in QEMU, tests/uml/bench-init.sh in UML),
# with the callers' N (the origin's sectors), S and SSD: writethrough, smq, 8 MiB of the SSD
# for metadata, the rest for 32 KiB cache blocks (dm-cache's smallest).
# dmcache_up ORIGIN: dm-cache "cached" over ORIGIN; dmcache_down takes it away.
dmcache_up() {
	dmsetup create cmeta --table "0 16384 linear $SSD 0"
	dmsetup create cdata --table "0 $((S - 16384)) linear $SSD 16384"
	dd if=/dev/zero of=/dev/mapper/cmeta bs=4k count=1 conv=fsync 2>/dev/null
	dmsetup create cached --table \
		"0 $N cache /dev/mapper/cmeta /dev/mapper/cdata $1 64 1 writethrough smq 0"
}
dmcache_down() {
	dmsetup remove cached
	dmsetup remove cdata
	dmsetup remove cmeta
}

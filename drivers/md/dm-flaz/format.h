/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz on-SSD format: the layout of the cache device.
 *
 * Shared verbatim by the kernel module and by flazctl (compiled into both), so it
 * includes only <linux/types.h> and uses no kernel-only calls.
 *
 * Layout (all offsets in 512-byte sectors):
 *   0                 superblock (4 KiB)
 *   meta_start        metadata area: the persisted table, one entry per cache line
 *   data_start        extents, each extent_sectors long, data_start aligned to the
 *                     extent size so every extent is aligned to its size
 */
#ifndef DM_FLAZ_FORMAT_H
#define DM_FLAZ_FORMAT_H

#include <linux/types.h>

#define FLAZ_SECTOR_SHIFT	9
#define FLAZ_BLOCK_SIZE		4096U
#define FLAZ_BLOCK_SECTORS	(FLAZ_BLOCK_SIZE >> FLAZ_SECTOR_SHIFT)

#define FLAZ_SB_SECTOR		0
#define FLAZ_SB_SECTORS		FLAZ_BLOCK_SECTORS
#define FLAZ_META_ENTRY_BYTES	8U	/* persisted table entry per cache line */

#define FLAZ_MIN_EXTENT_KIB	4U
#define FLAZ_MAX_EXTENT_KIB	256U
#define FLAZ_DEF_EXTENT_KIB	32U
#define FLAZ_MIN_OVERBOOK	100U
#define FLAZ_MAX_OVERBOOK	1000U
#define FLAZ_DEF_OVERBOOK	200U
#define FLAZ_MIN_EXTENTS	16U	/* fewer leaves the cleaner no room to work */

/* Where everything lives on a given SSD; derived, never stored as such. */
struct flaz_geometry {
	__u64 ssd_sectors;
	__u32 extent_sectors;
	__u32 blocks_per_extent;	/* 4 KiB data blocks per extent */
	__u32 overbook;			/* percent: lines per data block */
	__u64 meta_start;
	__u64 meta_sectors;
	__u64 data_start;
	__u64 nr_extents;
	__u64 nr_lines;
};

/*
 * Lay out an SSD of @ssd_sectors with extents of @extent_kib and @overbook percent
 * lines per data block. Returns 0, -EINVAL for out-of-range parameters, or
 * -ENOSPC when the SSD cannot hold the superblock, its metadata and
 * FLAZ_MIN_EXTENTS extents.
 */
int flaz_geometry_init(struct flaz_geometry *g, __u64 ssd_sectors,
		       __u32 extent_kib, __u32 overbook);

/* Smallest SSD, in sectors, that flaz_geometry_init() accepts for these parameters. */
__u64 flaz_geometry_min_sectors(__u32 extent_kib, __u32 overbook);

#endif

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
#define FLAZ_BLOCK_SHIFT	12
#define FLAZ_BLOCK_SIZE		(1U << FLAZ_BLOCK_SHIFT)
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

/*
 * An extent is a 32-byte extent header followed by slots packed log-style. A slot is
 * a 32-byte header and its payload (a compressed block, or the raw 4 KiB), padded
 * to FLAZ_SLOT_ALIGN, so it can be found, checked and attributed to its HDD block
 * from the extent alone.
 */
#define FLAZ_SLOT_ALIGN		32U
#define FLAZ_EXTENT_MAGIC	0x5a414c46U	/* "FLAZ" */
#define FLAZ_SLOT_MAGIC		0x534c4f54U	/* "TOLS" */
#define FLAZ_SLOT_RAW		0x01U	/* payload is the block itself */
#define FLAZ_SLOT_FLAGS		FLAZ_SLOT_RAW
#define FLAZ_MAX_SLOT_BYTES	(32U + FLAZ_BLOCK_SIZE)

struct flaz_extent_hdr {
	__le32 magic;
	__le32 crc;		/* crc32c of this header with crc = 0 */
	__le64 seq;		/* when the extent was sealed */
	__le32 extent;		/* its index in the data area */
	__le32 used;		/* bytes of header and slots */
	__le32 nr_slots;
	__le32 reserved;
};

struct flaz_slot_hdr {
	__le32 magic;
	__le32 crc;		/* crc32c of this header with crc = 0, then the payload */
	__le64 block;		/* HDD block (4 KiB units) the payload belongs to */
	__le64 seq;		/* install order: a later slot of a block supersedes */
	__le32 line;		/* cache line it was installed in */
	__le16 len;		/* payload bytes */
	__u8 flags;		/* FLAZ_SLOT_* */
	__u8 codec;		/* enum flaz_codec it was compressed with */
};

/* A slot as decoded from its header. */
struct flaz_slot_info {
	__u64 block;
	__u64 seq;
	__u32 line;
	__u32 len;
	__u32 bytes;		/* header, payload and padding */
	__u8 flags;
	__u8 codec;
};

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


/* Bytes a slot with a @len-byte payload takes in an extent. */
static inline __u32 flaz_slot_bytes(__u32 len)
{
	return (sizeof(struct flaz_slot_hdr) + len + FLAZ_SLOT_ALIGN - 1) &
	       ~(FLAZ_SLOT_ALIGN - 1);
}

__u32 flaz_crc32c(__u32 crc, const void *p, __u32 len);

/*
 * Write a slot header for @info's fields at @slot, with @payload already placed
 * right after it; info->bytes is filled in.
 */
void flaz_slot_encode(void *slot, struct flaz_slot_info *info);

/*
 * Check and decode the slot at @slot, of which @avail bytes are readable.
 * Returns 0, or -EILSEQ for a bad magic, length, flags or checksum.
 */
int flaz_slot_decode(const void *slot, __u32 avail, struct flaz_slot_info *info);

void flaz_extent_encode(void *ext, __u64 seq, __u32 extent, __u32 used, __u32 nr_slots);

/*
 * Check the header of the extent at @ext (@extent_bytes long) and that it is
 * extent number @extent; *used and *nr_slots are set from it. Returns 0 or -EILSEQ.
 */
int flaz_extent_decode(const void *ext, __u32 extent_bytes, __u32 extent, __u32 *used,
		       __u32 *nr_slots);

/*
 * Walk the slots of a checked extent: *off starts at 0; each call decodes the next
 * slot into @info and returns 1, 0 at the end, or -EILSEQ at a damaged slot.
 */
int flaz_extent_next(const void *ext, __u32 used, __u32 *off, struct flaz_slot_info *info);

#endif

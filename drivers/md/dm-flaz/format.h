/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz on-SSD format: the layout of the cache device.
 *
 * Shared verbatim by the kernel module and by flazctl (compiled into both), so it
 * includes only <linux/types.h> (and <linux/bits.h> in the kernel, for BIT()) and
 * uses no kernel-only calls.
 *
 * Layout (all offsets in 512-byte sectors):
 *   0, 8              two superblock copies (4 KiB each), written in turn: a torn
 *                     write leaves the other one, and the valid one with the
 *                     higher seq is current
 *   meta_start        metadata area: the persisted table in 4 KiB table blocks of
 *                     FLAZ_META_ENTRIES entries, one entry per cache line, then
 *                     the extent generations in gen blocks of FLAZ_GEN_ENTRIES
 *   data_start        extents, each extent_sectors long, data_start aligned to the
 *                     extent size so every extent is aligned to its size
 */
#ifndef DM_FLAZ_FORMAT_H
#define DM_FLAZ_FORMAT_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/bits.h>
#else
#ifndef BIT
#define BIT(nr)			(1UL << (nr))
#endif
#endif

#define FLAZ_SECTOR_SHIFT	9
#define FLAZ_BLOCK_SHIFT	12
#define FLAZ_BLOCK_SIZE		4096U	/* 1U << FLAZ_BLOCK_SHIFT, as format.c asserts */
#define FLAZ_BLOCK_SECTORS	(FLAZ_BLOCK_SIZE >> FLAZ_SECTOR_SHIFT)

#define FLAZ_SB_COPIES		2U
#define FLAZ_SB_SECTORS		(FLAZ_SB_COPIES * FLAZ_BLOCK_SECTORS)
#define FLAZ_META_ENTRY_BYTES	8U	/* persisted table entry per cache line */

#define FLAZ_MIN_EXTENT_KIB	4U
#define FLAZ_MAX_EXTENT_KIB	256U
#define FLAZ_DEF_EXTENT_KIB	32U
#define FLAZ_MIN_OVERBOOK	100U
#define FLAZ_MAX_OVERBOOK	1000U
#define FLAZ_DEF_OVERBOOK	200U
#define FLAZ_MIN_EXTENTS	16U	/* fewer leaves the cleaner no room to work */
#define FLAZ_MAX_EXTENTS	BIT(30)	/* a table entry has 30 bits for it */

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
#define FLAZ_SLOT_HOT		0x02U	/* raw because hot: compressed again once it cools */
#define FLAZ_SLOT_FLAGS		(FLAZ_SLOT_RAW | FLAZ_SLOT_HOT)
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
	__u64 meta_sectors;		/* table blocks, then gen blocks */
	__u64 gen_start;		/* the first gen block */
	__u64 data_start;
	__u64 nr_extents;
	__u64 nr_lines;
	/* a table entry's fields (see flaz_entry_pack()): as wide as this SSD needs */
	__u32 off_bits;
	__u32 ext_bits;
	__u32 gen_bits;
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

/*
 * The superblock: one 4 KiB block, this header and then the write-intent bitmap
 * to the end of the block. A bit covers 2^region_shift HDD blocks; it is made
 * durable before the first write to its region and cleared only by a commit
 * whose table reflects every write to the region (see meta.c).
 */
#define FLAZ_SB_MAGIC		0x42535a46U	/* "FZSB" */
/* 2: extent generations; 3: a cold bit per entry; 4: generations of up to 16 bits */
#define FLAZ_SB_VERSION		4U
#define FLAZ_SB_CLEAN		0x01U	/* shut down cleanly: no region marked */
#define FLAZ_SB_FLAGS		FLAZ_SB_CLEAN
#define FLAZ_SB_HDR_BYTES	256U
#define FLAZ_SB_BITMAP_BYTES	(FLAZ_BLOCK_SIZE - FLAZ_SB_HDR_BYTES)
#define FLAZ_MAX_REGIONS	(FLAZ_SB_BITMAP_BYTES * 8)
#define FLAZ_MIN_REGION_SHIFT	8U	/* 1 MiB: finer costs more superblock writes */

struct flaz_sb {
	__le32 magic;
	__le32 crc;		/* crc32c of the whole 4 KiB block with crc = 0 */
	__le32 version;
	__le32 flags;		/* FLAZ_SB_* */
	__le64 seq;		/* bumped by every superblock write */
	__le64 gen;		/* random per format: table blocks of another are void */
	__u8 uuid[16];
	__le64 ssd_sectors;
	__le64 hdd_sectors;	/* the volume's length */
	__le32 extent_kib;
	__le32 overbook;
	__le64 nr_lines;
	__le64 nr_extents;
	__le64 meta_start;
	__le64 meta_sectors;
	__le64 data_start;
	__le32 codec;		/* enum flaz_codec */
	__le32 region_shift;	/* write-intent region: 2^region_shift HDD blocks */
	__le32 nr_regions;
	__le32 hdd_fp;		/* crc32c of the HDD's first 4 KiB at the last clean stop */
	__le64 commit;		/* table commits made */
	__le64 next_seq;	/* slot and extent sequence numbers go on from here */
	/* the cleaner's codec for cold slots: enum flaz_codec + 1, 0 none */
	__le32 cold_codec;
	/* a clean one's reclaim order (flaz_order_hdr): first extent, extents; 0 none */
	__le32 order_first;
	__le32 order_extents;
	__u8 reserved[FLAZ_SB_HDR_BYTES - 156];
};

/* A superblock as decoded. */
struct flaz_sb_info {
	__u64 seq;
	__u64 gen;
	__u8 uuid[16];
	__u32 flags;
	__u64 hdd_sectors;
	__u32 extent_kib;
	__u32 overbook;
	__u32 codec;
	__u32 cold_codec;
	__u32 region_shift;
	__u32 nr_regions;
	__u32 hdd_fp;
	__u64 commit;
	__u64 next_seq;
	__u32 order_first;
	__u32 order_extents;
	struct flaz_geometry geo;
};

/* Write-intent regions for a volume of @hdd_blocks: the shift that fits the bitmap. */
__u32 flaz_region_shift(__u64 hdd_blocks);

/*
 * Encode @info (geometry included) and @bitmap (FLAZ_SB_BITMAP_BYTES) into the
 * 4 KiB block @blk.
 */
void flaz_sb_encode(void *blk, const struct flaz_sb_info *info, const void *bitmap);

/*
 * Check and decode the 4 KiB block @blk: magic, version, checksum, flags, and a
 * geometry that flaz_geometry_init() derives from the same parameters.
 * Returns 0, -ENODATA for a block of zeros (a new SSD), -EILSEQ for anything else.
 */
int flaz_sb_decode(const void *blk, struct flaz_sb_info *info);

/* Whether @blk, which flaz_sb_decode() refused, is a superblock of another format version. */
int flaz_sb_other_version(const void *blk);

/* The bitmap of a decoded superblock block. */
static inline const void *flaz_sb_bitmap(const void *blk)
{
	return (const char *)blk + FLAZ_SB_HDR_BYTES;
}

/*
 * A table block: this header, then FLAZ_META_ENTRIES little-endian entries for
 * the lines index * FLAZ_META_ENTRIES onwards. One that fails its checks, or
 * belongs to another format (gen), holds nothing.
 */
#define FLAZ_META_MAGIC		0x4154454dU	/* "META" */

struct flaz_meta_hdr {
	__le32 magic;
	__le32 crc;		/* crc32c of the whole 4 KiB block with crc = 0 */
	__le64 gen;
	__le64 commit;		/* the commit that wrote it */
	__le32 index;
	__le32 reserved;
};

#define FLAZ_META_ENTRIES \
	((FLAZ_BLOCK_SIZE - sizeof(struct flaz_meta_hdr)) / FLAZ_META_ENTRY_BYTES)

void flaz_meta_encode(void *blk, __u64 gen, __u64 commit, __u32 index,
		      const __u64 *entries);

/*
 * Check the table block @blk against @gen and @index. Returns 0; -ENODATA for a
 * block that is not a table block of this format (never written since, so it
 * holds nothing); -EILSEQ for a damaged one.
 */
int flaz_meta_decode(const void *blk, __u64 gen, __u32 index, __u64 *commit,
		     __u64 *entries);

/*
 * A table entry as stored: bits 0-7 the slot's size in FLAZ_SLOT_ALIGN units
 * (0: empty, FLAZ_ENTRY_ZERO_UNITS: an all-zero block with no slot). A slot then
 * has, from bit 8, its offset in the same units (geometry off_bits), its extent
 * (ext_bits), a bit for the volume's cold codec (cold_compressor), the low
 * FLAZ_TAG_BITS of its tag (block / nr_lines), and its extent's generation
 * when the entry was made (gen_bits: what the rest of 64 bits leaves, up to
 * FLAZ_MAX_GEN_BITS). A zero block has its whole tag in bits 8-63.
 *
 * The generation is as wide as the entry lets it be, 16 bits up to a 1 TiB
 * SSD, a bit less per doubling beyond. Each fill of an extent takes two (it
 * is opened, then evicted), so an extent can be filled 2^(gen_bits - 1) - 1
 * times: 32,767 up to 1 TiB, 8,191 at 4 TiB, each a full-drive write's worth
 * on average, more than SSDs are rated for. An extent at flaz_gen_worn() is
 * never used again in that format: nothing could void entries of a next
 * tenant.
 */
#define FLAZ_ENTRY_ZERO_UNITS	255U
#define FLAZ_TAG_BITS		4U
#define FLAZ_MAX_GEN_BITS	16U

struct flaz_entry_info {
	__u32 units;		/* 0 empty, FLAZ_ENTRY_ZERO_UNITS zero, else slot size */
	__u32 off;		/* bytes */
	__u32 ext;
	__u16 gen;		/* the extent's generation it was made in */
	__u8 cold;		/* the slot is in the cold codec */
	__u64 tag;
};

__u64 flaz_entry_pack(const struct flaz_entry_info *e, const struct flaz_geometry *g);
void flaz_entry_unpack(__u64 v, const struct flaz_geometry *g, struct flaz_entry_info *e);

/*
 * Whether entry @e of @line is possible in geometry @g for a volume of
 * @hdd_blocks: a slot inside an extent, a tag inside the volume.
 */
int flaz_entry_valid(const struct flaz_entry_info *e, const struct flaz_geometry *g,
		     __u64 line, __u64 hdd_blocks);

/*
 * Extent generations: 16 bits per extent, bumped each time the extent is
 * evicted, so an entry left on the SSD (or in DRAM) for an evicted extent is
 * void (its gen differs) without rewriting or even visiting it: eviction costs
 * one gen block, not a table rewrite. A gen block is this header and
 * FLAZ_GEN_ENTRIES little-endian gens for the extents index * FLAZ_GEN_ENTRIES
 * onwards; one of another format (gen) holds zeros.
 */
#define FLAZ_GEN_MAGIC		0x4e454758U	/* "XGEN" */

struct flaz_gen_hdr {
	__le32 magic;
	__le32 crc;		/* crc32c of the whole 4 KiB block with crc = 0 */
	__le64 gen;		/* the format's (superblock's) gen */
	__le64 commit;
	__le32 index;
	__le32 reserved;
};

#define FLAZ_GEN_ENTRIES	((FLAZ_BLOCK_SIZE - sizeof(struct flaz_gen_hdr)) / 2)

void flaz_gen_encode(void *blk, __u64 gen, __u64 commit, __u32 index, const __u16 *gens);

/* As flaz_meta_decode(), for a gen block: @gens gets FLAZ_GEN_ENTRIES gens. */
int flaz_gen_decode(const void *blk, __u64 gen, __u32 index, __u64 *commit, __u16 *gens);

/* Bits an entry's generation gets beside an offset and an extent of these widths. */
static inline __u32 flaz_entry_gen_bits(__u32 off_bits, __u32 ext_bits)
{
	__u32 bits = 64 - 8 - off_bits - ext_bits - 1 - FLAZ_TAG_BITS;

	return bits < FLAZ_MAX_GEN_BITS ? bits : FLAZ_MAX_GEN_BITS;
}

/*
 * An extent's generation is odd while it is in use, even while it is free, so
 * the gen blocks alone say which extents are free. The last even generation of
 * geometry @g: an extent there is worn out, never used again in that format.
 */
static inline __u16 flaz_gen_worn(const struct flaz_geometry *g)
{
	return (__u16)((1U << g->gen_bits) - 2);
}

/* Table blocks and gen blocks of geometry @g. */
static inline __u64 flaz_table_blocks(const struct flaz_geometry *g)
{
	return (g->nr_lines + FLAZ_META_ENTRIES - 1) / FLAZ_META_ENTRIES;
}

static inline __u64 flaz_gen_blocks(const struct flaz_geometry *g)
{
	return (g->nr_extents + FLAZ_GEN_ENTRIES - 1) / FLAZ_GEN_ENTRIES;
}

/*
 * The reclaim order a clean stop leaves (the kernel's order.c): which written
 * extents were in probation and main, oldest first, and the lines' heat. It is
 * written into extents that are free at the stop, a chain of them, each this
 * header and then its share of one stream: struct flaz_order_head, the extent
 * ids (little-endian 32 bits, probation's then main's), the heat, then a bit
 * per extent hit since it was written (both in little-endian 64-bit words,
 * bit 0 first). The clean superblock names the first extent and their number;
 * any other superblock names none, so the order is read only if no write came
 * after it. It decides what reclaim takes first and which slots it keeps, never
 * what is read: lost or damaged, the written extents are taken in index order,
 * none hit, as after a crash.
 */
#define FLAZ_ORDER_MAGIC	0x4f5a4c46U	/* "FLZO" */
#define FLAZ_ORDER_NONE		0xffffffffU	/* the last extent's next */

struct flaz_order_hdr {
	__le32 magic;
	__le32 crc;		/* crc32c of this header with crc = 0, then the payload */
	__le64 gen;		/* the format's gen */
	__le64 commit;		/* the clean superblock's commit */
	__le32 index;		/* its place in the chain */
	__le32 next;		/* the next extent of the chain, FLAZ_ORDER_NONE */
	__le32 bytes;		/* payload bytes after this header */
	__le32 reserved;
};

struct flaz_order_head {
	__le32 nr_probation;
	__le32 nr_main;
	__le64 heat_words;
};

/*
 * The saved heat's 64-bit words: 2 bits a line, each table block's lines
 * padded to a multiple of 64 (a page of the kernel's table, l2p.c).
 */
static inline __u64 flaz_order_heat_words(const struct flaz_geometry *g)
{
	return flaz_table_blocks(g) * ((FLAZ_META_ENTRIES + 63) / 64) * 2;
}

/* The saved hit bits' 64-bit words: a bit per extent. */
static inline __u64 flaz_order_hit_words(const struct flaz_geometry *g)
{
	return (g->nr_extents + 63) / 64;
}

/* Encode chunk @index's header before the @bytes of payload that follow it at @ext. */
void flaz_order_encode(void *ext, __u64 gen, __u64 commit, __u32 index, __u32 next,
		       __u32 bytes);

/*
 * Check chunk @index of @extent_bytes at @ext against @gen and @commit; *next
 * and *bytes get its next extent and payload bytes. Returns 0 or -EILSEQ.
 */
int flaz_order_decode(const void *ext, __u32 extent_bytes, __u64 gen, __u64 commit,
		      __u32 index, __u32 *next, __u32 *bytes);

/* The first sector of extent @ext. */
static inline __u64 flaz_extent_sector(const struct flaz_geometry *g, __u64 ext)
{
	return g->data_start + ext * g->extent_sectors;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flazctl: reading a flaz SSD's metadata (superblock copies, table blocks, gen
 * blocks, extents) from a block device or an image file, for `check` and `dump`.
 * All decoding is done by the module's own format.c.
 */
#ifndef FLAZCTL_SSDMETA_H
#define FLAZCTL_SSDMETA_H

#include <stdbool.h>
#include <stddef.h>

#include "format.h"

/* An SSD (block device or image file) opened for its metadata. */
struct ssd {
	const char *path;
	int fd;
	__u64 bytes;		/* its size */
	bool is_blk;
	bool busy;		/* a block device someone holds exclusively (a live volume) */
};

/*
 * Open @path for reading, or with @write for writing too (then exclusively: a block
 * device in use is refused). Returns 0, or a flazctl exit code after printing why.
 */
int ssd_open(struct ssd *s, const char *path, bool write, int err_code);
void ssd_close(struct ssd *s);

/* Read / write @len bytes at byte @off. Returns 0 or a negative errno. */
int ssd_read(const struct ssd *s, __u64 off, void *buf, size_t len);
int ssd_write(const struct ssd *s, __u64 off, const void *buf, size_t len);

/* What a failed ssd_read() / ssd_write() means, for messages. */
const char *ssd_strerror(int r);

/* The start of an SSD that ssd_content() looks at: both superblock copies. */
#define SSD_PROBE_BYTES (2 * FLAZ_BLOCK_SIZE)

/*
 * What the SSD's first SSD_PROBE_BYTES @b hold, in words ("an ext2/3/4
 * filesystem", "swap space", ... or "data (...)" in @buf), or NULL when they are
 * blank or hold the flaz superblock magic: what create --cold would overwrite,
 * and what check found instead of a flaz SSD.
 */
const char *ssd_content(const unsigned char *b, char *buf, size_t len);

/* One superblock copy as found on the SSD. */
enum sb_state {
	SB_VALID,
	SB_BLANK,		/* all zero: never written */
	SB_CORRUPT,		/* has the magic but fails its checks */
	SB_OTHER_VERSION,	/* a sound superblock of another format version */
	SB_FOREIGN,		/* no flaz superblock magic */
	SB_UNREADABLE,
	SB_IMPOSSIBLE,		/* sound, but a field no device of this size can have */
};

struct sb_copy {
	enum sb_state state;
	int err;		/* SB_UNREADABLE: the read error */
	__u32 version;		/* SB_OTHER_VERSION: its format version */
	const char *field;	/* SB_IMPOSSIBLE: the field and its value */
	__u64 value;
	unsigned char blk[FLAZ_BLOCK_SIZE] __attribute__((aligned(8)));	/* decoded in place */
	struct flaz_sb_info info;	/* SB_VALID only */
};

struct sb_pair {
	struct sb_copy copy[FLAZ_SB_COPIES];
	int cur;		/* the current copy (valid, higher seq), or -1 */
};

/* Byte offset of superblock copy @i. */
static inline __u64 sb_offset(unsigned int i)
{
	return (__u64)i * FLAZ_BLOCK_SIZE;
}

/*
 * Read and classify both copies. A copy whose sizes do not fit the device is
 * SB_IMPOSSIBLE, never valid: every area a valid copy describes is inside the
 * device, so nothing sized by a header field outgrows what the device holds.
 */
void sb_load(const struct ssd *s, struct sb_pair *sb);
const char *sb_state_name(enum sb_state st);

/* Why an SB_IMPOSSIBLE copy is: "field X=V impossible for ...", into @buf. */
void sb_impossible(const struct ssd *s, const struct sb_copy *c, char *buf, size_t len);

/*
 * With no current copy: the copy that is a superblock of another format version
 * (the lower-numbered one if both are), or -1.
 */
int sb_other_version(const struct sb_pair *sb);

/* The HDD blocks of the volume a superblock describes. */
static inline __u64 sb_hdd_blocks(const struct flaz_sb_info *info)
{
	return info->hdd_sectors >> (FLAZ_BLOCK_SHIFT - FLAZ_SECTOR_SHIFT);
}

/* Whether write-intent region @r is marked in the superblock block @blk. */
static inline bool sb_marked(const void *blk, __u32 r)
{
	const unsigned char *bm = flaz_sb_bitmap(blk);

	return bm[r / 8] & (1U << (r % 8));
}

/* Set bits of the bitmap at or past @nr_regions (the kernel never sets them). */
__u32 sb_marked_past(const void *blk, __u32 nr_regions);

/* Marked regions below nr_regions. */
__u32 sb_marked_count(const void *blk, __u32 nr_regions);

/* The marked regions as "0-3, 17, ..." (at most 8 ranges) into @buf. */
void format_regions(const void *blk, __u32 nr_regions, char *buf, size_t len);

/* "lz4", or "unknown" for a codec number flazctl does not know. */
const char *codec_name(__u32 codec);
#define NR_CODECS 4U

/* A table block (or a gen block) as found on the SSD. */
enum tb_state {
	TB_VALID,
	TB_UNWRITTEN,		/* all zero */
	TB_VOID,		/* a sound block of another format (gen) */
	TB_FOREIGN,		/* neither zero nor a block of its kind: left from before the format */
	TB_BAD_MAGIC,		/* a block of this format whose magic is damaged */
	TB_BAD_CRC,
	TB_BAD_INDEX,		/* sound, but written for another index */
	TB_UNREADABLE,
};

struct tblock {
	enum tb_state state;
	int err;		/* TB_UNREADABLE: the read error */
	__u64 gen;		/* TB_VOID: its gen */
	__u32 index;		/* TB_BAD_INDEX: its index */
	__u64 commit;	/* TB_VALID: the commit that wrote it */
	unsigned char blk[FLAZ_BLOCK_SIZE];
	__u64 entries[FLAZ_META_ENTRIES];	/* TB_VALID only */
};

/* The byte offset of table block @i (flaz_table_blocks() of them). */
static inline __u64 table_offset(const struct flaz_geometry *g, __u64 i)
{
	return (g->meta_start << FLAZ_SECTOR_SHIFT) + i * FLAZ_BLOCK_SIZE;
}

/* Read and classify table block @i of the format @info describes. */
void tblock_read(const struct ssd *s, const struct flaz_sb_info *info, __u32 i,
		 struct tblock *t);
const char *tb_state_name(enum tb_state st);

/*
 * Whether a table block in state @st is damaged: a table block of this format
 * that fails its checks, or cannot be read. (An unwritten, void or foreign one
 * holds nothing, as the kernel sees it.)
 */
static inline bool tb_damaged(enum tb_state st)
{
	return st == TB_BAD_MAGIC || st == TB_BAD_CRC || st == TB_BAD_INDEX ||
	       st == TB_UNREADABLE;
}

/*
 * The extents' generations (gen blocks), as the kernel reads them at load: a gen
 * block classified as a table block is; one that holds nothing (unwritten, void,
 * foreign) leaves its extents at generation 0; a damaged one leaves them unknown,
 * so every entry into them is unusable.
 */
struct ext_gens {
	__u64 nr_blocks;	/* flaz_gen_blocks() */
	__u64 nr_extents;
	__u16 *gen;		/* per extent */
	enum tb_state *state;	/* per gen block */
	int *err;		/* per gen block: TB_UNREADABLE's read error */
	__u32 *index;		/* per gen block: TB_BAD_INDEX's index */
	__u64 count[TB_UNREADABLE + 1];	/* gen blocks by state */
};

/* The byte offset of gen block @i. */
static inline __u64 gen_offset(const struct flaz_geometry *g, __u64 i)
{
	return (g->gen_start << FLAZ_SECTOR_SHIFT) + i * FLAZ_BLOCK_SIZE;
}

/* Read and classify every gen block of the format @info describes. Returns 0 or -ENOMEM. */
int gens_load(const struct ssd *s, const struct flaz_sb_info *info, struct ext_gens *eg);
void gens_free(struct ext_gens *eg);

/* Damaged gen blocks (tb_damaged()). */
__u64 gens_bad(const struct ext_gens *eg);

/* What a slot entry is, by its extent's generation. */
enum entry_gen {
	EG_LIVE,		/* its gen is its extent's: it holds the slot */
	EG_VOID,		/* the extent was evicted since: it holds nothing */
	EG_UNUSABLE,		/* the extent's gen block is damaged: void or not is unknown */
};

/* For a slot entry @e that flaz_entry_valid() passed. */
static inline enum entry_gen entry_gen(const struct ext_gens *eg,
				       const struct flaz_entry_info *e)
{
	if (tb_damaged(eg->state[e->ext / FLAZ_GEN_ENTRIES]))
		return EG_UNUSABLE;
	return e->gen == eg->gen[e->ext] ? EG_LIVE : EG_VOID;
}

/*
 * The HDD block of entry @e of @line, when the entry alone tells it: always for a
 * zero block, for a slot when no tag of this volume is cut to FLAZ_TAG_BITS.
 */
bool entry_block(const struct flaz_entry_info *e, const struct flaz_sb_info *info,
		 __u64 line, __u64 *block);

/* Byte offset of extent @x. */
static inline __u64 extent_offset(const struct flaz_geometry *g, __u64 x)
{
	return flaz_extent_sector(g, x) << FLAZ_SECTOR_SHIFT;
}

#endif

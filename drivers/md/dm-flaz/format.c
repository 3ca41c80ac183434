// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz on-SSD format: pure C, compiled into the module and into flazctl.
 */
#ifdef __KERNEL__
#include <kunit/visibility.h>
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#else
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#define div64_u64(a, b) ((a) / (b))
#define cpu_to_le16 htole16
#define cpu_to_le32 htole32
#define cpu_to_le64 htole64
#define le16_to_cpu le16toh
#define le32_to_cpu le32toh
#define le64_to_cpu le64toh
/* no KUnit in userspace: EXPORT_SYMBOL_IF_KUNIT(sym); declares nothing */
#define flaz_no_export(sym) static_assert(1, #sym)
#define EXPORT_SYMBOL_IF_KUNIT flaz_no_export
#endif

#include "format.h"

static __u64 round_up_u64(__u64 v, __u64 to)
{
	return div64_u64(v + to - 1, to) * to;
}

static __u64 lines_for(__u64 nr_extents, __u32 blocks_per_extent, __u32 overbook)
{
	return div64_u64(nr_extents * blocks_per_extent * overbook, 100);
}

/* Sectors before the first extent when the SSD has @nr_extents extents. */
static __u64 head_sectors(__u64 nr_extents, __u32 extent_sectors,
			  __u32 blocks_per_extent, __u32 overbook, __u64 *meta_sectors)
{
	__u64 blocks = div64_u64(lines_for(nr_extents, blocks_per_extent, overbook) +
				 FLAZ_META_ENTRIES - 1, FLAZ_META_ENTRIES) +
		       div64_u64(nr_extents + FLAZ_GEN_ENTRIES - 1, FLAZ_GEN_ENTRIES);

	*meta_sectors = blocks * FLAZ_BLOCK_SECTORS;
	return round_up_u64(FLAZ_SB_SECTORS + *meta_sectors, extent_sectors);
}

#define ENTRY_OFF_SHIFT		8
#define ENTRY_MASK(bits)	((1ULL << (bits)) - 1)

/* Bits that hold 0..@max. */
static __u32 bits_for(__u64 max)
{
	__u32 n = 1;

	while (n < 64 && max >> n)
		n++;
	return n;
}

static int check_params(__u32 extent_kib, __u32 overbook)
{
	if (extent_kib < FLAZ_MIN_EXTENT_KIB || extent_kib > FLAZ_MAX_EXTENT_KIB ||
	    (extent_kib & (extent_kib - 1)))
		return -EINVAL;
	if (overbook < FLAZ_MIN_OVERBOOK || overbook > FLAZ_MAX_OVERBOOK)
		return -EINVAL;
	return 0;
}

static int fits(__u64 n, __u64 ssd_sectors, __u32 es, __u32 bpe, __u32 overbook)
{
	__u64 meta;

	return head_sectors(n, es, bpe, overbook, &meta) + n * es <= ssd_sectors;
}

int flaz_geometry_init(struct flaz_geometry *g, __u64 ssd_sectors,
		       __u32 extent_kib, __u32 overbook)
{
	__u64 n = 0, hi = FLAZ_MAX_EXTENTS, mid;
	__u32 es, bpe;
	int r;

	r = check_params(extent_kib, overbook);
	if (r)
		return r;
	es = extent_kib * 2;
	bpe = extent_kib / 4;

	/*
	 * The largest extent count whose head and extents fit (fits() only grows
	 * with it), by bisection: ssd_sectors comes from the superblock too, so the
	 * steps must not depend on it.
	 */
	while (n < hi) {
		mid = n + (hi - n + 1) / 2;
		if (fits(mid, ssd_sectors, es, bpe, overbook))
			n = mid;
		else
			hi = mid - 1;
	}
	if (n < FLAZ_MIN_EXTENTS)
		return -ENOSPC;

	g->ssd_sectors = ssd_sectors;
	g->extent_sectors = es;
	g->blocks_per_extent = bpe;
	g->overbook = overbook;
	g->meta_start = FLAZ_SB_SECTORS;
	g->data_start = head_sectors(n, es, bpe, overbook, &g->meta_sectors);
	g->nr_extents = n;
	g->nr_lines = lines_for(n, bpe, overbook);
	g->gen_start = g->meta_start + flaz_table_blocks(g) * FLAZ_BLOCK_SECTORS;
	g->off_bits = bits_for(es * 512 / FLAZ_SLOT_ALIGN - 1);
	g->ext_bits = bits_for(n - 1);
	g->gen_bits = flaz_entry_gen_bits(g->off_bits, g->ext_bits);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_geometry_init);

__u64 flaz_geometry_min_sectors(__u32 extent_kib, __u32 overbook)
{
	__u64 meta;

	if (check_params(extent_kib, overbook))
		return 0;
	return head_sectors(FLAZ_MIN_EXTENTS, extent_kib * 2, extent_kib / 4,
			    overbook, &meta) + (__u64)FLAZ_MIN_EXTENTS * extent_kib * 2;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_geometry_min_sectors);

#ifdef __KERNEL__
__u32 flaz_crc32c(__u32 crc, const void *p, __u32 len)
{
	return crc32c(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_crc32c);
#else
/*
 * CRC32C (Castagnoli, reflected), slicing-by-8: check reads every live slot of
 * an SSD, so a byte at a time is too slow. Words are assembled from bytes, so
 * neither alignment nor byte order matters.
 */
static __u32 crc_table[8][256];

static void crc_table_init(void)
{
	__u32 i, k, crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
		crc_table[0][i] = crc;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^
					  crc_table[0][crc_table[k - 1][i] & 0xff];
}

__u32 flaz_crc32c(__u32 crc, const void *p, __u32 len)
{
	const unsigned char *b = p;
	__u32 lo, hi;

	/* entry 1 is never 0 once filled: flazctl is single-threaded */
	if (!crc_table[0][1])
		crc_table_init();
	for (; len >= 8; b += 8, len -= 8) {
		lo = crc ^ (b[0] | b[1] << 8 | b[2] << 16 | (__u32)b[3] << 24);
		hi = b[4] | b[5] << 8 | b[6] << 16 | (__u32)b[7] << 24;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *b++) & 0xff];
	return crc;
}
#endif

/* Checksum of a header with its crc field taken as zero, then of @tail. */
static __u32 hdr_crc(const void *hdr, __u32 hdr_len, __u32 crc_off, const void *tail,
		     __u32 tail_len)
{
	static const __u32 zero;
	__u32 crc = ~0U;

	crc = flaz_crc32c(crc, hdr, crc_off);
	crc = flaz_crc32c(crc, &zero, sizeof(zero));
	crc = flaz_crc32c(crc, (const char *)hdr + crc_off + sizeof(zero),
			  hdr_len - crc_off - sizeof(zero));
	if (tail_len)
		crc = flaz_crc32c(crc, tail, tail_len);
	return ~crc;
}

void flaz_slot_encode(void *slot, struct flaz_slot_info *info)
{
	struct flaz_slot_hdr *h = slot;

	h->magic = cpu_to_le32(FLAZ_SLOT_MAGIC);
	h->crc = 0;
	h->block = cpu_to_le64(info->block);
	h->seq = cpu_to_le64(info->seq);
	h->line = cpu_to_le32(info->line);
	h->len = cpu_to_le16(info->len);
	h->flags = info->flags;
	h->codec = info->codec;
	h->crc = cpu_to_le32(hdr_crc(h, sizeof(*h), offsetof(struct flaz_slot_hdr, crc),
				     h + 1, info->len));
	info->bytes = flaz_slot_bytes(info->len);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_slot_encode);

int flaz_slot_decode(const void *slot, __u32 avail, struct flaz_slot_info *info)
{
	const struct flaz_slot_hdr *h = slot;
	__u32 len;

	if (avail < sizeof(*h) || le32_to_cpu(h->magic) != FLAZ_SLOT_MAGIC)
		return -EILSEQ;
	len = le16_to_cpu(h->len);
	if (!len || len > FLAZ_BLOCK_SIZE || flaz_slot_bytes(len) > avail ||
	    (h->flags & ~FLAZ_SLOT_FLAGS) ||
	    ((h->flags & FLAZ_SLOT_RAW) && len != FLAZ_BLOCK_SIZE) ||
	    ((h->flags & FLAZ_SLOT_HOT) && !(h->flags & FLAZ_SLOT_RAW)))
		return -EILSEQ;
	if (le32_to_cpu(h->crc) != hdr_crc(h, sizeof(*h),
					   offsetof(struct flaz_slot_hdr, crc), h + 1, len))
		return -EILSEQ;
	info->block = le64_to_cpu(h->block);
	info->seq = le64_to_cpu(h->seq);
	info->line = le32_to_cpu(h->line);
	info->len = len;
	info->bytes = flaz_slot_bytes(len);
	info->flags = h->flags;
	info->codec = h->codec;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_slot_decode);

void flaz_extent_encode(void *ext, __u64 seq, __u32 extent, __u32 used, __u32 nr_slots)
{
	struct flaz_extent_hdr *h = ext;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(FLAZ_EXTENT_MAGIC);
	h->seq = cpu_to_le64(seq);
	h->extent = cpu_to_le32(extent);
	h->used = cpu_to_le32(used);
	h->nr_slots = cpu_to_le32(nr_slots);
	h->crc = cpu_to_le32(hdr_crc(h, sizeof(*h), offsetof(struct flaz_extent_hdr, crc),
				     NULL, 0));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_extent_encode);

int flaz_extent_decode(const void *ext, __u32 extent_bytes, __u32 extent, __u32 *used,
		       __u32 *nr_slots)
{
	const struct flaz_extent_hdr *h = ext;

	if (le32_to_cpu(h->magic) != FLAZ_EXTENT_MAGIC ||
	    le32_to_cpu(h->crc) != hdr_crc(h, sizeof(*h),
					   offsetof(struct flaz_extent_hdr, crc), NULL, 0))
		return -EILSEQ;
	*used = le32_to_cpu(h->used);
	*nr_slots = le32_to_cpu(h->nr_slots);
	if (le32_to_cpu(h->extent) != extent || *used < sizeof(*h) ||
	    *used > extent_bytes || (*used & (FLAZ_SLOT_ALIGN - 1)))
		return -EILSEQ;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_extent_decode);

int flaz_extent_next(const void *ext, __u32 used, __u32 *off, struct flaz_slot_info *info)
{
	int r;

	if (!*off)
		*off = sizeof(struct flaz_extent_hdr);
	if (*off >= used)
		return 0;
	r = flaz_slot_decode((const char *)ext + *off, used - *off, info);
	if (r)
		return r;
	*off += info->bytes;
	return 1;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_extent_next);

static_assert(sizeof(struct flaz_sb) == FLAZ_SB_HDR_BYTES, "superblock header size");
static_assert(sizeof(struct flaz_meta_hdr) == 32, "table block header size");
static_assert(sizeof(struct flaz_gen_hdr) == 32, "gen block header size");
static_assert(sizeof(struct flaz_order_hdr) == 40, "order chunk header size");

__u32 flaz_region_shift(__u64 hdd_blocks)
{
	__u32 shift = FLAZ_MIN_REGION_SHIFT;

	while ((hdd_blocks + (1ULL << shift) - 1) >> shift > FLAZ_MAX_REGIONS)
		shift++;
	return shift;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_region_shift);

static __u32 block_crc(const void *blk)
{
	return hdr_crc(blk, 8, 4, (const char *)blk + 8, FLAZ_BLOCK_SIZE - 8);
}

void flaz_sb_encode(void *blk, const struct flaz_sb_info *info, const void *bitmap)
{
	struct flaz_sb *sb = blk;
	const struct flaz_geometry *g = &info->geo;

	memset(sb, 0, FLAZ_SB_HDR_BYTES);
	sb->magic = cpu_to_le32(FLAZ_SB_MAGIC);
	sb->version = cpu_to_le32(FLAZ_SB_VERSION);
	sb->flags = cpu_to_le32(info->flags);
	sb->seq = cpu_to_le64(info->seq);
	sb->gen = cpu_to_le64(info->gen);
	memcpy(sb->uuid, info->uuid, sizeof(sb->uuid));
	sb->ssd_sectors = cpu_to_le64(g->ssd_sectors);
	sb->hdd_sectors = cpu_to_le64(info->hdd_sectors);
	sb->extent_kib = cpu_to_le32(info->extent_kib);
	sb->overbook = cpu_to_le32(info->overbook);
	sb->nr_lines = cpu_to_le64(g->nr_lines);
	sb->nr_extents = cpu_to_le64(g->nr_extents);
	sb->meta_start = cpu_to_le64(g->meta_start);
	sb->meta_sectors = cpu_to_le64(g->meta_sectors);
	sb->data_start = cpu_to_le64(g->data_start);
	sb->codec = cpu_to_le32(info->codec);
	sb->region_shift = cpu_to_le32(info->region_shift);
	sb->nr_regions = cpu_to_le32(info->nr_regions);
	sb->hdd_fp = cpu_to_le32(info->hdd_fp);
	sb->commit = cpu_to_le64(info->commit);
	sb->next_seq = cpu_to_le64(info->next_seq);
	sb->cold_codec = cpu_to_le32(info->cold_codec);
	sb->order_first = cpu_to_le32(info->order_first);
	sb->order_extents = cpu_to_le32(info->order_extents);
	memcpy((char *)blk + FLAZ_SB_HDR_BYTES, bitmap, FLAZ_SB_BITMAP_BYTES);
	sb->crc = cpu_to_le32(block_crc(blk));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_sb_encode);

static int all_zero(const void *p, __u32 len)
{
	const unsigned char *b = p;

	while (len--)
		if (*b++)
			return 0;
	return 1;
}

int flaz_sb_other_version(const void *blk)
{
	const struct flaz_sb *sb = blk;

	return le32_to_cpu(sb->magic) == FLAZ_SB_MAGIC &&
	       le32_to_cpu(sb->version) != FLAZ_SB_VERSION &&
	       le32_to_cpu(sb->crc) == block_crc(blk);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_sb_other_version);

int flaz_sb_decode(const void *blk, struct flaz_sb_info *info)
{
	const struct flaz_sb *sb = blk;
	struct flaz_geometry *g = &info->geo;
	__u64 hdd_blocks;

	if (all_zero(blk, FLAZ_BLOCK_SIZE))
		return -ENODATA;
	if (le32_to_cpu(sb->magic) != FLAZ_SB_MAGIC ||
	    le32_to_cpu(sb->version) != FLAZ_SB_VERSION ||
	    le32_to_cpu(sb->crc) != block_crc(blk))
		return -EILSEQ;
	info->flags = le32_to_cpu(sb->flags);
	info->seq = le64_to_cpu(sb->seq);
	info->gen = le64_to_cpu(sb->gen);
	memcpy(info->uuid, sb->uuid, sizeof(info->uuid));
	info->hdd_sectors = le64_to_cpu(sb->hdd_sectors);
	info->extent_kib = le32_to_cpu(sb->extent_kib);
	info->overbook = le32_to_cpu(sb->overbook);
	info->codec = le32_to_cpu(sb->codec);
	info->region_shift = le32_to_cpu(sb->region_shift);
	info->nr_regions = le32_to_cpu(sb->nr_regions);
	info->hdd_fp = le32_to_cpu(sb->hdd_fp);
	info->commit = le64_to_cpu(sb->commit);
	info->next_seq = le64_to_cpu(sb->next_seq);
	info->cold_codec = le32_to_cpu(sb->cold_codec);
	info->order_first = le32_to_cpu(sb->order_first);
	info->order_extents = le32_to_cpu(sb->order_extents);
	if (info->flags & ~FLAZ_SB_FLAGS)
		return -EILSEQ;
	/* Derived fields must be what this code derives: a check, not a source. */
	if (flaz_geometry_init(g, le64_to_cpu(sb->ssd_sectors), info->extent_kib,
			       info->overbook) ||
	    g->nr_lines != le64_to_cpu(sb->nr_lines) ||
	    g->nr_extents != le64_to_cpu(sb->nr_extents) ||
	    g->meta_start != le64_to_cpu(sb->meta_start) ||
	    g->meta_sectors != le64_to_cpu(sb->meta_sectors) ||
	    g->data_start != le64_to_cpu(sb->data_start))
		return -EILSEQ;
	hdd_blocks = info->hdd_sectors >> (FLAZ_BLOCK_SHIFT - FLAZ_SECTOR_SHIFT);
	if (!hdd_blocks || info->region_shift != flaz_region_shift(hdd_blocks) ||
	    info->nr_regions != (hdd_blocks + (1ULL << info->region_shift) - 1) >>
				info->region_shift)
		return -EILSEQ;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_sb_decode);

void flaz_meta_encode(void *blk, __u64 gen, __u64 commit, __u32 index,
		      const __u64 *entries)
{
	struct flaz_meta_hdr *h = blk;
	__le64 *out = (__le64 *)(h + 1);
	__u32 i;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(FLAZ_META_MAGIC);
	h->gen = cpu_to_le64(gen);
	h->commit = cpu_to_le64(commit);
	h->index = cpu_to_le32(index);
	for (i = 0; i < FLAZ_META_ENTRIES; i++)
		out[i] = cpu_to_le64(entries[i]);
	h->crc = cpu_to_le32(block_crc(blk));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_meta_encode);

int flaz_meta_decode(const void *blk, __u64 gen, __u32 index, __u64 *commit,
		     __u64 *entries)
{
	const struct flaz_meta_hdr *h = blk;
	const __le64 *in = (const __le64 *)(h + 1);
	__u32 i;

	if (le32_to_cpu(h->magic) != FLAZ_META_MAGIC)
		return -ENODATA;
	if (le32_to_cpu(h->crc) != block_crc(blk))
		return -EILSEQ;
	if (le64_to_cpu(h->gen) != gen)
		return -ENODATA;
	if (le32_to_cpu(h->index) != index)
		return -EILSEQ;
	*commit = le64_to_cpu(h->commit);
	for (i = 0; i < FLAZ_META_ENTRIES; i++)
		entries[i] = le64_to_cpu(in[i]);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_meta_decode);

void flaz_gen_encode(void *blk, __u64 gen, __u64 commit, __u32 index, const __u16 *gens)
{
	struct flaz_gen_hdr *h = blk;
	__le16 *out = (__le16 *)(h + 1);
	__u32 i;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(FLAZ_GEN_MAGIC);
	h->gen = cpu_to_le64(gen);
	h->commit = cpu_to_le64(commit);
	h->index = cpu_to_le32(index);
	for (i = 0; i < FLAZ_GEN_ENTRIES; i++)
		out[i] = cpu_to_le16(gens[i]);
	h->crc = cpu_to_le32(block_crc(blk));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_gen_encode);

int flaz_gen_decode(const void *blk, __u64 gen, __u32 index, __u64 *commit, __u16 *gens)
{
	const struct flaz_gen_hdr *h = blk;
	const __le16 *in = (const __le16 *)(h + 1);
	__u32 i;

	if (le32_to_cpu(h->magic) != FLAZ_GEN_MAGIC)
		return -ENODATA;
	if (le32_to_cpu(h->crc) != block_crc(blk))
		return -EILSEQ;
	if (le64_to_cpu(h->gen) != gen)
		return -ENODATA;
	if (le32_to_cpu(h->index) != index)
		return -EILSEQ;
	*commit = le64_to_cpu(h->commit);
	for (i = 0; i < FLAZ_GEN_ENTRIES; i++)
		gens[i] = le16_to_cpu(in[i]);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_gen_decode);

void flaz_order_encode(void *ext, __u64 gen, __u64 commit, __u32 index, __u32 next,
		       __u32 bytes)
{
	struct flaz_order_hdr *h = ext;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(FLAZ_ORDER_MAGIC);
	h->gen = cpu_to_le64(gen);
	h->commit = cpu_to_le64(commit);
	h->index = cpu_to_le32(index);
	h->next = cpu_to_le32(next);
	h->bytes = cpu_to_le32(bytes);
	h->crc = cpu_to_le32(hdr_crc(h, sizeof(*h), offsetof(struct flaz_order_hdr, crc),
				     h + 1, bytes));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_order_encode);

int flaz_order_decode(const void *ext, __u32 extent_bytes, __u64 gen, __u64 commit,
		      __u32 index, __u32 *next, __u32 *bytes)
{
	const struct flaz_order_hdr *h = ext;
	__u32 n = le32_to_cpu(h->bytes);

	if (le32_to_cpu(h->magic) != FLAZ_ORDER_MAGIC || n > extent_bytes - sizeof(*h) ||
	    le32_to_cpu(h->crc) != hdr_crc(h, sizeof(*h), offsetof(struct flaz_order_hdr, crc),
					   h + 1, n) ||
	    le64_to_cpu(h->gen) != gen || le64_to_cpu(h->commit) != commit ||
	    le32_to_cpu(h->index) != index)
		return -EILSEQ;
	*next = le32_to_cpu(h->next);
	*bytes = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_order_decode);

/* Fixed by the format: 8 bits of size, 13 of offset at most, 30 of extent. */
static_assert(FLAZ_MAX_EXTENT_KIB * 1024 / FLAZ_SLOT_ALIGN <= 1U << 13, "entry offset bits");
static_assert(FLAZ_MAX_EXTENTS == 1U << 30, "entry extent bits");
static_assert(FLAZ_BLOCK_SIZE == 1U << FLAZ_BLOCK_SHIFT, "block size");
static_assert(ENTRY_OFF_SHIFT + 13 + 30 + 1 + FLAZ_TAG_BITS + 8 <= 64,
	      "at least 8 bits of generation");

__u64 flaz_entry_pack(const struct flaz_entry_info *e, const struct flaz_geometry *g)
{
	__u32 pos = ENTRY_OFF_SHIFT;
	__u64 v = e->units & 0xff;

	if (!e->units)
		return 0;
	if (e->units == FLAZ_ENTRY_ZERO_UNITS)
		return v | e->tag << ENTRY_OFF_SHIFT;
	v |= (__u64)(e->off / FLAZ_SLOT_ALIGN & ENTRY_MASK(g->off_bits)) << pos;
	pos += g->off_bits;
	v |= (__u64)(e->ext & ENTRY_MASK(g->ext_bits)) << pos;
	pos += g->ext_bits;
	v |= (__u64)!!e->cold << pos;
	pos += 1;
	v |= (e->tag & ENTRY_MASK(FLAZ_TAG_BITS)) << pos;
	pos += FLAZ_TAG_BITS;
	v |= (__u64)(e->gen & ENTRY_MASK(g->gen_bits)) << pos;
	return v;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_entry_pack);

void flaz_entry_unpack(__u64 v, const struct flaz_geometry *g, struct flaz_entry_info *e)
{
	__u32 pos = ENTRY_OFF_SHIFT;

	memset(e, 0, sizeof(*e));
	e->units = v & 0xff;
	if (e->units == FLAZ_ENTRY_ZERO_UNITS) {
		e->tag = v >> ENTRY_OFF_SHIFT;
	} else if (e->units) {
		e->off = ((v >> pos) & ENTRY_MASK(g->off_bits)) * FLAZ_SLOT_ALIGN;
		pos += g->off_bits;
		e->ext = (v >> pos) & ENTRY_MASK(g->ext_bits);
		pos += g->ext_bits;
		e->cold = (v >> pos) & 1;
		pos += 1;
		e->tag = (v >> pos) & ENTRY_MASK(FLAZ_TAG_BITS);
		pos += FLAZ_TAG_BITS;
		e->gen = (v >> pos) & ENTRY_MASK(g->gen_bits);
	}
}
EXPORT_SYMBOL_IF_KUNIT(flaz_entry_unpack);

int flaz_entry_valid(const struct flaz_entry_info *e, const struct flaz_geometry *g,
		     __u64 line, __u64 hdd_blocks)
{
	__u32 extent_bytes = g->extent_sectors << FLAZ_SECTOR_SHIFT;
	__u32 bytes = e->units * FLAZ_SLOT_ALIGN;
	__u64 max_tag;

	if (line >= g->nr_lines)
		return 0;
	if (!e->units)
		return 1;
	if (line >= hdd_blocks)
		return 0;
	max_tag = div64_u64(hdd_blocks - 1 - line, g->nr_lines);
	if (e->units == FLAZ_ENTRY_ZERO_UNITS)
		return e->tag <= max_tag;
	/* a whole tag must be in range; a cut one is settled by the slot header */
	if (max_tag < 1ULL << FLAZ_TAG_BITS && e->tag > max_tag)
		return 0;
	/* the smallest slot is a header and one byte; the largest a raw block */
	return bytes >= flaz_slot_bytes(1) && bytes <= FLAZ_MAX_SLOT_BYTES &&
	       e->ext < g->nr_extents && e->off >= sizeof(struct flaz_extent_hdr) &&
	       e->off + bytes <= extent_bytes;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_entry_valid);

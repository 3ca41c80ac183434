// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz on-SSD format: pure C, compiled into the module and into flazctl.
 */
#ifdef __KERNEL__
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#else
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
	__u64 meta_bytes = lines_for(nr_extents, blocks_per_extent, overbook) *
			   FLAZ_META_ENTRY_BYTES;

	*meta_sectors = round_up_u64(meta_bytes, FLAZ_BLOCK_SIZE) >> FLAZ_SECTOR_SHIFT;
	return round_up_u64(FLAZ_SB_SECTORS + *meta_sectors, extent_sectors);
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
	__u32 es, bpe;
	__u64 n, per_extent;
	int r;

	r = check_params(extent_kib, overbook);
	if (r)
		return r;
	es = extent_kib * 2;
	bpe = extent_kib / 4;

	/*
	 * Each extent costs its own sectors plus its lines' table entries; start from
	 * that estimate and step to the largest count that fits (rounding moves it by
	 * a few at most).
	 */
	per_extent = es + div64_u64((__u64)bpe * overbook * FLAZ_META_ENTRY_BYTES,
				    100 << FLAZ_SECTOR_SHIFT);
	n = ssd_sectors > FLAZ_SB_SECTORS ?
	    div64_u64(ssd_sectors - FLAZ_SB_SECTORS, per_extent) : 0;
	while (n && !fits(n, ssd_sectors, es, bpe, overbook))
		n--;
	while (fits(n + 1, ssd_sectors, es, bpe, overbook))
		n++;
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
	return 0;
}

__u64 flaz_geometry_min_sectors(__u32 extent_kib, __u32 overbook)
{
	__u64 meta;

	if (check_params(extent_kib, overbook))
		return 0;
	return head_sectors(FLAZ_MIN_EXTENTS, extent_kib * 2, extent_kib / 4,
			    overbook, &meta) + (__u64)FLAZ_MIN_EXTENTS * extent_kib * 2;
}

#ifdef __KERNEL__
__u32 flaz_crc32c(__u32 crc, const void *p, __u32 len)
{
	return crc32c(crc, p, len);
}
#else
/* Bitwise CRC32C (Castagnoli, reflected): flazctl checks little, so no table. */
__u32 flaz_crc32c(__u32 crc, const void *p, __u32 len)
{
	const unsigned char *b = p;
	int k;

	while (len--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
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

int flaz_slot_decode(const void *slot, __u32 avail, struct flaz_slot_info *info)
{
	const struct flaz_slot_hdr *h = slot;
	__u32 len;

	if (avail < sizeof(*h) || le32_to_cpu(h->magic) != FLAZ_SLOT_MAGIC)
		return -EILSEQ;
	len = le16_to_cpu(h->len);
	if (!len || len > FLAZ_BLOCK_SIZE || flaz_slot_bytes(len) > avail ||
	    (h->flags & ~FLAZ_SLOT_FLAGS) ||
	    ((h->flags & FLAZ_SLOT_RAW) && len != FLAZ_BLOCK_SIZE))
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

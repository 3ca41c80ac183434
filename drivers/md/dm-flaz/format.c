// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz on-SSD format: pure C, compiled into the module and into flazctl.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/math64.h>
#else
#include <errno.h>
#define div64_u64(a, b) ((a) / (b))
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

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz cleaner policy: the cleaner's decisions as plain functions of the
 * numbers it gathers (cleaner.c), so they can be tested on their own
 * (cleaner_test.c): how the moved slots are packed, which victims stay where
 * they are for a lap more, and what a move does to a slot's coding.
 */
#include <kunit/visibility.h>
#include <linux/math64.h>
#include <linux/sort.h>

#include "flaz.h"
#include "format.h"

static int cmp_size_desc(const void *a, const void *b)
{
	const struct flaz_move *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

static int cmp_bin_block(const void *a, const void *b)
{
	const struct flaz_move *x = a, *y = b;

	if (x->bin != y->bin)
		return x->bin < y->bin ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

/*
 * Packing: place the @n slots of @mv first-fit decreasing into at most
 * @max_bins extents whose slots start at @base and end at @size. Each gets a
 * bin and an offset, or FLAZ_NO_BIN when none has room; @mv is left sorted by
 * bin, then block, so neighbours sit side by side. @fill holds @max_bins
 * values. Returns the number of bins used.
 */
u32 flaz_cleaner_pack(struct flaz_move *mv, u32 n, u32 base, u32 size, u32 max_bins,
		      u32 *fill)
{
	u32 i, b, bins = 0;

	sort(mv, n, sizeof(*mv), cmp_size_desc, NULL);
	for (i = 0; i < n; i++) {
		mv[i].bin = FLAZ_NO_BIN;
		for (b = 0; b < bins; b++)
			if (fill[b] + mv[i].bytes <= size - base)
				break;
		if (b == bins) {
			if (bins == max_bins || mv[i].bytes > size - base)
				continue;
			fill[bins++] = 0;
		}
		fill[b] += mv[i].bytes;
		mv[i].bin = b;
	}
	sort(mv, n, sizeof(*mv), cmp_bin_block, NULL);
	for (i = 0; i < n; i++) {
		if (mv[i].bin == FLAZ_NO_BIN)
			break;
		if (!i || mv[i].bin != mv[i - 1].bin)
			fill[mv[i].bin] = base;
		mv[i].off = fill[mv[i].bin];
		fill[mv[i].bin] += mv[i].bytes;
	}
	return bins;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_cleaner_pack);

/*
 * Whether an extent whose hit slots take @hot of the @room bytes it has for
 * slots stays as it is rather than being compacted: when moving them would
 * free less than a quarter of it. Against its room, not its live bytes: one
 * mostly dead frees much, however hit the few live slots are.
 */
bool flaz_cleaner_keep(u32 hot, u32 room)
{
	return hot && (u64)hot * 4 >= (u64)room * 3;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_cleaner_keep);

/*
 * Stage two's fate for one of the oldest extents. With @spare (compaction goes
 * on, and the extent is within a lap of them), one @hit (hit since it was
 * judged, or holding slots a pass moved or kept) is passed over: mostly live
 * (@live bytes of @room, as flaz_cleaner_keep() judges hit bytes), a lap more
 * at main's tail; else back to its FIFO's head for the next pass to compact,
 * while the window has @head_room. Any other goes whole: a fast stream of fills
 * must not drop the hot set whole, nor hold dead bytes for a lap.
 */
enum flaz_fate flaz_stage_two_fate(bool spare, bool hit, u32 live, u32 room, bool head_room)
{
	if (!spare || !hit)
		return FLAZ_FATE_EVICT;
	if (flaz_cleaner_keep(live, room))
		return FLAZ_FATE_TAIL;
	return head_room ? FLAZ_FATE_HEAD : FLAZ_FATE_EVICT;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_stage_two_fate);

/*
 * Recoding: a move of a slot with header @flags whose line is @hot (its heat at
 * the top, hot_uncompressed on) stores it raw, flagged hot, when it is
 * compressed and there is @room under hot_max_percent; one stored raw because
 * it was hot that no longer is goes back to compressed; a compressed one that
 * is not hot goes to the cold codec when @cold (one is set, and the slot is in
 * the volume's own codec). Others move as they are.
 */
enum flaz_recode flaz_cleaner_recode(u8 flags, bool hot, bool room, bool cold)
{
	if (hot && !(flags & FLAZ_SLOT_RAW))
		return room ? FLAZ_RECODE_HOT : FLAZ_RECODE_COPY;
	if (!hot && (flags & FLAZ_SLOT_HOT))
		return FLAZ_RECODE_COOL;
	if (!hot && cold && !(flags & FLAZ_SLOT_RAW))
		return FLAZ_RECODE_COLD;
	return FLAZ_RECODE_COPY;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_cleaner_recode);

/* Hot raw slots allowed: @percent of what @nr_extents extents of @extent_bytes hold of them. */
u64 flaz_cleaner_hot_limit(u64 nr_extents, u32 extent_bytes, u32 percent)
{
	u32 per = (extent_bytes - sizeof(struct flaz_extent_hdr)) / FLAZ_MAX_SLOT_BYTES;

	return div_u64(nr_extents * per * percent, 100);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_cleaner_hot_limit);

/*
 * The watermarks' levels in free extents of @total of @extent_bytes: @low_pct
 * and @high_pct percent of them, the low level at most @cap bytes and the high
 * one scaled with it, so that cleaning goes on as long as a percent would have
 * it go (high / low), but from a level sized to take fills, not to the SSD.
 */
void flaz_watermark_levels(u32 total, u32 extent_bytes, u32 low_pct, u32 high_pct, u64 cap,
			   u32 *low, u32 *high)
{
	u64 l = div_u64((u64)total * low_pct, 100);
	u64 h = div_u64((u64)total * high_pct, 100);
	u64 most = div_u64(cap, extent_bytes);

	if (l > most) {
		h = div64_u64(h * most, l);
		l = most;
	}
	*low = l;
	*high = h;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_watermark_levels);

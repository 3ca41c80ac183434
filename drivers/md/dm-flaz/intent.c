// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz write-intent regions: what keeps a crash from leaving stale slots.
 *
 * The HDD is divided into regions; a region's bit in the superblock's bitmap is
 * made durable before the HDD sees the first write to it, and cleared only by a
 * commit whose table was taken after every write to the region had completed
 * (and the HDD flushed). After a crash, lines in marked regions are dropped, so
 * a slot survives only if no write to its block can have escaped the table.
 * The same idea as md's write-intent bitmap (md-bitmap.c), with the commit in the
 * role of the resync.
 *
 * A bit is cleared lazily: only when the region stayed untouched from the start
 * of the previous commit to the end of this one, and for a whole age before
 * that (the caller says when one begins: meta.c, every second), so a
 * region written now and then costs one superblock write, not one per write
 * (md keeps its bits a few daemon periods after the last write likewise).
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/bitmap.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "flaz.h"
#include "format.h"

struct flaz_intent {
	spinlock_t lock;	/* irq-safe: writes end in interrupt context */
	u32 shift;
	u32 nr;
	unsigned long *bits;	/* marked in memory: what the next superblock carries */
	unsigned long *durable;	/* marked on the SSD */
	unsigned long *touched;	/* written since the last commit began */
	unsigned long *recent;	/* written in this age, before the last commit began */
	unsigned long *older;	/* written in the age before */
	unsigned long *clearable;
	u32 *inflight;		/* writes started and not yet ended */
	struct bio_list waiting;	/* writes until their bits are durable */
};

struct flaz_intent *flaz_intent_create(u64 hdd_blocks)
{
	struct flaz_intent *in;

	in = kzalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return NULL;
	spin_lock_init(&in->lock);
	bio_list_init(&in->waiting);
	in->shift = flaz_region_shift(hdd_blocks);
	in->nr = DIV_ROUND_UP_ULL(hdd_blocks, 1ULL << in->shift);
	in->bits = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->durable = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->touched = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->recent = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->older = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->clearable = bitmap_zalloc(FLAZ_MAX_REGIONS, GFP_KERNEL);
	in->inflight = kcalloc(in->nr, sizeof(u32), GFP_KERNEL);
	if (!in->bits || !in->durable || !in->touched || !in->recent || !in->older ||
	    !in->clearable || !in->inflight) {
		flaz_intent_destroy(in);
		return NULL;
	}
	return in;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_create);

void flaz_intent_destroy(struct flaz_intent *in)
{
	if (!in)
		return;
	WARN_ON_ONCE(!bio_list_empty(&in->waiting));
	kfree(in->inflight);
	bitmap_free(in->clearable);
	bitmap_free(in->older);
	bitmap_free(in->recent);
	bitmap_free(in->touched);
	bitmap_free(in->durable);
	bitmap_free(in->bits);
	kfree(in);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_destroy);

/* DRAM the regions take: six bitmaps, a count per region, the struct. */
u64 flaz_intent_bytes(struct flaz_intent *in)
{
	return sizeof(*in) + 6 * BITS_TO_LONGS(FLAZ_MAX_REGIONS) * sizeof(long) +
	       (u64)in->nr * sizeof(u32);
}

u32 flaz_intent_shift(struct flaz_intent *in)
{
	return in->shift;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_shift);

u32 flaz_intent_nr(struct flaz_intent *in)
{
	return in->nr;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_nr);

/*
 * The bitmap as found on the SSD (FLAZ_SB_BITMAP_BYTES, little-endian bits): at
 * load, or a new generation's (sb.c meta_format()), which may come while writes
 * are in flight or waiting for a mark. Their regions are added to @bitmap, for
 * the new generation's first superblock to carry before any commit, and stay
 * marked and touched in memory, so no commit clears them before their writes
 * end; durable is only what the SSD held.
 */
void flaz_intent_load(struct flaz_intent *in, void *bitmap)
{
	unsigned long flags;
	u8 *b = bitmap;
	u32 r;

	spin_lock_irqsave(&in->lock, flags);
	bitmap_zero(in->bits, FLAZ_MAX_REGIONS);
	bitmap_zero(in->durable, FLAZ_MAX_REGIONS);
	bitmap_zero(in->touched, FLAZ_MAX_REGIONS);
	bitmap_zero(in->recent, FLAZ_MAX_REGIONS);
	bitmap_zero(in->older, FLAZ_MAX_REGIONS);
	for (r = 0; r < in->nr; r++) {
		if (b[r / 8] & (1U << (r % 8))) {
			__set_bit(r, in->bits);
			__set_bit(r, in->durable);
		}
		if (in->inflight[r]) {
			__set_bit(r, in->bits);
			__set_bit(r, in->touched);
			b[r / 8] |= 1U << (r % 8);
		}
	}
	spin_unlock_irqrestore(&in->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_load);

/* Whether HDD block @block lies in a marked region (page-ins ask, I/O may run). */
bool flaz_intent_marked(struct flaz_intent *in, u64 block)
{
	u64 r = block >> in->shift;

	return r < in->nr && test_bit(r, in->bits);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_marked);

u32 flaz_intent_nr_marked(struct flaz_intent *in)
{
	return bitmap_weight(in->bits, in->nr);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_nr_marked);

/*
 * A write to blocks @first..@last starts. Returns true when it may go to the
 * HDD now; false when @bio was queued until a superblock carrying its regions'
 * bits is on the SSD (the caller kicks that write).
 */
bool flaz_intent_start(struct flaz_intent *in, u64 first, u64 last, struct bio *bio)
{
	u64 r, end = min_t(u64, last >> in->shift, in->nr - 1);
	unsigned long flags;
	bool ready = true;

	spin_lock_irqsave(&in->lock, flags);
	for (r = first >> in->shift; r <= end; r++) {
		in->inflight[r]++;
		__set_bit(r, in->touched);
		__set_bit(r, in->bits);
		if (!test_bit(r, in->durable))
			ready = false;
	}
	if (!ready)
		bio_list_add(&in->waiting, bio);
	spin_unlock_irqrestore(&in->lock, flags);
	return ready;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_start);

/*
 * A write to blocks @first..@last starts in passthrough, unmarked: counted in
 * flight all the same, so that once the mode is normal again no commit clears
 * a region under it, and a new generation keeps it marked (flaz_intent_load()).
 * It ends with flaz_intent_end().
 */
void flaz_intent_track(struct flaz_intent *in, u64 first, u64 last)
{
	u64 r, end = min_t(u64, last >> in->shift, in->nr - 1);
	unsigned long flags;

	spin_lock_irqsave(&in->lock, flags);
	for (r = first >> in->shift; r <= end; r++)
		in->inflight[r]++;
	spin_unlock_irqrestore(&in->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_track);

void flaz_intent_end(struct flaz_intent *in, u64 first, u64 last)
{
	u64 r, end = min_t(u64, last >> in->shift, in->nr - 1);
	unsigned long flags;

	spin_lock_irqsave(&in->lock, flags);
	for (r = first >> in->shift; r <= end; r++)
		if (!WARN_ON_ONCE(!in->inflight[r]))
			in->inflight[r]--;
	spin_unlock_irqrestore(&in->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_end);

bool flaz_intent_waiting(struct flaz_intent *in)
{
	unsigned long flags;
	bool any;

	spin_lock_irqsave(&in->lock, flags);
	any = !bio_list_empty(&in->waiting);
	spin_unlock_irqrestore(&in->lock, flags);
	return any;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_waiting);

/*
 * A commit begins: regions marked, idle now and untouched since the previous
 * commit began, in this age and in the one before, may be cleared when this
 * one is on the SSD. With @age a new age begins (after the clearable ones are
 * taken), so a region is cleared at the earliest a whole age after its last
 * write. Returns whether any region may be cleared.
 */
bool flaz_intent_commit_begin(struct flaz_intent *in, bool age)
{
	unsigned long flags;
	bool any;
	u32 r;

	spin_lock_irqsave(&in->lock, flags);
	bitmap_andnot(in->clearable, in->bits, in->touched, in->nr);
	bitmap_andnot(in->clearable, in->clearable, in->recent, in->nr);
	bitmap_andnot(in->clearable, in->clearable, in->older, in->nr);
	for_each_set_bit(r, in->clearable, in->nr)
		if (in->inflight[r])
			__clear_bit(r, in->clearable);
	bitmap_or(in->recent, in->recent, in->touched, in->nr);
	bitmap_zero(in->touched, FLAZ_MAX_REGIONS);
	if (age) {
		bitmap_copy(in->older, in->recent, in->nr);
		bitmap_zero(in->recent, FLAZ_MAX_REGIONS);
	}
	any = !bitmap_empty(in->clearable, in->nr);
	spin_unlock_irqrestore(&in->lock, flags);
	return any;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_commit_begin);

/*
 * Fill @bitmap (FLAZ_SB_BITMAP_BYTES) for the next superblock and take the
 * writes it lets go (flaz_intent_written() once it is durable). With @commit,
 * the table written since flaz_intent_commit_begin() covers every write to the
 * clearable regions that stayed untouched, so those are cleared; with @all,
 * every region is (a clean stop: nothing is in flight).
 */
void flaz_intent_snapshot(struct flaz_intent *in, bool commit, bool all, void *bitmap,
			  struct bio_list *released)
{
	unsigned long flags;
	u8 *b = bitmap;
	u32 r;

	memset(b, 0, FLAZ_SB_BITMAP_BYTES);
	spin_lock_irqsave(&in->lock, flags);
	if (all) {
		bitmap_zero(in->bits, FLAZ_MAX_REGIONS);
		bitmap_zero(in->durable, FLAZ_MAX_REGIONS);
	} else if (commit) {
		bitmap_andnot(in->clearable, in->clearable, in->touched, in->nr);
		/* cleared on the SSD from now on: a new write must wait for a new mark */
		bitmap_andnot(in->bits, in->bits, in->clearable, in->nr);
		bitmap_andnot(in->durable, in->durable, in->clearable, in->nr);
	}
	for_each_set_bit(r, in->bits, in->nr)
		b[r / 8] |= 1U << (r % 8);
	bio_list_merge(released, &in->waiting);
	bio_list_init(&in->waiting);
	spin_unlock_irqrestore(&in->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_snapshot);

/*
 * The superblock that would have let @bios go did not reach the SSD: they wait
 * again, ahead of later writes.
 */
void flaz_intent_hold(struct flaz_intent *in, struct bio_list *bios)
{
	unsigned long flags;

	spin_lock_irqsave(&in->lock, flags);
	bio_list_merge_head(&in->waiting, bios);
	spin_unlock_irqrestore(&in->lock, flags);
	bio_list_init(bios);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_hold);

/* The superblock filled from @bitmap is on the SSD. */
void flaz_intent_written(struct flaz_intent *in, const void *bitmap)
{
	const u8 *b = bitmap;
	unsigned long flags;
	u32 r;

	spin_lock_irqsave(&in->lock, flags);
	for (r = 0; r < in->nr; r++)
		if (b[r / 8] & (1U << (r % 8)))
			__set_bit(r, in->durable);
	spin_unlock_irqrestore(&in->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_intent_written);

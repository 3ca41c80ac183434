// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz eviction, the cleaner's second stage: extents go whole, unread, in
 * O(1) each (a new generation, l2p.c), freed after the next commit (meta.c).
 * The cleaner calls it in a rush (below half of low_watermark, or when a fill
 * found no free extent), out of normal mode, with the cleaner off, while
 * recovering or without memory for a pass; in a rush with the cleaner on, hit
 * extents are passed over, as cleaner.c says.
 */
#include <linux/bitmap.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "evict.h"

#define EVICT_BATCH		64	/* extents taken at a time */

/*
 * Extent @id goes: a new generation voids every line into it (O(1)), freed
 * after the next commit; its hot slots with it. Returns the lines it held.
 */
static u32 evict_extent(struct flaz_evict *ev, u32 id)
{
	u32 n;

	atomic64_sub(ev->hot[id], &ev->hot_total);
	ev->hot[id] = 0;
	clear_bit(id, ev->kept);
	clear_bit(id, ev->c->hit);
	n = flaz_meta_evict(ev->c->meta, id);
	flaz_alloc_retire(ev->c->alloc, id);
	return n;
}

/* Evict extents set in ev->victims, freed after a commit: O(1) each. */
void flaz_evict_victims(struct flaz_evict *ev)
{
	struct flaz_cache *c = ev->c;
	u32 total = c->geo->nr_extents;
	u64 lines = 0;
	u32 id;

	if (bitmap_empty(ev->victims, total))
		return;
	for_each_set_bit(id, ev->victims, total) {
		clear_bit(id, c->failed);
		clear_bit(id, ev->victims);
		lines += evict_extent(ev, id);
	}
	flaz_stats_add(c->stats, FLAZ_STAT_EVICTIONS, lines);
	flaz_meta_kick(c->meta);
}

/*
 * Stage two: up to @want of the oldest extents go whole, and failed ones.
 * With @spare, while compaction goes on, hit ones are passed over, a lap of
 * the extents at most, as flaz_stage_two_fate() says. Returns how many went.
 */
u32 flaz_evict_oldest(struct flaz_evict *ev, u32 want, bool spare)
{
	struct flaz_cache *c = ev->c;
	u32 ids[EVICT_BATCH], spared[2] = {};
	u32 n, i, id, done = 0, seen = 0;
	bool prob, hit;

	mutex_lock(&ev->lock);
	while (done < want) {
		n = flaz_alloc_take_oldest(c->alloc, ids, min_t(u32, want - done, EVICT_BATCH),
					   spared[1], &prob);
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			hit = test_bit(ids[i], ev->kept) || test_bit(ids[i], c->hit);
			switch (flaz_stage_two_fate(spare && seen++ < c->geo->nr_extents, hit,
						    flaz_l2p_live(c->l2p, ids[i]),
						    flaz_extent_room(c),
						    spared[prob] < ev->window)) {
			case FLAZ_FATE_TAIL:
				/*
				 * CLOCK's lap more, as if kept. From probation that
				 * promotes it whole, unread, its slots not hit too:
				 * under pressure there is no time to read it, and
				 * main's next reclaim drops what was not hit.
				 */
				clear_bit(ids[i], c->hit);
				clear_bit(ids[i], ev->kept);
				if (prob)
					flaz_stats_add(c->stats, FLAZ_STAT_SLOTS_PROMOTED,
						       flaz_l2p_slots(c->l2p, ids[i]));
				flaz_alloc_written(c->alloc, ids[i], true);
				break;
			case FLAZ_FATE_HEAD:
				/*
				 * Its hit bit stays: the pass reads a victim only
				 * if hit or live, and live counts resident lines
				 * only, so one whose pages are out would go unread.
				 */
				ev->spared[prob][spared[prob]++] = ids[i];
				break;
			case FLAZ_FATE_EVICT:
				set_bit(ids[i], ev->victims);
				done++;
				break;
			}
		}
	}
	flaz_alloc_unget(c->alloc, ev->spared[0], spared[0], false);
	flaz_alloc_unget(c->alloc, ev->spared[1], spared[1], true);
	/* failed extents were never written, so they are in no FIFO */
	for_each_set_bit(id, c->failed, c->geo->nr_extents)
		set_bit(id, ev->victims);
	flaz_evict_victims(ev);
	mutex_unlock(&ev->lock);
	return done;
}

/* Every line dropped, every written extent evicted (emptying the cache). */
void flaz_evict_all(struct flaz_evict *ev)
{
	struct flaz_cache *c = ev->c;
	u32 ids[EVICT_BATCH];
	bool prob;
	u32 n, i;

	mutex_lock(&ev->lock);
	/* zero blocks and lines into open extents are voided by no eviction */
	flaz_l2p_drop_all(c->l2p);
	while ((n = flaz_alloc_take_oldest(c->alloc, ids, EVICT_BATCH, 0, &prob)))
		for (i = 0; i < n; i++)
			evict_extent(ev, ids[i]);
	mutex_unlock(&ev->lock);
}

/* Stage two's state for a cache @c whose passes take @window victims at most. */
int flaz_evict_init(struct flaz_evict *ev, struct flaz_cache *c, u32 window)
{
	u32 total = c->geo->nr_extents;

	ev->c = c;
	ev->window = window;
	mutex_init(&ev->lock);
	ev->victims = bitmap_zalloc(total, GFP_KERNEL);
	ev->kept = bitmap_zalloc(total, GFP_KERNEL);
	ev->spared[0] = kcalloc(2 * window, sizeof(u32), GFP_KERNEL);
	/* an extent holds fewer than 256 raw slots (256 KiB at most) */
	ev->hot = kvzalloc(total, GFP_KERNEL);
	if (!ev->victims || !ev->kept || !ev->spared[0] || !ev->hot) {
		flaz_evict_exit(ev);
		return -ENOMEM;
	}
	ev->spared[1] = ev->spared[0] + window;
	return 0;
}

void flaz_evict_exit(struct flaz_evict *ev)
{
	bitmap_free(ev->victims);
	bitmap_free(ev->kept);
	kfree(ev->spared[0]);
	kvfree(ev->hot);
	mutex_destroy(&ev->lock);
}

/* DRAM it takes: two bitmaps, the hot counts, the spared extents. */
u64 flaz_evict_bytes(struct flaz_evict *ev)
{
	u64 nr = ev->c->geo->nr_extents;

	return 2 * BITS_TO_LONGS(nr) * sizeof(long) + nr + 2 * ev->window * sizeof(u32);
}

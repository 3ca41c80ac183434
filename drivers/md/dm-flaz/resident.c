// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz table residency: which of the table's pages are in DRAM (l2p.c has
 * the entries and the why). A page comes in empty but for its tombstones, is
 * loaded by paging.c, and goes out only clean, least recently used first (a
 * clock), or marked leaving when only dirty ones are left; and the bookkeeping
 * of what the SSD's table holds for pages that are out.
 */
#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "l2p_priv.h"

u64 flaz_l2p_nr_pages(struct flaz_l2p *t)
{
	return t->nr_pages;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_nr_pages);

u64 flaz_l2p_page_of(u64 line)
{
	return div_u64(line, L2P_PAGE_LINES);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_page_of);

/* Bytes page @p takes resident: as many as any other page. */
u64 flaz_l2p_page_bytes(struct flaz_l2p *t, u64 p)
{
	return t->page_words * sizeof(u64);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_page_bytes);

/* Bytes of the resident pages. */
u64 flaz_l2p_resident_bytes(struct flaz_l2p *t)
{
	return READ_ONCE(t->resident);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_resident_bytes);

static void lock_stripes(struct flaz_l2p *t, u64 p)
{
	u32 i;

	for (i = 0; i < FLAZ_L2P_PAGE_STRIPES; i++)
		spin_lock_nested(page_stripe(t, p, i), i);
}

static void unlock_stripes(struct flaz_l2p *t, u64 p)
{
	u32 i;

	for (i = FLAZ_L2P_PAGE_STRIPES; i-- > 0;)
		spin_unlock(page_stripe(t, p, i));
}

/* Page @p's table blocks: the first, and how many (the last page's may be fewer). */
u32 flaz_l2p_page_blocks(struct flaz_l2p *t, u64 p, u64 *first)
{
	*first = p * FLAZ_L2P_PAGE_BLOCKS;
	return min_t(u64, t->nr_blocks - *first, FLAZ_L2P_PAGE_BLOCKS);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_page_blocks);

/*
 * The tombstone bits of page @p's lines (its lock held, the page just made
 * resident) into tombstones in the page. Their blocks are dirty since the bits
 * were set (a commit takes a block's bit only with its page in), so the next
 * commit writes them without those lines.
 */
static void take_tombs(struct flaz_l2p *t, u64 p)
{
	u64 line = p * L2P_PAGE_LINES;
	u64 slot = p * L2P_PAGE_SLOTS;
	u64 end = slot + min(t->nr_lines - line, L2P_PAGE_LINES);

	for (slot = find_next_bit(t->tombs, end, slot); slot < end;
	     slot = find_next_bit(t->tombs, end, slot + 1)) {
		__clear_bit(slot, t->tombs);
		flaz_l2p_set_raw(t, line + slot - p * L2P_PAGE_SLOTS, L2P_TOMB);
	}
}

/*
 * Make page @p resident and coming, all its lines empty but for tombstones,
 * for the caller to load (flaz_l2p_load()) and then call flaz_l2p_page_done().
 * Callers serialise paging. Returns -ENOMEM, the page left out, without memory.
 */
int flaz_l2p_page_in(struct flaz_l2p *t, u64 p)
{
	u64 bytes = flaz_l2p_page_bytes(t, p);
	/* for a fill: reclaim must not write to the volume it serves */
	unsigned int noio = memalloc_noio_save();
	u64 *page = kmem_cache_zalloc(t->page_cache, GFP_KERNEL);

	memalloc_noio_restore(noio);
	if (!page)
		return -ENOMEM;
	if (WARN_ON_ONCE(t->pages[p])) {
		kmem_cache_free(t->page_cache, page);
		return -EEXIST;
	}
	lock_stripes(t, p);
	t->state[p] |= L2P_COMING;
	t->ref[p] = 1;
	WRITE_ONCE(t->pages[p], page);
	take_tombs(t, p);
	unlock_stripes(t, p);
	WRITE_ONCE(t->resident, t->resident + bytes);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_page_in);

/* Page @p is loaded: writes to its empty lines need no tombstones now. */
void flaz_l2p_page_done(struct flaz_l2p *t, u64 p)
{
	/* after every store of the load: see coming() */
	smp_store_release(&t->state[p], 0);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_page_done);

/* Empty every line of page @p, as a write to each would. */
void flaz_l2p_drop_page(struct flaz_l2p *t, u64 p)
{
	flaz_l2p_drop_pages(t, p, p + 1);
}

/*
 * Page @p out if it is clean: the SSD holds every entry it does. Its entries
 * leave the counters; the SSD's copies of them turn void as their extents are
 * evicted, by generation.
 */
static bool page_out(struct flaz_l2p *t, u64 p)
{
	u64 bytes = flaz_l2p_page_bytes(t, p), first, line, end;
	u32 n = flaz_l2p_page_blocks(t, p, &first);
	struct flaz_entry e;
	u64 *page;

	lock_stripes(t, p);
	page = t->pages[p];
	if (!page || (t->state[p] & L2P_COMING) ||
	    find_next_bit(t->dirty, first + n, first) < first + n) {
		unlock_stripes(t, p);
		return false;
	}
	end = min(t->nr_lines, (p + 1) * L2P_PAGE_LINES);
	for (line = p * L2P_PAGE_LINES; line < end; line++) {
		flaz_l2p_get(t, line, &e);
		flaz_l2p_account(t, &e, -1);
	}
	WRITE_ONCE(t->pages[p], NULL);
	if (t->state[p] & L2P_LEAVING)
		WRITE_ONCE(t->leaving, t->leaving - bytes);
	WRITE_ONCE(t->state[p], 0);
	unlock_stripes(t, p);
	kmem_cache_free(t->page_cache, page);
	WRITE_ONCE(t->resident, t->resident - bytes);
	return true;
}

/* The next page of the clock. */
static u64 next_hand(struct flaz_l2p *t)
{
	u64 p = t->hand;

	t->hand = p + 1 < t->nr_pages ? p + 1 : 0;
	return p;
}

/*
 * Page out clean pages least recently used first (a clock over the pages),
 * until the resident ones take at most @budget bytes. A page goes only clean:
 * when only dirty ones are left, the next ones the clock meets are marked
 * leaving, as many as the excess, so fills stop dirtying them
 * (flaz_l2p_leaving()), and once a commit has written them a later trim takes
 * them; without that, fills under a steady load keep every resident page dirty
 * and none ever goes. Callers serialise paging and have no table block write
 * in flight. O(pages). Returns how many went.
 */
u64 flaz_l2p_trim(struct flaz_l2p *t, u64 budget)
{
	u64 step, p, out = 0;

	/*
	 * Pages an earlier trim marked leaving go first once clean (the clock's
	 * hand has passed them); under the budget again, the rest stay, and fills
	 * may use them again.
	 */
	for (p = 0; t->leaving && p < t->nr_pages; p++) {
		if (!(t->state[p] & L2P_LEAVING))
			continue;
		if (t->resident > budget && page_out(t, p)) {
			out++;
		} else if (t->resident <= budget) {
			WRITE_ONCE(t->state[p], t->state[p] & ~L2P_LEAVING);
			WRITE_ONCE(t->leaving, t->leaving - flaz_l2p_page_bytes(t, p));
		}
		cond_resched();
	}
	/* two rounds: the first may only clear the refs */
	for (step = 0; t->resident > budget && step < 2 * t->nr_pages; step++) {
		p = next_hand(t);
		if (!READ_ONCE(t->pages[p]) || (t->state[p] & (L2P_COMING | L2P_LEAVING)))
			continue;
		if (READ_ONCE(t->ref[p])) {
			WRITE_ONCE(t->ref[p], 0);
			continue;
		}
		if (page_out(t, p))
			out++;
		cond_resched();
	}
	for (step = 0; t->resident - t->leaving > budget && step < t->nr_pages; step++) {
		p = next_hand(t);
		if (!READ_ONCE(t->pages[p]) || (t->state[p] & (L2P_COMING | L2P_LEAVING)))
			continue;
		WRITE_ONCE(t->state[p], t->state[p] | L2P_LEAVING);
		WRITE_ONCE(t->leaving, t->leaving + flaz_l2p_page_bytes(t, p));
	}
	return out;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_trim);

/*
 * Page out clean pages, least recently used first, as flaz_l2p_trim()'s clock
 * does, until the resident ones take at most @budget bytes, meeting at most
 * @steps resident pages and passing at most L2P_ROOM_PASS times as many that
 * are out: room for a page-in at once, where the trim comes only after a
 * commit. Dirty pages stay for that commit; leaving ones go if clean. Callers
 * serialise paging. O(@steps) pages. Returns whether the resident pages fit
 * @budget.
 */
bool flaz_l2p_make_room(struct flaz_l2p *t, u64 budget, u32 steps)
{
	u64 passes = (u64)steps * L2P_ROOM_PASS, p;

	while (t->resident > budget && steps && passes--) {
		p = next_hand(t);
		if (!READ_ONCE(t->pages[p]))
			continue;
		steps--;
		if (t->state[p] & L2P_COMING)
			continue;
		if (READ_ONCE(t->ref[p]))
			WRITE_ONCE(t->ref[p], 0);
		else
			page_out(t, p);
	}
	return t->resident <= budget;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_make_room);

/* Bytes of the pages marked leaving. */
u64 flaz_l2p_leaving_bytes(struct flaz_l2p *t)
{
	return READ_ONCE(t->leaving);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_leaving_bytes);

/* Whether @line's page is resident but leaving: a fill installs nothing there. */
bool flaz_l2p_leaving(struct flaz_l2p *t, u64 line)
{
	return READ_ONCE(t->state[div_u64(line, L2P_PAGE_LINES)]) & L2P_LEAVING;
}

/*
 * The SSD's table was voided (a new format at run time): no tombstone is
 * needed any more, a page that is out holds nothing, and the resident ones are
 * all written into the new format. O(pages + lines / 64).
 */
void flaz_l2p_forget_ssd(struct flaz_l2p *t)
{
	u64 p, first, line, end;
	u32 n, i;

	for (p = 0; p < t->nr_pages; p++) {
		n = flaz_l2p_page_blocks(t, p, &first);
		line = p * L2P_PAGE_LINES;
		end = min(t->nr_lines, line + L2P_PAGE_LINES);
		lock_stripes(t, p);
		/* a dirty word holds other pages' bits too: atomic ones */
		for (i = 0; i < n; i++) {
			if (t->pages[p])
				set_bit(first + i, t->dirty);
			else
				clear_bit(first + i, t->dirty);
		}
		/* a tombstone word is a group of this page's lines: its locks cover it */
		if (!t->pages[p])
			bitmap_clear(t->tombs, p * L2P_PAGE_SLOTS, end - line);
		unlock_stripes(t, p);
		cond_resched();
	}
	bitmap_fill(t->gen_dirty, t->nr_gen_blocks);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_forget_ssd);

/*
 * Whether table block @idx, its page out, holds nothing any more: every line's
 * tombstone bit is set (an invalidate, a write or discard over all of them),
 * so the caller may write it empty without reading its page. The bits stay
 * until the page comes in, whose lines they only leave empty: should the
 * write fail, the next commit finds them again. Callers serialise paging.
 */
bool flaz_l2p_void_block(struct flaz_l2p *t, u64 idx)
{
	u64 p = idx / FLAZ_L2P_PAGE_BLOCKS, line = idx * FLAZ_META_ENTRIES;
	u64 n = min(t->nr_lines - line, FLAZ_META_ENTRIES), slot = l2p_slot(line);
	bool all;

	/* a block's lines are within one page: their slots are contiguous */
	lock_stripes(t, p);
	all = !t->pages[p] && find_next_zero_bit(t->tombs, slot + n, slot) >= slot + n;
	unlock_stripes(t, p);
	return all;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz table paging: the table's pages in DRAM (l2p.c), read from the SSD
 * (table.c) on demand, after a crash, and to warm up after activation.
 *
 * No whole-table work: activation reads the superblock and the extent
 * generations (which say which extents are free, l2p.c), and the table's pages
 * come in on demand, for a fill or a commit (l2p.c). After a crash, the pages
 * holding lines of regions marked in the superblock are read in the
 * background first (recovery), dropping those lines, and no commit runs until
 * they are all in: a commit could clear the marks that say which entries are
 * not to be trusted. Page-ins meanwhile check the marks too. Then, while
 * they fit the budget, the pages are read in order (warming), so a warm
 * restart hits at once rather than filling again.
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#include "meta.h"
#include "opts.h"

/*
 * Page @p in and load its table blocks from @blks (read from the SSD with
 * @read_error) of generation @gen, with paging held; with @unclean, lines of
 * marked regions are left out. A block that could not be read or held what
 * must go is written again by the next commit. Returns -ENOMEM, the page left
 * out, without memory.
 */
static int page_load(struct flaz_meta *m, u64 p, const u8 *blks, int read_error, u64 gen,
		     bool unclean)
{
	struct flaz_cache *c = m->c;
	u64 first;
	u32 n = flaz_l2p_page_blocks(c->l2p, p, &first);
	u32 i;
	int r;

	lockdep_assert_held(&m->page_lock);
	r = flaz_l2p_page_in(c->l2p, p);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		r = read_error ? -EIO : flaz_table_load(&m->tx, first + i,
							blks + i * FLAZ_BLOCK_SIZE, gen, unclean);
		if (r < 0)
			meta_error(c);
		if (r)
			flaz_l2p_set_dirty(c->l2p, first + i);
	}
	flaz_l2p_page_done(c->l2p, p);
	return 0;
}

/*
 * DRAM the table's resident pages may take: table_cache_kib, or by default
 * 128 KiB per GiB of the SSD's extents, 4 MiB at least: about a thirtieth of
 * the table, which costs the bench's zipf set about a point of hit ratio
 * against a table all resident (a read whose page is out waits for it, it is
 * not a miss: cache.c), where the table would take about 4 MiB per GiB.
 */
static u64 table_budget(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 kib = flaz_opt_get(c->opts, FLAZ_OPT_TABLE_CACHE_KIB);

	if (!kib)
		kib = max_t(u64, FLAZ_MIN_TABLE_CACHE_KIB,
			    (c->geo->nr_extents * c->extent_bytes) >> 23);
	return kib << 10;
}

/* Page clean pages out down to the budget; pages left leaving under it stay. */
void meta_trim(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;

	if (flaz_l2p_resident_bytes(c->l2p) <= table_budget(m) &&
	    !flaz_l2p_leaving_bytes(c->l2p))
		return;
	mutex_lock(&m->page_lock);
	flaz_l2p_trim(c->l2p, table_budget(m));
	mutex_unlock(&m->page_lock);
}

/*
 * Read pages @p..@p + @n - 1 (at most META_LOAD_PAGES, none resident) from the
 * SSD in one I/O and page them in, paging held; while recovering, lines of
 * marked regions are left out. O(pages). Returns how many came in: fewer than
 * @n only without memory.
 */
static u32 read_pages(struct flaz_meta *m, u64 p, u32 n)
{
	struct flaz_cache *c = m->c;
	u64 first, last, gen = READ_ONCE(m->sb.gen);
	u32 i, blocks;
	int err;

	lockdep_assert_held(&m->page_lock);
	flaz_l2p_page_blocks(c->l2p, p, &first);
	blocks = flaz_l2p_page_blocks(c->l2p, p + n - 1, &last) + (last - first);
	err = meta_io(c, c->ssd, REQ_OP_READ, c->geo->meta_start + first * FLAZ_BLOCK_SECTORS,
		      blocks * FLAZ_BLOCK_SECTORS, m->page_buf);
	if (err)
		meta_error(c);
	for (i = 0; i < n; i++) {
		flaz_stats_add(c->stats, FLAZ_STAT_TABLE_PAGE_INS, 1);
		if (page_load(m, p + i, m->page_buf + (size_t)i * FLAZ_L2P_PAGE_BLOCKS *
			      FLAZ_BLOCK_SIZE, err, gen, READ_ONCE(m->recovering)))
			break;
		/* a failed mark voided the generation meanwhile: what came in is void */
		if (READ_ONCE(m->sb.gen) != gen)
			flaz_l2p_drop_page(c->l2p, p + i);
	}
	return i;
}

/* Read page @p in, paging held (read_pages()). Returns 0 or -ENOMEM. */
int meta_page_read(struct flaz_meta *m, u64 p)
{
	return read_pages(m, p, 1) ? 0 : -ENOMEM;
}

/*
 * What fills may page in beyond the budget: an eighth of it, two pages at
 * least. Pages go only clean, after a commit, so fills that dirty pages faster
 * than commits clean them would hold the whole table otherwise; past this they
 * are skipped until a commit and a trim (down to the budget) make room, and
 * the pages turn over by that much per commit.
 */
static u64 fill_cap(struct flaz_meta *m, u64 page_bytes)
{
	u64 budget = table_budget(m);

	return budget + max(budget / 8, 2 * page_bytes);
}

/*
 * Make @line's page resident, reading it from the SSD if it is out, for a fill,
 * the cleaner or a read whose page was out (cache.c), which may sleep: O(page)
 * once, O(1) when it is in. With @room (a read: a hit waits for it; the
 * cleaner's for a hot line, lest it drop a hot slot as dead), clean pages make
 * room for it at once up to fill_cap() (the clock, at most META_ROOM_STEPS of
 * it); a fill's block was read from the HDD already, and its page does not
 * push out pages that hits use. Dirty pages go only after a
 * commit, which comes soon when the table is over its budget, and the trim
 * after it takes the resident pages down to the budget. Past fill_cap(), or
 * when the page is leaving (l2p.c), the caller gets -ENOSPC (a fill is
 * skipped, a read misses).
 */
int flaz_meta_page_in(struct flaz_meta *m, u64 line, bool room)
{
	struct flaz_cache *c = m->c;
	u64 p = flaz_l2p_page_of(line), bytes = flaz_l2p_page_bytes(c->l2p, p);
	u64 cap = fill_cap(m, bytes);
	int r = 0;

	if (flaz_l2p_resident(c->l2p, line))
		return flaz_l2p_leaving(c->l2p, line) ? -ENOSPC : 0;
	mutex_lock(&m->page_lock);
	if (flaz_l2p_resident(c->l2p, line)) {
		r = flaz_l2p_leaving(c->l2p, line) ? -ENOSPC : 0;
	} else {
		if (room)
			flaz_l2p_make_room(c->l2p, cap - bytes, META_ROOM_STEPS);
		if (flaz_l2p_resident_bytes(c->l2p) + bytes > cap)
			r = -ENOSPC;
		else
			r = meta_page_read(m, p);
	}
	mutex_unlock(&m->page_lock);
	if (r == -ENOSPC || flaz_l2p_resident_bytes(c->l2p) > table_budget(m))
		meta_kick(m);
	return r;
}

static bool page_resident(struct flaz_l2p *t, u64 p)
{
	return flaz_l2p_resident(t, p * FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES);
}

/*
 * For meta_load_work(), paging held: read in the pages from @p that are out,
 * up to @n (at most META_LOAD_PAGES) in one I/O; one that is in (a fill
 * brought it, checked as it came) is passed over. Returns how many pages from
 * @p are done, or -ENOMEM to try again later.
 */
static int load_pages(struct flaz_meta *m, u64 p, u32 n)
{
	struct flaz_l2p *t = m->c->l2p;
	u32 out = 0, got;

	if (page_resident(t, p))
		return 1;
	while (out < n && !page_resident(t, p + out))
		out++;
	got = read_pages(m, p, out);
	return got ? got : -ENOMEM;
}

static unsigned int debug_load_delay_ms;
module_param(debug_load_delay_ms, uint, 0644);
MODULE_PARM_DESC(debug_load_delay_ms,
		 "tests only: a pause (up to 10 s) before each read of the background load, so reads meet it");

/* The test-only pause, in steps that let a suspend or a remove stop the load. */
static void load_pause(struct flaz_meta *m)
{
	u32 ms = min(READ_ONCE(debug_load_delay_ms), 10000U), i;

	for (i = 0; i < ms / 20 && !READ_ONCE(m->load_stop); i++)
		msleep(20);
}

/*
 * After activation, in the background, a page at a time: after a crash, the
 * pages holding lines of regions marked then, dropping those lines (recovery:
 * commits wait for it); then the pages in order while they fit the budget
 * (warming), so a warm restart hits at once rather than filling again. Neither
 * holds I/O up: a fill pages in what it needs meanwhile.
 */
void meta_load_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, load_work);
	struct flaz_cache *c = m->c;
	u64 nr = flaz_l2p_nr_pages(c->l2p), p, room, page = flaz_l2p_page_bytes(c->l2p, 0);
	bool recovered = false;
	int r = 0;
	u32 n;

	for (;;) {
		cond_resched();
		load_pause(m);
		mutex_lock(&m->page_lock);
		if (READ_ONCE(m->load_stop))
			break;
		room = table_budget(m) - min(table_budget(m), flaz_l2p_resident_bytes(c->l2p));
		if (m->recovering) {
			p = find_first_bit(m->recover, nr);
			if (p < nr) {
				/* the marked pages in a row, as one read */
				n = find_next_zero_bit(m->recover, min(nr, p + META_LOAD_PAGES),
						       p) - p;
				r = load_pages(m, p, n);
				if (r < 0)
					break;
				bitmap_clear(m->recover, p, r);
				WRITE_ONCE(m->recover_left, m->recover_left - r);
			} else {
				WRITE_ONCE(m->recovering, false);
				recovered = true;
			}
		} else if (READ_ONCE(m->warming) && m->warm_next < nr && room >= page) {
			n = min_t(u64, min_t(u64, META_LOAD_PAGES, nr - m->warm_next),
				  div64_u64(room, page));
			r = load_pages(m, m->warm_next, n);
			if (r < 0)
				break;
			WRITE_ONCE(m->warm_next, m->warm_next + r);
		} else {
			WRITE_ONCE(m->warming, false);
			break;
		}
		mutex_unlock(&m->page_lock);
		if (recovered) {
			recovered = false;
			meta_kick(m);
		}
		/* pages recovery brought in without marked lines are clean: they may go */
		if (m->recovering)
			meta_trim(m);
	}
	mutex_unlock(&m->page_lock);
	if (r < 0 && !READ_ONCE(m->load_stop))
		/* no memory for a page: later */
		queue_work(c->wq.io, &m->load_work);
}

/*
 * Pages still to be read after activation: recovery's, then warming's; 0 once
 * both are done (or warming was stopped).
 */
u64 flaz_meta_loading(struct flaz_meta *m)
{
	u64 n = READ_ONCE(m->recovering) ? READ_ONCE(m->recover_left) : 0;

	if (READ_ONCE(m->warming))
		n += flaz_l2p_nr_pages(m->c->l2p) - READ_ONCE(m->warm_next);
	return n;
}

/* Whether lines of regions marked at a crash may still be on the SSD (no commit yet). */
bool flaz_meta_recovering(struct flaz_meta *m)
{
	return READ_ONCE(m->recovering);
}

/* The cache is being emptied (invalidate, passthrough): warming is not wanted. */
void flaz_meta_stop_warming(struct flaz_meta *m)
{
	WRITE_ONCE(m->warming, false);
}

/*
 * The regions marked at activation: set the pages holding their lines in
 * m->recover. O(regions) bit ranges.
 */
void meta_recover_set(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 lines = c->geo->nr_lines, start, count, line, first, last;
	u32 shift = flaz_intent_shift(c->intent), r;
	u64 nr = flaz_l2p_nr_pages(c->l2p);

	bitmap_zero(m->recover, nr);
	for (r = 0; r < flaz_intent_nr(c->intent); r++) {
		start = (u64)r << shift;
		if (start >= c->hdd_blocks || !flaz_intent_marked(c->intent, start))
			continue;
		count = min(1ULL << shift, c->hdd_blocks - start);
		line = flaz_l2p_line(c->l2p, start);
		first = flaz_l2p_page_of(line);
		last = flaz_l2p_page_of(flaz_l2p_line(c->l2p, start + count - 1));
		/* lines line.. and, past the table's end, 0..: all pages once they meet */
		if (line + count > lines && (count >= lines || last >= first)) {
			bitmap_fill(m->recover, nr);
			break;
		}
		if (line + count <= lines) {
			bitmap_set(m->recover, first, last - first + 1);
		} else {
			bitmap_set(m->recover, first, nr - first);
			bitmap_set(m->recover, 0, last + 1);
		}
	}
	m->recover_left = bitmap_weight(m->recover, nr);
	WRITE_ONCE(m->recovering, m->recover_left > 0);
	m->warm_next = 0;
	WRITE_ONCE(m->warming, true);
}

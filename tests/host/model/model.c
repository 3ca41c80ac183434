// SPDX-License-Identifier: GPL-2.0
/*
 * A randomized model test of the table and its metadata: the module's own
 * meta.c, sb.c, order.c and paging.c (commits, marks, loading and recovery,
 * the reclaim order across a clean restart, paging),
 * intent.c (write-intent regions), alloc.c (free and written extents), l2p.c
 * and resident.c (the table in DRAM), table.c and format.c, driven by random
 * interleavings of fills, writes, hits, evictions, cleaner moves, budgets,
 * commits, crashes and reloads, and checked after every step against a plain
 * oracle: each HDD block's latest version.
 *
 * The world around them is the model's: devices.c has the two devices with
 * volatile write caches and the power cuts; this file the volume's users:
 *  - extents stand in for xbuf.c: slots of (block, version), opened from the
 *    allocator, written (sealed) later, durable after an SSD flush;
 *  - writes drop their lines, wait for their regions' marks (intent.c and
 *    sb.c, as cache.c does), are sent to the HDD when released, complete in
 *    any order later, and may then be filled (write-through);
 *  - work items run when the model picks them; while a metadata I/O or a
 *    FLUSH is in flight, or a page's table blocks load, other work runs
 *    (fills, writes, evictions, marks beside a commit), as other CPUs would;
 *  - after a power cut the volume is activated again: the real load, then
 *    recovery and warming as the load work item runs.
 * A hit must return the block's latest data (as the HDD holds it after a
 * crash); an entry into a slot that holds another block is a fault (a real
 * SSD would be blamed for it) unless it is a tag alias of the same line. What
 * reaches the SSD is checked against meta.c's rules as it is written, so an
 * order that only a rare crash would expose fails at once: a table entry only
 * into a slot already durable and with a generation already durable; a
 * superblock clears no region with a write in flight or not flushed on the
 * HDD; a write goes to the HDD only once its region's mark is durable; an
 * evicted extent is freed only once its new generation is durable, and never
 * once worn out. The counters must equal a count of the table.
 *
 * Usage: model [steps] [seed] [hdd-lines-ratio]; exits 1 at the first wrong step.
 */
#include "model.h"

struct flaz_geometry g;
static struct flaz_opts opts;
static struct dm_target ti;
struct flaz_cache c;
struct flaz_meta *m;
u64 hdd_blocks;
static u64 page_bytes;
u32 *ver, *ver_dur;
unsigned long *hdd_dirty;
static u32 *held;		/* writes of a block not completed (waiting for marks, in flight) */
static u32 *wseq;		/* writes of a block started, so a fill sees one that came */
struct mext *ext;
static u32 open_ext = U32_MAX;
u64 commits_done;
struct bio **inflight;
u64 nr_inflight;
static u64 *fills_due, nr_fills_due;	/* written blocks to fill (write-through) */
static u64 rng_state;
u64 step;
u64 stats[S_NR];
static int busy;		/* other work runs in the model's meanwhile() */
bool leaving_passthrough;
static bool running;		/* the volume is resumed: user I/O comes */
unsigned long jiffies = 1000;

u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

u64 below(u64 n)
{
	return n ? rnd() % n : 0;
}

/* A version no block had before: what a write puts on the HDD. */
u32 new_version(void)
{
	static u32 last;

	return ++last;
}

/* The first wrong step: @what, about @n (a block, an extent, a line: @what says). */
void fail(const char *what, u64 n)
{
	printf("FAIL step %llu: %s %llu\n", (unsigned long long)step, what, (unsigned long long)n);
	exit(1);
}

/* xbuf.c flaz_xbuf_written(): the open extent's write completes; reclaim may take it. */
static void seal(void)
{
	struct mext *x;

	if (open_ext == U32_MAX)
		return;
	x = &ext[open_ext];
	x->state = WRITTEN;
	x->sealed = true;
	x->pending = true;
	set_bit(open_ext, c.written);
	flaz_alloc_written(c.alloc, open_ext, false);
	open_ext = U32_MAX;
}

/*
 * meta.c frees an evicted extent (free_batch()): never a worn-out one, and only
 * once its new generation is durable, or the SSD's generation holds no table
 * yet (a new format voided the old one's entries).
 */
void __real_flaz_alloc_put(struct flaz_alloc *a, u32 id);
void __wrap_flaz_alloc_put(struct flaz_alloc *a, u32 id)
{
	if (flaz_l2p_worn(c.l2p, id))
		fail("a worn-out extent freed:", id);
	if (!durable_free(id))
		fail("an extent freed before its new generation was durable:", id);
	ext[id].state = FREE;
	__real_flaz_alloc_put(a, id);
}

/* alloc.c get + xbuf.c flaz_xbuf_opened(): a free extent, its generation made odd. */
static bool open_new(void)
{
	struct mext *x;
	u32 e;

	seal();
	if (flaz_alloc_get(c.alloc, &e))
		return false;
	x = &ext[e];
	if (x->state != FREE && x->state != EVICTED)
		fail("an extent handed out while in use:", e);
	set_bit(e, c.unflushed);
	ssd_extent_opened(e);
	flaz_l2p_open_extent(c.l2p, e);
	x->state = OPEN;
	x->sealed = false;
	x->ncur = 0;
	x->pending = true;
	open_ext = e;
	return true;
}

static u32 next_off(struct mext *x)
{
	return x->ncur ? x->cur[x->ncur - 1].off + x->cur[x->ncur - 1].bytes :
			 sizeof(struct flaz_extent_hdr);
}

/* Room in the open extent for @bytes: its offset, or 0 when no extent is free. */
static u32 reserve(u32 bytes, u64 block, u32 v)
{
	struct mext *x;
	u32 off;

	if (open_ext != U32_MAX) {
		x = &ext[open_ext];
		if (next_off(x) + bytes > EXTENT_KIB * 1024 || x->ncur == MAX_SLOTS)
			seal();
	}
	if (open_ext == U32_MAX && !open_new())
		return 0;
	x = &ext[open_ext];
	off = next_off(x);
	x->cur[x->ncur++] = (struct mslot){ .off = off, .bytes = bytes, .block = block, .ver = v };
	x->pending = true;
	return off;
}

/*
 * fill.c install(): the block's current data into a slot (or a zero flag), its
 * line at it; a write of the block waiting for its mark, or one that started
 * while the page came in, makes the data stale (records.c); a page that is out
 * is read first unless paging is busy (the fill would wait: here it is dropped,
 * as a skipped fill is).
 */
static void install(u64 block)
{
	u64 line = flaz_l2p_line(c.l2p, block);
	struct flaz_entry e = {}, old;
	u32 bytes = (2 + below(128)) * FLAZ_SLOT_ALIGN, seen = wseq[block];

	if (held[block] || c.mode != FLAZ_MODE_NORMAL)
		return;
	if (!flaz_l2p_resident(c.l2p, line) && m->page_lock.held)
		return;
	if (flaz_meta_page_in(m, line, false) || wseq[block] != seen)
		return;
	if (!ver[block] && flaz_l2p_zero_fits(c.l2p)) {
		e.kind = FLAZ_ENTRY_ZERO;
	} else {
		e.off = reserve(bytes, block, ver[block]);
		if (!e.off)
			return;
		e.kind = FLAZ_ENTRY_SLOT;
		e.ext = open_ext;
		e.bytes = bytes;
	}
	flaz_l2p_lock(c.l2p, line);
	if (flaz_l2p_set(c.l2p, block, &e, &old))
		stats[S_FILL]++;
	flaz_l2p_unlock(c.l2p, line);
}

/* A write goes to the HDD (inflight, completed in any order): its mark is durable by now. */
static void send(struct bio *bio)
{
	if (bio->intent && !c.ssd_failed && !durable_mark(bio->block))
		fail("a write sent to the HDD before its region's mark was durable: block", bio->block);
	inflight[nr_inflight++] = bio;
}

/* A write completes on the HDD (in its volatile cache): a new version, or zeros. */
static void write_done(struct bio *bio)
{
	u64 b = bio->block;

	ver[b] = below(8) ? new_version() : 0;
	set_bit(b, hdd_dirty);
	flaz_intent_end(c.intent, b, b);
	held[b]--;
	free(bio);
	if (below(2) && nr_fills_due < hdd_blocks)
		fills_due[nr_fills_due++] = b;
	stats[S_WRITE]++;
}

/* cache.c release_writes(): writes whose marks are on the SSD go to the HDD. */
static void release_writes(struct flaz_cache *cc, struct bio_list *bios)
{
	struct bio *bio;

	(void)cc;
	while ((bio = bio_list_pop(bios)))
		send(bio);
}

/* One of the writes in flight completes. */
static void complete_one(void)
{
	u64 i = below(nr_inflight);
	struct bio *bio;

	if (!nr_inflight)
		return;
	bio = inflight[i];
	inflight[i] = inflight[--nr_inflight];
	write_done(bio);
}

static bool space_short(struct flaz_cache *cc)
{
	(void)cc;
	return !below(4);
}

static void invalidate(void);

static void invalidate_event(struct flaz_cache *cc)
{
	(void)cc;
	invalidate();
}

static const struct flaz_events events = {
	.space_short = space_short,
	.release_writes = release_writes,
	.invalidate = invalidate_event,
};

/* cache.c map_write_drop(): the line dropped, then the write sent once its region is marked. */
static void write_block(u64 block)
{
	u64 line = flaz_l2p_line(c.l2p, block);
	struct bio *bio = calloc(1, sizeof(*bio));

	flaz_l2p_lock(c.l2p, line);
	flaz_l2p_drop_block(c.l2p, block);
	flaz_l2p_unlock(c.l2p, line);
	bio->block = block;
	held[block]++;
	wseq[block]++;
	/* passthrough: to the HDD unmarked, the SSD's generation is void; counted in flight */
	if (c.mode == FLAZ_MODE_PASSTHROUGH) {
		flaz_intent_track(c.intent, block, block);
		send(bio);
		return;
	}
	bio->intent = true;
	if (flaz_intent_start(c.intent, block, block, bio))
		send(bio);
	else
		flaz_meta_mark(m);
}

/* evict.c evict_extent(): a new generation; free after the next commit, or never once worn. */
static void evict(u32 e)
{
	clear_bit(e, c.failed);
	clear_bit(e, c.hit);
	flaz_meta_evict(m, e);
	flaz_alloc_retire(c.alloc, e);
	if (flaz_l2p_worn(c.l2p, e)) {
		ext[e].state = WORN;
		stats[S_WORN]++;
		return;
	}
	ext[e].state = EVICTED;
	stats[S_EVICT]++;
}

static u32 take_oldest(void)
{
	bool probation;
	u32 e;

	return flaz_alloc_take_oldest(c.alloc, &e, 1, 0, &probation) ? e : U32_MAX;
}

/*
 * Whether reclaim runs: mostly when free extents run short, as the cleaner
 * does, so the cache fills; in every other stretch of steps only once none is
 * free, so an extent freed is handed out again at once.
 */
static bool reclaim_due(void)
{
	u32 low = (step >> 16) & 1 ? 0 : g.nr_extents / 8;

	return flaz_alloc_nr_free(c.alloc) <= low || !below(16);
}

/* Stage two: a whole extent, unread. */
static void evict_oldest(void)
{
	u32 e;

	if (!reclaim_due())
		return;
	e = take_oldest();
	if (e == U32_MAX)
		return;
	evict(e);
	/* a free of evicted extents may run at once: the next fill may take one */
	if (below(2))
		flush_work(&m->free_work);
}

/* The slot @e's extent holds now at @e's offset, of @e's size, or NULL: the SSD holds none. */
static struct mslot *slot_of(const struct flaz_entry *e)
{
	struct mext *x = &ext[e->ext];
	u32 i;

	for (i = 0; i < x->ncur; i++)
		if (x->cur[i].off == e->off)
			return x->cur[i].bytes == e->bytes ? &x->cur[i] : NULL;
	return NULL;
}

/* Check block @b: a hit must be its latest data. */
static void check_block(u64 b)
{
	u64 line = flaz_l2p_line(c.l2p, b);
	struct flaz_entry e;
	struct mslot *s;
	struct mext *x;
	bool hit;

	flaz_l2p_lock(c.l2p, line);
	hit = flaz_l2p_lookup(c.l2p, b, &e);
	flaz_l2p_unlock(c.l2p, line);
	if (!hit) {
		stats[S_MISS]++;
		return;
	}
	stats[S_HIT]++;
	if (e.kind == FLAZ_ENTRY_ZERO) {
		if (ver[b])
			fail("stale: a zero entry for a block written since: block", b);
		return;
	}
	x = &ext[e.ext];
	if (x->state == FREE || x->state == EVICTED || x->state == WORN)
		fail("an entry into an extent not in use: block", b);
	s = slot_of(&e);
	if (!s)
		fail("an entry into no slot (fault): block", b);
	if (s->block != b) {
		if (s->block % g.nr_lines != line ||
		    ((s->block / g.nr_lines) ^ (b / g.nr_lines)) % (1 << FLAZ_TAG_BITS))
			fail("an entry into another block's slot (fault): block", b);
		stats[S_ALIAS]++;
		return;
	}
	if (s->ver != ver[b])
		fail("stale: a hit returned old data: block", b);
}

/*
 * Every line of page @p, read in if it is out: an entry into a slot the SSD
 * does not hold is a fault whichever block asks; one into a slot is checked as
 * its block, a zero entry as the block its tag names.
 */
static void check_page(u64 p)
{
	u64 lines = FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES, line;
	struct flaz_entry e;
	struct mslot *s;

	for (line = p * lines; line < min(g.nr_lines, (p + 1) * lines); line++) {
		if (!flaz_l2p_resident(c.l2p, line) && flaz_meta_page_in(m, line, true))
			return;
		flaz_l2p_lock(c.l2p, line);
		flaz_l2p_get(c.l2p, line, &e);
		flaz_l2p_unlock(c.l2p, line);
		if (e.kind == FLAZ_ENTRY_ZERO) {
			if (e.tag * g.nr_lines + line < hdd_blocks)
				check_block(e.tag * g.nr_lines + line);
			continue;
		}
		if (e.kind != FLAZ_ENTRY_SLOT)
			continue;
		s = slot_of(&e);
		if (!s || s->block % g.nr_lines != line)
			fail("an entry into no slot of its line (fault): line", line);
		check_block(s->block);
	}
}

/* cache.c: a read whose page is out waits for it (clean pages make room), then hits or fills. */
static void read_block(u64 b)
{
	u64 line = flaz_l2p_line(c.l2p, b);

	/* passthrough reads the HDD */
	if (c.mode == FLAZ_MODE_PASSTHROUGH)
		return;
	if (!flaz_l2p_resident(c.l2p, line) && !m->page_lock.held)
		flaz_meta_page_in(m, line, true);
	check_block(b);
	if (!flaz_l2p_lookup(c.l2p, b, &(struct flaz_entry){}) && below(2))
		install(b);
}

static u64 pick_block(void)
{
	/* mostly a hot set, so entries live long enough to be paged and evicted */
	return below(4) ? below(g.nr_lines / 4) * (hdd_blocks / g.nr_lines) % hdd_blocks :
			  below(hdd_blocks);
}

/*
 * Work that runs while a metadata I/O or FLUSH is in flight, or a page loads:
 * reads, fills and writes, evictions, and the marks' own work item beside a
 * commit (it holds sb_lock only for a superblock of its own).
 */
void meanwhile(void)
{
	u32 n;

	if (busy || !running || below(3))
		return;
	busy = 1;
	for (n = 1 + below(3); n; n--) {
		switch (below(10)) {
		case 0 ... 4:
			read_block(pick_block());
			break;
		case 5:
			if (below(2))
				write_block(pick_block());
			else
				complete_one();
			break;
		case 6:
			evict_oldest();
			break;
		case 7:
			if (m->mark_work.pending && !m->sb_lock.held && flush_work(&m->mark_work))
				stats[S_BESIDE]++;
			break;
		case 8:
			if (flush_work(&m->free_work))
				stats[S_BESIDE]++;
			/* recovery or warming, or a trim, while paging is free */
			if (!m->page_lock.held && (below(2) ? flush_work(&m->load_work) :
						   (meta_trim(m), true)))
				stats[S_BESIDE]++;
			break;
		default:
			/* a user's FLUSH */
			hdd_flush();
			flaz_meta_kick(m);
		}
	}
	busy = 0;
}

/*
 * Before a mutex of the metadata is taken while the volume runs: work that
 * would hold it runs first, as if it held it now and the taker blocked until
 * it was done. Before sb_lock (a commit's, a reformat's) a mark; before
 * page_lock (a commit's, a page-in's, the load's, a trim's) the load, a trim,
 * or a read whose page is out. Counted when a mark, the load or a read ran.
 */
void model_lock_point(struct mutex *l)
{
	bool ran = false;

	if (busy || !running || !m || l->held || below(4))
		return;
	busy = 1;
	if (l == &m->sb_lock && m->mark_work.pending) {
		ran = flush_work(&m->mark_work);
	} else if (l == &m->page_lock) {
		switch (below(3)) {
		case 0:
			ran = flush_work(&m->load_work);
			break;
		case 1:
			/* not counted: under the budget it does nothing */
			meta_trim(m);
			break;
		default:
			read_block(pick_block());
			ran = true;
		}
	}
	stats[S_LOCKED] += ran;
	busy = 0;
}

/* paging.c page_load(): fills and writes of the page's lines come in between its blocks. */
int __real_flaz_table_load(const struct flaz_table_ctx *x, u64 idx, const void *blk, u64 gen,
			   bool unclean);
int __wrap_flaz_table_load(const struct flaz_table_ctx *x, u64 idx, const void *blk, u64 gen,
			   bool unclean)
{
	u64 lines = FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES, first, b;

	first = idx / FLAZ_L2P_PAGE_BLOCKS * lines;
	while (running && !busy && !below(4)) {
		b = first + below(lines);
		if (b >= g.nr_lines)
			break;
		b += below(hdd_blocks / g.nr_lines) * g.nr_lines;
		busy = 1;
		install(b);
		if (below(2))
			write_block(b);
		busy = 0;
	}
	return __real_flaz_table_load(x, idx, blk, gen, unclean);
}

/*
 * cleaner.c pass on one victim, in two halves with other steps between them,
 * as its reads and writes take time: first the victim is judged (live slots
 * listed), later the moves are written, then the lines that still point at the
 * victim are moved and it is evicted; a slot not moved is left, the victim's
 * eviction voids it.
 */
static u32 victim = U32_MAX, nr_moves;
static struct { u64 block; u32 voff, off, bytes, ver, to; } moves[MAX_SLOTS];

static void clean_start(void)
{
	struct mext *x;
	u32 i, heat;
	bool live;
	u64 line;

	if (victim != U32_MAX || !reclaim_due() || c.mode != FLAZ_MODE_NORMAL)
		return;
	victim = take_oldest();
	if (victim == U32_MAX)
		return;
	x = &ext[victim];
	nr_moves = 0;
	for (i = 0; i < x->ncur; i++) {
		struct mslot s = x->cur[i];

		line = flaz_l2p_line(c.l2p, s.block);
		flaz_l2p_lock(c.l2p, line);
		live = flaz_l2p_points(c.l2p, s.block, victim, s.off, &heat);
		flaz_l2p_unlock(c.l2p, line);
		if (live && below(2))
			moves[nr_moves++] = (typeof(moves[0])){ .block = s.block, .voff = s.off,
							    .bytes = s.bytes, .ver = s.ver };
	}
}

static void clean_end(void)
{
	struct flaz_entry e;
	u32 i, heat;
	u64 line;

	if (victim == U32_MAX)
		return;
	/* out of normal mode the cleaner moves nothing */
	if (c.mode != FLAZ_MODE_NORMAL)
		nr_moves = 0;
	for (i = 0; i < nr_moves; i++) {
		moves[i].off = reserve(moves[i].bytes, moves[i].block, moves[i].ver);
		moves[i].to = open_ext;
	}
	/* the bins' writes complete before any line points into them */
	seal();
	for (i = 0; i < nr_moves; i++) {
		line = flaz_l2p_line(c.l2p, moves[i].block);
		flaz_l2p_lock(c.l2p, line);
		if (moves[i].off &&
		    flaz_l2p_points(c.l2p, moves[i].block, victim, moves[i].voff, &heat)) {
			e = (struct flaz_entry){ .kind = FLAZ_ENTRY_SLOT, .ext = moves[i].to,
						 .off = moves[i].off, .bytes = moves[i].bytes };
			flaz_l2p_move(c.l2p, moves[i].block, &e);
			stats[S_MOVE]++;
		}
		flaz_l2p_unlock(c.l2p, line);
	}
	evict(victim);
	victim = U32_MAX;
}

/* cleaner.c flaz_cleaner_empty() (invalidate): every line dropped, every written extent evicted. */
static void invalidate(void)
{
	u32 e;

	flaz_meta_stop_warming(m);
	flaz_l2p_drop_all(c.l2p);
	seal();
	while ((e = take_oldest()) != U32_MAX)
		evict(e);
}

/*
 * cache.c mode_work() after a mark failed (flaz_report_no_mark()), as
 * flaz_mode_set() does it: the SSD's generation voided (or remembered void),
 * then passthrough, the cache emptied.
 */
static void mode_work(void)
{
	if (!c.ssd_failed || c.mode == FLAZ_MODE_PASSTHROUGH)
		return;
	flaz_meta_reformat(m, true);
	c.mode = FLAZ_MODE_PASSTHROUGH;
	invalidate();
	stats[S_PASSTHROUGH]++;
}

/* An operator sets the mode back to normal: a new generation, or passthrough still. */
static void mode_normal(void)
{
	u64 b;
	int r;

	if (c.mode != FLAZ_MODE_PASSTHROUGH)
		return;
	c.mode = FLAZ_MODE_NORMAL;
	leaving_passthrough = true;
	r = flaz_meta_reformat(m, false);
	leaving_passthrough = false;
	if (r) {
		c.mode = FLAZ_MODE_PASSTHROUGH;
		return;
	}
	c.ssd_failed = false;
	/* under load: writes passthrough sent end, their blocks are read and filled at once */
	while (nr_inflight && below(8))
		complete_one();
	for_each_set_bit(b, hdd_dirty, hdd_blocks)
		if (below(2))
			install(b);
	/* and the first commit comes before anything else, now and then */
	flaz_meta_kick(m);
	if (below(2)) {
		seal();
		jiffies += META_COMMIT_GAP;
		flush_work(&m->work);
	}
}

/* The metadata's work items, as the model runs them. */
static struct work_struct *work_item(u32 i)
{
	struct work_struct *w[] = { &m->work, &m->mark_work, &m->free_work, &m->load_work,
				    &m->tick.work, &m->retry.work, &m->later.work };

	return i < ARRAY_SIZE(w) ? w[i] : NULL;
}

/* Run one pending work item, from a random one on; false if none was. */
static bool run_work(void)
{
	u32 i, start = below(7);

	for (i = 0; i < 7; i++)
		if (flush_work(work_item((start + i) % 7)))
			return true;
	return false;
}

/*
 * A new format starts every extent at generation 0 (sb.c's debug_gen_start
 * stands at 0 here): then a quarter of them start near their last one instead,
 * free, so they wear out in the run.
 */
static void wear_some(void)
{
	u16 *gens = flaz_l2p_gens(c.l2p);
	u32 e;

	for (e = 0; e < g.nr_extents; e++)
		if (gens[e])
			return;
	for (e = 0; e < g.nr_extents; e += 4) {
		gens[e] = (1U << g.gen_bits) - 2 - 2 * 1;
		flaz_l2p_set_gen_dirty(c.l2p, e / FLAZ_GEN_ENTRIES);
	}
}

/* The volume's DRAM state, made at activation (cache.c), then the metadata's load. */
static void activate(bool cold)
{
	char *error = NULL;
	u32 e, tries = 0;

again:
	error = NULL;
	c.l2p = flaz_l2p_create(g.nr_lines, g.nr_extents, EXTENT_KIB * 1024, hdd_blocks, false);
	c.alloc = flaz_alloc_create(g.nr_extents);
	c.intent = flaz_intent_create(hdd_blocks);
	if (IS_ERR_OR_NULL(c.l2p) || !c.alloc || !c.intent)
		fail("cannot create the volume's state", 0);
	bitmap_zero(c.unflushed, g.nr_extents);
	bitmap_zero(c.written, g.nr_extents);
	bitmap_zero(c.failed, g.nr_extents);
	c.mode = FLAZ_MODE_NORMAL;
	c.ssd_failed = false;
	/* DRAM starts empty: nothing open, no pass under way, no write held */
	open_ext = U32_MAX;
	victim = U32_MAX;
	nr_fills_due = 0;
	memset(held, 0, hdd_blocks * sizeof(*held));
	m = flaz_meta_create(&c, cold, &error);
	/* the HDD's first block could not be read (devices.c): the operator tries again */
	if (IS_ERR(m) && error && !strcmp(error, "Cannot read the HDD") && ++tries < 100) {
		flaz_intent_destroy(c.intent);
		flaz_alloc_destroy(c.alloc);
		flaz_l2p_destroy(c.l2p);
		goto again;
	}
	if (IS_ERR(m)) {
		printf("%s\n", error);
		fail("cannot create the metadata", 0);
	}
	c.meta = m;
	if (flaz_meta_resume(m, cold))
		fail("the resume failed", 0);
	running = true;
	wear_some();
	/* the extents as the load found them: in use, worn out, or free */
	for (e = 0; e < g.nr_extents; e++) {
		ext[e].sealed = false;
		if (flaz_l2p_worn(c.l2p, e))
			ext[e].state = WORN;
		else if (flaz_l2p_in_use(c.l2p, e))
			ext[e].state = WRITTEN;
		else
			ext[e].state = FREE;
	}
}

static void teardown(void)
{
	running = false;
	flaz_meta_stop(m);
	flaz_meta_destroy(m);
	m = NULL;
	flaz_intent_destroy(c.intent);
	flaz_alloc_destroy(c.alloc);
	flaz_l2p_destroy(c.l2p);
}

/* The power cut taken (take_cut()) happens: DRAM is lost, the devices keep what it left. */
static void crash(void)
{
	static u8 scratch[FLAZ_SB_BITMAP_BYTES];
	struct bio_list lost = BIO_EMPTY_LIST;
	struct bio *bio;

	devices_after_cut();
	/* writes waiting for their marks, or in flight after the cut, never reached the HDD */
	flaz_intent_snapshot(c.intent, false, false, scratch, &lost);
	while ((bio = bio_list_pop(&lost)))
		free(bio);
	while (nr_inflight)
		free(inflight[--nr_inflight]);
	teardown();
	activate(false);
	stats[S_CRASH]++;
}

/* The reclaim order as alloc.c walks it: the ids, and how many are probation's (the first). */
static u32 walk_order(u32 *ids, u32 *nr_probation)
{
	struct flaz_alloc_walk w;
	u32 n = 0, k;

	*nr_probation = flaz_alloc_nr_probation(c.alloc);
	flaz_alloc_walk_start(c.alloc, &w);
	while ((k = flaz_alloc_walk(c.alloc, &w, ids + n, g.nr_extents - n)))
		n += k;
	return n;
}

/*
 * A clean stop: writes released, the open extent written, a clean commit, then
 * loaded again. When order.c says the reclaim order came back, it is the one
 * the stop left: the same extents in the same queues and order (worn-out ones
 * after), the same heat and hit extents. Heat and hits are made up here: hit.c
 * is not in the model.
 */
static void restart(void)
{
	static u32 *ids, *ids2;
	static u64 *heat, *heat2;
	static unsigned long *hit;
	u64 words = flaz_l2p_heat_words(c.l2p), i;
	u32 n, n2, np, np2;

	while (flaz_intent_waiting(c.intent) || nr_inflight) {
		queue_work(NULL, &m->mark_work);
		flush_work(&m->mark_work);
		while (nr_inflight)
			complete_one();
	}
	/* cleaner.c flaz_cleaner_stop(): a pass under way ends first */
	clean_end();
	/* the order in one chunk or in a chain of small ones (module parameter) */
	model_set_debug_order_chunk_bytes(below(2) ? 0 : 1 + below(4096));
	seal();
	running = false;
	if (!ids) {
		ids = calloc(g.nr_extents, sizeof(*ids));
		ids2 = calloc(g.nr_extents, sizeof(*ids2));
		heat = calloc(words, sizeof(*heat));
		heat2 = calloc(words, sizeof(*heat2));
		hit = bitmap_zalloc(g.nr_extents, 0);
	}
	/* hit.c sets an extent's bit while it is in use (a void generation frees all at once) */
	for (i = 0; i < g.nr_extents; i++)
		if (flaz_l2p_in_use(c.l2p, i) && below(4))
			set_bit(i, c.hit);
		else if (!flaz_l2p_in_use(c.l2p, i))
			clear_bit(i, c.hit);
	n = walk_order(ids, &np);
	for (i = 0; i < words; i++) {
		flaz_l2p_heat_copy(c.l2p, i, heat2, 1, true);
		heat2[0] |= rnd() & 0x5555555555555555ULL;
		flaz_l2p_heat_copy(c.l2p, i, heat2, 1, false);
	}
	flaz_l2p_heat_copy(c.l2p, 0, heat, words, true);
	bitmap_copy(hit, c.hit, g.nr_extents);
	order_saved = false;
	flaz_meta_suspend(m);
	teardown();
	bitmap_zero(c.hit, g.nr_extents);
	order_back = false;
	order_in_part = false;
	activate(false);
	stats[S_RESTART]++;
	/* the log says saved only once the clean superblock naming the order is written */
	if (order_back && !order_saved)
		fail("an order came back that the stop did not say it saved", 0);
	/* and one said to be saved is read back, unless a fault or the SSD's mode stops it */
	if (order_saved && !order_back && !order_in_part && c.mode == FLAZ_MODE_NORMAL)
		fail("a stop said it saved the order, and the activation after it read none", 0);
	if (!order_back)
		return;
	stats[S_ORDER]++;
	n2 = walk_order(ids2, &np2);
	/* an extent evicted at its last generation is in no queue: after it, by index */
	if (n2 < n || np2 != np || memcmp(ids, ids2, n * sizeof(*ids)))
		fail("the reclaim order that came back is not the stop's: extents", n2);
	for (i = n; i < n2; i++)
		if (!flaz_l2p_worn(c.l2p, ids2[i]))
			fail("an extent in use came back past the stop's order:", ids2[i]);
	flaz_l2p_heat_copy(c.l2p, 0, heat2, words, true);
	if (memcmp(heat, heat2, words * sizeof(*heat)))
		fail("the heat that came back is not the stop's", 0);
	for (i = 0; i < g.nr_extents; i++)
		if (test_bit(i, hit) != test_bit(i, c.hit))
			fail("an extent's hit bit did not come back as the stop left it:", i);
}

/* The counters against a count of the resident entries. */
static void check_counts(void)
{
	u64 line, blocks = 0, logical = 0, physical = 0, raw = 0, cb, cl, cp, cr, cc;
	struct flaz_entry e;

	for (line = 0; line < g.nr_lines; line++) {
		if (!flaz_l2p_resident(c.l2p, line))
			continue;
		flaz_l2p_get(c.l2p, line, &e);
		if (e.kind == FLAZ_ENTRY_NONE)
			continue;
		blocks++;
		if (e.kind == FLAZ_ENTRY_SLOT) {
			logical += FLAZ_BLOCK_SIZE;
			physical += e.bytes;
			if (e.bytes == FLAZ_MAX_SLOT_BYTES)
				raw += e.bytes;
		}
	}
	flaz_l2p_usage(c.l2p, &cb, &cl, &cp);
	flaz_l2p_codec_usage(c.l2p, &cr, &cc);
	if (cb != blocks || cl != logical || cp != physical || cr != raw) {
		printf("counted %llu/%llu/%llu/%llu, counters %llu/%llu/%llu/%llu\n",
		       (unsigned long long)blocks, (unsigned long long)logical,
		       (unsigned long long)physical, (unsigned long long)raw,
		       (unsigned long long)cb, (unsigned long long)cl,
		       (unsigned long long)cp, (unsigned long long)cr);
		fail("counters differ from the table", 0);
	}
}

int main(int argc, char **argv)
{
	u64 steps = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	u64 seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	u64 ratio = argc > 3 ? strtoull(argv[3], NULL, 0) : 3;
	u64 b, i, table_kib, swept = 0;
	u32 op;

	rng_state = seed * 2654435761ULL + 1;
	/* 32 KiB extents, overbook 1000: ten lines per block of cache */
	if (flaz_geometry_init(&g, 600 * 64 + 4096, EXTENT_KIB, OVERBOOK))
		fail("no geometry", 0);
	hdd_blocks = g.nr_lines * ratio + 17;
	ver = calloc(hdd_blocks, sizeof(*ver));
	ver_dur = calloc(hdd_blocks, sizeof(*ver_dur));
	hdd_dirty = bitmap_zalloc(hdd_blocks, 0);
	held = calloc(hdd_blocks, sizeof(*held));
	wseq = calloc(hdd_blocks, sizeof(*wseq));
	inflight = calloc(hdd_blocks * 256, sizeof(*inflight));
	fills_due = calloc(hdd_blocks, sizeof(*fills_due));
	ext = calloc(g.nr_extents, sizeof(*ext));
	devices_init();
	opts.val[FLAZ_OPT_EXTENT_KIB] = EXTENT_KIB;
	opts.val[FLAZ_OPT_OVERBOOK] = OVERBOOK;
	opts.val[FLAZ_OPT_SSD_HOLD_S] = FLAZ_DEF_SSD_HOLD_S;
	ti.len = hdd_blocks * FLAZ_BLOCK_SECTORS;
	c = (struct flaz_cache){ .ev = &events, .ti = &ti, .hdd = &hdd_dev, .ssd = &ssd_dev,
				 .geo = &g, .opts = &opts, .extent_bytes = EXTENT_KIB * 1024,
				 .hdd_blocks = hdd_blocks };
	c.unflushed = bitmap_zalloc(g.nr_extents, 0);
	c.written = bitmap_zalloc(g.nr_extents, 0);
	c.failed = bitmap_zalloc(g.nr_extents, 0);
	c.hit = bitmap_zalloc(g.nr_extents, 0);
	/* a budget of a page at first; later up to a quarter of the table (below) */
	table_kib = 1;
	opts.val[FLAZ_OPT_TABLE_CACHE_KIB] = table_kib;
	activate(true);
	page_bytes = flaz_l2p_page_bytes(c.l2p, 0);

	for (step = 0; step < steps; step++) {
		jiffies += below(60);
		op = below(1000);
		b = pick_block();
		if (op < 410) {
			read_block(b);
		} else if (op < 450) {
			write_block(b);
		} else if (op < 490) {
			if (nr_fills_due)
				install(fills_due[--nr_fills_due]);
		} else if (op < 530) {
			complete_one();
		} else if (op < 580) {
			evict_oldest();
		} else if (op < 595) {
			clean_start();
		} else if (op < 610) {
			clean_end();
		} else if (op < 640) {
			/* table_cache_kib changed online: the next trim goes down to it */
			table_kib = 1 + below((flaz_l2p_bytes(c.l2p) / 4 + page_bytes) >> 10);
			opts.val[FLAZ_OPT_TABLE_CACHE_KIB] = table_kib;
			meta_trim(m);
			stats[S_TRIM]++;
		} else if (op < 760) {
			mode_work();
			run_work();
		} else if (op < 800) {
			flaz_meta_kick(m);
		} else if (op < 815) {
			/* a user's FLUSH: the HDD's cache, and a commit soon */
			hdd_flush();
			flaz_meta_kick(m);
		} else if (op < 816) {
			cut_power();
		} else if (op < 817 && below(2)) {
			restart();
		} else if (op == 818 && !below(200)) {
			invalidate();
		} else if (op == 819) {
			mode_normal();
		} else {
			check_block(b);
		}
		if (power_cut()) {
			crash();
			continue;
		}
		for (i = 0; i < 4; i++)
			check_block(below(hdd_blocks));
		/* and blocks that were cached once: most checks would miss otherwise */
		for (i = 0; i < 4; i++) {
			struct mext *x = &ext[below(g.nr_extents)];

			if (x->ncur)
				check_block(x->cur[below(x->ncur)].block);
		}
		/* a whole page now and then, most often right after a crash */
		if ((!(step % 64) || stats[S_CRASH] != swept) && c.mode == FLAZ_MODE_NORMAL) {
			swept = stats[S_CRASH];
			check_page(below(flaz_l2p_nr_pages(c.l2p)));
		}
		if (!(step % 4096))
			check_counts();
	}
	check_counts();
	stats[S_COMMIT] = commits_done;
	/* what a long run exists for happened: a fault injection that stopped firing fails */
	for (i = 0; i < S_NR && steps >= 100000; i++)
		if (!stats[i] && i != S_ALIAS && i != S_WORN && i != S_MOVE)
			fail("never happened in the run: counter", i);
	printf("model: %llu steps, seed %llu, %llu lines, %llu extents, %llu pages: hits %llu misses %llu aliases %llu fills %llu writes %llu marks %llu evictions %llu worn %llu moves %llu commits %llu trims %llu crashes %llu restarts %llu orders %llu beside %llu locked %llu faults %llu hdd_errors %llu passthrough %llu\n",
	       (unsigned long long)steps, (unsigned long long)seed,
	       (unsigned long long)g.nr_lines, (unsigned long long)g.nr_extents,
	       (unsigned long long)flaz_l2p_nr_pages(c.l2p), (unsigned long long)stats[S_HIT],
	       (unsigned long long)stats[S_MISS], (unsigned long long)stats[S_ALIAS],
	       (unsigned long long)stats[S_FILL], (unsigned long long)stats[S_WRITE],
	       (unsigned long long)stats[S_MARK],
	       (unsigned long long)stats[S_EVICT], (unsigned long long)stats[S_WORN],
	       (unsigned long long)stats[S_MOVE], (unsigned long long)stats[S_COMMIT],
	       (unsigned long long)stats[S_TRIM], (unsigned long long)stats[S_CRASH],
	       (unsigned long long)stats[S_RESTART], (unsigned long long)stats[S_ORDER],
	       (unsigned long long)stats[S_BESIDE],
	       (unsigned long long)stats[S_LOCKED],
	       (unsigned long long)stats[S_FAULT], (unsigned long long)stats[S_HDD_ERROR],
	       (unsigned long long)stats[S_PASSTHROUGH]);
	return 0;
}

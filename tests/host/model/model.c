// SPDX-License-Identifier: GPL-2.0
/*
 * A randomized model test of the table and its metadata: the module's own
 * l2p.c and resident.c (the table in DRAM), table.c (its blocks on the SSD) and format.c,
 * driven by random interleavings of fills, writes, hits, evictions, cleaner
 * moves, page-outs under a tiny budget, commits, crashes and reloads, and
 * checked after every step against a plain oracle: each HDD block's latest
 * version. What stands in for meta.c, xbuf.c, alloc.c and intent.c here does
 * what they do, in the order they do it (see each function's comment):
 *  - a fill pages the line's page in (read from the SSD as it is now) and puts
 *    a slot in an open extent, whose generation it opened;
 *  - a write marks its region durably first (a superblock write, which flushes
 *    the SSD), then empties the line, then may install its own data;
 *  - eviction bumps the extent's generation; the extent is free only after a
 *    commit; the cleaner moves live slots it still finds pointed at, drops the
 *    rest, and evicts the victim;
 *  - a commit flushes the extents written so far, writes the generations that
 *    changed, flushes, writes the table blocks that changed (reading a page
 *    first when it is out), and a superblock that clears the marks;
 *  - a crash keeps any subset of the SSD writes not yet flushed, forgets DRAM,
 *    and a reload takes free extents from the generations' parity and, before
 *    anything else, pages in the lines of marked regions, dropping them.
 * A hit must return the block's latest data; an entry into a slot that holds
 * another block is a fault (a real SSD would be blamed for it) unless it is a
 * tag alias of the same line. The counters must equal a count of the table.
 *
 * Usage: model [steps] [seed] [hdd-lines-ratio]; exits 1 at the first wrong step.
 */
#include "inc/shim.h"
#include "flaz.h"
#include "format.h"

#define EXTENT_KIB	32
#define OVERBOOK	1000
#define MAX_SLOTS	(EXTENT_KIB * 1024 / 64)
#define REGION_SHIFT	6

struct mslot {
	u32 off, bytes;
	u64 block;
	u32 ver;
};

/* An extent's slots as the SSD returns them now (cur) and after a flush (durable). */
struct mext {
	struct mslot cur[MAX_SLOTS], dur[MAX_SLOTS];
	u32 ncur, ndur;
	bool pending;		/* cur written, not flushed */
	enum { FREE, OPEN, WRITTEN, EVICTED, WORN } state;
	bool unflushed;		/* opened since the last commit's flush */
	bool written;		/* its write completed (sealed) */
	u64 evicted_at;		/* the commit count when it was evicted */
};

/* A metadata block of the SSD: as read now, and as it stays through a crash. */
struct mblk {
	u8 cur[FLAZ_BLOCK_SIZE], dur[FLAZ_BLOCK_SIZE];
	bool pending;
};

static struct flaz_geometry g;
static u64 hdd_blocks, nr_pages, page_bytes, budget;
static u32 *ver;		/* the oracle: per HDD block, its version (0: zeros) */
static struct mext *ext;
static struct mblk *tbl, *gen_blk;
static u64 nr_gen_blocks;
static unsigned long *marked_dur;	/* the superblock's marks */
static u64 sb_gen = 0x1234, commits;
static struct flaz_l2p *t;
static struct flaz_table_ctx tx;
static u64 entries[FLAZ_META_ENTRIES];
static u32 open_ext = U32_MAX;
static u32 *fifo, fifo_head, fifo_n;	/* written extents, oldest first */
static bool recovering;
static u64 rng_state;
static u64 step;
static u64 stats[16];
enum { S_HIT, S_MISS, S_FILL, S_WRITE, S_EVICT, S_MOVE, S_COMMIT, S_CRASH, S_TRIM, S_ALIAS,
	S_RESTART, S_WORN };

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u64 below(u64 n)
{
	return n ? rnd() % n : 0;
}

static void fail(const char *what, u64 block)
{
	printf("FAIL step %llu: %s (block %llu)\n", (unsigned long long)step, what,
	       (unsigned long long)block);
	exit(1);
}

static bool durable(void *data, u32 e)
{
	(void)data;
	return !ext[e].unflushed;
}

static bool marked(void *data, u64 block)
{
	(void)data;
	return test_bit(block >> REGION_SHIFT, marked_dur);
}

static void blk_write(struct mblk *b, const void *data)
{
	memcpy(b->cur, data, FLAZ_BLOCK_SIZE);
	b->pending = true;
}

/* A FLUSH: everything written so far is durable. */
static void ssd_flush(void)
{
	u64 i;

	for (i = 0; i < flaz_table_blocks(&g); i++)
		if (tbl[i].pending) {
			memcpy(tbl[i].dur, tbl[i].cur, FLAZ_BLOCK_SIZE);
			tbl[i].pending = false;
		}
	for (i = 0; i < nr_gen_blocks; i++)
		if (gen_blk[i].pending) {
			memcpy(gen_blk[i].dur, gen_blk[i].cur, FLAZ_BLOCK_SIZE);
			gen_blk[i].pending = false;
		}
	/* an open extent is in DRAM (xbuf.c) until it is sealed */
	for (i = 0; i < g.nr_extents; i++)
		if (ext[i].pending && ext[i].written) {
			memcpy(ext[i].dur, ext[i].cur, sizeof(ext[i].cur));
			ext[i].ndur = ext[i].ncur;
			ext[i].pending = false;
		}
}

static void install(u64 block);
static void write_block(u64 block);
static bool in_page_read;

/*
 * Fills and writes of blocks whose lines are in page @p, which is coming: in
 * the module they run while a page-in loads the page's blocks one by one.
 */
static void meanwhile(u64 p)
{
	u64 b, lines = FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES;

	while (below(4) == 0) {
		b = p * lines + below(lines);
		if (b >= g.nr_lines)
			return;
		b += below(hdd_blocks / g.nr_lines) * g.nr_lines;
		/* a fill, then perhaps a write of the same block, before its line loads */
		install(b);
		if (below(2))
			write_block(b);
	}
}

/*
 * meta.c page_read(): a page from the SSD as it reads now, marked lines out
 * while recovering; fills and writes of its lines come in between its blocks.
 */
static int page_read(u64 p)
{
	u64 first;
	u32 n = flaz_l2p_page_blocks(t, p, &first), i;
	bool outer = !in_page_read;
	int r;

	r = flaz_l2p_page_in(t, p);
	if (r)
		return r;
	in_page_read = true;
	for (i = 0; i < n; i++) {
		if (outer && !recovering)
			meanwhile(p);
		if (flaz_table_load(&tx, first + i, tbl[first + i].cur, sb_gen, recovering))
			flaz_l2p_set_dirty(t, first + i);
	}
	if (outer)
		in_page_read = false;
	flaz_l2p_page_done(t, p);
	return 0;
}

static void page_in_line(u64 line)
{
	if (!flaz_l2p_resident(t, line) && page_read(flaz_l2p_page_of(line)))
		fail("page-in", line);
}

/* xbuf.c seal: the open extent's write completes; reclaim may take it. */
static void seal(void)
{
	struct mext *x;

	if (open_ext == U32_MAX)
		return;
	x = &ext[open_ext];
	x->state = WRITTEN;
	x->written = true;
	x->pending = true;
	fifo[(fifo_head + fifo_n++) % g.nr_extents] = open_ext;
	open_ext = U32_MAX;
}

/* alloc.c get + xbuf.c open_extent(): a free extent, its generation made odd. */
static bool open_new(void)
{
	u32 e, start = below(g.nr_extents);

	seal();
	for (e = start; ; ) {
		if (ext[e].state == FREE)
			break;
		e = (e + 1) % g.nr_extents;
		if (e == start)
			return false;
	}
	flaz_l2p_open_extent(t, e);
	ext[e].state = OPEN;
	ext[e].unflushed = true;
	ext[e].written = false;
	ext[e].ncur = 0;
	ext[e].pending = true;
	open_ext = e;
	return true;
}

/* Room in the open extent for @bytes: its offset, or 0 when no extent is free. */
static u32 reserve(u32 bytes, u64 block, u32 v)
{
	struct mext *x;
	u32 off;

	if (open_ext != U32_MAX) {
		x = &ext[open_ext];
		off = x->ncur ? x->cur[x->ncur - 1].off + x->cur[x->ncur - 1].bytes :
				sizeof(struct flaz_extent_hdr);
		if (off + bytes > EXTENT_KIB * 1024 || x->ncur == MAX_SLOTS)
			seal();
	}
	if (open_ext == U32_MAX && !open_new())
		return 0;
	x = &ext[open_ext];
	off = x->ncur ? x->cur[x->ncur - 1].off + x->cur[x->ncur - 1].bytes :
			sizeof(struct flaz_extent_hdr);
	x->cur[x->ncur++] = (struct mslot){ .off = off, .bytes = bytes, .block = block, .ver = v };
	x->pending = true;
	return off;
}

/* fill.c install(): the block's current data into a slot (or a zero flag), its line at it. */
static void install(u64 block)
{
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry e = {}, old;
	u32 bytes = (2 + below(128)) * FLAZ_SLOT_ALIGN;

	page_in_line(line);
	if (!ver[block] && flaz_l2p_zero_fits(t)) {
		e.kind = FLAZ_ENTRY_ZERO;
	} else {
		e.off = reserve(bytes, block, ver[block]);
		if (!e.off)
			return;
		e.kind = FLAZ_ENTRY_SLOT;
		e.ext = open_ext;
		e.bytes = bytes;
	}
	flaz_l2p_lock(t, line);
	flaz_l2p_set(t, block, &e, &old);
	flaz_l2p_unlock(t, line);
	stats[S_FILL]++;
}

/* A write: its region marked durably (a superblock with PREFLUSH), the line emptied. */
static void write_block(u64 block)
{
	u64 line = flaz_l2p_line(t, block);

	if (!test_bit(block >> REGION_SHIFT, marked_dur)) {
		ssd_flush();
		set_bit(block >> REGION_SHIFT, marked_dur);
	}
	flaz_l2p_lock(t, line);
	flaz_l2p_drop_block(t, block);
	flaz_l2p_unlock(t, line);
	ver[block] = below(8) ? (u32)step + 1 : 0;
	stats[S_WRITE]++;
	if (below(2))
		install(block);
}

/* cleaner.c retire(): a new generation; free after the next commit, or never once worn. */
static void evict(u32 e)
{
	bool worn;

	flaz_l2p_evict_extent(t, e, &worn);
	ext[e].state = worn ? WORN : EVICTED;
	ext[e].evicted_at = commits;
	stats[worn ? S_WORN : S_EVICT]++;
}

static u32 take_oldest(void)
{
	u32 e;

	if (!fifo_n)
		return U32_MAX;
	e = fifo[fifo_head];
	fifo_head = (fifo_head + 1) % g.nr_extents;
	fifo_n--;
	return e;
}

/*
 * cleaner.c pass on one victim, in two halves with other steps between them,
 * as its reads and writes take time: first the victim is judged (live slots
 * listed, some given a place in an open extent), later the moves whose lines
 * still point at the victim are made and it is evicted; a slot not moved is
 * left, the victim's eviction voids it.
 */
static u32 victim = U32_MAX, nr_moves;

/* The version the slot at @off of extent @e holds. */
static u32 slot_ver(u32 e, u32 off)
{
	u32 i;

	for (i = 0; i < ext[e].ncur; i++)
		if (ext[e].cur[i].off == off)
			return ext[e].cur[i].ver;
	fail("no slot to move", off);
	return 0;
}
static struct { u64 block; u32 voff, off, bytes; u32 to; } moves[MAX_SLOTS];

static void clean_start(void)
{
	u32 i, heat;
	struct mext *x;
	u64 line;

	if (victim != U32_MAX)
		return;
	victim = take_oldest();
	if (victim == U32_MAX)
		return;
	x = &ext[victim];
	nr_moves = 0;
	for (i = 0; i < x->ncur; i++) {
		struct mslot s = x->cur[i];
		u32 off;

		line = flaz_l2p_line(t, s.block);
		flaz_l2p_lock(t, line);
		heat = flaz_l2p_points(t, s.block, victim, s.off, &heat);
		flaz_l2p_unlock(t, line);
		if (heat && below(2))
			moves[nr_moves++] = (typeof(moves[0])){ s.block, s.off, 0, s.bytes, 0 };
	}
}

static void clean_end(void)
{
	struct flaz_entry e;
	u32 i, heat;
	u64 line;

	if (victim == U32_MAX)
		return;
	/* the bins are written, then the lines that still point at the victim moved */
	for (i = 0; i < nr_moves; i++) {
		moves[i].off = reserve(moves[i].bytes, moves[i].block,
				       slot_ver(victim, moves[i].voff));
		moves[i].to = open_ext;
	}
	for (i = 0; i < nr_moves; i++) {
		line = flaz_l2p_line(t, moves[i].block);
		flaz_l2p_lock(t, line);
		if (moves[i].off &&
		    flaz_l2p_points(t, moves[i].block, victim, moves[i].voff, &heat)) {
			e = (struct flaz_entry){ .kind = FLAZ_ENTRY_SLOT, .ext = moves[i].to,
						 .off = moves[i].off, .bytes = moves[i].bytes };
			flaz_l2p_move(t, moves[i].block, &e);
			stats[S_MOVE]++;
		}
		flaz_l2p_unlock(t, line);
	}
	evict(victim);
	victim = U32_MAX;
}

/* cleaner.c flaz_cleaner_empty() (invalidate): every line dropped, every written extent evicted. */
static void invalidate(void)
{
	u32 e;

	flaz_l2p_drop_all(t);
	while ((e = take_oldest()) != U32_MAX)
		evict(e);
}

/* meta.c commit(), in its order. */
static void commit(void)
{
	u64 idx, nr = flaz_table_blocks(&g), p, c0 = commits;
	u8 blk[FLAZ_BLOCK_SIZE];
	bool gens = false;
	u32 e;

	if (recovering)
		return;
	/* extents whose write completed: durable after this flush */
	for (e = 0; e < g.nr_extents; e++)
		if (ext[e].written)
			ext[e].unflushed = false;
	ssd_flush();
	for (idx = flaz_l2p_next_gen_dirty(t, 0); idx < nr_gen_blocks;
	     idx = flaz_l2p_next_gen_dirty(t, idx + 1)) {
		flaz_l2p_take_gen_dirty(t, idx);
		flaz_gen_encode(blk, sb_gen, commits + 1, idx,
				flaz_l2p_gens(t) + idx * FLAZ_GEN_ENTRIES);
		blk_write(&gen_blk[idx], blk);
		gens = true;
	}
	if (gens)
		ssd_flush();
	for (idx = flaz_l2p_next_dirty(t, 0); idx < nr; idx = flaz_l2p_next_dirty(t, idx + 1)) {
		p = idx / FLAZ_L2P_PAGE_BLOCKS;
		if (!flaz_l2p_resident(t, idx * FLAZ_META_ENTRIES) && !flaz_l2p_void_block(t, idx) &&
		    page_read(p))
			fail("commit page-in", idx);
		if (!flaz_l2p_take_dirty(t, idx))
			continue;
		if (flaz_table_encode(&tx, idx, sb_gen, commits + 1, blk))
			flaz_l2p_set_dirty(t, idx);
		blk_write(&tbl[idx], blk);
	}
	/* the superblock: PREFLUSH|FUA, and the marks go (every write is in the table) */
	ssd_flush();
	commits++;
	bitmap_zero(marked_dur, DIV_ROUND_UP_ULL(hdd_blocks, 1ULL << REGION_SHIFT));
	/* extents evicted before the commit began are free now */
	for (e = 0; e < g.nr_extents; e++)
		if (ext[e].state == EVICTED && ext[e].evicted_at <= c0)
			ext[e].state = FREE;
	stats[S_COMMIT]++;
}

/* A power cut: any subset of what was not flushed stays. */
static void crash_ssd(void)
{
	u64 i;

	for (i = 0; i < flaz_table_blocks(&g); i++)
		if (tbl[i].pending && below(2))
			memcpy(tbl[i].dur, tbl[i].cur, FLAZ_BLOCK_SIZE);
	for (i = 0; i < nr_gen_blocks; i++)
		if (gen_blk[i].pending && below(2))
			memcpy(gen_blk[i].dur, gen_blk[i].cur, FLAZ_BLOCK_SIZE);
	for (i = 0; i < g.nr_extents; i++) {
		if (ext[i].pending && ext[i].written && below(2)) {
			memcpy(ext[i].dur, ext[i].cur, sizeof(ext[i].cur));
			ext[i].ndur = ext[i].ncur;
		}
	}
	for (i = 0; i < flaz_table_blocks(&g); i++) {
		memcpy(tbl[i].cur, tbl[i].dur, FLAZ_BLOCK_SIZE);
		tbl[i].pending = false;
	}
	for (i = 0; i < nr_gen_blocks; i++) {
		memcpy(gen_blk[i].cur, gen_blk[i].dur, FLAZ_BLOCK_SIZE);
		gen_blk[i].pending = false;
	}
	for (i = 0; i < g.nr_extents; i++) {
		memcpy(ext[i].cur, ext[i].dur, sizeof(ext[i].cur));
		ext[i].ncur = ext[i].ndur;
		ext[i].pending = false;
	}
}

/* meta.c load(): generations, free extents by parity, then recovery of marked lines. */
static void reload(void)
{
	u64 i, commit, b, line;
	u16 *gens;
	u32 e;
	int r;

	flaz_l2p_destroy(t);
	t = flaz_l2p_create(g.nr_lines, g.nr_extents, EXTENT_KIB * 1024, hdd_blocks, false);
	if (IS_ERR(t))
		fail("l2p create", 0);
	tx.l2p = t;
	gens = flaz_l2p_gens(t);
	for (i = 0; i < nr_gen_blocks; i++) {
		r = flaz_gen_decode(gen_blk[i].cur, sb_gen, i, &commit, gens + i * FLAZ_GEN_ENTRIES);
		if (r == -ENODATA)
			memset(gens + i * FLAZ_GEN_ENTRIES, 0, FLAZ_GEN_ENTRIES * sizeof(u16));
		else if (r)
			fail("gen block", i);
	}
	open_ext = U32_MAX;
	victim = U32_MAX;
	fifo_head = 0;
	fifo_n = 0;
	for (e = 0; e < g.nr_extents; e++) {
		ext[e].unflushed = false;
		ext[e].written = false;
		if (flaz_l2p_worn(t, e)) {
			ext[e].state = WORN;
		} else if (flaz_l2p_in_use(t, e)) {
			ext[e].state = WRITTEN;
			fifo[(fifo_head + fifo_n++) % g.nr_extents] = e;
		} else {
			ext[e].state = FREE;
		}
	}
	/* recovery: every page holding a line of a block in a marked region, before any commit */
	recovering = true;
	for (b = 0; b < hdd_blocks; b++) {
		line = flaz_l2p_line(t, b);
		if (marked(NULL, b) && !flaz_l2p_resident(t, line))
			page_in_line(line);
	}
	recovering = false;
}

/* Check block @b: a hit must be its latest data. */
static void check_block(u64 b)
{
	u64 line = flaz_l2p_line(t, b);
	struct flaz_entry e;
	struct mext *x;
	bool hit;
	u32 i;

	flaz_l2p_lock(t, line);
	hit = flaz_l2p_lookup(t, b, &e);
	flaz_l2p_unlock(t, line);
	if (!hit) {
		stats[S_MISS]++;
		return;
	}
	stats[S_HIT]++;
	if (e.kind == FLAZ_ENTRY_ZERO) {
		if (ver[b])
			fail("stale: a zero entry for a block written since", b);
		return;
	}
	x = &ext[e.ext];
	if (x->state == FREE || x->state == EVICTED || x->state == WORN)
		fail("an entry into an extent not in use", b);
	for (i = 0; i < x->ncur && x->cur[i].off != e.off; i++)
		;
	if (i == x->ncur || x->cur[i].bytes != e.bytes)
		fail("an entry into no slot (fault)", b);
	if (x->cur[i].block != b) {
		if (x->cur[i].block % g.nr_lines != line ||
		    ((x->cur[i].block / g.nr_lines) ^ (b / g.nr_lines)) % (1 << FLAZ_TAG_BITS))
			fail("an entry into another block's slot (fault)", b);
		stats[S_ALIAS]++;
		return;
	}
	if (x->cur[i].ver != ver[b])
		fail("stale: a hit returned old data", b);
}

/* The counters against a count of the resident entries. */
static void check_counts(void)
{
	u64 line, blocks = 0, logical = 0, physical = 0, raw = 0, cb, cl, cp, cr, cc;
	struct flaz_entry e;

	for (line = 0; line < g.nr_lines; line++) {
		if (!flaz_l2p_resident(t, line))
			continue;
		flaz_l2p_get(t, line, &e);
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
	flaz_l2p_usage(t, &cb, &cl, &cp);
	flaz_l2p_codec_usage(t, &cr, &cc);
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
	u64 b, hot, i;
	u32 op;

	rng_state = seed * 2654435761ULL + 1;
	/* 32 KiB extents, overbook 1000: ten lines per block of cache */
	if (flaz_geometry_init(&g, 600 * 64 + 4096, EXTENT_KIB, OVERBOOK))
		fail("geometry", 0);
	hdd_blocks = g.nr_lines * ratio + 17;
	nr_pages = DIV_ROUND_UP_ULL(g.nr_lines, FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES);
	nr_gen_blocks = flaz_gen_blocks(&g);
	ver = calloc(hdd_blocks, sizeof(*ver));
	ext = calloc(g.nr_extents, sizeof(*ext));
	tbl = calloc(flaz_table_blocks(&g), sizeof(*tbl));
	gen_blk = calloc(nr_gen_blocks, sizeof(*gen_blk));
	fifo = calloc(g.nr_extents, sizeof(*fifo));
	marked_dur = calloc(BITS_TO_LONGS(DIV_ROUND_UP_ULL(hdd_blocks, 1ULL << REGION_SHIFT)),
			    sizeof(long));
	tx = (struct flaz_table_ctx){ .geo = &g, .hdd_blocks = hdd_blocks, .durable = durable,
				      .marked = marked, .entries = entries };
	t = flaz_l2p_create(g.nr_lines, g.nr_extents, EXTENT_KIB * 1024, hdd_blocks, false);
	if (IS_ERR(t))
		fail("l2p create", 0);
	tx.l2p = t;
	/* an eighth of the extents start near their last generation: they wear out in the run */
	for (i = 0; i < g.nr_extents; i += 8)
		flaz_l2p_gens(t)[i] = (1U << g.gen_bits) - 2 - 2 * 4;
	for (i = 0; i < g.nr_extents; i++)
		ext[i].state = FREE;
	/* a quarter of the table, or less: most of it is out at any time */
	page_bytes = flaz_l2p_bytes(t) / nr_pages;
	hot = g.nr_lines / 4;

	for (step = 0; step < steps; step++) {
		op = below(1000);
		/* mostly a hot set, so entries live long enough to be paged and evicted */
		b = below(4) ? below(hot) * ratio % hdd_blocks : below(hdd_blocks);
		if (op < 300) {
			check_block(b);
			if (!flaz_l2p_lookup(t, b, &(struct flaz_entry){}) && below(2))
				install(b);
		} else if (op < 550) {
			write_block(b);
		} else if (op < 600) {
			u32 v = take_oldest();

			if (v != U32_MAX)
				evict(v);
		} else if (op < 615) {
			clean_start();
		} else if (op < 630) {
			clean_end();
		} else if (op < 700) {
			budget = below(flaz_l2p_bytes(t) / 4 + page_bytes);
			/* a commit's trim, or a page-in's room (a few steps of the clock) */
			if (op < 665)
				flaz_l2p_trim(t, budget);
			else
				flaz_l2p_make_room(t, budget, 1 + below(64));
			stats[S_TRIM]++;
		} else if (op < 740) {
			commit();
		} else if (op < 742) {
			crash_ssd();
			reload();
			stats[S_CRASH]++;
		} else if (op < 743) {
			/* a clean stop: everything written, then loaded again */
			seal();
			commit();
			reload();
			stats[S_RESTART]++;
		} else if (op == 743 && !below(10)) {
			invalidate();
		} else {
			check_block(b);
		}
		for (i = 0; i < 4; i++)
			check_block(below(hdd_blocks));
		if (!(step % 4096))
			check_counts();
	}
	check_counts();
	printf("model: %llu steps, seed %llu, %llu lines, %llu extents, %llu pages: hits %llu misses %llu aliases %llu fills %llu writes %llu evictions %llu worn %llu moves %llu commits %llu trims %llu crashes %llu restarts %llu\n",
	       (unsigned long long)steps, (unsigned long long)seed,
	       (unsigned long long)g.nr_lines, (unsigned long long)g.nr_extents,
	       (unsigned long long)nr_pages, (unsigned long long)stats[S_HIT],
	       (unsigned long long)stats[S_MISS], (unsigned long long)stats[S_ALIAS],
	       (unsigned long long)stats[S_FILL], (unsigned long long)stats[S_WRITE],
	       (unsigned long long)stats[S_EVICT], (unsigned long long)stats[S_WORN],
	       (unsigned long long)stats[S_MOVE], (unsigned long long)stats[S_COMMIT],
	       (unsigned long long)stats[S_TRIM], (unsigned long long)stats[S_CRASH],
	       (unsigned long long)stats[S_RESTART]);
	return 0;
}

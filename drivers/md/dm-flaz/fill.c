// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz fill path: the whole blocks of a completed read miss or write are
 * copied out of the bio by a work item before the bio ends (cache.c; never in
 * its completion, which may be hard IRQ), then compressed and installed in
 * batches: one work item per FILL_BATCH blocks on this CPU's fill queue, so a
 * large bio takes a few work items, not one per block.
 *
 * A block is compressed in its CPU's stream and copied once, straight into the
 * slot reserved for it in the extent buffer; then its line points there. The
 * fill holds the bio's record (records.c), so a write mapped since makes it
 * stale and it installs nothing older than that write.
 *
 * Fills are what the cache may skip: when the backlog is full, memory is
 * short, no extent came free in time (an install waits for the one an
 * eviction frees) or the line's table page cannot come in, they are dropped
 * and counted in fills_skipped and by reason; a user I/O never waits for one
 * and never fails for one.
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

/*
 * Blocks copied and waiting to be installed. Installs go at the SSD's pace, so
 * when the HDD delivers faster, further fills are skipped rather than queued.
 */
#define MAX_PENDING_FILLS	16384	/* 64 MiB */
#define FILL_BATCH		8	/* blocks a work item installs */
/*
 * How long an install waits for an extent an eviction frees: a commit and its
 * discards on a busy SSD. Longer, the SSD is in trouble (its faults decide)
 * and the block is skipped.
 */
#define FILL_SPACE_WAIT		(5 * HZ)

#ifdef FLAZ_BENCH
/*
 * make bench measures writes' other admission beside the default (a written
 * block goes in on probation, as a fill does): with admission on, a written
 * block goes in only when it was cached, or a ghost, before the write (of a
 * write's first 64 blocks; the rest never).
 */
static bool write_admit_cached;
module_param(write_admit_cached, bool, 0644);
MODULE_PARM_DESC(write_admit_cached, "bench: install written blocks cached or ghosts only");
#else
#define write_admit_cached false
#endif

struct flaz_fill;

/* A batch of the fill's blocks, installed by one work item. */
struct fill_unit {
	struct work_struct work;
	struct flaz_fill *fill;
	u32 first, nr;		/* the fill's blocks it installs */
};

/* Blocks to install, taken from a completed read miss or write. */
struct flaz_fill {
	struct flaz_record rec;
	struct flaz_cache *c;
	atomic_t pending;	/* units not done */
	u64 block;
	u32 nr;
	bool read;
	u64 was_cached;		/* a write's: its first 64 blocks cached or ghosts (cache.c) */
	struct fill_unit *units;	/* after data[] */
	void *data[];		/* a page per block */
};

/*
 * The largest payload that saves @saving percent of a block; 0 to store every
 * block raw. A compressed slot always takes less of the SSD than a raw one (an
 * alignment unit at least), or the raw block is better: it costs no
 * decompression. So a raw slot is the only one of its size (l2p.c counts on it).
 */
u32 flaz_max_payload(u32 saving)
{
	if (saving >= 100)
		return 0;
	return min(FLAZ_BLOCK_SIZE - FLAZ_BLOCK_SIZE * saving / 100,
		   FLAZ_BLOCK_SIZE - FLAZ_SLOT_ALIGN);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_max_payload);

/* The largest compressed payload worth keeping; 0 to store every block raw. */
u32 flaz_fill_max_payload(struct flaz_cache *c)
{
	return flaz_max_payload(flaz_opt_get(c->opts, FLAZ_OPT_COMPRESS_MIN_SAVING));
}

/* A caller's place callback, and the payload pointer it returned. */
struct slot_place {
	void *(*place)(void *ctx, unsigned int len);
	void *ctx;
	void *payload;
};

static void *place_payload(void *ctx, unsigned int len)
{
	struct slot_place *sp = ctx;

	sp->payload = sp->place(sp->ctx, len);
	return sp->payload;
}

/*
 * Build a slot from HDD block @info->block (@data) as an install does:
 * compressed by @comp when that takes at most @max bytes (0: not tried), else
 * the block raw; with a @bypass, the codec is not tried on a block it predicts
 * raw, and learns from those it is tried on. @place(@ctx, payload length)
 * reserves the slot and returns where its payload goes, after the header. Then
 * @info gets its seq (taken from @seq once the slot is placed, so it is later
 * than its extent's opening), length and flags, and the header is written.
 * Returns 0, 1 when the bypass stored the block raw, or @place's error.
 */
int flaz_fill_slot(struct flaz_compressor *comp, struct flaz_bypass *bypass,
		   const void *data, u32 max, void *(*place)(void *ctx, unsigned int len),
		   void *ctx, atomic64_t *seq, struct flaz_slot_info *info)
{
	struct slot_place sp = { .place = place, .ctx = ctx };
	bool skipped = false;
	int len = 0;

	if (max && bypass && flaz_bypass_skip(bypass, info->block, data, max)) {
		skipped = true;
		max = 0;
	}
	if (max) {
		len = flaz_compress(comp, data, max, place_payload, &sp);
		if (bypass)
			flaz_bypass_learn(bypass, info->block, !len);
	}
	if (!len) {
		/* not worth compressing: the block itself */
		if (!IS_ERR(place_payload(&sp, FLAZ_BLOCK_SIZE)))
			memcpy(sp.payload, data, FLAZ_BLOCK_SIZE);
		len = FLAZ_BLOCK_SIZE;
	}
	if (IS_ERR(sp.payload))
		return PTR_ERR(sp.payload);
	info->seq = atomic64_inc_return(seq);
	info->len = len;
	info->flags = len == FLAZ_BLOCK_SIZE ? FLAZ_SLOT_RAW : 0;
	flaz_slot_encode(sp.payload - sizeof(struct flaz_slot_hdr), info);
	return skipped;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_fill_slot);

struct place {
	struct flaz_cache *c;
	struct flaz_xslot *s;
};

/* Reserve the slot for a payload of @len bytes; the codec copies it in. */
static void *place_slot(void *ctx, unsigned int len)
{
	struct place *p = ctx;
	int r = flaz_xbuf_reserve(p->c->xbuf, flaz_slot_bytes(len), p->s);

	return r ? ERR_PTR(r) : p->s->mem + sizeof(struct flaz_slot_hdr);
}

/* Whether @block's line holds it now (not a block its cut tag stands for too). */
static bool cached(struct flaz_cache *c, u64 block)
{
	u64 line = flaz_l2p_line(c->l2p, block);
	struct flaz_entry e;
	bool hit;

	flaz_l2p_lock(c->l2p, line);
	hit = flaz_l2p_lookup(c->l2p, block, &e);
	flaz_l2p_unlock(c->l2p, line);
	return hit && (e.kind == FLAZ_ENTRY_ZERO || flaz_l2p_tags_whole(c->l2p));
}

/* Admission on (probation_percent): held lines and ghosts; off, every fill goes in. */
static bool admission(struct flaz_cache *c)
{
	return flaz_opt_get(c->opts, FLAZ_OPT_PROBATION_PERCENT);
}

/*
 * Whether @block's line (lock held) holds another block hit since it was
 * filled. The table is direct-mapped: installing @block would evict it, and a
 * block read once must not push out one read again (S3-FIFO's admission: a
 * newcomer is on probation). Its heat halves with every move it gets without
 * a hit (cleaner.c), so a block that stops being read frees its line.
 */
static bool held(struct flaz_cache *c, u64 block)
{
	struct flaz_entry e;

	/* a lookup that misses leaves the line's entry, whatever its block, in e */
	if (!admission(c) || flaz_l2p_lookup(c->l2p, block, &e))
		return false;
	return e.kind != FLAZ_ENTRY_NONE && flaz_l2p_heat(c->l2p, flaz_l2p_line(c->l2p, block));
}

/*
 * Whether every written block goes in (on probation when admission is on), so
 * a write need not note which of its blocks were cached (cache.c): always, but
 * in the bench's module with write_admit_cached.
 */
bool flaz_fill_all_writes(struct flaz_cache *c)
{
	return !write_admit_cached || !admission(c);
}

/* Whether a written @block may go in; any read may. */
static bool write_admitted(struct flaz_fill *fill, u64 block)
{
	u64 i = block - fill->block;

	if (fill->read || flaz_fill_all_writes(fill->c))
		return true;
	return i < BITS_PER_TYPE(fill->was_cached) && (fill->was_cached & BIT_ULL(i));
}

/* @nr blocks not installed, and why: fills_skipped and its reason. */
static void skipped(struct flaz_cache *c, enum flaz_stat why, u32 nr)
{
	flaz_stats_add(c->stats, FLAZ_STAT_FILLS_SKIPPED, nr);
	flaz_stats_add(c->stats, why, nr);
}

/*
 * Whether an install may go on: in normal mode, with an extent free for its
 * slot. When there is none but the cleaner's reserve, the eviction it starts
 * (O(1) an extent, cleaner.c) frees one at the next commit: wait for that,
 * outside any stream or lock, until @until (also for an install that keeps
 * losing the extent to others); not at all when no commit can free one
 * (recovering after a crash, or nothing written to evict) or the volume is
 * suspending. Out of normal mode the block is not counted: the SSD's trouble is.
 */
static bool room(struct flaz_cache *c, unsigned long until)
{
	long left;

	for (;;) {
		if (flaz_mode_get(c) != FLAZ_MODE_NORMAL)
			return false;
		if (time_after_eq(jiffies, until))
			break;
		if (flaz_alloc_room(c->alloc))
			return true;
		if (flaz_meta_recovering(c->meta) || !flaz_alloc_reclaimable(c->alloc))
			break;
		c->ev->starved(c);
		left = until - jiffies;
		if (left <= 0 || !flaz_alloc_wait(c->alloc, left))
			break;
	}
	skipped(c, FLAZ_STAT_SKIPPED_SPACE, 1);
	return false;
}

/* Compress @block (@data) into a slot (or a zero flag) and point its line at it. */
static void install(struct flaz_fill *fill, u64 block, void *data)
{
	struct flaz_cache *c = fill->c;
	struct flaz_slot_info info = { .block = block, .codec = c->codec };
	u64 line = flaz_l2p_line(c->l2p, block);
	struct flaz_entry e = {}, old, was;
	struct flaz_xslot s = {};
	struct place p = { c, &s };
	unsigned long until = jiffies + FILL_SPACE_WAIT;
	struct flaz_bypass *bypass = c->bypass;
	bool zero = !memchr_inv(data, 0, FLAZ_BLOCK_SIZE) && flaz_l2p_zero_fits(c->l2p);
	bool same, done, out, taken, ghost = false;
	int r;

	if (!write_admitted(fill, block))
		return;
	/* The SSD is in trouble: keep what is cached, add nothing; a zero block needs no slot. */
	if (zero ? flaz_mode_get(c) != FLAZ_MODE_NORMAL : !room(c, until))
		return;
	/* the line's page, read from the SSD if it is out: no memory, an error, or no room */
	if (flaz_meta_page_in(c->meta, line, false)) {
		skipped(c, FLAZ_STAT_SKIPPED_TABLE, 1);
		return;
	}
	/*
	 * A read missed only because the page was out (after a restart): the SSD
	 * holds the block already, and no write came since the read began.
	 */
	if (fill->read && !READ_ONCE(fill->rec.stale) && cached(c, block))
		return;
	flaz_l2p_lock(c->l2p, line);
	taken = held(c, block);
	flaz_l2p_unlock(c->l2p, line);
	if (taken) {
		skipped(c, FLAZ_STAT_SKIPPED_HOT, 1);
		return;
	}
	if (zero) {
		e.kind = FLAZ_ENTRY_ZERO;
	} else {
		info.line = line;
		for (;;) {
			r = flaz_fill_slot(c->comp, bypass, data, flaz_fill_max_payload(c),
					   place_slot, &p, &c->seq, &info);
			if (r != -ENOSPC)
				break;
			/*
			 * Another install took the extent room() saw: wait for
			 * the next one. The bypass learnt this block once.
			 */
			bypass = NULL;
			if (!room(c, until))
				return;
		}
		if (r < 0) {
			skipped(c, FLAZ_STAT_SKIPPED_SPACE, 1);
			return;
		}
		if (r)
			flaz_stats_add(c->stats, FLAZ_STAT_COMPRESS_SKIPPED, 1);
		e.kind = FLAZ_ENTRY_SLOT;
		e.ext = s.ext;
		e.off = s.off;
		e.bytes = info.bytes;
	}

	flaz_l2p_lock(c->l2p, line);
	/* and the page was not paged out again since, nor a hot block installed */
	done = !READ_ONCE(fill->rec.stale);
	out = done && !flaz_l2p_resident(c->l2p, line);
	taken = done && !out && held(c, block);
	done = done && !out && !taken;
	if (done) {
		same = flaz_l2p_lookup(c->l2p, block, &was);
		ghost = e.kind == FLAZ_ENTRY_SLOT && admission(c) && flaz_l2p_ghost(c->l2p, block);
		flaz_l2p_set(c->l2p, block, &e, &old);
		/* back a lap after its eviction: admitted, as if hit once (cleaner.c) */
		if (ghost) {
			flaz_l2p_touch(c->l2p, line);
			set_bit(e.ext, c->hit);
		}
	}
	flaz_l2p_unlock(c->l2p, line);
	if (s.x)
		flaz_xbuf_commit(c->xbuf, &s);
	if (taken)
		skipped(c, FLAZ_STAT_SKIPPED_HOT, 1);
	if (out)
		skipped(c, FLAZ_STAT_SKIPPED_TABLE, 1);
	if (!done)
		return;
	if (fill->read)
		flaz_stats_add(c->stats, FLAZ_STAT_FILLS, 1);
	if (ghost)
		flaz_stats_add(c->stats, FLAZ_STAT_GHOST_HITS, 1);
	if (e.kind == FLAZ_ENTRY_ZERO)
		flaz_stats_add(c->stats, FLAZ_STAT_ZERO_BLOCKS, 1);
	else if (info.flags & FLAZ_SLOT_RAW)
		flaz_stats_add(c->stats, FLAZ_STAT_RAW_BLOCKS, 1);
	if (old.kind != FLAZ_ENTRY_NONE && !same)
		flaz_stats_add(c->stats, FLAZ_STAT_EVICTIONS, 1);
}

static void free_fill(struct flaz_fill *fill, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		free_page((unsigned long)fill->data[i]);
	kfree(fill);
}

static void unit_work(struct work_struct *work)
{
	struct fill_unit *u = container_of(work, struct fill_unit, work);
	struct flaz_fill *fill = u->fill;
	struct flaz_cache *c = fill->c;
	u32 i;

	for (i = u->first; i < u->first + u->nr; i++)
		install(fill, fill->block + i, fill->data[i]);
	atomic_sub(u->nr, &c->pending_fills);
	if (atomic_dec_and_test(&fill->pending)) {
		flaz_records_del(&c->records, &fill->rec);
		free_fill(fill, fill->nr);
	}
}

/*
 * Copy @nr whole blocks of a completed bio from @block (@skip bytes into the
 * data at @iter), before the bio ends (a work item: cache.c). Memory that does
 * not come at once skips the fill: a cache does not wait on reclaim.
 */
static struct flaz_fill *make_fill(struct flaz_cache *c, struct bio *bio,
				   struct bvec_iter iter, u32 skip, u64 block, u32 nr,
				   u64 was_cached)
{
	u32 nr_units = DIV_ROUND_UP(nr, FILL_BATCH);
	struct flaz_fill *fill;
	u32 i;

	/* never a completion (hard IRQ or softirq): a bio-sized copy there holds the CPU */
	lockdep_assert(in_task());
	fill = kzalloc(struct_size(fill, data, nr) + nr_units * sizeof(struct fill_unit),
		       GFP_NOWAIT | __GFP_NOWARN);
	if (!fill)
		return NULL;
	fill->units = (struct fill_unit *)&fill->data[nr];
	fill->c = c;
	fill->block = block;
	fill->nr = nr;
	fill->read = bio_data_dir(bio) == READ;
	fill->was_cached = was_cached;
	atomic_set(&fill->pending, nr_units);
	for (i = 0; i < nr; i++) {
		fill->data[i] = (void *)__get_free_page(GFP_NOWAIT | __GFP_NOWARN);
		if (!fill->data[i]) {
			free_fill(fill, i);
			return NULL;
		}
		flaz_copy_block(bio, iter, skip + i * FLAZ_BLOCK_SIZE, fill->data[i], false);
	}
	for (i = 0; i < nr_units; i++) {
		struct fill_unit *u = &fill->units[i];

		INIT_WORK(&u->work, unit_work);
		u->fill = fill;
		u->first = i * FILL_BATCH;
		u->nr = min_t(u32, FILL_BATCH, nr - u->first);
	}
	return fill;
}

/*
 * Install @nr whole blocks from @block of a completed read miss or write whose
 * record is @rec: the fill takes the record over, or drops it. Returns false
 * when a write made the record stale (the blocks are older than it); blocks
 * skipped otherwise count in fills_skipped. Costs,
 * in a work item: per block, a compression, a slot in an open extent, and a
 * line set under its lock; a page-in (one 4 KiB read) when the line's page is
 * out.
 */
bool flaz_fill(struct flaz_cache *c, struct bio *bio, struct bvec_iter iter, u32 skip,
	       u64 block, u32 nr, u64 was_cached, struct flaz_record *rec)
{
	enum flaz_stat why = FLAZ_STAT_SKIPPED_MEMORY;
	struct flaz_fill *fill = NULL;
	u32 i;

	if (atomic_add_return(nr, &c->pending_fills) > MAX_PENDING_FILLS)
		why = FLAZ_STAT_SKIPPED_BUSY;
	else
		fill = make_fill(c, bio, iter, skip, block, nr, was_cached);
	if (!fill) {
		atomic_sub(nr, &c->pending_fills);
		skipped(c, why, nr);
		flaz_records_del(&c->records, rec);
		return true;
	}
	/* unless a write made the bio's record stale meanwhile */
	if (!flaz_records_pass(&c->records, rec, &fill->rec)) {
		atomic_sub(nr, &c->pending_fills);
		free_fill(fill, nr);
		return false;
	}
	for (i = 0; i < DIV_ROUND_UP(nr, FILL_BATCH); i++)
		flaz_wq_write(&c->wq, &fill->units[i].work);
	return true;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz data path: a direct-mapped, write-through cache of 4 KiB blocks.
 *
 * Runs of cached blocks are served from the SSD or the extent buffer (hit.c);
 * misses go to the HDD and their data is installed afterwards (fill.c). Writes
 * go to the HDD, and once it has them the new data is installed too. Each
 * installed block is compressed into a slot of an extent (xbuf.c) that the
 * table (l2p.c) points at; the cleaner (cleaner.c) makes room. What the SSD
 * is used for, and the faults that change it, are mode.c's.
 *
 * A bio is cut (dm_accept_partial_bio) where it changes from hits to misses, so
 * each piece is served whole by one side, and at the end of a block it starts
 * or ends in part: such a piece is a hit if its block is cached; otherwise the
 * whole block is read and filled (partial.c). A write of part of a cached
 * block is cut likewise, and updates it (patch.c); of one not cached, it drops
 * the block's line.
 *
 * Installs race with writes: an install made from data older than a write that
 * has been mapped must not land. Every write, discard, read miss and pending
 * install has a record (records.c) that a write marks stale. An install checks
 * staleness under the line's lock, and a write marks before it drops lines, so
 * either the install lands first and is dropped, or it sees the mark.
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/dm-io.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "flaz.h"
#include "format.h"

#define DM_MSG_PREFIX "flaz"

/* Writes and discards spanning more blocks drop their lines in a worker, not in .map. */
#define MAX_INLINE_DROP		4096

/* Per-bio data. */
struct flaz_bio {
	struct flaz_record rec;
	struct work_struct work;	/* a large drop, off .map */
	struct work_struct fill_work;	/* the copy for a fill, off the completion */
	struct flaz_cache *c;
	enum flaz_mode mode;		/* as mapped */
	bool count;			/* count write hits and misses */
	bool end;			/* a discard the HDD cannot take: end it here */
	struct bvec_iter iter;	/* the data as mapped: the HDD consumes bi_iter */
	u64 block;		/* first whole block */
	u32 skip;		/* bytes of the bio before it */
	u32 nr_blocks;		/* whole blocks to install on completion */
	u64 was_cached;		/* of a write's first 64 whole blocks: cached or ghosts (fill.c) */
	struct flaz_patch *patch;	/* a write of part of a cached block: its update */
	bool tracked;		/* rec is in the records */
	bool intent;		/* counted in its write-intent regions */
	u64 held_ns;		/* when it began waiting for its mark */
};

static bool is_cached(struct flaz_cache *c, u64 block, struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(c->l2p, block);
	bool hit;

	flaz_l2p_lock(c->l2p, line);
	hit = flaz_l2p_lookup(c->l2p, block, e);
	flaz_l2p_unlock(c->l2p, line);
	return hit;
}

/*
 * Drop the lines of blocks @first..@last, those that hold them; with @count,
 * counts the whole blocks (@whole_first..@whole_end) as write hits or misses,
 * and, when fill.c asks for it, notes in @was those of the first 64 that were
 * cached or ghosts. A span of every line drops them all.
 */
void flaz_cache_drop_blocks(struct flaz_cache *c, u64 first, u64 last, u64 whole_first,
			    u64 whole_end, bool count, u64 *was)
{
	bool note = count && !flaz_fill_all_writes(c);
	u64 b, line;
	bool hit, ghost;

	if (last - first >= c->geo->nr_lines) {
		flaz_l2p_drop_all(c->l2p);
		return;
	}
	for (b = first; b <= last; b++) {
		if (!((b - first + 1) % MAX_INLINE_DROP))
			cond_resched();
		line = flaz_l2p_line(c->l2p, b);
		flaz_l2p_lock(c->l2p, line);
		ghost = note && flaz_l2p_ghost(c->l2p, b);
		hit = flaz_l2p_drop_block(c->l2p, b);
		flaz_l2p_unlock(c->l2p, line);
		if (!count || b < whole_first || b >= whole_end)
			continue;
		flaz_stats_add(c->stats, hit ? FLAZ_STAT_WRITE_HITS : FLAZ_STAT_WRITE_MISSES, 1);
		if (note && (hit || ghost) && b - whole_first < BITS_PER_TYPE(*was))
			*was |= BIT_ULL(b - whole_first);
	}
}
EXPORT_SYMBOL_IF_KUNIT(flaz_cache_drop_blocks);

static int remap(struct flaz_cache *c, struct bio *bio)
{
	bio_set_dev(bio, c->hdd);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(c->ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static u64 seq_cutoff(struct flaz_cache *c)
{
	return (u64)flaz_opt_get(c->opts, FLAZ_OPT_SEQ_CUTOFF_KIB) * 2;
}

/* @nr blocks go to the HDD and stay uncached, for reason @why: bypasses by reason. */
static void bypass(struct flaz_cache *c, enum flaz_stat why, u64 nr)
{
	flaz_stats_add(c->stats, FLAZ_STAT_BYPASSES, nr);
	flaz_stats_add(c->stats, why, nr);
}

/* Part of a sequential stream longer than seq_cutoff_kib: do not cache it (counted). */
static bool sequential(struct flaz_cache *c, sector_t start, u32 sectors)
{
	if (!flaz_seq_note(c->streams, start, sectors, seq_cutoff(c)))
		return false;
	flaz_stats_add(c->stats, FLAZ_STAT_SEQ_BYPASS_KIB, sectors / 2);
	return true;
}

/* Whether @block's line is on table page @page. */
static bool on_page(struct flaz_cache *c, u64 block, u64 page)
{
	return flaz_l2p_page_of(flaz_l2p_line(c->l2p, block)) == page;
}

/*
 * Blocks @block..+@nr of read @bio (whole blocks, cut to them) miss: counted,
 * and sent to the HDD; with @fill, filled on completion.
 */
static int read_miss(struct flaz_cache *c, struct bio *bio, struct flaz_bio *pb, u64 block,
		     u32 nr, bool fill)
{
	flaz_stats_add(c->stats, FLAZ_STAT_READ_MISSES, nr);
	if (!fill)
		return remap(c, bio);
	pb->rec.first = block;
	pb->rec.last = block + nr - 1;
	pb->rec.write = false;
	pb->iter = bio->bi_iter;
	pb->block = block;
	pb->skip = 0;
	pb->nr_blocks = nr;
	pb->tracked = true;
	flaz_records_add(&c->records, &pb->rec);
	return remap(c, bio);
}

/*
 * A read whose blocks' table page was out (map_read()), off .map: the page
 * read in (paging.c), the bio is served whole from the cache, or else from the
 * HDD as a miss (some block not cached, or the page could not come in: no
 * memory, or only dirty pages resident at the cap until a commit). A page that
 * is resident but leaving is still read. The bio may end in the serve: nothing
 * of it is read after that.
 */
static void page_work(struct work_struct *work)
{
	struct flaz_bio *pb = container_of(work, struct flaz_bio, work);
	struct bio *bio = dm_bio_from_per_bio_data(pb, sizeof(*pb));
	struct flaz_cache *c = pb->c;
	u64 block = pb->block;
	u32 nr = bio_sectors(bio) >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	enum flaz_mode mode = flaz_mode_get(c);

	if (mode == FLAZ_MODE_NORMAL)
		flaz_meta_page_in(c->meta, flaz_l2p_line(c->l2p, block), true);
	if (mode != FLAZ_MODE_PASSTHROUGH && flaz_hit_serve_all(c, bio, block, nr))
		return;
	read_miss(c, bio, pb, block, nr, mode == FLAZ_MODE_NORMAL);
	dm_submit_bio_remap(bio, NULL);
}

static int map_read(struct flaz_cache *c, struct bio *bio, struct flaz_bio *pb,
		    enum flaz_mode mode)
{
	bool use_ssd = mode != FLAZ_MODE_PASSTHROUGH;
	sector_t sector = dm_target_offset(c->ti, bio->bi_iter.bi_sector);
	u32 sectors = bio_sectors(bio);
	struct flaz_edges edges;
	struct flaz_entry e;
	u64 block, line, page;
	u32 nr, i;
	bool out;

	flaz_stats_add(c->stats, FLAZ_STAT_READS, 1);
	if (!use_ssd || !sectors)
		return remap(c, bio);
	block = sector >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	/*
	 * A piece of a block: served from the cache if the block is cached,
	 * else by a read of the whole block that fills it (partial.c); the rest
	 * of the bio comes back aligned. The volume's last block, when its end
	 * cuts it, is never cached: it always goes to the HDD as it is (as does
	 * every part of a block in the bench's module with partial_read_pass).
	 */
	flaz_edges(sector, sectors, &edges);
	if (edges.head_sectors) {
		bool seq, whole = block < c->hdd_blocks && !flaz_partial_pass();

		if (sectors > edges.head_sectors)
			dm_accept_partial_bio(bio, edges.head_sectors);
		/* in its stream too: a scan off 4 KiB alignment is a scan */
		seq = flaz_seq_note(c->streams, sector, edges.head_sectors, seq_cutoff(c));
		if (whole && flaz_hit_serve(c, bio, block, 1, edges.head))
			return DM_MAPIO_SUBMITTED;
		remap(c, bio);
		/* filled or not, the HDD serves it: a miss, as a whole block's is */
		flaz_stats_add(c->stats, FLAZ_STAT_READ_MISSES, 1);
		if (whole && mode == FLAZ_MODE_NORMAL && !seq &&
		    flaz_partial_miss(c, bio, block, edges.head, &pb->rec)) {
			flaz_stats_add(c->stats, FLAZ_STAT_PARTIAL_FILLS, 1);
			return DM_MAPIO_SUBMITTED;
		}
		bypass(c, whole && mode == FLAZ_MODE_NORMAL && seq ? FLAZ_STAT_SEQ_BYPASSES :
		       FLAZ_STAT_PARTIAL_PASSES, 1);
		return DM_MAPIO_REMAPPED;
	}

	nr = sectors >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	i = flaz_hit_serve(c, bio, block, min_t(u32, nr, FLAZ_HIT_RUN), 0);
	if (i) {
		/* hits continue a stream: a scan over cached blocks is still a scan */
		flaz_seq_note(c->streams, sector, i * FLAZ_BLOCK_SECTORS, seq_cutoff(c));
		return DM_MAPIO_SUBMITTED;
	}
	/*
	 * A run of misses, or a hit without memory to serve it; or, where the
	 * table page is out, the blocks on that page, whose lookups wait for it
	 * to be read in (page_work()): a block cached costs an SSD read of its
	 * table block more, never an HDD read, whatever share of the table is
	 * resident. Each piece is one page's, resident or out.
	 */
	line = flaz_l2p_line(c->l2p, block);
	page = flaz_l2p_page_of(line);
	out = !flaz_l2p_resident(c->l2p, line);
	if (out)
		nr = min_t(u32, nr, FLAZ_HIT_RUN);
	for (i = 1; i < nr && on_page(c, block + i, page) && (out || !is_cached(c, block + i, &e));
	     i++)
		;
	if (i * FLAZ_BLOCK_SECTORS < sectors)
		dm_accept_partial_bio(bio, i * FLAZ_BLOCK_SECTORS);
	if (mode != FLAZ_MODE_NORMAL)
		return read_miss(c, bio, pb, block, i, false);
	if (sequential(c, sector, i * FLAZ_BLOCK_SECTORS)) {
		bypass(c, FLAZ_STAT_SEQ_BYPASSES, i);
		return read_miss(c, bio, pb, block, i, false);
	}
	if (!out)
		return read_miss(c, bio, pb, block, i, true);
	pb->c = c;
	pb->block = block;
	INIT_WORK(&pb->work, page_work);
	queue_work(c->wq.io, &pb->work);
	return DM_MAPIO_SUBMITTED;
}

/*
 * Drop the lines of a tracked write or discard, then send it on: at once, or
 * once its regions are marked on the SSD (unless the SSD is out of use).
 */
static int map_write_drop(struct flaz_cache *c, struct bio *bio, struct flaz_bio *pb)
{
	sector_t start = dm_target_offset(c->ti, bio->bi_iter.bi_sector);
	u64 whole_first = DIV_ROUND_UP_ULL(start, FLAZ_BLOCK_SECTORS);
	u64 whole_end = (start + bio_sectors(bio)) >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);

	flaz_cache_drop_blocks(c, pb->rec.first, pb->rec.last, whole_first, whole_end,
			       pb->count, &pb->was_cached);
	if (pb->end) {
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	remap(c, bio);
	pb->intent = true;
	/* unmarked, but counted in flight: no region is cleared under it later */
	if (pb->mode == FLAZ_MODE_PASSTHROUGH) {
		flaz_intent_track(c->intent, pb->rec.first, pb->rec.last);
		return DM_MAPIO_REMAPPED;
	}
	pb->held_ns = ktime_get_ns();
	if (flaz_intent_start(c->intent, pb->rec.first, pb->rec.last, bio))
		return DM_MAPIO_REMAPPED;
	flaz_meta_mark(c->meta);
	return DM_MAPIO_SUBMITTED;
}

/* Writes whose marks are on the SSD (or no longer needed) go to the HDD (meta.c). */
static void release_writes(struct flaz_cache *c, struct bio_list *bios)
{
	struct flaz_bio *pb;
	struct bio *bio;
	u64 now;

	if (bio_list_empty(bios))
		return;
	now = ktime_get_ns();
	while ((bio = bio_list_pop(bios))) {
		pb = dm_per_bio_data(bio, sizeof(struct flaz_bio));
		flaz_stats_add(c->stats, FLAZ_STAT_MARK_WAITS, 1);
		flaz_stats_add(c->stats, FLAZ_STAT_MARK_WAIT_US,
			       div_u64(now - pb->held_ns, NSEC_PER_USEC));
		dm_submit_bio_remap(bio, NULL);
	}
}

static void drop_work(struct work_struct *work)
{
	struct flaz_bio *pb = container_of(work, struct flaz_bio, work);
	struct bio *bio = dm_bio_from_per_bio_data(pb, sizeof(*pb));

	if (map_write_drop(pb->c, bio, pb) == DM_MAPIO_REMAPPED)
		dm_submit_bio_remap(bio, NULL);
}

/*
 * A write of part of a cached block (install: in normal mode) is cut so that
 * part is a piece of its own, which updates the block (patch.c); a partial
 * block not cached is dropped, and needs no cut. Returns the block the piece
 * updates, or U64_MAX.
 */
static u64 patch_cut(struct flaz_cache *c, struct bio *bio, sector_t start)
{
	u32 sectors = bio_sectors(bio);
	struct flaz_edges edges;
	struct flaz_entry e;

	flaz_edges(start, sectors, &edges);
	/* the volume's last block, when its end cuts it, is never cached (map_read()) */
	if (edges.head_sectors && edges.first < c->hdd_blocks && is_cached(c, edges.first, &e)) {
		if (sectors > edges.head_sectors)
			dm_accept_partial_bio(bio, edges.head_sectors);
		return edges.first;
	}
	if (edges.tail_sectors && edges.last < c->hdd_blocks && is_cached(c, edges.last, &e))
		dm_accept_partial_bio(bio, sectors - edges.tail_sectors);
	return U64_MAX;
}

/*
 * Writes and discards: track the range, drop its lines (in a worker when they
 * are many), install whole blocks later, and update a cached block written in
 * part.
 */
static int map_write(struct flaz_cache *c, struct bio *bio, struct flaz_bio *pb,
		     bool install, enum flaz_mode mode)
{
	bool write = bio_op(bio) == REQ_OP_WRITE;
	sector_t start = dm_target_offset(c->ti, bio->bi_iter.bi_sector);
	u64 patch = write && install ? patch_cut(c, bio, start) : U64_MAX;
	sector_t end = start + bio_sectors(bio);
	u64 whole_first = DIV_ROUND_UP_ULL(start, FLAZ_BLOCK_SECTORS);
	u64 whole_end = end >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	u64 nr_whole = whole_end > whole_first ? whole_end - whole_first : 0;
	u64 span;

	pb->rec.first = start >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	pb->rec.last = (end - 1) >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	pb->rec.write = true;
	pb->iter = bio->bi_iter;
	pb->block = whole_first;
	pb->skip = (whole_first * FLAZ_BLOCK_SECTORS - start) << SECTOR_SHIFT;
	pb->nr_blocks = 0;
	pb->tracked = true;
	flaz_records_add(&c->records, &pb->rec);
	span = pb->rec.last - pb->rec.first + 1;
	if (write && install) {
		if (sequential(c, start, bio_sectors(bio))) {
			bypass(c, FLAZ_STAT_SEQ_BYPASSES, span);
		} else {
			pb->nr_blocks = nr_whole;
			/* after the record, before the drop (patch.c) */
			if (patch != U64_MAX)
				pb->patch = flaz_patch_start(c, bio, patch,
							     (start - patch * FLAZ_BLOCK_SECTORS) <<
							     SECTOR_SHIFT);
			bypass(c, FLAZ_STAT_PARTIAL_DROPS, span - nr_whole - !!pb->patch);
		}
	}
	pb->c = c;
	pb->mode = mode;
	pb->count = write && install;
	if (pb->rec.last - pb->rec.first >= MAX_INLINE_DROP) {
		INIT_WORK(&pb->work, drop_work);
		queue_work(c->wq.io, &pb->work);
		return DM_MAPIO_SUBMITTED;
	}
	return map_write_drop(c, bio, pb);
}

static int map_discard(struct flaz_cache *c, struct bio *bio, struct flaz_bio *pb,
		       enum flaz_mode mode)
{
	if (!bio_sectors(bio)) {
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	/* An HDD that cannot discard keeps its data: drop the lines all the same. */
	if (!bdev_max_discard_sectors(c->hdd))
		pb->end = true;
	else
		flaz_stats_add(c->stats, FLAZ_STAT_DISCARDS, 1);
	return map_write(c, bio, pb, false, mode);
}

size_t flaz_cache_per_bio_size(void)
{
	return sizeof(struct flaz_bio);
}

/*
 * Map a bio. Costs: a read looks each block up under its line's lock, O(1) a
 * block; one whose table page is out waits for one SSD read of that page,
 * O(page) once (page_work()); a hit then reads its slots (hit.c), a miss goes
 * to the HDD as it is. A write
 * empties its blocks' lines, O(1) a block (a tombstone bit for a page that is
 * out), and waits for one superblock write when its region was not marked
 * (meta.c): no table work either way.
 */
int flaz_cache_map(struct flaz_cache *c, struct bio *bio)
{
	struct flaz_bio *pb = dm_per_bio_data(bio, sizeof(struct flaz_bio));
	enum flaz_mode mode = flaz_mode_get(c);
	unsigned long now = jiffies;

	pb->tracked = false;
	pb->intent = false;
	pb->end = false;
	pb->was_cached = 0;
	pb->patch = NULL;

	/* a store only when the tick moved: not one per bio */
	if (READ_ONCE(c->last_io) != now)
		WRITE_ONCE(c->last_io, now);
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return map_read(c, bio, pb, mode);
	case REQ_OP_WRITE:
		/*
		 * Start writing what is buffered and commit the table soon; the HDD
		 * gets the flush itself, which need not wait for either.
		 */
		if (bio->bi_opf & REQ_PREFLUSH) {
			flaz_xbuf_seal_all(c->xbuf);
			flaz_meta_kick(c->meta);
		}
		if (!bio_sectors(bio))
			return remap(c, bio);
		flaz_stats_add(c->stats, FLAZ_STAT_WRITES, 1);
		return map_write(c, bio, pb, mode == FLAZ_MODE_NORMAL, mode);
	case REQ_OP_DISCARD:
		return map_discard(c, bio, pb, mode);
	default:
		/*
		 * None other comes: the target asks for no write zeroes or
		 * secure erase bios and is not zoned. One that did would
		 * change the HDD behind the table's back: refused, not passed.
		 */
		DMERR_LIMIT("%s: operation %u not supported", dm_table_device_name(c->ti->table),
			    bio_op(bio));
		return DM_MAPIO_KILL;
	}
}

/* Copy a completed bio's blocks for a fill, then let the bio end (its end_io again). */
static void fill_work(struct work_struct *work)
{
	struct flaz_bio *pb = container_of(work, struct flaz_bio, fill_work);
	struct bio *bio = dm_bio_from_per_bio_data(pb, sizeof(*pb));

	flaz_fill(pb->c, bio, pb->iter, pb->skip, pb->block, pb->nr_blocks, pb->was_cached,
		  &pb->rec);
	bio_endio(bio);
}

/*
 * A bio's completion (any context). Its blocks to fill are copied by a work
 * item, not here: no bio-sized copy or allocation in a completion, which may be
 * in hard IRQ. The bio ends when the copy is done (DM_ENDIO_INCOMPLETE, then
 * bio_endio() again, as dm-integrity's inline checks do); it comes back here
 * untracked.
 */
int flaz_cache_end_io(struct flaz_cache *c, struct bio *bio, blk_status_t error)
{
	struct flaz_bio *pb = dm_per_bio_data(bio, sizeof(struct flaz_bio));

	if (pb->intent)
		flaz_intent_end(c->intent, pb->rec.first, pb->rec.last);
	pb->intent = false;
	if (!pb->tracked)
		return DM_ENDIO_DONE;
	pb->tracked = false;
	/* the update takes the record over (patch.c) */
	if (pb->patch) {
		flaz_patch_end(pb->patch, &pb->rec, error);
		pb->patch = NULL;
		return DM_ENDIO_DONE;
	}
	if (error || !pb->nr_blocks || READ_ONCE(pb->rec.stale)) {
		flaz_records_del(&c->records, &pb->rec);
		return DM_ENDIO_DONE;
	}
	pb->c = c;
	INIT_WORK(&pb->fill_work, fill_work);
	/* high priority: the bio waits; the copy waits on no mempool (GFP_NOWAIT) */
	flaz_wq_read(&c->wq, &pb->fill_work);
	return DM_ENDIO_INCOMPLETE;
}

/* Empty the cache: the "invalidate" message. */
void flaz_cache_invalidate(struct flaz_cache *c)
{
	flaz_records_stale_all(&c->records);
	flaz_meta_stop_warming(c->meta);

	flaz_cleaner_empty(c->cleaner);
	flaz_cleaner_kick(c->cleaner);
}

/* A tunable changed (a message): the cleaner's shares follow at once. */
void flaz_cache_tuned(struct flaz_cache *c)
{
	flaz_cleaner_tuned(c->cleaner);
}

/*
 * Change the mode (process context). Passthrough empties the cache and gives
 * the SSD a new, empty generation, so nothing cached before can be loaded
 * again; leaving it starts a new one the same way. Returns 0, or an error when
 * the SSD cannot take the new generation (the mode is then passthrough).
 */
int flaz_mode_set(struct flaz_cache *c, enum flaz_mode mode, enum flaz_why why)
{
	const char *name = dm_table_device_name(c->ti->table);
	enum flaz_mode old;
	int r = 0;

	mutex_lock(&c->mode_lock);
	old = c->mode;
	if (old == mode)
		goto out;
	/*
	 * Fail closed: the saved state is void on the SSD before the first write
	 * goes to the HDD unmarked. On failure meta.c remembers the generation as
	 * void, and tries again while in passthrough.
	 */
	if (mode == FLAZ_MODE_PASSTHROUGH && flaz_meta_reformat(c->meta, true))
		DMERR("%s: cannot empty the table on the SSD: trying again while in passthrough",
		      name);
	WRITE_ONCE(c->why, mode == FLAZ_MODE_NORMAL ? FLAZ_WHY_NONE : why);
	WRITE_ONCE(c->mode, mode);
	/* installs waiting for an extent add nothing out of normal mode (fill.c) */
	flaz_alloc_wake(c->alloc);
	if (mode == FLAZ_MODE_PASSTHROUGH) {
		flaz_cache_invalidate(c);
	} else if (old == FLAZ_MODE_PASSTHROUGH) {
		r = flaz_meta_reformat(c->meta, false);
		if (r) {
			WRITE_ONCE(c->mode, FLAZ_MODE_PASSTHROUGH);
			WRITE_ONCE(c->why, FLAZ_WHY_SSD_UNUSABLE);
			DMERR("%s: the SSD still fails: staying in passthrough", name);
			goto out;
		}
	}
	if (mode == FLAZ_MODE_NORMAL) {
		atomic_set(&c->faults, 0);
		WRITE_ONCE(c->ssd_failed, false);
	}
	DMWARN("%s: mode %s -> %s (%s)", name, flaz_mode_str(old), flaz_mode_str(mode),
	       flaz_mode_why(c));
	dm_table_event(c->ti->table);
out:
	mutex_unlock(&c->mode_lock);
	return r;
}

/*
 * Take the mode where the faults (mode.c) say. A suspended volume changes
 * nothing on the SSD (a reload's new instance may own it by now): resume looks
 * again.
 */
static void mode_work(struct work_struct *work)
{
	struct flaz_cache *c = container_of(work, struct flaz_cache, mode_work);
	int faults = atomic_read(&c->faults);
	bool failed = READ_ONCE(c->ssd_failed);
	enum flaz_why why = failed ? FLAZ_WHY_SSD_NO_MARK : FLAZ_WHY_SSD_ERRORS;

	if (READ_ONCE(c->suspended))
		return;
	/* a burst of errors still steps through degraded, so the log tells the story */
	if ((failed || faults >= FLAZ_FAULTS_DEGRADED) &&
	    flaz_mode_get(c) == FLAZ_MODE_NORMAL)
		flaz_mode_set(c, FLAZ_MODE_DEGRADED, why);
	if (failed || faults >= FLAZ_FAULTS_PASSTHROUGH)
		flaz_mode_set(c, FLAZ_MODE_PASSTHROUGH, why);
}

static void space_taken(struct flaz_cache *c)
{
	flaz_cleaner_kick(c->cleaner);
}

static void starved(struct flaz_cache *c)
{
	flaz_cleaner_starved(c->cleaner);
}

static bool space_short(struct flaz_cache *c)
{
	return flaz_cleaner_short(c->cleaner);
}

static void extent_failed(struct flaz_cache *c, u32 ext)
{
	flaz_cleaner_failed(c->cleaner, ext);
}

static const struct flaz_events cache_events = {
	.space_taken = space_taken,
	.starved = starved,
	.space_short = space_short,
	.extent_failed = extent_failed,
	.release_writes = release_writes,
	.invalidate = flaz_cache_invalidate,
};

/*
 * Every byte the volume allocates for metadata, as asked of the allocators: the
 * table, the per-extent state here (four bitmaps and the tenants), the allocator,
 * the extent buffer, the hit path's pins and reserve, the regions, the
 * cleaner (with its buffers while it runs), the metadata context, the
 * bypass's history and the sequential streams.
 */
static u64 dram_bytes(struct flaz_cache *c)
{
	u64 nr = c->geo->nr_extents;

	return sizeof(*c) + 4 * BITS_TO_LONGS(nr) * sizeof(long) + flaz_tenants_bytes(nr) +
	       flaz_l2p_dram_bytes(c->l2p) + flaz_alloc_bytes(nr) +
	       flaz_xbuf_bytes(c->extent_bytes) + flaz_hits_bytes(c->hits) +
	       flaz_intent_bytes(c->intent) + flaz_cleaner_bytes(c->cleaner) +
	       flaz_meta_bytes(c->geo) + flaz_bypass_bytes() + flaz_seq_bytes();
}

void flaz_cache_gauges(struct flaz_cache *c, struct flaz_gauges *g)
{
	flaz_l2p_usage(c->l2p, &g->blocks_cached, &g->logical_bytes, &g->physical_bytes);
	g->free_extents = flaz_alloc_nr_free(c->alloc);
	g->probation_extents = flaz_alloc_nr_probation(c->alloc);
	g->main_extents = flaz_alloc_nr_main(c->alloc);
	g->fills_pending = atomic_read(&c->pending_fills);
	g->total_extents = c->geo->nr_extents;
	g->table_bytes = flaz_l2p_bytes(c->l2p);
	g->table_resident_bytes = flaz_l2p_resident_bytes(c->l2p);
	g->marked_regions = flaz_intent_nr_marked(c->intent);
	g->dram_bytes = dram_bytes(c);
	g->loading = flaz_meta_loading(c->meta);
	g->hot_blocks = flaz_cleaner_hot_blocks(c->cleaner);
	flaz_l2p_codec_usage(c->l2p, &g->raw_bytes, &g->cold_bytes);
	g->codec_bytes = g->physical_bytes - g->raw_bytes - g->cold_bytes;
	g->mode = flaz_mode_name(c);
	g->mode_reason = flaz_mode_why(c);
}

/*
 * No bios are in flight: finish installs, write out the extent buffer, and
 * commit a clean superblock.
 */
void flaz_cache_suspend(struct flaz_cache *c)
{
	/* an install waiting for space would hold the flush up to FILL_SPACE_WAIT (fill.c) */
	flaz_alloc_waits(c->alloc, false);
	/* updates in flight end in installs: before the installs are flushed */
	flaz_patch_drain(c);
	flush_workqueue(c->wq.write);
	flaz_xbuf_stop(c->xbuf);
	flaz_cleaner_stop(c->cleaner);
	flaz_mode_suspend(c);
	flaz_meta_suspend(c->meta);
}

/* Load the SSD's table the first time (the old instance of a reload has stopped). */
int flaz_cache_preresume(struct flaz_cache *c)
{
	return flaz_meta_resume(c->meta, c->opts->val[FLAZ_OPT_COLD]);
}

void flaz_cache_resume(struct flaz_cache *c)
{
	flaz_mode_resume(c);
	flaz_alloc_waits(c->alloc, true);
	flaz_xbuf_start(c->xbuf);
	flaz_cleaner_start(c->cleaner);
}

struct flaz_cache *flaz_cache_create(struct dm_target *ti, struct block_device *hdd,
				     struct block_device *ssd, const struct flaz_geometry *g,
				     struct flaz_opts *opts, struct flaz_stats *stats,
				     char **error)
{
	struct flaz_cache *c;
	int r = -ENOMEM;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		*error = "Cannot allocate the cache";
		return ERR_PTR(-ENOMEM);
	}
	c->ev = &cache_events;
	c->ti = ti;
	c->hdd = hdd;
	c->ssd = ssd;
	c->geo = g;
	c->opts = opts;
	c->stats = stats;
	c->codec = opts->val[FLAZ_OPT_COMPRESSOR];
	c->cold_codec = opts->val[FLAZ_OPT_COLD_COMPRESSOR];
	c->extent_bytes = g->extent_sectors << SECTOR_SHIFT;
	c->hdd_blocks = max_t(u64, ti->len >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT), 1);
	flaz_records_init(&c->records);
	flaz_mode_init(c);
	INIT_WORK(&c->mode_work, mode_work);

	c->comp = flaz_compressor_create(c->codec);
	if (IS_ERR(c->comp)) {
		*error = "Cannot set up the compressor";
		goto bad;
	}
	c->bypass = flaz_bypass_create();
	if (!c->bypass) {
		*error = "Cannot allocate the compressor bypass";
		goto bad;
	}
	c->streams = flaz_seq_create();
	if (!c->streams) {
		*error = "Cannot allocate the sequential streams";
		goto bad;
	}
	if (c->cold_codec) {
		c->cold_comp = flaz_compressor_create(c->cold_codec - 1);
		if (IS_ERR(c->cold_comp)) {
			*error = "Cannot set up the cold compressor";
			goto bad;
		}
	}
	c->l2p = flaz_l2p_create(g->nr_lines, g->nr_extents, c->extent_bytes, c->hdd_blocks,
				 c->cold_codec);
	if (IS_ERR(c->l2p)) {
		*error = "Cannot allocate the logical-to-physical table";
		goto bad;
	}
	c->alloc = flaz_alloc_create(g->nr_extents);
	c->failed = bitmap_zalloc(g->nr_extents, GFP_KERNEL);
	c->hit = bitmap_zalloc(g->nr_extents, GFP_KERNEL);
	c->tenants = flaz_tenants_create(g->nr_extents, c->extent_bytes, &c->seq);
	c->unflushed = bitmap_zalloc(g->nr_extents, GFP_KERNEL);
	c->written = bitmap_zalloc(g->nr_extents, GFP_KERNEL);
	if (!c->alloc || !c->failed || !c->hit || !c->tenants ||
	    !c->unflushed || !c->written) {
		*error = "Cannot allocate the extent maps";
		goto bad;
	}
	c->io = dm_io_client_create();
	if (IS_ERR(c->io)) {
		*error = "Cannot create a dm-io client";
		goto bad;
	}
	if (flaz_wq_init(&c->wq, dm_table_device_name(ti->table))) {
		*error = "Cannot create work queues";
		goto bad;
	}
	c->hits = flaz_hits_create(c->extent_bytes);
	if (!c->hits) {
		*error = "Cannot allocate the hit path's buffers";
		goto bad;
	}
	c->xbuf = flaz_xbuf_create(c);
	if (!c->xbuf) {
		*error = "Cannot allocate the extent buffer";
		goto bad;
	}
	c->cleaner = flaz_cleaner_create(c);
	if (!c->cleaner) {
		*error = "Cannot allocate the cleaner";
		goto bad;
	}
	c->intent = flaz_intent_create(c->hdd_blocks);
	if (!c->intent) {
		*error = "Cannot allocate the write-intent regions";
		goto bad;
	}
	c->meta = flaz_meta_create(c, opts->val[FLAZ_OPT_COLD], error);
	if (IS_ERR(c->meta)) {
		r = PTR_ERR(c->meta);
		c->meta = NULL;
		goto bad;
	}
	return c;

bad:
	flaz_cache_destroy(c);
	return ERR_PTR(r);
}

/* NULL-tolerant, and tolerant of a half-built cache. */
void flaz_cache_destroy(struct flaz_cache *c)
{
	if (IS_ERR_OR_NULL(c))
		return;
	if (c->xbuf) {
		flush_workqueue(c->wq.write);
		flaz_xbuf_stop(c->xbuf);
	}
	/*
	 * Stop what re-arms itself, then end the queues (which runs what is left
	 * on them), and only then free what their work items use.
	 */
	flaz_cleaner_stop(c->cleaner);
	flaz_meta_stop(c->meta);
	flaz_wq_exit(&c->wq);
	/* after the queues: a fault reported while they drained queued a mode change */
	flaz_mode_exit(c);
	flaz_cleaner_destroy(c->cleaner);
	flaz_meta_destroy(c->meta);
	flaz_intent_destroy(c->intent);
	flaz_xbuf_destroy(c->xbuf);
	flaz_hits_destroy(c->hits);
	if (!IS_ERR_OR_NULL(c->io))
		dm_io_client_destroy(c->io);
	flaz_tenants_destroy(c->tenants);
	bitmap_free(c->written);
	bitmap_free(c->unflushed);
	bitmap_free(c->hit);
	bitmap_free(c->failed);
	flaz_alloc_destroy(c->alloc);
	flaz_l2p_destroy(c->l2p);
	flaz_compressor_destroy(c->cold_comp);
	flaz_seq_destroy(c->streams);
	flaz_bypass_destroy(c->bypass);
	flaz_compressor_destroy(c->comp);
	kfree(c);
}

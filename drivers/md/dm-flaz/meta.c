// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz persistent metadata: the superblock and the table on the SSD, so a
 * volume comes back warm after a restart, and never stale after a crash. This
 * file: commits, activation and the metadata's life; sb.c: the superblock,
 * marks and failing closed; paging.c: the table's pages in DRAM.
 *
 * A commit flushes the SSD, writes the gen blocks that changed, flushes again,
 * writes the table blocks that changed, then a superblock with PREFLUSH|FUA,
 * alternating between its two copies so a torn write leaves the other one
 * current. Table and gen blocks are written in place: a crash part way through
 * leaves a mix of this commit's blocks and older ones, which is safe because
 *  - an entry points only at an extent whose write completed before the SSD
 *    flush that opened the commit (so the SSD cannot keep the entry and lose
 *    the slot);
 *  - an entry carries its extent's generation, bumped at every eviction, and
 *    an evicted extent is reused only after a commit with its new generation
 *    is on the SSD and its discard has completed (alloc.c): an entry left on
 *    the SSD from an earlier tenant is void at load, so eviction writes one gen
 *    block instead of every table block holding such an entry. Generations
 *    never come round: an extent at its last one is not used again (format.h);
 *  - a block written since the last complete commit lies in a region marked in
 *    the superblock (intent.c), and its line is dropped when its page comes in
 *    after a crash (recovery, below);
 *  - the gen blocks of a commit are durable before its table blocks: an entry
 *    on the SSD never carries a generation its extent's gen block has not
 *    reached, so generations read back never go below one an entry holds.
 * The slot's own checksum and block number are checked on every read as well.
 *
 * Commits run on FLUSH (without holding it up: the write-intent bits alone keep
 * the cache correct), every second while anything changed, and at suspend,
 * which leaves a clean superblock.
 *
 *
 * Costs, per path:
 *  - activation: the superblock, O(extents) of gen blocks (which say which
 *    extents are free), then in the background the pages of the marked
 *    regions' lines after a crash, and the pages that fit the budget;
 *  - a page-in: one read of FLAZ_L2P_PAGE_BLOCKS table blocks, O(page);
 *  - a commit: O(table blocks changed + gen blocks changed) writes, with a
 *    read first for each changed block whose page is out, and a test of the
 *    dirty bits a word at a time;
 *  - eviction: O(1) per extent (flaz_meta_evict());
 *  - invalidate: a tombstone bit for each line of a page that is out, O(lines),
 *    and every table block rewritten, those with no line left without a read.
 */
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/dm-io.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uuid.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "meta.h"
#include "opts.h"

/* at load, a saved cache that a void generation left behind (one piece, for grep) */
#define META_LEFT_BEHIND \
	"%s: the SSD's (%u:%u) saved cache was left behind by writes it could not mark: starting empty"

/* at load, a resize the saved cache cannot follow (meta_resize() says why) */
#define META_RESIZED_EMPTY \
	"%s: the volume's length went from %llu to %llu sectors and %s: starting empty"

/*
 * Read the extents' generations. Returns -EILSEQ when a gen block cannot be
 * read or fails its checks: entries into its extents could be void or not.
 */
static int load_gens(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 nr = flaz_gen_blocks(c->geo), idx, i, n, commit;
	u16 *gens;
	int r;

	for (idx = 0; idx < nr; idx += n) {
		n = min_t(u64, nr - idx, META_READ_BLOCKS);
		r = meta_io(c, c->ssd, REQ_OP_READ, c->geo->gen_start + idx * FLAZ_BLOCK_SECTORS,
			    n * FLAZ_BLOCK_SECTORS, m->buf);
		if (r)
			return -EILSEQ;
		for (i = 0; i < n; i++) {
			gens = flaz_l2p_gens(c->l2p) + (idx + i) * FLAZ_GEN_ENTRIES;
			r = flaz_gen_decode(m->buf + i * FLAZ_BLOCK_SIZE, m->sb.gen, idx + i,
					    &commit, gens);
			if (r == -ENODATA)
				memset(gens, 0, FLAZ_GEN_ENTRIES * sizeof(*gens));
			else if (r)
				return -EILSEQ;
		}
	}
	return 0;
}

static int load(struct flaz_meta *m, bool cold)
{
	struct flaz_cache *c = m->c;
	enum sb_state state = SB_BLANK;
	const char *why;
	u64 max_seq;
	u32 ext, order_first, order_nr;
	int r;

	r = meta_read_sb(m, &m->sb, &state, &max_seq);
	/*
	 * The lease covers slots written after the last superblock; the clock, a
	 * lost one. Set before any way out, passthrough included: from here on the
	 * seq only rises by what it hands out (tenant.c), later generations too.
	 */
	atomic64_set(&c->seq, max_t(u64, m->max_next_seq, ktime_get_real_ns()));
	/*
	 * A superblock copy could not be read: whatever the SSD holds (a copy not
	 * read may be of another generation), writes in passthrough leave it
	 * behind, so the device is remembered.
	 */
	if (r) {
		meta_remember_void(m, NULL, 0);
		return meta_load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE);
	}
	if (bdev_read_only(c->ssd))
		return meta_load_unusable(m, state, FLAZ_WHY_SSD_READ_ONLY);
	if (cold || state == SB_BLANK) {
		r = meta_format(m, max_seq);
		return r ? meta_load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
	}
	if (state == SB_OK && (meta_void_gen_known(m->sb.uuid, m->sb.gen, 0) ||
			       meta_void_gen_known(NULL, 0, c->ssd->bd_dev))) {
		DMWARN(META_LEFT_BEHIND, dm_table_device_name(c->ti->table),
		       MAJOR(c->ssd->bd_dev), MINOR(c->ssd->bd_dev));
		/* ours to replace: meta_void_generation() forgets it once the new one is on */
		memcpy(m->void_uuid, m->sb.uuid, sizeof(m->void_uuid));
		m->void_gen = m->sb.gen;
		m->void_pending = true;
		if (meta_void_generation(m))
			return meta_load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE);
		return 0;
	}
	why = state == SB_OK ? meta_mismatch(m, &m->sb) : "SSD superblock is unusable";
	if (why) {
		/* It changed since the table was loaded. */
		DMERR("%s: %s", dm_table_device_name(c->ti->table), why);
		return -EINVAL;
	}
	if (load_gens(m)) {
		meta_error(c);
		DMWARN("%s: the SSD's extent generations are damaged: starting empty",
		       dm_table_device_name(c->ti->table));
		r = meta_void_generation(m);
		return r ? meta_load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
	}
	if (m->sb.hdd_sectors != c->ti->len) {
		u64 was = m->sb.hdd_sectors;

		why = meta_resize(m);
		if (why) {
			DMWARN(META_RESIZED_EMPTY, dm_table_device_name(c->ti->table), was,
			       (u64)c->ti->len, why);
			/* remembered void if the new generation cannot be written */
			r = meta_void_generation(m);
			return r ? meta_load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
		}
		DMINFO("%s: the volume grew from %llu to %llu sectors: the saved cache stays",
		       dm_table_device_name(c->ti->table), was, (u64)c->ti->len);
	}
	/* the order a clean stop saved: the next superblock names none */
	order_first = m->sb.order_first;
	order_nr = m->sb.flags & FLAZ_SB_CLEAN ? m->sb.order_extents : 0;
	flaz_intent_load(c->intent, m->bitmap);
	/* From now on the superblock is not clean; it says so before any write. */
	flaz_intent_snapshot(c->intent, false, false, m->bitmap, &(struct bio_list){});
	if (meta_write_sb(m, 0)) {
		/* the allocator keeps every extent free: so do the generations */
		flaz_l2p_reset_gens(c->l2p, 0);
		return meta_load_unusable(m, SB_OK, FLAZ_WHY_SSD_UNUSABLE);
	}
	/* which extents are free: by their generations, before any I/O */
	bitmap_zero(m->used, c->geo->nr_extents);
	for (ext = 0; ext < c->geo->nr_extents; ext++)
		if (flaz_l2p_in_use(c->l2p, ext) || flaz_l2p_worn(c->l2p, ext))
			set_bit(ext, m->used);
	meta_order_load(m, order_first, order_nr);
	/* the table itself comes in on demand; after a crash, the marked lines first */
	meta_recover_set(m);
	return 0;
}

/*
 * Extents evicted before the commit began can be freed now: discard them (runs
 * of neighbours merged, issued together, waited for once), then free them, so
 * no discard lands on an extent written again.
 */
static void free_batch(struct flaz_meta *m, u32 n)
{
	struct flaz_cache *c = m->c;
	const struct flaz_geometry *g = c->geo;
	struct bio *bio = NULL;
	u32 i, runs;

	/* reads of their old slots end first: the discard and new slots would change them */
	flaz_hit_drain(c);
	runs = flaz_alloc_runs(m->freed, n, m->runs);
	if (bdev_max_discard_sectors(c->ssd)) {
		for (i = 0; i < runs; i++)
			__blkdev_issue_discard(c->ssd, flaz_extent_sector(g, m->freed[i]),
					       (sector_t)m->runs[i] * g->extent_sectors,
					       GFP_NOIO, &bio);
		/* a failed discard leaves old slots, which their headers tell apart */
		if (bio) {
			submit_bio_wait(bio);
			bio_put(bio);
		}
	}
	for (i = 0; i < runs; i++)
		while (m->runs[i]--)
			if (!flaz_l2p_worn(c->l2p, m->freed[i] + m->runs[i]))
				flaz_alloc_put(c->alloc, m->freed[i] + m->runs[i]);
}

/*
 * Free the evicted extents that commits have covered, outside the commit's
 * lock: the hits' drain waits for reads in flight, which no commit waits for.
 * A work item runs on one CPU at a time, so m->freed is its own.
 */
static void free_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, free_work);
	u32 n;

	while ((n = flaz_alloc_release(m->c->alloc, atomic64_read(&m->covered), META_FREE_BATCH,
				       m->freed)))
		free_batch(m, n);
}

/*
 * The first @retired extents retired since activation are covered by a commit
 * on the SSD (their new generations are durable): free them soon.
 */
static void free_evicted(struct flaz_meta *m, u64 retired)
{
	u64 old = atomic64_read(&m->covered);

	while (old < retired && !atomic64_try_cmpxchg(&m->covered, &old, retired))
		;
	queue_work(m->c->wq.io, &m->free_work);
}

/*
 * Whether a slot in extent @ext may be pointed at from the SSD: its write
 * completed before the SSD flush of this commit (or of an earlier one).
 */
static bool extent_durable(void *data, u32 ext)
{
	struct flaz_cache *c = data;

	return !test_bit(ext, c->unflushed) && !test_bit(ext, c->failed);
}

/* Whether @block lies in a marked region (while recovering: marked at the crash). */
static bool block_marked(void *data, u64 block)
{
	struct flaz_cache *c = data;

	return flaz_intent_marked(c->intent, block);
}

FLAZ_IO_NOTIFY(write_done)
{
	struct meta_write *w = context;

	w->error = error ? -EIO : 0;
	complete(&w->done);
}

/* Wait for write @w if it is out. Returns false if it failed: its blocks are dirty again. */
static bool write_reap(struct meta_write *w)
{
	struct flaz_meta *m = w->m;
	u32 i, n = w->n;

	if (!n)
		return true;
	wait_for_completion(&w->done);
	w->n = 0;
	if (!w->error)
		return true;
	meta_error(m->c);
	for (i = 0; i < n; i++) {
		if (w->gens)
			flaz_l2p_set_gen_dirty(m->c->l2p, w->first + i);
		else
			flaz_l2p_set_dirty(m->c->l2p, w->first + i);
	}
	return false;
}

/* Wait for every write out; false if any failed. */
static bool writes_reap(struct flaz_meta *m)
{
	bool ok = true;
	u32 i;

	for (i = 0; i < META_WRITES; i++)
		if (!write_reap(&m->writes[i]))
			ok = false;
	return ok;
}

/*
 * Encode @n table blocks (or gen blocks, with @gens) from @first into the next
 * write buffer (waiting for its last write first) and send them in one I/O,
 * without waiting. Returns false if the buffer's last write failed.
 */
static bool write_run(struct flaz_meta *m, bool gens, u64 first, u32 n)
{
	struct flaz_cache *c = m->c;
	struct meta_write *w = &m->writes[m->next_write++ % META_WRITES];
	struct dm_io_region where = {
		.bdev = c->ssd,
		.sector = (gens ? c->geo->gen_start : c->geo->meta_start) +
			  first * FLAZ_BLOCK_SECTORS,
		.count = n * FLAZ_BLOCK_SECTORS,
	};
	struct dm_io_request req = {
		.bi_opf = REQ_OP_WRITE,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = w->buf,
		.notify.fn = FLAZ_NOTIFY(write_done),
		.notify.context = w,
		.client = c->io,
	};
	bool ok = write_reap(w);
	u32 i;

	for (i = 0; i < n; i++) {
		if (gens)
			flaz_gen_encode(w->buf + i * FLAZ_BLOCK_SIZE, m->enc_gen, m->enc_commit,
					first + i,
					flaz_l2p_gens(c->l2p) + (first + i) * FLAZ_GEN_ENTRIES);
		else if (flaz_table_encode(&m->tx, first + i, m->enc_gen, m->enc_commit,
					   w->buf + i * FLAZ_BLOCK_SIZE))
			flaz_l2p_set_dirty(c->l2p, first + i);
	}
	w->gens = gens;
	w->first = first;
	w->n = n;
	reinit_completion(&w->done);
	flaz_stats_add(c->stats, FLAZ_STAT_META_BYTES, (u64)n * FLAZ_BLOCK_SIZE);
	/* with a notify function dm_io() fails only before it sends anything */
	if (flaz_dm_io(&req, &where))
		write_done(1, w);
	return ok;
}

/*
 * Send the table blocks that changed, neighbours merged into runs of up to
 * META_READ_BLOCKS, META_WRITES runs in flight. Returns false if a write
 * already known failed; writes_reap() tells about the rest.
 */
static bool write_table(struct flaz_meta *m)
{
	struct flaz_l2p *t = m->c->l2p;
	u64 idx, first = 0, nr = flaz_l2p_nr_blocks(t);
	bool ok = true;
	u32 n = 0;

	for (idx = flaz_l2p_next_dirty(t, 0); idx < nr; idx = flaz_l2p_next_dirty(t, idx + 1)) {
		cond_resched();
		/*
		 * A page that is out: read it first, its tombstones applied (l2p.c),
		 * unless every line of the block went: then it is written empty.
		 */
		if (!flaz_l2p_resident(t, idx * FLAZ_META_ENTRIES) &&
		    !flaz_l2p_void_block(t, idx) &&
		    meta_page_read(m, idx / FLAZ_L2P_PAGE_BLOCKS)) {
			ok = false;
			continue;
		}
		if (!flaz_l2p_take_dirty(t, idx))
			continue;
		if (n && (first + n != idx || n == META_READ_BLOCKS)) {
			if (!write_run(m, false, first, n))
				ok = false;
			n = 0;
			/* a failed mark voided the generation: the rest would be void too */
			if (READ_ONCE(m->sb.gen) != m->enc_gen)
				return false;
		}
		if (!n)
			first = idx;
		n++;
	}
	if (n && !write_run(m, false, first, n))
		ok = false;
	return ok;
}

/* Send the gen blocks that changed, as write_table() does; *sent says whether any went. */
static bool write_gens(struct flaz_meta *m, bool *sent)
{
	u64 idx, first = 0, nr = flaz_gen_blocks(m->c->geo);
	bool ok = true;
	u32 n = 0;

	for (idx = flaz_l2p_next_gen_dirty(m->c->l2p, 0); idx < nr;
	     idx = flaz_l2p_next_gen_dirty(m->c->l2p, idx + 1)) {
		if (!flaz_l2p_take_gen_dirty(m->c->l2p, idx))
			continue;
		*sent = true;
		if (n && (first + n != idx || n == META_READ_BLOCKS)) {
			if (!write_run(m, true, first, n))
				ok = false;
			n = 0;
		}
		if (!n)
			first = idx;
		n++;
	}
	if (n && !write_run(m, true, first, n))
		ok = false;
	return ok;
}

/*
 * Write the table blocks that changed and the gens of evicted extents, then the
 * superblock, clearing the bits of regions the table now covers (all of them
 * with @clean: nothing is in flight).
 */
static void commit(struct flaz_meta *m, bool clean)
{
	struct flaz_cache *c = m->c;
	struct bio_list released = BIO_EMPTY_LIST;
	/* the extents it covers had their gens bumped before (flaz_meta_evict()) */
	u64 retired = flaz_alloc_retired(c->alloc);
	u64 start = ktime_get_ns();
	bool ok = true, gens = false, age;
	u32 ext;

	lockdep_assert_held(&m->lock);
	/* those extents' new generations are read after their count */
	smp_rmb();
	mutex_lock(&m->sb_lock);
	m->enc_gen = m->sb.gen;
	m->enc_commit = m->sb.commit + 1;
	mutex_unlock(&m->sb_lock);
	age = time_after_eq(jiffies, m->last_age + META_MARK_AGE);
	if (age)
		m->last_age = jiffies;
	/*
	 * The HDD holds every write that completed before the commit began, before
	 * a region is cleared: needed only when one may be.
	 */
	if ((flaz_intent_commit_begin(c->intent, age) || clean) && blkdev_issue_flush(c->hdd)) {
		flaz_stats_add(c->stats, FLAZ_STAT_HDD_ERRORS, 1);
		ok = false;
	}
	/*
	 * After the flush the SSD holds every extent whose write completed before
	 * it; one completing later stays unflushed, and the entries into it wait.
	 */
	for_each_set_bit(ext, c->written, c->geo->nr_extents) {
		clear_bit(ext, c->written);
		clear_bit(ext, c->unflushed);
	}
	if (blkdev_issue_flush(c->ssd)) {
		meta_error(c);
		ok = false;
	}
	/*
	 * Generations first, durable before any table block that may carry them;
	 * no page comes in while its blocks are written: it would read the old ones.
	 */
	mutex_lock(&m->page_lock);
	if (ok && (!write_gens(m, &gens) || !writes_reap(m)))
		ok = false;
	if (ok && gens && blkdev_issue_flush(c->ssd)) {
		meta_error(c);
		ok = false;
	}
	if (ok && !write_table(m))
		ok = false;
	/* the superblock's PREFLUSH makes them durable before it */
	if (!writes_reap(m))
		ok = false;
	mutex_unlock(&m->page_lock);

	mutex_lock(&m->sb_lock);
	/* a failed mark voided the generation: nothing of the old one goes into the new */
	if (m->sb.gen != m->enc_gen) {
		/*
		 * What this commit took and wrote went into the old one: every gen
		 * block and resident page is written into the new one again.
		 */
		flaz_l2p_forget_ssd(c->l2p);
		mutex_unlock(&m->sb_lock);
		return;
	}
	if (clean && ok && meta_hdd_fingerprint(m, &m->sb.hdd_fp))
		ok = false;
	if (ok)
		m->sb.commit++;
	if (clean && ok)
		meta_order_save(m);
	flaz_intent_snapshot(c->intent, ok, clean && ok, m->bitmap, &released);
	if (meta_write_sb(m, clean && ok ? FLAZ_SB_CLEAN : 0)) {
		if (!bio_list_empty(&released))
			meta_fail_closed(m, &released);
		mutex_unlock(&m->sb_lock);
		return;
	}
	WRITE_ONCE(m->hold_since, 0);
	flaz_intent_written(c->intent, m->bitmap);
	if (clean && ok)
		meta_order_saved(m);
	mutex_unlock(&m->sb_lock);
	c->ev->release_writes(c, &released);
	if (ok) {
		flaz_stats_add(c->stats, FLAZ_STAT_COMMITS, 1);
		flaz_stats_add(c->stats, FLAZ_STAT_COMMIT_US,
			       div_u64(ktime_get_ns() - start, NSEC_PER_USEC));
		free_evicted(m, retired);
	}
}

/* Commits: asked for by a FLUSH, the tick or reclaim; at most one per gap. */
static void meta_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, work);
	struct flaz_cache *c = m->c;
	unsigned long gap = META_COMMIT_GAP;
	bool committed = false;

	if (flaz_alloc_nr_pending(c->alloc))
		gap = c->ev->space_short(c) ? 0 : META_COMMIT_HURRY;

	mutex_lock(&m->lock);
	if (m->closed || flaz_mode_get(c) == FLAZ_MODE_PASSTHROUGH || !READ_ONCE(m->running)) {
		/* the SSD is out of use, or suspended (its last commit made): nothing to commit */
		clear_bit(META_COMMIT, &m->flags);
	} else if (READ_ONCE(m->recovering)) {
		/* marked lines may still be on the SSD: recovery asks once they are not */
	} else if (test_bit(META_COMMIT, &m->flags) &&
		   time_before(jiffies, m->last_commit + gap)) {
		mod_delayed_work(c->wq.io, &m->later, m->last_commit + gap - jiffies);
	} else if (test_and_clear_bit(META_COMMIT, &m->flags)) {
		commit(m, false);
		committed = true;
		m->last_commit = jiffies;
		/* asked for again while it ran: after the gap */
		if (test_bit(META_COMMIT, &m->flags))
			mod_delayed_work(c->wq.io, &m->later, gap);
	}
	mutex_unlock(&m->lock);
	/* right after a commit most pages are clean */
	if (committed)
		meta_trim(m);
}

static void later_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(to_delayed_work(work), struct flaz_meta, later);

	queue_work(m->c->wq.io, &m->work);
}

static void tick_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(to_delayed_work(work), struct flaz_meta, tick);
	struct flaz_cache *c = m->c;

	if (flaz_l2p_any_dirty(c->l2p) || flaz_intent_nr_marked(c->intent) ||
	    flaz_alloc_nr_pending(c->alloc))
		flaz_meta_kick(m);
	if (READ_ONCE(m->void_pending))
		queue_work(c->wq.io, &m->mark_work);
	if (READ_ONCE(m->running))
		queue_delayed_work(c->wq.io, &m->tick, META_PERIOD);
}

/* Ask for a commit soon (a FLUSH, evicted extents waiting). */
void flaz_meta_kick(struct flaz_meta *m)
{
	meta_kick(m);
}

/*
 * Extent @ext goes: its next tenant gets a new generation, so every entry
 * into this one, in DRAM or on the SSD, is void (O(1): none is visited). It is
 * reused only after a commit has written that (alloc.c: retired, freed by a
 * commit), and never once worn out. Returns the resident lines that pointed
 * into it.
 */
u32 flaz_meta_evict(struct flaz_meta *m, u32 ext)
{
	bool worn;
	u32 n = flaz_l2p_evict_extent(m->c->l2p, ext, &worn);

	if (worn)
		DMWARN_LIMIT("%s: extent %u reached its last generation: not used again",
			     dm_table_device_name(m->c->ti->table), ext);
	/* the gen and its dirty bit before the extent is retired, which a commit counts first */
	smp_mb__after_atomic();
	return n;
}

/*
 * Before (re)starting I/O: the first time, load the table or format the SSD;
 * after a suspend, say again that the superblock is not clean.
 */
int flaz_meta_resume(struct flaz_meta *m, bool cold)
{
	struct flaz_cache *c = m->c;
	int r = 0;

	mutex_lock(&m->lock);
	mutex_lock(&m->sb_lock);
	if (!m->loaded)
		r = load(m, cold);
	else if (flaz_mode_get(c) != FLAZ_MODE_PASSTHROUGH)
		meta_mark(m);
	if (!r)
		m->loaded = true;
	mutex_unlock(&m->sb_lock);
	if (READ_ONCE(m->recovering) || READ_ONCE(m->warming)) {
		WRITE_ONCE(m->load_stop, false);
		queue_work(c->wq.io, &m->load_work);
	}
	mutex_unlock(&m->lock);
	if (m->start_why != FLAZ_WHY_NONE) {
		flaz_report_unusable(c, m->start_why);
		m->start_why = FLAZ_WHY_NONE;
	}
	if (!r) {
		WRITE_ONCE(m->running, true);
		queue_delayed_work(c->wq.io, &m->tick, META_PERIOD);
	}
	return r;
}

/* No I/O is in flight and the extents are written: leave a clean superblock. */
void flaz_meta_suspend(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;

	WRITE_ONCE(m->running, false);
	cancel_delayed_work_sync(&m->tick);
	/* no write is held any more: suspend waited for every bio */
	cancel_delayed_work_sync(&m->retry);
	cancel_delayed_work_sync(&m->later);
	/* recovery goes on at resume; until it is done, the SSD keeps the unclean state */
	WRITE_ONCE(m->load_stop, true);
	cancel_work_sync(&m->load_work);
	flush_work(&m->mark_work);
	flush_work(&m->work);
	mutex_lock(&m->lock);
	clear_bit(META_COMMIT, &m->flags);
	if (READ_ONCE(m->recovering)) {
		DMINFO("%s: suspended before its marked lines were dropped: left unclean",
		       dm_table_device_name(c->ti->table));
	} else if (m->loaded && !m->closed && flaz_mode_get(c) != FLAZ_MODE_PASSTHROUGH) {
		commit(m, true);
	} else if (m->void_pending) {
		mutex_lock(&m->sb_lock);
		meta_void_generation(m);
		mutex_unlock(&m->sb_lock);
	}
	mutex_unlock(&m->lock);
	/* its discards go out before the SSD is let go */
	flush_work(&m->free_work);
}

/*
 * Give the SSD a new, empty generation so nothing on it can be loaded again:
 * with @close before passthrough (and nothing is committed after it), without
 * when coming back from it.
 */
int flaz_meta_reformat(struct flaz_meta *m, bool close)
{
	struct flaz_cache *c = m->c;
	int r;

	mutex_lock(&m->lock);
	/* closing: no commit after the void, which the writes that follow could make stale */
	m->closed = close;
	mutex_lock(&m->sb_lock);
	r = meta_void_generation(m);
	mutex_unlock(&m->sb_lock);
	if (!r)
		free_evicted(m, flaz_alloc_retired(c->alloc));
	/*
	 * Coming back: the writes passthrough sent unmarked that have ended are on
	 * the HDD before the new generation commits an entry filled from them (one
	 * still in flight keeps its region marked: flaz_intent_load()).
	 */
	if (!r && !close && blkdev_issue_flush(c->hdd)) {
		flaz_stats_add(c->stats, FLAZ_STAT_HDD_ERRORS, 1);
		m->closed = true;
		r = -EIO;
	}
	mutex_unlock(&m->lock);
	return r;
}

/* DRAM the metadata context takes for geometry @g (meta_create's allocations). */
u64 flaz_meta_bytes(const struct flaz_geometry *g)
{
	u64 nr_pages = DIV_ROUND_UP_ULL(g->nr_lines, FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES);

	return sizeof(struct flaz_meta) + (1 + META_WRITES) * META_READ_BLOCKS * FLAZ_BLOCK_SIZE +
	       META_PAGE_BUF_BYTES +
	       FLAZ_BLOCK_SIZE + FLAZ_SB_BITMAP_BYTES + FLAZ_META_ENTRIES * sizeof(u64) +
	       2 * META_FREE_BATCH * sizeof(u32) + BITS_TO_LONGS(g->nr_extents) * sizeof(long) +
	       BITS_TO_LONGS(nr_pages) * sizeof(long);
}

struct flaz_meta *flaz_meta_create(struct flaz_cache *c, bool cold, char **error)
{
	struct flaz_meta *m;
	bool nomem = false;
	u32 i;
	int r;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		*error = "Cannot allocate the metadata context";
		return ERR_PTR(-ENOMEM);
	}
	m->c = c;
	m->tx = (struct flaz_table_ctx){
		.l2p = c->l2p,
		.geo = c->geo,
		.hdd_blocks = c->hdd_blocks,
		.cold = c->cold_codec,
		.durable = extent_durable,
		.marked = block_marked,
		.data = c,
	};
	mutex_init(&m->lock);
	mutex_init(&m->page_lock);
	mutex_init(&m->sb_lock);
	INIT_WORK(&m->work, meta_work);
	INIT_WORK(&m->mark_work, meta_mark_work);
	INIT_WORK(&m->free_work, free_work);
	INIT_WORK(&m->load_work, meta_load_work);
	INIT_DELAYED_WORK(&m->tick, tick_work);
	INIT_DELAYED_WORK(&m->retry, meta_retry_work);
	INIT_DELAYED_WORK(&m->later, later_work);
	m->last_commit = jiffies - META_COMMIT_GAP;
	m->buf = vmalloc(META_READ_BLOCKS * FLAZ_BLOCK_SIZE);
	m->page_buf = vmalloc(META_PAGE_BUF_BYTES);
	m->bitmap = kzalloc(FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	m->entries = kcalloc(FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	m->tx.entries = m->entries;
	m->freed = kcalloc(META_FREE_BATCH, sizeof(u32), GFP_KERNEL);
	m->runs = kcalloc(META_FREE_BATCH, sizeof(u32), GFP_KERNEL);
	m->used = bitmap_zalloc(c->geo->nr_extents, GFP_KERNEL);
	m->recover = bitmap_zalloc(flaz_l2p_nr_pages(c->l2p), GFP_KERNEL);
	m->sb_buf = kmalloc(FLAZ_BLOCK_SIZE, GFP_KERNEL);
	init_completion(&m->sb_done);
	for (i = 0; i < META_WRITES; i++) {
		m->writes[i].m = m;
		init_completion(&m->writes[i].done);
		m->writes[i].buf = vmalloc(META_READ_BLOCKS * FLAZ_BLOCK_SIZE);
		if (!m->writes[i].buf)
			nomem = true;
	}
	if (nomem || !m->buf || !m->page_buf || !m->bitmap || !m->entries || !m->freed ||
	    !m->runs || !m->used || !m->recover || !m->sb_buf) {
		*error = "Cannot allocate the metadata buffers";
		r = -ENOMEM;
		goto bad;
	}
	r = meta_check_sb(m, cold, error);
	if (r)
		goto bad;
	return m;

bad:
	flaz_meta_destroy(m);
	return ERR_PTR(r);
}

/* After flaz_meta_suspend(), or before any use; before the work queues go. */
/* Its work items are not queued again once cancelled: the volume is going. */
void flaz_meta_stop(struct flaz_meta *m)
{
	if (IS_ERR_OR_NULL(m))
		return;
	cancel_delayed_work_sync(&m->tick);
	cancel_delayed_work_sync(&m->retry);
	cancel_delayed_work_sync(&m->later);
	cancel_work_sync(&m->work);
	cancel_work_sync(&m->mark_work);
	cancel_work_sync(&m->free_work);
	cancel_work_sync(&m->load_work);
	/* a mark that failed closed while it was cancelled may have armed a retry */
	cancel_delayed_work_sync(&m->retry);
}

/* After flaz_meta_stop() and the queues' end. */
void flaz_meta_destroy(struct flaz_meta *m)
{
	u32 i;

	if (IS_ERR_OR_NULL(m))
		return;
	for (i = 0; i < META_WRITES; i++)
		vfree(m->writes[i].buf);
	/* a superblock write that outlived its wait (a hung SSD) still owns the buffer */
	if (m->sb_out)
		wait_for_completion(&m->sb_done);
	kfree(m->sb_buf);
	bitmap_free(m->recover);
	bitmap_free(m->used);
	kfree(m->runs);
	kfree(m->freed);
	kfree(m->entries);
	kfree(m->bitmap);
	vfree(m->page_buf);
	vfree(m->buf);
	mutex_destroy(&m->sb_lock);
	mutex_destroy(&m->page_lock);
	mutex_destroy(&m->lock);
	kfree(m);
}

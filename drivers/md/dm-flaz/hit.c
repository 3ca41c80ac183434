// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz hit path: a run of cached blocks (cache.c cuts bios so a piece is all
 * hits) is served with as few SSD reads as its slots allow.
 *
 * In .map: each block's entry is looked up once, and its extent pinned, up to
 * the first block not cached, where the bio is cut; zero blocks are served
 * there and then. The slots are grouped into spans: slots
 * of one extent close enough to read together, aligned to the SSD's logical
 * blocks. Each span is one asynchronous read (a bio from the volume's bio_set),
 * started from .map itself when every slot is on the SSD and memory comes
 * without waiting; otherwise one work item copies the slots still in the
 * extent buffer and starts the reads, waiting on the reserves if it must. A
 * read's completion checks each slot and decompresses it straight into the
 * bio's page: lzo, lz4 and raw slots of a short span in the completion itself
 * when it runs in softirq or task context, or from hard IRQ in a BH work item
 * (as dm-crypt and dm-verity do since 6.9; never with interrupts off), the
 * rest (and a block straddling pages, through a bounce buffer) on the per-CPU
 * read queues. A slot that fails its checks is counted as an SSD fault and its
 * block is read from the HDD, also asynchronously; the bio ends when the last
 * read is done.
 *
 * Pins: an extent with a slot read in flight is not freed (meta.c drains the
 * pins before the discard and before it can be opened again), so a read never
 * returns a later tenant's bytes; the slot checks stay as the defence against
 * the SSD. Pins are counted in a small hashed table of counters, so they cost
 * no DRAM per extent, in two epochs: a drain moves new pins to the other epoch
 * and waits for the old one to empty, which takes no new pins, so steady hits
 * cannot starve it (an RCU grace period in small).
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "flaz.h"
#include "format.h"

/* The most one span reads: bounds its buffer (a slot's own read is far less). */
#define SPAN_MAX_BYTES		(64U << 10)
#define HIT_PIN_BITS		12
#define HIT_RESERVE		4	/* per pool: enough for one hit at a time */
#define HIT_INLINE		2	/* blocks a span's completion serves itself */
static_assert(FLAZ_HIT_RUN <= 64);	/* a u64 lists a hit's blocks for the HDD */

enum hit_state {
	HIT_DONE,	/* served, or failed with the bio's status */
	HIT_SLOT,	/* to read from the extent buffer or the SSD */
};

struct hit_block {
	struct flaz_entry e;
	u8 state;
	u8 span;
	bool pinned;
	u8 epoch;		/* of the pin */
};

/* A read in flight: a span of slots from the SSD, or one block from the HDD. */
struct hit_read {
	struct work_struct work;
	struct flaz_hit *h;
	struct bio *bio;	/* prepared in .map, not yet submitted */
	void *buf;
	bool pooled;		/* buf came from the volume's reserve */
	blk_status_t error;
	u64 to_hdd;		/* a span's blocks for the HDD, after it (fallback_work()) */
};

struct flaz_hit {
	struct work_struct work;	/* copies DRAM slots, starts the reads */
	struct flaz_cache *c;
	struct bio *bio;
	struct bvec_iter iter;
	u64 block;
	u32 head, part;		/* a partial hit: its bytes at @head of the one block */
	bool fetch;		/* flaz_hit_fetch(): not a read of the volume's, not counted */
	u32 nr, nr_spans;
	atomic_t pending;
	blk_status_t status;
	bool pooled;
	struct hit_read *reads;		/* one per span, then one per block for the HDD */
	struct flaz_span *spans;	/* nr at most */
	struct hit_block blocks[];
};

struct flaz_hits {
	struct bio_set bs;
	mempool_t *bufs;	/* span and HDD buffers, for when kmalloc fails */
	u32 buf_bytes;
	struct mutex drain_lock;	/* one drain at a time */
	unsigned int epoch;		/* new pins go here */
	atomic_t pins[2][1 << HIT_PIN_BITS];
};

static mempool_t *hit_pool;	/* a hit of FLAZ_HIT_RUN blocks, when kmalloc fails */
/*
 * A slot copied from DRAM, and a block decompressed for a bio whose pages split
 * it: two pools, taken in that order, so that a DRAM hit holding a slot never
 * waits for a buffer only another such hit can give back.
 */
static mempool_t *slot_pool;
static mempool_t *block_pool;

static size_t hit_size(u32 nr)
{
	return sizeof(struct flaz_hit) +
	       nr * (sizeof(struct hit_block) + 2 * sizeof(struct hit_read) +
		     sizeof(struct flaz_span));
}

/*
 * Add @e's slot to @spans (@nr of them): to the first span of its extent that
 * it is at most FLAZ_SPAN_GAP from and that stays within @max bytes, or to a new
 * one. Spans start and end on @align (the SSD's logical block). Returns the
 * index of the slot's span.
 */
u32 flaz_hit_span_add(struct flaz_span *spans, u32 *nr, const struct flaz_entry *e,
		      u32 align, u32 max)
{
	u32 start = round_down(e->off, align);
	u32 end = round_up(e->off + e->bytes, align);
	u32 i, lo, hi;

	for (i = 0; i < *nr; i++) {
		struct flaz_span *s = &spans[i];

		if (s->ext != e->ext || start > s->end + FLAZ_SPAN_GAP ||
		    s->start > end + FLAZ_SPAN_GAP)
			continue;
		lo = min(s->start, start);
		hi = max(s->end, end);
		if (hi - lo > max)
			continue;
		s->start = lo;
		s->end = hi;
		return i;
	}
	spans[i].ext = e->ext;
	spans[i].start = start;
	spans[i].end = end;
	(*nr)++;
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_hit_span_add);

static atomic_t *pin_of(struct flaz_cache *c, const struct hit_block *b)
{
	return &c->hits->pins[b->epoch][hash_32(b->e.ext, HIT_PIN_BITS)];
}

static void unpin(struct flaz_cache *c, struct hit_block *b)
{
	atomic_t *p;

	if (!b->pinned)
		return;
	b->pinned = false;
	p = pin_of(c, b);
	if (atomic_dec_and_test(p))
		wake_up_var(p);
}

/*
 * Wait until no read is in flight from an extent evicted before the call
 * (meta.c, before freeing them). Every lookup that could still see such an
 * extent's entries has pinned by the time the table's locks are all passed,
 * in the epoch the previous drain left (it emptied the one before); the new
 * epoch takes the pins from here on. O(pin buckets), never starved.
 */
void flaz_hit_drain(struct flaz_cache *c)
{
	struct flaz_hits *hs = c->hits;
	unsigned int old;
	u32 i;

	mutex_lock(&hs->drain_lock);
	flaz_l2p_sync(c->l2p);
	old = hs->epoch;
	WRITE_ONCE(hs->epoch, !old);
	/* the pins before the flip are seen, those after it go to the new epoch */
	smp_mb();
	flaz_l2p_sync(c->l2p);
	for (i = 0; i < ARRAY_SIZE(hs->pins[old]); i++)
		wait_var_event(&hs->pins[old][i], !atomic_read(&hs->pins[old][i]));
	mutex_unlock(&hs->drain_lock);
}

/*
 * @block's entry, its extent pinned while the entry still points there; a
 * read of the volume's (@touch) counts as the line's hit.
 */
static bool lookup_pin(struct flaz_cache *c, u64 block, struct hit_block *b, bool touch)
{
	u64 line = flaz_l2p_line(c->l2p, block);
	bool hit;

	flaz_l2p_lock(c->l2p, line);
	hit = flaz_l2p_lookup(c->l2p, block, &b->e);
	b->pinned = hit && b->e.kind == FLAZ_ENTRY_SLOT;
	if (b->pinned) {
		b->epoch = READ_ONCE(c->hits->epoch);
		atomic_inc(pin_of(c, b));
	}
	/* a second chance at cleaning, and in stage two */
	if (b->pinned && touch) {
		flaz_l2p_touch(c->l2p, line);
		if (!test_bit(b->e.ext, c->hit))
			set_bit(b->e.ext, c->hit);
	}
	flaz_l2p_unlock(c->l2p, line);
	return hit;
}

static void free_hit(struct flaz_hit *h)
{
	if (h->pooled)
		mempool_free(h, hit_pool);
	else
		kfree(h);
}

static void put_hit(struct flaz_hit *h)
{
	struct bio *bio = h->bio;

	if (!atomic_dec_and_test(&h->pending))
		return;
	bio->bi_status = READ_ONCE(h->status);
	free_hit(h);
	bio_endio(bio);
}

static void buf_free(struct flaz_cache *c, struct hit_read *r)
{
	if (r->pooled)
		mempool_free(r->buf, c->hits->bufs);
	else
		kfree(r->buf);
}

/* Block @i's 4 KiB at @src into the bio: all of it, or a partial hit's part. */
static void to_bio(struct flaz_hit *h, u32 i, const void *src)
{
	if (h->part)
		flaz_copy_bytes(h->bio, h->iter, 0, (void *)src + h->head, h->part, true);
	else
		flaz_copy_block(h->bio, h->iter, i * FLAZ_BLOCK_SIZE, (void *)src, true);
}

/*
 * Decompress into block @i of the bio: in place where the block is one page
 * piece (never for a partial hit, whose bio is shorter than a block).
 * -EAGAIN: @atomic and it would sleep (a bounce buffer, a codec stream).
 */
static int decompress_to_bio(struct flaz_hit *h, u32 i, struct flaz_compressor *comp,
			     const u8 *src, u32 len, bool atomic)
{
	struct bvec_iter it = h->iter;
	struct bio_vec bv;
	void *dst;
	int r;

	bio_advance_iter(h->bio, &it, i * FLAZ_BLOCK_SIZE);
	bv = bio_iter_iovec(h->bio, it);
	if (atomic && (bv.bv_len < FLAZ_BLOCK_SIZE || !flaz_decompress_atomic(comp)))
		return -EAGAIN;
	if (bv.bv_len >= FLAZ_BLOCK_SIZE) {
		dst = bvec_kmap_local(&bv);
		r = flaz_decompress(comp, src, len, dst);
		kunmap_local(dst);
		flush_dcache_page(bv.bv_page);
		return r;
	}
	dst = mempool_alloc(block_pool, GFP_NOIO);
	r = flaz_decompress(comp, src, len, dst);
	if (!r)
		to_bio(h, i, dst);
	mempool_free(dst, block_pool);
	return r;
}

/*
 * Whether @slot, read from where @e points, holds block @block as this volume
 * wrote it there; @info says how it is stored. -ENOENT: a cut tag matched but
 * the slot holds another block, a plain miss; -EILSEQ: the slot is damaged, of
 * another size than the table says or in a codec this volume does not use, or
 * an older tenant's of the extent (the SSD lost the write that replaced it).
 */
int flaz_hit_check(struct flaz_cache *c, const struct flaz_entry *e, u64 block,
		   const u8 *slot, struct flaz_slot_info *info)
{
	int r = flaz_slot_decode(slot, e->bytes, info);

	if (r)
		return r;
	if (info->block != block)
		return -ENOENT;
	if (info->bytes != e->bytes || !flaz_cache_codec(c, info->codec) ||
	    flaz_tenant_older(c->tenants, e->ext, info->seq))
		return -EILSEQ;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_hit_check);

/*
 * Check block @i's slot and serve it. -ENOENT and -EILSEQ: flaz_hit_check()'s;
 * -EAGAIN: @atomic and serving it would sleep; other errors are the SSD's.
 */
static int decode(struct flaz_hit *h, u32 i, const u8 *slot, bool atomic)
{
	struct flaz_cache *c = h->c;
	const u8 *payload = slot + sizeof(struct flaz_slot_hdr);
	struct flaz_slot_info info;
	int r;

	/* checksums and decompression never hold interrupts off (span_end_io()) */
	lockdep_assert_irqs_enabled();
	r = flaz_hit_check(c, &h->blocks[i].e, h->block + i, slot, &info);
	if (r)
		return r;
	if (!(info.flags & FLAZ_SLOT_RAW))
		return decompress_to_bio(h, i, flaz_cache_codec(c, info.codec), payload,
					 info.len, atomic);
	to_bio(h, i, payload);
	return 0;
}

/*
 * The slot for block @i was unreadable or failed its checks. If the table still
 * points at it, the SSD let us down: count it and drop the line. Otherwise the
 * slot was replaced or evicted while we read it, which is no fault; but for a
 * fetch, whose own write dropped the line, the slot was pinned as it was.
 */
static void slot_failed(struct flaz_hit *h, u32 i)
{
	static const struct flaz_entry none;
	struct flaz_cache *c = h->c;
	const struct flaz_entry *seen = &h->blocks[i].e;
	u64 block = h->block + i;
	u64 line = flaz_l2p_line(c->l2p, block);
	struct flaz_entry e, old;
	bool same;

	flaz_l2p_lock(c->l2p, line);
	same = flaz_l2p_lookup(c->l2p, block, &e) && e.ext == seen->ext &&
	       e.off == seen->off && e.bytes == seen->bytes;
	if (same)
		flaz_l2p_set(c->l2p, block, &none, &old);
	flaz_l2p_unlock(c->l2p, line);
	if (same || h->fetch)
		flaz_report_fault(c, FLAZ_STAT_SSD_ERRORS);
}

static void read_end_io(struct bio *bio)
{
	struct hit_read *r = bio->bi_private;

	r->error = bio->bi_status;
	bio_put(bio);
	flaz_wq_read(&r->h->c->wq, &r->work);
}

/*
 * A read of @bytes at @sector of @bdev into a new buffer of @r, for @fn to
 * finish. With @gfp not allowed to wait (.map) it may fail, taking nothing;
 * in a worker it waits on the reserves instead.
 */
static struct bio *read_prepare(struct flaz_hit *h, struct hit_read *r,
				struct block_device *bdev, sector_t sector, u32 bytes,
				work_func_t fn, gfp_t gfp)
{
	struct flaz_cache *c = h->c;
	struct bio *bio;

	r->buf = kmalloc(bytes, gfp | __GFP_NORETRY | __GFP_NOWARN);
	r->pooled = !r->buf;
	if (r->pooled && gfpflags_allow_blocking(gfp))
		r->buf = mempool_alloc(c->hits->bufs, gfp);
	if (!r->buf)
		return NULL;
	bio = bio_alloc_bioset(bdev, 1, REQ_OP_READ, gfp, &c->hits->bs);
	if (!bio) {
		buf_free(c, r);
		return NULL;
	}
	bio->bi_iter.bi_sector = sector;
	/* on the reader's behalf: its cgroup's limits and its priority apply */
	bio_clone_blkg_association(bio, h->bio);
	bio->bi_ioprio = h->bio->bi_ioprio;
	/* one multi-page vector: kmalloc memory is physically contiguous */
	__bio_add_page(bio, virt_to_page(r->buf), bytes, offset_in_page(r->buf));
	bio->bi_end_io = read_end_io;
	bio->bi_private = r;
	INIT_WORK(&r->work, fn);
	r->h = h;
	return bio;
}

/* noacct: the reader's bio was accounted when it was submitted to the volume */
static void read_submit(struct flaz_hit *h, struct bio *bio)
{
	atomic_inc(&h->pending);
	submit_bio_noacct(bio);
}

static void hdd_done(struct work_struct *work)
{
	struct hit_read *r = container_of(work, struct hit_read, work);
	struct flaz_hit *h = r->h;
	u32 i = r - h->reads - h->nr;

	/* the target's end_io counts the error, as for any bio; a fetch's is not one */
	if (r->error && h->fetch)
		flaz_stats_add(h->c->stats, FLAZ_STAT_HDD_ERRORS, 1);
	if (r->error)
		WRITE_ONCE(h->status, BLK_STS_IOERR);
	else
		to_bio(h, i, r->buf);
	buf_free(h->c, r);
	put_hit(h);
}

/* Block @i is not (or no longer) served by the cache: read it from the HDD. */
static void hdd_start(struct flaz_hit *h, u32 i)
{
	if (!h->fetch)
		flaz_stats_add(h->c->stats, FLAZ_STAT_READ_MISSES, 1);
	h->blocks[i].state = HIT_DONE;
	read_submit(h, read_prepare(h, &h->reads[h->nr + i], h->c->hdd,
				    (h->block + i) << (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT),
				    FLAZ_BLOCK_SIZE, hdd_done, GFP_NOIO));
}

/*
 * Read the blocks of @to_hdd from the HDD. Each read may wait for a buffer of
 * the pool whose buffers the read queue's work items give back, so this runs
 * on the I/O queue, holding none (mempool's rule).
 */
static void hdd_start_all(struct flaz_hit *h, u64 to_hdd)
{
	while (to_hdd) {
		hdd_start(h, __ffs64(to_hdd));
		to_hdd &= to_hdd - 1;
	}
}

static void count_hit(struct flaz_hit *h)
{
	if (h->fetch)
		return;
	flaz_stats_add(h->c->stats, FLAZ_STAT_READ_HITS, 1);
	if (h->part)
		flaz_stats_add(h->c->stats, FLAZ_STAT_PARTIAL_HITS, 1);
}

/*
 * Block @i's slot was served (@err 0) or not: then the HDD has it, and @i goes
 * into @to_hdd for hdd_start_all() once the caller's buffer is given back.
 */
static void block_end(struct flaz_hit *h, u32 i, int err, u64 *to_hdd)
{
	struct hit_block *b = &h->blocks[i];

	unpin(h->c, b);
	b->state = HIT_DONE;
	if (!err) {
		count_hit(h);
		return;
	}
	if (err != -ENOENT)
		slot_failed(h, i);
	*to_hdd |= BIT_ULL(i);
}

/*
 * Serve the blocks of span @n from its read. With @atomic (in the read's
 * completion: lzo, lz4 and raw slots need no workspace, and waking a worker
 * costs more than checking and decompressing a few blocks, as dm-crypt's
 * no_read_workqueue finds), stop at a block that would sleep or failed its
 * checks and return false: it and the rest are left to the worker. Otherwise a
 * block that fails goes to the HDD.
 */
static bool span_serve(struct flaz_hit *h, u32 n, bool atomic, u64 *to_hdd)
{
	const struct flaz_span *s = &h->spans[n];
	const struct hit_read *r = &h->reads[n];
	u32 i;
	int err;

	for (i = 0; i < h->nr; i++) {
		struct hit_block *b = &h->blocks[i];

		/* span first: other spans' completions change their blocks' state */
		if (b->span != n || b->state != HIT_SLOT)
			continue;
		err = r->error ? -EIO : decode(h, i, r->buf + (b->e.off - s->start), atomic);
		if (err && atomic)
			return false;
		block_end(h, i, err, to_hdd);
	}
	return true;
}

/* A span's blocks that failed, read from the HDD off the read queue; its reference goes too. */
static void fallback_work(struct work_struct *work)
{
	struct hit_read *r = container_of(work, struct hit_read, work);
	struct flaz_hit *h = r->h;

	hdd_start_all(h, r->to_hdd);
	put_hit(h);
}

static void span_done(struct work_struct *work)
{
	struct hit_read *r = container_of(work, struct hit_read, work);
	struct flaz_hit *h = r->h;

	r->to_hdd = 0;
	span_serve(h, r - h->reads, false, &r->to_hdd);
	buf_free(h->c, r);
	/*
	 * The HDD reads wait for buffers that this queue's work items give
	 * back: they start from the I/O queue (the work item is free to reuse).
	 */
	if (r->to_hdd) {
		INIT_WORK(&r->work, fallback_work);
		queue_work(h->c->wq.io, &r->work);
		return;
	}
	put_hit(h);
}

/* Blocks of span @n still to serve. */
static u32 span_left(struct flaz_hit *h, u32 n)
{
	u32 i, nr = 0;

	for (i = 0; i < h->nr; i++)
		nr += h->blocks[i].span == n && h->blocks[i].state == HIT_SLOT;
	return nr;
}

/*
 * Serve short span @r in softirq or task context: waking a worker costs more
 * than checking and decompressing a few lzo, lz4 or raw blocks. A block that
 * needs a workspace or failed its checks sends the rest to the read queue.
 */
static void span_inline(struct hit_read *r)
{
	struct flaz_hit *h = r->h;
	u64 to_hdd = 0;	/* stays empty: a block that failed stops the atomic way */

	if (!span_serve(h, r - h->reads, true, &to_hdd)) {
		INIT_WORK(&r->work, span_done);
		flaz_wq_read(&h->c->wq, &r->work);
		return;
	}
	buf_free(h->c, r);
	put_hit(h);
}

static void span_bh(struct work_struct *work)
{
	span_inline(container_of(work, struct hit_read, work));
}

/*
 * Nothing is checked or decompressed with interrupts off: a driver may end a
 * whole completion queue's reads in one interrupt. A short span is served here
 * in softirq or task context, from hard IRQ in a BH work item (softirq) where
 * the kernel has them; a failed read, a longer span, and a short one from hard
 * IRQ without BH work go to the read queue (high priority, per CPU: r->work is
 * span_done()).
 */
static void span_end_io(struct bio *bio)
{
	struct hit_read *r = bio->bi_private;
	struct workqueue_struct *bh = flaz_bh_wq();
	bool irq = in_hardirq() || irqs_disabled();

	r->error = bio->bi_status;
	bio_put(bio);
	if (r->error || span_left(r->h, r - r->h->reads) > HIT_INLINE || (irq && !bh)) {
		flaz_wq_read(&r->h->c->wq, &r->work);
	} else if (irq) {
		INIT_WORK(&r->work, span_bh);
		queue_work(bh, &r->work);
	} else {
		span_inline(r);
	}
}

/* Serve block @i from the extent buffer if its slot is still there (or list it in @to_hdd). */
static bool serve_dram(struct flaz_hit *h, u32 i, u64 *to_hdd)
{
	struct hit_block *b = &h->blocks[i];
	u8 *slot = mempool_alloc(slot_pool, GFP_NOIO);
	bool found = flaz_xbuf_read(h->c->xbuf, b->e.ext, b->e.off, b->e.bytes, slot);

	if (found)
		block_end(h, i, decode(h, i, slot, false), to_hdd);
	mempool_free(slot, slot_pool);
	return found;
}

/* The SSD read of span @n, to start at once. */
static struct bio *span_prepare(struct flaz_hit *h, u32 n, gfp_t gfp)
{
	const struct flaz_geometry *g = h->c->geo;
	const struct flaz_span *s = &h->spans[n];
	struct bio *bio;

	bio = read_prepare(h, &h->reads[n], h->c->ssd,
			   flaz_extent_sector(g, s->ext) + (s->start >> SECTOR_SHIFT),
			   s->end - s->start, span_done, gfp);
	if (bio)
		bio->bi_end_io = span_end_io;
	return bio;
}

static void plan_spans(struct flaz_hit *h, u32 i)
{
	h->blocks[i].span = flaz_hit_span_add(h->spans, &h->nr_spans, &h->blocks[i].e,
					      bdev_logical_block_size(h->c->ssd),
					      h->c->hits->buf_bytes);
}

/*
 * The worker's way: DRAM slots copied, then every read started, waiting for
 * memory if need be. It runs on the I/O queue, not the read queue, whose work
 * items give back the buffers it waits for.
 */
static void start_work(struct work_struct *work)
{
	struct flaz_hit *h = container_of(work, struct flaz_hit, work);
	u64 to_hdd = 0;
	u32 i, n;

	for (i = 0; i < h->nr; i++) {
		if (h->blocks[i].state == HIT_SLOT && !serve_dram(h, i, &to_hdd))
			plan_spans(h, i);
	}
	hdd_start_all(h, to_hdd);
	for (n = 0; n < h->nr_spans; n++)
		read_submit(h, span_prepare(h, n, GFP_NOIO));
	put_hit(h);
}

/*
 * .map's way, for the usual run whose slots are all on the SSD (their extent's
 * write has completed, and it is pinned): the spans' reads start from here,
 * without a work item, if memory comes without waiting. False: nothing was
 * started, start_work() does it all.
 */
static bool start_now(struct flaz_hit *h)
{
	struct flaz_cache *c = h->c;
	u32 i, n;

	for (i = 0; i < h->nr; i++) {
		struct hit_block *b = &h->blocks[i];

		if (b->state == HIT_SLOT && !flaz_xbuf_on_ssd(c->xbuf, b->e.ext))
			return false;
	}
	for (i = 0; i < h->nr; i++)
		if (h->blocks[i].state == HIT_SLOT)
			plan_spans(h, i);
	for (n = 0; n < h->nr_spans; n++) {
		h->reads[n].bio = span_prepare(h, n, GFP_NOWAIT);
		if (!h->reads[n].bio)
			break;
	}
	if (n < h->nr_spans) {
		while (n--) {
			bio_put(h->reads[n].bio);
			buf_free(c, &h->reads[n]);
		}
		h->nr_spans = 0;
		return false;
	}
	for (n = 0; n < h->nr_spans; n++)
		read_submit(h, h->reads[n].bio);
	return true;
}

/*
 * Serve the run of cached blocks that bio @bio starts with, at its block
 * @block, at most @max of them, and cut the bio after the run. Returns how many
 * blocks it serves: 0 when @block is not cached, or when no memory comes
 * without waiting (the caller then reads the block from the HDD as a miss).
 * With @all (off .map, where the bio may no longer be cut) it serves all @max
 * or none. A bio shorter than a block, or starting @head bytes into it (the
 * caller has cut it at the block's end), is a partial hit: its one block is
 * checked and decompressed whole, and the bio's part copied out.
 * Costs: a lookup and a pin per block (O(1)), one SSD read per span of slots,
 * a check and a decompression per block; never a table read.
 */
static u32 serve(struct flaz_cache *c, struct bio *bio, u64 block, u32 max, u32 head,
		 bool fetch, bool all)
{
	struct hit_block first;
	bool work = false, pooled = false;
	size_t size = hit_size(max);
	struct flaz_hit *h;
	u32 nr, i;

	/* off .map the bio may not be cut: it must be the run's exact length */
	if (all && WARN_ON_ONCE(max * FLAZ_BLOCK_SECTORS != bio_sectors(bio)))
		return 0;
	if (!lookup_pin(c, block, &first, !fetch))
		return 0;
	h = kmalloc(size, GFP_NOWAIT | __GFP_NOWARN);
	if (!h) {
		h = mempool_alloc(hit_pool, GFP_NOWAIT | __GFP_NOWARN);
		if (!h) {
			unpin(c, &first);
			return 0;
		}
		pooled = true;
	}
	memset(h, 0, size);
	h->blocks[0] = first;
	h->pooled = pooled;
	for (nr = 1; nr < max && lookup_pin(c, block + nr, &h->blocks[nr], !fetch); nr++)
		;
	if (all && nr < max) {
		while (nr--)
			unpin(c, &h->blocks[nr]);
		free_hit(h);
		return 0;
	}
	if (nr * FLAZ_BLOCK_SECTORS < bio_sectors(bio))
		dm_accept_partial_bio(bio, nr * FLAZ_BLOCK_SECTORS);
	h->c = c;
	h->bio = bio;
	h->iter = bio->bi_iter;
	h->block = block;
	h->nr = nr;
	h->fetch = fetch;
	if (head || bio->bi_iter.bi_size < FLAZ_BLOCK_SIZE) {
		h->head = head;
		h->part = bio->bi_iter.bi_size;
	}
	atomic_set(&h->pending, 1);
	h->reads = (struct hit_read *)&h->blocks[max];
	h->spans = (struct flaz_span *)&h->reads[2 * max];
	for (i = 0; i < nr; i++) {
		struct hit_block *b = &h->blocks[i];

		if (b->e.kind == FLAZ_ENTRY_ZERO) {
			to_bio(h, i, page_address(ZERO_PAGE(0)));
			count_hit(h);
			continue;
		}
		b->state = HIT_SLOT;
		work = true;
	}
	if (work && !start_now(h)) {
		INIT_WORK(&h->work, start_work);
		queue_work(c->wq.io, &h->work);
		return nr;
	}
	put_hit(h);
	return nr;
}

u32 flaz_hit_serve(struct flaz_cache *c, struct bio *bio, u64 block, u32 max, u32 head)
{
	return serve(c, bio, block, max, head, false, false);
}

/* Serve the whole of @bio, @nr blocks from @block, from the cache, or nothing (false). */
bool flaz_hit_serve_all(struct flaz_cache *c, struct bio *bio, u64 block, u32 nr)
{
	return serve(c, bio, block, nr, 0, false, true);
}

/*
 * Read cached block @block whole into @bio (4 KiB, not the volume's), for the
 * volume's own use (patch.c): checked and decompressed as a hit, read from the
 * HDD if its slot fails; @bio ends when it is done. Not counted as a read, and
 * not a hit for the cleaner. False: not cached, or no memory without waiting.
 */
bool flaz_hit_fetch(struct flaz_cache *c, struct bio *bio, u64 block)
{
	return serve(c, bio, block, 1, 0, true, false);
}

struct flaz_hits *flaz_hits_create(u32 extent_bytes)
{
	struct flaz_hits *hs = kvzalloc(sizeof(*hs), GFP_KERNEL);

	if (!hs)
		return NULL;
	hs->buf_bytes = min(extent_bytes, SPAN_MAX_BYTES);
	mutex_init(&hs->drain_lock);
	hs->bufs = mempool_create_kmalloc_pool(HIT_RESERVE, hs->buf_bytes);
	if (!hs->bufs || bioset_init(&hs->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS)) {
		mempool_destroy(hs->bufs);
		kvfree(hs);
		return NULL;
	}
	return hs;
}

void flaz_hits_destroy(struct flaz_hits *hs)
{
	if (!hs)
		return;
	bioset_exit(&hs->bs);
	mempool_destroy(hs->bufs);
	kvfree(hs);
}

/* DRAM a volume's hit path keeps: the pins and the reserve of read buffers. */
u64 flaz_hits_bytes(struct flaz_hits *hs)
{
	return sizeof(*hs) + HIT_RESERVE * (u64)hs->buf_bytes;
}

int __init flaz_hit_module_init(void)
{
	hit_pool = mempool_create_kmalloc_pool(HIT_RESERVE, hit_size(FLAZ_HIT_RUN));
	slot_pool = mempool_create_kmalloc_pool(HIT_RESERVE, FLAZ_MAX_SLOT_BYTES);
	block_pool = mempool_create_kmalloc_pool(HIT_RESERVE, FLAZ_BLOCK_SIZE);
	if (hit_pool && slot_pool && block_pool)
		return 0;
	flaz_hit_module_exit();
	return -ENOMEM;
}

void flaz_hit_module_exit(void)
{
	mempool_destroy(block_pool);
	mempool_destroy(slot_pool);
	mempool_destroy(hit_pool);
}

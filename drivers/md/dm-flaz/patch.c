// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz partial write updates: a write of part of a cached block keeps the
 * block cached. In .map the written bytes are copied, and the block is read
 * from its slot whole into a page (hit.c); once that read and the write are
 * both done, the bytes are patched in and the block goes to fill.c as a
 * written block, compressed into a new slot. cache.c cuts a write so such a
 * part is a piece of its own.
 *
 * The write's record (records.c) is in the records before the block's entry
 * is looked up, and its line is dropped after, as for any write: so the block
 * read is the one the HDD held before this write. When the write ends its
 * record passes to the update, so a write of the block mapped before the
 * install makes it skip the block. A slot that fails its checks is read from
 * the HDD instead (hit.c); the bytes this write does not cover are the same
 * before and after it. An error on either side leaves the block dropped, as
 * does memory that does not come at once (a cache does not wait on reclaim).
 *
 * The write ends when the HDD has it, never waiting for the SSD; the update
 * may outlive it, so suspend waits for the updates in flight (c->patches).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/gfp.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "flaz.h"
#include "format.h"

#ifdef FLAZ_BENCH
/* make bench measures dropping a block written in part beside updating it */
static bool partial_write_drop;
module_param(partial_write_drop, bool, 0644);
MODULE_PARM_DESC(partial_write_drop, "bench: drop blocks written in part, never update them");
#else
#define partial_write_drop false
#endif

struct flaz_patch {
	struct work_struct work;
	struct flaz_cache *c;
	struct flaz_record rec;		/* the write's, once it has ended */
	bool held;			/* @rec is in the records */
	atomic_t pending;		/* the block's read, the write */
	u32 head;			/* the written bytes start here in the block */
	u32 len;
	struct bio bio;			/* the block, read into @bvec's page */
	struct bio_vec bvec;
	u8 bytes[];			/* written */
};

static void patch_work(struct work_struct *work)
{
	struct flaz_patch *p = container_of(work, struct flaz_patch, work);
	struct flaz_cache *c = p->c;
	struct page *page = p->bvec.bv_page;
	/* the block's, as set up: the read went into it through a copy of it (hit.c) */
	struct bvec_iter it = p->bio.bi_iter;
	bool fresh = false;

	if (p->held && !p->bio.bi_status) {
		memcpy(page_address(page) + p->head, p->bytes, p->len);
		/* a written block: fill.c copies it, the page goes below */
		p->bio.bi_opf = REQ_OP_WRITE;
		fresh = flaz_fill(c, &p->bio, it, 0,
				  it.bi_sector >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT), 1, BIT_ULL(0),
				  &p->rec);
	} else if (p->held) {
		flaz_records_del(&c->records, &p->rec);
	}
	/* handed to the install, whose skips count in fills_skipped; or lost before it */
	if (fresh) {
		flaz_stats_add(c->stats, FLAZ_STAT_PARTIAL_UPDATES, 1);
	} else {
		flaz_stats_add(c->stats, FLAZ_STAT_PARTIAL_DROPS, 1);
		flaz_stats_add(c->stats, FLAZ_STAT_BYPASSES, 1);
	}
	bio_uninit(&p->bio);
	__free_page(page);
	kfree(p);
	if (atomic_dec_and_test(&c->patches))
		wake_up_var(&c->patches);
}

static void put_patch(struct flaz_patch *p)
{
	/* the copy, the compression and the fill's allocations: never in a completion */
	if (atomic_dec_and_test(&p->pending))
		flaz_wq_read(&p->c->wq, &p->work);
}

static void fetch_end_io(struct bio *bio)
{
	put_patch(container_of(bio, struct flaz_patch, bio));
}

/*
 * Start updating block @block for @bio, a write of part of it (@head bytes
 * into it, not past its end) whose record is in the records; the caller
 * drops the block's line after. NULL: the block is not cached, or no memory
 * without waiting; nothing was started. Otherwise the write's completion
 * calls flaz_patch_end().
 */
struct flaz_patch *flaz_patch_start(struct flaz_cache *c, struct bio *bio, u64 block, u32 head)
{
	u32 len = bio->bi_iter.bi_size;
	struct flaz_patch *p;
	struct page *page;

	if (partial_write_drop)
		return NULL;
	p = kmalloc(struct_size(p, bytes, len), GFP_NOWAIT | __GFP_NOWARN);
	page = alloc_page(GFP_NOWAIT | __GFP_NOWARN);
	if (!p || !page)
		goto fail;
	INIT_WORK(&p->work, patch_work);
	p->c = c;
	p->held = false;
	p->head = head;
	p->len = len;
	flaz_copy_bytes(bio, bio->bi_iter, 0, p->bytes, len, false);
	atomic_set(&p->pending, 2);
	bio_init(&p->bio, c->ssd, &p->bvec, 1, REQ_OP_READ);
	p->bio.bi_iter.bi_sector = block << (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	/* on the writer's behalf: its cgroup's limits and its priority apply */
	bio_clone_blkg_association(&p->bio, bio);
	p->bio.bi_ioprio = bio->bi_ioprio;
	__bio_add_page(&p->bio, page, FLAZ_BLOCK_SIZE, 0);
	p->bio.bi_end_io = fetch_end_io;
	atomic_inc(&c->patches);
	if (flaz_hit_fetch(c, &p->bio, block))
		return p;
	/* no wake: in .map, so no suspend waits in flaz_patch_drain() */
	atomic_dec(&c->patches);
	bio_uninit(&p->bio);
fail:
	if (page)
		__free_page(page);
	kfree(p);
	return NULL;
}

/*
 * The write of @p ended with @error (any context): its record @rec passes to
 * the update, unless it went stale or the write failed; the write may end.
 */
void flaz_patch_end(struct flaz_patch *p, struct flaz_record *rec, blk_status_t error)
{
	if (error)
		flaz_records_del(&p->c->records, rec);
	else
		p->held = flaz_records_pass(&p->c->records, rec, &p->rec);
	put_patch(p);
}

/*
 * Wait until no update is in flight (postsuspend: they use the SSD and the
 * queues; no new one starts, .map being held). An SSD that hangs holds it, as
 * it holds a commit.
 */
void flaz_patch_drain(struct flaz_cache *c)
{
	wait_var_event(&c->patches, !atomic_read(&c->patches));
}

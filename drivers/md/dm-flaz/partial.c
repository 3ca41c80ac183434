// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz parts of blocks: which blocks a bio covers only in part, and the
 * read misses of such parts.
 *
 * A read of part of a block that is not cached reads the whole block from the
 * HDD instead (as dm-cache promotes whole blocks), copies the reader's part out
 * and hands the block to fill.c, so the next read of any part of it hits.
 *
 * The reader's record (records.c), added in .map before the block's read is
 * issued, makes the fill install nothing a write changed since, as for any
 * miss. If the block's read fails, the reader's own bio goes to the HDD as it
 * came: its part may still read. Memory that does not come at once leaves the
 * read to the HDD unwidened (a bypass), as a cache does not wait on reclaim.
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/gfp.h>
#include <linux/slab.h>

#include "flaz.h"
#include "format.h"

#ifdef FLAZ_BENCH
/* make bench measures flaz as it was before reads of parts of blocks were cached */
static bool partial_read_pass;
module_param(partial_read_pass, bool, 0644);
MODULE_PARM_DESC(partial_read_pass, "bench: send reads of parts of blocks to the HDD as they come");

bool flaz_partial_pass(void)
{
	return partial_read_pass;
}
#endif

/*
 * The blocks a bio of @sectors at volume sector @start covers, and which of
 * them it covers only in part: a piece of a block is a bio of its own (cache.c).
 */
void flaz_edges(sector_t start, u32 sectors, struct flaz_edges *e)
{
	u32 in = start & (FLAZ_BLOCK_SECTORS - 1);
	u32 end = (start + sectors) & (FLAZ_BLOCK_SECTORS - 1);

	e->first = start >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	e->last = (start + sectors - 1) >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	e->head = in << SECTOR_SHIFT;
	e->head_sectors = in || sectors < FLAZ_BLOCK_SECTORS ?
			  min_t(u32, sectors, FLAZ_BLOCK_SECTORS - in) : 0;
	e->tail_sectors = e->last > e->first ? end : 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_edges);

struct flaz_widen {
	struct work_struct work;
	struct flaz_cache *c;
	struct bio *user;		/* the reader's bio, ended (or sent on) here */
	struct flaz_record *rec;	/* the reader's, for the fill */
	struct bvec_iter iter;		/* the block's data in @bio, as submitted */
	u32 head;			/* the reader's part starts here in the block */
	struct bio bio;			/* the whole block's read */
	struct bio_vec bvec;
};

static void widen_work(struct work_struct *work)
{
	struct flaz_widen *w = container_of(work, struct flaz_widen, work);
	struct flaz_cache *c = w->c;
	struct bio *user = w->user;
	struct page *page = w->bvec.bv_page;
	blk_status_t error = w->bio.bi_status;

	if (error) {
		flaz_records_del(&c->records, w->rec);
	} else {
		flaz_copy_bytes(user, user->bi_iter, 0, page_address(page) + w->head,
				user->bi_iter.bi_size, true);
		/* copies the block: the page goes below */
		flaz_fill(c, &w->bio, w->iter, 0,
			  w->iter.bi_sector >> (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT), 1, 0, w->rec);
	}
	bio_uninit(&w->bio);
	__free_page(page);
	kfree(w);
	/* last: once the reader's bio ends, the volume may go */
	if (error)
		dm_submit_bio_remap(user, NULL);
	else
		bio_endio(user);
}

static void widen_end_io(struct bio *bio)
{
	struct flaz_widen *w = container_of(bio, struct flaz_widen, bio);

	/* the copies and the fill's allocations happen in a work item, never here */
	flaz_wq_read(&w->c->wq, &w->work);
}

/*
 * Serve @bio, a read of part of block @block (@head bytes into it, cut at the
 * block's end, already remapped to the HDD) that is not cached, with a read of
 * the whole block and a fill under the record @rec (added to the records
 * here). False: no memory without waiting; nothing was started and @rec is not
 * in the records.
 */
bool flaz_partial_miss(struct flaz_cache *c, struct bio *bio, u64 block, u32 head,
		       struct flaz_record *rec)
{
	struct flaz_widen *w = kmalloc(sizeof(*w), GFP_NOWAIT | __GFP_NOWARN);
	struct page *page = alloc_page(GFP_NOWAIT | __GFP_NOWARN);

	if (!w || !page) {
		kfree(w);
		if (page)
			__free_page(page);
		return false;
	}
	INIT_WORK(&w->work, widen_work);
	w->c = c;
	w->user = bio;
	w->rec = rec;
	w->head = head;
	bio_init(&w->bio, c->hdd, &w->bvec, 1, REQ_OP_READ);
	w->bio.bi_iter.bi_sector = block << (FLAZ_BLOCK_SHIFT - SECTOR_SHIFT);
	/* on the reader's behalf: its cgroup's limits and its priority apply */
	bio_clone_blkg_association(&w->bio, bio);
	w->bio.bi_ioprio = bio->bi_ioprio;
	__bio_add_page(&w->bio, page, FLAZ_BLOCK_SIZE, 0);
	w->bio.bi_end_io = widen_end_io;
	w->iter = w->bio.bi_iter;
	rec->first = block;
	rec->last = block;
	rec->write = false;
	flaz_records_add(&c->records, rec);
	/* noacct: the reader's bio was accounted when it was submitted to the volume */
	submit_bio_noacct(&w->bio);
	return true;
}

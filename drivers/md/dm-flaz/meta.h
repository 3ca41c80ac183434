/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz metadata, shared by meta.c (commits and the metadata's life), sb.c
 * (the superblock and failing closed) and paging.c (the table's pages in DRAM).
 */
#ifndef DM_FLAZ_META_H
#define DM_FLAZ_META_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "flaz.h"
#include "format.h"

#define DM_MSG_PREFIX		"flaz"
#define META_PERIOD		HZ
#define META_READ_BLOCKS	64U	/* table blocks per read at load, or per write: 256 KiB */
#define META_LOAD_PAGES		16U	/* pages per read of recovery and warming */
/* clock steps a page-in may take to page clean pages out for room (paging.c) */
#define META_ROOM_STEPS		64U
#define META_PAGE_BUF_BYTES	(META_LOAD_PAGES * FLAZ_L2P_PAGE_BLOCKS * FLAZ_BLOCK_SIZE)
#define META_WRITES		4U	/* runs of table or gen blocks in flight in a commit */
#define META_COMMIT		0	/* flags: a commit was asked for */
#define META_RETRY		(HZ / 4)	/* between tries of an SSD that failed a mark */
/*
 * Commits asked for sooner after the last one wait this long, so a FLUSH per
 * write (fsync) costs a commit per batch, not per write: the marks alone keep
 * the cache correct, a commit only keeps it warm (and clears only regions idle
 * for a whole age, META_MARK_AGE). Evicted extents waiting for a commit to be
 * freed make it hurry: fills need the space; with free extents short
 * (flaz_cleaner_short()), no gap at all, or fills run out within it and are
 * skipped (a 100 ms gap is 2 MiB of fills at 20 MB/s).
 */
#define META_COMMIT_GAP		(HZ / 2)
#define META_COMMIT_HURRY	(HZ / 10)
/*
 * A region's write-intent bit stays at least this long after its last write, so
 * writes that come back to a region within it do not wait for a mark again; a
 * crash costs the lines of the regions written that recently.
 */
#define META_MARK_AGE		HZ
#define META_FREE_BATCH		1024U	/* evicted extents discarded and freed at a time */
/*
 * What a superblock that is not clean adds to its next_seq: no slot or extent
 * seq at or above next_seq was used, even by slots written after it, so seqs
 * never repeat after a restart. A slot takes one seq, an extent's opening a unit of
 * about a sixteenth of its bytes (tenant.c): at 3 GB/s of fills about 2^28 a
 * second, so the lease lasts over an hour without a superblock (a load
 * during recovery or a slow SSD holds them back), and costs 2^40 of the 2^63
 * seqs at each load.
 */
#define META_SEQ_LEASE		BIT_ULL(40)

/* A run of neighbouring table or gen blocks, written asynchronously in a commit. */
struct meta_write {
	struct flaz_meta *m;
	u8 *buf;			/* META_READ_BLOCKS blocks */
	u64 first;
	u32 n;				/* blocks; 0 when not in flight */
	bool gens;			/* gen blocks, else table blocks */
	int error;
	struct completion done;
};

struct flaz_meta {
	struct flaz_cache *c;
	struct flaz_sb_info sb;		/* the current superblock */
	/* META_READ_BLOCKS blocks read at load, or the HDD's first */
	u8 *buf;
	u8 *sb_buf;			/* a superblock: written while table writes are out */
	struct completion sb_done;	/* the last superblock write ended */
	bool sb_out;			/* sb_buf is a write's, which may outlive its wait */
	int sb_error;
	unsigned long sb_sent;		/* jiffies: when the last one was sent */
	struct meta_write writes[META_WRITES];
	u32 next_write;
	u8 *bitmap;			/* the bitmap of the next superblock */
	struct flaz_table_ctx tx;	/* encoding and loading table blocks (table.c) */
	u64 *entries;
	u32 *freed;
	u32 *runs;			/* lengths of runs of freed extents */
	unsigned long *used;		/* at activation: extents in use or worn */
	unsigned long *recover;		/* per page: lines of regions marked at activation */
	u64 max_next_seq;
	u64 enc_gen, enc_commit;	/* what the commit under way encodes for */
	struct mutex lock;		/* one commit or reformat at a time */
	struct mutex page_lock;		/* paging, and a commit's table writes; inside lock */
	struct mutex sb_lock;		/* sb, bitmap, superblock writes; inside lock */
	/* extents retired before the last commit that is on the SSD */
	atomic64_t covered;
	u8 *page_buf;			/* META_LOAD_PAGES pages' table blocks, paging held */
	unsigned long flags;
	bool loaded;
	bool running;
	bool closed;			/* passthrough: nothing is committed */
	bool recovering;		/* pages in recover to read: no commit */
	u64 recover_left;		/* pages set in recover */
	bool warming;			/* pages read in order while they fit the budget */
	u64 warm_next;			/* the next page warming reads */
	bool load_stop;			/* suspend: load_work stops between pages */
	enum flaz_why start_why;	/* load() found the SSD unusable: why */
	unsigned long hold_since;	/* jiffies: writes held since a mark failed */
	unsigned long last_commit;	/* jiffies */
	unsigned long last_age;		/* jiffies: the regions' current age began */
	/* what this clean stop's order took, said once its superblock is written */
	struct meta_order_saved {
		u32 extents, chunks;
		u64 bytes, ns;
	} order_saved;
	bool void_pending;		/* void_gen is void in memory, not yet on the SSD */
	u8 void_uuid[16];
	u64 void_gen;
	struct work_struct work;	/* commits */
	struct work_struct mark_work;	/* marks, and passthrough's releases */
	struct work_struct free_work;	/* frees what commits covered */
	struct work_struct load_work;
	struct delayed_work tick;
	struct delayed_work retry;	/* a mark, after a failed one */
	struct delayed_work later;	/* a commit, once its gap has passed */
};

enum sb_state { SB_OK, SB_BLANK, SB_FOREIGN, SB_CORRUPT, SB_OLD };

/* sb.c: the superblock, the format's generation, marks and failing closed; I/O to the devices */
int meta_io(struct flaz_cache *c, struct block_device *bdev, blk_opf_t opf,
	    sector_t sector, sector_t count, void *buf);
bool meta_void_gen_known(const u8 *uuid, u64 gen, dev_t dev);
int meta_hdd_fingerprint(struct flaz_meta *m, u32 *fp);
int meta_read_sb(struct flaz_meta *m, struct flaz_sb_info *sb, enum sb_state *state,
		 u64 *max_seq);
int meta_check_sb(struct flaz_meta *m, bool cold, char **error);
const char *meta_mismatch(struct flaz_meta *m, const struct flaz_sb_info *sb);
const char *meta_resize(struct flaz_meta *m);
bool meta_sb_idle(struct flaz_meta *m);
int meta_write_sb(struct flaz_meta *m, u32 flags);
int meta_format(struct flaz_meta *m, u64 max_seq);
void meta_remember_void(struct flaz_meta *m, const u8 *uuid, u64 gen);
int meta_void_generation(struct flaz_meta *m);
int meta_load_unusable(struct flaz_meta *m, enum sb_state state, enum flaz_why why);
void meta_fail_closed(struct flaz_meta *m, struct bio_list *held);
void meta_mark(struct flaz_meta *m);
void meta_mark_work(struct work_struct *work);
void meta_retry_work(struct work_struct *work);

/* order.c: the reclaim order, saved at a clean stop, back at the next activation */
void meta_order_save(struct flaz_meta *m);
void meta_order_saved(struct flaz_meta *m);
void meta_order_load(struct flaz_meta *m, u32 first, u32 nr);

/* paging.c: the table's pages in DRAM, read on demand, after a crash and to warm up */
int meta_page_read(struct flaz_meta *m, u64 p);
void meta_trim(struct flaz_meta *m);
void meta_recover_set(struct flaz_meta *m);
void meta_load_work(struct work_struct *work);

static inline void meta_error(struct flaz_cache *c)
{
	flaz_report_fault(c, FLAZ_STAT_META_ERRORS);
}

/* Ask for a commit soon (meta.c's work): over the table's budget, a FLUSH, evicted extents. */
static inline void meta_kick(struct flaz_meta *m)
{
	if (flaz_mode_get(m->c) == FLAZ_MODE_PASSTHROUGH)
		return;
	set_bit(META_COMMIT, &m->flags);
	queue_work(m->c->wq.io, &m->work);
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: a compressed, write-through SSD cache in front of a slow disk.
 * Private types and one prototype block per file.
 */
#ifndef DM_FLAZ_H
#define DM_FLAZ_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* Codecs selectable by the compressor option, in table order. */
enum flaz_codec {
	FLAZ_CODEC_LZO,
	FLAZ_CODEC_LZ4,
	FLAZ_CODEC_ZSTD,
	FLAZ_CODEC_DEFLATE,
	FLAZ_NR_CODECS,
};

/* Table options; also the index into flaz_opts.val. */
enum flaz_opt {
	FLAZ_OPT_COMPRESSOR,
	FLAZ_OPT_EXTENT_KIB,
	FLAZ_OPT_OVERBOOK,
	FLAZ_OPT_LOW_WATERMARK,
	FLAZ_OPT_HIGH_WATERMARK,
	FLAZ_OPT_SEQ_CUTOFF_KIB,
	FLAZ_OPT_COMPRESS_MIN_SAVING,
	FLAZ_OPT_HOT_UNCOMPRESSED,
	FLAZ_OPT_SSD_HOLD_S,
	FLAZ_OPT_CLEANER_RATE_MIB,
	FLAZ_OPT_HOT_MAX_PERCENT,
	FLAZ_OPT_COLD_COMPRESSOR,	/* 0: none, else enum flaz_codec + 1 */
	FLAZ_OPT_COLD,
	FLAZ_OPT_TABLE_CACHE_KIB,	/* 0: by the SSD's size */
	FLAZ_OPT_PROBATION_PERCENT,	/* 0: one log, no admission */
	FLAZ_NR_OPTS,
};

/*
 * Option values. Tunables change online through messages, so readers on the
 * I/O path use flaz_opt_get() (READ_ONCE); writers hold the target's lock.
 */
struct flaz_opts {
	unsigned int val[FLAZ_NR_OPTS];
	unsigned long set;	/* bit per option given by the table or a message */
};

/* opts.c: table option parsing and emission, online tunables */
int flaz_opts_parse(struct flaz_opts *o, struct dm_arg_set *as, char **error);
void flaz_opts_emit(const struct flaz_opts *o, char *result, unsigned int maxlen,
		    unsigned int *sz);
int flaz_opts_set_tunable(struct flaz_opts *o, const char *key, const char *value,
			  char **error);
const char *flaz_codec_name(enum flaz_codec c);

static inline unsigned int flaz_opt_get(const struct flaz_opts *o, enum flaz_opt opt)
{
	return READ_ONCE(o->val[opt]);
}

struct flaz_compressor;

#ifdef FLAZ_BENCH
/*
 * costs.c: debugfs dm-flaz/codec_costs, a hit's CPU work per block measured per
 * codec; built only for make bench (Kbuild: FLAZ_BENCH).
 */
void flaz_costs_init(void);
void flaz_costs_exit(void);
#else
static inline void flaz_costs_init(void) {}
static inline void flaz_costs_exit(void) {}
#endif

/* codec.c: per-CPU compression streams over the kernel's lzo/lz4/zstd/zlib */
int flaz_compressor_module_init(void);
void flaz_compressor_module_exit(void);
struct flaz_compressor *flaz_compressor_create(enum flaz_codec type);
void flaz_compressor_destroy(struct flaz_compressor *c);
int flaz_compress(struct flaz_compressor *c, const void *src, unsigned int max_len,
		  void *(*place)(void *ctx, unsigned int len), void *ctx);
int flaz_decompress(struct flaz_compressor *c, const void *src, unsigned int len,
		    void *dst);
bool flaz_decompress_atomic(struct flaz_compressor *c);

/* bypass.c: storing raw, without the codec, blocks predicted not to compress */
struct flaz_bypass;

#define FLAZ_BYPASS_SURE	4	/* raw outcomes in a row that make a region raw */
#define FLAZ_BYPASS_PROBE	16	/* of a raw region's blocks, one is sampled */

void flaz_bypass_module_init(void);
struct flaz_bypass *flaz_bypass_create(void);
void flaz_bypass_destroy(struct flaz_bypass *b);
u64 flaz_bypass_bytes(void);
bool flaz_bypass_predict_raw(const void *data, unsigned int max_len);
bool flaz_bypass_skip(struct flaz_bypass *b, u64 block, const void *data, u32 max);
void flaz_bypass_learn(struct flaz_bypass *b, u64 block, bool raw);

/* seq.c: sequential streams, which bypass the cache past seq_cutoff_kib */
struct flaz_seq;

#define FLAZ_SEQ_BITS		8	/* 256 streams: 128 buckets of two, hashed by next sector */

struct flaz_seq *flaz_seq_create(void);
void flaz_seq_destroy(struct flaz_seq *q);
u64 flaz_seq_bytes(void);
bool flaz_seq_note(struct flaz_seq *q, sector_t start, u32 sectors, u64 cutoff);

/* Counters reported by status, in status order. */
enum flaz_stat {
	FLAZ_STAT_READS,
	FLAZ_STAT_WRITES,
	FLAZ_STAT_READ_HITS,
	FLAZ_STAT_READ_MISSES,
	FLAZ_STAT_WRITE_HITS,
	FLAZ_STAT_WRITE_MISSES,
	FLAZ_STAT_FILLS,
	FLAZ_STAT_BYPASSES,
	FLAZ_STAT_RAW_BLOCKS,
	FLAZ_STAT_ZERO_BLOCKS,
	FLAZ_STAT_EVICTIONS,
	FLAZ_STAT_CLEANER_RUNS,
	FLAZ_STAT_EXTENTS_CLEANED,
	FLAZ_STAT_SLOTS_MOVED,
	FLAZ_STAT_SLOTS_DROPPED,
	FLAZ_STAT_DISCARDS,
	FLAZ_STAT_HDD_ERRORS,
	FLAZ_STAT_SSD_ERRORS,
	FLAZ_STAT_COMMITS,
	FLAZ_STAT_META_ERRORS,
	FLAZ_STAT_META_BYTES,
	FLAZ_STAT_MARKS,	/* superblocks written for write-intent marks */
	FLAZ_STAT_MARK_WAITS,	/* writes that waited for a mark */
	FLAZ_STAT_MARK_WAIT_US,	/* and how long, in all */
	FLAZ_STAT_COMMIT_US,	/* time commits took, in all */
	FLAZ_STAT_FILLS_SKIPPED,	/* blocks not installed: the sum of the reasons below */
	FLAZ_STAT_COMPRESS_SKIPPED,	/* stored raw: predicted not to compress */
	FLAZ_STAT_RECOMPRESSED,	/* slots the cleaner compressed again (hot ones cooled) */
	/* table pages read from the SSD (fills, commits, warming) */
	FLAZ_STAT_TABLE_PAGE_INS,
	FLAZ_STAT_SLOTS_KEPT,	/* hit slots the cleaner left in place, a lap more */
	FLAZ_STAT_SEQ_BYPASS_KIB,	/* KiB of sequential streams that bypassed */
	/* fills_skipped by reason */
	FLAZ_STAT_SKIPPED_SPACE,	/* no free extent: the cleaner was behind */
	FLAZ_STAT_SKIPPED_BUSY,		/* the install backlog was full */
	FLAZ_STAT_SKIPPED_MEMORY,	/* no memory without waiting */
	FLAZ_STAT_SKIPPED_TABLE,	/* the line's table page could not come in */
	FLAZ_STAT_SLOTS_PROMOTED,	/* hit in probation: to the main log */
	FLAZ_STAT_GHOST_HITS,	/* fills of blocks evicted a lap ago: admitted */
	FLAZ_STAT_SKIPPED_HOT,	/* of fills_skipped: the line holds a block hit since */
	FLAZ_STAT_PARTIAL_HITS,	/* of read_hits: reads of part of a block */
	FLAZ_STAT_PARTIAL_FILLS,	/* of read_misses: the whole block read to fill it */
	/* bypasses by reason (but partial_updates, which is not one) */
	FLAZ_STAT_PARTIAL_UPDATES,	/* writes of part of a cached block, the block updated */
	FLAZ_STAT_PARTIAL_DROPS,	/* blocks written in part and dropped */
	FLAZ_STAT_PARTIAL_PASSES,	/* reads of part of a block sent to the HDD as they came */
	FLAZ_STAT_SEQ_BYPASSES,		/* blocks of sequential streams past the cutoff */
	FLAZ_NR_STATS,
};

struct flaz_stats;

/* Gauges: current state rather than event counts, supplied by the target. */
struct flaz_gauges {
	const char *mode;
	const char *mode_reason;
	u64 blocks_cached;
	u64 logical_bytes;
	u64 physical_bytes;
	u64 free_extents;
	u64 total_extents;
	u64 table_bytes;
	u64 marked_regions;
	u64 dram_bytes;
	u64 loading;
	u64 hot_blocks;
	u64 codec_bytes;
	u64 raw_bytes;
	u64 cold_bytes;
	u64 table_resident_bytes;
	u64 probation_extents;	/* written extents in each part of the log */
	u64 main_extents;
	u64 fills_pending;	/* blocks copied for installs not done yet */
};

/* stats.c: per-CPU event counters and the status line */
struct flaz_stats *flaz_stats_create(void);
void flaz_stats_destroy(struct flaz_stats *s);
void flaz_stats_add(struct flaz_stats *s, enum flaz_stat stat, u64 n);
u64 flaz_stats_sum(struct flaz_stats *s, enum flaz_stat stat);
void flaz_stats_emit(struct flaz_stats *s, const struct flaz_gauges *g,
		     char *result, unsigned int maxlen, unsigned int *sz);

/* l2p.c: the packed logical-to-physical table */
enum flaz_entry_kind {
	FLAZ_ENTRY_NONE,
	FLAZ_ENTRY_SLOT,
	FLAZ_ENTRY_ZERO,
};

struct flaz_entry {
	enum flaz_entry_kind kind;
	u32 ext;		/* SLOT: extent, */
	u32 off;		/* byte offset in it */
	u32 bytes;		/* and slot size */
	u64 tag;		/* as stored: cut for a slot, whole for a zero block */
	bool cold;		/* SLOT: in the cold codec */
	u16 gen;		/* SLOT: its extent's generation (flaz_l2p_load() only) */
};

struct flaz_l2p;

/*
 * The table is paged in and out of DRAM in pages of this many table blocks: one,
 * so that what stays resident is the blocks of hot lines, not pages of many
 * blocks that each hold a few of them.
 */
#define FLAZ_L2P_PAGE_BLOCKS	1U
#define FLAZ_L2P_PAGE_STRIPES	8U	/* locks a page's lines take */

struct flaz_l2p *flaz_l2p_create(u64 nr_lines, u64 nr_extents, u32 extent_bytes,
				 u64 hdd_blocks, bool cold);
void flaz_l2p_destroy(struct flaz_l2p *t);
u64 flaz_l2p_bytes(struct flaz_l2p *t);
u64 flaz_l2p_dram_bytes(struct flaz_l2p *t);
u64 flaz_l2p_line(struct flaz_l2p *t, u64 block);
void flaz_l2p_lock(struct flaz_l2p *t, u64 line);
void flaz_l2p_unlock(struct flaz_l2p *t, u64 line);
void flaz_l2p_get(struct flaz_l2p *t, u64 line, struct flaz_entry *e);
bool flaz_l2p_set(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		  struct flaz_entry *old);
bool flaz_l2p_drop_block(struct flaz_l2p *t, u64 block);
bool flaz_l2p_lookup(struct flaz_l2p *t, u64 block, struct flaz_entry *e);
bool flaz_l2p_zero_fits(struct flaz_l2p *t);
bool flaz_l2p_tags_whole(struct flaz_l2p *t);
void flaz_l2p_sync(struct flaz_l2p *t);
u64 flaz_l2p_drop_all(struct flaz_l2p *t);
u16 flaz_l2p_gen(struct flaz_l2p *t, u32 ext);
void flaz_l2p_open_extent(struct flaz_l2p *t, u32 ext);
u32 flaz_l2p_evict_extent(struct flaz_l2p *t, u32 ext, bool *worn);
bool flaz_l2p_worn(struct flaz_l2p *t, u32 ext);
bool flaz_l2p_in_use(struct flaz_l2p *t, u32 ext);
u16 *flaz_l2p_gens(struct flaz_l2p *t);
u64 flaz_l2p_next_gen_dirty(struct flaz_l2p *t, u64 idx);
bool flaz_l2p_take_gen_dirty(struct flaz_l2p *t, u64 idx);
void flaz_l2p_set_gen_dirty(struct flaz_l2p *t, u64 idx);
void flaz_l2p_reset_gens(struct flaz_l2p *t, u16 gen);
u64 flaz_l2p_next_dirty(struct flaz_l2p *t, u64 idx);
bool flaz_l2p_load(struct flaz_l2p *t, u64 block, const struct flaz_entry *e);
bool flaz_l2p_resident(struct flaz_l2p *t, u64 line);
void flaz_l2p_usage(struct flaz_l2p *t, u64 *blocks, u64 *logical, u64 *physical);
void flaz_l2p_codec_usage(struct flaz_l2p *t, u64 *raw, u64 *cold);
u64 flaz_l2p_nr_blocks(struct flaz_l2p *t);
bool flaz_l2p_take_dirty(struct flaz_l2p *t, u64 idx);
void flaz_l2p_set_dirty(struct flaz_l2p *t, u64 idx);
bool flaz_l2p_any_dirty(struct flaz_l2p *t);
/* A line's heat (hits since its slot was installed or moved) stops here: hot. */
#define FLAZ_HEAT_MAX		3U
void flaz_l2p_touch(struct flaz_l2p *t, u64 line);
bool flaz_l2p_points(struct flaz_l2p *t, u64 block, u32 ext, u32 off, u32 *heat);
bool flaz_l2p_ghost(struct flaz_l2p *t, u64 block);
u32 flaz_l2p_heat(struct flaz_l2p *t, u64 line);
u64 flaz_l2p_heat_words(struct flaz_l2p *t);
void flaz_l2p_heat_copy(struct flaz_l2p *t, u64 first, u64 *buf, u32 n, bool save);
void flaz_l2p_move(struct flaz_l2p *t, u64 block, const struct flaz_entry *e);
void flaz_l2p_cool(struct flaz_l2p *t, u64 block);
u32 flaz_l2p_live(struct flaz_l2p *t, u32 ext);
u32 flaz_l2p_slots(struct flaz_l2p *t, u32 ext);

/* resident.c: which of the table's pages are in DRAM */
void flaz_l2p_forget_ssd(struct flaz_l2p *t);
bool flaz_l2p_void_block(struct flaz_l2p *t, u64 idx);
bool flaz_l2p_leaving(struct flaz_l2p *t, u64 line);
u64 flaz_l2p_leaving_bytes(struct flaz_l2p *t);
u64 flaz_l2p_nr_pages(struct flaz_l2p *t);
u64 flaz_l2p_page_of(u64 line);
u32 flaz_l2p_page_blocks(struct flaz_l2p *t, u64 p, u64 *first);
u64 flaz_l2p_resident_bytes(struct flaz_l2p *t);
u64 flaz_l2p_page_bytes(struct flaz_l2p *t, u64 p);
int flaz_l2p_page_in(struct flaz_l2p *t, u64 p);
void flaz_l2p_page_done(struct flaz_l2p *t, u64 p);
void flaz_l2p_drop_page(struct flaz_l2p *t, u64 p);
u64 flaz_l2p_trim(struct flaz_l2p *t, u64 budget);
bool flaz_l2p_make_room(struct flaz_l2p *t, u64 budget, u32 steps);

/* table.c: table blocks on the SSD, encoded from and loaded into the table in DRAM */
struct flaz_table_ctx {
	struct flaz_l2p *l2p;
	const struct flaz_geometry *geo;
	u64 hdd_blocks;
	bool cold;		/* the volume has a cold codec */
	/* whether an entry into @ext may go to the SSD: its slots are durable there */
	bool (*durable)(void *data, u32 ext);
	/* whether @block lies in a region marked at the last crash */
	bool (*marked)(void *data, u64 block);
	void *data;
	u64 *entries;		/* room for FLAZ_META_ENTRIES */
};

int flaz_table_load(const struct flaz_table_ctx *x, u64 idx, const void *blk, u64 gen,
		    bool unclean);
bool flaz_table_encode(const struct flaz_table_ctx *x, u64 idx, u64 gen, u64 commit,
		       void *blk);

/* alloc.c: free and written extents, in reclaim order */
struct flaz_alloc;

struct flaz_alloc *flaz_alloc_create(u32 nr_extents);
void flaz_alloc_destroy(struct flaz_alloc *a);
u64 flaz_alloc_bytes(u32 nr_extents);
int flaz_alloc_get(struct flaz_alloc *a, u32 *id);
int flaz_alloc_get_reserved(struct flaz_alloc *a, u32 *id);
void flaz_alloc_set_reserve(struct flaz_alloc *a, u32 n);
bool flaz_alloc_room(struct flaz_alloc *a);
bool flaz_alloc_reclaimable(struct flaz_alloc *a);
bool flaz_alloc_wait(struct flaz_alloc *a, long timeout);
void flaz_alloc_waits(struct flaz_alloc *a, bool on);
void flaz_alloc_wake(struct flaz_alloc *a);
void flaz_alloc_put(struct flaz_alloc *a, u32 id);
void flaz_alloc_begin(struct flaz_alloc *a, const unsigned long *used);
u32 flaz_alloc_restore(struct flaz_alloc *a, const u32 *ids, u32 n, bool probation,
		       unsigned long *used);
void flaz_alloc_end(struct flaz_alloc *a, const unsigned long *used);

/* A walk of the reclaim order (flaz_alloc_walk_start()). */
struct flaz_alloc_walk {
	u32 id;		/* the extent it is at */
	u32 left;	/* extents left in its FIFO */
	bool main;	/* in main (else in probation) */
};

void flaz_alloc_walk_start(struct flaz_alloc *a, struct flaz_alloc_walk *w);
u32 flaz_alloc_walk(struct flaz_alloc *a, struct flaz_alloc_walk *w, u32 *ids, u32 max);
void flaz_alloc_retire(struct flaz_alloc *a, u32 id);
u32 flaz_alloc_nr_pending(struct flaz_alloc *a);
u64 flaz_alloc_retired(struct flaz_alloc *a);
u32 flaz_alloc_release(struct flaz_alloc *a, u64 bound, u32 max, u32 *ids);
u32 flaz_alloc_runs(u32 *ids, u32 n, u32 *lens);
void flaz_alloc_written(struct flaz_alloc *a, u32 id, bool admitted);
void flaz_alloc_set_probation(struct flaz_alloc *a, u32 n);
u32 flaz_alloc_take_oldest(struct flaz_alloc *a, u32 *ids, u32 max, u32 out, bool *probation);
void flaz_alloc_unget(struct flaz_alloc *a, const u32 *ids, u32 n, bool probation);
u32 flaz_alloc_nr_probation(struct flaz_alloc *a);
u32 flaz_alloc_nr_main(struct flaz_alloc *a);
u32 flaz_alloc_nr_free(struct flaz_alloc *a);
u32 flaz_reclaim_count(u32 nr_free, u32 low, u32 high);

/* wq.c: per-CPU work queues, units spread round-robin over the online CPUs */
struct flaz_wq {
	struct workqueue_struct *read;	/* high priority: a reader waits */
	struct workqueue_struct *write;	/* CPU intensive: compression */
	struct workqueue_struct *io;	/* extent writes and reclaim */
};

int flaz_wq_init(struct flaz_wq *w, const char *name);
void flaz_wq_exit(struct flaz_wq *w);
void flaz_wq_read(struct flaz_wq *w, struct work_struct *work);
void flaz_wq_write(struct flaz_wq *w, struct work_struct *work);

/* intent.c: write-intent regions of the HDD */
struct flaz_intent;

struct flaz_intent *flaz_intent_create(u64 hdd_blocks);
void flaz_intent_destroy(struct flaz_intent *in);
u64 flaz_intent_bytes(struct flaz_intent *in);
u32 flaz_intent_shift(struct flaz_intent *in);
u32 flaz_intent_nr(struct flaz_intent *in);
void flaz_intent_load(struct flaz_intent *in, void *bitmap);
bool flaz_intent_marked(struct flaz_intent *in, u64 block);
u32 flaz_intent_nr_marked(struct flaz_intent *in);
bool flaz_intent_start(struct flaz_intent *in, u64 first, u64 last, struct bio *bio);
void flaz_intent_track(struct flaz_intent *in, u64 first, u64 last);
void flaz_intent_end(struct flaz_intent *in, u64 first, u64 last);
bool flaz_intent_waiting(struct flaz_intent *in);
bool flaz_intent_commit_begin(struct flaz_intent *in, bool age);
void flaz_intent_snapshot(struct flaz_intent *in, bool commit, bool all, void *bitmap,
			  struct bio_list *released);
void flaz_intent_hold(struct flaz_intent *in, struct bio_list *bios);
void flaz_intent_written(struct flaz_intent *in, const void *bitmap);

/* meta.c: the superblock and the table on the SSD */
struct flaz_meta;
struct flaz_geometry;
struct flaz_cache;

struct flaz_meta *flaz_meta_create(struct flaz_cache *c, bool cold, char **error);
void flaz_meta_stop(struct flaz_meta *m);
void flaz_meta_destroy(struct flaz_meta *m);
u64 flaz_meta_bytes(const struct flaz_geometry *g);
int flaz_meta_resume(struct flaz_meta *m, bool cold);
void flaz_meta_suspend(struct flaz_meta *m);
void flaz_meta_kick(struct flaz_meta *m);
void flaz_meta_mark(struct flaz_meta *m);
u32 flaz_meta_evict(struct flaz_meta *m, u32 ext);
int flaz_meta_reformat(struct flaz_meta *m, bool close);
void flaz_meta_module_exit(void);
u64 flaz_meta_loading(struct flaz_meta *m);
bool flaz_meta_recovering(struct flaz_meta *m);
void flaz_meta_stop_warming(struct flaz_meta *m);
int flaz_meta_page_in(struct flaz_meta *m, u64 line, bool room);

/* records.c: block ranges in flight, so no install lands older data than a write */
struct flaz_record {
	struct rb_node rb;
	u64 first, last;	/* blocks touched, inclusive */
	u64 subtree_last;
	bool write;		/* makes the records it overlaps stale */
	bool stale;		/* must not install */
};

struct flaz_records {
	spinlock_t lock;	/* root, and the stale flags of the records in it */
	struct rb_root_cached root;
};

void flaz_records_init(struct flaz_records *rs);
void flaz_records_add(struct flaz_records *rs, struct flaz_record *r);
void flaz_records_del(struct flaz_records *rs, struct flaz_record *r);
bool flaz_records_pass(struct flaz_records *rs, struct flaz_record *old,
		       struct flaz_record *new);
void flaz_records_stale_all(struct flaz_records *rs);

/*
 * What the SSD is used for: everything; hits only, after errors; nothing, after
 * more errors or when asked.
 */
enum flaz_mode {
	FLAZ_MODE_NORMAL,
	FLAZ_MODE_DEGRADED,
	FLAZ_MODE_PASSTHROUGH,
};

/* Why the mode is not normal (status mode_reason). */
enum flaz_why {
	FLAZ_WHY_NONE,
	FLAZ_WHY_SSD_ERRORS,	/* fault count */
	FLAZ_WHY_SSD_NO_MARK,	/* a write-intent mark did not reach the SSD */
	FLAZ_WHY_SSD_UNUSABLE,	/* the SSD failed I/O at activation */
	FLAZ_WHY_SSD_READ_ONLY,	/* at activation */
	FLAZ_WHY_ASKED,		/* the passthrough message */
};

/* SSD and metadata errors within a window that change the mode. */
#define FLAZ_FAULTS_DEGRADED	8
#define FLAZ_FAULTS_PASSTHROUGH	32
#define FLAZ_FAULTS_WINDOW	(10 * 60 * HZ)

/*
 * Upward events: how the parts under the volume (xbuf.c, meta.c, sb.c,
 * mode.c) tell the parts above them (the cleaner, the volume) what happened,
 * never by calling up into them, as dm-zoned's metadata and reclaim meet only
 * in its shared target. The volume (cache.c) sets them at create. A hit tells
 * the cleaner through a bitmap (flaz_cache.hit), not a call.
 */
struct flaz_events {
	/* extents were taken (any context): the cleaner starts if it is needed */
	void (*space_taken)(struct flaz_cache *c);
	/* a fill found no free extent (any context): the cleaner is behind */
	void (*starved)(struct flaz_cache *c);
	/* free extents are short: the ones a commit frees are wanted now */
	bool (*space_short)(struct flaz_cache *c);
	/* an extent write failed (interrupt context): evict it now */
	void (*extent_failed)(struct flaz_cache *c, u32 ext);
	/* writes held until their regions' marks were durable go to the HDD now */
	void (*release_writes)(struct flaz_cache *c, struct bio_list *bios);
	/* the cache is of no use any more: empty it (process context) */
	void (*invalidate)(struct flaz_cache *c);
};

/* The data path's shared state (cache.c owns it; xbuf.c writes its extents). */
struct flaz_cache {
	const struct flaz_events *ev;
	struct dm_target *ti;
	struct block_device *hdd;
	struct block_device *ssd;
	const struct flaz_geometry *geo;
	struct flaz_opts *opts;
	struct flaz_stats *stats;
	enum flaz_codec codec;
	u32 extent_bytes;
	u64 hdd_blocks;
	struct flaz_compressor *comp;
	struct flaz_bypass *bypass;
	/* the cleaner's codec for cold slots: 0 none, else enum flaz_codec + 1 */
	u32 cold_codec;
	struct flaz_compressor *cold_comp;
	struct flaz_l2p *l2p;
	struct flaz_alloc *alloc;
	struct flaz_xbuf *xbuf;
	struct flaz_hits *hits;
	struct flaz_intent *intent;
	struct flaz_meta *meta;
	struct flaz_cleaner *cleaner;
	struct dm_io_client *io;
	struct flaz_wq wq;
	atomic64_t seq;		/* slot and extent seqs, and units of extents' openings */
	struct flaz_tenants *tenants;
	/*
	 * Extents opened and not yet covered by a commit's SSD flush: the table on
	 * the SSD must not point into them. written: their write has completed.
	 */
	unsigned long *unflushed;
	unsigned long *written;

	struct flaz_records records;
	atomic_t pending_fills;		/* blocks copied, not yet installed */
	atomic_t patches;		/* updates of blocks written in part in flight (patch.c) */

	struct flaz_seq *streams;	/* the streams seq_cutoff_kib looks at */

	/* mode.c: faults move the mode on; mode_work does what a change takes. */
	enum flaz_mode mode;
	enum flaz_why why;
	atomic_t faults;
	unsigned long faults_since;	/* jiffies: the window faults counts in began */
	bool ssd_failed;	/* the SSD took no mark: passthrough */
	bool suspended;		/* mode changes wait for resume */
	struct mutex mode_lock;
	struct work_struct mode_work;

	/* Extents whose write failed: no commit takes their slots, the cleaner evicts them. */
	unsigned long *failed;
	/* Extents hit since the cleaner last judged them: stage two passes over them once. */
	unsigned long *hit;
	/* When user I/O last arrived: the cleaner paces itself while it does. */
	unsigned long last_io;
};

/* tenant.c: which slots read back from an extent are its current tenant's */
struct flaz_tenants;

struct flaz_tenants *flaz_tenants_create(u32 nr_extents, u32 extent_bytes, atomic64_t *seq);
void flaz_tenants_destroy(struct flaz_tenants *t);
u64 flaz_tenants_bytes(u32 nr_extents);
void flaz_tenant_open(struct flaz_tenants *t, u32 ext);
bool flaz_tenant_older(struct flaz_tenants *t, u32 ext, u64 slot_seq);
void flaz_tenants_sweep(struct flaz_tenants *t, u32 unit, u64 from);

/* xbuf.c: the extent buffer, open extents in DRAM */
struct flaz_xbuf;

/* Space reserved in an open extent for one slot. */
struct flaz_xslot {
	void *x;
	void *mem;
	u32 ext;
	u32 off;
};

struct flaz_xbuf *flaz_xbuf_create(struct flaz_cache *c);
void flaz_xbuf_destroy(struct flaz_xbuf *xb);
u64 flaz_xbuf_bytes(u32 extent_bytes);
int flaz_xbuf_reserve(struct flaz_xbuf *xb, u32 bytes, struct flaz_xslot *s);
void flaz_xbuf_commit(struct flaz_xbuf *xb, struct flaz_xslot *s);
bool flaz_xbuf_read(struct flaz_xbuf *xb, u32 ext, u32 off, u32 bytes, void *dst);
void flaz_xbuf_opened(struct flaz_xbuf *xb, u32 id);
void flaz_xbuf_written(struct flaz_xbuf *xb, u32 id, bool admitted);
void flaz_xbuf_abandon(struct flaz_xbuf *xb, u32 id);
bool flaz_xbuf_on_ssd(struct flaz_xbuf *xb, u32 id);
void flaz_xbuf_seal_all(struct flaz_xbuf *xb);
void flaz_xbuf_start(struct flaz_xbuf *xb);
void flaz_xbuf_stop(struct flaz_xbuf *xb);
u32 flaz_xbuf_bucket(u32 free, u32 extent_bytes);

/* hit.c: runs of cached blocks, read asynchronously and decompressed into the bio */
#define FLAZ_HIT_RUN	64	/* blocks served as one run at most */
#define FLAZ_SPAN_GAP	(2 * 4096)	/* slots this far apart in an extent are read together */

struct flaz_hits;
struct flaz_slot_info;

/* Bytes @start..@end of extent @ext: one SSD read for the slots in it. */
struct flaz_span {
	u32 ext, start, end;
};

struct flaz_hits *flaz_hits_create(u32 extent_bytes);
void flaz_hits_destroy(struct flaz_hits *hs);
u64 flaz_hits_bytes(struct flaz_hits *hs);
u32 flaz_hit_serve(struct flaz_cache *c, struct bio *bio, u64 block, u32 max, u32 head);
bool flaz_hit_serve_all(struct flaz_cache *c, struct bio *bio, u64 block, u32 nr);
bool flaz_hit_fetch(struct flaz_cache *c, struct bio *bio, u64 block);
void flaz_hit_drain(struct flaz_cache *c);
u32 flaz_hit_span_add(struct flaz_span *spans, u32 *nr, const struct flaz_entry *e,
		      u32 align, u32 max);
int flaz_hit_check(struct flaz_cache *c, const struct flaz_entry *e, u64 block,
		   const u8 *slot, struct flaz_slot_info *info);
int flaz_hit_module_init(void);
void flaz_hit_module_exit(void);

/* partial.c: parts of blocks; a read of part of a block not cached fills the whole block */
struct flaz_edges {
	u64 first, last;	/* the blocks touched */
	u32 head;		/* bytes of @first before the bio */
	u32 head_sectors;	/* of the bio, in @first when it covers it in part; else 0 */
	u32 tail_sectors;	/* of the bio, in @last when it covers it in part after @first */
};

void flaz_edges(sector_t start, u32 sectors, struct flaz_edges *e);

#ifdef FLAZ_BENCH
bool flaz_partial_pass(void);
#else
static inline bool flaz_partial_pass(void)
{
	return false;
}
#endif

bool flaz_partial_miss(struct flaz_cache *c, struct bio *bio, u64 block, u32 head,
		       struct flaz_record *rec);

/* patch.c: a write of part of a cached block updates the block */
struct flaz_patch;

struct flaz_patch *flaz_patch_start(struct flaz_cache *c, struct bio *bio, u64 block, u32 head);
void flaz_patch_end(struct flaz_patch *p, struct flaz_record *rec, blk_status_t error);
void flaz_patch_drain(struct flaz_cache *c);

/* cleaner.c: compaction of the oldest extents, and eviction when space is short */
struct flaz_cleaner;

/*
 * A live slot the cleaner moves: from @src in its buffer (the victim's copy, or
 * a recoded one) to @off in bin @bin; it was at @voff of victim @victim.
 */
struct flaz_move {
	u64 block;
	u32 src;
	u32 bytes;
	u32 bin;
	u32 off;
	u32 victim;
	u32 voff;
	bool cold;		/* the slot is in the cold codec */
};

/* What a move does to a slot's payload. */
enum flaz_recode {
	FLAZ_RECODE_COPY,	/* moved as it is */
	FLAZ_RECODE_HOT,	/* hot: decompressed, stored raw */
	FLAZ_RECODE_COOL,	/* stored raw while hot, cooled: compressed again */
	FLAZ_RECODE_COLD,	/* not hot: compressed again with the cold codec */
};

/* Where stage two sends one of the oldest extents (flaz_evict_oldest()). */
enum flaz_fate {
	FLAZ_FATE_EVICT,	/* evicted whole, unread */
	FLAZ_FATE_TAIL,		/* a lap more at main's tail (from probation: promoted whole) */
	FLAZ_FATE_HEAD,		/* back to its FIFO's head, for the next pass */
};

#define FLAZ_NO_BIN	U32_MAX

struct flaz_cleaner *flaz_cleaner_create(struct flaz_cache *c);
void flaz_cleaner_destroy(struct flaz_cleaner *cl);
u64 flaz_cleaner_bytes(struct flaz_cleaner *cl);
u64 flaz_cleaner_hot_blocks(struct flaz_cleaner *cl);
void flaz_cleaner_start(struct flaz_cleaner *cl);
void flaz_cleaner_stop(struct flaz_cleaner *cl);
void flaz_cleaner_kick(struct flaz_cleaner *cl);
void flaz_cleaner_tuned(struct flaz_cleaner *cl);
void flaz_cleaner_starved(struct flaz_cleaner *cl);
bool flaz_cleaner_short(struct flaz_cleaner *cl);
void flaz_cleaner_failed(struct flaz_cleaner *cl, u32 ext);
void flaz_cleaner_empty(struct flaz_cleaner *cl);

/* policy.c: the cleaner's decisions, as plain functions */
u32 flaz_cleaner_pack(struct flaz_move *mv, u32 n, u32 base, u32 size, u32 max_bins,
		      u32 *fill);
enum flaz_recode flaz_cleaner_recode(u8 flags, bool hot, bool room, bool cold);
bool flaz_cleaner_keep(u32 hot, u32 room);
enum flaz_fate flaz_stage_two_fate(bool spare, bool hit, u32 live, u32 room, bool head_room);
u64 flaz_cleaner_hot_limit(u64 nr_extents, u32 extent_bytes, u32 percent);
void flaz_watermark_levels(u32 total, u32 extent_bytes, u32 low_pct, u32 high_pct, u64 cap,
			   u32 *low, u32 *high);

/* fill.c: installing the blocks of completed read misses and writes */
u32 flaz_max_payload(u32 saving);
u32 flaz_fill_max_payload(struct flaz_cache *c);
int flaz_fill_slot(struct flaz_compressor *comp, struct flaz_bypass *bypass,
		   const void *data, u32 max, void *(*place)(void *ctx, unsigned int len),
		   void *ctx, atomic64_t *seq, struct flaz_slot_info *info);
bool flaz_fill(struct flaz_cache *c, struct bio *bio, struct bvec_iter iter, u32 skip,
	       u64 block, u32 nr, u64 was_cached, struct flaz_record *rec);
bool flaz_fill_all_writes(struct flaz_cache *c);

/* copy.c: a block, or a part of one, between a bio and a buffer */
void flaz_copy_bytes(struct bio *bio, struct bvec_iter iter, u32 off, void *buf,
		     u32 len, bool to_bio);
void flaz_copy_block(struct bio *bio, struct bvec_iter iter, u32 off, void *buf,
		     bool to_bio);

/* cache.c: the data path, and the volume's mode changes */
size_t flaz_cache_per_bio_size(void);
struct flaz_cache *flaz_cache_create(struct dm_target *ti, struct block_device *hdd,
				     struct block_device *ssd, const struct flaz_geometry *g,
				     struct flaz_opts *opts, struct flaz_stats *stats,
				     char **error);
void flaz_cache_destroy(struct flaz_cache *c);
int flaz_cache_map(struct flaz_cache *c, struct bio *bio);
void flaz_cache_drop_blocks(struct flaz_cache *c, u64 first, u64 last, u64 whole_first,
			    u64 whole_end, bool count, u64 *was);
int flaz_cache_end_io(struct flaz_cache *c, struct bio *bio, blk_status_t error);
void flaz_cache_suspend(struct flaz_cache *c);
int flaz_cache_preresume(struct flaz_cache *c);
void flaz_cache_resume(struct flaz_cache *c);
void flaz_cache_invalidate(struct flaz_cache *c);
void flaz_cache_tuned(struct flaz_cache *c);
void flaz_cache_gauges(struct flaz_cache *c, struct flaz_gauges *g);
int flaz_mode_set(struct flaz_cache *c, enum flaz_mode mode, enum flaz_why why);

/* The compressor that decodes slots of @codec here, or NULL for a codec the volume does not use. */
static inline struct flaz_compressor *flaz_cache_codec(struct flaz_cache *c, u8 codec)
{
	if (codec == c->codec)
		return c->comp;
	if (c->cold_codec && codec == c->cold_codec - 1)
		return c->cold_comp;
	return NULL;
}

/* mode.c: what the SSD is used for, and the faults that change it */
void flaz_mode_init(struct flaz_cache *c);
void flaz_mode_exit(struct flaz_cache *c);
void flaz_mode_suspend(struct flaz_cache *c);
void flaz_mode_resume(struct flaz_cache *c);
enum flaz_mode flaz_mode_get(struct flaz_cache *c);
const char *flaz_mode_str(enum flaz_mode mode);
const char *flaz_mode_name(struct flaz_cache *c);
const char *flaz_mode_why(struct flaz_cache *c);
/* What the parts report of the SSD; the mode change runs in c->mode_work (cache.c). */
void flaz_report_fault(struct flaz_cache *c, enum flaz_stat stat);
void flaz_report_extent_failed(struct flaz_cache *c, u32 ext);
void flaz_report_no_mark(struct flaz_cache *c);
void flaz_report_unusable(struct flaz_cache *c, enum flaz_why why);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz persistent metadata: the superblock and the table on the SSD, so a
 * volume comes back warm after a restart, and never stale after a crash.
 *
 * A commit flushes the SSD, writes the table blocks that changed and the gen
 * blocks of extents evicted since, then a superblock with PREFLUSH|FUA,
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
 *    block instead of every table block holding such an entry. Before a
 *    generation comes round again (FLAZ_GEN_BITS), a sweep commit rewrites
 *    every table block that may still hold a void entry (l2p.c "stale");
 *  - a block written since the last complete commit lies in a region marked in
 *    the superblock (intent.c), and its line is dropped at load.
 * The slot's own checksum and block number are checked on every read as well.
 *
 * Commits run on FLUSH (without holding it up: the write-intent bits alone keep
 * the cache correct), every second while anything changed, and at suspend,
 * which leaves a clean superblock.
 *
 * The table is read after resume, in the background (load_work), so a reload
 * holds I/O only for the superblock and the extent generations. Until it is all
 * in, nothing is installed (which extents are free is not known yet) and
 * nothing is committed; a write meanwhile leaves a tombstone in a line not
 * loaded yet (l2p.c), so the loader never brings back an entry it made stale.
 *
 * Marks never wait behind a commit: they have a work item and a lock of their
 * own (sb_lock, which every superblock write holds), and a commit takes that
 * lock only for its own superblock. A mark's superblock written while a commit
 * is under way carries the previous commit's state, which the table blocks the
 * commit wrote so far are consistent with (the same argument as a crash part
 * way through). A commit encodes with the generation it started in, and gives
 * up if a failed mark voided it meanwhile.
 *
 * Fail closed: a write waits for its mark, and when the superblock carrying it
 * does not reach the SSD the write is not let go while the saved state could
 * serve older data for its block. That state is voided first (a new, empty
 * generation); if the SSD takes no write at all, the write is held up to
 * ssd_hold_s, then the generation is remembered as void in memory (see
 * void_gens) and the volume goes passthrough.
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
#include "flaz.h"
#include "format.h"
#include "opts.h"

#define DM_MSG_PREFIX		"flaz"
#define META_PERIOD		HZ
#define META_READ_BLOCKS	64U	/* table blocks per read at load, or per write: 256 KiB */
#define META_WRITES		4U	/* runs of table or gen blocks in flight in a commit */
#define META_COMMIT		0	/* flags: a commit was asked for */
#define META_SWEEP		1	/* flags: a generation came round: rewrite stale blocks */
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
 * A superblock promises that no slot or extent seq below its next_seq + this
 * was used: seqs never repeat after a restart, even for slots written after
 * the last superblock (a commit comes every second, far below 2^32 slots).
 */
#define META_SEQ_LEASE		(1ULL << 32)

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
	u8 *buf;			/* META_READ_BLOCKS blocks read at load, or the HDD's first */
	u8 *sb_buf;			/* a superblock: written while table writes are out */
	struct meta_write writes[META_WRITES];
	u32 next_write;
	u8 *bitmap;			/* the bitmap of the next superblock */
	u64 *entries;
	u32 *freed;
	u32 *runs;			/* lengths of runs of freed extents */
	unsigned long *used;		/* extents the loaded table points into */
	u8 *gens;			/* per extent: its generation (format.h) */
	unsigned long *gen_dirty;	/* per gen block: a gen changed since written */
	u64 max_next_seq;
	u64 enc_gen, enc_commit;	/* what the commit under way encodes for */
	struct mutex lock;		/* one commit, load or reformat at a time */
	struct mutex page_lock;		/* paging, and a commit's table writes; inside lock */
	struct mutex sb_lock;		/* sb, bitmap, superblock writes; inside lock */
	u8 *page_buf;			/* a page's table blocks, read to page it in */
	unsigned long flags;
	bool loaded;
	bool running;
	bool loading;			/* the table is being read (load_work) */
	bool load_stop;			/* suspend: the loader stops between runs */
	u64 load_next;			/* the next table block to read */
	u64 load_gen;			/* the generation being loaded */
	enum flaz_why start_why;	/* load() found the SSD unusable: why */
	unsigned long hold_since;	/* jiffies: writes held since a mark failed */
	unsigned long last_commit;	/* jiffies */
	unsigned long last_age;		/* jiffies: the regions' current age began */
	bool void_pending;		/* void_gen is void in memory, not yet on the SSD */
	u8 void_uuid[16];
	u64 void_gen;
	struct work_struct work;	/* commits */
	struct work_struct mark_work;	/* marks, and passthrough's releases */
	struct work_struct load_work;
	struct delayed_work tick;
	struct delayed_work retry;	/* a mark, after a failed one */
	struct delayed_work later;	/* a commit, once its gap has passed */
};

/*
 * Generations that must not be loaded again: writes reached the HDD while the
 * SSD took neither their marks nor a new generation. Kept in memory until a new
 * generation lands on that SSD, so the fact lasts across table reloads and
 * re-creations, and is lost only with the module (README "Crash safety").
 */
struct void_gen {
	struct list_head list;
	u8 uuid[16];
	u64 gen;
};

static LIST_HEAD(void_gens);
static DEFINE_MUTEX(void_gens_lock);

static struct void_gen *void_gen_find(const u8 *uuid, u64 gen)
{
	struct void_gen *v;

	lockdep_assert_held(&void_gens_lock);
	list_for_each_entry(v, &void_gens, list)
		if (v->gen == gen && !memcmp(v->uuid, uuid, sizeof(v->uuid)))
			return v;
	return NULL;
}

static bool void_gen_known(const u8 *uuid, u64 gen)
{
	bool known;

	mutex_lock(&void_gens_lock);
	known = void_gen_find(uuid, gen);
	mutex_unlock(&void_gens_lock);
	return known;
}

/* Returns false when there is no memory to remember it. */
static bool void_gen_add(const u8 *uuid, u64 gen)
{
	struct void_gen *v = kzalloc(sizeof(*v), GFP_NOIO);

	if (!v)
		return false;
	memcpy(v->uuid, uuid, sizeof(v->uuid));
	v->gen = gen;
	mutex_lock(&void_gens_lock);
	list_add(&v->list, &void_gens);
	mutex_unlock(&void_gens_lock);
	return true;
}

static void void_gen_del(const u8 *uuid, u64 gen)
{
	struct void_gen *v;

	mutex_lock(&void_gens_lock);
	v = void_gen_find(uuid, gen);
	if (v)
		list_del(&v->list);
	mutex_unlock(&void_gens_lock);
	kfree(v);
}

void flaz_meta_module_exit(void)
{
	struct void_gen *v, *tmp;

	list_for_each_entry_safe(v, tmp, &void_gens, list)
		kfree(v);
}

enum sb_state { SB_OK, SB_BLANK, SB_FOREIGN, SB_CORRUPT, SB_OLD };

static int meta_io(struct flaz_cache *c, struct block_device *bdev, blk_opf_t opf,
		   sector_t sector, sector_t count, void *buf)
{
	struct dm_io_region where = { .bdev = bdev, .sector = sector, .count = count };
	struct dm_io_request req = {
		.bi_opf = opf,
		.client = c->io,
	};

	if (is_vmalloc_addr(buf)) {
		req.mem.type = DM_IO_VMA;
		req.mem.ptr.vma = buf;
	} else {
		req.mem.type = DM_IO_KMEM;
		req.mem.ptr.addr = buf;
	}
	return flaz_dm_io(&req, &where);
}

static void meta_error(struct flaz_cache *c)
{
	flaz_report_fault(c, FLAZ_STAT_META_ERRORS);
}

/*
 * crc32c of the HDD's first block: tells another HDD of the same size apart.
 * Read into the superblock buffer, which no one else uses outside sb_lock (or
 * before the volume runs): the loader may be using m->buf.
 */
static int hdd_fingerprint(struct flaz_meta *m, u32 *fp)
{
	int r = meta_io(m->c, m->c->hdd, REQ_OP_READ, 0, FLAZ_BLOCK_SECTORS, m->sb_buf);

	if (!r)
		*fp = flaz_crc32c(~0U, m->sb_buf, FLAZ_BLOCK_SIZE);
	return r;
}

/*
 * Read both superblock copies into *sb (the current one) and m->bitmap; *max_seq
 * is the highest superblock seq, m->max_next_seq the highest slot seq seen.
 */
static int read_sb(struct flaz_meta *m, struct flaz_sb_info *sb, enum sb_state *state,
		   u64 *max_seq)
{
	struct flaz_sb_info info;
	bool magic = false, blank = true, found = false, old = false;
	u32 copy;
	int r;

	*max_seq = 0;
	for (copy = 0; copy < FLAZ_SB_COPIES; copy++) {
		r = meta_io(m->c, m->c->ssd, REQ_OP_READ, copy * FLAZ_BLOCK_SECTORS,
			    FLAZ_BLOCK_SECTORS, m->buf);
		if (r)
			return r;
		r = flaz_sb_decode(m->buf, &info);
		if (r != -ENODATA)
			blank = false;
		if (le32_to_cpu(((struct flaz_sb *)m->buf)->magic) == FLAZ_SB_MAGIC)
			magic = true;
		if (flaz_sb_other_version(m->buf))
			old = true;
		if (r)
			continue;
		*max_seq = max(*max_seq, info.seq);
		m->max_next_seq = max(m->max_next_seq, info.next_seq);
		if (!found || info.seq > sb->seq) {
			*sb = info;
			memcpy(m->bitmap, flaz_sb_bitmap(m->buf), FLAZ_SB_BITMAP_BYTES);
			found = true;
		}
	}
	if (found)
		*state = SB_OK;
	else if (blank)
		*state = SB_BLANK;
	else if (old)
		*state = SB_OLD;
	else
		*state = magic ? SB_CORRUPT : SB_FOREIGN;
	return 0;
}

/* Why the superblock @sb cannot serve this table line, or NULL. */
static const char *mismatch(struct flaz_meta *m, const struct flaz_sb_info *sb)
{
	struct flaz_cache *c = m->c;

	if (sb->hdd_sectors != c->ti->len)
		return "SSD superblock is for another volume: volume size differs (give 'cold' to start empty)";
	if (sb->geo.ssd_sectors != c->geo->ssd_sectors)
		return "SSD superblock is for another volume: SSD size differs (give 'cold' to start empty)";
	if (sb->extent_kib != c->opts->val[FLAZ_OPT_EXTENT_KIB])
		return "SSD superblock is for another volume: extent_kib differs (give 'cold' to start empty)";
	if (sb->overbook != c->opts->val[FLAZ_OPT_OVERBOOK])
		return "SSD superblock is for another volume: overbook differs (give 'cold' to start empty)";
	if (sb->codec != c->codec)
		return "SSD superblock is for another volume: compressor differs (give 'cold' to start empty)";
	if (sb->cold_codec != c->cold_codec)
		return "SSD superblock is for another volume: cold_compressor differs (give 'cold' to start empty)";
	return NULL;
}

/*
 * Whether the SSD can be used as it is (or is blank); *error says why not. Reads
 * only: a table reload runs this while the old instance still writes. An SSD
 * that cannot be read or written is no reason to refuse: the volume starts in
 * passthrough (load()).
 */
static int check_sb(struct flaz_meta *m, bool cold, char **error)
{
	struct flaz_sb_info sb;
	enum sb_state state;
	u64 max_seq;
	u32 fp;
	int r;

	r = read_sb(m, &sb, &state, &max_seq);
	if (r)
		return 0;
	if (cold || state == SB_BLANK)
		return 0;
	if (state == SB_CORRUPT) {
		*error = "SSD superblock is corrupt (give 'cold' to start empty)";
		return -EINVAL;
	}
	if (state == SB_OLD) {
		*error = "SSD superblock is of another flaz format version (give 'cold' to start empty)";
		return -EINVAL;
	}
	if (state == SB_FOREIGN) {
		*error = "SSD holds no flaz superblock and is not blank (give 'cold' to overwrite it)";
		return -EINVAL;
	}
	/* void: load() starts empty, whatever the HDD holds now */
	if (void_gen_known(sb.uuid, sb.gen))
		return 0;
	*error = (char *)mismatch(m, &sb);
	if (*error)
		return -EINVAL;
	/* After a clean stop the HDD's first block is known; after a crash it is not. */
	if (sb.flags & FLAZ_SB_CLEAN) {
		r = hdd_fingerprint(m, &fp);
		if (r) {
			*error = "Cannot read the HDD";
			return r;
		}
		if (fp != sb.hdd_fp) {
			*error = "SSD caches another HDD: its first block differs (give 'cold' to start empty)";
			return -EINVAL;
		}
	}
	return 0;
}

/* Write the next superblock copy from m->sb and m->bitmap, durably. */
static int write_sb(struct flaz_meta *m, u32 flags)
{
	struct flaz_cache *c = m->c;
	int r;

	lockdep_assert_held(&m->sb_lock);
	m->sb.seq++;
	m->sb.flags = flags;
	m->sb.next_seq = atomic64_read(&c->seq) + 1 + META_SEQ_LEASE;
	flaz_sb_encode(m->sb_buf, &m->sb, m->bitmap);
	flaz_stats_add(c->stats, FLAZ_STAT_META_BYTES, FLAZ_BLOCK_SIZE);
	r = meta_io(c, c->ssd, REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA,
		    (m->sb.seq % FLAZ_SB_COPIES) * FLAZ_BLOCK_SECTORS, FLAZ_BLOCK_SECTORS,
		    m->sb_buf);
	if (r)
		meta_error(c);
	return r;
}

/*
 * Start an empty cache of a new generation: the table blocks on the SSD become
 * void, whatever they hold. Both copies are written, so an older copy with a
 * higher seq cannot come back.
 */
static int format(struct flaz_meta *m, u64 max_seq)
{
	struct flaz_cache *c = m->c;
	struct flaz_sb_info *sb = &m->sb;
	u32 copy;
	int r;

	/*
	 * Slot seqs go on rising across generations, so a slot left by an earlier
	 * one is never taken for a newer tenant of its extent (cache.c); the clock
	 * covers an SSD whose superblock was lost.
	 */
	atomic64_set(&c->seq, max3((u64)atomic64_read(&c->seq), m->max_next_seq,
				   (u64)ktime_get_real_ns()));
	memset(sb, 0, sizeof(*sb));
	sb->seq = max_seq;
	sb->gen = get_random_u64();
	generate_random_uuid(sb->uuid);
	sb->hdd_sectors = c->ti->len;
	sb->extent_kib = c->opts->val[FLAZ_OPT_EXTENT_KIB];
	sb->overbook = c->opts->val[FLAZ_OPT_OVERBOOK];
	sb->codec = c->codec;
	sb->cold_codec = c->cold_codec;
	sb->region_shift = flaz_intent_shift(c->intent);
	sb->nr_regions = flaz_intent_nr(c->intent);
	sb->geo = *c->geo;
	r = hdd_fingerprint(m, &sb->hdd_fp);
	if (r)
		return r;
	memset(m->bitmap, 0, FLAZ_SB_BITMAP_BYTES);
	flaz_intent_load(c->intent, m->bitmap);
	/* a new format has no gen blocks: every extent is at generation 0 */
	memset(m->gens, 0, c->geo->nr_extents);
	bitmap_zero(m->gen_dirty, flaz_gen_blocks(c->geo));
	for (copy = 0; copy < FLAZ_SB_COPIES && !r; copy++)
		r = write_sb(m, 0);
	return r;
}

/* Whether a block that line @line's entry @e may hold lies in a marked region. */
static bool entry_marked(struct flaz_meta *m, u64 line, const struct flaz_entry_info *e)
{
	struct flaz_cache *c = m->c;
	u64 step = e->units == FLAZ_ENTRY_ZERO_UNITS ? 0 : 1ULL << FLAZ_TAG_BITS;
	u64 tag;

	for (tag = e->tag; tag * c->geo->nr_lines + line < c->hdd_blocks; tag += step) {
		if (flaz_intent_marked(c->intent, tag * c->geo->nr_lines + line))
			return true;
		if (!step)
			break;
		cond_resched();
	}
	return false;
}

/*
 * Take table block @idx's entries (@blk, of generation @gen) into the table,
 * each unless a write reached its line first; with @keep false (a write made
 * the block void while its page was out), only note the extents it points
 * into. Returns whether the block must be written again; *stale is set when it
 * holds an entry void by its extent's generation.
 */
static bool load_block(struct flaz_meta *m, u64 idx, const u8 *blk, u64 gen, bool unclean,
		       bool keep, bool *stale)
{
	struct flaz_cache *c = m->c;
	struct flaz_entry_info ei;
	struct flaz_entry e;
	bool rewrite = false;
	u64 commit, line;
	u32 i;
	int r;

	r = flaz_meta_decode(blk, gen, idx, &commit, m->entries);
	if (r == -ENODATA)
		return false;
	if (r) {
		meta_error(c);
		return true;
	}
	for (i = 0; i < FLAZ_META_ENTRIES; i++) {
		line = idx * FLAZ_META_ENTRIES + i;
		flaz_entry_unpack(m->entries[i], &ei);
		if (!ei.units)
			continue;
		if (!flaz_entry_valid(&ei, c->geo, line, c->hdd_blocks) ||
		    (ei.units == FLAZ_ENTRY_ZERO_UNITS && !flaz_l2p_zero_fits(c->l2p)) ||
		    (ei.cold && !c->cold_codec)) {
			meta_error(c);
			rewrite = true;
			continue;
		}
		/* left by an eviction: the extent has had other tenants since */
		if (ei.units != FLAZ_ENTRY_ZERO_UNITS && ei.gen != m->gens[ei.ext]) {
			*stale = true;
			continue;
		}
		if (unclean && entry_marked(m, line, &ei)) {
			rewrite = true;
			continue;
		}
		memset(&e, 0, sizeof(e));
		if (ei.units == FLAZ_ENTRY_ZERO_UNITS) {
			e.kind = FLAZ_ENTRY_ZERO;
		} else {
			e.kind = FLAZ_ENTRY_SLOT;
			e.ext = ei.ext;
			e.off = ei.off;
			e.bytes = ei.units * FLAZ_SLOT_ALIGN;
			e.cold = ei.cold;
		}
		/*
		 * Used even when a write took the line first: the SSD points into it
		 * until the next commit, so it is not free before an eviction.
		 */
		if (e.kind == FLAZ_ENTRY_SLOT)
			set_bit(ei.ext, m->used);
		/* a block with this line and tag: flaz_l2p_load() keeps the tag bits it stores */
		if (keep)
			flaz_l2p_load(c->l2p, ei.tag * c->geo->nr_lines + line, &e);
	}
	return rewrite;
}

/*
 * Read the extents' generations. Returns -EILSEQ when a gen block cannot be
 * read or fails its checks: entries into its extents could be void or not.
 */
static int load_gens(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 nr = flaz_gen_blocks(c->geo), idx, i, n, commit;
	u8 *gens;
	int r;

	for (idx = 0; idx < nr; idx += n) {
		n = min_t(u64, nr - idx, META_READ_BLOCKS);
		r = meta_io(c, c->ssd, REQ_OP_READ, c->geo->gen_start + idx * FLAZ_BLOCK_SECTORS,
			    n * FLAZ_BLOCK_SECTORS, m->buf);
		if (r)
			return -EILSEQ;
		for (i = 0; i < n; i++) {
			gens = m->gens + (idx + i) * FLAZ_GEN_ENTRIES;
			r = flaz_gen_decode(m->buf + i * FLAZ_BLOCK_SIZE, m->sb.gen, idx + i,
					    &commit, gens);
			if (r == -ENODATA)
				memset(gens, 0, FLAZ_GEN_ENTRIES);
			else if (r)
				return -EILSEQ;
		}
	}
	bitmap_zero(m->gen_dirty, nr);
	return 0;
}

/*
 * Page @p in and load its table blocks from @blks (read from the SSD with
 * @read_error) of generation @gen, with paging held. A block a write made
 * dirty while the page was out is void: it stays dirty, to be written from the
 * page. Without memory for the page the entries stay out (as if paged out),
 * and only the extents they point into are noted.
 */
static void page_load(struct flaz_meta *m, u64 p, const u8 *blks, int read_error, u64 gen,
		      bool unclean)
{
	struct flaz_cache *c = m->c;
	u64 first;
	u32 n = flaz_l2p_page_blocks(c->l2p, p, &first);
	u32 voids, i;
	bool stale;
	int r;

	lockdep_assert_held(&m->page_lock);
	r = flaz_l2p_page_in(c->l2p, p, &voids);
	if (r)
		voids = 0;
	for (i = 0; i < n; i++) {
		stale = false;
		if (read_error || load_block(m, first + i, blks + i * FLAZ_BLOCK_SIZE, gen,
					     unclean, !r && !(voids & BIT(i)), &stale))
			flaz_l2p_set_dirty(c->l2p, first + i);
		if (stale)
			flaz_l2p_set_stale(c->l2p, first + i);
	}
	if (!r)
		flaz_l2p_page_done(c->l2p, p);
}

/*
 * DRAM the table's resident pages may take: table_cache_kib, or by default
 * 1 MiB per GiB of the SSD's extents, 4 MiB at least.
 */
static u64 table_budget(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 kib = flaz_opt_get(c->opts, FLAZ_OPT_TABLE_CACHE_KIB);

	if (!kib)
		kib = max_t(u64, FLAZ_MIN_TABLE_CACHE_KIB,
			    (c->geo->nr_extents * c->extent_bytes) >> 20);
	return kib << 10;
}

/*
 * Page out down to the budget, clean pages first, dirty ones too with @dirty
 * (right after a commit, when few are); no table write is in flight.
 */
static void trim(struct flaz_meta *m, bool dirty)
{
	struct flaz_cache *c = m->c;

	if (flaz_l2p_resident_bytes(c->l2p) <= table_budget(m))
		return;
	mutex_lock(&m->page_lock);
	flaz_l2p_trim(c->l2p, table_budget(m), dirty);
	mutex_unlock(&m->page_lock);
}

/*
 * Make @line's page resident, reading it from the SSD if it is out, for a fill
 * (which may sleep). Not while the table loads: the loader brings every page.
 * Over the budget, a commit comes soon, and pages go after it.
 */
int flaz_meta_page_in(struct flaz_meta *m, u64 line)
{
	struct flaz_cache *c = m->c;
	u64 p = flaz_l2p_page_of(line), first, gen;
	u32 n = flaz_l2p_page_blocks(c->l2p, p, &first);
	int r = 0;

	if (flaz_l2p_resident(c->l2p, line))
		return 0;
	mutex_lock(&m->page_lock);
	if (READ_ONCE(m->loading)) {
		r = -EBUSY;
	} else if (!flaz_l2p_resident(c->l2p, line)) {
		gen = READ_ONCE(m->sb.gen);
		r = meta_io(c, c->ssd, REQ_OP_READ,
			    c->geo->meta_start + first * FLAZ_BLOCK_SECTORS,
			    n * FLAZ_BLOCK_SECTORS, m->page_buf);
		if (r)
			meta_error(c);
		flaz_stats_add(c->stats, FLAZ_STAT_TABLE_PAGE_INS, 1);
		/* marked regions need not be checked: writes there dropped or voided */
		page_load(m, p, m->page_buf, r, gen, false);
		/* a failed mark voided the generation meanwhile: what came in is void */
		if (READ_ONCE(m->sb.gen) != gen)
			flaz_l2p_drop_page(c->l2p, p);
		if (!flaz_l2p_resident(c->l2p, line))
			r = -ENOMEM;
	}
	mutex_unlock(&m->page_lock);
	if (flaz_l2p_resident_bytes(c->l2p) > table_budget(m))
		flaz_meta_kick(m);
	return r;
}

/*
 * Read the next run of table blocks and page it in (then out again, over the
 * budget); the lines of marked regions are left out (those marked since the
 * load began included).
 */
static void load_run(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u64 idx = m->load_next, p;
	u32 n = min_t(u64, flaz_l2p_nr_blocks(c->l2p) - idx, META_READ_BLOCKS);
	bool unclean = flaz_intent_nr_marked(c->intent);
	int r;

	static_assert(META_READ_BLOCKS % FLAZ_L2P_PAGE_BLOCKS == 0);
	r = meta_io(c, c->ssd, REQ_OP_READ, c->geo->meta_start + idx * FLAZ_BLOCK_SECTORS,
		    n * FLAZ_BLOCK_SECTORS, m->buf);
	if (r)
		meta_error(c);
	mutex_lock(&m->page_lock);
	for (p = idx / FLAZ_L2P_PAGE_BLOCKS; p * FLAZ_L2P_PAGE_BLOCKS < idx + n; p++)
		page_load(m, p, m->buf + (p * FLAZ_L2P_PAGE_BLOCKS - idx) * FLAZ_BLOCK_SIZE, r,
			  m->load_gen, unclean);
	flaz_l2p_trim(c->l2p, table_budget(m), true);
	mutex_unlock(&m->page_lock);
	WRITE_ONCE(m->load_next, idx + n);
}

/*
 * Read the table after resume (or go on where a suspend stopped it), one run at
 * a time under the lock, so flaz_meta_stop_load() waits for one run at most.
 * If a failed mark voided the generation meanwhile, the rest is left out: the
 * extents of what is in are known used, and passthrough empties it anyway.
 */
static void load_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, load_work);
	struct flaz_cache *c = m->c;
	u64 nr = flaz_l2p_nr_blocks(c->l2p);
	bool done = false;

	for (;;) {
		mutex_lock(&m->lock);
		if (!m->loading || m->load_next >= nr || READ_ONCE(m->load_stop) ||
		    READ_ONCE(m->sb.gen) != m->load_gen)
			break;
		load_run(m);
		mutex_unlock(&m->lock);
		cond_resched();
	}
	if (m->loading && (m->load_next >= nr || READ_ONCE(m->sb.gen) != m->load_gen)) {
		flaz_alloc_reset(c->alloc, m->used);
		WRITE_ONCE(m->loading, false);
		/* every page came in, or the generation is void */
		flaz_l2p_tombs_end(c->l2p);
		done = true;
	}
	mutex_unlock(&m->lock);
	if (done)
		flaz_meta_kick(m);
}

/* Table blocks still to be read after activation; 0 once the table is in. */
u64 flaz_meta_loading(struct flaz_meta *m)
{
	if (!READ_ONCE(m->loading))
		return 0;
	return flaz_l2p_nr_blocks(m->c->l2p) - READ_ONCE(m->load_next);
}

/*
 * The cache is about to be emptied (invalidate, passthrough): stop loading, the
 * rest of the table is not wanted. Every extent counts as used, so the eviction
 * that follows voids everything the SSD points at, loaded or not. Waits for the
 * run under way (not for the work item, which may share a rescuer with the caller).
 */
void flaz_meta_stop_load(struct flaz_meta *m)
{
	if (!READ_ONCE(m->loading))
		return;
	mutex_lock(&m->lock);
	if (m->loading) {
		bitmap_fill(m->used, m->c->geo->nr_extents);
		flaz_alloc_reset(m->c->alloc, m->used);
		WRITE_ONCE(m->loading, false);
		flaz_l2p_tombs_end(m->c->l2p);
	}
	mutex_unlock(&m->lock);
}

/* Remember the generation on the SSD (@uuid, @gen) as void until a new one lands. */
static void remember_void(struct flaz_meta *m, const u8 *uuid, u64 gen)
{
	if (m->void_pending)
		return;
	memcpy(m->void_uuid, uuid, sizeof(m->void_uuid));
	m->void_gen = gen;
	m->void_pending = true;
	if (!void_gen_add(uuid, gen))
		DMERR("%s: cannot remember that the SSD's cache is void: give 'cold' when creating the volume again",
		      dm_table_device_name(m->c->ti->table));
}

/*
 * Replace the saved state by a new, empty generation. Until that is on the SSD,
 * the generation it replaces is remembered as void (void_gens).
 */
static int void_generation(struct flaz_meta *m)
{
	u64 gen = m->sb.gen;
	u8 uuid[16];
	int r;

	memcpy(uuid, m->sb.uuid, sizeof(uuid));
	/* the block layer would let the writes through with a warning */
	r = bdev_read_only(m->c->ssd) ? -EROFS : format(m, m->sb.seq);
	if (!r) {
		if (m->void_pending)
			void_gen_del(m->void_uuid, m->void_gen);
		m->void_pending = false;
		return 0;
	}
	/* format() replaced m->sb: remember the one that is on the SSD */
	remember_void(m, uuid, gen);
	return r;
}

/*
 * The SSD cannot be used at activation: the volume starts in passthrough (once
 * flaz_meta_resume() has let go of m->lock, which a mode change takes inside the
 * mode lock), and the state on it (if any could be read) is void, since writes
 * will now reach the HDD unmarked; a new generation replaces it once the SSD
 * takes writes.
 */
static int load_unusable(struct flaz_meta *m, enum sb_state state, enum flaz_why why)
{
	if (state == SB_OK)
		remember_void(m, m->sb.uuid, m->sb.gen);
	m->start_why = why;
	return 0;
}

static int load(struct flaz_meta *m, bool cold)
{
	struct flaz_cache *c = m->c;
	enum sb_state state = SB_BLANK;
	const char *why;
	u64 max_seq;
	int r;

	r = read_sb(m, &m->sb, &state, &max_seq);
	if (r)
		return load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE);
	if (bdev_read_only(c->ssd))
		return load_unusable(m, state, FLAZ_WHY_SSD_READ_ONLY);
	if (cold || state == SB_BLANK) {
		r = format(m, max_seq);
		return r ? load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
	}
	if (state == SB_OK && void_gen_known(m->sb.uuid, m->sb.gen)) {
		DMWARN("%s: the SSD's saved cache was left behind by writes it could not mark: starting empty",
		       dm_table_device_name(c->ti->table));
		/* ours to replace: void_generation() forgets it once the new one is on */
		memcpy(m->void_uuid, m->sb.uuid, sizeof(m->void_uuid));
		m->void_gen = m->sb.gen;
		m->void_pending = true;
		return void_generation(m) ? load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
	}
	why = state == SB_OK ? mismatch(m, &m->sb) : "SSD superblock is unusable";
	if (why) {
		/* It changed since the table was loaded. */
		DMERR("%s: %s", dm_table_device_name(c->ti->table), why);
		return -EINVAL;
	}
	if (load_gens(m)) {
		meta_error(c);
		DMWARN("%s: the SSD's extent generations are damaged: starting empty",
		       dm_table_device_name(c->ti->table));
		r = void_generation(m);
		return r ? load_unusable(m, SB_BLANK, FLAZ_WHY_SSD_UNUSABLE) : 0;
	}
	flaz_intent_load(c->intent, m->bitmap);
	/* the lease covers slots written after the last superblock; the clock, a lost one */
	atomic64_set(&c->seq, max_t(u64, m->sb.next_seq, ktime_get_real_ns()));
	/* From now on the superblock is not clean; it says so before any write. */
	flaz_intent_snapshot(c->intent, false, false, m->bitmap, &(struct bio_list){});
	if (write_sb(m, 0))
		return load_unusable(m, SB_OK, FLAZ_WHY_SSD_UNUSABLE);
	/* the table itself comes in after resume (load_work) */
	bitmap_zero(m->used, c->geo->nr_extents);
	m->load_gen = m->sb.gen;
	m->load_next = 0;
	WRITE_ONCE(m->loading, true);
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
	flaz_hit_drain(c, m->freed, n);
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
			flaz_alloc_put(c->alloc, m->freed[i] + m->runs[i]);
}

static void free_evicted(struct flaz_meta *m, u32 nr)
{
	u32 n;

	while (nr) {
		n = flaz_alloc_release(m->c->alloc, min(nr, META_FREE_BATCH), m->freed);
		if (!n)
			break;
		free_batch(m, n);
		nr -= n;
	}
}

/*
 * Whether a slot in extent @ext may be pointed at from the SSD: its write
 * completed before the SSD flush of this commit (or of an earlier one).
 */
static bool extent_durable(struct flaz_cache *c, u32 ext)
{
	return !test_bit(ext, c->unflushed) && !test_bit(ext, c->failed);
}

/*
 * The superblock carrying the marks of @held writes did not reach the SSD, so
 * they may not go to the HDD yet: the saved state could serve older data for
 * their blocks after a restart. Void it first and go passthrough; if the SSD
 * takes no write at all, hold them and try again, up to ssd_hold_s.
 */
static void fail_closed(struct flaz_meta *m, struct bio_list *held)
{
	struct flaz_cache *c = m->c;
	unsigned long hold = flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S) * HZ;
	const char *name = dm_table_device_name(c->ti->table);

	if (!m->hold_since)
		WRITE_ONCE(m->hold_since, jiffies | 1);
	if (void_generation(m) && time_before(jiffies, m->hold_since + hold)) {
		flaz_intent_hold(c->intent, held);
		queue_delayed_work(c->wq.io, &m->retry, META_RETRY);
		return;
	}
	if (m->void_pending)
		DMERR("%s: the SSD took no write for %u s: writes go on without it, its cache is void until the module is unloaded",
		      name, flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S));
	else
		DMERR("%s: the SSD failed a write-intent mark: its cache is void", name);
	WRITE_ONCE(m->hold_since, 0);
	flaz_report_no_mark(c);
	flaz_cache_release_writes(c, held);
}

/* Make the bits of waiting writes durable, then let them go. */
static void mark(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	struct bio_list released = BIO_EMPTY_LIST;

	flaz_intent_snapshot(c->intent, false, false, m->bitmap, &released);
	flaz_stats_add(c->stats, FLAZ_STAT_MARKS, 1);
	if (write_sb(m, 0)) {
		fail_closed(m, &released);
		return;
	}
	WRITE_ONCE(m->hold_since, 0);
	flaz_intent_written(c->intent, m->bitmap);
	flaz_cache_release_writes(c, &released);
}

/* Encode table block @idx into @blk; returns whether an entry must wait for a later commit. */
static bool encode_table_block(struct flaz_meta *m, u64 idx, u8 *blk)
{
	struct flaz_cache *c = m->c;
	struct flaz_entry_info ei;
	bool again = false;
	struct flaz_entry e;
	u64 line;
	u32 i;

	for (i = 0; i < FLAZ_META_ENTRIES; i++) {
		line = idx * FLAZ_META_ENTRIES + i;
		m->entries[i] = 0;
		if (line >= c->geo->nr_lines)
			continue;
		memset(&ei, 0, sizeof(ei));
		flaz_l2p_lock(c->l2p, line);
		flaz_l2p_get(c->l2p, line, &e);
		/* under the lock: an eviction bumps the gen only after emptying the line */
		if (e.kind == FLAZ_ENTRY_SLOT)
			ei.gen = READ_ONCE(m->gens[e.ext]);
		flaz_l2p_unlock(c->l2p, line);
		ei.tag = e.tag;
		if (e.kind == FLAZ_ENTRY_ZERO) {
			ei.units = FLAZ_ENTRY_ZERO_UNITS;
		} else if (e.kind == FLAZ_ENTRY_SLOT) {
			/* not durable on the SSD yet: the next commit takes it */
			if (!extent_durable(c, e.ext)) {
				again = true;
				continue;
			}
			ei.units = e.bytes / FLAZ_SLOT_ALIGN;
			ei.off = e.off;
			ei.ext = e.ext;
			ei.cold = e.cold;
		}
		m->entries[i] = flaz_entry_pack(&ei);
	}
	flaz_meta_encode(blk, m->enc_gen, m->enc_commit, idx, m->entries);
	return again;
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
			set_bit(w->first + i, m->gen_dirty);
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
		.notify.fn = write_done_notify,
		.notify.context = w,
		.client = c->io,
	};
	bool ok = write_reap(w);
	u32 i;

	for (i = 0; i < n; i++) {
		if (gens)
			flaz_gen_encode(w->buf + i * FLAZ_BLOCK_SIZE, m->enc_gen, m->enc_commit,
					first + i, m->gens + (first + i) * FLAZ_GEN_ENTRIES);
		else if (encode_table_block(m, first + i, w->buf + i * FLAZ_BLOCK_SIZE))
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
 * Send the table blocks that changed (and with @sweep, those holding a void
 * entry), neighbours merged into runs of up to META_READ_BLOCKS, META_WRITES
 * runs in flight. Returns false if a write already known failed; writes_reap()
 * tells about the rest.
 */
static bool write_table(struct flaz_meta *m, bool sweep)
{
	u64 idx, first = 0, nr = flaz_l2p_nr_blocks(m->c->l2p);
	bool ok = true;
	u32 n = 0;

	for (idx = 0; idx < nr; idx++) {
		if (!(idx % 4096))
			cond_resched();
		if (!flaz_l2p_take_dirty(m->c->l2p, idx, sweep))
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

/* Send the gen blocks that changed, as write_table() does. */
static bool write_gens(struct flaz_meta *m)
{
	u64 idx, first = 0, nr = flaz_gen_blocks(m->c->geo);
	bool ok = true;
	u32 n = 0;

	for (idx = 0; idx < nr; idx++) {
		if (!test_and_clear_bit(idx, m->gen_dirty))
			continue;
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
	u32 evicted = flaz_alloc_nr_pending(c->alloc);
	/* after the count: the extents it covers had their gens bumped before */
	bool sweep = test_and_clear_bit(META_SWEEP, &m->flags);
	u64 start = ktime_get_ns();
	bool ok = true, age;
	u32 ext;

	lockdep_assert_held(&m->lock);
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
	/* no page comes in while its blocks are written: it would read the old ones */
	mutex_lock(&m->page_lock);
	if (ok && !write_table(m, sweep))
		ok = false;
	if (ok && !write_gens(m))
		ok = false;
	/* the superblock's PREFLUSH makes them durable before it */
	if (!writes_reap(m))
		ok = false;
	mutex_unlock(&m->page_lock);
	if (!ok && sweep)
		set_bit(META_SWEEP, &m->flags);

	mutex_lock(&m->sb_lock);
	/* a failed mark voided the generation: nothing of the old one goes into the new */
	if (m->sb.gen != m->enc_gen) {
		mutex_unlock(&m->sb_lock);
		if (sweep)
			set_bit(META_SWEEP, &m->flags);
		return;
	}
	if (clean && ok && hdd_fingerprint(m, &m->sb.hdd_fp))
		ok = false;
	if (ok)
		m->sb.commit++;
	flaz_intent_snapshot(c->intent, ok, clean && ok, m->bitmap, &released);
	if (write_sb(m, clean && ok ? FLAZ_SB_CLEAN : 0)) {
		if (!bio_list_empty(&released))
			fail_closed(m, &released);
		mutex_unlock(&m->sb_lock);
		return;
	}
	WRITE_ONCE(m->hold_since, 0);
	flaz_intent_written(c->intent, m->bitmap);
	mutex_unlock(&m->sb_lock);
	flaz_cache_release_writes(c, &released);
	if (ok) {
		flaz_stats_add(c->stats, FLAZ_STAT_COMMITS, 1);
		flaz_stats_add(c->stats, FLAZ_STAT_COMMIT_US,
			       div_u64(ktime_get_ns() - start, NSEC_PER_USEC));
		free_evicted(m, evicted);
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
		gap = flaz_cleaner_short(c->cleaner) ? 0 : META_COMMIT_HURRY;

	mutex_lock(&m->lock);
	if (flaz_mode_get(c) == FLAZ_MODE_PASSTHROUGH) {
		/* the SSD is out of use: nothing to commit */
		clear_bit(META_COMMIT, &m->flags);
	} else if (m->loading) {
		/* the table is not all in: the loader asks once it is */
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
	/* the loader keeps to the budget itself */
	if (!m->loading)
		trim(m, committed);
	mutex_unlock(&m->lock);
}

/*
 * Marks: writes waiting for their regions' bits. In passthrough nothing is
 * marked any more; a generation remembered as void still wants out.
 */
static void mark_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, mark_work);
	struct flaz_cache *c = m->c;
	struct bio_list released = BIO_EMPTY_LIST;

	mutex_lock(&m->sb_lock);
	if (flaz_mode_get(c) == FLAZ_MODE_PASSTHROUGH) {
		flaz_intent_snapshot(c->intent, false, false, m->bitmap, &released);
		WRITE_ONCE(m->hold_since, 0);
		if (m->void_pending)
			void_generation(m);
	} else if (flaz_intent_waiting(c->intent)) {
		mark(m);
	}
	mutex_unlock(&m->sb_lock);
	flaz_cache_release_writes(c, &released);
	/* while writes are held, the retry comes later */
	if (!READ_ONCE(m->hold_since) && flaz_intent_waiting(c->intent))
		queue_work(c->wq.io, &m->mark_work);
}

static void retry_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(to_delayed_work(work), struct flaz_meta, retry);

	queue_work(m->c->wq.io, &m->mark_work);
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
	    flaz_alloc_nr_pending(c->alloc) || test_bit(META_SWEEP, &m->flags))
		flaz_meta_kick(m);
	if (READ_ONCE(m->void_pending))
		queue_work(c->wq.io, &m->mark_work);
	if (READ_ONCE(m->running))
		queue_delayed_work(c->wq.io, &m->tick, META_PERIOD);
}

/* Ask for a commit soon (a FLUSH, evicted extents waiting). */
void flaz_meta_kick(struct flaz_meta *m)
{
	if (flaz_mode_get(m->c) == FLAZ_MODE_PASSTHROUGH)
		return;
	set_bit(META_COMMIT, &m->flags);
	queue_work(m->c->wq.io, &m->work);
}

/*
 * Extent @ext was evicted (its lines emptied): its next tenant gets a new
 * generation, so entries left on the SSD for this one are void. It is reused
 * only after a commit has written that (alloc.c: retired, freed by a commit).
 */
void flaz_meta_evict(struct flaz_meta *m, u32 ext)
{
	int wrapped;

	WRITE_ONCE(m->gens[ext], flaz_gen_next(m->gens[ext], &wrapped));
	/* the gen before its dirty bit: a commit that takes the bit writes this gen */
	smp_mb__before_atomic();
	if (wrapped)
		set_bit(META_SWEEP, &m->flags);
	set_bit(ext / FLAZ_GEN_ENTRIES, m->gen_dirty);
	/* both before the extent is retired, which a commit counts before taking them */
	smp_mb__after_atomic();
}

/* A write is waiting for its regions' bits (unless writes are held: a retry is due). */
void flaz_meta_mark(struct flaz_meta *m)
{
	if (!READ_ONCE(m->hold_since))
		queue_work(m->c->wq.io, &m->mark_work);
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
		mark(m);
	if (!r)
		m->loaded = true;
	mutex_unlock(&m->sb_lock);
	if (m->loading) {
		WRITE_ONCE(m->load_stop, false);
		queue_work(c->wq.io, &m->load_work);
	} else {
		/* nothing to load: no write needs a tombstone */
		flaz_l2p_tombs_end(c->l2p);
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
	/* the loader goes on at resume; until it is done, the SSD keeps the unclean state */
	WRITE_ONCE(m->load_stop, true);
	cancel_work_sync(&m->load_work);
	flush_work(&m->mark_work);
	flush_work(&m->work);
	mutex_lock(&m->lock);
	clear_bit(META_COMMIT, &m->flags);
	if (m->loading) {
		DMINFO("%s: suspended before its table was read: left unclean",
		       dm_table_device_name(c->ti->table));
	} else if (m->loaded && flaz_mode_get(c) != FLAZ_MODE_PASSTHROUGH) {
		commit(m, true);
	} else if (m->void_pending) {
		mutex_lock(&m->sb_lock);
		void_generation(m);
		mutex_unlock(&m->sb_lock);
	}
	mutex_unlock(&m->lock);
}

/*
 * The cache was emptied (passthrough, or back from it): give the SSD a new,
 * empty generation so nothing on it can be loaded again.
 */
int flaz_meta_reformat(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	int r;

	mutex_lock(&m->lock);
	mutex_lock(&m->sb_lock);
	r = void_generation(m);
	mutex_unlock(&m->sb_lock);
	if (!r)
		free_evicted(m, flaz_alloc_nr_pending(c->alloc));
	mutex_unlock(&m->lock);
	return r;
}

/* DRAM the metadata context takes for @nr_extents extents (meta_create's allocations). */
u64 flaz_meta_bytes(u64 nr_extents)
{
	u64 gen_blocks = DIV_ROUND_UP_ULL(nr_extents, FLAZ_GEN_ENTRIES);

	return sizeof(struct flaz_meta) + (1 + META_WRITES) * META_READ_BLOCKS * FLAZ_BLOCK_SIZE +
	       FLAZ_L2P_PAGE_BLOCKS * FLAZ_BLOCK_SIZE +
	       FLAZ_BLOCK_SIZE + FLAZ_SB_BITMAP_BYTES + FLAZ_META_ENTRIES * sizeof(u64) +
	       2 * META_FREE_BATCH * sizeof(u32) + BITS_TO_LONGS(nr_extents) * sizeof(long) +
	       gen_blocks * FLAZ_GEN_ENTRIES + BITS_TO_LONGS(gen_blocks) * sizeof(long);
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
	mutex_init(&m->lock);
	mutex_init(&m->page_lock);
	mutex_init(&m->sb_lock);
	INIT_WORK(&m->work, meta_work);
	INIT_WORK(&m->mark_work, mark_work);
	INIT_WORK(&m->load_work, load_work);
	INIT_DELAYED_WORK(&m->tick, tick_work);
	INIT_DELAYED_WORK(&m->retry, retry_work);
	INIT_DELAYED_WORK(&m->later, later_work);
	m->last_commit = jiffies - META_COMMIT_GAP;
	m->buf = vmalloc(META_READ_BLOCKS * FLAZ_BLOCK_SIZE);
	m->page_buf = vmalloc(FLAZ_L2P_PAGE_BLOCKS * FLAZ_BLOCK_SIZE);
	m->bitmap = kzalloc(FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	m->entries = kcalloc(FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	m->freed = kcalloc(META_FREE_BATCH, sizeof(u32), GFP_KERNEL);
	m->runs = kcalloc(META_FREE_BATCH, sizeof(u32), GFP_KERNEL);
	m->used = bitmap_zalloc(c->geo->nr_extents, GFP_KERNEL);
	/* whole gen blocks: encoded and decoded in place */
	m->gens = kvzalloc(flaz_gen_blocks(c->geo) * FLAZ_GEN_ENTRIES, GFP_KERNEL);
	m->gen_dirty = bitmap_zalloc(flaz_gen_blocks(c->geo), GFP_KERNEL);
	m->sb_buf = kmalloc(FLAZ_BLOCK_SIZE, GFP_KERNEL);
	for (i = 0; i < META_WRITES; i++) {
		m->writes[i].m = m;
		init_completion(&m->writes[i].done);
		m->writes[i].buf = vmalloc(META_READ_BLOCKS * FLAZ_BLOCK_SIZE);
		if (!m->writes[i].buf)
			nomem = true;
	}
	if (nomem || !m->buf || !m->page_buf || !m->bitmap || !m->entries || !m->freed || !m->runs ||
	    !m->used || !m->gens || !m->gen_dirty || !m->sb_buf) {
		*error = "Cannot allocate the metadata buffers";
		r = -ENOMEM;
		goto bad;
	}
	r = check_sb(m, cold, error);
	if (r)
		goto bad;
	return m;

bad:
	flaz_meta_destroy(m);
	return ERR_PTR(r);
}

/* After flaz_meta_suspend(), or before any use; before the work queues go. */
void flaz_meta_destroy(struct flaz_meta *m)
{
	u32 i;

	if (IS_ERR_OR_NULL(m))
		return;
	cancel_delayed_work_sync(&m->tick);
	cancel_delayed_work_sync(&m->retry);
	cancel_delayed_work_sync(&m->later);
	cancel_work_sync(&m->work);
	cancel_work_sync(&m->mark_work);
	cancel_work_sync(&m->load_work);
	for (i = 0; i < META_WRITES; i++)
		vfree(m->writes[i].buf);
	kfree(m->sb_buf);
	bitmap_free(m->gen_dirty);
	kvfree(m->gens);
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

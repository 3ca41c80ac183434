// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz superblock: its two copies, the format's generation (a new one voids
 * everything saved), the write-intent marks it carries, and failing closed.
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
#include <linux/list.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "meta.h"
#include "opts.h"

/* Messages too long to share a line with code, each kept whole for grep */
#define SB_OTHER_SSD_SIZE \
	"SSD superblock is for another volume: SSD size differs (give 'cold' to start empty)"
#define SB_OTHER_EXTENT_KIB \
	"SSD superblock is for another volume: extent_kib differs (give 'cold' to start empty)"
#define SB_OTHER_OVERBOOK \
	"SSD superblock is for another volume: overbook differs (give 'cold' to start empty)"
#define SB_OTHER_CODEC \
	"SSD superblock is for another volume: compressor differs (give 'cold' to start empty)"
#define SB_OTHER_COLD_CODEC \
	"SSD superblock is for another volume: cold_compressor differs (give 'cold' to start empty)"
#define SB_OLD_FORMAT \
	"SSD superblock is of another flaz format version (give 'cold' to start empty)"
#define SB_NOT_FLAZ \
	"SSD holds no flaz superblock and is not blank (give 'cold' to overwrite it)"
#define SB_OTHER_HDD \
	"SSD caches another HDD: its first block differs (give 'cold' to start empty)"
#define SB_CANNOT_REMEMBER \
	"%s: cannot remember that the SSD's cache is void: give 'cold' when creating the volume again"
#define SB_UNREADABLE \
	"%s: the SSD (%u:%u) could not be read: its cache is void from now on, on that device number; give 'cold' if it comes back under another"
#define SB_NO_WRITE \
	"%s: the SSD took no write for %u s: writes go on without it, its cache is void until the module is unloaded"

/* A synchronous read or write of @buf (kmalloc'ed or vmalloc'ed) at @sector of @bdev. */
int meta_io(struct flaz_cache *c, struct block_device *bdev, blk_opf_t opf,
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

/*
 * Tests only: a new format starts every extent at this generation (capped below
 * the last), so the last generation is reached after a few evictions.
 */
static unsigned short debug_gen_start;
module_param(debug_gen_start, ushort, 0644);
MODULE_PARM_DESC(debug_gen_start, "tests only: the generation new formats start extents at");

/*
 * Generations that must not be loaded again: writes reached the HDD while the
 * SSD took neither their marks nor a new generation. Kept in memory until a new
 * generation lands on that SSD, so the fact lasts across table reloads and
 * re-creations, and is lost only with the module (docs/design.md "Persistence and crashes").
 * An entry of gen 0 is the device's: a superblock copy of it could not be read,
 * so whatever generation it holds is void.
 */
struct void_gen {
	struct list_head list;
	u8 uuid[16];
	u64 gen;
	dev_t dev;
};

static LIST_HEAD(void_gens);
static DEFINE_MUTEX(void_gens_lock);

static struct void_gen *void_gen_find(const u8 *uuid, u64 gen, dev_t dev)
{
	struct void_gen *v;

	lockdep_assert_held(&void_gens_lock);
	list_for_each_entry(v, &void_gens, list)
		if (v->gen == gen &&
		    (gen ? !memcmp(v->uuid, uuid, sizeof(v->uuid)) : v->dev == dev))
			return v;
	return NULL;
}

/* Whether the generation (@uuid, @gen) is void; with @gen 0, whatever the SSD @dev holds. */
bool meta_void_gen_known(const u8 *uuid, u64 gen, dev_t dev)
{
	bool known;

	mutex_lock(&void_gens_lock);
	known = void_gen_find(uuid, gen, dev);
	mutex_unlock(&void_gens_lock);
	return known;
}

/* @uuid is NULL for the device's entry (gen 0). Returns false when there is no memory. */
static bool void_gen_add(const u8 *uuid, u64 gen, dev_t dev)
{
	struct void_gen *v = kzalloc(sizeof(*v), GFP_NOIO);

	if (!v)
		return false;
	if (uuid)
		memcpy(v->uuid, uuid, sizeof(v->uuid));
	v->gen = gen;
	v->dev = dev;
	mutex_lock(&void_gens_lock);
	/* once is enough: one deletion must forget it */
	if (void_gen_find(uuid, gen, dev))
		kfree(v);
	else
		list_add(&v->list, &void_gens);
	mutex_unlock(&void_gens_lock);
	return true;
}

static void void_gen_del(const u8 *uuid, u64 gen, dev_t dev)
{
	struct void_gen *v;

	mutex_lock(&void_gens_lock);
	v = void_gen_find(uuid, gen, dev);
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

/*
 * crc32c of the HDD's first block: tells another HDD of the same size apart.
 * Read into the superblock buffer, which no one else uses outside sb_lock (or
 * before the volume runs).
 */
int meta_hdd_fingerprint(struct flaz_meta *m, u32 *fp)
{
	int r;

	if (!meta_sb_idle(m))
		return -EBUSY;
	r = meta_io(m->c, m->c->hdd, REQ_OP_READ, 0, FLAZ_BLOCK_SECTORS, m->sb_buf);
	if (!r)
		*fp = flaz_crc32c(~0U, m->sb_buf, FLAZ_BLOCK_SIZE);
	return r;
}

/*
 * Read both superblock copies into *sb (the current one) and m->bitmap; *max_seq
 * is the highest superblock seq, m->max_next_seq the highest slot seq seen.
 */
int meta_read_sb(struct flaz_meta *m, struct flaz_sb_info *sb, enum sb_state *state,
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

/*
 * Why the superblock @sb cannot serve this table line, or NULL. A volume of
 * another length can be this one resized: load() settles it (meta_resize()).
 */
const char *meta_mismatch(struct flaz_meta *m, const struct flaz_sb_info *sb)
{
	struct flaz_cache *c = m->c;

	if (sb->geo.ssd_sectors != c->geo->ssd_sectors)
		return SB_OTHER_SSD_SIZE;
	if (sb->extent_kib != c->opts->val[FLAZ_OPT_EXTENT_KIB])
		return SB_OTHER_EXTENT_KIB;
	if (sb->overbook != c->opts->val[FLAZ_OPT_OVERBOOK])
		return SB_OTHER_OVERBOOK;
	if (sb->codec != c->codec)
		return SB_OTHER_CODEC;
	if (sb->cold_codec != c->cold_codec)
		return SB_OTHER_COLD_CODEC;
	return NULL;
}

/*
 * The volume's length differs from the superblock's (an lvextend or lvreduce
 * under it, then a reload): why the saved cache cannot stay, or NULL when it
 * stays, m->sb set to the new length. Grown after a clean stop on the same HDD
 * it stays: every saved block lies below the old end, and no region is marked,
 * so the new regions start unmarked. Shrunk, it goes: a line past the new end
 * would serve what the HDD held there before, were the volume grown back (the
 * table keeps 4 bits of a tag, so such lines are not told apart cheaply).
 * After a crash, neither the marks' regions nor the HDD are known. A shrink
 * made while the volume was stopped and grown back before it ran again is
 * not seen: that is writing the HDD behind its back ('cold').
 */
const char *meta_resize(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u32 fp;

	if (m->sb.hdd_sectors > c->ti->len)
		return "it shrank";
	if (!(m->sb.flags & FLAZ_SB_CLEAN) || memchr_inv(m->bitmap, 0, FLAZ_SB_BITMAP_BYTES))
		return "it was not stopped cleanly (a crash, or a reload during recovery)";
	if (meta_hdd_fingerprint(m, &fp) || fp != m->sb.hdd_fp)
		return "the HDD's first block differs or cannot be read";
	m->sb.hdd_sectors = c->ti->len;
	m->sb.region_shift = flaz_intent_shift(c->intent);
	m->sb.nr_regions = flaz_intent_nr(c->intent);
	return NULL;
}

/*
 * Whether the SSD can be used as it is (or is blank); *error says why not. Reads
 * only: a table reload runs this while the old instance still writes. An SSD
 * that cannot be read or written is no reason to refuse: the volume starts in
 * passthrough (load()).
 */
int meta_check_sb(struct flaz_meta *m, bool cold, char **error)
{
	struct flaz_sb_info sb;
	enum sb_state state;
	u64 max_seq;
	u32 fp;
	int r;

	r = meta_read_sb(m, &sb, &state, &max_seq);
	if (r)
		return 0;
	if (cold || state == SB_BLANK)
		return 0;
	if (state == SB_CORRUPT) {
		*error = "SSD superblock is corrupt (give 'cold' to start empty)";
		return -EINVAL;
	}
	if (state == SB_OLD) {
		*error = SB_OLD_FORMAT;
		return -EINVAL;
	}
	if (state == SB_FOREIGN) {
		*error = SB_NOT_FLAZ;
		return -EINVAL;
	}
	/* void: load() starts empty, whatever the HDD holds now */
	if (meta_void_gen_known(sb.uuid, sb.gen, 0))
		return 0;
	*error = (char *)meta_mismatch(m, &sb);
	if (*error)
		return -EINVAL;
	/* so is whatever a device that could not be read holds, if it is this volume's */
	if (meta_void_gen_known(NULL, 0, m->c->ssd->bd_dev))
		return 0;
	/* After a clean stop the HDD's first block is known; after a crash it is not. */
	if (sb.flags & FLAZ_SB_CLEAN) {
		r = meta_hdd_fingerprint(m, &fp);
		if (r) {
			*error = "Cannot read the HDD";
			return r;
		}
		if (fp != sb.hdd_fp) {
			*error = SB_OTHER_HDD;
			return -EINVAL;
		}
	}
	return 0;
}

/* Write the next superblock copy from m->sb and m->bitmap, durably. */
FLAZ_IO_NOTIFY(sb_written)
{
	struct flaz_meta *m = context;

	m->sb_error = error ? -EIO : 0;
	complete(&m->sb_done);
}

/*
 * Whether the superblock buffer is free: a write that outlived ssd_hold_s (a
 * hung SSD) owns it until it ends. sb_lock held, or before the volume runs.
 */
bool meta_sb_idle(struct flaz_meta *m)
{
	if (m->sb_out && !completion_done(&m->sb_done))
		return false;
	m->sb_out = false;
	return true;
}

/*
 * Write the superblock (the copy its seq picks), durable with what came before
 * it. A hung SSD is bounded like a failing one: after ssd_hold_s the write is
 * given up for failed (-ETIMEDOUT), and superblock writes fail (-EBUSY) until
 * it ends, so marks fail closed (meta_fail_closed()) rather than wait forever.
 */
int meta_write_sb(struct flaz_meta *m, u32 flags)
{
	struct flaz_cache *c = m->c;
	struct dm_io_region where = {
		.bdev = c->ssd,
		.count = FLAZ_BLOCK_SECTORS,
	};
	struct dm_io_request req = {
		.bi_opf = REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA,
		.mem.type = DM_IO_KMEM,
		.mem.ptr.addr = m->sb_buf,
		.notify.fn = FLAZ_NOTIFY(sb_written),
		.notify.context = m,
		.client = c->io,
	};
	unsigned long hold = flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S) * HZ;

	lockdep_assert_held(&m->sb_lock);
	if (!meta_sb_idle(m))
		return -EBUSY;
	m->sb.seq++;
	m->sb.flags = flags;
	/*
	 * A clean superblock comes after the last slot, and a non-clean one is
	 * written before the next: only a run that may still write slots leases
	 * seqs, so activations do not push the seq ever further past the clock.
	 */
	m->sb.next_seq = atomic64_read(&c->seq) + 1 +
			 (flags & FLAZ_SB_CLEAN ? 0 : META_SEQ_LEASE);
	if (!(flags & FLAZ_SB_CLEAN)) {
		m->sb.order_first = 0;
		m->sb.order_extents = 0;
	}
	flaz_sb_encode(m->sb_buf, &m->sb, m->bitmap);
	/* a saved order is named by this superblock only (meta_order_save()) */
	m->sb.order_first = 0;
	m->sb.order_extents = 0;
	flaz_stats_add(c->stats, FLAZ_STAT_META_BYTES, FLAZ_BLOCK_SIZE);
	where.sector = (m->sb.seq % FLAZ_SB_COPIES) * FLAZ_BLOCK_SECTORS;
	reinit_completion(&m->sb_done);
	m->sb_out = true;
	m->sb_sent = jiffies;
	/* the notify function runs on a failure to send too */
	flaz_dm_io(&req, &where);
	if (!wait_for_completion_timeout(&m->sb_done, hold)) {
		DMERR_LIMIT("%s: the SSD took more than %u s to write a superblock",
			    dm_table_device_name(c->ti->table),
			    flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S));
		meta_error(c);
		return -ETIMEDOUT;
	}
	m->sb_out = false;
	if (m->sb_error)
		meta_error(c);
	return m->sb_error;
}

/*
 * Start an empty cache of a new generation: the table blocks on the SSD become
 * void, whatever they hold. Both copies are written, so an older copy with a
 * higher seq cannot come back.
 */
int meta_format(struct flaz_meta *m, u64 max_seq)
{
	struct flaz_cache *c = m->c;
	struct flaz_sb_info *sb = &m->sb;
	u32 copy;
	int r = 0;

	if (!meta_sb_idle(m))
		return -EBUSY;
	/*
	 * c->seq goes on rising across generations from where load() set it,
	 * past the superblocks' leases and the clock, so a slot left by an earlier one is
	 * never taken for a newer tenant of its extent. It is not raised here: a
	 * jump would break the openings' 32-bit ages (tenant.c).
	 */
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
	/*
	 * No HDD fingerprint: only a clean superblock's counts, and commit()
	 * takes it then. Reading it here could fail after m->sb was replaced,
	 * leaving the new generation in DRAM with the old one's generations.
	 */
	memset(m->bitmap, 0, FLAZ_SB_BITMAP_BYTES);
	flaz_intent_load(c->intent, m->bitmap);
	/*
	 * Nothing on the SSD counts now. At activation every extent starts free;
	 * later (passthrough) generations go on from where they are, so no entry
	 * in DRAM comes back to life, and all are written into the new format.
	 */
	if (!m->loaded)
		flaz_l2p_reset_gens(c->l2p, debug_gen_start);
	else
		flaz_l2p_forget_ssd(c->l2p);
	for (copy = 0; copy < FLAZ_SB_COPIES && !r; copy++)
		r = meta_write_sb(m, 0);
	/* whatever the SSD held before is gone */
	if (!r)
		void_gen_del(NULL, 0, c->ssd->bd_dev);
	return r;
}

/*
 * Remember the generation on the SSD (@uuid, @gen) as void until a new one
 * lands; @uuid NULL and @gen 0: whichever generation the SSD holds.
 */
void meta_remember_void(struct flaz_meta *m, const u8 *uuid, u64 gen)
{
	if (m->void_pending)
		return;
	memset(m->void_uuid, 0, sizeof(m->void_uuid));
	if (uuid)
		memcpy(m->void_uuid, uuid, sizeof(m->void_uuid));
	m->void_gen = gen;
	m->void_pending = true;
	if (!void_gen_add(uuid, gen, m->c->ssd->bd_dev))
		DMERR(SB_CANNOT_REMEMBER, dm_table_device_name(m->c->ti->table));
	else if (!uuid)
		DMERR(SB_UNREADABLE, dm_table_device_name(m->c->ti->table),
		      MAJOR(m->c->ssd->bd_dev), MINOR(m->c->ssd->bd_dev));
}

/*
 * Replace the saved state by a new, empty generation. Until that is on the SSD,
 * the generation it replaces is remembered as void (void_gens).
 */
int meta_void_generation(struct flaz_meta *m)
{
	u64 gen = m->sb.gen;
	u8 uuid[16];
	int r;

	memcpy(uuid, m->sb.uuid, sizeof(uuid));
	/* the block layer would let the writes through with a warning */
	r = bdev_read_only(m->c->ssd) ? -EROFS : meta_format(m, m->sb.seq);
	if (!r) {
		if (m->void_pending)
			void_gen_del(m->void_uuid, m->void_gen, m->c->ssd->bd_dev);
		m->void_pending = false;
		return 0;
	}
	/* meta_format() replaced m->sb: remember the one that is on the SSD */
	meta_remember_void(m, uuid, gen);
	return r;
}

/*
 * The SSD cannot be used at activation: the volume starts in passthrough (once
 * flaz_meta_resume() has let go of m->lock, which a mode change takes inside the
 * mode lock), and the state on it (if any could be read) is void, since writes
 * will now reach the HDD unmarked; a new generation replaces it once the SSD
 * takes writes.
 */
int meta_load_unusable(struct flaz_meta *m, enum sb_state state, enum flaz_why why)
{
	if (state == SB_OK)
		meta_remember_void(m, m->sb.uuid, m->sb.gen);
	m->start_why = why;
	return 0;
}

/*
 * The superblock carrying the marks of @held writes did not reach the SSD, so
 * they may not go to the HDD yet: the saved state could serve older data for
 * their blocks after a restart. Void it first and go passthrough; if the SSD
 * takes no write at all, hold them and try again, up to ssd_hold_s.
 */
void meta_fail_closed(struct flaz_meta *m, struct bio_list *held)
{
	struct flaz_cache *c = m->c;
	unsigned long hold = flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S) * HZ;
	const char *name = dm_table_device_name(c->ti->table);

	/* a hung superblock write counts from when it was sent */
	if (!m->hold_since)
		WRITE_ONCE(m->hold_since, (m->sb_out ? m->sb_sent : jiffies) | 1);
	if (meta_void_generation(m) && time_before(jiffies, m->hold_since + hold)) {
		flaz_intent_hold(c->intent, held);
		queue_delayed_work(c->wq.io, &m->retry, META_RETRY);
		return;
	}
	if (m->void_pending)
		DMERR_LIMIT(SB_NO_WRITE, name, flaz_opt_get(c->opts, FLAZ_OPT_SSD_HOLD_S));
	else
		DMERR_LIMIT("%s: the SSD failed a write-intent mark: its cache is void", name);
	WRITE_ONCE(m->hold_since, 0);
	flaz_report_no_mark(c);
	c->ev->release_writes(c, held);
}

/* Make the bits of waiting writes durable, then let them go. */
void meta_mark(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	struct bio_list released = BIO_EMPTY_LIST;

	flaz_intent_snapshot(c->intent, false, false, m->bitmap, &released);
	flaz_stats_add(c->stats, FLAZ_STAT_MARKS, 1);
	if (meta_write_sb(m, 0)) {
		meta_fail_closed(m, &released);
		return;
	}
	WRITE_ONCE(m->hold_since, 0);
	flaz_intent_written(c->intent, m->bitmap);
	c->ev->release_writes(c, &released);
}

/*
 * Marks: writes waiting for their regions' bits. In passthrough nothing is
 * marked any more; a generation remembered as void still wants out.
 */
void meta_mark_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(work, struct flaz_meta, mark_work);
	struct flaz_cache *c = m->c;
	struct bio_list released = BIO_EMPTY_LIST;

	mutex_lock(&m->sb_lock);
	if (flaz_mode_get(c) == FLAZ_MODE_PASSTHROUGH) {
		flaz_intent_snapshot(c->intent, false, false, m->bitmap, &released);
		WRITE_ONCE(m->hold_since, 0);
		if (m->void_pending)
			meta_void_generation(m);
	} else if (flaz_intent_waiting(c->intent)) {
		meta_mark(m);
	}
	mutex_unlock(&m->sb_lock);
	c->ev->release_writes(c, &released);
	/* while writes are held, the retry comes later */
	if (!READ_ONCE(m->hold_since) && flaz_intent_waiting(c->intent))
		queue_work(c->wq.io, &m->mark_work);
}

void meta_retry_work(struct work_struct *work)
{
	struct flaz_meta *m = container_of(to_delayed_work(work), struct flaz_meta, retry);

	queue_work(m->c->wq.io, &m->mark_work);
}

/* A write is waiting for its regions' bits (unless writes are held: a retry is due). */
void flaz_meta_mark(struct flaz_meta *m)
{
	if (!READ_ONCE(m->hold_since))
		queue_work(m->c->wq.io, &m->mark_work);
}

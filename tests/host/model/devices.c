// SPDX-License-Identifier: GPL-2.0
/*
 * The model test's world below the metadata: what the kernel and the module's
 * other files would do for meta.c, sb.c, order.c and paging.c, and the two
 * devices.
 * Each device has a volatile write cache: the SSD's metadata blocks read as
 * last written and are durable only after a FLUSH (or written FUA); the HDD's
 * blocks (a version each) likewise. The SSD fails a metadata write or read,
 * or a FLUSH, now and then; the HDD a FLUSH or a read of its first block.
 * While an I/O or FLUSH is in flight other work runs (model.c's meanwhile()),
 * and the power may go: a cut keeps any subset of what was not durable on
 * either device. What reaches the SSD is checked against meta.c's rules as it
 * is written (check_table_write(), check_sb_write()).
 */
#include "model.h"

struct block_device ssd_dev = { .bd_dev = 0x800010 }, hdd_dev = { .bd_dev = 0x800020 };
static u8 *ssd_cur, *ssd_dur;	/* the SSD's metadata area */
static u8 *ssd_old;		/* each block as it was before its last write */
static unsigned long *ssd_pending;
static u64 ssd_meta_blocks;
static u64 dur_changes = 1;	/* bumped whenever what the SSD holds durably changes */
static u64 entries[FLAZ_META_ENTRIES];
/*
 * A power cut taken part way through work (a commit, a mark, a page-in): the
 * devices' state as it would stay is taken at an I/O, the work goes on, and
 * the volume is thrown away after the step.
 */
static bool cut_armed, cut_taken;
static u64 cut_armed_at;
static u8 *cut_ssd;
static struct { struct mslot s[MAX_SLOTS]; u32 n; } *cut_ext;
static u32 *cut_ver;
/*
 * The data area's bytes, for what meta.c writes there: the reclaim order a
 * clean stop saves in free extents (order.c). A fill's extent write (model.c)
 * overwrites its extent's bytes.
 */
static u8 *ord_cur, *ord_dur, *cut_ord;
static unsigned long *ord_pending;
static u32 ext_bytes;
bool order_back;		/* order.c said the saved order came back */
bool order_saved;		/* order.c said a clean stop's order is saved */
bool order_in_part;		/* order.c said the saved order came back in part */

/* What the module's other files and the kernel would do. */
void model_log(const char *level, const char *fmt, ...)
{
	(void)level;
	if (strstr(fmt, "reclaim order of the last stop is back"))
		order_back = true;
	if (strstr(fmt, "reclaim order is saved"))
		order_saved = true;
	if (strstr(fmt, "reclaim order of the last stop was read in part"))
		order_in_part = true;
}

u64 get_random_u64(void)
{
	return rnd();
}

u64 ktime_get_ns(void)
{
	return (u64)jiffies * 1000000;
}

enum flaz_mode flaz_mode_get(struct flaz_cache *cc)
{
	return cc->mode;
}

void flaz_stats_add(struct flaz_stats *s, enum flaz_stat stat, u64 n)
{
	(void)s;
	if (stat == FLAZ_STAT_COMMITS)
		commits_done += n;
	if (stat == FLAZ_STAT_MARKS)
		stats[S_MARK] += n;
	if (stat == FLAZ_STAT_HDD_ERRORS)
		stats[S_HDD_ERROR] += n;
}

/*
 * The SSD fails a write or read of table or gen blocks, or a FLUSH, now and
 * then, and a superblock write more rarely (each sends the volume to
 * passthrough), and a superblock read as rarely (the activation goes
 * passthrough, and the next one starts empty); the HDD fails a read now and
 * then, a FLUSH more often.
 */
static bool ssd_fails(void)
{
	return !below(500);
}

/* one in four while leaving passthrough: a rare flush, whose failure must keep it there */
static bool hdd_flush_fails(void)
{
	return !below(leaving_passthrough ? 4 : 50);
}

static bool hdd_read_fails(void)
{
	return !below(500);
}

static bool sb_fails(void)
{
	return !below(1000);
}

/* A metadata I/O from SSD block @first: a superblock's fails more rarely. */
static bool meta_io_fails(u64 first)
{
	return first >= FLAZ_SB_COPIES ? ssd_fails() : sb_fails();
}

void flaz_report_fault(struct flaz_cache *cc, enum flaz_stat stat)
{
	(void)cc;
	if (stat != FLAZ_STAT_META_ERRORS)
		fail("a fault, stat", stat);
	stats[S_FAULT]++;
}

/* mode.c: the mode's work (model.c) takes the volume to passthrough */
void flaz_report_no_mark(struct flaz_cache *cc)
{
	cc->ssd_failed = true;
}

/* mode.c: at activation, passthrough at once, whatever was loaded dropped */
void flaz_report_unusable(struct flaz_cache *cc, enum flaz_why why)
{
	cc->why = why;
	cc->mode = FLAZ_MODE_PASSTHROUGH;
	cc->ev->invalidate(cc);
	stats[S_PASSTHROUGH]++;
}

/* no reads of slots are in flight in the model */
void flaz_hit_drain(struct flaz_cache *cc)
{
	(void)cc;
}

/* Metadata block @i as last written is durable. */
static void ssd_settle(u64 i)
{
	memcpy(ssd_dur + i * FLAZ_BLOCK_SIZE, ssd_cur + i * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);
	clear_bit(i, ssd_pending);
	dur_changes++;
}

/* A FLUSH of the SSD: every write so far is durable; an open extent is in DRAM (xbuf.c). */
static void ssd_flush(void)
{
	u64 i;

	for_each_set_bit(i, ssd_pending, ssd_meta_blocks)
		ssd_settle(i);
	for_each_set_bit(i, ord_pending, g.nr_extents)
		memcpy(ord_dur + i * ext_bytes, ord_cur + i * ext_bytes, ext_bytes);
	bitmap_zero(ord_pending, g.nr_extents);
	for (i = 0; i < g.nr_extents; i++)
		if (ext[i].pending && ext[i].sealed) {
			memcpy(ext[i].dur, ext[i].cur, sizeof(ext[i].cur));
			ext[i].ndur = ext[i].ncur;
			ext[i].pending = false;
		}
}

/* A FLUSH of the HDD; one that fails (@some) may have written any part of its cache. */
static void hdd_flush_some(bool some)
{
	u64 b;

	for_each_set_bit(b, hdd_dirty, hdd_blocks) {
		if (some && below(2))
			continue;
		ver_dur[b] = ver[b];
		clear_bit(b, hdd_dirty);
	}
}

void hdd_flush(void)
{
	hdd_flush_some(false);
}

/* What a power cut now leaves: of what was not durable on either device, any subset. */
static void take_cut(void)
{
	u64 i;

	memcpy(cut_ssd, ssd_dur, ssd_meta_blocks * FLAZ_BLOCK_SIZE);
	for_each_set_bit(i, ssd_pending, ssd_meta_blocks)
		if (below(2))
			memcpy(cut_ssd + i * FLAZ_BLOCK_SIZE, ssd_cur + i * FLAZ_BLOCK_SIZE,
			       FLAZ_BLOCK_SIZE);
	memcpy(cut_ord, ord_dur, (u64)g.nr_extents * ext_bytes);
	for_each_set_bit(i, ord_pending, g.nr_extents)
		if (below(2))
			memcpy(cut_ord + i * ext_bytes, ord_cur + i * ext_bytes, ext_bytes);
	for (i = 0; i < g.nr_extents; i++) {
		bool cur = ext[i].pending && ext[i].sealed && below(2);

		cut_ext[i].n = cur ? ext[i].ncur : ext[i].ndur;
		memcpy(cut_ext[i].s, cur ? ext[i].cur : ext[i].dur, cut_ext[i].n * sizeof(struct mslot));
	}
	memcpy(cut_ver, ver_dur, hdd_blocks * sizeof(*cut_ver));
	for_each_set_bit(i, hdd_dirty, hdd_blocks)
		if (below(2))
			cut_ver[i] = ver[i];
	/* a write in flight may have reached the disk: data no slot holds */
	for (i = 0; i < nr_inflight; i++)
		if (below(2))
			cut_ver[inflight[i]->block] = new_version();
	cut_taken = true;
	cut_armed = false;
}

/* Before an I/O or a FLUSH: perhaps the power goes, perhaps other work runs. */
static void in_flight(void)
{
	if (cut_armed && !below(4))
		take_cut();
	meanwhile();
}

/*
 * A FLUSH covers what completed before it was sent: other work runs before it
 * reaches the device or after it is done. Returns the flush's error.
 */
static int flush(struct block_device *bdev)
{
	bool after = below(2);

	if (!after)
		in_flight();
	if (bdev == &ssd_dev && ssd_fails())
		return -EIO;
	if (bdev == &hdd_dev && hdd_flush_fails()) {
		hdd_flush_some(true);
		return -EIO;
	}
	if (bdev == &ssd_dev)
		ssd_flush();
	else
		hdd_flush();
	if (after)
		in_flight();
	return 0;
}

int blkdev_issue_flush(struct block_device *bdev)
{
	return flush(bdev);
}

/*
 * Extent @e's generation as the SSD's gen blocks hold it durably (0 before
 * any), decoded again only when what is durable changed.
 */
u16 durable_gen(u32 e, u64 gen)
{
	static struct { u64 changes, gen; } *seen;
	static u16 *gens;
	u64 idx = e / FLAZ_GEN_ENTRIES, commit;
	int r;

	if (!seen) {
		seen = calloc(flaz_gen_blocks(&g), sizeof(*seen));
		gens = calloc(flaz_gen_blocks(&g), FLAZ_GEN_ENTRIES * sizeof(*gens));
	}
	if (seen[idx].changes != dur_changes || seen[idx].gen != gen) {
		r = flaz_gen_decode(ssd_dur + (g.gen_start / FLAZ_BLOCK_SECTORS + idx) *
				    FLAZ_BLOCK_SIZE, gen, idx, &commit,
				    gens + idx * FLAZ_GEN_ENTRIES);
		if (r == -ENODATA)
			memset(gens + idx * FLAZ_GEN_ENTRIES, 0, FLAZ_GEN_ENTRIES * sizeof(*gens));
		else if (r)
			fail("a damaged gen block:", idx);
		seen[idx].changes = dur_changes;
		seen[idx].gen = gen;
	}
	return gens[e];
}

/* The newest superblock the SSD holds durably (zeros if none). */
static const u8 *durable_sb(void)
{
	static u8 sb[FLAZ_BLOCK_SIZE];
	static u64 seen;
	struct flaz_sb_info info;
	u64 best = 0;
	u32 copy;

	if (seen != dur_changes) {
		memset(sb, 0, sizeof(sb));
		for (copy = 0; copy < FLAZ_SB_COPIES; copy++)
			if (!flaz_sb_decode(ssd_dur + copy * FLAZ_BLOCK_SIZE, &info) &&
			    info.seq >= best) {
				best = info.seq;
				memcpy(sb, ssd_dur + copy * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);
			}
		seen = dur_changes;
	}
	return sb;
}

/*
 * Whether evicted extent @e may be free: its generation now is durable in the
 * SSD's generation, or that generation has committed no table yet.
 */
bool durable_free(u32 e)
{
	struct flaz_sb_info info;

	if (flaz_sb_decode(durable_sb(), &info) || !info.commit)
		return true;
	return durable_gen(e, info.gen) >= flaz_l2p_gen(c.l2p, e);
}

/* Whether HDD block @b's region is marked in the newest superblock the SSD holds durably. */
bool durable_mark(u64 b)
{
	u64 r = b >> flaz_intent_shift(c.intent);

	return ((const u8 *)flaz_sb_bitmap(durable_sb()))[r / 8] & (1U << (r % 8));
}

/*
 * A table entry of block @b about to be written: if the HDD holds @b's data
 * only in its volatile cache, @b's region is marked in the newest superblock
 * the SSD holds durably, of the generation the entry is written in; else a
 * power cut could keep the entry and lose the data, and serve what the HDD no
 * longer holds.
 */
static void check_entry_data(u64 b)
{
	struct flaz_sb_info info;

	if (b >= hdd_blocks || !test_bit(b, hdd_dirty))
		return;
	if (!flaz_sb_decode(durable_sb(), &info) && info.gen == m->enc_gen && !durable_mark(b))
		fail("a table entry written for data the HDD holds only in its cache, unmarked: block", b);
}

/*
 * A table block @idx about to be written (@blk), checked against meta.c's
 * rules: an entry carries no generation its extent's gen block has not
 * durably reached, and one its gen block still validates points at a slot
 * that is durable already (so the SSD cannot keep the entry and lose the slot).
 */
static void check_table_write(u64 idx, const u8 *blk)
{
	struct flaz_entry_info ei;
	struct mext *x;
	u64 commit;
	u16 dg;
	u32 i, j;

	if (flaz_meta_decode(blk, m->enc_gen, idx, &commit, entries))
		fail("a table block written that does not decode:", idx);
	for (i = 0; i < FLAZ_META_ENTRIES; i++) {
		flaz_entry_unpack(entries[i], &g, &ei);
		if (ei.units == FLAZ_ENTRY_ZERO_UNITS)
			check_entry_data(ei.tag * g.nr_lines + idx * FLAZ_META_ENTRIES + i);
		if (!ei.units || ei.units == FLAZ_ENTRY_ZERO_UNITS)
			continue;
		dg = durable_gen(ei.ext, m->enc_gen);
		if (dg < ei.gen)
			fail("a table entry written before its generation is durable: extent", ei.ext);
		if (dg != ei.gen)
			continue;
		/* the slot durable in it now: this line's block's, not an earlier tenant's */
		x = &ext[ei.ext];
		for (j = 0; j < x->ndur; j++)
			if (x->dur[j].off == ei.off && x->dur[j].bytes == ei.units * FLAZ_SLOT_ALIGN &&
			    x->dur[j].block % g.nr_lines == idx * FLAZ_META_ENTRIES + i &&
			    (x->dur[j].block / g.nr_lines) % (1U << FLAZ_TAG_BITS) == ei.tag)
				break;
		if (j == x->ndur)
			fail("a table entry written into a slot not yet durable: extent", ei.ext);
		check_entry_data(x->dur[j].block);
	}
}

/*
 * A superblock about to be written (@blk), checked against sb.c's and
 * intent.c's rules: a region it clears (marked in the newest durable
 * superblock of its generation, not in it) has no write in flight and none the
 * HDD holds only in its volatile cache, so a crash after it finds every line
 * of the region as current as the HDD. A new generation (a format) voids what
 * the SSD held, and clears nothing.
 */
static void check_sb_write(const u8 *blk)
{
	const u8 *bits = flaz_sb_bitmap(blk), *was = flaz_sb_bitmap(durable_sb());
	u32 shift = flaz_intent_shift(c.intent);
	struct flaz_sb_info info, old;
	u64 r, i;

	if (flaz_sb_decode(blk, &info))
		fail("a superblock written that does not decode", 0);
	if (flaz_sb_decode(durable_sb(), &old) || old.gen != info.gen)
		return;
#define CLEARS(r) ((was[(r) / 8] & ~bits[(r) / 8]) & (1U << ((r) % 8)))
	for (i = 0; i < nr_inflight; i++) {
		r = inflight[i]->block >> shift;
		if (CLEARS(r))
			fail("a superblock clears a region with a write in flight: block", inflight[i]->block);
	}
	for_each_set_bit(i, hdd_dirty, hdd_blocks) {
		r = i >> shift;
		if (CLEARS(r))
			fail("a superblock clears a region the HDD has not flushed: block", i);
	}
#undef CLEARS
}

/* The HDD's first block, which the superblock fingerprints: the same bytes always. */
static void hdd_read(u64 sector, u64 count, u8 *buf)
{
	u64 i;

	for (i = 0; i < count << SECTOR_SHIFT; i++)
		buf[i] = (u8)((sector << SECTOR_SHIFT) + i) * 7;
}

/*
 * meta.c's I/O to the data area: only the reclaim order, written into free
 * extents at a clean stop (one that held slots would lose them) and read at
 * the next activation. A write or read fails now and then.
 */
static int data_io(struct dm_io_region *where, bool w, bool preflush, u8 *buf)
{
	u64 off = (where->sector - g.data_start) << SECTOR_SHIFT;
	u64 len = where->count << SECTOR_SHIFT, e;

	assert(off % ext_bytes + len <= ext_bytes && off / ext_bytes < g.nr_extents);
	e = off / ext_bytes;
	if (preflush)
		ssd_flush();
	if (!w) {
		memcpy(buf, ord_cur + off, len);
		return ssd_fails() ? -EIO : 0;
	}
	if (ext[e].state != FREE)
		fail("meta.c wrote into an extent not free:", e);
	if (ssd_fails())
		return -EIO;
	memcpy(ord_cur + off, buf, len);
	set_bit(e, ord_pending);
	return 0;
}

/* A fill's extent write, @e opened: what it held goes (durably once flushed). */
void ssd_extent_opened(u32 e)
{
	memset(ord_cur + (u64)e * ext_bytes, 0, ext_bytes);
	set_bit(e, ord_pending);
}

int dm_io(struct dm_io_request *req, unsigned int n, struct dm_io_region *where,
	  unsigned long *error_bits, int ioprio)
{
	bool w = (req->bi_opf & REQ_OP_MASK) == REQ_OP_WRITE;
	u8 *buf = req->mem.type == DM_IO_VMA ? req->mem.ptr.vma : req->mem.ptr.addr;
	u64 first = where->sector / FLAZ_BLOCK_SECTORS, i;
	u64 nr = where->count / FLAZ_BLOCK_SECTORS;
	int err = 0;

	(void)n; (void)error_bits; (void)ioprio;
	/* other CPUs go on while it is in flight; the power may go */
	in_flight();
	if (where->bdev == &hdd_dev) {
		assert(!w);
		if (hdd_read_fails())
			err = -EIO;
		else
			hdd_read(where->sector, where->count, buf);
	} else if (where->sector >= g.data_start) {
		err = data_io(where, w, req->bi_opf & REQ_PREFLUSH, buf);
	} else {
		assert(where->sector % FLAZ_BLOCK_SECTORS == 0 && first + nr <= ssd_meta_blocks);
		if (req->bi_opf & REQ_PREFLUSH)
			ssd_flush();	/* other work ran before: in_flight() above */
		/*
		 * Once a mark failed (until the mode is normal again) or in
		 * passthrough, superblocks void the generation: no marks are kept.
		 */
		if (w && first < FLAZ_SB_COPIES && c.mode == FLAZ_MODE_NORMAL && !c.ssd_failed)
			check_sb_write(buf);
		/* a table or gen write that fails may leave any of its blocks written */
		if (w && meta_io_fails(first))
			err = -EIO;
		if (w) {
			for (i = first; i < first + nr; i++) {
				if (i >= g.meta_start / FLAZ_BLOCK_SECTORS &&
				    i < g.gen_start / FLAZ_BLOCK_SECTORS)
					check_table_write(i - g.meta_start / FLAZ_BLOCK_SECTORS,
							  buf + (i - first) * FLAZ_BLOCK_SIZE);
				if (err && (first < FLAZ_SB_COPIES || below(2)))
					continue;
				memcpy(ssd_old + i * FLAZ_BLOCK_SIZE, ssd_cur + i * FLAZ_BLOCK_SIZE,
				       FLAZ_BLOCK_SIZE);
				memcpy(ssd_cur + i * FLAZ_BLOCK_SIZE, buf + (i - first) * FLAZ_BLOCK_SIZE,
				       FLAZ_BLOCK_SIZE);
				set_bit(i, ssd_pending);
				/* FUA: this write is durable, not what the cache held before it */
				if (req->bi_opf & REQ_FUA)
					ssd_settle(i);
			}
		} else if (meta_io_fails(first)) {
			/*
			 * What a failed read leaves is undefined: what the buffer
			 * held (another read's blocks), or these blocks as they
			 * were before their last write.
			 */
			if (below(2))
				memcpy(buf, ssd_old + first * FLAZ_BLOCK_SIZE, nr * FLAZ_BLOCK_SIZE);
			err = -EIO;
		} else {
			memcpy(buf, ssd_cur + first * FLAZ_BLOCK_SIZE, nr * FLAZ_BLOCK_SIZE);
		}
	}
	if (req->notify.fn) {
		req->notify.fn(!!err, req->notify.context);
		return 0;
	}
	return err;
}

void devices_init(void)
{
	ssd_meta_blocks = flaz_extent_sector(&g, 0) / FLAZ_BLOCK_SECTORS;
	ssd_cur = calloc(ssd_meta_blocks, FLAZ_BLOCK_SIZE);
	ssd_dur = calloc(ssd_meta_blocks, FLAZ_BLOCK_SIZE);
	ssd_old = calloc(ssd_meta_blocks, FLAZ_BLOCK_SIZE);
	ssd_pending = bitmap_zalloc(ssd_meta_blocks, 0);
	cut_ssd = calloc(ssd_meta_blocks, FLAZ_BLOCK_SIZE);
	cut_ext = calloc(g.nr_extents, sizeof(*cut_ext));
	cut_ver = calloc(hdd_blocks, sizeof(*cut_ver));
	ext_bytes = g.extent_sectors << SECTOR_SHIFT;
	ord_cur = calloc(g.nr_extents, ext_bytes);
	ord_dur = calloc(g.nr_extents, ext_bytes);
	cut_ord = calloc(g.nr_extents, ext_bytes);
	ord_pending = bitmap_zalloc(g.nr_extents, 0);
}

/* The power goes now, or at one of the next I/Os (a commit's, a mark's, a page-in's). */
void cut_power(void)
{
	if (below(2)) {
		take_cut();
	} else if (!cut_armed) {
		cut_armed = true;
		cut_armed_at = step;
	}
}

/* Whether the power went (a cut armed a thousand steps ago goes now). */
bool power_cut(void)
{
	if (cut_armed && step - cut_armed_at > 1000)
		take_cut();
	return cut_taken;
}

/* The devices after the cut: what it left, all of it durable. */
void devices_after_cut(void)
{
	u64 i;

	memcpy(ssd_cur, cut_ssd, ssd_meta_blocks * FLAZ_BLOCK_SIZE);
	memcpy(ssd_dur, cut_ssd, ssd_meta_blocks * FLAZ_BLOCK_SIZE);
	bitmap_zero(ssd_pending, ssd_meta_blocks);
	dur_changes++;
	memcpy(ord_cur, cut_ord, (u64)g.nr_extents * ext_bytes);
	memcpy(ord_dur, cut_ord, (u64)g.nr_extents * ext_bytes);
	bitmap_zero(ord_pending, g.nr_extents);
	for (i = 0; i < g.nr_extents; i++) {
		ext[i].ncur = ext[i].ndur = cut_ext[i].n;
		memcpy(ext[i].cur, cut_ext[i].s, cut_ext[i].n * sizeof(struct mslot));
		memcpy(ext[i].dur, cut_ext[i].s, cut_ext[i].n * sizeof(struct mslot));
		ext[i].pending = false;
	}
	memcpy(ver, cut_ver, hdd_blocks * sizeof(*ver));
	memcpy(ver_dur, cut_ver, hdd_blocks * sizeof(*ver));
	bitmap_zero(hdd_dirty, hdd_blocks);
	cut_taken = false;
}

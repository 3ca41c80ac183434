// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz cleaner: makes room for fills (FlaZ 2.2.4, SlimCache).
 *
 * The policy is S3-FIFO's, on the log (alloc.c). Fills (of misses and of
 * writes) go to probation, a FIFO of probation_percent of the extents; the
 * cleaner's moves go to main. Reclaim takes probation's oldest extents while
 * it is over its share (or main is empty), else main's. A reclaimed extent's
 * slots hit since their fill (their line's heat, l2p.c) move to main's tail,
 * their heat halved by each move, so that a slot no longer hit goes in a lap or
 * two; the rest are dropped (the HDD has them), a probation extent none of
 * whose slots was hit unread. A block installed again while its line holds
 * the entry an eviction voided (a ghost) counts as hit once, and a newcomer
 * does not take a line from a block hit since its fill (fill.c). So a stream
 * read once cycles through probation and never reaches main. With the cleaner
 * off (cleaner_rate_mib 0) nothing is promoted: one FIFO.
 *
 * Compaction, from below low_watermark free extents up to high_watermark, is
 * that policy as written: a pass takes a window (CLEAN_WINDOW bytes) of one
 * FIFO's oldest extents, reads them, judges each slot by its back pointer
 * against the table, packs the moves into new extents first-fit decreasing,
 * and evicts the victims (a new generation, freed after the next commit,
 * meta.c). A victim whose hit slots fill three quarters of it, and whose moves
 * recode nothing, stays whole at main's tail instead (CLOCK), its heat halved
 * as a move would halve it: moving them would free little.
 *
 * Stage two (evict.c) is for when compaction cannot keep up or cannot run.
 * Below half of low_watermark, or when a fill found no free extent but the
 * moves' reserve, a rush evicts the oldest extents whole, unread, up to
 * low_watermark, beside the pass, with the commit that frees them at once;
 * with the cleaner on, hit ones are passed over as flaz_stage_two_fate() says,
 * a lap of the extents at most. With the cleaner off, out of normal mode,
 * while recovering or without memory for a pass, passes evict the oldest
 * whole too; failed extents always go first.
 *
 * Below low_watermark, passes run flat out; from there up to high_watermark,
 * while user I/O came in the last CLEAN_BUSY, they are spaced to read
 * cleaner_rate_mib MiB a second. A pass that read nothing and an idle volume
 * are cleaned flat out.
 */
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dm-io.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "evict.h"

#define CLEAN_WINDOW		(2U << 20)	/* victim bytes a pass packs together */
#define CLEAN_BUSY		(HZ / 10)
#define CLEAN_DEPTH		8	/* a pass's extent I/Os in flight at once */
#define NO_EXTENT		U32_MAX	/* a bin that got no extent */

/* One extent read or write of a pass; a pass starts a batch of them at once. */
struct clean_io {
	struct flaz_cleaner *cl;
	u32 ext;			/* or NO_EXTENT */
	u32 first, nr;			/* a bin's moves */
	u32 hot;			/* a bin's hot raw slots */
	bool read;			/* a victim's: read, to be judged */
	bool failed;
};

struct flaz_cleaner {
	struct flaz_cache *c;
	struct delayed_work work;
	struct mutex lock;		/* one pass or emptying at a time */
	struct work_struct rush;	/* stage two, when fills found no free extent */
	struct flaz_evict ev;		/* stage two, and what passes share with it */
	u32 window;			/* victims a pass takes at most */
	bool probation;			/* the pass's victims are probation's */
	u32 max_moves;
	bool stopped;			/* suspended: no passes */
	bool cleaning;			/* from below low_watermark, until high */
	atomic_t io_left;		/* the batch's I/Os not done, +1 while starting it */
	u32 io_started;			/* I/Os started since the batch began */
	struct completion io_done;
	/* while passes run (allocated at the first, freed when done) */
	u8 *buf;			/* the victims, extent after extent; then recoded slots */
	u32 staged;			/* bytes of recoded slots after the victims */
	u32 new_hot;			/* slots this pass made hot raw */
	u32 v_hot;			/* the victim being judged: bytes of its hit slots */
	u64 hot_limit;			/* hot raw slots allowed, for this pass */
	u8 *out;			/* the bins being written; a block while judging */
	struct clean_io *io;		/* per victim, then per bin */
	struct flaz_move *moves;
	struct flaz_move *drops;	/* the victim being judged: live slots not moved */
	u32 nr_drops, max_drops;
	u32 *ids;			/* the victims */
	u32 *fill;			/* bytes per bin */
	unsigned long *reread;		/* per victim: not judged slot by slot */
	unsigned long *keep;		/* per victim: mostly hit, left where it is */
	u64 bytes;			/* of the above */
};

/*
 * The most free space low_watermark keeps, high_watermark scaled with it: a
 * percent of a few TiB of SSD would leave tens of GiB idle, where the free
 * extents need only take the fills that come before a rush's evictions
 * commit, a second or two of a fast HDD's rate.
 */
#define WATERMARK_CAP		SZ_1G

static unsigned int debug_watermark_cap_kib;
module_param(debug_watermark_cap_kib, uint, 0644);
MODULE_PARM_DESC(debug_watermark_cap_kib,
		 "tests only: the watermarks' cap in KiB (0: 1 GiB), so that small SSDs meet it; every volume's, from its cleaner's next run");

/* The watermarks' levels, in free extents (flaz_watermark_levels()). */
static void levels(struct flaz_cache *c, u32 *low, u32 *high)
{
	u32 kib = READ_ONCE(debug_watermark_cap_kib);

	flaz_watermark_levels(c->geo->nr_extents, c->extent_bytes,
			      flaz_opt_get(c->opts, FLAZ_OPT_LOW_WATERMARK),
			      flaz_opt_get(c->opts, FLAZ_OPT_HIGH_WATERMARK),
			      kib ? (u64)kib << 10 : WATERMARK_CAP, low, high);
}

/* Free extents, and evicted ones that the next commit frees: reclaim counts both. */
static u32 free_soon(struct flaz_cache *c)
{
	return flaz_alloc_nr_free(c->alloc) + flaz_alloc_nr_pending(c->alloc);
}

/* Extents a pass of @k victims may fill with moves: it frees a quarter of them at least. */
static u32 max_bins(u32 k)
{
	return k - max(1U, k / 4);
}

static void put_buffers(struct flaz_cleaner *cl)
{
	vfree(cl->buf);
	vfree(cl->out);
	kvfree(cl->io);
	kvfree(cl->moves);
	kvfree(cl->ids);
	bitmap_free(cl->reread);
	bitmap_free(cl->keep);
	cl->buf = NULL;
	cl->out = NULL;
	cl->io = NULL;
	cl->moves = NULL;
	cl->ids = NULL;
	cl->reread = NULL;
	cl->keep = NULL;
	cl->bytes = 0;
}

/*
 * Memory for passes, taken without recursing into I/O; false without it. What
 * dm-io reads and writes is vmalloc'ed (DM_IO_VMA).
 */
static bool get_buffers(struct flaz_cleaner *cl)
{
	u32 eb = cl->c->extent_bytes, w = cl->window, bins = max(max_bins(w), 1U);
	unsigned int noio;

	if (cl->buf)
		return true;
	noio = memalloc_noio_save();
	cl->buf = __vmalloc(2ULL * w * eb, GFP_KERNEL | __GFP_NOWARN);
	cl->out = __vmalloc((u64)bins * eb, GFP_KERNEL | __GFP_NOWARN);
	cl->io = kvmalloc_array(w, sizeof(*cl->io), GFP_KERNEL | __GFP_NOWARN);
	/* and after them, the drops */
	cl->moves = kvmalloc_array(cl->max_moves + cl->max_drops, sizeof(*cl->moves),
				   GFP_KERNEL | __GFP_NOWARN);
	/* ids and fill: one each per victim */
	cl->ids = kvmalloc_array(2 * w, sizeof(u32), GFP_KERNEL | __GFP_NOWARN);
	cl->reread = bitmap_zalloc(w, GFP_KERNEL | __GFP_NOWARN);
	cl->keep = bitmap_zalloc(w, GFP_KERNEL | __GFP_NOWARN);
	memalloc_noio_restore(noio);
	if (!cl->buf || !cl->out || !cl->io || !cl->moves || !cl->ids || !cl->reread ||
	    !cl->keep) {
		put_buffers(cl);
		return false;
	}
	cl->drops = cl->moves + cl->max_moves;
	cl->fill = cl->ids + w;
	cl->bytes = (2ULL * w + bins) * eb + (u64)w * sizeof(*cl->io) +
		    (u64)(cl->max_moves + cl->max_drops) * sizeof(*cl->moves) +
		    2 * w * sizeof(u32) + 2 * BITS_TO_LONGS(w) * sizeof(long);
	return true;
}

FLAZ_IO_NOTIFY(io_done)
{
	struct clean_io *io = context;
	struct flaz_cleaner *cl = io->cl;

	io->failed = error;
	if (atomic_dec_and_test(&cl->io_left))
		complete(&cl->io_done);
}

/*
 * A pass's extent I/O goes in batches of CLEAN_DEPTH started at once, so a pass
 * waits for a few round trips of the SSD, not one per extent, and keeps up with
 * fills; user I/O queued behind it waits for a batch at most.
 */
static void batch_start(struct flaz_cleaner *cl)
{
	atomic_set(&cl->io_left, 1);
	reinit_completion(&cl->io_done);
	cl->io_started = 0;
}

static void batch_wait(struct flaz_cleaner *cl)
{
	if (!atomic_dec_and_test(&cl->io_left))
		wait_for_completion_io(&cl->io_done);
}

/* Start I/O @io: @bytes of extent io->ext from or to @buf. */
static void extent_io(struct flaz_cleaner *cl, blk_opf_t opf, struct clean_io *io, void *buf,
		      u32 bytes)
{
	struct flaz_cache *c = cl->c;
	struct dm_io_region where = {
		.bdev = c->ssd,
		.sector = flaz_extent_sector(c->geo, io->ext),
		.count = bytes >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.notify.fn = FLAZ_NOTIFY(io_done),
		.notify.context = io,
		.client = c->io,
	};

	if (cl->io_started == CLEAN_DEPTH) {
		batch_wait(cl);
		batch_start(cl);
	}
	cl->io_started++;
	io->cl = cl;
	io->failed = false;
	atomic_inc(&cl->io_left);
	if (flaz_dm_io(&req, &where))
		io_done(1, io);
}

/* The codec copies a payload it compressed to @ctx. */
static void *place_at(void *ctx, unsigned int len)
{
	return ctx;
}

/*
 * Compress the block @raw into the payload of @out's slot at @dst, with the
 * cold codec when there is one, in at most @max bytes. Returns false when it
 * does not fit.
 */
static bool pack_block(struct flaz_cache *c, const u8 *raw, u32 max, u8 *dst,
		       struct flaz_slot_info *out)
{
	struct flaz_compressor *comp = c->cold_codec ? c->cold_comp : c->comp;
	int len;

	len = max ? flaz_compress(comp, raw, max, place_at, dst + sizeof(struct flaz_slot_hdr)) : 0;
	if (len <= 0)
		return false;
	out->len = len;
	out->flags = 0;
	out->codec = c->cold_codec ? c->cold_codec - 1 : c->codec;
	flaz_stats_add(c->stats, FLAZ_STAT_RECOMPRESSED, 1);
	return true;
}

/*
 * Recode the slot of move @mv (header @info, line heat @heat) into the room
 * after the victims, and point the move at the copy; on any failure, or with
 * no room left, it moves as it is. A slot hot at the top of its heat is stored
 * raw (hot_uncompressed, within hot_max_percent), one that cooled is
 * compressed again, a cold one goes to cold_compressor when that is smaller.
 */
static void recode(struct flaz_cleaner *cl, struct flaz_move *mv,
		   const struct flaz_slot_info *info, u32 heat)
{
	struct flaz_cache *c = cl->c;
	struct flaz_compressor *comp = flaz_cache_codec(c, info->codec);
	u32 hdr = sizeof(struct flaz_slot_hdr), eb = c->extent_bytes;
	u32 at = cl->window * eb + cl->staged;
	const u8 *payload = cl->buf + mv->src + hdr;
	struct flaz_slot_info out = *info;
	bool hot, room, cold;
	u8 *dst;

	hot = heat >= FLAZ_HEAT_MAX && flaz_opt_get(c->opts, FLAZ_OPT_HOT_UNCOMPRESSED);
	room = atomic64_read(&cl->ev.hot_total) + cl->new_hot < cl->hot_limit;
	cold = c->cold_codec && c->cold_codec - 1 != c->codec && info->codec == c->codec;
	if (!comp || cl->staged + FLAZ_MAX_SLOT_BYTES > cl->window * eb)
		return;
	dst = cl->buf + at;
	switch (flaz_cleaner_recode(info->flags, hot, room, cold)) {
	case FLAZ_RECODE_COPY:
		return;
	case FLAZ_RECODE_HOT:
		if (flaz_decompress(comp, payload, info->len, dst + hdr))
			return;
		out.len = FLAZ_BLOCK_SIZE;
		out.flags = FLAZ_SLOT_RAW | FLAZ_SLOT_HOT;
		out.codec = c->codec;
		cl->new_hot++;
		break;
	case FLAZ_RECODE_COOL:
		if (!pack_block(c, payload, flaz_fill_max_payload(c), dst, &out)) {
			memcpy(dst + hdr, payload, FLAZ_BLOCK_SIZE);
			out.flags = FLAZ_SLOT_RAW;
		}
		break;
	case FLAZ_RECODE_COLD:
		/* only when the slot gets smaller by an alignment unit at least */
		if (info->bytes < hdr + 2 * FLAZ_SLOT_ALIGN ||
		    flaz_decompress(comp, payload, info->len, cl->out) ||
		    !pack_block(c, cl->out, info->bytes - hdr - FLAZ_SLOT_ALIGN, dst, &out))
			return;
		break;
	}
	flaz_slot_encode(dst, &out);
	mv->src = at;
	mv->bytes = out.bytes;
	cl->staged += out.bytes;
}

/*
 * Judge the slot at @off of victim @i (extent @ext) from @info: a live one that
 * was hit is listed to move, while there is room in the list, and the bytes of
 * the victim's hit slots are summed (cl->v_hot); another live one is listed to
 * drop, should the victim go.
 */
static void judge(struct flaz_cleaner *cl, u32 i, u32 ext, u32 off,
		  const struct flaz_slot_info *info, u32 *nr)
{
	struct flaz_cache *c = cl->c;
	u64 line = flaz_l2p_line(c->l2p, info->block);
	struct flaz_move mv;
	u32 heat = 0;
	bool live, absent;

	/* older than the extent: a slot of an earlier tenant the SSD kept */
	if (flaz_tenant_older(c->tenants, ext, info->seq) || info->line != line) {
		set_bit(i, cl->reread);
		return;
	}
	flaz_l2p_lock(c->l2p, line);
	live = flaz_l2p_points(c->l2p, info->block, ext, off, &heat);
	absent = !live && !flaz_l2p_resident(c->l2p, line) && flaz_l2p_heat(c->l2p, line);
	flaz_l2p_unlock(c->l2p, line);
	/*
	 * A line hit since its fill whose page is out reads as empty: its page
	 * comes in, making room as a read's does (fills keep the table at their
	 * cap), lest the cleaner drop a hot block for its page being out. Should
	 * it not come in (only dirty or recently used pages, no memory), the slot
	 * drops as a dead one would.
	 */
	if (absent && !flaz_meta_page_in(c->meta, line, true)) {
		flaz_l2p_lock(c->l2p, line);
		live = flaz_l2p_points(c->l2p, info->block, ext, off, &heat);
		flaz_l2p_unlock(c->l2p, line);
	}
	if (!live)
		return;
	mv = (struct flaz_move) {
		.block = info->block,
		.src = i * c->extent_bytes + off,
		.bytes = info->bytes,
		.victim = i,
		.voff = off,
	};
	if (!heat || *nr == cl->max_moves) {
		/* more slots than an extent holds: its eviction voids the rest */
		if (cl->nr_drops == cl->max_drops)
			set_bit(i, cl->reread);
		else
			cl->drops[cl->nr_drops++] = mv;
		return;
	}
	cl->v_hot += info->bytes;
	cl->moves[*nr] = mv;
	recode(cl, &cl->moves[*nr], info, heat);
	(*nr)++;
}

/* Judge the slots of victim @i, read; one that could not be read is evicted whole. */
static void judge_victim(struct flaz_cleaner *cl, u32 i, u32 *nr)
{
	struct flaz_cache *c = cl->c;
	u32 ext = cl->ids[i], eb = c->extent_bytes;
	u8 *x = cl->buf + (size_t)i * eb;
	struct flaz_slot_info info;
	u32 used, nr_slots, off = 0;
	int r;

	if (cl->io[i].failed || flaz_extent_decode(x, eb, ext, &used, &nr_slots)) {
		flaz_report_fault(c, FLAZ_STAT_SSD_ERRORS);
		set_bit(i, cl->reread);
		return;
	}
	while ((r = flaz_extent_next(x, used, &off, &info)) > 0)
		judge(cl, i, ext, off - info.bytes, &info, nr);
	if (r < 0) {
		flaz_report_fault(c, FLAZ_STAT_SSD_ERRORS);
		set_bit(i, cl->reread);
	}
}

/*
 * Count the lines that still point at the victims' slots @mv[0..@n) (moves that
 * found no extent, or a victim's slots that do not move) as dropped. They are
 * left as they are: the victim's eviction voids them all at once, by its
 * generation, while until then they still read the victim's good slots. (An
 * emptied line could come back from the SSD's table before that, its page
 * paged out and in again.)
 */
static void drop_slots(struct flaz_cleaner *cl, const struct flaz_move *mv, u32 n)
{
	struct flaz_cache *c = cl->c;
	u32 heat, i, dropped = 0;
	u64 line;

	for (i = 0; i < n; i++) {
		line = flaz_l2p_line(c->l2p, mv[i].block);
		flaz_l2p_lock(c->l2p, line);
		if (flaz_l2p_points(c->l2p, mv[i].block, cl->ids[mv[i].victim], mv[i].voff,
				    &heat))
			dropped++;
		flaz_l2p_unlock(c->l2p, line);
	}
	flaz_stats_add(c->stats, FLAZ_STAT_SLOTS_DROPPED, dropped);
}

/*
 * Victim @i stays where it is, a lap more (CLOCK's second chance): its slots
 * are mostly hit, so moving them would free little. The lines of its hit
 * slots, @mv[0..@n), cool as a move would cool them.
 */
static void keep_victim(struct flaz_cleaner *cl, u32 i, const struct flaz_move *mv, u32 n)
{
	struct flaz_cache *c = cl->c;
	u32 j, heat;
	u64 line;

	for (j = 0; j < n; j++) {
		line = flaz_l2p_line(c->l2p, mv[j].block);
		flaz_l2p_lock(c->l2p, line);
		if (flaz_l2p_points(c->l2p, mv[j].block, cl->ids[i], mv[j].voff, &heat))
			flaz_l2p_cool(c->l2p, mv[j].block);
		flaz_l2p_unlock(c->l2p, line);
	}
	set_bit(i, cl->keep);
}

/* Judge victim @i, read, and keep it, or list its hit slots to move and drop the rest. */
static void settle_victim(struct flaz_cleaner *cl, u32 i, u32 *nr)
{
	u32 first = *nr, staged = cl->staged;

	cl->v_hot = 0;
	cl->nr_drops = 0;
	judge_victim(cl, i, nr);
	/* a move that recodes a slot (hot raw, cooled, cold codec) is worth its copy */
	if (!test_bit(i, cl->reread) && cl->staged == staged &&
	    flaz_cleaner_keep(cl->v_hot, flaz_extent_room(cl->c))) {
		keep_victim(cl, i, cl->moves + first, *nr - first);
		flaz_stats_add(cl->c->stats, cl->probation ? FLAZ_STAT_SLOTS_PROMOTED :
				FLAZ_STAT_SLOTS_KEPT, *nr - first);
		*nr = first;
		return;
	}
	drop_slots(cl, cl->drops, cl->nr_drops);
}

/*
 * Pack the moves of bin @b (io->first, io->nr of them) into its buffer and start
 * its write into a free extent; io->ext is NO_EXTENT when none is free.
 */
static void start_bin(struct flaz_cleaner *cl, u32 b)
{
	struct flaz_cache *c = cl->c;
	struct clean_io *io = &cl->io[b];
	struct flaz_move *mv = cl->moves + io->first;
	u8 *out = cl->out + (size_t)b * c->extent_bytes;
	struct flaz_slot_info info;
	u32 used, i;

	io->hot = 0;
	if (flaz_alloc_get_reserved(c->alloc, &io->ext)) {
		io->ext = NO_EXTENT;
		return;
	}
	flaz_xbuf_opened(c->xbuf, io->ext);
	used = mv[io->nr - 1].off + mv[io->nr - 1].bytes;
	memset(out, 0, round_up(used, FLAZ_BLOCK_SIZE));
	for (i = 0; i < io->nr; i++) {
		u8 *slot = out + mv[i].off;

		memcpy(slot, cl->buf + mv[i].src, mv[i].bytes);
		/* checked when the victim was read; a new seq for the new extent */
		if (flaz_slot_decode(slot, mv[i].bytes, &info))
			continue;
		info.seq = atomic64_inc_return(&c->seq);
		flaz_slot_encode(slot, &info);
		if (info.flags & FLAZ_SLOT_HOT)
			io->hot++;
		mv[i].cold = info.codec != c->codec;
	}
	flaz_extent_encode(out, atomic64_inc_return(&c->seq), io->ext, used, io->nr);
	extent_io(cl, REQ_OP_WRITE, io, out, round_up(used, FLAZ_BLOCK_SIZE));
}

/*
 * Bin @b's write is done: point its moves' lines at it, or drop them. A line
 * is pointed at its new place only if it still points at the old one: a racing
 * write is never undone, and a crash finds the old slot or none.
 */
static void end_bin(struct flaz_cleaner *cl, u32 b)
{
	struct flaz_cache *c = cl->c;
	const struct clean_io *io = &cl->io[b];
	const struct flaz_move *mv = cl->moves + io->first;
	struct flaz_entry e = { .kind = FLAZ_ENTRY_SLOT, .ext = io->ext };
	u32 heat, i, moved = 0;
	u64 line;

	if (io->ext == NO_EXTENT) {
		drop_slots(cl, mv, io->nr);
		return;
	}
	if (io->failed) {
		flaz_report_fault(c, FLAZ_STAT_SSD_ERRORS);
		flaz_xbuf_abandon(c->xbuf, io->ext);
		drop_slots(cl, mv, io->nr);
		return;
	}
	/* on the SSD before any line points there (hit.c reads it from there) */
	flaz_xbuf_written(c->xbuf, io->ext, true);
	set_bit(io->ext, cl->ev.kept);
	cl->ev.hot[io->ext] = io->hot;
	atomic64_add(io->hot, &cl->ev.hot_total);
	for (i = 0; i < io->nr; i++) {
		line = flaz_l2p_line(c->l2p, mv[i].block);
		e.off = mv[i].off;
		e.bytes = mv[i].bytes;
		e.cold = mv[i].cold;
		flaz_l2p_lock(c->l2p, line);
		if (flaz_l2p_points(c->l2p, mv[i].block, cl->ids[mv[i].victim], mv[i].voff,
				    &heat)) {
			flaz_l2p_move(c->l2p, mv[i].block, &e);
			moved++;
		}
		flaz_l2p_unlock(c->l2p, line);
	}
	flaz_stats_add(c->stats, FLAZ_STAT_SLOTS_MOVED, moved);
	if (cl->probation)
		flaz_stats_add(c->stats, FLAZ_STAT_SLOTS_PROMOTED, moved);
}

/*
 * Free extents fills leave to the cleaner's moves: a pass's worth, but no more
 * than 3/8 of low_watermark, so that fills still take free extents below the
 * level where a rush starts (1/2) while its commit comes; with more, fills
 * would wait for every rush.
 * And probation's share of the extents, as probation_percent has it now; none
 * with the cleaner off, which promotes nothing: one log, FIFO.
 */
static void set_shares(struct flaz_cleaner *cl)
{
	struct flaz_cache *c = cl->c;
	u32 pct = flaz_opt_get(c->opts, FLAZ_OPT_PROBATION_PERCENT);
	u32 low, high;

	levels(c, &low, &high);
	flaz_alloc_set_reserve(c->alloc, min(max_bins(cl->window), div_u64((u64)low * 3, 8)));
	if (!flaz_opt_get(c->opts, FLAZ_OPT_CLEANER_RATE_MIB))
		pct = 0;
	flaz_alloc_set_probation(c->alloc, div_u64((u64)c->geo->nr_extents * pct, 100));
}

/*
 * Whether victim @i is read and judged: it was hit since it was written (its
 * lines' pages may be out: the live bytes count resident lines only), or, of
 * main's, it has live slots; another goes unread.
 */
static bool worth_reading(struct flaz_cleaner *cl, u32 i)
{
	/* of probation's, only hit slots would move: one not hit goes unread */
	return (!cl->probation && flaz_l2p_live(cl->c->l2p, cl->ids[i])) ||
	       test_bit(cl->ids[i], cl->c->hit);
}

static unsigned int debug_move_delay_ms;
module_param(debug_move_delay_ms, uint, 0644);
MODULE_PARM_DESC(debug_move_delay_ms,
		 "tests only: a pause (up to 1 s) after a pass's moves are on the SSD, before lines point there, so writes race them");

/*
 * Compact victims cl->ids[0..@k): move the hit slots, drop the rest, evict
 * them. Returns how many were read.
 */
static u32 compact(struct flaz_cleaner *cl, u32 k)
{
	u32 delay = min(READ_ONCE(debug_move_delay_ms), 1000U);
	struct flaz_cache *c = cl->c;
	u32 base = sizeof(struct flaz_extent_hdr), eb = c->extent_bytes;
	u32 i, b, first, nr = 0, bins, most, kept, read = 0;

	bitmap_zero(cl->reread, k);
	bitmap_zero(cl->keep, k);
	cl->staged = 0;
	cl->new_hot = 0;
	cl->hot_limit = flaz_cleaner_hot_limit(c->geo->nr_extents, eb,
					       flaz_opt_get(c->opts, FLAZ_OPT_HOT_MAX_PERCENT));
	batch_start(cl);
	for (i = 0; i < k; i++) {
		cl->io[i].ext = cl->ids[i];
		/* once: a hit may come meanwhile */
		cl->io[i].read = worth_reading(cl, i);
		if (cl->io[i].read) {
			extent_io(cl, REQ_OP_READ, &cl->io[i], cl->buf + (size_t)i * eb, eb);
			read++;
		}
	}
	batch_wait(cl);
	for (i = 0; i < k; i++)
		if (cl->io[i].read)
			settle_victim(cl, i, &nr);
	kept = bitmap_weight(cl->keep, k);
	/* and moves need free extents */
	most = kept < k ? min(max_bins(k - kept), flaz_alloc_nr_free(c->alloc)) : 0;
	bins = flaz_cleaner_pack(cl->moves, nr, base, eb, most, cl->fill);
	batch_start(cl);
	for (first = 0, b = 0; b < bins; b++) {
		for (i = first; i < nr && cl->moves[i].bin == b; i++)
			;
		cl->io[b].first = first;
		cl->io[b].nr = i - first;
		start_bin(cl, b);
		first = i;
	}
	batch_wait(cl);
	if (unlikely(delay) && bins)
		msleep(delay);
	/* a rush must not evict a new extent before its lines point there */
	mutex_lock(&cl->ev.lock);
	for (b = 0; b < bins; b++)
		end_bin(cl, b);
	drop_slots(cl, cl->moves + first, nr - first);
	/* whatever still points into a victim (a slot that failed its checks) goes by its gen */
	for (i = 0; i < k; i++) {
		if (test_bit(i, cl->keep)) {
			/* to main's tail; passed over by stage two too */
			clear_bit(cl->ids[i], c->hit);
			set_bit(cl->ids[i], cl->ev.kept);
			flaz_alloc_written(c->alloc, cl->ids[i], true);
			continue;
		}
		set_bit(cl->ids[i], cl->ev.victims);
	}
	flaz_evict_victims(&cl->ev);
	mutex_unlock(&cl->ev.lock);
	flaz_stats_add(c->stats, FLAZ_STAT_CLEANER_RUNS, 1);
	flaz_stats_add(c->stats, FLAZ_STAT_EXTENTS_CLEANED, k - kept);
	return read;
}

/* One pass; returns the jiffies to wait before the next, or -1 when done. */
static long pass(struct flaz_cleaner *cl)
{
	struct flaz_cache *c = cl->c;
	u32 rate = flaz_opt_get(c->opts, FLAZ_OPT_CLEANER_RATE_MIB);
	u32 free = free_soon(c), low, high, want, k, read;

	levels(c, &low, &high);
	/* started below low, cleaning goes on up to high */
	want = flaz_reclaim_count(free, cl->cleaning ? high : low, high);
	cl->cleaning = want > 0;
	if (!want || !rate || flaz_mode_get(c) != FLAZ_MODE_NORMAL ||
	    flaz_meta_recovering(c->meta) || !get_buffers(cl)) {
		flaz_evict_oldest(&cl->ev, want, false);
		return -1;
	}
	/* failed extents go first, whole */
	flaz_evict_oldest(&cl->ev, 0, false);
	k = flaz_alloc_take_oldest(c->alloc, cl->ids, cl->window, 0, &cl->probation);
	if (!k)
		return -1;
	read = compact(cl, k);
	free = free_soon(c);
	if (!flaz_reclaim_count(free, high, high)) {
		cl->cleaning = false;
		return -1;
	}
	/* the pace is of what passes read: evicting unread costs the SSD nothing */
	if (!read || time_after(jiffies, READ_ONCE(c->last_io) + CLEAN_BUSY) || free < low)
		return 0;
	return max_t(long, 1, div64_u64((u64)read * c->extent_bytes * HZ, (u64)rate << 20));
}

static void clean_work(struct work_struct *work)
{
	struct flaz_cleaner *cl = container_of(to_delayed_work(work), struct flaz_cleaner,
					       work);
	long delay;

	mutex_lock(&cl->lock);
	set_shares(cl);
	delay = READ_ONCE(cl->stopped) ? -1 : pass(cl);
	if (delay < 0)
		put_buffers(cl);
	mutex_unlock(&cl->lock);
	if (delay >= 0 && !READ_ONCE(cl->stopped))
		queue_delayed_work(cl->c->wq.io, &cl->work, delay);
}

/* A tunable changed: the reserve and probation's share follow now, not at the next pass. */
void flaz_cleaner_tuned(struct flaz_cleaner *cl)
{
	set_shares(cl);
}

/*
 * Space was taken (any context): start the cleaner if it is needed, and a rush
 * beside it if free extents are short; or hurry the commit that frees evicted
 * ones.
 */
void flaz_cleaner_kick(struct flaz_cleaner *cl)
{
	struct flaz_cache *c = cl->c;
	u32 free = free_soon(c), low, high;

	if (READ_ONCE(cl->stopped))
		return;
	levels(c, &low, &high);
	if (flaz_reclaim_count(free, low / 2, low)) {
		queue_work(c->wq.io, &cl->rush);
		mod_delayed_work(c->wq.io, &cl->work, 0);
	} else if (flaz_reclaim_count(free, low, high)) {
		queue_delayed_work(c->wq.io, &cl->work, 0);
	} else if (flaz_alloc_nr_pending(c->alloc) &&
		   flaz_reclaim_count(flaz_alloc_nr_free(c->alloc), low, high)) {
		flaz_meta_kick(c->meta);	/* space is on its way: hurry the commit */
	}
}

/*
 * Stage two at once, beside a pass: free extents are short, or fills found
 * none, so compaction is not keeping up. The oldest extents go whole, hit ones
 * passed over as in any stage two, until free extents and those a commit frees
 * are back at low_watermark, where compaction takes over; the commit comes at
 * once (flaz_cleaner_short()).
 */
static void rush_work(struct work_struct *work)
{
	struct flaz_cleaner *cl = container_of(work, struct flaz_cleaner, rush);
	struct flaz_cache *c = cl->c;
	u32 low, high, want;

	levels(c, &low, &high);
	want = flaz_reclaim_count(free_soon(c), low, low);
	set_shares(cl);
	/* with the cleaner off, FIFO: nothing is passed over */
	if (want && !READ_ONCE(cl->stopped) && flaz_mode_get(c) == FLAZ_MODE_NORMAL)
		flaz_evict_oldest(&cl->ev, want,
				  flaz_opt_get(c->opts, FLAZ_OPT_CLEANER_RATE_MIB) != 0);
}

/* A fill found no free extent (any context): the cleaner is behind. */
void flaz_cleaner_starved(struct flaz_cleaner *cl)
{
	if (READ_ONCE(cl->stopped))
		return;
	queue_work(cl->c->wq.io, &cl->rush);
	flaz_cleaner_kick(cl);
}

/*
 * Fills are close to finding no free extent (fewer than half of low_watermark
 * are free but for those a commit will free): the evicted ones are wanted now.
 */
bool flaz_cleaner_short(struct flaz_cleaner *cl)
{
	struct flaz_cache *c = cl->c;
	u32 low, high;

	levels(c, &low, &high);
	return flaz_reclaim_count(flaz_alloc_nr_free(c->alloc), low / 2, low);
}

/* An extent write failed (interrupt context): it is evicted now. */
void flaz_cleaner_failed(struct flaz_cleaner *cl, u32 ext)
{
	set_bit(ext, cl->c->failed);
	if (!READ_ONCE(cl->stopped))
		mod_delayed_work(cl->c->wq.io, &cl->work, 0);
}

/* Empty the cache: every line dropped, every written extent evicted. */
void flaz_cleaner_empty(struct flaz_cleaner *cl)
{
	mutex_lock(&cl->lock);
	flaz_evict_all(&cl->ev);
	mutex_unlock(&cl->lock);
	flaz_meta_kick(cl->c->meta);
}

/* No pass runs after this until flaz_cleaner_start(). NULL-tolerant. */
void flaz_cleaner_stop(struct flaz_cleaner *cl)
{
	if (!cl)
		return;
	WRITE_ONCE(cl->stopped, true);
	cancel_delayed_work_sync(&cl->work);
	cancel_work_sync(&cl->rush);
	mutex_lock(&cl->lock);
	put_buffers(cl);
	mutex_unlock(&cl->lock);
}

void flaz_cleaner_start(struct flaz_cleaner *cl)
{
	WRITE_ONCE(cl->stopped, false);
	/* failed extents left by the last run, and space short already */
	queue_delayed_work(cl->c->wq.io, &cl->work, 0);
}

/* DRAM the cleaner holds now: stage two's, and its buffers while passes run. */
u64 flaz_cleaner_bytes(struct flaz_cleaner *cl)
{
	return sizeof(*cl) + flaz_evict_bytes(&cl->ev) + READ_ONCE(cl->bytes);
}

/* Hot raw slots written into extents not evicted since (status hot_blocks). */
u64 flaz_cleaner_hot_blocks(struct flaz_cleaner *cl)
{
	return atomic64_read(&cl->ev.hot_total);
}

struct flaz_cleaner *flaz_cleaner_create(struct flaz_cache *c)
{
	u32 total = c->geo->nr_extents;
	struct flaz_cleaner *cl;

	cl = kzalloc(sizeof(*cl), GFP_KERNEL);
	if (!cl)
		return NULL;
	cl->c = c;
	cl->stopped = true;
	mutex_init(&cl->lock);
	init_completion(&cl->io_done);
	INIT_DELAYED_WORK(&cl->work, clean_work);
	INIT_WORK(&cl->rush, rush_work);
	cl->window = clamp_t(u32, CLEAN_WINDOW / c->extent_bytes, 1, max(total / 8, 1U));
	/* slots of 128 bytes on average fill the list; smaller ones beyond it are dropped */
	cl->max_moves = cl->window * (c->extent_bytes / 128);
	cl->max_drops = flaz_extent_room(c) / flaz_slot_bytes(1);
	if (flaz_evict_init(&cl->ev, c, cl->window)) {
		mutex_destroy(&cl->lock);
		kfree(cl);
		return NULL;
	}
	set_shares(cl);
	return cl;
}

/* After flaz_cleaner_stop() and the queues' end, or before any start. NULL-tolerant. */
void flaz_cleaner_destroy(struct flaz_cleaner *cl)
{
	if (!cl)
		return;
	put_buffers(cl);
	flaz_evict_exit(&cl->ev);
	mutex_destroy(&cl->lock);
	kfree(cl);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz table blocks: the table on the SSD (format.h), encoded from the
 * table in DRAM (l2p.c) at a commit and loaded into it at a page-in. Pure of
 * I/O and of the volume's state, which come in through struct flaz_table_ctx,
 * so a userspace build can drive it against a model (tests/host/model).
 *
 * An entry is written only once its slot is durable on the SSD, and as it
 * reads in DRAM: one void by its extent's generation is written empty. An
 * entry is loaded only if it is sound, its generation is its extent's (an
 * older one was left by an eviction), and, after a crash, its block lies in
 * no region marked then (the HDD may hold newer data there).
 */
#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

/* Whether a block that line @line's entry @e may hold lies in a marked region. */
static bool entry_marked(const struct flaz_table_ctx *x, u64 line,
			 const struct flaz_entry_info *e)
{
	u64 step = e->units == FLAZ_ENTRY_ZERO_UNITS ? 0 : 1ULL << FLAZ_TAG_BITS;
	u64 tag;

	for (tag = e->tag; tag * x->geo->nr_lines + line < x->hdd_blocks; tag += step) {
		if (x->marked(x->data, tag * x->geo->nr_lines + line))
			return true;
		if (!step)
			break;
		cond_resched();
	}
	return false;
}

/*
 * Take table block @idx's entries (@blk, of format generation @gen) into the
 * table, its page coming, each unless a write reached its line first (l2p.c);
 * with @unclean, not those of marked regions. O(block). Returns 0, 1 when the
 * block must be written again (it held what must go), or -EILSEQ when it or
 * an entry in it was damaged (it must be written again too).
 */
int flaz_table_load(const struct flaz_table_ctx *x, u64 idx, const void *blk, u64 gen,
		    bool unclean)
{
	const struct flaz_geometry *g = x->geo;
	struct flaz_entry_info ei;
	struct flaz_entry e;
	int ret = 0, r;
	u64 commit, line;
	u32 i;

	r = flaz_meta_decode(blk, gen, idx, &commit, x->entries);
	if (r == -ENODATA)
		return 0;
	if (r)
		return -EILSEQ;
	for (i = 0; i < FLAZ_META_ENTRIES; i++) {
		line = idx * FLAZ_META_ENTRIES + i;
		flaz_entry_unpack(x->entries[i], g, &ei);
		if (!ei.units)
			continue;
		if (!flaz_entry_valid(&ei, g, line, x->hdd_blocks) ||
		    (ei.units == FLAZ_ENTRY_ZERO_UNITS && !flaz_l2p_zero_fits(x->l2p)) ||
		    (ei.cold && !x->cold)) {
			ret = -EILSEQ;
			continue;
		}
		/* left by an eviction: the extent has had other tenants since */
		if (ei.units != FLAZ_ENTRY_ZERO_UNITS && ei.gen != flaz_l2p_gen(x->l2p, ei.ext))
			continue;
		if (unclean && entry_marked(x, line, &ei)) {
			ret = ret ?: 1;
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
			e.gen = ei.gen;
		}
		/* a block with this line and tag: flaz_l2p_load() keeps the tag bits it stores */
		flaz_l2p_load(x->l2p, ei.tag * g->nr_lines + line, &e);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_table_load);

/*
 * Encode table block @idx, its page resident, into @blk for format generation
 * @gen and commit @commit. O(block). Returns whether an entry had to wait for
 * a later commit (its slot not durable yet).
 */
bool flaz_table_encode(const struct flaz_table_ctx *x, u64 idx, u64 gen, u64 commit, void *blk)
{
	struct flaz_entry_info ei;
	bool again = false;
	struct flaz_entry e;
	u64 line;
	u32 i;

	for (i = 0; i < FLAZ_META_ENTRIES; i++) {
		line = idx * FLAZ_META_ENTRIES + i;
		x->entries[i] = 0;
		if (line >= x->geo->nr_lines)
			continue;
		memset(&ei, 0, sizeof(ei));
		/* a void entry reads as empty: it is written so */
		flaz_l2p_lock(x->l2p, line);
		flaz_l2p_get(x->l2p, line, &e);
		flaz_l2p_unlock(x->l2p, line);
		ei.gen = e.gen;
		ei.tag = e.tag;
		if (e.kind == FLAZ_ENTRY_ZERO) {
			ei.units = FLAZ_ENTRY_ZERO_UNITS;
		} else if (e.kind == FLAZ_ENTRY_SLOT) {
			/* not durable on the SSD yet: the next commit takes it */
			if (!x->durable(x->data, e.ext)) {
				again = true;
				continue;
			}
			ei.units = e.bytes / FLAZ_SLOT_ALIGN;
			ei.off = e.off;
			ei.ext = e.ext;
			ei.cold = e.cold;
		}
		x->entries[i] = flaz_entry_pack(&ei, x->geo);
	}
	flaz_meta_encode(blk, gen, commit, idx, x->entries);
	return again;
}

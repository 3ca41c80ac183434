/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz logical-to-physical table, inside: shared by l2p.c (the entries,
 * their locks, generations and counts) and resident.c (which pages are in
 * DRAM), and by nothing else.
 */
#ifndef DM_FLAZ_L2P_PRIV_H
#define DM_FLAZ_L2P_PRIV_H

#include <linux/cache.h>
#include <linux/math64.h>
#include <linux/spinlock.h>

#include "flaz.h"
#include "format.h"

#define L2P_LEN_BITS		8
#define L2P_ZERO		((1U << L2P_LEN_BITS) - 1)
#define L2P_TOMB		BIT_ULL(L2P_LEN_BITS)
#define L2P_MAX_TAG_BITS	FLAZ_TAG_BITS
#define L2P_GROUP		64
#define L2P_STRIPES		256
#define L2P_HEAT_BITS		2
#define L2P_HEAT_MAX		FLAZ_HEAT_MAX
#define L2P_PAGE_LINES		(FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES)
#define L2P_COMING		1	/* page state: being paged in, tombstones wanted */
#define L2P_LEAVING		2	/* page state: to go once clean; fills leave it be */
/* pages out make_room() may pass per resident page it may meet: a share of 1/64 */
#define L2P_ROOM_PASS		64
/* a raw slot in an extent's slot counter: 1 << 16, an int (counts may go below 0) */
#define L2P_RAW_ONE		0x10000
static_assert(FLAZ_MAX_EXTENT_KIB * 1024 / 64 < L2P_RAW_ONE / 2);
static_assert(L2P_HEAT_MAX < (1U << L2P_HEAT_BITS));
/*
 * A page's lines in the per-line bitmaps (heat, tombstones) take a whole number
 * of groups, L2P_PAGE_SLOTS bits each, so that no word of them holds lines of
 * two pages, whose locks differ (l2p_slot()).
 */
#define L2P_PAGE_SLOTS		(DIV_ROUND_UP(L2P_PAGE_LINES, L2P_GROUP) * L2P_GROUP)
/* paging takes a page's stripes nested: lockdep tells apart 8 subclasses */
static_assert(FLAZ_L2P_PAGE_STRIPES <= 8 && L2P_STRIPES % FLAZ_L2P_PAGE_STRIPES == 0);

/* A lock per cache line: CPUs taking neighbouring stripes do not share one. */
struct l2p_lock {
	spinlock_t lock;	/* a stripe: the lines of the groups that map to it */
} ____cacheline_aligned_in_smp;

struct flaz_l2p {
	u64 **pages;		/* entry words, L2P_PAGE_LINES lines a page; NULL: absent */
	struct kmem_cache *page_cache;	/* of pages: page_words words each */
	/*
	 * Words of a page: its lines' entries, whole groups. Every page takes as
	 * many (the last one's spare lines stay empty): they come from one cache.
	 */
	u64 page_words;
	u64 nr_pages;
	u8 *state;		/* per page: L2P_COMING, L2P_LEAVING (paging serialised) */
	u8 *ref;		/* per page: used since the clock hand passed */
	u64 hand;		/* the next page trim() looks at */
	u64 resident;		/* bytes of resident pages */
	u64 leaving;		/* of which leaving (paging serialised, read by meta_trim()) */
	/*
	 * A bit per line (at l2p_slot()) of a page not resident that a write
	 * emptied. A word is a group of lines, so its stripe's lock covers it.
	 */
	unsigned long *tombs;
	unsigned long *dirty;	/* a bit per table block */
	u64 *heat;		/* L2P_HEAT_BITS per line, at l2p_slot() */
	u16 *gens;		/* per extent, whole gen blocks: its generation */
	unsigned long *gen_dirty;	/* per gen block: a gen changed since written */
	/*
	 * Per extent, of the slots lines point at: bytes, slots (and raw ones, in
	 * L2P_RAW_ONE units of the same counter), cold bytes.
	 */
	atomic_t *live, *slots, *cold_live;
	u64 nr_extents;
	u64 nr_gen_blocks;
	u64 nr_blocks;
	u64 nr_lines;
	u64 bytes;
	u32 bits, off_bits, ext_bits, tag_bits, full_tag_bits, cold_bits, gen_bits;
	u16 worn;
	bool zero_fits;
	atomic64_t blocks, logical, physical, raw, cold;
	struct l2p_lock locks[L2P_STRIPES];
};

/* @line's place in the per-line bitmaps: its page's slots, then its index there. */
static inline u64 l2p_slot(u64 line)
{
	u32 i;
	u64 p = div_u64_rem(line, L2P_PAGE_LINES, &i);

	return p * L2P_PAGE_SLOTS + i;
}

/* Page @p's @i-th stripe: a page's groups take FLAZ_L2P_PAGE_STRIPES in turn. */
static inline spinlock_t *page_stripe(struct flaz_l2p *t, u64 p, u32 i)
{
	return &t->locks[(p * FLAZ_L2P_PAGE_STRIPES + i) % L2P_STRIPES].lock;
}

void flaz_l2p_set_raw(struct flaz_l2p *t, u64 line, u64 v);
void flaz_l2p_account(struct flaz_l2p *t, const struct flaz_entry *e, int sign);
u64 flaz_l2p_drop_pages(struct flaz_l2p *t, u64 first, u64 end);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz logical-to-physical table: one bit-packed entry per cache line, sized
 * from the geometry so the table costs only the bits it needs.
 *
 * An entry is, from bit 0: the slot's size in FLAZ_SLOT_ALIGN units (0: empty,
 * L2P_ZERO: an all-zero block with no slot), its offset in the extent in the same
 * units, the extent, a tag (block / nr_lines) cut to at most L2P_MAX_TAG_BITS,
 * and on a volume with a cold codec a bit for a slot in it.
 * A cut tag can match another block, so a hit is confirmed by the slot header's
 * block number; a zero entry has no header, so it keeps the whole tag in the bits
 * a slot would use, and zero blocks are stored as slots where it does not fit.
 *
 * Entries straddle u64 words, but 64 entries take exactly entry_bits words, so a
 * lock stripe covering whole groups of 64 lines never shares a word with another.
 * The entries are kept in pages of FLAZ_L2P_PAGE_BLOCKS table blocks (format.h),
 * each a whole number of such groups: a table block is in one page, so a page
 * can be read from the SSD's table on its own. Only some pages need be in DRAM
 * (resident): meta.c pages them in from the SSD and out to keep within
 * table_cache_kib, clean ones first. A line of a page not resident reads as
 * empty (its block is a miss: the HDD has it). A write to it cannot drop the
 * entry the SSD holds for it, so it marks the line's table block dirty instead:
 * the next commit writes that block empty, and a page-in takes it as empty
 * (void); a dirty page paged out leaves its dirty blocks so, losing what they
 * held. While the table loads, a write to a page not loaded yet leaves a
 * tombstone bit instead, which the page-in turns into a tombstone (below), so
 * the write costs its own line only. The counters (usage, live) count resident
 * entries only: the cleaner takes the slots of absent ones for dead, and the
 * eviction of their extent voids them.
 *
 * A page's lines are locked by FLAZ_L2P_PAGE_STRIPES of the stripes, so paging
 * it in or out takes that many locks, not one per group.
 *
 * While a page is paged in (coming), a write to a line not read yet leaves a
 * tombstone there: an empty entry with a bit set, which every reader takes as
 * empty and the loader as taken, so it never brings back what the SSD held for
 * that line.
 *
 * The live slot bytes are counted in all, raw (a raw slot is the only one of
 * its size: fill.c keeps compressed ones smaller) and in the cold codec. For
 * the cleaner, the table also keeps the bytes of slots each extent holds
 * that lines still point at (live), and a line's heat: a 2-bit count of hits
 * since it was installed, halved when the cleaner moves it (a second chance
 * must be earned again). The heat of a stripe's lines is in words of its own,
 * so the stripe's lock covers it.
 *
 * Every change marks the table block (format.h) holding the line dirty, so a
 * commit (meta.c) writes only what changed. An eviction marks it stale instead:
 * the entry left on the SSD is void by its extent's generation, so the block
 * needs writing only before that generation comes round again.
 */
#include <linux/bitmap.h>
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "flaz.h"
#include "format.h"

#define L2P_LEN_BITS		8
#define L2P_ZERO		((1U << L2P_LEN_BITS) - 1)
#define L2P_TOMB		(1ULL << L2P_LEN_BITS)
#define L2P_MAX_TAG_BITS	FLAZ_TAG_BITS
#define L2P_GROUP		64
#define L2P_STRIPES		256
#define L2P_HEAT_BITS		2
#define L2P_HEAT_MAX		FLAZ_HEAT_MAX
#define L2P_PAGE_LINES		(FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES)
static_assert(L2P_HEAT_MAX < (1U << L2P_HEAT_BITS));
static_assert(L2P_PAGE_LINES % L2P_GROUP == 0);
/* paging takes a page's stripes nested: lockdep tells apart 8 subclasses */
static_assert(FLAZ_L2P_PAGE_STRIPES <= 8 && L2P_STRIPES % FLAZ_L2P_PAGE_STRIPES == 0);

/* A lock per cache line: CPUs taking neighbouring stripes do not share one. */
struct l2p_lock {
	spinlock_t lock;
} ____cacheline_aligned_in_smp;

struct flaz_l2p {
	u64 **pages;		/* entry words, L2P_PAGE_LINES lines a page; NULL: absent */
	u64 nr_pages;
	u8 *coming;		/* per page: being paged in, tombstones wanted */
	u8 *ref;		/* per page: used since the clock hand passed */
	u64 hand;		/* the next page trim() looks at */
	u64 resident;		/* bytes of resident pages */
	/*
	 * While the table loads: a bit per line of a page not in yet that a write
	 * touched. A word is a group of lines, so its stripe's lock covers it.
	 */
	unsigned long *tombs;
	unsigned long *dirty;	/* a bit per table block */
	unsigned long *stale;	/* a bit per table block: holds a void entry */
	u64 *heat;		/* L2P_HEAT_BITS per line */
	atomic_t *live;		/* per extent: bytes of the slots lines point at */
	u64 nr_extents;
	u64 nr_blocks;
	u64 nr_lines;
	u64 bytes;
	u32 bits, off_bits, ext_bits, tag_bits, full_tag_bits, cold_bits;
	bool zero_fits;
	atomic64_t blocks, logical, physical, raw, cold;
	struct l2p_lock locks[L2P_STRIPES];
};

/* Heat words: whole groups of lines, so no word is shared by two stripes. */
static u64 heat_words(u64 nr_lines)
{
	return DIV_ROUND_UP_ULL(nr_lines, L2P_GROUP) * L2P_GROUP * L2P_HEAT_BITS / 64;
}

static u32 bits_for(u64 max_value)
{
	return max_value ? fls64(max_value) : 1;
}

/* Words of page @p: its lines, the last page's rounded up to a whole group. */
static u64 page_words(struct flaz_l2p *t, u64 p)
{
	u64 lines = min_t(u64, t->nr_lines - p * L2P_PAGE_LINES, L2P_PAGE_LINES);

	return DIV_ROUND_UP_ULL(lines, L2P_GROUP) * t->bits;
}

struct flaz_l2p *flaz_l2p_create(u64 nr_lines, u64 nr_extents, u32 extent_bytes,
				 u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t;
	u64 words;
	int i;

	if (!nr_lines || !nr_extents || !hdd_blocks)
		return ERR_PTR(-EINVAL);
	t = kvzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->nr_lines = nr_lines;
	t->off_bits = ilog2(extent_bytes / FLAZ_SLOT_ALIGN);
	t->ext_bits = bits_for(nr_extents - 1);
	t->full_tag_bits = bits_for(div64_u64(hdd_blocks - 1, nr_lines));
	t->tag_bits = min_t(u32, t->full_tag_bits, L2P_MAX_TAG_BITS);
	t->cold_bits = cold;
	t->bits = L2P_LEN_BITS + t->off_bits + t->ext_bits + t->tag_bits + t->cold_bits;
	t->zero_fits = t->full_tag_bits <= t->bits - L2P_LEN_BITS;
	words = DIV_ROUND_UP_ULL(nr_lines, L2P_GROUP) * t->bits;
	t->bytes = words * sizeof(u64);
	t->nr_blocks = DIV_ROUND_UP_ULL(nr_lines, FLAZ_META_ENTRIES);
	t->nr_pages = DIV_ROUND_UP_ULL(nr_lines, L2P_PAGE_LINES);
	t->pages = kvcalloc(t->nr_pages, sizeof(*t->pages), GFP_KERNEL);
	t->coming = kvzalloc(t->nr_pages, GFP_KERNEL);
	t->tombs = kvcalloc(BITS_TO_LONGS(nr_lines), sizeof(long), GFP_KERNEL);
	t->ref = kvzalloc(t->nr_pages, GFP_KERNEL);
	t->dirty = kvcalloc(BITS_TO_LONGS(t->nr_blocks), sizeof(long), GFP_KERNEL);
	t->stale = kvcalloc(BITS_TO_LONGS(t->nr_blocks), sizeof(long), GFP_KERNEL);
	t->heat = kvcalloc(heat_words(nr_lines), sizeof(u64), GFP_KERNEL);
	t->nr_extents = nr_extents;
	t->live = kvcalloc(nr_extents, sizeof(atomic_t), GFP_KERNEL);
	if (!t->pages || !t->coming || !t->tombs || !t->ref || !t->dirty || !t->stale || !t->heat || !t->live) {
		flaz_l2p_destroy(t);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < L2P_STRIPES; i++)
		spin_lock_init(&t->locks[i].lock);
	return t;
}

void flaz_l2p_destroy(struct flaz_l2p *t)
{
	u64 p;

	if (IS_ERR_OR_NULL(t))
		return;
	for (p = 0; t->pages && p < t->nr_pages; p++)
		kvfree(t->pages[p]);
	kvfree(t->pages);
	kvfree(t->coming);
	kvfree(t->tombs);
	kvfree(t->ref);
	kvfree(t->dirty);
	kvfree(t->stale);
	kvfree(t->heat);
	kvfree(t->live);
	kvfree(t);
}

u64 flaz_l2p_bytes(struct flaz_l2p *t)
{
	return t->bytes;
}

/*
 * Everything the table allocates: the resident pages, the page pointers and
 * state, the dirty and stale bits, the heat, the live bytes, the struct.
 */
u64 flaz_l2p_dram_bytes(struct flaz_l2p *t)
{
	return READ_ONCE(t->resident) + t->nr_pages * (sizeof(*t->pages) + 2) +
	       (READ_ONCE(t->tombs) ? BITS_TO_LONGS(t->nr_lines) * sizeof(long) : 0) +
	       2 * BITS_TO_LONGS(t->nr_blocks) * sizeof(long) +
	       heat_words(t->nr_lines) * sizeof(u64) + t->nr_extents * sizeof(atomic_t) +
	       sizeof(*t);
}

u64 flaz_l2p_line(struct flaz_l2p *t, u64 block)
{
	u64 line;

	div64_u64_rem(block, t->nr_lines, &line);
	return line;
}

/* Page @p's @i-th stripe: a page's groups take FLAZ_L2P_PAGE_STRIPES in turn. */
static spinlock_t *page_stripe(struct flaz_l2p *t, u64 p, u32 i)
{
	return &t->locks[(p * FLAZ_L2P_PAGE_STRIPES + i) % L2P_STRIPES].lock;
}

static spinlock_t *line_lock(struct flaz_l2p *t, u64 line)
{
	u32 i;
	u64 p = div_u64_rem(line, L2P_PAGE_LINES, &i);

	return page_stripe(t, p, (i / L2P_GROUP) % FLAZ_L2P_PAGE_STRIPES);
}

void flaz_l2p_lock(struct flaz_l2p *t, u64 line)
	__acquires(line_lock(t, line))
{
	spin_lock(line_lock(t, line));
}

void flaz_l2p_unlock(struct flaz_l2p *t, u64 line)
	__releases(line_lock(t, line))
{
	spin_unlock(line_lock(t, line));
}

/*
 * The word holding the first bit of @line's entry, NULL when its page is not
 * resident; *shift gets the bit's place in it.
 */
static u64 *entry_word(struct flaz_l2p *t, u64 line, u32 *shift)
{
	u32 i;
	u64 p = div_u64_rem(line, L2P_PAGE_LINES, &i);
	u64 bit = (u64)i * t->bits;

	*shift = bit % 64;
	return t->pages[p] ? &t->pages[p][bit / 64] : NULL;
}

static u64 get_raw(struct flaz_l2p *t, u64 line)
{
	u32 shift;
	u64 *w = entry_word(t, line, &shift);
	u64 v;

	if (!w)
		return 0;
	v = w[0] >> shift;
	if (shift + t->bits > 64)
		v |= w[1] << (64 - shift);
	return t->bits == 64 ? v : v & GENMASK_ULL(t->bits - 1, 0);
}

static void set_raw(struct flaz_l2p *t, u64 line, u64 v)
{
	u32 shift;
	u64 *w = entry_word(t, line, &shift);
	u64 mask = GENMASK_ULL(t->bits - 1, 0);

	v &= mask;	/* a field wider than its slot must not reach the next line */
	w[0] = (w[0] & ~(mask << shift)) | (v << shift);
	if (shift + t->bits > 64)
		w[1] = (w[1] & ~(mask >> (64 - shift))) | (v >> (64 - shift));
}

static u64 tag_of(struct flaz_l2p *t, u64 block)
{
	return div64_u64(block, t->nr_lines);
}

static u64 field(u64 v, u32 *pos, u32 bits)
{
	u64 f = (v >> *pos) & GENMASK_ULL(bits - 1, 0);

	*pos += bits;
	return f;
}

void flaz_l2p_get(struct flaz_l2p *t, u64 line, struct flaz_entry *e)
{
	u64 v = get_raw(t, line);
	u32 pos = 0;
	u32 units = field(v, &pos, L2P_LEN_BITS);

	memset(e, 0, sizeof(*e));
	if (!units) {
		e->kind = FLAZ_ENTRY_NONE;
	} else if (units == L2P_ZERO) {
		e->kind = FLAZ_ENTRY_ZERO;
		e->tag = v >> L2P_LEN_BITS;
	} else {
		e->kind = FLAZ_ENTRY_SLOT;
		e->bytes = units * FLAZ_SLOT_ALIGN;
		e->off = field(v, &pos, t->off_bits) * FLAZ_SLOT_ALIGN;
		e->ext = field(v, &pos, t->ext_bits);
		e->tag = field(v, &pos, t->tag_bits);
		e->cold = t->cold_bits && field(v, &pos, 1);
	}
}

static void account(struct flaz_l2p *t, const struct flaz_entry *e, int sign)
{
	if (e->kind == FLAZ_ENTRY_NONE)
		return;
	atomic64_add(sign, &t->blocks);
	if (e->kind == FLAZ_ENTRY_SLOT) {
		atomic64_add(sign * (s64)FLAZ_BLOCK_SIZE, &t->logical);
		atomic64_add(sign * (s64)e->bytes, &t->physical);
		atomic_add(sign * (int)e->bytes, &t->live[e->ext]);
		if (e->bytes == FLAZ_MAX_SLOT_BYTES)
			atomic64_add(sign * (s64)e->bytes, &t->raw);
		else if (e->cold && t->cold_bits)
			atomic64_add(sign * (s64)e->bytes, &t->cold);
	}
}

static u32 heat_get(struct flaz_l2p *t, u64 line)
{
	u64 bit = line * L2P_HEAT_BITS;

	return (t->heat[bit / 64] >> (bit % 64)) & L2P_HEAT_MAX;
}

static void heat_set(struct flaz_l2p *t, u64 line, u32 v)
{
	u64 bit = line * L2P_HEAT_BITS;
	u64 *w = &t->heat[bit / 64];

	*w = (*w & ~((u64)L2P_HEAT_MAX << (bit % 64))) | ((u64)v << (bit % 64));
}

static void store(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		  struct flaz_entry *old)
{
	u64 line = flaz_l2p_line(t, block);
	u64 tag = tag_of(t, block);
	u64 v = 0;
	u32 pos = L2P_LEN_BITS;

	flaz_l2p_get(t, line, old);
	account(t, old, -1);
	if (e->kind == FLAZ_ENTRY_ZERO) {
		v = L2P_ZERO | tag << L2P_LEN_BITS;
	} else if (e->kind == FLAZ_ENTRY_SLOT) {
		v = e->bytes / FLAZ_SLOT_ALIGN;
		v |= (u64)(e->off / FLAZ_SLOT_ALIGN) << pos;
		pos += t->off_bits;
		v |= (u64)e->ext << pos;
		pos += t->ext_bits;
		v |= (tag & GENMASK_ULL(t->tag_bits - 1, 0)) << pos;
		pos += t->tag_bits;
		if (t->cold_bits)
			v |= (u64)e->cold << pos;
	}
	set_raw(t, line, v);
	account(t, e, 1);
	heat_set(t, line, 0);
}

/*
 * Store @e for @block in its line (lock held); @old gets the entry it replaces.
 * Returns false, storing nothing, when the line's page is not resident.
 */
bool flaz_l2p_set(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		  struct flaz_entry *old)
{
	u64 line = flaz_l2p_line(t, block);

	if (!flaz_l2p_resident(t, line)) {
		memset(old, 0, sizeof(*old));
		return false;
	}
	store(t, block, e, old);
	set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
	return true;
}

/* Put loaded @e in @block's line (its page coming) unless a write touched it since. */
bool flaz_l2p_load(struct flaz_l2p *t, u64 block, const struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry old;
	bool fresh;

	flaz_l2p_lock(t, line);
	fresh = flaz_l2p_resident(t, line) && !get_raw(t, line);
	if (fresh)
		store(t, block, e, &old);
	flaz_l2p_unlock(t, line);
	return fresh;
}

static bool coming(struct flaz_l2p *t, u64 line)
{
	/* seen clear: the loader's stores to the page are seen too (page_done) */
	return smp_load_acquire(&t->coming[div_u64(line, L2P_PAGE_LINES)]);
}

/*
 * A write to a block of @line whose entry is gone (lock held): if the line's
 * page is being paged in, keep the loader out of the line; if the page is not
 * resident, its table block on the SSD may still point at an old slot for the
 * block, so it must be written (empty) again before the write's region mark
 * goes, and a page-in takes it as empty; while the table loads, the line's
 * tombstone bit does that for the line alone.
 */
static void drop_absent(struct flaz_l2p *t, u64 line)
{
	if (!flaz_l2p_resident(t, line)) {
		if (t->tombs)
			__set_bit(line, t->tombs);
		else
			set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
		return;
	}
	if (!coming(t, line) || get_raw(t, line))
		return;
	set_raw(t, line, L2P_TOMB);
	set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
}

/* A write to @block: empty its line (lock held). Returns whether it was cached. */
bool flaz_l2p_drop_block(struct flaz_l2p *t, u64 block)
{
	static const struct flaz_entry none;
	struct flaz_entry e, old;

	if (flaz_l2p_lookup(t, block, &e)) {
		flaz_l2p_set(t, block, &none, &old);
		return true;
	}
	drop_absent(t, flaz_l2p_line(t, block));
	return false;
}

/*
 * Whether the entry in @block's line may hold @block (lock held): a zero entry
 * must match exactly, a slot by its (possibly cut) tag.
 */
bool flaz_l2p_lookup(struct flaz_l2p *t, u64 block, struct flaz_entry *e)
{
	u64 tag = tag_of(t, block);

	flaz_l2p_get(t, flaz_l2p_line(t, block), e);
	switch (e->kind) {
	case FLAZ_ENTRY_ZERO:
		return e->tag == tag;
	case FLAZ_ENTRY_SLOT:
		return e->tag == (tag & GENMASK_ULL(t->tag_bits - 1, 0));
	default:
		return false;
	}
}

/* Whether an all-zero @block can be a table flag rather than a slot. */
bool flaz_l2p_zero_fits(struct flaz_l2p *t)
{
	return t->zero_fits;
}

/*
 * Empty every line of pages @first..@end - 1 whose slot lies in an extent set in
 * @victims (evicted: their table blocks become stale), or every line when
 * @victims is NULL (dirty, as for a write). Returns how many were dropped.
 */
static u64 drop_pages(struct flaz_l2p *t, const unsigned long *victims, u64 first, u64 end)
{
	static const struct flaz_entry none;
	struct flaz_entry e, old;
	u64 line, stop, dropped = 0;

	line = first * L2P_PAGE_LINES;
	end = min(end * L2P_PAGE_LINES, t->nr_lines);
	for (; line < end; line = stop) {
		stop = min(line + L2P_GROUP, end);
		flaz_l2p_lock(t, line);
		/* an absent page's entries are void by their extents' gens, or by this */
		if (!flaz_l2p_resident(t, line)) {
			for (; !victims && line < stop; line++)
				drop_absent(t, line);
			flaz_l2p_unlock(t, stop - 1);
			continue;
		}
		for (; line < stop; line++) {
			flaz_l2p_get(t, line, &e);
			if (!victims)
				drop_absent(t, line);
			if (e.kind == FLAZ_ENTRY_NONE ||
			    (victims && (e.kind != FLAZ_ENTRY_SLOT || !test_bit(e.ext, victims))))
				continue;
			/* A line index is a block whose tag is 0: enough to address it. */
			store(t, line, &none, &old);
			set_bit(div_u64(line, FLAZ_META_ENTRIES), victims ? t->stale : t->dirty);
			dropped++;
		}
		flaz_l2p_unlock(t, stop - 1);
		cond_resched();
	}
	return dropped;
}

u64 flaz_l2p_drop(struct flaz_l2p *t, const unsigned long *victims)
{
	return drop_pages(t, victims, 0, t->nr_pages);
}

/* A hit on @line (lock held): its heat goes up, to L2P_HEAT_MAX at most. */
void flaz_l2p_touch(struct flaz_l2p *t, u64 line)
{
	u64 p = div_u64(line, L2P_PAGE_LINES);
	u32 h = heat_get(t, line);

	if (h < L2P_HEAT_MAX)
		heat_set(t, line, h + 1);
	/* a store only when the clock took it: not one per hit */
	if (!READ_ONCE(t->ref[p]))
		WRITE_ONCE(t->ref[p], 1);
}

/*
 * Whether @block's line still points at the slot at @off of extent @ext (lock
 * held): the cleaner's liveness test, the slot's back pointer against the
 * table. *heat gets the line's heat.
 */
bool flaz_l2p_points(struct flaz_l2p *t, u64 block, u32 ext, u32 off, u32 *heat)
{
	struct flaz_entry e;

	if (!flaz_l2p_lookup(t, block, &e) || e.kind != FLAZ_ENTRY_SLOT ||
	    e.ext != ext || e.off != off)
		return false;
	*heat = heat_get(t, flaz_l2p_line(t, block));
	return true;
}

/* The cleaner moved @block's slot to @e (lock held): half its heat goes along. */
void flaz_l2p_move(struct flaz_l2p *t, u64 block, const struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	u32 h = heat_get(t, line);
	struct flaz_entry old;

	flaz_l2p_set(t, block, e, &old);
	heat_set(t, line, h / 2);
}

/* The cleaner left @block's slot where it is, a lap more (lock held): half its heat stays. */
void flaz_l2p_cool(struct flaz_l2p *t, u64 block)
{
	u64 line = flaz_l2p_line(t, block);

	heat_set(t, line, heat_get(t, line) / 2);
}

/*
 * The cleaner dropped @block's slot (lock held): the line empties, and its
 * table block on the SSD holds an entry void by the extent's next generation.
 */
void flaz_l2p_evict(struct flaz_l2p *t, u64 block)
{
	static const struct flaz_entry none;
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry old;

	store(t, block, &none, &old);
	set_bit(div_u64(line, FLAZ_META_ENTRIES), t->stale);
}

/* Bytes of extent @ext's slots that lines point at. */
u32 flaz_l2p_live(struct flaz_l2p *t, u32 ext)
{
	return max(atomic_read(&t->live[ext]), 0);
}

u64 flaz_l2p_nr_blocks(struct flaz_l2p *t)
{
	return t->nr_blocks;
}

/*
 * Whether table block @idx must be written: it changed since it was last taken,
 * or, with @stale, it holds a void entry. Takes it.
 */
bool flaz_l2p_take_dirty(struct flaz_l2p *t, u64 idx, bool stale)
{
	bool dirty = test_and_clear_bit(idx, t->dirty);

	/* written from the table in memory, it holds no void entry any more */
	if (dirty || stale)
		return test_and_clear_bit(idx, t->stale) || dirty;
	return false;
}

/* Whether @line's page is resident (lock held, or paging serialised). */
bool flaz_l2p_resident(struct flaz_l2p *t, u64 line)
{
	return READ_ONCE(t->pages[div_u64(line, L2P_PAGE_LINES)]);
}

u64 flaz_l2p_nr_pages(struct flaz_l2p *t)
{
	return t->nr_pages;
}

u64 flaz_l2p_page_of(u64 line)
{
	return div_u64(line, L2P_PAGE_LINES);
}

/* Bytes of the resident pages. */
u64 flaz_l2p_resident_bytes(struct flaz_l2p *t)
{
	return READ_ONCE(t->resident);
}

static void lock_stripes(struct flaz_l2p *t, u64 p)
{
	u32 i;

	for (i = 0; i < FLAZ_L2P_PAGE_STRIPES; i++)
		spin_lock_nested(page_stripe(t, p, i), i);
}

static void unlock_stripes(struct flaz_l2p *t, u64 p)
{
	u32 i;

	for (i = FLAZ_L2P_PAGE_STRIPES; i-- > 0;)
		spin_unlock(page_stripe(t, p, i));
}

/* Page @p's table blocks: the first, and how many (the last page's may be fewer). */
u32 flaz_l2p_page_blocks(struct flaz_l2p *t, u64 p, u64 *first)
{
	*first = p * FLAZ_L2P_PAGE_BLOCKS;
	return min_t(u64, t->nr_blocks - *first, FLAZ_L2P_PAGE_BLOCKS);
}

/*
 * The tombstone bits of page @p's lines (its lock held): into tombstones in the
 * page, or without one, into dirty (void) table blocks. Either way the block
 * is written again.
 */
static void take_tombs(struct flaz_l2p *t, u64 p)
{
	u64 line = p * L2P_PAGE_LINES;
	u64 end = min(t->nr_lines, line + L2P_PAGE_LINES);

	if (!t->tombs)
		return;
	for (line = find_next_bit(t->tombs, end, line); line < end;
	     line = find_next_bit(t->tombs, end, line + 1)) {
		__clear_bit(line, t->tombs);
		if (t->pages[p])
			set_raw(t, line, L2P_TOMB);
		set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
	}
}

/*
 * Make page @p resident and coming, all its lines empty, for the caller to
 * load (flaz_l2p_load()) and then call flaz_l2p_page_done(). Callers serialise
 * paging. *void_blocks gets a bit per table block of the page that a write
 * made dirty while it was absent: the SSD's copy of it must not be loaded.
 */
int flaz_l2p_page_in(struct flaz_l2p *t, u64 p, u32 *void_blocks)
{
	u64 bytes = page_words(t, p) * sizeof(u64), first;
	u32 i, n = flaz_l2p_page_blocks(t, p, &first);
	/* for a fill: reclaim must not write to the volume it serves */
	unsigned int noio = memalloc_noio_save();
	u64 *page = kvzalloc(bytes, GFP_KERNEL);

	memalloc_noio_restore(noio);

	if (WARN_ON_ONCE(t->pages[p])) {
		kvfree(page);
		return -EEXIST;
	}
	*void_blocks = 0;
	lock_stripes(t, p);
	for (i = 0; i < n; i++)
		if (test_bit(first + i, t->dirty))
			*void_blocks |= BIT(i);
	if (page) {
		t->coming[p] = 1;
		t->ref[p] = 1;
		WRITE_ONCE(t->pages[p], page);
	}
	take_tombs(t, p);
	unlock_stripes(t, p);
	if (!page)
		return -ENOMEM;
	WRITE_ONCE(t->resident, t->resident + bytes);
	return 0;
}

/*
 * The table is loaded (or will not be): writes to absent pages void their
 * table blocks from now on. Every page was paged in meanwhile, or is void.
 */
void flaz_l2p_tombs_end(struct flaz_l2p *t)
{
	unsigned long *tombs = t->tombs;
	int i;

	if (!tombs)
		return;
	WRITE_ONCE(t->tombs, NULL);
	/* a writer still using the bits holds a stripe's lock */
	for (i = 0; i < L2P_STRIPES; i++) {
		spin_lock(&t->locks[i].lock);
		spin_unlock(&t->locks[i].lock);
	}
	kvfree(tombs);
}

/* Page @p is loaded: writes to its empty lines need no tombstones now. */
void flaz_l2p_page_done(struct flaz_l2p *t, u64 p)
{
	/* after every store of the load: see coming() */
	smp_store_release(&t->coming[p], 0);
}

/* Empty every line of page @p, as a write to each would. */
void flaz_l2p_drop_page(struct flaz_l2p *t, u64 p)
{
	drop_pages(t, NULL, p, p + 1);
}

/*
 * Page @p out if it is clean (the SSD holds every entry it does), or with
 * @dirty also if not: its dirty table blocks are then void, what they held
 * lost. Its entries leave the counters, and its table blocks holding slots
 * count as stale: their entries turn void as their extents are evicted, which
 * the page cannot see.
 */
static bool page_out(struct flaz_l2p *t, u64 p, bool dirty)
{
	u64 bytes = page_words(t, p) * sizeof(u64), first, line, end;
	u32 n = flaz_l2p_page_blocks(t, p, &first);
	struct flaz_entry e;
	u64 *page;

	lock_stripes(t, p);
	page = t->pages[p];
	if (!page || t->coming[p] ||
	    (!dirty && find_next_bit(t->dirty, first + n, first) < first + n)) {
		unlock_stripes(t, p);
		return false;
	}
	end = min(t->nr_lines, (p + 1) * L2P_PAGE_LINES);
	for (line = p * L2P_PAGE_LINES; line < end; line++) {
		flaz_l2p_get(t, line, &e);
		account(t, &e, -1);
		if (e.kind == FLAZ_ENTRY_SLOT)
			set_bit(div_u64(line, FLAZ_META_ENTRIES), t->stale);
	}
	WRITE_ONCE(t->pages[p], NULL);
	unlock_stripes(t, p);
	kvfree(page);
	WRITE_ONCE(t->resident, t->resident - bytes);
	return true;
}

/*
 * Page out pages least recently used first (a clock over the pages), clean
 * ones, then with @dirty any, until the resident ones take at most @budget
 * bytes. Callers serialise paging and have no table block write in flight.
 * Returns how many went.
 */
u64 flaz_l2p_trim(struct flaz_l2p *t, u64 budget, bool dirty)
{
	u64 step, p, out = 0;

	for (step = 0; t->resident > budget && step < 4 * t->nr_pages; step++) {
		p = t->hand;
		t->hand = p + 1 < t->nr_pages ? p + 1 : 0;
		if (!READ_ONCE(t->pages[p]))
			continue;
		if (READ_ONCE(t->ref[p])) {
			WRITE_ONCE(t->ref[p], 0);
			continue;
		}
		/* two rounds for clean pages first: one may clear the refs */
		if (page_out(t, p, dirty && step >= 2 * t->nr_pages))
			out++;
		cond_resched();
	}
	return out;
}

/* Table block @idx on the SSD holds an entry that is void by its extent's gen. */
void flaz_l2p_set_stale(struct flaz_l2p *t, u64 idx)
{
	set_bit(idx, t->stale);
}

/* Table block @idx must be written (again) by the next commit. */
void flaz_l2p_set_dirty(struct flaz_l2p *t, u64 idx)
{
	set_bit(idx, t->dirty);
}

bool flaz_l2p_any_dirty(struct flaz_l2p *t)
{
	return find_first_bit(t->dirty, t->nr_blocks) < t->nr_blocks;
}

void flaz_l2p_usage(struct flaz_l2p *t, u64 *blocks, u64 *logical, u64 *physical)
{
	*blocks = atomic64_read(&t->blocks);
	*logical = atomic64_read(&t->logical);
	*physical = atomic64_read(&t->physical);
}

/* Of the live slot bytes: those of raw slots, and those in the cold codec. */
void flaz_l2p_codec_usage(struct flaz_l2p *t, u64 *raw, u64 *cold)
{
	*raw = atomic64_read(&t->raw);
	*cold = atomic64_read(&t->cold);
}

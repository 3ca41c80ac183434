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
 * The entries are kept in pages of L2P_PAGE_BLOCKS table blocks (format.h), each
 * a whole number of such groups, allocated one by one: a table block is in one
 * page, so a page can be read from or written to the SSD's table on its own.
 *
 * While the table loads (meta.c), a write to a line the loader has not reached
 * leaves a tombstone there: an empty entry with a bit set, which every reader
 * takes as empty and the loader as taken, so it never brings back what the SSD
 * held for that line.
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
#define L2P_PAGE_BLOCKS		16
#define L2P_PAGE_LINES		(L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES)
static_assert(L2P_HEAT_MAX < (1U << L2P_HEAT_BITS));
static_assert(L2P_PAGE_LINES % L2P_GROUP == 0);

/* A lock per cache line: CPUs taking neighbouring stripes do not share one. */
struct l2p_lock {
	spinlock_t lock;
} ____cacheline_aligned_in_smp;

struct flaz_l2p {
	u64 **pages;		/* entry words, L2P_PAGE_LINES lines a page */
	u64 nr_pages;
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
	u64 words, p;
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
	for (p = 0; t->pages && p < t->nr_pages; p++) {
		t->pages[p] = kvcalloc(page_words(t, p), sizeof(u64), GFP_KERNEL);
		if (!t->pages[p])
			break;
	}
	t->dirty = kvcalloc(BITS_TO_LONGS(t->nr_blocks), sizeof(long), GFP_KERNEL);
	t->stale = kvcalloc(BITS_TO_LONGS(t->nr_blocks), sizeof(long), GFP_KERNEL);
	t->heat = kvcalloc(heat_words(nr_lines), sizeof(u64), GFP_KERNEL);
	t->nr_extents = nr_extents;
	t->live = kvcalloc(nr_extents, sizeof(atomic_t), GFP_KERNEL);
	if (!t->pages || p < t->nr_pages || !t->dirty || !t->stale || !t->heat || !t->live) {
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
 * Everything the table allocates: the entries and their pages, the dirty and
 * stale bits, the heat, the live bytes, the struct.
 */
u64 flaz_l2p_dram_bytes(struct flaz_l2p *t)
{
	return t->bytes + t->nr_pages * sizeof(*t->pages) +
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

static spinlock_t *line_lock(struct flaz_l2p *t, u64 line)
{
	return &t->locks[(line / L2P_GROUP) % L2P_STRIPES].lock;
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

/* The word holding the first bit of @line's entry; *shift gets the bit's place in it. */
static u64 *entry_word(struct flaz_l2p *t, u64 line, u32 *shift)
{
	u32 i;
	u64 p = div_u64_rem(line, L2P_PAGE_LINES, &i);
	u64 bit = (u64)i * t->bits;

	*shift = bit % 64;
	return &t->pages[p][bit / 64];
}

static u64 get_raw(struct flaz_l2p *t, u64 line)
{
	u32 shift;
	u64 *w = entry_word(t, line, &shift);
	u64 v = w[0] >> shift;

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

/* Store @e for @block in its line (lock held); @old gets the entry it replaces. */
void flaz_l2p_set(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		  struct flaz_entry *old)
{
	store(t, block, e, old);
	set_bit(div_u64(flaz_l2p_line(t, block), FLAZ_META_ENTRIES), t->dirty);
}

/* Put loaded @e in @block's line unless a write touched it since the load began. */
bool flaz_l2p_load(struct flaz_l2p *t, u64 block, const struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry old;
	bool fresh;

	flaz_l2p_lock(t, line);
	fresh = !get_raw(t, line);
	if (fresh)
		store(t, block, e, &old);
	flaz_l2p_unlock(t, line);
	return fresh;
}

/*
 * A write to a block of @line while the table loads (lock held): unless the line
 * holds an entry already, keep the loader out of it. Its table block is written
 * again, so the SSD no longer points at the old slot once the region's mark goes.
 */
void flaz_l2p_tomb(struct flaz_l2p *t, u64 line)
{
	if (get_raw(t, line))
		return;
	set_raw(t, line, L2P_TOMB);
	set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
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
 * Empty every line whose slot lies in an extent set in @victims (evicted: their
 * table blocks become stale), or every line when @victims is NULL (dirty; with
 * @tomb, while the table loads, empty ones get a tombstone). Returns how many
 * were dropped.
 */
u64 flaz_l2p_drop(struct flaz_l2p *t, const unsigned long *victims, bool tomb)
{
	static const struct flaz_entry none;
	struct flaz_entry e, old;
	u64 line, end, dropped = 0;

	for (line = 0; line < t->nr_lines; line = end) {
		end = min(line + L2P_GROUP, t->nr_lines);
		flaz_l2p_lock(t, line);
		for (; line < end; line++) {
			flaz_l2p_get(t, line, &e);
			if (tomb && !victims)
				flaz_l2p_tomb(t, line);
			if (e.kind == FLAZ_ENTRY_NONE ||
			    (victims && (e.kind != FLAZ_ENTRY_SLOT || !test_bit(e.ext, victims))))
				continue;
			/* A line index is a block whose tag is 0: enough to address it. */
			store(t, line, &none, &old);
			set_bit(div_u64(line, FLAZ_META_ENTRIES), victims ? t->stale : t->dirty);
			dropped++;
		}
		flaz_l2p_unlock(t, end - 1);
		cond_resched();
	}
	return dropped;
}

/* A hit on @line (lock held): its heat goes up, to L2P_HEAT_MAX at most. */
void flaz_l2p_touch(struct flaz_l2p *t, u64 line)
{
	u32 h = heat_get(t, line);

	if (h < L2P_HEAT_MAX)
		heat_set(t, line, h + 1);
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

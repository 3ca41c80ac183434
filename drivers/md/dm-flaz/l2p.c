// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz logical-to-physical table: one bit-packed entry per cache line, sized
 * from the geometry so the table costs only the bits it needs.
 *
 * An entry is, from bit 0: the slot's size in FLAZ_SLOT_ALIGN units (0: empty,
 * L2P_ZERO: an all-zero block with no slot), its offset in the extent in the same
 * units, the extent, a tag (block / nr_lines) cut to at most L2P_MAX_TAG_BITS,
 * on a volume with a cold codec a bit for a slot in it, and the extent's
 * generation when the entry was made (format.h), as on the SSD.
 * A cut tag can match another block, so a hit is confirmed by the slot header's
 * block number; a zero entry has no header, so it keeps the whole tag in the bits
 * a slot would use, and zero blocks are stored as slots where it does not fit.
 *
 * The table on the SSD is the truth; DRAM holds some of its pages. A line's
 * entry is in one of three places: in a resident page; on the SSD, its page
 * absent; or nowhere, its tombstone bit set (below).
 *
 * Eviction is O(1) per extent: the table keeps each extent's generation, and an
 * entry whose generation is not its extent's reads as empty, wherever it is (in
 * DRAM, or on the SSD to be paged in later). An extent's generation is odd
 * while it is in use (flaz_l2p_open_extent() makes it so before any entry
 * points into it) and even while it is free, so which extents are free is known
 * from the generations alone, without reading the table. Evicting an extent
 * bumps its generation and takes its counts out of the totals: no entry is
 * visited. An extent at its last generation (flaz_gen_worn()) is never used
 * again. The table also keeps which gen blocks changed, for the commit.
 *
 * Entries straddle u64 words, but 64 entries take exactly entry_bits words, so a
 * lock stripe covering whole groups of 64 lines never shares a word with another.
 * The entries are kept in pages of FLAZ_L2P_PAGE_BLOCKS table blocks (format.h,
 * flaz.h: one), each in words of its own, whole groups of them: a table block
 * is in one page, so a page can be read from the SSD's table on its own. The
 * per-line bitmaps (heat, tombstones) give each page whole groups too
 * (l2p_slot()), so no word of them holds lines of two pages either. Only some pages need be in DRAM
 * (resident): meta.c pages them in from the SSD on demand and out to keep
 * within table_cache_kib, and only clean ones: a page is never dropped with a
 * change the SSD does not have. A line of a page not resident reads as empty
 * (its block is a miss: the HDD has it). A write to it cannot reach the entry
 * the SSD holds, so it sets the line's tombstone bit (a bit per line, kept
 * whatever is resident) and marks its table block dirty: the page-in leaves
 * the line empty and clears the bit, and a commit pages in a dirty page that is
 * out before it writes it (read, modify, write). A write costs its own line
 * only, and nothing is lost by paging.
 *
 * The counters (usage, live) count resident entries only, and blocks_cached is
 * of resident lines; the cleaner reads a victim's hot lines that are absent in
 * (their heat is kept for every line) before it judges their slots.
 *
 * A page's lines are locked by FLAZ_L2P_PAGE_STRIPES of the stripes, so paging
 * it in or out takes that many locks, not one per group.
 *
 * While a page is paged in (coming), a write to a line not read yet leaves a
 * tombstone there: an empty entry with a bit set, which every reader takes as
 * empty and the page-in as taken, so it never brings back what the SSD held for
 * that line.
 *
 * The live slots are counted per extent (bytes, slots, raw slots, cold bytes)
 * and in all. For the cleaner the table also keeps a line's heat: a 2-bit count
 * of hits since it was installed, halved when the cleaner moves it (a second
 * chance must be earned again). The heat of a stripe's lines is in words of its
 * own, so the stripe's lock covers it. An extent's counts change under the
 * lines' locks, and its eviction takes them whole (xchg) after its generation
 * moved on: a drop racing the eviction leaves its share in the extent's next
 * tenant's counts, taken out in turn at that tenant's eviction.
 *
 * Every change marks the table block (format.h) holding the line dirty, so a
 * commit (meta.c) writes only what changed.
 */
#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "flaz.h"
#include "format.h"
#include "l2p_priv.h"

/* a page is a table block, its heat as the saved order has it (flaz_order_heat_words()) */
static_assert(FLAZ_L2P_PAGE_BLOCKS == 1 &&
	      L2P_PAGE_SLOTS * L2P_HEAT_BITS / 64 == DIV_ROUND_UP(FLAZ_META_ENTRIES, 64) * 2);

/* Heat words: whole groups of lines a page (l2p_slot()), so no word is shared by two stripes. */
static u64 heat_words(u64 nr_pages)
{
	return nr_pages * L2P_PAGE_SLOTS * L2P_HEAT_BITS / 64;
}

/* The caches of table pages: a table's pages are all of one size, its own. */
static atomic_t l2p_caches = ATOMIC_INIT(0);

static u32 bits_for(u64 max_value)
{
	return max_value ? fls64(max_value) : 1;
}

struct flaz_l2p *flaz_l2p_create(u64 nr_lines, u64 nr_extents, u32 extent_bytes,
				 u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t;
	char name[32];
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
	t->gen_bits = flaz_entry_gen_bits(t->off_bits, t->ext_bits);
	t->worn = (1U << t->gen_bits) - 2;	/* flaz_gen_worn() */
	t->bits = L2P_LEN_BITS + t->off_bits + t->ext_bits + t->tag_bits + t->cold_bits +
		  t->gen_bits;
	t->zero_fits = t->full_tag_bits <= t->bits - L2P_LEN_BITS;
	t->page_words = L2P_PAGE_SLOTS / L2P_GROUP * t->bits;
	t->nr_blocks = DIV_ROUND_UP_ULL(nr_lines, FLAZ_META_ENTRIES);
	t->nr_pages = DIV_ROUND_UP_ULL(nr_lines, L2P_PAGE_LINES);
	t->bytes = t->nr_pages * t->page_words * sizeof(u64);
	snprintf(name, sizeof(name), "flaz_l2p_%d", atomic_inc_return(&l2p_caches));
	t->page_cache = kmem_cache_create(name, t->page_words * sizeof(u64), sizeof(u64), 0,
					  NULL);
	t->pages = kvcalloc(t->nr_pages, sizeof(*t->pages), GFP_KERNEL);
	t->state = kvzalloc(t->nr_pages, GFP_KERNEL);
	t->tombs = kvcalloc(BITS_TO_LONGS(t->nr_pages * L2P_PAGE_SLOTS), sizeof(long),
			    GFP_KERNEL);
	t->ref = kvzalloc(t->nr_pages, GFP_KERNEL);
	t->dirty = kvcalloc(BITS_TO_LONGS(t->nr_blocks), sizeof(long), GFP_KERNEL);
	t->heat = kvcalloc(heat_words(t->nr_pages), sizeof(u64), GFP_KERNEL);
	t->nr_extents = nr_extents;
	t->nr_gen_blocks = DIV_ROUND_UP_ULL(nr_extents, FLAZ_GEN_ENTRIES);
	t->gens = kvcalloc(t->nr_gen_blocks * FLAZ_GEN_ENTRIES, sizeof(u16), GFP_KERNEL);
	t->gen_dirty = bitmap_zalloc(t->nr_gen_blocks, GFP_KERNEL);
	t->live = kvcalloc(nr_extents, sizeof(atomic_t), GFP_KERNEL);
	t->slots = kvcalloc(nr_extents, sizeof(atomic_t), GFP_KERNEL);
	if (cold)
		t->cold_live = kvcalloc(nr_extents, sizeof(atomic_t), GFP_KERNEL);
	if (!t->page_cache || !t->pages || !t->state || !t->tombs || !t->ref || !t->dirty ||
	    !t->heat || !t->gens || !t->gen_dirty || !t->live || !t->slots ||
	    (cold && !t->cold_live)) {
		flaz_l2p_destroy(t);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < L2P_STRIPES; i++)
		spin_lock_init(&t->locks[i].lock);
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_create);

void flaz_l2p_destroy(struct flaz_l2p *t)
{
	u64 p;

	if (IS_ERR_OR_NULL(t))
		return;
	for (p = 0; t->pages && p < t->nr_pages; p++)
		if (t->pages[p])
			kmem_cache_free(t->page_cache, t->pages[p]);
	kmem_cache_destroy(t->page_cache);
	kvfree(t->pages);
	kvfree(t->state);
	kvfree(t->tombs);
	kvfree(t->ref);
	kvfree(t->dirty);
	kvfree(t->heat);
	kvfree(t->gens);
	bitmap_free(t->gen_dirty);
	kvfree(t->live);
	kvfree(t->slots);
	kvfree(t->cold_live);
	kvfree(t);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_destroy);

u64 flaz_l2p_bytes(struct flaz_l2p *t)
{
	return t->bytes;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_bytes);

/*
 * Everything the table allocates: the resident pages, the page pointers and
 * state, the dirty bits, the heat (per line); the generations and the counts
 * (per extent); the struct.
 */
u64 flaz_l2p_dram_bytes(struct flaz_l2p *t)
{
	return READ_ONCE(t->resident) + t->nr_pages * (sizeof(*t->pages) + 2) +
	       BITS_TO_LONGS(t->nr_pages * L2P_PAGE_SLOTS) * sizeof(long) +
	       BITS_TO_LONGS(t->nr_blocks) * sizeof(long) +
	       heat_words(t->nr_pages) * sizeof(u64) +
	       t->nr_gen_blocks * FLAZ_GEN_ENTRIES * sizeof(u16) +
	       BITS_TO_LONGS(t->nr_gen_blocks) * sizeof(long) +
	       t->nr_extents * (2 + !!t->cold_live) * sizeof(atomic_t) + sizeof(*t);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_dram_bytes);

u64 flaz_l2p_line(struct flaz_l2p *t, u64 block)
{
	u64 line;

	div64_u64_rem(block, t->nr_lines, &line);
	return line;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_line);

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
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_lock);

void flaz_l2p_unlock(struct flaz_l2p *t, u64 line)
	__releases(line_lock(t, line))
{
	spin_unlock(line_lock(t, line));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_unlock);

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

void flaz_l2p_set_raw(struct flaz_l2p *t, u64 line, u64 v)
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

/* @ext's generation now: an entry of another is void. */
u16 flaz_l2p_gen(struct flaz_l2p *t, u32 ext)
{
	return READ_ONCE(t->gens[ext]);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_gen);

/* @line's entry as stored (lock held), void by its extent's generation or not. */
static void decode(struct flaz_l2p *t, u64 line, struct flaz_entry *e)
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
		e->cold = t->cold_bits && field(v, &pos, t->cold_bits);
		e->gen = field(v, &pos, t->gen_bits);
	}
}

/* @line's entry (lock held); one void by its extent's generation reads as empty. */
void flaz_l2p_get(struct flaz_l2p *t, u64 line, struct flaz_entry *e)
{
	decode(t, line, e);
	if (e->kind == FLAZ_ENTRY_SLOT && e->gen != flaz_l2p_gen(t, e->ext))
		memset(e, 0, sizeof(*e));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_get);

void flaz_l2p_account(struct flaz_l2p *t, const struct flaz_entry *e, int sign)
{
	if (e->kind == FLAZ_ENTRY_NONE)
		return;
	atomic64_add(sign, &t->blocks);
	if (e->kind == FLAZ_ENTRY_SLOT) {
		atomic64_add(sign * (s64)FLAZ_BLOCK_SIZE, &t->logical);
		atomic64_add(sign * (s64)e->bytes, &t->physical);
		atomic_add(sign * (int)e->bytes, &t->live[e->ext]);
		if (e->bytes == FLAZ_MAX_SLOT_BYTES) {
			atomic64_add(sign * (s64)e->bytes, &t->raw);
			atomic_add(sign * (1 + L2P_RAW_ONE), &t->slots[e->ext]);
			return;
		}
		atomic_add(sign, &t->slots[e->ext]);
		if (e->cold && t->cold_bits) {
			atomic64_add(sign * (s64)e->bytes, &t->cold);
			atomic_add(sign * (int)e->bytes, &t->cold_live[e->ext]);
		}
	}
}

static u32 heat_get(struct flaz_l2p *t, u64 line)
{
	u64 bit = l2p_slot(line) * L2P_HEAT_BITS;

	return (t->heat[bit / 64] >> (bit % 64)) & L2P_HEAT_MAX;
}

static void heat_set(struct flaz_l2p *t, u64 line, u32 v)
{
	u64 bit = l2p_slot(line) * L2P_HEAT_BITS;
	u64 *w = &t->heat[bit / 64];

	*w = (*w & ~((u64)L2P_HEAT_MAX << (bit % 64))) | ((u64)v << (bit % 64));
}

static bool coming(struct flaz_l2p *t, u64 line)
{
	/* seen clear: the page-in's stores to the page are seen too (page_done) */
	return smp_load_acquire(&t->state[div_u64(line, L2P_PAGE_LINES)]) & L2P_COMING;
}

/*
 * Put @e (of generation @gen, for a slot) in @block's line, lock held; @old
 * gets what it replaces. An entry void already is stored, but not counted.
 */
static void store(struct flaz_l2p *t, u64 block, const struct flaz_entry *e, u16 gen,
		  struct flaz_entry *old)
{
	u64 line = flaz_l2p_line(t, block);
	u64 tag = tag_of(t, block);
	u64 v = 0;
	u32 pos = L2P_LEN_BITS;

	flaz_l2p_get(t, line, old);
	flaz_l2p_account(t, old, -1);
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
		pos += t->cold_bits;
		v |= (u64)gen << pos;
	}
	/* emptied while its page comes in: the page-in must not fill it from the SSD */
	if (e->kind == FLAZ_ENTRY_NONE && coming(t, line))
		v = L2P_TOMB;
	flaz_l2p_set_raw(t, line, v);
	if (e->kind != FLAZ_ENTRY_SLOT || gen == flaz_l2p_gen(t, e->ext))
		flaz_l2p_account(t, e, 1);
}

/*
 * Store @e for @block in its line (lock held); @old gets the entry it replaces.
 * A slot takes its extent's generation now: the caller keeps the extent from
 * being evicted meanwhile (it is open, or the cleaner holds its evict_lock).
 * Returns false, storing nothing, when the line's page is not resident.
 */
bool flaz_l2p_set(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		  struct flaz_entry *old)
{
	u64 line = flaz_l2p_line(t, block);
	u16 gen = e->kind == FLAZ_ENTRY_SLOT ? flaz_l2p_gen(t, e->ext) : 1;

	/* a slot in a free (even) extent would be read as its next tenant's */
	if (!flaz_l2p_resident(t, line) || WARN_ON_ONCE(!(gen & 1))) {
		memset(old, 0, sizeof(*old));
		return false;
	}
	store(t, block, e, gen, old);
	/* new content: not hit yet */
	heat_set(t, line, 0);
	set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_set);

/*
 * Put loaded @e (of generation e->gen, as read) in @block's line (its page
 * coming) unless a write touched it since. The line's heat stays: it is the
 * same block's, kept while the page was out, for the cleaner.
 */
bool flaz_l2p_load(struct flaz_l2p *t, u64 block, const struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry old;
	bool fresh;

	flaz_l2p_lock(t, line);
	fresh = flaz_l2p_resident(t, line) && !get_raw(t, line);
	if (fresh)
		store(t, block, e, e->gen, &old);
	flaz_l2p_unlock(t, line);
	return fresh;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_load);

/*
 * A write to a block of @line whose entry is gone (lock held): if the line's
 * page is being paged in, keep the page-in out of the line; if the page is not
 * resident, its table block on the SSD may still point at an old slot for the
 * block: the tombstone bit keeps it out of a later page-in, and the dirty block
 * makes the next commit write it without it, before the write's region mark
 * goes.
 */
static void drop_absent(struct flaz_l2p *t, u64 line)
{
	if (!flaz_l2p_resident(t, line)) {
		/* whatever the SSD holds for the line will not come in: its heat goes */
		heat_set(t, line, 0);
		__set_bit(l2p_slot(line), t->tombs);
		set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
		return;
	}
	if (!coming(t, line) || get_raw(t, line))
		return;
	heat_set(t, line, 0);
	flaz_l2p_set_raw(t, line, L2P_TOMB);
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
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_drop_block);

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
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_lookup);

/*
 * Wait out every lock holder of the table's lines: a lookup under way when
 * this is called has finished (hit.c's drain).
 */
void flaz_l2p_sync(struct flaz_l2p *t)
{
	int i;

	for (i = 0; i < L2P_STRIPES; i++) {
		spin_lock(&t->locks[i].lock);
		spin_unlock(&t->locks[i].lock);
	}
}

/* Whether a slot's tag is whole: a lookup's hit is then the block's own. */
bool flaz_l2p_tags_whole(struct flaz_l2p *t)
{
	return t->tag_bits == t->full_tag_bits;
}

/* Whether an all-zero @block can be a table flag rather than a slot. */
bool flaz_l2p_zero_fits(struct flaz_l2p *t)
{
	return t->zero_fits;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_zero_fits);

/*
 * Empty every line of pages @first..@end - 1, as a write to each would (their
 * table blocks dirty). Returns how many held an entry.
 */
u64 flaz_l2p_drop_pages(struct flaz_l2p *t, u64 first, u64 end)
{
	static const struct flaz_entry none;
	struct flaz_entry e, old;
	u64 line, stop, dropped = 0;
	u32 i;

	line = first * L2P_PAGE_LINES;
	end = min(end * L2P_PAGE_LINES, t->nr_lines);
	for (; line < end; line = stop) {
		/* the rest of the line's group, within its page: one lock */
		div_u64_rem(line, L2P_PAGE_LINES, &i);
		stop = min3(line + L2P_GROUP - i % L2P_GROUP, line - i + L2P_PAGE_LINES, end);
		flaz_l2p_lock(t, line);
		for (; line < stop; line++) {
			drop_absent(t, line);
			if (!flaz_l2p_resident(t, line))
				continue;
			flaz_l2p_get(t, line, &e);
			if (e.kind == FLAZ_ENTRY_NONE)
				continue;
			/* A line index is a block whose tag is 0: enough to address it. */
			store(t, line, &none, 0, &old);
			heat_set(t, line, 0);
			set_bit(div_u64(line, FLAZ_META_ENTRIES), t->dirty);
			dropped++;
		}
		flaz_l2p_unlock(t, stop - 1);
		cond_resched();
	}
	return dropped;
}

/*
 * Empty every line (invalidate, a write covering the whole table): O(table),
 * from process context only, and every table block is written again.
 */
u64 flaz_l2p_drop_all(struct flaz_l2p *t)
{
	return flaz_l2p_drop_pages(t, 0, t->nr_pages);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_drop_all);

/* A gen of gen block @idx changed: the next commit writes it. */
static void gen_changed(struct flaz_l2p *t, u32 ext)
{
	/* the gen before its dirty bit: a commit that takes the bit writes this gen */
	smp_mb__before_atomic();
	set_bit(ext / FLAZ_GEN_ENTRIES, t->gen_dirty);
}

/*
 * Extent @ext, free, is about to take slots (any context): its generation
 * turns odd, in use, before any entry points into it.
 */
void flaz_l2p_open_extent(struct flaz_l2p *t, u32 ext)
{
	u16 gen = t->gens[ext];

	if (WARN_ON_ONCE(gen & 1 || gen >= t->worn))
		return;
	WRITE_ONCE(t->gens[ext], gen + 1);
	gen_changed(t, ext);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_open_extent);

/*
 * Extent @ext goes: a new (even) generation voids every entry into it,
 * wherever it is, and its counts leave the totals. O(1). Returns how many
 * slots lines (resident ones) pointed at, and whether it is now worn out
 * (never to be used again).
 */
u32 flaz_l2p_evict_extent(struct flaz_l2p *t, u32 ext, bool *worn)
{
	u16 gen = t->gens[ext];
	int bytes, counts, slots, raw, cold = 0;

	/* in use (odd); one never opened has nothing to void */
	if (gen & 1)
		gen++;
	*worn = gen >= t->worn;
	WRITE_ONCE(t->gens[ext], gen);
	gen_changed(t, ext);
	/* the new generation before the counts: a drop seeing the old one counts here */
	smp_mb();
	bytes = atomic_xchg(&t->live[ext], 0);
	counts = atomic_xchg(&t->slots[ext], 0);
	/* a drop racing an eviction may leave either part a little below 0 */
	raw = (counts + L2P_RAW_ONE / 2) >> 16;
	slots = counts - raw * L2P_RAW_ONE;
	if (t->cold_live)
		cold = atomic_xchg(&t->cold_live[ext], 0);
	atomic64_sub(slots, &t->blocks);
	atomic64_sub((s64)slots * FLAZ_BLOCK_SIZE, &t->logical);
	atomic64_sub(bytes, &t->physical);
	atomic64_sub((s64)raw * FLAZ_MAX_SLOT_BYTES, &t->raw);
	atomic64_sub(cold, &t->cold);
	return max(slots, 0);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_evict_extent);

/* Whether extent @ext is at its last generation: never to be used again. */
bool flaz_l2p_worn(struct flaz_l2p *t, u32 ext)
{
	return flaz_l2p_gen(t, ext) >= t->worn;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_worn);

/* Whether extent @ext is in use by its generation: it may hold slots. */
bool flaz_l2p_in_use(struct flaz_l2p *t, u32 ext)
{
	return flaz_l2p_gen(t, ext) & 1;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_in_use);

/*
 * The generations, whole gen blocks of them (format.h), for meta.c to read at
 * activation and to encode gen block @idx from when flaz_l2p_take_gen_dirty()
 * says it changed.
 */
u16 *flaz_l2p_gens(struct flaz_l2p *t)
{
	return t->gens;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_gens);

/* The first gen block from @idx on that changed, or the number of them. */
u64 flaz_l2p_next_gen_dirty(struct flaz_l2p *t, u64 idx)
{
	return find_next_bit(t->gen_dirty, t->nr_gen_blocks, idx);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_next_gen_dirty);

bool flaz_l2p_take_gen_dirty(struct flaz_l2p *t, u64 idx)
{
	return test_and_clear_bit(idx, t->gen_dirty);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_take_gen_dirty);

/* Gen block @idx must be written (again) by the next commit. */
void flaz_l2p_set_gen_dirty(struct flaz_l2p *t, u64 idx)
{
	set_bit(idx, t->gen_dirty);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_set_gen_dirty);

/*
 * A new format, before any I/O: every extent free at generation @gen (even,
 * below the last), every gen block to be written, nothing cached.
 */
void flaz_l2p_reset_gens(struct flaz_l2p *t, u16 gen)
{
	u64 i;

	gen = min_t(u16, gen, t->worn - 2) & ~1;
	for (i = 0; i < t->nr_extents; i++)
		t->gens[i] = gen;
	bitmap_fill(t->gen_dirty, t->nr_gen_blocks);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_reset_gens);

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
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_touch);

/*
 * Whether @block's line (lock held) holds a slot of @block that the last
 * eviction of its extent voided: the extent went once since, and may be in use
 * again, no more. The block was cached until about a lap of that extent ago
 * and is back: S3-FIFO's ghost, kept by the table at no cost until the line
 * is used again or the extent goes once more. A cut tag may match another
 * block: then a block is admitted that was not cached, no worse.
 */
bool flaz_l2p_ghost(struct flaz_l2p *t, u64 block)
{
	struct flaz_entry e;

	decode(t, flaz_l2p_line(t, block), &e);
	return e.kind == FLAZ_ENTRY_SLOT && e.ext < t->nr_extents &&
	       e.tag == (tag_of(t, block) & GENMASK_ULL(t->tag_bits - 1, 0)) &&
	       (u32)flaz_l2p_gen(t, e.ext) - e.gen - 1 < 2;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_ghost);

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
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_points);

/* @line's heat (lock held), kept whether its page is in or out. */
u32 flaz_l2p_heat(struct flaz_l2p *t, u64 line)
{
	return heat_get(t, line);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_heat);

/*
 * The heat of every line, in 64-bit words (L2P_HEAT_BITS a line, at
 * l2p_slot()): a clean stop saves it and the next activation brings it back
 * (order.c), while nothing else runs.
 */
u64 flaz_l2p_heat_words(struct flaz_l2p *t)
{
	return heat_words(t->nr_pages);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_heat_words);

/* Copy @n heat words from @first on into @buf (@save), or back from it. */
void flaz_l2p_heat_copy(struct flaz_l2p *t, u64 first, u64 *buf, u32 n, bool save)
{
	if (WARN_ON_ONCE(first + n > heat_words(t->nr_pages)))
		return;
	if (save)
		memcpy(buf, t->heat + first, n * sizeof(u64));
	else
		memcpy(t->heat + first, buf, n * sizeof(u64));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_heat_copy);

/* The cleaner moved @block's slot to @e (lock held): half its heat goes along. */
void flaz_l2p_move(struct flaz_l2p *t, u64 block, const struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	u32 h = heat_get(t, line);
	struct flaz_entry old;

	flaz_l2p_set(t, block, e, &old);
	heat_set(t, line, h / 2);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_move);

/* The cleaner left @block's slot where it is, a lap more (lock held): half its heat stays. */
void flaz_l2p_cool(struct flaz_l2p *t, u64 block)
{
	u64 line = flaz_l2p_line(t, block);

	heat_set(t, line, heat_get(t, line) / 2);
}

/* Slots of extent @ext that lines point at. */
u32 flaz_l2p_slots(struct flaz_l2p *t, u32 ext)
{
	return max(atomic_read(&t->slots[ext]), 0) % L2P_RAW_ONE;
}

/* Bytes of extent @ext's slots that lines point at. */
u32 flaz_l2p_live(struct flaz_l2p *t, u32 ext)
{
	return max(atomic_read(&t->live[ext]), 0);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_live);

u64 flaz_l2p_nr_blocks(struct flaz_l2p *t)
{
	return t->nr_blocks;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_nr_blocks);

/* The first table block from @idx on that changed, or the number of them. */
u64 flaz_l2p_next_dirty(struct flaz_l2p *t, u64 idx)
{
	return find_next_bit(t->dirty, t->nr_blocks, idx);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_next_dirty);

/* Whether table block @idx must be written: it changed since it was last taken. Takes it. */
bool flaz_l2p_take_dirty(struct flaz_l2p *t, u64 idx)
{
	return test_and_clear_bit(idx, t->dirty);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_take_dirty);

/* Whether @line's page is resident (lock held, or paging serialised). */
bool flaz_l2p_resident(struct flaz_l2p *t, u64 line)
{
	return READ_ONCE(t->pages[div_u64(line, L2P_PAGE_LINES)]);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_resident);

/* Table block @idx must be written (again) by the next commit. */
void flaz_l2p_set_dirty(struct flaz_l2p *t, u64 idx)
{
	set_bit(idx, t->dirty);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_set_dirty);

bool flaz_l2p_any_dirty(struct flaz_l2p *t)
{
	return find_first_bit(t->dirty, t->nr_blocks) < t->nr_blocks;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_any_dirty);

void flaz_l2p_usage(struct flaz_l2p *t, u64 *blocks, u64 *logical, u64 *physical)
{
	*blocks = atomic64_read(&t->blocks);
	*logical = atomic64_read(&t->logical);
	*physical = atomic64_read(&t->physical);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_usage);

/* Of the live slot bytes: those of raw slots, and those in the cold codec. */
void flaz_l2p_codec_usage(struct flaz_l2p *t, u64 *raw, u64 *cold)
{
	*raw = atomic64_read(&t->raw);
	*cold = atomic64_read(&t->cold);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_l2p_codec_usage);

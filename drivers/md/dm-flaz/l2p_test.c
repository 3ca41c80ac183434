// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the packed logical-to-physical table: field packing across u64
 * words and pages at maximal values (the generation included), tag matching (whole
 * and cut), zero entries, usage accounting, O(1) eviction by extent generation
 * (in DRAM and on the SSD), generations and worn extents, paging and tombstones,
 * and the table's size.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/err.h>
#include <linux/math64.h>

#include "flaz.h"
#include "format.h"

/* Lines of a page of the table in memory (l2p.c: a table block) */
#define PAGE_LINES	(FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES)
/* The generation of an extent opened once in a new table: 0 (free), then 1. */
#define GEN1		1

/*
 * A geometry and what its entries must cost, worked out by hand. An entry is
 * 8 length bits, off_bits = log2(extent_bytes / 32), ext_bits = bits(exts - 1),
 * the tag cut to 4 bits, a cold bit on a cold volume, and a generation of what
 * 64 - 8 - off_bits - ext_bits - 1 (cold) - 4 (tag) leaves, 16 at most.
 * @top: the highest generation a slot can carry, in use (odd): the last even
 * one, 2^gen_bits - 2, less one. @bytes: whole pages of 508 lines (a table
 * block), each in 8 groups of 64 entries' words.
 */
struct l2p_geo {
	u64 lines, exts;
	u32 extent_bytes;
	u64 hdd_blocks;
	bool cold;
	u32 bits, tag_bits;
	u16 top;
	bool zero_fits;
	u64 bytes;
};

static const struct l2p_geo geos[] = {
	/* 8 + log2(32K/32)=10 + bits(15)=4 + bits(1599/200=7)=3 + gen 16 (37 left) */
	{ 200, 16, 32 << 10, 200 * 8, false, 41, 3, 0xfffd, true, 8 * 41 * 8 },
	/* 8 + 7 + bits(999)=10 + min(bits(4095)=12, 4) + 16 (34 left) */
	{ 130, 1000, 4 << 10, 130 * 4096, false, 45, 4, 0xfffd, true, 8 * 45 * 8 },
	/*
	 * 8 + 13 + 20 + min(bits((2^40-1)/100)=34, 4) + 16 (18 left): the whole tag
	 * fits in 53 bits
	 */
	{ 100, 1 << 20, 256 << 10, 1ULL << 40, false, 61, 4, 0xfffd, true, 8 * 61 * 8 },
	/* 8 + 10 + 4 + min(bits((2^40-1)/1000)=31, 4) + 16: it fits in 34 bits */
	{ 1000, 16, 32 << 10, 1ULL << 40, false, 42, 4, 0xfffd, true, 16 * 42 * 8 },
	/* as above, but bits((2^45-1)/1000)=36: it does not fit in 34 */
	{ 1000, 16, 32 << 10, 1ULL << 45, false, 42, 4, 0xfffd, false, 16 * 42 * 8 },
	/* exactly 64 lines: one group, in a page; 8 + 10 + 4 + bits(63/64=0)=1 + 16 */
	{ 64, 16, 32 << 10, 64, false, 39, 1, 0xfffd, true, 8 * 39 * 8 },
	/* 65 lines: two groups, in a page; 8 + 10 + bits(16)=5 + bits(129/65=1)=1 + 16 */
	{ 65, 17, 32 << 10, 65 * 2, false, 40, 1, 0xfffd, true, 8 * 40 * 8 },
	/*
	 * Two whole pages (508 lines each, l2p.c) and 65 lines of a third:
	 * 8 + 10 + bits(15)=4 + bits(1)=1 + 16; 3 pages of 8 groups
	 */
	{ PAGE_LINES * 2 + 65, 16, 32 << 10, (PAGE_LINES * 2 + 65) * 2, false, 39, 1, 0xfffd,
	  true, 24 * 39 * 8 },
	/*
	 * 1 GiB extents: 8 + log2(2^30/32)=25 + bits(4095)=12 + bits(1599/100=15)=4,
	 * and 64 - 8 - 25 - 12 - 1 - 4 = 14 bits of gen: top 2^14 - 3
	 */
	{ 100, 4096, 1U << 30, 100 * 16, false, 63, 4, 0x3ffd, true, 8 * 63 * 8 },
	/* the same with the cold bit: exactly 64 bits, entries never share a word's rest */
	{ 100, 4096, 1U << 30, 100 * 16, true, 64, 4, 0x3ffd, true, 8 * 64 * 8 },
};

static void destroy_action(void *t)
{
	flaz_l2p_destroy(t);
}

/* A new table: every extent free at generation 0, no page resident. */
static struct flaz_l2p *create_free(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
				    u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t = flaz_l2p_create(lines, exts, extent_bytes, hdd_blocks, cold);

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(t));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action, t), 0);
	return t;
}

/* Every extent opened (in use), as the module opens one before filling it. */
static void open_all(struct flaz_l2p *t, u64 exts)
{
	u64 ext;

	for (ext = 0; ext < exts; ext++)
		flaz_l2p_open_extent(t, ext);
}

/* A table with every extent in use at GEN1 and no page resident: meta.c pages them in. */
static struct flaz_l2p *create_paged(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
				     u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t = create_free(test, lines, exts, extent_bytes, hdd_blocks, cold);

	open_all(t, exts);
	return t;
}

/* Page @p in (coming). */
static void page_in(struct kunit *test, struct flaz_l2p *t, u64 p)
{
	KUNIT_ASSERT_EQ(test, flaz_l2p_page_in(t, p), 0);
}

/* Every page resident and loaded (with nothing). */
static void page_all(struct kunit *test, struct flaz_l2p *t)
{
	u64 p;

	for (p = 0; p < flaz_l2p_nr_pages(t); p++) {
		page_in(test, t, p);
		flaz_l2p_page_done(t, p);
	}
}

/* A table with every extent in use at GEN1 and every page resident and loaded. */
static struct flaz_l2p *create_cold(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
				    u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t = create_paged(test, lines, exts, extent_bytes, hdd_blocks, cold);

	page_all(test, t);
	return t;
}

static struct flaz_l2p *create(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
			       u64 hdd_blocks)
{
	return create_cold(test, lines, exts, extent_bytes, hdd_blocks, false);
}

/*
 * A table of geometry @g, every extent in use at its highest generation
 * (reset_gens() caps at the last even one but one; opening makes it odd).
 */
static struct flaz_l2p *create_geo(struct kunit *test, const struct l2p_geo *g)
{
	struct flaz_l2p *t = create_free(test, g->lines, g->exts, g->extent_bytes,
					 g->hdd_blocks, g->cold);

	flaz_l2p_reset_gens(t, 0xffff);
	open_all(t, g->exts);
	page_all(test, t);
	return t;
}

static void set(struct flaz_l2p *t, u64 block, const struct flaz_entry *e,
		struct flaz_entry *old)
{
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry tmp;

	flaz_l2p_lock(t, line);
	flaz_l2p_set(t, block, e, old ? old : &tmp);
	flaz_l2p_unlock(t, line);
}

static void get(struct flaz_l2p *t, u64 line, struct flaz_entry *e)
{
	flaz_l2p_lock(t, line);
	flaz_l2p_get(t, line, e);
	flaz_l2p_unlock(t, line);
}

static bool lookup(struct flaz_l2p *t, u64 block, struct flaz_entry *e)
{
	u64 line = flaz_l2p_line(t, block);
	bool hit;

	flaz_l2p_lock(t, line);
	hit = flaz_l2p_lookup(t, block, e);
	flaz_l2p_unlock(t, line);
	return hit;
}

/* A slot of GEN1: what an extent opened once in a new table gives its entries. */
static struct flaz_entry slot(u32 ext, u32 off, u32 bytes)
{
	struct flaz_entry e = { .kind = FLAZ_ENTRY_SLOT, .ext = ext, .off = off, .bytes = bytes,
				.gen = GEN1 };

	return e;
}

static const struct flaz_entry zero = { .kind = FLAZ_ENTRY_ZERO };
static const struct flaz_entry none = { .kind = FLAZ_ENTRY_NONE };

/*
 * What flaz_l2p_get() must return for @e stored for a block with tag @tag; a
 * slot carries its extent's generation, e->gen.
 */
static struct flaz_entry stored(const struct flaz_entry *e, u64 tag, u32 tag_bits)
{
	struct flaz_entry s = { .kind = e->kind };

	if (e->kind == FLAZ_ENTRY_SLOT) {
		s = *e;
		s.tag = tag & GENMASK_ULL(tag_bits - 1, 0);
	} else if (e->kind == FLAZ_ENTRY_ZERO) {
		s.tag = tag;
	}
	return s;
}

#define EXPECT_ENTRY(test, got, want, line) do {				\
	struct kunit *t_ = (test);						\
	const struct flaz_entry g_ = (got), w_ = (want);			\
	u64 l_ = (line);							\
										\
	KUNIT_EXPECT_EQ_MSG(t_, g_.kind, w_.kind, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.ext, w_.ext, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.off, w_.off, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.bytes, w_.bytes, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.tag, w_.tag, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.cold, w_.cold, "line %llu", l_);		\
	KUNIT_EXPECT_EQ_MSG(t_, g_.gen, w_.gen, "line %llu", l_);		\
} while (0)

/* Every line's entry against @want; returns how many differ. */
static u64 check_all(struct kunit *test, struct flaz_l2p *t, u64 lines,
		     const struct flaz_entry *want)
{
	struct flaz_entry e;
	u64 line, bad = 0;

	for (line = 0; line < lines; line++) {
		get(t, line, &e);
		if (e.kind != want[line].kind || e.ext != want[line].ext ||
		    e.off != want[line].off || e.bytes != want[line].bytes ||
		    e.tag != want[line].tag || e.cold != want[line].cold ||
		    e.gen != want[line].gen) {
			if (!bad)
				EXPECT_ENTRY(test, e, want[line], line);
			bad++;
		}
	}
	return bad;
}

/*
 * A different entry per line, tags spread over the whole range; slots of
 * generation @gen (their extents'), some in the cold codec on a cold volume.
 */
static void fill_pattern(struct flaz_l2p *t, const struct l2p_geo *g, u16 gen,
			 struct flaz_entry *want)
{
	u64 max_tag = div64_u64(g->hdd_blocks - 1, g->lines), line, tag;
	u32 units = g->extent_bytes / FLAZ_SLOT_ALIGN;
	struct flaz_entry e;

	for (line = 0; line < g->lines; line++) {
		div64_u64_rem(line * 2654435761ULL, max_tag + 1, &tag);
		if (g->zero_fits && line % 5 == 4) {
			e = zero;
		} else {
			e = slot(line % g->exts, (u32)(line * 37 % units) * FLAZ_SLOT_ALIGN,
				 (u32)(line % 129 + 1) * FLAZ_SLOT_ALIGN);
			e.cold = g->cold && line % 3 == 1;
			e.gen = gen;
		}
		if (line + tag * g->lines >= g->hdd_blocks)
			tag = 0;
		set(t, line + tag * g->lines, &e, NULL);
		want[line] = stored(&e, tag, g->tag_bits);
	}
}

/*
 * The largest tag of a block in @line within the disk; for a slot (@cut), the
 * largest whose stored bits are all ones where the tag is cut.
 */
static u64 big_tag(const struct l2p_geo *g, u64 line, bool cut)
{
	u64 mask = GENMASK_ULL(g->tag_bits - 1, 0);
	u64 t = div64_u64(g->hdd_blocks - 1, g->lines);

	if (line + t * g->lines >= g->hdd_blocks)
		t--;
	if (cut && ((t + 1) & ~mask))
		t = ((t + 1) & ~mask) - 1;
	return t;
}

/*
 * Entries at the first line, at both sides of a 64-line group, at a line that
 * straddles two words and at the last line, with every field at its maximum
 * (the generation at the highest an extent in use can have), then as zero
 * entries with the largest tag, then emptied: each time every other line keeps
 * its entry.
 */
static void l2p_packing(struct kunit *test)
{
	u32 i, k;

	for (i = 0; i < ARRAY_SIZE(geos); i++) {
		const struct l2p_geo *g = &geos[i];
		struct flaz_l2p *t = create_geo(test, g);
		u64 lines[] = { 0, 2, 63, 64, PAGE_LINES - 1, PAGE_LINES, g->lines / 2 + 1,
				g->lines - 2, g->lines - 1 };
		struct flaz_entry *want, e, old, big;

		want = kunit_kcalloc(test, g->lines, sizeof(*want), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, want);
		KUNIT_EXPECT_EQ_MSG(test, flaz_l2p_bytes(t), g->bytes, "geometry %u", i);
		KUNIT_EXPECT_EQ_MSG(test, flaz_l2p_zero_fits(t), g->zero_fits, "geometry %u", i);
		KUNIT_EXPECT_EQ_MSG(test, flaz_l2p_gen(t, 0), g->top, "geometry %u", i);
		KUNIT_EXPECT_EQ_MSG(test, flaz_l2p_gen(t, g->exts - 1), g->top, "geometry %u", i);
		KUNIT_EXPECT_TRUE(test, flaz_l2p_in_use(t, g->exts - 1));
		KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, g->exts - 1));
		KUNIT_EXPECT_EQ(test, check_all(test, t, g->lines, want), 0ULL);
		fill_pattern(t, g, g->top, want);
		KUNIT_ASSERT_EQ_MSG(test, check_all(test, t, g->lines, want), 0ULL, "geometry %u",
				    i);

		big = slot(g->exts - 1, g->extent_bytes - FLAZ_SLOT_ALIGN, FLAZ_MAX_SLOT_BYTES);
		big.cold = g->cold;
		big.gen = g->top;
		for (k = 0; k < ARRAY_SIZE(lines); k++) {
			u64 line = lines[k], tag = big_tag(g, line, true);

			if (line >= g->lines)
				continue;
			KUNIT_ASSERT_LT(test, line + tag * g->lines, g->hdd_blocks);
			set(t, line + tag * g->lines, &big, &old);
			EXPECT_ENTRY(test, old, want[line], line);
			want[line] = stored(&big, tag, g->tag_bits);
			get(t, line, &e);
			EXPECT_ENTRY(test, e, want[line], line);
		}
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g->lines, want), 0ULL,
				    "geometry %u", i);

		for (k = 0; g->zero_fits && k < ARRAY_SIZE(lines); k++) {
			u64 line = lines[k], tag = big_tag(g, line, false);

			if (line >= g->lines)
				continue;
			set(t, line + tag * g->lines, &zero, NULL);
			want[line] = stored(&zero, tag, g->tag_bits);
		}
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g->lines, want), 0ULL,
				    "geometry %u", i);

		for (k = 0; k < ARRAY_SIZE(lines); k++) {
			if (lines[k] >= g->lines)
				continue;
			set(t, lines[k], &none, NULL);
			want[lines[k]] = none;
		}
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g->lines, want), 0ULL,
				    "geometry %u", i);
	}
}

/* Tags not cut: a slot or zero entry answers for its block and no other. */
static void l2p_lookup_exact(struct kunit *test)
{
	const u64 lines = 100;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, lines * 16);
	struct flaz_entry e, old, s = slot(3, 4096, 160);

	KUNIT_EXPECT_TRUE(test, flaz_l2p_zero_fits(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_line(t, 5 + 2 * lines), 5ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);

	set(t, 5 + 2 * lines, &s, &old);
	KUNIT_EXPECT_EQ(test, old.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_TRUE(test, lookup(t, 5 + 2 * lines, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_SLOT);
	KUNIT_EXPECT_EQ(test, e.ext, 3U);
	KUNIT_EXPECT_EQ(test, e.off, 4096U);
	KUNIT_EXPECT_EQ(test, e.bytes, 160U);
	KUNIT_EXPECT_EQ(test, e.tag, 2ULL);
	KUNIT_EXPECT_EQ(test, e.gen, GEN1);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 5 + lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 5 + 3 * lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 5 + 15 * lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 4 + 2 * lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 6 + 2 * lines, &e));

	/* Another block of the line replaces it; the old entry comes back. */
	set(t, 5, &zero, &old);
	KUNIT_EXPECT_EQ(test, old.kind, FLAZ_ENTRY_SLOT);
	KUNIT_EXPECT_EQ(test, old.ext, 3U);
	KUNIT_EXPECT_EQ(test, old.off, 4096U);
	KUNIT_EXPECT_EQ(test, old.bytes, 160U);
	KUNIT_EXPECT_EQ(test, old.tag, 2ULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_ZERO);
	KUNIT_EXPECT_EQ(test, e.tag, 0ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5 + 2 * lines, &e));

	set(t, 7 + lines, &zero, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 7 + lines, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_ZERO);
	KUNIT_EXPECT_EQ(test, e.tag, 1ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, 7, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 7 + 2 * lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 8 + lines, &e));

	/* The last block of the disk: the largest tag. */
	set(t, lines * 16 - 1, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, lines * 16 - 1, &e));
	KUNIT_EXPECT_EQ(test, e.tag, 15ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, lines - 1, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, lines * 15 - 1, &e));
}

/*
 * A huge disk: tags cut to 4 bits, so a slot entry answers for every block
 * 16 * nr_lines apart (the slot header tells them apart), while a zero entry,
 * where it fits, keeps the whole tag.
 */
static void l2p_tag_cut(struct kunit *test)
{
	const u64 lines = 1000, b = 123 + 5000 * lines, last = (1ULL << 45) - 1;
	/* 36-bit tags, 34 bits after the length (geos): a zero entry does not fit */
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 1ULL << 45);
	struct flaz_entry e, s = slot(15, (32 << 10) - 32, FLAZ_MAX_SLOT_BYTES);

	KUNIT_EXPECT_FALSE(test, flaz_l2p_zero_fits(t));
	set(t, b, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, b, &e));
	KUNIT_EXPECT_EQ(test, e.tag, 5000ULL & 15);
	KUNIT_EXPECT_EQ(test, e.ext, 15U);
	KUNIT_EXPECT_EQ(test, e.off, (32U << 10) - 32);
	KUNIT_EXPECT_EQ(test, e.bytes, FLAZ_MAX_SLOT_BYTES);
	KUNIT_EXPECT_TRUE(test, lookup(t, b + lines * 16, &e));
	KUNIT_EXPECT_TRUE(test, lookup(t, b - lines * 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, b + lines, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, b + lines * 8, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, b + 1, &e));

	set(t, last, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, last, &e));
	KUNIT_EXPECT_EQ(test, e.tag, div64_u64(last, lines) & 15);
	KUNIT_EXPECT_TRUE(test, lookup(t, last - lines * 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, last - lines, &e));

	/*
	 * One line, 7 + 1 + 4 + 16 (gen: 64 - 8 - 7 - 1 - 1 - 4 = 43 left) bits after
	 * the length: a 28-bit tag is the most that fits; 36-bit entries, a page
	 * of 8 groups.
	 */
	t = create(test, 1, 2, 4 << 10, 1ULL << 28);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_zero_fits(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), 8 * 36ULL * 8);
	set(t, (1ULL << 28) - 1, &zero, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 28) - 1, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_ZERO);
	KUNIT_EXPECT_EQ(test, e.tag, (1ULL << 28) - 1);
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 28) - 1 - 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 28) - 2, &e));
	s = slot(1, 4096 - 32, 64);
	set(t, (1ULL << 28) - 1, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 28) - 1, &e));
	KUNIT_EXPECT_EQ(test, e.tag, 15ULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 28) - 1 - 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 28) - 2, &e));

	t = create(test, 1, 2, 4 << 10, (1ULL << 28) + 1);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_zero_fits(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), 8 * 36ULL * 8);
}

static void expect_usage(struct kunit *test, struct flaz_l2p *t, u64 blocks, u64 logical,
			 u64 physical)
{
	u64 b, l, p;

	flaz_l2p_usage(t, &b, &l, &p);
	KUNIT_EXPECT_EQ(test, b, blocks);
	KUNIT_EXPECT_EQ(test, l, logical);
	KUNIT_EXPECT_EQ(test, p, physical);
}

static void expect_codecs(struct kunit *test, struct flaz_l2p *t, u64 raw, u64 cold)
{
	u64 r, c;

	flaz_l2p_codec_usage(t, &r, &c);
	KUNIT_EXPECT_EQ(test, r, raw);
	KUNIT_EXPECT_EQ(test, c, cold);
}

/* Take every dirty table block; returns how many there were. */
static u64 take_all_dirty(struct flaz_l2p *t)
{
	u64 idx, n = 0;

	for (idx = flaz_l2p_next_dirty(t, 0); idx < flaz_l2p_nr_blocks(t);
	     idx = flaz_l2p_next_dirty(t, idx + 1))
		n += flaz_l2p_take_dirty(t, idx);
	return n;
}

/* Blocks, logical (4 KiB per slot) and physical (slot bytes) follow every change. */
static void l2p_usage(struct kunit *test)
{
	struct flaz_l2p *t = create(test, 200, 16, 32 << 10, 1600);
	struct flaz_entry s64 = slot(0, 32, 64), s4128 = slot(1, 64, FLAZ_MAX_SLOT_BYTES);
	struct flaz_entry s96 = slot(2, 4192, 96), s320 = slot(15, 32, 320);

	expect_usage(test, t, 0, 0, 0);
	set(t, 1, &s64, NULL);
	set(t, 2, &s4128, NULL);
	set(t, 3, &s96, NULL);
	set(t, 4, &zero, NULL);
	expect_usage(test, t, 4, 3 * 4096, 64 + 4128 + 96);
	set(t, 2, &s64, NULL);				/* overwrite, smaller */
	expect_usage(test, t, 4, 3 * 4096, 64 + 64 + 96);
	set(t, 1 + 200, &s320, NULL);			/* another block of the line */
	expect_usage(test, t, 4, 3 * 4096, 320 + 64 + 96);
	set(t, 3, &zero, NULL);				/* slot to zero */
	expect_usage(test, t, 4, 2 * 4096, 320 + 64);
	set(t, 4, &none, NULL);				/* zero to none */
	expect_usage(test, t, 3, 2 * 4096, 320 + 64);
	set(t, 4, &none, NULL);				/* none to none */
	expect_usage(test, t, 3, 2 * 4096, 320 + 64);
	set(t, 4, &s96, NULL);
	expect_usage(test, t, 4, 3 * 4096, 320 + 64 + 96);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 4ULL);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 0ULL);
}

/*
 * Evicting extents voids their slots' lines only, zero entries stay; an
 * extent opened again does not bring its old entries back; emptying every
 * line (drop_all) counts only the entries still valid.
 */
static void l2p_evict_pattern(struct kunit *test)
{
	const u64 lines = 200;
	const u32 victims[] = { 0, 5, 15 };
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 1600);
	struct flaz_entry *want, e, old;
	u32 per_ext[16] = {}, i;
	u64 line, n = 0, slots = 0, dropped = 0;
	bool worn;

	want = kunit_kcalloc(test, lines, sizeof(*want), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (line = 0; line < lines; line++) {
		if (line % 7 == 3)
			continue;
		if (line % 10 == 9) {
			e = zero;
		} else {
			e = slot(line % 16, (u32)(line % 50) * 32, 64);
			per_ext[line % 16]++;
			slots++;
		}
		set(t, line + (line % 8) * lines, &e, NULL);
		want[line] = stored(&e, line % 8, 3);
		n++;
	}
	KUNIT_ASSERT_EQ(test, check_all(test, t, lines, want), 0ULL);
	expect_usage(test, t, n, slots * FLAZ_BLOCK_SIZE, slots * 64);

	for (i = 0; i < ARRAY_SIZE(victims); i++) {
		KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, victims[i], &worn),
				per_ext[victims[i]]);
		KUNIT_EXPECT_FALSE(test, worn);
		/* GEN1 + 1: free */
		KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, victims[i]), 2);
		KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, victims[i]));
		KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, victims[i]), 0U);
		dropped += per_ext[victims[i]];
	}
	for (line = 0; line < lines; line++) {
		if (want[line].kind == FLAZ_ENTRY_SLOT &&
		    (want[line].ext == 0 || want[line].ext == 5 || want[line].ext == 15))
			want[line] = none;
	}
	KUNIT_ASSERT_GT(test, dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, check_all(test, t, lines, want), 0ULL);
	expect_usage(test, t, n - dropped, (slots - dropped) * FLAZ_BLOCK_SIZE,
		     (slots - dropped) * 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 1), per_ext[1] * 64);
	/* a free extent evicted again: nothing to void, its gen stays */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 5, &worn), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 5), 2);

	/* a new tenant (gen 3) does not revive the old entries (gen 1) */
	flaz_l2p_open_extent(t, 5);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 5), 3);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_in_use(t, 5));
	KUNIT_EXPECT_EQ(test, check_all(test, t, lines, want), 0ULL);
	/* line 5 holds a void entry of extent 5: an install finds it empty */
	KUNIT_ASSERT_EQ(test, want[5].kind, FLAZ_ENTRY_NONE);
	e = slot(5, 0, 128);
	set(t, 5, &e, &old);
	KUNIT_EXPECT_EQ(test, old.kind, FLAZ_ENTRY_NONE);
	e.gen = 3;
	want[5] = stored(&e, 0, 3);
	KUNIT_EXPECT_EQ(test, check_all(test, t, lines, want), 0ULL);
	expect_usage(test, t, n - dropped + 1, (slots - dropped + 1) * FLAZ_BLOCK_SIZE,
		     (slots - dropped) * 64 + 128);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 5), 128U);

	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), n - dropped + 1);
	memset(want, 0, lines * sizeof(*want));
	KUNIT_EXPECT_EQ(test, check_all(test, t, lines, want), 0ULL);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 0ULL);
}

/*
 * An extent's eviction writes no table block: its entries stay where they
 * are, void by its generation, in DRAM and on the SSD alike. Paged out (clean)
 * and in again, loading what the SSD holds, they still read as empty and are
 * not counted; a line holding one takes an install as an empty line does.
 */
static void l2p_evict_clean(struct kunit *test)
{
	const u64 lines = 3 * FLAZ_META_ENTRIES;
	const u64 blk[3] = { 5, FLAZ_META_ENTRIES + 5, 2 * FLAZ_META_ENTRIES + 5 };
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 2 * lines);
	struct flaz_entry a = slot(3, 64, 96), b = slot(4, 64, 96), e, old;
	bool worn;
	u64 p;

	set(t, blk[0], &a, NULL);			/* table block 0 */
	set(t, blk[1], &b, NULL);			/* block 1 */
	set(t, blk[2], &a, NULL);			/* block 2 */
	KUNIT_EXPECT_EQ(test, take_all_dirty(t), 3ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 2U);
	KUNIT_EXPECT_FALSE(test, worn);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	KUNIT_EXPECT_FALSE(test, lookup(t, blk[0], &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, blk[2], &e));
	KUNIT_EXPECT_TRUE(test, lookup(t, blk[1], &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);

	/* clean: the three pages go (the clock's first round only clears their use) */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 3ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 0));
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 4), 0U);

	/* in again from the SSD, which still holds all three, a's of gen 1 */
	for (p = 0; p < 3; p++)
		page_in(test, t, p);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, blk[0], &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, blk[1], &b));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, blk[2], &a));
	for (p = 0; p < 3; p++)
		flaz_l2p_page_done(t, p);
	KUNIT_EXPECT_FALSE(test, lookup(t, blk[0], &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_FALSE(test, lookup(t, blk[2], &e));
	KUNIT_EXPECT_TRUE(test, lookup(t, blk[1], &e));
	KUNIT_EXPECT_EQ(test, e.ext, 4U);
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 4), 96U);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	/* another block of a void entry's line: installed as into an empty line */
	set(t, blk[0] + lines, &b, &old);
	KUNIT_EXPECT_EQ(test, old.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_TRUE(test, lookup(t, blk[0] + lines, &e));
	expect_usage(test, t, 2, 2 * FLAZ_BLOCK_SIZE, 2 * 96);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
}

/* @fn(@t, @block) with @block's line locked here. */
static bool locked(struct flaz_l2p *t, u64 block, bool (*fn)(struct flaz_l2p *t, u64 block))
{
	u64 line = flaz_l2p_line(t, block);
	bool r;

	flaz_l2p_lock(t, line);
	r = fn(t, block);
	flaz_l2p_unlock(t, line);
	return r;
}

/* A write to @block; returns whether it was cached. */
static bool write(struct flaz_l2p *t, u64 block)
{
	return locked(t, block, flaz_l2p_drop_block);
}

/*
 * Paging a page in: an entry goes into a line no write touched, a tombstone
 * keeps it out (reading as empty and costing nothing), and so does an entry
 * already there; dropping everything meanwhile leaves tombstones too.
 */
static void l2p_load_tomb(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), b = slot(4, 128, 96), e;
	u64 blocks, logical, physical;

	page_in(test, t, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 7, &a));
	KUNIT_EXPECT_TRUE(test, lookup(t, 7, &e));
	/* loaded entries are on the SSD already: nothing to write */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	/* a line taken (by the loader or an install) is not loaded over */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, lines + 7, &b));
	KUNIT_EXPECT_TRUE(test, lookup(t, 7, &e));

	/* a write to line 9 before the loader got there */
	KUNIT_EXPECT_FALSE(test, write(t, 9));
	get(t, 9, &e);
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_FALSE(test, lookup(t, 9, &e));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 9, &a));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, lines + 9, &a));
	/* its table block is written again, so the SSD forgets the old entry */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	flaz_l2p_usage(t, &blocks, &logical, &physical);
	KUNIT_EXPECT_EQ(test, blocks, 1ULL);
	KUNIT_EXPECT_EQ(test, physical, 96ULL);
	/* a write to another block of a loaded line leaves its entry, and no tombstone */
	KUNIT_EXPECT_FALSE(test, write(t, lines + 7));
	KUNIT_EXPECT_TRUE(test, lookup(t, 7, &e));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0));
	/* an install (or a later load) replaces a tombstone like an empty line */
	set(t, 9, &b, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 9, &e));
	KUNIT_EXPECT_EQ(test, e.ext, 4U);

	/* a discard of everything while loading: every untouched line is kept out */
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, FLAZ_META_ENTRIES + 1, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1));
	flaz_l2p_usage(t, &blocks, &logical, &physical);
	KUNIT_EXPECT_EQ(test, blocks, 0ULL);
	KUNIT_EXPECT_EQ(test, physical, 0ULL);
	flaz_l2p_page_done(t, 0);

	/* once a page is loaded, a write to an empty line leaves no tombstone */
	t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	page_in(test, t, 0);
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, write(t, 20));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 20, &a));
}

/*
 * Pages out of DRAM: their lines miss and take nothing; a write there leaves
 * the line's tombstone bit and its table block dirty (the page-in keeps the
 * SSD's entry out of that line only); only clean pages go, not used since
 * the clock last passed; what goes leaves the counters and dirties nothing.
 */
static void l2p_paging(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES + 65;
	/* 2 pages of a table block each, and one block of 65 lines */
	const u64 nr_blocks = 2 * FLAZ_L2P_PAGE_BLOCKS + 1;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), e, old;
	u64 dram, page1 = PAGE_LINES + 3;

	dram = flaz_l2p_dram_bytes(t);
	KUNIT_EXPECT_EQ(test, flaz_l2p_nr_pages(t), 3ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_nr_blocks(t), nr_blocks);
	KUNIT_EXPECT_EQ(test, flaz_l2p_page_of(page1), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	flaz_l2p_lock(t, 5);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 5));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_set(t, 5, &a, &old));
	flaz_l2p_unlock(t, 5);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	/* a write to page 0 while it is out: line 5's tombstone bit, block 0 dirty */
	KUNIT_EXPECT_FALSE(test, write(t, 5));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 1), nr_blocks);
	page_in(test, t, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 5, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 6, &a));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_TRUE(test, lookup(t, 6, &e));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	page_in(test, t, 1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, page1, &a));
	flaz_l2p_page_done(t, 1);
	KUNIT_EXPECT_TRUE(test, lookup(t, page1, &e));
	expect_usage(test, t, 2, 2 * FLAZ_BLOCK_SIZE, 2 * 96);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 2 * 96U);
	page_in(test, t, 2);
	flaz_l2p_page_done(t, 2);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), flaz_l2p_bytes(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_dram_bytes(t), dram + flaz_l2p_bytes(t));

	/*
	 * Each page was used since it came in: the clock's first round spares
	 * them; then page 0 is dirty and stays, page 1 goes, and that is enough.
	 */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, flaz_l2p_bytes(t) - 1), 1ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, page1, &e));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 0));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 2 * PAGE_LINES));
	/* page 1's entry leaves the counters, page 0's stays */
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 96U);
	/* paging out writes nothing: page 1's blocks are clean */
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 1), nr_blocks);

	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 2 * PAGE_LINES));
	/* written: page 0 is clean and goes too */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_dram_bytes(t), dram);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);

	/* dropping everything while all are out: every line's bit, every block dirty */
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 0ULL);
	page_in(test, t, 1);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, page1, &a));
	page_in(test, t, 2);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 2 * PAGE_LINES + 64, &a));
	flaz_l2p_page_done(t, 1);
	flaz_l2p_page_done(t, 2);
	page_in(test, t, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 6, &a));
	flaz_l2p_page_done(t, 0);
	expect_usage(test, t, 0, 0, 0);

	/* a dirty page never goes; once written, all go */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), flaz_l2p_bytes(t));
	KUNIT_EXPECT_EQ(test, take_all_dirty(t), nr_blocks);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 3ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	/* the bits went with the page-in: the SSD's table is what comes in now */
	page_in(test, t, 2);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 2 * PAGE_LINES + 64, &a));
	flaz_l2p_page_done(t, 2);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
}

/*
 * A write to a page that is out costs its line only: a tombstone bit the
 * page-in makes a tombstone (its block dirty, to be written without the
 * line), whenever the page comes in, as often as it happens; the page's other
 * lines load as the SSD holds them.
 */
static void l2p_tomb_bits(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), e;

	KUNIT_EXPECT_FALSE(test, write(t, 5));
	KUNIT_EXPECT_FALSE(test, write(t, lines + PAGE_LINES + 7));
	/* block 0, and the first of page 1 */
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 1), (u64)FLAZ_L2P_PAGE_BLOCKS);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, FLAZ_L2P_PAGE_BLOCKS + 1),
			2ULL * FLAZ_L2P_PAGE_BLOCKS);
	page_in(test, t, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 5, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 6, &a));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, lookup(t, 6, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), (u64)FLAZ_L2P_PAGE_BLOCKS);
	/* the bit of page 1 is kept until it comes in */
	page_in(test, t, 1);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, PAGE_LINES + 7, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, PAGE_LINES + 8, &a));
	flaz_l2p_page_done(t, 1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	/* out again, and written again: the same, however long the table has run */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 2ULL);
	KUNIT_EXPECT_FALSE(test, write(t, 5));
	KUNIT_EXPECT_FALSE(test, write(t, 5 + lines));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 1), 2ULL * FLAZ_L2P_PAGE_BLOCKS);
	page_in(test, t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 5, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 6, &a));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_TRUE(test, lookup(t, 6, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
}

/*
 * Raw slots are counted by their size, cold-codec ones by the entry's bit, which
 * a volume without a cold codec does not have (its entries are a bit narrower);
 * an extent's eviction takes its raw and cold bytes out.
 */
static void l2p_codec_usage(struct kunit *test)
{
	struct flaz_l2p *t = create_cold(test, 200, 16, 32 << 10, 1600, true);
	struct flaz_l2p *plain = create(test, 200, 16, 32 << 10, 1600);
	struct flaz_entry c64 = slot(0, 32, 64), raw = slot(1, 64, FLAZ_MAX_SLOT_BYTES);
	struct flaz_entry s96 = slot(2, 4192, 96), e;
	bool worn;

	/* a bit more a line: a page of 8 groups of 64 lines, a word more each */
	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), flaz_l2p_bytes(plain) + 8 * 8);
	c64.cold = true;
	set(t, 1, &c64, NULL);
	set(t, 2, &raw, NULL);
	set(t, 3, &s96, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 1, &e));
	KUNIT_EXPECT_TRUE(test, e.cold);
	KUNIT_EXPECT_TRUE(test, lookup(t, 3, &e));
	KUNIT_EXPECT_FALSE(test, e.cold);
	expect_codecs(test, t, FLAZ_MAX_SLOT_BYTES, 64);
	expect_usage(test, t, 3, 3 * FLAZ_BLOCK_SIZE, 64 + FLAZ_MAX_SLOT_BYTES + 96);

	/* the cleaner recompresses block 3 with the cold codec */
	s96 = slot(5, 32, 64);
	s96.cold = true;
	flaz_l2p_lock(t, 3);
	flaz_l2p_move(t, 3, &s96);
	flaz_l2p_unlock(t, 3);
	expect_codecs(test, t, FLAZ_MAX_SLOT_BYTES, 128);
	set(t, 1, &none, NULL);
	set(t, 2 + 200, &c64, NULL);
	expect_codecs(test, t, 0, 128);

	/* evicting extent 5 takes its 64 cold bytes, extent 1 its raw slot */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 5, &worn), 1U);
	expect_codecs(test, t, 0, 64);
	set(t, 4, &raw, NULL);
	expect_codecs(test, t, FLAZ_MAX_SLOT_BYTES, 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 1, &worn), 1U);
	expect_codecs(test, t, 0, 64);
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop_all(t), 1ULL);
	expect_codecs(test, t, 0, 0);
	expect_usage(test, t, 0, 0, 0);

	/* without a cold codec the bit is not kept */
	set(plain, 1, &c64, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(plain, 1, &e));
	KUNIT_EXPECT_FALSE(test, e.cold);
	expect_codecs(test, plain, 0, 0);
}

static void l2p_create_bad(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(0, 16, 32 << 10, 100, false)), (long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(100, 0, 32 << 10, 100, false)),
			(long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(100, 16, 32 << 10, 0, false)), (long)-EINVAL);
}

/*
 * The cleaner's view: live bytes per extent follow every change; a line points
 * at a slot only by its block, extent and offset; hits heat it up to 3; a move
 * keeps half the heat and the live bytes go with it; dropping a slot dirties
 * no table block (the SSD's copy goes by its extent's generation); a new
 * install starts cold.
 */
static void l2p_cleaner_view(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	struct flaz_entry a = slot(3, 64, 96), b = slot(3, 160, 256), m = slot(9, 32, 96);
	u64 blk_a = 5 + lines, blk_b = FLAZ_META_ENTRIES + 7;
	u32 heat = 99, i;
	bool worn;

	set(t, blk_a, &a, NULL);
	set(t, blk_b, &b, NULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 352U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 9), 0U);

	/* the back pointer must match exactly: block (tag), extent and offset */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, 5, 3, 64, &heat));	/* other tag */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_a, 3, 96, &heat));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_a, 4, 64, &heat));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, 6 + lines, 3, 64, &heat));	/* empty */

	/* hits saturate at 3; a neighbour's heat is its own */
	for (i = 0; i < 5; i++)
		flaz_l2p_touch(t, flaz_l2p_line(t, blk_a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_EQ(test, heat, 3U);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_b, 3, 160, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);

	/* a move: the new place, half the heat, the live bytes with it */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	flaz_l2p_move(t, blk_a, &m);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 9, 32, &heat));
	KUNIT_EXPECT_EQ(test, heat, 1U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 256U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 9), 96U);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	flaz_l2p_move(t, blk_a, &m);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 9, 32, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));

	/*
	 * The victim goes: what still points into it (the slot not moved) is void
	 * by its generation, no table block dirty; the moved one stays.
	 */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1));
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 1U);
	KUNIT_EXPECT_FALSE(test, worn);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_b, 3, 160, &heat));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 9, 32, &heat));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);

	/* a new install in a hot line starts cold (extent 3 in use again) */
	flaz_l2p_open_extent(t, 3);
	flaz_l2p_touch(t, flaz_l2p_line(t, blk_a));
	flaz_l2p_touch(t, flaz_l2p_line(t, blk_a));
	set(t, blk_a, &a, NULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 9), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 96U);
}

static bool ghost(struct flaz_l2p *t, u64 block)
{
	return locked(t, block, flaz_l2p_ghost);
}

static void ghost_case(struct kunit *test, struct flaz_l2p *t, const struct flaz_entry *a,
		       const struct flaz_entry *b, u64 blk_a, u64 blk_b, u64 blk_z)
{
	bool worn;

	set(t, blk_a, a, NULL);
	set(t, blk_b, b, NULL);
	set(t, blk_z, &zero, NULL);
	KUNIT_EXPECT_FALSE(test, ghost(t, blk_a));	/* live: a hit, not a ghost */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 1U);
	KUNIT_EXPECT_TRUE(test, ghost(t, blk_a));	/* extent free */
	KUNIT_EXPECT_FALSE(test, ghost(t, 5));		/* the same line, another block */
	KUNIT_EXPECT_FALSE(test, ghost(t, blk_z));
	KUNIT_EXPECT_FALSE(test, ghost(t, blk_b));	/* extent 4 still holds it */
	flaz_l2p_open_extent(t, 3);
	KUNIT_EXPECT_TRUE(test, ghost(t, blk_a));	/* in use by its next tenant */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 0U);
	KUNIT_EXPECT_FALSE(test, ghost(t, blk_a));	/* gone a second time: forgotten */

	/* a line written empty forgets its block */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 4, &worn), 1U);
	KUNIT_EXPECT_TRUE(test, ghost(t, blk_b));
	set(t, blk_b, &none, NULL);
	KUNIT_EXPECT_FALSE(test, ghost(t, blk_b));
}

/*
 * S3-FIFO's ghost, from the table: a line still holding the entry of the same
 * block that its extent's last eviction voided, while the extent is free or in
 * use again; not once the extent went a second time, nor for a live entry,
 * another block of the line, a zero block or a line written empty.
 */
static void l2p_ghost(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_entry a = slot(3, 64, 96), b = slot(4, 0, 96);
	struct flaz_l2p *t = create_cold(test, lines, 16, 32 << 10, 4 * lines, false);

	ghost_case(test, t, &a, &b, 5 + lines, 9, 11);
	/* with the cold bit between the tag and the generation, set */
	t = create_cold(test, lines, 16, 32 << 10, 4 * lines, true);
	a.cold = true;
	ghost_case(test, t, &a, &b, 5 + lines, 9, 11);
}

/*
 * Evicting an extent is O(1): no line is visited, yet every entry into it
 * reads as empty while another extent's stay; its slots, bytes, raw and cold
 * bytes leave the totals; its gen moves on to the next even one, and its gen
 * block is to be written, no table block.
 */
static void l2p_evict_extent(struct kunit *test)
{
	const u64 lines = PAGE_LINES + 64;
	/* 3000 extents: two gen blocks of 2032 (FLAZ_GEN_ENTRIES); 2500 is in the second */
	const u32 ev = 2500, keep = 7;
	const u64 eb[5] = { 3, 64 + lines, 700 + 2 * lines, PAGE_LINES + 1 + 3 * lines,
			    PAGE_LINES + 63 };
	const u64 fb[3] = { 4, 65, PAGE_LINES + 2 };
	struct flaz_l2p *t = create_free(test, lines, 3000, 32 << 10, 8 * lines, true);
	struct flaz_entry es[5], fs[3], e, old;
	bool worn = true;
	u32 i;

	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, ev), 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, ev));
	flaz_l2p_open_extent(t, ev);
	flaz_l2p_open_extent(t, keep);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, ev), GEN1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_in_use(t, ev));
	page_all(test, t);

	es[0] = slot(ev, 0, 64);
	es[0].cold = true;
	es[1] = slot(ev, 64, 96);
	es[2] = slot(ev, 160, FLAZ_MAX_SLOT_BYTES);
	es[3] = slot(ev, 4288, 160);
	es[3].cold = true;
	es[4] = slot(ev, 4448, 32);
	fs[0] = slot(keep, 0, 64);
	fs[0].cold = true;
	fs[1] = slot(keep, 64, FLAZ_MAX_SLOT_BYTES);
	fs[2] = slot(keep, 4192, 96);
	for (i = 0; i < 5; i++)
		set(t, eb[i], &es[i], NULL);
	for (i = 0; i < 3; i++)
		set(t, fb[i], &fs[i], NULL);
	set(t, 5, &zero, NULL);
	/*
	 * ev: 5 slots, 64 + 96 + 4128 + 160 + 32 = 4480 bytes, 4128 raw, 64 + 160
	 * cold; keep: 3 slots, 64 + 4128 + 96 = 4288 bytes, 4128 raw, 64 cold; a zero.
	 */
	expect_usage(test, t, 9, 8 * FLAZ_BLOCK_SIZE, 4480 + 4288);
	expect_codecs(test, t, 2 * 4128, 224 + 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, ev), 4480U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, keep), 4288U);
	/* written: nothing dirty, table or gens */
	take_all_dirty(t);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 1));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 2ULL);

	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, ev, &worn), 5U);
	KUNIT_EXPECT_FALSE(test, worn);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, ev), 2);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gens(t)[ev], 2);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, ev));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, ev));
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, keep), GEN1);
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_FALSE_MSG(test, lookup(t, eb[i], &e), "slot %u", i);
		get(t, flaz_l2p_line(t, eb[i]), &e);
		KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);
	}
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, lookup(t, fb[i], &e), "slot %u", i);
		KUNIT_EXPECT_EQ(test, e.ext, keep);
		KUNIT_EXPECT_EQ(test, e.off, fs[i].off);
	}
	KUNIT_EXPECT_TRUE(test, lookup(t, 5, &e));
	expect_usage(test, t, 4, 3 * FLAZ_BLOCK_SIZE, 4288);
	expect_codecs(test, t, 4128, 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, ev), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, keep), 4288U);
	/* the second gen block only; no table block */
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 1ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 1));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	/* its next tenant (gen 3) sees none of them, and counts only its own */
	flaz_l2p_open_extent(t, ev);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, ev), 3);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE_MSG(test, lookup(t, eb[i], &e), "slot %u", i);
	e = slot(ev, 0, 128);
	set(t, 64, &e, &old);				/* eb[1]'s line */
	KUNIT_EXPECT_EQ(test, old.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_TRUE(test, lookup(t, 64, &e));
	KUNIT_EXPECT_EQ(test, e.gen, 3);
	expect_usage(test, t, 5, 4 * FLAZ_BLOCK_SIZE, 4288 + 128);
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, ev, &worn), 1U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, ev), 4);
	expect_usage(test, t, 4, 3 * FLAZ_BLOCK_SIZE, 4288);
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, keep, &worn), 3U);
	expect_usage(test, t, 1, 0, 0);
	expect_codecs(test, t, 0, 0);
}

/*
 * An extent evicted while a page holding an entry into it is out: its
 * eviction counts nothing (the counters are of resident entries), and the
 * page-in, loading the entry as the SSD still holds it (the old gen), stores
 * it void: it misses, costs nothing, and leaves nothing to subtract later.
 */
static void l2p_evict_paged_out(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	struct flaz_entry a = slot(3, 64, 96), f = slot(4, 160, 64), e;
	bool worn;

	set(t, 10, &a, NULL);
	set(t, 11, &f, NULL);
	expect_usage(test, t, 2, 2 * FLAZ_BLOCK_SIZE, 96 + 64);
	/* written: page 0 is clean and goes, and page 1 with it */
	KUNIT_EXPECT_EQ(test, take_all_dirty(t), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 10));
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);

	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 3), 2);
	expect_usage(test, t, 0, 0, 0);

	page_in(test, t, 0);
	KUNIT_EXPECT_EQ(test, a.gen, GEN1);		/* as the SSD holds it */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 10, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 11, &f));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, lookup(t, 10, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_TRUE(test, lookup(t, 11, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 64);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 4), 64U);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	/* out again: only f's entry leaves the counters, none goes below zero */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 4), 0U);
}

static bool always_durable(void *data, u32 ext)
{
	return true;
}

static bool never_marked(void *data, u64 block)
{
	return false;
}

/*
 * A table block read from the SSD (table.c) is loaded entry by entry: a sound
 * entry of its extent's generation comes in; one that cannot be (its slot past
 * the end of its extent) is left out and the block reported damaged (-EILSEQ),
 * to be written again; one of an older generation is left out quietly.
 */
static void l2p_table_load_checks(struct kunit *test)
{
	struct flaz_geometry g;
	struct flaz_entry_info ei = { .units = 129, .ext = 3, .tag = 0 };
	struct flaz_table_ctx x = { .durable = always_durable, .marked = never_marked };
	struct flaz_l2p *t;
	struct flaz_entry e;
	bool worn;
	u64 *entries;
	u32 eb;
	void *blk;

	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1 << 16, 32, 200), 0);
	eb = 32 << 10;
	t = create_paged(test, g.nr_lines, g.nr_extents, eb, 2 * g.nr_lines, false);
	entries = kunit_kcalloc(test, FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	x.entries = kunit_kcalloc(test, FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	blk = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, entries && x.entries && blk);
	x.l2p = t;
	x.geo = &g;
	x.hdd_blocks = 2 * g.nr_lines;
	/* extent 3 evicted once and in use again: at GEN1 + 2 */
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 0U);
	flaz_l2p_open_extent(t, 3);
	KUNIT_ASSERT_EQ(test, flaz_l2p_gen(t, 3), GEN1 + 2);

	/* line 4: a slot that ends at its extent's end, at the extent's generation */
	ei.gen = flaz_l2p_gen(t, 3);
	ei.off = eb - 129 * FLAZ_SLOT_ALIGN;
	entries[4] = flaz_entry_pack(&ei, &g);
	/* line 5: the same a unit further on, past the end: impossible */
	ei.off += FLAZ_SLOT_ALIGN;
	entries[5] = flaz_entry_pack(&ei, &g);
	/* line 6: sound, but of the extent's generation before (an eviction left it) */
	ei.off = 64;
	ei.gen = GEN1;
	entries[6] = flaz_entry_pack(&ei, &g);
	flaz_meta_encode(blk, 7, 1, 0, entries);

	page_in(test, t, 0);
	KUNIT_EXPECT_EQ(test, flaz_table_load(&x, 0, blk, 7, false), -EILSEQ);
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, lookup(t, 4, &e));
	KUNIT_EXPECT_EQ(test, e.ext, 3U);
	KUNIT_EXPECT_EQ(test, e.off, eb - 129 * FLAZ_SLOT_ALIGN);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 6, &e));

	/* the block without its damaged entry loads clean */
	entries[5] = 0;
	flaz_meta_encode(blk, 7, 1, 0, entries);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	page_in(test, t, 0);
	KUNIT_EXPECT_EQ(test, flaz_table_load(&x, 0, blk, 7, false), 0);
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, lookup(t, 4, &e));
}

/*
 * A line's heat outlives its page going out and coming back (the cleaner
 * judges by it, cleaner.c), unless a write emptied the line meanwhile: what
 * the SSD held for it does not come in, and its heat goes with it.
 */
static void l2p_heat_paged(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	struct flaz_entry a = slot(3, 64, 96), f = slot(4, 160, 64), e;
	u32 heat = 9;

	set(t, 10, &a, NULL);
	set(t, 11, &f, NULL);
	flaz_l2p_touch(t, 10);
	flaz_l2p_touch(t, 10);
	flaz_l2p_touch(t, 11);
	KUNIT_EXPECT_EQ(test, take_all_dirty(t), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 10));
	KUNIT_EXPECT_EQ(test, flaz_l2p_heat(t, 10), 2U);
	/* a write to block 11 while its page is out */
	flaz_l2p_lock(t, 11);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_drop_block(t, 11));
	flaz_l2p_unlock(t, 11);
	KUNIT_EXPECT_EQ(test, flaz_l2p_heat(t, 11), 0U);

	page_in(test, t, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 10, &a));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 11, &f));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, 10, 3, 64, &heat));
	KUNIT_EXPECT_EQ(test, heat, 2U);
	KUNIT_EXPECT_FALSE(test, lookup(t, 11, &e));
	KUNIT_EXPECT_EQ(test, flaz_l2p_heat(t, 11), 0U);
}

/*
 * A past bug: a write to a block whose page went out after it was loaded
 * (clean, so trim dropped it) must keep the SSD's entry for the block from
 * coming back: the line's tombstone bit, and its table block dirty (to be
 * written without it) from the write until a commit takes it, the page in.
 */
static void l2p_write_while_out(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	const u64 b = 7 + lines;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry old = slot(3, 64, 96), e;
	u64 first;
	u32 n, i;

	page_in(test, t, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, b, &old));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 8, &old));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, lookup(t, b, &e));
	n = flaz_l2p_page_blocks(t, 0, &first);
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, n, FLAZ_L2P_PAGE_BLOCKS);
	for (i = 0; i < n; i++)
		flaz_l2p_take_dirty(t, first + i);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, flaz_l2p_line(t, b)));

	/* the write: block 0 dirty, and only it */
	KUNIT_EXPECT_FALSE(test, write(t, b));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 1), 2ULL);

	/*
	 * The page comes in again (a commit pages a dirty page in before it
	 * takes its blocks: meta.c), the SSD still holding the old entry.
	 */
	page_in(test, t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, b, &old));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 8, &old));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, lookup(t, b, &e));
	get(t, flaz_l2p_line(t, b), &e);
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_NONE);
	KUNIT_EXPECT_TRUE(test, lookup(t, 8, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
}

/* trim() never drops a page with a dirty table block, whichever it is. */
static void l2p_trim_dirty(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES;
	/* a line of page 0's last table block, 15 */
	const u64 blk = (FLAZ_L2P_PAGE_BLOCKS - 1) * FLAZ_META_ENTRIES + 3;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	struct flaz_entry a = slot(3, 64, 96), e;

	set(t, blk, &a, NULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), (u64)FLAZ_L2P_PAGE_BLOCKS - 1);
	/* page 1, clean, goes; page 0 stays whatever the budget */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, PAGE_LINES));
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 0ULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, blk, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);

	/* written, then its first block marked again (a failed write): still stays */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS - 1));
	flaz_l2p_set_dirty(t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 0ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 0));
	/* clean: it goes */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0));
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	expect_usage(test, t, 0, 0, 0);
}

/*
 * make_room() pages clean pages out, least recently used first, within its
 * steps of the clock (resident pages met), never a dirty one, and a clean
 * leaving one too: a page-in makes room at once.
 */
static void l2p_make_room(struct kunit *test)
{
	const u64 lines = 4 * PAGE_LINES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	u64 page = flaz_l2p_page_bytes(t, 0);
	struct flaz_entry a = slot(3, 64, 96), e;

	KUNIT_ASSERT_EQ(test, flaz_l2p_resident_bytes(t), 4 * page);
	/* page 2 dirty; every page just in is referenced: a step only clears a ref */
	set(t, 2 * PAGE_LINES + 5, &a, NULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_make_room(t, 3 * page, 1));
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 4 * page);
	/* the clock's second pass takes page 0, the first without its ref */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_make_room(t, 3 * page, 8));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 0));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, PAGE_LINES));
	/* a page hit since keeps its place (ref set again): page 3 goes before page 1 */
	flaz_l2p_lock(t, PAGE_LINES + 1);
	flaz_l2p_touch(t, PAGE_LINES + 1);
	flaz_l2p_unlock(t, PAGE_LINES + 1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_make_room(t, 2 * page, 8));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, PAGE_LINES));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 3 * PAGE_LINES));
	/* nothing fits a budget of 0: the dirty page stays, whatever the steps */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_make_room(t, 0, 64));
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), page);
	KUNIT_EXPECT_TRUE(test, lookup(t, 2 * PAGE_LINES + 5, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	/* a trim marks it leaving; written by a commit, it may go, leaving no more */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_leaving_bytes(t), page);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 2 * FLAZ_L2P_PAGE_BLOCKS));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_make_room(t, 0, 64));
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_leaving_bytes(t), 0ULL);
}

/* Open and evict extent @ext until it is worn (at most @max times); returns how often. */
static u32 wear(struct flaz_l2p *t, u32 ext, u32 max)
{
	bool worn = false;
	u32 n = 0;

	while (!worn && n < max) {
		flaz_l2p_open_extent(t, ext);
		flaz_l2p_evict_extent(t, ext, &worn);
		n++;
	}
	return n;
}

/*
 * An extent at the last even generation is worn out. 1 GiB extents (off_bits
 * log2(2^30 / 32) = 25) and 4096 of them (ext_bits 12) leave entries 64 - 8 -
 * 25 - 12 - 1 - 4 = 14 gen bits: worn at 2^14 - 2 = 16382. reset_gens(0xffff)
 * caps at 16380, so one open (16381) and eviction (16382) wear it out; from
 * 16376, three (16378, 16380, 16382). With 32 KiB extents and 16 of them, gens
 * are 16 bits: worn at 0xfffe, reset caps at 0xfffc, one step again.
 */
static void l2p_worn(struct kunit *test)
{
	struct flaz_l2p *t = create_free(test, 64, 4096, 1U << 30, 64, false);
	struct flaz_entry s = slot(0, (1U << 30) - 32, 64), e;
	bool worn = false;

	flaz_l2p_reset_gens(t, 0xffff);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 16380);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 4095), 16380);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 0));
	/* 4096 extents: three gen blocks (2 * 2032 + 32), all to be written */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 1));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 2));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 3ULL);

	flaz_l2p_open_extent(t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 16381);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_in_use(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 0));
	/* an entry of the highest gen there is, in all 14 bits */
	page_all(test, t);
	set(t, 1, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 1, &e));
	KUNIT_EXPECT_EQ(test, e.gen, 16381);
	KUNIT_EXPECT_EQ(test, e.off, (1U << 30) - 32);
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 0, &worn), 1U);
	KUNIT_EXPECT_TRUE(test, worn);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 16382);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_worn(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, 0));
	KUNIT_EXPECT_FALSE(test, lookup(t, 1, &e));
	expect_usage(test, t, 0, 0, 0);
	/* evicted again, it stays worn */
	worn = false;
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 0, &worn), 0U);
	KUNIT_EXPECT_TRUE(test, worn);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 16382);
	/* its neighbour is not */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 1));

	flaz_l2p_reset_gens(t, 16376);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 16376);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 0));
	KUNIT_EXPECT_EQ(test, wear(t, 1, 10), 3U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 1), 16382);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_worn(t, 1));

	t = create_free(test, 64, 16, 32 << 10, 64, false);
	flaz_l2p_reset_gens(t, 0xffff);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 3), 0xfffc);
	KUNIT_EXPECT_EQ(test, wear(t, 3, 10), 1U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 3), 0xfffe);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_worn(t, 3));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 2));
}

/*
 * A new table has every extent free at gen 0. reset_gens() (a new format)
 * puts every extent at an even gen, at most the last even one but one, and
 * marks every gen block; evicting an extent never opened leaves its gen.
 */
static void l2p_reset_gens(struct kunit *test)
{
	/* 16-bit gens: worn at 0xfffe */
	struct flaz_l2p *t = create_free(test, 64, 16, 32 << 10, 64, false);
	bool worn = true;

	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 15), 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 0));
	/* one gen block, not to be written yet */
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_evict_extent(t, 3, &worn), 0U);
	KUNIT_EXPECT_FALSE(test, worn);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 3), 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_gen_dirty(t, 0));

	flaz_l2p_reset_gens(t, 7);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 6);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 15), 6);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gens(t)[15], 6);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_in_use(t, 15));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 0ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));
	flaz_l2p_open_extent(t, 15);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 15), 7);

	flaz_l2p_reset_gens(t, 8);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 15), 8);
	flaz_l2p_reset_gens(t, 0xfffc);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 0xfffc);
	flaz_l2p_reset_gens(t, 0xfffd);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 0xfffc);
	flaz_l2p_reset_gens(t, 0xfffe);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 0xfffc);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_worn(t, 0));
	flaz_l2p_reset_gens(t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_gen(t, 0), 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));

	/* a gen block whose write failed is marked again */
	flaz_l2p_set_gen_dirty(t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_gen_dirty(t, 0), 0ULL);
}

/*
 * The SSD's table voided (a new format at run time): the resident pages are
 * all to be written, a page that is out holds nothing, so its blocks are clean
 * and its tombstone bits go; every gen block is to be written.
 */
static void l2p_forget_ssd(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), e;
	u64 idx, n = 0;

	page_in(test, t, 0);
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));
	KUNIT_EXPECT_FALSE(test, write(t, PAGE_LINES + 3));
	KUNIT_EXPECT_EQ(test, flaz_l2p_next_dirty(t, 0), (u64)FLAZ_L2P_PAGE_BLOCKS);

	flaz_l2p_forget_ssd(t);
	for (idx = 0; idx < FLAZ_L2P_PAGE_BLOCKS; idx++)
		n += flaz_l2p_take_dirty(t, idx);
	KUNIT_EXPECT_EQ(test, n, (u64)FLAZ_L2P_PAGE_BLOCKS);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_gen_dirty(t, 0));

	/* no tombstone left for page 1 */
	page_in(test, t, 1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, PAGE_LINES + 3, &a));
	flaz_l2p_page_done(t, 1);
	KUNIT_EXPECT_TRUE(test, lookup(t, PAGE_LINES + 3, &e));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
}

static struct kunit_case flaz_l2p_cases[] = {
	KUNIT_CASE(l2p_packing),
	KUNIT_CASE(l2p_lookup_exact),
	KUNIT_CASE(l2p_tag_cut),
	KUNIT_CASE(l2p_usage),
	KUNIT_CASE(l2p_evict_pattern),
	KUNIT_CASE(l2p_evict_clean),
	KUNIT_CASE(l2p_load_tomb),
	KUNIT_CASE(l2p_paging),
	KUNIT_CASE(l2p_tomb_bits),
	KUNIT_CASE(l2p_cleaner_view),
	KUNIT_CASE(l2p_ghost),
	KUNIT_CASE(l2p_codec_usage),
	KUNIT_CASE(l2p_create_bad),
	KUNIT_CASE(l2p_evict_extent),
	KUNIT_CASE(l2p_evict_paged_out),
	KUNIT_CASE(l2p_heat_paged),
	KUNIT_CASE(l2p_table_load_checks),
	KUNIT_CASE(l2p_write_while_out),
	KUNIT_CASE(l2p_trim_dirty),
	KUNIT_CASE(l2p_make_room),
	KUNIT_CASE(l2p_worn),
	KUNIT_CASE(l2p_reset_gens),
	KUNIT_CASE(l2p_forget_ssd),
	{}
};

static struct kunit_suite flaz_l2p_suite = {
	.name = "flaz_l2p",
	.test_cases = flaz_l2p_cases,
};

kunit_test_suite(flaz_l2p_suite);

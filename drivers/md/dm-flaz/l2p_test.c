// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the packed logical-to-physical table: field packing across u64
 * words and pages at maximal values, tag matching (whole and cut), zero entries, usage
 * accounting, dropping by victim extent, and the table's size.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/err.h>
#include <linux/math64.h>

#include "flaz.h"
#include "format.h"

/* Lines of a page of the table in memory (l2p.c: 16 table blocks) */
#define PAGE_LINES	(FLAZ_L2P_PAGE_BLOCKS * FLAZ_META_ENTRIES)

/* A geometry and what its entries must cost, worked out by hand. */
struct l2p_geo {
	u64 lines, exts;
	u32 extent_bytes;
	u64 hdd_blocks;
	u32 bits, tag_bits;
	bool zero_fits;
	u64 bytes;
};

static const struct l2p_geo geos[] = {
	/* 8 + log2(32K/32)=10 + bits(15)=4 + bits(1599/200=7)=3 */
	{ 200, 16, 32 << 10, 200 * 8, 25, 3, true, 4 * 25 * 8 },
	/* 8 + 7 + bits(999)=10 + min(bits(4095)=12, 4) */
	{ 130, 1000, 4 << 10, 130 * 4096, 29, 4, true, 3 * 29 * 8 },
	/* 8 + 13 + 20 + min(bits((2^40-1)/100)=34, 4): the whole tag fits in 37 bits */
	{ 100, 1 << 20, 256 << 10, 1ULL << 40, 45, 4, true, 2 * 45 * 8 },
	/* 8 + 10 + 4 + min(bits((2^40-1)/1000)=31, 4): it does not fit in 18 */
	{ 1000, 16, 32 << 10, 1ULL << 40, 26, 4, false, 16 * 26 * 8 },
	/* exactly 64 lines: one group */
	{ 64, 16, 32 << 10, 64, 23, 1, true, 1 * 23 * 8 },
	/* 65 lines: two groups; 8 + 10 + bits(16)=5 + bits(129/65=1)=1 */
	{ 65, 17, 32 << 10, 65 * 2, 24, 1, true, 2 * 24 * 8 },
	/*
	 * Two whole pages of 16 table blocks (8,128 lines, l2p.c) and 65 lines of a
	 * third: 8 + 10 + bits(15)=4 + bits(1)=1; 256 groups
	 */
	{ PAGE_LINES * 2 + 65, 16, 32 << 10, (PAGE_LINES * 2 + 65) * 2, 23, 1, true,
	  256 * 23 * 8 },
};

static void destroy_action(void *t)
{
	flaz_l2p_destroy(t);
}

/* A table with no page resident: meta.c pages them in. */
static struct flaz_l2p *create_paged(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
				     u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t = flaz_l2p_create(lines, exts, extent_bytes, hdd_blocks, cold);

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(t));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action, t), 0);
	return t;
}

/* Page @p in (coming), expecting @voids for its blocks written while it was out. */
static void page_in(struct kunit *test, struct flaz_l2p *t, u64 p, u32 voids)
{
	u32 v;

	KUNIT_ASSERT_EQ(test, flaz_l2p_page_in(t, p, &v), 0);
	KUNIT_EXPECT_EQ(test, v, voids);
}

/* A table with every page resident and loaded. */
static struct flaz_l2p *create_cold(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
				    u64 hdd_blocks, bool cold)
{
	struct flaz_l2p *t = create_paged(test, lines, exts, extent_bytes, hdd_blocks, cold);
	u64 p;

	for (p = 0; p < flaz_l2p_nr_pages(t); p++) {
		page_in(test, t, p, 0);
		flaz_l2p_page_done(t, p);
	}
	flaz_l2p_tombs_end(t);
	return t;
}

static struct flaz_l2p *create(struct kunit *test, u64 lines, u64 exts, u32 extent_bytes,
			       u64 hdd_blocks)
{
	return create_cold(test, lines, exts, extent_bytes, hdd_blocks, false);
}

static struct flaz_l2p *create_geo(struct kunit *test, const struct l2p_geo *g)
{
	return create(test, g->lines, g->exts, g->extent_bytes, g->hdd_blocks);
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

static struct flaz_entry slot(u32 ext, u32 off, u32 bytes)
{
	struct flaz_entry e = { .kind = FLAZ_ENTRY_SLOT, .ext = ext, .off = off, .bytes = bytes };

	return e;
}

static const struct flaz_entry zero = { .kind = FLAZ_ENTRY_ZERO };
static const struct flaz_entry none = { .kind = FLAZ_ENTRY_NONE };

/* What flaz_l2p_get() must return for @e stored for a block with tag @tag. */
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
	KUNIT_EXPECT_EQ_MSG(test, (got).kind, (want).kind, "line %llu", line);	\
	KUNIT_EXPECT_EQ_MSG(test, (got).ext, (want).ext, "line %llu", line);	\
	KUNIT_EXPECT_EQ_MSG(test, (got).off, (want).off, "line %llu", line);	\
	KUNIT_EXPECT_EQ_MSG(test, (got).bytes, (want).bytes, "line %llu", line);	\
	KUNIT_EXPECT_EQ_MSG(test, (got).tag, (want).tag, "line %llu", line);	\
} while (0)

/* Every line's entry against @want; returns how many differ. */
static u64 check_all(struct kunit *test, struct flaz_l2p *t, const struct l2p_geo *g,
		     const struct flaz_entry *want)
{
	struct flaz_entry e;
	u64 line, bad = 0;

	for (line = 0; line < g->lines; line++) {
		get(t, line, &e);
		if (e.kind != want[line].kind || e.ext != want[line].ext ||
		    e.off != want[line].off || e.bytes != want[line].bytes ||
		    e.tag != want[line].tag) {
			if (!bad)
				EXPECT_ENTRY(test, e, want[line], line);
			bad++;
		}
	}
	return bad;
}

/* A different entry per line, tags spread over the whole range. */
static void fill_pattern(struct flaz_l2p *t, const struct l2p_geo *g, struct flaz_entry *want)
{
	u64 max_tag = div64_u64(g->hdd_blocks - 1, g->lines), line, tag;
	u32 units = g->extent_bytes / FLAZ_SLOT_ALIGN;
	struct flaz_entry e;

	for (line = 0; line < g->lines; line++) {
		div64_u64_rem(line * 2654435761ULL, max_tag + 1, &tag);
		if (g->zero_fits && line % 5 == 4)
			e = zero;
		else
			e = slot(line % g->exts, (u32)(line * 37 % units) * FLAZ_SLOT_ALIGN,
				 (u32)(line % 129 + 1) * FLAZ_SLOT_ALIGN);
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
 * straddles two words and at the last line, with every field at its maximum,
 * then as zero entries with the largest tag, then emptied: each time every other
 * line keeps its entry.
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
		KUNIT_EXPECT_EQ(test, check_all(test, t, g, want), 0ULL);
		fill_pattern(t, g, want);
		KUNIT_ASSERT_EQ_MSG(test, check_all(test, t, g, want), 0ULL, "geometry %u", i);

		big = slot(g->exts - 1, g->extent_bytes - FLAZ_SLOT_ALIGN, FLAZ_MAX_SLOT_BYTES);
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
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g, want), 0ULL, "geometry %u", i);

		for (k = 0; g->zero_fits && k < ARRAY_SIZE(lines); k++) {
			u64 line = lines[k], tag = big_tag(g, line, false);

			if (line >= g->lines)
				continue;
			set(t, line + tag * g->lines, &zero, NULL);
			want[line] = stored(&zero, tag, g->tag_bits);
		}
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g, want), 0ULL, "geometry %u", i);

		for (k = 0; k < ARRAY_SIZE(lines); k++) {
			if (lines[k] >= g->lines)
				continue;
			set(t, lines[k], &none, NULL);
			want[lines[k]] = none;
		}
		KUNIT_EXPECT_EQ_MSG(test, check_all(test, t, g, want), 0ULL, "geometry %u", i);
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
 * A huge disk: tags cut to 12 bits, so a slot entry answers for every block
 * 4096 * nr_lines apart (the slot header tells them apart), while a zero entry,
 * where it fits, keeps the whole tag.
 */
static void l2p_tag_cut(struct kunit *test)
{
	const u64 lines = 1000, b = 123 + 5000 * lines, last = (1ULL << 40) - 1;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 1ULL << 40);
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

	/* One line, 1 + 7 + 4 bits after the length: a 12-bit tag is the most that fits. */
	t = create(test, 1, 2, 4 << 10, 1ULL << 12);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_zero_fits(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), 20ULL * 8);
	set(t, (1ULL << 12) - 1, &zero, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 12) - 1, &e));
	KUNIT_EXPECT_EQ(test, e.kind, FLAZ_ENTRY_ZERO);
	KUNIT_EXPECT_EQ(test, e.tag, (1ULL << 12) - 1);
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 12) - 1 - 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 12) - 2, &e));
	s = slot(1, 4096 - 32, 64);
	set(t, (1ULL << 12) - 1, &s, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 12) - 1, &e));
	KUNIT_EXPECT_EQ(test, e.tag, 15ULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, (1ULL << 12) - 1 - 16, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, (1ULL << 12) - 2, &e));

	t = create(test, 1, 2, 4 << 10, (1ULL << 12) + 1);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_zero_fits(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), 20ULL * 8);
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
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, NULL), 4ULL);
	expect_usage(test, t, 0, 0, 0);
}

/* Dropping victim extents empties their slots' lines only, zero entries stay. */
static void l2p_drop(struct kunit *test)
{
	const struct l2p_geo g = { 200, 16, 32 << 10, 1600, 25, 3, true, 800 };
	struct flaz_l2p *t = create_geo(test, &g);
	struct flaz_entry *want, e;
	DECLARE_BITMAP(victims, 16);
	u64 line, blocks, logical, physical, n = 0, dropped = 0;

	want = kunit_kcalloc(test, g.lines, sizeof(*want), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (line = 0; line < g.lines; line++) {
		if (line % 7 == 3)
			continue;
		if (line % 10 == 9)
			e = zero;
		else
			e = slot(line % 16, (u32)(line % 50) * 32, 64);
		set(t, line + (line % 8) * g.lines, &e, NULL);
		want[line] = stored(&e, line % 8, g.tag_bits);
		n++;
	}
	KUNIT_ASSERT_EQ(test, check_all(test, t, &g, want), 0ULL);

	bitmap_zero(victims, 16);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, victims), 0ULL);
	KUNIT_EXPECT_EQ(test, check_all(test, t, &g, want), 0ULL);

	__set_bit(0, victims);
	__set_bit(5, victims);
	__set_bit(15, victims);
	for (line = 0; line < g.lines; line++) {
		if (want[line].kind == FLAZ_ENTRY_SLOT && test_bit(want[line].ext, victims)) {
			want[line] = none;
			dropped++;
		}
	}
	KUNIT_ASSERT_GT(test, dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, victims), dropped);
	KUNIT_EXPECT_EQ(test, check_all(test, t, &g, want), 0ULL);
	flaz_l2p_usage(t, &blocks, &logical, &physical);
	KUNIT_EXPECT_EQ(test, blocks, n - dropped);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, victims), 0ULL);

	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, NULL), n - dropped);
	memset(want, 0, g.lines * sizeof(*want));
	KUNIT_EXPECT_EQ(test, check_all(test, t, &g, want), 0ULL);
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, NULL), 0ULL);
}

/*
 * An eviction leaves its table blocks stale, not dirty: a commit writes them only
 * when sweeping, or when they change for another reason; either takes both.
 */
static void l2p_stale(struct kunit *test)
{
	const u64 lines = 3 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, lines);
	struct flaz_entry a = slot(3, 64, 96), b = slot(4, 64, 96);
	DECLARE_BITMAP(victims, 16);
	u64 idx;

	set(t, 5, &a, NULL);				/* block 0 */
	set(t, FLAZ_META_ENTRIES + 5, &b, NULL);	/* block 1 */
	set(t, 2 * FLAZ_META_ENTRIES + 5, &a, NULL);	/* block 2 */
	for (idx = 0; idx < 3; idx++)
		KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, idx, false));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));

	bitmap_zero(victims, 16);
	__set_bit(3, victims);
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, victims), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0, false));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 1, true));
	/* block 2 changes: written anyway, its void entry goes with it */
	set(t, 2 * FLAZ_META_ENTRIES + 6, &b, NULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 2, false));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 2, true));
	/* a sweep takes block 0, once */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, true));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0, true));
	/* dropping everything (discard, invalidate) dirties */
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, NULL), 2ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1, false));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 2, false));
	flaz_l2p_set_stale(t, 1);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 1, false));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1, true));
}

/* A write to @block (its line's lock taken here); returns whether it was cached. */
static bool write(struct flaz_l2p *t, u64 block)
{
	u64 line = flaz_l2p_line(t, block);
	bool hit;

	flaz_l2p_lock(t, line);
	hit = flaz_l2p_drop_block(t, block);
	flaz_l2p_unlock(t, line);
	return hit;
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

	page_in(test, t, 0, 0);
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
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, false));
	flaz_l2p_usage(t, &blocks, &logical, &physical);
	KUNIT_EXPECT_EQ(test, blocks, 1ULL);
	KUNIT_EXPECT_EQ(test, physical, 96ULL);
	/* a write to another block of a loaded line leaves its entry, and no tombstone */
	KUNIT_EXPECT_FALSE(test, write(t, lines + 7));
	KUNIT_EXPECT_TRUE(test, lookup(t, 7, &e));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0, false));
	/* an install (or a later load) replaces a tombstone like an empty line */
	set(t, 9, &b, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(t, 9, &e));
	KUNIT_EXPECT_EQ(test, e.ext, 4U);

	/* a discard of everything while loading: every untouched line is kept out */
	KUNIT_EXPECT_EQ(test, flaz_l2p_drop(t, NULL), 2ULL);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, FLAZ_META_ENTRIES + 1, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1, false));
	flaz_l2p_usage(t, &blocks, &logical, &physical);
	KUNIT_EXPECT_EQ(test, blocks, 0ULL);
	KUNIT_EXPECT_EQ(test, physical, 0ULL);

	/* once a page is loaded, a write to an empty line leaves no tombstone */
	t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	page_in(test, t, 0, 0);
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_FALSE(test, write(t, 20));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 0, false));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 20, &a));
}

/*
 * Pages out of DRAM: their lines miss and take nothing; a write there voids
 * its table block (written empty, and not loaded at the next page-in); only
 * clean pages go, not used since the clock last passed; what goes leaves the
 * counters and makes its blocks holding slots stale.
 */
static void l2p_paging(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES + 65;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), e, old;
	u64 dram, page1 = PAGE_LINES + 3;

	/* loaded: the tombstone bits go, and with them their DRAM */
	dram = flaz_l2p_dram_bytes(t);
	flaz_l2p_tombs_end(t);
	KUNIT_EXPECT_EQ(test, flaz_l2p_dram_bytes(t), dram - DIV_ROUND_UP(lines, 64) * 8);
	dram = flaz_l2p_dram_bytes(t);
	KUNIT_EXPECT_EQ(test, flaz_l2p_nr_pages(t), 3ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_page_of(page1), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	flaz_l2p_lock(t, 5);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_resident(t, 5));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_set(t, 5, &a, &old));
	flaz_l2p_unlock(t, 5);
	expect_usage(test, t, 0, 0, 0);

	/* a write to page 0 while it is out: its first block is void */
	KUNIT_EXPECT_FALSE(test, write(t, 5));
	page_in(test, t, 0, BIT(0));
	flaz_l2p_page_done(t, 0);
	page_in(test, t, 1, 0);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, page1, &a));
	flaz_l2p_page_done(t, 1);
	KUNIT_EXPECT_TRUE(test, lookup(t, page1, &e));
	expect_usage(test, t, 1, FLAZ_BLOCK_SIZE, 96);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 96U);
	page_in(test, t, 2, 0);
	flaz_l2p_page_done(t, 2);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), flaz_l2p_bytes(t));
	KUNIT_EXPECT_EQ(test, flaz_l2p_dram_bytes(t), dram + flaz_l2p_bytes(t));

	/*
	 * Each page was used since it came in: the clock's first round spares
	 * them; then page 0 is dirty and stays, page 1 goes, and that is enough.
	 */
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, flaz_l2p_bytes(t) - 1, false), 1ULL);
	KUNIT_EXPECT_FALSE(test, lookup(t, page1, &e));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 2 * PAGE_LINES));
	expect_usage(test, t, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);
	/* the block that held the slot may hold a void entry; the others do not */
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS, false));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS, true));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS + 1, true));

	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0, false), 1ULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_resident(t, 0));
	/* written: page 0 is clean and goes too */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, false));
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0, false), 1ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_dram_bytes(t), dram);

	/* dropping everything voids every block of the pages out */
	flaz_l2p_drop(t, NULL);
	page_in(test, t, 1, GENMASK(FLAZ_L2P_PAGE_BLOCKS - 1, 0));
	page_in(test, t, 2, BIT(0));
	flaz_l2p_page_done(t, 1);
	flaz_l2p_page_done(t, 2);

	/* a dirty page goes only when asked, and its dirty blocks stay void */
	page_in(test, t, 0, GENMASK(FLAZ_L2P_PAGE_BLOCKS - 1, 0));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0, false), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0, true), 3ULL);
	KUNIT_EXPECT_EQ(test, flaz_l2p_resident_bytes(t), 0ULL);
	page_in(test, t, 2, BIT(0));
}

/*
 * While the table loads, a write to a page not in yet costs its line only: a
 * tombstone bit the page-in makes a tombstone (its block written again), not a
 * void block; once loaded, writes void blocks again.
 */
static void l2p_load_tomb_bits(struct kunit *test)
{
	const u64 lines = 2 * PAGE_LINES;
	struct flaz_l2p *t = create_paged(test, lines, 16, 32 << 10, 4 * lines, false);
	struct flaz_entry a = slot(3, 64, 96), e;

	KUNIT_EXPECT_FALSE(test, write(t, 5));
	KUNIT_EXPECT_FALSE(test, write(t, lines + PAGE_LINES + 7));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	page_in(test, t, 0, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, 5, &a));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_load(t, 6, &a));
	flaz_l2p_page_done(t, 0);
	KUNIT_EXPECT_TRUE(test, lookup(t, 6, &e));
	KUNIT_EXPECT_FALSE(test, lookup(t, 5, &e));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, false));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_any_dirty(t));
	/* the bit of page 1 is kept until it comes in */
	page_in(test, t, 1, 0);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_load(t, PAGE_LINES + 7, &a));
	flaz_l2p_page_done(t, 1);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, FLAZ_L2P_PAGE_BLOCKS, false));

	flaz_l2p_tombs_end(t);
	KUNIT_EXPECT_EQ(test, flaz_l2p_trim(t, 0, false), 2ULL);
	KUNIT_EXPECT_FALSE(test, write(t, 5));
	page_in(test, t, 0, BIT(0));
}

static void expect_codecs(struct kunit *test, struct flaz_l2p *t, u64 raw, u64 cold)
{
	u64 r, c;

	flaz_l2p_codec_usage(t, &r, &c);
	KUNIT_EXPECT_EQ(test, r, raw);
	KUNIT_EXPECT_EQ(test, c, cold);
}

/*
 * Raw slots are counted by their size, cold-codec ones by the entry's bit, which
 * a volume without a cold codec does not have (its entries are a bit narrower).
 */
static void l2p_codec_usage(struct kunit *test)
{
	struct flaz_l2p *t = create_cold(test, 200, 16, 32 << 10, 1600, true);
	struct flaz_l2p *plain = create(test, 200, 16, 32 << 10, 1600);
	struct flaz_entry c64 = slot(0, 32, 64), raw = slot(1, 64, FLAZ_MAX_SLOT_BYTES);
	struct flaz_entry s96 = slot(2, 4192, 96), e;

	KUNIT_EXPECT_EQ(test, flaz_l2p_bytes(t), flaz_l2p_bytes(plain) + 4 * 8);
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
	flaz_l2p_drop(t, NULL);
	expect_codecs(test, t, 0, 0);

	/* without a cold codec the bit is not kept */
	set(plain, 1, &c64, NULL);
	KUNIT_EXPECT_TRUE(test, lookup(plain, 1, &e));
	KUNIT_EXPECT_FALSE(test, e.cold);
	expect_codecs(test, plain, 0, 0);
}

static void l2p_create_bad(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(0, 16, 32 << 10, 100, false)), (long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(100, 0, 32 << 10, 100, false)), (long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(flaz_l2p_create(100, 16, 32 << 10, 0, false)), (long)-EINVAL);
}

/*
 * The cleaner's view: live bytes per extent follow every change; a line points
 * at a slot only by its block, extent and offset; hits heat it up to 3; a move
 * keeps half the heat and the live bytes go with it; an eviction leaves its
 * table block stale, a new install starts cold.
 */
static void l2p_cleaner_view(struct kunit *test)
{
	const u64 lines = 2 * FLAZ_META_ENTRIES;
	struct flaz_l2p *t = create(test, lines, 16, 32 << 10, 4 * lines);
	struct flaz_entry a = slot(3, 64, 96), b = slot(3, 160, 256), m = slot(9, 32, 96);
	u64 blk_a = 5 + lines, blk_b = FLAZ_META_ENTRIES + 7;
	u32 heat = 99, i;

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
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, false));
	flaz_l2p_move(t, blk_a, &m);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 9, 32, &heat));
	KUNIT_EXPECT_EQ(test, heat, 1U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 256U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 9), 96U);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 0, false));
	flaz_l2p_move(t, blk_a, &m);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 9, 32, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);

	/* an eviction: stale, not dirty; the extent holds nothing live any more */
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1, false));
	flaz_l2p_evict(t, blk_b);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 0U);
	KUNIT_EXPECT_FALSE(test, flaz_l2p_points(t, blk_b, 3, 160, &heat));
	KUNIT_EXPECT_FALSE(test, flaz_l2p_take_dirty(t, 1, false));
	KUNIT_EXPECT_TRUE(test, flaz_l2p_take_dirty(t, 1, true));

	/* a new install in a hot line starts cold */
	flaz_l2p_touch(t, flaz_l2p_line(t, blk_a));
	flaz_l2p_touch(t, flaz_l2p_line(t, blk_a));
	set(t, blk_a, &a, NULL);
	KUNIT_EXPECT_TRUE(test, flaz_l2p_points(t, blk_a, 3, 64, &heat));
	KUNIT_EXPECT_EQ(test, heat, 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 9), 0U);
	KUNIT_EXPECT_EQ(test, flaz_l2p_live(t, 3), 96U);
}

static struct kunit_case flaz_l2p_cases[] = {
	KUNIT_CASE(l2p_packing),
	KUNIT_CASE(l2p_lookup_exact),
	KUNIT_CASE(l2p_tag_cut),
	KUNIT_CASE(l2p_usage),
	KUNIT_CASE(l2p_drop),
	KUNIT_CASE(l2p_stale),
	KUNIT_CASE(l2p_load_tomb),
	KUNIT_CASE(l2p_paging),
	KUNIT_CASE(l2p_load_tomb_bits),
	KUNIT_CASE(l2p_cleaner_view),
	KUNIT_CASE(l2p_codec_usage),
	KUNIT_CASE(l2p_create_bad),
	{}
};

static struct kunit_suite flaz_l2p_suite = {
	.name = "flaz_l2p",
	.test_cases = flaz_l2p_cases,
};
kunit_test_suite(flaz_l2p_suite);

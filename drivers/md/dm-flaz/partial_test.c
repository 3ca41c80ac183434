// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the blocks a bio covers in part (flaz_edges()): block edges,
 * a bio ending mid-block, 512 bytes at a device's last sector, and that cutting
 * a write at the edges as cache.c does makes every cached block it covers in
 * part a piece of its own.
 */
#include <kunit/test.h>

#include "flaz.h"
#include "format.h"

struct edges_case {
	sector_t start;
	u32 sectors;
	u64 first, last;
	u32 head, head_sectors, tail_sectors;
};

static const struct edges_case edges_cases[] = {
	{ 0, 8, 0, 0, 0, 0, 0 },		/* one whole block */
	{ 8, 16, 1, 2, 0, 0, 0 },		/* two whole blocks */
	{ 1, 1, 0, 0, 512, 1, 0 },		/* 512 bytes inside a block */
	{ 0, 1, 0, 0, 0, 1, 0 },		/* at its start */
	{ 7, 1, 0, 0, 3584, 1, 0 },		/* at its last sector */
	{ 7, 2, 0, 1, 3584, 1, 1 },		/* across a boundary */
	{ 0, 9, 0, 1, 0, 0, 1 },		/* a block, then ending mid-block */
	{ 5, 20, 0, 3, 2560, 3, 1 },		/* in part, whole, in part */
	{ 4, 12, 0, 1, 2048, 4, 0 },		/* in part, then a whole block */
	{ 8, 7, 1, 1, 0, 7, 0 },		/* shorter than a block from its start */
	/* the last sector of a 1 TiB device */
	{ (1ULL << 31) - 1, 1, (1ULL << 28) - 1, (1ULL << 28) - 1, 3584, 1, 0 },
};

static void edges_table(struct kunit *test)
{
	struct flaz_edges e;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(edges_cases); i++) {
		const struct edges_case *t = &edges_cases[i];

		flaz_edges(t->start, t->sectors, &e);
		KUNIT_EXPECT_EQ_MSG(test, e.first, t->first, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e.last, t->last, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e.head, t->head, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e.head_sectors, t->head_sectors, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e.tail_sectors, t->tail_sectors, "case %u", i);
	}
}

/* Which blocks are cached, by pattern: none, all, odd ones, even ones. */
static bool cached(u32 pattern, u64 block)
{
	return pattern == 1 || (pattern >= 2 && (block & 1) == pattern - 2);
}

/*
 * Every bio of 1 to 40 sectors from sectors 0 to 23, under four patterns of
 * cached blocks, cut as cache.c's patch_cut() cuts a write: its piece in part
 * of the first block when that is cached, or what comes before its last block
 * in part when that is cached, or all of it. The pieces cover the bio exactly,
 * and every block it covers in part and cached is a piece of its own, within
 * the block (so it is updated, not dropped).
 */
static void edges_cuts(struct kunit *test)
{
	struct flaz_edges e, whole;
	sector_t start, s;
	u32 sectors, n, piece, pattern;
	u64 own[2];
	u32 nr_own;

	for (pattern = 0; pattern < 4; pattern++) {
		for (start = 0; start < 24; start++) {
			for (sectors = 1; sectors <= 40; sectors++) {
				nr_own = 0;
				for (s = start, n = sectors; n; s += piece, n -= piece) {
					flaz_edges(s, n, &e);
					if (e.head_sectors && cached(pattern, e.first)) {
						piece = e.head_sectors;
						KUNIT_ASSERT_LT(test, nr_own, 2U);
						own[nr_own++] = e.first;
					} else if (e.tail_sectors && cached(pattern, e.last)) {
						piece = n - e.tail_sectors;
					} else {
						piece = n;
					}
					KUNIT_ASSERT_GT_MSG(test, piece, 0U, "%llu+%u", (u64)start,
							    sectors);
					KUNIT_ASSERT_LE(test, piece, n);
				}
				flaz_edges(start, sectors, &whole);
				if (whole.head_sectors && cached(pattern, whole.first))
					KUNIT_EXPECT_TRUE_MSG(test, nr_own && own[0] == whole.first,
							      "%llu+%u: head %llu not its own piece",
							      (u64)start, sectors, whole.first);
				if (whole.tail_sectors && cached(pattern, whole.last))
					KUNIT_EXPECT_TRUE_MSG(test, nr_own &&
							      own[nr_own - 1] == whole.last,
							      "%llu+%u: tail %llu not its own piece",
							      (u64)start, sectors, whole.last);
			}
		}
	}
}

static struct kunit_case edges_test_cases[] = {
	KUNIT_CASE(edges_table),
	KUNIT_CASE(edges_cuts),
	{}
};

static struct kunit_suite edges_suite = {
	.name = "flaz_edges",
	.test_cases = edges_test_cases,
};

kunit_test_suite(edges_suite);

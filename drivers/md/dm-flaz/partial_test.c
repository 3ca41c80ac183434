// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the blocks a bio covers in part (flaz_edges()): block edges,
 * a bio ending mid-block, 512 bytes at a device's last sector, and that cutting
 * at the edges as cache.c does leaves pieces each of one block in part or of
 * whole blocks, covering the bio exactly.
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

/*
 * Every bio of 1 to 40 sectors from sectors 0 to 23, cut as cache.c cuts a
 * write whose blocks are all cached: its piece in part of the first block, or
 * its whole blocks before a last one in part, or all of it.
 */
static void edges_cuts(struct kunit *test)
{
	struct flaz_edges e;
	sector_t start, s;
	u32 sectors, n, piece;

	for (start = 0; start < 24; start++) {
		for (sectors = 1; sectors <= 40; sectors++) {
			for (s = start, n = sectors; n; s += piece, n -= piece) {
				flaz_edges(s, n, &e);
				if (e.head_sectors)
					piece = min(n, e.head_sectors);
				else if (e.tail_sectors)
					piece = n - e.tail_sectors;
				else
					piece = n;
				KUNIT_ASSERT_GT_MSG(test, piece, 0, "%llu+%u at %llu", (u64)start,
						    sectors, (u64)s);
				/* one block in part, or whole blocks */
				if ((s & 7) || (piece & 7))
					KUNIT_ASSERT_EQ_MSG(test, s >> 3, (s + piece - 1) >> 3,
							    "%llu+%u at %llu", (u64)start, sectors,
							    (u64)s);
				KUNIT_ASSERT_LE(test, piece, n);
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

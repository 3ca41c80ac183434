// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for how the hit path groups slots into SSD reads: spans of one
 * extent, aligned to the SSD's logical block, no more than FLAZ_SPAN_GAP apart
 * and no longer than the buffer.
 */
#include <kunit/test.h>

#include "flaz.h"

#define SPAN_MAX	(64U << 10)

static u32 add(struct flaz_span *s, u32 *nr, u32 ext, u32 off, u32 bytes, u32 align, u32 max)
{
	struct flaz_entry e = { .kind = FLAZ_ENTRY_SLOT, .ext = ext, .off = off, .bytes = bytes };

	return flaz_hit_span_add(s, nr, &e, align, max);
}

static void span_aligned(struct kunit *test)
{
	struct flaz_span s[4];
	u32 nr = 0;

	KUNIT_EXPECT_EQ(test, add(s, &nr, 7, 64, 1000, 512, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, nr, 1U);
	KUNIT_EXPECT_EQ(test, s[0].ext, 7U);
	KUNIT_EXPECT_EQ(test, s[0].start, 0U);
	KUNIT_EXPECT_EQ(test, s[0].end, 1536U);

	/* a 4Kn SSD: a slot across a 4 KiB boundary reads both blocks */
	nr = 0;
	KUNIT_EXPECT_EQ(test, add(s, &nr, 7, 4000, 224, 4096, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, nr, 1U);
	KUNIT_EXPECT_EQ(test, s[0].start, 0U);
	KUNIT_EXPECT_EQ(test, s[0].end, 8192U);
	nr = 0;
	KUNIT_EXPECT_EQ(test, add(s, &nr, 7, 4096, 4096, 4096, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, nr, 1U);
	KUNIT_EXPECT_EQ(test, s[0].start, 4096U);
	KUNIT_EXPECT_EQ(test, s[0].end, 8192U);
}

static void span_merge(struct kunit *test)
{
	struct flaz_span s[8];
	u32 nr = 0;

	/* neighbours merge, another extent does not, and a later slot finds its extent's span */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 3, 64, 992, 512, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 3, 1056, 2016, 512, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 4, 1056, 2016, 512, SPAN_MAX), 1U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 3, 3072, 512, 512, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
	KUNIT_EXPECT_EQ(test, s[0].start, 0U);
	KUNIT_EXPECT_EQ(test, s[0].end, 3584U);
	KUNIT_EXPECT_EQ(test, s[1].start, 1024U);
	KUNIT_EXPECT_EQ(test, s[1].end, 3072U);
	/* before the span, within the gap: it grows downwards */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 4, 0, 32, 512, SPAN_MAX), 1U);
	KUNIT_EXPECT_EQ(test, s[1].start, 0U);
}

static void span_gap(struct kunit *test)
{
	struct flaz_span s[4];
	u32 nr = 0;

	add(s, &nr, 1, 0, 512, 512, SPAN_MAX);
	/* exactly FLAZ_SPAN_GAP past the end: read together */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 1, 512 + FLAZ_SPAN_GAP, 512, 512, SPAN_MAX), 0U);
	KUNIT_EXPECT_EQ(test, s[0].end, 1024U + FLAZ_SPAN_GAP);
	/* one logical block farther: a read of its own */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 1, 2048 + 2 * FLAZ_SPAN_GAP, 512, 512, SPAN_MAX), 1U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
}

static void span_max(struct kunit *test)
{
	struct flaz_span s[4];
	u32 nr = 0;

	/* a span of exactly max bytes takes the slot; one block more does not */
	add(s, &nr, 2, 0, 4096, 4096, 16384);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 8192, 4096, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 12288, 4096, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, s[0].end - s[0].start, 16384U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 16384, 32, 4096, 16384), 1U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
	/* a slot inside the full span still joins it */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 4096, 32, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
}

static struct kunit_case hit_cases[] = {
	KUNIT_CASE(span_aligned),
	KUNIT_CASE(span_merge),
	KUNIT_CASE(span_gap),
	KUNIT_CASE(span_max),
	{}
};

static struct kunit_suite hit_suite = {
	.name = "flaz_hit",
	.test_cases = hit_cases,
};

kunit_test_suite(hit_suite);

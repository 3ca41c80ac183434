// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the write-intent regions: a write waits until its region is
 * durable, and a commit clears only regions that stayed idle and untouched
 * from the previous commit's start, never one with a write in flight.
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/slab.h>

#include "flaz.h"
#include "format.h"

static void destroy_action(void *in)
{
	flaz_intent_destroy(in);
}

/* 1024 blocks: four regions of the smallest size (256 blocks). */
static struct flaz_intent *create(struct kunit *test)
{
	struct flaz_intent *in = flaz_intent_create(1024);

	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action, in), 0);
	KUNIT_ASSERT_EQ(test, flaz_intent_shift(in), FLAZ_MIN_REGION_SHIFT);
	KUNIT_ASSERT_EQ(test, flaz_intent_nr(in), 4U);
	return in;
}

static bool bit(const u8 *bitmap, u32 r)
{
	return bitmap[r / 8] & (1U << (r % 8));
}

/* Write a superblock: what a mark or a commit does; returns how many writes it let go. */
static u32 sb_write(struct flaz_intent *in, bool commit, bool all, u8 *bitmap)
{
	struct bio_list released = BIO_EMPTY_LIST;
	u32 n = 0;

	flaz_intent_snapshot(in, commit, all, bitmap, &released);
	flaz_intent_written(in, bitmap);
	while (bio_list_pop(&released))
		n++;
	return n;
}

/* The first write to a region waits for its bit; later ones do not. */
static void intent_first_write_waits(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct bio *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 300, 300, a));
	KUNIT_EXPECT_TRUE(test, flaz_intent_waiting(in));
	/* marked in memory, so a second write to it waits as well */
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 256, 511, b));
	KUNIT_EXPECT_EQ(test, sb_write(in, false, false, bitmap), 2U);
	KUNIT_EXPECT_FALSE(test, flaz_intent_waiting(in));
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 1));
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 0));
	KUNIT_EXPECT_TRUE(test, flaz_intent_marked(in, 256));
	KUNIT_EXPECT_FALSE(test, flaz_intent_marked(in, 255));
	KUNIT_EXPECT_TRUE(test, flaz_intent_start(in, 400, 400, a));
	/* a write across two regions waits for the one not yet marked */
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 500, 520, b));
	KUNIT_EXPECT_EQ(test, sb_write(in, false, false, bitmap), 1U);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 2));
	KUNIT_EXPECT_EQ(test, flaz_intent_nr_marked(in), 2U);
	flaz_intent_end(in, 300, 300);
	flaz_intent_end(in, 256, 511);
	flaz_intent_end(in, 400, 400);
	flaz_intent_end(in, 500, 520);
}

/*
 * A superblock that did not reach the SSD lets nothing go: the writes it took
 * wait again, ahead of later ones, and their region is not durable, so a later
 * write to it waits too; the next superblock that lands lets all of them go.
 */
static void intent_failed_mark_holds(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct bio *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct bio_list held = BIO_EMPTY_LIST;

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 10, 10, a));
	flaz_intent_snapshot(in, false, false, bitmap, &held);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	KUNIT_EXPECT_PTR_EQ(test, held.head, a);
	/* the write failed: no flaz_intent_written() */
	flaz_intent_hold(in, &held);
	KUNIT_EXPECT_TRUE(test, bio_list_empty(&held));
	KUNIT_EXPECT_TRUE(test, flaz_intent_waiting(in));
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 20, 20, b));
	flaz_intent_snapshot(in, false, false, bitmap, &held);
	KUNIT_EXPECT_PTR_EQ(test, bio_list_pop(&held), a);
	KUNIT_EXPECT_PTR_EQ(test, bio_list_pop(&held), b);
	KUNIT_EXPECT_TRUE(test, bio_list_empty(&held));
	flaz_intent_written(in, bitmap);
	KUNIT_EXPECT_TRUE(test, flaz_intent_start(in, 30, 30, a));
	flaz_intent_end(in, 10, 10);
	flaz_intent_end(in, 20, 20);
	flaz_intent_end(in, 30, 30);
}

/*
 * A commit clears a region only when it was untouched since the previous
 * commit began and for a whole age, and nothing is in flight; a cleared region
 * must be marked anew.
 */
static void intent_commit_clears_idle(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	flaz_intent_start(in, 0, 0, a);
	flaz_intent_start(in, 800, 800, a);
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 0, 0);
	/* region 0 is idle but was touched in this period: kept (no HDD flush needed) */
	KUNIT_EXPECT_FALSE(test, flaz_intent_commit_begin(in, true));
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 3));
	/* a period untouched, but touched in the age before (each commit an age here) */
	KUNIT_EXPECT_FALSE(test, flaz_intent_commit_begin(in, true));
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	/* a whole age untouched: cleared; region 3 still has a write in flight */
	KUNIT_EXPECT_TRUE(test, flaz_intent_commit_begin(in, true));
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 0));
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 3));
	KUNIT_EXPECT_FALSE(test, flaz_intent_marked(in, 0));
	/* cleared: the next write to it waits again */
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 1, 1, a));
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 1, 1);
	flaz_intent_end(in, 800, 800);
}

/*
 * Commits within one age clear nothing written in it, however idle: a region
 * goes only a whole age after its last write.
 */
static void intent_age_keeps_marks(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	flaz_intent_start(in, 0, 0, a);
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 0, 0);
	for (i = 0; i < 5; i++) {
		flaz_intent_commit_begin(in, false);
		sb_write(in, true, false, bitmap);
		KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	}
	/* the age of the write ends: kept through the next one */
	flaz_intent_commit_begin(in, true);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	flaz_intent_commit_begin(in, false);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	/* a write late in that age starts it over */
	KUNIT_EXPECT_TRUE(test, flaz_intent_start(in, 1, 1, a));
	flaz_intent_end(in, 1, 1);
	flaz_intent_commit_begin(in, true);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	flaz_intent_commit_begin(in, true);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	/* a whole age without a write: cleared */
	flaz_intent_commit_begin(in, true);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 0));
}

/* A write that starts while a commit is being written keeps its region marked. */
static void intent_write_during_commit(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	flaz_intent_start(in, 600, 600, a);
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 600, 600);
	/* a whole age later region 2 would be cleared by this commit... */
	flaz_intent_commit_begin(in, true);
	flaz_intent_commit_begin(in, true);
	flaz_intent_commit_begin(in, true);
	/* between this commit's start and its superblock, a write comes and goes */
	KUNIT_EXPECT_TRUE(test, flaz_intent_start(in, 601, 601, a));
	flaz_intent_end(in, 601, 601);
	sb_write(in, true, false, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 2));
}

/* A clean stop clears everything, and the next write waits for a new mark. */
static void intent_clean_stop(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	flaz_intent_start(in, 10, 1000, a);
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 10, 1000);
	KUNIT_EXPECT_EQ(test, flaz_intent_nr_marked(in), 4U);
	flaz_intent_commit_begin(in, true);
	sb_write(in, true, true, bitmap);
	for (i = 0; i < FLAZ_SB_BITMAP_BYTES; i++)
		KUNIT_EXPECT_EQ(test, bitmap[i], 0);
	KUNIT_EXPECT_EQ(test, flaz_intent_nr_marked(in), 0U);
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 10, 10, a));
	sb_write(in, false, false, bitmap);
	flaz_intent_end(in, 10, 10);
}

/* The bitmap read at load marks exactly its regions, and only those within the HDD. */
static void intent_load(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	bitmap[0] = 0x05 | 0x80;	/* regions 0 and 2, and 7 beyond the HDD */
	flaz_intent_load(in, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_intent_nr_marked(in), 2U);
	KUNIT_EXPECT_TRUE(test, flaz_intent_marked(in, 0));
	KUNIT_EXPECT_FALSE(test, flaz_intent_marked(in, 256));
	KUNIT_EXPECT_TRUE(test, flaz_intent_marked(in, 767));
	KUNIT_EXPECT_FALSE(test, flaz_intent_marked(in, 7 * 256));
	/* durable already: no wait */
	KUNIT_EXPECT_TRUE(test, flaz_intent_start(in, 512, 512, a));
	flaz_intent_end(in, 512, 512);
}

/*
 * A new generation (a format) while writes are in flight: a write waiting for
 * its mark and one passthrough sent unmarked (tracked) keep their regions in
 * the new bitmap and marked in memory, not durable, and no commit clears them
 * until both ended; a region with nothing in flight starts clear.
 */
static void intent_load_keeps_inflight(struct kunit *test)
{
	struct flaz_intent *in = create(test);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct bio *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct bio *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 10, 10, a));
	flaz_intent_track(in, 600, 600);
	flaz_intent_load(in, bitmap);
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 1));
	KUNIT_EXPECT_TRUE(test, bit(bitmap, 2));
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 3));
	KUNIT_EXPECT_TRUE(test, flaz_intent_marked(in, 10));
	KUNIT_EXPECT_TRUE(test, flaz_intent_marked(in, 600));
	KUNIT_EXPECT_FALSE(test, flaz_intent_marked(in, 300));
	/* not durable: a new write there waits for a mark */
	KUNIT_EXPECT_FALSE(test, flaz_intent_start(in, 620, 620, b));
	for (i = 0; i < 4; i++) {
		flaz_intent_commit_begin(in, true);
		sb_write(in, true, false, bitmap);
		KUNIT_EXPECT_TRUE(test, bit(bitmap, 0));
		KUNIT_EXPECT_TRUE(test, bit(bitmap, 2));
	}
	flaz_intent_end(in, 10, 10);
	flaz_intent_end(in, 600, 600);
	flaz_intent_end(in, 620, 620);
	for (i = 0; i < 4; i++) {
		flaz_intent_commit_begin(in, true);
		sb_write(in, true, false, bitmap);
	}
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 0));
	KUNIT_EXPECT_FALSE(test, bit(bitmap, 2));
}

static struct kunit_case flaz_intent_cases[] = {
	KUNIT_CASE(intent_first_write_waits),
	KUNIT_CASE(intent_failed_mark_holds),
	KUNIT_CASE(intent_commit_clears_idle),
	KUNIT_CASE(intent_age_keeps_marks),
	KUNIT_CASE(intent_write_during_commit),
	KUNIT_CASE(intent_clean_stop),
	KUNIT_CASE(intent_load),
	KUNIT_CASE(intent_load_keeps_inflight),
	{}
};

static struct kunit_suite flaz_intent_suite = {
	.name = "flaz_intent",
	.test_cases = flaz_intent_cases,
};

kunit_test_suite(flaz_intent_suite);

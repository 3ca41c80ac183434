// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for extent allocation and the reclaim choice: FIFO free extents,
 * written extents taken oldest first across ring wrap-around, probation
 * reclaimed before main while over its share, and how many extents reclaim
 * frees at the watermark boundaries.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "flaz.h"

static void destroy_action(void *a)
{
	flaz_alloc_destroy(a);
}

static struct flaz_alloc *create(struct kunit *test, u32 nr)
{
	struct flaz_alloc *a = flaz_alloc_create(nr);

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action, a), 0);
	return a;
}

/* The oldest written extents of the FIFO reclaim takes from, main with one log. */
static u32 take(struct kunit *test, struct flaz_alloc *a, u32 *ids, u32 max)
{
	bool probation;
	u32 n = flaz_alloc_take_oldest(a, ids, max, 0, &probation);

	KUNIT_EXPECT_FALSE(test, n && probation);
	return n;
}

/* Free extents come out in order, then -ENOSPC; put ones go to the back. */
static void alloc_fifo(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 5);
	u32 i, id;

	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 5U);
	for (i = 0; i < 5; i++) {
		id = ~0U;
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
		KUNIT_EXPECT_EQ(test, id, i);
		KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 4 - i);
	}
	id = 1234;
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, id, 1234U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);

	flaz_alloc_put(a, 3);
	flaz_alloc_put(a, 1);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 2U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 3U);
	flaz_alloc_put(a, 4);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 1U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 4U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 0U);
}

/* Written extents come back oldest first, at most @max at a time. */
static void alloc_take_oldest(struct kunit *test)
{
	static const u32 order[] = { 2, 0, 4, 3, 1 };
	struct flaz_alloc *a = create(test, 5);
	u32 ids[8], i, id;

	KUNIT_EXPECT_EQ(test, take(test, a, ids, 8), 0U);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		flaz_alloc_written(a, order[i], false);
	KUNIT_EXPECT_EQ(test, take(test, a, ids, 0), 0U);
	memset(ids, 0xff, sizeof(ids));
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 2), 2U);
	KUNIT_EXPECT_EQ(test, ids[0], 2U);
	KUNIT_EXPECT_EQ(test, ids[1], 0U);
	KUNIT_EXPECT_EQ(test, ids[2], ~0U);
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 1), 1U);
	KUNIT_EXPECT_EQ(test, ids[0], 4U);
	/* Written after the others were taken: still behind the older ones. */
	flaz_alloc_written(a, 0, false);
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 8), 3U);
	KUNIT_EXPECT_EQ(test, ids[0], 3U);
	KUNIT_EXPECT_EQ(test, ids[1], 1U);
	KUNIT_EXPECT_EQ(test, ids[2], 0U);
	KUNIT_EXPECT_EQ(test, take(test, a, ids, 8), 0U);
	/* Taking does not free: that is put's job. */
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 0U);
	flaz_alloc_put(a, 2);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 1U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 2U);
}

/* Fills leave the reserve; the cleaner may take it. */
static void alloc_reserve(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 4);
	u32 id;

	flaz_alloc_set_reserve(a, 2);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 2U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get_reserved(a, &id), 0);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get_reserved(a, &id), 0);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get_reserved(a, &id), -ENOSPC);
	flaz_alloc_put(a, id);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	flaz_alloc_set_reserve(a, 0);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), 0);
}

/* Extents taken and not cleaned go back to the head, in their order, before the rest. */
static void alloc_unget(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 6);
	u32 ids[8], i, id;

	for (i = 0; i < 6; i++)
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	for (i = 0; i < 4; i++)
		flaz_alloc_written(a, i, false);
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 3), 3U);
	/* 0 is cleaned, 1 and 2 go back */
	flaz_alloc_unget(a, ids + 1, 2, false);
	flaz_alloc_written(a, 5, false);
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 8), 4U);
	KUNIT_EXPECT_EQ(test, ids[0], 1U);
	KUNIT_EXPECT_EQ(test, ids[1], 2U);
	KUNIT_EXPECT_EQ(test, ids[2], 3U);
	KUNIT_EXPECT_EQ(test, ids[3], 5U);
	/* into an empty order: head and tail both right */
	flaz_alloc_unget(a, ids, 2, false);
	flaz_alloc_written(a, 4, false);
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 8), 3U);
	KUNIT_EXPECT_EQ(test, ids[0], 1U);
	KUNIT_EXPECT_EQ(test, ids[1], 2U);
	KUNIT_EXPECT_EQ(test, ids[2], 4U);
}

/* Many cycles through both rings: order holds across wrap-around. */
static void alloc_wrap(struct kunit *test)
{
	const u32 nr = 4;
	struct flaz_alloc *a = create(test, nr);
	u32 k, id, ids[4];

	for (k = 0; k < 3 * nr + 1; k++) {
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
		KUNIT_EXPECT_EQ(test, id, k % nr);
		flaz_alloc_written(a, id, false);
		KUNIT_ASSERT_EQ(test, take(test, a, ids, nr), 1U);
		KUNIT_EXPECT_EQ(test, ids[0], id);
		flaz_alloc_put(a, id);
		KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), nr);
	}
	/* All written at once, in reverse, from a wrapped ring. */
	for (k = 0; k < nr; k++)
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &ids[k]), 0);
	for (k = 0; k < nr; k++)
		flaz_alloc_written(a, ids[nr - 1 - k], false);
	memset(ids, 0, sizeof(ids));
	KUNIT_ASSERT_EQ(test, take(test, a, ids, nr), nr);
	for (k = 0; k < nr; k++)
		KUNIT_EXPECT_EQ(test, ids[k], (nr + 1 + (nr - 1 - k)) % nr);
}

/*
 * None while at the low level; below it, enough to reach the high one; with
 * levels of 0, none while anything is free and one extent when none is.
 */
static void reclaim_count(struct kunit *test)
{
	static const u32 cases[][4] = {	/* free, low, high: to reclaim */
		{ 100, 10, 20, 0 }, { 11, 10, 20, 0 }, { 10, 10, 20, 0 },
		{ 9, 10, 20, 11 }, { 1, 10, 20, 19 }, { 0, 10, 20, 20 },
		{ 10, 10, 10, 0 }, { 9, 10, 10, 1 },
		{ U32_MAX - 1, U32_MAX, U32_MAX, 1 }, { U32_MAX, U32_MAX, U32_MAX, 0 },
		{ 0, U32_MAX, U32_MAX, U32_MAX },
		{ 1, 0, 0, 0 }, { 1, 0, 2, 0 }, { 0, 0, 0, 1 }, { 0, 1, 1, 1 },
		{ 0, 0, 3, 3 }, { 1, 1, 3, 0 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, flaz_reclaim_count(cases[i][0], cases[i][1], cases[i][2]),
				    cases[i][3], "case %u", i);
}

/*
 * Evicted extents stay out of use until released, oldest first, and only as many
 * as asked; released ones are still not free until put back (after their discard).
 */
static void alloc_retire_release(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 4);
	u32 ids[4], id, i;

	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
		flaz_alloc_written(a, id, false);
	}
	KUNIT_ASSERT_EQ(test, take(test, a, ids, 3), 3U);
	for (i = 0; i < 3; i++)
		flaz_alloc_retire(a, ids[i]);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 0U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_pending(a), 3U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_retired(a), 3ULL);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	/* a commit that began after two retirements releases those two, one at a time here */
	KUNIT_EXPECT_EQ(test, flaz_alloc_release(a, 2, 1, ids), 1U);
	KUNIT_EXPECT_EQ(test, ids[0], 0U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_release(a, 2, 4, ids + 1), 1U);
	KUNIT_EXPECT_EQ(test, ids[1], 1U);
	/* a second commit that saw the same two releases nothing more */
	KUNIT_EXPECT_EQ(test, flaz_alloc_release(a, 2, 4, ids + 2), 0U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_pending(a), 1U);
	/* being discarded: not free, so no install can write them first */
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 0U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(a, &id), -ENOSPC);
	flaz_alloc_put(a, ids[0]);
	flaz_alloc_put(a, ids[1]);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 2U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_release(a, 3, 5, ids), 1U);
	KUNIT_EXPECT_EQ(test, ids[0], 2U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_release(a, 5, 5, ids), 0U);
}

/* Freed extents are discarded in runs: sorted, neighbours merged, nothing lost. */
static void alloc_runs(struct kunit *test)
{
	u32 ids[] = { 9, 3, 4, 12, 5, 10, 0, 31 };
	u32 want_ids[] = { 0, 3, 9, 12, 31 }, want_lens[] = { 1, 3, 2, 1, 1 };
	u32 lens[ARRAY_SIZE(ids)], one = 7, one_len, i, n;

	n = flaz_alloc_runs(ids, ARRAY_SIZE(ids), lens);
	KUNIT_ASSERT_EQ(test, n, (u32)ARRAY_SIZE(want_ids));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, ids[i], want_ids[i]);
		KUNIT_EXPECT_EQ(test, lens[i], want_lens[i]);
	}
	KUNIT_EXPECT_EQ(test, flaz_alloc_runs(&one, 1, &one_len), 1U);
	KUNIT_EXPECT_EQ(test, one, 7U);
	KUNIT_EXPECT_EQ(test, one_len, 1U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_runs(ids, 0, lens), 0U);
}

/* The allocator costs one u32 per extent (the FIFOs share a chain) and its struct. */
static void alloc_dram_bytes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, flaz_alloc_bytes(1024) - flaz_alloc_bytes(0), 4096ULL);
	KUNIT_EXPECT_GT(test, flaz_alloc_bytes(0), 0ULL);
	KUNIT_EXPECT_LT(test, flaz_alloc_bytes(0), 256ULL);
}

/* After a load, extents the table uses are written (in index order), the rest free. */
static void alloc_reset(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 70);
	unsigned long *used = kunit_kzalloc(test, BITS_TO_LONGS(70) * sizeof(long), GFP_KERNEL);
	u32 ids[70], id;

	KUNIT_ASSERT_NOT_NULL(test, used);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	flaz_alloc_retire(a, id);
	set_bit(3, used);
	set_bit(65, used);
	flaz_alloc_begin(a, used);
	flaz_alloc_end(a, used);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(a), 68U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_pending(a), 0U);
	KUNIT_EXPECT_EQ(test, take(test, a, ids, 70), 2U);
	KUNIT_EXPECT_EQ(test, ids[0], 3U);
	KUNIT_EXPECT_EQ(test, ids[1], 65U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 0U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 1U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 2U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 4U);
}

/*
 * A clean stop's walk gives probation's extents oldest first, then main's; an
 * activation that restores them (order.c) gets the same queues back: reclaim
 * takes them in the same order, an id out of range, free or given twice is
 * refused, and what no order placed goes to main after, by index.
 */
static void alloc_walk_restore(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 70), *b = create(test, 70);
	unsigned long *used = kunit_kzalloc(test, BITS_TO_LONGS(70) * sizeof(long), GFP_KERNEL);
	static const u32 fills[] = { 9, 3, 40, 7, 12, 60, 5 };
	u32 ids[70], got[70], id, i, n = 0;
	struct flaz_alloc_walk w;
	bool prob;

	KUNIT_ASSERT_NOT_NULL(test, used);
	flaz_alloc_set_probation(a, 2);
	flaz_alloc_set_probation(b, 2);
	for (i = 0; i < ARRAY_SIZE(fills); i++)
		set_bit(fills[i], used);
	set_bit(66, used);
	/* an activation that found them written (66 worn out), then their fills again */
	flaz_alloc_begin(a, used);
	/* probation: 9, 40, 12, 5; main: 3, 7, 60 */
	for (i = 0; i < ARRAY_SIZE(fills); i++)
		flaz_alloc_written(a, fills[i], i % 2);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_probation(a), 4U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_main(a), 3U);
	flaz_alloc_walk_start(a, &w);
	while ((i = flaz_alloc_walk(a, &w, got + n, 3)))
		n += i;
	KUNIT_ASSERT_EQ(test, n, 7U);
	KUNIT_EXPECT_EQ(test, got[0], 9U);
	KUNIT_EXPECT_EQ(test, got[3], 5U);
	KUNIT_EXPECT_EQ(test, got[4], 3U);
	KUNIT_EXPECT_EQ(test, got[6], 60U);

	flaz_alloc_begin(b, used);
	KUNIT_EXPECT_EQ(test, flaz_alloc_restore(b, got, 4, true, used), 0U);
	/* 70 is out of range, 9 is queued already, 0 is free */
	got[7] = 70;
	got[8] = 9;
	got[9] = 0;
	KUNIT_EXPECT_EQ(test, flaz_alloc_restore(b, got + 4, 6, false, used), 3U);
	flaz_alloc_end(b, used);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_probation(b), 4U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_main(b), 4U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_free(b), 62U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(b, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 0U);
	/* probation over its share: 9, 40 first, then main's 3, 7, 60 and then 66 */
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(b, ids, 10, 0, &prob), 2U);
	KUNIT_EXPECT_TRUE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 9U);
	KUNIT_EXPECT_EQ(test, ids[1], 40U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(b, ids, 10, 0, &prob), 4U);
	KUNIT_EXPECT_FALSE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 3U);
	KUNIT_EXPECT_EQ(test, ids[2], 60U);
	KUNIT_EXPECT_EQ(test, ids[3], 66U);
}

/*
 * S3-FIFO's queues: fills go to probation, moves (admitted) to main; reclaim
 * takes probation's oldest while it is over its share or main is empty, and
 * stops at the share within a batch; given back, each goes to its own FIFO.
 */
static void alloc_probation(struct kunit *test)
{
	struct flaz_alloc *a = create(test, 10);
	u32 ids[10], id, i;
	bool prob;

	flaz_alloc_set_probation(a, 2);
	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_EQ(test, flaz_alloc_get(a, &id), 0);
	/* 0, 1, 2, 3 filled, 4 and 5 moves, 6 and 7 filled */
	for (i = 0; i < 8; i++)
		flaz_alloc_written(a, i, i == 4 || i == 5);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_probation(a), 6U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_main(a), 2U);
	/* over its share: probation first, down to the share and no further */
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 10, 0, &prob), 4U);
	KUNIT_EXPECT_TRUE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 0U);
	KUNIT_EXPECT_EQ(test, ids[3], 3U);
	/* given back to probation's head, taken again in order */
	flaz_alloc_unget(a, ids + 2, 2, true);
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 1, 0, &prob), 1U);
	KUNIT_EXPECT_TRUE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 2U);
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 1, 0, &prob), 1U);
	KUNIT_EXPECT_EQ(test, ids[0], 3U);
	/* at its share: main's oldest, the probation extents stay */
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 10, 0, &prob), 2U);
	KUNIT_EXPECT_FALSE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 4U);
	KUNIT_EXPECT_EQ(test, ids[1], 5U);
	/* main empty: probation however small */
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 10, 0, &prob), 2U);
	KUNIT_EXPECT_TRUE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 6U);
	/* no share: one log, fills go to main */
	flaz_alloc_set_probation(a, 0);
	flaz_alloc_written(a, 8, false);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_probation(a), 0U);
	KUNIT_EXPECT_EQ(test, flaz_alloc_nr_main(a), 1U);
	/* probation's extents the caller holds count in its share */
	flaz_alloc_set_probation(a, 2);
	flaz_alloc_written(a, 9, false);
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 10, 0, &prob), 1U);
	KUNIT_EXPECT_FALSE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 8U);
	flaz_alloc_unget(a, ids, 1, false);
	KUNIT_ASSERT_EQ(test, flaz_alloc_take_oldest(a, ids, 10, 2, &prob), 1U);
	KUNIT_EXPECT_TRUE(test, prob);
	KUNIT_EXPECT_EQ(test, ids[0], 9U);
}

/* What a delayed work does to the allocator a fill waits on. */
struct wait_case {
	struct delayed_work work;
	struct flaz_alloc *a;
	int what;		/* WAIT_PUT, WAIT_WAKE or WAIT_OFF */
	u32 free;		/* free extents when the wait returned */
	bool waits;		/* what the wait returned */
};

enum { WAIT_PUT, WAIT_WAKE, WAIT_OFF };

static void wait_case_work(struct work_struct *work)
{
	struct wait_case *w = container_of(to_delayed_work(work), struct wait_case, work);

	if (w->what == WAIT_PUT)
		flaz_alloc_put(w->a, 0);
	else if (w->what == WAIT_WAKE)
		flaz_alloc_wake(w->a);
	else
		flaz_alloc_waits(w->a, false);
}

/*
 * Wait up to 60 s for an extent while @w's work does @what 10 ms in (none:
 * no work); returns the jiffies waited, with w->free and w->waits as the wait
 * left them, before the work is flushed.
 */
static unsigned long wait_for(struct wait_case *w, int what)
{
	unsigned long t0 = jiffies, waited;

	w->what = what;
	if (what >= 0) {
		INIT_DELAYED_WORK_ONSTACK(&w->work, wait_case_work);
		schedule_delayed_work(&w->work, msecs_to_jiffies(10));
	}
	w->waits = flaz_alloc_wait(w->a, 60 * HZ);
	waited = jiffies - t0;
	w->free = flaz_alloc_nr_free(w->a);
	if (what >= 0) {
		flush_delayed_work(&w->work);
		destroy_delayed_work_on_stack(&w->work);
	}
	return waited;
}

/*
 * A fill that finds no extent waits for one (fill.c): a put wakes it with the
 * extent there, a wake (the mode changed) and a suspend (waits off, which it
 * is told of) wake it without; a volume not running (waits off) does not wait
 * at all, and a free extent past the reserve needs no wait. Whether an extent
 * can come free at all: one evicted (pending a commit) or one written.
 */
static void alloc_wait(struct kunit *test)
{
	struct wait_case w = { .a = create(test, 3) };
	u32 id;

	KUNIT_EXPECT_TRUE(test, flaz_alloc_room(w.a));
	KUNIT_EXPECT_FALSE(test, flaz_alloc_reclaimable(w.a));
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(w.a, &id), 0);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(w.a, &id), 0);
	flaz_alloc_set_reserve(w.a, 1);
	KUNIT_EXPECT_FALSE(test, flaz_alloc_room(w.a));
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(w.a, &id), -ENOSPC);
	/* extents 0 and 1 are open: nothing to evict yet */
	KUNIT_EXPECT_FALSE(test, flaz_alloc_reclaimable(w.a));
	flaz_alloc_written(w.a, 1, false);
	KUNIT_EXPECT_TRUE(test, flaz_alloc_reclaimable(w.a));

	/* not running: no wait at all */
	KUNIT_EXPECT_LT(test, wait_for(&w, -1), 30 * HZ);
	KUNIT_EXPECT_FALSE(test, w.waits);

	/* one free extent is the reserve's: a put of another wakes the fill, with it there */
	flaz_alloc_waits(w.a, true);
	KUNIT_EXPECT_LT(test, wait_for(&w, WAIT_PUT), 30 * HZ);
	KUNIT_EXPECT_TRUE(test, w.waits);
	KUNIT_EXPECT_EQ(test, w.free, 2U);
	KUNIT_EXPECT_TRUE(test, flaz_alloc_room(w.a));
	/* an extent past the reserve is there: no wait */
	KUNIT_EXPECT_LT(test, wait_for(&w, -1), 30 * HZ);
	KUNIT_EXPECT_TRUE(test, w.waits);
	KUNIT_ASSERT_EQ(test, flaz_alloc_get(w.a, &id), 0);
	KUNIT_EXPECT_EQ(test, id, 2U);
	KUNIT_EXPECT_FALSE(test, flaz_alloc_room(w.a));

	/* the mode changed: the fill looks again, though no extent came */
	KUNIT_EXPECT_LT(test, wait_for(&w, WAIT_WAKE), 30 * HZ);
	KUNIT_EXPECT_TRUE(test, w.waits);
	KUNIT_EXPECT_EQ(test, w.free, 1U);

	/* none comes, and the volume suspends: the fill stops waiting */
	KUNIT_EXPECT_LT(test, wait_for(&w, WAIT_OFF), 30 * HZ);
	KUNIT_EXPECT_FALSE(test, w.waits);
	KUNIT_EXPECT_EQ(test, flaz_alloc_get(w.a, &id), -ENOSPC);
	/* an evicted extent waiting for its commit can come free */
	flaz_alloc_retire(w.a, 2);
	KUNIT_EXPECT_TRUE(test, flaz_alloc_reclaimable(w.a));
}

static struct kunit_case flaz_alloc_cases[] = {
	KUNIT_CASE(alloc_retire_release),
	KUNIT_CASE(alloc_runs),
	KUNIT_CASE(alloc_dram_bytes),
	KUNIT_CASE(alloc_reset),
	KUNIT_CASE(alloc_walk_restore),
	KUNIT_CASE(alloc_fifo),
	KUNIT_CASE(alloc_take_oldest),
	KUNIT_CASE(alloc_unget),
	KUNIT_CASE(alloc_probation),
	KUNIT_CASE(alloc_reserve),
	KUNIT_CASE(alloc_wait),
	KUNIT_CASE(alloc_wrap),
	KUNIT_CASE(reclaim_count),
	{}
};

static struct kunit_suite flaz_alloc_suite = {
	.name = "flaz_alloc",
	.test_cases = flaz_alloc_cases,
};

kunit_test_suite(flaz_alloc_suite);

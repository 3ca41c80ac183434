// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the records of I/O in flight: which records a write makes
 * stale, when a new record starts stale, and a read's record passing to its
 * install.
 */
#include <kunit/test.h>

#include "flaz.h"

static void rec(struct flaz_record *r, u64 first, u64 last, bool write)
{
	memset(r, 0, sizeof(*r));
	r->first = first;
	r->last = last;
	r->write = write;
}

static void records_write_marks_overlaps(struct kunit *test)
{
	struct flaz_records rs;
	struct flaz_record a, b, c, w;

	flaz_records_init(&rs);
	rec(&a, 0, 9, false);
	rec(&b, 10, 19, false);
	rec(&c, 20, 20, false);
	flaz_records_add(&rs, &a);
	flaz_records_add(&rs, &b);
	flaz_records_add(&rs, &c);
	/* ends where b ends, starts after a ends, stops before c */
	rec(&w, 19, 19, true);
	flaz_records_add(&rs, &w);
	KUNIT_EXPECT_FALSE(test, a.stale);
	KUNIT_EXPECT_TRUE(test, b.stale);
	KUNIT_EXPECT_FALSE(test, c.stale);
	KUNIT_EXPECT_FALSE(test, w.stale);
	flaz_records_del(&rs, &w);
	flaz_records_del(&rs, &c);
	flaz_records_del(&rs, &b);
	flaz_records_del(&rs, &a);
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&rs.root.rb_root));
}

static void records_start_stale(struct kunit *test)
{
	struct flaz_records rs;
	struct flaz_record w, r, r2, w2;

	flaz_records_init(&rs);
	rec(&w, 100, 199, true);
	flaz_records_add(&rs, &w);
	/* a read miss overlapping a write in flight: stale from the start */
	rec(&r, 199, 300, false);
	flaz_records_add(&rs, &r);
	KUNIT_EXPECT_TRUE(test, r.stale);
	/* one just past it is not */
	rec(&r2, 200, 300, false);
	flaz_records_add(&rs, &r2);
	KUNIT_EXPECT_FALSE(test, r2.stale);
	/* two overlapping writes: the HDD may order them either way */
	rec(&w2, 0, 100, true);
	flaz_records_add(&rs, &w2);
	KUNIT_EXPECT_TRUE(test, w2.stale);
	KUNIT_EXPECT_TRUE(test, w.stale);
	KUNIT_EXPECT_FALSE(test, r2.stale);
	flaz_records_del(&rs, &w2);
	flaz_records_del(&rs, &r2);
	flaz_records_del(&rs, &r);
	flaz_records_del(&rs, &w);
}

static void records_pass(struct kunit *test)
{
	struct flaz_records rs;
	struct flaz_record r, fill, w, r2, fill2;

	flaz_records_init(&rs);
	rec(&r, 5, 8, false);
	flaz_records_add(&rs, &r);
	memset(&fill, 0xff, sizeof(fill));
	KUNIT_EXPECT_TRUE(test, flaz_records_pass(&rs, &r, &fill));
	KUNIT_EXPECT_EQ(test, fill.first, 5ULL);
	KUNIT_EXPECT_EQ(test, fill.last, 8ULL);
	KUNIT_EXPECT_FALSE(test, fill.write);
	KUNIT_EXPECT_FALSE(test, fill.stale);
	/* the install is what a later write finds and marks */
	rec(&w, 8, 8, true);
	flaz_records_add(&rs, &w);
	KUNIT_EXPECT_TRUE(test, fill.stale);
	flaz_records_del(&rs, &fill);
	/* a read the write made stale does not pass */
	rec(&r2, 0, 10, false);
	flaz_records_add(&rs, &r2);
	KUNIT_EXPECT_TRUE(test, r2.stale);
	KUNIT_EXPECT_FALSE(test, flaz_records_pass(&rs, &r2, &fill2));
	flaz_records_del(&rs, &w);
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&rs.root.rb_root));
}

static void records_many(struct kunit *test)
{
	static struct flaz_record r[512];
	struct flaz_records rs;
	struct flaz_record w;
	int i, stale = 0;

	/* disjoint 8-block reads; a write over blocks 1000..2047 marks exactly 131 */
	flaz_records_init(&rs);
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		rec(&r[i], i * 8ULL, i * 8ULL + 7, false);
		flaz_records_add(&rs, &r[i]);
	}
	rec(&w, 1000, 2047, true);
	flaz_records_add(&rs, &w);
	for (i = 0; i < ARRAY_SIZE(r); i++)
		stale += r[i].stale;
	KUNIT_EXPECT_EQ(test, stale, 131);
	KUNIT_EXPECT_TRUE(test, r[125].stale);
	KUNIT_EXPECT_FALSE(test, r[124].stale);
	KUNIT_EXPECT_TRUE(test, r[255].stale);
	KUNIT_EXPECT_FALSE(test, r[256].stale);
	flaz_records_stale_all(&rs);
	for (i = 0; i < ARRAY_SIZE(r); i++)
		KUNIT_EXPECT_TRUE(test, r[i].stale);
	flaz_records_del(&rs, &w);
	for (i = 0; i < ARRAY_SIZE(r); i++)
		flaz_records_del(&rs, &r[i]);
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&rs.root.rb_root));
}

static struct kunit_case records_cases[] = {
	KUNIT_CASE(records_write_marks_overlaps),
	KUNIT_CASE(records_start_stale),
	KUNIT_CASE(records_pass),
	KUNIT_CASE(records_many),
	{}
};

static struct kunit_suite records_suite = {
	.name = "flaz_records",
	.test_cases = records_cases,
};

kunit_test_suite(records_suite);

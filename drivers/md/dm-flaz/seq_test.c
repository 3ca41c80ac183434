// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the sequential streams: the cutoff's boundaries, streams
 * told apart when interleaved, a random load beside a stream (also one landing
 * in the stream's own bucket, and one from the stream's first I/O on), a
 * stopped stream giving its place up, a stream read again from its start, and
 * 0 turning it off.
 */
#include <kunit/test.h>
#include <linux/hash.h>

#include "flaz.h"

#define IO	8	/* sectors: one 4 KiB block an I/O */
#define CUT	(4 * IO)	/* a stream bypasses past four blocks */

static struct flaz_seq *seq(struct kunit *test)
{
	struct flaz_seq *q = flaz_seq_create();

	KUNIT_ASSERT_NOT_NULL(test, q);
	return q;
}

/* The cutoff's own I/O still fills; the next one of the stream bypasses. */
static void seq_cutoff_boundary(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	sector_t s = 1000;
	int i;

	for (i = 0; i < CUT / IO; i++, s += IO)
		KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s, IO, CUT));
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, s, IO, CUT));
	s += IO;
	/* one sector more than the cutoff in one I/O bypasses at once */
	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, 1 << 20, CUT, CUT));
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, 1 << 22, CUT + 1, CUT));
	/* a gap of one sector is another stream */
	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s + 1, IO, CUT));
	/* and the first one goes on where it was */
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, s, IO, CUT));
	flaz_seq_destroy(q);
}

/* Two streams taking turns, with a thousand random I/Os between their turns: both are scans. */
static void seq_interleaved(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	sector_t a = 0, b = 1 << 24, r = 1 << 28;
	bool last_a = false, last_b = false;
	int i, j;

	for (i = 0; i <= CUT / IO; i++) {
		last_a = flaz_seq_note(q, a, IO, CUT);
		a += IO;
		last_b = flaz_seq_note(q, b, IO, CUT);
		b += IO;
		if (i < CUT / IO) {
			KUNIT_EXPECT_FALSE(test, last_a);
			KUNIT_EXPECT_FALSE(test, last_b);
		}
		/* from their second I/O on, no 4 KiB I/O displaces them */
		for (j = 0; i && j < 1000; j++) {
			KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, r, IO, CUT));
			r += 7 * IO;	/* never contiguous */
		}
	}
	KUNIT_EXPECT_TRUE(test, last_a);
	KUNIT_EXPECT_TRUE(test, last_b);
	flaz_seq_destroy(q);
}

/* Random I/Os ending in the very bucket of a stream do not take its place. */
static void seq_collision(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	u32 bucket, n = 0;
	sector_t s = 5000, r = 1 << 28;
	int i;

	flaz_seq_note(q, s, IO, CUT);
	flaz_seq_note(q, s + IO, IO, CUT);
	s += 2 * IO;
	/* three I/Os that end where the stream's bucket is: both ways taken, twice */
	bucket = hash_64(s, FLAZ_SEQ_BITS) >> 1;
	for (; n < 3; r += 7 * IO) {
		if (hash_64(r + IO, FLAZ_SEQ_BITS) >> 1 != bucket || r + IO == s)
			continue;
		KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, r, IO, CUT));
		n++;
	}
	for (i = 0; i < CUT / IO - 2; i++, s += IO)
		KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s, IO, CUT));
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, s, IO, CUT));
	flaz_seq_destroy(q);
}

/* A stream's first I/O, if longer than a random load's, is not displaced by it either. */
static void seq_first_kept(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	sector_t s = 7 << 20, r = 1 << 28;
	int i;

	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s, CUT / 2, CUT));
	/* short of the 4,096 I/Os that would make the stream stopped */
	for (i = 0; i < 4000; i++, r += 7 * IO)
		flaz_seq_note(q, r, IO, CUT);
	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s + CUT / 2, CUT / 2, CUT));
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, s + CUT, IO, CUT));
	flaz_seq_destroy(q);
}

/* A stream that stopped 4,096 I/Os ago gives its way up to a new one of one I/O. */
static void seq_stale(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	sector_t s = 9 << 20, r = 1 << 28;
	u32 bucket, n = 0;
	int i;

	for (i = 0; i < CUT / IO; i++, s += IO)
		flaz_seq_note(q, s, IO, CUT);
	for (i = 0; i < 4096; i++, r += 7 * IO)
		flaz_seq_note(q, r, IO, CUT);
	/* two I/Os ending in its bucket: one of them takes its way */
	bucket = hash_64(s, FLAZ_SEQ_BITS) >> 1;
	for (; n < 2; r += 7 * IO) {
		if (hash_64(r + IO, FLAZ_SEQ_BITS) >> 1 != bucket || r + IO == s)
			continue;
		flaz_seq_note(q, r, IO, CUT);
		n++;
	}
	/* where it would have passed the cutoff, it starts again */
	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s, IO, CUT));
	flaz_seq_destroy(q);
}

/* Read again from its start, a stream that bypassed starts from nothing. */
static void seq_again(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	sector_t s;

	for (s = 0; s <= CUT; s += IO)
		flaz_seq_note(q, s, IO, CUT);
	KUNIT_EXPECT_TRUE(test, flaz_seq_note(q, s, IO, CUT));
	for (s = 0; s < CUT; s += IO)
		KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, s, IO, CUT));
	flaz_seq_destroy(q);
}

/* Cutoff 0: nothing is a scan, however long. */
static void seq_off(struct kunit *test)
{
	struct flaz_seq *q = seq(test);
	int i;

	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, i * IO, IO, 0));
	/* and what ran while off does not count once on */
	KUNIT_EXPECT_FALSE(test, flaz_seq_note(q, 64 * IO, IO, CUT));
	flaz_seq_destroy(q);
}

static struct kunit_case flaz_seq_cases[] = {
	KUNIT_CASE(seq_cutoff_boundary),
	KUNIT_CASE(seq_interleaved),
	KUNIT_CASE(seq_collision),
	KUNIT_CASE(seq_first_kept),
	KUNIT_CASE(seq_stale),
	KUNIT_CASE(seq_again),
	KUNIT_CASE(seq_off),
	{}
};

static struct kunit_suite flaz_seq_suite = {
	.name = "flaz_seq",
	.test_cases = flaz_seq_cases,
};

kunit_test_suite(flaz_seq_suite);

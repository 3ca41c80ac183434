// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the extent buffer's free-space buckets: eighths of the extent,
 * the last one taking everything from seven eighths up.
 */
#include <kunit/test.h>

#include "flaz.h"
#include "format.h"

/*
 * @raw: the bucket of a raw slot's size, FLAZ_MAX_SLOT_BYTES = 32 + 4096 = 4128
 * bytes, worked out by the caller for its extent.
 */
static void bucket_boundaries(struct kunit *test, u32 eb, u32 raw)
{
	u32 eighth = eb / 8, b;

	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(0, eb), 0U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(1, eb), 0U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(eighth - 1, eb), 0U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(eighth, eb), 1U);
	for (b = 1; b < 8; b++) {
		KUNIT_EXPECT_EQ_MSG(test, flaz_xbuf_bucket(b * eighth - 1, eb), b - 1,
				    "extent %u", eb);
		KUNIT_EXPECT_EQ_MSG(test, flaz_xbuf_bucket(b * eighth, eb), b, "extent %u", eb);
	}
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(eb - 32, eb), 7U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(eb - 1, eb), 7U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(eb, eb), 7U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(2 * eb, eb), 7U);
	/* A raw slot's size: into the bucket a fit search starts from */
	KUNIT_EXPECT_EQ(test, FLAZ_MAX_SLOT_BYTES, 4128U);
	KUNIT_EXPECT_EQ_MSG(test, flaz_xbuf_bucket(FLAZ_MAX_SLOT_BYTES, eb), raw, "extent %u", eb);
}

static void xbuf_bucket_32k(struct kunit *test)
{
	/* eighths of 4096 bytes: 4096 <= 4128 < 8192, the second eighth */
	bucket_boundaries(test, 32 << 10, 1);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(4095, 32 << 10), 0U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(4096, 32 << 10), 1U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(32736, 32 << 10), 7U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(28671, 32 << 10), 6U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(28672, 32 << 10), 7U);
}

static void xbuf_bucket_4k(struct kunit *test)
{
	/* eighths of 512 bytes: 4128 >= 7 * 512 = 3584, the last bucket */
	bucket_boundaries(test, 4 << 10, 7);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(511, 4 << 10), 0U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(512, 4 << 10), 1U);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(4064, 4 << 10), 7U);
}

static void xbuf_bucket_256k(struct kunit *test)
{
	/* eighths of 32768 bytes: 4128 < 32768, the first eighth */
	bucket_boundaries(test, 256 << 10, 0);
	KUNIT_EXPECT_EQ(test, flaz_xbuf_bucket(FLAZ_MAX_SLOT_BYTES, 256 << 10), 0U);
}

static struct kunit_case flaz_xbuf_cases[] = {
	KUNIT_CASE(xbuf_bucket_32k),
	KUNIT_CASE(xbuf_bucket_4k),
	KUNIT_CASE(xbuf_bucket_256k),
	{}
};

static struct kunit_suite flaz_xbuf_suite = {
	.name = "flaz_xbuf",
	.test_cases = flaz_xbuf_cases,
};

kunit_test_suite(flaz_xbuf_suite);

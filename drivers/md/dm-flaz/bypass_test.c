// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the compressor bypass: the entropy sample on zero, text and
 * random blocks; a region's history turning raw after FLAZ_BYPASS_SURE raw
 * outcomes, its probes, and a compressed outcome undoing it.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

#define BOUND	(FLAZ_BLOCK_SIZE * 9 / 10)	/* a payload bound that random blocks miss */
#define REGION	256	/* blocks of a region of the history */

/* English-like text: a sentence over and over, a counter making each copy differ a little. */
static void text_block(u8 *p)
{
	u32 n = 0, i = 0;

	while (i < FLAZ_BLOCK_SIZE) {
		int k = snprintf(p + i, FLAZ_BLOCK_SIZE - i,
				 "the cache line %u holds a compressed slot of the extent. ", n++);

		if (k <= 0)
			break;
		i += min_t(u32, k, FLAZ_BLOCK_SIZE - i);
	}
}

/*
 * Zeros and text go to the codec, random bytes are stored raw at the default
 * saving, and text too once the saving asked is more than its entropy allows;
 * a block half zeros (fio's 50%) still compresses.
 */
static void bypass_predict(struct kunit *test)
{
	u8 *p = kunit_kzalloc(test, FLAZ_BLOCK_SIZE + 1, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_FALSE(test, flaz_bypass_predict_raw(p, BOUND));
	KUNIT_EXPECT_FALSE(test, flaz_bypass_predict_raw(p, 1));
	text_block(p);
	KUNIT_EXPECT_FALSE(test, flaz_bypass_predict_raw(p, BOUND));
	KUNIT_EXPECT_TRUE(test, flaz_bypass_predict_raw(p, FLAZ_BLOCK_SIZE / 10));
	get_random_bytes(p, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_TRUE(test, flaz_bypass_predict_raw(p, BOUND));
	for (i = 0; i < FLAZ_BLOCK_SIZE; i += 512)
		memset(p + i + 256, 0, 256);
	KUNIT_EXPECT_FALSE(test, flaz_bypass_predict_raw(p, BOUND));
}

/*
 * Random blocks of region 0 are sampled and go raw; after FLAZ_BYPASS_SURE of
 * them the region goes raw unsampled (a zero block too), but for one block in
 * FLAZ_BYPASS_PROBE; a zero block met by a probe goes to the codec, and its
 * compressed outcome makes the region sampled again. Region 1 keeps its own.
 */
static void bypass_history(struct kunit *test)
{
	struct flaz_bypass *b = flaz_bypass_create();
	u8 *rnd = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u8 *zero = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, rnd);
	KUNIT_ASSERT_NOT_NULL(test, zero);
	get_random_bytes(rnd, FLAZ_BLOCK_SIZE);

	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, 0, zero, BOUND));
	for (i = 0; i < FLAZ_BYPASS_SURE - 1; i++)
		KUNIT_EXPECT_TRUE(test, flaz_bypass_skip(b, i, rnd, BOUND));
	/* not yet sure: a zero block is still sampled */
	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, 7, zero, BOUND));
	KUNIT_EXPECT_TRUE(test, flaz_bypass_skip(b, 8, rnd, BOUND));
	/* sure: FLAZ_BYPASS_PROBE - 1 blocks unsampled, then a probe */
	for (i = 0; i < FLAZ_BYPASS_PROBE - 1; i++)
		KUNIT_EXPECT_TRUE(test, flaz_bypass_skip(b, REGION - 1, zero, BOUND));
	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, 9, zero, BOUND));
	/* region 1 has no history */
	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, REGION, zero, BOUND));
	/* the probe's block compressed: region 0 is sampled again */
	flaz_bypass_learn(b, 9, false);
	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, 10, zero, BOUND));
	flaz_bypass_destroy(b);
}

/* The codec's raw outcomes count as the sample's do; a compressed one starts the count again. */
static void bypass_learn(struct kunit *test)
{
	struct flaz_bypass *b = flaz_bypass_create();
	u8 *zero = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, zero);
	for (i = 0; i < FLAZ_BYPASS_SURE - 1; i++)
		flaz_bypass_learn(b, i, true);
	flaz_bypass_learn(b, 5, false);
	flaz_bypass_learn(b, 6, true);
	KUNIT_EXPECT_FALSE(test, flaz_bypass_skip(b, 0, zero, BOUND));
	for (i = 0; i < FLAZ_BYPASS_SURE - 1; i++)
		flaz_bypass_learn(b, i, true);
	KUNIT_EXPECT_TRUE(test, flaz_bypass_skip(b, 0, zero, BOUND));
	flaz_bypass_destroy(b);
}

static struct kunit_case flaz_bypass_cases[] = {
	KUNIT_CASE(bypass_predict),
	KUNIT_CASE(bypass_history),
	KUNIT_CASE(bypass_learn),
	{}
};

static struct kunit_suite flaz_bypass_suite = {
	.name = "flaz_bypass",
	.test_cases = flaz_bypass_cases,
};

kunit_test_suite(flaz_bypass_suite);

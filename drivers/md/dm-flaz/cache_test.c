// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for what a write does to the table before it goes to the HDD
 * (flaz_cache_drop_blocks()): the lines of the blocks it touches no longer
 * point at their old data, a line that holds another block is left alone,
 * whole blocks are counted as write hits or misses and parts are not, and a
 * span of every line drops them all. Expectations worked out by hand on a
 * table of 64 lines over 1024 HDD blocks.
 */
#include <kunit/test.h>

#include "flaz.h"
#include "format.h"

#define LINES		64U
#define HDD_BLOCKS	1024U

struct cache_env {
	struct flaz_cache c;
	struct flaz_geometry g;
};

static void cache_exit(struct kunit *test)
{
	struct cache_env *env = test->priv;

	if (!env)
		return;
	if (!IS_ERR_OR_NULL(env->c.l2p))
		flaz_l2p_destroy(env->c.l2p);
	flaz_stats_destroy(env->c.stats);
}

/* Four 32 KiB extents opened, every page of the table resident. */
static int cache_init(struct kunit *test)
{
	struct cache_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	u64 p;
	u32 ext;

	if (!env)
		return -ENOMEM;
	test->priv = env;
	env->g.nr_lines = LINES;
	env->c.geo = &env->g;
	env->c.stats = flaz_stats_create();
	env->c.l2p = flaz_l2p_create(LINES, 4, 32U << 10, HDD_BLOCKS, false);
	if (!env->c.stats || IS_ERR(env->c.l2p))
		return -ENOMEM;
	for (ext = 0; ext < 4; ext++)
		flaz_l2p_open_extent(env->c.l2p, ext);
	for (p = 0; p < flaz_l2p_nr_pages(env->c.l2p); p++) {
		if (flaz_l2p_page_in(env->c.l2p, p))
			return -ENOMEM;
		flaz_l2p_page_done(env->c.l2p, p);
	}
	return 0;
}

static bool cached(struct cache_env *env, u64 block)
{
	struct flaz_l2p *t = env->c.l2p;
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry e;
	bool hit;

	flaz_l2p_lock(t, line);
	hit = flaz_l2p_lookup(t, block, &e);
	flaz_l2p_unlock(t, line);
	return hit;
}

/* Block @block cached in a 64-byte slot of extent 0 (its first tenant, generation 1). */
static void cache_block(struct kunit *test, struct cache_env *env, u64 block)
{
	struct flaz_entry e = { .kind = FLAZ_ENTRY_SLOT, .ext = 0, .off = 64 * (block % LINES),
				.bytes = 64, .gen = 1 };
	struct flaz_l2p *t = env->c.l2p;
	u64 line = flaz_l2p_line(t, block);
	struct flaz_entry old;

	flaz_l2p_lock(t, line);
	flaz_l2p_set(t, block, &e, &old);
	flaz_l2p_unlock(t, line);
	KUNIT_ASSERT_TRUE(test, cached(env, block));
}

static u64 stat(struct cache_env *env, enum flaz_stat s)
{
	return flaz_stats_sum(env->c.stats, s);
}

/*
 * A write from the middle of block 11 to the middle of block 16, over cached
 * blocks 10..20: blocks 11..16 dropped, 12..15 counted as write hits (the
 * parts of 11 and 16 are not blocks written); 10 and 17..20 still cached.
 */
static void drop_written_range(struct kunit *test)
{
	struct cache_env *env = test->priv;
	u64 b, was = 0;

	for (b = 10; b <= 20; b++)
		cache_block(test, env, b);
	flaz_cache_drop_blocks(&env->c, 11, 16, 12, 16, true, &was);
	for (b = 11; b <= 16; b++)
		KUNIT_EXPECT_FALSE_MSG(test, cached(env, b), "block %llu", b);
	KUNIT_EXPECT_TRUE(test, cached(env, 10));
	for (b = 17; b <= 20; b++)
		KUNIT_EXPECT_TRUE_MSG(test, cached(env, b), "block %llu", b);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_HITS), 4ULL);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_MISSES), 0ULL);
	/* blocks 30..33, none cached: four misses */
	flaz_cache_drop_blocks(&env->c, 30, 33, 30, 34, true, &was);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_HITS), 4ULL);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_MISSES), 4ULL);
	/* fill.c did not ask (write_admit_cached off): nothing noted */
	KUNIT_EXPECT_EQ(test, was, 0ULL);
}

/* Blocks 5 and 69 share line 5: a write of one leaves the other's entry. */
static void drop_keeps_alias(struct kunit *test)
{
	struct cache_env *env = test->priv;
	u64 was = 0;

	cache_block(test, env, 69);
	flaz_cache_drop_blocks(&env->c, 5, 5, 5, 6, true, &was);
	KUNIT_EXPECT_TRUE(test, cached(env, 69));
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_MISSES), 1ULL);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_HITS), 0ULL);
	flaz_cache_drop_blocks(&env->c, 69, 69, 69, 70, true, &was);
	KUNIT_EXPECT_FALSE(test, cached(env, 69));
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_HITS), 1ULL);
}

/* A discard (not counted) drops its blocks all the same. */
static void drop_uncounted(struct kunit *test)
{
	struct cache_env *env = test->priv;
	u64 was = 0;

	cache_block(test, env, 40);
	cache_block(test, env, 41);
	flaz_cache_drop_blocks(&env->c, 40, 41, 40, 42, false, &was);
	KUNIT_EXPECT_FALSE(test, cached(env, 40));
	KUNIT_EXPECT_FALSE(test, cached(env, 41));
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_HITS), 0ULL);
	KUNIT_EXPECT_EQ(test, stat(env, FLAZ_STAT_WRITE_MISSES), 0ULL);
}

/*
 * Blocks 100..164 cover every line (65 blocks over 64 lines): every entry
 * goes, block 500's and block 10's too, though neither is in the span.
 */
static void drop_every_line(struct kunit *test)
{
	struct cache_env *env = test->priv;
	u64 was = 0;

	cache_block(test, env, 10);
	cache_block(test, env, 130);
	cache_block(test, env, 500);
	/* 64 blocks, one a line: each dropped only where its line holds it, none here */
	flaz_cache_drop_blocks(&env->c, 200, 263, 200, 264, false, &was);
	KUNIT_EXPECT_TRUE(test, cached(env, 10));
	KUNIT_EXPECT_TRUE(test, cached(env, 500));
	flaz_cache_drop_blocks(&env->c, 100, 164, 100, 165, false, &was);
	KUNIT_EXPECT_FALSE(test, cached(env, 10));
	KUNIT_EXPECT_FALSE(test, cached(env, 130));
	KUNIT_EXPECT_FALSE(test, cached(env, 500));
}

static struct kunit_case cache_cases[] = {
	KUNIT_CASE(drop_written_range),
	KUNIT_CASE(drop_keeps_alias),
	KUNIT_CASE(drop_uncounted),
	KUNIT_CASE(drop_every_line),
	{}
};

static struct kunit_suite cache_suite = {
	.name = "flaz_cache",
	.init = cache_init,
	.exit = cache_exit,
	.test_cases = cache_cases,
};

kunit_test_suite(cache_suite);

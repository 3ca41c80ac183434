// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the hit path: how it groups slots into SSD reads (spans of
 * one extent, aligned to the SSD's logical block, no more than FLAZ_SPAN_GAP
 * apart and no longer than the buffer), and what it checks of a slot before
 * serving it (flaz_hit_check(): never another block's, a damaged one's, one of
 * another size or codec than the table says, or an extent's earlier tenant's).
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

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

	KUNIT_EXPECT_EQ(test, add(s, &nr, 1, 0, 512, 512, SPAN_MAX), 0U);
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
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 0, 4096, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 8192, 4096, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 12288, 4096, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, s[0].end - s[0].start, 16384U);
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 16384, 32, 4096, 16384), 1U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
	/* a slot inside the full span still joins it */
	KUNIT_EXPECT_EQ(test, add(s, &nr, 2, 4096, 32, 4096, 16384), 0U);
	KUNIT_EXPECT_EQ(test, nr, 2U);
}

/* The checks' volume: lz4, zstd for cold slots, 8 extents of 32 KiB, seq 1000. */
struct check_env {
	struct flaz_cache c;
	u8 slot[sizeof(struct flaz_slot_hdr) + FLAZ_BLOCK_SIZE];
	struct flaz_slot_info info;
	struct flaz_entry e;
};

static void check_exit(struct kunit *test)
{
	struct check_env *env = test->priv;

	if (!env)
		return;
	if (!IS_ERR_OR_NULL(env->c.comp))
		flaz_compressor_destroy(env->c.comp);
	if (!IS_ERR_OR_NULL(env->c.cold_comp))
		flaz_compressor_destroy(env->c.cold_comp);
	flaz_tenants_destroy(env->c.tenants);
}

static int check_init(struct kunit *test)
{
	struct check_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);

	if (!env)
		return -ENOMEM;
	test->priv = env;
	env->c.codec = FLAZ_CODEC_LZ4;
	env->c.comp = flaz_compressor_create(FLAZ_CODEC_LZ4);
	env->c.cold_codec = FLAZ_CODEC_ZSTD + 1;
	env->c.cold_comp = flaz_compressor_create(FLAZ_CODEC_ZSTD);
	atomic64_set(&env->c.seq, 1000);
	env->c.tenants = flaz_tenants_create(8, 32U << 10, &env->c.seq);
	if (IS_ERR(env->c.comp))
		return PTR_ERR(env->c.comp);
	if (IS_ERR(env->c.cold_comp))
		return PTR_ERR(env->c.cold_comp);
	return env->c.tenants ? 0 : -ENOMEM;
}

/*
 * A slot of block 5000 at offset 96 of extent 3, as a fill writes it now: its
 * payload @len bytes of a pattern, in @codec; the entry that points at it.
 */
static void slot_write(struct check_env *env, u8 codec, u32 len)
{
	memset(env->slot, 0, sizeof(env->slot));
	memset(env->slot + sizeof(struct flaz_slot_hdr), 0x5a, len);
	env->info = (struct flaz_slot_info) {
		.block = 5000, .line = 17, .len = len, .codec = codec,
		.seq = atomic64_inc_return(&env->c.seq),
		.flags = len == FLAZ_BLOCK_SIZE ? FLAZ_SLOT_RAW : 0,
	};
	flaz_slot_encode(env->slot, &env->info);
	/* header 32 bytes and the payload, rounded up to 32 */
	env->e = (struct flaz_entry) { .kind = FLAZ_ENTRY_SLOT, .ext = 3, .off = 96,
				       .bytes = round_up(32 + len, 32) };
}

static int check(struct check_env *env, u64 block)
{
	struct flaz_slot_info got;

	return flaz_hit_check(&env->c, &env->e, block, env->slot, &got);
}

static void check_serves(struct kunit *test)
{
	struct check_env *env = test->priv;
	struct flaz_slot_info got = {};

	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	KUNIT_EXPECT_EQ(test, env->e.bytes, 1056U);
	KUNIT_ASSERT_EQ(test, flaz_hit_check(&env->c, &env->e, 5000, env->slot, &got), 0);
	KUNIT_EXPECT_EQ(test, got.block, 5000ULL);
	KUNIT_EXPECT_EQ(test, got.len, 1000U);
	KUNIT_EXPECT_EQ(test, got.bytes, 1056U);
	KUNIT_EXPECT_EQ(test, got.codec, (u8)FLAZ_CODEC_LZ4);
	KUNIT_EXPECT_EQ(test, got.flags, 0);
	/* raw: the whole block after the header */
	slot_write(env, FLAZ_CODEC_LZ4, FLAZ_BLOCK_SIZE);
	KUNIT_ASSERT_EQ(test, flaz_hit_check(&env->c, &env->e, 5000, env->slot, &got), 0);
	KUNIT_EXPECT_EQ(test, got.flags, FLAZ_SLOT_RAW);
	KUNIT_EXPECT_EQ(test, got.bytes, 4128U);
}

/* a cut tag matched another block's line: a miss, not a fault */
static void check_other_block(struct kunit *test)
{
	struct check_env *env = test->priv;

	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5001), -ENOENT);
	KUNIT_EXPECT_EQ(test, check(env, 5000 + (1ULL << 32)), -ENOENT);
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
}

static void check_damaged(struct kunit *test)
{
	struct check_env *env = test->priv;
	u8 *payload = env->slot + sizeof(struct flaz_slot_hdr);
	struct flaz_slot_hdr *h = (void *)env->slot;

	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	payload[999] ^= 1;
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	payload[999] ^= 1;
	h->block = cpu_to_le64(5001);
	KUNIT_EXPECT_EQ(test, check(env, 5001), -EILSEQ);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	h->block = cpu_to_le64(5000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
	/* zeroes where the slot was (a trimmed or never written place) */
	memset(env->slot, 0, sizeof(env->slot));
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
}

/* the table's size for the slot is not the slot's: one of them is not this write's */
static void check_size(struct kunit *test)
{
	struct check_env *env = test->priv;

	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	env->e.bytes = 1088;
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	/* shorter than the slot: it does not fit where the table says */
	env->e.bytes = 1024;
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	env->e.bytes = 1056;
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
}

/* the volume's codec and its cold codec decode; another does not */
static void check_codec(struct kunit *test)
{
	struct check_env *env = test->priv;

	slot_write(env, FLAZ_CODEC_ZSTD, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
	slot_write(env, FLAZ_CODEC_DEFLATE, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	slot_write(env, FLAZ_CODEC_LZO, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	slot_write(env, FLAZ_NR_CODECS, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	env->c.cold_codec = 0;
	slot_write(env, FLAZ_CODEC_ZSTD, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
}

/*
 * A slot written before its extent was opened again: the SSD lost the new
 * tenant's write there, and the table's entry is the new one's.
 */
static void check_older_tenant(struct kunit *test)
{
	struct check_env *env = test->priv;

	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	flaz_tenant_open(env->c.tenants, 3);
	KUNIT_EXPECT_EQ(test, check(env, 5000), -EILSEQ);
	/* another extent's opening says nothing of this one */
	env->e.ext = 4;
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
	/* the new tenant's own slot */
	slot_write(env, FLAZ_CODEC_LZ4, 1000);
	KUNIT_EXPECT_EQ(test, check(env, 5000), 0);
}

static struct kunit_case hit_cases[] = {
	KUNIT_CASE(span_aligned),
	KUNIT_CASE(span_merge),
	KUNIT_CASE(span_gap),
	KUNIT_CASE(span_max),
	{}
};

static struct kunit_case check_cases[] = {
	KUNIT_CASE(check_serves),
	KUNIT_CASE(check_other_block),
	KUNIT_CASE(check_damaged),
	KUNIT_CASE(check_size),
	KUNIT_CASE(check_codec),
	KUNIT_CASE(check_older_tenant),
	{}
};

static struct kunit_suite hit_suite = {
	.name = "flaz_hit",
	.test_cases = hit_cases,
};

static struct kunit_suite check_suite = {
	.name = "flaz_hit_check",
	.init = check_init,
	.exit = check_exit,
	.test_cases = check_cases,
};

kunit_test_suites(&hit_suite, &check_suite);

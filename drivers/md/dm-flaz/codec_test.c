// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the codecs: round trips of text, zero and random blocks, the
 * raw fallback threshold, and malformed input refused without harm.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

struct codec_buffers {
	u8 *src, *cmp, *out;
};

static void alloc_buffers(struct kunit *test, struct codec_buffers *b)
{
	b->src = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	b->cmp = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	b->out = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->src);
	KUNIT_ASSERT_NOT_NULL(test, b->cmp);
	KUNIT_ASSERT_NOT_NULL(test, b->out);
}

/* Where flaz_compress() puts the payload: the buffer @ctx. */
static void *to_buf(void *ctx, unsigned int len)
{
	return ctx;
}

/* Text with enough repetition to compress well with every codec. */
static void fill_text(u8 *p)
{
	static const char words[] = "device mapper compressed write-through cache extent slot ";
	unsigned int i;

	for (i = 0; i < FLAZ_BLOCK_SIZE; i++)
		p[i] = words[(i * 7 + i / 64) % (sizeof(words) - 1)];
}

static struct flaz_compressor *create(struct kunit *test, enum flaz_codec type)
{
	struct flaz_compressor *c = flaz_compressor_create(type);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(c), "%s: %ld", flaz_codec_name(type), PTR_ERR(c));
	return c;
}

static void codec_round_trip(struct kunit *test)
{
	struct codec_buffers b;
	enum flaz_codec t;
	int len;

	alloc_buffers(test, &b);
	fill_text(b.src);
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *c = create(test, t);

		len = flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, to_buf, b.cmp);
		KUNIT_EXPECT_GT_MSG(test, len, 0, "%s", flaz_codec_name(t));
		KUNIT_EXPECT_LT_MSG(test, len, (int)FLAZ_BLOCK_SIZE / 2, "%s", flaz_codec_name(t));
		memset(b.out, 0xaa, FLAZ_BLOCK_SIZE);
		KUNIT_EXPECT_EQ(test, flaz_decompress(c, b.cmp, len, b.out), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(b.src, b.out, FLAZ_BLOCK_SIZE), 0, "%s",
				    flaz_codec_name(t));
		flaz_compressor_destroy(c);
	}
}

static void codec_zero_block(struct kunit *test)
{
	struct codec_buffers b;
	enum flaz_codec t;
	int len;

	alloc_buffers(test, &b);
	memset(b.src, 0, FLAZ_BLOCK_SIZE);
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *c = create(test, t);

		len = flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, to_buf, b.cmp);
		KUNIT_EXPECT_GT(test, len, 0);
		KUNIT_EXPECT_LT(test, len, 128);
		KUNIT_EXPECT_EQ(test, flaz_decompress(c, b.cmp, len, b.out), 0);
		KUNIT_EXPECT_EQ(test, memcmp(b.src, b.out, FLAZ_BLOCK_SIZE), 0);
		flaz_compressor_destroy(c);
	}
}

/* Random bytes never save 10%: the caller is told to store the block raw. */
static void codec_incompressible(struct kunit *test)
{
	struct codec_buffers b;
	enum flaz_codec t;

	alloc_buffers(test, &b);
	get_random_bytes(b.src, FLAZ_BLOCK_SIZE);
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *c = create(test, t);

		KUNIT_EXPECT_EQ_MSG(test, flaz_compress(c, b.src, FLAZ_BLOCK_SIZE * 9 / 10,
							to_buf, b.cmp),
				    0, "%s", flaz_codec_name(t));
		flaz_compressor_destroy(c);
	}
}

/* Exactly at the limit fits; one byte under does not. */
static void codec_limit_boundary(struct kunit *test)
{
	struct codec_buffers b;
	struct flaz_compressor *c;
	int len;

	alloc_buffers(test, &b);
	fill_text(b.src);
	c = create(test, FLAZ_CODEC_LZ4);
	len = flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, to_buf, b.cmp);
	KUNIT_ASSERT_GT(test, len, 1);
	KUNIT_EXPECT_EQ(test, flaz_compress(c, b.src, len, to_buf, b.cmp), len);
	KUNIT_EXPECT_EQ(test, flaz_compress(c, b.src, len - 1, to_buf, b.cmp), 0);
	flaz_compressor_destroy(c);
}

/* No room for the payload: @place's error comes back; asked only for a payload that saves. */
static unsigned int place_calls;

static void *no_room(void *ctx, unsigned int len)
{
	place_calls++;
	return ERR_PTR(-ENOSPC);
}

static void codec_place_error(struct kunit *test)
{
	struct codec_buffers b;
	struct flaz_compressor *c;

	alloc_buffers(test, &b);
	c = create(test, FLAZ_CODEC_LZ4);
	place_calls = 0;
	fill_text(b.src);
	KUNIT_EXPECT_EQ(test, flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, no_room, NULL),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, place_calls, 1U);
	get_random_bytes(b.src, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_EQ(test, flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, no_room, NULL), 0);
	KUNIT_EXPECT_EQ(test, place_calls, 1U);
	flaz_compressor_destroy(c);
}

/* Truncated, empty, oversized and garbage input is refused, never overruns. */
static void codec_malformed(struct kunit *test)
{
	struct codec_buffers b;
	enum flaz_codec t;
	int len, r;

	alloc_buffers(test, &b);
	fill_text(b.src);
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *c = create(test, t);

		len = flaz_compress(c, b.src, FLAZ_BLOCK_SIZE - 1, to_buf, b.cmp);
		KUNIT_ASSERT_GT(test, len, 2);
		KUNIT_EXPECT_EQ_MSG(test, flaz_decompress(c, b.cmp, len / 2, b.out), -EILSEQ,
				    "%s truncated", flaz_codec_name(t));
		KUNIT_EXPECT_EQ(test, flaz_decompress(c, b.cmp, 0, b.out), -EILSEQ);
		KUNIT_EXPECT_EQ(test, flaz_decompress(c, b.cmp, FLAZ_BLOCK_SIZE, b.out), -EILSEQ);
		get_random_bytes(b.cmp, 200);
		/* a whole block by chance, or refused; KASAN watches the rest */
		r = flaz_decompress(c, b.cmp, 200, b.out);
		KUNIT_EXPECT_TRUE_MSG(test, r == 0 || r == -EILSEQ, "%s: random payload gave %d",
				      flaz_codec_name(t), r);
		flaz_compressor_destroy(c);
	}
}

static struct kunit_case flaz_codec_cases[] = {
	KUNIT_CASE(codec_round_trip),
	KUNIT_CASE(codec_zero_block),
	KUNIT_CASE(codec_incompressible),
	KUNIT_CASE(codec_limit_boundary),
	KUNIT_CASE(codec_place_error),
	KUNIT_CASE(codec_malformed),
	{}
};

static struct kunit_suite flaz_codec_suite = {
	.name = "flaz_codec",
	.test_cases = flaz_codec_cases,
};

kunit_test_suite(flaz_codec_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for how a fill builds a slot: the largest payload worth keeping
 * for a saving, and flaz_fill_slot()'s choice of compressed or raw, its header
 * (which must decode and check), its seq and its place error.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"

/* Where a slot is built: the header, then a payload of up to a block. */
#define SLOT_BUF	(sizeof(struct flaz_slot_hdr) + FLAZ_BLOCK_SIZE)

static void *place_in_buf(void *ctx, unsigned int len)
{
	return (u8 *)ctx + sizeof(struct flaz_slot_hdr);
}

static void *place_full(void *ctx, unsigned int len)
{
	return ERR_PTR(-ENOSPC);
}

/* Text that every codec compresses to under half a block (as codec_test's). */
static void fill_text(u8 *p)
{
	static const char words[] = "device mapper compressed write-through cache extent slot ";
	unsigned int i;

	for (i = 0; i < FLAZ_BLOCK_SIZE; i++)
		p[i] = words[(i * 7 + i / 64) % (sizeof(words) - 1)];
}

static void fill_max_payload(struct kunit *test)
{
	/* no saving asked: one alignment unit less than a block, never the block */
	KUNIT_EXPECT_EQ(test, flaz_max_payload(0), 4064U);
	/* 1%: 4096 - 40 (40.96 rounded down) */
	KUNIT_EXPECT_EQ(test, flaz_max_payload(1), 4056U);
	KUNIT_EXPECT_EQ(test, flaz_max_payload(25), 3072U);
	KUNIT_EXPECT_EQ(test, flaz_max_payload(50), 2048U);
	/* 99%: 4096 - 4055 */
	KUNIT_EXPECT_EQ(test, flaz_max_payload(99), 41U);
	/* every block raw */
	KUNIT_EXPECT_EQ(test, flaz_max_payload(100), 0U);
	KUNIT_EXPECT_EQ(test, flaz_max_payload(250), 0U);
}

struct fill_ctx {
	struct flaz_compressor *comp;
	u8 *data, *slot, *out;
	atomic64_t seq;
	struct flaz_slot_info info;
};

static void fill_setup(struct kunit *test, struct fill_ctx *f)
{
	f->comp = flaz_compressor_create(FLAZ_CODEC_LZ4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->comp));
	f->data = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	f->slot = kunit_kzalloc(test, SLOT_BUF, GFP_KERNEL);
	f->out = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->data);
	KUNIT_ASSERT_NOT_NULL(test, f->slot);
	KUNIT_ASSERT_NOT_NULL(test, f->out);
	atomic64_set(&f->seq, 10);
	memset(&f->info, 0, sizeof(f->info));
	f->info.block = 12345;
	f->info.line = 77;
	f->info.codec = FLAZ_CODEC_LZ4;
}

/* The slot built in f->slot decodes to what flaz_fill_slot() said it wrote. */
static void expect_decodes(struct kunit *test, struct fill_ctx *f)
{
	struct flaz_slot_info got;

	KUNIT_ASSERT_EQ(test, flaz_slot_decode(f->slot, SLOT_BUF, &got), 0);
	KUNIT_EXPECT_EQ(test, got.block, 12345ULL);
	KUNIT_EXPECT_EQ(test, got.line, 77U);
	KUNIT_EXPECT_EQ(test, got.seq, 11ULL);
	KUNIT_EXPECT_EQ(test, got.len, f->info.len);
	KUNIT_EXPECT_EQ(test, got.flags, f->info.flags);
}

/* The slot holds the block raw, flagged so, and decodes. */
static void expect_raw(struct kunit *test, struct fill_ctx *f)
{
	KUNIT_EXPECT_EQ(test, f->info.len, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_EQ(test, f->info.flags, FLAZ_SLOT_RAW);
	KUNIT_EXPECT_EQ(test, memcmp(f->slot + sizeof(struct flaz_slot_hdr), f->data,
				     FLAZ_BLOCK_SIZE), 0);
	expect_decodes(test, f);
}

static void fill_slot_compressed(struct kunit *test)
{
	struct fill_ctx f;
	u8 *payload;

	fill_setup(test, &f);
	fill_text(f.data);
	KUNIT_EXPECT_EQ(test, flaz_fill_slot(f.comp, NULL, f.data, 3072, place_in_buf, f.slot,
					     &f.seq, &f.info), 0);
	KUNIT_EXPECT_EQ(test, f.info.seq, 11ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f.seq), 11LL);
	KUNIT_EXPECT_GT(test, f.info.len, 0U);
	KUNIT_EXPECT_LT(test, f.info.len, FLAZ_BLOCK_SIZE / 2);
	KUNIT_EXPECT_EQ(test, f.info.flags, 0);
	expect_decodes(test, &f);
	payload = f.slot + sizeof(struct flaz_slot_hdr);
	memset(f.out, 0xaa, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_EQ(test, flaz_decompress(f.comp, payload, f.info.len, f.out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f.out, f.data, FLAZ_BLOCK_SIZE), 0);
	/* a byte of the payload changed: the slot's crc no longer checks */
	payload[f.info.len / 2] ^= 0x10;
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(f.slot, SLOT_BUF, &f.info), -EILSEQ);
	flaz_compressor_destroy(f.comp);
}

static void fill_slot_raw(struct kunit *test)
{
	struct fill_ctx f;

	fill_setup(test, &f);
	/* random bytes do not compress to 3072: the block goes in raw */
	get_random_bytes(f.data, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_EQ(test, flaz_fill_slot(f.comp, NULL, f.data, 3072, place_in_buf, f.slot,
					     &f.seq, &f.info), 0);
	expect_raw(test, &f);

	/* max 0 (compress_min_saving 100): raw without trying, even text */
	fill_text(f.data);
	atomic64_set(&f.seq, 10);
	memset(f.slot, 0, SLOT_BUF);
	KUNIT_EXPECT_EQ(test, flaz_fill_slot(f.comp, NULL, f.data, 0, place_in_buf, f.slot,
					     &f.seq, &f.info), 0);
	expect_raw(test, &f);
	flaz_compressor_destroy(f.comp);
}

static void fill_slot_place_error(struct kunit *test)
{
	struct fill_ctx f;

	fill_setup(test, &f);
	fill_text(f.data);
	/* no room, compressed or raw: the error comes back */
	KUNIT_EXPECT_EQ(test, flaz_fill_slot(f.comp, NULL, f.data, 3072, place_full, NULL,
					     &f.seq, &f.info), -ENOSPC);
	get_random_bytes(f.data, FLAZ_BLOCK_SIZE);
	KUNIT_EXPECT_EQ(test, flaz_fill_slot(f.comp, NULL, f.data, 3072, place_full, NULL,
					     &f.seq, &f.info), -ENOSPC);
	flaz_compressor_destroy(f.comp);
}

static struct kunit_case flaz_fill_cases[] = {
	KUNIT_CASE(fill_max_payload),
	KUNIT_CASE(fill_slot_compressed),
	KUNIT_CASE(fill_slot_raw),
	KUNIT_CASE(fill_slot_place_error),
	{}
};

static struct kunit_suite flaz_fill_suite = {
	.name = "flaz_fill",
	.test_cases = flaz_fill_cases,
};

kunit_test_suite(flaz_fill_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for copying a block, or a part of one, between a buffer and a
 * bio whose segments split it: every byte lands where the bio's data is, none
 * outside the part.
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/mm.h>

#include "flaz.h"
#include "format.h"

struct two_pages {
	struct bio bio;
	struct bio_vec vecs[2];
	struct page *p[2];
};

/*
 * A bio of @len0 bytes at the end of one page and @len1 at the start of
 * another. The pages are KUnit's (kmalloc of a page is page-aligned), so a
 * failed assertion leaks nothing.
 */
static void two_pages_init(struct kunit *test, struct two_pages *t, u32 len0, u32 len1)
{
	u32 i;

	for (i = 0; i < 2; i++) {
		void *mem = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, mem);
		KUNIT_ASSERT_TRUE(test, PAGE_ALIGNED(mem));
		t->p[i] = virt_to_page(mem);
	}
	bio_init(&t->bio, NULL, t->vecs, 2, REQ_OP_READ);
	__bio_add_page(&t->bio, t->p[0], len0, PAGE_SIZE - len0);
	__bio_add_page(&t->bio, t->p[1], len1, 0);
}

/* The bio's @i-th byte. */
static u8 bio_byte(struct two_pages *t, u32 len0, u32 i)
{
	if (i < len0)
		return ((u8 *)page_address(t->p[0]))[PAGE_SIZE - len0 + i];
	return ((u8 *)page_address(t->p[1]))[i - len0];
}

static u8 *pattern(struct kunit *test)
{
	u8 *buf = kunit_kmalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < FLAZ_BLOCK_SIZE; i++)
		buf[i] = i * 7 + (i >> 8);
	return buf;
}

/* A whole block into a bio split 512 + 3584: every byte in order. */
static void copy_block_split(struct kunit *test)
{
	struct two_pages t;
	u8 *src = pattern(test);
	u32 i;

	two_pages_init(test, &t, 512, 3584);
	flaz_copy_block(&t.bio, t.bio.bi_iter, 0, src, true);
	for (i = 0; i < FLAZ_BLOCK_SIZE; i++)
		KUNIT_ASSERT_EQ_MSG(test, bio_byte(&t, 512, i), src[i], "byte %u", i);
}

/*
 * A partial hit's part: a 3 KiB read at byte 1024 of its block, in a bio split
 * 1024 + 2048, gets bytes 1024..4095 of the decompressed block; the pages
 * around the bio's data stay zero.
 */
static void copy_part_to_bio(struct kunit *test)
{
	struct two_pages t;
	u8 *src = pattern(test);
	u8 *p0, *p1;
	u32 i;

	two_pages_init(test, &t, 1024, 2048);
	flaz_copy_bytes(&t.bio, t.bio.bi_iter, 0, src + 1024, 3072, true);
	for (i = 0; i < 3072; i++)
		KUNIT_ASSERT_EQ_MSG(test, bio_byte(&t, 1024, i), src[1024 + i], "byte %u", i);
	p0 = page_address(t.p[0]);
	p1 = page_address(t.p[1]);
	for (i = 0; i < PAGE_SIZE - 1024; i++)
		KUNIT_ASSERT_EQ_MSG(test, p0[i], 0, "first page, byte %u", i);
	for (i = 2048; i < PAGE_SIZE; i++)
		KUNIT_ASSERT_EQ_MSG(test, p1[i], 0, "second page, byte %u", i);
}

/* From the bio, at an offset into it: the bytes after @off, across the split. */
static void copy_part_from_bio(struct kunit *test)
{
	struct two_pages t;
	u8 *dst = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	two_pages_init(test, &t, 1024, 2048);
	for (i = 0; i < 1024; i++)
		((u8 *)page_address(t.p[0]))[PAGE_SIZE - 1024 + i] = i;
	for (i = 0; i < 2048; i++)
		((u8 *)page_address(t.p[1]))[i] = 0x80 ^ i;
	flaz_copy_bytes(&t.bio, t.bio.bi_iter, 512, dst, 2048, false);
	for (i = 0; i < 2048; i++)
		KUNIT_ASSERT_EQ_MSG(test, dst[i], bio_byte(&t, 1024, 512 + i), "byte %u", i);
	KUNIT_EXPECT_EQ(test, dst[2048], 0);
}

static struct kunit_case copy_cases[] = {
	KUNIT_CASE(copy_block_split),
	KUNIT_CASE(copy_part_to_bio),
	KUNIT_CASE(copy_part_from_bio),
	{}
};

static struct kunit_suite copy_suite = {
	.name = "flaz_copy",
	.test_cases = copy_cases,
};

kunit_test_suite(copy_suite);

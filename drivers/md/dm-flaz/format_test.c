// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the on-SSD layout: size boundaries, alignment, metadata room;
 * for the slots and extents written into it: round trips, every rejection, and
 * an extent packed exactly full; and for the metadata blocks: superblock, table
 * blocks and entries, gen blocks and generations.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "format.h"

/* The advertised minimum fits exactly FLAZ_MIN_EXTENTS; one sector less does not. */
static void geometry_min_boundary(struct kunit *test)
{
	struct flaz_geometry g;
	u32 ext, ob;
	u64 min;

	for (ext = FLAZ_MIN_EXTENT_KIB; ext <= FLAZ_MAX_EXTENT_KIB; ext *= 2) {
		for (ob = FLAZ_MIN_OVERBOOK; ob <= FLAZ_MAX_OVERBOOK; ob += 300) {
			min = flaz_geometry_min_sectors(ext, ob);
			KUNIT_ASSERT_NE(test, min, 0ULL);
			KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, min, ext, ob), 0);
			KUNIT_EXPECT_EQ(test, g.nr_extents, (u64)FLAZ_MIN_EXTENTS);
			KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, min - 1, ext, ob), -ENOSPC);
		}
	}
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 0, 32, 200), -ENOSPC);
}

/*
 * The extent count is the largest that fits: nothing is left for one more
 * extent (adding one grows the head by one extent's rounding at most). Sizes
 * beyond the cap (2^30 extents), even a crafted U64_MAX, answer at once with it.
 */
static void geometry_largest_fit(struct kunit *test)
{
	struct flaz_geometry g;
	u64 ssd, used;

	for (ssd = 1ULL << 16; ssd <= 1ULL << 36; ssd = ssd * 3 + 12345) {
		KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, ssd, 32, 200), 0);
		used = g.data_start + g.nr_extents * g.extent_sectors;
		KUNIT_EXPECT_LE(test, used, ssd);
		KUNIT_EXPECT_LT(test, ssd - used, 2ULL * g.extent_sectors);
	}
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1ULL << 50, 32, 200), 0);
	KUNIT_EXPECT_EQ(test, g.nr_extents, (u64)FLAZ_MAX_EXTENTS);
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, U64_MAX, 4, 1000), 0);
	KUNIT_EXPECT_EQ(test, g.nr_extents, (u64)FLAZ_MAX_EXTENTS);
}

static void geometry_bad_params(struct kunit *test)
{
	struct flaz_geometry g;

	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1 << 20, 3, 200), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1 << 20, 48, 200), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1 << 20, 512, 200), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1 << 20, 32, 99), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_geometry_init(&g, 1 << 20, 32, 1001), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_geometry_min_sectors(48, 200), 0ULL);
}

/*
 * For many sizes: extents aligned to their size, everything inside the SSD, the
 * table and then the gen blocks fill the metadata area, and the SSD has no room
 * for one more extent.
 */
static void geometry_layout_invariants(struct kunit *test)
{
	struct flaz_geometry g, more;
	u64 s;

	for (s = 1000; s < (1ULL << 36); s = s * 3 + 7) {
		if (flaz_geometry_init(&g, s, 32, 200))
			continue;
		KUNIT_EXPECT_EQ(test, g.data_start % g.extent_sectors, 0ULL);
		KUNIT_EXPECT_GE(test, g.meta_start, (u64)FLAZ_SB_SECTORS);
		KUNIT_EXPECT_GE(test, g.data_start, g.meta_start + g.meta_sectors);
		KUNIT_EXPECT_LE(test, g.data_start + g.nr_extents * g.extent_sectors, s);
		KUNIT_EXPECT_GE(test, g.meta_sectors << FLAZ_SECTOR_SHIFT,
				g.nr_lines * FLAZ_META_ENTRY_BYTES);
		KUNIT_EXPECT_EQ(test, g.nr_lines, g.nr_extents * 8 * 2);
		/* the gen blocks right after the table blocks, ending the metadata area */
		KUNIT_EXPECT_EQ(test, g.gen_start,
				g.meta_start + flaz_table_blocks(&g) * FLAZ_BLOCK_SECTORS);
		KUNIT_EXPECT_GE(test, flaz_table_blocks(&g) * FLAZ_META_ENTRIES, g.nr_lines);
		KUNIT_EXPECT_GE(test, flaz_gen_blocks(&g) * FLAZ_GEN_ENTRIES, g.nr_extents);
		KUNIT_EXPECT_GE(test, flaz_gen_blocks(&g), 1ULL);
		KUNIT_EXPECT_EQ(test, g.gen_start + flaz_gen_blocks(&g) * FLAZ_BLOCK_SECTORS,
				g.meta_start + g.meta_sectors);
		KUNIT_EXPECT_GE(test, g.data_start,
				g.gen_start + flaz_gen_blocks(&g) * FLAZ_BLOCK_SECTORS);
		/* Two extents' more space always makes room for at least one more extent. */
		KUNIT_ASSERT_EQ(test,
				flaz_geometry_init(&more, s + g.extent_sectors * 2, 32, 200), 0);
		KUNIT_EXPECT_GT(test, more.nr_extents, g.nr_extents);
	}
}

/* Metadata stays a small fraction of a large SSD (8 bytes per line). */
static void geometry_overhead_large(struct kunit *test)
{
	struct flaz_geometry g;
	u64 tib = 1ULL << 31;	/* sectors */

	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, tib, 32, 200), 0);
	KUNIT_EXPECT_LE(test, g.data_start * 200, tib);	/* <= 0.5% */
	KUNIT_EXPECT_GE(test, g.nr_extents * g.extent_sectors * 100, tib * 99);
}

#define TEST_EXTENT_BYTES	(32U << 10)
#define TEST_CODEC		2

static void fill_payload(u8 *p, u32 len, u32 salt)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 31 + salt * 7 + (i >> 8));
}

/* Encode a slot at @slot with a patterned payload; returns its info. */
static struct flaz_slot_info put_slot(u8 *slot, u64 block, u64 seq, u32 len, u8 flags)
{
	struct flaz_slot_info info = {
		.block = block, .seq = seq, .line = (u32)block ^ 0x5a5a,
		.len = len, .flags = flags, .codec = TEST_CODEC,
	};

	fill_payload(slot + sizeof(struct flaz_slot_hdr), len, (u32)seq);
	flaz_slot_encode(slot, &info);
	return info;
}

static void slot_bytes_boundaries(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct flaz_slot_hdr), (size_t)32);
	KUNIT_EXPECT_EQ(test, sizeof(struct flaz_extent_hdr), (size_t)32);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(1), 64U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(31), 64U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(32), 64U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(33), 96U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(4064), 4096U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(4065), 4128U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(4095), 4128U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(FLAZ_BLOCK_SIZE), 4128U);
	KUNIT_EXPECT_EQ(test, flaz_slot_bytes(FLAZ_BLOCK_SIZE), FLAZ_MAX_SLOT_BYTES);
}

/* Compressed lengths 1 and 4095 and a raw block survive encode and decode. */
static void slot_round_trip(struct kunit *test)
{
	static const struct { u32 len; u8 flags; } cases[] = {
		{ 1, 0 }, { 32, 0 }, { 33, 0 }, { 4095, 0 }, { FLAZ_BLOCK_SIZE, FLAZ_SLOT_RAW },
	};
	struct flaz_slot_info in, out;
	u8 *slot;
	u32 i;

	slot = kunit_kzalloc(test, FLAZ_MAX_SLOT_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 len = cases[i].len, bytes = flaz_slot_bytes(len);

		in = put_slot(slot, 0xfedcba9876543210ULL + i, 0x0123456789abcdefULL, len,
			      cases[i].flags);
		KUNIT_EXPECT_EQ(test, in.bytes, bytes);
		memset(&out, 0xa5, sizeof(out));
		KUNIT_ASSERT_EQ_MSG(test, flaz_slot_decode(slot, bytes, &out), 0, "len %u", len);
		KUNIT_EXPECT_EQ(test, out.block, in.block);
		KUNIT_EXPECT_EQ(test, out.seq, in.seq);
		KUNIT_EXPECT_EQ(test, out.line, in.line);
		KUNIT_EXPECT_EQ(test, out.len, len);
		KUNIT_EXPECT_EQ(test, out.bytes, bytes);
		KUNIT_EXPECT_EQ(test, out.flags, cases[i].flags);
		KUNIT_EXPECT_EQ(test, out.codec, (u8)TEST_CODEC);
		/* More readable bytes than the slot needs are fine; one short is not. */
		KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, FLAZ_MAX_SLOT_BYTES, &out), 0);
		KUNIT_EXPECT_EQ_MSG(test, flaz_slot_decode(slot, bytes - 1, &out), -EILSEQ,
				    "len %u", len);
	}
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, 0, &out), -EILSEQ);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, sizeof(struct flaz_slot_hdr) - 1, &out),
			-EILSEQ);
}

/* Any one flipped byte of the header or of the payload is caught. */
static void slot_checksum(struct kunit *test)
{
	static const u32 lens[] = { 1, 100, FLAZ_BLOCK_SIZE };
	struct flaz_slot_info out;
	u32 i, k, len, pos[3];
	u8 *slot;

	slot = kunit_kzalloc(test, FLAZ_MAX_SLOT_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		len = lens[i];
		put_slot(slot, 77, 5, len, len == FLAZ_BLOCK_SIZE ? FLAZ_SLOT_RAW : 0);
		KUNIT_ASSERT_EQ(test, flaz_slot_decode(slot, FLAZ_MAX_SLOT_BYTES, &out), 0);
		for (k = 0; k < sizeof(struct flaz_slot_hdr); k++) {
			slot[k] ^= 0x10;
			KUNIT_EXPECT_EQ_MSG(test, flaz_slot_decode(slot, FLAZ_MAX_SLOT_BYTES, &out),
					    -EILSEQ, "len %u header byte %u", len, k);
			slot[k] ^= 0x10;
		}
		pos[0] = 0;
		pos[1] = len / 2;
		pos[2] = len - 1;
		for (k = 0; k < ARRAY_SIZE(pos); k++) {
			slot[sizeof(struct flaz_slot_hdr) + pos[k]] ^= 0x01;
			KUNIT_EXPECT_EQ_MSG(test, flaz_slot_decode(slot, FLAZ_MAX_SLOT_BYTES, &out),
					    -EILSEQ, "len %u payload byte %u", len, pos[k]);
			slot[sizeof(struct flaz_slot_hdr) + pos[k]] ^= 0x01;
		}
		KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, FLAZ_MAX_SLOT_BYTES, &out), 0);
	}
}

/*
 * Headers with a valid checksum but impossible contents: bad magic, length 0 or
 * above a block, a raw slot that is not a whole block, an unknown flag.
 */
static void slot_bad_fields(struct kunit *test)
{
	struct flaz_slot_hdr *h;
	struct flaz_slot_info out;
	u32 avail = 2 * FLAZ_MAX_SLOT_BYTES;
	u8 *slot;

	slot = kunit_kzalloc(test, avail, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	h = (struct flaz_slot_hdr *)slot;

	put_slot(slot, 1, 1, 100, 0);
	h->magic = cpu_to_le32(FLAZ_EXTENT_MAGIC);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	h->magic = 0;
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);

	put_slot(slot, 1, 1, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE + 1, 0);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE + 32, 0);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE, 0);	/* a 4096-byte "compressed" slot */
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), 0);

	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE - 1, FLAZ_SLOT_RAW);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, 1, FLAZ_SLOT_RAW);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);

	/* hot is a kind of raw */
	put_slot(slot, 1, 1, 100, FLAZ_SLOT_HOT);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE, FLAZ_SLOT_HOT);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE, FLAZ_SLOT_RAW | FLAZ_SLOT_HOT);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), 0);
	KUNIT_EXPECT_EQ(test, out.flags, FLAZ_SLOT_RAW | FLAZ_SLOT_HOT);
	put_slot(slot, 1, 1, 100, 0x80);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE, FLAZ_SLOT_RAW | 0x04);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), -EILSEQ);
	put_slot(slot, 1, 1, FLAZ_BLOCK_SIZE, FLAZ_SLOT_RAW);
	KUNIT_EXPECT_EQ(test, flaz_slot_decode(slot, avail, &out), 0);
}

/* What a test extent holds: one entry per slot, in order. */
struct test_extent {
	u8 *data;
	u32 nr;
	u32 off[TEST_EXTENT_BYTES / 64];
	struct flaz_slot_info info[TEST_EXTENT_BYTES / 64];
};

/*
 * Pack slots of assorted lengths, one of them raw, so they fill the extent
 * exactly; the last slot takes what is left. Returns the bytes used.
 */
static u32 build_full_extent(struct kunit *test, struct test_extent *t, u32 extent)
{
	static const u32 lens[] = { 1, FLAZ_BLOCK_SIZE, 100, 2000, 33, 4095, 31, 3000, 32 };
	u32 used = sizeof(struct flaz_extent_hdr), left, len;
	u8 flags;

	t->nr = 0;
	while ((left = TEST_EXTENT_BYTES - used) != 0) {
		flags = 0;
		if (left <= FLAZ_MAX_SLOT_BYTES) {
			len = left - sizeof(struct flaz_slot_hdr);
			/* One byte more would not fit. */
			KUNIT_EXPECT_GT(test, used + flaz_slot_bytes(len + 1), TEST_EXTENT_BYTES);
		} else {
			len = lens[t->nr % ARRAY_SIZE(lens)];
			if (left - flaz_slot_bytes(len) == FLAZ_SLOT_ALIGN)
				len = 1;	/* 32 bytes left would hold no slot */
		}
		if (len == FLAZ_BLOCK_SIZE)
			flags = FLAZ_SLOT_RAW;
		t->off[t->nr] = used;
		t->info[t->nr] = put_slot(t->data + used, 1000 + t->nr * 3, 50 + t->nr, len,
					  flags);
		used += t->info[t->nr].bytes;
		t->nr++;
	}
	KUNIT_EXPECT_EQ(test, used, TEST_EXTENT_BYTES);
	KUNIT_EXPECT_GT(test, used + flaz_slot_bytes(1), TEST_EXTENT_BYTES);
	flaz_extent_encode(t->data, 999, extent, used, t->nr);
	return used;
}

static struct test_extent *alloc_extent(struct kunit *test)
{
	struct test_extent *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->data = kunit_kzalloc(test, TEST_EXTENT_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->data);
	return t;
}

/* A full extent decodes, and its walk yields every slot in order, then ends. */
static void extent_full_walk(struct kunit *test)
{
	struct test_extent *t = alloc_extent(test);
	struct flaz_slot_info info;
	u32 used, nr, off = 0, i = 0, raw = 0;
	int r;

	build_full_extent(test, t, 7);
	KUNIT_ASSERT_GE(test, t->nr, 9U);
	KUNIT_ASSERT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 7, &used, &nr), 0);
	KUNIT_EXPECT_EQ(test, used, TEST_EXTENT_BYTES);
	KUNIT_EXPECT_EQ(test, nr, t->nr);
	while ((r = flaz_extent_next(t->data, used, &off, &info)) == 1) {
		KUNIT_ASSERT_LT(test, i, t->nr);
		KUNIT_EXPECT_EQ(test, off, t->off[i] + t->info[i].bytes);
		KUNIT_EXPECT_EQ(test, info.block, t->info[i].block);
		KUNIT_EXPECT_EQ(test, info.seq, t->info[i].seq);
		KUNIT_EXPECT_EQ(test, info.line, t->info[i].line);
		KUNIT_EXPECT_EQ(test, info.len, t->info[i].len);
		KUNIT_EXPECT_EQ(test, info.bytes, t->info[i].bytes);
		KUNIT_EXPECT_EQ(test, info.flags, t->info[i].flags);
		raw += !!(info.flags & FLAZ_SLOT_RAW);
		i++;
	}
	KUNIT_EXPECT_EQ(test, r, 0);
	KUNIT_EXPECT_EQ(test, i, t->nr);
	KUNIT_EXPECT_EQ(test, off, TEST_EXTENT_BYTES);
	KUNIT_EXPECT_GE(test, raw, 1U);
	/* Walking on from the end stays at the end. */
	KUNIT_EXPECT_EQ(test, flaz_extent_next(t->data, used, &off, &info), 0);

	/* An extent with no slots: the header alone. */
	flaz_extent_encode(t->data, 1, 3, sizeof(struct flaz_extent_hdr), 0);
	KUNIT_ASSERT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 3, &used, &nr), 0);
	KUNIT_EXPECT_EQ(test, used, (u32)sizeof(struct flaz_extent_hdr));
	KUNIT_EXPECT_EQ(test, nr, 0U);
	off = 0;
	KUNIT_EXPECT_EQ(test, flaz_extent_next(t->data, used, &off, &info), 0);
}

/* The smallest extent cannot hold a raw block: its largest slot is 4032 bytes of payload. */
static void extent_small_fit(struct kunit *test)
{
	u32 ext = FLAZ_MIN_EXTENT_KIB << 10, hdr = sizeof(struct flaz_extent_hdr);
	u32 used, nr, off = 0;
	struct flaz_slot_info info;
	u8 *data;

	KUNIT_EXPECT_GT(test, hdr + flaz_slot_bytes(FLAZ_BLOCK_SIZE), ext);
	KUNIT_EXPECT_EQ(test, hdr + flaz_slot_bytes(ext - 2 * hdr), ext);
	KUNIT_EXPECT_GT(test, hdr + flaz_slot_bytes(ext - 2 * hdr + 1), ext);

	data = kunit_kzalloc(test, ext, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	put_slot(data + hdr, 42, 43, ext - 2 * hdr, 0);
	flaz_extent_encode(data, 44, 0, ext, 1);
	KUNIT_ASSERT_EQ(test, flaz_extent_decode(data, ext, 0, &used, &nr), 0);
	KUNIT_EXPECT_EQ(test, flaz_extent_next(data, used, &off, &info), 1);
	KUNIT_EXPECT_EQ(test, info.block, 42ULL);
	KUNIT_EXPECT_EQ(test, info.len, ext - 2 * hdr);
	KUNIT_EXPECT_EQ(test, flaz_extent_next(data, used, &off, &info), 0);
}

/* Wrong extent number, a damaged header, an impossible `used`: all refused. */
static void extent_bad_header(struct kunit *test)
{
	struct test_extent *t = alloc_extent(test);
	u32 used, nr, k, hdr = sizeof(struct flaz_extent_hdr);

	build_full_extent(test, t, 5);
	KUNIT_ASSERT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr), 0);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 4, &used, &nr),
			-EILSEQ);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 6, &used, &nr),
			-EILSEQ);
	/* Too small an extent for what the header says it holds. */
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES - 32, 5, &used, &nr),
			-EILSEQ);

	for (k = 0; k < hdr; k++) {
		t->data[k] ^= 0x04;
		KUNIT_EXPECT_EQ_MSG(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used,
							     &nr), -EILSEQ, "header byte %u", k);
		t->data[k] ^= 0x04;
	}
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr), 0);

	/* Valid checksums over bad values of `used`. */
	flaz_extent_encode(t->data, 1, 5, TEST_EXTENT_BYTES - 1, 1);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr),
			-EILSEQ);
	flaz_extent_encode(t->data, 1, 5, hdr + 16, 1);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr),
			-EILSEQ);
	flaz_extent_encode(t->data, 1, 5, TEST_EXTENT_BYTES + FLAZ_SLOT_ALIGN, 1);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr),
			-EILSEQ);
	flaz_extent_encode(t->data, 1, 5, 0, 0);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr),
			-EILSEQ);
	flaz_extent_encode(t->data, 1, 5, hdr - FLAZ_SLOT_ALIGN / 2, 0);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr),
			-EILSEQ);
	flaz_extent_encode(t->data, 1, 5, TEST_EXTENT_BYTES, 1);
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data, TEST_EXTENT_BYTES, 5, &used, &nr), 0);

	/* A slot header is not an extent header. */
	KUNIT_EXPECT_EQ(test, flaz_extent_decode(t->data + hdr, TEST_EXTENT_BYTES - hdr, 5,
						 &used, &nr), -EILSEQ);
}

/*
 * The walk stops with -EILSEQ at a damaged slot in the middle, and at a last slot
 * that runs past `used`; the slots before are still returned.
 */
static void extent_damaged_slot(struct kunit *test)
{
	struct test_extent *t = alloc_extent(test);
	struct flaz_slot_info info;
	u32 used, off, i, mid;
	int r;

	used = build_full_extent(test, t, 9);
	mid = t->nr / 2;
	t->data[t->off[mid] + sizeof(struct flaz_slot_hdr) + t->info[mid].len - 1] ^= 0x80;
	off = 0;
	for (i = 0; (r = flaz_extent_next(t->data, used, &off, &info)) == 1; i++)
		KUNIT_EXPECT_EQ(test, info.block, t->info[i].block);
	KUNIT_EXPECT_EQ(test, r, -EILSEQ);
	KUNIT_EXPECT_EQ(test, i, mid);
	KUNIT_EXPECT_EQ(test, off, t->off[mid]);
	/* Asked again, it stays there. */
	KUNIT_EXPECT_EQ(test, flaz_extent_next(t->data, used, &off, &info), -EILSEQ);
	KUNIT_EXPECT_EQ(test, off, t->off[mid]);

	/* Undamaged, but `used` one alignment unit short of the last slot's end. */
	t->data[t->off[mid] + sizeof(struct flaz_slot_hdr) + t->info[mid].len - 1] ^= 0x80;
	used -= FLAZ_SLOT_ALIGN;
	off = 0;
	i = 0;
	while ((r = flaz_extent_next(t->data, used, &off, &info)) == 1)
		i++;
	KUNIT_EXPECT_EQ(test, r, -EILSEQ);
	KUNIT_EXPECT_EQ(test, i, t->nr - 1);
	KUNIT_EXPECT_EQ(test, off, t->off[t->nr - 1]);
}

static void sb_sample(struct flaz_sb_info *sb, struct kunit *test)
{
	memset(sb, 0, sizeof(*sb));
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&sb->geo, 1 << 20, 32, 200), 0);
	sb->seq = 7;
	sb->gen = 0x1122334455667788ULL;
	sb->uuid[0] = 0xab;
	sb->flags = FLAZ_SB_CLEAN;
	sb->hdd_sectors = 8 << 20;
	sb->extent_kib = 32;
	sb->overbook = 200;
	sb->codec = 2;
	sb->region_shift = flaz_region_shift(1 << 20);
	sb->nr_regions = (1 << 20) >> sb->region_shift;
	sb->hdd_fp = 0xdeadbeef;
	sb->commit = 42;
	sb->next_seq = 1000;
	sb->cold_codec = 3;
	sb->order_first = 0x12345;
	sb->order_extents = 3;
}

/* A superblock decodes to what was encoded; every damaged byte and bad field is refused. */
static void sb_round_trip(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct flaz_sb_info sb, out;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -ENODATA);
	sb_sample(&sb, test);
	bitmap[3] = 0x10;
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_ASSERT_EQ(test, flaz_sb_decode(blk, &out), 0);
	KUNIT_EXPECT_EQ(test, out.seq, sb.seq);
	KUNIT_EXPECT_EQ(test, out.gen, sb.gen);
	KUNIT_EXPECT_EQ(test, out.uuid[0], 0xab);
	KUNIT_EXPECT_EQ(test, out.flags, FLAZ_SB_CLEAN);
	KUNIT_EXPECT_EQ(test, out.hdd_sectors, sb.hdd_sectors);
	KUNIT_EXPECT_EQ(test, out.codec, 2U);
	KUNIT_EXPECT_EQ(test, out.hdd_fp, 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, out.commit, 42ULL);
	KUNIT_EXPECT_EQ(test, out.next_seq, 1000ULL);
	KUNIT_EXPECT_EQ(test, out.cold_codec, 3U);
	KUNIT_EXPECT_EQ(test, out.order_first, 0x12345U);
	KUNIT_EXPECT_EQ(test, out.order_extents, 3U);
	KUNIT_EXPECT_EQ(test, out.geo.nr_lines, sb.geo.nr_lines);
	/* the entry's field widths are derived as the rest of the geometry is */
	KUNIT_EXPECT_EQ(test, out.geo.off_bits, 10U);
	KUNIT_EXPECT_EQ(test, out.geo.ext_bits, 14U);
	KUNIT_EXPECT_EQ(test, out.geo.gen_bits, 16U);
	KUNIT_EXPECT_EQ(test, ((const u8 *)flaz_sb_bitmap(blk))[3], 0x10);
	/* the checksum covers the whole block, bitmap and padding included */
	for (i = 0; i < FLAZ_BLOCK_SIZE; i += 97) {
		blk[i] ^= 0x20;
		KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
		blk[i] ^= 0x20;
	}
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), 0);
	/* fields that pass the checksum but disagree with the geometry or each other */
	sb.geo.nr_lines++;
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	sb_sample(&sb, test);
	sb.region_shift++;
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	sb_sample(&sb, test);
	sb.flags = 0x80;
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	sb_sample(&sb, test);
	sb.extent_kib = 48;
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
}

/* Give the superblock block @blk format version @version, its checksum made anew. */
static void sb_set_version(u8 *blk, u32 version)
{
	struct flaz_sb *sb = (struct flaz_sb *)blk;

	sb->version = cpu_to_le32(version);
	sb->crc = 0;
	sb->crc = cpu_to_le32(~flaz_crc32c(~0U, blk, FLAZ_BLOCK_SIZE));
}

/* A sound superblock of another format version is told apart from a damaged one. */
static void sb_other_version(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u8 *bitmap = kunit_kzalloc(test, FLAZ_SB_BITMAP_BYTES, GFP_KERNEL);
	struct flaz_sb_info sb, out;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	KUNIT_ASSERT_NOT_NULL(test, bitmap);
	KUNIT_EXPECT_FALSE(test, flaz_sb_other_version(blk));
	sb_sample(&sb, test);
	flaz_sb_encode(blk, &sb, bitmap);
	KUNIT_ASSERT_EQ(test, flaz_sb_decode(blk, &out), 0);
	KUNIT_EXPECT_FALSE(test, flaz_sb_other_version(blk));
	/* the checksum recomputed the same way the encoder does: still this version */
	sb_set_version(blk, FLAZ_SB_VERSION);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), 0);

	sb_set_version(blk, 1);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	KUNIT_EXPECT_TRUE(test, flaz_sb_other_version(blk));
	/* the format before the entries' cold bit */
	sb_set_version(blk, 2);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	KUNIT_EXPECT_TRUE(test, flaz_sb_other_version(blk));
	/* the format of 8-bit generations, a byte each in the gen blocks */
	sb_set_version(blk, 3);
	KUNIT_EXPECT_EQ(test, flaz_sb_decode(blk, &out), -EILSEQ);
	KUNIT_EXPECT_TRUE(test, flaz_sb_other_version(blk));
	sb_set_version(blk, FLAZ_SB_VERSION + 1);
	KUNIT_EXPECT_TRUE(test, flaz_sb_other_version(blk));
	/* damaged: not a superblock of any version */
	blk[FLAZ_SB_HDR_BYTES + 5] ^= 0x08;
	KUNIT_EXPECT_FALSE(test, flaz_sb_other_version(blk));
	blk[FLAZ_SB_HDR_BYTES + 5] ^= 0x08;
	KUNIT_EXPECT_TRUE(test, flaz_sb_other_version(blk));
	/* another magic, checksum made anew: not a flaz superblock */
	((struct flaz_sb *)blk)->magic = cpu_to_le32(FLAZ_META_MAGIC);
	sb_set_version(blk, 1);
	KUNIT_EXPECT_FALSE(test, flaz_sb_other_version(blk));
}

/* Regions: at least 1 MiB, and never more than the bitmap holds. */
static void sb_region_shift(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, flaz_region_shift(1), FLAZ_MIN_REGION_SHIFT);
	KUNIT_EXPECT_EQ(test, flaz_region_shift((u64)FLAZ_MAX_REGIONS << FLAZ_MIN_REGION_SHIFT),
			FLAZ_MIN_REGION_SHIFT);
	KUNIT_EXPECT_EQ(test,
			flaz_region_shift(((u64)FLAZ_MAX_REGIONS << FLAZ_MIN_REGION_SHIFT) + 1),
			FLAZ_MIN_REGION_SHIFT + 1);
	/* 1 PiB of 4 KiB blocks */
	KUNIT_EXPECT_LE(test, (1ULL << 38) >> flaz_region_shift(1ULL << 38),
			(u64)FLAZ_MAX_REGIONS);
}

/* Table blocks: round trip; another format's block is void; damage is an error. */
static void meta_round_trip(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u64 *in = kunit_kcalloc(test, FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	u64 *out = kunit_kcalloc(test, FLAZ_META_ENTRIES, sizeof(u64), GFP_KERNEL);
	u64 commit = 0;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_EQ(test, (u32)FLAZ_META_ENTRIES, 508U);
	KUNIT_EXPECT_EQ(test, flaz_meta_decode(blk, 5, 0, &commit, out), -ENODATA);
	for (i = 0; i < FLAZ_META_ENTRIES; i++)
		in[i] = 0x0123456789abcdefULL * (i + 1);
	flaz_meta_encode(blk, 5, 9, 3, in);
	KUNIT_ASSERT_EQ(test, flaz_meta_decode(blk, 5, 3, &commit, out), 0);
	KUNIT_EXPECT_EQ(test, commit, 9ULL);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, FLAZ_META_ENTRIES * sizeof(u64)), 0);
	KUNIT_EXPECT_EQ(test, flaz_meta_decode(blk, 6, 3, &commit, out), -ENODATA);
	KUNIT_EXPECT_EQ(test, flaz_meta_decode(blk, 5, 4, &commit, out), -EILSEQ);
	blk[FLAZ_BLOCK_SIZE - 1] ^= 1;
	KUNIT_EXPECT_EQ(test, flaz_meta_decode(blk, 5, 3, &commit, out), -EILSEQ);
}

/*
 * A chunk of a saved reclaim order: round trip; its checksum covers the header
 * and its payload, not what lies after; another format, commit or place in the
 * chain, or a length past the extent, is refused.
 */
static void order_round_trip(struct kunit *test)
{
	u32 eb = 8192, hdr = sizeof(struct flaz_order_hdr), next, bytes, i;
	u8 *ext = kunit_kzalloc(test, eb, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ext);
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 2, &next, &bytes), -EILSEQ);
	for (i = 0; i < 100; i++)
		ext[hdr + i] = (u8)(i * 7 + 1);
	flaz_order_encode(ext, 5, 9, 2, 77, 100);
	KUNIT_ASSERT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 2, &next, &bytes), 0);
	KUNIT_EXPECT_EQ(test, next, 77U);
	KUNIT_EXPECT_EQ(test, bytes, 100U);
	for (i = 0; i < hdr + 100; i += 7) {
		ext[i] ^= 0x08;
		KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 2, &next, &bytes), -EILSEQ);
		ext[i] ^= 0x08;
	}
	ext[hdr + 100] ^= 0xff;
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 2, &next, &bytes), 0);
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 6, 9, 2, &next, &bytes), -EILSEQ);
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 5, 8, 2, &next, &bytes), -EILSEQ);
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 3, &next, &bytes), -EILSEQ);
	flaz_order_encode(ext, 5, 9, 0, FLAZ_ORDER_NONE, eb - hdr);
	KUNIT_ASSERT_EQ(test, flaz_order_decode(ext, eb, 5, 9, 0, &next, &bytes), 0);
	KUNIT_EXPECT_EQ(test, next, FLAZ_ORDER_NONE);
	/* a length past the extent is refused before the checksum reads past it */
	KUNIT_EXPECT_EQ(test, flaz_order_decode(ext, eb - 4096, 5, 9, 0, &next, &bytes), -EILSEQ);
}

/* Gen blocks: round trip; zeros and another format's block hold nothing; damage is an error. */
static void gen_round_trip(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, FLAZ_BLOCK_SIZE, GFP_KERNEL);
	u16 *in = kunit_kcalloc(test, FLAZ_GEN_ENTRIES, sizeof(u16), GFP_KERNEL);
	u16 *out = kunit_kcalloc(test, FLAZ_GEN_ENTRIES, sizeof(u16), GFP_KERNEL);
	u64 commit = 0;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_EQ(test, sizeof(struct flaz_gen_hdr), (size_t)32);
	/* 16 bits a gen: (4096 - 32) / 2 */
	KUNIT_EXPECT_EQ(test, (u32)FLAZ_GEN_ENTRIES, 2032U);
	KUNIT_EXPECT_EQ(test, flaz_gen_decode(blk, 5, 0, &commit, out), -ENODATA);
	for (i = 0; i < FLAZ_GEN_ENTRIES; i++)
		in[i] = (u16)(i * 40503 + 11);	/* high bytes too */
	in[0] = 0x1234;
	in[1] = 0xffff;
	in[FLAZ_GEN_ENTRIES - 1] = 0xfedc;
	flaz_gen_encode(blk, 5, 9, 3, in);
	/* little-endian gens right after the header, the last one ending the block */
	KUNIT_EXPECT_EQ(test, blk[32], 0x34);
	KUNIT_EXPECT_EQ(test, blk[33], 0x12);
	KUNIT_EXPECT_EQ(test, blk[34], 0xff);
	KUNIT_EXPECT_EQ(test, blk[35], 0xff);
	KUNIT_EXPECT_EQ(test, blk[FLAZ_BLOCK_SIZE - 2], 0xdc);
	KUNIT_EXPECT_EQ(test, blk[FLAZ_BLOCK_SIZE - 1], 0xfe);
	memset(out, 0xa5, FLAZ_GEN_ENTRIES * sizeof(u16));
	KUNIT_ASSERT_EQ(test, flaz_gen_decode(blk, 5, 3, &commit, out), 0);
	KUNIT_EXPECT_EQ(test, commit, 9ULL);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, FLAZ_GEN_ENTRIES * sizeof(u16)), 0);
	/* another format's gen block: its gens are not this format's (all 0) */
	KUNIT_EXPECT_EQ(test, flaz_gen_decode(blk, 6, 3, &commit, out), -ENODATA);
	/* sound but in the wrong place */
	KUNIT_EXPECT_EQ(test, flaz_gen_decode(blk, 5, 4, &commit, out), -EILSEQ);
	/* a table block is not a gen block, nor the other way round (out is as large) */
	KUNIT_EXPECT_EQ(test, flaz_meta_decode(blk, 5, 3, &commit, (u64 *)out), -ENODATA);
	/* any flipped byte: header or gens */
	for (i = 0; i < FLAZ_BLOCK_SIZE; i += 61) {
		blk[i] ^= 0x40;
		KUNIT_EXPECT_NE_MSG(test, flaz_gen_decode(blk, 5, 3, &commit, out), 0,
				    "byte %u", i);
		blk[i] ^= 0x40;
	}
	blk[FLAZ_BLOCK_SIZE - 1] ^= 1;
	KUNIT_EXPECT_EQ(test, flaz_gen_decode(blk, 5, 3, &commit, out), -EILSEQ);
	blk[FLAZ_BLOCK_SIZE - 1] ^= 1;
	KUNIT_EXPECT_EQ(test, flaz_gen_decode(blk, 5, 3, &commit, out), 0);
}

/*
 * A table entry's fields as wide as the geometry needs, worked out here by hand:
 * the offset holds 0..extent bytes / 32 - 1, the extent 0..nr_extents - 1, and
 * the generation what is left of 64 bits after them, the 8 bits of size, the
 * cold bit and the FLAZ_TAG_BITS of tag, 16 at most. Generations are odd in
 * use, even free: the last even one is worn out.
 */
static void geometry_entry_widths(struct kunit *test)
{
	struct flaz_geometry g;
	u32 ext, ob;
	u64 s;

	/*
	 * 512 MiB, 32 KiB extents, overbook 200: 16318 extents of 64 sectors after
	 * a 4224-sector head (16 + (514 table + 9 gen blocks) * 8 = 4200, rounded
	 * up to 64), 4224 + 16318 * 64 = 2^20. 1024 offsets are 10 bits, extents
	 * 0-16317 are 14 (8192 <= 16317 < 16384), so 64 - 8 - 10 - 14 - 1 - 4 = 27
	 * bits are left: the generation has 16.
	 */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1 << 20, 32, 200), 0);
	KUNIT_EXPECT_EQ(test, g.nr_extents, 16318ULL);
	KUNIT_EXPECT_EQ(test, g.data_start, 4224ULL);
	KUNIT_EXPECT_EQ(test, flaz_gen_blocks(&g), 9ULL);
	KUNIT_EXPECT_EQ(test, g.off_bits, 10U);
	KUNIT_EXPECT_EQ(test, g.ext_bits, 14U);
	KUNIT_EXPECT_EQ(test, g.gen_bits, 16U);
	KUNIT_EXPECT_EQ(test, flaz_gen_worn(&g), 0xfffe);

	/* the fewest, smallest extents: 128 offsets (7 bits), extents 0-15 (4 bits) */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, flaz_geometry_min_sectors(4, 100), 4, 100),
			0);
	KUNIT_EXPECT_EQ(test, g.nr_extents, 16ULL);
	KUNIT_EXPECT_EQ(test, g.off_bits, 7U);
	KUNIT_EXPECT_EQ(test, g.ext_bits, 4U);
	KUNIT_EXPECT_EQ(test, g.gen_bits, 16U);

	/*
	 * 8 TiB of 256 KiB extents: a little under 2^25 of them (each costs 512
	 * sectors and a 64th of a table block), so 25 bits of extent beside 13 of
	 * offset leave 64 - 8 - 13 - 25 - 1 - 4 = 13 for the generation.
	 */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1ULL << 34, 256, 100), 0);
	KUNIT_EXPECT_LT(test, g.nr_extents, 1ULL << 25);
	KUNIT_EXPECT_GT(test, g.nr_extents, (1ULL << 24) + 1);
	KUNIT_EXPECT_EQ(test, g.off_bits, 13U);
	KUNIT_EXPECT_EQ(test, g.ext_bits, 25U);
	KUNIT_EXPECT_EQ(test, g.gen_bits, 13U);
	KUNIT_EXPECT_EQ(test, flaz_gen_worn(&g), 8190);

	/* the most extents, of the largest size: all 64 bits taken, 8 of them the gen's */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1ULL << 50, 256, 100), 0);
	KUNIT_EXPECT_EQ(test, g.nr_extents, (u64)FLAZ_MAX_EXTENTS);
	KUNIT_EXPECT_EQ(test, g.off_bits, 13U);
	KUNIT_EXPECT_EQ(test, g.ext_bits, 30U);
	KUNIT_EXPECT_EQ(test, g.gen_bits, 8U);
	KUNIT_EXPECT_EQ(test, flaz_gen_worn(&g), 254);

	/* the rule alone: what 64 bits leave beside 8 + 1 + 4 and these, 16 at most */
	KUNIT_EXPECT_EQ(test, flaz_entry_gen_bits(13, 30), 8U);
	KUNIT_EXPECT_EQ(test, flaz_entry_gen_bits(13, 26), 12U);
	KUNIT_EXPECT_EQ(test, flaz_entry_gen_bits(10, 25), 16U);
	KUNIT_EXPECT_EQ(test, flaz_entry_gen_bits(10, 26), 15U);
	KUNIT_EXPECT_EQ(test, flaz_entry_gen_bits(7, 4), 16U);

	/* any geometry: each field just wide enough, and all of them in 64 bits */
	for (ext = FLAZ_MIN_EXTENT_KIB; ext <= FLAZ_MAX_EXTENT_KIB; ext *= 2) {
		for (ob = FLAZ_MIN_OVERBOOK; ob <= FLAZ_MAX_OVERBOOK; ob += 450) {
			for (s = flaz_geometry_min_sectors(ext, ob); s < (1ULL << 44);
			     s = s * 5 + 3) {
				KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, s, ext, ob), 0);
				KUNIT_EXPECT_EQ(test, 32ULL << g.off_bits, ext * 1024ULL);
				KUNIT_EXPECT_LE(test, g.nr_extents, 1ULL << g.ext_bits);
				KUNIT_EXPECT_GT(test, g.nr_extents, 1ULL << (g.ext_bits - 1));
				KUNIT_EXPECT_GE(test, g.gen_bits, 8U);
				KUNIT_EXPECT_LE(test, g.gen_bits, 16U);
				KUNIT_EXPECT_LE(test, 8 + g.off_bits + g.ext_bits + 1 +
						FLAZ_TAG_BITS + g.gen_bits, 64U);
				if (g.gen_bits < 16)
					KUNIT_EXPECT_EQ(test, 8 + g.off_bits + g.ext_bits + 1 +
							FLAZ_TAG_BITS + g.gen_bits, 64U);
				KUNIT_EXPECT_EQ(test, (u32)flaz_gen_worn(&g) + 2,
						1U << g.gen_bits);
			}
		}
	}
}

/* Entries: every kind packs and unpacks; the range checks hold at their edges. */
static void entry_pack_valid(struct kunit *test)
{
	struct flaz_geometry g;
	struct flaz_entry_info e = {}, o;
	u64 blocks;

	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1 << 20, 256, 200), 0);
	blocks = g.nr_lines * 3 + 5;
	e.units = 129;
	e.off = 256 * 1024 - 129 * FLAZ_SLOT_ALIGN;
	e.ext = g.nr_extents - 1;
	e.gen = 0xa5c3;
	e.cold = 1;
	e.tag = 2;
	flaz_entry_unpack(flaz_entry_pack(&e, &g), &g, &o);
	KUNIT_EXPECT_EQ(test, o.units, e.units);
	KUNIT_EXPECT_EQ(test, o.off, e.off);
	KUNIT_EXPECT_EQ(test, o.ext, e.ext);
	KUNIT_EXPECT_EQ(test, o.cold, 1);
	KUNIT_EXPECT_EQ(test, o.gen, e.gen);
	KUNIT_EXPECT_EQ(test, o.tag, e.tag);
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&o, &g, 4, blocks));
	/* line 5 has no block with tag 3 */
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&o, &g, 5, blocks));
	o.tag = 3;
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&o, &g, 4, blocks));
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 5, blocks));
	o.tag = 2;
	o.ext = g.nr_extents;
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 4, blocks));
	o.ext = 0;
	o.off += FLAZ_SLOT_ALIGN;
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 4, blocks));
	o.off = 0;
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 4, blocks));
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&e, &g, g.nr_lines, blocks));

	e.units = FLAZ_ENTRY_ZERO_UNITS;
	e.tag = (1ULL << 40) + 3;
	KUNIT_EXPECT_EQ(test, flaz_entry_pack(&e, &g), 255ULL | ((1ULL << 40) + 3) << 8);
	flaz_entry_unpack(flaz_entry_pack(&e, &g), &g, &o);
	KUNIT_EXPECT_EQ(test, o.units, FLAZ_ENTRY_ZERO_UNITS);
	KUNIT_EXPECT_EQ(test, o.tag, e.tag);
	/* a zero block has no extent, so no generation: the tag keeps bits 8-63 */
	KUNIT_EXPECT_EQ(test, o.gen, 0);
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 1, blocks));
	o.tag = 3;
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&o, &g, 4, blocks));
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&o, &g, 5, blocks));

	e.units = 0;
	e.gen = 3;
	KUNIT_EXPECT_EQ(test, flaz_entry_pack(&e, &g), 0ULL);
	flaz_entry_unpack(0, &g, &o);
	KUNIT_EXPECT_EQ(test, o.units, 0U);
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&o, &g, 0, blocks));
}

/* Every entry line @line can hold at volume size @old (@old blocks) loads at size @grown. */
static void expect_loads_grown(struct kunit *test, const struct flaz_geometry *g, u64 line,
			       u64 old, u64 grown)
{
	struct flaz_entry_info slot = { .units = 8, .off = sizeof(struct flaz_extent_hdr) };
	struct flaz_entry_info zero = { .units = FLAZ_ENTRY_ZERO_UNITS };
	u64 tag;

	for (tag = 0; tag * g->nr_lines + line < old; tag++) {
		/* a zero block keeps its whole tag, a slot's the table's 4 bits */
		zero.tag = tag;
		slot.tag = tag & ((1U << FLAZ_TAG_BITS) - 1);
		KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&zero, g, line, grown));
		KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&slot, g, line, grown));
	}
}

/*
 * Resize (sb.c, meta_resize()): an entry saved at one volume size loads at any
 * larger one, also once tags no longer fit the table's 4 bits (a grown volume
 * keeps its cache), and one past a smaller size's end reads as damaged (a
 * shrunk one must not load its table: it starts empty).
 */
static void entry_valid_resized(struct kunit *test)
{
	static const u64 sizes[] = { 1, 2, 3, 15, 16, 17, 40 };
	struct flaz_entry_info slot = { .units = 8, .off = sizeof(struct flaz_extent_hdr) };
	struct flaz_entry_info zero = { .units = FLAZ_ENTRY_ZERO_UNITS };
	struct flaz_geometry g;
	u64 l;
	u32 i, j;

	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1 << 20, 256, 200), 0);
	l = g.nr_lines;
	/* by hand: line 4, tag 3 is block 3 * l + 4 */
	slot.tag = 3;
	zero.tag = 3;
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&slot, &g, 4, 3 * l + 5));
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&slot, &g, 4, 40 * l));
	KUNIT_EXPECT_TRUE(test, flaz_entry_valid(&zero, &g, 4, 40 * l));
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&slot, &g, 4, 2 * l));
	KUNIT_EXPECT_FALSE(test, flaz_entry_valid(&zero, &g, 4, 2 * l));
	/* the first and the last line, from each size to each larger one (and one block more) */
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (j = i; j < ARRAY_SIZE(sizes); j++) {
			expect_loads_grown(test, &g, 0, sizes[i] * l, sizes[j] * l + (j > i));
			expect_loads_grown(test, &g, l - 1, sizes[i] * l, sizes[j] * l + (j > i));
		}
	}
}

/* Pack @e in @g, check it is @want, and that it unpacks to @e again. */
static void entry_is(struct kunit *test, const struct flaz_geometry *g,
		     const struct flaz_entry_info *e, u64 want)
{
	struct flaz_entry_info o;
	u64 v = flaz_entry_pack(e, g);

	KUNIT_EXPECT_EQ(test, v, want);
	flaz_entry_unpack(v, g, &o);
	KUNIT_EXPECT_EQ(test, o.units, e->units);
	KUNIT_EXPECT_EQ(test, o.off, e->off);
	KUNIT_EXPECT_EQ(test, o.ext, e->ext);
	KUNIT_EXPECT_EQ(test, o.cold, e->cold);
	KUNIT_EXPECT_EQ(test, o.tag, e->tag & ((1ULL << FLAZ_TAG_BITS) - 1));
	KUNIT_EXPECT_EQ(test, o.gen, e->gen);
}

/*
 * A slot entry's fields at their widest do not run into each other, and each
 * sits where the documented layout puts it: size in bits 0-7, then offset,
 * extent, the cold bit, the low FLAZ_TAG_BITS of the tag and the generation.
 */
static void entry_field_bits(struct kunit *test)
{
	struct flaz_geometry g;
	struct flaz_entry_info e = {};

	KUNIT_EXPECT_EQ(test, FLAZ_TAG_BITS, 4U);
	/* the most extents (2^30) of the largest size: every bit taken, 8 of gen */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1ULL << 50, 256, 100), 0);
	e.units = FLAZ_ENTRY_ZERO_UNITS - 1;
	e.off = ((1U << 13) - 1) * FLAZ_SLOT_ALIGN;
	e.ext = FLAZ_MAX_EXTENTS - 1;
	e.cold = 1;
	e.tag = (1ULL << FLAZ_TAG_BITS) - 1;
	e.gen = 255;
	entry_is(test, &g, &e, ~0ULL - 1);
	/* offset in 8-20, extent in 21-50, cold in 51, tag in 52-55, gen in 56-63 */
	memset(&e, 0, sizeof(e));
	e.units = 2;
	e.gen = 0x81;
	entry_is(test, &g, &e, 2ULL | 0x81ULL << 56);
	e.gen = 0;
	e.tag = 0x1234;		/* keeps its low 4 bits only */
	entry_is(test, &g, &e, 2ULL | 0x4ULL << 52);
	e.tag = 0;
	e.cold = 1;
	entry_is(test, &g, &e, 2ULL | 1ULL << 51);
	e.cold = 0;
	e.ext = (1U << 29) + 1;
	entry_is(test, &g, &e, 2ULL | ((1ULL << 29) + 1) << 21);
	e.ext = 0;
	e.off = 0x1001 * FLAZ_SLOT_ALIGN;
	entry_is(test, &g, &e, 2ULL | 0x1001ULL << 8);

	/*
	 * 512 MiB of 32 KiB extents (16318 of them): offset in 8-17, extent in
	 * 18-31, cold in 32, tag in 33-36, gen in 37-52, and 53-63 unused.
	 */
	KUNIT_ASSERT_EQ(test, flaz_geometry_init(&g, 1 << 20, 32, 200), 0);
	e.units = FLAZ_ENTRY_ZERO_UNITS - 1;
	e.off = ((1U << 10) - 1) * FLAZ_SLOT_ALIGN;
	e.ext = (1U << 14) - 1;
	e.cold = 1;
	e.tag = (1ULL << FLAZ_TAG_BITS) - 1;
	e.gen = 0xffff;
	entry_is(test, &g, &e, (1ULL << 53) - 2);
	memset(&e, 0, sizeof(e));
	e.units = 2;
	e.gen = 0x8001;
	entry_is(test, &g, &e, 2ULL | 0x8001ULL << 37);
	e.gen = 0;
	e.tag = 0x1234;
	entry_is(test, &g, &e, 2ULL | 0x4ULL << 33);
	e.tag = 0;
	e.cold = 1;
	entry_is(test, &g, &e, 2ULL | 1ULL << 32);
	e.cold = 0;
	e.ext = 0x2001;
	entry_is(test, &g, &e, 2ULL | 0x2001ULL << 18);
	e.ext = 0;
	e.off = 0x201 * FLAZ_SLOT_ALIGN;
	entry_is(test, &g, &e, 2ULL | 0x201ULL << 8);
	/* the generation's widest value, as any other: packing does not judge it */
	e.off = 0;
	e.gen = 0xffff;
	entry_is(test, &g, &e, 2ULL | 0xffffULL << 37);
}

static struct kunit_case flaz_format_cases[] = {
	KUNIT_CASE(sb_round_trip),
	KUNIT_CASE(sb_other_version),
	KUNIT_CASE(sb_region_shift),
	KUNIT_CASE(meta_round_trip),
	KUNIT_CASE(gen_round_trip),
	KUNIT_CASE(order_round_trip),
	KUNIT_CASE(geometry_entry_widths),
	KUNIT_CASE(entry_pack_valid),
	KUNIT_CASE(entry_valid_resized),
	KUNIT_CASE(entry_field_bits),
	KUNIT_CASE(geometry_min_boundary),
	KUNIT_CASE(geometry_largest_fit),
	KUNIT_CASE(geometry_bad_params),
	KUNIT_CASE(geometry_layout_invariants),
	KUNIT_CASE(geometry_overhead_large),
	KUNIT_CASE(slot_bytes_boundaries),
	KUNIT_CASE(slot_round_trip),
	KUNIT_CASE(slot_checksum),
	KUNIT_CASE(slot_bad_fields),
	KUNIT_CASE(extent_full_walk),
	KUNIT_CASE(extent_small_fit),
	KUNIT_CASE(extent_bad_header),
	KUNIT_CASE(extent_damaged_slot),
	{}
};

static struct kunit_suite flaz_format_suite = {
	.name = "flaz_format",
	.test_cases = flaz_format_cases,
};

kunit_test_suite(flaz_format_suite);

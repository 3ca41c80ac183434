// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the cleaner's decisions: how it packs the slots it moves
 * (first-fit decreasing into a bounded number of extents, neighbours in block
 * order, exact fits, one unit over, no room), what a move does to a slot (hot
 * ones raw, cooled ones compressed again), which victims stay where they are
 * for a lap more (mostly hit ones), and where stage two sends the oldest
 * extents.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "flaz.h"
#include "format.h"

#define BASE	32U		/* an extent header */
#define SIZE	4096U		/* a 4 KiB extent: 4064 bytes for slots */

static void mv(struct flaz_move *m, u64 block, u32 bytes)
{
	*m = (struct flaz_move) { .block = block, .src = (u32)block * 64, .bytes = bytes };
}

/* Two slots that fill an extent exactly share it; one unit (32 bytes) more does not. */
static void pack_exact_fit(struct kunit *test)
{
	struct flaz_move m[3];
	u32 fill[4];

	mv(&m[0], 7, 2016);
	mv(&m[1], 3, 2048);
	KUNIT_ASSERT_EQ(test, flaz_cleaner_pack(m, 2, BASE, SIZE, 4, fill), 1U);
	/* in one bin, block order: 3 then 7 */
	KUNIT_EXPECT_EQ(test, m[0].block, 3ULL);
	KUNIT_EXPECT_EQ(test, m[0].bin, 0U);
	KUNIT_EXPECT_EQ(test, m[0].off, BASE);
	KUNIT_EXPECT_EQ(test, m[1].off, BASE + 2048);
	KUNIT_EXPECT_EQ(test, m[1].off + m[1].bytes, SIZE);

	mv(&m[0], 7, 2048);
	mv(&m[1], 3, 2048);
	KUNIT_ASSERT_EQ(test, flaz_cleaner_pack(m, 2, BASE, SIZE, 4, fill), 2U);
	KUNIT_EXPECT_NE(test, m[0].bin, m[1].bin);
	KUNIT_EXPECT_EQ(test, m[0].off, BASE);
	KUNIT_EXPECT_EQ(test, m[1].off, BASE);

	/* a slot larger than an extent's room never fits */
	mv(&m[0], 1, SIZE - BASE + 32);
	KUNIT_ASSERT_EQ(test, flaz_cleaner_pack(m, 1, BASE, SIZE, 4, fill), 0U);
	KUNIT_EXPECT_EQ(test, m[0].bin, FLAZ_NO_BIN);
}

/*
 * Decreasing sizes first: the large slots take bins, the small ones fill the
 * gaps they leave (first fit), before a new bin is opened.
 */
static void pack_first_fit_decreasing(struct kunit *test)
{
	/* 3000 + 1000, 2500 + 1500, 2000 + 64: three bins */
	static const u32 sizes[] = { 1000, 2000, 3000, 64, 1500, 2500 };
	struct flaz_move m[6];
	u32 fill[6], used[3] = {}, i, bins;

	for (i = 0; i < 6; i++)
		mv(&m[i], 100 + i, sizes[i]);
	bins = flaz_cleaner_pack(m, 6, 0, 4000, 6, fill);
	KUNIT_ASSERT_EQ(test, bins, 3U);
	for (i = 0; i < 6; i++) {
		KUNIT_ASSERT_LT(test, m[i].bin, 3U);
		used[m[i].bin] += m[i].bytes;
		/* sorted by bin, then block */
		if (i)
			KUNIT_EXPECT_TRUE(test, m[i].bin > m[i - 1].bin ||
					  (m[i].bin == m[i - 1].bin &&
					   m[i].block > m[i - 1].block));
		if (i && m[i].bin == m[i - 1].bin)
			KUNIT_EXPECT_EQ(test, m[i].off, m[i - 1].off + m[i - 1].bytes);
	}
	KUNIT_EXPECT_EQ(test, used[0], 4000U);
	KUNIT_EXPECT_EQ(test, used[1], 4000U);
	KUNIT_EXPECT_EQ(test, used[2], 2064U);
}

/*
 * The window's edge: no more bins than allowed; what does not fit is left out
 * (the smallest, as the largest went first), and the slots that fit keep their
 * offsets within the extent.
 */
static void pack_bin_limit(struct kunit *test)
{
	struct flaz_move m[5];
	u32 fill[2], i, out = 0;

	for (i = 0; i < 5; i++)
		mv(&m[i], i, 1024 + 32 * i);
	/* two bins of 2048: 1152 and 1120 do not share one; 1088 and 1056 neither */
	KUNIT_ASSERT_EQ(test, flaz_cleaner_pack(m, 5, 0, 2048, 2, fill), 2U);
	for (i = 0; i < 5; i++) {
		if (m[i].bin == FLAZ_NO_BIN) {
			out++;
			/* left out ones sort last */
			KUNIT_EXPECT_GE(test, i, 2U);
			continue;
		}
		KUNIT_EXPECT_LE(test, m[i].off + m[i].bytes, 2048U);
	}
	KUNIT_EXPECT_EQ(test, out, 3U);
	KUNIT_EXPECT_EQ(test, flaz_cleaner_pack(m, 5, 0, 2048, 0, fill), 0U);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, m[i].bin, FLAZ_NO_BIN);
	KUNIT_EXPECT_EQ(test, flaz_cleaner_pack(m, 0, 0, 2048, 2, fill), 0U);
}

/*
 * Every flags x hot x room x cold case: only a compressed hot slot goes raw,
 * only a cooled hot one back, only a compressed cold one to the cold codec.
 */
static void recode_transitions(struct kunit *test)
{
	const u8 raw = FLAZ_SLOT_RAW, hot = FLAZ_SLOT_RAW | FLAZ_SLOT_HOT;
	int room, cold;

	for (cold = 0; cold <= 1; cold++) {
		/* compressed: raw when hot with room, cold codec when cool */
		KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(0, true, true, cold), FLAZ_RECODE_HOT);
		KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(0, true, false, cold), FLAZ_RECODE_COPY);
		for (room = 0; room <= 1; room++) {
			KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(0, false, room, cold),
					cold ? FLAZ_RECODE_COLD : FLAZ_RECODE_COPY);
			/* raw because it did not compress: stays raw, hot or not */
			KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(raw, true, room, cold),
					FLAZ_RECODE_COPY);
			KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(raw, false, room, cold),
					FLAZ_RECODE_COPY);
			/* raw because hot: stays while hot, compressed again once cool */
			KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(hot, true, room, cold),
					FLAZ_RECODE_COPY);
			KUNIT_EXPECT_EQ(test, flaz_cleaner_recode(hot, false, room, cold),
					FLAZ_RECODE_COOL);
		}
	}
}

/* hot_max_percent of the raw slots the extents hold, rounded down. */
static void hot_limit(struct kunit *test)
{
	/* (32768 - 32) / 4128 = 7 raw slots per 32 KiB extent */
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(1000, 32768, 10), 700ULL);
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(1000, 32768, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(1000, 32768, 100), 7000ULL);
	/* a 4 KiB extent holds no raw slot: no hot ones at all */
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(1000, 4096, 100), 0ULL);
	/* (262144 - 32) / 4128 = 63: fits the per-extent byte count */
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(3, 262144, 100), 189ULL);
	KUNIT_EXPECT_EQ(test, flaz_cleaner_hot_limit(3, 262144, 1), 1ULL);
}

/* A victim stays when its hit slots fill three quarters of its room or more. */
static void keep_mostly_hit(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, flaz_cleaner_keep(3000, 4000));
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(2999, 4000));
	KUNIT_EXPECT_TRUE(test, flaz_cleaner_keep(4000, 4000));
	/* nothing hit: compacted (its slots dropped), even when much is live */
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(0, 0));
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(0, 100));
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(1, 4000));
	/* all that is live hit, but a quarter of the room or more dead: compacted */
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(4128, 32736));
	/* seven raw slots of a 32 KiB extent, all hit: kept */
	KUNIT_EXPECT_TRUE(test, flaz_cleaner_keep(7 * 4128, 32736));
	/* no overflow at the largest extents */
	KUNIT_EXPECT_TRUE(test, flaz_cleaner_keep(U32_MAX, U32_MAX));
	KUNIT_EXPECT_FALSE(test, flaz_cleaner_keep(U32_MAX / 2, U32_MAX));
}

/*
 * Stage two: only a hit extent within a lap is passed over; three quarters of
 * its 4064 bytes for slots live (3048) takes it to main's tail, less to its
 * FIFO's head while the window has room, else it goes.
 */
static void stage_two_fate(struct kunit *test)
{
	u32 room = SIZE - BASE;

	/* out of the lap (or compaction off), or not hit: evicted, however live */
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(false, true, room, room, true), FLAZ_FATE_EVICT);
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, false, room, room, true), FLAZ_FATE_EVICT);
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, true, 3048, room, false), FLAZ_FATE_TAIL);
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, true, room, room, false), FLAZ_FATE_TAIL);
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, true, 3047, room, true), FLAZ_FATE_HEAD);
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, true, 0, room, true), FLAZ_FATE_HEAD);
	/* the window full: a hit extent not mostly live goes too */
	KUNIT_EXPECT_EQ(test, flaz_stage_two_fate(true, true, 3047, room, false), FLAZ_FATE_EVICT);
}

/*
 * The watermarks in free extents: a percent of them up to a cap of bytes for
 * the low level, the high one scaled with it.
 */
static void watermark_levels(struct kunit *test)
{
	static const struct {
		u32 total, extent_bytes, low_pct, high_pct;
		u64 cap;
		u32 low, high;
	} cases[] = {
		/* 128 MiB of 32 KiB extents: 2% = 81, 3% = 122; far under 1 GiB */
		{ 4096, 32768, 2, 3, SZ_1G, 81, 122 },
		/* 1 TiB: 2% would be 671,088 (20.5 GiB); 1,006,632 * 32,768 / 671,088 */
		{ 33554432, 32768, 2, 3, SZ_1G, 32768, 49152 },
		/* 50 GiB: 2% is 32,768, the cap exactly, so both stay */
		{ 1638400, 32768, 2, 3, SZ_1G, 32768, 49152 },
		/* the defaults, 1 and 2%: 128 MiB; 100 GiB, the cap exactly; 1 TiB, capped */
		{ 4096, 32768, 1, 2, SZ_1G, 40, 81 },
		{ 3276800, 32768, 1, 2, SZ_1G, 32768, 65536 },
		{ 33554432, 32768, 1, 2, SZ_1G, 32768, 65536 },
		/* 4 TiB of 256 KiB extents at 50/99%: 4,096, and 16,609,443 / 2,048 */
		{ 16777216, 262144, 50, 99, SZ_1G, 4096, 8110 },
		/* a cap under one extent: none kept free (alloc.c reclaims one at least) */
		{ 1024, 16384, 2, 3, 8192, 0, 0 },
		/* the e2e check's: 4 where 2% is 20, and 30 * 4 / 20 */
		{ 1024, 16384, 2, 3, 65536, 4, 6 },
	};
	u32 i, low, high;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		flaz_watermark_levels(cases[i].total, cases[i].extent_bytes, cases[i].low_pct,
				      cases[i].high_pct, cases[i].cap, &low, &high);
		KUNIT_EXPECT_EQ_MSG(test, low, cases[i].low, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, high, cases[i].high, "case %u", i);
	}
}

static struct kunit_case cleaner_cases[] = {
	KUNIT_CASE(pack_exact_fit),
	KUNIT_CASE(pack_first_fit_decreasing),
	KUNIT_CASE(pack_bin_limit),
	KUNIT_CASE(recode_transitions),
	KUNIT_CASE(hot_limit),
	KUNIT_CASE(keep_mostly_hit),
	KUNIT_CASE(stage_two_fate),
	KUNIT_CASE(watermark_levels),
	{}
};

static struct kunit_suite cleaner_suite = {
	.name = "flaz_cleaner",
	.test_cases = cleaner_cases,
};

kunit_test_suite(cleaner_suite);

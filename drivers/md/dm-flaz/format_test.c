// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the on-SSD layout: size boundaries, alignment, metadata room.
 */
#include <kunit/test.h>

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
 * table fits its area, and the SSD has no room for one more extent.
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
		/* Two extents' more space always makes room for at least one more extent. */
		KUNIT_ASSERT_EQ(test, flaz_geometry_init(&more, s + g.extent_sectors * 2, 32, 200), 0);
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

static struct kunit_case flaz_format_cases[] = {
	KUNIT_CASE(geometry_min_boundary),
	KUNIT_CASE(geometry_bad_params),
	KUNIT_CASE(geometry_layout_invariants),
	KUNIT_CASE(geometry_overhead_large),
	{}
};

static struct kunit_suite flaz_format_suite = {
	.name = "flaz_format",
	.test_cases = flaz_format_cases,
};
kunit_test_suite(flaz_format_suite);

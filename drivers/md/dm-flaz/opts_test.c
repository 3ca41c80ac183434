// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the table options: defaults, every key, every range boundary,
 * malformed groups, emission round trips and online tunables.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "flaz.h"

/* Parse the words of @line as an option group; *left gets the words after it. */
static int parse_line(struct kunit *test, const char *line, struct flaz_opts *o,
		      char **error, unsigned int *left)
{
	struct dm_arg_set as;
	char **argv;
	int argc, r;

	argv = argv_split(GFP_KERNEL, line, &argc);
	KUNIT_ASSERT_NOT_NULL(test, argv);
	as.argc = argc;
	as.argv = argv;
	*error = NULL;
	r = flaz_opts_parse(o, &as, error);
	if (left)
		*left = as.argc;
	argv_free(argv);
	return r;
}

static void emit(const struct flaz_opts *o, char *buf, unsigned int len)
{
	unsigned int sz = 0;

	flaz_opts_emit(o, buf, len, &sz);
}

static void opts_defaults(struct kunit *test)
{
	struct flaz_opts o;
	char *error, buf[64];
	unsigned int left;

	KUNIT_ASSERT_EQ(test, parse_line(test, "0", &o, &error, &left), 0);
	KUNIT_EXPECT_EQ(test, left, 0U);
	KUNIT_EXPECT_EQ(test, o.set, 0UL);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COMPRESSOR], (unsigned int)FLAZ_CODEC_LZ4);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_EXTENT_KIB], 32U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_OVERBOOK], 200U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_LOW_WATERMARK], 1U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_HIGH_WATERMARK], 2U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_SEQ_CUTOFF_KIB], 4096U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COMPRESS_MIN_SAVING], 10U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_HOT_UNCOMPRESSED], 0U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COLD], 0U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_SSD_HOLD_S], 30U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_TABLE_CACHE_KIB], 0U);
	emit(&o, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "0");
}

/* Every option but table_cache_kib and probation_percent, in canonical order */
#define ALL_OPTS							\
	"25 compressor zstd extent_kib 64 overbook 300 low_watermark 5 "	\
	"high_watermark 50 seq_cutoff_kib 1024 compress_min_saving 20 "	\
	"hot_uncompressed 1 ssd_hold_s 60 cleaner_rate_mib 0 "		\
	"hot_max_percent 5 cold_compressor deflate cold"

static void opts_all_round_trip(struct kunit *test)
{
	static const char line[] = ALL_OPTS;
	struct flaz_opts o;
	char *error, buf[256];

	KUNIT_ASSERT_EQ(test, parse_line(test, line, &o, &error, NULL), 0);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COMPRESSOR], (unsigned int)FLAZ_CODEC_ZSTD);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_EXTENT_KIB], 64U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_HOT_MAX_PERCENT], 5U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COLD_COMPRESSOR], FLAZ_CODEC_DEFLATE + 1U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_COLD], 1U);
	emit(&o, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, line);
}

/* Only the options given come back, in canonical order and spelling. */
static void opts_emit_only_set(struct kunit *test)
{
	struct flaz_opts o;
	char *error, buf[128];

	KUNIT_ASSERT_EQ(test, parse_line(test, "3 cold Compressor lzo", &o, &error, NULL), 0);
	emit(&o, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "3 compressor lzo cold");
}

static void opts_boundaries_accepted(struct kunit *test)
{
	static const char * const good[] = {
		"2 extent_kib 4", "2 extent_kib 256", "2 overbook 100", "2 overbook 1000",
		"4 low_watermark 98 high_watermark 99", "4 low_watermark 1 high_watermark 2",
		"2 seq_cutoff_kib 1048576", "2 compress_min_saving 0",
		"2 compress_min_saving 100", "2 compressor deflate", "2 hot_uncompressed 0",
		"2 cleaner_rate_mib 0", "2 cleaner_rate_mib 65536", "2 hot_max_percent 0",
		"2 hot_max_percent 100", "2 cold_compressor none", "2 cold_compressor lzo",
		"2 ssd_hold_s 1", "2 ssd_hold_s 3600", "2 table_cache_kib 0",
		"2 table_cache_kib 1073741824", "2 probation_percent 0", "2 probation_percent 50",
	};
	struct flaz_opts o;
	char *error;
	int i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		KUNIT_EXPECT_EQ_MSG(test, parse_line(test, good[i], &o, &error, NULL), 0,
				    "refused: %s (%s)", good[i], error);
}

static void opts_bad_refused(struct kunit *test)
{
	static const char * const bad[] = {
		"2 compressor gzip", "2 compressor LZ4", "2 extent_kib 2", "2 extent_kib 3",
		"2 extent_kib 48", "2 extent_kib 512", "2 overbook 99", "2 overbook 1001",
		"2 overbook 12x", "2 overbook -1", "2 overbook", "2 low_watermark 0",
		"2 high_watermark 100", "2 hot_uncompressed 2", "2 seq_cutoff_kib 1048577",
		"2 compress_min_saving 101", "1 compressor", "2 bogus 1",
		"2 cleaner_rate_mib 65537",
		"2 hot_max_percent 101", "2 cold_compressor gzip", "2 cold_compressor 1",
		"2 cold_compressor NONE", "2 ssd_hold_s 0", "2 ssd_hold_s 3601",
		"2 table_cache_kib 1073741825", "2 table_cache_kib -1", "2 probation_percent 51",
		"2 cold cold", "4 overbook 200 overbook 300",
		"4 low_watermark 20 high_watermark 20", "2 low_watermark 30",
		"3 overbook 200", "23 a b c d e f g h i j k l m n o p q r s t u v w", "x",
	};
	struct flaz_opts o;
	char *error;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, parse_line(test, bad[i], &o, &error, NULL), -EINVAL,
				    "accepted: %s", bad[i]);
		KUNIT_EXPECT_NOT_NULL_MSG(test, error, "no reason for: %s", bad[i]);
	}
}

/* The group ends where its count says; the ctr refuses what follows. */
static void opts_leaves_rest(struct kunit *test)
{
	struct flaz_opts o;
	char *error;
	unsigned int left;

	KUNIT_ASSERT_EQ(test, parse_line(test, "2 overbook 400 extra", &o, &error, &left), 0);
	KUNIT_EXPECT_EQ(test, left, 1U);
	KUNIT_EXPECT_EQ(test, o.val[FLAZ_OPT_OVERBOOK], 400U);
}

static void opts_tunables(struct kunit *test)
{
	struct flaz_opts o;
	char *error, buf[128];

	KUNIT_ASSERT_EQ(test, parse_line(test, "0", &o, &error, NULL), 0);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "seq_cutoff_kib", "1024", &error), 0);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_SEQ_CUTOFF_KIB), 1024U);
	emit(&o, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "2 seq_cutoff_kib 1024");

	/* Watermarks are checked against each other's current value. */
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "low_watermark", "20", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "high_watermark", "60", &error), 0);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "low_watermark", "50", &error), 0);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_LOW_WATERMARK), 50U);

	/* the hold and the table's budget change online, within their ranges */
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "ssd_hold_s", "5", &error), 0);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_SSD_HOLD_S), 5U);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "ssd_hold_s", "0", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_SSD_HOLD_S), 5U);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "table_cache_kib", "65536", &error), 0);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_TABLE_CACHE_KIB), 65536U);

	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "compressor", "lzo", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "extent_kib", "64", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "cold", "1", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "nosuch", "1", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opts_set_tunable(&o, "hot_uncompressed", "2", &error), -EINVAL);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_HOT_UNCOMPRESSED), 0U);
	KUNIT_EXPECT_EQ(test, flaz_opt_get(&o, FLAZ_OPT_COMPRESSOR), (unsigned int)FLAZ_CODEC_LZ4);
}

static struct kunit_case flaz_opts_cases[] = {
	KUNIT_CASE(opts_defaults),
	KUNIT_CASE(opts_all_round_trip),
	KUNIT_CASE(opts_emit_only_set),
	KUNIT_CASE(opts_boundaries_accepted),
	KUNIT_CASE(opts_bad_refused),
	KUNIT_CASE(opts_leaves_rest),
	KUNIT_CASE(opts_tunables),
	{}
};

static struct kunit_suite flaz_opts_suite = {
	.name = "flaz_opts",
	.test_cases = flaz_opts_cases,
};

kunit_test_suite(flaz_opts_suite);

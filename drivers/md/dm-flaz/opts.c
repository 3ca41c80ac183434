// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz table options: parsing, validation, emission back as a table line,
 * and the subset that messages may change online.
 */
#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "flaz.h"
#include "format.h"
#include "opts.h"

/* What one option accepts; error is the whole ctr/message reason for a bad value. */
struct opt_desc {
	const char *name;
	unsigned int min, max, def;
	bool online;	/* a message may change it */
	bool flag;	/* a bare word without a value */
	bool pow2;
	const char *error;
};

static const struct opt_desc descs[FLAZ_NR_OPTS] = {
	[FLAZ_OPT_COMPRESSOR] = {
		.name = "compressor", .max = FLAZ_NR_CODECS - 1, .def = FLAZ_CODEC_LZ4,
		.error = "compressor must be lzo, lz4, zstd or deflate" },
	[FLAZ_OPT_EXTENT_KIB] = {
		.name = "extent_kib", .min = FLAZ_MIN_EXTENT_KIB, .max = FLAZ_MAX_EXTENT_KIB,
		.def = FLAZ_DEF_EXTENT_KIB, .pow2 = true,
		.error = "extent_kib must be a power of two from 4 to 256" },
	[FLAZ_OPT_OVERBOOK] = {
		.name = "overbook", .min = FLAZ_MIN_OVERBOOK, .max = FLAZ_MAX_OVERBOOK,
		.def = FLAZ_DEF_OVERBOOK,
		.error = "overbook must be a percentage from 100 to 1000" },
	[FLAZ_OPT_LOW_WATERMARK] = {
		.name = "low_watermark", .min = FLAZ_MIN_LOW_WATERMARK,
		.max = FLAZ_MAX_LOW_WATERMARK, .def = FLAZ_DEF_LOW_WATERMARK, .online = true,
		.error = "low_watermark must be a percentage from 1 to 98" },
	[FLAZ_OPT_HIGH_WATERMARK] = {
		.name = "high_watermark", .min = FLAZ_MIN_HIGH_WATERMARK,
		.max = FLAZ_MAX_HIGH_WATERMARK, .def = FLAZ_DEF_HIGH_WATERMARK, .online = true,
		.error = "high_watermark must be a percentage from 2 to 99" },
	[FLAZ_OPT_SEQ_CUTOFF_KIB] = {
		.name = "seq_cutoff_kib", .max = FLAZ_MAX_SEQ_CUTOFF_KIB,
		.def = FLAZ_DEF_SEQ_CUTOFF_KIB, .online = true,
		.error = "seq_cutoff_kib must be from 0 (off) to 1048576" },
	[FLAZ_OPT_COMPRESS_MIN_SAVING] = {
		.name = "compress_min_saving", .max = FLAZ_MAX_COMPRESS_MIN_SAVING,
		.def = FLAZ_DEF_COMPRESS_MIN_SAVING, .online = true,
		.error = "compress_min_saving must be a percentage from 0 to 100" },
	[FLAZ_OPT_HOT_UNCOMPRESSED] = {
		.name = "hot_uncompressed", .max = 1, .online = true,
		.error = "hot_uncompressed must be 0 or 1" },
	[FLAZ_OPT_SSD_HOLD_S] = {
		.name = "ssd_hold_s", .min = FLAZ_MIN_SSD_HOLD_S, .max = FLAZ_MAX_SSD_HOLD_S,
		.def = FLAZ_DEF_SSD_HOLD_S, .online = true,
		.error = "ssd_hold_s must be from 1 to 3600 seconds" },
	[FLAZ_OPT_CLEANER_RATE_MIB] = {
		.name = "cleaner_rate_mib", .max = FLAZ_MAX_CLEANER_RATE_MIB,
		.def = FLAZ_DEF_CLEANER_RATE_MIB, .online = true,
		.error = "cleaner_rate_mib must be from 0 (off) to 65536" },
	[FLAZ_OPT_HOT_MAX_PERCENT] = {
		.name = "hot_max_percent", .max = FLAZ_MAX_HOT_MAX_PERCENT,
		.def = FLAZ_DEF_HOT_MAX_PERCENT, .online = true,
		.error = "hot_max_percent must be a percentage from 0 to 100" },
	[FLAZ_OPT_COLD_COMPRESSOR] = {
		.name = "cold_compressor", .max = FLAZ_NR_CODECS, .def = FLAZ_COLD_NONE,
		.error = "cold_compressor must be none, lzo, lz4, zstd or deflate" },
	[FLAZ_OPT_COLD] = {
		.name = "cold", .max = 1, .flag = true },
	[FLAZ_OPT_TABLE_CACHE_KIB] = {
		.name = "table_cache_kib", .max = FLAZ_MAX_TABLE_CACHE_KIB, .online = true,
		.error = "table_cache_kib must be from 0 (by the SSD's size) to 1073741824" },
	[FLAZ_OPT_PROBATION_PERCENT] = {
		.name = "probation_percent", .max = FLAZ_MAX_PROBATION_PERCENT,
		.def = FLAZ_DEF_PROBATION_PERCENT, .online = true,
		.error = "probation_percent must be a percentage from 0 (off) to 50" },
};

/* The options above by name, in order: what an unknown one's error lists. */
#define KNOWN_OPTS							\
	"compressor extent_kib overbook low_watermark high_watermark "	\
	"seq_cutoff_kib compress_min_saving hot_uncompressed ssd_hold_s "	\
	"cleaner_rate_mib hot_max_percent cold_compressor cold "		\
	"table_cache_kib probation_percent"

static const char * const codec_names[FLAZ_NR_CODECS] = {
	[FLAZ_CODEC_LZO] = "lzo",
	[FLAZ_CODEC_LZ4] = "lz4",
	[FLAZ_CODEC_ZSTD] = "zstd",
	[FLAZ_CODEC_DEFLATE] = "deflate",
};

const char *flaz_codec_name(enum flaz_codec c)
{
	return codec_names[c];
}
EXPORT_SYMBOL_IF_KUNIT(flaz_codec_name);

static int find_opt(const char *key)
{
	int i;

	for (i = 0; i < FLAZ_NR_OPTS; i++)
		if (!strcasecmp(key, descs[i].name))
			return i;
	return -ENOENT;
}

/*
 * Convert and range-check one value; the compressors take a name (the cold one
 * also "none", stored as 0, a codec as its number + 1), the rest numbers.
 */
static int parse_value(enum flaz_opt opt, const char *s, unsigned int *v)
{
	const struct opt_desc *d = &descs[opt];
	int r;

	if (opt == FLAZ_OPT_COLD_COMPRESSOR && !strcmp(s, "none")) {
		*v = FLAZ_COLD_NONE;
		return 0;
	}
	if (opt == FLAZ_OPT_COMPRESSOR || opt == FLAZ_OPT_COLD_COMPRESSOR) {
		r = match_string(codec_names, FLAZ_NR_CODECS, s);
		if (r < 0)
			return -EINVAL;
		*v = opt == FLAZ_OPT_COLD_COMPRESSOR ? r + 1 : r;
		return 0;
	}
	if (kstrtouint(s, 10, v) || *v < d->min || *v > d->max)
		return -EINVAL;
	if (d->pow2 && !is_power_of_2(*v))
		return -EINVAL;
	return 0;
}

/* The cleaner needs a gap between its start and stop points. */
static int check_watermarks(unsigned int low, unsigned int high, char **error)
{
	if (low >= high) {
		*error = "low_watermark must be below high_watermark";
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse "<#opt args> [key value | cold]..." from @as into @o, defaults first.
 * Each key at most once; keys are case-insensitive. Leaves @as after the group.
 */
int flaz_opts_parse(struct flaz_opts *o, struct dm_arg_set *as, char **error)
{
	static const struct dm_arg group = {
		0, 2 * FLAZ_NR_OPTS, "Invalid number of optional arguments"
	};
	unsigned int argc, v;
	const char *key;
	int i, r;

	o->set = 0;
	for (i = 0; i < FLAZ_NR_OPTS; i++)
		o->val[i] = descs[i].def;

	r = dm_read_arg_group(&group, as, &argc, error);
	if (r)
		return r;

	while (argc--) {
		key = dm_shift_arg(as);
		i = find_opt(key);
		if (i < 0) {
			*error = "Unknown option (known: " KNOWN_OPTS ")";
			return -EINVAL;
		}
		if (o->set & BIT(i)) {
			*error = "Option given more than once";
			return -EINVAL;
		}
		if (descs[i].flag) {
			v = 1;
		} else {
			if (!argc || parse_value(i, dm_shift_arg(as), &v)) {
				*error = (char *)descs[i].error;
				return -EINVAL;
			}
			argc--;
		}
		o->val[i] = v;
		o->set |= BIT(i);
	}
	return check_watermarks(o->val[FLAZ_OPT_LOW_WATERMARK],
				o->val[FLAZ_OPT_HIGH_WATERMARK], error);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_opts_parse);

/* Words flaz_opts_emit() prints after the count: a flag is one, a pair two. */
static unsigned int count_words(unsigned long set)
{
	unsigned int i, n = 0;

	for (i = 0; i < FLAZ_NR_OPTS; i++)
		if (set & BIT(i))
			n += descs[i].flag ? 1 : 2;
	return n;
}

/* Emit "<#words> key value..." for the options that were set, as the ctr takes them. */
void flaz_opts_emit(const struct flaz_opts *o, char *result, unsigned int maxlen,
		    unsigned int *sz_p)
{
	unsigned long set = READ_ONCE(o->set);
	unsigned int sz = *sz_p;
	unsigned int i, v;

	DMEMIT("%u", count_words(set));
	for (i = 0; i < FLAZ_NR_OPTS; i++) {
		if (!(set & BIT(i)))
			continue;
		v = flaz_opt_get(o, i);
		if (descs[i].flag)
			DMEMIT(" %s", descs[i].name);
		else if (i == FLAZ_OPT_COMPRESSOR)
			DMEMIT(" %s %s", descs[i].name, codec_names[v]);
		else if (i == FLAZ_OPT_COLD_COMPRESSOR)
			DMEMIT(" %s %s", descs[i].name, v ? codec_names[v - 1] : "none");
		else
			DMEMIT(" %s %u", descs[i].name, v);
	}
	*sz_p = sz;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_opts_emit);

/*
 * Change one tunable online (a message). The caller serialises setters; readers
 * on the I/O path see either the old or the new value.
 */
int flaz_opts_set_tunable(struct flaz_opts *o, const char *key, const char *value,
			  char **error)
{
	unsigned int v, low, high;
	int i = find_opt(key);

	if (i < 0) {
		*error = "unknown key";
		return -EINVAL;
	}
	if (!descs[i].online) {
		*error = "this option can only be changed by reloading the table";
		return -EINVAL;
	}
	if (parse_value(i, value, &v)) {
		*error = (char *)descs[i].error;
		return -EINVAL;
	}
	low = i == FLAZ_OPT_LOW_WATERMARK ? v : o->val[FLAZ_OPT_LOW_WATERMARK];
	high = i == FLAZ_OPT_HIGH_WATERMARK ? v : o->val[FLAZ_OPT_HIGH_WATERMARK];
	if (check_watermarks(low, high, error))
		return -EINVAL;
	WRITE_ONCE(o->val[i], v);
	WRITE_ONCE(o->set, o->set | BIT(i));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_opts_set_tunable);

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl set and get: a live volume's tunables. set checks the key and the
 * value's range as the kernel would, then sends the message; the kernel alone
 * checks what depends on the other live values (the watermarks' order) and
 * logs why it refuses. get reads the options back from the table line, which
 * holds those that were set; the others have the kernel's defaults. Keys are
 * taken with dashes or underscores and printed with dashes, as create and
 * flaztab spell them; the kernel's table and messages spell them with
 * underscores.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"
#include "jsonout.h"
#include "format.h"
#include "kmsg.h"
#include "opts.h"

/* A table option: its range, its default and whether a message may change it (opts.c). */
struct tunable {
	const char *key;
	unsigned long min, max, def;
	bool online;
	const char *def_text;	/* the default of a word option */
};

static const struct tunable tunables[] = {
	{ .key = "compressor", .def_text = "lz4" },
	{ .key = "extent_kib", .min = FLAZ_MIN_EXTENT_KIB, .max = FLAZ_MAX_EXTENT_KIB,
	  .def = FLAZ_DEF_EXTENT_KIB },
	{ .key = "overbook", .min = FLAZ_MIN_OVERBOOK, .max = FLAZ_MAX_OVERBOOK,
	  .def = FLAZ_DEF_OVERBOOK },
	{ .key = "low_watermark", .min = FLAZ_MIN_LOW_WATERMARK, .max = FLAZ_MAX_LOW_WATERMARK,
	  .def = FLAZ_DEF_LOW_WATERMARK, .online = true },
	{ .key = "high_watermark", .min = FLAZ_MIN_HIGH_WATERMARK, .max = FLAZ_MAX_HIGH_WATERMARK,
	  .def = FLAZ_DEF_HIGH_WATERMARK, .online = true },
	{ .key = "seq_cutoff_kib", .max = FLAZ_MAX_SEQ_CUTOFF_KIB, .online = true },
	{ .key = "compress_min_saving", .max = FLAZ_MAX_COMPRESS_MIN_SAVING,
	  .def = FLAZ_DEF_COMPRESS_MIN_SAVING, .online = true },
	{ .key = "hot_uncompressed", .max = 1, .online = true },
	{ .key = "ssd_hold_s", .min = FLAZ_MIN_SSD_HOLD_S, .max = FLAZ_MAX_SSD_HOLD_S,
	  .def = FLAZ_DEF_SSD_HOLD_S, .online = true },
	{ .key = "cleaner_rate_mib", .max = FLAZ_MAX_CLEANER_RATE_MIB,
	  .def = FLAZ_DEF_CLEANER_RATE_MIB, .online = true },
	{ .key = "hot_max_percent", .max = FLAZ_MAX_HOT_MAX_PERCENT,
	  .def = FLAZ_DEF_HOT_MAX_PERCENT, .online = true },
	{ .key = "cold_compressor", .def_text = "none" },
	{ .key = "table_cache_kib", .max = FLAZ_MAX_TABLE_CACHE_KIB, .online = true },
	{ .key = "probation_percent", .max = FLAZ_MAX_PROBATION_PERCENT,
	  .def = FLAZ_DEF_PROBATION_PERCENT, .online = true },
};

#define NR_TUNABLES (sizeof(tunables) / sizeof(tunables[0]))
#define ONLINE_KEYS "low-watermark, high-watermark, seq-cutoff-kib, compress-min-saving, " \
		    "hot-uncompressed, ssd-hold-s, cleaner-rate-mib, hot-max-percent, table-cache-kib, " \
		    "probation-percent"

/* Longer than any key. */
#define KEY_LEN 32

static const struct tunable *find_tunable(const char *key)
{
	size_t i;

	for (i = 0; i < NR_TUNABLES; i++)
		if (opt_name_eq(key, tunables[i].key))
			return &tunables[i];
	return NULL;
}

/* @t's key as flazctl prints it: with dashes. */
static const char *dashed(const struct tunable *t, char buf[KEY_LEN])
{
	size_t i;

	for (i = 0; t->key[i] && i + 1 < KEY_LEN; i++)
		buf[i] = t->key[i] == '_' ? '-' : t->key[i];
	buf[i] = '\0';
	return buf;
}

/* Key and value as the kernel would take them; EXIT_OK or EXIT_USAGE. */
static int check_setting(const char *key, const char *value)
{
	const struct tunable *t = find_tunable(key);
	char name[KEY_LEN];
	unsigned long v;

	if (!t)
		return fail(EXIT_USAGE, "unknown key '%s' (one of " ONLINE_KEYS ")", key);
	dashed(t, name);
	if (!t->online)
		return fail(EXIT_USAGE, "%s cannot change on a live volume: re-create it with flazctl create --%s",
			    name, name);
	if (!parse_bounded(value, &v))
		return fail(EXIT_USAGE, "%s: '%s' is not a number", name, value);
	if (v < t->min || v > t->max)
		return fail(EXIT_USAGE, "%s must be from %lu to %lu, not %s", name, t->min, t->max,
			    value);
	return EXIT_OK;
}

/* The kernel logs "<dev>: message <key>: <reason>": the reason alone, or all of it. */
static const char *message_reason(const char *logged)
{
	const char *m = strstr(logged, ": message ");

	m = m ? strstr(m + strlen(": message "), ": ") : NULL;
	return m ? m + 2 : logged;
}

int cmd_set(int argc, char **argv)
{
	struct flaz_vol vol;
	char msg[128], reason[512], name[KEY_LEN];
	const struct tunable *t;
	int kfd, r;

	if (argc > 1 && argv[1][0] == '-')
		return fail(EXIT_USAGE, "unknown option %s", argv[1]);
	if (argc != 4)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("set"));
	r = check_name(argv[1]);
	if (!r)
		r = check_setting(argv[2], argv[3]);
	if (!r)
		r = live_volume(argv[1], &vol);
	if (r)
		return r;
	flaz_vol_free(&vol);
	/* the kernel's spelling */
	t = find_tunable(argv[2]);
	snprintf(msg, sizeof(msg), "%s %s", t->key, argv[3]);
	dashed(t, name);
	kfd = kmsg_open();
	if (!dm_message(argv[1], msg)) {
		if (kmsg_flaz_reason(kfd, reason, sizeof(reason)))
			r = fail(EXIT_FAIL, "kernel refused %s %s: %s", name, argv[3],
				 message_reason(reason));
		else
			r = fail(EXIT_FAIL, "kernel refused %s %s: %s (see dmesg)", name, argv[3],
				 dm_last_error());
	}
	kmsg_close(kfd);
	return r;
}

/* The options of table params "<hdd> <ssd> <#words> key value... [cold]", defaults filled in. */
static bool table_options(char *params, const char *value[NR_TUNABLES])
{
	char *save = NULL, *w, *v;
	const struct tunable *t;
	size_t i;

	for (i = 0; i < NR_TUNABLES; i++)
		value[i] = NULL;
	if (!strtok_r(params, " ", &save) || !strtok_r(NULL, " ", &save) ||
	    !strtok_r(NULL, " ", &save))
		return false;
	while ((w = strtok_r(NULL, " ", &save))) {
		if (!strcmp(w, "cold"))
			continue;
		v = strtok_r(NULL, " ", &save);
		t = find_tunable(w);
		if (!v || !t)
			return false;
		value[t - tunables] = v;
	}
	return true;
}

int cmd_get(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *value[NR_TUNABLES], *name, *key = NULL;
	char defaults[NR_TUNABLES][24];
	const struct tunable *only = NULL;
	char kname[KEY_LEN];
	struct flaz_vol vol;
	struct json_object *o;
	bool json = false;
	size_t i;
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c != 'j')
			return bad_option(argv);
		json = true;
	}
	if (optind >= argc || argc - optind > 2)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("get"));
	name = argv[optind];
	if (argc - optind == 2) {
		key = argv[optind + 1];
		only = find_tunable(key);
		if (!only)
			return fail(EXIT_USAGE, "unknown key '%s' (one of compressor, extent-kib, overbook, " ONLINE_KEYS
				    ", cold-compressor)",
				    key);
	}
	r = check_name(name);
	if (!r)
		r = live_volume(name, &vol);
	if (r)
		return r;
	if (!table_options(vol.table, value)) {
		flaz_vol_free(&vol);
		return fail(EXIT_FAIL, "cannot read the options of %s's table", name);
	}
	for (i = 0; i < NR_TUNABLES; i++) {
		if (value[i])
			continue;
		if (tunables[i].def_text)
			snprintf(defaults[i], sizeof(defaults[i]), "%s", tunables[i].def_text);
		else
			snprintf(defaults[i], sizeof(defaults[i]), "%lu", tunables[i].def);
		value[i] = defaults[i];
	}
	o = json ? jobj() : NULL;
	for (i = 0; i < NR_TUNABLES; i++) {
		if (only && only != &tunables[i])
			continue;
		if (json)
			jadd(o, dashed(&tunables[i], kname), jnum(value[i]));
		else if (only)
			puts(value[i]);
		else
			printf("%s=%s\n", dashed(&tunables[i], kname), value[i]);
	}
	if (json)
		jput(o);
	flaz_vol_free(&vol);
	return EXIT_OK;
}

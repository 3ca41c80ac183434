// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl status: a flaz volume's status line, for people or as JSON. The
 * kernel's status is "key=value ..." with keys that may be added over time, so
 * every pair is shown as it comes; only the derived lines know key names.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"

/* One status word: "key=value", or a bare "key" (value NULL). */
struct pair {
	const char *key;
	const char *value;
};

struct pairs {
	struct pair *v;
	size_t n;
};

/* A volume's devices, as /dev names when sysfs knows them. */
struct vol_devices {
	char hdd[256];
	char ssd[256];
};

#define DERIVED_HIT_RATIO "hit ratio"

/* Split @s in place into pairs; the pairs point into @s. */
static bool split_pairs(char *s, struct pairs *p)
{
	char *save = NULL, *w, *eq;

	p->n = 0;
	p->v = calloc(strlen(s) / 2 + 1, sizeof(*p->v));
	if (!p->v)
		return false;
	for (w = strtok_r(s, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		eq = strchr(w, '=');
		if (eq)
			*eq = '\0';
		p->v[p->n++] = (struct pair){ w, eq ? eq + 1 : NULL };
	}
	return true;
}

/* The value of @key, or NULL. */
static const char *pair_value(const struct pairs *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].value;
	return NULL;
}

/* Whether @s is all digits (and not empty), so it can be used as a count. */
static bool is_count(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

/* "/dev/<DEVNAME>" for block device "maj:min" from sysfs, else "maj:min" itself. */
static void resolve_device(const char *majmin, char *buf, size_t len)
{
	char path[96], line[256];
	FILE *f;

	snprintf(buf, len, "%s", majmin);
	if (strspn(majmin, "0123456789:") != strlen(majmin))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", majmin);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "/dev/%s", line + 8);
	}
	fclose(f);
}

/* The HDD and SSD are the first two words of the table params. */
static void table_devices(const char *table, struct vol_devices *d)
{
	char hdd[64] = "?", ssd[64] = "?";

	sscanf(table, "%63s %63s", hdd, ssd);
	resolve_device(hdd, d->hdd, sizeof(d->hdd));
	resolve_device(ssd, d->ssd, sizeof(d->ssd));
}

/* Read hits over all 4 KiB reads, in percent; "-" before the first read. */
static bool hit_ratio(const struct pairs *p, char *buf, size_t len)
{
	const char *hits = pair_value(p, "read_hits");
	const char *misses = pair_value(p, "read_misses");
	double h, m;

	if (!is_count(hits) || !is_count(misses))
		return false;
	h = strtod(hits, NULL);
	m = strtod(misses, NULL);
	if (h + m == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * h / (h + m));
	return true;
}

/* The header, then one aligned "key  value" line per pair and the derived lines. */
static void print_human(const char *name, const struct vol_devices *d, const struct pairs *p)
{
	int width = (int)strlen(DERIVED_HIT_RATIO);
	char ratio[32];
	size_t i;

	for (i = 0; i < p->n; i++)
		if ((int)strlen(p->v[i].key) > width)
			width = (int)strlen(p->v[i].key);
	printf("%s: %s -> cache %s\n", name, d->hdd, d->ssd);
	for (i = 0; i < p->n; i++) {
		if (p->v[i].value)
			printf("  %-*s  %s\n", width, p->v[i].key, p->v[i].value);
		else
			printf("  %s\n", p->v[i].key);
	}
	if (hit_ratio(p, ratio, sizeof(ratio)))
		printf("  %-*s  %s\n", width, DERIVED_HIT_RATIO, ratio);
}

/* Whether @s is a valid JSON number of the kinds the kernel prints: 12, 0, 2.03. */
static bool json_number(const char *s)
{
	size_t int_len = strspn(s, "0123456789");

	if (!int_len || (s[0] == '0' && int_len > 1))
		return false;
	s += int_len;
	if (*s == '.')
		return is_count(s + 1);
	return !*s;
}

/* One status value: a number when it is one, true for a bare word, else a string. */
static void json_value(const char *v)
{
	if (!v)
		fputs("true", stdout);
	else if (json_number(v))
		fputs(v, stdout);
	else
		json_string(v);
}

/* One JSON object on one line; see flazctl(8) for its fields. */
static void print_json(const char *name, const struct vol_devices *d,
		       const struct flaz_vol *vol, const struct pairs *p)
{
	size_t i;

	fputs("{\"name\":", stdout);
	json_string(name);
	fputs(",\"hdd\":", stdout);
	json_string(d->hdd);
	fputs(",\"ssd\":", stdout);
	json_string(d->ssd);
	printf(",\"size_sectors\":%" PRIu64 ",\"table\":", vol->sectors);
	json_string(vol->table);
	fputs(",\"status\":{", stdout);
	for (i = 0; i < p->n; i++) {
		if (i)
			putchar(',');
		json_string(p->v[i].key);
		putchar(':');
		json_value(p->v[i].value);
	}
	fputs("}}\n", stdout);
}

/* Parse "status NAME [--json]"; EXIT_OK or EXIT_USAGE. */
static int parse_status(int argc, char **argv, const char **name, bool *json)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c != 'j')
			return bad_option(argv);
		*json = true;
	}
	if (optind + 1 != argc)
		return fail(EXIT_USAGE, "usage: flazctl status NAME [--json]");
	*name = argv[optind];
	return check_name(*name);
}

int cmd_status(int argc, char **argv)
{
	struct flaz_vol vol;
	struct vol_devices d;
	struct pairs p;
	const char *name = NULL;
	bool json = false;
	int r;

	r = parse_status(argc, argv, &name, &json);
	if (r)
		return r;
	dm_setup(false);
	r = dm_ready();
	if (!r)
		r = dm_get_flaz(name, &vol, true);
	if (r)
		return r;
	table_devices(vol.table, &d);
	if (!split_pairs(vol.status, &p)) {
		flaz_vol_free(&vol);
		return fail(EXIT_FAIL, "out of memory");
	}
	if (json)
		print_json(name, &d, &vol, &p);
	else
		print_human(name, &d, &p);
	free(p.v);
	flaz_vol_free(&vol);
	return EXIT_OK;
}

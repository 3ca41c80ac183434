// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl status: a flaz volume's status line (or every volume's), for people,
 * as JSON or for Prometheus. The kernel's status is "key=value ..." with keys
 * that may be added over time, so every pair is shown as it comes; only the
 * derived figures know key names. People see sizes (the keys that end in _bytes
 * or _kib) in human units, unless --bytes asks for the kernel's numbers.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"
#include "jsonout.h"
#include "vol.h"

#define DERIVED_HIT_RATIO "hit ratio"

/* Whether @s ends in @suffix. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Pair @pv's value for people: a size in human units (1.5 GiB), else as the kernel said. */
static const char *human_value(const struct pair *pv, char *buf, size_t len)
{
	uint64_t v;

	if (!is_count(pv->value) || sscanf(pv->value, "%" SCNu64, &v) != 1)
		return pv->value;
	if (ends_with(pv->key, "_bytes"))
		return fmt_bytes(v, buf, len);
	if (ends_with(pv->key, "_kib") && v <= UINT64_MAX / 1024)
		return fmt_bytes(v * 1024, buf, len);
	return pv->value;
}

/*
 * The header, then one aligned "key  value" line per pair and the derived lines;
 * sizes in human units, or as the kernel said with @bytes.
 */
static void print_human(const struct vol_info *vi, bool bytes)
{
	const struct pairs *p = &vi->p;
	int width = (int)strlen(DERIVED_HIT_RATIO);
	char buf[32];
	double r;
	bool ok;
	size_t i;

	for (i = 0; i < p->n; i++)
		if ((int)strlen(p->v[i].key) > width)
			width = (int)strlen(p->v[i].key);
	printf("%s: %s -> cache %s\n", vi->name, vi->hdd, vi->ssd);
	printf("  %-*s  %s\n", width, "uuid", vi->vol.uuid ? vi->vol.uuid : "-");
	for (i = 0; i < p->n; i++) {
		if (p->v[i].value)
			printf("  %-*s  %s\n", width, p->v[i].key,
			       bytes ? p->v[i].value : human_value(&p->v[i], buf, sizeof(buf)));
		else
			printf("  %s\n", p->v[i].key);
	}
	if (pair_value(p, "read_hits") && pair_value(p, "read_misses")) {
		ok = vol_hit_ratio(p, &r);
		printf("  %-*s  %s\n", width, DERIVED_HIT_RATIO, fmt_percent(ok, r, buf, sizeof(buf)));
	}
	if (pair_value(p, "logical_bytes") && pair_value(p, "physical_bytes")) {
		ok = vol_saving(p, &r);
		printf("  %-*s  %s\n", width, "saving", fmt_percent(ok, r, buf, sizeof(buf)));
	}
	if (vol_ssd_used(p, &r))
		printf("  %-*s  %s\n", width, "ssd used", fmt_percent(true, r, buf, sizeof(buf)));
}

/* A derived figure as a JSON number (a fraction, 4 decimals), or null when undefined. */
static void json_ratio(struct json_object *o, const char *key, const struct pairs *p,
		       bool (*get)(const struct pairs *, double *))
{
	double r;

	jadd(o, key, get(p, &r) ? jfixed(r, 4) : NULL);
}

/*
 * One JSON object on one line; see flazctl(8) for its fields. A status value is a
 * number when it is one, true for a bare word, else a string.
 */
static void print_json(const struct vol_info *vi)
{
	const struct pairs *p = &vi->p;
	struct json_object *o = jobj(), *st = json_object_new_object();
	size_t i;

	jadd(o, "name", jstr(vi->name));
	jadd(o, "uuid", jstr(vi->vol.uuid));
	jadd(o, "hdd", jstr(vi->hdd));
	jadd(o, "ssd", jstr(vi->ssd));
	jadd(o, "size_sectors", json_object_new_uint64(vi->vol.sectors));
	jadd(o, "table", jstr(vi->vol.table));
	for (i = 0; i < p->n; i++)
		jadd(st, p->v[i].key,
		     p->v[i].value ? jnum(p->v[i].value) : json_object_new_boolean(1));
	jadd(o, "status", st);
	json_ratio(o, "hit_ratio", p, vol_hit_ratio);
	json_ratio(o, "saving", p, vol_saving);
	json_ratio(o, "ssd_used", p, vol_ssd_used);
	jput(o);
}

enum status_format { HUMAN, JSON, PROMETHEUS };

/* Parse "status [NAME] [--bytes] [--json|--prometheus]"; EXIT_OK or EXIT_USAGE. */
static int parse_status(int argc, char **argv, const char **name, enum status_format *fmt,
			bool *bytes)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "bytes", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'b') {
			/* JSON and Prometheus carry the kernel's numbers anyway */
			*bytes = true;
			continue;
		}
		if (c != 'j' && c != 'p')
			return bad_option(argv);
		if (*fmt != HUMAN)
			return fail(EXIT_USAGE, "give one of --json and --prometheus");
		*fmt = c == 'j' ? JSON : PROMETHEUS;
	}
	if (optind + 1 < argc)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("status"));
	if (optind == argc)
		return EXIT_OK;
	*name = argv[optind];
	return check_name(*name);
}

int cmd_status(int argc, char **argv)
{
	enum status_format fmt = HUMAN;
	const char *name = NULL;
	struct vol_info *vis;
	bool bytes = false;
	size_t i, n;
	int r;

	r = parse_status(argc, argv, &name, &fmt, &bytes);
	if (r)
		return r;
	r = vols_get(name, &vis, &n);
	if (r)
		return r;
	if (fmt == PROMETHEUS)
		print_prometheus(vis, n);
	for (i = 0; fmt != PROMETHEUS && i < n; i++) {
		if (fmt == JSON) {
			print_json(&vis[i]);
		} else {
			if (i)
				putchar('\n');
			print_human(&vis[i], bytes);
		}
	}
	vols_free(vis, n);
	return EXIT_OK;
}

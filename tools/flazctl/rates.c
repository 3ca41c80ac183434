// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl stats: a volume's activity from the difference between two status
 * readings, like vdostats or iostat: first the totals since the volume was
 * created, then one line per interval. The totals and the intervals have the same
 * fields (-o), with the same keys and units: counts and bytes over the line's span
 * (since creation, or the interval), and the same per second, which only an
 * interval has.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flazctl.h"
#include "jsonout.h"
#include "vol.h"

#define MAX_INTERVAL 86400UL

/* The counters a report shows, read from one status line. */
enum counter {
	C_READS, C_WRITES, C_HITS, C_MISSES, C_FILLS, C_EVICTIONS, C_COMMITS, C_META_BYTES,
	NR_COUNTERS
};

static const char *const counter_keys[NR_COUNTERS] = {
	"reads", "writes", "read_hits", "read_misses", "fills", "evictions", "commits",
	"meta_bytes",
};

struct sample {
	uint64_t c[NR_COUNTERS];
	struct timespec when;	/* CLOCK_MONOTONIC */
};

/* What a report line covers: the totals since creation, or one interval. */
struct report {
	bool total;
	time_t time;		/* when it was read (the epoch) */
	double secs;		/* the interval's length; unknown for the totals */
	uint64_t d[NR_COUNTERS];	/* the counts over it */
};

enum sfield_kind {
	SF_TIME,	/* "total" or the time of day; the epoch in JSON */
	SF_SECONDS,	/* the interval's length; undefined for the totals */
	SF_COUNT,	/* a counter's growth over the span (or its total) */
	SF_RATE,	/* the same per second; undefined for the totals */
	SF_HIT,		/* hits / (hits + misses) over the span */
};

/* A column of stats -o, named as its JSON key; the totals and the intervals share them. */
struct sfield {
	const char *name;
	const char *head;
	enum sfield_kind kind;
	enum counter c;
	unsigned int bytes;	/* bytes per count for a size (shown in --units), else 0 */
	const char *help;
};

static const struct sfield sfields[] = {
	{ "time", "time", SF_TIME, 0, 0, "\"total\", or the time of the reading" },
	{ "seconds", "secs", SF_SECONDS, 0, 0, "the interval's length (- for the totals)" },
	{ "reads", "reads", SF_COUNT, C_READS, 0, "read bios" },
	{ "writes", "writes", SF_COUNT, C_WRITES, 0, "write bios" },
	{ "hit_ratio", "hit%", SF_HIT, 0, 0, "read_hits / (read_hits + read_misses)" },
	{ "ssd_read_bytes", "ssd_read", SF_COUNT, C_HITS, 4096, "read from the SSD: read_hits * 4 KiB" },
	{ "hdd_read_bytes", "hdd_read", SF_COUNT, C_MISSES, 4096, "read from the HDD: read_misses * 4 KiB" },
	{ "fills", "fills", SF_COUNT, C_FILLS, 0, "blocks filled into the cache from read misses" },
	{ "evictions", "evicts", SF_COUNT, C_EVICTIONS, 0, "cached blocks dropped for others" },
	{ "commits", "commits", SF_COUNT, C_COMMITS, 0, "table commits" },
	{ "meta_bytes", "meta", SF_COUNT, C_META_BYTES, 1, "metadata (table, gens, superblocks) written to the SSD" },
	{ "reads_per_s", "reads/s", SF_RATE, C_READS, 0, NULL },
	{ "writes_per_s", "writes/s", SF_RATE, C_WRITES, 0, NULL },
	{ "ssd_read_bytes_per_s", "ssd_read/s", SF_RATE, C_HITS, 4096, NULL },
	{ "hdd_read_bytes_per_s", "hdd_read/s", SF_RATE, C_MISSES, 4096, NULL },
	{ "fills_per_s", "fills/s", SF_RATE, C_FILLS, 0, NULL },
	{ "evictions_per_s", "evicts/s", SF_RATE, C_EVICTIONS, 0, NULL },
	{ "commits_per_s", "commits/s", SF_RATE, C_COMMITS, 0, NULL },
	{ "meta_bytes_per_s", "meta/s", SF_RATE, C_META_BYTES, 1, NULL },
};

#define NR_SFIELDS (sizeof(sfields) / sizeof(sfields[0]))

static const char default_sfields[] =
	"time,reads,writes,hit_ratio,ssd_read_bytes,hdd_read_bytes,fills,evictions,commits,meta_bytes";

struct stats_args {
	const char *name;
	unsigned long interval;
	unsigned long count;	/* 0: until interrupted */
	bool json;
	char unit;		/* sizes in the table: a letter of UNITS_LETTERS */
	size_t n;		/* the columns of -o (JSON without -o: every field) */
	const struct sfield *f[NR_SFIELDS];
};

/* A positive decimal up to @max. */
static bool parse_positive(const char *s, unsigned long max, unsigned long *v)
{
	return parse_ulong(s, v) && *v >= 1 && *v <= max;
}

static void sfields_help(void)
{
	size_t i;

	puts("Fields for -o (comma-separated; the same in the totals and the intervals):");
	for (i = 0; i < NR_SFIELDS; i++)
		if (sfields[i].help)
			printf("  %-16s %s\n", sfields[i].name, sfields[i].help);
	puts("and per second over the interval (- for the totals):");
	for (i = 0; i < NR_SFIELDS; i++)
		if (!sfields[i].help)
			printf("  %s\n", sfields[i].name);
}

/* -o's "a,b,c" into @a's columns; EXIT_OK, EXIT_USAGE, or -1 for help. */
static int parse_sfields(char *spec, struct stats_args *a)
{
	char *save = NULL, *w;
	size_t i;

	if (!strcmp(spec, "help")) {
		sfields_help();
		return -1;
	}
	a->n = 0;
	for (w = strtok_r(spec, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_SFIELDS && strcmp(w, sfields[i].name); i++)
			;
		if (i == NR_SFIELDS)
			return fail(EXIT_USAGE, "-o: unknown field '%s' (see flazctl stats -o help)", w);
		if (a->n == NR_SFIELDS)
			return fail(EXIT_USAGE, "-o: more than %zu fields", NR_SFIELDS);
		a->f[a->n++] = &sfields[i];
	}
	if (!a->n)
		return fail(EXIT_USAGE, "-o: no field given (see flazctl stats -o help)");
	return EXIT_OK;
}

/* Parse "stats NAME [-o FIELDS] [--units U] [--interval N] [--count K] [--json]". */
static int parse_stats(int argc, char **argv, struct stats_args *a, char *fields, size_t len)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "options", required_argument, NULL, 'o' },
		{ "units", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	bool chosen = false;
	size_t i;
	int c, r;

	snprintf(fields, len, "%s", default_sfields);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!parse_positive(optarg, MAX_INTERVAL, &a->interval))
				return fail(EXIT_USAGE, "--interval must be from 1 to %lu seconds, not %s",
					    MAX_INTERVAL, optarg);
			break;
		case 'c':
			if (!parse_positive(optarg, (unsigned long)-1, &a->count))
				return fail(EXIT_USAGE, "--count must be a positive number, not %s", optarg);
			break;
		case 'j':
			a->json = true;
			break;
		case 'o':
			if ((size_t)snprintf(fields, len, "%s", optarg) >= len)
				return fail(EXIT_USAGE, "-o: the field list is too long");
			chosen = true;
			break;
		case 'u':
			if (parse_units(optarg, &a->unit))
				return EXIT_USAGE;
			break;
		case ':':
			return fail(EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
		default:
			return bad_option(argv);
		}
	}
	r = parse_sfields(fields, a);
	if (r)
		return r;
	if (a->json && !chosen)
		for (a->n = 0, i = 0; i < NR_SFIELDS; i++)
			a->f[a->n++] = &sfields[i];
	if (a->json && a->unit != 'h')
		return fail(EXIT_USAGE, "--units shapes the table; --json gives bytes");
	if (optind + 1 != argc)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("stats"));
	a->name = argv[optind];
	return check_name(a->name);
}

/* Read the volume's counters now; EXIT_OK or EXIT_FAIL (gone, or not flaz any more). */
static int take_sample(const char *name, struct sample *s)
{
	struct flaz_vol vol;
	struct pairs p;
	size_t i;
	int r;

	r = dm_get_flaz(name, &vol, true);
	if (r)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &s->when);
	if (!split_pairs(vol.status, &p)) {
		flaz_vol_free(&vol);
		return fail(EXIT_FAIL, "out of memory");
	}
	for (i = 0; i < NR_COUNTERS; i++)
		if (!pair_u64(&p, counter_keys[i], &s->c[i]))
			s->c[i] = 0;	/* an older module: shown as 0 */
	free(p.v);
	flaz_vol_free(&vol);
	return EXIT_OK;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* The column's width in the table: its header's, at least a number's or a size's. */
static int column_width(const struct sfield *f)
{
	int w = (int)strlen(f->head);

	if (f->kind == SF_TIME)
		return 8;
	return w > 11 ? w : f->bytes ? 11 : 8;
}

/*
 * Field @f of @r as text: for the table (@json false) as people read it, else as a
 * JSON number. false when undefined (the totals' rates and length, a ratio without
 * reads): "-" for the table, null in JSON.
 */
static bool field_text(const struct stats_args *a, const struct sfield *f,
		       const struct report *r, char *buf, size_t len)
{
	uint64_t all = r->d[C_HITS] + r->d[C_MISSES];
	double v = f->kind == SF_COUNT || f->kind == SF_RATE ?
		   (double)r->d[f->c] * (f->bytes ? f->bytes : 1) : 0;
	struct tm tm;

	switch (f->kind) {
	case SF_TIME:
		if (a->json) {
			snprintf(buf, len, "%lld", (long long)r->time);
		} else if (r->total) {
			snprintf(buf, len, "total");
		} else {
			localtime_r(&r->time, &tm);
			strftime(buf, len, "%H:%M:%S", &tm);
		}
		return true;
	case SF_SECONDS:
		if (r->total)
			break;
		snprintf(buf, len, a->json ? "%.3f" : "%.1f", r->secs);
		return true;
	case SF_HIT:
		if (!all)
			break;
		if (a->json)
			snprintf(buf, len, "%.4f", (double)r->d[C_HITS] / (double)all);
		else
			fmt_percent(true, (double)r->d[C_HITS] / (double)all, buf, len);
		return true;
	case SF_RATE:
		if (r->total)
			break;
		v /= r->secs;
		if (f->bytes && !a->json)
			fmt_size(v, a->unit, true, buf, len);
		else
			snprintf(buf, len, "%.1f", v);
		return true;
	case SF_COUNT:
		if (f->bytes && !a->json)
			fmt_size_u64(r->d[f->c] * f->bytes, a->unit, true, buf, len);
		else
			snprintf(buf, len, "%" PRIu64, r->d[f->c] * (f->bytes ? f->bytes : 1));
		return true;
	}
	snprintf(buf, len, "-");
	return false;
}

/* One column of the table: the time left-aligned, the figures right-aligned. */
static void print_cell(const struct stats_args *a, size_t j, const char *text)
{
	const struct sfield *f = a->f[j];
	int w = column_width(f);

	if (f->kind == SF_TIME)
		w = j + 1 == a->n ? 0 : -w;	/* no trailing blanks */
	printf("%s%*s", j ? " " : "", w, text);
}

static void header(const struct stats_args *a)
{
	size_t j;

	for (j = 0; j < a->n; j++)
		print_cell(a, j, a->f[j]->head);
	putchar('\n');
}

/* One report: a table line, or one JSON object with the same keys for totals and intervals. */
static void print_report(const struct stats_args *a, const struct report *r)
{
	struct json_object *o;
	char buf[64];
	size_t j;

	if (a->json) {
		o = jobj();
		jadd(o, "volume", jstr(a->name));
		jadd(o, "kind", jstr(r->total ? "total" : "interval"));
		for (j = 0; j < a->n; j++)
			jadd(o, a->f[j]->name,
			     field_text(a, a->f[j], r, buf, sizeof(buf)) ? jnum(buf) : NULL);
		jput(o);
		return;
	}
	for (j = 0; j < a->n; j++) {
		field_text(a, a->f[j], r, buf, sizeof(buf));
		print_cell(a, j, buf);
	}
	putchar('\n');
}

/* The totals since creation, the counters as they are. */
static void print_totals(const struct stats_args *a, const struct sample *s)
{
	struct report r = { .total = true, .time = time(NULL) };

	memcpy(r.d, s->c, sizeof(r.d));
	if (!a->json)
		header(a);
	print_report(a, &r);
}

/* One interval: the counters' growth between @prev and @cur. */
static void print_interval(const struct stats_args *a, const struct sample *prev,
			   const struct sample *cur)
{
	struct report r = { .time = time(NULL), .secs = seconds_between(&prev->when, &cur->when) };
	size_t i;

	if (r.secs <= 0)
		r.secs = 1e-9;
	/* a counter never goes back; if it did (a reload), count from 0 */
	for (i = 0; i < NR_COUNTERS; i++)
		r.d[i] = cur->c[i] >= prev->c[i] ? cur->c[i] - prev->c[i] : cur->c[i];
	print_report(a, &r);
}

/* Sleep until @start + @k intervals, so reports do not drift. */
static void sleep_until(const struct timespec *start, unsigned long k, unsigned long interval)
{
	struct timespec t = *start;

	t.tv_sec += (time_t)(k * interval);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_args a = { .interval = 1, .unit = 'h' };
	struct sample prev, cur;
	struct timespec start;
	char fields[1024];
	unsigned long k;
	int r;

	r = parse_stats(argc, argv, &a, fields, sizeof(fields));
	if (r)
		return r < 0 ? EXIT_OK : r;
	dm_setup(false);
	r = dm_ready();
	if (!r)
		r = take_sample(a.name, &prev);
	if (r)
		return r;
	start = prev.when;
	print_totals(&a, &prev);
	fflush(stdout);
	for (k = 1; !a.count || k <= a.count; k++) {
		sleep_until(&start, k, a.interval);
		r = take_sample(a.name, &cur);
		if (r)
			return r;
		print_interval(&a, &prev, &cur);
		fflush(stdout);
		prev = cur;
	}
	return EXIT_OK;
}

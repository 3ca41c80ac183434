// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl stats: a volume's activity as rates, from the difference between two
 * status readings, like vdostats or iostat: first the totals since the volume
 * was created, then one line per interval.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flazctl.h"
#include "vol.h"

#define BLOCK_BYTES 4096.0
#define MIB (1024.0 * 1024.0)
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

struct stats_args {
	const char *name;
	unsigned long interval;
	unsigned long count;	/* 0: until interrupted */
	bool json;
};

/* A positive decimal up to @max. */
static bool parse_positive(const char *s, unsigned long max, unsigned long *v)
{
	return parse_ulong(s, v) && *v >= 1 && *v <= max;
}

/* Parse "stats NAME [--interval N] [--count K] [--json]"; EXIT_OK or EXIT_USAGE. */
static int parse_stats(int argc, char **argv, struct stats_args *a)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
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
		case ':':
			return fail(EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
		default:
			return bad_option(argv);
		}
	}
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

static void header(void)
{
	printf("%-8s %9s %9s %6s %10s %10s %9s %9s %9s %10s\n", "time", "reads/s", "writes/s",
	       "hit%", "ssdMiB/s", "hddMiB/s", "fills/s", "evicts/s", "commits/s", "metaKiB/s");
}

/* Hits over hits + misses of the difference @d, as a percentage text or "-". */
static const char *hit_text(const uint64_t *d, char *buf, size_t len)
{
	uint64_t all = d[C_HITS] + d[C_MISSES];

	return fmt_percent(all > 0, all ? (double)d[C_HITS] / (double)all : 0, buf, len);
}

/* The totals since creation: counts, MiB and KiB rather than rates. */
static void print_totals(const struct stats_args *a, const struct sample *s)
{
	const uint64_t *c = s->c;
	char hit[16];

	if (a->json) {
		json_object_start();
		fputs(",\"volume\":", stdout);
		json_string(a->name);
		printf(",\"kind\":\"total\",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64,
		       c[C_READS], c[C_WRITES]);
		if (c[C_HITS] + c[C_MISSES])
			printf(",\"hit_ratio\":%.4f",
			       (double)c[C_HITS] / (double)(c[C_HITS] + c[C_MISSES]));
		else
			fputs(",\"hit_ratio\":null", stdout);
		printf(",\"ssd_read_bytes\":%" PRIu64 ",\"hdd_read_bytes\":%" PRIu64
		       ",\"fills\":%" PRIu64 ",\"evictions\":%" PRIu64 ",\"commits\":%" PRIu64
		       ",\"meta_bytes\":%" PRIu64 "}\n",
		       c[C_HITS] * 4096, c[C_MISSES] * 4096, c[C_FILLS], c[C_EVICTIONS],
		       c[C_COMMITS], c[C_META_BYTES]);
		return;
	}
	header();
	printf("%-8s %9" PRIu64 " %9" PRIu64 " %6s %10.1f %10.1f %9" PRIu64 " %9" PRIu64
	       " %9" PRIu64 " %10.1f\n", "total", c[C_READS], c[C_WRITES],
	       hit_text(c, hit, sizeof(hit)), c[C_HITS] * BLOCK_BYTES / MIB,
	       c[C_MISSES] * BLOCK_BYTES / MIB, c[C_FILLS], c[C_EVICTIONS], c[C_COMMITS],
	       c[C_META_BYTES] / 1024.0);
}

/* One interval: the rates between @prev and @cur. */
static void print_rates(const struct stats_args *a, const struct sample *prev,
			const struct sample *cur)
{
	double secs = seconds_between(&prev->when, &cur->when);
	double rate[NR_COUNTERS];
	uint64_t d[NR_COUNTERS];
	char now[16], hit[16];
	struct tm tm;
	time_t t;
	size_t i;

	if (secs <= 0)
		secs = 1e-9;
	for (i = 0; i < NR_COUNTERS; i++) {
		/* a counter never goes back; if it did (a reload), count from 0 */
		d[i] = cur->c[i] >= prev->c[i] ? cur->c[i] - prev->c[i] : cur->c[i];
		rate[i] = (double)d[i] / secs;
	}
	t = time(NULL);
	localtime_r(&t, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	if (a->json) {
		json_object_start();
		fputs(",\"volume\":", stdout);
		json_string(a->name);
		printf(",\"kind\":\"interval\",\"time\":%lld,\"seconds\":%.3f", (long long)t, secs);
		printf(",\"reads_per_s\":%.1f,\"writes_per_s\":%.1f", rate[C_READS], rate[C_WRITES]);
		if (d[C_HITS] + d[C_MISSES])
			printf(",\"hit_ratio\":%.4f",
			       (double)d[C_HITS] / (double)(d[C_HITS] + d[C_MISSES]));
		else
			fputs(",\"hit_ratio\":null", stdout);
		printf(",\"ssd_mib_per_s\":%.3f,\"hdd_mib_per_s\":%.3f,\"fills_per_s\":%.1f"
		       ",\"evictions_per_s\":%.1f,\"commits_per_s\":%.1f,\"meta_kib_per_s\":%.1f}\n",
		       rate[C_HITS] * BLOCK_BYTES / MIB, rate[C_MISSES] * BLOCK_BYTES / MIB,
		       rate[C_FILLS], rate[C_EVICTIONS], rate[C_COMMITS],
		       rate[C_META_BYTES] / 1024.0);
		return;
	}
	printf("%-8s %9.1f %9.1f %6s %10.1f %10.1f %9.1f %9.1f %9.1f %10.1f\n", now,
	       rate[C_READS], rate[C_WRITES], hit_text(d, hit, sizeof(hit)),
	       rate[C_HITS] * BLOCK_BYTES / MIB, rate[C_MISSES] * BLOCK_BYTES / MIB,
	       rate[C_FILLS], rate[C_EVICTIONS], rate[C_COMMITS], rate[C_META_BYTES] / 1024.0);
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
	struct stats_args a = { .interval = 1 };
	struct sample prev, cur;
	struct timespec start;
	unsigned long k;
	int r;

	r = parse_stats(argc, argv, &a);
	if (r)
		return r;
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
		print_rates(&a, &prev, &cur);
		fflush(stdout);
		prev = cur;
	}
	return EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl status --prometheus: every volume's status in the Prometheus text
 * exposition format, as node_exporter's textfile collector reads it. Each metric
 * family is written once (HELP, TYPE, then one sample per volume), as the format
 * requires; counters end in _total, and sums of microseconds are exported in
 * seconds (the base unit), as counters ending in _seconds_total.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "flazctl.h"
#include "vol.h"

enum metric_type {
	COUNTER,
	GAUGE,
	US_COUNTER,	/* a sum of microseconds, KEY_us: flaz_KEY_seconds_total */
};

struct metric {
	const char *key;	/* status key */
	enum metric_type type;
	const char *help;
};

static const struct metric metrics[] = {
	{ "reads", COUNTER, "Read bios (or pieces of bios) mapped." },
	{ "writes", COUNTER, "Write bios (or pieces of bios) mapped." },
	{ "read_hits", COUNTER, "4 KiB blocks read from the SSD cache." },
	{ "read_misses", COUNTER, "4 KiB blocks read from the HDD." },
	{ "write_hits", COUNTER, "Whole 4 KiB blocks written whose line held that block." },
	{ "write_misses", COUNTER, "Whole 4 KiB blocks written whose line did not hold that block." },
	{ "fills", COUNTER, "Blocks installed in the cache from a read miss." },
	{ "bypasses", COUNTER, "Blocks read or written on the HDD only, not cached: the sum of partial_drops, partial_passes and seq_bypasses." },
	{ "blocks_cached", GAUGE, "Cache lines now valid, zero blocks included." },
	{ "logical_bytes", GAUGE, "4096 per cached non-zero block." },
	{ "physical_bytes", GAUGE, "SSD bytes of the cached blocks' slots." },
	{ "ratio", GAUGE, "Compression ratio: logical_bytes / physical_bytes." },
	{ "raw_blocks", COUNTER, "Blocks installed uncompressed." },
	{ "zero_blocks", COUNTER, "Blocks installed as a zero flag." },
	{ "free_extents", GAUGE, "Free extents on the SSD." },
	{ "total_extents", GAUGE, "Extents on the SSD." },
	{ "evictions", COUNTER, "Cached blocks dropped for another block." },
	{ "cleaner_runs", COUNTER, "Cleaner passes, each over up to 2 MiB of the oldest extents." },
	{ "extents_cleaned", COUNTER, "Extents the cleaner compacted." },
	{ "slots_moved", COUNTER, "Live slots hit since written that the cleaner copied to new extents." },
	{ "slots_dropped", COUNTER, "Live slots not hit since written that the cleaner dropped." },
	{ "discards", COUNTER, "Discards sent to the HDD." },
	{ "hdd_errors", COUNTER, "HDD I/O errors." },
	{ "ssd_errors", COUNTER, "SSD I/O errors and slots that failed their checks." },
	{ "table_bytes", GAUGE, "DRAM the whole logical-to-physical table would take resident." },
	{ "commits", COUNTER, "Table commits written to the SSD." },
	{ "meta_errors", COUNTER, "Metadata I/O errors and metadata blocks that failed their checks." },
	{ "marked_regions", GAUGE, "Write-intent regions now marked on the SSD." },
	{ "dram_bytes", GAUGE, "DRAM the volume allocated for metadata." },
	{ "meta_bytes", COUNTER, "Bytes of metadata written to the SSD." },
	{ "marks", COUNTER, "Superblocks written to make write-intent marks durable (commits not counted)." },
	{ "mark_waits", COUNTER, "Writes that waited for their region's mark before going to the HDD." },
	{ "mark_wait_us", US_COUNTER, "Seconds writes waited for their region's mark, in all." },
	{ "commit_us", US_COUNTER, "Seconds table commits took, in all (in the background: writes never wait for them)." },
	{ "loading", GAUGE, "Table pages still to be read after activation (recovery after a crash, then warming); 0 once done." },
	{ "fills_skipped", COUNTER, "Blocks not installed: install backlog full, memory short or no free extent." },
	{ "compress_skipped", COUNTER, "Blocks stored raw, uncompressed: predicted to save too little." },
	{ "hot_blocks", GAUGE, "Hot blocks the cleaner stored raw, in extents not evicted since." },
	{ "recompressed", COUNTER, "Slots the cleaner compressed again: hot ones that cooled, cold ones with the cold codec." },
	{ "cold_bytes", GAUGE, "SSD bytes of the cached blocks' slots in the cold codec." },
	{ "codec_bytes", GAUGE, "SSD bytes of the cached blocks' slots in the volume's compressor." },
	{ "raw_bytes", GAUGE, "SSD bytes of the cached blocks' raw slots." },
	{ "table_resident_bytes", GAUGE, "DRAM of the table's pages now resident (at most table_cache_kib, but for pages read in since the last commit)." },
	{ "table_page_ins", COUNTER, "Table pages read from the SSD (fills, commits, recovery, warming)." },
	{ "slots_kept", COUNTER, "Live slots hit since written that the cleaner left in place for a lap more: their extent was mostly hit." },
	{ "seq_bypass_kib", COUNTER, "KiB of reads and writes that bypassed the cache as part of a sequential stream past seq_cutoff_kib." },
	{ "skipped_space", COUNTER, "Fills skipped (of fills_skipped): no extent came free in time." },
	{ "skipped_busy", COUNTER, "Fills skipped (of fills_skipped): the install backlog was full." },
	{ "skipped_memory", COUNTER, "Fills skipped (of fills_skipped): no memory without waiting." },
	{ "skipped_table", COUNTER, "Fills skipped (of fills_skipped): the line's table page was out and could not come in (table DRAM at its cap, no memory for it, or a read error)." },
	{ "probation_extents", GAUGE, "Written extents in the probation part of the log, where new fills go first." },
	{ "main_extents", GAUGE, "Written extents in the main log." },
	{ "slots_promoted", COUNTER, "Slots hit while in probation that went to the main log when their probation extent was reclaimed." },
	{ "ghost_hits", COUNTER, "Blocks installed again within one lap of the extent whose eviction dropped them; admitted as if hit once." },
	{ "skipped_hot", COUNTER, "Fills skipped (of fills_skipped): the block's table line holds another block hit since its fill." },
	{ "partial_hits", COUNTER, "Reads of part of a block (off 4 KiB alignment or shorter) served from the cache (also in read_hits)." },
	{ "partial_fills", COUNTER, "Reads of part of a block not cached, whose whole block was read from the HDD to fill it (also in read_misses)." },
	{ "partial_updates", COUNTER, "Writes of part of a cached block whose block was updated in the cache: read, patched and compressed into a new slot." },
	{ "partial_drops", COUNTER, "Blocks written in part and dropped from the cache (of bypasses)." },
	{ "partial_passes", COUNTER, "Reads of part of a block sent to the HDD as they came, neither served from the cache nor filled (of bypasses)." },
	{ "seq_bypasses", COUNTER, "Blocks read or written past the sequential cutoff, not cached (of bypasses)." },
	{ "fills_pending", GAUGE, "Blocks of completed read misses and writes copied to be installed, not installed or skipped yet." },
};

#define NR_METRICS (sizeof(metrics) / sizeof(metrics[0]))

static const char *const modes[] = { "normal", "degraded", "passthrough" };
static const char *const reasons[] = {
	"none", "ssd_errors", "ssd_no_mark", "ssd_unusable", "ssd_read_only", "asked"
};

/* A label value: backslash, quote and newline escaped. */
static void label_value(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
	putchar('"');
}

static void family(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{volume="NAME"[,extra]} */
static void sample_start(const char *name, const struct vol_info *vi)
{
	printf("%s{volume=", name);
	label_value(vi->name);
}

/* A status value the format takes as a sample value: digits, maybe one dot. */
static bool sample_number(const char *v)
{
	return v && *v && strspn(v, "0123456789.") == strlen(v);
}

/* Microseconds @v (digits only) as seconds, exactly: "1500" is 0.001500. */
static void print_us_as_s(const char *v)
{
	size_t len = strlen(v);

	if (len > 6)
		printf("%.*s.%s", (int)(len - 6), v, v + len - 6);
	else
		printf("0.%.*s%s", (int)(6 - len), "000000", v);
}

/* One family from a status key, over every volume that reports it as a number. */
static void key_family(const char *key, enum metric_type type, const char *help,
		       const struct vol_info *vis, size_t n)
{
	char name[128];
	const char *v;
	bool any = false;
	size_t i;

	if (type == US_COUNTER)
		snprintf(name, sizeof(name), "flaz_%.*s_seconds_total", (int)strlen(key) - 3, key);
	else
		snprintf(name, sizeof(name), "flaz_%s%s", key, type == COUNTER ? "_total" : "");
	for (i = 0; i < n; i++) {
		v = pair_value(&vis[i].p, key);
		if (!sample_number(v) || (type == US_COUNTER && strchr(v, '.')))
			continue;
		if (!any)
			family(name, type == GAUGE ? "gauge" : "counter", help);
		any = true;
		sample_start(name, &vis[i]);
		fputs("} ", stdout);
		if (type == US_COUNTER)
			print_us_as_s(v);
		else
			fputs(v, stdout);
		putchar('\n');
	}
}

/* A state set: 1 for the volume's state, 0 for the others it could be in. */
static void state_family(const char *name, const char *label, const char *key,
			 const char *const *states, size_t nr, const char *help,
			 const struct vol_info *vis, size_t n)
{
	const char *v;
	size_t i, s;
	bool known;

	if (n)
		family(name, "gauge", help);
	for (i = 0; i < n; i++) {
		v = pair_value(&vis[i].p, key);
		known = false;
		for (s = 0; s < nr; s++) {
			sample_start(name, &vis[i]);
			printf(",%s=\"%s\"} %d\n", label, states[s], v && !strcmp(v, states[s]));
			known |= v && !strcmp(v, states[s]);
		}
		/* a state newer than this flazctl */
		if (v && !known) {
			sample_start(name, &vis[i]);
			printf(",%s=", label);
			label_value(v);
			puts("} 1");
		}
	}
}

/* A derived ratio, for the volumes where it is defined. */
static void ratio_family(const char *name, const char *help,
			 bool (*get)(const struct pairs *, double *),
			 const struct vol_info *vis, size_t n)
{
	bool any = false;
	double r;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!get(&vis[i].p, &r))
			continue;
		if (!any)
			family(name, "gauge", help);
		any = true;
		sample_start(name, &vis[i]);
		printf("} %.6f\n", r);
	}
}

/* Whether @key has a metric of its own (or is a state), so it is not exported twice. */
static bool has_metric(const char *key)
{
	size_t i;

	if (!strcmp(key, "mode") || !strcmp(key, "mode_reason"))
		return true;
	for (i = 0; i < NR_METRICS; i++)
		if (!strcmp(key, metrics[i].key))
			return true;
	return false;
}

/* Whether @key can be a metric name's tail. */
static bool metric_word(const char *key)
{
	return *key && strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(key);
}

void print_prometheus(const struct vol_info *vis, size_t n)
{
	size_t i, j, k;
	bool seen;

	if (n)
		family("flaz_info", "gauge", "A flaz volume and its devices; always 1.");
	for (i = 0; i < n; i++) {
		sample_start("flaz_info", &vis[i]);
		fputs(",hdd=", stdout);
		label_value(vis[i].hdd);
		fputs(",ssd=", stdout);
		label_value(vis[i].ssd);
		puts("} 1");
	}
	if (n)
		family("flaz_size_bytes", "gauge", "Volume size in bytes.");
	for (i = 0; i < n; i++) {
		sample_start("flaz_size_bytes", &vis[i]);
		printf("} %" PRIu64 "\n", vis[i].vol.sectors * 512);
	}
	state_family("flaz_mode", "mode", "mode", modes, sizeof(modes) / sizeof(modes[0]),
		     "Cache mode: 1 for the current one.", vis, n);
	state_family("flaz_mode_reason", "reason", "mode_reason", reasons,
		     sizeof(reasons) / sizeof(reasons[0]),
		     "Why the mode is not normal: 1 for the current reason.", vis, n);
	for (i = 0; i < NR_METRICS; i++)
		key_family(metrics[i].key, metrics[i].type, metrics[i].help, vis, n);
	ratio_family("flaz_hit_ratio", "read_hits / (read_hits + read_misses).",
		     vol_hit_ratio, vis, n);
	ratio_family("flaz_saving_ratio", "1 - physical_bytes / logical_bytes.",
		     vol_saving, vis, n);
	ratio_family("flaz_ssd_used_ratio", "1 - free_extents / total_extents.",
		     vol_ssd_used, vis, n);
	/* keys newer than this flazctl: gauges, each family once */
	for (i = 0; i < n; i++) {
		for (j = 0; j < vis[i].p.n; j++) {
			const char *key = vis[i].p.v[j].key;

			if (has_metric(key) || !metric_word(key))
				continue;
			seen = false;
			for (k = 0; k < i && !seen; k++)
				seen = pair_value(&vis[k].p, key) != NULL;
			if (!seen)
				key_family(key, GAUGE, "Status key of a newer dm-flaz.", vis + i, n - i);
		}
	}
}

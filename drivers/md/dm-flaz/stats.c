// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz statistics: per-CPU event counters, summed when status is read, so the
 * I/O path never shares a cache line with another CPU for accounting.
 */
#include <kunit/visibility.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "flaz.h"

struct flaz_stats {
	struct flaz_stats_cpu __percpu *cpu;
};

struct flaz_stats_cpu {
	u64 c[FLAZ_NR_STATS];
};

static const char * const stat_names[FLAZ_NR_STATS] = {
	[FLAZ_STAT_READS] = "reads",
	[FLAZ_STAT_WRITES] = "writes",
	[FLAZ_STAT_READ_HITS] = "read_hits",
	[FLAZ_STAT_READ_MISSES] = "read_misses",
	[FLAZ_STAT_WRITE_HITS] = "write_hits",
	[FLAZ_STAT_WRITE_MISSES] = "write_misses",
	[FLAZ_STAT_FILLS] = "fills",
	[FLAZ_STAT_BYPASSES] = "bypasses",
	[FLAZ_STAT_RAW_BLOCKS] = "raw_blocks",
	[FLAZ_STAT_ZERO_BLOCKS] = "zero_blocks",
	[FLAZ_STAT_EVICTIONS] = "evictions",
	[FLAZ_STAT_CLEANER_RUNS] = "cleaner_runs",
	[FLAZ_STAT_EXTENTS_CLEANED] = "extents_cleaned",
	[FLAZ_STAT_SLOTS_MOVED] = "slots_moved",
	[FLAZ_STAT_SLOTS_DROPPED] = "slots_dropped",
	[FLAZ_STAT_DISCARDS] = "discards",
	[FLAZ_STAT_HDD_ERRORS] = "hdd_errors",
	[FLAZ_STAT_SSD_ERRORS] = "ssd_errors",
	[FLAZ_STAT_COMMITS] = "commits",
	[FLAZ_STAT_META_ERRORS] = "meta_errors",
	[FLAZ_STAT_META_BYTES] = "meta_bytes",
	[FLAZ_STAT_MARKS] = "marks",
	[FLAZ_STAT_MARK_WAITS] = "mark_waits",
	[FLAZ_STAT_MARK_WAIT_US] = "mark_wait_us",
	[FLAZ_STAT_COMMIT_US] = "commit_us",
	[FLAZ_STAT_FILLS_SKIPPED] = "fills_skipped",
	[FLAZ_STAT_COMPRESS_SKIPPED] = "compress_skipped",
	[FLAZ_STAT_RECOMPRESSED] = "recompressed",
	[FLAZ_STAT_TABLE_PAGE_INS] = "table_page_ins",
	[FLAZ_STAT_SLOTS_KEPT] = "slots_kept",
	[FLAZ_STAT_SEQ_BYPASS_KIB] = "seq_bypass_kib",
	[FLAZ_STAT_SKIPPED_SPACE] = "skipped_space",
	[FLAZ_STAT_SKIPPED_BUSY] = "skipped_busy",
	[FLAZ_STAT_SKIPPED_MEMORY] = "skipped_memory",
	[FLAZ_STAT_SKIPPED_TABLE] = "skipped_table",
	[FLAZ_STAT_SLOTS_PROMOTED] = "slots_promoted",
	[FLAZ_STAT_GHOST_HITS] = "ghost_hits",
	[FLAZ_STAT_SKIPPED_HOT] = "skipped_hot",
	[FLAZ_STAT_PARTIAL_HITS] = "partial_hits",
	[FLAZ_STAT_PARTIAL_FILLS] = "partial_fills",
	[FLAZ_STAT_PARTIAL_UPDATES] = "partial_updates",
	[FLAZ_STAT_PARTIAL_DROPS] = "partial_drops",
	[FLAZ_STAT_PARTIAL_PASSES] = "partial_passes",
	[FLAZ_STAT_SEQ_BYPASSES] = "seq_bypasses",
};

struct flaz_stats *flaz_stats_create(void)
{
	struct flaz_stats *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->cpu = alloc_percpu(struct flaz_stats_cpu);
	if (!s->cpu) {
		kfree(s);
		return NULL;
	}
	return s;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_stats_create);

/* NULL-tolerant, so the constructor's error path can call it. */
void flaz_stats_destroy(struct flaz_stats *s)
{
	if (!s)
		return;
	free_percpu(s->cpu);
	kfree(s);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_stats_destroy);

void flaz_stats_add(struct flaz_stats *s, enum flaz_stat stat, u64 n)
{
	this_cpu_add(s->cpu->c[stat], n);
}

u64 flaz_stats_sum(struct flaz_stats *s, enum flaz_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(s->cpu, cpu)->c[stat];
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_stats_sum);

static void emit_stats(struct flaz_stats *s, enum flaz_stat first, enum flaz_stat last,
		       char *result, unsigned int maxlen, unsigned int *sz_p)
{
	unsigned int sz = *sz_p;
	enum flaz_stat i;

	for (i = first; i <= last; i++)
		DMEMIT(" %s=%llu", stat_names[i], flaz_stats_sum(s, i));
	*sz_p = sz;
}

/*
 * The status line: key=value pairs whose names and order are a stable ABI
 * (docs/operations.md "Status"); new keys are only appended.
 */
void flaz_stats_emit(struct flaz_stats *s, const struct flaz_gauges *g,
		     char *result, unsigned int maxlen, unsigned int *sz_p)
{
	unsigned int sz = *sz_p;
	u64 ratio100 = g->physical_bytes ?
		       div64_u64(g->logical_bytes * 100, g->physical_bytes) : 0;
	u32 hundredths;
	u64 whole = div_u64_rem(ratio100, 100, &hundredths);

	DMEMIT("mode=%s", g->mode);
	emit_stats(s, FLAZ_STAT_READS, FLAZ_STAT_BYPASSES, result, maxlen, &sz);
	DMEMIT(" blocks_cached=%llu logical_bytes=%llu physical_bytes=%llu ratio=%llu.%02u",
	       g->blocks_cached, g->logical_bytes, g->physical_bytes, whole, hundredths);
	emit_stats(s, FLAZ_STAT_RAW_BLOCKS, FLAZ_STAT_ZERO_BLOCKS, result, maxlen, &sz);
	DMEMIT(" free_extents=%llu total_extents=%llu", g->free_extents, g->total_extents);
	emit_stats(s, FLAZ_STAT_EVICTIONS, FLAZ_STAT_SSD_ERRORS, result, maxlen, &sz);
	DMEMIT(" table_bytes=%llu", g->table_bytes);
	emit_stats(s, FLAZ_STAT_COMMITS, FLAZ_STAT_META_ERRORS, result, maxlen, &sz);
	DMEMIT(" marked_regions=%llu", g->marked_regions);
	DMEMIT(" mode_reason=%s dram_bytes=%llu", g->mode_reason, g->dram_bytes);
	emit_stats(s, FLAZ_STAT_META_BYTES, FLAZ_STAT_COMMIT_US, result, maxlen, &sz);
	DMEMIT(" loading=%llu", g->loading);
	emit_stats(s, FLAZ_STAT_FILLS_SKIPPED, FLAZ_STAT_COMPRESS_SKIPPED, result, maxlen, &sz);
	DMEMIT(" hot_blocks=%llu", g->hot_blocks);
	emit_stats(s, FLAZ_STAT_RECOMPRESSED, FLAZ_STAT_RECOMPRESSED, result, maxlen, &sz);
	DMEMIT(" cold_bytes=%llu codec_bytes=%llu raw_bytes=%llu", g->cold_bytes, g->codec_bytes,
	       g->raw_bytes);
	DMEMIT(" table_resident_bytes=%llu", g->table_resident_bytes);
	emit_stats(s, FLAZ_STAT_TABLE_PAGE_INS, FLAZ_STAT_SKIPPED_TABLE, result, maxlen, &sz);
	DMEMIT(" probation_extents=%llu main_extents=%llu", g->probation_extents,
	       g->main_extents);
	emit_stats(s, FLAZ_STAT_SLOTS_PROMOTED, FLAZ_STAT_SEQ_BYPASSES, result, maxlen, &sz);
	DMEMIT(" fills_pending=%llu", g->fills_pending);
	*sz_p = sz;
}

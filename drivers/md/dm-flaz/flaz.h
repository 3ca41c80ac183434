/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: a compressed, write-through SSD cache in front of a slow disk.
 * Private types and one prototype block per file.
 */
#ifndef DM_FLAZ_H
#define DM_FLAZ_H

#include <linux/device-mapper.h>
#include <linux/types.h>

/* Codecs selectable by the compressor option, in table order. */
enum flaz_codec {
	FLAZ_CODEC_LZO,
	FLAZ_CODEC_LZ4,
	FLAZ_CODEC_ZSTD,
	FLAZ_CODEC_DEFLATE,
	FLAZ_NR_CODECS,
};

/* Table options; also the index into flaz_opts.val. */
enum flaz_opt {
	FLAZ_OPT_COMPRESSOR,
	FLAZ_OPT_EXTENT_KIB,
	FLAZ_OPT_OVERBOOK,
	FLAZ_OPT_LOW_WATERMARK,
	FLAZ_OPT_HIGH_WATERMARK,
	FLAZ_OPT_SEQ_CUTOFF_KIB,
	FLAZ_OPT_COMPRESS_MIN_SAVING,
	FLAZ_OPT_HOT_UNCOMPRESSED,
	FLAZ_OPT_COLD,
	FLAZ_NR_OPTS,
};

/*
 * Option values. Tunables change online through messages, so readers on the
 * I/O path use flaz_opt_get() (READ_ONCE); writers hold the target's lock.
 */
struct flaz_opts {
	unsigned int val[FLAZ_NR_OPTS];
	unsigned long set;	/* bit per option given by the table or a message */
};

/* opts.c: table option parsing and emission, online tunables */
int flaz_opts_parse(struct flaz_opts *o, struct dm_arg_set *as, char **error);
void flaz_opts_emit(const struct flaz_opts *o, char *result, unsigned int maxlen,
		    unsigned int *sz);
int flaz_opts_set_tunable(struct flaz_opts *o, const char *key, const char *value,
			  char **error);
const char *flaz_codec_name(enum flaz_codec c);

static inline unsigned int flaz_opt_get(const struct flaz_opts *o, enum flaz_opt opt)
{
	return READ_ONCE(o->val[opt]);
}

struct flaz_compressor;

/* codec.c: per-CPU compression streams over the kernel's lzo/lz4/zstd/zlib */
int flaz_compressor_module_init(void);
void flaz_compressor_module_exit(void);
struct flaz_compressor *flaz_compressor_create(enum flaz_codec type);
void flaz_compressor_destroy(struct flaz_compressor *c);
int flaz_compress(struct flaz_compressor *c, const void *src, void *dst,
		  unsigned int max_len);
int flaz_decompress(struct flaz_compressor *c, const void *src, unsigned int len,
		    void *dst);

/* Counters reported by status, in status order. */
enum flaz_stat {
	FLAZ_STAT_READS,
	FLAZ_STAT_WRITES,
	FLAZ_STAT_READ_HITS,
	FLAZ_STAT_READ_MISSES,
	FLAZ_STAT_WRITE_HITS,
	FLAZ_STAT_WRITE_MISSES,
	FLAZ_STAT_FILLS,
	FLAZ_STAT_BYPASSES,
	FLAZ_STAT_RAW_BLOCKS,
	FLAZ_STAT_ZERO_BLOCKS,
	FLAZ_STAT_EVICTIONS,
	FLAZ_STAT_CLEANER_RUNS,
	FLAZ_STAT_EXTENTS_CLEANED,
	FLAZ_STAT_SLOTS_MOVED,
	FLAZ_STAT_SLOTS_DROPPED,
	FLAZ_STAT_DISCARDS,
	FLAZ_STAT_HDD_ERRORS,
	FLAZ_STAT_SSD_ERRORS,
	FLAZ_NR_STATS,
};

struct flaz_stats;

/* Gauges: current state rather than event counts, supplied by the target. */
struct flaz_gauges {
	const char *mode;
	u64 blocks_cached;
	u64 logical_bytes;
	u64 physical_bytes;
	u64 free_extents;
	u64 total_extents;
	u64 table_bytes;
};

/* stats.c: per-CPU event counters and the status line */
struct flaz_stats *flaz_stats_create(void);
void flaz_stats_destroy(struct flaz_stats *s);
void flaz_stats_add(struct flaz_stats *s, enum flaz_stat stat, u64 n);
u64 flaz_stats_sum(struct flaz_stats *s, enum flaz_stat stat);
void flaz_stats_emit(struct flaz_stats *s, const struct flaz_gauges *g,
		     char *result, unsigned int maxlen, unsigned int *sz);

#endif

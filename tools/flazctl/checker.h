/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What flazctl check's parts share: the checker's state and where a problem is.
 * check.c has the command, the superblocks and the verdict; check_table.c the
 * gen blocks, the table and the slots; check_order.c the saved reclaim order;
 * check_report.c the lines of output, which all of them say things through.
 */
#ifndef FLAZCTL_CHECKER_H
#define FLAZCTL_CHECKER_H

#include "flazctl.h"
#include "ssdmeta.h"

#define MAX_SHOWN	20	/* problem lines printed; the rest are counted */
#define MAX_LISTED	1000	/* problems listed in JSON; the rest are counted */
#define PROGRESS_NS	250000000ULL	/* a progress line at most 4 times a second */

/*
 * Live slot entries queued before their extents are read (16 bytes each): memory
 * stays bounded whatever the table holds, and each extent is read once per batch.
 * The fuzzer builds with a small one so that batches end mid-table.
 */
#ifndef CHECK_BATCH
#define CHECK_BATCH	(1U << 21)
#endif

enum verdict { CLEAN = 0, IGNORABLE = 1, CORRUPT = 2 };
enum kind { K_CORRUPT, K_WARNING, K_REPAIRED, K_UNSUPPORTED };

/* Where a problem is, for --json. */
enum { W_INDEX = 1, W_LINE = 2, W_EXTENT = 4, W_OFFSET = 8 };

struct where {
	const char *area;
	const char *key;	/* W_INDEX: what index is ("copy", "block") */
	__u64 index, line;
	__u32 extent, offset;
	unsigned int has;	/* W_* */
};

#define AT(a)		(&(const struct where){ .area = (a) })
#define AT_SB(i)	(&(const struct where){ .area = "superblock", .key = "copy", \
					       .index = (i), .has = W_INDEX })
#define AT_TABLE(i)	(&(const struct where){ .area = "table", .key = "block", \
					       .index = (i), .has = W_INDEX })
#define AT_GEN(i)	(&(const struct where){ .area = "gen", .key = "block", \
					       .index = (i), .has = W_INDEX })
#define AT_ENTRY(l)	(&(const struct where){ .area = "table", .key = "block", \
					       .index = (l) / FLAZ_META_ENTRIES, .line = (l), \
					       .has = W_INDEX | W_LINE })
#define AT_EXTENT(l, x)	(&(const struct where){ .area = "extent", .line = (l), .extent = (x), \
					       .has = W_LINE | W_EXTENT })
#define AT_SLOT(l, x, o) (&(const struct where){ .area = "slot", .line = (l), .extent = (x), \
						.offset = (o), \
						.has = W_LINE | W_EXTENT | W_OFFSET })

/* A live slot entry waiting for its extent. */
struct ref {
	__u64 line;
	__u64 raw;
};

/* Marked HDD blocks [start, end). */
struct range {
	__u64 start, end;
};

struct json_object;

struct checker {
	struct ssd *ssd;
	bool repair;		/* fix what can be fixed */
	bool repair_table;	/* repairing, and the superblock fits: the table may be fixed */
	bool sb_fits;		/* the superblock matches the device: --repair may fix the table */
	bool blank;		/* no superblock: the superblock area is blank */
	const char *foreign;	/* no superblock: what the SSD holds instead, or NULL */
	char foreign_buf[80];
	bool quiet;		/* count only: the check after a repair */
	bool json;		/* problems as JSON objects, no notes */
	struct json_object *problems;	/* json: the array they go to */
	bool tty;		/* a progress line on stderr */
	bool progress_on;	/* one is shown */
	bool table_unwritten;	/* a table block could not be rewritten */
	int other_version;	/* no current copy: a copy of another format version, or -1 */
	struct sb_pair sb;
	const struct flaz_sb_info *info;	/* the current superblock */
	const unsigned char *sb_blk;
	__u64 hdd_blocks;

	__u64 count[K_UNSUPPORTED + 1];	/* problems by enum kind */
	__u64 shown, hidden;
	__u64 progress_ns;	/* when the progress line was last written */

	__u64 tb[TB_UNREADABLE + 1];	/* table blocks by state */
	struct ext_gens gens;	/* the extents' generations */
	__u64 slots, slot_bytes, zeros, empty, dropped;
	__u64 void_entries;	/* left by evictions: their extent's gen moved on */
	__u64 unusable;		/* into extents whose gen block is damaged */
	__u32 marked;		/* write-intent regions marked */
	__u64 extent_reads;

	struct range *ranges;	/* the marked regions, merged */
	__u32 nr_ranges;

	struct ref *refs;	/* live slot entries of the batch */
	size_t nr_refs, max_refs;
	__u64 *clears;		/* lines whose entries the batch clears (repairing) */
	size_t nr_clears;

	/* the extent being checked: its first round_up(used, 4 KiB) bytes */
	unsigned char *ext;
	__u32 ext_used;

	struct tblock t;	/* the table block being checked */
	struct tblock fix;	/* one whose entries are being cleared */
};


static inline const char *plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

/* check_report.c: the output. One problem (or repair): counted always, printed up to MAX_SHOWN (MAX_LISTED in JSON). */
void say(struct checker *c, enum kind k, const struct where *w, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Information that is no problem (not in JSON: its figures are in the summary). */
void note(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "WHAT: DONE/TOTAL (P%)" on a terminal, rewritten in place, at most every PROGRESS_NS. */
void progress(struct checker *c, const char *what, __u64 done, __u64 total);
/* The progress line off the terminal, before a line of output. */
void progress_clear(struct checker *c);

/* check_table.c: the batch arrays, the gen blocks, the table and its slots. */
int alloc_batch(struct checker *c);
bool check_gens(struct checker *c);
void check_table(struct checker *c);
void repair_gens(struct checker *c);

/* check_order.c: the reclaim order the current superblock names, if any. */
void check_order(struct checker *c);

#endif

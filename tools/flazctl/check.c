// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl check: verify a flaz SSD offline, as the kernel would find it at load:
 * the superblock copies, the geometry, the extents' generations (gen blocks),
 * every table block and every cached line's slot. An entry whose generation is
 * not its extent's any more was left by an eviction: it holds nothing, as at the
 * kernel's load, and its slot is not looked at. With --repair, rewrite what is
 * damaged so that it holds less but nothing wrong: a bad superblock copy from the
 * good one, a bad table block as an empty one, a bad entry as empty, a bad gen
 * block as generation 0 once every entry into its extents is cleared. Exit 0
 * clean, 3 ignorable or repaired, 4 corrupt, 1 unreadable, 2 usage error: the
 * table every command shares (flazctl.h).
 *
 * Every loop is bounded by the device: a superblock whose sizes do not fit it is
 * never used (sb_load()), and the table is walked once, its live slot entries
 * queued and sorted by extent so that each extent is read once per batch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static const char *plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

static void say(struct checker *c, enum kind k, const struct where *w, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void note(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress_clear(struct checker *c)
{
	if (c->progress_on)
		fputs("\r\033[K", stderr);
	c->progress_on = false;
}

/* "WHAT: DONE/TOTAL (P%)" on a terminal, rewritten in place, at most every PROGRESS_NS. */
static void progress(struct checker *c, const char *what, __u64 done, __u64 total)
{
	struct timespec now;
	__u64 ns;

	if (!c->tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (__u64)now.tv_sec * 1000000000ULL + now.tv_nsec;
	if (c->progress_on && ns - c->progress_ns < PROGRESS_NS && done < total)
		return;
	c->progress_ns = ns;
	c->progress_on = true;
	fprintf(stderr, "\r%s: %llu/%llu (%llu%%)\033[K", what, done, total,
		total ? done * 100 / total : 100);
}

/* One problem (or repair): counted always, printed up to MAX_SHOWN (MAX_LISTED in JSON). */
static void say(struct checker *c, enum kind k, const struct where *w, const char *fmt, ...)
{
	static const char *const kinds[] = { "corrupt", "warning", "repaired", "unsupported" };
	char msg[512];
	va_list ap;

	c->count[k]++;
	if (c->quiet)
		return;
	if (c->shown >= (c->json ? MAX_LISTED : MAX_SHOWN)) {
		c->hidden++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->json) {
		progress_clear(c);
		printf("%s: %s\n", kinds[k], msg);
		c->shown++;
		return;
	}
	printf("%s{\"kind\":\"%s\",\"area\":\"%s\"", c->shown ? "," : "", kinds[k], w->area);
	if (w->has & W_INDEX)
		printf(",\"%s\":%llu", w->key, w->index);
	if (w->has & W_LINE)
		printf(",\"line\":%llu", w->line);
	if (w->has & W_EXTENT)
		printf(",\"extent\":%u", w->extent);
	if (w->has & W_OFFSET)
		printf(",\"offset\":%u", w->offset);
	fputs(",\"message\":", stdout);
	json_string(msg);
	putchar('}');
	c->shown++;
}

/* Information that is no problem (not in JSON: its figures are in the summary). */
static void note(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet || c->json)
		return;
	progress_clear(c);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * Rewrite superblock copy @i from the current one. The kernel writes seq S to
 * copy S % 2, so the copy becomes the current one's predecessor, seq S - 1, with
 * the same contents: the kernel's next write (S + 1) goes over it, never over
 * the current one. A current copy out of that order is copied as it is.
 */
static void repair_sb(struct checker *c, unsigned int i)
{
	const struct sb_copy *cur = &c->sb.copy[c->sb.cur];
	struct flaz_sb_info info = cur->info;
	unsigned char blk[FLAZ_BLOCK_SIZE];
	int r;

	memcpy(blk, cur->blk, sizeof(blk));
	if (info.seq && (info.seq - 1) % FLAZ_SB_COPIES == i) {
		info.seq--;
		flaz_sb_encode(blk, &info, flaz_sb_bitmap(cur->blk));
	}
	r = ssd_write(c->ssd, sb_offset(i), blk, FLAZ_BLOCK_SIZE);
	if (r)
		say(c, K_CORRUPT, AT_SB(i), "cannot rewrite superblock copy %u: %s", i,
		    ssd_strerror(r));
	else
		say(c, K_REPAIRED, AT_SB(i), "superblock copy %u rewritten from copy %d (seq %llu)",
		    i, c->sb.cur, info.seq);
}

/*
 * What the SSD holds where a flaz superblock would be, named as create --cold
 * names it (a filesystem, swap, ...), or NULL when that cannot be told.
 */
static const char *foreign_content(struct checker *c)
{
	unsigned char b[SSD_PROBE_BYTES];

	if (ssd_read(c->ssd, 0, b, sizeof(b)))
		return NULL;
	return ssd_content(b, c->foreign_buf, sizeof(c->foreign_buf));
}

/* Superblock copies: one bad copy is ignorable (the other is used), none good is fatal. */
static bool check_superblocks(struct checker *c)
{
	struct sb_pair *sb = &c->sb;
	unsigned int i, blank = 0, corrupt = 0, impossible = 0;
	char why[160];

	sb_load(c->ssd, sb);
	c->other_version = sb_other_version(sb);
	for (i = 0; i < FLAZ_SB_COPIES; i++) {
		const struct sb_copy *cp = &sb->copy[i];

		blank += cp->state == SB_BLANK;
		corrupt += cp->state == SB_CORRUPT || cp->state == SB_UNREADABLE;
		if (cp->state == SB_VALID) {
			note(c, "superblock copy %u (sector %u): valid, seq %llu%s", i,
			     i * FLAZ_BLOCK_SECTORS, cp->info.seq,
			     (int)i == sb->cur ? " (current)" : "");
			if ((int)i != sb->cur && cp->info.gen != sb->copy[sb->cur].info.gen)
				note(c, "  copy %u is of an earlier format (gen %016llx)", i,
				     cp->info.gen);
			continue;
		}
		if (cp->state == SB_IMPOSSIBLE) {
			/* sound, so no other copy makes it less wrong: always told */
			impossible++;
			sb_impossible(c->ssd, cp, why, sizeof(why));
			if (sb->cur < 0)
				say(c, K_CORRUPT, AT_SB(i), "superblock copy %u (sector %u): %s", i,
				    i * FLAZ_BLOCK_SECTORS, why);
			else
				say(c, K_WARNING, AT_SB(i), "superblock copy %u (sector %u): %s; copy %d is used",
				    i, i * FLAZ_BLOCK_SECTORS, why, sb->cur);
		}
		if (sb->cur < 0)
			continue;
		if (cp->state == SB_BLANK) {
			note(c, "superblock copy %u (sector %u): blank (not written yet)", i,
			     i * FLAZ_BLOCK_SECTORS);
			continue;
		}
		if (cp->state == SB_UNREADABLE)
			say(c, K_WARNING, AT_SB(i), "superblock copy %u (sector %u): cannot read it: %s; copy %d is used",
			    i, i * FLAZ_BLOCK_SECTORS, ssd_strerror(cp->err), sb->cur);
		else if (cp->state == SB_OTHER_VERSION)
			say(c, K_WARNING, AT_SB(i), "superblock copy %u (sector %u): of format version %u; copy %d is used",
			    i, i * FLAZ_BLOCK_SECTORS, cp->version, sb->cur);
		else if (cp->state != SB_IMPOSSIBLE)
			say(c, K_WARNING, AT_SB(i), "superblock copy %u (sector %u): %s; copy %d is used",
			    i, i * FLAZ_BLOCK_SECTORS, sb_state_name(cp->state), sb->cur);
		if (c->repair)
			repair_sb(c, i);
	}
	if (sb->cur >= 0) {
		c->info = &sb->copy[sb->cur].info;
		c->sb_blk = sb->copy[sb->cur].blk;
		c->hdd_blocks = sb_hdd_blocks(c->info);
		c->marked = sb_marked_count(c->sb_blk, c->info->nr_regions);
		return true;
	}
	if (c->other_version >= 0) {
		say(c, K_UNSUPPORTED, AT_SB(c->other_version), "superblock of format version %u; this flazctl reads version %u (recreate the volume with --cold: it starts empty)",
		    sb->copy[c->other_version].version, FLAZ_SB_VERSION);
		return false;
	}
	if (impossible)
		return false;	/* told above */
	if (sb->copy[0].state == SB_UNREADABLE && sb->copy[1].state == SB_UNREADABLE) {
		say(c, K_CORRUPT, AT("superblock"), "cannot read the superblock: %s",
		    ssd_strerror(sb->copy[0].err));
	} else if (blank == FLAZ_SB_COPIES) {
		c->blank = true;
		say(c, K_CORRUPT, AT("superblock"), "no flaz superblock: the superblock area is blank (a new SSD, or never used by flaz)");
	} else if (corrupt) {
		say(c, K_CORRUPT, AT("superblock"), "both superblock copies are bad (copy 0: %s, copy 1: %s)",
		    sb_state_name(sb->copy[0].state), sb_state_name(sb->copy[1].state));
	} else {
		c->foreign = foreign_content(c);
		if (c->foreign)
			say(c, K_CORRUPT, AT("superblock"), "%s holds %s, not a flaz SSD",
			    c->ssd->path, c->foreign);
		else
			say(c, K_CORRUPT, AT("superblock"), "no flaz superblock, and the SSD is not blank (copy 0: %s, copy 1: %s)",
			    sb_state_name(sb->copy[0].state), sb_state_name(sb->copy[1].state));
	}
	return false;
}

/* The current superblock against the device it is on. */
static void check_geometry(struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	const struct flaz_geometry *g = &in->geo;

	note(c, "geometry: %llu sectors, %u KiB extents, overbook %u%%: %llu"
	     " extents from sector %llu, %llu lines in %llu"
	     " table blocks from sector %llu, %llu gen blocks from sector %llu",
	     g->ssd_sectors, in->extent_kib, in->overbook, g->nr_extents, g->data_start,
	     g->nr_lines, flaz_table_blocks(g), g->meta_start, flaz_gen_blocks(g),
	     g->gen_start);
	note(c, "volume: %llu sectors, codec %s, gen %016llx, commit %llu"
	     ", %u write-intent regions of %llu KiB",
	     in->hdd_sectors, codec_name(in->codec), in->gen, in->commit, in->nr_regions,
	     4ULL << in->region_shift);
	c->sb_fits = true;
	/* sb_load() took no copy for an SSD larger than this one: this is a smaller one */
	if (c->ssd->bytes != g->ssd_sectors << FLAZ_SECTOR_SHIFT) {
		say(c, K_CORRUPT, AT("superblock"), "the superblock is for an SSD of %llu sectors, %s has %llu (the kernel refuses it)",
		    g->ssd_sectors, c->ssd->path, c->ssd->bytes >> FLAZ_SECTOR_SHIFT);
		c->sb_fits = false;
	}
	if (in->codec >= NR_CODECS) {
		say(c, K_CORRUPT, AT("superblock"), "the superblock names an unknown codec (%u)",
		    in->codec);
		c->sb_fits = false;
	}
	if (in->cold_codec > NR_CODECS) {
		say(c, K_CORRUPT, AT("superblock"), "the superblock names an unknown cold codec (%u)",
		    in->cold_codec - 1);
		c->sb_fits = false;
	}
	c->repair_table = c->repair && c->sb_fits;
	if (c->repair && !c->repair_table)
		note(c, "not repairing the table: the superblock does not match this SSD");
}

/*
 * The marked write-intent regions as ranges of HDD blocks, neighbours merged and
 * clipped to the volume: at most FLAZ_MAX_REGIONS / 2 whatever the header says.
 */
static int marked_ranges(struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	__u64 start, end;
	__u32 r;

	c->ranges = malloc((FLAZ_MAX_REGIONS / 2 + 1) * sizeof(*c->ranges));
	if (!c->ranges)
		return -ENOMEM;
	for (r = 0; r < in->nr_regions && r < FLAZ_MAX_REGIONS; r++) {
		if (!sb_marked(c->sb_blk, r))
			continue;
		start = (__u64)r << in->region_shift;
		if (start >= c->hdd_blocks)
			break;
		end = ((__u64)r + 1) << in->region_shift;
		if (end > c->hdd_blocks)
			end = c->hdd_blocks;
		if (c->nr_ranges && c->ranges[c->nr_ranges - 1].end == start)
			c->ranges[c->nr_ranges - 1].end = end;
		else
			c->ranges[c->nr_ranges++] = (struct range){ start, end };
	}
	return 0;
}

static bool region_marked(const struct checker *c, __u64 block)
{
	__u64 r = block >> c->info->region_shift;

	return r < c->info->nr_regions && sb_marked(c->sb_blk, r);
}

/*
 * Whether the kernel drops line @line's (valid) entry @e at load, by the rule of
 * its entry_marked(): the entry's block is in a marked region, or for a cut tag,
 * any block the entry alone may stand for: first, first + period, ... below
 * hdd_blocks. The kernel walks those (it knows the HDD's real size); here each
 * marked range is asked for its first such block, so no volume size in a header
 * makes this long.
 */
static bool entry_marked(const struct checker *c, __u64 line, const struct flaz_entry_info *e)
{
	__u64 nr_lines = c->info->geo.nr_lines, period, first, block;
	__u32 i;

	if (entry_block(e, c->info, line, &block))
		return region_marked(c, block);
	period = nr_lines << FLAZ_TAG_BITS;
	first = e->tag * nr_lines + line;	/* a cut tag is below 2^FLAZ_TAG_BITS */
	for (i = 0; i < c->nr_ranges; i++) {
		const struct range *r = &c->ranges[i];

		block = first;
		if (r->start > first)
			block = r->start + (first + period - r->start % period) % period;
		if (block < r->end)
			return true;
	}
	return false;
}

/* A cached line that the kernel will load: counted, and dropped if its region is marked. */
static void count_live(struct checker *c, __u64 line, const struct flaz_entry_info *e)
{
	if (e->units == FLAZ_ENTRY_ZERO_UNITS) {
		c->zeros++;
	} else {
		c->slots++;
		c->slot_bytes += e->units * FLAZ_SLOT_ALIGN;
	}
	if (c->marked && entry_marked(c, line, e))
		c->dropped++;
}

/* Read extent @x: its header, then only what the kernel wrote, round_up(used, 4 KiB). */
static int load_extent(struct checker *c, __u32 x)
{
	const struct flaz_geometry *g = &c->info->geo;
	__u32 bytes = g->extent_sectors << FLAZ_SECTOR_SHIFT, nr_slots, want;
	__u64 off = extent_offset(g, x);
	int r;

	c->extent_reads++;
	r = ssd_read(c->ssd, off, c->ext, FLAZ_BLOCK_SIZE);
	if (r)
		return r;
	if (flaz_extent_decode(c->ext, bytes, x, &c->ext_used, &nr_slots))
		return -EILSEQ;
	want = (c->ext_used + FLAZ_BLOCK_SIZE - 1) & ~(FLAZ_BLOCK_SIZE - 1);
	if (want <= FLAZ_BLOCK_SIZE)
		return 0;
	return ssd_read(c->ssd, off + FLAZ_BLOCK_SIZE, c->ext + FLAZ_BLOCK_SIZE,
			want - FLAZ_BLOCK_SIZE);
}

/*
 * Whether the slot entry @e of @line points at is that line's block, as the entry
 * says; @err is how loading its extent went (load_extent()).
 */
static bool check_slot(struct checker *c, __u64 line, const struct flaz_entry_info *e, int err)
{
	const struct flaz_sb_info *in = c->info;
	__u64 nr_lines = in->geo.nr_lines;
	__u32 bytes = e->units * FLAZ_SLOT_ALIGN;
	struct flaz_slot_info s;

	if (err == -EILSEQ) {
		say(c, K_CORRUPT, AT_EXTENT(line, e->ext), "line %llu: extent %u has a bad header",
		    line, e->ext);
		return false;
	}
	if (err) {
		say(c, K_CORRUPT, AT_EXTENT(line, e->ext), "line %llu: cannot read extent %u: %s",
		    line, e->ext, ssd_strerror(err));
		return false;
	}
	if (e->off + bytes > c->ext_used) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u (%u bytes) is past the extent's %u used bytes",
		    line, e->ext, e->off, bytes, c->ext_used);
		return false;
	}
	if (flaz_slot_decode(c->ext + e->off, bytes, &s)) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: no valid slot at extent %u offset %u (bad magic, length, flags or checksum)",
		    line, e->ext, e->off);
		return false;
	}
	if (s.bytes != bytes) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u is %u bytes, the entry says %u",
		    line, e->ext, e->off, s.bytes, bytes);
		return false;
	}
	if (s.line != line) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u was written for line %u",
		    line, e->ext, e->off, s.line);
		return false;
	}
	if (s.block % nr_lines != line ||
	    ((s.block / nr_lines) & ((1ULL << FLAZ_TAG_BITS) - 1)) != e->tag) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u holds block %llu, not one of tag %llu on this line",
		    line, e->ext, e->off, s.block, e->tag);
		return false;
	}
	if (s.block >= c->hdd_blocks) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u holds block %llu, past the volume's %llu blocks",
		    line, e->ext, e->off, s.block, c->hdd_blocks);
		return false;
	}
	if (!!e->cold != (s.codec + 1U == in->cold_codec && s.codec != in->codec)) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u is %s, the entry says it is%s in the cold codec",
		    line, e->ext, e->off, codec_name(s.codec), e->cold ? "" : " not");
		return false;
	}
	if (s.codec != in->codec && s.codec + 1U != in->cold_codec) {
		say(c, K_CORRUPT, AT_SLOT(line, e->ext, e->off), "line %llu: slot at extent %u offset %u is %s, the superblock says %s (cold: %s)",
		    line, e->ext, e->off, codec_name(s.codec), codec_name(in->codec),
		    in->cold_codec ? codec_name(in->cold_codec - 1) : "none");
		return false;
	}
	return true;
}

static void write_tblock(struct checker *c, __u32 i, __u64 commit, const __u64 *entries,
			 const char *what)
{
	unsigned char blk[FLAZ_BLOCK_SIZE];
	int r;

	flaz_meta_encode(blk, c->info->gen, commit, i, entries);
	r = ssd_write(c->ssd, table_offset(&c->info->geo, i), blk, FLAZ_BLOCK_SIZE);
	if (r) {
		say(c, K_CORRUPT, AT_TABLE(i), "cannot rewrite table block %u: %s", i,
		    ssd_strerror(r));
		c->table_unwritten = true;
	} else {
		say(c, K_REPAIRED, AT_TABLE(i), "table block %u: %s", i, what);
	}
}

static __u32 ref_extent(const struct flaz_geometry *g, const struct ref *r)
{
	struct flaz_entry_info e;

	flaz_entry_unpack(r->raw, g, &e);
	return e.ext;
}

/* The geometry cmp_ref() unpacks entries by (qsort() passes it nothing). */
static const struct flaz_geometry *sort_geo;

/* By extent, then offset: each extent's slots together, in the order they lie. */
static int cmp_ref(const void *a, const void *b)
{
	struct flaz_entry_info x, y;

	flaz_entry_unpack(((const struct ref *)a)->raw, sort_geo, &x);
	flaz_entry_unpack(((const struct ref *)b)->raw, sort_geo, &y);
	if (x.ext != y.ext)
		return x.ext < y.ext ? -1 : 1;
	return x.off < y.off ? -1 : x.off > y.off;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The queued slots, extent by extent, each extent read once. */
static void check_extents(struct checker *c)
{
	const struct flaz_geometry *g = &c->info->geo;
	struct flaz_entry_info e;
	size_t i, j, k;
	__u64 done = 0, total = 0;
	__u32 x;
	int err;

	sort_geo = g;
	qsort(c->refs, c->nr_refs, sizeof(*c->refs), cmp_ref);
	for (i = 0; i < c->nr_refs; i++)
		total += !i || ref_extent(g, &c->refs[i]) != ref_extent(g, &c->refs[i - 1]);
	for (i = 0; i < c->nr_refs; i = j, done++) {
		progress(c, "checking extents", done, total);
		x = ref_extent(g, &c->refs[i]);
		for (j = i + 1; j < c->nr_refs && ref_extent(g, &c->refs[j]) == x; j++)
			;
		err = load_extent(c, x);
		for (k = i; k < j; k++) {
			flaz_entry_unpack(c->refs[k].raw, g, &e);
			if (check_slot(c, c->refs[k].line, &e, err))
				count_live(c, c->refs[k].line, &e);
			else if (c->repair_table)
				c->clears[c->nr_clears++] = c->refs[k].line;
		}
	}
	progress(c, "checking extents", total, total);
	c->nr_refs = 0;
}

/* Clear the queued bad entries, one rewrite per table block. */
static void clear_entries(struct checker *c)
{
	size_t i, j, k;
	__u64 blk;
	char what[64];

	qsort(c->clears, c->nr_clears, sizeof(*c->clears), cmp_u64);
	for (i = 0; i < c->nr_clears; i = j) {
		blk = c->clears[i] / FLAZ_META_ENTRIES;
		for (j = i + 1; j < c->nr_clears && c->clears[j] / FLAZ_META_ENTRIES == blk; j++)
			;
		/* read again: an earlier batch may have cleared some of its entries already */
		tblock_read(c->ssd, c->info, blk, &c->fix);
		if (c->fix.state != TB_VALID) {
			say(c, K_CORRUPT, AT_TABLE(blk), "cannot clear entries of table block %llu: it reads as %s now",
			    blk, tb_state_name(c->fix.state));
			c->table_unwritten = true;
			continue;
		}
		for (k = i; k < j; k++)
			c->fix.entries[c->clears[k] % FLAZ_META_ENTRIES] = 0;
		snprintf(what, sizeof(what), "cleared %zu bad entr%s (those lines are cold now)",
			 j - i, j - i == 1 ? "y" : "ies");
		write_tblock(c, blk, c->fix.commit, c->fix.entries, what);
	}
	c->nr_clears = 0;
}

/* Finish the batch: check its slots, then clear what was found bad. */
static void flush(struct checker *c)
{
	check_extents(c);
	if (c->nr_clears)
		clear_entries(c);
}

/* Every entry of the valid table block @i: live slots are queued for check_extents(). */
static void check_entries(struct checker *c, __u32 i)
{
	const struct flaz_sb_info *in = c->info;
	__u64 first = (__u64)i * FLAZ_META_ENTRIES, line;
	struct flaz_entry_info e;
	enum entry_gen gen;
	unsigned int k;

	for (k = 0; k < FLAZ_META_ENTRIES; k++) {
		line = first + k;
		flaz_entry_unpack(c->t.entries[k], &in->geo, &e);
		if (!e.units) {
			c->empty += line < in->geo.nr_lines;
			continue;
		}
		if (line >= in->geo.nr_lines) {
			say(c, K_CORRUPT, AT_ENTRY(line), "table block %u: an entry for line %llu, past the last line (%llu)",
			    i, line, in->geo.nr_lines - 1);
		} else if (!flaz_entry_valid(&e, &in->geo, line, c->hdd_blocks)) {
			say(c, K_CORRUPT, AT_ENTRY(line), "line %llu: entry %016llx is out of range (%s)",
			    line, c->t.entries[k],
			    e.units == FLAZ_ENTRY_ZERO_UNITS ? "a zero block past the volume" :
			    "slot size, extent, offset or tag");
		} else if (e.units == FLAZ_ENTRY_ZERO_UNITS) {
			count_live(c, line, &e);
			continue;
		} else if ((gen = entry_gen(&c->gens, &e)) == EG_LIVE) {
			if (c->nr_refs == c->max_refs)
				flush(c);
			c->refs[c->nr_refs++] = (struct ref){ line, c->t.entries[k] };
			continue;
		} else if (gen == EG_VOID) {
			/* left by an eviction: holds nothing, its slot may be another's now */
			c->void_entries++;
			continue;
		} else {
			c->unusable++;	/* its gen block was reported */
		}
		if (c->repair_table) {
			/* room for the batch's slots too: check_extents() adds their lines */
			if (c->nr_clears == c->max_refs)
				flush(c);
			c->clears[c->nr_clears++] = line;
		}
	}
}

/* The last extent of gen block @i. */
static __u64 gen_block_last(const struct checker *c, __u64 i)
{
	__u64 last = (i + 1) * FLAZ_GEN_ENTRIES - 1;

	return last < c->info->geo.nr_extents ? last : c->info->geo.nr_extents - 1;
}

/*
 * The gen blocks: each extent's generation. A damaged one leaves its extents'
 * generations unknown: every entry into them is unusable (cleared when repairing,
 * then the block is rewritten by repair_gens()).
 */
static bool check_gens(struct checker *c)
{
	const struct flaz_geometry *g = &c->info->geo;
	struct ext_gens *eg = &c->gens;
	__u64 i, first;

	if (gens_load(c->ssd, c->info, eg)) {
		say(c, K_CORRUPT, AT("memory"), "out of memory");
		return false;
	}
	for (i = 0; i < eg->nr_blocks; i++) {
		first = i * FLAZ_GEN_ENTRIES;
		switch (eg->state[i]) {
		case TB_VALID:
		case TB_UNWRITTEN:
		case TB_VOID:
		case TB_FOREIGN:	/* holds nothing: its extents are at generation 0 */
			continue;
		case TB_BAD_INDEX:
			say(c, K_CORRUPT, AT_GEN(i), "gen block %llu (sector %llu): holds the generations of gen block %u; entries into extents %llu-%llu are unusable",
			    i, gen_offset(g, i) >> FLAZ_SECTOR_SHIFT, eg->index[i], first,
			    gen_block_last(c, i));
			break;
		case TB_UNREADABLE:
			say(c, K_CORRUPT, AT_GEN(i), "gen block %llu (sector %llu): cannot read it: %s; entries into extents %llu-%llu are unusable",
			    i, gen_offset(g, i) >> FLAZ_SECTOR_SHIFT, ssd_strerror(eg->err[i]),
			    first, gen_block_last(c, i));
			break;
		default:
			say(c, K_CORRUPT, AT_GEN(i), "gen block %llu (sector %llu): %s; entries into extents %llu-%llu are unusable",
			    i, gen_offset(g, i) >> FLAZ_SECTOR_SHIFT, tb_state_name(eg->state[i]),
			    first, gen_block_last(c, i));
			break;
		}
	}
	if (eg->count[TB_FOREIGN])
		note(c, "note: %llu gen block%s neither blank nor of a flaz format (left from before this format): %s extents at generation 0",
		     eg->count[TB_FOREIGN], eg->count[TB_FOREIGN] == 1 ? " is" : "s are",
		     eg->count[TB_FOREIGN] == 1 ? "its" : "their");
	return true;
}

/*
 * Rewrite each damaged gen block with generation 0 for its extents, once the
 * table holds no entry into them any more (check_entries() cleared them).
 */
static void repair_gens(struct checker *c)
{
	static const __u16 zero[FLAZ_GEN_ENTRIES];
	const struct ext_gens *eg = &c->gens;
	__u64 i;
	int r;

	if (!c->repair_table || !gens_bad(eg))
		return;
	if (c->table_unwritten) {
		say(c, K_CORRUPT, AT("gen"), "not rewriting the damaged gen blocks: the table still holds entries into their extents");
		return;
	}
	for (i = 0; i < eg->nr_blocks; i++) {
		if (!tb_damaged(eg->state[i]))
			continue;
		flaz_gen_encode(c->t.blk, c->info->gen, c->info->commit, i, zero);
		r = ssd_write(c->ssd, gen_offset(&c->info->geo, i), c->t.blk, FLAZ_BLOCK_SIZE);
		if (r)
			say(c, K_CORRUPT, AT_GEN(i), "cannot rewrite gen block %llu: %s", i,
			    ssd_strerror(r));
		else
			say(c, K_REPAIRED, AT_GEN(i), "gen block %llu: rewritten at generation 0 (no entry into extents %llu-%llu is left)",
			    i, i * FLAZ_GEN_ENTRIES, gen_block_last(c, i));
	}
}

/* Every table block in order; the live slots they hold are checked in batches. */
static void check_table(struct checker *c)
{
	static const __u64 empty[FLAZ_META_ENTRIES];
	const struct flaz_geometry *g = &c->info->geo;
	__u64 n = flaz_table_blocks(g), i, first;
	struct tblock *t = &c->t;

	for (i = 0; i < n; i++) {
		progress(c, "checking table", i, n);
		tblock_read(c->ssd, c->info, i, t);
		c->tb[t->state]++;
		first = i * FLAZ_META_ENTRIES;
		/* a block that holds nothing: all its lines are empty */
		if (t->state != TB_VALID)
			c->empty += i < n - 1 ? FLAZ_META_ENTRIES : g->nr_lines - first;
		switch (t->state) {
		case TB_VALID:
			check_entries(c, i);
			continue;
		case TB_UNWRITTEN:
		case TB_VOID:
		case TB_FOREIGN:	/* noted once below */
			continue;
		case TB_BAD_INDEX:
			say(c, K_CORRUPT, AT_TABLE(i), "table block %llu (sector %llu): holds the entries of table block %u; lines %llu-%llu are lost",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, t->index, first,
			    first + FLAZ_META_ENTRIES - 1);
			break;
		case TB_UNREADABLE:
			say(c, K_CORRUPT, AT_TABLE(i), "table block %llu (sector %llu): cannot read it: %s",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, ssd_strerror(t->err));
			break;
		default:
			say(c, K_CORRUPT, AT_TABLE(i), "table block %llu (sector %llu): %s; lines %llu-%llu are lost",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, tb_state_name(t->state),
			    first, first + FLAZ_META_ENTRIES - 1);
			break;
		}
		if (c->repair_table)
			write_tblock(c, i, c->info->commit, empty, "rewritten as an empty block");
	}
	progress(c, "checking table", n, n);
	flush(c);
	if (c->tb[TB_FOREIGN])
		note(c, "note: %llu table block%s neither blank nor of a flaz format (left from before this format, which the kernel does not clear): %s empty",
		     c->tb[TB_FOREIGN], c->tb[TB_FOREIGN] == 1 ? " is" : "s are",
		     c->tb[TB_FOREIGN] == 1 ? "it counts as" : "they count as");
}

/* The write-intent bitmap: marked regions are dropped by the kernel at load. */
static void check_intent(struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	__u32 past = sb_marked_past(c->sb_blk, in->nr_regions);
	char list[160];

	if (past)
		say(c, K_WARNING, AT("bitmap"), "the write-intent bitmap has %u bit%s set past its %u regions",
		    past, plural(past), in->nr_regions);
	format_regions(c->sb_blk, in->nr_regions, list, sizeof(list));
	if (c->marked)
		say(c, K_WARNING, AT("bitmap"), "%s: %u write-intent region%s marked (%s); the kernel drops the %llu cached line%s in them at the next load",
		    in->flags & FLAZ_SB_CLEAN ? "marked clean but regions are marked" :
		    "unclean shutdown", c->marked, plural(c->marked), list, c->dropped,
		    plural(c->dropped));
	else if (!(in->flags & FLAZ_SB_CLEAN))
		say(c, K_WARNING, AT("bitmap"), "unclean shutdown (or the volume is live): no write-intent region is marked, no line will be dropped");
}

static enum verdict verdict(const struct checker *c)
{
	if (c->count[K_CORRUPT] || c->count[K_UNSUPPORTED])
		return CORRUPT;
	return c->count[K_WARNING] || c->count[K_REPAIRED] ? IGNORABLE : CLEAN;
}

static __u64 tb_bad(const __u64 *n)
{
	return n[TB_BAD_MAGIC] + n[TB_BAD_CRC] + n[TB_BAD_INDEX] + n[TB_UNREADABLE];
}

static void summary(const struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	const __u64 *gb = c->gens.count;

	if (c->hidden)
		printf("... and %llu more problem lines not shown\n", c->hidden);
	if (in)
		printf("summary: copy %d current (seq %llu); %llu table blocks (%llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad); %llu gen blocks (%llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad); %llu slots (%llu bytes), %llu zero blocks, %llu empty lines, %llu void entries (left by evictions), %llu unusable entries; %llu extent reads\n",
		       c->sb.cur, in->seq, flaz_table_blocks(&in->geo), c->tb[TB_VALID],
		       c->tb[TB_UNWRITTEN], c->tb[TB_VOID], c->tb[TB_FOREIGN], tb_bad(c->tb),
		       flaz_gen_blocks(&in->geo), gb[TB_VALID], gb[TB_UNWRITTEN], gb[TB_VOID],
		       gb[TB_FOREIGN], tb_bad(gb), c->slots, c->slot_bytes, c->zeros,
		       c->empty, c->void_entries, c->unusable, c->extent_reads);
}

static void blocks_json(const char *key, __u64 total, const __u64 *n)
{
	printf(",\"%s\":{\"total\":%llu,\"valid\":%llu,\"unwritten\":%llu,\"void\":%llu"
	       ",\"foreign\":%llu,\"bad\":%llu}", key, total, n[TB_VALID], n[TB_UNWRITTEN],
	       n[TB_VOID], n[TB_FOREIGN], tb_bad(n));
}

/* The JSON object's figures after the problems: see flazctl(8). */
static void summary_json(const struct checker *c)
{
	const struct flaz_sb_info *in = c->info;

	printf("],\"problems_not_listed\":%llu,\"counts\":{\"corrupt\":%llu,\"warning\":%llu"
	       ",\"repaired\":%llu,\"unsupported\":%llu}", c->hidden, c->count[K_CORRUPT],
	       c->count[K_WARNING], c->count[K_REPAIRED], c->count[K_UNSUPPORTED]);
	if (!in) {
		fputs(",\"current\":null,\"summary\":null", stdout);
		return;
	}
	printf(",\"current\":%d,\"summary\":{\"seq\":%llu", c->sb.cur, in->seq);
	blocks_json("table_blocks", flaz_table_blocks(&in->geo), c->tb);
	blocks_json("gen_blocks", flaz_gen_blocks(&in->geo), c->gens.count);
	printf(",\"entries\":{\"slot\":%llu,\"zero\":%llu,\"empty\":%llu,\"void\":%llu"
	       ",\"unusable\":%llu},\"slot_bytes\":%llu,\"extent_reads\":%llu"
	       ",\"marked_regions\":%u,\"dropped_lines\":%llu}",
	       c->slots, c->zeros, c->empty, c->void_entries, c->unusable, c->slot_bytes,
	       c->extent_reads, c->marked, c->dropped);
}

/* The batch arrays, for at most as many entries as the table has lines. */
static int alloc_batch(struct checker *c)
{
	__u64 lines = c->info->geo.nr_lines;

	c->max_refs = lines < CHECK_BATCH ? lines : CHECK_BATCH;
	c->refs = malloc((c->max_refs + 1) * sizeof(*c->refs));
	/* a batch's bad entries and its slots' */
	if (c->repair_table)
		c->clears = malloc((2 * c->max_refs + 1) * sizeof(*c->clears));
	c->ext = malloc(c->info->geo.extent_sectors << FLAZ_SECTOR_SHIFT);
	if (!c->refs || (c->repair_table && !c->clears) || !c->ext)
		return -ENOMEM;
	return c->marked ? marked_ranges(c) : 0;
}

/* One pass over the SSD; returns its verdict. */
static enum verdict run(struct checker *c)
{
	if (!check_superblocks(c))
		return verdict(c);
	check_geometry(c);
	if (alloc_batch(c))
		say(c, K_CORRUPT, AT("memory"), "out of memory");
	else if (check_gens(c)) {
		check_table(c);
		repair_gens(c);
		check_intent(c);
	}
	progress_clear(c);
	free(c->refs);
	free(c->clears);
	free(c->ext);
	free(c->ranges);
	gens_free(&c->gens);
	c->refs = NULL;
	c->clears = NULL;
	c->ext = NULL;
	c->ranges = NULL;
	return verdict(c);
}

struct check_opts {
	const char *path;
	bool repair;
	bool json;
};

static int parse_check(int argc, char **argv, struct check_opts *o)
{
	static const struct option lo[] = {
		{ "repair", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'r') {
			o->repair = true;
		} else if (c == 'j') {
			o->json = true;
		} else {
			return bad_option(argv);
		}
	}
	if (optind + 1 != argc)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("check"));
	o->path = argv[optind];
	return EXIT_OK;
}

/* After repairs: a quiet second pass, writing nothing, tells whether anything is left. */
static enum verdict recheck(struct checker *c)
{
	struct checker *again;
	enum verdict v;

	if (fsync(c->ssd->fd)) {
		say(c, K_CORRUPT, AT("ssd"), "cannot flush the repairs to %s: %s", c->ssd->path,
		    strerror(errno));
		return CORRUPT;
	}
	again = calloc(1, sizeof(*again));
	if (!again)
		return CORRUPT;
	again->ssd = c->ssd;
	again->quiet = true;
	again->tty = c->tty;
	v = run(again) == CORRUPT ? CORRUPT : IGNORABLE;
	free(again);
	return v;
}

/*
 * Why --repair can fix none of @c's problems, or NULL when it may fix some: it
 * rewrites a bad superblock copy from the sound one and the table under a
 * superblock that fits the SSD, so without either there is nothing it can do.
 */
static const char *unrepairable(const struct checker *c)
{
	if (!c->info)
		return "no superblock copy is sound (recreate the volume with --cold: it starts empty)";
	if (!c->sb_fits)
		return "the superblock does not match this SSD";
	return NULL;
}

static void result(const struct checker *c, enum verdict v, bool repair)
{
	const char *why;

	if (c->count[K_REPAIRED] && v == CORRUPT) {
		printf("result: still corrupt after %llu repair%s: run flazctl check again to see what is left\n",
		       c->count[K_REPAIRED], plural(c->count[K_REPAIRED]));
	} else if (c->count[K_REPAIRED]) {
		printf("result: repaired (%llu repair%s)\n", c->count[K_REPAIRED],
		       plural(c->count[K_REPAIRED]));
	} else if (c->count[K_UNSUPPORTED]) {
		printf("result: format version %u, which this flazctl does not read (recreate the volume with --cold)\n",
		       c->sb.copy[c->other_version].version);
	} else if (v == CORRUPT && c->blank) {
		printf("result: not a flaz SSD: its superblock area is blank (a new SSD, or never used by flaz)\n");
	} else if (v == CORRUPT && c->foreign) {
		printf("result: not a flaz SSD: %s holds %s\n", c->ssd->path, c->foreign);
	} else if (v == CORRUPT) {
		why = unrepairable(c);
		printf("result: corrupt (%llu problem%s", c->count[K_CORRUPT],
		       plural(c->count[K_CORRUPT]));
		if (why)
			printf("), none repairable: %s\n", why);
		else
			printf("%s)\n", repair ? ", none repairable" :
			       "; flazctl check --repair may fix some");
	} else if (v == IGNORABLE) {
		printf("result: %llu warning%s, nothing corrupt\n", c->count[K_WARNING],
		       plural(c->count[K_WARNING]));
	} else {
		printf("result: clean\n");
	}
}

/* The exit code of verdict @v. */
static int verdict_code(enum verdict v)
{
	if (v == CORRUPT)
		return EXIT_CORRUPT;
	return v == IGNORABLE ? EXIT_PROBLEMS : EXIT_OK;
}

static const char *verdict_name(const struct checker *c, enum verdict v)
{
	if (c->count[K_UNSUPPORTED] && !c->count[K_REPAIRED])
		return "unsupported";
	if (v == CORRUPT)
		return "corrupt";
	if (c->count[K_REPAIRED])
		return "repaired";
	return v == IGNORABLE ? "ignorable" : "clean";
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	struct checker *c;
	struct ssd ssd;
	enum verdict v;
	int r;

	r = parse_check(argc, argv, &o);
	if (r)
		return r;
	r = ssd_open(&ssd, o.path, o.repair, EXIT_FAIL);
	if (!r) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			ssd_close(&ssd);
			r = fail(EXIT_FAIL, "out of memory");
		}
	}
	if (r) {
		if (o.json) {
			json_object_start();
			fputs(",\"device\":", stdout);
			json_string(o.path);
			printf(",\"verdict\":\"unreadable\",\"damaged\":null,\"exit_code\":%d}\n", r);
		}
		return r;
	}
	c->ssd = &ssd;
	c->repair = o.repair;
	c->json = o.json;
	c->tty = isatty(STDERR_FILENO);
	if (o.json) {
		json_object_start();
		fputs(",\"device\":", stdout);
		json_string(o.path);
		printf(",\"size_sectors\":%llu,\"in_use\":%s,\"repair\":%s,\"problems\":[",
		       ssd.bytes >> FLAZ_SECTOR_SHIFT, ssd.busy ? "true" : "false",
		       o.repair ? "true" : "false");
	} else {
		printf("checking %s (%llu sectors)%s\n", o.path, ssd.bytes >> FLAZ_SECTOR_SHIFT,
		       o.repair ? ", repairing" : "");
		if (ssd.busy)
			printf("note: %s is in use (a live volume?): it may change while it is read\n",
			       o.path);
	}
	v = run(c);
	if (c->count[K_REPAIRED])
		v = recheck(c);
	if (o.json) {
		summary_json(c);
		printf(",\"verdict\":\"%s\",\"damaged\":%s,\"exit_code\":%d}\n",
		       verdict_name(c, v), v == CORRUPT ? "true" : "false", verdict_code(v));
	} else {
		summary(c);
		result(c, v, o.repair);
	}
	free(c);
	ssd_close(&ssd);
	return verdict_code(v);
}

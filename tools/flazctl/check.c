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
 * This file has the command, the superblocks and the verdict; the gen blocks,
 * the table and the slots are check_table.c's, the saved reclaim order
 * check_order.c's, and the lines of output check_report.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "jsonout.h"

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

static struct json_object *blocks_json(__u64 total, const __u64 *n)
{
	struct json_object *o = json_object_new_object();

	jadd_u64s(o, (const struct jkv[]){
		{ "total", total }, { "valid", n[TB_VALID] }, { "unwritten", n[TB_UNWRITTEN] },
		{ "void", n[TB_VOID] }, { "foreign", n[TB_FOREIGN] }, { "bad", tb_bad(n) },
		{ NULL } });
	return o;
}

/* The JSON object's figures after the problems: see flazctl(8). */
static void summary_json(const struct checker *c, struct json_object *o)
{
	const struct flaz_sb_info *in = c->info;
	struct json_object *counts = json_object_new_object(), *sum, *e;

	jadd_u64(o, "problems_not_listed", c->hidden);
	jadd_u64s(counts, (const struct jkv[]){
		{ "corrupt", c->count[K_CORRUPT] }, { "warning", c->count[K_WARNING] },
		{ "repaired", c->count[K_REPAIRED] }, { "unsupported", c->count[K_UNSUPPORTED] },
		{ NULL } });
	jadd(o, "counts", counts);
	if (!in) {
		jadd(o, "current", NULL);
		jadd(o, "summary", NULL);
		return;
	}
	jadd(o, "current", json_object_new_int(c->sb.cur));
	sum = json_object_new_object();
	jadd_u64(sum, "seq", in->seq);
	jadd(sum, "table_blocks", blocks_json(flaz_table_blocks(&in->geo), c->tb));
	jadd(sum, "gen_blocks", blocks_json(flaz_gen_blocks(&in->geo), c->gens.count));
	e = json_object_new_object();
	jadd_u64s(e, (const struct jkv[]){
		{ "slot", c->slots }, { "zero", c->zeros }, { "empty", c->empty },
		{ "void", c->void_entries }, { "unusable", c->unusable }, { NULL } });
	jadd(sum, "entries", e);
	jadd_u64s(sum, (const struct jkv[]){
		{ "slot_bytes", c->slot_bytes }, { "extent_reads", c->extent_reads },
		{ "marked_regions", c->marked }, { "dropped_lines", c->dropped }, { NULL } });
	jadd(o, "summary", sum);
}

/* The JSON object's first keys, for the device at @path. */
static struct json_object *head_json(const char *path)
{
	struct json_object *o = jobj();

	jadd(o, "device", jstr(path));
	return o;
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
		if (c->sb_fits)
			check_order(c);
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
	struct json_object *j = NULL;
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
			j = head_json(o.path);
			jadd(j, "verdict", jstr("unreadable"));
			jadd(j, "damaged", NULL);
			jadd(j, "exit_code", json_object_new_int(r));
			jput(j);
		}
		return r;
	}
	c->ssd = &ssd;
	c->repair = o.repair;
	c->json = o.json;
	c->tty = isatty(STDERR_FILENO);
	if (o.json) {
		j = head_json(o.path);
		jadd_u64(j, "size_sectors", ssd.bytes >> FLAZ_SECTOR_SHIFT);
		jadd(j, "in_use", json_object_new_boolean(ssd.busy));
		jadd(j, "repair", json_object_new_boolean(o.repair));
		c->problems = json_object_new_array();
		jadd(j, "problems", c->problems);
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
		summary_json(c, j);
		jadd(j, "verdict", jstr(verdict_name(c, v)));
		jadd(j, "damaged", json_object_new_boolean(v == CORRUPT));
		jadd(j, "exit_code", json_object_new_int(verdict_code(v)));
		jput(j);
	} else {
		summary(c);
		result(c, v, o.repair);
	}
	free(c);
	ssd_close(&ssd);
	return verdict_code(v);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl dump: what a flaz SSD holds, for people or as JSON: both superblock
 * copies field by field, a summary of the extents' generations (gen blocks) and
 * of the table (with --entries, every cached line). It reads the superblock, the
 * gen blocks and the table only, never the extents; `flazctl check` is the one
 * that verifies slots. With --superblock, as bcache-super-show, it reads the two
 * superblock copies and nothing else.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flazctl.h"
#include "ssdmeta.h"

#define MAX_BAD_LISTED	64	/* bad table (gen) block numbers listed in JSON */

struct dump_opts {
	const char *path;
	bool json;
	bool entries;
	bool superblock;	/* the superblock copies only: no gen block, no table */
};

struct table_sum {
	__u64 tb[TB_UNREADABLE + 1];
	__u64 slots, zeros, empty, invalid, slot_bytes, extents;
	__u64 void_entries;	/* left by evictions: their extent's gen moved on */
	__u64 unusable;		/* into extents whose gen block is damaged */
	__u64 bad[MAX_BAD_LISTED];
	unsigned int nr_bad;
	struct ext_gens gens;
};

static void uuid_string(const unsigned char *u, char *buf)
{
	int i, n = 0;

	for (i = 0; i < 16; i++)
		n += sprintf(buf + n, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
			     u[i]);
}

static void print_copy_human(const struct ssd *s, const struct sb_pair *sb, unsigned int i)
{
	const struct sb_copy *c = &sb->copy[i];
	const struct flaz_sb_info *in = &c->info;
	const struct flaz_geometry *g = &in->geo;
	__u32 marked;
	char uuid[40], list[160], why[160];

	printf("superblock copy %u (sector %u): ", i, i * FLAZ_BLOCK_SECTORS);
	if (c->state == SB_OTHER_VERSION)
		printf("format version %u (this flazctl reads version %u)", c->version,
		       FLAZ_SB_VERSION);
	else
		printf("%s%s", sb_state_name(c->state), (int)i == sb->cur ? ", current" : "");
	if (c->state == SB_UNREADABLE)
		printf(" (%s)", ssd_strerror(c->err));
	if (c->state == SB_IMPOSSIBLE) {
		sb_impossible(s, c, why, sizeof(why));
		printf(" (%s)", why);
	}
	putchar('\n');
	if (c->state != SB_VALID)
		return;
	uuid_string(in->uuid, uuid);
	marked = sb_marked_count(c->blk, in->nr_regions);
	format_regions(c->blk, in->nr_regions, list, sizeof(list));
	printf("  seq            %llu\n", in->seq);
	printf("  gen            %016llx\n", in->gen);
	printf("  uuid           %s\n", uuid);
	printf("  flags          0x%x (%s)\n", in->flags,
	       in->flags & FLAZ_SB_CLEAN ? "clean" : "not clean");
	printf("  volume         %llu sectors\n", in->hdd_sectors);
	printf("  codec          %s (%u)\n", codec_name(in->codec), in->codec);
	printf("  cold codec     %s\n", in->cold_codec ? codec_name(in->cold_codec - 1) : "none");
	printf("  extent_kib     %u\n", in->extent_kib);
	printf("  overbook       %u%%\n", in->overbook);
	printf("  ssd_sectors    %llu\n", g->ssd_sectors);
	printf("  extents        %llu of %u sectors from sector %llu\n",
	       g->nr_extents, g->extent_sectors, g->data_start);
	printf("  lines          %llu in %llu table blocks from sector %llu\n",
	       g->nr_lines, flaz_table_blocks(g), g->meta_start);
	printf("  gen blocks     %llu from sector %llu\n", flaz_gen_blocks(g), g->gen_start);
	printf("  metadata       %llu sectors from sector %llu (table, then gen blocks)\n",
	       g->meta_sectors, g->meta_start);
	printf("  entry bits     offset %u, extent %u, generation %u (an extent at %u is worn out)\n",
	       g->off_bits, g->ext_bits, g->gen_bits, flaz_gen_worn(g));
	printf("  region_shift   %u (%llu KiB regions)\n", in->region_shift,
	       4ULL << in->region_shift);
	printf("  nr_regions     %u\n", in->nr_regions);
	printf("  marked         %u%s%s%s\n", marked, marked ? " (" : "", list, marked ? ")" : "");
	printf("  commit         %llu\n", in->commit);
	printf("  next_seq       %llu\n", in->next_seq);
	printf("  hdd_fp         %08x\n", in->hdd_fp);
}

static void print_copy_json(const struct sb_pair *sb, unsigned int i)
{
	const struct sb_copy *c = &sb->copy[i];
	const struct flaz_sb_info *in = &c->info;
	const struct flaz_geometry *g = &in->geo;
	char uuid[40];
	__u32 r;
	bool first = true;

	printf("{\"copy\":%u,\"sector\":%u,\"state\":", i, i * FLAZ_BLOCK_SECTORS);
	json_string(sb_state_name(c->state));
	printf(",\"valid\":%s,\"current\":%s", c->state == SB_VALID ? "true" : "false",
	       (int)i == sb->cur ? "true" : "false");
	if (c->state == SB_UNREADABLE) {
		fputs(",\"error\":", stdout);
		json_string(ssd_strerror(c->err));
	}
	if (c->state == SB_OTHER_VERSION)
		printf(",\"version\":%u", c->version);
	if (c->state == SB_IMPOSSIBLE)
		printf(",\"field\":\"%s\",\"value\":%llu", c->field, c->value);
	if (c->state != SB_VALID) {
		putchar('}');
		return;
	}
	uuid_string(in->uuid, uuid);
	printf(",\"version\":%u,\"seq\":%llu,\"gen\":\"%016llx\",\"uuid\":\"%s\",\"flags\":%u,"
	       "\"clean\":%s,\"hdd_sectors\":%llu,\"codec\":",
	       FLAZ_SB_VERSION, in->seq, in->gen, uuid, in->flags,
	       in->flags & FLAZ_SB_CLEAN ? "true" : "false", in->hdd_sectors);
	json_string(codec_name(in->codec));
	printf(",\"cold_codec\":");
	json_string(in->cold_codec ? codec_name(in->cold_codec - 1) : "none");
	printf(",\"codec_id\":%u,\"extent_kib\":%u,\"overbook\":%u,\"region_shift\":%u,"
	       "\"nr_regions\":%u,\"marked_regions\":[",
	       in->codec, in->extent_kib, in->overbook, in->region_shift, in->nr_regions);
	for (r = 0; r < in->nr_regions && r < FLAZ_MAX_REGIONS; r++) {
		if (!sb_marked(c->blk, r))
			continue;
		printf("%s%u", first ? "" : ",", r);
		first = false;
	}
	printf("],\"marked_past_end\":%u,\"commit\":%llu,\"next_seq\":%llu"
	       ",\"hdd_fp\":%u,\"geometry\":{\"ssd_sectors\":%llu,\"extent_sectors\":%u,"
	       "\"blocks_per_extent\":%u,\"nr_extents\":%llu,\"nr_lines\":%llu"
	       ",\"meta_start\":%llu,\"meta_sectors\":%llu,\"table_blocks\":%llu"
	       ",\"gen_start\":%llu,\"gen_blocks\":%llu,\"data_start\":%llu"
	       ",\"off_bits\":%u,\"ext_bits\":%u,\"gen_bits\":%u,\"gen_worn\":%u}}",
	       sb_marked_past(c->blk, in->nr_regions), in->commit, in->next_seq, in->hdd_fp,
	       g->ssd_sectors, g->extent_sectors, g->blocks_per_extent, g->nr_extents,
	       g->nr_lines, g->meta_start, g->meta_sectors, flaz_table_blocks(g), g->gen_start,
	       flaz_gen_blocks(g), g->data_start, g->off_bits, g->ext_bits, g->gen_bits,
	       flaz_gen_worn(g));
}

/* What an entry is: "invalid", "zero", or for a slot by its extent's generation. */
static const char *entry_kind(bool valid, const struct flaz_entry_info *e, enum entry_gen gen)
{
	if (!valid)
		return "invalid";
	if (e->units == FLAZ_ENTRY_ZERO_UNITS)
		return "zero";
	return gen == EG_VOID ? "void" : gen == EG_UNUSABLE ? "unusable" : "slot";
}

/* One non-empty entry, for --entries. */
static void print_entry(const struct dump_opts *o, const struct flaz_sb_info *in,
			const struct ext_gens *eg, __u64 line, __u64 raw, bool *first)
{
	struct flaz_entry_info e;
	enum entry_gen gen = EG_LIVE;
	__u64 block;
	bool valid, known;

	flaz_entry_unpack(raw, &in->geo, &e);
	valid = flaz_entry_valid(&e, &in->geo, line, sb_hdd_blocks(in));
	known = valid && entry_block(&e, in, line, &block);
	if (valid && e.units != FLAZ_ENTRY_ZERO_UNITS)
		gen = entry_gen(eg, &e);
	if (o->json) {
		printf("%s{\"line\":%llu,\"kind\":\"%s\"", *first ? "" : ",", line,
		       entry_kind(valid, &e, gen));
		*first = false;
		if (!valid)
			printf(",\"raw\":\"%016llx\"", raw);
		else if (e.units != FLAZ_ENTRY_ZERO_UNITS)
			printf(",\"ext\":%u,\"off\":%u,\"bytes\":%u,\"tag\":%llu,\"gen\":%u", e.ext,
			       e.off, e.units * FLAZ_SLOT_ALIGN, e.tag, e.gen);
		if (e.cold)
			printf(",\"cold\":true");
		if (gen == EG_VOID)
			printf(",\"extent_gen\":%u", eg->gen[e.ext]);
		if (known)
			printf(",\"block\":%llu", block);
		putchar('}');
		return;
	}
	printf("  line %llu: ", line);
	if (!valid) {
		printf("invalid entry %016llx\n", raw);
		return;
	}
	if (e.units == FLAZ_ENTRY_ZERO_UNITS) {
		printf("zero block %llu\n", block);
		return;
	}
	if (gen != EG_LIVE)
		printf("%s: ", entry_kind(valid, &e, gen));
	if (known)
		printf("block %llu in extent %u offset %u, %u bytes, gen %u", block, e.ext, e.off,
		       e.units * FLAZ_SLOT_ALIGN, e.gen);
	else
		printf("tag %llu (low bits) in extent %u offset %u, %u bytes, gen %u", e.tag, e.ext,
		       e.off, e.units * FLAZ_SLOT_ALIGN, e.gen);
	if (e.cold)
		printf(", cold codec");
	if (gen == EG_VOID)
		printf(" (the extent is at gen %u: evicted since)", eg->gen[e.ext]);
	else if (gen == EG_UNUSABLE)
		printf(" (the extent's gen block is damaged)");
	putchar('\n');
}

/* Walk the table of the current superblock, counting (and with --entries listing). */
static int walk_table(const struct ssd *s, const struct dump_opts *o,
		      const struct flaz_sb_info *in, struct table_sum *sum)
{
	const struct flaz_geometry *g = &in->geo;
	__u64 n = flaz_table_blocks(g), i, line;
	unsigned char *seen;
	struct tblock *t;
	struct flaz_entry_info e;
	unsigned int k;
	bool first = true;

	t = malloc(sizeof(*t));
	seen = calloc(g->nr_extents / 8 + 1, 1);
	if (!t || !seen) {
		free(t);
		free(seen);
		return fail(EXIT_FAIL, "out of memory");
	}
	if (gens_load(s, in, &sum->gens)) {
		free(t);
		free(seen);
		return fail(EXIT_FAIL, "out of memory");
	}
	if (o->entries)
		fputs(o->json ? ",\"entries\":[" : "entries:\n", stdout);
	/* sb_load() took no superblock for an SSD larger than this one: no loop runs past its end */
	for (i = 0; i < n; i++) {
		tblock_read(s, in, i, t);
		sum->tb[t->state]++;
		if (tb_damaged(t->state) && sum->nr_bad < MAX_BAD_LISTED)
			sum->bad[sum->nr_bad++] = i;
		if (t->state != TB_VALID) {
			/* a block that holds nothing: all its lines are empty */
			sum->empty += i < n - 1 ? FLAZ_META_ENTRIES :
				      g->nr_lines - i * FLAZ_META_ENTRIES;
			continue;
		}
		for (k = 0; k < FLAZ_META_ENTRIES; k++) {
			line = i * FLAZ_META_ENTRIES + k;
			flaz_entry_unpack(t->entries[k], g, &e);
			if (!e.units) {
				sum->empty += line < g->nr_lines;
				continue;
			}
			if (o->entries)
				print_entry(o, in, &sum->gens, line, t->entries[k], &first);
			if (!flaz_entry_valid(&e, g, line, sb_hdd_blocks(in))) {
				sum->invalid++;
			} else if (e.units == FLAZ_ENTRY_ZERO_UNITS) {
				sum->zeros++;
			} else if (entry_gen(&sum->gens, &e) == EG_VOID) {
				sum->void_entries++;
			} else if (entry_gen(&sum->gens, &e) == EG_UNUSABLE) {
				sum->unusable++;
			} else {
				sum->slots++;
				sum->slot_bytes += e.units * FLAZ_SLOT_ALIGN;
				if (!(seen[e.ext / 8] & (1U << (e.ext % 8))))
					sum->extents++;
				seen[e.ext / 8] |= 1U << (e.ext % 8);
			}
		}
	}
	if (o->entries && o->json)
		putchar(']');
	free(t);
	free(seen);
	return EXIT_OK;
}

static __u64 bad_blocks(const struct table_sum *sum)
{
	return sum->tb[TB_BAD_MAGIC] + sum->tb[TB_BAD_CRC] +
	       sum->tb[TB_BAD_INDEX] + sum->tb[TB_UNREADABLE];
}

/* Gen block numbers of damaged ones, at most MAX_BAD_LISTED. */
static void print_bad_gens_json(const struct ext_gens *eg)
{
	__u64 i;
	unsigned int n = 0;

	for (i = 0; i < eg->nr_blocks && n < MAX_BAD_LISTED; i++)
		if (tb_damaged(eg->state[i]))
			printf("%s%llu", n++ ? "," : "", i);
}

static void print_gens_human(const struct flaz_sb_info *in, const struct ext_gens *eg)
{
	const __u64 *n = eg->count;

	printf("gens: %llu blocks from sector %llu\n", eg->nr_blocks, in->geo.gen_start);
	printf("  blocks         %llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad\n",
	       n[TB_VALID], n[TB_UNWRITTEN], n[TB_VOID], n[TB_FOREIGN], gens_bad(eg));
}

static void print_gens_json(const struct flaz_sb_info *in, const struct ext_gens *eg)
{
	const __u64 *n = eg->count;

	printf(",\"gens\":{\"blocks\":%llu,\"start\":%llu,\"valid\":%llu,\"unwritten\":%llu"
	       ",\"void\":%llu,\"foreign\":%llu,\"bad\":%llu,\"bad_blocks\":[",
	       eg->nr_blocks, in->geo.gen_start, n[TB_VALID], n[TB_UNWRITTEN], n[TB_VOID],
	       n[TB_FOREIGN], gens_bad(eg));
	print_bad_gens_json(eg);
	fputs("]}", stdout);
}

static void print_table_human(const struct flaz_sb_info *in, const struct table_sum *sum)
{
	printf("table (gen %016llx): %llu blocks from sector %llu\n",
	       in->gen, flaz_table_blocks(&in->geo), in->geo.meta_start);
	printf("  blocks         %llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad\n",
	       sum->tb[TB_VALID], sum->tb[TB_UNWRITTEN], sum->tb[TB_VOID], sum->tb[TB_FOREIGN],
	       bad_blocks(sum));
	printf("  entries        %llu slot, %llu zero, %llu empty, %llu invalid, %llu void, %llu unusable\n",
	       sum->slots, sum->zeros, sum->empty, sum->invalid, sum->void_entries, sum->unusable);
	printf("  extents        %llu referenced\n", sum->extents);
	printf("  slot bytes     %llu\n", sum->slot_bytes);
}

static void print_table_json(const struct flaz_sb_info *in, const struct table_sum *sum)
{
	unsigned int i;

	printf(",\"table\":{\"gen\":\"%016llx\",\"blocks\":%llu,\"valid\":%llu"
	       ",\"unwritten\":%llu,\"void\":%llu,\"foreign\":%llu,\"bad\":%llu,"
	       "\"bad_blocks\":[",
	       in->gen, flaz_table_blocks(&in->geo), sum->tb[TB_VALID], sum->tb[TB_UNWRITTEN],
	       sum->tb[TB_VOID], sum->tb[TB_FOREIGN], bad_blocks(sum));
	for (i = 0; i < sum->nr_bad; i++)
		printf("%s%llu", i ? "," : "", sum->bad[i]);
	printf("],\"entries\":{\"slot\":%llu,\"zero\":%llu,\"empty\":%llu"
	       ",\"invalid\":%llu,\"void\":%llu,\"unusable\":%llu},\"extents_referenced\":%llu"
	       ",\"slot_bytes\":%llu}",
	       sum->slots, sum->zeros, sum->empty, sum->invalid, sum->void_entries,
	       sum->unusable, sum->extents, sum->slot_bytes);
}

static int parse_dump(int argc, char **argv, struct dump_opts *o)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "entries", no_argument, NULL, 'e' },
		{ "superblock", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'j')
			o->json = true;
		else if (c == 'e')
			o->entries = true;
		else if (c == 's')
			o->superblock = true;
		else
			return bad_option(argv);
	}
	if (optind + 1 != argc)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("dump"));
	if (o->superblock && o->entries)
		return fail(EXIT_USAGE, "--entries reads the table; --superblock reads the superblock only");
	o->path = argv[optind];
	return EXIT_OK;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct table_sum *sum;
	struct sb_pair *sb;
	const struct flaz_sb_info *in;
	struct ssd s;
	unsigned int i;
	int r, old;

	r = parse_dump(argc, argv, &o);
	if (r)
		return r;
	r = ssd_open(&s, o.path, false, EXIT_FAIL);
	if (r) {
		/* as check's */
		if (o.json) {
			json_object_start();
			fputs(",\"device\":", stdout);
			json_string(o.path);
			printf(",\"verdict\":\"unreadable\",\"exit_code\":%d}\n", r);
		}
		return r;
	}
	sb = malloc(sizeof(*sb));
	sum = calloc(1, sizeof(*sum));
	if (!sb || !sum) {
		free(sb);
		free(sum);
		ssd_close(&s);
		return fail(EXIT_FAIL, "out of memory");
	}
	sb_load(&s, sb);
	if (o.json) {
		json_object_start();
		fputs(",\"device\":", stdout);
		json_string(o.path);
		printf(",\"size_sectors\":%llu,\"in_use\":%s,\"superblocks\":[",
		       s.bytes >> FLAZ_SECTOR_SHIFT, s.busy ? "true" : "false");
		for (i = 0; i < FLAZ_SB_COPIES; i++) {
			if (i)
				putchar(',');
			print_copy_json(sb, i);
		}
		putchar(']');
		if (sb->cur >= 0)
			printf(",\"current\":%d", sb->cur);
		else
			fputs(",\"current\":null", stdout);
		/* with --superblock, no "gens" and "table": they were not read */
		if (sb->cur < 0 && !o.superblock)
			fputs(",\"gens\":null,\"table\":null", stdout);
	} else {
		printf("%s: %llu sectors%s\n", o.path, s.bytes >> FLAZ_SECTOR_SHIFT,
		       s.busy ? " (in use)" : "");
		for (i = 0; i < FLAZ_SB_COPIES; i++)
			print_copy_human(&s, sb, i);
	}
	r = EXIT_OK;
	if (sb->cur >= 0 && !o.superblock) {
		in = &sb->copy[sb->cur].info;
		r = walk_table(&s, &o, in, sum);
		if (!r && o.json) {
			print_gens_json(in, &sum->gens);
			print_table_json(in, sum);
		} else if (!r) {
			print_gens_human(in, &sum->gens);
			print_table_human(in, sum);
		}
	}
	if (o.json)
		fputs("}\n", stdout);
	old = sb_other_version(sb);
	if (old >= 0)
		r = fail(EXIT_CORRUPT, "%s: superblock of format version %u; this flazctl reads version %u (recreate the volume with --cold: it starts empty)",
			 o.path, sb->copy[old].version, FLAZ_SB_VERSION);
	else if (sb->cur < 0)
		r = fail(EXIT_CORRUPT, "%s holds no valid flaz superblock", o.path);
	gens_free(&sum->gens);
	free(sb);
	free(sum);
	ssd_close(&s);
	return r;
}

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
#include "jsonout.h"
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
	if (in->order_extents)
		printf("  reclaim order  %u extents from extent %u (saved at the clean stop)\n",
		       in->order_extents, in->order_first);
	else
		printf("  reclaim order  none saved\n");
}

/* @v as 16 hex digits, a JSON string. */
static struct json_object *hex64(__u64 v)
{
	char buf[17];

	snprintf(buf, sizeof(buf), "%016llx", v);
	return jstr(buf);
}

static struct json_object *geometry_json(const struct flaz_geometry *g)
{
	struct json_object *o = json_object_new_object();

	jadd_u64s(o, (const struct jkv[]){
		{ "ssd_sectors", g->ssd_sectors }, { "extent_sectors", g->extent_sectors },
		{ "blocks_per_extent", g->blocks_per_extent }, { "nr_extents", g->nr_extents },
		{ "nr_lines", g->nr_lines }, { "meta_start", g->meta_start },
		{ "meta_sectors", g->meta_sectors }, { "table_blocks", flaz_table_blocks(g) },
		{ "gen_start", g->gen_start }, { "gen_blocks", flaz_gen_blocks(g) },
		{ "data_start", g->data_start }, { "off_bits", g->off_bits },
		{ "ext_bits", g->ext_bits }, { "gen_bits", g->gen_bits },
		{ "gen_worn", flaz_gen_worn(g) }, { NULL } });
	return o;
}

static struct json_object *copy_json(const struct sb_pair *sb, unsigned int i)
{
	const struct sb_copy *c = &sb->copy[i];
	const struct flaz_sb_info *in = &c->info;
	struct json_object *o = json_object_new_object(), *marked;
	char uuid[40];
	__u32 r;

	jadd_u64(o, "copy", i);
	jadd_u64(o, "sector", i * FLAZ_BLOCK_SECTORS);
	jadd(o, "state", jstr(sb_state_name(c->state)));
	jadd(o, "valid", json_object_new_boolean(c->state == SB_VALID));
	jadd(o, "current", json_object_new_boolean((int)i == sb->cur));
	if (c->state == SB_UNREADABLE)
		jadd(o, "error", jstr(ssd_strerror(c->err)));
	if (c->state == SB_OTHER_VERSION)
		jadd_u64(o, "version", c->version);
	if (c->state == SB_IMPOSSIBLE) {
		jadd(o, "field", jstr(c->field));
		jadd_u64(o, "value", c->value);
	}
	if (c->state != SB_VALID)
		return o;
	uuid_string(in->uuid, uuid);
	jadd_u64s(o, (const struct jkv[]){
		{ "version", FLAZ_SB_VERSION }, { "seq", in->seq }, { NULL } });
	jadd(o, "gen", hex64(in->gen));
	jadd(o, "uuid", jstr(uuid));
	jadd_u64(o, "flags", in->flags);
	jadd(o, "clean", json_object_new_boolean(in->flags & FLAZ_SB_CLEAN));
	jadd_u64(o, "hdd_sectors", in->hdd_sectors);
	jadd(o, "codec", jstr(codec_name(in->codec)));
	jadd(o, "cold_codec", jstr(in->cold_codec ? codec_name(in->cold_codec - 1) : "none"));
	jadd_u64s(o, (const struct jkv[]){
		{ "codec_id", in->codec }, { "extent_kib", in->extent_kib },
		{ "overbook", in->overbook }, { "region_shift", in->region_shift },
		{ "nr_regions", in->nr_regions }, { NULL } });
	marked = json_object_new_array();
	for (r = 0; r < in->nr_regions && r < FLAZ_MAX_REGIONS; r++)
		if (sb_marked(c->blk, r))
			json_object_array_add(marked, json_object_new_uint64(r));
	jadd(o, "marked_regions", marked);
	jadd_u64s(o, (const struct jkv[]){
		{ "marked_past_end", sb_marked_past(c->blk, in->nr_regions) },
		{ "commit", in->commit }, { "next_seq", in->next_seq }, { "hdd_fp", in->hdd_fp },
		{ "order_first", in->order_first }, { "order_extents", in->order_extents },
		{ NULL } });
	jadd(o, "geometry", geometry_json(&in->geo));
	return o;
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
			const struct ext_gens *eg, __u64 line, __u64 raw)
{
	struct json_object *j;
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
		j = json_object_new_object();
		jadd_u64(j, "line", line);
		jadd(j, "kind", jstr(entry_kind(valid, &e, gen)));
		if (!valid) {
			jadd(j, "raw", hex64(raw));
		} else if (e.units != FLAZ_ENTRY_ZERO_UNITS) {
			jadd_u64s(j, (const struct jkv[]){
				{ "ext", e.ext }, { "off", e.off },
				{ "bytes", e.units * FLAZ_SLOT_ALIGN }, { "tag", e.tag },
				{ "gen", e.gen }, { NULL } });
		}
		if (e.cold)
			jadd(j, "cold", json_object_new_boolean(1));
		if (gen == EG_VOID)
			jadd_u64(j, "extent_gen", eg->gen[e.ext]);
		if (known)
			jadd_u64(j, "block", block);
		jput_item(j);
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

/*
 * Walk the table of the current superblock, counting (and with --entries listing).
 * With --json --entries, object *@head is printed before the entries and replaced
 * by the one for the members after them.
 */
static int walk_table(const struct ssd *s, const struct dump_opts *o,
		      const struct flaz_sb_info *in, struct table_sum *sum,
		      struct json_object **head)
{
	const struct flaz_geometry *g = &in->geo;
	__u64 n = flaz_table_blocks(g), i, line;
	unsigned char *seen;
	struct tblock *t;
	struct flaz_entry_info e;
	unsigned int k;

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
	if (o->entries && o->json) {
		jput_head(*head, "entries");
		*head = json_object_new_object();	/* the members after the entries */
	} else if (o->entries) {
		fputs("entries:\n", stdout);
	}
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
				print_entry(o, in, &sum->gens, line, t->entries[k]);
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
	free(t);
	free(seen);
	return EXIT_OK;
}

static __u64 bad_blocks(const struct table_sum *sum)
{
	return sum->tb[TB_BAD_MAGIC] + sum->tb[TB_BAD_CRC] +
	       sum->tb[TB_BAD_INDEX] + sum->tb[TB_UNREADABLE];
}

static void print_gens_human(const struct flaz_sb_info *in, const struct ext_gens *eg)
{
	const __u64 *n = eg->count;

	printf("gens: %llu blocks from sector %llu\n", eg->nr_blocks, in->geo.gen_start);
	printf("  blocks         %llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad\n",
	       n[TB_VALID], n[TB_UNWRITTEN], n[TB_VOID], n[TB_FOREIGN], gens_bad(eg));
}

/* The counts of table (gen) blocks by state @n, @bad of them damaged, into @o. */
static void counts_json(struct json_object *o, const __u64 *n, __u64 bad)
{
	jadd_u64s(o, (const struct jkv[]){
		{ "valid", n[TB_VALID] }, { "unwritten", n[TB_UNWRITTEN] }, { "void", n[TB_VOID] },
		{ "foreign", n[TB_FOREIGN] }, { "bad", bad }, { NULL } });
}

static void gens_json(struct json_object *o, const struct flaz_sb_info *in,
		      const struct ext_gens *eg)
{
	struct json_object *g = json_object_new_object(), *bad = json_object_new_array();
	__u64 i;

	jadd_u64(g, "blocks", eg->nr_blocks);
	jadd_u64(g, "start", in->geo.gen_start);
	counts_json(g, eg->count, gens_bad(eg));
	/* gen block numbers of damaged ones, at most MAX_BAD_LISTED */
	for (i = 0; i < eg->nr_blocks && json_object_array_length(bad) < MAX_BAD_LISTED; i++)
		if (tb_damaged(eg->state[i]))
			json_object_array_add(bad, json_object_new_uint64(i));
	jadd(g, "bad_blocks", bad);
	jadd(o, "gens", g);
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

static void table_json(struct json_object *o, const struct flaz_sb_info *in,
		       const struct table_sum *sum)
{
	struct json_object *t = json_object_new_object(), *bad, *e;
	unsigned int i;

	jadd(t, "gen", hex64(in->gen));
	jadd_u64(t, "blocks", flaz_table_blocks(&in->geo));
	counts_json(t, sum->tb, bad_blocks(sum));
	bad = json_object_new_array();
	for (i = 0; i < sum->nr_bad; i++)
		json_object_array_add(bad, json_object_new_uint64(sum->bad[i]));
	jadd(t, "bad_blocks", bad);
	e = json_object_new_object();
	jadd_u64s(e, (const struct jkv[]){
		{ "slot", sum->slots }, { "zero", sum->zeros }, { "empty", sum->empty },
		{ "invalid", sum->invalid }, { "void", sum->void_entries },
		{ "unusable", sum->unusable }, { NULL } });
	jadd(t, "entries", e);
	jadd_u64s(t, (const struct jkv[]){
		{ "extents_referenced", sum->extents }, { "slot_bytes", sum->slot_bytes },
		{ NULL } });
	jadd(o, "table", t);
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
	struct json_object *j = NULL, *copies;
	struct ssd s;
	unsigned int i;
	bool streamed = false;
	int r, old;

	r = parse_dump(argc, argv, &o);
	if (r)
		return r;
	r = ssd_open(&s, o.path, false, EXIT_FAIL);
	if (r) {
		/* as check's */
		if (o.json) {
			j = jobj();
			jadd(j, "device", jstr(o.path));
			jadd(j, "verdict", jstr("unreadable"));
			jadd(j, "exit_code", json_object_new_int(r));
			jput(j);
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
		j = jobj();
		jadd(j, "device", jstr(o.path));
		jadd_u64(j, "size_sectors", s.bytes >> FLAZ_SECTOR_SHIFT);
		jadd(j, "in_use", json_object_new_boolean(s.busy));
		copies = json_object_new_array();
		for (i = 0; i < FLAZ_SB_COPIES; i++)
			json_object_array_add(copies, copy_json(sb, i));
		jadd(j, "superblocks", copies);
		jadd(j, "current", sb->cur >= 0 ? json_object_new_int(sb->cur) : NULL);
		/* with --superblock, no "gens" and "table": they were not read */
		if (sb->cur < 0 && !o.superblock) {
			jadd(j, "gens", NULL);
			jadd(j, "table", NULL);
		}
	} else {
		printf("%s: %llu sectors%s\n", o.path, s.bytes >> FLAZ_SECTOR_SHIFT,
		       s.busy ? " (in use)" : "");
		for (i = 0; i < FLAZ_SB_COPIES; i++)
			print_copy_human(&s, sb, i);
	}
	r = EXIT_OK;
	if (sb->cur >= 0 && !o.superblock) {
		in = &sb->copy[sb->cur].info;
		r = walk_table(&s, &o, in, sum, &j);
		/* walk_table() printed the head and the entries: the rest follows them */
		streamed = !r && o.json && o.entries;
		if (!r && o.json) {
			gens_json(j, in, &sum->gens);
			table_json(j, in, sum);
		} else if (!r) {
			print_gens_human(in, &sum->gens);
			print_table_human(in, sum);
		}
	}
	if (streamed)
		jput_tail(j);
	else if (o.json)
		jput(j);
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

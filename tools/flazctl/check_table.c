// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl check, its table half: the extents' generations (gen blocks), every
 * table block and every cached line's slot, as the kernel would load them, and
 * their repair. The table is walked once, its live slot entries queued and
 * sorted by extent so that each extent is read once per batch (check_extents()).
 * An entry whose generation is not its extent's any more was left by an
 * eviction: it holds nothing, as at the kernel's load, and its slot is not
 * looked at. The superblocks, the verdict and how problems are said: check.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

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
bool check_gens(struct checker *c)
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
void repair_gens(struct checker *c)
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
void check_table(struct checker *c)
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

/* The batch arrays, for at most as many entries as the table has lines. */
int alloc_batch(struct checker *c)
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

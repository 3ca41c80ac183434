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
 * clean, 1 ignorable or repaired, 2 corrupt.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flazctl.h"
#include "ssdmeta.h"

#define MAX_SHOWN	20	/* problem lines printed; the rest are counted */

enum verdict { CLEAN = 0, IGNORABLE = 1, CORRUPT = 2 };
enum kind { K_CORRUPT, K_WARNING, K_REPAIRED, K_UNSUPPORTED };

struct checker {
	struct ssd *ssd;
	bool repair;		/* fix what can be fixed */
	bool repair_table;	/* the superblock matches the device: the table may be fixed */
	bool quiet;		/* count only: the check after a repair */
	bool table_unwritten;	/* a table block could not be rewritten */
	int other_version;	/* no current copy: a copy of another format version, or -1 */
	struct sb_pair sb;
	const struct flaz_sb_info *info;	/* the current superblock */
	const unsigned char *sb_blk;
	__u64 hdd_blocks;

	__u64 count[K_UNSUPPORTED + 1];	/* problems by enum kind */
	__u64 shown, hidden;

	__u64 tb[TB_UNREADABLE + 1];	/* table blocks by state */
	struct ext_gens gens;	/* the extents' generations */
	__u64 slots, slot_bytes, zeros, empty, dropped;
	__u64 void_entries;	/* left by evictions: their extent's gen moved on */
	__u64 unusable;		/* into extents whose gen block is damaged */
	__u32 marked;		/* write-intent regions marked */
	__u64 extent_reads;

	/* the last extent read: its number, first round_up(used, 4 KiB) bytes and state */
	unsigned char *ext;
	bool ext_loaded;
	__u32 ext_no;
	__u32 ext_used;
	int ext_err;		/* 0, a read error, or -EILSEQ for a bad header */

	struct tblock t;
};

static const char *plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

static void say(struct checker *c, enum kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One problem (or repair): counted always, printed up to MAX_SHOWN. */
static void say(struct checker *c, enum kind k, const char *fmt, ...)
{
	static const char *const prefix[] = { "corrupt", "warning", "repaired", "unsupported" };
	va_list ap;

	c->count[k]++;
	if (c->quiet)
		return;
	if (c->shown >= MAX_SHOWN) {
		c->hidden++;
		return;
	}
	c->shown++;
	printf("%s: ", prefix[k]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Information that is no problem. */
static void note(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet)
		return;
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
		say(c, K_CORRUPT, "cannot rewrite superblock copy %u: %s", i, ssd_strerror(r));
	else
		say(c, K_REPAIRED, "superblock copy %u rewritten from copy %d (seq %llu)", i,
		    c->sb.cur, info.seq);
}

/* Superblock copies: one bad copy is ignorable (the other is used), none good is fatal. */
static bool check_superblocks(struct checker *c)
{
	struct sb_pair *sb = &c->sb;
	unsigned int i, blank = 0, corrupt = 0;

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
		if (sb->cur < 0)
			continue;
		if (cp->state == SB_BLANK) {
			note(c, "superblock copy %u (sector %u): blank (not written yet)", i,
			     i * FLAZ_BLOCK_SECTORS);
			continue;
		}
		if (cp->state == SB_UNREADABLE)
			say(c, K_WARNING, "superblock copy %u (sector %u): cannot read it: %s; copy %d is used",
			    i, i * FLAZ_BLOCK_SECTORS, ssd_strerror(cp->err), sb->cur);
		else if (cp->state == SB_OTHER_VERSION)
			say(c, K_WARNING, "superblock copy %u (sector %u): of format version %u; copy %d is used",
			    i, i * FLAZ_BLOCK_SECTORS, cp->version, sb->cur);
		else
			say(c, K_WARNING, "superblock copy %u (sector %u): %s; copy %d is used", i,
			    i * FLAZ_BLOCK_SECTORS, sb_state_name(cp->state), sb->cur);
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
	if (c->other_version >= 0)
		say(c, K_UNSUPPORTED, "superblock of format version %u; this flazctl reads version %u (recreate the volume with --cold: it starts empty)",
		    sb->copy[c->other_version].version, FLAZ_SB_VERSION);
	else if (sb->copy[0].state == SB_UNREADABLE && sb->copy[1].state == SB_UNREADABLE)
		say(c, K_CORRUPT, "cannot read the superblock: %s", ssd_strerror(sb->copy[0].err));
	else if (blank == FLAZ_SB_COPIES)
		say(c, K_CORRUPT, "no flaz superblock: the superblock area is blank (a new SSD, or never used by flaz)");
	else if (corrupt)
		say(c, K_CORRUPT, "both superblock copies are bad (copy 0: %s, copy 1: %s)",
		    sb_state_name(sb->copy[0].state), sb_state_name(sb->copy[1].state));
	else
		say(c, K_CORRUPT, "no flaz superblock, and the SSD is not blank (copy 0: %s, copy 1: %s)",
		    sb_state_name(sb->copy[0].state), sb_state_name(sb->copy[1].state));
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
	c->repair_table = c->repair;
	if (c->ssd->bytes != g->ssd_sectors << FLAZ_SECTOR_SHIFT) {
		say(c, K_CORRUPT, "the superblock is for an SSD of %llu sectors, %s has %llu"
		    " (the kernel refuses it)", g->ssd_sectors, c->ssd->path,
		    c->ssd->bytes >> FLAZ_SECTOR_SHIFT);
		c->repair_table = false;
	}
	if (in->codec >= NR_CODECS) {
		say(c, K_CORRUPT, "the superblock names an unknown codec (%u)", in->codec);
		c->repair_table = false;
	}
	if (c->repair && !c->repair_table)
		note(c, "not repairing the table: the superblock does not match this SSD");
}

/* Load extent @x (cached: the last one read); false with c->ext_err set if it is bad. */
static bool load_extent(struct checker *c, __u32 x)
{
	const struct flaz_geometry *g = &c->info->geo;
	__u32 bytes = g->extent_sectors << FLAZ_SECTOR_SHIFT, nr_slots, want;
	__u64 off = extent_offset(g, x);

	if (c->ext_loaded && c->ext_no == x)
		return !c->ext_err;
	c->ext_loaded = true;
	c->ext_no = x;
	c->extent_reads++;
	/* the header first, then only what the kernel wrote: round_up(used, 4 KiB) */
	c->ext_err = ssd_read(c->ssd, off, c->ext, FLAZ_BLOCK_SIZE);
	if (c->ext_err)
		return false;
	if (flaz_extent_decode(c->ext, bytes, x, &c->ext_used, &nr_slots)) {
		c->ext_err = -EILSEQ;
		return false;
	}
	want = (c->ext_used + FLAZ_BLOCK_SIZE - 1) & ~(FLAZ_BLOCK_SIZE - 1);
	if (want > FLAZ_BLOCK_SIZE)
		c->ext_err = ssd_read(c->ssd, off + FLAZ_BLOCK_SIZE, c->ext + FLAZ_BLOCK_SIZE,
				      want - FLAZ_BLOCK_SIZE);
	return !c->ext_err;
}

/* Whether the slot entry @e of @line points at is that line's block, as the entry says. */
static bool check_slot(struct checker *c, __u64 line, const struct flaz_entry_info *e)
{
	const struct flaz_sb_info *in = c->info;
	__u64 nr_lines = in->geo.nr_lines;
	__u32 bytes = e->units * FLAZ_SLOT_ALIGN;
	struct flaz_slot_info s;

	if (!load_extent(c, e->ext)) {
		if (c->ext_err == -EILSEQ)
			say(c, K_CORRUPT, "line %llu: extent %u has a bad header", line, e->ext);
		else
			say(c, K_CORRUPT, "line %llu: cannot read extent %u: %s", line,
			    e->ext, ssd_strerror(c->ext_err));
		return false;
	}
	if (e->off + bytes > c->ext_used) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u (%u bytes) is past the extent's %u used bytes",
		    line, e->ext, e->off, bytes, c->ext_used);
		return false;
	}
	if (flaz_slot_decode(c->ext + e->off, bytes, &s)) {
		say(c, K_CORRUPT, "line %llu: no valid slot at extent %u offset %u (bad magic, length, flags or checksum)",
		    line, e->ext, e->off);
		return false;
	}
	if (s.bytes != bytes) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u is %u bytes, the entry says %u",
		    line, e->ext, e->off, s.bytes, bytes);
		return false;
	}
	if (s.line != line) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u was written for line %u",
		    line, e->ext, e->off, s.line);
		return false;
	}
	if (s.block % nr_lines != line ||
	    ((s.block / nr_lines) & ((1ULL << FLAZ_TAG_BITS) - 1)) != e->tag) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u holds block %llu"
		    ", not one of tag %llu on this line", line, e->ext, e->off, s.block, e->tag);
		return false;
	}
	if (s.block >= c->hdd_blocks) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u holds block %llu"
		    ", past the volume's %llu blocks", line, e->ext, e->off, s.block,
		    c->hdd_blocks);
		return false;
	}
	if (s.codec != in->codec) {
		say(c, K_CORRUPT, "line %llu: slot at extent %u offset %u is %s, the superblock says %s",
		    line, e->ext, e->off, codec_name(s.codec), codec_name(in->codec));
		return false;
	}
	return true;
}

static void write_tblock(struct checker *c, __u32 i, __u64 commit, const __u64 *entries,
			 const char *what)
{
	int r;

	flaz_meta_encode(c->t.blk, c->info->gen, commit, i, entries);
	r = ssd_write(c->ssd, table_offset(&c->info->geo, i), c->t.blk, FLAZ_BLOCK_SIZE);
	if (r) {
		say(c, K_CORRUPT, "cannot rewrite table block %u: %s", i, ssd_strerror(r));
		c->table_unwritten = true;
	} else {
		say(c, K_REPAIRED, "table block %u: %s", i, what);
	}
}

static bool region_marked(const struct checker *c, __u64 block)
{
	__u64 r = block >> c->info->region_shift;

	return r < c->info->nr_regions && sb_marked(c->sb_blk, r);
}

/*
 * Whether the kernel drops line @line's (valid) entry @e at load, by the rule of
 * its entry_marked(): the entry's block is in a marked region, or for a cut tag,
 * any block the entry alone may stand for.
 */
static bool entry_marked(const struct checker *c, __u64 line, const struct flaz_entry_info *e)
{
	__u64 nr_lines = c->info->geo.nr_lines, tag, block;

	if (entry_block(e, c->info, line, &block))
		return region_marked(c, block);
	for (tag = e->tag; tag * nr_lines + line < c->hdd_blocks; tag += 1ULL << FLAZ_TAG_BITS)
		if (region_marked(c, tag * nr_lines + line))
			return true;
	return false;
}

/* Every entry of the valid table block @i; bad ones are cleared when repairing. */
static void check_entries(struct checker *c, __u32 i)
{
	const struct flaz_sb_info *in = c->info;
	__u64 first = (__u64)i * FLAZ_META_ENTRIES, line;
	struct flaz_entry_info e;
	enum entry_gen gen;
	unsigned int k, cleared = 0;
	char what[64];
	bool ok;

	for (k = 0; k < FLAZ_META_ENTRIES; k++) {
		line = first + k;
		flaz_entry_unpack(c->t.entries[k], &e);
		if (!e.units) {
			c->empty += line < in->geo.nr_lines;
			continue;
		}
		ok = false;
		gen = EG_LIVE;
		if (line >= in->geo.nr_lines)
			say(c, K_CORRUPT, "table block %u: an entry for line %llu, past the last line (%llu)",
			    i, line, in->geo.nr_lines - 1);
		else if (!flaz_entry_valid(&e, &in->geo, line, c->hdd_blocks))
			say(c, K_CORRUPT, "line %llu: entry %016llx is out of range (%s)",
			    line, c->t.entries[k],
			    e.units == FLAZ_ENTRY_ZERO_UNITS ? "a zero block past the volume" :
			    "slot size, extent, offset or tag");
		else if (e.units == FLAZ_ENTRY_ZERO_UNITS)
			ok = true;
		else if ((gen = entry_gen(&c->gens, &e)) == EG_LIVE)
			ok = check_slot(c, line, &e);
		else if (gen == EG_UNUSABLE)
			c->unusable++;	/* its gen block was reported */
		if (gen == EG_VOID) {
			/* left by an eviction: holds nothing, its slot may be another's now */
			c->void_entries++;
			continue;
		}
		if (!ok) {
			if (c->repair_table) {
				c->t.entries[k] = 0;
				cleared++;
			}
			continue;
		}
		if (e.units == FLAZ_ENTRY_ZERO_UNITS) {
			c->zeros++;
		} else {
			c->slots++;
			c->slot_bytes += e.units * FLAZ_SLOT_ALIGN;
		}
		if (c->marked && entry_marked(c, line, &e))
			c->dropped++;
	}
	if (cleared) {
		snprintf(what, sizeof(what), "cleared %u bad entr%s (those lines are cold now)",
			 cleared, cleared == 1 ? "y" : "ies");
		write_tblock(c, i, c->t.commit, c->t.entries, what);
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
		say(c, K_CORRUPT, "out of memory");
		return false;
	}
	for (i = 0; i < eg->nr_blocks; i++) {
		first = i * FLAZ_GEN_ENTRIES;
		if (eg->state[i] == TB_UNREADABLE && eg->err[i] == -EOVERFLOW) {
			/* a superblock for a larger SSD: one line, not one per block */
			say(c, K_CORRUPT, "gen blocks %llu-%llu are beyond the end of %s", i,
			    eg->nr_blocks - 1, c->ssd->path);
			break;
		}
		switch (eg->state[i]) {
		case TB_VALID:
		case TB_UNWRITTEN:
		case TB_VOID:
		case TB_FOREIGN:	/* holds nothing: its extents are at generation 0 */
			continue;
		case TB_BAD_INDEX:
			say(c, K_CORRUPT, "gen block %llu (sector %llu): holds the generations of gen block %u; entries into extents %llu-%llu are unusable",
			    i, gen_offset(g, i) >> FLAZ_SECTOR_SHIFT, eg->index[i], first,
			    gen_block_last(c, i));
			break;
		case TB_UNREADABLE:
			say(c, K_CORRUPT, "gen block %llu (sector %llu): cannot read it: %s; entries into extents %llu-%llu are unusable",
			    i, gen_offset(g, i) >> FLAZ_SECTOR_SHIFT, ssd_strerror(eg->err[i]),
			    first, gen_block_last(c, i));
			break;
		default:
			say(c, K_CORRUPT, "gen block %llu (sector %llu): %s; entries into extents %llu-%llu are unusable",
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
	static const __u8 zero[FLAZ_GEN_ENTRIES];
	const struct ext_gens *eg = &c->gens;
	__u64 i;
	int r;

	if (!c->repair_table || !gens_bad(eg))
		return;
	if (c->table_unwritten) {
		say(c, K_CORRUPT, "not rewriting the damaged gen blocks: the table still holds entries into their extents");
		return;
	}
	for (i = 0; i < eg->nr_blocks; i++) {
		if (!tb_damaged(eg->state[i]))
			continue;
		flaz_gen_encode(c->t.blk, c->info->gen, c->info->commit, i, zero);
		r = ssd_write(c->ssd, gen_offset(&c->info->geo, i), c->t.blk, FLAZ_BLOCK_SIZE);
		if (r)
			say(c, K_CORRUPT, "cannot rewrite gen block %llu: %s", i, ssd_strerror(r));
		else
			say(c, K_REPAIRED, "gen block %llu: rewritten at generation 0 (no entry into extents %llu-%llu is left)",
			    i, i * FLAZ_GEN_ENTRIES, gen_block_last(c, i));
	}
}

static void check_table(struct checker *c)
{
	static const __u64 empty[FLAZ_META_ENTRIES];
	const struct flaz_geometry *g = &c->info->geo;
	__u64 n = flaz_table_blocks(g), i, first;
	struct tblock *t = &c->t;

	for (i = 0; i < n; i++) {
		if (table_offset(g, i) + FLAZ_BLOCK_SIZE > c->ssd->bytes) {
			/* a superblock for a larger SSD: one line, not one per block */
			c->tb[TB_UNREADABLE] += n - i;
			c->empty += g->nr_lines - i * FLAZ_META_ENTRIES;
			say(c, K_CORRUPT, "table blocks %llu-%llu are beyond the end of %s", i, n - 1,
			    c->ssd->path);
			break;
		}
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
			say(c, K_CORRUPT, "table block %llu (sector %llu): holds the entries of table block %u; lines %llu-%llu are lost",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, t->index, first,
			    first + FLAZ_META_ENTRIES - 1);
			break;
		case TB_UNREADABLE:
			say(c, K_CORRUPT, "table block %llu (sector %llu): cannot read it: %s",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, ssd_strerror(t->err));
			break;
		default:
			say(c, K_CORRUPT, "table block %llu (sector %llu): %s; lines %llu-%llu are lost",
			    i, table_offset(g, i) >> FLAZ_SECTOR_SHIFT, tb_state_name(t->state),
			    first, first + FLAZ_META_ENTRIES - 1);
			break;
		}
		if (c->repair_table)
			write_tblock(c, i, c->info->commit, empty, "rewritten as an empty block");
	}
	if (c->tb[TB_FOREIGN])
		note(c, "note: %llu table block%s neither blank nor of a flaz format (left from before this format, which the kernel does not clear): %s empty",
		     c->tb[TB_FOREIGN], c->tb[TB_FOREIGN] == 1 ? " is" : "s are",
		     c->tb[TB_FOREIGN] == 1 ? "it counts as" : "they count as");
}

/* The write-intent bitmap: marked regions are dropped by the kernel at load. */
static void check_intent(struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	__u32 marked = sb_marked_count(c->sb_blk, in->nr_regions);
	__u32 past = sb_marked_past(c->sb_blk, in->nr_regions);
	char list[160];

	if (past)
		say(c, K_WARNING, "the write-intent bitmap has %u bit%s set past its %u regions",
		    past, plural(past), in->nr_regions);
	format_regions(c->sb_blk, in->nr_regions, list, sizeof(list));
	if (marked)
		say(c, K_WARNING, "%s: %u write-intent region%s marked (%s); the kernel drops the %llu"
		    " cached line%s in them at the next load",
		    in->flags & FLAZ_SB_CLEAN ? "marked clean but regions are marked" :
		    "unclean shutdown", marked, marked == 1 ? "" : "s", list, c->dropped,
		    c->dropped == 1 ? "" : "s");
	else if (!(in->flags & FLAZ_SB_CLEAN))
		say(c, K_WARNING, "unclean shutdown (or the volume is live): no write-intent region is marked, no line will be dropped");
}

static enum verdict verdict(const struct checker *c)
{
	if (c->count[K_CORRUPT] || c->count[K_UNSUPPORTED])
		return CORRUPT;
	return c->count[K_WARNING] || c->count[K_REPAIRED] ? IGNORABLE : CLEAN;
}

static void summary(const struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	const __u64 *gb = c->gens.count;
	__u64 bad = c->tb[TB_BAD_MAGIC] + c->tb[TB_BAD_CRC] + c->tb[TB_BAD_INDEX] +
		    c->tb[TB_UNREADABLE];

	if (c->hidden)
		printf("... and %llu more problem lines not shown\n", c->hidden);
	if (in)
		printf("summary: copy %d current (seq %llu); %llu table blocks (%llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad); %llu gen blocks (%llu valid, %llu unwritten, %llu void, %llu foreign, %llu bad); %llu slots (%llu bytes), %llu zero blocks, %llu empty lines, %llu void entries (left by evictions), %llu unusable entries; %llu extent reads\n",
		       c->sb.cur, in->seq, flaz_table_blocks(&in->geo), c->tb[TB_VALID],
		       c->tb[TB_UNWRITTEN], c->tb[TB_VOID], c->tb[TB_FOREIGN], bad,
		       flaz_gen_blocks(&in->geo), gb[TB_VALID], gb[TB_UNWRITTEN], gb[TB_VOID],
		       gb[TB_FOREIGN], gens_bad(&c->gens), c->slots, c->slot_bytes, c->zeros,
		       c->empty, c->void_entries, c->unusable, c->extent_reads);
}

/* One pass over the SSD; returns its verdict. */
static enum verdict run(struct checker *c)
{
	__u32 bytes;

	if (!check_superblocks(c))
		return verdict(c);
	check_geometry(c);
	bytes = c->info->geo.extent_sectors << FLAZ_SECTOR_SHIFT;
	c->ext = malloc(bytes);
	if (!c->ext) {
		say(c, K_CORRUPT, "out of memory");
		return verdict(c);
	}
	if (check_gens(c)) {
		check_table(c);
		repair_gens(c);
		check_intent(c);
	}
	free(c->ext);
	c->ext = NULL;
	return verdict(c);
}

static int parse_check(int argc, char **argv, const char **path, bool *repair)
{
	static const struct option lo[] = {
		{ "repair", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c != 'r')
			return bad_option(argv);
		*repair = true;
	}
	if (optind + 1 != argc)
		return fail(EXIT_USAGE, "usage: flazctl check SSD [--repair]");
	*path = argv[optind];
	return EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
	struct checker *c, *again;
	struct ssd ssd;
	const char *path = NULL;
	bool repair = false;
	enum verdict v;
	int r;

	r = parse_check(argc, argv, &path, &repair);
	if (r)
		return r;
	r = ssd_open(&ssd, path, repair, CORRUPT);
	if (r)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		ssd_close(&ssd);
		return fail(CORRUPT, "out of memory");
	}
	c->ssd = &ssd;
	c->repair = repair;
	printf("checking %s (%llu sectors)%s\n", path, ssd.bytes >> FLAZ_SECTOR_SHIFT,
	       repair ? ", repairing" : "");
	if (ssd.busy)
		printf("note: %s is in use (a live volume?): it may change while it is read\n", path);
	v = run(c);
	summary(c);
	if (c->count[K_REPAIRED]) {
		/* see whether the repair left anything: a quiet second pass, writing nothing */
		bool synced = !fsync(ssd.fd);

		if (!synced)
			say(c, K_CORRUPT, "cannot flush the repairs to %s: %s", path, strerror(errno));
		again = synced ? calloc(1, sizeof(*again)) : NULL;
		if (again) {
			again->ssd = &ssd;
			again->quiet = true;
			v = run(again) == CORRUPT ? CORRUPT : IGNORABLE;
			gens_free(&again->gens);
			free(again);
		} else {
			v = CORRUPT;
		}
		if (v == CORRUPT)
			printf("result: still corrupt after %llu repair%s: run flazctl check again to see what is left\n",
			       c->count[K_REPAIRED], plural(c->count[K_REPAIRED]));
		else
			printf("result: repaired (%llu repair%s)\n", c->count[K_REPAIRED],
			       plural(c->count[K_REPAIRED]));
	} else if (c->count[K_UNSUPPORTED]) {
		printf("result: format version %u, which this flazctl does not read (recreate the volume with --cold)\n",
		       c->sb.copy[c->other_version].version);
	} else if (v == CORRUPT) {
		printf("result: corrupt (%llu problem%s%s)\n", c->count[K_CORRUPT],
		       plural(c->count[K_CORRUPT]), repair ? ", none repairable" : "; flazctl check --repair may fix some");
	} else if (v == IGNORABLE) {
		printf("result: %llu warning%s, nothing corrupt\n", c->count[K_WARNING],
		       plural(c->count[K_WARNING]));
	} else {
		printf("result: clean\n");
	}
	gens_free(&c->gens);
	free(c);
	ssd_close(&ssd);
	return v;
}

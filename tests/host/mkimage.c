// SPDX-License-Identifier: GPL-2.0
/*
 * mkimage: write a dm-flaz SSD image file as the kernel would leave it, using only
 * the module's format.c encoders, for testing `flazctl check` and `flazctl dump`
 * on the host. Deterministic for a given --seed.
 *
 * Usage: mkimage OUT [options]   (see usage() below)
 *
 * Extents carry generations as the kernel's would after some evictions: odd
 * while in use, even while free, below the geometry's last even one,
 * flaz_gen_worn(). Each extent slots went into is at a random odd gen (extent
 * 1's is the last odd one, so --evict wears it out), the others at an even one,
 * every slot entry carries its extent's gen, and the gen blocks are written
 * after the table blocks. With --evict N, extents 1-N are evicted after their
 * entries were written: their gens are bumped (even: free) and their entries
 * left in the table, void.
 *
 * Prints one summary line of what the image holds (what flazctl should find):
 *   lines=N table_blocks=N gen_blocks=N slots=N zeros=N void=N extents=N slot_bytes=N
 *   marked=N dropped=N
 * (void: entries left by evictions; dropped: live entries the kernel drops for
 * the marked regions, by its rule for cut tags) and with --map FILE writes the
 * byte ranges that matter, one "KIND OFFSET LENGTH" a line:
 *   sbcur / sbold   the current / the other superblock copy
 *   table           a table block of this format (its lines' entries)
 *   gen             a gen block of this format (the extents' generations)
 *   exthdr          the header of an extent a live entry points into
 *   slot            the header and payload of a slot a live entry points at
 *   dead            a superseded slot no entry points at
 *   void / voidext  a slot / the header of an evicted extent: only void entries point there
 *   order           a chunk of the saved reclaim order: its header and payload
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"

struct opts {
	const char *out, *map;
	unsigned long long ssd_kib, hdd_mib, seed;
	unsigned int extent_kib, overbook, codec, slots, zeros, dead, current;
	unsigned int unclean;		/* regions to mark (0: clean shutdown) */
	unsigned int past_bit;		/* set a bitmap bit past the last region */
	const char *wrong;		/* the first live slot is wrong in this field */
	const char *gens;		/* the gen blocks: written, unwritten, void or foreign */
	long stale_block, foreign_block, unwritten_block, bad_gen_block;
	unsigned int evict;		/* extents 1-N evicted: gens bumped, entries left */
	unsigned int sb_version;	/* 0: FLAZ_SB_VERSION */
	unsigned long long sb_ssd_sectors;	/* 0: the image's; else both copies claim it */
	unsigned int order;		/* chunks of a saved reclaim order (0: none) */
	long order_damage;		/* chunk K of it with a flipped payload byte */
	unsigned int order_count;	/* the chunks the superblock names (0: the real count) */
};

static unsigned long long rng_state;

/* xorshift64*: deterministic test data */
static unsigned long long rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned long long rnd_below(unsigned long long n)
{
	return n ? rnd() % n : 0;
}

static int fd = -1;
static FILE *map;

static void die(const char *what)
{
	fprintf(stderr, "mkimage: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(__u64 off, const void *buf, size_t len)
{
	if (pwrite(fd, buf, len, off) != (ssize_t)len)
		die("write");
}

static void mapped(const char *kind, __u64 off, __u64 len)
{
	if (map)
		fprintf(map, "%s %llu %llu\n", kind, off, len);
}

static void usage(void)
{
	fputs("usage: mkimage OUT [--ssd-kib N (8192)] [--hdd-mib N (1024)] [--extent-kib N (32)]\n"
	      "        [--overbook P (200)] [--codec 0-3 (1)] [--slots N (300)] [--zeros N (20)]\n"
	      "        [--dead N (20): superseded slots] [--current 0|1 (0): current sb copy]\n"
	      "        [--unclean R: mark R regions holding cached blocks, not clean]\n"
	      "        [--stale-block I: table block I of an older format (void)]\n"
	      "        [--foreign-block I: table block I random bytes]\n"
	      "        [--unwritten-block I: table block I never written]\n"
	      "        [--past-bit 1: a bitmap bit set past the last region]\n"
	      "        [--wrong codec|line|block|size|cold: the first slot (sound checksum) or its entry's cold bit is wrong]\n"
	      "        [--gens written|unwritten|void|foreign (written): the gen blocks; but\n"
	      "         written, every extent is at gen 0 (a format with no eviction since)]\n"
	      "        [--evict N: extents 1-N evicted (gens bumped, their entries left, void)]\n"
	      "        [--bad-gen-block I: gen block I damaged (a flipped byte)]\n"
	      "        [--sb-version V: both superblock copies of format version V]\n"
	      "        [--sb-ssd-sectors N: both copies claim an SSD of N sectors (checksum\n"
	      "         right, derived fields left: an impossible superblock)]\n"
	      "        [--order N: a reclaim order saved in N chunks, in the last extents]\n"
	      "        [--order-damage K: chunk K of it with a flipped payload byte]\n"
	      "        [--order-count N: the superblock names N chunks of it, not the real count]\n"
	      "        [--seed S] [--map FILE]\n", stderr);
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ssd-kib", required_argument, NULL, 's' },
		{ "hdd-mib", required_argument, NULL, 'h' },
		{ "extent-kib", required_argument, NULL, 'e' },
		{ "overbook", required_argument, NULL, 'o' },
		{ "codec", required_argument, NULL, 'c' },
		{ "slots", required_argument, NULL, 'n' },
		{ "zeros", required_argument, NULL, 'z' },
		{ "dead", required_argument, NULL, 'd' },
		{ "current", required_argument, NULL, 'C' },
		{ "unclean", required_argument, NULL, 'u' },
		{ "stale-block", required_argument, NULL, 'S' },
		{ "foreign-block", required_argument, NULL, 'F' },
		{ "unwritten-block", required_argument, NULL, 'U' },
		{ "seed", required_argument, NULL, 'r' },
		{ "map", required_argument, NULL, 'm' },
		{ "past-bit", required_argument, NULL, 'P' },
		{ "wrong", required_argument, NULL, 'w' },
		{ "gens", required_argument, NULL, 'g' },
		{ "evict", required_argument, NULL, 'E' },
		{ "bad-gen-block", required_argument, NULL, 'B' },
		{ "sb-version", required_argument, NULL, 'V' },
		{ "sb-ssd-sectors", required_argument, NULL, 'X' },
		{ "order", required_argument, NULL, 'O' },
		{ "order-damage", required_argument, NULL, 'D' },
		{ "order-count", required_argument, NULL, 'Q' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .ssd_kib = 8192, .hdd_mib = 1024, .seed = 1, .extent_kib = 32,
			    .overbook = 200, .codec = 1, .slots = 300, .zeros = 20, .dead = 20,
			    .stale_block = -1, .foreign_block = -1, .unwritten_block = -1,
			    .bad_gen_block = -1, .order_damage = -1, .gens = "written" };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long v;
		char *end;

		if (c == 'm') {
			o->map = optarg;
			continue;
		}
		if (c == 'w') {
			if (strcmp(optarg, "codec") && strcmp(optarg, "line") &&
			    strcmp(optarg, "block") && strcmp(optarg, "size") &&
			    strcmp(optarg, "cold"))
				usage();
			o->wrong = optarg;
			continue;
		}
		if (c == 'g') {
			if (strcmp(optarg, "written") && strcmp(optarg, "unwritten") &&
			    strcmp(optarg, "void") && strcmp(optarg, "foreign"))
				usage();
			o->gens = optarg;
			continue;
		}
		if (c == '?')
			usage();
		v = strtoull(optarg, &end, 0);
		if (!*optarg || *end)
			usage();
		switch (c) {
		case 's': o->ssd_kib = v; break;
		case 'h': o->hdd_mib = v; break;
		case 'e': o->extent_kib = v; break;
		case 'o': o->overbook = v; break;
		case 'c': o->codec = v; break;
		case 'n': o->slots = v; break;
		case 'z': o->zeros = v; break;
		case 'd': o->dead = v; break;
		case 'C': o->current = v & 1; break;
		case 'u': o->unclean = v; break;
		case 'S': o->stale_block = v; break;
		case 'F': o->foreign_block = v; break;
		case 'U': o->unwritten_block = v; break;
		case 'r': o->seed = v; break;
		case 'P': o->past_bit = v; break;
		case 'E': o->evict = v; break;
		case 'B': o->bad_gen_block = v; break;
		case 'V': o->sb_version = v; break;
		case 'X': o->sb_ssd_sectors = v; break;
		case 'O': o->order = v; break;
		case 'D': o->order_damage = v; break;
		case 'Q': o->order_count = v; break;
		}
	}
	/* an eviction writes its gen block */
	if (optind + 1 != argc || (o->evict && strcmp(o->gens, "written")) ||
	    ((o->order_damage >= 0 || o->order_count) && !o->order) ||
	    o->order_damage >= (long)o->order)
		usage();
	o->out = argv[optind];
}

/* The extent being filled, written out (round_up(used, 4 KiB) of it) when full. */
struct filler {
	const struct flaz_geometry *g;
	unsigned char *buf;
	__u32 bytes, used, nr_slots, ext;
	__u64 seq;
	unsigned char *live;	/* per extent: a live entry points into it */
	const unsigned char *evicted;	/* per extent: evicted after it was filled */
};

static void seal(struct filler *f)
{
	if (f->used <= sizeof(struct flaz_extent_hdr))
		return;
	flaz_extent_encode(f->buf, f->seq++, f->ext, f->used, f->nr_slots);
	put(((f->g->data_start + (__u64)f->ext * f->g->extent_sectors) << FLAZ_SECTOR_SHIFT),
	    f->buf, (f->used + FLAZ_BLOCK_SIZE - 1) & ~(FLAZ_BLOCK_SIZE - 1));
	if (f->live[f->ext] || f->evicted[f->ext])
		mapped(f->live[f->ext] ? "exthdr" : "voidext",
		       (f->g->data_start + (__u64)f->ext * f->g->extent_sectors) << FLAZ_SECTOR_SHIFT,
		       sizeof(struct flaz_extent_hdr));
	f->ext++;
	if (f->ext >= f->g->nr_extents) {
		fputs("mkimage: the SSD is too small for these slots\n", stderr);
		exit(1);
	}
	memset(f->buf, 0, f->bytes);
	f->used = sizeof(struct flaz_extent_hdr);
	f->nr_slots = 0;
}

/*
 * Append a slot for @block on @line; returns its offset (its extent is f->ext).
 * *live says whether an entry will point at it, and is cleared when its extent
 * is one that gets evicted.
 */
static __u32 add_slot(struct filler *f, __u64 block, __u32 line, __u8 codec, bool *live,
		      __u32 *bytes)
{
	struct flaz_slot_info s = { .block = block, .line = line, .codec = codec };
	__u32 off, i;
	unsigned char *p;

	if (rnd_below(2)) {
		s.flags = FLAZ_SLOT_RAW;
		s.len = FLAZ_BLOCK_SIZE;
	} else {
		s.len = 1 + rnd_below(FLAZ_BLOCK_SIZE - 200);	/* "compressed" */
	}
	/* small extents cannot hold a raw block: "compress" it to what fits */
	if (flaz_slot_bytes(s.len) > f->bytes - sizeof(struct flaz_extent_hdr)) {
		s.flags = 0;
		s.len = f->bytes - sizeof(struct flaz_extent_hdr) - sizeof(struct flaz_slot_hdr);
	}
	if (f->used + flaz_slot_bytes(s.len) > f->bytes)
		seal(f);
	*live = *live && !f->evicted[f->ext];
	off = f->used;
	p = f->buf + off;
	for (i = 0; i < s.len; i++)
		p[sizeof(struct flaz_slot_hdr) + i] = (unsigned char)rnd();
	s.seq = f->seq++;
	flaz_slot_encode(p, &s);
	f->used += s.bytes;
	f->nr_slots++;
	if (*live)
		f->live[f->ext] = 1;
	/* the bytes a checksum covers: header and payload, not the padding */
	mapped(*live ? "slot" : f->evicted[f->ext] ? "void" : "dead",
	       ((f->g->data_start + (__u64)f->ext * f->g->extent_sectors) << FLAZ_SECTOR_SHIFT) +
	       off, sizeof(struct flaz_slot_hdr) + s.len);
	*bytes = s.bytes;
	return off;
}

/*
 * Whether the kernel drops live entry @e of @line at load: a block it may stand
 * for (for a cut tag, any block of the line with those low tag bits, one every
 * period) is in a marked region. A region holds one if fewer of them lie below
 * its start than below its end: no walk over a volume of any size.
 */
static bool dropped_at_load(const struct flaz_geometry *g, const unsigned char *bitmap,
			    __u32 shift, __u64 hdd_blocks, __u64 line,
			    const struct flaz_entry_info *e)
{
	__u64 first = e->tag * g->nr_lines + line, period = g->nr_lines << FLAZ_TAG_BITS;
	__u64 start, end, below_start, below_end;
	__u32 r;

	if (e->units == FLAZ_ENTRY_ZERO_UNITS) {
		r = first >> shift;
		return first < hdd_blocks && (bitmap[r / 8] & (1U << (r % 8)));
	}
	for (r = 0; r < FLAZ_MAX_REGIONS; r++) {
		if (!(bitmap[r / 8] & (1U << (r % 8))))
			continue;
		start = (__u64)r << shift;
		end = ((__u64)r + 1) << shift;
		if (start >= hdd_blocks)
			break;
		if (end > hdd_blocks)
			end = hdd_blocks;
		below_start = start > first ? (start - first - 1) / period + 1 : 0;
		below_end = end > first ? (end - first - 1) / period + 1 : 0;
		if (below_end > below_start)
			return true;
	}
	return false;
}

/* The superblock block @blk with --sb-version and --sb-ssd-sectors, its checksum made anew. */
static void craft_sb(unsigned char *blk, const struct opts *o)
{
	struct flaz_sb *sb = (struct flaz_sb *)blk;

	if (!o->sb_version && !o->sb_ssd_sectors)
		return;
	if (o->sb_version)
		sb->version = htole32(o->sb_version);
	if (o->sb_ssd_sectors)
		sb->ssd_sectors = htole64(o->sb_ssd_sectors);
	sb->crc = 0;
	sb->crc = htole32(~flaz_crc32c(~0U, blk, FLAZ_BLOCK_SIZE));
}

/*
 * The reclaim order a clean stop saves (the kernel's order.c), in @o->order
 * chunks in the last extents (free: no slot went there), the payload split
 * evenly: the head, the extents in use (the first tenth probation), the heat (2
 * bits a line as flaz_order_heat_words() lays them out, a byte pattern) and a
 * hit bit for every other extent in use.
 */
static void write_order(const struct opts *o, struct flaz_sb_info *info,
			const unsigned char *live, __u32 first_free)
{
	const struct flaz_geometry *g = &info->geo;
	__u32 eb = g->extent_sectors << FLAZ_SECTOR_SHIFT, hdr = sizeof(struct flaz_order_hdr);
	__u64 heat_words = flaz_order_heat_words(g), hit_words = flaz_order_hit_words(g);
	__u32 nr = 0, i, k, cap, first = o->order < g->nr_extents ? g->nr_extents - o->order : 0;
	struct flaz_order_head head;
	unsigned char *pay, *buf, *w;
	__u64 bytes;
	__le32 id;

	for (i = 0; i < g->nr_extents; i++)
		nr += live[i];
	bytes = sizeof(head) + nr * 4ULL + (heat_words + hit_words) * 8;
	cap = (bytes + o->order - 1) / o->order;
	if (first < first_free || cap > eb - hdr || (__u64)(o->order - 1) * cap >= bytes) {
		fprintf(stderr, "mkimage: --order %u: %llu payload bytes do not make that many chunks\n",
			o->order, bytes);
		exit(2);
	}
	pay = calloc(1, bytes);
	buf = calloc(1, eb);
	if (!pay || !buf)
		die("calloc");
	head.nr_probation = htole32(nr / 10);
	head.nr_main = htole32(nr - nr / 10);
	head.heat_words = htole64(heat_words);
	memcpy(pay, &head, sizeof(head));
	w = pay + sizeof(head);
	for (i = 0; i < g->nr_extents; i++)
		if (live[i]) {
			id = htole32(i);
			memcpy(w, &id, sizeof(id));
			w += sizeof(id);
		}
	memset(w, 0x1b, heat_words * 8);
	w += heat_words * 8;
	/* every other extent in use hit, bit i % 64 of little-endian word i / 64 */
	for (i = 0, k = 0; i < g->nr_extents; i++)
		if (live[i] && k++ % 2)
			w[i / 8] |= 1U << (i % 8);
	for (i = 0; i < o->order; i++) {
		__u32 n = i + 1 < o->order ? cap : bytes - (__u64)i * cap;
		__u64 off = flaz_extent_sector(g, first + i) << FLAZ_SECTOR_SHIFT;

		memset(buf, 0, eb);
		memcpy(buf + hdr, pay + (__u64)i * cap, n);
		flaz_order_encode(buf, info->gen, info->commit, i,
				  i + 1 < o->order ? first + i + 1 : FLAZ_ORDER_NONE, n);
		if ((long)i == o->order_damage)
			buf[hdr + n / 2] ^= 0x5a;
		put(off, buf, (hdr + n + FLAZ_BLOCK_SIZE - 1) & ~(FLAZ_BLOCK_SIZE - 1));
		mapped("order", off, hdr + n);
	}
	info->order_first = first;
	info->order_extents = o->order_count ? o->order_count : o->order;
	free(pay);
	free(buf);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct flaz_sb_info info = { 0 };
	struct flaz_geometry *g = &info.geo;
	struct filler f = { 0 };
	struct flaz_entry_info e;
	unsigned char blk[FLAZ_BLOCK_SIZE], bitmap[FLAZ_SB_BITMAP_BYTES] = { 0 };
	unsigned char zero_bitmap[FLAZ_SB_BITMAP_BYTES] = { 0 };
	__u64 hdd_blocks, nr_tb, nr_gb, i, line, block, tag, max_tag, slot_bytes = 0;
	__u64 *entries;
	__u32 n, nslots = 0, nzeros = 0, nvoid = 0, nextents = 0, marked = 0, dropped = 0;
	__u32 bytes, off;
	unsigned char *live_block, *evicted;
	__u16 *gens, worn, *junk;
	bool written;

	parse(argc, argv, &o);
	written = !strcmp(o.gens, "written");
	rng_state = o.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (flaz_geometry_init(g, o.ssd_kib * 2, o.extent_kib, o.overbook)) {
		fputs("mkimage: bad geometry\n", stderr);
		return 2;
	}
	hdd_blocks = o.hdd_mib * 256;
	info.seq = 10 + o.current;	/* the kernel writes seq S to copy S % 2 */
	info.gen = rnd();
	for (i = 0; i < sizeof(info.uuid); i++)
		info.uuid[i] = rnd();
	info.flags = o.unclean ? 0 : FLAZ_SB_CLEAN;
	info.hdd_sectors = hdd_blocks * 8;
	info.extent_kib = o.extent_kib;
	info.overbook = o.overbook;
	info.codec = o.codec;
	info.region_shift = flaz_region_shift(hdd_blocks);
	info.nr_regions = (hdd_blocks + (1ULL << info.region_shift) - 1) >> info.region_shift;
	info.hdd_fp = rnd();
	info.commit = 5;
	if (o.slots + o.zeros > g->nr_lines || o.slots + o.zeros > hdd_blocks) {
		fputs("mkimage: more entries than lines\n", stderr);
		return 2;
	}

	nr_tb = flaz_table_blocks(g);
	nr_gb = flaz_gen_blocks(g);
	if (o.bad_gen_block >= 0 && (__u64)o.bad_gen_block >= nr_gb) {
		fputs("mkimage: no such gen block\n", stderr);
		return 2;
	}
	entries = calloc(nr_tb * FLAZ_META_ENTRIES, sizeof(*entries));
	live_block = calloc(nr_tb, 1);
	evicted = calloc(g->nr_extents, 1);
	gens = calloc(nr_gb * FLAZ_GEN_ENTRIES, sizeof(*gens));
	junk = calloc(FLAZ_GEN_ENTRIES, sizeof(*junk));
	f.g = g;
	f.bytes = g->extent_sectors << FLAZ_SECTOR_SHIFT;
	f.buf = calloc(1, f.bytes);
	f.live = calloc(g->nr_extents, 1);
	f.evicted = evicted;
	if (!entries || !live_block || !evicted || !gens || !junk || !f.buf || !f.live)
		die("calloc");
	for (i = 0; i < nr_tb; i++)
		live_block[i] = (long)i != o.stale_block && (long)i != o.foreign_block &&
				(long)i != o.unwritten_block;
	for (i = 1; i <= o.evict && i < g->nr_extents; i++)
		evicted[i] = 1;
	/*
	 * Each extent's generation: some evictions behind it, odd as if in use (the
	 * ones no slot goes into are made free below), below the last even one (an
	 * extent there is worn out). Without gen blocks of this format (none written
	 * since the format) every extent is at 0.
	 */
	worn = flaz_gen_worn(g);
	for (i = 0; written && i < g->nr_extents; i++)
		gens[i] = i == 1 && o.evict ? worn - 1 : (__u16)(rnd_below(worn / 2) * 2 + 1);

	fd = open(o.out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(o.out);
	if (ftruncate(fd, g->ssd_sectors << FLAZ_SECTOR_SHIFT))
		die("truncate");
	if (o.map) {
		map = fopen(o.map, "w");
		if (!map)
			die(o.map);
	}

	/* slots and zero blocks on distinct random lines, each with a random block of its line */
	f.used = sizeof(struct flaz_extent_hdr);
	f.seq = 1000;
	for (n = 0; n < o.slots + o.zeros; n++) {
		bool live, in_table, dead = false;

		memset(&e, 0, sizeof(e));
		do
			line = rnd_below(g->nr_lines < hdd_blocks ? g->nr_lines : hdd_blocks);
		while (entries[line]);
		max_tag = (hdd_blocks - 1 - line) / g->nr_lines;
		tag = rnd_below(max_tag + 1);
		block = tag * g->nr_lines + line;
		in_table = live_block[line / FLAZ_META_ENTRIES];
		live = in_table;
		e.tag = tag;
		if (n >= o.slots) {
			e.units = FLAZ_ENTRY_ZERO_UNITS;
			nzeros += live;
		} else {
			/* now and then an older copy of the block first, superseded */
			if (n < o.dead)
				add_slot(&f, block, line, o.codec, &dead, &bytes);
			bool bad = n == 0 && o.wrong;

			off = add_slot(&f, bad && !strcmp(o.wrong, "block") ? block + 1 : block,
				       bad && !strcmp(o.wrong, "line") ? line + 1 : line,
				       bad && !strcmp(o.wrong, "codec") ? (o.codec + 1) % 4 : o.codec,
				       &live, &bytes);
			e.units = bytes / FLAZ_SLOT_ALIGN + (bad && !strcmp(o.wrong, "size"));
			e.off = off;
			e.ext = f.ext;
			e.cold = bad && !strcmp(o.wrong, "cold");
			e.gen = gens[f.ext];	/* the extent's generation when the entry was made */
			if (live) {
				nslots++;
				slot_bytes += bytes;
			} else if (in_table) {
				nvoid++;	/* its extent is evicted below */
			}
		}
		entries[line] = flaz_entry_pack(&e, g);
		/* unclean: mark the regions of the first cached blocks */
		if (live && marked < o.unclean) {
			__u64 r = block >> info.region_shift;

			if (!(bitmap[r / 8] & (1U << (r % 8)))) {
				bitmap[r / 8] |= 1U << (r % 8);
				marked++;
			}
		}
	}
	seal(&f);
	/*
	 * extents 1-N evicted: their gens move on (extent 1's to the last: it is worn
	 * out), the entries into them stay in the table
	 */
	if (o.evict && o.evict >= f.ext) {
		fprintf(stderr, "mkimage: --evict %u: only %u extents were filled\n", o.evict, f.ext);
		return 2;
	}
	for (i = 1; i <= o.evict; i++)
		gens[i]++;
	/* the extents no slot went into are free: an even gen, from their last eviction */
	for (i = f.ext; written && i < g->nr_extents; i++)
		gens[i]--;
	if (o.past_bit && info.nr_regions < FLAZ_MAX_REGIONS)
		bitmap[info.nr_regions / 8] |= 1U << (info.nr_regions % 8);
	for (i = 0; i < g->nr_extents; i++)
		nextents += f.live[i];
	for (line = 0; line < g->nr_lines; line++) {
		flaz_entry_unpack(entries[line], g, &e);
		if (!e.units || !live_block[line / FLAZ_META_ENTRIES] ||
		    (e.units != FLAZ_ENTRY_ZERO_UNITS && e.gen != gens[e.ext]))
			continue;
		dropped += dropped_at_load(g, bitmap, info.region_shift, hdd_blocks, line, &e);
	}

	/* the table: every block written (the kernel may leave some unwritten) */
	for (i = 0; i < nr_tb; i++) {
		__u64 off_tb = (g->meta_start << FLAZ_SECTOR_SHIFT) + i * FLAZ_BLOCK_SIZE;

		if ((long)i == o.unwritten_block)
			continue;
		if ((long)i == o.foreign_block) {
			for (n = 0; n < FLAZ_BLOCK_SIZE; n++)
				blk[n] = rnd();
		} else {
			flaz_meta_encode(blk, (long)i == o.stale_block ? info.gen ^ 0x5a5a : info.gen,
					 info.commit - (i & 1), i, entries + i * FLAZ_META_ENTRIES);
			if ((long)i != o.stale_block)
				mapped("table", off_tb, FLAZ_BLOCK_SIZE);
		}
		put(off_tb, blk, FLAZ_BLOCK_SIZE);
	}

	/* the gen blocks, after the table blocks */
	for (i = 0; i < nr_gb && strcmp(o.gens, "unwritten"); i++) {
		__u64 off_gb = (g->gen_start << FLAZ_SECTOR_SHIFT) + i * FLAZ_BLOCK_SIZE;

		if (!strcmp(o.gens, "foreign")) {
			for (n = 0; n < FLAZ_BLOCK_SIZE; n++)
				blk[n] = rnd();
		} else if (!strcmp(o.gens, "void")) {
			/* an earlier format's, with its own gens */
			for (n = 0; n < FLAZ_GEN_ENTRIES; n++)
				junk[n] = rnd();
			flaz_gen_encode(blk, info.gen ^ 0xa5a5, info.commit, i, junk);
		} else {
			flaz_gen_encode(blk, info.gen, info.commit, i, gens + i * FLAZ_GEN_ENTRIES);
			if ((long)i == o.bad_gen_block)
				blk[sizeof(struct flaz_gen_hdr) + 7] ^= 0x5a;
			else
				mapped("gen", off_gb, FLAZ_BLOCK_SIZE);
		}
		put(off_gb, blk, FLAZ_BLOCK_SIZE);
	}

	if (o.order)
		write_order(&o, &info, f.live, f.ext);
	/* two superblock copies: the current one, and the one before it (clean, empty bitmap) */
	info.next_seq = f.seq;
	flaz_sb_encode(blk, &info, bitmap);
	craft_sb(blk, &o);
	put((__u64)o.current * FLAZ_BLOCK_SIZE, blk, FLAZ_BLOCK_SIZE);
	mapped("sbcur", (__u64)o.current * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);
	info.seq--;
	info.commit--;
	info.flags = FLAZ_SB_CLEAN;
	info.order_first = 0;
	info.order_extents = 0;
	flaz_sb_encode(blk, &info, zero_bitmap);
	craft_sb(blk, &o);
	put((__u64)!o.current * FLAZ_BLOCK_SIZE, blk, FLAZ_BLOCK_SIZE);
	mapped("sbold", (__u64)!o.current * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);

	printf("lines=%llu table_blocks=%llu gen_blocks=%llu slots=%u zeros=%u void=%u extents=%u slot_bytes=%llu marked=%u dropped=%u\n",
	       g->nr_lines, nr_tb, nr_gb, nslots, nzeros, nvoid, nextents, slot_bytes, marked,
	       dropped);
	if (map && fclose(map))
		die(o.map);
	if (close(fd))
		die("close");
	free(entries);
	free(live_block);
	free(evicted);
	free(gens);
	free(junk);
	free(f.buf);
	free(f.live);
	return 0;
}

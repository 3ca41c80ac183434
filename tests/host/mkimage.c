// SPDX-License-Identifier: GPL-2.0
/*
 * mkimage: write a dm-flaz SSD image file as the kernel would leave it, using only
 * the module's format.c encoders, for testing `flazctl check` and `flazctl dump`
 * on the host. Deterministic for a given --seed.
 *
 * Usage: mkimage OUT [options]   (see usage() below)
 *
 * Prints one summary line of what the image holds (what flazctl should find):
 *   lines=N table_blocks=N slots=N zeros=N extents=N slot_bytes=N marked=N dropped=N
 * and with --map FILE writes the byte ranges that matter, one "KIND OFFSET LENGTH" a line:
 *   sbcur / sbold   the current / the other superblock copy
 *   table           a table block of this format (its lines' entries)
 *   exthdr          the header of an extent a live entry points into
 *   slot            the header and payload of a slot a live entry points at
 *   dead            a superseded slot no entry points at
 */
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
	long stale_block, foreign_block, unwritten_block;
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
	      "        [--wrong codec|line|block|size: the first slot (sound checksum) is wrong]\n"
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
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .ssd_kib = 8192, .hdd_mib = 1024, .seed = 1, .extent_kib = 32,
			    .overbook = 200, .codec = 1, .slots = 300, .zeros = 20, .dead = 20,
			    .stale_block = -1, .foreign_block = -1, .unwritten_block = -1 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long v;
		char *end;

		if (c == 'm') {
			o->map = optarg;
			continue;
		}
		if (c == 'w') {
			if (strcmp(optarg, "codec") && strcmp(optarg, "line") &&
			    strcmp(optarg, "block") && strcmp(optarg, "size"))
				usage();
			o->wrong = optarg;
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
		}
	}
	if (optind + 1 != argc)
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
};

static void seal(struct filler *f)
{
	if (f->used <= sizeof(struct flaz_extent_hdr))
		return;
	flaz_extent_encode(f->buf, f->seq++, f->ext, f->used, f->nr_slots);
	put(((f->g->data_start + (__u64)f->ext * f->g->extent_sectors) << FLAZ_SECTOR_SHIFT),
	    f->buf, (f->used + FLAZ_BLOCK_SIZE - 1) & ~(FLAZ_BLOCK_SIZE - 1));
	if (f->live[f->ext])
		mapped("exthdr", (f->g->data_start + (__u64)f->ext * f->g->extent_sectors) <<
				 FLAZ_SECTOR_SHIFT, sizeof(struct flaz_extent_hdr));
	f->ext++;
	if (f->ext >= f->g->nr_extents) {
		fputs("mkimage: the SSD is too small for these slots\n", stderr);
		exit(1);
	}
	memset(f->buf, 0, f->bytes);
	f->used = sizeof(struct flaz_extent_hdr);
	f->nr_slots = 0;
}

/* Append a slot for @block on @line; returns its offset (its extent is f->ext). */
static __u32 add_slot(struct filler *f, __u64 block, __u32 line, __u8 codec, bool live,
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
	off = f->used;
	p = f->buf + off;
	for (i = 0; i < s.len; i++)
		p[sizeof(struct flaz_slot_hdr) + i] = (unsigned char)rnd();
	s.seq = f->seq++;
	flaz_slot_encode(p, &s);
	f->used += s.bytes;
	f->nr_slots++;
	if (live)
		f->live[f->ext] = 1;
	/* the bytes a checksum covers: header and payload, not the padding */
	mapped(live ? "slot" : "dead",
	       ((f->g->data_start + (__u64)f->ext * f->g->extent_sectors) << FLAZ_SECTOR_SHIFT) +
	       off, sizeof(struct flaz_slot_hdr) + s.len);
	*bytes = s.bytes;
	return off;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct flaz_sb_info info = { 0 };
	struct flaz_geometry *g = &info.geo;
	struct filler f = { 0 };
	unsigned char blk[FLAZ_BLOCK_SIZE], bitmap[FLAZ_SB_BITMAP_BYTES] = { 0 };
	unsigned char zero_bitmap[FLAZ_SB_BITMAP_BYTES] = { 0 };
	__u64 hdd_blocks, nr_tb, i, line, block, tag, max_tag, slot_bytes = 0;
	__u64 *entries, *blocks;
	__u32 n, nslots = 0, nzeros = 0, nextents = 0, marked = 0, dropped = 0, bytes, off;
	unsigned char *live_block;

	parse(argc, argv, &o);
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

	nr_tb = (g->nr_lines + FLAZ_META_ENTRIES - 1) / FLAZ_META_ENTRIES;
	entries = calloc(nr_tb * FLAZ_META_ENTRIES, sizeof(*entries));
	blocks = calloc(g->nr_lines, sizeof(*blocks));
	live_block = calloc(nr_tb, 1);
	f.g = g;
	f.bytes = g->extent_sectors << FLAZ_SECTOR_SHIFT;
	f.buf = calloc(1, f.bytes);
	f.live = calloc(g->nr_extents, 1);
	if (!entries || !blocks || !live_block || !f.buf || !f.live)
		die("calloc");
	for (i = 0; i < nr_tb; i++)
		live_block[i] = (long)i != o.stale_block && (long)i != o.foreign_block &&
				(long)i != o.unwritten_block;

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
		struct flaz_entry_info e = { 0 };
		bool live;

		do
			line = rnd_below(g->nr_lines < hdd_blocks ? g->nr_lines : hdd_blocks);
		while (entries[line]);
		max_tag = (hdd_blocks - 1 - line) / g->nr_lines;
		tag = rnd_below(max_tag + 1);
		block = tag * g->nr_lines + line;
		live = live_block[line / FLAZ_META_ENTRIES];
		e.tag = tag;
		if (n >= o.slots) {
			e.units = FLAZ_ENTRY_ZERO_UNITS;
			nzeros += live;
		} else {
			/* now and then an older copy of the block first, superseded */
			if (n < o.dead)
				add_slot(&f, block, line, o.codec, false, &bytes);
			bool bad = n == 0 && o.wrong;

			off = add_slot(&f, bad && !strcmp(o.wrong, "block") ? block + 1 : block,
				       bad && !strcmp(o.wrong, "line") ? line + 1 : line,
				       bad && !strcmp(o.wrong, "codec") ? (o.codec + 1) % 4 : o.codec,
				       live, &bytes);
			e.units = bytes / FLAZ_SLOT_ALIGN + (bad && !strcmp(o.wrong, "size"));
			e.off = off;
			e.ext = f.ext;
			if (live) {
				nslots++;
				slot_bytes += bytes;
			}
		}
		entries[line] = flaz_entry_pack(&e);
		blocks[line] = block + 1;
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
	if (o.past_bit && info.nr_regions < FLAZ_MAX_REGIONS)
		bitmap[info.nr_regions / 8] |= 1U << (info.nr_regions % 8);
	for (i = 0; i < g->nr_extents; i++)
		nextents += f.live[i];
	for (line = 0; line < g->nr_lines; line++) {
		__u64 r;

		if (!blocks[line] || !live_block[line / FLAZ_META_ENTRIES])
			continue;
		r = (blocks[line] - 1) >> info.region_shift;
		dropped += !!(bitmap[r / 8] & (1U << (r % 8)));
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

	/* two superblock copies: the current one, and the one before it (clean, empty bitmap) */
	info.next_seq = f.seq;
	flaz_sb_encode(blk, &info, bitmap);
	put((__u64)o.current * FLAZ_BLOCK_SIZE, blk, FLAZ_BLOCK_SIZE);
	mapped("sbcur", (__u64)o.current * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);
	info.seq--;
	info.commit--;
	info.flags = FLAZ_SB_CLEAN;
	flaz_sb_encode(blk, &info, zero_bitmap);
	put((__u64)!o.current * FLAZ_BLOCK_SIZE, blk, FLAZ_BLOCK_SIZE);
	mapped("sbold", (__u64)!o.current * FLAZ_BLOCK_SIZE, FLAZ_BLOCK_SIZE);

	printf("lines=%llu table_blocks=%llu slots=%u zeros=%u extents=%u slot_bytes=%llu marked=%u dropped=%u\n",
	       g->nr_lines, nr_tb, nslots, nzeros, nextents, slot_bytes, marked, dropped);
	if (map && fclose(map))
		die(o.map);
	if (close(fd))
		die("close");
	free(entries);
	free(blocks);
	free(live_block);
	free(f.buf);
	free(f.live);
	return 0;
}

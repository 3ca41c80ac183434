// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl check: the reclaim order a clean stop saved (format.h, flaz_order_hdr),
 * a chain of chunks in extents free at the stop, named by the clean superblock.
 * The kernel reads it back at the next activation; from a chunk that fails on,
 * it takes the written extents in index order. Damage costs the order, never
 * data, so it is a warning, and nothing is repaired: the next stop writes a new one.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

#define AT_CHUNK(i, x)	(&(const struct where){ .area = "order", .key = "chunk", \
					       .index = (i), .extent = (x), \
					       .has = W_INDEX | W_EXTENT })

/* The chain being read: its chunks in turn through one extent's buffer. */
struct order_read {
	struct checker *c;
	const struct flaz_geometry *g;
	unsigned char *buf;
	__u32 eb;		/* extent bytes */
	__u32 nr;		/* chunks the superblock names */
	__u32 index;		/* the next chunk */
	__u32 ext;		/* the next chunk's extent; then the current one's */
	__u32 cur, cur_index;	/* the chunk read last (or being read), and its extent */
	__u32 avail, pos;	/* the chunk's payload bytes, and those taken */
	__u64 payload;		/* payload bytes of the chunks read */
	unsigned char *chain;	/* per extent: 1 a chunk of the chain, 2 a saved id */
	const char *why;	/* the first problem, or NULL */
	bool whole;		/* the kernel reads it all the same: an inconsistency only */
	char msg[96];
};

static void bad(struct order_read *o, const char *why)
{
	if (!o->why)
		o->why = why;
}

/* Read the next chunk into the buffer. Returns 0, or -1 with o->why set. */
static int next_chunk(struct order_read *o)
{
	__u32 next, bytes;
	int r;

	if (o->index == o->nr) {
		bad(o, "its payload goes on past the superblock's count of chunks");
		return -1;
	}
	if (o->ext == FLAZ_ORDER_NONE) {
		bad(o, "the chain ends before its payload does");
		return -1;
	}
	o->cur = o->ext;
	o->cur_index = o->index;
	if (o->ext >= o->g->nr_extents) {
		bad(o, "its extent is past the last one");
		return -1;
	}
	if (o->chain[o->ext]) {
		bad(o, o->chain[o->ext] == 1 ? "the chain comes back to one of its extents" :
		    "its extent is one the saved order names");
		return -1;
	}
	o->chain[o->ext] = 1;
	r = ssd_read(o->c->ssd, extent_offset(o->g, o->ext), o->buf, o->eb);
	if (r) {
		snprintf(o->msg, sizeof(o->msg), "unreadable: %s", ssd_strerror(r));
		bad(o, o->msg);
		return -1;
	}
	if (flaz_order_decode(o->buf, o->eb, o->c->info->gen, o->c->info->commit, o->index,
			      &next, &bytes)) {
		bad(o, "it fails its checks (magic, checksum, gen, commit or index)");
		return -1;
	}
	o->index++;
	o->ext = next;
	o->avail = bytes;
	o->pos = 0;
	o->payload += bytes;
	return 0;
}

/* Take @len bytes of the stream into @p. */
static int take(struct order_read *o, void *p, __u32 len)
{
	unsigned char *d = p;

	while (len) {
		__u32 n = o->avail - o->pos < len ? o->avail - o->pos : len;

		if (!n) {
			if (next_chunk(o))
				return -1;
			continue;
		}
		memcpy(d, o->buf + sizeof(struct flaz_order_hdr) + o->pos, n);
		o->pos += n;
		d += n;
		len -= n;
	}
	return 0;
}

/*
 * The saved ids: in range, each once, none in a chunk's extent, each in use by
 * its generation (odd, or worn out), as the kernel places them.
 */
static int take_ids(struct order_read *o, __u64 n)
{
	const struct ext_gens *eg = &o->c->gens;
	__le32 id;
	__u32 x;
	__u16 gen;

	for (; n; n--) {
		if (take(o, &id, sizeof(id)))
			return -1;
		x = le32toh(id);
		if (x >= o->g->nr_extents || o->chain[x]) {
			bad(o, x >= o->g->nr_extents ? "it names an extent past the last one" :
			    o->chain[x] == 1 ? "it names an extent the chain is written in" :
			    "it names an extent twice");
			return -1;
		}
		o->chain[x] = 2;
		gen = eg->gen[x];
		if (eg->state[x / FLAZ_GEN_ENTRIES] == TB_VALID && !(gen & 1) &&
		    gen != flaz_gen_worn(o->g)) {
			bad(o, "it names an extent that is free by its generation");
			return -1;
		}
	}
	return 0;
}

/* Skip @n bytes of the stream. */
static int skip(struct order_read *o, __u64 n)
{
	unsigned char scratch[512];

	while (n) {
		__u32 k = n < sizeof(scratch) ? n : sizeof(scratch);

		if (take(o, scratch, k))
			return -1;
		n -= k;
	}
	return 0;
}

/* The whole stream: head, ids, heat, hit bits, and nothing after them. */
static void read_all(struct order_read *o, __u32 *probation, __u32 *main_nr)
{
	__u64 hit_words = flaz_order_hit_words(o->g), heat_words;
	struct flaz_order_head head;

	if (take(o, &head, sizeof(head)))
		return;
	*probation = le32toh(head.nr_probation);
	*main_nr = le32toh(head.nr_main);
	heat_words = le64toh(head.heat_words);
	if ((__u64)*probation + *main_nr > o->g->nr_extents) {
		bad(o, "it saves more extents than the SSD has");
		return;
	}
	if (heat_words != flaz_order_heat_words(o->g)) {
		bad(o, "its heat is not of this table's lines");
		return;
	}
	if (take_ids(o, (__u64)*probation + *main_nr) || skip(o, (heat_words + hit_words) * 8))
		return;
	/* the kernel stops at the stream's end: what comes after it is not read */
	if (o->pos != o->avail || o->index != o->nr || o->ext != FLAZ_ORDER_NONE) {
		o->whole = true;
		bad(o, "more chunks or bytes follow its end");
	}
}

/* Verify the reclaim order the current superblock names, if any. */
void check_order(struct checker *c)
{
	const struct flaz_sb_info *in = c->info;
	struct order_read o = { .c = c, .g = &in->geo, .nr = in->order_extents,
				.ext = in->order_first, .cur = in->order_first };
	__u32 probation = 0, main_nr = 0;

	if (!in->order_extents)
		return;
	if (!(in->flags & FLAZ_SB_CLEAN)) {
		say(c, K_WARNING, AT("superblock"), "the superblock names a reclaim order but is not clean: the kernel ignores it");
		return;
	}
	o.eb = in->geo.extent_sectors << FLAZ_SECTOR_SHIFT;
	o.buf = malloc(o.eb);
	o.chain = calloc(in->geo.nr_extents, 1);
	if (!o.buf || !o.chain) {
		say(c, K_CORRUPT, AT("memory"), "out of memory");
		goto out;
	}
	if (in->order_extents > in->geo.nr_extents)
		bad(&o, "the superblock names more chunks than the SSD has extents");
	else
		read_all(&o, &probation, &main_nr);
	if (o.why && o.whole)
		say(c, K_WARNING, AT_CHUNK(o.cur_index, o.cur),
		    "the reclaim order saved at the clean stop is not as its superblock says in its chunk %u (0 to %u, extent %u): %s; the next activation reads it all the same",
		    o.cur_index, o.nr - 1, o.cur, o.why);
	else if (o.why)
		say(c, K_WARNING, AT_CHUNK(o.cur_index, o.cur),
		    "the reclaim order saved at the clean stop is damaged in its chunk %u (0 to %u, extent %u): %s; the next activation places the extents it read before it, the rest by index (no data is lost)",
		    o.cur_index, o.nr - 1, o.cur, o.why);
	else
		note(c, "reclaim order: %u extents (%u probation, %u main), the lines' heat and the hit bits, in %u chunk%s from extent %u, %llu bytes",
		     probation + main_nr, probation, main_nr, o.nr, plural(o.nr), in->order_first,
		     o.payload);
out:
	free(o.buf);
	free(o.chain);
}

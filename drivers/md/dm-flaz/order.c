// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz reclaim order across a restart. Which written extents are in
 * probation and main and in what order, the lines' heat and which extents
 * were hit live in DRAM: without them an activation queues every written
 * extent in main by index, none hit, and its first reclaim drops whatever
 * main's lowest extents hold, the hot set too (design.md, "After a restart").
 *
 * So a clean stop writes them into extents that are free then, a chain of
 * chunks (format.h, flaz_order_hdr), and its clean superblock names the first;
 * an activation after it reads them back before any I/O. Every other
 * superblock names none: after the first one written, a fill may take those
 * extents. The order decides what reclaim takes first, never what is read: a
 * chunk that fails its checks ends the restore, and what it has not placed
 * goes to main by index, as after a crash.
 */
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/vmalloc.h>

#include "meta.h"

/* Messages too long to share a line with code, each kept whole for grep */
#define ORDER_NOT_SAVED \
	"%s: the reclaim order could not be saved (%d): the next activation takes index order"
#define ORDER_IN_PART \
	"%s: the reclaim order of the last stop was read in part (%d, %u extents refused): %u placed, the rest by index"
#define ORDER_BACK \
	"%s: the reclaim order of the last stop is back: %u extents placed, the heat of %llu lines"
#define ORDER_SAVED \
	"%s: the reclaim order is saved: %u extents, the heat of %llu lines, %llu KiB in %u chunks, %llu ms"

/* Tests only: so that small volumes chain several chunks. */
static unsigned int debug_order_chunk_bytes;
module_param(debug_order_chunk_bytes, uint, 0644);
MODULE_PARM_DESC(debug_order_chunk_bytes,
		 "tests only: payload bytes a chunk of the saved reclaim order holds at most (0: an extent's)");

/* ids or heat words converted at a time */
#define ORDER_BATCH	256U

/* The chunks of a saved order, written or read in turn through one extent's buffer. */
struct order_stream {
	struct flaz_meta *m;
	u8 *buf;		/* an extent: a chunk's header, then its payload */
	u32 cap;		/* payload bytes a chunk holds */
	u32 pos;		/* payload bytes written into, or read from, the buffer */
	u32 avail;		/* reading: the chunk's payload bytes */
	u32 index;		/* the next chunk */
	u32 nr;			/* chunks */
	u32 ext;		/* reading: the next chunk's extent */
	u32 *exts;		/* writing: the chain's extents */
	void *batch;		/* ORDER_BATCH ids or heat words */
	int error;
};

static u32 hdr_bytes(void)
{
	return sizeof(struct flaz_order_hdr);
}

/*
 * Write the buffer as the next chunk: its used blocks only, the rest of the
 * last one zeroed.
 */
static void put_chunk(struct order_stream *s)
{
	struct flaz_cache *c = s->m->c;
	u32 next = s->index + 1 < s->nr ? s->exts[s->index + 1] : FLAZ_ORDER_NONE;
	u32 len = round_up(hdr_bytes() + s->pos, FLAZ_BLOCK_SIZE);

	if (WARN_ON_ONCE(s->index == s->nr)) {
		s->error = -EOVERFLOW;
		return;
	}
	memset(s->buf + hdr_bytes() + s->pos, 0, len - hdr_bytes() - s->pos);
	flaz_order_encode(s->buf, s->m->sb.gen, s->m->sb.commit, s->index, next, s->pos);
	s->error = meta_io(c, c->ssd, REQ_OP_WRITE, flaz_extent_sector(c->geo, s->exts[s->index]),
			   len >> SECTOR_SHIFT, s->buf);
	if (s->error)
		meta_error(c);
	s->index++;
	s->pos = 0;
}

/* Append @len bytes of the stream; after an error, nothing. */
static void put(struct order_stream *s, const void *p, u32 len)
{
	while (len && !s->error) {
		u32 n = min(len, s->cap - s->pos);

		memcpy(s->buf + hdr_bytes() + s->pos, p, n);
		s->pos += n;
		p += n;
		len -= n;
		if (s->pos == s->cap)
			put_chunk(s);
	}
}

/* The extents' hit bits (c->hit, set by a hit since the extent was written) in 64-bit words. */
static u64 hit_words(struct flaz_cache *c)
{
	return flaz_order_hit_words(c->geo);
}

/*
 * Copy @n words of hit bits from word @first on into @w, little-endian (@save),
 * or back from it: an extent not in use keeps none, its next fill is not hit.
 */
static void hit_copy(struct flaz_cache *c, u64 first, __le64 *w, u32 n, bool save)
{
	u64 ext, v;
	u32 k, b;

	for (k = 0; k < n; k++) {
		v = save ? 0 : le64_to_cpu(w[k]);
		for (b = 0; b < 64; b++) {
			ext = (first + k) * 64 + b;
			if (ext >= c->geo->nr_extents)
				break;
			if (save && test_bit(ext, c->hit))
				v |= BIT_ULL(b);
			else if (!save && (v & BIT_ULL(b)) && flaz_l2p_in_use(c->l2p, ext))
				set_bit(ext, c->hit);
		}
		if (save)
			w[k] = cpu_to_le64(v);
	}
}

/* The stream: its head, the ids in order, the heat, the hit bits. */
static void put_all(struct order_stream *s, u32 nr_probation, u32 nr_main, u64 words)
{
	struct flaz_cache *c = s->m->c;
	struct flaz_order_head head = {
		.nr_probation = cpu_to_le32(nr_probation),
		.nr_main = cpu_to_le32(nr_main),
		.heat_words = cpu_to_le64(words),
	};
	struct flaz_alloc_walk w;
	u32 *ids = s->batch;
	__le32 *le_ids = s->batch;
	u64 *heat = s->batch, i;
	__le64 *le_heat = s->batch;
	u32 n, k;

	put(s, &head, sizeof(head));
	flaz_alloc_walk_start(c->alloc, &w);
	while ((n = flaz_alloc_walk(c->alloc, &w, ids, ORDER_BATCH))) {
		for (k = 0; k < n; k++)
			le_ids[k] = cpu_to_le32(ids[k]);
		put(s, le_ids, n * sizeof(u32));
	}
	for (i = 0; i < words; i += n) {
		n = min_t(u64, words - i, ORDER_BATCH);
		flaz_l2p_heat_copy(c->l2p, i, heat, n, true);
		for (k = 0; k < n; k++)
			le_heat[k] = cpu_to_le64(heat[k]);
		put(s, le_heat, n * sizeof(u64));
	}
	for (i = 0; i < hit_words(c); i += n) {
		n = min_t(u64, hit_words(c) - i, ORDER_BATCH);
		hit_copy(c, i, le_heat, n, true);
		put(s, le_heat, n * sizeof(u64));
	}
	if (s->pos && !s->error)
		put_chunk(s);
}

/*
 * A clean stop (commit() with the superblock it is about to write, nothing
 * else running): save the reclaim order, and name it in m->sb, or name none.
 */
void meta_order_save(struct flaz_meta *m)
{
	struct flaz_cache *c = m->c;
	u32 cap = READ_ONCE(debug_order_chunk_bytes);
	struct order_stream s = { .m = m, .cap = c->extent_bytes - hdr_bytes() };
	u32 nr_probation = flaz_alloc_nr_probation(c->alloc);
	u32 nr_main = flaz_alloc_nr_main(c->alloc);
	u64 words = flaz_l2p_heat_words(c->l2p);
	u64 bytes = sizeof(struct flaz_order_head) +
		    ((u64)nr_probation + nr_main) * sizeof(u32) +
		    (words + hit_words(c)) * sizeof(u64);
	u64 t0 = ktime_get_ns();
	u32 got = 0, i;
	int r = 0;
	u64 nr;

	m->sb.order_first = 0;
	m->sb.order_extents = 0;
	m->order_saved.chunks = 0;
	if (cap)
		s.cap = min(s.cap, cap);
	nr = DIV_ROUND_UP_ULL(bytes, s.cap);
	/* the cleaner keeps many more free than it takes: 4 bytes an extent, 2 bits a line */
	if (nr > flaz_alloc_nr_free(c->alloc) / 2) {
		r = -ENOSPC;
		goto out;
	}
	s.nr = nr;
	s.exts = kvmalloc_array(s.nr, sizeof(u32), GFP_KERNEL);
	s.buf = vmalloc(c->extent_bytes);
	s.batch = kmalloc_array(ORDER_BATCH, sizeof(u64), GFP_KERNEL);
	if (!s.exts || !s.buf || !s.batch) {
		r = -ENOMEM;
		goto out;
	}
	for (got = 0; got < s.nr; got++)
		if (flaz_alloc_get_reserved(c->alloc, &s.exts[got])) {
			r = -ENOSPC;
			goto out;
		}
	put_all(&s, nr_probation, nr_main, words);
	r = s.error;
	if (!r && WARN_ON_ONCE(s.index != s.nr))
		r = -EILSEQ;
	if (r)
		goto out;
	m->sb.order_first = s.exts[0];
	m->sb.order_extents = s.nr;
	m->order_saved = (struct meta_order_saved){
		.extents = nr_probation + nr_main, .chunks = s.nr, .bytes = bytes,
		.ns = ktime_get_ns() - t0,
	};
out:
	if (r)
		DMWARN(ORDER_NOT_SAVED, dm_table_device_name(c->ti->table), r);
	/*
	 * Free again at once: no fill or pass runs while suspended (free_work may
	 * put discarded extents back meanwhile, under the allocator's lock), and
	 * after this superblock the next one written names no order.
	 */
	for (i = 0; i < got; i++)
		flaz_alloc_put(c->alloc, s.exts[i]);
	kfree(s.batch);
	vfree(s.buf);
	kvfree(s.exts);
}

/* The clean superblock naming the order is written: say what it saved. */
void meta_order_saved(struct flaz_meta *m)
{
	struct meta_order_saved *o = &m->order_saved;

	if (!o->chunks)
		return;
	DMINFO(ORDER_SAVED, dm_table_device_name(m->c->ti->table), o->extents,
	       m->c->geo->nr_lines, DIV_ROUND_UP_ULL(o->bytes, 1024), o->chunks,
	       div_u64(o->ns, NSEC_PER_MSEC));
	o->chunks = 0;
}

/* Read the next chunk of the chain into the buffer. */
static int get_chunk(struct order_stream *s)
{
	struct flaz_cache *c = s->m->c;
	int r;

	if (s->index == s->nr || s->ext >= c->geo->nr_extents)
		return -EILSEQ;
	r = meta_io(c, c->ssd, REQ_OP_READ, flaz_extent_sector(c->geo, s->ext),
		    c->geo->extent_sectors, s->buf);
	if (r)
		meta_error(c);
	else
		r = flaz_order_decode(s->buf, c->extent_bytes, s->m->sb.gen, s->m->sb.commit,
				      s->index, &s->ext, &s->avail);
	s->index++;
	s->pos = 0;
	return r;
}

static int get(struct order_stream *s, void *p, u32 len)
{
	int r;

	while (len) {
		u32 n = min(len, s->avail - s->pos);

		if (!n) {
			r = get_chunk(s);
			if (r)
				return r;
			continue;
		}
		memcpy(p, s->buf + hdr_bytes() + s->pos, n);
		s->pos += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* The heat saved for @words words, back into the table; all of it or none. */
static int get_heat(struct order_stream *s, u64 words)
{
	struct flaz_cache *c = s->m->c;
	u64 *heat = s->batch, i;
	__le64 *le_heat = s->batch;
	u32 n, k;
	int r;

	for (i = 0; i < words; i += n) {
		n = min_t(u64, words - i, ORDER_BATCH);
		r = get(s, heat, n * sizeof(u64));
		if (r) {
			/* the rest is lost: heat in part would favour some lines at random */
			memset(heat, 0, ORDER_BATCH * sizeof(u64));
			for (i = 0; i < words; i += n) {
				n = min_t(u64, words - i, ORDER_BATCH);
				flaz_l2p_heat_copy(c->l2p, i, heat, n, false);
			}
			return r;
		}
		for (k = 0; k < n; k++)
			heat[k] = le64_to_cpu(le_heat[k]);
		flaz_l2p_heat_copy(c->l2p, i, heat, n, false);
	}
	return 0;
}

/* Queue the written extents in the saved order, then bring back the heat and the hit bits. */
static int get_all(struct order_stream *s, u32 *placed, u32 *refused)
{
	struct flaz_cache *c = s->m->c;
	struct flaz_order_head head;
	u32 *ids = s->batch, nr[2], q, n, k, left;
	__le32 *le_ids = s->batch;
	u64 i;
	int r;

	r = get(s, &head, sizeof(head));
	if (r)
		return r;
	nr[0] = le32_to_cpu(head.nr_probation);
	nr[1] = le32_to_cpu(head.nr_main);
	if ((u64)nr[0] + nr[1] > c->geo->nr_extents)
		return -EILSEQ;
	for (q = 0; q < 2; q++) {
		for (left = nr[q]; left; left -= n) {
			n = min(left, ORDER_BATCH);
			r = get(s, ids, n * sizeof(u32));
			if (r)
				return r;
			for (k = 0; k < n; k++)
				ids[k] = le32_to_cpu(le_ids[k]);
			k = flaz_alloc_restore(c->alloc, ids, n, !q, s->m->used);
			*refused += k;
			*placed += n - k;
		}
	}
	/* a table of another layout (another module version): its heat would be of other lines */
	if (le64_to_cpu(head.heat_words) != flaz_l2p_heat_words(c->l2p))
		return -EINVAL;
	r = get_heat(s, flaz_l2p_heat_words(c->l2p));
	for (i = 0; !r && i < hit_words(c); i += n) {
		n = min_t(u64, hit_words(c) - i, ORDER_BATCH);
		r = get(s, s->batch, n * sizeof(u64));
		if (!r)
			hit_copy(c, i, s->batch, n, false);
	}
	return r;
}

/*
 * Activation, before any I/O, with m->used set: queue the written extents in
 * the order the clean stop before saved in the @nr extents from @first (none
 * when @nr is 0), the rest by index.
 */
void meta_order_load(struct flaz_meta *m, u32 first, u32 nr)
{
	struct flaz_cache *c = m->c;
	struct order_stream s = { .m = m, .ext = first, .nr = nr };
	u32 placed = 0, refused = 0;
	int r = -ENOMEM;

	flaz_alloc_begin(c->alloc, m->used);
	if (!nr)
		goto end;
	s.buf = vmalloc(c->extent_bytes);
	s.batch = kmalloc_array(ORDER_BATCH, sizeof(u64), GFP_KERNEL);
	if (s.buf && s.batch)
		r = get_all(&s, &placed, &refused);
	kfree(s.batch);
	vfree(s.buf);
	if (r || refused)
		DMWARN(ORDER_IN_PART, dm_table_device_name(c->ti->table), r, refused, placed);
	else
		DMINFO(ORDER_BACK, dm_table_device_name(c->ti->table), placed, c->geo->nr_lines);
end:
	flaz_alloc_end(c->alloc, m->used);
}

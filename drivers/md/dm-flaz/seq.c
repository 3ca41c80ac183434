// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz sequential streams: the reads and writes that continue a stream
 * longer than seq_cutoff_kib bypass the cache, as bcache's sequential_cutoff
 * does. A backup or a copy of a big image read once would otherwise fill the
 * SSD with blocks nobody reads again and push the hot set out.
 *
 * A stream is kept as the sector it expects next and the sectors it has run,
 * in a table of 128 buckets of two ways, hashed by that sector. An I/O that
 * starts where a stream expects continues it and moves it to the bucket of its
 * own end; any other I/O starts a stream there. Of two streams in a bucket, the
 * one that has run further is kept, until it has not been continued for
 * SEQ_STALE I/Os: so a random load beside scans (a database beside a backup)
 * breaks none of them while each goes on at one I/O in SEQ_STALE, and
 * interleaved streams are told apart. A stream read again later starts from
 * nothing: a block that bypassed once is just a miss, and fills when it is
 * read at random.
 *
 * O(1) per bio under one spinlock, taken only in map (task context).
 */
#include <kunit/visibility.h>
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "flaz.h"

#define SEQ_STALE	(16U << FLAZ_SEQ_BITS)	/* I/Os after which a stream that stopped goes */

struct seq_stream {
	sector_t next;	/* where the stream's next I/O would start */
	u64 run;	/* sectors it has run; 0: the way is empty */
	u64 used;	/* the clock when it was last continued */
};

struct flaz_seq {
	spinlock_t lock;	/* clock and the streams */
	u64 clock;	/* I/Os noted */
	struct seq_stream s[1U << FLAZ_SEQ_BITS];
};

struct flaz_seq *flaz_seq_create(void)
{
	struct flaz_seq *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (q)
		spin_lock_init(&q->lock);
	return q;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_seq_create);

void flaz_seq_destroy(struct flaz_seq *q)
{
	kfree(q);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_seq_destroy);

u64 flaz_seq_bytes(void)
{
	return sizeof(struct flaz_seq);
}

/* The two ways of the bucket of streams that expect @next. */
static struct seq_stream *ways(struct flaz_seq *q, sector_t next)
{
	return &q->s[hash_64(next, FLAZ_SEQ_BITS) & ~1U];
}

static bool gone(struct flaz_seq *q, struct seq_stream *s)
{
	return !s->run || q->clock - s->used >= SEQ_STALE;
}

/* Of the two ways @w: an empty or stopped one, else the shorter run, else the older. */
static struct seq_stream *weaker(struct flaz_seq *q, struct seq_stream *w)
{
	if (gone(q, w))
		return w;
	if (gone(q, w + 1) || w[1].run < w[0].run)
		return w + 1;
	if (w[1].run == w[0].run && w[1].used < w[0].used)
		return w + 1;
	return w;
}

/*
 * The I/O of @sectors at @start has happened: whether the stream it belongs
 * to has now run more than @cutoff sectors (0: never).
 */
bool flaz_seq_note(struct flaz_seq *q, sector_t start, u32 sectors, u64 cutoff)
{
	struct seq_stream *w, *to, *from = NULL;
	u64 run = sectors;

	if (!cutoff || !sectors)
		return false;
	spin_lock(&q->lock);
	q->clock++;
	/* the stream it continues: of two that expect it, the longer */
	w = ways(q, start);
	for (to = w; to < w + 2; to++)
		if (to->run && to->next == start && (!from || to->run > from->run))
			from = to;
	if (from) {
		run += from->run;
		from->run = 0;
	}
	to = weaker(q, ways(q, start + sectors));
	if (gone(q, to) || to->run <= run) {
		to->next = start + sectors;
		to->run = run;
		to->used = q->clock;
	}
	spin_unlock(&q->lock);
	return run > cutoff;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_seq_note);

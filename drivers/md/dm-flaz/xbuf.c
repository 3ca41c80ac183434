// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz extent buffer: extents are immutable on the SSD, so slots are packed
 * into a few open extents in DRAM and each is written once, whole, when it is
 * full, when it has aged, or on a FLUSH.
 *
 * Open extents sit in free-space buckets: a slot goes to the first extent (LIFO)
 * of the lowest bucket that holds it, which packs variable-size slots tightly
 * (best fit) without a sorted structure. Extents being filled or written are
 * in a hash by extent number, so reads of slots not yet on the SSD are served
 * from DRAM. An extent is written only when no unit is still copying into it.
 */
#include <kunit/visibility.h>
#include <linux/dm-io.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "compat.h"
#include "flaz.h"
#include "format.h"

#define XBUF_OPEN	4	/* extents open for slots at once */
#define XBUF_WRITING	4	/* more that may be on their way to the SSD */
#define XBUF_BUCKETS	8
#define XBUF_AGE	HZ	/* an open extent is written after this long */
#define XBUF_HASH_BITS	4

struct xb_extent {
	struct list_head list;		/* in a bucket, the write list or idle */
	struct hlist_node hash;		/* while it holds slots not yet written */
	struct flaz_xbuf *xb;
	void *data;
	u32 id;
	u32 used;
	u32 nr_slots;
	u32 writers;			/* units still copying into a reserved slot */
	bool sealed;
	unsigned long opened;
};

struct flaz_xbuf {
	struct flaz_cache *c;
	spinlock_t lock;		/* irq-safe: writes complete in interrupt context */
	struct list_head buckets[XBUF_BUCKETS];
	struct list_head to_write;
	struct list_head idle;
	DECLARE_HASHTABLE(hash, XBUF_HASH_BITS);
	u32 nr_open;
	u32 in_flight;
	bool aging;
	wait_queue_head_t idle_wait;
	struct work_struct write_work;
	struct delayed_work age_work;
	struct xb_extent x[XBUF_OPEN + XBUF_WRITING];
};

/* The bucket of an open extent with @free bytes left. */
u32 flaz_xbuf_bucket(u32 free, u32 extent_bytes)
{
	return min(free / (extent_bytes / XBUF_BUCKETS), XBUF_BUCKETS - 1U);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_xbuf_bucket);

static u32 free_bytes(struct flaz_xbuf *xb, struct xb_extent *x)
{
	return xb->c->extent_bytes - x->used;
}

static void rebucket(struct flaz_xbuf *xb, struct xb_extent *x)
{
	list_move(&x->list, &xb->buckets[flaz_xbuf_bucket(free_bytes(xb, x),
							  xb->c->extent_bytes)]);
}

/* Lowest bucket first, LIFO within it: the tightest fit that is at hand. */
static struct xb_extent *find_fit(struct flaz_xbuf *xb, u32 bytes)
{
	u32 b = flaz_xbuf_bucket(bytes, xb->c->extent_bytes);
	struct xb_extent *x;

	for (; b < XBUF_BUCKETS; b++)
		list_for_each_entry(x, &xb->buckets[b], list)
			if (free_bytes(xb, x) >= bytes)
				return x;
	return NULL;
}

static void queue_write(struct flaz_xbuf *xb, struct xb_extent *x)
{
	list_move_tail(&x->list, &xb->to_write);
	queue_work(xb->c->wq.io, &xb->write_work);
}

/* No more slots go into @x; it is written once its writers are done. */
static void seal(struct flaz_xbuf *xb, struct xb_extent *x)
{
	lockdep_assert_held(&xb->lock);
	x->sealed = true;
	xb->nr_open--;
	if (x->nr_slots && !x->writers) {
		queue_write(xb, x);
	} else if (!x->nr_slots) {
		/* Never used: nothing to write, the extent is free again (even). */
		hash_del(&x->hash);
		list_move(&x->list, &xb->idle);
		flaz_xbuf_abandon(xb, x->id);
	} else {
		list_del_init(&x->list);
	}
}

/* The open extent with the least room: the one that has gained the least from waiting. */
static struct xb_extent *fullest(struct flaz_xbuf *xb)
{
	u32 b;

	for (b = 0; b < XBUF_BUCKETS; b++)
		if (!list_empty(&xb->buckets[b]))
			return list_first_entry(&xb->buckets[b], struct xb_extent, list);
	return NULL;
}

/*
 * Extent @id is about to take slots, from fills here or the cleaner's moves:
 * before any entry points into it. Until a commit after its write (meta.c) no
 * entry into it may become durable (unflushed), and a slot in it older than
 * now is an earlier tenant's, left on the SSD (tenant.c).
 */
void flaz_xbuf_opened(struct flaz_xbuf *xb, u32 id)
{
	struct flaz_cache *c = xb->c;

	set_bit(id, c->unflushed);
	flaz_tenant_open(c->tenants, id);
	flaz_l2p_open_extent(c->l2p, id);
}

/*
 * Extent @id's write completed: its slots are read from the SSD, and it may be
 * reclaimed, from main when @admitted (the cleaner's), else from probation.
 */
void flaz_xbuf_written(struct flaz_xbuf *xb, u32 id, bool admitted)
{
	set_bit(id, xb->c->written);
	flaz_alloc_written(xb->c->alloc, id, admitted);
}

/*
 * Extent @id's write failed before any line pointed into it: free again at
 * once, at a free (even) generation.
 */
void flaz_xbuf_abandon(struct flaz_xbuf *xb, u32 id)
{
	bool worn;

	clear_bit(id, xb->c->unflushed);
	flaz_l2p_evict_extent(xb->c->l2p, id, &worn);
	if (!worn)
		flaz_alloc_put(xb->c->alloc, id);
}

/* Whether the SSD holds extent @id's slots (not still on their way there). */
bool flaz_xbuf_on_ssd(struct flaz_xbuf *xb, u32 id)
{
	return !test_bit(id, xb->c->unflushed) || test_bit(id, xb->c->written);
}

/* -EAGAIN: every buffer is on its way to the SSD; -ENOSPC: no extent is free. */
static struct xb_extent *open_extent(struct flaz_xbuf *xb, int *r)
{
	struct flaz_cache *c = xb->c;
	struct xb_extent *x;
	u32 id;

	lockdep_assert_held(&xb->lock);
	if (xb->nr_open == XBUF_OPEN)
		seal(xb, fullest(xb));
	*r = -EAGAIN;
	if (list_empty(&xb->idle))
		return NULL;
	*r = -ENOSPC;
	if (flaz_alloc_get(c->alloc, &id)) {
		c->ev->starved(c);
		return NULL;
	}
	c->ev->space_taken(c);
	flaz_xbuf_opened(xb, id);
	x = list_first_entry(&xb->idle, struct xb_extent, list);
	memset(x->data, 0, c->extent_bytes);
	x->id = id;
	x->used = sizeof(struct flaz_extent_hdr);
	x->nr_slots = 0;
	x->writers = 0;
	x->sealed = false;
	x->opened = jiffies;
	hash_add(xb->hash, &x->hash, id);
	xb->nr_open++;
	rebucket(xb, x);
	return x;
}

static bool has_idle(struct flaz_xbuf *xb)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&xb->lock, flags);
	idle = !list_empty(&xb->idle);
	spin_unlock_irqrestore(&xb->lock, flags);
	return idle;
}

/*
 * Reserve @bytes for a slot. The caller fills s->mem, points the table at it,
 * then commits. When every buffer is being written it waits for one, which
 * slows installs to the SSD's pace. Returns -ENOSPC when no extent is free
 * (the caller waited for one before it compressed: fill.c), -E2BIG for a slot
 * larger than an extent holds: the caller skips the block.
 */
int flaz_xbuf_reserve(struct flaz_xbuf *xb, u32 bytes, struct flaz_xslot *s)
{
	struct xb_extent *x;
	unsigned long flags;
	int r;

	if (bytes > xb->c->extent_bytes - sizeof(struct flaz_extent_hdr))
		return -E2BIG;
	for (;;) {
		spin_lock_irqsave(&xb->lock, flags);
		x = find_fit(xb, bytes);
		if (!x)
			x = open_extent(xb, &r);
		if (x)
			break;
		spin_unlock_irqrestore(&xb->lock, flags);
		if (r != -EAGAIN)
			return r;
		wait_event(xb->idle_wait, has_idle(xb));
	}
	s->x = x;
	s->ext = x->id;
	s->off = x->used;
	s->mem = x->data + x->used;
	x->used += bytes;
	x->nr_slots++;
	x->writers++;
	if (free_bytes(xb, x) < flaz_slot_bytes(1))
		seal(xb, x);
	else
		rebucket(xb, x);
	spin_unlock_irqrestore(&xb->lock, flags);
	return 0;
}

void flaz_xbuf_commit(struct flaz_xbuf *xb, struct flaz_xslot *s)
{
	struct xb_extent *x = s->x;
	unsigned long flags;

	spin_lock_irqsave(&xb->lock, flags);
	if (!--x->writers && x->sealed)
		queue_write(xb, x);
	spin_unlock_irqrestore(&xb->lock, flags);
}

/* Copy a slot of extent @ext if that extent is still in DRAM. */
bool flaz_xbuf_read(struct flaz_xbuf *xb, u32 ext, u32 off, u32 bytes, void *dst)
{
	struct xb_extent *x;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&xb->lock, flags);
	hash_for_each_possible(xb->hash, x, hash, ext) {
		if (x->id == ext && off + bytes <= x->used) {
			memcpy(dst, x->data + off, bytes);
			found = true;
			break;
		}
	}
	spin_unlock_irqrestore(&xb->lock, flags);
	return found;
}

FLAZ_IO_NOTIFY(write_done)
{
	struct xb_extent *x = context;
	struct flaz_xbuf *xb = x->xb;
	unsigned long flags;
	u32 id = x->id;

	/* marked failed while still held, so no commit ever takes its slots as written */
	if (error)
		flaz_report_extent_failed(xb->c, id);
	spin_lock_irqsave(&xb->lock, flags);
	hash_del(&x->hash);
	list_add(&x->list, &xb->idle);
	spin_unlock_irqrestore(&xb->lock, flags);
	/* out of DRAM first: a hit in between reads it from the SSD, which has it */
	if (!error)
		flaz_xbuf_written(xb, id, false);
	/* last, under the lock: once in_flight is 0, flaz_xbuf_stop() lets the volume go */
	spin_lock_irqsave(&xb->lock, flags);
	xb->in_flight--;
	wake_up_all(&xb->idle_wait);
	spin_unlock_irqrestore(&xb->lock, flags);
}

static void write_extent(struct flaz_xbuf *xb, struct xb_extent *x)
{
	struct flaz_cache *c = xb->c;
	const struct flaz_geometry *g = c->geo;
	struct dm_io_region where = {
		.bdev = c->ssd,
		.sector = flaz_extent_sector(g, x->id),
		/* only what holds slots: a flushed extent is often mostly empty */
		.count = round_up(x->used, FLAZ_BLOCK_SIZE) >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = REQ_OP_WRITE,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = x->data,
		.notify.fn = FLAZ_NOTIFY(write_done),
		.notify.context = x,
		.client = c->io,
	};

	flaz_extent_encode(x->data, atomic64_inc_return(&c->seq), x->id, x->used,
			   x->nr_slots);
	if (flaz_dm_io(&req, &where))
		write_done(1, x);
}

static void write_work(struct work_struct *work)
{
	struct flaz_xbuf *xb = container_of(work, struct flaz_xbuf, write_work);
	struct xb_extent *x;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&xb->lock, flags);
		x = list_first_entry_or_null(&xb->to_write, struct xb_extent, list);
		if (x) {
			list_del_init(&x->list);
			xb->in_flight++;
		}
		spin_unlock_irqrestore(&xb->lock, flags);
		if (!x)
			return;
		write_extent(xb, x);
	}
}

/* Seal open extents opened before @before (all with 0). */
static void seal_older(struct flaz_xbuf *xb, unsigned long before)
{
	struct xb_extent *x, *tmp;
	unsigned long flags;
	u32 b;

	spin_lock_irqsave(&xb->lock, flags);
	for (b = 0; b < XBUF_BUCKETS; b++)
		list_for_each_entry_safe(x, tmp, &xb->buckets[b], list)
			if (!before || time_before(x->opened, before))
				seal(xb, x);
	spin_unlock_irqrestore(&xb->lock, flags);
}

/* FLUSH: start writing every open extent. */
void flaz_xbuf_seal_all(struct flaz_xbuf *xb)
{
	seal_older(xb, 0);
}

static void age_work(struct work_struct *work)
{
	struct flaz_xbuf *xb = container_of(to_delayed_work(work), struct flaz_xbuf,
					    age_work);

	seal_older(xb, jiffies - XBUF_AGE + 1);
	if (READ_ONCE(xb->aging))
		queue_delayed_work(xb->c->wq.io, &xb->age_work, XBUF_AGE);
}

void flaz_xbuf_start(struct flaz_xbuf *xb)
{
	WRITE_ONCE(xb->aging, true);
	queue_delayed_work(xb->c->wq.io, &xb->age_work, XBUF_AGE);
}

static bool all_written(struct flaz_xbuf *xb)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&xb->lock, flags);
	done = !xb->in_flight && list_empty(&xb->to_write);
	spin_unlock_irqrestore(&xb->lock, flags);
	return done;
}

/*
 * Write everything out and stop aging; the caller has stopped new slots
 * (no bios, units flushed).
 */
void flaz_xbuf_stop(struct flaz_xbuf *xb)
{
	WRITE_ONCE(xb->aging, false);
	cancel_delayed_work_sync(&xb->age_work);
	flaz_xbuf_seal_all(xb);
	wait_event(xb->idle_wait, all_written(xb));
}

struct flaz_xbuf *flaz_xbuf_create(struct flaz_cache *c)
{
	struct flaz_xbuf *xb;
	int i;

	xb = kzalloc(sizeof(*xb), GFP_KERNEL);
	if (!xb)
		return NULL;
	xb->c = c;
	spin_lock_init(&xb->lock);
	for (i = 0; i < XBUF_BUCKETS; i++)
		INIT_LIST_HEAD(&xb->buckets[i]);
	INIT_LIST_HEAD(&xb->to_write);
	INIT_LIST_HEAD(&xb->idle);
	hash_init(xb->hash);
	init_waitqueue_head(&xb->idle_wait);
	INIT_WORK(&xb->write_work, write_work);
	INIT_DELAYED_WORK(&xb->age_work, age_work);
	for (i = 0; i < ARRAY_SIZE(xb->x); i++) {
		xb->x[i].xb = xb;
		xb->x[i].data = vmalloc(c->extent_bytes);
		if (!xb->x[i].data) {
			flaz_xbuf_destroy(xb);
			return NULL;
		}
		list_add(&xb->x[i].list, &xb->idle);
	}
	return xb;
}

/* DRAM the extent buffer takes for extents of @extent_bytes. */
u64 flaz_xbuf_bytes(u32 extent_bytes)
{
	return sizeof(struct flaz_xbuf) + (XBUF_OPEN + XBUF_WRITING) * (u64)extent_bytes;
}

/* After flaz_xbuf_stop(), or before any use. */
void flaz_xbuf_destroy(struct flaz_xbuf *xb)
{
	int i;

	if (!xb)
		return;
	for (i = 0; i < ARRAY_SIZE(xb->x); i++)
		vfree(xb->x[i].data);
	kfree(xb);
}

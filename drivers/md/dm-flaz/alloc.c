// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz extent allocation: free extents in one FIFO, written extents in
 * another in the order they were filled, so reclaim takes the least recently
 * filled ones first (the log order FlaZ writes in). Locked with interrupts off:
 * extent writes complete in interrupt context.
 *
 * An evicted extent is not free at once: the table on the SSD may still point
 * into it until the next commit, and a crash would then read whatever was
 * written there since. It waits in a third FIFO until a commit has gone out.
 */
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "flaz.h"

struct ring {
	u32 *ids;
	u32 head, count;
};

struct flaz_alloc {
	spinlock_t lock;
	u32 nr;
	struct ring free, used, pending;
};

static void ring_push(struct ring *r, u32 nr, u32 id)
{
	/* an extent freed or written twice would overwrite the oldest */
	if (WARN_ON_ONCE(r->count == nr))
		return;
	r->ids[(r->head + r->count) % nr] = id;
	r->count++;
}

static u32 ring_pop(struct ring *r, u32 nr)
{
	u32 id = r->ids[r->head];

	r->head = (r->head + 1) % nr;
	r->count--;
	return id;
}

struct flaz_alloc *flaz_alloc_create(u32 nr_extents)
{
	struct flaz_alloc *a;
	u32 i;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return NULL;
	a->free.ids = kvcalloc(nr_extents, sizeof(u32), GFP_KERNEL);
	a->used.ids = kvcalloc(nr_extents, sizeof(u32), GFP_KERNEL);
	a->pending.ids = kvcalloc(nr_extents, sizeof(u32), GFP_KERNEL);
	if (!a->free.ids || !a->used.ids || !a->pending.ids) {
		flaz_alloc_destroy(a);
		return NULL;
	}
	spin_lock_init(&a->lock);
	a->nr = nr_extents;
	for (i = 0; i < nr_extents; i++)
		ring_push(&a->free, a->nr, i);
	return a;
}

void flaz_alloc_destroy(struct flaz_alloc *a)
{
	if (!a)
		return;
	kvfree(a->free.ids);
	kvfree(a->used.ids);
	kvfree(a->pending.ids);
	kfree(a);
}

/* Take a free extent for writing. Returns -ENOSPC when there is none. */
int flaz_alloc_get(struct flaz_alloc *a, u32 *id)
{
	unsigned long flags;
	int r = -ENOSPC;

	spin_lock_irqsave(&a->lock, flags);
	if (a->free.count) {
		*id = ring_pop(&a->free, a->nr);
		r = 0;
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return r;
}

/*
 * Start over from a loaded table: the extents set in @used hold slots it points
 * to (their order is lost: by index), the others are free.
 */
void flaz_alloc_reset(struct flaz_alloc *a, const unsigned long *used)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&a->lock, flags);
	a->free.count = a->free.head = 0;
	a->used.count = a->used.head = 0;
	a->pending.count = a->pending.head = 0;
	for (i = 0; i < a->nr; i++)
		ring_push(test_bit(i, used) ? &a->used : &a->free, a->nr, i);
	spin_unlock_irqrestore(&a->lock, flags);
}

/* Return an extent that was never written: nothing anywhere points into it. */
void flaz_alloc_put(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	ring_push(&a->free, a->nr, id);
	spin_unlock_irqrestore(&a->lock, flags);
}

/* An evicted extent: free once the next commit is on the SSD. */
void flaz_alloc_retire(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	ring_push(&a->pending, a->nr, id);
	spin_unlock_irqrestore(&a->lock, flags);
}

u32 flaz_alloc_nr_pending(struct flaz_alloc *a)
{
	return READ_ONCE(a->pending.count);
}

/*
 * A commit that began when @n extents were pending is on the SSD: free those
 * (the oldest @n), and return them in @ids so they can be discarded.
 */
u32 flaz_alloc_release(struct flaz_alloc *a, u32 n, u32 *ids)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&a->lock, flags);
	n = min(n, a->pending.count);
	for (i = 0; i < n; i++) {
		ids[i] = ring_pop(&a->pending, a->nr);
		ring_push(&a->free, a->nr, ids[i]);
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return n;
}

/* A written extent joins the reclaim order as the most recently filled. */
void flaz_alloc_written(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	ring_push(&a->used, a->nr, id);
	spin_unlock_irqrestore(&a->lock, flags);
}

/* Take up to @max of the least recently filled written extents, oldest first. */
u32 flaz_alloc_take_oldest(struct flaz_alloc *a, u32 *ids, u32 max)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&a->lock, flags);
	while (n < max && a->used.count)
		ids[n++] = ring_pop(&a->used, a->nr);
	spin_unlock_irqrestore(&a->lock, flags);
	return n;
}

u32 flaz_alloc_nr_free(struct flaz_alloc *a)
{
	return READ_ONCE(a->free.count);
}

/*
 * How many extents reclaim should free: none while at least @low percent of
 * @total are free, otherwise enough to get back to @high percent.
 */
u32 flaz_reclaim_count(u32 nr_free, u32 total, u32 low, u32 high)
{
	u64 low_n = div_u64((u64)total * low, 100);
	u64 high_n = div_u64((u64)total * high, 100);

	if (nr_free >= low_n && nr_free)
		return 0;
	high_n = max_t(u64, high_n, 1);
	return nr_free >= high_n ? 0 : high_n - nr_free;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz extent allocation: free extents in one FIFO, written extents in
 * another in the order they were filled, so reclaim takes the least recently
 * filled ones first (the log order FlaZ writes in). Locked with interrupts off:
 * extent writes complete in interrupt context.
 */
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
	struct ring free, used;
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
	if (!a->free.ids || !a->used.ids) {
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

/* Return an extent that holds nothing the table points to. */
void flaz_alloc_put(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	ring_push(&a->free, a->nr, id);
	spin_unlock_irqrestore(&a->lock, flags);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz extent allocation: free extents in one FIFO, written extents in two
 * more in the order they were filled (the log order FlaZ writes in), as
 * S3-FIFO keeps its queues: new fills in a small probation FIFO, slots hit
 * there and the cleaner's moves in the main one. Reclaim takes the oldest of
 * probation while it holds more than its share of the extents (or main is
 * empty), else the oldest of main; so a stream read once cycles through
 * probation and never reaches what main holds. Locked with interrupts off:
 * extent writes complete in interrupt context.
 *
 * An evicted extent is not free at once: the table on the SSD may still point
 * into it until the next commit, and a crash would then read whatever was
 * written there since. It waits in a fourth FIFO until a commit has gone out,
 * and is put back only after its discard has completed, so a discard can never
 * land on an extent that was written again.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "flaz.h"

/*
 * A FIFO of extents threaded through the shared next[] array: an extent is in
 * one FIFO at most (or in none while it is open), so one u32 per extent
 * serves all four.
 */
struct fifo {
	u32 head, tail, count;
};

struct flaz_alloc {
	spinlock_t lock;	/* the FIFOs, next[], probation, retired, released */
	u32 nr;
	u32 *next;
	u32 reserve;		/* free extents only the cleaner may take */
	u32 probation;		/* probation's share (extents); 0: one log */
	struct fifo free, main, small, pending;
	u64 retired, released;	/* into pending, out of it, since activation */
	wait_queue_head_t wait;	/* fills waiting for a free extent */
	atomic_t wakes;		/* flaz_alloc_wake() calls: a waiter looks again */
	bool waits;		/* whether fills may wait (the volume runs) */
};

static void fifo_push(struct flaz_alloc *a, struct fifo *f, u32 id)
{
	/* an extent freed or written twice would break the chain */
	if (WARN_ON_ONCE(f->count == a->nr))
		return;
	if (f->count)
		a->next[f->tail] = id;
	else
		f->head = id;
	f->tail = id;
	f->count++;
}

static u32 fifo_pop(struct flaz_alloc *a, struct fifo *f)
{
	u32 id = f->head;

	f->head = a->next[id];
	f->count--;
	return id;
}

struct flaz_alloc *flaz_alloc_create(u32 nr_extents)
{
	struct flaz_alloc *a;
	u32 i;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return NULL;
	a->next = kvcalloc(nr_extents, sizeof(u32), GFP_KERNEL);
	if (!a->next) {
		kfree(a);
		return NULL;
	}
	spin_lock_init(&a->lock);
	init_waitqueue_head(&a->wait);
	a->nr = nr_extents;
	for (i = 0; i < nr_extents; i++)
		fifo_push(a, &a->free, i);
	return a;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_create);

void flaz_alloc_destroy(struct flaz_alloc *a)
{
	if (!a)
		return;
	kvfree(a->next);
	kfree(a);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_destroy);

/* DRAM the allocator of @nr_extents takes. */
u64 flaz_alloc_bytes(u32 nr_extents)
{
	return sizeof(struct flaz_alloc) + (u64)nr_extents * sizeof(u32);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_bytes);

static int get(struct flaz_alloc *a, u32 *id, u32 keep)
{
	unsigned long flags;
	int r = -ENOSPC;

	spin_lock_irqsave(&a->lock, flags);
	if (a->free.count > keep) {
		*id = fifo_pop(a, &a->free);
		r = 0;
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return r;
}

/*
 * Take a free extent for fills, leaving the cleaner's reserve. Returns -ENOSPC
 * when there is none.
 */
int flaz_alloc_get(struct flaz_alloc *a, u32 *id)
{
	return get(a, id, READ_ONCE(a->reserve));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_get);

/*
 * Take a free extent for the cleaner's moves, the reserve too: without it,
 * fills would take every extent the last pass freed before the cleaner could
 * move a slot.
 */
int flaz_alloc_get_reserved(struct flaz_alloc *a, u32 *id)
{
	return get(a, id, 0);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_get_reserved);

void flaz_alloc_set_reserve(struct flaz_alloc *a, u32 n)
{
	u32 old = READ_ONCE(a->reserve);

	WRITE_ONCE(a->reserve, n);
	/* fills waiting for what the reserve held look again */
	if (n < old)
		flaz_alloc_wake(a);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_set_reserve);

/* Whether flaz_alloc_get() finds an extent now (a hint: another may take it first). */
bool flaz_alloc_room(struct flaz_alloc *a)
{
	return READ_ONCE(a->free.count) > READ_ONCE(a->reserve);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_room);

/*
 * Whether an extent can come free without a fill's help: one evicted waits for
 * a commit, or one written can be evicted.
 */
bool flaz_alloc_reclaimable(struct flaz_alloc *a)
{
	return READ_ONCE(a->pending.count) || READ_ONCE(a->small.count) || READ_ONCE(a->main.count);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_reclaimable);

/*
 * Wait up to @timeout for an extent fills may take: one that an eviction frees
 * after its commit (meta.c), or a wake (flaz_alloc_wake()). Returns false
 * while fills may not wait (the volume is suspending); whether an extent is
 * there is flaz_alloc_get()'s to say.
 */
bool flaz_alloc_wait(struct flaz_alloc *a, long timeout)
{
	int seen = atomic_read(&a->wakes);

	wait_event_timeout(a->wait, flaz_alloc_room(a) || !READ_ONCE(a->waits) ||
			   atomic_read(&a->wakes) != seen, timeout);
	return READ_ONCE(a->waits);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_wait);

/* Fills may wait (@on: the volume runs) or not (it is suspending): wakes those waiting. */
void flaz_alloc_waits(struct flaz_alloc *a, bool on)
{
	WRITE_ONCE(a->waits, on);
	flaz_alloc_wake(a);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_waits);

/* Fills waiting for an extent look again at why they wait (the mode changed). */
void flaz_alloc_wake(struct flaz_alloc *a)
{
	atomic_inc(&a->wakes);
	wake_up_all(&a->wait);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_wake);

/*
 * Start over at activation, before any I/O: the extents set in @used hold
 * slots or are worn out, the others are free. flaz_alloc_restore() then queues
 * written ones in the order the last clean stop saved (order.c), and
 * flaz_alloc_end() the rest. O(extents), so the free FIFO is built without the
 * lock (nothing else runs yet), with interrupts on.
 */
void flaz_alloc_begin(struct flaz_alloc *a, const unsigned long *used)
{
	struct flaz_alloc fresh = { .nr = a->nr, .next = a->next };
	unsigned long flags;
	u32 i;

	for (i = 0; i < a->nr; i++) {
		if (!test_bit(i, used))
			fifo_push(&fresh, &fresh.free, i);
		if (!(i % 4096))
			cond_resched();
	}
	spin_lock_irqsave(&a->lock, flags);
	a->free = fresh.free;
	a->main = (struct fifo){};
	a->small = (struct fifo){};
	a->pending = (struct fifo){};
	a->retired = 0;
	a->released = 0;
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_begin);

/*
 * Queue the @n written extents @ids next in probation (@probation) or main,
 * each one still set in @used, which it clears. Returns how many were not:
 * out of range, free, or queued already (a damaged order).
 */
u32 flaz_alloc_restore(struct flaz_alloc *a, const u32 *ids, u32 n, bool probation,
		       unsigned long *used)
{
	unsigned long flags;
	u32 i, refused = 0;

	spin_lock_irqsave(&a->lock, flags);
	for (i = 0; i < n; i++) {
		if (ids[i] >= a->nr || !test_and_clear_bit(ids[i], used))
			refused++;
		else
			fifo_push(a, probation ? &a->small : &a->main, ids[i]);
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return refused;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_restore);

/*
 * The written extents no saved order placed (still set in @used: all of them
 * after a crash) go to main after the others, by index: what an activation
 * found cached was admitted then.
 */
void flaz_alloc_end(struct flaz_alloc *a, const unsigned long *used)
{
	unsigned long flags;
	u32 i, n = 0;

	for_each_set_bit(i, used, a->nr) {
		spin_lock_irqsave(&a->lock, flags);
		fifo_push(a, &a->main, i);
		spin_unlock_irqrestore(&a->lock, flags);
		if (!(++n % 4096))
			cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_end);

/*
 * Start a walk of the reclaim order for a clean stop to save (order.c, nothing
 * else runs): probation's extents, oldest first, then main's.
 */
void flaz_alloc_walk_start(struct flaz_alloc *a, struct flaz_alloc_walk *w)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	w->main = !a->small.count;
	w->left = w->main ? a->main.count : a->small.count;
	w->id = w->main ? a->main.head : a->small.head;
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_walk_start);

/* The next extents of the walk, @max at most, into @ids. Returns how many: 0 at the end. */
u32 flaz_alloc_walk(struct flaz_alloc *a, struct flaz_alloc_walk *w, u32 *ids, u32 max)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&a->lock, flags);
	if (!w->left && !w->main) {
		w->main = true;
		w->left = a->main.count;
		w->id = a->main.head;
	}
	while (n < max && w->left) {
		ids[n++] = w->id;
		w->id = a->next[w->id];
		w->left--;
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_walk);

/* Return an extent that nothing anywhere points into: never written, or discarded. */
void flaz_alloc_put(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	fifo_push(a, &a->free, id);
	spin_unlock_irqrestore(&a->lock, flags);
	if (wq_has_sleeper(&a->wait))
		wake_up(&a->wait);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_put);

/* An evicted extent: free once the next commit is on the SSD. */
void flaz_alloc_retire(struct flaz_alloc *a, u32 id)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	fifo_push(a, &a->pending, id);
	WRITE_ONCE(a->retired, a->retired + 1);
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_retire);

u32 flaz_alloc_nr_pending(struct flaz_alloc *a)
{
	return READ_ONCE(a->pending.count);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_nr_pending);

/* How many extents were retired since activation: a commit covers those before it. */
u64 flaz_alloc_retired(struct flaz_alloc *a)
{
	return READ_ONCE(a->retired);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_retired);

/*
 * The first @bound extents retired since activation are covered by a commit on
 * the SSD: take those not taken yet, the oldest first, @max at most, into
 * @ids. The caller discards them, then puts each back.
 */
u32 flaz_alloc_release(struct flaz_alloc *a, u64 bound, u32 max, u32 *ids)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&a->lock, flags);
	while (n < max && a->released < bound && a->pending.count) {
		ids[n++] = fifo_pop(a, &a->pending);
		a->released++;
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_release);

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort the @n extent @ids and merge neighbours into runs: ids[i] becomes the
 * first extent of run i and @lens[i] its length. Returns the number of runs.
 */
u32 flaz_alloc_runs(u32 *ids, u32 n, u32 *lens)
{
	u32 i, nr = 0;

	sort(ids, n, sizeof(*ids), cmp_u32, NULL);
	for (i = 0; i < n; i++) {
		if (nr && ids[i] == ids[nr - 1] + lens[nr - 1]) {
			lens[nr - 1]++;
			continue;
		}
		ids[nr] = ids[i];
		lens[nr++] = 1;
	}
	return nr;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_runs);

/*
 * A written extent joins the reclaim order as the most recently filled: of
 * main when @admitted (the cleaner's moves, a probation extent kept whole),
 * else of probation, when there is one.
 */
void flaz_alloc_written(struct flaz_alloc *a, u32 id, bool admitted)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	fifo_push(a, admitted || !a->probation ? &a->main : &a->small, id);
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_written);

/* Probation's share of the extents: @n, 0 for one log (new fills go to main). */
void flaz_alloc_set_probation(struct flaz_alloc *a, u32 n)
{
	unsigned long flags;

	spin_lock_irqsave(&a->lock, flags);
	a->probation = n;
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_set_probation);

/*
 * The FIFO reclaim takes from (lock held): probation while over its share,
 * counting @out of its extents the caller holds, or while main is empty.
 */
static struct fifo *victims(struct flaz_alloc *a, u32 out, bool *probation)
{
	*probation = a->small.count && (a->small.count + out > a->probation || !a->main.count);
	return *probation ? &a->small : &a->main;
}

/*
 * Take up to @max of the least recently filled written extents, oldest first,
 * all of one FIFO; @probation says which. @out: probation's extents the caller
 * took before and has not given back yet, still counted in its share.
 */
u32 flaz_alloc_take_oldest(struct flaz_alloc *a, u32 *ids, u32 max, u32 out, bool *probation)
{
	unsigned long flags;
	struct fifo *f;
	u32 n = 0;

	spin_lock_irqsave(&a->lock, flags);
	f = victims(a, out, probation);
	while (n < max && f->count) {
		/* probation down to its share: main's turn */
		if (*probation && n && f->count + out <= a->probation && a->main.count)
			break;
		ids[n++] = fifo_pop(a, f);
	}
	spin_unlock_irqrestore(&a->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_take_oldest);

/*
 * Give back @n extents taken by flaz_alloc_take_oldest() from @probation (or
 * main) and not cleaned, to the head of their FIFO, @ids[0] first.
 */
void flaz_alloc_unget(struct flaz_alloc *a, const u32 *ids, u32 n, bool probation)
{
	unsigned long flags;
	struct fifo *f;

	spin_lock_irqsave(&a->lock, flags);
	f = probation ? &a->small : &a->main;
	while (n--) {
		if (WARN_ON_ONCE(f->count == a->nr))
			break;
		a->next[ids[n]] = f->head;
		f->head = ids[n];
		if (!f->count++)
			f->tail = ids[n];
	}
	spin_unlock_irqrestore(&a->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_unget);

/* Written extents in probation and in main (status probation_extents, main_extents). */
u32 flaz_alloc_nr_probation(struct flaz_alloc *a)
{
	return READ_ONCE(a->small.count);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_nr_probation);

u32 flaz_alloc_nr_main(struct flaz_alloc *a)
{
	return READ_ONCE(a->main.count);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_nr_main);

u32 flaz_alloc_nr_free(struct flaz_alloc *a)
{
	return READ_ONCE(a->free.count);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_alloc_nr_free);

/*
 * How many extents reclaim should free: none while at least @low are free,
 * otherwise enough to get back to @high; one at least when none is.
 */
u32 flaz_reclaim_count(u32 nr_free, u32 low, u32 high)
{
	if (nr_free >= low && nr_free)
		return 0;
	high = max(high, 1U);
	return nr_free >= high ? 0 : high - nr_free;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_reclaim_count);

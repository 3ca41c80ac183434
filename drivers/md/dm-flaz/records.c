// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz records: the block ranges of writes, discards and pending installs in
 * flight, so an install made from data older than a write never lands. A write
 * marks the records it overlaps stale, and is stale itself when it overlaps
 * another write (the HDD may order them either way); a read miss overlapping a
 * write in flight starts stale.
 *
 * They are kept in an interval tree, so adding one costs O(log n + overlaps)
 * however many I/Os are in flight. Its lock is taken with interrupts off: bios
 * complete in interrupt context.
 */
#include <kunit/visibility.h>
#include <linux/interval_tree_generic.h>
#include <linux/spinlock.h>

#include "flaz.h"

#define REC_FIRST(r)	((r)->first)
#define REC_LAST(r)	((r)->last)

INTERVAL_TREE_DEFINE(struct flaz_record, rb, u64, subtree_last, REC_FIRST, REC_LAST,
		     static inline, rec_tree)

void flaz_records_init(struct flaz_records *rs)
{
	spin_lock_init(&rs->lock);
	rs->root = RB_ROOT_CACHED;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_records_init);

/* Add @r (first, last and write set; stale is set here). */
void flaz_records_add(struct flaz_records *rs, struct flaz_record *r)
{
	struct flaz_record *o;
	unsigned long flags;

	r->stale = false;
	spin_lock_irqsave(&rs->lock, flags);
	for (o = rec_tree_iter_first(&rs->root, r->first, r->last); o;
	     o = rec_tree_iter_next(o, r->first, r->last)) {
		if (r->write)
			WRITE_ONCE(o->stale, true);
		if (o->write)
			r->stale = true;
	}
	rec_tree_insert(r, &rs->root);
	spin_unlock_irqrestore(&rs->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_records_add);

void flaz_records_del(struct flaz_records *rs, struct flaz_record *r)
{
	unsigned long flags;

	spin_lock_irqsave(&rs->lock, flags);
	rec_tree_remove(r, &rs->root);
	spin_unlock_irqrestore(&rs->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_records_del);

/*
 * @old's range passes to @new (a read's blocks to their install), unless @old
 * went stale: then it is removed and false returned.
 */
bool flaz_records_pass(struct flaz_records *rs, struct flaz_record *old,
		       struct flaz_record *new)
{
	unsigned long flags;
	bool pass;

	new->first = old->first;
	new->last = old->last;
	new->write = false;
	new->stale = false;
	spin_lock_irqsave(&rs->lock, flags);
	rec_tree_remove(old, &rs->root);
	pass = !old->stale;
	if (pass)
		rec_tree_insert(new, &rs->root);
	spin_unlock_irqrestore(&rs->lock, flags);
	return pass;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_records_pass);

/* Everything in flight goes stale (the cache is being emptied). */
void flaz_records_stale_all(struct flaz_records *rs)
{
	struct flaz_record *r;
	unsigned long flags;

	spin_lock_irqsave(&rs->lock, flags);
	for (r = rec_tree_iter_first(&rs->root, 0, U64_MAX); r;
	     r = rec_tree_iter_next(r, 0, U64_MAX))
		WRITE_ONCE(r->stale, true);
	spin_unlock_irqrestore(&rs->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_records_stale_all);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz eviction, the cleaner's second stage (evict.c): whole extents go,
 * unread, O(1) each. The cleaner's passes (cleaner.c) share its state: the
 * extents they evict, hold moved slots in, or made hot raw slots in.
 */
#ifndef DM_FLAZ_EVICT_H
#define DM_FLAZ_EVICT_H

#include <linux/atomic.h>
#include <linux/mutex.h>

#include "flaz.h"
#include "format.h"

struct flaz_evict {
	struct flaz_cache *c;
	/* any eviction, a rush's against a pass's new extents */
	struct mutex lock;
	unsigned long *victims;		/* extents to evict */
	unsigned long *kept;		/* extents holding slots a pass moved or kept there */
	/* such extents stage two passed over, of main, of probation */
	u32 *spared[2];
	u32 window;			/* how many of each stage two passes over at most */
	u8 *hot;			/* per extent: hot raw slots written into it */
	atomic64_t hot_total;		/* their sum */
};

/* Bytes an extent has for slots. */
static inline u32 flaz_extent_room(struct flaz_cache *c)
{
	return c->extent_bytes - sizeof(struct flaz_extent_hdr);
}

int flaz_evict_init(struct flaz_evict *ev, struct flaz_cache *c, u32 window);
void flaz_evict_exit(struct flaz_evict *ev);
u64 flaz_evict_bytes(struct flaz_evict *ev);
void flaz_evict_victims(struct flaz_evict *ev);
u32 flaz_evict_oldest(struct flaz_evict *ev, u32 want, bool spare);
void flaz_evict_all(struct flaz_evict *ev);

#endif

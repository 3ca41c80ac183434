// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz extent tenants: which slots read back from an extent were written
 * for its current tenant. An extent's slots are all written after it was
 * opened, so a slot whose seq is older than the opening is an earlier tenant's,
 * left on the SSD by a write the SSD lost: the hit path and the cleaner take it
 * for what it is, never for the block the table points at.
 *
 * The boundary costs 4 bytes an extent (128 MiB at a 1 TiB SSD of 32 KiB
 * extents, where a u64 seq took 256 MiB). It is kept in units of 2^shift seqs,
 * twice as many as an extent can hold slots; an opening takes a whole unit of
 * the volume's seq for itself, so the unit's first seq is one no slot has:
 * every slot written before it is below, every slot after above. Units take
 * 32 bits, read against the volume's seq as a signed 32-bit age.
 *
 * The trade: an opening older than TENANT_FORGET units (about 2^30 extents
 * written since; two hours of fills at 3 GB/s) is forgotten, by a hand that
 * each opening moves over TENANT_HAND extents, before its age could wrap. A
 * forgotten extent is checked as one not opened since activation is: a write
 * into it the SSD lost is no longer told from its earlier tenant's slots.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/slab.h>

#include "flaz.h"
#include "format.h"

#define TENANT_FORGET	BIT(30)
#define TENANT_HAND	32U
/*
 * What an opening ages the others by, on average: its own unit, and the seqs
 * taken since the one before, each by a slot or an extent header in an opened
 * extent; an extent holds at most half a unit of slots (64 bytes the smallest),
 * so the openings of extents already open before it add a few more at most.
 * Every taker of c->seq must stay bounded so (fill.c, cleaner.c, xbuf.c).
 */
#define TENANT_UNITS_PER_OPENING	8ULL
/* the hand comes round all of 2^32 extents before a forgotten age reaches 2^31 */
static_assert(TENANT_FORGET + BIT_ULL(32) / TENANT_HAND * TENANT_UNITS_PER_OPENING <=
	      BIT_ULL(31));

struct flaz_tenants {
	atomic64_t *seq;
	u32 nr, shift;
	atomic64_t hand;
	u32 unit[];	/* low 32 bits of the opening's unit; 0: no boundary */
};

u64 flaz_tenants_bytes(u32 nr_extents)
{
	return sizeof(struct flaz_tenants) + (u64)nr_extents * sizeof(u32);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenants_bytes);

/* @seq: the volume's slot and extent seqs, which openings also take from */
struct flaz_tenants *flaz_tenants_create(u32 nr_extents, u32 extent_bytes, atomic64_t *seq)
{
	struct flaz_tenants *t = kvzalloc(flaz_tenants_bytes(nr_extents), GFP_KERNEL);

	if (!t)
		return NULL;
	t->seq = seq;
	t->nr = nr_extents;
	t->shift = ilog2(extent_bytes / FLAZ_SLOT_ALIGN) + 1;
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenants_create);

void flaz_tenants_destroy(struct flaz_tenants *t)
{
	kvfree(t);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenants_destroy);

/* Of TENANT_HAND extents from @from, forget openings TENANT_FORGET units before @unit. */
void flaz_tenants_sweep(struct flaz_tenants *t, u32 unit, u64 from)
{
	u32 i, old, ext;

	div_u64_rem(from, t->nr, &ext);

	for (i = 0; i < TENANT_HAND; i++) {
		old = READ_ONCE(t->unit[ext]);
		/* signed: an opening racing this one may be a unit or two ahead */
		if (old && (s32)(unit - old) >= (s32)TENANT_FORGET)
			cmpxchg(&t->unit[ext], old, 0);
		if (++ext == t->nr)
			ext = 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenants_sweep);

/* Extent @ext is opened for a new tenant: before any slot is written into it. */
void flaz_tenant_open(struct flaz_tenants *t, u32 ext)
{
	u32 unit;

	/* 0 means no boundary: a unit whose low 32 bits are 0 is skipped */
	do {
		unit = (u64)atomic64_add_return(1ULL << t->shift, t->seq) >> t->shift;
	} while (!unit);
	/* pairs with flaz_tenant_older()'s acquire: who sees the unit sees its seq */
	smp_store_release(&t->unit[ext], unit);
	/* 64 bits: the hand never wraps, so it never skips extents at a wrap */
	flaz_tenants_sweep(t, unit, atomic64_fetch_add(TENANT_HAND, &t->hand));
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenant_open);

/* Is a slot of seq @slot_seq read back from extent @ext an earlier tenant's? */
bool flaz_tenant_older(struct flaz_tenants *t, u32 ext, u64 slot_seq)
{
	/* pairs with flaz_tenant_open()'s release: the seq read next took the unit */
	u32 unit = smp_load_acquire(&t->unit[ext]);
	u64 now;

	if (!unit)
		return false;
	now = (u64)atomic64_read(t->seq) >> t->shift;
	return slot_seq <= (now - (s32)((u32)now - unit)) << t->shift;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_tenant_older);

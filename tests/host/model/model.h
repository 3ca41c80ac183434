/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's shared state: the volume under test (model.c drives it)
 * and the devices below it (devices.c), with the oracle both keep.
 */
#ifndef FLAZ_MODEL_H
#define FLAZ_MODEL_H
#include "inc/shim.h"
#include "flaz.h"
#include "format.h"
#include "meta.h"
#include "opts.h"

#define EXTENT_KIB	32
#define OVERBOOK	1000
#define MAX_SLOTS	(EXTENT_KIB * 1024 / 64)

struct mslot {
	u32 off, bytes;
	u64 block;
	u32 ver;
};

/* An extent's slots as the SSD returns them now (cur) and after a flush (durable). */
struct mext {
	struct mslot cur[MAX_SLOTS], dur[MAX_SLOTS];
	u32 ncur, ndur;
	bool pending;		/* cur written, not flushed */
	enum { FREE, OPEN, WRITTEN, EVICTED, WORN } state;
	bool sealed;		/* its write completed (xbuf.c flaz_xbuf_written()) */
};

enum { S_HIT, S_MISS, S_FILL, S_WRITE, S_EVICT, S_MOVE, S_COMMIT, S_CRASH, S_TRIM, S_ALIAS,
	S_RESTART, S_WORN, S_BESIDE, S_LOCKED, S_MARK, S_FAULT, S_HDD_ERROR, S_PASSTHROUGH, S_ORDER,
	S_NR };

/* model.c: the volume */
extern struct flaz_geometry g;
extern struct flaz_cache c;
extern struct flaz_meta *m;
extern u64 hdd_blocks;
extern u32 *ver, *ver_dur;	/* the oracle: per HDD block, its version now and after a cut */
extern unsigned long *hdd_dirty;	/* blocks whose version is only in the HDD's cache */
extern struct mext *ext;
extern struct bio **inflight;	/* writes sent to the HDD and not yet completed */
extern u64 nr_inflight;
extern u64 step, stats[S_NR], commits_done;
extern bool leaving_passthrough;	/* mode_normal()'s reformat runs */
u64 rnd(void);
u64 below(u64 n);
u32 new_version(void);
void fail(const char *what, u64 n);
void meanwhile(void);

/* devices.c: the SSD and the HDD, their volatile caches, power cuts */
extern struct block_device ssd_dev, hdd_dev;
void devices_init(void);
void hdd_flush(void);
void ssd_extent_opened(u32 e);
void model_set_debug_order_chunk_bytes(unsigned int v);
extern bool order_back;
extern bool order_saved;
extern bool order_in_part;
u16 durable_gen(u32 e, u64 gen);
bool durable_mark(u64 b);
bool durable_free(u32 e);
void cut_power(void);
bool power_cut(void);
void devices_after_cut(void);

#endif

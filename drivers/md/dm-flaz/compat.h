/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: the only place where kernel-version differences live
 * (Debian 12's 6.1 and 6.12, Debian 13 backports' 7.x). Each shim tests for the feature itself.
 */
#ifndef DM_FLAZ_COMPAT_H
#define DM_FLAZ_COMPAT_H

#include <linux/blkdev.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/workqueue.h>

/* 6.5 replaced fmode_t with blk_mode_t (and its BLK_OPEN_* flags) for opening devices. */
#ifndef BLK_OPEN_READ
#define blk_mode_t fmode_t
#endif

/*
 * 6.17 added WQ_PERCPU, and newer kernels warn when a workqueue names neither
 * it nor WQ_UNBOUND (the default is becoming unbound); older ones are per-CPU
 * without it.
 */
#ifndef FLAZ_HAVE_WQ_PERCPU
#define WQ_PERCPU 0
#endif

/*
 * 6.9 added BH workqueues (system_bh_wq: work run in softirq context), where
 * dm-crypt and dm-verity moved their completion work out of hard IRQ. Older
 * kernels have none: NULL, and the work goes to a high-priority per-CPU queue.
 */
#ifdef FLAZ_HAVE_BH_WQ
#define flaz_bh_wq() system_bh_wq
#else
#define flaz_bh_wq() ((struct workqueue_struct *)NULL)
#endif

/*
 * Newer kernels' dm_io() (7.x) report BLK_STS_NOTSUPP and BLK_STS_INVAL apart
 * from other errors: a sync_unsup_bits argument, and an unsup argument to the
 * notify function. Kbuild finds which in <linux/dm-io.h> (FLAZ_DM_IO_UNSUP).
 * Either is a failed I/O here. FLAZ_IO_NOTIFY(fn) declares fn(error, context),
 * called directly too, and fn_notify, the notify function to give dm_io(),
 * which passes both kinds of failure to fn as @error.
 */
#ifdef FLAZ_DM_IO_UNSUP
#define flaz_dm_io(req, where) dm_io(req, 1, where, NULL, NULL, IOPRIO_DEFAULT)
#define FLAZ_IO_NOTIFY(fn)						\
static void fn(unsigned long error, void *context);			\
static void fn##_notify(unsigned long error, unsigned long unsup,	\
			void *context)					\
{									\
	fn(error | unsup, context);					\
}									\
static void fn(unsigned long error, void *context)
#else
#define flaz_dm_io(req, where) dm_io(req, 1, where, NULL, IOPRIO_DEFAULT)
#define FLAZ_IO_NOTIFY(fn)						\
static void fn(unsigned long error, void *context);			\
static void fn##_notify(unsigned long error, void *context)		\
{									\
	fn(error, context);						\
}									\
static void fn(unsigned long error, void *context)
#endif

/*
 * 6.13 made symbol namespaces strings: MODULE_IMPORT_NS("NS") where older kernels
 * take a bare NS. Kbuild finds which in <kunit/visibility.h> (FLAZ_NS_STRING).
 * The KUnit module (test_mod.c) imports the namespace EXPORT_SYMBOL_IF_KUNIT uses.
 */
#ifdef FLAZ_NS_STRING
#define FLAZ_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define FLAZ_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif

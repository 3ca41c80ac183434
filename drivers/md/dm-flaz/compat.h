/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: what differs between the kernels the module is built for. Out of
 * tree (Debian 12's 6.1 and 6.12, Debian 13 backports' 7.x) each shim tests for
 * the feature itself; make upstream keeps only the branches of the tree given.
 */
#ifndef DM_FLAZ_COMPAT_H
#define DM_FLAZ_COMPAT_H

#include <linux/blkdev.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/workqueue.h>
#include <linux/zstd.h>

#ifndef BLK_OPEN_READ
/* before 6.5, devices were opened with an fmode_t */
#define blk_mode_t fmode_t
#endif

#ifndef FLAZ_HAVE_WQ_PERCPU
/*
 * before 6.17 a workqueue is per-CPU unless WQ_UNBOUND; newer kernels warn when
 * one names neither WQ_PERCPU nor WQ_UNBOUND
 */
#define WQ_PERCPU 0
#endif

/*
 * Completion work leaves hard IRQ for a BH workqueue (work run in softirq
 * context), as dm-crypt's and dm-verity's does.
 */
#ifdef FLAZ_HAVE_BH_WQ
#define flaz_bh_wq() system_bh_wq
#else
/* none before 6.9: the work goes to a high-priority per-CPU queue */
#define flaz_bh_wq() ((struct workqueue_struct *)NULL)
#endif

/*
 * FLAZ_IO_NOTIFY(fn) declares fn(error, context), called directly too, and
 * FLAZ_NOTIFY(fn) names the notify function to give dm_io(), which passes every
 * kind of failure to fn as @error.
 */
#ifdef FLAZ_DM_IO_UNSUP
/*
 * dm_io() of 7.x reports BLK_STS_NOTSUPP and BLK_STS_INVAL apart from other
 * errors (a sync_unsup_bits argument, an unsup argument to the notify
 * function): either is a failed I/O here.
 */
#define flaz_dm_io(req, where) dm_io(req, 1, where, NULL, NULL, IOPRIO_DEFAULT)
#define FLAZ_IO_NOTIFY(fn)						\
static void fn(unsigned long error, void *context);			\
static void fn##_notify(unsigned long error, unsigned long unsup,	\
			void *context)					\
{									\
	fn(error | unsup, context);					\
}									\
static void fn(unsigned long error, void *context)
#define FLAZ_NOTIFY(fn) fn##_notify
#else
#define flaz_dm_io(req, where) dm_io(req, 1, where, NULL, IOPRIO_DEFAULT)
#define FLAZ_IO_NOTIFY(fn) static void fn(unsigned long error, void *context)
#define FLAZ_NOTIFY(fn) fn
#endif

/* The workspace a zstd compression stream at @level needs for inputs of @size bytes. */
#ifdef FLAZ_HAVE_ZSTD_CPARAMS
static inline size_t flaz_zstd_cctx_bound(int level, size_t size)
{
	zstd_compression_parameters cp = zstd_get_cparams(level, size, 0);

	return zstd_cctx_workspace_bound(&cp);
}
#else
/* older kernels have only zstd_get_params(), the compression parameters within */
static inline size_t flaz_zstd_cctx_bound(int level, size_t size)
{
	zstd_parameters p = zstd_get_params(level, size);

	return zstd_cctx_workspace_bound(&p.cParams);
}
#endif

/*
 * The KUnit module (test_mod.c) imports the namespace EXPORT_SYMBOL_IF_KUNIT
 * uses: a string from 6.13 on, a bare name before.
 */
#ifdef FLAZ_NS_STRING
#define FLAZ_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define FLAZ_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif

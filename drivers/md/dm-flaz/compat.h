/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: the only place where kernel-version differences live
 * (Debian 12's 6.1 and 6.12, and newer).
 */
#ifndef DM_FLAZ_COMPAT_H
#define DM_FLAZ_COMPAT_H

#include <linux/blkdev.h>
#include <linux/version.h>

/* 6.5 replaced fmode_t with blk_mode_t for opening block devices. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
typedef fmode_t blk_mode_t;
#endif

#endif

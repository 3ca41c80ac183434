/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz: the only place where kernel-version differences live
 * (Debian 12's 6.1 and 6.12, and newer). Each shim tests for the feature itself.
 */
#ifndef DM_FLAZ_COMPAT_H
#define DM_FLAZ_COMPAT_H

#include <linux/blkdev.h>

/* 6.5 replaced fmode_t with blk_mode_t (and its BLK_OPEN_* flags) for opening devices. */
#ifndef BLK_OPEN_READ
#define blk_mode_t fmode_t
#endif

#endif

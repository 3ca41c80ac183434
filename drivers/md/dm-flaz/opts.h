/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-flaz table options: ranges and defaults of the tunables, shared verbatim by
 * the module (opts.c) and flazctl, so both refuse exactly the same values.
 * extent_kib and overbook shape the SSD layout and live in format.h.
 */
#ifndef DM_FLAZ_OPTS_H
#define DM_FLAZ_OPTS_H

/*
 * Percent of free extents. Free extents hold no data, so they are what a cache
 * of the whole SSD loses: at 1 and 2% the bench's zipf loads held 1.2 to 2%
 * more than at 2 and 3% (and those 4 to 5% more than at 4 and 8%). A fill that
 * finds none waits for a rush's evictions (fill.c): fewer free extents cost no
 * fill skipped for space on those loads.
 */
#define FLAZ_MIN_LOW_WATERMARK		1U
#define FLAZ_MAX_LOW_WATERMARK		98U
#define FLAZ_DEF_LOW_WATERMARK		1U
#define FLAZ_MIN_HIGH_WATERMARK		2U
#define FLAZ_MAX_HIGH_WATERMARK		99U
#define FLAZ_DEF_HIGH_WATERMARK		2U
/*
 * A stream that has run this far is a scan, not a hot set (bcache's default):
 * a file of up to 4 MiB read whole still fills, a backup or an image does not.
 */
#define FLAZ_MAX_SEQ_CUTOFF_KIB		1048576U	/* 0 turns the cutoff off */
#define FLAZ_DEF_SEQ_CUTOFF_KIB		4096U
#define FLAZ_MAX_COMPRESS_MIN_SAVING	100U	/* percent */
#define FLAZ_DEF_COMPRESS_MIN_SAVING	10U
#define FLAZ_MIN_SSD_HOLD_S		1U	/* seconds writes wait for an SSD mark */
#define FLAZ_MAX_SSD_HOLD_S		3600U
#define FLAZ_DEF_SSD_HOLD_S		30U
#define FLAZ_MAX_CLEANER_RATE_MIB	65536U	/* 0 turns the cleaner off */
#define FLAZ_DEF_CLEANER_RATE_MIB	32U
#define FLAZ_MAX_HOT_MAX_PERCENT	100U	/* of the SSD's extents, for hot raw slots */
#define FLAZ_DEF_HOT_MAX_PERCENT	10U
#define FLAZ_MAX_PROBATION_PERCENT	50U	/* of the SSD's extents, for new fills */
#define FLAZ_DEF_PROBATION_PERCENT	10U
/* DRAM for the table's resident pages; 0: 128 KiB per GiB of SSD, 4 MiB at least */
#define FLAZ_MAX_TABLE_CACHE_KIB	1073741824U
#define FLAZ_MIN_TABLE_CACHE_KIB	4096U
#define FLAZ_COLD_NONE			0U	/* cold_compressor: else enum flaz_codec + 1 */

#endif

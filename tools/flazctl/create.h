/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flazctl create's option checks and device-mapper request, shared with
 * activate (the flaztab lines are create's long options as key=value).
 */
#ifndef FLAZCTL_CREATE_H
#define FLAZCTL_CREATE_H

#include <stdbool.h>

/* The table options, in the order they are emitted; see README.md "Options". */
enum topt {
	T_COMPRESSOR,
	T_EXTENT_KIB,
	T_OVERBOOK,
	T_LOW_WATERMARK,
	T_HIGH_WATERMARK,
	T_SEQ_CUTOFF_KIB,
	T_COMPRESS_MIN_SAVING,
	T_HOT_UNCOMPRESSED,
	T_SSD_HOLD_S,
	T_CLEANER_RATE_MIB,
	T_HOT_MAX_PERCENT,
	T_COLD_COMPRESSOR,
	T_COLD,
	T_TABLE_CACHE_KIB,
	T_PROBATION_PERCENT,
	NR_TOPTS
};

/* What the command line (or a flaztab line) asked for, each value already checked. */
struct create_args {
	const char *name, *hdd, *ssd;
	const char *dash;	/* how messages spell an option: "--" (command line) or "" (flaztab) */
	bool verbose;
	bool force;		/* --cold may overwrite an SSD holding something else */
	bool set[NR_TOPTS];
	const char *text[NR_TOPTS];
	unsigned long num[NR_TOPTS];
};

/*
 * Record option @flag (create's long option without "--") with @value (NULL for
 * "cold"); EXIT_OK, or EXIT_USAGE with a message (unknown, twice, bad value).
 */
int create_set_option(struct create_args *a, const char *flag, const char *value);

/* The checks that need all options: the watermarks' order; EXIT_OK or EXIT_USAGE. */
int create_check_options(const struct create_args *a);

/*
 * Check the devices, build the table and create the volume, with the device-mapper
 * UUID derived from the SSD's cache (see dm.h). EXIT_OK or EXIT_FAIL with a message.
 */
int create_run(const struct create_args *a);

/*
 * The table params for @a over devices @hdd and @ssd (paths, checked here like
 * create's), and the HDD's size, for activate's reload of an uncached volume.
 */
int create_params(const struct create_args *a, char *params, size_t len, unsigned long long *sectors);

/* "FLAZ-<32 hex>" of the cache SSD @path holds, into @buf; false when it holds none. */
bool ssd_dm_uuid(const char *path, char *buf, size_t len);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flazctl's thin layer over libdevmapper: one function per device-mapper request
 * the commands need, with libdevmapper's own messages kept off the terminal.
 */
#ifndef FLAZCTL_DM_H
#define FLAZCTL_DM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A live flaz volume as device-mapper reports it. */
struct flaz_vol {
	char *name;		/* the device's name, from dm_list_flaz() only */
	uint64_t sectors;	/* length of the single flaz target */
	char *table;		/* its table params: "<hdd> <ssd> <#opt args> ..." */
	char *status;		/* its status params, when asked for */
};

/* Route libdevmapper's messages to dm_last_error(), and to stderr when @verbose. */
void dm_setup(bool verbose);

/* The first error libdevmapper reported since the last dm_ready()/dm_* call. */
const char *dm_last_error(void);

/* Make sure the kernel driver answers; EXIT_OK or EXIT_FAIL with a message. */
int dm_ready(void);

/* Whether a device-mapper device @name exists; EXIT_OK or EXIT_FAIL with a message. */
int dm_exists(const char *name, bool *exists);

/*
 * Look up @name and insist it is exactly one flaz target; fill @vol (and its status
 * too when @with_status). EXIT_OK, or EXIT_FAIL with a message.
 */
int dm_get_flaz(const char *name, struct flaz_vol *vol, bool with_status);
void flaz_vol_free(struct flaz_vol *vol);

/*
 * Every device that is exactly one flaz target, sorted by name, each with its table
 * and status (and name). A device that goes away or changes while it is listed is
 * left out. EXIT_OK, or EXIT_FAIL with a message; free with flaz_vols_free().
 */
int dm_list_flaz(struct flaz_vol **vols, size_t *n);
void flaz_vols_free(struct flaz_vol *vols, size_t n);

/* Send target message @msg to sector 0 of @name; on failure dm_last_error() says why. */
bool dm_message(const char *name, const char *msg);

/*
 * Create @name with the single flaz target @params of @sectors, in one
 * create-with-table request, with a fresh "FLAZ-..." UUID. On failure no device
 * this call made is left behind (reverted by libdevmapper, else removed here by
 * its UUID, with a message if that fails).
 */
bool dm_create_flaz(const char *name, uint64_t sectors, const char *params);

/* Remove device @name; on failure dm_last_error() says why. */
bool dm_remove(const char *name);

#endif

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
	char *uuid;		/* its device-mapper UUID, NULL when it has none */
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
 * Hold flazctl's lock (/run/flazctl.lock) until the process ends, so that two
 * flazctl (a boot's activate and a late device's) never create, check for or
 * remove the same device at once. Where the lock file cannot be made, go on
 * without it.
 */
void dm_lock(void);

/*
 * Create @name with the single target @type @params of @sectors, in one
 * create-with-table request, carrying @uuid or, when @uuid is NULL, none yet
 * (dm_set_uuid() gives it one once). Read-only when @ro. On failure no device
 * this call made is left behind (reverted by libdevmapper, else removed here: a
 * device of this name with this UUID, or with no UUID and no live table, with a
 * message if that fails). The caller holds dm_lock() and saw no @name before.
 */
bool dm_create(const char *name, uint64_t sectors, const char *type, const char *params,
	       const char *uuid, bool ro);

/* Give @name, which has none, the UUID @uuid, or a fresh "FLAZ-<32 hex>" when NULL. */
bool dm_set_uuid(const char *name, const char *uuid);

/* A fresh "FLAZ-" and 32 random hex digits. */
void dm_random_uuid(char *buf, size_t len);

/*
 * The name of the device carrying @uuid into @name (malloc'ed), or NULL when none
 * does. EXIT_OK, or EXIT_FAIL with a message.
 */
int dm_uuid_owner(const char *uuid, char **name);

/*
 * Whatever device @name is, quietly: whether it exists, and for a device with
 * exactly one target, its type, length and params (malloc'ed; NULL otherwise).
 * False when device-mapper could not be asked.
 */
bool dm_single_target(const char *name, bool *exists, char **type, uint64_t *sectors,
		      char **params);

/* Replace @name's table by the single flaz target @params of @sectors and resume it. */
bool dm_reload_flaz(const char *name, uint64_t sectors, const char *params);

/* Remove device @name; on failure dm_last_error() says why. */
bool dm_remove(const char *name);

#endif

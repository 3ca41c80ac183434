// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl's thin layer over libdevmapper. Every request that changes devices
 * carries a udev cookie and is followed by dm_udev_wait(), so /dev/mapper is
 * right both with udev running and with DM_DISABLE_UDEV=1 (then libdevmapper
 * makes the nodes itself, inside dm_udev_wait()).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <libdevmapper.h>

#include "dm.h"
#include "flazctl.h"

/* libdevmapper's levels are syslog's, with flag bits above the low nibble. */
#define DM_LEVEL(l)	((l) & 0x0f)
#define DM_LEVEL_ERR	3
#define DM_LEVEL_WARN	4

static bool log_verbose;
static char first_error[256];

/* Keep libdevmapper's first error for our own one-line message; echo it only in -v. */
__attribute__((format(printf, 5, 6)))
static void log_fn(int level, const char *file, int line, int dm_errno_or_class,
		   const char *f, ...)
{
	char msg[sizeof(first_error)];
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno_or_class;
	if (DM_LEVEL(level) > DM_LEVEL_WARN)
		return;
	va_start(ap, f);
	vsnprintf(msg, sizeof(msg), f, ap);
	va_end(ap);
	if (DM_LEVEL(level) <= DM_LEVEL_ERR && !first_error[0])
		memcpy(first_error, msg, sizeof(first_error));
	if (log_verbose)
		fprintf(stderr, "flazctl: libdevmapper: %s\n", msg);
}

void dm_setup(bool verbose)
{
	log_verbose = verbose;
	dm_log_with_errno_init(log_fn);
}

const char *dm_last_error(void)
{
	/* libdevmapper logs every failure but an allocation's. */
	return first_error[0] ? first_error : "out of memory";
}

/* Start a request on @name; NULL when out of memory or the name is refused. */
static struct dm_task *named_task(int type, const char *name)
{
	struct dm_task *dmt;

	first_error[0] = '\0';
	dmt = dm_task_create(type);
	if (dmt && !dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		dmt = NULL;
	}
	return dmt;
}

int dm_ready(void)
{
	struct dm_task *dmt;
	char version[64];
	bool ok;

	first_error[0] = '\0';
	/* dm_task_create() already opens the control device and checks its version. */
	dmt = dm_task_create(DM_DEVICE_VERSION);
	ok = dmt && dm_task_run(dmt) &&
	     dm_task_get_driver_version(dmt, version, sizeof(version));
	if (dmt)
		dm_task_destroy(dmt);
	if (!ok)
		return fail(EXIT_FAIL, "cannot talk to device-mapper: %s", dm_last_error());
	return EXIT_OK;
}

/* The INFO request behind dm_exists(), silent so callers choose the message. */
static bool info_exists(const char *name, bool *exists)
{
	struct dm_task *dmt = named_task(DM_DEVICE_INFO, name);
	struct dm_info info;
	bool ok;

	if (!dmt)
		return false;
	ok = dm_task_run(dmt) && dm_task_get_info(dmt, &info);
	if (ok)
		*exists = info.exists;
	dm_task_destroy(dmt);
	return ok;
}

int dm_exists(const char *name, bool *exists)
{
	if (!info_exists(name, exists))
		return fail(EXIT_FAIL, "cannot look up %s: %s", name, dm_last_error());
	return EXIT_OK;
}

/* Explain why the target list of @name is not exactly one flaz target, or return true. */
static bool single_flaz_target(struct dm_task *dmt, const char *name)
{
	uint64_t start, length;
	char *type, *params;
	void *next;

	next = dm_get_next_target(dmt, NULL, &start, &length, &type, &params);
	if (!type)
		fail(EXIT_FAIL, "%s has no active table, so it is not a flaz volume", name);
	else if (next)
		fail(EXIT_FAIL, "%s has more than one target; flazctl handles only single-target flaz volumes",
		     name);
	else if (strcmp(type, "flaz"))
		fail(EXIT_FAIL, "%s is not a flaz volume (its target is %s)", name, type);
	return type && !next && !strcmp(type, "flaz");
}

/* A copy of the UUID of the device @dmt ran on, NULL when it has none (or out of memory). */
static char *task_uuid(struct dm_task *dmt)
{
	const char *u = dm_task_get_uuid(dmt);

	return u && *u ? strdup(u) : NULL;
}

/*
 * Run a TABLE or STATUS request on @name and copy out its one flaz target (and
 * the device's UUID into @uuid, when not NULL).
 */
static int read_target(const char *name, int type, uint64_t *sectors, char **params,
		       char **uuid)
{
	struct dm_task *dmt = named_task(type, name);
	uint64_t start;
	char *ttype, *p;
	int r = EXIT_FAIL;

	if (!dmt || !dm_task_run(dmt))
		fail(EXIT_FAIL, "cannot query %s: %s", name, dm_last_error());
	else if (single_flaz_target(dmt, name)) {
		dm_get_next_target(dmt, NULL, &start, sectors, &ttype, &p);
		*params = strdup(p ? p : "");
		r = *params ? EXIT_OK : fail(EXIT_FAIL, "out of memory");
		if (uuid)
			*uuid = task_uuid(dmt);
	}
	if (dmt)
		dm_task_destroy(dmt);
	return r;
}

int dm_get_flaz(const char *name, struct flaz_vol *vol, bool with_status)
{
	uint64_t sectors;
	bool exists = false;
	int r;

	memset(vol, 0, sizeof(*vol));
	r = dm_exists(name, &exists);
	if (r)
		return r;
	if (!exists)
		return fail(EXIT_FAIL, "no such device: %s", name);
	r = read_target(name, DM_DEVICE_TABLE, &vol->sectors, &vol->table, &vol->uuid);
	if (!r && with_status)
		r = read_target(name, DM_DEVICE_STATUS, &sectors, &vol->status, NULL);
	if (r)
		flaz_vol_free(vol);
	return r;
}

void flaz_vol_free(struct flaz_vol *vol)
{
	free(vol->name);
	free(vol->table);
	free(vol->status);
	free(vol->uuid);
	memset(vol, 0, sizeof(*vol));
}

/* Run a device-changing request with a udev cookie, and wait for /dev to catch up. */
static bool run_with_cookie(struct dm_task *dmt)
{
	uint32_t cookie = 0;
	bool ok;

	if (!dm_task_set_cookie(dmt, &cookie, 0))
		return false;
	ok = dm_task_run(dmt);
	/* Also after a failure: it releases the cookie and settles the nodes. */
	dm_udev_wait(cookie);
	return ok;
}

void dm_lock(void)
{
	static int fd = -1;

	if (fd >= 0)
		return;
	fd = open("/run/flazctl.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	/* kept open: the lock goes with the process */
	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		fd = -1;
	}
}

/*
 * After a failed create, remove what it left behind: only a device carrying this
 * create's UUID, or with none asked for, one with no UUID and no live table (a
 * device made and never loaded), never a namesake another process made.
 */
static void remove_leftover(const char *name, const char *uuid)
{
	struct dm_task *dmt = named_task(DM_DEVICE_INFO, name);
	struct dm_info info;
	const char *have;
	bool ours = false, ok;

	ok = dmt && dm_task_run(dmt) && dm_task_get_info(dmt, &info);
	if (ok && info.exists) {
		have = dm_task_get_uuid(dmt);
		if (uuid)
			ours = have && !strcmp(have, uuid);
		else
			ours = (!have || !*have) && !info.live_table;
	}
	if (dmt)
		dm_task_destroy(dmt);
	if (!ok)
		fail(EXIT_FAIL, "cannot check for a half-made %s: %s", name, dm_last_error());
	else if (ours && !dm_remove(name))
		fail(EXIT_FAIL, "could not remove the half-made device %s: %s", name, dm_last_error());
}

void dm_random_uuid(char *buf, size_t len)
{
	unsigned char r[16];
	size_t i, n;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		snprintf(buf, len, "FLAZ-%ld-%ld", (long)getpid(), (long)time(NULL));
		return;
	}
	n = (size_t)snprintf(buf, len, "FLAZ-");
	for (i = 0; i < sizeof(r) && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", r[i]);
}

bool dm_create(const char *name, uint64_t sectors, const char *type, const char *params,
	       const char *uuid, bool ro)
{
	struct dm_task *dmt = named_task(DM_DEVICE_CREATE, name);
	bool ok;

	if (!dmt)
		return false;
	ok = (!uuid || dm_task_set_uuid(dmt, uuid)) && (!ro || dm_task_set_ro(dmt)) &&
	     dm_task_add_target(dmt, 0, sectors, type, params) && run_with_cookie(dmt);
	dm_task_destroy(dmt);
	if (!ok)
		remove_leftover(name, uuid);
	return ok;
}

bool dm_set_uuid(const char *name, const char *uuid)
{
	struct dm_task *dmt = named_task(DM_DEVICE_RENAME, name);
	char fresh[48];
	bool ok;

	if (!dmt)
		return false;
	if (!uuid) {
		dm_random_uuid(fresh, sizeof(fresh));
		uuid = fresh;
	}
	/* the kernel lets a device without a UUID take one, once */
	ok = dm_task_set_newuuid(dmt, uuid) && run_with_cookie(dmt);
	dm_task_destroy(dmt);
	return ok;
}

int dm_uuid_owner(const char *uuid, char **name)
{
	struct dm_task *dmt;
	struct dm_info info;
	bool ok;

	*name = NULL;
	first_error[0] = '\0';
	dmt = dm_task_create(DM_DEVICE_INFO);
	ok = dmt && dm_task_set_uuid(dmt, uuid) && dm_task_run(dmt) && dm_task_get_info(dmt, &info);
	if (ok && info.exists) {
		*name = strdup(dm_task_get_name(dmt));
		ok = *name;
	}
	if (dmt)
		dm_task_destroy(dmt);
	if (!ok)
		return fail(EXIT_FAIL, "cannot look up UUID %s: %s", uuid, dm_last_error());
	return EXIT_OK;
}

bool dm_single_target(const char *name, bool *exists, char **type, uint64_t *sectors,
		      char **params)
{
	struct dm_task *dmt;
	char *t = NULL, *p = NULL;
	uint64_t start;
	void *next;
	bool ok;

	*type = *params = NULL;
	/* a TABLE request on a name that does not exist fails: ask INFO first */
	if (!info_exists(name, exists))
		return false;
	if (!*exists)
		return true;
	dmt = named_task(DM_DEVICE_TABLE, name);
	ok = dmt && dm_task_run(dmt);
	if (ok) {
		next = dm_get_next_target(dmt, NULL, &start, sectors, &t, &p);
		if (t && !next) {
			*type = strdup(t);
			*params = strdup(p ? p : "");
			if (!*type || !*params) {
				free(*type);
				free(*params);
				*type = *params = NULL;
				ok = false;
			}
		}
	}
	if (dmt)
		dm_task_destroy(dmt);
	return ok;
}

/* Run a request of @type on @name, with a udev cookie when it changes the device. */
static bool simple_task(int type, const char *name, uint64_t sectors, const char *params)
{
	struct dm_task *dmt = named_task(type, name);
	bool ok;

	if (!dmt)
		return false;
	if (type == DM_DEVICE_RELOAD)
		ok = dm_task_add_target(dmt, 0, sectors, "flaz", params) && dm_task_run(dmt);
	else
		ok = run_with_cookie(dmt);
	dm_task_destroy(dmt);
	return ok;
}

bool dm_reload_flaz(const char *name, uint64_t sectors, const char *params)
{
	/* the new table waits inactive until the resume swaps it in, I/O held meanwhile */
	if (!simple_task(DM_DEVICE_RELOAD, name, sectors, params))
		return false;
	if (simple_task(DM_DEVICE_RESUME, name, 0, NULL))
		return true;
	/* the table did not come up: drop it, so the old one stays in use */
	simple_task(DM_DEVICE_CLEAR, name, 0, NULL);
	return false;
}

bool dm_remove(const char *name)
{
	struct dm_task *dmt = named_task(DM_DEVICE_REMOVE, name);
	bool ok;

	if (!dmt)
		return false;
	/* Retry a remove that a brief open (blkid, udev) would make fail with EBUSY. */
	ok = dm_task_retry_remove(dmt) && run_with_cookie(dmt);
	dm_task_destroy(dmt);
	return ok;
}

/*
 * The params of @name's target for a TABLE or STATUS request, if it is exactly one
 * flaz target (and its UUID into @uuid, when not NULL).
 */
static char *quiet_flaz_params(const char *name, int type, uint64_t *sectors, char **uuid)
{
	struct dm_task *dmt = named_task(type, name);
	char *ttype = NULL, *params = NULL, *copy = NULL;
	uint64_t start, length;
	void *next;

	if (dmt && dm_task_run(dmt)) {
		next = dm_get_next_target(dmt, NULL, &start, &length, &ttype, &params);
		if (ttype && !next && !strcmp(ttype, "flaz")) {
			*sectors = length;
			copy = strdup(params ? params : "");
			if (uuid)
				*uuid = task_uuid(dmt);
		}
	}
	if (dmt)
		dm_task_destroy(dmt);
	return copy;
}

/* All device-mapper device names, copied, so later requests do not clobber the list. */
static int list_names(char ***out, size_t *n)
{
	struct dm_task *dmt;
	struct dm_names *names;
	unsigned int next = 0;
	char **v = NULL, **grown;
	size_t cap = 0;
	int r = EXIT_OK;

	*n = 0;
	first_error[0] = '\0';
	dmt = dm_task_create(DM_DEVICE_LIST);
	if (!dmt || !dm_task_run(dmt) || !(names = dm_task_get_names(dmt))) {
		r = fail(EXIT_FAIL, "cannot list device-mapper devices: %s", dm_last_error());
		goto out;
	}
	if (!names->dev)
		goto out;
	do {
		names = (struct dm_names *)((char *)names + next);
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				r = fail(EXIT_FAIL, "out of memory");
				break;
			}
			v = grown;
		}
		v[*n] = strdup(names->name);
		if (!v[*n]) {
			r = fail(EXIT_FAIL, "out of memory");
			break;
		}
		(*n)++;
		next = names->next;
	} while (next);
out:
	if (dmt)
		dm_task_destroy(dmt);
	*out = v;
	return r;
}

static int cmp_vol_name(const void *a, const void *b)
{
	return strcmp(((const struct flaz_vol *)a)->name, ((const struct flaz_vol *)b)->name);
}

int dm_list_flaz(struct flaz_vol **vols, size_t *n)
{
	struct flaz_vol *v = NULL, *cur;
	uint64_t sectors;
	char **names;
	size_t i, nr_names;
	int r;

	*vols = NULL;
	*n = 0;
	r = list_names(&names, &nr_names);
	if (!r && nr_names) {
		v = calloc(nr_names, sizeof(*v));
		if (!v)
			r = fail(EXIT_FAIL, "out of memory");
	}
	for (i = 0; !r && i < nr_names; i++) {
		cur = &v[*n];
		cur->table = quiet_flaz_params(names[i], DM_DEVICE_TABLE, &cur->sectors, &cur->uuid);
		if (cur->table)
			cur->status = quiet_flaz_params(names[i], DM_DEVICE_STATUS, &sectors, NULL);
		if (!cur->status) {
			/* not flaz, or gone meanwhile */
			flaz_vol_free(cur);
			continue;
		}
		cur->name = names[i];
		names[i] = NULL;
		(*n)++;
	}
	for (i = 0; i < nr_names; i++)
		free(names[i]);
	free(names);
	if (r) {
		flaz_vols_free(v, *n);
		*n = 0;
		return r;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_vol_name);
	*vols = v;
	return EXIT_OK;
}

void flaz_vols_free(struct flaz_vol *vols, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		flaz_vol_free(&vols[i]);
	free(vols);
}

bool dm_message(const char *name, const char *msg)
{
	struct dm_task *dmt = named_task(DM_DEVICE_TARGET_MSG, name);
	bool ok;

	if (!dmt)
		return false;
	ok = dm_task_set_sector(dmt, 0) && dm_task_set_message(dmt, msg) && dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok;
}

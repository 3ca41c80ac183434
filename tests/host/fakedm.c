// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for tools/flazctl/dm.c, so the host tests can run flazctl's reporting
 * commands (list, status, stats, get, set) without device-mapper. Linked instead of
 * dm.o into a test build of flazctl.
 *
 * FAKE_DM names a file of volumes, one per line: NAME<TAB>SECTORS<TAB>TABLE<TAB>STATUS,
 * optionally <TAB>UUID; in each, the two characters \n stand for a newline.
 * A line whose TABLE starts with "!" is a device of another target (left out of lists).
 * FAKE_DM_GROW=N adds N * (the number of status reads so far) to reads, read_hits and
 * fills, so stats sees them move. dm_message() appends "NAME MESSAGE" to
 * $FAKE_DM.msgs and fails when FAKE_DM_REFUSE is set; so does dm_reload_flaz(),
 * as "NAME reload SECTORS PARAMS".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"

static unsigned long status_reads;

void dm_setup(bool verbose)
{
	(void)verbose;
}

const char *dm_last_error(void)
{
	return "fake device-mapper error";
}

int dm_ready(void)
{
	if (!getenv("FAKE_DM"))
		return fail(EXIT_FAIL, "cannot talk to device-mapper: FAKE_DM is not set");
	return EXIT_OK;
}

/* @s with the counters FAKE_DM_GROW moves grown; malloc'ed. */
static char *grown_status(const char *s)
{
	static const char *const keys[] = { "reads=", "read_hits=", "fills=" };
	const char *grow = getenv("FAKE_DM_GROW");
	unsigned long add = grow ? strtoul(grow, NULL, 10) * status_reads : 0;
	char *out = malloc(strlen(s) + 64), *o = out;
	size_t i, k;

	status_reads++;
	if (!out)
		return NULL;
	for (i = 0; s[i];) {
		for (k = 0; k < 3; k++)
			if ((i == 0 || s[i - 1] == ' ') && !strncmp(s + i, keys[k], strlen(keys[k])))
				break;
		if (k == 3 || !add) {
			*o++ = s[i++];
			continue;
		}
		o += sprintf(o, "%s%llu", keys[k],
			     strtoull(s + i + strlen(keys[k]), NULL, 10) + add);
		i += strlen(keys[k]);
		i += strspn(s + i, "0123456789");
	}
	*o = '\0';
	return out;
}

/* Each \n in @s (a field of the FAKE_DM file) made a newline, in place. */
static void unescape(char *s)
{
	char *o = s;

	if (!s)
		return;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'n') {
			*o++ = '\n';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Find @name (or the @index-th line when @name is NULL); fill @vol. 1 found, 0 not, -1 EOF. */
static int lookup(const char *name, size_t index, struct flaz_vol *vol, bool *flaz)
{
	char line[16384], *f[5], *save = NULL;
	size_t n = 0;
	FILE *fp = fopen(getenv("FAKE_DM"), "r");
	int r = -1, i;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		f[0] = strtok_r(line, "\t", &save);
		for (i = 1; i < 5; i++)
			f[i] = strtok_r(NULL, "\t", &save);
		if (!f[3])
			continue;
		for (i = 0; i < 5; i++)
			unescape(f[i]);
		if (name ? strcmp(name, f[0]) : n++ != index)
			continue;
		memset(vol, 0, sizeof(*vol));
		*flaz = f[2][0] != '!';
		vol->name = strdup(f[0]);
		vol->sectors = strtoull(f[1], NULL, 10);
		vol->table = strdup(f[2]);
		vol->status = grown_status(f[3]);
		vol->uuid = f[4] ? strdup(f[4]) : NULL;
		r = 1;
		break;
	}
	fclose(fp);
	return r;
}

int dm_exists(const char *name, bool *exists)
{
	struct flaz_vol v;
	bool flaz;

	*exists = lookup(name, 0, &v, &flaz) == 1;
	if (*exists)
		flaz_vol_free(&v);
	return EXIT_OK;
}

int dm_get_flaz(const char *name, struct flaz_vol *vol, bool with_status)
{
	bool flaz;

	if (lookup(name, 0, vol, &flaz) != 1)
		return fail(EXIT_FAIL, "no such device: %s", name);
	if (!flaz) {
		flaz_vol_free(vol);
		return fail(EXIT_FAIL, "%s is not a flaz volume", name);
	}
	free(vol->name);
	vol->name = NULL;
	if (!with_status) {
		free(vol->status);
		vol->status = NULL;
	}
	return EXIT_OK;
}

void flaz_vol_free(struct flaz_vol *vol)
{
	free(vol->name);
	free(vol->table);
	free(vol->status);
	free(vol->uuid);
	memset(vol, 0, sizeof(*vol));
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct flaz_vol *)a)->name, ((const struct flaz_vol *)b)->name);
}

int dm_list_flaz(struct flaz_vol **vols, size_t *n)
{
	struct flaz_vol v;
	size_t i;
	bool flaz;

	*vols = calloc(256, sizeof(**vols));
	*n = 0;
	for (i = 0; *vols && *n < 256 && lookup(NULL, i, &v, &flaz) == 1; i++) {
		if (flaz)
			(*vols)[(*n)++] = v;
		else
			flaz_vol_free(&v);
	}
	qsort(*vols, *n, sizeof(**vols), cmp_name);
	return EXIT_OK;
}

void flaz_vols_free(struct flaz_vol *vols, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		flaz_vol_free(&vols[i]);
	free(vols);
}

void dm_lock(void)
{
}

bool dm_create(const char *name, uint64_t sectors, const char *type, const char *params,
	       const char *uuid, bool ro)
{
	(void)name;
	(void)sectors;
	(void)type;
	(void)params;
	(void)uuid;
	(void)ro;
	return false;
}

bool dm_set_uuid(const char *name, const char *uuid)
{
	(void)name;
	(void)uuid;
	return false;
}

void dm_random_uuid(char *buf, size_t len)
{
	snprintf(buf, len, "FLAZ-fake");
}

int dm_uuid_owner(const char *uuid, char **name)
{
	(void)uuid;
	*name = NULL;
	return EXIT_OK;
}

bool dm_single_target(const char *name, bool *exists, char **type, uint64_t *sectors,
		      char **params)
{
	struct flaz_vol v;
	bool flaz;

	*type = *params = NULL;
	*exists = lookup(name, 0, &v, &flaz) == 1;
	if (!*exists)
		return true;
	*sectors = v.sectors;
	*type = strdup(flaz ? "flaz" : v.table + 1);
	*params = strdup(flaz ? v.table : "");
	flaz_vol_free(&v);
	return true;
}

bool dm_reload_flaz(const char *name, uint64_t sectors, const char *params)
{
	char line[4096];

	snprintf(line, sizeof(line), "reload %" PRIu64 " %s", sectors, params);
	return dm_message(name, line);
}

bool dm_remove(const char *name)
{
	(void)name;
	return false;
}

bool dm_message(const char *name, const char *msg)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s.msgs", getenv("FAKE_DM"));
	fp = fopen(path, "a");
	if (fp) {
		fprintf(fp, "%s %s\n", name, msg);
		fclose(fp);
	}
	return !getenv("FAKE_DM_REFUSE");
}

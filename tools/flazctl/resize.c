// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl resize: a live volume follows its HDD's new size (after an lvextend or
 * lvreduce under it), as lvextend makes a dm device follow. The table is
 * reloaded at the HDD's length with the same devices and options; the kernel
 * keeps the cache over a grow and starts it empty over a shrink (sb.c,
 * meta_resize()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"
#include "kmsg.h"

/* the longest params: two device names, a count, the words */
#define PARAMS_LEN (256 + 256 + 16 + 1025)

/* The size in sectors of the block device "MAJOR:MINOR" (as the table names it). */
static int devno_sectors(const char *devno, uint64_t *sectors)
{
	char path[300];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/block/%s/size", devno);
	f = fopen(path, "re");
	if (!f)
		return fail(EXIT_FAIL, "cannot get the size of HDD %s: %s: %s", devno, path,
			    strerror(errno));
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1 || !v)
		return fail(EXIT_FAIL, "cannot get the size of HDD %s: %s holds no size", devno,
			    path);
	*sectors = v;
	return EXIT_OK;
}

/*
 * Table params @in, "<hdd> <ssd> <#words> words...", into @out without the word
 * "cold" (the kernel echoes it, and a reload with it would empty the cache);
 * the HDD as the table names it into @hdd.
 */
static int params_without_cold(const char *in, char out[PARAMS_LEN], char hdd[256])
{
	char ssd[256], words[1024], opts[sizeof(words) + 1] = "", *w, *save = NULL;
	unsigned int n, kept = 0;
	int used;

	if (sscanf(in, "%255s %255s %u %n", hdd, ssd, &n, &used) != 3 ||
	    strlen(in + used) >= sizeof(words))
		return fail(EXIT_FAIL, "cannot read the volume's table '%s'", in);
	snprintf(words, sizeof(words), "%s", in + used);
	for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!n--)
			return fail(EXIT_FAIL, "cannot read the volume's table '%s'", in);
		if (strcmp(w, "cold")) {
			strcat(opts, " ");
			strcat(opts, w);
			kept++;
		}
	}
	if (n)
		return fail(EXIT_FAIL, "cannot read the volume's table '%s'", in);
	snprintf(out, PARAMS_LEN, "%s %s %u%s", hdd, ssd, kept, opts);
	return EXIT_OK;
}

static void say_kernel(const char *reason, void *name)
{
	printf("%s: kernel: %s\n", (const char *)name, reason);
}

/* Reload @name (now of @vol's table) at @sectors with @params; says what the kernel said. */
static int reload(const char *name, const struct flaz_vol *vol, uint64_t sectors,
		  const char *params)
{
	/* the kernel says whether the cache stayed (or why not) in its log */
	int kfd = kmsg_open(), r = EXIT_OK;
	char why[512];

	if (!dm_reload_flaz(name, sectors, params)) {
		r = fail(EXIT_FAIL, "cannot reload %s at %" PRIu64 " sectors: %s (see dmsetup info %s)",
			 name, sectors,
			 kmsg_flaz_reason(kfd, why, sizeof(why)) ? why : dm_last_error(), name);
	} else {
		printf("%s: %" PRIu64 " -> %" PRIu64 " sectors\n", name, vol->sectors, sectors);
		/* all of it: whether the cache stayed, then what came back with it */
		kmsg_flaz_each(kfd, say_kernel, (void *)name);
	}
	kmsg_close(kfd);
	return r;
}

int cmd_resize(int argc, char **argv)
{
	char params[PARAMS_LEN], hdd[256];
	struct flaz_vol vol;
	uint64_t sectors = 0;
	int r;

	if (argc > 1 && argv[1][0] == '-')
		return fail(EXIT_USAGE, "unknown option %s", argv[1]);
	if (argc != 2)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("resize"));
	r = check_name(argv[1]);
	if (r)
		return r;
	dm_lock();
	r = live_volume(argv[1], &vol);
	if (r)
		return r;
	r = params_without_cold(vol.table, params, hdd);
	if (!r)
		r = devno_sectors(hdd, &sectors);
	if (!r && sectors == vol.sectors)
		printf("%s: already %" PRIu64 " sectors, as its HDD\n", argv[1], sectors);
	else if (!r)
		r = reload(argv[1], &vol, sectors, params);
	flaz_vol_free(&vol);
	return r;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl activate / deactivate: bring up (or take down) the volumes /etc/flaztab
 * lists, at boot or when a device named there shows up late. Activation never
 * holds the boot up: a bad line is reported and skipped, and a volume whose SSD
 * is missing comes up uncached (the HDD as a dm-linear device of the same name),
 * to be turned into its flaz volume in place once the SSD is there.
 *
 * The HDD of a volume that ran uncached has writes its cache never saw, so the
 * cache must start empty when it comes back: a mark in $FLAZ_STATE_DIR (default
 * /etc/flazctl/uncached, on the root filesystem, there at boot) says so until a
 * flaz volume is up again. Where no mark can be written, the uncached volume is
 * read-only, so no write can go past the cache unrecorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "create.h"
#include "dm.h"
#include "flazctl.h"
#include "flaztab.h"

#define STATE_DIR_DEFAULT "/etc/flazctl/uncached"

/* What the command line asked for. */
struct act_args {
	const char *flaztab;
	const char *device;	/* --device DEV */
	bool all, dry_run, verbose;
	unsigned long wait;	/* --wait S: seconds to give missing devices */
	char **names;		/* NAME... */
	int nr_names;
};

/* A line's devices as found now. */
struct found {
	char hdd[4096], ssd[4096];
	unsigned long hdd_rdev, ssd_rdev;
	bool has_hdd, has_ssd;
};

static void find_devices(const struct flaztab_line *l, struct found *f)
{
	f->has_hdd = flaztab_resolve(l->hdd, f->hdd, sizeof(f->hdd), &f->hdd_rdev);
	f->has_ssd = flaztab_resolve(l->ssd, f->ssd, sizeof(f->ssd), &f->ssd_rdev);
}

/* The mark that @name's HDD ran without its cache: its path into @buf. */
static void mark_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("FLAZ_STATE_DIR");

	snprintf(buf, len, "%s/%s", dir && *dir ? dir : STATE_DIR_DEFAULT, name);
}

static bool marked_uncached(const char *name)
{
	char path[4096];

	mark_path(name, path, sizeof(path));
	return !access(path, F_OK);
}

/* mkdir -p of the mark's directory, then the mark, made durable; false when it cannot be. */
static bool mark_uncached(const char *name)
{
	char path[4096], *p;
	int fd;
	bool ok;

	mark_path(name, path, sizeof(path));
	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return false;
		}
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	ok = dprintf(fd, "%s ran without its cache: its next flaz activation starts cold\n", name) > 0 &&
	     !fsync(fd);
	return !close(fd) && ok;
}

static void unmark_uncached(const char *name)
{
	char path[4096];

	mark_path(name, path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		fail(EXIT_OK, "warning: cannot remove %s: %s", path, strerror(errno));
}

/* The size of block device @path in sectors, 0 when it cannot be told. */
static unsigned long long dev_sectors(const char *path)
{
	unsigned long long bytes = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (ioctl(fd, BLKGETSIZE64, &bytes))
		bytes = 0;
	close(fd);
	return bytes >> 9;
}

/* What device NAME is now, as far as this line is concerned. */
enum present {
	P_NONE,			/* no such device */
	P_FLAZ,			/* this line's flaz volume */
	P_UNCACHED,		/* this line's HDD alone, as activate makes it */
	P_OTHER,		/* something else: never touched */
	P_ERROR,		/* device-mapper could not be asked (message printed) */
};

static enum present what_is(const struct flaztab_line *l, const struct found *f, char *why,
			    size_t len)
{
	unsigned int maj, min;
	unsigned long long start;
	uint64_t sectors = 0;
	char *type = NULL, *params = NULL;
	bool exists = false;
	enum present p = P_OTHER;

	if (!dm_single_target(l->name, &exists, &type, &sectors, &params)) {
		fail(EXIT_FAIL, "cannot look up %s: %s", l->name, dm_last_error());
		return P_ERROR;
	}
	if (!exists)
		return P_NONE;
	snprintf(why, len, "a device named %s exists and is not this line's volume", l->name);
	if (!type) {
		snprintf(why, len, "a device named %s exists with no table or several targets", l->name);
	} else if (!strcmp(type, "flaz")) {
		if (sscanf(params, "%u:%u", &maj, &min) == 2 && f->has_hdd &&
		    makedev(maj, min) == f->hdd_rdev)
			p = P_FLAZ;
		else
			snprintf(why, len, "flaz volume %s exists over another HDD (%s)", l->name, params);
	} else if (!strcmp(type, "linear") &&
		   sscanf(params, "%u:%u %llu", &maj, &min, &start) == 3 && f->has_hdd &&
		   makedev(maj, min) == f->hdd_rdev && !start && sectors == dev_sectors(f->hdd)) {
		p = P_UNCACHED;
	}
	free(type);
	free(params);
	return p;
}

/* The SSD is missing: the HDD alone under the volume's name, so its filesystem mounts. */
static int activate_uncached(const struct flaztab_line *l, const struct found *f)
{
	unsigned long long sectors = dev_sectors(f->hdd);
	char params[64];
	bool ro = false;

	if (!sectors)
		return fail(EXIT_FAIL, "cannot get the size of HDD %s", f->hdd);
	if (!mark_uncached(l->name)) {
		ro = true;
		fail(EXIT_OK, "warning: cannot record that %s runs uncached (%s): read-only, so the cache cannot go stale",
		     l->name, strerror(errno));
	}
	snprintf(params, sizeof(params), "%u:%u 0", major(f->hdd_rdev), minor(f->hdd_rdev));
	if (!dm_create(l->name, sectors, "linear", params, NULL, ro))
		return fail(EXIT_FAIL, "cannot create %s over HDD %s: %s", l->name, f->hdd,
			    dm_last_error());
	fail(EXIT_OK, "warning: SSD %s is missing: %s is the HDD %s alone, uncached%s; it becomes a flaz volume (cache cold) once the SSD is there",
	     l->ssd, l->name, f->hdd, ro ? " and read-only" : "");
	printf("%s: active uncached (no SSD)\n", l->name);
	return EXIT_OK;
}

/* The args of line @l with the devices found, cold when the HDD ran uncached. */
static struct create_args line_args(const struct flaztab_line *l, const struct found *f,
				    bool verbose, bool cold)
{
	struct create_args a = l->args;

	a.name = l->name;
	a.hdd = f->hdd;
	a.ssd = f->ssd;
	a.verbose = verbose;
	if (cold) {
		a.set[T_COLD] = true;
		a.text[T_COLD] = NULL;
	}
	return a;
}

/* The SSD came back under the uncached volume: load the flaz table in its place, cold. */
static int upgrade(const struct flaztab_line *l, const struct found *f, bool verbose)
{
	struct create_args a = line_args(l, f, verbose, true);
	unsigned long long sectors;
	char params[1024], uuid[48];
	int r;

	r = create_params(&a, params, sizeof(params), &sectors);
	if (r)
		return r;
	if (!dm_reload_flaz(l->name, sectors, params))
		return fail(EXIT_FAIL, "cannot turn %s into its flaz volume: %s (it stays uncached)",
			    l->name, dm_last_error());
	unmark_uncached(l->name);
	if (!dm_set_uuid(l->name, ssd_dm_uuid(f->ssd, uuid, sizeof(uuid)) ? uuid : NULL))
		fail(EXIT_OK, "warning: %s has no UUID: %s", l->name, dm_last_error());
	printf("%s: cached again (SSD %s is back; the cache starts cold)\n", l->name, f->ssd);
	return EXIT_OK;
}

static int activate_line(const struct flaztab_line *l, bool verbose)
{
	struct create_args a;
	struct found f;
	char why[256];
	bool cold;
	int r;

	find_devices(l, &f);
	if (!f.has_hdd)
		return fail(EXIT_FAIL, "%s: HDD %s is missing", l->name, l->hdd);
	switch (what_is(l, &f, why, sizeof(why))) {
	case P_ERROR:
		return EXIT_FAIL;
	case P_OTHER:
		return fail(EXIT_FAIL, "%s: left alone", why);
	case P_FLAZ:
		if (verbose)
			printf("%s: already active\n", l->name);
		return EXIT_OK;
	case P_UNCACHED:
		return f.has_ssd ? upgrade(l, &f, verbose) : EXIT_OK;
	case P_NONE:
		break;
	}
	if (!f.has_ssd)
		return activate_uncached(l, &f);
	cold = marked_uncached(l->name);
	a = line_args(l, &f, verbose, cold);
	r = create_run(&a);
	if (r)
		return r;
	if (cold)
		unmark_uncached(l->name);
	printf("%s: activated%s\n", l->name, cold ? " (cache cold: the HDD ran uncached)" : "");
	return EXIT_OK;
}

static int deactivate_line(const struct flaztab_line *l)
{
	struct found f;
	char why[256];

	find_devices(l, &f);
	switch (what_is(l, &f, why, sizeof(why))) {
	case P_ERROR:
		return EXIT_FAIL;
	case P_NONE:
		return EXIT_OK;
	case P_OTHER:
		return fail(EXIT_FAIL, "%s: left alone", why);
	default:
		break;
	}
	if (!dm_remove(l->name))
		return fail(EXIT_FAIL, "cannot remove %s: %s", l->name, dm_last_error());
	printf("%s: deactivated\n", l->name);
	return EXIT_OK;
}

/*
 * --dry-run: what the line says and the devices as found, nothing asked of
 * device-mapper. EXIT_FAIL, with the message activation would give, when the
 * HDD is missing: activation would fail the line. A missing SSD only warns, as
 * activation would bring the volume up uncached.
 */
static int show_line(const struct flaztab_line *l)
{
	static const char *const flags[NR_TOPTS] = {
		"compressor", "extent-kib", "overbook", "low-watermark", "high-watermark",
		"seq-cutoff-kib", "compress-min-saving", "hot-uncompressed", "ssd-hold-s",
		"cleaner-rate-mib", "hot-max-percent", "cold-compressor", "cold", "table-cache-kib",
		"probation-percent",
	};
	struct found f;
	bool first = true;
	int i;

	find_devices(l, &f);
	printf("%s: hdd %s -> %s, ssd %s -> %s, options ", l->name, l->hdd,
	       f.has_hdd ? f.hdd : "missing", l->ssd, f.has_ssd ? f.ssd : "missing");
	for (i = 0; i < NR_TOPTS; i++) {
		if (!l->args.set[i])
			continue;
		printf("%s%s", first ? "" : ",", flags[i]);
		if (l->args.text[i])
			printf("=%s", l->args.text[i]);
		first = false;
	}
	if (l->noauto)
		printf("%snoauto", first ? "" : ",");
	else if (first)
		fputs("none", stdout);
	putchar('\n');
	fflush(stdout);
	if (!f.has_hdd)
		return fail(EXIT_FAIL, "%s: HDD %s is missing", l->name, l->hdd);
	if (!f.has_ssd)
		fail(EXIT_OK, "warning: SSD %s is missing: %s would come up uncached", l->ssd, l->name);
	return EXIT_OK;
}

/* Whether @l names block device @rdev as its HDD or SSD. */
static bool names_device(const struct flaztab_line *l, unsigned long rdev)
{
	struct found f;

	find_devices(l, &f);
	return (f.has_hdd && f.hdd_rdev == rdev) || (f.has_ssd && f.ssd_rdev == rdev);
}

/*
 * --wait: give the picked lines' devices that are not there yet up to @secs to
 * appear, so that an SSD udev is slow to announce does not cost a boot its warm
 * cache (the uncached volume would be turned into a cold one).
 */
static void wait_devices(const struct flaztab *t, const bool *pick, unsigned long secs)
{
	unsigned long tick;
	struct found f;
	bool all;
	size_t i;

	for (tick = 0; tick < secs * 4; tick++) {
		all = true;
		for (i = 0; i < t->n && all; i++) {
			if (!pick[i])
				continue;
			find_devices(&t->v[i], &f);
			all = f.has_hdd && f.has_ssd;
		}
		if (all)
			return;
		usleep(250000);
	}
}

enum { OPT_FLAZTAB = 0x100, OPT_DEVICE, OPT_ALL, OPT_DRY_RUN, OPT_WAIT };

/* Parse "(de)activate (--all | --device DEV | NAME...) [--flaztab FILE] ..."; EXIT_USAGE on error. */
static int parse_act(int argc, char **argv, bool activate, struct act_args *a)
{
	static const struct option lo[] = {
		{ "all", no_argument, NULL, OPT_ALL },
		{ "flaztab", required_argument, NULL, OPT_FLAZTAB },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = activate ? "activate" : "deactivate";
	int c, forms;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":v", lo, NULL)) != -1) {
		switch (c) {
		case OPT_ALL:
			a->all = true;
			break;
		case OPT_FLAZTAB:
			if (a->flaztab)
				return fail(EXIT_USAGE, "--flaztab given twice");
			a->flaztab = optarg;
			break;
		case OPT_DEVICE:
			if (!activate)
				return fail(EXIT_USAGE, "deactivate takes no --device: give --all or NAME");
			if (a->device)
				return fail(EXIT_USAGE, "--device given twice");
			a->device = optarg;
			break;
		case OPT_DRY_RUN:
			if (!activate)
				return fail(EXIT_USAGE, "deactivate takes no --dry-run");
			a->dry_run = true;
			break;
		case OPT_WAIT:
			if (!activate)
				return fail(EXIT_USAGE, "deactivate takes no --wait");
			if (!parse_ulong(optarg, &a->wait) || a->wait > 600)
				return fail(EXIT_USAGE, "--wait must be from 0 to 600 seconds, not %s", optarg);
			break;
		case 'v':
			a->verbose = true;
			break;
		case ':':
			return fail(EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
		default:
			return bad_option(argv);
		}
	}
	a->names = argv + optind;
	a->nr_names = argc - optind;
	forms = a->all + !!a->device + (a->nr_names > 0);
	if (forms != 1)
		return fail(EXIT_USAGE, "%s needs exactly one of --all, %sNAME... (see flazctl %s --help)",
			    cmd, activate ? "--device DEV, " : "", cmd);
	for (c = 0; c < a->nr_names; c++)
		if (check_name(a->names[c]))
			return EXIT_USAGE;
	return EXIT_OK;
}

/* The lines to act on, as flags in @pick; EXIT_OK or EXIT_FAIL (an unknown NAME, a bad DEV). */
static int select_lines(struct flaztab *t, const struct act_args *a, bool activate, bool *pick)
{
	struct flaztab_line *l;
	struct stat st;
	size_t i;
	int k, r = EXIT_OK;

	if (a->device) {
		if (stat(a->device, &st))
			return fail(EXIT_FAIL, "%s: %s", a->device, strerror(errno));
		if (!S_ISBLK(st.st_mode))
			return fail(EXIT_FAIL, "%s is not a block device", a->device);
	}
	for (i = 0; i < t->n; i++) {
		l = &t->v[i];
		if (a->all)
			pick[i] = !activate || !l->noauto;
		else if (a->device)
			pick[i] = !l->noauto && names_device(l, st.st_rdev);
	}
	for (k = 0; k < a->nr_names; k++) {
		l = flaztab_find(t, a->names[k]);
		if (l)
			pick[l - t->v] = true;
		else
			r = fail(EXIT_FAIL, "%s has no valid line in %s", a->names[k], t->path);
	}
	return r;
}

static int run(int argc, char **argv, bool activate)
{
	struct act_args a = { 0 };
	struct flaztab t;
	bool missing, *pick = NULL, any = false;
	size_t i;
	int r, rl;

	r = parse_act(argc, argv, activate, &a);
	if (r)
		return r;
	dm_setup(a.verbose);
	r = flaztab_read(flaztab_path(a.flaztab), &t, &missing);
	if (r) {
		flaztab_free(&t);
		if (!missing)
			return r;
		/*
		 * No /etc/flaztab, nothing to bring up: the boot goes on. One asked
		 * for by --flaztab or $FLAZTAB, or a NAME to look up, is an error.
		 */
		if (!a.nr_names && !flaztab_chosen(a.flaztab)) {
			if (a.verbose)
				fail(EXIT_OK, "no flaztab at %s", flaztab_path(a.flaztab));
			return EXIT_OK;
		}
		return fail(EXIT_FAIL, "no flaztab at %s", flaztab_path(a.flaztab));
	}
	r = t.bad ? EXIT_FAIL : EXIT_OK;
	pick = calloc(t.n + 1, sizeof(*pick));
	if (!pick) {
		flaztab_free(&t);
		return fail(EXIT_FAIL, "out of memory");
	}
	rl = select_lines(&t, &a, activate, pick);
	if (rl)
		r = rl;
	for (i = 0; i < t.n; i++)
		any |= pick[i];
	if (any && a.wait && !a.dry_run)
		wait_devices(&t, pick, a.wait);
	if (any && !a.dry_run) {
		rl = dm_ready();
		if (rl) {
			r = rl;
			any = false;
		} else {
			dm_lock();
		}
	}
	for (i = 0; any && i < t.n; i++) {
		if (!pick[i])
			continue;
		fail_where = t.v[i].where;
		if (a.dry_run) {
			rl = show_line(&t.v[i]);
		} else {
			rl = activate ? activate_line(&t.v[i], a.verbose) : deactivate_line(&t.v[i]);
		}
		fflush(stdout);
		fail_where = NULL;
		if (rl)
			r = EXIT_FAIL;
	}
	free(pick);
	flaztab_free(&t);
	return r;
}

int cmd_activate(int argc, char **argv)
{
	return run(argc, argv, true);
}

int cmd_deactivate(int argc, char **argv)
{
	return run(argc, argv, false);
}

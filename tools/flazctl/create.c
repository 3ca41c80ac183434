// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl create: check everything that can be checked in userspace (options,
 * name, devices, SSD size), then build the table and create the volume in one
 * device-mapper request.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
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
#include "format.h"
#include "opts.h"
#include "kmsg.h"
#include "ssdmeta.h"

enum topt_kind { NUMBER, WORD, BARE };

/* One table option: its flag, its table key and what it accepts. */
struct table_opt {
	const char *flag;	/* command line, without "--" */
	const char *key;	/* table word */
	enum topt_kind kind;
	unsigned long min, max;
	bool pow2;
};

static const struct table_opt topts[NR_TOPTS] = {
	[T_COMPRESSOR] = { "compressor", "compressor", WORD },
	[T_EXTENT_KIB] = { "extent-kib", "extent_kib", NUMBER,
			   FLAZ_MIN_EXTENT_KIB, FLAZ_MAX_EXTENT_KIB, true },
	[T_OVERBOOK] = { "overbook", "overbook", NUMBER, FLAZ_MIN_OVERBOOK, FLAZ_MAX_OVERBOOK },
	[T_LOW_WATERMARK] = { "low-watermark", "low_watermark", NUMBER,
			       FLAZ_MIN_LOW_WATERMARK, FLAZ_MAX_LOW_WATERMARK },
	[T_HIGH_WATERMARK] = { "high-watermark", "high_watermark", NUMBER,
				FLAZ_MIN_HIGH_WATERMARK, FLAZ_MAX_HIGH_WATERMARK },
	[T_SEQ_CUTOFF_KIB] = { "seq-cutoff-kib", "seq_cutoff_kib", NUMBER, 0, FLAZ_MAX_SEQ_CUTOFF_KIB },
	[T_COMPRESS_MIN_SAVING] = { "compress-min-saving", "compress_min_saving", NUMBER,
				     0, FLAZ_MAX_COMPRESS_MIN_SAVING },
	[T_HOT_UNCOMPRESSED] = { "hot-uncompressed", "hot_uncompressed", NUMBER, 0, 1 },
	[T_SSD_HOLD_S] = { "ssd-hold-s", "ssd_hold_s", NUMBER,
			    FLAZ_MIN_SSD_HOLD_S, FLAZ_MAX_SSD_HOLD_S },
	[T_CLEANER_RATE_MIB] = { "cleaner-rate-mib", "cleaner_rate_mib", NUMBER,
				  0, FLAZ_MAX_CLEANER_RATE_MIB },
	[T_HOT_MAX_PERCENT] = { "hot-max-percent", "hot_max_percent", NUMBER,
				 0, FLAZ_MAX_HOT_MAX_PERCENT },
	[T_COLD_COMPRESSOR] = { "cold-compressor", "cold_compressor", WORD },
	[T_COLD] = { "cold", "cold", BARE },
	[T_TABLE_CACHE_KIB] = { "table-cache-kib", "table_cache_kib", NUMBER,
				 0, FLAZ_MAX_TABLE_CACHE_KIB },
	[T_PROBATION_PERCENT] = { "probation-percent", "probation_percent", NUMBER,
				   0, FLAZ_MAX_PROBATION_PERCENT },
};

static const char *const compressors[] = { "lzo", "lz4", "zstd", "deflate" };

/* getopt_long values: table option i is OPT_TABLE + i. */
enum { OPT_HDD = 0x100, OPT_SSD, OPT_FORCE, OPT_TABLE = 0x200 };

#define NR_FIXED_OPTS 5	/* --hdd --ssd --force --verbose --help */

/* The devices as found on the system. */
struct devices {
	dev_t hdd, ssd;
	uint64_t hdd_sectors, ssd_sectors;
};

/* getopt_long's table, made from topts[] so each flag is spelled once. */
static void build_long_opts(struct option *lo)
{
	static const struct option fixed[] = {
		{ "hdd", required_argument, NULL, OPT_HDD },
		{ "ssd", required_argument, NULL, OPT_SSD },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
	};
	size_t i, n = sizeof(fixed) / sizeof(fixed[0]);

	_Static_assert(sizeof(fixed) / sizeof(fixed[0]) == NR_FIXED_OPTS, "NR_FIXED_OPTS");
	memcpy(lo, fixed, sizeof(fixed));
	for (i = 0; i < NR_TOPTS; i++) {
		lo[n + i] = (struct option){ topts[i].flag,
			topts[i].kind == BARE ? no_argument : required_argument,
			NULL, OPT_TABLE + (int)i };
		/* the table key, underscores for dashes, is the same option */
		lo[n + NR_TOPTS + i] = lo[n + i];
		lo[n + NR_TOPTS + i].name = topts[i].key;
	}
	memset(&lo[n + 2 * NR_TOPTS], 0, sizeof(*lo));
}

/* Check a compressor name (the cold one may be "none"); EXIT_OK or EXIT_USAGE. */
static int check_compressor(const char *s, bool cold)
{
	size_t i;

	if (cold && !strcmp(s, "none"))
		return EXIT_OK;
	for (i = 0; i < sizeof(compressors) / sizeof(compressors[0]); i++)
		if (!strcmp(s, compressors[i]))
			return EXIT_OK;
	if (cold)
		return fail(EXIT_USAGE, "unknown cold compressor '%s' (choose none, lzo, lz4, zstd or deflate)",
			    s);
	return fail(EXIT_USAGE, "unknown compressor '%s' (choose lzo, lz4, zstd or deflate)", s);
}

/* Check a numeric option against its README range; EXIT_OK or EXIT_USAGE. */
static int check_number(const char *dash, const struct table_opt *t, const char *s,
			unsigned long *v)
{
	if (!parse_bounded(s, v))
		return fail(EXIT_USAGE, "%s%s: '%s' is not a number", dash, t->flag, s);
	if (t->pow2 && (*v < t->min || *v > t->max || (*v & (*v - 1))))
		return fail(EXIT_USAGE, "%s%s must be a power of two from %lu to %lu, not %s",
			    dash, t->flag, t->min, t->max, s);
	if (*v < t->min || *v > t->max)
		return fail(EXIT_USAGE, "%s%s must be from %lu to %lu, not %s",
			    dash, t->flag, t->min, t->max, s);
	return EXIT_OK;
}

/* How @a's messages spell an option. */
static const char *dash(const struct create_args *a)
{
	return a->dash ? a->dash : "--";
}

/* Record table option @i with value @s (NULL for a bare word), checking it. */
static int set_table_opt(struct create_args *a, enum topt i, const char *s)
{
	if (a->set[i])
		return fail(EXIT_USAGE, "%s%s given twice", dash(a), topts[i].flag);
	a->set[i] = true;
	a->text[i] = s;
	if (topts[i].kind == WORD)
		return check_compressor(s, i == T_COLD_COMPRESSOR);
	if (topts[i].kind == NUMBER)
		return check_number(dash(a), &topts[i], s, &a->num[i]);
	return EXIT_OK;
}

int create_set_option(struct create_args *a, const char *flag, const char *value)
{
	size_t i;

	for (i = 0; i < NR_TOPTS; i++) {
		if (!opt_name_eq(flag, topts[i].flag))
			continue;
		if (topts[i].kind == BARE && value)
			return fail(EXIT_USAGE, "%s%s takes no value", dash(a), topts[i].flag);
		if (topts[i].kind != BARE && !value)
			return fail(EXIT_USAGE, "%s%s needs a value", dash(a), topts[i].flag);
		return set_table_opt(a, (enum topt)i, value);
	}
	return fail(EXIT_USAGE, "unknown option '%s%s'", dash(a), flag);
}

/* Record --hdd or --ssd, each allowed once. */
static int set_device(const char **slot, const char *flag, const char *path)
{
	if (*slot)
		return fail(EXIT_USAGE, "--%s given twice", flag);
	*slot = path;
	return EXIT_OK;
}

/* The watermarks as the kernel will see them, defaults filled in, must be ordered. */
static int check_watermarks(const struct create_args *a)
{
	unsigned long low = a->set[T_LOW_WATERMARK] ? a->num[T_LOW_WATERMARK] : FLAZ_DEF_LOW_WATERMARK;
	unsigned long high = a->set[T_HIGH_WATERMARK] ? a->num[T_HIGH_WATERMARK] : FLAZ_DEF_HIGH_WATERMARK;

	if (low < high)
		return EXIT_OK;
	return fail(EXIT_USAGE, "%slow-watermark (%lu%s) must be below %shigh-watermark (%lu%s)",
		    dash(a), low, a->set[T_LOW_WATERMARK] ? "" : ", the default",
		    dash(a), high, a->set[T_HIGH_WATERMARK] ? "" : ", the default");
}

int create_check_options(const struct create_args *a)
{
	return check_watermarks(a);
}

/* Handle one getopt_long result; EXIT_OK, EXIT_USAGE, or -1 after --help. */
static int handle_opt(struct create_args *a, int c, char **argv)
{
	switch (c) {
	case OPT_HDD:
		return set_device(&a->hdd, "hdd", optarg);
	case OPT_SSD:
		return set_device(&a->ssd, "ssd", optarg);
	case OPT_FORCE:
		a->force = true;
		return EXIT_OK;
	case 'v':
		a->verbose = true;
		return EXIT_OK;
	case 'h':
		usage(stdout);
		return -1;
	case ':':
		return fail(EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
	case '?':
		return bad_option(argv);
	default:
		return set_table_opt(a, (enum topt)(c - OPT_TABLE), optarg);
	}
}

/* Parse "create NAME --hdd DEV --ssd DEV [options]" (options and NAME in any order). */
static int parse_create(int argc, char **argv, struct create_args *a)
{
	struct option lo[NR_FIXED_OPTS + 2 * NR_TOPTS + 1];
	int c, r;

	build_long_opts(lo);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", lo, NULL)) != -1) {
		r = handle_opt(a, c, argv);
		if (r)
			return r;
	}
	if (optind >= argc)
		return fail(EXIT_USAGE, "create needs a volume NAME (see flazctl --help)");
	if (optind + 1 < argc)
		return fail(EXIT_USAGE, "unexpected argument '%s'", argv[optind + 1]);
	a->name = argv[optind];
	if (!a->hdd)
		return fail(EXIT_USAGE, "create needs --hdd DEV");
	if (!a->ssd)
		return fail(EXIT_USAGE, "create needs --ssd DEV");
	if (a->force && !a->set[T_COLD])
		return fail(EXIT_USAGE, "--force only goes with --cold");
	r = check_name(a->name);
	return r ? r : check_watermarks(a);
}

/*
 * --cold starts a new cache over whatever the SSD holds: unless --force, refuse an
 * SSD that is neither blank nor a flaz cache. One that cannot be read is left to
 * the device checks that follow.
 */
static int check_ssd_content(const char *path)
{
	unsigned char b[SSD_PROBE_BYTES] = { 0 };
	const char *what;
	char buf[80];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return EXIT_OK;
	n = pread(fd, b, sizeof(b), 0);
	close(fd);
	if (n < 0)
		return fail(EXIT_FAIL, "cannot read SSD %s: %s", path, strerror(errno));
	what = ssd_content(b, buf, sizeof(buf));
	if (!what)
		return EXIT_OK;
	return fail(EXIT_FAIL, "SSD %s holds %s, not a flaz cache; --cold would overwrite it (add --force to do so)",
		    path, what);
}

/* Stat @path and insist on a block device; its number goes to @rdev. */
static int check_blockdev(const char *what, const char *path, dev_t *rdev)
{
	struct stat st;

	if (stat(path, &st))
		return fail(EXIT_FAIL, "%s %s: %s", what, path, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return fail(EXIT_FAIL, "%s %s is not a block device", what, path);
	*rdev = st.st_rdev;
	return EXIT_OK;
}

/* The size of block device @path in 512-byte sectors; an empty device is refused. */
static int blockdev_sectors(const char *what, const char *path, uint64_t *sectors)
{
	uint64_t bytes = 0;
	int fd, r = EXIT_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(EXIT_FAIL, "cannot open %s %s: %s", what, path, strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &bytes))
		r = fail(EXIT_FAIL, "cannot get the size of %s %s: %s", what, path, strerror(errno));
	else if (bytes < 512)
		r = fail(EXIT_FAIL, "%s %s is empty", what, path);
	close(fd);
	*sectors = bytes >> 9;
	return r;
}

/* Both devices must exist, be block devices, and be two different ones. */
static int check_devices(const struct create_args *a, struct devices *d)
{
	int r;

	r = check_blockdev("HDD", a->hdd, &d->hdd);
	if (!r)
		r = check_blockdev("SSD", a->ssd, &d->ssd);
	if (!r && d->hdd == d->ssd)
		r = fail(EXIT_FAIL, "--hdd %s and --ssd %s are the same device", a->hdd, a->ssd);
	if (!r)
		r = blockdev_sectors("HDD", a->hdd, &d->hdd_sectors);
	if (!r)
		r = blockdev_sectors("SSD", a->ssd, &d->ssd_sectors);
	return r;
}

/* @sectors as a short human size, for messages. */
static const char *human_size(uint64_t sectors, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = sectors / 2.0;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* Lay the SSD out as the kernel will, to refuse a too-small one with the minimum. */
static int check_ssd_size(const struct create_args *a, const struct devices *d)
{
	unsigned int extent = a->set[T_EXTENT_KIB] ? a->num[T_EXTENT_KIB] : FLAZ_DEF_EXTENT_KIB;
	unsigned int overbook = a->set[T_OVERBOOK] ? a->num[T_OVERBOOK] : FLAZ_DEF_OVERBOOK;
	struct flaz_geometry g;
	char have[32], need[32];
	uint64_t min;
	int r;

	r = flaz_geometry_init(&g, d->ssd_sectors, extent, overbook);
	if (r == -ENOSPC) {
		min = flaz_geometry_min_sectors(extent, overbook);
		return fail(EXIT_FAIL, "SSD %s is too small (%" PRIu64 " sectors, %s): the minimum for extent_kib %u and overbook %u is %" PRIu64 " sectors (%s)",
			    a->ssd, d->ssd_sectors, human_size(d->ssd_sectors, have, sizeof(have)),
			    extent, overbook, min, human_size(min, need, sizeof(need)));
	}
	if (r)
		return fail(EXIT_FAIL, "cannot lay out SSD %s: %s", a->ssd, strerror(-r));
	return EXIT_OK;
}

/* Append to a fixed buffer that is sized for the longest table; false on overflow. */
__attribute__((format(printf, 3, 4)))
static bool append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len - used;
}

/* "<hdd> <ssd> <#words> [key value ...] [cold]" with only the options given. */
static bool build_params(const struct create_args *a, const struct devices *d,
			 char *buf, size_t len)
{
	char opts[512] = "";
	unsigned int words = 0;
	bool ok = true;
	int i;

	for (i = 0; i < NR_TOPTS; i++) {
		if (!a->set[i])
			continue;
		ok &= append(opts, sizeof(opts), " %s", topts[i].key);
		words++;
		if (topts[i].kind != BARE) {
			ok &= append(opts, sizeof(opts), " %s", a->text[i]);
			words++;
		}
	}
	buf[0] = '\0';
	return ok && append(buf, len, "%u:%u %u:%u %u%s", major(d->hdd), minor(d->hdd),
			    major(d->ssd), minor(d->ssd), words, opts);
}

bool ssd_dm_uuid(const char *path, char *buf, size_t len)
{
	struct ssd s = { .path = path, .fd = -1 };
	struct sb_pair *sb;
	struct stat st;
	size_t i, n;
	bool ok = false;

	/* quiet: a missing or unreadable SSD is for the device checks to report */
	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return false;
	sb = malloc(sizeof(*sb));
	if (!fstat(s.fd, &st) && sb) {
		s.is_blk = S_ISBLK(st.st_mode);
		s.bytes = st.st_size;
		/* the kernel writes the superblock past the page cache: read it afresh */
		posix_fadvise(s.fd, 0, 0, POSIX_FADV_DONTNEED);
		if (!s.is_blk || !ioctl(s.fd, BLKGETSIZE64, &s.bytes)) {
			sb_load(&s, sb);
			ok = sb->cur >= 0;
		}
	}
	if (ok) {
		n = (size_t)snprintf(buf, len, "FLAZ-");
		for (i = 0; i < 16 && n + 2 < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%02x",
					      sb->copy[sb->cur].info.uuid[i]);
	}
	free(sb);
	close(s.fd);
	return ok;
}

/*
 * The device-mapper UUID: the cache's own, read from the SSD, so that it is the
 * same at every activation. Without --cold over a valid superblock it is known
 * now; otherwise the kernel writes a new superblock when the volume comes up,
 * so the volume is made without a UUID and given the new cache's after.
 * Refuse a cache that is live already under another name.
 */
static int volume_uuid(const struct create_args *a, char *uuid, size_t len, bool *known)
{
	char *owner = NULL;
	int r;

	*known = !a->set[T_COLD] && ssd_dm_uuid(a->ssd, uuid, len);
	if (!*known)
		return EXIT_OK;
	r = dm_uuid_owner(uuid, &owner);
	if (!r && owner)
		r = fail(EXIT_FAIL, "the cache on SSD %s is already active as %s (UUID %s)",
			 a->ssd, owner, uuid);
	free(owner);
	return r;
}

/* Ask the kernel; on refusal, pass on the reason it logged. */
static int create_volume(const struct create_args *a, const struct devices *d,
			 const char *params, const char *uuid)
{
	char reason[512];
	int kfd, r = EXIT_OK;

	kfd = kmsg_open();
	if (!dm_create(a->name, d->hdd_sectors, "flaz", params, uuid, false)) {
		if (kmsg_flaz_reason(kfd, reason, sizeof(reason)))
			r = fail(EXIT_FAIL, "kernel refused the table: %s", reason);
		else
			r = fail(EXIT_FAIL, "kernel refused the table (see dmesg)");
	}
	kmsg_close(kfd);
	return r;
}

/* Give a volume made without a UUID its cache's, now on the SSD; a warning if it cannot. */
static void name_volume(const struct create_args *a)
{
	char uuid[48];
	bool known = ssd_dm_uuid(a->ssd, uuid, sizeof(uuid));

	/* no superblock: the SSD failed at activation, the volume runs uncached */
	if (!dm_set_uuid(a->name, known ? uuid : NULL))
		fail(EXIT_OK, "warning: %s is up but has no UUID: %s", a->name, dm_last_error());
}

/* The device checks, then the table: EXIT_OK or EXIT_FAIL with a message. */
static int prepare(const struct create_args *a, struct devices *d, char *params, size_t len)
{
	int r;

	r = a->set[T_COLD] && !a->force ? check_ssd_content(a->ssd) : EXIT_OK;
	if (!r)
		r = check_devices(a, d);
	if (!r)
		r = check_ssd_size(a, d);
	if (!r && !build_params(a, d, params, len))
		r = fail(EXIT_FAIL, "table too long");
	return r;
}

int create_params(const struct create_args *a, char *params, size_t len, unsigned long long *sectors)
{
	struct devices d = { 0 };
	int r = prepare(a, &d, params, len);

	*sectors = d.hdd_sectors;
	return r;
}

int create_run(const struct create_args *a)
{
	struct devices d = { 0 };
	char params[1024], uuid[48];
	bool exists = false, known;
	int r;

	r = prepare(a, &d, params, sizeof(params));
	if (r)
		return r;
	if (a->verbose) {
		printf("table: 0 %" PRIu64 " flaz %s\n", d.hdd_sectors, params);
		fflush(stdout);
	}
	r = dm_ready();
	if (r)
		return r;
	dm_lock();
	r = dm_exists(a->name, &exists);
	if (r)
		return r;
	if (exists)
		return fail(EXIT_FAIL, "a device named %s already exists", a->name);
	r = volume_uuid(a, uuid, sizeof(uuid), &known);
	if (!r)
		r = create_volume(a, &d, params, known ? uuid : NULL);
	if (!r && !known)
		name_volume(a);
	return r;
}

int cmd_create(int argc, char **argv)
{
	struct create_args a = { 0 };
	int r;

	r = parse_create(argc, argv, &a);
	if (r)
		return r < 0 ? EXIT_OK : r;
	dm_setup(a.verbose);
	return create_run(&a);
}

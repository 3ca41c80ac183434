// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz target glue: constructor and destructor, bio mapping, status and
 * messages.
 *
 * The HDD always holds a complete, current copy of the volume: every write goes
 * to it, and the HDD is only ever written with the user's data at the user's
 * offsets. The compressed cache on the SSD (cache.c) serves what it can and is
 * never the only holder of any data.
 */
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "compat.h"
#include "flaz.h"
#include "format.h"

#define DM_MSG_PREFIX "flaz"

struct flaz_target {
	struct dm_target *ti;
	struct dm_dev *hdd;
	struct dm_dev *ssd;
	struct flaz_geometry geo;
	struct flaz_stats *stats;
	struct flaz_cache *cache;

	/*
	 * For messages: serialises tunable changes, and holds off postsuspend
	 * while a message writes the SSD (dm-writecache's wc_lock).
	 */
	struct mutex lock;
	bool suspended;		/* not resumed yet, or postsuspend ran: the SSD is not ours */
	struct flaz_opts opts;
};

static const char *flaz_name(struct flaz_target *ft)
{
	return dm_table_device_name(ft->ti->table);
}

/* True when one device is the other or contains it (a disk and its partition). */
static bool devices_overlap(struct block_device *a, struct block_device *b)
{
	return a == b || bdev_whole(a) == b || bdev_whole(b) == a;
}

/* NULL-tolerant teardown shared by the destructor and the constructor's error path. */
static void flaz_destroy(struct flaz_target *ft)
{
	struct dm_target *ti = ft->ti;

	flaz_cache_destroy(ft->cache);
	flaz_stats_destroy(ft->stats);
	if (ft->ssd)
		dm_put_device(ti, ft->ssd);
	if (ft->hdd)
		dm_put_device(ti, ft->hdd);
	mutex_destroy(&ft->lock);
	kfree(ft);
}

static int parse_devices(struct flaz_target *ft, struct dm_arg_set *as, char **error)
{
	struct dm_target *ti = ft->ti;
	blk_mode_t mode = dm_table_get_mode(ti->table);
	int r;

	r = dm_get_device(ti, dm_shift_arg(as), mode, &ft->hdd);
	if (r) {
		*error = "Cannot open the HDD device";
		return r;
	}
	r = dm_get_device(ti, dm_shift_arg(as), mode, &ft->ssd);
	if (r) {
		*error = "Cannot open the SSD device";
		return r;
	}
	if (devices_overlap(ft->hdd->bdev, ft->ssd->bdev)) {
		*error = "HDD and SSD must be different devices";
		return -EINVAL;
	}
	if (ti->len > bdev_nr_sectors(ft->hdd->bdev)) {
		*error = "Volume is larger than the HDD";
		return -EINVAL;
	}
	if (bdev_logical_block_size(ft->ssd->bdev) > FLAZ_BLOCK_SIZE) {
		*error = "SSD logical block size is above 4096 bytes";
		return -EINVAL;
	}
	return 0;
}

static int init_geometry(struct flaz_target *ft, char **error)
{
	int r;

	r = flaz_geometry_init(&ft->geo, bdev_nr_sectors(ft->ssd->bdev),
			       ft->opts.val[FLAZ_OPT_EXTENT_KIB],
			       ft->opts.val[FLAZ_OPT_OVERBOOK]);
	if (r == -ENOSPC)
		*error = "SSD too small for the superblock, metadata and 16 extents";
	else if (r)
		*error = "Invalid SSD geometry";
	return r;
}

/*
 * Construct a flaz volume:
 *   flaz <hdd dev> <ssd dev> <#opt args> [key value | cold]...
 * Target sector N is HDD sector N. Nothing on either device is written here,
 * because a table reload runs this while the old instance is still live: the
 * SSD's superblock is checked against the table here, and loaded at preresume.
 */
static int flaz_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct flaz_target *ft;
	int r;

	if (argc < 3) {
		ti->error = "Not enough arguments: flaz <hdd> <ssd> <#opt args> [opt args]...";
		return -EINVAL;
	}

	ft = kzalloc(sizeof(*ft), GFP_KERNEL);
	if (!ft) {
		ti->error = "Cannot allocate the target context";
		return -ENOMEM;
	}
	ft->ti = ti;
	mutex_init(&ft->lock);
	ft->suspended = true;
	ti->private = ft;

	r = parse_devices(ft, &as, &ti->error);
	if (r)
		goto bad;
	r = flaz_opts_parse(&ft->opts, &as, &ti->error);
	if (r)
		goto bad;
	if (as.argc) {
		ti->error = "Too many arguments";
		r = -EINVAL;
		goto bad;
	}
	r = init_geometry(ft, &ti->error);
	if (r)
		goto bad;
	ft->stats = flaz_stats_create();
	if (!ft->stats) {
		ti->error = "Cannot allocate statistics";
		r = -ENOMEM;
		goto bad;
	}
	ft->cache = flaz_cache_create(ti, ft->hdd->bdev, ft->ssd->bdev, &ft->geo, &ft->opts,
				      ft->stats, &ti->error);
	if (IS_ERR(ft->cache)) {
		r = PTR_ERR(ft->cache);
		ft->cache = NULL;
		goto bad;
	}

	ti->per_io_data_size = flaz_cache_per_bio_size();
	/* clones carry the submitter's cgroup, which a hit's reads take on (hit.c) */
	ti->needs_bio_set_dev = true;
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	/* Discards go to the HDD alone, so the SSD's support does not matter. */
	ti->discards_supported = true;
	return 0;

bad:
	flaz_destroy(ft);
	ti->private = NULL;
	return r;
}

static void flaz_dtr(struct dm_target *ti)
{
	flaz_destroy(ti->private);
}

static int flaz_map(struct dm_target *ti, struct bio *bio)
{
	struct flaz_target *ft = ti->private;

	return flaz_cache_map(ft->cache, bio);
}

static int flaz_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct flaz_target *ft = ti->private;

	if (*error)
		flaz_stats_add(ft->stats, FLAZ_STAT_HDD_ERRORS, 1);
	return flaz_cache_end_io(ft->cache, bio, *error);
}

static void flaz_postsuspend(struct dm_target *ti)
{
	struct flaz_target *ft = ti->private;

	mutex_lock(&ft->lock);
	ft->suspended = true;
	flaz_cache_suspend(ft->cache);
	mutex_unlock(&ft->lock);
}

static int flaz_preresume(struct dm_target *ti)
{
	struct flaz_target *ft = ti->private;

	return flaz_cache_preresume(ft->cache);
}

static void flaz_resume(struct dm_target *ti)
{
	struct flaz_target *ft = ti->private;

	flaz_cache_resume(ft->cache);
	mutex_lock(&ft->lock);
	ft->suspended = false;
	mutex_unlock(&ft->lock);
}

/*
 * INFO:  mode=<normal|degraded|passthrough> <counter>=<n>... (docs/operations.md "Status")
 * TABLE: <hdd> <ssd> <#opt args> [options that were set]
 */
static void flaz_status(struct dm_target *ti, status_type_t type, unsigned int status_flags,
			char *result, unsigned int maxlen)
{
	struct flaz_target *ft = ti->private;
	struct flaz_gauges g = {};
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		flaz_cache_gauges(ft->cache, &g);
		flaz_stats_emit(ft->stats, &g, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %s ", ft->hdd->name, ft->ssd->name);
		flaz_opts_emit(&ft->opts, result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",hdd=%s,ssd=%s,compressor=%s,extent_kib=%u,overbook=%u;",
		       ft->hdd->name, ft->ssd->name,
		       flaz_codec_name(ft->opts.val[FLAZ_OPT_COMPRESSOR]),
		       ft->opts.val[FLAZ_OPT_EXTENT_KIB], ft->opts.val[FLAZ_OPT_OVERBOOK]);
		break;
	}
}

static int message_passthrough(struct flaz_target *ft, const char *value)
{
	bool on;

	if (kstrtobool(value, &on)) {
		DMERR("%s: passthrough takes 0 or 1", flaz_name(ft));
		return -EINVAL;
	}
	return flaz_mode_set(ft->cache, on ? FLAZ_MODE_PASSTHROUGH : FLAZ_MODE_NORMAL,
				   FLAZ_WHY_ASKED);
}

/*
 * Messages:
 *   invalidate           drop everything cached
 *   passthrough <0|1>    stop using the SSD (emptying the cache); or go back to
 *                        normal with the error count reset: from passthrough with
 *                        an empty cache, from degraded with the cache as it is
 *   <tunable> <value>    an option opts.c marks online (flaz_opts_set_tunable())
 */
static int flaz_message(struct dm_target *ti, unsigned int argc, char **argv,
			char *result, unsigned int maxlen)
{
	struct flaz_target *ft = ti->private;
	char *error;
	int r;

	if (argc != 2 && !(argc == 1 && !strcasecmp(argv[0], "invalidate"))) {
		DMERR("%s: a message is invalidate, or <key> <value>", flaz_name(ft));
		return -EINVAL;
	}
	mutex_lock(&ft->lock);
	/*
	 * These write the SSD, whose state a suspended volume must keep: a reload's
	 * new table may own it by now (dm-writecache). Under the lock postsuspend
	 * takes, so a suspend waits for one under way.
	 */
	if ((!strcasecmp(argv[0], "invalidate") || !strcasecmp(argv[0], "passthrough")) &&
	    ft->suspended) {
		mutex_unlock(&ft->lock);
		DMERR("%s: %s: the volume is suspended", flaz_name(ft), argv[0]);
		return -EBUSY;
	}
	if (argc == 1) {
		flaz_cache_invalidate(ft->cache);
		r = 0;
	} else if (!strcasecmp(argv[0], "passthrough")) {
		r = message_passthrough(ft, argv[1]);
	} else {
		r = flaz_opts_set_tunable(&ft->opts, argv[0], argv[1], &error);
		if (r)
			DMERR("%s: message %s: %s", flaz_name(ft), argv[0], error);
		else
			flaz_cache_tuned(ft->cache);
	}
	mutex_unlock(&ft->lock);
	return r;
}

/* Both devices, the SSD at its full size: dm stacks their limits. */
static int flaz_iterate_devices(struct dm_target *ti, iterate_devices_callout_fn fn,
				void *data)
{
	struct flaz_target *ft = ti->private;
	int r;

	r = fn(ti, ft->hdd, 0, ti->len, data);
	if (!r)
		r = fn(ti, ft->ssd, 0, bdev_nr_sectors(ft->ssd->bdev), data);
	return r;
}

/*
 * Discards go to the HDD only, so take its discard limits rather than the
 * stacked ones. So do the volume's sectors: the SSD is only read and written
 * in aligned blocks of flaz's own, so a 4Kn SSD does not make a 512-byte HDD's
 * volume 4Kn (a file system made with 512-byte sectors on the HDD still
 * mounts through it, and partial reads can hit).
 */
static void flaz_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct flaz_target *ft = ti->private;
	struct queue_limits *hdd = &bdev_get_queue(ft->hdd->bdev)->limits;

	limits->logical_block_size = hdd->logical_block_size;
	limits->max_discard_sectors = hdd->max_discard_sectors;
	limits->max_hw_discard_sectors = hdd->max_hw_discard_sectors;
	limits->discard_granularity = hdd->discard_granularity;
	limits->discard_alignment = hdd->discard_alignment;
}

static struct target_type flaz_target_type = {
	.name = "flaz",
	.version = {0, 4, 0},
	.module = THIS_MODULE,
	.ctr = flaz_ctr,
	.dtr = flaz_dtr,
	.map = flaz_map,
	.end_io = flaz_end_io,
	.postsuspend = flaz_postsuspend,
	.preresume = flaz_preresume,
	.resume = flaz_resume,
	.status = flaz_status,
	.message = flaz_message,
	.iterate_devices = flaz_iterate_devices,
	.io_hints = flaz_io_hints,
};

static int __init dm_flaz_init(void)
{
	int r;

	flaz_bypass_module_init();
	r = flaz_compressor_module_init();
	if (r < 0) {
		DMERR("cannot register the codec CPU hotplug state: %d", r);
		return r;
	}
	r = flaz_hit_module_init();
	if (r)
		goto bad_hit;
	r = dm_register_target(&flaz_target_type);
	if (r < 0) {
		DMERR("register failed %d", r);
		goto bad_register;
	}
	flaz_costs_init();
	return 0;

bad_register:
	flaz_hit_module_exit();
bad_hit:
	flaz_compressor_module_exit();
	return r;
}

static void __exit dm_flaz_exit(void)
{
	flaz_costs_exit();
	dm_unregister_target(&flaz_target_type);
	flaz_meta_module_exit();
	flaz_hit_module_exit();
	flaz_compressor_module_exit();
}

module_init(dm_flaz_init);
module_exit(dm_flaz_exit);

MODULE_DESCRIPTION(DM_NAME " compressed write-through SSD cache target");
MODULE_AUTHOR("dm-flaz developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.4.0");

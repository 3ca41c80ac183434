// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz mode: what the volume uses the SSD for (normal, degraded,
 * passthrough), and the upward calls: the only ways the layers under the data
 * path (meta.c, xbuf.c, hit.c, cleaner.c) report back up to the volume, as
 * dm-zoned's metadata and reclaim report device trouble to its target through
 * dmz_check_bdev(). An SSD fault is counted, and enough of them change the
 * mode; a write-intent mark that did not reach the SSD, or an SSD unusable at
 * activation, stops the cache at once. The change itself (emptying the cache,
 * a new generation on the SSD) runs in mode_work, never in the reporter's
 * context, and waits while the volume is suspended.
 */
#include <linux/device-mapper.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "flaz.h"

#define DM_MSG_PREFIX "flaz"

static const char * const mode_names[] = {
	[FLAZ_MODE_NORMAL] = "normal",
	[FLAZ_MODE_DEGRADED] = "degraded",
	[FLAZ_MODE_PASSTHROUGH] = "passthrough",
};

static const char * const why_names[] = {
	[FLAZ_WHY_NONE] = "none",
	[FLAZ_WHY_SSD_ERRORS] = "ssd_errors",
	[FLAZ_WHY_SSD_NO_MARK] = "ssd_no_mark",
	[FLAZ_WHY_SSD_UNUSABLE] = "ssd_unusable",
	[FLAZ_WHY_SSD_READ_ONLY] = "ssd_read_only",
	[FLAZ_WHY_ASKED] = "asked",
};

/* The mode now (any context). */
enum flaz_mode flaz_mode_get(struct flaz_cache *c)
{
	return READ_ONCE(c->mode);
}

const char *flaz_mode_name(struct flaz_cache *c)
{
	return mode_names[flaz_mode_get(c)];
}

/* Why the mode is not normal (status mode_reason). */
const char *flaz_mode_why(struct flaz_cache *c)
{
	return why_names[READ_ONCE(c->why)];
}

/*
 * Change the mode (process context). Passthrough empties the cache and gives
 * the SSD a new, empty generation, so nothing cached before can be loaded
 * again; leaving it starts a new one the same way. Returns 0, or an error when
 * the SSD cannot take the new generation (the mode is then passthrough).
 */
int flaz_mode_set(struct flaz_cache *c, enum flaz_mode mode, enum flaz_why why)
{
	const char *name = dm_table_device_name(c->ti->table);
	enum flaz_mode old;
	int r = 0;

	mutex_lock(&c->mode_lock);
	old = c->mode;
	if (old == mode)
		goto out;
	if (mode == FLAZ_MODE_PASSTHROUGH) {
		/*
		 * Fail closed: the saved state is void on the SSD before the first
		 * write goes to the HDD unmarked. On failure meta.c remembers the
		 * generation as void, and tries again while in passthrough.
		 */
		if (flaz_meta_reformat(c->meta, true))
			DMERR("%s: cannot empty the table on the SSD: trying again while in passthrough",
			      name);
	}
	WRITE_ONCE(c->why, mode == FLAZ_MODE_NORMAL ? FLAZ_WHY_NONE : why);
	WRITE_ONCE(c->mode, mode);
	if (mode == FLAZ_MODE_PASSTHROUGH) {
		flaz_cache_invalidate(c);
	} else if (old == FLAZ_MODE_PASSTHROUGH) {
		r = flaz_meta_reformat(c->meta, false);
		if (r) {
			WRITE_ONCE(c->mode, FLAZ_MODE_PASSTHROUGH);
			WRITE_ONCE(c->why, FLAZ_WHY_SSD_UNUSABLE);
			DMERR("%s: the SSD still fails: staying in passthrough", name);
			goto out;
		}
	}
	if (mode == FLAZ_MODE_NORMAL) {
		atomic_set(&c->faults, 0);
		WRITE_ONCE(c->ssd_failed, false);
	}
	DMWARN("%s: mode %s -> %s (%s)", name, mode_names[old], mode_names[mode],
	       why_names[READ_ONCE(c->why)]);
	dm_table_event(c->ti->table);
out:
	mutex_unlock(&c->mode_lock);
	return r;
}

/*
 * Take the mode where the faults say. A suspended volume changes nothing on the
 * SSD (a reload's new instance may own it by now): resume looks again.
 */
static void mode_work(struct work_struct *work)
{
	struct flaz_cache *c = container_of(work, struct flaz_cache, mode_work);
	int faults = atomic_read(&c->faults);
	bool failed = READ_ONCE(c->ssd_failed);
	enum flaz_why why = failed ? FLAZ_WHY_SSD_NO_MARK : FLAZ_WHY_SSD_ERRORS;

	if (READ_ONCE(c->suspended))
		return;
	/* a burst of errors still steps through degraded, so the log tells the story */
	if ((failed || faults >= FLAZ_FAULTS_DEGRADED) &&
	    flaz_mode_get(c) == FLAZ_MODE_NORMAL)
		flaz_mode_set(c, FLAZ_MODE_DEGRADED, why);
	if (failed || faults >= FLAZ_FAULTS_PASSTHROUGH)
		flaz_mode_set(c, FLAZ_MODE_PASSTHROUGH, why);
}

/*
 * The SSD cannot be used at activation (meta.c, before any I/O): start in
 * passthrough with whatever was loaded dropped.
 */
void flaz_report_unusable(struct flaz_cache *c, enum flaz_why why)
{
	DMWARN("%s: the SSD cannot be used (%s): starting in passthrough",
	       dm_table_device_name(c->ti->table), why_names[why]);
	mutex_lock(&c->mode_lock);
	WRITE_ONCE(c->why, why);
	WRITE_ONCE(c->mode, FLAZ_MODE_PASSTHROUGH);
	mutex_unlock(&c->mode_lock);
	flaz_cache_invalidate(c);
}

/* The SSD could not take a write-intent mark (meta.c): stop using it. */
void flaz_report_no_mark(struct flaz_cache *c)
{
	WRITE_ONCE(c->ssd_failed, true);
	queue_work(c->wq.io, &c->mode_work);
}

/*
 * An SSD read or write failed, or what it returned failed its checks (any
 * context): count it; enough of them change the mode.
 */
void flaz_report_fault(struct flaz_cache *c, enum flaz_stat stat)
{
	unsigned long since = READ_ONCE(c->faults_since);
	int n;

	flaz_stats_add(c->stats, stat, 1);
	/* a rate, not a lifetime total: the count starts over each FLAZ_FAULTS_WINDOW */
	if (time_after(jiffies, since + FLAZ_FAULTS_WINDOW) &&
	    cmpxchg(&c->faults_since, since, jiffies) == since)
		atomic_set(&c->faults, 0);
	n = atomic_inc_return(&c->faults);
	if (n == FLAZ_FAULTS_DEGRADED || n == FLAZ_FAULTS_PASSTHROUGH)
		queue_work(c->wq.io, &c->mode_work);
}

/* An extent write failed (interrupt context): its slots must never be read. */
void flaz_report_extent_failed(struct flaz_cache *c, u32 ext)
{
	flaz_report_fault(c, FLAZ_STAT_SSD_ERRORS);
	flaz_cleaner_failed(c->cleaner, ext);
}

void flaz_mode_init(struct flaz_cache *c)
{
	INIT_WORK(&c->mode_work, mode_work);
	c->faults_since = jiffies;
	mutex_init(&c->mode_lock);
	/* not resumed yet: mode changes wait */
	c->suspended = true;
}

void flaz_mode_exit(struct flaz_cache *c)
{
	cancel_work_sync(&c->mode_work);
	mutex_destroy(&c->mode_lock);
}

/* A mode change under way completes; later ones wait for resume. */
void flaz_mode_suspend(struct flaz_cache *c)
{
	flush_work(&c->mode_work);
	WRITE_ONCE(c->suspended, true);
	flush_work(&c->mode_work);
}

/* Faults counted while suspended (the last commit's) take effect now. */
void flaz_mode_resume(struct flaz_cache *c)
{
	WRITE_ONCE(c->suspended, false);
	queue_work(c->wq.io, &c->mode_work);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz mode: what the volume uses the SSD for (normal, degraded,
 * passthrough), and the faults the parts report of it, as dm-zoned's metadata
 * and reclaim report device trouble to its target through dmz_check_bdev().
 * An SSD fault is counted, and enough of them change the mode; a write-intent
 * mark that did not reach the SSD, or an SSD unusable at activation, stops the
 * cache at once. The change itself (emptying the cache, a new generation on
 * the SSD) is the volume's (cache.c mode_work), never run in the reporter's
 * context, and it waits while the volume is suspended. What the volume must do
 * at once goes up through its events (flaz.h struct flaz_events).
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

const char *flaz_mode_str(enum flaz_mode mode)
{
	return mode_names[mode];
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
	c->ev->invalidate(c);
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
	c->ev->extent_failed(c, ext);
}

/* The mode's state; the volume sets up the work that changes it (cache.c). */
void flaz_mode_init(struct flaz_cache *c)
{
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

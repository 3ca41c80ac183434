// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz work queues: per-CPU (bound) queues, each CPU's work on its own
 * worker with its CPU's codec stream. Work runs on the CPU it arose on (where a
 * read or fill completed: blk-mq completes on the submitter's CPU or near it),
 * whose caches hold the bio and the stream, as FlaZ's per-CPU queues do. A
 * bio's units are not spread over other CPUs: a fill does not hold its reader
 * up (the bio has ended) and one CPU compresses faster than an HDD reads; a
 * hit's decompression is mostly done in its completion (hit.c).
 * Decompression serves a waiting reader, so its queue is high priority;
 * compression fills the cache off the I/O path and is CPU intensive, so it does
 * not hold up other per-CPU work. Extent writes and reclaim have a queue of
 * their own: compression units wait on them for buffers.
 *
 * A CPU-intensive work item that sleeps makes its pool start the next one, so
 * without a limit a fill burst puts hundreds of units to sleep on the extent
 * buffers, and every extent written wakes them all. Two per CPU: one
 * compressing while the other waits for a buffer, or for a free extent
 * (fill.c), or copies its slot in.
 */
#include <linux/workqueue.h>

#include "compat.h"
#include "flaz.h"

#define WRITE_ACTIVE	2	/* fill units active per CPU */

int flaz_wq_init(struct flaz_wq *w, const char *name)
{
	w->read = alloc_workqueue("flaz-rd/%s", WQ_PERCPU | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0, name);
	w->write = alloc_workqueue("flaz-wr/%s", WQ_PERCPU | WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM,
				   WRITE_ACTIVE, name);
	w->io = alloc_workqueue("flaz-io/%s", WQ_PERCPU | WQ_MEM_RECLAIM, 0, name);
	if (!w->read || !w->write || !w->io) {
		flaz_wq_exit(w);
		return -ENOMEM;
	}
	return 0;
}

/* NULL-tolerant; waits for queued work. */
void flaz_wq_exit(struct flaz_wq *w)
{
	if (w->read)
		destroy_workqueue(w->read);
	if (w->write)
		destroy_workqueue(w->write);
	if (w->io)
		destroy_workqueue(w->io);
	w->read = NULL;
	w->write = NULL;
	w->io = NULL;
}

/* queue_work() on a per-CPU queue: this CPU's worker */
void flaz_wq_read(struct flaz_wq *w, struct work_struct *work)
{
	queue_work(w->read, work);
}

void flaz_wq_write(struct flaz_wq *w, struct work_struct *work)
{
	queue_work(w->write, work);
}

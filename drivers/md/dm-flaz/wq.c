// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz work queues: per-CPU (bound) queues, so a bio's 4 KiB units are
 * compressed or decompressed on several CPUs at once, each with its CPU's codec
 * stream. Decompression serves a waiting reader, so its queue is high priority;
 * compression fills the cache off the I/O path and is CPU intensive, so it does
 * not hold up other per-CPU work. Extent writes and reclaim have a queue of
 * their own: compression units wait on them for buffers.
 *
 * A CPU-intensive work item that sleeps makes its pool start the next one, so
 * without a limit a fill burst puts hundreds of units to sleep on the extent
 * buffers, and every extent written wakes them all. Two per CPU: one
 * compressing while the other waits for a buffer or copies its slot in.
 */
#include <linux/cpumask.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "flaz.h"

#define WRITE_ACTIVE	2	/* fill units active per CPU */

int flaz_wq_init(struct flaz_wq *w, const char *name)
{
	atomic_set(&w->next, 0);
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

/* The next online CPU in turn. */
static int next_cpu(struct flaz_wq *w)
{
	unsigned int i = atomic_inc_return(&w->next);

	return cpumask_local_spread(i % num_online_cpus(), NUMA_NO_NODE);
}

void flaz_wq_read(struct flaz_wq *w, struct work_struct *work)
{
	queue_work_on(next_cpu(w), w->read, work);
}

void flaz_wq_write(struct flaz_wq *w, struct work_struct *work)
{
	queue_work_on(next_cpu(w), w->write, work);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why did the kernel refuse a table? The flaz target says so in one kernel log
 * line; flazctl reads it back from /dev/kmsg.
 */
#ifndef FLAZCTL_KMSG_H
#define FLAZCTL_KMSG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Open the kernel log at its end, before the request, so only newer records count;
 * -1 when it cannot be read.
 */
int kmsg_open(void);

/*
 * Copy into @buf the text after "flaz: " of the last record containing it logged
 * since kmsg_open(). False when there is none (or @fd is -1).
 */
bool kmsg_flaz_reason(int fd, char *buf, size_t len);

/* Call @fn with the text after "flaz: " of each such record since kmsg_open(), oldest first. */
bool kmsg_flaz_each(int fd, void (*fn)(const char *reason, void *arg), void *arg);

/* Close what kmsg_open() returned, -1 included. */
void kmsg_close(int fd);

#endif

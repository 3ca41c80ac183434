// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the kernel's reason for a refused table from /dev/kmsg. Each read()
 * returns one record, "<prio>,<seq>,<usec>,<flags>;<message>\n" followed by
 * optional continuation lines; a refused table logs
 * "device-mapper: table: 253:0: flaz: <reason>".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"

#define KMSG_RECORD_MAX 8192	/* the kernel's records are at most ~1 KiB */

int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The reason in one record, or NULL: its first line after "flaz: ", cut at the newline. */
static char *record_reason(char *rec)
{
	char *msg = strchr(rec, ';');
	char *reason;

	if (!msg)
		return NULL;
	msg[strcspn(msg, "\n")] = '\0';
	reason = strstr(msg, "flaz: ");
	return reason ? reason + strlen("flaz: ") : NULL;
}

bool kmsg_flaz_each(int fd, void (*fn)(const char *reason, void *arg), void *arg)
{
	char rec[KMSG_RECORD_MAX];
	bool found = false;
	char *reason;
	ssize_t n;

	if (fd < 0)
		return false;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		/* EPIPE: records were overwritten under us; the next read resumes. */
		if (n < 0 && (errno == EPIPE || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		reason = record_reason(rec);
		if (reason) {
			fn(reason, arg);
			found = true;
		}
	}
	return found;
}

struct last_reason {
	char *buf;
	size_t len;
};

static void keep_last(const char *reason, void *arg)
{
	struct last_reason *l = arg;

	snprintf(l->buf, l->len, "%s", reason);
}

bool kmsg_flaz_reason(int fd, char *buf, size_t len)
{
	struct last_reason l = { buf, len };

	return kmsg_flaz_each(fd, keep_last, &l);
}

void kmsg_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl check's output, which the checker's parts share: a problem (counted,
 * printed or listed in JSON), a note, and the progress line on a terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "checker.h"
#include "jsonout.h"

void progress_clear(struct checker *c)
{
	if (c->progress_on)
		fputs("\r\033[K", stderr);
	c->progress_on = false;
}

/* "WHAT: DONE/TOTAL (P%)" on a terminal, rewritten in place, at most every PROGRESS_NS. */
void progress(struct checker *c, const char *what, __u64 done, __u64 total)
{
	struct timespec now;
	__u64 ns;

	if (!c->tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (__u64)now.tv_sec * 1000000000ULL + now.tv_nsec;
	if (c->progress_on && ns - c->progress_ns < PROGRESS_NS && done < total)
		return;
	c->progress_ns = ns;
	c->progress_on = true;
	fprintf(stderr, "\r%s: %llu/%llu (%llu%%)\033[K", what, done, total,
		total ? done * 100 / total : 100);
}

/* One problem (or repair): counted always, printed up to MAX_SHOWN (MAX_LISTED in JSON). */
void say(struct checker *c, enum kind k, const struct where *w, const char *fmt, ...)
{
	static const char *const kinds[] = { "corrupt", "warning", "repaired", "unsupported" };
	struct json_object *o;
	char msg[512];
	va_list ap;

	c->count[k]++;
	if (c->quiet)
		return;
	if (c->shown >= (c->json ? MAX_LISTED : MAX_SHOWN)) {
		c->hidden++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->json) {
		progress_clear(c);
		printf("%s: %s\n", kinds[k], msg);
		c->shown++;
		return;
	}
	o = json_object_new_object();
	jadd(o, "kind", jstr(kinds[k]));
	jadd(o, "area", jstr(w->area));
	if (w->has & W_INDEX)
		jadd_u64(o, w->key, w->index);
	if (w->has & W_LINE)
		jadd_u64(o, "line", w->line);
	if (w->has & W_EXTENT)
		jadd_u64(o, "extent", w->extent);
	if (w->has & W_OFFSET)
		jadd_u64(o, "offset", w->offset);
	jadd(o, "message", jstr(msg));
	json_object_array_add(c->problems, o);
	c->shown++;
}

/* Information that is no problem (not in JSON: its figures are in the summary). */
void note(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet || c->json)
		return;
	progress_clear(c);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

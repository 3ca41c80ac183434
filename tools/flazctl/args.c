// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl: the command line's words. What flazctl says when it refuses one
 * (fail()), and how every command reads numbers, option names and volume names.
 * Below everything else in the tool: it calls nothing of it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dm-ioctl.h>

#include "flazctl.h"

/* Characters a volume name may use: safe in /dev/mapper, a shell and a table. */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-:@"

const char *fail_where;

int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("flazctl: ", stderr);
	if (fail_where)
		fprintf(stderr, "%s: ", fail_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* A plain unsigned decimal, no sign, no spaces, no overflow. */
bool parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end;
}

bool parse_bounded(const char *s, unsigned long *v)
{
	if (parse_ulong(s, v))
		return true;
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	*v = ULONG_MAX;
	return true;
}

bool opt_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return *a == *b;
}

int bad_option(char **argv)
{
	const char *arg = argv[optind - 1];

	if (strncmp(arg, "--", 2))
		return fail(EXIT_USAGE, "unknown option -%c", optopt);
	if (strchr(arg, '='))
		return fail(EXIT_USAGE, "bad option %s (unknown, or it takes no value)", arg);
	return fail(EXIT_USAGE, "unknown option %s", arg);
}

int check_name(const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return fail(EXIT_USAGE, "the volume name is empty");
	if (len >= DM_NAME_LEN)
		return fail(EXIT_USAGE, "the volume name is longer than %d characters", DM_NAME_LEN - 1);
	if (!strcmp(name, ".") || !strcmp(name, "..") || name[0] == '-' ||
	    strspn(name, NAME_CHARS) != len)
		return fail(EXIT_USAGE, "invalid volume name '%s': use letters, digits and . _ + - : @, not starting with -",
			    name);
	/* /dev/mapper/control is device-mapper's own node: no volume can have it */
	if (!strcmp(name, "control"))
		return fail(EXIT_USAGE, "invalid volume name 'control': /dev/mapper/control is device-mapper's control node");
	return EXIT_OK;
}

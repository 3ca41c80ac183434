/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flazctl: shared declarations of the command-line tool for dm-flaz volumes.
 */
#ifndef FLAZCTL_H
#define FLAZCTL_H

#include <stdbool.h>
#include <stdio.h>

#define FLAZCTL_VERSION "0.4.0"

/* Exit codes, one table for every command, documented in flazctl(8). */
enum {
	EXIT_OK = 0,		/* check: the SSD is clean */
	EXIT_FAIL = 1,		/* a device, device-mapper or the kernel said no */
	EXIT_USAGE = 2,		/* the command line itself is wrong */
	EXIT_PROBLEMS = 3,	/* check: only ignorable problems, or all repaired */
	EXIT_CORRUPT = 4,	/* check, dump: the SSD's metadata is not sound */
};

/* args.c: the command line's words. */

/* Print "flazctl: <message>" on stderr and return @code, for `return fail(...)`. */
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* When set, fail() says where: "flazctl: <fail_where>: <message>" (a flaztab's FILE:LINE). */
extern const char *fail_where;

/* A plain unsigned decimal, no sign, no spaces, no overflow. */
bool parse_ulong(const char *s, unsigned long *v);

/*
 * parse_ulong() for a value the caller checks against a range below ULONG_MAX:
 * digits too many for an unsigned long read as ULONG_MAX, so that the range check
 * says they are out of range, not that they are no number.
 */
bool parse_bounded(const char *s, unsigned long *v);

/*
 * Option names @a and @b are the same, a dash and an underscore taken as one:
 * create, flaztab, set and get accept "extent-kib" and "extent_kib" alike (and
 * print the dashes).
 */
bool opt_name_eq(const char *a, const char *b);

/* getopt_long() returned '?': say which option was wrong; returns EXIT_USAGE. */
int bad_option(char **argv);

/* Refuse a volume name device-mapper or /dev/mapper cannot hold; EXIT_OK or EXIT_USAGE. */
int check_name(const char *name);

/* flazctl.c: the dispatch, and what the commands share above args.c. */

/* The command-line summary, for --help and usage errors. */
void usage(FILE *out);

/* "flazctl COMMAND ..." as --help shows it, for usage errors. */
const char *command_synopsis(const char *name);

struct flaz_vol;

/*
 * The live flaz volume @name (a name check_name() passed) into @vol, talking to
 * device-mapper; EXIT_OK, or EXIT_FAIL with a message. Free with flaz_vol_free().
 */
int live_volume(const char *name, struct flaz_vol *vol);

/* The commands: remove in flazctl.c, each other in its own file. */
int cmd_create(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_resize(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_activate(int argc, char **argv);
int cmd_deactivate(int argc, char **argv);

#endif

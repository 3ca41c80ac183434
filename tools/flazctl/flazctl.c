// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl: create, remove and inspect dm-flaz volumes (compressed write-through
 * SSD cache in front of an HDD). The command dispatch, the shared helpers and
 * `remove` live here; create.c and status.c hold the two larger commands, and
 * check.c and dump.c the offline ones that read an SSD (through ssdmeta.c).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/dm-ioctl.h>

#include "dm.h"
#include "flazctl.h"

/* Characters a volume name may use: safe in /dev/mapper, a shell and a table. */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-:@"

int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("flazctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

void usage(FILE *out)
{
	fputs("Usage:\n"
	      "  flazctl create NAME --hdd DEV --ssd DEV [options] [-v|--verbose]\n"
	      "  flazctl remove NAME\n"
	      "  flazctl status NAME [--json]\n"
	      "  flazctl check SSD [--repair]\n"
	      "  flazctl dump SSD [--json] [--entries]\n"
	      "  flazctl --help | --version\n"
	      "\n"
	      "create options (defaults are the kernel's):\n"
	      "  --compressor lzo|lz4|zstd|deflate   codec for cached blocks (lz4)\n"
	      "  --extent-kib N            SSD extent size, power of two 4..256 (32)\n"
	      "  --overbook P              cache lines per SSD data block, 100..1000 % (200)\n"
	      "  --low-watermark P         cleaner starts below P % free extents, 1..98 (10)\n"
	      "  --high-watermark P        cleaner stops above P %, 2..99, > low (20)\n"
	      "  --seq-cutoff-kib N        bypass sequential streams longer than N KiB, 0 = off (0)\n"
	      "  --compress-min-saving P   store blocks saving less than P % raw, 0..100 (10)\n"
	      "  --hot-uncompressed 0|1    keep hot lines uncompressed (0)\n"
	      "  --ssd-hold-s N            hold writes up to N s while the SSD takes no mark (30)\n"
	      "  --cold                    ignore the SSD's saved state, start empty\n"
	      "  -v, --verbose             print the table line and libdevmapper's messages\n"
	      "\n"
	      "check and dump read an SSD (device or image) offline; check --repair rewrites\n"
	      "what is damaged so it holds less but nothing wrong.\n"
	      "\n"
	      "Exit status: 0 ok, 1 failure, 2 usage error; check: 0 clean, 1 ignorable\n"
	      "problems or repaired, 2 corrupt. See flazctl(8).\n", out);
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
	return EXIT_OK;
}

/* @s as a JSON string, quotes and escapes included. */
void json_string(const char *s)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", stdout);
		else if (*c == '\t')
			fputs("\\t", stdout);
		else if (*c < 0x20 || *c == 0x7f)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}

/* remove NAME: only a flaz volume, so a typo cannot take down another device. */
int cmd_remove(int argc, char **argv)
{
	struct flaz_vol vol;
	int r;

	if (argc != 2)
		return fail(EXIT_USAGE, "usage: flazctl remove NAME");
	r = check_name(argv[1]);
	if (r)
		return r;
	dm_setup(false);
	r = dm_ready();
	if (!r)
		r = dm_get_flaz(argv[1], &vol, false);
	if (r)
		return r;
	flaz_vol_free(&vol);
	if (!dm_remove(argv[1]))
		return fail(EXIT_FAIL, "cannot remove %s: %s", argv[1], dm_last_error());
	return EXIT_OK;
}

/* A subcommand and the function that runs it on (argc, argv) from its own name on. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "create", cmd_create },
	{ "remove", cmd_remove },
	{ "status", cmd_status },
	{ "check", cmd_check },
	{ "dump", cmd_dump },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	size_t i;

	if (!cmd)
		return fail(EXIT_USAGE, "no command given (see flazctl --help)");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("flazctl %s\n", FLAZCTL_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return fail(EXIT_USAGE, "unknown command '%s' (see flazctl --help)", cmd);
}

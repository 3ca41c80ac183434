// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl: create, remove and inspect dm-flaz volumes (compressed write-through
 * SSD cache in front of an HDD). The command dispatch and `remove` live here,
 * the command line's words (fail(), numbers, names) in args.c; create.c,
 * status.c (with prom.c), list.c, rates.c (stats), tune.c (set, get),
 * resize.c and activate.c (activate, deactivate) the commands on live volumes,
 * and check.c (with its check_*.c) and dump.c the offline ones that read an
 * SSD (through ssdmeta.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "flazctl.h"
#include "flaztab.h"

/* A subcommand, the function that runs it on (argc, argv) from its own name on, and its help. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
	const char *help;	/* its options, for "flazctl COMMAND --help" */
};

#define CREATE_OPTIONS \
	"(defaults are the kernel's):\n" \
	"  --compressor lzo|lz4|zstd|deflate   codec for cached blocks (lz4)\n" \
	"  --extent-kib N            SSD extent size, power of two 4..256 (32)\n" \
	"  --overbook P              cache lines per SSD data block, 100..1000 % (200)\n" \
	"  --low-watermark P         eviction starts below P % free extents, 1..98 (1)\n" \
	"  --high-watermark P        eviction stops at P %, 2..99, > low (2)\n" \
	"  --seq-cutoff-kib N        bypass sequential streams longer than N KiB, 0 = off (4096)\n" \
	"  --compress-min-saving P   store blocks saving less than P % raw, 0..100 (10)\n" \
	"  --hot-uncompressed 0|1    the cleaner stores hot blocks raw (0)\n" \
	"  --ssd-hold-s N            hold writes up to N s while the SSD takes no mark (30)\n" \
	"  --cleaner-rate-mib N      cleaner MiB/s while I/O is active, 0..65536, 0 = off (32)\n" \
	"  --hot-max-percent P       hot raw blocks take at most P % of the SSD, 0..100 (10)\n" \
	"  --cold-compressor none|lzo|lz4|zstd|deflate   the cleaner recompresses\n" \
	"                            blocks that are not hot with it (none)\n" \
	"  --table-cache-kib N       DRAM for the table's resident pages, 0..1073741824,\n" \
	"                            KiB, 0 = 128 KiB per GiB of SSD, 4 MiB at least (0)\n" \
	"  --probation-percent P     new blocks go first to a probation FIFO of P % of\n" \
	"                            the SSD, 0..50, 0 = off (10)\n" \
	"  --cold                    ignore the SSD's saved state, start empty\n" \
	"  --force                   with --cold: overwrite an SSD that holds something\n" \
	"                            other than a flaz cache\n" \
	"  -v, --verbose             print the table line and libdevmapper's messages\n"

static const struct command commands[] = {
	{ "create", cmd_create,
	  "flazctl create NAME --hdd DEV --ssd DEV [options] [--cold [--force]] [-v|--verbose]",
	  "Options " CREATE_OPTIONS },
	{ "remove", cmd_remove, "flazctl remove NAME",
	  "Remove the volume; the HDD keeps all data.\n" },
	{ "resize", cmd_resize, "flazctl resize NAME",
	  "Reload the volume at its HDD's size, after the HDD grew or shrank (lvextend,\n"
	  "lvreduce). Grown, the cache stays warm; shrunk, it starts empty.\n" },
	{ "list", cmd_list,
	  "flazctl list [-o FIELD[,FIELD...]] [-O [-]FIELD[,...]] [table options] [--json | --csv]",
	  "One line per flaz volume, as lvs(8) shows LVs.\n"
	  "  -o FIELD,...   columns to show (default name,hdd,ssd,mode,cached,hit_ratio,saving);\n"
	  "                 -o help lists the fields\n"
	  "  -O, --sort [-]FIELD,...  sort by these fields (- descending), then by name\n"
	  "Table options (--csv takes --noheadings too):\n"
	  "  --noheadings   no header line\n"
	  "  --units U      sizes in h (human, default), b, k, m, g, t (KiB..TiB), or\n"
	  "                 H, B, K, M, G, T in powers of 1000\n"
	  "  --nosuffix     sizes without their unit\n"
	  "  --separator STR  columns separated by STR, not aligned\n"
	  "  --json         a JSON array of objects, raw numbers\n"
	  "  --csv          a header line and one line per volume, raw numbers\n" },
	{ "status", cmd_status, "flazctl status [NAME] [--bytes] [--json | --prometheus]",
	  "Every statistic of the volume, or of every flaz volume without NAME.\n"
	  "  --bytes        sizes as the kernel counts them (bytes, KiB), not in human units\n"
	  "  --json         one JSON object per volume per line\n"
	  "  --prometheus   metrics in the Prometheus text format (node_exporter textfile)\n" },
	{ "stats", cmd_stats,
	  "flazctl stats NAME [-o FIELD[,FIELD...]] [--units U] [--interval N] [--count K] [--json]",
	  "Totals since the volume was created, then the same over each interval: the\n"
	  "same fields, keys and units in both.\n"
	  "  -o FIELD,...   columns to show (default time,reads,writes,hit_ratio,\n"
	  "                 ssd_read_bytes,hdd_read_bytes,fills,evictions,commits,meta_bytes;\n"
	  "                 with --json every field); -o help lists them, rates (_per_s) too\n"
	  "  --units U      sizes in h (human, default), b, k, m, g, t (KiB..TiB), or\n"
	  "                 H, B, K, M, G, T in powers of 1000\n"
	  "  --interval N   seconds between reports, 1..86400 (1)\n"
	  "  --count K      stop after K interval reports (default: until interrupted)\n"
	  "  --json         one JSON object per report per line, raw numbers\n" },
	{ "set", cmd_set, "flazctl set NAME KEY VALUE",
	  "Change a tunable of a live volume. KEY is one of low_watermark,\n"
	  "high_watermark, seq_cutoff_kib, compress_min_saving, hot_uncompressed, ssd_hold_s,\n"
	  "cleaner_rate_mib, hot_max_percent, table_cache_kib, probation_percent.\n" },
	{ "get", cmd_get, "flazctl get NAME [KEY] [--json]",
	  "The volume's table options, set or default, as KEY=VALUE lines; with KEY its\n"
	  "value alone.\n"
	  "  --json         one JSON object\n" },
	{ "check", cmd_check, "flazctl check SSD [--repair] [--json]",
	  "Verify a stopped volume's SSD (device or image) offline.\n"
	  "  --repair       rewrite what is damaged, so the cache holds less but nothing wrong\n"
	  "  --json         one JSON object: verdict, counts, problems with their location\n"
	  "Exit status: 0 clean, 3 ignorable problems or repaired, 4 corrupt, 1 cannot be\n"
	  "read, 2 usage error.\n" },
	{ "dump", cmd_dump, "flazctl dump SSD [--json] [--entries | --superblock]",
	  "Show an SSD's superblocks, gen blocks and table summary.\n"
	  "  --json         one JSON object\n"
	  "  --entries      list every cached line too\n"
	  "  --superblock   the two superblock copies only: read nothing else\n"
	  "Exit status: 0 ok, 4 no valid superblock (or another format version), 1 cannot\n"
	  "be read, 2 usage error.\n" },
	{ "activate", cmd_activate,
	  "flazctl activate (--all | --device DEV | NAME...) [--flaztab FILE] [--wait S]\n"
	  "                   [--dry-run] [-v]",
	  "Create the flaztab's volumes that are not active yet (lines with noauto only by\n"
	  "NAME). A volume whose SSD is missing comes up uncached: its HDD alone as a\n"
	  "dm-linear device of the same name, turned into the flaz volume (cache cold) by\n"
	  "a later activate once the SSD is there. A bad line is reported as FILE:LINE and\n"
	  "skipped; a missing HDD fails its line only.\n"
	  "  --all            every line without noauto\n"
	  "  --device DEV     the lines whose HDD or SSD is block device DEV (for udev);\n"
	  "                   none is fine\n"
	  "  --flaztab FILE   read FILE, not $FLAZTAB or " FLAZTAB_DEFAULT "\n"
	  "  --wait S         give missing devices up to S seconds to appear, 0..600 (0)\n"
	  "  --dry-run        check the lines and show their devices; change nothing\n"
	  "                   (a missing HDD fails its line, as activation would)\n"
	  "  -v, --verbose    also say which volumes were active already\n"
	  "A missing " FLAZTAB_DEFAULT " is no error; a missing --flaztab or $FLAZTAB is.\n"
	  "Exit status: 0 every line asked for is active, 1 a line is bad or failed,\n"
	  "2 usage error.\n" },
	{ "deactivate", cmd_deactivate,
	  "flazctl deactivate (--all | NAME...) [--flaztab FILE] [-v]",
	  "Remove the flaztab's volumes that are active (flaz, or uncached as activate\n"
	  "made them); a device of that name that is neither is left alone.\n"
	  "  --all            every line\n"
	  "  --flaztab FILE   read FILE, not $FLAZTAB or " FLAZTAB_DEFAULT "\n"
	  "  -v, --verbose    print libdevmapper's messages\n"
	  "Exit status: 0 none is active any more, 1 a line is bad or a volume could not\n"
	  "be removed (in use), 2 usage error.\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *command_synopsis(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].synopsis;
	return "flazctl --help";
}

void usage(FILE *out)
{
	size_t i;

	fputs("Usage:\n", out);
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %s\n", commands[i].synopsis);
	fputs("  flazctl COMMAND --help\n"
	      "  flazctl --help | --version\n"
	      "\n"
	      "create options " CREATE_OPTIONS
	      "\n"
	      "list and status without NAME cover every flaz volume; stats shows rates; set and\n"
	      "get change and read tunables of a live volume. check and dump read an SSD\n"
	      "(device or image) offline; check --repair rewrites what is damaged so it holds\n"
	      "less but nothing wrong. activate and deactivate bring up and take down the\n"
	      "volumes of /etc/flaztab (at boot: flaz-activate.service). COMMAND --help shows a\n"
	      "command's options.\n"
	      "\n"
	      "Exit status, every command: 0 ok (check: clean), 1 failure, 2 usage error,\n"
	      "3 check: ignorable problems or repaired, 4 check, dump: corrupt. See flazctl(8).\n",
	      out);
}

/* "flazctl COMMAND --help": the command's synopsis and options. */
static void command_usage(const struct command *c)
{
	printf("Usage: %s\n\n%s", c->synopsis, c->help);
}

/* Whether the arguments after the command ask for help (-h or --help before any "--"). */
static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int live_volume(const char *name, struct flaz_vol *vol)
{
	int r;

	dm_setup(false);
	r = dm_ready();
	return r ? r : dm_get_flaz(name, vol, false);
}

/* remove NAME: only a flaz volume, so a typo cannot take down another device. */
int cmd_remove(int argc, char **argv)
{
	struct flaz_vol vol;
	int r;

	if (argc != 2)
		return fail(EXIT_USAGE, "usage: %s", command_synopsis("remove"));
	r = check_name(argv[1]);
	if (!r)
		r = live_volume(argv[1], &vol);
	if (r)
		return r;
	flaz_vol_free(&vol);
	if (!dm_remove(argv[1]))
		return fail(EXIT_FAIL, "cannot remove %s: %s", argv[1], dm_last_error());
	return EXIT_OK;
}

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
	for (i = 0; i < NR_COMMANDS; i++) {
		if (strcmp(cmd, commands[i].name))
			continue;
		if (wants_help(argc - 1, argv + 1)) {
			command_usage(&commands[i]);
			return EXIT_OK;
		}
		return commands[i].run(argc - 1, argv + 1);
	}
	return fail(EXIT_USAGE, "unknown command '%s' (see flazctl --help)", cmd);
}

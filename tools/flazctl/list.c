// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl list: one line per flaz volume, columns chosen with -o as lvs(8) does,
 * for people (human units, aligned), as CSV or as JSON (raw numbers); like lvs,
 * --noheadings, --units, --nosuffix, --separator and -O/--sort.
 */
#define _GNU_SOURCE	/* qsort_r() */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flazctl.h"
#include "jsonout.h"
#include "vol.h"

#define MAX_FIELDS 64
#define VALUE_LEN 288

enum field_kind {
	F_TEXT,		/* shown as is, quoted in JSON */
	F_BYTES,	/* a byte count: human size for people */
	F_RATIO,	/* a fraction: a percentage for people, undefined allowed */
	F_NUMBER,	/* a status count or number, shown as the kernel gives it */
};

/* How a value came out: its text, and what JSON makes of it. */
enum value_type { V_STRING, V_NUMBER, V_NULL };

struct field {
	const char *name;
	const char *head;	/* column header for people */
	enum field_kind kind;
	const char *help;
};

static const struct field fixed_fields[] = {
	{ "name", "Name", F_TEXT, "volume name" },
	{ "hdd", "HDD", F_TEXT, "the HDD (origin) device" },
	{ "ssd", "SSD", F_TEXT, "the SSD (cache) device" },
	{ "size", "Size", F_BYTES, "volume size in bytes" },
	{ "mode", "Mode", F_TEXT, "normal, degraded or passthrough" },
	{ "cached", "Cached", F_BYTES, "data cached: blocks_cached * 4 KiB" },
	{ "hit_ratio", "Hit", F_RATIO, "read_hits / (read_hits + read_misses)" },
	{ "saving", "Saving", F_RATIO, "1 - physical_bytes / logical_bytes" },
	{ "ssd_used", "SSD used", F_RATIO, "1 - free_extents / total_extents" },
};

#define NR_FIXED (sizeof(fixed_fields) / sizeof(fixed_fields[0]))

static const char default_fields[] = "name,hdd,ssd,mode,cached,hit_ratio,saving";

enum list_format { HUMAN, JSON, CSV };

struct list_args {
	enum list_format fmt;
	bool noheadings;
	bool nosuffix;
	char unit;		/* sizes in the table: a letter of UNITS_LETTERS */
	const char *sep;	/* the table's column separator, unaligned; NULL: aligned */
	size_t n;
	struct field f[MAX_FIELDS];
	size_t nsort;		/* -O: the fields to sort by, each descending or not */
	struct field sort[MAX_FIELDS];
	bool desc[MAX_FIELDS];
};

/* The fixed field named @name, or NULL. */
static const struct field *fixed_field(const char *name)
{
	size_t i;

	for (i = 0; i < NR_FIXED; i++)
		if (!strcmp(name, fixed_fields[i].name))
			return &fixed_fields[i];
	return NULL;
}

/* The fields, each once: a status key that is a fixed field too (mode) is listed as that. */
static void fields_help(void)
{
	size_t i, n = 0;

	puts("Fields for -o (comma-separated):");
	for (i = 0; i < NR_FIXED; i++)
		printf("  %-12s %s\n", fixed_fields[i].name, fixed_fields[i].help);
	puts("and every other status key (see flazctl status), as the kernel reports it:");
	for (i = 0; status_keys[i]; i++) {
		if (fixed_field(status_keys[i]))
			continue;
		printf("%s%s", n % 6 ? " " : "  ", status_keys[i]);
		if (++n % 6 == 0)
			putchar('\n');
	}
	if (n % 6)
		putchar('\n');
}

/* A field by name: a fixed one, or a status key as a column of its own. */
static bool find_field(const char *name, struct field *f)
{
	const struct field *fixed = fixed_field(name);
	size_t len = strlen(name);

	if (fixed) {
		*f = *fixed;
		return true;
	}
	if (!known_status_key(name))
		return false;
	*f = (struct field){ name, name, F_NUMBER, NULL };
	if (!strcmp(name, "mode_reason"))
		f->kind = F_TEXT;
	else if (len > 6 && !strcmp(name + len - 6, "_bytes"))
		f->kind = F_BYTES;
	return true;
}

/*
 * "a,b,c" into @f, at most MAX_FIELDS, their count in @n; the names point into @spec.
 * For -O (@desc not NULL) a name may start with - (descending) or + (ascending).
 * EXIT_OK, EXIT_USAGE, or -1 for help.
 */
static int parse_fields(const char *opt, char *spec, struct field *f, bool *desc, size_t *n)
{
	char *save = NULL, *w;

	if (!strcmp(spec, "help")) {
		fields_help();
		return -1;
	}
	*n = 0;
	for (w = strtok_r(spec, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_FIELDS)
			return fail(EXIT_USAGE, "%s: more than %d fields", opt, MAX_FIELDS);
		if (desc) {
			desc[*n] = *w == '-';
			w += *w == '-' || *w == '+';
		}
		if (!find_field(w, &f[*n]))
			return fail(EXIT_USAGE, "%s: unknown field '%s' (see flazctl list -o help)",
				    opt, w);
		(*n)++;
	}
	if (!*n)
		return fail(EXIT_USAGE, "%s: no field given (see flazctl list -o help)", opt);
	return EXIT_OK;
}

/* The table's options with --json or --csv (which give raw numbers): EXIT_OK or EXIT_USAGE. */
static int check_format(const struct list_args *a)
{
	if (a->fmt == HUMAN)
		return EXIT_OK;
	if (a->sep || a->unit != 'h' || a->nosuffix)
		return fail(EXIT_USAGE, "--separator, --units and --nosuffix shape the table; --json and --csv give raw numbers");
	if (a->fmt == JSON && a->noheadings)
		return fail(EXIT_USAGE, "--noheadings goes with the table or --csv, not --json");
	return EXIT_OK;
}

/*
 * Parse "list [-o FIELDS] [-O FIELDS] [table options] [--json|--csv]" into @a, the
 * field names in @fields and @sort (of @len each); EXIT_OK, EXIT_USAGE, or -1 after help.
 */
static int parse_list(int argc, char **argv, struct list_args *a, char *fields, char *sort,
		      size_t len)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "options", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 'O' },
		{ "noheadings", no_argument, NULL, 'H' },
		{ "nosuffix", no_argument, NULL, 'N' },
		{ "units", required_argument, NULL, 'u' },
		{ "separator", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	snprintf(fields, len, "%s", default_fields);
	*sort = '\0';
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:O:", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
		case 'O':
			if ((size_t)snprintf(c == 'o' ? fields : sort, len, "%s", optarg) >= len)
				return fail(EXIT_USAGE, "-%c: the field list is too long", c);
			break;
		case 'H':
			a->noheadings = true;
			break;
		case 'N':
			a->nosuffix = true;
			break;
		case 'u':
			if (parse_units(optarg, &a->unit))
				return EXIT_USAGE;
			break;
		case 's':
			a->sep = optarg;
			break;
		case 'j':
		case 'c':
			if (a->fmt != HUMAN)
				return fail(EXIT_USAGE, "give one of --json and --csv");
			a->fmt = c == 'j' ? JSON : CSV;
			break;
		case ':':
			return fail(EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return fail(EXIT_USAGE, "unexpected argument '%s' (usage: %s)", argv[optind],
			    command_synopsis("list"));
	r = check_format(a);
	if (!r)
		r = parse_fields("-o", fields, a->f, NULL, &a->n);
	if (!r && *sort)
		r = parse_fields("-O", sort, a->sort, a->desc, &a->nsort);
	return r;
}

/* A byte count from the volume, for the fixed byte fields. */
static bool fixed_bytes(const struct field *f, const struct vol_info *vi, uint64_t *v)
{
	if (!strcmp(f->name, "size")) {
		*v = vi->vol.sectors * 512;
		return true;
	}
	if (!strcmp(f->name, "cached") && pair_u64(&vi->p, "blocks_cached", v)) {
		*v *= 4096;
		return true;
	}
	return pair_u64(&vi->p, f->name, v);
}

/* The text of field @f of @vi, for people in the table, else raw. */
static enum value_type field_value(const struct list_args *a, const struct field *f,
				   const struct vol_info *vi, char *buf, size_t len)
{
	bool human = a->fmt == HUMAN;
	const char *s;
	uint64_t v;
	double r = 0;
	bool ok;

	switch (f->kind) {
	case F_TEXT:
		if (!strcmp(f->name, "name"))
			s = vi->name;
		else if (!strcmp(f->name, "hdd"))
			s = vi->hdd;
		else if (!strcmp(f->name, "ssd"))
			s = vi->ssd;
		else
			s = pair_value(&vi->p, f->name);
		snprintf(buf, len, "%s", s ? s : (human ? "-" : ""));
		return s || human ? V_STRING : V_NULL;
	case F_BYTES:
		if (!fixed_bytes(f, vi, &v))
			break;
		if (human)
			fmt_size_u64(v, a->unit, !a->nosuffix, buf, len);
		else
			snprintf(buf, len, "%" PRIu64, v);
		return human ? V_STRING : V_NUMBER;
	case F_RATIO:
		if (!strcmp(f->name, "hit_ratio"))
			ok = vol_hit_ratio(&vi->p, &r);
		else if (!strcmp(f->name, "saving"))
			ok = vol_saving(&vi->p, &r);
		else
			ok = vol_ssd_used(&vi->p, &r);
		if (human)
			fmt_percent(ok, r, buf, len);
		else if (ok)
			snprintf(buf, len, "%.4f", r);
		else
			break;
		return human ? V_STRING : V_NUMBER;
	case F_NUMBER:
		s = pair_value(&vi->p, f->name);
		if (!s)
			break;
		snprintf(buf, len, "%s", s);
		return s[strspn(s, "0123456789.")] || !*s ? V_STRING : V_NUMBER;
	}
	snprintf(buf, len, "%s", human ? "-" : "");
	return human ? V_STRING : V_NULL;
}

/* Whether a column is right-aligned for people: everything but text. */
static bool right_aligned(const struct field *f)
{
	return f->kind != F_TEXT;
}

static void print_human(const struct list_args *a, const struct vol_info *vis, size_t n)
{
	char buf[VALUE_LEN];
	int width[MAX_FIELDS], w;
	size_t i, j;

	for (j = 0; j < a->n; j++) {
		width[j] = a->noheadings ? 0 : (int)strlen(a->f[j].head);
		for (i = 0; i < n; i++) {
			field_value(a, &a->f[j], &vis[i], buf, sizeof(buf));
			if ((int)strlen(buf) > width[j])
				width[j] = (int)strlen(buf);
		}
	}
	for (i = a->noheadings; i <= n; i++) {
		for (j = 0; j < a->n; j++) {
			if (i)
				field_value(a, &a->f[j], &vis[i - 1], buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "%s", a->f[j].head);
			if (a->sep) {
				/* as lvs --separator: not aligned */
				printf("%s%s", j ? a->sep : "", buf);
				continue;
			}
			/* no trailing blanks after the last column */
			w = j + 1 == a->n && !right_aligned(&a->f[j]) ? 0 : width[j];
			printf("%s%*s", j ? "  " : "", right_aligned(&a->f[j]) ? w : -w, buf);
		}
		putchar('\n');
	}
}

static void print_csv(const struct list_args *a, const struct vol_info *vis, size_t n)
{
	char buf[VALUE_LEN];
	size_t i, j;

	for (j = 0; j < a->n && !a->noheadings; j++)
		printf("%s%s", j ? "," : "", a->f[j].name);
	if (!a->noheadings)
		putchar('\n');
	for (i = 0; i < n; i++) {
		for (j = 0; j < a->n; j++) {
			field_value(a, &a->f[j], &vis[i], buf, sizeof(buf));
			/* names and device paths hold no comma or quote; quote anyway if one does */
			if (strpbrk(buf, ",\"\n"))
				printf("%s\"%s\"", j ? "," : "", buf);
			else
				printf("%s%s", j ? "," : "", buf);
		}
		putchar('\n');
	}
}

static void print_json(const struct list_args *a, const struct vol_info *vis, size_t n)
{
	struct json_object *arr = json_object_new_array(), *o;
	char buf[VALUE_LEN];
	size_t i, j;

	for (i = 0; i < n; i++) {
		o = jobj();
		for (j = 0; j < a->n; j++) {
			switch (field_value(a, &a->f[j], &vis[i], buf, sizeof(buf))) {
			case V_STRING:
				jadd(o, a->f[j].name, jstr(buf));
				break;
			case V_NUMBER:
				jadd(o, a->f[j].name, jnum(buf));
				break;
			case V_NULL:
				jadd(o, a->f[j].name, NULL);
				break;
			}
		}
		json_object_array_add(arr, o);
	}
	jput(arr);
}

/* Raw values of field @f of @x and @y compared: no value first, numbers as numbers. */
static int compare_field(const struct field *f, const struct vol_info *x,
			 const struct vol_info *y)
{
	static const struct list_args raw = { .fmt = CSV };
	char bx[VALUE_LEN], by[VALUE_LEN];
	enum value_type tx = field_value(&raw, f, x, bx, sizeof(bx));
	enum value_type ty = field_value(&raw, f, y, by, sizeof(by));
	double dx, dy;

	if (tx == V_NULL || ty == V_NULL)
		return (tx != V_NULL) - (ty != V_NULL);
	if (tx == V_NUMBER && ty == V_NUMBER) {
		dx = strtod(bx, NULL);
		dy = strtod(by, NULL);
		return (dx > dy) - (dx < dy);
	}
	return strcmp(bx, by);
}

/* qsort_r() order of -O: its fields in turn, then the name (as vols_get() sorted). */
static int compare_vols(const void *px, const void *py, void *arg)
{
	const struct list_args *a = arg;
	const struct vol_info *x = px, *y = py;
	size_t k;
	int c;

	for (k = 0; k < a->nsort; k++) {
		c = compare_field(&a->sort[k], x, y);
		if (c)
			return a->desc[k] ? -c : c;
	}
	return strcmp(x->name, y->name);
}

int cmd_list(int argc, char **argv)
{
	struct list_args a = { .fmt = HUMAN, .unit = 'h' };
	struct vol_info *vis;
	char fields[1024], sort[1024];
	size_t n;
	int r;

	r = parse_list(argc, argv, &a, fields, sort, sizeof(fields));
	if (r)
		return r < 0 ? EXIT_OK : r;
	r = vols_get(NULL, &vis, &n);
	if (r)
		return r;
	if (a.nsort)
		qsort_r(vis, n, sizeof(*vis), compare_vols, &a);
	if (a.fmt == JSON)
		print_json(&a, vis, n);
	else if (a.fmt == CSV)
		print_csv(&a, vis, n);
	else
		print_human(&a, vis, n);
	vols_free(vis, n);
	return EXIT_OK;
}

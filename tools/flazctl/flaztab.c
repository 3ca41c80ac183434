// SPDX-License-Identifier: GPL-2.0
/*
 * /etc/flaztab, the volumes to activate at boot: parsed and checked line by
 * line, so that one bad line is reported with its FILE:LINE and skipped while
 * the others still come up. The options are create's long options as key=value
 * and are checked by create's own code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "flazctl.h"
#include "flaztab.h"

/* The tags a device may be named by, and the /dev/disk directory udev keeps them in. */
static const struct {
	const char *tag, *dir;
} tags[] = {
	{ "UUID=", "by-uuid" },
	{ "PARTUUID=", "by-partuuid" },
	{ "LABEL=", "by-label" },
	{ "PARTLABEL=", "by-partlabel" },
};

#define NR_TAGS (sizeof(tags) / sizeof(tags[0]))

const char *flaztab_path(const char *opt)
{
	const char *env = getenv("FLAZTAB");

	if (opt)
		return opt;
	return env && *env ? env : FLAZTAB_DEFAULT;
}

bool flaztab_chosen(const char *opt)
{
	const char *env = getenv("FLAZTAB");

	return opt || (env && *env);
}

/* The tag @spec starts with, or -1. */
static int spec_tag(const char *spec)
{
	size_t i;

	for (i = 0; i < NR_TAGS; i++)
		if (!strncmp(spec, tags[i].tag, strlen(tags[i].tag)))
			return (int)i;
	return -1;
}

/*
 * @v as udev writes it into a /dev/disk/by-* name: bytes outside a safe set
 * become \xHH (udev's encode_devnode_name()), so "my disk" is "my\x20disk".
 */
static bool encode_tag(const char *v, char *buf, size_t len)
{
	static const char safe[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#+-.:=@_";
	size_t n = 0;

	for (; *v; v++) {
		if (n + 5 > len)
			return false;
		if ((unsigned char)*v >= 0x80 || strchr(safe, *v))
			buf[n++] = *v;
		else
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", (unsigned char)*v);
	}
	buf[n] = '\0';
	return true;
}

bool flaztab_resolve(const char *spec, char *buf, size_t len, unsigned long *rdev)
{
	const char *root = getenv("FLAZ_DISK_DIR");
	char enc[256], real[4096];
	struct stat st;
	int t = spec_tag(spec);

	if (t < 0) {
		snprintf(buf, len, "%s", spec);
	} else {
		if (!encode_tag(spec + strlen(tags[t].tag), enc, sizeof(enc)))
			return false;
		snprintf(buf, len, "%s/%s/%s", root && *root ? root : "/dev/disk", tags[t].dir, enc);
		/* show the device itself, not udev's link to it */
		if (realpath(buf, real))
			snprintf(buf, len, "%s", real);
	}
	if (stat(buf, &st) || !S_ISBLK(st.st_mode))
		return false;
	if (rdev)
		*rdev = st.st_rdev;
	return true;
}

/* The value of hex digit @c, or -1. */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Undo @s's escapes in place, once (what they give is never read as an escape
 * again): fstab's octal \NNN (\040 a space, \011 a tab, \134 a backslash), and
 * with @hex also \xHH, as udev's /dev/disk/by-* names show a tag's bytes. Any
 * other backslash stays. False for an escape of a NUL byte.
 */
static bool unescape(char *s, bool hex)
{
	char *out = s;
	int v;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			v = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 4;
		} else if (hex && s[0] == '\\' && s[1] == 'x' && hex_digit(s[2]) >= 0 &&
			   hex_digit(s[3]) >= 0) {
			v = hex_digit(s[2]) << 4 | hex_digit(s[3]);
			s += 4;
		} else {
			*out++ = *s++;
			continue;
		}
		if (!v)
			return false;
		*out++ = (char)v;
	}
	*out = '\0';
	return true;
}

/*
 * Decode a device field in place: octal escapes anywhere, \xHH too in a tag's
 * value (a path is taken as written, so /dev/disk/by-label/my\x20disk is that
 * link); then check it: a path or TAG=VALUE. EXIT_OK or EXIT_USAGE with a message.
 */
static int check_spec(const char *what, char *spec)
{
	int t = spec_tag(spec);

	if (!unescape(t < 0 ? spec : spec + strlen(tags[t].tag), t >= 0))
		return fail(EXIT_USAGE, "%s: a device cannot hold a NUL byte (\\000, or \\x00 in a tag)", what);
	if (t >= 0 && !spec[strlen(tags[t].tag)])
		return fail(EXIT_USAGE, "%s %s: the %.*s is empty", what, spec,
			    (int)strlen(tags[t].tag) - 1, tags[t].tag);
	if (t >= 0 && strchr(spec, '/'))
		return fail(EXIT_USAGE, "%s %s: a %.*s cannot hold '/'", what, spec,
			    (int)strlen(tags[t].tag) - 1, tags[t].tag);
	if (t < 0 && spec[0] != '/')
		return fail(EXIT_USAGE, "%s '%s' is neither an absolute path nor UUID=, PARTUUID=, LABEL= or PARTLABEL=",
			    what, spec);
	return EXIT_OK;
}

/* Check and record the OPTIONS field: key=value or bare words, comma-separated. */
static int parse_options(struct flaztab_line *l, char *opts)
{
	char *save = NULL, *o, *eq;
	int r;

	if (!strcmp(opts, "-"))
		return EXIT_OK;
	if (!*opts || opts[0] == ',' || opts[strlen(opts) - 1] == ',' || strstr(opts, ",,"))
		return fail(EXIT_USAGE, "empty option in '%s'", opts);
	for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		eq = strchr(o, '=');
		if (eq)
			*eq = '\0';
		/* fstab's and crypttab's word for no option: with others too */
		if (!strcmp(o, "defaults")) {
			if (eq)
				return fail(EXIT_USAGE, "defaults takes no value");
			continue;
		}
		if (!strcmp(o, "noauto")) {
			if (eq)
				return fail(EXIT_USAGE, "noauto takes no value");
			if (l->noauto)
				return fail(EXIT_USAGE, "noauto given twice");
			l->noauto = true;
			continue;
		}
		if (!strcmp(o, "force"))
			return fail(EXIT_USAGE, "force is not a flaztab option: overwrite a foreign SSD once with flazctl create --cold --force");
		r = create_set_option(&l->args, o, eq ? eq + 1 : NULL);
		if (r)
			return r;
	}
	return create_check_options(&l->args);
}

/* Split @text into at most @max whitespace-separated fields, a word starting "#" ending it. */
static size_t split_fields(char *text, char **f, size_t max)
{
	char *save = NULL, *w;
	size_t n = 0;

	for (w = strtok_r(text, " \t\r\n", &save); w && *w != '#';
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n < max)
			f[n] = w;
		n++;
	}
	return n;
}

/* Parse one line into @l (whose text the caller set); EXIT_OK or EXIT_USAGE with a message. */
static int parse_line(struct flaztab *t, struct flaztab_line *l)
{
	struct flaztab_line *other;
	char *f[5];
	size_t n = split_fields(l->text, f, 5);
	int r;

	if (n < 3)
		return fail(EXIT_USAGE, "want NAME HDD SSD [OPTIONS], got %zu field%s", n,
			    n == 1 ? "" : "s");
	if (n > 4)
		return fail(EXIT_USAGE, "unexpected field '%s' after the options (they are one comma-separated field)",
			    f[4]);
	l->name = f[0];
	l->hdd = f[1];
	l->ssd = f[2];
	l->args.dash = "";
	r = check_name(l->name);
	if (r)
		return r;
	other = flaztab_find(t, l->name);
	if (other)
		return fail(EXIT_USAGE, "volume %s is already on line %u", l->name, other->lineno);
	r = check_spec("HDD", f[1]);
	if (!r)
		r = check_spec("SSD", f[2]);
	if (!r && !strcmp(l->hdd, l->ssd))
		r = fail(EXIT_USAGE, "HDD and SSD are the same device %s", l->hdd);
	if (!r && n == 4)
		r = parse_options(l, f[3]);
	return r;
}

/* Whether @s holds nothing but blanks and a comment. */
static bool empty_line(const char *s)
{
	s += strspn(s, " \t\r\n");
	return !*s || *s == '#';
}

/*
 * Open flaztab @path for reading: a regular file only, so that a FIFO or a device
 * cannot hold activation up (opened without waiting for a FIFO's writer, then
 * looked at). NULL with errno, EINVAL for a file that is not regular.
 */
static FILE *open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	FILE *fp;
	int e;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		e = errno;
	else
		e = S_ISREG(st.st_mode) ? 0 : EINVAL;
	fp = e ? NULL : fdopen(fd, "r");
	if (!fp) {
		if (!e)
			e = errno;
		close(fd);
		errno = e;
	}
	return fp;
}

int flaztab_read(const char *path, struct flaztab *t, bool *missing)
{
	struct flaztab_line *l, *grown;
	size_t cap = 0, len = 0, wlen;
	char *line = NULL;
	unsigned int lineno = 0;
	bool bad;
	FILE *fp;
	int r = EXIT_OK;

	memset(t, 0, sizeof(*t));
	t->path = path;
	*missing = false;
	fp = open_regular(path);
	if (!fp) {
		/* the caller says whether no flaztab is worth a word */
		*missing = errno == ENOENT;
		if (*missing)
			return EXIT_FAIL;
		if (errno == EINVAL)
			return fail(EXIT_FAIL, "flaztab %s is not a regular file", path);
		return fail(EXIT_FAIL, "cannot read %s: %s", path, strerror(errno));
	}
	while (getline(&line, &len, fp) >= 0) {
		lineno++;
		if (empty_line(line))
			continue;
		if (t->n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(t->v, cap * sizeof(*t->v));
			if (!grown) {
				r = fail(EXIT_FAIL, "out of memory");
				break;
			}
			t->v = grown;
		}
		l = &t->v[t->n];
		memset(l, 0, sizeof(*l));
		l->lineno = lineno;
		wlen = strlen(path) + 12;
		l->where = malloc(wlen);
		l->text = strdup(line);
		if (!l->where || !l->text) {
			free(l->where);
			free(l->text);
			r = fail(EXIT_FAIL, "out of memory");
			break;
		}
		snprintf(l->where, wlen, "%s:%u", path, lineno);
		fail_where = l->where;
		bad = parse_line(t, l) != EXIT_OK;
		fail_where = NULL;
		if (bad) {
			free(l->where);
			free(l->text);
			t->bad++;
		} else {
			t->n++;
		}
	}
	if (!r && ferror(fp))
		r = fail(EXIT_FAIL, "cannot read %s: %s", path, strerror(errno));
	free(line);
	fclose(fp);
	return r;
}

void flaztab_free(struct flaztab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].where);
		free(t->v[i].text);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

struct flaztab_line *flaztab_find(struct flaztab *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	return NULL;
}

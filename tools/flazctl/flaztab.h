/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /etc/flaztab: the volumes to activate at boot, one a line, crypttab-like:
 * "NAME HDD SSD [OPTIONS]". See flazctl(8), "FLAZTAB".
 */
#ifndef FLAZCTL_FLAZTAB_H
#define FLAZCTL_FLAZTAB_H

#include <stdbool.h>
#include <stddef.h>

#include "create.h"

#define FLAZTAB_DEFAULT "/etc/flaztab"

/* One valid line. */
struct flaztab_line {
	unsigned int lineno;
	char *where;		/* "FILE:LINE" for messages, FILE whole */
	char *text;		/* the line, split in place: the fields point into it */
	const char *name;
	const char *hdd, *ssd;	/* the devices: path or TAG=VALUE, escapes decoded */
	bool noauto;		/* only activated by name */
	struct create_args args;	/* the options, checked as create checks them */
};

struct flaztab {
	const char *path;
	struct flaztab_line *v;
	size_t n;
	unsigned int bad;	/* lines refused (each reported with FILE:LINE) */
};

/*
 * The flaztab to use: @opt (--flaztab), else $FLAZTAB, else /etc/flaztab.
 */
const char *flaztab_path(const char *opt);

/* Whether the flaztab was chosen (--flaztab or $FLAZTAB), so that its absence is an error. */
bool flaztab_chosen(const char *opt);

/*
 * Read @path: every valid line into @t, every bad one reported on stderr as
 * "flazctl: FILE:LINE: why" and counted in t->bad. EXIT_OK, or EXIT_FAIL when
 * the file cannot be read or is not a regular file (a FIFO would block): with a
 * message, or none when it does not exist (*missing). Free with flaztab_free()
 * in both cases.
 */
int flaztab_read(const char *path, struct flaztab *t, bool *missing);
void flaztab_free(struct flaztab *t);

/* The line of volume @name, or NULL. */
struct flaztab_line *flaztab_find(struct flaztab *t, const char *name);

/*
 * The device a flaztab device @spec names, as a path into @buf: the path itself,
 * or for UUID=, PARTUUID=, LABEL= and PARTLABEL= the /dev/disk/by-* link udev
 * makes ($FLAZ_DISK_DIR replaces /dev/disk, for tests). Then whether it is there:
 * a block device (its number into @rdev, when not NULL).
 */
bool flaztab_resolve(const char *spec, char *buf, size_t len, unsigned long *rdev);

#endif

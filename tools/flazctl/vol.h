/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live flaz volume as the reporting commands (status, list, stats) see it: its
 * devices and its status line split into key=value pairs, with the figures derived
 * from them, and the human and raw forms they are shown in.
 */
#ifndef FLAZCTL_VOL_H
#define FLAZCTL_VOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dm.h"

/* One status word: "key=value", or a bare "key" (value NULL). */
struct pair {
	const char *key;
	const char *value;
};

struct pairs {
	struct pair *v;
	size_t n;
};

/* A volume: what device-mapper said, the devices as /dev names, the status pairs. */
struct vol_info {
	const char *name;
	struct flaz_vol vol;
	char hdd[256];
	char ssd[256];
	struct pairs p;		/* points into vol.status */
};

/*
 * The volume @name, or with @name NULL every flaz volume (sorted by name; none is
 * fine). Talks to device-mapper; EXIT_OK or EXIT_FAIL with a message.
 */
int vols_get(const char *name, struct vol_info **vis, size_t *n);
void vols_free(struct vol_info *vis, size_t n);

/* Split @s in place into pairs that point into it; false when out of memory. */
bool split_pairs(char *s, struct pairs *p);

/* The value of @key, or NULL. */
const char *pair_value(const struct pairs *p, const char *key);

/* The value of @key as a count; false when absent or not a plain decimal. */
bool pair_u64(const struct pairs *p, const char *key, uint64_t *v);

/* Whether @s is all digits (and not empty), so it can be used as a count. */
bool is_count(const char *s);

/* read_hits / (read_hits + read_misses); false before the first read. */
bool vol_hit_ratio(const struct pairs *p, double *r);

/* 1 - physical_bytes / logical_bytes; false while nothing non-zero is cached. */
bool vol_saving(const struct pairs *p, double *r);

/* 1 - free_extents / total_extents; false when the status lacks them. */
bool vol_ssd_used(const struct pairs *p, double *r);

/* @bytes for people: "512 B", "12.0 MiB", "1.5 TiB". */
const char *fmt_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * The units of sizes, as lvs(8) --units takes them: h human (powers of 1024, the
 * default), b bytes, k m g t KiB to TiB; upper case H B K M G T count in powers of
 * 1000 (kB to TB). parse_units() takes --units' argument, one such letter, into
 * @unit: EXIT_OK, or EXIT_USAGE with a message.
 */
#define UNITS_LETTERS "hHbBkKmMgGtT"
int parse_units(const char *s, char *unit);

/*
 * @bytes in @unit: "1.5 GiB" (h), "1610612736 B" (b), "1536.00 MiB" (m), "1.6 GB" (H);
 * without @suffix the number alone.
 */
const char *fmt_size(double bytes, char unit, bool suffix, char *buf, size_t len);
const char *fmt_size_u64(uint64_t bytes, char unit, bool suffix, char *buf, size_t len);

/* A ratio for people: "93.4%", or "-" when @ok is false. */
const char *fmt_percent(bool ok, double r, char *buf, size_t len);

/* The status keys this flazctl knows (README "Status"), NULL-terminated. */
extern const char *const status_keys[];

/* Whether @key is one of status_keys[]. */
bool known_status_key(const char *key);

/* status --prometheus: the volumes in the Prometheus text format (prom.c). */
void print_prometheus(const struct vol_info *vis, size_t n);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The volumes the reporting commands show: fetched from device-mapper, their
 * status split into pairs, and the derived figures (hit ratio, saving, SSD use)
 * every command computes the same way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flazctl.h"
#include "vol.h"

const char *const status_keys[] = {
	"mode", "reads", "writes", "read_hits", "read_misses", "write_hits", "write_misses",
	"fills", "bypasses", "blocks_cached", "logical_bytes", "physical_bytes", "ratio",
	"raw_blocks", "zero_blocks", "free_extents", "total_extents", "evictions",
	"cleaner_runs", "extents_cleaned", "slots_moved", "slots_dropped", "discards",
	"hdd_errors", "ssd_errors", "table_bytes", "commits", "meta_errors",
	"marked_regions", "mode_reason", "dram_bytes", "meta_bytes", "marks", "mark_waits",
	"mark_wait_us", "commit_us", "loading", "fills_skipped", "compress_skipped",
	"hot_blocks", "recompressed", "cold_bytes", "codec_bytes", "raw_bytes",
	"table_resident_bytes", "table_page_ins", "slots_kept",
	"seq_bypass_kib", "skipped_space", "skipped_busy", "skipped_memory",
	"skipped_table", "probation_extents", "main_extents", "slots_promoted",
	"ghost_hits", "skipped_hot", "partial_hits", "partial_fills", "partial_updates",
	"partial_drops", "partial_passes", "seq_bypasses", "fills_pending", NULL
};

bool known_status_key(const char *key)
{
	size_t i;

	for (i = 0; status_keys[i]; i++)
		if (!strcmp(key, status_keys[i]))
			return true;
	return false;
}

bool split_pairs(char *s, struct pairs *p)
{
	char *save = NULL, *w, *eq;

	p->n = 0;
	p->v = calloc(strlen(s) / 2 + 1, sizeof(*p->v));
	if (!p->v)
		return false;
	for (w = strtok_r(s, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		eq = strchr(w, '=');
		if (eq)
			*eq = '\0';
		p->v[p->n++] = (struct pair){ w, eq ? eq + 1 : NULL };
	}
	return true;
}

const char *pair_value(const struct pairs *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].value;
	return NULL;
}

bool is_count(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

bool pair_u64(const struct pairs *p, const char *key, uint64_t *v)
{
	const char *s = pair_value(p, key);

	if (!is_count(s))
		return false;
	*v = strtoull(s, NULL, 10);
	return true;
}

/* 1 - @num / @den of two status counts; false when either is missing or @den is 0. */
static bool one_minus(const struct pairs *p, const char *num, const char *den, double *r)
{
	uint64_t n, d;

	if (!pair_u64(p, num, &n) || !pair_u64(p, den, &d) || !d)
		return false;
	*r = 1.0 - (double)n / (double)d;
	return true;
}

bool vol_hit_ratio(const struct pairs *p, double *r)
{
	uint64_t h, m;

	if (!pair_u64(p, "read_hits", &h) || !pair_u64(p, "read_misses", &m) || !(h + m))
		return false;
	*r = (double)h / (double)(h + m);
	return true;
}

bool vol_saving(const struct pairs *p, double *r)
{
	return one_minus(p, "physical_bytes", "logical_bytes", r);
}

bool vol_ssd_used(const struct pairs *p, double *r)
{
	return one_minus(p, "free_extents", "total_extents", r);
}

int parse_units(const char *s, char *unit)
{
	if (strlen(s) != 1 || !strchr(UNITS_LETTERS, s[0]))
		return fail(EXIT_USAGE, "--units takes one of %s, not '%s'", UNITS_LETTERS, s);
	*unit = s[0];
	return EXIT_OK;
}

const char *fmt_size(double bytes, char unit, bool suffix, char *buf, size_t len)
{
	static const char *const iec[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	static const char *const si[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	bool is_si = unit >= 'A' && unit <= 'Z';
	double base = is_si ? 1000 : 1024, v = bytes;
	const char *p = strchr("bkmgt", unit | 0x20);
	size_t u = 0, want = p ? (size_t)(p - "bkmgt") : 0;

	if (p) {
		while (u < want) {
			v /= base;
			u++;
		}
	} else {
		/* h, H: the largest unit that keeps the number at 1 or more */
		while (v >= base && u + 1 < sizeof(iec) / sizeof(iec[0])) {
			v /= base;
			u++;
		}
	}
	snprintf(buf, len, u ? (p ? "%.2f" : "%.1f") : "%.0f", v);
	if (suffix)
		snprintf(buf + strlen(buf), len - strlen(buf), " %s", is_si ? si[u] : iec[u]);
	return buf;
}

/* A byte count in @unit as fmt_size() puts it, exact in bytes (b, B) where a double is not. */
const char *fmt_size_u64(uint64_t bytes, char unit, bool suffix, char *buf, size_t len)
{
	if ((unit | 0x20) != 'b')
		return fmt_size((double)bytes, unit, suffix, buf, len);
	snprintf(buf, len, "%" PRIu64 "%s", bytes, suffix ? " B" : "");
	return buf;
}

const char *fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	return fmt_size((double)bytes, 'h', true, buf, len);
}

const char *fmt_percent(bool ok, double r, char *buf, size_t len)
{
	if (ok)
		snprintf(buf, len, "%.1f%%", 100.0 * r);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* "/dev/<DEVNAME>" for block device "maj:min" from sysfs, else "maj:min" itself. */
static void resolve_device(const char *majmin, char *buf, size_t len)
{
	char path[96], line[256];
	FILE *f;

	snprintf(buf, len, "%s", majmin);
	if (strspn(majmin, "0123456789:") != strlen(majmin))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", majmin);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "/dev/%s", line + 8);
	}
	fclose(f);
}

/* Take over @vol: the devices are the first two words of the table params. */
static bool vol_info_init(struct vol_info *vi, const char *name, struct flaz_vol *vol)
{
	char hdd[64] = "?", ssd[64] = "?";

	vi->vol = *vol;
	memset(vol, 0, sizeof(*vol));
	vi->name = vi->vol.name ? vi->vol.name : name;
	sscanf(vi->vol.table, "%63s %63s", hdd, ssd);
	resolve_device(hdd, vi->hdd, sizeof(vi->hdd));
	resolve_device(ssd, vi->ssd, sizeof(vi->ssd));
	return split_pairs(vi->vol.status, &vi->p);
}

void vols_free(struct vol_info *vis, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(vis[i].p.v);
		flaz_vol_free(&vis[i].vol);
	}
	free(vis);
}

int vols_get(const char *name, struct vol_info **vis, size_t *n)
{
	struct flaz_vol one, *vols = NULL;
	size_t i, nr = 0;
	int r;

	*vis = NULL;
	*n = 0;
	dm_setup(false);
	r = dm_ready();
	if (r)
		return r;
	if (name) {
		r = dm_get_flaz(name, &one, true);
		vols = &one;
		nr = 1;
	} else {
		r = dm_list_flaz(&vols, &nr);
	}
	if (r)
		return r;
	*vis = calloc(nr ? nr : 1, sizeof(**vis));
	for (i = 0; *vis && i < nr; i++) {
		if (!vol_info_init(&(*vis)[i], name, &vols[i])) {
			vols_free(*vis, i + 1);
			*vis = NULL;
		}
	}
	if (!*vis) {
		for (i = 0; i < nr; i++)
			flaz_vol_free(&vols[i]);
	}
	if (!name)
		free(vols);
	if (!*vis)
		return fail(EXIT_FAIL, "out of memory");
	*n = nr;
	return EXIT_OK;
}

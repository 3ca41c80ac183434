// SPDX-License-Identifier: GPL-2.0
/*
 * replay-log: replay a dm-log-writes log onto a device, written for the dm-flaz crash tests
 * from the kernel's Documentation/admin-guide/device-mapper/log-writes.rst and the on-log
 * structures of drivers/md/dm-log-writes.c.
 *
 * Log layout: the super (struct log_write_super) in the log's first sector; then, for every
 * entry, one sector holding struct log_write_entry (a MARK's text follows the struct in that
 * sector), followed by nr_sectors sectors of the data written (none for a DISCARD or a
 * FLUSH without data). Sectors are the super's sectorsize; entry.sector and nr_sectors
 * count in that unit. Writes are logged in the order they reached stable storage: a FLUSH
 * entry comes after every write that completed before the flush was issued, a FUA write
 * when it completed. Replaying entries 0..N where N is a FLUSH or FUA entry gives a state
 * the disk could have been in after a power cut at that point.
 *
 * usage:
 *   replay-log --log LOG --info                  entries, sector size, FLUSH/FUA, MARK and
 *                                                DISCARD counts, bytes used
 *   replay-log --log LOG --list-flush            indexes of the FLUSH/FUA entries, one a line
 *   replay-log --log LOG --replay DEV [--start S] (--end E | --end-flush K | --all)
 *                                                write entries S..E (inclusive) onto DEV
 *   [--discard zero|skip]   what a DISCARD entry does on DEV (default zero: write zeros)
 *   [--subset SEED [--range LO:HI]]
 *                           a crash state of a disk with a volatile write cache (the model
 *                           of CrashMonkey, OSDI'18): of entries S..E (which should lie
 *                           between two FLUSH/FUA points, so none of them was made durable
 *                           yet), those writing sectors LO..HI (default all) are replayed
 *                           only up to a random cut, and each of those with probability
 *                           1/2; the others are replayed. Seeded: the same SEED gives the
 *                           same state.
 *   [-v]                    print every entry replayed
 * Entries count from 0. --end-flush K ends at the K-th (from 1) FLUSH/FUA entry. DEV is
 * fsync()ed before exiting. Exit 0 on success, 1 on a bad log or an I/O error, 2 on usage.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* dm-log-writes.c */
#define LOG_FLUSH_FLAG (1 << 0)
#define LOG_FUA_FLAG (1 << 1)
#define LOG_DISCARD_FLAG (1 << 2)
#define LOG_MARK_FLAG (1 << 3)
#define LOG_METADATA_FLAG (1 << 4)
#define WRITE_LOG_VERSION 1ULL
#define WRITE_LOG_MAGIC 0x6a736677736872ULL

struct log_write_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_write_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
} __attribute__((packed));

static const char *log_path;
static int log_fd = -1;
static uint64_t nr_entries;
static uint32_t sectorsize;
static uint64_t log_size;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "replay-log: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t dev_size(int fd, const char *path)
{
	struct stat st;
	uint64_t sz;

	if (fstat(fd, &st))
		die("cannot stat %s", path);
	if (S_ISREG(st.st_mode))
		return st.st_size;
	if (ioctl(fd, BLKGETSIZE64, &sz))
		die("cannot get the size of %s", path);
	return sz;
}

static void read_full(int fd, void *buf, size_t len, uint64_t off, const char *what)
{
	ssize_t r;
	size_t done = 0;

	while (done < len) {
		r = pread(fd, (char *)buf + done, len - done, off + done);
		if (r <= 0)
			die("short read of the log at %s", what);
		done += r;
	}
}

static void write_full(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t r;
	size_t done = 0;

	while (done < len) {
		r = pwrite(fd, (const char *)buf + done, len - done, off + done);
		if (r <= 0)
			die("write to the replay device failed: %s", strerror(r < 0 ? errno : EIO));
		done += r;
	}
}

static void open_log(void)
{
	struct log_write_super s;
	char buf[4096];

	log_fd = open(log_path, O_RDONLY);
	if (log_fd < 0)
		die("cannot open log %s", log_path);
	/* drop anything the page cache holds of the log: the kernel wrote it with bios */
	ioctl(log_fd, BLKFLSBUF, 0);
	log_size = dev_size(log_fd, log_path);
	read_full(log_fd, buf, 512, 0, "the super");
	memcpy(&s, buf, sizeof(s));
	if (le64toh(s.magic) != WRITE_LOG_MAGIC)
		die("%s is not a dm-log-writes log (bad magic)", log_path);
	if (le64toh(s.version) != WRITE_LOG_VERSION)
		die("%s: unknown log version", log_path);
	nr_entries = le64toh(s.nr_entries);
	sectorsize = le32toh(s.sectorsize);
	if (sectorsize < 512 || sectorsize > 4096 || (sectorsize & (sectorsize - 1)))
		die("%s: bad sector size in the super", log_path);
}

/* Iterate the entries: *pos is the byte offset of the next entry header in the log. */
static void next_entry(uint64_t *pos, uint64_t idx, struct log_write_entry *e, char *mark,
		       size_t mark_len)
{
	char buf[4096];
	char what[64];
	uint64_t data_bytes;

	snprintf(what, sizeof(what), "entry %" PRIu64, idx);
	if (*pos + sectorsize > log_size)
		die("the log ends before %s", what);
	read_full(log_fd, buf, sectorsize, *pos, what);
	memcpy(e, buf, sizeof(*e));
	e->sector = le64toh(e->sector);
	e->nr_sectors = le64toh(e->nr_sectors);
	e->flags = le64toh(e->flags);
	e->data_len = le64toh(e->data_len);
	if (mark && mark_len) {
		size_t n = 0;

		if (e->flags & LOG_MARK_FLAG) {
			n = e->data_len < mark_len - 1 ? e->data_len : mark_len - 1;
			if (n > sectorsize - sizeof(*e))
				n = sectorsize - sizeof(*e);
			memcpy(mark, buf + sizeof(*e), n);
		}
		mark[n] = 0;
	}
	*pos += sectorsize;
	data_bytes = (e->flags & LOG_DISCARD_FLAG) ? 0 : e->nr_sectors * sectorsize;
	if (*pos + data_bytes > log_size)
		die("the data of %s runs past the end of the log", what);
	*pos += data_bytes;
}

static int is_point(const struct log_write_entry *e)
{
	return (e->flags & (LOG_FLUSH_FLAG | LOG_FUA_FLAG)) != 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: replay-log --log LOG (--info | --list-flush |\n"
		"       --replay DEV [--start S] (--end E | --end-flush K | --all)\n"
		"       [--discard zero|skip] [--subset SEED [--range LO:HI]] [-v])\n");
	exit(2);
}

/* The subset's random numbers (xorshift64): reproducible from the seed alone. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	const char *replay = NULL, *discard = "zero", *range = NULL;
	int info = 0, list = 0, all = 0, verbose = 0, have_end = 0, have_kflush = 0, subset = 0;
	uint64_t start = 0, end = 0, kflush = 0, i, pos, points = 0, marks = 0, discards = 0, written = 0;
	uint64_t lo = 0, hi = UINT64_MAX, cut = 0, dropped = 0;
	struct log_write_entry e;
	char mark[512];
	char *buf = NULL;
	size_t buf_len = 0;
	int fd = -1;

	for (int a = 1; a < argc; a++) {
		const char *o = argv[a];
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(o, "--info")) {
			info = 1;
		} else if (!strcmp(o, "--list-flush")) {
			list = 1;
		} else if (!strcmp(o, "--all")) {
			all = 1;
		} else if (!strcmp(o, "-v")) {
			verbose = 1;
		} else if (v && !strcmp(o, "--log")) {
			log_path = v, a++;
		} else if (v && !strcmp(o, "--replay")) {
			replay = v, a++;
		} else if (v && !strcmp(o, "--start")) {
			start = num(v), a++;
		} else if (v && !strcmp(o, "--end")) {
			end = num(v), have_end = 1, a++;
		} else if (v && !strcmp(o, "--end-flush")) {
			kflush = num(v), have_kflush = 1, a++;
		} else if (v && !strcmp(o, "--discard")) {
			discard = v, a++;
		} else if (v && !strcmp(o, "--subset")) {
			rng_state = num(v) * 0x9e3779b97f4a7c15ULL + 1, subset = 1, a++;
		} else if (v && !strcmp(o, "--range")) {
			range = v, a++;
		} else {
			usage();
		}
	}
	if (!log_path || info + list + !!replay != 1)
		usage();
	if (replay && all + have_end + have_kflush != 1)
		usage();
	if (strcmp(discard, "zero") && strcmp(discard, "skip"))
		usage();
	if (have_kflush && kflush == 0)
		usage();
	if ((subset || range) && (!replay || !have_end || end < start || (range && !subset)))
		usage();
	if (range) {
		char *colon = strchr(range, ':');

		if (!colon)
			usage();
		*colon = 0;
		lo = num(range);
		hi = num(colon + 1);
	}
	if (subset)
		cut = start + rng() % (end - start + 1);
	open_log();
	if (have_end && end >= nr_entries)
		die("--end is past the last entry (the log has %s entries)", "fewer");

	if (replay) {
		fd = open(replay, O_WRONLY);
		if (fd < 0)
			die("cannot open replay device %s", replay);
	}

	pos = sectorsize;
	for (i = 0; i < nr_entries; i++) {
		next_entry(&pos, i, &e, mark, sizeof(mark));
		if (is_point(&e))
			points++;
		if (e.flags & LOG_MARK_FLAG)
			marks++;
		if (e.flags & LOG_DISCARD_FLAG)
			discards++;
		if (list && is_point(&e))
			printf("%" PRIu64 "\n", i);
		if (!replay)
			continue;
		if (have_end && i > end)
			break;
		if (i >= start) {
			uint64_t data_pos = pos - ((e.flags & LOG_DISCARD_FLAG) ? 0 :
						   e.nr_sectors * sectorsize);
			uint64_t bytes = e.nr_sectors * sectorsize;
			uint64_t off = e.sector * sectorsize;

			if (verbose)
				fprintf(stderr, "entry %" PRIu64 ": sector %" PRIu64 " +%" PRIu64
					" flags 0x%" PRIx64 "%s%s\n", i, e.sector, e.nr_sectors,
					e.flags, mark[0] ? " mark " : "", mark);
			int lost = subset && e.sector + e.nr_sectors > lo && e.sector <= hi &&
				   (i > cut || (rng() & 1));

			dropped += lost && bytes;
			if (bytes && !lost && !(e.flags & LOG_MARK_FLAG) &&
			    (!(e.flags & LOG_DISCARD_FLAG) || !strcmp(discard, "zero"))) {
				if (bytes > buf_len) {
					free(buf);
					buf = malloc(bytes);
					if (!buf)
						die("out of memory for %s", "an entry");
					buf_len = bytes;
				}
				if (e.flags & LOG_DISCARD_FLAG)
					memset(buf, 0, bytes);
				else
					read_full(log_fd, buf, bytes, data_pos, "entry data");
				write_full(fd, buf, bytes, off);
				written++;
			}
		}
		if (have_kflush && is_point(&e) && points == kflush)
			break;
	}
	if (replay && have_kflush && points < kflush)
		die("the log has fewer FLUSH/FUA entries than %s", "--end-flush asks for");
	if (replay && fsync(fd))
		die("fsync of %s failed", replay);
	if (info)
		printf("entries=%" PRIu64 " sectorsize=%u points=%" PRIu64 " marks=%" PRIu64
		       " discards=%" PRIu64 " bytes=%" PRIu64 "\n", nr_entries, sectorsize, points,
		       marks, discards, pos);
	if (replay && verbose)
		fprintf(stderr, "replayed entries %" PRIu64 "..%" PRIu64 ": %" PRIu64 " writes\n",
			start, i < nr_entries ? i : nr_entries - 1, written);
	if (subset)
		printf("written=%" PRIu64 " dropped=%" PRIu64 " cut=%" PRIu64 "\n", written, dropped,
		       cut);
	free(buf);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl: reading a flaz SSD's metadata for `check` and `dump`. Only pread and
 * pwrite on the device or image; every checksum and field check is format.c's.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "flazctl.h"
#include "ssdmeta.h"

static const char *const codecs[NR_CODECS] = { "lzo", "lz4", "zstd", "deflate" };

const char *codec_name(__u32 codec)
{
	return codec < NR_CODECS ? codecs[codec] : "unknown";
}

int ssd_open(struct ssd *s, const char *path, bool write, int err_code)
{
	struct stat st;
	int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;

	memset(s, 0, sizeof(*s));
	s->path = path;
	s->fd = -1;
	if (stat(path, &st))
		return fail(err_code, "%s: %s", path, strerror(errno));
	s->is_blk = S_ISBLK(st.st_mode);
	if (!s->is_blk && !S_ISREG(st.st_mode))
		return fail(err_code, "%s is neither a block device nor an image file", path);
	/*
	 * O_EXCL on a block device fails with EBUSY while a volume (or a mount) holds
	 * it. Writing keeps it exclusive; reading only asks, so that it never stops
	 * a volume from being created meanwhile.
	 */
	s->fd = open(path, flags | (s->is_blk ? O_EXCL : 0));
	if (!write && s->is_blk && (s->fd >= 0 || errno == EBUSY)) {
		s->busy = s->fd < 0;
		if (s->fd >= 0)
			close(s->fd);
		s->fd = open(path, flags);
	}
	if (s->fd < 0 && errno == EBUSY)
		return fail(err_code, "%s is in use (a live volume or a mount): remove the volume before repairing",
			    path);
	if (s->fd < 0)
		return fail(err_code, "cannot open %s: %s", path, strerror(errno));
	if (s->is_blk) {
		if (ioctl(s->fd, BLKGETSIZE64, &s->bytes)) {
			int e = errno;

			ssd_close(s);
			return fail(err_code, "cannot get the size of %s: %s", path, strerror(e));
		}
	} else {
		s->bytes = st.st_size;
	}
	return 0;
}

void ssd_close(struct ssd *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int ssd_read(const struct ssd *s, __u64 off, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	if (off > s->bytes || len > s->bytes - off)
		return -EOVERFLOW;
	while (len) {
		n = pread(s->fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EOVERFLOW;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

int ssd_write(const struct ssd *s, __u64 off, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	/* never grow an image file: everything written is inside the SSD */
	if (off > s->bytes || len > s->bytes - off)
		return -EOVERFLOW;
	while (len) {
		n = pwrite(s->fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

const char *ssd_strerror(int r)
{
	if (r == -EOVERFLOW)
		return "beyond the end of the device";
	return strerror(-r);
}

/* Whether the 4 bytes at @p are the little-endian superblock magic. */
static bool sb_magic_at(const unsigned char *p)
{
	return (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) == FLAZ_SB_MAGIC;
}

const char *ssd_content(const unsigned char *b, char *buf, size_t len)
{
	size_t i;

	if (sb_magic_at(b) || sb_magic_at(b + FLAZ_BLOCK_SIZE))
		return NULL;
	for (i = 0; i < SSD_PROBE_BYTES && !b[i]; i++)
		;
	if (i == SSD_PROBE_BYTES)
		return NULL;
	if (b[1080] == 0x53 && b[1081] == 0xef)
		return "an ext2/3/4 filesystem";
	if (!memcmp(b, "XFSB", 4))
		return "an XFS filesystem";
	if (!memcmp(b, "LUKS\xba\xbe", 6))
		return "a LUKS volume";
	if (!memcmp(b + 512, "LABELONE", 8))
		return "an LVM physical volume";
	if (!memcmp(b + 4086, "SWAPSPACE2", 10) || !memcmp(b + 4086, "SWAP-SPACE", 10))
		return "swap space";
	if (!memcmp(b + 512, "EFI PART", 8))
		return "a GPT partition table";
	if (b[510] == 0x55 && b[511] == 0xaa)
		return "a partition table or boot sector";
	snprintf(buf, len, "data (not zeros at byte %zu, and no flaz superblock)", i);
	return buf;
}

/*
 * The largest size a block device can have, in sectors: 2^63 - 1 bytes (the
 * kernel's loff_t). An HDD of more is no HDD.
 */
#define MAX_DEVICE_SECTORS	(~0ULL >> 10)

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

/* Magic, version and checksum of a superblock block: what makes its fields worth a look. */
static bool sb_sound(const unsigned char *blk)
{
	const struct flaz_sb *h = (const void *)blk;
	unsigned char copy[FLAZ_BLOCK_SIZE];

	if (le32toh(h->magic) != FLAZ_SB_MAGIC || le32toh(h->version) != FLAZ_SB_VERSION)
		return false;
	memcpy(copy, blk, sizeof(copy));
	((struct flaz_sb *)copy)->crc = 0;
	return le32toh(h->crc) == ~flaz_crc32c(~0U, copy, sizeof(copy));
}

void sb_load(const struct ssd *s, struct sb_pair *sb)
{
	unsigned int i;
	__u64 sectors;
	int r;

	sb->cur = -1;
	for (i = 0; i < FLAZ_SB_COPIES; i++) {
		struct sb_copy *c = &sb->copy[i];
		const struct flaz_sb *h = (const void *)c->blk;

		memset(c, 0, sizeof(*c));
		r = ssd_read(s, sb_offset(i), c->blk, FLAZ_BLOCK_SIZE);
		if (r) {
			c->state = SB_UNREADABLE;
			c->err = r;
			continue;
		}
		/*
		 * Before decoding: deriving the geometry of a huge SSD takes long, and
		 * an SSD larger than the device puts the areas past its end.
		 */
		sectors = le64toh(h->ssd_sectors);
		if (sb_sound(c->blk) && sectors > s->bytes >> FLAZ_SECTOR_SHIFT) {
			c->state = SB_IMPOSSIBLE;
			c->field = "ssd_sectors";
			c->value = sectors;
			continue;
		}
		r = flaz_sb_decode(c->blk, &c->info);
		if (r == -ENODATA) {
			c->state = SB_BLANK;
		} else if (r && flaz_sb_other_version(c->blk)) {
			c->state = SB_OTHER_VERSION;
			c->version = le32toh(h->version);
		} else if (r) {
			c->state = le32toh(h->magic) == FLAZ_SB_MAGIC ? SB_CORRUPT : SB_FOREIGN;
		} else if (c->info.hdd_sectors > MAX_DEVICE_SECTORS) {
			c->state = SB_IMPOSSIBLE;
			c->field = "hdd_sectors";
			c->value = c->info.hdd_sectors;
		} else {
			c->state = SB_VALID;
		}
		if (c->state == SB_VALID &&
		    (sb->cur < 0 || c->info.seq > sb->copy[sb->cur].info.seq))
			sb->cur = i;
	}
}

const char *sb_state_name(enum sb_state st)
{
	switch (st) {
	case SB_VALID:
		return "valid";
	case SB_BLANK:
		return "blank";
	case SB_CORRUPT:
		return "corrupt";
	case SB_OTHER_VERSION:
		return "other format version";
	case SB_FOREIGN:
		return "not a flaz superblock";
	case SB_UNREADABLE:
		return "unreadable";
	case SB_IMPOSSIBLE:
		return "impossible";
	}
	return "?";
}

void sb_impossible(const struct ssd *s, const struct sb_copy *c, char *buf, size_t len)
{
	if (!strcmp(c->field, "hdd_sectors"))
		snprintf(buf, len, "superblock field hdd_sectors=%llu impossible: no block device holds more than 2^63 bytes",
			 c->value);
	else
		snprintf(buf, len, "superblock field %s=%llu impossible for a device of %llu bytes",
			 c->field, c->value, s->bytes);
}

int sb_other_version(const struct sb_pair *sb)
{
	unsigned int i;

	if (sb->cur >= 0)
		return -1;
	for (i = 0; i < FLAZ_SB_COPIES; i++)
		if (sb->copy[i].state == SB_OTHER_VERSION)
			return i;
	return -1;
}

__u32 sb_marked_count(const void *blk, __u32 nr_regions)
{
	__u32 r, n = 0;

	for (r = 0; r < nr_regions && r < FLAZ_MAX_REGIONS; r++)
		n += sb_marked(blk, r);
	return n;
}

__u32 sb_marked_past(const void *blk, __u32 nr_regions)
{
	__u32 r, n = 0;

	for (r = nr_regions; r < FLAZ_MAX_REGIONS; r++)
		n += sb_marked(blk, r);
	return n;
}

/*
 * The state of a table or gen block @blk (their headers are alike) whose decode
 * against this format's gen and its own index returned @r; @sound_elsewhere tells
 * whether it decodes at another index (then it is sound but misplaced).
 */
static enum tb_state classify(const void *blk, int r, const struct flaz_sb_info *info,
			      __u32 magic, bool sound_elsewhere)
{
	const struct flaz_meta_hdr *h = blk;

	if (!r)
		return TB_VALID;
	if (r == -EILSEQ)
		return sound_elsewhere ? TB_BAD_INDEX : TB_BAD_CRC;
	/* -ENODATA: no magic, or (checksum right) another format's gen */
	if (le32toh(h->magic) == magic)
		return TB_VOID;
	if (all_zero(blk, FLAZ_BLOCK_SIZE))
		return TB_UNWRITTEN;
	/*
	 * The kernel takes a block without the magic as never written: after a
	 * format the metadata area keeps whatever it held until a commit writes each
	 * block. One that carries this format's gen (random, 64 bits) is a block of
	 * this format with a damaged magic, though.
	 */
	return le64toh(h->gen) == info->gen ? TB_BAD_MAGIC : TB_FOREIGN;
}

void tblock_read(const struct ssd *s, const struct flaz_sb_info *info, __u32 i,
		 struct tblock *t)
{
	const struct flaz_meta_hdr *h = (const void *)t->blk;
	bool elsewhere = false;
	__u64 commit;
	int r;

	t->state = TB_VALID;
	t->err = 0;
	r = ssd_read(s, table_offset(&info->geo, i), t->blk, FLAZ_BLOCK_SIZE);
	if (r) {
		t->state = TB_UNREADABLE;
		t->err = r;
		return;
	}
	t->gen = le64toh(h->gen);
	t->index = le32toh(h->index);
	r = flaz_meta_decode(t->blk, info->gen, i, &t->commit, t->entries);
	/* sound with its own index: written in the wrong place; else damaged */
	if (r == -EILSEQ)
		elsewhere = !flaz_meta_decode(t->blk, info->gen, t->index, &commit, t->entries);
	t->state = classify(t->blk, r, info, FLAZ_META_MAGIC, elsewhere);
}

int gens_load(const struct ssd *s, const struct flaz_sb_info *info, struct ext_gens *eg)
{
	const struct flaz_geometry *g = &info->geo;
	const struct flaz_gen_hdr *h;
	unsigned char *blk;
	__u16 *gens;
	__u64 i, k, first, commit;
	bool elsewhere;
	int r;

	memset(eg, 0, sizeof(*eg));
	eg->nr_blocks = flaz_gen_blocks(g);
	eg->nr_extents = g->nr_extents;
	eg->gen = calloc(g->nr_extents ? g->nr_extents : 1, sizeof(*eg->gen));
	eg->state = calloc(eg->nr_blocks + 1, sizeof(*eg->state));
	eg->err = calloc(eg->nr_blocks + 1, sizeof(*eg->err));
	eg->index = calloc(eg->nr_blocks + 1, sizeof(*eg->index));
	blk = malloc(FLAZ_BLOCK_SIZE);
	gens = malloc(FLAZ_GEN_ENTRIES * sizeof(*gens));
	if (!eg->gen || !eg->state || !eg->err || !eg->index || !blk || !gens) {
		free(blk);
		free(gens);
		gens_free(eg);
		return -ENOMEM;
	}
	h = (const void *)blk;
	for (i = 0; i < eg->nr_blocks; i++) {
		r = ssd_read(s, gen_offset(g, i), blk, FLAZ_BLOCK_SIZE);
		if (r) {
			eg->state[i] = TB_UNREADABLE;
			eg->err[i] = r;
			eg->count[TB_UNREADABLE]++;
			continue;
		}
		eg->index[i] = le32toh(h->index);
		r = flaz_gen_decode(blk, info->gen, i, &commit, gens);
		elsewhere = false;
		if (r == -EILSEQ)
			elsewhere = !flaz_gen_decode(blk, info->gen, eg->index[i], &commit, gens);
		eg->state[i] = classify(blk, r, info, FLAZ_GEN_MAGIC, elsewhere);
		eg->count[eg->state[i]]++;
		if (eg->state[i] != TB_VALID)
			continue;	/* nothing or unknown: gens stay 0 */
		first = i * FLAZ_GEN_ENTRIES;
		for (k = 0; k < FLAZ_GEN_ENTRIES && first + k < g->nr_extents; k++)
			eg->gen[first + k] = gens[k];
	}
	free(blk);
	free(gens);
	return 0;
}

void gens_free(struct ext_gens *eg)
{
	free(eg->gen);
	free(eg->state);
	free(eg->err);
	free(eg->index);
	eg->gen = NULL;
	eg->state = NULL;
	eg->err = NULL;
	eg->index = NULL;
}

__u64 gens_bad(const struct ext_gens *eg)
{
	return eg->count[TB_BAD_MAGIC] + eg->count[TB_BAD_CRC] + eg->count[TB_BAD_INDEX] +
	       eg->count[TB_UNREADABLE];
}

const char *tb_state_name(enum tb_state st)
{
	switch (st) {
	case TB_VALID:
		return "valid";
	case TB_UNWRITTEN:
		return "unwritten";
	case TB_VOID:
		return "void";
	case TB_FOREIGN:
		return "not a table block";
	case TB_BAD_MAGIC:
		return "bad magic";
	case TB_BAD_CRC:
		return "bad checksum";
	case TB_BAD_INDEX:
		return "wrong index";
	case TB_UNREADABLE:
		return "unreadable";
	}
	return "?";
}

bool entry_block(const struct flaz_entry_info *e, const struct flaz_sb_info *info,
		 __u64 line, __u64 *block)
{
	__u64 nr_lines = info->geo.nr_lines, hdd_blocks = sb_hdd_blocks(info);

	if (!e->units)
		return false;
	if (e->units != FLAZ_ENTRY_ZERO_UNITS && hdd_blocks &&
	    (hdd_blocks - 1) / nr_lines >= 1ULL << FLAZ_TAG_BITS)
		return false;
	if (e->tag > (~0ULL - line) / nr_lines)
		return false;
	*block = e->tag * nr_lines + line;
	return true;
}

void format_regions(const void *blk, __u32 nr_regions, char *buf, size_t len)
{
	__u32 r = 0, start, ranges = 0;
	size_t used = 0;
	int n;

	buf[0] = '\0';
	while (r < nr_regions && r < FLAZ_MAX_REGIONS) {
		if (!sb_marked(blk, r)) {
			r++;
			continue;
		}
		start = r;
		while (r + 1 < nr_regions && r + 1 < FLAZ_MAX_REGIONS && sb_marked(blk, r + 1))
			r++;
		if (ranges++ == 8) {
			n = snprintf(buf + used, len - used, ", ...");
			break;
		}
		if (start == r)
			n = snprintf(buf + used, len - used, "%s%u", used ? ", " : "", start);
		else
			n = snprintf(buf + used, len - used, "%s%u-%u", used ? ", " : "", start, r);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += n;
		r++;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl: reading a flaz SSD's metadata for `check` and `dump`. Only pread and
 * pwrite on the device or image; every checksum and field check is format.c's.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

void sb_load(const struct ssd *s, struct sb_pair *sb)
{
	unsigned int i;
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
		r = flaz_sb_decode(c->blk, &c->info);
		if (r == -ENODATA)
			c->state = SB_BLANK;
		else if (r)
			c->state = le32toh(h->magic) == FLAZ_SB_MAGIC ? SB_CORRUPT : SB_FOREIGN;
		else
			c->state = SB_VALID;
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
	case SB_FOREIGN:
		return "not a flaz superblock";
	case SB_UNREADABLE:
		return "unreadable";
	}
	return "?";
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

void tblock_read(const struct ssd *s, const struct flaz_sb_info *info, __u32 i,
		 struct tblock *t)
{
	const struct flaz_meta_hdr *h = (const void *)t->blk;
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
	if (!r)
		return;
	if (r == -EILSEQ) {
		/* sound with its own index: written in the wrong place; else damaged */
		t->state = flaz_meta_decode(t->blk, info->gen, t->index, &commit,
					    t->entries) ? TB_BAD_CRC : TB_BAD_INDEX;
		return;
	}
	/* -ENODATA: no table magic, or (checksum right) another format's gen */
	if (le32toh(h->magic) == FLAZ_META_MAGIC) {
		t->state = TB_VOID;
		return;
	}
	if (all_zero(t->blk, FLAZ_BLOCK_SIZE)) {
		t->state = TB_UNWRITTEN;
		return;
	}
	/*
	 * The kernel takes a block without the magic as never written: after a
	 * format the table area keeps whatever it held until a commit writes each
	 * block. One that carries this format's gen (random, 64 bits) is a table
	 * block of this format with a damaged magic, though.
	 */
	t->state = t->gen == info->gen ? TB_BAD_MAGIC : TB_FOREIGN;
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

// SPDX-License-Identifier: GPL-2.0
/*
 * blkcmp: compare two block devices 4 KiB block by 4 KiB block, both read with O_DIRECT (no
 * page cache answers), over the smaller of the two sizes or the first --blocks N blocks.
 * Prints one line: "blocks=N differ=D first=B" (first=-1 when none differ), plus up to
 * --show K lines "differ B" naming differing blocks.
 * With --partial R: instead, R reads of 512 to 6,656 bytes at random 512-byte offsets
 * (seeded by --seed S), each read from both at once and compared; prints "reads=R
 * partial=P differ=D first=OFF", P the blocks the reads covered only in part.
 * With --at BYTE --len N: one read of N bytes (a multiple of 512) at BYTE from both,
 * anywhere on the devices (the end of one whose size is not a multiple of 4 KiB too).
 * Exit 0 when every block is equal, 1 when some differ, 2 on a usage or I/O error.
 * usage: blkcmp A B [--blocks N] [--show K] [--partial R [--seed S]] [--at BYTE --len N]
 */
#define _GNU_SOURCE
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

#define BLK 4096
#define CHUNK (1024 * 1024)

static uint64_t size_of(int fd, const char *path)
{
	struct stat st;
	uint64_t sz;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_size;
	if (ioctl(fd, BLKGETSIZE64, &sz)) {
		fprintf(stderr, "blkcmp: cannot get the size of %s\n", path);
		exit(2);
	}
	return sz;
}

static void read_chunk(int fd, const char *path, char *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = pread(fd, buf + done, len - done, off + done);
		if (r <= 0) {
			fprintf(stderr, "blkcmp: read of %s at byte %" PRIu64 " failed: %s\n", path,
				off + done, r < 0 ? strerror(errno) : "end of device");
			exit(2);
		}
		done += r;
	}
}

/* xorshift64: the same reads for the same seed */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Blocks of [off, off + len) covered only in part. */
static uint64_t partial_blocks(uint64_t off, uint64_t len)
{
	uint64_t end = off + len, first = off / BLK, last = (end - 1) / BLK;

	if (first == last)
		return len < BLK;
	return (off % BLK != 0) + (end % BLK != 0);
}

/* --partial: @reads random reads within @n blocks, compared; returns the exit status. */
static int cmp_partial(int fa, int fb, const char *pa, const char *pb, uint64_t n,
		       uint64_t reads, uint64_t seed, uint64_t show, char *ba, char *bb)
{
	uint64_t s = seed ? seed : 1, parts = 0, differ = 0, shown = 0;
	int64_t first = -1;

	for (uint64_t i = 0; i < reads; i++) {
		uint64_t len = 512 * (1 + next_rand(&s) % 13);
		uint64_t off = 512 * (next_rand(&s) % ((n * BLK - len) / 512 + 1));

		read_chunk(fa, pa, ba, len, off);
		read_chunk(fb, pb, bb, len, off);
		parts += partial_blocks(off, len);
		if (!memcmp(ba, bb, len))
			continue;
		differ++;
		if (first < 0)
			first = off;
		if (shown++ < show)
			printf("differ %" PRIu64 "+%" PRIu64 "\n", off, len);
	}
	printf("reads=%" PRIu64 " partial=%" PRIu64 " differ=%" PRIu64 " first=%" PRId64 "\n",
	       reads, parts, differ, first);
	return differ ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t blocks = UINT64_MAX, show = 0, n, b, off, differ = 0, shown = 0;
	uint64_t partial = 0, seed = 1, at = 0, at_len = 0;
	int64_t first = -1;
	const char *pa, *pb;
	char *ba, *bb;
	int fa, fb;

	if (argc < 3)
		goto usage;
	pa = argv[1];
	pb = argv[2];
	for (int i = 3; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--blocks"))
			blocks = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--show"))
			show = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--partial"))
			partial = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
			seed = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--at"))
			at = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--len"))
			at_len = strtoull(argv[++i], NULL, 0);
		else
			goto usage;
	}
	fa = open(pa, O_RDONLY | O_DIRECT);
	fb = open(pb, O_RDONLY | O_DIRECT);
	if (fa < 0 || fb < 0) {
		fprintf(stderr, "blkcmp: cannot open %s\n", fa < 0 ? pa : pb);
		return 2;
	}
	n = size_of(fa, pa);
	if (size_of(fb, pb) < n)
		n = size_of(fb, pb);
	n /= BLK;
	if (blocks < n)
		n = blocks;
	if (posix_memalign((void **)&ba, BLK, CHUNK) || posix_memalign((void **)&bb, BLK, CHUNK))
		return 2;
	if (at_len) {
		if (at_len > CHUNK || at_len % 512 || at % 512)
			goto usage;
		read_chunk(fa, pa, ba, at_len, at);
		read_chunk(fb, pb, bb, at_len, at);
		differ = memcmp(ba, bb, at_len) != 0;
		printf("at=%" PRIu64 " len=%" PRIu64 " differ=%" PRIu64 "\n", at, at_len, differ);
		return differ;
	}
	if (partial && n < 2) {
		fprintf(stderr, "blkcmp: --partial needs 2 blocks or more\n");
		return 2;
	}
	if (partial)
		return cmp_partial(fa, fb, pa, pb, n, partial, seed, show, ba, bb);
	for (off = 0; off < n * BLK; off += CHUNK) {
		size_t len = n * BLK - off < CHUNK ? n * BLK - off : CHUNK;

		read_chunk(fa, pa, ba, len, off);
		read_chunk(fb, pb, bb, len, off);
		for (size_t o = 0; o < len; o += BLK) {
			if (!memcmp(ba + o, bb + o, BLK))
				continue;
			b = (off + o) / BLK;
			differ++;
			if (first < 0)
				first = b;
			if (shown < show) {
				printf("differ %" PRIu64 "\n", b);
				shown++;
			}
		}
	}
	printf("blocks=%" PRIu64 " differ=%" PRIu64 " first=%" PRId64 "\n", n, differ, first);
	return differ ? 1 : 0;
usage:
	fprintf(stderr, "usage: blkcmp A B [--blocks N] [--show K] [--partial R [--seed S]] [--at BYTE --len N]\n");
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz copy: a 4 KiB block, or a part of one, between a bio's data and a
 * buffer, for the hits (hit.c) and the fills (fill.c), whatever the bio's
 * segments.
 */
#include <kunit/visibility.h>
#include <linux/bio.h>
#include <linux/highmem.h>

#include "flaz.h"
#include "format.h"

/* Copy @len bytes at @off bytes into the bio's data at @iter to or from @buf. */
void flaz_copy_bytes(struct bio *bio, struct bvec_iter iter, u32 off, void *buf,
		     u32 len, bool to_bio)
{
	struct bvec_iter it;
	struct bio_vec bv;
	u32 done = 0;

	bio_advance_iter(bio, &iter, off);
	iter.bi_size = len;
	__bio_for_each_segment(bv, bio, it, iter) {
		if (to_bio)
			memcpy_to_bvec(&bv, buf + done);
		else
			memcpy_from_bvec(buf + done, &bv);
		done += bv.bv_len;
	}
}
EXPORT_SYMBOL_IF_KUNIT(flaz_copy_bytes);

void flaz_copy_block(struct bio *bio, struct bvec_iter iter, u32 off, void *buf,
		     bool to_bio)
{
	flaz_copy_bytes(bio, iter, off, buf, FLAZ_BLOCK_SIZE, to_bio);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_copy_block);

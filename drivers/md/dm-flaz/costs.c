// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz codec costs: reading debugfs dm-flaz/codec_costs measures, there and
 * then, the CPU work per block besides I/O, for each codec: a hit's checks
 * (header and crc32c of the payload) and decompression, and a fill's slot
 * built as an install builds it (fill.c flaz_fill_slot()), on blocks as
 * compressible as the benches' data (every 512 bytes half random, half zeros:
 * 2:1). And on random blocks, what a fill pays with the compressor bypass
 * (bypass.c: the region's history, the entropy sample when it must, then the
 * block stored raw) against running the codec to find out it does not pay,
 * whole and the decision alone (bypass, sample alone, codec alone), each round
 * the 1 MiB run of a region not seen before. `make bench` sets these against
 * whole hits.
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "flaz.h"
#include "format.h"
#include "opts.h"

#define COST_BLOCKS	256
#define COST_ROUNDS	32
/* HDD blocks between the rounds' first blocks: each round fills a region of its own */
#define COST_REGION	(1U << 20)

static struct dentry *costs_dir;

static void *place_here(void *ctx, unsigned int len)
{
	return ctx + sizeof(struct flaz_slot_hdr);
}

/*
 * Build @src's COST_BLOCKS slots at FLAZ_MAX_SLOT_BYTES strides as an install
 * does at the default compress_min_saving, with the bypass @bp (NULL: none),
 * and return the nanoseconds per block of COST_ROUNDS rounds. Each round fills
 * the blocks of a region of the HDD not seen before. @bytes gets the slots'
 * sizes, @raw how many of a round the bypass stored raw.
 */
static u64 build_ns(struct flaz_compressor *comp, struct flaz_bypass *bp,
		    enum flaz_codec codec, const u8 *src, u8 *slots, u32 *bytes, u32 *raw)
{
	struct flaz_slot_info info = { .codec = codec };
	u32 max = flaz_max_payload(FLAZ_DEF_COMPRESS_MIN_SAVING);
	atomic64_t seq = ATOMIC64_INIT(0);
	u64 t0 = ktime_get_ns();
	u32 r, i;
	int ret;

	*raw = 0;
	for (r = 0; r < COST_ROUNDS; r++) {
		for (i = 0; i < COST_BLOCKS; i++) {
			info.block = (u64)(r + 1) * COST_REGION + i;
			ret = flaz_fill_slot(comp, bp, src + i * FLAZ_BLOCK_SIZE, max, place_here,
					     slots + i * FLAZ_MAX_SLOT_BYTES, &seq, &info);
			if (ret < 0)
				return 0;
			*raw += ret;
			bytes[i] = info.bytes;
		}
		cond_resched();
	}
	*raw /= COST_ROUNDS;
	return div_u64(ktime_get_ns() - t0, COST_ROUNDS * COST_BLOCKS);
}

enum decider { DECIDE_CODEC, DECIDE_SAMPLE, DECIDE_BYPASS };

/*
 * Nanoseconds per block of @src for a decision alone: the codec's attempt, the
 * entropy sample's, or the bypass's as a fill makes it (@bp: the region's
 * history, the sample when it must), each round in a region not seen before.
 */
static u64 decide_ns(enum decider how, struct flaz_compressor *comp, struct flaz_bypass *bp,
		     const u8 *src, u8 *slots)
{
	u32 max = flaz_max_payload(FLAZ_DEF_COMPRESS_MIN_SAVING);
	u64 t0 = ktime_get_ns();
	u32 r, i;

	for (r = 0; r < COST_ROUNDS; r++) {
		for (i = 0; i < COST_BLOCKS; i++) {
			const u8 *blk = src + i * FLAZ_BLOCK_SIZE;

			if (how == DECIDE_CODEC)
				flaz_compress(comp, blk, max, place_here, slots);
			else if (how == DECIDE_SAMPLE)
				flaz_bypass_predict_raw(blk, max);
			else
				flaz_bypass_skip(bp, (u64)(r + 1) * COST_REGION + i, blk, max);
		}
		cond_resched();
	}
	return div_u64(ktime_get_ns() - t0, COST_ROUNDS * COST_BLOCKS);
}

/* Nanoseconds per block to check and decode every slot, COST_ROUNDS times over. */
static u64 decode_ns(struct flaz_compressor *comp, const u8 *slots, const u32 *bytes, u8 *out)
{
	struct flaz_slot_info info;
	u64 t0 = ktime_get_ns();
	u32 r, i;

	for (r = 0; r < COST_ROUNDS; r++) {
		for (i = 0; i < COST_BLOCKS; i++) {
			const u8 *slot = slots + i * FLAZ_MAX_SLOT_BYTES;
			const u8 *payload = slot + sizeof(struct flaz_slot_hdr);

			if (flaz_slot_decode(slot, bytes[i], &info))
				return 0;
			if (info.flags & FLAZ_SLOT_RAW)
				memcpy(out, payload, FLAZ_BLOCK_SIZE);
			else if (flaz_decompress(comp, payload, info.len, out))
				return 0;
		}
		cond_resched();
	}
	return div_u64(ktime_get_ns() - t0, COST_ROUNDS * COST_BLOCKS);
}

/* A fresh bypass, its history empty, for each measurement that uses one. */
static u64 with_bypass(struct flaz_compressor *comp, enum flaz_codec codec, const u8 *src,
		       u8 *slots, u32 *bytes, u32 *raw, bool decide_only)
{
	struct flaz_bypass *bp = flaz_bypass_create();
	u64 ns;

	if (!bp)
		return 0;
	if (decide_only)
		ns = decide_ns(DECIDE_BYPASS, NULL, bp, src, slots);
	else
		ns = build_ns(comp, bp, codec, src, slots, bytes, raw);
	flaz_bypass_destroy(bp);
	return ns;
}

static int costs_show(struct seq_file *m, void *v)
{
	u8 *src = vmalloc(COST_BLOCKS * FLAZ_BLOCK_SIZE);
	u8 *rnd = vmalloc(COST_BLOCKS * FLAZ_BLOCK_SIZE);
	u8 *slots = vmalloc(COST_BLOCKS * FLAZ_MAX_SLOT_BYTES);
	u32 *bytes = vmalloc(COST_BLOCKS * sizeof(u32));
	u8 *out = vmalloc(FLAZ_BLOCK_SIZE);
	u64 phys, ns, fill, tried, bypass, codec, predict, decide;
	u32 i, raw, rnd_raw;
	enum flaz_codec t;
	int r = -ENOMEM;

	if (!src || !rnd || !slots || !bytes || !out)
		goto out;
	for (i = 0; i < COST_BLOCKS * FLAZ_BLOCK_SIZE; i += 512) {
		get_random_bytes(src + i, 256);
		memset(src + i + 256, 0, 256);
	}
	get_random_bytes(rnd, COST_BLOCKS * FLAZ_BLOCK_SIZE);
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *comp = flaz_compressor_create(t);

		if (IS_ERR(comp)) {
			r = PTR_ERR(comp);
			goto out;
		}
		tried = build_ns(comp, NULL, t, rnd, slots, bytes, &rnd_raw);
		bypass = with_bypass(comp, t, rnd, slots, bytes, &rnd_raw, false);
		codec = decide_ns(DECIDE_CODEC, comp, NULL, rnd, slots);
		predict = decide_ns(DECIDE_SAMPLE, NULL, NULL, rnd, slots);
		decide = with_bypass(comp, t, rnd, slots, bytes, &raw, true);
		fill = with_bypass(comp, t, src, slots, bytes, &raw, false);
		ns = decode_ns(comp, slots, bytes, out);
		flaz_compressor_destroy(comp);
		for (phys = 0, i = 0; i < COST_BLOCKS; i++)
			phys += bytes[i];
		seq_printf(m, "%s check_decompress_ns=%llu slot_bytes=%llu fill_ns=%llu predicted_raw=%u random_fill_ns=%llu random_bypass_ns=%llu random_codec_ns=%llu random_predict_ns=%llu random_decide_ns=%llu random_predicted_raw=%u blocks=%u\n",
			   flaz_codec_name(t), ns, div_u64(phys, COST_BLOCKS), fill, raw, tried,
			   bypass, codec, predict, decide, rnd_raw, COST_BLOCKS);
	}
	r = 0;
out:
	vfree(out);
	vfree(bytes);
	vfree(slots);
	vfree(rnd);
	vfree(src);
	return r;
}
DEFINE_SHOW_ATTRIBUTE(costs);

void flaz_costs_init(void)
{
	costs_dir = debugfs_create_dir("dm-flaz", NULL);
	debugfs_create_file("codec_costs", 0400, costs_dir, NULL, &costs_fops);
}

void flaz_costs_exit(void)
{
	debugfs_remove_recursive(costs_dir);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz compressor bypass (SlimCache's compressibility recognition): a block
 * predicted not to save compress_min_saving is stored raw without running the
 * codec. Two predictors, the cheaper first:
 *
 * - The HDD region's history. Incompressible data comes in files (media,
 *   archives, ciphertext), so once FLAZ_BYPASS_SURE blocks in a row filled from
 *   the same 1 MiB of the HDD went raw, the region's next blocks go raw without
 *   a look at their bytes. One in FLAZ_BYPASS_PROBE of them is still sampled,
 *   so a region rewritten with compressible data is found again; until then it
 *   costs at most FLAZ_BYPASS_PROBE - 1 blocks stored raw that would have
 *   compressed.
 * - The byte entropy of a sample of the block, for a region without that
 *   history.
 *
 * The history is a byte per hash bucket of regions: regions that share a bucket
 * share a history, and a lost update between CPUs only delays a decision.
 */
#include <kunit/visibility.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/slab.h>

#include "flaz.h"
#include "format.h"

#define BYPASS_REGION_SHIFT	8	/* 256 blocks: 1 MiB of the HDD */
#define BYPASS_BITS		12

/* A bucket: bits 0-3 raw outcomes in a row (up to sure), 4-7 blocks since a probe. */
#define STREAK_MASK		0x0fU
#define SKIP_SHIFT		4

struct flaz_bypass {
	u8 state[1U << BYPASS_BITS];
};

struct flaz_bypass *flaz_bypass_create(void)
{
	return kzalloc(sizeof(struct flaz_bypass), GFP_KERNEL);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_bypass_create);

void flaz_bypass_destroy(struct flaz_bypass *b)
{
	kfree(b);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_bypass_destroy);

u64 flaz_bypass_bytes(void)
{
	return sizeof(struct flaz_bypass);
}

/*
 * The sample: PREDICT_SAMPLES bytes spread over the block; its entropy in bits
 * per byte, fixed point (PREDICT_ONE = 1 bit).
 */
#define PREDICT_STRIDE		8
#define PREDICT_SAMPLES		(FLAZ_BLOCK_SIZE / PREDICT_STRIDE)
#define PREDICT_SHIFT		8
#define PREDICT_ONE		BIT(PREDICT_SHIFT)

/* log2(@n) for 1 <= @n <= PREDICT_SAMPLES, fixed point: exact at powers of two, linear between. */
static u32 log2_fixed(u32 n)
{
	u32 k = ilog2(n);

	return (k << PREDICT_SHIFT) + (((n - (1U << k)) << PREDICT_SHIFT) >> k);
}

/* n log2(n) for every count n a byte value can reach: no log per value in the estimate. */
static u32 nlogn[PREDICT_SAMPLES + 1] __ro_after_init;

void __init flaz_bypass_module_init(void)
{
	u32 n;

	for (n = 2; n <= PREDICT_SAMPLES; n++)
		nlogn[n] = n * log2_fixed(n);
}

/*
 * Whether the sample of @data predicts that it will not compress to @max_len
 * bytes: an entropy coder needs H bits per byte, and the sample's H over 8 is
 * taken as the best ratio any codec here reaches. Costs a pass over an eighth
 * of the block; repeats of a random pattern fool it (stored raw).
 */
bool flaz_bypass_predict_raw(const void *data, unsigned int max_len)
{
	const u8 *p = data;
	u16 hist[256] = {};
	u64 sum = 0, h;
	u32 i;

	for (i = 0; i < PREDICT_SAMPLES; i++)
		hist[p[i * PREDICT_STRIDE]]++;
	for (i = 0; i < 256; i++)
		sum += nlogn[hist[i]];
	/* H = log2(N) - sum(c log2 c) / N */
	h = (u64)log2_fixed(PREDICT_SAMPLES) - div_u64(sum, PREDICT_SAMPLES);
	/* bytes an ideal coder needs: H / 8 of the block */
	return div_u64(h * FLAZ_BLOCK_SIZE, 8 * PREDICT_ONE) > max_len;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_bypass_predict_raw);

static u8 *bucket(struct flaz_bypass *b, u64 block)
{
	return &b->state[hash_64(block >> BYPASS_REGION_SHIFT, BYPASS_BITS)];
}

/*
 * Whether to store HDD block @block (@data) raw without running the codec, for
 * a payload bound of @max bytes. A sampled block predicted raw counts as a raw
 * outcome; a block the codec is run on is learnt by flaz_bypass_learn().
 */
bool flaz_bypass_skip(struct flaz_bypass *b, u64 block, const void *data, u32 max)
{
	u8 *p = bucket(b, block);
	u8 s = READ_ONCE(*p);
	u8 streak = s & STREAK_MASK;
	u8 skips = s >> SKIP_SHIFT;

	if (streak >= FLAZ_BYPASS_SURE) {
		if (++skips < FLAZ_BYPASS_PROBE) {
			WRITE_ONCE(*p, skips << SKIP_SHIFT | streak);
			return true;
		}
		/* the probe: sampled, and the count starts again */
		WRITE_ONCE(*p, streak);
	}
	if (!flaz_bypass_predict_raw(data, max))
		return false;
	if (streak < FLAZ_BYPASS_SURE)
		WRITE_ONCE(*p, streak + 1);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_bypass_skip);

/* The codec ran on HDD block @block: it went @raw (did not save enough) or compressed. */
void flaz_bypass_learn(struct flaz_bypass *b, u64 block, bool raw)
{
	u8 *p = bucket(b, block);
	u8 s = READ_ONCE(*p);

	if (!raw)
		WRITE_ONCE(*p, 0);
	else if ((s & STREAK_MASK) < FLAZ_BYPASS_SURE)
		WRITE_ONCE(*p, s + 1);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_bypass_learn);

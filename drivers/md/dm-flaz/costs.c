// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz codec costs: reading debugfs dm-flaz/codec_costs measures, there and
 * then, the CPU work a hit does per block besides I/O: the slot's checks
 * (header and crc32c of the payload) and its decompression, for each codec,
 * on blocks as compressible as the benches' data (every 512 bytes half random,
 * half zeros: 2:1). `make bench` sets this against what a whole hit costs.
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "flaz.h"
#include "format.h"

#define COST_BLOCKS	256
#define COST_ROUNDS	32

static struct dentry *costs_dir;

static void *place_here(void *ctx, unsigned int len)
{
	return ctx + sizeof(struct flaz_slot_hdr);
}

/* Fill @nr slots at FLAZ_MAX_SLOT_BYTES strides from @src as an install would. */
static void make_slots(struct flaz_compressor *comp, enum flaz_codec codec, const u8 *src,
		       u8 *slots, u32 *bytes)
{
	struct flaz_slot_info info = { .codec = codec };
	u32 i;
	int len;

	for (i = 0; i < COST_BLOCKS; i++) {
		u8 *slot = slots + i * FLAZ_MAX_SLOT_BYTES;
		const u8 *blk = src + i * FLAZ_BLOCK_SIZE;

		len = flaz_compress(comp, blk, FLAZ_BLOCK_SIZE - 1, place_here, slot);
		if (len <= 0) {
			memcpy(slot + sizeof(struct flaz_slot_hdr), blk, FLAZ_BLOCK_SIZE);
			len = FLAZ_BLOCK_SIZE;
		}
		info.block = i;
		info.seq = i + 1;
		info.len = len;
		info.flags = len == FLAZ_BLOCK_SIZE ? FLAZ_SLOT_RAW : 0;
		flaz_slot_encode(slot, &info);
		bytes[i] = info.bytes;
	}
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

static int costs_show(struct seq_file *m, void *v)
{
	u8 *src = vmalloc(COST_BLOCKS * FLAZ_BLOCK_SIZE);
	u8 *slots = vmalloc(COST_BLOCKS * FLAZ_MAX_SLOT_BYTES);
	u32 *bytes = vmalloc(COST_BLOCKS * sizeof(u32));
	u8 *out = vmalloc(FLAZ_BLOCK_SIZE);
	enum flaz_codec t;
	u64 phys, ns;
	u32 i;
	int r = -ENOMEM;

	if (!src || !slots || !bytes || !out)
		goto out;
	for (i = 0; i < COST_BLOCKS * FLAZ_BLOCK_SIZE; i += 512) {
		get_random_bytes(src + i, 256);
		memset(src + i + 256, 0, 256);
	}
	for (t = 0; t < FLAZ_NR_CODECS; t++) {
		struct flaz_compressor *comp = flaz_compressor_create(t);

		if (IS_ERR(comp)) {
			r = PTR_ERR(comp);
			goto out;
		}
		make_slots(comp, t, src, slots, bytes);
		ns = decode_ns(comp, slots, bytes, out);
		flaz_compressor_destroy(comp);
		for (phys = 0, i = 0; i < COST_BLOCKS; i++)
			phys += bytes[i];
		seq_printf(m, "%s check_decompress_ns=%llu slot_bytes=%llu\n", flaz_codec_name(t),
			   ns, div_u64(phys, COST_BLOCKS));
	}
	r = 0;
out:
	vfree(out);
	vfree(bytes);
	vfree(slots);
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

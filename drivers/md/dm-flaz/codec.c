// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flaz codecs: lzo, lz4, zstd and deflate through the kernel's compression
 * libraries (not crypto_comp, so 6.1 and 6.12 behave alike), streams per CPU
 * as zram does: workspaces are allocated when a CPU comes up and freed when it
 * goes, and a stream's mutex lets compression sleep. Each CPU has a stream to
 * compress with and another to decompress with, so a hit never waits behind a
 * fill's compression on its CPU. lzo and lz4 decompress with no workspace, so
 * with no stream: in any context, a read's completion too (hit.c).
 */
#include <kunit/visibility.h>
#include <linux/cpuhotplug.h>
#include <linux/lz4.h>
#include <linux/lzo.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/zlib.h>
#include <linux/zstd.h>

#include "compat.h"
#include "flaz.h"
#include "format.h"

#define ZSTD_LEVEL		3	/* zstd's own default */
#define DEFLATE_WBITS		12	/* a 4 KiB window covers the whole block */
#define DEFLATE_MEMLEVEL	8
/* Output scratch: two blocks, more than any codec's worst case for one block. */
#define SCRATCH_SIZE		(2 * FLAZ_BLOCK_SIZE)

struct codec_stream {
	struct mutex lock;	/* the stream's use: ready, scratch, workspace */
	bool ready;		/* false while the CPU is down */
	u8 *scratch;		/* compression output; NULL in a decompression stream */
	void *ws;		/* workspace, where the codec needs one */
	union {
		struct {
			zstd_cctx *cctx;
			zstd_parameters params;	/* computed once, not per block */
		};
		zstd_dctx *dctx;
		struct z_stream_s z;
	};
};

/* alloc_d is NULL for a codec that decompresses without a workspace. */
struct codec_ops {
	int (*alloc_c)(struct codec_stream *s);
	int (*alloc_d)(struct codec_stream *s);
	int (*compress)(struct codec_stream *s, const u8 *src, unsigned int *len);
	int (*decompress)(struct codec_stream *s, const u8 *src, unsigned int len, u8 *dst);
};

struct flaz_compressor {
	const struct codec_ops *ops;
	struct codec_stream __percpu *comp;
	struct codec_stream __percpu *decomp;
	struct hlist_node node;
};

static enum cpuhp_state cpuhp_state;

static int lzo_alloc(struct codec_stream *s)
{
	s->ws = kvmalloc(LZO1X_1_MEM_COMPRESS, GFP_KERNEL);
	return s->ws ? 0 : -ENOMEM;
}

static int lzo_compress(struct codec_stream *s, const u8 *src, unsigned int *len)
{
	size_t out = SCRATCH_SIZE;

	if (lzo1x_1_compress(src, FLAZ_BLOCK_SIZE, s->scratch, &out, s->ws) != LZO_E_OK)
		return -EIO;
	*len = out;
	return 0;
}

static int lzo_decompress(struct codec_stream *s, const u8 *src, unsigned int len, u8 *dst)
{
	size_t out = FLAZ_BLOCK_SIZE;

	if (lzo1x_decompress_safe(src, len, dst, &out) != LZO_E_OK || out != FLAZ_BLOCK_SIZE)
		return -EILSEQ;
	return 0;
}

static int lz4_alloc(struct codec_stream *s)
{
	s->ws = kvmalloc(LZ4_MEM_COMPRESS, GFP_KERNEL);
	return s->ws ? 0 : -ENOMEM;
}

static int lz4_compress(struct codec_stream *s, const u8 *src, unsigned int *len)
{
	int out = LZ4_compress_default(src, s->scratch, FLAZ_BLOCK_SIZE, SCRATCH_SIZE, s->ws);

	if (out <= 0)
		return -EIO;
	*len = out;
	return 0;
}

static int lz4_decompress(struct codec_stream *s, const u8 *src, unsigned int len, u8 *dst)
{
	if (LZ4_decompress_safe(src, dst, len, FLAZ_BLOCK_SIZE) != FLAZ_BLOCK_SIZE)
		return -EILSEQ;
	return 0;
}

static int zstd_alloc_c(struct codec_stream *s)
{
	size_t size;

	s->params = zstd_get_params(ZSTD_LEVEL, FLAZ_BLOCK_SIZE);
	size = flaz_zstd_cctx_bound(ZSTD_LEVEL, FLAZ_BLOCK_SIZE);
	s->ws = kvmalloc(size, GFP_KERNEL);
	if (!s->ws)
		return -ENOMEM;
	s->cctx = zstd_init_cctx(s->ws, size);
	return s->cctx ? 0 : -EINVAL;
}

static int zstd_alloc_d(struct codec_stream *s)
{
	size_t size = zstd_dctx_workspace_bound();

	s->ws = kvmalloc(size, GFP_KERNEL);
	if (!s->ws)
		return -ENOMEM;
	s->dctx = zstd_init_dctx(s->ws, size);
	return s->dctx ? 0 : -EINVAL;
}

static int zstd_compress(struct codec_stream *s, const u8 *src, unsigned int *len)
{
	size_t out = zstd_compress_cctx(s->cctx, s->scratch, SCRATCH_SIZE, src,
					FLAZ_BLOCK_SIZE, &s->params);

	if (zstd_is_error(out))
		return -EIO;
	*len = out;
	return 0;
}

static int zstd_decompress(struct codec_stream *s, const u8 *src, unsigned int len, u8 *dst)
{
	size_t out = zstd_decompress_dctx(s->dctx, dst, FLAZ_BLOCK_SIZE, src, len);

	if (zstd_is_error(out) || out != FLAZ_BLOCK_SIZE)
		return -EILSEQ;
	return 0;
}

/* Raw deflate (negative window bits): no zlib header, the slot header has the checksum. */
static int deflate_alloc_c(struct codec_stream *s)
{
	s->ws = kvmalloc(zlib_deflate_workspacesize(DEFLATE_WBITS, DEFLATE_MEMLEVEL),
			 GFP_KERNEL);
	if (!s->ws)
		return -ENOMEM;
	s->z.workspace = s->ws;
	if (zlib_deflateInit2(&s->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -DEFLATE_WBITS,
			      DEFLATE_MEMLEVEL, Z_DEFAULT_STRATEGY) != Z_OK)
		return -EINVAL;
	return 0;
}

static int deflate_alloc_d(struct codec_stream *s)
{
	s->ws = kvmalloc(zlib_inflate_workspacesize(), GFP_KERNEL);
	if (!s->ws)
		return -ENOMEM;
	s->z.workspace = s->ws;
	return zlib_inflateInit2(&s->z, -DEFLATE_WBITS) == Z_OK ? 0 : -EINVAL;
}

static int deflate_compress(struct codec_stream *s, const u8 *src, unsigned int *len)
{
	struct z_stream_s *z = &s->z;

	if (zlib_deflateReset(z) != Z_OK)
		return -EIO;
	z->next_in = src;
	z->avail_in = FLAZ_BLOCK_SIZE;
	z->next_out = s->scratch;
	z->avail_out = SCRATCH_SIZE;
	if (zlib_deflate(z, Z_FINISH) != Z_STREAM_END)
		return -EIO;
	*len = z->total_out;
	return 0;
}

static int deflate_decompress(struct codec_stream *s, const u8 *src, unsigned int len, u8 *dst)
{
	struct z_stream_s *z = &s->z;

	if (zlib_inflateReset(z) != Z_OK)
		return -EILSEQ;
	z->next_in = src;
	z->avail_in = len;
	z->next_out = dst;
	z->avail_out = FLAZ_BLOCK_SIZE;
	if (zlib_inflate(z, Z_FINISH) != Z_STREAM_END || z->total_out != FLAZ_BLOCK_SIZE)
		return -EILSEQ;
	return 0;
}

static const struct codec_ops codec_ops[FLAZ_NR_CODECS] = {
	[FLAZ_CODEC_LZO] = { lzo_alloc, NULL, lzo_compress, lzo_decompress },
	[FLAZ_CODEC_LZ4] = { lz4_alloc, NULL, lz4_compress, lz4_decompress },
	[FLAZ_CODEC_ZSTD] = { zstd_alloc_c, zstd_alloc_d, zstd_compress, zstd_decompress },
	[FLAZ_CODEC_DEFLATE] = { deflate_alloc_c, deflate_alloc_d, deflate_compress,
				 deflate_decompress },
};

/* Lock held. */
static void stream_free(struct codec_stream *s)
{
	kvfree(s->scratch);
	kvfree(s->ws);
	s->scratch = NULL;
	s->ws = NULL;
	s->ready = false;
}

static int stream_alloc(struct codec_stream *s, int (*alloc)(struct codec_stream *s),
			bool scratch)
{
	int r = 0;

	mutex_lock(&s->lock);
	if (scratch) {
		s->scratch = kvmalloc(SCRATCH_SIZE, GFP_KERNEL);
		if (!s->scratch)
			r = -ENOMEM;
	}
	if (!r && alloc)
		r = alloc(s);
	if (r)
		stream_free(s);
	else
		s->ready = true;
	mutex_unlock(&s->lock);
	return r;
}

/* The CPU went down, or its other stream could not be had. */
static void stream_drop(struct codec_stream *s)
{
	mutex_lock(&s->lock);
	stream_free(s);
	mutex_unlock(&s->lock);
}

static int codec_cpu_up_prepare(unsigned int cpu, struct hlist_node *node)
{
	struct flaz_compressor *c = hlist_entry(node, struct flaz_compressor, node);
	int r;

	r = stream_alloc(per_cpu_ptr(c->comp, cpu), c->ops->alloc_c, true);
	if (r)
		return r;
	r = stream_alloc(per_cpu_ptr(c->decomp, cpu), c->ops->alloc_d, false);
	if (r)
		stream_drop(per_cpu_ptr(c->comp, cpu));
	return r;
}

static int codec_cpu_dead(unsigned int cpu, struct hlist_node *node)
{
	struct flaz_compressor *c = hlist_entry(node, struct flaz_compressor, node);

	stream_drop(per_cpu_ptr(c->comp, cpu));
	stream_drop(per_cpu_ptr(c->decomp, cpu));
	return 0;
}

/* This CPU's stream of @streams, locked; retried if the CPU went down since we looked. */
static struct codec_stream *stream_get(struct codec_stream __percpu *streams)
{
	struct codec_stream *s;

	for (;;) {
		s = raw_cpu_ptr(streams);
		mutex_lock(&s->lock);
		if (likely(s->ready))
			return s;
		mutex_unlock(&s->lock);
	}
}

struct flaz_compressor *flaz_compressor_create(enum flaz_codec type)
{
	struct flaz_compressor *c;
	int cpu, r;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->ops = &codec_ops[type];
	c->comp = alloc_percpu(struct codec_stream);
	c->decomp = alloc_percpu(struct codec_stream);
	if (!c->comp || !c->decomp) {
		r = -ENOMEM;
		goto fail;
	}
	for_each_possible_cpu(cpu) {
		mutex_init(&per_cpu_ptr(c->comp, cpu)->lock);
		mutex_init(&per_cpu_ptr(c->decomp, cpu)->lock);
	}
	/* Runs codec_cpu_up_prepare() for every online CPU, undoing them on failure. */
	r = cpuhp_state_add_instance(cpuhp_state, &c->node);
	if (r)
		goto fail;
	return c;

fail:
	free_percpu(c->comp);
	free_percpu(c->decomp);
	kfree(c);
	return ERR_PTR(r);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_compressor_create);

void flaz_compressor_destroy(struct flaz_compressor *c)
{
	if (IS_ERR_OR_NULL(c))
		return;
	cpuhp_state_remove_instance(cpuhp_state, &c->node);
	free_percpu(c->comp);
	free_percpu(c->decomp);
	kfree(c);
}
EXPORT_SYMBOL_IF_KUNIT(flaz_compressor_destroy);

/*
 * Compress one block. If it comes out at most @max_len bytes, it is copied
 * from the stream straight to where @place(@ctx, length) says (an extent
 * buffer's slot: no bounce buffer). Returns the length, 0 when it does not
 * save enough (the caller stores it raw), or @place's error.
 */
int flaz_compress(struct flaz_compressor *c, const void *src, unsigned int max_len,
		  void *(*place)(void *ctx, unsigned int len), void *ctx)
{
	struct codec_stream *s = stream_get(c->comp);
	unsigned int len = 0;
	void *dst;
	int r;

	if (c->ops->compress(s, src, &len) || len > max_len) {
		r = 0;
	} else {
		dst = place(ctx, len);
		r = IS_ERR(dst) ? PTR_ERR(dst) : len;
		if (!IS_ERR(dst))
			memcpy(dst, s->scratch, len);
	}
	mutex_unlock(&s->lock);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_compress);

/* lzo and lz4 decompress without a workspace: no stream, so no sleeping lock. */
bool flaz_decompress_atomic(struct flaz_compressor *c)
{
	return !c->ops->alloc_d;
}

/* Decompress @len bytes into one whole block; -EILSEQ for anything malformed. */
int flaz_decompress(struct flaz_compressor *c, const void *src, unsigned int len, void *dst)
{
	struct codec_stream *s;
	int r;

	if (!len || len >= FLAZ_BLOCK_SIZE)
		return -EILSEQ;
	if (flaz_decompress_atomic(c))
		return c->ops->decompress(NULL, src, len, dst);
	s = stream_get(c->decomp);
	r = c->ops->decompress(s, src, len, dst);
	mutex_unlock(&s->lock);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(flaz_decompress);

int __init flaz_compressor_module_init(void)
{
	int r;

	r = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "block/dm-flaz:prepare",
				    codec_cpu_up_prepare, codec_cpu_dead);
	if (r < 0)
		return r;
	cpuhp_state = r;
	return 0;
}

void flaz_compressor_module_exit(void)
{
	cpuhp_remove_multi_state(cpuhp_state);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's API for l2p.c, resident.c, table.c and format.c to build in
 * userspace, single-threaded: locks are no-ops, atomics plain arithmetic.
 */
#ifndef FLAZ_MODEL_SHIM_H
#define FLAZ_MODEL_SHIM_H
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int32_t s32;
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef uint64_t __le64;
typedef u64 sector_t;
typedef u8 blk_status_t;
typedef unsigned int gfp_t;
typedef unsigned int blk_opf_t;
typedef struct { int v; } atomic_t;
typedef struct { long long v; } atomic64_t;
typedef struct { int x; } spinlock_t;
struct mutex { int x; };
struct work_struct { int x; };
struct delayed_work { int x; };
struct workqueue_struct;
struct rb_node { void *a, *b, *c; };
struct rb_root_cached { void *a, *b; };
struct bvec_iter { u64 a; };
struct bio_list { void *a, *b; };
struct bio;
struct dm_arg_set;
struct dm_target;
struct block_device;
struct dm_io_client;

#define ____cacheline_aligned_in_smp
#define U32_MAX ((u32)~0U)
#define __acquires(x)
#define __releases(x)
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_mb__before_atomic() smp_mb()
#define smp_mb__after_atomic() smp_mb()
#define GFP_KERNEL 0
#define BITS_PER_LONG 64
#define BITS_TO_LONGS(n) (((n) + 63) / 64)
#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define GENMASK_ULL(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))
#define DIV_ROUND_UP_ULL(a, b) (((a) + (b) - 1) / (b))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define IS_ERR_OR_NULL(p) (!(p) || (unsigned long)(p) >= (unsigned long)-4095)
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-4095)
#define ERR_PTR(e) ((void *)(long)(e))
#define PTR_ERR(p) ((long)(p))
#define WARN_ON_ONCE(c) ({ bool __c = (c); if (__c) { fprintf(stderr, "WARN %s:%d\n", __FILE__, __LINE__); abort(); } __c; })

static inline void *kvzalloc(size_t n, gfp_t g) { (void)g; return calloc(1, n ? n : 1); }
static inline void *kvcalloc(size_t n, size_t s, gfp_t g) { (void)g; return calloc(n ? n : 1, s); }
static inline void kvfree(const void *p) { free((void *)p); }
static inline unsigned int memalloc_noio_save(void) { return 0; }
static inline void memalloc_noio_restore(unsigned int f) { (void)f; }
static inline void cond_resched(void) { }
static inline void spin_lock_init(spinlock_t *l) { (void)l; }
static inline void spin_lock(spinlock_t *l) { (void)l; }
static inline void spin_unlock(spinlock_t *l) { (void)l; }
#define spin_lock_nested(l, s) spin_lock(l)

static inline void set_bit(u64 n, unsigned long *a) { a[n / 64] |= 1UL << (n % 64); }
static inline void clear_bit(u64 n, unsigned long *a) { a[n / 64] &= ~(1UL << (n % 64)); }
static inline void __set_bit(u64 n, unsigned long *a) { set_bit(n, a); }
static inline void __clear_bit(u64 n, unsigned long *a) { clear_bit(n, a); }
static inline bool test_bit(u64 n, const unsigned long *a) { return a[n / 64] >> (n % 64) & 1; }
static inline bool test_and_clear_bit(u64 n, unsigned long *a)
{
	bool b = test_bit(n, a);

	clear_bit(n, a);
	return b;
}
static inline u64 find_next_bit(const unsigned long *a, u64 size, u64 off)
{
	for (; off < size; off++) {
		if (!(off % 64) && !a[off / 64]) {
			off += 63;
			continue;
		}
		if (test_bit(off, a))
			return off;
	}
	return size;
}
static inline u64 find_first_bit(const unsigned long *a, u64 size) { return find_next_bit(a, size, 0); }
static inline u64 find_next_zero_bit(const unsigned long *a, u64 size, u64 off)
{
	for (; off < size; off++)
		if (!test_bit(off, a))
			return off;
	return size;
}
static inline unsigned long *bitmap_zalloc(u64 n, gfp_t g) { return kvcalloc(BITS_TO_LONGS(n), sizeof(long), g); }
static inline void bitmap_free(unsigned long *a) { free(a); }
static inline void bitmap_set(unsigned long *a, u64 s, u64 n) { while (n--) set_bit(s++, a); }
static inline void bitmap_clear(unsigned long *a, u64 s, u64 n) { while (n--) clear_bit(s++, a); }
static inline void bitmap_fill(unsigned long *a, u64 n) { bitmap_set(a, 0, n); }
static inline void bitmap_zero(unsigned long *a, u64 n) { bitmap_clear(a, 0, n); }
static inline int fls64(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }
#define ilog2(n) (63 - __builtin_clzll((u64)(n)))
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline u64 div64_u64_rem(u64 a, u64 b, u64 *r) { *r = a % b; return a / b; }
static inline u64 div_u64_rem(u64 a, u32 b, u32 *r) { *r = a % b; return a / b; }
static inline void atomic64_add(s64 i, atomic64_t *v) { v->v += i; }
static inline void atomic64_sub(s64 i, atomic64_t *v) { v->v -= i; }
static inline s64 atomic64_read(const atomic64_t *v) { return v->v; }
static inline void atomic_add(int i, atomic_t *v) { v->v += i; }
static inline int atomic_read(const atomic_t *v) { return v->v; }
static inline int atomic_xchg(atomic_t *v, int n) { int o = v->v; v->v = n; return o; }
static inline int atomic_inc_return(atomic_t *v) { return ++v->v; }
#define ATOMIC_INIT(i) { (i) }
#define DIV_ROUND_UP(a, b) (((a) + (b) - 1) / (b))
#define min3(a, b, c) min(min(a, b), c)
/* <kunit/visibility.h>: no KUnit here, nothing exported */
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#define VISIBLE_IF_KUNIT static

/* a slab cache of objects of one size */
struct kmem_cache { size_t size; };
static inline struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
						   unsigned int align, unsigned long flags,
						   void (*ctor)(void *))
{
	struct kmem_cache *k = malloc(sizeof(*k));

	(void)name; (void)align; (void)flags; (void)ctor;
	if (k)
		k->size = size;
	return k;
}
static inline void *kmem_cache_zalloc(struct kmem_cache *k, gfp_t g) { (void)g; return calloc(1, k->size); }
static inline void kmem_cache_free(struct kmem_cache *k, void *p) { (void)k; free(p); }
static inline void kmem_cache_destroy(struct kmem_cache *k) { free(k); }
#endif

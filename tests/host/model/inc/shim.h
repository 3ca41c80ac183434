/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's API for the module's table and metadata (l2p.c,
 * resident.c, table.c, format.c, meta.c, sb.c, paging.c, intent.c, alloc.c) to
 * build in userspace, single-threaded: spinlocks are no-ops, atomics plain
 * arithmetic; a mutex taken twice, or a wait for what has not happened, aborts
 * (one thread would deadlock). Work items, I/O and flushes are the model's
 * (model.c, devices.c): queue_work() only marks an item pending, the model runs
 * it later.
 */
#ifndef FLAZ_MODEL_SHIM_H
#define FLAZ_MODEL_SHIM_H
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
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
struct mutex { int held; };
struct work_struct {
	void (*func)(struct work_struct *work);
	bool pending;
};
struct delayed_work { struct work_struct work; };
struct workqueue_struct;
struct rb_node { void *a, *b, *c; };
struct rb_root_cached { void *a, *b; };
struct bvec_iter { u64 a; };
/* a write the model sends: block @block, through flaz_intent_start() when @intent */
struct bio {
	struct bio *bi_next;
	u64 block;
	bool intent;
};
struct bio_list { struct bio *head, *tail; };
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
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
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

/* more of the kernel, for meta.c, sb.c, paging.c, intent.c and alloc.c */
typedef long long ktime_t;
#define MAJOR(d) ((u32)(d) >> 20)
#define MINOR(d) ((u32)(d) & 0xfffff)
#define HZ 1000
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define GFP_NOIO 0
#define U16_MAX ((u16)~0U)
#define U64_MAX ((u64)~0ULL)
#define SECTOR_SHIFT 9
#define IOPRIO_DEFAULT 0
#define REQ_OP_READ 0U
#define REQ_OP_WRITE 1U
#define REQ_OP_MASK 0xffU
#define REQ_FUA (1U << 17)
#define REQ_PREFLUSH (1U << 18)
#define __init
/* a module parameter: model_set_NAME() sets it, as writing it in sysfs would */
#define module_param(name, type, perm) void model_set_##name(typeof(name) v) { name = v; }
#define MODULE_PARM_DESC(name, desc)
#define lockdep_assert_held(l) assert((l)->held)
#define smp_rmb() smp_mb()
#define likely(x) (x)
#define unlikely(x) (x)
#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))
#define le32_to_cpu(x) (x)
#define le64_to_cpu(x) (x)
#define cpu_to_le32(x) (x)
#define cpu_to_le64(x) (x)
#define round_up(x, y) ((((x) + (y) - 1) / (y)) * (y))
#define DMERR(...) model_log("err", __VA_ARGS__)
#define DMWARN(...) model_log("warn", __VA_ARGS__)
#define DMINFO(...) model_log("info", __VA_ARGS__)
#define DMERR_LIMIT(...) model_log("err", __VA_ARGS__)
#define DMWARN_LIMIT(...) model_log("warn", __VA_ARGS__)
void model_log(const char *level, const char *fmt, ...);

extern unsigned long jiffies;
#define time_after_eq(a, b) ((long)((a) - (b)) >= 0)
#define time_before(a, b) ((long)((a) - (b)) < 0)
u64 ktime_get_ns(void);
static inline u64 ktime_get_real_ns(void) { return ktime_get_ns(); }
static inline void msleep(unsigned int ms) { jiffies += ms; }

#define DEFINE_MUTEX(name) struct mutex name = { 0 }
static inline void mutex_init(struct mutex *l) { l->held = 0; }
static inline void mutex_destroy(struct mutex *l) { assert(!l->held); }
/* model.c: the mutex's holder may run first, as if the taker blocked on it */
void model_lock_point(struct mutex *l);
static inline void mutex_lock(struct mutex *l) { model_lock_point(l); assert(!l->held); l->held = 1; }
static inline void mutex_unlock(struct mutex *l) { assert(l->held); l->held = 0; }
#define spin_lock_irqsave(l, f) do { (void)(f); spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, f) do { (void)(f); spin_unlock(l); } while (0)

struct completion { bool done; };
static inline void init_completion(struct completion *x) { x->done = false; }
static inline void reinit_completion(struct completion *x) { x->done = false; }
static inline void complete(struct completion *x) { x->done = true; }
static inline bool completion_done(struct completion *x) { return x->done; }
static inline void wait_for_completion(struct completion *x) { assert(x->done); }
static inline unsigned long wait_for_completion_timeout(struct completion *x, unsigned long t)
{
	(void)t;
	return x->done;
}

#define INIT_WORK(w, f) do { (w)->func = (f); (w)->pending = false; } while (0)
#define INIT_DELAYED_WORK(w, f) INIT_WORK(&(w)->work, f)
#define to_delayed_work(w) container_of(w, struct delayed_work, work)
static inline bool queue_work(struct workqueue_struct *q, struct work_struct *w)
{
	bool was = w->pending;

	(void)q;
	w->pending = true;
	return !was;
}
static inline bool queue_delayed_work(struct workqueue_struct *q, struct delayed_work *w,
				      unsigned long d)
{
	(void)d;
	return queue_work(q, &w->work);
}
#define mod_delayed_work queue_delayed_work
static inline bool cancel_work_sync(struct work_struct *w)
{
	bool was = w->pending;

	w->pending = false;
	return was;
}
static inline bool cancel_delayed_work_sync(struct delayed_work *w) { return cancel_work_sync(&w->work); }
static inline bool flush_work(struct work_struct *w)
{
	if (!w->pending)
		return false;
	w->pending = false;
	w->func(w);
	return true;
}

struct list_head { struct list_head *next, *prev; };
#define LIST_HEAD(name) struct list_head name = { &(name), &(name) }
static inline void list_add(struct list_head *n, struct list_head *h)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}
static inline void list_del(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}
#define list_entry(p, type, member) container_of(p, type, member)
#define list_for_each_entry(pos, head, member)					\
	for (pos = list_entry((head)->next, __typeof__(*pos), member);		\
	     &pos->member != (head);						\
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)				\
	for (pos = list_entry((head)->next, __typeof__(*pos), member),		\
	     n = list_entry(pos->member.next, __typeof__(*pos), member);	\
	     &pos->member != (head);						\
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#define BIO_EMPTY_LIST { NULL, NULL }
static inline void bio_list_init(struct bio_list *l) { l->head = l->tail = NULL; }
static inline bool bio_list_empty(const struct bio_list *l) { return !l->head; }
static inline void bio_list_add(struct bio_list *l, struct bio *b)
{
	b->bi_next = NULL;
	if (l->tail)
		l->tail->bi_next = b;
	else
		l->head = b;
	l->tail = b;
}
static inline void bio_list_merge(struct bio_list *l, struct bio_list *l2)
{
	if (!l2->head)
		return;
	if (l->tail)
		l->tail->bi_next = l2->head;
	else
		l->head = l2->head;
	l->tail = l2->tail;
}
static inline void bio_list_merge_head(struct bio_list *l, struct bio_list *l2)
{
	if (!l2->head)
		return;
	if (l->head)
		l2->tail->bi_next = l->head;
	else
		l->tail = l2->tail;
	l->head = l2->head;
}
static inline struct bio *bio_list_pop(struct bio_list *l)
{
	struct bio *b = l->head;

	if (b) {
		l->head = b->bi_next;
		if (!l->head)
			l->tail = NULL;
		b->bi_next = NULL;
	}
	return b;
}
static inline void bio_put(struct bio *b) { (void)b; }
static inline int submit_bio_wait(struct bio *b) { (void)b; return 0; }

/* the model's two devices: I/O and flushes go to model.c */
struct block_device { dev_t bd_dev; };
struct dm_table;
struct dm_target { struct dm_table *table; u64 len; };
static inline const char *dm_table_device_name(struct dm_table *t) { (void)t; return "model"; }
static inline bool bdev_read_only(struct block_device *b) { (void)b; return false; }
/* no discards: a discard only spares the SSD work, the slots' headers tell old ones apart */
static inline unsigned int bdev_max_discard_sectors(struct block_device *b) { (void)b; return 0; }
static inline int __blkdev_issue_discard(struct block_device *b, sector_t s, sector_t n,
					 gfp_t g, struct bio **bio)
{
	(void)b; (void)s; (void)n; (void)g; (void)bio;
	return 0;
}
int blkdev_issue_flush(struct block_device *bdev);
enum dm_io_mem_type { DM_IO_PAGE_LIST, DM_IO_BIO, DM_IO_VMA, DM_IO_KMEM };
struct dm_io_region { struct block_device *bdev; sector_t sector; sector_t count; };
typedef void (*io_notify_fn)(unsigned long error, void *context);
struct dm_io_request {
	blk_opf_t bi_opf;
	struct { enum dm_io_mem_type type; union { void *addr; void *vma; } ptr; } mem;
	struct { io_notify_fn fn; void *context; } notify;
	struct dm_io_client *client;
};
int dm_io(struct dm_io_request *req, unsigned int n, struct dm_io_region *where,
	  unsigned long *error_bits, int ioprio);

static inline void *kzalloc(size_t n, gfp_t g) { return kvzalloc(n, g); }
static inline void *kmalloc(size_t n, gfp_t g) { (void)g; return malloc(n ? n : 1); }
static inline void *kcalloc(size_t n, size_t s, gfp_t g) { return kvcalloc(n, s, g); }
static inline void *kmalloc_array(size_t n, size_t s, gfp_t g) { return kmalloc(n * s, g); }
static inline void *kvmalloc_array(size_t n, size_t s, gfp_t g) { return kmalloc(n * s, g); }
static inline void kfree(const void *p) { free((void *)p); }
static inline void *vmalloc(size_t n) { return malloc(n ? n : 1); }
static inline void vfree(const void *p) { free((void *)p); }
static inline bool is_vmalloc_addr(const void *p) { (void)p; return false; }
u64 get_random_u64(void);
static inline void generate_random_uuid(u8 *uuid)
{
	u64 a = get_random_u64(), b = get_random_u64();

	memcpy(uuid, &a, 8);
	memcpy(uuid + 8, &b, 8);
}
static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const u8 *b = p;

	for (; n; n--, b++)
		if (*b != (u8)c)
			return (void *)b;
	return NULL;
}

static inline void atomic64_set(atomic64_t *v, s64 i) { v->v = i; }
static inline bool atomic64_try_cmpxchg(atomic64_t *v, u64 *old, s64 n)
{
	if ((u64)v->v != *old) {
		*old = v->v;
		return false;
	}
	v->v = n;
	return true;
}
static inline void atomic_inc(atomic_t *v) { v->v++; }
static inline void atomic_set(atomic_t *v, int i) { v->v = i; }
static inline u64 bitmap_weight(const unsigned long *a, u64 n)
{
	u64 i, w = 0;

	for (i = 0; i < n; i++)
		w += test_bit(i, a);
	return w;
}
static inline bool bitmap_empty(const unsigned long *a, u64 n) { return find_first_bit(a, n) == n; }
static inline void bitmap_copy(unsigned long *d, const unsigned long *s, u64 n)
{
	memcpy(d, s, BITS_TO_LONGS(n) * sizeof(long));
}
static inline void bitmap_andnot(unsigned long *d, const unsigned long *a, const unsigned long *b, u64 n)
{
	u64 i;

	for (i = 0; i < BITS_TO_LONGS(n); i++)
		d[i] = a[i] & ~b[i];
}
static inline void bitmap_or(unsigned long *d, const unsigned long *a, const unsigned long *b, u64 n)
{
	u64 i;

	for (i = 0; i < BITS_TO_LONGS(n); i++)
		d[i] = a[i] | b[i];
}
#define for_each_set_bit(bit, addr, size)					\
	for ((bit) = find_first_bit(addr, size); (bit) < (size);		\
	     (bit) = find_next_bit(addr, size, (bit) + 1))
static inline void sort(void *base, size_t n, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	(void)swap;
	qsort(base, n, size, cmp);
}
/* fills never wait for an extent in the model */
typedef struct { int x; } wait_queue_head_t;
static inline void init_waitqueue_head(wait_queue_head_t *w) { (void)w; }
static inline void wake_up_all(wait_queue_head_t *w) { (void)w; }
#define wait_event_timeout(wq, cond, timeout) ({ (void)(timeout); (long)(cond); })
static inline bool wq_has_sleeper(wait_queue_head_t *w) { (void)w; return false; }
static inline void wake_up(wait_queue_head_t *w) { (void)w; }
#endif

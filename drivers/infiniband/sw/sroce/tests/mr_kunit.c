// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for MR bounds, lookups and copies (mr.c, mem.c), without
 * a device: the suite fills a key table of its own with hand-made MRs
 * over kernel memory (DMA MRs, whose addresses are kernel addresses, and
 * fast-reg MRs made of pages) and calls the data path's entry points on
 * them.
 *
 * What it proves:
 *  - sroce_range_ok() is exact at the edges: zero length (also just past
 *    the end), the exact end, one past it, and iova + length overflowing
 *    64 bits in every way, including against an MR that ends at 2^64;
 *  - a lookup checks key, validity, PD, rights and range, with the
 *    documented errno for each, and takes a reference only on success;
 *  - copies stay inside the MR, cross page (block) boundaries of a
 *    fast-reg MR correctly, and a fast-reg MR whose block list is
 *    shorter than its length fails
 *    instead of reading past the list;
 *  - atomics check alignment and range, and compute the right values;
 *  - SGE lists: copies and cursor advances across several SGEs, empty
 *    SGEs skipped, -ENOSPC when the list runs out, and a bad SGE fails
 *    with its lookup's errno;
 *  - invalidation only applies to fast-reg MRs of the same PD;
 *  - the work completion status of each MR error.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "../sroce.h"
#include "../mem.h"
#include "../mr.h"

/* ---------------------------------------------------- range checks */

/* sroce_range_ok() at every edge. */
static void mr_range_ok_test(struct kunit *test)
{
	static const struct {
		u64 mr_iova, mr_len, iova, len;
		bool ok;
	} cases[] = {
		/* inside, exact start and exact end */
		{ 0x1000, 0x1000, 0x1000, 0x1000, true },
		{ 0x1000, 0x1000, 0x1000, 1, true },
		{ 0x1000, 0x1000, 0x1fff, 1, true },
		{ 0x1000, 0x1000, 0x1800, 0x800, true },
		/* one past the end, one before the start */
		{ 0x1000, 0x1000, 0x1fff, 2, false },
		{ 0x1000, 0x1000, 0x2000, 1, false },
		{ 0x1000, 0x1000, 0x0fff, 1, false },
		{ 0x1000, 0x1000, 0x0fff, 2, false },
		{ 0x1000, 0x1000, 0x1000, 0x1001, false },
		/* zero length: anywhere from the start to just past the end */
		{ 0x1000, 0x1000, 0x1000, 0, true },
		{ 0x1000, 0x1000, 0x2000, 0, true },
		{ 0x1000, 0x1000, 0x2001, 0, false },
		{ 0x1000, 0x1000, 0x0fff, 0, false },
		/* an empty MR holds only zero-length accesses at its start */
		{ 0x1000, 0, 0x1000, 0, true },
		{ 0x1000, 0, 0x1000, 1, false },
		/* iova + len overflows */
		{ 0x1000, 0x1000, U64_MAX, 2, false },
		{ 0x1000, 0x1000, 0x1800, U64_MAX, false },
		{ 0x1000, 0x1000, U64_MAX - 0xfff, 0x1001, false },
		{ 0x1000, 0x1000, 0x1001, U64_MAX - 0x1000 + 1, false },
		/* an MR that ends at 2^64 */
		{ U64_MAX - 0xfff, 0x1000, U64_MAX, 1, true },
		{ U64_MAX - 0xfff, 0x1000, U64_MAX, 2, false },
		{ U64_MAX - 0xfff, 0x1000, U64_MAX - 0xfff, 0x1000, true },
		{ U64_MAX - 0xfff, 0x1000, U64_MAX - 0xfff, 0x1001, false },
		{ U64_MAX - 0xfff, 0x1000, 0, 1, false },
		/* the DMA MR: everything up to 2^64 - 1 */
		{ 0, U64_MAX, 0, U64_MAX, true },
		{ 0, U64_MAX, 1, U64_MAX, false },
		{ 0, U64_MAX, U64_MAX - 1, 1, true },
		{ 0, U64_MAX, U64_MAX, 1, false },
		{ 0, U64_MAX, U64_MAX, 0, true },
		{ 0, U64_MAX, 0xffff888000000000ULL, 0x10000, true },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_range_ok(cases[i].mr_iova,
						   cases[i].mr_len,
						   cases[i].iova, cases[i].len),
				    cases[i].ok,
				    "case %u: MR 0x%llx+0x%llx, 0x%llx+0x%llx",
				    i, cases[i].mr_iova, cases[i].mr_len,
				    cases[i].iova, cases[i].len);
}

/*
 * sroce_range_ok() against a brute-force reference, on a small MR, for
 * every iova and length around it.
 */
static void mr_range_exhaustive_test(struct kunit *test)
{
	const u64 base = 64, size = 16;
	u64 iova, len;

	for (iova = 0; iova < 128; iova++) {
		for (len = 0; len < 40; len++) {
			bool want = iova >= base && iova + len <= base + size;

			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_range_ok(base, size, iova, len),
					    want, "0x%llx+0x%llx", iova, len);
		}
	}
}

/* ------------------------------------------------------- fixtures */

/**
 * struct mr_env - a device with a key table, two PDs, and memory
 * @sdev: the device (only its MR table is used)
 * @pd: the PD the MRs belong to
 * @other_pd: another PD
 * @buf: SZ_4K bytes of kernel memory for DMA MRs
 * @pages: pages for the fast-reg MR
 * @blocks: their kernel addresses, the fast-reg MR's block list
 */
struct mr_env {
	struct sroce_dev *sdev;
	struct sroce_pd *pd, *other_pd;
	u8 *buf;
	struct page *pages[3];
	u64 blocks[3];
};

#define MR_NPAGES	3

static int mr_env_init(struct kunit *test)
{
	struct mr_env *env;
	unsigned int i;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	if (!env)
		return -ENOMEM;
	env->sdev = kunit_kzalloc(test, sizeof(*env->sdev), GFP_KERNEL);
	env->pd = kunit_kzalloc(test, sizeof(*env->pd), GFP_KERNEL);
	env->other_pd = kunit_kzalloc(test, sizeof(*env->pd), GFP_KERNEL);
	env->buf = kunit_kzalloc(test, SZ_4K, GFP_KERNEL);
	if (!env->sdev || !env->pd || !env->other_pd || !env->buf)
		return -ENOMEM;
	for (i = 0; i < MR_NPAGES; i++) {
		env->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!env->pages[i])
			return -ENOMEM;
		env->blocks[i] = (u64)(uintptr_t)page_address(env->pages[i]);
	}
	sroce_mr_table_init(&env->sdev->mr_table);
	test->priv = env;
	return 0;
}

static void mr_env_exit(struct kunit *test)
{
	struct mr_env *env = test->priv;
	unsigned int i;

	if (!env)
		return;
	xa_destroy(&env->sdev->mr_table.xa);
	for (i = 0; i < MR_NPAGES; i++)
		if (env->pages[i])
			__free_page(env->pages[i]);
}

/*
 * A published MR of @type at table @index with key byte 0x5a, covering
 * [@iova, @iova + @len), granting @access; one reference (the table's).
 */
static struct sroce_mr *mr_add(struct kunit *test, enum ib_mr_type type,
			       u32 index, int access, u64 iova, u64 len)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->sdev = env->sdev;
	mr->pd = env->pd;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	rwlock_init(&mr->lock);
	mr->type = type;
	mr->state = SROCE_MR_VALID;
	mr->index = index;
	mr->key = index << 8 | 0x5a;
	mr->access = access;
	mr->iova = iova;
	mr->length = len;
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&env->sdev->mr_table.xa, index,
					      mr, GFP_KERNEL)), 0);
	return mr;
}

/* A DMA-type MR over env->buf (its addresses are kernel addresses). */
static struct sroce_mr *mr_add_buf(struct kunit *test, u32 index, int access)
{
	struct mr_env *env = test->priv;

	return mr_add(test, IB_MR_TYPE_DMA, index, access,
		      (u64)(uintptr_t)env->buf, SZ_4K);
}

/*
 * A fast-reg MR at iova 0x10000 over the three pages, starting 100 bytes
 * into the first one.
 */
#define MR_FR_IOVA	0x10000ULL
#define MR_FR_OFF	100

static struct sroce_mr *mr_add_fast_reg(struct kunit *test, u32 index,
					int access)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr;

	mr = mr_add(test, IB_MR_TYPE_MEM_REG, index, access, MR_FR_IOVA,
		    MR_NPAGES * PAGE_SIZE - MR_FR_OFF);
	mr->blocks = env->blocks;
	mr->max_blocks = MR_NPAGES;
	mr->nblocks = MR_NPAGES;
	mr->block_shift = PAGE_SHIFT;
	mr->first_off = MR_FR_OFF;
	return mr;
}

static u8 *mr_fr_byte(struct kunit *test, u64 iova)
{
	struct mr_env *env = test->priv;
	u64 off = iova - MR_FR_IOVA + MR_FR_OFF;

	return (u8 *)page_address(env->pages[off >> PAGE_SHIFT]) +
	       offset_in_page(off);
}

/* -------------------------------------------------------- lookups */

/* Lookups: each check with its errno; references only on success. */
static void mr_lookup_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_dev *sdev = env->sdev;
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		 IB_ACCESS_REMOTE_WRITE;
	struct sroce_mr *mr = mr_add_buf(test, 7, rw);
	u64 iova = mr->iova;
	struct sroce_mr *got;
	int err;

	got = sroce_mr_lookup(sdev, env->pd, mr->key, false, 0, iova, 16, &err);
	KUNIT_EXPECT_PTR_EQ(test, got, mr);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 2);
	sroce_mr_put(got);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1);

	got = sroce_mr_lookup(sdev, env->pd, mr->key, true,
			      IB_ACCESS_REMOTE_WRITE, iova + SZ_4K - 1, 1, &err);
	KUNIT_EXPECT_PTR_EQ(test, got, mr);
	sroce_mr_put(got);

#define EXPECT_LOOKUP_FAILS(pd, key, remote, access, va, len, errno)	\
	do {								\
		got = sroce_mr_lookup(sdev, pd, key, remote, access, va,	\
				      len, &err);			\
		KUNIT_EXPECT_NULL(test, got);				\
		KUNIT_EXPECT_EQ(test, err, errno);			\
		KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1);	\
	} while (0)

	/* the key byte, or an index nobody has */
	EXPECT_LOOKUP_FAILS(env->pd, mr->key ^ 1, false, 0, iova, 1, -ENOKEY);
	EXPECT_LOOKUP_FAILS(env->pd, 8 << 8 | 0x5a, false, 0, iova, 1, -ENOKEY);
	EXPECT_LOOKUP_FAILS(env->pd, 0, false, 0, iova, 1, -ENOKEY);
	EXPECT_LOOKUP_FAILS(env->pd, U32_MAX, false, 0, iova, 1, -ENOKEY);
	/* another PD */
	EXPECT_LOOKUP_FAILS(env->other_pd, mr->key, false, 0, iova, 1, -EPERM);
	/* rights not granted, or no remote right for a remote access */
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, true, IB_ACCESS_REMOTE_ATOMIC,
			    iova, 8, -EACCES);
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, true, 0, iova, 1, -EACCES);
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, true, IB_ACCESS_LOCAL_WRITE,
			    iova, 1, -EACCES);
	/* out of range */
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, false, 0, iova - 1, 1, -ERANGE);
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, false, 0, iova + SZ_4K, 1,
			    -ERANGE);
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, false, 0, iova, SZ_4K + 1,
			    -ERANGE);
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, false, 0, iova + 1, U64_MAX,
			    -ERANGE);
	/* an MR that is not valid */
	mr->state = SROCE_MR_FREE;
	EXPECT_LOOKUP_FAILS(env->pd, mr->key, false, 0, iova, 1, -EKEYREVOKED);
	mr->state = SROCE_MR_VALID;
	/* an MR on its way out (dereg dropped the last reference) */
	refcount_set(&mr->ref, 0);
	got = sroce_mr_lookup(sdev, env->pd, mr->key, false, 0, iova, 1, &err);
	KUNIT_EXPECT_NULL(test, got);
	KUNIT_EXPECT_EQ(test, err, -ENOKEY);
	refcount_set(&mr->ref, 1);
#undef EXPECT_LOOKUP_FAILS
}

/* ---------------------------------------------------------- copies */

/* Copies in a DMA MR: in range only. */
static void mr_copy_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr = mr_add_buf(test, 3, IB_ACCESS_LOCAL_WRITE);
	u8 data[64], back[64];
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i ^ 0xa5;
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, mr->iova + SZ_4K - 64, data, 64,
					    SROCE_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, env->buf + SZ_4K - 64, data, 64);

	memset(back, 0, sizeof(back));
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, mr->iova + SZ_4K - 64, back, 64,
					    SROCE_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, back, data, 64);

	/* one past the end, before the start, wrapping: nothing copied */
	memset(env->buf, 0, SZ_4K);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, mr->iova + SZ_4K - 63, data, 64,
					    SROCE_TO_MR), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, mr->iova - 1, data, 2,
					    SROCE_TO_MR), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, U64_MAX, data, 2,
					    SROCE_TO_MR), -ERANGE);
	KUNIT_EXPECT_NULL(test, memchr_inv(env->buf, 0, SZ_4K));
	/* zero bytes at the very end */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, mr->iova + SZ_4K, data, 0,
					    SROCE_TO_MR), 0);
}

/*
 * A received page into a page of an MR: a whole page-aligned page of a
 * frag goes by copy_page() (also the second page of an order-1 frag),
 * anything else by skb_copy_bits(); either way the bytes land where they
 * should.  The MR is a DMA MR over env->pages[1].
 */
static void mr_copy_skb_page_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	u8 *dst = page_address(env->pages[1]);
	struct sroce_mr *mr = mr_add(test, IB_MR_TYPE_DMA, 7,
				     IB_ACCESS_LOCAL_WRITE,
				     (u64)(uintptr_t)dst, PAGE_SIZE);
	struct page *src = alloc_pages(GFP_KERNEL, 1);
	struct sk_buff *skb = alloc_skb(64, GFP_KERNEL);
	u8 *from;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	from = page_address(src);
	for (i = 0; i < 2 * PAGE_SIZE; i++)
		from[i] = i * 7 + i / PAGE_SIZE;
	/* 40 bytes of headers, then both pages of @src in one frag */
	skb_put(skb, 40);
	skb_add_rx_frag(skb, 0, src, 0, 2 * PAGE_SIZE, 2 * PAGE_SIZE);

	/* the first page, the second page, one off the page boundary */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova, skb, 40,
						PAGE_SIZE, SROCE_TO_MR),
			0);
	KUNIT_EXPECT_MEMEQ(test, dst, from, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova, skb,
						40 + PAGE_SIZE, PAGE_SIZE,
						SROCE_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, from + PAGE_SIZE, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova, skb, 41,
						PAGE_SIZE, SROCE_TO_MR),
			0);
	KUNIT_EXPECT_MEMEQ(test, dst, from + 1, PAGE_SIZE);
	/* headers and payload together; into the middle of the MR page */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova, skb, 0,
						PAGE_SIZE, SROCE_TO_MR),
			0);
	KUNIT_EXPECT_MEMEQ(test, dst + 40, from, PAGE_SIZE - 40);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova + 8, skb, 40,
						PAGE_SIZE - 8, SROCE_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dst + 8, from, PAGE_SIZE - 8);
	/* past the end of the skb: nothing read beyond it */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, mr->iova, skb,
						41 + PAGE_SIZE, PAGE_SIZE,
						SROCE_TO_MR), -EFAULT);
	kfree_skb(skb);
}

/*
 * A fast-reg MR over three separate pages: copies of every length
 * around each block boundary land in the right pages; the MR's edges
 * hold; a block list shorter than the MR fails with -EFAULT.
 */
static void mr_fast_reg_copy_test(struct kunit *test)
{
	struct sroce_mr *mr = mr_add_fast_reg(test, 4, IB_ACCESS_LOCAL_WRITE);
	u64 end = MR_FR_IOVA + mr->length;
	u8 *data = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	u8 *back = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	/* iovas of the two block boundaries */
	u64 b1 = MR_FR_IOVA + PAGE_SIZE - MR_FR_OFF;
	u64 b2 = b1 + PAGE_SIZE;
	static const int offs[] = { -9, -1, 0, 1 };
	static const u32 lens[] = { 1, 2, 8, 9, 100 };
	unsigned int i, j, k;

	KUNIT_ASSERT_NOT_NULL(test, data);
	KUNIT_ASSERT_NOT_NULL(test, back);
	for (i = 0; i < 2 * PAGE_SIZE; i++)
		data[i] = i * 13 + 1;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			u64 iova = b1 + offs[i];
			u32 len = lens[j];

			KUNIT_ASSERT_EQ(test, sroce_mr_copy(mr, iova, data, len,
							    SROCE_TO_MR),
					0);
			for (k = 0; k < len; k++)
				KUNIT_EXPECT_EQ(test, *mr_fr_byte(test, iova + k),
						data[k]);
			memset(back, 0, len);
			KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, iova, back, len,
							    SROCE_FROM_MR),
					0);
			KUNIT_EXPECT_MEMEQ(test, back, data, len);
		}
	}
	/* across both boundaries at once, a page and more */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, b1 - 10, data, PAGE_SIZE + 20,
					    SROCE_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, *mr_fr_byte(test, b2 + 9), data[PAGE_SIZE + 19]);
	/* the whole MR, and one byte more */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, MR_FR_IOVA, data, 2 * PAGE_SIZE,
					    SROCE_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, end - 1, data, 1,
					    SROCE_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, *mr_fr_byte(test, end - 1), data[0]);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, end - 1, data, 2,
					    SROCE_TO_MR), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, MR_FR_IOVA - 1, data, 1,
					    SROCE_TO_MR), -ERANGE);

	/* an owner that remapped fewer blocks than the length needs */
	mr->nblocks = 1;
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, b2, data, 1, SROCE_TO_MR),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, b1 - 1, data, 2,
					    SROCE_TO_MR), -EFAULT);
	mr->nblocks = MR_NPAGES;
}

/* --------------------------------------------------------- atomics */

/* Atomics: aligned and in range only; compare-swap and fetch-add values. */
static void mr_atomic_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr = mr_add_buf(test, 5, IB_ACCESS_LOCAL_WRITE |
					 IB_ACCESS_REMOTE_ATOMIC);
	u64 *word = (u64 *)(env->buf + 8);
	u64 iova = mr->iova + 8, orig = 0;
	unsigned int mis;

	*word = 5;
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, iova, true, 5, 9, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, 5);
	KUNIT_EXPECT_EQ(test, *word, 9);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, iova, true, 5, 1, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, 9);
	KUNIT_EXPECT_EQ(test, *word, 9);
	*word = U64_MAX;
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, iova, false, 0, 2, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, U64_MAX);
	KUNIT_EXPECT_EQ(test, *word, 1);

	for (mis = 1; mis < 8; mis++)
		KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, iova + mis, false, 0,
						      1, &orig), -EINVAL);
	/* the last word is in range, one past it is not */
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, mr->iova + SZ_4K - 8, false,
					      0, 1, &orig), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, mr->iova + SZ_4K, false, 0,
					      1, &orig), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, mr->iova - 8, false, 0, 1,
					      &orig), -ERANGE);
}

/* -------------------------------------------------------- SGE lists */

/*
 * Copies over an SGE list: a message spread over several calls
 * continues where the last one stopped, empty SGEs are skipped, the list
 * running out is -ENOSPC, a bad lkey its lookup's errno.
 */
static void mr_sgl_copy_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr = mr_add_buf(test, 6, IB_ACCESS_LOCAL_WRITE);
	struct ib_sge sgl[4] = {
		{ .addr = mr->iova + 100, .length = 5, .lkey = mr->key },
		{ .addr = mr->iova + 200, .length = 0, .lkey = 0xdead },
		{ .addr = mr->iova + 300, .length = 11, .lkey = mr->key },
		{ .addr = mr->iova + 400, .length = 4, .lkey = mr->key },
	};
	struct sroce_sgl_cursor cur = {};
	u8 data[20], back[20];
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = 0x40 + i;
	/* 3 bytes, then 10 (crossing into the third SGE), then 7 */
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     data, 3, SROCE_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 0);
	KUNIT_EXPECT_EQ(test, cur.off, 3);
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     data + 3, 10, SROCE_TO_MR),
			0);
	KUNIT_EXPECT_EQ(test, cur.sge, 2);
	KUNIT_EXPECT_EQ(test, cur.off, 8);
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     data + 13, 7, SROCE_TO_MR),
			0);
	KUNIT_EXPECT_EQ(test, cur.sge, 3);
	KUNIT_EXPECT_EQ(test, cur.off, 4);
	KUNIT_EXPECT_MEMEQ(test, env->buf + 100, data, 5);
	KUNIT_EXPECT_MEMEQ(test, env->buf + 300, data + 5, 11);
	KUNIT_EXPECT_MEMEQ(test, env->buf + 400, data + 16, 4);
	/* nothing left */
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     data, 1, SROCE_TO_MR),
			-ENOSPC);
	/* zero bytes at the end are fine */
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     data, 0, SROCE_TO_MR), 0);

	/* back out in one go */
	memset(&cur, 0, sizeof(cur));
	memset(back, 0, sizeof(back));
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     back, 20, SROCE_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, back, data, 20);
	/* 21 bytes do not fit */
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     back, 21, SROCE_FROM_MR),
			-ENOSPC);

	/* a bad lkey, another PD, an SGE past the MR */
	memset(&cur, 0, sizeof(cur));
	sgl[0].lkey ^= 1;
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     back, 1, SROCE_FROM_MR),
			-ENOKEY);
	sgl[0].lkey ^= 1;
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->other_pd, sgl, 4,
					     &cur, back, 1, SROCE_FROM_MR),
			-EPERM);
	memset(&cur, 0, sizeof(cur));
	sgl[0].addr = mr->iova + SZ_4K - 2;
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, sgl, 4, &cur,
					     back, 5, SROCE_FROM_MR),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1);
}

/* Writing needs IB_ACCESS_LOCAL_WRITE; reading does not. */
static void mr_sgl_access_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *mr = mr_add_buf(test, 9, 0);
	struct ib_sge sge = { .addr = mr->iova, .length = 8, .lkey = mr->key };
	struct sroce_sgl_cursor cur = {};
	u8 data[8] = {};

	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, &sge, 1, &cur,
					     data, 8, SROCE_TO_MR),
			-EACCES);
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_copy(env->sdev, env->pd, &sge, 1, &cur,
					     data, 8, SROCE_FROM_MR), 0);
}

/* Advancing a cursor: across SGEs, over empty ones, to the exact end. */
static void mr_sgl_advance_test(struct kunit *test)
{
	static const struct ib_sge sgl[5] = {
		{ .length = 4 }, { .length = 0 }, { .length = 0 },
		{ .length = 10 }, { .length = U32_MAX },
	};
	struct sroce_sgl_cursor cur = {};

	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, 0), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 0);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, 4), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 0);
	KUNIT_EXPECT_EQ(test, cur.off, 4);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, 1), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 3);
	KUNIT_EXPECT_EQ(test, cur.off, 1);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, 9), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 3);
	KUNIT_EXPECT_EQ(test, cur.off, 10);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, U32_MAX), 0);
	KUNIT_EXPECT_EQ(test, cur.sge, 4);
	KUNIT_EXPECT_EQ(test, cur.off, U32_MAX);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 5, &cur, 1), -ENOSPC);

	/* only 14 bytes in the first four */
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 4, &cur, 14), 0);
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 4, &cur, 15), -ENOSPC);
	/* an empty list */
	memset(&cur, 0, sizeof(cur));
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 0, &cur, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, sroce_sgl_advance(sgl, 0, &cur, 0), 0);
}

/* ---------------------------------------------------- invalidation */

/* Invalidate: fast-reg MRs of the same PD only; then lookups fail. */
static void mr_invalidate_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *fr = mr_add_fast_reg(test, 10, IB_ACCESS_LOCAL_WRITE);
	struct sroce_mr *dma = mr_add_buf(test, 11, IB_ACCESS_LOCAL_WRITE);
	struct sroce_mr *got;
	int err;

	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->pd,
						  dma->key, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->other_pd,
						  fr->key, false), -EPERM);
	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->pd,
						  fr->key ^ 0x80, false), -ENOKEY);
	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->pd,
						  12 << 8, false), -ENOKEY);
	KUNIT_EXPECT_EQ(test, fr->state, SROCE_MR_VALID);
	KUNIT_EXPECT_EQ(test,
			sroce_mr_invalidate(env->sdev, env->pd, fr->key, false),
			0);
	KUNIT_EXPECT_EQ(test, fr->state, SROCE_MR_FREE);
	/* twice is allowed */
	KUNIT_EXPECT_EQ(test,
			sroce_mr_invalidate(env->sdev, env->pd, fr->key, false),
			0);
	got = sroce_mr_lookup(env->sdev, env->pd, fr->key, false, 0, fr->iova,
			      1, &err);
	KUNIT_EXPECT_NULL(test, got);
	KUNIT_EXPECT_EQ(test, err, -EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, refcount_read(&fr->ref), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&dma->ref), 1);
}

/* The invalidation the access test runs beside its access. */
struct mr_inv_ctx {
	struct mr_env *env;
	u32 key;
	int err;
	struct completion go;
	struct completion done;
};

static int mr_inv_thread(void *data)
{
	struct mr_inv_ctx *ctx = data;

	wait_for_completion(&ctx->go);
	ctx->err = sroce_mr_invalidate(ctx->env->sdev, ctx->env->pd, ctx->key,
				       true);
	complete(&ctx->done);
	return 0;
}

/*
 * An access holds a fast-reg MR's registration from its lookup to its
 * put: a new mapping (map_mr_sg, staged in map_blocks) does not reach it,
 * and an invalidation (here a remote one: the MR grants a remote right)
 * waits for it.  The next registration takes the staged mapping.  Like
 * the data path, the test does not sleep between lookup and put (BHs are
 * off): it waits for the invalidating thread, on the other CPU, by
 * spinning.
 */
static void mr_fast_reg_access_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct sroce_mr *mr = mr_add_fast_reg(test, 13, rw);
	struct page *other = alloc_page(GFP_KERNEL | __GFP_ZERO);
	u64 *staged = kunit_kcalloc(test, MR_NPAGES, sizeof(u64), GFP_KERNEL);
	static const u8 data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct mr_inv_ctx ctx = { .env = env, .key = mr->key };
	struct task_struct *task;
	struct sroce_mr *got;
	bool early;
	unsigned int i;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_NOT_NULL(test, staged);
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs a second CPU for the invalidation");
	init_completion(&ctx.go);
	init_completion(&ctx.done);
	for (i = 0; i < MR_NPAGES; i++)
		staged[i] = (u64)(uintptr_t)page_address(other);
	task = kthread_run(mr_inv_thread, &ctx, "sroce-kunit-inv");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));

	got = sroce_mr_lookup(env->sdev, env->pd, mr->key, true,
			      IB_ACCESS_REMOTE_WRITE, MR_FR_IOVA, 8, &err);
	if (!got)
		complete(&ctx.go);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	/* the owner maps its next registration meanwhile */
	mr->map_blocks = staged;
	mr->map_nblocks = MR_NPAGES;
	mr->map_shift = PAGE_SHIFT;
	mr->map_first_off = 0;
	err = sroce_mr_copy(got, MR_FR_IOVA, (void *)data, 8, SROCE_TO_MR);
	/* the invalidation starts on the other CPU; 50 ms to get through */
	complete(&ctx.go);
	mdelay(50);
	early = completion_done(&ctx.done);
	sroce_mr_put(got);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_MEMEQ(test, mr_fr_byte(test, MR_FR_IOVA), data, 8);
	KUNIT_EXPECT_FALSE_MSG(test, early,
			       "invalidated while an access was under way");
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&ctx.done, HZ));
	KUNIT_EXPECT_EQ(test, ctx.err, 0);
	KUNIT_EXPECT_EQ(test, mr->state, SROCE_MR_FREE);

	/* the next registration is the staged one, with the new key */
	mr->ibmr.type = IB_MR_TYPE_MEM_REG;
	mr->ibmr.iova = MR_FR_IOVA;
	mr->ibmr.length = PAGE_SIZE;
	mr->blocks = kunit_kcalloc(test, MR_NPAGES, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->blocks);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(mr, env->pd, mr->key + 1, rw),
			0);
	got = sroce_mr_lookup(env->sdev, env->pd, mr->key, true,
			      IB_ACCESS_REMOTE_WRITE, MR_FR_IOVA, 8, &err);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);
	err = sroce_mr_copy(got, MR_FR_IOVA, (void *)data, 8, SROCE_TO_MR);
	sroce_mr_put(got);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(other), data, 8);
	__free_page(other);
}

/* A peer may invalidate only an rkey: an MR with a remote right. */
static void mr_remote_invalidate_test(struct kunit *test)
{
	struct mr_env *env = test->priv;
	struct sroce_mr *local = mr_add_fast_reg(test, 14,
						 IB_ACCESS_LOCAL_WRITE);

	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->pd,
						  local->key, true), -EACCES);
	KUNIT_EXPECT_EQ(test, local->state, SROCE_MR_VALID);
	KUNIT_EXPECT_EQ(test, sroce_mr_invalidate(env->sdev, env->pd,
						  local->key, false), 0);
	KUNIT_EXPECT_EQ(test, local->state, SROCE_MR_FREE);
}

/* -------------------------------------------------- completion status */

/* Each MR error's completion status, local and remote. */
static void mr_wc_status_test(struct kunit *test)
{
	static const int errs[] = { -ENOKEY, -EKEYREVOKED, -EPERM, -EACCES,
				    -ERANGE, -EFAULT };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(errs[i], false),
				IB_WC_LOC_PROT_ERR);
		KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(errs[i], true),
				IB_WC_REM_ACCESS_ERR);
	}
	KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(-ENOSPC, false),
			IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(-ENOSPC, true),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(-EINVAL, false),
			IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, sroce_mr_wc_status(-EINVAL, true),
			IB_WC_REM_INV_REQ_ERR);
}

static struct kunit_case sroce_mr_cases[] = {
	KUNIT_CASE(mr_range_ok_test),
	KUNIT_CASE(mr_range_exhaustive_test),
	KUNIT_CASE(mr_lookup_test),
	KUNIT_CASE(mr_copy_test),
	KUNIT_CASE(mr_copy_skb_page_test),
	KUNIT_CASE(mr_fast_reg_copy_test),
	KUNIT_CASE(mr_atomic_test),
	KUNIT_CASE(mr_sgl_copy_test),
	KUNIT_CASE(mr_sgl_access_test),
	KUNIT_CASE(mr_sgl_advance_test),
	KUNIT_CASE(mr_invalidate_test),
	KUNIT_CASE(mr_fast_reg_access_test),
	KUNIT_CASE(mr_remote_invalidate_test),
	KUNIT_CASE(mr_wc_status_test),
	{}
};

static struct kunit_suite sroce_mr_suite = {
	.name = "sroce_mr",
	.init = mr_env_init,
	.exit = mr_env_exit,
	.test_cases = sroce_mr_cases,
};

kunit_test_suites(&sroce_mr_suite);

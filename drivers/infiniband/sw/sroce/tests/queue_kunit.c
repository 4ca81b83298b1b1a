// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the shared rings (queue.h, queue.c): index math,
 * allocation sizes, resize, and taking and posting receive WQEs.
 *
 * The rings are kernel rings (no user context), which have the layout and
 * the code paths of user rings; a test plays the other side by writing
 * the shared header directly, as a hostile program could.
 *
 * What it proves:
 *  - a ring asked for n elements holds the next 2^k - 1 >= n, with slots
 *    of at least a cache line; impossible sizes are -EINVAL;
 *  - empty and full are right, counts follow produce and consume across
 *    many wraps, and each index maps to its own slot;
 *  - whatever the other side writes into the shared header (indices far
 *    beyond the ring, unmasked, consumer + capacity + 1, all ones), no
 *    slot outside the ring is ever addressed, no count exceeds the
 *    capacity, and the driver's own index stays masked;
 *  - resize keeps the queued elements in order, refuses a ring that is
 *    too small without changing anything, and trusts only masked indices;
 *  - receive WQEs round-trip through post and take; a WQE with too many
 *    SGEs or too long a total is consumed and refused; an empty ring
 *    gives -ENOENT and a full one -ENOMEM.
 */
#include <kunit/test.h>
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "../queue.h"

/* Hostile values for an index in the shared header, around @base */
static u32 queue_hostile(unsigned int i, u32 base, u32 cap)
{
	static const u32 fixed[] = {
		0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};

	switch (i) {
	case 0: return base + cap + 1;		/* "more than full" */
	case 1: return base + cap;		/* full, unmasked */
	case 2: return base + cap + 2;
	case 3: return base + 2 * (cap + 1);	/* a whole ring beyond */
	case 4: return base - 1;		/* behind */
	case 5: return base + 0x10000 * (cap + 1) + 3;
	case 6: return ~base;
	default:
		return fixed[(i - 7) % ARRAY_SIZE(fixed)];
	}
}

#define QUEUE_NR_HOSTILE	13

/*
 * The other end of a ring publishes its index as librxe does, with a
 * release store: the slots it wrote or read are done before the index.
 */
static void queue_set_prod(struct sroce_queue *q, u32 prod)
{
	/* Pairs with the acquire in sroce_queue_cons_count(). */
	smp_store_release(&q->buf->producer_index, prod);
}

static void queue_set_cons(struct sroce_queue *q, u32 cons)
{
	/* Pairs with the acquire in sroce_queue_prod_count(). */
	smp_store_release(&q->buf->consumer_index, cons);
}

static void queue_init(struct kunit *test, struct sroce_queue *q, u32 n,
		       u32 elem_size, enum sroce_queue_dir dir)
{
	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, NULL, n, elem_size, dir), 0);
}

/* @p is the start of a slot of @q */
static void queue_expect_slot(struct kunit *test, const struct sroce_queue *q,
			      const void *p)
{
	const u8 *data = (const u8 *)q->buf->data;
	size_t slots = (size_t)q->index_mask + 1;
	size_t off;

	KUNIT_ASSERT_TRUE(test, (const u8 *)p >= data);
	off = (const u8 *)p - data;
	KUNIT_EXPECT_LT(test, off, slots << q->log2_elem_size);
	KUNIT_EXPECT_EQ(test, off & ((1UL << q->log2_elem_size) - 1), 0);
	/* and the slot is inside the allocation */
	KUNIT_EXPECT_LE(test, sizeof(*q->buf) + off + (1UL << q->log2_elem_size),
			q->buf_size);
}

/* Sizes: capacity 2^k - 1 >= n, cache-line slots, header fields. */
static void queue_init_sizes_test(struct kunit *test)
{
	static const struct { u32 n, cap; } sizes[] = {
		{ 1, 1 }, { 2, 3 }, { 3, 3 }, { 4, 7 }, { 7, 7 }, { 8, 15 },
		{ 255, 255 }, { 256, 511 }, { 1023, 1023 }, { 1024, 2047 },
	};
	static const u32 elems[] = { 1, 16, 64, 65, 100, 4096, 4097 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		KUNIT_EXPECT_EQ(test, sroce_queue_capacity_for(sizes[i].n),
				sizes[i].cap);
		for (j = 0; j < ARRAY_SIZE(elems); j++) {
			struct sroce_queue q;
			u32 slot;

			queue_init(test, &q, sizes[i].n, elems[j],
				   SROCE_QUEUE_DRIVER_CONSUMES);
			slot = 1U << q.log2_elem_size;
			KUNIT_EXPECT_EQ(test, sroce_queue_capacity(&q),
					sizes[i].cap);
			KUNIT_EXPECT_GE(test, slot, elems[j]);
			KUNIT_EXPECT_GE(test, slot, (u32)L1_CACHE_BYTES);
			KUNIT_EXPECT_LT(test, slot / 2, max_t(u32, elems[j],
							      L1_CACHE_BYTES));
			KUNIT_EXPECT_EQ(test, q.buf->index_mask, q.index_mask);
			KUNIT_EXPECT_EQ(test, q.buf->log2_elem_size,
					q.log2_elem_size);
			KUNIT_EXPECT_GE(test, q.buf_size, sizeof(*q.buf) +
					((size_t)q.index_mask + 1) * slot);
			KUNIT_EXPECT_TRUE(test, sroce_queue_empty(&q));
			KUNIT_EXPECT_FALSE(test, sroce_queue_is_user(&q));
			sroce_queue_free(&q);
			KUNIT_EXPECT_NULL(test, q.buf);
		}
	}
}

/* Sizes that cannot be represented are refused, and leave nothing. */
static void queue_init_invalid_test(struct kunit *test)
{
	struct sroce_queue q;

	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, 0, 64,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	KUNIT_EXPECT_NULL(test, q.buf);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, SZ_1G, 64,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, U32_MAX, 64,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, 16, 0,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, 16, SZ_1M + 1,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	/* more than INT_MAX bytes */
	KUNIT_EXPECT_EQ(test, sroce_queue_init(&q, NULL, SZ_1G - 1, SZ_1M,
					       SROCE_QUEUE_DRIVER_CONSUMES),
			-EINVAL);
	/* freeing a ring that was never set up is harmless */
	sroce_queue_free(&q);
}

/*
 * The driver produces (a CQ), the test consumes through the shared
 * header: counts, full and empty, over five wraps; slots in order.
 */
static void queue_produce_wrap_test(struct kunit *test)
{
	struct sroce_queue q;
	u32 cap, i, cons = 0, expect = 0;

	queue_init(test, &q, 7, 32, SROCE_QUEUE_DRIVER_PRODUCES);
	cap = sroce_queue_capacity(&q);
	KUNIT_ASSERT_EQ(test, cap, 7);
	for (i = 0; i < 5 * (cap + 1) * cap; i++) {
		u32 *slot;

		if (sroce_queue_full(&q)) {
			KUNIT_EXPECT_EQ(test, sroce_queue_prod_count(&q), cap);
			/* consume everything, in order */
			while (cons != q.prod) {
				slot = sroce_queue_slot(&q, cons);
				KUNIT_EXPECT_EQ(test, *slot, expect++);
				cons = (cons + 1) & q.index_mask;
			}
			queue_set_cons(&q, cons);
			KUNIT_EXPECT_EQ(test, sroce_queue_prod_count(&q), 0);
		}
		KUNIT_EXPECT_EQ(test, sroce_queue_prod_count(&q),
				(q.prod - cons) & q.index_mask);
		slot = sroce_queue_producer_addr(&q);
		queue_expect_slot(test, &q, slot);
		KUNIT_EXPECT_PTR_EQ(test, (void *)slot,
				    sroce_queue_slot(&q, q.prod));
		*slot = i;
		sroce_queue_advance_producer(&q);
		KUNIT_EXPECT_LE(test, q.prod, q.index_mask);
		KUNIT_EXPECT_EQ(test, q.buf->producer_index, q.prod);
	}
	sroce_queue_free(&q);
}

/*
 * The driver consumes (an RQ), the test produces through the shared
 * header: empty after each drain, counts over many wraps.
 */
static void queue_consume_wrap_test(struct kunit *test)
{
	struct sroce_queue q;
	u32 cap, round, prod = 0;

	queue_init(test, &q, 4, 64, SROCE_QUEUE_DRIVER_CONSUMES);
	cap = sroce_queue_capacity(&q);
	KUNIT_ASSERT_EQ(test, cap, 7);
	for (round = 0; round < 40; round++) {
		u32 n = round % (cap + 1), k;

		for (k = 0; k < n; k++) {
			*(u32 *)sroce_queue_slot(&q, prod) = round * 100 + k;
			prod = (prod + 1) & q.index_mask;
		}
		queue_set_prod(&q, prod);
		KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&q), n);
		KUNIT_EXPECT_EQ(test, sroce_queue_empty(&q), n == 0);
		for (k = 0; k < n; k++) {
			u32 *slot = sroce_queue_consumer_addr(&q);

			queue_expect_slot(test, &q, slot);
			KUNIT_EXPECT_EQ(test, *slot, round * 100 + k);
			sroce_queue_advance_consumer(&q);
			KUNIT_EXPECT_LE(test, q.cons, q.index_mask);
			KUNIT_EXPECT_EQ(test, q.buf->consumer_index, q.cons);
			KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&q),
					n - k - 1);
		}
		KUNIT_EXPECT_TRUE(test, sroce_queue_empty(&q));
	}
	sroce_queue_free(&q);
}

/* sroce_queue_slot() stays in the ring for any index at all. */
static void queue_slot_any_index_test(struct kunit *test)
{
	static const u32 idx[] = {
		0, 1, 7, 8, 9, 0x7fffffff, 0x80000000, 0xfffffff8, 0xffffffff,
	};
	struct sroce_queue q;
	unsigned int i;
	u32 x;

	queue_init(test, &q, 7, 100, SROCE_QUEUE_DRIVER_CONSUMES);
	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		queue_expect_slot(test, &q, sroce_queue_slot(&q, idx[i]));
		KUNIT_EXPECT_PTR_EQ(test, sroce_queue_slot(&q, idx[i]),
				    sroce_queue_slot(&q, idx[i] & q.index_mask));
	}
	for (x = 1; x; x <<= 1)
		queue_expect_slot(test, &q, sroce_queue_slot(&q, x - 1));
	sroce_queue_free(&q);
}

/*
 * Hostile producer index on a ring the driver consumes, and hostile
 * consumer index on one it produces: counts within capacity, slots
 * within the ring, the driver's index untouched and masked, at every
 * position of the driver's own index.
 */
static void queue_hostile_indices_test(struct kunit *test)
{
	struct sroce_queue rq, cq;
	u32 cap, pos, i;

	queue_init(test, &rq, 15, 64, SROCE_QUEUE_DRIVER_CONSUMES);
	queue_init(test, &cq, 15, 64, SROCE_QUEUE_DRIVER_PRODUCES);
	cap = sroce_queue_capacity(&rq);

	for (pos = 0; pos <= cap; pos++) {
		for (i = 0; i < QUEUE_NR_HOSTILE; i++) {
			u32 bad = queue_hostile(i, pos, cap);

			/* consumer side: the program's producer index */
			rq.cons = pos;
			WRITE_ONCE(rq.buf->producer_index, bad);
			KUNIT_EXPECT_LE_MSG(test, sroce_queue_cons_count(&rq),
					    cap, "prod 0x%x cons %u", bad, pos);
			KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&rq),
					(bad - pos) & rq.index_mask);
			queue_expect_slot(test, &rq,
					  sroce_queue_consumer_addr(&rq));
			if (!sroce_queue_empty(&rq)) {
				sroce_queue_advance_consumer(&rq);
				KUNIT_EXPECT_LE(test, rq.cons, rq.index_mask);
				KUNIT_EXPECT_EQ(test, rq.cons,
						(pos + 1) & rq.index_mask);
			}
			/* "consumer + capacity + 1" is empty, not 2^n */
			if (i == 0)
				KUNIT_EXPECT_TRUE(test, sroce_queue_empty(&rq));

			/* producer side: the program's consumer index */
			cq.prod = pos;
			WRITE_ONCE(cq.buf->consumer_index, bad);
			KUNIT_EXPECT_LE_MSG(test, sroce_queue_prod_count(&cq),
					    cap, "cons 0x%x prod %u", bad, pos);
			queue_expect_slot(test, &cq,
					  sroce_queue_producer_addr(&cq));
			if (!sroce_queue_full(&cq)) {
				sroce_queue_advance_producer(&cq);
				KUNIT_EXPECT_LE(test, cq.prod, cq.index_mask);
				KUNIT_EXPECT_EQ(test, cq.buf->producer_index,
						cq.prod);
			}
			/* the rings' geometry is the driver's, not the header's */
			WRITE_ONCE(rq.buf->index_mask, bad);
			WRITE_ONCE(rq.buf->log2_elem_size, bad);
			KUNIT_EXPECT_EQ(test, sroce_queue_capacity(&rq), cap);
			queue_expect_slot(test, &rq,
					  sroce_queue_slot(&rq, bad));
		}
	}
	sroce_queue_free(&rq);
	sroce_queue_free(&cq);
}

/* Fill a CQ-like ring with @n elements numbered from @first. */
static void queue_fill(struct sroce_queue *q, u32 first, u32 n)
{
	u32 k;

	for (k = 0; k < n; k++) {
		*(u32 *)sroce_queue_producer_addr(q) = first + k;
		sroce_queue_advance_producer(q);
	}
}

/*
 * Resize moves what is queued, in order, across the wrap of the old
 * ring; a ring too small is refused and nothing changes.
 */
static void queue_resize_test(struct kunit *test)
{
	struct sroce_queue q, big, small;
	u32 k;

	queue_init(test, &q, 7, 32, SROCE_QUEUE_DRIVER_PRODUCES);
	/* move the indices near the end, then queue 6 across the wrap */
	q.prod = 5;
	q.buf->producer_index = 5;
	q.buf->consumer_index = 5;
	queue_fill(&q, 1000, 6);
	KUNIT_ASSERT_EQ(test, sroce_queue_prod_count(&q), 6);

	queue_init(test, &small, 3, 32, SROCE_QUEUE_DRIVER_PRODUCES);
	KUNIT_EXPECT_EQ(test, sroce_queue_resize_commit(&q, &small), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_capacity(&q), 7);
	KUNIT_EXPECT_EQ(test, sroce_queue_prod_count(&q), 6);
	sroce_queue_free(&small);

	queue_init(test, &big, 31, 32, SROCE_QUEUE_DRIVER_PRODUCES);
	KUNIT_ASSERT_EQ(test, sroce_queue_resize_commit(&q, &big), 0);
	KUNIT_EXPECT_EQ(test, sroce_queue_capacity(&q), 31);
	KUNIT_EXPECT_EQ(test, sroce_queue_capacity(&big), 7);
	KUNIT_EXPECT_EQ(test, sroce_queue_prod_count(&q), 6);
	KUNIT_EXPECT_EQ(test, q.buf->consumer_index, 0);
	KUNIT_EXPECT_EQ(test, q.buf->producer_index, 6);
	for (k = 0; k < 6; k++)
		KUNIT_EXPECT_EQ(test, *(u32 *)sroce_queue_slot(&q, k), 1000 + k);
	sroce_queue_free(&big);
	sroce_queue_free(&q);
}

/*
 * Resize with a hostile index in the shared header: the count it implies
 * is masked, never more than the old ring holds, and the copy stays in
 * both rings (KASAN would see a slot read past the old ring).
 */
static void queue_resize_hostile_test(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < QUEUE_NR_HOSTILE; i++) {
		struct sroce_queue q, new_q;
		u32 bad;
		int err;

		queue_init(test, &q, 7, 32, SROCE_QUEUE_DRIVER_CONSUMES);
		queue_init(test, &new_q, 15, 32, SROCE_QUEUE_DRIVER_CONSUMES);
		q.cons = 3;
		bad = queue_hostile(i, 3, 7);
		WRITE_ONCE(q.buf->producer_index, bad);
		err = sroce_queue_resize_commit(&q, &new_q);
		KUNIT_EXPECT_EQ(test, err, 0);
		KUNIT_EXPECT_LE(test, sroce_queue_cons_count(&q), 7);
		KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&q),
				(bad - 3) & 7);
		KUNIT_EXPECT_EQ(test, q.cons, 0);
		sroce_queue_free(&new_q);
		sroce_queue_free(&q);
	}
}

/* A ring of receive WQEs with @max_sge SGEs each */
static void queue_recvq_init(struct kunit *test, struct sroce_queue *q,
			     u32 n, u32 max_sge)
{
	queue_init(test, q, n, sroce_recvq_elem_size(max_sge),
		   SROCE_QUEUE_DRIVER_CONSUMES);
}

/* Receive WQEs round-trip through post and take, with their SGEs. */
static void queue_recvq_roundtrip_test(struct kunit *test)
{
	struct sroce_recv_wqe_copy *out;
	struct ib_sge sge[4];
	struct ib_recv_wr wr = { .sg_list = sge };
	struct sroce_queue q;
	unsigned int i, k;

	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	queue_recvq_init(test, &q, 3, 4);
	KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 4, out), -ENOENT);

	for (i = 0; i < 20; i++) {
		wr.wr_id = 0x1000 + i;
		wr.num_sge = i % 5;
		for (k = 0; k < 4; k++) {
			sge[k].addr = 0xffff000000000000ULL + i * 0x100 + k;
			sge[k].length = 1000 * (k + 1);
			sge[k].lkey = 0x500 + k;
		}
		KUNIT_ASSERT_EQ(test, sroce_recvq_post_one(&q, 4, &wr), 0);
		memset(out, 0xcc, sizeof(*out));
		KUNIT_ASSERT_EQ(test, sroce_recvq_take(&q, 4, out), 0);
		KUNIT_EXPECT_EQ(test, out->wr_id, 0x1000 + i);
		KUNIT_EXPECT_EQ(test, out->num_sge, i % 5);
		KUNIT_EXPECT_EQ(test, out->length,
				500 * (i % 5) * (i % 5 + 1));
		for (k = 0; k < out->num_sge; k++) {
			KUNIT_EXPECT_EQ(test, out->sge[k].addr, sge[k].addr);
			KUNIT_EXPECT_EQ(test, out->sge[k].length, sge[k].length);
			KUNIT_EXPECT_EQ(test, out->sge[k].lkey, sge[k].lkey);
		}
		KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 4, out), -ENOENT);
	}
	sroce_queue_free(&q);
}

/* A full ring is -ENOMEM, a bad scatter list -EINVAL, nothing posted. */
static void queue_recvq_post_errors_test(struct kunit *test)
{
	struct ib_sge sge[3] = {
		{ .length = SZ_1G }, { .length = SZ_1G }, { .length = 1 },
	};
	struct ib_recv_wr wr = { .sg_list = sge, .num_sge = 1 };
	struct sroce_queue q;
	u32 k;

	queue_recvq_init(test, &q, 3, 2);
	wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), -EINVAL);
	wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), -EINVAL);
	wr.num_sge = INT_MIN;
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), -EINVAL);
	/* exactly 2 GiB is the limit */
	wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), 0);
	sge[1].length = SZ_1G + 1;
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&q), 1);

	wr.num_sge = 0;
	for (k = 1; k < sroce_queue_capacity(&q); k++)
		KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), 0);
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(&q));
	KUNIT_EXPECT_EQ(test, sroce_recvq_post_one(&q, 2, &wr), -ENOMEM);
	KUNIT_EXPECT_EQ(test, sroce_queue_cons_count(&q), 3);
	sroce_queue_free(&q);
}

/*
 * WQEs a program wrote into the ring: too many SGEs (any count above
 * max_sge, up to all ones) or a total over 2 GiB is consumed and
 * refused with wr_id kept and nothing else; the ring's own length fields
 * are ignored.
 */
static void queue_recvq_hostile_wqe_test(struct kunit *test)
{
	static const u32 counts[] = { 3, 4, 32, 33, 0x80000000, 0xffffffff };
	struct sroce_recv_wqe_copy *out;
	struct rxe_recv_wqe *wqe;
	struct sroce_queue q;
	unsigned int i;

	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	queue_recvq_init(test, &q, 7, 2);

	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		u32 prod = q.cons;

		wqe = sroce_queue_slot(&q, prod);
		memset(wqe, 0, 1U << q.log2_elem_size);
		wqe->wr_id = 77 + i;
		wqe->dma.num_sge = counts[i];
		wqe->dma.length = 1;
		queue_set_prod(&q, (prod + 1) & q.index_mask);
		KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 2, out), -EINVAL);
		KUNIT_EXPECT_EQ(test, out->wr_id, 77 + i);
		KUNIT_EXPECT_EQ(test, out->num_sge, 0);
		KUNIT_EXPECT_EQ(test, out->length, 0);
		KUNIT_EXPECT_TRUE(test, sroce_queue_empty(&q));
	}

	/* two SGEs of 2 GiB - 1 and 2: over the limit */
	wqe = sroce_queue_slot(&q, q.cons);
	wqe->wr_id = 99;
	wqe->dma.num_sge = 2;
	wqe->dma.length = 0;
	wqe->dma.sge[0].length = SZ_2G - 1;
	wqe->dma.sge[1].length = 2;
	queue_set_prod(&q, (q.cons + 1) & q.index_mask);
	KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 2, out), -EINVAL);
	KUNIT_EXPECT_EQ(test, out->wr_id, 99);
	KUNIT_EXPECT_EQ(test, out->num_sge, 0);

	/* both at U32_MAX: the sum must not wrap into something small */
	wqe = sroce_queue_slot(&q, q.cons);
	wqe->dma.num_sge = 2;
	wqe->dma.sge[0].length = U32_MAX;
	wqe->dma.sge[1].length = U32_MAX;
	queue_set_prod(&q, (q.cons + 1) & q.index_mask);
	KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 2, out), -EINVAL);

	/* a good one, with a lying length field */
	wqe = sroce_queue_slot(&q, q.cons);
	wqe->wr_id = 100;
	wqe->dma.num_sge = 2;
	wqe->dma.length = 5;
	wqe->dma.sge[0].length = 4096;
	wqe->dma.sge[1].length = 1;
	queue_set_prod(&q, (q.cons + 1) & q.index_mask);
	KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 2, out), 0);
	KUNIT_EXPECT_EQ(test, out->num_sge, 2);
	KUNIT_EXPECT_EQ(test, out->length, 4097);

	/* a producer index a whole ring ahead means empty */
	queue_set_prod(&q, q.cons + q.index_mask + 1);
	KUNIT_EXPECT_EQ(test, sroce_recvq_take(&q, 2, out), -ENOENT);
	sroce_queue_free(&q);
}

static struct kunit_case sroce_queue_cases[] = {
	KUNIT_CASE(queue_init_sizes_test),
	KUNIT_CASE(queue_init_invalid_test),
	KUNIT_CASE(queue_produce_wrap_test),
	KUNIT_CASE(queue_consume_wrap_test),
	KUNIT_CASE(queue_slot_any_index_test),
	KUNIT_CASE(queue_hostile_indices_test),
	KUNIT_CASE(queue_resize_test),
	KUNIT_CASE(queue_resize_hostile_test),
	KUNIT_CASE(queue_recvq_roundtrip_test),
	KUNIT_CASE(queue_recvq_post_errors_test),
	KUNIT_CASE(queue_recvq_hostile_wqe_test),
	{}
};

static struct kunit_suite sroce_queue_suite = {
	.name = "sroce_queue",
	.test_cases = sroce_queue_cases,
};

kunit_test_suites(&sroce_queue_suite);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rings shared with userspace (or with kernel verbs callers) in librxe's
 * layout: allocation, resizing, and taking and posting receive WQEs.
 * The rules for hostile user rings are at the top of queue.h.
 */
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "mmap.h"
#include "queue.h"

/* The layout librxe was built against (rdma-core providers/rxe). */
static_assert(sizeof(struct rxe_queue_buf) == 384);
static_assert(offsetof(struct rxe_queue_buf, producer_index) == 128);
static_assert(offsetof(struct rxe_queue_buf, consumer_index) == 256);
static_assert(offsetof(struct rxe_queue_buf, data) == 384);
static_assert(sizeof(struct rxe_sge) == 16);
static_assert(sizeof(struct rxe_recv_wqe) == 40);
static_assert(offsetof(struct rxe_recv_wqe, dma.sge) == 40);
static_assert(sizeof(struct mminfo) == 16);

/**
 * sroce_queue_init - allocate a ring
 * @q: the ring to set up
 * @uctx: the user context that will map the ring, or NULL for a ring only
 *	the kernel sees
 * @num_elem: the number of elements the ring must hold, at least 1
 * @elem_size: the size of one element
 * @dir: which end the driver is
 *
 * Slots are a power of two of at least a cache line, and there is one
 * slot more than requested (rounded up to a power of two), since a full
 * ring keeps one slot free.  A user ring is published for mmap at once;
 * sroce_queue_mminfo() tells where.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for a size that cannot be represented, or -ENOMEM.
 */
int sroce_queue_init(struct sroce_queue *q, struct ib_ucontext *uctx,
		     u32 num_elem, u32 elem_size, enum sroce_queue_dir dir)
{
	u32 slot_size, num_slots;
	size_t buf_size;

	memset(q, 0, sizeof(*q));
	/*
	 * The limits in params.h keep real rings far below these bounds;
	 * they only stop the arithmetic below from wrapping.
	 */
	if (!num_elem || num_elem >= SZ_1G || !elem_size || elem_size > SZ_1M)
		return -EINVAL;

	slot_size = roundup_pow_of_two(max_t(u32, elem_size, L1_CACHE_BYTES));
	num_slots = sroce_queue_capacity_for(num_elem) + 1;
	if (check_mul_overflow((size_t)num_slots, (size_t)slot_size,
			       &buf_size) ||
	    check_add_overflow(buf_size, sizeof(struct rxe_queue_buf),
			       &buf_size))
		return -EINVAL;

	/* mminfo.size is 32 bits, and kvmalloc() refuses above INT_MAX. */
	if (uctx)
		buf_size = PAGE_ALIGN(buf_size);
	if (buf_size > INT_MAX)
		return -EINVAL;

	/*
	 * Zeroed either way: no stale kernel memory reaches userspace.  A
	 * user's rings are charged to its memory cgroup (sroce_mmap() maps
	 * them page by page, so they need not be vmalloc_user()'s); over
	 * its limit the verb fails with ENOMEM rather than call in the
	 * OOM killer (SROCE_GFP_USER).
	 */
	if (uctx)
		q->buf = __vmalloc(buf_size, SROCE_GFP_USER | __GFP_ZERO);
	else
		q->buf = kvzalloc(buf_size, GFP_KERNEL);
	if (!q->buf)
		return -ENOMEM;

	q->buf_size = buf_size;
	q->elem_size = elem_size;
	q->log2_elem_size = ilog2(slot_size);
	q->index_mask = num_slots - 1;
	q->dir = dir;
	/* For userspace only; the driver never reads these back. */
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;

	if (uctx) {
		q->mentry = sroce_mmap_entry_create(uctx, q->buf, buf_size);
		if (IS_ERR(q->mentry)) {
			int err = PTR_ERR(q->mentry);

			vfree(q->buf);
			memset(q, 0, sizeof(*q));
			return err;
		}
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_init);

/**
 * sroce_queue_free - release a ring
 * @q: the ring; may be all zero (never set up, or already freed)
 *
 * A user ring stays allocated until userspace has unmapped it as well;
 * the driver must not touch it after this.
 *
 * Context: process context.
 */
void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mentry)
		sroce_mmap_entry_remove(q->mentry);	/* frees q->buf later */
	else
		kvfree(q->buf);
	memset(q, 0, sizeof(*q));
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_free);

/**
 * sroce_queue_free_under - release a ring others may read under a lock
 * @q: the ring
 * @lock: the irqsave lock with which they read its indices (rdma res
 *	reads a CQ's or an SRQ's fill, restrack.c): they find an empty
 *	ring (no buf) from then on
 *
 * Context: process context, as sroce_queue_free().
 */
void sroce_queue_free_under(struct sroce_queue *q, spinlock_t *lock)
{
	struct sroce_queue old;
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	old = *q;
	memset(q, 0, sizeof(*q));
	spin_unlock_irqrestore(lock, flags);
	sroce_queue_free(&old);
}

/**
 * sroce_queue_mminfo - where userspace maps a user ring
 * @q: a user ring
 * @mi: filled with the mmap offset and size
 */
void sroce_queue_mminfo(const struct sroce_queue *q, struct mminfo *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->offset = sroce_mmap_entry_offset(q->mentry);
	mi->size = q->buf_size;
}

/**
 * sroce_queue_resize_commit - move the queued elements to a new ring
 * @q: the ring in use
 * @new_q: a fresh ring from sroce_queue_init(), same element size and
 *	direction, and user if @q is
 *
 * On success @q describes the new ring, holding the elements of the old
 * one in order, and @new_q the old ring; on failure nothing changes.
 * Either way the caller frees @new_q with sroce_queue_free() once it has
 * dropped its locks.
 *
 * The caller holds the locks of both ends of the ring, so that neither
 * the driver nor a kernel user touches it meanwhile.  Userspace is not
 * stopped: what it changes while we copy is its own problem, as long as
 * we stay inside the ring, since every element is checked when it is
 * taken from the new ring.
 *
 * Context: any; does not sleep.
 * Return: 0, or -EINVAL if the new ring is too small for what is queued.
 */
int sroce_queue_resize_commit(struct sroce_queue *q, struct sroce_queue *new_q)
{
	u32 prod, cons, count, i;

	if (WARN_ON_ONCE(new_q->elem_size != q->elem_size ||
			 new_q->dir != q->dir ||
			 !new_q->mentry != !q->mentry))
		return -EINVAL;

	/* Trust only the indices the kernel wrote itself. */
	if (q->dir == SROCE_QUEUE_DRIVER_PRODUCES) {
		prod = q->prod;
		/* Pairs with the consumer's release of the slots it read. */
		cons = smp_load_acquire(&q->buf->consumer_index) &
		       q->index_mask;
	} else {
		/* Pairs with the producer's release of the slots it wrote. */
		prod = smp_load_acquire(&q->buf->producer_index) &
		       q->index_mask;
		cons = q->cons;
	}

	count = (prod - cons) & q->index_mask;
	if (count > sroce_queue_capacity(new_q))
		return -EINVAL;

	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(new_q, i),
		       sroce_queue_slot(q, cons + i), q->elem_size);

	new_q->prod = count;
	new_q->cons = 0;
	new_q->buf->producer_index = count;
	new_q->buf->consumer_index = 0;

	swap(*q, *new_q);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_resize_commit);

/**
 * sroce_recvq_take - take the next receive WQE from a receive ring
 * @q: an RQ or SRQ ring, the driver its consumer
 * @max_sge: the ring's max_sge, as fixed when it was created
 * @out: the WQE, copied into kernel memory
 *
 * The WQE is copied out of the ring before it is looked at and only the
 * copy is checked and used, so a user rewriting the ring meanwhile
 * cannot change what was validated.  The lengths and SGE cursor in the
 * ring are ignored; @out->length is recomputed.
 *
 * A WQE that fails validation is still consumed (the ring must not get
 * stuck on it): the caller completes @out->wr_id in error, typically
 * IB_WC_LOC_QP_OP_ERR, and moves the QP to the error state.
 *
 * Context: any; the caller holds the consumer-side lock of the ring.
 * Return: 0; -ENOENT if the ring is empty (nothing is consumed); -EINVAL
 * for a malformed WQE (consumed, @out->wr_id valid, @out->num_sge 0).
 */
int sroce_recvq_take(struct sroce_queue *q, u32 max_sge,
		     struct sroce_recv_wqe_copy *out)
{
	const struct rxe_recv_wqe *wqe;
	u64 length = 0;
	u32 num_sge, i;
	int err = 0;

	if (WARN_ON_ONCE(max_sge > SROCE_MAX_RECV_SGE ||
			 sroce_recvq_elem_size(max_sge) > q->elem_size))
		return -EINVAL;
	if (sroce_queue_empty(q))
		return -ENOENT;

	wqe = sroce_queue_consumer_addr(q);
	out->wr_id = READ_ONCE(wqe->wr_id);
	num_sge = READ_ONCE(wqe->dma.num_sge);
	if (num_sge > max_sge) {
		num_sge = 0;
		err = -EINVAL;
	}
	/* The slot holds max_sge entries, so this stays inside it. */
	memcpy(out->sge, wqe->dma.sge, num_sge * sizeof(out->sge[0]));
	sroce_queue_advance_consumer(q);

	for (i = 0; i < num_sge; i++)
		length += out->sge[i].length;
	if (length > SROCE_MAX_MSG_SIZE) {
		num_sge = 0;
		length = 0;
		err = -EINVAL;
	}
	out->num_sge = num_sge;
	out->length = length;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_recvq_take);

/**
 * sroce_recvq_post_one - post one kernel receive work request
 * @q: a kernel RQ or SRQ ring, the driver its consumer
 * @max_sge: the ring's max_sge
 * @wr: the work request; its next pointer is ignored
 *
 * Context: any; the caller holds the producer-side lock of the ring.
 * Return: 0, -EINVAL for a bad scatter list, or -ENOMEM if the ring is
 * full (what ib_post_recv callers expect).
 */
int sroce_recvq_post_one(struct sroce_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr)
{
	struct rxe_recv_wqe *wqe;
	u64 length = 0;
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	if (length > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	if (sroce_queue_full(q))
		return -ENOMEM;

	wqe = sroce_queue_producer_addr(q);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->dma.length = length;
	wqe->dma.resid = length;
	wqe->dma.num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
	}
	sroce_queue_advance_producer(q);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_recvq_post_one);

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Work and completion rings, shared with userspace in the layout librxe
 * expects (struct rxe_queue_buf from <rdma/rdma_user_rxe.h>), and the mmap
 * plumbing that hands them to userspace.
 *
 * A ring has 2^n slots of 2^m bytes after a 384-byte header holding the
 * producer and consumer indices; it holds at most 2^n - 1 elements.  One
 * side of every ring is the driver; the other is either userspace (user
 * rings) or a kernel verbs caller (kernel rings, same layout, never
 * mapped).
 *
 * Userspace may write anything to a user ring at any time, so:
 *  - the driver keeps a private copy of the index it owns and only ever
 *    publishes it, never reads it back from the ring;
 *  - the other side's index is read once, with acquire semantics, and
 *    masked before use;
 *  - elements taken from a user ring are copied into kernel memory before
 *    anything looks at them, and only the copy is validated and used.
 *
 * A ring is not locked internally: each end is serialised by its owner's
 * lock (see cq.h, srq.h and the QP code).  Only the ordering between the
 * two ends is handled here, by release stores and acquire loads of the
 * shared indices.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/log2.h>
#include <linux/types.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "params.h"

/**
 * enum sroce_queue_dir - which end of a ring the driver is
 * @SROCE_QUEUE_DRIVER_PRODUCES: the driver produces (completion queues)
 * @SROCE_QUEUE_DRIVER_CONSUMES: the driver consumes (send, receive and
 *	shared receive queues)
 */
enum sroce_queue_dir {
	SROCE_QUEUE_DRIVER_PRODUCES,
	SROCE_QUEUE_DRIVER_CONSUMES,
};

struct sroce_mmap_entry;

/**
 * struct sroce_queue - one ring
 * @buf: the ring: header then slots; __vmalloc() memory for user rings
 * @mentry: the mmap entry that owns @buf for user rings, NULL otherwise
 * @buf_size: bytes allocated for @buf, page aligned for user rings
 * @elem_size: bytes of one element that are meaningful (copied on resize)
 * @log2_elem_size: log2 of the slot size
 * @index_mask: number of slots - 1, the driver's authoritative copy
 * @prod: producer index as last written by the kernel
 * @cons: consumer index as last written by the kernel
 * @dir: which end the driver is
 *
 * For a user ring only the index of the driver's own end is meaningful
 * in @prod/@cons; the other one lives in @buf, owned by userspace.  For a
 * kernel ring both ends are kernel code and both private copies are
 * authoritative for their owner.
 */
struct sroce_queue {
	struct rxe_queue_buf *buf;
	struct sroce_mmap_entry *mentry;
	size_t buf_size;
	u32 elem_size;
	u32 log2_elem_size;
	u32 index_mask;
	u32 prod;
	u32 cons;
	enum sroce_queue_dir dir;
};

int sroce_queue_init(struct sroce_queue *q, struct ib_ucontext *uctx,
		     u32 num_elem, u32 elem_size, enum sroce_queue_dir dir);
void sroce_queue_free(struct sroce_queue *q);
void sroce_queue_free_under(struct sroce_queue *q, spinlock_t *lock);
void sroce_queue_mminfo(const struct sroce_queue *q, struct mminfo *mi);
int sroce_queue_resize_commit(struct sroce_queue *q,
			      struct sroce_queue *new_q);

/* The number of elements the ring can hold. */
static inline u32 sroce_queue_capacity(const struct sroce_queue *q)
{
	return q->index_mask;
}

/* What a ring set up for @num_elem elements will hold, at least that. */
static inline u32 sroce_queue_capacity_for(u32 num_elem)
{
	return roundup_pow_of_two(num_elem + 1) - 1;
}

static inline bool sroce_queue_is_user(const struct sroce_queue *q)
{
	return q->mentry;
}

static inline void *sroce_queue_slot(const struct sroce_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) <<
			       q->log2_elem_size);
}

/*
 * Producer end.  The caller holds the lock that serialises producers.
 */

/* Elements not yet consumed, as the producer sees them. */
static inline u32 sroce_queue_prod_count(const struct sroce_queue *q)
{
	/* Pairs with the consumer's release: its reads are done. */
	u32 cons = smp_load_acquire(&q->buf->consumer_index);

	return (q->prod - cons) & q->index_mask;
}

static inline bool sroce_queue_full(const struct sroce_queue *q)
{
	return sroce_queue_prod_count(q) == q->index_mask;
}

static inline void *sroce_queue_producer_addr(const struct sroce_queue *q)
{
	return sroce_queue_slot(q, q->prod);
}

static inline void sroce_queue_advance_producer(struct sroce_queue *q)
{
	q->prod = (q->prod + 1) & q->index_mask;
	/* Publish the element written at the old index before the index. */
	smp_store_release(&q->buf->producer_index, q->prod);
}

/*
 * Consumer end.  The caller holds the lock that serialises consumers.
 */

/* Elements ready to consume, as the consumer sees them. */
static inline u32 sroce_queue_cons_count(const struct sroce_queue *q)
{
	/* Pairs with the producer's release: the elements are written. */
	u32 prod = smp_load_acquire(&q->buf->producer_index);

	return (prod - q->cons) & q->index_mask;
}

static inline bool sroce_queue_empty(const struct sroce_queue *q)
{
	return !sroce_queue_cons_count(q);
}

static inline void *sroce_queue_consumer_addr(const struct sroce_queue *q)
{
	return sroce_queue_slot(q, q->cons);
}

static inline void sroce_queue_advance_consumer(struct sroce_queue *q)
{
	q->cons = (q->cons + 1) & q->index_mask;
	/* Finish reading the old slot before the producer may reuse it. */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

/*
 * Receive rings (a QP's RQ or an SRQ): slots hold struct rxe_recv_wqe
 * followed by up to max_sge struct rxe_sge.
 */
#define SROCE_MAX_RECV_SGE	SROCE_MAX_SGE
/* One bound for RQ and SRQ WQEs: raise it if the SRQ limit grows. */
static_assert(SROCE_MAX_SRQ_SGE <= SROCE_MAX_RECV_SGE);

/**
 * struct sroce_recv_wqe_copy - a receive WQE, copied out of its ring
 * @wr_id: the consumer's work request id
 * @num_sge: entries used in @sge, at most the ring's max_sge
 * @length: the sum of the @sge lengths, computed by the driver (the ring's
 *	own length fields are ignored), at most SROCE_MAX_MSG_SIZE
 * @sge: the scatter list; lkeys are not checked here
 */
struct sroce_recv_wqe_copy {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct rxe_sge sge[SROCE_MAX_RECV_SGE];
};

static inline u32 sroce_recvq_elem_size(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

int sroce_recvq_take(struct sroce_queue *q, u32 max_sge,
		     struct sroce_recv_wqe_copy *out);
int sroce_recvq_post_one(struct sroce_queue *q, u32 max_sge,
			 const struct ib_recv_wr *wr);

/*
 * The user context a verb was called in, for mapping its rings; NULL for
 * kernel callers.  Every uverbs command that reaches a driver with udata
 * has looked up or allocated an object, which set the context.
 */
static inline struct ib_ucontext *sroce_udata_ucontext(struct ib_udata *udata)
{
	return udata ? rdma_udata_to_uverbs_attr_bundle(udata)->context : NULL;
}

#endif /* SROCE_QUEUE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared receive queues.
 *
 * An SRQ is a receive ring (struct rxe_recv_wqe slots) the driver
 * consumes.  Userspace posts to a user SRQ directly (librxe); kernel
 * callers post through sroce_post_srq_recv().  The data path takes WQEs
 * with sroce_srq_take().
 *
 * Locking (both irqsave, so either may be taken from any context):
 *  - srq->lock: the consumer end and the limit; held by sroce_srq_take(),
 *    query and modify;
 *  - srq->producer_lock: the producer end of a kernel SRQ; held by
 *    sroce_post_srq_recv().
 * Only a resize holds both, srq->lock first.  No callback is made with
 * either held.
 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "queue.h"

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the core's object; must stay first
 * @lock: the consumer end, @limit; see above
 * @producer_lock: the producer end of a kernel SRQ
 * @queue: the ring; the driver is the consumer
 * @max_sge: the most SGEs a WQE may have, fixed at creation
 * @limit: the armed SRQ limit, 0 when not armed
 * @srq_num: the number reported to userspace
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* see above; irqsave */
	spinlock_t producer_lock;	/* see above; irqsave */
	struct sroce_queue queue;
	u32 max_sge;
	u32 limit;
	u32 srq_num;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_take(struct sroce_srq *srq, struct sroce_recv_wqe_copy *out);

/* The verbs, for struct ib_device_ops */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

#endif /* SROCE_SRQ_H */

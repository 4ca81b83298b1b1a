// SPDX-License-Identifier: GPL-2.0-only
/*
 * What "rdma res show qp|cq|mr|srq -dd" shows of sroce's own state: the
 * driver attributes of the RDMA core's resource tracking (the
 * fill_res_*_entry callbacks).  Documentation/sroce.rst, "Seeing into
 * the device", says what each field means.
 *
 * The callbacks run in process context, from a netlink dump, holding
 * none of the driver's locks, while the object is in use and even while
 * its destroy verb runs: the core removes a QP's, CQ's or SRQ's tracking
 * entry only after the verb, and frees the object after that (an MR's
 * entry goes before dereg_mr).  So:
 *  - QP: only fields of struct sroce_qp itself are read, never what it
 *    points to (rings, WQE copies, responder resources: destroy frees
 *    them).  The engine changes the fields meanwhile, without telling
 *    anyone (engine.h, rule 4): each is read once with READ_ONCE, so
 *    the values form a snapshot that may mix two moments -- enough to
 *    see a stalled QP, which does not move -- but never crash.
 *  - CQ, SRQ: how full the ring is comes from its indices, one of them
 *    in the ring's buffer: read under the queue's lock, with which
 *    destroy detaches the ring (sroce_queue_free_under()).
 *  - MR: the fields read are fixed at creation, or changed by a fast
 *    registration (READ_ONCE).
 */
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "sroce.h"
#include "cq.h"
#include "qp.h"
#include "restrack.h"
#include "srq.h"

enum sroce_res_kind {
	SROCE_RES_U32,
	SROCE_RES_HEX,		/* u64, in hex */
	SROCE_RES_STR,
};

/* One driver attribute: a name and its value */
struct sroce_res_attr {
	const char *name;
	enum sroce_res_kind kind;
	u64 val;
	const char *str;
};

#define SROCE_RES_U32(n, v)	{ .name = (n), .kind = SROCE_RES_U32, .val = (v) }
#define SROCE_RES_HEX(n, v)	{ .name = (n), .kind = SROCE_RES_HEX, .val = (v) }
#define SROCE_RES_STR(n, s)	{ .name = (n), .kind = SROCE_RES_STR, .str = (s) }

static int sroce_res_put_one(struct sk_buff *msg,
			     const struct sroce_res_attr *a)
{
	switch (a->kind) {
	case SROCE_RES_HEX:
		return rdma_nl_put_driver_u64_hex(msg, a->name, a->val);
	case SROCE_RES_STR:
		return rdma_nl_put_driver_string(msg, a->name, a->str);
	default:
		return rdma_nl_put_driver_u32(msg, a->name, a->val);
	}
}

/* The attributes, in the nested table where the rdma tool looks for them */
static int sroce_res_put(struct sk_buff *msg, const struct sroce_res_attr *a,
			 unsigned int n)
{
	struct nlattr *table;
	unsigned int i;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		if (sroce_res_put_one(msg, &a[i])) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}

static int sroce_fill_res_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	u32 head = READ_ONCE(qp->sq.head);
	const struct sroce_res_attr a[] = {
		SROCE_RES_U32("req_psn", READ_ONCE(qp->req.psn)),
		SROCE_RES_U32("comp_psn", READ_ONCE(qp->comp.psn)),
		SROCE_RES_U32("resp_psn", READ_ONCE(qp->resp.psn)),
		SROCE_RES_U32("resp_msn", READ_ONCE(qp->resp.msn)),
		/* fetched from the send ring and not yet completed */
		SROCE_RES_U32("wqe_outstanding", head - READ_ONCE(qp->req.tail)),
		/* fetched and not yet sent in full */
		SROCE_RES_U32("wqe_unsent", head - READ_ONCE(qp->req.next)),
		SROCE_RES_U32("rd_atomic", READ_ONCE(qp->req.rd_atomic)),
		SROCE_RES_U32("retransmits", READ_ONCE(qp->req.rewinds)),
		/* packets it may have in flight (cwnd.h) */
		SROCE_RES_U32("cwnd", READ_ONCE(qp->req.cwnd.window)),
		SROCE_RES_U32("retry_left", READ_ONCE(qp->comp.retry_left)),
		SROCE_RES_U32("rnr_left", READ_ONCE(qp->comp.rnr_left)),
		SROCE_RES_U32("rnr_wait", READ_ONCE(qp->comp.rnr_wait)),
		SROCE_RES_U32("nak_sent", READ_ONCE(qp->resp.nak_sent)),
		SROCE_RES_U32("rx_queue", skb_queue_len_lockless(&qp->rx_queue)),
		SROCE_RES_U32("held_requests",
			      skb_queue_len_lockless(&qp->resp.held)),
		SROCE_RES_U32("held_responses",
			      skb_queue_len_lockless(&qp->comp.held)),
		SROCE_RES_HEX("flags", READ_ONCE(qp->flags)),
	};

	return sroce_res_put(msg, a, ARRAY_SIZE(a));
}

/*
 * Elements in a CQ's or SRQ's ring: completions not yet polled, or
 * receive WQEs not yet taken.  Under the lock with which destroy detaches
 * the ring, since one of the indices is in its buffer.
 */
static u32 sroce_res_ring_used(const struct sroce_queue *q, spinlock_t *lock)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(lock, flags);
	if (q->buf)
		n = q->dir == SROCE_QUEUE_DRIVER_PRODUCES ?
		    sroce_queue_prod_count(q) : sroce_queue_cons_count(q);
	spin_unlock_irqrestore(lock, flags);
	return n;
}

static int sroce_fill_res_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	const struct sroce_res_attr a[] = {
		SROCE_RES_U32("used", sroce_res_ring_used(&cq->queue, &cq->lock)),
		SROCE_RES_U32("size", READ_ONCE(cq->queue.index_mask)),
		SROCE_RES_U32("armed", READ_ONCE(cq->notify)),
		SROCE_RES_U32("overflowed", READ_ONCE(cq->overflowed)),
	};

	return sroce_res_put(msg, a, ARRAY_SIZE(a));
}

static const char *sroce_mr_type_name(enum ib_mr_type type)
{
	switch (type) {
	case IB_MR_TYPE_DMA:
		return "dma";
	case IB_MR_TYPE_USER:
		return "user";
	case IB_MR_TYPE_MEM_REG:
		return "fast_reg";
	default:
		return "other";
	}
}

static int sroce_fill_res_mr(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	bool user = mr->type == IB_MR_TYPE_USER;
	bool fast_reg = mr->type == IB_MR_TYPE_MEM_REG;
	const struct sroce_res_attr a[] = {
		SROCE_RES_STR("type", sroce_mr_is_odp(mr) ? "odp" :
				      sroce_mr_type_name(mr->type)),
		SROCE_RES_STR("state", READ_ONCE(mr->state) == SROCE_MR_VALID ?
				       "valid" : "free"),
		SROCE_RES_HEX("access", READ_ONCE(mr->access)),
		SROCE_RES_HEX("iova", READ_ONCE(mr->iova)),
		/* user: pages pinned; fast-reg: blocks of the registration */
		SROCE_RES_U32("pages", sroce_mr_is_odp(mr) ?
				       sroce_odp_mapped_pages(mr) :
				       user ? mr->npages :
				       fast_reg ? READ_ONCE(mr->nblocks) : 0),
		SROCE_RES_U32("max_pages", fast_reg ? mr->max_blocks :
				sroce_mr_is_odp(mr) ?
				ib_umem_num_pages(mr->umem) :
				user ? mr->npages : 0),
		SROCE_RES_U32("page_size", user ? PAGE_SIZE : fast_reg ?
				BIT(READ_ONCE(mr->block_shift)) : 0),
		SROCE_RES_U32("windows", READ_ONCE(mr->nr_mw)),
		/* data path faults of an ODP MR ("pages": those mapped now) */
		SROCE_RES_U32("odp_faults",
			      atomic_long_read(&mr->odp_faults)),
	};

	return sroce_res_put(msg, a, ARRAY_SIZE(a));
}

/* Not on 6.1, whose core has no fill_res_srq_entry (compat.h) */
static int __maybe_unused sroce_fill_res_srq(struct sk_buff *msg,
					     struct ib_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	const struct sroce_res_attr a[] = {
		SROCE_RES_U32("srq_num", srq->srq_num),
		SROCE_RES_U32("posted",
			      sroce_res_ring_used(&srq->queue, &srq->lock)),
		SROCE_RES_U32("size", READ_ONCE(srq->queue.index_mask)),
		SROCE_RES_U32("limit", READ_ONCE(srq->limit)),
	};

	return sroce_res_put(msg, a, ARRAY_SIZE(a));
}

static const struct ib_device_ops sroce_restrack_ops = {
	.fill_res_cq_entry = sroce_fill_res_cq,
	.fill_res_mr_entry = sroce_fill_res_mr,
	.fill_res_qp_entry = sroce_fill_res_qp,
	SROCE_FILL_RES_SRQ_ENTRY(sroce_fill_res_srq)
};

void sroce_restrack_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_restrack_ops);
}

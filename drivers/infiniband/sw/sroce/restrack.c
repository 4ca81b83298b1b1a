// SPDX-License-Identifier: GPL-2.0-only
/*
 * What "rdma res show qp|cq|mr|srq -dd" shows of sroce's own state: the
 * driver attributes of the RDMA core's resource tracking (the
 * fill_res_*_entry callbacks); and what "rdma res show qp|cq|mr -r"
 * shows, the same state and more as one binary entry per object
 * (fill_res_*_entry_raw), laid out in <uapi/rdma/sroce_restrack.h>.
 * Documentation/sroce.rst, "Seeing into the device", says what each
 * field means.
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
 *    registration or a re-registration (READ_ONCE).  A kernel MR's iova
 *    is a kernel address (sroce's DMA addresses are), not shown.
 * Neither form shows what a field points to, nor any kernel address.
 */
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>
#include <uapi/rdma/sroce_restrack.h>

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

/**
 * struct sroce_res_ring - a CQ's or SRQ's ring, as rdma res shows it
 * @prod: producer index (free-running)
 * @cons: consumer index
 * @used: elements in it: completions not yet polled, or receive WQEs
 *	not yet taken
 * @size: elements it holds (slots - 1)
 * @elem_size: bytes of one element
 * @user: mapped by a user process
 */
struct sroce_res_ring {
	u32 prod;
	u32 cons;
	u32 used;
	u32 size;
	u32 elem_size;
	bool user;
};

/*
 * Under the lock with which destroy detaches the ring (and resize swaps
 * it), since one of the indices is in its buffer.  Each end's index is
 * read where its owner keeps it: the driver's own copy, the other one
 * in the buffer, once; no slot is read, so no barrier is needed.
 */
static struct sroce_res_ring sroce_res_ring_read(const struct sroce_queue *q,
						 spinlock_t *lock)
{
	struct sroce_res_ring r = {};
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	if (q->buf) {
		if (q->dir == SROCE_QUEUE_DRIVER_PRODUCES) {
			r.prod = q->prod;
			r.cons = READ_ONCE(q->buf->consumer_index);
		} else {
			r.prod = READ_ONCE(q->buf->producer_index);
			r.cons = q->cons;
		}
		r.size = q->index_mask;
		r.used = (r.prod - r.cons) & r.size;
		r.elem_size = q->elem_size;
		r.user = sroce_queue_is_user(q);
	}
	spin_unlock_irqrestore(lock, flags);
	return r;
}

static int sroce_fill_res_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	const struct sroce_res_ring ring = sroce_res_ring_read(&cq->queue,
							      &cq->lock);
	const struct sroce_res_attr a[] = {
		SROCE_RES_U32("used", ring.used),
		SROCE_RES_U32("size", ring.size),
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

/* What an MR's pages are (see sroce_raw_mr in the UAPI header) */
struct sroce_res_mr_pages {
	u32 pages;
	u32 max_pages;
	u32 page_size;
};

static struct sroce_res_mr_pages sroce_res_mr_pages(struct sroce_mr *mr)
{
	struct sroce_res_mr_pages p = {};

	if (sroce_mr_is_odp(mr)) {
		p.pages = sroce_odp_mapped_pages(mr);
		p.max_pages = ib_umem_num_pages(mr->umem);
		p.page_size = PAGE_SIZE;
	} else if (mr->type == IB_MR_TYPE_USER) {
		p.pages = mr->npages;
		p.max_pages = mr->npages;
		p.page_size = PAGE_SIZE;
	} else if (mr->type == IB_MR_TYPE_MEM_REG) {
		p.pages = READ_ONCE(mr->nblocks);
		p.max_pages = mr->max_blocks;
		p.page_size = BIT(READ_ONCE(mr->block_shift));
	}
	return p;
}

/*
 * A user MR's iova is the user's; a kernel MR's is a kernel address (a
 * DMA MR's 0, a fast registration's the scatterlist's DMA address, which
 * for sroce is the kernel's virtual address): not shown.
 */
static u64 sroce_res_mr_iova(const struct sroce_mr *mr)
{
	return rdma_is_kernel_res(&mr->ibmr.res) ? 0 : READ_ONCE(mr->iova);
}

static int sroce_fill_res_mr(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	const struct sroce_res_mr_pages p = sroce_res_mr_pages(mr);
	const struct sroce_res_attr a[] = {
		SROCE_RES_STR("type", sroce_mr_is_odp(mr) ? "odp" :
				      sroce_mr_type_name(mr->type)),
		SROCE_RES_STR("state", READ_ONCE(mr->state) == SROCE_MR_VALID ?
				       "valid" : "free"),
		SROCE_RES_HEX("access", READ_ONCE(mr->access)),
		SROCE_RES_HEX("iova", sroce_res_mr_iova(mr)),
		/* user: pages pinned; fast-reg: blocks of the registration */
		SROCE_RES_U32("pages", p.pages),
		SROCE_RES_U32("max_pages", p.max_pages),
		SROCE_RES_U32("page_size", p.page_size),
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
	const struct sroce_res_ring ring = sroce_res_ring_read(&srq->queue,
							      &srq->lock);
	const struct sroce_res_attr a[] = {
		SROCE_RES_U32("srq_num", srq->srq_num),
		SROCE_RES_U32("posted", ring.used),
		SROCE_RES_U32("size", ring.size),
		SROCE_RES_U32("limit", READ_ONCE(srq->limit)),
	};

	return sroce_res_put(msg, a, ARRAY_SIZE(a));
}

/*
 * The raw entries: one RDMA_NLDEV_ATTR_RES_RAW each, a fixed struct of
 * <uapi/rdma/sroce_restrack.h>, built on the stack (the largest is 128
 * bytes) and copied into the message whole.
 */
static_assert(sizeof(struct sroce_raw_hdr) == 8);
static_assert(sizeof(struct sroce_raw_qp) == 128);
static_assert(sizeof(struct sroce_raw_cq) == 36);
static_assert(sizeof(struct sroce_raw_mr) == 64);
static_assert(sizeof(struct sroce_raw_srq) == 40);
/* The QP's flags are passed as they are: the bits must mean the same */
static_assert(BIT_ULL(SROCE_QPF_DEAD) == SROCE_RAW_QPF_DEAD);
static_assert(BIT_ULL(SROCE_QPF_RNR) == SROCE_RAW_QPF_RNR);
static_assert(BIT_ULL(SROCE_QPF_FLUSH) == SROCE_RAW_QPF_FLUSH);
static_assert(BIT_ULL(SROCE_QPF_TX_FULL) == SROCE_RAW_QPF_TX_FULL);
static_assert(BIT_ULL(SROCE_QPF_RETIRE) == SROCE_RAW_QPF_RETIRE);

#define SROCE_RAW_HDR(k, type) {					\
	.version = cpu_to_le16(SROCE_RAW_VERSION),			\
	.size = cpu_to_le16(sizeof(type)),				\
	.kind = (k),							\
}

static int sroce_res_put_raw(struct sk_buff *msg, const void *raw, int len)
{
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, len, raw) ? -EMSGSIZE : 0;
}

static int sroce_fill_res_qp_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct sroce_raw_qp r = {
		.hdr = SROCE_RAW_HDR(SROCE_RAW_QP, struct sroce_raw_qp),
		.qpn = cpu_to_le32(ibqp->qp_num),
		.state = sroce_qp_state(qp),
		.type = ibqp->qp_type,
		.rnr_wait = READ_ONCE(qp->comp.rnr_wait),
		.nak_sent = READ_ONCE(qp->resp.nak_sent),
		.req_psn = cpu_to_le32(READ_ONCE(qp->req.psn)),
		.req_psn_high = cpu_to_le32(READ_ONCE(qp->req.psn_high)),
		.req_ssn = cpu_to_le32(READ_ONCE(qp->req.ssn)),
		.req_rd_atomic = cpu_to_le32(READ_ONCE(qp->req.rd_atomic)),
		.retransmits = cpu_to_le32(READ_ONCE(qp->req.rewinds)),
		.cwnd = cpu_to_le32(READ_ONCE(qp->req.cwnd.window)),
		.cwnd_ssthresh = cpu_to_le32(READ_ONCE(qp->req.cwnd.ssthresh)),
		.sq_head = cpu_to_le32(READ_ONCE(qp->sq.head)),
		.sq_next = cpu_to_le32(READ_ONCE(qp->req.next)),
		.sq_tail = cpu_to_le32(READ_ONCE(qp->req.tail)),
		.sq_size = cpu_to_le32(qp->sq.size),
		.sq_max_wr = cpu_to_le32(qp->sq.max_wr),
		.rq_max_wr = cpu_to_le32(qp->srq ? 0 : qp->rq.max_wr),
		.comp_psn = cpu_to_le32(READ_ONCE(qp->comp.psn)),
		.retry_left = READ_ONCE(qp->comp.retry_left),
		.rnr_left = READ_ONCE(qp->comp.rnr_left),
		.seq_retry = READ_ONCE(qp->comp.seq_retry),
		.resp_in_msg = READ_ONCE(qp->resp.in_msg),
		.resp_psn = cpu_to_le32(READ_ONCE(qp->resp.psn)),
		.resp_msn = cpu_to_le32(READ_ONCE(qp->resp.msn)),
		.rx_queue = cpu_to_le32(skb_queue_len_lockless(&qp->rx_queue)),
		.held_requests =
			cpu_to_le32(skb_queue_len_lockless(&qp->resp.held)),
		.held_responses =
			cpu_to_le32(skb_queue_len_lockless(&qp->comp.held)),
		.flags = cpu_to_le64(READ_ONCE(qp->flags)),
		.dest_qpn = cpu_to_le32(READ_ONCE(qp->attr.dest_qpn)),
		.mtu = cpu_to_le32(READ_ONCE(qp->attr.mtu)),
		.sq_psn = cpu_to_le32(READ_ONCE(qp->attr.sq_psn)),
		.rq_psn = cpu_to_le32(READ_ONCE(qp->attr.rq_psn)),
		.timeout = READ_ONCE(qp->attr.timeout),
		.retry_cnt = READ_ONCE(qp->attr.retry_cnt),
		.rnr_retry = READ_ONCE(qp->attr.rnr_retry),
		.min_rnr_timer = READ_ONCE(qp->attr.min_rnr_timer),
		.max_rd_atomic = READ_ONCE(qp->attr.max_rd_atomic),
		.max_dest_rd_atomic = READ_ONCE(qp->attr.max_dest_rd_atomic),
	};

	return sroce_res_put_raw(msg, &r, sizeof(r));
}

static int sroce_fill_res_cq_raw(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	const struct sroce_res_ring ring = sroce_res_ring_read(&cq->queue,
							      &cq->lock);
	const struct sroce_raw_cq r = {
		.hdr = SROCE_RAW_HDR(SROCE_RAW_CQ, struct sroce_raw_cq),
		.cqn = cpu_to_le32(ibcq->res.id),
		.size = cpu_to_le32(ring.size),
		.producer = cpu_to_le32(ring.prod),
		.consumer = cpu_to_le32(ring.cons),
		.used = cpu_to_le32(ring.used),
		.elem_size = cpu_to_le32(ring.elem_size),
		.armed = READ_ONCE(cq->notify),
		.overflowed = READ_ONCE(cq->overflowed),
		.user = ring.user,
	};

	return sroce_res_put_raw(msg, &r, sizeof(r));
}

static u8 sroce_raw_mr_type(const struct sroce_mr *mr)
{
	if (sroce_mr_is_odp(mr))
		return SROCE_RAW_MR_ODP;
	if (READ_ONCE(mr->dmabuf))
		return SROCE_RAW_MR_DMABUF;
	switch (mr->type) {
	case IB_MR_TYPE_DMA:
		return SROCE_RAW_MR_DMA;
	case IB_MR_TYPE_USER:
		return SROCE_RAW_MR_USER;
	case IB_MR_TYPE_MEM_REG:
		return SROCE_RAW_MR_FAST_REG;
	default:
		return SROCE_RAW_MR_OTHER;
	}
}

static int sroce_fill_res_mr_raw(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	const struct sroce_res_mr_pages p = sroce_res_mr_pages(mr);
	const struct sroce_raw_mr r = {
		.hdr = SROCE_RAW_HDR(SROCE_RAW_MR, struct sroce_raw_mr),
		.mrn = cpu_to_le32(ibmr->res.id),
		.key = cpu_to_le32(READ_ONCE(mr->key)),
		.type = sroce_raw_mr_type(mr),
		.valid = READ_ONCE(mr->state) == SROCE_MR_VALID,
		.access = cpu_to_le32(READ_ONCE(mr->access)),
		.iova = cpu_to_le64(sroce_res_mr_iova(mr)),
		.length = cpu_to_le64(READ_ONCE(mr->length)),
		.pages = cpu_to_le32(p.pages),
		.max_pages = cpu_to_le32(p.max_pages),
		.page_size = cpu_to_le32(p.page_size),
		.windows = cpu_to_le32(READ_ONCE(mr->nr_mw)),
		.odp_faults = cpu_to_le64(atomic_long_read(&mr->odp_faults)),
	};

	return sroce_res_put_raw(msg, &r, sizeof(r));
}

/* Not on 6.1, whose core dumps no SRQ raw (compat.h) */
static int __maybe_unused sroce_fill_res_srq_raw(struct sk_buff *msg,
						 struct ib_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	const struct sroce_res_ring ring = sroce_res_ring_read(&srq->queue,
							      &srq->lock);
	const struct sroce_raw_srq r = {
		.hdr = SROCE_RAW_HDR(SROCE_RAW_SRQ, struct sroce_raw_srq),
		.srq_num = cpu_to_le32(srq->srq_num),
		.size = cpu_to_le32(ring.size),
		.producer = cpu_to_le32(ring.prod),
		.consumer = cpu_to_le32(ring.cons),
		.posted = cpu_to_le32(ring.used),
		.limit = cpu_to_le32(READ_ONCE(srq->limit)),
		.max_sge = cpu_to_le32(srq->max_sge),
		.user = ring.user,
	};

	return sroce_res_put_raw(msg, &r, sizeof(r));
}

static const struct ib_device_ops sroce_restrack_ops = {
	.fill_res_cq_entry = sroce_fill_res_cq,
	.fill_res_cq_entry_raw = sroce_fill_res_cq_raw,
	.fill_res_mr_entry = sroce_fill_res_mr,
	.fill_res_mr_entry_raw = sroce_fill_res_mr_raw,
	.fill_res_qp_entry = sroce_fill_res_qp,
	.fill_res_qp_entry_raw = sroce_fill_res_qp_raw,
	SROCE_FILL_RES_SRQ_ENTRY(sroce_fill_res_srq)
	SROCE_FILL_RES_SRQ_ENTRY_RAW(sroce_fill_res_srq_raw)
};

void sroce_restrack_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_restrack_ops);
}

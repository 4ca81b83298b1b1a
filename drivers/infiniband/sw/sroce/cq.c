// SPDX-License-Identifier: GPL-2.0-only
/*
 * Completion queues: the CQ verbs and sroce_cq_post(), through which the
 * data path completes work requests.  Locking is described in cq.h.
 */
#include <linux/minmax.h>
#include <linux/string.h>

#include "sroce.h"
#include "cq.h"
#include "trace.h"

/* The layouts librxe reads (struct ibv_wc is the same 48 bytes). */
static_assert(sizeof(struct ib_uverbs_wc) == 48);
static_assert(sizeof(struct rxe_create_cq_resp) == 16);
static_assert(sizeof(struct rxe_resize_cq_resp) == 16);

/*
 * libibverbs' IBV_WC_* flag bits, which is what librxe hands to
 * applications unchanged.  Only GRH and WITH_IMM have the same values as
 * the kernel's IB_WC_* bits, so user completions are translated.
 */
#define SROCE_UWC_GRH		BIT(0)
#define SROCE_UWC_WITH_IMM	BIT(1)
#define SROCE_UWC_IP_CSUM_OK	BIT(2)
#define SROCE_UWC_WITH_INV	BIT(3)

static u32 sroce_uwc_flags(u32 flags)
{
	u32 uflags = 0;

	if (flags & IB_WC_GRH)
		uflags |= SROCE_UWC_GRH;
	if (flags & IB_WC_WITH_IMM)
		uflags |= SROCE_UWC_WITH_IMM;
	if (flags & IB_WC_IP_CSUM_OK)
		uflags |= SROCE_UWC_IP_CSUM_OK;
	if (flags & IB_WC_WITH_INVALIDATE)
		uflags |= SROCE_UWC_WITH_INV;
	return uflags;
}

static void sroce_cqe_to_uwc(const struct sroce_cqe *cqe,
			     struct ib_uverbs_wc *uwc)
{
	/* The slot is user memory: every byte is written, padding too. */
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = cqe->wr_id;
	uwc->status = cqe->status;
	/*
	 * The kernel's opcodes are the IB_UVERBS_WC_* values, and the
	 * receive opcodes match libibverbs' (IBV_WC_RECV = 128), except for
	 * kernel-only ones user QPs cannot post.  (sroce offers no masked
	 * atomics: on 6.1 their values are IB_WC_ATOMIC_WRITE's and more.)
	 */
	uwc->opcode = cqe->opcode;
	uwc->vendor_err = cqe->vendor_err;
	uwc->byte_len = cqe->byte_len;
	if (cqe->wc_flags & IB_WC_WITH_IMM)
		uwc->ex.imm_data = cqe->imm_data;
	else if (cqe->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = cqe->invalidate_rkey;
	uwc->qp_num = cqe->qp->qp_num;
	uwc->src_qp = cqe->src_qp;
	uwc->wc_flags = sroce_uwc_flags(cqe->wc_flags);
	uwc->pkey_index = cqe->pkey_index;
	uwc->slid = cqe->slid;
	uwc->sl = cqe->sl;
	uwc->dlid_path_bits = cqe->dlid_path_bits;
	uwc->port_num = cqe->port_num;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = cqe->qp;
	if (cqe->wc_flags & IB_WC_WITH_IMM)
		wc->ex.imm_data = cqe->imm_data;
	else if (cqe->wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = cqe->invalidate_rkey;
	wc->src_qp = cqe->src_qp;
	wc->slid = cqe->slid;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
	if (cqe->wc_flags & IB_WC_WITH_SMAC)
		ether_addr_copy(wc->smac, cqe->smac);
	if (cqe->wc_flags & IB_WC_WITH_VLAN)
		wc->vlan_id = cqe->vlan_id;
	if (cqe->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		wc->network_hdr_type = cqe->network_hdr_type;
}

static void sroce_cq_event(struct sroce_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * sroce_cq_post - add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion
 * @solicited: the completion is for a solicited message (the SE bit of
 *	the request); matters to a CQ armed with IB_CQ_SOLICITED
 *
 * An armed CQ calls its completion handler once, then is disarmed until
 * armed again.  A full CQ reports IB_EVENT_CQ_ERR to its event handler;
 * the completion is lost and the caller should treat this as a fatal
 * error for the QP.  The event is reported once until a completion fits
 * again: a QP flushing into a full CQ loses every completion, and for a
 * user CQ each event is an allocation on the owner's async event list,
 * which a program that never reads it (or keeps its send ring full while
 * its QP flushes) would grow without end.
 *
 * Context: any, including softirq; takes cq->lock with interrupts saved,
 * and calls the handlers without it.  The caller keeps the CQ alive for
 * the call (it holds a QP that uses the CQ, and the core does not
 * destroy a CQ with QPs attached).
 * Return: 0, or -ENOSPC if the CQ is full.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited)
{
	struct sroce_queue *q = &cq->queue;
	bool fire = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (sroce_queue_full(q)) {
		bool first = !cq->overflowed;

		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first)
			sroce_cq_event(cq, IB_EVENT_CQ_ERR);
		return -ENOSPC;
	}
	cq->overflowed = false;

	/* Build in kernel memory, then copy: the slot may be shared. */
	if (sroce_queue_is_user(q)) {
		struct ib_uverbs_wc uwc;

		sroce_cqe_to_uwc(cqe, &uwc);
		memcpy(sroce_queue_producer_addr(q), &uwc, sizeof(uwc));
	} else {
		struct ib_wc wc;

		sroce_cqe_to_wc(cqe, &wc);
		memcpy(sroce_queue_producer_addr(q), &wc, sizeof(wc));
	}
	sroce_queue_advance_producer(q);

	/* The IBTA spec has error completions wake solicited waiters. */
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || cqe->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	trace_sroce_complete(&cq->ibcq, cqe);

	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

static bool sroce_cq_size_ok(int cqe)
{
	return cqe >= 1 && cqe <= SROCE_MAX_CQE;
}

/**
 * sroce_create_cq - the create_cq verb
 * @ibcq: the CQ, allocated by the core
 * @attr: size, completion vector and flags
 * @arg: the udata (6.1) or attribute bundle (6.12); NULL for kernel CQs
 *
 * A user CQ answers with struct rxe_create_cq_resp, where to mmap the
 * ring.  The CQ holds at least @attr->cqe completions; ibcq->cqe says
 * how many exactly.
 *
 * Context: process context.
 * Return: 0, -EOPNOTSUPP for flags, -EINVAL for a bad size, vector or
 * response buffer, -ENOMEM, or -EFAULT.
 */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = sroce_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (atomic_inc_return(&sdev->num_cqs) > SROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	cq->notify = 0;
	err = sroce_queue_init(&cq->queue, sroce_udata_ucontext(udata),
			       attr->cqe,
			       udata ? sizeof(struct ib_uverbs_wc) :
				       sizeof(struct ib_wc),
			       SROCE_QUEUE_DRIVER_PRODUCES);
	if (err)
		goto err_count;

	if (udata) {
		sroce_queue_mminfo(&cq->queue, &resp.mi);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}

	ibcq->cqe = sroce_queue_capacity(&cq->queue);
	return 0;

err_queue:
	sroce_queue_free(&cq->queue);
err_count:
	atomic_dec(&sdev->num_cqs);
	return err;
}

/**
 * sroce_destroy_cq - the destroy_cq verb
 * @ibcq: the CQ; the core has checked that no QP uses it
 * @udata: unused
 *
 * A user ring lives on until userspace unmaps it.
 *
 * Context: process context.
 * Return: 0.
 */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	/* rdma res may be reading the ring's fill (restrack.c) until now */
	sroce_queue_free_under(&cq->queue, &cq->lock);
	atomic_dec(&to_sdev(ibcq->device)->num_cqs);
	return 0;
}

/**
 * sroce_resize_cq - the resize_cq verb
 * @ibcq: the CQ
 * @cqe: the new minimum size
 * @udata: for a user CQ, room for struct rxe_resize_cq_resp (the new
 *	ring); NULL for a kernel CQ
 *
 * Completions not yet polled move to the new ring, in order.  librxe
 * holds its CQ lock meanwhile and maps the new ring afterwards.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad size (including one too small for the
 * completions queued) or response buffer, -ENOMEM, or -EFAULT.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	struct sroce_queue new_q;
	unsigned long flags;
	int err;

	if (!sroce_cq_size_ok(cqe))
		return -EINVAL;
	if (sroce_queue_is_user(&cq->queue)) {
		uctx = sroce_udata_ucontext(udata);
		if (!uctx || udata->outlen < sizeof(resp))
			return -EINVAL;
	}

	err = sroce_queue_init(&new_q, uctx, cqe, cq->queue.elem_size,
			       SROCE_QUEUE_DRIVER_PRODUCES);
	if (err)
		return err;

	/* Tell userspace first: a resize it cannot learn of is no use. */
	if (uctx) {
		sroce_queue_mminfo(&new_q, &resp.mi);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out;
	}

	spin_lock_irqsave(&cq->lock, flags);
	err = sroce_queue_resize_commit(&cq->queue, &new_q);
	if (!err)
		ibcq->cqe = sroce_queue_capacity(&cq->queue);
	spin_unlock_irqrestore(&cq->lock, flags);

out:
	sroce_queue_free(&new_q);	/* the old ring on success */
	return err;
}

/**
 * sroce_poll_cq - the poll_cq verb, for kernel CQs
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: the completions, oldest first
 *
 * Context: any.
 * Return: the number of completions returned, or -EINVAL for a user CQ
 * (which userspace polls itself).
 */
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue *q = &cq->queue;
	unsigned long flags;
	int n;

	if (WARN_ON_ONCE(sroce_queue_is_user(q)))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && !sroce_queue_empty(q); n++) {
		memcpy(&wc[n], sroce_queue_consumer_addr(q), sizeof(wc[n]));
		sroce_queue_advance_consumer(q);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * sroce_peek_cq - the peek_cq verb
 * @ibcq: the CQ
 * @wc_cnt: the most the caller is interested in
 *
 * Context: any.
 * Return: the number of completions waiting, at most @wc_cnt.
 */
int sroce_peek_cq(struct ib_cq *ibcq, int wc_cnt)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	u32 count;

	spin_lock_irqsave(&cq->lock, flags);
	count = sroce_queue_prod_count(&cq->queue);
	spin_unlock_irqrestore(&cq->lock, flags);
	return min_t(u32, count, max(wc_cnt, 0));
}

/**
 * sroce_req_notify_cq - the req_notify_cq verb
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, maybe with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Arming for the next completion overrides arming for solicited ones,
 * never the other way round, so no requested event is lost.
 *
 * Context: any.
 * Return: 1 if IB_CQ_REPORT_MISSED_EVENTS was given and completions are
 * already waiting (the caller must poll again), else 0.
 */
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if ((flags & IB_CQ_SOLICITED) && !cq->notify)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    sroce_queue_prod_count(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

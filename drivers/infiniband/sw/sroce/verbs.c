// SPDX-License-Identifier: GPL-2.0-only
/*
 * Posting work requests.  Kernel callers' work requests are written into
 * the same rings, in the same layout, as librxe writes user ones, so the
 * engine has one path for both.  A user post_send only rings the
 * doorbell: the work requests are in the mapped ring already.
 */
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "engine.h"
#include "qp.h"
#include "verbs.h"

/* The gather list, or the data itself for an inline send. */
static int sroce_post_data(struct sroce_qp *qp, const struct ib_send_wr *wr,
			   struct rxe_send_wqe *slot)
{
	u32 len = 0;
	int i;

	if (wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			const struct ib_sge *sge = &wr->sg_list[i];

			if (sge->length > qp->sq.max_inline - len)
				return -EINVAL;
			/* Kernel SGE addresses are kernel virtual (virt DMA). */
			memcpy(slot->dma.inline_data + len,
			       ib_virt_dma_to_ptr(sge->addr), sge->length);
			len += sge->length;
		}
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			slot->dma.sge[i].addr = wr->sg_list[i].addr;
			slot->dma.sge[i].length = wr->sg_list[i].length;
			slot->dma.sge[i].lkey = wr->sg_list[i].lkey;
			len += wr->sg_list[i].length;
		}
		slot->dma.num_sge = wr->num_sge;
	}
	slot->dma.length = len;
	slot->dma.resid = len;
	return 0;
}

/*
 * FLUSH and ATOMIC WRITE in librxe's layout (requester.c).  The kernel has
 * no typed work request for them: both take an ib_rdma_wr's remote_addr
 * and rkey; an ATOMIC WRITE's 8 bytes are those its SGEs (kernel virtual
 * addresses) hold, a FLUSH is of global visibility over a range as long
 * as its SGEs together (they hold no data).
 */
static int sroce_post_pmem(struct sroce_qp *qp, const struct ib_send_wr *wr,
			   struct rxe_send_wqe *slot)
{
	u32 op = wr->opcode, len = 0;
	int i;

	/* The 8 bytes go where the slot's data area starts: it must hold them. */
	if (!SROCE_KERNEL_PMEM_WR || qp->ibqp.qp_type != IB_QPT_RC ||
	    wr->num_sge > qp->sq.max_sge ||
	    (op == IB_WR_ATOMIC_WRITE && qp->sq.max_inline < SROCE_ATOMIC_WRITE_LEN))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (op == IB_WR_ATOMIC_WRITE) {
			if (sge->length > SROCE_ATOMIC_WRITE_LEN - len)
				return -EINVAL;
			memcpy(slot->dma.inline_data + len,
			       ib_virt_dma_to_ptr(sge->addr), sge->length);
		}
		len += sge->length;
	}
	if (op == IB_WR_ATOMIC_WRITE && len != SROCE_ATOMIC_WRITE_LEN)
		return -EINVAL;
	if (op == IB_WR_FLUSH) {
		sroce_wr_flush(&slot->wr)->remote_addr = rdma_wr(wr)->remote_addr;
		sroce_wr_flush(&slot->wr)->rkey = rdma_wr(wr)->rkey;
		sroce_wr_flush(&slot->wr)->type = SROCE_FLUSH_GLOBAL;
		sroce_wr_flush(&slot->wr)->level = SROCE_FLUSH_RANGE;
	} else {
		slot->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		slot->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
	}
	slot->dma.length = len;
	slot->dma.resid = len;
	return 0;
}

/* The opcode's own fields, from the typed work request around @wr. */
static int sroce_post_fields(const struct ib_send_wr *wr,
			     struct rxe_send_wqe *slot)
{
	struct rxe_send_wr *swr = &slot->wr;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		swr->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		swr->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		swr->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		swr->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		swr->wr.atomic.swap = atomic_wr(wr)->swap;
		swr->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		swr->wr.reg.mr = reg_wr(wr)->mr;
		swr->wr.reg.key = reg_wr(wr)->key;
		swr->wr.reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int sroce_post_one(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	struct rxe_send_wqe *slot;
	int err = 0;

	if (sroce_queue_full(&qp->sq.q))
		return -ENOMEM;
	slot = sroce_queue_producer_addr(&qp->sq.q);
	memset(slot, 0, sizeof(*slot));
	slot->wr.wr_id = wr->wr_id;
	slot->wr.opcode = wr->opcode;
	slot->wr.send_flags = wr->send_flags;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		slot->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		slot->wr.ex.imm_data = wr->ex.imm_data;

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		const struct sroce_ah *ah = container_of(ud_wr(wr)->ah,
							 struct sroce_ah, ibah);

		slot->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		slot->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		slot->wr.wr.ud.pkey_index = ud_wr(wr)->pkey_index;
		slot->wr.wr.ud.ah_num = ah->ah_num;
	} else if (sroce_wr_is_pmem(wr->opcode)) {
		err = sroce_post_pmem(qp, wr, slot);
	} else {
		err = sroce_post_fields(wr, slot);
	}
	if (!err && !sroce_wr_is_pmem(wr->opcode))
		err = sroce_post_data(qp, wr, slot);
	if (err)
		return err;
	sroce_queue_advance_producer(&qp->sq.q);
	return 0;
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = sroce_qp_state(qp);
	unsigned long flags;
	int err = 0;

	/* Work requests wait in the ring until RTS; in ERR they flush. */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->is_user) {
		/* The doorbell: librxe has filled the mapped ring. */
		if (state == IB_QPS_ERR)
			sroce_qp_ask_flush(qp);
		sroce_qp_run(qp);
		return 0;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_post_one(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (state == IB_QPS_ERR)
		sroce_qp_ask_flush(qp);
	sroce_qp_kick(qp);
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_recvq_post_one(&qp->rq.q, qp->rq.max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	/* ib_drain_rq() waits for its own WR to flush. */
	if (sroce_qp_state(qp) == IB_QPS_ERR) {
		sroce_qp_ask_flush(qp);
		sroce_qp_kick(qp);
	}
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The send side of a QP: the requester turns send WQEs into packets, the
 * completer turns the peer's responses (RC) into completions, and both
 * recover from loss by going back to the first unacknowledged PSN.
 *
 * WQEs are copied out of the send ring into qp->sq.wqe when fetched (the
 * ring slot is released at once) and live there until retired, in order:
 *
 *	req.tail <= ... retired up to here
 *	           [tail, next)  sent, waiting for the peer (RC)
 *	           next          being sent (req.offset bytes done)
 *	           (next, head)  fetched, not started
 *
 * All of it runs in the QP's engine (see qp.h): no locks.
 */
#include <linux/jiffies.h>
#include <linux/skbuff.h>

#include "sroce.h"
#include "cq.h"
#include "qp.h"
#include "tx.h"
#include "timers.h"

static bool sroce_wr_is_read_atomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool sroce_wr_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool sroce_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_LOCAL_INV;
}

static enum ib_wc_opcode sroce_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/* Which work request opcodes a QP of this type may post. */
static bool sroce_wr_opcode_ok(const struct sroce_qp *qp, u32 opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return qp->ibqp.qp_type == IB_QPT_RC ||
		       qp->ibqp.qp_type == IB_QPT_UC;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return qp->ibqp.qp_type == IB_QPT_RC;
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
		/* A user ring's MR pointer is whatever userspace wrote. */
		return !qp->is_user && qp->ibqp.qp_type == IB_QPT_RC;
	default:
		return false;
	}
}

/* ------------------------------------------------------------- fetch */

static int sroce_wqe_copy_data(struct sroce_qp *qp,
			       const struct rxe_send_wqe *slot,
			       struct sroce_send_wqe *wqe)
{
	u64 len = 0;
	u32 i;

	if (wqe->wr.send_flags & IB_SEND_INLINE) {
		u32 n = READ_ONCE(slot->dma.length);

		if (n > qp->sq.max_inline)
			return -EINVAL;
		memcpy(wqe->inline_data, slot->dma.inline_data, n);
		wqe->is_inline = true;
		wqe->length = n;
		return 0;
	}
	wqe->num_sge = READ_ONCE(slot->dma.num_sge);
	if (wqe->num_sge > qp->sq.max_sge)
		return -EINVAL;
	for (i = 0; i < wqe->num_sge; i++) {
		struct ib_sge *sge = &wqe->sge[i];

		sge->addr = READ_ONCE(slot->dma.sge[i].addr);
		sge->length = READ_ONCE(slot->dma.sge[i].length);
		sge->lkey = READ_ONCE(slot->dma.sge[i].lkey);
		len += sge->length;
	}
	if (len > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	wqe->length = len;
	return 0;
}

/* Copy one ring slot into @wqe and check it; only the copy is trusted. */
static int sroce_wqe_copy(struct sroce_qp *qp, const struct rxe_send_wqe *slot,
			  struct sroce_send_wqe *wqe)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	u32 op;
	int err;

	memset(wqe, 0, sizeof(*wqe));
	memcpy(&wqe->wr, &slot->wr, sizeof(wqe->wr));
	op = wqe->wr.opcode;
	if (!sroce_wr_opcode_ok(qp, op))
		return -EINVAL;
	if ((wqe->wr.send_flags & IB_SEND_INLINE) &&
	    op != IB_WR_SEND && op != IB_WR_SEND_WITH_IMM &&
	    op != IB_WR_RDMA_WRITE && op != IB_WR_RDMA_WRITE_WITH_IMM)
		return -EINVAL;
	err = sroce_wqe_copy_data(qp, slot, wqe);
	if (err)
		return err;
	if (sroce_wr_is_atomic(op) &&
	    (wqe->length != sizeof(u64) || wqe->wr.wr.atomic.remote_addr & 7))
		return -EINVAL;
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		/* A datagram is one packet of at most the port's MTU. */
		if (wqe->length > ib_mtu_enum_to_int(sroce_ndev_ib_mtu(sdev->ndev)))
			return -EMSGSIZE;
		if (!sroce_av_lookup(sdev, wqe->wr.wr.ud.ah_num,
				     &qp->pd->ibpd, &wqe->av))
			return -EINVAL;
	}
	return 0;
}

/*
 * Copy WQEs from the ring while there is room for them, @budget at most;
 * sq.fetch_more says the budget, not the ring or the room, ran out.
 */
static void sroce_sq_fetch(struct sroce_qp *qp, int budget)
{
	struct sroce_sq *sq = &qp->sq;
	struct sroce_send_wqe *wqe;
	int err;

	for (; budget; budget--) {
		if (sq->head - qp->req.tail >= sq->size ||
		    sroce_queue_empty(&sq->q))
			break;
		wqe = sroce_sq_wqe(qp, sq->head);
		err = sroce_wqe_copy(qp, sroce_queue_consumer_addr(&sq->q), wqe);
		sroce_queue_advance_consumer(&sq->q);
		if (err) {
			wqe->state = SROCE_WQE_DONE;
			wqe->status = err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
							 IB_WC_LOC_QP_OP_ERR;
		} else {
			wqe->state = SROCE_WQE_PENDING;
		}
		sq->head++;
	}
	sq->fetch_blocked = !sroce_queue_empty(&sq->q);
	sq->fetch_more = !budget && sq->fetch_blocked;
}

/* -------------------------------------------------------- completion */

static void sroce_send_complete(struct sroce_qp *qp,
				const struct sroce_send_wqe *wqe,
				enum ib_wc_status status)
{
	struct sroce_cqe cqe = {
		.wr_id = wqe->wr.wr_id,
		.qp = &qp->ibqp,
		.status = status,
		.opcode = sroce_wc_opcode(wqe->wr.opcode),
		.byte_len = wqe->length,
		.port_num = 1,
	};

	if (status == IB_WC_SUCCESS && !qp->sig_all &&
	    !(wqe->wr.send_flags & IB_SEND_SIGNALED))
		return;
	if (sroce_cq_post(qp->scq, &cqe, false))
		sroce_qp_error(qp);
}

static void sroce_wqe_done(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
			   enum ib_wc_status status)
{
	if (wqe->rd_counted) {
		wqe->rd_counted = false;
		qp->req.rd_atomic--;
	}
	wqe->state = SROCE_WQE_DONE;
	wqe->status = status;
}

/* Report the WQEs at the tail that are done, in posting order. */
static void sroce_sq_retire(struct sroce_qp *qp)
{
	while (qp->req.tail != qp->req.next) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, qp->req.tail);

		if (wqe->state != SROCE_WQE_DONE)
			break;
		sroce_send_complete(qp, wqe, wqe->status);
		qp->req.tail++;
		if (wqe->status != IB_WC_SUCCESS) {
			sroce_qp_error(qp);
			return;
		}
	}
	if (test_bit(SROCE_QPF_SQD_NOTIFY, &qp->flags) &&
	    sroce_qp_state(qp) == IB_QPS_SQD && sroce_sq_drained(qp)) {
		clear_bit(SROCE_QPF_SQD_NOTIFY, &qp->flags);
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
	}
}

/*
 * SQD lets no WQE start (sroce_wqe_may_start()); the SQ is drained when
 * every WQE that did start has been retired.
 */
bool sroce_sq_drained(const struct sroce_qp *qp)
{
	return qp->req.tail == qp->req.next &&
	       (s32)(qp->req.started - qp->req.next) <= 0;
}

/* ------------------------------------------------------------ timers */

static bool sroce_req_outstanding(const struct sroce_qp *qp)
{
	return sroce_psn_cmp(qp->comp.psn, qp->req.psn) < 0;
}

/* (Re)start the local ACK timer, or stop it when nothing is in flight. */
static void sroce_retrans_rearm(struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->attr.timeout)
		return;
	if (sroce_req_outstanding(qp))
		mod_timer(&qp->retrans_timer,
			  jiffies + sroce_ack_timeout_jiffies(qp->attr.timeout));
	else
		del_timer(&qp->retrans_timer);
}

/* ---------------------------------------------------------- requester */

/*
 * No memory for a packet: come back in a tick.  A pending retransmit
 * timer does that already (and its expiry with nothing in flight does
 * nothing but run the engine), and ACKs kick the engine too.
 */
static void sroce_req_retry_later(struct sroce_qp *qp)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_TX_NOMEM);
	if (!timer_pending(&qp->retrans_timer))
		mod_timer(&qp->retrans_timer, jiffies + 1);
}

static u32 sroce_wqe_npkts(const struct sroce_qp *qp,
			   const struct sroce_send_wqe *wqe)
{
	if (sroce_wr_is_atomic(wqe->wr.opcode) ||
	    qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(wqe->length, qp->attr.mtu));
}

/* Execute a local operation (REG_MR, LOCAL_INV): no packet, no PSN. */
static void sroce_req_local(struct sroce_qp *qp, struct sroce_send_wqe *wqe)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	int err;

	if (wqe->wr.opcode == IB_WR_REG_MR)
		err = sroce_mr_fast_reg(to_smr(wqe->wr.wr.reg.mr), qp->pd,
					wqe->wr.wr.reg.key,
					wqe->wr.wr.reg.access);
	else
		err = sroce_mr_invalidate(sdev, qp->pd,
					  wqe->wr.ex.invalidate_rkey, false);
	sroce_wqe_done(qp, wqe, err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS);
}

/*
 * May WQE @wqe, not yet started, go now?  Reads and atomics are limited
 * by max_rd_atomic, fenced WQEs wait for them, local operations wait for
 * everything before them, and RC keeps at most SROCE_MAX_UNACKED_PSNS in
 * flight.
 */
static bool sroce_wqe_may_start(struct sroce_qp *qp,
				const struct sroce_send_wqe *wqe)
{
	u32 op = wqe->wr.opcode;

	enum ib_qp_state state = sroce_qp_state(qp);

	/* In SQD, only a WQE that go-back-N made pending again restarts. */
	if (state != IB_QPS_RTS &&
	    (state != IB_QPS_SQD || (s32)(qp->req.next - qp->req.started) >= 0))
		return false;
	if (sroce_wr_is_local(op))
		return qp->req.tail == qp->req.next;
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return true;
	if ((wqe->wr.send_flags & IB_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	if (sroce_wr_is_read_atomic(op) &&
	    qp->req.rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1))
		return false;
	return sroce_psn_cmp(qp->req.psn,
			     qp->comp.psn + SROCE_MAX_UNACKED_PSNS) < 0;
}

static void sroce_wqe_start(struct sroce_qp *qp, struct sroce_send_wqe *wqe)
{
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = sroce_psn_add(qp->req.psn,
				      sroce_wqe_npkts(qp, wqe) - 1);
	wqe->ssn = qp->req.ssn++;
	wqe->state = SROCE_WQE_ACTIVE;
	if (sroce_wr_is_read_atomic(wqe->wr.opcode)) {
		wqe->rd_counted = true;
		qp->req.rd_atomic++;
	}
	qp->req.offset = 0;
	memset(&qp->req.cur, 0, sizeof(qp->req.cur));
	WRITE_ONCE(qp->rx_streak, 0);
}

static u8 sroce_req_send_opcode(u32 op, bool first, bool last, u8 tr)
{
	bool imm = op == IB_WR_SEND_WITH_IMM;
	bool inv = op == IB_WR_SEND_WITH_INV;

	if (first && last)
		return tr | (imm ? SROCE_OP_SEND_ONLY_WITH_IMMEDIATE :
			     inv ? SROCE_OP_SEND_ONLY_WITH_INVALIDATE :
			     SROCE_OP_SEND_ONLY);
	if (first)
		return tr | SROCE_OP_SEND_FIRST;
	if (!last)
		return tr | SROCE_OP_SEND_MIDDLE;
	return tr | (imm ? SROCE_OP_SEND_LAST_WITH_IMMEDIATE :
		     inv ? SROCE_OP_SEND_LAST_WITH_INVALIDATE :
		     SROCE_OP_SEND_LAST);
}

static u8 sroce_req_write_opcode(u32 op, bool first, bool last, u8 tr)
{
	bool imm = op == IB_WR_RDMA_WRITE_WITH_IMM;

	if (first && last)
		return tr | (imm ? SROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
			     SROCE_OP_RDMA_WRITE_ONLY);
	if (first)
		return tr | SROCE_OP_RDMA_WRITE_FIRST;
	if (!last)
		return tr | SROCE_OP_RDMA_WRITE_MIDDLE;
	return tr | (imm ? SROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE :
		     SROCE_OP_RDMA_WRITE_LAST);
}

static u8 sroce_qp_transport(const struct sroce_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return SROCE_TRANSPORT_RC;
	case IB_QPT_UC:
		return SROCE_TRANSPORT_UC;
	default:
		return SROCE_TRANSPORT_UD;
	}
}

/*
 * Headers of the next packet of @wqe; returns its payload length.  A
 * READ request asks for everything from req.offset on, so a READ resent
 * after a loss asks only for what is missing.
 */
static u32 sroce_req_headers(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
			     struct sroce_pkt *pkt)
{
	u8 tr = sroce_qp_transport(qp);
	/* A datagram is never split: sroce_wqe_copy() checked its size. */
	u32 op = wqe->wr.opcode;
	u32 mtu = tr == SROCE_TRANSPORT_UD ? U32_MAX : qp->attr.mtu;
	u32 left = wqe->length - qp->req.offset;
	bool first = !qp->req.offset, last;
	u32 len;

	memset(pkt, 0, sizeof(*pkt));
	pkt->pkey = SROCE_DEFAULT_PKEY;
	pkt->dqpn = qp->attr.dest_qpn;
	pkt->psn = qp->req.psn;

	if (op == IB_WR_RDMA_READ) {
		pkt->opcode = tr | SROCE_OP_RDMA_READ_REQUEST;
		pkt->va = wqe->wr.wr.rdma.remote_addr + qp->req.offset;
		pkt->rkey = wqe->wr.wr.rdma.rkey;
		pkt->dma_len = left;
		return 0;
	}
	if (sroce_wr_is_atomic(op)) {
		bool cas = op == IB_WR_ATOMIC_CMP_AND_SWP;

		pkt->opcode = tr | (cas ? SROCE_OP_COMPARE_SWAP :
				    SROCE_OP_FETCH_ADD);
		pkt->va = wqe->wr.wr.atomic.remote_addr;
		pkt->rkey = wqe->wr.wr.atomic.rkey;
		pkt->swap_add = cas ? wqe->wr.wr.atomic.swap :
				wqe->wr.wr.atomic.compare_add;
		pkt->compare = cas ? wqe->wr.wr.atomic.compare_add : 0;
		pkt->ack_req = true;
		return 0;
	}

	len = min(left, mtu);
	last = len == left;
	if (op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM) {
		pkt->opcode = sroce_req_write_opcode(op, first, last, tr);
		if (first) {
			pkt->va = wqe->wr.wr.rdma.remote_addr;
			pkt->rkey = wqe->wr.wr.rdma.rkey;
			pkt->dma_len = wqe->length;
		}
	} else {
		pkt->opcode = sroce_req_send_opcode(op, first, last, tr);
	}
	if (last) {
		pkt->imm = wqe->wr.ex.imm_data;
		pkt->inv_rkey = wqe->wr.ex.invalidate_rkey;
		pkt->se = !!(wqe->wr.send_flags & IB_SEND_SOLICITED);
	}
	if (tr == SROCE_TRANSPORT_UD) {
		pkt->dqpn = wqe->wr.wr.ud.remote_qpn & SROCE_QPN_MASK;
		/* A Q_Key with the top bit set means: use the QP's own. */
		pkt->qkey = (s32)wqe->wr.wr.ud.remote_qkey < 0 ?
			    qp->attr.qkey : wqe->wr.wr.ud.remote_qkey;
		pkt->sqpn = qp->ibqp.qp_num;
	}
	pkt->ack_req = tr == SROCE_TRANSPORT_RC &&
		       (last || qp->req.since_ackreq + 1 >= SROCE_ACK_EVERY);
	pkt->payload_len = len;
	return len;
}

/*
 * The payload of the next packet: copied into the linear part if small
 * or inline, else attached as frags of the MR's pages (tx.c).
 */
static int sroce_req_payload(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
			     struct sk_buff *skb, u32 len)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	u8 *dst;

	if (wqe->is_inline) {
		skb_put_data(skb, wqe->inline_data + qp->req.offset, len);
		return 0;
	}
	if (len > SROCE_TX_COPY_MAX)
		return sroce_sgl_attach_skb(sdev, qp->pd, wqe->sge,
					    wqe->num_sge, &qp->req.cur, skb,
					    len);
	dst = skb_put(skb, len);
	return sroce_sgl_copy(sdev, qp->pd, wqe->sge, wqe->num_sge,
			      &qp->req.cur, dst, len, SROCE_FROM_MR, NULL);
}

/* Build and send the next packet of @wqe, advancing the requester. */
static int sroce_req_packet(struct sroce_qp *qp, struct sroce_send_wqe *wqe)
{
	const struct sroce_av *av = qp->ibqp.qp_type == IB_QPT_UD ||
				    qp->ibqp.qp_type == IB_QPT_GSI ?
				    &wqe->av : &qp->attr.av;
	struct sroce_sgl_cursor cur = qp->req.cur;
	u32 since_ackreq = qp->req.since_ackreq;
	u32 offset = qp->req.offset;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	u32 len, hdr, linear;
	int err;

	len = sroce_req_headers(qp, wqe, &pkt);
	hdr = sroce_opcode(pkt.opcode)->hdr_len;
	linear = wqe->is_inline || len <= SROCE_TX_COPY_MAX ? len : 0;
	skb = sroce_tx_alloc(qp, hdr + linear);
	if (!skb)
		return -ENOMEM;
	sroce_pkt_build(skb_put(skb, hdr), &pkt);
	err = sroce_req_payload(qp, wqe, skb, len);
	if (err) {
		kfree_skb(skb);
		/* Out of memory: try again later, from the same place. */
		if (err == -ENOMEM) {
			qp->req.cur = cur;
			return err;
		}
		sroce_wqe_done(qp, wqe, sroce_mr_wc_status(err, false));
		return err;
	}

	/*
	 * Advance first: a loopback ACK may be taken in before sroce_tx()
	 * returns, and a packet lost later is recovered by going back.  One
	 * the local queue had no room for never left: take the step back.
	 */
	if (sroce_wr_is_read_atomic(wqe->wr.opcode)) {
		qp->req.psn = sroce_psn_add(wqe->last_psn, 1);
		qp->req.offset = wqe->length;
	} else {
		qp->req.psn = sroce_psn_add(qp->req.psn, 1);
		qp->req.offset += len;
	}
	qp->req.since_ackreq = pkt.ack_req ? 0 : qp->req.since_ackreq + 1;
	err = sroce_tx(qp, av, skb);
	if (err) {
		qp->req.psn = pkt.psn;
		qp->req.offset = offset;
		qp->req.since_ackreq = since_ackreq;
		qp->req.cur = cur;
	}
	return err;
}

/* The WQE at req.next has sent its last packet. */
static void sroce_req_wqe_sent(struct sroce_qp *qp, struct sroce_send_wqe *wqe)
{
	if (qp->ibqp.qp_type == IB_QPT_RC)
		wqe->state = SROCE_WQE_SENT;
	else
		sroce_wqe_done(qp, wqe, IB_WC_SUCCESS);
	qp->req.next++;
	qp->req.offset = 0;
}

/**
 * sroce_req_send - send what the send queue has, up to @budget packets
 * @qp: the QP
 * @budget: packets and local operations at most
 *
 * Return: the number of packets sent and local operations done.
 */
int sroce_req_send(struct sroce_qp *qp, int budget)
{
	enum ib_qp_state state = sroce_qp_state(qp);
	int sent = 0, local = 0, err;

	if ((state != IB_QPS_RTS && state != IB_QPS_SQD) ||
	    test_bit(SROCE_QPF_TX_FULL, &qp->flags))
		return 0;
	sroce_sq_fetch(qp, 2 * budget);
	while (sent + local < budget && !qp->comp.rnr_wait &&
	       qp->req.next != qp->sq.head) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, qp->req.next);

		if (wqe->state == SROCE_WQE_DONE) {
			/* Failed when fetched: it ends the queue. */
			qp->req.next++;
			break;
		}
		if (wqe->state == SROCE_WQE_PENDING) {
			if (!sroce_wqe_may_start(qp, wqe))
				break;
			if (sroce_wr_is_local(wqe->wr.opcode)) {
				sroce_req_local(qp, wqe);
				qp->req.next++;
				local++;
				/*
				 * Retire it now: a local operation right
				 * behind waits for this one to retire, and
				 * nothing would run the engine again for it.
				 */
				sroce_sq_retire(qp);
				continue;
			}
			sroce_wqe_start(qp, wqe);
			if ((s32)(qp->req.next - qp->req.started) >= 0)
				qp->req.started = qp->req.next + 1;
		}
		err = sroce_req_packet(qp, wqe);
		if (err == -ENOMEM)
			sroce_req_retry_later(qp);
		if (err)
			break;
		sent++;
		if (qp->req.offset >= wqe->length)
			sroce_req_wqe_sent(qp, wqe);
	}
	if (sent && !timer_pending(&qp->retrans_timer))
		sroce_retrans_rearm(qp);
	sroce_sq_retire(qp);
	return sent + local;
}

/*
 * Go back N: resend from @psn, which a NAK, a timeout or a gap in the
 * responses says the peer has not got.  WQEs after the one holding @psn
 * are started again from scratch; PSNs come out the same.
 */
static void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	u32 i, end = qp->req.next;
	struct sroce_send_wqe *wqe;

	if (end != qp->sq.head &&
	    sroce_sq_wqe(qp, end)->state == SROCE_WQE_ACTIVE)
		end++;
	for (i = qp->req.tail; i != end; i++) {
		wqe = sroce_sq_wqe(qp, i);
		if (wqe->state == SROCE_WQE_DONE)
			continue;
		if (sroce_psn_cmp(psn, wqe->last_psn) <= 0)
			break;
	}
	if (i == end)
		return;

	qp->req.next = i;
	qp->req.psn = psn;
	qp->req.since_ackreq = 0;
	wqe = sroce_sq_wqe(qp, i);
	if (sroce_psn_cmp(psn, wqe->first_psn) < 0)
		psn = wqe->first_psn;
	qp->req.offset = sroce_wr_is_atomic(wqe->wr.opcode) ? 0 :
			 (psn - wqe->first_psn) * qp->attr.mtu;
	qp->req.psn = psn;
	memset(&qp->req.cur, 0, sizeof(qp->req.cur));
	if (!wqe->is_inline && qp->req.offset)
		sroce_sgl_advance(wqe->sge, wqe->num_sge, &qp->req.cur,
				  qp->req.offset);
	wqe->state = SROCE_WQE_ACTIVE;

	for (i++; i != end; i++) {
		wqe = sroce_sq_wqe(qp, i);
		if (wqe->state == SROCE_WQE_DONE)
			continue;
		if (wqe->rd_counted) {
			wqe->rd_counted = false;
			qp->req.rd_atomic--;
		}
		wqe->state = SROCE_WQE_PENDING;
	}
}

/* ---------------------------------------------------------- completer */

/* The peer made progress: retries start over, the timer restarts. */
static void sroce_comp_progress(struct sroce_qp *qp, u32 psn)
{
	if (sroce_psn_cmp(psn, qp->comp.psn) > 0) {
		qp->comp.psn = psn;
		qp->comp.seq_retry = false;
	}
	qp->comp.retry_left = qp->attr.retry_cnt;
	sroce_retrans_rearm(qp);
}

/*
 * Everything up to and including @psn has arrived.  SENDs and WRITEs that
 * end there are complete; a READ or atomic there without its response
 * means the response was lost, so its request goes again.  Returns the
 * first WQE not completed, or NULL.
 */
static struct sroce_send_wqe *sroce_comp_ack_upto(struct sroce_qp *qp,
						  u32 psn)
{
	u32 i;

	for (i = qp->req.tail; i != qp->req.next; i++) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, i);

		if (wqe->state == SROCE_WQE_DONE)
			continue;
		if (sroce_psn_cmp(wqe->last_psn, psn) > 0)
			return wqe;
		if (sroce_wr_is_read_atomic(wqe->wr.opcode))
			return wqe;
		sroce_wqe_done(qp, wqe, IB_WC_SUCCESS);
		sroce_comp_progress(qp, sroce_psn_add(wqe->last_psn, 1));
	}
	return i == qp->sq.head ? NULL : sroce_sq_wqe(qp, i);
}

static void sroce_comp_ack(struct sroce_qp *qp, u32 psn)
{
	struct sroce_send_wqe *wqe;

	if (sroce_psn_cmp(psn, qp->comp.psn) < 0)
		return;		/* an old, duplicate ACK */
	wqe = sroce_comp_ack_upto(qp, psn);
	if (wqe && sroce_wr_is_read_atomic(wqe->wr.opcode) &&
	    sroce_psn_cmp(wqe->last_psn, psn) <= 0) {
		sroce_req_rewind(qp, qp->comp.psn);
		return;
	}
	sroce_comp_progress(qp, sroce_psn_add(psn, 1));
}

/* The oldest READ/atomic WQE, once the ones before it are acknowledged. */
static struct sroce_send_wqe *sroce_comp_rd_wqe(struct sroce_qp *qp, u32 psn)
{
	struct sroce_send_wqe *wqe;

	wqe = sroce_comp_ack_upto(qp, sroce_psn_add(psn, -1));
	if (!wqe || !sroce_wr_is_read_atomic(wqe->wr.opcode) ||
	    wqe->state == SROCE_WQE_PENDING ||
	    sroce_psn_cmp(psn, wqe->first_psn) < 0 ||
	    sroce_psn_cmp(psn, wqe->last_psn) > 0)
		return NULL;
	return wqe;
}

/* Responses must come in order; a gap means loss: ask again. */
static bool sroce_comp_in_order(struct sroce_qp *qp, u32 psn)
{
	int d = sroce_psn_cmp(psn, qp->comp.psn);

	if (d > 0)
		sroce_req_rewind(qp, qp->comp.psn);
	return !d;
}

static void sroce_comp_read_resp(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt,
				 struct sk_buff *skb)
{
	struct sroce_send_wqe *wqe = sroce_comp_rd_wqe(qp, pkt->psn);
	bool last = wqe && pkt->psn == wqe->last_psn;
	u32 want;
	int err;

	if (!wqe || wqe->wr.opcode != IB_WR_RDMA_READ ||
	    !sroce_comp_in_order(qp, pkt->psn))
		return;
	want = min(wqe->length - qp->comp.read_off, qp->attr.mtu);
	if (pkt->payload_len != want) {
		sroce_wqe_done(qp, wqe, IB_WC_BAD_RESP_ERR);
		return;
	}
	err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd, wqe->sge,
				 wqe->num_sge, &qp->comp.cur, skb,
				 pkt->hdr_len, want, SROCE_TO_MR, NULL);
	if (err) {
		sroce_wqe_done(qp, wqe, sroce_mr_wc_status(err, false));
		return;
	}
	qp->comp.read_off += want;
	if (last) {
		qp->comp.read_off = 0;
		memset(&qp->comp.cur, 0, sizeof(qp->comp.cur));
		sroce_wqe_done(qp, wqe, IB_WC_SUCCESS);
	}
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
}

static void sroce_comp_atomic_ack(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt)
{
	struct sroce_send_wqe *wqe = sroce_comp_rd_wqe(qp, pkt->psn);
	u64 orig = pkt->atomic_orig;
	struct sroce_sgl_cursor cur = {};
	int err;

	if (!wqe || !sroce_wr_is_atomic(wqe->wr.opcode) ||
	    !sroce_comp_in_order(qp, pkt->psn))
		return;
	err = sroce_sgl_copy(sroce_qp_dev(qp), qp->pd, wqe->sge, wqe->num_sge,
			     &cur, &orig, sizeof(orig), SROCE_TO_MR, NULL);
	sroce_wqe_done(qp, wqe, err ? sroce_mr_wc_status(err, false) :
				      IB_WC_SUCCESS);
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
}

/* The WQE the peer refused with a NAK or RNR NAK for @psn. */
static struct sroce_send_wqe *sroce_comp_naked(struct sroce_qp *qp, u32 psn)
{
	struct sroce_send_wqe *wqe;

	if (sroce_psn_cmp(psn, qp->comp.psn) > 0)
		sroce_comp_ack(qp, sroce_psn_add(psn, -1));
	wqe = sroce_comp_ack_upto(qp, sroce_psn_add(psn, -1));
	if (!wqe || wqe->state == SROCE_WQE_PENDING ||
	    sroce_psn_cmp(psn, wqe->first_psn) < 0)
		return NULL;
	return wqe;
}

static void sroce_comp_rnr(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_send_wqe *wqe = sroce_comp_naked(qp, psn);

	if (!wqe)
		return;
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_RNR_NAK_RCVD);
	if (!qp->comp.rnr_left) {
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RETRY_EXCEEDED);
		sroce_wqe_done(qp, wqe, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (qp->comp.rnr_left != 7)
		qp->comp.rnr_left--;
	sroce_req_rewind(qp, psn);
	qp->comp.rnr_wait = true;
	del_timer(&qp->retrans_timer);
	mod_timer(&qp->rnr_timer, jiffies + sroce_rnr_timer_jiffies(timer));
}

static enum ib_wc_status sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		/* Reserved codes: the peer failed in some way of its own. */
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * The peer saw a gap before @psn: go back to it.  Like a timeout, that
 * uses up a retry (the count starts over when the peer makes progress),
 * and one go-back-N at a time: the NAKs the packets already in flight
 * draw are answered by the resend under way.
 */
static void sroce_comp_seq_nak(struct sroce_qp *qp,
			       struct sroce_send_wqe *wqe, u32 psn)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);

	sroce_count(sdev, SROCE_CNT_SEQ_NAK_RCVD);
	if (qp->comp.seq_retry) {
		sroce_count(sdev, SROCE_CNT_SEQ_NAK_IGNORED);
		return;
	}
	if (!qp->comp.retry_left) {
		sroce_count(sdev, SROCE_CNT_RETRY_EXCEEDED);
		sroce_wqe_done(qp, wqe, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	qp->comp.seq_retry = true;
	sroce_req_rewind(qp, psn);
}

static void sroce_comp_nak(struct sroce_qp *qp, u32 psn, u8 syndrome)
{
	struct sroce_send_wqe *wqe = sroce_comp_naked(qp, psn);

	if (!wqe)
		return;
	if (syndrome == SROCE_NAK_PSN_SEQ_ERR)
		sroce_comp_seq_nak(qp, wqe, psn);
	else
		sroce_wqe_done(qp, wqe, sroce_nak_status(syndrome));
}

/* The states in which the completer takes responses in (and goes back). */
static bool sroce_comp_active(const struct sroce_qp *qp)
{
	enum ib_qp_state state = sroce_qp_state(qp);

	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE;
}

/*
 * Is @pkt, an ACK or a response, past a gap: does it answer a request
 * after a READ or atomic whose response has not come?  (Acknowledges, on
 * the way, the requests it shows to have been received.)  A packet past
 * a gap is held (reorder.c) rather than taken for a sign of loss.
 */
static bool sroce_comp_past_gap(struct sroce_qp *qp,
				const struct sroce_pkt *pkt)
{
	struct sroce_send_wqe *wqe;

	if (sroce_psn_cmp(pkt->psn, qp->comp.psn) <= 0)
		return false;
	if (pkt->flags & (SROCE_F_READ_RESP | SROCE_F_ATOMIC_ACK)) {
		sroce_comp_ack_upto(qp, sroce_psn_add(pkt->psn, -1));
		return sroce_psn_cmp(pkt->psn, qp->comp.psn) > 0;
	}
	wqe = sroce_comp_ack_upto(qp, pkt->psn);
	return wqe && sroce_wr_is_read_atomic(wqe->wr.opcode) &&
	       sroce_psn_cmp(wqe->last_psn, pkt->psn) <= 0;
}

static void sroce_comp_rcv_one(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			       struct sk_buff *skb)
{
	u8 syn = pkt->syndrome;

	/* Nothing was sent at or after req.psn: a stray response. */
	if (sroce_psn_cmp(pkt->psn, qp->req.psn) >= 0)
		return;

	if ((pkt->flags & SROCE_HDR_AETH) &&
	    sroce_aeth_type(syn) != SROCE_AETH_ACK) {
		if (sroce_aeth_type(syn) == SROCE_AETH_RNR_NAK)
			sroce_comp_rnr(qp, pkt->psn, sroce_aeth_value(syn));
		else if (sroce_aeth_type(syn) == SROCE_AETH_NAK)
			sroce_comp_nak(qp, pkt->psn, syn);
	} else if (pkt->flags & SROCE_F_READ_RESP) {
		sroce_comp_read_resp(qp, pkt, skb);
	} else if (pkt->flags & SROCE_F_ATOMIC_ACK) {
		sroce_comp_atomic_ack(qp, pkt);
	} else if (pkt->flags & SROCE_F_ACK) {
		sroce_comp_ack(qp, pkt->psn);
	}
}

/* Take in the held packets the last one made next in sequence. */
static void sroce_comp_release_held(struct sroce_qp *qp)
{
	struct sk_buff_head *held = &qp->comp.held;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	bool moved = false;

	while ((skb = skb_peek(held))) {
		/* Parsed once already; a packet now behind is a copy. */
		if (!sroce_pkt_parse(skb->data, skb->len, &pkt) &&
		    sroce_psn_cmp(pkt.psn, qp->comp.psn) >= 0) {
			if (sroce_comp_past_gap(qp, &pkt))
				break;
			sroce_comp_rcv_one(qp, &pkt, skb);
		}
		__skb_unlink(skb, held);
		kfree_skb(skb);
		moved = true;
	}
	if (moved && !skb_queue_empty(held))
		sroce_reorder_arm(qp);
}

/**
 * sroce_comp_rcv - a response from the peer of an RC QP
 * @qp: the QP
 * @pkt: its decoded headers (an ACK, READ response or atomic ACK)
 * @skb: the packet; see qp.h
 */
void sroce_comp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb)
{
	bool nak = (pkt->flags & SROCE_HDR_AETH) &&
		   sroce_aeth_type(pkt->syndrome) != SROCE_AETH_ACK;

	if (!sroce_comp_active(qp))
		return;
	if (!nak && sroce_psn_cmp(pkt->psn, qp->req.psn) < 0 &&
	    sroce_comp_past_gap(qp, pkt)) {
		if (!sroce_reorder_hold(qp, &qp->comp.held, pkt->psn, skb))
			sroce_comp_reorder_expired(qp);
	} else {
		sroce_comp_rcv_one(qp, pkt, skb);
		if (!skb_queue_empty(&qp->comp.held))
			sroce_comp_release_held(qp);
	}
	sroce_sq_retire(qp);
}

/**
 * sroce_comp_reorder_expired - the gap held responses wait on is a loss
 * @qp: an RC QP
 *
 * Asks again from the oldest PSN not answered (go-back-N); what is held
 * goes, the answers to the requests sent again will come.
 *
 * Context: the QP's engine.
 */
void sroce_comp_reorder_expired(struct sroce_qp *qp)
{
	if (skb_queue_empty(&qp->comp.held))
		return;
	__skb_queue_purge(&qp->comp.held);
	if (sroce_comp_active(qp))
		sroce_req_rewind(qp, qp->comp.psn);
}

/* The local ACK timer fired: resend from the oldest unacknowledged PSN. */
void sroce_comp_timeout(struct sroce_qp *qp)
{
	struct sroce_send_wqe *wqe;

	/* Only RC waits for the peer; otherwise see sroce_req_retry_later(). */
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->attr.timeout ||
	    !sroce_req_outstanding(qp) || qp->comp.rnr_wait)
		return;
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_RETRANS_TIMEOUT);
	if (!qp->comp.retry_left) {
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RETRY_EXCEEDED);
		wqe = sroce_comp_ack_upto(qp, sroce_psn_add(qp->comp.psn, -1));
		if (wqe && wqe->state != SROCE_WQE_PENDING)
			sroce_wqe_done(qp, wqe, IB_WC_RETRY_EXC_ERR);
		sroce_sq_retire(qp);
		return;
	}
	qp->comp.retry_left--;
	sroce_req_rewind(qp, qp->comp.psn);
	sroce_retrans_rearm(qp);
}

void sroce_comp_rnr_expired(struct sroce_qp *qp)
{
	qp->comp.rnr_wait = false;
}

/* --------------------------------------------------------------- flush */

static void sroce_flush_slot(struct sroce_qp *qp, const struct rxe_send_wqe *slot)
{
	struct sroce_send_wqe wqe = {};

	wqe.wr.wr_id = READ_ONCE(slot->wr.wr_id);
	wqe.wr.opcode = READ_ONCE(slot->wr.opcode);
	sroce_send_complete(qp, &wqe, IB_WC_WR_FLUSH_ERR);
}

/**
 * sroce_sq_flush - complete everything on the send queue
 * @qp: a QP in the ERR state
 *
 * The first WQE that failed reports its own status; everything else,
 * fetched or still in the ring, completes with IB_WC_WR_FLUSH_ERR.  At
 * most SROCE_FLUSH_BUDGET completions a call: a user may go on posting
 * while we flush, and this runs under the engine's BH lock.
 *
 * Return: true if the queue is empty, false if there is more to flush.
 */
bool sroce_sq_flush(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	int budget = SROCE_FLUSH_BUDGET;

	del_timer(&qp->retrans_timer);
	del_timer(&qp->rnr_timer);
	for (; budget && qp->req.tail != sq->head; budget--) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, qp->req.tail);

		sroce_send_complete(qp, wqe, wqe->state == SROCE_WQE_DONE ?
					wqe->status : IB_WC_WR_FLUSH_ERR);
		qp->req.tail++;
	}
	for (; budget && !sroce_queue_empty(&sq->q); budget--) {
		sroce_flush_slot(qp, sroce_queue_consumer_addr(&sq->q));
		sroce_queue_advance_consumer(&sq->q);
	}
	qp->req.next = sq->head;
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
	qp->comp.rnr_wait = false;
	qp->comp.psn = qp->req.psn;
	return qp->req.tail == sq->head && sroce_queue_empty(&sq->q);
}

/* The send side of a QP entering RESET: drop all of it. */
void sroce_send_init(struct sroce_qp *qp)
{
	u32 n;

	del_timer(&qp->retrans_timer);
	del_timer(&qp->rnr_timer);
	/* Bounded: the producer index is the user's to change meanwhile. */
	for (n = sroce_queue_capacity(&qp->sq.q); n; n--) {
		if (sroce_queue_empty(&qp->sq.q))
			break;
		sroce_queue_advance_consumer(&qp->sq.q);
	}
	memset(&qp->req, 0, sizeof(qp->req));
	__skb_queue_purge(&qp->comp.held);
	memset(&qp->comp, 0, sizeof(qp->comp));
	__skb_queue_head_init(&qp->comp.held);
	qp->sq.head = 0;
}

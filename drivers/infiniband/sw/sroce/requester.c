// SPDX-License-Identifier: GPL-2.0-only
/*
 * The requester: it turns send WQEs into packets (RC, UC, UD), and goes
 * back to the first PSN the peer has not acknowledged when the completer
 * (completer.c) finds one lost.
 *
 * WQEs are copied out of the send ring into qp->sq.wqe when fetched (the
 * ring slot is released at once) and live there until retired, in order:
 *
 *	req.tail <= ... retired up to here
 *	           [tail, next)  sent, waiting for the peer (RC)
 *	           next          being sent (req.offset bytes done)
 *	           (next, head)  fetched, not started
 *
 * All of it runs in the QP's engine (see engine.h): no locks.
 */
#include <linux/jiffies.h>
#include <linux/skbuff.h>

#include "sroce.h"
#include "completer.h"
#include "mem.h"
#include "netdev.h"
#include "odp.h"
#include "qp.h"
#include "requester.h"
#include "timers.h"
#include "trace.h"
#include "tx.h"

/*
 * An RC requester asks for an ACK at least every this many packets, and
 * at least four times a window (sroce_req_ack_due()).
 */
#define SROCE_ACK_EVERY		64

/*
 * Should the packet at req.psn ask for an ACK?  The last of a message
 * does, and one every SROCE_ACK_EVERY; and, for a window shrunk by
 * losses (cwnd.h), one every quarter window and the one that fills it: the
 * window must never close on packets the responder has no reason to
 * acknowledge yet.
 */
static bool sroce_req_ack_due(const struct sroce_qp *qp, bool last)
{
	u32 window = qp->req.cwnd.window;

	return last ||
	       qp->req.since_ackreq + 1 >=
			clamp_t(u32, window / 4, 1, SROCE_ACK_EVERY) ||
	       sroce_psn_add(qp->req.psn, 1) ==
			sroce_psn_add(qp->comp.psn, window);
}

static bool sroce_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_LOCAL_INV ||
	       opcode == IB_WR_BIND_MW;
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
	case IB_WR_FLUSH:
	case IB_WR_ATOMIC_WRITE:
		return qp->ibqp.qp_type == IB_QPT_RC;
	case IB_WR_REG_MR:
		/* A user ring's MR pointer is whatever userspace wrote. */
		return !qp->is_user && qp->ibqp.qp_type == IB_QPT_RC;
	case IB_WR_LOCAL_INV:
		/* Only a key: a user invalidates its type 2 windows so. */
		return qp->ibqp.qp_type == IB_QPT_RC;
	case IB_WR_BIND_MW:
		/* From the user ring only: kernel posts have no wr.mw. */
		return qp->is_user && (qp->ibqp.qp_type == IB_QPT_RC ||
				       qp->ibqp.qp_type == IB_QPT_UC);
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

/*
 * FLUSH and ATOMIC WRITE have no gather list, in librxe's layout (which
 * the kernel's post_send follows): a FLUSH's range length is in
 * dma.length, an ATOMIC WRITE's 8 bytes are in dma.atomic_wr, the start
 * of the slot's data area (6.1's header names it inline_data only).
 */
static int sroce_wqe_copy_pmem(struct sroce_qp *qp,
			       const struct rxe_send_wqe *slot,
			       struct sroce_send_wqe *wqe)
{
	if (wqe->wr.opcode == IB_WR_FLUSH) {
		if (!sroce_feth_ok(sroce_wr_flush(&wqe->wr)->type,
				   sroce_wr_flush(&wqe->wr)->level))
			return -EINVAL;
		wqe->length = READ_ONCE(slot->dma.length);
		return 0;
	}
	/* The slot's data area is smaller than 8 bytes: it is not there. */
	if (qp->sq.max_inline < SROCE_ATOMIC_WRITE_LEN ||
	    READ_ONCE(slot->dma.length) != SROCE_ATOMIC_WRITE_LEN ||
	    wqe->wr.wr.rdma.remote_addr & 7)
		return -EINVAL;
	memcpy(wqe->inline_data, slot->dma.inline_data, SROCE_ATOMIC_WRITE_LEN);
	wqe->is_inline = true;
	wqe->length = SROCE_ATOMIC_WRITE_LEN;
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
	if (sroce_wr_is_pmem(op))
		return sroce_wqe_copy_pmem(qp, slot, wqe);
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
		WRITE_ONCE(sq->head, sq->head + 1);
	}
	sq->fetch_blocked = !sroce_queue_empty(&sq->q);
	sq->fetch_more = !budget && sq->fetch_blocked;
}

/* ---------------------------------------------------------- requester */

/* No memory for a packet: come back in a tick (sroce_timers_nomem()). */
static void sroce_req_retry_later(struct sroce_qp *qp)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_TX_NOMEM);
	sroce_timers_nomem(qp);
}

/*
 * A page of a local SGE of an ODP MR is being faulted in (odp.h): wait
 * as after an RNR NAK, a tick, then build the same packet again.  The
 * wait counts against no retry limit; a fault that fails completes the
 * WQE in error instead (-EFAULT, a local protection error).
 */
static void sroce_req_odp_wait(struct sroce_qp *qp)
{
	qp->comp.rnr_wait = true;
	sroce_timers_rnr(qp, SROCE_ODP_WAIT_CODE);
}

static u32 sroce_wqe_npkts(const struct sroce_qp *qp,
			   const struct sroce_send_wqe *wqe)
{
	if (sroce_wr_is_atomic(wqe->wr.opcode) ||
	    sroce_wr_is_pmem(wqe->wr.opcode) ||
	    qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(wqe->length, qp->attr.mtu));
}

/*
 * Execute a local operation (REG_MR, LOCAL_INV, BIND_MW): no packet, no
 * PSN.  A failed bind completes with IB_WC_MW_BIND_ERR (as rdma_rxe).
 */
static void sroce_req_local(struct sroce_qp *qp, struct sroce_send_wqe *wqe)
{
	int err;

	if (wqe->wr.opcode == IB_WR_BIND_MW) {
		err = sroce_mw_bind(qp, &wqe->wr);
		sroce_wqe_done(qp, wqe, err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS);
		return;
	}
	if (wqe->wr.opcode == IB_WR_REG_MR)
		err = sroce_mr_fast_reg(to_smr(wqe->wr.wr.reg.mr), qp->pd,
					wqe->wr.wr.reg.key,
					wqe->wr.wr.reg.access);
	else
		err = sroce_key_invalidate(qp, wqe->wr.ex.invalidate_rkey,
					   false);
	sroce_wqe_done(qp, wqe, err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS);
}

/*
 * May WQE @wqe, not yet started, go now?  Reads and atomics are limited
 * by max_rd_atomic, fenced WQEs wait for them, local operations wait for
 * everything before them.  (The RC window is checked per packet, by
 * sroce_req_window_open().)
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
	return !sroce_wr_is_read_atomic(op) ||
	       qp->req.rd_atomic < max_t(u32, qp->attr.max_rd_atomic, 1);
}

/*
 * RC keeps at most its congestion window (cwnd.h, at most
 * SROCE_MAX_UNACKED_PSNS) of packets in flight.  Counted per packet, not
 * per message: a message longer than the window waits in the middle for
 * the ACKs (a 1 MiB SEND once put 1535 PSNs in flight).  A READ request
 * counts once, for all the PSNs of its responses.
 */
static bool sroce_req_window_open(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type != IB_QPT_RC ||
	       sroce_psn_cmp(qp->req.psn,
			     sroce_psn_add(qp->comp.psn,
					   qp->req.cwnd.window)) < 0;
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
 * FLUSH (FETH and RETH, no payload) or ATOMIC WRITE (RETH and its 8
 * bytes); returns the payload length.
 */
static u32 sroce_req_pmem_headers(struct sroce_send_wqe *wqe,
				  struct sroce_pkt *pkt)
{
	pkt->ack_req = true;
	if (wqe->wr.opcode == IB_WR_FLUSH) {
		pkt->opcode = SROCE_OPCODE(RC, FLUSH);
		pkt->va = sroce_wr_flush(&wqe->wr)->remote_addr;
		pkt->rkey = sroce_wr_flush(&wqe->wr)->rkey;
		pkt->dma_len = wqe->length;
		pkt->flush_type = sroce_wr_flush(&wqe->wr)->type;
		pkt->flush_level = sroce_wr_flush(&wqe->wr)->level;
		return 0;
	}
	pkt->opcode = SROCE_OPCODE(RC, ATOMIC_WRITE);
	pkt->va = wqe->wr.wr.rdma.remote_addr;
	pkt->rkey = wqe->wr.wr.rdma.rkey;
	pkt->dma_len = SROCE_ATOMIC_WRITE_LEN;
	pkt->payload_len = SROCE_ATOMIC_WRITE_LEN;
	return SROCE_ATOMIC_WRITE_LEN;
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
	if (sroce_wr_is_pmem(op))
		return sroce_req_pmem_headers(wqe, pkt);

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
	pkt->ack_req = tr == SROCE_TRANSPORT_RC && sroce_req_ack_due(qp, last);
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
			      &qp->req.cur, dst, len, SROCE_FROM_MR);
}

/*
 * rdma_rxe (Linux 6.2 to at least 6.12) wants a FLUSH's ICRC in a form of
 * its own and drops one made by the rules as corrupt, silently (icrc.c,
 * sroce_icrc_rxe_flush()), and nothing on the wire tells rxe from another
 * peer.  So a FLUSH goes out in the form its QP's peer answered last, the
 * IBTA's at first, and each time it is sent again (a timeout, a go-back-N)
 * in the other: against rxe, the first FLUSH of a QP costs one ACK
 * timeout and one retry; against any other peer nothing, unless packets
 * are lost (then a FLUSH sent again may need one more).  sroce takes
 * either form (rx.c).
 */
static int sroce_req_tx(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
			const struct sroce_av *av, struct sk_buff *skb)
{
	int err;

	if (wqe->wr.opcode != IB_WR_FLUSH)
		return sroce_tx(qp, av, skb);
	wqe->flush_rxe = qp->req.flush_rxe ^ (wqe->flush_sends & 1);
	wqe->flush_sends++;
	err = wqe->flush_rxe ? sroce_tx_rxe_flush(qp, av, skb) :
			       sroce_tx(qp, av, skb);
	if (err)
		wqe->flush_sends--;
	return err;
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
		/*
		 * Out of memory, or an ODP page being faulted in: try again
		 * later, from the same place.
		 */
		if (err == -ENOMEM || err == -EAGAIN) {
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
		WRITE_ONCE(qp->req.psn, sroce_psn_add(wqe->last_psn, 1));
		qp->req.offset = wqe->length;
	} else {
		WRITE_ONCE(qp->req.psn, sroce_psn_add(qp->req.psn, 1));
		qp->req.offset += len;
	}
	qp->req.since_ackreq = pkt.ack_req ? 0 : qp->req.since_ackreq + 1;
	err = sroce_req_tx(qp, wqe, av, skb);
	if (err) {
		WRITE_ONCE(qp->req.psn, pkt.psn);
		qp->req.offset = offset;
		qp->req.since_ackreq = since_ackreq;
		qp->req.cur = cur;
	} else if (sroce_psn_cmp(qp->req.psn, qp->req.psn_high) > 0) {
		WRITE_ONCE(qp->req.psn_high, qp->req.psn);
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
	WRITE_ONCE(qp->req.next, qp->req.next + 1);
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
			WRITE_ONCE(qp->req.next, qp->req.next + 1);
			break;
		}
		if (!sroce_req_window_open(qp))
			break;
		if (wqe->state == SROCE_WQE_PENDING) {
			if (!sroce_wqe_may_start(qp, wqe))
				break;
			if (sroce_wr_is_local(wqe->wr.opcode)) {
				sroce_req_local(qp, wqe);
				WRITE_ONCE(qp->req.next, qp->req.next + 1);
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
		else if (err == -EAGAIN)
			sroce_req_odp_wait(qp);
		else if (err && wqe->state == SROCE_WQE_DONE)
			/*
			 * Its packet could not be built (a local SGE that
			 * cannot be read): it ends the queue, as one that
			 * failed when fetched; the retire below reports it.
			 */
			WRITE_ONCE(qp->req.next, qp->req.next + 1);
		if (err)
			break;
		sent++;
		if (qp->req.offset >= wqe->length)
			sroce_req_wqe_sent(qp, wqe);
	}
	if (sent)
		sroce_timers_sent(qp);
	sroce_sq_retire(qp);
	return sent + local;
}

/*
 * Count a go-back-N where rdma res (per QP), the port counters and the
 * sroce_retransmit tracepoint show it.  rdma_rxe's completer_retry_err
 * counts the ones an RNR NAK did not cause.  A lost request shrinks the
 * window (cwnd.h); RNR is no loss, and a lost READ response or ACK came
 * from the peer, whose bursts the window does not size.
 */
static void sroce_req_rewound(struct sroce_qp *qp, u32 from,
			      enum sroce_rewind why)
{
	WRITE_ONCE(qp->req.rewinds, qp->req.rewinds + 1);
	if (why == SROCE_REWIND_SEQ_NAK || why == SROCE_REWIND_TIMEOUT)
		sroce_cwnd_loss(&qp->req.cwnd, why == SROCE_REWIND_TIMEOUT);
	if (why != SROCE_REWIND_RNR)
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_COMP_RETRY);
	trace_sroce_retransmit(&qp->ibqp, from, qp->req.psn, why);
}

/*
 * Go back N: resend from @psn, which a NAK, a timeout or a gap in the
 * responses says the peer has not got.  WQEs after the one holding @psn
 * are started again from scratch; PSNs come out the same.
 */
void sroce_req_rewind(struct sroce_qp *qp, u32 psn, enum sroce_rewind why)
{
	u32 i, end = qp->req.next, from = qp->req.psn;
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

	WRITE_ONCE(qp->req.next, i);
	WRITE_ONCE(qp->req.psn, psn);
	qp->req.since_ackreq = 0;
	wqe = sroce_sq_wqe(qp, i);
	if (sroce_psn_cmp(psn, wqe->first_psn) < 0)
		psn = wqe->first_psn;
	qp->req.offset = sroce_wr_is_atomic(wqe->wr.opcode) ? 0 :
			 (psn - wqe->first_psn) * qp->attr.mtu;
	WRITE_ONCE(qp->req.psn, psn);
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
	sroce_req_rewound(qp, from, why);
}

/* The requester of a QP entering RESET: drop everything it has. */
void sroce_req_reset(struct sroce_qp *qp)
{
	u32 n;

	/* Bounded: the producer index is the user's to change meanwhile. */
	for (n = sroce_queue_capacity(&qp->sq.q); n; n--) {
		if (sroce_queue_empty(&qp->sq.q))
			break;
		sroce_queue_advance_consumer(&qp->sq.q);
	}
	memset(&qp->req, 0, sizeof(qp->req));
	WRITE_ONCE(qp->sq.head, 0);
}

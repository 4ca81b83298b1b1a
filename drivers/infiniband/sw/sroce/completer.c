// SPDX-License-Identifier: GPL-2.0-only
/*
 * The completer: the receive side of an RC requester.  It turns the
 * peer's ACKs, NAKs, READ responses and atomic ACKs into completions of
 * the send WQEs the requester sent (requester.c, which describes the
 * WQE ring), retires them in posting order, starts go-back-N on a loss,
 * and flushes the send queue of a QP in error.
 *
 * All of it runs in the QP's engine (see engine.h): no locks.
 */
#include <linux/jiffies.h>
#include <linux/skbuff.h>

#include "sroce.h"
#include "completer.h"
#include "cq.h"
#include "mem.h"
#include "odp.h"
#include "qp.h"
#include "reorder.h"
#include "requester.h"
#include "timers.h"
#include "trace.h"
#include "tx.h"

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
	case IB_WR_FLUSH:
		return IB_WC_FLUSH;
	case IB_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/* -------------------------------------------------------- completion */

/* Post the completion of a send WQE, if it is signaled or failed. */
static void sroce_sq_complete(struct sroce_qp *qp,
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

void sroce_wqe_done(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
		    enum ib_wc_status status)
{
	if (wqe->rd_counted) {
		wqe->rd_counted = false;
		qp->req.rd_atomic--;
	}
	wqe->state = SROCE_WQE_DONE;
	wqe->status = status;
}

/*
 * Completions one retire posts at most: one ACK may end thousands of WQEs
 * (an SQ holds up to 16383), and each completion may call the consumer's
 * handler, all under the engine's BH lock.
 */
#define SROCE_RETIRE_BUDGET	256

/*
 * Report the WQEs at the tail that are done, in posting order, up to
 * SROCE_RETIRE_BUDGET of them; the engine's next pass reports the rest
 * (SROCE_QPF_RETIRE).
 */
void sroce_sq_retire(struct sroce_qp *qp)
{
	int budget = SROCE_RETIRE_BUDGET;

	while (qp->req.tail != qp->req.next) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, qp->req.tail);

		if (wqe->state != SROCE_WQE_DONE)
			break;
		if (!budget--) {
			set_bit(SROCE_QPF_RETIRE, &qp->flags);
			return;
		}
		sroce_sq_complete(qp, wqe, wqe->status);
		WRITE_ONCE(qp->req.tail, qp->req.tail + 1);
		if (wqe->status != IB_WC_SUCCESS) {
			sroce_qp_error(qp);
			return;
		}
		if (sroce_wc_opcode(wqe->wr.opcode) == IB_WC_SEND)
			sroce_count(sroce_qp_dev(qp), SROCE_CNT_RDMA_SENDS);
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

/* ---------------------------------------------------------- completer */

/* The peer made progress: retries start over, the timer restarts. */
static void sroce_comp_progress(struct sroce_qp *qp, u32 psn)
{
	if (sroce_psn_cmp(psn, qp->comp.psn) > 0) {
		sroce_cwnd_acked(&qp->req.cwnd,
				 (psn - qp->comp.psn) & SROCE_PSN_MASK);
		WRITE_ONCE(qp->comp.psn, psn);
		sroce_tx_peer_alive(qp);
		qp->comp.seq_retry = false;
		qp->comp.reasked = false;
	}
	qp->comp.retry_left = qp->attr.retry_cnt;
	sroce_timers_progress(qp);
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
		sroce_req_rewind(qp, qp->comp.psn, SROCE_REWIND_READ_LOST);
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
		sroce_req_rewind(qp, qp->comp.psn, SROCE_REWIND_GAP);
	return !d;
}

/*
 * A FLUSH or ATOMIC WRITE is answered by an RDMA READ response ONLY
 * without payload (IBA oA19-13, oA19-30): it is complete, its data
 * placed (and, for a FLUSH, made visible) at the peer.  The form of ICRC
 * the FLUSH went with is the one the peer takes (requester.c,
 * sroce_req_tx()).
 */
static void sroce_comp_pmem_resp(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt,
				 struct sroce_send_wqe *wqe)
{
	bool only = (pkt->flags & SROCE_F_ONLY) == SROCE_F_ONLY;

	if (wqe->wr.opcode == IB_WR_FLUSH)
		qp->req.flush_rxe = wqe->flush_rxe;

	sroce_wqe_done(qp, wqe, only && !pkt->payload_len ? IB_WC_SUCCESS :
							    IB_WC_BAD_RESP_ERR);
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
}

/*
 * A READ response or atomic ACK at @psn has nowhere to go yet: a page of
 * an ODP MR of the WQE's SGEs is being faulted in (odp.h).  Drop it and
 * ask again from @psn once the fault has had a tick (the responder
 * answers a READ asked again afresh, an atomic from what it kept), as
 * after an RNR NAK but without counting against rnr_retry.  The
 * responses behind it still in flight are past req.psn now: dropped as
 * stale.
 */
static void sroce_comp_odp_wait(struct sroce_qp *qp, u32 psn)
{
	sroce_reorder_drop(qp, &qp->comp.held);
	sroce_req_rewind(qp, psn, SROCE_REWIND_RNR);
	qp->comp.rnr_wait = true;
	sroce_timers_rnr(qp, SROCE_ODP_WAIT_CODE);
}

static void sroce_comp_read_resp(struct sroce_qp *qp,
				 const struct sroce_pkt *pkt,
				 struct sk_buff *skb)
{
	struct sroce_send_wqe *wqe = sroce_comp_rd_wqe(qp, pkt->psn);
	bool last = wqe && pkt->psn == wqe->last_psn;
	struct sroce_sgl_cursor cur;
	u32 want;
	int err;

	if (wqe && sroce_wr_is_pmem(wqe->wr.opcode) &&
	    sroce_comp_in_order(qp, pkt->psn)) {
		sroce_comp_pmem_resp(qp, pkt, wqe);
		return;
	}
	if (!wqe || wqe->wr.opcode != IB_WR_RDMA_READ ||
	    !sroce_comp_in_order(qp, pkt->psn))
		return;
	want = min(wqe->length - qp->comp.read_off, qp->attr.mtu);
	if (pkt->payload_len != want) {
		sroce_wqe_done(qp, wqe, IB_WC_BAD_RESP_ERR);
		return;
	}
	cur = qp->comp.cur;
	err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd, wqe->sge,
				 wqe->num_sge, &qp->comp.cur, skb,
				 pkt->hdr_len, want, SROCE_TO_MR);
	if (err == -EAGAIN) {
		qp->comp.cur = cur;
		sroce_comp_odp_wait(qp, pkt->psn);
		return;
	}
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
			     &cur, &orig, sizeof(orig), SROCE_TO_MR);
	if (err == -EAGAIN) {
		sroce_comp_odp_wait(qp, pkt->psn);
		return;
	}
	sroce_wqe_done(qp, wqe, err ? sroce_mr_wc_status(err, false) :
				      IB_WC_SUCCESS);
	sroce_comp_progress(qp, sroce_psn_add(pkt->psn, 1));
}

/*
 * The WQE the peer refused with a NAK or RNR NAK for @psn.  A NAK for a
 * PSN already acknowledged is stale (a copy, or overtaken by the ACK of
 * a resend): going back to it would resend what the peer has.
 */
static struct sroce_send_wqe *sroce_comp_naked(struct sroce_qp *qp, u32 psn)
{
	struct sroce_send_wqe *wqe;

	if (sroce_psn_cmp(psn, qp->comp.psn) < 0)
		return NULL;
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
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RNR_RETRY_EXCEEDED);
		sroce_wqe_done(qp, wqe, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (qp->comp.rnr_left != 7)
		qp->comp.rnr_left--;
	sroce_req_rewind(qp, psn, SROCE_REWIND_RNR);
	qp->comp.rnr_wait = true;
	sroce_timers_rnr(qp, timer);
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
	sroce_req_rewind(qp, psn, SROCE_REWIND_SEQ_NAK);
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

/*
 * @pkt answers a packet sent before a go-back-N and not yet sent again:
 * the window (cwnd.h) let only part of the resend go, the peer had more.
 * An ACK, or a sequence NAK, says the peer has everything sent again so
 * far: take that, and let the resend go on (the peer acknowledges the
 * copies it gets).  Anything else comes again when its request does.
 */
static void sroce_comp_ahead(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 syn = pkt->syndrome;

	if (!(pkt->flags & SROCE_F_ACK) ||
	    (sroce_aeth_type(syn) != SROCE_AETH_ACK &&
	     (sroce_aeth_type(syn) != SROCE_AETH_NAK ||
	      sroce_aeth_value(syn) != SROCE_NAK_PSN_SEQ_ERR)))
		return;
	sroce_comp_ack(qp, sroce_psn_add(qp->req.psn, SROCE_PSN_MASK));
}

static void sroce_comp_rcv_one(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			       struct sk_buff *skb)
{
	u8 syn = pkt->syndrome;

	/* Nothing was ever sent at or after psn_high: a stray response. */
	if (sroce_psn_cmp(pkt->psn, qp->req.psn_high) >= 0)
		return;
	if (sroce_psn_cmp(pkt->psn, qp->req.psn) >= 0) {
		sroce_comp_ahead(qp, pkt);
		return;
	}

	if ((pkt->flags & SROCE_HDR_AETH) &&
	    sroce_aeth_type(syn) != SROCE_AETH_ACK) {
		if (sroce_aeth_type(syn) == SROCE_AETH_RNR_NAK) {
			trace_sroce_rnr_rcvd(&qp->ibqp, pkt->psn, syn);
			sroce_comp_rnr(qp, pkt->psn, sroce_aeth_value(syn));
		} else if (sroce_aeth_type(syn) == SROCE_AETH_NAK) {
			trace_sroce_nak_rcvd(&qp->ibqp, pkt->psn, syn);
			sroce_comp_nak(qp, pkt->psn, syn);
		}
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
		sroce_timers_held(qp, held);
}

/*
 * No room to hold another response past the gap at comp.psn: the gap is
 * a loss, ask again.  But once asked, the responses the peer sent before
 * the request came (a READ's stream in flight, hundreds when a backlog
 * is long) still arrive past the gap: asking again for every 32 of them
 * restarted the peer's stream each time, a storm that filled the
 * backlogs and cost other QPs their packets (one READ asked for 73
 * times).  So, as the IBTA has a requester do, they are dropped until
 * the answer fills the gap (progress); if the request to ask again or
 * its answer was lost, the retransmit timer asks again.
 */
static void sroce_comp_hold_full(struct sroce_qp *qp)
{
	if (qp->comp.reasked) {
		sroce_drop(sroce_qp_dev(qp), qp->ibqp.qp_num,
			   SROCE_CNT_REORDER_DROPPED);
		return;
	}
	sroce_comp_reorder_expired(qp);
}

/*
 * How far past the gap at comp.psn a READ response may be and still be
 * taken for the start of the peer's answer to our asking again: its
 * first packet is the one missing, so its second or third.
 */
#define SROCE_COMP_RESTART_SPAN	2

/*
 * Asked again for the gap at comp.psn, and a READ response just past it
 * comes after one further on: the peer restarted its stream for us, and
 * the restart's first packet was lost too (the only one we need).
 * Without this the QP would idle until the retransmit timer.  Asking at
 * once restarts the peer once more; the restarted stream climbs again,
 * so it can start no other ask.  The old stream, and reordering, are
 * further on: sroce_comp_hold_full()'s storm needs no new rule.
 */
static bool sroce_comp_restart_lost(const struct sroce_qp *qp, u32 psn)
{
	return qp->comp.reasked &&
	       sroce_psn_cmp(psn, qp->comp.last_past_gap) < 0 &&
	       sroce_psn_cmp(psn, sroce_psn_add(qp->comp.psn,
						SROCE_COMP_RESTART_SPAN)) <= 0;
}

/* @pkt is past the gap at comp.psn: hold it, or ask again. */
static void sroce_comp_rcv_past_gap(struct sroce_qp *qp,
				    const struct sroce_pkt *pkt,
				    struct sk_buff *skb)
{
	bool restart = false;

	if (pkt->flags & SROCE_F_READ_RESP) {
		restart = sroce_comp_restart_lost(qp, pkt->psn);
		qp->comp.last_past_gap = pkt->psn;
	}
	if (restart) {
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_READ_RESTART_LOST);
		sroce_reorder_drop(qp, &qp->comp.held);
		sroce_req_rewind(qp, qp->comp.psn, SROCE_REWIND_RESTART);
		return;
	}
	if (!sroce_reorder_hold(qp, &qp->comp.held, pkt->psn, skb))
		sroce_comp_hold_full(qp);
}

/**
 * sroce_comp_stale - would a response with @psn change nothing?
 * @qp: an RC QP
 * @psn: the response's PSN, not yet checked by its ICRC
 * @flags: its opcode's flags
 *
 * Responses (ACKs, NAKs, READ responses) for PSNs already acknowledged,
 * or for PSNs never sent, are dropped by sroce_comp_rcv() anyway, and so
 * are READ responses past a gap asked for again once there is no room to
 * hold them (sroce_comp_hold_full()), but for the first few past it (the
 * start of an answer, sroce_comp_restart_lost()); a responder answering
 * a go-back-N sends many, so drop them before paying for their ICRC.
 */
bool sroce_comp_stale(const struct sroce_qp *qp, u32 psn, u32 flags)
{
	if (!sroce_comp_active(qp) ||
	    sroce_psn_cmp(psn, qp->comp.psn) < 0 ||
	    sroce_psn_cmp(psn, READ_ONCE(qp->req.psn_high)) >= 0)
		return true;
	return (flags & SROCE_F_READ_RESP) && qp->comp.reasked &&
	       sroce_psn_cmp(psn, sroce_psn_add(qp->comp.psn,
						SROCE_COMP_RESTART_SPAN)) > 0 &&
	       sroce_reorder_full(&qp->comp.held);
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
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_COMP_PACKETS);
	if (!nak && sroce_psn_cmp(pkt->psn, qp->req.psn) < 0 &&
	    sroce_comp_past_gap(qp, pkt)) {
		sroce_comp_rcv_past_gap(qp, pkt, skb);
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
 * Asks again from the oldest PSN not answered (go-back-N), once for a
 * gap; what is held goes, the answers to the requests sent again will
 * come.
 *
 * Context: the QP's engine.
 */
void sroce_comp_reorder_expired(struct sroce_qp *qp)
{
	if (skb_queue_empty(&qp->comp.held))
		return;
	sroce_reorder_drop(qp, &qp->comp.held);
	/*
	 * Asked once for this gap already: what was held is what the peer
	 * sent before our request reached it, and under load the answer
	 * can take longer than the wait to come through them.  Asking
	 * again on every wait restarted the peer's READ stream each time
	 * (a PSN asked for 6 times in 25 ms), a storm that overflowed the
	 * per-CPU backlogs until another QP ran out of retries.  The
	 * retransmit timer asks again if the answer is lost; a QP without
	 * one (timeout 0: wait for ever) has only this way out.
	 */
	if (!sroce_comp_active(qp) || (qp->comp.reasked && qp->attr.timeout))
		return;
	qp->comp.reasked = true;
	sroce_req_rewind(qp, qp->comp.psn, SROCE_REWIND_HELD);
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
	sroce_req_rewind(qp, qp->comp.psn, SROCE_REWIND_TIMEOUT);
	sroce_timers_progress(qp);
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
	sroce_sq_complete(qp, &wqe, IB_WC_WR_FLUSH_ERR);
}

/**
 * sroce_sq_flush - complete everything on the send queue
 * @qp: a QP in the ERR state
 * @budget: the most completions to post
 * @ring_left: the most slots to take from the ring, decremented
 *
 * The first WQE that failed reports its own status; everything else,
 * fetched or still in the ring, completes with IB_WC_WR_FLUSH_ERR.  At
 * most @budget completions a call: a user may go on posting
 * while we flush, and this runs under the engine's BH lock.
 *
 * Return: true if the queue is empty, false if there is more to flush.
 */
bool sroce_sq_flush(struct sroce_qp *qp, int budget, u32 *ring_left)
{
	struct sroce_sq *sq = &qp->sq;

	sroce_timers_flush(qp);
	for (; budget && qp->req.tail != sq->head; budget--) {
		struct sroce_send_wqe *wqe = sroce_sq_wqe(qp, qp->req.tail);

		sroce_sq_complete(qp, wqe, wqe->state == SROCE_WQE_DONE ?
					wqe->status : IB_WC_WR_FLUSH_ERR);
		WRITE_ONCE(qp->req.tail, qp->req.tail + 1);
	}
	for (; budget && *ring_left && !sroce_queue_empty(&sq->q); budget--) {
		sroce_flush_slot(qp, sroce_queue_consumer_addr(&sq->q));
		sroce_queue_advance_consumer(&sq->q);
		--*ring_left;
	}
	WRITE_ONCE(qp->req.next, sq->head);
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
	qp->comp.rnr_wait = false;
	WRITE_ONCE(qp->comp.psn, qp->req.psn);
	return qp->req.tail == sq->head && sroce_queue_empty(&sq->q);
}

/* The completer of a QP entering RESET: drop everything it has. */
void sroce_comp_reset(struct sroce_qp *qp)
{
	__skb_queue_purge(&qp->comp.held);
	memset(&qp->comp, 0, sizeof(qp->comp));
	__skb_queue_head_init(&qp->comp.held);
}

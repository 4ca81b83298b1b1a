// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder: the receive side of requests (SEND, RDMA WRITE, RDMA
 * READ, atomics) on RC and UC QPs; UD datagrams go on to resp_ud.c.  It
 * checks a request against the PSN window and the message in progress,
 * places SEND and WRITE data in the receive WQE rq.c holds, completes
 * it, and hands READs and atomics to resp_answer.c,
 * which also sends what goes back to the requester on RC (ACKs, NAKs,
 * READ responses, atomic ACKs).
 *
 * Everything here runs in the QP's engine, holding qp->engine_lock (see
 * engine.h), so the responder state in qp->resp needs no other locking.
 */
#include <linux/minmax.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "cq.h"
#include "mem.h"
#include "qp.h"
#include "reorder.h"
#include "resp_answer.h"
#include "resp_ud.h"
#include "responder.h"
#include "rq.h"
#include "rx.h"
#include "timers.h"
#include "tx.h"

/* The operations sroce responds to (FLUSH and ATOMIC WRITE: RC only). */
#define SROCE_RESP_OPS	(SROCE_F_SEND | SROCE_F_WRITE | SROCE_F_READ_REQ | \
			 SROCE_F_ATOMIC | SROCE_F_ATOMIC_WRITE | SROCE_F_FLUSH)

/*
 * Errors of the request handlers, and what RC makes of them (UC drops
 * the message, except for local errors):
 *   -EAGAIN      no receive WQE, or a page of an ODP MR the request
 *                reaches is being faulted in (odp.h): RNR NAK, the
 *                requester retries later
 *   -EINVAL      invalid request: NAK, QP error
 *   -EMSGSIZE    the message does not fit the receive WQE: NAK invalid
 *                request, the WQE completes with IB_WC_LOC_LEN_ERR
 *   -EACCES      remote access error: NAK, QP error
 *   -EIO         local error, the WQE is completed already (or the CQ
 *                overflowed): NAK remote operational error, QP error
 */

/*
 * Copy @len bytes at @off in @skb to the held WQE at resp.cur.  A local
 * SGE that is wrong completes the WQE in error.
 */
static int sroce_resp_place(struct sroce_qp *qp, struct sk_buff *skb,
			    int off, u32 len)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_sgl_cursor cur = resp->cur;
	int err;

	if (len > resp->wqe.length - resp->recv_len)
		return -EMSGSIZE;
	err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd,
				 sroce_rq_sgl(&resp->wqe), resp->wqe.num_sge,
				 &resp->cur, skb, off, len, SROCE_TO_MR);
	if (err == -EAGAIN) {
		/* An ODP page is faulted in: the packet comes again. */
		resp->cur = cur;
		return -EAGAIN;
	}
	if (err) {
		sroce_rq_complete_err(qp, sroce_mr_wc_status(err, false));
		return -EIO;
	}
	resp->recv_len += len;
	return 0;
}

/* ---------------------------------------------------- RC error paths */

static void sroce_rc_rnr(struct sroce_qp *qp, u32 psn)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_RNR_NAK_SENT);
	sroce_rc_nak(qp, sroce_aeth_rnr_nak(qp->attr.min_rnr_timer), psn);
	/* What is in flight behind it would only draw sequence NAKs. */
	qp->resp.nak_sent = true;
}

/* A fatal error in the request at @psn: NAK it, the QP goes to error. */
static void sroce_rc_fail(struct sroce_qp *qp, u32 psn, int err)
{
	enum ib_wc_status status;
	u8 nak;

	switch (err) {
	case -EACCES:
		nak = SROCE_NAK_REMOTE_ACCESS_ERR;
		status = IB_WC_REM_ACCESS_ERR;
		break;
	case -EMSGSIZE:
		nak = SROCE_NAK_INVALID_REQ;
		status = IB_WC_LOC_LEN_ERR;
		break;
	case -EIO:
		nak = SROCE_NAK_REMOTE_OP_ERR;
		status = IB_WC_LOC_QP_OP_ERR;
		break;
	default:
		nak = SROCE_NAK_INVALID_REQ;
		status = IB_WC_REM_INV_REQ_ERR;
		break;
	}
	/* A SEND in progress fails with its request. */
	if (qp->resp.have_wqe)
		sroce_rq_complete_err(qp, status);
	/* The QP fails once the NAK is out; it takes no requests till then. */
	qp->resp.fail_pending = true;
	if (sroce_rc_nak(qp, nak, psn))
		sroce_qp_error(qp);
}

/* ------------------------------------------------------------ checks */

/* The P_Key table has the one full-member default key. */
static bool sroce_pkey_ok(u16 pkey)
{
	return (pkey & 0x7fff) == (SROCE_DEFAULT_PKEY & 0x7fff);
}

/* MIDDLE/LAST continue a message of the same operation; FIRST/ONLY don't. */
static bool sroce_seq_ok(const struct sroce_resp *resp, u32 flags)
{
	const struct sroce_opcode_info *last;

	if (!resp->in_msg)
		return flags & SROCE_F_FIRST;
	if (flags & SROCE_F_FIRST)
		return false;
	last = sroce_opcode(resp->last_op);
	return last && (last->flags & flags & (SROCE_F_SEND | SROCE_F_WRITE));
}

/* FIRST and MIDDLE packets are full MTU; LAST and ONLY up to the MTU. */
static bool sroce_len_ok(const struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	if (!(pkt->flags & SROCE_F_PAYLOAD))
		return true;
	if (pkt->flags & SROCE_F_LAST)
		return pkt->payload_len <= qp->attr.mtu;
	return pkt->payload_len == qp->attr.mtu;
}

/* What RC and UC check of an in-sequence packet before acting on it. */
static int sroce_resp_check(const struct sroce_qp *qp,
			    const struct sroce_pkt *pkt)
{
	if (!(pkt->flags & SROCE_RESP_OPS))
		return -EINVAL;
	if (!sroce_seq_ok(&qp->resp, pkt->flags))
		return -EINVAL;
	if (!sroce_len_ok(qp, pkt))
		return -EINVAL;
	return 0;
}

/* A SEND or WRITE packet was taken: the next PSN, the message state. */
static void sroce_resp_accept(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	resp->psn = sroce_psn_add(pkt->psn, 1);
	resp->last_op = pkt->opcode;
	resp->in_msg = !(pkt->flags & SROCE_F_LAST);
}

/* --------------------------------------------------------- SEND (RC/UC) */

/* The end of a SEND: invalidate if asked, complete the WQE. */
static int sroce_resp_send_done(struct sroce_qp *qp,
				const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe;

	sroce_rq_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.byte_len = resp->recv_len;
	if (pkt->flags & SROCE_HDR_IMMDT) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	if (pkt->flags & SROCE_HDR_IETH) {
		/* After the data is placed; failing is an invalid request. */
		if (sroce_key_invalidate(qp, pkt->inv_rkey, true))
			return -EINVAL;
		cqe.wc_flags |= IB_WC_WITH_INVALIDATE;
		cqe.invalidate_rkey = pkt->inv_rkey;
	}
	sroce_resp_msg_done(resp);
	return sroce_rq_complete(qp, &cqe, pkt->se);
}

static int sroce_resp_send(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			   struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (pkt->flags & SROCE_F_FIRST) {
		err = sroce_rq_get_wqe(qp);
		if (err)
			return err;
		memset(&resp->cur, 0, sizeof(resp->cur));
		resp->recv_len = 0;
	}
	/* The sequence check saw a FIRST take a WQE before. */
	if (WARN_ON_ONCE(!resp->have_wqe))
		return -EINVAL;

	err = sroce_resp_place(qp, skb, pkt->hdr_len, pkt->payload_len);
	if (err)
		return err;
	if (!(pkt->flags & SROCE_F_LAST))
		return 0;
	return sroce_resp_send_done(qp, pkt);
}

/* -------------------------------------------------- RDMA WRITE (RC/UC) */

/* The RETH of a FIRST/ONLY: check it for the whole message. */
static int sroce_write_start(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	u64 va = pkt->va;
	struct sroce_mr *mr;
	int err;

	resp->write_va = pkt->va;
	resp->write_rkey = pkt->rkey;
	resp->write_left = pkt->dma_len;
	resp->recv_len = 0;	/* counts the bytes written, for WITH_IMM */

	if (!(qp->attr.access & IB_ACCESS_REMOTE_WRITE))
		return -EACCES;
	if (pkt->dma_len > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	if (!pkt->dma_len)	/* C9-88: no key to check */
		return 0;
	mr = sroce_rkey_lookup(qp, pkt->rkey, IB_ACCESS_REMOTE_WRITE, &va,
			       pkt->dma_len, &err);
	if (!mr)
		return -EACCES;
	sroce_mr_put(mr);
	return 0;
}

/* One packet's data; the MR is looked up again (see mr.h). */
static int sroce_write_data(struct sroce_qp *qp, struct sk_buff *skb,
			    int off, u32 len)
{
	struct sroce_resp *resp = &qp->resp;
	u64 va = resp->write_va;
	struct sroce_mr *mr;
	int err;

	if (!len)
		return 0;
	/* write_va is the peer's address; va becomes the MR's. */
	mr = sroce_rkey_lookup(qp, resp->write_rkey, IB_ACCESS_REMOTE_WRITE,
			       &va, len, &err);
	if (!mr)
		return -EACCES;
	err = sroce_mr_copy_skb(mr, va, skb, off, len, SROCE_TO_MR);
	sroce_mr_put(mr);
	if (err)
		return err == -EAGAIN ? -EAGAIN : -EACCES;
	resp->write_va += len;
	resp->write_left -= len;
	resp->recv_len += len;
	return 0;
}

/* The packets add up to the RETH length; after a FIRST/MIDDLE, more come. */
static bool sroce_write_len_ok(const struct sroce_resp *resp,
			       const struct sroce_pkt *pkt)
{
	if (pkt->flags & SROCE_F_LAST)
		return pkt->payload_len == resp->write_left;
	return pkt->payload_len < resp->write_left;
}

static int sroce_write_complete(struct sroce_qp *qp,
				const struct sroce_pkt *pkt)
{
	struct sroce_cqe cqe;

	sroce_rq_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	cqe.byte_len = qp->resp.recv_len;
	cqe.wc_flags = IB_WC_WITH_IMM;
	cqe.imm_data = pkt->imm;
	return sroce_rq_complete(qp, &cqe, pkt->se);
}

static int sroce_resp_write(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	u32 len = pkt->payload_len;
	int err;

	if (pkt->flags & SROCE_F_FIRST) {
		err = sroce_write_start(qp, pkt);
		if (err)
			return err;
	}
	if (!sroce_write_len_ok(resp, pkt))
		return -EINVAL;
	/*
	 * WITH_IMM needs a receive WQE; find out before writing, so that
	 * the packet the requester sends again after an RNR NAK finds
	 * everything as it was.
	 */
	if (pkt->flags & SROCE_HDR_IMMDT) {
		err = sroce_rq_get_wqe(qp);
		if (err)
			return err;
	}
	err = sroce_write_data(qp, skb, pkt->hdr_len, len);
	if (err)
		return err;
	if (!(pkt->flags & SROCE_F_LAST))
		return 0;
	sroce_resp_msg_done(resp);
	if (!(pkt->flags & SROCE_HDR_IMMDT))
		return 0;
	return sroce_write_complete(qp, pkt);
}

/* A packet before resp.psn: the requester missed our answer to it. */
static void sroce_rc_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_DUPLICATE_REQUEST);
	if (pkt->flags & (SROCE_F_SEND | SROCE_F_WRITE)) {
		/* C9-105: acknowledge again what we have, do nothing more. */
		sroce_resp_ack_later(qp, sroce_psn_add(qp->resp.psn,
						       SROCE_PSN_MASK));
		return;
	}
	sroce_rc_rd_duplicate(qp, pkt);
}

static void sroce_rc_out_of_seq(struct sroce_qp *qp)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_OUT_OF_SEQUENCE);
	if (qp->resp.nak_sent)
		return;
	qp->resp.nak_sent = true;
	sroce_rc_nak(qp, SROCE_NAK_PSN_SEQ_ERR, qp->resp.psn);
}

/**
 * sroce_resp_reorder_expired - the gap held requests wait on is a loss
 * @qp: an RC QP
 *
 * Context: the QP's engine, after its reorder timer fired.
 */
void sroce_resp_reorder_expired(struct sroce_qp *qp)
{
	if (!skb_queue_empty(&qp->resp.held))
		sroce_rc_out_of_seq(qp);
}

static int sroce_rc_execute(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    struct sk_buff *skb)
{
	int err;

	if (pkt->flags & SROCE_F_READ_REQ)
		return sroce_rc_read(qp, pkt);
	if (pkt->flags & SROCE_F_ATOMIC)
		return sroce_rc_atomic(qp, pkt);
	if (pkt->flags & SROCE_F_ATOMIC_WRITE)
		return sroce_rc_atomic_write(qp, pkt, skb);
	if (pkt->flags & SROCE_F_FLUSH)
		return sroce_rc_flush(qp, pkt);

	if (pkt->flags & SROCE_F_SEND)
		err = sroce_resp_send(qp, pkt, skb);
	else
		err = sroce_resp_write(qp, pkt, skb);
	if (err)
		return err;
	sroce_resp_accept(qp, pkt);
	if (pkt->ack_req)
		sroce_resp_ack_later(qp, pkt->psn);
	return 0;
}

static void sroce_rc_rcv_one(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			     struct sk_buff *skb)
{
	int cmp = sroce_psn_cmp(pkt->psn, qp->resp.psn);
	int err;

	/* A fatal NAK waits for the responses before it; nothing more. */
	if (qp->resp.fail_pending)
		return;
	if (cmp > 0) {
		if (qp->resp.nak_sent ||
		    !sroce_reorder_hold(qp, &qp->resp.held, pkt->psn, skb))
			sroce_rc_out_of_seq(qp);
		return;
	}
	if (cmp < 0) {
		sroce_rc_duplicate(qp, pkt);
		return;
	}
	qp->resp.nak_sent = false;

	err = sroce_resp_check(qp, pkt);
	if (!err)
		err = sroce_rc_execute(qp, pkt, skb);
	if (!err)
		sroce_tx_peer_alive(qp);
	else if (err == -EAGAIN)
		sroce_rc_rnr(qp, pkt->psn);
	else if (err)
		sroce_rc_fail(qp, pkt->psn, err);
}

/* Take in the held requests the last one made next in sequence. */
static void sroce_rc_release_held(struct sroce_qp *qp)
{
	struct sk_buff_head *held = &qp->resp.held;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	bool moved = false;
	int cmp;

	while ((skb = skb_peek(held))) {
		cmp = sroce_psn_cmp(SROCE_SKB_CB(skb)->psn, qp->resp.psn);
		if (cmp > 0)
			break;
		__skb_unlink(skb, held);
		/* Parsed once already; a packet now behind is a copy. */
		if (cmp == 0 && !sroce_pkt_parse(skb->data, skb->len, &pkt))
			sroce_rc_rcv_one(qp, &pkt, skb);
		kfree_skb(skb);
		moved = true;
	}
	/* A gap that moves is reordering going on: wait for the next. */
	if (moved && !skb_queue_empty(held))
		sroce_timers_held(qp, held);
}

/**
 * sroce_resp_stale - would an RC request with @psn change nothing?
 * @qp: an RC QP
 * @psn: the request's PSN, not yet checked by its ICRC
 *
 * A request past a gap we have already NAKed, or any request while a
 * fatal NAK waits to go, is dropped by sroce_rc_rcv_one() anyway; a
 * requester going back N sends a window of them, so drop them before
 * paying for their ICRC.
 */
bool sroce_resp_stale(const struct sroce_qp *qp, u32 psn)
{
	return qp->resp.fail_pending ||
	       (qp->resp.nak_sent && sroce_psn_cmp(psn, qp->resp.psn) > 0);
}

static void sroce_rc_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			 struct sk_buff *skb)
{
	sroce_rc_rcv_one(qp, pkt, skb);
	if (!skb_queue_empty(&qp->resp.held))
		sroce_rc_release_held(qp);
}

/* --------------------------------------------------------------- UC */

/*
 * Drop the message in progress.  UC has no retries: the message is lost,
 * a receive WQE it took stays for the next one.
 */
static void sroce_uc_drop(struct sroce_qp *qp)
{
	qp->resp.in_msg = false;
	qp->resp.drop_msg = true;
}

static void sroce_uc_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			 struct sk_buff *skb)
{
	int err;

	if (pkt->flags & SROCE_F_FIRST) {
		/* A new message: resynchronise, whatever came before. */
		qp->resp.in_msg = false;
		qp->resp.drop_msg = false;
	} else if (qp->resp.drop_msg || pkt->psn != qp->resp.psn) {
		sroce_uc_drop(qp);
		return;
	}

	err = sroce_resp_check(qp, pkt);
	if (!err && (pkt->flags & SROCE_F_SEND))
		err = sroce_resp_send(qp, pkt, skb);
	else if (!err)
		err = sroce_resp_write(qp, pkt, skb);

	if (!err)
		sroce_resp_accept(qp, pkt);
	else if (err == -EIO)
		sroce_qp_error(qp);	/* our own receive WQE or CQ */
	else
		sroce_uc_drop(qp);
}

/* ------------------------------------------------------------ entry */

/**
 * sroce_resp_rcv - handle a request packet
 * @qp: the QP it is for
 * @pkt: its headers, decoded; the opcode has SROCE_F_REQ and the QP's
 *	transport, the ICRC is good
 * @skb: the packet; stays the caller's
 *
 * Context: the QP's engine, process context, holding qp->engine_lock;
 * the QP is in a state that receives.  May send (ACKs, NAKs, READ
 * responses) and may move the QP to the error state.
 */
void sroce_resp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);

	if (!sroce_pkey_ok(pkt->pkey)) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		/* The engine sets the MTU before RTR; never divide by 0. */
		if (WARN_ON_ONCE(!qp->attr.mtu))
			return;
		sroce_rc_rcv(qp, pkt, skb);
		break;
	case IB_QPT_UC:
		sroce_uc_rcv(qp, pkt, skb);
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		sroce_ud_rcv(qp, pkt, skb);
		break;
	default:
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
		break;
	}
}

/**
 * sroce_rq_flush - complete the receive WQEs of a QP in error
 * @qp: the QP
 * @budget: the most receive WQEs to take from the ring
 * @ring_left: the same, for the flush as a whole; decremented
 *
 * Completes a WQE the responder holds and every WQE of the QP's own
 * receive queue (an SRQ's stay for other QPs) with IB_WC_WR_FLUSH_ERR,
 * @budget at most a call: a user may go on posting while we
 * flush.  A CQ that overflows ends the flush (the QP is in error).
 *
 * Context: the QP's engine, holding qp->engine_lock.
 * Return: true if done, false if there is more to flush.
 */
bool sroce_rq_flush(struct sroce_qp *qp, int budget, u32 *ring_left)
{
	struct sroce_resp *resp = &qp->resp;
	int n;

	resp->in_msg = false;
	sroce_res_abort(qp);
	if (resp->have_wqe && sroce_rq_complete_err(qp, IB_WC_WR_FLUSH_ERR))
		return true;
	if (qp->srq || !qp->rq.q.buf)
		return true;

	for (n = budget; n > 0 && *ring_left; n--) {
		if (sroce_recvq_take(&qp->rq.q, qp->rq.max_sge,
				     &resp->wqe) == -ENOENT)
			return true;
		--*ring_left;
		resp->have_wqe = true;
		if (sroce_rq_complete_err(qp, IB_WC_WR_FLUSH_ERR))
			return true;
	}
	return false;
}

/**
 * sroce_resp_init - set up the responder of a new QP
 * @qp: the QP
 *
 * Context: process context (create_qp).
 * Return: 0 or -ENOMEM.
 */
int sroce_resp_init(struct sroce_qp *qp)
{
	qp->resp.res = kcalloc(SROCE_MAX_RD_ATOM, sizeof(*qp->resp.res),
			       GFP_KERNEL);
	if (!qp->resp.res)
		return -ENOMEM;
	qp->resp.nres = SROCE_MAX_RD_ATOM;
	qp->resp.res_head = 0;
	WRITE_ONCE(qp->resp.res_send, -1);
	__skb_queue_head_init(&qp->resp.held);
	return 0;
}

/**
 * sroce_resp_reset - forget every message and resource in progress
 * @qp: a QP entering RESET or RTR; its engine is stopped
 *
 * A receive WQE held for a SEND in progress is dropped without a
 * completion, as RESET drops everything queued.
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res = resp->res;
	u32 nres = resp->nres;

	__skb_queue_purge(&resp->held);
	memset(res, 0, nres * sizeof(*res));
	memset(resp, 0, sizeof(*resp));
	resp->res = res;
	resp->nres = nres;
	WRITE_ONCE(resp->res_send, -1);
	__skb_queue_head_init(&resp->held);
}

/**
 * sroce_resp_cleanup - free what sroce_resp_init() took
 * @qp: the QP
 *
 * Context: process context (create_qp unwinding, destroy_qp).
 */
void sroce_resp_cleanup(struct sroce_qp *qp)
{
	__skb_queue_purge(&qp->resp.held);
	kfree(qp->resp.res);
	qp->resp.res = NULL;
	qp->resp.nres = 0;
	WRITE_ONCE(qp->resp.res_send, -1);
}

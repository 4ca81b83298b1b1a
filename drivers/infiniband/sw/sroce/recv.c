// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder: the receive side of requests (SEND, RDMA WRITE, RDMA
 * READ, atomics) on RC, UC and UD QPs, and what it sends back on RC
 * (ACKs, NAKs, READ responses, atomic ACKs).
 *
 * Everything here runs in the QP's engine, holding qp->engine_lock (see
 * qp.h), so the responder state in qp->resp needs no other locking.
 *
 * Ordering of what goes back to the requester.  A READ request is
 * answered later, by sroce_resp_send_reads(), one packet at a time, while
 * the requests after it are processed at once.  The requester takes an
 * ACK or NAK for PSN n as answering everything before n, READs included,
 * and retries a READ whose responses it has not seen by then.  So
 * responses must leave in PSN order: the responder resources in
 * qp->resp.res form the queue of READ responses and atomic ACKs still to
 * send, in PSN order, and an ACK or NAK waits until that queue is empty.
 * ACKs are coalesced and simply stay pending; a NAK drains the queue
 * first (a NAK is rare, and the requester is waiting for it).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/minmax.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "qp.h"
#include "rx.h"
#include "tx.h"
#include "cq.h"
#include "srq.h"

/* Receive WQEs hold struct rxe_sge; the SGE-list helpers take ib_sge. */
static_assert(sizeof(struct rxe_sge) == sizeof(struct ib_sge));
static_assert(offsetof(struct rxe_sge, addr) == offsetof(struct ib_sge, addr));
static_assert(offsetof(struct rxe_sge, length) ==
	      offsetof(struct ib_sge, length));
static_assert(offsetof(struct rxe_sge, lkey) == offsetof(struct ib_sge, lkey));

/* The GRH (or RoCEv2 IP header) at the start of a UD receive buffer */
#define SROCE_GRH_LEN	sizeof(union rdma_network_hdr)
static_assert(sizeof(union rdma_network_hdr) == 40);

/* resp.res_head runs free: the ring must divide 2^32 to wrap cleanly. */
static_assert((SROCE_MAX_RD_ATOM & (SROCE_MAX_RD_ATOM - 1)) == 0);

/*
 * The operations sroce responds to.  FLUSH and ATOMIC WRITE are in the
 * opcode table but not offered by the device, so they are invalid
 * requests.
 */
#define SROCE_RESP_OPS	(SROCE_F_SEND | SROCE_F_WRITE | SROCE_F_READ_REQ | \
			 SROCE_F_ATOMIC)

/*
 * Errors of the request handlers, and what RC makes of them (UC drops
 * the message, except for local errors):
 *   -EAGAIN      no receive WQE: RNR NAK, the requester retries later
 *   -EINVAL      invalid request: NAK, QP error
 *   -EMSGSIZE    the message does not fit the receive WQE: NAK invalid
 *                request, the WQE completes with IB_WC_LOC_LEN_ERR
 *   -EACCES      remote access error: NAK, QP error
 *   -EIO         local error, the WQE is completed already (or the CQ
 *                overflowed): NAK remote operational error, QP error
 */

static const struct ib_sge *sroce_wqe_sgl(const struct sroce_recv_wqe_copy *w)
{
	return (const struct ib_sge *)w->sge;
}

/* ------------------------------------------------------- completions */

static void sroce_resp_cqe_init(struct sroce_qp *qp, struct sroce_cqe *cqe,
				enum ib_wc_status status)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = qp->resp.wqe.wr_id;
	cqe->qp = &qp->ibqp;
	cqe->status = status;
	cqe->opcode = IB_WC_RECV;
	cqe->src_qp = qp->attr.dest_qpn;
	cqe->port_num = 1;
}

/* Complete the held receive WQE; -EIO if the CQ overflowed. */
static int sroce_resp_post(struct sroce_qp *qp, const struct sroce_cqe *cqe,
			   bool solicited)
{
	qp->resp.have_wqe = false;
	if (sroce_cq_post(qp->rcq, cqe, solicited))
		return -EIO;
	return 0;
}

/* Complete the held receive WQE with an error status. */
static int sroce_resp_complete_err(struct sroce_qp *qp,
				   enum ib_wc_status status)
{
	struct sroce_cqe cqe;

	sroce_resp_cqe_init(qp, &cqe, status);
	return sroce_resp_post(qp, &cqe, false);
}

/*
 * Make sure a receive WQE is held in qp->resp.wqe.  UC may still hold
 * one from a message it dropped; that one is used again.
 */
static int sroce_resp_get_wqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (resp->have_wqe)
		return 0;
	if (qp->srq)
		err = sroce_srq_take(qp->srq, &resp->wqe);
	else if (qp->rq.q.buf)
		err = sroce_recvq_take(&qp->rq.q, qp->rq.max_sge, &resp->wqe);
	else
		err = -ENOENT;	/* a QP created without receive queue */
	if (err == -ENOENT)
		return -EAGAIN;

	resp->have_wqe = true;
	if (err) {
		/* Malformed (user ring): it is consumed and must complete. */
		sroce_resp_complete_err(qp, IB_WC_LOC_QP_OP_ERR);
		return -EIO;
	}
	return 0;
}

/*
 * Copy @len bytes at @off in @skb to the held WQE at resp.cur.  A local
 * SGE that is wrong completes the WQE in error.
 */
static int sroce_resp_place(struct sroce_qp *qp, struct sk_buff *skb,
			    int off, u32 len)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (len > resp->wqe.length - resp->recv_len)
		return -EMSGSIZE;
	err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd,
				 sroce_wqe_sgl(&resp->wqe), resp->wqe.num_sge,
				 &resp->cur, skb, off, len, SROCE_TO_MR, NULL);
	if (err) {
		sroce_resp_complete_err(qp, sroce_mr_wc_status(err, false));
		return -EIO;
	}
	resp->recv_len += len;
	return 0;
}

/* ------------------------------------------------------- packets out */

static void sroce_resp_pkt_init(struct sroce_qp *qp, struct sroce_pkt *pkt,
				u8 opcode, u32 psn)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->dqpn = qp->attr.dest_qpn;
	pkt->pkey = SROCE_DEFAULT_PKEY;
	pkt->psn = psn;
	pkt->syndrome = sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID);
	pkt->msn = qp->resp.msn;
}

/*
 * An skb to the peer with the headers of @pkt built and, if @payload is
 * not NULL, room for pkt->payload_len bytes of payload at *@payload.  NULL
 * without memory: the packet is then lost, and the requester's retry
 * recovers, as for a packet lost on the wire.
 */
static struct sk_buff *sroce_resp_skb(struct sroce_qp *qp,
				      const struct sroce_pkt *pkt,
				      u8 **payload)
{
	const struct sroce_opcode_info *info = sroce_opcode(pkt->opcode);
	unsigned int len;
	struct sk_buff *skb;

	if (WARN_ON_ONCE(!info))
		return NULL;
	len = info->hdr_len + (payload ? pkt->payload_len : 0);
	skb = sroce_tx_alloc(qp, len);
	if (!skb)
		return NULL;
	sroce_pkt_build(skb_put(skb, info->hdr_len), pkt);
	if (payload)
		*payload = skb_put(skb, pkt->payload_len);
	return skb;
}

/* An ACKNOWLEDGE packet (ACK, RNR NAK or NAK) for @psn. */
static void sroce_resp_send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sroce_pkt pkt;
	struct sk_buff *skb;

	sroce_resp_pkt_init(qp, &pkt, SROCE_OPCODE(RC, ACKNOWLEDGE), psn);
	pkt.syndrome = syndrome;
	skb = sroce_resp_skb(qp, &pkt, NULL);
	if (skb)
		sroce_tx(qp, &qp->attr.av, skb);
}

/* IBTA: a QP sends nothing in RESET, INIT and ERR. */
static bool sroce_resp_can_send(const struct sroce_qp *qp)
{
	enum ib_qp_state state = sroce_qp_state(qp);

	return state != IB_QPS_RESET && state != IB_QPS_INIT &&
	       state != IB_QPS_ERR;
}

/* Owe the requester an ACK for @psn (coalesced: the latest one counts). */
static void sroce_resp_ack_later(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;

	if (!resp->ack_pending || sroce_psn_cmp(psn, resp->ack_psn) > 0)
		resp->ack_psn = psn;
	resp->ack_pending = true;
}

/* ------------------------------------------------ responder resources */

/* Some response of @res is still to be sent. */
static bool sroce_res_pending(const struct sroce_resp_res *res)
{
	return res->type != SROCE_RES_NONE &&
	       sroce_psn_cmp(res->psn, res->last_psn) <= 0;
}

/*
 * The oldest resource with responses to send, or -1.  The ring is filled
 * in PSN order, so oldest first is PSN order.
 */
static int sroce_res_next(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 i, idx;

	for (i = 0; i < resp->nres; i++) {
		idx = (resp->res_head + i) % resp->nres;
		if (sroce_res_pending(&resp->res[idx]))
			return idx;
	}
	return -1;
}

/*
 * A fresh resource for a new READ or atomic.  The oldest one is reused:
 * the peer may not have more than max_dest_rd_atomic (<= nres) requests
 * outstanding, so that one is answered and acknowledged by now.
 */
static struct sroce_resp_res *sroce_res_alloc(struct sroce_qp *qp, u8 type,
					      u32 psn, u32 npkts)
{
	struct sroce_resp *resp = &qp->resp;
	u32 idx = resp->res_head++ % resp->nres;
	struct sroce_resp_res *res = &resp->res[idx];

	memset(res, 0, sizeof(*res));
	res->type = type;
	res->first_psn = psn;
	res->last_psn = sroce_psn_add(psn, npkts - 1);
	res->psn = psn;
	if (resp->res_send < 0)
		resp->res_send = idx;
	return res;
}

/*
 * The resource a duplicate READ or atomic at @psn repeats, or NULL.
 * Newest first: with the PSN space wrapping, an old resource could
 * appear to match too.
 */
static struct sroce_resp_res *sroce_res_find(struct sroce_qp *qp, u8 type,
					     u32 psn)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	u32 i;

	for (i = 1; i <= resp->nres; i++) {
		res = &resp->res[(resp->res_head - i) % resp->nres];
		if (res->type == type &&
		    sroce_psn_cmp(psn, res->first_psn) >= 0 &&
		    sroce_psn_cmp(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* Responses of @res are still to be sent, and for the first time. */
static bool sroce_res_answering(const struct sroce_resp_res *res)
{
	return sroce_res_pending(res) && !res->replay;
}

/*
 * May the peer start another READ or atomic?  It may have at most
 * max_dest_rd_atomic outstanding, and one whose responses we have not
 * all sent yet is surely outstanding; the ring slot the next one takes
 * must not be such a one either.  A peer that asks for more is told off
 * (NAK invalid request), not allowed to overwrite what is still being
 * answered.
 *
 * A duplicate answered in full and now being answered again does not
 * count: the peer may have completed it meanwhile (a request sent again goes on arriving after
 * the responses to an earlier one), and the request it then sends
 * must not fail the QP.  Completions come in order, so a peer that
 * keeps within its limit has completed the oldest of our nres (>=
 * max_dest_rd_atomic) resources when it sends another: the slot it
 * takes may be overwritten even if a duplicate of it is being answered.
 */
static bool sroce_res_available(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 i, pending = 0;

	if (sroce_res_answering(&resp->res[resp->res_head % resp->nres]))
		return false;
	for (i = 0; i < resp->nres; i++)
		pending += sroce_res_answering(&resp->res[i]);
	return pending < qp->attr.max_dest_rd_atomic;
}

static int sroce_res_check(struct sroce_qp *qp)
{
	/* No responder resources granted at all. */
	if (!qp->attr.max_dest_rd_atomic)
		return -EINVAL;
	if (!sroce_res_available(qp)) {
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RD_ATOMIC_EXCEEDED);
		return -EINVAL;
	}
	return 0;
}

/* The queue of responses is empty: a deferred ACK may go now. */
static void sroce_res_drained(struct sroce_qp *qp, u32 last_psn)
{
	struct sroce_resp *resp = &qp->resp;

	/* The last response acknowledged everything before it already. */
	if (resp->ack_pending && sroce_psn_cmp(resp->ack_psn, last_psn) <= 0)
		resp->ack_pending = false;
	sroce_resp_send_ack(qp);
}

/* ---------------------------------------------------- RC error paths */

/*
 * Send @syndrome (a NAK) for @psn, in order: the responses queued before
 * it go first, as many as one budget allows right here (the engine lock
 * is a BH spinlock: a peer's 2 GiB READs must not all go in one loop).
 * The NAK waits in resp.nak_* for the rest; the work item sends them and
 * then the NAK (sroce_resp_send_ack()).  If the QP fails meanwhile, or
 * the local queue is full, the NAK is lost as on the wire, and the
 * requester's timer recovers.  Returns true if the NAK went now.
 */
static bool sroce_rc_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;

	/* The requester will send everything after @psn again. */
	__skb_queue_purge(&resp->held);
	if (resp->res_send >= 0)
		sroce_resp_send_reads(qp, SROCE_CATCH_UP_BUDGET);
	resp->nak_pending = true;
	resp->nak_syndrome = syndrome;
	resp->nak_psn = psn;
	sroce_resp_send_ack(qp);
	return !resp->nak_pending;
}

/* No receive WQE: the requester waits min_rnr_timer and sends @psn again. */
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
		sroce_resp_complete_err(qp, status);
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

static void sroce_resp_msg_done(struct sroce_resp *resp)
{
	resp->msn = (resp->msn + 1) & SROCE_MSN_MASK;
}

/* --------------------------------------------------------- SEND (RC/UC) */

/* The end of a SEND: invalidate if asked, complete the WQE. */
static int sroce_send_complete(struct sroce_qp *qp,
			       const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe;

	sroce_resp_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.byte_len = resp->recv_len;
	if (pkt->flags & SROCE_HDR_IMMDT) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	if (pkt->flags & SROCE_HDR_IETH) {
		/* After the data is placed; failing is an invalid request. */
		if (sroce_mr_invalidate(sroce_qp_dev(qp), qp->pd,
					pkt->inv_rkey, true))
			return -EINVAL;
		cqe.wc_flags |= IB_WC_WITH_INVALIDATE;
		cqe.invalidate_rkey = pkt->inv_rkey;
	}
	sroce_resp_msg_done(resp);
	return sroce_resp_post(qp, &cqe, pkt->se);
}

static int sroce_resp_send(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			   struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (pkt->flags & SROCE_F_FIRST) {
		err = sroce_resp_get_wqe(qp);
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
	return sroce_send_complete(qp, pkt);
}

/* -------------------------------------------------- RDMA WRITE (RC/UC) */

/* The RETH of a FIRST/ONLY: check it for the whole message. */
static int sroce_write_start(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
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
	mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, pkt->rkey, true,
			     IB_ACCESS_REMOTE_WRITE, pkt->va, pkt->dma_len,
			     &err);
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
	struct sroce_mr *mr;
	int err;

	if (!len)
		return 0;
	mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, resp->write_rkey,
			     true, IB_ACCESS_REMOTE_WRITE, resp->write_va, len,
			     &err);
	if (!mr)
		return -EACCES;
	err = sroce_mr_copy_skb(mr, resp->write_va, skb, off, len,
				SROCE_TO_MR, NULL);
	sroce_mr_put(mr);
	if (err)
		return -EACCES;
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

	sroce_resp_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	cqe.byte_len = qp->resp.recv_len;
	cqe.wc_flags = IB_WC_WITH_IMM;
	cqe.imm_data = pkt->imm;
	return sroce_resp_post(qp, &cqe, pkt->se);
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
		err = sroce_resp_get_wqe(qp);
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

/* ------------------------------------------------- READ, atomics (RC) */

static int sroce_rc_read(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	u32 npkts;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_READ))
		return -EACCES;
	if (pkt->dma_len > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	err = sroce_res_check(qp);
	if (err)
		return err;
	if (pkt->dma_len) {
		mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, pkt->rkey,
				     true, IB_ACCESS_REMOTE_READ, pkt->va,
				     pkt->dma_len, &err);
		if (!mr)
			return -EACCES;
		sroce_mr_put(mr);
	}

	/* Each response packet takes a PSN; an empty READ has one. */
	npkts = max(1U, DIV_ROUND_UP(pkt->dma_len, qp->attr.mtu));
	res = sroce_res_alloc(qp, SROCE_RES_READ, pkt->psn, npkts);
	res->va = pkt->va;
	res->rkey = pkt->rkey;
	res->length = pkt->dma_len;

	resp->psn = sroce_psn_add(pkt->psn, npkts);
	/* C9-148: a READ's MSN counts when the request is accepted. */
	sroce_resp_msg_done(resp);
	return 0;
}

static int sroce_rc_atomic(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	u64 orig;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_ATOMIC))
		return -EACCES;
	if (!IS_ALIGNED(pkt->va, sizeof(u64)))
		return -EINVAL;
	err = sroce_res_check(qp);
	if (err)
		return err;
	mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, pkt->rkey, true,
			     IB_ACCESS_REMOTE_ATOMIC, pkt->va, sizeof(u64),
			     &err);
	if (!mr)
		return -EACCES;
	err = sroce_mr_atomic(mr, pkt->va,
			      pkt->opcode == SROCE_OPCODE(RC, COMPARE_SWAP),
			      pkt->compare, pkt->swap_add, &orig);
	sroce_mr_put(mr);
	if (err)
		return err == -EINVAL ? -EINVAL : -EACCES;

	/* Kept, so that a duplicate gets the same answer, not a rerun. */
	res = sroce_res_alloc(qp, SROCE_RES_ATOMIC, pkt->psn, 1);
	res->atomic_orig = orig;

	resp->psn = sroce_psn_add(pkt->psn, 1);
	sroce_resp_msg_done(resp);
	return 0;
}

/*
 * A READ request again, from @psn inside the original: the requester
 * lost responses and asks for the rest.  It must ask for exactly the
 * rest; it is then answered as a new READ of that part (responses FIRST
 * to LAST, or ONLY), so the resource is narrowed to it.
 */
static void sroce_read_replay(struct sroce_qp *qp, struct sroce_resp_res *res,
			      const struct sroce_pkt *pkt)
{
	u32 npsn = (pkt->psn - res->first_psn) & SROCE_PSN_MASK;
	u64 off = (u64)npsn * qp->attr.mtu;

	if (off > res->length || pkt->rkey != res->rkey ||
	    pkt->va != res->va + off || pkt->dma_len != res->length - off)
		return;		/* not a duplicate of it: drop (class D) */

	/* Still in its first answer, it is still the peer's outstanding. */
	res->replay |= !sroce_res_pending(res);
	res->first_psn = pkt->psn;
	res->psn = pkt->psn;
	res->va = pkt->va;
	res->length = pkt->dma_len;
	res->offset = 0;
	qp->resp.res_send = sroce_res_next(qp);
}

/* A packet before resp.psn: the requester missed our answer to it. */
static void sroce_rc_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp_res *res;

	sroce_count(sroce_qp_dev(qp), SROCE_CNT_DUPLICATE_REQUEST);
	if (pkt->flags & (SROCE_F_SEND | SROCE_F_WRITE)) {
		/* C9-105: acknowledge again what we have, do nothing more. */
		sroce_resp_ack_later(qp, sroce_psn_add(qp->resp.psn,
						       SROCE_PSN_MASK));
		return;
	}
	if (pkt->flags & SROCE_F_READ_REQ) {
		res = sroce_res_find(qp, SROCE_RES_READ, pkt->psn);
		if (res)
			sroce_read_replay(qp, res, pkt);
		return;
	}
	if (pkt->flags & SROCE_F_ATOMIC) {
		res = sroce_res_find(qp, SROCE_RES_ATOMIC, pkt->psn);
		if (res && res->first_psn == pkt->psn) {
			res->replay |= !sroce_res_pending(res);
			res->psn = res->first_psn;	/* send the ACK again */
			qp->resp.res_send = sroce_res_next(qp);
		}
	}
	/* Anything else, or nothing found: drop (class D). */
}

/* A packet after resp.psn: some were lost; NAK once, then wait. */
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
	if (err == -EAGAIN)
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
		sroce_reorder_arm(qp);
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

/* --------------------------------------------------------------- UD */

/*
 * The first 40 bytes of a UD receive buffer: the IPv6 header, or for
 * IPv4 20 zero bytes and the IPv4 header (union rdma_network_hdr, as
 * ib_get_rdma_header_version() and ib_init_ah_attr_from_wc() read it).
 */
static u8 sroce_ud_grh(const struct sk_buff *skb, union rdma_network_hdr *hdr)
{
	const struct iphdr *ip4 = ip_hdr(skb);

	memset(hdr, 0, sizeof(*hdr));
	if (ip4->version == 4) {
		memcpy(&hdr->roce4grh, ip4, sizeof(hdr->roce4grh));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(&hdr->ibgrh, ipv6_hdr(skb), sizeof(hdr->ibgrh));
	return RDMA_NETWORK_IPV6;
}

/* Where the datagram came from, for ib_init_ah_attr_from_wc() (CM). */
static void sroce_ud_link_info(const struct sk_buff *skb,
			       struct sroce_cqe *cqe)
{
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN) {
		ether_addr_copy(cqe->smac, eth_hdr(skb)->h_source);
		cqe->wc_flags |= IB_WC_WITH_SMAC;
	}
	if (SROCE_SKB_CB(skb)->has_vlan) {
		cqe->vlan_id = SROCE_SKB_CB(skb)->vlan_id;
		cqe->wc_flags |= IB_WC_WITH_VLAN;
	}
}

/* Place the GRH and the payload; complete the WQE. */
static int sroce_ud_deliver(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	union rdma_network_hdr grh;
	struct sroce_cqe cqe;
	u8 net_type;
	int err;

	net_type = sroce_ud_grh(skb, &grh);
	memset(&resp->cur, 0, sizeof(resp->cur));
	err = sroce_sgl_copy(sroce_qp_dev(qp), qp->pd,
			     sroce_wqe_sgl(&resp->wqe), resp->wqe.num_sge,
			     &resp->cur, &grh, sizeof(grh), SROCE_TO_MR, NULL);
	if (!err)
		err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd,
					 sroce_wqe_sgl(&resp->wqe),
					 resp->wqe.num_sge, &resp->cur, skb,
					 pkt->hdr_len, pkt->payload_len,
					 SROCE_TO_MR, NULL);
	if (err) {
		sroce_resp_complete_err(qp, sroce_mr_wc_status(err, false));
		return -EIO;
	}

	sroce_resp_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.byte_len = SROCE_GRH_LEN + pkt->payload_len;
	cqe.src_qp = pkt->sqpn;
	cqe.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	cqe.network_hdr_type = net_type;
	if (pkt->flags & SROCE_HDR_IMMDT) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	sroce_ud_link_info(skb, &cqe);
	return sroce_resp_post(qp, &cqe, pkt->se);
}

static void sroce_ud_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			 struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? SROCE_GSI_QKEY :
						     qp->attr.qkey;
	int err;

	if (!(pkt->flags & SROCE_F_SEND) || !(pkt->flags & SROCE_HDR_DETH) ||
	    pkt->qkey != qkey) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}

	err = sroce_resp_get_wqe(qp);
	if (err == -EAGAIN) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP);
		return;
	}
	if (err) {
		sroce_qp_error(qp);
		return;
	}
	/*
	 * Too big for the buffer: drop the datagram and keep the WQE for
	 * the next one, rather than complete it in error (consumers such
	 * as the MAD layer take a receive error for a QP in error).
	 */
	if (qp->resp.wqe.length < SROCE_GRH_LEN ||
	    pkt->payload_len > qp->resp.wqe.length - SROCE_GRH_LEN) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	if (sroce_ud_deliver(qp, pkt, skb))
		sroce_qp_error(qp);
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
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
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
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		break;
	}
}

/**
 * sroce_resp_send_ack - send the coalesced ACK, if one is owed
 * @qp: an RC QP
 *
 * Waits (the ACK stays pending) while READ responses or atomic ACKs are
 * queued: sroce_resp_send_reads() calls back here when they are all out.
 *
 * Context: the QP's engine, holding qp->engine_lock.
 */
void sroce_resp_send_ack(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->res_send >= 0 || !sroce_resp_can_send(qp))
		return;
	if (resp->nak_pending) {
		/* The NAK acknowledges everything before it, too. */
		resp->nak_pending = false;
		resp->ack_pending = false;
		sroce_resp_send_aeth(qp, resp->nak_syndrome, resp->nak_psn);
		if (resp->fail_pending)
			sroce_qp_error(qp);
		return;
	}
	if (!resp->ack_pending)
		return;
	resp->ack_pending = false;
	sroce_resp_send_aeth(qp, sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID),
			     resp->ack_psn);
}

/* Resend nothing more: the QP is failing. */
static void sroce_res_abort(struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; i < qp->resp.nres; i++)
		qp->resp.res[i].psn = sroce_psn_add(qp->resp.res[i].last_psn, 1);
	qp->resp.res_send = -1;
	qp->resp.ack_pending = false;
	qp->resp.nak_pending = false;
}

/*
 * The payload of a READ response: copied to @payload if given, else
 * attached from the MR's pages, and what cannot be attached copied into
 * a frag.
 */
static int sroce_read_resp_payload(struct sroce_mr *mr, u64 va,
				   struct sk_buff *skb, u32 n, u8 *payload)
{
	void *buf;
	int done;

	if (payload)
		return sroce_mr_copy(mr, va, payload, n, SROCE_FROM_MR, NULL);
	done = sroce_mr_attach_skb(mr, va, skb, n);
	if (done < 0 || done == n)
		return done < 0 ? done : 0;
	buf = sroce_tx_put_frag(skb, n - done);
	if (!buf)
		return -ENOMEM;
	return sroce_mr_copy(mr, va + done, buf, n - done, SROCE_FROM_MR,
			     NULL);
}

/*
 * The next READ response packet of @res; false if it could not go: the
 * QP failed, or the local queue was full (SROCE_QPF_TX_FULL).
 */
static bool sroce_read_resp_one(struct sroce_qp *qp,
				struct sroce_resp_res *res)
{
	u32 n = min(res->length - res->offset, qp->attr.mtu);
	bool first = res->psn == res->first_psn;
	bool last = res->psn == res->last_psn;
	u64 va = res->va + res->offset;
	struct sroce_mr *mr = NULL;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	u8 opcode, *payload;
	int err;

	if (first)
		opcode = last ? SROCE_OPCODE(RC, RDMA_READ_RESPONSE_ONLY) :
				SROCE_OPCODE(RC, RDMA_READ_RESPONSE_FIRST);
	else
		opcode = last ? SROCE_OPCODE(RC, RDMA_READ_RESPONSE_LAST) :
				SROCE_OPCODE(RC, RDMA_READ_RESPONSE_MIDDLE);
	sroce_resp_pkt_init(qp, &pkt, opcode, res->psn);
	pkt.payload_len = n;

	/* Looked up per packet (see mr.h); it may have gone meanwhile. */
	if (n) {
		mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, res->rkey,
				     true, IB_ACCESS_REMOTE_READ, va, n, &err);
		if (!mr)
			goto fail;
	}
	skb = sroce_resp_skb(qp, &pkt, n > SROCE_TX_COPY_MAX ? NULL : &payload);
	if (skb && mr) {
		err = sroce_read_resp_payload(mr, va, skb, n,
					      n > SROCE_TX_COPY_MAX ? NULL :
					      payload);
		if (err == -ENOMEM) {
			kfree_skb(skb);
			skb = NULL;
		} else if (err) {
			kfree_skb(skb);
			goto fail;
		}
	}
	sroce_mr_put(mr);
	/* Not sent for want of room in the queue: again, after a pause. */
	if (skb && sroce_tx(qp, &qp->attr.av, skb))
		return false;

	/* Without memory the packet is as good as lost on the wire. */
	res->psn = sroce_psn_add(res->psn, 1);
	res->offset += n;
	return true;

fail:
	sroce_mr_put(mr);
	sroce_res_abort(qp);
	sroce_resp_send_aeth(qp, SROCE_NAK_REMOTE_ACCESS_ERR, pkt.psn);
	sroce_qp_error(qp);
	return false;
}

/*
 * The ATOMIC ACKNOWLEDGE of @res, first time or again; false if the local
 * queue was full.
 */
static bool sroce_atomic_resp(struct sroce_qp *qp, struct sroce_resp_res *res)
{
	struct sroce_pkt pkt;
	struct sk_buff *skb;

	sroce_resp_pkt_init(qp, &pkt, SROCE_OPCODE(RC, ATOMIC_ACKNOWLEDGE),
			    res->first_psn);
	pkt.atomic_orig = res->atomic_orig;
	skb = sroce_resp_skb(qp, &pkt, NULL);
	if (skb && sroce_tx(qp, &qp->attr.av, skb))
		return false;
	res->psn = sroce_psn_add(res->last_psn, 1);
	return true;
}

/**
 * sroce_resp_send_reads - send queued READ responses and atomic ACKs
 * @qp: an RC QP
 * @budget: the most packets to send
 *
 * Sends in PSN order, from the oldest resource with responses left.
 * When the queue empties, a pending ACK goes too (not counted).
 *
 * Context: the QP's engine, holding qp->engine_lock.
 * Return: the number of packets sent.
 */
int sroce_resp_send_reads(struct sroce_qp *qp, int budget)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	int sent = 0;

	if (!sroce_resp_can_send(qp) ||
	    test_bit(SROCE_QPF_TX_FULL, &qp->flags))
		return 0;

	while (sent < budget && resp->res_send >= 0) {
		res = &resp->res[resp->res_send];
		if (res->type == SROCE_RES_ATOMIC ?
		    !sroce_atomic_resp(qp, res) : !sroce_read_resp_one(qp, res))
			return sent;
		sent++;

		if (sroce_res_pending(res))
			continue;
		resp->res_send = sroce_res_next(qp);
		if (resp->res_send < 0)
			sroce_res_drained(qp, res->last_psn);
	}
	return sent;
}

/**
 * sroce_rq_flush - complete the receive WQEs of a QP in error
 * @qp: the QP
 *
 * Completes a WQE the responder holds and every WQE of the QP's own
 * receive queue (an SRQ's stay for other QPs) with IB_WC_WR_FLUSH_ERR,
 * SROCE_FLUSH_BUDGET at most a call: a user may go on posting while we
 * flush.  A CQ that overflows ends the flush (the QP is in error).
 *
 * Context: the QP's engine, holding qp->engine_lock.
 * Return: true if done, false if there is more to flush.
 */
bool sroce_rq_flush(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 n;

	resp->in_msg = false;
	sroce_res_abort(qp);
	if (resp->have_wqe && sroce_resp_complete_err(qp, IB_WC_WR_FLUSH_ERR))
		return true;
	if (qp->srq || !qp->rq.q.buf)
		return true;

	for (n = SROCE_FLUSH_BUDGET; n; n--) {
		if (sroce_recvq_take(&qp->rq.q, qp->rq.max_sge,
				     &resp->wqe) == -ENOENT)
			return true;
		resp->have_wqe = true;
		if (sroce_resp_complete_err(qp, IB_WC_WR_FLUSH_ERR))
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
	qp->resp.res_send = -1;
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
	resp->res_send = -1;
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
	qp->resp.res_send = -1;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the responder sends back to an RC requester: ACKs, NAKs, READ
 * responses and atomic ACKs; and the READ and atomic requests that the
 * responder resources in qp->resp.res keep for those answers.
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
 *
 * Everything here runs in the QP's engine, holding qp->engine_lock (see
 * engine.h).
 */
#include <linux/minmax.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "mem.h"
#include "qp.h"
#include "reorder.h"
#include "resp_answer.h"
#include "responder.h"
#include "trace.h"
#include "tx.h"

/* resp.res_head runs free: the ring must divide 2^32 to wrap cleanly. */
static_assert((SROCE_MAX_RD_ATOM & (SROCE_MAX_RD_ATOM - 1)) == 0);

/* READ responses a NAK may send ahead of itself at once: 4 passes' worth */
#define SROCE_CATCH_UP_BUDGET	256

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
	if (sroce_aeth_type(syndrome) == SROCE_AETH_RNR_NAK)
		trace_sroce_rnr_sent(&qp->ibqp, psn, syndrome);
	else if (sroce_aeth_type(syndrome) != SROCE_AETH_ACK)
		trace_sroce_nak_sent(&qp->ibqp, psn, syndrome);
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
void sroce_resp_ack_later(struct sroce_qp *qp, u32 psn)
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
		WRITE_ONCE(resp->res_send, idx);
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

/*
 * A FLUSH takes a resource too, but rxe's requester does not count its
 * FLUSHes against max_rd_atomic, so neither does its peer here: only the
 * ring slot it takes must be free.
 */
static int sroce_res_check_flush(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (!qp->attr.max_dest_rd_atomic)
		return -EINVAL;
	if (sroce_res_answering(&resp->res[resp->res_head % resp->nres])) {
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

/* ----------------------------------------------------------- NAKs */

/*
 * Send @syndrome (a NAK) for @psn, in order: the responses queued before
 * it go first, as many as one budget allows right here (the engine lock
 * is a BH spinlock: a peer's 2 GiB READs must not all go in one loop).
 * The NAK waits in resp.nak_* for the rest; the work item sends them and
 * then the NAK (sroce_resp_send_ack()).  If the QP fails meanwhile, or
 * the local queue is full, the NAK is lost as on the wire, and the
 * requester's timer recovers.  Returns true if the NAK went now.
 */
bool sroce_rc_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;

	/* The requester will send everything after @psn again. */
	sroce_reorder_drop(qp, &resp->held);
	if (resp->res_send >= 0)
		sroce_resp_send_reads(qp, SROCE_CATCH_UP_BUDGET);
	resp->nak_pending = true;
	resp->nak_syndrome = syndrome;
	resp->nak_psn = psn;
	sroce_resp_send_ack(qp);
	return !resp->nak_pending;
}

/* No receive WQE: the requester waits min_rnr_timer and sends @psn again. */

/* ------------------------------------------------- READ, atomics (RC) */

int sroce_rc_read(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	u64 va = pkt->va;
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
		mr = sroce_rkey_lookup(qp, pkt->rkey, IB_ACCESS_REMOTE_READ,
				       &va, pkt->dma_len, &err);
		if (!mr)
			return -EACCES;
		/*
		 * ODP pages not mapped yet: RNR NAK while they are faulted
		 * in, rather than stall the responses (odp.h).
		 */
		err = sroce_mr_ready(mr, va, pkt->dma_len, false);
		sroce_mr_put(mr);
		if (err)
			return err == -EAGAIN ? -EAGAIN : -EACCES;
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

int sroce_rc_atomic(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	u64 va = pkt->va, orig;
	struct sroce_mr *mr;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_ATOMIC))
		return -EACCES;
	if (!IS_ALIGNED(pkt->va, sizeof(u64)))
		return -EINVAL;
	err = sroce_res_check(qp);
	if (err)
		return err;
	mr = sroce_rkey_lookup(qp, pkt->rkey, IB_ACCESS_REMOTE_ATOMIC, &va,
			       sizeof(u64), &err);
	if (!mr)
		return -EACCES;
	err = sroce_mr_atomic(mr, va,
			      pkt->opcode == SROCE_OPCODE(RC, COMPARE_SWAP),
			      pkt->compare, pkt->swap_add, &orig);
	sroce_mr_put(mr);
	if (err == -EINVAL || err == -EAGAIN)
		return err;
	if (err)
		return -EACCES;

	/* Kept, so that a duplicate gets the same answer, not a rerun. */
	res = sroce_res_alloc(qp, SROCE_RES_ATOMIC, pkt->psn, 1);
	res->atomic_orig = orig;

	resp->psn = sroce_psn_add(pkt->psn, 1);
	sroce_resp_msg_done(resp);
	return 0;
}

/*
 * A request that a zero-length RDMA READ response ONLY answers (IBA
 * oA19-13, oA19-30) was carried out: the response goes in PSN order with
 * the READ responses and atomic ACKs, and answers a duplicate again.
 */
static void sroce_rc_pmem_done(struct sroce_qp *qp, u8 type, u32 psn)
{
	sroce_res_alloc(qp, type, psn, 1);
	qp->resp.psn = sroce_psn_add(psn, 1);
	sroce_resp_msg_done(&qp->resp);
}

/**
 * sroce_rc_atomic_write - an ATOMIC WRITE request (IBA A19)
 * @qp: an RC QP
 * @pkt: the request: RETH, 8 bytes of payload (sroce_pkt_parse())
 * @skb: the packet
 *
 * Stores the 8 bytes as one store, after everything the requests before
 * it placed (this engine placed them first; the store is a release).
 *
 * Return: 0, or an error of the request handlers (responder.c).
 */
int sroce_rc_atomic_write(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			  const struct sk_buff *skb)
{
	u8 value[SROCE_ATOMIC_WRITE_LEN];
	u64 va = pkt->va;
	struct sroce_mr *mr;
	int err;

	if (!(qp->attr.access & IB_ACCESS_REMOTE_WRITE))
		return -EACCES;
	/* oA19-28: the RETH's length is the payload's, 8. */
	if (pkt->dma_len != SROCE_ATOMIC_WRITE_LEN ||
	    skb_copy_bits(skb, pkt->hdr_len, value, sizeof(value)))
		return -EINVAL;
	err = sroce_res_check(qp);
	if (err)
		return err;
	mr = sroce_rkey_lookup(qp, pkt->rkey, IB_ACCESS_REMOTE_WRITE, &va,
			       sizeof(value), &err);
	if (!mr)
		return -EACCES;
	err = sroce_mr_atomic_write(mr, va, value);
	sroce_mr_put(mr);
	if (err == -EINVAL || err == -EAGAIN)
		return err;
	if (err)
		return -EACCES;
	sroce_rc_pmem_done(qp, SROCE_RES_ATOMIC_WRITE, pkt->psn);
	return 0;
}

/**
 * sroce_rc_flush - a FLUSH request (IBA A19)
 * @qp: an RC QP
 * @pkt: the request: FETH and RETH
 *
 * The MR must grant the placement type asked for (IB_ACCESS_FLUSH_GLOBAL;
 * sroce grants no FLUSH_PERSISTENT) over the range, or, at the MR
 * selectivity level, at all.  The requests before it were placed by this
 * engine with CPU stores already; a full barrier makes them visible to
 * every CPU before the response can be seen.
 *
 * Return: 0, or an error of the request handlers (responder.c).
 */
int sroce_rc_flush(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	int access = 0;
	struct sroce_mr *mr;
	int err;

	if (!sroce_feth_ok(pkt->flush_type, pkt->flush_level))
		return -EINVAL;
	if (pkt->flush_type & SROCE_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (pkt->flush_type & SROCE_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	err = sroce_res_check_flush(qp);
	if (err)
		return err;
	/* An MR's rkey only: a window grants no flush rights. */
	mr = sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, pkt->rkey, true, access,
			     pkt->va, pkt->flush_level == SROCE_FLUSH_MR ?
			     SROCE_MR_WHOLE : pkt->dma_len, &err);
	if (!mr)
		return -EACCES;
	sroce_mr_put(mr);
	/* The writes placed before are visible before the response is sent. */
	smp_mb();
	sroce_rc_pmem_done(qp, SROCE_RES_FLUSH, pkt->psn);
	return 0;
}

/* The resource a single-packet request of these @flags keeps, if any. */
static u8 sroce_res_type_of(u32 flags)
{
	if (flags & SROCE_F_ATOMIC)
		return SROCE_RES_ATOMIC;
	if (flags & SROCE_F_ATOMIC_WRITE)
		return SROCE_RES_ATOMIC_WRITE;
	if (flags & SROCE_F_FLUSH)
		return SROCE_RES_FLUSH;
	return SROCE_RES_NONE;
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
	WRITE_ONCE(qp->resp.res_send, sroce_res_next(qp));
}

/* A packet before resp.psn: the requester missed our answer to it. */
/**
 * sroce_rc_rd_duplicate - a READ or atomic request before resp.psn
 * @qp: an RC QP
 * @pkt: the request; the requester missed our answer to it
 *
 * Answers it again from the responder resource it repeats.
 */
void sroce_rc_rd_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 type = sroce_res_type_of(pkt->flags);
	struct sroce_resp_res *res;

	if (pkt->flags & SROCE_F_READ_REQ) {
		res = sroce_res_find(qp, SROCE_RES_READ, pkt->psn);
		if (res)
			sroce_read_replay(qp, res, pkt);
		return;
	}
	/* Answered again, not carried out again (an ATOMIC WRITE neither). */
	if (type != SROCE_RES_NONE) {
		res = sroce_res_find(qp, type, pkt->psn);
		if (res && res->first_psn == pkt->psn) {
			res->replay |= !sroce_res_pending(res);
			res->psn = res->first_psn;	/* send the ACK again */
			WRITE_ONCE(qp->resp.res_send, sroce_res_next(qp));
		}
	}
	/* Anything else, or nothing found: drop (class D). */
}

/* ------------------------------------------------------- sending */

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
void sroce_res_abort(struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; i < qp->resp.nres; i++)
		qp->resp.res[i].psn = sroce_psn_add(qp->resp.res[i].last_psn, 1);
	WRITE_ONCE(qp->resp.res_send, -1);
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
		return sroce_mr_copy(mr, va, payload, n, SROCE_FROM_MR);
	done = sroce_mr_attach_skb(mr, va, skb, n);
	if (done < 0 || done == n)
		return done < 0 ? done : 0;
	buf = sroce_tx_put_frag(skb, n - done);
	if (!buf)
		return -ENOMEM;
	return sroce_mr_copy(mr, va + done, buf, n - done, SROCE_FROM_MR);
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
		/* va becomes the MR's address (a zero-based window). */
		mr = sroce_rkey_lookup(qp, res->rkey, IB_ACCESS_REMOTE_READ,
				       &va, n, &err);
		if (!mr)
			goto fail;
	}
	skb = sroce_resp_skb(qp, &pkt, n > SROCE_TX_COPY_MAX ? NULL : &payload);
	if (skb && mr) {
		err = sroce_read_resp_payload(mr, va, skb, n,
					      n > SROCE_TX_COPY_MAX ? NULL :
					      payload);
		/*
		 * -EAGAIN: an ODP page went after the READ was accepted
		 * and is faulted in again; the requester finds the packet
		 * lost and asks again.
		 */
		if (err == -ENOMEM || err == -EAGAIN) {
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
		WRITE_ONCE(resp->res_send, sroce_res_next(qp));
		if (resp->res_send < 0)
			sroce_res_drained(qp, res->last_psn);
	}
	return sent;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The requester (requester.c): send WQEs to packets.  Context: the QP's
 * engine, holding qp->engine_lock.
 */
#ifndef SROCE_REQUESTER_H
#define SROCE_REQUESTER_H

#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <sroce/compat.h>

#include "av.h"
#include "cwnd.h"
#include "mem.h"

struct sroce_qp;

/* struct sroce_send_wqe::state */
enum sroce_wqe_state {
	SROCE_WQE_PENDING,	/* fetched, nothing sent yet */
	SROCE_WQE_ACTIVE,	/* some packets sent */
	SROCE_WQE_SENT,		/* every packet sent, waiting for the peer */
	SROCE_WQE_DONE,		/* complete (status set), not yet retired */
};

/**
 * struct sroce_send_wqe - a send work request, in kernel memory
 * @wr: copy of the ring slot's work request (user rings are hostile: only
 *	this copy is ever validated and used)
 * @av: UD: the destination, resolved from the AH when fetched
 * @length: payload bytes, computed by the driver
 * @num_sge: entries in @sge
 * @is_inline: the payload is in @inline_data, not behind @sge
 * @state: see enum sroce_wqe_state
 * @status: completion status once DONE
 * @first_psn: PSN of the first packet (RC/UC)
 * @last_psn: PSN of the last packet; a READ consumes one PSN per
 *	response packet
 * @ssn: send sequence number
 * @rd_counted: a READ or atomic counted in req.rd_atomic
 * @flush_sends: FLUSH: times sent (requester.c, sroce_req_tx())
 * @flush_rxe: FLUSH: last sent with rdma_rxe's ICRC
 * @sge: the gather list (or @inline_data), sized by the QP's limits
 */
struct sroce_send_wqe {
	struct rxe_send_wr wr;
	struct sroce_av av;
	u32 length;
	u32 num_sge;
	bool is_inline;
	u8 state;
	enum ib_wc_status status;
	u32 first_psn;
	u32 last_psn;
	u32 ssn;
	bool rd_counted;
	u8 flush_sends;
	bool flush_rxe;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/**
 * struct sroce_req - requester state (send side of RC/UC/UD)
 * @psn: next PSN to send
 * @psn_high: RC: one past the newest PSN ever sent; after a go-back-N the
 *	peer may answer, up to it, packets not yet sent again (completer.c)
 * @next: index (in sq.wqe) of the WQE being sent or next to send
 * @offset: payload bytes of WQE @next already sent
 * @tail: index of the oldest WQE not yet retired
 * @started: one past the newest WQE ever started (a WQE that go-back-N
 *	made pending again may restart in SQD, a new one may not)
 * @rd_atomic: reads and atomics outstanding
 * @ssn: next send sequence number
 * @since_ackreq: packets sent since the last one with AckReq
 * @cur: where in WQE @next's gather list @offset is
 * @flush_rxe: the peer last answered a FLUSH sent with rdma_rxe's ICRC
 * @rewinds: times it went back to resend (go-back-N, any reason); shown
 *	by rdma res (restrack.c), read there without the engine lock
 * @cwnd: RC: the congestion window (cwnd.h)
 */
struct sroce_req {
	u32 psn;
	u32 psn_high;
	u32 next;
	u32 offset;
	u32 tail;
	u32 started;
	u32 rd_atomic;
	u32 ssn;
	u32 since_ackreq;
	struct sroce_sgl_cursor cur;
	bool flush_rxe;
	u32 rewinds;
	struct sroce_cwnd cwnd;
};

/* Why the requester goes back to a PSN (the sroce_retransmit tracepoint) */
enum sroce_rewind {
	SROCE_REWIND_TIMEOUT,	/* the local ACK timer fired */
	SROCE_REWIND_SEQ_NAK,	/* the peer NAKed a PSN sequence error */
	SROCE_REWIND_RNR,	/* the peer had no receive WQE (RNR NAK) */
	SROCE_REWIND_GAP,	/* a response past a gap: lost in between */
	SROCE_REWIND_READ_LOST,	/* an ACK past a READ or atomic unanswered */
	SROCE_REWIND_HELD,	/* responses held past a gap: it was a loss */
	SROCE_REWIND_RESTART,	/* the answer to asking again lost its first */
};

/*
 * FLUSH and ATOMIC WRITE (IBA A19, memory placement extensions): one
 * packet each, answered by a zero-length RDMA READ response.
 */
static inline bool sroce_wr_is_pmem(u32 opcode)
{
	return opcode == IB_WR_FLUSH || opcode == IB_WR_ATOMIC_WRITE;
}

/*
 * The requests the peer answers with a response of their own (READ
 * responses, atomic ACKs), from a responder resource: limited by
 * max_rd_atomic, and not complete until that response came.
 */
static inline bool sroce_wr_is_read_atomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD || sroce_wr_is_pmem(opcode);
}

static inline bool sroce_wr_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

int sroce_req_send(struct sroce_qp *qp, int budget);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn, enum sroce_rewind why);
void sroce_req_reset(struct sroce_qp *qp);

#endif /* SROCE_REQUESTER_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The responder (responder.c): requests in.  Context: the QP's engine,
 * holding qp->engine_lock, except for init and cleanup (create and
 * destroy).
 */
#ifndef SROCE_RESPONDER_H
#define SROCE_RESPONDER_H

#include <linux/skbuff.h>

#include "mem.h"
#include "queue.h"
#include "wire.h"

struct sroce_pkt;
struct sroce_qp;

/* A responder resource: one READ, atomic, ATOMIC WRITE or FLUSH. */
enum sroce_res_type {
	SROCE_RES_NONE,
	SROCE_RES_READ,
	SROCE_RES_ATOMIC,
	SROCE_RES_ATOMIC_WRITE,	/* answered by a READ response ONLY, empty */
	SROCE_RES_FLUSH,	/* the same */
};

/**
 * struct sroce_resp_res - a READ or atomic request we answered or are
 *	answering, kept so that duplicates can be answered again
 * @type: see enum sroce_res_type
 * @first_psn: PSN of the request (and of the first response)
 * @last_psn: PSN of the last response packet
 * @va: READ: remote address asked for
 * @rkey: READ: the key
 * @length: READ: bytes asked for
 * @psn: READ: next response PSN to send
 * @offset: READ: bytes sent so far
 * @atomic_orig: ATOMIC: the original value returned
 * @msn: MSN when the request was accepted, for its responses
 * @replay: answered in full once already, being answered again for a
 *	duplicate
 */
struct sroce_resp_res {
	u8 type;
	bool replay;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 length;
	u32 psn;
	u32 offset;
	u64 atomic_orig;
	u32 msn;
};

/**
 * struct sroce_resp - responder state (receive side of requests)
 * @psn: next PSN expected
 * @msn: message sequence number of the last message completed
 * @nak_sent: a PSN sequence error NAK is out; don't send another until an
 *	in-order packet arrives
 * @last_op: opcode of the last accepted packet (to check FIRST/MIDDLE/LAST)
 * @in_msg: a multi-packet SEND or WRITE is in progress
 * @drop_msg: UC: discard until the next FIRST/ONLY (a packet was lost)
 * @have_wqe: @wqe holds the receive WQE the current SEND fills
 * @wqe: that receive WQE
 * @cur: where in @wqe the next payload goes
 * @recv_len: bytes received so far in the current SEND
 * @write_va: RDMA WRITE: where the next payload goes
 * @write_rkey: RDMA WRITE: its key
 * @write_left: RDMA WRITE: bytes still expected (from the RETH)
 * @ack_pending: an ACK is owed for @ack_psn
 * @ack_psn: the PSN to acknowledge
 * @nak_pending: a NAK waits for the responses queued before it
 * @nak_syndrome: its AETH syndrome
 * @nak_psn: its PSN
 * @fail_pending: the QP goes to error once that NAK is out, and takes
 *	no more requests meanwhile
 * @res: @nres responder resources, a ring (SROCE_MAX_RD_ATOM entries)
 * @nres: entries in @res
 * @res_head: next entry of @res to use
 * @res_send: index of the READ whose responses are being sent, or -1
 * @streaming: responses have left and more are to follow (the engine's;
 *	read locklessly for the QP's home CPU, engine.c)
 * @held: requests past a gap at @psn, in PSN order, waiting for it
 */
struct sroce_resp {
	u32 psn;
	u32 msn;
	bool nak_sent;
	u8 last_op;
	bool in_msg;
	bool drop_msg;
	bool have_wqe;
	struct sroce_recv_wqe_copy wqe;
	struct sroce_sgl_cursor cur;
	u32 recv_len;
	u64 write_va;
	u32 write_rkey;
	u32 write_left;
	bool ack_pending;
	u32 ack_psn;
	bool nak_pending;
	u8 nak_syndrome;
	u32 nak_psn;
	bool fail_pending;
	struct sroce_resp_res *res;
	u32 nres;
	u32 res_head;
	int res_send;
	bool streaming;
	struct sk_buff_head held;
};

/* A message ended, or a READ or atomic was accepted (C9-148). */
static inline void sroce_resp_msg_done(struct sroce_resp *resp)
{
	resp->msn = (resp->msn + 1) & SROCE_MSN_MASK;
}

void sroce_resp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb);
bool sroce_resp_stale(const struct sroce_qp *qp, u32 psn);
void sroce_resp_reorder_expired(struct sroce_qp *qp);
bool sroce_rq_flush(struct sroce_qp *qp, int budget, u32 *ring_left);
int sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);

#endif /* SROCE_RESPONDER_H */

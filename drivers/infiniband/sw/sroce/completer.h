/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The completer (completer.c): the peer's responses to completions, the
 * send queue's retirement and flush.  Context: the QP's engine, holding
 * qp->engine_lock.
 */
#ifndef SROCE_COMPLETER_H
#define SROCE_COMPLETER_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "mem.h"

struct sroce_pkt;
struct sroce_qp;
struct sroce_send_wqe;

/**
 * struct sroce_comp - completer state (RC requester's receive side)
 * @psn: oldest PSN not yet acknowledged
 * @read_off: bytes of the READ at @psn's WQE already placed
 * @retry_left: retries left before IB_WC_RETRY_EXC_ERR
 * @rnr_left: RNR retries left before IB_WC_RNR_RETRY_EXC_ERR
 * @rnr_wait: sending stopped until the RNR timer fires
 * @seq_retry: a go-back-N for a sequence NAK is under way; until the
 *	peer makes progress, further sequence NAKs are not retried
 * @reasked: the completer asked again for the gap at @psn (its held
 *	responses overflowed, or their wait ran out); until @psn moves,
 *	responses that overflow the held ones, or whose wait runs out,
 *	are dropped rather than asked for again (the retransmit timer
 *	asks again if the answer is lost; without one, the wait does),
 *	or the peer's answer shows its first packet was lost
 * @last_past_gap: the PSN of the last READ response past the gap at
 *	@psn: one lower that follows it starts a stream again
 * @cur: where in that READ's scatter list @read_off is
 * @held: responses and ACKs past a gap, in PSN order, waiting for it
 */
struct sroce_comp {
	u32 psn;
	u32 read_off;
	struct sroce_sgl_cursor cur;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	bool seq_retry;
	bool reasked;
	u32 last_past_gap;
	struct sk_buff_head held;
};

void sroce_comp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb);
bool sroce_comp_stale(const struct sroce_qp *qp, u32 psn, u32 flags);
void sroce_comp_timeout(struct sroce_qp *qp);
void sroce_comp_rnr_expired(struct sroce_qp *qp);
void sroce_comp_reorder_expired(struct sroce_qp *qp);
void sroce_wqe_done(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
		    enum ib_wc_status status);
void sroce_sq_retire(struct sroce_qp *qp);
bool sroce_sq_drained(const struct sroce_qp *qp);
bool sroce_sq_flush(struct sroce_qp *qp, int budget, u32 *ring_left);
void sroce_comp_reset(struct sroce_qp *qp);

#endif /* SROCE_COMPLETER_H */

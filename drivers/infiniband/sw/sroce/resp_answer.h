/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The responder's answers (resp_answer.c): ACKs, NAKs, READ responses and
 * atomic ACKs, and the READ and atomic requests they answer.  Context:
 * the QP's engine, holding qp->engine_lock.
 */
#ifndef SROCE_RESP_ANSWER_H
#define SROCE_RESP_ANSWER_H

#include <linux/types.h>

struct sk_buff;
struct sroce_pkt;
struct sroce_qp;

/* Called by the responder for the requests it takes in */
int sroce_rc_read(struct sroce_qp *qp, const struct sroce_pkt *pkt);
int sroce_rc_atomic(struct sroce_qp *qp, const struct sroce_pkt *pkt);
int sroce_rc_atomic_write(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			  const struct sk_buff *skb);
int sroce_rc_flush(struct sroce_qp *qp, const struct sroce_pkt *pkt);
void sroce_rc_rd_duplicate(struct sroce_qp *qp, const struct sroce_pkt *pkt);
void sroce_resp_ack_later(struct sroce_qp *qp, u32 psn);
bool sroce_rc_nak(struct sroce_qp *qp, u8 syndrome, u32 psn);
void sroce_res_abort(struct sroce_qp *qp);

/* Called by the engine after receiving, and to send what is queued */
void sroce_resp_send_ack(struct sroce_qp *qp);
int sroce_resp_send_reads(struct sroce_qp *qp, int budget);

#endif /* SROCE_RESP_ANSWER_H */

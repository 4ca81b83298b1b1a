/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The responder (responder.c): requests in.  Context: the QP's engine,
 * holding qp->engine_lock, except for init and cleanup (create and
 * destroy).
 */
#ifndef SROCE_RESPONDER_H
#define SROCE_RESPONDER_H

#include "qp.h"

struct sk_buff;
struct sroce_pkt;

/* A message ended, or a READ or atomic was accepted (C9-148). */
static inline void sroce_resp_msg_done(struct sroce_resp *resp)
{
	resp->msn = (resp->msn + 1) & SROCE_MSN_MASK;
}

void sroce_resp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb);
void sroce_resp_reorder_expired(struct sroce_qp *qp);
bool sroce_rq_flush(struct sroce_qp *qp);
int sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);

#endif /* SROCE_RESPONDER_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The responder of UD and GSI QPs (resp_ud.c).  Context: the QP's
 * engine, holding qp->engine_lock.
 */
#ifndef SROCE_RESP_UD_H
#define SROCE_RESP_UD_H

#include <linux/skbuff.h>

struct sroce_pkt;
struct sroce_qp;

void sroce_ud_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		  struct sk_buff *skb);

#endif /* SROCE_RESP_UD_H */

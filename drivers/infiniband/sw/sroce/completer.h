/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The completer (completer.c): the peer's responses to completions, the
 * send queue's retirement and flush.  Context: the QP's engine, holding
 * qp->engine_lock.
 */
#ifndef SROCE_COMPLETER_H
#define SROCE_COMPLETER_H

#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_pkt;
struct sroce_qp;
struct sroce_send_wqe;

void sroce_comp_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		    struct sk_buff *skb);
void sroce_comp_timeout(struct sroce_qp *qp);
void sroce_comp_rnr_expired(struct sroce_qp *qp);
void sroce_comp_reorder_expired(struct sroce_qp *qp);
void sroce_wqe_done(struct sroce_qp *qp, struct sroce_send_wqe *wqe,
		    enum ib_wc_status status);
void sroce_sq_retire(struct sroce_qp *qp);
bool sroce_sq_drained(const struct sroce_qp *qp);
bool sroce_sq_flush(struct sroce_qp *qp);
void sroce_retrans_rearm(struct sroce_qp *qp);
void sroce_comp_reset(struct sroce_qp *qp);

#endif /* SROCE_COMPLETER_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The receive WQE the responder holds (rq.c).  Context: the QP's engine,
 * holding qp->engine_lock.
 */
#ifndef SROCE_RQ_H
#define SROCE_RQ_H

#include <rdma/ib_verbs.h>

#include "queue.h"

struct sroce_cqe;
struct sroce_qp;

/* The held WQE's gather list, as the SGE-list helpers (mem.h) take it. */
static inline const struct ib_sge *
sroce_rq_sgl(const struct sroce_recv_wqe_copy *w)
{
	return (const struct ib_sge *)w->sge;
}

int sroce_rq_get_wqe(struct sroce_qp *qp);
void sroce_rq_cqe_init(struct sroce_qp *qp, struct sroce_cqe *cqe,
		       enum ib_wc_status status);
int sroce_rq_complete(struct sroce_qp *qp, const struct sroce_cqe *cqe,
		      bool solicited);
int sroce_rq_complete_err(struct sroce_qp *qp, enum ib_wc_status status);

#endif /* SROCE_RQ_H */

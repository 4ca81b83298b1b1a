// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive WQE the responder holds while a message arrives: taken
 * from the QP's receive queue or its SRQ (a user ring: only the kernel
 * copy in qp->resp.wqe is ever used), completed on the receive CQ,
 * successfully or in error.  The responder (responder.c, resp_ud.c)
 * places the data; this file owns the WQE's coming and going.
 *
 * Context: the QP's engine, holding qp->engine_lock.
 */
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "cq.h"
#include "qp.h"
#include "queue.h"
#include "rq.h"
#include "srq.h"

/* Receive WQEs hold struct rxe_sge; the SGE-list helpers take ib_sge. */
static_assert(sizeof(struct rxe_sge) == sizeof(struct ib_sge));
static_assert(offsetof(struct rxe_sge, addr) == offsetof(struct ib_sge, addr));
static_assert(offsetof(struct rxe_sge, length) ==
	      offsetof(struct ib_sge, length));
static_assert(offsetof(struct rxe_sge, lkey) == offsetof(struct ib_sge, lkey));

/**
 * sroce_rq_cqe_init - a completion for the receive WQE the responder holds
 * @qp: the QP
 * @cqe: filled in: the WQE's wr_id, IB_WC_RECV, @status
 * @status: the completion status
 */
void sroce_rq_cqe_init(struct sroce_qp *qp, struct sroce_cqe *cqe,
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

/**
 * sroce_rq_complete - complete the receive WQE the responder holds
 * @qp: the QP
 * @cqe: its completion
 * @solicited: the message asked for a solicited event
 *
 * Return: 0, or -EIO if the CQ overflowed.
 */
int sroce_rq_complete(struct sroce_qp *qp, const struct sroce_cqe *cqe,
		      bool solicited)
{
	qp->resp.have_wqe = false;
	if (sroce_cq_post(qp->rcq, cqe, solicited))
		return -EIO;
	if (cqe->status == IB_WC_SUCCESS)
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RDMA_RECVS);
	return 0;
}

/**
 * sroce_rq_complete_err - complete the receive WQE held, with an error
 * @qp: the QP
 * @status: the completion status
 *
 * Return: as sroce_rq_complete().
 */
int sroce_rq_complete_err(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct sroce_cqe cqe;

	sroce_rq_cqe_init(qp, &cqe, status);
	return sroce_rq_complete(qp, &cqe, false);
}

/**
 * sroce_rq_get_wqe - make sure a receive WQE is held in qp->resp.wqe
 * @qp: the QP
 *
 * From the QP's receive queue or its SRQ.  UC may still hold one from a
 * message it dropped; that one is used again.
 *
 * Return: 0; -EAGAIN if the queue is empty (RNR); -EIO if the WQE in
 * the ring was malformed (it is consumed and completed in error).
 */
int sroce_rq_get_wqe(struct sroce_qp *qp)
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
		sroce_rq_complete_err(qp, IB_WC_LOC_QP_OP_ERR);
		return -EIO;
	}
	return 0;
}

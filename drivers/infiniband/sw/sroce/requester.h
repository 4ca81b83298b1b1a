/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The requester (requester.c): send WQEs to packets.  Context: the QP's
 * engine, holding qp->engine_lock.
 */
#ifndef SROCE_REQUESTER_H
#define SROCE_REQUESTER_H

#include <rdma/ib_verbs.h>

struct sroce_qp;

static inline bool sroce_wr_is_read_atomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static inline bool sroce_wr_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

int sroce_req_send(struct sroce_qp *qp, int budget);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
void sroce_req_reset(struct sroce_qp *qp);

#endif /* SROCE_REQUESTER_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Posting work requests (verbs.c): kernel post_send and post_recv, and
 * the user doorbell.
 */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include <rdma/ib_verbs.h>

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

#endif /* SROCE_VERBS_H */

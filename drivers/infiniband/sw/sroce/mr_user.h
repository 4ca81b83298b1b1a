/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User memory regions (mr_user.c): reg_user_mr (pinned, or ODP),
 * reg_user_mr_dmabuf and rereg_user_mr, and the release of a user MR's
 * memory at dereg.  Process context; the rules are in mr.h.
 */
#ifndef SROCE_MR_USER_H
#define SROCE_MR_USER_H

#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

struct sroce_mr;

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				       u64 length, u64 iova, int fd, int access,
				       SROCE_REG_DMABUF_ARG *arg);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
void sroce_mr_user_release(struct sroce_mr *mr);

#endif /* SROCE_MR_USER_H */

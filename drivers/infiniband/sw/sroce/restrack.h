/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce's own fields in the RDMA core's resource tracking
 * (rdma res show qp|cq|mr|srq -dd), restrack.c.
 */
#ifndef SROCE_RESTRACK_H
#define SROCE_RESTRACK_H

struct ib_device;
void sroce_restrack_set_ops(struct ib_device *ibdev);

#endif /* SROCE_RESTRACK_H */

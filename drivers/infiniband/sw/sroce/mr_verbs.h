/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The MR verbs (mr_verbs.c): the ib_device_ops of memory regions that a
 * device is given when it is set up.
 */
#ifndef SROCE_MR_VERBS_H
#define SROCE_MR_VERBS_H

struct ib_device;

void sroce_mr_set_ops(struct ib_device *ibdev);

#endif /* SROCE_MR_VERBS_H */

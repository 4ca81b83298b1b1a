/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packets past a PSN gap, held for a moment in case it fills (reorder.c).
 * Context: the QP's engine.
 */
#ifndef SROCE_REORDER_H
#define SROCE_REORDER_H

#include <linux/skbuff.h>

struct sroce_qp;

enum sroce_held_result {
	SROCE_HELD_ADDED,
	SROCE_HELD_COPY,
	SROCE_HELD_FULL,
};

enum sroce_held_result sroce_held_insert(struct sk_buff_head *held, u32 psn,
					 struct sk_buff *skb, unsigned int max);
bool sroce_reorder_hold(struct sroce_qp *qp, struct sk_buff_head *held,
			u32 psn, struct sk_buff *skb);
void sroce_reorder_drop(struct sroce_qp *qp, struct sk_buff_head *held);
bool sroce_reorder_full(const struct sk_buff_head *held);

#endif /* SROCE_REORDER_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets that arrive past a gap in the PSNs.
 *
 * RoCE expects a flow to arrive in order, and a gap to mean a loss: the
 * responder NAKs it, the requester goes back and resends everything
 * after it.  Over a veth or lo that is often wrong: each packet goes to
 * the backlog of the CPU that sent it, a QP sends from more than one CPU
 * (the caller's doorbell, its work item, softirq), and one CPU's backlog
 * may wait for milliseconds (for ksoftirqd, on 6.1) while the other's is
 * emptied at once.  The missing packet is only overtaken, and the
 * go-back-N it triggers resends a whole window for nothing (a READ
 * request sent again is a READ response sent again).
 *
 * So both receiving halves of an RC QP, the responder (requests) and the
 * completer (READ responses, atomic ACKs), hold what arrives past a gap,
 * in PSN order, up to SROCE_REORDER_HOLD packets for SROCE_REORDER_WAIT_US,
 * and take the held packets in once the gap fills.  When the room or the
 * time runs out, the gap is a loss, handled as before: the responder NAKs,
 * the completer asks again.  The packets held have passed every check
 * already (ICRC, headers), so taking them in only parses them again.
 * Everything here runs in the QP's engine.
 */
#include <kunit/visibility.h>
#include <linux/skbuff.h>

#include "sroce.h"
#include "qp.h"
#include "reorder.h"
#include "rx.h"
#include "timers.h"

/*
 * An RC QP's responder and completer each hold up to this many packets
 * that arrive past a PSN gap, for a while (timers.c), before they take
 * the gap for a loss: over a veth or lo a QP's packets sent from two CPUs
 * are often overtaken, not lost.
 */
#define SROCE_REORDER_HOLD	32

/**
 * sroce_held_insert - add @skb to @held in PSN order
 * @held: the packets held, sorted by PSN
 * @psn: @skb's PSN
 * @skb: the packet; a reference is taken if it is added
 * @max: the most packets @held may hold
 *
 * Return: SROCE_HELD_ADDED, SROCE_HELD_COPY if a packet with @psn is
 * held already, or SROCE_HELD_FULL.
 */
enum sroce_held_result sroce_held_insert(struct sk_buff_head *held, u32 psn,
					 struct sk_buff *skb, unsigned int max)
{
	struct sk_buff *pos;

	skb_queue_reverse_walk(held, pos) {
		int cmp = sroce_psn_cmp(SROCE_SKB_CB(pos)->psn, psn);

		if (!cmp)
			return SROCE_HELD_COPY;
		if (cmp < 0)
			break;
	}
	if (skb_queue_len(held) >= max)
		return SROCE_HELD_FULL;
	SROCE_SKB_CB(skb)->psn = psn;
	/* After @pos, or first if the walk ended at the head. */
	__skb_queue_after(held, pos, skb_get(skb));
	return SROCE_HELD_ADDED;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_held_insert);

/**
 * sroce_reorder_hold - hold a packet that arrived past a gap
 * @qp: the QP
 * @held: the responder's or the completer's held packets
 * @psn: the packet's PSN
 * @skb: the packet, checked; stays the caller's (a reference is taken)
 *
 * Return: false if there is no room: the gap is to be taken for a loss.
 */
bool sroce_reorder_hold(struct sroce_qp *qp, struct sk_buff_head *held,
			u32 psn, struct sk_buff *skb)
{
	switch (sroce_held_insert(held, psn, skb, SROCE_REORDER_HOLD)) {
	case SROCE_HELD_FULL:
		return false;
	case SROCE_HELD_ADDED:
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_REORDER_HELD);
		if (skb_queue_len(held) == 1)
			sroce_timers_held(qp, held);
		break;
	case SROCE_HELD_COPY:
		break;
	}
	return true;
}

/**
 * sroce_reorder_full - is there no room to hold another packet?
 * @held: the responder's or the completer's held packets
 */
bool sroce_reorder_full(const struct sk_buff_head *held)
{
	return skb_queue_len(held) >= SROCE_REORDER_HOLD;
}

/**
 * sroce_reorder_drop - the gap was a loss: drop what was held past it
 * @qp: the QP
 * @held: the responder's or the completer's held packets
 *
 * The peer sends them again after the go-back-N that follows; counted
 * (rx_reorder_dropped), as every packet a peer made us queue and we
 * threw away.
 */
void sroce_reorder_drop(struct sroce_qp *qp, struct sk_buff_head *held)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(held))) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_REORDER_DROPPED);
		kfree_skb(skb);
	}
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packets in (rx.c): the one place a packet enters the driver.
 *
 * The engine hands sroce_resp_rcv()/sroce_comp_rcv() a packet whose ICRC
 * is checked and whose headers are decoded in @pkt; skb->data is at the
 * BTH and the payload is at offset pkt->hdr_len (maybe in frags: copy
 * with skb_copy_bits() or sroce_sgl_copy_skb()), the IP header at
 * skb_network_header().  The skb stays the caller's.
 */
#ifndef SROCE_RX_H
#define SROCE_RX_H

#include <linux/skbuff.h>
#include <linux/udp.h>
#include <rdma/ib_verbs.h>

#include "wire.h"

struct sroce_qp;

/**
 * struct sroce_skb_cb - what the receive path notes in skb->cb
 * @vlan_id: the VLAN the packet came in on
 * @has_vlan: @vlan_id is valid
 * @from_self: sent by this device to itself, never on a netdev
 * @mcast: sent to the multicast QPN, delivered to a QP attached to the
 *	group it was sent to (mcast.c)
 * @psn: its PSN, while it is held past a gap (reorder.c)
 *
 * The netdev a packet arrived on may be gone by the time the QP's engine
 * looks at it, so skb->dev is replaced by the sroce device's own netdev
 * when queued, and what the engine needs from the original is kept here.
 */
struct sroce_skb_cb {
	u16 vlan_id;
	bool has_vlan;
	bool from_self;
	bool mcast;
	u32 psn;
};

#define SROCE_SKB_CB(skb) ((struct sroce_skb_cb *)(skb)->cb)

/*
 * The BTH of a received packet, behind its UDP header; sroce_rx_rcv()
 * pulls both into the linear part before it looks or queues.
 */
static inline const struct sroce_bth *sroce_skb_bth(const struct sk_buff *skb)
{
	return (const struct sroce_bth *)(skb->data + sizeof(struct udphdr));
}

void sroce_skb_daddr_gid(const struct sk_buff *skb, union ib_gid *gid);
bool sroce_rx_wanted(const struct sroce_qp *qp, u8 opcode);
int sroce_rx_rcv(struct sk_buff *skb);
void sroce_rx_loopback(struct sk_buff *skb);
void sroce_rx_process(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_RX_H */

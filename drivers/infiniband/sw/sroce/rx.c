// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets in: the one place a packet enters.  The UDP socket (udp.c), or
 * loopback from tx.c, hands a packet to sroce_rx_rcv(): it finds the
 * device and the QP and queues the packet for the QP's engine, or has it
 * taken in at once (engine.c, sroce_qp_rx_deliver()).  The engine then
 * calls sroce_rx_process(), which checks the packet against the QP's
 * peer, unwraps it, checks its ICRC and headers, and hands a request to
 * the responder and a response to the completer.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "sroce.h"
#include "completer.h"
#include "engine.h"
#include "icrc.h"
#include "main.h"
#include "mcast.h"
#include "qp.h"
#include "responder.h"
#include "rx.h"
#include "trace.h"

/* --------------------------------------------------------- softirq side */

/**
 * sroce_skb_daddr_gid - a received packet's destination address as a GID
 * @skb: the packet, its network header set
 * @gid: where the address goes; IPv4 as a v4-mapped GID
 */
void sroce_skb_daddr_gid(const struct sk_buff *skb, union ib_gid *gid)
{
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)gid);
	else
		memcpy(gid, &ipv6_hdr(skb)->daddr, sizeof(*gid));
}

/*
 * A packet that came in through lo (one local sroce device to another in
 * the same namespace) names its device only by its destination address.
 */
static struct sroce_dev *sroce_find_dev_by_daddr_rcu(struct sk_buff *skb)
{
	const struct ib_gid_attr *attr;
	struct sroce_dev *sdev;
	union ib_gid gid;

	sroce_skb_daddr_gid(skb, &gid);
	for (sdev = sroce_next_dev_rcu(NULL); sdev;
	     sdev = sroce_next_dev_rcu(sdev)) {
		if (!net_eq(dev_net(sdev->ndev), dev_net(skb->dev)))
			continue;
		attr = rdma_find_gid_by_port(&sdev->ibdev, &gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP, 1,
					     NULL);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			return sdev;
		}
	}
	return NULL;
}

/* The packet's transport must be the QP's. */
static bool sroce_transport_ok(const struct sroce_qp *qp, u32 flags)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return flags & SROCE_F_RC;
	case IB_QPT_UC:
		return flags & SROCE_F_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return flags & SROCE_F_UD;
	default:
		return false;
	}
}

/**
 * sroce_rx_wanted - whether @qp takes a packet with @opcode at all
 * @qp: the QP, found under RCU
 * @opcode: the packet's BTH opcode
 *
 * What is cheap to check before a packet is queued: that the QP takes
 * packets at all, and of this transport.  Read locklessly: modify_qp may
 * change the state meanwhile, and the engine checks again.
 */
bool sroce_rx_wanted(const struct sroce_qp *qp, u8 opcode)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);

	return info && sroce_transport_ok(qp, info->flags) &&
	       sroce_qp_can_receive(qp);
}

/*
 * The packet may wait in the QP's queue past this softirq, and its route
 * or its connection-tracking entry may go meanwhile (a namespace or a
 * netdev going away, conntrack flushed): drop the references it holds,
 * as WireGuard does before it queues.  Not skb_scrub_packet(): that
 * forgets pkt_type, which the peer check reads.
 */
static void sroce_rx_scrub(struct sk_buff *skb)
{
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb_ext_reset(skb);
}

/*
 * Note in the control block what the engine needs from where the packet
 * came in, and make it the device's: it may be queued past this softirq.
 */
static void sroce_rx_prepare(struct sroce_dev *sdev, struct sk_buff *skb,
			     bool from_self, bool mcast)
{
	SROCE_SKB_CB(skb)->from_self = from_self;
	SROCE_SKB_CB(skb)->mcast = mcast;
	SROCE_SKB_CB(skb)->has_vlan = is_vlan_dev(skb->dev);
	SROCE_SKB_CB(skb)->vlan_id = SROCE_SKB_CB(skb)->has_vlan ?
				     vlan_dev_vlan_id(skb->dev) : 0;
	skb->dev = sdev->ndev;
	sroce_rx_scrub(skb);
}

/*
 * Find the device and the QP and queue the packet for the QP's engine;
 * the rest (peer, ICRC, headers) is checked there, on whatever CPU runs
 * it.  @from_self: sroce_udp_loopback() sent it, it never was on a netdev.
 * Always consumes @skb.
 */
static void sroce_rcv(struct sk_buff *skb, bool from_self)
{
	const struct sroce_bth *bth;
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	u32 qpn;

	rcu_read_lock();
	/*
	 * lo carries packets between local devices in one namespace: the
	 * destination names the device, before any device on lo itself.
	 */
	sdev = NULL;
	if (skb->dev->flags & IFF_LOOPBACK)
		sdev = sroce_find_dev_by_daddr_rcu(skb);
	if (!sdev)
		sdev = sroce_find_dev_rcu(skb->dev);
	/* A VLAN's GIDs belong to the device on the VLAN's lower netdev. */
	if (!sdev && is_vlan_dev(skb->dev))
		sdev = sroce_find_dev_rcu(vlan_dev_real_dev(skb->dev));
	if (!sdev)
		goto drop;
	sroce_count(sdev, SROCE_CNT_RX_PACKETS);

	if (!pskb_may_pull(skb, sizeof(struct udphdr) + SROCE_BTH_LEN)) {
		sroce_drop(sdev, 0, SROCE_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	bth = sroce_skb_bth(skb);
	qpn = be32_to_cpu(bth->qpn) & SROCE_QPN_MASK;
	if (qpn == IB_MULTICAST_QPN) {
		sroce_rx_prepare(sdev, skb, from_self, true);
		sroce_mcast_rcv(sdev, skb);
		rcu_read_unlock();
		return;
	}
	qp = sroce_qp_lookup_rcu(sdev, qpn);
	if (!qp) {
		sroce_drop(sdev, qpn, SROCE_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	if (!sroce_rx_wanted(qp, bth->opcode)) {
		sroce_drop(sdev, qpn, SROCE_CNT_RX_DROP_STATE);
		goto drop;
	}
	sroce_rx_prepare(sdev, skb, from_self, false);
	sroce_qp_rx_deliver(qp, skb);
	rcu_read_unlock();
	return;

drop:
	rcu_read_unlock();
	kfree_skb(skb);
}

/**
 * sroce_rx_rcv - a RoCEv2 packet arrived at the UDP socket
 * @skb: the packet, skb->data at the UDP header
 *
 * Context: softirq.
 * Return: 0; the skb is always consumed.
 */
int sroce_rx_rcv(struct sk_buff *skb)
{
	sroce_rcv(skb, false);
	return 0;
}

/**
 * sroce_rx_loopback - a packet this device sent to one of its own GIDs
 * @skb: the packet, skb->data at the UDP header; consumed
 *
 * Context: the sending QP's engine (BHs off).
 */
void sroce_rx_loopback(struct sk_buff *skb)
{
	sroce_rcv(skb, true);
}

/* ------------------------------------------------------ the engine side */

/* Sent to a multicast address (a unicast MAC does not make it ours). */
static bool sroce_skb_to_group(const struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		return ipv4_is_multicast(ip_hdr(skb)->daddr);
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/*
 * RC and UC take packets from their peer only: the source and destination
 * addresses must be the QP's path, the other way round.  A peer that is
 * one of our own GIDs sends through sroce_udp_loopback(), never a socket:
 * on this host anyone may send from our address with a UDP socket.  UD
 * takes datagrams from anyone, but only those sent to us, not broadcast,
 * and those sent to a group the QP was attached to (mcast.c checked that).
 */
static bool sroce_rx_from_peer(const struct sroce_qp *qp,
			       const struct sk_buff *skb)
{
	const struct sroce_av *av = &qp->attr.av;
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return SROCE_SKB_CB(skb)->mcast ||
		       (skb->pkt_type == PACKET_HOST && !sroce_skb_to_group(skb));
	if (SROCE_SKB_CB(skb)->from_self != sroce_av_is_loopback(av))
		return false;
	if (ip_hdr(skb)->version == 4) {
		iph = ip_hdr(skb);
		return av->network_type == RDMA_NETWORK_IPV4 &&
		       iph->saddr == av->daddr.s6_addr32[3] &&
		       iph->daddr == av->saddr.s6_addr32[3];
	}
	ip6h = ipv6_hdr(skb);
	return av->network_type == RDMA_NETWORK_IPV6 &&
	       ipv6_addr_equal(&ip6h->saddr, &av->daddr) &&
	       ipv6_addr_equal(&ip6h->daddr, &av->saddr);
}

/*
 * A FLUSH from rdma_rxe carries rxe's own ICRC (icrc.c,
 * sroce_icrc_rxe_flush()).  Taken too, but only for a FLUSH of exactly
 * its headers, the one shape in which rxe's ICRC covers all the packet:
 * @len from the BTH to the end, @want the ICRC by the rules.
 */
static bool sroce_rx_rxe_flush(struct sroce_dev *sdev, struct sk_buff *skb,
			       unsigned int len, __le32 want, __le32 got)
{
	u8 hdr[SROCE_BTH_LEN + SROCE_FETH_LEN + SROCE_RETH_LEN];

	if (len != sizeof(hdr) + SROCE_ICRC_LEN ||
	    skb_copy_bits(skb, 0, hdr, sizeof(hdr)) ||
	    hdr[0] != SROCE_OPCODE(RC, FLUSH))
		return false;
	sroce_icrc_rxe_flush(&want, hdr, sizeof(hdr));
	if (want != got)
		return false;
	sroce_count(sdev, SROCE_CNT_RX_RXE_FLUSH_ICRC);
	return true;
}

/*
 * Trim the skb to the UDP payload and check its ICRC; skb->data ends up at
 * the BTH.  Returns the length from the BTH to the end, ICRC included.
 */
static int sroce_rx_unwrap(struct sroce_dev *sdev, struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;
	unsigned int ulen = ntohs(udp_hdr(skb)->len);
	__le32 want, got;
	int len;

	if (ulen < sizeof(struct udphdr) + SROCE_BTH_LEN + SROCE_ICRC_LEN ||
	    ulen > skb->len || pskb_trim(skb, ulen))
		return -EINVAL;
	__skb_pull(skb, sizeof(struct udphdr));
	len = skb->len;
	if (SROCE_SKB_CB(skb)->from_self && !sroce_loopback_icrc)
		goto checked;
	if (sroce_icrc_skb(skb, skb_network_offset(skb),
			   len - SROCE_ICRC_LEN - skb_network_offset(skb),
			   &want))
		return -EINVAL;
	if (skb_copy_bits(skb, len - SROCE_ICRC_LEN, &got, sizeof(got)) ||
	    (want != got && !sroce_rx_rxe_flush(sdev, skb, len, want, got)))
		return -EBADMSG;
checked:
	/* The headers must be linear for parsing; the payload need not. */
	info = sroce_opcode(((const struct sroce_bth *)skb->data)->opcode);
	if (!pskb_may_pull(skb, min_t(unsigned int, len, info ?
				      info->hdr_len : SROCE_BTH_LEN)))
		return -EINVAL;
	return len;
}

/*
 * An RC packet from the peer that would change nothing: see
 * sroce_resp_stale() and sroce_comp_stale().  Read from the BTH before
 * the ICRC is checked, so it may only ever drop, never act.
 */
static bool sroce_rx_stale(const struct sroce_qp *qp,
			   const struct sk_buff *skb)
{
	const struct sroce_bth *bth = sroce_skb_bth(skb);
	const struct sroce_opcode_info *info = sroce_opcode(bth->opcode);
	u32 psn = be32_to_cpu(bth->apsn) & SROCE_PSN_MASK;

	if (qp->ibqp.qp_type != IB_QPT_RC || !info)
		return false;
	return info->flags & SROCE_F_REQ ? sroce_resp_stale(qp, psn) :
					   sroce_comp_stale(qp, psn, info->flags);
}

/**
 * sroce_rx_process - check and dispatch one received packet
 * @qp: the QP it is addressed to
 * @skb: the packet as queued by sroce_rx_rcv(); stays the caller's
 *
 * Context: the QP's engine.
 */
void sroce_rx_process(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sroce_pkt pkt;
	int len;

	if (!sroce_rx_from_peer(qp, skb)) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_PEER);
		return;
	}
	if (sroce_rx_stale(qp, skb)) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_STALE);
		return;
	}
	len = sroce_rx_unwrap(sdev, skb);
	if (len < 0) {
		sroce_drop(sdev, qp->ibqp.qp_num,
			   len == -EBADMSG ? SROCE_CNT_RX_DROP_ICRC :
					     SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	/* The transport was checked before queueing (sroce_rx_wanted()). */
	if (sroce_pkt_parse(skb->data, len, &pkt) ||
	    (pkt.pkey & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff)) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	trace_sroce_rx(&qp->ibqp, &pkt);
	if ((pkt.flags & (SROCE_F_REQ | SROCE_F_LAST)) ==
	    (SROCE_F_REQ | SROCE_F_LAST) && qp->rx_streak < U8_MAX)
		WRITE_ONCE(qp->rx_streak, qp->rx_streak + 1);
	if (pkt.flags & SROCE_F_REQ)
		sroce_resp_rcv(qp, &pkt, skb);
	else if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_comp_rcv(qp, &pkt, skb);
	else
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
}

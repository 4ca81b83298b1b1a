// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets on the wire: the IP/UDP encapsulation and ICRC of what we send,
 * the route to the peer in the netdev's namespace, loopback to ourselves;
 * and the first steps of receiving, from the UDP socket to a QP's queue.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>
#include <rdma/ib_cache.h>

#include "sroce.h"
#include "qp.h"

#define SROCE_DEFAULT_HOP_LIMIT	64

static bool sroce_av_is_ipv4(const struct sroce_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV4;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_PORT);
	/* The packet ends with the pad and the ICRC already. */
	uh->len = htons(skb->len);
	/* RoCEv2 sends no UDP checksum; the ICRC protects the packet. */
	uh->check = 0;
}

static void sroce_push_ipv4(struct net *net, struct sk_buff *skb,
			    const struct sroce_av *av)
{
	struct iphdr *iph;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: SROCE_DEFAULT_HOP_LIMIT;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr.s6_addr32[3];
	iph->daddr = av->daddr.s6_addr32[3];
	__ip_select_ident(net, iph, 1);
	iph->check = 0;
	iph->check = ip_fast_csum(iph, iph->ihl);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_push_ipv6(struct sk_buff *skb, const struct sroce_av *av)
{
	struct ipv6hdr *ip6h;

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	/* The flow label is 20 bits; the AV came from a user. */
	ip6_flow_hdr(ip6h, av->tclass,
		     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: SROCE_DEFAULT_HOP_LIMIT;
	ip6h->saddr = av->saddr;
	ip6h->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
}

static struct dst_entry *sroce_route4(struct net *net,
				      const struct sroce_av *av)
{
	struct flowi4 fl4 = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
	};
	struct rtable *rt;

	rt = ip_route_output_key(net, &fl4);
	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

static struct dst_entry *sroce_route6(struct net *net, struct sock *sk,
				      const struct sroce_av *av)
{
	struct flowi6 fl6 = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
	};

	return ipv6_stub->ipv6_dst_lookup_flow(net, sk, &fl6, NULL);
}

/* The ICRC, over the packet from its IP header to the pad. */
static int sroce_set_icrc(struct sk_buff *skb, __le32 *slot)
{
	unsigned int len = skb->len - SROCE_ICRC_LEN;
	__le32 icrc;
	int err;

	if (skb_is_nonlinear(skb))
		err = sroce_icrc_skb(skb, 0, len, &icrc);
	else
		err = sroce_icrc_buf(skb->data, len, &icrc);
	if (!err)
		put_unaligned(icrc, slot);
	return err;
}

static void sroce_rcv(struct sk_buff *skb, bool from_self);

/*
 * A packet to one of our own GIDs skips the IP stack: it goes straight to
 * the receive path as if it had come in on the netdev.
 */
static void sroce_loopback(struct sroce_dev *sdev, struct sk_buff *skb)
{
	skb->dev = sdev->ndev;
	skb->pkt_type = PACKET_HOST;
	skb_pull(skb, skb_transport_offset(skb));
	sroce_rcv(skb, true);
}

/* Connected QPs have one flow each; datagrams hash their own. */
static u16 sroce_tx_sport(const struct sroce_qp *qp, const struct sroce_av *av)
{
	if (qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC)
		return qp->src_port;
	return rdma_get_udp_sport(av->flow_label, qp->ibqp.qp_num, 0);
}

/*
 * The netdev (or its qdisc) dropped the packet for want of room: a veth
 * whose peer's backlog is full, a NIC's full ring.  The packet is as good
 * as lost, but unlike a loss on the wire we know it now, so the engine
 * pauses and sends it again, rather than sending on into the full queue
 * and losing a window's worth to go-back-N.
 */
static int sroce_tx_queue_full(struct sroce_qp *qp)
{
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_TX_QUEUE_FULL);
	if (qp->tx_full_tries >= SROCE_TX_FULL_TRIES)
		return 0;
	qp->tx_full_tries++;
	set_bit(SROCE_QPF_TX_FULL, &qp->flags);
	return -ENOBUFS;
}

int sroce_tx(struct sroce_qp *qp, const struct sroce_av *av,
	     struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct net *net = dev_net(sdev->ndev);
	bool ipv4 = sroce_av_is_ipv4(av);
	struct dst_entry *dst;
	__le32 *icrc;
	struct sock *sk;
	int err;

	icrc = sroce_tx_put_trailer(skb);
	if (!icrc)
		goto drop;
	sroce_push_udp(skb, sroce_tx_sport(qp, av));
	if (ipv4)
		sroce_push_ipv4(net, skb, av);
	else
		sroce_push_ipv6(skb, av);
	skb->ip_summed = CHECKSUM_NONE;
	/*
	 * As a socket with this TOS would: a VLAN's egress QoS map makes
	 * the 802.1p priority of it (what rdma_cm puts in the AH's SL).
	 */
	skb->priority = rt_tos2priority(av->tclass);
	if (sroce_set_icrc(skb, icrc))
		goto drop;
	sroce_count(sdev, SROCE_CNT_TX_PACKETS);

	/* The receive path counts what it drops. */
	if (sroce_av_is_loopback(av)) {
		sroce_loopback(sdev, skb);
		return 0;
	}

	sk = sroce_udp_sock(net, !ipv4);
	if (!sk)
		goto drop;
	dst = ipv4 ? sroce_route4(net, av) : sroce_route6(net, sk, av);
	if (IS_ERR(dst))
		goto drop;
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	err = ipv4 ? ip_local_out(net, sk, skb) : ip6_local_out(net, sk, skb);
	if (err == NET_XMIT_DROP)
		return sroce_tx_queue_full(qp);
	qp->tx_full_tries = 0;
	return 0;

drop:
	/* As if lost on the wire: the peer or the ACK timer notices. */
	sroce_count(sdev, SROCE_CNT_TX_DROPPED);
	kfree_skb(skb);
	return 0;
}

/* ------------------------------------------------------------ receive */

/*
 * A packet that came in through lo (one local sroce device to another in
 * the same namespace) names its device only by its destination address.
 */
static struct sroce_dev *sroce_find_dev_by_daddr_rcu(struct sk_buff *skb)
{
	const struct ib_gid_attr *attr;
	struct sroce_dev *sdev;
	union ib_gid gid;

	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)&gid);
	else
		memcpy(&gid, &ipv6_hdr(skb)->daddr, sizeof(gid));

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

/*
 * What is cheap to check before a packet is queued: that the QP takes
 * packets at all, and of this transport.  Read locklessly: modify_qp may
 * change the state meanwhile, and the engine checks again.
 */
static bool sroce_rx_wanted(const struct sroce_qp *qp, u8 opcode)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);

	return info && sroce_transport_ok(qp, info->flags) &&
	       sroce_qp_can_receive(qp);
}

/*
 * Find the device and the QP and queue the packet for the QP's engine;
 * the rest (peer, ICRC, headers) is checked there, on whatever CPU runs
 * it.  @from_self: sroce_loopback() sent it, it never was on a netdev.
 * Always consumes @skb.
 */
static void sroce_rcv(struct sk_buff *skb, bool from_self)
{
	const struct sroce_bth *bth;
	struct sroce_dev *sdev;
	struct sroce_qp *qp;

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
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	bth = sroce_skb_bth(skb);
	qp = sroce_qp_lookup_rcu(sdev, be32_to_cpu(bth->qpn) & SROCE_QPN_MASK);
	if (!qp) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	if (!sroce_rx_wanted(qp, bth->opcode)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_STATE);
		goto drop;
	}
	SROCE_SKB_CB(skb)->from_self = from_self;
	SROCE_SKB_CB(skb)->has_vlan = is_vlan_dev(skb->dev);
	SROCE_SKB_CB(skb)->vlan_id = SROCE_SKB_CB(skb)->has_vlan ?
				     vlan_dev_vlan_id(skb->dev) : 0;
	skb->dev = sdev->ndev;
	sroce_qp_rx_deliver(qp, skb);
	rcu_read_unlock();
	return;

drop:
	rcu_read_unlock();
	kfree_skb(skb);
}

/**
 * sroce_net_rcv - a RoCEv2 packet arrived at the UDP socket
 * @skb: the packet, skb->data at the UDP header
 *
 * Context: softirq.
 * Return: 0; the skb is always consumed.
 */
int sroce_net_rcv(struct sk_buff *skb)
{
	sroce_rcv(skb, false);
	return 0;
}

/*
 * RC and UC take packets from their peer only: the source and destination
 * addresses must be the QP's path, the other way round.  A peer that is
 * one of our own GIDs sends through sroce_loopback(), never a socket: on
 * this host anyone may send from our address with a UDP socket.  UD takes
 * datagrams from anyone, but only those sent to us, not broadcast.
 */
static bool sroce_rx_from_peer(const struct sroce_qp *qp,
			       const struct sk_buff *skb)
{
	const struct sroce_av *av = &qp->attr.av;
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return skb->pkt_type == PACKET_HOST;
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
 * Trim the skb to the UDP payload and check its ICRC; skb->data ends up at
 * the BTH.  Returns the length from the BTH to the end, ICRC included.
 */
static int sroce_rx_unwrap(struct sk_buff *skb)
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
	if (sroce_icrc_skb(skb, skb_network_offset(skb),
			   len - SROCE_ICRC_LEN - skb_network_offset(skb),
			   &want))
		return -EINVAL;
	if (skb_copy_bits(skb, len - SROCE_ICRC_LEN, &got, sizeof(got)) ||
	    want != got)
		return -EBADMSG;
	/* The headers must be linear for parsing; the payload need not. */
	info = sroce_opcode(((const struct sroce_bth *)skb->data)->opcode);
	if (!pskb_may_pull(skb, min_t(unsigned int, len, info ?
				      info->hdr_len : SROCE_BTH_LEN)))
		return -EINVAL;
	return len;
}

/**
 * sroce_rx_process - check and dispatch one received packet
 * @qp: the QP it is addressed to
 * @skb: the packet as queued by sroce_net_rcv(); stays the caller's
 *
 * Context: the QP's engine.
 */
void sroce_rx_process(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sroce_pkt pkt;
	int len;

	if (!sroce_rx_from_peer(qp, skb)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_PEER);
		return;
	}
	len = sroce_rx_unwrap(skb);
	if (len < 0) {
		sroce_count(sdev, len == -EBADMSG ? SROCE_CNT_RX_DROP_ICRC :
				  SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	/* The transport was checked before queueing (sroce_rx_wanted()). */
	if (sroce_pkt_parse(skb->data, len, &pkt) ||
	    (pkt.pkey & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	if ((pkt.flags & (SROCE_F_REQ | SROCE_F_LAST)) ==
	    (SROCE_F_REQ | SROCE_F_LAST) && qp->rx_streak < U8_MAX)
		WRITE_ONCE(qp->rx_streak, qp->rx_streak + 1);
	if (pkt.flags & SROCE_F_REQ)
		sroce_resp_rcv(qp, &pkt, skb);
	else if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_comp_rcv(qp, &pkt, skb);
	else
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
}

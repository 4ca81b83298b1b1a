// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets out: the one place a packet leaves.  The requester, the
 * responder and the completer build a packet's transport headers and
 * payload in a buffer from sroce_tx_alloc() and hand it to sroce_tx(),
 * which adds the UDP/IP encapsulation and the ICRC, finds the route to
 * the peer in the netdev's namespace and sends it, or loops it back
 * through udp.c to the receive path when the peer is one of our own GIDs.
 * Nothing else in the driver touches the IP layer.
 *
 * Transmit buffers.
 *
 * A packet's linear part holds its headers and, for a small payload, the
 * payload; a larger payload is attached as page frags that point at the
 * memory it comes from (the pages of the MR: zero copy), so sending costs
 * no copy and no payload-sized allocation.  Where memory cannot be shared
 * that way (slab or vmalloc memory of a kernel ULP, or no frag slot left)
 * the rest of the payload is copied into a frag of our own.
 *
 * Buffers are carved from pages that sroce keeps and reuses (a small
 * ring per CPU), not from kmalloc or the stack's page fragment caches:
 * with init_on_alloc, which distributions turn on by default, every new
 * allocation is zeroed first, and for a software device that doubled the
 * cost of a packet.  A page is reused once every buffer carved from it
 * has been freed (only the ring's own reference is left); buffers are
 * freed by whoever frees the skb, as any page fragment (skb_free_frag()).
 *
 * Sharing pages is safe for the memory: each frag holds a page
 * reference, so pages stay allocated until the skb is freed, even if the
 * MR is deregistered meanwhile.  Their contents may change under a
 * packet in flight only if a program changes a buffer it has posted,
 * which IBTA leaves undefined; the ICRC then fails and the packet is
 * resent.  SKBFL_SHARED_FRAG tells the stack so.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>
#include <rdma/ib_cache.h>

#include "sroce.h"
#include "icrc.h"
#include "mcast.h"
#include "qp.h"
#include "trace.h"
#include "tx.h"
#include "udp.h"

#define SROCE_DEFAULT_HOP_LIMIT	64
#define SROCE_ENCAP_LEN		(sizeof(struct ipv6hdr) + sizeof(struct udphdr))
/* Pad (0..3) and ICRC, after the payload. */
#define SROCE_TRAILER_MAX	(3 + SROCE_ICRC_LEN)

/* The pages buffers are carved from: 32 KiB, a ring of them per CPU. */
#define SROCE_FRAG_ORDER	3
#define SROCE_FRAG_RING		16

/**
 * struct sroce_frag_cache - the pages one CPU carves buffers from
 * @ring: pages this cache holds a reference to (NULL: none yet)
 * @cur: the page being carved
 * @offset: its next free byte
 *
 * Used with BHs off, so only its own CPU touches it.
 */
struct sroce_frag_cache {
	struct page *ring[SROCE_FRAG_RING];
	unsigned int cur;
	unsigned int offset;
};

static DEFINE_PER_CPU(struct sroce_frag_cache, sroce_frag_cache);

/*
 * Move to a page with room: one whose buffers have all come back, or a
 * new page in the place of the next one in the ring (whose buffers then
 * free it when they come back).
 */
static bool sroce_frag_refill(struct sroce_frag_cache *fc)
{
	struct page *page;
	unsigned int i, n;

	for (n = 1; n <= SROCE_FRAG_RING; n++) {
		i = (fc->cur + n) % SROCE_FRAG_RING;
		page = fc->ring[i];
		if (page && page_ref_count(page) == 1)
			goto found;
	}
	i = (fc->cur + 1) % SROCE_FRAG_RING;
	page = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN |
			   __GFP_NORETRY, SROCE_FRAG_ORDER);
	if (!page)
		page = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
	if (!page)
		return false;
	if (fc->ring[i])
		put_page(fc->ring[i]);
	fc->ring[i] = page;
found:
	fc->cur = i;
	fc->offset = 0;
	return true;
}

/**
 * sroce_frag_alloc - a buffer for part of a packet
 * @size: bytes, at most PAGE_SIZE
 *
 * Free it with skb_free_frag(), or let the skb it is attached to do so.
 * Any context but hard interrupts.
 *
 * Return: the buffer, or NULL without memory.
 */
static void *sroce_frag_alloc(unsigned int size)
{
	struct sroce_frag_cache *fc;
	struct page *page;
	void *buf = NULL;

	size = ALIGN(size, SMP_CACHE_BYTES);
	if (WARN_ON_ONCE(size > PAGE_SIZE))
		return NULL;
	local_bh_disable();
	fc = this_cpu_ptr(&sroce_frag_cache);
	page = fc->ring[fc->cur];
	if (!page || fc->offset + size > page_size(page)) {
		if (!sroce_frag_refill(fc))
			goto out;
		page = fc->ring[fc->cur];
	}
	get_page(page);
	buf = page_address(page) + fc->offset;
	fc->offset += size;
out:
	local_bh_enable();
	return buf;
}

/**
 * sroce_tx_exit - give back the pages of every CPU's cache
 *
 * At module exit, when nothing sends any more.  Buffers still in flight
 * keep their pages until they are freed.
 */
void sroce_tx_exit(void)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		struct sroce_frag_cache *fc = per_cpu_ptr(&sroce_frag_cache, cpu);

		for (i = 0; i < SROCE_FRAG_RING; i++) {
			if (fc->ring[i])
				put_page(fc->ring[i]);
			fc->ring[i] = NULL;
		}
	}
}

/**
 * sroce_tx_alloc - an empty packet
 * @qp: the sending QP (its device's netdev sets the headroom)
 * @len: bytes that go into the linear part: transport headers and a
 *	payload that is copied rather than attached
 *
 * Room is left in front for UDP, IP and the link layer, and behind for
 * the pad and the ICRC.  Any context but hard interrupts.
 *
 * Return: the skb, or NULL without memory.
 */
struct sk_buff *sroce_tx_alloc(struct sroce_qp *qp, unsigned int len)
{
	struct net_device *ndev = sroce_qp_dev(qp)->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + SROCE_ENCAP_LEN;
	unsigned int size = SKB_DATA_ALIGN(head + len + SROCE_TRAILER_MAX) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (size <= PAGE_SIZE) {
		data = sroce_frag_alloc(size);
		if (data) {
			skb = build_skb(data, size);
			if (!skb)
				skb_free_frag(data);
		}
	} else {
		skb = alloc_skb(head + len + SROCE_TRAILER_MAX,
				GFP_ATOMIC | __GFP_NOWARN);
	}
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	return skb;
}

static void sroce_skb_grow(struct sk_buff *skb, unsigned int len)
{
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/**
 * sroce_tx_add_page - attach part of a page as the next frag
 * @skb: the packet
 * @page: the page; a reference is taken
 * @off: where in it
 * @len: how many bytes
 *
 * Two frag slots are always kept: one for a copy of what cannot be
 * attached, one for the trailer.  Any context.
 *
 * Return: false if the page cannot be shared (slab pages, see
 * sendpage_ok()) or no slot is left; nothing is attached then.
 */
bool sroce_tx_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	int i = sh->nr_frags;

	if (!sendpage_ok(page))
		return false;
	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&sh->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 2)
			return false;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	sh->flags |= SKBFL_SHARED_FRAG;
	sroce_skb_grow(skb, len);
	return true;
}

/**
 * sroce_tx_put_frag - append @len bytes of our own memory as a frag
 * @skb: the packet
 * @len: at most PAGE_SIZE
 *
 * Any context but hard interrupts.
 *
 * Return: where to write the bytes, or NULL without memory or slots.
 */
void *sroce_tx_put_frag(struct sk_buff *skb, unsigned int len)
{
	int i = skb_shinfo(skb)->nr_frags;
	void *buf;

	if (i >= MAX_SKB_FRAGS || len > PAGE_SIZE)
		return NULL;
	buf = sroce_frag_alloc(len);
	if (!buf)
		return NULL;
	/* The buffer's page reference becomes the frag's. */
	skb_fill_page_desc(skb, i, virt_to_head_page(buf),
			   buf - page_address(virt_to_head_page(buf)), len);
	sroce_skb_grow(skb, len);
	return buf;
}

/**
 * sroce_tx_put_trailer - append the pad and room for the ICRC
 * @skb: the packet, transport headers and payload complete
 *
 * The pad count in the BTH was computed from the payload length; the
 * headers are all multiples of 4 bytes, so the same pad rounds the
 * whole packet up.  The pad is zeroed; the ICRC is the caller's.
 *
 * Return: where the ICRC goes, or NULL without memory.
 */
static __le32 *sroce_tx_put_trailer(struct sk_buff *skb)
{
	unsigned int pad = -skb->len & 3;
	u8 *t;

	if (skb_is_nonlinear(skb))
		t = sroce_tx_put_frag(skb, pad + SROCE_ICRC_LEN);
	else
		t = skb_put(skb, pad + SROCE_ICRC_LEN);
	if (!t)
		return NULL;
	memset(t, 0, pad);
	return (__le32 *)(t + pad);
}

/* ------------------------------------------ encapsulation and route */

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
				      const struct sroce_av *av,
				      struct dst_cache *cache)
{
	struct flowi4 fl4 = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
	};
	struct rtable *rt;
	__be32 saddr;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &saddr);
		if (rt)
			return &rt->dst;
	}
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *sroce_route6(struct net *net, struct sock *sk,
				      const struct sroce_av *av,
				      struct dst_cache *cache)
{
	struct flowi6 fl6 = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	if (cache) {
		dst = dst_cache_get_ip6(cache, &saddr);
		if (dst)
			return dst;
	}
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, &fl6, NULL);
	if (!IS_ERR(dst) && cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
}

/*
 * The route of a packet to @av: from the QP's cache when @av is the
 * connected peer of an RC or UC QP, as a connected UDP socket keeps its
 * route (and WireGuard one per peer), instead of a FIB lookup for every
 * packet -- most of a small message's cost on the way out.  A cached
 * route is checked against the routing tables' generation on each use
 * (dst_cache), so a changed route, an address or a netdev gone, or a
 * bond's failover is seen at the next packet.
 */
static struct dst_entry *sroce_tx_route(struct sroce_qp *qp, struct net *net,
					struct sock *sk,
					const struct sroce_av *av, bool ipv4)
{
	struct dst_cache *cache = av == &qp->attr.av ? &qp->route : NULL;

	if (ipv4)
		return sroce_route4(net, av, cache);
	return sroce_route6(net, sk, av, cache);
}

/**
 * sroce_tx_qp_init - the route cache of a new QP
 * @qp: the QP being created
 *
 * Only RC and UC QPs have one peer; datagram QPs look every route up.
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_tx_qp_init(struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return 0;
	return dst_cache_init(&qp->route, GFP_KERNEL);
}

/**
 * sroce_tx_peer_alive - an RC peer showed that our packets reach it
 * @qp: an RC QP
 *
 * The completer calls this when an ACK or response acknowledges requests
 * not acknowledged before, the responder when a request arrives in
 * sequence: our ACKs got through, or the requester could not have sent
 * past its window.  Such an upper-layer confirmation is what keeps a
 * neighbour entry REACHABLE without ARP or ND probes (TCP gives it on
 * each ACK of new data, UDP senders with MSG_CONFIRM): unconfirmed, the
 * entry goes STALE every ~30 s of traffic and is probed, and on a lossy
 * link lost probes fail the entry, dropping every packet for the seconds
 * a new resolution takes: eight of our retransmit timeouts, and the QP
 * ends in IB_WC_RETRY_EXC_ERR while the peer is there all along.
 *
 * Context: the QP's engine.
 */
void sroce_tx_peer_alive(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->peer_alive, jiffies);
}

/*
 * Confirm the neighbour @dst leads to, once per tick at most, while the
 * peer is alive (sroce_tx_peer_alive()).  Context: the QP's engine.
 */
static void sroce_tx_confirm_neigh(struct sroce_qp *qp,
				   const struct sroce_av *av,
				   struct dst_entry *dst, bool ipv4)
{
	unsigned long alive = READ_ONCE(qp->peer_alive);

	if (alive == qp->neigh_confirmed)
		return;
	qp->neigh_confirmed = alive;
	dst_confirm_neigh(dst, ipv4 ? (const void *)&av->daddr.s6_addr32[3] :
				      (const void *)&av->daddr);
}

/**
 * sroce_tx_qp_path_changed - forget the cached route
 * @qp: a QP whose address vector modify_qp has just set
 */
void sroce_tx_qp_path_changed(struct sroce_qp *qp)
{
	dst_cache_reset(&qp->route);
}

/**
 * sroce_tx_qp_cleanup - release the route cache
 * @qp: a QP that sends no more (or whose creation failed)
 */
void sroce_tx_qp_cleanup(struct sroce_qp *qp)
{
	dst_cache_destroy(&qp->route);
}

/*
 * The ICRC, over the packet from its IP header to the pad; rdma_rxe's
 * form of it if @rxe_bth, the BTH of a FLUSH (linear: it has no payload).
 */
static int sroce_set_icrc(struct sk_buff *skb, __le32 *slot,
			  const u8 *rxe_bth)
{
	unsigned int len = skb->len - SROCE_ICRC_LEN;
	__le32 icrc;
	int err;

	if (skb_is_nonlinear(skb))
		err = sroce_icrc_skb(skb, 0, len, &icrc);
	else
		err = sroce_icrc_buf(skb->data, len, &icrc);
	if (err)
		return err;
	if (rxe_bth && !skb_is_nonlinear(skb))
		sroce_icrc_rxe_flush(&icrc, rxe_bth, (u8 *)slot - rxe_bth);
	put_unaligned(icrc, slot);
	return 0;
}

/*
 * A datagram to a group that QPs of this device are attached to goes to
 * them as well as to the wire: a copy, since the original leaves on the
 * netdev meanwhile (the UDP sockets do not loop multicast back, udp.c).
 */
static void sroce_tx_mcast_loop(struct sroce_qp *qp, const struct sroce_av *av,
				struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sk_buff *copy;

	if (!sroce_mcast_member(sdev, &av->daddr))
		return;
	copy = skb_copy(skb, GFP_ATOMIC);
	if (copy)
		sroce_udp_loopback(sdev->ndev, copy);
	else
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_TX_DROPPED);
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
	WRITE_ONCE(qp->tx_full_tries, qp->tx_full_tries + 1);
	set_bit(SROCE_QPF_TX_FULL, &qp->flags);
	return -ENOBUFS;
}

static int sroce_tx_one(struct sroce_qp *qp, const struct sroce_av *av,
			struct sk_buff *skb, bool rxe_icrc)
{
	const u8 *bth = rxe_icrc ? skb->data : NULL;
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct net *net = dev_net(sdev->ndev);
	bool ipv4 = sroce_av_is_ipv4(av);
	struct dst_entry *dst;
	__le32 *icrc;
	struct sock *sk;
	int err;

	trace_sroce_tx(&qp->ibqp, skb);
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
	if (!sroce_av_is_loopback(av) || sroce_loopback_icrc) {
		if (sroce_set_icrc(skb, icrc, bth))
			goto drop;
	} else {
		/* No wire, no ICRC (icrc.c); the slot stays, for the lengths. */
		put_unaligned(cpu_to_le32(0), icrc);
	}
	sroce_count(sdev, SROCE_CNT_TX_PACKETS);

	/* The receive path counts what it drops. */
	if (sroce_av_is_loopback(av)) {
		sroce_udp_loopback(sdev->ndev, skb);
		return 0;
	}
	sroce_tx_mcast_loop(qp, av, skb);

	sk = sroce_udp_sock(net, !ipv4);
	if (!sk)
		goto drop;
	dst = sroce_tx_route(qp, net, sk, av, ipv4);
	if (IS_ERR(dst))
		goto drop;
	if (qp->ibqp.qp_type == IB_QPT_RC && av == &qp->attr.av)
		sroce_tx_confirm_neigh(qp, av, dst, ipv4);
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	err = ipv4 ? ip_local_out(net, sk, skb) : ip6_local_out(net, sk, skb);
	if (err == NET_XMIT_DROP)
		return sroce_tx_queue_full(qp);
	WRITE_ONCE(qp->tx_full_tries, 0);
	return 0;

drop:
	/* As if lost on the wire: the peer or the ACK timer notices. */
	sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_TX_DROPPED);
	kfree_skb(skb);
	return 0;
}

int sroce_tx(struct sroce_qp *qp, const struct sroce_av *av,
	     struct sk_buff *skb)
{
	return sroce_tx_one(qp, av, skb, false);
}

/*
 * A FLUSH whose ICRC is rdma_rxe's (icrc.c, sroce_icrc_rxe_flush()); the
 * requester sends it that way when a FLUSH went unanswered (requester.c).
 */
int sroce_tx_rxe_flush(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb)
{
	return sroce_tx_one(qp, av, skb, true);
}

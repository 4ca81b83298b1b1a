// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RoCEv2 UDP sockets.  Every network namespace gets its own pair
 * (IPv4 and IPv6) bound to port 4791, so that devices on netdevs in any
 * namespace send and receive there.  The sockets live exactly as long as
 * the namespace; a namespace cannot go away before the sroce devices on
 * its netdevs have (the netdev core waits for their references).
 *
 * This file is sroce's one boundary with UDP, both ways: packets from the
 * sockets and packets a device sends to itself (tx.c) enter the receive
 * path (rx.c) here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/sockptr.h>
#include <net/dst.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "sroce.h"
#include "rx.h"
#include "udp.h"

struct sroce_net {
	struct socket *sock4;
	struct socket *sock6;
};

static unsigned int sroce_net_id __read_mostly;

/*
 * Packets for port 4791 arrive here in softirq, with skb->data at the UDP
 * header.  Return 0: the skb is ours.
 */
static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	return sroce_rx_rcv(skb);
}

/**
 * sroce_udp_loopback() - deliver a packet sent to one of our own GIDs
 * @ndev: the netdev of the sending device, which the packet "came in on"
 * @skb: the packet, IP and UDP headers pushed; consumed
 *
 * It skips the IP stack and enters the receive path here, beside the
 * socket's entry, as if it had come in on @ndev: sroce's one boundary
 * with UDP is this file, in both directions.
 *
 * Context: the sending QP's engine (BHs off).
 */
void sroce_udp_loopback(struct net_device *ndev, struct sk_buff *skb)
{
	skb->dev = ndev;
	skb->pkt_type = PACKET_HOST;
	skb_pull(skb, skb_transport_offset(skb));
	sroce_rx_loopback(skb);
}

/* The socket packets to @net's peers are sent from, or NULL. */
struct sock *sroce_udp_sock(struct net *net, bool ipv6)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	struct socket *sock = ipv6 ? sn->sock6 : sn->sock4;

	return sock ? sock->sk : NULL;
}

/*
 * No multicast loopback through the IP stack, for IPv6 either
 * (setup_udp_tunnel_sock() turns it off for IPv4): tx.c hands what a
 * device sends to a group it is a member of to its own receive path.
 */
static int sroce_udp_no_mc_loop(struct socket *sock)
{
	int zero = 0;

	return sock->ops->setsockopt(sock, SOL_IPV6, IPV6_MULTICAST_LOOP,
				     KERNEL_SOCKPTR(&zero), sizeof(zero));
}

/*
 * IPv4 early demux caches the input route of the multicast datagrams a
 * socket takes (sk->sk_rx_dst), and a multicast input route holds the
 * namespace's loopback netdev.  Our sockets outlive the namespace's
 * netdevs (pernet subsys), so the netdev core would wait for that
 * reference forever when the namespace goes: drop the cached route
 * whenever a netdev of the namespace unregisters (the core repeats
 * NETDEV_UNREGISTER while it waits for references).
 */
static void sroce_udp_forget_rx_dst(struct socket *sock)
{
	if (sock)
		dst_release(unrcu_pointer(xchg(&sock->sk->sk_rx_dst, NULL)));
}

/**
 * sroce_udp_netdev_gone - a netdev is unregistering
 * @ndev: the netdev
 *
 * Context: the netdev notifier, RTNL held.
 */
void sroce_udp_netdev_gone(struct net_device *ndev)
{
	struct sroce_net *sn = net_generic(dev_net(ndev), sroce_net_id);

	ASSERT_RTNL();
	sroce_udp_forget_rx_dst(sn->sock4);
	sroce_udp_forget_rx_dst(sn->sock6);
}

static int sroce_udp_open(struct net *net, bool ipv6, struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg ucfg = {
		.local_udp_port = htons(SROCE_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		ucfg.family = AF_INET6;
		ucfg.ipv6_v6only = 1;
		/* RoCEv2 peers send IPv6 with a zero UDP checksum too. */
		ucfg.use_udp6_rx_checksums = 0;
	} else {
		ucfg.family = AF_INET;
	}
	err = udp_sock_create(net, &ucfg, &sock);
	if (err)
		return err;
	setup_udp_tunnel_sock(net, sock, &tcfg);
	if (ipv6) {
		err = sroce_udp_no_mc_loop(sock);
		if (err) {
			udp_tunnel_sock_release(sock);
			return err;
		}
	}
	*sockp = sock;
	return 0;
}

static void sroce_udp_close(struct socket **sockp)
{
	if (*sockp) {
		udp_tunnel_sock_release(*sockp);
		*sockp = NULL;
	}
}

static int __net_init sroce_net_init(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	int err;

	err = sroce_udp_open(net, false, &sn->sock4);
	if (err)
		goto fail;
	if (ipv6_mod_enabled()) {
		err = sroce_udp_open(net, true, &sn->sock6);
		if (err)
			goto fail;
	}
	return 0;

fail:
	if (err == -EADDRINUSE)
		pr_err("UDP port %d is already in use%s; is rdma_rxe loaded?\n",
		       SROCE_UDP_PORT,
		       net_eq(net, &init_net) ? "" : " in a network namespace");
	else
		pr_err("cannot open UDP port %d: %d\n", SROCE_UDP_PORT, err);
	sroce_udp_close(&sn->sock4);
	return err;
}

static void __net_exit sroce_net_exit(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	sroce_udp_close(&sn->sock6);
	sroce_udp_close(&sn->sock4);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_init,
	.exit = sroce_net_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

int sroce_udp_init(void)
{
	return register_pernet_subsys(&sroce_net_ops);
}

void sroce_udp_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RoCEv2 UDP sockets, one pair per network namespace, and the way
 * back in for packets a device sends itself (udp.c): the one place sroce
 * meets the UDP stack.
 */
#ifndef SROCE_UDP_H
#define SROCE_UDP_H

#include <linux/types.h>

struct net;
struct net_device;
struct sk_buff;
struct sock;

struct sock *sroce_udp_sock(struct net *net, bool ipv6);
void sroce_udp_loopback(struct net_device *ndev, struct sk_buff *skb);
void sroce_udp_netdev_gone(struct net_device *ndev);
int sroce_udp_init(void);
void sroce_udp_exit(void);

#endif /* SROCE_UDP_H */

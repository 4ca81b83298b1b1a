/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * UD multicast (mcast.c): the groups a device's UD QPs are attached to,
 * the IGMP/MLD membership of its netdev that goes with them, and the
 * delivery of a packet sent to a group (destination QPN 0xFFFFFF) to the
 * QPs attached to it.
 */
#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/in6.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "params.h"

#define SROCE_MCAST_HASH_BITS	8

/**
 * struct sroce_mcast - a device's multicast groups
 * @lock: serialises attach and detach (writers of everything below);
 *	taken inside RTNL
 * @seed: hash seed, random per device: a peer cannot aim at one bucket
 * @num_groups: groups with a QP attached, at most SROCE_MAX_MCAST_GRP
 * @num_attached: attachments over all groups, at most
 *	SROCE_MAX_MCAST_GRP * SROCE_MAX_MCAST_QP_ATTACH
 * @hash: the groups by GID; the receive path reads under RCU
 */
struct sroce_mcast {
	struct mutex lock;	/* attach/detach */
	u32 seed;
	unsigned int num_groups;
	unsigned int num_attached;
	struct hlist_head hash[BIT(SROCE_MCAST_HASH_BITS)];
};

struct net_device;
struct netdev_notifier_changeupper_info;
struct sroce_dev;
struct sroce_qp;
struct sk_buff;

void sroce_mcast_init(struct sroce_dev *sdev);
void sroce_mcast_destroy(struct sroce_dev *sdev);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_qp_destroy(struct sroce_qp *qp);
void sroce_mcast_upper_changed(struct sroce_dev *sdev,
			       const struct netdev_notifier_changeupper_info *info);
void sroce_mcast_vlan_registered(struct sroce_dev *sdev,
				 struct net_device *vlan);
bool sroce_mcast_member(struct sroce_dev *sdev, const struct in6_addr *daddr);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_MCAST_H */

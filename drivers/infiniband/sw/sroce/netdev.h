/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Following the netdev a device is bound to: its state, MTU and going
 * away (netdev.c).
 */
#ifndef SROCE_NETDEV_H
#define SROCE_NETDEV_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct net_device;
struct sroce_dev;

bool sroce_port_is_active(const struct sroce_dev *sdev);
void sroce_port_update(struct sroce_dev *sdev);
enum ib_mtu sroce_ndev_ib_mtu(const struct net_device *ndev);
int sroce_netdev_init(void);
void sroce_netdev_exit(void);

#endif /* SROCE_NETDEV_H */

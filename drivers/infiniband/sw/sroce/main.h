/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The list of sroce devices (main.c): which netdev each is bound to, found
 * under RCU from the receive path.
 */
#ifndef SROCE_MAIN_H
#define SROCE_MAIN_H

#include <linux/types.h>

struct net_device;
struct sroce_dev;

void sroce_devices_lock_acquire(void);
void sroce_devices_lock_release(void);
struct sroce_dev *sroce_find_dev_rcu(const struct net_device *ndev);
struct sroce_dev *sroce_next_dev_rcu(struct sroce_dev *sdev);
int sroce_dev_claim(struct sroce_dev *sdev, struct net_device *ndev);
void sroce_dev_unlink(struct sroce_dev *sdev);

#endif /* SROCE_MAIN_H */

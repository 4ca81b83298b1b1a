/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Creating an sroce device: the ib_device and its device and port verbs
 * (device.c).
 */
#ifndef SROCE_DEVICE_H
#define SROCE_DEVICE_H

struct net_device;

int sroce_dev_add(const char *name, struct net_device *ndev);

#endif /* SROCE_DEVICE_H */

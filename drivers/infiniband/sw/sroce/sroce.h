/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce: a software RoCEv2 RDMA device.
 *
 * The objects every part of the driver shares: the device and the
 * protection domain.  Each .c file declares what it exports in a header
 * of its own name.  Locking and lifetime rules are in
 * Documentation/sroce.rst.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

#include "params.h"
#include "counters.h"
#include "mr.h"
#include "mw.h"
#include "av.h"
#include "mcast.h"
#include "odp.h"

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the core's object; must stay first
 */
struct sroce_pd {
	struct ib_pd ibpd;
};

/**
 * struct sroce_ucontext - a user context (one open of uverbsN)
 * @ibuc: the core's object; must stay first
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct sroce_dev - one RDMA device bound to one Ethernet netdev
 * @ibdev: the RDMA core's device; must stay first (ib_alloc_device)
 * @ndev: the netdev, referenced from creation until dealloc_driver
 * @ndev_tracker: reference tracker for @ndev
 * @list: entry in the global device list (sroce_devices_lock, RCU)
 * @registered: ib_register_device() has returned success
 * @ndev_gone: the netdev started unregistering; the device must follow
 * @port_active: the port state last reported with an ib_event
 * @attr: device attributes, fixed at creation
 * @stats: per-CPU counters, see counters.h
 * @mr_table: the MRs, by key index (mr.h)
 * @mw_table: the memory windows, by key index (mw.h)
 * @ah_xa: the AHs, by number (ah.c); irq-safe lock
 * @ah_next: next AH number to try
 * @num_cqs: CQs in existence, at most SROCE_MAX_CQ
 * @num_srqs: SRQs in existence, at most SROCE_MAX_SRQ
 * @qp_xa: the QPs, by QP number (bh lock; readers: RCU, see qp.h)
 * @qp_next: next QP number to try
 * @num_qps: QPs in existence, at most SROCE_MAX_QP
 * @rx_queued: received packets waiting in the QPs' queues, at most
 *	SROCE_DEV_RX_QUEUE_MAX
 * @mcast: the multicast groups its UD QPs are attached to (mcast.h)
 * @odp: faults of ODP MRs waiting for process context (odp.h)
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	bool registered;
	bool ndev_gone;
	bool port_active;
	struct ib_device_attr attr;
	struct sroce_stats __percpu *stats;
	struct sroce_mr_table mr_table;
	struct sroce_mw_table mw_table;
	struct xarray ah_xa;
	u32 ah_next;
	atomic_t num_cqs;
	atomic_t num_srqs;
	struct xarray qp_xa;
	u32 qp_next;
	atomic_t num_qps;
	atomic_t rx_queued;
	struct sroce_mcast mcast;
	struct sroce_odp_queue odp;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

/* Count one event; safe from any context, including softirq. */
static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c)
{
	this_cpu_inc(sdev->stats->cnt[c]);
}

#endif /* SROCE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce module entry: the link type behind "rdma link add ... type sroce",
 * the list of devices, and module init/exit ordering.
 *
 * sroce and rdma_rxe cannot be loaded together: both use the rxe driver id
 * (librxe binds by it), and both listen on UDP 4791.  The UDP sockets are
 * bound before the link type is registered, so whichever module loads
 * second fails at init with the port in use and leaves nothing behind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/rculist.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"
#include "crc.h"
#include "device.h"
#include "engine.h"
#include "main.h"
#include "netdev.h"
#include "qp.h"
#include "tx.h"
#include "udp.h"

/* Kbuild passes tools/version.sh's answer; a kernel tree build has none. */
#ifndef SROCE_VERSION
#define SROCE_VERSION "unknown"
#endif

/*
 * All sroce devices.  Writers hold sroce_devices_lock (taken inside RTNL
 * where both are needed); the receive path reads under RCU.
 */
static LIST_HEAD(sroce_devices);
static DEFINE_MUTEX(sroce_devices_lock);

struct sroce_dev *sroce_find_dev_rcu(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_devices, list,
				lockdep_is_held(&sroce_devices_lock))
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* The device after @sdev on the list (the first if NULL), under RCU. */
struct sroce_dev *sroce_next_dev_rcu(struct sroce_dev *sdev)
{
	struct list_head *next = sdev ? rcu_dereference(list_next_rcu(&sdev->list)) :
				 rcu_dereference(list_next_rcu(&sroce_devices));

	return next == &sroce_devices ? NULL :
	       list_entry(next, struct sroce_dev, list);
}

/*
 * Claim @ndev for @sdev.  Called with RTNL held so that the netdev cannot
 * start unregistering between the check and the insertion; the netdev
 * notifier then finds the device on the list whatever happens next.
 */
static int sroce_dev_link(struct sroce_dev *sdev, struct net_device *ndev)
{
	struct sroce_dev *other;
	int err = 0;

	ASSERT_RTNL();
	mutex_lock(&sroce_devices_lock);
	other = sroce_find_dev_rcu(ndev);
	if (other) {
		pr_warn("%s is already bound to %s\n", netdev_name(ndev),
			dev_name(&other->ibdev.dev));
		err = -EEXIST;
	} else {
		list_add_tail_rcu(&sdev->list, &sroce_devices);
	}
	mutex_unlock(&sroce_devices_lock);
	return err;
}

void sroce_devices_lock_acquire(void)
{
	mutex_lock(&sroce_devices_lock);
}

void sroce_devices_lock_release(void)
{
	mutex_unlock(&sroce_devices_lock);
}

/* Take @sdev off the list and wait until no receive path can see it. */
void sroce_dev_unlink(struct sroce_dev *sdev)
{
	mutex_lock(&sroce_devices_lock);
	list_del_rcu(&sdev->list);
	mutex_unlock(&sroce_devices_lock);
	synchronize_rcu();
}

/*
 * Ethernet, or lo (as rdma_rxe allows): a namespace with only lo, a
 * container's, gets RDMA between its own processes.
 */
static int sroce_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER && !(ndev->flags & IFF_LOOPBACK)) {
		pr_warn("%s is not an Ethernet device\n", netdev_name(ndev));
		return -EINVAL;
	}
	if (ndev->reg_state != NETREG_REGISTERED) {
		pr_warn("%s is going away\n", netdev_name(ndev));
		return -ENODEV;
	}
	return 0;
}

/* Add @sdev under RTNL, after checking that @ndev can take a device. */
int sroce_dev_claim(struct sroce_dev *sdev, struct net_device *ndev)
{
	int err;

	rtnl_lock();
	err = sroce_check_netdev(ndev);
	if (!err)
		err = sroce_dev_link(sdev, ndev);
	rtnl_unlock();
	return err;
}

static int sroce_newlink(const char *name, struct net_device *ndev)
{
	struct ib_device *other;

	/*
	 * The RDMA core would refuse a taken name with -ENFILE; say what is
	 * wrong instead.  A racing creation still gets the core's answer.
	 */
	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_warn("device name %s is already in use\n", name);
		return -EEXIST;
	}
	return sroce_dev_add(name, ndev);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int __init sroce_init(void)
{
	int err;

	err = sroce_crc_init();
	if (err)
		return err;
	err = sroce_qp_wq_init();
	if (err)
		goto err_crc;
	err = sroce_udp_init();
	if (err)
		goto err_wq;

	err = sroce_netdev_init();
	if (err)
		goto err_udp;

	rdma_link_register(&sroce_link_ops);
	pr_info("loaded, version %s\n", SROCE_VERSION);
	return 0;

err_udp:
	sroce_udp_exit();
err_wq:
	sroce_qp_wq_exit();
err_crc:
	sroce_crc_exit();
	return err;
}

static void __exit sroce_exit(void)
{
	/* No new devices: nldev holds the link ops lock across newlink. */
	rdma_link_unregister(&sroce_link_ops);
	/*
	 * Unregister every device, waiting for queued unregistrations too.
	 * This matches by driver id, which is safe only because rdma_rxe
	 * cannot be loaded beside sroce (see the top of this file).
	 */
	ib_unregister_driver(RDMA_DRIVER_RXE);
	WARN_ON(!list_empty(&sroce_devices));
	sroce_netdev_exit();
	sroce_udp_exit();
	sroce_qp_wq_exit();
	sroce_tx_exit();
	sroce_crc_exit();
	pr_info("unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 RDMA device");
MODULE_LICENSE("GPL");
MODULE_VERSION(SROCE_VERSION);
MODULE_ALIAS_RDMA_LINK("sroce");
/* Users reach the device through uverbs; have it there from the start. */
MODULE_SOFTDEP("pre: ib_uverbs");

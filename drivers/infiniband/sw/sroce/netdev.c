// SPDX-License-Identifier: GPL-2.0-only
/*
 * Following the netdev: the port is active while the netdev is up with
 * carrier, its path MTU follows the netdev MTU, and the device goes away
 * when the netdev does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "main.h"
#include "netdev.h"
#include "udp.h"

bool sroce_port_is_active(const struct sroce_dev *sdev)
{
	return netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev);
}

/* The largest IB MTU whose packets, with headers, fit the netdev MTU. */
enum ib_mtu sroce_ndev_ib_mtu(const struct net_device *ndev)
{
	int room = (int)READ_ONCE(ndev->mtu) - SROCE_MAX_HDR_LEN;
	enum ib_mtu mtu;

	for (mtu = IB_MTU_4096; mtu > IB_MTU_256; mtu--)
		if (ib_mtu_enum_to_int(mtu) <= room)
			break;
	return mtu;
}

static void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Report a change of port state with an ib_event.  Called under RTNL,
 * which orders it against other netdev state changes.
 */
void sroce_port_update(struct sroce_dev *sdev)
{
	bool active = sroce_port_is_active(sdev);

	ASSERT_RTNL();
	if (active == sdev->port_active)
		return;
	sdev->port_active = active;
	if (!active)
		sroce_count(sdev, SROCE_CNT_LINK_DOWNED);
	if (sdev->registered)
		sroce_port_event(sdev, active ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR);
}

/*
 * The netdev is unregistering.  A registered device is unregistered in the
 * background (we are under RTNL, and unregistration takes it); one still
 * registering is marked so that sroce_enable_driver() refuses it.  Either
 * way the netdev reference goes in sroce_dealloc_driver(), which the
 * netdev core waits for.
 */
static void sroce_ndev_gone(struct sroce_dev *sdev)
{
	sdev->ndev_gone = true;
	if (!sdev->registered)
		return;
	/* A device already on its way out has no registration to take. */
	if (!ib_device_try_get(&sdev->ibdev))
		return;
	ib_unregister_device_queued(&sdev->ibdev);
	ib_device_put(&sdev->ibdev);
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	if (event == NETDEV_UNREGISTER)
		sroce_udp_netdev_gone(ndev);
	sroce_devices_lock_acquire();
	sdev = sroce_find_dev_rcu(ndev);
	/* A VLAN on a device's netdev, moved to another namespace? */
	if (!sdev && event == NETDEV_REGISTER && is_vlan_dev(ndev)) {
		sdev = sroce_find_dev_rcu(vlan_dev_real_dev(ndev));
		if (sdev)
			sroce_mcast_vlan_registered(sdev, ndev);
		goto out;
	}
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		sroce_ndev_gone(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_port_update(sdev);
		break;
	case NETDEV_CHANGEUPPER:
		/* A VLAN on it comes or goes: its multicast memberships. */
		sroce_mcast_upper_changed(sdev, ptr);
		break;
	case NETDEV_CHANGEMTU:
		ibdev_info(&sdev->ibdev, "path MTU now %d\n",
			   ib_mtu_enum_to_int(sroce_ndev_ib_mtu(ndev)));
		break;
	default:
		break;
	}
out:
	sroce_devices_lock_release();
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

int sroce_netdev_init(void)
{
	return register_netdevice_notifier(&sroce_netdev_nb);
}

void sroce_netdev_exit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_nb);
}

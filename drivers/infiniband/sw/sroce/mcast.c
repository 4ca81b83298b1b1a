// SPDX-License-Identifier: GPL-2.0-only
/*
 * UD multicast: attach_mcast/detach_mcast, and the delivery of a packet
 * sent to a group.
 *
 * A group is an IPv4 (v4-mapped GID) or IPv6 multicast address.  The
 * first QP of a device to attach to it makes the device's netdev, and
 * every VLAN on it (whose GIDs the device has too), join the group in
 * the netdev's namespace: ip_mc_inc_group() or
 * ipv6_dev_mc_inc(), the kernel's own membership, so the netdev's
 * address filter takes the group's MAC address, IGMP or MLD reports go
 * out (switches that snoop see the join) and the IP layer accepts what
 * is sent to the group and hands it to our UDP socket, which, bound to
 * the wildcard address, gets every group its netdev belongs to.  rdma_rxe
 * only adds the MAC address (dev_mc_add()): then an IPv4 group works only
 * because rdma_cm joins it too, and IPv6 groups (which rdma_cm does not
 * join on RoCEv2) not at all.  The memberships are counted by the IP
 * layer, so ours and rdma_cm's stack.  The last QP to detach leaves.
 *
 * A QP that is destroyed while attached is detached first (uverbs does
 * it before for a user QP, but a kernel consumer may not have), so no
 * group outlives its QPs and no group outlives the device: the core
 * destroys every QP before it frees the device, and a netdev that
 * unregisters takes its memberships with it (the IP layer drops them).
 * A VLAN deleted leaves the groups as it is unlinked from the netdev, a
 * VLAN added joins them (the netdev notifier, NETDEV_CHANGEUPPER), and
 * one moved to another namespace joins them again there.
 *
 * What a device sends to a group it is a member of goes to its own
 * attached QPs too, through its receive path (tx.c), not through the
 * IP stack's multicast loopback, which the UDP sockets turn off (udp.c).
 *
 * The receive path (sroce_mcast_rcv(), softirq) reads the groups and
 * their QP slots under RCU.  A detach clears the QP's slot; destroy_qp
 * detaches before its grace period, so after it no delivery can still
 * hold the QP; an empty group is freed after a grace period.  A packet
 * is cloned for each attached QP and each clone queued to its QP like
 * any packet, within that QP's and the device's receive caps: at most
 * SROCE_MAX_MCAST_QP_ATTACH copies a packet, one pass over a fixed array.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>

#include "sroce.h"
#include "engine.h"
#include "mcast.h"
#include "qp.h"
#include "rx.h"

/**
 * struct sroce_mcg - one multicast group of a device
 * @node: in the device's hash (struct sroce_mcast)
 * @mgid: the group's address, IPv4 as a v4-mapped GID
 * @num_qps: QPs attached, at most SROCE_MAX_MCAST_QP_ATTACH
 * @rcu: frees the group after the receive path is done with it
 * @qp: the attached QPs, NULL for a free slot; written under the
 *	device's mcast lock, read under RCU
 */
struct sroce_mcg {
	struct hlist_node node;
	union ib_gid mgid;
	unsigned int num_qps;
	struct rcu_head rcu;
	struct sroce_qp __rcu *qp[SROCE_MAX_MCAST_QP_ATTACH];
};

void sroce_mcast_init(struct sroce_dev *sdev)
{
	struct sroce_mcast *mc = &sdev->mcast;
	unsigned int i;

	mutex_init(&mc->lock);
	mc->seed = get_random_u32();
	for (i = 0; i < ARRAY_SIZE(mc->hash); i++)
		INIT_HLIST_HEAD(&mc->hash[i]);
}

static struct hlist_head *sroce_mcg_bucket(struct sroce_mcast *mc,
					   const union ib_gid *mgid)
{
	u32 h = jhash2((const u32 *)mgid->raw, sizeof(*mgid) / sizeof(u32),
		       mc->seed);

	return &mc->hash[hash_32(h, SROCE_MCAST_HASH_BITS)];
}

/* Under the mcast lock or RCU. */
static struct sroce_mcg *sroce_mcg_find(struct sroce_mcast *mc,
					const union ib_gid *mgid)
{
	struct sroce_mcg *mcg;

	hlist_for_each_entry_rcu(mcg, sroce_mcg_bucket(mc, mgid), node,
				 lockdep_is_held(&mc->lock))
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

/*
 * Writers take RTNL, then the mcast lock: a group's first attach and
 * last detach join and leave under RTNL, and the netdev notifier, which
 * runs under RTNL, walks the groups when a VLAN comes or goes.
 */
static void sroce_mcast_lock(struct sroce_mcast *mc)
{
	rtnl_lock();
	mutex_lock(&mc->lock);
}

static void sroce_mcast_unlock(struct sroce_mcast *mc)
{
	mutex_unlock(&mc->lock);
	rtnl_unlock();
}

/* ------------------------------------------- the netdev's membership */

/*
 * Join or leave @mgid on @ndev, as a socket's IP_ADD_MEMBERSHIP would,
 * but counted on the interface rather than a socket (no per-socket
 * limit).  A netdev already unregistering has no in_device or inet6_dev
 * any more: joining fails, leaving has nothing to do.
 */
static int sroce_ndev_membership(struct net_device *ndev,
				 const union ib_gid *mgid, bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;

	ASSERT_RTNL();
	if (!ipv6_addr_v4mapped(a6))
		return join ? ipv6_dev_mc_inc(ndev, a6) :
			      ipv6_dev_mc_dec(ndev, a6);
	in_dev = __in_dev_get_rtnl(ndev);
	if (!in_dev)
		return -ENODEV;
	if (join)
		ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
	else
		ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
	return 0;
}

/*
 * A VLAN on the device's netdev: the RDMA core gives the port the VLAN's
 * addresses as GIDs, so QPs send through it (tagged) and the receive path
 * takes what comes in on it (rx.c).
 */
static bool sroce_mcast_vlan_of(const struct sroce_dev *sdev,
				const struct net_device *dev)
{
	return is_vlan_dev(dev) && vlan_dev_real_dev(dev) == sdev->ndev;
}

/*
 * Join or leave @mgid on the device's netdev and on every VLAN on it.
 * attach_mcast does not say which of the port's GIDs a QP uses (a UD QP
 * sends and receives on all of them), so a group is joined wherever the
 * port has GIDs: on the VLAN too the IP layer must accept the group (it
 * drops a datagram to a group its netdev has not joined), its MAC filter
 * take it, and its IGMP/MLD reports go out tagged for a snooping switch.
 * A VLAN linked or unlinked later joins or leaves every group then
 * (sroce_mcast_upper_changed()), one moved to another namespace joins
 * again there (sroce_mcast_vlan_registered()); RTNL, held across, keeps
 * the set of VLANs the groups are joined on the same as the set linked.
 * Only the netdev's own join must succeed: a VLAN without IPv6 (no
 * inet6_dev) just has no IPv6 group, and has none to leave either.
 */
static int sroce_mcg_membership(struct sroce_dev *sdev,
				const union ib_gid *mgid, bool join)
{
	struct net_device *upper;
	struct list_head *iter;
	int err;

	ASSERT_RTNL();
	err = sroce_ndev_membership(sdev->ndev, mgid, join);
	if (err && join)
		return err;
	netdev_for_each_upper_dev_rcu(sdev->ndev, upper, iter)
		if (sroce_mcast_vlan_of(sdev, upper))
			sroce_ndev_membership(upper, mgid, join);
	return 0;
}

/* @vlan joins or leaves every group: at most SROCE_MAX_MCAST_GRP. */
static void sroce_mcast_vlan_all(struct sroce_dev *sdev,
				 struct net_device *vlan, bool join)
{
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcg *mcg;
	unsigned int b;

	mutex_lock(&mc->lock);
	for (b = 0; b < ARRAY_SIZE(mc->hash); b++)
		hlist_for_each_entry(mcg, &mc->hash[b], node)
			sroce_ndev_membership(vlan, &mcg->mgid, join);
	mutex_unlock(&mc->lock);
}

/**
 * sroce_mcast_upper_changed - a netdev was linked on, or unlinked from,
 *	the device's netdev
 * @sdev: the device
 * @info: NETDEV_CHANGEUPPER's
 *
 * A VLAN linked joins every group of the device; one unlinked (deleted:
 * the 8021q module unlinks it before it unregisters, while its in_device
 * and inet6_dev still exist) leaves them.
 *
 * Context: the netdev notifier, RTNL held.
 */
void sroce_mcast_upper_changed(struct sroce_dev *sdev,
			       const struct netdev_notifier_changeupper_info *info)
{
	ASSERT_RTNL();
	if (sroce_mcast_vlan_of(sdev, info->upper_dev))
		sroce_mcast_vlan_all(sdev, info->upper_dev, info->linking);
}

/**
 * sroce_mcast_vlan_registered - a VLAN on the device's netdev registered
 * @sdev: the device
 * @vlan: the VLAN netdev
 *
 * A new VLAN is linked only after it registers, and joins then.  One
 * linked already is moving to another namespace: it unregistered from
 * the old one, and its in_device and inet6_dev, with the memberships,
 * went; it joins again in the new one.
 *
 * Context: the netdev notifier, RTNL held.
 */
void sroce_mcast_vlan_registered(struct sroce_dev *sdev,
				 struct net_device *vlan)
{
	ASSERT_RTNL();
	if (sroce_mcast_vlan_of(sdev, vlan) &&
	    netdev_has_upper_dev(sdev->ndev, vlan))
		sroce_mcast_vlan_all(sdev, vlan, true);
}

/* ----------------------------------------------------- groups, slots */

static struct sroce_mcg *sroce_mcg_create(struct sroce_dev *sdev,
					  const union ib_gid *mgid)
{
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcg *mcg;
	int err;

	lockdep_assert_held(&mc->lock);
	if (mc->num_groups >= SROCE_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), SROCE_GFP_USER);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	err = sroce_mcg_membership(sdev, mgid, true);
	if (err) {
		kfree(mcg);
		return ERR_PTR(err);
	}
	hlist_add_head_rcu(&mcg->node, sroce_mcg_bucket(mc, mgid));
	mc->num_groups++;
	return mcg;
}

/* The last QP left: the netdev leaves, the group goes after readers. */
static void sroce_mcg_release(struct sroce_dev *sdev, struct sroce_mcg *mcg)
{
	lockdep_assert_held(&sdev->mcast.lock);
	hlist_del_rcu(&mcg->node);
	sdev->mcast.num_groups--;
	sroce_mcg_membership(sdev, &mcg->mgid, false);
	kfree_rcu(mcg, rcu);
}

/* The QP in slot @i of @mcg, for a writer (the mcast lock held). */
static struct sroce_qp *sroce_mcg_qp(struct sroce_dev *sdev,
				     struct sroce_mcg *mcg, int i)
{
	return rcu_dereference_protected(mcg->qp[i],
					 lockdep_is_held(&sdev->mcast.lock));
}

/* @qp's slot in @mcg, or -1; @qp NULL finds a free slot. */
static int sroce_mcg_slot(struct sroce_dev *sdev, struct sroce_mcg *mcg,
			  const struct sroce_qp *qp)
{
	int i;

	for (i = 0; i < SROCE_MAX_MCAST_QP_ATTACH; i++)
		if (sroce_mcg_qp(sdev, mcg, i) == qp)
			return i;
	return -1;
}

static void sroce_mcg_detach_slot(struct sroce_dev *sdev,
				  struct sroce_mcg *mcg, int slot,
				  struct sroce_qp *qp)
{
	RCU_INIT_POINTER(mcg->qp[slot], NULL);
	mcg->num_qps--;
	sdev->mcast.num_attached--;
	qp->mcast_attached--;
	if (!mcg->num_qps)
		sroce_mcg_release(sdev, mcg);
}

/* ------------------------------------------------------------- verbs */

/*
 * Only UD QPs join groups, and only multicast GIDs name one.  uverbs
 * calls the driver without the checks ib_attach_mcast() makes.
 */
static bool sroce_mcast_args_ok(const struct ib_qp *ibqp, union ib_gid *gid)
{
	return ibqp->qp_type == IB_QPT_UD &&
	       rdma_is_multicast_addr((struct in6_addr *)gid->raw);
}

/**
 * sroce_attach_mcast - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Attaching a QP that is attached already does nothing, as in rdma_rxe.
 * Context: process, may sleep (takes RTNL).
 *
 * Return: 0; -EINVAL for a QP that is not UD or a GID that is not
 * multicast; -ENOMEM past max_mcast_grp, max_mcast_qp_attach or
 * max_total_mcast_qp_attach (rdma_rxe's answer) or without memory;
 * -ENODEV if the netdev is going away.
 */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg;
	int slot, err = 0;

	if (!sroce_mcast_args_ok(ibqp, gid))
		return -EINVAL;
	sroce_mcast_lock(mc);
	mcg = sroce_mcg_find(mc, gid);
	if (mcg && sroce_mcg_slot(sdev, mcg, qp) >= 0)
		goto out;
	if (mc->num_attached >= SROCE_MAX_TOTAL_MCAST_QP_ATTACH ||
	    (mcg && mcg->num_qps >= SROCE_MAX_MCAST_QP_ATTACH)) {
		err = -ENOMEM;
		goto out;
	}
	if (!mcg) {
		mcg = sroce_mcg_create(sdev, gid);
		if (IS_ERR(mcg)) {
			err = PTR_ERR(mcg);
			goto out;
		}
	}
	slot = sroce_mcg_slot(sdev, mcg, NULL);
	if (WARN_ON_ONCE(slot < 0)) {
		err = -ENOMEM;
		goto out;
	}
	rcu_assign_pointer(mcg->qp[slot], qp);
	mcg->num_qps++;
	mc->num_attached++;
	qp->mcast_attached++;
out:
	sroce_mcast_unlock(mc);
	return err;
}

/**
 * sroce_detach_mcast - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Context: process, may sleep (takes RTNL).
 * Return: 0, or -EINVAL if the QP is not attached to @gid.
 */
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg;
	int slot, err = -EINVAL;

	if (!sroce_mcast_args_ok(ibqp, gid))
		return -EINVAL;
	sroce_mcast_lock(mc);
	mcg = sroce_mcg_find(mc, gid);
	slot = mcg ? sroce_mcg_slot(sdev, mcg, qp) : -1;
	if (slot >= 0) {
		sroce_mcg_detach_slot(sdev, mcg, slot, qp);
		err = 0;
	}
	sroce_mcast_unlock(mc);
	return err;
}

/*
 * Detach @qp (NULL: every QP) from every group.  At most
 * SROCE_MAX_MCAST_GRP groups of SROCE_MAX_MCAST_QP_ATTACH slots.
 */
static void sroce_mcast_detach_all(struct sroce_dev *sdev,
				   struct sroce_qp *qp)
{
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_qp *cur;
	struct hlist_node *tmp;
	struct sroce_mcg *mcg;
	unsigned int b;
	bool last;
	int i;

	lockdep_assert_held(&mc->lock);
	for (b = 0; b < ARRAY_SIZE(mc->hash); b++) {
		hlist_for_each_entry_safe(mcg, tmp, &mc->hash[b], node) {
			for (i = 0; i < SROCE_MAX_MCAST_QP_ATTACH; i++) {
				cur = sroce_mcg_qp(sdev, mcg, i);
				if (!cur || (qp && cur != qp))
					continue;
				last = mcg->num_qps == 1;
				sroce_mcg_detach_slot(sdev, mcg, i, cur);
				/* The last slot took the group with it. */
				if (last)
					break;
			}
		}
	}
}

/**
 * sroce_mcast_qp_destroy - detach a QP being destroyed from its groups
 * @qp: the QP, before destroy_qp's grace period
 *
 * Context: process, may sleep.
 */
void sroce_mcast_qp_destroy(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);

	/* Only attach changes it, and nobody attaches a QP being destroyed. */
	if (!READ_ONCE(qp->mcast_attached))
		return;
	sroce_mcast_lock(&sdev->mcast);
	sroce_mcast_detach_all(sdev, qp);
	sroce_mcast_unlock(&sdev->mcast);
}

/**
 * sroce_mcast_destroy - the device is freed: nothing may be left
 * @sdev: the device, off the receive path's list (no more readers)
 *
 * Every QP was destroyed, and detached, before; a group left over would
 * be a bug, which is reported and cleaned up.
 */
void sroce_mcast_destroy(struct sroce_dev *sdev)
{
	sroce_mcast_lock(&sdev->mcast);
	if (WARN_ON(sdev->mcast.num_groups))
		sroce_mcast_detach_all(sdev, NULL);
	sroce_mcast_unlock(&sdev->mcast);
	mutex_destroy(&sdev->mcast.lock);
}

/* --------------------------------------------------------- receiving */

/**
 * sroce_mcast_member - whether a QP of @sdev is attached to @daddr
 * @sdev: the device
 * @daddr: a destination address (IPv4 v4-mapped)
 *
 * Context: any; takes the RCU read lock.
 */
bool sroce_mcast_member(struct sroce_dev *sdev, const struct in6_addr *daddr)
{
	bool member;

	if (!rdma_is_multicast_addr((struct in6_addr *)daddr))
		return false;
	rcu_read_lock();
	member = sroce_mcg_find(&sdev->mcast, (const union ib_gid *)daddr);
	rcu_read_unlock();
	return member;
}

/* A copy for @qp, or the packet itself for the last QP (@last). */
static void sroce_mcast_give(struct sroce_dev *sdev, struct sroce_qp *qp,
			     struct sk_buff *skb, bool last)
{
	struct sk_buff *copy = last ? skb : skb_clone(skb, GFP_ATOMIC);

	if (!copy) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_QUEUE_FULL);
		return;
	}
	sroce_count(sdev, SROCE_CNT_RX_MCAST);
	sroce_qp_rx_deliver(qp, copy);
}

/**
 * sroce_mcast_rcv - a packet to the multicast QPN arrived
 * @sdev: the device it came in on
 * @skb: the packet as sroce_rx_rcv() prepared it (its control block
 *	set, scrubbed), skb->data at the UDP header; consumed
 *
 * Every UD QP of @sdev attached to the destination group gets a copy;
 * a packet to a unicast address, or to a group no QP of ours is attached
 * to, is counted (rx_drop_mcast) and dropped.  Each QP's receive queue
 * caps what it takes, as for any packet.
 *
 * Context: softirq, or an engine sending on loopback; RCU read side.
 */
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	u8 opcode = sroce_skb_bth(skb)->opcode;
	struct sroce_qp *qp, *prev = NULL;
	struct sroce_mcg *mcg = NULL;
	union ib_gid mgid;
	int i;

	sroce_skb_daddr_gid(skb, &mgid);
	if (rdma_is_multicast_addr((struct in6_addr *)mgid.raw))
		mcg = sroce_mcg_find(&sdev->mcast, &mgid);
	if (!mcg) {
		sroce_drop(sdev, SROCE_MULTICAST_QPN, SROCE_CNT_RX_DROP_MCAST);
		kfree_skb(skb);
		return;
	}
	for (i = 0; i < SROCE_MAX_MCAST_QP_ATTACH; i++) {
		qp = rcu_dereference(mcg->qp[i]);
		if (!qp)
			continue;
		if (!sroce_rx_wanted(qp, opcode)) {
			sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_STATE);
			continue;
		}
		if (prev)
			sroce_mcast_give(sdev, prev, skb, false);
		prev = qp;
	}
	if (prev) {
		sroce_mcast_give(sdev, prev, skb, true);
	} else {
		/* Every QP of the group was detaching or not receiving. */
		kfree_skb(skb);
	}
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address handles and address vectors.
 *
 * An AH gets a number in the device's AH table, which user UD work
 * requests name (librxe's ah_num).  The table's lock, not RCU, guards
 * lookups: destroy_ah may run in atomic context and the core frees the AH
 * as soon as it returns, so a lookup copies the address vector out while
 * holding the lock and never keeps a pointer.
 */
#include <kunit/visibility.h>
#include <linux/xarray.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_user_rxe.h>

#include "sroce.h"

/* Resolve @attr into @av; the core has resolved the MAC already. */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid = grh->sgid_attr;
	struct net_device *ndev;
	enum rdma_network_type type;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !sgid)
		return -EINVAL;
	type = rdma_gid_attr_network_type(sgid);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;	/* RoCE v1 GIDs are not ours */

	memset(av, 0, sizeof(*av));
	av->network_type = type;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->sgid_index = grh->sgid_index;
	av->flow_label = grh->flow_label;
	memcpy(&av->saddr, &sgid->gid, sizeof(av->saddr));
	memcpy(&av->daddr, &grh->dgid, sizeof(av->daddr));
	if (type == RDMA_NETWORK_IPV4 && !ipv6_addr_v4mapped(&av->daddr))
		return -EINVAL;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid);
	if (!IS_ERR(ndev))
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	return IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_av_from_attr);

void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid;

	memcpy(&dgid, &av->daddr, sizeof(dgid));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->tclass);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_av_to_attr);

/**
 * sroce_av_lookup - copy out the address vector of AH number @ah_num
 * @sdev: the device
 * @ah_num: the AH's number, from a UD work request
 * @pd: the PD the AH must belong to (the QP's)
 * @av: filled on success
 *
 * Return: true if the AH exists and belongs to @pd.
 */
bool sroce_av_lookup(struct sroce_dev *sdev, u32 ah_num,
		     const struct ib_pd *pd, struct sroce_av *av)
{
	struct sroce_ah *ah;
	unsigned long flags;
	bool found = false;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		found = true;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return found;
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = container_of(ibah, struct sroce_ah, ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	err = sroce_av_from_attr(&ah->av, init->ah_attr);
	if (err)
		return err;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, ah,
				XA_LIMIT(1, SROCE_MAX_AH), &sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;

	/* Older librxe has no room for ah_num and embeds the AV itself. */
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			xa_erase_irq(&sdev->ah_xa, ah->ah_num);
			return err;
		}
	}
	return 0;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_ah *ah = container_of(ibah, struct sroce_ah, ibah);

	memset(attr, 0, sizeof(*attr));
	sroce_av_to_attr(&ah->av, attr);
	return 0;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_ah *ah = container_of(ibah, struct sroce_ah, ibah);
	struct sroce_dev *sdev = to_sdev(ibah->device);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	return 0;
}

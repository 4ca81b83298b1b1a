// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ib_device: creation and registration, and the verbs that describe
 * the device and its port (query_device/port/pkey, immutable data, user
 * contexts and protection domains).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

#include "sroce.h"
#include "cq.h"
#include "device.h"
#include "main.h"
#include "mcast.h"
#include "mmap.h"
#include "mr_verbs.h"
#include "netdev.h"
#include "qp.h"
#include "restrack.h"
#include "srq.h"
#include "verbs.h"

static void sroce_init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *a = &sdev->attr;

	a->fw_ver = (u64)SROCE_FW_MAJOR << 32 | SROCE_FW_MINOR << 16 |
		    SROCE_FW_SUBMINOR;
	a->sys_image_guid = sdev->ibdev.node_guid;
	a->max_mr_size = SROCE_MAX_MR_SIZE;
	a->page_size_cap = SROCE_PAGE_SIZE_CAP;
	a->vendor_id = SROCE_VENDOR_ID;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
			      IB_DEVICE_BAD_QKEY_CNTR |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_ATOMIC_WRITE |
			      IB_DEVICE_FLUSH_GLOBAL |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = SROCE_MAX_SGE;
	a->max_recv_sge = SROCE_MAX_SGE;
	a->max_sge_rd = SROCE_MAX_SGE_RD;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	a->max_mw = SROCE_MAX_MW;
	a->max_pd = SROCE_MAX_PD;
	a->max_qp_rd_atom = SROCE_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = SROCE_MAX_RD_ATOM;
	a->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_RD_ATOM;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SROCE_MAX_TOTAL_MCAST_QP_ATTACH;
	a->max_ah = SROCE_MAX_AH;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SRQ_SGE;
	a->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	a->max_pkeys = SROCE_PKEY_TABLE_LEN;
	a->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
	sroce_odp_set_caps(a);
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* librxe sends no driver data and expects none back. */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

static int sroce_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		sdev->attr.sys_image_guid = cpu_to_be64(attr->sys_image_guid);
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

static void sroce_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SROCE_FW_MAJOR,
		 SROCE_FW_MINOR, SROCE_FW_SUBMINOR);
}

static int sroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	bool active = sroce_port_is_active(sdev);

	/* The core has zeroed @attr; fill what a RoCE port has. */
	attr->state = active ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = active ? IB_PORT_PHYS_STATE_LINK_UP :
				    IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = sroce_ndev_ib_mtu(sdev->ndev);
	attr->phys_mtu = ib_mtu_enum_to_int(IB_MTU_4096);
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	attr->max_vl_num = 1;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;

	/*
	 * Without its netdev (going away: unregistering, or the VLAN under
	 * us deleted) the port is down, which the attributes say; failing
	 * the query would only have the core log "ib_query_port failed".
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_port_immutable(struct ib_device *ibdev, u32 port,
				struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	immutable->gid_tbl_len = SROCE_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_link_layer(struct ib_device *ibdev,
					     u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int sroce_alloc_ucontext(struct ib_ucontext *uctx,
				struct ib_udata *udata)
{
	return 0;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * The device is going away (rdma link delete, the netdev unregistering,
 * rmmod) while a program has it open.  Having this op tells the core not
 * to wait for the program: it sends the program IB_EVENT_DEVICE_FATAL,
 * destroys its objects as if it had exited, then calls this.  Nothing of
 * the context is left to undo: each ring's memory belongs to its mmap
 * entry, which a mapping keeps alive, so a program that still writes to
 * a ring writes to memory nobody reads any more.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

/*
 * Called by the core once the device is visible but before clients see
 * it.  A netdev that began unregistering while we registered makes the
 * registration fail here; after this point the netdev notifier owns the
 * device's end.
 */
static int sroce_enable_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int err = 0;

	rtnl_lock();
	if (sdev->ndev_gone)
		err = -ENODEV;
	else
		sdev->registered = true;
	sroce_port_update(sdev);
	rtnl_unlock();
	if (!err)
		ibdev_info(ibdev, "attached to %s\n", netdev_name(sdev->ndev));
	return err;
}

/* The last call for a device, from unregistration or a failed create. */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	if (sdev->list.next)
		sroce_dev_unlink(sdev);
	sroce_odp_dev_destroy(sdev);
	free_percpu(sdev->stats);
	sroce_mcast_destroy(sdev);
	sroce_mr_table_destroy(&sdev->mr_table);
	sroce_mw_table_destroy(&sdev->mw_table);
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.alloc_pd = sroce_alloc_pd,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.alloc_ucontext = sroce_alloc_ucontext,
	.attach_mcast = sroce_attach_mcast,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.enable_driver = sroce_enable_driver,
	.get_dev_fw_str = sroce_fw_str,
	.get_link_layer = sroce_link_layer,
	.get_port_immutable = sroce_port_immutable,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_device = sroce_modify_device,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.peek_cq = sroce_peek_cq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_ah = sroce_query_ah,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};

/* Everything a device needs before it is claimed and registered. */
static int sroce_dev_setup(struct sroce_dev *sdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	/* Before anything that can fail: dealloc_driver undoes these. */
	sroce_mr_table_init(&sdev->mr_table);
	sroce_mw_table_init(&sdev->mw_table);
	sroce_mcast_init(sdev);
	sroce_odp_dev_init(sdev);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);

	sdev->stats = alloc_percpu(struct sroce_stats);
	if (!sdev->stats)
		return -ENOMEM;

	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sdev->ndev = ndev;

	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	sroce_init_attr(sdev);

	ib_set_device_ops(ibdev, &sroce_dev_ops);
	sroce_counters_set_ops(ibdev);
	sroce_mr_set_ops(ibdev);
	sroce_mw_set_ops(ibdev);
	sroce_restrack_set_ops(ibdev);
	ib_mark_name_assigned_by_user(ibdev);
	return ib_device_set_netdev(ibdev, ndev, 1);
}

/**
 * sroce_dev_add - create and register a device on @ndev
 * @name: the RDMA device name the user asked for
 * @ndev: an Ethernet netdev; the caller holds a reference
 *
 * Return: 0, or a negative errno with nothing left behind.
 */
int sroce_dev_add(const char *name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;

	err = sroce_dev_setup(sdev, ndev);
	if (err)
		goto err_dealloc;
	err = sroce_dev_claim(sdev, ndev);
	if (err)
		goto err_dealloc;
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err)
		goto err_dealloc;
	/* The device may be gone already: @sdev is not ours any more. */
	return 0;

err_dealloc:
	pr_warn("cannot create %s on %s: %d\n", name, netdev_name(ndev), err);
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Completion queues.
 *
 * A CQ is a ring the driver produces into: struct ib_uverbs_wc elements
 * for user CQs (polled by librxe in userspace), struct ib_wc for kernel
 * CQs (polled through sroce_poll_cq()).  The data path describes a
 * completion with struct sroce_cqe and sroce_cq_post() writes it in the
 * right format.
 *
 * Locking: cq->lock (irqsave; it may be taken from any context) covers
 * the ring and the notification state.  No callback is made with it
 * held, so a completion handler may poll or re-arm the CQ directly.
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/etherdevice.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

#include "queue.h"

/**
 * struct sroce_cqe - a completion, independent of the CQ's format
 * @wr_id: the work request id (for kernel consumers, the wr_cqe pointer)
 * @qp: the QP the work request was posted to; never NULL
 * @status: IB_WC_*
 * @opcode: the kernel's enum ib_wc_opcode value
 * @vendor_err: vendor error syndrome, or 0
 * @byte_len: bytes transferred (receives)
 * @imm_data: immediate data, valid with IB_WC_WITH_IMM
 * @invalidate_rkey: the rkey invalidated, valid with IB_WC_WITH_INVALIDATE
 * @src_qp: the sender's QP number (UD receives)
 * @wc_flags: kernel IB_WC_* flags (enum ib_wc_flags); translated for
 *	userspace, whose bit values differ
 * @pkey_index: P_Key index (receives)
 * @slid: source LID (0 on RoCE)
 * @sl: service level
 * @dlid_path_bits: destination LID path bits (0 on RoCE)
 * @port_num: the port, 1
 * @network_hdr_type: RDMA_NETWORK_* with IB_WC_WITH_NETWORK_HDR_TYPE;
 *	kernel CQs only
 * @vlan_id: with IB_WC_WITH_VLAN; kernel CQs only
 * @smac: with IB_WC_WITH_SMAC; kernel CQs only
 */
struct sroce_cqe {
	u64 wr_id;
	struct ib_qp *qp;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 vendor_err;
	u32 byte_len;
	__be32 imm_data;
	u32 invalidate_rkey;
	u32 src_qp;
	u32 wc_flags;
	u16 pkey_index;
	u16 slid;
	u8 sl;
	u8 dlid_path_bits;
	u8 port_num;
	u8 network_hdr_type;
	u16 vlan_id;
	u8 smac[ETH_ALEN];
};

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the core's object; must stay first
 * @lock: protects @queue and @notify
 * @queue: the ring; the driver is the producer
 * @notify: 0, or how the CQ is armed: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED
 * @overflowed: a completion was lost and IB_EVENT_CQ_ERR reported, and no
 *	completion has fitted since: the next loss is not reported again
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* see above; irqsave */
	struct sroce_queue queue;
	u8 notify;
	bool overflowed;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited);

/* The verbs, for struct ib_device_ops */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_peek_cq(struct ib_cq *ibcq, int wc_cnt);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

#endif /* SROCE_CQ_H */

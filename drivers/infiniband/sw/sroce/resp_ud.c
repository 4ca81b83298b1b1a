// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder of UD and GSI QPs: a datagram to the receive WQE, with
 * the network header (the GRH, or for RoCEv2 the IP header) in front
 * and where it came from (source MAC, VLAN) in the completion, which is
 * what ib_init_ah_attr_from_wc() and so the CM and MAD layers need.
 *
 * Context: the QP's engine, holding qp->engine_lock.
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "cq.h"
#include "mem.h"
#include "qp.h"
#include "resp_ud.h"
#include "rq.h"
#include "rx.h"

/* The GRH (or RoCEv2 IP header) at the start of a UD receive buffer */
#define SROCE_GRH_LEN	sizeof(union rdma_network_hdr)
static_assert(sizeof(union rdma_network_hdr) == 40);

/*
 * The first 40 bytes of a UD receive buffer: the IPv6 header, or for
 * IPv4 20 zero bytes and the IPv4 header (union rdma_network_hdr, as
 * ib_get_rdma_header_version() and ib_init_ah_attr_from_wc() read it).
 */
static u8 sroce_ud_grh(const struct sk_buff *skb, union rdma_network_hdr *hdr)
{
	const struct iphdr *ip4 = ip_hdr(skb);

	memset(hdr, 0, sizeof(*hdr));
	if (ip4->version == 4) {
		memcpy(&hdr->roce4grh, ip4, sizeof(hdr->roce4grh));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(&hdr->ibgrh, ipv6_hdr(skb), sizeof(hdr->ibgrh));
	return RDMA_NETWORK_IPV6;
}

/* Where the datagram came from, for ib_init_ah_attr_from_wc() (CM). */
static void sroce_ud_link_info(const struct sk_buff *skb,
			       struct sroce_cqe *cqe)
{
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN) {
		ether_addr_copy(cqe->smac, eth_hdr(skb)->h_source);
		cqe->wc_flags |= IB_WC_WITH_SMAC;
	}
	if (SROCE_SKB_CB(skb)->has_vlan) {
		cqe->vlan_id = SROCE_SKB_CB(skb)->vlan_id;
		cqe->wc_flags |= IB_WC_WITH_VLAN;
	}
}

/* Place the GRH and the payload; complete the WQE. */
static int sroce_ud_deliver(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	union rdma_network_hdr grh;
	struct sroce_cqe cqe;
	u8 net_type;
	int err;

	net_type = sroce_ud_grh(skb, &grh);
	memset(&resp->cur, 0, sizeof(resp->cur));
	err = sroce_sgl_copy(sroce_qp_dev(qp), qp->pd,
			     sroce_rq_sgl(&resp->wqe), resp->wqe.num_sge,
			     &resp->cur, &grh, sizeof(grh), SROCE_TO_MR);
	if (!err)
		err = sroce_sgl_copy_skb(sroce_qp_dev(qp), qp->pd,
					 sroce_rq_sgl(&resp->wqe),
					 resp->wqe.num_sge, &resp->cur, skb,
					 pkt->hdr_len, pkt->payload_len,
					 SROCE_TO_MR);
	if (err == -EAGAIN)
		return err;	/* an ODP page: see sroce_ud_rcv() */
	if (err) {
		sroce_rq_complete_err(qp, sroce_mr_wc_status(err, false));
		return -EIO;
	}

	sroce_rq_cqe_init(qp, &cqe, IB_WC_SUCCESS);
	cqe.byte_len = SROCE_GRH_LEN + pkt->payload_len;
	cqe.src_qp = pkt->sqpn;
	cqe.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	cqe.network_hdr_type = net_type;
	if (pkt->flags & SROCE_HDR_IMMDT) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	sroce_ud_link_info(skb, &cqe);
	return sroce_rq_complete(qp, &cqe, pkt->se);
}

/**
 * sroce_ud_rcv - a datagram for a UD or GSI QP
 * @qp: the QP
 * @pkt: its headers, decoded
 * @skb: the packet; stays the caller's
 *
 * A datagram that does not fit, or has the wrong Q_Key, is dropped and
 * counted; one with no receive WQE posted is dropped too (UD has no
 * RNR).  The WQE gets the network header in its first 40 bytes.
 */
void sroce_ud_rcv(struct sroce_qp *qp, const struct sroce_pkt *pkt,
		  struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? SROCE_GSI_QKEY :
						     qp->attr.qkey;
	int err;

	if (!(pkt->flags & SROCE_F_SEND) || !(pkt->flags & SROCE_HDR_DETH) ||
	    pkt->qkey != qkey) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}

	err = sroce_rq_get_wqe(qp);
	if (err == -EAGAIN) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_NO_QP);
		return;
	}
	if (err) {
		sroce_qp_error(qp);
		return;
	}
	/*
	 * Too big for the buffer: drop the datagram and keep the WQE for
	 * the next one, rather than complete it in error (consumers such
	 * as the MAD layer take a receive error for a QP in error).
	 */
	if (qp->resp.wqe.length < SROCE_GRH_LEN ||
	    pkt->payload_len > qp->resp.wqe.length - SROCE_GRH_LEN) {
		sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	/*
	 * A page of the WQE's ODP MR is being faulted in (odp.h): UD has no
	 * RNR, so the datagram is dropped and the WQE kept for the next.
	 */
	err = sroce_ud_deliver(qp, pkt, skb);
	if (err && err != -EAGAIN)	/* -EAGAIN: counted in odp_misses */
		sroce_qp_error(qp);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints on the packet path, the "sroce" trace system (trace.c
 * creates them).  Each is a static key: a tracepoint that is not enabled
 * costs a patched-out jump, and its arguments are not computed.
 *
 *   sroce_tx            a packet leaves (or is looped back)
 *   sroce_rx            a packet passed the peer, ICRC and header checks
 *   sroce_drop          a packet dropped, with the counter it went to
 *   sroce_retransmit    the requester goes back to a PSN, and why
 *   sroce_nak_sent/_rcvd, sroce_rnr_sent/_rcvd
 *                       an AETH that is not an ACK, with its syndrome
 *   sroce_complete      a completion posted to a CQ
 *   sroce_qp_state      a QP changes state (modify_qp, or an error)
 *
 * Documentation/sroce.rst, "Seeing into the device", shows them at work.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/skbuff.h>
#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <sroce/compat.h>
/* rdma_show_wc_status(), which needs the CM's enums above */
#include <trace/misc/rdma.h>

#include "cq.h"
#include "requester.h"
#include "wire.h"

/* The enum values, for the tools that read the format files */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(SROCE_REWIND_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_REWIND_SEQ_NAK);
TRACE_DEFINE_ENUM(SROCE_REWIND_RNR);
TRACE_DEFINE_ENUM(SROCE_REWIND_GAP);
TRACE_DEFINE_ENUM(SROCE_REWIND_READ_LOST);
TRACE_DEFINE_ENUM(SROCE_REWIND_HELD);
TRACE_DEFINE_ENUM(SROCE_REWIND_RESTART);

#define sroce_show_qp_state(x)						\
	__print_symbolic(x,						\
		{ IB_QPS_RESET, "RESET" },				\
		{ IB_QPS_INIT, "INIT" },				\
		{ IB_QPS_RTR, "RTR" },					\
		{ IB_QPS_RTS, "RTS" },					\
		{ IB_QPS_SQD, "SQD" },					\
		{ IB_QPS_SQE, "SQE" },					\
		{ IB_QPS_ERR, "ERR" })

#define sroce_show_rewind(x)						\
	__print_symbolic(x,						\
		{ SROCE_REWIND_TIMEOUT, "timeout" },			\
		{ SROCE_REWIND_SEQ_NAK, "seq_nak" },			\
		{ SROCE_REWIND_RNR, "rnr" },				\
		{ SROCE_REWIND_GAP, "gap" },				\
		{ SROCE_REWIND_READ_LOST, "read_lost" },		\
		{ SROCE_REWIND_HELD, "held" },				\
		{ SROCE_REWIND_RESTART, "restart" })

#ifndef SROCE_TRACE_HELPERS
#define SROCE_TRACE_HELPERS
/* The BTH opcode's name, for a packet whose opcode sroce knows. */
static inline const char *sroce_trace_opname(u8 opcode)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);

	return info ? info->name : "unknown";
}
#endif

/* A packet going out: skb->data is at its BTH, the headers are linear. */
TRACE_EVENT(sroce_tx,
	TP_PROTO(const struct ib_qp *ibqp, const struct sk_buff *skb),
	TP_ARGS(ibqp, skb),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
		__string(op, sroce_trace_opname(skb->data[0]))
	),
	TP_fast_assign(
		const struct sroce_bth *bth = (const void *)skb->data;

		sroce_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->dqpn = be32_to_cpu(bth->qpn) & SROCE_QPN_MASK;
		__entry->psn = be32_to_cpu(bth->apsn) & SROCE_PSN_MASK;
		__entry->len = skb->len;
		__entry->opcode = bth->opcode;
		sroce_assign_str(op, sroce_trace_opname(bth->opcode));
	),
	TP_printk("dev=%s qpn=%u dqpn=%u psn=%u opcode=0x%02x %s len=%u",
		  __get_str(dev), __entry->qpn, __entry->dqpn, __entry->psn,
		  __entry->opcode, __get_str(op), __entry->len)
);

TRACE_EVENT(sroce_rx,
	TP_PROTO(const struct ib_qp *ibqp, const struct sroce_pkt *pkt),
	TP_ARGS(ibqp, pkt),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, payload)
		__field(u8, opcode)
		__string(op, sroce_trace_opname(pkt->opcode))
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->psn = pkt->psn;
		__entry->payload = pkt->payload_len;
		__entry->opcode = pkt->opcode;
		sroce_assign_str(op, sroce_trace_opname(pkt->opcode));
	),
	TP_printk("dev=%s qpn=%u psn=%u opcode=0x%02x %s payload=%u",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->opcode,
		  __get_str(op), __entry->payload)
);

/* @qpn: the QP the packet was for; 0 when too short to say */
TRACE_EVENT(sroce_drop,
	TP_PROTO(const struct ib_device *ibdev, u32 qpn, const char *reason),
	TP_ARGS(ibdev, qpn, reason),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__string(reason, reason)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibdev->dev));
		__entry->qpn = qpn;
		sroce_assign_str(reason, reason);
	),
	TP_printk("dev=%s qpn=%u reason=%s", __get_str(dev), __entry->qpn,
		  __get_str(reason))
);

/* @from: the PSN the requester was at; @psn: the one it sends again */
TRACE_EVENT(sroce_retransmit,
	TP_PROTO(const struct ib_qp *ibqp, u32 from, u32 psn,
		 enum sroce_rewind why),
	TP_ARGS(ibqp, from, psn, why),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, from)
		__field(u32, psn)
		__field(u32, why)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->from = from;
		__entry->psn = psn;
		__entry->why = why;
	),
	TP_printk("dev=%s qpn=%u psn=%u from=%u why=%s", __get_str(dev),
		  __entry->qpn, __entry->psn, __entry->from,
		  sroce_show_rewind(__entry->why))
);

/* An AETH other than an ACK: its syndrome (IBTA 9.7.5.2.2), and PSN. */
DECLARE_EVENT_CLASS(sroce_aeth_class,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
	),
	TP_printk("dev=%s qpn=%u psn=%u syndrome=0x%02x", __get_str(dev),
		  __entry->qpn, __entry->psn, __entry->syndrome)
);

DEFINE_EVENT(sroce_aeth_class, sroce_nak_sent,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome));
DEFINE_EVENT(sroce_aeth_class, sroce_nak_rcvd,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome));
DEFINE_EVENT(sroce_aeth_class, sroce_rnr_sent,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome));
DEFINE_EVENT(sroce_aeth_class, sroce_rnr_rcvd,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome));

TRACE_EVENT(sroce_complete,
	TP_PROTO(const struct ib_cq *ibcq, const struct sroce_cqe *cqe),
	TP_ARGS(ibcq, cqe),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibcq->device->dev))
		__field(u32, cqn)
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(u32, status)
		__field(u32, opcode)
		__field(u32, byte_len)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibcq->device->dev));
		__entry->cqn = ibcq->res.id;
		__entry->qpn = cqe->qp->qp_num;
		__entry->wr_id = cqe->wr_id;
		__entry->status = cqe->status;
		__entry->opcode = cqe->opcode;
		__entry->byte_len = cqe->byte_len;
	),
	TP_printk("dev=%s cqn=%u qpn=%u wr_id=0x%llx status=%s opcode=%u byte_len=%u",
		  __get_str(dev), __entry->cqn, __entry->qpn, __entry->wr_id,
		  rdma_show_wc_status(__entry->status), __entry->opcode,
		  __entry->byte_len)
);

TRACE_EVENT(sroce_qp_state,
	TP_PROTO(const struct ib_qp *ibqp, enum ib_qp_state from,
		 enum ib_qp_state to),
	TP_ARGS(ibqp, from, to),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, from)
		__field(u32, to)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("dev=%s qpn=%u %s -> %s", __get_str(dev), __entry->qpn,
		  sroce_show_qp_state(__entry->from),
		  sroce_show_qp_state(__entry->to))
);

#endif /* SROCE_TRACE_H */

/* trace.c builds with -I$(src), where this file is found as ./trace.h */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>

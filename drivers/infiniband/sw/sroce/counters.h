/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-device packet counters, exported as RDMA hw counters
 * (rdma statistic show link sroce0/1), under sroce's names and, where
 * they mean the same, under rdma_rxe's too (counters.c).  A packet
 * dropped is counted with sroce_drop(), which also tells the sroce:drop
 * tracepoint why.
 */
#ifndef SROCE_COUNTERS_H
#define SROCE_COUNTERS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum sroce_counter {
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_RX_DROP_MALFORMED,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_RX_DROP_ICRC,
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_DROPPED,
	SROCE_CNT_DUPLICATE_REQUEST,	/* responder: a request seen before */
	SROCE_CNT_OUT_OF_SEQUENCE,	/* responder: a gap, NAK sent */
	SROCE_CNT_REORDER_HELD,		/* held past a PSN gap (reorder.c) */
	SROCE_CNT_RNR_NAK_SENT,		/* responder: no receive WQE */
	SROCE_CNT_RNR_NAK_RCVD,		/* requester: the peer had none */
	SROCE_CNT_SEQ_NAK_RCVD,		/* requester: the peer saw a gap */
	SROCE_CNT_RETRANS_TIMEOUT,	/* requester: the ACK timer fired */
	SROCE_CNT_RETRY_EXCEEDED,	/* requester: gave up, timeouts or NAKs */
	SROCE_CNT_RNR_RETRY_EXCEEDED,	/* requester: gave up, RNR NAKs */
	SROCE_CNT_COMP_RETRY,		/* requester: went back, not for RNR */
	SROCE_CNT_COMP_PACKETS,		/* requester: responses taken in */
	SROCE_CNT_RDMA_SENDS,		/* SEND WQEs completed successfully */
	SROCE_CNT_RDMA_RECVS,		/* receive WQEs completed successfully */
	SROCE_CNT_LINK_DOWNED,		/* the port went down */
	SROCE_CNT_TX_NOMEM,		/* a packet waited for memory */
	SROCE_CNT_TX_QUEUE_FULL,	/* the netdev's queue had no room */
	SROCE_CNT_RX_DROP_PEER,		/* RC/UC: not from the QP's peer */
	SROCE_CNT_RX_DROP_QUEUE_FULL,	/* the QP's or device's queue was full */
	SROCE_CNT_RX_DROP_STATE,	/* QP not receiving, or wrong transport */
	SROCE_CNT_RD_ATOMIC_EXCEEDED,	/* responder: over max_dest_rd_atomic */
	SROCE_CNT_SEQ_NAK_IGNORED,	/* requester: a go-back-N was under way */
	SROCE_CNT_REORDER_DROPPED,	/* held past a gap, dropped: the gap was a loss */
	SROCE_CNT_RX_MCAST,		/* copies of multicast packets delivered */
	SROCE_CNT_RX_DROP_MCAST,	/* multicast QPN: no QP of ours in the group */
	SROCE_CNT_RX_RXE_FLUSH_ICRC,	/* a FLUSH with rdma_rxe's ICRC, taken */
	SROCE_CNT_RX_DROP_STALE,	/* RC: would change nothing, not checked */
	SROCE_CNT_ODP_MISSES,		/* the data path found an ODP page absent */
	SROCE_CNT_ODP_FAULTS,		/* ODP faults for the data path, done */
	SROCE_CNT_ODP_PREFETCHES,	/* ODP ranges advise_mr mapped */
	SROCE_CNT_ODP_FAULT_ERRORS,	/* ODP faults that failed (no memory there) */
	SROCE_CNT_ODP_FAULT_DROPS,	/* ODP faults the queue had no room for */
	SROCE_CNT_ODP_INVALIDATIONS,	/* MM invalidations of ODP pages */
	SROCE_CNT_ODP_CHILDREN,		/* implicit ODP children made */
	SROCE_CNT_ODP_CHILD_REFUSED,	/* implicit ODP children over the cap */
	SROCE_CNT_TX_HOME_KICKS,	/* sending handed to the home CPU's work */
	SROCE_CNT_READ_RESTART_LOST,	/* asked again: the answer's start lost */
	SROCE_NUM_COUNTERS
};

struct sroce_stats {
	u64 cnt[SROCE_NUM_COUNTERS];
};

struct ib_device;
struct sroce_dev;
void sroce_counters_set_ops(struct ib_device *ibdev);
void sroce_drop(struct sroce_dev *sdev, u32 qpn, enum sroce_counter why);

#endif /* SROCE_COUNTERS_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-device counters.  Each CPU bumps its own copy without locking; the
 * RDMA core's statistics interface sums them when asked.
 *
 * The port shows each counter under sroce's name and, after them, the
 * names rdma_rxe users' scripts read, each the sum of one or more of
 * sroce's (SROCE_STAT_*): an event is counted once, and shown under
 * every name that means it.  Where rdma_rxe's meaning differs a little,
 * Documentation/sroce.rst says how.
 */
#include <linux/bits.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "trace.h"

/* The names that add up counters, after the counters themselves */
enum sroce_stat_sum {
	SROCE_STAT_RETRY_EXCEEDED = SROCE_NUM_COUNTERS,
	SROCE_STAT_SENT_PKTS,
	SROCE_STAT_RCVD_PKTS,
	SROCE_STAT_OUT_OF_SEQ_REQUEST,
	SROCE_STAT_RCVD_RNR_ERR,
	SROCE_STAT_SEND_RNR_ERR,
	SROCE_STAT_RCVD_SEQ_ERR,
	SROCE_STAT_SEND_ERR,
	SROCE_NUM_STATS
};

/* Which counters each of them adds up: bit i is enum sroce_counter i. */
static_assert(SROCE_NUM_COUNTERS <= 64);
#define SROCE_SUM(c)	BIT_ULL(SROCE_CNT_##c)
static const u64 sroce_stat_sums[SROCE_NUM_STATS] = {
	[SROCE_STAT_RETRY_EXCEEDED] = SROCE_SUM(RETRY_EXCEEDED) |
				      SROCE_SUM(RNR_RETRY_EXCEEDED),
	[SROCE_STAT_SENT_PKTS] = SROCE_SUM(TX_PACKETS),
	[SROCE_STAT_RCVD_PKTS] = SROCE_SUM(RX_PACKETS),
	[SROCE_STAT_OUT_OF_SEQ_REQUEST] = SROCE_SUM(OUT_OF_SEQUENCE),
	[SROCE_STAT_RCVD_RNR_ERR] = SROCE_SUM(RNR_NAK_RCVD),
	[SROCE_STAT_SEND_RNR_ERR] = SROCE_SUM(RNR_NAK_SENT),
	[SROCE_STAT_RCVD_SEQ_ERR] = SROCE_SUM(SEQ_NAK_RCVD),
	[SROCE_STAT_SEND_ERR] = SROCE_SUM(TX_DROPPED) | SROCE_SUM(TX_QUEUE_FULL),
};

static const struct rdma_stat_desc sroce_counter_descs[] = {
	[SROCE_CNT_RX_PACKETS].name = "rx_packets",
	[SROCE_CNT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[SROCE_CNT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SROCE_CNT_RX_DROP_ICRC].name = "rx_drop_icrc",
	[SROCE_CNT_TX_PACKETS].name = "tx_packets",
	[SROCE_CNT_TX_DROPPED].name = "tx_dropped",
	[SROCE_CNT_DUPLICATE_REQUEST].name = "duplicate_request",
	[SROCE_CNT_OUT_OF_SEQUENCE].name = "out_of_sequence",
	[SROCE_CNT_REORDER_HELD].name = "rx_reorder_held",
	[SROCE_CNT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[SROCE_CNT_RNR_NAK_RCVD].name = "rnr_nak_rcvd",
	[SROCE_CNT_SEQ_NAK_RCVD].name = "seq_nak_rcvd",
	[SROCE_CNT_RETRANS_TIMEOUT].name = "retrans_timeout",
	/* rdma_rxe's names: sroce had nothing that meant the same */
	[SROCE_CNT_RETRY_EXCEEDED].name = "retry_exceeded_err",
	[SROCE_CNT_RNR_RETRY_EXCEEDED].name = "retry_rnr_exceeded_err",
	[SROCE_CNT_COMP_RETRY].name = "completer_retry_err",
	[SROCE_CNT_COMP_PACKETS].name = "ack_deferred",
	[SROCE_CNT_RDMA_SENDS].name = "rdma_sends",
	[SROCE_CNT_RDMA_RECVS].name = "rdma_recvs",
	[SROCE_CNT_LINK_DOWNED].name = "link_downed",
	/* sroce's own again */
	[SROCE_CNT_TX_NOMEM].name = "tx_nomem",
	[SROCE_CNT_TX_QUEUE_FULL].name = "tx_queue_full",
	[SROCE_CNT_RX_DROP_PEER].name = "rx_drop_peer",
	[SROCE_CNT_RX_DROP_QUEUE_FULL].name = "rx_drop_queue_full",
	[SROCE_CNT_RX_DROP_STATE].name = "rx_drop_state",
	[SROCE_CNT_RD_ATOMIC_EXCEEDED].name = "rd_atomic_exceeded",
	[SROCE_CNT_SEQ_NAK_IGNORED].name = "seq_nak_ignored",
	[SROCE_CNT_REORDER_DROPPED].name = "rx_reorder_dropped",
	[SROCE_CNT_RX_MCAST].name = "rx_mcast",
	[SROCE_CNT_RX_DROP_MCAST].name = "rx_drop_mcast",
	[SROCE_CNT_RX_RXE_FLUSH_ICRC].name = "rx_rxe_flush_icrc",
	[SROCE_CNT_RX_DROP_STALE].name = "rx_drop_stale",
	[SROCE_CNT_ODP_MISSES].name = "odp_misses",
	[SROCE_CNT_ODP_FAULTS].name = "odp_faults",
	[SROCE_CNT_ODP_PREFETCHES].name = "odp_prefetches",
	[SROCE_CNT_ODP_FAULT_ERRORS].name = "odp_fault_errors",
	[SROCE_CNT_ODP_FAULT_DROPS].name = "odp_fault_drops",
	[SROCE_CNT_ODP_INVALIDATIONS].name = "odp_invalidations",
	[SROCE_CNT_ODP_CHILDREN].name = "odp_implicit_children",
	[SROCE_CNT_ODP_CHILD_REFUSED].name = "odp_implicit_refused",
	[SROCE_CNT_TX_HOME_KICKS].name = "tx_home_kicks",
	[SROCE_CNT_READ_RESTART_LOST].name = "read_restart_lost",
	/* the sums: rdma_rxe's names, and one of sroce's */
	[SROCE_STAT_RETRY_EXCEEDED].name = "retry_exceeded",
	[SROCE_STAT_SENT_PKTS].name = "sent_pkts",
	[SROCE_STAT_RCVD_PKTS].name = "rcvd_pkts",
	[SROCE_STAT_OUT_OF_SEQ_REQUEST].name = "out_of_seq_request",
	[SROCE_STAT_RCVD_RNR_ERR].name = "rcvd_rnr_err",
	[SROCE_STAT_SEND_RNR_ERR].name = "send_rnr_err",
	[SROCE_STAT_RCVD_SEQ_ERR].name = "rcvd_seq_err",
	[SROCE_STAT_SEND_ERR].name = "send_err",
};

static_assert(ARRAY_SIZE(sroce_counter_descs) == SROCE_NUM_STATS);

static struct rdma_hw_stats *sroce_alloc_port_stats(struct ib_device *ibdev,
						    u32 port_num)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  SROCE_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* The sums, from the counters already in @value */
static void sroce_stats_sum(u64 *value)
{
	int i, c;

	for (i = SROCE_NUM_COUNTERS; i < SROCE_NUM_STATS; i++) {
		value[i] = 0;
		for (c = 0; c < SROCE_NUM_COUNTERS; c++)
			if (sroce_stat_sums[i] & BIT_ULL(c))
				value[i] += value[c];
	}
}

static int sroce_get_port_stats(struct ib_device *ibdev,
				struct rdma_hw_stats *stats, u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int cpu, i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct sroce_stats *s = per_cpu_ptr(sdev->stats, cpu);

		for (i = 0; i < SROCE_NUM_COUNTERS; i++)
			stats->value[i] += READ_ONCE(s->cnt[i]);
	}
	sroce_stats_sum(stats->value);
	return SROCE_NUM_STATS;
}

static const struct ib_device_ops sroce_counter_ops = {
	.alloc_hw_port_stats = sroce_alloc_port_stats,
	.get_hw_stats = sroce_get_port_stats,
};

void sroce_counters_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_counter_ops);
}

/**
 * sroce_drop - count a packet dropped, and tell the sroce_drop tracepoint
 * @sdev: the device
 * @qpn: the QP it was for, or that sent it; 0 if it is too short to say
 * @why: the counter, whose name the tracepoint gives as the reason
 *
 * Context: any.
 */
void sroce_drop(struct sroce_dev *sdev, u32 qpn, enum sroce_counter why)
{
	sroce_count(sdev, why);
	trace_sroce_drop(&sdev->ibdev, qpn, sroce_counter_descs[why].name);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-device counters.  Each CPU bumps its own copy without locking; the
 * RDMA core's statistics interface sums them when asked.
 */
#include <rdma/ib_verbs.h>

#include "sroce.h"

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
	[SROCE_CNT_RETRY_EXCEEDED].name = "retry_exceeded",
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
};

static_assert(ARRAY_SIZE(sroce_counter_descs) == SROCE_NUM_COUNTERS);

static struct rdma_hw_stats *sroce_alloc_port_stats(struct ib_device *ibdev,
						    u32 port_num)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
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
	return SROCE_NUM_COUNTERS;
}

static const struct ib_device_ops sroce_counter_ops = {
	.alloc_hw_port_stats = sroce_alloc_port_stats,
	.get_hw_stats = sroce_get_port_stats,
};

void sroce_counters_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_counter_ops);
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 49-neigh: RC WRITE, READ and SEND on two QPs while no ARP request is
# answered and each side's neighbour entry for the other is to be probed
# (and, its probes unanswered, failed) within ~1 s of going unconfirmed
# (46-soak.sh, SROCE_SOAK_ARP_OFF), for 2 s or more.  A QP whose peer
# answers confirms the entry (tx.c, sroce_tx_peer_alive()), as TCP does
# on each ACK of new data: every round completes, every byte checked, no
# QP runs out of retries.
#
# Before the QPs confirmed their peers, the entries went STALE every
# ~30 s of traffic and were probed; on the soak's lossy wire a probe
# exchange sometimes failed, every packet was then dropped while the
# entry resolved again, and a QP ended in IB_WC_RETRY_EXC_ERR (about one
# round a GiB on Debian 6.1).  Here that happens within a second.
export SROCE_SOAK_ARP_OFF=1
export SROCE_SOAK_NETEM=${SROCE_SOAK_NETEM:-none}
export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-256M}
export SROCE_SOAK_QPS=${SROCE_SOAK_QPS:-2}
export SROCE_SOAK_WAIT=${SROCE_SOAK_WAIT:-20}
exec /bin/bash "$(dirname "$0")/../soak/46-soak.sh"

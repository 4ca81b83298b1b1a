#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 18-forged: forged RoCEv2 packets from an ordinary UDP socket, sent by
# user nobody, against live QPs (tools/testing/forged.py owns the QPs,
# tools/testing/roce.py builds and sends the packets).  One namespace, two
# devices: sroce0 on veth0 (10.0.0.1, and 10.0.0.3 as a third local
# address), sroce1 on veth1 (10.0.0.2); traffic between them goes through
# lo, so a local socket can claim to be either end.
#   icrc       roce.py's ICRC is right (rx_drop_icrc stays), a wrong one
#              is counted (IPv4 and IPv6)
#   nak        (a) a NAK from a wrong source at the right QPN and PSN does
#              not kill the QP (rx_drop_peer)
#   write      (b) a WRITE from a wrong source at the right PSN with a live
#              MR's rkey does not land (rx_drop_peer)
#   loopback   (c) both, to a loopback QP from the device's own address
#   flood      (d) 200k packets to QP1, an RC QP and a QP in RESET:
#              rx_drop_queue_full/rx_drop_state, memory bounded, the live
#              connection works
#   rd-atomic  (e) READs beyond max_dest_rd_atomic from the spoofed peer:
#              NAK, the QP goes to ERR (rd_atomic_exceeded)
#   seq-nak    (e) PSN-sequence NAKs from the spoofed peer use up retries:
#              with retry_cnt 0 the SEND ends with IB_WC_RETRY_EXC_ERR at
#              once; with retry_cnt 3 one NAK counts, the rest are ignored
#              while its go-back-N is under way (seq_nak_ignored)
#   pmem       (f) ATOMIC WRITE and FLUSH from the spoofed peer: an ATOMIC
#              WRITE lands, its duplicate is not carried out again, one of
#              4 bytes is dropped; a FLUSH of a flush-capable MR (6.12)
#              takes one PSN; a reserved placement type fails the QP
#
# SROCE_FORGED_CASES: the cases to run (default: all);
# SROCE_FORGED_FLOOD: packets in the flood (default 200000).

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../topo_local.sh
. "$SROCE_TESTING/topo_local.sh"
require_sroce

shopt -s lastpipe	# relay() (lib.sh) counts in this shell

CASES=${SROCE_FORGED_CASES:-icrc nak write loopback flood rd-atomic seq-nak pmem}
FLOOD=${SROCE_FORGED_FLOOD:-200000}


if topo_local >topo.log 2>&1; then
	ok "two devices in one namespace (topo_local)"
else
	not_ok "two devices in one namespace (topo_local)" "$(cat topo.log)"
	topo_local_clean
	tap_done
fi
check "user nobody can run roce.py" setpriv --reuid=nobody --regid=nogroup \
	--clear-groups -- "$PYTHON" "$SROCE_TESTING/roce.py" selftest

# shellcheck disable=SC2086 # CASES is a list
relay run_ns ns0 timeout 240 "$PYTHON" "$SROCE_TESTING/forged.py" \
	--gid0 "$G0" --gid1 "$G1" --flood "$FLOOD" $CASES

diag "sroce0: $(rdma statistic show link sroce0/1 2>&1)" \
	"sroce1: $(rdma statistic show link sroce1/1 2>&1)"
check "delete sroce0" run_ns ns0 rdma link delete sroce0
check "delete sroce1" run_ns ns0 rdma link delete sroce1
topo_clean
check "rmmod sroce" sroce_unload
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The matrix over a veth wire: the server's device on veth0, the client's
# on veth1, both in the initial namespace (where rdma_rxe works), with
# policy routing sending the traffic over the veth.  The last assertion
# checks that it did.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

tx_mb() { echo $(($(cat /sys/class/net/veth1/statistics/tx_bytes) / 1000000)); }

bench_load
bench_topo veth
before=$(tx_mb)
bench_matrix veth
sent=$(($(tx_mb) - before))
bench_note veth "the client's veth1 sent $sent MB"
if [ "$sent" -ge 1 ]; then
	ok "the traffic crossed the veth (veth1 sent $sent MB)"
else
	not_ok "the traffic crossed the veth" "veth1 sent $sent MB"
fi
tap_done

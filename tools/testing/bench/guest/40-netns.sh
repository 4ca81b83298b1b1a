#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The matrix between two network namespaces joined by a veth, sroce only:
# rdma_rxe's UDP socket lives in the initial namespace, so it cannot run
# here (bench.sh does not ask for this test on rdma_rxe).
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

if [ "$BENCH_DRIVER" != sroce ]; then
	echo "1..0 # SKIP rdma_rxe works only in the initial network namespace"
	exit 0
fi
bench_load
bench_topo netns
bench_matrix netns
tap_done

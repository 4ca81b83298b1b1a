#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 42-odp: on-demand paging MRs (IBV_ACCESS_ON_DEMAND), with
# tools/testing/mr/sroce_mr odp, on sroce0 in ns0 (loopback RC pairs over
# the IPv4 GID); each of the program's assertions becomes one here.
#
# The ODP caps of ibv_query_device_ex; implicit ODP refused (EOPNOTSUPP);
# WRITE, READ, SEND and both atomics into and out of ODP memory the MR
# never mapped, as target and as local SGE, so that the responder, the
# requester and the completer each fault on the data path (odp_misses,
# odp_faults and rnr_nak_sent move), every byte checked;
# madvise(MADV_DONTNEED) and munmap+mmap at the same address under the
# MR (the new pages are seen); accesses after munmap fail with a remote
# access or local protection error and the QP works again; advise_mr
# prefetch (then no data path fault) and its errnos; fork with COW.
# Then rdma res shows an ODP MR with its faults, and the port counters
# carry the odp_* names.
#
# The binary is built on the host: make -C tools/testing/mr

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

BIN=$SROCE_REPO/tools/testing/mr/sroce_mr
if [ ! -x "$BIN" ]; then
	not_ok "sroce_mr is built" "no $BIN" \
		"build it on the host first: make -C tools/testing/mr"
	tap_done
fi

topo_veth
check "rdma link add sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
if poll_until 10 rdma_gid_index sroce0 1 10.0.0.1; then
	gid=$(rdma_gid_index sroce0 1 10.0.0.1)
	tap_relay odp run_ns ns0 timeout 200 "$BIN" odp -d sroce0 -g "$gid"
	for c in odp_misses odp_faults odp_prefetches odp_fault_errors \
		odp_fault_drops odp_invalidations; do
		check_output "rdma statistic: port counter $c" "$c [0-9]+" \
			run_ns ns0 rdma statistic show link sroce0/1
	done
else
	not_ok "sroce0 has the GID of 10.0.0.1"
fi
check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
tap_done

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
# carry the odp_* names; pyverbs sees the caps and registers an ODP MR;
# perftest --odp (ib_write_bw, ib_read_bw, ib_send_bw) runs between
# sroce0 in ns0 and sroce1 in ns1.
#
# The binary is built on the host: make -C tools/testing/mr

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

require_tester mr sroce_mr

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
	tap_relay pyverbs run_ns ns0 timeout 60 /usr/bin/python3 \
		"$SROCE_REPO/tools/testing/mr/odp_pyverbs.py" sroce0
else
	not_ok "sroce0 has the GID of 10.0.0.1"
fi

# perftest --odp: server on sroce0 in ns0, client on sroce1 in ns1.
odp_perf() {
	local name=$1 prog=$2 port=$3 rc=0
	shift 3
	run_ns ns0 timeout 120 "$prog" --odp -d sroce0 -x "$s4" -p "$port" \
		-F "$@" >"server-$port.log" 2>&1 &
	server=$!
	poll_until 20 listening "$port" || true
	check_output "perftest --odp: $name" \
		'^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+([0-9.]+|inf)' \
		run_ns ns1 timeout 120 "$prog" --odp -d sroce1 -x "$c4" \
		-p "$port" -F "$@" 10.0.0.1 || rc=1
	wait "$server" || diag "server of '$name':" "$(tail -n 5 "server-$port.log")"
	return $rc
}
listening() { ip netns exec ns0 ss -ltn | grep -q ":$1 "; }
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
if poll_until 10 rdma_gid_index sroce1 1 10.0.0.2; then
	s4=$(rdma_gid_index sroce0 1 10.0.0.1) c4=$(rdma_gid_index sroce1 1 10.0.0.2)
	odp_perf "ib_write_bw RC 64 KiB" ib_write_bw 19101 -s 65536 -n 200
	odp_perf "ib_read_bw RC 64 KiB" ib_read_bw 19102 -s 65536 -n 200
	odp_perf "ib_send_bw RC 64 KiB" ib_send_bw 19103 -s 65536 -n 200
	run_ns ns1 rdma link delete sroce1
else
	not_ok "sroce1 has the GID of 10.0.0.2"
fi
check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
tap_done

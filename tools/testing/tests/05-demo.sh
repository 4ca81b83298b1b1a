#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What "make run" shows: sroce0 created on a veth in a namespace, what
# rdma link and ibv_devinfo -v say about it, and a verbs ping-pong from
# ns1 (sroce1 on veth1) to ns0 (sroce0 on veth0).  The outputs are
# printed as TAP diagnostics ("# ...").
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth

# shellcheck disable=SC2317
cleanup() { kill "$server" 2>/dev/null; topo_clean; }
trap cleanup EXIT

check "rdma link add sroce0 type sroce netdev veth0 (in ns0)" \
	run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "rdma link add sroce1 type sroce netdev veth1 (in ns1)" \
	run_ns ns1 rdma link add sroce1 type sroce netdev veth1
diag "\$ ip netns exec ns0 rdma link" "$(run_ns ns0 rdma link)"
wait_for "the GID of 10.0.0.1 is there" 10 rdma_gid_index sroce0 1 10.0.0.1
check_output "ibv_devinfo -v -d sroce0" 'hca_id:[[:space:]]+sroce0' \
	ibv_devinfo -v -d sroce0
diag "\$ ibv_devinfo -v -d sroce0" "$(grep -v 'GID\[ *[0-9]*\]:[[:space:]]*$' <<<"$CHECK_OUTPUT")"

g0=$(rdma_gid_index sroce0 1 10.0.0.1)
g1=$(rdma_gid_index sroce1 1 10.0.0.2)
run_ns ns0 timeout 60 ibv_rc_pingpong -d sroce0 -g "${g0:-1}" -n 100 -s 4096 >server.log 2>&1 &
server=$!
poll_until 10 bash -c "ip netns exec ns0 ss -ltn | grep -q ':18515 '"
check_output "ibv_rc_pingpong sroce1 -> sroce0, 100 x 4 KiB" \
	'bytes in [0-9.]+ seconds' \
	run_ns ns1 timeout 60 ibv_rc_pingpong -d sroce1 -g "${g1:-1}" -n 100 -s 4096 10.0.0.1
diag "\$ ibv_rc_pingpong -d sroce1 -g $g1 -n 100 -s 4096 10.0.0.1" "$CHECK_OUTPUT"
wait "$server"
diag "server:" "$(cat server.log)"
tap_done

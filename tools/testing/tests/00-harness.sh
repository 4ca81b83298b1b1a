#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 00-harness: does the test VM work?  Runs the in-kernel soft-RoCE driver,
# rdma_rxe (not sroce), through the steps sroce's tests rely on: load a
# module, add an RDMA link on a veth, see the device with the verbs tools,
# and pass traffic with ibv_rc_pingpong.  When this fails, the harness or
# the machine is broken, not sroce.  It is also the rxe baseline to compare
# sroce with.
#
# rdma_rxe on 6.1 and 6.12 only works in the initial network namespace, so
# everything here is in the root namespace, on its own veth pair
# (vethA 10.0.0.1/24 <-> vethB), with server and client on the same rxe0
# (rxe loops back packets addressed to its own GID).
#
# Set SROCE_SKIP_HARNESS_SELFTEST=1 to skip it.

# Its functions are called through trap, poll_until and wait_for:
# shellcheck disable=SC2317
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

[ "${SROCE_SKIP_HARNESS_SELFTEST:-0}" != 1 ] ||
	skip_test "harness self-test with rdma_rxe" "SROCE_SKIP_HARNESS_SELFTEST=1"
kernel_has rdma_rxe ||
	skip_test "harness self-test with rdma_rxe" "this kernel has no rdma_rxe (CONFIG_RDMA_RXE)"

cleanup() {
	rdma link delete rxe0 2>/dev/null
	ip link del vethA 2>/dev/null
	rmmod rdma_rxe 2>/dev/null
	return 0
}
trap cleanup EXIT

port_active() {
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)" = "4: ACTIVE" ]
}

server_listening() {
	ss -ltn | grep -q ':18515 '
}

check "create veth pair vethA/vethB" \
	ip link add vethA type veth peer name vethB || bail_out "no veth"
ip addr add 10.0.0.1/24 dev vethA
ip link set vethA up
ip link set vethB up

check "modprobe rdma_rxe" modprobe rdma_rxe || bail_out "no rdma_rxe"
check "rdma link add rxe0 type rxe netdev vethA" \
	rdma link add rxe0 type rxe netdev vethA || bail_out "no rxe0"
check_output "ibv_devices lists rxe0" '^[[:space:]]*rxe0[[:space:]]' ibv_devices
wait_for "rxe0 port 1 becomes ACTIVE" 30 port_active
check_output "ibv_devinfo: port state PORT_ACTIVE" 'state:[[:space:]]+PORT_ACTIVE' \
	ibv_devinfo -d rxe0
check_output "ibv_devinfo: link_layer Ethernet" 'link_layer:[[:space:]]+Ethernet' \
	ibv_devinfo -d rxe0

# The RoCE v2 GID made from 10.0.0.1 can take a moment to appear.
gid=""
if poll_until 10 rdma_gid_index rxe0 1 10.0.0.1; then
	gid=$(rdma_gid_index rxe0 1 10.0.0.1)
	ok "RoCE v2 GID of 10.0.0.1 is index $gid"
else
	not_ok "RoCE v2 GID of 10.0.0.1 found" \
		"$(head -n 8 /sys/class/infiniband/rxe0/ports/1/gids/{0..7} 2>&1)"
fi

if [ -n "$gid" ]; then
	# 100 round trips of 4 KiB: enough to see traffic, short under TCG.
	timeout 90 ibv_rc_pingpong -d rxe0 -g "$gid" -n 100 >server.log 2>&1 &
	server=$!
	wait_for "ibv_rc_pingpong server listens" 20 server_listening
	check_output "ibv_rc_pingpong client reports bandwidth" \
		'bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec' \
		timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 100 10.0.0.1
	srv_rc=0
	wait "$server" || srv_rc=$?
	check_output "ibv_rc_pingpong server reports bandwidth (exit $srv_rc)" \
		'bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec' cat server.log
else
	skip "ibv_rc_pingpong" "no GID to use"
fi

check "rdma link delete rxe0" rdma link delete rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
check "delete veth pair" ip link del vethA
tap_done

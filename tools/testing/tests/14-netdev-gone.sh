#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting a netdev, or its whole namespace, removes its sroce device.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth

check "create sroce0 on veth0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "create sroce1 on veth1" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
check "delete the veth pair" ip -n ns0 link del veth0
wait_for "sroce0 goes away" 20 bash -c '! test -e /sys/class/infiniband/sroce0'
wait_for "sroce1 goes away with the peer" 20 bash -c '! test -e /sys/class/infiniband/sroce1'

topo_veth
check "create sroce0 again" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "delete namespace ns0" ip netns del ns0
wait_for "sroce0 goes with its namespace" 30 bash -c '! test -e /sys/class/infiniband/sroce0'
# A new namespace gets its own UDP port 4791.
check "namespaces still come and go" bash -c 'ip netns add nsx && ip netns del nsx'

topo_clean
check "unload" sroce_unload
tap_done

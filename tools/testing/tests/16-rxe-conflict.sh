#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sroce and rdma_rxe share the driver id and UDP port 4791: whichever
# loads second must fail cleanly, leaving the first one working.
. "$(dirname "$0")/../lib.sh"
require_sroce
kernel_has rdma_rxe ||
	skip_test "sroce and rdma_rxe exclude each other" "this kernel has no rdma_rxe (CONFIG_RDMA_RXE)"

check "load sroce" sroce_load
check_fail "rdma_rxe refuses to load beside sroce" modprobe rdma_rxe
check_fail "  and is not loaded" bash -c 'lsmod | grep -q "^rdma_rxe "'
topo_veth
check "sroce still creates devices" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "and deletes them" run_ns ns0 rdma link delete sroce0
check "unload sroce" sroce_unload

check "load rdma_rxe" modprobe rdma_rxe
check_fail "sroce refuses to load beside rdma_rxe" sroce_load
check_output "  with a message naming the port" 'sroce: UDP port 4791 is already in use; is rdma_rxe loaded' dmesg
check_fail "  and is not loaded" bash -c 'lsmod | grep -q "^sroce "'
check_fail "  and left no link type behind" bash -c \
	'ip link add rxv0 type veth peer name rxv1 && rdma link add sroce0 type sroce netdev rxv0; rc=$?; ip link del rxv0; exit $((rc == 0 ? 0 : 1))'
check "unload rdma_rxe" rmmod rdma_rxe
check "sroce loads again" sroce_load
check "unload" sroce_unload
topo_clean
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# rdma_cm through sroce: rping with its data check (-V), ucmatose (RC
# connections, sends) and udaddy (UD), over IPv4 and IPv6, server in ns0
# (sroce0), client in ns1 (sroce1).  rdma_cm runs over the GSI QP (QP1)
# and ib_cm MADs, so this is also their test.
. "$(dirname "$0")/../lib.sh"
require_sroce

# shellcheck disable=SC2317
cleanup() { [ -n "${server:-}" ] && kill "$server" 2>/dev/null; topo_clean; }
trap cleanup EXIT

topo_veth
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
poll_until 10 rdma_gid_index sroce0 1 fd00::1
poll_until 10 rdma_gid_index sroce1 1 fd00::2

cm_pair "rping IPv4 100 x 64 B, data checked" \
	rping -s -a 10.0.0.1 -C 100 -V -- rping -c -a 10.0.0.1 -C 100 -V
cm_pair "rping IPv4 20 x 60000 B, data checked" \
	rping -s -a 10.0.0.1 -C 20 -S 60000 -V -- rping -c -a 10.0.0.1 -C 20 -S 60000 -V
cm_pair "rping IPv6 50 x 1 KiB, data checked" \
	rping -s -a fd00::1 -C 50 -S 1024 -V -- rping -c -a fd00::1 -C 50 -S 1024 -V
cm_pair "ucmatose IPv4, 4 connections" \
	ucmatose -b 10.0.0.1 -c 4 -C 10 -- ucmatose -s 10.0.0.1 -c 4 -C 10
cm_pair "ucmatose IPv6" \
	ucmatose -b fd00::1 -f ipv6 -C 10 -- ucmatose -s fd00::1 -f ipv6 -C 10
cm_pair "udaddy IPv4" \
	udaddy -b 10.0.0.1 -C 10 -- udaddy -s 10.0.0.1 -C 10
cm_pair "udaddy IPv6" \
	udaddy -b fd00::1 -f ipv6 -C 10 -- udaddy -s fd00::1 -f ipv6 -C 10
tap_done

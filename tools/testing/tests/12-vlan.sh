#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VLANs, both ways the RDMA core supports them:
#  - a device on the lower netdev carries the VLAN's addresses as GIDs of
#    their own (gid_attrs/ndevs says veth0.100): the usual RoCE set-up,
#    the GID index picks the VLAN;
#  - a device can also sit on the VLAN netdev itself; the core then gives
#    it only the default (link-local) GID, its addresses belonging to the
#    lower netdev's table.
# Either device goes away with its netdev.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth
modprobe 8021q 2>/dev/null

check "add VLAN 100 on veth0" ip -n ns0 link add link veth0 name veth0.100 type vlan id 100
ip -n ns0 addr add 10.1.0.1/24 dev veth0.100
ip -n ns0 addr add fd01::1/64 dev veth0.100 nodad
ip -n ns0 link set veth0.100 up

check "rdma link add on the lower netdev" run_ns ns0 rdma link add sroce1 type sroce netdev veth0
wait_for "RoCE v2 GID for the VLAN's IPv4 address" 10 rdma_gid_index sroce1 1 10.1.0.1
wait_for "RoCE v2 GID for the VLAN's IPv6 address" 10 rdma_gid_index sroce1 1 fd01::1
i=$(rdma_gid_index sroce1 1 10.1.0.1)
check_output "  and that GID belongs to the VLAN netdev" '^veth0\.100$' \
	cat "/sys/class/infiniband/sroce1/ports/1/gid_attrs/ndevs/${i:-0}"

check "rdma link add on the VLAN netdev" run_ns ns0 rdma link add sroce0 type sroce netdev veth0.100
check_output "  its port is active" 'state ACTIVE.*netdev veth0.100' run_ns ns0 rdma link show sroce0/1
check_output "  its default GID is on the VLAN" '^veth0\.100$' \
	cat /sys/class/infiniband/sroce0/ports/1/gid_attrs/ndevs/0
check "delete the VLAN" ip -n ns0 link del veth0.100
wait_for "the VLAN's device goes with it" 20 bash -c '! test -e /sys/class/infiniband/sroce0'
vlan_gid_gone() { ! rdma_gid_index sroce1 1 10.1.0.1 >/dev/null; }
wait_for "the VLAN's GIDs leave the lower device" 10 vlan_gid_gone
check "delete the lower's device" run_ns ns0 rdma link delete sroce1

topo_clean
check "unload" sroce_unload
tap_done

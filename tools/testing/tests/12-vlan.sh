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
klog_mark=$(dmesg | wc -l)
check "delete the VLAN" ip -n ns0 link del veth0.100
wait_for "the VLAN's device goes with it" 20 bash -c '! test -e /sys/class/infiniband/sroce0'
# The core queries the port as the device goes: the port is down then,
# not an error ("ib_query_port failed (-19)").
check "  its port queries did not fail as it went" \
	bash -c "! dmesg | tail -n +$((klog_mark + 1)) | grep 'sroce0: ib_query_port failed'"
vlan_gid_gone() { ! rdma_gid_index sroce1 1 10.1.0.1 >/dev/null; }
wait_for "the VLAN's GIDs leave the lower device" 10 vlan_gid_gone
check "delete the lower's device" run_ns ns0 rdma link delete sroce1

# Traffic over a VLAN: VLAN 100 on both ends, a device on each lower
# netdev, the VLAN's GIDs picked by index.  The frames leave through the
# VLAN netdev (tagged; its egress map gives the 802.1p priority of the
# TOS, here 0 -> 5) and come in on the far VLAN netdev, which is not the
# device's own: the receive path finds the device under it.
vlan_up() {
	ip -n "$1" link add link "$2" name "$2.100" type vlan id 100 \
		egress-qos-map 0:5 &&
		ip -n "$1" addr add "$3/24" dev "$2.100" &&
		ip -n "$1" addr add "$4/64" dev "$2.100" nodad &&
		ip -n "$1" link set "$2.100" up
}
port=18650
# pingpong NAME ADDRFAMILY PROG ARGS...: server sroce0 in ns0, client
# sroce1 in ns1, both on their VLAN GID of that family.
pingpong() {
	local name=$1 fam=$2 prog=$3 sg cg server
	shift 3
	if [ "$fam" = 4 ]; then
		sg=$(rdma_gid_index sroce0 1 10.1.0.1) cg=$(rdma_gid_index sroce1 1 10.1.0.2)
	else
		sg=$(rdma_gid_index sroce0 1 fd01::1) cg=$(rdma_gid_index sroce1 1 fd01::2)
	fi
	port=$((port + 1))
	run_ns ns0 timeout 60 "$prog" -d sroce0 -g "$sg" -p "$port" -c "$@" \
		>server.log 2>&1 &
	server=$!
	poll_until 15 tcp_listening ns0 "$port"
	check_output "$name" 'bytes in [0-9.]+ seconds' \
		run_ns ns1 timeout 60 "$prog" -d sroce1 -g "$cg" -p "$port" -c "$@" 10.0.0.1
	wait "$server" || diag "server of '$name' failed:" "$(cat server.log)"
}

topo_veth
check "VLAN 100 on both ends" \
	bash -c "$(declare -f vlan_up); vlan_up ns0 veth0 10.1.0.1 fd01::1 &&
		vlan_up ns1 veth1 10.1.0.2 fd01::2"
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
vlan_gids() {
	rdma_gid_index sroce0 1 10.1.0.1 && rdma_gid_index sroce1 1 10.1.0.2 &&
		rdma_gid_index sroce0 1 fd01::1 && rdma_gid_index sroce1 1 fd01::2
}
wait_for "the VLANs' GIDs on sroce0 and sroce1" 30 vlan_gids
run_ns ns1 timeout 60 tcpdump -i veth1 -e -nn -c 4 -l 'vlan 100 and udp port 4791' \
	>tcpdump.log 2>&1 &
dump=$!
sleep 1
for fam in 4 6; do
	pingpong "RC over the VLAN's IPv$fam GID, 4 KiB, data checked" $fam \
		ibv_rc_pingpong -s 4096 -n 50
	pingpong "UC over the VLAN's IPv$fam GID" $fam ibv_uc_pingpong -s 2000 -n 50
	pingpong "UD over the VLAN's IPv$fam GID" $fam ibv_ud_pingpong -s 512 -n 50
done
wait "$dump"
check_output "the RoCE frames on veth1 are tagged VLAN 100, priority 5" \
	'vlan 100, p 5.*4791' cat tcpdump.log
diag "tcpdump -e on veth1:" "$(grep -m 2 "vlan 100" tcpdump.log)"
# rdma_cm over the VLAN's addresses: it resolves them to the VLAN's GIDs;
# udaddy's UD (and the CM's own MADs on QP1) come in through the VLAN.
cm_pair "rping over the VLAN, IPv4, 50 x 64 B, data checked" \
	rping -s -a 10.1.0.1 -C 50 -V -- rping -c -a 10.1.0.1 -C 50 -V
cm_pair "rping over the VLAN, IPv6, 20 x 1 KiB, data checked" \
	rping -s -a fd01::1 -C 20 -S 1024 -V -- rping -c -a fd01::1 -C 20 -S 1024 -V
cm_pair "ucmatose over the VLAN, IPv4, 2 connections" \
	ucmatose -b 10.1.0.1 -c 2 -C 10 -- ucmatose -s 10.1.0.1 -c 2 -C 10
cm_pair "ucmatose over the VLAN, IPv6" \
	ucmatose -b fd01::1 -f ipv6 -C 10 -- ucmatose -s fd01::1 -f ipv6 -C 10
cm_pair "udaddy over the VLAN, IPv4" \
	udaddy -b 10.1.0.1 -C 10 -- udaddy -s 10.1.0.1 -C 10
cm_pair "udaddy over the VLAN, IPv6" \
	udaddy -b fd01::1 -f ipv6 -C 10 -- udaddy -s fd01::1 -f ipv6 -C 10

topo_clean
check "unload" sroce_unload
tap_done

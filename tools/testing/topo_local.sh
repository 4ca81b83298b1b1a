# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced (after lib.sh) by the tests that forge packets from a local
# socket (18-forged, 17-fuzz): two sroce devices in ONE namespace, so a
# local UDP socket can claim to be either end of a connection.
#
#   ns0: veth0 10.0.0.1 10.0.0.3 fd00::1 fd00::3  (sroce0)
#        veth1 10.0.0.2 fd00::2                   (sroce1)
#
# The devices talk over the veth wire: the RDMA core resolves the peer's
# MAC on the GID's netdev, so veth0 must ARP for 10.0.0.2 and veth1 take
# packets from 10.0.0.1, a local address (accept_local, no rp_filter).
# A forged packet from a local socket comes in through lo.

# _topo_local_sysctl NS IF: let IF take packets from local addresses.
_topo_local_sysctl() {
	ip netns exec "$1" sysctl -qw "net.ipv4.conf.$2.accept_local=1" \
		"net.ipv4.conf.$2.rp_filter=0"
}

# topo_local: build the namespace and create sroce0 and sroce1; sets G0
# and G1, the RoCE v2 GID indexes of 10.0.0.1 on sroce0 and 10.0.0.2 on
# sroce1.  Returns non-zero if anything failed.
topo_local() {
	local i
	topo_clean
	ip netns add ns0 &&
		ip -n ns0 link set lo up &&
		_topo_local_sysctl ns0 all && _topo_local_sysctl ns0 default &&
		ip -n ns0 link add veth0 type veth peer name veth1 || return 1
	for i in veth0 veth1; do
		_topo_local_sysctl ns0 "$i" || return 1
	done
	ip -n ns0 addr add 10.0.0.1/24 dev veth0 &&
		ip -n ns0 addr add 10.0.0.3/24 dev veth0 &&
		ip -n ns0 addr add fd00::1/64 dev veth0 nodad &&
		ip -n ns0 addr add fd00::3/64 dev veth0 nodad &&
		ip -n ns0 addr add 10.0.0.2/24 dev veth1 &&
		ip -n ns0 addr add fd00::2/64 dev veth1 nodad &&
		ip -n ns0 link set veth0 up && ip -n ns0 link set veth1 up &&
		poll_until 10 _topo_ready ns0 &&
		ip netns exec ns0 rdma link add sroce0 type sroce netdev veth0 &&
		ip netns exec ns0 rdma link add sroce1 type sroce netdev veth1 &&
		poll_until 10 rdma_gid_index sroce0 1 fd00::3 &&
		poll_until 10 rdma_gid_index sroce1 1 fd00::2 || return 1
	# shellcheck disable=SC2034 # for the test that sources this
	G0=$(rdma_gid_index sroce0 1 10.0.0.1) && G1=$(rdma_gid_index sroce1 1 10.0.0.2)
}

# topo_local_clean: delete the devices and the namespace.
topo_local_clean() {
	ip netns exec ns0 rdma link delete sroce0 2>/dev/null
	ip netns exec ns0 rdma link delete sroce1 2>/dev/null
	topo_clean
}

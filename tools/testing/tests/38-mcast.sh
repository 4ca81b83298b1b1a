#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# UD multicast.  sroce0 in ns0 (veth0), sroce1 in ns1 (veth1):
#   - rdma_cm: mckey receivers on sroce0 (the other namespace) and on
#     sroce1 (loopback: the sender's own device), the sender on sroce1,
#     IPv4.  (rdma_cm refuses IPv6 groups on RoCEv2, in the RDMA core:
#     cma_iboe_join_multicast() returns -ENOTSUPP; the verbs runs cover
#     IPv6.)
#   - pyverbs' rdma_cm (tools/testing/mcast/pyverbs_mcast.py): the same,
#     each message checked;
#   - the verbs (tools/testing/mcast/sroce_mcast), IPv4 and IPv6: the same
#     layout, every message checked, plus a QP attached to another group
#     and a QP that attached to nothing, which must get nothing;
#   - the netdev's membership: joined while a QP is attached (ip maddr,
#     i.e. the kernel's IGMP/MLD state), left after the last detach, after
#     a program exits attached, and after the device is deleted;
#   - over a VLAN (VLAN 100 on both veths, the VLAN's GIDs): mckey, and the
#     verbs IPv4 and IPv6, the VLAN netdev joined (not only the lower one),
#     the datagrams and the IGMP/MLD reports tagged on the wire (tcpdump
#     -e on veth0); a VLAN added under an attached QP joins, joins again
#     when moved to another namespace, one deleted leaves, the lower
#     netdev staying joined and receiving;
#   - a group the netdev joined without sroce: counted as rx_drop_mcast;
#   - the limits (max_mcast_qp_attach, max_mcast_grp) and bad arguments;
#   - the namespaces go away afterwards (no reference left on their lo).
#
# The binary is built on the host: make -C tools/testing/mcast
. "$(dirname "$0")/../lib.sh"
require_sroce

shopt -s lastpipe
T=/tmp/mcast-test

# shellcheck disable=SC2317
cleanup() {
	local p
	for p in "$T"/*.pid; do
		[ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	topo_clean
}
trap cleanup EXIT

require_tester mcast sroce_mcast
rm -rf "$T" && mkdir -p "$T"

# in_group NS DEV GROUP: the netdev is a member of GROUP (IGMP/MLD state).
# shellcheck disable=SC2317 # called through check and wait_for
in_group() {
	ip -n "$1" maddr show dev "$2" | grep -qw -- "$3"
}
# shellcheck disable=SC2317
not_in_group() { ! in_group "$@"; }

# counter DEV NAME: a hw counter of DEV's port 1.
counter() {
	rdma statistic show link "$1/1" | grep -o "$2 [0-9]*" | cut -d' ' -f2
}

# bg NAME NS CMD...: run CMD in NS in the background, output to
# $T/NAME.log, its pid to $T/NAME.pid, its exit status to $T/NAME.rc.
bg() {
	local name=$1 ns=$2
	shift 2
	rm -f "$T/$name.rc" "$T/$name.pid"
	(
		ip netns exec "$ns" "$@" >"$T/$name.log" 2>&1 &
		echo $! >"$T/$name.pid"
		wait $!
		echo $? >"$T/$name.rc"
	) &
}

# bg_kill NAME: stop a background command.
bg_kill() {
	poll_until 5 test -e "$T/$1.pid" && kill "$(cat "$T/$1.pid")" 2>/dev/null
}

# bg_wait NAME SEC: wait for a background command to end.
bg_wait() {
	poll_until "$2" test -e "$T/$1.rc"
}

# bg_ok DESC NAME: the background command NAME ended with exit status 0
# (its output is shown if not).
bg_ok() {
	bg_wait "$2" 120
	check "$1" sh -c "grep -q '^0$' $T/$2.rc || { cat $T/$2.log; exit 1; }"
}

# bg_tap LABEL NAME: relay the TAP of a background run of sroce_mcast.
bg_tap() {
	bg_wait "$2" 120
	tap_relay "$1" sh -c "cat '$T/$2.log'; exit \$(cat '$T/$2.rc' 2>/dev/null || echo 99)"
}

topo_veth
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
poll_until 10 rdma_gid_index sroce0 1 fd00::1
poll_until 10 rdma_gid_index sroce1 1 fd00::2

# ------------------------------------------------------------ rdma_cm
G=239.1.1.1
# mckey prints with stdio: line-buffer it, the joins are waited for.
bg mck0 ns0 timeout 120 stdbuf -oL mckey -m $G -b 10.0.0.1 -C 10
bg mck1 ns1 timeout 120 stdbuf -oL mckey -m $G -b 10.0.0.2 -C 10
wait_for "mckey receivers joined $G" 60 \
	sh -c "grep -q 'joined dgid' $T/mck0.log && grep -q 'joined dgid' $T/mck1.log"
check "veth0 is a member of $G" in_group ns0 veth0 $G
check "mckey sender (ns1, sroce1)" run_ns ns1 timeout 120 mckey -m $G -b 10.0.0.2 -s -C 10
bg_ok "mckey receiver in ns0 (sroce0, across the wire): 10 messages" mck0
bg_ok "mckey receiver in ns1 (sroce1, loopback): 10 messages" mck1
wait_for "veth0 left $G after the receivers" 10 not_in_group ns0 veth0 $G
check_fail "mckey IPv6 join: refused by the RDMA core on RoCEv2 (not by sroce)" \
	run_ns ns0 timeout 60 mckey -m ff0e::1:1 -b fd00::1 -C 1

# ------------------------------------------------------------ pyverbs
G=239.1.1.6
PYV=$SROCE_REPO/tools/testing/mcast/pyverbs_mcast.py
bg pv0 ns0 timeout 120 "$PYTHON" "$PYV" recv 10.0.0.1 $G 10 512
bg pv1 ns1 timeout 120 "$PYTHON" "$PYV" recv 10.0.0.2 $G 10 512
wait_for "pyverbs (rdma_cm) receivers joined $G" 60 \
	sh -c "grep -q joined $T/pv0.log && grep -q joined $T/pv1.log"
check "pyverbs sender (ns1, sroce1)" \
	run_ns ns1 timeout 120 "$PYTHON" "$PYV" send 10.0.0.2 $G 10 512
bg_ok "pyverbs receiver in ns0 (sroce0): 10 messages, checked" pv0
bg_ok "pyverbs receiver in ns1 (sroce1, loopback): 10 messages, checked" pv1

# -------------------------------------------------------------- verbs
NONE_SECS=$((10 * ${SROCE_TIMEOUT_FACTOR:-1}))
for fam in 4 6; do
	if [ $fam = 4 ]; then
		G=239.1.1.3 OTHER=239.1.1.4 SRC=10.0.0.2
	else
		G=ff0e::1:3 OTHER=ff0e::1:4 SRC=fd00::2
	fi
	rm -f "$T"/ready*
	bg r0 ns0 "$BIN" recv -d sroce0 -g $G -n 50 -t 90 -r "$T/ready0"
	bg r1 ns0 "$BIN" recv -d sroce0 -g $G -n 50 -t 90 -r "$T/ready1"
	bg rl ns1 "$BIN" recv -d sroce1 -g $G -n 50 -t 90 -r "$T/ready2"
	# The two that must get nothing listen for 10 s (more on a slow
	# kernel): the 50 messages go within 2 s of their being ready.
	bg ro ns0 "$BIN" recv -d sroce0 -g $OTHER -z -t "$NONE_SECS" -r "$T/ready3"
	bg rn ns0 "$BIN" recv -d sroce0 -g $G -z -N -t "$NONE_SECS" -r "$T/ready4"
	wait_for "IPv$fam: five receivers ready" 60 sh -c \
		"test -e $T/ready0 -a -e $T/ready1 -a -e $T/ready2 -a -e $T/ready3 -a -e $T/ready4"
	check "IPv$fam: veth0 is a member of $G" in_group ns0 veth0 $G
	check "IPv$fam: veth1 is a member of $G" in_group ns1 veth1 $G
	tap_relay "IPv$fam send (ns1)" run_ns ns1 "$BIN" send -d sroce1 -g $G -a $SRC -n 50
	bg_tap "IPv$fam receiver 1, ns0" r0
	bg_tap "IPv$fam receiver 2, ns0 (same device)" r1
	bg_tap "IPv$fam receiver, ns1 (loopback)" rl
	bg_tap "IPv$fam receiver on $OTHER" ro
	bg_tap "IPv$fam receiver not attached" rn
	wait_for "IPv$fam: veth0 left $G" 10 not_in_group ns0 veth0 $G
	wait_for "IPv$fam: veth1 left $G" 10 not_in_group ns1 veth1 $G
done

# ------------------------------------- a group joined without sroce
G=239.1.1.9
before=$(counter sroce0 rx_drop_mcast)
bg sock ns0 "$PYTHON" -c "
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             struct.pack('4s4s', socket.inet_aton('$G'), socket.inet_aton('10.0.0.1')))
time.sleep(60)"
wait_for "a socket in ns0 joined $G" 30 in_group ns0 veth0 $G
tap_relay "send to $G" run_ns ns1 "$BIN" send -d sroce1 -g $G -a 10.0.0.2 -n 10
after=$(counter sroce0 rx_drop_mcast)
if [ -n "$before" ] && [ -n "$after" ] && [ $((after - before)) -ge 10 ]; then
	ok "sroce0 counted the 10 packets to a group it has no QP in (rx_drop_mcast)"
else
	not_ok "sroce0 counted the 10 packets to a group it has no QP in" \
		"rx_drop_mcast before '$before' after '$after'"
fi
bg_kill sock

# ------------------------------------------------------------- limits
G=239.1.2.1
tap_relay "limits" run_ns ns0 "$BIN" limits -d sroce0 -g $G -G
wait_for "veth0 left $G after the program exited attached" 10 \
	not_in_group ns0 veth0 $G

# --------------------------------------------------------- over a VLAN
# VLAN 100 on veth0 and veth1, the devices on the lower netdevs with the
# VLAN's GIDs.  attach_mcast does not say which GID a QP uses, so a group
# is joined on the netdev and on every VLAN on it: there the IP layer
# accepts the group's datagrams (it drops those to a group the VLAN has
# not joined) and the IGMP/MLD reports go out tagged.  Sent from a VLAN
# GID, the datagrams leave tagged.  A VLAN added while a group is joined
# joins it; one deleted leaves it, and takes nothing else with it.
modprobe 8021q 2>/dev/null
vlan_up() {
	ip -n "$1" link add link "$2" name "$2.100" type vlan id 100 &&
		ip -n "$1" addr add "$3/24" dev "$2.100" &&
		ip -n "$1" addr add "$4/64" dev "$2.100" nodad &&
		ip -n "$1" link set "$2.100" up
}
check "VLAN 100 on veth0 and veth1" \
	bash -c "$(declare -f vlan_up); vlan_up ns0 veth0 10.1.0.1 fd01::1 &&
		vlan_up ns1 veth1 10.1.0.2 fd01::2"
vlan_gids() {
	rdma_gid_index sroce0 1 10.1.0.1 && rdma_gid_index sroce1 1 10.1.0.2 &&
		rdma_gid_index sroce0 1 fd01::1 && rdma_gid_index sroce1 1 fd01::2
}
wait_for "the VLAN's GIDs on sroce0 and sroce1" 30 vlan_gids
# What crosses veth0: RoCE, tagged or not; and, verbose for their group
# records, the tagged IGMP and MLD reports (MLD's ICMPv6 comes after a
# hop-by-hop header, which "icmp6" does not look past: by address).
bg dump ns0 timeout 200 tcpdump -i veth0 -e -nn -l \
	'udp port 4791 or (vlan 100 and udp port 4791)'
bg dumpv ns0 timeout 200 tcpdump -i veth0 -e -nn -v -l \
	'vlan 100 and (igmp or ip6 dst ff02::16)'
sleep 2

G=239.1.3.1
bg vmck ns0 timeout 120 stdbuf -oL mckey -m $G -b 10.1.0.1 -C 10
wait_for "mckey receiver joined $G over the VLAN (-b 10.1.0.1)" 60 \
	grep -q 'joined dgid' "$T/vmck.log"
check "veth0.100 is a member of $G" in_group ns0 veth0.100 $G
check "mckey sender over the VLAN (ns1, -b 10.1.0.2)" \
	run_ns ns1 timeout 120 mckey -m $G -b 10.1.0.2 -s -C 10
bg_ok "mckey receiver over the VLAN (ns0): 10 messages" vmck

for fam in 4 6; do
	if [ $fam = 4 ]; then
		G=239.1.3.3 SRC=10.1.0.2
	else
		G=ff0e::1:33 SRC=fd01::2
	fi
	rm -f "$T"/ready*
	bg vr0 ns0 "$BIN" recv -d sroce0 -g $G -n 30 -t 90 -r "$T/ready0"
	wait_for "IPv$fam: a receiver attached to $G" 60 test -e "$T/ready0"
	check "IPv$fam: veth0.100 is a member of $G (the verbs, no rdma_cm)" \
		in_group ns0 veth0.100 $G
	check "IPv$fam: veth0 is a member of $G" in_group ns0 veth0 $G
	tap_relay "IPv$fam send from the VLAN's GID ($SRC)" \
		run_ns ns1 "$BIN" send -d sroce1 -g $G -a $SRC -n 30
	bg_tap "IPv$fam receiver, ns0, over the VLAN" vr0
	wait_for "IPv$fam: veth0.100 left $G" 10 not_in_group ns0 veth0.100 $G
	wait_for "IPv$fam: veth0 left $G" 10 not_in_group ns0 veth0 $G
done
sleep 1
bg_kill dump
bg_kill dumpv
bg_wait dump 10
bg_wait dumpv 10
check_output "the datagrams to the groups came in tagged VLAN 100 on veth0" \
	'vlan 100.* > 239\.1\.3\.3\.4791' cat "$T/dump.log"
check_output "  and the IPv6 ones" 'vlan 100.* > ff0e::1:33\.4791' cat "$T/dump.log"
check "  and none untagged" \
	sh -c "! grep -v 'vlan 100' $T/dump.log | grep -E '> (239\.1\.3\.|ff0e::1:3)'"
check_output "the IGMP report for the verbs' IPv4 group went out tagged" \
	'gaddr 239\.1\.3\.3' cat "$T/dumpv.log"
check_output "  and the MLD report for the IPv6 one" 'gaddr ff0e::1:33' \
	cat "$T/dumpv.log"
diag "tcpdump -e on veth0 (ns0):" "$(grep -m 4 'vlan 100' "$T/dump.log")"

# A VLAN comes and one goes under an attached QP.
G=239.1.3.5
rm -f "$T"/ready*
bg vr1 ns0 "$BIN" recv -d sroce0 -g $G -n 10 -t 60 -r "$T/ready0"
wait_for "a receiver attached to $G" 30 test -e "$T/ready0"
check "veth0.100 is a member of $G" in_group ns0 veth0.100 $G
check "add VLAN 200 on veth0 under it" sh -c \
	"ip -n ns0 link add link veth0 name veth0.200 type vlan id 200 &&
	 ip -n ns0 link set veth0.200 up"
wait_for "  VLAN 200 joined $G" 10 in_group ns0 veth0.200 $G
# Moved, it unregisters from ns0 (the IP layer drops its memberships) and
# registers in ns1, still on veth0: it joins again there.
check "move VLAN 200 to ns1" sh -c \
	"ip -n ns0 link set veth0.200 netns ns1 && ip -n ns1 link set veth0.200 up"
wait_for "  VLAN 200 joined $G again in ns1" 10 in_group ns1 veth0.200 $G
check "delete VLAN 100 under it" ip -n ns0 link del veth0.100
check "  veth0 is still a member of $G" in_group ns0 veth0 $G
tap_relay "send to $G over veth0, after VLAN 100 went" \
	run_ns ns1 "$BIN" send -d sroce1 -g $G -a 10.0.0.2 -n 10
bg_tap "the receiver got them" vr1
wait_for "veth0 left $G" 10 not_in_group ns0 veth0 $G
wait_for "veth0.200 (ns1) left $G" 10 not_in_group ns1 veth0.200 $G
ip -n ns1 link del veth1.100

# ---------------------------------------------- the device goes away
G=ff0e::1:5
rm -f "$T"/ready*
bg gone ns0 "$BIN" recv -d sroce0 -g $G -n 5 -t 60 -r "$T/ready0"
wait_for "a receiver attached to $G" 30 test -e "$T/ready0"
check "veth0 is a member of $G" in_group ns0 veth0 $G
check "rdma link delete sroce0 under an attached QP" run_ns ns0 rdma link delete sroce0
wait_for "veth0 left $G with the device" 20 not_in_group ns0 veth0 $G
bg_kill gone

G=239.1.1.5
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
rm -f "$T"/ready*
bg gone2 ns0 "$BIN" recv -d sroce0 -g $G -n 5 -t 60 -r "$T/ready0"
wait_for "a receiver attached to $G" 30 test -e "$T/ready0"
check "veth0 deleted under an attached QP" ip -n ns0 link del veth0
wait_for "sroce0 is gone with veth0" 20 sh -c "! rdma link show sroce0/1 2>/dev/null | grep -q sroce0"
bg_kill gone2

# A cached route of the namespace (IPv4 early demux keeps the input route
# of multicast datagrams in the socket) must not keep its netdevs alive.
topo_clean
sleep 12
check "the namespaces went away (no netdev waits for a reference)" \
	sh -c "! dmesg | grep 'waiting for .* to become free'"
tap_done

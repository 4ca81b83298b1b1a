#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 420
#
# 22-stacked: RoCE over stacked netdevs, with traffic, data checked
# (sroce_integrity -q: every byte and every completion field), in two
# namespaces:
#   bridge     ns0: sroce0 on br0 (port veth0)     ns1: sroce1 on veth1
#   macvlan    ns0: sroce0 on mv0 (bridge mode on veth0, which keeps an
#              address of its own: needs arp_ignore=1)   ns1: veth1
#   down/up    sroce0 on veth0 goes down and up under a running RC
#              ping-pong: it completes
#   bond       ns0: sroce0 on bond0 (active-backup over veth0a, veth0b)
#              ns1: sroce1 on br1 (ports veth1a, veth1b)
#              the active slave fails over twice (by hand, then by losing
#              carrier) under a running ping-pong and an integrity run:
#              both complete, at most with retransmissions;
#              a VLAN on the bond (bond0.100 <-> br1.100) carries traffic;
#              the VLAN is deleted under live QPs: they fail with a retry
#              error, nothing hangs, sroce0 still works;
#              the bond is deleted under live QPs: sroce0 goes, the
#              program fails cleanly, a device on the freed slave works.
# (rdma link add on tun, ipip, wireguard, vcan: 15-bad-input.)
#
# The integrity program is built on the host: make -C tools/testing/integrity

# Functions called through poll_until, wait_for and under_load:
# shellcheck disable=SC2317,SC2119
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

BIN=$SROCE_REPO/tools/testing/integrity/sroce_integrity
[ -x "$BIN" ] || bail_out "no $BIN: make -C tools/testing/integrity"
port=18800
# Iterations of a 4 KiB RC ping-pong that take about 6 s (set by the
# first ping-pong, from its usec/iter).
long_iters=2000

# shellcheck disable=SC2317 # called through trap
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	topo_clean
}
trap cleanup EXIT

# cnt DEV NAME: a hw counter of DEV's port 1.
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
listening() { run_ns "$1" ss -Hltn "sport = :$2" | grep -q .; }
# gid_of DEV ADDRESS: the RoCE v2 GID index of ADDRESS on DEV, once it is there.
gid_of() { poll_until 10 rdma_gid_index "$1" 1 "$2" && rdma_gid_index "$1" 1 "$2"; }
# sent_more DEV N: DEV has sent at least N packets.
sent_more() { [ "$(cnt "$1" tx_packets)" -ge "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# counters DEV...: retrans_timeout, seq_nak_rcvd and retry_exceeded summed
# over the devices, as "R S X".
counters() {
	local r=0 s=0 x=0 d
	for d in "$@"; do
		r=$((r + $(cnt "$d" retrans_timeout)))
		s=$((s + $(cnt "$d" seq_nak_rcvd)))
		x=$((x + $(cnt "$d" retry_exceeded)))
	done
	echo "$r $s $x"
}

# integ_start SNS SDEV SADDR CNS CDEV CADDR: start sroce_integrity (quick;
# basic, SGE and atomic groups), the server in SNS on the GID of SADDR,
# the client in CNS on the GID of CADDR; sets integ_server, integ_client
# (output in integ-client.log, integ-server.log).
integ_start() {
	local sns=$1 sdev=$2 saddr=$3 cns=$4 cdev=$5 caddr=$6 sg cg
	sg=$(gid_of "$sdev" "$saddr") || { echo "no GID for $saddr on $sdev" >integ-client.log; return 1; }
	cg=$(gid_of "$cdev" "$caddr") || { echo "no GID for $caddr on $cdev" >integ-client.log; return 1; }
	port=$((port + 1))
	run_ns "$sns" timeout 120 "$BIN" -s -d "$sdev" -g "$sg" -p "$port" \
		>integ-server.log 2>&1 &
	integ_server=$!
	poll_until 20 listening "$sns" "$port"
	run_ns "$cns" timeout 120 "$BIN" -c "$saddr" -p "$port" -d "$cdev" -g "$cg" \
		-q -t basic,sge,atomic >integ-client.log 2>&1 &
	integ_client=$!
}

# integ_check LABEL: wait for the integrity pair; ok if both exited 0 and
# every case passed.
integ_check() {
	local label=$1 rc=0 src=0 n nf
	wait "$integ_client" || rc=$?
	poll_until 10 gone "$integ_server" || kill "$integ_server" 2>/dev/null
	wait "$integ_server" || src=$?
	n=$(grep -c '^ok' integ-client.log)
	nf=$(grep -c '^not ok' integ-client.log)
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && [ "$n" -gt 0 ] && [ "$nf" -eq 0 ]; then
		ok "$label ($n cases, data checked)"
	else
		not_ok "$label" "client exit $rc, server exit $src, $n ok, $nf not ok" \
			"$(grep -A3 '^not ok' integ-client.log | head -n 20)" \
			"$(_tail_output "$(tail -n 5 integ-client.log; tail -n 5 integ-server.log)")"
	fi
}

# integ LABEL SNS SDEV SADDR CNS CDEV CADDR: an integrity run, checked.
integ() {
	local label=$1
	shift
	if integ_start "$@"; then
		integ_check "$label"
	else
		not_ok "$label" "$(cat integ-client.log)"
	fi
}

# pp_start SNS SDEV SADDR CNS CDEV CADDR ARGS...: an ibv_rc_pingpong pair
# with ARGS, as integ_start; sets pp_server, pp_client (pp-*.log).  The
# server listens on IPv4 only: for an IPv6 GID, $PP_CTRL is the IPv4
# address the client connects to.
pp_start() {
	local sns=$1 sdev=$2 saddr=$3 cns=$4 cdev=$5 caddr=$6 sg cg
	local ctrl=${PP_CTRL:-$3}
	shift 6
	sg=$(gid_of "$sdev" "$saddr") || { echo "no GID for $saddr on $sdev" >pp-client.log; return 1; }
	cg=$(gid_of "$cdev" "$caddr") || { echo "no GID for $caddr on $cdev" >pp-client.log; return 1; }
	port=$((port + 1))
	run_ns "$sns" timeout 120 ibv_rc_pingpong -d "$sdev" -g "$sg" -p "$port" "$@" \
		>pp-server.log 2>&1 &
	pp_server=$!
	poll_until 20 listening "$sns" "$port"
	run_ns "$cns" timeout 120 ibv_rc_pingpong -d "$cdev" -g "$cg" -p "$port" "$@" \
		"$ctrl" >pp-client.log 2>&1 &
	pp_client=$!
}

# pp_check LABEL: wait for the ping-pong pair; ok if both completed.
pp_check() {
	local label=$1 rc=0 src=0
	wait "$pp_client" || rc=$?
	# A server whose client failed may wait for ever.
	poll_until 10 gone "$pp_server" || kill "$pp_server" 2>/dev/null
	wait "$pp_server" || src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q 'bytes in' pp-client.log; then
		ok "$label"
	else
		not_ok "$label" "client exit $rc, server exit $src" \
			"$(_tail_output "$(tail -n 5 pp-client.log; tail -n 5 pp-server.log)")"
	fi
}

# pingpong LABEL SNS SDEV SADDR CNS CDEV CADDR ARGS...
pingpong() {
	local label=$1
	shift
	if pp_start "$@"; then
		pp_check "$label"
	else
		not_ok "$label" "$(cat pp-client.log)"
	fi
}

# under_load LABEL DEVS ACTION SNS SDEV SADDR CNS CDEV CADDR: a 6 s RC
# ping-pong (4 KiB) and, once it runs, an integrity run; ACTION (a
# function) happens in the middle of both.  Both must complete with no
# retry error; DEVS (a list) are the devices whose counters are shown.
# With INTEG_AFTER=1 the integrity run comes after the ping-pong: its
# QPs, made one per case, look their GID up by the index it was given at
# the start, and a bond failover moves the bond's GIDs (the RDMA core
# deletes and adds them again, at a new index while a live QP holds the
# old entry).
under_load() {
	local label=$1 devs=$2 action=$3 before after tx b1 b2 b3 a1 a2 a3
	shift 3
	# shellcheck disable=SC2086 # DEVS is a list
	before=$(counters $devs)
	if ! pp_start "$@" -s 4096 -n "$long_iters" -c; then
		not_ok "$label: the ping-pong starts" "$(cat pp-client.log)"
		return
	fi
	tx=$(cnt "$2" tx_packets)
	poll_until 30 sent_more "$2" $((tx + 200))
	if [ -z "${INTEG_AFTER:-}" ]; then
		integ_start "$@"
		sleep 0.5
	fi
	"$action"
	pp_check "$label: the RC ping-pong completes"
	if [ -z "${INTEG_AFTER:-}" ]; then
		integ_check "$label: an integrity run across it"
	else
		integ "$label: an integrity run after it" "$@"
	fi
	# shellcheck disable=SC2086
	after=$(counters $devs)
	read -r b1 b2 b3 <<<"$before"
	read -r a1 a2 a3 <<<"$after"
	check "$label: no retry error (retrans_timeout +$((a1 - b1)), seq_nak_rcvd +$((a2 - b2)), retry_exceeded +$((a3 - b3)))" \
		test "$a3" -eq "$b3"
}

# ------------------------------------------------------------- bridge

bridge_test() {
	topo_veth || bail_out "no veth pair"
	ip -n ns0 addr flush dev veth0
	if ! ip -n ns0 link add br0 type bridge; then
		skip "bridge" "no bridge in this kernel"
		topo_clean
		return
	fi
	ip -n ns0 link set veth0 master br0 &&
		ip -n ns0 addr add 10.0.0.1/24 dev br0 &&
		ip -n ns0 addr add fd00::1/64 dev br0 nodad &&
		ip -n ns0 link set br0 up
	check "bridge: sroce0 on br0 (port veth0)" run_ns ns0 rdma link add sroce0 type sroce netdev br0
	check "bridge: sroce1 on veth1" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
	pingpong "bridge: RC ping-pong IPv4 4 KiB" ns0 sroce0 10.0.0.1 ns1 sroce1 10.0.0.2 \
		-s 4096 -n 200 -c
	# Calibrate the long ping-pongs to about 6 s.
	local us
	us=$(sed -n 's/.*= \([0-9.]*\) usec\/iter.*/\1/p' pp-client.log)
	if [ -n "$us" ]; then
		long_iters=$(awk -v us="$us" 'BEGIN { n = int(6e6 / us);
			if (n < 500) n = 500; if (n > 50000) n = 50000; print n }')
	fi
	diag "4 KiB RC ping-pong: ${us:-?} usec/iter; long ping-pongs: $long_iters iterations"
	PP_CTRL=10.0.0.1 pingpong "bridge: RC ping-pong IPv6 64 KiB" \
		ns0 sroce0 fd00::1 ns1 sroce1 fd00::2 -s 65536 -n 20 -c
	integ "bridge: integrity IPv4" ns0 sroce0 10.0.0.1 ns1 sroce1 10.0.0.2
	integ "bridge: integrity IPv6" ns1 sroce1 fd00::2 ns0 sroce0 fd00::1
	run_ns ns0 rdma link delete sroce0
	run_ns ns1 rdma link delete sroce1
	topo_clean
}

# ------------------------------------------------------------ macvlan

macvlan_test() {
	local mac
	topo_veth || bail_out "no veth pair"
	modprobe macvlan 2>/dev/null
	# veth0 keeps 10.0.0.1: without arp_ignore=1 it would answer ARP for
	# the macvlan's address too, and ns1's packets for it would come in
	# on veth0, where no device is.
	run_ns ns0 sysctl -qw net.ipv4.conf.all.arp_ignore=1
	if ! ip -n ns0 link add mv0 link veth0 type macvlan mode bridge; then
		skip "macvlan" "no macvlan"
		topo_clean
		return
	fi
	ip -n ns0 addr add 10.0.0.3/24 dev mv0
	ip -n ns0 addr add fd00::3/64 dev mv0 nodad
	ip -n ns0 link set mv0 up
	check "macvlan: sroce0 on mv0 (bridge mode on veth0)" \
		run_ns ns0 rdma link add sroce0 type sroce netdev mv0
	check "macvlan: sroce1 on veth1" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
	integ "macvlan: integrity IPv4" ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.3
	integ "macvlan: integrity IPv6" ns1 sroce1 fd00::2 ns0 sroce0 fd00::3
	mac=$(ip -n ns0 -br link show mv0 | awk '{print $3}')
	check_output "macvlan: ns1 reaches 10.0.0.3 at mv0's MAC ($mac)" "lladdr $mac" \
		ip -n ns1 neigh show 10.0.0.3
	run_ns ns0 rdma link delete sroce0
	run_ns ns1 rdma link delete sroce1
	topo_clean
}

# ------------------------------------------------------------ down/up

# Down and at once up again (one ip process: under TCG each costs a lot):
# what was in flight is lost, the neighbour entry and route go and come
# back.  An outage longer than the QP's retry budget (8 local ACK
# timeouts of 67 ms for ibv_rc_pingpong) fails the QP, as it should.
downup() {
	printf 'link set veth0 down\nlink set veth0 up\n' | ip -n ns0 -batch -
	diag "veth0 went down and up: $(ip -n ns0 -br link show veth0)"
}

downup_test() {
	topo_veth || bail_out "no veth pair"
	check "down/up: sroce0 on veth0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
	run_ns ns1 rdma link add sroce1 type sroce netdev veth1
	# IPv4: veth0's IPv6 address (not kept on down) would go with its GID.
	under_load "down/up of veth0 mid-transfer" "sroce0 sroce1" downup \
		ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1
	check_output "down/up: sroce0 is ACTIVE again" 'state ACTIVE' \
		run_ns ns0 rdma link show sroce0/1
	run_ns ns0 rdma link delete sroce0
	run_ns ns1 rdma link delete sroce1
	topo_clean
}

# --------------------------------------------------------------- bond

active_slave() { ip -n ns0 -d link show bond0 | sed -n 's/.*active_slave \([^ ]*\).*/\1/p'; }
is_active() { [ "$(active_slave)" = "$1" ]; }

# By hand: veth0b takes over.
failover_by_hand() {
	ip -n ns0 link set bond0 type bond active_slave veth0b
	diag "active slave now: $(active_slave)"
}

# By carrier: veth0b's peer goes down, miimon moves back to veth0a.
failover_by_carrier() {
	ip -n ns1 link set veth1b down
	poll_until 5 is_active veth0a
	diag "active slave now: $(active_slave)"
	ip -n ns1 link set veth1b up
}

delete_vlan() { ip -n ns0 link del bond0.100; }
one_gone() { gone "$pp_client" || gone "$pp_server"; }
both_gone() { gone "$pp_client" && gone "$pp_server"; }
vlan_gid_gone() { ! rdma_gid_index sroce0 1 10.1.0.1 >/dev/null; }

bond_test() {
	local rc tx l

	topo_clean
	# max_bonds=0: no bond0 in the initial namespace.
	modprobe bonding max_bonds=0 2>/dev/null
	modprobe 8021q 2>/dev/null
	ip netns add ns0 && ip netns add ns1 &&
		ip -n ns0 link set lo up && ip -n ns1 link set lo up &&
		ip link add veth0a netns ns0 type veth peer name veth1a netns ns1 &&
		ip link add veth0b netns ns0 type veth peer name veth1b netns ns1
	# The debug kernel has neither bonds nor bridges.
	if ! ip -n ns0 link add bond0 type bond mode active-backup miimon 50 ||
		! ip -n ns1 link add br1 type bridge; then
		skip "bond" "no bonding or bridge in this kernel"
		topo_clean
		return
	fi
	ip -n ns0 link set veth0a master bond0 &&
		ip -n ns0 link set veth0b master bond0 &&
		ip -n ns1 link set veth1a master br1 &&
		ip -n ns1 link set veth1b master br1 &&
		ip -n ns0 addr add 10.0.0.1/24 dev bond0 &&
		ip -n ns1 addr add 10.0.0.2/24 dev br1 &&
		ip -n ns0 link add link bond0 name bond0.100 type vlan id 100 &&
		ip -n ns1 link add link br1 name br1.100 type vlan id 100 &&
		ip -n ns0 addr add 10.1.0.1/24 dev bond0.100 &&
		ip -n ns1 addr add 10.1.0.2/24 dev br1.100 || rc=$?
	for l in "ns0 veth0a" "ns0 veth0b" "ns0 bond0" "ns0 bond0.100" \
		"ns1 veth1a" "ns1 veth1b" "ns1 br1" "ns1 br1.100"; do
		# shellcheck disable=SC2086
		ip -n ${l% *} link set ${l#* } up
	done
	if [ -n "${rc:-}" ]; then
		not_ok "bond: set up bond0 (veth0a, veth0b) and br1 (veth1a, veth1b)"
		topo_clean
		return
	fi
	poll_until 10 is_active veth0a
	check_output "bond: active-backup, veth0a active" 'veth0a' active_slave
	check "bond: sroce0 on bond0" run_ns ns0 rdma link add sroce0 type sroce netdev bond0
	check "bond: sroce1 on br1" run_ns ns1 rdma link add sroce1 type sroce netdev br1
	integ "bond: integrity IPv4" ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1

	INTEG_AFTER=1 under_load "bond: failover by hand" "sroce0 sroce1" failover_by_hand \
		ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1
	check_output "bond: veth0b is active" 'veth0b' active_slave
	INTEG_AFTER=1 under_load "bond: failover on carrier loss" "sroce0 sroce1" \
		failover_by_carrier \
		ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1
	check_output "bond: veth0a is active again" 'veth0a' active_slave

	# A VLAN on the bond: its GIDs are sroce0's, its frames go through
	# whichever slave is active.
	integ "VLAN on bond: integrity over bond0.100's GID" \
		ns1 sroce1 10.1.0.2 ns0 sroce0 10.1.0.1
	pingpong "VLAN on bond: RC ping-pong 64 KiB" ns1 sroce1 10.1.0.2 ns0 sroce0 10.1.0.1 \
		-s 65536 -n 20 -c

	# The VLAN goes under live QPs.  Whichever side has a message in
	# flight then fails with a retry error (status 12); the other side
	# may be waiting for a receive, which an RC QP does for ever: killed.
	if pp_start ns1 sroce1 10.1.0.2 ns0 sroce0 10.1.0.1 -s 4096 -n 1000000; then
		tx=$(cnt sroce0 tx_packets)
		poll_until 30 sent_more sroce0 $((tx + 200))
		check "VLAN deleted under live QPs" delete_vlan
		wait_for "  one side of the ping-pong fails" 30 one_gone
		sleep 2
		kill "$pp_client" "$pp_server" 2>/dev/null
		wait_for "  and the other ends when killed" 10 both_gone
		wait "$pp_client" "$pp_server" 2>/dev/null
		check_output "  with a retry error, no hang" \
			'Failed status transport retry counter exceeded|status.*12' \
			cat pp-client.log pp-server.log
		wait_for "  the VLAN's GIDs leave sroce0" 10 vlan_gid_gone
		integ "  sroce0 still works (integrity over bond0)" \
			ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1
	else
		not_ok "VLAN deleted under live QPs: the ping-pong starts" "$(cat pp-client.log)"
	fi

	# The bond goes under live QPs: sroce0 goes with it (disassociated);
	# a program that waits for completion events (-e) learns it at once.
	if pp_start ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1 -s 4096 -n 1000000 -e; then
		tx=$(cnt sroce0 tx_packets)
		poll_until 30 sent_more sroce0 $((tx + 200))
		check "bond deleted under live QPs" ip -n ns0 link del bond0
		wait_for "  sroce0 goes with it" 20 bash -c '! test -e /sys/class/infiniband/sroce0'
		wait_for "  the program on sroce0 ends" 30 gone "$pp_client"
		rc=0
		wait "$pp_client" || rc=$?
		check "  and fails cleanly (exit $rc, not a timeout)" \
			test "$rc" -ne 0 -a "$rc" -ne 124
		diag "$(tail -n 3 pp-client.log)"
		kill "$pp_server" 2>/dev/null
		wait_for "  its peer ends when killed" 10 gone "$pp_server"
		wait "$pp_server" 2>/dev/null
		check_fail "  no QP left on sroce0" bash -c 'rdma res show qp | grep -q "sroce0/"'
	else
		not_ok "bond deleted under live QPs: the ping-pong starts" "$(cat pp-client.log)"
	fi
	# The freed slave takes a device of its own.
	ip -n ns0 addr add 10.0.0.1/24 dev veth0a
	ip -n ns0 link set veth0a up
	check "bond: the freed slave veth0a takes a device" \
		run_ns ns0 rdma link add sroce2 type sroce netdev veth0a
	integ "  which works (integrity to br1)" ns1 sroce1 10.0.0.2 ns0 sroce2 10.0.0.1
	run_ns ns0 rdma link delete sroce2
	run_ns ns1 rdma link delete sroce1
	topo_clean
}

sroce_load
t=$SECONDS
bridge_test
diag "bridge: $((SECONDS - t)) s"; t=$SECONDS
macvlan_test
diag "macvlan: $((SECONDS - t)) s"; t=$SECONDS
downup_test
diag "down/up: $((SECONDS - t)) s"; t=$SECONDS
bond_test
diag "bond: $((SECONDS - t)) s"
check "unload" sroce_unload
tap_done

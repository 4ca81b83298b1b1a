#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# RoCE over a VLAN between the two VMs: VLAN 100 on eth0 on both sides
# (192.168.78.x, fd78::x), the RDMA device stays on eth0 and uses the
# VLAN's GIDs (gid_attrs/ndevs says eth0.100).  RC and UD ping-pongs with
# their data check (-c), IPv4 and IPv6; the client checks that the RoCE
# frames on eth0 are tagged with VLAN 100.
# A step that fails here fails for good: do not wait the default 120 s.
PAIR_CMD_TIMEOUT=${PAIR_CMD_TIMEOUT:-45}
. "$(dirname "$0")/lib.sh"

if is_server; then n=1; else n=2; fi
V4=192.168.78.$n
V6=fd78::$n
VLAN=$SROCE_NIC.100

# shellcheck disable=SC2317 # called through trap
cleanup() {
	[ -n "${dump:-}" ] && kill "$dump" 2>/dev/null
	ip link del "$VLAN" 2>/dev/null
	return 0
}
trap cleanup EXIT

modprobe 8021q 2>/dev/null
ip link del "$VLAN" 2>/dev/null
check "VLAN 100 on $SROCE_NIC ($V4, $V6)" bash -c "
	ip link add link $SROCE_NIC name $VLAN type vlan id 100 &&
	ip addr add $V4/24 dev $VLAN && ip addr add $V6/64 dev $VLAN nodad &&
	ip link set $VLAN up"
wait_for "$SROCE_DEV has a RoCE v2 GID for $V4" 20 rdma_gid_index "$SROCE_DEV" 1 "$V4"
wait_for "$SROCE_DEV has a RoCE v2 GID for $V6" 20 rdma_gid_index "$SROCE_DEV" 1 "$V6"
G4=$(rdma_gid_index "$SROCE_DEV" 1 "$V4")
G6=$(rdma_gid_index "$SROCE_DEV" 1 "$V6")
check_output "  that GID is the VLAN's" "^$VLAN\$" \
	cat "/sys/class/infiniband/$SROCE_DEV/ports/1/gid_attrs/ndevs/${G4:-0}"

if is_server; then peer4=192.168.78.2; else peer4=192.168.78.1; fi
# iputils' ping if installed, or busybox's (the host may have only that).
if command -v ping >/dev/null; then PING=(ping); else PING=(busybox ping); fi
wait_for "ping the peer over the VLAN ($peer4)" 30 "${PING[@]}" -c 1 -W 2 "$peer4"

# diag_vlan: what the VLAN and the device saw, for a failed step.
diag_vlan() {
	diag "ip -s link show $VLAN:" "$(ip -s link show "$VLAN")" \
		"ip neigh show dev $VLAN:" "$(ip neigh show dev "$VLAN")" \
		"rdma statistic show link $SROCE_DEV/1:" \
		"$(rdma statistic show link "$SROCE_DEV/1" 2>&1)"
}

# vlan_pingpong DESC FAMILY PROG ARGS...: as lib.sh's pingpong, over the
# VLAN's GID of that family.  The TCP exchange goes over eth0's IPv4.
vlan_pingpong() {
	local desc=$1 g=$G4 prog=$3
	[ "$2" = 6 ] && g=$G6
	shift 3
	pair_step
	pair_run "$desc" "tcp:$PAIR_PORT" 'bytes in [0-9.]+ seconds' \
		"$prog" -d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT" -c "$@" -- \
		"$prog" -d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT" -c "$@" "$SROCE_SERVER_ADDR"
}

if is_client; then
	timeout 120 tcpdump -i "$SROCE_NIC" -e -nn -c 8 -l 'vlan 100' \
		>tcpdump.log 2>&1 &
	dump=$!
	sleep 1
fi
for fam in 4 6; do
	vlan_pingpong "rc over VLAN 100, IPv$fam 4096 B" $fam ibv_rc_pingpong -s 4096 -n 20
	vlan_pingpong "ud over VLAN 100, IPv$fam 984 B" $fam ibv_ud_pingpong -s 984 -n 20
done
vlan_pingpong "rc over VLAN 100, IPv4 10000 B" 4 ibv_rc_pingpong -s 10000 -n 10
diag_vlan
if is_client; then
	poll_until 10 bash -c "! kill -0 $dump 2>/dev/null"
	check_output "RoCE frames on $SROCE_NIC are tagged VLAN 100" 'vlan 100.*4791' \
		cat tcpdump.log
	diag "$(head -n 6 tcpdump.log)"
fi
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# A device on lo, as rdma_rxe allows: a namespace that has only lo (a
# container's, "unshare -n") gets RDMA between its own processes, RC and
# UD, IPv4 and IPv6, data checked (not rdma_cm: see below).  A packet
# from a local UDP socket never reaches its QPs: their peer is the
# device's own GID, which only sroce's internal loopback may claim
# (rx_drop_peer).
. "$(dirname "$0")/../lib.sh"
require_sroce

# shellcheck disable=SC2317
cleanup() {
	[ -n "${server:-}" ] && kill "$server" 2>/dev/null
	ip netns del nslo 2>/dev/null
}
trap cleanup EXIT

counter() { cat "/sys/class/infiniband/sroce0/ports/1/hw_counters/$1"; }

port=18700
# pair NAME PROG ARGS...: a ping-pong between two processes of nslo.
pair() {
	local name=$1 prog=$2 g
	shift 2
	g=$(rdma_gid_index sroce0 1 "$GIDADDR")
	port=$((port + 1))
	run_ns nslo timeout 60 "$prog" -d sroce0 -g "$g" -p "$port" -c "$@" \
		>server.log 2>&1 &
	server=$!
	if ! poll_until 15 tcp_listening nslo "$port"; then
		not_ok "$name" "server did not listen" "$(cat server.log)"
		return
	fi
	check_output "$name" 'bytes in [0-9.]+ seconds' \
		run_ns nslo timeout 60 "$prog" -d sroce0 -g "$g" -p "$port" -c "$@" 127.0.0.1
	wait "$server" || diag "server of '$name' failed:" "$(cat server.log)"
	server=
}

sroce_load
ip netns del nslo 2>/dev/null
ip netns add nslo
ip -n nslo link set lo up
check "rdma link add on lo, in a namespace with only lo" \
	run_ns nslo rdma link add sroce0 type sroce netdev lo
wait_for "RoCE v2 GID for 127.0.0.1" 10 rdma_gid_index sroce0 1 127.0.0.1
wait_for "RoCE v2 GID for ::1" 10 rdma_gid_index sroce0 1 ::1
check_output "  its port is active" 'state ACTIVE' run_ns nslo rdma link show sroce0/1

GIDADDR=127.0.0.1
pair "RC ping-pong over 127.0.0.1, 4 KiB" ibv_rc_pingpong -s 4096 -n 50
pair "UD ping-pong over 127.0.0.1" ibv_ud_pingpong -s 512 -n 50
GIDADDR=::1
pair "RC ping-pong over ::1, 64 KiB" ibv_rc_pingpong -s 65536 -n 20

# Not rdma_cm: it takes 127.0.0.1 and ::1 for "any device" and resolves
# no RoCE route to them (cma_bind_loopback()), and for any other address
# of lo it looks for a GID of type IB without a netdev
# (cma_validate_port() treats a non-Ethernet netdev as InfiniBand), which
# a RoCE device has not: the core's limit, for rdma_rxe on lo as for us.

# Live RC QPs (a long ping-pong), and UDP packets at them from a socket
# in the namespace: each one is dropped before its ICRC is looked at.
g=$(rdma_gid_index sroce0 1 127.0.0.1)
run_ns nslo timeout 120 ibv_rc_pingpong -d sroce0 -g "$g" -p 18790 -n 100000000 \
	>server.log 2>&1 &
server=$!
poll_until 15 tcp_listening nslo 18790
run_ns nslo timeout 120 ibv_rc_pingpong -d sroce0 -g "$g" -p 18790 -n 100000000 \
	127.0.0.1 >client.log 2>&1 &
client=$!
sleep 3
qpns=$(rdma res show qp link sroce0/1 -j 2>/dev/null | $PYTHON -c '
import json, sys
print(" ".join(str(q["lqpn"]) for q in json.load(sys.stdin)
               if q.get("type") == "RC" and q.get("state") == "RTS"))')
check "two RC QPs in RTS ($qpns)" test "$(echo "$qpns" | wc -w)" -eq 2
before=$(counter rx_drop_peer)
check "forged RC SENDs from a UDP socket to QPs $qpns" run_ns nslo $PYTHON -c '
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for qpn in map(int, sys.argv[1:]):
    # BTH: RC SEND_ONLY (4), P_Key ffff, dest QP, PSN 0; a payload and
    # 4 bytes where the ICRC would be.
    pkt = struct.pack("!BBHII", 4, 0, 0xffff, qpn, 0) + bytes(68)
    for _ in range(100):
        s.sendto(pkt, ("127.0.0.1", 4791))
' $qpns
want=$((before + 100 * $(echo "$qpns" | wc -w)))
poll_until 5 bash -c "[ \$(cat /sys/class/infiniband/sroce0/ports/1/hw_counters/rx_drop_peer) -ge $want ]"
check "  all dropped as not from the QP's peer (rx_drop_peer $before -> $(counter rx_drop_peer))" \
	test "$(counter rx_drop_peer)" -ge "$want"
check "  the ping-pong goes on" kill -0 "$client"
kill "$server" "$client" 2>/dev/null
wait "$server" "$client" 2>/dev/null
server=

check "rdma link delete" run_ns nslo rdma link delete sroce0
ip netns del nslo
check "rmmod" sroce_unload
tap_done

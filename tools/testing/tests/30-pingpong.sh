#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# The ibverbs-utils ping-pongs (RC, UC, UD, SRQ) with their receive-buffer
# check on (-c), over the IPv4 and the IPv6 GID, between two namespaces
# (sroce0 in ns0 <-> sroce1 in ns1) and on one device talking to itself.
# Sizes from 1 byte to several MTUs (the path MTU is 1024 on a 1500-byte
# veth).
. "$(dirname "$0")/../lib.sh"
require_sroce

# shellcheck disable=SC2317
cleanup() { [ -n "${server:-}" ] && kill "$server" 2>/dev/null; topo_clean; }
trap cleanup EXIT


port=18600
# pingpong NAME SNS SDEV SGID CNS CDEV CGID ADDR ARGS...: one run, server in
# SNS on SDEV, client in CNS on CDEV connecting to ADDR.
pingpong() {
	local name=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7 addr=$8 prog
	shift 8
	prog=$1
	shift
	port=$((port + 1))
	run_ns "$sns" timeout 60 "$prog" -d "$sdev" -g "$sgid" -p "$port" -c "$@" \
		>server.log 2>&1 &
	server=$!
	if ! poll_until 15 tcp_listening "$sns" "$port"; then
		not_ok "$name" "server did not listen" "$(cat server.log)"
		kill "$server" 2>/dev/null
		return
	fi
	check_output "$name" 'bytes in [0-9.]+ seconds' \
		run_ns "$cns" timeout 60 "$prog" -d "$cdev" -g "$cgid" -p "$port" -c "$@" "$addr"
	wait "$server" || diag "server of '$name' failed:" "$(cat server.log)"
	server=
}

topo_veth
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
poll_until 10 rdma_gid_index sroce0 1 fd00::1
poll_until 10 rdma_gid_index sroce1 1 fd00::2
s4=$(rdma_gid_index sroce0 1 10.0.0.1) c4=$(rdma_gid_index sroce1 1 10.0.0.2)
s6=$(rdma_gid_index sroce0 1 fd00::1) c6=$(rdma_gid_index sroce1 1 fd00::2)

# The ping-pongs exchange QP numbers over TCP on IPv4 (their servers listen
# on IPv4 only); the GID picks the family of the RDMA traffic.
addr=10.0.0.1
for fam in 4 6; do
	if [ $fam = 4 ]; then sg=$s4 cg=$c4; else sg=$s6 cg=$c6; fi
	for size in 1 1000 1024 1025 4096 10000; do
		pingpong "rc IPv$fam ${size} B" ns0 sroce0 "$sg" ns1 sroce1 "$cg" "$addr" \
			ibv_rc_pingpong -s "$size" -n 20
	done
	for size in 1 4096; do
		pingpong "uc IPv$fam ${size} B" ns0 sroce0 "$sg" ns1 sroce1 "$cg" "$addr" \
			ibv_uc_pingpong -s "$size" -n 20
	done
	# UD carries one MTU (1024) at most, less the 40-byte GRH.
	for size in 1 984; do
		pingpong "ud IPv$fam ${size} B" ns0 sroce0 "$sg" ns1 sroce1 "$cg" "$addr" \
			ibv_ud_pingpong -s "$size" -n 20
	done
	for size in 1 4096; do
		pingpong "srq IPv$fam ${size} B" ns0 sroce0 "$sg" ns1 sroce1 "$cg" "$addr" \
			ibv_srq_pingpong -s "$size" -n 20 -q 4
	done
done

# One device, both ends: the loopback path.
topo_clean
topo_loopback
run_ns ns0 rdma link add sroce0 type sroce netdev veth0
poll_until 10 rdma_gid_index sroce0 1 fd00::1
g4=$(rdma_gid_index sroce0 1 10.0.0.1) g6=$(rdma_gid_index sroce0 1 fd00::1)
pingpong "rc loopback IPv4 4 KiB" ns0 sroce0 "$g4" ns0 sroce0 "$g4" 10.0.0.1 \
	ibv_rc_pingpong -s 4096 -n 20
pingpong "rc loopback IPv6 64 KiB" ns0 sroce0 "$g6" ns0 sroce0 "$g6" 10.0.0.1 \
	ibv_rc_pingpong -s 65536 -n 10
pingpong "ud loopback IPv4" ns0 sroce0 "$g4" ns0 sroce0 "$g4" 10.0.0.1 \
	ibv_ud_pingpong -s 512 -n 20
pingpong "srq loopback IPv4" ns0 sroce0 "$g4" ns0 sroce0 "$g4" 10.0.0.1 \
	ibv_srq_pingpong -s 1000 -n 20
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# 40-integrity: RC data integrity with tools/testing/integrity/sroce_integrity
# (every RC opcode, many sizes, offsets and SGE splits, inline, atomics;
# every byte and every completion field checked; then error cases).  Each
# case the program reports becomes an assertion here, prefixed with the run.
#
# The binary is built on the host, not here (the repository is read-only
# in the VM): make -C tools/testing/integrity
#
# Runs, with SROCE_DRIVER=sroce (the default), on topo_veth:
#   loopback on sroce0 over the IPv4 GID and over the IPv6 GID (full),
#   and again over IPv4 with the ICRC on loopback (loopback_icrc=1);
#   server in ns1 on sroce1, client in ns0 on sroce0, IPv4 and IPv6 (quick);
#   the client/server run again with netem loss and reordering on veth0
#   (quick, without the error cases, whose timing the loss would upset).
# With SROCE_DRIVER=rxe (rdma_rxe only works in the initial namespace): a
# veth pair in the root namespace with rxe0 on one end; loopback over IPv4
# and IPv6, and client/server as two processes on rxe0.
#
# SROCE_INTEGRITY_ARGS: more options for every run (e.g. "-S 1234", "-q").

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

shopt -s lastpipe	# see relay()

DRIVER=${SROCE_DRIVER:-sroce}
# shellcheck disable=SC2206 # word splitting wanted
EXTRA=(${SROCE_INTEGRITY_ARGS:-})
RUN_TIMEOUT=300
TCP_PORT=18515

require_tester integrity sroce_integrity

# rdma_rxe's known deviations (the SEND_WITH_INV receive's flag, EINVAL
# for EBUSY from the dereg of an MR with a bound window) the tester itself
# accepts when it runs on rxe, each with a "# accepted:" line.

# relay LABEL CMD [ARG...]: run CMD, a TAP producer, and re-emit each of
# its assertions as one of ours, "LABEL: description"; its diagnostics
# pass through.  One more assertion says whether it ran to its plan and
# exited 0.
relay() {
	local label=$1 line n=0 nfail=0 plan="" rc="" re='^(not )?ok [0-9]+( - )?(.*)$'
	local desc reason bail="" start=$SECONDS
	shift
	# No process substitution: the VM has no /dev/fd.  lastpipe keeps the
	# loop, and so the assertion counter, in this shell.
	{ "$@" 2>&1; echo "__rc=$?"; } | while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			n=$((n + 1))
			desc=${BASH_REMATCH[3]}
			if [ -n "${BASH_REMATCH[1]}" ]; then
				nfail=$((nfail + 1))
				not_ok "$label: $desc"
			elif [[ $desc == *" # SKIP"* ]]; then
				reason=${desc#* # SKIP}
				skip "$label: ${desc%% # SKIP*}" "${reason# }"
			else
				ok "$label: $desc"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line == "Bail out!"* ]]; then
			bail=${line#Bail out! }
			echo "# $line"
		elif [[ $line == __rc=* ]]; then
			rc=${line#__rc=}
		elif [[ $line == "#"* ]]; then
			echo "$line"
		else
			echo "# $line"
		fi
	done
	if [ -n "$bail" ]; then
		not_ok "$label: ran to the end" "gave up after $n cases: $bail"
	elif [ -z "$plan" ]; then
		not_ok "$label: ran to the end" "no plan after $n cases, exit status $rc"
	elif [ "$plan" != "$n" ]; then
		not_ok "$label: ran to the end" "planned $plan cases, ran $n"
	elif [ "$rc" != 0 ] && [ $nfail -eq 0 ]; then
		not_ok "$label: ran to the end" "exit status $rc with no failed case"
	else
		ok "$label: ran to the end ($n cases, exit status $rc, $((SECONDS - start)) s)"
	fi
}

# gid_of DEV ADDRESS: the RoCE v2 GID index of ADDRESS on DEV port 1.
gid_of() {
	poll_until 10 rdma_gid_index "$1" 1 "$2" && rdma_gid_index "$1" 1 "$2"
}

# loopback LABEL NS DEV ADDRESS [ARG...]
loopback() {
	local label=$1 ns=$2 dev=$3 addr=$4 gid
	shift 4
	if ! gid=$(gid_of "$dev" "$addr"); then
		not_ok "$label: RoCE v2 GID of $addr on $dev" "not in the first 16 entries"
		return
	fi
	relay "$label" run_ns "$ns" timeout "$RUN_TIMEOUT" \
		"$BIN" -l -d "$dev" -g "$gid" "$@" "${EXTRA[@]}"
}

# client_server LABEL SNS SDEV SADDR CNS CDEV CADDR [ARG...]: the server
# in namespace SNS on SDEV, the client in CNS on CDEV, control over TCP to
# SADDR, RDMA between the GIDs of SADDR and CADDR.
client_server() {
	local label=$1 sns=$2 sdev=$3 saddr=$4 cns=$5 cdev=$6 caddr=$7
	local sgid cgid server src=0
	shift 7
	if ! sgid=$(gid_of "$sdev" "$saddr") || ! cgid=$(gid_of "$cdev" "$caddr"); then
		not_ok "$label: RoCE v2 GIDs of $saddr on $sdev and $caddr on $cdev"
		return
	fi
	TCP_PORT=$((TCP_PORT + 1))
	run_ns "$sns" timeout "$RUN_TIMEOUT" "$BIN" -s -d "$sdev" -g "$sgid" \
		-p "$TCP_PORT" >"server-$TCP_PORT.log" 2>&1 &
	server=$!
	relay "$label" run_ns "$cns" timeout "$RUN_TIMEOUT" "$BIN" -c "$saddr" \
		-p "$TCP_PORT" -d "$cdev" -g "$cgid" "$@" "${EXTRA[@]}"
	wait "$server" || src=$?
	if [ $src -eq 0 ]; then
		ok "$label: server exited 0"
	else
		not_ok "$label: server exited 0" "exit status $src" \
			"$(_tail_output "$(cat "server-$TCP_PORT.log")")"
	fi
}

netem_add() {
	run_ns ns0 tc qdisc add dev veth0 root netem loss 2% delay 1ms reorder 25% 50%
}

# sroce0's hw counter NAME.
sroce0_counter() {
	cat /sys/class/infiniband/sroce0/ports/1/hw_counters/"$1"
}

# sroce0 has sent more than $1 packets.  Called through poll_until:
# shellcheck disable=SC2317
sroce0_sent_more() {
	[ "$(sroce0_counter tx_packets)" -gt "$1" ]
}

# A token bucket on veth0 whose queue overflows on every burst: its drops
# reach sroce as NET_XMIT_DROP, so sroce0 pauses and sends those packets
# again (tx_queue_full) instead of leaving them to go-back-N.  The rate
# must be below what sroce sends, and high enough that an ACK for 64
# packets still comes within the tester's ACK timeout (67 ms): the debug
# kernels (KASAN, KCSAN) send about 3 MB/s, the stock ones over 50 on a
# quiet host.  On a busy host sroce may send below the first rate and
# never fill the queue: then once more at a quarter of it.
run_queue_full() {
	local before server client rate rates="400mbit 100mbit"

	case $KVER in *-sroce-debug | *-sroce-kcsan) rates="16mbit 4mbit" ;; esac
	# The stock kernels have tbf as a module, the debug kernel built in.
	modprobe sch_tbf 2>/dev/null
	before=$(sroce0_counter tx_queue_full)
	for rate in $rates; do
		if ! run_ns ns0 tc qdisc add dev veth0 root tbf rate $rate burst 16kb limit 16kb; then
			skip "a full transmit queue" "no tbf qdisc"
			return
		fi
		client_server "tbf $rate: full transmit queue" ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1 \
			-q -t basic,sge,atomic,burst
		run_ns ns0 tc -s qdisc show dev veth0 | sed 's/^/# /'
		run_ns ns0 tc qdisc del dev veth0 root
		[ "$(sroce0_counter tx_queue_full)" -eq "$before" ] || break
		diag "the queue at $rate never filled: sroce0 sent below it"
	done
	check "sroce0 paused for the full queue (tx_queue_full $before -> $(sroce0_counter tx_queue_full))" \
		test "$(sroce0_counter tx_queue_full)" -gt "$before"

	# A queue that drops everything, from the middle of a ping-pong (the
	# TCP exchange before it needs the queue): sroce0 stops pausing after
	# a few tries and the QP fails as on a dead wire, instead of hanging.
	run_ns ns1 timeout 120 ibv_rc_pingpong -d sroce1 -g "$(gid_of sroce1 10.0.0.2)" \
		-p 18600 -n 1000000 >/dev/null 2>&1 &
	server=$!
	poll_until 30 run_ns ns1 sh -c 'ss -Hltn "sport = :18600" | grep -q .'
	before=$(sroce0_counter tx_packets)
	run_ns ns0 timeout 120 ibv_rc_pingpong -d sroce0 -g "$(gid_of sroce0 10.0.0.1)" \
		-p 18600 -n 1000000 10.0.0.2 >pingpong.log 2>&1 &
	client=$!
	# Well into the ping-pong (the debug kernel takes a while to start).
	poll_until 60 sroce0_sent_more $((before + 200))
	before=$(sroce0_counter tx_queue_full)
	if ! run_ns ns0 tc qdisc add dev veth0 root pfifo limit 0; then
		skip "a transmit queue that drops everything" "no pfifo qdisc"
	else
		wait "$client"
		check_output "a queue that drops everything: the QP fails, no hang" \
			"Failed status" cat pingpong.log
		check "sroce0 saw the queue drop (tx_queue_full $before -> $(sroce0_counter tx_queue_full))" \
			test "$(sroce0_counter tx_queue_full)" -gt "$before"
	fi
	kill "$client" "$server" 2>/dev/null
	wait
	run_ns ns0 tc qdisc del dev veth0 root
}

# ------------------------------------------------------------- sroce ----

run_sroce() {
	require_sroce
	topo_veth || bail_out "cannot set up the veth pair"
	check "rdma link add sroce0 on veth0 (ns0)" \
		run_ns ns0 rdma link add sroce0 type sroce netdev veth0 || bail_out "no sroce0"
	check "rdma link add sroce1 on veth1 (ns1)" \
		run_ns ns1 rdma link add sroce1 type sroce netdev veth1 || bail_out "no sroce1"

	loopback "loopback IPv4" ns0 sroce0 10.0.0.1
	loopback "loopback IPv6" ns0 sroce0 fd00::1
	client_server "ns0->ns1 IPv4" ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1 -q
	client_server "ns0->ns1 IPv6" ns1 sroce1 fd00::2 ns0 sroce0 fd00::1 -q

	if ! command -v tc >/dev/null; then
		skip "netem loss and reordering" "no tc (iproute2) in the VM"
	elif ! modprobe sch_netem 2>/dev/null; then
		skip "netem loss and reordering" "sch_netem does not load"
	elif ! netem_add; then
		skip "netem loss and reordering" "tc qdisc add ... netem failed"
	else
		client_server "netem 2% loss, reorder" ns1 sroce1 10.0.0.2 ns0 sroce0 10.0.0.1 \
			-q -t basic,sge,inline,atomic,burst,inv
		run_ns ns0 tc -s qdisc show dev veth0 | sed 's/^/# /'
		run_ns ns0 tc qdisc del dev veth0 root
	fi
	run_queue_full

	check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
	check "rdma link delete sroce1" run_ns ns1 rdma link delete sroce1
	check_output "loopback packets carry no ICRC by default (loopback_icrc)" '^N$' \
		cat /sys/module/sroce/parameters/loopback_icrc
	check "unload sroce" sroce_unload

	# The CRC path on loopback, put back by the parameter.
	check "load sroce loopback_icrc=1" sroce_load loopback_icrc=1
	check "rdma link add sroce0 on veth0 (ns0)" \
		run_ns ns0 rdma link add sroce0 type sroce netdev veth0 || bail_out "no sroce0"
	loopback "loopback IPv4, loopback_icrc=1" ns0 sroce0 10.0.0.1 -t basic,sge,inline
	check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
	topo_clean
	check "unload sroce" sroce_unload
}

# --------------------------------------------------------------- rxe ----

# Called through trap:
# shellcheck disable=SC2317
rxe_cleanup() {
	rdma link delete rxe0 2>/dev/null
	ip link del ivA 2>/dev/null
	rmmod rdma_rxe 2>/dev/null
	return 0
}

run_rxe() {
	rmmod sroce 2>/dev/null	# they cannot be loaded together
	trap rxe_cleanup EXIT
	check "create veth pair ivA/ivB" ip link add ivA type veth peer name ivB ||
		bail_out "no veth"
	ip addr add 10.0.0.1/24 dev ivA
	ip addr add fd00::1/64 dev ivA nodad
	ip link set ivA up
	ip link set ivB up
	check "modprobe rdma_rxe" modprobe rdma_rxe || bail_out "no rdma_rxe"
	check "rdma link add rxe0 type rxe netdev ivA" \
		rdma link add rxe0 type rxe netdev ivA || bail_out "no rxe0"

	loopback "rxe loopback IPv4" "" rxe0 10.0.0.1
	loopback "rxe loopback IPv6" "" rxe0 fd00::1
	client_server "rxe client/server, one device" "" rxe0 10.0.0.1 "" rxe0 10.0.0.1 -q

	check "rdma link delete rxe0" rdma link delete rxe0
	check "rmmod rdma_rxe" rmmod rdma_rxe
	check "delete veth pair" ip link del ivA
	trap - EXIT
}

# In rxe mode everything runs in the root namespace.
if [ "$DRIVER" = rxe ]; then
	run_ns() {
		local ns=$1
		shift
		if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
	}
	run_rxe
else
	run_sroce
fi
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 420
#
# 20-churn: devices and verbs objects come and go while data-checked
# traffic runs, and devices go away under programs that hold them.
#
# On topo_veth, ibv_rc_pingpong -c runs between sroce0 (ns0) and sroce1
# (ns1) again and again; meanwhile, SROCE_CHURN_CYCLES times (4; "make
# churn" runs 100): a second veth pair vc0 (ns0) / vc1 (ns1) gets sroce2,
# sroce_hostile churn opens it and creates, uses (a checked SEND) and
# destroys PDs, CQs, MRs, an SRQ and RC/UD QPs, and does the same on
# sroce0 under the traffic; then sroce2 goes, by "rdma link delete" or by
# deleting its netdev, in turn.  Every ping-pong must pass.
#
# Then removal under a holder (issue 13: sroce disassociates user
# contexts): a program holding the device (sroce_hostile hold: QPs, MRs,
# traffic) or an ibv_rc_pingpong mid-run must not hold up "rdma link
# delete", the netdev's deletion or rmmod: each returns within 10 s, the
# holder gets IBV_EVENT_DEVICE_FATAL and errors, and exits; sroce unloads.
# A removal that is still blocked after 10 s fails here, and the holder is
# killed so that it can finish.
#
# The binary is built on the host: make -C tools/testing/hostile

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

CYCLES=${SROCE_CHURN_CYCLES:-4}
LIMIT=10

require_tester hostile sroce_hostile
require_sroce

# gid_of DEV ADDRESS: the RoCE v2 GID index of ADDRESS on DEV port 1.
gid_of() {
	poll_until 10 rdma_gid_index "$1" 1 "$2" && rdma_gid_index "$1" 1 "$2"
}

# The second pair: vc0 10.2.0.1 in ns0, vc1 10.2.0.2 in ns1.
vc_add() {
	ip -n ns0 link add vc0 type veth peer name vc1 netns ns1 &&
		ip -n ns0 addr add 10.2.0.1/24 dev vc0 &&
		ip -n ns1 addr add 10.2.0.2/24 dev vc1 &&
		ip -n ns0 link set vc0 up && ip -n ns1 link set vc1 up
}

vc_del() {
	ip -n ns0 link del vc0 2>/dev/null
	return 0
}

gone() {
	! test -e "/sys/class/infiniband/$1"
}

# ------------------------------------------------ traffic and churn ----

# Ping-pongs between sroce1 (server, ns1) and sroce0 until ./stop exists,
# waiting for completion events (-e): busy polling would take both CPUs;
# one line per run in traffic.log: "pass" or "FAIL <status>".
traffic_loop() {
	local g0=$1 g1=$2 port=18800 server rc

	while [ ! -e stop ]; do
		port=$((port + 1))
		run_ns ns1 timeout 120 ibv_rc_pingpong -d sroce1 -g "$g1" -p $port \
			-n 500 -s 4096 -c -e >traffic-server.log 2>&1 &
		server=$!
		poll_until 30 run_ns ns1 sh -c "ss -Hltn 'sport = :$port' | grep -q ."
		rc=0
		run_ns ns0 timeout 120 ibv_rc_pingpong -d sroce0 -g "$g0" -p $port \
			-n 500 -s 4096 -c -e 10.0.0.2 >traffic-client.log 2>&1 || rc=$?
		wait "$server" || rc=$((rc ? rc : 100 + $?))
		if [ $rc -eq 0 ]; then
			echo pass >>traffic.log
		else
			echo "FAIL $rc" >>traffic.log
			cat traffic-server.log traffic-client.log >>traffic-fail.log
		fi
	done
}

# One churn cycle; prints what went wrong, if anything, and fails.
churn_cycle() {
	local c=$1 g2 out bad=0

	vc_add || { echo "cycle $c: veth pair"; return 1; }
	run_ns ns0 rdma link add sroce2 type sroce netdev vc0 ||
		{ echo "cycle $c: rdma link add sroce2"; vc_del; return 1; }
	if ! g2=$(gid_of sroce2 10.2.0.1); then
		echo "cycle $c: no GID on sroce2"
		vc_del
		return 1
	fi
	out=$(run_ns ns0 timeout 120 "$BIN" churn -d sroce2 -g "$g2" -n 2 -S "$c" 2>&1) ||
		{ echo "cycle $c: churn on sroce2:"; echo "$out"; bad=1; }
	out=$(run_ns ns0 timeout 120 "$BIN" churn -d sroce0 -g "$G0" -n 1 -S "$c" 2>&1) ||
		{ echo "cycle $c: churn on sroce0 under traffic:"; echo "$out"; bad=1; }
	# Even cycles delete the device, odd ones its netdev.
	if [ $((c % 2)) -eq 0 ] && ! run_ns ns0 rdma link delete sroce2; then
		echo "cycle $c: rdma link delete sroce2"
		bad=1
	fi
	vc_del
	poll_until 20 gone sroce2 || { echo "cycle $c: sroce2 is still there"; return 1; }
	return $bad
}

topo_veth || bail_out "cannot set up the veth pair"
check "rdma link add sroce0 on veth0 (ns0)" \
	run_ns ns0 rdma link add sroce0 type sroce netdev veth0 || bail_out "no sroce0"
check "rdma link add sroce1 on veth1 (ns1)" \
	run_ns ns1 rdma link add sroce1 type sroce netdev veth1 || bail_out "no sroce1"
if ! G0=$(gid_of sroce0 10.0.0.1) || ! G1=$(gid_of sroce1 10.0.0.2); then
	bail_out "no RoCE v2 GIDs on sroce0/sroce1"
fi

rm -f stop traffic.log traffic-fail.log
traffic_loop "$G0" "$G1" &
traffic=$!
start=$SECONDS
failed=0
for c in $(seq 1 "$CYCLES"); do
	msg=$(churn_cycle "$c" 2>&1) || failed=$((failed + 1))
	[ -z "$msg" ] || diag "$msg"
	[ $((c % 10)) -eq 0 ] && diag "cycle $c of $CYCLES, $((SECONDS - start)) s"
done
touch stop
wait "$traffic"
if [ "$failed" -eq 0 ]; then
	ok "$CYCLES churn cycles: sroce2 created, used, deleted; objects churned on sroce0 ($((SECONDS - start)) s)"
else
	not_ok "$CYCLES churn cycles: sroce2 created, used, deleted; objects churned on sroce0" \
		"$failed cycles went wrong"
fi
passes=$(grep -c '^pass' traffic.log 2>/dev/null)
fails=$(grep -c '^FAIL' traffic.log 2>/dev/null)
if [ "${passes:-0}" -gt 0 ] && [ "${fails:-0}" -eq 0 ]; then
	ok "the traffic beside it: $passes ping-pongs of 500 x 4 KiB, data checked, all passed"
else
	not_ok "the traffic beside it: every ping-pong passed" \
		"${passes:-0} passed, ${fails:-0} failed" "$(tail -n 20 traffic-fail.log 2>/dev/null)"
fi

# ---------------------------------------------- removal under holders ----

# removal DESC HOLDER_PID GONE_DEV CMD...: run CMD (a removal) in the
# background; ok if it returns 0 within $LIMIT s and GONE_DEV is gone by
# then.  If it is still blocked then, kill the holder so that it can
# finish, and fail.
removal() {
	local desc=$1 holder=$2 dev=$3 pid t0=$SECONDS rc=0 hung=""
	shift 3
	"$@" >removal.log 2>&1 &
	pid=$!
	poll_until "$LIMIT" bash -c "! kill -0 $pid 2>/dev/null"
	if kill -0 "$pid" 2>/dev/null; then
		hung="still blocked after $LIMIT s: killing the holder"
		# TERM first: timeout(1) passes it on to the program it runs.
		kill "$holder" 2>/dev/null
		sleep 1
		kill -9 "$holder" "$(holder_pid)" 2>/dev/null
		poll_until 60 bash -c "! kill -0 $pid 2>/dev/null"
	fi
	wait "$pid" || rc=$?
	if [ -z "$hung" ] && [ $rc -eq 0 ] && gone "$dev"; then
		ok "$desc returns at once ($((SECONDS - t0)) s), $dev is gone"
	else
		not_ok "$desc returns within $LIMIT s" "${hung:-returned after $((SECONDS - t0)) s}" \
			"exit status $rc after $((SECONDS - t0)) s" "$(cat removal.log)"
	fi
}

# The pid of the running sroce_hostile hold ($HOLD_NAME.log says it).
holder_pid() {
	sed -n 's/^# ready: holding .*, pid \([0-9]*\)$/\1/p' "$HOLD_NAME.log" 2>/dev/null
}

# start_holder DEV GIDX NAME: sroce_hostile hold in ns0, in the background
# ($HOLDER); its TAP goes to NAME.log and its exit status to NAME.rc.
start_holder() {
	local dev=$1 gid=$2 name=$3

	HOLD_NAME=$name
	rm -f "$name.log" "$name.rc"
	{
		run_ns ns0 timeout 60 "$BIN" hold -d "$dev" -g "$gid" -t 50
		echo $? >"$name.rc"
	} >"$name.log" 2>&1 &
	HOLDER=$!
	poll_until 30 grep -q 'ready: holding' "$name.log"
}

# holder_done NAME PID: the holder exits within $LIMIT s; relay its TAP.
holder_done() {
	local name=$1 pid=$2

	if ! poll_until "$LIMIT" bash -c "! kill -0 $pid 2>/dev/null"; then
		diag "$name: the holder is still there after $LIMIT s: killing it"
		kill "$(holder_pid)" 2>/dev/null
		sleep 1
		kill -9 "$pid" "$(holder_pid)" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	tap_relay "$name" holder_output "$name"
}

# The holder's output and exit status, for tap_relay.
# shellcheck disable=SC2317
holder_output() {
	cat "$1.log"
	exit "$(cat "$1.rc" 2>/dev/null || echo 99)"
}

# 1. rdma link delete under a holder.
check "veth pair vc0/vc1" vc_add
check "rdma link add sroce2 on vc0" run_ns ns0 rdma link add sroce2 type sroce netdev vc0
G2=$(gid_of sroce2 10.2.0.1)
start_holder sroce2 "$G2" hold-delete
h=$HOLDER
removal "rdma link delete sroce2 under a holder" "$h" sroce2 \
	run_ns ns0 rdma link delete sroce2
holder_done hold-delete "$h"

# 2. Deleting the netdev under a holder.
check "rdma link add sroce2 on vc0 again" run_ns ns0 rdma link add sroce2 type sroce netdev vc0
G2=$(gid_of sroce2 10.2.0.1)
start_holder sroce2 "$G2" hold-netdev
h=$HOLDER
removal "ip link del vc0 under a holder" "$h" sroce2 ip -n ns0 link del vc0
holder_done hold-netdev "$h"

# 3. ibv_rc_pingpong -e (completion events) mid-run, server on sroce3.
check "veth pair vc0/vc1 again" vc_add
check "rdma link add sroce2 (ns0) and sroce3 (ns1)" bash -c \
	'ip netns exec ns0 rdma link add sroce2 type sroce netdev vc0 &&
	 ip netns exec ns1 rdma link add sroce3 type sroce netdev vc1'
G2=$(gid_of sroce2 10.2.0.1)
G3=$(gid_of sroce3 10.2.0.2)
HOLD_NAME=none
run_ns ns1 timeout 120 ibv_rc_pingpong -e -d sroce3 -g "$G3" -p 18900 -n 100000000 \
	>pp3.log 2>&1 &
pp_server=$!
poll_until 30 run_ns ns1 sh -c "ss -Hltn 'sport = :18900' | grep -q ."
run_ns ns0 timeout 120 ibv_rc_pingpong -e -d sroce2 -g "$G2" -p 18900 -n 100000000 \
	10.2.0.2 >pp2.log 2>&1 &
pp_client=$!
# Mid-run: a few thousand packets through sroce3.
poll_until 60 bash -c "[ \$(cat /sys/class/infiniband/sroce3/ports/1/hw_counters/rx_packets) -gt 2000 ]"
removal "rdma link delete sroce3 under ibv_rc_pingpong -e" "$pp_server" sroce3 \
	run_ns ns1 rdma link delete sroce3
# The server's device went: its CQ event channel fails at once.  The
# client may not notice (a QP with nothing outstanding hears nothing of a
# dead peer): it fails by retries if it was sending, or waits; it is
# killed after the server is checked.
t0=$SECONDS
poll_until 30 bash -c "! kill -0 $pp_server 2>/dev/null"
srv_rc=0
cli_rc=0
kill "$pp_server" 2>/dev/null
wait "$pp_server" || srv_rc=$?
if [ $srv_rc -ne 0 ] && [ $srv_rc -lt 124 ]; then
	ok "the ping-pong server on sroce3 failed and exited by itself ($((SECONDS - t0)) s, status $srv_rc)"
else
	not_ok "the ping-pong server on sroce3 failed and exited by itself" \
		"status $srv_rc (124+: killed after 30 s)" "$(tail -n 5 pp3.log)"
fi
kill "$pp_client" 2>/dev/null
wait "$pp_client" || cli_rc=$?
diag "the client on sroce2 ended with status $cli_rc (143: killed while waiting)" \
	"$(tail -n 3 pp2.log)"
check "rdma link delete sroce2" run_ns ns0 rdma link delete sroce2
vc_del

# 4. rmmod under a holder of sroce0 (sroce1 goes too).
start_holder sroce0 "$G0" hold-rmmod
h=$HOLDER
removal "rmmod sroce under a holder of sroce0" "$h" sroce0 rmmod sroce
holder_done hold-rmmod "$h"
if lsmod | grep -q '^sroce '; then
	check "rmmod sroce once nothing holds it" sroce_unload
fi
check_fail "no sroce device is left" bash -c 'ls /sys/class/infiniband | grep -q sroce'
topo_clean
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 420
#
# 46-soak: RC RDMA_WRITE, RDMA_READ and SEND through a bad wire, every
# byte checked (tools/testing/integrity/sroce_integrity --soak).
#
# Two namespaces, sroce0 on veth0 (ns0, 10.0.0.1) and sroce1 on veth1
# (ns1, 10.0.0.2); netem on both ends, so both directions suffer:
#   delay 1ms reorder 5% 50%, loss 5%, duplicate 1%, corrupt 0.1%
# The testers' control connections go over a second, clean veth pair
# (vc0 10.0.9.1 <-> vc1 10.0.9.2).  SROCE_SOAK_QPS client/server pairs
# run at once, each on its own RC QP (retry_cnt 7, timeout 14 = 67 ms),
# half with the requester in ns0 and half in ns1, and move
# SROCE_SOAK_BYTES in all (suffix K, M, G; default 64M here, 4G in "make
# soak"), a third each as WRITE, READ and SEND in chains of 4 KiB..1 MiB
# messages.  A "# soak-progress:" line per SROCE_SOAK_STEP bytes (default
# an eighth) gives the rate and the retransmission counters of both
# devices; the "# soak-summary:" line at the end is what "make soak"
# tabulates.  Fails on a data or completion mismatch, a QP that stalls
# (no completion for SROCE_SOAK_WAIT seconds, default 60) or runs out of
# retries (retry_exceeded), and, through the harness, a kernel warning.
# A failed round does not end the soak: the tester reports it ("# soak:
# failure N: ...") and goes on with a fresh QP pair, so a long run says
# how often each failure comes.  SROCE_SOAK_OPS: some of write,read,send.
# SROCE_SOAK_PCAP=1: capture the RoCE headers on veth0 and, if a round
# failed, show how each connection ended (../soak/roce_tail.py) and keep
# the capture next to the TAP (46-soak.pcap; =keep: keep it whatever
# happened, for roce_tail.py --stalls).  SROCE_SOAK_STOP=1: stop at the
# first failed round (to capture one without waiting for the rest).
# SROCE_SOAK_WINDOW=W: capture too, and fail if a connection had more
# than W SEND/WRITE PSNs in flight (roce_tail.py --window; the RC window
# is 512).  SROCE_SOAK_REASK=MS: capture too, and fail if a READ was
# asked for a third time within MS ms before an answer (roce_tail.py
# --reasks: a storm of READs asked again).  SROCE_SOAK_NONZERO="NAME...":
# fail unless each of those counters moved.  The per-CPU backlog drops (/proc/net/softnet_stat) are printed at the end: on 6.1 a storm
# of packets can overflow them before sroce ever sees a packet.
#
# The binary is built on the host: make -C tools/testing/integrity

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

BYTES=${SROCE_SOAK_BYTES:-64M}
QPS=${SROCE_SOAK_QPS:-2}
WAIT=${SROCE_SOAK_WAIT:-60}
OPS=${SROCE_SOAK_OPS:-write,read,send}
# SROCE_SOAK_QP_TIMEOUT: the QPs' local ACK timeout exponent (default 14).
QP_TIMEOUT=${SROCE_SOAK_QP_TIMEOUT:-14}
# SROCE_SOAK_NETEM: other netem options, or "none" for a clean wire.
# SROCE_SOAK_ARP_OFF=1: no ARP request is answered, and once traffic
# flows the neighbour entries are probed, and fail, within ~1 s of no
# confirmation (arp_off, arp_stale below): only the QPs' own
# confirmations keep them.
NETEM=${SROCE_SOAK_NETEM:-delay 1ms reorder 5% 50% loss 5% duplicate 1% corrupt 0.1%}
# The counters of the summary (make soak's table), then the other ones
# worth seeing; a counter the driver does not have is left out.
COUNTERS=(retrans_timeout seq_nak_rcvd out_of_sequence duplicate_request
	rx_drop_icrc retry_exceeded)
MORE_COUNTERS=(seq_nak_ignored rx_reorder_held rx_reorder_dropped read_restart_lost rnr_nak_rcvd rx_drop_queue_full rx_drop_stale
	tx_queue_full tx_packets rx_packets)
TCP_PORT=18700

# bytes SIZE: SIZE (with a K, M or G suffix) in bytes.
bytes() {
	local n=${1%[KkMmGg]}
	case $1 in
	*[Gg]) echo $((n << 30)) ;;
	*[Mm]) echo $((n << 20)) ;;
	*[Kk]) echo $((n << 10)) ;;
	*) echo $((n)) ;;
	esac
}

require_tester integrity sroce_integrity
if ! [[ $BYTES =~ ^[0-9]+[KkMmGg]?$ ]] || ! [[ $QPS =~ ^[1-9][0-9]*$ ]]; then
	bail_out "SROCE_SOAK_BYTES ($BYTES) or SROCE_SOAK_QPS ($QPS) is not a number"
fi
TOTAL=$(bytes "$BYTES")
STEP=$(bytes "${SROCE_SOAK_STEP:-$((TOTAL / 8))}")
[ "$STEP" -gt 0 ] || STEP=$TOTAL
PER_QP=$(((TOTAL + QPS - 1) / QPS))
require_sroce

# shellcheck disable=SC2317 # called through trap
cleanup() {
	local p
	for p in ${PIDS:-}; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	topo_clean
}
trap cleanup EXIT

# counter DEV NAME: a hw counter of DEV, or nothing if it has none such.
counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null
}

# counters [NAME...]: "name=N" for each counter, summed over both devices.
counters() {
	local name a b out=()
	for name in "$@"; do
		a=$(counter sroce0 "$name") || continue
		b=$(counter sroce1 "$name") || continue
		out+=("$name=$((a + b))")
	done
	echo "${out[*]}"
}

# The bytes the clients have checked so far (their last "# soak:" lines).
checked() {
	local i n sum=0
	for ((i = 0; i < QPS; i++)); do
		n=$(sed -n 's/^# soak: \([0-9]*\) bytes checked.*/\1/p' "client-$i.log" 2>/dev/null | tail -n 1)
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

# The rounds that failed so far, on all QPs.
failures() {
	cat client-*.log 2>/dev/null | grep -c '^# soak: failure'
}

# The neighbour sysctls arp_off sets, on a veth.
NEIGH_FAST=(base_reachable_time_ms=100 delay_first_probe_time=1
	retrans_time_ms=50 ucast_solicit=1 mcast_solicit=1 app_solicit=0)

# arp_off: on both veths, once each side knows the other, answer no
# ARP request (arp_ignore 8: not even learning the asker from it; a
# sysctl, so that kernels without tc's clsact, the debug kernel, run it
# too) and make neighbour entries expire and fail within about a second
# unless confirmed.  The entries resolved
# before keep their old timers (~30 s): arp_stale then makes them STALE.
# A STALE entry in use waits delay_first_probe_time in DELAY, then goes
# back to REACHABLE if it was confirmed meanwhile, else is probed (and,
# the probe lost, FAILED); a confirmation does not stop a probe already
# started, hence not 0.
arp_off() {
	local nsdev ns dev peer peerns peerdev mac v args

	for nsdev in ns0:veth0:10.0.0.2:ns1:veth1 ns1:veth1:10.0.0.1:ns0:veth0; do
		IFS=: read -r ns dev peer peerns peerdev <<<"$nsdev"
		args=("net.ipv4.conf.$dev.arp_ignore=8")
		for v in "${NEIGH_FAST[@]}"; do
			args+=("net.ipv4.neigh.$dev.$v")
		done
		# REACHABLE now, with the timer of the old settings (~30 s):
		# time for the QPs to connect before arp_stale.
		mac=$(run_ns "${peerns}" cat "/sys/class/net/$peerdev/address") &&
			run_ns "$ns" ip neigh replace "$peer" lladdr "$mac" dev "$dev" \
				nud reachable &&
			run_ns "$ns" sysctl -qw "${args[@]}" || return 1
	done
}

# traffic_flows: sroce0 has sent some packets.
traffic_flows() {
	[ "$(counter sroce0 tx_packets)" -gt 500 ]
}

# capture_check DESC OPTION ARG: the check DESC passes if roce_tail.py
# OPTION ARG finds nothing wrong in the capture; its output is shown.
capture_check() {
	local desc=$1 out rc=0

	shift
	out=$($PYTHON "$SROCE_REPO/tools/testing/soak/roce_tail.py" "$@" soak.pcap 2>&1) ||
		rc=$?
	check "$desc: ${out//$'\n'/; }" test "$rc" = 0
}

# arp_stale: both entries STALE now, while traffic flows.
arp_stale() {
	run_ns ns0 ip neigh change 10.0.0.2 dev veth0 nud stale &&
		run_ns ns1 ip neigh change 10.0.0.1 dev veth1 nud stale
}

# arp_stats: the ARP resolutions that failed and the packets dropped
# waiting for one, all namespaces (/proc/net/stat/arp_cache, per CPU).
arp_stats() {
	local cols failed=0 discards=0

	while read -r -a cols; do
		[[ ${cols[6]} =~ ^[0-9a-f]+$ ]] || continue
		failed=$((failed + 0x${cols[6]}))
		discards=$((discards + 0x${cols[11]}))
	done </proc/net/stat/arp_cache
	echo "res_failed $failed, unresolved_discards $discards"
}

# neigh_states: each side's neighbour entry for its peer.
neigh_states() {
	echo "ns0: $(run_ns ns0 ip neigh show 10.0.0.2 dev veth0);" \
		"ns1: $(run_ns ns1 ip neigh show 10.0.0.1 dev veth1)"
}

# rate BYTES MS: MB/s (10^6), one decimal.
rate() {
	local ms=$(($2 > 0 ? $2 : 1))
	echo "$(($1 / ms / 1000)).$(($1 / ms % 1000 / 100))"
}

ms_now() {
	local t
	read -r t _ </proc/uptime
	t=${t/./}
	echo $((10#$t * 10))
}

# shellcheck disable=SC2317 # called through check
setup() {
	topo_veth &&
		ip link add vc0 netns ns0 type veth peer name vc1 netns ns1 &&
		ip -n ns0 addr add 10.0.9.1/24 dev vc0 && ip -n ns0 link set vc0 up &&
		ip -n ns1 addr add 10.0.9.2/24 dev vc1 && ip -n ns1 link set vc1 up &&
		poll_until 10 _topo_ready ns0 && poll_until 10 _topo_ready ns1
}
check "two namespaces: a veth for RDMA, a clean one for control" setup ||
	bail_out "no topology"
check "sroce0 on veth0 (ns0), sroce1 on veth1 (ns1)" bash -c "
	ip netns exec ns0 rdma link add sroce0 type sroce netdev veth0 &&
	ip netns exec ns1 rdma link add sroce1 type sroce netdev veth1" || bail_out "no devices"
GID0=$(poll_until 10 rdma_gid_index sroce0 1 10.0.0.1 && rdma_gid_index sroce0 1 10.0.0.1)
GID1=$(poll_until 10 rdma_gid_index sroce1 1 10.0.0.2 && rdma_gid_index sroce1 1 10.0.0.2)
if [ -z "$GID0" ] || [ -z "$GID1" ]; then
	bail_out "no RoCE v2 GIDs for 10.0.0.1/10.0.0.2"
fi
if [ "$NETEM" = none ]; then
	diag "no netem: a clean wire"
else
	modprobe sch_netem 2>/dev/null
	check "netem on veth0 and veth1: $NETEM" bash -c "
		ip netns exec ns0 tc qdisc add dev veth0 root netem $NETEM &&
		ip netns exec ns1 tc qdisc add dev veth1 root netem $NETEM" || bail_out "no netem"
fi

if [ -n "${SROCE_SOAK_ARP_OFF:-}" ]; then
	check "ARP off: arp_ignore=8 ${NEIGH_FAST[*]}" arp_off || bail_out "no ARP off"
fi
diag "soak: $TOTAL bytes over $QPS QPs ($PER_QP each), a line per $STEP bytes, kernel $KVER"
PIDS=
TCPDUMP=
[ -z "${SROCE_SOAK_WINDOW:-}${SROCE_SOAK_REASK:-}" ] || SROCE_SOAK_PCAP=${SROCE_SOAK_PCAP:-1}
if [ -n "${SROCE_SOAK_PCAP:-}" ]; then
	run_ns ns0 tcpdump -i veth0 -s 80 -w soak.pcap udp port 4791 2>tcpdump.log &
	TCPDUMP=$!
	poll_until 10 test -s soak.pcap
fi
SERVERS=()
CLIENTS=()
start=$(ms_now)
for ((i = 0; i < QPS; i++)); do
	# Even pairs: the requester in ns0; odd ones: in ns1.
	if [ $((i % 2)) -eq 0 ]; then
		sns=ns1 sdev=sroce1 sgid=$GID1 saddr=10.0.9.2 cns=ns0 cdev=sroce0 cgid=$GID0
	else
		sns=ns0 sdev=sroce0 sgid=$GID0 saddr=10.0.9.1 cns=ns1 cdev=sroce1 cgid=$GID1
	fi
	port=$((TCP_PORT + i))
	run_ns "$sns" "$BIN" -s -d "$sdev" -g "$sgid" -p "$port" >"server-$i.log" 2>&1 &
	SERVERS+=($!)
	run_ns "$cns" "$BIN" -c "$saddr" -p "$port" -d "$cdev" -g "$cgid" \
		-B "$PER_QP" -P 4M -W "$WAIT" -O "$OPS" -T "$QP_TIMEOUT" -S $((0x50a6 + i)) >"client-$i.log" 2>&1 &
	CLIENTS+=($!)
done
PIDS="${SERVERS[*]} ${CLIENTS[*]} $TCPDUMP"
if [ -n "${SROCE_SOAK_ARP_OFF:-}" ]; then
	poll_until 60 traffic_flows || diag "no traffic after 60 s"
	check "traffic flows; both neighbour entries made STALE" arp_stale
	arp_off_at=$(ms_now)
	diag "neighbour entries: $(neigh_states)"
fi

# softnet: each CPU's packets processed, dropped (backlog full), squeezed.
softnet() {
	local cpu=0 processed dropped squeezed rest

	while read -r processed dropped squeezed rest; do
		printf 'cpu%d processed %d dropped %d squeezed %d; ' "$cpu" \
			"0x$processed" "0x$dropped" "0x$squeezed"
		cpu=$((cpu + 1))
	done </proc/net/softnet_stat
}

# Progress: a line each time another STEP bytes have been checked.
next=$STEP
running() {
	local p
	for p in "${CLIENTS[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
while running; do
	sleep 2
	done_bytes=$(checked)
	if [ "$done_bytes" -ge "$next" ]; then
		ms=$(($(ms_now) - start))
		echo "# soak-progress: $((done_bytes >> 20)) MiB of $((TOTAL >> 20)) in $((ms / 1000)) s," \
			"$(rate "$done_bytes" "$ms") MB/s, $(failures) rounds failed;" \
			"$(counters "${COUNTERS[@]}")"
		while [ "$next" -le "$done_bytes" ]; do next=$((next + STEP)); done
	fi
	if [ -n "${SROCE_SOAK_STOP:-}" ] && [ "$(failures)" -gt 0 ]; then
		diag "SROCE_SOAK_STOP: a round failed, the soak stops here"
		kill "${CLIENTS[@]}" "${SERVERS[@]}" 2>/dev/null
		break
	fi
done
ms_now_end=$(ms_now)
ms=$((ms_now_end - start))

for ((i = 0; i < QPS; i++)); do
	rc=0
	wait "${CLIENTS[$i]}" || rc=$?
	if [ $rc -eq 0 ] && grep -q '^ok 1 - soak' "client-$i.log" &&
	   grep -q '^# soak: done' "client-$i.log"; then
		ok "QP $i: $(sed -n 's/^# soak: done: //p' "client-$i.log")"
	else
		not_ok "QP $i: $PER_QP bytes moved and checked" "exit status $rc" \
			"$(grep -v '^# soak: [0-9]' "client-$i.log" | head -n 80)"
		FAILED=1
	fi
	rc=0
	wait "${SERVERS[$i]}" || rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "QP $i: server exited 0" "exit status $rc" "$(tail -n 20 "server-$i.log")"
	fi
done
PIDS=

done_bytes=$(checked)
for dev in veth0:ns0 veth1:ns1; do
	diag "netem on ${dev%:*}:" "$(run_ns "${dev#*:}" tc -s qdisc show dev "${dev%:*}")"
done
diag "counters, sroce0 + sroce1: $(counters "${COUNTERS[@]}" "${MORE_COUNTERS[@]}")"
diag "per-CPU backlogs (softnet_stat): $(softnet)"
diag "ARP: $(arp_stats)"
if [ -n "${SROCE_SOAK_ARP_OFF:-}" ]; then
	states=$(neigh_states)
	check "traffic went on for 2 s or more after that ($((ms_now_end - arp_off_at)) ms)" \
		test $((ms_now_end - arp_off_at)) -ge 2000
	# Not checked: once traffic ends nothing confirms, and the last
	# packets out may start a probe that fails.
	diag "neighbour entries at the end: $states"
fi
echo "# soak-summary: kernel=$KVER netem=${NETEM// /_} bytes=$done_bytes ms=$ms mbps=$(rate "$done_bytes" "$ms")" \
	"qps=$QPS failed_rounds=$(failures) $(counters "${COUNTERS[@]}" "${MORE_COUNTERS[@]}")"
if [ -n "$TCPDUMP" ]; then
	kill "$TCPDUMP"
	wait "$TCPDUMP"
	diag "tcpdump: $(tail -n 3 tcpdump.log)"
	[ -z "${SROCE_SOAK_WINDOW:-}" ] ||
		capture_check "at most $SROCE_SOAK_WINDOW SEND/WRITE PSNs in flight" \
			--window "$SROCE_SOAK_WINDOW"
	[ -z "${SROCE_SOAK_REASK:-}" ] ||
		capture_check "no READ asked for a third time within $SROCE_SOAK_REASK ms before an answer" \
			--reasks "$SROCE_SOAK_REASK"
	if [ "$(failures)" -gt 0 ] || [ "$SROCE_SOAK_PCAP" = keep ]; then
		[ -z "${SROCE_TEST_OUT:-}" ] || cp soak.pcap "$SROCE_TEST_OUT/46-soak.pcap"
	fi
	if [ "$(failures)" -gt 0 ]; then
		diag "how each connection ended:" \
			"$($PYTHON "$SROCE_REPO/tools/testing/soak/roce_tail.py" soak.pcap 60 2>&1)"
	fi
fi
if [ -n "${FAILED:-}" ]; then
	diag "kernel log:" "$(dmesg | tail -n 30)"
fi
check "no QP ran out of retries (retry_exceeded is $(counters retry_exceeded))" \
	test "$(counters retry_exceeded)" = retry_exceeded=0
check "every byte asked for was moved ($done_bytes of $TOTAL)" test "$done_bytes" -ge "$TOTAL"
# SROCE_SOAK_NONZERO="NAME...": counters the run must have moved (the
# recovery path a test is there to take; one the driver lacks fails).
for name in ${SROCE_SOAK_NONZERO:-}; do
	value=$(counters "$name")
	check "$name moved (${value:-$name: no such counter})" \
		test "${value#*=}" -gt 0 2>/dev/null
done

check "rdma link delete sroce0 and sroce1" bash -c "
	ip netns exec ns0 rdma link delete sroce0 && ip netns exec ns1 rdma link delete sroce1"
topo_clean
check "unload sroce" sroce_unload
tap_done

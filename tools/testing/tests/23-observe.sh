#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# 23-observe: what sroce shows of itself (Documentation/sroce.rst, "Seeing
# into the device").  Two devices in one namespace (topo_local.sh); an RC
# pair a (sroce0) <-> b (sroce1) owned by tools/testing/observe.py, which
# checks, with its traffic's data checked:
#   rdma res show qp|cq|mr|srq -dd  sroce's fields, with the values the
#                                   traffic must have left (PSNs, fill)
#   rdma -r res show qp|cq|mr       the raw entries, decoded as
#                                   include/uapi/rdma/sroce_restrack.h
#                                   lays them out: the same as -dd, and
#                                   the PSNs and indices of the traffic
#   counters                        rdma_rxe's names, and the sums behind
#                                   them (sent_pkts = tx_packets, ...)
#   RNR, a dropped packet, a NAK    an RNR NAK wait; a bad ICRC to a's QP;
#                                   a request past a gap to b's
# Here, around it: the sroce tracepoints on (tracefs), and in the trace
# the test QPs' tx, rx, completions, state changes, RNR NAKs and the
# go-back-N after them, the drop with its reason, b's sequence NAK; the
# counters in sysfs under rdma_rxe's names; and trace-cmd, perf and
# bpftrace each counting the completions of an ibv_rc_pingpong.

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../topo_local.sh
. "$SROCE_TESTING/topo_local.sh"
require_sroce

shopt -s lastpipe	# relay() (lib.sh) counts in this shell

TRACING=/sys/kernel/tracing

# shellcheck disable=SC2317 # called by trap
cleanup() {
	[ -w "$TRACING/events/sroce/enable" ] &&
		echo 0 >"$TRACING/events/sroce/enable"
	topo_local_clean
}
trap cleanup EXIT

if topo_local >topo.log 2>&1; then
	ok "two devices in one namespace (topo_local)"
else
	not_ok "two devices in one namespace (topo_local)" "$(cat topo.log)"
	tap_done
fi

[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" 2>/dev/null
check "the sroce trace system is in tracefs" test -d "$TRACING/events/sroce"
echo 0 >"$TRACING/tracing_on"
echo 8192 >"$TRACING/buffer_size_kb"
: >"$TRACING/trace"
echo 1 >"$TRACING/events/sroce/enable"
echo 1 >"$TRACING/tracing_on"

# 6.1's core has no SRQ driver fields, and dumps SRQs raw from 6.7 on
# (include/sroce/compat.h).
srq_details=
[ "$(printf '%s\n' "$KVER" 6.2 | sort -V | head -n1)" = 6.2 ] &&
	srq_details=--srq-details
[ "$(printf '%s\n' "$KVER" 6.7 | sort -V | head -n1)" = 6.7 ] &&
	srq_details="$srq_details --srq-raw"
# shellcheck disable=SC2086 # srq_details is empty or flags
relay run_ns ns0 timeout 200 "$PYTHON" "$SROCE_TESTING/observe.py" \
	--gid0 "$G0" --gid1 "$G1" --qpns "$PWD/qpns" $srq_details

echo 0 >"$TRACING/events/sroce/enable"
cp "$TRACING/trace" trace.txt
{ read -r A B && read -r NAK_PSN; } <qpns ||
	bail_out "observe.py wrote no QP numbers and NAK PSN: $(cat qpns 2>&1)"
diag "a = sroce0 QP $A, b = sroce1 QP $B; trace: $(grep -c sroce_ trace.txt) events" \
	"$(grep -E 'sroce_(rnr|retransmit|drop|qp_state)' trace.txt | head -n 24)"

# in_trace DESC ERE: an assertion that trace.txt has a line matching ERE.
in_trace() {
	if grep -Eq "$2" trace.txt; then
		ok "trace: $1"
	else
		not_ok "trace: $1" "no line matches: $2" \
			"$(grep -E 'sroce_[a-z_]+:' trace.txt | tail -n 20)"
	fi
}
in_trace "a's QP goes RESET -> INIT -> RTR -> RTS" \
	"sroce_qp_state: dev=sroce0 qpn=$A RTR -> RTS"
in_trace "a sends (sroce_tx, its QPN and b's)" \
	"sroce_tx: dev=sroce0 qpn=$A dqpn=$B psn=[0-9]+ opcode=0x0[04] RC_SEND_(ONLY|FIRST)"
in_trace "b takes a's requests in (sroce_rx)" \
	"sroce_rx: dev=sroce1 qpn=$B psn=[0-9]+ opcode=0x06 RC_RDMA_WRITE_FIRST"
in_trace "a takes the READ responses in" \
	"sroce_rx: dev=sroce0 qpn=$A psn=[0-9]+ opcode=0x0d RC_RDMA_READ_RESPONSE_FIRST"
in_trace "a's completions (sroce_complete)" \
	"sroce_complete: dev=sroce0 cqn=[0-9]+ qpn=$A wr_id=0x[0-9a-f]+ status=SUCCESS"
in_trace "b's receive completions" \
	"sroce_complete: dev=sroce1 cqn=[0-9]+ qpn=$B wr_id=0x[0-9a-f]+ status=SUCCESS opcode=128"
in_trace "b sends RNR NAKs (sroce_rnr_sent)" \
	"sroce_rnr_sent: dev=sroce1 qpn=$B psn=[0-9]+ syndrome=0x34"
in_trace "a gets them (sroce_rnr_rcvd)" \
	"sroce_rnr_rcvd: dev=sroce0 qpn=$A psn=[0-9]+ syndrome=0x34"
in_trace "a goes back for them (sroce_retransmit why=rnr)" \
	"sroce_retransmit: dev=sroce0 qpn=$A psn=[0-9]+ from=[0-9]+ why=rnr"
in_trace "b NAKs the request past a gap (sroce_nak_sent, PSN sequence error)" \
	"sroce_nak_sent: dev=sroce1 qpn=$B psn=$NAK_PSN syndrome=0x60"
in_trace "the bad-ICRC packet: dropped, with its reason" \
	"sroce_drop: dev=sroce0 qpn=$A reason=rx_drop_icrc"

# The counters under rdma_rxe's names, where rdma_rxe's users read them.
hw=/sys/class/infiniband/sroce0/ports/1/hw_counters
missing=
for n in sent_pkts rcvd_pkts duplicate_request out_of_seq_request \
	rcvd_rnr_err send_rnr_err rcvd_seq_err ack_deferred \
	retry_exceeded_err retry_rnr_exceeded_err completer_retry_err \
	send_err link_downed rdma_sends rdma_recvs; do
	[ -r "$hw/$n" ] || missing="$missing $n"
done
check "sysfs: the hw_counters have rdma_rxe's names${missing:+ (missing:$missing)}" \
	test -z "$missing"
sent=$(cat "$hw/sent_pkts") tx=$(cat "$hw/tx_packets")
rcvd=$(cat "$hw/rcvd_pkts") rx=$(cat "$hw/rx_packets")
check "sysfs: sent_pkts $sent = tx_packets $tx, rcvd_pkts $rcvd = rx_packets $rx, > 0" \
	test "$sent" = "$tx" -a "$rcvd" = "$rx" -a "$sent" -gt 0

diag "$(rdma statistic show link sroce0/1)"

# The same tracepoints through the tools people use on them: trace-cmd,
# perf and bpftrace (where installed) each see every completion of one
# ibv_rc_pingpong of $PP_N round trips on the client's device, sroce0:
# $PP_N sends and $PP_N receives.  (Only the client's: the server's last
# send completes after the client, and so the tool, has gone.)
PP_N=50
PP_WANT=$((2 * PP_N))

# pp_server: an ibv_rc_pingpong server on sroce1, in the background;
# false if it does not listen within 20 s.
pp_server() {
	run_ns ns0 timeout 300 ibv_rc_pingpong -d sroce1 -g "$G1" -n $PP_N \
		>pp-server.log 2>&1 &
	PP_SERVER=$!
	poll_until 20 tcp_listening ns0 18515
}

# traced TOOL ERE CMD...: run CMD (which wraps the pingpong client) after
# starting a server; an assertion that CMD's output shows $PP_WANT
# completions: as many lines matching ERE, or, if ERE ends in "([0-9]+)",
# the number that its last match ends with.
traced() {
	local tool=$1 ere=$2 n out
	shift 2
	if ! command -v "$tool" >/dev/null; then
		skip "$tool sees sroce_complete" "$tool is not installed"
		return
	fi
	if ! pp_server; then
		not_ok "$tool: ibv_rc_pingpong server" "$(cat pp-server.log)"
		return
	fi
	out=$("$@" 2>&1)
	wait "$PP_SERVER"
	if [[ $ere == *'([0-9]+)' ]]; then
		n=$(grep -Eo "$ere" <<<"$out" | tail -n 1 | grep -Eo '[0-9]+$')
	else
		n=$(grep -Ec "$ere" <<<"$out")
	fi
	if [ "$n" = $PP_WANT ]; then
		ok "$tool sees sroce0's $PP_WANT completions"
	else
		not_ok "$tool sees sroce0's $PP_WANT completions" "got ${n:-none}" \
			"$(tail -n 20 <<<"$out")"
	fi
}

# (bpftrace -c wants the program's one real path.)
PP_CLIENT=("$(readlink -f "$(command -v ip)")" netns exec ns0 timeout 240 ibv_rc_pingpong -d sroce0 -g "$G0"
	-n "$PP_N" 10.0.0.2)
traced trace-cmd 'sroce_complete: +dev=sroce0 .*status=SUCCESS ' \
	sh -c 'trace-cmd record -q -o tc.dat -e sroce:sroce_complete "$@" \
		>/dev/null && trace-cmd report -i tc.dat' sh "${PP_CLIENT[@]}"
# (No build-ids and no synthesized tasks: perf's start takes ~50 s
# under TCG otherwise, and only the events' text is read.)
traced perf 'sroce_complete: +dev=sroce0 .*status=SUCCESS ' \
	sh -c 'perf record -q -a -B -N --synth=no -o perf.data -e sroce:sroce_complete "$@" \
		>/dev/null && perf script -i perf.data' sh "${PP_CLIENT[@]}"
# bpftrace compiles its program against the kernel's headers or BTF: the
# stock kernels have both, the debug kernel neither.
if [ -e /sys/kernel/btf/vmlinux ] ||
	[ -e "/lib/modules/$(uname -r)/build/include/linux/kconfig.h" ]; then
	# shellcheck disable=SC2016 # bpftrace's program, not the shell's
	traced bpftrace '@ok: ([0-9]+)' bpftrace -c "${PP_CLIENT[*]}" -e \
		'tracepoint:sroce:sroce_complete /str(args->dev) == "sroce0" && args->status == 0/ { @ok = count(); }'
else
	skip "bpftrace sees sroce_complete" "this kernel has neither BTF nor headers"
fi

check "delete sroce0" run_ns ns0 rdma link delete sroce0
check "delete sroce1" run_ns ns0 rdma link delete sroce1
topo_clean
check "rmmod sroce" sroce_unload
tap_done

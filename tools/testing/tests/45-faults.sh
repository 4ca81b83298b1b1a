#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 900
#
# Allocation failures inside sroce (failslab and fail_page_alloc, scoped to
# the module with the stack filter: only allocations made with sroce's
# code on the stack fail): every one is an errno to the caller, leaves
# nothing behind and crashes nothing.
#
#  - systematic (../faults.py, with /proc/<task>/fail-nth): each allocation
#    of creating and deleting a device, opening it, PDs, CQs (and resize),
#    MRs, SRQs, QPs (RC, RC on an SRQ, UD), AHs, the RC state changes and
#    an RC send fails in turn;
#  - random: 10% of sroce's allocations fail, in any context, for 20 s
#    while two devices run ping-pongs (RC, UD, SRQ); then the programs
#    stop when told (nothing hangs in the kernel), and the devices work
#    again afterwards.
#
# Then the module must unload (no reference left behind); the harness
# checks the kernel log and, at the end of the VM run, kmemleak.  Needs
# CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and the stack trace filter (the
# debug kernel); skipped on kernels without them.
# shellcheck source=../lib.sh disable=SC2317 # functions called through check, poll_until
. "$(dirname "$0")/../lib.sh"

DBG=/sys/kernel/debug
ATTRS="failslab fail_page_alloc"
if [ ! -e $DBG/failslab/require-start ] || [ ! -d $DBG/fail_page_alloc ]; then
	echo "1..0 # SKIP no failslab/fail_page_alloc with a stack filter (not the debug kernel)"
	exit 0
fi
require_sroce

# fi_set FILE VALUE: set FILE in both fault attributes.
fi_set() {
	local a
	for a in $ATTRS; do
		echo "$2" >"$DBG/$a/$1" || return 1
	done
}

# Back to no injection at all, whatever happens.
fi_off() {
	fi_set probability 0
	fi_set require-start 0
	fi_set require-end 0xffffffffffffffff
	fi_set task-filter N
	echo "sroce-faults: off" >/dev/kmsg
}

# shellcheck disable=SC2317
cleanup() {
	[ -n "${server:-}" ] && kill "$server" 2>/dev/null
	fi_off 2>/dev/null
	topo_clean
}
trap cleanup EXIT

# text_range: "START END" of the module's code: /proc/modules gives where
# its text starts, the .ko the size of its executable sections (all in the
# one text allocation, page-aligned).  The .ko modprobe loaded, the guest's
# own copy: the host's may have been rebuilt since the VM booted.
text_range() {
	local base size=0 name sz flg ko
	base=$(awk '$1 == "sroce" { print $6 }' /proc/modules)
	ko=$(modinfo -n sroce) || return 1
	while read -r name _ _ _ sz _ flg _; do
		[[ $flg == *X* && $name != .init* ]] && size=$((size + 16#$sz))
	done < <(readelf -SW "$ko" | sed -n 's/^ *\[ *[0-9]*\] //p')
	[[ $base == 0x* && $base != 0x0000000000000000 && $size -gt 0 ]] || return 1
	size=$(((size + 4095) / 4096 * 4096))
	printf '%s 0x%x\n' "$base" $((base + size))
}

# run_faults CMD...: the PASS/FAIL lines of faults.py as assertions.
run_faults() {
	local line out rc=0
	out=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "${line#PASS }" ;;
		"FAIL "*) not_ok "${line#FAIL }" ;;
		"# "*) echo "$line" ;;
		*) diag "$line" ;;
		esac
	done <<<"$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
		not_ok "$*" "exit status $rc"
	fi
}

listening() { ip netns exec "$1" ss -ltn | grep -q ":$2 "; }

topo_veth
check "load sroce" sroce_load || tap_done
if ! range=$(text_range); then
	not_ok "sroce's text range" "$(grep '^sroce ' /proc/modules)"
	tap_done
fi
read -r start end <<<"$range"
diag "sroce text: $start-$end"

# Only allocations with sroce on the stack (32 frames deep), sleeping ones
# too, of any order; quietly (the kernel log stays readable).
fi_scope() {
	fi_set require-start "$start" && fi_set require-end "$end" &&
		fi_set stacktrace-depth 32 && fi_set ignore-gfp-wait N &&
		fi_set verbose 0 && fi_set times -1 && fi_set interval 1 &&
		fi_set probability 0 && fi_set task-filter N &&
		echo N >"$DBG/fail_page_alloc/ignore-gfp-highmem" &&
		echo 0 >"$DBG/fail_page_alloc/min-order"
}
# The harness lets allocation-failure reports through between these marks.
echo "sroce-faults: on" >/dev/kmsg
check "scope failslab and fail_page_alloc to sroce" fi_scope || tap_done

# --- systematic: each allocation in turn
run_faults run_ns ns1 "$PYTHON" "$SROCE_TESTING/faults.py" link sroce1 veth1
check "sroce1 still comes up" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
check "create sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
g0=$(rdma_gid_index sroce0 1 10.0.0.1)
# What the devices hold by themselves (the GSI QP and its PD and CQs).
res0=$(rdma resource show sroce0)
res1=$(rdma resource show sroce1)
run_faults run_ns ns0 "$PYTHON" "$SROCE_TESTING/faults.py" verbs sroce0 "${g0:-0}"
check_output "no object left on sroce0" "^${res0}\$" rdma resource show sroce0

# --- random: 10% of sroce's allocations fail while ping-pongs run.  The
# faults start once both ends have set up (their setup's failures are the
# sweeps' business) and last FAULT_SECS; then the programs are stopped.
FAULT_SECS=20
poll_until 10 rdma_gid_index sroce1 1 10.0.0.2
g1=$(rdma_gid_index sroce1 1 10.0.0.2)
port=18700
connected() { ip netns exec ns1 ss -tn state established | grep -q ":$1 *\$"; }
# Packets veth1 (sroce1, the client) has sent.
tx_packets() { ip netns exec ns1 cat /sys/class/net/veth1/statistics/tx_packets; }

# pingpong faults|clean NAME ARGS...: sroce0 serves, sroce1 connects; both
# must end, and without faults succeed.
pingpong() {
	local mode=$1 name=$2 rc=0 client tx=
	shift 2
	port=$((port + 1))
	# Not through run_ns: $! must be timeout's pid, which passes SIGTERM on
	# (ip netns exec execs it).
	ip netns exec ns0 timeout 150 "$@" -d sroce0 -g "$g0" -p $port >server.log 2>&1 &
	server=$!
	if ! poll_until 30 listening ns0 $port; then
		not_ok "$name: server listens" "$(cat server.log)"
		kill "$server" 2>/dev/null
		server=
		return 1
	fi
	ip netns exec ns1 timeout 150 "$@" -d sroce1 -g "$g1" -p $port 10.0.0.1 \
		>client.log 2>&1 &
	client=$!
	if [ "$mode" = faults ]; then
		# Faults, a few seconds to recover, then both are told to stop:
		# they must, within 20 s (a task stuck in sroce would not).
		poll_until 30 connected $port
		tx=$(tx_packets)
		fi_set probability 10
		sleep $FAULT_SECS
		fi_set probability 0
		tx=$(($(tx_packets) - tx))
		sleep 5
		kill -TERM "$client" "$server" 2>/dev/null
		if ! poll_until 20 bash -c "! kill -0 $client && ! kill -0 $server"; then
			not_ok "$name" "still running 20 s after SIGTERM" \
				"$(tail -n 5 client.log server.log)"
			kill -KILL "$client" "$server" 2>/dev/null
			server=
			return 1
		fi
	fi
	wait "$client" || rc=$?
	wait "$server" || rc=$((rc ? rc : $?))
	server=
	if [ $rc = 124 ] || { [ "$mode" = clean ] && [ $rc != 0 ]; } ||
		grep -q 'Segmentation' client.log server.log; then
		not_ok "$name" "exit status $rc" "$(tail -n 5 client.log server.log)"
		return 1
	fi
	if [ "$mode" = faults ] && [ "$tx" -lt 10 ]; then
		not_ok "$name" "only $tx packets sent during the faults"
		return 1
	fi
	ok "$name (exit status $rc${tx:+, $tx packets during the faults})"
	[ $rc = 0 ] || [ $rc = 143 ] || diag "$(tail -n 3 client.log server.log)"
}

# More iterations than fit in the time: the faults hit a running exchange.
for args in "ibv_rc_pingpong -s 4096 -n 100000" "ibv_ud_pingpong -s 512 -n 100000" \
	"ibv_srq_pingpong -s 4096 -n 100000 -q 4"; do
	# shellcheck disable=SC2086 # word splitting of $args wanted
	pingpong faults "traffic under faults: ${args%% *} ends" $args
done
for args in "ibv_rc_pingpong -s 4096 -n 50 -c" "ibv_ud_pingpong -s 512 -n 50 -c"; do
	# shellcheck disable=SC2086
	pingpong clean "afterwards: ${args%% *} works" $args
done
fi_off

check_output "sroce0 holds what it held" "^${res0}\$" rdma resource show sroce0
check_output "sroce1 holds what it held" "^${res1}\$" rdma resource show sroce1
check "delete sroce0" run_ns ns0 rdma link delete sroce0
check "delete sroce1" run_ns ns1 rdma link delete sroce1
check "rmmod sroce (no reference left)" sroce_unload
topo_clean
tap_done

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the guest side of the benchmarks, guest/*.sh, which
# tools/testing/run.sh runs as its tests (SROCE_TESTS_DIR) in a VM that
# bench.sh boots once per driver.  It sources ../lib.sh (TAP, the module,
# rdma_gid_index, topo_veth).  See Documentation/benchmarks.rst.
#
# Environment (bench.sh sets it; run.sh passes SROCE_* into the guest):
#   SROCE_BENCH_DRIVER   rxe or sroce: the RDMA driver of this boot
#   SROCE_BENCH_REPEAT   runs of every point (default 3)
#   SROCE_BENCH_RUN      only this run (1..REPEAT) in this boot: bench.sh
#                        boots each driver once a run, alternating them
#   SROCE_BENCH_SET      full or smoke: the points of ./points to run
#   SROCE_BENCH_MEMCPY   the memcpy_bw program, built on the host
#
# Every run is one TAP assertion, one line of $BENCH_OUT/results.csv:
#
#   kernel,driver,topology,test,size,qps,run,value,unit
#
# (value "NA" when the run failed, "inf" when perftest printed inf) and one
# line of $BENCH_OUT/progress.log, which bench.sh prints as it comes.  The
# port counters that moved during a run go to $BENCH_OUT/counters.csv:
#
#   kernel,driver,topology,test,size,qps,run,device,counter,delta

# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_OUT=/run/sroce/out
BENCH_DRIVER=${SROCE_BENCH_DRIVER:-sroce}
BENCH_REPEAT=${SROCE_BENCH_REPEAT:-3}
BENCH_SET=${SROCE_BENCH_SET:-full}
# "6.1", "6.12": the kernel column of the results.
BENCH_KERNEL=$(uname -r | sed 's/^\([0-9]*\.[0-9]*\).*/\1/')
# Seconds a perftest client may take; a run takes a few.
BENCH_RUN_TIMEOUT=60
# Each run gets its own TCP port, from this one up.
_bench_port=18000

# The two ends of the topology, set by the bench_topo_* functions: the
# network namespace ("" for the initial one), RDMA device and GID index of
# the server and of the client, and the address the client connects to.
BENCH_SNS='' BENCH_SDEV='' BENCH_SGID=''
BENCH_CNS='' BENCH_CDEV='' BENCH_CGID=''
BENCH_ADDR=10.0.0.1

# --------------------------------------------------------- recording ----

# bench_record TOPO TEST SIZE QPS RUN VALUE UNIT: one result.
bench_record() {
	local topo=$1 test=$2 size=$3 qps=$4 run=$5 value=$6 unit=$7 what

	echo "$BENCH_KERNEL,$BENCH_DRIVER,$topo,$test,$size,$qps,$run,$value,$unit" \
		>>"$BENCH_OUT/results.csv"
	what="$test $size"
	[ "$qps" = 1 ] || what+=" ($qps QPs)"
	echo "[$BENCH_KERNEL $BENCH_DRIVER $topo] $what run $run/$BENCH_REPEAT: $value $unit" \
		>>"$BENCH_OUT/progress.log"
}

# bench_note TOPO TEXT: a line of progress that is not a result.
bench_note() {
	echo "[$BENCH_KERNEL $BENCH_DRIVER $1] $2" >>"$BENCH_OUT/progress.log"
}

# bench_meta: what the report says about the VM, once per boot.
bench_meta() {
	local f=$BENCH_OUT/meta.txt

	[ -e "$f" ] && return 0
	{
		echo "release=$(uname -r)"
		echo "cpus=$(nproc)"
		echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		echo "cmdline=$(cat /proc/cmdline)"
		echo "mtu=$BENCH_MTU"
	} >"$f"
}

# bench_points: the points of $BENCH_SET, "TEST SIZE QPS ITERS" a line.
bench_points() {
	local test size qps iters sets

	while read -r test size qps iters sets; do
		case $test in '' | '#'*) continue ;; esac
		[ "$BENCH_SET" = full ] || [[ " $sets " == *" $BENCH_SET "* ]] ||
			continue
		echo "$test $size $qps $iters"
	done <"$BENCH_DIR/points"
}

# bench_sizes: the message sizes of the bandwidth points of the set.
bench_sizes() {
	bench_points | awk '$1 ~ /_bw$/ { print $2 }' | sort -nu
}

# ------------------------------------------------------------ driver ----

# bench_load: load this boot's driver; the test ends if that fails.
bench_load() {
	bench_meta
	if [ "$BENCH_DRIVER" = sroce ]; then
		require_sroce
		check "load sroce" sroce_load || bail_out "cannot load sroce"
		# The CRC-32 sroce timed and chose at load (crc.c).
		grep -q '^icrc=' "$BENCH_OUT/meta.txt" 2>/dev/null ||
			echo "icrc=$(dmesg | sed -n 's/.*sroce: ICRC CRC-32: //p' | tail -n 1)" \
				>>"$BENCH_OUT/meta.txt"
		bench_timing
	else
		check "load rdma_rxe" modprobe rdma_rxe || bail_out "cannot load rdma_rxe"
	fi
}

# bench_timing: once a boot, the per-byte costs sroce timed when it loaded
# (crc.c's load_timing parameter, MB/s over 4 KiB), as results of
# topology "cpu" and size 4096: "icrc", the ICRC candidate in use,
# "kcopy_page" and "kmemcpy", the receive path's copies (mem.c).  The
# report makes the per-byte bound of a software device out of them.
# Also notes loopback_icrc, which puts the ICRC back on the loopback.
bench_timing() {
	local p=/sys/module/sroce/parameters timing impl run

	grep -q '^loopback_icrc=' "$BENCH_OUT/meta.txt" 2>/dev/null && return 0
	echo "loopback_icrc=$(cat "$p/loopback_icrc" 2>/dev/null)" >>"$BENCH_OUT/meta.txt"
	if ! timing=$(cat "$p/load_timing" 2>/dev/null); then
		diag "no load_timing: the report has no per-byte bound"
		return 0
	fi
	impl=$(cat "$p/icrc_impl")
	impl=${impl%%:*}
	run=$(bench_runs | head -n 1)
	ok "sroce timed at load (MB/s, 4 KiB): ${timing//$'\n'/, }; ICRC: $impl"
	_bench_timing_record "$run" icrc "$impl" <<<"$timing"
	_bench_timing_record "$run" kcopy_page copy_page <<<"$timing"
	_bench_timing_record "$run" kmemcpy memcpy <<<"$timing"
}

# _bench_timing_record RUN TEST NAME: the MB/s of line NAME of load_timing
# (on stdin) as result TEST.
_bench_timing_record() {
	local value

	value=$(awk -v n="$3" '$1 == n { print $2 }')
	bench_record cpu "$2" 4096 1 "$1" "${value:-NA}" MB/s
}

# _bench_in NS CMD...: run CMD in namespace NS, or here if NS is "".
_bench_in() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# bench_dev_add NS DEV NETDEV ADDR: create RDMA device DEV on NETDEV in
# namespace NS and print the GID index of ADDR once it is there.
bench_dev_add() {
	local ns=$1 dev=$2 netdev=$3 addr=$4

	_bench_in "$ns" rdma link add "$dev" type "$BENCH_DRIVER" netdev "$netdev" ||
		return 1
	# The GID table is in sysfs, seen from every namespace.
	poll_until 10 rdma_gid_index "$dev" 1 "$addr" || return 1
	rdma_gid_index "$dev" 1 "$addr"
}

# --------------------------------------------------------- topologies ----

# The MTU of the veths: 9000 by default, so that both drivers use the
# largest RoCE path MTU, 4096, as RoCE networks do; SROCE_BENCH_MTU=1500
# measures them at 1024.
BENCH_MTU=${SROCE_BENCH_MTU:-9000}

# bench_mtu [NS0 NS1]: set the MTU of veth0 (in NS0) and veth1 (in NS1).
bench_mtu() {
	_bench_in "${1:-}" ip link set veth0 mtu "$BENCH_MTU" &&
		_bench_in "${2:-}" ip link set veth1 mtu "$BENCH_MTU"
}

# bench_topo_loop: one device talking to itself, in the initial namespace
# (rdma_rxe works only there): veth0 10.0.0.1 with its peer veth1 up,
# DRIVER0 on veth0 as server and client.
bench_topo_loop() {
	local dev=${BENCH_DRIVER}0

	ip link add veth0 type veth peer name veth1 &&
		ip addr add 10.0.0.1/24 dev veth0 && bench_mtu &&
		ip link set veth0 up && ip link set veth1 up || return 1
	BENCH_SDEV=$dev BENCH_CDEV=$dev
	BENCH_SGID=$(bench_dev_add "" "$dev" veth0 10.0.0.1) || return 1
	BENCH_CGID=$BENCH_SGID
}

# bench_topo_veth: lib.sh's topo_routed_veth (two devices on the two ends
# of a veth, both in the initial namespace, the traffic on the wire):
# DRIVER0 on veth0 10.0.0.1 (server), DRIVER1 on veth1 10.0.0.2 (client).
bench_topo_veth() {
	topo_routed_veth && bench_mtu || return 1
	BENCH_SDEV=${BENCH_DRIVER}0 BENCH_CDEV=${BENCH_DRIVER}1
	BENCH_SGID=$(bench_dev_add "" "$BENCH_SDEV" veth0 10.0.0.1) &&
		BENCH_CGID=$(bench_dev_add "" "$BENCH_CDEV" veth1 10.0.0.2)
}

# bench_topo_netns: two namespaces joined by a veth (lib.sh's topo_veth):
# DRIVER0 in ns0 on veth0 10.0.0.1 (server), DRIVER1 in ns1 on veth1
# 10.0.0.2 (client).
bench_topo_netns() {
	topo_veth && bench_mtu ns0 ns1 || return 1
	BENCH_SNS=ns0 BENCH_CNS=ns1
	BENCH_SDEV=${BENCH_DRIVER}0 BENCH_CDEV=${BENCH_DRIVER}1
	BENCH_SGID=$(bench_dev_add ns0 "$BENCH_SDEV" veth0 10.0.0.1) &&
		BENCH_CGID=$(bench_dev_add ns1 "$BENCH_CDEV" veth1 10.0.0.2)
}

# bench_topo_clean: undo whichever topology is up.
bench_topo_clean() {
	_bench_in "$BENCH_CNS" rdma link delete "$BENCH_CDEV" 2>/dev/null
	_bench_in "$BENCH_SNS" rdma link delete "$BENCH_SDEV" 2>/dev/null
	topo_clean
	topo_routed_veth_clean
}

# bench_topo TOPO: set up TOPO (loop, veth or netns), or bail out; it is
# undone when the test exits.
bench_topo() {
	trap bench_topo_clean EXIT
	if ! "bench_topo_$1" >topo.log 2>&1; then
		not_ok "set up the $1 topology" "$(_tail_output "$(cat topo.log)")"
		bail_out "no $1 topology"
	fi
	ok "set up the $1 topology"
	diag "server $BENCH_SDEV (GID $BENCH_SGID${BENCH_SNS:+, $BENCH_SNS})," \
		"client $BENCH_CDEV (GID $BENCH_CGID${BENCH_CNS:+, $BENCH_CNS})"
}

# ------------------------------------------------------------ perftest ----

_bench_listening() {
	_bench_in "$1" ss -Hltn "sport = :$2" | grep -q .
}

_bench_gone() {
	! kill -0 "$1" 2>/dev/null
}

# _bench_counters: "device counter value" for every port counter of the
# two ends' RDMA devices (the same one on the loopback).
_bench_counters() {
	local ns_dev ns dev

	for ns_dev in "$BENCH_SNS:$BENCH_SDEV" "$BENCH_CNS:$BENCH_CDEV"; do
		ns=${ns_dev%%:*} dev=${ns_dev#*:}
		_bench_in "$ns" sh -c "cd /sys/class/infiniband/$dev/ports/1/hw_counters 2>/dev/null &&
			grep -H . *" | sed "s/^/$dev /; s/:/ /"
	done | sort -u
}

# bench_counters_record TOPO TEST SIZE QPS RUN BEFORE: one line of
# $BENCH_OUT/counters.csv per counter that moved since BEFORE (the output
# of _bench_counters), so that a slow run can be told from a lossy one.
bench_counters_record() {
	local topo=$1 test=$2 size=$3 qps=$4 run=$5 before=$6

	awk -v pre="$BENCH_KERNEL,$BENCH_DRIVER,$topo,$test,$size,$qps,$run" '
		NR == FNR { old[$1 " " $2] = $3; next }
		$3 != old[$1 " " $2] { print pre "," $1 "," $2 "," $3 - old[$1 " " $2] }
	' <(printf '%s\n' "$before") <(_bench_counters) >>"$BENCH_OUT/counters.csv"
}

# _bench_kernel_ticks: the guest's kernel CPU time so far, in clock ticks
# (/proc/stat's system + irq + softirq over all CPUs).  perftest polls its
# CQs from user space on both ends, so user time is the same spin for
# both drivers; kernel time is the driver's work (doorbells, the engine,
# the stack, the copies).
_bench_kernel_ticks() {
	awk '$1 == "cpu" { print $4 + $7 + $8; exit }' /proc/stat
}

# bench_cpu_record TOPO TEST SIZE QPS ITERS RUN TICKS: the kernel
# CPU-seconds a bandwidth run cost per GB it moved (size x iterations x
# QPs), from TICKS, the kernel ticks the run took.
bench_cpu_record() {
	local topo=$1 test=$2 size=$3 qps=$4 iters=$5 run=$6 ticks=$7 value

	value=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v b="$((size * iters * qps))" \
		'BEGIN { printf "%.3f", t / hz / (b / 1e9) }')
	bench_record "$topo" "$test" "$size" "$qps" "$run" "$value" "kCPU-s/GB"
}

# bench_perf TOPO TEST SIZE QPS ITERS RUN: one perftest run, server then
# client, on the current topology; records the result (for a bandwidth
# run also the kernel CPU time it cost per GB).
bench_perf() {
	local topo=$1 test=$2 size=$3 qps=$4 iters=$5 run=$6
	local port args row unit value mpps rc=0 what server out counters ticks

	_bench_port=$((_bench_port + 1))
	port=$_bench_port
	args=(-F -p "$port" -s "$size" -n "$iters")
	[ "$qps" = 1 ] || args+=(-q "$qps")
	what="$test $size"
	[ "$qps" = 1 ] || what+=" ($qps QPs)"
	what+=" run $run/$BENCH_REPEAT"

	counters=$(_bench_counters)
	_bench_in "$BENCH_SNS" timeout $((BENCH_RUN_TIMEOUT + 30)) \
		"$test" -d "$BENCH_SDEV" -x "$BENCH_SGID" "${args[@]}" >server.log 2>&1 &
	server=$!
	if ! poll_until 30 _bench_listening "$BENCH_SNS" "$port"; then
		kill "$server" 2>/dev/null
		wait "$server"
		not_ok "$what" "the server did not listen" "$(tail -n 20 server.log)"
		bench_record "$topo" "$test" "$size" "$qps" "$run" NA -
		return 1
	fi
	ticks=$(_bench_kernel_ticks)
	out=$(_bench_in "$BENCH_CNS" timeout "$BENCH_RUN_TIMEOUT" \
		"$test" -d "$BENCH_CDEV" -x "$BENCH_CGID" "${args[@]}" "$BENCH_ADDR" 2>&1) ||
		rc=$?
	ticks=$(($(_bench_kernel_ticks) - ticks))
	# The result row starts with the size and the iteration count.
	row=$(grep -E "^[[:space:]]*${size}[[:space:]]+[0-9]+[[:space:]]" <<<"$out" | tail -n 1)
	if [[ $test == *_lat ]]; then
		# #bytes #iterations t_min t_max t_typical ...: the median.
		unit=usec
		value=$(awk '{ print $5 }' <<<"$row")
	else
		# #bytes #iterations BW-peak BW-average MsgRate
		unit=MB/s
		value=$(awk '{ print $4 }' <<<"$row")
		mpps=$(awk '{ print $5 }' <<<"$row")
	fi
	# A server that outlives its client would hold up the next run.
	poll_until 10 _bench_gone "$server" || kill "$server" 2>/dev/null
	wait "$server"
	bench_counters_record "$topo" "$test" "$size" "$qps" "$run" "$counters"

	if [ "$rc" -ne 0 ] || ! [[ $value =~ ^[0-9.]+$|^inf$ ]]; then
		not_ok "$what" "exit status $rc" "client:" "$(_tail_output "$out")" \
			"server:" "$(tail -n 10 server.log)"
		bench_record "$topo" "$test" "$size" "$qps" "$run" NA "$unit"
		return 1
	fi
	ok "$what: $value $unit"
	bench_record "$topo" "$test" "$size" "$qps" "$run" "$value" "$unit"
	[ -z "${mpps:-}" ] ||
		bench_record "$topo" "$test" "$size" "$qps" "$run" "$mpps" Mpps
	[[ $test == *_lat ]] ||
		bench_cpu_record "$topo" "$test" "$size" "$qps" "$iters" "$run" "$ticks"
}

# bench_runs: the numbers of the runs this boot makes.
bench_runs() {
	if [ -n "${SROCE_BENCH_RUN:-}" ]; then
		echo "$SROCE_BENCH_RUN"
	else
		seq 1 "$BENCH_REPEAT"
	fi
}

# bench_matrix TOPO: every point of the set, once for each of this boot's
# runs; the repeats go round the whole matrix, so that a slow spell of the
# host does not land on all the runs of one point.
bench_matrix() {
	local topo=$1 run p test size qps iters points

	mapfile -t points < <(bench_points)
	for run in $(bench_runs); do
		for p in "${points[@]}"; do
			read -r test size qps iters <<<"$p"
			bench_perf "$topo" "$test" "$size" "$qps" "$iters" "$run"
		done
	done
}

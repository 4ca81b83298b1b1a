#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks: perftest on sroce and on the in-tree rdma_rxe, and the
# memcpy limit, in the same VM shape, one boot per driver and kernel, back
# to back, so that the ratios come from one run.  See
# Documentation/benchmarks.rst.
#
#   tools/testing/bench/bench.sh [--smoke] [--kernel VER]... [--repeat N]
#                                [--out DIR] [--module-dir DIR]
#
#   --smoke           the points marked "smoke" in ./points, once, on the
#                     first kernel: checks that the pipeline works
#   --kernel VER      a kernel release, or "6.1", "6.12"; may be repeated;
#                     default: both (tools/kernels.sh); env BENCH_KERNELS
#   --repeat N        runs of every point, default 3 (smoke: 1); env
#                     BENCH_REPEAT
#   --out DIR         default build/bench (smoke: build/bench-smoke)
#   --module-dir DIR  sroce is DIR/<VER>/sroce.ko; default build/
#
# For each kernel and run it boots a VM with rdma_rxe, then one with sroce
# (tools/testing/run.sh running guest/*.sh), each making that run of every
# point, so that both drivers see the same spells of a busy host; it
# prints every result as it comes, then writes into DIR:
#
#   results.csv       every run: kernel,driver,topology,test,size,qps,run,value,unit
#   counters.csv      the port counters that moved in each run (lib.sh)
#   summary.csv       per point: the medians, spreads and ratios
#   report.md         the tables and the targets, printed at the end
#   bw-<kernel>.png   bandwidth against message size
#   vm/<driver>/run<N>/<release>/   what run.sh left (TAP, dmesg, console)
#   logs/<release>-<driver>-run<N>.log   run.sh's output
#
# SROCE_KERNEL_CMDLINE adds kernel parameters to both drivers' VMs (e.g.
# "clocksource=tsc tsc=reliable": see the documentation).  Exit status: 1
# if a point has no result or a VM reported a failure (the targets do not
# count), 2 on bad usage.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PYTHON=/usr/bin/python3

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed -n '1,20p' >&2
	exit 2
}

die() { echo "bench.sh: $*" >&2; exit 2; }

SET=full
KERNELS=()
REPEAT=${BENCH_REPEAT:-}
OUT=
MODULE_DIR=$REPO/build

parse_args() {
	local k

	while [ $# -gt 0 ]; do
		case $1 in
		--smoke)      SET=smoke; shift ;;
		--kernel)     [ $# -ge 2 ] || usage; KERNELS+=("$2"); shift 2 ;;
		--repeat)     [ $# -ge 2 ] || usage; REPEAT=$2; shift 2 ;;
		--out)        [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
		--module-dir) [ $# -ge 2 ] || usage; MODULE_DIR=$2; shift 2 ;;
		-h|--help)    usage ;;
		*)            echo "bench.sh: unknown argument: $1" >&2; usage ;;
		esac
	done
	if [ ${#KERNELS[@]} -eq 0 ]; then
		for k in ${BENCH_KERNELS:-}; do KERNELS+=("$k"); done
	fi
	if [ ${#KERNELS[@]} -eq 0 ]; then
		mapfile -t KERNELS < <("$REPO/tools/kernels.sh")
		[ $SET = full ] || KERNELS=("${KERNELS[0]}")
	fi
	if [ $SET = full ]; then
		: "${REPEAT:=3}" "${OUT:=$REPO/build/bench}"
	else
		: "${REPEAT:=1}" "${OUT:=$REPO/build/bench-smoke}"
	fi
	[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a number, not '$REPEAT'"
	OUT=$(realpath -m "$OUT")
	MODULE_DIR=$(realpath -m "$MODULE_DIR")
}

# "6.1" and "6.12" mean what tools/kernels.sh says (run.sh knows that too,
# but the results are filed by release).
resolve_kernels() {
	local i k

	for i in "${!KERNELS[@]}"; do
		k=${KERNELS[$i]}
		[ -d "/lib/modules/$k" ] || k=$("$REPO/tools/kernels.sh" "$k") ||
			die "no kernel ${KERNELS[$i]}"
		[ -e "$MODULE_DIR/$k/sroce.ko" ] ||
			die "no $MODULE_DIR/$k/sroce.ko: build it first (make both)"
		KERNELS[i]=$k
	done
}

# Seconds one guest test may take in a boot that makes one run: 40 s a
# point is several times what a run takes, so only a hang reaches it.
test_timeout() {
	local n
	n=$(awk -v set="$SET" '$1 !~ /^#/ && NF >= 4 &&
		(set == "full" || index(" " $5 " ", " " set " ")) { n++ }
		END { print n + 0 }' "$HERE/points")
	echo $((120 + 40 * n))
}

# boot K DRIVER RUN: one VM, run RUN of all the guest tests of DRIVER;
# shows progress.
boot() {
	local k=$1 driver=$2 run=$3 tests="10-memcpy 20-loop 30-veth"
	local vmdir=$OUT/vm/$2/run$3/$1 log=$OUT/logs/$1-$2-run$3.log
	local pid rc=0 start=$SECONDS

	# rdma_rxe works only in the initial namespace: no netns topology.
	[ "$driver" = rxe ] || tests+=" 40-netns"
	rm -rf "$vmdir"
	mkdir -p "$vmdir" "$OUT/logs"
	: >"$vmdir/progress.log"
	SROCE_TESTS_DIR=$HERE/guest SROCE_BENCH_DRIVER=$driver \
		SROCE_BENCH_REPEAT=$REPEAT SROCE_BENCH_RUN=$run SROCE_BENCH_SET=$SET \
		SROCE_BENCH_MEMCPY=$OUT/memcpy_bw \
		"$REPO/tools/testing/run.sh" --kernel "$k" --out "$OUT/vm/$driver/run$run" \
		--module-dir "$MODULE_DIR" --tests "$tests" \
		--timeout "$(test_timeout)" >"$log" 2>&1 &
	pid=$!
	# run.sh passes SIGTERM on to qemu; a background job ignores SIGINT.
	trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
	tail -q -n +1 -s 1 --pid="$pid" -F "$log" "$vmdir/progress.log" 2>/dev/null || true
	wait "$pid" || rc=$?
	trap - INT TERM
	[ ! -e "$vmdir/results.csv" ] || cat "$vmdir/results.csv" >>"$OUT/results.csv"
	[ ! -e "$vmdir/counters.csv" ] || cat "$vmdir/counters.csv" >>"$OUT/counters.csv"
	echo "$k $driver run $run rc=$rc secs=$((SECONDS - start)) $(tail -n 1 "$log")" >>"$OUT/vms.txt"
	[ "$rc" -eq 0 ] || FAILED_VMS+=("$k $driver run $run")
}

main() {
	local k driver run rc=0 start=$SECONDS

	parse_args "$@"
	resolve_kernels
	mkdir -p "$OUT"
	rm -rf "$OUT/results.csv" "$OUT/counters.csv" "$OUT/vms.txt" "$OUT"/bw-*.png \
		"$OUT/vm" "$OUT/logs"
	make -s -C "$HERE" OUT="$OUT" || die "cannot build memcpy_bw"
	echo "bench: $SET set, ${REPEAT} run(s) a point, kernels: ${KERNELS[*]}, results in $OUT"
	FAILED_VMS=()
	for k in "${KERNELS[@]}"; do
		for run in $(seq 1 "$REPEAT"); do
			for driver in rxe sroce; do
				boot "$k" "$driver" "$run"
			done
		done
	done
	"$PYTHON" "$HERE/report.py" --out "$OUT" --points "$HERE/points" \
		--set "$SET" --repeat "$REPEAT" \
		--commit "$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)" \
		"${KERNELS[@]}" || rc=$?
	if [ ${#FAILED_VMS[@]} -gt 0 ]; then
		echo "bench: a VM reported failures: ${FAILED_VMS[*]} (see $OUT/logs/)"
		rc=1
	fi
	echo "bench: done in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
	return "$rc"
}

main "$@"

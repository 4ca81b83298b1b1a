#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make soak": RC RDMA_WRITE, RDMA_READ and SEND of SROCE_SOAK_BYTES
# (default 4G) through netem (5 % loss, 5 % reorder, 1 % duplication,
# 0.1 % corruption, both directions), every byte checked: soak/46-soak.sh
# with a long timeout (soak/46-soak-long.sh), one VM per kernel.  Shows the
# test's progress lines as they come, then a table: kernel, bytes, time,
# MB/s and the retransmission counters of both devices.  The last line is
# "N passed, N failed".
#
#   tools/testing/soak.sh [--debug] [--kernel VER]... [--out DIR]
#
#   --debug       on the debug kernel (KASAN, lockdep, kmemleak; built or
#                 reused as for "make test-debug"), SROCE_SOAK_BYTES
#                 defaulting to 32M (it moves about 0.3 MB/s)
#   --kernel VER  as run.sh's (default: both stock kernels)
#   --out DIR     results (default build/soak-results); the table is
#                 DIR/summary.txt
#
# Settings (environment): SROCE_SOAK_BYTES, SROCE_SOAK_QPS (2),
# SROCE_SOAK_STEP (a progress line per this many bytes; default an
# eighth), SROCE_SOAK_WAIT (seconds a QP may go without a completion, 60),
# SROCE_SOAK_NETEM (other netem options, or "none").

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=steps.sh
. "$HERE/steps.sh"
export STEP_LOGS=$REPO/build/soak-logs
TEST=46-soak-long
OUT=$REPO/build/soak-results
DEBUG=0
KERNELS=()

while [ $# -gt 0 ]; do
	case $1 in
	--debug) DEBUG=1; shift ;;
	--kernel) KERNELS+=("$2"); shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: $0 [--debug] [--kernel VER]... [--out DIR]" >&2; exit 2 ;;
	esac
done
OUT=$(realpath -m "$OUT")
export SROCE_TESTS_DIR=$HERE/soak
if [ $DEBUG = 1 ]; then
	export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-32M}
else
	export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-4G}
fi

# run_one K [RUN.SH ARG...]: run.sh on kernel K, with the test's progress
# lines shown as they land in its TAP file.
run_one() {
	local k=$1 rpid rc=0
	shift
	"$HERE/run.sh" --kernel "$k" --tests $TEST --out "$OUT" "$@" &
	rpid=$!
	tail --pid="$rpid" -n +1 -F "$OUT/$k/tests/$TEST.tap" 2>/dev/null |
		sed -nu "s/^# soak-progress: /[$k] /p" &
	wait "$rpid" || rc=$?
	wait
	return $rc
}

# row K: the table row of kernel K, from its "# soak-summary:" line.
row() {
	local k=$1 tap=$OUT/$1/tests/$TEST.tap line verdict
	line=$(grep '^# soak-summary:' "$tap" 2>/dev/null | tail -n 1)
	verdict=ok
	grep -q '^not ok' "$tap" 2>/dev/null && verdict=FAIL
	[ -e "$OUT/$k/tests/$TEST.done" ] || verdict="FAIL (did not finish)"
	awk -v k="$k" -v v="$verdict" -v line="$line" 'BEGIN {
		n = split(line, w, " ")
		for (i = 1; i <= n; i++) if (split(w[i], kv, "=") == 2) f[kv[1]] = kv[2]
		printf "%-26s %12s %8s %7s %15s %12s %15s %17s %12s %14s %13s  %s\n", k,
			f["bytes"] == "" ? "-" : f["bytes"],
			f["ms"] == "" ? "-" : sprintf("%.0fs", f["ms"] / 1000),
			f["mbps"] == "" ? "-" : f["mbps"],
			f["retrans_timeout"] == "" ? "-" : f["retrans_timeout"],
			f["seq_nak_rcvd"] == "" ? "-" : f["seq_nak_rcvd"],
			f["out_of_sequence"] == "" ? "-" : f["out_of_sequence"],
			f["duplicate_request"] == "" ? "-" : f["duplicate_request"],
			f["rx_drop_icrc"] == "" ? "-" : f["rx_drop_icrc"],
			f["retry_exceeded"] == "" ? "-" : f["retry_exceeded"],
			f["failed_rounds"] == "" ? "-" : f["failed_rounds"], v
	}'
}

header() {
	printf '%-26s %12s %8s %7s %15s %12s %15s %17s %12s %14s %13s  %s\n' kernel bytes \
		time MB/s retrans_timeout seq_nak_rcvd out_of_sequence duplicate_request \
		rx_drop_icrc retry_exceeded failed_rounds result
}

echo "soak: $SROCE_SOAK_BYTES per kernel, results in $OUT"
step "build the integrity tester" make -C "$REPO/tools/testing/integrity" --no-print-directory
if [ $DEBUG = 1 ]; then
	if ! step "debug kernel" "$REPO/tools/debug-kernel/build.sh"; then
		steps_summary
		exit 1
	fi
	cache=$("$REPO/tools/debug-kernel/build.sh") || exit 1
	rel=$(cat "$cache/release")
	step "build $rel" make -C "$REPO" --no-print-directory modules KDIR="$cache/build"
	suite "soak-$rel" run_one "$rel" --kernel-image "$cache/bzImage" \
		--modules-root "$cache/modroot"
	KERNELS=("$rel")
else
	[ ${#KERNELS[@]} -gt 0 ] || mapfile -t KERNELS < <("$REPO/tools/kernels.sh")
	for k in "${KERNELS[@]}"; do
		[ -d "/lib/modules/$k" ] || k=$("$REPO/tools/kernels.sh" "$k") || exit 2
		step "build $k" make -C "$REPO" --no-print-directory modules KDIR="/lib/modules/$k/build"
	done
	for i in "${!KERNELS[@]}"; do
		k=${KERNELS[$i]}
		[ -d "/lib/modules/$k" ] || k=$("$REPO/tools/kernels.sh" "$k")
		KERNELS[i]=$k
		suite "soak-$k" run_one "$k"
	done
fi

mkdir -p "$OUT"
{
	echo
	echo "soak: $SROCE_SOAK_BYTES, netem ${SROCE_SOAK_NETEM:-delay 1ms reorder 5% 50% loss 5% duplicate 1% corrupt 0.1%}," \
		"${SROCE_SOAK_QPS:-2} QPs; counters summed over sroce0 and sroce1"
	header
	for k in "${KERNELS[@]}"; do
		row "$k"
	done
} | tee "$OUT/summary.txt"
steps_summary

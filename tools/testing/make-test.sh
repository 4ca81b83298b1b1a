#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make test": build sroce for both kernels, run "make check", then the VM
# test suite on both kernels, the interop tests against rdma_rxe and the
# benchmark smoke (make bench-smoke).  Each build and each check counts as one
# test next to the suite's assertions; the last line is the total,
# "N passed, N failed", and the exit status is non-zero on any failure.
#
#   tools/testing/make-test.sh [--tests "NAME..."]   (make test T="NAME...")

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LOGS=$REPO/build/test-logs
TESTS=

while [ $# -gt 0 ]; do
	case $1 in
	--tests) TESTS=$2; shift 2 ;;
	*) echo "usage: $0 [--tests \"NAME...\"]" >&2; exit 2 ;;
	esac
done

passed=0
failed=0
mkdir -p "$LOGS"

# step NAME CMD...: run one build/check step, its output to a log file.
step() {
	local name=$1 log=$LOGS/$1.log start=$SECONDS
	shift
	if "$@" >"$log" 2>&1; then
		passed=$((passed + 1))
		printf '%-28s ok (%ds)\n' "$name" $((SECONDS - start))
	else
		failed=$((failed + 1))
		printf '%-28s FAILED (%ds), log: %s\n' "$name" $((SECONDS - start)) "$log"
		tail -n 30 "$log" | sed 's/^/    /'
	fi
}

kernels=$("$REPO/tools/kernels.sh") || { echo "0 passed, 1 failed"; exit 1; }
for v in $kernels; do
	step "build $v" make -C "$REPO" --no-print-directory modules KDIR=/lib/modules/$v/build
done
step "build the integrity tester" make -C "$REPO/tools/testing/integrity" --no-print-directory
step "sparse (C=2), both kernels" make -C "$REPO" --no-print-directory sparse
step "checkpatch --strict" make -C "$REPO" --no-print-directory checkpatch

# suite NAME CMD...: run a suite that ends with "N passed, N failed[, N
# skipped]" and add its counts.  A suite that died without its summary, or
# that failed without saying so, still counts as one failure.
skipped=0
suite() {
	local name=$1 log=$LOGS/$1.log summary p=0 f=0 s=0 rc
	shift
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$summary" ]; then
		p=${summary%% passed*}
		f=${summary#*passed, }
		f=${f%% failed*}
		s=$(sed -n 's/.*, \([0-9]*\) skipped$/\1/p' <<<"$summary")
	fi
	if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
		f=$((f + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + ${s:-0}))
}

args=()
[ -n "$TESTS" ] && args+=(--tests "$TESTS")
suite vm-tests "$HERE/run.sh" "${args[@]}"
# The wire against the stock rdma_rxe, sroce as server and as client.
[ -z "$TESTS" ] && suite interop "$HERE/interop.sh"
# The benchmark pipeline on a few points: passes when the report has them
# all; the numbers do not count (Documentation/benchmarks.rst).
[ -z "$TESTS" ] && step "bench smoke" bash "$HERE/bench/bench.sh" --smoke

echo
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make test": build sroce for both kernels, run "make check", then the VM
# test suite on both kernels, the interop tests against rdma_rxe, and on
# the debug kernel (built once per machine, then cached) the KUnit suites
# ("make kunit") and a short part of the VM suite ("make test-debug
# --short": KASAN, lockdep, kmemleak, fault injection), and last the
# benchmark smoke (make bench-smoke: the pipeline, not the numbers).  Each
# build and each check counts as one test next to the suites' assertions;
# the last line is the total, "N passed, N failed", and the exit status is
# non-zero on any failure.
#
#   tools/testing/make-test.sh [--tests "NAME..."]   (make test T="NAME...")
#
# With --tests, only those VM tests run, on the stock kernels.
# SROCE_TEST_DEBUG=0 leaves out the debug kernel's part.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=steps.sh
. "$HERE/steps.sh"
export STEP_LOGS=$REPO/build/test-logs
TESTS=

while [ $# -gt 0 ]; do
	case $1 in
	--tests) TESTS=$2; shift 2 ;;
	*) echo "usage: $0 [--tests \"NAME...\"]" >&2; exit 2 ;;
	esac
done

kernels=$("$REPO/tools/kernels.sh") || { echo "0 passed, 1 failed"; exit 1; }
for v in $kernels; do
	step "build $v" make -C "$REPO" --no-print-directory modules KDIR="/lib/modules/$v/build"
done
step "build the integrity tester" make -C "$REPO/tools/testing/integrity" --no-print-directory
step "build the hostile-user tester" make -C "$REPO/tools/testing/hostile" --no-print-directory
step "sparse (C=2), both kernels" make -C "$REPO" --no-print-directory sparse
step "checkpatch --strict" make -C "$REPO" --no-print-directory checkpatch

args=()
[ -n "$TESTS" ] && args+=(--tests "$TESTS")
suite vm-tests "$HERE/run.sh" "${args[@]}"
if [ -z "$TESTS" ]; then
	# The wire against the stock rdma_rxe: sroce as the server on one
	# kernel, as the client on the other (make interop: all four).
	set -- $kernels
	suite "interop $1 sroce-rxe" "$HERE/interop.sh" --kernel "$1" --pair sroce-rxe
	suite "interop ${2:-$1} rxe-sroce" "$HERE/interop.sh" --kernel "${2:-$1}" --pair rxe-sroce
	if [ "${SROCE_TEST_DEBUG:-1}" != 0 ]; then
		suite kunit "$HERE/kunit.sh"
		suite test-debug-short "$REPO/tools/debug-kernel/test-debug.sh" --short
	fi
	# The benchmark pipeline on a few points: passes when the report
	# has them all; the numbers do not count (Documentation/benchmarks.rst).
	step "bench smoke" bash "$HERE/bench/bench.sh" --smoke
fi
steps_summary

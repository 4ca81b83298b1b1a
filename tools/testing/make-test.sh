#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make test": build sroce for both kernels and Debian's two cloud kernels,
# run "make check", then the VM test suite on both kernels, the interop
# tests against rdma_rxe (one pair), on the debug kernel (built once per
# machine, then cached) the KUnit suites ("make kunit") and a short part
# of the VM suite ("make test-debug --short": KASAN, lockdep, kmemleak,
# fault injection, the ULPs under loss), the second interop pair, a smoke
# of the suite on the two cloud kernels (CLOUD_SMOKE below: booted with
# virtio-fs, they have no 9p), and last the benchmark smoke (make
# bench-smoke: the pipeline, not the numbers).  Each build and each check
# counts as one test next to the suites' assertions; the last line is the
# total, "N passed, N failed", and the exit status is non-zero on any
# failure.
#
#   tools/testing/make-test.sh [--tests "NAME..."]   (make test T="NAME...")
#
# With --tests, only those VM tests run, on the stock kernels.  Without,
# a few tests of sroce's own engine run on one kernel each (see
# ONE_KERNEL_TESTS below; SROCE_TEST_ALL=1 runs all on both).
#
# CI stops make test at 90 minutes.  SROCE_TEST_BUDGET_MIN (default 80)
# is what the parts after the first interop pair -- the debug kernel's,
# the second pair, the cloud kernels' smoke, the benchmark smoke, in that
# order -- may bring it to: one that would go past is skipped and counted
# as skipped, saying so (a slow machine, a debug kernel to build); 0 runs
# them all whatever the time.
# SROCE_TEST_DEBUG=0 leaves out the debug kernel's part.  A debug kernel
# not built yet builds in the background, at idle priority, while the VM
# tests run.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=steps.sh
. "$HERE/steps.sh"
export STEP_LOGS=$REPO/build/test-logs
TESTS=
STEP_BUDGET_MIN=${SROCE_TEST_BUDGET_MIN:-80}
[ "$STEP_BUDGET_MIN" != 0 ] || STEP_BUDGET_MIN=

while [ $# -gt 0 ]; do
	case $1 in
	--tests) TESTS=$2; shift 2 ;;
	*) echo "usage: $0 [--tests \"NAME...\"]" >&2; exit 2 ;;
	esac
done

kernels=$("$REPO/tools/kernels.sh") || { echo "0 passed, 1 failed"; exit 1; }
# The cloud kernels (make deps installs them) are built here with W=1 and
# -Werror like the others; sparse runs on the generic pair only: sroce's
# code has no config-dependent part, and the RDMA core's headers are the
# same in both flavours (make check-cloud runs it on the cloud pair).
cloud_kernels=$("$REPO/tools/kernels.sh" cloud) ||
	step "the cloud kernels are installed (make deps)" false
for v in $kernels $cloud_kernels; do
	step "build $v" make -C "$REPO" --no-print-directory modules KDIR="/lib/modules/$v/build"
done
step "build the integrity tester" make -C "$REPO/tools/testing/integrity" --no-print-directory
step "build the hostile-user tester" make -C "$REPO/tools/testing/hostile" --no-print-directory
step "build the multicast tester" make -C "$REPO/tools/testing/mcast" --no-print-directory
step "build the MR tester" make -C "$REPO/tools/testing/mr" --no-print-directory
step "sparse (C=2), both kernels" make -C "$REPO" --no-print-directory sparse
step "checkpatch --strict" make -C "$REPO" --no-print-directory checkpatch

# Tests of sroce's own engine, with no kernel interface in between that
# 6.1 and 6.12 differ in (the fuzzer, forged packets, perftest's and the
# pingpongs' traffic, READs under loss, the send window, the device on
# lo), and the stacked netdevs under load (minutes; 6.1 is the faster
# there, make stacked runs both): each runs on one kernel here, on both with
# SROCE_TEST_ALL=1 (or make test T=...).  Everything that goes through
# the RDMA core's and the ULPs' code (verbs, uverbs and mmap, netdev
# events, VLANs, disassociation, rdma_cm, NVMe-oF, NFS, iSER, SRP) and
# the integrity run go on both.  READs under loss go on 6.1: its per-CPU
# backlogs hold the old READ responses long enough for the re-ask storm
# 47-read-loss checks for (6.12 passed with the storm's code too).
ONE_KERNEL_TESTS=("17-fuzz 22-stacked 31-perftest 47-read-loss 48-send-window" "18-forged 21-lo 30-pingpong")

# The cloud kernels' smoke: the module, a device librxe binds to, rdma_cm
# traffic and a kernel ULP (NVMe-oF), through the cloud configs' RDMA
# core and the virtio-fs root: about 2.5 minutes a kernel under TCG.  The
# rest (the verbs program that checks every byte, the pingpongs: verbs
# code the same as the generic kernels') is left to make test-cloud,
# which runs all.
CLOUD_SMOKE="10-load 11-link 32-rdmacm 33-nvmeof"

# The debug kernel is a 6.12, built from the same source as the stock
# one: the tests of its short part (test-debug.sh's SHORT_TESTS: the ULPs
# over loss, fault injection, MRs under traffic; minutes there) leave the
# stock 6.12's list when that part is on.  It runs after the first
# interop pair, before the parts a slow machine's budget drops first.
DEBUG_SHORT=
[ "${SROCE_TEST_DEBUG:-1}" = 0 ] ||
	DEBUG_SHORT=$(bash "$REPO/tools/debug-kernel/test-debug.sh" --print-short)

# vm_tests_of I: the tests the I-th kernel (0: 6.1, 1: 6.12) runs.
vm_tests_of() {
	local name other=${ONE_KERNEL_TESTS[$((1 - $1))]} all=()

	[ "$1" = 0 ] || other+=" $DEBUG_SHORT"
	for name in "$HERE"/tests/*.sh; do
		name=$(basename "$name" .sh)
		[[ " $other " == *" $name "* ]] || all+=("$name")
	done
	echo "${all[*]}"
}

# A debug kernel not built yet (a new machine: ~16 minutes of both CPUs)
# is built meanwhile at SCHED_IDLE, on the time the VMs leave idle (they
# wait on timers, sleeps and the network much of the time); its part
# below then waits only for what is left.  A build that fails here is
# tried again there, and counted there.
DEBUG_BUILD_PID=
if [ -z "$TESTS" ] && [ "${SROCE_TEST_DEBUG:-1}" != 0 ] &&
   ! bash "$REPO/tools/debug-kernel/build.sh" --is-built 2>/dev/null; then
	mkdir -p "$STEP_LOGS"
	setsid chrt --idle 0 bash "$REPO/tools/debug-kernel/build.sh" \
		>"$STEP_LOGS/debug-kernel-background.log" 2>&1 &
	DEBUG_BUILD_PID=$!
	trap '[ -z "$DEBUG_BUILD_PID" ] || kill -- "-$DEBUG_BUILD_PID" 2>/dev/null' EXIT
	echo "# the debug kernel builds in the background (SCHED_IDLE): $STEP_LOGS/debug-kernel-background.log"
fi

if [ -n "$TESTS" ]; then
	suite vm-tests "$HERE/run.sh" --tests "$TESTS"
elif [ "${SROCE_TEST_ALL:-0}" = 1 ]; then
	suite vm-tests "$HERE/run.sh"
else
	i=0
	for v in $kernels; do
		suite "vm-tests $v" "$HERE/run.sh" --kernel "$v" --tests "$(vm_tests_of $i)"
		i=$((i + 1))
	done
fi
if [ -z "$TESTS" ]; then
	# The wire against the stock rdma_rxe: sroce as the server on one
	# kernel, as the client on the other (make interop: all four).
	set -- $kernels
	suite "interop $1 sroce-rxe" "$HERE/interop.sh" --kernel "$1" --pair sroce-rxe
	if [ "${SROCE_TEST_DEBUG:-1}" != 0 ]; then
		# KUnit and the short list, ~20 minutes; a debug kernel not
		# built yet takes ~16 more.
		debug_mins=20
		if [ -n "$DEBUG_BUILD_PID" ]; then
			echo "# waiting for the debug kernel's background build"
			wait "$DEBUG_BUILD_PID" || true
			DEBUG_BUILD_PID=
		fi
		bash "$REPO/tools/debug-kernel/build.sh" --is-built 2>/dev/null || debug_mins=32
		if within_budget "the debug kernel's part" "$debug_mins"; then
			suite kunit "$HERE/kunit.sh"
			suite test-debug-short "$REPO/tools/debug-kernel/test-debug.sh" --short
		fi
	fi
	within_budget "interop rxe-sroce" 6 &&
		suite "interop ${2:-$1} rxe-sroce" "$HERE/interop.sh" --kernel "${2:-$1}" --pair rxe-sroce
	if [ -n "$cloud_kernels" ] && within_budget "the cloud kernels' smoke" 8; then
		for v in $cloud_kernels; do
			suite "vm-tests $v smoke" "$HERE/run.sh" --kernel "$v" \
				--tests "$CLOUD_SMOKE"
		done
	fi
	# The benchmark pipeline on a few points: passes when the report
	# has them all; the numbers do not count (Documentation/benchmarks.rst).
	within_budget "bench smoke" 5 &&
		step "bench smoke" bash "$HERE/bench/bench.sh" --smoke
fi
steps_summary

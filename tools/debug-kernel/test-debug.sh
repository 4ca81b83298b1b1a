#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make test-debug": the VM test suite on the debug kernel (KASAN, lockdep,
# kmemleak, UBSAN, debug objects, fault injection; see build.sh).  Builds
# or reuses the kernel, builds sroce.ko against it, runs the tests in one
# VM; the guest scans kmemleak at the end.  Fails on any failed test and on
# any KASAN, lockdep, UBSAN, WARN or BUG report ("kernel log clean") or
# kmemleak report ("kmemleak clean").  The kernel build and the module
# build each count as one check; the last line is "N passed, N failed".
#
#   tools/debug-kernel/test-debug.sh [--kcsan] [--short | --tests "NAME..." | --print-short]
#
#   --kcsan   on the KCSAN flavour of the debug kernel (make test-kcsan):
#             data races reported instead of KASAN's memory errors
#   --short   the part "make test" runs: $SHORT_TESTS below, a few minutes
#   --print-short  print those tests' names and exit (make test leaves them
#             out of the stock 6.12's list)
#   --tests   these tests (make test-debug T=...); default: all of them

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tools/testing/steps.sh
. "$REPO/tools/testing/steps.sh"
export STEP_LOGS=$REPO/build/test-logs

# Module load and unload with devices, bad input, the fault-injection
# pass (which runs RC, UD and SRQ traffic too), and the kernel ULPs over a
# lossy wire then losing their device (37-ulp-faults: NVMe-oF, SRP and NFS
# through REG_MR/LOCAL_INV/SEND_WITH_INV, the rdma core's removal path),
# MRs re-registered under traffic and dma-buf MRs (41-mr, 25 s), ODP MRs
# faulting and invalidated under traffic (42-odp, 80 s): the
# paths where a leak or a locking mistake would be, in about 12
# minutes.  (The other ULP tests pass here too, but take longer:
# 33-nvmeof 221 s, 34-nfs-rdma 813 s, 35-iser 412 s, 36-srp 348 s.)  (make test-debug
# T=19-hostile-user runs the hostile user program: since the VM has two
# CPUs its sqflood works here, and found the flush of a ring kept full
# running without end.)
SHORT_TESTS="10-load 15-bad-input 37-ulp-faults 41-mr 42-odp 45-faults"
TESTS=

while [ $# -gt 0 ]; do
	case $1 in
	--tests) TESTS=$2; shift 2 ;;
	--short) TESTS=$SHORT_TESTS; shift ;;
	--print-short) echo "$SHORT_TESTS"; exit 0 ;;
	--kcsan) export SROCE_DEBUG_FLAVOUR=kcsan; shift ;;
	*) echo "usage: $0 [--kcsan] [--short | --tests \"NAME...\" | --print-short]" >&2; exit 2 ;;
	esac
done

if ! step "debug kernel" "$HERE/build.sh"; then
	steps_summary
	exit 1
fi
cache=$("$HERE/build.sh") || exit 1
rel=$(cat "$cache/release")
echo "debug kernel $rel: $cache"
if ! step "build $rel" make -C "$REPO" --no-print-directory modules KDIR="$cache/build"; then
	steps_summary
	exit 1
fi
# 40-integrity runs it in the guest.
step "build the integrity tester" make -C "$REPO/tools/testing/integrity" --no-print-directory
# 19-hostile-user and 20-churn run this one.
step "build the hostile-user tester" make -C "$REPO/tools/testing/hostile" --no-print-directory
# 38-mcast runs this one.
step "build the multicast tester" make -C "$REPO/tools/testing/mcast" --no-print-directory
step "build the MR tester" make -C "$REPO/tools/testing/mr" --no-print-directory

args=(--kernel "$rel" --kernel-image "$cache/bzImage" --modules-root "$cache/modroot")
[ -n "$TESTS" ] && args+=(--tests "$TESTS")
suite "suite-$rel" "$REPO/tools/testing/run.sh" "${args[@]}"
steps_summary

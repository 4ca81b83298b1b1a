#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make test-debug": the VM test suite on the debug kernel (KASAN, lockdep,
# kmemleak, UBSAN, debug objects; see build.sh).  Builds or reuses the
# kernel, builds sroce.ko against it, runs the tests in one VM, then scans
# kmemleak.  Fails on any failed test and on any KASAN, lockdep, UBSAN,
# WARN or BUG report ("kernel log clean") or kmemleak report ("kmemleak
# clean").  The kernel build and the module build each count as one check;
# the last line is "N passed, N failed".
#
#   tools/debug-kernel/test-debug.sh [--tests "NAME..."]   (make test-debug T=...)

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

mkdir -p "$LOGS"
passed=0
failed=0

fail_early() {
	failed=$((failed + 1))
	echo "$1"
	echo "$passed passed, $failed failed"
	exit 1
}

start=$SECONDS
if ! cache=$("$HERE/build.sh"); then
	fail_early "debug kernel ............... FAILED"
fi
passed=$((passed + 1))
rel=$(cat "$cache/release")
echo "debug kernel $rel ok ($((SECONDS - start))s): $cache"

start=$SECONDS
log=$LOGS/build-$rel.log
if make -C "$REPO" --no-print-directory modules KDIR="$cache/build" >"$log" 2>&1; then
	passed=$((passed + 1))
	echo "build $rel ok ($((SECONDS - start))s)"
else
	tail -n 30 "$log" | sed 's/^/    /'
	fail_early "build $rel FAILED, log: $log"
fi

# Under TCG with KASAN, lockdep and kmemleak, ACPI's AML interpreter needs
# 30 s (its loop timeout) per PCI device to route INTx: route with the
# BIOS's $PIR table instead (virtio uses MSI-X anyway).
export SROCE_KERNEL_CMDLINE=${SROCE_KERNEL_CMDLINE-pci=noacpi}
suite=$LOGS/suite-$rel.log
args=(--kernel "$rel" --kernel-image "$cache/bzImage" --modules-root "$cache/modroot")
[ -n "$TESTS" ] && args+=(--tests "$TESTS")
"$REPO/tools/testing/run.sh" "${args[@]}" 2>&1 | tee "$suite"
rc=${PIPESTATUS[0]}
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$suite" | tail -n 1)
p=0 f=0 skipped=
if [ -n "$summary" ]; then
	p=${summary%% passed*}
	f=${summary#*passed, }
	f=${f%% failed*}
	skipped=$(sed -n 's/.*, \([0-9]*\) skipped$/\1/p' <<<"$summary")
fi
if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
	f=$((f + 1))
fi
passed=$((passed + p))
failed=$((failed + f))

echo
echo "$passed passed, $failed failed${skipped:+, $skipped skipped}"
[ "$failed" -eq 0 ]

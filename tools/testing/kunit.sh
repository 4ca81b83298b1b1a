#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make kunit: run sroce's KUnit suites in the debug kernel.
#
#   tools/testing/kunit.sh
#
# 1. builds (or reuses) the debug kernel, which has KUnit
#    (tools/debug-kernel/build.sh);
# 2. builds sroce.ko and sroce_kunit.ko against it (make modules KDIR=...);
# 3. boots it in the test VM and runs tests/01-kunit.sh, which loads
#    sroce_kunit.ko (KUnit runs the suites as the module loads) and
#    collects the suites' KTAP from debugfs;
# 4. parses that KTAP (with the kernel's kunit.py parse, to show it, when
#    the kernel source is there) and counts the test cases.
#
# The last line is "N passed, N failed[, N skipped]", counting KUnit test
# cases; the exit status is 1 if a case failed, none ran, or the VM run
# failed otherwise (a kernel warning, KASAN report, ...).  The KTAP is kept
# in build/kunit-results/<release>/kunit.ktap.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SRC=${SROCE_LINUX_SRC:-/var/cache/sroce/linux-source-6.12}
OUT=$REPO/build/kunit-results

die() { echo "kunit: $*" >&2; exit 2; }

cache=$(bash "$REPO/tools/debug-kernel/build.sh") || die "no debug kernel"
rel=$(cat "$cache/release")
[ -n "$rel" ] || die "no release in $cache/release"

echo "== build against $rel"
make --no-print-directory -C "$REPO" modules KDIR="$cache/build"
[ -e "$REPO/build/$rel/sroce_kunit.ko" ] ||
	die "no build/$rel/sroce_kunit.ko: is CONFIG_KUNIT set in $cache/build?"

echo "== run the suites"
vm_rc=0
"$HERE/run.sh" --kernel-image "$cache/bzImage" --modules-root "$cache/modroot" \
	--kernel "$rel" --tests 01-kunit --out "$OUT" || vm_rc=$?

tap=$OUT/$rel/tests/01-kunit.tap
ktap=$OUT/$rel/kunit.ktap
sed -n 's/^# ktap: //p' "$tap" >"$ktap" 2>/dev/null || true
if [ ! -s "$ktap" ]; then
	echo "kunit: no KTAP in $tap"
	echo "0 passed, 1 failed"
	exit 1
fi

echo "== KTAP ($ktap)"
if [ -f "$SRC/tools/testing/kunit/kunit.py" ]; then
	python3 "$SRC/tools/testing/kunit/kunit.py" parse "$ktap" || true
fi

# Test cases are the results one level down from the suites.
read -r passed failed skipped < <(awk '
	/^    ok .*# SKIP/ { s++; next }
	/^    ok /         { p++; next }
	/^    not ok /     { f++; print "FAILED: " suite ": " $0 > "/dev/stderr"; next }
	/^    # Subtest: / { suite = $3 }
	END { print p + 0, f + 0, s + 0 }
' "$ktap")
summary="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || summary+=", $skipped skipped"
[ "$vm_rc" -eq 0 ] || echo "kunit: the VM run failed (exit status $vm_rc), see above"
echo "$summary"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$vm_rc" -eq 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sroce's KUnit suites: load sroce_kunit.ko, which runs them (KUnit runs a
# module's suites while it loads), and turn each test case's result into
# an assertion, named SUITE: CASE.  The suites' KTAP, as debugfs keeps it
# (/sys/kernel/debug/kunit/SUITE/results), is put together into one KTAP
# document and printed as "# ktap: " diagnostics, for tools/testing/kunit.sh.
#
# sroce_kunit.ko is only built for a kernel with KUnit (the debug kernel,
# make kunit); on other kernels this test is skipped.
#
# timeout: 600
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

if [ ! -e "$SROCE_MODULE_DIR/$KVER/sroce_kunit.ko" ]; then
	echo "1..0 # SKIP no sroce_kunit.ko for $KVER (a kernel without KUnit)"
	exit 0
fi
require_sroce

KUNIT_DIR=/sys/kernel/debug/kunit

# The sroce_kverbs suite posts kernel verbs to a live device: sroce0 on a
# veth with an IPv4 address (it skips its cases without one).
ip link add kveth0 type veth peer name kveth1 &&
	ip addr add 10.9.0.1/24 dev kveth0 &&
	ip link set kveth0 up && ip link set kveth1 up
check "sroce0 on kveth0, for the kernel verbs suite" \
	rdma link add sroce0 type sroce netdev kveth0
poll_until 10 rdma_gid_index sroce0 1 10.9.0.1

if ! check "modprobe sroce_kunit (runs the suites)" modprobe sroce_kunit; then
	tap_done
fi
if [ ! -d "$KUNIT_DIR" ]; then
	not_ok "KUnit results in debugfs" "no $KUNIT_DIR (CONFIG_KUNIT_DEBUGFS?)"
	tap_done
fi

# The sroce suites, one KTAP document: a header, then each suite's results
# without debugfs's own two header lines, its closing line renumbered.
mapfile -t suites < <(cd "$KUNIT_DIR" && ls -d sroce_* 2>/dev/null)
check "the suites ran" test ${#suites[@]} -gt 0
ktap=$(
	echo "KTAP version 1"
	echo "1..${#suites[@]}"
	n=0
	for s in "${suites[@]}"; do
		n=$((n + 1))
		tail -n +3 "$KUNIT_DIR/$s/results" |
			sed -E "s/^(not ok|ok) 1 $s\$/\1 $n $s/"
	done
)
printf '%s\n' "$ktap" | sed 's/^/# ktap: /'

# One assertion per test case: the lines at one level of indentation.
while IFS= read -r line; do
	case $line in
	"# Subtest: "*) suite=${line#\# Subtest: } ;;
	"ok "*"# SKIP"*)
		name=${line#ok * }
		skip "$suite: ${name%% #*}" "${name#*# SKIP}" ;;
	"ok "*) ok "$suite: ${line#ok * }" ;;
	"not ok "*) not_ok "$suite: ${line#not ok * }" ;;
	esac
done < <(printf '%s\n' "$ktap" | sed -n 's/^    \([^ ]\)/\1/p')

check "rmmod sroce_kunit" rmmod sroce_kunit
check "sroce0 deleted" rdma link delete sroce0
ip link del kveth0
check "rmmod sroce" sroce_unload
tap_done

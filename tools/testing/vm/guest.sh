#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of the harness: PID 1 of the test VM after switch_root
# (started by OUTDIR/.vm/boot.sh, which run.sh writes with the settings
# below).  Runs each selected test with its own timeout and writes into the
# results share, /run/sroce/out (= OUTDIR on the host):
#
#   .vm/booted          guest uptime when this script started
#   tests/NAME.tap      the test's output (stdout and stderr)
#   tests/NAME.done     "rc=N secs=N timedout=0|1", when the test is over
#   dmesg.txt           the kernel log, at the end
#   kmemleak.txt        kmemleak's report after two scans at the end, if the
#                       kernel has kmemleak (empty: no leak)
#   kcsan.txt           KCSAN's counters at the end, if the kernel has KCSAN
#                       (watchpoints set up: it was watching; data_races)
#   .vm/finished        the last thing written before powering off
#
# Settings from boot.sh: SROCE_REPO, SROCE_MODULE_DIR, SROCE_MODINDEX,
# SROCE_TESTS (names), SROCE_TESTS_DIR (where they are), SROCE_TEST_TIMEOUT (seconds, default per test),
# SROCE_TIMEOUT_FACTOR (every test timeout is multiplied by it; default 1).

set -u

OUT=/run/sroce/out
TESTS_DIR=${SROCE_TESTS_DIR:-$SROCE_REPO/tools/testing/tests}
# shellcheck source=done.sh
. "$SROCE_REPO/tools/testing/vm/done.sh"

# Whatever happens, power off: as PID 1, exiting would panic the kernel.
poweroff_now() {
	sync
	# Power off through ACPI; a kernel without ACPI (the debug kernel)
	# cannot, so it reboots instead, which ends QEMU (-no-reboot).
	if [ -d /sys/firmware/acpi ]; then
		echo o >/proc/sysrq-trigger
	else
		echo b >/proc/sysrq-trigger
	fi
	sleep 60
}
trap poweroff_now EXIT

cut -d' ' -f1 /proc/uptime >"$OUT/.vm/booted"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8 TERM=dumb
export SROCE_REPO SROCE_MODULE_DIR SROCE_MODINDEX

# Mark a line in the kernel log, so a warning can be tied to its test.
kmsg() { echo "sroce-harness: $*" >/dev/kmsg; }

setup_system() {
	mkdir -p /dev/shm /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm # rdma tools need it
	mount -t devpts devpts /dev/pts
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	modprobe -q configfs 2>/dev/null
	[ -d /sys/kernel/config ] && mount -t configfs configfs /sys/kernel/config
	ip link set lo up
	hostname sroce-vm
	# Nothing in the guest asks for more locked memory than this.
	ulimit -l unlimited
}

# The timeout of test NAME: a "# timeout: SECONDS" line among its first 20
# lines, or the default; times SROCE_TIMEOUT_FACTOR.
test_timeout() {
	local t
	t=$(head -n 20 "$1" | sed -n 's/^# timeout: *\([0-9][0-9]*\) *$/\1/p' | head -n 1)
	echo $((${t:-$SROCE_TEST_TIMEOUT} * ${SROCE_TIMEOUT_FACTOR:-1}))
}

# kmemleak, if the kernel has it: scan twice (an object must stay
# unreferenced across scans to be reported), then save the report.
kmemleak_report() {
	local f=/sys/kernel/debug/kmemleak err

	[ -e $f ] || return 0
	kmsg "leak scan"
	if err=$( { echo scan >$f && sleep 5 && echo scan >$f; } 2>&1); then
		cat $f >"$OUT/kmemleak.txt"
	else
		echo "kmemleak scan failed (is kmemleak disabled? see dmesg): $err" >"$OUT/kmemleak.txt"
	fi
}

# run_test NAME: run tests/NAME.sh in a scratch directory with a timeout.
# timeout(1) runs it in its own process group and kills the whole group,
# background servers included.
run_test() {
	local name=$1 script=$TESTS_DIR/$1.sh tap=$OUT/tests/$1.tap
	local t start secs rc=0 timedout=0 dir

	t=$(test_timeout "$script")
	dir=$(mktemp -d "/tmp/$name.XXXXXX")
	kmsg "start $name (timeout ${t}s)"
	start=$SECONDS
	# SROCE_TEST_OUT: where a test may leave files worth keeping (a
	# capture), next to its TAP.
	(cd "$dir" && SROCE_TEST_OUT=$OUT/tests exec timeout --kill-after=5 "$t" /bin/bash "$script") \
		>"$tap" 2>&1 </dev/null || rc=$?
	secs=$((SECONDS - start))
	# 124: timeout's SIGTERM did it; 137: its SIGKILL did, 5 s later.
	if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ $secs -ge "$t" ]; then
		timedout=1
		echo "# harness: killed after the test's timeout of ${t}s" >>"$tap"
	fi
	kmsg "end $name rc=$rc"
	cleanup_after "$tap"
	rm -rf "$dir"
	write_done "$OUT/tests/$name.done" "rc=$rc secs=$secs timedout=$timedout"
}

# Leftovers of a test must not break the next one.
cleanup_after() {
	local ns
	for ns in $(ip netns list | cut -d' ' -f1); do
		echo "# harness: deleted leftover network namespace $ns" >>"$1"
		ip netns del "$ns"
	done
}

main() {
	local name

	setup_system
	mkdir -p "$OUT/tests"
	# Once, before the tests; tests that need it call require_sroce.
	# shellcheck source=../lib.sh
	(. "$SROCE_REPO/tools/testing/lib.sh" && sroce_install) >"$OUT/.vm/install.log" 2>&1 ||
		cat /run/sroce/install-error >>"$OUT/.vm/install.log" 2>/dev/null
	for name in $SROCE_TESTS; do
		run_test "$name"
	done
	kmemleak_report
	[ ! -e /sys/kernel/debug/kcsan ] || cat /sys/kernel/debug/kcsan >"$OUT/kcsan.txt"
	dmesg >"$OUT/dmesg.txt"
	touch "$OUT/.vm/finished"
}

main

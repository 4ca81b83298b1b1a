#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run sroce's tests in a QEMU VM, one VM per kernel.
#
#   tools/testing/run.sh [--kernel VER]... [--module-dir DIR]
#                        [--tests "NAME..."] [--out DIR] [--timeout SEC]
#                        [--kernel-image FILE --modules-root DIR]
#
#   --kernel VER      a kernel release installed on this machine (or "6.1",
#                     "6.12", "6.1-cloud", "6.12-cloud"); may be repeated;
#                     default: the two that tools/kernels.sh prints.  A
#                     kernel without 9p (the cloud ones) boots with
#                     virtio-fs instead (vm/vmfs.sh)
#   --module-dir DIR  the built modules are DIR/<VER>/sroce.ko (and any other
#                     .ko there); default: build/ in the repository
#   --tests "N..."    tests to run: names of tools/testing/tests/*.sh without
#                     .sh, or globs ("0*"); default (or ""): all, sorted
#   --out DIR         results go to DIR/<VER>/; default: build/test-results
#   --timeout SEC     timeout of each test, default 300; a test may set its
#                     own with a "# timeout: SEC" line in its first 20 lines
#   --kernel-image FILE, --modules-root DIR
#                     boot FILE, a kernel not installed on this machine, whose
#                     modules are in DIR/lib/modules/<VER> (the debug kernel:
#                     tools/debug-kernel/build.sh); env SROCE_KERNEL_IMAGE
#                     and SROCE_MODULES_ROOT do the same.  One kernel only;
#                     --kernel defaults to the one release in DIR.  Timeouts
#                     are multiplied by SROCE_TIMEOUT_FACTOR (default 1, and
#                     3 with --kernel-image: KASAN and lockdep are slow)
#
# Example, one test on one kernel:
#
#   tools/testing/run.sh --kernel 6.1.0-57-amd64 --tests 00-harness
#
# Each VM boots the installed kernel with a tiny initramfs (vm/), mounts
# the host's / read-only as its root and the results dir read-write (9p or
# virtio-fs), runs
# the tests in sequence (vm/guest.sh) and powers off.  Results, per kernel:
#
#   tests/NAME.tap   the test's TAP output (and stderr)
#   dmesg.txt        the guest's kernel log
#   console.log      its serial console, written by QEMU (shows panics)
#
# A test passes when all its assertions pass (a "# SKIP" one is skipped),
# it printed its plan and exited 0 within its timeout.  Per kernel there is
# one more check, "kernel log clean": no panic, BUG, WARNING, Oops, lockdep, KASAN,
# UBSAN, kmemleak, ODEBUG, RCU, hung task, soft lockup or GPF report, no Call Trace;
# and on a kernel with kmemleak, "kmemleak clean": an empty report after the
# guest's final scans (kmemleak.txt).  The last line is "N passed, N failed[, N skipped]", counting assertions
# plus those checks; the exit status is 1 if anything failed.
#
# Settings for the tests: variables named SROCE_* in the environment are
# passed to the guest (e.g. SROCE_SKIP_HARNESS_SELFTEST=1).
#
# Only one test VM runs at a time on the machine: a second run.sh waits
# for the first (lock file $SROCE_VM_LOCK, default /run/lock/sroce-vm.lock).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vm/done.sh
. "$HERE/vm/done.sh"
REPO=$(cd "$HERE/../.." && pwd)
# SROCE_TESTS_DIR: run the scripts of another folder (the benchmarks do).
TESTS_DIR=${SROCE_TESTS_DIR:-$HERE/tests}

# One VM at a time on this machine (2 cores, TCG): runs from any clone wait
# for each other on this lock.
VM_LOCK=${SROCE_VM_LOCK:-/run/lock/sroce-vm.lock}

# Seconds allowed for booting and for the final dmesg and power-off.
BOOT_ALLOWANCE=240
# Per test, on top of its timeout: starting, cleaning up, kill grace.
TEST_SLACK=20

# What fails the "kernel log clean" check.
KERNEL_LOG_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|kmemleak|possible circular locking'
KERNEL_LOG_BAD+='|inconsistent lock state|possible recursive locking'
KERNEL_LOG_BAD+='|suspicious RCU usage|hung task|blocked for more than'
KERNEL_LOG_BAD+='|soft lockup|general protection fault|Call Trace:|Kernel panic'
# debugobjects' reports, and its giving up (out of memory: checks off)
KERNEL_LOG_BAD+='|ODEBUG'
# Lines that match KERNEL_LOG_BAD but report nothing wrong (debug kernel).
KERNEL_LOG_OK='kmemleak: Kernel memory leak detector initialized'

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed -n '1,30p' >&2
	exit 2
}

die() { echo "run.sh: $*" >&2; exit 2; }

KERNELS=()
MODULE_DIR=$REPO/build
TEST_PATTERNS=
OUT=$REPO/build/test-results
TIMEOUT=300
KERNEL_IMAGE=${SROCE_KERNEL_IMAGE:-}
MODULES_ROOT=${SROCE_MODULES_ROOT:-}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel)     [ $# -ge 2 ] || usage; KERNELS+=("$2"); shift 2 ;;
		--module-dir) [ $# -ge 2 ] || usage; MODULE_DIR=$2; shift 2 ;;
		--tests)      [ $# -ge 2 ] || usage; TEST_PATTERNS=$2; shift 2 ;;
		--out)        [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
		--timeout)    [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
		--kernel-image) [ $# -ge 2 ] || usage; KERNEL_IMAGE=$2; shift 2 ;;
		--modules-root) [ $# -ge 2 ] || usage; MODULES_ROOT=$2; shift 2 ;;
		-h|--help)    usage ;;
		*)            echo "run.sh: unknown argument: $1" >&2; usage ;;
		esac
	done
	[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, not '$TIMEOUT'"
	MODULE_DIR=$(realpath -m "$MODULE_DIR")
	OUT=$(realpath -m "$OUT")
	# QEMU's -virtfs option cannot take a path with a comma.
	[[ $OUT != *,* ]] || die "--out: no commas in the path, please"
	if [ -n "$KERNEL_IMAGE$MODULES_ROOT" ]; then
		[ -n "$KERNEL_IMAGE" ] && [ -n "$MODULES_ROOT" ] ||
			die "--kernel-image and --modules-root go together"
		KERNEL_IMAGE=$(realpath -m "$KERNEL_IMAGE")
		MODULES_ROOT=$(realpath -m "$MODULES_ROOT")
		[[ $MODULES_ROOT != *[[:space:]]* ]] || die "--modules-root: no spaces in the path, please"
		# Read by vm/qemu.sh, vm/mkinitramfs.sh and vm/modindex.sh.
		export SROCE_KERNEL_IMAGE=$KERNEL_IMAGE SROCE_MODULES_ROOT=$MODULES_ROOT
		: "${SROCE_TIMEOUT_FACTOR:=3}"
	fi
	: "${SROCE_TIMEOUT_FACTOR:=1}"
	[[ $SROCE_TIMEOUT_FACTOR =~ ^[1-9][0-9]*$ ]] ||
		die "SROCE_TIMEOUT_FACTOR wants a whole number, not '$SROCE_TIMEOUT_FACTOR'"
	export SROCE_TIMEOUT_FACTOR
	BOOT_ALLOWANCE=$((BOOT_ALLOWANCE * SROCE_TIMEOUT_FACTOR))
}

# resolve_kernel_image: the one kernel of --kernel-image.
resolve_kernel_image() {
	local rels=()

	[ -r "$KERNEL_IMAGE" ] || die "no kernel image $KERNEL_IMAGE"
	if [ ${#KERNELS[@]} -eq 0 ]; then
		mapfile -t rels < <(ls -1 "$MODULES_ROOT/lib/modules" 2>/dev/null)
		[ ${#rels[@]} -eq 1 ] ||
			die "--modules-root $MODULES_ROOT: want one release in lib/modules/, found ${#rels[@]} (use --kernel)"
		KERNELS=("${rels[0]}")
	fi
	[ ${#KERNELS[@]} -eq 1 ] || die "--kernel-image boots one kernel, not ${#KERNELS[@]}"
	[ -d "$MODULES_ROOT/lib/modules/${KERNELS[0]}" ] ||
		die "no $MODULES_ROOT/lib/modules/${KERNELS[0]}"
}

# "6.1", "6.12", "6.1-cloud" and "6.12-cloud" mean what tools/kernels.sh says.
resolve_kernels() {
	local k i

	if [ -n "$KERNEL_IMAGE" ]; then
		resolve_kernel_image
		return
	fi
	if [ ${#KERNELS[@]} -eq 0 ]; then
		mapfile -t KERNELS < <("$REPO/tools/kernels.sh")
	fi
	for i in "${!KERNELS[@]}"; do
		k=${KERNELS[$i]}
		if [ ! -d "/lib/modules/$k" ] && [[ $k =~ ^6\.[0-9]+(-cloud)?$ ]]; then
			k=$("$REPO/tools/kernels.sh" "$k") || die "no kernel for $k"
			KERNELS[i]=$k
		fi
		if [ ! -r "/boot/vmlinuz-$k" ] || [ ! -d "/lib/modules/$k" ]; then
			die "kernel $k is not installed (/boot/vmlinuz-$k, /lib/modules/$k)"
		fi
	done
}

# TESTS: the selected test names, in sorted order, each once.
resolve_tests() {
	local all=() name pat matched

	for name in "$TESTS_DIR"/*.sh; do
		[ -e "$name" ] && all+=("$(basename "$name" .sh)")
	done
	mapfile -t all < <(printf '%s\n' "${all[@]}" | LC_ALL=C sort)
	TESTS=()
	if [ -z "${TEST_PATTERNS// /}" ]; then
		TESTS=("${all[@]}")
	else
		for pat in $TEST_PATTERNS; do
			pat=${pat%.sh}
			matched=0
			for name in "${all[@]}"; do
				# shellcheck disable=SC2053 # $pat is a glob on purpose
				[[ $name == $pat ]] && matched=1
			done
			[ $matched -eq 1 ] || die "no test matches '$pat' in $TESTS_DIR"
		done
		for name in "${all[@]}"; do
			for pat in $TEST_PATTERNS; do
				# shellcheck disable=SC2053
				if [[ $name == ${pat%.sh} ]]; then TESTS+=("$name"); break; fi
			done
		done
	fi
	[ ${#TESTS[@]} -gt 0 ] || die "no test to run in $TESTS_DIR"
}

# Same rule as vm/guest.sh: "# timeout: N" near the top, or --timeout.
test_timeout() {
	local t
	t=$(head -n 20 "$TESTS_DIR/$1.sh" | sed -n 's/^# timeout: *\([0-9][0-9]*\) *$/\1/p' | head -n 1)
	echo $((${t:-$TIMEOUT} * SROCE_TIMEOUT_FACTOR))
}

vm_timeout() {
	local name total=$BOOT_ALLOWANCE
	for name in "${TESTS[@]}"; do
		total=$((total + $(test_timeout "$name") + TEST_SLACK))
	done
	echo "$total"
}

PASSED=0
FAILED=0
SKIPPED=0

# -------------------------------------------------------------- report ----

# "name ........" padded to a fixed width.
dots() {
	local name=$1 pad
	pad=$(printf '%*s' $((28 - ${#name})) '' | tr ' ' '.')
	echo "$name ${pad:-.}"
}

# Print the failed assertions of a TAP file with their diagnostics.
tap_failures() {
	awk '
		/^not ok/ || /^Bail out!/ { show = 1; n = 0; print "    " $0; next }
		/^# harness:/             { print "    " $0; next }
		/^(ok|not ok|1\.\.)/      { show = 0 }
		show && /^#/ && n++ < 15  { print "      " $0 }
	' "$1"
}

# report_test K NAME: count and print the result of one finished test.
report_test() {
	local k=$1 name=$2 dir=$OUT/$1
	local tap=$dir/tests/$name.tap done=$dir/tests/$name.done
	local rc=1 secs=0 timedout=0 p f s n plan bail extra=() status

	read_done "$done"
	read -r p f s n plan bail < <(awk '
		/^ok( |$)/     { n++; if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) s++; else p++ }
		/^not ok( |$)/ { n++; if ($0 ~ /# *TODO/) s++; else f++ }
		/^1\.\.[0-9]+/ { split($1, a, /\.\./); plan = a[2]
		                 if (plan == 0 && $0 ~ /# *[Ss][Kk][Ii][Pp]/) s++ }
		/^Bail out!/   { bail = 1 }
		END { print p + 0, f + 0, s + 0, n + 0, (plan == "" ? -1 : plan), bail + 0 }
	' "$tap")

	if [ "$timedout" = 1 ]; then
		extra+=("timed out after ${secs}s")
	elif [ "$bail" = 1 ]; then
		extra+=("bailed out")
	elif [ "$plan" -lt 0 ]; then
		extra+=("no plan (1..N): the test ended before tap_done (exit status $rc)")
	elif [ "$plan" -gt "$n" ]; then
		extra+=("planned $plan assertions, ran $n")
	elif [ "$rc" != 0 ] && [ "$f" -eq 0 ]; then
		extra+=("exit status $rc")
	fi
	f=$((f + ${#extra[@]}))

	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + s))
	if [ "$timedout" = 1 ]; then
		status=TIMEOUT
	elif [ $f -gt 0 ]; then
		status=FAIL
	else
		status=ok
	fi
	[ "$s" -eq 0 ] || status+=", $s skipped"
	echo "[$k] $(dots "$name") $p/$((p + f + s)) $status (${secs}s)"
	if [ $f -gt 0 ]; then
		tap_failures "$tap"
		[ ${#extra[@]} -eq 0 ] || printf '    %s\n' "${extra[@]}"
		echo "    output: $tap"
	fi
}

# check_kernel_log K: the "kernel log clean" check.  Lines are tagged with
# the test that was running (the guest marks the log with "sroce-harness:").
check_kernel_log() {
	local k=$1 dir=$OUT/$1 log bad

	log=$dir/dmesg.txt
	# No dmesg: the guest died; its console has what made it to the screen.
	[ -s "$log" ] || log=$dir/console.log
	# Between "sroce-faults: on" and "off" (tests/45-faults.sh injects
	# allocation failures) the stack dump of an allocation-failure report
	# is expected, and so is kmemleak's note that it could not allocate a
	# scan area; everything else still counts.  kmemleak's own count of
	# suspects is judged by check_kmemleak() from its full report.
	bad=$(awk -v re="$KERNEL_LOG_BAD" -v okre="$KERNEL_LOG_OK" '
		/sroce-harness: start / { sub(/.*sroce-harness: start /, ""); t = $1; next }
		/sroce-harness: end /   { t = ""; faults = alloc = 0; next }
		/sroce-faults: on/      { faults = 1; next }
		/sroce-faults: off/     { faults = alloc = 0; next }
		# A KCSAN report counts if a stack line is in sroce (the
		# module, "[sroce]"); the rest of the kernel races too (the
		# boot'\''s APIC calibration, nanosleep against its hrtimer),
		# not ours to fix.  (Comm: sroce_integrity is not sroce.)
		/BUG: KCSAN: /          { kcsan = 1; head = $0; ours = 0; next }
		kcsan && /\[sroce\]/    { ours = 1 }
		kcsan && /==========/   {
			if (ours) print "    " (t == "" ? "[boot]" : "[" t "]") " " head
			kcsan = 0; next
		}
		kcsan                   { next }
		faults && /kmemleak: Cannot allocate a scan area/ { next }
		/kmemleak: [0-9]+ new suspected memory leak/ { next }
		faults && /page allocation failure:|vmalloc error:/ { alloc = 1 }
		alloc && /Call Trace:/  { next }
		/<\/TASK>/             { alloc = 0 }
		$0 ~ re && $0 !~ okre { print "    " (t == "" ? "[boot]" : "[" t "]") " " $0 }
	' "$log" 2>/dev/null || true)
	if [ -z "$bad" ]; then
		PASSED=$((PASSED + 1))
		echo "[$k] $(dots "kernel log clean") ok"
		return
	fi
	FAILED=$((FAILED + 1))
	echo "[$k] $(dots "kernel log clean") FAIL"
	printf '%s\n' "$bad" | head -n 40
	echo "    log: $log"
}

# Leaks that are not sroce's, as a pattern on a report's backtrace.
# ib_uverbs builds a radix tree of its API when a device registers; if
# radix_tree_insert() fails with -ENOMEM (tests/45-faults.sh makes it), the
# interior nodes it had allocated stay in the tree with no entry below
# them, and uverbs_destroy_api() frees only entries (6.1 to 6.12 at least).
KMEMLEAK_KNOWN='radix_tree_node_alloc.*uapi_add_get_elm'

# kmemleak_split FILE: the objects of a kmemleak report, one per line,
# with the lines of each joined by "\n".
kmemleak_split() {
	awk '/^unreferenced object/ && obj != "" { print obj; obj = "" }
	     { obj = obj (obj == "" ? "" : "\\n") $0 }
	     END { if (obj != "") print obj }' "$1"
}

# check_kmemleak K: the "kmemleak clean" check, for kernels with kmemleak
# (the guest writes kmemleak.txt after scanning twice at the end).  Known
# leaks of the kernel itself (KMEMLEAK_KNOWN) are reported, not failed.
check_kmemleak() {
	local k=$1 f=$OUT/$1/kmemleak.txt objs ours known

	[ -e "$f" ] || return 0
	objs=$(kmemleak_split "$f")
	ours=$(grep -Ev "$KMEMLEAK_KNOWN" <<<"$objs" || true)
	known=$(grep -Ec "$KMEMLEAK_KNOWN" <<<"$objs" || true)
	if [ -z "$ours" ]; then
		PASSED=$((PASSED + 1))
		echo "[$k] $(dots "kmemleak clean") ok${objs:+ (ignored $known known leak(s) of ib_uverbs after -ENOMEM)}"
		return
	fi
	FAILED=$((FAILED + 1))
	echo "[$k] $(dots "kmemleak clean") FAIL ($(grep -c . <<<"$ours") leaks)"
	sed 's/\\n/\n/g' <<<"$ours" | sed 's/^/    /' | head -n 60
	echo "    report: $f"
}

# check_kcsan K: on a KCSAN kernel (the guest saved its debugfs counters),
# a check that KCSAN was on and set up watchpoints: a kernel built with
# it but never switched on reports nothing and looks clean.
check_kcsan() {
	local k=$1 f=$OUT/$1/kcsan.txt on set

	[ -e "$f" ] || return 0
	on=$(sed -n 's/^enabled: //p' "$f")
	set=$(sed -n 's/^setup_watchpoints: //p' "$f")
	if [ "$on" = 1 ] && [ "${set:-0}" -gt 0 ]; then
		PASSED=$((PASSED + 1))
		echo "[$k] $(dots "KCSAN watched") ok ($set watchpoints set up," \
			"$(sed -n 's/^data_races: //p' "$f") data races)"
		return
	fi
	FAILED=$((FAILED + 1))
	echo "[$k] $(dots "KCSAN watched") FAIL (enabled: ${on:-?}, setup_watchpoints: ${set:-?}; $f)"
}

# ----------------------------------------------------------------- VM ----

# Write OUTDIR/.vm/boot.sh: the guest's settings, then vm/guest.sh.
write_boot_script() {
	local k=$1 dir=$OUT/$1 modindex=$2 var

	{
		echo "#!/bin/bash"
		echo "# Written by tools/testing/run.sh for $k."
		printf 'export %s=%q\n' \
			SROCE_REPO "$REPO" \
			SROCE_MODULE_DIR "$MODULE_DIR" \
			SROCE_MODINDEX "$modindex" \
			SROCE_TESTS "${TESTS[*]}" \
			SROCE_TESTS_DIR "$TESTS_DIR" \
			SROCE_TEST_TIMEOUT "$TIMEOUT"
		for var in $(compgen -e | grep '^SROCE_' || true); do
			case $var in
			SROCE_REPO|SROCE_MODULE_DIR|SROCE_MODINDEX|SROCE_TESTS|SROCE_TESTS_DIR|SROCE_TEST_TIMEOUT) ;;
			*) printf 'export %s=%q\n' "$var" "${!var}" ;;
			esac
		done
		printf 'exec /bin/bash %q\n' "$REPO/tools/testing/vm/guest.sh"
	} >"$dir/.vm/boot.sh"
}

# boot_and_watch K: boot the VM for kernel K and report each test as its
# .done file shows up in the share, until qemu exits (run_kernel's
# variables: dir, vmt, i, start; sets qrc).
boot_and_watch() {
	local k=$1 qpid booted=0 lockfd

	# qemu inherits the locked descriptor: the lock lasts as long as the VM.
	exec {lockfd}>>"$VM_LOCK"
	if ! flock -n "$lockfd"; then
		echo "[$k] waiting for another test VM to finish ($VM_LOCK)"
		flock "$lockfd"
	fi
	echo "[$k] booting VM for ${#TESTS[@]} test(s), VM timeout ${vmt}s"
	start=$SECONDS
	"$HERE/vm/qemu.sh" "$k" "$dir" "$vmt" &
	qpid=$!
	exec {lockfd}>&-
	trap 'kill "$qpid" 2>/dev/null; exit 130' INT TERM

	while :; do
		if [ $booted = 0 ] && [ -s "$dir/.vm/booted" ]; then
			booted=1
			echo "[$k] booted in $((SECONDS - start))s (guest uptime $(cat "$dir/.vm/booted")s)"
		fi
		if [ $i -lt ${#TESTS[@]} ] && [ -e "$dir/tests/${TESTS[$i]}.done" ]; then
			report_test "$k" "${TESTS[$i]}"
			i=$((i + 1))
			continue
		fi
		kill -0 "$qpid" 2>/dev/null || break
		sleep 1
	done
	wait "$qpid" || qrc=$?
	trap - INT TERM
}

# run_kernel K: boot one VM for kernel K, stream results as tests finish.
run_kernel() {
	local k=$1 dir=$OUT/$1 modindex="" vmt qrc=0 i=0 name start attempt=1

	rm -rf "$dir/tests" "$dir/.vm" "$dir/dmesg.txt" "$dir/console.log" "$dir/console-boot1.log" "$dir/kmemleak.txt"
	mkdir -p "$dir/tests" "$dir/.vm"
	if [ -e "$MODULE_DIR/$k/sroce.ko" ]; then
		modindex=$("$HERE/vm/modindex.sh" "$k" "$MODULE_DIR") ||
			echo "[$k] warning: could not prepare module indexes; the guest runs depmod"
	else
		echo "[$k] note: no $MODULE_DIR/$k/sroce.ko: tests that need the module will fail"
	fi
	write_boot_script "$k" "$modindex"
	vmt=$(vm_timeout)
	while :; do
		boot_and_watch "$k"
		# A kernel that dies before the guest's init ran says nothing
		# of sroce: TCG now and then breaks the kernel's own text
		# patching (an Oops at an int3 in sched_clock_cpu, 2 s into
		# boot).  Boot once more.
		[ ! -s "$dir/.vm/booted" ] && [ "$attempt" = 1 ] || break
		attempt=2
		mv "$dir/console.log" "$dir/console-boot1.log"
		echo "[$k] the VM stopped before the guest booted (qemu exit status $qrc; $dir/console-boot1.log): booting again"
		qrc=0
	done

	# Tests that finished between the last poll and the VM's exit, then
	# those that never did.
	for name in "${TESTS[@]:$i}"; do
		if [ -e "$dir/tests/$name.done" ]; then
			report_test "$k" "$name"
		else
			FAILED=$((FAILED + 1))
			echo "[$k] $(dots "$name") FAIL (did not finish: the VM stopped)"
		fi
	done
	check_kernel_log "$k"
	check_kmemleak "$k"
	check_kcsan "$k"
	if [ ! -e "$dir/.vm/finished" ]; then
		FAILED=$((FAILED + 1))
		if [ $qrc = 124 ]; then
			echo "[$k] VM killed after its timeout of ${vmt}s"
		else
			echo "[$k] VM stopped before the end (qemu exit status $qrc)"
		fi
		echo "    last lines of $dir/console.log:"
		tail -n 25 "$dir/console.log" 2>/dev/null | sed 's/^/      /'
	fi
	echo "[$k] done in $((SECONDS - start))s, results in $dir"
}

main() {
	local k summary

	parse_args "$@"
	resolve_kernels
	resolve_tests
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (make deps)"
	for k in "${KERNELS[@]}"; do
		run_kernel "$k"
	done
	summary="$PASSED passed, $FAILED failed"
	[ $SKIPPED -eq 0 ] || summary+=", $SKIPPED skipped"
	echo "$summary"
	[ $FAILED -eq 0 ]
}

main "$@"

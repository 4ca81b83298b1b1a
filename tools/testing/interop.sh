#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interop tests on the wire: two QEMU VMs joined by a virtio-net link, sroce
# on one side and the in-tree rdma_rxe on the other.
#
#   tools/testing/interop.sh [--kernel VER]... [--pair PAIR]...
#                            [--rxe-kernel VER] [--tests "NAME..."] [--out DIR]
#                            [--module-dir DIR] [--timeout SEC] [--smp N]
#
#   --kernel VER      a kernel release installed here (or "6.1", "6.12",
#                     "6.1-cloud", "6.12-cloud"); may be repeated; default:
#                     the two that tools/kernels.sh prints
#   --rxe-kernel VER  the kernel of the rdma_rxe VM; default: the same as
#                     the sroce VM's, or, for a kernel without rdma_rxe (the
#                     cloud ones), the generic kernel of its version: a
#                     cloud-kernel sroce against a generic-kernel rdma_rxe
#   --pair PAIR       SERVER-CLIENT: sroce-rxe, rxe-sroce or rxe-rxe (or
#                     sroce-sroce); may be repeated or a list ("a b");
#                     default: sroce-rxe and rxe-sroce
#   --tests "N..."    tests: names of tools/testing/interop/*.sh without
#                     .sh, or globs ("1*"); default: all, sorted
#   --out DIR         results in DIR/<VER>/<PAIR>/; default:
#                     build/interop-results
#   --module-dir DIR  sroce is DIR/<VER>/sroce.ko; default: build/
#   --timeout SEC     default timeout of a test (default 300; "# timeout:
#                     SEC" in a test's first 20 lines overrides it)
#   --smp N           vCPUs per VM (default 1: two VMs share 2 host cores)
#
# Example, the harness's own check, rxe on both sides:
#
#   tools/testing/interop.sh --kernel 6.1 --pair rxe-rxe
#
# VM A is the server (192.168.77.1, fd77::1), VM B the client
# (192.168.77.2, fd77::2); A listens on a QEMU socket netdev on 127.0.0.1,
# B connects to it.  Each runs vm/interop-guest.sh, which sets up the NIC
# and the RDMA device (sroce0 or rxe0) and then runs every selected test
# with SROCE_ROLE=server (A) or client (B); the two wait for each other
# through files in a share both mount (DIR/<VER>/<PAIR>/sync; 9p, or
# virtio-fs for a kernel without 9p).
#
# Results, per kernel and pair: A/ and B/, each like run.sh's per-kernel
# directory (tests/NAME.tap, dmesg.txt, console.log, .vm/), and
# B/tests/NAME.pcap, the client's capture of the RoCE traffic (UDP 4791,
# 2000 packets at most) of a test that failed.
#
# Counted: the client's TAP assertions, plus one "server side" assertion
# per test (the server script exited 0 with all its assertions ok), the
# set-up TAP of both VMs, and "kernel log clean" for each VM.  The last
# line is "N passed, N failed[, N skipped]"; the exit status is 1 if
# anything failed.
#
# Takes the lock of run.sh ($SROCE_VM_LOCK, default /run/lock/sroce-vm.lock)
# for each pair of VMs: nothing else runs a test VM meanwhile.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vm/done.sh
. "$HERE/vm/done.sh"
REPO=$(cd "$HERE/../.." && pwd)
TESTS_DIR=$HERE/interop

VM_LOCK=${SROCE_VM_LOCK:-/run/lock/sroce-vm.lock}
BOOT_ALLOWANCE=400
TEST_SLACK=80

# As run.sh: what fails the "kernel log clean" check.
KERNEL_LOG_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|kmemleak|possible circular locking'
KERNEL_LOG_BAD+='|inconsistent lock state|possible recursive locking'
KERNEL_LOG_BAD+='|suspicious RCU usage|hung task|blocked for more than'
KERNEL_LOG_BAD+='|soft lockup|general protection fault|Call Trace:|Kernel panic'

SERVER_ADDR=192.168.77.1 SERVER_ADDR6=fd77::1
CLIENT_ADDR=192.168.77.2 CLIENT_ADDR6=fd77::2

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed -n '1,29p' >&2
	exit 2
}

die() { echo "interop.sh: $*" >&2; exit 2; }

KERNELS=()
RXE_KERNEL=
PAIRS=()
MODULE_DIR=$REPO/build
TEST_PATTERNS=
OUT=$REPO/build/interop-results
TIMEOUT=300
SMP=1

parse_args() {
	local p
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel)     [ $# -ge 2 ] || usage; KERNELS+=("$2"); shift 2 ;;
		--pair)       [ $# -ge 2 ] || usage; for p in $2; do PAIRS+=("$p"); done; shift 2 ;;
		--rxe-kernel) [ $# -ge 2 ] || usage; RXE_KERNEL=$2; shift 2 ;;
		--module-dir) [ $# -ge 2 ] || usage; MODULE_DIR=$2; shift 2 ;;
		--tests)      [ $# -ge 2 ] || usage; TEST_PATTERNS=$2; shift 2 ;;
		--out)        [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
		--timeout)    [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
		--smp)        [ $# -ge 2 ] || usage; SMP=$2; shift 2 ;;
		-h|--help)    usage ;;
		*)            echo "interop.sh: unknown argument: $1" >&2; usage ;;
		esac
	done
	[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, not '$TIMEOUT'"
	[[ $SMP =~ ^[1-9][0-9]*$ ]] || die "--smp wants a number, not '$SMP'"
	[ ${#PAIRS[@]} -gt 0 ] || PAIRS=(sroce-rxe rxe-sroce)
	for p in "${PAIRS[@]}"; do
		[[ $p =~ ^(sroce|rxe)-(sroce|rxe)$ ]] ||
			die "--pair: SERVER-CLIENT of sroce and rxe, not '$p'"
	done
	MODULE_DIR=$(realpath -m "$MODULE_DIR")
	OUT=$(realpath -m "$OUT")
	[[ $OUT != *,* ]] || die "--out: no commas in the path, please"
}

# resolve_kernel VER: the installed release VER names ("6.1", "6.12-cloud"
# mean what tools/kernels.sh says).
resolve_kernel() {
	local k=$1

	if [ ! -d "/lib/modules/$k" ] && [[ $k =~ ^6\.[0-9]+(-cloud)?$ ]]; then
		k=$("$REPO/tools/kernels.sh" "$k") || die "no kernel for $1"
	fi
	if [ ! -r "/boot/vmlinuz-$k" ] || [ ! -d "/lib/modules/$k" ]; then
		die "kernel $k is not installed (/boot/vmlinuz-$k, /lib/modules/$k)"
	fi
	echo "$k"
}

resolve_kernels() {
	local i

	if [ ${#KERNELS[@]} -eq 0 ]; then
		mapfile -t KERNELS < <("$REPO/tools/kernels.sh")
	fi
	for i in "${!KERNELS[@]}"; do
		KERNELS[i]=$(resolve_kernel "${KERNELS[$i]}") || exit 2
	done
	[ -z "$RXE_KERNEL" ] || RXE_KERNEL=$(resolve_kernel "$RXE_KERNEL") || exit 2
}

# rxe_kernel_for K: the kernel of the rdma_rxe VM paired with a sroce VM
# on K: --rxe-kernel, or K if it has rdma_rxe, or else (Debian's cloud
# kernels have none) the generic kernel of K's version.
rxe_kernel_for() {
	local k=$1 v

	if [ -n "$RXE_KERNEL" ]; then
		echo "$RXE_KERNEL"
	elif grep -Eqs '^CONFIG_RDMA_RXE=[ym]$' "/boot/config-$k"; then
		echo "$k"
	else
		v=$(cut -d. -f1,2 <<<"$k")
		"$REPO/tools/kernels.sh" "$v" ||
			die "$k has no rdma_rxe and there is no generic $v kernel (--rxe-kernel)"
	fi
}

# TESTS: the selected tests (lib.sh is the library, not a test), sorted.
resolve_tests() {
	local all=() name pat matched

	for name in "$TESTS_DIR"/*.sh; do
		name=$(basename "$name" .sh)
		[ "$name" = lib ] || [ "$name" = setup ] || all+=("$name")
	done
	mapfile -t all < <(printf '%s\n' "${all[@]}" | LC_ALL=C sort)
	TESTS=()
	if [ -z "${TEST_PATTERNS// /}" ]; then
		TESTS=("${all[@]}")
	else
		for pat in $TEST_PATTERNS; do
			matched=0
			for name in "${all[@]}"; do
				# shellcheck disable=SC2053 # a glob on purpose
				[[ $name == ${pat%.sh} ]] && matched=1
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

test_timeout() {
	local t
	t=$(head -n 20 "$TESTS_DIR/$1.sh" | sed -n 's/^# timeout: *\([0-9][0-9]*\) *$/\1/p' | head -n 1)
	echo "${t:-$TIMEOUT}"
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

dots() {
	local name=$1 pad
	pad=$(printf '%*s' $((30 - ${#name})) '' | tr ' ' '.')
	echo "$name ${pad:-.}"
}

tap_failures() {
	awk '
		/^not ok/ || /^Bail out!/ { show = 1; n = 0; print "    " $0; next }
		/^# harness:/             { print "    " $0; next }
		/^(ok|not ok|1\.\.)/      { show = 0 }
		show && /^#/ && n++ < 15  { print "      " $0 }
	' "$1"
}

# tap_result TAP DONE: sets P F S SECS and EXTRA (problems beyond "not ok"
# lines: timeout, bail-out, no plan, bad exit status), as run.sh counts.
tap_result() {
	local tap=$1 done=$2 rc=1 secs=0 timedout=0 n plan bail
	EXTRA=()
	if [ ! -e "$done" ]; then
		P=0 F=0 S=0 SECS=0
		EXTRA+=("did not finish: the VM stopped")
		return
	fi
	read_done "$done"
	read -r P F S n plan bail < <(awk '
		/^ok( |$)/     { n++; if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) s++; else p++ }
		/^not ok( |$)/ { n++; if ($0 ~ /# *TODO/) s++; else f++ }
		/^1\.\.[0-9]+/ { split($1, a, /\.\./); plan = a[2]
		                 if (plan == 0 && $0 ~ /# *[Ss][Kk][Ii][Pp]/) s++ }
		/^Bail out!/   { bail = 1 }
		END { print p + 0, f + 0, s + 0, n + 0, (plan == "" ? -1 : plan), bail + 0 }
	' "$tap" 2>/dev/null || echo 0 0 0 0 -1 0)
	SECS=$secs
	if [ "$timedout" = 1 ]; then
		EXTRA+=("timed out after ${secs}s")
	elif [ "$bail" = 1 ]; then
		EXTRA+=("bailed out")
	elif [ "$plan" -lt 0 ]; then
		EXTRA+=("no plan (1..N): the test ended before tap_done (exit status $rc)")
	elif [ "$plan" -gt "$n" ]; then
		EXTRA+=("planned $plan assertions, ran $n")
	elif [ "$rc" != 0 ] && [ "$F" -eq 0 ]; then
		EXTRA+=("exit status $rc")
	fi
}

# count_line TAG LABEL P F S SECS: tally and print one result line.
count_line() {
	local tag=$1 label=$2 p=$3 f=$4 s=$5 secs=$6 status
	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + s))
	if [ "$f" -gt 0 ]; then status=FAIL; else status=ok; fi
	[ "$s" -eq 0 ] || status+=", $s skipped"
	echo "[$tag] $(dots "$label") $p/$((p + f + s)) $status (${secs}s)"
}

# report_setup TAG SIDE DIR WHAT
report_setup() {
	local tag=$1 side=$2 dir=$3
	tap_result "$dir/tests/setup.tap" "$dir/tests/setup.done"
	count_line "$tag" "setup $side ($4)" "$P" $((F + ${#EXTRA[@]})) "$S" "$SECS"
	if [ $((F + ${#EXTRA[@]})) -gt 0 ]; then
		[ -e "$dir/tests/setup.tap" ] && tap_failures "$dir/tests/setup.tap"
		[ ${#EXTRA[@]} -eq 0 ] || printf '    %s\n' "${EXTRA[@]}"
		echo "    output: $dir/tests/setup.tap"
	fi
}

# report_test TAG PAIRDIR NAME: the client's TAP plus the server's verdict.
report_test() {
	local tag=$1 a=$2/A b=$2/B name=$3 cp cf cs csecs cextra sp sf sextra

	tap_result "$b/tests/$name.tap" "$b/tests/$name.done"
	cp=$P cf=$((F + ${#EXTRA[@]})) cs=$S csecs=$SECS cextra=("${EXTRA[@]}")
	tap_result "$a/tests/$name.tap" "$a/tests/$name.done"
	sextra=("${EXTRA[@]}")
	sp=0 sf=0
	if [ "$F" -eq 0 ] && [ ${#sextra[@]} -eq 0 ]; then sp=1; else sf=1; fi
	count_line "$tag" "$name" $((cp + sp)) $((cf + sf)) "$cs" "$csecs"
	if [ $cf -gt 0 ]; then
		[ -e "$b/tests/$name.tap" ] && tap_failures "$b/tests/$name.tap"
		[ ${#cextra[@]} -eq 0 ] || printf '    %s\n' "${cextra[@]}"
		echo "    client output: $b/tests/$name.tap"
		[ -e "$b/tests/$name.pcap" ] && echo "    capture: $b/tests/$name.pcap"
	fi
	if [ $sf -gt 0 ]; then
		echo "    not ok - server side of $name"
		[ -e "$a/tests/$name.tap" ] && tap_failures "$a/tests/$name.tap" | sed 's/^/  /'
		[ ${#sextra[@]} -eq 0 ] || printf '      %s\n' "${sextra[@]}"
		echo "    server output: $a/tests/$name.tap"
	fi
}

# check_kernel_log TAG DIR LABEL: as run.sh.
check_kernel_log() {
	local tag=$1 dir=$2 label=$3 log bad

	log=$dir/dmesg.txt
	[ -s "$log" ] || log=$dir/console.log
	bad=$(awk -v re="$KERNEL_LOG_BAD" '
		/sroce-harness: start / { sub(/.*sroce-harness: start /, ""); t = $1; next }
		/sroce-harness: end /   { t = ""; next }
		$0 ~ re { print "    " (t == "" ? "[boot]" : "[" t "]") " " $0 }
	' "$log" 2>/dev/null || true)
	if [ -s "$dir/kmemleak.txt" ]; then
		bad+=$'\n'"    kmemleak: $(grep -c unreferenced "$dir/kmemleak.txt") leaks, see $dir/kmemleak.txt"
	fi
	if [ -z "$bad" ]; then
		PASSED=$((PASSED + 1))
		echo "[$tag] $(dots "kernel log clean $label") ok"
		return
	fi
	FAILED=$((FAILED + 1))
	echo "[$tag] $(dots "kernel log clean $label") FAIL"
	printf '%s\n' "$bad" | head -n 40
	echo "    log: $log"
}

# ----------------------------------------------------------------- VMs ----

# write_boot_script DIR K ROLE TYPE PEER-TYPE LOCAL LOCAL6 PEER PEER6 MODINDEX
write_boot_script() {
	local dir=$1 k=$2 var
	{
		echo "#!/bin/bash"
		echo "# Written by tools/testing/interop.sh for $k, $3 side."
		printf 'export %s=%q\n' \
			SROCE_REPO "$REPO" \
			SROCE_MODULE_DIR "$MODULE_DIR" \
			SROCE_MODINDEX "${10}" \
			SROCE_TESTS "${TESTS[*]}" \
			SROCE_TEST_TIMEOUT "$TIMEOUT" \
			SROCE_ROLE "$3" \
			SROCE_DEV_TYPE "$4" \
			SROCE_PEER_DEV_TYPE "$5" \
			SROCE_LOCAL_ADDR "$6" SROCE_LOCAL_ADDR6 "$7" \
			SROCE_PEER_ADDR "$8" SROCE_PEER_ADDR6 "$9" \
			SROCE_SERVER_ADDR "$SERVER_ADDR" SROCE_SERVER_ADDR6 "$SERVER_ADDR6"
		for var in $(compgen -e | grep '^SROCE_' || true); do
			case $var in
			SROCE_REPO|SROCE_MODULE_DIR|SROCE_MODINDEX|SROCE_TESTS|SROCE_TEST_TIMEOUT) ;;
			SROCE_ROLE|SROCE_DEV_TYPE|SROCE_PEER_DEV_TYPE|SROCE_*_ADDR|SROCE_*_ADDR6) ;;
			*) printf 'export %s=%q\n' "$var" "${!var}" ;;
			esac
		done
		printf 'exec /bin/bash %q\n' "$REPO/tools/testing/vm/interop-guest.sh"
	} >"$dir/.vm/boot.sh"
}

port_free() { ! ss -Htan "sport = :$1" | grep -q .; }
port_listening() { ss -Htln "sport = :$1" | grep -q .; }

free_port() {
	local p
	for p in $(seq 20000 20999); do
		port_free "$p" && { echo "$p"; return 0; }
	done
	return 1
}

QPIDS=()
kill_vms() {
	local p
	for p in "${QPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

# run_pair K PAIR: sroce's VM(s) boot K, rdma_rxe's rxe_kernel_for K.
run_pair() {
	local k=$1 dir=$OUT/$1/$2 tag="$1 $2"
	local stype=${2%-*} ctype=${2#*-} modindex="" vmt port lockfd start
	local apid bpid arc=0 brc=0 i=0 booted_a=0 booted_b=0 setup_done=0 name
	local ka=$1 kb=$1 krxe

	krxe=$(rxe_kernel_for "$k") || exit 2
	[ "$stype" = sroce ] || ka=$krxe
	[ "$ctype" = sroce ] || kb=$krxe
	[ "$ka" = "$kb" ] || tag+=" (rxe on $krxe)"

	rm -rf "$dir"
	mkdir -p "$dir/A/tests" "$dir/A/.vm" "$dir/B/tests" "$dir/B/.vm" "$dir/sync"
	if [ "$stype" = sroce ] || [ "$ctype" = sroce ]; then
		if [ -e "$MODULE_DIR/$k/sroce.ko" ]; then
			modindex=$("$HERE/vm/modindex.sh" "$k" "$MODULE_DIR") ||
				echo "[$tag] warning: could not prepare module indexes; the guest runs depmod"
		else
			echo "[$tag] note: no $MODULE_DIR/$k/sroce.ko: the sroce side will fail"
		fi
	fi
	write_boot_script "$dir/A" "$k" server "$stype" "$ctype" \
		"$SERVER_ADDR" "$SERVER_ADDR6" "$CLIENT_ADDR" "$CLIENT_ADDR6" "$modindex"
	write_boot_script "$dir/B" "$k" client "$ctype" "$stype" \
		"$CLIENT_ADDR" "$CLIENT_ADDR6" "$SERVER_ADDR" "$SERVER_ADDR6" "$modindex"
	vmt=$(vm_timeout)

	# Both qemus inherit the locked descriptor: the lock lasts until the
	# last of them is gone.
	exec {lockfd}>>"$VM_LOCK"
	if ! flock -n "$lockfd"; then
		echo "[$tag] waiting for another test VM to finish ($VM_LOCK)"
		flock "$lockfd"
	fi
	port=$(free_port) || die "no free TCP port in 20000-20999"
	echo "[$tag] booting VMs A (server, $stype) and B (client, $ctype) for" \
		"${#TESTS[@]} test(s), link on 127.0.0.1:$port, VM timeout ${vmt}s"
	start=$SECONDS
	# The "sync" share: 9p or virtio-fs, as each VM's kernel has.
	SROCE_VM_SMP=$SMP SROCE_VM_SHARES="sync=$dir/sync" "$HERE/vm/qemu.sh" "$ka" "$dir/A" "$vmt" \
		-netdev "socket,id=n0,listen=127.0.0.1:$port" \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:01 &
	apid=$!
	QPIDS=("$apid")
	trap 'kill_vms; exit 130' INT TERM
	# B connects: A must be listening first.
	i=0
	until port_listening "$port"; do
		i=$((i + 1))
		if [ $i -gt 120 ] || ! kill -0 "$apid" 2>/dev/null; then
			echo "[$tag] VM A did not open its end of the link"
			break
		fi
		sleep 0.5
	done
	SROCE_VM_SMP=$SMP SROCE_VM_SHARES="sync=$dir/sync" "$HERE/vm/qemu.sh" "$kb" "$dir/B" "$vmt" \
		-netdev "socket,id=n0,connect=127.0.0.1:$port" \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:02 &
	bpid=$!
	QPIDS+=("$bpid")
	exec {lockfd}>&-

	i=0
	while :; do
		if [ $booted_a = 0 ] && [ -s "$dir/A/.vm/booted" ]; then
			booted_a=1
			echo "[$tag] A booted in $((SECONDS - start))s"
		fi
		if [ $booted_b = 0 ] && [ -s "$dir/B/.vm/booted" ]; then
			booted_b=1
			echo "[$tag] B booted in $((SECONDS - start))s"
		fi
		if [ $setup_done = 0 ] && [ -e "$dir/A/tests/setup.done" ] &&
			[ -e "$dir/B/tests/setup.done" ]; then
			setup_done=1
			report_setup "$tag" A "$dir/A" "server, $stype"
			report_setup "$tag" B "$dir/B" "client, $ctype"
		fi
		if [ $setup_done = 1 ] && [ $i -lt ${#TESTS[@]} ] &&
			[ -e "$dir/A/tests/${TESTS[$i]}.done" ] &&
			[ -e "$dir/B/tests/${TESTS[$i]}.done" ]; then
			report_test "$tag" "$dir" "${TESTS[$i]}"
			i=$((i + 1))
			continue
		fi
		# One VM gone before its end: tell the other to stop waiting.
		if { ! kill -0 "$apid" 2>/dev/null && [ ! -e "$dir/A/.vm/finished" ]; } ||
			{ ! kill -0 "$bpid" 2>/dev/null && [ ! -e "$dir/B/.vm/finished" ]; }; then
			[ -e "$dir/sync/abort" ] || : >"$dir/sync/abort"
		fi
		kill -0 "$apid" 2>/dev/null || kill -0 "$bpid" 2>/dev/null || break
		sleep 1
	done
	wait "$apid" || arc=$?
	wait "$bpid" || brc=$?
	trap - INT TERM
	QPIDS=()

	if [ $setup_done = 0 ]; then
		report_setup "$tag" A "$dir/A" "server, $stype"
		report_setup "$tag" B "$dir/B" "client, $ctype"
	fi
	for name in "${TESTS[@]:$i}"; do
		report_test "$tag" "$dir" "$name"
	done
	check_kernel_log "$tag" "$dir/A" "A ($stype)"
	check_kernel_log "$tag" "$dir/B" "B ($ctype)"
	vm_end "$tag" A "$dir/A" "$arc" "$vmt"
	vm_end "$tag" B "$dir/B" "$brc" "$vmt"
	echo "[$tag] done in $((SECONDS - start))s, results in $dir"
}

# vm_end TAG SIDE DIR QEMU-RC VMT: a failure if the VM did not end normally.
vm_end() {
	[ -e "$3/.vm/finished" ] && return 0
	FAILED=$((FAILED + 1))
	if [ "$4" = 124 ]; then
		echo "[$1] VM $2 killed after its timeout of ${5}s"
	else
		echo "[$1] VM $2 stopped before the end (qemu exit status $4)"
	fi
	echo "    last lines of $3/console.log:"
	tail -n 25 "$3/console.log" 2>/dev/null | sed 's/^/      /'
}

main() {
	local k p summary

	parse_args "$@"
	resolve_kernels
	resolve_tests
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (make deps)"
	for k in "${KERNELS[@]}"; do
		for p in "${PAIRS[@]}"; do
			run_pair "$k" "$p"
		done
	done
	summary="$PASSED passed, $FAILED failed"
	[ $SKIPPED -eq 0 ] || summary+=", $SKIPPED skipped"
	echo "$summary"
	[ $FAILED -eq 0 ]
}

main "$@"

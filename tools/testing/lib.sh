# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by every test in tools/testing/tests/, inside the test VM:
#
#   . "$(dirname "$0")/../lib.sh"
#
# A test prints TAP (https://testanything.org) on stdout with the helpers
# below and ends with tap_done.  Lines starting with "# " are diagnostics.
# The library sets no shell options: a failed command does not end a test,
# it just makes an assertion fail.  Use bail_out when going on is pointless.
#
# Environment (set by tools/testing/vm/guest.sh):
#   SROCE_REPO        the repository, as seen in the guest (read-only)
#   SROCE_MODULE_DIR  where the built modules are: $SROCE_MODULE_DIR/<uname -r>/
#   SROCE_MODINDEX    module indexes made on the host (vm/modindex.sh)

SROCE_TESTING=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SROCE_REPO=${SROCE_REPO:-$(cd "$SROCE_TESTING/../.." && pwd)}
SROCE_MODULE_DIR=${SROCE_MODULE_DIR:-$SROCE_REPO/build}
KVER=$(uname -r)
SROCE_KO=$SROCE_MODULE_DIR/$KVER/sroce.ko
# sroce_install leaves its verdict here, once per boot.
SROCE_STATE=/run/sroce

# pyverbs is only in Debian's python; another python3 may come first on PATH.
# shellcheck disable=SC2034 # for the tests
PYTHON=/usr/bin/python3

# ---------------------------------------------------------------- TAP ----

_tap_n=0
_tap_failed=0
_tap_mark=$SECONDS

# An assertion that took 5 s or more says how long (after its result
# line), so that the slow ones are found from a CI log.
_tap_took() {
	local d=$((SECONDS - _tap_mark))

	_tap_mark=$SECONDS
	[ $d -lt 5 ] || echo "# took ${d}s"
}

# diag TEXT...: print TEXT as TAP diagnostic lines ("# ...").
diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1"
	_tap_took
}

# not_ok DESC [DIAGNOSTIC...]
not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
	_tap_took
	shift
	[ $# -eq 0 ] || diag "$@"
}

# skip DESC REASON: an assertion that was not tried (counted as skipped).
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP ${2:-}"
	_tap_took
}

# skip_test DESC REASON: skip the whole test (one skipped assertion) and
# end it: for a test this kernel cannot run.
skip_test() {
	skip "$1" "$2"
	tap_done
}

# kernel_has MODULE: true if this kernel has MODULE, loadable or built in.
# Debian's cloud kernels have no rdma_rxe, siw, iSER or SRP (see
# Documentation/install.rst).
kernel_has() {
	modprobe -n -q "$1" 2>/dev/null
}

# The last 40 lines of a command's output, for diagnostics.
_tail_output() {
	if [ -n "$1" ]; then
		printf '%s\n' "$1" | tail -n 40
	else
		echo "(no output)"
	fi
}

# check DESC CMD [ARG...]: ok if CMD exits 0; otherwise show its output.
check() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "command: $*" "exit status: $rc" "$(_tail_output "$out")"
	fi
	return $rc
}

# check_fail DESC CMD [ARG...]: ok if CMD fails (exits non-zero).
check_fail() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -ne 0 ]; then
		ok "$desc"
		return 0
	fi
	not_ok "$desc" "command: $*" "expected failure, got exit status 0" \
		"$(_tail_output "$out")"
	return 1
}

# check_output DESC ERE CMD [ARG...]: ok if the output (stdout and stderr)
# of CMD matches the extended regular expression ERE, whatever CMD's exit
# status.  The output is left in $CHECK_OUTPUT for further checks.
check_output() {
	local desc=$1 re=$2 rc=0
	shift 2
	CHECK_OUTPUT=$("$@" 2>&1) || rc=$?
	if printf '%s\n' "$CHECK_OUTPUT" | grep -Eq -- "$re"; then
		ok "$desc"
		return 0
	fi
	not_ok "$desc" "command: $*" "exit status: $rc" "expected to match: $re" \
		"$(_tail_output "$CHECK_OUTPUT")"
	return 1
}

# tap_done: print the plan and end the test; fails if any assertion failed.
tap_done() {
	echo "1..$_tap_n"
	[ $_tap_failed -eq 0 ] && exit 0
	exit 1
}

# require_tester DIR NAME: the test program tools/testing/DIR/NAME, which
# is built on the host (make -C tools/testing/DIR), in BIN; if it is not
# built, a failed assertion saying so ends the test.
require_tester() {
	BIN=$SROCE_REPO/tools/testing/$1/$2
	[ -x "$BIN" ] && return 0
	not_ok "$2 is built" "no $BIN" \
		"build it on the host first: make -C tools/testing/$1"
	tap_done
}

# bail_out REASON: stop the test now (the harness counts it as a failure).
bail_out() {
	echo "Bail out! $*"
	exit 1
}

# ------------------------------------------------------------ waiting ----

# poll_until TIMEOUT CMD [ARG...]: run CMD until it succeeds, for at most
# TIMEOUT seconds.  Quiet; returns CMD's last status.  Polls twice a second:
# under TCG every fork is expensive.
poll_until() {
	local timeout=$1 deadline
	shift
	deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.5
	done
}

# wait_for DESC TIMEOUT CMD [ARG...]: an assertion: ok once CMD succeeds,
# not ok if it still fails after TIMEOUT seconds.
wait_for() {
	local desc=$1 timeout=$2 start=$SECONDS out
	shift 2
	if poll_until "$timeout" "$@"; then
		ok "$desc"
		return 0
	fi
	out=$("$@" 2>&1)
	not_ok "$desc" "timed out after $((SECONDS - start)) s: $*" "$(_tail_output "$out")"
	return 1
}

# --------------------------------------------------------- the module ----

# sroce_install: make the built modules ($SROCE_MODULE_DIR/<uname -r>/*.ko)
# loadable with "modprobe sroce" and autoloadable by "rdma link add ...
# type sroce" (module alias rdma-link-sroce), without writing to the host's
# /lib/modules (the guest's root is the host's /, read-only over 9p).
#
# How: an overlayfs on /lib/modules/<uname -r> whose upper layer is tmpfs;
# the .ko files go to updates/ (which depmod prefers to kernel/) with the
# module indexes depmod made for them on the host ($SROCE_MODINDEX, see
# vm/modindex.sh).  Without those indexes it runs depmod here, which works
# but takes a minute or more under TCG.
#
# SROCE_MODULE_FROM=system: the module is the one the host installed in
# /lib/modules/<uname -r> (the DKMS package's, make test-dkms), found by
# modprobe through the host's own indexes; nothing is laid over them.
#
# Done once per boot, by the harness before the first test; later calls
# return the first verdict.  On failure the reason is in
# $SROCE_STATE/install-error and require_sroce reports it.
sroce_install() {
	local moddir=/lib/modules/$KVER err

	[ -e "$SROCE_STATE/installed" ] && return 0
	[ -e "$SROCE_STATE/install-error" ] && return 1
	mkdir -p "$SROCE_STATE"
	if err=$(_sroce_install "$moddir" 2>&1); then
		touch "$SROCE_STATE/installed"
		return 0
	fi
	printf '%s\n' "$err" >"$SROCE_STATE/install-error"
	return 1
}

_sroce_install() {
	local moddir=$1 ovl=$SROCE_STATE/modules

	if [ "${SROCE_MODULE_FROM:-}" = system ]; then
		modinfo sroce >/dev/null || {
			echo "no sroce module in $moddir (SROCE_MODULE_FROM=system)"
			return 1
		}
		return 0
	fi
	[ -e "$SROCE_KO" ] || {
		echo "no $SROCE_KO: build the module (make) or pass --module-dir"
		return 1
	}
	if ! mountpoint -q "$moddir"; then
		mkdir -p "$ovl/upper" "$ovl/work" || return 1
		mount -t overlay overlay \
			-o "lowerdir=$moddir,upperdir=$ovl/upper,workdir=$ovl/work" \
			"$moddir" || return 1
	fi
	if [ -n "${SROCE_MODINDEX:-}" ] && [ -d "$SROCE_MODINDEX" ]; then
		cp -r "$SROCE_MODINDEX/." "$moddir/" || return 1
	else
		mkdir -p "$moddir/updates" &&
			cp "$SROCE_MODULE_DIR/$KVER"/*.ko "$moddir/updates/" &&
			depmod -a "$KVER" || return 1
	fi
	modinfo sroce >/dev/null || return 1
}

# require_sroce: end the test with a failed assertion unless sroce_install
# succeeded.  Call it first in every test that needs the module.
require_sroce() {
	sroce_install && return 0
	not_ok "sroce module is installed" \
		"$(cat "$SROCE_STATE/install-error" 2>/dev/null || echo 'sroce_install failed')"
	tap_done
}

# The kernel-ULP tests (33-37) run on sroce; SROCE_ULP_DRIVER=rxe runs
# them on rdma_rxe instead, to compare (the device keeps its sroceN name).
ULP_LINK_TYPE=${SROCE_ULP_DRIVER:-sroce}

# require_ulp_device: require_sroce, or rdma_rxe under SROCE_ULP_DRIVER=rxe.
require_ulp_device() {
	if [ "$ULP_LINK_TYPE" = sroce ]; then
		require_sroce
		return
	fi
	modprobe "rdma_$ULP_LINK_TYPE" && return 0
	not_ok "rdma_$ULP_LINK_TYPE loads"
	tap_done
}

sroce_load() { modprobe sroce "$@"; }
sroce_unload() { rmmod sroce; }

# gid_of_addr ADDR: the GID of an IPv4 or IPv6 address as sysfs shows it
# (8 groups of 4 hex digits; IPv4 mapped).  In the shell: a python per
# call costs a second under TCG, and the GID polls call it often.
gid_of_addr() {
	local a=$1 head tail hs=() ts=() gs=() i

	if [[ $a =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' \
			"${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" \
			"${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}"
		return 0
	fi
	[[ $a =~ ^[0-9a-fA-F:]+$ ]] || return 1
	head=$a tail=
	if [[ $a == *::* ]]; then
		head=${a%%::*} tail=${a#*::}
	fi
	[ -z "$head" ] || IFS=: read -ra hs <<<"$head"
	[ -z "$tail" ] || IFS=: read -ra ts <<<"$tail"
	gs=("${hs[@]}")
	for ((i = ${#hs[@]} + ${#ts[@]}; i < 8; i++)); do
		gs+=(0)
	done
	gs+=("${ts[@]}")
	[ ${#gs[@]} -eq 8 ] || return 1
	printf '%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x\n' \
		$((16#${gs[0]})) $((16#${gs[1]})) $((16#${gs[2]})) $((16#${gs[3]})) \
		$((16#${gs[4]})) $((16#${gs[5]})) $((16#${gs[6]})) $((16#${gs[7]}))
}

# rdma_gid_index DEV PORT ADDRESS [TYPE]: print the index of the GID of
# ADDRESS (IPv4 or IPv6) on DEV's PORT, of TYPE ("RoCE v2" by default).
# Reads only the first 16 entries: the whole sysfs table (1024 entries)
# takes minutes under TCG.
rdma_gid_index() {
	local dev=$1 port=$2 addr=$3 type=${4:-RoCE v2} want i dir gid
	dir=/sys/class/infiniband/$dev/ports/$port
	want=$(gid_of_addr "$addr") || return 1
	for i in $(seq 0 15); do
		gid=$(cat "$dir/gids/$i" 2>/dev/null) || continue
		[ "$gid" = "$want" ] || continue
		[ "$(cat "$dir/gid_attrs/types/$i" 2>/dev/null)" = "$type" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# ----------------------------------------------------------- topology ----
#
# Everything lives inside the VM: these addresses never leave it.

# tcp_listening NS PORT: true if a TCP socket listens on PORT in namespace
# NS (a test's server is up; for poll_until).
tcp_listening() {
	ip netns exec "$1" ss -ltn | grep -q ":$2 "
}

# rdmacm_listening NS PORT: true if an rdma_cm ID in namespace NS listens
# on PORT (a server started with perftest's -R opens no TCP port).
rdmacm_listening() {
	run_ns "$1" rdma resource show cm_id |
		grep -q "state LISTEN .*src-addr [^ ]*:$2\b"
}

# rdmacm_prog_listening NS PROG: true if program PROG has an rdma_cm ID
# listening in namespace NS (rping, ucmatose, udaddy: ports of their own).
rdmacm_prog_listening() {
	run_ns "$1" rdma resource show cm_id |
		grep -q "state LISTEN .*comm ${2##*/} "
}

# run_ns NS CMD [ARG...]: run CMD in network namespace NS.
run_ns() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

# True once no address in namespace NS is still tentative (IPv6 DAD) and
# every veth there has carrier.
_topo_ready() {
	local ns=$1
	! ip -n "$ns" addr show | grep -q tentative &&
		! ip -n "$ns" link show type veth | grep -q NO-CARRIER
}

# _topo_addr NS DEV V4 V6: bring lo and DEV up and give DEV its addresses.
_topo_addr() {
	local ns=$1 dev=$2 v4=$3 v6=$4
	ip -n "$ns" link set lo up &&
		ip -n "$ns" addr add "$v4/24" dev "$dev" &&
		ip -n "$ns" addr add "$v6/64" dev "$dev" nodad &&
		ip -n "$ns" link set "$dev" up
}

# topo_veth: two hosts, one wire.
#   ns0: veth0 10.0.0.1/24 fd00::1/64  <---->  ns1: veth1 10.0.0.2/24 fd00::2/64
topo_veth() {
	topo_clean
	ip netns add ns0 && ip netns add ns1 &&
		ip link add veth0 netns ns0 type veth peer name veth1 netns ns1 &&
		_topo_addr ns0 veth0 10.0.0.1 fd00::1 &&
		_topo_addr ns1 veth1 10.0.0.2 fd00::2 &&
		poll_until 10 _topo_ready ns0 && poll_until 10 _topo_ready ns1
}

# topo_loopback: one host talking to itself through one device.
#   ns0: veth0 10.0.0.1/24 fd00::1/64, its peer veth1 also in ns0, up, with
#   no address.
# A veth rather than a dummy device: it has a MAC address and carrier like
# a NIC, and the peer is where a capture (tcpdump -i veth1) sees what the
# RDMA device sends.  Traffic to 10.0.0.1 stays in the RDMA device's
# loopback path; nothing is meant to answer on veth1.
topo_loopback() {
	topo_clean
	ip netns add ns0 &&
		ip -n ns0 link add veth0 type veth peer name veth1 &&
		_topo_addr ns0 veth0 10.0.0.1 fd00::1 &&
		ip -n ns0 link set veth1 up &&
		poll_until 10 _topo_ready ns0
}

# topo_routed_veth: two hosts, one wire, both in the initial namespace
# (rdma_rxe works only there, and so the ULP and bench comparisons do):
#   veth0 10.0.0.1/24  <---->  veth1 10.0.0.2/24
# Two local addresses would normally talk through the local table, never
# the wire, so the local rule moves behind two rules for locally generated
# traffic (iif lo) that send each direction out of its own veth;
# accept_local and rp_filter=0 let the other end take packets from an
# address of its own host.  topo_routed_veth_clean undoes it.
_TOPO_RULES=(
	"pref 10 from 10.0.0.1 to 10.0.0.2 iif lo lookup 101"
	"pref 11 from 10.0.0.2 to 10.0.0.1 iif lo lookup 102"
)
topo_routed_veth() {
	local r i

	ip link add veth0 type veth peer name veth1 &&
		ip addr add 10.0.0.1/24 dev veth0 &&
		ip addr add 10.0.0.2/24 dev veth1 &&
		ip link set veth0 up && ip link set veth1 up || return 1
	for i in all veth0 veth1; do
		sysctl -qw "net.ipv4.conf.$i.accept_local=1" \
			"net.ipv4.conf.$i.rp_filter=0" || return 1
	done
	ip rule add pref 100 lookup local && ip rule del pref 0 || return 1
	for r in "${_TOPO_RULES[@]}"; do
		# shellcheck disable=SC2086 # the words of a rule
		ip rule add $r || return 1
	done
	ip route add 10.0.0.2 dev veth0 src 10.0.0.1 table 101 &&
		ip route add 10.0.0.1 dev veth1 src 10.0.0.2 table 102
}

topo_routed_veth_clean() {
	local r

	ip link del veth0 2>/dev/null
	for r in "${_TOPO_RULES[@]}"; do
		# shellcheck disable=SC2086
		ip rule del $r 2>/dev/null
	done
	if ip rule show pref 100 | grep -q 'lookup local'; then
		ip rule add pref 0 lookup local && ip rule del pref 100
	fi
	ip route flush table 101 2>/dev/null
	ip route flush table 102 2>/dev/null
	return 0
}

# cm_pair NAME SERVER-CMD... -- CLIENT-CMD...: an rdma_cm program pair,
# server in ns0, then client in ns1; both must exit 0.  $server is the
# server's pid while it runs (for a cleanup trap).
cm_pair() {
	local name=$1 server_cmd=() rc=0
	shift
	while [ "$1" != -- ]; do server_cmd+=("$1"); shift; done
	shift
	run_ns ns0 timeout 120 "${server_cmd[@]}" >server.log 2>&1 &
	server=$!
	# A client that comes before the listener is rejected (reason 8).
	poll_until 20 rdmacm_prog_listening ns0 "${server_cmd[0]}" || true
	check "$name (client)" run_ns ns1 timeout 120 "$@"
	wait "$server" || rc=$?
	if [ $rc -eq 0 ]; then ok "$name (server)"; else
		not_ok "$name (server)" "exit $rc" "$(tail -n 20 server.log)"; fi
	server=
}

# topo_clean: delete the namespaces (and so the veths) of either topology.
topo_clean() {
	local ns
	for ns in ns0 ns1; do
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------- TAP programs ----

# relay CMD [ARG...]: CMD prints "ok - DESC" / "not ok - DESC" lines and
# other output, as it goes; each of those lines becomes one of our
# assertions, the rest diagnostics (shown as they come: progress lines).
# No process substitution: the VM has no /dev/fd.  The caller sets
# "shopt -s lastpipe", so that the loop runs in its shell and the
# assertions count.
relay() {
	local line rc=""
	{ "$@" 2>&1; echo "__rc=$?"; } | while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		__rc=*) rc=${line#__rc=} ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
	[ "$rc" = 0 ] || diag "exit status $rc"
}

# tap_relay LABEL CMD [ARG...]: run CMD, a program printing TAP, and
# re-emit each of its assertions as one of ours, "LABEL: description"; its
# other output becomes diagnostics.  One more assertion says whether it
# ran to its plan and exited 0.  The output is also kept in
# $RELAY_OUTPUT.  (The VM has no /dev/fd: no process substitution.)
tap_relay() {
	local label=$1 line n=0 nfail=0 plan="" rc=0 bail="" start=$SECONDS desc
	local re='^(not )?ok [0-9]+( - )?(.*)$'
	shift
	RELAY_OUTPUT=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			n=$((n + 1))
			desc=${BASH_REMATCH[3]}
			if [ -n "${BASH_REMATCH[1]}" ]; then
				nfail=$((nfail + 1))
				not_ok "$label: $desc"
			else
				ok "$label: $desc"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line == "Bail out!"* ]]; then
			bail=${line#Bail out! }
			echo "# $line"
		elif [[ $line == "#"* ]]; then
			echo "$line"
		elif [ -n "$line" ]; then
			echo "# $line"
		fi
	done <<<"$RELAY_OUTPUT"
	if [ -n "$bail" ]; then
		not_ok "$label: ran to the end" "gave up after $n assertions: $bail"
	elif [ -z "$plan" ]; then
		not_ok "$label: ran to the end" "no plan after $n assertions, exit status $rc"
	elif [ "$plan" != "$n" ]; then
		not_ok "$label: ran to the end" "planned $plan, ran $n"
	elif [ "$rc" != 0 ] && [ $nfail -eq 0 ]; then
		not_ok "$label: ran to the end" "exit status $rc with no failed assertion"
	else
		ok "$label: ran to the end ($n assertions, exit status $rc, $((SECONDS - start)) s)"
	fi
}

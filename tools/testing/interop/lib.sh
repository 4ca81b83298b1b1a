# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the two-VM interop tests (tools/testing/interop/NN-*.sh) after
# nothing else: it sources ../lib.sh itself.
#
#   . "$(dirname "$0")/lib.sh"
#
# Each interop test runs in BOTH VMs at once (see ../interop.sh): VM A as
# the server, VM B as the client, one RDMA device on each side, joined by a
# virtio-net link.  Both sides run the same script and so make the same
# sequence of pair_* calls; each call is one "step" and both sides number
# the steps the same way, which is how they find each other's sync files.
#
# Environment (set by ../vm/interop-guest.sh):
#   SROCE_ROLE         server (VM A) or client (VM B)
#   SROCE_DEV          the local RDMA device: sroce0 or rxe0
#   SROCE_DEV_TYPE     sroce or rxe
#   SROCE_PEER_DEV_TYPE  the other side's
#   SROCE_NIC          the local virtio-net interface (eth0)
#   SROCE_LOCAL_ADDR   SROCE_LOCAL_ADDR6   this VM's IPv4 / IPv6 address
#   SROCE_PEER_ADDR    SROCE_PEER_ADDR6    the other VM's
#   SROCE_SERVER_ADDR  SROCE_SERVER_ADDR6  VM A's (the same on both sides)
#   SROCE_GID4         SROCE_GID6          local GID index of each address
#   SROCE_SYNC         a directory both VMs see (9p, host-backed), this
#                      test's own
#   SROCE_PORT_BASE    first TCP port this test may use
#
# Results: the client's TAP is what counts.  For each step the client
# prints two assertions, "DESC" (its own command exited 0 and printed what
# was expected) and "DESC (server)" (the server's command exited 0); the
# server prints only the second one.
#
# Sync protocol, files in $SROCE_SYNC (written atomically, rename):
#   ready.N.server   "ok" once the server of step N is listening, or
#                    "fail ..." if it could not start
#   cdone.N.client   the client's exit status, when its command is over
#   sdone.N.server   the server's exit status; slog.N.server: its output
# and $SROCE_SYNC/../abort, written by the host when a VM is gone, makes
# every wait give up at once.

# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SROCE_ROLE=${SROCE_ROLE:?SROCE_ROLE not set: interop tests run under interop.sh}
if [ "$SROCE_ROLE" = server ]; then _peer_role=client; else _peer_role=server; fi

# Seconds: the server getting ready; a client or server command; the
# client waiting for the server to report.
PAIR_READY_TIMEOUT=${PAIR_READY_TIMEOUT:-60}
PAIR_CMD_TIMEOUT=${PAIR_CMD_TIMEOUT:-120}

_pair_step=0
PAIR_PORT=

is_server() { [ "$SROCE_ROLE" = server ]; }
is_client() { [ "$SROCE_ROLE" = client ]; }

# sync_put NAME [TEXT]: publish NAME (suffixed with our role) to the peer.
sync_put() {
	local f=$SROCE_SYNC/$1.$SROCE_ROLE
	printf '%s\n' "${2:-}" >"$f.tmp" && mv -f "$f.tmp" "$f"
}

# sync_get NAME TIMEOUT: wait for the peer's NAME, print its content.
# Returns 1 on timeout, 2 if the host says the peer VM is gone.
sync_get() {
	local f=$SROCE_SYNC/$1.$_peer_role deadline=$((SECONDS + $2))
	until [ -e "$f" ]; do
		[ -e "$SROCE_SYNC/../abort" ] && return 2
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.5
	done
	cat "$f"
}

# Readiness checks for pair_run's READY argument.
_ready_tcp() { ss -Hltn "sport = :$1" | grep -q .; }
_ready_cm() { rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN'; }
# "log:ERE": the server's output so far has a line matching ERE.
_pair_ready() {
	case $1 in
	tcp:*)   _ready_tcp "${1#tcp:}" ;;
	cm)      _ready_cm ;;
	log:*)   grep -Eq -- "${1#log:}" "$_pair_log" 2>/dev/null ;;
	*)       return 0 ;;
	esac
}

# _pair_ready_alive READY PID: READY holds, or the server PID is gone (then
# succeeds at once, to end the wait, with _pair_dead=1).
_pair_ready_alive() {
	kill -0 "$2" 2>/dev/null || { _pair_dead=1; return 0; }
	_pair_ready "$1"
}

# pair_step: start a new step; sets PAIR_PORT, a TCP port for it.
pair_step() {
	_pair_step=$((_pair_step + 1))
	PAIR_PORT=$((${SROCE_PORT_BASE:-18500} + _pair_step))
}

# pair_run DESC READY ERE SERVER-CMD... -- CLIENT-CMD...
#   The server side runs SERVER-CMD in the background and tells the client
#   once READY holds ("tcp:PORT": listening on TCP PORT; "cm": an rdma_cm
#   listener exists; "log:ERE": the server printed a line matching ERE,
#   so far; "none").  The client then runs CLIENT-CMD, which must
#   exit 0 and print a line matching ERE ("" for any).  Call pair_step
#   first (it picks PAIR_PORT).
pair_run() {
	local desc=$1 ready=$2 re=$3 s=() c=() n=$_pair_step
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do s+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	c=("$@")
	if is_server; then
		_pair_server "$desc" "$n" "$ready" "${s[@]}"
	else
		_pair_client "$desc" "$n" "$re" "${c[@]}"
	fi
}

_pair_server() {
	local desc=$1 n=$2 ready=$3 pid rc=0 log=server.$2.log st
	shift 3
	timeout --kill-after=5 "$PAIR_CMD_TIMEOUT" "$@" >"$log" 2>&1 &
	pid=$!
	# Ready when READY holds, as long as the server is still running.
	_pair_dead=0 _pair_log=$log
	if poll_until 20 _pair_ready_alive "$ready" "$pid" && [ $_pair_dead = 0 ]; then
		sync_put "ready.$n" ok
	else
		sync_put "ready.$n" "fail: the server did not get ready ($ready)"
	fi
	# Until the client is done, then a grace period for the server to end.
	st=0
	sync_get "cdone.$n" $((PAIR_CMD_TIMEOUT + PAIR_READY_TIMEOUT)) >/dev/null || st=$?
	poll_until 20 _pair_gone "$pid" || kill "$pid" 2>/dev/null
	wait "$pid" || rc=$?
	tail -n 30 "$log" >"$SROCE_SYNC/slog.$n.server" 2>/dev/null
	sync_put "sdone.$n" "$rc"
	local why=()
	[ $st -eq 1 ] && why+=("the client never reported (timeout)")
	[ $st -eq 2 ] && why+=("the client VM is gone")
	if [ $rc -eq 0 ]; then
		ok "$desc (server)"
	else
		not_ok "$desc (server)" "command: $*" "exit status: $rc" "${why[@]}" \
			"$(_tail_output "$(tail -n 30 "$log")")"
	fi
}

_pair_gone() { ! kill -0 "$1" 2>/dev/null; }

_pair_client() {
	local desc=$1 n=$2 re=$3 st rc=0 out srv
	shift 3
	if ! st=$(sync_get "ready.$n" "$PAIR_READY_TIMEOUT"); then
		not_ok "$desc" "the server never said it was ready"
		sync_put "cdone.$n" skipped
	elif [ "$st" != ok ]; then
		not_ok "$desc" "$st" "server output:" \
			"$(sync_get "sdone.$n" 60 >/dev/null; cat "$SROCE_SYNC/slog.$n.server" 2>/dev/null)"
		sync_put "cdone.$n" skipped
	else
		out=$(timeout --kill-after=5 "$PAIR_CMD_TIMEOUT" "$@" 2>&1) || rc=$?
		sync_put "cdone.$n" "$rc"
		CHECK_OUTPUT=$out
		if [ $rc -eq 0 ] && { [ -z "$re" ] || grep -Eq -- "$re" <<<"$out"; }; then
			ok "$desc"
		else
			not_ok "$desc" "command: $*" "exit status: $rc" \
				${re:+"expected to match: $re"} "$(_tail_output "$out")"
		fi
	fi
	if srv=$(sync_get "sdone.$n" 60); then
		if [ "$srv" = 0 ]; then
			ok "$desc (server)"
		else
			not_ok "$desc (server)" "server exit status: $srv" \
				"$(cat "$SROCE_SYNC/slog.$n.server" 2>/dev/null)"
		fi
	else
		not_ok "$desc (server)" "the server never reported its exit status"
	fi
}

# gid_of FAMILY: the local GID index for IPv4 (4) or IPv6 (6).
gid_of() { if [ "$1" = 6 ]; then echo "$SROCE_GID6"; else echo "$SROCE_GID4"; fi; }

# pingpong DESC FAMILY PROG ARGS...: an ibv_*_pingpong run with its data
# check (-c), over the IPv4 or IPv6 GID (FAMILY 4 or 6).  The TCP exchange
# of QP numbers goes over IPv4 either way.
pingpong() {
	local desc=$1 g
	g=$(gid_of "$2")
	local prog=$3
	shift 3
	pair_step
	pair_run "$desc" "tcp:$PAIR_PORT" 'bytes in [0-9.]+ seconds' \
		"$prog" -d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT" -c "$@" -- \
		"$prog" -d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT" -c "$@" "$SROCE_SERVER_ADDR"
}

# perf DESC FAMILY PROG ARGS...: a perftest run (-F: no CPU-frequency
# check; -x: the GID index).  Passes when the client prints a result row
# (it starts with the message size and the iteration count).
perf() {
	local desc=$1 g
	g=$(gid_of "$2")
	local prog=$3
	shift 3
	pair_step
	pair_run "$desc" "tcp:$PAIR_PORT" '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+' \
		"$prog" -d "$SROCE_DEV" -x "$g" -p "$PAIR_PORT" -F "$@" -- \
		"$prog" -d "$SROCE_DEV" -x "$g" -p "$PAIR_PORT" -F "$@" "$SROCE_SERVER_ADDR"
	is_client && diag "$(grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' <<<"$CHECK_OUTPUT" | tail -n 2)"
}

# rping_pair DESC FAMILY ARGS...: rping with ARGS on both sides, over
# rdma_cm to the server's IPv4 or IPv6 address.
rping_pair() {
	local desc=$1 addr=$SROCE_SERVER_ADDR
	[ "$2" = 6 ] && addr=$SROCE_SERVER_ADDR6
	shift 2
	pair_step
	pair_run "$desc" cm '' \
		rping -s -a "$addr" "$@" -- \
		rping -c -a "$addr" "$@"
}

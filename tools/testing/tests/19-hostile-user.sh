#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 19-hostile-user: a local user's verbs program against sroce0, with
# tools/testing/hostile/sroce_hostile (built on the host:
# make -C tools/testing/hostile).  Each mode's assertions become ours:
#   sqflood   a thread (real-time, on the other CPU) keeps the QP's send
#             ring full of garbage by writing its producer index while the
#             QP is flushed, reset, brought back and rung (issue 13, hole
#             5): every verb returns within 2 s (a driver that loops
#             while the ring is not empty keeps the verb until the thread
#             gives up after 3 s), every garbage WQE completes in error,
#             the QP works again; then a ping-pong on the device;
#   curstate  modify_qp with a cur_qp_state that is not the QP's (hole 8)
#             is refused with EINVAL, then traffic at the QP;
#   caps      the caps a QP, SRQ or CQ gets are within query_device's
#             limits (hole 9);
#   memcg     QPs with the biggest rings, from a memory cgroup with
#             memory.max 64 MiB: the rings are charged to it and creating
#             them fails with ENOMEM at the limit, not by the memcg OOM
#             killer (hole 9);
#   qpnrace   create_qp failing after the QPN was handed out (no room
#             for the driver's response), while a thread sends packets to
#             the QPNs being tried (hole 4): EINVAL, and a clean kernel
#             log (KASAN on the debug kernel).
# The kernel log check of the harness catches lockups and stalls.

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

CG=/sys/fs/cgroup/sroce-hostile
MEM_MAX=$((64 << 20))

require_tester hostile sroce_hostile
require_sroce

counter() {
	cat /sys/class/infiniband/sroce0/ports/1/hw_counters/"$1"
}

# A loopback ping-pong on sroce0, data checked: the device still works.
# Called through check:
# shellcheck disable=SC2317
pingpong() {
	local server rc=0

	run_ns ns0 timeout 60 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18700 -n 100 -c \
		>pp-server.log 2>&1 &
	server=$!
	poll_until 30 run_ns ns0 sh -c 'ss -Hltn "sport = :18700" | grep -q .'
	run_ns ns0 timeout 60 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18700 -n 100 -c \
		10.0.0.1 >pp-client.log 2>&1 || rc=$?
	wait "$server" || rc=$?
	cat pp-server.log pp-client.log
	return "$rc"
}

# The memory cgroup: cgroup2 at /sys/fs/cgroup with the memory controller
# for its children.
memcg_setup() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
	echo "+memory" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	rmdir "$CG" 2>/dev/null
	mkdir "$CG" && echo "$MEM_MAX" >"$CG/memory.max" &&
		{ echo 0 >"$CG/memory.swap.max" 2>/dev/null || true; }
}

topo_loopback || bail_out "cannot set up veth0"
check "rdma link add sroce0 on veth0 (ns0)" \
	run_ns ns0 rdma link add sroce0 type sroce netdev veth0 || bail_out "no sroce0"
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
GID=$(rdma_gid_index sroce0 1 10.0.0.1) || bail_out "no RoCE v2 GID for 10.0.0.1"

# Hole 5.
tap_relay "sqflood" run_ns ns0 timeout 120 "$BIN" sqflood -d sroce0 -g "$GID"
check "a loopback ibv_rc_pingpong -c works after the flood" pingpong

# Hole 8.
tap_relay "curstate" run_ns ns0 timeout 60 "$BIN" curstate -d sroce0 -g "$GID"
check "a loopback ibv_rc_pingpong -c works after the lies" pingpong

# Hole 9.
tap_relay "caps" run_ns ns0 timeout 60 "$BIN" caps -d sroce0
if memcg_setup; then
	# Not through "ip netns exec": its fresh /sys has no cgroup2 mount.
	# The device is seen from every namespace; this mode needs no GID.
	tap_relay "memcg" bash -c "echo \$\$ >$CG/cgroup.procs &&
		exec timeout 60 $BIN memcg -d sroce0 -l $MEM_MAX"
	diag "memory.events of the cgroup:" "$(cat "$CG/memory.events")"
	check "the program was not OOM-killed (creation fails with ENOMEM instead)" \
		grep -q '^oom_kill 0$' "$CG/memory.events"
	poll_until 10 rmdir "$CG"
else
	skip "memcg: QP rings charged to the creator's memory cgroup" \
		"no cgroup2 memory controller"
fi

# Hole 4.
drop_no_qp=$(counter rx_drop_no_qp)
rx=$(counter rx_packets)
tap_relay "qpnrace" run_ns ns0 timeout 60 "$BIN" qpnrace -d sroce0 -a 10.0.0.1 -t 15
diag "sroce0 received $(($(counter rx_packets) - rx)) packets," \
	"$(($(counter rx_drop_no_qp) - drop_no_qp)) for no QP"
check "a loopback ibv_rc_pingpong -c works after the race" pingpong

check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
check "unload sroce" sroce_unload
tap_done

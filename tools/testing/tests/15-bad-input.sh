#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad requests get an error and a message, never a crash: a missing,
# non-Ethernet or already-bound netdev, a taken or over-long name; and
# unloading while a program has a device open takes the device from it.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth
sroce_load

check_fail "missing netdev" run_ns ns0 rdma link add sroce0 type sroce netdev nosuchdev
# Non-Ethernet netdevs: tun, ipip, wireguard, vcan -- each this kernel
# has (the debug kernel has none of them; at least one elsewhere).
# noneth_add KIND: create noneth0 of that kind in ns0.
noneth_add() {
	case $1 in
	tun) run_ns ns0 ip tuntap add dev noneth0 mode tun ;;
	ipip) run_ns ns0 ip link add noneth0 type ipip remote 10.9.9.9 ;;
	*) run_ns ns0 ip link add noneth0 type "$1" ;;
	esac
}
nonether=0
for kind in tun ipip wireguard vcan; do
	modprobe "$kind" 2>/dev/null
	noneth_add "$kind" 2>/dev/null || continue
	nonether=$((nonether + 1))
	klog_mark=$(dmesg | wc -l)
	check_fail "non-Ethernet netdev ($kind)" \
		run_ns ns0 rdma link add sroce0 type sroce netdev noneth0
	check_output "  says so in the kernel log" 'sroce: noneth0 is not an Ethernet device' \
		bash -c "dmesg | tail -n +$((klog_mark + 1))"
	check_fail "  and made no device" test -e /sys/class/infiniband/sroce0
	run_ns ns0 ip link del noneth0
done
[ $nonether -gt 0 ] ||
	skip "non-Ethernet netdev" "this kernel has none of tun, ipip, wireguard, vcan"
check_fail "nothing was created" test -e /sys/class/infiniband/sroce0

check "create sroce0 on veth0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check_fail "veth0 again, other name" run_ns ns0 rdma link add sroce9 type sroce netdev veth0
check_output "  says veth0 is taken" 'sroce: veth0 is already bound to sroce0' dmesg
check_fail "  and sroce9 does not exist" test -e /sys/class/infiniband/sroce9
check_fail "name sroce0 again, other netdev" run_ns ns1 rdma link add sroce0 type sroce netdev veth1
check_output "  says the name is in use" 'sroce: device name sroce0 is already in use' dmesg
check_fail "over-long name" run_ns ns1 rdma link add \
	sroce_a_name_much_longer_than_sixty_four_characters_is_refused_by_rdma type sroce netdev veth1
check_fail "name with %" run_ns ns1 rdma link add 'sroce%d' type sroce netdev veth1
check "veth1 still takes a device" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
check_fail "deleting a device that does not exist" rdma link delete nosuch0

# A program holding the device open does not pin the module: rmmod
# disassociates it (IB_EVENT_DEVICE_FATAL) and goes on.  The program's
# ring mappings outlive the module; it must still exit cleanly.
events=/tmp/asyncwatch.$$
stdbuf -oL ibv_asyncwatch -d sroce0 >"$events" 2>&1 &
holder=$!
poll_until 10 bash -c "ls -l /proc/$holder/fd 2>/dev/null | grep -q uverbs"
# And an RC ping-pong in full flow, its rings mapped, on both devices.
poll_until 10 rdma_gid_index sroce0 1 10.0.0.1
poll_until 10 rdma_gid_index sroce1 1 10.0.0.2
run_ns ns0 ibv_rc_pingpong -d sroce0 -g "$(rdma_gid_index sroce0 1 10.0.0.1)" \
	-n 100000000 >/dev/null 2>&1 &
server=$!
sleep 1
run_ns ns1 ibv_rc_pingpong -d sroce1 -g "$(rdma_gid_index sroce1 1 10.0.0.2)" \
	-n 100000000 10.0.0.1 >/dev/null 2>&1 &
client=$!
poll_until 10 bash -c "ls -l /proc/$client/fd 2>/dev/null | grep -q uverbs"
sleep 2
check "rmmod while programs have the devices open" timeout 30 rmmod sroce
check_output "  the watcher got IBV_EVENT_DEVICE_FATAL" 'DEVICE_FATAL' \
	bash -c "sleep 1; cat $events"
check_fail "  the module is gone" grep -q '^sroce ' /proc/modules
check_fail "  no device left" test -e /sys/class/infiniband/sroce1
# A program that busy-polls its CQ never learns by itself (as with any
# RDMA device); killed, it exits and unmaps its rings after the module.
kill "$holder" "$server" "$client" 2>/dev/null
check "  the programs exit once killed" \
	timeout 20 bash -c "while kill -0 $server 2>/dev/null || kill -0 $client 2>/dev/null; do sleep 0.5; done"
wait "$holder" "$server" "$client" 2>/dev/null
rm -f "$events"
topo_clean
tap_done

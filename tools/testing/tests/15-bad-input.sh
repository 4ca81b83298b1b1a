#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad requests get an error and a message, never a crash: a missing,
# non-Ethernet or already-bound netdev, a taken or over-long name, and
# unloading while a device is in use.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth
sroce_load

check_fail "missing netdev" run_ns ns0 rdma link add sroce0 type sroce netdev nosuchdev
check_fail "non-Ethernet netdev (lo)" run_ns ns0 rdma link add sroce0 type sroce netdev lo
check_output "  says so in the kernel log" 'sroce: lo is not an Ethernet device' dmesg
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

# A program holding the device open pins the module.
ibv_asyncwatch -d sroce0 >/dev/null 2>&1 &
holder=$!
poll_until 10 bash -c "ls -l /proc/$holder/fd 2>/dev/null | grep -q uverbs"
check_fail "rmmod while a program has the device open" rmmod sroce
check_output "  the module is still there" '^sroce ' lsmod
kill "$holder"
wait "$holder" 2>/dev/null
check "rmmod once it has let go" sroce_unload
check_fail "no device left" test -e /sys/class/infiniband/sroce1

topo_clean
tap_done

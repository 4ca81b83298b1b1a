#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sroce loads with its dependencies, and loads and unloads cleanly again
# and again, with and without devices.
. "$(dirname "$0")/../lib.sh"
require_sroce

check "modprobe sroce pulls in ib_core, ib_uverbs, udp_tunnel" sroce_load
# Loaded, or built in (as on the debug kernel).
present() {
	[ -d "/sys/module/$1" ] ||
		grep -q "/$1\.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null
}
for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel sroce; do
	check "$m is loaded" present "$m"
done
check "rmmod sroce" sroce_unload

for i in 1 2 3 4 5; do
	check "load/unload cycle $i" bash -c 'modprobe sroce && rmmod sroce'
done

# Unload must take the devices with it.
topo_veth
check "load" sroce_load
check "create sroce0 in ns0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "create sroce1 in ns1" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
check "rmmod with two devices" sroce_unload
check_fail "no device left in sysfs" test -e /sys/class/infiniband/sroce0
check_fail "no sroce1 left in sysfs" test -e /sys/class/infiniband/sroce1
check_output "kernel log says loaded and unloaded" 'sroce: unloaded' dmesg
topo_clean
tap_done

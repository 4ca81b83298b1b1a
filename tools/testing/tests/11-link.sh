#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "rdma link add/delete ... type sroce" on the two ends of a veth pair in
# two network namespaces; stock rdma-core (librxe) sees the devices, with
# an Ethernet port that is active and RoCE v2 GIDs for both addresses.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth

# The link type autoloads the module (alias rdma-link-sroce).
rmmod sroce 2>/dev/null
check "rdma link add in ns0 autoloads sroce" \
	run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "rdma link add in ns1" run_ns ns1 rdma link add sroce1 type sroce netdev veth1
check_output "rdma link shows sroce0 on veth0" 'sroce0/1 state ACTIVE.*netdev veth0' \
	run_ns ns0 rdma link show sroce0/1
check_output "rdma link shows sroce1 on veth1" 'sroce1/1 state ACTIVE.*netdev veth1' \
	run_ns ns1 rdma link show sroce1/1

check_output "ibv_devices lists both" 'sroce0.*' ibv_devices
check_output "ibv_devices lists sroce1" 'sroce1' ibv_devices

# ibv_devinfo only opens a device when a provider (librxe) binds to it.
check_output "ibv_devinfo binds librxe to sroce0" 'hca_id:[[:space:]]+sroce0' \
	ibv_devinfo -d sroce0
info=$CHECK_OUTPUT
for want in 'transport:[[:space:]]+InfiniBand' 'link_layer:[[:space:]]+Ethernet' \
	    'state:[[:space:]]+PORT_ACTIVE' 'vendor_id:[[:space:]]+0xffffff' \
	    'phys_port_cnt:[[:space:]]+1' 'active_mtu:[[:space:]]+1024'; do
	if grep -Eq "$want" <<<"$info"; then ok "devinfo: $want"; else not_ok "devinfo: $want" "$info"; fi
done

# The node GUID is the EUI-64 of the MAC.
mac=$(run_ns ns0 cat /sys/class/net/veth0/address)
guid=$(cat /sys/class/infiniband/sroce0/node_guid)
want=$($PYTHON -c '
import sys
m = [int(x, 16) for x in sys.argv[1].split(":")]
g = [m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]]
print(":".join("%02x%02x" % (g[i], g[i + 1]) for i in range(0, 8, 2)))' "$mac")
if [ "$guid" = "$want" ]; then ok "node GUID from MAC"; else not_ok "node GUID from MAC" "mac $mac guid $guid want $want"; fi

wait_for "RoCE v2 GID for 10.0.0.1" 10 rdma_gid_index sroce0 1 10.0.0.1
wait_for "RoCE v2 GID for fd00::1" 10 rdma_gid_index sroce0 1 fd00::1
wait_for "RoCE v2 GID for 10.0.0.2 on sroce1" 10 rdma_gid_index sroce1 1 10.0.0.2
check_output "ibv_devinfo -v lists the IPv4 GID" '::ffff:10\.0\.0\.1, RoCE v2' \
	ibv_devinfo -v -d sroce0
check_output "ibv_devinfo -v lists the IPv6 GID" 'fd00::1, RoCE v2' \
	ibv_devinfo -v -d sroce0

check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
check_fail "sroce0 is gone" test -e /sys/class/infiniband/sroce0
check "rdma link delete sroce1" run_ns ns1 rdma link delete sroce1
check "a device can be created again" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
check "and deleted" run_ns ns0 rdma link delete sroce0

topo_clean
check "unload" sroce_unload
tap_done

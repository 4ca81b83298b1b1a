#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The port follows the netdev: link down/up and carrier changes set the
# port state and raise IB_EVENT_PORT_ERR / IB_EVENT_PORT_ACTIVE; an MTU
# change moves active_mtu.
. "$(dirname "$0")/../lib.sh"
require_sroce
topo_veth
check "create sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0

port_state() { ibv_devinfo -d sroce0 | grep -E "^[[:space:]]+state:" ; }

events=/tmp/asyncwatch.$$
# stdbuf: the events must reach the file as they happen.
stdbuf -oL ibv_asyncwatch -d sroce0 >"$events" 2>&1 &
watch=$!
sleep 2

check "link down" ip -n ns0 link set veth0 down
wait_for "port goes DOWN" 10 bash -c 'ibv_devinfo -d sroce0 | grep -q PORT_DOWN'
wait_for "IB_EVENT_PORT_ERR seen" 10 grep -q 'PORT_ERR' "$events"
check "link up" ip -n ns0 link set veth0 up
wait_for "port goes ACTIVE" 10 bash -c 'ibv_devinfo -d sroce0 | grep -q PORT_ACTIVE'
wait_for "IB_EVENT_PORT_ACTIVE seen" 10 grep -q 'PORT_ACTIVE' "$events"

# Carrier: taking the peer down drops veth0's carrier.
check "peer down (carrier off)" ip -n ns1 link set veth1 down
wait_for "port goes DOWN without carrier" 10 bash -c 'ibv_devinfo -d sroce0 | grep -q PORT_DOWN'
check "peer up (carrier on)" ip -n ns1 link set veth1 up
wait_for "port ACTIVE with carrier back" 10 bash -c 'ibv_devinfo -d sroce0 | grep -q PORT_ACTIVE'
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null
diag "events:" "$(cat "$events")"

check_output "active_mtu 1024 at netdev MTU 1500" 'active_mtu:[[:space:]]+1024' ibv_devinfo -d sroce0
check "netdev MTU 9000" ip -n ns0 link set veth0 mtu 9000
check_output "active_mtu 4096 at netdev MTU 9000" 'active_mtu:[[:space:]]+4096' ibv_devinfo -d sroce0
check "netdev MTU 2200" ip -n ns0 link set veth0 mtu 2200
check_output "active_mtu 2048 at netdev MTU 2200" 'active_mtu:[[:space:]]+2048' ibv_devinfo -d sroce0
check "netdev MTU 600" ip -n ns0 link set veth0 mtu 600
check_output "active_mtu 512 at netdev MTU 600" 'active_mtu:[[:space:]]+512' ibv_devinfo -d sroce0

rm -f "$events"
topo_clean
check "unload" sroce_unload
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Load sroce on this host and create sroce0 on a netdev, or undo that.
#
#   tools/load.sh load NETDEV     (make load NETDEV=eth0)
#   tools/load.sh unload          (make unload)
#
# Uses the module built for the running kernel in build/$(uname -r)/.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
rel=$(uname -r)
ko=$top/build/$rel/sroce.ko

die() { echo "load: $*" >&2; exit 1; }

load() {
	local ndev=$1

	[ "$(id -u)" = 0 ] || die "must be root (sudo make load NETDEV=$ndev)"
	[ -f "$ko" ] || die "$ko not built; run 'make' first"
	ip link show "$ndev" >/dev/null 2>&1 || die "no netdev $ndev"
	if lsmod | grep -q '^rdma_rxe '; then
		die "rdma_rxe is loaded; sroce cannot run beside it (rmmod rdma_rxe)"
	fi
	modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
	lsmod | grep -q '^sroce ' || insmod "$ko"
	rdma link show sroce0/1 >/dev/null 2>&1 ||
		rdma link add sroce0 type sroce netdev "$ndev"
	rdma link show sroce0/1
}

unload() {
	[ "$(id -u)" = 0 ] || die "must be root"
	if lsmod | grep -q '^sroce '; then
		rmmod sroce
	fi
}

case "${1:-}" in
load)	load "${2:-eth0}" ;;
unload)	unload ;;
*)	die "usage: $0 load NETDEV | unload" ;;
esac

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 41-rereg: ibv_rereg_mr (rereg_user_mr) with tools/testing/rereg/sroce_rereg,
# on sroce0 in ns0 (loopback RC pairs over the IPv4 GID): a new buffer
# through the same keys (WRITE and READ land in it, the old one is left
# alone), access without remote write (WRITE refused, nothing written),
# another PD (the old PD's QP refused), the errnos of bad reregs and of a
# bound window (EBUSY), and reregs to fresh pages while READs and WRITEs
# run through the MR (every completion good, every READ packet whole from
# one generation).  Each of the program's assertions becomes one here.
#
# The binary is built on the host: make -C tools/testing/rereg
# SROCE_REREG_CYCLES: reregs under traffic (default 200).

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

BIN=$SROCE_REPO/tools/testing/rereg/sroce_rereg
if [ ! -x "$BIN" ]; then
	not_ok "sroce_rereg is built" "no $BIN" \
		"build it on the host first: make -C tools/testing/rereg"
	tap_done
fi

topo_veth
check "rdma link add sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
if poll_until 10 rdma_gid_index sroce0 1 10.0.0.1; then
	gid=$(rdma_gid_index sroce0 1 10.0.0.1)
	tap_relay rereg run_ns ns0 timeout 240 "$BIN" -d sroce0 -g "$gid" \
		-n "${SROCE_REREG_CYCLES:-200}"
else
	not_ok "sroce0 has the GID of 10.0.0.1"
fi
check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
tap_done

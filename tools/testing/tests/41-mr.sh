#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 41-mr: the MR verbs rdma_rxe does not have, with
# tools/testing/mr/sroce_mr, on sroce0 in ns0 (loopback RC pairs over the
# IPv4 GID); each of the program's assertions becomes one here.
#
# rereg (rereg_user_mr): a new buffer through the same keys (WRITE and
# READ land in it, the old one is left alone), access without remote
# write (WRITE refused, nothing written), another PD (the old PD's QP
# refused), the errnos of bad reregs and of a bound window (EBUSY), and
# reregs to fresh pages while READs and WRITEs run through the MR (every
# completion good, every READ packet whole from one generation).
#
# dmabuf (reg_user_mr_dmabuf): an MR on a udmabuf (memfd pages) from its
# second page, WRITE and READ through its rkey, SEND into and from it, a
# WRITE from it, every byte checked through the memfd's own mapping; past
# its end refused, the rest of the buffer left alone; the errnos of bad
# registrations.  Without udmabuf (Debian's 6.1 has no CONFIG_UDMABUF)
# only the errors that need no dma-buf run, and the rest is skipped,
# saying so.
#
# The binary is built on the host: make -C tools/testing/mr
# SROCE_REREG_CYCLES: reregs under traffic (default 200).

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

require_tester mr sroce_mr

dmabuf_args=()
[ -c /dev/udmabuf ] || modprobe udmabuf 2>/dev/null
if [ ! -c /dev/udmabuf ]; then
	skip "dma-buf MRs on a udmabuf" "no /dev/udmabuf: this kernel has no CONFIG_UDMABUF"
	dmabuf_args=(-U)
fi

topo_veth
check "rdma link add sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
if poll_until 10 rdma_gid_index sroce0 1 10.0.0.1; then
	gid=$(rdma_gid_index sroce0 1 10.0.0.1)
	tap_relay rereg run_ns ns0 timeout 200 "$BIN" rereg -d sroce0 -g "$gid" \
		-n "${SROCE_REREG_CYCLES:-200}"
	tap_relay dmabuf run_ns ns0 timeout 60 "$BIN" dmabuf -d sroce0 \
		-g "$gid" "${dmabuf_args[@]}"
else
	not_ok "sroce0 has the GID of 10.0.0.1"
fi
check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
tap_done

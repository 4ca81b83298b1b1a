#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# ibv_srq_pingpong between the two VMs (4 RC QPs sharing one receive
# queue), data checked (-c), over the IPv4 and the IPv6 GID.
. "$(dirname "$0")/lib.sh"

for fam in 4 6; do
	for size in 1 4096; do
		pingpong "srq IPv$fam $size B" "$fam" ibv_srq_pingpong -s "$size" -n 20 -q 4
	done
done
tap_done

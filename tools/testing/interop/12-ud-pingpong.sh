#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# ibv_ud_pingpong between the two VMs, data checked (-c), over the IPv4
# and the IPv6 GID.  A UD message is one packet: at most the path MTU
# (1024), less the 40-byte GRH the receiver gets in front of it.
. "$(dirname "$0")/lib.sh"

for fam in 4 6; do
	for size in 1 984; do
		pingpong "ud IPv$fam $size B" "$fam" ibv_ud_pingpong -s "$size" -n 20
	done
done
tap_done

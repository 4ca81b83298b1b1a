#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# ibv_rc_pingpong between the two VMs with its receive-buffer check (-c),
# over the IPv4 and the IPv6 GID: 1 byte, several MTUs (the path MTU is
# 1024 on the 1500-byte link) and a message that does not end on an MTU.
. "$(dirname "$0")/lib.sh"

for fam in 4 6; do
	for size in 1 4096; do
		pingpong "rc IPv$fam $size B" "$fam" ibv_rc_pingpong -s "$size" -n 20
	done
done
pingpong "rc IPv4 10000 B" 4 ibv_rc_pingpong -s 10000 -n 10
tap_done

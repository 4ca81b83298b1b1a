#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# rping (rdma_cm: connection set-up over the GSI QP, then RDMA read/write
# and sends) with its data check (-V), over IPv4 and IPv6.
. "$(dirname "$0")/lib.sh"

rping_pair "rping IPv4 50 x 64 B, data checked" 4 -C 50 -V
rping_pair "rping IPv4 10 x 65000 B, data checked" 4 -C 10 -S 65000 -V
rping_pair "rping IPv6 50 x 1 KiB, data checked" 6 -C 50 -S 1024 -V
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# perftest ib_read_bw between the two VMs: RC RDMA reads of 64 KiB.
# SROCE_PERF_ARGS (e.g. "--use_old_post_send") is added to every run.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2086 # a list of words
perf "ib_read_bw RC 64 KiB IPv4" 4 ib_read_bw -s 65536 -n 200 ${SROCE_PERF_ARGS:-}
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# perftest ib_write_bw between the two VMs: RC RDMA writes of 64 KiB over
# the IPv4 and the IPv6 GID.
# SROCE_PERF_ARGS (e.g. "--use_old_post_send") is added to every run.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2086 # a list of words
perf "ib_write_bw RC 64 KiB IPv4" 4 ib_write_bw -s 65536 -n 200 ${SROCE_PERF_ARGS:-}
# shellcheck disable=SC2086 # a list of words
perf "ib_write_bw RC 64 KiB IPv6" 6 ib_write_bw -s 65536 -n 200 ${SROCE_PERF_ARGS:-}
tap_done

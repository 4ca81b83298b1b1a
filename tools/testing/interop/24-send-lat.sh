#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# perftest ib_send_lat between the two VMs: RC 2-byte ping-pong latency.
# SROCE_PERF_ARGS (e.g. "--use_old_post_send") is added to every run.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2086 # a list of words
perf "ib_send_lat RC 2 B IPv4" 4 ib_send_lat -s 2 -n 200 ${SROCE_PERF_ARGS:-}
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# perftest ib_atomic_bw between the two VMs: RC fetch-and-add.
# SROCE_PERF_ARGS (e.g. "--use_old_post_send") is added to every run.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2086 # a list of words
perf "ib_atomic_bw RC IPv4" 4 ib_atomic_bw -n 200 ${SROCE_PERF_ARGS:-}
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 48-send-window: RC SEND and WRITE of up to 1 MiB through a wire that
# loses 2 % of the packets each way, 16 MiB on one QP, every byte
# checked, the headers captured: no connection may have more than the
# RC window (512 PSNs) unacknowledged at once.
#
# The window was checked only when a message started, so one 1 MiB
# message at a 1024-byte MTU put up to 1535 PSNs in flight (880 were seen
# here before the fix): a go-back-N then resent all of them.
export SROCE_SOAK_OPS=${SROCE_SOAK_OPS:-send,write}
export SROCE_SOAK_NETEM=${SROCE_SOAK_NETEM:-loss 2%}
export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-16M}
export SROCE_SOAK_QPS=${SROCE_SOAK_QPS:-1}
export SROCE_SOAK_WINDOW=${SROCE_SOAK_WINDOW:-512}
exec /bin/bash "$(dirname "$0")/../soak/46-soak.sh"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 47-read-loss: RC READs through a wire that loses 5 % of the packets
# each way, 32 MiB on one QP, every byte checked: the short form of
# ../soak/46-soak.sh ("make soak") that "make test" runs.
#
# A READ under loss asks for the rest again and again, and the responder
# streams the answers from the QP's home CPU: this caught the home's work
# item kept on the other CPU by the workqueue (non-reentrancy) and never
# sending, each such QP running out of retries (4 to 6 rounds in 64 MiB).
export SROCE_SOAK_OPS=${SROCE_SOAK_OPS:-read}
export SROCE_SOAK_NETEM=${SROCE_SOAK_NETEM:-loss 5%}
export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-32M}
export SROCE_SOAK_QPS=${SROCE_SOAK_QPS:-1}
exec /bin/bash "$(dirname "$0")/../soak/46-soak.sh"

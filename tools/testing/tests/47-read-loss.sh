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
# And the completer asking for a gap again each time the 4 ms wait for
# the held responses ran out, while the answer to its last request was
# still behind the old responses in flight: the responder streamed the
# READ again for each (a PSN asked for 6 times in 25 ms), the per-CPU
# backlogs overflowed, and another QP's resends and ACKs were dropped
# until it ran out of retries (the 6.1 soak's last RETRY_EXC).  The
# capture checks that no READ is asked for a third time within 40 ms
# before the responder started to answer.
export SROCE_SOAK_OPS=${SROCE_SOAK_OPS:-read}
export SROCE_SOAK_NETEM=${SROCE_SOAK_NETEM:-loss 5%}
export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-32M}
export SROCE_SOAK_QPS=${SROCE_SOAK_QPS:-1}
export SROCE_SOAK_REASK=${SROCE_SOAK_REASK:-40}
# An answer whose first packet is lost too is asked for again at once,
# not after a retransmit timeout (about 50 times a run).
export SROCE_SOAK_NONZERO=${SROCE_SOAK_NONZERO:-read_restart_lost}
exec /bin/bash "$(dirname "$0")/../soak/46-soak.sh"

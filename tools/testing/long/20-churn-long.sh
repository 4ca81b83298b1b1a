#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 2400
#
# "make churn": tests/20-churn.sh with 100 cycles (SROCE_CHURN_CYCLES
# overrides), under a timeout for that many.
export SROCE_CHURN_CYCLES=${SROCE_CHURN_CYCLES:-100}
exec /bin/bash "$(dirname "$0")/../tests/20-churn.sh"

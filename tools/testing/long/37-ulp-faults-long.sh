#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 3000
#
# "make ulp-stress": tests/37-ulp-faults.sh with 64 MiB through each ULP
# (SROCE_ULP_FAULTS_MIB overrides), under a timeout for that much.
export SROCE_ULP_FAULTS_MIB=${SROCE_ULP_FAULTS_MIB:-64}
exec /bin/bash "$(dirname "$0")/../tests/37-ulp-faults.sh"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 10800
#
# "make soak" runs this, not 46-soak.sh itself: the same test with
# the long run's timeout (3 hours, times 3 on the debug kernel) and
# SROCE_SOAK_BYTES defaulting to 4 GiB (tools/testing/soak.sh sets it).
export SROCE_SOAK_BYTES=${SROCE_SOAK_BYTES:-4G}
exec /bin/bash "$(dirname "$0")/46-soak.sh"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make run": build sroce, boot a VM on each kernel, create sroce0 on a
# veth, and show rdma link, ibv_devinfo -v and a verbs ping-pong
# (tests/05-demo.sh), printing what the guest printed.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$REPO/build/run
rc=0

make -C "$REPO" --no-print-directory both >/dev/null || exit 1
for v in $("$REPO/tools/kernels.sh"); do
	echo "==== $v"
	"$HERE/run.sh" --kernel "$v" --tests 05-demo --out "$OUT" >/dev/null 2>&1 || rc=1
	sed -n 's/^# \{0,1\}//p; /^not ok/p' "$OUT/$v/tests/05-demo.tap"
	grep -E '^(ok|not ok) ' "$OUT/$v/tests/05-demo.tap" | sed 's/^/  /'
done
exit $rc

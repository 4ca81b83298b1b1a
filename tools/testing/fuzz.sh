#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make fuzz": the long run of sroce's RoCEv2 fuzzer (tests/17-fuzz.sh,
# tools/testing/roce_fuzz.py) on every kernel (tools/kernels.sh), one VM
# each, showing the fuzzer's progress as it goes.  The modules must be
# built (make both).
#
#   tools/testing/fuzz.sh [--packets N] [--seed S] [--kernel VER]...
#
# FUZZ_PACKETS (default 200000 a kernel) and FUZZ_SEED do the same as the
# options.  Results in build/fuzz-results/<VER>/ (tests/17-fuzz.tap: the
# seed, the progress, the classes and the counter table); a kernel
# complaint saves the seed, the last packets and the log in
# build/fuzz-results/<VER>/fuzz-findings/.

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$REPO/build/fuzz-results
PACKETS=${FUZZ_PACKETS:-200000}
SEED=${FUZZ_SEED:-}
kernels=()

while [ $# -gt 0 ]; do
	case $1 in
	--packets) PACKETS=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--kernel) kernels+=("$2"); shift 2 ;;
	*) echo "usage: $0 [--packets N] [--seed S] [--kernel VER]..." >&2; exit 2 ;;
	esac
done
[[ $PACKETS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --packets wants a number" >&2; exit 2; }
# "6.1" and "6.12" name the installed kernels, as for run.sh.
all=$("$REPO/tools/kernels.sh") || exit 1
if [ ${#kernels[@]} -eq 0 ]; then
	mapfile -t kernels <<<"$all"
else
	for i in "${!kernels[@]}"; do
		for k in $all; do
			[[ $k == "${kernels[$i]}" || $k == "${kernels[$i]}".* ]] && kernels[i]=$k
		done
	done
fi

# The test's timeout is 300 s; the fuzzer sends about 900 packets a second
# under TCG, a third of that to be safe, plus two minutes of set-up.
factor=$(((PACKETS / 300 + 120 + 299) / 300))
[ "$factor" -ge 1 ] || factor=1

export SROCE_FUZZ_PACKETS=$PACKETS SROCE_FUZZ_PROGRESS=$((PACKETS / 20 > 1000 ? PACKETS / 20 : 1000))
export SROCE_TIMEOUT_FACTOR=$factor
[ -n "$SEED" ] && export SROCE_FUZZ_SEED=$SEED

rc=0
for v in "${kernels[@]}"; do
	echo "== fuzz $v: $PACKETS packets${SEED:+, seed $SEED}"
	rm -rf "${OUT:?}/$v"
	"$HERE/run.sh" --kernel "$v" --tests 17-fuzz --out "$OUT" &
	run=$!
	# Follow the test's output in the results share as the guest writes it.
	tap=$OUT/$v/tests/17-fuzz.tap
	shown=0
	while kill -0 "$run" 2>/dev/null; do
		sleep 5
		[ -f "$tap" ] || continue
		n=$(wc -l <"$tap")
		if [ "$n" -gt "$shown" ]; then
			sed -n "$((shown + 1)),${n}p" "$tap" | grep -E '^# (roce_fuzz|[0-9]+/[0-9]+ packets)' || true
			shown=$n
		fi
	done
	wait "$run" || rc=1
	[ -f "$tap" ] && sed -n '/^# sent [0-9]* packets/,$p' "$tap"
	ls "$OUT/$v/fuzz-findings" 2>/dev/null && { echo "FINDINGS in $OUT/$v/fuzz-findings"; rc=1; }
done
exit $rc

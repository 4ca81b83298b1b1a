#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The limit: one memcpy() of each bandwidth size in this VM (memcpy_bw,
# built on the host).  A software RDMA device copies every payload at least
# once, so it cannot go faster than this.  Also "rep movsb", the way the
# kernel copies on this CPU model (memcpy_bw -k), for reference.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

bench_meta
memcpy_bw=${SROCE_BENCH_MEMCPY:-$SROCE_REPO/build/bench/memcpy_bw}
[ -x "$memcpy_bw" ] || bail_out "no $memcpy_bw (bench.sh builds it)"
mapfile -t sizes < <(bench_sizes)

# copy TEST RUN [ARG]: one memcpy_bw run, a result per size.
copy() {
	local test=$1 run=$2 out size value
	shift 2

	out=$("$memcpy_bw" "$@" -t 0.5 "${sizes[@]}" 2>&1)
	for size in "${sizes[@]}"; do
		value=$(awk -v s="$size" '$1 == s { print $2 }' <<<"$out")
		if [ -n "$value" ]; then
			ok "$test $size run $run/$BENCH_REPEAT: $value MB/s"
		else
			not_ok "$test $size run $run/$BENCH_REPEAT" "$out"
			value=NA
		fi
		bench_record cpu "$test" "$size" 1 "$run" "$value" MB/s
	done
}

# glibc's memcpy() takes "rep movsb" between x86_rep_movsb_threshold and
# a cache-sized bound (64 KiB here, not 4 KiB or 1 MiB), which TCG
# emulates a byte at a time: the limit is its vector copy at every size.
no_movsb=glibc.cpu.x86_rep_movsb_threshold=$((1 << 40))

for run in $(bench_runs); do
	GLIBC_TUNABLES=$no_movsb copy memcpy "$run"
	copy rep_movsb "$run" -k
done
tap_done

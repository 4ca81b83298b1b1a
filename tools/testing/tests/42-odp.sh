#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 480
#
# 42-odp: on-demand paging MRs (IBV_ACCESS_ON_DEMAND), with
# tools/testing/mr/sroce_mr odp, on sroce0 in ns0 (loopback RC pairs over
# the IPv4 GID); each of the program's assertions becomes one here.
#
# The ODP caps of ibv_query_device_ex (implicit ODP among them);
# WRITE, READ, SEND and both atomics into and out of ODP memory the MR
# never mapped, as target and as local SGE, so that the responder, the
# requester and the completer each fault on the data path (odp_misses,
# odp_faults and rnr_nak_sent move), every byte checked;
# madvise(MADV_DONTNEED) and munmap+mmap at the same address under the
# MR (the new pages are seen); accesses after munmap fail with a remote
# access or local protection error and the QP works again; advise_mr
# prefetch (then no data path fault) and its errnos; fork with COW.
# Then rdma res shows an ODP MR with its faults.  Implicit ODP (one MR
# over the address space, ibv_reg_mr(pd, NULL, SIZE_MAX)): RC WRITE,
# READ, SEND and FETCH_ADD into and out of fresh memory, each access
# spanning two of its 16 MiB children (made on the data path's fault),
# every byte checked; madvise and munmap of a whole child (remote access
# and local protection errors, no crash), an address above the user
# address space; advise_mr prefetch across children; the device's cap on
# children (refusals counted, children gone after munmap); dereg with
# children in place.  The port counters carry the odp_* names; pyverbs
# sees the caps and registers an ODP MR and an implicit one, and
# rdma-core's own test_odp implicit cases run if python3-pyverbs ships
# them (/usr/share/doc/rdma-core/tests);
# perftest --odp (ib_write_bw, ib_read_bw, ib_send_bw) runs between
# sroce0 in ns0 and sroce1 in ns1.
#
# The binary is built on the host: make -C tools/testing/mr

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
require_sroce

require_tester mr sroce_mr

# rdma-core's pyverbs tests, as python3-pyverbs ships them (gzipped).
RDMA_CORE_TESTS=/usr/share/doc/rdma-core/tests

# rdma_core_odp GIDX: its test_odp cases of implicit ODP, unpacked into a
# scratch directory (it imports itself as the package "tests"), one
# assertion each; a skipped case (librxe has no advise_mr) is a skip.
rdma_core_odp() {
	local dir out line re='^(test_[a-z0-9_]+) .* \.\.\. (.*)$'
	dir=$(mktemp -d)
	cp -r "$RDMA_CORE_TESTS" "$dir/tests" && gunzip -f "$dir"/tests/*.gz
	out=$(cd "$dir" && run_ns ns0 timeout 200 /usr/bin/python3 \
		tests/run_tests.py --dev sroce0 --gid "$1" -v -k implicit \
		test_odp 2>&1) || true
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		case ${BASH_REMATCH[2]} in
		ok) ok "rdma-core ${BASH_REMATCH[1]}" ;;
		skipped*) skip "rdma-core ${BASH_REMATCH[1]}" \
			"${BASH_REMATCH[2]}" ;;
		*) not_ok "rdma-core ${BASH_REMATCH[1]}" "$out" ;;
		esac
	done <<<"$out"
	grep -Eq '^(OK|FAILED)' <<<"$out" ||
		not_ok "rdma-core test_odp ran" "$out"
	rm -rf "$dir"
}

topo_veth
check "rdma link add sroce0" run_ns ns0 rdma link add sroce0 type sroce netdev veth0
if poll_until 10 rdma_gid_index sroce0 1 10.0.0.1; then
	gid=$(rdma_gid_index sroce0 1 10.0.0.1)
	tap_relay odp run_ns ns0 timeout 300 "$BIN" odp -d sroce0 -g "$gid"
	for c in odp_misses odp_faults odp_prefetches odp_fault_errors \
		odp_fault_drops odp_invalidations odp_implicit_children \
		odp_implicit_refused; do
		check_output "rdma statistic: port counter $c" "$c [0-9]+" \
			run_ns ns0 rdma statistic show link sroce0/1
	done
	tap_relay pyverbs run_ns ns0 timeout 60 /usr/bin/python3 \
		"$SROCE_REPO/tools/testing/mr/odp_pyverbs.py" sroce0
	if [ -e "$RDMA_CORE_TESTS/test_odp.py.gz" ]; then
		rdma_core_odp "$gid"
	else
		skip "rdma-core test_odp implicit cases" "no $RDMA_CORE_TESTS"
	fi
else
	not_ok "sroce0 has the GID of 10.0.0.1"
fi

# perftest --odp: server on sroce0 in ns0, client on sroce1 in ns1.
odp_perf() {
	local name=$1 prog=$2 port=$3 rc=0
	shift 3
	run_ns ns0 timeout 120 "$prog" --odp -d sroce0 -x "$s4" -p "$port" \
		-F "$@" >"server-$port.log" 2>&1 &
	server=$!
	poll_until 20 listening "$port" || true
	check_output "perftest --odp: $name" \
		'^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+([0-9.]+|inf)' \
		run_ns ns1 timeout 120 "$prog" --odp -d sroce1 -x "$c4" \
		-p "$port" -F "$@" 10.0.0.1 || rc=1
	wait "$server" || diag "server of '$name':" "$(tail -n 5 "server-$port.log")"
	return $rc
}
listening() { ip netns exec ns0 ss -ltn | grep -q ":$1 "; }
run_ns ns1 rdma link add sroce1 type sroce netdev veth1
if poll_until 10 rdma_gid_index sroce1 1 10.0.0.2; then
	s4=$(rdma_gid_index sroce0 1 10.0.0.1) c4=$(rdma_gid_index sroce1 1 10.0.0.2)
	odp_perf "ib_write_bw RC 64 KiB" ib_write_bw 19101 -s 65536 -n 200
	odp_perf "ib_read_bw RC 64 KiB" ib_read_bw 19102 -s 65536 -n 200
	odp_perf "ib_send_bw RC 64 KiB" ib_send_bw 19103 -s 65536 -n 200
	run_ns ns1 rdma link delete sroce1
else
	not_ok "sroce1 has the GID of 10.0.0.2"
fi
check "rdma link delete sroce0" run_ns ns0 rdma link delete sroce0
topo_clean
tap_done

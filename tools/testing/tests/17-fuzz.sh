#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# 17-fuzz: a short pass of sroce's own RoCEv2 fuzzer (tools/testing/
# roce_fuzz.py): SROCE_FUZZ_PACKETS (default 8000) forged packets from
# local UDP sockets at live QPs and MRs, while data-checked traffic runs
# on other QPs; then the traffic must have completed with every byte
# right, the counters must account for every packet, a fresh
# ibv_rc_pingpong must work, and the devices and the module must go away
# cleanly (the harness checks the kernel log).  `make fuzz` runs it long.
#
# SROCE_FUZZ_PACKETS  packets to send (default 8000)
# SROCE_FUZZ_SEED     the seed (default: random; printed either way)
# SROCE_FUZZ_PROGRESS a progress line every N packets (default 1000)
# A kernel complaint saves the seed, the last packets (hex) and the log in
# fuzz-findings/ of the results directory.

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../topo_local.sh
. "$SROCE_TESTING/topo_local.sh"
require_sroce

shopt -s lastpipe	# relay() (lib.sh) counts in this shell

PACKETS=${SROCE_FUZZ_PACKETS:-8000}
PROGRESS=${SROCE_FUZZ_PROGRESS:-1000}
FINDINGS=./fuzz-findings
[ -d /run/sroce/out ] && FINDINGS=/run/sroce/out/fuzz-findings
seed=()
[ -n "${SROCE_FUZZ_SEED:-}" ] && seed=(--seed "$SROCE_FUZZ_SEED")


# shellcheck disable=SC2317 # called through poll_until

if topo_local >topo.log 2>&1; then
	ok "two devices in one namespace (topo_local)"
else
	not_ok "two devices in one namespace (topo_local)" "$(cat topo.log)"
	topo_local_clean
	tap_done
fi

relay run_ns ns0 "$PYTHON" "$SROCE_TESTING/roce_fuzz.py" --gid0 "$G0" \
	--gid1 "$G1" --packets "$PACKETS" --progress "$PROGRESS" \
	--findings "$FINDINGS" "${seed[@]}"

# A fresh connection after all that.
run_ns ns0 timeout 60 ibv_rc_pingpong -d sroce1 -g "$G1" -p 18700 -c -s 4096 \
	-n 200 >server.log 2>&1 &
server=$!
if poll_until 15 tcp_listening ns0 18700; then
	check_output "a fresh ibv_rc_pingpong -c works" 'bytes in [0-9.]+ seconds' \
		run_ns ns0 timeout 60 ibv_rc_pingpong -d sroce0 -g "$G0" -p 18700 \
		-c -s 4096 -n 200 10.0.0.2
	wait "$server" || diag "server: $(cat server.log)"
else
	not_ok "a fresh ibv_rc_pingpong -c works" "server did not listen" "$(cat server.log)"
	kill "$server" 2>/dev/null
fi

diag "sroce0: $(rdma statistic show link sroce0/1 2>&1)" \
	"sroce1: $(rdma statistic show link sroce1/1 2>&1)"
check "delete sroce0" run_ns ns0 rdma link delete sroce0
check "delete sroce1" run_ns ns0 rdma link delete sroce1
topo_clean
check "rmmod sroce" sroce_unload
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# UD multicast between the two VMs with rdma_cm's mckey, IPv4 (rdma_cm
# joins no IPv6 group on RoCE v2): a receiver joins 239.1.77.1 and waits
# for its 20 messages (mckey counts its receive completions and ends only
# when all came), a sender on the other side joins and sends 20.  Both
# ways in one run: the server receives what the client sends, then the
# client receives what the server sends; with --pair sroce-rxe and
# rxe-sroce every direction between sroce and rdma_rxe is covered.
# On sroce's side the rx_mcast counter must have grown by the 20 too.
PAIR_CMD_TIMEOUT=${PAIR_CMD_TIMEOUT:-60}
. "$(dirname "$0")/lib.sh"

G=239.1.77.1
N=20
ADDR=$SROCE_LOCAL_ADDR
export SROCE_SYNC

# rx_mcast: sroce's count of multicast packets handed to QPs ("" on rxe).
rx_mcast() {
	rdma statistic show link "$SROCE_DEV/1" 2>/dev/null |
		grep -o 'rx_mcast [0-9]*' | cut -d' ' -f2
}

# A receiver that tells the peer, through the shared sync directory, once
# its QP is attached; a sender that waits for that.  For the step where the
# client receives (pair_run has the server start first).
# shellcheck disable=SC2016 # expanded by the inner shell
RECV_SIGNAL='log=$1; shift; stdbuf -oL "$@" >"$log" 2>&1 & p=$!
	until grep -q "joined dgid" "$log"; do
		kill -0 $p 2>/dev/null || break; sleep 0.5
	done
	touch "$SROCE_SYNC/mckey.joined"; wait $p; st=$?; cat "$log"; exit $st'
# shellcheck disable=SC2016
SEND_WAIT='for _ in $(seq 100); do
		[ -e "$SROCE_SYNC/mckey.joined" ] && exec "$@"; sleep 0.5
	done; echo "the peer never joined"; exit 1'

before=$(rx_mcast)
# The server receives, the client sends.
pair_step
pair_run "mckey $G: the client sends $N, the server ($SROCE_DEV_TYPE on A) receives them" \
	"log:joined dgid" 'data transfers complete' \
	stdbuf -oL mckey -m $G -b "$ADDR" -C $N -- \
	mckey -m $G -b "$ADDR" -s -C $N
if is_server && [ "$SROCE_DEV_TYPE" = sroce ]; then
	after=$(rx_mcast)
	check "  sroce's rx_mcast grew by $N (${before:-?} -> ${after:-?})" \
		test $((${after:-0} - ${before:-0})) -ge $N
fi

before=$(rx_mcast)
# The client receives, the server sends.
pair_step
pair_run "mckey $G: the server sends $N, the client ($SROCE_DEV_TYPE on B) receives them" \
	none 'data transfers complete' \
	bash -c "$SEND_WAIT" - mckey -m $G -b "$ADDR" -s -C $N -- \
	bash -c "$RECV_SIGNAL" - "$PWD/mckey-recv.log" mckey -m $G -b "$ADDR" -C $N
if is_client && [ "$SROCE_DEV_TYPE" = sroce ]; then
	after=$(rx_mcast)
	check "  sroce's rx_mcast grew by $N (${before:-?} -> ${after:-?})" \
		test $((${after:-0} - ${before:-0})) -ge $N
fi
tap_done

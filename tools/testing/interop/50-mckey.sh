#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# UD multicast between the two VMs, IPv4 (rdma_cm joins no IPv6 group on
# RoCE v2): a receiver, rdma_cm's mckey, joins 239.1.77.1 and waits for
# its 20 messages (mckey counts its receive completions and ends only when
# all came); a sender on the other side joins and sends 20.  Both ways in
# one run: the server receives what the client sends, then the client
# what the server sends; with --pair sroce-rxe and rxe-sroce every
# direction between sroce and rdma_rxe is covered.  On sroce's side the
# rx_mcast counter must have grown by the 20 too.
#
# The sender is mckey, but not on 6.12's rdma_rxe: mckey posts its sends
# unsignaled and, without waiting for any completion, leaves the group
# and destroys its QP; 6.12's rdma_rxe sends a user QP's work requests
# later, from a work item (rxe_post_send() only schedules the send task),
# and its destroy_qp marks the QP invalid, after which the requester sends
# nothing (rxe_qp_destroy(), rxe_requester()): one of 20 reached the wire.
# rdma_rxe's multicast is not at fault; its sender there is pyverbs'
# rdma_cm (../mcast/pyverbs_mcast.py), which waits for each completion.
# 6.1's rdma_rxe runs the send task within post_send, and mckey sends all
# 20 from it.  SROCE_MCKEY_RXE_SENDER=mckey or pyverbs picks either.
PAIR_CMD_TIMEOUT=${PAIR_CMD_TIMEOUT:-60}
. "$(dirname "$0")/lib.sh"

G=239.1.77.1
N=20
ADDR=$SROCE_LOCAL_ADDR
export SROCE_SYNC
if is_server; then
	A_TYPE=$SROCE_DEV_TYPE B_TYPE=$SROCE_PEER_DEV_TYPE
else
	A_TYPE=$SROCE_PEER_DEV_TYPE B_TYPE=$SROCE_DEV_TYPE
fi

# rx_mcast: sroce's count of multicast packets handed to QPs ("" on rxe).
rx_mcast() {
	rdma statistic show link "$SROCE_DEV/1" 2>/dev/null |
		grep -o 'rx_mcast [0-9]*' | cut -d' ' -f2
}

# rxe_sender: mckey or pyverbs, for the kernel's rdma_rxe (see above).
rxe_sender() {
	if [ -n "${SROCE_MCKEY_RXE_SENDER:-}" ]; then
		echo "$SROCE_MCKEY_RXE_SENDER"
	else
		case $(uname -r) in 6.1.*) echo mckey ;; *) echo pyverbs ;; esac
	fi
}
RXE_SENDER=$(rxe_sender)

# The local sender's command, and what it prints when it is done.
RECV=(stdbuf -oL mckey -m "$G" -b "$ADDR" -C "$N")
if [ "$SROCE_DEV_TYPE" = rxe ] && [ "$RXE_SENDER" = pyverbs ]; then
	SEND=("$PYTHON" "$SROCE_REPO/tools/testing/mcast/pyverbs_mcast.py" send "$ADDR" "$G" "$N" 100)
	SENT="sent $N messages"
else
	SEND=(mckey -m "$G" -b "$ADDR" -s -C "$N")
	SENT='data transfers complete'
fi

# sender_note SENDER-TYPE: the SKIP of mckey as an rdma_rxe sender.
sender_note() {
	[ "$1" = rxe ] && is_client && [ "$RXE_SENDER" = pyverbs ] &&
		skip "mckey as the rdma_rxe sender" \
			"mckey destroys its QP before this kernel's rdma_rxe sent its unsignaled sends from its send work item (see the top of this test); pyverbs sends instead"
	return 0
}

# A receiver that tells the peer, through the shared sync directory, once
# its QP is attached; a sender that waits for that.  For the step where the
# client receives (pair_run has the server start first).
# shellcheck disable=SC2016 # expanded by the inner shell
RECV_SIGNAL='log=$1; shift; "$@" >"$log" 2>&1 & p=$!
	until grep -q "joined dgid" "$log"; do
		kill -0 $p 2>/dev/null || break; sleep 0.5
	done
	touch "$SROCE_SYNC/mckey.joined"; wait $p; st=$?; cat "$log"; exit $st'
# shellcheck disable=SC2016
SEND_WAIT='for _ in $(seq 100); do
		[ -e "$SROCE_SYNC/mckey.joined" ] && exec "$@"; sleep 0.5
	done; echo "the peer never joined"; exit 1'

# count_check ROLE BEFORE: on sroce, if this VM is ROLE (the receiver).
count_check() {
	local after
	[ "$SROCE_DEV_TYPE" = sroce ] && [ "$SROCE_ROLE" = "$1" ] || return 0
	after=$(rx_mcast)
	check "  sroce's rx_mcast grew by $N (${2:-?} -> ${after:-?})" \
		test $((${after:-0} - ${2:-0})) -ge $N
}

before=$(rx_mcast)
sender_note "$B_TYPE"
pair_step
pair_run "mckey $G, $N messages: $B_TYPE (B) sends, $A_TYPE (A) receives" \
	"log:joined dgid" "$SENT" \
	"${RECV[@]}" -- "${SEND[@]}"
count_check server "$before"

before=$(rx_mcast)
sender_note "$A_TYPE"
pair_step
pair_run "mckey $G, $N messages: $A_TYPE (A) sends, $B_TYPE (B) receives" \
	none 'data transfers complete' \
	bash -c "$SEND_WAIT" - "${SEND[@]}" -- \
	bash -c "$RECV_SIGNAL" - "$PWD/mckey-recv.log" "${RECV[@]}"
count_check client "$before"
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# timeout: 300
#
# The project's data-integrity tester (tools/testing/integrity) between
# the two VMs: every RC opcode over many sizes, offsets and SGE splits,
# every byte and completion field checked, plus the error paths (-q: the
# quick size set), over the IPv4 and the IPv6 GID.  The server side is the
# responder; the client drives.  SEND_WITH_INV and the memory windows
# (-t inv) run too: the server binds, invalidates and deallocates its
# windows, the client accesses through them.  Where the server is rdma_rxe
# (the tester finds that out itself, or --rxe yes), two of rxe's known
# deviations are accepted, each with a "# accepted:" line: a SEND_WITH_INV's
# receive flagged IBV_WC_IP_CSUM_OK for IBV_WC_WITH_INV (rxe_resp.c,
# do_complete(), kernel flag values in a user CQE) and EINVAL for EBUSY
# from the dereg of an MR with a bound window (rxe_verbs.c,
# rxe_dereg_mr()); data, rights and invalidation stay strictly checked.
# A check that rxe fails by a bug of its own is a SKIP naming the bug
# (file and function in rxe), and only when the outcome is the bug's: on
# 6.12, a window's range not enforced (check_rkey()), a refused bind or
# LOCAL_INV completed as WR_FLUSH_ERR (rxe_requester()), a refused
# SEND_WITH_INV ACKed (rxe_responder()), and the case that destroys a QP
# under a bound type 2 window is not run (rxe_do_bind_mw()'s QP reference).
# With rxe as the client, nothing is relaxed.  ATOMIC WRITE and FLUSH run
# where both ends have them (6.12).  rdma_rxe wants a FLUSH's ICRC in a form of
# its own (drivers/infiniband/sw/sroce/icrc.c, sroce_icrc_rxe_flush()):
# sroce takes both forms, and its first FLUSH on a QP to rxe goes again,
# in rxe's form, after one ACK timeout.
. "$(dirname "$0")/lib.sh"

bin=$SROCE_REPO/tools/testing/integrity/sroce_integrity
if [ ! -x "$bin" ]; then
	not_ok "integrity tester built" "missing $bin: make -C tools/testing/integrity"
	tap_done
fi

# On 6.2 and later both ends have ATOMIC WRITE and FLUSH: their cases
# must have run, not been skipped (6.1's core refuses flush access).
pmem_ran() {
	local cases
	cases=$(grep -E '^(not )?ok .*(ATOMIC_WRITE|FLUSH)' <<<"$CHECK_OUTPUT")
	diag "$cases"
	case $(uname -r) in
	6.1.*) return ;;
	esac
	if grep -q '^ok .*FLUSH' <<<"$cases" && ! grep -q 'FLUSH.*# SKIP' <<<"$cases"; then
		ok "$1: the ATOMIC_WRITE and FLUSH cases ran"
	else
		not_ok "$1: the ATOMIC_WRITE and FLUSH cases ran" "$cases"
	fi
}

# The window cases (-t inv) all ran and passed: skipped only where the
# reason is rdma_rxe's (a bug of rxe's, named by file and function) or, on
# 6.1, ATOMIC_WRITE's.  The cases, the skips and the rxe deviations
# accepted are listed.
mw_ran() {
	local cases
	cases=$(grep -E '^(not )?ok .*(window|SEND_WITH_INV|MW_BIND|dereg)|^# accepted:' \
		<<<"$CHECK_OUTPUT")
	diag "$cases"
	if grep -q '^ok .*SEND_WITH_INV invalidates' <<<"$cases" &&
	   ! grep -q '^not ok' <<<"$cases" &&
	   ! grep '# SKIP' <<<"$cases" | grep -v ATOMIC_WRITE | grep -qv 'SKIP rdma_rxe'; then
		ok "$1: the memory window cases ran"
	else
		# All of it, with the failed cases' diagnostics.
		not_ok "$1: the memory window cases ran" "$(awk \
			'/SEND_WITH_INV invalidates/ { p = 1 } /with a bad rkey/ { p = 0 } p' \
			<<<"$CHECK_OUTPUT")"
	fi
}

for fam in 4 6; do
	g=$(gid_of "$fam")
	pair_step
	pair_run "sroce_integrity IPv$fam, every RC opcode, bytes checked" \
		"tcp:$PAIR_PORT" '^1\.\.[0-9]+' \
		"$bin" -s -q -d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT" -- \
		"$bin" -c "$SROCE_SERVER_ADDR" -q -t basic,sge,inline,atomic,burst,inv,error \
		-d "$SROCE_DEV" -g "$g" -p "$PAIR_PORT"
	is_client && pmem_ran "IPv$fam"
	is_client && mw_ran "IPv$fam"
done
tap_done

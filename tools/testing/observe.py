#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What sroce shows of itself: rdma res -dd, the counters, a dropped packet.

Run by tests/23-observe.sh as root in namespace ns0 (topo_local.sh: sroce0
on veth0 10.0.0.1, sroce1 on veth1 10.0.0.2, traffic between them through
lo).  The shell enables the sroce tracepoints before and reads the trace
after; this program makes the traffic the trace must show and writes the
QP numbers to --qpns (A B: a on sroce0, b on sroce1), and on a second line
the PSN b NAKs (a PSN sequence error NAK, check_nak()).

    observe.py --gid0 N --gid1 N --qpns FILE [--srq-details]

Prints one line per check, "ok - DESC" or "not ok - DESC", and "# "
diagnostics.  Every transfer's data is checked (live_qps.py).
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_qps as lq  # noqa: E402
from forged import diag, forge, say  # noqa: E402
import forged  # noqa: E402

from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr  # noqa: E402
from pyverbs.wr import RecvWR, SGE  # noqa: E402

IP0, IP1 = forged.IP0, forged.IP1

# rdma_rxe's counter names (drivers/infiniband/sw/rxe/rxe_hw_counters.c)
RXE_NAMES = ('sent_pkts', 'rcvd_pkts', 'duplicate_request',
             'out_of_seq_request', 'rcvd_rnr_err', 'send_rnr_err',
             'rcvd_seq_err', 'ack_deferred', 'retry_exceeded_err',
             'retry_rnr_exceeded_err', 'completer_retry_err', 'send_err',
             'link_downed', 'rdma_sends', 'rdma_recvs')
QP_FIELDS = ('req_psn', 'comp_psn', 'resp_psn', 'resp_msn',
             'wqe_outstanding', 'wqe_unsent', 'rd_atomic', 'retransmits',
             'cwnd', 'retry_left', 'rnr_left', 'rnr_wait', 'nak_sent', 'rx_queue',
             'held_requests', 'held_responses', 'flags')


def res_dd(kind, dev):
    """`rdma -dd -j res show KIND`, the entries of dev."""
    out = subprocess.run(['rdma', '-dd', '-j', 'res', 'show', kind],
                         capture_output=True, text=True, check=True)
    return [r for r in json.loads(out.stdout or '[]')
            if r.get('ifname') == dev]


def text(kind):
    """`rdma -dd res show KIND`, as people see it."""
    return subprocess.run(['rdma', '-dd', 'res', 'show', kind],
                          capture_output=True, text=True).stdout


def num(v):
    """A number, or a hex string (with or without 0x)."""
    return int(v, 16) if isinstance(v, str) else v


def drv(r, name, default=-1):
    """A driver attribute of entry r (the rdma tool calls it drv_NAME)."""
    return num(r.get('drv_' + name, default))


def find(entries, key, value):
    for r in entries:
        if num(r.get(key, -1)) == value:
            return r
    return None


def show(r):
    return json.dumps(r, sort_keys=True)


def check_qp(a, b, rounds):
    qa = find(res_dd('qp', 'sroce0'), 'lqpn', a.qpn)
    qb = find(res_dd('qp', 'sroce1'), 'lqpn', b.qpn)
    if not say(qa is not None and qb is not None,
               'rdma res show qp -dd lists both QPs'):
        return
    missing = [f for f in QP_FIELDS if 'drv_' + f not in qa]
    say(not missing, 'qp -dd: sroce\'s fields are shown',
        'missing: %s' % ' '.join(missing), show(qa))
    # a sent `rounds` SEND, WRITE and READ (4 KiB, MTU 1024: 4 packets,
    # a READ request 1 PSN and 4 response PSNs) and b nothing: every PSN
    # of a's acknowledged, and b expects exactly the PSNs a used.
    rp, cp = drv(qa, 'req_psn'), drv(qa, 'comp_psn')
    say(rp == 12 * rounds and cp == rp,
        'qp -dd: sender req_psn %d = comp_psn %d = %d (PSNs used)' %
        (rp, cp, 12 * rounds), show(qa))
    say(drv(qb, 'resp_psn') == rp,
        'qp -dd: receiver resp_psn = sender req_psn',
        show(qb))
    say(all(drv(qa, f) == 0 for f in
            ('wqe_outstanding', 'wqe_unsent', 'rx_queue', 'held_requests',
             'held_responses', 'rnr_wait', 'retransmits')) and
        drv(qa, 'retry_left') == 7 and drv(qa, 'cwnd') == 512,
        'qp -dd: an idle sender: nothing outstanding, queued or held, '
        'no retransmit, retries left 7, the whole window', show(qa))


def check_cq_mr(a, b):
    """Completions left unpolled show in the CQ's fill; the MR its pages."""
    b.post_recv(32768, 64)
    a.post_send(lq.e.IBV_WR_SEND, 0, 64)
    time.sleep(0.3)
    cqs = res_dd('cq', 'sroce0')
    c = next((r for r in cqs if drv(r, 'used') == 1), None)
    say(c is not None and drv(c, 'size') >= 128,
        'cq -dd: the sender\'s CQ shows 1 completion used of >= 128',
        '\n'.join(show(r) for r in cqs))
    a.poll(1)
    b.poll(1)
    cqs = res_dd('cq', 'sroce0')
    say(cqs and all(drv(r, 'used') == 0 for r in cqs),
        'cq -dd: polled, every CQ of sroce0 shows 0 used',
        '\n'.join(show(r) for r in cqs))
    m = find(res_dd('mr', 'sroce0'), 'rkey', a.mr.rkey)
    if m is None:            # rkey shown to CAP_NET_ADMIN only; we are root
        m = {}
    say(m.get('drv_type') == 'user' and drv(m, 'pages') in (16, 17) and
        m.get('drv_state') == 'valid' and drv(m, 'access', 0) & 0xe,
        'mr -dd: a 64 KiB user MR, valid, 16 pages, remote access',
        show(m))


def check_srq(dev, details):
    try:
        res_dd('srq', dev.name)
    except subprocess.CalledProcessError as ex:
        print('ok - srq -dd # SKIP rdma res show srq: %s' %
              ex.stderr.strip())
        return
    srq = SRQ(dev.pd, SrqInitAttr(attr=SrqAttr(max_wr=16, max_sge=1)))
    mr = lq.MR(dev.pd, 4096, lq.ACCESS)
    for i in range(3):
        srq.post_recv(RecvWR(wr_id=i, num_sge=1,
                             sg=[SGE(mr.buf + 64 * i, 64, mr.lkey)]))
    entries = res_dd('srq', dev.name)
    if details:
        s = next((r for r in entries if 'drv_posted' in r), {})
        say(drv(s, 'posted') == 3 and drv(s, 'size') >= 16,
            'srq -dd: 3 receive WQEs posted of >= 16', show(s))
    else:
        say(len(entries) >= 1, 'srq: listed (6.1: no driver fields)',
            '\n'.join(show(r) for r in entries))
    srq.close()
    mr.close()


def check_counters(before, after, rounds):
    missing = [n for n in RXE_NAMES if n not in after]
    say(not missing, 'rdma_rxe\'s counter names are all there',
        'missing: %s' % ' '.join(missing))
    d = lq.delta(before, after)
    say(after.get('sent_pkts') == after.get('tx_packets') and
        after.get('rcvd_pkts') == after.get('rx_packets') and
        d.get('sent_pkts', 0) >= 9 * rounds,
        'sent_pkts = tx_packets, rcvd_pkts = rx_packets, and moved',
        forged.show(d))
    say(d.get('rdma_sends', 0) == rounds and d.get('ack_deferred', 0) > 0,
        'rdma_sends +%d (the SENDs), ack_deferred moved' % rounds,
        forged.show(d))


def check_rnr(a, b):
    """A SEND before b posted a receive: RNR NAKs, then it goes through."""
    before = a.dev.counters()
    a.write(0, lq.pattern(7, 512))
    a.post_send(lq.e.IBV_WR_SEND, 0, 512)
    time.sleep(0.1)
    # What a stalled QP looks like (Documentation/sroce.rst has it)
    for _ in range(10):     # not in the moment a's SEND is out again
        qa = find(res_dd('qp', 'sroce0'), 'lqpn', a.qpn) or {}
        if drv(qa, 'rnr_wait') == 1:
            break
    say(drv(qa, 'rnr_wait') == 1 and drv(qa, 'wqe_outstanding') == 1 and
        drv(qa, 'wqe_unsent') == 1 and drv(qa, 'retransmits') >= 1 and
        drv(qa, 'comp_psn') == drv(qa, 'req_psn'),
        'qp -dd during the RNR wait: rnr_wait, 1 WQE outstanding and gone '
        'back to (req_psn = comp_psn), retransmits counted', show(qa))
    diag(text('qp'))
    b.post_recv(32768, 512)
    wa, wb = a.poll(1), b.poll(1)
    ok = (wa and wb and not wa[0].status and not wb[0].status and
          b.read(32768, 512) == lq.pattern(7, 512))
    d = lq.delta(before, a.dev.counters())
    say(ok and d.get('rcvd_rnr_err', 0) > 0 and
        d.get('rcvd_rnr_err') == d.get('rnr_nak_rcvd'),
        'a SEND waits out RNR NAKs, then lands; rcvd_rnr_err = '
        'rnr_nak_rcvd', forged.show(d))


def check_drop(a):
    """A request to a's QP from its peer's address with a bad ICRC."""
    before = a.dev.counters()
    forge(IP1, IP0, '--op', 'RC_SEND_ONLY', '--qpn', a.qpn, '--psn', 0,
          '--payload-len', 16, '--bad-icrc')
    time.sleep(0.3)
    d = lq.delta(before, a.dev.counters())
    say(d.get('rx_drop_icrc', 0) == 1,
        'a packet with a bad ICRC to QP %d: rx_drop_icrc +1' % a.qpn,
        forged.show(d))


def check_nak(b):
    """A request past a gap to b, from a's address: b holds it, then NAKs
    (PSN sequence error) when the gap does not fill."""
    psn = drv(find(res_dd('qp', 'sroce1'), 'lqpn', b.qpn) or {}, 'resp_psn')
    before = b.dev.counters()
    forge(IP0, IP1, '--op', 'RC_SEND_ONLY', '--qpn', b.qpn, '--psn',
          (psn + 5) & 0xffffff, '--payload-len', 16)
    time.sleep(0.3)
    d = lq.delta(before, b.dev.counters())
    say(d.get('out_of_seq_request', 0) == 1 and
        d.get('out_of_sequence') == 1 and d.get('rx_reorder_held') == 1,
        'a request 5 PSNs ahead to QP %d: held, then NAKed '
        '(out_of_seq_request = out_of_sequence +1)' % b.qpn, forged.show(d))
    return psn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gid0', type=int, required=True)
    ap.add_argument('--gid1', type=int, required=True)
    ap.add_argument('--qpns', required=True)
    ap.add_argument('--srq-details', action='store_true')
    args = ap.parse_args()
    dev0, dev1 = lq.Dev('sroce0', args.gid0), lq.Dev('sroce1', args.gid1)
    a, b = lq.RC(dev0), lq.RC(dev1)
    a.connect(b)
    # b's RNR NAKs ask for 10.24 ms: a few of them in check_rnr()
    b.init()
    b.rtr(a, min_rnr_timer=20)
    b.rts()
    with open(args.qpns, 'w') as f:
        f.write('%d %d\n' % (a.qpn, b.qpn))
    rounds = 5
    before = dev0.counters()
    errs = [lq.traffic_ok(a, b, seed) for seed in range(rounds)]
    say(not any(errs), '%d rounds of SEND, WRITE, READ a -> b, data '
        'checked' % rounds, *[x for x in errs if x])
    after = dev0.counters()
    check_counters(before, after, rounds)
    check_qp(a, b, rounds)
    for kind in ('qp', 'cq', 'mr'):
        diag(text(kind))
    check_cq_mr(a, b)
    check_srq(dev0, args.srq_details)
    check_rnr(a, b)
    check_drop(a)
    with open(args.qpns, 'a') as f:
        f.write('%d\n' % check_nak(b))
    a.close()
    b.close()
    dev0.close()
    dev1.close()
    return 1 if forged.failed else 0


if __name__ == '__main__':
    sys.exit(main())

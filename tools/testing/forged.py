#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Forged RoCEv2 packets from an unprivileged user against live QPs.

Run by tests/18-forged.sh as root inside namespace ns0, where veth0 has
10.0.0.1 (and 10.0.0.3, fd00::1, fd00::3) with sroce0 on it, and veth1
has 10.0.0.2 (fd00::2) with sroce1: traffic between the two devices goes
through lo, so a local UDP socket can claim to be either end.  This
program owns the QPs (pyverbs); the packets are built and sent by roce.py
run as user nobody (setpriv), the way any local user could.

    forged.py --gid0 N --gid1 N --gid0-6 N CASE...

CASE: icrc, nak, write, loopback, flood, rd-atomic, seq-nak, pmem.  Prints one
line per check, "ok - DESC" or "not ok - DESC", and "# " diagnostics.
"""

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_qps as lq  # noqa: E402
import roce  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
IP0, IP1, IP_OTHER = '10.0.0.1', '10.0.0.2', '10.0.0.3'
IP6_0, IP6_OTHER = 'fd00::1', 'fd00::3'
ACCESS_FLUSH_GLOBAL = 1 << 8           # IBV_ACCESS_FLUSH_GLOBAL (not in v44)
UNPRIV = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups',
          '--']
failed = 0


def say(good, desc, *why):
    global failed
    print('%s - %s' % ('ok' if good else 'not ok', desc))
    if not good:
        failed += 1
        for w in why:
            diag(w)
    sys.stdout.flush()
    return good


def diag(text):
    for line in str(text).splitlines():
        print('# ' + line)
    sys.stdout.flush()


def forge(src, dst, *args):
    """roce.py send --src src --dst dst ARGS, as user nobody."""
    cmd = UNPRIV + [sys.executable, os.path.join(HERE, 'roce.py'), 'send',
                    '--src', src, '--dst', dst] + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError('forging failed: %s\n%s%s' % (
            ' '.join(cmd), r.stdout, r.stderr))
    diag('nobody: ' + r.stdout.strip())


def moved(d, name):
    return d.get(name, 0) > 0


def show(d):
    return 'counter changes: ' + (', '.join(
        '%s +%d' % kv for kv in sorted(d.items())) or 'none')


def state_name(s):
    return lq.STATE_NAMES.get(s, str(s))


# ------------------------------------------------------------- cases ----

def case_icrc(dev0, dev1):
    """The ICRC roce.py computes is right (IPv4 and IPv6); a wrong one is
    counted.  UD SEND_ONLY to QP1 with a Q_Key that is not the GSI's: the
    packet is dropped after the ICRC check whatever else happens."""
    for src, dst in ((IP_OTHER, IP0), (IP6_OTHER, IP6_0)):
        hdr = ['--op', 'UD_SEND_ONLY', '--qpn', 1, '--psn', 0,
               '--deth', '0x1234:0x7', '--payload-len', 256]
        before = dev0.counters()
        forge(src, dst, *hdr, '--count', 10)
        time.sleep(0.5)
        d = lq.delta(before, dev0.counters())
        say(d.get('rx_packets', 0) >= 10 and not moved(d, 'rx_drop_icrc'),
            'IPv%d: 10 packets with the ICRC roce.py computes: received, '
            'rx_drop_icrc does not move' % (6 if ':' in src else 4), show(d))
        before = dev0.counters()
        forge(src, dst, *hdr, '--count', 10, '--bad-icrc')
        time.sleep(0.5)
        d = lq.delta(before, dev0.counters())
        say(d.get('rx_drop_icrc', 0) == 10,
            'IPv%d: 10 packets with a wrong ICRC: rx_drop_icrc +10' %
            (6 if ':' in src else 4), show(d))


def pair(dev_a, dev_b, **rts_kw):
    """a on dev_a <-> b on dev_b, both RTS."""
    a, b = lq.RC(dev_a), lq.RC(dev_b)
    a.connect(b, **rts_kw)
    b.connect(a, **rts_kw)
    return a, b


def nak_while_outstanding(a, b, forgers, label):
    """a (RTS) SENDs to b, left in INIT so that it never answers: the SEND
    stays outstanding (a resends on its ACK timer).  forgers() sends the
    forged NAKs for a's outstanding PSNs.  Then b comes up; the SEND must
    complete, with the data, and the QPs work on."""
    sq_before = lq.res_qp(a.dev.name, a.qpn)['sq-psn']
    data = lq.pattern(7, 4096)
    a.write(0, data)
    b.init()
    a.post_send(lq.e.IBV_WR_SEND, 0, 4096)
    time.sleep(0.3)
    q = lq.res_qp(a.dev.name, a.qpn)
    diag('%s: QP %d (rdma res): sq-psn %d before the SEND, %d after' % (
        label, a.qpn, sq_before, q['sq-psn']))
    before = a.dev.counters()
    forgers(sq_before, q['sq-psn'])
    time.sleep(0.5)
    d = lq.delta(before, a.dev.counters())
    say(moved(d, 'rx_drop_peer'), '%s: rx_drop_peer moves' % label, show(d))
    say(a.state() == lq.e.IBV_QPS_RTS, '%s: the QP is still RTS' % label,
        'state %s' % state_name(a.state()))
    wcs = a.poll(1, 0)
    say(not wcs, '%s: the outstanding SEND has not completed' % label,
        'completion status %d' % (wcs[0].status if wcs else -1))
    # The responder comes up: the SEND goes through on a's next resend.
    b.rtr(a)
    b.rts()
    b.write(32768, b'\0' * 4096)
    b.post_recv(32768, 4096)
    wa, wb = wcs or a.poll(1, 15), b.poll(1, 15)
    good = wa and wb and not wa[0].status and not wb[0].status and \
        b.read(32768, 4096) == data
    say(good, '%s: the SEND completes once the peer is up, data intact' %
        label, 'completions: sender %s, receiver %s' % (
            [w.status for w in wa], [w.status for w in wb]))
    err = lq.traffic_ok(a, b, 11)
    say(err is None, '%s: SEND, WRITE, READ with the peer work after' %
        label, err)


def case_nak(dev0, dev1):
    """(a) A forged NAK, from the wrong source, at the right QPN and PSN."""
    a, b = lq.RC(dev0), lq.RC(dev1)
    a.init()
    a.rtr(b)
    # 4 s ACK timeout, 7 retries: ~34 s before RETRY_EXC, so that a slow
    # (TCG, loaded) host still brings b up while the SEND is outstanding.
    a.rts(timeout=20, retry_cnt=7)

    def forgers(first, nxt):
        n = (nxt - first) & roce.PSN_MASK or 1
        for src, syn in ((IP_OTHER, roce.NAK_REMOTE_ACCESS),
                         ('127.0.0.1', roce.NAK_INVALID_REQ)):
            forge(src, IP0, '--op', 'RC_ACKNOWLEDGE', '--qpn', a.qpn,
                  '--psn', first, '--psn-step', 1, '--count', n,
                  '--aeth', '%d:0' % syn)
    nak_while_outstanding(a, b, forgers, 'forged NAK from 10.0.0.3/127.0.0.1')


def forged_write(target, src, dst, label):
    """A forged RDMA WRITE ONLY at target's expected PSN into its MR, keys
    and address from rdma res, from src: the memory must not change."""
    mr = lq.res_mr(target.dev.name, target.mr.rkey)
    q = lq.res_qp(target.dev.name, target.qpn)
    iova = mr.get('iova', target.mr.buf)
    if isinstance(iova, str):
        iova = int(iova, 16)
    diag('%s: QP %d rq-psn %d; MR rkey 0x%x iova 0x%x mrlen %s' % (
        label, target.qpn, q['rq-psn'], target.mr.rkey, iova,
        mr.get('mrlen')))
    guard = lq.pattern(3, lq.MR_SIZE)
    target.write(0, guard)
    before = target.dev.counters()
    for off in (0, 16384):
        forge(src, dst, '--op', 'RC_RDMA_WRITE_ONLY', '--qpn', target.qpn,
              '--psn', q['rq-psn'], '--ackreq',
              '--reth', '%d:%d:256' % (iova + off, target.mr.rkey),
              '--payload-len', 256, '--payload-byte', 0xee)
    time.sleep(0.5)
    d = lq.delta(before, target.dev.counters())
    say(target.read(0, lq.MR_SIZE) == guard,
        '%s: the target memory is unchanged' % label)
    say(moved(d, 'rx_drop_peer'), '%s: rx_drop_peer moves' % label, show(d))
    return d


def case_write(dev0, dev1):
    """(b) A forged RDMA WRITE from the wrong source."""
    a, b = pair(dev0, dev1)
    err = lq.traffic_ok(a, b, 1)
    say(err is None, 'write: the live connection works first', err)
    forged_write(b, IP_OTHER, IP1, 'forged WRITE from 10.0.0.3')
    forged_write(b, '127.0.0.1', IP1, 'forged WRITE from 127.0.0.1')
    err = lq.traffic_ok(a, b, 2)
    say(err is None, 'write: the live connection works after', err)


def case_loopback(dev0, dev1):
    """(c) The same forged packets to a loopback QP (peer == own GID),
    from the device's own address."""
    a, b = pair(dev0, dev0)
    forged_write(b, IP0, IP0, 'loopback QP, forged WRITE from 10.0.0.1')
    err = lq.traffic_ok(a, b, 3)
    say(err is None, 'loopback: the QPs work after the forged WRITE', err)

    a, b = lq.RC(dev0), lq.RC(dev0)
    a.init()
    a.rtr(b)
    a.rts(timeout=20, retry_cnt=7)     # as case_nak

    def forgers(first, nxt):
        n = (nxt - first) & roce.PSN_MASK or 1
        forge(IP0, IP0, '--op', 'RC_ACKNOWLEDGE', '--qpn', a.qpn,
              '--psn', first, '--psn-step', 1, '--count', n,
              '--aeth', '%d:0' % roce.NAK_REMOTE_ACCESS)
    nak_while_outstanding(a, b, forgers, 'loopback QP, forged NAK')


FLOOD_SCRIPT = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
import roce
n, src, dst = int(sys.argv[2]), sys.argv[3], sys.argv[4]
targets = [int(x) for x in sys.argv[5].split(',')]
s = roce.Sender(src)
pkts = []
for i, qpn in enumerate(targets):
    if qpn == 1:
        body = roce.packet(roce.OP['UD_SEND_ONLY'], 1, i,
                           roce.deth(roce.GSI_QKEY, 1), b'\x01' * 256)
    else:
        body = roce.packet(roce.OP['RC_SEND_ONLY'], qpn, i, b'',
                           b'\x02' * 256)
    pkts.append(body + s.icrc(dst, body))
t = time.monotonic()
for i in range(n):
    s.send(dst, pkts[i % len(pkts)], icrc=False)
t = time.monotonic() - t
print('%d packets in %.1f s (%.0f/s), %d ENOBUFS retries' % (
    s.sent, t, s.sent / t, s.nobufs))
'''


def case_flood(dev0, dev1, count):
    """(d) A flood to QP1, to a live RC QP and to a QP in RESET."""
    a, b = pair(dev0, dev1)
    idle = lq.RC(dev1)                  # stays in RESET
    err = lq.traffic_ok(a, b, 4)
    say(err is None, 'flood: the live connection works first', err)
    m0 = lq.meminfo()
    before = dev1.counters()
    targets = '1,%d,%d' % (b.qpn, idle.qpn)
    t = time.monotonic()
    # Two senders: one from a wrong source, one spoofing the peer.
    procs = [subprocess.Popen(UNPRIV + [sys.executable, '-c', FLOOD_SCRIPT,
                                        HERE, str(count // 2), src, IP1,
                                        targets],
                              stdout=subprocess.PIPE, text=True)
             for src in (IP_OTHER, IP0)]
    peak = 0
    while any(p.poll() is None for p in procs):
        peak = max(peak, m0['MemAvailable'] - lq.meminfo()['MemAvailable'])
        time.sleep(0.5)
    for p in procs:
        diag('nobody: ' + p.stdout.read().strip())
    diag('flood took %.1f s' % (time.monotonic() - t))
    time.sleep(2)
    m1 = lq.meminfo()
    d = lq.delta(before, dev1.counters())
    diag(show(d))
    diag('MemAvailable %d -> %d kB (peak drop %d kB), Slab %d -> %d kB' % (
        m0['MemAvailable'], m1['MemAvailable'], peak, m0['Slab'],
        m1['Slab']))
    say(d.get('rx_drop_queue_full', 0) + d.get('rx_drop_state', 0) > 0,
        'flood: rx_drop_queue_full / rx_drop_state move', show(d))
    drops = sum(v for k, v in d.items() if k.startswith('rx_drop_'))
    say(d.get('rx_packets', 0) >= count * 0.99,
        'flood: the device saw the packets (rx_packets +%d of %d)' % (
            d.get('rx_packets', 0), count))
    say(moved(d, 'rx_drop_peer'),
        'flood: the RC QP dropped what did not come from its peer',
        show(d))
    say(peak < 64 * 1024 and m1['Slab'] - m0['Slab'] < 32 * 1024,
        'flood: kernel memory does not balloon (< 64 MiB, Slab < 32 MiB)',
        'peak MemAvailable drop %d kB, Slab +%d kB' % (
            peak, m1['Slab'] - m0['Slab']))
    diag('drops %d' % drops)
    # The live connection: b's PSNs were not disturbed by the flood,
    # whatever came from the spoofed peer was dropped as wrong transport
    # or a duplicate, or taken... it must still work.
    err = lq.traffic_ok(a, b, 5)
    say(err is None, 'flood: the live connection works after', err)
    say(idle.state() == lq.e.IBV_QPS_RESET,
        'flood: the QP in RESET is still in RESET')


def case_rd_atomic(dev0, dev1):
    """(e1) READ requests beyond max_dest_rd_atomic, spoofing the peer."""
    a, b = lq.RC(dev0), lq.RC(dev1)
    a.connect(b)
    b.init()
    b.rtr(a, max_dest_rd_atomic=2)
    b.rts()
    err = lq.traffic_ok(a, b, 6)
    say(err is None, 'rd-atomic: the live connection works first', err)
    # A 1 MiB MR: a READ of it is 1024 responses, sent a budget at a time,
    # so the READs that follow find it still outstanding.
    big = lq.MR(dev1.pd, 1 << 20, lq.ACCESS)
    q = lq.res_qp(dev1.name, b.qpn)
    mr = lq.res_mr(dev1.name, big.rkey)
    diag('rd-atomic: QP %d rq-psn %d; MR rkey 0x%x mrlen %s' % (
        b.qpn, q['rq-psn'], big.rkey, mr.get('mrlen')))
    before = dev1.counters()
    # 16 READs of 1 MiB (1024 response PSNs each) at once, from 10.0.0.1.
    forge(IP0, IP1, '--op', 'RC_RDMA_READ_REQUEST', '--qpn', b.qpn,
          '--psn', q['rq-psn'], '--psn-step', 1024, '--count', 16,
          '--reth', '%d:%d:%d' % (big.buf, big.rkey, 1 << 20))
    time.sleep(3)
    d = lq.delta(before, dev1.counters())
    say(moved(d, 'rd_atomic_exceeded'), 'rd-atomic: rd_atomic_exceeded moves',
        show(d))
    st = b.state()
    say(st == lq.e.IBV_QPS_ERR, 'rd-atomic: the responder QP went to ERR',
        'state %s' % state_name(st))


def case_seq_nak(dev0, dev1):
    """(e2) PSN-sequence NAKs, spoofing the peer, to requesters whose SEND
    is outstanding (the responder stays in INIT and never answers; the
    ACK timeout is 17 s, so the timer plays no part).  A sequence NAK uses
    up a retry, and only one go-back-N is under way at a time: with
    retry_cnt 0 the first NAK ends the SEND with IB_WC_RETRY_EXC_ERR (12)
    at once, where NAKs used to make it resend, again and again; with
    retry_cnt 3, of a burst of NAKs with no progress in between, one
    counts and the rest are ignored (seq_nak_ignored)."""
    qps = {}
    for retry in (0, 3):
        a, b = lq.RC(dev0), lq.RC(dev1)
        a.init()
        a.rtr(b)
        a.rts(timeout=22, retry_cnt=retry)
        b.init()                        # never answers
        qps[retry] = (a, b)
    for retry, (a, b) in sorted(qps.items()):
        q0 = lq.res_qp(dev0.name, a.qpn)
        a.post_send(lq.e.IBV_WR_SEND, 0, 1024)
        time.sleep(0.3)
        before = dev0.counters()
        t = time.monotonic()
        for _ in range(3):              # bursts of 4 NAKs for the PSN
            forge(IP1, IP0, '--op', 'RC_ACKNOWLEDGE', '--qpn', a.qpn,
                  '--psn', q0['sq-psn'], '--count', 4,
                  '--aeth', '%d:0' % roce.NAK_PSN_SEQ)
        wcs = a.poll(1, 1 if retry else 3)
        d = lq.delta(before, dev0.counters())
        label = 'seq-nak, retry_cnt %d' % retry
        say(moved(d, 'seq_nak_rcvd'), '%s: seq_nak_rcvd moves' % label,
            show(d))
        if retry == 0:
            say(wcs and wcs[0].status == lq.e.IBV_WC_RETRY_EXC_ERR,
                '%s: the SEND ends with IB_WC_RETRY_EXC_ERR (12) right '
                'after the NAKs, not on the 17 s ACK timer' % label,
                'completion: %s after %.1f s' % (
                    wcs[0].status if wcs else 'none', time.monotonic() - t),
                show(d))
        else:
            say(d.get('seq_nak_ignored', 0) >= 8,
                '%s: 12 NAKs with no progress: the go-back-N under way '
                'ignores the others (seq_nak_ignored >= 8)' % label, show(d))
            say(not wcs and a.state() == lq.e.IBV_QPS_RTS,
                '%s: one retry used, the SEND still waits, the QP is RTS' %
                label, 'completions %s, state %s' % (
                    [w.status for w in wcs], state_name(a.state())))
    for a, b in qps.values():
        a.close()
        b.close()


def case_pmem(dev0, dev1):
    """(f) ATOMIC WRITE and FLUSH requests (IBA A19) spoofing the peer, at
    the responder's expected PSN (its answers go to the real peer, which
    drops them: it sent nothing there).  An ATOMIC WRITE lands and takes
    one PSN; the same request again is a duplicate, answered again but not
    carried out again; one with 4 bytes is malformed.  A FLUSH (global,
    range) of an MR that grants flush access takes one PSN (6.12: 6.1's
    core refuses the access bit); one with a reserved placement type is
    an invalid request: the QP goes to ERR."""
    a, b = pair(dev0, dev1)
    err = lq.traffic_ok(a, b, 8)
    say(err is None, 'pmem: the live connection works first', err)
    fmr = None
    try:
        fmr = lq.MR(dev1.pd, 65536, lq.ACCESS | ACCESS_FLUSH_GLOBAL)
    except Exception as ex:             # 6.1: EINVAL from the core
        diag('pmem: no MR with IBV_ACCESS_FLUSH_GLOBAL: %s' % ex)
    psn = lq.res_qp(dev1.name, b.qpn)['rq-psn']

    def rq_psn():
        return lq.res_qp(dev1.name, b.qpn)['rq-psn']

    def atomic_write(p, data):
        forge(IP0, IP1, '--op', 'RC_ATOMIC_WRITE', '--qpn', b.qpn, '--psn', p,
              '--ackreq', '--reth', '%d:%d:8' % (b.mr.buf + 64, b.mr.rkey),
              '--payload-hex', data)
        time.sleep(0.3)

    b.write(64, b'\0' * 8)
    atomic_write(psn, '0102030405060708')
    say(b.read(64, 8) == bytes(range(1, 9)),
        'pmem: a forged ATOMIC_WRITE from the peer lands',
        'memory %s' % b.read(64, 8).hex())
    say(rq_psn() == (psn + 1) & roce.PSN_MASK, 'pmem: it takes one PSN',
        'rq-psn %d -> %d' % (psn, rq_psn()))
    b.write(64, b'\xee' * 8)
    before = dev1.counters()
    atomic_write(psn, '0102030405060708')
    d = lq.delta(before, dev1.counters())
    say(b.read(64, 8) == b'\xee' * 8 and moved(d, 'duplicate_request'),
        'pmem: the same ATOMIC_WRITE again is a duplicate, not carried out '
        'again', 'memory %s' % b.read(64, 8).hex(), show(d))
    psn = (psn + 1) & roce.PSN_MASK
    before = dev1.counters()
    atomic_write(psn, '01020304')
    d = lq.delta(before, dev1.counters())
    say(moved(d, 'rx_drop_malformed') and rq_psn() == psn and
        b.state() == lq.e.IBV_QPS_RTS and b.read(64, 8) == b'\xee' * 8,
        'pmem: an ATOMIC_WRITE of 4 bytes is malformed: dropped', show(d))
    if fmr:
        forge(IP0, IP1, '--op', 'RC_FLUSH', '--qpn', b.qpn, '--psn', psn,
              '--ackreq', '--feth', '1:0',
              '--reth', '%d:%d:4096' % (fmr.buf, fmr.rkey))
        time.sleep(0.3)
        say(rq_psn() == (psn + 1) & roce.PSN_MASK and
            b.state() == lq.e.IBV_QPS_RTS,
            'pmem: a FLUSH (global, range) of an MR with flush access takes '
            'one PSN, the QP stays RTS', 'rq-psn %d, state %s' % (
                rq_psn(), state_name(b.state())))
        psn = (psn + 1) & roce.PSN_MASK
    forge(IP0, IP1, '--op', 'RC_FLUSH', '--qpn', b.qpn, '--psn', psn,
          '--ackreq', '--feth', '4:0',
          '--reth', '%d:%d:64' % (b.mr.buf, b.mr.rkey))
    time.sleep(0.3)
    say(b.state() == lq.e.IBV_QPS_ERR,
        'pmem: a FLUSH with a reserved placement type: invalid request, ERR',
        'state %s' % state_name(b.state()))
    if fmr:
        fmr.close()
    a.close()
    b.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gid0', type=int, required=True)
    ap.add_argument('--gid1', type=int, required=True)
    ap.add_argument('--flood', type=int, default=200000)
    ap.add_argument('cases', nargs='+')
    a = ap.parse_args()
    dev0, dev1 = lq.Dev('sroce0', a.gid0), lq.Dev('sroce1', a.gid1)
    fns = {'icrc': case_icrc, 'nak': case_nak, 'write': case_write,
           'loopback': case_loopback, 'rd-atomic': case_rd_atomic,
           'seq-nak': case_seq_nak, 'pmem': case_pmem,
           'flood': lambda d0, d1: case_flood(d0, d1, a.flood)}
    for c in a.cases:
        t = time.monotonic()
        try:
            fns[c](dev0, dev1)
        except Exception as ex:          # a case that breaks is a failure
            say(False, '%s: ran to the end' % c, '%s: %s' % (
                type(ex).__name__, ex))
        diag('%s: %.1f s' % (c, time.monotonic() - t))
    dev0.close()
    dev1.close()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""sroce's own RoCEv2 fuzzer: forged packets from local UDP sockets at live
QPs and MRs, while data-checked traffic runs on other QPs.

Runs as root in namespace ns0 of topo_local.sh (sroce0 on veth0 with
10.0.0.1, 10.0.0.3, fd00::1, fd00::3; sroce1 on veth1 with 10.0.0.2,
fd00::2), from tests/17-fuzz.sh and `make fuzz`:

    roce_fuzz.py --gid0 N --gid1 N [--packets N] [--seed S]
                 [--progress N] [--findings DIR]

What it does:
  1. starts the live traffic: a child process (roce_fuzz.py traffic) with
     an RC pair sroce0 <-> sroce1 and a loopback RC pair on sroce1 doing
     SEND, WRITE and READ with every byte checked, until told to stop;
  2. makes its targets: an RC pair and a UC pair sroce0 <-> sroce1, a
     loopback RC pair on sroce0, an RC requester whose SEND stays
     outstanding (its responder is left in INIT), a UD QP on sroce1, a QP
     left in RESET, and QP1 of both devices; each with a 64 KiB MR;
  3. captures their first real packets (AF_PACKET on veth0): SEND,
     WRITE, READ and atomics with their responses and ACKs;
  4. sends --packets packets, each of a class picked at random (seeded):
       random      random bytes, no ICRC
       bth         a random BTH (any opcode) and random tail
       valid       a well-formed packet of an opcode the target's transport
                   has, boundary values in every field
       reth        WRITE/READ with RETH va/length/rkey at the limits
       aeth        ACKs, NAKs, RNR NAKs and read responses, every syndrome
       atomic      CMP_SWAP/FETCH_ADD, misaligned and out of range
       mutate      a captured packet re-targeted at a live QP (current PSN
                   from rdma res show qp, the live MR's rkey and address),
                   then bit flips, truncation, pad counts, opcode swaps or
                   extra bytes
       dup         a captured packet, re-targeted, sent 2-4 times
       ud          UD SENDs to QP1 and the UD QP, any Q_Key
       cnp         congestion notification packets
       foreign     well-formed requests and NAKs from a wrong source at
                   the live traffic's QPs, at their current PSNs
     most with a correct ICRC (so they reach the deep checks), from the
     QP's peer address mostly (a local user can bind to it), else from a
     wrong one; some over IPv6.  Every few hundred packets it re-reads the
     targets' PSNs, replaces targets that went to ERR (a forged NAK from
     the "peer" may legitimately kill one), keeps their requesters busy,
     and reads the kernel log: a warning stops the run and saves the seed,
     the last packets (hex) and the log under --findings;
  5. stops the traffic and checks it: rounds done, no error, every byte;
  6. prints the packet classes and a table accounting for every packet
     in the device counters.

Exit status 0 if the traffic was right, the counters account for the
packets and the kernel log stayed clean.
"""

import argparse
import collections
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roce  # noqa: E402

IP0, IP1, IP_OTHER = '10.0.0.1', '10.0.0.2', '10.0.0.3'
IP6_0, IP6_1, IP6_OTHER = 'fd00::1', 'fd00::2', 'fd00::3'
DEV_OF = {IP0: 'sroce0', IP_OTHER: 'sroce0', IP6_0: 'sroce0',
          IP6_OTHER: 'sroce0', IP1: 'sroce1', IP6_1: 'sroce1'}
WRONG_SOURCES = (IP_OTHER, '127.0.0.1')
UD_QKEY = 0x11111111
KLOG_BAD = ('WARNING:', 'BUG:', 'BUG ', 'Oops', 'KASAN', 'UBSAN',
            'general protection', 'soft lockup', 'hung task', 'Call Trace',
            'rcu_sched self-detected', 'rcu: INFO', 'kernel BUG',
            'refcount_t', 'list_add corruption', 'list_del corruption')
CLASSES = (('random', 4), ('bth', 10), ('valid', 20), ('reth', 12),
           ('aeth', 12), ('atomic', 8), ('mutate', 20), ('dup', 5),
           ('ud', 5), ('cnp', 1), ('foreign', 3))
U32 = 0xffffffff
U64 = 2**64 - 1


def log(*a):
    print(*a, flush=True)


# ------------------------------------------------------ live traffic ----

def traffic_main(a):
    """The child: data-checked traffic on QPs of its own until SIGTERM."""
    import live_qps as lq
    d0, d1 = lq.Dev('sroce0', a.gid0), lq.Dev('sroce1', a.gid1)
    pairs = []
    for x, y in ((d0, d1), (d1, d1)):
        p, q = lq.RC(x), lq.RC(y)
        p.connect(q, timeout=14, retry_cnt=7)
        q.connect(p, timeout=14, retry_cnt=7)
        pairs.append((p, q))
    # The QPs the fuzzer's "foreign" packets aim at.
    log('traffic-qps ' + json.dumps(
        [[p.dev.name, p.qpn] for pq in pairs for p in pq]))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rounds = errors = 0
    while not stop:
        for p, q in pairs:
            err = lq.traffic_ok(p, q, rounds)
            rounds += 1
            if err:
                errors += 1
                log('traffic error in round %d (%s QP %d -> %s QP %d): %s' % (
                    rounds, p.dev.name, p.qpn, q.dev.name, q.qpn, err))
                if errors >= 5:
                    stop.append(1)
                    break
    log('traffic-result rounds=%d errors=%d' % (rounds, errors))
    d0.close()
    d1.close()
    return 1 if errors or not rounds else 0


# ----------------------------------------------------------- targets ----

class Target:
    """A fuzz target: one QP, where it lives, who its peer is."""

    def __init__(self, name, dev, qpn, own, peer, kind, obj=None):
        self.name, self.dev, self.qpn = name, dev, qpn
        self.own, self.peer, self.kind, self.obj = own, peer, kind, obj
        self.sq_psn = self.rq_psn = 0
        self.state = 'RTS'
        self.rkey = obj.mr.rkey if obj else 0
        self.va = obj.mr.buf if obj else 0
        self.mrlen = 65536 if obj else 0


class Targets:
    def __init__(self, lq, d0, d1):
        self.lq, self.d0, self.d1 = lq, d0, d1
        self.replaced = 0
        self.pairs = {}
        self.make_pair('rc', d0, d1, lq.e.IBV_QPT_RC)
        self.make_pair('uc', d0, d1, lq.e.IBV_QPT_UC)
        self.make_pair('lo', d0, d0, lq.e.IBV_QPT_RC)
        self.make_stall()
        self.ud = lq.UD(d1, UD_QKEY)
        self.reset = lq.RC(d1)             # stays in RESET
        self.fixed = [
            Target('ud', 'sroce1', self.ud.qpn, IP1, None, 'UD'),
            Target('reset', 'sroce1', self.reset.qpn, IP1, None, 'RC'),
            Target('qp1/0', 'sroce0', 1, IP0, None, 'UD'),
            Target('qp1/1', 'sroce1', 1, IP1, None, 'UD'),
        ]

    def make_pair(self, name, da, db, qp_type):
        lq = self.lq
        a, b = lq.RC(da, qp_type=qp_type), lq.RC(db, qp_type=qp_type)
        a.connect(b)
        b.connect(a)
        for _ in range(8):
            b.post_recv(32768, 4096)
            a.post_recv(32768, 4096)
        ip = {'sroce0': IP0, 'sroce1': IP1}
        kind = 'UC' if qp_type == lq.e.IBV_QPT_UC else 'RC'
        self.pairs[name] = (a, b, [
            Target(name + '/a', da.name, a.qpn, ip[da.name], ip[db.name],
                   kind, a),
            Target(name + '/b', db.name, b.qpn, ip[db.name], ip[da.name],
                   kind, b)])

    def make_stall(self):
        """A requester whose SEND stays outstanding: its responder stays
        in INIT and never answers, so it resends on its ACK timer and
        forged ACKs, NAKs and responses find a WQE to act on."""
        lq = self.lq
        a, b = lq.RC(self.d0), lq.RC(self.d1)
        a.init()
        a.rtr(b)
        a.rts(timeout=18, retry_cnt=7)
        b.init()
        a.post_send(lq.e.IBV_WR_SEND, 0, 2048)
        self.stall = (a, b, Target('stall/a', 'sroce0', a.qpn, IP0, IP1,
                                   'RC', a))

    def refresh_stall(self, res):
        a, b, t = self.stall
        q = res.get((t.dev, t.qpn), {})
        t.sq_psn, t.rq_psn = q.get('sq-psn', 0), q.get('rq-psn', 0)
        t.state = q.get('state', '?')
        if t.state != 'RTS':
            a.close()
            b.close()
            self.replaced += 1
            self.make_stall()
        elif a.poll(4, 0):             # done somehow: another one
            a.post_send(self.lq.e.IBV_WR_SEND, 0, 2048)

    def all(self):
        return self.connected() + self.fixed

    def connected(self):
        return [t for p in self.pairs.values() for t in p[2]] + \
            [self.stall[2]]

    def refresh(self, res):
        """PSNs and states from rdma res (res: {(dev, qpn): entry});
        replace pairs in ERR; keep the requesters busy with a WRITE and
        a READ, receives posted."""
        lq = self.lq
        for name, (a, b, ts) in list(self.pairs.items()):
            for t in ts:
                q = res.get((t.dev, t.qpn), {})
                t.sq_psn, t.rq_psn = q.get('sq-psn', 0), q.get('rq-psn', 0)
                t.state = q.get('state', '?')
            if any(t.state != 'RTS' for t in ts):
                a.close()
                b.close()
                self.replaced += 1
                self.make_pair(name, a.dev, b.dev, a.qp_type)
                continue
            for x, y in ((a, b), (b, a)):
                x.poll(64, 0)
                try:
                    x.post_recv(32768, 4096)
                    if x.qp_type == lq.e.IBV_QPT_RC:
                        x.post_send(lq.e.IBV_WR_RDMA_READ, 8192, 2048,
                                    y.mr.buf + 2048, y.mr.rkey)
                    x.post_send(lq.e.IBV_WR_RDMA_WRITE, 0, 3000,
                                y.mr.buf + 16384, y.mr.rkey)
                except Exception:
                    pass                # a full queue: next time
        self.refresh_stall(res)
        self.ud.poll()
        self.ud.post_recvs()


# ----------------------------------------------------------- capture ----

def capture_start():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                      socket.htons(0x0003))
    s.bind(('veth0', 0))
    s.setblocking(False)
    return s


def capture_read(s):
    """The RoCEv2 UDP payloads (with ICRC) captured so far."""
    out = []
    while True:
        try:
            pkt = s.recv(65536)
        except BlockingIOError:
            return out
        if not pkt or pkt[0] >> 4 not in (4, 6):
            continue
        ihl = (pkt[0] & 0xf) * 4 if pkt[0] >> 4 == 4 else 40
        if len(pkt) > ihl + 8 and pkt[ihl + 2:ihl + 4] == b'\x12\xb7':
            out.append(pkt[ihl + 8:])


def warm_up(lq, tg, cap):
    """Real traffic on the RC target pair, captured: SEND, WRITE, READ,
    atomics, and their ACKs and responses."""
    a, b, _ = tg.pairs['rc']
    e = lq.e
    for length in (100, 3000):
        a.post_send(e.IBV_WR_SEND, 0, length)
        a.post_send(e.IBV_WR_RDMA_WRITE, 0, length, b.mr.buf, b.mr.rkey)
        a.post_send(e.IBV_WR_RDMA_READ, 8192, length, b.mr.buf, b.mr.rkey)
    a.post_atomic(e.IBV_WR_ATOMIC_CMP_AND_SWP, 0, b.mr.buf + 64, b.mr.rkey,
                  0, 5)
    a.post_atomic(e.IBV_WR_ATOMIC_FETCH_AND_ADD, 0, b.mr.buf + 72,
                  b.mr.rkey, 3)
    wcs = a.poll(8, 10)
    time.sleep(0.2)
    pkts = capture_read(cap)
    cap.close()
    return pkts, [w.status for w in wcs]


# ------------------------------------------------------------ packets ----

class Fuzz:
    def __init__(self, rnd, tg, captured, foreign):
        self.r = rnd
        self.tg = tg
        self.captured = captured
        self.foreign = foreign           # [(dev, qpn)] of the live traffic
        self.foreign_psn = {}
        self.last_mutation = None

    # ---- values
    def psn_near(self, base):
        r = self.r
        return r.choice((base, base, base, base + 1, base - 1,
                         base + r.randint(2, 200), base - r.randint(2, 200),
                         0, roce.PSN_MASK, 1 << 23,
                         r.getrandbits(24))) & roce.PSN_MASK

    def length(self):
        r = self.r
        return r.choice((0, 1, 2, 3, 4, 5, 63, 64, 255, 1023, 1024, 1025,
                         r.randint(0, 1100), r.randint(0, 64)))

    def data(self, n):
        return bytes([self.r.getrandbits(8)]) * n if self.r.random() < 0.5 \
            else self.r.randbytes(n)

    def u32(self, live):
        r = self.r
        return r.choice((live, live, live ^ 1, live + 0x100, 0, U32,
                         r.getrandbits(32))) & U32

    def va(self, t, size=0):
        r = self.r
        return r.choice((t.va, t.va, t.va + t.mrlen - max(size, 1),
                         t.va + t.mrlen, t.va + t.mrlen - 1, t.va - 1,
                         t.va + r.randint(0, t.mrlen), 0, U64, 1 << 63,
                         U64 - 4095, r.getrandbits(64))) & U64

    def dlen(self, t):
        r = self.r
        return r.choice((0, 1, 4096, t.mrlen, t.mrlen + 1, 1 << 31,
                         (1 << 31) + 1, U32, r.randint(0, 70000),
                         r.randint(0, 4096)))

    def bth_kw(self):
        r = self.r
        if r.random() < 0.8:
            return {'ackreq': r.getrandbits(1)}
        return {'ackreq': r.getrandbits(1), 'se': r.getrandbits(1),
                'mig': r.getrandbits(1), 'tver': r.choice((0, 0, 1, 15)),
                'pkey': r.choice((0xffff, 0x7fff, 0, 0x8001,
                                  r.getrandbits(16))),
                'fecn': r.getrandbits(1), 'becn': r.getrandbits(1),
                'resv6': r.choice((0, 0x3f)), 'resv7': r.choice((0, 0x7f))}

    def src_for(self, t):
        """The peer's address mostly; a wrong one sometimes."""
        r = self.r
        if t.peer and r.random() < 0.8:
            return t.peer
        return r.choice(WRONG_SOURCES + (IP0, IP1))

    def ext(self, h, t):
        """Extension header h for target t, with boundary values."""
        r = self.r
        if h == roce.RETH:
            return roce.reth(self.va(t), self.u32(t.rkey), self.dlen(t))
        if h == roce.AETH:
            return roce.aeth(self.syndrome(), r.getrandbits(24))
        if h == roce.ATOMICETH:
            return roce.atomiceth(self.va(t, 8) + r.choice((0, 0, 1, 4, 7)),
                                  self.u32(t.rkey), r.getrandbits(64),
                                  r.getrandbits(64))
        if h == roce.ATOMICACKETH:
            return roce.atomicacketh(r.getrandbits(64))
        if h == roce.DETH:
            return roce.deth(r.choice((UD_QKEY, roce.GSI_QKEY, 0x80000000,
                                       0, r.getrandbits(32))),
                             r.getrandbits(24))
        if h == roce.IMMDT:
            return roce.immdt(r.getrandbits(32))
        return roce.ieth(self.u32(t.rkey))

    def syndrome(self):
        r = self.r
        return r.choice((roce.ACK, 0x00, 0x1e, roce.RNR_NAK,
                         roce.RNR_NAK | r.getrandbits(5), roce.NAK_PSN_SEQ,
                         roce.NAK_INVALID_REQ, roce.NAK_REMOTE_ACCESS,
                         roce.NAK_REMOTE_OP, roce.NAK_INVALID_RD_REQ,
                         0x65, 0x7f, 0x40, 0x80, 0xff, r.getrandbits(8)))

    def opcodes(self, t):
        return [c for c, (n, _, _) in roce.OPCODE_INFO.items()
                if n.startswith(t.kind + '_')]

    def build(self, code, t, psn=None, hdrs=None, data=None, pad=None):
        info = roce.OPCODE_INFO.get(code, (None, (), True))
        if hdrs is None:
            hdrs = b''.join(self.ext(h, t) for h in info[1])
        if data is None:
            data = self.data(self.length()) if info[2] else b''
        if psn is None:
            psn = self.psn_near(t.rq_psn if code & 0x1f < 0x0d or
                                code & 0x1f >= 0x13 else t.sq_psn - 1)
        if pad is None and self.r.random() < 0.05:
            pad = self.r.getrandbits(2)
        return roce.packet(code, t.qpn, psn, hdrs, data, pad=pad,
                           **self.bth_kw())

    # ---- the classes; each returns [(src, dst, body, icrc)]
    def c_random(self):
        r = self.r
        t = r.choice(self.tg.all())
        n = r.choice((0, 1, 11, 12, 15, 16, r.randint(0, 1200)))
        return [(r.choice(WRONG_SOURCES + (IP0, IP1)), t.own,
                 r.randbytes(n), False)]

    def c_bth(self):
        r = self.r
        t = r.choice(self.tg.all())
        qpn = t.qpn if r.random() < 0.8 else r.getrandbits(24)
        body = roce.bth(r.getrandbits(8), qpn, r.getrandbits(24),
                        **self.bth_kw()) + r.randbytes(r.randint(0, 80))
        return [(self.src_for(t), t.own, body, r.random() < 0.9)]

    def c_valid(self):
        r = self.r
        t = r.choice(self.tg.all())
        code = r.choice(self.opcodes(t))
        return [(self.src_for(t), t.own, self.build(code, t),
                 r.random() < 0.95)]

    def c_reth(self):
        r = self.r
        t = r.choice(self.tg.connected())
        code = roce.OP[t.kind + '_' + r.choice(
            ('RDMA_WRITE_ONLY', 'RDMA_WRITE_FIRST',
             'RDMA_WRITE_ONLY_WITH_IMMEDIATE') +
            (('RDMA_READ_REQUEST',) * 2 if t.kind == 'RC' else ()))]
        return [(self.src_for(t), t.own,
                 self.build(code, t, psn=self.psn_near(t.rq_psn)), True)]

    def c_aeth(self):
        r = self.r
        t = r.choice([x for x in self.tg.connected() if x.kind == 'RC'])
        code = roce.OP['RC_' + r.choice(
            ('ACKNOWLEDGE', 'ACKNOWLEDGE', 'ATOMIC_ACKNOWLEDGE',
             'RDMA_READ_RESPONSE_ONLY', 'RDMA_READ_RESPONSE_FIRST',
             'RDMA_READ_RESPONSE_MIDDLE', 'RDMA_READ_RESPONSE_LAST'))]
        psn = self.psn_near((t.sq_psn - r.randint(1, 3)) & roce.PSN_MASK)
        return [(self.src_for(t), t.own, self.build(code, t, psn=psn),
                 True)]

    def c_atomic(self):
        r = self.r
        t = r.choice([x for x in self.tg.connected() if x.kind == 'RC'])
        code = roce.OP[r.choice(('RC_COMPARE_SWAP', 'RC_FETCH_ADD'))]
        return [(self.src_for(t), t.own,
                 self.build(code, t, psn=self.psn_near(t.rq_psn)), True)]

    def retarget(self, body, t):
        """A captured packet, aimed at t: QPN, PSN, the MR's key and
        address; the ICRC is recomputed when sent."""
        r = self.r
        body = bytearray(body[:-4])           # without its old ICRC
        code = body[0]
        req = code & 0x1f < 0x0d or code & 0x1f >= 0x13
        psn = self.psn_near(t.rq_psn if req else t.sq_psn - 1)
        if t.kind == 'UC' and code < 0x20 and code & 0x1f <= 0x0b:
            code |= 0x20                       # RC -> UC, same operation
            body[0] = code
        body[5:8] = t.qpn.to_bytes(3, 'big')
        body[9:12] = psn.to_bytes(3, 'big')
        off = 12
        for h in roce.OPCODE_INFO.get(code, (None, ()))[1]:
            if h in (roce.RETH, roce.ATOMICETH) and len(body) >= off + 12:
                va = t.va + r.choice((0, 0, 64, 4096, t.mrlen - 8))
                if h == roce.ATOMICETH:
                    va &= ~7
                body[off:off + 8] = va.to_bytes(8, 'big')
                body[off + 8:off + 12] = t.rkey.to_bytes(4, 'big')
            off += roce.HDR_LEN[h]
        return bytes(body)

    def mutate(self, body):
        r = self.r
        body = bytearray(body)
        m = r.choice(('flip', 'flip', 'flip', 'truncate', 'pad', 'opcode',
                      'extend', 'hdrflip'))
        if m in ('flip', 'hdrflip') and body:
            end = min(len(body), 44) if m == 'hdrflip' else len(body)
            for _ in range(r.randint(1, 4)):
                i = r.randrange(end)
                body[i] ^= 1 << r.randrange(8)
        elif m == 'truncate':
            body = body[:r.randint(0, len(body))]
        elif m == 'pad' and len(body) > 1:
            body[1] = (body[1] & 0xcf) | r.getrandbits(2) << 4
            body += b'\0' * r.randint(0, 3)
        elif m == 'opcode' and body:
            body[0] = r.choice(list(roce.OPCODE_INFO) + [r.getrandbits(8)])
        else:
            body += r.randbytes(r.randint(1, 64))
        return m, bytes(body)

    def c_mutate(self):
        r = self.r
        t = r.choice(self.tg.connected())
        m, body = self.mutate(self.retarget(r.choice(self.captured), t))
        self.last_mutation = m
        return [(self.src_for(t), t.own, body, r.random() < 0.85)]

    def c_dup(self):
        r = self.r
        t = r.choice(self.tg.connected())
        body = self.retarget(r.choice(self.captured), t)
        src = self.src_for(t)
        return [(src, t.own, body, True)] * r.randint(2, 4)

    def c_ud(self):
        r = self.r
        t = r.choice([x for x in self.tg.fixed if x.kind == 'UD'])
        code = r.choice((0x64, 0x65))
        body = self.build(code, t, psn=r.getrandbits(24),
                          data=self.data(r.choice((0, 1, 40, 256, 983, 984,
                                                   985, 1024, 1100))))
        if r.random() < 0.3:
            own = IP6_0 if t.dev == 'sroce0' else IP6_1
            return [(IP6_OTHER, own, body, True)]
        return [(r.choice(WRONG_SOURCES + (IP0, IP1)), t.own, body, True)]

    def c_cnp(self):
        r = self.r
        t = r.choice(self.tg.all())
        body = roce.packet(0x81, t.qpn, 0, b'', b'\0' * 16, pad=0,
                           becn=r.getrandbits(1))
        return [(self.src_for(t), t.own, body, True)]

    def c_foreign(self):
        r = self.r
        dev, qpn = r.choice(self.foreign)
        own = IP0 if dev == 'sroce0' else IP1
        psn = self.foreign_psn.get((dev, qpn), (0, 0))
        t = Target('foreign', dev, qpn, own, None, 'RC')
        t.sq_psn, t.rq_psn = psn
        code = roce.OP[r.choice(('RC_SEND_ONLY', 'RC_RDMA_WRITE_ONLY',
                                 'RC_ACKNOWLEDGE', 'RC_RDMA_READ_REQUEST'))]
        hdrs = None
        if code == roce.OP['RC_ACKNOWLEDGE']:
            hdrs = roce.aeth(r.choice((roce.NAK_REMOTE_ACCESS,
                                       roce.NAK_INVALID_REQ,
                                       roce.NAK_PSN_SEQ)), 0)
            psn = (t.sq_psn - 1) & roce.PSN_MASK
        else:
            psn = t.rq_psn
        src = r.choice(WRONG_SOURCES)
        return [(src, own, self.build(code, t, psn=psn, hdrs=hdrs), True)]

    def refresh_foreign(self, res):
        for dev, qpn in self.foreign:
            q = res.get((dev, qpn), {})
            self.foreign_psn[(dev, qpn)] = (q.get('sq-psn', 0),
                                            q.get('rq-psn', 0))


# ------------------------------------------------------------ the run ----

def klog_open():
    fd = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(fd, 0, os.SEEK_END)
    return fd


def klog_read(fd):
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            return lines
        except OSError:                  # overwritten records: go on
            continue
        if not rec:
            return lines
        text = rec.decode(errors='replace')
        lines.append(text.split(';', 1)[-1].rstrip())


def save_finding(a, seed, sent, ring, klines):
    os.makedirs(a.findings, exist_ok=True)
    base = os.path.join(a.findings, 'seed-%d-packet-%d' % (seed, sent))
    with open(base + '.packets', 'w') as f:
        f.write('# seed %d; the last %d packets before the kernel log '
                'complained (n class src dst hex-with-icrc)\n' % (
                    seed, len(ring)))
        for n, cls, src, dst, body in ring:
            f.write('%d %s %s %s %s\n' % (n, cls, src, dst, body.hex()))
    with open(base + '.dmesg', 'w') as f:
        f.write('\n'.join(klines) + '\n')
    log('FINDING saved: %s.packets / .dmesg' % base)


def counter_table(before, after, sent, sent_by_dev):
    import live_qps as lq
    devs = sorted(after)
    d = {dev: lq.delta(before[dev], after[dev]) for dev in devs}
    names = sorted({k for dev in devs for k in after[dev]})
    tot = {k: sum(d[dev].get(k, 0) for dev in devs) for k in names}
    own = tot.get('tx_packets', 0) - tot.get('tx_dropped', 0) - \
        tot.get('tx_queue_full', 0)
    rx = tot.get('rx_packets', 0)
    drops = {k: v for k, v in tot.items() if k.startswith('rx_drop_')}
    log('')
    log('%-26s %10s %10s %10s' % ('counter (delta)', *devs, 'total'))
    for k in names:
        log('%-26s %10d %10d %10d' % (k, *(d[dev].get(k, 0) for dev in devs),
                                      tot[k]))
    log('')
    log('accounting:')
    log('  packets sent by the fuzzer        %10d  (%s)' % (sent, ', '.join(
        '%s %d' % kv for kv in sorted(sent_by_dev.items()))))
    log('  rx_packets, both devices          %10d' % rx)
    log('  - sroce\'s own packets (tx_packets - tx_dropped - tx_queue_full)'
        ' %d' % own)
    log('  = fuzz packets the devices saw    %10d' % (rx - own))
    log('  dropped (sum of rx_drop_*)        %10d  (%s)' % (
        sum(drops.values()), ', '.join('%s %d' % kv for kv in
                                        sorted(drops.items()) if kv[1])))
    log('  processed, not dropped            %10d  (duplicate_request %d, '
        'out_of_sequence %d, seq_nak_rcvd %d, rnr_nak_rcvd %d, ...)' % (
            rx - sum(drops.values()), tot.get('duplicate_request', 0),
            tot.get('out_of_sequence', 0), tot.get('seq_nak_rcvd', 0),
            tot.get('rnr_nak_rcvd', 0)))
    problems = []
    if rx < sent:
        problems.append('rx_packets +%d < %d packets sent' % (rx, sent))
    if rx - own < 0.98 * sent:
        problems.append('only %d of the %d fuzz packets reached a device' %
                        (rx - own, sent))
    if sum(drops.values()) > rx:
        problems.append('more drops than packets received')
    return problems


def fuzz_main(a):
    import live_qps as lq
    seed = a.seed if a.seed is not None else random.randrange(1 << 32)
    log('roce_fuzz: seed %d (rerun with --seed %d), %d packets' % (
        seed, seed, a.packets))
    rnd = random.Random(seed)
    klog = klog_open()

    traffic = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), 'traffic', '--gid0',
         str(a.gid0), '--gid1', str(a.gid1)], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    first = traffic.stdout.readline()
    if not first.startswith('traffic-qps '):
        log('not ok - the live traffic started: %s%s' % (
            first, traffic.stdout.read()))
        return 1
    foreign = [tuple(x) for x in json.loads(first.split(' ', 1)[1])]
    log('# live traffic on %s' % foreign)

    d0, d1 = lq.Dev('sroce0', a.gid0), lq.Dev('sroce1', a.gid1)
    cap = capture_start()
    tg = Targets(lq, d0, d1)
    captured, st = warm_up(lq, tg, cap)
    log('# captured %d packets of real traffic (%s); warm-up completions %s'
        % (len(captured), ', '.join(sorted({roce.opcode_name(p[0])
                                            for p in captured})), st))
    if not captured:
        captured = [roce.packet(4, 1, 0, b'', b'x' * 8) + b'\0' * 4]
    fz = Fuzz(rnd, tg, captured, foreign)

    senders = {}

    def sender(src):
        if src not in senders:
            senders[src] = roce.Sender(src)
        return senders[src]

    names = [c for c, _ in CLASSES]
    weights = [w for _, w in CLASSES]
    fns = {c: getattr(fz, 'c_' + c) for c in names}
    counts = collections.Counter()
    mutations = collections.Counter()
    sent_by_dev = collections.Counter()
    ring = collections.deque(maxlen=2000)
    before = {dev: lq.counters(dev) for dev in ('sroce0', 'sroce1')}
    sent = 0
    bad = []
    saved = False
    gen_errors = 0
    t0 = tlast = time.monotonic()
    nlast = next_refresh = 0
    while sent < a.packets:
        if sent >= next_refresh:
            next_refresh = sent + a.refresh
            res = {(q['ifname'], q['lqpn']): q for q in lq.rdma_res('qp')}
            tg.refresh(res)
            fz.refresh_foreign(res)
            kl = klog_read(klog)
            bad = [x for x in kl if any(p in x for p in KLOG_BAD)]
            if bad:
                save_finding(a, seed, sent, ring, kl)
                saved = True
                break
        cls = rnd.choices(names, weights)[0]
        try:
            pkts = fns[cls]()
        except Exception:                      # a bug here, not in sroce
            gen_errors += 1
            if gen_errors <= 3:
                log('# generator error in class %s:\n# %s' % (
                    cls, traceback.format_exc().replace('\n', '\n# ')))
            continue
        for src, dst, body, icrc in pkts:
            s = sender(src)
            if icrc is True:
                body += s.icrc(dst, body)
            elif icrc is False and cls != 'random' and rnd.random() < 0.5:
                body += rnd.randbytes(4)       # a wrong ICRC
            if s.send(dst, body, icrc=False):
                sent += 1
                counts[cls] += 1
                sent_by_dev[DEV_OF[dst]] += 1
                ring.append((sent, cls, src, dst, body))
        if cls == 'mutate':
            mutations[fz.last_mutation] += 1
        if sent - nlast >= a.progress:
            now = time.monotonic()
            log('# %d/%d packets, %.0f/s (overall %.0f/s), targets '
                'replaced %d' % (sent, a.packets, (sent - nlast) /
                                 (now - tlast), sent / (now - t0),
                                 tg.replaced))
            nlast, tlast = sent, now
    elapsed = time.monotonic() - t0
    time.sleep(2)                              # let the queues drain
    kl = klog_read(klog)
    bad += [x for x in kl if any(p in x for p in KLOG_BAD)]
    if bad and not saved:
        save_finding(a, seed, sent, ring, kl)

    after = {dev: lq.counters(dev) for dev in ('sroce0', 'sroce1')}
    traffic.send_signal(signal.SIGTERM)
    try:
        out, _ = traffic.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        traffic.kill()
        out, _ = traffic.communicate()
    log('# ' + out.strip().replace('\n', '\n# '))

    log('# sent %d packets in %.1f s (%.0f/s), seed %d' % (
        sent, elapsed, sent / elapsed, seed))
    log('# classes: ' + ', '.join('%s %d' % (c, counts[c]) for c in names))
    log('# mutations: ' + ', '.join('%s %d' % kv for kv in
                                    sorted(mutations.items())))
    log('# targets replaced after going to ERR: %d' % tg.replaced)
    problems = counter_table(before, after, sent, sent_by_dev)
    ok = True

    def say(good, desc, *why):
        nonlocal ok
        ok &= bool(good)
        log('%s - %s' % ('ok' if good else 'not ok', desc))
        for w in why:
            log('# ' + str(w))

    say(sent >= a.packets, 'fuzz: %d packets sent (seed %d)' % (sent, seed))
    say(not gen_errors, 'fuzz: every packet could be built',
        '%d generator errors' % gen_errors)
    say(not bad, 'fuzz: the kernel log stayed clean', *bad[:20])
    say(traffic.returncode == 0 and 'errors=0' in out,
        'fuzz: the live traffic completed, every byte right',
        'traffic exit status %s' % traffic.returncode)
    say(not problems, 'fuzz: the counters account for every packet',
        *problems)
    res = lq.rdma_res('qp')
    say(all(q.get('state') == 'RESET' for q in res
            if (q.get('ifname'), q.get('lqpn')) == ('sroce1', tg.reset.qpn)),
        'fuzz: the QP in RESET stayed in RESET')
    d0.close()
    d1.close()
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('mode', nargs='?', default='fuzz',
                    choices=('fuzz', 'traffic'))
    ap.add_argument('--gid0', type=int, required=True)
    ap.add_argument('--gid1', type=int, required=True)
    ap.add_argument('--packets', type=int, default=10000)
    ap.add_argument('--seed', type=int)
    ap.add_argument('--progress', type=int, default=1000,
                    help='a progress line every N packets')
    ap.add_argument('--refresh', type=int, default=500,
                    help='re-read the targets\' state every N packets')
    ap.add_argument('--findings', default='findings',
                    help='where a kernel complaint\'s seed, packets and '
                    'log go')
    a = ap.parse_args()
    if a.mode == 'traffic':
        return traffic_main(a)
    return fuzz_main(a)


if __name__ == '__main__':
    sys.exit(main())

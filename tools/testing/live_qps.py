# SPDX-License-Identifier: GPL-2.0-only
"""Live RC QPs for the forged-packet tests and the fuzzer (pyverbs).

Dev: one open device (context, PD) and what the kernel says about it
(counters, rdma res).  RC: one RC QP with its own CQ and a 64 KiB MR,
connected by hand to another RC (on the same or another device) so a
test can stop half-way, e.g. leave the responder in INIT.  Every data
transfer helper checks the bytes that arrive.

Used by forged.py and roce_fuzz.py; run as root (pyverbs, sysfs).
"""

import json
import subprocess
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
MR_SIZE = 65536
STATE_NAMES = {0: 'RESET', 1: 'INIT', 2: 'RTR', 3: 'RTS', 4: 'SQD',
               5: 'SQE', 6: 'ERR'}


def counters(dev):
    """The device's counters (rdma statistic) as a dict; a counter the
    driver does not have is simply absent.  (Not from sysfs: in a network
    namespace "ip netns exec" mounts a sysfs without hw_counters.)"""
    out = subprocess.run(['rdma', '-j', 'statistic', 'show', 'link',
                          dev + '/1'], capture_output=True, text=True,
                         check=True)
    st = json.loads(out.stdout)[0]
    return {k: v for k, v in st.items()
            if isinstance(v, int) and k not in ('ifindex', 'port')}


def delta(before, after):
    return {k: after[k] - before.get(k, 0) for k in after
            if after[k] != before.get(k, 0)}


def rdma_res(kind, dev=None):
    """`rdma -j res show KIND` as a list of dicts, those of dev only if
    given (iproute2 6.1 cannot filter by device)."""
    out = subprocess.run(['rdma', '-j', 'res', 'show', kind],
                         capture_output=True, text=True, check=True)
    return [r for r in json.loads(out.stdout or '[]')
            if dev is None or r.get('ifname') == dev]


def res_qp(dev, qpn):
    """What rdma res says about QP qpn of dev: rqpn, sq-psn, rq-psn..."""
    for q in rdma_res('qp', dev):
        if q.get('lqpn') == qpn:
            return q
    raise LookupError('%s QP %d not in rdma res show qp' % (dev, qpn))


def res_mr(dev, rkey):
    """What rdma res says about the MR with rkey (rkey, mrlen, and iova
    where iproute2 shows it)."""
    for m in rdma_res('mr', dev):
        k = m.get('rkey')
        if isinstance(k, str):
            k = int(k, 16)
        if k == rkey:
            return m
    raise LookupError('%s MR rkey 0x%x not in rdma res show mr' % (dev, rkey))


def meminfo():
    out = {}
    with open('/proc/meminfo') as f:
        for line in f:
            k, v = line.split(':')
            out[k] = int(v.split()[0])
    return out


class Dev:
    def __init__(self, name, gid_index):
        self.name = name
        self.gid_index = gid_index
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)
        self.gid = self.ctx.query_gid(1, gid_index)

    def counters(self):
        return counters(self.name)

    def close(self):
        """Close the context, and with it everything made on it."""
        self.ctx.close()


class RC:
    """An RC QP with its own CQ and MR on dev."""

    def __init__(self, dev, depth=64, qp_type=e.IBV_QPT_RC):
        self.dev = dev
        self.qp_type = qp_type
        self.cq = CQ(dev.ctx, 2 * depth)
        self.mr = MR(dev.pd, MR_SIZE, ACCESS)
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(dev.pd, QPInitAttr(qp_type=qp_type, scq=self.cq,
                                        rcq=self.cq, cap=cap))
        self.qpn = self.qp.qp_num
        self.peer = None
        self.wr_id = 0

    # ---- state changes, one at a time (explicit masks: RC and UC differ)
    def _rc(self):
        return self.qp_type == e.IBV_QPT_RC

    def init(self):
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_INIT
        attr.pkey_index = 0
        attr.port_num = 1
        attr.qp_access_flags = ACCESS if self._rc() else \
            e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                       e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)

    def rtr(self, peer, rq_psn=0, max_dest_rd_atomic=16, min_rnr_timer=1):
        self.peer = peer
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTR
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = peer.qpn
        attr.rq_psn = rq_psn
        attr.max_dest_rd_atomic = max_dest_rd_atomic
        attr.min_rnr_timer = min_rnr_timer
        gr = GlobalRoute(dgid=peer.dev.gid, sgid_index=self.dev.gid_index,
                         hop_limit=64)
        attr.ah_attr = AHAttr(is_global=1, port_num=1, gr=gr)
        mask = e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | \
            e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
        if self._rc():
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        self.qp.modify(attr, mask)

    def rts(self, sq_psn=0, timeout=14, retry_cnt=7, rnr_retry=7,
            max_rd_atomic=16):
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTS
        attr.sq_psn = sq_psn
        attr.timeout = timeout
        attr.retry_cnt = retry_cnt
        attr.rnr_retry = rnr_retry
        attr.max_rd_atomic = max_rd_atomic
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if self._rc():
            mask |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | \
                e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC
        self.qp.modify(attr, mask)

    def connect(self, peer, **rts_kw):
        """INIT, RTR to peer, RTS (the peer is connected separately)."""
        self.init()
        self.rtr(peer)
        self.rts(**rts_kw)

    def close(self):
        for o in (self.qp, self.mr, self.cq):
            o.close()

    def state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state

    def psns(self):
        attr, _ = self.qp.query(e.IBV_QP_SQ_PSN | e.IBV_QP_RQ_PSN)
        return attr.sq_psn, attr.rq_psn

    # ---- work requests
    def _id(self):
        self.wr_id += 1
        return self.wr_id

    def post_recv(self, off=0, length=4096):
        self.qp.post_recv(RecvWR(wr_id=self._id(), num_sge=1,
                                 sg=[SGE(self.mr.buf + off, length,
                                         self.mr.lkey)]))

    def post_send(self, opcode, off, length, raddr=0, rkey=0):
        wr = SendWR(wr_id=self._id(), opcode=opcode, num_sge=1,
                    sg=[SGE(self.mr.buf + off, length, self.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if opcode in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ):
            wr.set_wr_rdma(rkey, raddr)
        self.qp.post_send(wr)
        return wr.wr_id

    def post_atomic(self, opcode, off, raddr, rkey, compare_add, swap=0):
        wr = SendWR(wr_id=self._id(), opcode=opcode, num_sge=1,
                    sg=[SGE(self.mr.buf + off, 8, self.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_atomic(rkey, raddr, compare_add, swap)
        self.qp.post_send(wr)
        return wr.wr_id

    def poll(self, n=1, timeout=10.0):
        """Up to n completions within timeout seconds."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            nc, wcs = self.cq.poll(num_entries=n - len(got))
            got += wcs[:nc]
            if len(got) >= n or time.monotonic() >= deadline:
                return got
            if not nc:
                time.sleep(0.005)

    def read(self, off, length):
        return bytes(self.mr.read(length, off))

    def write(self, off, data):
        self.mr.write(data, len(data), off)


class UD:
    """A UD QP in RTS with its own CQ and receive buffers."""

    def __init__(self, dev, qkey, depth=16):
        self.dev = dev
        self.cq = CQ(dev.ctx, depth)
        self.mr = MR(dev.pd, depth * 2048, ACCESS)
        self.depth = depth
        cap = QPCap(max_send_wr=4, max_recv_wr=depth, max_send_sge=1,
                    max_recv_sge=1)
        attr = QPAttr()
        attr.qkey = qkey
        self.qp = QP(dev.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq,
                                        rcq=self.cq, cap=cap), attr)
        self.qpn = self.qp.qp_num
        self.posted = 0

    def post_recvs(self):
        """Keep the receive queue full (one 2 KiB buffer a receive)."""
        while self.posted < self.depth:
            self.qp.post_recv(RecvWR(wr_id=self.posted, num_sge=1, sg=[
                SGE(self.mr.buf + 2048 * self.posted, 2048, self.mr.lkey)]))
            self.posted += 1

    def poll(self):
        while True:
            nc, _ = self.cq.poll(num_entries=16)
            if not nc:
                return
            self.posted -= nc


def pattern(seed, length):
    """length bytes that depend on seed (so a stale copy shows)."""
    return bytes((seed * 131 + i * 7 + (i >> 8)) & 0xff
                 for i in range(length))


def check_send(a, b, seed, length=4096, timeout=10.0):
    """a SENDs length bytes to b: both complete, the bytes arrive.
    Returns None or a string saying what went wrong."""
    data = pattern(seed, length)
    a.write(0, data)
    b.write(32768, b'\0' * length)
    b.post_recv(32768, length)
    a.post_send(e.IBV_WR_SEND, 0, length)
    return _wait_pair(a, b, timeout, lambda: b.read(32768, length) == data,
                      'SEND %d B' % length)


def check_write(a, b, seed, length=4096, timeout=10.0):
    """a WRITEs length bytes into b's MR: the completion, the bytes."""
    data = pattern(seed, length)
    a.write(0, data)
    b.write(16384, b'\0' * length)
    a.post_send(e.IBV_WR_RDMA_WRITE, 0, length, b.mr.buf + 16384, b.mr.rkey)
    wcs = a.poll(1, timeout)
    if not wcs:
        return 'WRITE %d B: no completion in %g s' % (length, timeout)
    if wcs[0].status != e.IBV_WC_SUCCESS:
        return 'WRITE %d B: status %d' % (length, wcs[0].status)
    if b.read(16384, length) != data:
        return 'WRITE %d B: wrong data at the target' % length
    return None


def check_read(a, b, seed, length=4096, timeout=10.0):
    """a READs length bytes from b's MR: the completion, the bytes."""
    data = pattern(seed, length)
    b.write(49152, data)
    a.write(8192, b'\0' * length)
    a.post_send(e.IBV_WR_RDMA_READ, 8192, length, b.mr.buf + 49152,
                b.mr.rkey)
    wcs = a.poll(1, timeout)
    if not wcs:
        return 'READ %d B: no completion in %g s' % (length, timeout)
    if wcs[0].status != e.IBV_WC_SUCCESS:
        return 'READ %d B: status %d' % (length, wcs[0].status)
    if a.read(8192, length) != data:
        return 'READ %d B: wrong data' % length
    return None


def _wait_pair(a, b, timeout, data_ok, what):
    wa = a.poll(1, timeout)
    wb = b.poll(1, timeout if a.cq is not b.cq else 0)
    if not wa or not wb:
        return '%s: completions %d/1 sender, %d/1 receiver in %g s' % (
            what, len(wa), len(wb), timeout)
    if wa[0].status or wb[0].status:
        return '%s: status %d sender, %d receiver' % (
            what, wa[0].status, wb[0].status)
    if not data_ok():
        return '%s: wrong data at the receiver' % what
    return None


def traffic_ok(a, b, seed):
    """One SEND, WRITE and READ a -> b, every byte checked."""
    for fn in (check_send, check_write, check_read):
        err = fn(a, b, seed)
        if err:
            return err
    return None

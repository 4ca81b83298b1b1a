#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What sroce shows of itself: rdma res -dd and -r, the counters, a dropped
packet.

Run by tests/23-observe.sh as root in namespace ns0 (topo_local.sh: sroce0
on veth0 10.0.0.1, sroce1 on veth1 10.0.0.2, traffic between them through
lo).  The shell enables the sroce tracepoints before and reads the trace
after; this program makes the traffic the trace must show and writes the
QP numbers to --qpns (A B: a on sroce0, b on sroce1), and on a second line
the PSN b NAKs (a PSN sequence error NAK, check_nak()).

    observe.py --gid0 N --gid1 N --qpns FILE [--srq-details] [--srq-raw]

Prints one line per check, "ok - DESC" or "not ok - DESC", and "# "
diagnostics.  Every transfer's data is checked (live_qps.py).
"""

import argparse
import json
import os
import socket
import struct
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

# The raw entries of `rdma -r res show qp|cq|mr` (and srq where the kernel
# and the tool have it), as include/uapi/rdma/sroce_restrack.h lays them
# out: little-endian, no padding, after the 8-byte header (version, size,
# kind).  Version 1: kind -> (name, [(field, struct format)]).
RAW_VERSION = 1
RAW_HDR = '<HHB3s'
RAW_LAYOUT = {
    1: ('qp', [
        ('qpn', 'I'), ('state', 'B'), ('type', 'B'), ('rnr_wait', 'B'),
        ('nak_sent', 'B'), ('req_psn', 'I'), ('req_psn_high', 'I'),
        ('req_ssn', 'I'), ('req_rd_atomic', 'I'), ('retransmits', 'I'),
        ('cwnd', 'I'), ('cwnd_ssthresh', 'I'), ('sq_head', 'I'),
        ('sq_next', 'I'), ('sq_tail', 'I'), ('sq_size', 'I'),
        ('sq_max_wr', 'I'), ('rq_max_wr', 'I'), ('comp_psn', 'I'),
        ('retry_left', 'B'), ('rnr_left', 'B'), ('seq_retry', 'B'),
        ('resp_in_msg', 'B'), ('resp_psn', 'I'), ('resp_msn', 'I'),
        ('rx_queue', 'I'), ('held_requests', 'I'), ('held_responses', 'I'),
        ('flags', 'Q'), ('dest_qpn', 'I'), ('mtu', 'I'), ('sq_psn', 'I'),
        ('rq_psn', 'I'), ('timeout', 'B'), ('retry_cnt', 'B'),
        ('rnr_retry', 'B'), ('min_rnr_timer', 'B'), ('max_rd_atomic', 'B'),
        ('max_dest_rd_atomic', 'B'), ('reserved', '2s')]),
    2: ('cq', [
        ('cqn', 'I'), ('size', 'I'), ('producer', 'I'), ('consumer', 'I'),
        ('used', 'I'), ('elem_size', 'I'), ('armed', 'B'),
        ('overflowed', 'B'), ('user', 'B'), ('reserved', '1s')]),
    3: ('mr', [
        ('mrn', 'I'), ('key', 'I'), ('type', 'B'), ('valid', 'B'),
        ('reserved', '2s'), ('access', 'I'), ('iova', 'Q'), ('length', 'Q'),
        ('pages', 'I'), ('max_pages', 'I'), ('page_size', 'I'),
        ('windows', 'I'), ('odp_faults', 'Q')]),
    4: ('srq', [
        ('srq_num', 'I'), ('size', 'I'), ('producer', 'I'),
        ('consumer', 'I'), ('posted', 'I'), ('limit', 'I'),
        ('max_sge', 'I'), ('user', 'B'), ('reserved', '3s')]),
}
RAW_MR_TYPES = {0: 'other', 1: 'dma', 2: 'user', 3: 'fast_reg', 4: 'odp',
                5: 'dmabuf'}
QP_RTS, QPT_RC = 3, 2


def raw_decode(data):
    """One raw entry's bytes -> a dict of its fields, with the header's as
    raw_kind (the name), raw_version and raw_size; or a string saying what
    is wrong."""
    b = bytes(data)
    if len(b) < struct.calcsize(RAW_HDR):
        return 'raw entry of %d bytes, shorter than its header' % len(b)
    version, size, kind, rsv = struct.unpack_from(RAW_HDR, b)
    if kind not in RAW_LAYOUT or version != RAW_VERSION:
        return 'raw entry kind %d version %d: unknown' % (kind, version)
    name, fields = RAW_LAYOUT[kind]
    fmt = '<' + ''.join(f for _, f in fields)
    want = struct.calcsize(RAW_HDR) + struct.calcsize(fmt)
    if size != len(b) or size != want:
        return '%s raw entry: %d bytes, header says %d, version %d is %d' % (
            name, len(b), size, version, want)
    r = dict(zip((n for n, _ in fields), struct.unpack_from(fmt, b, 8)))
    if any(rsv) or any(r.pop('reserved')):
        return '%s raw entry: reserved bytes not zero: %s' % (name, b.hex())
    r.update(raw_kind=name, raw_version=version, raw_size=size)
    return r


def res_raw(kind, dev):
    """`rdma -j -r res show KIND`, dev's entries decoded.  Raises
    CalledProcessError where the tool or the kernel has no raw KIND."""
    out = subprocess.run(['rdma', '-j', '-r', 'res', 'show', kind],
                         capture_output=True, text=True, check=True)
    return [raw_decode(r.get('data', [])) for r in json.loads(out.stdout or '[]')
            if r.get('ifname') == dev]


# Debian 12's rdma tool asks for no SRQ raw; 6.7 and later kernels give
# it (RDMA_NLDEV_CMD_RES_SRQ_GET_RAW): asked here over netlink itself.
# <uapi/rdma/rdma_netlink.h> of 6.12 has these numbers.
NETLINK_RDMA, RDMA_NL_NLDEV, CMD_RES_SRQ_GET_RAW = 20, 5, 25
ATTR_DEV_INDEX, ATTR_RES_RAW, ATTR_RES_SRQ, ATTR_RES_SRQ_ENTRY = 1, 85, 88, 89
NLM_F_REQUEST, NLM_F_DUMP, NLMSG_ERROR, NLMSG_DONE = 1, 0x300, 2, 3


def nl_attrs(b, want):
    """The payloads of the netlink attributes of type want in b."""
    off = 0
    while off + 4 <= len(b):
        ln, ty = struct.unpack_from('<HH', b, off)
        if ln < 4:
            break
        if ty & 0x3fff == want:
            yield b[off + 4:off + ln]
        off += (ln + 3) & ~3


def srq_raw_nl(dev):
    """dev's raw SRQ entries, decoded, from a netlink dump."""
    out = subprocess.run(['rdma', '-j', 'dev', 'show', dev],
                         capture_output=True, text=True, check=True)
    index = json.loads(out.stdout)[0]['ifindex']
    attr = struct.pack('<HHI', 8, ATTR_DEV_INDEX, index)
    msg = struct.pack('<IHHII', 16 + len(attr),
                      (RDMA_NL_NLDEV << 10) + CMD_RES_SRQ_GET_RAW,
                      NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + attr
    entries = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA) as s:
        s.send(msg)
        for _ in range(64):             # a dump of a few messages at most
            buf, off = s.recv(1 << 16), 0
            while off + 16 <= len(buf):
                ln, ty = struct.unpack_from('<IH', buf, off)
                if ty == NLMSG_DONE:
                    return entries
                if ty == NLMSG_ERROR:
                    err = struct.unpack_from('<i', buf, off + 16)[0]
                    raise OSError(-err, 'SRQ raw dump: %s' %
                                  os.strerror(-err))
                for table in nl_attrs(buf[off + 16:off + ln], ATTR_RES_SRQ):
                    for e in nl_attrs(table, ATTR_RES_SRQ_ENTRY):
                        entries += [raw_decode(r) for r in
                                    nl_attrs(e, ATTR_RES_RAW)]
                off += max(16, (ln + 3) & ~3)
    raise OSError(0, 'SRQ raw dump: no end')


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


def raw_find(entries, kind, key, value):
    """The decoded entry of kind whose key is value, or None."""
    for r in entries:
        if isinstance(r, dict) and r['raw_kind'] == kind and r[key] == value:
            return r
    return None


def raw_bad(entries):
    """The entries that did not decode, and why."""
    return [r for r in entries if not isinstance(r, dict)]


def same_as_dd(raw, dd, pairs):
    """The (raw field, -dd value) pairs that differ, as text."""
    return ['%s %s != %s' % (f, raw.get(f), v) for f, v in pairs
            if raw.get(f) != v]


def check_raw_qp(a, b, rounds):
    """rdma -r res show qp: every sroce entry decodes, and a's and b's
    say what -dd says and what the traffic must have left."""
    try:
        raw0, raw1 = res_raw('qp', 'sroce0'), res_raw('qp', 'sroce1')
    except subprocess.CalledProcessError as ex:
        say(False, 'rdma -r res show qp', ex.stderr.strip())
        return None
    dd0, dd1 = res_dd('qp', 'sroce0'), res_dd('qp', 'sroce1')
    bad = raw_bad(raw0 + raw1)
    say(raw0 and raw1 and not bad,
        'qp -r: %d entries on sroce0, %d on sroce1, each a version %d '
        'sroce_raw_qp of 128 bytes' % (len(raw0), len(raw1), RAW_VERSION),
        *bad)
    ra, rb = (raw_find(raw0, 'qp', 'qpn', a.qpn),
              raw_find(raw1, 'qp', 'qpn', b.qpn))
    qa, qb = find(dd0, 'lqpn', a.qpn), find(dd1, 'lqpn', b.qpn)
    if not say(ra and rb and qa and qb, 'qp -r lists both QPs',
               show(raw0), show(raw1)):
        return None
    for r, q in ((ra, qa), (rb, qb)):
        diff = same_as_dd(r, q, [
            ('req_psn', drv(q, 'req_psn')), ('comp_psn', drv(q, 'comp_psn')),
            ('resp_psn', drv(q, 'resp_psn')), ('resp_msn', drv(q, 'resp_msn')),
            ('req_rd_atomic', drv(q, 'rd_atomic')),
            ('retransmits', drv(q, 'retransmits')), ('cwnd', drv(q, 'cwnd')),
            ('retry_left', drv(q, 'retry_left')),
            ('rnr_left', drv(q, 'rnr_left')), ('rnr_wait', drv(q, 'rnr_wait')),
            ('nak_sent', drv(q, 'nak_sent')), ('rx_queue', drv(q, 'rx_queue')),
            ('held_requests', drv(q, 'held_requests')),
            ('held_responses', drv(q, 'held_responses')),
            ('flags', drv(q, 'flags')), ('dest_qpn', num(q.get('rqpn'))),
            ('dest_qpn', q.get('rqpn')), ('qpn', q['lqpn'])])
        out = (r['sq_head'] - r['sq_tail']) & 0xffffffff
        unsent = (r['sq_head'] - r['sq_next']) & 0xffffffff
        if out != drv(q, 'wqe_outstanding') or unsent != drv(q, 'wqe_unsent'):
            diff.append('sq_head-sq_tail %d, sq_head-sq_next %d' %
                        (out, unsent))
        say(not diff, 'qp -r = qp -dd for QP %d (an idle QP: the same '
            'snapshot)' % r['qpn'], *diff, show(r), show(q))
    # a sent `rounds` SEND, WRITE, READ: 3 WQEs and 12 PSNs each, all
    # acknowledged; b received them: 3 messages each.
    n = 3 * rounds
    say(ra['state'] == QP_RTS and ra['type'] == QPT_RC and
        ra['req_psn'] == 12 * rounds == ra['comp_psn'] == ra['req_psn_high']
        and ra['sq_head'] == ra['sq_next'] == ra['sq_tail'] == n and
        ra['req_ssn'] == n and ra['sq_size'] >= ra['sq_max_wr'] > 0,
        'qp -r: a in RTS, RC, %d WQEs fetched, sent and completed '
        '(sq_head = sq_next = sq_tail = ssn), req_psn = comp_psn = '
        'psn_high = %d' % (n, 12 * rounds), show(ra))
    say(ra['mtu'] == 1024 and ra['dest_qpn'] == b.qpn and
        ra['timeout'] == 14 and ra['retry_cnt'] == 7 and
        ra['rnr_retry'] == 7 and ra['max_rd_atomic'] == 16 and
        ra['cwnd'] == ra['cwnd_ssthresh'] == 512 and ra['flags'] == 0 and
        ra['seq_retry'] == 0,
        'qp -r: a\'s attributes as modify_qp set them (MTU 1024, peer, '
        'timeout 14, retries 7/7, 16 READs), the whole window', show(ra))
    say(rb['resp_psn'] == 12 * rounds and rb['resp_msn'] == n and
        rb['min_rnr_timer'] == 20 and rb['max_dest_rd_atomic'] == 16 and
        rb['dest_qpn'] == a.qpn and not rb['resp_in_msg'] and
        rb['req_psn'] == 0 and rb['sq_head'] == 0,
        'qp -r: b expects PSN %d, %d messages done (MSN), its RNR timer '
        '20, sent nothing' % (12 * rounds, n), show(rb))
    return ra


def check_cq_mr(a, b, raw_a=None):
    """Completions left unpolled show in the CQ's fill; the MR its pages."""
    b.post_recv(32768, 64)
    a.post_send(lq.e.IBV_WR_SEND, 0, 64)
    time.sleep(0.3)
    cqs = res_dd('cq', 'sroce0')
    c = next((r for r in cqs if drv(r, 'used') == 1), None)
    say(c is not None and drv(c, 'size') >= 128,
        'cq -dd: the sender\'s CQ shows 1 completion used of >= 128',
        '\n'.join(show(r) for r in cqs))
    if raw_a:
        check_raw_cq(a, raw_a)
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
    if raw_a:
        check_raw_mr(a, m)


def check_raw_cq(a, raw_a):
    """One SEND more than check_raw_qp() saw, its completion not polled:
    a's PSN and WQE indices moved by one; a CQ of a's holds it."""
    try:
        raw, qps = res_raw('cq', 'sroce0'), res_raw('qp', 'sroce0')
    except subprocess.CalledProcessError as ex:
        say(False, 'rdma -r res show cq', ex.stderr.strip())
        return
    dd = res_dd('cq', 'sroce0')
    ra = raw_find(qps, 'qp', 'qpn', a.qpn) or {}
    say(ra.get('req_psn') == raw_a['req_psn'] + 1 ==
        ra.get('comp_psn') and
        ra.get('sq_head') == ra.get('sq_tail') == raw_a['sq_head'] + 1 and
        ra.get('req_ssn') == raw_a['req_ssn'] + 1,
        'qp -r after one SEND more: req_psn, comp_psn, sq_head, sq_tail and '
        'ssn each +1', show(raw_a), show(ra))
    bad = raw_bad(raw)
    say(raw and not bad, 'cq -r: %d entries on sroce0, each a version %d '
        'sroce_raw_cq of 36 bytes' % (len(raw), RAW_VERSION), *bad)
    c = next((r for r in raw if isinstance(r, dict) and r['used'] == 1),
             None)
    if not say(c is not None, 'cq -r: a CQ with the 1 completion unpolled',
               show(raw)):
        return
    say(c['size'] >= 128 and c['user'] == 1 and c['elem_size'] > 0 and
        (c['producer'] - c['consumer']) & c['size'] == 1 and
        c['producer'] > 0 and not c['overflowed'],
        'cq -r: a user CQ of >= 128, producer - consumer = used = 1, '
        'not overflowed', show(c))
    diffs = []
    for r in raw:
        d = find(dd, 'cqn', r['cqn']) if isinstance(r, dict) else None
        if d is None:
            diffs.append('cqn %s: not in -dd' % r)
            continue
        diffs += ['cqn %d: %s' % (r['cqn'], x) for x in same_as_dd(r, d, [
            ('used', drv(d, 'used')), ('size', drv(d, 'size')),
            ('armed', drv(d, 'armed')),
            ('overflowed', drv(d, 'overflowed'))])]
    say(not diffs, 'cq -r = cq -dd for each CQ of sroce0 (by cqn)', *diffs)


def check_raw_mr(a, m):
    """a's MR in rdma -r res show mr, as -dd shows it."""
    try:
        raw = res_raw('mr', 'sroce0')
    except subprocess.CalledProcessError as ex:
        say(False, 'rdma -r res show mr', ex.stderr.strip())
        return
    bad = raw_bad(raw)
    say(raw and not bad, 'mr -r: %d entries on sroce0, each a version %d '
        'sroce_raw_mr of 64 bytes' % (len(raw), RAW_VERSION), *bad)
    r = raw_find(raw, 'mr', 'key', a.mr.rkey)
    if not say(r is not None, 'mr -r lists a\'s MR (key 0x%x)' % a.mr.rkey,
               show(raw)):
        return
    diff = same_as_dd(r, m, [
        ('mrn', m.get('mrn')), ('length', m.get('mrlen')),
        ('access', drv(m, 'access')), ('iova', drv(m, 'iova')),
        ('pages', drv(m, 'pages')), ('max_pages', drv(m, 'max_pages')),
        ('page_size', drv(m, 'page_size')), ('windows', drv(m, 'windows')),
        ('odp_faults', drv(m, 'odp_faults'))])
    if RAW_MR_TYPES.get(r['type']) != m.get('drv_type'):
        diff.append('type %s != %s' % (r['type'], m.get('drv_type')))
    say(not diff and r['valid'] == 1 and r['length'] == 65536 and
        r['page_size'] == 4096 and r['iova'] != 0,
        'mr -r = mr -dd: a valid 64 KiB user MR, its iova and pages',
        *diff, show(r), show(m))


def check_srq_raw(dev, s):
    """The SRQ's raw entry, as -dd shows it (6.7 and later)."""
    try:
        raw = srq_raw_nl(dev.name)
    except OSError as ex:
        say(False, 'srq raw: a netlink dump', str(ex))
        return
    r = raw_find(raw, 'srq', 'srq_num', drv(s, 'srq_num'))
    say(r is not None and not raw_bad(raw) and r['posted'] == 3 and
        (r['producer'] - r['consumer']) & r['size'] == 3 and
        r['size'] == drv(s, 'size') and r['limit'] == drv(s, 'limit') and
        r['max_sge'] == 1 and r['user'] == 1,
        'srq raw (RDMA_NLDEV_CMD_RES_SRQ_GET_RAW): a version %d '
        'sroce_raw_srq of 40 bytes, 3 posted, = srq -dd' % RAW_VERSION,
        show(raw), show(s))


def check_srq(dev, details, raw=False):
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
        if raw:
            check_srq_raw(dev, s)
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
    ap.add_argument('--srq-raw', action='store_true')
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
    raw_a = check_raw_qp(a, b, rounds)
    for kind in ('qp', 'cq', 'mr'):
        diag(text(kind))
    diag(subprocess.run(['rdma', '-r', 'res', 'show', 'qp'],
                        capture_output=True, text=True).stdout)
    check_cq_mr(a, b, raw_a)
    check_srq(dev0, args.srq_details, args.srq_raw)
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

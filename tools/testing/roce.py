#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Build RoCEv2 packets and send them from an ordinary UDP socket.

Standard library only; the ICRC comes from icrc_vectors.py (the IBTA
definition, cross-checked there against an rxe-style implementation).

What a packet is here: the UDP payload, i.e. BTH, extension headers,
payload, pad and the 4-byte ICRC.  The kernel builds the IP and UDP
headers; the ICRC covers them too (with the variant fields masked), so
icrc() rebuilds the headers the kernel will send:

  IPv4: an unconnected socket with IP_MTU_DISCOVER = IP_PMTUDISC_DO sends
        with DF set and IP ID 0 (Linux only numbers DF packets of connected
        sockets); TOS, TTL and the header checksum are masked.
  IPv6: traffic class, flow label and hop limit are masked; nothing else
        varies.
  UDP:  the checksum is masked; the source port is the socket's.

Library use:

    import roce
    s = roce.Sender('10.0.0.3')                  # bound to a local address
    body = roce.packet(roce.OP['RC_ACKNOWLEDGE'], dqpn=0x11, psn=5,
                       hdrs=roce.aeth(roce.NAK_REMOTE_ACCESS, 0))
    s.send('10.0.0.1', body)                     # ICRC appended
    s.send('10.0.0.1', body, icrc=b'\\0' * 4)     # a wrong one

Command line:

    roce.py selftest
    roce.py send --src A --dst B --op RC_ACKNOWLEDGE --qpn N --psn P \\
                 [--aeth SYN:MSN] [--reth VA:RKEY:LEN] [--deth QKEY:SQPN]
                 [--payload-hex HEX | --payload-len N] [--count N]
                 [--psn-step S] [--bad-icrc] [--ackreq]
    roce.py send --src A --dst B --hex BODY   (BODY without the ICRC)
"""

import argparse
import errno
import ipaddress
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import icrc_vectors  # noqa: E402  (the ICRC and IP/UDP header builders)

ROCE_PORT = icrc_vectors.ROCE_PORT
PSN_MASK = 0xffffff
QPN_MASK = 0xffffff
GSI_QKEY = 0x80010000

# Linux values (socket module lacks some of them on older Pythons).
IP_MTU_DISCOVER = getattr(socket, 'IP_MTU_DISCOVER', 10)
IP_PMTUDISC_DO = getattr(socket, 'IP_PMTUDISC_DO', 2)
IPV6_MTU_DISCOVER = getattr(socket, 'IPV6_MTU_DISCOVER', 23)
IPV6_PMTUDISC_DO = getattr(socket, 'IPV6_PMTUDISC_DO', 2)

# ------------------------------------------------------------ opcodes ----

TRANSPORT = {'RC': 0x00, 'UC': 0x20, 'RD': 0x40, 'UD': 0x60, 'CNP': 0x80}

# Extension header names, in the order they follow the BTH.
RETH, AETH, ATOMICETH, ATOMICACKETH, DETH, IMMDT, IETH, FETH = (
    'RETH', 'AETH', 'AtomicETH', 'AtomicAckETH', 'DETH', 'ImmDt', 'IETH',
    'FETH')
HDR_LEN = {RETH: 16, AETH: 4, ATOMICETH: 28, ATOMICACKETH: 8, DETH: 8,
           IMMDT: 4, IETH: 4, FETH: 4}
HDR_ORDER = (DETH, FETH, RETH, ATOMICETH, AETH, ATOMICACKETH, IMMDT, IETH)

# operation -> (extension headers, carries payload)
_OPS = {
    0x00: ('SEND_FIRST', (), True),
    0x01: ('SEND_MIDDLE', (), True),
    0x02: ('SEND_LAST', (), True),
    0x03: ('SEND_LAST_WITH_IMMEDIATE', (IMMDT,), True),
    0x04: ('SEND_ONLY', (), True),
    0x05: ('SEND_ONLY_WITH_IMMEDIATE', (IMMDT,), True),
    0x06: ('RDMA_WRITE_FIRST', (RETH,), True),
    0x07: ('RDMA_WRITE_MIDDLE', (), True),
    0x08: ('RDMA_WRITE_LAST', (), True),
    0x09: ('RDMA_WRITE_LAST_WITH_IMMEDIATE', (IMMDT,), True),
    0x0a: ('RDMA_WRITE_ONLY', (RETH,), True),
    0x0b: ('RDMA_WRITE_ONLY_WITH_IMMEDIATE', (RETH, IMMDT), True),
    0x0c: ('RDMA_READ_REQUEST', (RETH,), False),
    0x0d: ('RDMA_READ_RESPONSE_FIRST', (AETH,), True),
    0x0e: ('RDMA_READ_RESPONSE_MIDDLE', (), True),
    0x0f: ('RDMA_READ_RESPONSE_LAST', (AETH,), True),
    0x10: ('RDMA_READ_RESPONSE_ONLY', (AETH,), True),
    0x11: ('ACKNOWLEDGE', (AETH,), False),
    0x12: ('ATOMIC_ACKNOWLEDGE', (AETH, ATOMICACKETH), False),
    0x13: ('COMPARE_SWAP', (ATOMICETH,), False),
    0x14: ('FETCH_ADD', (ATOMICETH,), False),
    0x16: ('SEND_LAST_WITH_INVALIDATE', (IETH,), True),
    0x17: ('SEND_ONLY_WITH_INVALIDATE', (IETH,), True),
    0x1c: ('FLUSH', (FETH, RETH), False),            # IBA A19
    0x1d: ('ATOMIC_WRITE', (RETH,), True),           # IBA A19, 8 bytes
}
# Which operations each transport has (IBTA table 38; RD is left out).
_TRANSPORT_OPS = {
    'RC': list(_OPS),
    'UC': [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
           0x0a, 0x0b],
    'UD': [0x04, 0x05],
}

# OP['RC_SEND_ONLY'] == 0x04, OP['UD_SEND_ONLY'] == 0x64, OP['CNP'] == 0x81
OP = {}
# opcode -> (name, extension headers in wire order, carries payload)
OPCODE_INFO = {}
for _tr, _ops in _TRANSPORT_OPS.items():
    for _op in _ops:
        _name, _hdrs, _data = _OPS[_op]
        if _tr == 'UD':
            _hdrs = (DETH,) + _hdrs
        _code = TRANSPORT[_tr] | _op
        OP[_tr + '_' + _name] = _code
        OPCODE_INFO[_code] = (_tr + '_' + _name,
                              tuple(h for h in HDR_ORDER if h in _hdrs), _data)
OP['CNP'] = 0x81
OPCODE_INFO[0x81] = ('CNP', (), False)


def opcode_name(code):
    return OPCODE_INFO.get(code, ('0x%02x' % code,))[0]


def header_len(code):
    """BTH + extension headers of a known opcode (None if unknown)."""
    if code not in OPCODE_INFO:
        return None
    return 12 + sum(HDR_LEN[h] for h in OPCODE_INFO[code][1])


# AETH syndromes (IBTA 9.7.5.2.3): type in bits 6-5, value in bits 4-0.
ACK = 0x1f                    # ACK, credit count "invalid" (no credits)
RNR_NAK = 0x20                # | timer code
NAK_PSN_SEQ = 0x60
NAK_INVALID_REQ = 0x61
NAK_REMOTE_ACCESS = 0x62
NAK_REMOTE_OP = 0x63
NAK_INVALID_RD_REQ = 0x64

# --------------------------------------------------- header builders ----


def bth(opcode, dqpn, psn, se=0, mig=0, pad=0, tver=0, pkey=0xffff,
        fecn=0, becn=0, resv6=0, ackreq=0, resv7=0):
    """The 12-byte Base Transport Header; every field settable."""
    b1 = (se & 1) << 7 | (mig & 1) << 6 | (pad & 3) << 4 | (tver & 0xf)
    w2 = (fecn & 1) << 31 | (becn & 1) << 30 | (resv6 & 0x3f) << 24 | \
        (dqpn & QPN_MASK)
    w3 = (ackreq & 1) << 31 | (resv7 & 0x7f) << 24 | (psn & PSN_MASK)
    return struct.pack('!BBHII', opcode & 0xff, b1, pkey & 0xffff, w2, w3)


def reth(va, rkey, dlen):
    return struct.pack('!QII', va & (2**64 - 1), rkey & 0xffffffff,
                       dlen & 0xffffffff)


def feth(ptype, level=0):
    """FLUSH Extended Transport Header: placement type in bits 3-0
    (1 global visibility, 2 persistence), selectivity level in bits 5-4
    (0 range, 1 memory region)."""
    return struct.pack('!I', (level & 3) << 4 | (ptype & 0xf))


def aeth(syndrome, msn=0):
    return struct.pack('!I', (syndrome & 0xff) << 24 | (msn & 0xffffff))


def atomiceth(va, rkey, swap_add, compare=0):
    return struct.pack('!QIQQ', va & (2**64 - 1), rkey & 0xffffffff,
                       swap_add & (2**64 - 1), compare & (2**64 - 1))


def atomicacketh(orig):
    return struct.pack('!Q', orig & (2**64 - 1))


def deth(qkey, sqpn):
    return struct.pack('!II', qkey & 0xffffffff, sqpn & QPN_MASK)


def immdt(imm):
    return struct.pack('!I', imm & 0xffffffff)


def ieth(rkey):
    return struct.pack('!I', rkey & 0xffffffff)


def packet(opcode, dqpn, psn, hdrs=b'', data=b'', pad=None, **bth_kw):
    """BTH + hdrs (extension headers, already built) + data + pad bytes.

    pad=None pads data to 4 bytes and sets PadCnt to match; an explicit
    pad sets PadCnt and appends that many zero bytes, right or not.
    The ICRC is not included: Sender.send() appends it.
    """
    if pad is None:
        pad = -len(data) & 3
    return bth(opcode, dqpn, psn, pad=pad, **bth_kw) + hdrs + data + \
        b'\0' * (pad & 3)


def parse(body):
    """Decode a UDP payload (with ICRC) into a dict; raises ValueError."""
    if len(body) < 16:
        raise ValueError('short')
    op, b1, pkey, w2, w3 = struct.unpack('!BBHII', body[:12])
    d = {'opcode': op, 'name': opcode_name(op), 'se': b1 >> 7,
         'mig': b1 >> 6 & 1, 'pad': b1 >> 4 & 3, 'tver': b1 & 0xf,
         'pkey': pkey, 'fecn': w2 >> 31, 'becn': w2 >> 30 & 1,
         'dqpn': w2 & QPN_MASK, 'ackreq': w3 >> 31, 'psn': w3 & PSN_MASK,
         'hdrs': {}}
    off = 12
    for h in OPCODE_INFO.get(op, (None, ()))[1]:
        d['hdrs'][h] = body[off:off + HDR_LEN[h]]
        off += HDR_LEN[h]
    if off > len(body) - 4:
        raise ValueError('headers past the end')
    d['data'] = body[off:len(body) - 4 - d['pad']]
    d['icrc'] = body[-4:]
    return d


# ---------------------------------------------------------------- ICRC ----


def _addr(a):
    return ipaddress.ip_address(a)


def icrc(src, dst, sport, body, dport=ROCE_PORT):
    """The ICRC of UDP payload body (without ICRC) sent src:sport -> dst.

    Returns the 4 trailer bytes in wire order, computed over the IP and
    UDP headers the kernel will build (see the module's docstring).
    """
    s, d = _addr(src), _addr(dst)
    if len(body) < 12:
        return b'\0' * 4       # no BTH to cover: no receiver checks it
    l4 = struct.pack('!HHHH', sport, dport, 8 + len(body) + 4, 0) + body + \
        b'\0' * 4
    if s.version == 4:
        pkt = icrc_vectors.ipv4(s.packed, d.packed, l4, ident=0, df=True)
    else:
        pkt = icrc_vectors.ipv6(s.packed, d.packed, l4)
    return icrc_vectors.icrc_zlib(pkt[:-4])


# -------------------------------------------------------------- sending ----


class Sender:
    """An ordinary UDP socket bound to a local source address (no
    privileges needed); send() appends the ICRC to what it sends."""

    def __init__(self, src, sport=0):
        self.src = str(_addr(src))
        self.v6 = _addr(src).version == 6
        self.sock = socket.socket(socket.AF_INET6 if self.v6 else
                                  socket.AF_INET, socket.SOCK_DGRAM)
        if self.v6:
            self.sock.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER,
                                 IPV6_PMTUDISC_DO)
        else:
            # DF and IP ID 0: the IP header is predictable.
            self.sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER,
                                 IP_PMTUDISC_DO)
        self.sock.bind((self.src, sport))
        self.sport = self.sock.getsockname()[1]
        self.sent = 0
        self.nobufs = 0

    def icrc(self, dst, body):
        return icrc(self.src, dst, self.sport, body)

    def send(self, dst, body, icrc=True, dport=ROCE_PORT):
        """Send body + ICRC to dst:dport.  icrc: True (the right one),
        False (none: body is sent as is) or 4 bytes to use instead.
        Returns True if the kernel took the datagram; a full socket
        buffer (ENOBUFS/EAGAIN) is retried after a short pause."""
        if icrc is True:
            body = body + self.icrc(dst, body)
        elif icrc:
            body = body + icrc
        for _ in range(100):
            try:
                self.sock.sendto(body, (str(dst), dport))
                self.sent += 1
                return True
            except OSError as ex:
                if ex.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                self.nobufs += 1
                time.sleep(0.001)
        return False

    def close(self):
        self.sock.close()


# ------------------------------------------------------- command line ----


def selftest():
    """icrc() against icrc_vectors.py: every vector, its IPv4 header made
    what our sockets send (IP ID 0, DF), checked with the rxe-style CRC."""
    ok = True
    for name, pkt, _ in icrc_vectors.vectors():
        pkt = bytearray(pkt)
        if pkt[0] >> 4 == 4:
            ihl = (pkt[0] & 0xf) * 4
            pkt[4:8] = b'\x00\x00\x40\x00'       # IP ID 0, DF
            src, dst = pkt[12:16], pkt[16:20]
        else:
            ihl = 40
            src, dst = pkt[8:24], pkt[24:40]
        sport, dport = struct.unpack('!HH', pkt[ihl:ihl + 4])
        got = icrc(ipaddress.ip_address(bytes(src)),
                   ipaddress.ip_address(bytes(dst)), sport,
                   bytes(pkt[ihl + 8:]), dport)
        want = icrc_vectors.icrc_rxe(bytes(pkt))
        ok &= got == want
        print('%-24s %s %s' % (name, got.hex(), 'ok' if got == want else
                                'FAIL (want %s)' % want.hex()))
    return 0 if ok else 1


def _pairs(text, n):
    vals = [int(x, 0) for x in text.split(':')]
    if len(vals) != n:
        raise argparse.ArgumentTypeError('want %d values' % n)
    return vals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('selftest')
    s = sub.add_parser('send')
    s.add_argument('--src', required=True)
    s.add_argument('--dst', required=True)
    s.add_argument('--sport', type=int, default=0)
    s.add_argument('--hex', help='the UDP payload without the ICRC')
    s.add_argument('--op', help='opcode name (see OP) or number')
    s.add_argument('--qpn', type=lambda x: int(x, 0), default=1)
    s.add_argument('--psn', type=lambda x: int(x, 0), default=0)
    s.add_argument('--psn-step', type=int, default=0,
                   help='add this to the PSN for each packet of --count')
    s.add_argument('--ackreq', action='store_true')
    s.add_argument('--aeth', help='SYNDROME:MSN')
    s.add_argument('--reth', help='VA:RKEY:LEN')
    s.add_argument('--atomic', help='VA:RKEY:SWAP_ADD:COMPARE')
    s.add_argument('--deth', help='QKEY:SRC_QPN')
    s.add_argument('--feth', help='PLACEMENT_TYPE:SELECTIVITY_LEVEL')
    s.add_argument('--imm', type=lambda x: int(x, 0))
    s.add_argument('--ieth', type=lambda x: int(x, 0))
    s.add_argument('--payload-hex', default='')
    s.add_argument('--payload-len', type=int, default=0)
    s.add_argument('--payload-byte', type=lambda x: int(x, 0), default=0xa5)
    s.add_argument('--count', type=int, default=1)
    s.add_argument('--interval', type=float, default=0,
                   help='seconds between packets')
    s.add_argument('--bad-icrc', action='store_true',
                   help='send a wrong ICRC (the right one, inverted)')
    a = ap.parse_args(argv)

    if a.cmd == 'selftest':
        return selftest()

    snd = Sender(a.src, a.sport)
    for i in range(a.count):
        if a.hex is not None:
            body = bytes.fromhex(a.hex)
        else:
            code = OP[a.op] if a.op in OP else int(a.op, 0)
            hdrs = b''
            if a.deth:
                hdrs += deth(*_pairs(a.deth, 2))
            if a.feth:
                hdrs += feth(*_pairs(a.feth, 2))
            if a.reth:
                hdrs += reth(*_pairs(a.reth, 3))
            if a.atomic:
                hdrs += atomiceth(*_pairs(a.atomic, 4))
            if a.aeth:
                hdrs += aeth(*_pairs(a.aeth, 2))
            if a.imm is not None:
                hdrs += immdt(a.imm)
            if a.ieth is not None:
                hdrs += ieth(a.ieth)
            data = bytes.fromhex(a.payload_hex) or \
                bytes([a.payload_byte]) * a.payload_len
            body = packet(code, a.qpn, a.psn + i * a.psn_step, hdrs, data,
                          ackreq=int(a.ackreq))
        crc = snd.icrc(a.dst, body)
        if a.bad_icrc:
            crc = bytes(x ^ 0xff for x in crc)
        if not snd.send(a.dst, body, icrc=crc):
            print('send failed: socket buffer full', file=sys.stderr)
            return 1
        if a.interval:
            time.sleep(a.interval)
    print('sent %d from %s:%d to %s' % (snd.sent, snd.src, snd.sport, a.dst))
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Known-answer vectors for the sroce RoCEv2 ICRC and header codec.

Two independent ICRC implementations are cross-checked on every vector:

  icrc_zlib() - zlib.crc32 over (8 x 0xff pseudo-LRH + masked packet),
                the IBTA definition, as scapy's contrib/roce.py does it;
  icrc_rxe()  - a bitwise reflected CRC-32 starting from the register
                0xdebb20e3 (= crc32_le(~0, 8 x 0xff)), complemented,
                stored as a CPU-order u32 on a little-endian host: what
                rdma_rxe's rxe_icrc_generate() does on x86.

Both give the 4 trailer bytes in wire order.  Two vectors come from
elsewhere: a CNP captured from a ConnectX-4 Lx (scapy test/contrib/roce.uts)
and scapy's UC SEND_ONLY test packet; the rest are built here.

Run: python3 tools/testing/icrc_vectors.py [--c]   (--c: C arrays for KUnit)
"""

import struct
import sys
import zlib

ROCE_PORT = 4791


# ---------------------------------------------------------------- ICRC

def mask(pkt):
    """Copy of pkt (IP header .. end of pad) with the variant fields set."""
    b = bytearray(pkt)
    ver = b[0] >> 4
    if ver == 4:
        ihl = (b[0] & 0xf) * 4
        b[1] = 0xff                      # TOS
        b[8] = 0xff                      # TTL
        b[10:12] = b'\xff\xff'           # header checksum
    elif ver == 6:
        ihl = 40
        b[0] |= 0x0f                     # traffic class (high nibble)
        b[1:4] = b'\xff\xff\xff'         # traffic class, flow label
        b[7] = 0xff                      # hop limit
    else:
        raise ValueError('not IP')
    b[ihl + 6:ihl + 8] = b'\xff\xff'     # UDP checksum
    b[ihl + 8 + 4] = 0xff                # BTH FECN/BECN/resv6a
    return bytes(b)


def icrc_zlib(pkt):
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + mask(pkt)))


def crc32_le(crc, data):
    """Linux crc32_le(): reflected CRC-32, no pre/post inversion."""
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xedb88320 if crc & 1 else 0)
    return crc


def icrc_rxe(pkt):
    assert crc32_le(0xffffffff, b'\xff' * 8) == 0xdebb20e3
    crc = crc32_le(0xdebb20e3, mask(pkt))
    return struct.pack('<I', ~crc & 0xffffffff)   # *icrcp = ~icrc on x86


# ------------------------------------------------------- packet building

def ip_csum(hdr):
    s = sum(struct.unpack('!%dH' % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, l4, tos=0, ttl=64, ident=0, df=True):
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + len(l4), ident,
                      0x4000 if df else 0, ttl, 17, 0, bytes(src), bytes(dst))
    return hdr[:10] + struct.pack('!H', ip_csum(hdr)) + hdr[12:] + l4


def ipv6(src, dst, l4, tclass=0, flow=0, hlim=64):
    w0 = 6 << 28 | tclass << 20 | flow
    return struct.pack('!IHBB16s16s', w0, len(l4), 17, hlim, bytes(src),
                       bytes(dst)) + l4


def udp(sport, payload, csum=0):
    return struct.pack('!HHHH', sport, ROCE_PORT, 8 + len(payload), csum) + \
        payload


def bth(opcode, dqpn, psn, pad=0, se=0, mig=0, pkey=0xffff, ackreq=0,
        fecn=0, becn=0):
    return struct.pack('!BBHII', opcode, se << 7 | mig << 6 | pad << 4,
                       pkey, fecn << 31 | becn << 30 | dqpn,
                       ackreq << 31 | psn)


def reth(va, rkey, dlen):
    return struct.pack('!QII', va, rkey, dlen)


def atmeth(va, rkey, swap_add, compare):
    return struct.pack('!QIQQ', va, rkey, swap_add, compare)


def aeth(syndrome, msn):
    return struct.pack('!I', syndrome << 24 | msn)


def deth(qkey, sqpn):
    return struct.pack('!II', qkey, sqpn)


def roce(ip_fn, transport, payload=b'', **ipkw):
    """transport: BTH + ext headers; pads payload; returns pkt w/o ICRC."""
    pad = -len(payload) & 3
    assert transport[1] >> 4 & 3 == pad, 'PadCnt mismatch'
    l4 = transport + payload + b'\0' * pad + b'\0' * 4   # ICRC placeholder
    whole = ip_fn(l4=udp(0xc000 + 0x123, l4), **ipkw)
    return whole[:-4]


A4 = [192, 168, 0, 1]
B4 = [192, 168, 0, 2]
A6 = bytes.fromhex('fe800000000000000211 22fffe334455'.replace(' ', ''))
B6 = bytes.fromhex('fe8000000000000002aa bbfffecc ddee'.replace(' ', ''))


def vectors():
    v = []

    # 1. CNP from a ConnectX-4 Lx: hardware-computed ICRC (scapy roce.uts)
    cap = bytes.fromhex(
        'e41d2dab2bc27cfe90643b32080045c2003c718c400040119161'
        '0a0011010a0012010000' '12b700280000' '8100ffff40000118'
        '00000000' + '00' * 16 + '82fd002a')
    v.append(('cx4_cnp_ipv4', cap[14:-4], cap[-4:]))

    # 2. scapy's UC SEND_ONLY test packet (scapy-computed ICRC 0x78f353f3)
    pl = b'F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00'
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 1, 64, 1144, 0x4000, 64, 17,
                     0xb4d5, bytes([192, 168, 0, 7]), bytes([192, 168, 0, 7]))
    u = struct.pack('!HHHH', 49152, ROCE_PORT, 44, 0xaca2)
    b = bth(0x24, 211, 13571856, pad=2, mig=1)
    v.append(('scapy_uc_send_only', ip + u + b + pl, bytes.fromhex('78f353f3')))

    # 3. IPv4 RC SEND_ONLY, 5-byte payload (pad 3), nonzero TOS/TTL/csum
    v.append(('ipv4_rc_send_only_pad3', roce(
        ipv4, bth(0x04, 0x000011, 0x000001, pad=3, se=1, ackreq=1),
        b'hello', src=A4, dst=B4, tos=0x02, ttl=64, ident=0x1234), None))

    # 4. IPv4 RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 16 bytes, FECN set
    v.append(('ipv4_rc_write_imm', roce(
        ipv4, bth(0x0b, 0x000012, 0xfffffe, ackreq=1, fecn=1) +
        reth(0x00007f0012345678, 0x00001234, 16) + b'\xde\xad\xbe\xef',
        bytes(range(16)), src=A4, dst=B4, ident=7), None))

    # 5. IPv4 RC ACKNOWLEDGE, syndrome 0x1f (ACK, no credits), MSN 5
    v.append(('ipv4_rc_ack', roce(
        ipv4, bth(0x11, 0x000013, 0x000100) + aeth(0x1f, 5),
        src=B4, dst=A4, ident=8), None))

    # 6. IPv4 RC COMPARE_SWAP
    v.append(('ipv4_rc_cmp_swap', roce(
        ipv4, bth(0x13, 0x000014, 0x000200, ackreq=1) +
        atmeth(0x1000, 0xabcd, 0x1111111122222222, 0x3333333344444444),
        src=A4, dst=B4, ident=9), None))

    # 7. IPv6 UD SEND_ONLY (DETH, GSI Q_Key), TC/flow label/hop limit set
    v.append(('ipv6_ud_send_only', roce(
        ipv6, bth(0x64, 0x000001, 0x000042, pkey=0xffff) +
        deth(0x80010000, 0x000001), bytes(range(256)),
        src=A6, dst=B6, tclass=0x68, flow=0xabcde, hlim=1), None))

    # 8. IPv6 RC READ_RESPONSE_LAST, 1 byte (pad 3), BECN set
    v.append(('ipv6_rc_read_resp_last', roce(
        ipv6, bth(0x0f, 0x000015, 0x123456, pad=3, becn=1) + aeth(0x00, 9),
        b'\x5a', src=B6, dst=A6), None))
    return v


def main():
    ok = True
    for name, pkt, expect in vectors():
        z, r = icrc_zlib(pkt), icrc_rxe(pkt)
        status = 'ok' if z == r and (expect is None or z == expect) else 'FAIL'
        ok &= status == 'ok'
        if '--c' in sys.argv:
            print('/* %s: %d bytes from the IP header, ICRC %s */' %
                  (name, len(pkt), z.hex()))
            body = ', '.join('0x%02x' % x for x in pkt + z)
            print('static const u8 %s[] = {%s};' % (name, body))
        else:
            print('%-24s len=%-4d icrc(wire)=%s  %s%s' %
                  (name, len(pkt), z.hex(), status,
                   '' if expect is None else ' (matches reference)'))
            print('  ' + (pkt + z).hex())
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

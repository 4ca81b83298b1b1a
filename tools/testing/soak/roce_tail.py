#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Show how each RC connection in a RoCEv2 capture ended.

    roce_tail.py FILE.pcap [N]
    roce_tail.py --window W FILE.pcap
    roce_tail.py --stalls FILE.pcap
    roce_tail.py --reasks MS FILE.pcap

Reads a classic pcap (tcpdump -w, Ethernet, IPv4, as 46-soak.sh takes it
with SROCE_SOAK_PCAP=1) and prints, for each pair of QPs, its last N
packets (default 40) in both directions: time, direction, opcode, PSN,
AckReq, and the RETH (va, length) of a READ request or the AETH of an
ACK/NAK or READ response.  A QP that ran out of retries shows as a tail of
requests sent again with no answer that makes progress.

With --window W it prints instead, for each connection, the most SEND and
WRITE PSNs seen in flight at once (sent, not yet acknowledged by an ACK or
NAK seen coming back), and exits 1 if that is more than W: a requester
keeps at most its window of packets unacknowledged.  Taken on the
requester's side, the count never overstates: an ACK is seen before the
requester takes it in, and a packet lost before the capture is not seen.

With --stalls it prints, for each direction of requests, a histogram
over the whole capture of how many times the oldest PSN not yet
acknowledged was sent again (after a timeout or a NAK) before an answer
moved the acknowledged PSN on (0: sent once), and the longest time from
its first send to that answer.  A QP ends in RETRY_EXC_ERR after
retry_cnt + 1 of them; losses that are independent make each count
rarer than the one before by about the loss rate, so a tail that falls
off more slowly is a stall to look into.  (A copy netem made counts as
a resend.)

With --reasks MS it counts the READ requests that ask for a PSN asked
for twice already within the last MS milliseconds with no answer seen
in between (a READ response for that PSN or one of the next two), and
exits 1 if there is one.  A READ request is sent once, asked again once
when its responses are lost (a gap the held responses do not fill), and
again after a retransmit timeout, or as soon as the answer shows its
first packet lost too: asking again each time the wait for the held
ones ran out (4 ms) while the answer to the last request was still
behind the old responses in flight made the responder stream the whole
READ again for each, a storm that filled the per-CPU backlogs.  (Take
the capture without netem's duplicates: a copy counts as an ask.)
"""

import struct
import sys

OPCODES = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST",
    0x03: "SEND_LAST_IMM", 0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM",
    0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE", 0x08: "WRITE_LAST",
    0x09: "WRITE_LAST_IMM", 0x0a: "WRITE_ONLY", 0x0b: "WRITE_ONLY_IMM",
    0x0c: "READ_REQ", 0x0d: "READ_RESP_FIRST", 0x0e: "READ_RESP_MIDDLE",
    0x0f: "READ_RESP_LAST", 0x10: "READ_RESP_ONLY", 0x11: "ACK",
}
# Opcodes that carry an AETH.
AETH = {0x0d, 0x0f, 0x10, 0x11}


def aeth_str(syn, msn):
    """An AETH syndrome in words."""
    kind = syn >> 5
    if kind == 0:
        return "ACK msn %d" % msn
    if kind == 1:
        return "RNR NAK msn %d" % msn
    if kind == 3:
        code = syn & 0x1f
        what = {0: "PSN seq err", 1: "inv req", 2: "rem access",
                3: "rem op", 4: "inv RD req"}.get(code, "code %d" % code)
        return "NAK %s msn %d" % (what, msn)
    return "syndrome 0x%02x" % syn


def packets(path, aeth=False):
    """(time, src, dst, dest QPN, opcode, PSN, text) per RoCEv2 packet,
    and the AETH syndrome (None if there is none) if aeth is set."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        t = sec + frac / (1e9 if nano else 1e6)
        if len(pkt) < 14 + 20 + 8 + 12 or pkt[12:14] != b"\x08\x00":
            continue
        ihl = (pkt[14] & 0x0f) * 4
        if pkt[23] != 17:
            continue
        src, dst = pkt[26:30], pkt[30:34]
        udp = 14 + ihl
        if struct.unpack(">H", pkt[udp + 2:udp + 4])[0] != 4791:
            continue
        bth = pkt[udp + 8:]
        if len(bth) < 12:
            continue
        op = bth[0]
        qpn = int.from_bytes(bth[5:8], "big")
        ackreq = bth[8] >> 7
        psn = int.from_bytes(bth[9:12], "big")
        text = "%-16s psn %8d%s" % (OPCODES.get(op, "op 0x%02x" % op), psn,
                                    " A" if ackreq else "  ")
        ext = bth[12:]
        syn = ext[0] if op in AETH and len(ext) >= 4 else None
        if op == 0x0c and len(ext) >= 16:
            va, _, length = struct.unpack(">QII", ext[:16])
            text += " va 0x%x len %d" % (va, length)
        elif op in AETH and len(ext) >= 4:
            text += " " + aeth_str(ext[0], int.from_bytes(ext[1:4], "big"))
        if aeth:
            yield t, src, dst, qpn, op, psn, text, syn
        else:
            yield t, src, dst, qpn, op, psn, text


PSN_MOD = 1 << 24
# SEND and WRITE requests (RC): the packets the window counts one by one.
SEND_WRITE = set(range(0x00, 0x0c))


def psn_after(a, b):
    """How far PSN a is after PSN b (negative if before), across the wrap."""
    d = (a - b) % PSN_MOD
    return d - PSN_MOD if d >= PSN_MOD // 2 else d


def acked_psn(op, syn, psn):
    """The last PSN an ACK or NAK says arrived, or None."""
    if op != 0x11:
        return None
    kind = syn >> 5
    if kind == 0:
        return psn
    if kind in (1, 3):
        return (psn - 1) % PSN_MOD
    return None


def window(path, limit):
    """The most SEND/WRITE PSNs in flight per connection; 1 if over limit."""
    conns = {}
    for _, src, dst, qpn, op, psn, _, syn in packets(path, aeth=True):
        if op in SEND_WRITE:
            c = conns.setdefault((src, dst), {"sent": None, "acked": None,
                                              "most": 0, "qpn": qpn})
            if c["sent"] is None or psn_after(psn, c["sent"]) > 0:
                c["sent"] = psn
            if c["acked"] is None:
                c["acked"] = (psn - 1) % PSN_MOD
        else:
            a = acked_psn(op, syn, psn)
            c = conns.get((dst, src))
            if a is None or c is None or c["acked"] is None:
                continue
            if psn_after(a, c["acked"]) > 0:
                c["acked"] = a
        if c["sent"] is not None and c["acked"] is not None:
            c["most"] = max(c["most"], psn_after(c["sent"], c["acked"]))
    worst = 0
    for (src, dst), c in sorted(conns.items()):
        print("%s -> %s QP %d: at most %d PSNs in flight" % (
            ".".join(map(str, src)), ".".join(map(str, dst)), c["qpn"],
            c["most"]))
        worst = max(worst, c["most"])
    if not conns:
        print("no SEND or WRITE requests in the capture")
        return 1
    return 1 if worst > limit else 0


def stalls(path):
    """Histogram of retries from the oldest unacknowledged PSN."""
    conns = {}
    t0 = None
    for t, src, dst, _, op, psn, _, syn in packets(path, aeth=True):
        t0 = t if t0 is None else t0
        if op <= 0x0c:
            c = conns.setdefault((src, dst), {"acked": None, "sent": {},
                                              "base": 0, "hist": {},
                                              "longest": (0, 0, 0)})
            if c["acked"] is None:
                c["acked"] = (psn - 1) % PSN_MOD
            if psn_after(psn, c["acked"]) > 0:
                # PSN -> [sends, time of the first]
                c["sent"].setdefault(psn, [0, t])[0] += 1
            continue
        c = conns.get((dst, src))
        a = acked_psn(op, syn, psn) if op == 0x11 else psn
        if c is None or c["acked"] is None or a is None or \
           psn_after(a, c["acked"]) <= 0:
            continue
        oldest = c["sent"].get((c["acked"] + 1) % PSN_MOD)
        if oldest:
            # Sends since it became the oldest, but for its first.
            retries = oldest[0] - max(c["base"], 1)
            c["hist"][retries] = c["hist"].get(retries, 0) + 1
            if t - oldest[1] > c["longest"][0]:
                c["longest"] = (t - oldest[1], oldest[1] - t0,
                                (c["acked"] + 1) % PSN_MOD)
        c["acked"] = a
        c["sent"] = {p: v for p, v in c["sent"].items()
                     if psn_after(p, a) > 0}
        c["base"] = c["sent"].get((a + 1) % PSN_MOD, [0])[0]
    for (src, dst), c in sorted(conns.items()):
        if sum(c["hist"].values()) < 100:
            continue    # a corrupted address, or a connection of a moment
        print("%s -> %s: retries from the oldest unacknowledged PSN %s;"
              " longest wait %.0f ms (PSN %d, first sent at %.3f s)" % (
                  ".".join(map(str, src)), ".".join(map(str, dst)),
                  " ".join("%d:%d" % kv for kv in sorted(c["hist"].items())),
                  c["longest"][0] * 1000, c["longest"][2], c["longest"][1]))
    return 0


def reasks(path, ms):
    """READ requests for a PSN asked for twice already within ms, with no
    answer to those asks seen in between."""
    asks, total, storms, worst = {}, 0, 0, None
    for t, src, dst, qpn, op, psn, _ in packets(path):
        if 0x0d <= op <= 0x10:
            # An answer starts: forget the asks it answers.
            for key, (p, _times) in list(asks.items()):
                if key[:2] == (dst, src) and 0 <= (psn - p) % PSN_MOD <= 2:
                    del asks[key]
            continue
        if op != 0x0c:
            continue
        total += 1
        key = (src, dst, qpn)
        prev = asks.get(key)
        times = [x for x in prev[1] if t - x <= ms / 1000.0] \
            if prev and prev[0] == psn else []
        if len(times) >= 2:
            storms += 1
            if worst is None or len(times) + 1 > worst[0]:
                worst = (len(times) + 1, psn)
        asks[key] = (psn, times + [t])
    print("%d READ requests, %d asking a third time or more within %d ms"
          " before an answer%s" % (
              total, storms, ms, "" if worst is None else
              " (PSN %d asked %d times)" % (worst[1], worst[0])))
    return 1 if storms else 0


def main():
    if sys.argv[1] == "--reasks":
        sys.exit(reasks(sys.argv[3], int(sys.argv[2])))
    if sys.argv[1] == "--window":
        sys.exit(window(sys.argv[3], int(sys.argv[2])))
    if sys.argv[1] == "--stalls":
        sys.exit(stalls(sys.argv[2]))
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    # Packets by destination (address, QPN).  A request to (b, R) from a
    # with PSN p, then an ACK or READ response to (a, Q) with the same
    # PSN: R and Q are the two ends of one connection.
    by_dest, asked, peer_of = {}, {}, {}
    t0 = None
    for t, src, dst, qpn, op, psn, text in packets(path):
        t0 = t if t0 is None else t0
        by_dest.setdefault((dst, qpn), []).append((t - t0, src, dst, qpn, text))
        if op < 0x0d:
            asked[(src, psn)] = (dst, qpn)
        elif (dst, psn) in asked and (dst, qpn) not in peer_of:
            other = asked[(dst, psn)]
            peer_of[(dst, qpn)] = other
            peer_of[other] = (dst, qpn)
    done = set()
    for key in sorted(by_dest, key=lambda k: by_dest[k][0][0]):
        if key in done:
            continue
        peer = peer_of.get(key)
        done.update({key, peer})
        pkts = sorted(by_dest[key] + by_dest.get(peer, []))
        print("== QP %d%s: %d packets, the last at %.3f s" % (
            key[1], " <-> QP %d" % peer[1] if peer else "", len(pkts), pkts[-1][0]))
        for t, src, dst, qpn, text in pkts[-n:]:
            print("%10.4f %s -> %s QP %-4d %s" % (
                t, ".".join(map(str, src)), ".".join(map(str, dst)), qpn, text))


if __name__ == "__main__":
    main()

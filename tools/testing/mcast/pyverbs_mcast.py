#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UD multicast through pyverbs' rdma_cm (a CMID in the UDP port space).

    pyverbs_mcast.py recv LOCAL_ADDR GROUP COUNT SIZE
    pyverbs_mcast.py send LOCAL_ADDR GROUP COUNT SIZE

Both join GROUP (librdmacm attaches the CMID's QP when the join event
comes).  The receiver prints "joined" once it has, then takes COUNT
messages and checks each; the sender sends COUNT to the multicast QPN.
Exit status 0 when all went as expected.
"""
import sys
import time

from pyverbs.addr import AH
from pyverbs.cmid import CMID, AddrInfo, CMEvent, CMEventChannel, UDParam
from pyverbs.qp import QPCap, QPInitAttr
import pyverbs.cm_enums as ce
import pyverbs.enums as e

GRH_SIZE = 40
MULTICAST_QPN = 0xffffff


def expect(channel, want):
    """Take the next CM event; it must be @want.  Returns it, acked."""
    event = CMEvent(channel)
    got = event.event_type
    params = UDParam(event) if got == ce.RDMA_CM_EVENT_MULTICAST_JOIN else None
    event.ack_cm_event()
    if got != want:
        sys.exit(f'expected CM event {want}, got {got}')
    return params


def pattern(size):
    return ''.join(chr(ord('a') + i % 26) for i in range(size))


def main():
    role, local, group, count, size = sys.argv[1:6]
    count, size = int(count), int(size)
    channel = CMEventChannel()
    cmid = CMID(creator=channel, port_space=ce.RDMA_PS_UDP)
    cmid.bind_addr(AddrInfo(src=local, dst=local, dst_service='7471',
                            port_space=ce.RDMA_PS_UDP))
    cmid.resolve_addr(AddrInfo(src=local, dst=group))
    expect(channel, ce.RDMA_CM_EVENT_ADDR_RESOLVED)
    cmid.create_qp(QPInitAttr(qp_type=e.IBV_QPT_UD,
                              cap=QPCap(max_send_wr=count,
                                        max_recv_wr=count)))
    mr = cmid.reg_msgs(size + GRH_SIZE)
    if role == 'recv':
        for _ in range(count):
            cmid.post_recv(mr)
    cmid.join_multicast(addr=AddrInfo(src=group))
    params = expect(channel, ce.RDMA_CM_EVENT_MULTICAST_JOIN)
    print('joined', flush=True)
    want = pattern(size)
    if role == 'recv':
        for i in range(count):
            wc = cmid.get_recv_comp()
            data = mr.read(size, GRH_SIZE)
            if isinstance(data, bytes):
                data = data.decode(errors='replace')
            if wc.status != e.IBV_WC_SUCCESS or data != want:
                sys.exit(f'message {i}: status {wc.status}, data differs: {data != want}')
        print(f'received {count} messages, checked', flush=True)
    else:
        time.sleep(1)
        ah = AH(cmid.pd, attr=params.ah_attr)
        mr.write(want, size)
        for _ in range(count):
            cmid.post_ud_send(mr, ah, rqpn=MULTICAST_QPN, length=size)
            wc = cmid.get_send_comp()
            if wc.status != e.IBV_WC_SUCCESS:
                sys.exit(f'send completion status {wc.status}')
            time.sleep(0.005)
        print(f'sent {count} messages', flush=True)
    cmid.leave_multicast(AddrInfo(src=group))


if __name__ == '__main__':
    main()

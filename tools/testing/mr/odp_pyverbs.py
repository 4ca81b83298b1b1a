#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyverbs on an ODP-capable device: the caps, ODP MRs, advise_mr.

odp_pyverbs.py DEV: prints TAP.  The ODP caps through query_device_ex;
an MR registered with IBV_ACCESS_ON_DEMAND and written and read through
MR.write()/MR.read() (the CPU's view); PD.advise_mr() reports what
librxe (no advise_mr in rdma-core 44) makes of it; an implicit ODP MR.
"""
import sys

import pyverbs.device as d
import pyverbs.enums as e
import pyverbs.mr as m
import pyverbs.pd as p
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE

N = 0
FAILED = 0


def ok(cond, what):
    global N, FAILED
    N += 1
    FAILED += 0 if cond else 1
    print('%sok %d - %s' % ('' if cond else 'not ', N, what))


def main():
    ctx = d.Context(name=sys.argv[1])
    caps = ctx.query_device_ex().odp_caps
    rc = caps.rc_odp_caps
    print('# pyverbs odp_caps: general %#x rc %#x ud %#x' %
          (caps.general_caps, rc, caps.ud_odp_caps))
    ok(caps.general_caps & e.IBV_ODP_SUPPORT,
       'query_device_ex says IBV_ODP_SUPPORT')
    want = (e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV |
            e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ)
    ok(rc & want == want, 'RC send, recv, write, read')
    pd = p.PD(ctx)
    mr = m.MR(pd, 1 << 20, e.IBV_ACCESS_ON_DEMAND |
              e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ)
    data = bytes(range(256)) * 16
    mr.write(data, len(data), 8192)
    ok(mr.read(len(data), 8192) == data and mr.lkey == mr.rkey,
       'an ODP MR of 1 MiB registered, its memory usable')
    try:
        pd.advise_mr(e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                     e._IBV_ADVISE_MR_FLAG_FLUSH,
                     [SGE(mr.buf, 65536, mr.lkey)])
        print('# pyverbs advise_mr: done')
    except PyverbsRDMAError as ex:
        print('# pyverbs advise_mr: %s' % ex)
    mr.close()
    ok(caps.general_caps & e.IBV_ODP_SUPPORT_IMPLICIT,
       'query_device_ex says IBV_ODP_SUPPORT_IMPLICIT')
    imr = m.MR(pd, 0, e.IBV_ACCESS_ON_DEMAND | e.IBV_ACCESS_LOCAL_WRITE |
               e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ,
               implicit=True)
    ok(imr.lkey == imr.rkey, 'an implicit ODP MR (MR(implicit=True))')
    imr.close()
    pd.close()
    ctx.close()
    print('1..%d' % N)
    return 1 if FAILED else 0


if __name__ == '__main__':
    sys.exit(main())

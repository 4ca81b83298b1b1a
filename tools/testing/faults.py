#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Systematic allocation failures in sroce, for tests/45-faults.sh.

Each operation (open a device, allocate a PD, create a CQ, a QP, ...) is
run again and again with /proc/<task>/fail-nth set to 1, 2, 3, ...: the
kernel fails the Nth fault-injectable call (slab or page allocation) that
the task makes *from sroce's code*, since the caller has set the
failslab and fail_page_alloc stack filters (require-start/require-end) to
the module's text.  The sweep of an operation ends at the first N that
injects nothing: then every allocation on its path has failed once.

For each injected failure the operation must fail with an errno (or
succeed, if the driver could do without that allocation), leave no object
behind (the rdma resource counts are back where they were) and work again
right after.  A crash, a hang or a warning shows in the kernel log, which
the harness checks; kmemleak runs at the end of the VM run.

    faults.py verbs DEV GID_INDEX   the verbs objects of DEV
    faults.py link NAME NETDEV      creating and deleting a device

Output: "PASS description" and "FAIL description: why" lines and
"# ..." diagnostics; the exit status is 1 if anything failed.
"""

import collections
import errno
import os
import subprocess
import sys
import threading
import time

EVERY = 40           # fail each of the first EVERY allocations of a path
LIMIT = 20000        # no path of sroce makes this many allocations
failures = 0


def say(ok, desc, why=""):
    global failures
    if ok:
        print(f"PASS {desc}", flush=True)
    else:
        failures += 1
        print(f"FAIL {desc}: {why}", flush=True)


def diag(text):
    print(f"# {text}", flush=True)


def fail_nth_path(tid=None):
    return f"/proc/self/task/{tid or threading.get_native_id()}/fail-nth"


def arm(n):
    with open(fail_nth_path(), "w") as f:
        f.write(str(n))


def disarm():
    """Stop injecting; True if the armed fault was injected."""
    fd = os.open(fail_nth_path(), os.O_RDWR)
    try:
        left = int(os.pread(fd, 32, 0))
        os.write(fd, b"0")
    finally:
        os.close(fd)
    return left == 0


def fault_numbers():
    """Which N to arm: each of the first EVERY, then 40% further each time.

    A path of a few dozen allocations is covered completely; a long one
    (ib_register_device() allocates hundreds of objects, each GID's sysfs
    files among them) is sampled, its error paths reached at every depth.
    """
    yield from range(1, EVERY + 1)
    n = EVERY
    while n < LIMIT:
        n = n * 7 // 5 + 1
        yield n


def resources(dev):
    """The rdma resource counts of DEV, e.g. {'pd': 1, 'qp': 2, ...}."""
    out = subprocess.run(["rdma", "resource", "show", dev],
                         capture_output=True, text=True).stdout.split()
    counts = {}
    for i, word in enumerate(out[:-1]):
        if out[i + 1].isdigit() and not word.endswith(":"):
            counts[word] = int(out[i + 1])
    return counts


def errno_of(ex):
    code = getattr(ex, "error_code", -1)
    return code if isinstance(code, int) and code > 0 else None


def sweep(desc, make, destroy, dev=None, check=None):
    """Fail each allocation sroce makes in make() in turn.

    make() builds the object (raising on failure), destroy(obj) frees it,
    check(obj) (optional) tells whether an object made despite an injected
    failure works.  Returns the number of allocation sites found.
    """
    from pyverbs.pyverbs_error import PyverbsError

    before = resources(dev) if dev else None
    errnos = collections.Counter()
    silent = 0
    last = 0
    start = time.monotonic()
    for n in fault_numbers():
        sweep.n = n
        obj, err = None, None
        arm(n)
        try:
            obj = make()
        except PyverbsError as ex:
            err = ex
        finally:
            injected = disarm()
        if err is not None:
            code = errno_of(err)
            if not injected:
                say(False, desc, f"failed with no fault injected: {err}")
                return n
            if code is None:
                say(False, desc, f"fault {n}: no errno: {err}")
                return n
            errnos[errno.errorcode.get(code, str(code))] += 1
        else:
            if injected:
                silent += 1
                if check and not check(obj):
                    say(False, desc, f"fault {n}: made without error, "
                        "but does not work")
                    destroy(obj)
                    return n
            destroy(obj)
        if not injected:
            break
        last = n
    else:
        say(False, desc, f"still injecting after {LIMIT} faults")
        return LIMIT
    after = resources(dev) if dev else None
    if after != before:
        say(False, desc, f"resources {before} -> {after}")
        return last
    summary = ", ".join(f"{k} x{v}" for k, v in sorted(errnos.items()))
    diag(f"{desc}: {sites_text(last)} failed: {summary or 'no error'}"
         f"{f', {silent} absorbed' if silent else ''}"
         f" ({time.monotonic() - start:.0f} s)")
    say(True, f"{desc} ({sites_text(last)})")
    return last


def sites_text(last):
    if last <= EVERY:
        return f"all {last} allocations"
    return f"{last}+ allocations, the first {EVERY} and samples"


# ------------------------------------------------------------- verbs ----

def verbs(dev, gid_index):
    import pyverbs.enums as e
    from pyverbs.addr import AH, AHAttr, GlobalRoute
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
    from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
    from pyverbs.wr import SGE, RecvWR, SendWR

    access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ)

    sweep("open the device", lambda: Context(name=dev), lambda c: c.close())

    ctx = Context(name=dev)
    gid = ctx.query_gid(1, gid_index)
    sweep("allocate a PD", lambda: PD(ctx), lambda o: o.close(), dev)
    pd = PD(ctx)
    sweep("create a CQ", lambda: CQ(ctx, 64), lambda o: o.close(), dev)
    cq = CQ(ctx, 64)

    # Resize: the CQ is made first, without faults.
    sweep("resize a CQ", lambda: resize_cq(ctx, CQ), lambda o: o.close(), dev)

    for size in (4096, 1 << 20):
        sweep(f"register a {size >> 10} KiB MR",
              lambda s=size: MR(pd, s, access), lambda o: o.close(), dev)

    sweep("create an SRQ", lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64))),
          lambda o: o.close(), dev)

    cap = QPCap(max_send_wr=32, max_recv_wr=32, max_send_sge=2,
                max_recv_sge=2)

    def rc_qp(srq=None):
        return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                 srq=srq, cap=cap))

    sweep("create an RC QP", rc_qp, lambda o: o.close(), dev)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64)))
    sweep("create an RC QP on an SRQ", lambda: rc_qp(srq),
          lambda o: o.close(), dev)

    def ud_qp():
        attr = QPAttr()
        attr.qkey = 0x11111111
        return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                                 cap=cap), attr)

    sweep("create a UD QP and bring it to RTS", ud_qp, lambda o: o.close(),
          dev)

    def ah_attr():
        gr = GlobalRoute(dgid=gid, sgid_index=gid_index, hop_limit=64)
        return AHAttr(is_global=1, port_num=1, gr=gr)

    sweep("create an AH", lambda: AH(pd, attr=ah_attr()),
          lambda o: o.close(), dev)

    def connect(qp, remote):
        attr = QPAttr()
        attr.qp_access_flags = access
        qp.to_init(attr)
        attr = QPAttr()
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = remote
        attr.rq_psn = 0
        attr.max_dest_rd_atomic = 1
        attr.min_rnr_timer = 1
        attr.ah_attr = ah_attr()
        qp.to_rtr(attr)
        attr = QPAttr()
        attr.sq_psn = 0
        attr.timeout = 10
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.max_rd_atomic = 1
        qp.to_rts(attr)

    # The state changes of an RC QP, on a QP made first without faults.
    pending = []

    def make_connected():
        qp = pending.pop()
        try:
            connect(qp, qp.qp_num)
        except Exception:
            qp.close()
            raise
        return qp

    sweep("RC QP from RESET to RTS",
          armed_after(lambda: pending.append(rc_qp()), make_connected),
          lambda o: o.close(), dev)

    # Traffic in the caller's context: sroce runs the send engine from the
    # doorbell, so the packets of a send are built in this task.  Two RC
    # QPs on this device, connected to each other (the loopback path).
    mr = MR(pd, 65536, access)
    a, b = rc_qp(), rc_qp()
    connect(a, b.qp_num)
    connect(b, a.qp_num)

    def poll(n, timeout=30):
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            nc, wcs = cq.poll(num_entries=n - len(got))
            got += wcs[:nc]
            if not nc:
                time.sleep(0.01)
        return got

    state = {"qp": (a, b), "broken": False}

    def renew(st):
        for qp in st["qp"]:
            qp.close()
        poll(64, timeout=1)
        na, nb = rc_qp(), rc_qp()
        connect(na, nb.qp_num)
        connect(nb, na.qp_num)
        st["qp"] = (na, nb)

    def send_once():
        a, b = state["qp"]
        try:
            b.post_recv(RecvWR(wr_id=2, num_sge=1,
                               sg=[SGE(mr.buf + 32768, 16384, mr.lkey)]))
            a.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                               sg=[SGE(mr.buf, 16384, mr.lkey)],
                               send_flags=e.IBV_SEND_SIGNALED))
        except Exception:
            left = fail_nth_read()
            arm(0)
            renew(state)
            arm(left)
            raise
        return state

    def send_done(st):
        # Outside the sweep's injection: the send and the receive complete
        # (a lost packet is sent again), or the QPs report an error and
        # are replaced.
        wcs = poll(2)
        if len(wcs) < 2:
            say(False, f"send with fault {sweep.n}",
                f"{len(wcs)} of 2 completions within 30 s")
        if len(wcs) < 2 or any(wc.status != e.IBV_WC_SUCCESS for wc in wcs):
            diag(f"send with fault {sweep.n}: statuses "
                 f"{[wc.status for wc in wcs]}, new QPs")
            renew(st)

    sweep("16 KiB RC send, loopback", send_once, send_done)
    send_done(send_once())
    for qp in state["qp"]:
        qp.close()
    for o in (mr, srq, cq, pd):
        o.close()
    ctx.close()


def fail_nth_read():
    with open(fail_nth_path()) as f:
        return int(f.read())


def armed_after(prepare, fn):
    """make() for sweep(): prepare() runs without injection, then fn()."""
    def run():
        n = fail_nth_read()
        arm(0)
        try:
            prepare()
        finally:
            arm(n)
        return fn()
    return run


def resize_cq(ctx, cq_class):
    n = fail_nth_read()
    arm(0)
    try:
        cq = cq_class(ctx, 16)
    finally:
        arm(n)
    try:
        cq.resize(256)
    except Exception:
        cq.close()
        raise
    return cq


# -------------------------------------------------------------- link ----

def run_armed(n, argv):
    """Run argv with its fail-nth at n; (exit status, fault injected)."""
    def child():
        with open("/proc/self/fail-nth", "w") as f:
            f.write(str(n))

    p = subprocess.Popen(argv, preexec_fn=child, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    # Wait without reaping: the zombie's fail-nth says whether it fired.
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    with open(f"/proc/{p.pid}/fail-nth") as f:
        injected = int(f.read()) == 0
    p.wait()
    return p.returncode, injected, p.stderr.read().decode(errors="replace")


def link(name, netdev):
    sysfs = f"/sys/class/infiniband/{name}"
    add = ["rdma", "link", "add", name, "type", "sroce", "netdev", netdev]
    delete = ["rdma", "link", "delete", name]

    for what, argv, exists_after_ok in (("create", add, True),
                                        ("delete", delete, False)):
        errs = collections.Counter()
        last = 0
        start = time.monotonic()
        for n in fault_numbers():
            if what == "delete":
                subprocess.run(add, check=True)
            rc, injected, err = run_armed(n, argv)
            exists = os.path.exists(sysfs)
            if rc and not injected:
                say(False, f"{what} {name}", f"failed with no fault: {err}")
                return
            if rc:
                errs[err.strip().splitlines()[-1] if err.strip() else "?"] += 1
            if exists != (exists_after_ok if rc == 0 else not exists_after_ok):
                say(False, f"{what} {name}",
                    f"fault {n}: exit status {rc} but the device "
                    f"{'is there' if exists else 'is gone'}")
                return
            if exists:
                subprocess.run(delete, check=True)
            if not injected:
                diag(f"{what} {name}: {sites_text(last)} failed: "
                     + "; ".join(f"{k} x{v}" for k, v in errs.items())
                     + f" ({time.monotonic() - start:.0f} s)")
                say(True, f"{what} {name} ({sites_text(last)})")
                break
            last = n
        else:
            say(False, f"{what} {name}", f"still injecting after {LIMIT}")
            return


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "verbs":
        verbs(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "link":
        link(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

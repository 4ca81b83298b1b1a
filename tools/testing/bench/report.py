#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark report: from the raw results of bench.sh to the tables.

    report.py --out DIR --points FILE [--set full|smoke] [--repeat N]
              [--commit REV] RELEASE...

Reads DIR/results.csv (kernel,driver,topology,test,size,qps,run,value,unit,
one line a run) and DIR/vm/<driver>/run1/<release>/meta.txt; writes
DIR/summary.csv, DIR/report.md and DIR/bw-<kernel>.png, and prints
report.md.  Exit status 1 if a point of the set has no valid result for a
driver and topology it should run on; the targets do not count.

Each point is reported as the median of its runs, with the spread as
[min-max].  The ratio is sroce's median over rdma_rxe's, from the same
bench run; the limit is sroce's median bandwidth as a share of the median
memcpy of the same size in sroce's VM; the bound is the per-byte cost of a
software device on that VM (one kernel copy, plus the ICRC on both ends
across a netdev), from what sroce timed when it loaded in the same boots,
and sroce's share of it.  See Documentation/benchmarks.rst.
"""

import argparse
import collections
import csv
import math
import os
import re
import statistics
import sys

DRIVERS = ("sroce", "rxe")
# Topology: its heading, and the drivers that run on it.
TOPOLOGIES = {
    "loop": ("single-device loopback (initial namespace)", DRIVERS),
    "veth": ("veth wire, two devices in the initial namespace", DRIVERS),
    "netns": ("veth wire between two network namespaces", ("sroce",)),
}
NOT_RUN = {("rxe", "netns"): "n/a: rdma_rxe runs only in the initial namespace"}
# The copies of memcpy_bw: the limit, and the kernel's way for reference.
COPIES = {"memcpy": "memcpy()", "rep_movsb": "rep movsb"}
# What sroce timed at load (crc.c, guest lib.sh's bench_timing): topology
# "cpu", size 4096, MB/s.
TIMINGS = {"kcopy_page": "copy_page()", "kmemcpy": "memcpy()",
           "icrc": "the ICRC"}
TIMING_SIZE = 4096
# IPv4 + UDP + BTH + RETH + ICRC: what a RoCE packet needs besides its
# payload, to find the path MTU from the netdev's.
ROCE_OVERHEAD = 20 + 8 + 12 + 16 + 4
UNIT_FMT = {"MB/s": "{:.1f}", "Mpps": "{:.4f}", "usec": "{:.2f}",
            "kCPU-s/GB": "{:.2f}"}

# The targets of issue 5: (name, kind, test, size, qps, threshold).
#   rxe:    sroce median / rxe median >= threshold (<= for latency)
#   limit:  sroce median / memcpy median of the size >= threshold
#   qps:    sroce median at QPS / sroce median at 1 QP >= threshold
TARGETS = [
    ("ib_write_bw 64 KiB >= 3x rdma_rxe", "rxe", "ib_write_bw", 65536, 1, 3.0),
    ("ib_read_bw 64 KiB >= 3x rdma_rxe", "rxe", "ib_read_bw", 65536, 1, 3.0),
    ("ib_write_bw 1 MiB >= 50% of memcpy", "limit", "ib_write_bw", 1048576, 1, 0.5),
    ("ib_read_bw 1 MiB >= 50% of memcpy", "limit", "ib_read_bw", 1048576, 1, 0.5),
    ("ib_send_lat 2 B <= 0.6x rdma_rxe", "rxe", "ib_send_lat", 2, 1, 0.6),
    ("ib_write_lat 2 B <= 0.6x rdma_rxe", "rxe", "ib_write_lat", 2, 1, 0.6),
    ("ib_write_bw 64 KiB, 4 QPs >= 1.7x 1 QP", "qps", "ib_write_bw", 65536, 4, 1.7),
]


def human_size(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def kernel_label(release):
    m = re.match(r"(\d+\.\d+)", release)
    return m.group(1) if m else release


def path_mtu(netdev_mtu):
    """The RoCE path MTU on a netdev of NETDEV_MTU (a string, "" if not
    known: the bench's 9000)."""
    try:
        room = int(netdev_mtu) - ROCE_OVERHEAD
    except ValueError:
        room = 9000
    for mtu in (4096, 2048, 1024, 512, 256):
        if mtu <= room:
            return mtu
    return 256


def read_points(path, which):
    """The points of set WHICH: (test, size, qps) in file order."""
    points = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            test, size, qps = words[0], int(words[1]), int(words[2])
            if which == "full" or which in words[4:]:
                points.append((test, size, qps))
    return points


def units_of(test):
    if test.endswith("_lat"):
        return ["usec"]
    return ["MB/s", "Mpps"]


class Stat:
    """The runs of one point on one driver."""

    def __init__(self):
        self.values = []
        self.runs = 0
        self.inf = 0

    def add(self, value):
        self.runs += 1
        try:
            number = float(value)
        except ValueError:
            return
        # perftest prints inf (a latency) or 0.00 (a bandwidth) when its
        # cycle-counter timing failed; the run itself moved its data.
        if math.isinf(number) or number == 0:
            self.inf += 1
            return
        self.values.append(number)

    @property
    def median(self):
        return statistics.median(self.values) if self.values else None

    def cell(self, unit):
        if not self.values:
            why = ("%d printed inf or 0" % self.inf if self.inf
                   else "failed")
            return "– (%d runs: %s)" % (self.runs, why) if self.runs else "–"
        fmt = UNIT_FMT.get(unit, "{:.3g}")
        text = fmt.format(self.median)
        if len(self.values) > 1:
            text += " [%s–%s]" % (fmt.format(min(self.values)),
                                  fmt.format(max(self.values)))
        if len(self.values) < self.runs:
            text += " (%d/%d valid)" % (len(self.values), self.runs)
        return text


def load_results(path):
    """{(kernel, driver, topology, test, size, qps, unit): Stat}"""
    results = collections.defaultdict(Stat)
    if not os.path.exists(path):
        return results
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) != 9:
                continue
            kernel, driver, topo, test, size, qps, _run, value, unit = row
            if unit == "-":
                # A run that failed before perftest said anything.
                for u in units_of(test):
                    results[(kernel, driver, topo, test, int(size), int(qps), u)].add(value)
                continue
            results[(kernel, driver, topo, test, int(size), int(qps), unit)].add(value)
    return results


# Counters that count traffic, not trouble (sroce's and rdma_rxe's names,
# by their ends): left out of the report's table.
TRAFFIC_COUNTERS = ("packets", "pkts", "bytes", "lifespan", "rdma_sends",
                    "rdma_recvs")


def load_counters(path):
    """{(kernel, driver, topology, test, size, qps): {counter: total delta}}
    from counters.csv, the counters that say something went wrong only."""
    moved = collections.defaultdict(collections.Counter)
    if not os.path.exists(path):
        return moved
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) != 10:
                continue
            kernel, driver, topo, test, size, qps, _run, _dev, name, delta = row
            if any(name.endswith(t) for t in TRAFFIC_COUNTERS):
                continue
            try:
                moved[(kernel, driver, topo, test, int(size), int(qps))][name] += int(delta)
            except ValueError:
                continue
    return moved


def load_meta(out, driver, release, repeat):
    """What the guest said about its VMs (the first boot's meta.txt), and
    how long run.sh took and what it counted over all the boots."""
    meta = {}
    try:
        with open(os.path.join(out, "vm", driver, "run1", release, "meta.txt")) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition("=")
                meta[key] = value
    except OSError:
        pass
    counts = [0, 0, 0]
    for run in range(1, repeat + 1):
        log = os.path.join(out, "logs", "%s-%s-run%d.log" % (release, driver, run))
        try:
            with open(log) as f:
                for line in f:
                    m = re.search(r"\] done in (\d+)s", line)
                    if m:
                        meta["secs"] = meta.get("secs", 0) + int(m.group(1))
                    m = re.match(r"(\d+) passed, (\d+) failed(?:, (\d+) skipped)?", line)
                    if m:
                        for i in range(3):
                            counts[i] += int(m.group(i + 1) or 0)
                        meta["boots"] = meta.get("boots", 0) + 1
        except OSError:
            pass
    if "boots" in meta:
        meta["harness"] = "%d passed, %d failed, %d skipped in %d boot(s)" % (
            counts[0], counts[1], counts[2], meta["boots"])
    return meta


class Report:
    def __init__(self, args):
        self.args = args
        self.points = read_points(args.points, args.set)
        self.sizes = sorted({s for t, s, q in self.points if t.endswith("_bw")})
        self.results = load_results(os.path.join(args.out, "results.csv"))
        self.counters = load_counters(os.path.join(args.out, "counters.csv"))
        self.releases = {kernel_label(r): r for r in args.releases}
        self.metas = {}
        self.md = []
        self.summary = []
        self.missing = []
        self.verdicts = []

    def stat(self, kernel, driver, topo, test, size, qps, unit):
        return self.results.get((kernel, driver, topo, test, size, qps, unit), Stat())

    def memcpy(self, kernel, driver, size, test="memcpy"):
        return self.stat(kernel, driver, "cpu", test, size, 1, "MB/s").median

    def rows(self):
        """(test, size, qps, unit) in the order of the tables."""
        rows = []
        for test, size, qps in self.points:
            if test.endswith("_bw"):
                rows.append((test, size, qps, "MB/s"))
        for test, size, qps in self.points:
            if test.endswith("_bw") and size == min(self.sizes) and qps == 1:
                rows.append((test, size, qps, "Mpps"))
        for test, size, qps in self.points:
            if test.endswith("_lat"):
                rows.append((test, size, qps, "usec"))
        for test, size, qps in self.points:
            if test.endswith("_bw") and self.has_unit(test, size, qps, "kCPU-s/GB"):
                rows.append((test, size, qps, "kCPU-s/GB"))
        return rows

    def has_unit(self, test, size, qps, unit):
        """Whether any run recorded UNIT for the point (reports of runs
        before the CPU cost was measured have none)."""
        return any(k[3:] == (test, size, qps, unit) for k in self.results)

    def check_present(self, kernel):
        for topo, (_title, drivers) in TOPOLOGIES.items():
            for driver in drivers:
                for test, size, qps in self.points:
                    for unit in units_of(test):
                        s = self.stat(kernel, driver, topo, test, size, qps, unit)
                        # Runs whose timing perftest botched did run (the
                        # guest fails a run that did not): shown, not missing.
                        if s.median is None and not s.inf:
                            self.missing.append("%s %s %s %s %d %dQP %s" % (
                                kernel, driver, topo, test, size, qps, unit))
        for driver in DRIVERS:
            for size in self.sizes:
                for test in COPIES:
                    if self.memcpy(kernel, driver, size, test) is None:
                        self.missing.append("%s %s %s %d" % (kernel, driver, test, size))
        for test in TIMINGS:
            if self.memcpy(kernel, "sroce", TIMING_SIZE, test) is None:
                self.missing.append("%s sroce %s (load_timing)" % (kernel, test))

    def topology_table(self, kernel, topo):
        title, drivers = TOPOLOGIES[topo]
        md = self.md
        md.append("### %s: %s\n" % (topo, title))
        md.append("| test | size | QPs | unit | sroce | rdma_rxe | sroce/rxe | sroce / memcpy |")
        md.append("|---|---|---|---|---|---|---|---|")
        for test, size, qps, unit in self.rows():
            s = self.stat(kernel, "sroce", topo, test, size, qps, unit)
            if "rxe" in drivers:
                r = self.stat(kernel, "rxe", topo, test, size, qps, unit)
                rcell = r.cell(unit)
            else:
                r = Stat()
                rcell = "n/a"
            ratio = limit = None
            if s.median is not None and r.median:
                ratio = s.median / r.median
            lim = self.memcpy(kernel, "sroce", size)
            if unit == "MB/s" and s.median is not None and lim:
                limit = s.median / lim
            md.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
                test, human_size(size), qps, unit, s.cell(unit), rcell,
                "%.2f×" % ratio if ratio is not None else "–",
                "%.1f %%" % (100 * limit) if limit is not None else "–"))
            share = None
            bound = self.bound(kernel, topo)[0]
            if unit == "MB/s" and s.median is not None and bound:
                share = s.median / bound
            self.summary.append(
                [kernel, topo, test, size, qps, unit] + stat_fields(s) +
                stat_fields(r) + [fmt_num(ratio), fmt_num(limit),
                                  fmt_num(share)])
        md.append("")

    def meta(self, release, driver="sroce"):
        key = (release, driver)
        if key not in self.metas:
            self.metas[key] = load_meta(self.args.out, driver, release,
                                        self.args.repeat)
        return self.metas[key]

    def copy_test(self, release):
        """The receive copy of a full packet: copy_page() when the path
        MTU is a page (mem.c), memcpy() (skb_copy_bits()) otherwise."""
        if path_mtu(self.meta(release).get("mtu", "")) == TIMING_SIZE:
            return "kcopy_page"
        return "kmemcpy"

    def bound(self, kernel, topo):
        """(MB/s, what it counts): the per-byte bound of a software device
        on TOPO, from sroce's timings in its VM; (None, why) without them.
        Times per byte add: one copy, and the ICRC on the way out and on
        the way in where the packet crosses a netdev (or loopback_icrc
        puts it back on the loopback)."""
        release = self.releases[kernel]
        copy = self.memcpy(kernel, "sroce", TIMING_SIZE, self.copy_test(release))
        icrc = self.memcpy(kernel, "sroce", TIMING_SIZE, "icrc")
        if not copy or not icrc:
            return None, "no timing"
        crcs = 2
        if topo == "loop" and self.meta(release).get("loopback_icrc") != "Y":
            crcs = 0
        ns = 1e3 / copy + crcs * 1e3 / icrc
        what = "1 copy" + (" + %d ICRC" % crcs if crcs else "")
        return 1e3 / ns, what

    def bound_table(self, kernel):
        """sroce's bandwidth as a share of the per-byte bound, beside the
        share of glibc's memcpy()."""
        release = self.releases[kernel]
        md = self.md
        md.append("### the per-byte bound of a software device, MB/s\n")
        copy_test = self.copy_test(release)
        figs = {t: self.stat(kernel, "sroce", "cpu", t, TIMING_SIZE, 1, "MB/s")
                for t in TIMINGS}
        icrc_impl = self.meta(release).get("icrc", "")
        m = re.search(r"using (\S+)", icrc_impl)
        md.append("Timed by sroce at load, in its VM, over %s (median of the "
                  "boots): kernel copy %s %s, %s %s, ICRC (%s) %s.  The "
                  "bound adds the times per byte: one copy (%s, the receive "
                  "copy at path MTU %d) on the loopback%s; one copy, the "
                  "ICRC on send and the ICRC on receive across a netdev.\n" % (
                      human_size(TIMING_SIZE), TIMINGS["kcopy_page"],
                      figs["kcopy_page"].cell("MB/s"), TIMINGS["kmemcpy"],
                      figs["kmemcpy"].cell("MB/s"),
                      m.group(1) if m else "in use", figs["icrc"].cell("MB/s"),
                      TIMINGS[copy_test], path_mtu(self.meta(release).get("mtu", "")),
                      " (and the ICRC twice: loopback_icrc=Y)"
                      if self.meta(release).get("loopback_icrc") == "Y" else
                      ", no ICRC (loopback_icrc=N)"))
        md.append("| topology | test | size | QPs | sroce | bound | counts | "
                  "sroce / bound | glibc memcpy() | sroce / memcpy |")
        md.append("|---|---|---|---|---|---|---|---|---|---|")
        for topo in TOPOLOGIES:
            bound, what = self.bound(kernel, topo)
            for test, size, qps, unit in self.rows():
                if unit != "MB/s" or size < TIMING_SIZE:
                    continue
                s = self.stat(kernel, "sroce", topo, test, size, qps, unit)
                lim = self.memcpy(kernel, "sroce", size)
                share = s.median / bound if s.median and bound else None
                limit = s.median / lim if s.median and lim else None
                md.append("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                    topo, test, human_size(size), qps, s.cell(unit),
                    "%.1f" % bound if bound else "–", what,
                    "%.1f %%" % (100 * share) if share is not None else "–",
                    "%.1f" % lim if lim else "–",
                    "%.1f %%" % (100 * limit) if limit is not None else "–"))
        md.append("")
        for test in TIMINGS:
            st = figs[test]
            self.summary.append(
                [kernel, "cpu", test, TIMING_SIZE, 1, "MB/s"] +
                stat_fields(st) + stat_fields(Stat()) + ["", "", ""])

    def memcpy_table(self, kernel):
        md = self.md
        md.append("### the limit: one copy of the payload, MB/s\n")
        md.append("memcpy() is the limit; rep movsb, the way the kernel copies "
                  "on this CPU model, is for reference.\n")
        md.append("| size | copy | in sroce's VM | in rdma_rxe's VM | sroce VM / rxe VM |")
        md.append("|---|---|---|---|---|")
        for size in self.sizes:
            for test in COPIES:
                s = self.stat(kernel, "sroce", "cpu", test, size, 1, "MB/s")
                r = self.stat(kernel, "rxe", "cpu", test, size, 1, "MB/s")
                ratio = s.median / r.median if s.median and r.median else None
                md.append("| %s | %s | %s | %s | %s |" % (
                    human_size(size), COPIES[test], s.cell("MB/s"),
                    r.cell("MB/s"), "%.2f×" % ratio if ratio else "–"))
                self.summary.append(
                    [kernel, "cpu", test, size, 1, "MB/s"] +
                    stat_fields(s) + stat_fields(r) + [fmt_num(ratio), "", ""])
        md.append("")

    def qp_table(self, kernel):
        qps = sorted({q for t, s, q in self.points
                      if t == "ib_write_bw" and s == 65536})
        if len(qps) < 2:
            return
        md = self.md
        md.append("### QP scaling: ib_write_bw 64 KiB, MB/s and × 1 QP\n")
        header = "| QPs |"
        cols = []
        for topo, (_title, drivers) in TOPOLOGIES.items():
            for driver in drivers:
                header += " %s %s |" % (driver, topo)
                cols.append((driver, topo))
        md.append(header)
        md.append("|---" * (len(cols) + 1) + "|")
        for q in qps:
            line = "| %d |" % q
            for driver, topo in cols:
                v = self.stat(kernel, driver, topo, "ib_write_bw", 65536, q, "MB/s").median
                one = self.stat(kernel, driver, topo, "ib_write_bw", 65536, 1, "MB/s").median
                if v is None:
                    line += " – |"
                elif one:
                    line += " %.1f (%.2f×) |" % (v, v / one)
                else:
                    line += " %.1f |" % v
            md.append(line)
        md.append("")

    def target(self, kernel, topo, kind, test, size, qps, threshold):
        """(verdict, text) of one target on one topology."""
        drivers = TOPOLOGIES[topo][1]
        unit = "usec" if test.endswith("_lat") else "MB/s"
        s = self.stat(kernel, "sroce", topo, test, size, qps, unit).median
        if kind == "rxe":
            if "rxe" not in drivers:
                return None, "n/a"
            ref = self.stat(kernel, "rxe", topo, test, size, qps, unit).median
        elif kind == "limit":
            ref = self.memcpy(kernel, "sroce", size)
        else:
            ref = self.stat(kernel, "sroce", topo, test, size, 1, unit).median
        if s is None or not ref:
            return None, "no data"
        value = s / ref
        ok = value <= threshold if unit == "usec" else value >= threshold
        shown = "%.1f %%" % (100 * value) if kind == "limit" else "%.2f×" % value
        return ok, "%s %s" % ("PASS" if ok else "FAIL", shown)

    def targets_table(self, kernel):
        md = self.md
        topos = list(TOPOLOGIES)
        md.append("### targets (on the medians)\n")
        md.append("| target | " + " | ".join(topos) + " |")
        md.append("|---" * (len(topos) + 1) + "|")
        for name, kind, test, size, qps, threshold in TARGETS:
            if (test, size, qps) not in self.points:
                continue
            cells = []
            for topo in topos:
                ok, text = self.target(kernel, topo, kind, test, size, qps, threshold)
                cells.append(text)
                if ok is not None:
                    self.verdicts.append("%s %-6s %-42s %s" % (
                        "PASS" if ok else "FAIL", kernel, name + " (" + topo + ")", text[5:]))
            md.append("| %s | %s |" % (name, " | ".join(cells)))
        md.append("")

    def counters_table(self, kernel):
        """The points whose runs retransmitted, NAKed or dropped."""
        md = self.md
        rows = sorted((k, v) for k, v in self.counters.items()
                      if k[0] == kernel and any(v.values()))
        md.append("### counters that moved (all runs of a point, summed)\n")
        if not rows:
            md.append("None: no retransmit, NAK, drop or error counter moved.\n")
            return
        md.append("| driver | topology | test | size | QPs | counters |")
        md.append("|---|---|---|---|---|---|")
        for (_k, driver, topo, test, size, qps), moved in rows:
            text = ", ".join("%s %d" % (n, d) for n, d in sorted(moved.items()) if d)
            md.append("| %s | %s | %s | %s | %d | %s |" % (
                driver, topo, test, human_size(size), qps, text))
        md.append("")

    def header(self):
        a = self.args
        md = self.md
        md.append("# sroce benchmark: sroce against rdma_rxe\n")
        md.append("- set: %s, %d run(s) a point; sroce %s" % (a.set, a.repeat, a.commit))
        for release in a.releases:
            for driver in DRIVERS:
                m = load_meta(a.out, driver, release, a.repeat)
                md.append("- %s, %s VM: %s vCPUs (QEMU TCG), clocksource %s, "
                          "veth MTU %s, %s; harness: %s" % (
                              release, driver, m.get("cpus", "?"),
                              m.get("clocksource", "?"), m.get("mtu", "?"),
                              "%d min %d s" % divmod(m["secs"], 60)
                              if "secs" in m else "VM time unknown",
                              m.get("harness", "no summary")))
                if m.get("icrc"):
                    md.append("  - ICRC CRC-32 timed at load: %s" % m["icrc"])
        md.append("")
        md.append("Each cell is the median of the runs, [min–max] the spread. "
                  "sroce/rxe is the ratio of the medians (higher is better for "
                  "MB/s and Mpps, lower for usec, perftest's typical latency, "
                  "and for kCPU-s/GB, the guest's kernel CPU-seconds (system, "
                  "irq, softirq; perftest's polling is user time) per GB a "
                  "bandwidth run moved); "
                  "sroce / memcpy is sroce's bandwidth as a share of one "
                  "memcpy() of the same size in sroce's VM, the limit of a "
                  "software device; sroce / bound, its share of the per-byte "
                  "bound of a software device in that VM (a kernel copy per "
                  "byte, plus the ICRC on both ends across a netdev), the "
                  "number to push towards 100 %%.  Message rate (Mpps) is the bandwidth "
                  "tests' MsgRate at %s.\n" % human_size(min(self.sizes or [64])))

    def build(self):
        self.header()
        for release in self.args.releases:
            kernel = kernel_label(release)
            self.md.append("## kernel %s (%s)\n" % (kernel, release))
            for topo in TOPOLOGIES:
                self.topology_table(kernel, topo)
            self.qp_table(kernel)
            self.memcpy_table(kernel)
            self.bound_table(kernel)
            self.targets_table(kernel)
            self.counters_table(kernel)
            self.check_present(kernel)
            plot(self, kernel)
        if self.missing:
            self.md.append("## missing points\n")
            self.md.extend("- " + m for m in self.missing)
            self.md.append("")
        else:
            self.md.append("All %d points present on every driver and topology.\n"
                           % len(self.points))

    def write(self):
        out = self.args.out
        with open(os.path.join(out, "report.md"), "w") as f:
            f.write("\n".join(self.md))
        with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kernel", "topology", "test", "size", "qps", "unit",
                        "sroce_median", "sroce_min", "sroce_max", "sroce_valid", "sroce_runs",
                        "rxe_median", "rxe_min", "rxe_max", "rxe_valid", "rxe_runs",
                        "ratio", "share_of_memcpy", "share_of_bound"])
            w.writerows(self.summary)


def fmt_num(v):
    return "" if v is None else "%.6g" % v


def stat_fields(st):
    """median, min, max, valid runs, runs: the summary.csv columns."""
    return [fmt_num(st.median), fmt_num(min(st.values, default=None)),
            fmt_num(max(st.values, default=None)), len(st.values), st.runs]


def plot(report, kernel):
    """bw-KERNEL.png: MB/s against message size, one panel a test."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tests = [t for t in ("ib_write_bw", "ib_read_bw", "ib_send_bw")
             if any(p[0] == t for p in report.points)]
    if not tests:
        return
    colors = {"sroce": "tab:blue", "rxe": "tab:orange"}
    styles = {"loop": ("-", "o"), "veth": ("--", "s"), "netns": (":", "^")}
    fig, axes = plt.subplots(1, len(tests), figsize=(5 * len(tests), 4.5),
                             sharey=True, squeeze=False)
    limit = [(s, report.memcpy(kernel, "sroce", s)) for s in report.sizes]
    limit = [(s, v) for s, v in limit if v]
    rep = [(s, report.memcpy(kernel, "sroce", s, "rep_movsb")) for s in report.sizes]
    rep = [(s, v) for s, v in rep if v]
    for ax, test in zip(axes[0], tests):
        for topo, (_title, drivers) in TOPOLOGIES.items():
            for driver in drivers:
                xs, ys, lo, hi = [], [], [], []
                for size in report.sizes:
                    st = report.stat(kernel, driver, topo, test, size, 1, "MB/s")
                    if st.median is None:
                        continue
                    xs.append(size)
                    ys.append(st.median)
                    lo.append(st.median - min(st.values))
                    hi.append(max(st.values) - st.median)
                if not xs:
                    continue
                ls, marker = styles[topo]
                ax.errorbar(xs, ys, yerr=[lo, hi], color=colors[driver],
                            linestyle=ls, marker=marker, capsize=3,
                            label="%s %s" % (driver, topo))
        if limit:
            ax.plot([s for s, _ in limit], [v for _, v in limit], color="black",
                    linewidth=2, label="memcpy limit")
            ax.plot([s for s, _ in limit], [v / 2 for _, v in limit], color="gray",
                    linestyle="-.", linewidth=1, label="50% of the limit")
        if rep:
            ax.plot([s for s, _ in rep], [v for _, v in rep], color="black",
                    linestyle=":", linewidth=1, label="rep movsb (kernel copy)")
        for topo, color in (("loop", "tab:green"), ("veth", "tab:red")):
            bound, what = report.bound(kernel, topo)
            if bound:
                ax.axhline(bound, color=color, linestyle="--", linewidth=1,
                           label="bound %s (%s)" % (
                               "loopback" if topo == "loop" else "netdev", what))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(report.sizes)
        ax.set_xticklabels([human_size(s) for s in report.sizes])
        ax.set_title(test)
        ax.set_xlabel("message size")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("MB/s (median, bars: min–max)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if labels:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels),
                   fontsize="small", frameon=False)
    fig.suptitle("kernel %s: bandwidth against message size, 2 vCPUs (TCG), "
                 "%d run(s) a point" % (kernel, report.args.repeat))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(os.path.join(report.args.out, "bw-%s.png" % kernel), dpi=100)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--points", required=True)
    p.add_argument("--set", default="full", choices=("full", "smoke"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--commit", default="unknown")
    p.add_argument("releases", nargs="+", metavar="RELEASE")
    args = p.parse_args()

    report = Report(args)
    report.build()
    report.write()
    print("\n".join(report.md))
    if report.verdicts:
        print("targets:")
        print("\n".join("  " + v for v in report.verdicts))
    sys.stdout.flush()
    if report.missing:
        print("report.py: %d point(s) without a result, see report.md"
              % len(report.missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

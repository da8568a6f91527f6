#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwss-lab matrix without a network: --list prints the 40 cells of the grid
(5 queues × 2 congestion controls × 2 rate shapes × 2 links), --quick and
--cells select, bad selections exit 2; a cell with a valid summary is not
run again (unless --again), an invalid one is; and the report is generated
from summaries: every cell a row, invalid runs give no figure but their
reason, the first section counts the cells where bwss met the targets.
Also the scenario options of the second machine and of many-connection
downloads: their bad values exit 2, their command lines.  (TAP output.)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "bwss-lab")
sys.path.insert(0, HERE)
from bwsslab import clients, hosts, matrix  # noqa: E402
from bwsslab.scenario import SCENARIOS  # noqa: E402

n = 0
good = True


def check(cond, msg):
    global n, good
    n += 1
    good &= bool(cond)
    print(("ok %d - " if cond else "not ok %d - ") % n + msg)


def lab(*args):
    return subprocess.run([sys.executable, LAB] + list(args), capture_output=True, text=True)


# ---- the grid ----
r = lab("matrix", "--list")
rows = [l.split() for l in r.stdout.splitlines()]
names = [x[0] for x in rows]
check(r.returncode == 0 and len(rows) == 40 and len(set(names)) == 40,
      "--list prints 40 distinct cells (%d)" % len(rows))
combos = {(next(s for s in x if s.startswith("bottleneck=")), next((s for s in x if s.startswith("queue_ms=")), ""),
           next(s for s in x if s.startswith("sender_cc=")), next((s for s in x if s.startswith("link_trace=")), ""),
           next(s for s in x if s.startswith("link_kbps="))) for x in rows}
check(len(combos) == 40, "the cells are the 40 combinations of queue, sender, rate shape and link")
where = {x[0]: x[1] for x in rows}
check(where["droptail12-bbr-fixed-960k"] == "tbf" and where["droptail12-bbr-wifi-960k"] == "stage"
      and where["codel-cubic-fixed-20M"] == "stage" and where["fq_codel-bbr-fixed-960k"] == "stage",
      "drop-tail at a fixed rate is tbf, a trace or an AQM the stage")
sc = matrix.select("fq_codel-cubic-wifi-20M", False)[0].scenario()
check(sc.link_kbps == 20000 and sc.video_min_kbps == sc.video_kbps == 9000 and sc.cross_kbps == 6667
      and (sc.cross_start, sc.cross_end, sc.duration) == (20, 40, 60) and sc.rtt_bulk == (20, 80)
      and sc.link_trace == "wifi" and sc.bottleneck == "fq_codel",
      "a cell's shape scales with the link: video 45 %, a third of it cross traffic in the middle third")
r = lab("matrix", "--quick", "--list")
check(r.returncode == 0 and len(r.stdout.splitlines()) == 4, "--quick: 4 cells")
r = lab("matrix", "--cells", "codel-*,*-bbr-wifi-20M", "--list")
check(r.returncode == 0 and len(r.stdout.splitlines()) == 8 + 4,
      "--cells: patterns select (%d)" % len(r.stdout.splitlines()))
for args, word in ((["--cells", "nosuch*"], "matches no cell"),
                   (["--quick", "--cells", "codel-*"], "one or the other")):
    r = lab("matrix", *args, "--list")
    msg = (r.stderr.strip().splitlines() or [""])[-1]
    check(r.returncode == 2 and word in msg, "matrix %s -> exit %d: %s" % (" ".join(args), r.returncode, msg))


# ---- resuming, and the report from summaries ----
def summary(mode, valid=True, prebuffer=0.3, at_min=1.0, queue=10.0, agg=900.0, reason=None):
    return {"scenario": "streaming", "mode": mode, "label": "matrix x", "aggregate_kbps": agg,
            "flows": [{"name": "bulk1", "mean_kbps": 111.0}, {"name": "bulk2", "mean_kbps": 222.0},
                      {"name": "video", "mean_kbps": 432.0}],
            "queue_delay_ms": {"median": queue, "p95": 2 * queue}, "video_at_min": at_min,
            "required_prebuffer_s": prebuffer, "link": {"bottleneck": "droptail", "trace": None},
            "valid": valid, "invalid_reasons": [] if valid else [reason],
            "matrix": {"cell": "x", "commit": "abc123def456", "date": "2026-11-26"}}


A, B, C = "droptail150-cubic-fixed-960k", "codel-bbr-fixed-960k", "fq_codel-cubic-fixed-20M"
with tempfile.TemporaryDirectory() as d:
    def put(cell, mode, s):
        os.makedirs(os.path.join(d, cell, mode), exist_ok=True)
        with open(os.path.join(d, cell, mode, "summary.json"), "w") as f:
            json.dump(s, f)
    # A: bwss meets every target (prebuffer 0.25 s <= the ideal's 0.04 + 0.25;
    # queue 20 ms <= 25; aggregate 776 >= 0.9 x the ideal's 812); B: tcp's run
    # invalid (not judged); C: bwss needs 3 s of prebuffer (the ideal 0.3 s:
    # bound 0.6) and queues 12 ms where tcp's + 5 is 10
    put(A, "tcp", summary("tcp", prebuffer=40.0, at_min=0.1, queue=130.0, agg=810))
    put(A, "bwss", summary("bwss", prebuffer=0.25, at_min=0.99, queue=20.0, agg=776))
    put(A, "ideal", summary("ideal", prebuffer=0.04, queue=1.4, agg=812))
    put(B, "tcp", summary("tcp", valid=False, reason="delay stage p99 lateness 4100 us"))
    put(B, "bwss", summary("bwss"))
    put(C, "tcp", summary("tcp", queue=5.0, agg=19000))
    put(C, "bwss", summary("bwss", prebuffer=3.0, queue=12.0, agg=18000))
    put(C, "ideal", summary("ideal", agg=19000))
    cell = {c.name: c for c in matrix.cells()}
    check(matrix.pending(d, cell[A], matrix.MODES) == [] and
          matrix.pending(d, cell[A], matrix.MODES, again=True) == list(matrix.MODES),
          "a cell with valid summaries is not run again, unless --again")
    check(matrix.pending(d, cell[B], matrix.MODES) == ["tcp", "ideal"],
          "an invalid or missing mode is run again: %s" % matrix.pending(d, cell[B], matrix.MODES))
    out = os.path.join(d, "r.md")
    r = lab("matrix", "--report-only", "--out", d, "--report", out)
    text = open(out).read() if r.returncode == 0 else ""
    byname = {l.split("|")[1].strip(): l for l in text.splitlines() if l.startswith("| ") and "-" in l.split("|")[1]}
    check(r.returncode == 0 and sum(1 for k in byname if k in cell) == 40, "the report has a row per cell (%d)"
          % sum(1 for k in byname if k in cell))
    check("tests/lab/bwss-lab matrix --report-only" in text and "abc123def456" in text and "2026-11-26" in text,
          "the report names the command, the commit and the date")
    check("**bwss met every target in 1 of 2 cells judged**" in text and "run but not judged: 1, not run: 37" in text,
          "the first section counts the cells that met the targets")
    check("| video at its minimum | >= 98 % of the seconds" in text
          and "| required prebuffer | <= max(2 × the ideal router's, the ideal's + 0.25 s) | 1 of 2 |" in text
          and "| queue median | <= min(25 ms, plain TCP's + 5 ms) | 1 of 2 |" in text
          and "| aggregate | >= 90 % of the ideal router's | 2 of 2 |" in text, "... per target")
    a = byname.get(A, "")
    check("| yes |" in a and "40.00 / 0.25 / 0.04" in a and "10 / 99 / 100" in a
          and "130.0 / 20.0 / 1.4 ‖ 260.0 / 40.0 / 2.8" in a
          and "810 / 776 / 812" in a and "111 / 111 / 111" in a and "bwss: all" in a, "a judged cell's row: %s" % a)
    b = byname.get(B, "")
    check("**no** (tcp: delay stage p99 lateness 4100 us; not run: ideal)" in b and "- / 0.30 / -" in b
          and "bwss: -" in b, "an invalid run gives no figure and its reason: %s" % b)
    check("missed prebuffer, queue" in byname.get(C, ""), "the targets a cell missed are named")
    check("| not run |" in byname.get("droptail12-cubic-fixed-960k", ""), "a cell not run says so")
    r = lab("matrix", "--report-only", "--adopt", "--out", d, "--report", out)
    text = open(out).read() if r.returncode == 0 else ""
    check("bwss-adopt met every target in 0 of 0 cells judged" in text and "40.00 / 0.25 / 0.04 / -" in text,
          "--adopt: a fourth mode in every figure and its own count")

# ---- the targets' bounds, each at its edge ----
def judged(bwss, tcp=None, ideal=None):
    runs = {"tcp": summary("tcp", **(tcp or {})), "bwss": summary("bwss", **bwss),
            "ideal": summary("ideal", **(ideal or {}))}
    return matrix.judge(runs)


edges = [
    ("video 98 % of the seconds met, 97.9 % not", judged({"at_min": 0.98})["video"] and not judged({"at_min": 0.979})["video"]),
    ("prebuffer: the ideal's + 0.25 s where that is more (ideal 0.05: 0.30 met, 0.31 not)",
     judged({"prebuffer": 0.30}, ideal={"prebuffer": 0.05})["prebuffer"]
     and not judged({"prebuffer": 0.31}, ideal={"prebuffer": 0.05})["prebuffer"]),
    ("prebuffer: twice the ideal's where that is more (ideal 0.5: 1.0 met, 1.01 not)",
     judged({"prebuffer": 1.0}, ideal={"prebuffer": 0.5})["prebuffer"]
     and not judged({"prebuffer": 1.01}, ideal={"prebuffer": 0.5})["prebuffer"]),
    ("queue: 25 ms where plain TCP queues more (tcp 130: 25 met, 25.1 not)",
     judged({"queue": 25.0}, tcp={"queue": 130.0})["queue"] and not judged({"queue": 25.1}, tcp={"queue": 130.0})["queue"]),
    ("queue: plain TCP's + 5 ms where that is lower (tcp 3: 8 met, 8.1 not)",
     judged({"queue": 8.0}, tcp={"queue": 3.0})["queue"] and not judged({"queue": 8.1}, tcp={"queue": 3.0})["queue"]),
    ("aggregate: 90 % of the ideal router's, not of plain TCP's (ideal 1000, tcp 800: 900 met, 899 not)",
     judged({"agg": 900.0}, tcp={"agg": 800.0}, ideal={"agg": 1000.0})["aggregate"]
     and not judged({"agg": 899.0}, tcp={"agg": 800.0}, ideal={"agg": 1000.0})["aggregate"]),
]
for what, ok in edges:
    check(ok, "target " + what)

# ---- hosts=2 and bulk_conns ----
BAD = [("hosts=3", "hosts"), ("host2=vlc", "host2"), ("bulk_conns=0", "bulk_conns"), ("bulk_conns=33", "bulk_conns"),
       ("bulk_conns=8,0", "bulk_conns"),
       ("host2_bulk=0", "host2_bulk")]
for setting, word in BAD:
    r = lab("run", "streaming", "--set", "hosts=2", "--set", setting)
    msg = (r.stderr.strip().splitlines() or [""])[-1]
    check(r.returncode == 2 and word in msg, "--set %s -> exit %d: %s" % (setting, r.returncode, msg))
sc = SCENARIOS["streaming"].with_sets(["bulk_conns=8"])
cmd = clients.client_cmd(sc, "bwss", "/b", "bulk", 1)
ranges = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-r"]
check(cmd[:3] == ["/b/libbwss/programs/tools/bwss-run", "--weight", "1"] and cmd.count("curl") == 1
      and "--parallel-immediate" in cmd and len(ranges) == 8 and cmd.count("--next") == 7,
      "bulk_conns=8: one bwss-run, one curl, 8 ranges")
spans = [tuple(int(x) for x in rg.split("-")) for rg in ranges]
check(spans[0][0] == 0 and spans[-1][1] == clients.BULK_FILE_BYTES - 1
      and all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:])), "the ranges cover the file once")
sc8 = SCENARIOS["streaming"].with_sets(["bulk_conns=8,1"])
check(clients.client_cmd(sc8, "bwss", "/b", "bulk", 0).count("-r") == 8
      and clients.client_cmd(sc8, "bwss", "/b", "bulk", 1).count("-r") == 0,
      "bulk_conns=8,1: the first download of 8 connections, the second of one")
check(clients.client_cmd(SCENARIOS["streaming"], "bwss-adopt", "/b", "bulk", 0) ==
      ["curl", "-sSf", "-o", "/dev/null", "http://10.77.2.11/bulk.bin"], "bulk_conns=1: one plain curl")
sc2 = SCENARIOS["streaming"].with_sets(["hosts=2", "host2=bwss", "host2_bulk=3", "rtt_bulk=20,80"])
fl = hosts.host2_flows(sc2)
check([f[0] for f in fl] == ["host2-bulk1", "host2-bulk2", "host2-bulk3"] and [f[2] for f in fl] == [80, 80, 80]
      and len({f[1] for f in fl}) == 3, "the second machine's downloads: names, RTTs, their own servers: %s" % fl)
rules = hosts.adopt_rules(sc2)
check(all("remote-address=%s" % f[1] in rules for f in fl) and rules.count("weight=1") == 3,
      "its bwssd's rules adopt each of them")
print("1..%d" % n)
sys.exit(0 if good else 1)

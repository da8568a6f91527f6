#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwss-lab matrix without a network: --list prints the 40 cells of the grid
(5 queues × 2 congestion controls × 2 rate shapes × 2 links) and the
household's (traffic bwss does not control on the same link), --quick and
--cells select, bad selections exit 2; a cell with a valid summary is not
run again (unless --again), an invalid one is; and the report is generated
from summaries: every cell a row, invalid runs give no figure but their
reason, the first section counts the cells where bwss met the targets.
Baseline runs (tcp, ideal) count on another commit exactly where their key
is this build's: the key read from the build (argument: its root), a
changed stage or runner file, kernel or package a rerun, a changed libbwss
file the stage and recorder do not link a reuse, shown on a real recorded
run (tests/lab/recorded/) analysed again.  Also the scenario options of the
second machine and of many-connection downloads: their bad values exit 2,
their command lines.  (TAP output.)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "bwss-lab")
sys.path.insert(0, HERE)
from bwsslab import baseline, cli, clients, hosts, matrix, paths  # noqa: E402
from bwsslab.scenario import SCENARIOS, ScenarioError  # noqa: E402

from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check
if len(sys.argv) != 2 or not os.path.isdir(os.path.join(sys.argv[1], "meson-info")):
    print("usage: test-matrix.py BUILD_ROOT (a meson build of this tree: the baseline key is read from it)",
          file=sys.stderr)
    sys.exit(2)
BUILD = os.path.abspath(sys.argv[1])


def lab(*args):
    return subprocess.run([sys.executable, LAB] + list(args), capture_output=True, text=True)


# ---- the grid ----
r = lab("matrix", "--list")
every = [l.split() for l in r.stdout.splitlines()]
rows = [x for x in every if not x[0].startswith("household-")]
names = [x[0] for x in rows]
check(r.returncode == 0 and len(rows) == 40 and len(set(names)) == 40,
      "--list prints the grid's 40 distinct cells (%d)" % len(rows))
hh = [x for x in every if x[0].startswith("household-")]
check(len(hh) == len(matrix.HOUSEHOLD) == 8 and every[40:] == hh,
      "... then the household's 8 (%d)" % len(hh))
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
hc = {c.name: c for c in matrix.household_cells()}
sc = hc["household-droptail150-3tcp"].scenario()
check(sc.link_kbps == 8000 and sc.hosts == 2 and sc.host2 == "tcp" and sc.host2_bulk == 3
      and sc.video_kbps == sc.video_min_kbps == 1000 and sc.bulk == 2 and sc.cross_kbps == 0
      and sc.queue_ms == 150 and sc.duration == 60 and hc["household-droptail150-3tcp"].modes == ("tcp", "bwss"),
      "a household cell: 8 Mbit/s, the neighbour's downloads, our video and two downloads, modes tcp and bwss")
check(all(c.scenario().video_client == "gst" for c in hc.values())
      and clients.client_cmd(sc, "bwss", "/b", "video")[2] == "bwsshttpsrc"
      and clients.client_cmd(sc, "tcp", "/b", "video")[2] == "souphttpsrc"
      and not any(x.startswith(("striping=", "connections=")) for x in clients.client_cmd(sc, "bwss", "/b", "video")),
      "the household's video is the element: bwsshttpsrc at its defaults in bwss, souphttpsrc in tcp")
st = sc.with_sets(["video_striping=always", "video_connections=2"])
cmd = clients.client_cmd(st, "bwss", "/b", "video")
check("striping=always" in cmd and "connections=2" in cmd and cmd.index("connections=2") < cmd.index("!")
      and "striping" not in " ".join(clients.client_cmd(st, "tcp", "/b", "video")),
      "video_striping and video_connections set bwsshttpsrc's properties, in bwss modes only: %s" % " ".join(cmd))
refused = []
for bad in (["video_striping=sometimes"], ["video_connections=9"], ["video_client=curl", "video_striping=always"],
            ["video_client=curl", "video_connections=2"]):
    try:
        sc.with_sets(bad)
    except ScenarioError as e:
        refused.append(str(e))
check(len(refused) == 4 and "one of auto, never, always" in refused[0] and "1 to 8" in refused[1]
      and all("video_client=gst" in x for x in refused[2:]),
      "a striping not auto/never/always, 9 connections, either with curl: refused, with why")
sc = hc["household-droptail150-1tcp-on20-60"].scenario()
check(sc.host2_window() == (20.0, 60.0) and sc.duration == 90
      and "back" in hc["household-droptail150-1tcp-on20-60"].targets,
      "the neighbour that leaves: on 20-60 s of 90, judged on the queue's return")
check(hc["household-droptail150-udp"].scenario().host2_udp() == 2000 and hc["household-droptail150-quic"].scenario().quic == 1
      and hc["household-fq_codel-1tcp"].scenario().bottleneck == "fq_codel", "inelastic UDP, QUIC, FQ-CoDel households")
r = lab("matrix", "--cells", "household-*", "--list")
check(r.returncode == 0 and len(r.stdout.splitlines()) == 8, "--cells household-*: the household's 8")
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


REV = "abc123def456"       # the commit the summaries above were made on, and the report's
# a baseline key as a run records it (baseline.key()): here the summaries' own
KEY = {"version": baseline.KEY_VERSION, "kernel": "6.18.44", "machine": "AMD EPYC, 2 CPUs, machine-id 1",
       "tools": {"curl": "7.88.1"}, "python": "3.11.2", "files": {"tests/lab/lab-aqm.c": "0" * 64},
       "headers": "h", "commands": "c", "compiler": "cc 12.2.0"}


A, B, C = "droptail150-cubic-fixed-960k", "codel-bbr-fixed-960k", "fq_codel-cubic-fixed-20M"
with tempfile.TemporaryDirectory() as d:
    def put(cell, mode, s):
        if cell in {c.name for c in matrix.every_cell()}:
            s = dict(s, baseline=KEY, parameters=next(c for c in matrix.every_cell() if c.name == cell)
                     .scenario().parameters())
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
    # household: 1tcp meets its targets (this machine 5200 >= 0.9 x 5742, the
    # video 98 %, each download >= half its TCP rate); codel-1tcp starves a
    # download; on20-60's queue is back in 7 s
    def hsum(mode, machine, video, b1, b2, queue=20.0, back=None, other=2500.0):
        x = summary(mode, at_min=video, queue=queue)
        x["flows"] = [{"name": "bulk1", "mean_kbps": b1}, {"name": "bulk2", "mean_kbps": b2},
                      {"name": "video", "mean_kbps": 2000.0}, {"name": "host2-bulk1", "mean_kbps": other}]
        x["machines"] = {"1": machine, "2": other}
        x["progress"] = {"longest_stall_s": {"bulk1": 1.0}}
        x["faults"] = []
        if back is not None:
            x["host2_on"] = {"during": {"machines": {"1": machine, "2": other}}, "after": {"queue_back_s": back}}
        return x
    H1, H2, H3 = "household-droptail150-1tcp", "household-codel-1tcp", "household-droptail150-1tcp-on20-60"
    put(H1, "tcp", hsum("tcp", 5742, 0.40, 1800, 1900, queue=140.0))
    put(H1, "bwss", hsum("bwss", 5200, 0.98, 1500, 1700, queue=140.0))
    put(H2, "tcp", hsum("tcp", 5742, 0.40, 1800, 1900))
    put(H2, "bwss", hsum("bwss", 5742, 1.0, 899, 2843))
    put(H3, "tcp", hsum("tcp", 5742, 0.40, 1800, 1900, back=0))
    put(H3, "bwss", hsum("bwss", 5742, 1.0, 1800, 1900, back=7))
    # household-runs.py's row of a cell (docs/household.md's tables): this machine's share, the video,
    # each download's share of its plain-TCP rate, the neighbour; and a bwss run beside another's tcp
    put("tcp-elsewhere", "tcp", hsum("tcp", 6000, 0.5, 3000, 2000))
    r = subprocess.run([sys.executable, os.path.join(HERE, "household-runs.py"), os.path.join(d, H1),
                        "%s:%s" % (os.path.join(d, H2), os.path.join(d, "tcp-elsewhere"))],
                       capture_output=True, text=True)
    shutil.rmtree(os.path.join(d, "tcp-elsewhere"))           # not a cell of the report below
    rows = [l for l in r.stdout.splitlines() if l.startswith("| x |")]      # the summaries' matrix cell: x
    check(r.returncode == 0 and len(rows) == 2 and "abc123def456" in rows[0] and "| 5200 / 5742 | 90.6 % |" in rows[0]
          and "| 98.0 % (40.0 %) | 83.3 % / 89.5 % | 2500 (2500) |" in rows[0]
          and "| 5742 / 6000 | 95.7 % | 100.0 % (50.0 %) | 30.0 % / 142.2 % |" in rows[1]
          and r.stdout.startswith("Generated by `tests/lab/household-runs.py "),
          "household-runs.py: a row per run, shares of plain TCP's; DIR:TCP_DIR pairs another run's tcp: %s"
          % (rows or r.stderr))
    cell = {c.name: c for c in matrix.every_cell()}
    check(matrix.pending(d, cell[H1], matrix.cell_modes(cell[H1], matrix.MODES), REV, KEY) == [],
          "a household cell needs no ideal router's run")
    check(matrix.pending(d, cell[A], matrix.MODES, REV, KEY) == [] and
          matrix.pending(d, cell[A], matrix.MODES, REV, KEY, again=True) == list(matrix.MODES),
          "a cell with valid summaries of this commit is not run again, unless --again")
    only = matrix.parse_modes("ideal, tcp")
    check(only == ("tcp", "ideal") and matrix.parse_modes(None) == matrix.MODES
          and matrix.parse_modes(None, adopt=True) == matrix.MODES + (matrix.ADOPT_MODE,)
          and matrix.pending(d, cell[A], only, REV, KEY, again=True) == ["tcp", "ideal"]
          and matrix.cell_modes(cell[H1], only) == ("tcp",),
          "--modes tcp,ideal: only the baselines are run, in the grid's order (a household cell: tcp): %s" % (only,))
    for bad in ("tcp,bwss-paper", "", " , "):
        try:
            matrix.parse_modes(bad)
            refused = None
        except Exception as e:                        # LabError, exit 2
            refused = e
        check(refused is not None and getattr(refused, "code", None) == 2 and "--modes" in str(refused),
              "--modes %r is refused, naming the modes: %s" % (bad, refused))
    check(matrix.pending(d, cell[B], matrix.MODES, REV, KEY) == ["tcp", "ideal"],
          "an invalid or missing mode is run again: %s" % matrix.pending(d, cell[B], matrix.MODES, REV, KEY))
    steps = matrix.plan(d, cell[A], matrix.MODES, "0123456789ab", KEY)
    check([(m, a) for m, a, _ in steps] == [("tcp", "keep"), ("bwss", "run"), ("ideal", "keep")]
          and "made on abc123def456, not 0123456789ab" in steps[1][2],
          "on another commit: the bwss run is run again, tcp and ideal kept (the same baseline key): %s" % steps)
    dirty = matrix.not_counted(dict(summary("bwss"), commit=REV + "+"), "bwss", cell[A], REV + "+", KEY)
    check(any("a tree with changes" in w for w in dirty),
          "a tree with changes: its bwss runs are not resumed (the label says nothing of the changes): %s" % dirty)
    steps = matrix.plan(d, cell[A], matrix.MODES, REV, dict(KEY, kernel="6.1.0-28-amd64"))
    check([(m, a) for m, a, _ in steps] == [("tcp", "run"), ("bwss", "keep"), ("ideal", "run")]
          and "kernel 6.18.44, now 6.1.0-28-amd64" in steps[0][2],
          "another kernel: tcp and ideal run again: %s" % steps[0][2])
    out = os.path.join(d, "r.md")
    r = lab("matrix", "--report-only", "--out", d, "--report", out)
    text = open(out).read() if r.returncode == 0 else ""
    byname = {l.split("|")[1].strip(): l for l in text.split("## The household")[0].splitlines()
              if l.startswith("| ") and "-" in l.split("|")[1]}
    grid = {c.name for c in matrix.cells()}
    check(r.returncode == 0 and sum(1 for k in byname if k in grid) == 40, "the report has a row per cell (%d)"
          % sum(1 for k in byname if k in grid))
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
    hrows = {l.split("|")[1].strip(): l for l in text.split("## The household")[-1].split("## Where the runs")[0]
             .splitlines() if l.startswith("| household-")}
    origin = {l.split("|")[1].strip(): l for l in text.split("## Where the runs come from")[-1].splitlines()
              if l.startswith("| ") and "-" in l.split("|")[1]}
    check("for commit %s; bwss runs from commit abc123def456, tcp and ideal runs made on abc123def456 (0 of 8 "
          "reused" % matrix.commit(BUILD) in text
          and origin.get(A) == "| %s | abc123def456 | abc123def456 | abc123def456 |" % A
          and origin.get(H1) == "| %s | abc123def456 | abc123def456 | n/a |" % H1 and len(origin) == 3 + 3,
          "the report says where each run came from, per cell and mode: %s" % origin.get(A))
    check(len(hrows) == 8 and "**bwss met every target in 1 of 3 cells judged** (a cell is judged when its tcp and bwss "
          "runs are valid; run but not judged: 0, not run: 5)" in text.split("## The household")[-1],
          "the household: a row per cell and its own count")
    check("| this machine's total | >= 90 % of plain TCP's (while the neighbour runs) | 3 of 3 |" in text
          and "| each of our downloads | >= 50 % of its plain-TCP rate | 2 of 3 |" in text
          and "| the queue after the neighbour leaves | median <= 25 ms within 5 s | 0 of 1 |" in text,
          "... per target, each over the cells judged by it")
    check("5742 / 5200" in hrows.get(H1, "") and "bwss: all" in hrows.get(H1, "") and "1800 / 1500 ‖ 1900 / 1700" in hrows.get(H1, ""),
          "a household row: this machine, the downloads per mode: %s" % hrows.get(H1, ""))
    check("missed downloads" in hrows.get(H2, "") and "missed back" in hrows.get(H3, "")
          and "(back in 0 / 7 s)" in hrows.get(H3, ""), "the household targets missed are named")
    check("| not run |" in byname.get("droptail12-cubic-fixed-960k", ""), "a cell not run says so")
    r = lab("matrix", "--report-only", "--adopt", "--out", d, "--report", out)
    text = open(out).read() if r.returncode == 0 else ""
    check("bwss-adopt met every target in 0 of 0 cells judged" in text and "40.00 / 0.25 / 0.04 / -" in text,
          "--adopt: a fourth mode in every figure and its own count")

# ---- the commit a run carries: its build's source tree's ----
with tempfile.TemporaryDirectory() as d:
    src, build, export = os.path.join(d, "src"), os.path.join(d, "build"), os.path.join(d, "export")
    os.makedirs(os.path.join(build, "meson-info"))
    os.makedirs(export)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    made = subprocess.run("git init -q %s && git -C %s commit -q --allow-empty -m x && git -C %s rev-parse --short=12 HEAD"
                          % (src, src, src), shell=True, capture_output=True, text=True, env=env)
    sha = made.stdout.strip()

    def info(source):
        with open(os.path.join(build, "meson-info", "meson-info.json"), "w") as f:
            json.dump({"directories": {"source": source, "build": build}}, f)
    info(src)
    check(made.returncode == 0 and len(sha) == 12 and matrix.commit(build) == sha,
          "a run carries the commit of the tree its build was configured from (%s, %s)" % (matrix.commit(build), sha))
    info(export)
    check(matrix.commit(build) == "unknown (%s)" % export,
          "a build from a tree outside git carries no commit: %s" % matrix.commit(build))
    own = matrix.commit()
    check(matrix.commit(os.path.join(d, "none")) == own and own != "unknown",
          "without a build's meson-info, the lab's own tree (%s)" % own)

# ---- baseline runs: reused exactly where their key is this build's ----
key = baseline.key(BUILD, paths.SRC_ROOT)
files = key.get("files") or {}
NEEDED = ("tests/lab/bwss-delay.c", "tests/lab/lab-aqm.c", "tests/lab/lab-aqm.h", "tests/lab/lab-link.c",
          "tests/lab/bwss-lab-sample.c", "libbwss/lib/sys/knobs.c", "libbwss/lib/sys/sys.h")
# the recorder links the socket dump alone: the domain and the laws' parameters are bwss-lab-domain's
UNLINKED = ("libbwss/lib/laws/controller.c", "libbwss/lib/laws/capacity-compete.c", "libbwss/lib/laws/fcs.c",
            "libbwss/lib/laws/allocation.c", "libbwss/lib/laws/late.c", "libbwss/lib/laws/params.c",
            "libbwss/lib/laws/sigma.c", "libbwss/lib/domain/client.c", "libbwss/lib/domain/runtime.c",
            "tests/lab/bwss-lab-domain.c")
check("none" not in key and all(p in files for p in NEEDED + baseline.RUNNER),
      "the key, read from the build: the runner, the stage's and the recorder's sources and headers (%d files): %s"
      % (len(files), key.get("none") or [p for p in NEEDED + baseline.RUNNER if p not in files]))
check(not any(p in files for p in UNLINKED) and not any(p.startswith("gst-plugin/") for p in files)
      and len(key["headers"]) == len(key["commands"]) == 64 and key["compiler"] and key["tools"],
      "... not the laws the recorder does not link, nor the element; the headers, commands, compiler, packages")
check(clients.client_env(SCENARIOS["streaming"], "tcp", {"GST_PLUGIN_PATH": "/b/gst-plugin"}, "video") == {}
      and clients.client_env(SCENARIOS["streaming"], "bwss", {"GST_PLUGIN_PATH": "/b/gst-plugin"}, "video")
      == {"GST_PLUGIN_PATH": "/b/gst-plugin"}, "a tcp run's clients never see the project's plug-in path")
with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "src")                       # a copy of the files the key reads, and a law
    for p in list(files) + list(UNLINKED):
        os.makedirs(os.path.dirname(os.path.join(src, p)), exist_ok=True)
        shutil.copy(os.path.join(paths.SRC_ROOT, p), os.path.join(src, p))

    def key_after(path, text="\n/* one more line */\n"):
        """The key with @path of the copy changed (then restored)."""
        full = os.path.join(src, path)
        was = open(full, "rb").read()
        with open(full, "ab") as f:
            f.write(text.encode())
        try:
            return baseline.key(BUILD, src, src_root=src)
        finally:
            with open(full, "wb") as f:
                f.write(was)
    k0 = baseline.key(BUILD, src, src_root=src)
    check(baseline.compare(k0, key) == [], "a copy of the tree has the tree's key: %s" % baseline.compare(k0, key))
    rules = [
        ("a changed stage file: run again", baseline.compare(k0, key_after("tests/lab/lab-aqm.c")),
         ["tests/lab/lab-aqm.c changed"]),
        ("a changed runner file: run again", baseline.compare(k0, key_after("tests/lab/bwsslab/topology.py")),
         ["tests/lab/bwsslab/topology.py changed"]),
        ("a changed libbwss file the recorder links: run again",
         baseline.compare(k0, key_after("libbwss/lib/sys/knobs.c")), ["libbwss/lib/sys/knobs.c changed"]),
        ("a changed libbwss file the stage and recorder do not link (controller.c): reused",
         baseline.compare(k0, key_after("libbwss/lib/laws/controller.c")), []),
        ("another kernel: run again", baseline.compare(k0, dict(k0, kernel="6.1.0-28-amd64")),
         ["kernel %s, now 6.1.0-28-amd64" % k0["kernel"]]),
        ("another curl: run again", baseline.compare(k0, dict(k0, tools=dict(k0["tools"], curl="8.14.1-2"))),
         ["package curl %s, now 8.14.1-2" % k0["tools"].get("curl", "absent")]),
        ("another machine: run again", baseline.compare(k0, dict(k0, machine="Intel Xeon, 4 CPUs")),
         ["machine %s, now Intel Xeon, 4 CPUs" % k0["machine"]]),
        ("a run recorded without a key: run again", baseline.compare(None, k0),
         ["the run carries no baseline key (recorded before runs did)"]),
        ("a build whose key cannot be made: nothing reused", baseline.compare(k0, {"none": "stale"}),
         ["this build's key cannot be made: stale"]),
    ]
    for what, got, want in rules:
        check(got == want, "baseline rule: %s (%s)" % (what, got))

    # a real run: the tcp mode of droptail150-cubic-fixed-960k, recorded by
    # the matrix on 5e27e319a185 (tests/lab/recorded/), as another matrix's
    # --out; first as recorded (no key), then as if recorded with this
    # build's key and the cell's parameters of today
    CELL = "droptail150-cubic-fixed-960k"
    cell = next(c for c in matrix.cells() if c.name == CELL)
    prev, out = os.path.join(d, "prev"), os.path.join(d, "out")
    shutil.copytree(os.path.join(HERE, "recorded", CELL, "tcp"), os.path.join(prev, CELL, "tcp"))
    recorded = json.load(open(os.path.join(prev, CELL, "tcp", "summary.json")))
    steps = matrix.plan(out, cell, ("tcp",), REV, k0, [prev])
    check(steps[0][1] == "run" and "carries no baseline key" in steps[0][2],
          "a recorded run without a key is not reused: %s" % steps[0][2])
    with open(os.path.join(prev, CELL, "tcp", "summary.json"), "w") as f:
        json.dump(dict(recorded, baseline=k0, parameters=cell.scenario().parameters()), f)
    for what, k, action, word in (
            ("the same key", k0, "reuse", os.path.join(prev, CELL, "tcp")),
            ("controller.c changed", key_after("libbwss/lib/laws/controller.c"), "reuse", prev),
            ("lab-aqm.c changed", key_after("tests/lab/lab-aqm.c"), "run", "tests/lab/lab-aqm.c changed"),
            ("another kernel", dict(k0, kernel="6.1.0-28-amd64"), "run", "kernel")):
        steps = matrix.plan(out, cell, ("tcp",), REV, k, [prev])
        check(steps[0][1] == action and word in steps[0][2],
              "--baselines-from, %s: %s (%s)" % (what, steps[0][1], steps[0][2]))
    other = dict(recorded, baseline=k0, parameters=dict(cell.scenario().parameters(), link_kbps=20000))
    with open(os.path.join(prev, CELL, "tcp", "summary.json"), "w") as f:
        json.dump(other, f)
    steps = matrix.plan(out, cell, ("tcp",), REV, k0, [prev])
    check(steps[0][1] == "run" and "parameters differ from the cell's: link_kbps" in steps[0][2],
          "a run of other parameters is not the cell's: %s" % steps[0][2])
    with open(os.path.join(prev, CELL, "tcp", "summary.json"), "w") as f:
        json.dump(dict(recorded, baseline=k0, parameters=cell.scenario().parameters()), f)
    s = matrix.reuse(os.path.join(prev, CELL, "tcp"), os.path.join(out, CELL, "tcp"), cell, REV, BUILD,
                     cli.reanalyse_run)
    check(s["valid"] and s["aggregate_kbps"] == recorded["aggregate_kbps"] == 805.8
          and s["video_at_min"] == recorded["video_at_min"]
          and s["required_prebuffer_s"] == recorded["required_prebuffer_s"]
          and s["queue_delay_ms"]["median"] == recorded["queue_delay_ms"]["median"]
          and s["analysed"] == matrix.commit(BUILD)
          and s["reused"]["recorded_on"] == "5e27e319a185" and s["reused"]["key"] == baseline.digest(k0),
          "reused: copied and analysed again from its raw recording with this tree's analysis: the recorded "
          "figures (%s kbit/s, video %s, prebuffer %s s)" % (s["aggregate_kbps"], s["video_at_min"],
                                                             s["required_prebuffer_s"]))
    steps = matrix.plan(out, cell, matrix.MODES, REV, k0, [prev])
    check([(m, a) for m, a, _ in steps] == [("tcp", "keep"), ("bwss", "run"), ("ideal", "run")],
          "then kept in --out; bwss and ideal, never recorded, to run: %s" % steps)
    mine = matrix.Cell("h", "droptail", "cubic", "fixed", 8000, cell.sets + ("hosts=2", "host2=bwss"))
    why = matrix.not_counted(dict(s, parameters=mine.scenario().parameters()), "tcp", mine, REV, k0)
    check(why == ["the second machine runs bwssd (host2=bwss)"],
          "a baseline whose second machine runs bwssd is never reused: %s" % why)
    r = lab("matrix", "--report-only", "--out", out, "--report", os.path.join(d, "r.md"), "--build-dir", BUILD)
    text = open(os.path.join(d, "r.md")).read() if r.returncode == 0 else r.stderr
    check("| %s | 5e27e319a185, reused (key %s) | - | - |" % (CELL, baseline.digest(k0)) in text
          and "tcp and ideal runs made on 5e27e319a185 (1 of 1 reused under their baseline key" in text,
          "the report names the run's commit and the key it counts under")

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


def hjudged(cell, bwss, tcp=None):
    base = {"machine": 5000.0, "video": 1.0, "b1": 1000.0, "b2": 1000.0, "queue": 20.0, "stall": 1.0, "back": None}
    runs = {}
    for mode, over in (("tcp", tcp or {}), ("bwss", bwss)):
        v = dict(base, **over)
        x = summary(mode, at_min=v["video"], queue=v["queue"])
        x["flows"] = [{"name": "bulk1", "mean_kbps": v["b1"]}, {"name": "bulk2", "mean_kbps": v["b2"]}]
        x["machines"] = {"1": v["machine"], "2": 1.0}
        x["progress"] = {"longest_stall_s": {"bulk1": v["stall"]}}
        if v["back"] is not None:
            x["host2_on"] = {"during": {"machines": {"1": v["machine"]}}, "after": {"queue_back_s": v["back"]}}
        runs[mode] = x
    return matrix.judge(runs, "bwss", next(c for c in matrix.household_cells() if c.name == cell))


ONE, UDP, QUIC, ONOFF = ("household-droptail150-1tcp", "household-droptail150-udp", "household-droptail150-quic",
                         "household-droptail150-1tcp-on20-60")
edges += [
    ("household: this machine 90 % of plain TCP's met, 89.9 % not",
     hjudged(ONE, {"machine": 4500.0})["machine"] and not hjudged(ONE, {"machine": 4499.0})["machine"]),
    ("household: each download half its TCP rate (500 of 1000 met, 499 not)",
     hjudged(ONE, {"b2": 500.0})["downloads"] and not hjudged(ONE, {"b2": 499.0})["downloads"]),
    ("household: a flow 30 s without progress fails, 29.9 s does not",
     hjudged(ONE, {"stall": 29.9})["progress"] and not hjudged(ONE, {"stall": 30.0})["progress"]),
    ("household: the queue back within 5 s met, 6 s or never not",
     hjudged(ONOFF, {"back": 5}, {"back": 0})["back"] and not hjudged(ONOFF, {"back": 6}, {"back": 0})["back"]
     and not hjudged(ONOFF, {"back": None}, {"back": 0})["back"]),
    ("household UDP: the queue median 25 ms met, 25.1 not; judged on its own targets",
     hjudged(UDP, {"queue": 25.0})["queue"] and not hjudged(UDP, {"queue": 25.1})["queue"]
     and set(hjudged(UDP, {})) == {"machine", "video", "queue", "progress"}),
    ("household QUIC: the video no worse than plain TCP's (0.5 of 0.5 met, 0.49 not), no total asked",
     hjudged(QUIC, {"video": 0.5}, {"video": 0.5})["video_tcp"]
     and not hjudged(QUIC, {"video": 0.49}, {"video": 0.5})["video_tcp"] and "machine" not in hjudged(QUIC, {})),
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
tap.done()

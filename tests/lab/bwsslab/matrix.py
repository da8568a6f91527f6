# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwss-lab matrix — the `streaming` experiment over the bottlenecks users
have: 5 queues × 2 senders' congestion controls × 2 rate shapes × 2 link
rates = 40 cells, each in modes tcp, bwss and ideal (and bwss-adopt with
--adopt); then the household: HOUSEHOLD's cells, a second machine (or a
QUIC download) behind the same link, traffic bwss does not control, each in
modes tcp and bwss; and docs/results/matrix.md from their summaries.

The cell's shape scales with the link L (SHAPE below): a constant-rate video
of VIDEO_SHARE × L with its minimum at that rate, two downloads at different
RTTs, UDP cross traffic of CROSS_SHARE × L through the middle third of a
DURATION-s run.  Drop-tail at a fixed rate is the kernel's tbf; a trace or an
AQM is the lab's user-space stage (Scenario.stage_bottleneck), and each row
says which.

Resumable, on one commit: a cell's bwss mode whose summary.json is valid
and was made on this commit is not run again unless --again; an invalid,
missing or other commit's one is.  A baseline mode (tcp, ideal: no code of
bwss runs in them) counts from whichever commit recorded it where its
baseline key is this build's (baseline.py: the runner, the files the stage
and the recorder are built from, the kernel, the machine): kept in --out,
or copied from a --baselines-from directory, and analysed again from its
raw recording with this commit's analysis; the report says per cell where
each mode's run came from.  TARGETS is the one table of
what bwss must achieve in a cell of the grid, HOUSEHOLD_TARGETS in a cell of
the household; the report's first sections count the cells where it did."""
import datetime
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Tuple

from . import baseline, lock, paths, report, topology
from .proc import LabError
from .scenario import SCENARIOS, ScenarioError

# ---- the grid ----
QUEUES = (("droptail150", "droptail", 150), ("droptail12", "droptail", 12),
          ("droptail600", "droptail", 600), ("codel", "codel", None), ("fq_codel", "fq_codel", None))
SENDER_CCS = ("cubic", "bbr")
RATE_SHAPES = (("fixed", ""), ("wifi", "wifi"))
LINKS_KBPS = (960, 20000)
MODES = ("tcp", "bwss", "ideal")
INVALID_EXIT, FAULT_EXIT = 3, 4  # as bwss-lab run (cli.py): a cell's mode stayed invalid; a product fault
ADOPT_MODE = "bwss-adopt"
# --quick: one cell per kind of bottleneck (tbf, the stage's drop-tail on a
# trace, CoDel, FQ-CoDel), both rates and both senders: ~14 min of lab
QUICK = ("droptail150-cubic-fixed-960k", "codel-bbr-fixed-960k", "fq_codel-cubic-fixed-20M",
         "droptail600-bbr-wifi-20M")

# ---- the shape, relative to the link L ----
DURATION = 60                  # s, a run
VIDEO_SHARE = 0.45             # the video (and its minimum): 45 % of L, inside the 40-50 %
CROSS_SHARE = 1.0 / 3          # UDP cross traffic: a third of L ...
CROSS_FROM, CROSS_TO = 20, 40  # ... through the middle third of the run, s
RTT_VIDEO = 30                 # ms added by the delay stage, as in streaming
RTT_BULK = (20, 80)            # ms: two downloads at different RTTs (TCP favours the short one)


@dataclass(frozen=True)
class Cell:
    name: str
    queue: str                 # droptail150, …, codel, fq_codel
    cc: str
    shape: str                 # fixed, wifi
    link_kbps: int
    sets: Tuple[str, ...]      # bwss-lab run's --set list
    grid: str = "bottleneck"   # bottleneck (TARGETS) or household (HOUSEHOLD_TARGETS)
    modes: Tuple[str, ...] = ("tcp", "bwss", "ideal")
    targets: Tuple[str, ...] = ()  # a household cell's HOUSEHOLD_TARGETS keys (the grid's: all of TARGETS)

    def where(self):
        """Which part of the lab is the bottleneck: the kernel's tbf or the stage."""
        return "stage" if self.scenario().stage_bottleneck() else "tbf"

    def scenario(self):
        return SCENARIOS["streaming"].with_sets(list(self.sets))


def link_name(kbps):
    return "%gM" % (kbps / 1000) if kbps >= 1000 and kbps % 1000 == 0 else "%gk" % kbps


def cells():
    """The 40 cells of the bottleneck grid, in its order."""
    out = []
    for qname, kind, qms in QUEUES:
        for cc in SENDER_CCS:
            for shape, trace in RATE_SHAPES:
                for link in LINKS_KBPS:
                    video = round(VIDEO_SHARE * link)
                    sets = ["link_kbps=%d" % link, "bottleneck=" + kind, "sender_cc=" + cc,
                            "duration=%d" % DURATION, "video_kbps=%d" % video,
                            "video_min_kbps=%d" % video, "bulk=2", "weights=1,1",
                            "rtt_video=%d" % RTT_VIDEO, "rtt_bulk=%s" % ",".join(str(r) for r in RTT_BULK),
                            "cross_kbps=%d" % round(CROSS_SHARE * link),
                            "cross_start=%d" % CROSS_FROM, "cross_end=%d" % CROSS_TO]
                    if qms is not None:
                        sets.append("queue_ms=%d" % qms)
                    if trace:
                        sets.append("link_trace=" + trace)
                    name = "%s-%s-%s-%s" % (qname, cc, shape, link_name(link))
                    out.append(Cell(name, qname, cc, shape, link, tuple(sets)))
    return out


# ---- the household: traffic bwss does not control on the same link ----
# The access link of a home (8 Mbit/s) shared with a second machine that does
# not run bwss, or with this machine's own QUIC download.  Each cell: this
# machine's video (at its minimum) and two downloads at 20 and 80 ms; tcp is
# the household where neither machine runs bwss.
HH_LINK_KBPS = 8000
HH_DURATION = 60               # s, a run; the neighbour-leaves cell runs HH_ONOFF_DURATION
HH_ONOFF = "20-60"             # s: the neighbour's downloads run from 20 to 60 s ...
HH_ONOFF_DURATION = 90         # ... of a 90-s run: 30 s after it to see the queue come back
HH_VIDEO_CLIENT = "gst"        # the video's client: the element, the product's (bwsshttpsrc in mode bwss, its
                               # striping at the element's default; souphttpsrc, one connection, in tcp: a
                               # household without bwss), not curl under bwss-run
# The issue's targets each cell is judged by (HOUSEHOLD_TARGETS' keys): beside an
# elastic neighbour this machine keeps plain TCP's total with the video first;
# beside inelastic UDP the queue stays short; beside a QUIC download the video
# is no worse than plain TCP makes it and the downloads are not starved.
ELASTIC = ("machine", "video", "downloads", "progress")
# (name, queue, queue_ms, video kbit/s, the traffic bwss does not control: --set list, targets)
HOUSEHOLD = (
    ("droptail150-1tcp", "droptail", 150, 2000, ("hosts=2", "host2=tcp", "host2_bulk=1"), ELASTIC),
    ("droptail150-3tcp", "droptail", 150, 1000, ("hosts=2", "host2=tcp", "host2_bulk=3"), ELASTIC),
    ("codel-1tcp", "codel", None, 2000, ("hosts=2", "host2=tcp", "host2_bulk=1"), ELASTIC),
    ("codel-3tcp", "codel", None, 1000, ("hosts=2", "host2=tcp", "host2_bulk=3"), ELASTIC),
    ("fq_codel-1tcp", "fq_codel", None, 2000, ("hosts=2", "host2=tcp", "host2_bulk=1"), ELASTIC),
    ("droptail150-1tcp-on20-60", "droptail", 150, 2000,
     ("hosts=2", "host2=tcp", "host2_bulk=1", "host2_on=" + HH_ONOFF), ELASTIC + ("back",)),
    ("droptail150-udp", "droptail", 150, 2000, ("hosts=2", "host2=udp"),
     ("machine", "video", "queue", "progress")),
    ("droptail150-quic", "droptail", 150, 2500, ("quic=1",), ("video_tcp", "downloads", "progress")),
)


def household_cells():
    """The household's cells, named household-<queue>-<the traffic bwss does
    not control>."""
    out = []
    for name, kind, qms, video, foreign, targets in HOUSEHOLD:
        duration = HH_ONOFF_DURATION if any(x.startswith("host2_on=") for x in foreign) else HH_DURATION
        sets = ["link_kbps=%d" % HH_LINK_KBPS, "bottleneck=" + kind, "sender_cc=cubic",
                "duration=%d" % duration, "video_kbps=%d" % video, "video_min_kbps=%d" % video,
                "video_client=" + HH_VIDEO_CLIENT,
                "bulk=2", "weights=1,1", "rtt_video=%d" % RTT_VIDEO,
                "rtt_bulk=%s" % ",".join(str(r) for r in RTT_BULK), "cross_kbps=0"] + list(foreign)
        if qms is not None:
            sets.append("queue_ms=%d" % qms)
        out.append(Cell("household-" + name, kind, "cubic", "fixed", HH_LINK_KBPS, tuple(sets),
                        grid="household", modes=("tcp", "bwss"), targets=targets))
    return out


def every_cell():
    """The grid's 40 cells, then the household's."""
    return cells() + household_cells()


def select(patterns, quick):
    """The cells named by --quick or --cells (comma-separated shell
    patterns, e.g. 'codel-*' or '*-20M'); all without either.  Raises
    LabError (2) for a pattern that matches nothing."""
    every = every_cell()
    if quick:
        return [c for c in every if c.name in QUICK]
    if not patterns:
        return every
    chosen = set()
    for p in (x.strip() for x in patterns.split(",")):
        hit = [c.name for c in every if fnmatch.fnmatchcase(c.name, p)]
        if not p or not hit:
            raise LabError("--cells: '%s' matches no cell (bwss-lab matrix --list)" % p, 2)
        chosen.update(hit)
    return [c for c in every if c.name in chosen]


# ---- the targets: what bwss must achieve in a cell (docs/lab.md) ----
# Each: (key, what, bound, test(bwss summary, tcp summary, ideal summary) -> bool)
def _video_at_min(s):
    """The video at its minimum: over all seconds at a fixed rate, over the
    seconds the link could carry it on a trace."""
    ln = s.get("link") or {}
    if ln.get("trace") and ln.get("video_at_min_capable") is not None:
        return ln["video_at_min_capable"]
    return s.get("video_at_min")


def _queue(s):
    return report._get(s, "queue_delay_ms", "median")


VIDEO_AT_MIN = 0.98            # share of seconds with the video at >= 90 % of its minimum: one short second in a 60-s run
PREBUFFER_OF_IDEAL = 2.0       # the required prebuffer: at most twice the ideal router's ...
PREBUFFER_OVER_IDEAL_S = 0.25  # ... or the ideal's + 0.25 s where that is more (the ideal's is ~0.05 s: a
                               # start-up a viewer does not notice)
QUEUE_MEDIAN_MS = 25.0         # the queue's median: short enough for a call or a game beside the video ...
QUEUE_OVER_TCP_MS = 5.0        # ... and no longer than plain TCP's + 5 ms (CoDel's target) where that is lower
AGGREGATE_OF_IDEAL = 0.90      # the link's use: at most 10 % of what the ideal router carries given up


def prebuffer_bound(ideal):
    """The required prebuffer bwss may need, s, given the ideal router's."""
    return max(PREBUFFER_OF_IDEAL * ideal, ideal + PREBUFFER_OVER_IDEAL_S)


TARGETS = (
    ("video", "video at its minimum", ">= %d %% of the seconds (on a trace: of those the link could "
     "carry it)" % (100 * VIDEO_AT_MIN),
     lambda b, t, i: _video_at_min(b) is not None and _video_at_min(b) >= VIDEO_AT_MIN),
    ("prebuffer", "required prebuffer", "<= max(%g × the ideal router's, the ideal's + %g s)"
     % (PREBUFFER_OF_IDEAL, PREBUFFER_OVER_IDEAL_S),
     lambda b, t, i: (b.get("required_prebuffer_s") is not None and i.get("required_prebuffer_s") is not None
                      and b["required_prebuffer_s"] <= prebuffer_bound(i["required_prebuffer_s"]))),
    ("queue", "queue median", "<= min(%g ms, plain TCP's + %g ms)" % (QUEUE_MEDIAN_MS, QUEUE_OVER_TCP_MS),
     lambda b, t, i: (_queue(b) is not None and _queue(t) is not None
                      and _queue(b) <= min(QUEUE_MEDIAN_MS, _queue(t) + QUEUE_OVER_TCP_MS))),
    ("aggregate", "aggregate", ">= %d %% of the ideal router's" % (100 * AGGREGATE_OF_IDEAL),
     lambda b, t, i: b["aggregate_kbps"] >= AGGREGATE_OF_IDEAL * i["aggregate_kbps"]),
)


# ---- the household's targets: never worse than plain TCP beside traffic bwss
# does not control ----
HH_MACHINE_OF_TCP = 0.90       # this machine's total: at most 10 % of what plain TCP gets it given up
HH_DOWNLOAD_OF_TCP = 0.50      # each of our downloads: at least half its plain-TCP rate (no download
                               # starved to make room for the neighbour)
HH_QUEUE_BACK_S = 5            # after the neighbour leaves: the queue short again within 5 s
HH_STALL_S = 30.0              # no flow this long without progress: the shortest common client timeout


def _machine(s):
    """This machine's mean rate, kbit/s: over the neighbour's window where it
    comes and goes (host2_on), else over the run."""
    on = s.get("host2_on")
    if on:
        return (on.get("during") or {}).get("machines", {}).get("1")
    return (s.get("machines") or {}).get("1", s.get("aggregate_kbps"))


def _downloads_kept(b, t):
    ours = [f["name"] for f in t["flows"] if f["name"].startswith("bulk")]
    return bool(ours) and all((_flow(n)(b) or 0) >= HH_DOWNLOAD_OF_TCP * (_flow(n)(t) or 0) for n in ours)


def _queue_back(b):
    on = b.get("host2_on")
    back = ((on or {}).get("after") or {}).get("queue_back_s")
    return back is not None and back <= HH_QUEUE_BACK_S


def _progress(b):
    p = b.get("progress") or {}
    return not b.get("faults") and all(v < HH_STALL_S for v in (p.get("longest_stall_s") or {}).values())


HOUSEHOLD_TARGETS = (
    ("machine", "this machine's total", ">= %d %% of plain TCP's (while the neighbour runs)"
     % (100 * HH_MACHINE_OF_TCP),
     lambda b, t: _machine(b) is not None and _machine(t) is not None
     and _machine(b) >= HH_MACHINE_OF_TCP * _machine(t)),
    ("video", "video at its minimum", ">= %d %% of the seconds" % (100 * VIDEO_AT_MIN),
     lambda b, t: _video_at_min(b) is not None and _video_at_min(b) >= VIDEO_AT_MIN),
    ("downloads", "each of our downloads", ">= %d %% of its plain-TCP rate" % (100 * HH_DOWNLOAD_OF_TCP),
     _downloads_kept),
    ("video_tcp", "video at its minimum, beside QUIC", ">= plain TCP's",
     lambda b, t: _video_at_min(b) is not None and _video_at_min(t) is not None
     and _video_at_min(b) >= _video_at_min(t)),
    ("queue", "queue median, beside inelastic UDP", "<= %g ms" % QUEUE_MEDIAN_MS,
     lambda b, t: _queue(b) is not None and _queue(b) <= QUEUE_MEDIAN_MS),
    ("back", "the queue after the neighbour leaves", "median <= %g ms within %d s"
     % (QUEUE_MEDIAN_MS, HH_QUEUE_BACK_S), lambda b, t: _queue_back(b)),
    ("progress", "every download progressing", "no client failed, none %g s without progress" % HH_STALL_S,
     lambda b, t: _progress(b)),
)


def judge(runs, mode="bwss", cell=None):
    """{key: bool} of mode's run against the cell's targets (TARGETS, or
    HOUSEHOLD_TARGETS for a household cell), None if the cell cannot be
    judged (a run it needs missing or invalid)."""
    household = cell is not None and cell.grid == "household"
    need = ("tcp", mode) if household else ("tcp", mode, "ideal")
    if not all(m in runs and runs[m].get("valid") for m in need):
        return None
    if household:
        return {k: bool(test(runs[mode], runs["tcp"])) for k, _, _, test in HOUSEHOLD_TARGETS
                if k in cell.targets}
    return {k: bool(test(runs[mode], runs["tcp"], runs["ideal"])) for k, _, _, test in TARGETS}


def cell_modes(cell, modes):
    """The modes run in cell: of modes, those the cell has (bwss-adopt in any)."""
    return tuple(m for m in modes if m in cell.modes or m == ADOPT_MODE)


# ---- running ----
def summary_path(out, cell, mode):
    return os.path.join(out, cell.name, mode, "summary.json")


def load(out, cell, modes):
    """{mode: summary} of the cell's runs that exist."""
    runs = {}
    for m in modes:
        try:
            with open(summary_path(out, cell, m)) as f:
                runs[m] = json.load(f)
        except (OSError, ValueError):
            pass
    return runs


def run_commit(s):
    """The commit a run was made on (its programs' tree)."""
    return s.get("commit") or (s.get("matrix") or {}).get("commit") or "unknown"


def clean(rev):
    """Whether rev names a commit exactly (known, no local changes)."""
    return bool(rev) and not rev.endswith("+") and not rev.startswith("unknown")


def not_counted(s, mode, cell, rev, bkey):
    """Why the valid run s of mode does not count for commit rev's report
    (empty: it counts).  A bwss mode counts only when made on rev; a
    baseline mode when its baseline key is bkey (this build's, for the
    cell: baseline.with_scenario) and its parameters are the cell's."""
    if mode not in baseline.BASELINE_MODES:
        made = run_commit(s)
        if made != rev:
            return ["made on %s, not %s" % (made, rev)]
        return [] if clean(rev) else ["made on %s, a tree with changes (commit, then run)" % rev]
    why = baseline.unkeyed(cell.scenario()) + baseline.compare(s.get("baseline"), bkey)
    diff = baseline.same_parameters(s.get("parameters"), cell.scenario())
    if diff:
        why.append("its parameters differ from the cell's: " + ", ".join(diff))
    return why


def plan(out, cell, modes, rev, bkey, sources=(), again=False):
    """What becomes of each of cell's modes: [(mode, action, detail)],
    action "keep" (its run in out counts), "reuse" (detail: the run
    directory, under one of sources, of a baseline run that counts), or
    "run" (detail: why nothing counts)."""
    runs = load(out, cell, modes)
    res = []
    for m in modes:
        s = runs.get(m)
        if again:
            res.append((m, "run", "--again"))
            continue
        if s is None:
            why = ["not run"]
        elif not s.get("valid"):
            why = ["invalid"]
        else:
            why = not_counted(s, m, cell, rev, bkey)
            if not why:
                res.append((m, "keep", "made on %s" % run_commit(s)))
                continue
        found = None
        if m in baseline.BASELINE_MODES:
            for src in sources:
                where = os.path.join(os.path.abspath(src), cell.name, m)
                other = load(src, cell, [m]).get(m)
                if other is None:
                    continue
                no = not_counted(other, m, cell, rev, bkey) if other.get("valid") else ["invalid"]
                if not no:
                    found = where
                    break
                why.append("%s: %s" % (where, "; ".join(no)))
        res.append((m, "reuse", found) if found else (m, "run", "; ".join(why)))
    return res


def pending(out, cell, modes, rev, bkey, sources=(), again=False):
    """The modes of cell still to run (plan's "run")."""
    return [m for m, action, _ in plan(out, cell, modes, rev, bkey, sources, again) if action == "run"]


def reuse(src_dir, dst_dir, cell, rev, build_dir, reanalyse):
    """Copies the baseline run in src_dir to dst_dir (what dst_dir held is
    moved aside first: paths.keep_earlier) and analyses it again with this
    commit's analysis (reanalyse: cli.reanalyse_run); records where it came
    from and why it counts ("reused").  Returns its summary."""
    paths.keep_earlier(dst_dir)
    if os.path.isdir(dst_dir):
        os.rmdir(dst_dir)
    shutil.copytree(src_dir, dst_dir)
    return mark_reused(reanalyse(dst_dir, build_dir, cell.scenario()), src_dir, dst_dir, cell, rev)


def mark_reused(s, src_dir, dst_dir, cell, rev):
    """Records in the baseline run s (now in dst_dir) that it counts for
    commit rev's report though made on another: where it came from, its
    key, why ("reused")."""
    s["reused"] = {"from": src_dir, "recorded_on": run_commit(s), "for": rev,
                   "date": datetime.date.today().isoformat(), "key": baseline.digest(s["baseline"]),
                   "why": baseline.why_counts(s["baseline"], run_commit(s))}
    s.setdefault("matrix", {"cell": cell.name, "where": cell.where(), "commit": run_commit(s),
                            "date": datetime.date.fromtimestamp(
                                report._get(s, "host", "started_unix") or 0).isoformat()})
    with open(os.path.join(dst_dir, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
    return s


def commit(build_dir=None):
    """The commit of the tree the runs' programs were built from (with '+'
    if it has changes): @build_dir's source tree (meson-info), the lab's own
    tree without one.  A build from a tree outside git (an export) is
    "unknown (SOURCE)": a run never carries the commit of a tree it did not
    run."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if build_dir is not None:
        root = baseline.build_source(build_dir) or root
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (%s)" % root
    return head + ("+" if dirty else "")


def parse_modes(text, adopt=False):
    """The modes --modes names (None: every mode; with adopt also
    bwss-adopt).  Raises LabError (exit 2) on a mode the matrix has not."""
    every = MODES + (ADOPT_MODE,)
    if text is None:
        return MODES + ((ADOPT_MODE,) if adopt else ())
    chosen = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in chosen if m not in every]
    if not chosen or unknown:
        raise LabError("--modes: %s: the matrix's modes are %s" % (", ".join(unknown) or "none given",
                                                                  ", ".join(every)), 2)
    return tuple(m for m in every if m in chosen + ((ADOPT_MODE,) if adopt else ()))


def run(args, run_once, check_tools, command, reanalyse):
    """bwss-lab matrix: runs the selected cells' modes that have no run
    counting for this commit (plan(); run_once: cli.run_once), reusing
    the baseline runs that count (reanalyse: cli.reanalyse_run), then
    writes the report.  Returns the exit status."""
    chosen = select(args.cells, args.quick)
    modes = parse_modes(getattr(args, "modes", None), args.adopt)
    out = os.path.abspath(args.out)
    build_dir = os.path.abspath(args.build_dir)
    scs = {}
    for c in chosen:
        try:
            scs[c.name] = c.scenario()
        except ScenarioError as e:                      # the grid itself is wrong: a bug
            raise LabError("cell %s: %s" % (c.name, e))
    for c in chosen:                                    # what each cell needs, before the first run
        check_tools(scs[c.name], cell_modes(c, modes), build_dir)

    def on_signal(sig, frame):
        topology.down(quiet=True)
        lock.release()
        print("bwss-lab: matrix interrupted; lab removed (run it again to go on)", file=sys.stderr)
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    rev = commit(build_dir)
    bkey = baseline.key(build_dir, paths.SRC_ROOT)
    sources = [os.path.abspath(d) for d in args.baselines_from or []]
    print("baseline key: %s" % ("none, no baseline run kept or reused (%s)" % bkey["none"] if "none" in bkey
                                else "%s (a tcp or ideal run with it counts, from any commit)" % baseline.digest(bkey)),
          flush=True)
    failed, invalid, faults = [], [], []
    for k, c in enumerate(chosen):
        steps = plan(out, c, cell_modes(c, modes), rev, baseline.with_scenario(bkey, c.scenario()), sources,
                     args.again)
        print("cell %d of %d: %s (%s) — %s" % (k + 1, len(chosen), c.name, c.where(), "; ".join(
            "%s %s" % (m, {"keep": "kept (%s)", "reuse": "reused from %s", "run": "to run (%s)"}[a] % d)
            for m, a, d in steps)), flush=True)
        todo = [m for m, a, _ in steps if a == "run"]
        for m, action, detail in steps:
            d = os.path.join(out, c.name, m)
            s = load(out, c, [m]).get(m, {})
            if action == "keep" and m in baseline.BASELINE_MODES and s.get("analysed") != rev:
                s = reanalyse(d, build_dir, c.scenario())     # its figures from this commit's analysis
            if (action == "keep" and m in baseline.BASELINE_MODES and run_commit(s) != rev
                    and (s.get("reused") or {}).get("for") != rev):
                s = mark_reused(s, d, d, c, rev)
            elif action == "reuse":
                s = reuse(detail, d, c, rev, build_dir, reanalyse)
            if action != "run" and not s.get("valid"):
                print("  %s/%s: invalid under this commit's analysis (%s): run" % (
                    c.name, m, "; ".join(s.get("invalid_reasons") or [])), flush=True)
                todo.append(m)
        for m in [x for x in cell_modes(c, modes) if x in todo]:
            try:
                run_once(scs[c.name], "matrix " + c.name, [m], build_dir, os.path.join(out, c.name),
                         tries=args.tries)
            except LabError as e:
                # a run that could not finish (a client died): the others go
                # on; running the matrix again retries it
                topology.down(quiet=True)
                failed.append("%s/%s: %s" % (c.name, m, e))
                print("  %s/%s failed: %s" % (c.name, m, e), file=sys.stderr, flush=True)
                continue
            path = summary_path(out, c, m)
            with open(path) as f:
                s = json.load(f)
            s["matrix"] = {"cell": c.name, "where": c.where(), "commit": rev,
                           "date": datetime.date.today().isoformat()}
            with open(path, "w") as f:
                json.dump(s, f, indent=2)
            if not s.get("valid"):
                invalid.append("%s/%s: invalid in %d tries (%s)" % (
                    c.name, m, len(s.get("tries") or [1]), "; ".join(s.get("invalid_reasons") or [])))
            elif s.get("faults"):
                faults.append("%s/%s: %s" % (c.name, m, "; ".join(s["faults"])))
        runs = load(out, c, cell_modes(c, modes))
        with open(os.path.join(out, c.name, "comparison.md"), "w") as f:
            f.write(report.table([runs[m] for m in cell_modes(c, modes) if m in runs]) + "\n")
    path = write_report(out, args.report, command, modes, rev)
    print("wrote %s" % path)
    if faults:
        print("bwss-lab: %d valid runs failed their progress check (a product fault):\n  %s"
              % (len(faults), "\n  ".join(faults)), file=sys.stderr)
    if invalid:
        print("bwss-lab: %d runs stayed invalid in every try (host noise, not a product fault; run the "
              "matrix again to retry them):\n  %s" % (len(invalid), "\n  ".join(invalid)), file=sys.stderr)
    if failed:
        print("bwss-lab: %d runs did not finish (run the matrix again to retry them):\n  %s"
              % (len(failed), "\n  ".join(failed)), file=sys.stderr)
    if failed:
        return 1
    return INVALID_EXIT if invalid else FAULT_EXIT if faults else 0


# ---- the report ----
def _per_mode(runs, modes, get, spec):
    vals = []
    for m in modes:
        s = runs.get(m)
        vals.append("-" if s is None or not s.get("valid") else report._fmt(get(s), spec))
    return " / ".join(vals)


def _flow(name):
    return lambda s: next((f["mean_kbps"] for f in s["flows"] if f["name"] == name), None)


def _validity(runs, modes):
    bad = ["%s: %s" % (m, "; ".join(runs[m].get("invalid_reasons") or [])) for m in modes
           if m in runs and not runs[m].get("valid")]
    missing = [m for m in modes if m not in runs]
    return "yes" if not bad and not missing else "**no** (%s)" % "; ".join(
        bad + (["not run: " + ", ".join(missing)] if missing else []))


def _verdicts(cell, runs, modes):
    out = []
    for m in modes:
        if m.startswith("bwss"):
            j = judge(runs, m, cell)
            out.append("%s: %s" % (m, "-" if j is None else (
                "all" if all(j.values()) else "missed " + ", ".join(k for k, v in j.items() if not v))))
    return "; ".join(out)


def _pct(v):
    return None if v is None else 100 * v


def row(cell, runs, modes):
    """One row of the grid's table."""
    if not runs:
        return "| %s | %s | not run |%s" % (cell.name, cell.where(), " |" * 7)
    cells = [cell.name, cell.where(), _validity(runs, modes),
             _per_mode(runs, modes, lambda s: s.get("required_prebuffer_s"), "%.2f"),
             _per_mode(runs, modes, lambda s: _pct(_video_at_min(s)), "%.0f"),
             _per_mode(runs, modes, lambda s: report._get(s, "queue_delay_ms", "median"), "%.1f") + " ‖ "
             + _per_mode(runs, modes, lambda s: report._get(s, "queue_delay_ms", "p95"), "%.1f"),
             _per_mode(runs, modes, lambda s: s["aggregate_kbps"], "%.0f"),
             _per_mode(runs, modes, _flow("bulk1"), "%.0f"),
             _per_mode(runs, modes, _flow("bulk2"), "%.0f"),
             _verdicts(cell, runs, modes)]
    return "| " + " | ".join(cells) + " |"


def _foreign(s):
    """What the traffic bwss does not control carried, kbit/s: the second
    machine (while it runs), or this machine's QUIC download."""
    on = s.get("host2_on")
    if on:
        return (on.get("during") or {}).get("machines", {}).get("2")
    if "2" in (s.get("machines") or {}):
        return s["machines"]["2"]
    return _flow("quic")(s)


def household_row(cell, runs, modes):
    """One row of the household's table."""
    if not runs:
        return "| %s | not run |%s" % (cell.name, " |" * 6)
    back = lambda s: report._get(s, "host2_on", "after", "queue_back_s")   # noqa: E731
    cells = [cell.name, _validity(runs, modes),
             _per_mode(runs, modes, _machine, "%.0f"),
             _per_mode(runs, modes, _foreign, "%.0f"),
             _per_mode(runs, modes, lambda s: _pct(_video_at_min(s)), "%.0f"),
             _per_mode(runs, modes, _flow("bulk1"), "%.0f") + " ‖ " + _per_mode(runs, modes, _flow("bulk2"), "%.0f"),
             _per_mode(runs, modes, lambda s: report._get(s, "queue_delay_ms", "median"), "%.1f")
             + ("" if not any(x.startswith("host2_on=") for x in cell.sets)
                else " (back in %s s)" % _per_mode(runs, modes, back, "%.0f")),
             _verdicts(cell, runs, modes)]
    return "| " + " | ".join(cells) + " |"


def _and(words):
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def counts(every, out, modes, targets):
    """For each bwss mode, the cells of every judged and those that met every
    target, and per target (targets: TARGETS or HOUSEHOLD_TARGETS)."""
    lines = []
    for m in (x for x in modes if x.startswith("bwss")):
        judged, met, per, of = 0, 0, {k: 0 for k, _, _, _ in targets}, {k: 0 for k, _, _, _ in targets}
        not_judged = []
        for c in every:
            runs = load(out, c, cell_modes(c, modes))
            j = judge(runs, m, c) if runs else None
            if j is None:
                if runs:
                    not_judged.append(c.name)
                continue
            judged += 1
            met += all(j.values())
            for k, v in j.items():
                per[k] += v
                of[k] += 1
        lines += ["**%s met every target in %d of %d cells judged** (a cell is judged when its %s "
                  "runs are valid; run but not judged: %d, not run: %d)."
                  % (m, met, judged, _and([x if x != "bwss" else m for x in every[0].modes]),
                     len(not_judged), sum(1 for c in every if not load(out, c, cell_modes(c, modes)))), "",
                  "| target | bound | cells that met it |", "|---|---|---|"]
        for k, what, bound, _ in targets:
            lines.append("| %s | %s | %d of %d |" % (what, bound, per[k], of[k]))
        lines.append("")
    return lines


def _commits(runs):
    return ", ".join(sorted({run_commit(s) for s in runs})) or "-"


def origin(s):
    """Where a run came from, for the report: the commit it was made on,
    and for a baseline run counted on another commit the key it counts
    under."""
    r = s.get("reused")
    return "%s, reused (key %s)" % (r["recorded_on"], r["key"]) if r else run_commit(s)


def origins(every, out, modes):
    """The report's section "Where the runs come from"."""
    lines = ["## Where the runs come from", "",
             "A bwss run counts only on the commit it was made on. A tcp or ideal run runs none of bwss's "
             "code (docs/lab.md, \"Baseline runs\"): it counts on any commit whose baseline key is the one "
             "it was recorded with (`tests/lab/bwsslab/baseline.py`: the SHA-256 of the lab's runner, of "
             "every file the delay stage and the recorder are compiled from, their compile commands and "
             "compiler; the kernel, the machine and the packages its clients and servers come from), and "
             "it is analysed again from its raw recording with this commit's analysis. Per cell and mode: "
             "the commit its run was made on, `reused` where another commit's run counts under its key "
             "(its first 12 hex digits; the run's `summary.json` says why, field `reused`).", "",
             "| cell | %s |" % " | ".join(modes), "|---|%s" % ("---|" * len(modes))]
    for c in every:
        runs = load(out, c, cell_modes(c, modes))
        if runs:
            lines.append("| %s | %s |" % (c.name, " | ".join(
                origin(runs[m]) if m in runs else "-" if m in cell_modes(c, modes) else "n/a" for m in modes)))
    return lines + [""]


def write_report(out, path, command, modes, rev=None):
    """Writes the matrix's report (docs/results/matrix.md) from every
    summary under out: the grid's 40 cells and the household's, those not
    run said so, and where each run came from (rev: the commit the report
    is for)."""
    grid, household = cells(), household_cells()
    every = grid + household
    found = [(m, s) for c in every for m, s in load(out, c, cell_modes(c, modes)).items()]
    dates = sorted({report._get(s, "matrix", "date") or "?" for _, s in found})
    ours = [s for m, s in found if m not in baseline.BASELINE_MODES]
    base = [s for m, s in found if m in baseline.BASELINE_MODES]
    mode_list = " / ".join(modes)
    hh_modes = cell_modes(household[0], modes)
    lines = ["# The bottleneck matrix", "",
             "Generated by `tests/lab/bwss-lab matrix` on %s (runs of %s)%s; bwss runs from commit %s, "
             "tcp and ideal runs made on %s (%d of %d reused under their baseline key: \"Where the runs "
             "come from\"); machine: %s." % (
                 datetime.date.today().isoformat(), ", ".join(dates) or "-",
                 " for commit %s" % rev if rev else "", _commits(ours), _commits(base),
                 sum(1 for s in base if s.get("reused")), len(base), report.machine()), "",
             "Command:", "", "    " + command, "",
             "`streaming`'s shape scaled to the link L: a constant-rate video of %d %% of L (its minimum "
             "the same), two downloads at %s ms RTT (the video %d ms), UDP cross traffic of a third of L "
             "from %d s to %d s of a %d-s run; senders' congestion control as named. `tbf`: drop-tail at "
             "a fixed rate, the kernel's qdisc; `stage`: an AQM or a trace, the lab's user-space "
             "bottleneck (docs/lab.md). Then the household: the same link shared with traffic bwss does "
             "not control." % (100 * VIDEO_SHARE, " and ".join(str(r) for r in RTT_BULK),
                               RTT_VIDEO, CROSS_FROM, CROSS_TO, DURATION), "",
             "## bwss against the targets", ""]
    lines += counts(grid, out, modes, TARGETS)
    lines += ["## The cells", "",
              "Each figure is given per mode, %s; `-` where the mode's run is missing or invalid (an "
              "invalid run is no result: the row says why). Video at min: %% of the seconds with the "
              "video at >= 90 %% of its minimum (on a trace: of the seconds the link could carry it). "
              "Queue: every flow's receiver RTT less its path's, median ‖ p95." % mode_list, "",
              "| cell | bottleneck | valid | prebuffer s | video at min %% | queue ms median ‖ p95 | "
              "aggregate kbit/s | bulk1 kbit/s (%d ms) | bulk2 kbit/s (%d ms) | targets |" % RTT_BULK,
              "|---|---|---|---|---|---|---|---|---|---|"]
    for c in grid:
        lines.append(row(c, load(out, c, cell_modes(c, modes)), modes))
    lines += ["", "## The household", "",
              "An %g-Mbit/s access link (cubic senders) shared with traffic bwss does not control: a second "
              "machine's plain-TCP downloads (`1tcp`, `3tcp`; `on20-60`: from 20 to 60 s of a %d-s run), "
              "its inelastic UDP (`udp`), or this machine's own QUIC download (`quic`). This machine: a "
              "constant-rate video at its minimum and two downloads at %s ms. Modes %s; `tcp` is the "
              "household where neither machine runs bwss. Each cell is judged by the targets its row "
              "names." % (HH_LINK_KBPS / 1000, HH_ONOFF_DURATION, " and ".join(str(r) for r in RTT_BULK),
                          " / ".join(hh_modes)), ""]
    lines += counts(household, out, modes, HOUSEHOLD_TARGETS)
    lines += ["Each figure per mode, %s. This machine and the others: mean kbit/s (while the neighbour "
              "runs in `on20-60`); the others: the second machine, or the QUIC download."
              % " / ".join(hh_modes), "",
              "| cell | valid | this machine kbit/s | the others kbit/s | video at min % | "
              "bulk1 ‖ bulk2 kbit/s | queue ms median | targets |",
              "|---|---|---|---|---|---|---|---|"]
    for c in household:
        lines.append(household_row(c, load(out, c, cell_modes(c, modes)), cell_modes(c, modes)))
    lines += [""] + origins(every, out, modes)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path

# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwss-lab matrix — the `streaming` experiment over the bottlenecks users
have: 5 queues × 2 senders' congestion controls × 2 rate shapes × 2 link
rates = 40 cells, each in modes tcp, bwss and ideal (and bwss-adopt with
--adopt), and docs/results/matrix.md from their summaries.

The cell's shape scales with the link L (SHAPE below): a constant-rate video
of VIDEO_SHARE × L with its minimum at that rate, two downloads at different
RTTs, UDP cross traffic of CROSS_SHARE × L through the middle third of a
DURATION-s run.  Drop-tail at a fixed rate is the kernel's tbf; a trace or an
AQM is the lab's user-space stage (Scenario.stage_bottleneck), and each row
says which.

Resumable: a cell's mode whose summary.json is valid is not run again
unless --again; an invalid or missing one is.  TARGETS is the one table of
what bwss must achieve in a cell; the report's first section counts the
cells where it did."""
import datetime
import fnmatch
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Tuple

from . import lock, report, topology
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

    def where(self):
        """Which part of the lab is the bottleneck: the kernel's tbf or the stage."""
        return "stage" if self.scenario().stage_bottleneck() else "tbf"

    def scenario(self):
        return SCENARIOS["streaming"].with_sets(list(self.sets))


def link_name(kbps):
    return "%gM" % (kbps / 1000) if kbps >= 1000 and kbps % 1000 == 0 else "%gk" % kbps


def cells():
    """The 40 cells, in the grid's order."""
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


def select(patterns, quick):
    """The cells named by --quick or --cells (comma-separated shell
    patterns, e.g. 'codel-*' or '*-20M'); all without either.  Raises
    LabError (2) for a pattern that matches nothing."""
    every = cells()
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


def judge(runs, mode="bwss"):
    """{key: bool} of mode's run against TARGETS, None if the cell cannot be
    judged (a run of tcp, mode or ideal missing or invalid)."""
    need = ("tcp", mode, "ideal")
    if not all(m in runs and runs[m].get("valid") for m in need):
        return None
    return {k: bool(test(runs[mode], runs["tcp"], runs["ideal"])) for k, _, _, test in TARGETS}


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


def pending(out, cell, modes, again=False):
    """The modes of cell still to run: those without a valid summary (all
    with again)."""
    runs = load(out, cell, modes)
    return [m for m in modes if again or not (m in runs and runs[m].get("valid"))]


def commit():
    """The commit of the tree the lab runs from (with '+' if it has changes)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def run(args, run_once, check_tools, command):
    """bwss-lab matrix: runs the selected cells' missing or invalid modes
    (run_once: cli.run_once), then writes the report.  Returns the exit
    status."""
    chosen = select(args.cells, args.quick)
    modes = MODES + ((ADOPT_MODE,) if args.adopt else ())
    out = os.path.abspath(args.out)
    build_dir = os.path.abspath(args.build_dir)
    scs = {}
    for c in chosen:
        try:
            scs[c.name] = c.scenario()
        except ScenarioError as e:                      # the grid itself is wrong: a bug
            raise LabError("cell %s: %s" % (c.name, e))
    check_tools(scs[chosen[0].name], modes, build_dir)

    def on_signal(sig, frame):
        topology.down(quiet=True)
        lock.release()
        print("bwss-lab: matrix interrupted; lab removed (run it again to go on)", file=sys.stderr)
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    rev = commit()
    failed, invalid, faults = [], [], []
    for k, c in enumerate(chosen):
        todo = pending(out, c, modes, args.again)
        print("cell %d of %d: %s (%s) — %s" % (k + 1, len(chosen), c.name, c.where(),
                                                 "modes " + ", ".join(todo) if todo else "done, kept"),
              flush=True)
        for m in todo:
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
        runs = load(out, c, modes)
        with open(os.path.join(out, c.name, "comparison.md"), "w") as f:
            f.write(report.table([runs[m] for m in modes if m in runs]) + "\n")
    path = write_report(out, args.report, command, modes)
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


def row(cell, runs, modes):
    """One row of the cells' table."""
    if not runs:
        return "| %s | %s | not run |%s" % (cell.name, cell.where(), " |" * 7)
    bad = ["%s: %s" % (m, "; ".join(runs[m].get("invalid_reasons") or [])) for m in modes
           if m in runs and not runs[m].get("valid")]
    missing = [m for m in modes if m not in runs]
    valid = "yes" if not bad and not missing else "**no** (%s)" % "; ".join(
        bad + (["not run: " + ", ".join(missing)] if missing else []))
    verdicts = []
    for m in modes:
        if m.startswith("bwss"):
            j = judge(runs, m)
            verdicts.append("%s: %s" % (m, "-" if j is None else (
                "all" if all(j.values()) else "missed " + ", ".join(k for k, v in j.items() if not v))))
    pct = (lambda v: None if v is None else 100 * v)
    cells = [cell.name, cell.where(), valid,
             _per_mode(runs, modes, lambda s: s.get("required_prebuffer_s"), "%.2f"),
             _per_mode(runs, modes, lambda s: pct(_video_at_min(s)), "%.0f"),
             _per_mode(runs, modes, lambda s: report._get(s, "queue_delay_ms", "median"), "%.1f") + " ‖ "
             + _per_mode(runs, modes, lambda s: report._get(s, "queue_delay_ms", "p95"), "%.1f"),
             _per_mode(runs, modes, lambda s: s["aggregate_kbps"], "%.0f"),
             _per_mode(runs, modes, _flow("bulk1"), "%.0f"),
             _per_mode(runs, modes, _flow("bulk2"), "%.0f"),
             "; ".join(verdicts)]
    return "| " + " | ".join(cells) + " |"


def counts(every, out, modes):
    """The first section: for each bwss mode, the cells judged and those
    that met every target, and per target."""
    lines = []
    for m in (x for x in modes if x.startswith("bwss")):
        judged, met, per = 0, 0, {k: 0 for k, _, _, _ in TARGETS}
        not_judged = []
        for c in every:
            runs = load(out, c, modes)
            j = judge(runs, m) if runs else None
            if j is None:
                if runs:
                    not_judged.append(c.name)
                continue
            judged += 1
            met += all(j.values())
            for k, v in j.items():
                per[k] += v
        lines += ["**%s met every target in %d of %d cells judged** (a cell is judged when its tcp, %s "
                  "and ideal runs are valid; run but not judged: %d, not run: %d)."
                  % (m, met, judged, m, len(not_judged),
                     sum(1 for c in every if not load(out, c, modes))), "",
                  "| target | bound | cells that met it |", "|---|---|---|"]
        for k, what, bound, _ in TARGETS:
            lines.append("| %s | %s | %d of %d |" % (what, bound, per[k], judged))
        lines.append("")
    return lines


def write_report(out, path, command, modes):
    """Writes the matrix's report (docs/results/matrix.md) from every
    summary under out: all 40 cells, those not run said so."""
    every = cells()
    revs = sorted({report._get(s, "matrix", "commit") or "unknown" for c in every
                   for s in load(out, c, modes).values()})
    dates = sorted({report._get(s, "matrix", "date") or "?" for c in every
                    for s in load(out, c, modes).values()})
    mode_list = " / ".join(modes)
    lines = ["# The bottleneck matrix", "",
             "Generated by `tests/lab/bwss-lab matrix` on %s (runs of %s) from commit %s; machine: %s." % (
                 datetime.date.today().isoformat(), ", ".join(dates) or "-", ", ".join(revs) or "-",
                 report.machine()), "",
             "Command:", "", "    " + command, "",
             "`streaming`'s shape scaled to the link L: a constant-rate video of %d %% of L (its minimum "
             "the same), two downloads at %s ms RTT (the video %d ms), UDP cross traffic of a third of L "
             "from %d s to %d s of a %d-s run; senders' congestion control as named. `tbf`: drop-tail at "
             "a fixed rate, the kernel's qdisc; `stage`: an AQM or a trace, the lab's user-space "
             "bottleneck (docs/lab.md)." % (100 * VIDEO_SHARE, " and ".join(str(r) for r in RTT_BULK),
                                             RTT_VIDEO, CROSS_FROM, CROSS_TO, DURATION), "",
             "## bwss against the targets", ""]
    lines += counts(every, out, modes)
    lines += ["## The cells", "",
              "Each figure is given per mode, %s; `-` where the mode's run is missing or invalid (an "
              "invalid run is no result: the row says why). Video at min: %% of the seconds with the "
              "video at >= 90 %% of its minimum (on a trace: of the seconds the link could carry it). "
              "Queue: every flow's receiver RTT less its path's, median ‖ p95." % mode_list, "",
              "| cell | bottleneck | valid | prebuffer s | video at min %% | queue ms median ‖ p95 | "
              "aggregate kbit/s | bulk1 kbit/s (%d ms) | bulk2 kbit/s (%d ms) | targets |" % RTT_BULK,
              "|---|---|---|---|---|---|---|---|---|---|"]
    for c in every:
        lines.append(row(c, load(out, c, modes), modes))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path

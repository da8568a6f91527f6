#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""When and why a matrix cell missed its video and aggregate targets, from
the recorded per-second timelines (each mode's series.csv and summary.json
under a `bwss-lab matrix --out` directory, or one cell's directory).

The video's short seconds.  A second from measure_from on is short when the
video got less than AT_MIN of its minimum (the lab's own definition,
analysis.video_at_min).  Each short second gets the first of these classes
that holds:

  udp-takes-it  the link less the UDP cross traffic could not carry AT_MIN of
                the minimum in that second (a receiver cannot take rate from
                an unresponsive sender in a shared queue);
  start         within START_S of measure_from;
  udp-onset     within EDGE_S after the cross traffic starts (or the second
                before it: the sender's clock and the series' differ);
  udp-end       likewise at its end;
  trace-dip     the link's rate fell by >= DIP of the previous second's in
                this second or the one before;
  sigma-drop    the controller's capacity estimate σ fell by >= DIP in this
                second or the one before;
  steady        none of these: a second inside a steady phase.

Each short second is printed with its deficit (kbit/s below the minimum),
whether the next second made it up (the video was late, not lost: a CBR
source with a backlog catches up), the bottleneck's drops and sojourn when
the lab's stage is the bottleneck, σ and the downloads' rate.

The aggregate.  Per phase of the run (before the cross traffic, during it,
the RECOVER_S after it, the rest), each mode's mean aggregate, bwss's as a
share of the ideal router's, and the downloads' use of what the video and
the cross traffic left (as linkstats.use_of_capacity, per phase); and the
seconds where bwss's link idled (what it carried < IDLE of its capacity as
TCP payload, cross traffic counted).

With --out FILE the same is written as a generated report (markdown: the
date, the runs' commits and machine, the command, a table of the cells,
then the text above).

usage: matrix-why.py DIR [--cells GLOB] [--mode bwss] [--out FILE]"""
import argparse
import contextlib
import csv
import datetime
import fnmatch
import io
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwsslab.analysis import AT_MIN, PAYLOAD_SHARE, UDP_WIRE  # noqa: E402

START_S = 5          # s after measure_from counted as the start (the first clamps, the first σ)
EDGE_S = 3           # s after a cross-traffic edge counted as its transient (~a few σ periods)
DIP = 0.15           # a fall of the link's rate or of σ by this share of the previous second
IDLE = 0.90          # an idle second: the link carried less than this share of its capacity
RECOVER_S = 5        # s after the cross traffic ends reported as its own phase
CLASSES = ("udp-takes-it", "start", "udp-onset", "udp-end", "trace-dip", "sigma-drop", "steady")


def load_mode(path):
    """(summary, rows) of one mode's run directory, None when absent or invalid."""
    try:
        s = json.load(open(os.path.join(path, "summary.json")))
        with open(os.path.join(path, "series.csv")) as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError):
        return None
    if not s.get("valid", False):
        return None
    return s, rows


def col(rows, key):
    """A column as floats (None where empty or absent)."""
    out = []
    for r in rows:
        v = r.get(key)
        out.append(float(v) if v not in (None, "") else None)
    return out


def bulk_sum(rows):
    keys = [k for k in rows[0] if k.startswith("bulk") and k.endswith("_kbps")]
    return [sum(float(r[k] or 0) for k in keys) for r in rows]


def fell(series, t):
    """Whether series fell by >= DIP of the previous second at t or t-1."""
    for u in (t, t - 1):
        if u >= 1 and series[u] is not None and series[u - 1]:
            if series[u] < (1 - DIP) * series[u - 1]:
                return True
    return False


def classify(s, rows):
    """The short seconds of the video: [(t, class, figures dict)]."""
    p = s["parameters"]
    vmin = p["video_min_kbps"]
    skip = int(s.get("measure_from_s", 5))
    video, cap = col(rows, "video_kbps"), col(rows, "capacity_kbps")
    cross, sigma = col(rows, "cross_kbps"), col(rows, "sigma_kbps")
    drops, soj = col(rows, "stage_drops"), col(rows, "stage_sojourn_ms")
    bulk = bulk_sum(rows)
    c0, c1 = p.get("cross_start", 0), p.get("cross_end", 0)
    has_cross = p.get("cross_kbps", 0) > 0
    out = []
    for t in range(skip, len(rows)):
        if video[t] >= AT_MIN * vmin:
            continue
        if cap[t] * PAYLOAD_SHARE - (cross[t] or 0) * UDP_WIRE < AT_MIN * vmin:
            k = "udp-takes-it"
        elif t < skip + START_S:
            k = "start"
        elif has_cross and c0 - 1 <= t < c0 + EDGE_S:
            k = "udp-onset"
        elif has_cross and c1 - 1 <= t < c1 + EDGE_S:
            k = "udp-end"
        elif fell(cap, t):
            k = "trace-dip"
        elif sigma[t] is not None and fell(sigma, t):
            k = "sigma-drop"
        else:
            k = "steady"
        nxt = video[t + 1] if t + 1 < len(rows) else None
        out.append((t, k, {"video": video[t], "deficit": vmin - video[t],
                           "made_up": nxt is not None and nxt >= vmin + 0.5 * (vmin - video[t]),
                           "sigma": sigma[t], "bulk": bulk[t], "cap": cap[t], "cross": cross[t],
                           "drops": drops[t], "sojourn": soj[t]}))
    return out


def phases(s):
    p = s["parameters"]
    skip, dur = int(s.get("measure_from_s", 5)), int(p["duration"])
    c0, c1 = int(p.get("cross_start", 0)), int(p.get("cross_end", 0))
    if p.get("cross_kbps", 0) <= 0 or c1 <= c0:
        return [("all", skip, dur)]
    out = [("before", skip, c0), ("udp", c0, c1), ("after", c1, min(dur, c1 + RECOVER_S)),
           ("rest", c1 + RECOVER_S, dur)]
    return [(n, a, b) for n, a, b in out if b > a]


def phase_figures(s, rows, a, b):
    """Mean aggregate and the downloads' use of what was left over [a, b)."""
    agg, cap, cross = col(rows, "aggregate_kbps"), col(rows, "capacity_kbps"), col(rows, "cross_kbps")
    video, bulk = col(rows, "video_kbps"), bulk_sum(rows)
    secs = [t for t in range(a, min(b, len(rows)))]
    if not secs:
        return None
    left = sum(max(0.0, cap[t] * PAYLOAD_SHARE - video[t] - (cross[t] or 0) * UDP_WIRE) for t in secs)
    idle = [t for t in secs if agg[t] + (cross[t] or 0) * UDP_WIRE < IDLE * cap[t] * PAYLOAD_SHARE]
    return {"agg": sum(agg[t] for t in secs) / len(secs),
            "cross": sum((cross[t] or 0) for t in secs) / len(secs),
            "use": sum(bulk[t] for t in secs) / left if left > 0 else None,
            "idle": idle}


def fmt(v, f="%.0f"):
    return "-" if v is None else f % v


def report_cell(name, cdir, mode):
    runs = {m: load_mode(os.path.join(cdir, m)) for m in ("tcp", mode, "ideal")}
    if runs[mode] is None:
        print("## %s: no valid %s run" % (name, mode))
        return None
    s, rows = runs[mode]
    short = classify(s, rows)
    skip = int(s.get("measure_from_s", 5))
    n = len(rows) - skip
    vmin = s["parameters"]["video_min_kbps"]
    ideal = runs["ideal"]
    ishort = classify(*ideal) if ideal else None
    print("## %s" % name)
    print("video minimum %g kbit/s; %s short in %d of %d s (%s at its minimum %.1f %%); ideal short in %s"
          % (vmin, mode, len(short), n, mode, 100.0 * (n - len(short)) / n,
             fmt(None if ishort is None else len(ishort), "%d")))
    if short:
        counts = {k: sum(1 for _, c, _ in short if c == k) for k in CLASSES}
        print("classes: " + ", ".join("%s %d" % (k, v) for k, v in counts.items() if v))
        for t, k, f in short:
            print("  %2d s %-12s video %6.0f (-%4.1f %%)%s  σ %s  downloads %s  link %s  cross %s%s"
                  % (t, k, f["video"], 100 * f["deficit"] / vmin, " made up" if f["made_up"] else "",
                     fmt(f["sigma"]), fmt(f["bulk"]), fmt(f["cap"]), fmt(f["cross"]),
                     "" if f["drops"] is None else "  drops %d sojourn %s ms" % (f["drops"], fmt(f["sojourn"], "%.1f"))))
    print("aggregate per phase, kbit/s (= %s's %% of ideal's; the downloads' use of what is left, %s | ideal;"
          " %s's idle seconds):" % (mode, mode, mode))
    for pname, a, b in phases(s):
        f = phase_figures(s, rows, a, b)
        fi = phase_figures(*ideal, a, b) if ideal else None
        ft = phase_figures(*runs["tcp"], a, b) if runs["tcp"] else None
        line = ("  %-6s [%2d,%2d) tcp %6s  %s %6s  ideal %6s  = %5s %%  use %5s | %5s %%  idle %d s%s"
                % (pname, a, b, fmt(ft and ft["agg"]), mode, fmt(f["agg"]), fmt(fi and fi["agg"]),
                   fmt(fi and fi["agg"] and 100 * f["agg"] / fi["agg"]),
                   fmt(f["use"] and 100 * f["use"]), fmt(fi and fi["use"] and 100 * fi["use"]),
                   len(f["idle"]), (" " + ",".join(str(t) for t in f["idle"])) if f["idle"] else ""))
        if f["cross"] > 0:
            # what each mode left the UDP: an ideal router that polices it
            # carries more of ours than any receiver can make a queue give
            line += "  (UDP tcp %s, %s %s, ideal %s)" % (fmt(ft and ft["cross"]), mode, fmt(f["cross"]),
                                                         fmt(fi and fi["cross"]))
        print(line)
    skip_all, dur = int(s.get("measure_from_s", 5)), len(rows)
    f = phase_figures(s, rows, skip_all, dur)
    fi = phase_figures(*ideal, skip_all, dur) if ideal else None
    if fi and fi["agg"]:
        # the ideal router's aggregate less what it took from the UDP beyond
        # what this mode's queue left it: the part a receiver can reach
        took = max(0.0, f["cross"] - fi["cross"])
        print("aggregate over the run: %s %.0f = %.1f %% of ideal's %.0f; %.1f %% of it less the %.0f "
              "it took from the UDP" % (mode, f["agg"], 100 * f["agg"] / fi["agg"], fi["agg"],
                                       100 * f["agg"] / (fi["agg"] - took), took))
    return {k: sum(1 for _, c, _ in short if c == k) for k in CLASSES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--cells", default="*", help="glob of cell names (default all)")
    ap.add_argument("--mode", default="bwss")
    ap.add_argument("--out", help="write a generated markdown report here")
    a = ap.parse_args()
    if os.path.isfile(os.path.join(a.dir, a.mode, "summary.json")):
        cells = [(os.path.basename(os.path.normpath(a.dir)), a.dir)]
    else:
        try:
            names = sorted(os.listdir(a.dir))
        except OSError as e:
            print("matrix-why: %s" % e, file=sys.stderr)
            return 2
        cells = [(c, os.path.join(a.dir, c)) for c in names
                 if fnmatch.fnmatch(c, a.cells) and os.path.isdir(os.path.join(a.dir, c, a.mode))]
    if not cells:
        print("matrix-why: no cell with a %s run under %s" % (a.mode, a.dir), file=sys.stderr)
        return 2
    if a.out:
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            report_all(cells, a.mode)
        write_report(a, cells, text.getvalue())
        print("wrote %s" % a.out)
    else:
        report_all(cells, a.mode)
    return 0


def table(cells, mode):
    """The report's table: a row per cell with a valid run of @mode."""
    out = ["| cell | %s at its minimum, %% of s (short s) | short seconds, class@s | ideal short s | "
           "aggregate, %% of ideal (of ideal less what it took from the UDP) | downloads' use of what is "
           "left, the %d s after the UDP, %s / ideal %% |" % (mode, RECOVER_S, mode),
           "|---|---|---|---|---|---|"]
    for name, cdir in cells:
        b, i = load_mode(os.path.join(cdir, mode)), load_mode(os.path.join(cdir, "ideal"))
        if b is None:
            continue
        s, rows = b
        short = classify(s, rows)
        skip = int(s.get("measure_from_s", 5))
        n = len(rows) - skip
        f, fi = phase_figures(s, rows, skip, len(rows)), phase_figures(*i, skip, len(rows)) if i else None
        c1 = int(s["parameters"].get("cross_end", 0))
        fa = phase_figures(s, rows, c1, c1 + RECOVER_S)
        fia = phase_figures(*i, c1, c1 + RECOVER_S) if i else None
        agg = "-"
        if fi and fi["agg"]:
            agg = "%.1f (%.1f)" % (100 * f["agg"] / fi["agg"],
                                   100 * f["agg"] / (fi["agg"] - max(0.0, f["cross"] - fi["cross"])))
        out.append("| %s | %.1f (%d) | %s | %s | %s | %s / %s |" % (
            name, 100.0 * (n - len(short)) / n, len(short),
            ", ".join("%s@%d" % (k, t) for t, k, _ in short) or "none",
            "-" if i is None else len(classify(*i)), agg,
            fmt(fa and fa["use"] is not None and 100 * fa["use"] or None),
            fmt(fia and fia["use"] is not None and 100 * fia["use"] or None)))
    return "\n".join(out)


def write_report(a, cells, text):
    commits, machine = set(), None
    for _, cdir in cells:
        r = load_mode(os.path.join(cdir, a.mode))
        if r:
            commits.add((r[0].get("matrix") or {}).get("commit") or "?")
            host = r[0].get("host") or {}
            machine = "%s CPUs, Linux %s" % (host.get("cpus", "?"), host.get("kernel", "?"))
    cmd = " ".join(["tests/lab/matrix-why.py"] + sys.argv[1:])
    with open(a.out, "w") as f:
        f.write("# When and why the video is short, and where the link idles\n\n")
        f.write("Generated by `tests/lab/matrix-why.py` on %s from the runs of commit %s; machine: %s, "
                "%s.\n\nCommand:\n\n    %s\n\n" % (datetime.date.today().isoformat(),
                                                 ", ".join(sorted(commits)), machine or "?",
                                                 platform.machine(), cmd))
        f.write("The classes and phases are the script's (its header says how each is decided). "
                "The lab's judgement of a trace cell counts only the seconds the link could carry the "
                "video (>= 1.1 × its minimum); these count every second from measure_from.\n\n")
        f.write(table(cells, a.mode) + "\n\n## Each cell\n\n```\n" + text + "```\n")


def report_all(cells, mode):
    total = dict.fromkeys(CLASSES, 0)
    judged = 0
    for name, cdir in cells:
        c = report_cell(name, cdir, mode)
        print()
        if c is not None:
            judged += 1
            for k in CLASSES:
                total[k] += c[k]
    print("## all %d cells: short seconds by class: %s" % (judged, ", ".join(
        "%s %d" % (k, v) for k, v in total.items())))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""How long must a matrix run be?  The figures the matrix's targets judge —
the video at its minimum (share of seconds), the required prebuffer, the
queue's median and the aggregate — computed from recorded lab runs over the
whole run and over a shorter run emulated from the same recording, against
the spread of each figure from run to run of the same cell and mode.

A shorter run of D seconds keeps the shape of the run: its disturbance (the
cross traffic, or a second machine's downloads) in the same third of the
run, scaled: [a, b) of a T-s run becomes [a', b') = [a·D/T, b·D/T).  It is
emulated from a T-s recording by keeping the first seconds of each phase:

    [0, a')  of the part before the disturbance (the warm-up and start-up),
    [a, a + b' − a')  the disturbance's onset and its first seconds,
    [b, b + D − b')   the recovery after it,

so every transient a target can fail on (start-up, onset, end) is kept,
only the steady seconds between them are cut.  The figures are the lab's
own (analysis.py, linkstats.py), on the kept seconds from measure_from on;
the prebuffer is the largest lateness (arrival − t0 − kΔ, bwss/late.h) of
the video's packets arriving in the kept seconds, warm-up included (the
recording's lateness carried into a later phase is what a shorter run's
would be only if the earlier phase had reached the same state: a caveat).

Also printed: how many short seconds each video target allows over the
measured seconds of each duration (98 % of 55 s allows 1, of 35 s none),
and a moving-block bootstrap (5-s blocks, 2000 draws, seed 1) of each
figure's standard error over the kept seconds, against the run-to-run
standard deviation.

usage: duration-study.py [--durations 40,45,50] [--reference 60] RUN_DIR...
  RUN_DIR: a run directory (summary.json, samples.txt, video-trace.txt,
  run.json) or any directory above some (bwss-lab run --repeat's base,
  bwss-lab matrix's --out); runs of the same parameters and mode are one
  group.  Invalid runs are left out and counted."""
import argparse
import collections
import dataclasses
import json
import math
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bwsslab import analysis, linkstats, matrix  # noqa: E402
from bwsslab.scenario import SCENARIOS  # noqa: E402

VIDEO_TARGETS = (0.95, 0.98)   # the matrix's share of seconds now, and issue 32's
BLOCK_S = 5                    # bootstrap block: the queue and rates are correlated over a few RTTs of cubic
DRAWS = 2000
FIGURES = ("video", "prebuffer", "queue", "aggregate")
UNITS = {"video": "%", "prebuffer": "s", "queue": "ms", "aggregate": "kbit/s"}


def find_runs(paths):
    out = []
    for p in paths:
        for root, dirs, files in os.walk(p):
            dirs.sort()
            if "summary.json" in files and "samples.txt" in files and "run.json" in files:
                out.append(root)
    return out


def scenario_of(summary):
    """The run's Scenario, from its summary's parameters."""
    params = dict(summary["parameters"])
    base = SCENARIOS[params.pop("name")]
    fields = {f.name for f in dataclasses.fields(base)}
    changes = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items() if k in fields}
    return dataclasses.replace(base, **changes)


def disturbance(sc):
    """The run's disturbance window [a, b), s: the cross traffic, else the
    second machine's time on, else None."""
    if sc.cross_kbps and sc.cross_end > sc.cross_start:
        return float(sc.cross_start), float(sc.cross_end)
    if getattr(sc, "hosts", 1) == 2:
        w = sc.host2_window()
        if w:
            return float(w[0]), float(w[1])
    return None


def kept_seconds(sc, dur_s):
    """The recording's seconds [lo, hi) that stand for a run of dur_s s."""
    T = float(sc.duration)
    if dur_s >= T:
        return [(0.0, T)]
    w = disturbance(sc)
    if w is None:
        return [(0.0, float(dur_s))]
    a, b = w
    a2, b2 = round(a * dur_s / T), round(b * dur_s / T)
    return [(0.0, float(a2)), (a, a + (b2 - a2)), (b, b + (dur_s - b2))]


def inside(t, spans):
    return any(lo <= t < hi for lo, hi in spans)


def lateness(sc, video_trace, packet_bytes=1000):
    """(t, lateness s) of each read completing packets, as bwss/late.h: the
    first packet it completes, arrival − t0 − kΔ; and the run's required
    prebuffer with the end's wait, as bwss-late --end duration."""
    delta = 8.0 * packet_bytes / (sc.video_kbps * 1000.0)
    out, total, arrived, t0 = [], 0, 0, None
    for t, b in sorted(video_trace):
        if t0 is None:
            t0 = t
        total += b
        complete = total // packet_bytes
        if complete > arrived:
            out.append((t, (t - t0) - arrived * delta))
            arrived = complete
    need = max([x for _, x in out] + [0.0])
    if t0 is not None:
        need = max(need, (sc.duration - t0) - arrived * delta)
    return out, need


def figures(run, spans):
    """The four figures over the kept spans (measure_from on, but the
    prebuffer from the start)."""
    sc, skip, rate, q, late, cap = run["sc"], run["skip"], run["rate"], run["q"], run["late"], run["cap"]
    secs = [s for s in range(skip, int(sc.duration)) if inside(s + 0.5, spans)]
    out = {"seconds": len(secs)}
    video = rate.get("video")
    if video is not None:
        moving = sc.link_trace not in ("", "flat")
        vs = [s for s in secs if not moving or cap[s] >= linkstats.CAPABLE * sc.video_min_kbps]
        ok = sum(1 for s in vs if video[s] >= analysis.AT_MIN * sc.video_min_kbps)
        out["video"] = 100.0 * ok / len(vs) if vs else None
        out["video_short"] = len(vs) - ok
        out["video_n"] = len(vs)
        lat = [x for t, x in late if inside(t, spans)]
        out["prebuffer"] = max(lat + [0.0])
    qs = [x for t, x in q if t >= skip and inside(t, spans)]
    out["queue"] = statistics.median(qs) if qs else None
    out["aggregate"] = statistics.mean(sum(rate[n][s] for n in rate) for s in secs) if secs else None
    return out, secs


def bootstrap_se(run, secs, rng):
    """Moving-block bootstrap over the kept seconds: the standard error of
    the video share, the queue median and the aggregate."""
    sc, rate, q = run["sc"], run["rate"], run["q"]
    video = rate.get("video")
    qsec = collections.defaultdict(list)
    for t, x in q:
        qsec[int(t)].append(x)
    n = len(secs)
    if n < 2 * BLOCK_S:
        return {}
    starts = list(range(n - BLOCK_S + 1))
    draws = {"video": [], "queue": [], "aggregate": []}
    for _ in range(DRAWS):
        pick = []
        while len(pick) < n:
            i = rng.choice(starts)
            pick += secs[i:i + BLOCK_S]
        pick = pick[:n]
        if video is not None:
            draws["video"].append(100.0 * sum(1 for s in pick if video[s] >= analysis.AT_MIN * sc.video_min_kbps) / n)
        qs = [x for s in pick for x in qsec.get(s, [])]
        if qs:
            draws["queue"].append(statistics.median(qs))
        draws["aggregate"].append(statistics.mean(sum(rate[k][s] for k in rate) for s in pick))
    return {k: statistics.stdev(v) for k, v in draws.items() if len(v) > 1}


def load(run_dir):
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    sc = scenario_of(summary)
    meta = json.load(open(os.path.join(run_dir, "run.json")))
    rate, qdelay, video_trace, _, _, _, _ = analysis.load_samples(sc, run_dir, meta["t0_monotonic"])
    q = [(t, x) for samples in qdelay.values() for t, x in samples]
    late, need = lateness(sc, video_trace)
    return {"dir": run_dir, "summary": summary, "sc": sc, "skip": int(summary["measure_from_s"]),
            "rate": rate, "q": q, "late": late, "need": need, "cap": linkstats.capacity(sc)}


def fmt(v, k):
    if v is None:
        return "–"
    return "%.0f" % v if k == "aggregate" else "%.1f" % v if k in ("video", "queue") else "%.2f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--durations", default="40,45,50")
    ap.add_argument("--reference", type=int, default=0,
                    help="compare with an emulated run of this many seconds (the matrix's 60) instead of "
                         "the whole recording, when the recording is longer")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    durations = [int(x) for x in args.durations.split(",") if x]
    dirs = find_runs(args.runs)
    groups = collections.OrderedDict()
    invalid = 0
    for d in dirs:
        try:
            r = load(d)
        except (OSError, ValueError, KeyError) as e:
            print("# %s: not read (%s)" % (d, e))
            continue
        if not r["summary"].get("valid"):
            invalid += 1
            continue
        key = json.dumps(r["summary"]["parameters"], sort_keys=True) + "|" + r["summary"]["mode"]
        groups.setdefault(key, []).append(r)
    print("%d run directories, %d valid in %d groups (parameters and mode), %d invalid left out\n"
          % (len(dirs), sum(len(g) for g in groups.values()), len(groups), invalid))

    # the check of this script against the lab's own summary: the full run's figures
    print("## The full runs' figures against their summary.json (this script's check)\n")
    print("| run | video % (summary) | prebuffer s (summary) | queue median ms (summary) | aggregate (summary) |")
    print("|---|---|---|---|---|")
    mism = 0
    for g in groups.values():
        for r in g:
            f, _ = figures(r, [(0.0, float(r["sc"].duration))])
            s = r["summary"]
            sv = analysis_video(s)
            sq = (s.get("queue_delay_ms") or {}).get("median")
            cells = []
            for k, mine, theirs, tol in (("video", f.get("video"), None if sv is None else 100 * sv, 0.05),
                                         ("prebuffer", r["need"], s.get("required_prebuffer_s"), 0.002),
                                         ("queue", f["queue"], sq, 0.051),
                                         ("aggregate", f["aggregate"], s["aggregate_kbps"], 0.2)):
                same = (mine is None and theirs is None) or (
                    mine is not None and theirs is not None and abs(mine - theirs) <= tol)
                mism += not same
                cells.append("%s (%s)%s" % (fmt(mine, k), fmt(theirs, k), "" if same else " ≠"))
            print("| %s | %s |" % (short(r["dir"]), " | ".join(cells)))
    print("\n%d figures differ from the summary's\n" % mism)

    print("## Video target: short seconds allowed over the measured seconds\n")
    print("| duration | measured s | " + " | ".join("≥ %d %%: short s allowed" % (100 * v) for v in VIDEO_TARGETS) + " |")
    print("|---|---|" + "---|" * len(VIDEO_TARGETS))
    skip = 5
    for D in sorted(set(durations + [60])):
        n = D - skip
        print("| %d s | %d | %s |" % (D, n, " | ".join(
            "%d" % math.floor(n * (1 - v) + 1e-9) for v in VIDEO_TARGETS)))
    print()

    rng = random.Random(1)
    print("## Each figure: run-to-run spread, and the emulated shorter run's shift\n")
    print("Reference: the whole recording%s. Spread: the range (max − min) and standard deviation of the "
          "reference's figure over the group's runs. Shift: |shorter − reference| per run, its largest over "
          "the group's runs. SE: the bootstrap's standard error, median over the runs.\n"
          % (", or an emulated run of %d s when the recording is longer" % args.reference if args.reference else ""))
    print("| group (mode, runs) | figure | reference runs | range | sd | SE reference | "
          + " | ".join("D=%d: largest shift, SE" % D for D in durations) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(durations))
    for key, g in groups.items():
        sc = g[0]["sc"]
        w = disturbance(sc)
        name = "%s %s %s %gk %s, %d s%s" % (g[0]["summary"]["mode"], sc.bottleneck, sc.sender_cc, sc.link_kbps,
                                             sc.link_trace or "fixed", sc.duration,
                                             ", disturbance %g-%g s" % w if w else "")
        ref = args.reference if 0 < args.reference < sc.duration else int(sc.duration)
        full = [figures(r, kept_seconds(sc, ref)) for r in g]
        short_f = {D: [figures(r, kept_seconds(sc, D)) for r in g] for D in durations}
        se_full = [bootstrap_se(r, secs, rng) for r, (_, secs) in zip(g, full)]
        se_short = {D: [bootstrap_se(r, secs, rng) for r, (_, secs) in zip(g, short_f[D])] for D in durations}
        for k in FIGURES:
            vals = [f[k] for f, _ in full if f.get(k) is not None]
            if not vals:
                continue
            rng_ = max(vals) - min(vals) if len(vals) > 1 else None
            sd = statistics.stdev(vals) if len(vals) > 1 else None
            cols = []
            for D in durations:
                shifts = [abs(s[0][k] - f[0][k]) for s, f in zip(short_f[D], full)
                          if s[0].get(k) is not None and f[0].get(k) is not None]
                ses = [e[k] for e in se_short[D] if k in e]
                cols.append("%s, %s" % (fmt(max(shifts), k) if shifts else "–",
                                        fmt(statistics.median(ses), k) if ses else "–"))
            ses = [e[k] for e in se_full if k in e]
            print("| %s (%d) | %s %s | %s | %s | %s | %s | %s |"
                  % (name, len(g), k, UNITS[k], " ".join(fmt(v, k) for v in vals), fmt(rng_, k), fmt(sd, k),
                     fmt(statistics.median(ses), k) if ses else "–", " | ".join(cols)))
    print()
    verdicts(groups, args, durations)
    print("## Where each run's largest lateness (its prebuffer) arrived, s from the start\n")
    for key, g in groups.items():
        for r in g:
            if r["late"]:
                t, x = max(r["late"], key=lambda p: p[1])
                print("- %s: %.2f s at %.1f s (disturbance %s)" % (short(r["dir"]), x, t, disturbance(r["sc"])))
    return 0


def as_summary(f):
    """The figures in the shape matrix.TARGETS reads."""
    return {"video_at_min": None if f.get("video") is None else f["video"] / 100.0,
            "required_prebuffer_s": f.get("prebuffer"), "aggregate_kbps": f.get("aggregate"),
            "queue_delay_ms": {} if f.get("queue") is None else {"median": f["queue"]}, "link": {}}


def verdicts(groups, args, durations):
    """The matrix's targets (matrix.TARGETS) on each run of bwss with the
    tcp and ideal runs beside it (the same directory above the mode's), at
    the reference and at each shorter duration: a target whose verdict
    flips is what shortening would change."""
    triples = collections.defaultdict(dict)
    for g in groups.values():
        for r in g:
            triples[os.path.dirname(r["dir"])][r["summary"]["mode"]] = r
    rows = []
    for parent, modes in sorted(triples.items()):
        if "bwss" not in modes or "ideal" not in modes:
            continue
        sc = modes["bwss"]["sc"]
        ref = args.reference if 0 < args.reference < sc.duration else int(sc.duration)
        cols = []
        for D in [ref] + durations:
            f = {m: as_summary(figures(r, kept_seconds(sc, D))[0]) for m, r in modes.items()}
            out = []
            for k, _, _, test in matrix.TARGETS:
                if k == "queue" and "tcp" not in f:
                    out.append("%s –" % k)
                    continue
                try:
                    ok = test(f["bwss"], f.get("tcp", {}), f["ideal"])
                except (KeyError, TypeError):
                    ok = None
                out.append("%s %s" % (k, "–" if ok is None else "met" if ok else "MISSED"))
            cols.append(", ".join(out))
        flips = sum(1 for c in cols[1:] if c != cols[0])
        rows.append("| %s | %s | %d of %d |" % (short(parent), " | ".join(cols), flips, len(durations)))
    if not rows:
        return
    print("## The matrix's targets on each bwss run (with the tcp and ideal runs beside it)\n")
    print("| runs | reference | " + " | ".join("D=%d" % D for D in durations) + " | durations changing a verdict |")
    print("|---|---|" + "---|" * len(durations) + "---|")
    for r in rows:
        print(r)
    print()


def analysis_video(s):
    ln = s.get("link") or {}
    if ln.get("trace") and ln.get("video_at_min_capable") is not None:
        return ln["video_at_min_capable"]
    return s.get("video_at_min")


def short(d):
    parts = os.path.normpath(d).split(os.sep)
    return "/".join(parts[-3:])


if __name__ == "__main__":
    sys.exit(main())

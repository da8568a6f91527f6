#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What any receiver could reach on a matrix cell behind fq_codel with a
moving link: an oracle bound, from the lab's own trace (linktrace.py, the
cell's trace_seed) and the matrix's shape (matrix.py: a video of 45 % of
the link L at its minimum, two downloads, UDP of a third of L from 20 to
40 s of a 60-s run, seconds counted from 5 s).

The model of the bottleneck, every STEP_S: fq_codel's scheduler as
max-min fair shares of the link's rate now among the video, each download
and the UDP; no drops, no windows, no RTT.  The video is a constant-rate
source whose backlog it sends as fast as its share allows (it catches up
after a dip, as a paced sender with a socket buffer does).  The downloads
ask together what σ leaves above the video's minimum, split evenly.  σ
is set by a policy that knows the link's rate exactly:
  follow F LAG   σ = F × (the link less the UDP) LAG seconds ago (the
                 loop's reaction time: a decision and an RTT);
  quantile Q     σ = the Q quantile of the link less the UDP over the last
                 WINDOW_S (a σ held for the minima's sake: the video's
                 room survives the next fall).
Per policy: the downloads' use of what the video leaves (the link less the
UDP less the video's minimum, each step, as linkstats.use_of_capacity), and
the seconds the video is short (below AT_MIN of its minimum over the
second, of the seconds the lab counts: the link's mean at least 1.1 × the
minimum), of them while the UDP runs.  Anything real does worse: the
video's sender loses segments to CoDel where the bound lets it queue.

With --out FILE the same is written as a generated report (markdown: the
date, the commit, the machine, the command).

usage: trace-bound.py [--cell NAME] [--out FILE]"""

import argparse
import datetime
import os
import platform
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bwsslab import linktrace, matrix  # noqa: E402

STEP_S = 0.01        # the bound's step: a tenth of the trace's shortest level
AT_MIN = 0.9         # the lab's video_at_min: >= 90 % of the minimum
CAPABLE = 1.1        # the lab's capable second: the link's mean >= 1.1 x the minimum
MEASURE_FROM_S = 5
WINDOW_S = 3.0       # the quantile policy's memory: ten levels of the wifi trace
FOLLOW = ((1.0, 0.0), (0.9, 0.0), (1.0, 0.05), (0.9, 0.05), (1.0, 0.1), (0.9, 0.1),
          (1.0, 0.2), (0.9, 0.2), (1.0, 0.3))
QUANTILES = (0.0, 0.1, 0.2, 0.3, 0.5)


def fair_shares(link, demands):
    """Max-min fair shares of link among demands (fq_codel's scheduler)."""
    alloc = [0.0] * len(demands)
    left, active = link, list(range(len(demands)))
    while active and left > 1e-9:
        share = left / len(active)
        done = [k for k in active if demands[k] - alloc[k] <= share]
        if not done:
            for k in active:
                alloc[k] += share
            break
        for k in done:
            left -= demands[k] - alloc[k]
            alloc[k] = demands[k]
        active = [k for k in active if k not in done]
    return alloc


class Cell:
    def __init__(self, name):
        cells = {c.name: c for c in matrix.cells()}
        if name not in cells:
            raise SystemExit("trace-bound.py: no matrix cell %s (bwss-lab matrix --list)" % name)
        sc = cells[name].scenario()
        self.name, self.sc = name, sc
        self.dur = int(sc.duration)
        self.video = float(sc.video_min_kbps)
        self.downloads = int(sc.bulk)
        pts = linktrace.points(sc)
        if not pts:
            raise SystemExit("trace-bound.py: %s has no link trace" % name)
        self.steps = int(round(self.dur / STEP_S))
        self.link = [linktrace.rate_at(pts, i * STEP_S) for i in range(self.steps)]
        self.means = linktrace.per_second(pts, self.dur, sc.link_kbps)

    def udp(self, i):
        t = i * STEP_S
        return float(self.sc.cross_kbps) if self.sc.cross_start <= t < self.sc.cross_end else 0.0

    def room(self, i):
        return self.link[i] - self.udp(i)

    def run(self, sigma):
        got = left = backlog = 0.0
        seconds = {}
        for i in range(self.steps):
            d = max(0.0, sigma(i) - self.video)
            u = self.udp(i)
            demands = [self.video + backlog / STEP_S] + [d / self.downloads] * self.downloads
            a = fair_shares(self.link[i], demands + ([u] if u > 0 else []))
            backlog = max(0.0, backlog + (self.video - a[0]) * STEP_S)
            if i * STEP_S < MEASURE_FROM_S:
                continue
            seconds.setdefault(int(i * STEP_S), []).append(a[0])
            got += sum(a[1:1 + self.downloads])
            left += max(0.0, self.room(i) - self.video)
        capable = [s for s in seconds if self.means[s] >= CAPABLE * self.video]
        short = [s for s in capable if sum(seconds[s]) / len(seconds[s]) < AT_MIN * self.video]
        in_udp = [s for s in short if self.sc.cross_start <= s < self.sc.cross_end]
        return 100.0 * got / left, len(short), len(in_udp), len(capable)

    def follow(self, f, lag):
        back = int(round(lag / STEP_S))
        return self.run(lambda i: f * self.room(max(0, i - back)))

    def quantile(self, q):
        n = int(round(WINDOW_S / STEP_S))

        def sigma(i):
            past = sorted(self.room(k) for k in range(max(0, i - n), i + 1))
            return past[int(q * (len(past) - 1))]
        return self.run(sigma)


def table(cell):
    rows = ["| σ | downloads' use of what the video leaves, % | video short, s (while the UDP runs) | "
            "capable s |", "|---|---|---|---|"]
    for f, lag in FOLLOW:
        use, short, udp, cap = cell.follow(f, lag)
        rows.append("| %.1f × the link less the UDP %.2f s ago | %.0f | %d (%d) | %d |"
                    % (f, lag, use, short, udp, cap))
    for q in QUANTILES:
        use, short, udp, cap = cell.quantile(q)
        rows.append("| the %.0f %% quantile of the link less the UDP over %.0f s | %.0f | %d (%d) | %d |"
                    % (100 * q, WINDOW_S, use, short, udp, cap))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cell", default="fq_codel-cubic-wifi-20M")
    ap.add_argument("--out")
    args = ap.parse_args()
    cell = Cell(args.cell)
    text = table(cell)
    if not args.out:
        print(text)
        return 0
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    command = "tests/lab/trace-bound.py --cell %s --out %s" % (args.cell, args.out)
    with open(args.out, "w") as f:
        f.write("# What a receiver could reach on %s: an oracle bound\n\n" % args.cell)
        f.write("Generated by `tests/lab/trace-bound.py` on %s from commit %s; machine: %d CPUs, "
                "Linux %s, %s.\n\nCommand:\n\n    %s\n\n"
                % (datetime.date.today().isoformat(), commit, os.cpu_count() or 0,
                   platform.release(), platform.machine(), command))
        f.write("The lab's trace of the cell (its trace_seed) every %.0f ms; fq_codel as max-min fair "
                "shares among the video, the downloads and the UDP; no drops, windows or RTTs; the "
                "video a constant-rate source that catches up its backlog. σ set by a policy that "
                "knows the link exactly (the script's header says how each figure is computed). "
                "Anything real does worse.\n\n" % (STEP_S * 1000))
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

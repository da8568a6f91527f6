#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""short-decisions.py on a synthetic run (no network): a short second after
σ rose above what the flows moved, one at the cross traffic's onset, one
with σ flat, their deficits and the video's RTT; and a clear error for a
directory without decision lines.  (TAP output.)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "short-decisions.py")
sys.path.insert(0, HERE)
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check
T0 = 1000.0          # the monotonic clock at the run's start


def decision(f, t, rule, sigma, u, video_rtt):
    f.write("%.3f phase=track rule=%s sigma=%d u=%d q=1000 qt=10000\n" % (T0 + t, rule, sigma, u))
    f.write("%.3f flow id=1 min=0 target=500000 rate=400000 window=2896 pace=0 rtt=25000\n" % (T0 + t))
    f.write("%.3f flow id=2 min=400000 target=500000 rate=400000 window=8688 pace=0 rtt=%d\n"
            % (T0 + t, video_rtt))


with tempfile.TemporaryDirectory() as root:
    run = os.path.join(root, "bwss")
    os.makedirs(run)
    params = {"video_min_kbps": 400.0, "cross_kbps": 300, "cross_start": 20, "cross_end": 40}
    json.dump({"measure_from_s": 5, "parameters": params}, open(os.path.join(run, "summary.json"), "w"))
    json.dump({"t0_monotonic": T0}, open(os.path.join(run, "run.json"), "w"))
    short = {3: 300.0, 12: 330.0, 20: 250.0, 30: 340.0}     # 3 s is before the count starts
    with open(os.path.join(run, "series.csv"), "w") as f:
        f.write("t,video_kbps\n")
        for t in range(60):
            f.write("%d,%.1f\n" % (t, short.get(t, 420.0)))
    with open(os.path.join(run, "decisions.txt"), "w") as f:
        # before 12 s: σ 900 → 1100 in four raises while the flows moved 850-870
        for t, s in ((10.6, 900000), (11.0, 980000), (11.4, 1040000), (11.8, 1100000)):
            decision(f, t, "raise", s, 850000 + (t > 11) * 20000, 31000)
        decision(f, 12.2, "deficit", 880000, 860000, 74000)
        # the onset: a deficit at 20.3 s
        decision(f, 19.5, "hold", 900000, 880000, 31000)
        decision(f, 20.3, "deficit", 600000, 620000, 66000)
        # 30 s: σ flat, no deficit
        decision(f, 29.4, "hold", 800000, 790000, 31000)
        decision(f, 30.2, "hold", 800000, 780000, 40000)
    r = subprocess.run([sys.executable, TOOL, run], capture_output=True, text=True)
    rows = {int(l.split("|")[2]): [c.strip() for c in l.split("|")[1:-1]]
            for l in r.stdout.splitlines() if l.startswith("| ") and l.split("|")[2].strip().isdigit()}
    check(r.returncode == 0, "runs: %s" % r.stderr.strip())
    check(sorted(rows) == [12, 20, 30], "the short seconds from measure_from on: %s" % sorted(rows))
    row = rows.get(12, [""] * 9)
    check(row[3] == "raised" and row[4] == "4" and row[5] == "900 → 1100" and row[6] == "850–870",
          "12 s: σ raised above what the flows moved: %s" % row)
    check(row[7] == "12.20" and row[8] == "74", "12 s: the deficit and the video's RTT at it: %s" % row)
    check(rows.get(20, [""] * 4)[3] == "udp-onset", "20 s: the cross traffic's onset")
    row = rows.get(30, [""] * 9)
    check(row[3] == "other" and row[7] == "-", "30 s: σ flat, no deficit: %s" % row)
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    r = subprocess.run([sys.executable, TOOL, empty], capture_output=True, text=True)
    check(r.returncode != 0 and "decisions.txt" in r.stderr, "a directory without decision lines: "
          "an error that says what is missing: %r" % r.stderr.strip())

tap.done()

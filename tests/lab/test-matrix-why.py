#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""matrix-why.py on a synthetic cell (no network): each class of short
second where the timeline puts it, the phases' aggregates and idle
seconds, and a clear error for a directory without runs.  (TAP output.)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WHY = os.path.join(HERE, "matrix-why.py")
sys.path.insert(0, HERE)
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check


COLS = ["t", "bulk1_kbps", "bulk2_kbps", "video_kbps", "aggregate_kbps", "cross_kbps", "sigma_kbps",
        "capacity_kbps", "stage_kbps", "stage_sojourn_ms", "stage_drops"]


def write_mode(d, mode, video_at, cap_at=lambda t: 1000.0, sigma_at=lambda t: 900.0, bulk=500.0):
    os.makedirs(os.path.join(d, mode))
    params = {"video_min_kbps": 400.0, "duration": 60, "cross_kbps": 300, "cross_start": 20,
              "cross_end": 40}
    with open(os.path.join(d, mode, "summary.json"), "w") as f:
        json.dump({"valid": True, "measure_from_s": 5, "parameters": params}, f)
    with open(os.path.join(d, mode, "series.csv"), "w") as f:
        f.write(",".join(COLS) + "\n")
        for t in range(60):
            cross = 300.0 if 20 <= t < 40 else 0.0
            v = video_at(t)
            b = bulk if not 20 <= t < 40 else 100.0
            f.write(",".join(str(x) for x in (t, b / 2, b / 2, v, v + b, cross, sigma_at(t), cap_at(t),
                                                  v + b + cross, 5.0, 0)) + "\n")


with tempfile.TemporaryDirectory() as root:
    cell = os.path.join(root, "somecell")
    short = {6: 300, 21: 300, 41: 300, 30: 300, 50: 300, 55: 300, 58: 300}
    # 30: the link less the UDP cannot carry the video; 50: the link fell;
    # 55: σ fell; 58: nothing
    write_mode(cell, "bwss", lambda t: short.get(t, 420.0),
               cap_at=lambda t: {30: 600.0, 50: 700.0}.get(t, 1000.0),
               sigma_at=lambda t: 500.0 if t >= 55 else 900.0)
    write_mode(cell, "ideal", lambda t: 420.0)
    r = subprocess.run([sys.executable, WHY, root], capture_output=True, text=True)
    out = r.stdout
    check(r.returncode == 0, "exit 0 on a matrix directory")
    want = {6: "start", 21: "udp-onset", 41: "udp-end", 30: "udp-takes-it", 50: "trace-dip",
            55: "sigma-drop", 58: "steady"}
    for t, k in sorted(want.items()):
        line = next((l for l in out.splitlines() if l.strip().startswith("%d s " % t)), "")
        check(k in line, "%d s is %s: %r" % (t, k, line.strip()))
    check("short in 7 of 55 s" in out, "7 short seconds of 55 counted")
    check("ideal short in 0" in out, "the ideal run's short seconds counted")
    before = next((l for l in out.splitlines() if l.strip().startswith("before")), "")
    # 5-19 s: 420 + 500 of 965 carried, but at 6 s the short video's 120 missing
    check(before.rstrip().endswith("idle 1 s 6"), "before the UDP only 6 s idle: %r" % before.strip())
    udp = next((l for l in out.splitlines() if l.strip().startswith("udp ")), "")
    # the link 1000, what was carried 420 + 100 + 300 × 1.042 < 0.9 × 965,
    # but not at 30 s (the link 600)
    check("idle 19 s" in udp and ",30," not in udp, "the UDP phase's idle seconds: %r" % udp.strip())
    # bwss carried 508 in the UDP phase, the ideal 520, both beside the same UDP
    run = next((l for l in out.splitlines() if l.startswith("aggregate over the run")), "")
    check("less the 0 it took from the UDP" in run, "the run's aggregate against the ideal's: %r" % run)
    r = subprocess.run([sys.executable, WHY, cell], capture_output=True, text=True)
    check(r.returncode == 0 and "## somecell" in r.stdout, "one cell's directory works too")
    rep = os.path.join(root, "why.md")
    r = subprocess.run([sys.executable, WHY, root, "--out", rep], capture_output=True, text=True)
    text = open(rep).read() if os.path.exists(rep) else ""
    check(r.returncode == 0 and "| somecell | 87.3 (7) | start@6, udp-onset@21" in text
          and "\n    tests/lab/matrix-why.py " in text, "--out writes the report: the command, a row per cell")
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    r = subprocess.run([sys.executable, WHY, empty], capture_output=True, text=True)
    check(r.returncode == 2 and "no cell" in r.stderr, "a directory without runs: exit 2, says why")

tap.done()

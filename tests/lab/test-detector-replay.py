#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""detector-replay.py on synthetic decision lines (no network): a standing
queue read as foreign with the video at its minimum enters at the same
decision in both replays; the same queue with the video 20 % above its
minimum all along enters as recorded and never with the bare reading; a
bare reading lets the backlog's readings count for 1.5 s and no longer;
and a run without arguments gets its usage.  (TAP output.)"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "detector-replay.py")
sys.path.insert(0, HERE)
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check
T0 = 5000.0


def run(path, video_rate, seen=lambda t: "foreign", seconds=12.0, step=0.1):
    """Writes a run of decisions every @step s: TRACK, the verdict seen(t),
    the video (minimum 1 Mbit/s) at video_rate(t), one download at its
    floor; rule "enter" where the recorded score reaches 0.75 (the law's
    memory: an observation of at most 0.2 s over 1.5 s; the first decision
    has no interval)."""
    score, t = 0.0, 0.0
    with open(path, "w") as f:
        while t <= seconds:
            s = seen(t)
            if s == "foreign" and t > 0.0:
                score += (step / 1.5) * (1.0 - score)
            rule, phase = ("enter", "compete") if score >= 0.75 else ("hold", "track")
            f.write("%.3f phase=%s rule=%s sigma=1000000 u=1100000 q=120000 qt=20000 seen=%s "
                    "score=%.3f missing=- bulk=1 floored=1 lost=0 short=0 overrun=0\n"
                    % (T0 + t, phase, rule, s, score))
            f.write("%.3f flow id=1 min=1000000 target=1000000 rate=%d window=20000 pace=0 rtt=140000\n"
                    % (T0 + t, video_rate(t)))
            f.write("%.3f flow id=2 min=0 target=20000 rate=20000 window=2896 pace=0 rtt=140000\n" % (T0 + t))
            if rule == "enter":
                break
            t += step


def replayed(path):
    out = subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True)
    m = re.search(r"recorded entries (\S+)(?: s)?; replayed as recorded (\S+)(?: s| \(peak ([0-9.]+)\))?, "
                  r"with the bare reading (\S+)(?: s| \(peak ([0-9.]+)\))?; foreign (\d+), beside a backlog (\d+)",
                  out.stdout)
    return out, m


with tempfile.TemporaryDirectory() as root:
    at_min = os.path.join(root, "at-min.txt")
    run(at_min, lambda t: 1000000)
    out, m = replayed(at_min)
    check(out.returncode == 0 and m is not None, "the tool reads a run: %r" % out.stdout)
    if m:
        check(m.group(1) == m.group(2) == m.group(4) and m.group(1) != "none",
              "the video at its minimum: both replays enter where the run did (%s, %s, %s)"
              % (m.group(1), m.group(2), m.group(4)))
        check(m.group(7) == "0", "no reading beside a backlog")

    backlog = os.path.join(root, "backlog.txt")
    run(backlog, lambda t: 1200000)
    out, m = replayed(backlog)
    if m:
        check(m.group(1) == m.group(2) and m.group(1) != "none",
              "the video 20 %% above its minimum: the replay as recorded enters where the run did (%s, %s)"
              % (m.group(1), m.group(2)))
        check(m.group(4) == "none" and m.group(5) == "0.00",
              "... and with the bare reading never, its score never moved (%s, peak %s)"
              % (m.group(4), m.group(5)))
        check(m.group(6) == m.group(7), "every foreign reading beside the backlog (%s of %s)"
              % (m.group(7), m.group(6)))
    else:
        check(False, "the tool reads the backlog run: %r" % out.stdout)

    # foreign every other decision (the recorded run enters after 4 s); the
    # video at its minimum until 1 s, then above it: the backlog's readings
    # count until 2.5 s (1.5 s after the last bare one), then not
    fresh = os.path.join(root, "fresh.txt")
    every_other = lambda t: "foreign" if round(t * 10) % 2 == 0 else "neither"
    run(fresh, lambda t: 1000000 if t < 1.05 else 1200000, seen=every_other)
    out, m = replayed(fresh)
    if m:
        peak = float(m.group(5)) if m.group(5) else None
        counted = sum(1 for i in range(1, 26) if i % 2 == 0)   # foreign at 0.2 .. 2.4 s
        want = 1.0 - (1.0 - 0.1 / 1.5) ** counted
        check(m.group(1) != "none" and float(m.group(1)) > 4.0,
              "the recorded run enters after 4 s (%s)" % m.group(1))
        check(m.group(4) == "none" and peak is not None and abs(peak - want) < 0.005,
              "a bare reading lets the backlog count for 1.5 s: peak %s, expected %.3f" % (m.group(5), want))
    else:
        check(False, "the tool reads the fresh run: %r" % out.stdout)

out = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
check(out.returncode != 0 and "usage" in out.stderr, "no argument: its usage, a failure")
tap.done()

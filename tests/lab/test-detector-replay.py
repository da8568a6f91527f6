#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""detector-replay.py on synthetic decision lines (no network): a standing
queue read as foreign with the video at its minimum enters at the same
decision in the three replays; the same queue with the video 20 % above its
minimum all along (owed nothing) enters as recorded and never in the other
two; a shortfall owed lets the backlog's readings count until it is
repaid, a bare reading for 1.5 s, and no longer; and a run without
arguments gets its usage.  (TAP output.)"""
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


REPLAY = r"(\S+)(?: s| \(peak ([0-9.]+)\))"


def replayed(path):
    """The tool's output on path, and its figures: the first recorded entry,
    (entry, peak) of each replay ("none" and the peak, or the entry's time
    and None), the foreign readings and those beside a backlog."""
    out = subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True)
    m = re.search(r"recorded entries (\S+)(?: s)?; replayed as recorded " + REPLAY + ", owed " + REPLAY
                  + ", bare " + REPLAY + r"; foreign (\d+), beside a backlog (\d+)", out.stdout)
    if m is None:
        return out, None
    g = m.groups()
    return out, {"recorded_entry": g[0], "recorded": (g[1], g[2]), "owed": (g[3], g[4]),
                 "bare": (g[5], g[6]), "foreign": int(g[7]), "beside": int(g[8])}


with tempfile.TemporaryDirectory() as root:
    at_min = os.path.join(root, "at-min.txt")
    run(at_min, lambda t: 1000000)
    out, m = replayed(at_min)
    check(out.returncode == 0 and m is not None, "the tool reads a run: %r" % out.stdout)
    if m:
        e = m["recorded_entry"]
        check(e != "none" and m["recorded"][0] == m["owed"][0] == m["bare"][0] == e,
              "the video at its minimum: the three replays enter where the run did (%s: %r)" % (e, m))
        check(m["beside"] == 0, "no reading beside a backlog")

    backlog = os.path.join(root, "backlog.txt")
    run(backlog, lambda t: 1200000)
    out, m = replayed(backlog)
    if m:
        check(m["recorded_entry"] != "none" and m["recorded"][0] == m["recorded_entry"],
              "the video 20 %% above its minimum: the replay as recorded enters where the run did (%r)" % m)
        check(m["owed"] == ("none", "0.00") and m["bare"] == ("none", "0.00"),
              "... owed nothing, never with the other two, their score unmoved (%r, %r)" % (m["owed"], m["bare"]))
        check(m["foreign"] == m["beside"], "every foreign reading beside the backlog (%d of %d)"
              % (m["beside"], m["foreign"]))
    else:
        check(False, "the tool reads the backlog run: %r" % out.stdout)

    # foreign every other decision (the recorded run enters after 4 s); the
    # video at its minimum until 1 s, then above it: with the bare reading
    # the backlog's readings count until 2.5 s (1.5 s after the last bare
    # one), then not
    fresh = os.path.join(root, "fresh.txt")
    every_other = lambda t: "foreign" if round(t * 10) % 2 == 0 else "neither"
    run(fresh, lambda t: 1000000 if t < 1.05 else 1200000, seen=every_other)
    out, m = replayed(fresh)
    if m:
        counted = sum(1 for i in range(1, 26) if i % 2 == 0)   # foreign at 0.2 .. 2.4 s
        want = 1.0 - (1.0 - 0.1 / 1.5) ** counted
        check(m["recorded_entry"] != "none" and float(m["recorded_entry"]) > 4.0,
              "the recorded run enters after 4 s (%s)" % m["recorded_entry"])
        peak = m["bare"][1]
        check(m["bare"][0] == "none" and peak is not None and abs(float(peak) - want) < 0.005,
              "a bare reading lets the backlog count for 1.5 s: peak %s, expected %.3f" % (peak, want))
    else:
        check(False, "the tool reads the fresh run: %r" % out.stdout)

    # the video at 0.8 of its minimum for 1 s (0.2 Mbit owed; read "neither"),
    # then at 1.3 of it: the backlog's readings count while the 0.2 Mbit is
    # repaid, then not
    owed = os.path.join(root, "owed.txt")
    late = lambda t: "neither" if t < 1.05 else "foreign"
    run(owed, lambda t: 800000 if t < 1.05 else 1300000, seen=late)
    out, m = replayed(owed)
    if m:
        # decisions 0.1 s apart: owed 0.02 Mbit a decision to 1.0 s (ten), repaid
        # 0.03 a decision from 1.1 s: 0.02 left at 1.6 s, nothing at 1.7 s; the
        # foreign readings at 1.1 .. 1.6 s count
        want = 1.0 - (1.0 - 0.1 / 1.5) ** 6
        peak = m["owed"][1]
        check(m["owed"][0] == "none" and peak is not None and abs(float(peak) - want) < 0.005,
              "a shortfall owed lets the backlog count until it is repaid: peak %s, expected %.3f"
              % (peak, want))
        check(m["bare"] == ("none", "0.00"), "... and no bare reading ever came (%r)" % (m["bare"],))
    else:
        check(False, "the tool reads the owed run: %r" % out.stdout)

out = subprocess.run([sys.executable, TOOL], capture_output=True, text=True)
check(out.returncode != 0 and "usage" in out.stderr, "no argument: its usage, a failure")
tap.done()

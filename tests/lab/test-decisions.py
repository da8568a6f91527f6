#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwsslab.decisions on bwssd's decision lines ($BWSS_DECISIONS, as
tools/decision-line.c writes them; no network): each line parsed on the
run's clock, the detector's verdicts counted in TRACK only, the condition
that alone kept a decision from "foreign" told from those it lacked with
others, the entries and the score's peak found, the measuring window
honoured, the downloads' rates against their targets, and a run without
decisions said so; with test-capacity's path as argument, the lines its
model runs write ($BWSS_SIM_DECISIONS, the same formatter) read back.
(TAP output.)"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bwsslab import decisions  # noqa: E402
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check

T0 = 1000.0
LINES = [
    # the start: no detector
    "1001.500000 phase=start rule=start sigma=496000 u=120000 q=-1 qt=0 seen=- score=0.000 missing=- "
    "bulk=2 floored=2 lost=0 short=1 overrun=0",
    # before the measuring window (5 s): counted nowhere
    "1004.900000 phase=track rule=cut sigma=600000 u=900000 q=40000 qt=20000 seen=foreign score=0.100 "
    "missing=- bulk=2 floored=2 lost=0 short=0 overrun=0",
    "1006.000000 phase=track rule=hold sigma=600000 u=900000 q=3000 qt=20000 seen=ours score=0.050 "
    "missing=no-queue bulk=2 floored=2 lost=0 short=0 overrun=0",
    "1006.300000 phase=track rule=raise sigma=650000 u=900000 q=2000 qt=20000 seen=neither score=0.050 "
    "missing=unfloored,no-queue bulk=2 floored=1 lost=1 short=0 overrun=0",
    "1006.600000 phase=track rule=hold sigma=650000 u=900000 q=4000 qt=20000 seen=neither score=0.050 "
    "missing=no-queue,held bulk=2 floored=2 lost=2 short=0 overrun=0",
    "1007.000000 phase=track rule=cut sigma=600000 u=900000 q=45000 qt=20000 seen=foreign score=0.600 "
    "missing=- bulk=2 floored=2 lost=0 short=0 overrun=0",
    "1007.300000 phase=compete rule=enter sigma=900000 u=900000 q=45000 qt=20000 seen=foreign score=0.720 "
    "missing=- bulk=2 floored=2 lost=0 short=0 overrun=0",
    "1007.600000 phase=compete rule=compete sigma=950000 u=900000 q=45000 qt=20000 seen=- score=0.720 "
    "missing=- bulk=2 floored=0 lost=0 short=0 overrun=0",
    "1007.600000 flow id=2 min=0 target=100000 rate=50000 window=2896 pace=100000 rtt=60000",
    "1007.600000 flow id=3 min=432000 target=500000 rate=430000 window=9000 pace=0 rtt=45000",
    "1004.000000 flow id=2 min=0 target=100000 rate=10000 window=2896 pace=100000 rtt=60000",
    "1008.600000 flow id=2 min=0 target=100000 rate=95000 window=2896 pace=100000 rtt=60000",
    "1008.700000 flow id=4 min=0 target=100000 rate=-1 window=2896 pace=0 rtt=60000",
    "1008.800000 flow id=4 min=0 target=0 rate=5000 window=0 pace=0 rtt=60000",
    "not a decision line",
    "1008.000000 phase=track rule=exit sigma=600000 u=nan?? q=1 qt=1 seen=- score=0 missing=-",
]

with tempfile.TemporaryDirectory() as root:
    path = os.path.join(root, "decisions.txt")
    with open(path, "w") as f:
        f.write("\n".join(LINES) + "\n")
    ds = decisions.load(path, T0)
    check(len(ds) == 8, "8 decision lines read, a foreign line and a malformed one left: %d" % len(ds))
    check(abs(ds[0]["t"] - 1.5) < 1e-9 and ds[0]["sigma"] == 496000 and ds[0]["missing"] == [],
          "the time on the run's clock, numbers and an empty missing: %r" % ds[0])
    check(ds[3]["missing"] == ["unfloored", "no-queue"] and ds[3]["seen"] == "neither",
          "missing as a list: %r" % ds[3]["missing"])
    s = decisions.summary(ds, skip=5)
    check(s["decisions"] == 6 and s["track"] == 5,
          "from 5 s: 6 decisions, 5 with a verdict (the entry's included): %r" % s)
    check(s["seen"] == {"foreign": 2, "ours": 1, "neither": 2}, "the verdicts counted: %r" % s["seen"])
    check(s["score_max"] == 0.72 and s["score_max_at_s"] == 7.3, "the score's peak and when: %r" % s)
    check(s["entries_at_s"] == [7.3], "the entry at 7.3 s: %r" % s["entries_at_s"])
    check(s["lacked_alone"] == {"no-queue": 2}, "no-queue alone kept two decisions from foreign "
          "(held is no condition of the queue): %r" % s["lacked_alone"])
    check(s["lacked"] == {"no-queue": 3, "unfloored": 1, "held": 1}, "every condition lacked: %r" % s["lacked"])
    check(s["lost"] == 2, "two decisions in TRACK with losses: %r" % s["lost"])
    check(s["phases"] == {"track": 4, "compete": 2}, "decisions by phase: %r" % s["phases"])
    line = decisions.line(s)
    check(line.startswith("detector: 5 decisions in TRACK: foreign 2, ours 1, neither 2 (with losses 2)")
          and "score max 0.72 at 7.3 s" in line and "entries 7.3 s" in line
          and "lacked alone: no-queue 2;" in line, "the run's line: %r" % line)
    every = decisions.load_all(path, T0)
    check(len(every) == 14 and sum(1 for d in every if d.get("flow")) == 6,
          "the flows' lines read apart from the decisions: %d" % len(every))
    fl = decisions.flows_summary(every, skip=5)
    check(fl == {"2": {"decisions": 2, "short": 1, "rate_of_target_median": 0.725}},
          "a download's rate against its target from 5 s (the video, no estimate, no target: "
          "not counted): %r" % fl)
    s["downloads"] = fl
    check(decisions.line(s).endswith("downloads below 80 % of their targets: 2 in 1 of 2 decisions "
                                      "(rate/target median 0.72)"), "... said: %r" % decisions.line(s))
    early = decisions.summary(ds, skip=7.5)
    check(early["entries_at_s"] == [7.3] and early["track"] == 0 and early["phases"] == {"compete": 1},
          "an entry before the window is still the run's entry (the window all COMPETE): %r" % early)
    check(decisions.summary(ds, skip=30) is None and decisions.line(None) is None,
          "no decision in the window: no summary, no line")
    check(decisions.load(os.path.join(root, "none.txt"), T0) == [], "no file (a mode without bwssd): none")

if len(sys.argv) > 1:
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "model.txt")
        r = subprocess.run([sys.argv[1], "-p", "/capacity/compete/decision-lines"],
                           env=dict(os.environ, BWSS_SIM_DECISIONS=path), capture_output=True, text=True)
        lines = [line for line in open(path)] if os.path.exists(path) else []
        every = decisions.load_all(path, 0.0)
        check(r.returncode == 0 and lines and len(every) == len(lines),
              "every line of the model's runs read: %d of %d" % (len(every), len(lines)))
        s = decisions.summary(every)
        check(s and len(s["entries_at_s"]) == 1 and s["seen"]["foreign"] >= 1,
              "its runs' one entry into COMPETE, after foreign decisions: %r" % s)
tap.done()

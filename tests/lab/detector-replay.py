#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The detector's score (capacity-compete.c) replayed on a run's recorded
decisions (decisions.txt: bwssd's $BWSS_DECISIONS, or the model's
$BWSS_SIM_DECISIONS), twice: on the verdicts as recorded, and with the
reading of a flow above its minimum ("backlog"): a foreign reading with a
flow whose minimum is positive moving above (1 + ALPHA) times it counts only
within DETECT_S of a foreign reading with none above ("bare"); otherwise it
leaves the score where it is.

For each file: the entries recorded, the first time each replay reaches
ENTER and the largest score it held before, the foreign readings and those
beside a backlog.  The replay as recorded reproduces the recorded entry (a
check of the replay itself); after the first entry the recorded run follows
the law that ran, so only the first entry compares.  The flows' rates in the
file are the smoothed estimator's, not the interval's mean the law reads:
"above" here is an estimate.

usage: detector-replay.py DECISIONS..."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwsslab import decisions  # noqa: E402

ALPHA = 0.05         # params.c: the rate slack
DECISION_MIN_S = 0.1  # params.c: an observation is at most two of these
DETECT_S = 1.5       # params.c: compete_detect_us
ENTER = 0.75         # params.c: compete_enter


def readings(lines):
    """(t, decision, beside a backlog) for each decision in lines."""
    out, cur, flows = [], None, []
    for d in lines + [None]:
        if d is not None and d.get("flow"):
            flows.append(d)
            continue
        if cur is not None:
            above = any(f["min"] > 0 and f["rate"] > (1 + ALPHA) * f["min"] for f in flows)
            out.append((cur["t"], cur, above))
        cur, flows = d, []
    return out


def replay(recs):
    """The two replays of recs: {"recorded": (entry or None, peak), "bare": ...}
    and the counts of foreign readings and of those beside a backlog."""
    score = {"recorded": 0.0, "bare": 0.0}
    entry = {"recorded": None, "bare": None}
    peak = {"recorded": 0.0, "bare": 0.0}
    bare_at, prev, foreign, beside = None, None, 0, 0
    for t, d, above in recs:
        interval = min(t - prev, 2 * DECISION_MIN_S) if prev is not None else 0.0
        prev = t
        if d["phase"] != "track" and d.get("rule") != "enter":
            continue
        w = min(1.0, interval / DETECT_S)
        moves = {}
        if d["seen"] == "foreign":
            foreign += 1
            beside += above
            if not above:
                bare_at = t
            moves["recorded"] = 1.0
            if not above or (bare_at is not None and t - bare_at <= DETECT_S):
                moves["bare"] = 1.0
        elif d["seen"] == "ours":
            moves = {"recorded": 0.0, "bare": 0.0}
        for k, x in moves.items():
            score[k] += w * (x - score[k])
        for k in score:
            if entry[k] is None:
                if score[k] >= ENTER:
                    entry[k] = t
                else:
                    peak[k] = max(peak[k], score[k])
    return {k: (entry[k], peak[k]) for k in score}, foreign, beside


def main(paths):
    for path in paths:
        lines = decisions.load_all(path, 0.0)
        recorded = [d["t"] for d in lines if not d.get("flow") and d.get("rule") == "enter"]
        r, foreign, beside = replay(readings(lines))
        t0 = lines[0]["t"] if lines else 0.0
        show = lambda e: "%.1f s" % (e[0] - t0) if e[0] is not None else "none (peak %.2f)" % e[1]
        print("%s: recorded entries %s; replayed as recorded %s, with the bare reading %s; "
              "foreign %d, beside a backlog %d (%.0f %%)"
              % (path, " ".join("%.1f s" % (e - t0) for e in recorded[:3]) or "none",
                 show(r["recorded"]), show(r["bare"]), foreign, beside,
                 100.0 * beside / foreign if foreign else 0.0))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))

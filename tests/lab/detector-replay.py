#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The detector's score (capacity-compete.c) replayed on a run's recorded
decisions (decisions.txt: bwssd's $BWSS_DECISIONS, or the model's
$BWSS_SIM_DECISIONS), three times: on the verdicts as recorded, and with
two readings of a flow above its minimum (a flow whose minimum is positive
moving above (1 + ALPHA) times it: "beside a backlog").  "owed"
(capacity-compete.c): such a foreign reading leaves the score where it is
while the minima are owed nothing (their shortfall in TRACK, Σ (m − R)·dt,
less what they moved above them since).  "bare": it counts only within
DETECT_S of a foreign reading with no flow above its minimum.

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
    """(t, decision, beside a backlog, minima − what the flows with a minimum
    moved, bit/s) for each decision in lines."""
    out, cur, flows = [], None, []
    for d in lines + [None]:
        if d is not None and d.get("flow"):
            flows.append(d)
            continue
        if cur is not None:
            mins = [f for f in flows if f["min"] > 0]
            above = any(f["rate"] > (1 + ALPHA) * f["min"] for f in mins)
            short = sum(f["min"] - (f["rate"] if f["rate"] >= 0 else f["min"]) for f in mins)
            out.append((cur["t"], cur, above, short))
        cur, flows = d, []
    return out


RULES = ("recorded", "owed", "bare")


def replay(recs):
    """The replays of recs: {rule: (entry or None, peak)} and the counts of
    foreign readings and of those beside a backlog."""
    score = dict.fromkeys(RULES, 0.0)
    entry = dict.fromkeys(RULES)
    peak = dict.fromkeys(RULES, 0.0)
    bare_at, prev, foreign, beside, owed = None, None, 0, 0, 0.0
    for t, d, above, short in recs:
        since = t - prev if prev is not None else 0.0
        interval = min(since, 2 * DECISION_MIN_S)
        prev = t
        if d["phase"] != "track" and d.get("rule") != "enter":
            continue
        owed = max(0.0, owed + short * since)
        w = min(1.0, interval / DETECT_S)
        moves = {}
        if d["seen"] == "foreign":
            foreign += 1
            beside += above
            if not above:
                bare_at = t
            moves["recorded"] = 1.0
            if not above or owed > 0.0:
                moves["owed"] = 1.0
            if not above or (bare_at is not None and t - bare_at <= DETECT_S):
                moves["bare"] = 1.0
        elif d["seen"] == "ours":
            moves = dict.fromkeys(RULES, 0.0)
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
        print("%s: recorded entries %s; replayed as recorded %s, owed %s, bare %s; "
              "foreign %d, beside a backlog %d (%.0f %%)"
              % (path, " ".join("%.1f s" % (e - t0) for e in recorded[:3]) or "none",
                 show(r["recorded"]), show(r["owed"]), show(r["bare"]), foreign, beside,
                 100.0 * beside / foreign if foreign else 0.0))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: LGPL-2.1-or-later
"""The delay loop's decisions as bwssd wrote them ($BWSS_DECISIONS, one line
each, on the recorder's clock):

    <t> phase=P rule=R sigma=bit/s u=bit/s q=µs qt=µs seen=foreign|ours|neither|-
        score=S missing=a,b|- bulk=N floored=N lost=N short=N overrun=N

each followed by a line per flow:

    <t> flow id=N min=bit/s target=bit/s rate=bit/s window=bytes pace=bit/s rtt=µs

and what they say of the detector that enters COMPETE: how often each
verdict came in TRACK, the score's peak, the entries, and which conditions
of a foreign queue the decisions lacked — alone (the one condition that
kept that decision from scoring "foreign") and in all; and whether the
downloads moved what they were allotted (a flow short of its target with σ
above what the flows move is held by something else than σ)."""
import os
import statistics

SEEN = ("foreign", "ours", "neither")


def parse(line, t0):
    """One decision as a dict (t relative to t0, numbers as floats, missing
    as a list), or a flow's line (its "flow" key True), None for a line that
    is neither."""
    parts = line.split()
    if len(parts) < 2:
        return None
    try:
        d = {"t": float(parts[0]) - t0}
    except ValueError:
        return None
    if parts[1] == "flow":
        for kv in parts[2:]:
            k, sep, v = kv.partition("=")
            try:
                d[k] = float(v) if sep else None
            except ValueError:
                return None
            if d[k] is None:
                return None
        d["flow"] = True
        return d if "id" in d and "target" in d and "rate" in d else None
    for kv in parts[1:]:
        k, sep, v = kv.partition("=")
        if not sep:
            return None
        if k in ("phase", "rule", "seen"):
            d[k] = v
        elif k == "missing":
            d[k] = [] if v == "-" else v.split(",")
        else:
            try:
                d[k] = float(v)
            except ValueError:
                return None
    return d if "phase" in d and "seen" in d else None


def load_all(path, t0):
    """The decisions and the flows' lines in path, in order (none if it does
    not exist)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [d for d in (parse(line, t0) for line in f) if d is not None]


def load(path, t0):
    """The decisions in path (none if it does not exist)."""
    return [d for d in load_all(path, t0) if not d.get("flow")]


def flows_summary(lines, skip=0.0, short=0.8):
    """Per download (min 0) from skip s on: the decisions it had a target and
    a rate at, how many found it below short × its target, and the median of
    rate / target."""
    by = {}
    for d in lines:
        if d.get("flow") and d["t"] >= skip and d["min"] == 0 and d["target"] > 0 and d["rate"] >= 0:
            by.setdefault(int(d["id"]), []).append(d["rate"] / d["target"])
    return {str(i): {"decisions": len(r), "short": sum(1 for x in r if x < short),
                     "rate_of_target_median": round(statistics.median(r), 3)}
            for i, r in sorted(by.items())}


def summary(decisions, skip=0.0):
    """What the detector saw from skip s on: None without decisions.  The
    entries into COMPETE are every one of the run's, those before skip
    included: a loop that entered in the warm-up spends the measured seconds
    in COMPETE, which its verdicts in TRACK alone would not show."""
    every = [d for d in decisions if not d.get("flow")]
    ds = [d for d in every if d["t"] >= skip]
    if not ds:
        return None
    track = [d for d in ds if d["seen"] in SEEN]
    peak = max(track, key=lambda d: d.get("score", 0.0)) if track else None
    alone, lacked = {}, {}
    for d in track:
        if d["seen"] == "foreign":
            continue
        for m in d["missing"]:
            lacked[m] = lacked.get(m, 0) + 1
        real = [m for m in d["missing"] if m != "held"]
        if len(real) == 1:
            alone[real[0]] = alone.get(real[0], 0) + 1
    phases = {}
    for d in ds:
        phases[d["phase"]] = phases.get(d["phase"], 0) + 1
    return {"decisions": len(ds), "phases": phases, "track": len(track),
            "seen": {s: sum(1 for d in track if d["seen"] == s) for s in SEEN},
            "score_max": round(peak["score"], 3) if peak else None,
            "score_max_at_s": round(peak["t"], 2) if peak else None,
            "entries_at_s": [round(d["t"], 2) for d in every if d.get("rule") == "enter"],
            "lacked_alone": alone, "lacked": lacked,
            "lost": sum(1 for d in track if d.get("lost", 0) > 0)}


def line(s):
    """One line of a run's output on the detector (and the downloads against
    their targets, if the summary has them), None without decisions."""
    if not s:
        return None
    dl = ""
    if s.get("downloads"):
        dl = "; downloads below 80 %% of their targets: %s" % ", ".join(
            "%s in %d of %d decisions (rate/target median %.2f)" % (i, f["short"], f["decisions"],
                                                                     f["rate_of_target_median"])
            for i, f in s["downloads"].items())
    by = lambda m: ", ".join("%s %d" % kv for kv in sorted(m.items(), key=lambda kv: -kv[1])) or "none"
    return ("detector: %d decisions in TRACK: foreign %d, ours %d, neither %d (with losses %d); "
            "score max %s at %s s; entries %s; lacked alone: %s; lacked: %s"
            % (s["track"], s["seen"]["foreign"], s["seen"]["ours"], s["seen"]["neither"], s["lost"],
               "-" if s["score_max"] is None else "%.2f" % s["score_max"],
               "-" if s["score_max_at_s"] is None else "%.1f" % s["score_max_at_s"],
               " ".join("%.1f s" % t for t in s["entries_at_s"]) or "none",
               by(s["lacked_alone"]), by(s["lacked"]))) + dl

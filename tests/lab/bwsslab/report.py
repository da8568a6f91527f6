# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tables: the comparison of the modes of one run, the medians of repeated
runs, and docs/results/modes.md (one table per scenario, every mode, with the
date, the machine and the command)."""
import datetime
import json
import os
import platform
import statistics

from .analysis import PREBUFFERS, shares_from_series
from .linkstats import LATE_P99_MAX_US
from .scenario import MODES


def _fmt(v, spec="%.0f"):
    return "-" if v is None else spec % v


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _get(s, *path):
    for p in path:
        if not isinstance(s, dict) or p not in s:
            return None
        s = s[p]
    return s


def median_summary(runs):
    """The medians over the valid runs of one scenario and mode (None where
    no run was valid), the count of runs and of valid runs, and why the
    others were not."""
    first = runs[0]
    all_runs = runs
    # the medians are over the runs in which the lab carried the link
    runs = [r for r in runs if r.get("valid", True)] or []
    out = {"scenario": first["scenario"], "label": first.get("label", first["scenario"]),
           "mode": first["mode"], "runs": len(all_runs),
           "valid_runs": len(runs),
           "invalid_reasons": sorted({x for r in all_runs for x in r.get("invalid_reasons", [])}),
           "aggregate_kbps": _median([r["aggregate_kbps"] for r in runs]),
           "flows": [dict(f, mean_kbps=_median([next((g["mean_kbps"] for g in r["flows"]
                                                       if g["name"] == f["name"]), None) for r in runs]))
                     for f in first["flows"]],
           "queue_median_ms": _median([_get(r, "queue_delay_ms", "median") for r in runs]),
           "queue_p95_ms": _median([_get(r, "queue_delay_ms", "p95") for r in runs]),
           "video_at_min": _median([r.get("video_at_min") for r in runs]),
           "required_prebuffer_s": _median([r.get("required_prebuffer_s") for r in runs]),
           "prebuffers_s": [r.get("required_prebuffer_s") for r in runs],
           "late_fraction": {k: _median([_get(r, "late_fraction", k) for r in runs]) for k in PREBUFFERS}}
    if not runs:
        return out
    if any("link" in r for r in runs):
        out["link"] = median_link([r["link"] for r in runs if "link" in r])
    if any("shares" in r for r in runs):
        keys = sorted({k for r in runs for k in r.get("shares") or {}})
        out["shares"] = {k: _median([_get(r, "shares", k) for r in runs]) for k in keys}
    if "machines" in first:
        out["machines"] = {h: _median([_get(r, "machines", h) for r in runs]) for h in first["machines"]}
    if "player" in first:
        out["player"] = {k: _median([_get(r, "player", k) for r in runs])
                         for k in ("startup_s", "stalls", "stall_s", "played_s")}
    if "ping" in first:
        out["ping"] = {k: _median([_get(r, "ping", k) for r in runs]) for k in ("median_ms", "p95_ms")}
    if "adaptive" in first:
        a0 = first["adaptive"]
        out["adaptive"] = {
            "top_variant_kbps": a0["top_variant_kbps"],
            "mean_delivered_kbps": _median([_get(r, "adaptive", "mean_delivered_kbps") for r in runs]),
            "time_on_variant_s": {v: _median([_get(r, "adaptive", "time_on_variant_s", v) for r in runs])
                                  for v in a0["time_on_variant_s"]},
            "switches": _median([_get(r, "adaptive", "switches") for r in runs]),
            "stalls": _median([_get(r, "adaptive", "stalls") for r in runs]),
            "stall_s": _median([_get(r, "adaptive", "stall_s") for r in runs]),
            "startup_s": _median([_get(r, "adaptive", "startup_s") for r in runs])}
    return out


def median_link(links):
    """The medians of the numeric link figures of several runs (the first
    run's names)."""
    out = dict(links[0])
    for k, v in links[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = _median([x.get(k) for x in links])
    if "stage" in links[0]:
        out["stage"] = median_link([x["stage"] for x in links if "stage" in x])
    return out


def link_line(s):
    """One line on the run's link: the user-space bottleneck's own figures,
    the trace's; None for the kernel's tbf at a fixed rate."""
    ln = s.get("link")
    if not ln or not (ln.get("user_space") or ln.get("trace")):
        return None
    parts = []
    st = ln.get("stage")
    if st:
        parts.append("%s in the stage (departures late p99 %s µs, carried %s of the rate in %s busy s, "
                     "AQM drops %s, tail drops %s, sojourn median %s / p95 %s ms)" % (
                         ln["bottleneck"], _fmt(st.get("late_p99_us")),
                         _fmt(None if st.get("carried") is None else 100 * st["carried"], "%.1f %%"),
                         _fmt(st.get("busy_seconds")), _fmt(st.get("drops_aqm")), _fmt(st.get("drops_limit")),
                         _fmt(st.get("sojourn_p50_ms"), "%.1f"), _fmt(st.get("sojourn_p95_ms"), "%.1f")))
    if ln.get("trace"):
        t = "trace %s: capacity %s kbit/s mean" % (os.path.basename(ln["trace"]), _fmt(ln.get("capacity_mean_kbps")))
        if ln.get("capable_seconds") is not None:
            vm = ln.get("video_at_min_capable")
            t += ", video at min in %s of %s capable s" % (
                _fmt(None if vm is None else 100 * vm, "%.1f %%"), _fmt(ln["capable_seconds"]))
        parts.append(t)
    if ln.get("bulk_use_of_left") is not None:
        parts.append("bulk flows used %.1f %% of what was left" % (100 * ln["bulk_use_of_left"]))
    return "- %s: %s" % (s["mode"], "; ".join(parts))


def table(results):
    """A markdown table of the modes of one scenario (single runs or
    medians)."""
    flows = [f["name"] for f in results[0]["flows"]]
    head = (["mode", "valid", "aggregate kbit/s"] + ["%s kbit/s" % n for n in flows]
            + ["queue median / p95 ms", "video at min", "required prebuffer s"]
            + ["late@%ss" % k for k in PREBUFFERS])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in results:
        runs = s.get("runs", 1)
        valid = s.get("valid_runs", 1 if s.get("valid", True) else 0)
        cells = [s["mode"], "%d/%d" % (valid, runs) if runs > 1 else ("yes" if valid else "**no**")]
        if not valid:
            # the lab did not carry the link: no figure is reported
            lines.append("| " + " | ".join(cells + ["invalid"] * (len(head) - 2)) + " |")
            continue
        cells.append(_fmt(s["aggregate_kbps"]))
        cells += [_fmt(f["mean_kbps"]) for f in s["flows"]]
        qm = s.get("queue_median_ms", _get(s, "queue_delay_ms", "median"))
        qp = s.get("queue_p95_ms", _get(s, "queue_delay_ms", "p95"))
        cells.append("%s / %s" % (_fmt(qm, "%.1f"), _fmt(qp, "%.1f")))
        vm = s.get("video_at_min")
        cells.append(_fmt(None if vm is None else 100 * vm, "%.1f %%"))
        cells.append(_fmt(s.get("required_prebuffer_s"), "%.2f"))
        lf = s.get("late_fraction") or {}
        cells += [_fmt(lf.get(k), "%.3f") for k in PREBUFFERS]
        lines.append("| " + " | ".join(cells) + " |")
    if any("adaptive" in s for s in results):
        a0 = next(s["adaptive"] for s in results if "adaptive" in s)
        var = list(a0["time_on_variant_s"])
        lines.append("")
        lines.append("| mode | delivered kbit/s (top %dk) | " % a0["top_variant_kbps"]
                     + " | ".join("s on %sk" % v for v in var) + " | switches | stalls | stall s | startup s |")
        lines.append("|" + "---|" * (6 + len(var)))
        for s in results:
            a = s.get("adaptive")
            if not a or not s.get("valid_runs", 1 if s.get("valid", True) else 0):
                continue
            lines.append("| " + " | ".join(
                [s["mode"], _fmt(a.get("mean_delivered_kbps"))]
                + [_fmt(a["time_on_variant_s"].get(v)) for v in var]
                + [_fmt(a.get("switches")), _fmt(a.get("stalls")), _fmt(a.get("stall_s"), "%.1f"),
                   _fmt(a.get("startup_s"), "%.2f")]) + " |")
    viewed = [s for s in results if ("player" in s or "ping" in s)
              and s.get("valid_runs", 1 if s.get("valid", True) else 0)]
    if viewed:
        lines.append("")
        lines.append("| mode | startup s | rebufferings | rebuffering s | played s | ping queue median / p95 ms "
                     "(while it plays) |")
        lines.append("|" + "---|" * 6)
        for s in viewed:
            pl, pg = s.get("player") or {}, s.get("ping") or {}
            lines.append("| " + " | ".join(
                [s["mode"], _fmt(pl.get("startup_s"), "%.2f"), _fmt(pl.get("stalls")),
                 _fmt(pl.get("stall_s"), "%.1f"), _fmt(pl.get("played_s"), "%.1f"),
                 "%s / %s" % (_fmt(pg.get("median_ms"), "%.1f"), _fmt(pg.get("p95_ms"), "%.1f"))]) + " |")
    shared = [s for s in results if s.get("shares") and s.get("valid_runs", 1 if s.get("valid", True) else 0)]
    if shared:
        lines.append("")
        lines.append("Bulk flows' shares against their weights (largest relative error of any flow; "
                     "back: seconds after the cross traffic stopped until every share is within 10 % "
                     "(2-s means) for 5 s):")
        lines.append("")
        for s in shared:
            sh = s["shares"]
            if "error" in sh:
                text = "error %s" % _fmt(None if sh["error"] is None else 100 * sh["error"], "%.1f %%")
            else:
                back = sh.get("shares_back_s")
                text = "error before %s, during %s, after %s; %s" % tuple(
                    [_fmt(None if sh.get(k) is None else 100 * sh[k], "%.1f %%")
                     for k in ("error_before", "error_during", "error_after")]
                    + ["back within %.0f s" % back if back is not None else "not back"])
            lines.append("- %s: %s" % (s["mode"], text))
    machines = [s for s in results if s.get("machines") and s.get("valid_runs", 1 if s.get("valid", True) else 0)]
    if machines:
        lines += ["", "Each machine's flows together (hosts=2; host 1 runs the mode, host 2 its own downloads):", ""]
        lines += ["- %s: %s" % (s["mode"], ", ".join("host %s %s kbit/s" % (h, _fmt(v))
                                                       for h, v in sorted(s["machines"].items())))
                  for s in machines]
    links = [link_line(s) for s in results if s.get("valid_runs", 1 if s.get("valid", True) else 0)]
    if any(links):
        lines += ["", "The link:", ""] + [x for x in links if x]
    invalid = [s for s in results if s.get("invalid_reasons")]
    for s in invalid:
        lines.append("")
        lines.append("Invalid %s%s: %s." % (
            s["mode"], " (%d of %d runs, left out of the medians)" % (s["runs"] - s["valid_runs"], s["runs"])
            if s.get("runs", 1) > 1 else "", "; ".join(s["invalid_reasons"])))
    return "\n".join(lines)


def collect(dirs):
    """Every summary.json under dirs, grouped by label and mode."""
    groups = {}
    for d in dirs:
        for root, _, files in os.walk(d):
            if "summary.json" in files:
                s = json.load(open(os.path.join(root, "summary.json")))
                if "shares" not in s:
                    shares = shares_from_series(s, os.path.join(root, "series.csv"))
                    if shares is not None:
                        s["shares"] = shares
                groups.setdefault(s.get("label", s["scenario"]), {}).setdefault(s["mode"], []).append(s)
    return groups


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), or "unknown CPU"."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def machine():
    return "%s, %d cores, Linux %s" % (cpu_model(), os.cpu_count() or 0, platform.release())


def write_results(dirs, path, commands):
    """Writes path (docs/results/modes.md) from the runs under dirs."""
    groups = collect(dirs)
    order = ["weights", "capacity-drop", "redistribution", "streaming", "fast", "adaptive", "adaptive3",
             "adaptive-hd"]
    labels = sorted(groups, key=lambda l: (order.index(l.split()[0]) if l.split()[0] in order else 99, l))
    out = ["# Lab results", "",
           "Generated by `tests/lab/bwss-lab report` on %s, machine: %s." % (
               datetime.date.today().isoformat(), machine()), "",
           "Commands:", ""] + ["    " + c for c in commands] + ["",
           "Each cell is the median over the runs of that scenario and mode (`valid` counts the runs in "
           "which the lab carried the link: both stages within %.3f ms at p99, plain TCP filling 90 %% of "
           "what cross traffic left, the ideal router giving the video its stream). Queueing delay is every "
           "flow's receiver RTT less its path's, pooled over the flows, from `measure_from` on; `video at "
           "min` the share of 1-s bins with the video at >= 90 %% of its minimum." % (LATE_P99_MAX_US / 1000.0),
           ""]
    for label in labels:
        modes = groups[label]
        meds = [median_summary(modes[m]) for m in MODES if m in modes]
        doc = modes[next(iter(modes))][0].get("doc", "")
        out += ["## %s" % label, "", doc, "", table(meds), ""]
        pre = [(m["mode"], m["prebuffers_s"]) for m in meds if any(p is not None for p in m["prebuffers_s"])]
        if pre:
            out.append("Required prebuffer of every run (s): " + "; ".join(
                "%s %s" % (mode, ", ".join(_fmt(p, "%.2f") for p in ps)) for mode, ps in pre) + ".")
            out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))
    return path

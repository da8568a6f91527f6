# SPDX-License-Identifier: LGPL-2.1-or-later
"""The link of a run: its capacity per second (the trace, or the fixed
rate), what the user-space bottleneck measured of itself (delay.json's
"bottleneck"), whether it carried the link (validity), and what the flows
made of the capacity: the seconds in which the link could carry the video
(>= CAPABLE × its minimum) and the video's time at its minimum over those,
and the bulk flows' use of what the video and the cross traffic left."""
import json
import os

from . import linktrace

# How late either stage (the delay stage, the bottleneck) may release its
# packets, p99, µs — the one bound of the lab's timing (docs/lab.md, "The
# stages' timing").  A packet released L late reaches its receiver L later:
# every flow's measured queueing delay (RTT less the path's) reads L too
# high, whatever the rate, so the bound is a time, not a number of packets:
# ~2 ms, against the 5-ms target of CoDel, the smallest queue the lab
# measures.
LATE_P99_MAX_US = 2048
STAGE_CARRIED = 0.98            # the bottleneck must deliver this much of the rate in its busy seconds
STAGE_BUSY_MS = 990             # a busy second: the link transmitted this long in it
CAPABLE = 1.1                   # a second in which the link carries >= 1.1 × the video's minimum


def capacity(sc):
    """The link's rate in each second of the run, kbit/s."""
    return linktrace.per_second(linktrace.points(sc), sc.duration, sc.link_kbps)


def load_stage(out_dir):
    """delay.json's "bottleneck" object, None if the stage was not the
    bottleneck (or wrote nothing)."""
    try:
        return json.load(open(os.path.join(out_dir, "delay.json"))).get("bottleneck")
    except (OSError, ValueError):
        return None


def stage_series(stage, dur):
    """Per second of the run: kbit/s the stage delivered, its mean sojourn
    (ms, None when nothing left) and its drops."""
    secs = (stage or {}).get("seconds") or {}

    def col(key, scale=1.0, none_below=None):
        vals = list(secs.get(key) or [])[:dur]
        out = [None if none_below is not None and v < none_below else v * scale for v in vals]
        return out + [None] * (dur - len(out))
    return {"kbps": col("delivered_bytes", 8 / 1000.0), "sojourn_ms": col("sojourn_ms", none_below=0),
            "drops": col("drops")}


def carried(stage):
    """(delivered / capacity over the busy seconds, busy seconds)."""
    secs = (stage or {}).get("seconds") or {}
    rows = [(d, c) for d, c, b in zip(secs.get("delivered_bytes", []), secs.get("capacity_bytes", []),
                                      secs.get("busy_ms", [])) if b >= STAGE_BUSY_MS]
    cap = sum(c for _, c in rows)
    return (sum(d for d, _ in rows) / cap if cap else None), len(rows)


def stage_summary(stage):
    """What the bottleneck measured of itself, for summary.json."""
    ratio, busy = carried(stage)
    keys = ("kind", "classes", "packets", "drops_aqm", "drops_limit", "late_p50_us", "late_p99_us",
            "late_max_us", "sojourn_p50_ms", "sojourn_p95_ms", "sojourn_p99_ms", "sojourn_max_ms")
    out = {k: stage[k] for k in keys if k in stage}
    out["carried"] = None if ratio is None else round(ratio, 4)
    out["busy_seconds"] = busy
    return out


def stage_validity(stage, out_dir):
    """Why the user-space bottleneck did not carry the link (empty if it
    did): departures late at p99, less delivered than the rate in its busy
    seconds, the trace's clock not started, packets the kernel dropped
    before the stage could read them."""
    if stage is None:
        return ["no bottleneck statistics from the stage"]
    reasons = []
    if stage.get("late_p99_us", 0) > LATE_P99_MAX_US:
        reasons.append("bottleneck stage p99 lateness %d us" % stage["late_p99_us"])
    ratio, busy = carried(stage)
    if ratio is not None and ratio < STAGE_CARRIED:
        reasons.append("bottleneck stage delivered %.1f %% of the rate in its %d busy seconds"
                       % (100 * ratio, busy))
    if not stage.get("trace_started"):
        reasons.append("the bottleneck's clock never started (no SIGUSR1)")
    lost = tun_lost(out_dir)
    if lost:
        reasons.append("the kernel dropped %d packets on the way into the stage" % lost)
    return reasons


def tun_lost(out_dir):
    """Packets the kernel dropped on the way into the stage (tun.json: per
    TUN device a count, or its tx_dropped and qdisc_drops), None if not
    recorded."""
    try:
        tun = json.load(open(os.path.join(out_dir, "tun.json")))
    except (OSError, ValueError):
        return None
    lost = 0
    for dev, v in tun.items():
        if dev == "setup":
            continue                 # the counts before the run (topology.tun_drops_since)
        if isinstance(v, dict):
            lost += sum(x for x in v.values() if isinstance(x, int))
        elif isinstance(v, int):
            lost += v
    return lost


def noise(out_dir, host):
    """The host's noise in one run, the figures that tell a run the lab
    could not carry (host noise: retried) from a product's result: the
    steal time and load over the run (host: host.Span.summary()), both
    stages' lateness at p99 (µs), the delay stage's own drops and the
    packets the kernel dropped into the stage's TUNs.  A figure not
    recorded is None."""
    out = {"steal_pct": (host or {}).get("steal_pct"), "loadavg_1min": (host or {}).get("loadavg_1min"),
           "delay_late_p99_us": None, "delay_drops": None, "bottleneck_late_p99_us": None,
           "tun_drops": tun_lost(out_dir)}
    try:
        d = json.load(open(os.path.join(out_dir, "delay.json")))
        out["delay_late_p99_us"], out["delay_drops"] = d.get("late_p99_us"), d.get("drops")
        out["bottleneck_late_p99_us"] = (d.get("bottleneck") or {}).get("late_p99_us")
    except (OSError, ValueError):
        pass
    return out


def describe_noise(n):
    """noise() in words: "steal 8.1 %, load 4.2, delay stage late 2510 µs at
    p99, bottleneck late 90 µs at p99, TUN drops 1"."""
    def f(v, spec):
        return "-" if v is None else spec % v
    parts = ["steal %s" % f(n.get("steal_pct"), "%.1f %%"), "load %s" % f(n.get("loadavg_1min"), "%.1f"),
             "delay stage late %s at p99" % f(n.get("delay_late_p99_us"), "%d us")]
    if n.get("bottleneck_late_p99_us") is not None:
        parts.append("bottleneck late %d us at p99" % n["bottleneck_late_p99_us"])
    if n.get("delay_drops"):
        parts.append("delay stage drops %d" % n["delay_drops"])
    parts.append("TUN drops %s" % f(n.get("tun_drops"), "%d"))
    return ", ".join(parts)


def use_of_capacity(sc, cap, rate, cross, skip, payload_share, udp_wire, at_min):
    """The trace's figures: capable seconds and the video at its minimum over
    them; the bulk flows' use of what is left (capacity as TCP payload less
    the video and the cross traffic), from skip on."""
    dur = int(sc.duration)
    secs = range(skip, dur)
    out = {"capacity_mean_kbps": round(sum(cap[s] for s in secs) / len(secs), 1)}
    video = rate.get("video")
    bulk = [rate[n] for n in rate if "bulk" in n or n == "quic"]      # every machine's downloads
    if video is not None and sc.video_min_kbps > 0:
        capable = [s for s in secs if cap[s] >= CAPABLE * sc.video_min_kbps]
        out["capable_seconds"] = len(capable)
        ok = sum(1 for s in capable if video[s] >= at_min * sc.video_min_kbps)
        out["video_at_min_capable"] = round(ok / len(capable), 4) if capable else None
    if bulk:
        udp = next((rate[n] for n in rate if n.endswith("-udp")), None)    # a second machine's UDP
        left = sum(max(0.0, cap[s] * payload_share - (video[s] if video else 0.0) - cross[s] * udp_wire
                       - (udp[s] * udp_wire if udp else 0.0)) for s in secs)
        got = sum(b[s] for b in bulk for s in secs)
        out["bulk_use_of_left"] = round(got / left, 4) if left > 0 else None
    return out

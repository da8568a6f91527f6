# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a run measured: per-second rates of every flow (from the recorder's
kernel byte counts), the queueing delay every flow saw (its receiver RTT
less the path's), the controller's σ and queue, the cross traffic the link
carried, the video's late packets (bwss-late), the adaptive player's record,
and whether the lab itself carried the link (validity).  Writes
series.csv and summary.json; returns the summary."""
import json
import os
import statistics
import subprocess

from . import decisions, hosts, linkstats
from .proc import program
from .scenario import BWSS_MODES
from .topology import VIDEO_ADDR, bulk_addr, ideal_video_class_kbps, quic_rtt

PREBUFFERS = ("0.5", "1", "2", "4", "8")
PAYLOAD_SHARE = 1448.0 / 1500.0       # TCP payload of a full packet (timestamps on)
UDP_WIRE = 1042.0 / 1000.0            # iperf3's 1000-byte datagrams on the wire
TCP_FILL = 0.90                       # plain TCP fills this much of what is left ...
IDEAL_VIDEO = 0.95                    # ... the ideal router gives the video this much
AT_MIN = 0.90                         # video_at_min: a second with >= 0.9 × the minimum


class Names:
    """Maps a server address to the flow's name and its path's RTT (ms)."""

    def __init__(self, sc):
        self.by_addr = {}
        if sc.video:
            self.by_addr[VIDEO_ADDR] = ("video", sc.rtt_video)
        for i in range(sc.bulk):
            self.by_addr[bulk_addr(i)] = ("bulk%d" % (i + 1), sc.bulk_rtt(i))
        for name, addr, rtt in hosts.host2_flows(sc):
            self.by_addr[addr] = (name, rtt)

    def names(self):
        return sorted(n for n, _ in self.by_addr.values())


def percentile(values, q):
    """The q-quantile of values (nearest rank), None if empty."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def load_samples(sc, out_dir, t0, sockets=None):
    """Reads samples.txt: per-second kbit/s per flow, the video's arrivals,
    every flow's queueing delay samples, the domain's per-second σ and
    queue, and the sockets (connections) seen per flow.  With hosts=2 the
    second machine's recorder (samples-host2.txt) is read the same way.
    A flow over several connections (a download's byte ranges, the video
    read as ranges over a few) is the sum of its sockets in every figure;
    with a dict @sockets, also {flow: {second: the sockets that moved}}."""
    names = Names(sc)
    dur = int(sc.duration)
    rate = {n: [0.0] * dur for n in names.names()}
    qdelay = {n: [] for n in names.names()}            # (t, ms)
    moved = {n: [] for n in names.names()}             # when the flow's byte count grew, s
    video_trace = []
    sigma = [None] * dur
    ctl_queue = [None] * dur
    last = {}
    files = [os.path.join(out_dir, "samples.txt")]
    if os.path.exists(os.path.join(out_dir, "domain.txt")):
        files.append(os.path.join(out_dir, "domain.txt"))    # the controller's D lines (older runs: in samples.txt)
    if sc.hosts == 2:
        files.append(os.path.join(out_dir, "samples-host2.txt"))
    lines = (line for path in files for line in open(path))
    for line in lines:
        parts = line.split()
        if len(parts) == 6 and parts[0] == "D":
            t = float(parts[1]) - t0
            sec = int(t)
            if 0 <= sec < dur and float(parts[2]) >= 0:
                sigma[sec] = float(parts[2]) / 1000.0
                ctl_queue[sec] = float(parts[3]) / 1000.0 if float(parts[3]) >= 0 else None
            continue
        if len(parts) != 5:
            continue
        t, remote, b, inode, rtt_us = float(parts[0]) - t0, parts[1], int(parts[2]), parts[3], int(parts[4])
        addr = remote.rsplit(":", 1)[0]
        if addr not in names.by_addr:
            continue
        name, path_ms = names.by_addr[addr]
        if inode == "0":
            # a socket being closed (orphaned, a download stopped within the
            # run) is reported without its inode: its bytes were counted
            # under its inode, a new key would count them all again
            continue
        key = (remote, inode)                            # one counter per socket
        delta = b - last.get(key, 0)
        last[key] = b
        if delta <= 0:
            continue
        moved[name].append(t)
        sec = int(t)
        if sockets is not None:
            sockets.setdefault(name, {}).setdefault(sec, set()).add(key)
        if 0 <= sec < dur:
            rate[name][sec] += delta * 8 / 1000.0
            if rtt_us > 0:
                qdelay[name].append((t, max(0.0, rtt_us / 1000.0 - path_ms)))
        if name == "video" and 0 <= t < dur:
            video_trace.append((t, delta))
    # a socket being closed (orphaned) is reported with inode 0: not another connection
    conns = {n: sum(1 for (r, ino) in last if ino != "0" and names.by_addr[r.rsplit(":", 1)[0]][0] == n)
             for n in names.names()}
    return rate, qdelay, video_trace, sigma, ctl_queue, conns, moved


def video_connections(by_second, sc, skip, series=None):
    """How the video used its connections from skip on (by_second: the
    seconds' sets of sockets that moved, load_samples' @sockets of the
    video): the sockets seen, the most that moved in one second, and the
    seconds in which more than one moved (the element reading ranges over
    several); with the video's per-second kbit/s (series), the seconds at
    its minimum (video_at_min's bound) among those with more than one
    connection moving and among the others, [at the minimum, seconds]."""
    idx = range(skip, int(sc.duration))
    secs = [by_second.get(s, set()) for s in idx] if by_second else []
    out = {"sockets": len(set().union(*secs)) if secs else 0,
           "most_at_once": max((len(x) for x in secs), default=0),
           "seconds_over_one": sum(1 for x in secs if len(x) > 1)}
    if series is not None:
        many = [s for s in idx if len((by_second or {}).get(s, ())) > 1]
        one = [s for s in idx if s not in many]
        met = lambda ss: [sum(1 for s in ss if series[s] >= AT_MIN * sc.video_min_kbps), len(ss)]  # noqa: E731
        out["at_min_over_one"], out["at_min_one"] = met(many), met(one)
    return out


def video_requests(out_dir, t0):
    """What the video's client asked the video source (video-server.log:
    "<monotonic s> <port> <method> <A-B|-> <status>" a request): plain
    GETs, answered ranges, refused requests, the client ports that took
    ranges, and when the first range came (s after t0); None without the
    log (a run before the source logged, an HLS or progressive video)."""
    try:
        lines = open(os.path.join(out_dir, "video-server.log")).read().splitlines()
    except OSError:
        return None
    out = {"plain": 0, "ranges": 0, "refused": 0, "range_ports": 0, "first_range_s": None}
    ports = set()
    for line in lines:
        f = line.split()
        if len(f) != 5 or not f[0][:1].isdigit():
            continue
        if f[4] == "206":
            out["ranges"] += 1
            ports.add(f[1])
            if out["first_range_s"] is None:
                out["first_range_s"] = round(float(f[0]) - t0, 2)
        elif f[4] == "200" and f[2] == "GET":
            out["plain"] += 1
        elif f[4] not in ("200", "206"):
            out["refused"] += 1
    out["range_ports"] = len(ports)
    return out


def load_quic(sc, out_dir, t0):
    """The QUIC download's kbit/s per second and the instants its byte count
    grew (quic-samples.txt: "t_monotonic bytes" every 50 ms)."""
    dur = int(sc.duration)
    rate, moved, last = [0.0] * dur, [], 0
    try:
        lines = open(os.path.join(out_dir, "quic-samples.txt")).read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            t, b = float(line.split()[0]) - t0, int(line.split()[1])
        except (ValueError, IndexError):
            continue
        if b > last and 0 <= t < dur:
            rate[int(t)] += (b - last) * 8 / 1000.0
            moved.append(t)
        last = max(last, b)
    return rate, moved


def load_cross(sc, out_dir):
    """Per-second cross traffic the client received (kbit/s, UDP payload)."""
    dur = int(sc.duration)
    cross = [0.0] * dur
    path = os.path.join(out_dir, "cross.json")
    if not sc.cross_kbps or not os.path.exists(path):
        return cross
    try:
        report = json.load(open(path))
    except ValueError:
        return cross
    for iv in report.get("intervals", []):
        s = iv.get("sum", {})
        start = sc.cross_start + s.get("start", 0.0)
        sec = int(start)
        if 0 <= sec < dur:
            cross[sec] += s.get("bits_per_second", 0.0) / 1000.0 * (s.get("end", 1) - s.get("start", 0))
    return cross


def video_source_kbps(sc, t):
    """What the video source sends at run time t, kbit/s."""
    if sc.video_low_kbps and sc.video_low_from <= t < sc.video_low_to:
        return sc.video_low_kbps
    return sc.video_kbps


def video_at_min(sc, series, skip):
    """Share of the 1-s bins from measure_from on in which the video got at
    least AT_MIN of its minimum (bins where its source itself sends less, and
    the five seconds after, are left out)."""
    lo, hi = (int(sc.video_low_from), int(sc.video_low_to) + 5) if sc.video_low_kbps else (0, 0)
    idx = [s for s in range(skip, int(sc.duration)) if not (lo <= s < hi)]
    ok = sum(1 for s in idx if series[s] >= AT_MIN * sc.video_min_kbps)
    return round(ok / max(1, len(idx)), 4)


def queue_summary(qdelay, skip):
    """Median and p95 of the queueing delay, ms, per flow and over all flows."""
    per = {}
    pooled = []
    for name, samples in qdelay.items():
        vals = [q for t, q in samples if t >= skip]
        pooled += vals
        if vals:
            per[name] = {"median": round(statistics.median(vals), 1),
                         "p95": round(percentile(vals, 0.95), 1)}
    out = {"flows": per}
    if pooled:
        out["median"] = round(statistics.median(pooled), 1)
        out["p95"] = round(percentile(pooled, 0.95), 1)
    return out


def validity(sc, mode, out_dir, agg_by_sec, cross, video_series, skip, cap):
    """Whether the lab carried the link in this run: the delay stage kept its
    delays (p99 lateness, no drops); as the bottleneck it carried the rate
    (linkstats.stage_validity); plain TCP filled what cross traffic left
    (on a fixed rate: on a moving one filling it is TCP's business); the
    ideal router gave the video its stream.  cap: the link's rate per
    second.  Returns (valid, reasons)."""
    reasons = []
    try:
        d = json.load(open(os.path.join(out_dir, "delay.json")))
        if d.get("late_p99_us", 0) > linkstats.LATE_P99_MAX_US:
            reasons.append("delay stage p99 lateness %d us" % d["late_p99_us"])
        if d.get("drops", 0):
            reasons.append("delay stage dropped %d packets" % d["drops"])
    except (OSError, ValueError):
        reasons.append("no delay stage statistics")
    if sc.stage_bottleneck():
        reasons += linkstats.stage_validity(linkstats.load_stage(out_dir), out_dir)
    secs = range(skip, int(sc.duration))
    moving = sc.link_trace not in ("", "flat")
    if mode == "tcp" and not moving:
        left = [max(0.0, cap[s] * PAYLOAD_SHARE - cross[s] * UDP_WIRE) for s in secs]
        want = sum(left) / len(left)
        got = sum(agg_by_sec[s] for s in secs) / len(left)
        if got < TCP_FILL * want:
            reasons.append("tcp filled %.0f of %.0f kbit/s" % (got, want))
    if mode == "ideal" and sc.video and not sc.adaptive and not sc.progressive:
        # HTB guarantees the video's class; the stage's strict priority gives
        # it all it sends, up to what the link carries
        if sc.stage_bottleneck():
            want = sum(min(video_source_kbps(sc, s), cap[s] * PAYLOAD_SHARE) for s in secs) / len(secs)
        else:
            want = sum(min(video_source_kbps(sc, s), ideal_video_class_kbps(sc) / 1.1)
                       for s in secs) / len(secs)
        got = sum(video_series[s] for s in secs) / len(secs)
        if got < IDEAL_VIDEO * want:
            reasons.append("ideal gave the video %.0f of %.0f kbit/s" % (got, want))
    return not reasons, reasons


def late_metric(sc, out_dir, video_trace, build_dir):
    """The late-packet fractions and the required prebuffer (bwss-late)."""
    trace = os.path.join(out_dir, "video-trace.txt")
    with open(trace, "w") as f:
        for t, d in video_trace:
            f.write("%.6f %d\n" % (t, d))
    late_tool = program(build_dir, "bwss-late")
    r = subprocess.run([late_tool, "--rate", "%gk" % sc.video_kbps, "--end", str(int(sc.duration)), trace],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"late_error": r.stderr.strip()}
    late = json.loads(r.stdout)
    return {"late_fraction": {k: round(late["late_fraction"][k], 4) for k in PREBUFFERS},
            "required_prebuffer_s": round(late["required_prebuffer_s"], 3),
            "required_prebuffer_at_s": round(late["required_prebuffer_at_s"], 2)}


def adaptive_summary(sc, out_dir, t0_wall):
    """What the viewer got: from nginx's log, the variant of every segment
    fetched during the run; from the player, startup, stalls and stall time."""
    seg = float(sc.hls_segment)
    variants = sorted(sc.hls_variants, reverse=True)
    count = {v: 0 for v in variants}
    timeline = []
    try:
        log = open(os.path.join(out_dir, "access.log")).read().splitlines()
    except OSError:
        log = []
    for line in log:
        f = line.split()
        if (len(f) < 7 or f[6] != "GET" or f[3] != "200" or not f[2].startswith("/hls/v")
                or not f[2].endswith(".ts")):
            continue
        t = float(f[0]) - t0_wall
        kbps = int(f[2].split("/")[2][1:])
        if 0 <= t < sc.duration and kbps in count:
            count[kbps] += 1
            timeline.append((round(t, 2), kbps))
    n = sum(count.values())
    out = {"segments": n, "segment_s": seg,
           "time_on_variant_s": {str(v): count[v] * seg for v in variants},
           "mean_delivered_kbps": round(sum(v * c for v, c in count.items()) / n, 1) if n else 0.0,
           "top_variant_kbps": variants[0],
           "switches": sum(1 for a, b in zip(timeline, timeline[1:]) if a[1] != b[1])}
    try:
        with open(os.path.join(out_dir, "player.json")) as f:
            pl = json.load(f)
        out.update({k: pl[k] for k in ("startup_s", "stalls", "stall_s", "played_s", "lag_s") if k in pl})
    except (OSError, ValueError):
        out["player_error"] = "no player.json (see video-client.log)"
    with open(os.path.join(out_dir, "segments.csv"), "w") as f:
        f.write("t,variant_kbps\n")
        for t, v in timeline:
            f.write("%.2f,%d\n" % (t, v))
    return out


def player_summary(out_dir):
    """What the viewer of a progressive clip got (player.json): startup,
    rebuffering pauses, their time, media played."""
    try:
        with open(os.path.join(out_dir, "player.json")) as f:
            pl = json.load(f)
    except (OSError, ValueError):
        return {"player_error": "no player.json (see video-client.log)"}
    return {k: pl[k] for k in ("startup_s", "stalls", "stall_s", "played_s", "lag_s") if k in pl}


def _get_startup(summary):
    """When the player first played, s from t0, or None."""
    for key in ("player", "adaptive"):
        v = (summary.get(key) or {}).get("startup_s")
        if v is not None:
            return v
    return None


def ping_summary(sc, out_dir, t0_wall, since):
    """The queue a call would see (ping.txt: `ping -D` to the video's
    server): each RTT less the path's, the smallest RTT of the run, over
    [since, duration) — from when the player first played."""
    rtts = []
    try:
        lines = open(os.path.join(out_dir, "ping.txt")).read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if not line.startswith("[") or "time=" not in line:
            continue
        try:
            t = float(line[1:line.index("]")]) - t0_wall
            rtt = float(line.split("time=")[1].split()[0])
        except ValueError:
            continue
        if 0 <= t < sc.duration:
            rtts.append((t, rtt))
    if not rtts:
        return {"samples": 0}
    base = min(r for _, r in rtts)
    q = [r - base for t, r in rtts if t >= since]
    with open(os.path.join(out_dir, "ping.csv"), "w") as f:
        f.write("t,rtt_ms,queue_ms\n")
        for t, r in rtts:
            f.write("%.2f,%.2f,%.2f\n" % (t, r, r - base))
    return {"samples": len(q), "from_s": round(since, 2), "base_ms": round(base, 2),
            "median_ms": round(statistics.median(q), 1) if q else None,
            "p95_ms": round(percentile(q, 0.95), 1) if q else None}


SHARE_BAND = 0.10                     # shares_back_s: each bulk flow within 10 % of its weight share
SHARE_SMOOTH_S = 2                    # ... over 2-s means
SHARE_HOLD_S = 5                      # ... for 5 s in a row


def share_summary(params, bulk_kbps):
    """How the bulk flows split what they got against their weights, when
    the weights differ: the largest relative error of any flow's share over
    the phases before, during and after the cross traffic (from
    measure_from), and shares_back_s, the seconds after the cross traffic
    stopped until every flow's share (2-s means) is within SHARE_BAND of its
    weight's and stays there SHARE_HOLD_S s (None if it never is).
    bulk_kbps: one per-second list per bulk flow, in order.  None if the
    weights are equal or there are fewer than two bulk flows."""
    weights = list(params.get("weights") or [])[:len(bulk_kbps)]
    if len(bulk_kbps) < 2 or len(weights) < len(bulk_kbps) or len(set(weights)) < 2 or sum(weights) <= 0:
        return None
    want = [w / sum(weights) for w in weights]
    dur = min(len(b) for b in bulk_kbps)

    def error(lo, hi):
        lo, hi = max(0, int(lo)), min(dur, int(hi))
        if hi <= lo:
            return None
        tot = [sum(b[lo:hi]) for b in bulk_kbps]
        if sum(tot) <= 0:
            return None
        return max(abs(t / sum(tot) / w - 1.0) for t, w in zip(tot, want))

    start = params.get("measure_from") or 0
    out = {}
    if params.get("cross_kbps") and params.get("cross_end", 0) > params.get("cross_start", 0):
        cs, ce = params["cross_start"], params["cross_end"]
        out["error_before"] = error(start, cs)
        out["error_during"] = error(max(start, cs), ce)
        out["error_after"] = error(ce, dur)
        back = None
        for t in range(int(ce), dur - SHARE_HOLD_S - SHARE_SMOOTH_S + 1):
            errs = [error(u, u + SHARE_SMOOTH_S) for u in range(t, t + SHARE_HOLD_S)]
            if all(e is not None and e <= SHARE_BAND for e in errs):
                back = t - ce
                break
        out["shares_back_s"] = back
    else:
        out["error"] = error(start, dur)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def shares_from_series(summary, series_csv):
    """share_summary() for a run recorded before summaries carried it: from
    its series.csv and the summary's parameters (None if unreadable)."""
    try:
        with open(series_csv) as f:
            head = f.readline().strip().split(",")
            rows = [line.strip().split(",") for line in f if line.strip()]
    except OSError:
        return None
    cols = sorted((c for c in head if c.startswith("bulk") and c.endswith("_kbps")),
                  key=lambda c: int(c[4:-5]))
    idx = [head.index(c) for c in cols]
    try:
        bulk = [[float(r[i]) for r in rows] for i in idx]
    except (ValueError, IndexError):
        return None
    return share_summary(summary.get("parameters") or {}, bulk)


# The longest a flow may go without progress: many clients give up on a
# download after 30 s without data (curl's --speed-time, browsers' stall
# timeouts; nginx's send_timeout is 60 s): the shortest common timeout.
PROGRESS_MAX_S = 30.0


def longest_stall(times, start, end):
    """The longest time without progress in [start, end), s: the largest
    gap between the instants a flow's byte count grew, the window's ends
    counted (a flow that never moved stalled all of it)."""
    pts = [start] + sorted(t for t in times if start <= t < end) + [end]
    return max(b - a for a, b in zip(pts, pts[1:]))


def progress(sc, moved, clients):
    """Whether every flow kept moving and every client kept going: per flow
    the longest time without progress (over the run; the second machine's
    over host2_on), every client's end (exit status, or running at the
    end).  Returns (progress, faults): faults names each flow that went
    PROGRESS_MAX_S or more without progress and each client that exited
    with a non-zero status — a product fault, not the lab's."""
    h2_from, h2_to = sc.host2_window()
    stalls, faults = {}, []
    for name in sorted(moved):
        lo, hi = (h2_from, h2_to) if hosts.host_of(name) == 2 else (0.0, float(sc.duration))
        end = (clients or {}).get(name) or {}
        if end.get("exit") == 0 and end.get("at_s") is not None:
            hi = min(hi, end["at_s"])                   # done: nothing more to move
        g = longest_stall(moved[name], lo, hi)
        stalls[name] = round(g, 2)
        if g >= PROGRESS_MAX_S:
            faults.append("%s went %.1f s without progress" % (name, g))
    for name, end in sorted((clients or {}).items()):
        if end.get("exit") not in (None, 0):
            faults.append("client %s exited with status %d at %.1f s" % (name, end["exit"], end.get("at_s", 0)))
    return {"longest_stall_s": stalls, "max_s": PROGRESS_MAX_S, "clients": clients or {}}, faults


QUEUE_SHORT_MS = 25.0         # host2_on's "after": the queue back this short (its 1-s median) ...
QUEUE_SHORT_HOLD_S = 5        # ... and staying so this long


def host2_window_summary(sc, rate, qdelay, skip):
    """With host2_on (the second machine on from FROM to TO): each
    machine's mean rate during the window, this machine's queueing delay
    (median over its flows' samples) during it and after it, and
    queue_back_s: the seconds after TO until this machine's queue (the
    1-s median of its flows' samples) is at most QUEUE_SHORT_MS and stays
    so QUEUE_SHORT_HOLD_S s (None if it never is).  None without host2_on."""
    if sc.hosts != 2 or not sc.host2_on:
        return None
    a, b = sc.host2_window()
    lo, hi, dur = max(int(a), skip), int(b), int(sc.duration)
    mine = [n for n in qdelay if hosts.host_of(n) == 1]

    def queue(t0, t1):
        vals = [q for n in mine for t, q in qdelay[n] if t0 <= t < t1]
        return round(statistics.median(vals), 1) if vals else None
    during = {"machines": {str(h): round(sum(sum(rate[n][lo:hi]) for n in rate if hosts.host_of(n) == h)
                                         / max(1, hi - lo), 1) for h in (1, 2)},
              "flows": {n: round(sum(rate[n][lo:hi]) / max(1, hi - lo), 1) for n in sorted(rate)},
              "queue_median_ms": queue(lo, hi)}
    per_sec = [queue(t, t + 1) for t in range(dur)]
    back = None
    for t in range(hi, dur - QUEUE_SHORT_HOLD_S + 1):
        if all(q is not None and q <= QUEUE_SHORT_MS for q in per_sec[t:t + QUEUE_SHORT_HOLD_S]):
            back = t - hi
            break
    return {"from_s": a, "to_s": b, "during": during,
            "after": {"queue_median_ms": queue(hi, dur), "queue_back_s": back,
                      "queue_short_ms": QUEUE_SHORT_MS, "hold_s": QUEUE_SHORT_HOLD_S}}


def analyse(sc, mode, out_dir, build_dir):
    """Analyses the run in out_dir; writes series.csv and summary.json."""
    run = json.load(open(os.path.join(out_dir, "run.json")))
    sockets = {}
    rate, qdelay, video_trace, sigma, ctl_queue, conns, moved = load_samples(sc, out_dir, run["t0_monotonic"],
                                                                             sockets=sockets)
    if sc.quic:
        # the QUIC download: its client's own record (the recorders see TCP only)
        rate["quic"], moved["quic"] = load_quic(sc, out_dir, run["t0_monotonic"])
        qdelay["quic"] = []
    udp = hosts.load_udp(sc, out_dir)
    if udp is not None:
        # the second machine's UDP: a flow of the summary (the recorders see TCP only)
        rate[hosts.UDP_NAME] = udp
        qdelay[hosts.UDP_NAME] = []                     # no RTT: the receiver sends nothing back
        moved[hosts.UDP_NAME] = [s + 0.5 for s, k in enumerate(udp) if k > 0]
    cross = load_cross(sc, out_dir)
    dur = int(sc.duration)
    skip = min(int(sc.measure_from), dur - 1)
    names = sorted(rate)
    agg_by_sec = [sum(rate[n][s] for n in names) for s in range(dur)]
    cap = linkstats.capacity(sc)
    stage = linkstats.load_stage(out_dir) if sc.stage_bottleneck() else None
    st = linkstats.stage_series(stage, dur)
    qsec = {n: [None] * dur for n in names}
    for n in names:
        buckets = {}
        for t, q in qdelay[n]:
            buckets.setdefault(int(t), []).append(q)
        for s, vals in buckets.items():
            if 0 <= s < dur:
                qsec[n][s] = statistics.mean(vals)
    with open(os.path.join(out_dir, "series.csv"), "w") as f:
        f.write("t," + ",".join(n + "_kbps" for n in names) + ",aggregate_kbps,cross_kbps,sigma_kbps,"
                + ",".join(n + "_queue_ms" for n in names) + ",controller_queue_ms,capacity_kbps,"
                "stage_kbps,stage_sojourn_ms,stage_drops\n")
        for s in range(dur):
            cells = ["%d" % s] + ["%.1f" % rate[n][s] for n in names]
            cells += ["%.1f" % agg_by_sec[s], "%.1f" % cross[s],
                      "%.1f" % sigma[s] if sigma[s] is not None else ""]
            cells += ["%.1f" % qsec[n][s] if qsec[n][s] is not None else "" for n in names]
            cells.append("%.1f" % ctl_queue[s] if ctl_queue[s] is not None else "")
            cells.append("%.1f" % cap[s])
            cells += ["" if st[k][s] is None else fmt % st[k][s]
                      for k, fmt in (("kbps", "%.1f"), ("sojourn_ms", "%.2f"), ("drops", "%d"))]
            f.write(",".join(cells) + "\n")
    flows = []
    for name in names:
        series = rate[name][skip:]
        entry = {"name": name, "mean_kbps": round(sum(series) / len(series), 1)}
        entry["connections"] = conns.get(name, 0)
        if sc.hosts == 2:
            entry["machine"] = hosts.host_of(name)
        if name == "video":
            entry["min_rate_kbps"] = sc.video_min_kbps
            entry["weight"] = sc.video_weight
        elif name == "quic":
            entry["min_rate_kbps"] = 0
            entry["weight"] = None                      # not bwss's: no weight
            entry["rtt_ms"] = quic_rtt(sc)
        elif hosts.host_of(name) == 2:
            entry["min_rate_kbps"] = 0
            entry["weight"] = 1.0
            entry["rtt_ms"] = {n: rtt for n, _, rtt in hosts.host2_servers(sc)}[name]
        else:
            i = int(name[4:]) - 1
            entry["min_rate_kbps"] = 0
            entry["weight"] = sc.bulk_weight(i)
            entry["rtt_ms"] = sc.bulk_rtt(i)
        flows.append(entry)
    summary = {"scenario": sc.name, "mode": mode, "duration_s": dur, "link_kbps": sc.link_kbps,
               "measure_from_s": skip,
               "aggregate_kbps": round(sum(f["mean_kbps"] for f in flows), 1), "flows": flows,
               "cross_kbps": round(sum(cross[skip:]) / (dur - skip), 1),
               "queue_delay_ms": queue_summary(qdelay, skip),
               "parameters": sc.parameters()}
    if sc.hosts == 2:
        # each machine's flows and what they got together
        summary["machines"] = {str(h): round(sum(f["mean_kbps"] for f in flows if hosts.host_of(f["name"]) == h), 1)
                            for h in (1, 2)}
    video = rate.get("video")
    if sc.adaptive:
        summary["adaptive"] = adaptive_summary(sc, out_dir, run["t0_wall"])
    elif sc.progressive:
        summary["player"] = player_summary(out_dir)
    elif video is not None:
        summary["video_at_min"] = video_at_min(sc, video, skip)
        summary["video_connections"] = video_connections(sockets.get("video"), sc, skip, video)
        asked = video_requests(out_dir, run["t0_monotonic"])
        if asked is not None:
            summary["video_requests"] = asked
        summary.update(late_metric(sc, out_dir, video_trace, build_dir))
    shares = share_summary(sc.parameters(), [rate["bulk%d" % (i + 1)] for i in range(sc.bulk)])
    if shares is not None:
        summary["shares"] = shares
    summary["link"] = {"bottleneck": sc.bottleneck, "trace": sc.link_trace or None,
                       "user_space": sc.stage_bottleneck()}
    summary["link"].update(linkstats.use_of_capacity(sc, cap, rate, cross, skip, PAYLOAD_SHARE,
                                                     UDP_WIRE, AT_MIN))
    if stage is not None:
        summary["link"]["stage"] = linkstats.stage_summary(stage)
    if sc.ping_ms:
        start = _get_startup(summary)
        summary["ping"] = ping_summary(sc, out_dir, run["t0_wall"], skip if start is None else start)
    if any(v is not None for v in sigma):
        vals = [v for v in sigma[skip:] if v is not None]
        summary["sigma_median_kbps"] = round(statistics.median(vals), 1) if vals else None
    lines = decisions.load_all(os.path.join(out_dir, "decisions.txt"), run["t0_monotonic"])
    detector = decisions.summary([d for d in lines if not d.get("flow")], skip)
    if detector is not None:
        detector["downloads"] = decisions.flows_summary(lines, skip)
        summary["detector"] = detector
    window = host2_window_summary(sc, rate, qdelay, skip)
    if window is not None:
        summary["host2_on"] = window
    summary["progress"], summary["faults"] = progress(sc, moved, run.get("clients"))
    summary["valid"], summary["invalid_reasons"] = validity(
        sc, mode, out_dir, agg_by_sec, cross, video or [0.0] * dur, skip, cap)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return summary, {"rate": rate, "queue": qsec, "cross": cross, "sigma": sigma,
                     "ctl_queue": ctl_queue, "aggregate": agg_by_sec, "capacity": cap,
                     "stage_sojourn": st["sojourn_ms"]}

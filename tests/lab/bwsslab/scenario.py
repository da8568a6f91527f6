# SPDX-License-Identifier: LGPL-2.1-or-later
"""The typed description of an experiment (Scenario), the paper's experiments
(SCENARIOS) and --set overrides.

Rates are kbit/s, times seconds from the start of the run, rtt_* the RTT the
delay stage adds for that server (ms; one-way = rtt/2)."""
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Tuple

MODES = ("tcp", "bwss", "bwss-adopt", "bwss-paper", "trickle", "ideal")
BWSS_MODES = ("bwss", "bwss-adopt", "bwss-paper")   # the modes in which BWSS runs
# bwss-adopt: the bulk clients are plain curl, adopted by bwssd with a rules
# file that gives each its weight (by the server's address); the video
# client registers itself as in mode bwss
VIDEO_CLIENTS = ("curl", "gst")
STRIPINGS = ("auto", "never", "always")   # bwsshttpsrc's striping: over several connections when
MAX_VIDEO_CONNS = 8                        # ... and over how many at most (its connections)
# how the adaptive scenarios' player application is written (bwss-lab-player
# --pipeline): GStreamer's legacy player (hlsdemux) or playbin3 (hlsdemux2)
PLAYERS = ("playbin", "playbin3", "uridecodebin", "uridecodebin3")
# the queue in front of the link (docs/lab.md): drop-tail with a buffer of
# queue_ms, or an AQM of the user-space bottleneck
BOTTLENECKS = ("droptail", "codel", "fq_codel")
# the second machine's traffic (hosts=2, hosts.py): plain downloads, downloads
# under its own bwssd (its own runtime directory and domain) that adopts
# them, or only inelastic UDP (a call, a CBR stream: host2_udp_kbps)
HOST2_KINDS = ("tcp", "bwss", "udp")
HOST2_UDP_KBPS = 2000.0         # host2=udp's rate when host2_udp_kbps is not set: a video call's
MAX_BULK_CONNS = 32             # connections of one download (bulk_conns)


class ScenarioError(ValueError):
    """A bad --set (the CLI exits 2 with its message)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    doc: str
    link_kbps: float = 960.0
    queue_ms: float = 150.0
    duration: float = 90.0
    video: int = 1
    video_kbps: float = 496.0
    video_min_kbps: float = 496.0
    video_weight: float = 1.0
    video_low_kbps: float = 0.0
    video_low_from: float = 0.0
    video_low_to: float = 0.0
    video_client: str = "curl"
    video_striping: str = ""      # video_client=gst, bwss modes: bwsshttpsrc's striping (auto, never, always);
                                  # "": the element's default
    video_connections: int = 0    # ... its connections (1-8); 0: the element's default
    bulk: int = 2
    weights: Tuple[float, ...] = (1.0, 1.0)
    cross_kbps: float = 0.0
    cross_start: float = 0.0
    cross_end: float = 0.0
    rtt_video: float = 30.0
    rtt_bulk: Tuple[float, ...] = (30.0,)
    rtt_cross: float = 30.0
    sender_cc: str = "cubic"      # the servers' TCP congestion control
    bottleneck: str = "droptail"  # the link's queue: droptail, codel, fq_codel
    link_trace: str = ""          # the link's rate over time (linktrace.py): none, a name or a file
    trace_seed: int = 1
    stage_realtime: int = 10      # SCHED_FIFO priority of the delay stage (and bottleneck; 0: normal)
    adaptive: int = 0
    progressive: int = 0          # the video is an MP4 file a player plays (make-progressive)
    ping_ms: float = 0.0          # a ping to the video's server every this many ms (0: none)
    player: str = "playbin"
    hls_variants: Tuple[int, ...] = (450, 350, 262, 60)
    hls_segment: float = 2.0
    bwss_on_at: float = 0.0
    measure_from: float = 5.0
    bulk_conns: Tuple[int, ...] = (1,)  # connections of each bulk download (one process: curl
                                  # --parallel; the last value repeats)
    hosts: int = 1                # receiving machines behind the link (2: hosts.py)
    host2: str = "tcp"            # the second machine's downloads: plain, or adopted by its bwssd
    host2_bulk: int = 2           # the second machine's downloads (weight 1 each)
    host2_on: str = ""            # when the second machine's traffic runs, "FROM-TO" s (empty: all the run)
    host2_udp_kbps: float = 0.0   # the second machine's UDP (inelastic), kbit/s (host2=udp: default 2000)
    quic: int = 0                 # a QUIC (HTTP/3) download on this machine, beside the others (0/1)
    quic_cc: str = "cubic"        # its server's congestion control (aioquic: cubic or reno)
    bulk_initrwnd: int = 0        # the window this machine's SYN offers the bulk servers, segments
                                  # (its route's initrwnd: the window scale is kept; 0: the kernel's)

    # ---- derived ----
    def bulk_weight(self, i):
        """Weight of bulk flow i (the last weight repeats)."""
        return self.weights[min(i, len(self.weights) - 1)]

    def bulk_conns_of(self, i):
        """Connections of bulk download i (the last value repeats)."""
        return self.bulk_conns[min(i, len(self.bulk_conns) - 1)]

    def bulk_rtt(self, i):
        """Added RTT of bulk flow i, ms (the last value repeats)."""
        return self.rtt_bulk[min(i, len(self.rtt_bulk) - 1)]

    def stage_bottleneck(self):
        """Whether the user-space stage is the bottleneck (an AQM or a moving
        rate); drop-tail at a fixed rate stays the kernel's tbf."""
        return self.bottleneck != "droptail" or bool(self.link_trace)

    def host2_window(self):
        """(from, to): the seconds of the run in which the second machine's
        traffic runs (host2_on, the whole run without it)."""
        if not self.host2_on:
            return 0.0, float(self.duration)
        a, b = self.host2_on.split("-", 1)
        return float(a), float(b)

    def host2_downloads(self):
        """The second machine's downloads (none with host2=udp)."""
        return 0 if self.hosts != 2 or self.host2 == "udp" else self.host2_bulk

    def host2_udp(self):
        """The second machine's UDP rate, kbit/s (0: none)."""
        if self.hosts != 2:
            return 0.0
        if self.host2 == "udp":
            return self.host2_udp_kbps or HOST2_UDP_KBPS
        return self.host2_udp_kbps

    def cross_at(self, t):
        """Cross traffic scheduled at run time t, kbit/s."""
        return self.cross_kbps if self.cross_kbps and self.cross_start <= t < self.cross_end else 0.0

    def parameters(self):
        """The fields as a JSON-able dict (summary.json)."""
        d = dataclasses.asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        return d

    def describe(self):
        """The experiment in words, from its fields (what a run with --sets
        actually did; the hand-written doc is the paper's base case)."""
        def k(v):
            return "%gk" % v if v < 1000 else "%g Mbit/s" % (v / 1000.0)
        link = "%s link" % k(self.link_kbps)
        if self.link_trace:
            link += " following trace %s" % self.link_trace
        link += {"droptail": ", drop-tail %g ms" % self.queue_ms, "codel": ", CoDel",
                 "fq_codel": ", FQ-CoDel"}[self.bottleneck]
        parts = [link + ", senders %s" % self.sender_cc]
        if self.adaptive:
            parts.append("HLS (%s k variants) played by %s" % ("/".join("%d" % v for v in self.hls_variants),
                                                             self.player))
        elif self.video:
            v = "video %s (min %s)" % (k(self.video_kbps), k(self.video_min_kbps))
            if self.video_low_kbps and self.video_low_to > self.video_low_from:
                v += ", %s from %g s to %g s" % (k(self.video_low_kbps), self.video_low_from, self.video_low_to)
            if self.video_striping or self.video_connections:
                v += ", read by bwsshttpsrc with striping %s over %s connections" % (
                    self.video_striping or "(default)", self.video_connections or "(default)")
            parts.append(v)
        if self.bulk:
            ws = [self.bulk_weight(i) for i in range(self.bulk)]
            rtts = sorted({self.bulk_rtt(i) for i in range(self.bulk)})
            parts.append("%d bulk flow%s (weights %s, RTT %s ms)" % (
                self.bulk, "" if self.bulk == 1 else "s", ":".join("%g" % w for w in ws),
                "/".join("%g" % r for r in rtts)))
        if self.quic:
            parts.append("a QUIC download (%s)" % self.quic_cc)
        if self.cross_kbps and self.cross_end > self.cross_start:
            parts.append("%s UDP from %g s to %g s" % (k(self.cross_kbps), self.cross_start, self.cross_end))
        if self.bwss_on_at:
            parts.append("BWSS on at %g s" % self.bwss_on_at)
        if self.bulk_initrwnd:
            parts.append("the downloads' SYN offering %d segments" % self.bulk_initrwnd)
        if self.hosts == 2:
            h2 = []
            if self.host2_downloads():
                h2.append("%d %s download%s" % (self.host2_downloads(), "plain" if self.host2 == "tcp" else "bwss",
                                               "" if self.host2_downloads() == 1 else "s"))
            if self.host2_udp():
                h2.append("%s UDP" % k(self.host2_udp()))
            a, b = self.host2_window()
            parts.append("a second machine: %s%s" % (" + ".join(h2), " from %g s to %g s" % (a, b)
                                                      if self.host2_on else ""))
        return "%s; %g s" % ("; ".join(parts), self.duration)

    # ---- overrides ----
    def with_sets(self, sets):
        """Returns a copy with KEY=VALUE overrides applied, each parsed by the
        field's type; raises ScenarioError for an unknown key or a bad value.
        With any override the copy's doc is its description (describe()),
        naming the base scenario: the base's text would tell another run."""
        fields = {f.name: f for f in dataclasses.fields(self) if f.name not in ("name", "doc")}
        changes = {}
        for s in sets or []:
            if "=" not in s:
                raise ScenarioError("--set %s: expected KEY=VALUE" % s)
            k, v = s.split("=", 1)
            if k not in fields:
                raise ScenarioError("--set %s: unknown parameter (known: %s)"
                                    % (k, ", ".join(sorted(fields))))
            changes[k] = _parse(k, v, getattr(self, k))
        sc = dataclasses.replace(self, **changes)
        sc.validate()
        if changes:
            sc = dataclasses.replace(sc, doc="%s with %s: %s" % (
                self.name, ", ".join(sets), sc.describe()))
        return sc

    def validate(self):
        """Raises ScenarioError if the scenario cannot run."""
        if self.link_kbps <= 0 or self.duration <= 0:
            raise ScenarioError("--set: link_kbps and duration must be > 0")
        if self.video_client not in VIDEO_CLIENTS:
            raise ScenarioError("--set video_client: one of %s" % ", ".join(VIDEO_CLIENTS))
        if self.video_striping not in ("",) + STRIPINGS:
            raise ScenarioError("--set video_striping: one of %s" % ", ".join(STRIPINGS))
        if not 0 <= self.video_connections <= MAX_VIDEO_CONNS:
            raise ScenarioError("--set video_connections: 1 to %d (0: the element's default)" % MAX_VIDEO_CONNS)
        if (self.video_striping or self.video_connections) and self.video_client != "gst":
            raise ScenarioError("--set video_striping and video_connections are bwsshttpsrc's: they need "
                                "video_client=gst")
        if not self.sender_cc or not all(c.isalnum() or c == "_" for c in self.sender_cc):
            raise ScenarioError("--set sender_cc: a congestion control's name (cubic, reno, bbr)")
        if self.adaptive and self.progressive:
            raise ScenarioError("--set: adaptive and progressive are two kinds of video, not both")
        if self.ping_ms and self.ping_ms < 10:
            raise ScenarioError("--set ping_ms: 0 (no ping) or at least 10")
        if self.player not in PLAYERS:
            raise ScenarioError("--set player: one of %s" % ", ".join(PLAYERS))
        if self.bwss_on_at and self.bwss_on_at >= self.duration:
            raise ScenarioError("bwss_on_at (%g s) must be below the duration (%g s), or 0 for "
                                "sharing from the start" % (self.bwss_on_at, self.duration))
        if not self.weights or not self.rtt_bulk or not self.hls_variants:
            raise ScenarioError("--set: weights, rtt_bulk and hls_variants need one value at least")
        if self.measure_from >= self.duration:
            raise ScenarioError("measure_from must be below the duration")
        if self.bottleneck not in BOTTLENECKS:
            raise ScenarioError("--set bottleneck: one of %s" % ", ".join(BOTTLENECKS))
        if self.stage_realtime > 99:
            raise ScenarioError("--set stage_realtime: 0 (normal scheduling) or a priority 1-99")
        if self.queue_ms <= 0:
            raise ScenarioError("--set queue_ms: must be > 0")
        if not self.bulk_conns or not all(1 <= k <= MAX_BULK_CONNS for k in self.bulk_conns):
            raise ScenarioError("--set bulk_conns: 1 to %d connections per download" % MAX_BULK_CONNS)
        if self.hosts not in (1, 2):
            raise ScenarioError("--set hosts: 1 or 2 receiving machines")
        if self.host2 not in HOST2_KINDS:
            raise ScenarioError("--set host2: one of %s" % ", ".join(HOST2_KINDS))
        if self.hosts == 2 and not 1 <= self.host2_bulk <= 8:
            raise ScenarioError("--set host2_bulk: 1 to 8 downloads on the second machine")
        if self.host2_on:
            try:
                a, b = (float(x) for x in self.host2_on.split("-", 1))
            except ValueError:
                raise ScenarioError("--set host2_on: FROM-TO in seconds of the run (e.g. 20-60)")
            if not (math.isfinite(a) and math.isfinite(b) and 0 <= a < b <= self.duration):
                raise ScenarioError("--set host2_on: FROM-TO with 0 <= FROM < TO <= the duration (%g s)"
                                    % self.duration)
        if self.quic not in (0, 1):
            raise ScenarioError("--set quic: 0 or 1 QUIC download on this machine")
        if self.bulk_initrwnd < 0:
            raise ScenarioError("--set bulk_initrwnd: segments, 0 (the kernel's) or more")
        if self.quic_cc not in ("cubic", "reno"):
            raise ScenarioError("--set quic_cc: cubic or reno (aioquic's)")
        if (self.host2_on or self.host2_udp_kbps) and self.hosts != 2:
            raise ScenarioError("--set host2_on, host2_udp_kbps: only with hosts=2")
        if self.link_trace:
            from . import linktrace
            try:
                linktrace.points(self)
            except linktrace.TraceError as e:
                raise ScenarioError("--set " + str(e))


def _parse(key, text, current):
    """Parses text as the type of current (int, float, str, tuple of numbers)."""
    try:
        if isinstance(current, tuple):
            kind = type(current[0]) if current else float
            vals = tuple(kind(float(x)) if kind is int else float(x) for x in text.split(","))
            if not all(math.isfinite(v) and v >= 0 for v in vals):
                raise ScenarioError("--set %s: values must be finite and >= 0" % key)
            return vals
        if isinstance(current, str):
            return text
        if isinstance(current, int):
            v = int(text)
        else:
            v = float(text)
    except ValueError:
        raise ScenarioError("--set %s: '%s' is not a %s" % (
            key, text, "comma-separated list of numbers" if isinstance(current, tuple) else "number"))
    if not (math.isfinite(v) and v >= 0):
        raise ScenarioError("--set %s: must be a finite number >= 0" % key)
    return v


SCENARIOS = {s.name: s for s in (
    Scenario("weights", "Fig. 5a: three bulk flows, weights 1:2:3, no minimum, BWSS switched on at "
             "40 s (means from 45 s)",
             video=0, bulk=3, weights=(1.0, 2.0, 3.0), duration=100, bwss_on_at=40, measure_from=45),
    Scenario("capacity-drop", "Fig. 5b: weights 1:2, 320 kbit/s UDP from 40 s to 80 s",
             video=0, bulk=2, weights=(1.0, 2.0), duration=120, cross_kbps=320, cross_start=40,
             cross_end=80),
    Scenario("redistribution", "Fig. 5c: video 496k (min 496k, high priority) + one bulk flow; the "
             "video source drops to 160k from 40 s to 100 s",
             bulk=1, weights=(1.0,), duration=130, video_low_kbps=160, video_low_from=40,
             video_low_to=100),
    Scenario("streaming", "Fig. 7: video 496k, two bulk flows, 320k UDP from 30 s to 60 s",
             bulk=2, weights=(1.0, 1.0), duration=90, cross_kbps=320, cross_start=30, cross_end=60),
    Scenario("fast", "streaming scaled to 100 Mbit/s: 25 Mbit/s video, 8 bulk flows, RTT 20-200 ms",
             link_kbps=100000, video_kbps=25000, video_min_kbps=25000, bulk=8,
             weights=(1.0,) * 8, rtt_video=20,
             rtt_bulk=(20.0, 40.0, 60.0, 80.0, 100.0, 140.0, 170.0, 200.0), cross_kbps=33000,
             cross_start=30, cross_end=60, queue_ms=50, duration=90),
    # The adaptive scenarios: the player as an application is written, no
    # minimum set by hand (bwsshttpsrc and the bwss tracer learn it).
    # video_kbps is the top variant; video_min_kbps only sizes the ideal
    # router's video class: what the demuxers' own rule needs to hold the top
    # variant, B/0.8, with the element's 10 % margin (450k -> 620k).
    Scenario("adaptive", "Fig. 8: HLS (450/350/262/60k variants) played by playbin (hlsdemux), two "
             "bulk flows, 240k UDP from 60 s to 100 s",
             adaptive=1, player="playbin", video_kbps=450, video_min_kbps=620, bulk=2,
             weights=(1.0, 1.0), cross_kbps=240, cross_start=60, cross_end=100, duration=130),
    Scenario("adaptive3", "Fig. 8 with playbin3 (hlsdemux2, its own HTTP client, followed by the bwss "
             "tracer): 450/350/262/60k, two bulk flows, 240k UDP from 60 s to 100 s",
             adaptive=1, player="playbin3", video_kbps=450, video_min_kbps=620, bulk=2,
             weights=(1.0, 1.0), cross_kbps=240, cross_start=60, cross_end=100, duration=130),
    # 12 Mbit/s, not 10: both demuxers take a variant only when 0.8 x the
    # measured download rate reaches its BANDWIDTH, i.e. 10 Mbit/s for 8M,
    # more than a 10 Mbit/s link carries (9.6 Mbit/s of TCP payload), so no
    # player would ever pick 8M there, even alone.
    # issue 29: a real player of a progressive-download site (playbin with
    # its queue2, a synced sink) through bwsshttpsrc, beside three plain
    # downloads that bwssd adopts (run it in mode bwss-adopt); the ping
    # measures the queue a call would see while it plays.  video_min_kbps
    # only sizes the ideal router's video class.
    Scenario("player-progressive", "a real playbin playing progressive H.264 over HTTP (1500 kbit/s, "
             "synced sink) beside three plain downloads adopted by bwssd, 4 Mbit/s; a ping measures the "
             "queue while it plays",
             progressive=1, player="playbin", link_kbps=4000, video_kbps=1500, video_min_kbps=1740,
             bulk=3, weights=(1.0,) * 3, duration=90, ping_ms=100),
    Scenario("adaptive-hd", "a higher ladder (8000/5000/2500/1000k, 720p-360p) played by playbin3 on "
             "12 Mbit/s, four bulk flows, 3 Mbit/s UDP from 60 s to 100 s",
             adaptive=1, player="playbin3", link_kbps=12000, video_kbps=8000, video_min_kbps=11000,
             hls_variants=(8000, 5000, 2500, 1000), bulk=4, weights=(1.0,) * 4, cross_kbps=3000,
             cross_start=60, cross_end=100, duration=130),
)}

# SPDX-License-Identifier: LGPL-2.1-or-later
"""The link's rate over a run (--set link_trace=NAME|FILE): a step function,
a list of (seconds from the run's start, kbit/s) points, each rate in force
from its time until the next point's.

Built-in traces, relative to link_kbps and seeded by trace_seed (the same
seed gives the same trace):

  flat  the link rate throughout, but through the user-space bottleneck
  step  full, 40 % over the middle third of the run, full again
  wifi  a new rate every 100-500 ms, uniform within ±50 % of the link
  lte   deeper swings: levels of 1-4 s between 40 % and 130 %, and fades of
        2-5 s at 20 % (one segment in five), with ±10 % jitter every 250-500 ms

A FILE holds "seconds kbit/s" lines (blank lines and # comments allowed),
times rising from 0 or later (before the first line its rate holds)."""
import math
import random

BUILTIN = ("flat", "step", "wifi", "lte")


class TraceError(ValueError):
    """A trace that cannot be used (the CLI exits 2 with its message)."""


def load_file(path):
    """Reads a trace file; raises TraceError naming the line at fault."""
    try:
        lines = open(path).read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError("link_trace %s: not a built-in trace (%s) and not readable: %s"
                         % (path, ", ".join(BUILTIN), e))
    pts = []
    for n, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        f = text.split()
        try:
            t, kbps = float(f[0]), float(f[1])
            ok = len(f) == 2 and math.isfinite(t) and math.isfinite(kbps)
        except (ValueError, IndexError):
            ok = False
        if not ok:
            raise TraceError("link_trace %s:%d: expected \"seconds kbit/s\", got %r" % (path, n, line))
        if t < 0 or kbps <= 0:
            raise TraceError("link_trace %s:%d: time must be >= 0 and the rate > 0 (%r)" % (path, n, line))
        if pts and t < pts[-1][0]:
            raise TraceError("link_trace %s:%d: time %g s is before the line above's %g s"
                             % (path, n, t, pts[-1][0]))
        if kbps > 10e6:
            raise TraceError("link_trace %s:%d: %g kbit/s is more than the lab can carry" % (path, n, kbps))
        pts.append((t, kbps))
    if not pts:
        raise TraceError("link_trace %s: no \"seconds kbit/s\" line" % path)
    return pts


def _wifi(link, duration, rng):
    pts, t = [], 0.0
    while t < duration + 5:
        pts.append((round(t, 3), round(link * rng.uniform(0.5, 1.5), 1)))
        t += rng.uniform(0.1, 0.5)
    return pts


def _lte(link, duration, rng):
    pts, t = [], 0.0
    while t < duration + 5:
        if t > 0 and rng.random() < 0.2:
            level, length = 0.2, rng.uniform(2.0, 5.0)        # a fade
        else:
            level, length = rng.uniform(0.4, 1.3), rng.uniform(1.0, 4.0)
        end = t + length
        while t < end:
            jitter = 1.0 if level == 0.2 else rng.uniform(0.9, 1.1)
            pts.append((round(t, 3), round(link * level * jitter, 1)))
            t += rng.uniform(0.25, 0.5)
    return pts


def points(sc):
    """The scenario's trace as [(t, kbps)], None without one."""
    name, link, dur = sc.link_trace, sc.link_kbps, sc.duration
    if not name:
        return None
    if name == "flat":
        return [(0.0, link)]
    if name == "step":
        return [(0.0, link), (round(dur / 3, 3), 0.4 * link), (round(2 * dur / 3, 3), link)]
    if name == "wifi":
        return _wifi(link, dur, random.Random(sc.trace_seed))
    if name == "lte":
        return _lte(link, dur, random.Random(sc.trace_seed))
    return load_file(name)


def rate_at(pts, t):
    """The rate in force at t, kbit/s."""
    r = pts[0][1]
    for pt, k in pts:
        if pt > t:
            break
        r = k
    return r


def per_second(pts, duration, link_kbps):
    """Mean rate of each second of the run, kbit/s (link_kbps without a trace)."""
    dur = int(duration)
    if not pts:
        return [float(link_kbps)] * dur
    out = []
    for s in range(dur):
        bits, a = 0.0, float(s)
        edges = [t for t, _ in pts if s < t < s + 1] + [s + 1.0]
        for b in edges:
            bits += rate_at(pts, a) * (b - a)
            a = b
        out.append(bits)
    return out


def write(pts, path):
    with open(path, "w") as f:
        f.write("# seconds kbit/s (bwss-lab link trace)\n")
        for t, k in pts:
            f.write("%g %g\n" % (t, k))

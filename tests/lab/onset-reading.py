#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the σ loop read when the cross traffic arrived, from a bwss mode's run
directory (samples.txt, the bwss-lab-sample lines; domain.txt, the
controller's "D" lines, which older runs have in samples.txt; run.json for
the run's clock).

For each RUN: the time the cross traffic's first packet reached the client
(its first sample from CROSS_HOST, at or after CROSS_START − 1 s), the first
decision after it that lowered σ (its time, the queue it read and σ before
and after), the largest queue the loop read and the video's largest RTT in
the WINDOW_S after the onset, and the gaps of the video's arrivals (no
bytes for GAP_S or more: at 50-ms samples, three lost samples) in that
window.  A video RTT near its path's RTT plus the bottleneck's buffer is a
full buffer; a gap after it, a loss the video's sender recovers from.

usage: onset-reading.py CROSS_START RUN_DIR..."""
import json
import os
import sys

CROSS_HOST = "10.77.2.50"   # the lab's cross-traffic sender (topology.py)
VIDEO_PORT = ":8000"        # the video server's port (the constant-rate source)
WINDOW_S = 3.0              # s after the onset
GAP_S = 0.15                # s without video bytes counted as a gap


def recorded_lines(run_dir):
    """The recorder's and the controller's lines of a run, split, in the
    order of their times."""
    rows = []
    for name in ("samples.txt", "domain.txt"):
        path = os.path.join(run_dir, name)
        if os.path.exists(path):
            with open(path) as f:
                rows += [x for x in (line.split() for line in f) if len(x) >= 2]
    return sorted(rows, key=lambda x: float(x[1] if x[0] == "D" else x[0]))


def reading(run_dir, cross_start):
    """The figures of one run, as a dict (None where the run has no onset)."""
    with open(os.path.join(run_dir, "run.json")) as f:
        t0 = json.load(f)["t0_monotonic"]
    onset = cut = None
    peak_q = peak_rtt = 0.0
    sigma = last_video = None
    video_bytes = 0
    gaps = []
    for x in recorded_lines(run_dir):
        if x[0] == "D":
            t, s, q = float(x[1]) - t0, float(x[2]) / 1e3, float(x[3]) / 1e3
            if onset is not None and t < onset + WINDOW_S:
                if cut is None and sigma is not None and s < sigma:
                    cut = {"at_s": t, "queue_ms": q, "sigma_from": sigma, "sigma_to": s}
                peak_q = max(peak_q, q)
            sigma = s
            continue
        t = float(x[0]) - t0
        if onset is None and x[1].startswith(CROSS_HOST + ":") and t >= cross_start - 1.0:
            onset = t
        if x[1].endswith(VIDEO_PORT):
            if onset is not None and t < onset + WINDOW_S:
                peak_rtt = max(peak_rtt, float(x[4]) / 1e3)
            got = int(x[2])            # bytes received so far
            if got > video_bytes:
                if (onset is not None and t < onset + WINDOW_S and last_video is not None
                        and t - last_video >= GAP_S):
                    gaps.append((last_video, t - last_video))
                last_video, video_bytes = t, got
    if onset is None:
        return None
    return {"onset_s": onset, "cut": cut, "peak_queue_ms": peak_q, "peak_video_rtt_ms": peak_rtt,
            "gaps": gaps}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    cross_start = float(sys.argv[1])
    for d in sys.argv[2:]:
        r = reading(d, cross_start)
        if r is None:
            print("%s: no cross traffic after %g s" % (d, cross_start - 1.0))
            continue
        c = r["cut"]
        cut = ("first cut %.2f s (+%.2f) reading %.0f ms, σ %.0f → %.0f"
               % (c["at_s"], c["at_s"] - r["onset_s"], c["queue_ms"], c["sigma_from"], c["sigma_to"])
               if c else "no cut within %g s" % WINDOW_S)
        gaps = " ".join("%.2f s at %.2f" % (g, t) for t, g in r["gaps"]) or "none"
        print("%s: onset %.2f s; %s; loop's queue peak %.0f ms; video RTT peak %.0f ms; video gaps: %s"
              % (d, r["onset_s"], cut, r["peak_queue_ms"], r["peak_video_rtt_ms"], gaps))


if __name__ == "__main__":
    main()

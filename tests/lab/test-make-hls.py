#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's HLS content maker (make-hls): its reading of splitmuxsink's
fragment messages (a segment is paired with its closing by the name the
message carries, so a neighbour's opening in between changes nothing; a
closing never opened is an error), the playlist it writes, and a real
encoding of a short variant: every segment on disk is in the playlist once,
the durations add up to the video, the rate is the nominal one, and the
content is reused on a second call.  (TAP output.)"""
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_HLS = os.path.join(HERE, "make-hls")
sys.path.insert(0, HERE)
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check
loader = importlib.machinery.SourceFileLoader("make_hls", MAKE_HLS)
spec = importlib.util.spec_from_loader("make_hls", loader)
mh = importlib.util.module_from_spec(spec)
loader.exec_module(mh)


def msg(kind, location, rt_ns):
    return ('Got message #7 from element "splitmuxsink0" (element): splitmuxsink-fragment-%s, '
            'location=(string)%s, running-time=(guint64)%d, sink=(GstElement)"\\(GstFileSink\\)\\ sink";'
            % (kind, location, rt_ns))


def playlist(path):
    """[(name, duration)] and whether #EXT-X-ENDLIST ends it."""
    entries, duration = [], None
    lines = [line.strip() for line in open(path)]
    for line in lines:
        if line.startswith("#EXTINF:"):
            duration = float(line[8:].split(",")[0])
        elif line and not line.startswith("#"):
            entries.append((line, duration))
    return entries, lines[-1] == "#EXT-X-ENDLIST"


# ---- the fragment messages ----
f = mh.Fragments()
for line in ["Setting pipeline to PAUSED ...", msg("opened", "s00000.ts", 0),
             msg("closed", "s00000.ts", 2_000_000_000), msg("opened", "s00001.ts", 2_000_000_000),
             msg("closed", "s00001.ts", 3_900_000_000), "Got EOS from element \"pipeline0\"."]:
    f.feed(line)
check(f.error is None and f.closed == [("s00000.ts", 2.0), ("s00001.ts", 1.9)],
      "two segments in order: 2 s and 1.9 s from their own running times: %s" % f.closed)

f = mh.Fragments()
for line in [msg("opened", "s00000.ts", 0), msg("opened", "s00001.ts", 2_000_000_000),
             msg("closed", "s00000.ts", 2_000_000_000), msg("closed", "s00001.ts", 4_000_000_000)]:
    f.feed(line)
check(f.error is None and f.closed == [("s00000.ts", 2.0), ("s00001.ts", 2.0)],
      "the next segment opening before the last one's closing: each closing still goes to its "
      "own file (a pairing with the last opening would give s00001 twice): %s" % f.closed)

f = mh.Fragments()
for line in [msg("opened", "s00000.ts", 0), msg("closed", "s00000.ts", 2_000_000_000),
             msg("closed", "s00000.ts", 4_000_000_000)]:
    f.feed(line)
check(f.error is not None and "s00000.ts" in f.error and f.closed == [("s00000.ts", 2.0)],
      "a segment closed twice (the second time never opened) is an error, not a second entry: %s"
      % f.error)

# ---- the playlist ----
with tempfile.TemporaryDirectory(prefix="test-make-hls-") as tmp:
    mh.write_playlist(tmp, [("s00000.ts", 2.0), ("s00001.ts", 2.4), ("s00002.ts", 0.5)], 2)
    entries, ended = playlist(os.path.join(tmp, "index.m3u8"))
    text = open(os.path.join(tmp, "index.m3u8")).read()
    check(entries == [("s00000.ts", 2.0), ("s00001.ts", 2.4), ("s00002.ts", 0.5)] and ended
          and text.startswith("#EXTM3U\n#EXT-X-VERSION:3\n") and "#EXT-X-TARGETDURATION:3\n" in text,
          "the playlist: every segment with its duration, the target duration the longest rounded "
          "up (RFC 8216), #EXT-X-ENDLIST last")

# ---- a real encoding ----
if shutil.which("gst-launch-1.0") is None or subprocess.run(
        ["gst-inspect-1.0", "openh264enc"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
    for what in ("a 60k variant of 10 s encoded", "the content reused"):
        tap.skip(what, "gst-launch-1.0 or openh264enc is not installed")
else:
    with tempfile.TemporaryDirectory(prefix="test-make-hls-") as tmp:
        out = os.path.join(tmp, "content")
        r = subprocess.run([MAKE_HLS, "--variants", "60", "--length", "10", "--segment", "2", out],
                           capture_output=True, text=True, timeout=300)
        v = os.path.join(out, "v60")
        ok = r.returncode == 0 and os.path.exists(os.path.join(v, "index.m3u8"))
        entries, ended = playlist(os.path.join(v, "index.m3u8")) if ok else ([], False)
        on_disk = sorted(n for n in os.listdir(v) if n.endswith(".ts")) if ok else []
        total = sum(d for _, d in entries)
        stamp = json.load(open(os.path.join(out, "stamp.json"))) if ok else {}
        actual = stamp.get("variants", [{}])[0].get("actual_kbps", 0)
        # 50 frames at 5 frames/s, a key frame every 10: five segments, the
        # last one frame short (a segment's duration runs to its last frame's start)
        check(ok and ended and [n for n, _ in entries] == on_disk and len(on_disk) == 5
              and abs(total - 9.8) < 0.01 and abs(actual / 60 - 1) <= mh.TOLERANCE,
              "a 60k variant of 10 s encoded: %d segments on disk, %d in the playlist, %.2f s, %.1f kbit/s%s"
              % (len(on_disk), len(entries), total, actual, "" if ok else ": " + r.stderr.strip()[-300:]))
        before = os.path.getmtime(os.path.join(v, "index.m3u8")) if ok else None
        r2 = subprocess.run([MAKE_HLS, "--variants", "60", "--length", "10", "--segment", "2", out],
                            capture_output=True, text=True, timeout=60)
        check(ok and r2.returncode == 0 and r2.stdout == ""
              and os.path.getmtime(os.path.join(v, "index.m3u8")) == before,
              "the content reused: a second call with the same request encodes nothing")

tap.done()

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""duration-study.py's two pieces of arithmetic, without a network: the
seconds of a recording that stand for a shorter run (the matrix's 60-s cell
with cross traffic 20-40 s, shortened to 40 and 45 s, keeps each phase's
first seconds), and the video's lateness, against bwss-late itself on a
trace with a stall (the same required prebuffer to the microsecond).
usage: test-duration-study.py BWSS_LATE   (TAP)"""
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("study", os.path.join(HERE, "duration-study.py"))
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)
from bwsslab import matrix  # noqa: E402

n = failed = 0


def check(ok, what):
    global n, failed
    n += 1
    failed += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))


cell = next(c for c in matrix.cells() if c.name == "droptail150-cubic-fixed-960k")
sc = cell.scenario()
for dur, want in ((60, [(0.0, 60.0)]), (40, [(0.0, 13.0), (20.0, 34.0), (40.0, 53.0)]),
                  (45, [(0.0, 15.0), (20.0, 35.0), (40.0, 55.0)])):
    got = study.kept_seconds(sc, dur)
    check(got == want and sum(b - a for a, b in got) == dur,
          "a %d-s run of the matrix's cell keeps %s of the 60-s recording (got %s)" % (dur, want, got))

# a 432 kbit/s stream at its rate in 100-ms reads, stalled from 10 to 12.5 s, then caught up
rate_bps = 432000
trace, t = [], 0.0
while t < 60.0:
    if not (10.0 <= t < 12.5):
        b = rate_bps / 8 * 0.1 * (3.0 if 12.5 <= t < 13.75 else 1.0)
        trace.append((round(t, 6), int(b)))
    t += 0.1
late, need = study.lateness(sc, trace)
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    for t, b in trace:
        f.write("%.6f %d\n" % (t, b))
    path = f.name
try:
    r = subprocess.run([sys.argv[1], "--rate", "%dk" % (rate_bps // 1000), "--end", str(int(sc.duration)), path],
                       capture_output=True, text=True, timeout=30)
    import json
    theirs = json.loads(r.stdout)["required_prebuffer_s"] if r.returncode == 0 else None
finally:
    os.unlink(path)
check(theirs is not None and abs(theirs - need) < 1e-6 and 2.4 < need < 2.7,
      "a 2.5-s stall: the study's prebuffer %.6f s, bwss-late's %s" % (need, theirs))
peak_t = max(late, key=lambda p: p[1])[0]
check(12.5 <= peak_t < 12.7, "the lateness peaks when the stall ends (at %.1f s)" % peak_t)
print("1..%d" % n)
sys.exit(1 if failed else 0)

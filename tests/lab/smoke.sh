#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CI smoke test of the lab: a shortened `streaming` (45 s, UDP cross traffic
# from 10 s to 35 s) in modes tcp and bwss.  Asserts the lab produced its
# files and sane rates, that it carried the link (valid), that bwss needs
# less prebuffering than plain TCP, and that the link's queue under bwss is
# shorter than under plain TCP, and that no flow stalled nor any client
# failed.  The lab retries a run it could not carry (host noise); the test
# fails on that only when every try was invalid, and says so.
# A TAP skip plan (exit 0) without root or /dev/net/tun, or while another run holds
# the lab (its lock, tests/lab/bwsslab/lock.py).  (TAP output.)
set -u
build=$1
lab=$(dirname "$0")/bwss-lab
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network namespaces)"; exit 0; }
[ -c /dev/net/tun ] || { echo "1..0 # SKIP no /dev/net/tun"; exit 0; }
for t in nginx iperf3 curl ip tc; do
  command -v $t >/dev/null || { echo "1..0 # SKIP $t not installed"; exit 0; }
done
# one lab per machine: run under its lock, skipped while another run holds it
[ -n "${BWSS_LAB_OWNER:-}" ] || exec "$lab" lock --no-wait --skip -- "$0" "$@"
out=$(mktemp -d)
trap 'rm -rf "$out"; "$lab" down >/dev/null 2>&1' EXIT
"$lab" run streaming --label streaming --mode tcp --mode bwss --build-dir "$build" --out "$out" \
  --set duration=45 --set cross_start=10 --set cross_end=35 >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
# 0: valid runs; 4: valid runs with a product fault (judged below); 3: a
# mode the lab could not carry in any of its tries (host noise, named)
if [ $rc = 3 ]; then
  echo "not ok 1 - the lab could not carry the link in any try: host noise, not a product fault: $(grep 'stayed invalid' "$out/log" | tr '\n' ' ')"
  echo "1..1"; exit 1
fi
[ $rc -eq 0 ] || [ $rc -eq 4 ] || { echo "not ok 1 - bwss-lab run failed ($rc)"; echo "1..1"; exit 1; }
/usr/bin/python3 - "$out/streaming" "$(dirname "$0")" <<'PY'
import json, os, sys
root = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from bwsslab.tap import Tap
tap = Tap()
check = tap.check
s = {m: json.load(open(os.path.join(root, m, "summary.json"))) for m in ("tcp", "bwss")}
for m, x in s.items():
    check(all(k in x for k in ("scenario", "mode", "duration_s", "link_kbps", "aggregate_kbps",
                               "flows", "late_fraction", "required_prebuffer_s")),
          "%s: summary.json has the fields" % m)
    check(set(x["late_fraction"]) == {"0.5", "1", "2", "4", "8"}, "%s: late fractions per prebuffer" % m)
    check(0.5 * 960 <= x["aggregate_kbps"] <= 960, "%s: aggregate %.0f kbit/s is plausible on 960" % (m, x["aggregate_kbps"]))
    check(all(os.path.exists(os.path.join(root, m, f))
              for f in ("series.csv", "rates.png", "samples.txt", "delay.json")),
          "%s: series, plot and the delay stage's statistics written" % m)
    check(x.get("valid") is True, "%s: the lab carried the link (on try %d of its tries; %s)" % (
        m, len(x.get("tries") or [1]), " | ".join("; ".join(t["invalid_reasons"]) for t in x.get("tries", [])
                                                  if t["invalid_reasons"]) or "no invalid try"))
    check(not x.get("faults"), "%s: every flow kept moving (longest stall %s s), every client kept going%s" % (
        m, max((x.get("progress") or {}).get("longest_stall_s", {"?": None}).values()),
        ": " + "; ".join(x["faults"]) if x.get("faults") else ""))
    check(x["queue_delay_ms"].get("median") is not None, "%s: queueing delay measured (median %s ms)"
          % (m, x["queue_delay_ms"].get("median")))
check(os.path.exists(os.path.join(root, "comparison.md")), "comparison table written")
t, b = s["tcp"]["required_prebuffer_s"], s["bwss"]["required_prebuffer_s"]
check(b < t, "bwss needs less prebuffer than tcp: %.2f s vs %.2f s" % (b, t))
qt, qb = s["tcp"]["queue_delay_ms"]["median"], s["bwss"]["queue_delay_ms"]["median"]
check(qb < qt, "the link's queue is shorter under bwss: median %.1f ms vs %.1f ms" % (qb, qt))
tap.done()
PY

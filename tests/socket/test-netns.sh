#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The socket layer on an emulated access link (the lab's namespaces, delay
# stage and tbf): two curl downloads from nginx with weights 1 and 2 share
# an 8 Mbit/s link 1:2, each follows its target, and the flows show up in
# bwss-top --json with their weights.  Mode $2: bwss (the default: the
# downloads run under bwss-run, ratio within 20 %) or bwss-adopt (plain curl
# adopted by bwssd through a rules file, ratio within 5 %, issue 12); only a
# valid run is judged (the lab retries one it could not carry).  Needs
# root and /dev/net/tun; skips (a TAP skip plan, exit 0) otherwise, and while another run
# holds the lab (its lock, tests/lab/bwsslab/lock.py).  (TAP output.)
set -u
build=$1 mode=${2:-bwss}
lab=$(dirname "$0")/../lab/bwss-lab
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network namespaces)"; exit 0; }
[ -c /dev/net/tun ] || { echo "1..0 # SKIP no /dev/net/tun"; exit 0; }
for t in nginx curl ip tc; do
  command -v $t >/dev/null || { echo "1..0 # SKIP $t not installed"; exit 0; }
done
# one lab per machine: run under its lock, skipped while another run holds it
[ -n "${BWSS_LAB_OWNER:-}" ] || exec "$lab" lock --no-wait --skip -- "$0" "$@"
out=$(mktemp -d)
trap 'rm -rf "$out"; "$lab" down >/dev/null 2>&1' EXIT
"$lab" run weights --label weights --mode "$mode" --build-dir "$build" --out "$out" \
  --set bulk=2 --set weights=1,2 --set link_kbps=8000 --set rtt_bulk=40 --set duration=40 \
  --set bwss_on_at=0 --set measure_from=5 >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
# the lab retries a run it could not carry (host noise); 3: no try was valid
if [ $rc = 3 ]; then
  echo "not ok 1 - the lab could not carry the link in any try: host noise, not a product fault: $(grep 'stayed invalid' "$out/log" | tr '\n' ' ')"
  echo "1..1"; exit 1
fi
[ $rc = 0 ] || [ $rc = 4 ] || { echo "not ok 1 - lab run failed ($rc)"; echo "1..1"; exit 1; }
/usr/bin/python3 - "$out/weights/$mode" "$mode" <<'PY'
import json, sys
d, mode = sys.argv[1], sys.argv[2]
tolerance = 0.05 if mode == "bwss-adopt" else 0.2
s = json.load(open(d + "/summary.json"))
top = json.load(open(d + "/bwss-top.json"))
n = 0
def check(cond, msg):
    global n
    n += 1
    print(("ok %d - " if cond else "not ok %d - ") % n + msg)
    return cond
good = True
# only a valid run is judged (bwss-lab ran it again while it was not)
if not check(s.get("valid") is True, "the lab carried the link (try %d; %s)" % (
        len(s.get("tries") or [1]), "; ".join(s.get("invalid_reasons") or []) or "valid")):
    print("1..%d" % n)
    sys.exit(1)
good &= check(not s.get("faults"), "no flow stalled, no client failed%s" % (
    ": " + "; ".join(s["faults"]) if s.get("faults") else ""))
# shares over the second half of the run (the first holds the release phase)
series = [l.strip().split(",") for l in open(d + "/series.csv")][1:]
half = series[len(series) // 2:]
b1 = sum(float(r[1]) for r in half) / len(half)
b2 = sum(float(r[2]) for r in half) / len(half)
ratio = b2 / b1 if b1 else 0
good &= check(abs(ratio - 2) <= 2 * tolerance, "weights 1:2 honoured within %d %%" % (tolerance * 100) + ": %.0f / %.0f kbit/s, ratio %.2f" % (b1, b2, ratio))
good &= check(b1 + b2 >= 0.85 * 8000 * 1448 / 1500, "the link stays used: %.0f kbit/s of 8000" % (b1 + b2))
flows = top.get("flows", [])
good &= check(top.get("controller_pid", 0) > 0, "a controller runs (phase %s, sigma %s)" % (top.get("phase"), top.get("sigma_bps")))
ws = sorted(f["weight"] for f in flows)
good &= check(ws == [1.0, 2.0], "bwss-top --json lists both flows with weights %s" % ws)
if mode == "bwss-adopt":
    origins = sorted(f["origin"] for f in flows)
    good &= check(origins == ["rule bulk1", "rule bulk2"],
                  "both plain curl downloads adopted by their rules: %s" % origins)
# each flow follows its target: its mean rate over the second half (the
# kernel's byte count) against the target bwss-top shows at the end.  Not
# the estimator's reading at that one moment: it is a 2-RTT sample and can
# read more than the link carries (7874 kbit/s for the two flows together
# on this 7720 kbit/s link, seen once in three runs)
mean_kbps = {1.0: b1, 2.0: b2}
for f in flows:
    t, r = f["target_bps"], mean_kbps.get(f["weight"])
    good &= check(t is not None and r is not None and abs(r * 1000 - t) <= 0.25 * t,
                  "weight %g: measured %.0f kbit/s follows target %.0f" % (f["weight"], r or 0, (t or 0) / 1000))
print("1..%d" % n)
sys.exit(0 if good else 1)
PY

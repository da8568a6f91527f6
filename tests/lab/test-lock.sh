#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The lab's lock (tests/lab/bwsslab/lock.py), checked while the test holds
# the lab itself (a `bwss-lab lock -- sleep` beside it, which its runs must
# wait for): a run waits naming the owner, a run with --no-wait exits 2
# while the lab is still held, naming the owner, and makes nothing; when the
# holder ends, the waiting run goes on, a second waits for it naming it,
# `down` refuses the running topology, and both complete, valid (an invalid
# try is retried by the lab: host noise), one after the other.  The runs
# are short `streaming` runs (15 s, UDP from 5 s to 10 s) in mode tcp.
# A TAP skip plan (exit 0) without root or /dev/net/tun, or while another
# run holds the lab.
# (TAP output.)
set -u
build=$1
lab=$(dirname "$0")/bwss-lab
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network namespaces)"; exit 0; }
[ -c /dev/net/tun ] || { echo "1..0 # SKIP no /dev/net/tun"; exit 0; }
for t in nginx iperf3 curl ip tc; do
  command -v $t >/dev/null || { echo "1..0 # SKIP $t not installed"; exit 0; }
done
owner=$("$lab" owner) || { echo "1..0 # SKIP $owner"; exit 0; }
out=$(mktemp -d)
pids=()
holder=
trap 'kill $holder "${pids[@]}" 2>/dev/null; wait; rm -rf "$out"' EXIT
n=0 good=1
check() {  # check COND-STATUS MESSAGE
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; good=0; fi
}
run() {  # run NAME: one short run into $out/NAME (an invalid try is retried: host noise)
  "$lab" run streaming --label "$1" --mode tcp --build-dir "$build" --out "$out" \
    --set duration=15 --set cross_start=5 --set cross_end=10 >"$out/$1.log" 2>&1
  echo $? >"$out/$1.rc"
}
owns() {  # owns PATTERN: the lab's owner record matches PATTERN
  "$lab" owner | grep -q -- "$1"
}
# The test holds the lab itself first (a `lock` around a sleep, not an
# ancestor of the runs below, so they must wait for it): every check of the
# owner is made while the lab is held, and no other run can cut in.  No
# timed bound: each wait below ends on an event (meson's timeout is the
# bound of a hung lab).
"$lab" lock --no-wait -- sleep 3600 >"$out/holder.log" 2>&1 &
holder=$!
until owns "pid $holder "; do
  kill -0 $holder 2>/dev/null || { echo "1..0 # SKIP $(cat "$out/holder.log")"; exit 0; }
  sleep 0.1
done
run first & pids+=($!)
until grep -q "in use by pid $holder " "$out/first.log" 2>/dev/null; do sleep 0.1; done
check 0 "a run waits while the lab is held, naming the owner: $(head -1 "$out/first.log")"
"$lab" run streaming --no-wait --mode tcp --build-dir "$build" --out "$out/third" \
  --set duration=15 >"$out/third.log" 2>&1
rc=$?
owns "pid $holder "
held=$?
check $([ $rc = 2 ] && [ $held = 0 ] && echo 0 || echo 1) \
  "--no-wait exits 2 while the lab is still held (it did not wait): exit $rc"
check $(grep -q "in use by pid $holder (bwss-lab lock -- sleep 3600)" "$out/third.log" && echo 0 || echo 1) \
  "--no-wait names the owner: $(tr '\n' ' ' <"$out/third.log")"
[ -d "$out/third" ]; check $([ $? != 0 ] && echo 0 || echo 1) "--no-wait made nothing"
# the holder ends: the waiting run takes the lab and makes its topology
kill $holder; wait $holder 2>/dev/null; holder=
until owns "label first" && ip netns list | grep -q bwsslab-r; do sleep 0.2; done
run second & pids+=($!)
until grep -q "in use by pid [0-9]* (bwss-lab run streaming --label first" "$out/second.log" 2>/dev/null; do
  sleep 0.1
done
"$lab" down >"$out/down.log" 2>&1
rc=$?
check $([ $rc = 2 ] && owns "label first" && ip netns list | grep -q bwsslab-r && echo 0 || echo 1) \
  "down refuses another owner's topology and leaves it standing (exit $rc)"
wait "${pids[@]}"
pids=()
for r in first second; do
  sed "s/^/# $r: /" "$out/$r.log"
done
check $([ "$(cat "$out/first.rc")" = 0 ] && [ "$(cat "$out/second.rc")" = 0 ] && echo 0 || echo 1) \
  "both runs complete, valid (exit $(cat "$out/first.rc") and $(cat "$out/second.rc"); 3: invalid in every try, host noise: $(grep -h 'stayed invalid' "$out/first.log" "$out/second.log" | tr '\n' ' '))"
check $(grep -q 'in use by pid [0-9]* (bwss-lab run streaming --label first.*waiting' "$out/second.log" \
  && echo 0 || echo 1) "the second waited, naming the first"
/usr/bin/python3 - "$out" "$n" "$(dirname "$0")" <<'PY'
import json, os, sys
root = sys.argv[1]
sys.path.insert(0, sys.argv[3])
from bwsslab.tap import Tap
tap = Tap(first=int(sys.argv[2]))
check = tap.check
s = {}
for r in ("first", "second"):
    try:
        s[r] = json.load(open(os.path.join(root, r, "tcp", "summary.json")))
    except (OSError, ValueError) as e:
        s[r] = {"valid": False, "invalid_reasons": [str(e)], "host": {}}
    tries = s[r].get("tries") or []
    check(s[r].get("valid") is True, "%s run valid on try %d (%s)" % (
        r, len(tries), " | ".join("try %d: %s" % (t["try"], "; ".join(t["invalid_reasons"]) or "valid")
                                 for t in tries) or "; ".join(s[r].get("invalid_reasons", []))))
h1, h2 = s["first"]["host"], s["second"]["host"]
check(h1.get("ended_unix", 1e99) <= h2.get("started_unix", 0),
      "one after the other: the first ended at %s, the second started at %s"
      % (h1.get("ended_unix"), h2.get("started_unix")))
tap.done()
PY
[ $? = 0 ] && [ $good = 1 ]

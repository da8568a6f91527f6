#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The lab's lock (tests/lab/bwsslab/lock.py): two `bwss-lab run` started 1 s
# apart both complete, valid, one after the other (the second waits, naming
# the first), a third with --no-wait exits 2 at once naming the owner, and
# `down` refuses the running topology.  The runs are short `streaming` runs
# (15 s, UDP from 5 s to 10 s) in mode tcp.  A TAP skip plan (exit 0) without root
# or /dev/net/tun, or while another run holds the lab; this test cannot hold
# the lock itself (its runs would share it).  (TAP output.)
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
trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$out"' EXIT
n=0 good=1
check() {  # check COND-STATUS MESSAGE
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; good=0; fi
}
run() {  # run NAME: one short run into $out/NAME
  "$lab" run streaming --label "$1" --mode tcp --build-dir "$build" --out "$out" \
    --set duration=15 --set cross_start=5 --set cross_end=10 >"$out/$1.log" 2>&1
  echo $? >"$out/$1.rc"
}
run first & pids+=($!)
sleep 1
run second & pids+=($!)
# the first holds the lab: wait until its record and namespaces are there (at most 20 s)
for _ in $(seq 100); do
  grep -q 'label first' <("$lab" owner) && ip netns list | grep -q bwsslab-r && break
  sleep 0.2
done
t0=$(date +%s%N)
"$lab" run streaming --no-wait --mode tcp --build-dir "$build" --out "$out/third" \
  --set duration=15 >"$out/third.log" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check $([ $rc = 2 ] && [ $ms -lt 3000 ] && echo 0 || echo 1) \
  "--no-wait exits 2 at once while the lab is held: exit $rc after $ms ms"
check $(grep -q 'in use by pid [0-9]* (bwss-lab run streaming --label first' "$out/third.log" && echo 0 || echo 1) \
  "--no-wait names the owner: $(tr '\n' ' ' <"$out/third.log")"
[ -d "$out/third" ]; check $([ $? != 0 ] && echo 0 || echo 1) "--no-wait made nothing"
"$lab" down >"$out/down.log" 2>&1
rc=$?
check $([ $rc = 2 ] && ip netns list | grep -q bwsslab-r && echo 0 || echo 1) \
  "down refuses another owner's topology and leaves it standing (exit $rc)"
wait "${pids[@]}"
pids=()
for r in first second; do
  sed "s/^/# $r: /" "$out/$r.log"
done
check $([ "$(cat "$out/first.rc")" = 0 ] && [ "$(cat "$out/second.rc")" = 0 ] && echo 0 || echo 1) \
  "both runs complete (exit $(cat "$out/first.rc") and $(cat "$out/second.rc"))"
check $(grep -q 'in use by pid [0-9]* (bwss-lab run streaming --label first.*waiting' "$out/second.log" \
  && echo 0 || echo 1) "the second waited, naming the first"
/usr/bin/python3 - "$out" "$n" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
good = True
def check(cond, msg):
    global n, good
    n += 1
    good &= bool(cond)
    print(("ok %d - " if cond else "not ok %d - ") % n + msg)
s = {}
for r in ("first", "second"):
    try:
        s[r] = json.load(open(os.path.join(root, r, "tcp", "summary.json")))
    except (OSError, ValueError) as e:
        s[r] = {"valid": False, "invalid_reasons": [str(e)], "host": {}}
    check(s[r].get("valid") is True, "%s run valid (%s)" % (r, "; ".join(s[r].get("invalid_reasons", []))))
h1, h2 = s["first"]["host"], s["second"]["host"]
check(h1.get("ended_unix", 1e99) <= h2.get("started_unix", 0),
      "one after the other: the first ended at %s, the second started at %s"
      % (h1.get("ended_unix"), h2.get("started_unix")))
print("1..%d" % n)
sys.exit(0 if good else 1)
PY
[ $? = 0 ] && [ $good = 1 ]

# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests that watch adopted flows through bwss-top
# (test-bwssd.sh through bwssd-common.sh, test-sockd.sh); each defines
# flow_of PID (the flow as "origin weight window controlled controller")
# as bwss-top --json piped to flow_line, run as the user it watches.

now_ms () { date +%s%3N; }

# Reads bwss-top --json on stdin; prints the flow of pid @1 as "origin
# weight window controlled controller" (the origin's spaces as _; the
# controller is bwssd's pid), or nothing — also when bwss-top printed
# nothing (no bwssd runs: its exit 1, "no domain yet").
flow_line () {
  python3 -c '
import json, sys
t = sys.stdin.read()
if not t:
    sys.exit(0)
d = json.loads(t)
for f in d["flows"]:
    if f["pid"] == int(sys.argv[1]):
        print(f["origin"].replace(" ", "_"), f["weight"], f["window_bytes"], f["controlled"], d["controller_pid"])
' "$1"
}

# How long a test waits for what the product does at once or at its next
# scan (an adoption, a restart's re-adoption) before it calls it "never":
# 10 s, far above the promise (a scan a second, docs/adopt.md), because a
# busy or stolen-from machine delays any of the processes by seconds, and
# how fast is for a benchmark to measure (tests/bench/), not for a
# functional test to fail on.  The tests print the time each took.
patience_ms=10000
# Fail-open: a flow bwssd adopted is given its clamp back within 2 s of
# bwssd's death (docs/adopt.md, "Fail-open") — the product's own promise,
# so the tests keep a bound: twice the promise, as the watchdog and the
# test's own reads share the machine with whatever else runs.  They print
# the time it took against the promise.
failopen_promise_ms=2000
failopen_bound_ms=$((2 * failopen_promise_ms))

# Waits until flow_of @1 matches the regex @2, at most @3 ms; prints the ms
# it took.
wait_flow () {
  local t0 deadline
  t0=$(now_ms); deadline=$((t0 + $3))
  while [ "$(now_ms)" -lt $deadline ]; do
    if flow_of "$1" | grep -Eq "$2"; then echo $(($(now_ms) - t0)); return 0; fi
    sleep 0.05
  done
  return 1
}

# The window bwss-top shows for the flow of @1 (pid) and the clamp on the
# socket itself, read by the command @2... (prints the clamp): "CLAMP
# WINDOW", taken while the window held still across the clamp's read — the
# controller may move it between two reads (a test that compared one read
# of each failed once, 130966 against 65483).  Needs flow_of.  Returns 1
# (and prints the last pair) if the window never held still in 2 s.
stable_clamp () {
  local pid=$1 w1 w2 c; shift
  for _ in $(seq 40); do
    w1=$(flow_of "$pid" | cut -d" " -f3)
    c=$("$@")
    w2=$(flow_of "$pid" | cut -d" " -f3)
    if [ -n "$w1" ] && [ "$w1" = "$w2" ]; then echo "$c $w1"; return 0; fi
    sleep 0.05
  done
  echo "$c ${w1:-none}"
  return 1
}

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A burst of flows on a loaded machine: a program under bwss-run opens
# $BURST_CONNECTIONS (3000) loopback connections at once and reads them, so
# the preload shim hands them all to bwssd in one burst, while the test
# keeps every CPU busy and bwssd gets no CPU at all from the burst's start
# until after the program's last read (SIGSTOP, then SIGCONT a second later:
# longer than any wait the client could afford).  bwssd reads nothing of
# the burst meanwhile; the client must hold its hand-overs back and send
# them as bwssd reads, not give up the connection.  Afterwards bwssd holds
# every one of the flows, the program is still on the connection it had
# before the burst (the same socket: never dropped and made again), and once
# the program has closed them and exited no flow is left.  (TAP.)
# The wait for bwssd to catch up is $burst_patience_ms: how fast it does is
# the benchmark bwssd-memory's to show (tests/bench/), not this test's.
# $1 bwssd, $2 bwss-top, $3 bwss-run, $4 burst.py
set -u
bwssd=$1 top=$2 run=$3 burst=$4
conns=${BURST_CONNECTIONS:-3000}
. "$(dirname "$0")/bwssd-common.sh" burst
# far above what bwssd needs for a few thousand hand-overs on a loaded
# machine (seconds), so that only a flow never handed over fails
burst_patience_ms=120000

# the flows of pid @1 bwss-top lists; nothing if it did not answer (bwssd busy)
flows_of () { "$top" --once --json 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for f in json.load(sys.stdin)["flows"] if f["pid"] == int(sys.argv[1])))' "$1" 2>/dev/null; }
# waits until file @1 has a line starting with @2, at most @3 ms
wait_line () {
  local deadline=$(($(now_ms) + $3))
  while [ "$(now_ms)" -lt $deadline ]; do
    grep -q "^$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

ulimit -n $((2 * conns + 256)) 2>/dev/null || { echo "Bail out! cannot open $((2 * conns)) files (ulimit -n)"; exit 1; }
# adopts nothing: the only flows are those the program hands over
printf '[default]\nadopt=false\n' >"$tmp/rules.conf"
"$bwssd" --foreground --rules "$tmp/rules.conf" --adopt-helper="$tmp/no-helper.sock" 2>"$tmp/bwssd.log" &
d=$!; pids="$pids $d"
for _ in $(seq $((patience_ms / 50))); do "$top" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && break; sleep 0.05; done

# the load: a busy process per CPU, from before the burst until bwssd has caught up
hogs=
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  hogs="$hogs $!"
done
pids="$pids $hogs"

"$run" -- python3 "$burst" "$conns" "$tmp/go" "$tmp/done" >"$tmp/burst.out" 2>"$tmp/burst.err" &
b=$!; pids="$pids $b"
wait_line "$tmp/burst.out" connected "$burst_patience_ms" || {
  echo "Bail out! the program did not connect: $(cat "$tmp/burst.err")"; exit 1; }
read -r _ prog conn0 <<<"$(grep ^connected "$tmp/burst.out")"
check "the program has one connection to bwssd before the burst ($conn0)" '[[ "$conn0" =~ ^[0-9]+$ ]]'

kill -STOP $d
touch "$tmp/go"
wait_line "$tmp/burst.out" read "$burst_patience_ms"; read_rc=$?
sleep 1
kill -CONT $d
check "the program read its $conns connections while bwssd was stopped" '[ $read_rc -eq 0 ]'

t0=$(now_ms) held=0
while [ $(($(now_ms) - t0)) -lt $burst_patience_ms ]; do
  held=$(flows_of "$prog")
  [ "${held:-0}" -ge "$conns" ] && break
  sleep 0.5
done
check "bwssd holds every flow of the burst: ${held:-none} of $conns ($(($(now_ms) - t0)) ms after it ran again)" \
  '[ "${held:-0}" -eq "$conns" ]'
kill $hogs 2>/dev/null

touch "$tmp/done"
wait_line "$tmp/burst.out" still "$burst_patience_ms"
read -r _ conn1 <<<"$(grep ^still "$tmp/burst.out")"
check "the program is still on the connection it had before the burst ($conn0, now ${conn1:-none})" \
  '[ -n "${conn1:-}" ] && [ "$conn1" = "$conn0" ]'
wait $b; rc=$?
check "the program exits 0 ($(cat "$tmp/burst.err"))" '[ $rc -eq 0 ]'
for _ in $(seq $((patience_ms / 100))); do [ "$(flows_of "$prog")" = 0 ] && break; sleep 0.1; done
left=$(flows_of "$prog")
check "no flow left once the program is gone (${left:-none})" '[ "${left:-x}" = 0 ]'
kill -0 $d 2>/dev/null; alive=$?
check "bwssd still runs" '[ $alive -eq 0 ]'
kill -TERM $d; wait $d; rc=$?
check "bwssd exits 0 on SIGTERM" '[ $rc -eq 0 ]'
echo "1..$n"
[ $failed -eq 0 ]

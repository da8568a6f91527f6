#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-wakeups — how often bwssd wakes up: idle (its domain has no flow),
# with one download it adopted (and with sharing suspended, bwss-top
# --suspend), with one download whose sender writes every 20 ms (the
# kernel's receiver RTT of a loopback flow then reads about 20 ms: the
# rounds of a 20-ms path), and with one connection at rest (adopted
# after its first megabyte, then silent and kept open, as a browser keeps
# one after a page).  A benchmark, not a test.
#
#   bench-wakeups.sh BWSSD BWSS-TOP [SECONDS] [RUNS]   (defaults: 60 s, 3 runs)
#
# A wakeup is a voluntary context switch (/proc/PID/status,
# voluntary_ctxt_switches): the process slept and something woke it.  Counted
# for the main thread (what /proc/PID/status shows) and for all of bwssd's
# threads together (/proc/PID/task/*/status), over SECONDS, RUNS times each;
# prints one Markdown row per state with every run and the median.  bwssd
# runs in a domain of its own with a rules file that adopts only the
# benchmark's connections (remote-port), so the user's other flows are left
# alone; the download is curl at 2 Mbyte/s from a local python3 http.server;
# the 20-ms one is python3's, from a server that writes 40 000 bytes every
# 20 ms (2 Mbyte/s); the connection at rest is python3's, to a server that
# sends it 1 MB and then nothing.
set -u
bwssd=$1 top=$2 secs=${3:-60} runs=${4:-3}
domain="bwss-wakeups-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT

# voluntary context switches of the main thread, and of every thread
switches () {
  local main all=0 n
  main=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status")
  for t in /proc/"$1"/task/*/status; do
    n=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t" 2>/dev/null) && all=$((all + ${n:-0}))
  done
  echo "$main $all"
}

# measures @1 runs of $secs s; prints "main-rates all-rates" per run, one a line
measure () {
  local a b
  for _ in $(seq "$runs"); do
    a=$(switches "$bwssd_pid")
    sleep "$secs"
    b=$(switches "$bwssd_pid")
    set -- $a $b
    awk -v s="$secs" -v m0="$1" -v a0="$2" -v m1="$3" -v a1="$4" \
      'BEGIN { printf "%.2f %.2f\n", (m1 - m0) / s, (a1 - a0) / s }'
  done
}

# a Markdown row: state, runs (main thread), median, runs (all threads), median
row () {
  local state=$1
  shift
  python3 - "$state" "$@" <<'PY'
import statistics, sys
state, rest = sys.argv[1], sys.argv[2:]
main = [float(x) for x in rest[0::2]]
alls = [float(x) for x in rest[1::2]]
f = lambda v: " / ".join("%.2f" % x for x in v)
print("| %s | %s | **%.2f** | %s | **%.2f** |" % (state, f(main), statistics.median(main), f(alls), statistics.median(alls)))
PY
}

free_port () { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port) rest_port=$(free_port) paced_port=$(free_port)
cat >"$tmp/rules.conf" <<RULES
[bench]
remote-port=$port

[paced]
remote-port=$paced_port

[rest]
remote-port=$rest_port

[default]
adopt=false
RULES
"$bwssd" --foreground --rules "$tmp/rules.conf" 2>"$tmp/bwssd.log" &
bwssd_pid=$!
pids="$pids $bwssd_pid"
sleep 3                                  # started, settled
idle=$(measure)

truncate -s 8G "$tmp/big.bin"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
pids="$pids $!"
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
curl -s --limit-rate 2M -o /dev/null "http://127.0.0.1:$port/big.bin" &
pids="$pids $!"
# adopted and controlled, as bwss-top reads the domain
controlled () {
  "$top" --once --json 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for f in json.load(sys.stdin)["flows"] if f["controlled"]))'
}
for _ in $(seq 100); do [ "$(controlled)" = 1 ] && break; sleep 0.1; done
[ "$(controlled)" = 1 ] || { echo "bench-wakeups: the download was not adopted" >&2; exit 1; }
sleep 2
busy=$(measure)
"$top" --suspend >/dev/null || { echo "bench-wakeups: bwss-top --suspend failed" >&2; exit 1; }
sleep 1
suspended=$(measure)
"$top" --resume >/dev/null || { echo "bench-wakeups: bwss-top --resume failed" >&2; exit 1; }
kill $!                                  # the download ends
for _ in $(seq 100); do [ "$(controlled)" = 0 ] && break; sleep 0.1; done

python3 - "$paced_port" <<'PY' &
import socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
due = time.monotonic()
while True:
    c.sendall(b"x" * 40000)
    due += 0.02
    time.sleep(max(0.0, due - time.monotonic()))
PY
paced_server=$!
pids="$pids $paced_server"
sleep 0.5
python3 - "$paced_port" <<'PY' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
while s.recv(65536):
    pass
PY
paced_client=$!
pids="$pids $paced_client"
for _ in $(seq 100); do [ "$(controlled)" = 1 ] && break; sleep 0.1; done
[ "$(controlled)" = 1 ] || { echo "bench-wakeups: the 20-ms download was not adopted" >&2; exit 1; }
sleep 2
paced=$(measure)
"$top" --once --json 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["flows"]:
    print("bench-wakeups: the 20-ms download: rtt %s us" % f.get("rtt_us"), file=sys.stderr)'
kill $paced_client $paced_server
for _ in $(seq 100); do [ "$(controlled)" = 0 ] && break; sleep 0.1; done

python3 - "$rest_port" <<'PY' &
import socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
c.sendall(b"x" * 1000000)
time.sleep(100000)
PY
pids="$pids $!"
sleep 0.5
python3 - "$rest_port" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
got = 0
while got < 1000000:
    got += len(s.recv(65536))
time.sleep(100000)
PY
pids="$pids $!"
for _ in $(seq 100); do [ "$(controlled)" = 1 ] && break; sleep 0.1; done
[ "$(controlled)" = 1 ] || { echo "bench-wakeups: the connection at rest was not adopted" >&2; exit 1; }
sleep 3                                  # a second without a byte: at rest; its gap grown
rest=$(measure)

echo "| bwssd | wakeups/s, main thread (runs) | median | wakeups/s, all threads (runs) | median |"
echo "|---|---|---|---|---|"
row "idle (no flow)" $idle
row "one download" $busy
row "one download, sharing suspended" $suspended
row "one download, its sender writing every 20 ms" $paced
row "one connection at rest" $rest

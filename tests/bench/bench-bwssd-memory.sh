#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-bwssd-memory — what bwssd's memory does when the host's TCP sockets
# come and go: bwssd's adopter reads every TCP socket of the host (a
# sock_diag dump, four times a second) and keeps the last two dumps, so a
# burst of sockets anywhere on the host, not only the user's, passes
# through its arrays.  A benchmark, not a test.
#
#   bench-bwssd-memory.sh BWSSD BWSS-TOP [CONNECTIONS] [BURSTS]
#                                              (defaults: 3000 connections, 3 bursts)
#
# bwssd runs in a domain of its own with a rules file that adopts nothing
# (`[default] adopt=false`: it scans, and leaves every flow alone).  Each
# burst is CONNECTIONS loopback connections (twice as many sockets) made by
# python3, held 4 s, then reset (SO_LINGER 0: nothing left in FIN_WAIT or
# TIME_WAIT).  Prints one Markdown row a burst: bwssd's anonymous RSS
# (RssAnon: its heap and stacks) and VmRSS, in kB, before the burst, while
# the sockets are there, and 3 s after they are gone (/proc/PID/status).
set -u
bwssd=$1 top=$2 conns=${3:-3000} bursts=${4:-3}
domain="bwss-memory-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT

# "RssAnon VmRSS" of pid $1, kB
mem () { awk '/^RssAnon/ { a = $2 } /^VmRSS/ { r = $2 } END { print a, r }' "/proc/$1/status"; }

printf '[default]\nadopt=false\n' >"$tmp/rules.conf"
# no helper listens at that path: bwssd takes nothing, and asks no bwss-sockd
"$bwssd" --foreground --rules "$tmp/rules.conf" --adopt-helper="$tmp/no-helper.sock" \
  >"$tmp/bwssd.log" 2>&1 &
bwssd_pid=$!
pids="$pids $bwssd_pid"
sleep 3
kill -0 "$bwssd_pid" 2>/dev/null || { echo "bwssd did not start:" >&2; cat "$tmp/bwssd.log" >&2; exit 2; }

cat >"$tmp/burst.py" <<'PY'
import socket, sys, time
n, hold = int(sys.argv[1]), float(sys.argv[2])
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4096)
port = ls.getsockname()[1]
socks = []
for _ in range(n):
    socks.append(socket.create_connection(("127.0.0.1", port)))
    socks.append(ls.accept()[0])
print("open", flush=True)
time.sleep(hold)
for s in socks:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    s.close()
PY
ulimit -n $((2 * conns + 64)) 2>/dev/null || { echo "cannot open $((2 * conns)) files (ulimit -n)" >&2; exit 2; }

echo "| burst | sockets | RssAnon before | during | 3 s after | VmRSS before | during | 3 s after |"
echo "|---|---|---|---|---|---|---|---|"
for b in $(seq "$bursts"); do
  before=$(mem "$bwssd_pid")
  python3 "$tmp/burst.py" "$conns" 4 >"$tmp/burst.out" &
  burst=$!
  for _ in $(seq 100); do grep -q open "$tmp/burst.out" && break; sleep 0.1; done
  sleep 2                                # a few scans with the sockets there
  during=$(mem "$bwssd_pid")
  wait "$burst"
  sleep 3
  after=$(mem "$bwssd_pid")
  set -- $before $during $after
  echo "| $b | $((2 * conns)) | $1 | $3 | $5 | $2 | $4 | $6 |"
done

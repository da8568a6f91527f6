#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-bwssd-memory — what bwssd's memory does when sockets and flows come
# and go.  bwssd's adopter reads every TCP socket of the host (a sock_diag
# dump, four times a second) and keeps the last two dumps, so a burst of
# sockets anywhere on the host, not only the user's, passes through its
# arrays; a burst of the user's flows passes through its controller.  A
# benchmark, not a test.
#
#   bench-bwssd-memory.sh BWSSD BWSS-TOP BWSS-RUN [CONNECTIONS] [BURSTS]
#                                              (defaults: 3000 connections, 3 bursts)
#
# bwssd runs in a domain of its own with a rules file that adopts nothing
# (`[default] adopt=false`: it scans, and leaves every flow alone).  Each
# burst is CONNECTIONS loopback connections (twice as many sockets) made by
# python3, each sent 2000 bytes that its client reads, held until bwssd's
# memory is read, then reset (SO_LINGER 0: nothing left in FIN_WAIT or
# TIME_WAIT): first BURSTS of them
# as plain sockets of the host, then BURSTS under BWSS-RUN, where the
# preload shim hands each connection to bwssd as a flow at its first read
# (bwssd's memory read once bwss-top lists them all, or after 60 s).
# Prints one Markdown row a burst: bwssd's anonymous RSS (RssAnon: its heap
# and stacks) and VmRSS, in kB, before the burst, while the sockets (and
# the flows bwssd holds then) are there, and 3 s after they are gone
# (/proc/PID/status).
set -u
bwssd=$1 top=$2 run=$3 conns=${4:-3000} bursts=${5:-3}
domain="bwss-memory-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT

# "RssAnon VmRSS" of pid $1, kB
mem () { awk '/^RssAnon/ { a = $2 } /^VmRSS/ { r = $2 } END { print a, r }' "/proc/$1/status"; }
# the flows bwssd holds
flows () { "$top" --once --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["flows"]))'; }

printf '[default]\nadopt=false\n' >"$tmp/rules.conf"
# no helper listens at that path: bwssd takes nothing, and asks no bwss-sockd
"$bwssd" --foreground --rules "$tmp/rules.conf" --adopt-helper="$tmp/no-helper.sock" \
  >"$tmp/bwssd.log" 2>&1 &
bwssd_pid=$!
pids="$pids $bwssd_pid"
sleep 3
kill -0 "$bwssd_pid" 2>/dev/null || { echo "bwssd did not start:" >&2; cat "$tmp/bwssd.log" >&2; exit 2; }

cat >"$tmp/burst.py" <<'PY'
import os, select, socket, sys
n, done = int(sys.argv[1]), sys.argv[2]
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4096)
port = ls.getsockname()[1]
socks = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    s = ls.accept()[0]
    s.sendall(b"x" * 2000)
    got = 0
    while got < 2000:
        got += len(c.recv(65536))
    socks += [c, s]
print("open", flush=True)
for _ in range(1200):                    # until told, 120 s at most, at rest in select()
    if os.path.exists(done):             # as an event loop is (under bwss-run the shim's
        break                            # hooks send what bwssd has not read yet)
    select.select([], [], [], 0.1)
for s in socks:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    s.close()
PY
ulimit -n $((2 * conns + 64)) 2>/dev/null || { echo "cannot open $((2 * conns)) files (ulimit -n)" >&2; exit 2; }

echo "| burst | sockets | RssAnon before | during | 3 s after | VmRSS before | during | 3 s after |"
echo "|---|---|---|---|---|---|---|---|"
for b in $(seq $((2 * bursts))); do
  under=
  what="$((2 * conns)) of the host"
  if [ "$b" -gt "$bursts" ]; then
    under="$run --"
    what="$((2 * conns)), flows"
  fi
  before=$(mem "$bwssd_pid")
  rm -f "$tmp/burst.out" "$tmp/done"     # the last burst's "open" is not this one's
  $under python3 "$tmp/burst.py" "$conns" "$tmp/done" >"$tmp/burst.out" 2>"$tmp/burst.err" &
  burst=$!
  for _ in $(seq 600); do grep -q open "$tmp/burst.out" && break; sleep 0.1; done   # up to 60 s
  if [ -n "$under" ]; then               # until bwssd holds every flow (the shim's
    for _ in $(seq 600); do              # registrations lag its reads), up to 60 s
      [ "$(flows)" -ge "$conns" ] && break
      sleep 0.1
    done
  fi
  sleep 2                                # a few scans with the sockets there
  during=$(mem "$bwssd_pid")
  held=$(flows)
  touch "$tmp/done"
  wait "$burst" 2>/dev/null              # (its status may be gone: the polls made many children)
  [ -s "$tmp/burst.err" ] && { echo "the burst failed:" >&2; cat "$tmp/burst.err" >&2; exit 2; }
  sleep 3
  after=$(mem "$bwssd_pid")
  set -- $before $during $after
  [ -n "$under" ] && what="$what $held"
  echo "| $b | $what | $1 | $3 | $5 | $2 | $4 | $6 |"
done

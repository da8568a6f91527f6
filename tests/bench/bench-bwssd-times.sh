#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-bwssd-times — how soon bwssd acts, the times the functional tests
# (test-bwssd.sh, test-sockd.sh, test-bwssd-deaths.sh) only print: a
# benchmark, not a test.
#
#   bench-bwssd-times.sh BWSSD BWSS-TOP SOCK-CLAMP [RUNS]   (default: 5 runs)
#
# Each run: bwssd idles (no flow in its domain) for 2 s, then
#   adopt    a plain curl download starts: ms until bwss-top lists it
#            controlled (docs/adopt.md: at the next scan, within 1.5 s);
#   failopen kill -9 of bwssd: ms until the clamp on curl's own socket is no
#            longer bwssd's window (read through pidfd_getfd; the promise:
#            within 2 s);
#   readopt  a new bwssd: ms until it lists the download controlled again.
# Each is polled every 20 ms by starting a program (bwss-top, python3), which
# takes some 10-30 ms itself: a resolution of a few tens of ms.  Prints one
# Markdown row per measure, every run and the median.  bwssd runs in a domain
# of its own with rules that adopt only the benchmark's download
# (remote-port); curl reads 1 Mbyte/s from a local python3 http.server.
set -u
bwssd=$1 top=$2 clamp=$3 runs=${4:-5}
domain="bwss-times-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
pids=
trap 'kill -9 $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT
now_ms () { date +%s%3N; }
LIMIT_MS=30000                # a measure that takes longer is reported as "never"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf '[bench]\nremote-port=%s\n\n[default]\nadopt=false\n' "$port" >"$tmp/rules.conf"
truncate -s 8G "$tmp/big.bin"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
pids="$pids $!"
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

controlled () {   # whether bwss-top lists pid @1 controlled
  "$top" --once --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any(f["pid"] == int(sys.argv[1]) and f["controlled"] for f in json.load(sys.stdin)["flows"]) else 1)' "$1"
}
# ms until the command @2... succeeds, polled every 20 ms from t0 @1; "never" past LIMIT_MS
until_ms () {
  local t0=$1; shift
  while [ $(($(now_ms) - t0)) -lt $LIMIT_MS ]; do
    "$@" && { echo $(($(now_ms) - t0)); return 0; }
    sleep 0.02
  done
  echo never
}
start_bwssd () {
  "$bwssd" --foreground --rules "$tmp/rules.conf" 2>>"$tmp/bwssd.log" &
  bwssd_pid=$!; pids="$pids $bwssd_pid"
  for _ in $(seq 200); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && return 0; sleep 0.05; done
  echo "bench-bwssd-times: bwssd wrote no status" >&2; exit 1
}
clamp_moved () { [ "$(python3 "$clamp" "$dl" "$port" 2>/dev/null)" != "$win" ]; }

adopt=() failopen=() readopt=()
for _ in $(seq "$runs"); do
  start_bwssd
  sleep 2                                   # idle: the scan once a second
  t0=$(now_ms)
  curl -s --limit-rate 1M -o /dev/null "http://127.0.0.1:$port/big.bin" &
  dl=$!; pids="$pids $dl"
  adopt+=("$(until_ms "$t0" controlled "$dl")")
  sleep 1
  win=$(python3 "$clamp" "$dl" "$port")
  kill -9 "$bwssd_pid"
  t0=$(now_ms)
  failopen+=("$(until_ms "$t0" clamp_moved)")
  wait "$bwssd_pid" 2>/dev/null
  sleep 0.5                                 # its watchdog exits too
  t0=$(now_ms)
  start_bwssd
  readopt+=("$(until_ms "$t0" controlled "$dl")")
  kill -9 "$dl"; wait "$dl" 2>/dev/null
  kill -TERM "$bwssd_pid"; wait "$bwssd_pid" 2>/dev/null
done

row () {
  python3 - "$@" <<'PY'
import statistics, sys
what, runs = sys.argv[1], sys.argv[2:]
ms = [float(x) for x in runs if x != "never"]
med = "%.0f" % statistics.median(ms) if len(ms) == len(runs) else "never in %d of %d" % (len(runs) - len(ms), len(runs))
print("| %s | %s | **%s** |" % (what, " / ".join(runs), med))
PY
}
echo "| bwssd, ms | runs | median |"
echo "|---|---|---|"
row "adopts a download started while it idles" "${adopt[@]}"
row "kill -9: the clamp given back" "${failopen[@]}"
row "a new bwssd adopts the download again" "${readopt[@]}"

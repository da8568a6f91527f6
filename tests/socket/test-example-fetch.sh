#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/bwss-fetch, an application's own download under bwss through
# libbwss's public API, against a local server (slow-server.py: 1.2 MB in
# 40 kB steps, about 1.5 s).  Passes if it says it registered the flow with
# the preferences given, bwss-top lists that flow in the domain while it
# downloads (its command, priority, minimum and weight), it prints the
# flow's statistics, writes the whole body intact, ends with "end of
# download" and exits 0; and if it refuses a minimum that is not a rate
# (exit 2) before connecting anything.
#   test-example-fetch.sh BWSS-FETCH BWSS-TOP SLOW-SERVER
set -eu
fetch=$1 top=$2 server=$3
tmp=$(mktemp -d)
srv=
cleanup() {
  [ -z "$srv" ] || kill "$srv" 2>/dev/null || true
  rm -rf "$tmp"
  rundir=$("$top" --paths 2>/dev/null | awk '$1 == "runtime-dir" { print $2 }') || true
  [ -z "${rundir:-}" ] || rm -f "$rundir/$BWSS_DOMAIN" "$rundir/$BWSS_DOMAIN".*
}
trap cleanup EXIT
export BWSS_DOMAIN="bwss-test-fetch-$$"   # a domain of its own, not the user's
echo "1..1"

size=1200000
python3 "$server" "$size" 40000 0.05 > "$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
[ -n "$port" ] || { echo "not ok 1 - the server did not start"; exit 1; }
fail() { echo "# $*"; sed 's/^/# /' "$tmp/out" "$tmp/err" 2>/dev/null; echo "not ok 1 - example-fetch"; exit 1; }

timeout 60 "$fetch" --priority=20 --min-rate=2M --weight=3 --stats-interval=200 \
  --output="$tmp/body" "http://127.0.0.1:$port/file" > "$tmp/out" 2> "$tmp/err" &
pid=$!
seen=
for _ in $(seq 100); do
  "$top" --once --json > "$tmp/top.json" 2>/dev/null || true
  if python3 - "$tmp/top.json" <<'PY'
import json, sys
try:
    flows = json.load(open(sys.argv[1]))["flows"]
except (ValueError, KeyError, OSError):
    sys.exit(1)
ok = [f for f in flows if f["command"] == "bwss-fetch" and f["priority"] == 20
      and f["min_rate_bps"] == 2e6 and f["weight"] == 3]
sys.exit(0 if ok else 1)
PY
  then seen=1; break; fi
  sleep 0.05
done
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "bwss-fetch exited $rc"
[ -n "$seen" ] || fail "bwss-top never listed the flow with its preferences"
grep -qx 'registered: priority 20 weight 3 min-rate 2000000 bit/s' "$tmp/out" \
  || fail "no registered line with the preferences"
grep -Eq '^bwss-stats: [0-9]+ B .* min 2000 kbit/s .* (registered|controlled)$' "$tmp/out" \
  || fail "no bwss-stats line with the flow's minimum"
last=$(grep '^bwss-stats:' "$tmp/out" | tail -n 1 | awk '{ print $2 }')
[ "$last" -ge "$size" ] || fail "the last statistics count $last bytes received, fewer than the body's $size"
tail -n 1 "$tmp/out" | grep -qx "end of download: $size bytes" || fail "no end of download"
python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); sys.exit(d != bytes(i % 251 for i in range($size)))" \
  "$tmp/body" || fail "the body written is not the one served"
[ ! -s "$tmp/err" ] || fail "bwss-fetch wrote to stderr"

# bad input: a clear error, exit 2, nothing fetched
rc=0
"$fetch" --min-rate=5Q "http://127.0.0.1:$port/file" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "is not a rate" "$tmp/err" && [ ! -s "$tmp/out" ] \
  || fail "--min-rate=5Q: exit $rc"
echo "ok 1 - example-fetch"

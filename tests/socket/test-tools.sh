#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwss-run and bwss-top on the command line: bad options give one line naming
# the option, exit status 2 and start nothing; good ones run the command and
# pass its status through; a run shows up in bwss-top --json.  (TAP output.)
set -u
run=$1 top=$2
export BWSS_DOMAIN="bwss-test-tools-$$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "/dev/shm/$BWSS_DOMAIN"' EXIT
n=0 failed=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

bad_option () {   # $1 = option text expected in the message, rest = args
  local needle=$1; shift
  rm -f "$tmp/started"
  "$run" "$@" -- touch "$tmp/started" 2>"$tmp/err" >/dev/null
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$needle" "$tmp/err" && [ ! -e "$tmp/started" ]; then
    ok "bwss-run $* -> exit 2: $(cat "$tmp/err")"
  else
    not_ok "bwss-run $*: rc=$rc lines=$lines started=$([ -e "$tmp/started" ] && echo yes || echo no) err=$(cat "$tmp/err")"
  fi
}

bad_option "--min-rate" --min-rate fast
bad_option "--min-rate" --min-rate -5k
bad_option "--min-rate" --min-rate 5kk
bad_option "--weight" --weight -1
bad_option "--weight" --weight nan
bad_option "--weight" --weight 2x
bad_option "--priority" --priority high
bad_option "--bogus" --bogus 1

"$run" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "COMMAND" "$tmp/err" && ok "no command -> exit 2" || not_ok "no command: rc=$rc"

"$run" --weight 2 --min-rate 2.5M --priority 3 -- true; rc=$?
[ $rc -eq 0 ] && ok "bwss-run -- true -> 0" || not_ok "bwss-run -- true -> $rc"
"$run" -- sh -c 'exit 7'; rc=$?
[ $rc -eq 7 ] && ok "exit status passed through" || not_ok "exit status: $rc"
"$run" -- /nonexistent/program 2>"$tmp/err"; rc=$?
[ $rc -eq 127 ] && grep -q "/nonexistent/program" "$tmp/err" && ok "missing command -> 127" || not_ok "missing command: $rc"
"$run" -- sh -c 'kill -TERM $$'; rc=$?
[ $rc -eq 143 ] && ok "killed command -> 128+15" || not_ok "killed command: $rc"

# the environment reaches the command; the preload shim is in front
"$run" --weight 2 --min-rate 500k --priority 4 -- sh -c 'echo "$BWSS_PRIORITY $BWSS_MIN_RATE $BWSS_WEIGHT $LD_PRELOAD"' >"$tmp/env"
read -r pr mr w pre <"$tmp/env"
[ "$pr" = 4 ] && [ "$mr" = 500000 ] && [ "$w" = 2 ] && [[ "$pre" == *libbwss-preload.so* ]] \
  && ok "preferences and shim in the environment" || not_ok "environment: $(cat "$tmp/env")"

# many participants creating the same fresh domain at once: all get in
fails=0
for i in $(seq 20); do ( BWSS_DOMAIN="bwss-test-race-$$" "$run" -- true ) & done
for job in $(jobs -p); do wait "$job" || fails=$((fails + 1)); done
rm -f "/dev/shm/bwss-test-race-$$"
[ $fails -eq 0 ] && ok "20 concurrent bwss-run on a fresh domain all start" || not_ok "concurrent creation: $fails failed"

# bwss-top
"$top" --interval 0 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--interval" "$tmp/err" && ok "bwss-top --interval 0 -> 2" || not_ok "bwss-top interval: $rc"
BWSS_DOMAIN="bwss-test-none-$$" "$top" --once 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no domain" "$tmp/err" && ok "bwss-top without a domain -> 1" || not_ok "bwss-top no domain: $rc"

# a flow under bwss-run shows up in bwss-top --json with its preferences
/usr/bin/python3 -c '
import socket, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
c.sendall(b"x" * 1000)
c.recv(1)
' >"$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
"$run" --weight 2 --min-rate 300k -- /usr/bin/python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $port))
s.recv(1000)
time.sleep(2)
" &
client=$!
found=no
for _ in $(seq 15); do
  sleep 0.1
  "$top" --once --json >"$tmp/top.json" 2>/dev/null || continue
  if /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["flows"] if x["weight"] == 2.0 and x["min_rate_bps"] == 300000.0]
sys.exit(0 if f and d["controller_pid"] > 0 else 1)' "$tmp/top.json"; then found=yes; break; fi
done
[ $found = yes ] && ok "bwss-top --json shows the flow with its weight and min rate, and a controller" \
  || not_ok "bwss-top --json: $(cat "$tmp/top.json")"
wait $client; kill $srv 2>/dev/null; wait $srv 2>/dev/null

# --suspend / --resume switch the domain's flag, bwss-top shows it
"$top" --suspend --resume 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--suspend" "$tmp/err" && ok "bwss-top --suspend --resume -> 2" || not_ok "suspend+resume: $rc"
BWSS_DOMAIN="bwss-test-none-$$" "$top" --suspend 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no domain" "$tmp/err" && ok "bwss-top --suspend without a domain -> 1" || not_ok "suspend no domain: $rc"
"$top" --suspend >/dev/null && "$top" --once --json >"$tmp/s.json" && "$top" --resume >/dev/null \
  && "$top" --once --json >"$tmp/r.json" && /usr/bin/python3 -c '
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["suspended"] and not json.load(open(sys.argv[2]))["suspended"] else 1)' "$tmp/s.json" "$tmp/r.json" \
  && ok "bwss-top --suspend / --resume flip the domain's flag" || not_ok "suspend/resume: $(cat "$tmp/s.json" "$tmp/r.json")"

echo "1..$n"
[ $failed -eq 0 ]

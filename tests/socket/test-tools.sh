#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwss-run and bwss-top on the command line: bad options give one line naming
# the option, exit status 2 and start nothing; good ones run the command and
# pass its status through; a run shows up in bwss-top --json.  And the cases
# of issue 11: decimal bounded numbers (also in the shim's environment), bad
# or empty domain names, commands that cannot run start no bwssd, a
# stopped bwssd blocks neither a download nor bwss-top, a killed one is
# started again by the next client, Ctrl-Z on bwss-run.  (TAP output; $3 is
# bwssd, which the first client starts.)
set -u
run=$1 top=$2
export BWSS_BWSSD=$3
# names unique on the machine: two isolated runs (isolated.sh) can share a
# PID; their PID namespaces' inodes tell them apart
uniq="$$-$(stat -L -c %i /proc/self/ns/pid)"
main_domain="bwss-test-tools-$uniq"
export BWSS_DOMAIN=$main_domain
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')   # where the domains are
[ -d "$rundir" ] || { echo "Bail out! bwss-top --paths: no runtime directory"; exit 1; }
tmp=$(mktemp -d)
servers=
trap 'kill $servers 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$main_domain".* "$rundir"/bwss-test-tools-*-$uniq*' EXIT
trap 'exit 143' TERM
. "$(dirname "$0")/tap.sh"

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
# numbers are decimal only and within the limits every front end shares
bad_option "--priority" --priority 0x10
bad_option "--priority" --priority 1e3
bad_option "--priority" --priority 1001
bad_option "--priority" --priority " 5"
bad_option "--weight" --weight 1e3
bad_option "--weight" --weight 0x10
bad_option "--weight" --weight 2000000000
bad_option "--share" --share thread
bad_option "--share" --share ""
bad_option "--min-rate" --min-rate 1e6
# the capacity loop: delay (the default) or the paper's
bad_option "--loop" --loop fast
bad_option "--loop" --loop ""
# a bad domain name exits 2 naming the option and touches no domain
bad_option "--domain" --domain a/b
bad_option "--domain" --domain /x
bad_option "--domain" --domain "bad name"
bad_option "--domain" --domain "$(printf 'x%.0s' $(seq 65))"
bad_option "--domain" --domain .
bad_option "--domain" --domain ..
bad_option "--domain" --domain ""
BWSS_DOMAIN= bad_option "BWSS_DOMAIN" 
BWSS_DOMAIN=a/b bad_option "BWSS_DOMAIN"
for args in "--domain ''" "--domain .." ; do
  eval "\"\$top\" --once $args" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--domain" "$tmp/err" && ok "bwss-top $args -> 2" || not_ok "bwss-top $args: rc=$rc $(cat "$tmp/err")"
done
BWSS_DOMAIN= "$top" --suspend 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "BWSS_DOMAIN" "$tmp/err" && ok "BWSS_DOMAIN= bwss-top --suspend -> 2 (never the user's domain)" \
  || not_ok "BWSS_DOMAIN= bwss-top --suspend: rc=$rc $(cat "$tmp/err")"

# a command that cannot run: 127/126 as a shell, and no bwssd started
fresh="bwss-test-tools-cmd-$uniq"
mkdir "$tmp/dir"; printf '#!/bin/sh\n' >"$tmp/noexec"; chmod 644 "$tmp/noexec"
for c in "/nonexistent/program:127" ":127" "no-such-command-bwss:127" "$tmp/dir:126" "$tmp/noexec:126"; do
  cmd=${c%:*} want=${c##*:}
  BWSS_DOMAIN=$fresh "$run" -- "$cmd" 2>"$tmp/err"; rc=$?
  if [ $rc -eq "$want" ] && [ ! -e "$rundir/$fresh.sock" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
    ok "bwss-run -- '$cmd' -> $rc, no bwssd started"
  else
    not_ok "bwss-run -- '$cmd': rc=$rc (want $want) bwssd=$([ -e "$rundir/$fresh.sock" ] && echo started || echo none) $(cat "$tmp/err")"
  fi
done

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

# the environment reaches the command as given (the shim parses it with the
# same parsers); the preload shim is in front
"$run" --weight 2 --min-rate 500k --priority 4 -- sh -c 'echo "$BWSS_PRIORITY $BWSS_MIN_RATE $BWSS_WEIGHT $LD_PRELOAD"' >"$tmp/env"
read -r pr mr w pre <"$tmp/env"
[ "$pr" = 4 ] && [ "$mr" = 500k ] && [ "$w" = 2 ] && [[ "$pre" == *libbwss-preload.so* ]] \
  && ok "preferences and shim in the environment" || not_ok "environment: $(cat "$tmp/env")"

# many clients starting the same fresh domain's bwssd at once: all get in
fails=0
for i in $(seq 20); do ( BWSS_DOMAIN="bwss-test-race-$uniq" "$run" -- true ) & done
for job in $(jobs -p); do wait "$job" || fails=$((fails + 1)); done
[ $fails -eq 0 ] && ok "20 concurrent bwss-run on a fresh domain all start" || not_ok "concurrent creation: $fails failed"

# bwss-top
"$top" --interval 0 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--interval" "$tmp/err" && ok "bwss-top --interval 0 -> 2" || not_ok "bwss-top interval: $rc"
BWSS_DOMAIN="bwss-test-none-$uniq" "$top" --once 2>"$tmp/err"; rc=$?
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
sys.exit(0 if f and d["controller_pid"] > 0 and d["loop"] == "delay" and "queue_delay_us" in d
         and "queue_target_us" in d and "base_rtt_us" in f[0] and f[0]["share"] == "process"
         and f[0]["group_members"] == 1 and int(f[0]["group"], 16) != 0 else 1)' "$tmp/top.json"; then found=yes; break; fi
done
[ $found = yes ] && ok "bwss-top --json shows the flow with its weight and min rate, its process's group (bwss-run's default), and a controller running the delay loop" \
  || not_ok "bwss-top --json: $(cat "$tmp/top.json")"
wait $client; kill $srv 2>/dev/null; wait $srv 2>/dev/null

# bwss-run --loop paper: the controller it starts runs the paper's loop
paper="bwss-test-tools-paper-$uniq"
BWSS_DOMAIN=$paper "$run" --loop paper -- /usr/bin/python3 -c "import time; time.sleep(1.5)" &
client=$!
found=no
for _ in $(seq 12); do
  sleep 0.1
  BWSS_DOMAIN=$paper "$top" --once --json >"$tmp/paper.json" 2>/dev/null || continue
  /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(0 if d["controller_pid"] > 0 and d["loop"] == "paper" and d["queue_delay_us"] is None else 1)' \
    "$tmp/paper.json" && { found=yes; break; }
done
[ $found = yes ] && ok "bwss-run --loop paper: bwss-top shows the paper's loop" \
  || not_ok "--loop paper: $(cat "$tmp/paper.json")"
wait $client; rm -f "$rundir/$paper"

# --suspend / --resume switch the domain's flag, bwss-top shows it (a
# client keeps its bwssd running)
"$run" -- sleep 30 &
keeper=$!
for _ in $(seq 50); do "$top" --once >/dev/null 2>&1 && break; sleep 0.1; done
"$top" --suspend --resume 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--suspend" "$tmp/err" && ok "bwss-top --suspend --resume -> 2" || not_ok "suspend+resume: $rc"
BWSS_DOMAIN="bwss-test-none-$uniq" "$top" --suspend 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no domain" "$tmp/err" && ok "bwss-top --suspend without a domain -> 1" || not_ok "suspend no domain: $rc"
"$top" --suspend >/dev/null && "$top" --once --json >"$tmp/s.json" && "$top" --resume >/dev/null \
  && "$top" --once --json >"$tmp/r.json" && /usr/bin/python3 -c '
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["suspended"] and not json.load(open(sys.argv[2]))["suspended"] else 1)' "$tmp/s.json" "$tmp/r.json" \
  && ok "bwss-top --suspend / --resume flip the domain's flag" || not_ok "suspend/resume: $(cat "$tmp/s.json" "$tmp/r.json")"
kill $keeper 2>/dev/null; wait $keeper 2>/dev/null

# ---- the preferences a flow really gets, and the shim's own checks ----
# a server that sends $1 bytes to every connection, then waits for the close;
# its port goes to $tmp/port.$1 (call it in this shell, not in $(...), so
# that the server can be stopped at the end)
serve () {
  /usr/bin/python3 -c '
import socket, sys, threading
n = int(sys.argv[1])
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
def one(c):
    try:
        c.sendall(b"x" * n); c.recv(1)
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=one, args=(c,), daemon=True).start()
' "$1" >"$tmp/port.$1" &
  servers="${servers:-} $!"
  for _ in $(seq 50); do [ -s "$tmp/port.$1" ] && break; sleep 0.1; done
}
# a client reading everything from port $1, then sleeping $2 s; prints the count
client_py='
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
n = 0
while True:
    b = s.recv(65536)
    if not b:
        break
    n += len(b)
    if n >= int(sys.argv[3]):
        break
print(n, flush=True)
time.sleep(float(sys.argv[2]))
'
serve 100000; port=$(cat "$tmp/port.100000")
# flows: does bwss-top show one with priority $1 / weight $2?
flow_shown () {
  for _ in $(seq 20); do
    sleep 0.1
    "$top" --once --json >"$tmp/top.json" 2>/dev/null || continue
    /usr/bin/python3 -c '
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
sys.exit(0 if [f for f in d["flows"] if f["priority"] == int(sys.argv[2]) and f["weight"] == float(sys.argv[3])] else 1)' \
      "$tmp/top.json" "$1" "$2" && return 0
  done
  return 1
}
"$run" --priority 010 --weight 0.5 -- /usr/bin/python3 -c "$client_py" "$port" 1.5 100000 >/dev/null &
client=$!
flow_shown 10 0.5 && ok "--priority 010 is priority 10 (decimal), --weight 0.5" \
  || not_ok "--priority 010: $(cat "$tmp/top.json")"
wait $client
# the shim refuses what bwss-run would refuse, naming the variable
for bad in "BWSS_WEIGHT=1e308" "BWSS_PRIORITY=0x10" "BWSS_MIN_RATE=-5"; do
  "$run" -- env "$bad" /usr/bin/python3 -c "$client_py" "$port" 1.5 100000 >"$tmp/count" 2>"$tmp/err" &
  client=$!
  flow_shown 0 1 && joined=yes || joined=no
  [ "$bad" = BWSS_WEIGHT=1e308 ] && { flow_shown 0 1e308 && joined=yes; }
  wait $client; rc=$?
  if [ $rc -eq 0 ] && [ "$(cat "$tmp/count")" = 100000 ] && grep -q "${bad%%=*}=${bad#*=}" "$tmp/err" && [ $joined = no ]; then
    ok "shim with $bad: one message, not joining, data moves"
  else
    not_ok "shim with $bad: rc=$rc joined=$joined count=$(cat "$tmp/count") err=$(cat "$tmp/err")"
  fi
done

# ---- a download's first window (the shim's connect()) ----
# The window each connection's handshake offered, as its server sees it
# before sending a byte (tcp_info: the peer's window and window scale), one
# line per connection in $tmp/syn.  A download under bwss-run offers a few
# kB with the kernel's window scale; a flow with a priority, and a program
# outside bwss-run, offer the kernel's window.  After its first data the
# download's buffer is the kernel's default again, unlocked (autotuning),
# and it moves all its bytes.
/usr/bin/python3 -c '
import socket, struct, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
out = open(sys.argv[1], "a")
def one(c):
    ti = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    out.write("%d %d\n" % (struct.unpack_from("I", ti, 228)[0], ti[6] & 15)); out.flush()
    try:
        c.sendall(b"x" * 4000000); c.recv(1)
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    one(c)
' "$tmp/syn" >"$tmp/port.syn" &
servers="$servers $!"
for _ in $(seq 50); do [ -s "$tmp/port.syn" ] && break; sleep 0.1; done
synport=$(cat "$tmp/port.syn")
# reads everything, then prints: bytes, SO_RCVBUF, SO_BUF_LOCK, its window scale
syn_client='
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
n = 0
while n < 4000000:
    b = s.recv(65536)
    if not b:
        break
    n += len(b)
ti = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
print(n, s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), s.getsockopt(socket.SOL_SOCKET, 72), ti[6] >> 4)
'
/usr/bin/python3 -c 'import socket; print(socket.socket().getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))' >"$tmp/rcvbuf0"
/usr/bin/python3 -c "$syn_client" "$synport" >"$tmp/c.plain"
"$run" -- /usr/bin/python3 -c "$syn_client" "$synport" >"$tmp/c.bulk"
"$run" --priority 10 -- /usr/bin/python3 -c "$syn_client" "$synport" >"$tmp/c.prio"
read -r w_plain s_plain < <(sed -n 1p "$tmp/syn")
read -r w_bulk s_bulk < <(sed -n 2p "$tmp/syn")
read -r w_prio s_prio < <(sed -n 3p "$tmp/syn")
read -r n_bulk buf_bulk lock_bulk ws_bulk <"$tmp/c.bulk"
read -r n_plain _ _ ws_plain <"$tmp/c.plain"
read -r n_prio _ _ _ <"$tmp/c.prio"
buf0=$(cat "$tmp/rcvbuf0")
if [ "${w_bulk:-0}" -gt 0 ] && [ "$w_bulk" -le 8192 ] && [ "${w_plain:-0}" -ge 32768 ] \
   && [ "${s_plain:-0}" -gt 0 ] && [ "$s_bulk" = "$s_plain" ] && [ "$ws_bulk" = "$ws_plain" ]; then
  ok "a download's handshake offers $w_bulk bytes (a program outside bwss-run: $w_plain), window scale $s_bulk kept"
else
  not_ok "first window: download offered '$w_bulk' scale '$s_bulk' (client's '$ws_bulk'); plain '$w_plain' scale '$s_plain' (client's '$ws_plain')"
fi
[ "${w_prio:-0}" = "$w_plain" ] && ok "a flow with a priority offers the kernel's window ($w_prio bytes)" \
  || not_ok "priority flow's first window: '$w_prio' (plain '$w_plain')"
if [ "${n_bulk:-0}" = 4000000 ] && [ "$n_plain" = 4000000 ] && [ "$n_prio" = 4000000 ] \
   && [ "${buf_bulk:-0}" -ge "$buf0" ] && [ $(( lock_bulk & 2 )) -eq 0 ]; then
  ok "after its first data the download's buffer is the kernel's again ($buf_bulk >= $buf0 bytes, unlocked); 4 MB moved on each"
else
  not_ok "after the first data: bytes $n_bulk/$n_plain/$n_prio, buffer '$buf_bulk' (default $buf0), lock '$lock_bulk'"
fi

# ---- $BWSS_TRACE_FIRST: the shim's and bwssd's lines ----
# A download under bwss-run in a fresh domain, the variable set: the shim
# and the bwssd it starts (which inherits it) each append their events to
# the one file, one well-formed line each, "<s.µs> pid <pid> <who>: <event>"
BWSS_DOMAIN="bwss-test-tools-trace-$uniq" BWSS_TRACE_FIRST="$tmp/trace" \
  "$run" -- /usr/bin/python3 -c "$syn_client" "$synport" >"$tmp/c.trace"
read -r n_trace _ <"$tmp/c.trace"
bad_lines=$(grep -cvE '^[0-9]+\.[0-9]{6} pid [0-9]+ (shim|bwssd): [^ ]' "$tmp/trace" 2>/dev/null)
shim_pid=$(sed -n 's/^[0-9.]* pid \([0-9]*\) shim: fd [0-9]* first data, registered: ok$/\1/p' "$tmp/trace" | head -1)
bwssd_pid=$(sed -n 's/^[0-9.]* pid \([0-9]*\) bwssd: admitted flow .*/\1/p' "$tmp/trace" | head -1)
if [ "${n_trace:-0}" = 4000000 ] && [ "${bad_lines:-1}" = 0 ] && [ -n "$shim_pid" ] && [ -n "$bwssd_pid" ] \
   && [ "$shim_pid" != "$bwssd_pid" ]; then
  ok "BWSS_TRACE_FIRST: the shim (pid $shim_pid) and bwssd (pid $bwssd_pid) trace the flow's first data and admission, $(wc -l <"$tmp/trace") well-formed lines"
else
  not_ok "BWSS_TRACE_FIRST: bytes '$n_trace', malformed lines '$bad_lines', shim '$shim_pid', bwssd '$bwssd_pid': $(head -c 600 "$tmp/trace" 2>/dev/null)"
fi

# ---- a stopped bwssd ----
# bwss-top reports it busy (exit 3) instead of hanging, and a new download
# under bwss-run still moves all its data (its flow is the kernel's)
serve 4000000; big=$(cat "$tmp/port.4000000")
"$run" -- sleep 30 &
keeper=$!
daemon=
for _ in $(seq 50); do
  daemon=$("$top" --once --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["controller_pid"] or "")' 2>/dev/null)
  [ -n "$daemon" ] && break; sleep 0.1
done
kill -STOP "$daemon"
timeout -k 5 30 "$top" --once 2>"$tmp/err" >/dev/null; rc=$?
[ $rc -eq 3 ] && grep -q "did not answer" "$tmp/err" && ok "stopped bwssd: bwss-top --once -> 3 (busy)" \
  || not_ok "stopped bwssd: bwss-top rc=$rc $(cat "$tmp/err")"
timeout -k 5 30 "$run" -- /usr/bin/python3 -c "$client_py" "$big" 0 4000000 >"$tmp/count" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/count")" = 4000000 ] && ok "stopped bwssd: a new bwss-run download gets its 4 MB" \
  || not_ok "stopped bwssd: download rc=$rc count=$(cat "$tmp/count") $(cat "$tmp/err")"
kill -CONT "$daemon"

# ---- a killed bwssd: the next client starts another ----
kill -KILL "$daemon"
for _ in $(seq 100); do [ -e "/proc/$daemon" ] || break; sleep 0.02; done
"$run" -- true 2>"$tmp/err"; rc=$?
"$top" --once >/dev/null 2>>"$tmp/err"; rc2=$?
again=$("$top" --once --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["controller_pid"] or "")' 2>/dev/null)
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ -n "$again" ] && [ "$again" != "$daemon" ] \
  && ok "bwssd killed: the next bwss-run starts another ($daemon -> $again), bwss-top works" \
  || not_ok "bwssd killed: bwss-run rc=$rc bwss-top rc=$rc2 bwssd $daemon -> '$again' $(cat "$tmp/err")"
kill $keeper 2>/dev/null; wait $keeper 2>/dev/null

# ---- Ctrl-Z on bwss-run: it leaves the domain and stops its command ----
set -m
fresh="bwss-test-tools-tstp-$uniq"
export BWSS_DOMAIN=$fresh
"$run" -- sleep 30 &
a=$!
controller () {
  "$top" --once --json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["controller_pid"] or "")' 2>/dev/null
}
state_of () { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1; }
first=
for _ in $(seq 50); do first=$(controller); [ -n "$first" ] && break; sleep 0.1; done
kill -TSTP $a
for _ in $(seq 50); do [ "$(state_of $a)" = T ] && break; sleep 0.1; done
sleeper=$(pgrep -P $a sleep)
"$run" -- sleep 30 &
b=$!
sleep 0.5
now=$(controller)
if [ -n "$first" ] && [ "$now" = "$first" ] && [ "$first" != $a ] && [ "$(state_of $a)" = T ] \
   && [ "$(state_of "$sleeper")" = T ] && [ "$(state_of "$now")" != T ]; then
  ok "SIGTSTP: bwss-run stops with its command; bwssd ($now) goes on controlling the domain"
else
  not_ok "SIGTSTP: bwss-run state=$(state_of $a) command=$(state_of "$sleeper") bwssd $first -> $now"
fi
kill -CONT -$a 2>/dev/null
kill -TERM $a $b 2>/dev/null; wait $a $b 2>/dev/null
set +m

kill $servers 2>/dev/null; wait $servers 2>/dev/null
echo "1..$n"
[ $failed -eq 0 ]

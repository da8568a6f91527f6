#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The user's bwssd always wins the domain, with real processes: a download
# under bwss-run, with no bwssd running, has its client start one
# (--autostart); the user's own bwssd started then (as its unit starts it)
# takes the domain over — the autostarted one gives its flows back and
# leaves, the client hands its flow to the new one — and the download goes
# on, never clamped by a dead bwssd:
#   - kill -9 of the autostarted bwssd: the client gives its socket back
#     (the free clamp, below) and starts another;
#   - the user's bwssd started: it takes over (the autostarted one gone, the
#     flow controlled by it, bwss-top says so), the clamp given back in
#     between;
#   - kill -9 of the user's bwssd: given back, the client starts one again,
#     and the user's bwssd started again takes over again;
#   - a second bwssd of the user's own is refused and displaces nothing;
#   - systemd's socket (as bwssd.socket holds it, fd 3 and $LISTEN_FDS)
#     put on the domain's path while an autostarted bwssd holds the domain:
#     the bwssd started on it takes over, the autostarted one leaves the
#     socket's path alone, the client's flow comes to the new bwssd;
#   - an autostarted bwssd stopped (SIGSTOP): the user's bwssd kills it and
#     takes over;
#   - SIGTERM: exit 0, the clamp back; curl ran throughout;
#   - a program whose one call is a poll() with no timeout once its flow is
#     handed over: its bwssd stopped, the shim still gives the socket back
#     within the fail-open promise.
# "Its connect's clamp": the clamp of a socket to the same server read right
# after its connect, under no bwssd (the kernel's own; autotuning may raise
# an unclamped one, never lower it).  (TAP.)  Times: $patience_ms and the
# fail-open bound $failopen_bound_ms (flow-watch.sh).
# $1 bwssd, $2 bwss-top, $3 bwss-run, $4 sock-clamp.py
set -u
bwssd=$1 top=$2 run=$3 clamp=$4
. "$(dirname "$0")/bwssd-common.sh" handover

controller () { flow_of "$curl" | cut -d" " -f5; }
autostarted () { tr '\0' ' ' </proc/$1/cmdline 2>/dev/null | grep -q -- '--autostart'; }
size () { stat -c %s "$tmp/dl" 2>/dev/null || echo 0; }
# the inode of curl's TCP socket to the server (the same download), or nothing
socket_of () {
  local ino
  for ino in $(ls -l /proc/$curl/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
    awk -v p="$(printf '%04X' $port)" -v i="$ino" \
      'NR > 1 && substr($3, index($3, ":") + 1) == p && $10 == i { f = 1 } END { exit !f }' /proc/net/tcp &&
      { echo "$ino"; return 0; }
  done
}

# The user's bwssd adopts nothing here: by default it adopts every flow of
# the user it sees, curl's socket too in the moment between the autostarted
# bwssd's leaving and the client's handover (its first scan comes within
# milliseconds of taking the lock), and its window there is a live bwssd's
# clamp, not one a dead bwssd left.  What is checked is the handover.
printf '[default]\nweight=1\nadopt=false\n' >"$tmp/rules.conf"
serve_big
# A give-back (knob_give_back_clamp()) sets the free clamp, 65535 << the
# socket's window scale ($free_clamp, read below): the buffer alone bounds
# the window then.  The kernel may write the clamp again since, as on any
# socket whose buffer autotuning owns — the window its buffer allows, when
# autotuning grows the buffer or its payload-to-memory ratio changes
# (docs/sockets.md) — which is above the window every bwssd of this test
# holds the download at (its floor: two loopback segments, 130966, itself
# above the connect's 65536) and at least the connect's.  So a clamp is given
# back when it is above that window ($win, read below) and at least the
# connect's; a kernel's write comes with data only, so the first read after
# a give-back is mostly the free clamp itself (each check prints it).
read -r connect_clamp free_clamp <<<"$(python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
ti = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
print(s.getsockopt(socket.IPPROTO_TCP, 10), 65535 << (ti[6] >> 4))' "$port")"
check "the kernel's clamp of a socket to the server right after its connect: ${connect_clamp:-none}; a download's with no bwssd: ${free_clamp:-none}" \
  '[ -n "$connect_clamp" ] && [ "$connect_clamp" -gt 0 ] && [ "${free_clamp:-0}" -ge "$connect_clamp" ]'

# Waits until the flow is controlled by a bwssd other than @1 (pid, or
# none); prints "ms pid".
wait_new_controller () {
  local t0=$(now_ms) c
  while [ $(($(now_ms) - t0)) -lt $patience_ms ]; do
    c=$(flow_of "$curl")
    if echo "$c" | grep -Eq '^shim 5 [0-9]+ True [0-9]+$' && [ "${c##* }" != "$1" ]; then
      echo "$(($(now_ms) - t0)) ${c##* }"; return 0
    fi
    sleep 0.05
  done
  return 1
}
# Whether clamp @1 is a given-back one (above).
given_back () { [ -n "$1" ] && [ "$1" != none ] && [ "$1" -gt "$win" ] && [ "$1" -ge "$connect_clamp" ]; }
# Kills @2 (pid) with signal @1 and waits until the socket's clamp is
# given back; prints the ms it took, or nothing.
given_back_after () {
  local t0 c
  kill "-$1" "$2"; t0=$(now_ms)
  while [ $(($(now_ms) - t0)) -lt $failopen_bound_ms ]; do
    c=$("$clamp" "$curl" "$port")
    given_back "$c" && { echo $(($(now_ms) - t0)); return 0; }
    sleep 0.02
  done
  return 1
}
# The clamp of the socket now (for the messages).
clamp_now () { "$clamp" "$curl" "$port" || echo none; }
start_own () {
  "$bwssd" --foreground --rules "$tmp/rules.conf" 2>>"$tmp/bwssd.log" &
  own=$!; pids="$pids $own"
}
# The user's bwssd started while the autostarted @1 holds the domain: it
# takes over.  Checks it, with @2 the round's name.
takes_over () {
  local auto=$1 what=$2 t0 c ms
  start_own
  t0=$(now_ms)
  while [ $(($(now_ms) - t0)) -lt $patience_ms ]; do gone "$auto" && break; sleep 0.01; done
  # the clamp, then who controls the flow: once the old one is gone its client
  # gives the clamp back and hands the flow to the new bwssd, which may have
  # set its own window (the same $win) before this read — a flow it controls
  # is not one the dead bwssd left throttled
  c=$(clamp_now)
  ctl=$(flow_of "$curl" | awk '{ print $NF }')
  check "$what: the user's bwssd ($own) started, the autostarted one ($auto) gone in $(($(now_ms) - t0)) ms, the clamp then $c (given back: above $win; or the new bwssd's window: controller ${ctl:-none})" \
    'gone "$auto" && { given_back "$c" || { [ "${ctl:-}" = "$own" ] && [ "$c" = "$win" ]; }; }'
  read -r ms ctl <<<"$(wait_new_controller "$auto")"
  check "... the flow handed to it in ${ms:-never} ms (controller ${ctl:-none}), bwss-top lists it once" \
    '[ "${ctl:-}" = "$own" ] && ! gone "$own"'
  check "... and curl goes on, on the same connection (socket ${download:-none})" \
    'kill -0 $curl 2>/dev/null && [ "$(socket_of)" = "$download" ]'
}

# ---- a client's autostarted bwssd ----
"$run" --weight 5 -- curl -s --limit-rate 1M -o "$tmp/dl" "$url" &
runner=$!; pids="$pids $runner"
curl=
for _ in $(seq $((patience_ms / 50))); do
  curl=$(pgrep -P $runner curl || echo $runner)
  [ -n "$(flow_of $curl)" ] && break
  sleep 0.05
done
read -r ms auto <<<"$(wait_new_controller none)"
check "curl under bwss-run, no bwssd: its client starts one (${auto:-none}, --autostart) controlling its flow in ${ms:-never} ms" \
  '[ -n "${auto:-}" ] && autostarted "$auto"'
read -r c win <<<"$(stable_clamp "$curl" "$clamp" "$curl" "$port")"
download=$(socket_of) start_size=$(size)
check "... its clamp is the autostarted bwssd's window ($c = $win), below the free clamp ($free_clamp): what a dead bwssd must not leave" \
  '[ "$c" = "$win" ] && [ "$c" -lt "$free_clamp" ]'

ms=$(given_back_after 9 "$auto")
check "kill -9 of the autostarted bwssd: the client gives the clamp back in ${ms:-never} ms (now $(clamp_now); the promise $failopen_promise_ms ms)" \
  '[ -n "$ms" ]'
read -r ms auto2 <<<"$(wait_new_controller "$auto")"
check "... and starts another (${auto2:-none}) that controls the flow in ${ms:-never} ms" \
  '[ -n "${auto2:-}" ] && autostarted "$auto2"'

# ---- the user's bwssd takes over, in both orders of kill -9 ----
takes_over "${auto2:-none}" "autostarted first"
grep -q "autostarted bwssd (pid ${auto2:-none}) holds the domain" "$tmp/bwssd.log"
check "... the user's bwssd says whom it asked to leave" '[ $? -eq 0 ]'
"$bwssd" --foreground --rules "$tmp/rules.conf" 2>"$tmp/err"; rc=$?
check "a second bwssd of the user's own -> exit 1, naming another bwssd: $(cat "$tmp/err")" \
  '[ $rc -eq 1 ] && grep -q "another bwssd" "$tmp/err" && ! gone "$own" && [ "$(controller)" = "$own" ]'

first=$own
ms=$(given_back_after 9 "$first")
check "kill -9 of the user's bwssd: the client gives the clamp back in ${ms:-never} ms (now $(clamp_now))" '[ -n "$ms" ]'
read -r ms auto3 <<<"$(wait_new_controller "$first")"
check "... and starts an autostarted one (${auto3:-none}) in ${ms:-never} ms" \
  '[ -n "${auto3:-}" ] && autostarted "$auto3"'
takes_over "${auto3:-none}" "the user's first"

# ---- systemd's socket on the domain's path ----
ms=$(given_back_after TERM "$own")
check "SIGTERM of the user's bwssd: the clamp back in ${ms:-never} ms (now $(clamp_now))" '[ -n "$ms" ]'
read -r ms auto4 <<<"$(wait_new_controller "$own")"
check "... the client starts an autostarted one (${auto4:-none}) in ${ms:-never} ms" \
  '[ -n "${auto4:-}" ] && autostarted "$auto4"'
sock=$rundir/$domain.sock auto_sock=$(stat -c %i "$rundir/$domain.sock" 2>/dev/null)
# systemd's socket, as bwssd.socket has it held (sd_listen_fds(3)'s
# protocol: the listening socket as fd 3, $LISTEN_FDS, $LISTEN_PID; a socket
# file at the path replaced, as systemd replaces one), then bwssd started on it
python3 - "$sock" "$bwssd" --domain "$domain" --foreground --rules "$tmp/rules.conf" 2>>"$tmp/bwssd.log" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
os.unlink(sys.argv[1])
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o600)
s.listen(64)
os.dup2(os.dup(s.fileno()), 3, inheritable=True)
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execv(sys.argv[2], sys.argv[2:])
PY
own=$!; pids="$pids $own"
for _ in $(seq $((patience_ms / 10))); do gone "${auto4:-none}" && break; sleep 0.01; done
check "systemd's socket on the path: bwssd started on it ($own) takes over, the autostarted one (${auto4:-none}) gone, the clamp then $(clamp_now)" \
  'gone "${auto4:-none}" && given_back "$(clamp_now)"'
check "... the autostarted one left systemd's socket at the path" '[ -S "$sock" ] && [ "$(stat -c %i "$sock")" != "$auto_sock" ]'
read -r ms ctl <<<"$(wait_new_controller "${auto4:-none}")"
check "... the flow handed to it through that socket in ${ms:-never} ms (controller ${ctl:-none})" \
  '[ "${ctl:-}" = "$own" ]'

kill -TERM "$own"; wait "$own"; rc=$?
c=$(clamp_now)
check "SIGTERM: exit $rc, the clamp back at once ($c)" '[ $rc -eq 0 ] && given_back "$c"'

# ---- a stopped autostarted bwssd ----
read -r ms auto5 <<<"$(wait_new_controller "$own")"
check "the client starts an autostarted one again (${auto5:-none}) in ${ms:-never} ms" \
  '[ -n "${auto5:-}" ] && autostarted "$auto5"'
kill -STOP "${auto5:-none}"
takes_over "${auto5:-none}" "the autostarted one stopped (SIGSTOP)"
check "... killed once SIGTERM did not end it" 'grep -q "bwssd (pid ${auto5:-none}) did not leave: killed" "$tmp/bwssd.log"'
kill -TERM "$own"; wait "$own"; rc=$?
c=$(clamp_now)
check "SIGTERM: exit $rc, the clamp back at once ($c)" '[ $rc -eq 0 ] && given_back "$c"'
check "curl ran throughout, on one connection (socket ${download:-none}; $(size) bytes, $start_size when the autostarted bwssd first controlled it), and bwss-run too" \
  'kill -0 $curl 2>/dev/null && kill -0 $runner 2>/dev/null && [ "$(socket_of)" = "$download" ] && [ "$(size)" -gt "$start_size" ]'
kill $runner $curl 2>/dev/null

# ---- a program that waits for ever ----
# It reads its first data (the shim hands the flow over) and then waits in
# one poll() with no timeout on a pipe nobody writes: no read, no call but
# that wait.  The bwssd that controls its flow stopped, the shim must still
# ask for bwssd's sign of life and give the socket back.
"$run" -- python3 -c '
import os, select, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /big.bin HTTP/1.0\r\n\r\n")
s.recv(65536)
p = select.poll()
p.register(os.pipe()[0], select.POLLIN)
p.poll()' "$port" &
wrun=$!; pids="$pids $wrun"
waiter= wctl= c=
t0=$(now_ms)
while [ $(($(now_ms) - t0)) -lt $patience_ms ]; do
  waiter=$(pgrep -P $wrun | head -1); waiter=${waiter:-$wrun}
  wctl=$(flow_of "$waiter" | awk '$4 == "True" { print $5 }') && [ -n "$wctl" ] &&
    c=$("$clamp" "$waiter" "$port") && [ "$c" = "$win" ] && break
  sleep 0.05
done
pids="$pids ${wctl:-}"
kill -STOP "${wctl:-none}" 2>/dev/null; t0=$(now_ms) ms=
while [ $(($(now_ms) - t0)) -lt $failopen_bound_ms ]; do
  given_back "$("$clamp" "${waiter:-none}" "$port")" && { ms=$(($(now_ms) - t0)); break; }
  sleep 0.02
done
check "a program waiting in poll() with no timeout (pid ${waiter:-none}, its flow at bwssd ${wctl:-none}'s window $c): that bwssd stopped, the clamp given back in ${ms:-never} ms (the promise $failopen_promise_ms ms)" \
  '[ -n "$ms" ] && [ "$c" = "$win" ]'
kill -KILL "${wctl:-none}" $wrun ${waiter:-} 2>/dev/null
[ $failed -eq 0 ] || sed 's/^/# bwssd: /' "$tmp/bwssd.log"
echo "1..$n"
[ $failed -eq 0 ]

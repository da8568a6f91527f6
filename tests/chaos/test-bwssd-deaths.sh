#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwssd and its watchdog killed in every order (issue 22): a curl download
# adopted by bwssd must never stay below the clamp it had before any bwssd
# touched it (read from the socket itself) for more than 2 s after the
# kills, whoever dies first:
#   - the watchdog, then bwssd: bwssd starts another watchdog at once, which
#     gives the flow back when bwssd dies;
#   - bwssd, then the watchdog: the watchdog gives it back first;
#   - both at once (kill -9 of both; SIGKILL of their cgroup, where the test
#     can make one): the other bwssd that runs (another domain, adopting
#     nothing) gives it back within 2 s; with none, `bwssd --restore` (the
#     unit's ExecStopPost) does at once;
#   - a bwssd of another domain that adopts the flow after such a death
#     records the flow's own clamp, not the one the dead left: SIGTERM gives
#     the flow its own back;
#   - two bwssd of two domains: the flow is adopted by one only (the other
#     lists it as adopted by the first), and SIGTERM of both, in either
#     order, gives it its own clamp back;
#   - a watchdog that keeps dying: bwssd gives every flow back and exits 1.
# The 2 s are the promise (docs/adopt.md, "Fail-open"); the test fails past
# $failopen_bound_ms and prints each time taken (tests/socket/flow-watch.sh
# says why).  (TAP.)  $1 bwssd, $2 bwss-top, $3 sock-clamp.py
set -u
bwssd=$1 top=$2 clamp=$3
# a runtime directory of its own (a tmpfs, as the user's is): the ledger is
# shared by every bwssd that sees one directory, and the records a run
# killed elsewhere left in the user's would be given back and counted here
XDG_RUNTIME_DIR=$(mktemp -d -p /dev/shm bwss-deaths.XXXXXX) && export XDG_RUNTIME_DIR
. "$(dirname "$0")/../socket/bwssd-common.sh" deaths
other="$domain-other" third="$domain-third" cg=
trap 'kill -9 $pids 2>/dev/null; [ -n "$cg" ] && rmdir "$cg" 2>/dev/null; rm -rf "$tmp" "$XDG_RUNTIME_DIR";
      rm -f "$rundir/$domain" "$rundir/$domain".* "$rundir/$other" "$rundir/$other".* "$rundir/$third" "$rundir/$third".*' EXIT

serve_big
printf '[default]\nweight=1\n' >"$tmp/adopt.conf"
printf '# adopts nothing: only gives back what a dead bwssd left\n[default]\nadopt=false\n' >"$tmp/none.conf"

# starts bwssd for domain $1 with rules $2 (log $tmp/$1.log); sets $daemon
start_bwssd () {
  "$bwssd" --foreground --domain "$1" --rules "$2" 2>>"$tmp/$1.log" &
  daemon=$!
  pids="$pids $daemon"
  for _ in $(seq $((patience_ms / 50))); do "$top" --domain "$1" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && return 0; sleep 0.05; done
  return 1
}
# the watchdog of bwssd $1
watchdog_of () { pgrep -P "$1" | head -1; }
# starts a download before any bwssd that adopts runs; sets $dl and $c0,
# its clamp before any bwssd touched it, once the kernel's autotuning has
# grown it past what bwssd sets on loopback (its floor there: two 65483-byte
# segments, 128 kB)
start_download () {
  curl -s --limit-rate 1M -o /dev/null "$url" &
  dl=$!
  pids="$pids $dl"
  c0=
  for _ in $(seq 60); do
    c0=$("$clamp" $dl $port) && [ -n "$c0" ] && [ "$c0" -gt 200000 ] && break
    sleep 0.05
  done
}
# the domain ($1) that lists flow $dl as controlled with a window, or nothing
listed_in () {
  local d
  for d in "$@"; do
    "$top" --once --json --domain "$d" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any(f["pid"] == int(sys.argv[1]) and f["controlled"] and f["window_bytes"] > 0
                  for f in json.load(sys.stdin)["flows"]) else 1)' "$dl" && echo "$d"
  done
}
# waits ($patience_ms at most) until $dl is adopted by one of the domains $@
# and its clamp is below $c0; prints that domain
adopted () {
  local t0 d
  t0=$(now_ms)
  while [ $(($(now_ms) - t0)) -lt $patience_ms ]; do
    d=$(listed_in "$@")
    if [ -n "$d" ] && [ "$("$clamp" $dl $port)" -lt "$c0" ]; then echo "$d"; return 0; fi
    sleep 0.05
  done
  return 1
}
# waits until the clamp of $dl is back at $c0 or more, $1 ms at most;
# prints the ms it took
restored_within () {
  local t0 c
  t0=$(now_ms)
  while [ $(($(now_ms) - t0)) -lt "$1" ]; do
    c=$("$clamp" $dl $port)
    if [ -n "$c" ] && [ "$c" -ge "$c0" ]; then echo $(($(now_ms) - t0)); return 0; fi
    sleep 0.02
  done
  return 1
}
clamp_now () { "$clamp" $dl $port; }
stop () { kill -9 "$@" 2>/dev/null; for p in "$@"; do wait "$p" 2>/dev/null; done; }

# ---- a survivor gives it back ----
start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by=$(adopted "$domain")
check "the watchdog, then bwssd: adopted (clamp $(clamp_now) < its own $c0)" '[ -n "$by" ]'
w=$(watchdog_of $d)
stop $w
w2=
for _ in $(seq $((patience_ms / 50))); do w2=$(watchdog_of $d); [ -n "$w2" ] && [ "$w2" != "$w" ] && break; sleep 0.05; done
check "... kill -9 of the watchdog ($w): bwssd starts another (${w2:-none}) at once" \
  '[ -n "$w2" ] && [ "$w2" != "$w" ] && grep -q "watchdog \[$w\] was killed.*started another" "$tmp/$domain.log"'
sleep 0.3
stop $d
ms=$(restored_within $failopen_bound_ms)
check "... then kill -9 of bwssd: the clamp back to its own ($(clamp_now) >= $c0) in ${ms:-never} ms (the promise $failopen_promise_ms ms)" '[ -n "$ms" ]'
stop $dl

# ---- a bwssd in another PID namespace does not judge ours ----
# The runtime directory is shared with processes whose pids mean something
# else (a container, a sandbox, a test in namespaces of its own): there our
# bwssd's pid names no process, and a restore judging by it would remove
# the live record, which its watchdog then cannot find when it dies.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  start_download
  start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
  by=$(adopted "$domain")
  ino=$(ls "$rundir/adopted" 2>/dev/null | grep -m1 '^[0-9]*$')
  unshare --pid --fork --mount-proc "$bwssd" --restore >"$tmp/ns-restore.out" 2>&1; rc=$?
  rec=$(cat "$rundir/adopted/$ino" 2>/dev/null)
  check "a bwssd --restore in another PID namespace (exit $rc: $(head -c 200 "$tmp/ns-restore.out")) leaves our live bwssd's record (${rec:-gone}) and clamp ($(clamp_now) < $c0)" \
    '[ -n "$by" ] && [ $rc -eq 0 ] && echo "$rec" | grep -q " daemon=$d .* pidns=[0-9]" && [ "$(clamp_now)" -lt "$c0" ]'
  # a claim our bwssd is still writing (its temporary file, named for its
  # writer) is not another namespace's to judge either; one whose writer
  # died in this namespace is removed by a restore here
  ns=$(stat -L -c %i /proc/$d/ns/pid) start=$(awk '{ print $22 }' /proc/$d/stat)
  sleep 0 & gone=$!; wait $gone
  live_tmp="$rundir/adopted/.$ino.$d.$start.$ns.999" dead_tmp="$rundir/adopted/.$ino.$gone.0.$ns.999"
  : >"$live_tmp"; : >"$dead_tmp"
  unshare --pid --fork --mount-proc "$bwssd" --restore >"$tmp/ns-restore.out" 2>&1; rc=$?
  check "... nor our live bwssd's half-written claim ($(basename "$live_tmp"): $([ -e "$live_tmp" ] && echo kept || echo removed); exit $rc)" \
    '[ $rc -eq 0 ] && [ -e "$live_tmp" ] && [ -e "$dead_tmp" ]'
  "$bwssd" --restore >"$tmp/restore.out" 2>&1; rc=$?
  check "... while a bwssd --restore in this namespace removes the claim of a writer dead here ($(basename "$dead_tmp"): $([ -e "$dead_tmp" ] && echo kept || echo removed)) and keeps the live one's" \
    '[ $rc -eq 0 ] && [ ! -e "$dead_tmp" ] && [ -e "$live_tmp" ]'
  rm -f "$live_tmp" "$dead_tmp"
  stop $d
  ms=$(restored_within $failopen_bound_ms)
  check "... and kill -9 of that bwssd: its watchdog finds the record and gives the clamp back ($(clamp_now) >= $c0) in ${ms:-never} ms" \
    '[ -n "$ms" ]'
  stop $dl
else
  for _ in 1 2 3 4; do n=$((n + 1)); echo "ok $n - a bwssd in another PID namespace # SKIP unshare --pid unavailable"; done
fi

start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by=$(adopted "$domain")
w=$(watchdog_of $d)
stop $d
sleep 0.3
stop $w
ms=$(restored_within $failopen_bound_ms)
check "bwssd, then the watchdog: the clamp back to its own ($(clamp_now) >= $c0) in ${ms:-never} ms (the promise $failopen_promise_ms ms)" \
  '[ -n "$by" ] && [ -n "$ms" ]'
stop $dl

# ---- both at once: another bwssd (adopting nothing) or bwssd --restore gives it back ----
start_bwssd "$other" "$tmp/none.conf"; keeper=$daemon
start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by=$(adopted "$domain")
w=$(watchdog_of $d)
stop $d $w
ms=$(restored_within $failopen_bound_ms)
check "kill -9 of bwssd and its watchdog at once: the bwssd of another domain gives the clamp back ($(clamp_now) >= $c0) in ${ms:-never} ms (the promise $failopen_promise_ms ms)" \
  '[ -n "$by" ] && [ -n "$ms" ]'
stop $dl

if [ -w /sys/fs/cgroup/unified/cgroup.procs ] && [ -e /sys/fs/cgroup/unified/cgroup.subtree_control ]; then
  cgroot=/sys/fs/cgroup/unified
elif [ -w /sys/fs/cgroup/cgroup.procs ] && [ -e /sys/fs/cgroup/cgroup.subtree_control ]; then
  cgroot=/sys/fs/cgroup
else
  cgroot=
fi
if [ -n "$cgroot" ] && mkdir "$cgroot/bwss-test-deaths-$$" 2>/dev/null && [ -e "$cgroot/bwss-test-deaths-$$/cgroup.kill" ]; then
  cg="$cgroot/bwss-test-deaths-$$"
  start_download
  ( echo $BASHPID >"$cg/cgroup.procs" && exec "$bwssd" --foreground --rules "$tmp/adopt.conf" ) 2>>"$tmp/$domain.log" &
  d=$!; pids="$pids $d"
  for _ in $(seq $((patience_ms / 50))); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && break; sleep 0.05; done
  by=$(adopted "$domain")
  members=$(wc -l <"$cg/cgroup.procs")
  echo 1 >"$cg/cgroup.kill"
  wait $d 2>/dev/null
  ms=$(restored_within $failopen_bound_ms)
  check "SIGKILL of their cgroup ($members processes): the bwssd of another domain gives the clamp back ($(clamp_now) >= $c0) in ${ms:-never} ms (the promise $failopen_promise_ms ms)" \
    '[ -n "$by" ] && [ "$members" -ge 2 ] && [ -n "$ms" ]'
  for _ in $(seq 20); do [ -z "$(cat "$cg/cgroup.procs")" ] && break; sleep 0.05; done
  rmdir "$cg" && cg=
  stop $dl
else
  ok "# SKIP no cgroup v2 with cgroup.kill to make here"
fi
stop $keeper

# With no bwssd left nobody gives the flow back: the dead one's record stays
# in the ledger and the clamp is not the free one (every give-back's,
# free_clamp).  It need not stay at the dead one's window: the kernel writes
# the clamp of a socket whose buffer autotuning owns itself, to the window the
# buffer allows, when autotuning grows the buffer and when its
# payload-to-memory ratio changes (docs/sockets.md) — bwssd set it again each
# round, nobody does now.  Such a write is never the free clamp (the window
# scale is chosen so that the largest buffer fits).
free_clamp () { python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print(65535 << (s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)[6] >> 4))' "$port"; }
free=$(free_clamp)
start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by=$(adopted "$domain")
w=$(watchdog_of $d)
stop $d $w
sleep 0.5
low=$(clamp_now)
held=$(grep -l -- " daemon=$d " "$rundir/adopted/"[0-9]* 2>/dev/null | wc -l)
"$bwssd" --restore >"$tmp/restore.out" 2>&1; rc=$?
c=$(clamp_now)
check "both at once, no other bwssd: not given back ($low, the free clamp $free; the dead bwssd's record kept: $held); bwssd --restore -> exit $rc, clamp back ($c >= $c0): $(cat "$tmp/restore.out")" \
  '[ -n "$by" ] && [ "$held" = 1 ] && [ -n "$low" ] && [ -n "$free" ] && [ "$low" -lt "$free" ] \
   && [ $rc -eq 0 ] && [ "$c" -ge "$c0" ] \
   && grep -q "^bwssd: 1 socket left adopted by a dead bwssd given back" "$tmp/restore.out"'
stop $dl

start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by0=$(adopted "$domain")
w=$(watchdog_of $d)
stop $d $w
start_bwssd "$third" "$tmp/adopt.conf"; t=$daemon
by=$(adopted "$third")
kill -TERM $t; wait $t; rc=$?
c=$(clamp_now)
check "both at once, then a bwssd of another domain adopts the flow (${by:-not adopted}) and stops: exit $rc, the flow's own clamp back ($c >= $c0)" \
  '[ -n "$by0" ] && [ "$by" = "$third" ] && [ $rc -eq 0 ] && [ "$c" -ge "$c0" ]'
stop $dl

# ---- two bwssd of two domains ----
for order in holder-first other-first; do
  start_download
  start_bwssd "$domain" "$tmp/adopt.conf"; a=$daemon
  start_bwssd "$third" "$tmp/adopt.conf"; b=$daemon
  by=$(adopted "$domain" "$third")
  sleep 0.6
  looks=
  for _ in $(seq 5); do looks="$looks $(listed_in "$domain" "$third" | tr '\n' +)"; sleep 0.1; done
  if [ "$by" = "$domain" ]; then holder=$a rest=$b other_domain=$third; else holder=$b rest=$a other_domain=$domain; fi
  "$top" --once --json --domain "$other_domain" >"$tmp/other.json" 2>/dev/null
  check "two bwssd ($order): the flow is adopted by one only ($by:$looks), the other lists it as adopted by it" \
    '[ -n "$by" ] && [ "$(echo $looks | tr " " "\n" | sort -u)" = "$by+" ] && grep -q "adopted by bwssd $holder of domain $by" "$tmp/other.json"'
  if [ $order = holder-first ]; then first=$holder second=$rest; else first=$rest second=$holder; fi
  kill -TERM $first; wait $first
  by2=
  [ $order = holder-first ] && by2=$(adopted "$other_domain")
  kill -TERM $second; wait $second; rc=$?
  c=$(clamp_now)
  check "... SIGTERM of both ($order${by2:+, the other took it over}): the flow's own clamp back ($c >= $c0)" \
    '[ $rc -eq 0 ] && [ "$c" -ge "$c0" ] && { [ $order = other-first ] || [ "$by2" = "$other_domain" ]; }'
  stop $dl
done

# ---- a watchdog that keeps dying ----
start_download
start_bwssd "$domain" "$tmp/adopt.conf"; d=$daemon
by=$(adopted "$domain")
for _ in $(seq 5); do
  w=$(watchdog_of $d)
  [ -n "$w" ] && stop $w
  for _ in $(seq 20); do w2=$(watchdog_of $d); [ -n "$w2" ] && [ "$w2" != "$w" ] && break; kill -0 $d 2>/dev/null || break; sleep 0.05; done
done
exited () { ! kill -0 "$1" 2>/dev/null || ps -o stat= -p "$1" | grep -q Z; }
for _ in $(seq $((patience_ms / 50))); do exited $d && break; sleep 0.05; done
if exited $d; then wait $d; rc=$?; else rc=running; stop $d; fi
c=$(clamp_now)
check "a watchdog killed 5 times in a row: bwssd gives up, exit $rc, the flow's own clamp back ($c >= $c0)" \
  '[ -n "$by" ] && [ $rc -eq 1 ] && [ "$c" -ge "$c0" ] && grep -q "keeps dying: giving every flow back and exiting" "$tmp/$domain.log"'
stop $dl

left=$(ls "$rundir/adopted" 2>/dev/null | grep -c '^[0-9]' || true)
echo "# ledger records left in $rundir/adopted: $left"
echo "1..$n"
[ $failed -eq 0 ]

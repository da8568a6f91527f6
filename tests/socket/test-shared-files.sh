#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Another local user against yours (issue 22).  Two users made by this test
# (useradd) and removed at the end: a victim, who runs bwssd, bwss-top and
# bwss-run, and another user who plants what the landed code read or locked
# under predictable names in /dev/shm.  The victim's files are now in its
# runtime directory, so:
#   - the other holds the flock of NAME.bwssd.lock and owns the segment
#     NAME: the victim's bwssd starts anyway;
#   - a FIFO as NAME.bwssd: bwss-top --once (text and JSON) does not hang,
#     bwssd writes its status without an error;
#   - 200 kB of nested '[' as NAME.bwssd (and as the victim's own status
#     file): bwss-top does not crash (its JSON nesting is bounded);
#   - a forged {"pid":PID, "not_adopted":[...]}, PID one of the victim's
#     processes: bwss-top never shows that pid as bwssd (it shows the
#     domain's own bwssd, from its own status file);
#   - the other makes the victim's fallback runtime directory first: the
#     victim's tools refuse it, saying so, and write nothing there; a
#     $XDG_RUNTIME_DIR of another user, or a symbolic link, is not used.
# And a downloader that made itself non-dumpable: the bwssd of its user
# refuses it saying so (not "no process holds it"); root's bwssd adopts
# root's (docs/adopt.md).  Root only (useradd, setpriv); skipped otherwise.
# (TAP.)  $1 bwssd, $2 bwss-top, $3 bwss-run
set -u
bwssd=$1 top=$2 run=$3
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
  echo "1..0 # SKIP needs root, useradd and setpriv (two more users)"
  exit 0
fi
. "$(dirname "$0")/bwssd-common.sh" shared
chmod 755 "$tmp"
# what the users run, where they can read it (the clone may be closed to them)
. "$(dirname "$0")/stage.sh"
stage "$tmp/stage" bwssd top run || { echo "Bail out! cannot stage the programs in $tmp/stage"; exit 1; }
victim="bwssv$$" other="bwssa$$" users=
for u in $victim $other; do
  useradd --system --no-create-home --shell /usr/sbin/nologin "$u" >/dev/null 2>&1 \
    || { echo "Bail out! useradd $u"; exit 1; }
  users="$users $u"
done
vuid=$(id -u "$victim") vgid=$(id -g "$victim") ouid=$(id -u "$other") ogid=$(id -g "$other")
vfallback=/dev/shm/bwss-$vuid.d
d1="$domain-1" d2="$domain-2" d3="$domain-3" d4="$domain-4" d5="$domain-5" d6="$domain-6"
cleanup () {
  kill -9 $pids 2>/dev/null
  wait 2>/dev/null
  # what was started as those users (a bwssd's watchdog) ends too
  for _ in $(seq 60); do [ -z "$(pgrep -u "$vuid,$ouid")" ] && break; sleep 0.05; done
  for p in $(pgrep -u "$vuid,$ouid"); do kill -9 "$p"; done
  for d in $d1 $d2 $d3 $d4 $d5 $d6; do rm -f "/dev/shm/$d" "/dev/shm/$d".* "$rundir/$d" "$rundir/$d".*; done
  rm -rf "$vfallback" /dev/shm/bwss-$ouid.d "$tmp"
  for u in $users; do
    for _ in $(seq 20); do userdel "$u" 2>/dev/null && break; sleep 0.1; done
    id "$u" >/dev/null 2>&1 && echo "# could not remove the user $u"
  done
}
trap cleanup EXIT
# runs a command as the victim / the other user, with a clean environment
# (setpriv execs it: in the background, $! is the command's pid)
as_victim=(setpriv --reuid="$vuid" --regid="$vgid" --clear-groups --reset-env)
as_other=(setpriv --reuid="$ouid" --regid="$ogid" --clear-groups --reset-env)
as_victim () { "${as_victim[@]}" "$@"; }
as_other () { "${as_other[@]}" "$@"; }
json_of () { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
vtop () { as_victim "$top" "$@"; }
# where the victim's file $2 of domain $1 is
vpath () { vtop --paths --domain "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
# starts the victim's bwssd for domain $1 with rules $2; sets $daemon;
# fails if it writes no status within $patience_ms
start_vbwssd () {
  local status
  status=$(vpath "$1" bwssd-status)
  "${as_victim[@]}" "$bwssd" --foreground --domain "$1" --rules "$2" 2>"$tmp/$1.log" &
  daemon=$!; pids="$pids $daemon"
  for _ in $(seq $((patience_ms / 50))); do [ -e "$status" ] && return 0; sleep 0.05; done
  return 1
}
# makes the victim's domain $1 exist: a client that stays ($runner) and
# the bwssd it starts (it adopts nothing: its status lists no flow)
make_domain () {
  local sock
  sock=$(vpath "$1" socket)
  "${as_victim[@]}" env BWSS_BWSSD="$bwssd" "$run" --domain "$1" -- sleep 60 >/dev/null 2>&1 &
  runner=$!; pids="$pids $runner"
  for _ in $(seq $((patience_ms / 50))); do [ -e "$sock" ] && break; sleep 0.05; done
  pids="$pids $(pgrep -P $runner)"     # its command, which kill -9 of bwss-run leaves
  [ -e "$sock" ]
}
printf '[default]\nadopt=false\n' >"$tmp/none.conf"
printf '[default]\nweight=1\n' >"$tmp/adopt.conf"
chmod 644 "$tmp/none.conf" "$tmp/adopt.conf"

# ---- the fallback runtime directory, made first by the other user ----
as_other mkdir -m 755 "$vfallback"
out=$(vtop --once 2>&1); rc=$?
check "the victim's fallback runtime directory made first by another user: bwss-top refuses it, exit $rc: $out" \
  '[ $rc -eq 1 ] && echo "$out" | grep -q "$vfallback is not a directory of this user closed to others"'
out=$(as_victim "$run" -- true 2>&1); rc=$?
check "... bwss-run too, saying so, and nothing is written there (exit $rc: $out)" \
  '[ $rc -eq 1 ] && echo "$out" | grep -q "$vfallback" && [ -z "$(ls -A "$vfallback")" ]'
rm -rf "$vfallback"
mkdir "$tmp/evil" && chown "$ouid:$ogid" "$tmp/evil" && chmod 777 "$tmp/evil"
mkdir -m 700 "$tmp/private" "$tmp/xdg" && chown "$vuid:$vgid" "$tmp/private" "$tmp/xdg"
ln -s "$tmp/private" "$tmp/link"
runtime_with () { as_victim env XDG_RUNTIME_DIR="$1" "$top" --paths | awk '$1 == "runtime-dir" { print $2 }'; }
evil=$(runtime_with "$tmp/evil") link=$(runtime_with "$tmp/link") xdg=$(runtime_with "$tmp/xdg")
check "\$XDG_RUNTIME_DIR of another user ($evil), or a link ($link), is not used; a private one is ($xdg)" \
  '[ "$evil" = "$vfallback" ] && [ "$link" = "$vfallback" ] && [ "$xdg" = "$tmp/xdg/bwss" ] &&
   [ -z "$(ls -A "$tmp/evil")" ] && [ -z "$(ls -A "$tmp/private")" ]'

# ---- the lock and the old segment's name ----
"${as_other[@]}" python3 -c '
import fcntl, os, sys, time
os.umask(0)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(120)' "/dev/shm/$d1.bwssd.lock" >"$tmp/holder.out" &
pids="$pids $!"
as_other sh -c "umask 077; : >/dev/shm/$d1"
for _ in $(seq $((patience_ms / 50))); do grep -q locked "$tmp/holder.out" && break; sleep 0.05; done
start_vbwssd "$d1" "$tmp/none.conf"; started=$?
check "another user holds /dev/shm/$d1.bwssd.lock and owns /dev/shm/$d1: bwssd starts anyway ($(grep -v "^bwssd: \(can\|rules\)" "$tmp/$d1.log" | head -1))" \
  '[ $started -eq 0 ] && grep -q "locked" "$tmp/holder.out"'

# ---- a FIFO as the status file ----
as_other mkfifo -m 666 "/dev/shm/$d2.bwssd"
start_vbwssd "$d2" "$tmp/none.conf"
rc_text=$(as_victim timeout 5 "$top" --once --domain "$d2" >/dev/null 2>&1; echo $?)
rc_json=$(as_victim timeout 5 "$top" --once --json --domain "$d2" 2>/dev/null >/dev/null; echo $?)
check "a FIFO as /dev/shm/$d2.bwssd: bwss-top --once -> $rc_text, --json -> $rc_json (no hang)" \
  '[ "$rc_text" = 0 ] && [ "$rc_json" = 0 ]'
sleep 0.6
as_victim timeout 5 "$top" --once --json --domain "$d2" >"$tmp/d2.json" 2>/dev/null
shown=$(json_of "$tmp/d2.json" 'd["bwssd_pid"]' 2>/dev/null)
check "... and bwssd writes its status without an error ($(grep -c "cannot write" "$tmp/$d2.log") errors; bwss-top shows bwssd ${shown:-none}, started $daemon)" \
  '! grep -q "cannot write" "$tmp/$d2.log" && [ "$shown" = "$daemon" ]'

# ---- a status nested 100 000 deep ----
python3 -c 'print("[" * 200000)' >"$tmp/nested.json"
chmod 644 "$tmp/nested.json"
as_other sh -c "umask 022; cat >/dev/shm/$d3.bwssd" <"$tmp/nested.json"
make_domain "$d3"
rc_text=$(as_victim timeout 5 "$top" --once --domain "$d3" >/dev/null 2>&1; echo $?)
rc_json=$(as_victim timeout 5 "$top" --once --json --domain "$d3" >/dev/null 2>&1; echo $?)
check "200 kB of '[' as /dev/shm/$d3.bwssd: bwss-top --once -> $rc_text, --json -> $rc_json (no crash)" \
  '[ "$rc_text" = 0 ] && [ "$rc_json" = 0 ]'
status=$(vpath "$d3" bwssd-status)
as_victim sh -c "cat >'$status'" <"$tmp/nested.json"
rc_json=$(as_victim timeout 5 "$top" --once --json --domain "$d3" 2>"$tmp/d3.err" >"$tmp/d3.json"; echo $?)
check "... and as the victim's own status file: bwss-top --json -> $rc_json, no bwssd, one message: $(head -c 200 "$tmp/d3.err")" \
  '[ "$rc_json" = 0 ] && [ "$(json_of "$tmp/d3.json" "d[\"bwssd_pid\"]")" = None ] && [ "$(wc -l <"$tmp/d3.err")" = 1 ] && grep -q "nested deeper" "$tmp/d3.err"'
rm -f "$status"

# ---- a forged status: the pid of one of the victim's processes (ps shows it) ----
make_domain "$d4"
as_other sh -c "umask 022; echo '{\"pid\":$runner,\"not_adopted\":[{\"pid\":1,\"command\":\"forged\",\"remote\":\"192.0.2.1:80\",\"reason\":\"forged\"}]}' >/dev/shm/$d4.bwssd"
as_victim timeout 5 "$top" --once --json --domain "$d4" >"$tmp/d4.json" 2>/dev/null
check "a forged {\"pid\":$runner (the victim's bwss-run),...} as /dev/shm/$d4.bwssd: bwss-top shows bwssd_pid $(json_of "$tmp/d4.json" 'd["bwssd_pid"]' 2>/dev/null), $(json_of "$tmp/d4.json" 'len(d["not_adopted"])' 2>/dev/null) refusals" \
  'shown=$(json_of "$tmp/d4.json" "d[\"bwssd_pid\"]"); [ "$shown" != "$runner" ] && { [ "$shown" = None ] || [ "$(cat /proc/$shown/comm 2>/dev/null)" = bwssd ]; } && [ "$(json_of "$tmp/d4.json" "len(d[\"not_adopted\"])")" = 0 ]'

# ---- a downloader that is not dumpable ----
truncate -s 4G "$tmp/big.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
pids="$pids $!"
for _ in $(seq $((patience_ms / 100))); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
cat >"$tmp/nodump.py" <<'PY'
import ctypes, sys, time, urllib.request
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)          # PR_SET_DUMPABLE 0
r = urllib.request.urlopen(sys.argv[1])
while r.read(32768):
    time.sleep(0.02)
PY
chmod 644 "$tmp/nodump.py"
start_vbwssd "$d5" "$tmp/adopt.conf"; vd=$daemon
"${as_victim[@]}" python3 "$tmp/nodump.py" "http://127.0.0.1:$port/big.bin" &
nodump=$!; pids="$pids $nodump"
why=
for _ in $(seq 60); do
  sleep 0.1
  why=$(as_victim "$top" --once --json --domain "$d5" 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["not_adopted"]:
    print(r["reason"])' | head -1)
  [ -n "$why" ] && break
done
check "a non-dumpable downloader, the bwssd of its user: refused saying so ($why)" \
  'echo "$why" | grep -q "not dumpable"'
kill -9 $nodump $vd 2>/dev/null

"$bwssd" --foreground --domain "$d6" --rules "$tmp/adopt.conf" 2>"$tmp/$d6.log" &
pids="$pids $!"
python3 "$tmp/nodump.py" "http://127.0.0.1:$port/big.bin" &
nodump=$!; pids="$pids $nodump"
origin=
for _ in $(seq 60); do
  sleep 0.1
  origin=$("$top" --once --json --domain "$d6" 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["flows"]:
    if f["pid"] == int(sys.argv[1]):
        print(f["origin"])' $nodump)
  [ -n "$origin" ] && break
done
check "a non-dumpable downloader of root, root's bwssd (CAP_SYS_PTRACE): adopted (${origin:-not})" '[ "$origin" = default ]'
kill -9 $nodump 2>/dev/null

echo "1..$n"
[ $failed -eq 0 ]

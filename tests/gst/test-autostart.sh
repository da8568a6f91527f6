#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A plain `gst-launch-1.0 playbin` in a shell without systemd and without
# bwssd is protected, as a user would run it: nothing but the plugin on the
# path (playbin chooses bwsshttpsrc by its own rank), a private runtime
# directory and domain so no other bwssd of the host is involved.
#   - before: no bwssd for the domain, no socket, bwss-top finds no domain;
#   - while the download is open (range-server.py --hold keeps the body's
#     second half back until the test has looked): one `bwssd --autostart`
#     runs for the domain, and `bwss-top --json` lists the player's flow,
#     from bwsshttpsrc, with the element's preferences (the video policy's
#     priority and weight), controlled by that bwssd;
#   - the player reaches the end of the stream and exits 0;
#   - then bwssd and its watchdog leave (waited for up to EXIT_WAIT_S: the
#     promise is that it leaves once its last client is gone, not when), and
#     of the domain's runtime files only the lock stays, empty; nothing is
#     left adopted.
#   test-autostart.sh RANGE-SERVER TAP_HELPERS BWSS-TOP
# Environment (tests/gst/meson.build): GST_PLUGIN_PATH, GST_REGISTRY,
# BWSS_BWSSD (the bwssd a client starts).
server=$1 top=$3
. "$2"

# seconds: how long bwssd may take to leave after the player exits (it
# lingers AUTOSTART_LINGER_S = 2 s for a next client); how long a step
# that the test itself makes possible may take on a loaded machine
EXIT_WAIT_S=10
STEP_WAIT_S=30

command -v gst-launch-1.0 >/dev/null || { echo "1..0 # SKIP no gst-launch-1.0"; exit 0; }
for e in audiotestsrc wavenc wavparse playbin fakesink; do
  gst-inspect-1.0 --exists "$e" || { echo "1..0 # SKIP no GStreamer element $e"; exit 0; }
done

echo "1..14"
tmp=$(mktemp -d)
srv= gpid= bwssd=
cleanup () {
  [ -z "$gpid" ] || kill "$gpid" 2>/dev/null
  [ -z "$srv" ] || kill "$srv" 2>/dev/null
  # a bwssd still there (a check failed): ours only if its pid still runs our command line
  [ -z "$bwssd" ] || ! pgrep -fx -- "$bwssd_argv" | grep -qx "$bwssd" || kill "$bwssd"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" HUP INT TERM   # (meson's timeout: SIGTERM) the cleanup still runs

# a shell without a session: no systemd, no D-Bus, a runtime directory of
# our own (closed to others, as a session's is)
unset NOTIFY_SOCKET DBUS_SESSION_BUS_ADDRESS LD_PRELOAD
mkdir -m 700 "$tmp/run"
export XDG_RUNTIME_DIR="$tmp/run"
dom="bwss-test-autostart-$$"
export BWSS_DOMAIN="$dom"
# $1 as an extended regular expression that matches it literally (pgrep)
re_quote () { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }
# what a client starts (client.c), for pgrep -fx
bwssd_argv=$(re_quote "$BWSS_BWSSD --autostart --domain $dom")

# flows of process $1 in bwss-top's JSON on stdin, one line each:
# "ORIGIN PRIORITY WEIGHT MIN_RATE CONTROLLED CONTROLLER_PID"
flows_of () {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
for f in d["flows"]:
    if f["pid"] == int(sys.argv[1]):
        print(f["origin"], f["priority"], f["weight"], f["min_rate_bps"],
              "controlled" if f["controlled"] else "kernel", d["controller_pid"])
' "$1"
}

# wait_for SECONDS EXPR: polls EXPR (eval'd) every 0.1 s
wait_for () {
  i=0
  while [ $i -lt $(($1 * 10)) ]; do
    eval "$2" && return 0
    sleep 0.1; i=$((i + 1))
  done
  eval "$2"
}

# a 5-second WAV (80 kB), served with its second half held back
gst-launch-1.0 -q audiotestsrc num-buffers=50 samplesperbuffer=800 \
  ! audio/x-raw,rate=8000,channels=1,format=S16LE ! wavenc ! filesink location="$tmp/clip.wav"
python3 "$server" --hold "$tmp/release" "$tmp" > "$tmp/port" &
srv=$!
wait_for "$STEP_WAIT_S" '[ -s "$tmp/port" ]'
port=$(cat "$tmp/port")

rt=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
check "the runtime directory is ours ($rt)" '[ "$rt" = "$XDG_RUNTIME_DIR/bwss" ]'
"$top" --once --json > "$tmp/top" 2>&1
rc=$?
check "before: no bwssd for the domain (no process, no socket; bwss-top exits $rc)" \
  '! pgrep -fx -- "$bwssd_argv" >/dev/null && [ ! -e "$rt/$dom.sock" ] && [ $rc -eq 1 ]'

gst-launch-1.0 playbin "uri=http://127.0.0.1:$port/clip.wav" audio-sink=fakesink video-sink=fakesink \
  > "$tmp/gst.out" 2>&1 &
gpid=$!

# first the flow, listed and controlled: by then the bwssd its client
# started has detached (the client waits for that before it connects) and
# started its watchdog (before it serves a client)
wait_for "$STEP_WAIT_S" \
  '"$top" --once --json > "$tmp/top" 2>&1 && flows_of "$gpid" < "$tmp/top" > "$tmp/flow" && grep -q " controlled " "$tmp/flow"'
pgrep -fx -- "$bwssd_argv" > "$tmp/bwssd"
bwssd=$(head -n 1 "$tmp/bwssd")
check "the player autostarted bwssd for the domain (pid ${bwssd:-none})" \
  '[ -n "$bwssd" ] && [ "$(wc -l < "$tmp/bwssd")" -eq 1 ]'
check "its control socket is in the runtime directory" '[ -S "$rt/$dom.sock" ]'
watchdog=$(re_quote "--watchdog-for $bwssd --ledger $rt/adopted")   # adopt-watchdog.c
check "and its watchdog runs" '[ -n "$bwssd" ] && pgrep -f -- "$watchdog\$" >/dev/null'
flow=$(cat "$tmp/flow")
check "bwss-top lists the player's flow, from bwsshttpsrc (${flow:-none})" \
  '[ "$(wc -l < "$tmp/flow")" -eq 1 ] && [ "${flow%% *}" = bwsshttpsrc ]'
read -r origin prio weight min ctl cpid < "$tmp/flow"
check "with the element's preferences: priority 10, weight 1 (priority $prio, weight $weight, min $min bit/s)" \
  '[ "$prio" = 10 ] && [ "$weight" = 1 ]'
top_pid=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["bwssd_pid"])' < "$tmp/top")
check "bwss-top names it as the domain's bwssd (bwssd_pid $top_pid)" '[ -n "$bwssd" ] && [ "$top_pid" = "$bwssd" ]'
check "controlled by the autostarted bwssd (${ctl:-none} by ${cpid:-none})" \
  '[ "$ctl" = controlled ] && [ "$cpid" = "$bwssd" ]'
grep -q " controlled " "$tmp/flow" || { echo "# bwss-top:"; sed 's/^/# /' "$tmp/top"; }
check "the player is still playing (the download is held open)" 'kill -0 "$gpid" 2>/dev/null'

touch "$tmp/release"
wait_for "$STEP_WAIT_S" '! kill -0 "$gpid" 2>/dev/null'
if kill -0 "$gpid" 2>/dev/null; then
  kill "$gpid"
fi
wait "$gpid"
rc=$?
gpid=
check "the player reached the end of the stream and exited 0 (exit $rc)" \
  '[ $rc -eq 0 ] && grep -q "Got EOS" "$tmp/gst.out"'
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/gst.out"

wait_for "$EXIT_WAIT_S" 'gone "$bwssd"'
check "bwssd left once its last client was gone (within ${EXIT_WAIT_S} s)" \
  '[ -n "$bwssd" ] && gone "$bwssd" && ! pgrep -fx -- "$bwssd_argv" >/dev/null'
check "its watchdog left with it" '! pgrep -f -- "$watchdog\$" >/dev/null'
left=$(cd "$rt" && find . -mindepth 1 ! -path ./adopted ! -path "./$dom.bwssd.lock" | sort | tr '\n' ' ')
check "of the runtime files only the empty lock and an empty adoption ledger stay (extra: ${left:-none})" \
  '[ -z "$left" ] && [ ! -s "$rt/$dom.bwssd.lock" ]'
exit $([ $failed -eq 0 ] && echo 0 || echo 1)

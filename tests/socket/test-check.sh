#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Is protection on?  bwssd tells its service manager it is ready (the unit is
# Type=notify: READY=1 on $NOTIFY_SOCKET, once its domain is open and its
# status written; STOPPING=1 when SIGTERM ends it), and `bwss-top --check`
# says on (exit 0) or off (exit 1) with the one command that fixes it:
#   - no bwssd for the domain: OFF, the bwssd row says so, a fix line;
#   - bwssd started with a $NOTIFY_SOCKET: READY=1 arrives, then --check is
#     ON with bwssd's pid, the plugin found in the build tree above
#     souphttpsrc;
#   - bwsshttpsrc demoted (GST_PLUGIN_FEATURE_RANK): OFF, "unset
#     GST_PLUGIN_FEATURE_RANK";
#   - bwssd stopped: STOPPING=1 arrived, --check is OFF again.
# (TAP.)  $1 bwssd, $2 bwss-top, $3 the build's plugin directory
set -u
bwssd=$1 top=$2 plugins=$3
. "$(dirname "$0")/bwssd-common.sh" check
# the build's plugin, a registry of the test's own (never the user's)
export GST_PLUGIN_PATH=$plugins GST_REGISTRY=$tmp/registry.bin
unset GST_PLUGIN_FEATURE_RANK

check_top () {   # runs bwss-top --check with "$@" in the environment; sets rc
  env "$@" "$top" --check >"$tmp/check" 2>"$tmp/check.err"; rc=$?
  sed 's/^/# /' "$tmp/check"
}

check_top
check "no bwssd: --check -> 1, OFF, the bwssd row NO, a fix" \
  '[ $rc -eq 1 ] && head -1 "$tmp/check" | grep -qx "bwss protection: OFF" \
   && grep -q "^  bwssd  *NO  not running for domain $domain" "$tmp/check" && grep -q "^fix: ." "$tmp/check"'

# a service manager's notification socket: every datagram, one a line
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    print(s.recv(4096).decode(), flush=True)
' "$tmp/notify" >"$tmp/notified" &
pids="$pids $!"
for _ in $(seq 50); do grep -q bound "$tmp/notified" && break; sleep 0.1; done
NOTIFY_SOCKET=$tmp/notify "$bwssd" --foreground 2>"$tmp/bwssd.log" &
d=$!; pids="$pids $d"
ready=no
for _ in $(seq 100); do grep -qx "READY=1" "$tmp/notified" && { ready=yes; break; }; sleep 0.1; done
shown=$("$top" --once --json 2>/dev/null | grep -o '"bwssd_pid":[0-9]*')
check "bwssd --foreground with \$NOTIFY_SOCKET: READY=1 arrives, it answers with its status ($shown)" \
  '[ $ready = yes ] && [ "$shown" = "\"bwssd_pid\":$d" ] && kill -0 $d'

check_top
check "bwssd running: --check -> 0, ON, bwssd's pid, bwsshttpsrc above souphttpsrc" \
  '[ $rc -eq 0 ] && head -1 "$tmp/check" | grep -qx "bwss protection: ON" \
   && grep -q "^  bwssd  *ok  running, pid $d, domain $domain" "$tmp/check" \
   && grep -q "^  plugin  *ok  bwsshttpsrc rank [0-9]* > souphttpsrc rank [0-9]*: players use it" "$tmp/check" \
   && ! grep -q "^fix:" "$tmp/check"'

check_top GST_PLUGIN_FEATURE_RANK=bwsshttpsrc:NONE
check "bwsshttpsrc demoted: --check -> 1, the plugin row NO, fix: unset GST_PLUGIN_FEATURE_RANK" \
  '[ $rc -eq 1 ] && grep -q "^  plugin  *NO  bwsshttpsrc rank 0 <= souphttpsrc" "$tmp/check" \
   && grep -qx "fix: unset GST_PLUGIN_FEATURE_RANK" "$tmp/check"'

kill -TERM $d; wait $d; drc=$?
stopping=no
for _ in $(seq 30); do grep -qx "STOPPING=1" "$tmp/notified" && { stopping=yes; break; }; sleep 0.1; done
check_top
check "SIGTERM: bwssd exits 0 after STOPPING=1; --check -> 1 again" \
  '[ $drc -eq 0 ] && [ $stopping = yes ] && [ $rc -eq 1 ] && grep -q "^  bwssd  *NO" "$tmp/check"'

# a $NOTIFY_SOCKET that is not systemd's (relative) changes nothing but a
# message: bwssd runs
NOTIFY_SOCKET=relative/path timeout --preserve-status -s TERM 2 "$bwssd" --foreground 2>"$tmp/bad.log"; rc=$?
check "a bad \$NOTIFY_SOCKET: one message, bwssd runs until SIGTERM (exit 0)" \
  '[ $rc -eq 0 ] && [ "$(grep -c "cannot tell systemd" "$tmp/bad.log")" = 1 ]'

echo "1..$n"
[ $failed -eq 0 ]

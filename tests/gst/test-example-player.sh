#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/bwss-player against a local HTTP server (range-server.py), as
# examples/README.md runs it: a 2-second VP8/WebM clip made with
# videotestsrc, played through playbin with the source's priority and
# minimum set in source-setup.  Passes if the player says it set them on a
# bwsshttpsrc, prints a bwss-stats line with that minimum from a registered
# flow, reaches the end of the stream and exits 0; and if it refuses a
# minimum that is not a rate (exit 2) before playing anything.
#   test-example-player.sh PLAYER RANGE-SERVER
set -eu
player=$1 server=$2
tmp=$(mktemp -d)
srv=
cleanup() {
  [ -z "$srv" ] || kill "$srv" 2>/dev/null || true
  rm -rf "$tmp"
  rm -f "/dev/shm/$BWSS_DOMAIN"
}
trap cleanup EXIT
export BWSS_DOMAIN="bwss-test-example-$$"   # the element's own domain, not the user's

gst-launch-1.0 -q videotestsrc num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 \
  ! vp8enc deadline=1 ! webmmux ! filesink location="$tmp/clip.webm"
python3 "$server" "$tmp" > "$tmp/port" &
srv=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
[ -n "$port" ] || { echo "FAIL: the server did not start"; exit 1; }

# in a sanitized build, full stacks for LeakSanitizer's suppressions
# (tests/lsan.supp: GLib's first quark block), not listed on stderr
if [ -n "${ASAN_OPTIONS:-}" ]; then
  export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
  export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}print_suppressions=0"
fi
timeout 60 "$player" --priority=20 --min-rate=2M --video-sink=fakesink --audio-sink=fakesink \
  "http://127.0.0.1:$port/clip.webm" > "$tmp/out" 2> "$tmp/err" || {
  echo "FAIL: bwss-player exited $?"; cat "$tmp/out" "$tmp/err"; exit 1; }
cat "$tmp/out"
grep -q '^source-setup: bwsshttpsrc priority 20 weight 1 min-rate 2000000 bit/s$' "$tmp/out" \
  || { echo "FAIL: the preferences were not set in source-setup"; exit 1; }
kb=$(awk -v n="$(stat -c %s "$tmp/clip.webm")" 'BEGIN { printf "%.1f", n / 1000 }')
grep -Eq "^bwss-stats: $kb kB .* min 2000 .* (registered|controlled)\$" "$tmp/out" \
  || { echo "FAIL: no bwss-stats line with the whole clip, min 2000 kbit/s and a registered flow"; exit 1; }
tail -n 1 "$tmp/out" | grep -qx 'end of stream' || { echo "FAIL: no end of stream"; exit 1; }
if [ -s "$tmp/err" ]; then echo "FAIL: bwss-player wrote to stderr:"; cat "$tmp/err"; exit 1; fi

# bad input: a clear error, exit 2, nothing played
rc=0
"$player" --min-rate=5Q "http://127.0.0.1:$port/clip.webm" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "is not a rate" "$tmp/err" && [ ! -s "$tmp/out" ] \
  || { echo "FAIL: --min-rate=5Q: exit $rc"; cat "$tmp/out" "$tmp/err"; exit 1; }
echo "PASS"

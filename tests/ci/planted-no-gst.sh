#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A planted fault for CI: GStreamer hidden from meson.  Without GStreamer the
# gst-plugin feature (auto) leaves the gst, hostile and docs suites out, and
# `meson test` is green having tested less.  This checks, on a real build in
# a temporary directory, that CI does not let that pass:
#
#   1. CI's configure (-Dgst-plugin=enabled, as tests/bootstrap under
#      CI=true) fails when GStreamer is hidden;
#   2. a plain configure (auto) succeeds without GStreamer; its quick suite
#      runs green; .ci/verdict on that run, with the must-run suites
#      unit,gst,hostile,docs and the build's registered tests, exits 1 and
#      names gst, hostile and docs (and only those).
#
# GStreamer is hidden by a pkg-config directory holding every .pc file of the
# system's search path but gstreamer-*: meson's dependency('gstreamer-1.0')
# then finds nothing, as on a machine without libgstreamer1.0-dev.  Nothing
# is uninstalled.  TAP on stdout; ~4 min on 2 cores (a build without the
# plugin and the quick suite).  Not part of `meson test` (it builds the tree
# again): run it by hand, as docs/testing.md says.
#
# usage: tests/ci/planted-no-gst.sh   (from anywhere; BWSS_KEEP=1 keeps the build)
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d /var/tmp/bwss-planted-nogst.XXXXXX)
[ "${BWSS_KEEP:-0}" = 1 ] && echo "# kept: $tmp" || trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
indent() { sed 's/^/#   /'; }

# the system's .pc files, gstreamer-* left out
mkdir "$tmp/pc"
IFS=: read -ra dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${dirs[@]}"; do
  for f in "$d"/*.pc; do
    [ -e "$f" ] || continue
    case $(basename "$f") in gstreamer-*) continue ;; esac
    [ -e "$tmp/pc/$(basename "$f")" ] || ln -s "$f" "$tmp/pc/"
  done
done
export PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH=
if pkg-config --exists gstreamer-1.0; then
  notok "GStreamer hidden from pkg-config (it still finds gstreamer-1.0)"
else
  ok "GStreamer hidden from pkg-config ($(ls "$tmp/pc" | wc -l) .pc files, no gstreamer-*; glib-2.0 $(pkg-config --modversion glib-2.0))"
fi

echo "# \$ meson setup $tmp/ci -Dgst-plugin=enabled -Dlab=enabled   (CI's configure)"
if meson setup "$tmp/ci" "$src" -Dgst-plugin=enabled -Dlab=enabled >"$tmp/setup-ci.log" 2>&1; then
  notok "CI's configure (-Dgst-plugin=enabled) succeeded without GStreamer"
else
  grep -m1 -E 'ERROR|not found' "$tmp/setup-ci.log" | indent
  ok "CI's configure (-Dgst-plugin=enabled) fails without GStreamer"
fi

echo "# \$ meson setup $tmp/b   (auto: GStreamer optional)"
if ! meson setup "$tmp/b" "$src" >"$tmp/setup.log" 2>&1; then
  tail -20 "$tmp/setup.log" | indent
  notok "a plain configure succeeds without GStreamer"
  echo "1..$n"; exit 1
fi
grep -E 'gstreamer-1.0|gst-plugin' "$tmp/setup.log" | head -3 | indent
ok "a plain configure succeeds without GStreamer"
if ! meson compile -C "$tmp/b" >"$tmp/compile.log" 2>&1; then
  tail -20 "$tmp/compile.log" | indent
  notok "the build without GStreamer compiles"
  echo "1..$n"; exit 1
fi
ok "the build without GStreamer compiles ($(grep -c 'warning:' "$tmp/compile.log") warnings)"

echo "# \$ meson test -C $tmp/b --suite quick --num-processes 2"
rc=0
meson test -C "$tmp/b" --suite quick --num-processes 2 --print-errorlogs >"$tmp/test.log" 2>&1 || rc=$?
grep -E '^(Ok|Fail|Skipped|Timeout):' "$tmp/test.log" | tr -s ' ' | paste -sd ' ' | indent
if [ $rc = 0 ]; then ok "the quick suite is green without GStreamer (meson exit 0)"
else notok "the quick suite is green without GStreamer (meson exit $rc)"; grep -E 'FAIL|ERROR|^not ok|^#' "$tmp/test.log" | head -30 | indent; fi

cmd=(python3 "$src/.ci/verdict" --leg planted --suites unit,gst,hostile,docs
     --registered "$tmp/b/meson-info/intro-tests.json" "$tmp/b/meson-logs/testlog.json")
echo "# \$ .ci/verdict --leg planted --suites unit,gst,hostile,docs --registered .../intro-tests.json .../testlog.json"
rc=0
"${cmd[@]}" >"$tmp/verdict.log" 2>&1 || rc=$?
indent <"$tmp/verdict.log"
echo "#   (exit $rc)"
[ $rc = 1 ] && ok "the verdict fails (exit 1)" || notok "the verdict fails (exit $rc, want 1)"
for s in gst hostile docs; do
  if grep -q "^CI: planted: suite $s ran no test" "$tmp/verdict.log"; then ok "the verdict names suite $s"
  else notok "the verdict names suite $s"; fi
done
echo "1..$n"
exit $failed

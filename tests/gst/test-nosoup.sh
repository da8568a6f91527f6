#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Without a libsoup that can be loaded (test-nosoup's libsoup-3.0.so.0 and
# libsoup-2.4.so.1 carry the names and none of the functions), the plugin
# loads, registers its tracer and not bwsshttpsrc, and nothing aborts: asking
# for the element is a clean "no such element", a pipeline that names it a
# clean error.  First the same with the real libsoup, so the checks can fail.
# usage: test-nosoup.sh NOSOUP_DIR TAP_HELPERS
nosoup=$1
. "$2"
echo "1..6"
reg=$(mktemp -d)
trap 'rm -rf "$reg"' EXIT

# a clean failure is an exit status, never a signal (SIGTRAP: 133)
clean_failure () { [ "$1" -ne 0 ] && { [ "$1" -lt 124 ] || [ "$1" -eq 255 ]; }; }

# (meson puts the folder of the libraries a test depends on in LD_LIBRARY_PATH)
env -u LD_LIBRARY_PATH GST_REGISTRY=$reg/real.bin gst-inspect-1.0 bwsshttpsrc >/dev/null 2>&1
rc=$?
check "with a libsoup, bwsshttpsrc is registered (exit $rc)" '[ $rc -eq 0 ]'

out=$(LD_LIBRARY_PATH=$nosoup GST_REGISTRY=$reg/none.bin gst-inspect-1.0 bwss 2>&1)
rc=$?
check "without: the plugin loads (gst-inspect-1.0 bwss exits $rc)" '[ $rc -eq 0 ]'
check "without: its tracer is registered" 'echo "$out" | grep -q GstBwssTracer'
check "without: bwsshttpsrc is not" '! echo "$out" | grep -q bwsshttpsrc'

LD_LIBRARY_PATH=$nosoup GST_REGISTRY=$reg/none.bin gst-inspect-1.0 bwsshttpsrc >/dev/null 2>&1
rc=$?
check "without: asking for bwsshttpsrc is a clean failure (exit $rc)" 'clean_failure $rc'

LD_LIBRARY_PATH=$nosoup GST_REGISTRY=$reg/none.bin \
  timeout 30 gst-launch-1.0 -q bwsshttpsrc location=http://127.0.0.1:9/x ! fakesink >/dev/null 2>&1
rc=$?
check "without: a pipeline naming it fails cleanly (exit $rc)" 'clean_failure $rc'
exit $([ $failed -eq 0 ] && echo 0 || echo 1)

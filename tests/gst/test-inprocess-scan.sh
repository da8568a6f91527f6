#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A registry scan inside the application (GST_REGISTRY_FORK=no, as sandboxed
# and embedded applications run it) loads the plugin inside gst_init(),
# before GStreamer's tracing takes hooks: the plugin must load there without
# a critical warning (fatal here: G_DEBUG=fatal-criticals), and its tracer
# must still follow the adaptive demuxers once a bwsshttpsrc is made.  First
# the same scan with our plugin out of the path, so the checks can fail only
# on ours.
# usage: test-inprocess-scan.sh TAP_HELPERS   (GST_PLUGIN_PATH: the build's plugin)
. "$1"
echo "1..4"
reg=$(mktemp -d)
trap 'rm -rf "$reg"' EXIT
export GST_REGISTRY_FORK=no G_DEBUG=fatal-criticals
# the system's plugins out of the scan (their own faults are not ours to
# test), but for the core elements (fakesink)
mkdir "$reg/system"
ln -s "$(pkg-config --variable=pluginsdir gstreamer-1.0)/libgstcoreelements.so" "$reg/system/"
export GST_PLUGIN_SYSTEM_PATH_1_0=$reg/system

out=$(GST_PLUGIN_PATH= GST_REGISTRY=$reg/none.bin gst-inspect-1.0 coreelements 2>&1)
rc=$?
check "without our plugin, an in-process scan is clean (exit $rc)" '[ $rc -eq 0 ]'

out=$(GST_REGISTRY=$reg/ours.bin gst-inspect-1.0 bwss 2>&1)
rc=$?
check "with it: gst-inspect-1.0 bwss exits $rc, no critical warning" \
  '[ $rc -eq 0 ] && ! echo "$out" | grep -q CRITICAL && echo "$out" | grep -q GstBwssTracer'

# a fresh registry again: the plugin is loaded by the scan, then an element made
out=$(GST_REGISTRY=$reg/launch.bin GST_DEBUG=bwsswatch:4 timeout 30 \
      gst-launch-1.0 -q bwsshttpsrc location=http://127.0.0.1:9/x ! fakesink 2>&1)
rc=$?
check "a pipeline after the scan: no critical warning, a clean failure (exit $rc)" \
  '[ $rc -ne 0 ] && [ $rc -lt 124 ] && ! echo "$out" | grep -q CRITICAL'
check "its bwsshttpsrc installed the tracer's hooks" 'echo "$out" | grep -q "following adaptive demuxers"'
exit $([ $failed -eq 0 ] && echo 0 || echo 1)

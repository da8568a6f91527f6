/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plugin.c — the "bwss" plugin: the bwsshttpsrc element and the bwss
 * tracer.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gstbwsshttpsrc.h"
#include "gstbwsstracer.h"
#include "souploader.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
GST_DEBUG_CATEGORY_EXTERN (bwss_watch_debug);

static gboolean
plugin_init (GstPlugin *plugin)
{
  GST_DEBUG_CATEGORY_INIT (bwss_http_src_debug, "bwsshttpsrc", 0, "BWSS HTTP source");
  GST_DEBUG_CATEGORY_INIT (bwss_watch_debug, "bwsswatch", 0, "bwss: adaptive demuxers and their flows");
  /* above souphttpsrc (PRIMARY) so playbin, uridecodebin and the adaptive
   * demuxers pick it; GST_PLUGIN_FEATURE_RANK=bwsshttpsrc:NONE demotes it.
   * It runs on the process's libsoup (souploader.h): without one that can
   * be loaded there is no bwsshttpsrc (souphttpsrc has none either), but
   * the tracer, which needs none, still is. */
  if (lsoup_load ()) {
    if (!gst_element_register (plugin, "bwsshttpsrc", GST_RANK_PRIMARY + 1, GST_TYPE_BWSS_HTTP_SRC))
      return FALSE;
  } else {
    GST_WARNING ("no libsoup 3 or 2.4 can be loaded: bwsshttpsrc not registered");
  }
  if (!gst_tracer_register (plugin, "bwss", GST_TYPE_BWSS_TRACER))
    return FALSE;
  /* The adaptive demuxers are followed from the first bwsshttpsrc made
   * (gst_bwss_tracer_ensure()), not from here: a registry scan inside
   * gst_init() (GST_REGISTRY_FORK=no) loads every plugin before GStreamer's
   * tracing can take a hook. */
  return TRUE;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, bwss,
    "Receiver-driven bandwidth sharing: an HTTP source that puts the video first",
    plugin_init, PACKAGE_VERSION, "LGPL", "bwss", "bwss")

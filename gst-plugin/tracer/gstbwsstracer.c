/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gstbwsstracer.c — the "bwss" tracer (see gstbwsstracer.h).  Two hooks:
 * element-new (a demuxer of either adaptive stack is watched from its
 * creation, so its manifest is seen) and element-post-message-pre (the
 * demuxers' variant switches).  Both return at once for anything else.
 */
#include "adaptivewatch.h"
#include "demux2flows.h"
#include "gstbwsstracer.h"

GST_DEBUG_CATEGORY (bwss_watch_debug);
#define GST_CAT_DEFAULT bwss_watch_debug

struct _GstBwssTracer {
  GstTracer parent;
};

G_DEFINE_TYPE (GstBwssTracer, gst_bwss_tracer, GST_TYPE_TRACER)

static gint hooks_installed;

static void
on_element_new (GObject *self, GstClockTime ts, GstElement *element)
{
  gboolean v2 = FALSE;
  if (!adaptive_is_demuxer (element, &v2))
    return;
  adaptive_watch_add (element);
  if (v2)
    demux2_flows_start ();
}

static void
on_post_message (GObject *self, GstClockTime ts, GstElement *element, GstMessage *message)
{
  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_ELEMENT)
    adaptive_watch_message (GST_OBJECT (element), message);
}

static void
gst_bwss_tracer_constructed (GObject *object)
{
  G_OBJECT_CLASS (gst_bwss_tracer_parent_class)->constructed (object);
  if (g_atomic_int_compare_and_exchange (&hooks_installed, 0, 1)) {
    gst_tracing_register_hook (GST_TRACER (object), "element-new", G_CALLBACK (on_element_new));
    gst_tracing_register_hook (GST_TRACER (object), "element-post-message-pre",
                               G_CALLBACK (on_post_message));
    GST_INFO_OBJECT (object, "following adaptive demuxers");
  }
}

static void
gst_bwss_tracer_class_init (GstBwssTracerClass *klass)
{
  G_OBJECT_CLASS (klass)->constructed = gst_bwss_tracer_constructed;
}

static void
gst_bwss_tracer_init (GstBwssTracer *self)
{
}

void
gst_bwss_tracer_ensure (void)
{
  if (g_atomic_int_get (&hooks_installed) || g_strcmp0 (g_getenv ("BWSS_ADAPTIVE"), "0") == 0)
    return;
  GstTracer *t = g_object_new (GST_TYPE_BWSS_TRACER, NULL);
  /* the hooks hold their own references */
  gst_object_ref_sink (t);
  gst_object_unref (t);
}

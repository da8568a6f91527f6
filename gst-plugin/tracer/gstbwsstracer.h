/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gstbwsstracer.h — the "bwss" tracer: follows the adaptive demuxers of
 * the process (adaptivewatch.c) and, for adaptivedemux2, puts their own
 * connections in the BWSS domain (demux2flows.c).
 *
 * The first bwsshttpsrc of a process makes one, so any application that
 * loads bwsshttpsrc — every pipeline that makes an http(s) source from a
 * URI, which picks bwsshttpsrc by rank, a playlist's included, before its
 * demuxer exists — is covered with no change;
 * GST_TRACERS=bwss loads it in any GStreamer application from gst_init().
 * Either way only one set of hooks is installed.
 */
#ifndef GST_BWSS_TRACER_H
#define GST_BWSS_TRACER_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_BWSS_TRACER (gst_bwss_tracer_get_type ())
G_DECLARE_FINAL_TYPE (GstBwssTracer, gst_bwss_tracer, GST, BWSS_TRACER, GstTracer)

/* Makes the process's tracer if none exists yet and BWSS_ADAPTIVE is not
 * "0" (each bwsshttpsrc made: not plugin_init, which a registry scan inside
 * gst_init() runs before GStreamer's tracing can take a hook). */
void gst_bwss_tracer_ensure (void);

G_END_DECLS

#endif

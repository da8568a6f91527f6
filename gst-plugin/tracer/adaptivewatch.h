/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adaptivewatch.h — what the adaptive demuxers of this process are playing.
 *
 * For each demuxer of either GStreamer stack (legacy GstAdaptiveDemux:
 * hlsdemux, dashdemux; GstAdaptiveDemux2: hlsdemux2, dashdemux2), learnt
 * from what 1.22 exposes:
 *   - the bitrate ladder, parsed from the manifest as it enters the
 *     demuxer's sink pad (a pad probe; manifest.c);
 *   - the variant in use: the first one listed at the start (both HLS
 *     demuxers start on the master playlist's first variant while
 *     connection-speed is 0, else on the highest one below it), then the
 *     "bitrate" of every adaptive-streaming-statistics message, which the
 *     HLS demuxers of both stacks post at each switch (DASH posts none: its
 *     variant stays unknown and the ABR rule works from σ alone);
 *   - the bandwidth-usage factor, read from the demuxer's own property
 *     (bitrate-limit, or bandwidth-target-ratio for adaptivedemux2);
 *   - the servers: the manifest's URI (after redirection) and every
 *     absolute URI the manifest names;
 *   - adaptivedemux2 only: its buffer, current-level-time-video (audio for
 *     a stream without video) against its target, high-watermark-time
 *     (max-buffering-time when that is 0); the legacy demuxers expose none.
 * The tracer (gstbwsstracer.c) feeds it; bwsshttpsrc reads it for the
 * fragments of a legacy demuxer, and demux2flows.c for adaptivedemux2.
 * Every function is thread-safe.
 */
#ifndef BWSS_SRC_ADAPTIVEWATCH_H
#define BWSS_SRC_ADAPTIVEWATCH_H

#include <gst/gst.h>

typedef struct {
  gboolean  v2;            /* an adaptivedemux2 demuxer */
  GArray   *ladder;        /* guint64 bit/s, ascending (may be empty) */
  guint64   current;       /* the variant in use, 0 = unknown */
  double    usage;         /* the bandwidth-usage factor */
  gchar   **servers;       /* "host:port" of every server named, NULL-terminated */
  gboolean  active;        /* the demuxer is PAUSED or PLAYING */
  gint64    level_ns;      /* the buffered level, ns; -1 unknown */
  guint64   target_ns;     /* the demuxer's buffering target, ns; 0 unknown */
} AdaptiveState;

/* TRUE if @e is an adaptive demuxer of either stack. */
gboolean    adaptive_is_demuxer (GstElement *e, gboolean *v2);
/* The legacy demuxer a fragment source belongs to (it lives in the
 * demuxer's "srcbin-*" bin), with a reference; NULL for any other source. */
GstElement *adaptive_demuxer_of_source (GstElement *src);
/* Starts watching @demux (idempotent; a demuxer found late has no ladder). */
void        adaptive_watch_add (GstElement *demux);
/* A message posted by @src (the tracer's element-post-message hook). */
void        adaptive_watch_message (GstObject *src, GstMessage *msg);
/* Fills @out for a watched demuxer; FALSE if it is not watched. */
gboolean    adaptive_watch_get (GstElement *demux, AdaptiveState *out);
void        adaptive_state_clear (AdaptiveState *st);
/* The watched adaptivedemux2 demuxers (references), for demux2flows.c. */
GPtrArray  *adaptive_watch_list_v2 (void);

#endif

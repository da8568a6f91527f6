/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef GST_BWSS_HTTP_SRC_H
#define GST_BWSS_HTTP_SRC_H

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include "bitrate.h"
#include "deadline.h"
#include "httpclient.h"
#include "srcflow.h"
#include "srcstats.h"

G_BEGIN_DECLS

#define GST_TYPE_BWSS_HTTP_SRC (gst_bwss_http_src_get_type ())
G_DECLARE_FINAL_TYPE (GstBwssHttpSrc, gst_bwss_http_src, GST, BWSS_HTTP_SRC, GstPushSrc)

struct _GstBwssHttpSrc {
  GstPushSrc parent;

  /* properties (souphttpsrc's) */
  gchar       *location;
  gchar       *redirection_uri;
  HttpConfig   http;             /* what requests are made with */
  gboolean     is_live;
  gint         retries;
  gdouble      retry_backoff_factor; /* s (GStreamer >= 1.26); under the object lock */
  gdouble      retry_backoff_max;    /* s */
  gchar       *method;
  gboolean     typefind;

  /* properties (bwss) */
  gint         priority;
  gdouble      weight;
  guint64      min_rate;         /* bit/s, 0 = automatic */
  gdouble      rate_headroom;
  guint64      bitrate;          /* hint, bit/s, 0 = unknown */
  guint64      stats_interval;   /* ns */

  /* reading */
  HttpClient  *client;
  GMutex       client_lock;      /* the streaming thread while in create(); a HEAD probe */
  GCancellable *cancellable;     /* cancelled by unlock() (flushing) */
  gboolean     open;             /* a response's body is being read */
  gboolean     seeking;          /* the open request is for a seek */
  guint64      offset;           /* next byte to read */
  guint64      seek_to;          /* pending seek, or G_MAXUINT64 */
  gboolean     have_size;
  guint64      content_size;
  gboolean     seekable;
  gboolean     know_seekable;
  gboolean     got_headers;

  /* one read position's attempts (the retry policy) */
  guint64      position;         /* the offset they are for */
  gint         attempts;
  gint         since_byte;       /* requests since its last byte (or its start): the backoff's */
  gint64       position_deadline; /* µs; 0 = none */
  GCancellable *attempt_cancel;  /* this attempt's: flushing or the deadline */
  gulong       attempt_link;
  Deadline    *deadline;

  /* bwss */
  SrcFlow      flow;
  SrcStats     stats;
  ConsumptionMeter meter;
  BitrateChoice choice;
  GstElement  *demuxer;          /* the legacy adaptive demuxer fetching with us */
};

G_END_DECLS

#endif

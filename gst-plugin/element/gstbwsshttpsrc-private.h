/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gstbwsshttpsrc-private.h — bwsshttpsrc's fields, and who may touch each.
 *
 * Threads:
 *   - the application's: set_property/get_property (any thread, at any
 *     time: the BWSS preferences are GST_PARAM_MUTABLE_PLAYING), state
 *     changes (start, stop), queries (is_seekable's HEAD probe, get_size,
 *     the URI query), unlock/unlock_stop (flushing);
 *   - the streaming thread: create() and what it calls (requests, reading,
 *     refresh_stream, the flow's on_connected callback, which libsoup calls
 *     in the requesting thread);
 *   - the deadline's timer thread (deadline.c: its own lock) and the bus
 *     (messages are posted, never read back).
 *
 * Locks, in the order they are taken (never the other way round):
 *   client_lock  → prefs_lock → flow.lock → stats.lock
 *   OBJECT_LOCK is held only around plain field accesses (no call out, no
 *   logging under it: a GST_*_OBJECT log line may take it).
 *
 * What each is for:
 *   OBJECT_LOCK   the souphttpsrc properties, the resource's facts that a
 *                 query reads (size, seekability), redirection_uri and the
 *                 cancellable's pointer.
 *   prefs_lock    the BWSS preferences and the bitrate learned: whoever
 *                 changes one (a setter, the streaming thread) computes
 *                 and applies the flow's preferences under it, so the flow
 *                 ends up with the last value set (no update lost between
 *                 reading the properties and applying them).
 *   client_lock   the HTTP client: held by create() for its whole call and
 *                 by the HEAD probe (which only tries it).
 *   flow.lock, stats.lock  their own structures (srcflow.h, srcstats.h).
 * "Streaming thread only" fields need no lock: every other access happens
 * while create() cannot run (start/stop, or unlock_stop and do_seek, which
 * GstBaseSrc calls with the streaming thread held out).
 */
#ifndef GST_BWSS_HTTP_SRC_PRIVATE_H
#define GST_BWSS_HTTP_SRC_PRIVATE_H

#include "gstbwsshttpsrc.h"
#include "abrrule.h"
#include "bitrate.h"
#include "deadline.h"
#include "httpclient.h"
#include "srcflow.h"
#include "srcstats.h"
#include "srcstripes.h"
#include "stripes.h"

G_BEGIN_DECLS

/* What a request is made with: a copy of the properties, taken under the
 * OBJECT_LOCK when an attempt begins (src_props_take_request), so the
 * application may set them while the request runs (it applies from the
 * next request, as with souphttpsrc).  Streaming thread only. */
typedef struct {
  HttpConfig   http;
  gchar       *location;
  gchar       *method;           /* NULL = GET */
  gint         retries;
  gdouble      retry_backoff_factor; /* s */
  gdouble      retry_backoff_max;    /* s */
} SrcRequest;

struct _GstBwssHttpSrc {
  GstPushSrc parent;

  /* properties (souphttpsrc's).  Protected by OBJECT_LOCK; the streaming
   * thread reads its copy (req).  location also changes only below PAUSED. */
  gchar       *location;
  HttpConfig   http;             /* what requests are made with */
  gboolean     is_live;
  gint         retries;
  gdouble      retry_backoff_factor; /* s (GStreamer >= 1.26) */
  gdouble      retry_backoff_max;    /* s */
  gchar       *method;
  gboolean     typefind;
  guint64      stats_interval;   /* ns */
  guint        connections;      /* the most connections while striping */
  StripingPolicy striping;

  /* properties (bwss).  Protected by prefs_lock */
  GMutex       prefs_lock;
  gint         priority;
  gdouble      weight;
  guint64      min_rate;         /* bit/s, 0 = automatic */
  gdouble      rate_headroom;
  guint64      bitrate;          /* hint, bit/s, 0 = unknown */
  BitrateChoice learned;         /* what the bitrate sources said last
                                  * (refresh_stream publishes it) */
  gboolean     fetching;         /* a request is open (player_prefs, abrrule.h) */
  PlayerBuffer buffer;           /* the player's buffer as the meter sees it */

  /* Written by the streaming thread holding OBJECT_LOCK; read by other
   * threads under OBJECT_LOCK, by the streaming thread without */
  gchar       *redirection_uri;
  /* Written by start/stop and unlock_stop (create() cannot run) holding
   * OBJECT_LOCK; unlock() and the HEAD probe take a reference under
   * OBJECT_LOCK; the streaming thread reads it without */
  GCancellable *cancellable;     /* cancelled by unlock() (flushing) */

  /* the resource's facts.  Written holding both client_lock and
   * OBJECT_LOCK (create(), the HEAD probe; start with neither running);
   * read holding either */
  gboolean     have_size;
  guint64      content_size;
  gboolean     seekable;
  gboolean     know_seekable;
  gboolean     ranges;           /* the server takes ranges (a 206, or
                                  * "Accept-Ranges: bytes") */

  /* reading */
  HttpClient  *client;           /* Protected by client_lock */
  GMutex       client_lock;
  /* Streaming thread only (create() holds client_lock; the HEAD probe
   * reads open under it); seek_to is written by do_seek, which GstBaseSrc
   * calls with the stream lock held (create() cannot run) */
  SrcRequest   req;              /* the open request's settings */
  gboolean     open;             /* a response's body is being read */
  gboolean     seeking;          /* the open request is for a seek */
  guint64      offset;           /* next byte to read */
  guint64      seek_to;          /* pending seek, or G_MAXUINT64 */
  gboolean     got_headers;

  /* one read position's attempts (the retry policy).  Streaming thread
   * only */
  guint64      position;         /* the offset they are for */
  gint         attempts;
  gint         since_byte;       /* requests since its last byte (or its start): the backoff's */
  gint64       position_deadline; /* µs; 0 = none */
  GCancellable *attempt_cancel;  /* this attempt's: flushing or the deadline */
  gulong       attempt_link;
  Deadline    *deadline;

  /* reading over n connections (stripes.h, srcstripes.h).  Streaming
   * thread only, and start/stop, unlock_stop and do_seek (create() out) */
  SrcStripes  *stripes;          /* NULL: one connection */
  guint64      stripes_from;     /* their first byte: the open request reads
                                  * on to it (stripes.h eq. 4) */
  StripeMode   stripe_mode;
  gint64       next_phase_us;    /* when the loop's phase is read next, µs */

  /* bwss */
  SrcFlow      flow;             /* its own lock: any thread */
  SrcStats     stats;            /* its own lock: any thread */
  ConsumptionMeter meter;        /* streaming thread only */
  BitrateChoice choice;          /* streaming thread only: bitrate_choose's
                                  * state (the ABR rule's last choice) */
  GstElement  *demuxer;          /* the legacy adaptive demuxer fetching with
                                  * us; written by start/stop, read by the
                                  * streaming thread */
};

G_END_DECLS

#endif

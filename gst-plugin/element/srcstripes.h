/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcstripes.h — bwsshttpsrc's reading over n connections: stripes.h's plan
 * on threads.
 *
 * n worker threads, each with its own HttpClient (its own libsoup session,
 * made, used and freed in that thread only, as libsoup requires), fetch the
 * plan's chunks with bounded ranges (Range: bytes=a-b) and write them into
 * the reorder buffer; the streaming thread takes the bytes in offset order
 * (src_stripes_read).
 *
 * Each connection is a stripe flow (srcflow.h): the element's preferences,
 * in the element's stream, so that the video's minimum counts once.  A live
 * source makes its bytes as the stream goes, so consecutive ranges are
 * served in turn and each connection carries the whole rate for its chunk
 * and nothing for n - 1 (stripes.h, eq. 1): judged against its own part
 * of the minimum, a connection between its turns would read as the video
 * short.  The delay loop judges a group with a minimum as one stream, its
 * members' rates and minima summed (libbwss/lib/laws/capacity-model.c,
 * G1-G3), so the n connections are the video to it.
 *
 * A failure on one connection is that connection's to cure: it asks again
 * for the rest of its chunk, from the byte it got to (a new request, on a
 * new connection if the old one broke), up to retries + 1 requests without
 * a byte, as the element's retry policy bounds one read position; each I/O
 * operation is bounded by the session's timeout.  So a byte is written once
 * into its place, never twice and never skipped.  What another request
 * would repeat (an HTTP error, the resource changed) ends the reading with
 * that error.  A server that answers a range with the whole resource takes
 * no ranges: the reading ends with STRIPES_NO_RANGES once the bytes before
 * the gap went out.
 *
 * Locks: the set's own, never held while calling out (libsoup, the flow, a
 * cancellable); a worker's flow lock, then the element's flow's.
 */
#ifndef BWSS_SRC_STRIPES_IO_H
#define BWSS_SRC_STRIPES_IO_H

#include <gst/gst.h>
#include "httpclient.h"
#include "srcflow.h"
#include "stripes.h"

typedef struct SrcStripes SrcStripes;

/* What the reading is made with.  http and uri become the set's. */
typedef struct {
  GstObject   *owner;          /* for the debug log */
  HttpConfig   http;
  gchar       *uri;
  gint         retries;        /* -1: no limit */
  guint64      from;           /* the first byte */
  guint64      size;           /* the resource's */
  guint64      chunk;          /* bytes (stripes.h eq. 1) */
  guint        connections;    /* n */
  SrcFlow     *flow;           /* the element's: the stripe flows' parent */
  GCancellable *flushing;      /* the element's: cancels the reading */
  HttpAcceptCertificateFunc accept_certificate;  /* may be NULL */
  gpointer     accept_data;
} SrcStripesSetup;

typedef enum {
  STRIPES_BYTES,               /* a buffer of the next bytes */
  STRIPES_END,                 /* every byte before the stop went out */
  STRIPES_FLUSHING,            /* cancelled */
  STRIPES_ERROR,               /* a connection failed for good (@error) */
  STRIPES_NO_RANGES,           /* the server takes no ranges */
} StripesRead;

/* Starts the workers. */
SrcStripes *src_stripes_new (SrcStripesSetup *setup);
/* Waits for the next bytes (at most @max) in offset order: STRIPES_BYTES
 * with *@buf (its offsets set), or why there are none. */
StripesRead src_stripes_read (SrcStripes *s, gsize max, GstBuffer **buf, GError **error);
/* Assigns no more chunks: the reading ends after those fetched now. */
void        src_stripes_narrow (SrcStripes *s);
/* Cancels, joins every worker (their sessions and flows go with them) and
 * frees. */
void        src_stripes_free (SrcStripes *s);

#endif

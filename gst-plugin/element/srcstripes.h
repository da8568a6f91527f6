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
 * The connections are not handed to bwssd: the kernel's windows, as plain
 * TCP.  A live source makes its bytes as the stream goes, so consecutive
 * ranges are served in turn and each connection carries the whole rate
 * for its chunk and nothing for n - 1 (stripes.h, eq. 1).  The loop judges
 * each flow against its own minimum, decision by decision: registered with
 * 1/n of the video's, a connection between its turns reads as a video
 * flow short of its minimum, and the loop then yields, leaves COMPETE, or
 * never enters it.  In the fluid model (docs/household.md, "the frontier")
 * with every flow plain and the video over three connections, the video is
 * at its minimum in 98.6-100 % of the seconds and this machine at
 * 99.8-101.5 % of plain TCP's total; with the connections registered
 * (each carrying 1/n at once, which a live source's turns do not) 99.6-100 %
 * and 94.6-95.6 %.  The video plain beside downloads under the law was not
 * modelled.
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
 * Locks: the set's own, never held while calling out (libsoup, a
 * cancellable).
 */
#ifndef BWSS_SRC_STRIPES_IO_H
#define BWSS_SRC_STRIPES_IO_H

#include <gst/gst.h>
#include "httpclient.h"
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
/* Cancels, joins every worker (their sessions go with them) and
 * frees. */
void        src_stripes_free (SrcStripes *s);

#endif

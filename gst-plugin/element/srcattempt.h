/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcattempt.h — bwsshttpsrc's attempts at one read position: the retry
 * policy, and the error posted when it gives up.
 *
 * A seek or a retry is a new request from the current offset.  The retry
 * policy (may_retry) bounds one read position: at most retries + 1 requests
 * (a response that brings no byte does not reset the count; a byte does),
 * and, with a timeout, at most timeout × (retries + 1) seconds without a
 * byte, enforced by a deadline over every operation of the position
 * (deadline.c).  Each attempt has its own cancellable, cancelled by a flush
 * (the element's cancellable) or by the deadline.
 *
 * What is retried: what the client says another attempt may cure
 * (HTTP_RETRY), a body cut or stalled, and — built against GStreamer 1.26,
 * like its souphttpsrc — an HTTP 500 or 503.  With 1.26's
 * retry-backoff-factor f > 0, the n-th request since the position's last
 * byte (n >= 2) waits min (f × 2^(n-1), retry-backoff-max) seconds first,
 * as souphttpsrc 1.26 does; a flush cuts the wait short, and the wait does
 * not count towards the position's deadline.
 *
 * The error is souphttpsrc's for the HTTP_ERROR code (httperror.h): 404 →
 * RESOURCE/NOT_FOUND, 401/402/403/407 → NOT_AUTHORIZED, a seek the server
 * cannot do → SEEK, a failure while reading → READ, else OPEN_READ; HTTP
 * statuses carry http-status-code (and http-redirect-uri) details.
 */
#ifndef BWSS_SRC_ATTEMPT_H
#define BWSS_SRC_ATTEMPT_H

#include "gstbwsshttpsrc-private.h"

/* Counts an attempt at the current position, waits the retry backoff if
 * any, and makes the attempt's cancellable: cancelled by a flush or by the
 * position's deadline.  FALSE if a flush came during the wait (no attempt
 * is made: GST_FLOW_FLUSHING). */
gboolean      src_attempt_begin (GstBwssHttpSrc *src);
/* A flush ended: the next request starts the backoff over (souphttpsrc). */
void          src_attempt_flushed (GstBwssHttpSrc *src);
/* Bytes arrived: the position moved; the request that brought them is its
 * first attempt, and its deadline starts over. */
void          src_attempt_progress (GstBwssHttpSrc *src);
/* Ends the open request (and its attempt's cancellable and deadline). */
void          src_attempt_close (GstBwssHttpSrc *src);
/* A failure of the current attempt (takes @err): another attempt
 * (GST_FLOW_CUSTOM_ERROR) if @retryable (or a 500 or 503 with GStreamer
 * >= 1.26) and allowed, else the error is
 * posted and the flow released (GST_FLOW_ERROR); GST_FLOW_FLUSHING when
 * cancelled by a flush.  The request is closed in every case. */
GstFlowReturn src_attempt_failed (GstBwssHttpSrc *src, GError *err, gboolean retryable);
/* Posts the error for @err (HTTP_ERROR domain) as the retry policy does
 * when it gives up: for a failure of reading over n connections. */
void          src_attempt_post_error (GstBwssHttpSrc *src, const GError *err);

#endif

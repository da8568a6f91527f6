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
 * The error is souphttpsrc's for the HTTP_ERROR code (httperror.h): 404 →
 * RESOURCE/NOT_FOUND, 401/402/403/407 → NOT_AUTHORIZED, a seek the server
 * cannot do → SEEK, a failure while reading → READ, else OPEN_READ; HTTP
 * statuses carry http-status-code (and http-redirect-uri) details.
 */
#ifndef BWSS_SRC_ATTEMPT_H
#define BWSS_SRC_ATTEMPT_H

#include "gstbwsshttpsrc.h"

/* Counts an attempt at the current position and makes its cancellable:
 * cancelled by a flush or by the position's deadline. */
void          src_attempt_begin (GstBwssHttpSrc *src);
/* Bytes arrived: the position moved; the request that brought them is its
 * first attempt, and its deadline starts over. */
void          src_attempt_progress (GstBwssHttpSrc *src);
/* Ends the open request (and its attempt's cancellable and deadline). */
void          src_attempt_close (GstBwssHttpSrc *src);
/* A failure of the current attempt (takes @err): another attempt
 * (GST_FLOW_CUSTOM_ERROR) if @retryable and allowed, else the error is
 * posted and the flow released (GST_FLOW_ERROR); GST_FLOW_FLUSHING when
 * cancelled by a flush.  The request is closed in every case. */
GstFlowReturn src_attempt_failed (GstBwssHttpSrc *src, GError *err, gboolean retryable);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcattempt.c — one read position's attempts: the retry policy, and the
 * error posted when it gives up (see srcattempt.h). */
#include <math.h>
#include "srcattempt.h"
#include "srcprops.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

/* Posts the error for @err (HTTP_ERROR domain), like souphttpsrc: 404 →
 * RESOURCE/NOT_FOUND, 401/402/403/407 → NOT_AUTHORIZED, a seek the server
 * cannot do → SEEK, a failure while reading → READ, else OPEN_READ; HTTP
 * statuses carry http-status-code (and http-redirect-uri) details. */
static void
post_http_error (GstBwssHttpSrc *src, const GError *err)
{
  SoupMessage *msg = http_client_message (src->client);
  guint status = msg ? lsoup_message_get_status (msg) : 0;
  gint code = GST_RESOURCE_ERROR_OPEN_READ;
  const char *text = "Could not establish connection to server.";
  GstStructure *details = NULL;
  switch (err->code) {
    case HTTP_ERROR_NOT_FOUND:
    case HTTP_ERROR_NOT_AUTHORIZED:
    case HTTP_ERROR_UNAVAILABLE:
    case HTTP_ERROR_STATUS:
      code = err->code == HTTP_ERROR_NOT_FOUND ? GST_RESOURCE_ERROR_NOT_FOUND
           : err->code == HTTP_ERROR_NOT_AUTHORIZED ? GST_RESOURCE_ERROR_NOT_AUTHORIZED
           : GST_RESOURCE_ERROR_OPEN_READ;
      text = err->message;
      details = gst_structure_new ("details", "http-status-code", G_TYPE_UINT, status, NULL);
      if (status >= 300 && status <= 399) {
        const char *loc = lsoup_message_headers_get_one (lsoup_message_get_response_headers (msg),
                                                             "Location");
        if (loc)
          gst_structure_set (details, "http-redirect-uri", G_TYPE_STRING, loc, NULL);
      }
      break;
    case HTTP_ERROR_NO_RANGES:
      if (src->seeking) {
        code = GST_RESOURCE_ERROR_SEEK;
        text = "Server does not accept Range HTTP header.";
      } else {
        code = GST_RESOURCE_ERROR_READ;
        text = "The server cannot resume the download.";
      }
      break;
    case HTTP_ERROR_WRONG_RANGE:
    case HTTP_ERROR_CHANGED:
      code = src->offset > 0 ? GST_RESOURCE_ERROR_READ : GST_RESOURCE_ERROR_OPEN_READ;
      text = "The server sent other data than was asked for.";
      break;
    case HTTP_ERROR_BAD_RESPONSE:
    case HTTP_ERROR_BAD_FRAMING:
      code = src->offset > 0 ? GST_RESOURCE_ERROR_READ : GST_RESOURCE_ERROR_OPEN_READ;
      text = "Server sent bad data.";
      break;
    case HTTP_ERROR_TOO_MANY_REDIRECTS:
      text = "Too many redirects.";
      break;
    case HTTP_ERROR_TLS:
      text = "Secure connection setup failed.";
      break;
    case HTTP_ERROR_TIMEOUT:
      code = src->offset > 0 ? GST_RESOURCE_ERROR_READ : GST_RESOURCE_ERROR_OPEN_READ;
      text = "The server stopped sending.";
      break;
    case HTTP_ERROR_TRUNCATED:
    case HTTP_ERROR_READ:
      code = GST_RESOURCE_ERROR_READ;
      text = "A network error occurred, or the server closed the connection unexpectedly.";
      break;
    case HTTP_ERROR_BAD_URI:
      text = "Error parsing URL.";
      break;
    default:
      break;
  }
  gchar *debug = g_strdup_printf ("%s (at byte %" G_GUINT64_FORMAT ", attempt %d), URL: %s, Redirect to: %s",
                                  err->message, src->offset, src->attempts, src->req.location,
                                  src->redirection_uri ? src->redirection_uri : "(NULL)");
  gst_element_message_full_with_details (GST_ELEMENT (src), GST_MESSAGE_ERROR, GST_RESOURCE_ERROR, code,
                                         g_strdup (text), debug, __FILE__, GST_FUNCTION, __LINE__, details);
}

void
src_attempt_post_error (GstBwssHttpSrc *src, const GError *err)
{
  if (err->domain == HTTP_ERROR) {
    post_http_error (src, err);
  } else {
    GError *e = g_error_new (HTTP_ERROR, HTTP_ERROR_READ, "%s", err->message);
    post_http_error (src, e);
    g_error_free (e);
  }
}

/* Returns TRUE if the current read position may have another attempt:
 * fewer than retries + 1 made (retries -1: no limit) and its deadline not
 * passed.  The one retry condition of the element. */
static gboolean
may_retry (GstBwssHttpSrc *src)
{
  if (src->position_deadline && g_get_monotonic_time () >= src->position_deadline)
    return FALSE;
  return src->req.retries < 0 || src->attempts <= src->req.retries;
}

/* TRUE if a failure with @err is retried although the client did not say
 * so: a 500 or a 503, when built against GStreamer 1.26 (its souphttpsrc
 * retries them; 1.22's and 1.24's post the error at once). */
static gboolean
retried_status (const GError *err)
{
#if GST_CHECK_VERSION(1, 26, 0)
  return g_error_matches (err, HTTP_ERROR, HTTP_ERROR_UNAVAILABLE);
#else
  return FALSE;
#endif
}

/* Sleeps @secs seconds unless @cancellable fires first; returns the time
 * slept, µs. */
static gint64
sleep_unless_cancelled (GCancellable *cancellable, double secs)
{
  gint64 start = g_get_monotonic_time ();
  /* no overflow for an absurd wait (the range goes to G_MAXDOUBLE) */
  double us = MIN (secs * G_USEC_PER_SEC, (double) (G_MAXINT64 / 4));
  gint64 end = start + (gint64) us;
  GPollFD pfd;
  gboolean pollable = g_cancellable_make_pollfd (cancellable, &pfd);
  for (gint64 now = start; now < end && !g_cancellable_is_cancelled (cancellable);
       now = g_get_monotonic_time ()) {
    gint64 ms = MIN ((end - now + 999) / 1000, (gint64) G_MAXINT);
    if (pollable)
      g_poll (&pfd, 1, (gint) ms);
    else
      g_usleep ((gulong) MIN (end - now, (gint64) 10000));
  }
  if (pollable)
    g_cancellable_release_fd (cancellable);
  return g_get_monotonic_time () - start;
}

/* souphttpsrc 1.26's retry backoff, before the request about to be made
 * (the since_byte-th since the position's last byte): from the second on,
 * min (factor × 2^(since_byte - 1), max) seconds, cut short by a flush.  The
 * wait moves the position's deadline: it bounds the server's silence, not
 * ours.  Returns FALSE if a flush came. */
static gboolean
wait_backoff (GstBwssHttpSrc *src)
{
  double factor = src->req.retry_backoff_factor, max = src->req.retry_backoff_max;
  if (src->since_byte < 2 || !(factor > 0.0))
    return TRUE;
  double secs = MIN (ldexp (factor, MIN (src->since_byte - 1, 1100)), max);
  if (!(secs > 0.0))
    return TRUE;
  GST_INFO_OBJECT (src, "backoff for %.2f s before request %d at byte %" G_GUINT64_FORMAT,
                   secs, src->since_byte, src->offset);
  gint64 slept = sleep_unless_cancelled (src->cancellable, secs);
  if (src->position_deadline)
    src->position_deadline += slept;
  return !g_cancellable_is_cancelled (src->cancellable);
}

void
src_attempt_flushed (GstBwssHttpSrc *src)
{
  src->since_byte = 0;
}

void
src_attempt_progress (GstBwssHttpSrc *src)
{
  src->position = src->offset;
  src->attempts = 1;
  src->since_byte = 0;
  if (src->position_deadline) {
    src->position_deadline = g_get_monotonic_time ()
                             + (gint64) src->req.http.timeout * (src->req.retries + 1) * G_USEC_PER_SEC;
    deadline_move (src->deadline, src->position_deadline);
  }
}

void
src_attempt_close (GstBwssHttpSrc *src)
{
  http_client_close (src->client);
  src->open = FALSE;
  deadline_disarm (src->deadline);
  src->deadline = NULL;
  if (src->attempt_cancel) {
    g_cancellable_disconnect (src->cancellable, src->attempt_link);
    src->attempt_link = 0;
    g_clear_object (&src->attempt_cancel);
  }
}

static void
cancel_attempt (GCancellable *flushing, gpointer data)
{
  g_cancellable_cancel (G_CANCELLABLE (data));
}

gboolean
src_attempt_begin (GstBwssHttpSrc *src)
{
  src_attempt_close (src);
  src_props_take_request (src, &src->req);
  gint64 now = g_get_monotonic_time ();
  if (src->attempts == 0 || src->position != src->offset) {
    src->position = src->offset;
    src->attempts = 0;
    src->since_byte = 0;
    src->position_deadline = src->req.http.timeout && src->req.retries >= 0
        ? now + (gint64) src->req.http.timeout * (src->req.retries + 1) * G_USEC_PER_SEC : 0;
  }
  src->attempts++;
  src->since_byte++;
  if (!wait_backoff (src)) {
    src->attempts--;                  /* not made */
    return FALSE;
  }
  src->attempt_cancel = g_cancellable_new ();
  src->attempt_link = g_cancellable_connect (src->cancellable, G_CALLBACK (cancel_attempt),
                                             g_object_ref (src->attempt_cancel), g_object_unref);
  if (src->position_deadline)
    src->deadline = deadline_arm (src->attempt_cancel, src->position_deadline);
  return TRUE;
}

GstFlowReturn
src_attempt_failed (GstBwssHttpSrc *src, GError *err, gboolean retryable)
{
  GstFlowReturn ret;
  retryable = retryable || retried_status (err);
  if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED) && !deadline_fired (src->deadline)) {
    ret = GST_FLOW_FLUSHING;
  } else if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED) || !may_retry (src) || !retryable) {
    if (err->domain != HTTP_ERROR) {
      GError *e = g_error_new (HTTP_ERROR, HTTP_ERROR_TIMEOUT,
                               "no data for %u s × (%d retries + 1)", src->req.http.timeout, src->req.retries);
      post_http_error (src, e);
      g_error_free (e);
    } else {
      post_http_error (src, err);
    }
    src_flow_release (&src->flow);
    ret = GST_FLOW_ERROR;
  } else {
    GST_WARNING_OBJECT (src, "attempt %d at byte %" G_GUINT64_FORMAT " failed: %s; trying again",
                        src->attempts, src->offset, err->message);
    ret = GST_FLOW_CUSTOM_ERROR;
  }
  src_attempt_close (src);
  g_error_free (err);
  return ret;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-bwsshttpsrc
 *
 * An HTTP(S) source that behaves like souphttpsrc and, in addition, puts its
 * TCP flow first in the user's BWSS domain: high priority, with a minimum
 * rate from the stream's bitrate, so the video keeps playing while other
 * programs of the user download (run them with bwss-run).  It reports late
 * packets and the prebuffer the stream needed on the bus.
 *
 * With no domain available it is a plain HTTP source, and says so once in
 * the debug log.
 *
 * |[
 * gst-launch-1.0 playbin uri=http://example.org/movie.mp4
 * gst-launch-1.0 -m bwsshttpsrc location=http://example.org/live.ts ! filesink location=out.ts
 * ]|
 *
 * This file is the element: the base-class methods and reading.  The
 * properties are srcprops.c, requests and responses httpclient.c, the BWSS
 * flow srcflow.c, the bitrate bitrate.c, the statistics srcstats.c.
 *
 * Reading: one request per range, synchronous in the streaming thread; a
 * seek or a retry is a new request from the current offset.  The retry
 * policy bounds one read position: at most retries + 1 requests, and with
 * a timeout at most timeout × (retries + 1) seconds without a byte
 * (srcattempt.c, which also posts the error).  What a response announces
 * (headers, icy, size) is srcannounce.c.
 *
 * Reading over n connections (stripes.h: the model, the chunks and the
 * regime; srcstripes.c: the threads): while the regime says so and the
 * resource allows it, the open request is dropped and the rest of the
 * resource comes over n connections in byte ranges, pushed in order from a
 * bounded reorder buffer; when the regime goes back, the chunks already
 * asked for finish and one request reads on from the next byte.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>
#include "abrrule.h"
#include "adaptivewatch.h"
#include "gstbwsstracer.h"
#include "gstbwsshttpsrc-private.h"
#include "srcannounce.h"
#include "srcattempt.h"
#include "srcprops.h"

GST_DEBUG_CATEGORY (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

#if GST_CHECK_VERSION(1, 24, 0)
enum {
  SIGNAL_ACCEPT_CERTIFICATE,
  LAST_SIGNAL
};
static guint signals[LAST_SIGNAL];
#endif

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void gst_bwss_http_src_uri_handler_init (gpointer g_iface, gpointer iface_data);

#define gst_bwss_http_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstBwssHttpSrc, gst_bwss_http_src, GST_TYPE_PUSH_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER, gst_bwss_http_src_uri_handler_init));

/* ---- the stream's bitrate and the flow's preferences ------------------------ */

/* Asks the bitrate sources again and gives the flow its preferences (the
 * properties of now settle what was learned: srcprops.c).  Streaming
 * thread, client_lock held. */
static void
refresh_stream (GstBwssHttpSrc *src)
{
  SrcFlowSnapshot snap;
  src_flow_snapshot (&src->flow, &snap);
  BitrateInputs in = {
    .bitrate_prop = src_props_bitrate_hint (src),
    .have_size = src->have_size, .size = src->content_size,
    .sigma = snap.have_domain ? abr_usable_sigma (&snap.domain) : -1.0,
    .demuxer = src->demuxer, .meter = &src->meter,
  };
  guint64 before = src->choice.bitrate;
  bitrate_choose (GST_ELEMENT (src), &in, &src->choice);
  if (src->choice.bitrate != before)
    GST_INFO_OBJECT (src, "stream bitrate %" G_GUINT64_FORMAT " bit/s (from %s)",
                     src->choice.bitrate, bitrate_source_name (src->choice.source));
  src_props_apply_learned (src, &src->choice);
}

/* The player's buffer as the consumption meter sees it: full while
 * downstream pushes back (bitrate.h), else low.  Streaming thread. */
static PlayerBuffer
player_buffer (GstBwssHttpSrc *src)
{
  return src->meter.rate_bps > 0 ? PLAYER_BUFFER_FULL : PLAYER_BUFFER_LOW;
}

/* Posts the statistics, and gives bwssd the late-packet figures among them
 * (bwss-top shows them with the flow). */
static void
post_stats (GstBwssHttpSrc *src, gint64 now)
{
  GstStructure *s = src_stats_publish (&src->stats, now, &src->flow);
  double late, prebuffer;
  if (gst_structure_get_double (s, "late-1", &late)
      && gst_structure_get_double (s, "required-prebuffer", &prebuffer))
    src_flow_report_late (&src->flow, late, prebuffer);
  gst_element_post_message (GST_ELEMENT (src), gst_message_new_element (GST_OBJECT (src), s));
}

/* ---- requests ---------------------------------------------------------------- */

static void
on_connected (int fd, gpointer data)
{
  GstBwssHttpSrc *src = data;
  src_flow_connected (&src->flow, fd);
}

#if GST_CHECK_VERSION(1, 24, 0)
/* A server certificate failed verification and ssl-strict is set: the
 * application decides through accept-certificate (souphttpsrc 1.24's
 * signal, emitted from the streaming thread); no handler refuses it. */
static gboolean
on_accept_certificate (GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer data)
{
  GstBwssHttpSrc *src = data;
  gboolean accept = FALSE;
  g_signal_emit (src, signals[SIGNAL_ACCEPT_CERTIFICATE], 0, cert, errors, &accept);
  GST_DEBUG_OBJECT (src, "certificate with errors 0x%x %s by the application", errors,
                    accept ? "accepted" : "refused");
  return accept;
}
#endif

/* Sends the request for the bytes from src->offset (after the retry
 * backoff, if any).  Returns GST_FLOW_OK (the body can be read),
 * GST_FLOW_CUSTOM_ERROR (try again), GST_FLOW_FLUSHING or GST_FLOW_ERROR
 * (posted). */
static GstFlowReturn
open_request (GstBwssHttpSrc *src)
{
  if (!src_attempt_begin (src))       /* takes the request's settings */
    return GST_FLOW_FLUSHING;         /* flushed during the retry backoff */
  const char *method = src->req.method ? src->req.method : "GET";
  src_flow_check (&src->flow);
  src_props_set_player (src, TRUE, player_buffer (src));   /* the minimum is taken back */
  refresh_stream (src);               /* each request is a fragment for a demuxer */
  GError *err = NULL;
  HttpResult r = http_client_open (src->client, &src->req.http, src->req.location, method, src->offset,
                                   src->attempt_cancel, &err);
  /* http-headers for the first response and every one that is not a 206
   * (a failed one too: it comes before the error, as with souphttpsrc) */
  SoupMessage *msg = http_client_message (src->client);
  guint status = msg ? lsoup_message_get_status (msg) : 0;
  if (status && (!src->got_headers || status != 206)) {
    src->got_headers = TRUE;
    src_announce_headers (src, msg);
  }
  if (r != HTTP_OK)
    return src_attempt_failed (src, err, r == HTTP_RETRY);
  const HttpResponse *resp = http_client_response (src->client);
  src_flow_response (&src->flow, resp->connection_id);
  if (g_strcmp0 (resp->final_uri, src->req.location) != 0
      && g_strcmp0 (resp->final_uri, src->redirection_uri) != 0) {
    gchar *uri = g_strdup (resp->final_uri);
    GST_OBJECT_LOCK (src);
    gchar *old = src->redirection_uri;
    src->redirection_uri = uri;
    GST_OBJECT_UNLOCK (src);
    g_free (old);
  }
  if (resp->have_size)
    src_announce_size (src, resp->size);
  GST_OBJECT_LOCK (src);
  src->seekable = resp->seekable;
  src->know_seekable = TRUE;
  src->ranges = src->ranges || resp->ranges;
  GST_OBJECT_UNLOCK (src);
  src->seeking = FALSE;
  src_announce_icy (src, lsoup_message_get_response_headers (msg));
  src->open = TRUE;
  return GST_FLOW_OK;
}

/* ---- reading: read_buffer and its steps ----------------------------------------- */

/* The most bytes of one buffer read over n connections: the head chunk's
 * bytes go out as they arrive, in buffers of up to this (or the blocksize,
 * if larger). */
#define STRIPED_BUFFER_BYTES (64 * 1024)

static void stop_stripes (GstBwssHttpSrc *src);
static void finish_stream (GstBwssHttpSrc *src);

/* A seek do_seek asked for: the next request starts at its byte. */
static void
take_pending_seek (GstBwssHttpSrc *src)
{
  if (src->seek_to == G_MAXUINT64)
    return;
  stop_stripes (src);
  src->offset = src->seek_to;
  src->seek_to = G_MAXUINT64;
  src->seeking = src->offset > 0;
  src_attempt_close (src);
}

/* A request whose body can be read: the open one, or a new one
 * (open_request's returns); GST_FLOW_EOS for a HEAD, which has no body. */
static GstFlowReturn
ensure_open (GstBwssHttpSrc *src)
{
  if (src->open)
    return GST_FLOW_OK;
  GstFlowReturn r = open_request (src);
  if (r != GST_FLOW_OK)
    return r;
  if (src->req.method && strcmp (src->req.method, "HEAD") == 0) {
    src_attempt_close (src);
    return GST_FLOW_EOS;
  }
  return GST_FLOW_OK;
}

/* Reads up to blocksize bytes of the body into a new buffer, and not past
 * byte @until; *n is what the client returned: the bytes read, 0 at the
 * body's end, -1 with @err. */
static GstBuffer *
read_block (GstBwssHttpSrc *src, guint64 until, gssize *n, GError **err)
{
  gsize blocksize = gst_base_src_get_blocksize (GST_BASE_SRC (src));
  if (until > src->offset && until - src->offset < blocksize)
    blocksize = (gsize) (until - src->offset);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, blocksize, NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  *n = http_client_read (src->client, map.data, blocksize, src->attempt_cancel, err);
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* @n bytes of @buf (its offsets set) go out: the position moves, the
 * consumption meter and the statistics count them. */
static void
account_block (GstBwssHttpSrc *src, GstBuffer *buf, gsize n)
{
  src->offset += (guint64) n;
  gint64 now = g_get_monotonic_time ();
  consumption_leave (&src->meter, now, n);
  src_props_set_player (src, TRUE, player_buffer (src));
  if (src_stats_add (&src->stats, n, now, src_props_stats_interval (src))) {
    refresh_stream (src);
    post_stats (src, now);
  }
}

/* @n bytes arrived in @buf: it goes out with its offsets, the position
 * moves, the consumption meter and the statistics count them.  Bytes past
 * the resource's size are an error (not retried). */
static GstFlowReturn
deliver_block (GstBwssHttpSrc *src, GstBuffer *buf, gsize n, GstBuffer **outbuf)
{
  if (src->have_size && src->offset + (guint64) n > src->content_size) {
    gst_buffer_unref (buf);
    GError *e = g_error_new (HTTP_ERROR, HTTP_ERROR_BAD_RESPONSE,
                             "the body goes on past the resource's %" G_GUINT64_FORMAT " bytes",
                             src->content_size);
    return src_attempt_failed (src, e, FALSE);
  }
  gst_buffer_set_size (buf, n);
  GST_BUFFER_OFFSET (buf) = src->offset;
  GST_BUFFER_OFFSET_END (buf) = src->offset + (guint64) n;
  account_block (src, buf, n);
  src_attempt_progress (src);          /* at the position after the block */
  *outbuf = buf;
  return GST_FLOW_OK;
}

/* Reading the body failed with @err: another attempt, unless the chunked
 * framing was broken. */
static GstFlowReturn
read_failed (GstBwssHttpSrc *src, GError *err)
{
  gboolean retryable = !g_error_matches (err, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING);
  return src_attempt_failed (src, err, retryable);
}

/* The body ended.  Short of the size, the connection broke: another
 * attempt.  Else the last statistics, and EOS. */
static GstFlowReturn
body_ended (GstBwssHttpSrc *src)
{
  if (src->have_size && src->offset < src->content_size) {
    GError *e = g_error_new (HTTP_ERROR, HTTP_ERROR_TRUNCATED,
                             "the body ended at byte %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT,
                             src->offset, src->content_size);
    return src_attempt_failed (src, e, TRUE);
  }
  finish_stream (src);
  /* finish the message now, so its keep-alive connection goes back to the
   * pool (a request still open when unlock() cancels it on the way to
   * READY would take the connection along); the flow stays on it, unless
   * the connection is not going to serve another request */
  gboolean reused = src->req.http.keep_alive && http_client_reusable (src->client);
  src_attempt_close (src);
  src_props_set_player (src, FALSE, player_buffer (src));  /* no request: no reservation */
  if (!reused)
    src_flow_release (&src->flow);
  return GST_FLOW_EOS;
}

/* ---- reading over n connections ------------------------------------------------ */

/* How often the loop's phase is read while reading, µs: the regime's entry
 * and exit are counted in seconds (stripes.h), and each read asks bwssd. */
#define PHASE_READ_US (250 * G_TIME_SPAN_MILLISECOND)

/* The regime now: the loop's phase read again if it is time. */
static StripeRegime
update_regime (GstBwssHttpSrc *src, StripingPolicy policy)
{
  gint64 now = g_get_monotonic_time ();
  if (now < src->next_phase_us && policy == STRIPING_AUTO)
    return src->stripe_mode.regime;
  src->next_phase_us = now + PHASE_READ_US;
  double queue_us = -1.0, queue = -1.0;
  gboolean compete = policy == STRIPING_AUTO && src_flow_loop_view (&src->flow, &queue_us, &queue);
  StripeRegime before = src->stripe_mode.regime;
  StripeRegime after = stripe_mode_update (&src->stripe_mode, policy, compete, queue, queue_us, now);
  if (after != before)
    GST_INFO_OBJECT (src, "connections: %s → %s", stripe_regime_name (before), stripe_regime_name (after));
  return after;
}

/* The stream's rate for the chunk size, bit/s: the bitrate in use, else
 * the rate measured (0: unknown). */
static double
stream_rate (GstBwssHttpSrc *src)
{
  guint64 hint = src_props_bitrate_hint (src);
  if (hint)
    return (double) hint;
  if (src->choice.bitrate)
    return (double) src->choice.bitrate;
  return src_stats_current_rate (&src->stats);
}

/* Reading over @n connections from now: the statistics say so at once
 * (unless they are posted only at the end). */
static void
connections_changed (GstBwssHttpSrc *src, guint n)
{
  src_stats_set_connections (&src->stats, n);
  if (src_props_stats_interval (src))
    post_stats (src, g_get_monotonic_time ());
}

/* Ends reading over n connections (every worker joined); one connection
 * reads on from src->offset. */
static void
stop_stripes (GstBwssHttpSrc *src)
{
  if (src->stripes == NULL)
    return;
  src_stripes_free (src->stripes);
  src->stripes = NULL;
  src_flow_set_grouped (&src->flow, FALSE);
  src_stats_set_connections (&src->stats, 1);
}

/* Starts reading over n connections from src->offset if the regime asks
 * for it and the resource allows it: a GET of a resource whose size is
 * known from a server that takes ranges, not compressed (the ranges would
 * be of the encoded bytes); under auto, not a fragment of an adaptive
 * demuxer's (a stripe set per fragment is n handshakes per fragment).
 * TRUE if it did. */
static gboolean
maybe_widen (GstBwssHttpSrc *src)
{
  StripingPolicy policy;
  guint n;
  src_props_striping (src, &policy, &n);
  if (update_regime (src, policy) != STRIPE_MANY || (policy == STRIPING_AUTO && src->demuxer))
    return FALSE;
  GST_OBJECT_LOCK (src);
  gboolean have_size = src->have_size, ranges = src->ranges && src->seekable;
  guint64 size = src->content_size;
  gboolean plain_get = (src->method == NULL || strcmp (src->method, "GET") == 0) && !src->http.compress;
  GCancellable *flushing = src->cancellable ? g_object_ref (src->cancellable) : NULL;
  GST_OBJECT_UNLOCK (src);
  guint64 chunk = stripe_chunk_bytes (stream_rate (src));
  if (!plain_get || flushing == NULL || !stripe_possible (n, have_size, size, ranges, src->offset, chunk)) {
    g_clear_object (&flushing);
    return FALSE;
  }
  /* the open request reads on to the chunks' first byte (eq. 4) */
  guint64 from = src->offset;
  if (src->open && size - src->offset >= stripe_lead_bytes (chunk, n) + 2 * chunk)
    from += stripe_lead_bytes (chunk, n);
  SrcRequest req = { 0 };
  src_props_take_request (src, &req);
  SrcStripesSetup setup = {
    .owner = GST_OBJECT (src), .http = req.http, .retries = req.retries,
    .uri = g_strdup (src->redirection_uri ? src->redirection_uri : req.location),
    .from = from, .size = size, .chunk = chunk, .connections = n,
    .flow = &src->flow, .flushing = flushing,
#if GST_CHECK_VERSION(1, 24, 0)
    .accept_certificate = on_accept_certificate, .accept_data = src,
#endif
  };
  memset (&req.http, 0, sizeof req.http);   /* the set's now */
  src_request_clear (&req);
  /* the open request's flow joins the stripes' group: the minimum once */
  src_flow_set_grouped (&src->flow, TRUE);
  src->stripes = src_stripes_new (&setup);
  src->stripes_from = from;
  g_free (setup.uri);
  http_config_clear (&setup.http);
  g_object_unref (flushing);
  connections_changed (src, n);
  return TRUE;
}

/* The stream is over: the last statistics. */
static void
finish_stream (GstBwssHttpSrc *src)
{
  src_stats_finish (&src->stats);
  post_stats (src, g_get_monotonic_time ());
}

/* The next buffer over n connections, or why there is none: EOS at the
 * resource's end, GST_FLOW_CUSTOM_ERROR when one connection is to read on
 * (the regime went back, or the server takes no ranges), flushing, or an
 * error (posted). */
static GstFlowReturn
read_striped (GstBwssHttpSrc *src, GstBuffer **outbuf)
{
  StripingPolicy policy;
  guint n;
  src_props_striping (src, &policy, &n);
  if (update_regime (src, policy) != STRIPE_MANY || n < 2)
    src_stripes_narrow (src->stripes);
  guint blocksize = gst_base_src_get_blocksize (GST_BASE_SRC (src));
  GstBuffer *buf = NULL;
  GError *err = NULL;
  switch (src_stripes_read (src->stripes, MAX (blocksize, STRIPED_BUFFER_BYTES), &buf, &err)) {
    case STRIPES_BYTES:
      if (GST_BUFFER_OFFSET (buf) != src->offset) {
        GST_ELEMENT_ERROR (src, STREAM, FAILED, ("Internal data stream error."),
                           ("striped bytes from %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                            GST_BUFFER_OFFSET (buf), src->offset));
        gst_buffer_unref (buf);
        stop_stripes (src);
        return GST_FLOW_ERROR;
      }
      account_block (src, buf, gst_buffer_get_size (buf));
      *outbuf = buf;
      return GST_FLOW_OK;
    case STRIPES_END:
      stop_stripes (src);
      if (src->offset < src->content_size) {
        connections_changed (src, 1);
        return GST_FLOW_CUSTOM_ERROR;
      }
      finish_stream (src);
      src_props_set_player (src, FALSE, player_buffer (src));
      return GST_FLOW_EOS;
    case STRIPES_NO_RANGES:
      GST_WARNING_OBJECT (src, "the server answered a range with the whole resource: one connection from "
                          "byte %" G_GUINT64_FORMAT, src->offset);
      stripe_mode_refuse (&src->stripe_mode);
      stop_stripes (src);
      return GST_FLOW_CUSTOM_ERROR;
    case STRIPES_FLUSHING:
      return GST_FLOW_FLUSHING;
    case STRIPES_ERROR:
    default:
      stop_stripes (src);
      src_attempt_post_error (src, err);
      g_error_free (err);
      return GST_FLOW_ERROR;
  }
}

/* ---- the next buffer ------------------------------------------------------------ */

/* The next buffer of the resource.  A step that returns
 * GST_FLOW_CUSTOM_ERROR asks for another attempt: a new request from the
 * current offset (or reading over one connection again). */
static GstFlowReturn
read_buffer (GstBwssHttpSrc *src, GstBuffer **outbuf)
{
  take_pending_seek (src);
  for (;;) {
    if (src->stripes == NULL)
      maybe_widen (src);
    if (src->stripes && src->offset >= src->stripes_from) {
      if (src->open) {
        /* the hand-over: the open request's connection goes, and its flow */
        src_attempt_close (src);
        src_flow_release (&src->flow);
      }
      GstFlowReturn r = read_striped (src, outbuf);
      if (r != GST_FLOW_CUSTOM_ERROR)
        return r;
      continue;
    }
    GstFlowReturn r = ensure_open (src);
    if (r == GST_FLOW_OK) {
      GError *err = NULL;
      gssize n;
      GstBuffer *buf = read_block (src, src->stripes ? src->stripes_from : G_MAXUINT64, &n, &err);
      if (n > 0)
        return deliver_block (src, buf, (gsize) n, outbuf);
      gst_buffer_unref (buf);
      r = n < 0 ? read_failed (src, err) : body_ended (src);
    }
    if (r != GST_FLOW_CUSTOM_ERROR)
      return r;
  }
}

static GstFlowReturn
gst_bwss_http_src_create (GstPushSrc *psrc, GstBuffer **outbuf)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (psrc);
  consumption_enter (&src->meter, g_get_monotonic_time ());
  g_mutex_lock (&src->client_lock);
  GstFlowReturn ret = read_buffer (src, outbuf);
  g_mutex_unlock (&src->client_lock);
  return ret;
}

/* ---- GstBaseSrc ------------------------------------------------------------ */

static gboolean
gst_bwss_http_src_start (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  GST_OBJECT_LOCK (src);
  gboolean have_location = src->location != NULL;
  GST_OBJECT_UNLOCK (src);
  if (!have_location) {
    GST_ELEMENT_ERROR (src, RESOURCE, OPEN_READ, ("No URL set."), ("Missing location property"));
    return FALSE;
  }
  GCancellable *cancellable = g_cancellable_new ();
  GST_OBJECT_LOCK (src);
  src->cancellable = cancellable;
  src->have_size = FALSE;
  src->know_seekable = FALSE;
  src->ranges = FALSE;
  GST_OBJECT_UNLOCK (src);
  stripe_mode_init (&src->stripe_mode);
  src->next_phase_us = 0;
  src->offset = 0;
  src->seek_to = G_MAXUINT64;
  src->seeking = FALSE;
  src->attempts = 0;
  src->position_deadline = 0;
  src->got_headers = FALSE;
  http_client_forget_resource (src->client);
  src_stats_reset (&src->stats);
  consumption_reset (&src->meter);
  memset (&src->choice, 0, sizeof src->choice);
  g_mutex_lock (&src->prefs_lock);
  memset (&src->learned, 0, sizeof src->learned);
  g_mutex_unlock (&src->prefs_lock);
  gst_clear_object (&src->demuxer);
  src->demuxer = adaptive_demuxer_of_source (GST_ELEMENT (src));
  if (src->demuxer)
    GST_DEBUG_OBJECT (src, "fetching fragments for %" GST_PTR_FORMAT, src->demuxer);
  return TRUE;
}

static gboolean
gst_bwss_http_src_stop (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  stop_stripes (src);
  src_attempt_close (src);
  src_props_set_player (src, FALSE, PLAYER_BUFFER_UNKNOWN);
  /* keep-alive (adaptive demuxers set it and go through READY between
   * fragments): the session, its idle connection and the flow on it stay
   * until NULL, so the next request skips the handshake and slow start and
   * the controller keeps one flow, as with souphttpsrc's session */
  GST_OBJECT_LOCK (src);
  gboolean keep_alive = src->http.keep_alive;
  GCancellable *cancellable = src->cancellable;
  src->cancellable = NULL;
  GST_OBJECT_UNLOCK (src);
  if (!keep_alive) {
    src_flow_release (&src->flow);
    g_mutex_lock (&src->client_lock);   /* a HEAD probe may still be running */
    http_client_drop_session (src->client);
    g_mutex_unlock (&src->client_lock);
  }
  g_clear_object (&cancellable);
  gst_clear_object (&src->demuxer);
  return TRUE;
}

/* Back to NULL (or finalized without it): the session, the flow and the
 * domain go. */
static void
release_all (GstBwssHttpSrc *src)
{
  stop_stripes (src);                   /* its flows borrow the domain */
  src_attempt_close (src);
  http_client_drop_session (src->client);
  src_flow_clear (&src->flow);
}

static GstStateChangeReturn
gst_bwss_http_src_change_state (GstElement *element, GstStateChange transition)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (element);
  GstStateChangeReturn ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    release_all (src);
  return ret;
}

/* The cancellable, referenced (NULL if stopped): for the threads other
 * than the streaming thread. */
static GCancellable *
ref_cancellable (GstBwssHttpSrc *src)
{
  GST_OBJECT_LOCK (src);
  GCancellable *c = src->cancellable ? g_object_ref (src->cancellable) : NULL;
  GST_OBJECT_UNLOCK (src);
  return c;
}

static gboolean
gst_bwss_http_src_unlock (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  g_autoptr (GCancellable) c = ref_cancellable (src);
  if (c)
    g_cancellable_cancel (c);
  return TRUE;
}

static gboolean
gst_bwss_http_src_unlock_stop (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (src->cancellable && g_cancellable_is_cancelled (src->cancellable)) {
    /* a cancelled request cannot continue: start a new one (over n
     * connections too: the regime says so again at the next buffer) */
    stop_stripes (src);
    src_attempt_close (src);
    src_attempt_flushed (src);
    GCancellable *fresh = g_cancellable_new ();
    GST_OBJECT_LOCK (src);
    GCancellable *old = src->cancellable;
    src->cancellable = fresh;
    GST_OBJECT_UNLOCK (src);
    g_object_unref (old);
  }
  return TRUE;
}

/* HEAD once to learn the size and whether the server takes ranges, when
 * asked before the GET has answered.  Not while starting (READY→PAUSED):
 * the GET that follows tells the same, and a HEAD before every request is
 * one round trip more per fragment for an adaptive demuxer (souphttpsrc
 * does the same).  Silent: some servers refuse HEAD. */
static void
probe_head (GstBwssHttpSrc *src)
{
  GST_OBJECT_LOCK (src);
  gboolean skip = src->know_seekable || src->is_live || GST_STATE (src) < GST_STATE_PAUSED;
  GST_OBJECT_UNLOCK (src);
  if (skip)
    return;
  /* not while the streaming thread uses the client (its GET will tell) */
  if (!g_mutex_trylock (&src->client_lock))
    return;
  g_autoptr (GCancellable) cancellable = ref_cancellable (src);
  if (src->open || cancellable == NULL) {
    g_mutex_unlock (&src->client_lock);
    return;
  }
  SrcRequest req = { 0 };
  src_props_take_request (src, &req);
  GError *err = NULL;
  if (http_client_open (src->client, &req.http, req.location, "HEAD", 0, cancellable, &err) == HTTP_OK) {
    const HttpResponse *resp = http_client_response (src->client);
    GST_OBJECT_LOCK (src);
    if (resp->have_size) {
      src->content_size = resp->size;
      src->have_size = TRUE;
    }
    src->seekable = resp->seekable;
    src->know_seekable = TRUE;
    src->ranges = src->ranges || resp->ranges;
    GST_OBJECT_UNLOCK (src);
    /* read the (empty) body to its end: libsoup returns a connection to
     * the pool only for a message read to the end */
    guint8 byte;
    http_client_read (src->client, &byte, 1, cancellable, NULL);
  } else {
    GST_DEBUG_OBJECT (src, "HEAD refused: %s", err ? err->message : "");
  }
  g_clear_error (&err);
  http_client_close (src->client);
  g_mutex_unlock (&src->client_lock);
  src_request_clear (&req);
}

static gboolean
gst_bwss_http_src_get_size (GstBaseSrc *bsrc, guint64 *size)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  GST_OBJECT_LOCK (src);
  gboolean have = src->have_size;
  if (have)
    *size = src->content_size;
  GST_OBJECT_UNLOCK (src);
  return have;
}

static gboolean
gst_bwss_http_src_is_seekable (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  probe_head (src);
  GST_OBJECT_LOCK (src);
  gboolean seekable = src->seekable;
  GST_OBJECT_UNLOCK (src);
  return seekable;
}

static gboolean
gst_bwss_http_src_do_seek (GstBaseSrc *bsrc, GstSegment *segment)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (segment->format != GST_FORMAT_BYTES)
    return FALSE;
  guint64 pos = segment->start;
  if (pos == src->offset && (src->open || pos == 0))
    return TRUE;
  GST_OBJECT_LOCK (src);
  gboolean refused = src->know_seekable && !src->seekable && pos != 0;
  GST_OBJECT_UNLOCK (src);
  if (refused) {
    GST_WARNING_OBJECT (src, "the server cannot seek");
    return FALSE;
  }
  /* a seek reconnects: the flow follows the new connection */
  src->seek_to = pos;
  return TRUE;
}

static gboolean
gst_bwss_http_src_query (GstBaseSrc *bsrc, GstQuery *query)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_URI:
      GST_OBJECT_LOCK (src);
      gst_query_set_uri (query, src->location);
      if (src->redirection_uri)
        gst_query_set_uri_redirection (query, src->redirection_uri);
      GST_OBJECT_UNLOCK (src);
      return TRUE;
    case GST_QUERY_SCHEDULING: {
      gboolean ret = GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);
      GstSchedulingFlags flags;
      gint minsize, maxsize, align;
      gst_query_parse_scheduling (query, &flags, &minsize, &maxsize, &align);
      gst_query_set_scheduling (query, flags | GST_SCHEDULING_FLAG_BANDWIDTH_LIMITED,
                                minsize, maxsize, align);
      return ret;
    }
    default:
      return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);
  }
}

static void
gst_bwss_http_src_finalize (GObject *object)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  release_all (src);                    /* if never set back to NULL */
  http_client_free (src->client);
  http_config_clear (&src->http);
  g_free (src->location);
  g_free (src->redirection_uri);
  g_free (src->method);
  src_request_clear (&src->req);
  g_clear_object (&src->cancellable);
  gst_clear_object (&src->demuxer);
  src_stats_clear (&src->stats);
  src_flow_destroy (&src->flow);
  g_mutex_clear (&src->client_lock);
  g_mutex_clear (&src->prefs_lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_bwss_http_src_init (GstBwssHttpSrc *src)
{
  src_props_init (src);
  src->seek_to = G_MAXUINT64;
  src->client = http_client_new (on_connected, src);
#if GST_CHECK_VERSION(1, 24, 0)
  http_client_set_accept_certificate (src->client, on_accept_certificate);
#endif
  g_mutex_init (&src->client_lock);
  src_flow_init (&src->flow, GST_OBJECT (src));
  src_stats_init (&src->stats);
  /* the flow's preferences from the properties' defaults, by the one
   * function that builds them (srcprops.c): nothing is learned yet */
  const BitrateChoice nothing = { .bitrate = 0, .source = BITRATE_NONE };
  src_props_apply_learned (src, &nothing);
  gst_base_src_set_automatic_eos (GST_BASE_SRC (src), FALSE);
  /* the adaptive demuxers followed, if plugin_init could not yet */
  gst_bwss_tracer_ensure ();
}

static void
gst_bwss_http_src_class_init (GstBwssHttpSrcClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *base_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *push_class = GST_PUSH_SRC_CLASS (klass);

  gobject_class->set_property = src_props_set_property;
  gobject_class->get_property = src_props_get_property;
  gobject_class->finalize = gst_bwss_http_src_finalize;
  element_class->change_state = gst_bwss_http_src_change_state;

  src_props_install_resource (gobject_class);
  src_props_install_auth (gobject_class);
  src_props_install_request (gobject_class);
  src_props_install_tls (gobject_class);
  src_props_install_reading (gobject_class);
  src_props_install_bwss (gobject_class);
  src_props_install_stats (gobject_class);
  src_props_install_striping (gobject_class);

#if GST_CHECK_VERSION(1, 24, 0)
  /**
   * GstBwssHttpSrc::accept-certificate:
   * @src: the element
   * @peer_cert: the server's #GTlsCertificate
   * @errors: what is wrong with @peer_cert
   *
   * souphttpsrc 1.24's signal: emitted when the server's certificate failed
   * verification and ssl-strict is set (never without ssl-strict, which
   * accepts every certificate).  Returns: %TRUE to accept the certificate
   * and stop the other handlers, %FALSE to pass it on (refused if nobody
   * accepts it).
   */
  signals[SIGNAL_ACCEPT_CERTIFICATE] = g_signal_new ("accept-certificate", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST, 0, g_signal_accumulator_true_handled, NULL, NULL,
      G_TYPE_BOOLEAN, 2, G_TYPE_TLS_CERTIFICATE, G_TYPE_TLS_CERTIFICATE_FLAGS);
#endif

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "HTTP client source with BWSS",
      "Source/Network",
      "Receives data as a client over the network via HTTP using SOUP, and puts its TCP flow "
      "first in the user's receiver-driven bandwidth sharing domain",
      "bwss developers");

  base_class->start = GST_DEBUG_FUNCPTR (gst_bwss_http_src_start);
  base_class->stop = GST_DEBUG_FUNCPTR (gst_bwss_http_src_stop);
  base_class->unlock = GST_DEBUG_FUNCPTR (gst_bwss_http_src_unlock);
  base_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_bwss_http_src_unlock_stop);
  base_class->get_size = GST_DEBUG_FUNCPTR (gst_bwss_http_src_get_size);
  base_class->is_seekable = GST_DEBUG_FUNCPTR (gst_bwss_http_src_is_seekable);
  base_class->do_seek = GST_DEBUG_FUNCPTR (gst_bwss_http_src_do_seek);
  base_class->query = GST_DEBUG_FUNCPTR (gst_bwss_http_src_query);
  push_class->create = GST_DEBUG_FUNCPTR (gst_bwss_http_src_create);
}

/* ---- URI handler ---------------------------------------------------------------- */

static GstURIType
uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { "http", "https", "icy", "icyx", NULL };
  return protocols;
}

static gchar *
uri_get_uri (GstURIHandler *handler)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (handler);
  GST_OBJECT_LOCK (src);
  gchar *uri = g_strdup (src->redirection_uri ? src->redirection_uri : src->location);
  GST_OBJECT_UNLOCK (src);
  return uri;
}

static gboolean
uri_set_uri (GstURIHandler *handler, const gchar *uri, GError **error)
{
  return src_props_set_location (GST_BWSS_HTTP_SRC (handler), uri, error);
}

static void
gst_bwss_http_src_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;
  iface->get_type = uri_get_type;
  iface->get_protocols = uri_get_protocols;
  iface->get_uri = uri_get_uri;
  iface->set_uri = uri_set_uri;
}

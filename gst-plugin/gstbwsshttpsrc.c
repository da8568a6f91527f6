/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-bwsshttpsrc
 *
 * An HTTP(S) source that behaves like souphttpsrc and, in addition, puts its
 * TCP flow first in the user's BWSS domain: high priority, with a minimum
 * rate of the stream's bitrate times a headroom, so the video keeps playing
 * while other programs of the user download (run them with bwss-run).  It
 * reports late packets and the prebuffer the stream needed on the bus.
 *
 * With no domain available it is a plain HTTP source, and says so once in
 * the debug log.
 *
 * |[
 * gst-launch-1.0 playbin uri=http://example.org/movie.mp4
 * gst-launch-1.0 -m bwsshttpsrc location=http://example.org/live.ts ! filesink location=out.ts
 * ]|
 *
 * Requests are synchronous in the streaming thread (soup_session_send), one
 * request per range: a seek or a retry after a broken connection is a new
 * request with a Range header from the current offset.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <string.h>
#include <gio/gio.h>
#include "gstbwsshttpsrc.h"

GST_DEBUG_CATEGORY_STATIC (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

enum {
  PROP_0,
  PROP_LOCATION,
  PROP_USER_AGENT,
  PROP_AUTOMATIC_REDIRECT,
  PROP_PROXY,
  PROP_USER_ID,
  PROP_USER_PW,
  PROP_PROXY_ID,
  PROP_PROXY_PW,
  PROP_COOKIES,
  PROP_IS_LIVE,
  PROP_TIMEOUT,
  PROP_EXTRA_HEADERS,
  PROP_IRADIO_MODE,
  PROP_HTTP_LOG_LEVEL,
  PROP_COMPRESS,
  PROP_KEEP_ALIVE,
  PROP_SSL_STRICT,
  PROP_SSL_CA_FILE,
  PROP_SSL_USE_SYSTEM_CA_FILE,
  PROP_TLS_DATABASE,
  PROP_TLS_INTERACTION,
  PROP_RETRIES,
  PROP_METHOD,
  PROP_TYPEFIND,
  /* bwss */
  PROP_PRIORITY,
  PROP_WEIGHT,
  PROP_MIN_RATE,
  PROP_RATE_HEADROOM,
  PROP_BITRATE,
  PROP_STATS_INTERVAL,
  PROP_STATS,
};

/* souphttpsrc's defaults */
#define DEFAULT_USER_AGENT             "GStreamer bwsshttpsrc " PACKAGE_VERSION " "
#define DEFAULT_AUTOMATIC_REDIRECT     TRUE
#define DEFAULT_PROXY                  ""
#define DEFAULT_IS_LIVE                FALSE
#define DEFAULT_TIMEOUT                15
#define DEFAULT_IRADIO_MODE            TRUE
#define DEFAULT_HTTP_LOG_LEVEL         SOUP_LOGGER_LOG_HEADERS
#define DEFAULT_COMPRESS               FALSE
#define DEFAULT_KEEP_ALIVE             TRUE
#define DEFAULT_SSL_STRICT             TRUE
#define DEFAULT_SSL_USE_SYSTEM_CA_FILE TRUE
#define DEFAULT_RETRIES                3
#define DEFAULT_BLOCKSIZE              4096
/* bwss */
#define DEFAULT_PRIORITY               10      /* above bwss-run's default 0 */
#define DEFAULT_WEIGHT                 1.0
#define DEFAULT_MIN_RATE               0       /* automatic */
#define DEFAULT_RATE_HEADROOM          (520.0 / 450.0)  /* the paper's 520k for a 450k stream */
#define DEFAULT_BITRATE                0
#define DEFAULT_STATS_INTERVAL         GST_SECOND
/* The late-packet metric cuts the stream in the paper's 1000-byte packets. */
#define LATE_PACKET_BYTES              1000

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void gst_bwss_http_src_uri_handler_init (gpointer g_iface, gpointer iface_data);

#define gst_bwss_http_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstBwssHttpSrc, gst_bwss_http_src, GST_TYPE_PUSH_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER, gst_bwss_http_src_uri_handler_init));

/* ---- BWSS ---------------------------------------------------------------- */

/* Returns the minimum rate to register, bit/s. */
static double
bwss_min_rate (GstBwssHttpSrc *src)
{
  if (src->min_rate)
    return (double) src->min_rate;
  return (double) src->bitrate_in_use * src->rate_headroom;
}

static void
bwss_update_prefs (GstBwssHttpSrc *src)
{
  if (src->flow == NULL)
    return;
  BwssPrefs p = { .priority = src->priority, .min_rate_bps = bwss_min_rate (src),
                  .weight = src->weight };
  int err = bwss_flow_set_prefs (src->flow, &p);
  if (err)
    GST_WARNING_OBJECT (src, "cannot update the flow's preferences: %s", bwss_strerror (err));
}

/* Picks the stream bitrate, in order: the property, a downstream bitrate
 * query, Content-Length over the duration.  Re-registers the minimum when it
 * changes. */
static void
bwss_refresh_bitrate (GstBwssHttpSrc *src)
{
  guint64 rate = 0;
  const gchar *from = NULL;
  if (src->bitrate) {
    rate = src->bitrate;
    from = "property";
  }
  if (!rate) {
    GstQuery *q = gst_query_new_bitrate ();
    guint nominal = 0;
    if (gst_pad_peer_query (GST_BASE_SRC_PAD (src), q)) {
      gst_query_parse_bitrate (q, &nominal);
      if (nominal) {
        rate = nominal;
        from = "bitrate-query";
      }
    }
    gst_query_unref (q);
  }
  if (!rate && src->have_size && src->content_size) {
    gint64 dur = 0;
    if (gst_pad_peer_query_duration (GST_BASE_SRC_PAD (src), GST_FORMAT_TIME, &dur) && dur > 0) {
      rate = gst_util_uint64_scale (src->content_size * 8, GST_SECOND, (guint64) dur);
      from = "content-length/duration";
    }
  }
  if (rate && rate != src->bitrate_in_use) {
    GST_INFO_OBJECT (src, "stream bitrate %" G_GUINT64_FORMAT " bit/s (from %s)", rate, from);
    src->bitrate_in_use = rate;
    src->bitrate_source = from;
    if (!src->late_on && bwss_late_init (&src->late, (double) rate, LATE_PACKET_BYTES, NULL, 0) == 0)
      src->late_on = TRUE;
    bwss_update_prefs (src);
  }
}

/* Unregisters the flow (its socket gets the kernel's window back).  With
 * keep-alive its connection may serve the next request: remember which. */
static void
bwss_unregister (GstBwssHttpSrc *src)
{
  if (src->flow) {
    GST_DEBUG_OBJECT (src, "unregistering fd %d", src->flow_fd);
    bwss_flow_unregister (src->flow);
    src->flow = NULL;
    src->idle_fd = src->flow_conn_id ? src->flow_fd : -1;
    src->idle_conn_id = src->flow_conn_id;
    src->flow_fd = -1;
    src->flow_conn_id = 0;
  }
}

static void
bwss_register (GstBwssHttpSrc *src, int fd)
{
  if (src->flow && src->flow_fd == fd)
    return;
  bwss_unregister (src);
  if (src->domain == NULL) {
    int err = bwss_domain_open (NULL, BWSS_DOMAIN_THREAD, &src->domain);
    if (err) {
      if (!src->no_domain_logged)
        GST_INFO_OBJECT (src, "no BWSS domain (%s): behaving as a plain HTTP source",
                         bwss_strerror (err));
      src->no_domain_logged = TRUE;
      src->domain = NULL;
      return;
    }
  }
  BwssPrefs p = { .priority = src->priority, .min_rate_bps = bwss_min_rate (src),
                  .weight = src->weight };
  int err = bwss_flow_register (src->domain, fd, &p, &src->flow);
  if (err) {
    GST_WARNING_OBJECT (src, "cannot register the connection: %s", bwss_strerror (err));
    src->flow = NULL;
    return;
  }
  src->flow_fd = fd;
  src->flow_conn_id = 0;
  GST_INFO_OBJECT (src, "flow registered: fd %d, priority %d, min %.0f bit/s, weight %g",
                   fd, p.priority, p.min_rate_bps, p.weight);
}

/* libsoup tells when the TCP connection is up: register its socket. */
static void
on_network_event (SoupMessage *msg, GSocketClientEvent event, GIOStream *conn, gpointer data)
{
  GstBwssHttpSrc *src = data;
  if (event != G_SOCKET_CLIENT_CONNECTED || !G_IS_SOCKET_CONNECTION (conn))
    return;
  GSocket *sock = g_socket_connection_get_socket (G_SOCKET_CONNECTION (conn));
  if (sock)
    bwss_register (src, g_socket_get_fd (sock));
}

/* After the response headers: a new connection was registered by
 * on_network_event; a persistent one taken from the session's pool fires no
 * network event, so if it is the connection of the last flow, register its
 * socket again (libsoup's connection ids are never reused, so a matching id
 * is the same live socket). */
static void
bwss_track_connection (GstBwssHttpSrc *src)
{
  guint64 cid = soup_message_get_connection_id (src->msg);
  if (cid == 0)
    return;
  if (src->flow && src->flow_conn_id == 0) {
    src->flow_conn_id = cid;
    return;
  }
  if ((src->flow == NULL || src->flow_conn_id != cid) && cid == src->idle_conn_id
      && src->idle_fd >= 0) {
    int fd = src->idle_fd;
    GST_DEBUG_OBJECT (src, "persistent connection %" G_GUINT64_FORMAT " reused", cid);
    bwss_register (src, fd);
    if (src->flow)
      src->flow_conn_id = cid;
  }
}

static void
drop_session (GstBwssHttpSrc *src)
{
  bwss_unregister (src);
  src->idle_fd = -1;
  src->idle_conn_id = 0;
  g_clear_object (&src->session);
}

/* Back to NULL (or finalized without it): the session and the domain go. */
static void
release_all (GstBwssHttpSrc *src)
{
  drop_session (src);
  if (src->domain) {
    bwss_domain_close (src->domain);
    src->domain = NULL;
  }
}

/* ---- stats --------------------------------------------------------------- */

static GstStructure *
build_stats (GstBwssHttpSrc *src, gint64 now)
{
  BwssFlowStats fs = { 0 };
  BwssDomainStats ds = { 0 };
  gboolean have_flow = src->flow && bwss_flow_get_stats (src->flow, &fs) == 0;
  if (src->domain)
    bwss_domain_get_stats (src->domain, &ds);
  double secs = src->start_time ? (now - src->start_time) / 1e6 : 0;
  GstStructure *s = gst_structure_new ("bwss-stats",
      "bytes", G_TYPE_UINT64, src->bytes,
      "mean-rate", G_TYPE_DOUBLE, secs > 0 ? src->bytes * 8.0 / secs : 0.0,
      "current-rate", G_TYPE_DOUBLE, src->current_rate,
      "target-rate", G_TYPE_DOUBLE, have_flow && fs.controlled ? fs.target_bps : -1.0,
      "min-rate", G_TYPE_DOUBLE, bwss_min_rate (src),
      "bitrate", G_TYPE_UINT64, src->bitrate_in_use,
      "bitrate-source", G_TYPE_STRING, src->bitrate_source ? src->bitrate_source : "none",
      "sigma", G_TYPE_DOUBLE, ds.controller_pid ? ds.sigma_bps : -1.0,
      "rtt", G_TYPE_UINT64, (guint64) (have_flow ? fs.rtt_us : 0) * GST_USECOND,
      "window", G_TYPE_UINT, have_flow ? fs.window_bytes : 0,
      "registered", G_TYPE_BOOLEAN, have_flow,
      "controlled", G_TYPE_BOOLEAN, have_flow && fs.controlled, NULL);
  if (src->late_on) {
    uint64_t t = src->start_time ? (uint64_t) (now - src->start_time) : 0;
    static const char *names[] = { "late-0.5", "late-1", "late-2", "late-4", "late-8" };
    for (size_t i = 0; i < src->late.n_thresholds && i < G_N_ELEMENTS (names); i++)
      gst_structure_set (s, names[i], G_TYPE_DOUBLE, bwss_late_fraction (&src->late, i, t), NULL);
    gst_structure_set (s, "required-prebuffer", G_TYPE_DOUBLE,
                       bwss_late_required_prebuffer (&src->late, t), NULL);
  }
  return s;
}

static void
post_stats (GstBwssHttpSrc *src, gint64 now)
{
  GstStructure *s = build_stats (src, now);
  g_mutex_lock (&src->stats_lock);
  if (src->stats)
    gst_structure_free (src->stats);
  src->stats = gst_structure_copy (s);
  g_mutex_unlock (&src->stats_lock);
  gst_element_post_message (GST_ELEMENT (src), gst_message_new_element (GST_OBJECT (src), s));
}

static void
account (GstBwssHttpSrc *src, gsize n)
{
  gint64 now = g_get_monotonic_time ();
  if (src->start_time == 0) {
    src->start_time = now;
    src->last_stats_time = now;
    src->next_stats = now + (gint64) (src->stats_interval / GST_USECOND);
  }
  src->bytes += n;
  if (src->late_on)
    bwss_late_add (&src->late, (uint64_t) (now - src->start_time), src->bytes);
  if (src->stats_interval && now >= src->next_stats) {
    double dt = (now - src->last_stats_time) / 1e6;
    src->current_rate = dt > 0 ? (src->bytes - src->last_stats_bytes) * 8.0 / dt : 0;
    src->last_stats_time = now;
    src->last_stats_bytes = src->bytes;
    src->next_stats = now + (gint64) (src->stats_interval / GST_USECOND);
    if (src->min_rate == 0)
      bwss_refresh_bitrate (src);
    post_stats (src, now);
  }
}

/* ---- requests ------------------------------------------------------------ */

/* The size is known from the response: the byte duration follows it (the
 * size was not known when GstBaseSrc asked at start, see probe_head). */
static void
announce_size (GstBwssHttpSrc *src, guint64 size)
{
  gboolean changed = !src->have_size || src->content_size != size;
  src->content_size = size;
  src->have_size = TRUE;
  GstBaseSrc *bsrc = GST_BASE_SRC (src);
  GST_OBJECT_LOCK (src);
  bsrc->segment.duration = (gint64) size;
  GST_OBJECT_UNLOCK (src);
  if (changed)
    gst_element_post_message (GST_ELEMENT (src), gst_message_new_duration_changed (GST_OBJECT (src)));
}

static void
close_request (GstBwssHttpSrc *src)
{
  if (src->input) {
    g_input_stream_close (src->input, NULL, NULL);
    g_clear_object (&src->input);
  }
  if (src->msg) {
    g_signal_handlers_disconnect_by_data (src->msg, src);
    g_clear_object (&src->msg);
  }
}

static gboolean
accept_certificate (SoupMessage *msg, GTlsCertificate *cert, GTlsCertificateFlags errors,
                    gpointer data)
{
  GstBwssHttpSrc *src = data;
  return !src->ssl_strict;
}

static gboolean
on_authenticate (SoupMessage *msg, SoupAuth *auth, gboolean retrying, gpointer data)
{
  GstBwssHttpSrc *src = data;
  if (retrying)
    return FALSE;
  if (soup_auth_is_for_proxy (auth) && src->proxy_id && src->proxy_pw) {
    soup_auth_authenticate (auth, src->proxy_id, src->proxy_pw);
    return TRUE;
  }
  if (!soup_auth_is_for_proxy (auth) && src->user_id && src->user_pw) {
    soup_auth_authenticate (auth, src->user_id, src->user_pw);
    return TRUE;
  }
  return FALSE;
}

static gboolean
ensure_session (GstBwssHttpSrc *src)
{
  if (src->session)
    return TRUE;
  src->session = soup_session_new_with_options ("user-agent", src->user_agent,
      "timeout", src->timeout, "idle-timeout", 0, NULL);
  if (src->proxy && *src->proxy) {
    g_autofree char *uri = strstr (src->proxy, "://") ? g_strdup (src->proxy)
                                                      : g_strdup_printf ("http://%s", src->proxy);
    GProxyResolver *r = g_simple_proxy_resolver_new (uri, NULL);
    soup_session_set_proxy_resolver (src->session, r);
    g_object_unref (r);
  }
  if (!src->compress)
    soup_session_remove_feature_by_type (src->session, SOUP_TYPE_CONTENT_DECODER);
  if (src->tls_database) {
    soup_session_set_tls_database (src->session, src->tls_database);
  } else if (src->ssl_ca_file) {
    g_autoptr (GError) err = NULL;
    GTlsDatabase *db = g_tls_file_database_new (src->ssl_ca_file, &err);
    if (db == NULL) {
      GST_ELEMENT_ERROR (src, RESOURCE, OPEN_READ, ("Could not load the CA file."),
                         ("%s: %s", src->ssl_ca_file, err->message));
      return FALSE;
    }
    soup_session_set_tls_database (src->session, db);
    g_object_unref (db);
  }
  if (src->tls_interaction)
    soup_session_set_tls_interaction (src->session, src->tls_interaction);
  if (gst_debug_category_get_threshold (GST_CAT_DEFAULT) >= GST_LEVEL_TRACE) {
    SoupLogger *logger = soup_logger_new (src->log_level);
    soup_session_add_feature (src->session, SOUP_SESSION_FEATURE (logger));
    g_object_unref (logger);
  }
  return TRUE;
}

static gboolean
add_extra_header (GQuark field, const GValue *value, gpointer data)
{
  SoupMessageHeaders *h = data;
  const char *name = g_quark_to_string (field);
  if (G_VALUE_HOLDS_STRING (value)) {
    soup_message_headers_append (h, name, g_value_get_string (value));
  } else if (GST_VALUE_HOLDS_ARRAY (value) || GST_VALUE_HOLDS_LIST (value)) {
    guint n = GST_VALUE_HOLDS_ARRAY (value) ? gst_value_array_get_size (value)
                                            : gst_value_list_get_size (value);
    for (guint i = 0; i < n; i++) {
      const GValue *v = GST_VALUE_HOLDS_ARRAY (value) ? gst_value_array_get_value (value, i)
                                                     : gst_value_list_get_value (value, i);
      g_autofree char *s = G_VALUE_HOLDS_STRING (v) ? g_value_dup_string (v) : gst_value_serialize (v);
      if (s)
        soup_message_headers_append (h, name, s);
    }
  } else {
    g_autofree char *s = gst_value_serialize (value);
    if (s)
      soup_message_headers_append (h, name, s);
  }
  return TRUE;
}

static void
headers_to_structure (const char *name, const char *value, gpointer data)
{
  GstStructure *s = data;
  const GValue *old = gst_structure_get_value (s, name);
  if (old == NULL) {
    gst_structure_set (s, name, G_TYPE_STRING, value, NULL);
  } else {
    /* repeated header: an array of strings, like souphttpsrc */
    GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
    g_value_init (&arr, GST_TYPE_ARRAY);
    if (G_VALUE_HOLDS_STRING (old)) {
      gst_value_array_append_value (&arr, old);
    } else {
      g_value_copy (old, &arr);
    }
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_string (&v, value);
    gst_value_array_append_and_take_value (&arr, &v);
    gst_structure_take_value (s, name, &arr);
  }
}

/* Posts the http-headers message and pushes the sticky event. */
static void
announce_headers (GstBwssHttpSrc *src)
{
  GstStructure *req = gst_structure_new_empty ("request-headers");
  GstStructure *resp = gst_structure_new_empty ("response-headers");
  soup_message_headers_foreach (soup_message_get_request_headers (src->msg), headers_to_structure, req);
  soup_message_headers_foreach (soup_message_get_response_headers (src->msg), headers_to_structure, resp);
  GstStructure *s = gst_structure_new ("http-headers",
      "uri", G_TYPE_STRING, src->location,
      "http-status-code", G_TYPE_UINT, soup_message_get_status (src->msg),
      "request-headers", GST_TYPE_STRUCTURE, req,
      "response-headers", GST_TYPE_STRUCTURE, resp, NULL);
  if (src->redirection_uri)
    gst_structure_set (s, "redirection-uri", G_TYPE_STRING, src->redirection_uri, NULL);
  gst_structure_free (req);
  gst_structure_free (resp);
  gst_element_post_message (GST_ELEMENT (src),
      gst_message_new_element (GST_OBJECT (src), gst_structure_copy (s)));
  gst_pad_push_event (GST_BASE_SRC_PAD (src), gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, s));
}

/* Internet radio (iradio-mode): a server that interleaves metadata says so
 * with icy-metaint; like souphttpsrc the stream goes out as application/x-icy
 * with that interval, for icydemux to split, and the station's name, genre
 * and URL become tags. */
static void
announce_icy (GstBwssHttpSrc *src, SoupMessageHeaders *rh)
{
  if (!src->iradio_mode)
    return;
  const char *metaint = soup_message_headers_get_one (rh, "icy-metaint");
  gint64 interval = metaint ? g_ascii_strtoll (metaint, NULL, 10) : 0;
  if (interval > 0 && interval <= G_MAXINT) {
    GstCaps *caps = gst_caps_new_simple ("application/x-icy", "metadata-interval", G_TYPE_INT,
                                         (gint) interval, NULL);
    gst_base_src_set_caps (GST_BASE_SRC (src), caps);
    gst_caps_unref (caps);
  }
  GstTagList *tags = NULL;
  static const struct { const char *header; const char *tag; } map[] = {
    { "icy-name", GST_TAG_ORGANIZATION }, { "icy-genre", GST_TAG_GENRE },
    { "icy-url", GST_TAG_LOCATION },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (map); i++) {
    const char *v = soup_message_headers_get_one (rh, map[i].header);
    if (v == NULL || !*v || !g_utf8_validate (v, -1, NULL))
      continue;                         /* a hostile server gets no tag, no crash */
    if (tags == NULL)
      tags = gst_tag_list_new_empty ();
    gst_tag_list_add (tags, GST_TAG_MERGE_REPLACE, map[i].tag, v, NULL);
  }
  if (tags)
    gst_pad_push_event (GST_BASE_SRC_PAD (src), gst_event_new_tag (tags));
}

/* Posts the error matching an HTTP status, like souphttpsrc. */
static void
status_error (GstBwssHttpSrc *src, guint status, const char *reason)
{
  GstStructure *details = gst_structure_new ("details", "http-status-code", G_TYPE_UINT, status, NULL);
  if (SOUP_STATUS_IS_REDIRECTION (status)) {
    const char *loc = soup_message_headers_get_one (soup_message_get_response_headers (src->msg), "Location");
    if (loc)
      gst_structure_set (details, "http-redirect-uri", G_TYPE_STRING, loc, NULL);
  }
  GQuark domain = GST_RESOURCE_ERROR;
  gint code = GST_RESOURCE_ERROR_OPEN_READ;
  if (status == SOUP_STATUS_NOT_FOUND)
    code = GST_RESOURCE_ERROR_NOT_FOUND;
  else if (status == SOUP_STATUS_UNAUTHORIZED || status == SOUP_STATUS_PAYMENT_REQUIRED
           || status == SOUP_STATUS_FORBIDDEN || status == SOUP_STATUS_PROXY_AUTHENTICATION_REQUIRED)
    code = GST_RESOURCE_ERROR_NOT_AUTHORIZED;
  gchar *text = g_strdup_printf ("%s", reason ? reason : soup_status_get_phrase (status));
  gchar *debug = g_strdup_printf ("%s (%u), URL: %s, Redirect to: %s", text, status, src->location,
                                  src->redirection_uri ? src->redirection_uri : "(NULL)");
  gst_element_message_full_with_details (GST_ELEMENT (src), GST_MESSAGE_ERROR, domain, code, text,
                                         debug, __FILE__, GST_FUNCTION, __LINE__, details);
}

/* Sends the request for the bytes from src->offset.  Returns GST_FLOW_OK,
 * GST_FLOW_FLUSHING when cancelled, GST_FLOW_ERROR (error posted), or
 * GST_FLOW_CUSTOM_ERROR for a transport failure worth a retry. */
static GstFlowReturn
open_request (GstBwssHttpSrc *src, const char *method, gboolean probe)
{
  if (!ensure_session (src))
    return GST_FLOW_ERROR;
  close_request (src);
  src->msg = soup_message_new (method, src->location);
  if (src->msg == NULL) {
    GST_ELEMENT_ERROR (src, RESOURCE, OPEN_READ, ("Error parsing URL."), ("URL: %s", src->location));
    return GST_FLOW_ERROR;
  }
  SoupMessageHeaders *h = soup_message_get_request_headers (src->msg);
  if (!src->automatic_redirect)
    soup_message_add_flags (src->msg, SOUP_MESSAGE_NO_REDIRECT);
  if (!src->keep_alive)
    soup_message_headers_replace (h, "Connection", "close");
  if (src->iradio_mode)
    soup_message_headers_replace (h, "icy-metadata", "1");
  if (!src->compress)
    soup_message_headers_replace (h, "Accept-Encoding", "identity");
  if (src->cookies)
    for (gchar **c = src->cookies; *c; c++)
      soup_message_headers_append (h, "Cookie", *c);
  if (src->extra_headers)
    gst_structure_foreach (src->extra_headers, add_extra_header, h);
  if (src->offset > 0 && strcmp (method, "HEAD") != 0)
    soup_message_headers_set_range (h, (goffset) src->offset, -1);
  src->request_start = src->offset;
  g_signal_connect (src->msg, "network-event", G_CALLBACK (on_network_event), src);
  g_signal_connect (src->msg, "accept-certificate", G_CALLBACK (accept_certificate), src);
  g_signal_connect (src->msg, "authenticate", G_CALLBACK (on_authenticate), src);

  g_autoptr (GError) err = NULL;
  src->input = soup_session_send (src->session, src->msg, src->cancellable, &err);
  if (src->input == NULL) {
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      return GST_FLOW_FLUSHING;
    GST_WARNING_OBJECT (src, "request failed: %s", err->message);
    if (probe)
      return GST_FLOW_ERROR;
    if (src->retries < 0 || src->retry_count < src->retries)
      return GST_FLOW_CUSTOM_ERROR;
    GST_ELEMENT_ERROR (src, RESOURCE, OPEN_READ, ("Could not establish connection to server."),
                       ("%s, URL: %s", err->message, src->location));
    return GST_FLOW_ERROR;
  }
  bwss_track_connection (src);
  guint status = soup_message_get_status (src->msg);
  GUri *final = soup_message_get_uri (src->msg);
  g_autofree char *final_s = g_uri_to_string (final);
  if (g_strcmp0 (final_s, src->location) != 0) {
    g_free (src->redirection_uri);
    src->redirection_uri = g_strdup (final_s);
  }
  /* a HEAD probe (size, seekability) is silent: the GET that follows
   * reports, and some servers refuse HEAD */
  if (probe)
    return SOUP_STATUS_IS_SUCCESSFUL (status) ? GST_FLOW_OK : GST_FLOW_ERROR;
  if (!src->got_headers || status != SOUP_STATUS_PARTIAL_CONTENT) {
    src->got_headers = TRUE;
    announce_headers (src);
  }
  if (!SOUP_STATUS_IS_SUCCESSFUL (status)) {
    status_error (src, status, soup_message_get_reason_phrase (src->msg));
    return GST_FLOW_ERROR;
  }
  SoupMessageHeaders *rh = soup_message_get_response_headers (src->msg);
  goffset len = soup_message_headers_get_content_length (rh);
  const char *ranges = soup_message_headers_get_one (rh, "Accept-Ranges");
  if (status == SOUP_STATUS_PARTIAL_CONTENT) {
    goffset start, end, total;
    if (soup_message_headers_get_content_range (rh, &start, &end, &total) && total > 0)
      announce_size (src, (guint64) total);
    src->seekable = TRUE;
  } else {
    if (src->offset > 0 && strcmp (method, "HEAD") != 0) {
      GST_ELEMENT_ERROR (src, RESOURCE, SEEK, ("Server does not accept Range HTTP header, URL: %s",
                         src->location), (NULL));
      return GST_FLOW_ERROR;
    }
    if (len > 0)
      announce_size (src, (guint64) len);
    src->seekable = len > 0 && !(ranges && g_ascii_strcasecmp (ranges, "none") == 0);
  }
  src->know_seekable = TRUE;
  src->retry_count = 0;
  announce_icy (src, rh);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_bwss_http_src_create (GstPushSrc *psrc, GstBuffer **outbuf)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (psrc);
  GstBaseSrc *bsrc = GST_BASE_SRC (psrc);
  if (src->seek_to != G_MAXUINT64) {
    src->offset = src->seek_to;
    src->seek_to = G_MAXUINT64;
    close_request (src);
  }
  for (;;) {
    if (src->input == NULL) {
      GstFlowReturn r = open_request (src, src->method ? src->method : "GET", FALSE);
      if (r == GST_FLOW_CUSTOM_ERROR) {
        src->retry_count++;
        close_request (src);
        continue;
      }
      if (r != GST_FLOW_OK)
        return r;
      if (src->method && strcmp (src->method, "HEAD") == 0) {
        bwss_unregister (src);
        return GST_FLOW_EOS;
      }
    }
    guint blocksize = gst_base_src_get_blocksize (bsrc);
    GstBuffer *buf = gst_buffer_new_allocate (NULL, blocksize, NULL);
    GstMapInfo map;
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    g_autoptr (GError) err = NULL;
    gssize n = g_input_stream_read (src->input, map.data, blocksize, src->cancellable, &err);
    gst_buffer_unmap (buf, &map);
    if (n > 0) {
      gst_buffer_set_size (buf, (gsize) n);
      GST_BUFFER_OFFSET (buf) = src->offset;
      src->offset += (guint64) n;
      GST_BUFFER_OFFSET_END (buf) = src->offset;
      account (src, (gsize) n);
      *outbuf = buf;
      return GST_FLOW_OK;
    }
    gst_buffer_unref (buf);
    if (n == 0) {
      /* the body ended; short of Content-Length means the connection broke */
      if (src->have_size && src->offset < src->content_size
          && (src->retries < 0 || src->retry_count < src->retries)) {
        GST_WARNING_OBJECT (src, "connection closed at %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                            ", resuming", src->offset, src->content_size);
        src->retry_count++;
        close_request (src);
        continue;
      }
      if (src->have_size && src->offset < src->content_size) {
        GST_ELEMENT_ERROR (src, RESOURCE, READ, ("Server closed the connection early."),
                           ("got %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes",
                            src->offset, src->content_size));
        bwss_unregister (src);
        return GST_FLOW_ERROR;
      }
      if (src->late_on)
        bwss_late_finish (&src->late);
      post_stats (src, g_get_monotonic_time ());
      bwss_unregister (src);
      /* finish the message now: a request still open when unlock() cancels
       * it on the way to READY would take its keep-alive connection along */
      close_request (src);
      return GST_FLOW_EOS;
    }
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      return GST_FLOW_FLUSHING;
    if (src->retries < 0 || src->retry_count < src->retries) {
      GST_WARNING_OBJECT (src, "read error at %" G_GUINT64_FORMAT ": %s, resuming", src->offset,
                          err->message);
      src->retry_count++;
      close_request (src);
      continue;
    }
    GST_ELEMENT_ERROR (src, RESOURCE, READ, ("Could not read from resource."),
                       ("%s, URL: %s", err->message, src->location));
    bwss_unregister (src);
    return GST_FLOW_ERROR;
  }
}

/* ---- GstBaseSrc ------------------------------------------------------------ */

static gboolean
gst_bwss_http_src_start (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (src->location == NULL) {
    GST_ELEMENT_ERROR (src, RESOURCE, OPEN_READ, ("No URL set."), ("Missing location property"));
    return FALSE;
  }
  src->cancellable = g_cancellable_new ();
  src->offset = 0;
  src->seek_to = G_MAXUINT64;
  src->retry_count = 0;
  src->bytes = 0;
  src->start_time = 0;
  src->late_on = FALSE;
  src->bitrate_in_use = 0;
  src->bitrate_source = NULL;
  src->got_headers = FALSE;
  if (src->bitrate || src->min_rate)
    bwss_refresh_bitrate (src);
  return TRUE;
}

static gboolean
gst_bwss_http_src_stop (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  close_request (src);
  bwss_unregister (src);
  /* keep-alive (adaptive demuxers set it and go through READY between
   * fragments): the session and its idle connection stay until NULL, so the
   * next request skips the handshake and slow start, as with souphttpsrc */
  if (!src->keep_alive)
    drop_session (src);
  g_clear_object (&src->cancellable);
  src->have_size = FALSE;
  src->know_seekable = FALSE;
  return TRUE;
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

static gboolean
gst_bwss_http_src_unlock (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (src->cancellable)
    g_cancellable_cancel (src->cancellable);
  return TRUE;
}

static gboolean
gst_bwss_http_src_unlock_stop (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (src->cancellable && g_cancellable_is_cancelled (src->cancellable)) {
    /* a cancelled request cannot continue: start a new one */
    close_request (src);
    g_object_unref (src->cancellable);
    src->cancellable = g_cancellable_new ();
  }
  return TRUE;
}

/* HEAD once to learn the size and whether the server takes ranges, when
 * asked before the GET has answered.  Not while starting (READY→PAUSED):
 * the GET that follows tells the same, and a HEAD before every request is
 * one round trip more per fragment for an adaptive demuxer (souphttpsrc
 * does the same). */
static void
probe_head (GstBwssHttpSrc *src)
{
  if (src->know_seekable || src->input || src->is_live || GST_STATE (src) < GST_STATE_PAUSED)
    return;
  if (open_request (src, "HEAD", TRUE) == GST_FLOW_OK) {
    SoupMessageHeaders *rh = soup_message_get_response_headers (src->msg);
    goffset len = soup_message_headers_get_content_length (rh);
    const char *ranges = soup_message_headers_get_one (rh, "Accept-Ranges");
    if (len > 0) {
      src->content_size = (guint64) len;
      src->have_size = TRUE;
    }
    src->seekable = len > 0 && ranges && g_ascii_strcasecmp (ranges, "bytes") == 0;
    src->know_seekable = TRUE;
    /* read the (empty) body to its end: libsoup returns a connection to
     * the pool only for a message read to the end */
    guint8 byte;
    g_input_stream_read (src->input, &byte, 1, src->cancellable, NULL);
  }
  close_request (src);
}

static gboolean
gst_bwss_http_src_get_size (GstBaseSrc *bsrc, guint64 *size)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (src->have_size) {
    *size = src->content_size;
    return TRUE;
  }
  return FALSE;
}

static gboolean
gst_bwss_http_src_is_seekable (GstBaseSrc *bsrc)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  probe_head (src);
  return src->seekable;
}

static gboolean
gst_bwss_http_src_do_seek (GstBaseSrc *bsrc, GstSegment *segment)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  if (segment->format != GST_FORMAT_BYTES)
    return FALSE;
  guint64 pos = segment->start;
  if (pos == src->offset && (src->input || pos == 0))
    return TRUE;
  if (src->know_seekable && !src->seekable && pos != 0) {
    GST_WARNING_OBJECT (src, "the server cannot seek");
    return FALSE;
  }
  /* a seek reconnects: the flow is registered again with the new connection */
  src->seek_to = pos;
  return TRUE;
}

static gboolean
gst_bwss_http_src_query (GstBaseSrc *bsrc, GstQuery *query)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (bsrc);
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_URI:
      gst_query_set_uri (query, src->location);
      if (src->redirection_uri)
        gst_query_set_uri_redirection (query, src->redirection_uri);
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

/* ---- properties -------------------------------------------------------------- */

static gboolean
set_location (GstBwssHttpSrc *src, const gchar *uri, GError **error)
{
  if (GST_STATE (src) >= GST_STATE_PAUSED) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
                 "Changing the location on a running source is not supported");
    return FALSE;
  }
  g_free (src->location);
  g_free (src->redirection_uri);
  src->redirection_uri = NULL;
  src->location = NULL;
  if (uri == NULL)
    return TRUE;
  if (!gst_uri_is_valid (uri)) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "Invalid URI '%s'", uri);
    return FALSE;
  }
  /* icy:// and icyx:// are HTTP with another name */
  if (g_str_has_prefix (uri, "icy://"))
    src->location = g_strdup_printf ("http://%s", uri + 6);
  else if (g_str_has_prefix (uri, "icyx://"))
    src->location = g_strdup_printf ("http://%s", uri + 7);
  else
    src->location = g_strdup (uri);
  return TRUE;
}

static void
gst_bwss_http_src_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  switch (prop_id) {
    case PROP_LOCATION: {
      g_autoptr (GError) err = NULL;
      if (!set_location (src, g_value_get_string (value), &err))
        GST_WARNING_OBJECT (src, "%s", err->message);
      break;
    }
    case PROP_USER_AGENT:
      g_free (src->user_agent);
      src->user_agent = g_value_dup_string (value);
      break;
    case PROP_AUTOMATIC_REDIRECT: src->automatic_redirect = g_value_get_boolean (value); break;
    case PROP_PROXY:
      g_free (src->proxy);
      src->proxy = g_value_dup_string (value);
      break;
    case PROP_USER_ID: g_free (src->user_id); src->user_id = g_value_dup_string (value); break;
    case PROP_USER_PW: g_free (src->user_pw); src->user_pw = g_value_dup_string (value); break;
    case PROP_PROXY_ID: g_free (src->proxy_id); src->proxy_id = g_value_dup_string (value); break;
    case PROP_PROXY_PW: g_free (src->proxy_pw); src->proxy_pw = g_value_dup_string (value); break;
    case PROP_COOKIES:
      g_strfreev (src->cookies);
      src->cookies = g_strdupv (g_value_get_boxed (value));
      break;
    case PROP_IS_LIVE:
      src->is_live = g_value_get_boolean (value);
      gst_base_src_set_live (GST_BASE_SRC (src), src->is_live);
      break;
    case PROP_TIMEOUT: src->timeout = g_value_get_uint (value); break;
    case PROP_EXTRA_HEADERS: {
      const GstStructure *s = gst_value_get_structure (value);
      if (src->extra_headers)
        gst_structure_free (src->extra_headers);
      src->extra_headers = s ? gst_structure_copy (s) : NULL;
      break;
    }
    case PROP_IRADIO_MODE: src->iradio_mode = g_value_get_boolean (value); break;
    case PROP_HTTP_LOG_LEVEL: src->log_level = g_value_get_enum (value); break;
    case PROP_COMPRESS: src->compress = g_value_get_boolean (value); break;
    case PROP_KEEP_ALIVE: src->keep_alive = g_value_get_boolean (value); break;
    case PROP_SSL_STRICT: src->ssl_strict = g_value_get_boolean (value); break;
    case PROP_SSL_CA_FILE: g_free (src->ssl_ca_file); src->ssl_ca_file = g_value_dup_string (value); break;
    case PROP_SSL_USE_SYSTEM_CA_FILE: src->ssl_use_system_ca_file = g_value_get_boolean (value); break;
    case PROP_TLS_DATABASE:
      g_clear_object (&src->tls_database);
      src->tls_database = g_value_dup_object (value);
      break;
    case PROP_TLS_INTERACTION:
      g_clear_object (&src->tls_interaction);
      src->tls_interaction = g_value_dup_object (value);
      break;
    case PROP_RETRIES: src->retries = g_value_get_int (value); break;
    case PROP_METHOD: g_free (src->method); src->method = g_value_dup_string (value); break;
    case PROP_TYPEFIND: src->typefind = g_value_get_boolean (value); break;
    case PROP_PRIORITY: src->priority = g_value_get_int (value); bwss_update_prefs (src); break;
    case PROP_WEIGHT: src->weight = g_value_get_double (value); bwss_update_prefs (src); break;
    case PROP_MIN_RATE: src->min_rate = g_value_get_uint64 (value); bwss_update_prefs (src); break;
    case PROP_RATE_HEADROOM:
      src->rate_headroom = g_value_get_double (value);
      bwss_update_prefs (src);
      break;
    case PROP_BITRATE:
      src->bitrate = g_value_get_uint64 (value);
      if (src->bitrate) {
        src->bitrate_in_use = src->bitrate;
        src->bitrate_source = "property";
        bwss_update_prefs (src);
      }
      break;
    case PROP_STATS_INTERVAL: src->stats_interval = g_value_get_uint64 (value); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_bwss_http_src_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  switch (prop_id) {
    case PROP_LOCATION: g_value_set_string (value, src->location); break;
    case PROP_USER_AGENT: g_value_set_string (value, src->user_agent); break;
    case PROP_AUTOMATIC_REDIRECT: g_value_set_boolean (value, src->automatic_redirect); break;
    case PROP_PROXY: g_value_set_string (value, src->proxy); break;
    case PROP_USER_ID: g_value_set_string (value, src->user_id); break;
    case PROP_USER_PW: g_value_set_string (value, src->user_pw); break;
    case PROP_PROXY_ID: g_value_set_string (value, src->proxy_id); break;
    case PROP_PROXY_PW: g_value_set_string (value, src->proxy_pw); break;
    case PROP_COOKIES: g_value_set_boxed (value, src->cookies); break;
    case PROP_IS_LIVE: g_value_set_boolean (value, src->is_live); break;
    case PROP_TIMEOUT: g_value_set_uint (value, src->timeout); break;
    case PROP_EXTRA_HEADERS: gst_value_set_structure (value, src->extra_headers); break;
    case PROP_IRADIO_MODE: g_value_set_boolean (value, src->iradio_mode); break;
    case PROP_HTTP_LOG_LEVEL: g_value_set_enum (value, src->log_level); break;
    case PROP_COMPRESS: g_value_set_boolean (value, src->compress); break;
    case PROP_KEEP_ALIVE: g_value_set_boolean (value, src->keep_alive); break;
    case PROP_SSL_STRICT: g_value_set_boolean (value, src->ssl_strict); break;
    case PROP_SSL_CA_FILE: g_value_set_string (value, src->ssl_ca_file); break;
    case PROP_SSL_USE_SYSTEM_CA_FILE: g_value_set_boolean (value, src->ssl_use_system_ca_file); break;
    case PROP_TLS_DATABASE: g_value_set_object (value, src->tls_database); break;
    case PROP_TLS_INTERACTION: g_value_set_object (value, src->tls_interaction); break;
    case PROP_RETRIES: g_value_set_int (value, src->retries); break;
    case PROP_METHOD: g_value_set_string (value, src->method); break;
    case PROP_TYPEFIND: g_value_set_boolean (value, src->typefind); break;
    case PROP_PRIORITY: g_value_set_int (value, src->priority); break;
    case PROP_WEIGHT: g_value_set_double (value, src->weight); break;
    case PROP_MIN_RATE: g_value_set_uint64 (value, src->min_rate); break;
    case PROP_RATE_HEADROOM: g_value_set_double (value, src->rate_headroom); break;
    case PROP_BITRATE: g_value_set_uint64 (value, src->bitrate); break;
    case PROP_STATS_INTERVAL: g_value_set_uint64 (value, src->stats_interval); break;
    case PROP_STATS:
      g_mutex_lock (&src->stats_lock);
      if (src->stats)
        gst_value_set_structure (value, src->stats);
      else
        g_value_take_boxed (value, build_stats (src, g_get_monotonic_time ()));
      g_mutex_unlock (&src->stats_lock);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_bwss_http_src_finalize (GObject *object)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  release_all (src);                    /* if never set back to NULL */
  g_free (src->location);
  g_free (src->redirection_uri);
  g_free (src->user_agent);
  g_free (src->proxy);
  g_free (src->user_id);
  g_free (src->user_pw);
  g_free (src->proxy_id);
  g_free (src->proxy_pw);
  g_strfreev (src->cookies);
  if (src->extra_headers)
    gst_structure_free (src->extra_headers);
  g_free (src->ssl_ca_file);
  g_clear_object (&src->tls_database);
  g_clear_object (&src->tls_interaction);
  g_free (src->method);
  if (src->stats)
    gst_structure_free (src->stats);
  g_mutex_clear (&src->stats_lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_bwss_http_src_init (GstBwssHttpSrc *src)
{
  src->user_agent = g_strdup (DEFAULT_USER_AGENT);
  src->automatic_redirect = DEFAULT_AUTOMATIC_REDIRECT;
  src->proxy = g_strdup (DEFAULT_PROXY);
  src->is_live = DEFAULT_IS_LIVE;
  src->timeout = DEFAULT_TIMEOUT;
  src->iradio_mode = DEFAULT_IRADIO_MODE;
  src->log_level = DEFAULT_HTTP_LOG_LEVEL;
  src->compress = DEFAULT_COMPRESS;
  src->keep_alive = DEFAULT_KEEP_ALIVE;
  src->ssl_strict = DEFAULT_SSL_STRICT;
  src->ssl_use_system_ca_file = DEFAULT_SSL_USE_SYSTEM_CA_FILE;
  src->retries = DEFAULT_RETRIES;
  src->priority = DEFAULT_PRIORITY;
  src->weight = DEFAULT_WEIGHT;
  src->min_rate = DEFAULT_MIN_RATE;
  src->rate_headroom = DEFAULT_RATE_HEADROOM;
  src->bitrate = DEFAULT_BITRATE;
  src->stats_interval = DEFAULT_STATS_INTERVAL;
  src->flow_fd = -1;
  src->idle_fd = -1;
  src->seek_to = G_MAXUINT64;
  g_mutex_init (&src->stats_lock);
  gst_base_src_set_automatic_eos (GST_BASE_SRC (src), FALSE);
  gst_base_src_set_blocksize (GST_BASE_SRC (src), DEFAULT_BLOCKSIZE);
}

static void
gst_bwss_http_src_class_init (GstBwssHttpSrcClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *base_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *push_class = GST_PUSH_SRC_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->set_property = gst_bwss_http_src_set_property;
  gobject_class->get_property = gst_bwss_http_src_get_property;
  gobject_class->finalize = gst_bwss_http_src_finalize;
  element_class->change_state = gst_bwss_http_src_change_state;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location", "Location to read from", "", rw));
  g_object_class_install_property (gobject_class, PROP_USER_AGENT,
      g_param_spec_string ("user-agent", "User-Agent",
          "Value of the User-Agent HTTP request header field", DEFAULT_USER_AGENT, rw));
  g_object_class_install_property (gobject_class, PROP_AUTOMATIC_REDIRECT,
      g_param_spec_boolean ("automatic-redirect", "automatic-redirect",
          "Automatically follow HTTP redirects (HTTP Status Code 3xx)", DEFAULT_AUTOMATIC_REDIRECT, rw));
  g_object_class_install_property (gobject_class, PROP_PROXY,
      g_param_spec_string ("proxy", "Proxy", "HTTP proxy server URI", DEFAULT_PROXY, rw));
  g_object_class_install_property (gobject_class, PROP_USER_ID,
      g_param_spec_string ("user-id", "user-id", "HTTP location URI user id for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_USER_PW,
      g_param_spec_string ("user-pw", "user-pw", "HTTP location URI user password for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_PROXY_ID,
      g_param_spec_string ("proxy-id", "proxy-id", "HTTP proxy URI user id for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_PROXY_PW,
      g_param_spec_string ("proxy-pw", "proxy-pw", "HTTP proxy URI user password for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_COOKIES,
      g_param_spec_boxed ("cookies", "Cookies", "HTTP request cookies", G_TYPE_STRV, rw));
  g_object_class_install_property (gobject_class, PROP_IS_LIVE,
      g_param_spec_boolean ("is-live", "is-live", "Act like a live source", DEFAULT_IS_LIVE, rw));
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint ("timeout", "timeout",
          "Value in seconds to timeout a blocking I/O (0 = No timeout).", 0, 3600, DEFAULT_TIMEOUT, rw));
  g_object_class_install_property (gobject_class, PROP_EXTRA_HEADERS,
      g_param_spec_boxed ("extra-headers", "Extra Headers",
          "Extra headers to append to the HTTP request", GST_TYPE_STRUCTURE, rw));
  g_object_class_install_property (gobject_class, PROP_IRADIO_MODE,
      g_param_spec_boolean ("iradio-mode", "iradio-mode",
          "Enable internet radio mode (ask server to send shoutcast/icecast metadata interleaved with the actual stream data)",
          DEFAULT_IRADIO_MODE, rw));
  g_object_class_install_property (gobject_class, PROP_HTTP_LOG_LEVEL,
      g_param_spec_enum ("http-log-level", "HTTP log level", "Set log level for soup's HTTP session log",
          SOUP_TYPE_LOGGER_LOG_LEVEL, DEFAULT_HTTP_LOG_LEVEL, rw));
  g_object_class_install_property (gobject_class, PROP_COMPRESS,
      g_param_spec_boolean ("compress", "Compress", "Allow compressed content encodings",
          DEFAULT_COMPRESS, rw));
  g_object_class_install_property (gobject_class, PROP_KEEP_ALIVE,
      g_param_spec_boolean ("keep-alive", "keep-alive", "Use HTTP persistent connections",
          DEFAULT_KEEP_ALIVE, rw));
  g_object_class_install_property (gobject_class, PROP_SSL_STRICT,
      g_param_spec_boolean ("ssl-strict", "SSL Strict", "Strict SSL certificate checking",
          DEFAULT_SSL_STRICT, rw));
  g_object_class_install_property (gobject_class, PROP_SSL_CA_FILE,
      g_param_spec_string ("ssl-ca-file", "SSL CA File", "Location of a SSL anchor CA file to use",
          NULL, rw));
  g_object_class_install_property (gobject_class, PROP_SSL_USE_SYSTEM_CA_FILE,
      g_param_spec_boolean ("ssl-use-system-ca-file", "Use System CA File", "Use system CA file",
          DEFAULT_SSL_USE_SYSTEM_CA_FILE, rw));
  g_object_class_install_property (gobject_class, PROP_TLS_DATABASE,
      g_param_spec_object ("tls-database", "TLS database",
          "TLS database with anchor certificate authorities used to validate the server certificate",
          G_TYPE_TLS_DATABASE, rw));
  g_object_class_install_property (gobject_class, PROP_TLS_INTERACTION,
      g_param_spec_object ("tls-interaction", "TLS interaction",
          "A GTlsInteraction object to be used when the connection or certificate database need to interact with the user.",
          G_TYPE_TLS_INTERACTION, rw));
  g_object_class_install_property (gobject_class, PROP_RETRIES,
      g_param_spec_int ("retries", "Retries", "Maximum number of retries until giving up (-1=infinite)",
          -1, G_MAXINT, DEFAULT_RETRIES, rw));
  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_string ("method", "HTTP method", "The HTTP method to use (GET, HEAD, OPTIONS, etc)",
          NULL, rw));
  g_object_class_install_property (gobject_class, PROP_TYPEFIND,
      g_param_spec_boolean ("typefind", "Typefind", "Run typefind before negotiating (deprecated, non-functional)",
          FALSE, rw | G_PARAM_DEPRECATED));

  /* BWSS */
  g_object_class_install_property (gobject_class, PROP_PRIORITY,
      g_param_spec_int ("priority", "BWSS priority",
          "Priority of this flow in the BWSS domain: minimum rates are served from the highest priority down",
          G_MININT32, G_MAXINT32, DEFAULT_PRIORITY, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_WEIGHT,
      g_param_spec_double ("weight", "BWSS weight",
          "Share of the link left after the minimum rates, relative to the other flows' weights",
          0, 1e9, DEFAULT_WEIGHT, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_MIN_RATE,
      g_param_spec_uint64 ("min-rate", "BWSS minimum rate",
          "Minimum rate in bit/s (0 = automatic: stream bitrate x rate-headroom)",
          0, G_MAXUINT64, DEFAULT_MIN_RATE, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_RATE_HEADROOM,
      g_param_spec_double ("rate-headroom", "Rate headroom",
          "Automatic minimum rate = stream bitrate x this (the paper used 520k for a 450k stream)",
          1.0, 10.0, DEFAULT_RATE_HEADROOM, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_BITRATE,
      g_param_spec_uint64 ("bitrate", "Bitrate hint",
          "Stream bitrate in bit/s if known (0 = ask downstream, then Content-Length / duration)",
          0, G_MAXUINT64, DEFAULT_BITRATE, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      g_param_spec_uint64 ("stats-interval", "Stats interval",
          "Interval between bwss-stats element messages, ns (0 = only at EOS)",
          0, G_MAXUINT64, DEFAULT_STATS_INTERVAL, rw));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "bytes, mean-rate, current-rate, target-rate, min-rate, bitrate, sigma, rtt, window, "
          "late-0.5 … late-8, required-prebuffer (see docs/element.md)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

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

  GST_DEBUG_CATEGORY_INIT (bwss_http_src_debug, "bwsshttpsrc", 0, "BWSS HTTP source");
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
  return g_strdup (src->redirection_uri ? src->redirection_uri : src->location);
}

static gboolean
uri_set_uri (GstURIHandler *handler, const gchar *uri, GError **error)
{
  return set_location (GST_BWSS_HTTP_SRC (handler), uri, error);
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

/* ---- plugin ---------------------------------------------------------------------- */

static gboolean
plugin_init (GstPlugin *plugin)
{
  /* above souphttpsrc (PRIMARY) so playbin, uridecodebin and the adaptive
   * demuxers pick it; GST_PLUGIN_FEATURE_RANK=bwsshttpsrc:NONE demotes it */
  return gst_element_register (plugin, "bwsshttpsrc", GST_RANK_PRIMARY + 1, GST_TYPE_BWSS_HTTP_SRC);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, bwss,
    "Receiver-driven bandwidth sharing: an HTTP source that puts the video first",
    plugin_init, PACKAGE_VERSION, "LGPL", "bwss", "bwss")

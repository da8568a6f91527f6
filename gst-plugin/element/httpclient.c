/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * httpclient.c — requests, response checks and body reading (httpclient.h).
 *
 * Failures are sorted once, in classify_send_error(): what another attempt
 * may cure (the connection broke before the server said a word) is
 * HTTP_RETRY; what it would repeat (garbage, a refused certificate, a
 * redirect loop, a server that accepted the request and then said nothing
 * for a whole timeout, as souphttpsrc treats it) is HTTP_FAILED.  The
 * element owns the retry policy (how many attempts a read position gets).
 */
#include <string.h>
#include "chunked.h"
#include "httpclient.h"

G_DEFINE_QUARK (bwss-http-error-quark, http_error)

struct HttpClient {
  SoupSession      *session;
  SoupMessage      *msg;
  GInputStream     *input;          /* libsoup's body stream */
  ChunkedReader    *chunked;        /* set when we decode chunked ourselves */
  gboolean          body_done;      /* the body was read to its end */
  HttpResponse      resp;
  HttpConnectedFunc on_connected;
  HttpAcceptCertificateFunc accept_certificate;
  gpointer          data;
  const HttpConfig *cfg;            /* during http_client_open only */
  /* the resource seen first, for checking later responses */
  gboolean          known;
  gboolean          known_have_size;
  guint64           known_size;
  gchar            *known_etag;
  gchar            *known_modified;
};

void
http_config_clear (HttpConfig *cfg)
{
  g_free (cfg->user_agent);
  g_free (cfg->proxy);
  g_free (cfg->user_id);
  g_free (cfg->user_pw);
  g_free (cfg->proxy_id);
  g_free (cfg->proxy_pw);
  g_strfreev (cfg->cookies);
  if (cfg->extra_headers)
    gst_structure_free (cfg->extra_headers);
  g_free (cfg->ssl_ca_file);
  g_clear_object (&cfg->tls_database);
  g_clear_object (&cfg->tls_interaction);
  memset (cfg, 0, sizeof *cfg);
}

HttpClient *
http_client_new (HttpConnectedFunc on_connected, gpointer data)
{
  HttpClient *c = g_new0 (HttpClient, 1);
  c->on_connected = on_connected;
  c->data = data;
  return c;
}

void
http_client_set_accept_certificate (HttpClient *c, HttpAcceptCertificateFunc func)
{
  c->accept_certificate = func;
}

static void
response_clear (HttpResponse *r)
{
  g_free (r->reason);
  g_free (r->final_uri);
  memset (r, 0, sizeof *r);
}

void
http_client_forget_resource (HttpClient *c)
{
  c->known = FALSE;
  g_clear_pointer (&c->known_etag, g_free);
  g_clear_pointer (&c->known_modified, g_free);
}

void
http_client_free (HttpClient *c)
{
  if (c == NULL)
    return;
  http_client_drop_session (c);
  http_client_forget_resource (c);
  g_free (c);
}

void
http_client_drop_session (HttpClient *c)
{
  http_client_close (c);
  g_clear_object (&c->session);
}

/* ---- the session ---- */

/* Returns the session, made from @cfg the first time; NULL with @error if
 * the CA file cannot be loaded. */
static SoupSession *
ensure_session (HttpClient *c, const HttpConfig *cfg, GError **error)
{
  if (c->session)
    return c->session;
  GTlsDatabase *db = NULL;
  gboolean set_db = TRUE;
  if (cfg->tls_database) {
    db = g_object_ref (cfg->tls_database);
  } else if (cfg->ssl_ca_file) {
    g_autoptr (GError) err = NULL;
    db = g_tls_file_database_new (cfg->ssl_ca_file, &err);
    if (db == NULL) {
      g_set_error (error, HTTP_ERROR, HTTP_ERROR_TLS, "cannot load the CA file %s: %s",
                   cfg->ssl_ca_file, err->message);
      return NULL;
    }
  } else if (cfg->ssl_use_system_ca_file) {
    set_db = FALSE;                   /* libsoup's default: the system's anchors */
  }
  /* else: no anchors at all, every certificate is unknown (ssl-strict
   * decides whether that is accepted) */
  /* no session user agent: each request carries its own (user_agent_header) */
  c->session = lsoup_session_new (cfg->timeout);
  if (set_db)
    g_object_set (c->session, "tls-database", db, NULL);
  g_clear_object (&db);
  if (cfg->proxy && *cfg->proxy) {
    g_autofree char *uri = strstr (cfg->proxy, "://") ? g_strdup (cfg->proxy)
                                                      : g_strdup_printf ("http://%s", cfg->proxy);
    GProxyResolver *r = g_simple_proxy_resolver_new (uri, NULL);
    g_object_set (c->session, "proxy-resolver", r, NULL);
    g_object_unref (r);
  }
  if (!cfg->compress)
    lsoup_session_remove_content_decoder (c->session);
  if (cfg->tls_interaction)
    g_object_set (c->session, "tls-interaction", cfg->tls_interaction, NULL);
  if (cfg->log)
    lsoup_session_add_logger (c->session, cfg->log_level);
  return c->session;
}

/* ---- the request ---- */

static void
on_connected (int fd, gpointer data)
{
  HttpClient *c = data;
  if (c->on_connected)
    c->on_connected (fd, c->data);
}

/* libsoup asks about a certificate that failed verification. */
static gboolean
accept_certificate (GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer data)
{
  HttpClient *c = data;
  if (c->cfg == NULL)
    return FALSE;
  if (!c->cfg->ssl_strict)
    return TRUE;
  return c->accept_certificate && c->accept_certificate (cert, errors, c->data);
}

static gboolean
on_authenticate (SoupAuth *auth, gboolean retrying, gpointer data)
{
  HttpClient *c = data;
  const HttpConfig *cfg = c->cfg;
  if (retrying || cfg == NULL)
    return FALSE;
  if (lsoup_auth_is_for_proxy (auth) && cfg->proxy_id && cfg->proxy_pw) {
    lsoup_auth_authenticate (auth, cfg->proxy_id, cfg->proxy_pw);
    return TRUE;
  }
  if (!lsoup_auth_is_for_proxy (auth) && cfg->user_id && cfg->user_pw) {
    lsoup_auth_authenticate (auth, cfg->user_id, cfg->user_pw);
    return TRUE;
  }
  return FALSE;
}

static const LsoupHooks hooks = {
  .connected = on_connected,
  .accept_certificate = accept_certificate,
  .authenticate = on_authenticate,
};

static gboolean
add_extra_header (GQuark field, const GValue *value, gpointer data)
{
  SoupMessageHeaders *h = data;
  const char *name = g_quark_to_string (field);
  if (G_VALUE_HOLDS_STRING (value)) {
    lsoup_message_headers_append (h, name, g_value_get_string (value));
  } else if (GST_VALUE_HOLDS_ARRAY (value) || GST_VALUE_HOLDS_LIST (value)) {
    gboolean array = GST_VALUE_HOLDS_ARRAY (value);
    guint n = array ? gst_value_array_get_size (value) : gst_value_list_get_size (value);
    for (guint i = 0; i < n; i++) {
      const GValue *v = array ? gst_value_array_get_value (value, i) : gst_value_list_get_value (value, i);
      g_autofree char *s = G_VALUE_HOLDS_STRING (v) ? g_value_dup_string (v) : gst_value_serialize (v);
      if (s)
        lsoup_message_headers_append (h, name, s);
    }
  } else {
    g_autofree char *s = gst_value_serialize (value);
    if (s)
      lsoup_message_headers_append (h, name, s);
  }
  return TRUE;
}

/* The User-Agent header for the user-agent property, as souphttpsrc makes
 * it: "{VERSION}" replaced by the plugin's version (GStreamer >= 1.24, whose
 * default carries it), and libsoup's product token appended when the value
 * is empty or ends with a space. */
static gchar *
user_agent_header (const char *property)
{
  GString *ua = g_string_new (property);
#if GST_CHECK_VERSION(1, 24, 0)
  g_string_replace (ua, "{VERSION}", PACKAGE_VERSION, 0);
#endif
  if (ua->len == 0 || ua->str[ua->len - 1] == ' ') {
    guint major, minor, micro;
    lsoup_get_version (&major, &minor, &micro);
    g_string_append_printf (ua, "libsoup/%u.%u.%u", major, minor, micro);
  }
  return g_string_free (ua, FALSE);
}

/* No last byte: the range from an offset runs to the resource's end. */
#define OPEN_END G_MAXUINT64

static SoupMessage *
build_message (HttpClient *c, const HttpConfig *cfg, const char *uri, const char *method, guint64 offset,
               guint64 last)
{
  SoupMessage *msg = lsoup_message_new (method, uri);
  if (msg == NULL)
    return NULL;
  SoupMessageHeaders *h = lsoup_message_get_request_headers (msg);
  g_autofree gchar *ua = user_agent_header (cfg->user_agent);
  lsoup_message_headers_replace (h, "User-Agent", ua);
  if (!cfg->automatic_redirect)
    lsoup_message_disable_redirects (msg);
  if (!cfg->keep_alive)
    lsoup_message_headers_replace (h, "Connection", "close");
  if (cfg->iradio_mode)
    lsoup_message_headers_replace (h, "icy-metadata", "1");
  if (!cfg->compress)
    lsoup_message_headers_replace (h, "Accept-Encoding", "identity");
  if (cfg->cookies)
    for (gchar **k = cfg->cookies; *k; k++)
      lsoup_message_headers_append (h, "Cookie", *k);
  if (cfg->extra_headers)
    gst_structure_foreach (cfg->extra_headers, add_extra_header, h);
  if (last != OPEN_END)
    lsoup_message_headers_set_range (h, (goffset) offset, (goffset) last);
  else if (offset > 0 && strcmp (method, "HEAD") != 0)
    lsoup_message_headers_set_range_from (h, (goffset) offset);
  lsoup_message_watch (c->session, msg, &hooks, c);
  return msg;
}

/* Sorts a failed send: HTTP_RETRY, HTTP_FAILED or HTTP_CANCELLED, with
 * @error (consumed) turned into an HTTP_ERROR in *out. */
static HttpResult
classify_send_error (SoupMessage *msg, GError *error, GError **out)
{
  LsoupFailure kind = lsoup_send_failure (msg, error);
  if (kind == LSOUP_FAILED_CANCELLED) {
    if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      g_clear_error (&error);           /* libsoup 2.4's own cancellation status */
      error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    }
    g_propagate_error (out, error);
    return HTTP_CANCELLED;
  }
  gboolean said = lsoup_message_response_started (msg);
  HttpResult res = HTTP_FAILED;
  HttpError code;
  const char *what;
  if (kind == LSOUP_FAILED_REDIRECTS) {
    code = HTTP_ERROR_TOO_MANY_REDIRECTS;
    what = "too many redirects";
  } else if (kind == LSOUP_FAILED_BAD_RESPONSE) {
    code = HTTP_ERROR_BAD_RESPONSE;
    what = "the server's answer is not HTTP";
  } else if (kind == LSOUP_FAILED_TLS || error->domain == G_TLS_ERROR) {
    code = HTTP_ERROR_TLS;
    what = "secure connection setup failed";
  } else if (kind == LSOUP_FAILED_RESOLVE || error->domain == G_RESOLVER_ERROR) {
    code = HTTP_ERROR_CONNECT;
    what = "could not resolve the server's name";
  } else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)) {
    code = HTTP_ERROR_TIMEOUT;
    what = said ? "the server stopped in the middle of its headers" : "no answer from the server";
  } else if (said) {
    code = HTTP_ERROR_BAD_RESPONSE;   /* e.g. headers too big, or cut off */
    what = "the server's headers could not be read";
  } else {
    code = HTTP_ERROR_CONNECT;        /* refused, reset, closed before a byte */
    what = "could not establish a connection to the server";
    res = HTTP_RETRY;
  }
  g_set_error (out, HTTP_ERROR, code, "%s (%s)", what, error->message);
  g_error_free (error);
  return res;
}

/* Parses a Content-Length header (every copy of it): TRUE with the value,
 * FALSE if it is absent (*present FALSE) or not one valid number. */
static gboolean
parse_content_length (SoupMessageHeaders *h, gboolean *present, guint64 *out)
{
  const char *all = lsoup_message_headers_get_list (h, "Content-Length");
  *present = all != NULL;
  if (all == NULL)
    return FALSE;
  g_auto (GStrv) parts = g_strsplit (all, ",", -1);
  gboolean have = FALSE;
  guint64 value = 0;
  for (gchar **p = parts; *p; p++) {
    const char *s = g_strstrip (*p);
    guint64 v;
    /* decimal digits only: no sign, no blanks inside, no hex */
    if (!*s || strspn (s, "0123456789") != strlen (s) || strlen (s) > 19
        || !g_ascii_string_to_unsigned (s, 10, 0, G_MAXINT64, &v, NULL))
      return FALSE;
    if (have && v != value)
      return FALSE;
    have = TRUE;
    value = v;
  }
  *out = value;
  return have;
}

/* Parses "bytes FIRST-LAST/TOTAL" (TOTAL may be "*"). */
static gboolean
parse_content_range (const char *v, guint64 *first, guint64 *last, gboolean *have_total, guint64 *total)
{
  if (v == NULL || g_ascii_strncasecmp (v, "bytes ", 6) != 0)
    return FALSE;
  g_auto (GStrv) a = g_strsplit (v + 6, "/", 2);
  if (g_strv_length (a) != 2)
    return FALSE;
  g_auto (GStrv) r = g_strsplit (g_strstrip (a[0]), "-", 2);
  if (g_strv_length (r) != 2
      || !g_ascii_string_to_unsigned (r[0], 10, 0, G_MAXINT64, first, NULL)
      || !g_ascii_string_to_unsigned (r[1], 10, 0, G_MAXINT64, last, NULL) || *last < *first)
    return FALSE;
  const char *t = g_strstrip (a[1]);
  *have_total = strcmp (t, "*") != 0;
  if (*have_total && (!g_ascii_string_to_unsigned (t, 10, 1, G_MAXINT64, total, NULL) || *total <= *last))
    return FALSE;
  return TRUE;
}

static HttpError
status_error_code (guint status)
{
  switch (status) {
    case 404:                          /* Not Found */
      return HTTP_ERROR_NOT_FOUND;
    case 401: case 402: case 403:      /* Unauthorized, Payment Required, Forbidden */
    case 407:                          /* Proxy Authentication Required */
      return HTTP_ERROR_NOT_AUTHORIZED;
    case 500: case 503:                /* Internal Server Error, Service Unavailable */
      return HTTP_ERROR_UNAVAILABLE;
    default:
      return HTTP_ERROR_STATUS;
  }
}

/* parse_response's steps, in its order; each returns FALSE with @error. */

/* The status line: a 2xx, else the error it maps to. */
static gboolean
response_status (HttpClient *c, GError **error)
{
  SoupMessage *msg = c->msg;
  HttpResponse *r = &c->resp;
  r->status = lsoup_message_get_status (msg);
  r->reason = g_strdup (lsoup_message_get_reason_phrase (msg));
  r->final_uri = lsoup_message_dup_uri (msg);
  r->connection_id = lsoup_message_get_connection_id (msg);
  if (r->status < 200 || r->status > 299) {
    g_set_error (error, HTTP_ERROR, status_error_code (r->status), "%s",
                 r->reason && *r->reason ? r->reason : lsoup_status_get_phrase (r->status));
    return FALSE;
  }
  return TRUE;
}

/* The body's length from Content-Length (*have_length FALSE when chunked:
 * the chunks say how long, not the header); an invalid one is an error
 * unless the body is chunked. */
static gboolean
response_length (SoupMessageHeaders *h, gboolean *have_length, guint64 *length, GError **error)
{
  gboolean chunked = lsoup_message_headers_is_chunked (h);
  gboolean cl_present;
  *have_length = parse_content_length (h, &cl_present, length);
  if (cl_present && !*have_length && !chunked) {
    const char *v = lsoup_message_headers_get_list (h, "Content-Length");
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_BAD_RESPONSE, "invalid Content-Length '%.40s'", v);
    return FALSE;
  }
  if (chunked)
    *have_length = FALSE;
  return TRUE;
}

/* A 206 (Partial Content): its Content-Range must start at @asked (the
 * offset asked for, 0 for none), end at @asked_last at the latest, and
 * agree with the length. */
static gboolean
response_partial (SoupMessageHeaders *h, HttpResponse *r, guint64 asked, guint64 asked_last,
                  gboolean have_length, guint64 length, GError **error)
{
  guint64 first, last, total = 0;
  gboolean have_total;
  const char *cr = lsoup_message_headers_get_one (h, "Content-Range");
  if (!parse_content_range (cr, &first, &last, &have_total, &total)) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_WRONG_RANGE, "a 206 with an invalid Content-Range '%.60s'",
                 cr ? cr : "(none)");
    return FALSE;
  }
  if (first != asked) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_WRONG_RANGE,
                 "asked for the bytes from %" G_GUINT64_FORMAT ", the server sent them from %" G_GUINT64_FORMAT,
                 asked, first);
    return FALSE;
  }
  if (last > asked_last) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_WRONG_RANGE,
                 "asked for the bytes to %" G_GUINT64_FORMAT ", the server sent them to %" G_GUINT64_FORMAT,
                 asked_last, last);
    return FALSE;
  }
  if (have_length && length != last - first + 1) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_WRONG_RANGE,
                 "Content-Range %s disagrees with Content-Length %" G_GUINT64_FORMAT, cr, length);
    return FALSE;
  }
  r->start = first;
  r->have_size = have_total;
  r->size = total;
  r->seekable = TRUE;
  r->ranges = TRUE;
  return TRUE;
}

/* Any other 2xx: the whole resource, an error if a range was asked for
 * (@asked > 0, or @bounded); seekable when its size is known and ranges
 * are not refused. */
static gboolean
response_whole (SoupMessageHeaders *h, HttpResponse *r, guint64 asked, gboolean bounded,
                gboolean have_length, guint64 length, GError **error)
{
  if (asked > 0 || bounded) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_NO_RANGES,
                 "asked for the bytes from %" G_GUINT64_FORMAT ", the server sent the whole resource (status %u)",
                 asked, r->status);
    return FALSE;
  }
  r->start = 0;
  r->have_size = have_length;
  r->size = length;
  const char *ranges = lsoup_message_headers_get_one (h, "Accept-Ranges");
  r->seekable = r->have_size && !(ranges && g_ascii_strcasecmp (ranges, "none") == 0);
  r->ranges = ranges && g_ascii_strcasecmp (ranges, "bytes") == 0;
  return TRUE;
}

/* The same resource as before?  The first response is remembered; a later
 * one whose size, ETag or Last-Modified differs is an error. */
static gboolean
response_same_resource (HttpClient *c, SoupMessageHeaders *h, GError **error)
{
  const HttpResponse *r = &c->resp;
  const char *etag = lsoup_message_headers_get_one (h, "ETag");
  const char *modified = lsoup_message_headers_get_one (h, "Last-Modified");
  if (c->known) {
    const char *what = NULL;
    if (c->known_have_size && r->have_size && c->known_size != r->size)
      what = "its size";
    else if (c->known_etag && etag && strcmp (c->known_etag, etag) != 0)
      what = "its ETag";
    else if (c->known_modified && modified && strcmp (c->known_modified, modified) != 0)
      what = "its Last-Modified date";
    if (what) {
      g_set_error (error, HTTP_ERROR, HTTP_ERROR_CHANGED,
                   "the resource changed while it was read (%s differs from the first response's)", what);
      return FALSE;
    }
  } else {
    c->known = TRUE;
    c->known_have_size = r->have_size;
    c->known_size = r->size;
    c->known_etag = g_strdup (etag);
    c->known_modified = g_strdup (modified);
  }
  return TRUE;
}

/* The one response parser: fills c->resp from the answer to @method from
 * @offset to @last (OPEN_END: the end), or returns FALSE with @error. */
static gboolean
parse_response (HttpClient *c, const char *method, guint64 offset, guint64 last, GError **error)
{
  SoupMessageHeaders *h = lsoup_message_get_response_headers (c->msg);
  HttpResponse *r = &c->resp;
  gboolean have_length;
  guint64 length = 0;
  if (!response_status (c, error) || !response_length (h, &have_length, &length, error))
    return FALSE;
  guint64 asked = strcmp (method, "HEAD") != 0 ? offset : 0;   /* a HEAD asks for no range */
  gboolean placed = r->status == 206 ? response_partial (h, r, asked, last, have_length, length, error)
                                     : response_whole (h, r, asked, last != OPEN_END, have_length, length,
                                                       error);
  return placed && response_same_resource (c, h, error);
}

/* The raw body stream under libsoup's body decoder, when the stream it
 * returned is the one libsoup 3 and 2.4 build (a client stream over a body
 * stream over its buffered connection stream); NULL otherwise. */
static GInputStream *
raw_body_stream (GInputStream *input)
{
  if (!G_IS_FILTER_INPUT_STREAM (input))
    return NULL;
  GInputStream *body = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (input));
  if (body == NULL || strcmp (G_OBJECT_TYPE_NAME (body), "SoupBodyInputStream") != 0
      || !G_IS_FILTER_INPUT_STREAM (body))
    return NULL;
  GInputStream *raw = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (body));
  if (raw == NULL || strcmp (G_OBJECT_TYPE_NAME (raw), "SoupFilterInputStream") != 0)
    return NULL;
  return raw;
}

/* http_client_open() and http_client_open_range(). */
static HttpResult
open_request (HttpClient *c, const HttpConfig *cfg, const char *uri, const char *method,
              guint64 offset, guint64 last, GCancellable *cancellable, GError **error)
{
  http_client_close (c);
  if (!ensure_session (c, cfg, error))
    return HTTP_FAILED;
  c->msg = build_message (c, cfg, uri, method, offset, last);
  if (c->msg == NULL) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_BAD_URI, "cannot request '%s'", uri);
    return HTTP_FAILED;
  }
  c->cfg = cfg;
  GError *err = NULL;
  c->input = lsoup_session_send (c->session, c->msg, cancellable, &err);
  c->cfg = NULL;
  if (c->input == NULL)
    return classify_send_error (c->msg, err, error);
  if (!parse_response (c, method, offset, last, error))
    return HTTP_FAILED;
  if (lsoup_message_headers_is_chunked (lsoup_message_get_response_headers (c->msg))) {
    GInputStream *raw = raw_body_stream (c->input);
    if (raw)
      c->chunked = chunked_reader_new (raw);
  }
  return HTTP_OK;
}

HttpResult
http_client_open (HttpClient *c, const HttpConfig *cfg, const char *uri, const char *method,
                  guint64 offset, GCancellable *cancellable, GError **error)
{
  return open_request (c, cfg, uri, method, offset, OPEN_END, cancellable, error);
}

HttpResult
http_client_open_range (HttpClient *c, const HttpConfig *cfg, const char *uri, guint64 offset,
                        guint64 last, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (last >= offset && last != OPEN_END, HTTP_FAILED);
  return open_request (c, cfg, uri, "GET", offset, last, cancellable, error);
}

const HttpResponse *
http_client_response (HttpClient *c)
{
  return &c->resp;
}

SoupMessage *
http_client_message (HttpClient *c)
{
  return c->msg;
}

gssize
http_client_read (HttpClient *c, guint8 *buf, gsize len, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (c->input != NULL, -1);
  GError *err = NULL;
  gssize n = c->chunked ? chunked_reader_read (c->chunked, buf, len, cancellable, &err)
                        : g_input_stream_read (c->input, buf, len, cancellable, &err);
  if (n == 0)
    c->body_done = TRUE;
  if (n >= 0)
    return n;
  if (err->domain == HTTP_ERROR || g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_propagate_error (error, err);
  } else if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_TIMEOUT, "the body stalled (%s)", err->message);
    g_error_free (err);
  } else if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT)) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_TRUNCATED, "the body ended early (%s)", err->message);
    g_error_free (err);
  } else {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_READ, "%s", err->message);
    g_error_free (err);
  }
  return -1;
}

gboolean
http_client_reusable (HttpClient *c)
{
  return c->msg && c->body_done && c->chunked == NULL && lsoup_message_is_keepalive (c->msg);
}

void
http_client_close (HttpClient *c)
{
  if (c->input) {
    /* a body read to its end by libsoup frees the connection for the next
     * request; anything else (cut short, or decoded by chunked.c, which
     * libsoup did not see) must not make libsoup read the rest: a cancelled
     * close drops the connection instead */
    GCancellable *drop = NULL;
    if (!c->body_done || c->chunked) {
      drop = g_cancellable_new ();
      g_cancellable_cancel (drop);
    }
    g_input_stream_close (c->input, drop, NULL);
    g_clear_object (&drop);
    g_clear_object (&c->input);
  }
  g_clear_pointer (&c->chunked, chunked_reader_free);
  if (c->msg) {
    lsoup_message_unwatch (c->msg);
    g_clear_object (&c->msg);
  }
  c->body_done = FALSE;
  response_clear (&c->resp);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* souploader.c — libsoup 2.4 or 3, loaded at run time (see souploader.h). */
#include <dlfcn.h>
#include <gmodule.h>
#include <gst/gst.h>
#include "souploader.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

#define SONAME_3 "libsoup-3.0.so.0"
#define SONAME_2 "libsoup-2.4.so.1"

/* libsoup 2.4's SoupMessage: its public fields (soup-message.h, frozen
 * since 2.4) are the only way to its headers and status. */
typedef struct {
  GObject             parent;
  const char         *method;
  guint               status_code;
  char               *reason_phrase;
  gpointer            request_body;
  SoupMessageHeaders *request_headers;
  gpointer            response_body;
  SoupMessageHeaders *response_headers;
} Soup2Message;

/* SoupMessageFlags, the same bit in 2.4 and 3 */
#define FLAG_NO_REDIRECT           (1u << 1)
/* libsoup 3 only */
#define FLAG3_COLLECT_METRICS      (1u << 5)
#define SESSION3_TOO_MANY_REDIRECTS 2        /* SoupSessionError */
/* libsoup 2.4's transport statuses (SoupStatus below 100) */
#define STATUS2_CANCELLED          1
#define STATUS2_CANT_RESOLVE       2
#define STATUS2_CANT_RESOLVE_PROXY 3
#define STATUS2_SSL_FAILED         6
#define STATUS2_MALFORMED          8
#define STATUS2_TOO_MANY_REDIRECTS 10
#define STATUS2_TLS_FAILED         11
#define SOUP_ENCODING_CHUNKED      4         /* SoupEncoding, the same in 2.4 and 3 */

typedef struct {
  GModule *module;
  guint    api;                      /* 2 or 3 */
  const char *soname;

  /* in both */
  guint    (*get_major_version) (void);
  guint    (*get_minor_version) (void);
  guint    (*get_micro_version) (void);
  GType    (*logger_log_level_get_type) (void);
  const char *(*status_get_phrase) (guint);
  GType    (*session_get_type) (void);
  GType    (*content_decoder_get_type) (void);
  void     (*session_remove_feature_by_type) (SoupSession *, GType);
  void     (*session_add_feature) (SoupSession *, gpointer);
  GInputStream *(*session_send) (SoupSession *, SoupMessage *, GCancellable *, GError **);
  SoupMessage *(*message_new) (const char *, const char *);
  guint    (*message_get_flags) (SoupMessage *);
  void     (*message_set_flags) (SoupMessage *, guint);
  gboolean (*message_is_keepalive) (SoupMessage *);
  gboolean (*auth_is_for_proxy) (SoupAuth *);
  void     (*auth_authenticate) (SoupAuth *, const char *, const char *);
  void     (*headers_append) (SoupMessageHeaders *, const char *, const char *);
  void     (*headers_replace) (SoupMessageHeaders *, const char *, const char *);
  const char *(*headers_get_one) (SoupMessageHeaders *, const char *);
  const char *(*headers_get_list) (SoupMessageHeaders *, const char *);
  void     (*headers_foreach) (SoupMessageHeaders *, SoupMessageHeadersForeachFunc, gpointer);
  int      (*headers_get_encoding) (SoupMessageHeaders *);
  void     (*headers_set_range) (SoupMessageHeaders *, goffset, goffset);
  gpointer logger_new;               /* (level) in 3, (level, max_body_size) in 2.4 */
  gpointer message_get_uri;          /* GUri * in 3, SoupURI * in 2.4 */

  /* libsoup 3 only */
  SoupMessageHeaders *(*message_get_request_headers) (SoupMessage *);
  SoupMessageHeaders *(*message_get_response_headers) (SoupMessage *);
  guint    (*message_get_status) (SoupMessage *);
  const char *(*message_get_reason_phrase) (SoupMessage *);
  guint64  (*message_get_connection_id) (SoupMessage *);
  gpointer (*message_get_metrics) (SoupMessage *);
  guint64  (*metrics_get_response_header_bytes_received) (gpointer);
  GQuark   (*session_error_quark) (void);

  /* libsoup 2.4 only */
  char    *(*uri_to_string) (gpointer, gboolean);
} SoupApi;

static SoupApi soup;

/* One symbol into *@slot; FALSE (logged) if the library lacks it. */
static gboolean
resolve (GModule *module, const char *name, gpointer *slot)
{
  if (g_module_symbol (module, name, slot) && *slot)
    return TRUE;
  GST_WARNING ("%s has no %s: not usable", g_module_name (module), name);
  return FALSE;
}

#define RESOLVE(field, symbol) ok = resolve (m, symbol, (gpointer *) &api->field) && ok

/* Fills @api from @m (libsoup @version); FALSE if a symbol is missing. */
static gboolean
resolve_all (SoupApi *api, GModule *m, guint version)
{
  gboolean ok = TRUE;
  RESOLVE (get_major_version, "soup_get_major_version");
  RESOLVE (get_minor_version, "soup_get_minor_version");
  RESOLVE (get_micro_version, "soup_get_micro_version");
  RESOLVE (logger_log_level_get_type, "soup_logger_log_level_get_type");
  RESOLVE (status_get_phrase, "soup_status_get_phrase");
  RESOLVE (session_get_type, "soup_session_get_type");
  RESOLVE (content_decoder_get_type, "soup_content_decoder_get_type");
  RESOLVE (session_remove_feature_by_type, "soup_session_remove_feature_by_type");
  RESOLVE (session_add_feature, "soup_session_add_feature");
  RESOLVE (session_send, "soup_session_send");
  RESOLVE (message_new, "soup_message_new");
  RESOLVE (message_get_flags, "soup_message_get_flags");
  RESOLVE (message_set_flags, "soup_message_set_flags");
  RESOLVE (message_is_keepalive, "soup_message_is_keepalive");
  RESOLVE (auth_is_for_proxy, "soup_auth_is_for_proxy");
  RESOLVE (auth_authenticate, "soup_auth_authenticate");
  RESOLVE (headers_append, "soup_message_headers_append");
  RESOLVE (headers_replace, "soup_message_headers_replace");
  RESOLVE (headers_get_one, "soup_message_headers_get_one");
  RESOLVE (headers_get_list, "soup_message_headers_get_list");
  RESOLVE (headers_foreach, "soup_message_headers_foreach");
  RESOLVE (headers_get_encoding, "soup_message_headers_get_encoding");
  RESOLVE (headers_set_range, "soup_message_headers_set_range");
  RESOLVE (logger_new, "soup_logger_new");
  RESOLVE (message_get_uri, "soup_message_get_uri");
  if (version == 3) {
    RESOLVE (message_get_request_headers, "soup_message_get_request_headers");
    RESOLVE (message_get_response_headers, "soup_message_get_response_headers");
    RESOLVE (message_get_status, "soup_message_get_status");
    RESOLVE (message_get_reason_phrase, "soup_message_get_reason_phrase");
    RESOLVE (message_get_connection_id, "soup_message_get_connection_id");
    RESOLVE (message_get_metrics, "soup_message_get_metrics");
    RESOLVE (metrics_get_response_header_bytes_received,
             "soup_message_metrics_get_response_header_bytes_received");
    RESOLVE (session_error_quark, "soup_session_error_quark");
  } else {
    RESOLVE (uri_to_string, "soup_uri_to_string");
  }
  return ok;
}

/* Opens @soname (libsoup @version) into @api; FALSE if it is not there or
 * not complete. */
static gboolean
open_library (SoupApi *api, const char *soname, guint version)
{
  GModule *m = g_module_open (soname, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (m == NULL) {
    GST_DEBUG ("cannot open %s: %s", soname, g_module_error ());
    return FALSE;
  }
  SoupApi candidate = { .module = m, .api = version, .soname = soname };
  if (!resolve_all (&candidate, m, version)) {
    g_module_close (m);
    return FALSE;
  }
  *api = candidate;
  return TRUE;
}

/* TRUE if @soname is already in the process (it is not loaded if not). */
static gboolean
resident (const char *soname)
{
  void *h = dlopen (soname, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return FALSE;
  dlclose (h);
  return TRUE;
}

gboolean
lsoup_load (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    SoupApi api = { 0 };
    gboolean ok;
    if (resident (SONAME_3)) {
      ok = open_library (&api, SONAME_3, 3);
    } else if (resident (SONAME_2)) {
      ok = open_library (&api, SONAME_2, 2);   /* never 3 next to it: it would abort the process */
    } else {
      ok = open_library (&api, SONAME_3, 3) || open_library (&api, SONAME_2, 2);
    }
    if (ok) {
      soup = api;
      GST_INFO ("HTTP through %s (libsoup %u.%u.%u)", soup.soname, soup.get_major_version (),
                soup.get_minor_version (), soup.get_micro_version ());
    } else {
      GST_WARNING ("no usable libsoup (neither %s nor %s)", SONAME_3, SONAME_2);
    }
    g_once_init_leave (&done, 1);
  }
  return soup.api != 0;
}

guint
lsoup_api_version (void)
{
  return soup.api;
}

const char *
lsoup_library (void)
{
  return soup.soname;
}

void
lsoup_get_version (guint *major, guint *minor, guint *micro)
{
  *major = soup.get_major_version ();
  *minor = soup.get_minor_version ();
  *micro = soup.get_micro_version ();
}

GType
lsoup_logger_log_level_get_type (void)
{
  return soup.logger_log_level_get_type ();
}

const char *
lsoup_status_get_phrase (guint status)
{
  return soup.status_get_phrase (status);
}

/* ---- sessions ---- */

static GQuark
watch_quark (void)
{
  return g_quark_from_static_string ("bwss-soup-watch");
}

typedef struct {
  const LsoupHooks *hooks;
  gpointer             data;
} Watch;

/* libsoup 2.4 asks the session, not the message, for credentials. */
static void
on_session_authenticate2 (GObject *session, SoupMessage *msg, SoupAuth *auth, gboolean retrying, gpointer unused)
{
  Watch *w = g_object_get_qdata (G_OBJECT (msg), watch_quark ());
  if (w && w->hooks->authenticate)
    w->hooks->authenticate (auth, retrying, w->data);
}

SoupSession *
lsoup_session_new (guint timeout_s)
{
  SoupSession *s = g_object_new (soup.session_get_type (), "timeout", timeout_s, "idle-timeout", 0, NULL);
  if (soup.api == 2)
    g_signal_connect (s, "authenticate", G_CALLBACK (on_session_authenticate2), NULL);
  return s;
}

void
lsoup_session_remove_content_decoder (SoupSession *session)
{
  soup.session_remove_feature_by_type (session, soup.content_decoder_get_type ());
}

void
lsoup_session_add_logger (SoupSession *session, int level)
{
  gpointer logger = soup.api == 3 ? ((gpointer (*) (int)) soup.logger_new) (level)
                                  : ((gpointer (*) (int, int)) soup.logger_new) (level, -1);
  soup.session_add_feature (session, logger);
  g_object_unref (logger);
}

GInputStream *
lsoup_session_send (SoupSession *session, SoupMessage *msg, GCancellable *cancellable, GError **error)
{
  return soup.session_send (session, msg, cancellable, error);
}

/* ---- messages ---- */

SoupMessage *
lsoup_message_new (const char *method, const char *uri)
{
  SoupMessage *msg = soup.message_new (method, uri);
  /* the metrics say whether a failed response had begun (3 only) */
  if (msg && soup.api == 3)
    soup.message_set_flags (msg, soup.message_get_flags (msg) | FLAG3_COLLECT_METRICS);
  return msg;
}

SoupMessageHeaders *
lsoup_message_get_request_headers (SoupMessage *msg)
{
  return soup.api == 3 ? soup.message_get_request_headers (msg) : ((Soup2Message *) msg)->request_headers;
}

SoupMessageHeaders *
lsoup_message_get_response_headers (SoupMessage *msg)
{
  return soup.api == 3 ? soup.message_get_response_headers (msg) : ((Soup2Message *) msg)->response_headers;
}

guint
lsoup_message_get_status (SoupMessage *msg)
{
  return soup.api == 3 ? soup.message_get_status (msg) : ((Soup2Message *) msg)->status_code;
}

const char *
lsoup_message_get_reason_phrase (SoupMessage *msg)
{
  return soup.api == 3 ? soup.message_get_reason_phrase (msg) : ((Soup2Message *) msg)->reason_phrase;
}

gchar *
lsoup_message_dup_uri (SoupMessage *msg)
{
  gpointer uri = ((gpointer (*) (SoupMessage *)) soup.message_get_uri) (msg);
  if (uri == NULL)
    return NULL;
  return soup.api == 3 ? g_uri_to_string (uri) : soup.uri_to_string (uri, FALSE);
}

guint64
lsoup_message_get_connection_id (SoupMessage *msg)
{
  return soup.api == 3 ? soup.message_get_connection_id (msg) : 0;
}

void
lsoup_message_disable_redirects (SoupMessage *msg)
{
  soup.message_set_flags (msg, soup.message_get_flags (msg) | FLAG_NO_REDIRECT);
}

gboolean
lsoup_message_is_keepalive (SoupMessage *msg)
{
  return soup.message_is_keepalive (msg);
}

/* libsoup 2.4, ssl-strict: nobody accepts a certificate that failed
 * verification unless the connection's own signal is answered. */
static gboolean
on_tls_accept2 (GTlsConnection *conn, GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer msg)
{
  Watch *w = g_object_get_qdata (G_OBJECT (msg), watch_quark ());
  return w && w->hooks->accept_certificate && w->hooks->accept_certificate (cert, errors, w->data);
}

static void
on_network_event (SoupMessage *msg, GSocketClientEvent event, GIOStream *conn, gpointer data)
{
  Watch *w = data;
  if (event == G_SOCKET_CLIENT_CONNECTED && G_IS_SOCKET_CONNECTION (conn) && w->hooks->connected) {
    GSocket *sock = g_socket_connection_get_socket (G_SOCKET_CONNECTION (conn));
    if (sock)
      w->hooks->connected (g_socket_get_fd (sock), w->data);
  } else if (event == G_SOCKET_CLIENT_TLS_HANDSHAKING && soup.api == 2 && G_IS_TLS_CLIENT_CONNECTION (conn)) {
    /* gone with the message: a pooled connection's later handshakes are not ours */
    g_signal_connect_object (conn, "accept-certificate", G_CALLBACK (on_tls_accept2), msg, 0);
  }
}

static gboolean
on_accept_certificate3 (SoupMessage *msg, GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer data)
{
  Watch *w = data;
  return w->hooks->accept_certificate && w->hooks->accept_certificate (cert, errors, w->data);
}

static gboolean
on_authenticate3 (SoupMessage *msg, SoupAuth *auth, gboolean retrying, gpointer data)
{
  Watch *w = data;
  return w->hooks->authenticate && w->hooks->authenticate (auth, retrying, w->data);
}

void
lsoup_message_watch (SoupSession *session, SoupMessage *msg, const LsoupHooks *hooks, gpointer data)
{
  Watch *w = g_new0 (Watch, 1);
  w->hooks = hooks;
  w->data = data;
  g_object_set_qdata_full (G_OBJECT (msg), watch_quark (), w, g_free);
  g_signal_connect (msg, "network-event", G_CALLBACK (on_network_event), w);
  if (soup.api == 3) {
    g_signal_connect (msg, "accept-certificate", G_CALLBACK (on_accept_certificate3), w);
    g_signal_connect (msg, "authenticate", G_CALLBACK (on_authenticate3), w);
  }
  /* 2.4: the session's authenticate (lsoup_session_new) finds the watch */
}

void
lsoup_message_unwatch (SoupMessage *msg)
{
  Watch *w = g_object_get_qdata (G_OBJECT (msg), watch_quark ());
  if (w == NULL)
    return;
  g_signal_handlers_disconnect_by_data (msg, w);
  g_object_set_qdata (G_OBJECT (msg), watch_quark (), NULL);
}

LsoupFailure
lsoup_send_failure (SoupMessage *msg, const GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return LSOUP_FAILED_CANCELLED;
  if (soup.api == 3) {
    if (error->domain != soup.session_error_quark ())
      return LSOUP_FAILED_OTHER;
    return error->code == SESSION3_TOO_MANY_REDIRECTS ? LSOUP_FAILED_REDIRECTS
                                                      : LSOUP_FAILED_BAD_RESPONSE;
  }
  /* 2.4 leaves the kind in the status, whatever the error's domain */
  switch (((Soup2Message *) msg)->status_code) {
    case STATUS2_CANCELLED:          return LSOUP_FAILED_CANCELLED;
    case STATUS2_CANT_RESOLVE:
    case STATUS2_CANT_RESOLVE_PROXY: return LSOUP_FAILED_RESOLVE;
    case STATUS2_SSL_FAILED:
    case STATUS2_TLS_FAILED:         return LSOUP_FAILED_TLS;
    case STATUS2_MALFORMED:          return LSOUP_FAILED_BAD_RESPONSE;
    case STATUS2_TOO_MANY_REDIRECTS: return LSOUP_FAILED_REDIRECTS;
    default:                         return LSOUP_FAILED_OTHER;
  }
}

gboolean
lsoup_message_response_started (SoupMessage *msg)
{
  if (soup.api == 2)
    return ((Soup2Message *) msg)->status_code == STATUS2_MALFORMED;
  gpointer m = soup.message_get_metrics (msg);
  return m && soup.metrics_get_response_header_bytes_received (m) > 0;
}

/* ---- authentication ---- */

gboolean
lsoup_auth_is_for_proxy (SoupAuth *auth)
{
  return soup.auth_is_for_proxy (auth);
}

void
lsoup_auth_authenticate (SoupAuth *auth, const char *user, const char *password)
{
  soup.auth_authenticate (auth, user, password);
}

/* ---- headers ---- */

void
lsoup_message_headers_append (SoupMessageHeaders *h, const char *name, const char *value)
{
  soup.headers_append (h, name, value);
}

void
lsoup_message_headers_replace (SoupMessageHeaders *h, const char *name, const char *value)
{
  soup.headers_replace (h, name, value);
}

const char *
lsoup_message_headers_get_one (SoupMessageHeaders *h, const char *name)
{
  return soup.headers_get_one (h, name);
}

const char *
lsoup_message_headers_get_list (SoupMessageHeaders *h, const char *name)
{
  return soup.headers_get_list (h, name);
}

void
lsoup_message_headers_foreach (SoupMessageHeaders *h, SoupMessageHeadersForeachFunc func, gpointer data)
{
  soup.headers_foreach (h, func, data);
}

gboolean
lsoup_message_headers_is_chunked (SoupMessageHeaders *h)
{
  return soup.headers_get_encoding (h) == SOUP_ENCODING_CHUNKED;
}

void
lsoup_message_headers_set_range_from (SoupMessageHeaders *h, goffset start)
{
  soup.headers_set_range (h, start, -1);
}

void
lsoup_message_headers_set_range (SoupMessageHeaders *h, goffset start, goffset last)
{
  soup.headers_set_range (h, start, last);
}

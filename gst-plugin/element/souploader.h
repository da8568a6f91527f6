/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * souploader.h — the one owner of libsoup in the plugin: which libsoup
 * bwsshttpsrc runs on, loaded at run time, and every call made into it.
 *
 * libsoup 2.4 and libsoup 3 cannot live in one process: the second one
 * loaded aborts it ("libsoup2 symbols detected").  An application that has
 * libsoup 2.4 (Rhythmbox, grilo 0.3, WebKitGTK 4.0) and plays an http URL
 * through playbin gets bwsshttpsrc, so the plugin links no libsoup at all;
 * lsoup_load() picks one the way souphttpsrc does since GStreamer 1.20:
 *
 *   1. a libsoup already in the process (libsoup 3, else 2.4: dlopen with
 *      RTLD_NOLOAD) is the one used;
 *   2. else libsoup 3 is loaded, else libsoup 2.4;
 *   3. else (neither installed, or one missing a function below) nothing
 *      is loaded, lsoup_load() returns FALSE and the plugin does not
 *      register bwsshttpsrc (the tracer needs no libsoup).
 * The choice is made once, when the plugin is loaded (it registers the
 * element, whose http-log-level property is libsoup's SoupLoggerLogLevel).
 * A process that loads libsoup 2.4 only after GStreamer loaded this plugin
 * (or souphttpsrc) in a process without libsoup is not covered: libsoup 3
 * was its choice, as souphttpsrc's.
 *
 * The calls are those httpclient.c and the element need, under one name
 * whatever the version; where 2.4 and 3 differ the wrapper says how:
 *
 *   what                      libsoup 3                 libsoup 2.4
 *   request/response headers  accessor functions        public struct fields
 *   status, reason            accessor functions        public struct fields
 *   message URI               GUri                      SoupURI
 *   metrics                   SOUP_MESSAGE_COLLECT_     none
 *                             METRICS (1 << 5)
 *   authentication            SoupMessage::authenticate SoupSession::authenticate
 *   untrusted certificate     SoupMessage::             the GTlsClientConnection's
 *                             accept-certificate        accept-certificate (the
 *                                                       session stays ssl-strict)
 *   transport failures        GError (SoupSessionError  GError and a status below
 *                             and GIO domains)          100 (SOUP_STATUS_MALFORMED...)
 *   did the headers start     message metrics           status MALFORMED (2.4 sets it
 *                                                       when headers did not parse)
 *   connection id             soup_message_get_        none: 0 (the flow stays on the
 *                             connection_id             connection it was registered on)
 *   logger                    soup_logger_new (level)   soup_logger_new (level, -1)
 *
 * Types are libsoup's, opaque here: nothing in the plugin includes
 * <libsoup/soup.h>, so nothing can call libsoup but through this file.
 * Every name here starts with lsoup_ ("the loaded libsoup"); the wrappers
 * keep libsoup's own names after it.
 */
#ifndef BWSS_SRC_SOUPLOADER_H
#define BWSS_SRC_SOUPLOADER_H

#include <gio/gio.h>

typedef struct _SoupSession        SoupSession;
typedef struct _SoupMessage        SoupMessage;
typedef struct _SoupMessageHeaders SoupMessageHeaders;
typedef struct _SoupAuth           SoupAuth;
typedef void (*SoupMessageHeadersForeachFunc) (const char *name, const char *value, gpointer data);

/* SoupLoggerLogLevel's HEADERS (the same value in 2.4 and 3: NONE, MINIMAL,
 * HEADERS, BODY) */
#define LSOUP_LOGGER_LOG_HEADERS 2

/* Picks and loads the libsoup (see above), once per process; TRUE if one
 * is loaded.  Thread-safe. */
gboolean     lsoup_load (void);
/* 2 or 3 once loaded, 0 before or when none could be. */
guint        lsoup_api_version (void);
/* The file loaded ("libsoup-3.0.so.0"), NULL if none. */
const char  *lsoup_library (void);
/* libsoup's version (soup_get_*_version) */
void         lsoup_get_version (guint *major, guint *minor, guint *micro);
/* SoupLoggerLogLevel's GType, registered by the loaded libsoup. */
GType        lsoup_logger_log_level_get_type (void);
const char  *lsoup_status_get_phrase (guint status);

/* ---- sessions ---- */

/* A new session whose I/O operations time out after @timeout_s (0: never)
 * and whose idle connections stay (idle-timeout 0).  Other settings are
 * the properties the two versions share ("tls-database", "proxy-resolver",
 * "tls-interaction"): set them with g_object_set(). */
SoupSession  *lsoup_session_new (guint timeout_s);
void          lsoup_session_remove_content_decoder (SoupSession *session);
/* Logs the session's traffic at @level (SoupLoggerLogLevel). */
void          lsoup_session_add_logger (SoupSession *session, int level);
/* Sends @msg and reads its response headers (blocking). */
GInputStream *lsoup_session_send (SoupSession *session, SoupMessage *msg, GCancellable *cancellable,
                                      GError **error);

/* ---- messages ---- */

/* NULL if @uri cannot be requested. */
SoupMessage        *lsoup_message_new (const char *method, const char *uri);
SoupMessageHeaders *lsoup_message_get_request_headers (SoupMessage *msg);
SoupMessageHeaders *lsoup_message_get_response_headers (SoupMessage *msg);
/* The HTTP status (0 before a response); libsoup 2.4 also puts its
 * transport failures here (below 100). */
guint               lsoup_message_get_status (SoupMessage *msg);
const char         *lsoup_message_get_reason_phrase (SoupMessage *msg);
/* The message's URI (after redirects), newly allocated. */
gchar              *lsoup_message_dup_uri (SoupMessage *msg);
/* libsoup's id of the connection the message went on; 0 with 2.4. */
guint64             lsoup_message_get_connection_id (SoupMessage *msg);
void                lsoup_message_disable_redirects (SoupMessage *msg);
gboolean            lsoup_message_is_keepalive (SoupMessage *msg);

/* What one request wants to hear while it is sent. */
typedef struct {
  /* a new TCP connection is up (its socket) */
  void     (*connected)          (int fd, gpointer data);
  /* the server's certificate failed verification: TRUE accepts it */
  gboolean (*accept_certificate) (GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer data);
  /* the server (or the proxy) asks for credentials: TRUE if given */
  gboolean (*authenticate)       (SoupAuth *auth, gboolean retrying, gpointer data);
} LsoupHooks;

/* Tells @hooks (with @data) what happens to @msg, sent on @session, until
 * lsoup_message_unwatch(). */
void lsoup_message_watch (SoupSession *session, SoupMessage *msg, const LsoupHooks *hooks,
                              gpointer data);
void lsoup_message_unwatch (SoupMessage *msg);

/* How a failed lsoup_session_send() failed, whatever the version. */
typedef enum {
  LSOUP_FAILED_OTHER,              /* see the GError (GIO, TLS, resolver domains) */
  LSOUP_FAILED_CANCELLED,          /* the cancellable fired */
  LSOUP_FAILED_REDIRECTS,          /* too many redirects */
  LSOUP_FAILED_BAD_RESPONSE,       /* an answer that is not HTTP */
  LSOUP_FAILED_TLS,                /* the TLS handshake failed (2.4's SSL_FAILED) */
  LSOUP_FAILED_RESOLVE,            /* the name did not resolve (2.4's CANT_RESOLVE) */
} LsoupFailure;

LsoupFailure lsoup_send_failure (SoupMessage *msg, const GError *error);
/* TRUE if the server had begun its response headers when the send failed. */
gboolean        lsoup_message_response_started (SoupMessage *msg);

/* ---- authentication ---- */

gboolean lsoup_auth_is_for_proxy (SoupAuth *auth);
void     lsoup_auth_authenticate (SoupAuth *auth, const char *user, const char *password);

/* ---- headers (the same API in 2.4 and 3) ---- */

void        lsoup_message_headers_append (SoupMessageHeaders *h, const char *name, const char *value);
void        lsoup_message_headers_replace (SoupMessageHeaders *h, const char *name, const char *value);
const char *lsoup_message_headers_get_one (SoupMessageHeaders *h, const char *name);
const char *lsoup_message_headers_get_list (SoupMessageHeaders *h, const char *name);
void        lsoup_message_headers_foreach (SoupMessageHeaders *h, SoupMessageHeadersForeachFunc func,
                                               gpointer data);
/* TRUE if the body comes in chunks (Transfer-Encoding: chunked). */
gboolean    lsoup_message_headers_is_chunked (SoupMessageHeaders *h);
/* A Range header from byte @start on. */
void        lsoup_message_headers_set_range_from (SoupMessageHeaders *h, goffset start);
/* Range: bytes=@start-@last (@last included). */
void        lsoup_message_headers_set_range (SoupMessageHeaders *h, goffset start, goffset last);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * httpclient.h — one HTTP resource read with libsoup (2.4 or 3, the one
 * souploader.h chose), request after
 * request (a seek or a resume is a new request with a Range), as
 * souphttpsrc reads it.  Nothing here knows of BWSS; the element is told
 * when a connection comes up (HttpConnectedFunc) and reads what the
 * response says through HttpResponse.
 *
 * Every response is checked before a byte of its body is taken:
 *   - a status outside 2xx is an error (HttpError from the status);
 *   - Content-Length must be one decimal number below 2^63, the same in
 *     every copy of the header;
 *   - a 206 must carry a Content-Range whose first byte is the one asked
 *     for (0 when no Range was sent), whose last is not past the last one
 *     asked for (a bounded range), and whose length agrees with
 *     Content-Length; a 200 to a Range request is HTTP_ERROR_NO_RANGES;
 *   - once a resource was seen, a later response (a resume, a seek) must
 *     be the same resource: same total size, same ETag, same Last-Modified
 *     (HTTP_ERROR_CHANGED).
 * Size and seekability come from one parser (parse_response): the size is
 * the Content-Range total of a 206, else offset + Content-Length of a 200
 * (HEAD included); a resource is seekable when its size is known and the
 * server does not say "Accept-Ranges: none" (souphttpsrc's rule).
 *
 * The body: libsoup decodes Content-Length and close-delimited bodies and
 * reports a connection cut short as an error; chunked bodies go through
 * chunked.c (libsoup's own decoder ends silently on broken framing).
 */
#ifndef BWSS_SRC_HTTPCLIENT_H
#define BWSS_SRC_HTTPCLIENT_H

#include <gst/gst.h>
#include "httperror.h"
#include "souploader.h"

/* What the element's souphttpsrc properties say about requests. */
typedef struct {
  gchar             *user_agent;
  gboolean           automatic_redirect;
  gchar             *proxy;
  gchar             *user_id, *user_pw, *proxy_id, *proxy_pw;
  gchar            **cookies;
  guint              timeout;            /* s, per I/O operation; 0 = none */
  GstStructure      *extra_headers;
  gboolean           iradio_mode;
  gboolean           compress;
  gboolean           keep_alive;
  gboolean           ssl_strict;
  gchar             *ssl_ca_file;
  gboolean           ssl_use_system_ca_file;
  GTlsDatabase      *tls_database;
  GTlsInteraction   *tls_interaction;
  int                log_level;          /* SoupLoggerLogLevel */
  gboolean           log;                /* attach a SoupLogger at log_level */
} HttpConfig;

void http_config_clear (HttpConfig *cfg);

typedef struct {
  guint     status;
  gchar    *reason;
  gchar    *final_uri;        /* after redirects */
  gboolean  have_size;
  guint64   size;             /* of the whole resource, bytes */
  gboolean  seekable;
  guint64   start;            /* first byte of this body within the resource */
  gboolean  ranges;           /* the server takes ranges: a 206, or "Accept-Ranges: bytes" */
  guint64   connection_id;    /* libsoup's id of the connection, 0 unknown */
} HttpResponse;

typedef enum {
  HTTP_OK,
  HTTP_CANCELLED,             /* the cancellable fired (flushing, or a deadline) */
  HTTP_RETRY,                 /* a transport failure that another attempt may cure */
  HTTP_FAILED,                /* an error that another attempt would repeat (for a
                               * 500 or 503, HTTP_ERROR_UNAVAILABLE, the element's
                               * retry policy decides) */
} HttpResult;

typedef struct HttpClient HttpClient;

/* Called (in the requesting thread) with the socket of every new TCP
 * connection the client makes. */
typedef void (*HttpConnectedFunc) (int fd, gpointer data);

/* Asked (in the requesting thread, with the data given to
 * http_client_new) about a server certificate that failed verification
 * while ssl-strict is set: TRUE accepts it.  Without one, it is refused;
 * without ssl-strict, every certificate is accepted and nobody is asked
 * (souphttpsrc's accept-certificate). */
typedef gboolean (*HttpAcceptCertificateFunc) (GTlsCertificate *cert, GTlsCertificateFlags errors,
                                               gpointer data);

HttpClient *http_client_new (HttpConnectedFunc on_connected, gpointer data);
void        http_client_set_accept_certificate (HttpClient *c, HttpAcceptCertificateFunc func);
void        http_client_free (HttpClient *c);
/* Forgets the session and its idle connections. */
void        http_client_drop_session (HttpClient *c);
/* Forgets the resource seen so far (a new location, a new start). */
void        http_client_forget_resource (HttpClient *c);

/* Sends @method for @uri from byte @offset (a Range header when > 0) and
 * checks the response (see above).  HTTP_OK: the response is in
 * http_client_response() and its body can be read.  Otherwise @error says
 * why (HTTP_ERROR domain, or G_IO_ERROR_CANCELLED). */
HttpResult  http_client_open (HttpClient *c, const HttpConfig *cfg, const char *uri,
                              const char *method, guint64 offset, GCancellable *cancellable,
                              GError **error);
/* As http_client_open(), for the bytes from @offset to @last (included):
 * always a Range header, and a 200 is HTTP_ERROR_NO_RANGES even from 0. */
HttpResult  http_client_open_range (HttpClient *c, const HttpConfig *cfg, const char *uri,
                                    guint64 offset, guint64 last, GCancellable *cancellable,
                                    GError **error);
const HttpResponse *http_client_response (HttpClient *c);
/* The message of the open request (headers, for messages and ICY). */
SoupMessage *http_client_message (HttpClient *c);
/* Reads body bytes: the count, 0 at the end of the body, -1 with @error
 * (HTTP_ERROR_READ, HTTP_ERROR_TRUNCATED, HTTP_ERROR_BAD_FRAMING,
 * HTTP_ERROR_TIMEOUT, or G_IO_ERROR_CANCELLED). */
gssize      http_client_read (HttpClient *c, guint8 *buf, gsize len, GCancellable *cancellable,
                              GError **error);
/* TRUE if the body was read to its end by libsoup and the connection may
 * serve another request (keep-alive on both sides). */
gboolean    http_client_reusable (HttpClient *c);
/* Ends the open request; a body read to its end leaves the connection to
 * the session's pool for the next request. */
void        http_client_close (HttpClient *c);

#endif

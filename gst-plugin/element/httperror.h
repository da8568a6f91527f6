/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * httperror.h — what can go wrong with an HTTP request, as GError codes of
 * one domain.  The element turns each into a GStreamer error message
 * (srcattempt.c, post_http_error); nothing here knows of GStreamer.
 */
#ifndef BWSS_SRC_HTTPERROR_H
#define BWSS_SRC_HTTPERROR_H

#include <glib.h>

#define HTTP_ERROR (http_error_quark ())
GQuark http_error_quark (void);

typedef enum {
  HTTP_ERROR_NOT_FOUND,        /* 404 */
  HTTP_ERROR_NOT_AUTHORIZED,   /* 401, 402, 403, 407 */
  HTTP_ERROR_UNAVAILABLE,      /* 500, 503: a server failure that may pass */
  HTTP_ERROR_STATUS,           /* any other status that is not a success */
  HTTP_ERROR_BAD_URI,          /* the location cannot be requested */
  HTTP_ERROR_CONNECT,          /* no connection, or it broke before the headers */
  HTTP_ERROR_TLS,              /* the TLS handshake failed or was refused */
  HTTP_ERROR_TIMEOUT,          /* no answer within the timeout */
  HTTP_ERROR_BAD_RESPONSE,     /* a status line or headers that make no sense */
  HTTP_ERROR_TOO_MANY_REDIRECTS,
  HTTP_ERROR_NO_RANGES,        /* a Range request answered with the whole resource */
  HTTP_ERROR_WRONG_RANGE,      /* a 206 for other bytes than those asked for */
  HTTP_ERROR_CHANGED,          /* the resource is not the one a resume continues */
  HTTP_ERROR_BAD_FRAMING,      /* broken chunked encoding */
  HTTP_ERROR_TRUNCATED,        /* the body ended before its announced end */
  HTTP_ERROR_READ,             /* the connection failed while reading the body */
} HttpError;

#endif

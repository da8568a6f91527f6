/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chunked.h — a strict decoder of HTTP/1.1 chunked transfer coding
 * (RFC 9112, 7.1) over the raw bytes of a response body.
 *
 * libsoup 3.2 reads a chunk size with strtoul() (so "zz" is a last chunk)
 * and takes the end of the connection before the last chunk for the end of
 * the body: a broken or cut stream ends silently.  This decoder ends only at
 * a last chunk followed by its (skipped) trailer section; anything else is
 * an error (HTTP_ERROR_BAD_FRAMING, or HTTP_ERROR_TRUNCATED at end of
 * input).
 */
#ifndef BWSS_SRC_CHUNKED_H
#define BWSS_SRC_CHUNKED_H

#include <gio/gio.h>

typedef struct ChunkedReader ChunkedReader;

/* Decodes what @raw delivers (a reference is taken). */
ChunkedReader *chunked_reader_new (GInputStream *raw);
void           chunked_reader_free (ChunkedReader *r);
/* Reads up to @len body bytes into @out: returns the count, 0 once the last
 * chunk and trailers were read, -1 with @error set otherwise. */
gssize         chunked_reader_read (ChunkedReader *r, guint8 *out, gsize len,
                                    GCancellable *cancellable, GError **error);

#endif

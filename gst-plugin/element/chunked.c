/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chunked.c — the strict chunked decoder (see chunked.h).
 *
 *   chunked-body = *chunk last-chunk trailer-section CRLF
 *   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *   last-chunk   = 1*"0" [ chunk-ext ] CRLF
 *
 * A chunk size is 1 to 15 hexadecimal digits (below 2^60 bytes); the line
 * holding it, or a trailer line, is at most LINE_MAX bytes.
 */
#include <string.h>
#include "chunked.h"
#include "httperror.h"

#define LINE_MAX_BYTES 4096
#define BUF_BYTES      16384

typedef enum { AT_SIZE, IN_DATA, AT_DATA_END, IN_TRAILERS, DONE } ChunkState;

struct ChunkedReader {
  GInputStream *raw;
  ChunkState    state;
  guint64       left;                 /* bytes left in the current chunk */
  guint8        buf[BUF_BYTES];
  gsize         pos, len;             /* unread bytes: buf[pos..len) */
};

ChunkedReader *
chunked_reader_new (GInputStream *raw)
{
  ChunkedReader *r = g_new0 (ChunkedReader, 1);
  r->raw = g_object_ref (raw);
  r->state = AT_SIZE;
  return r;
}

void
chunked_reader_free (ChunkedReader *r)
{
  if (r == NULL)
    return;
  g_object_unref (r->raw);
  g_free (r);
}

/* Refills the buffer: returns the number of new bytes, 0 at end of input
 * (error set: the body was cut), -1 on a read error. */
static gssize
refill (ChunkedReader *r, GCancellable *cancellable, GError **error)
{
  if (r->pos > 0) {
    memmove (r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  gssize n = g_input_stream_read (r->raw, r->buf + r->len, sizeof r->buf - r->len, cancellable, error);
  if (n == 0)
    g_set_error_literal (error, HTTP_ERROR, HTTP_ERROR_TRUNCATED,
                         "the chunked body ended before its last chunk");
  if (n > 0)
    r->len += (gsize) n;
  return n;
}

/* Takes one CRLF-terminated line out of the buffer into @line (without the
 * CRLF, NUL-terminated).  Returns TRUE, or FALSE with @error set. */
static gboolean
take_line (ChunkedReader *r, char *line, GCancellable *cancellable, GError **error)
{
  for (;;) {
    guint8 *start = r->buf + r->pos;
    guint8 *lf = memchr (start, '\n', r->len - r->pos);
    if (lf) {
      gsize n = (gsize) (lf - start);
      if (n == 0 || start[n - 1] != '\r' || n - 1 >= LINE_MAX_BYTES) {
        g_set_error_literal (error, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING,
                             "a chunked-coding line that does not end in CRLF or is too long");
        return FALSE;
      }
      memcpy (line, start, n - 1);
      line[n - 1] = '\0';
      r->pos += n + 1;
      return TRUE;
    }
    if (r->len - r->pos >= LINE_MAX_BYTES) {
      g_set_error_literal (error, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING, "a chunked-coding line is too long");
      return FALSE;
    }
    if (refill (r, cancellable, error) <= 0)
      return FALSE;
  }
}

/* Parses a chunk-size line; returns TRUE and the size in *size. */
static gboolean
parse_size (const char *line, guint64 *size)
{
  guint64 v = 0;
  int digits = 0;
  const char *p = line;
  for (; g_ascii_isxdigit (*p); p++) {
    if (++digits > 15)
      return FALSE;
    v = v << 4 | (guint64) g_ascii_xdigit_value (*p);
  }
  /* only a chunk extension may follow, introduced by ';' (BWS allowed) */
  while (*p == ' ' || *p == '\t')
    p++;
  if (digits == 0 || (*p != '\0' && *p != ';'))
    return FALSE;
  *size = v;
  return TRUE;
}

gssize
chunked_reader_read (ChunkedReader *r, guint8 *out, gsize len, GCancellable *cancellable,
                     GError **error)
{
  char line[LINE_MAX_BYTES];
  for (;;) {
    switch (r->state) {
      case AT_SIZE:
        if (!take_line (r, line, cancellable, error))
          return -1;
        if (!parse_size (line, &r->left)) {
          g_set_error (error, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING, "a chunk size that is not one: '%.40s'",
                       g_str_is_ascii (line) ? line : "(binary)");
          return -1;
        }
        r->state = r->left ? IN_DATA : IN_TRAILERS;
        break;
      case IN_DATA: {
        if (r->pos == r->len && refill (r, cancellable, error) <= 0)
          return -1;
        gsize n = MIN (MIN (len, r->len - r->pos), r->left);
        memcpy (out, r->buf + r->pos, n);
        r->pos += n;
        r->left -= n;
        if (r->left == 0)
          r->state = AT_DATA_END;
        return (gssize) n;
      }
      case AT_DATA_END:
        if (!take_line (r, line, cancellable, error))
          return -1;
        if (line[0] != '\0') {
          g_set_error_literal (error, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING,
                               "chunk data not followed by CRLF");
          return -1;
        }
        r->state = AT_SIZE;
        break;
      case IN_TRAILERS:
        if (!take_line (r, line, cancellable, error))
          return -1;
        if (line[0] == '\0')
          r->state = DONE;
        break;
      case DONE:
        return 0;
    }
  }
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostile-server.c — the misbehaving HTTP server of the hostile suite.
 *
 * One behaviour per path; every response closes its connection.  "Honest"
 * means: 200 (or 206 for a Range request) with Content-Length, Accept-Ranges
 * and the asked bytes of hostile_body().
 *
 *   /ok                 honest
 *   /stops              honest headers, but the body stops after half of the
 *                       bytes asked for (the client must resume, byte-exact)
 *   /cl-negative        Content-Length: -5, 100 bytes
 *   /cl-overflow        Content-Length: 99999999999999999999999 (above 2^64)
 *   /cl-absurd          Content-Length: 9000000000000000000, 5 bytes, close
 *   /headers-silence    headers, then nothing (the connection stays open)
 *   /silence            nothing at all after the request
 *   /big-headers        1 MB of header lines, then the honest body
 *   /bad-status-word    "HTTP/1.1 abc Whatever"
 *   /bad-status-code    "HTTP/1.1 2000 OK"
 *   /bad-status-proto   "FOO/1.1 200 OK"
 *   /bad-status-garbage binary garbage
 *   /bad-status-empty   closes without a byte
 *   /chunked-bad-size   chunked, a chunk size "zz"
 *   /chunked-truncated  chunked, two good chunks, then close (no last chunk)
 *   /chunked-bad-crlf   chunked, a chunk not followed by CRLF
 *   /redirect-loop      302 to itself
 *   /partial-unasked    206 for bytes 500- whatever was asked
 *   /resume-other       half a body with ETag "v1"; a Range request gets a
 *                       206 with ETag "v2" and the other pattern's bytes
 *   /resume-modified    the same with Last-Modified instead of ETag
 *   /resume-shifted     half a body; a Range request gets a 206 from byte 0
 *   /resume-total       half a body; a Range request gets a 206 of a longer
 *                       resource (another total in Content-Range)
 *   /resume-nobody      half a body; a Range request gets 206 headers and no
 *                       body
 *   /resume-200         half a body; a Range request gets a 200 from byte 0
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "hostile-server.h"

#define HEAD_MAX        (64 * 1024)
#define SILENCE_MAX_MS  60000           /* a silent connection ends by itself */

struct HostileServer {
  int         listen_fd;
  int         wake[2];                  /* stop: the accept loop wakes up */
  char        url[64];
  GThread    *acceptor;
  GMutex      lock;
  GPtrArray  *threads;                  /* connection threads, joined at stop */
  GArray     *fds;                      /* open connection fds, shut at stop */
  GHashTable *counts;                   /* path → requests */
  gboolean    stopping;
};

typedef struct {
  HostileServer *srv;
  int            fd;
} Conn;

typedef struct {
  char    method[16];
  char    path[256];
  gboolean has_range;
  guint64 range_start;                  /* bytes=N- or bytes=N-M */
} Request;

static guint8 body_a[HOSTILE_BODY_SIZE];
static guint8 body_b[HOSTILE_BODY_SIZE + 1000];

/* The two patterns; b differs from a at every offset. */
static void
make_bodies (void)
{
  for (gsize i = 0; i < sizeof body_a; i++)
    body_a[i] = (guint8) (i * 2654435761u >> 13);
  for (gsize i = 0; i < sizeof body_b; i++)
    body_b[i] = (guint8) ((i < sizeof body_a ? body_a[i] : 0) ^ 0x5a);
}

const guint8 *
hostile_body (void)
{
  return body_a;
}

/* Writes all of @len bytes; FALSE once the peer is gone. */
static gboolean
send_all (int fd, const void *data, gsize len)
{
  const char *p = data;
  while (len > 0) {
    ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    p += n;
    len -= (gsize) n;
  }
  return TRUE;
}

static gboolean
send_str (int fd, const char *s)
{
  return send_all (fd, s, strlen (s));
}

/* Reads the request head; FALSE if the client went away or sent junk. */
static gboolean
read_request (int fd, Request *req)
{
  char *buf = g_malloc (HEAD_MAX + 1);
  gsize have = 0;
  gboolean ok = FALSE;
  while (have < HEAD_MAX) {
    ssize_t n = recv (fd, buf + have, HEAD_MAX - have, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      goto out;
    have += (gsize) n;
    buf[have] = '\0';
    if (strstr (buf, "\r\n\r\n"))
      break;
  }
  buf[have] = '\0';
  memset (req, 0, sizeof *req);
  if (sscanf (buf, "%15s %255s", req->method, req->path) != 2)
    goto out;
  char *q = strchr (req->path, '?');
  if (q)
    *q = '\0';
  for (char *line = strstr (buf, "\r\n"); line; line = strstr (line + 2, "\r\n")) {
    if (g_ascii_strncasecmp (line + 2, "Range:", 6) == 0) {
      const char *v = line + 8;
      while (*v == ' ')
        v++;
      unsigned long long start;
      if (sscanf (v, "bytes=%llu-", &start) == 1) {
        req->has_range = TRUE;
        req->range_start = start;
      }
    }
  }
  ok = TRUE;
out:
  g_free (buf);
  return ok;
}

/* Waits until the client closes (or the server stops, or a minute). */
static void
wait_for_close (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  char sink[4096];
  gint64 end = g_get_monotonic_time () + SILENCE_MAX_MS * 1000;
  while (g_get_monotonic_time () < end) {
    int r = poll (&p, 1, 200);
    if (r < 0 && errno != EINTR)
      return;
    if (r > 0 && recv (fd, sink, sizeof sink, 0) <= 0)
      return;
  }
}

/* Headers for @len bytes from @start of a resource of @total bytes;
 * @extra is inserted as is (each line ending in \r\n). */
static gboolean
send_head (int fd, guint status, guint64 start, guint64 len, guint64 total, const char *extra)
{
  g_autofree char *h = NULL;
  if (status == 206)
    h = g_strdup_printf ("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %" G_GUINT64_FORMAT
                         "-%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "\r\n"
                         "Content-Length: %" G_GUINT64_FORMAT "\r\nAccept-Ranges: bytes\r\n"
                         "Connection: close\r\n%s\r\n",
                         start, start + len - 1, total, len, extra ? extra : "");
  else
    h = g_strdup_printf ("HTTP/1.1 200 OK\r\nContent-Length: %" G_GUINT64_FORMAT "\r\n"
                         "Accept-Ranges: bytes\r\nConnection: close\r\n%s\r\n",
                         len, extra ? extra : "");
  return send_str (fd, h);
}

/* The honest answer: 200, or 206 from the asked offset. */
static void
serve_honest (int fd, const Request *req, const guint8 *data, guint64 size, const char *extra)
{
  guint64 start = req->has_range ? req->range_start : 0;
  if (start >= size) {
    send_str (fd, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    return;
  }
  if (!send_head (fd, req->has_range ? 206 : 200, start, size - start, size, extra))
    return;
  if (strcmp (req->method, "HEAD") != 0)
    send_all (fd, data + start, size - start);
}

/* First request: honest headers for the whole body, half of it, close. */
static void
serve_half (int fd, const Request *req, const char *extra)
{
  if (send_head (fd, 200, 0, HOSTILE_BODY_SIZE, HOSTILE_BODY_SIZE, extra)
      && strcmp (req->method, "HEAD") != 0)
    send_all (fd, body_a, HOSTILE_BODY_SIZE / 2);
}

static void
serve_chunk (int fd, const guint8 *data, gsize len)
{
  g_autofree char *size = g_strdup_printf ("%zx\r\n", len);
  if (send_str (fd, size) && send_all (fd, data, len))
    send_str (fd, "\r\n");
}

static void
behave (int fd, const Request *req)
{
  const char *p = req->path;
  gboolean head = strcmp (req->method, "HEAD") == 0;
  if (strcmp (p, "/ok") == 0) {
    serve_honest (fd, req, body_a, HOSTILE_BODY_SIZE, NULL);
  } else if (strcmp (p, "/stops") == 0) {
    guint64 start = req->has_range ? req->range_start : 0;
    guint64 left = HOSTILE_BODY_SIZE - start;
    if (start >= HOSTILE_BODY_SIZE || !send_head (fd, req->has_range ? 206 : 200, start, left,
                                                  HOSTILE_BODY_SIZE, NULL) || head)
      return;
    send_all (fd, body_a + start, MAX (left / 2, 1));
  } else if (strcmp (p, "/cl-negative") == 0) {
    if (send_str (fd, "HTTP/1.1 200 OK\r\nContent-Length: -5\r\nConnection: close\r\n\r\n"))
      send_all (fd, body_a, 100);
  } else if (strcmp (p, "/cl-overflow") == 0) {
    if (send_str (fd, "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n"
                      "Connection: close\r\n\r\n"))
      send_all (fd, body_a, 100);
  } else if (strcmp (p, "/cl-absurd") == 0) {
    g_autofree char *h = g_strdup_printf ("HTTP/1.1 %s\r\nContent-Length: 9000000000000000000\r\n"
                                          "Accept-Ranges: bytes\r\n%sConnection: close\r\n\r\n",
                                          req->has_range ? "206 Partial Content" : "200 OK",
                                          req->has_range ? "" : "");
    if (send_str (fd, h))
      send_all (fd, body_a, 5);
  } else if (strcmp (p, "/headers-silence") == 0) {
    if (send_head (fd, 200, 0, HOSTILE_BODY_SIZE, HOSTILE_BODY_SIZE, NULL))
      wait_for_close (fd);
  } else if (strcmp (p, "/silence") == 0) {
    wait_for_close (fd);
  } else if (strcmp (p, "/big-headers") == 0) {
    GString *extra = g_string_new (NULL);
    for (int i = 0; extra->len < 1024 * 1024; i++)
      g_string_append_printf (extra, "X-Filler-%d: %0100d\r\n", i, i);
    serve_honest (fd, req, body_a, HOSTILE_BODY_SIZE, extra->str);
    g_string_free (extra, TRUE);
  } else if (strcmp (p, "/bad-status-word") == 0) {
    if (send_str (fd, "HTTP/1.1 abc Whatever\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"))
      send_all (fd, body_a, 100);
  } else if (strcmp (p, "/bad-status-code") == 0) {
    if (send_str (fd, "HTTP/1.1 2000 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"))
      send_all (fd, body_a, 100);
  } else if (strcmp (p, "/bad-status-proto") == 0) {
    if (send_str (fd, "FOO/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"))
      send_all (fd, body_a, 100);
  } else if (strcmp (p, "/bad-status-garbage") == 0) {
    send_all (fd, body_a, 3000);
  } else if (strcmp (p, "/bad-status-empty") == 0) {
    /* nothing: the connection closes */
  } else if (strcmp (p, "/chunked-bad-size") == 0) {
    if (send_str (fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")) {
      serve_chunk (fd, body_a, 1000);
      send_str (fd, "zz\r\nhello\r\n0\r\n\r\n");
    }
  } else if (strcmp (p, "/chunked-truncated") == 0) {
    if (send_str (fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")) {
      serve_chunk (fd, body_a, 1000);
      serve_chunk (fd, body_a + 1000, 1000);
    }
  } else if (strcmp (p, "/chunked-bad-crlf") == 0) {
    if (send_str (fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")) {
      serve_chunk (fd, body_a, 1000);
      if (send_str (fd, "3e8\r\n") && send_all (fd, body_a + 1000, 1000))
        send_str (fd, "XX3e8\r\n");
      send_all (fd, body_a + 2000, 1000);
      send_str (fd, "\r\n0\r\n\r\n");
    }
  } else if (strcmp (p, "/redirect-loop") == 0) {
    send_str (fd, "HTTP/1.1 302 Found\r\nLocation: /redirect-loop\r\nContent-Length: 0\r\n"
                  "Connection: close\r\n\r\n");
  } else if (strcmp (p, "/partial-unasked") == 0) {
    if (send_head (fd, 206, 500, HOSTILE_BODY_SIZE - 500, HOSTILE_BODY_SIZE, NULL) && !head)
      send_all (fd, body_a + 500, HOSTILE_BODY_SIZE - 500);
  } else if (strcmp (p, "/resume-other") == 0 || strcmp (p, "/resume-modified") == 0) {
    gboolean etag = strcmp (p, "/resume-other") == 0;
    if (!req->has_range) {
      serve_half (fd, req, etag ? "ETag: \"v1\"\r\n" : "Last-Modified: Mon, 02 Nov 2026 10:00:00 GMT\r\n");
    } else if (req->range_start < HOSTILE_BODY_SIZE) {
      guint64 s = req->range_start, len = HOSTILE_BODY_SIZE - s;
      if (send_head (fd, 206, s, len, HOSTILE_BODY_SIZE,
                     etag ? "ETag: \"v2\"\r\n" : "Last-Modified: Tue, 03 Nov 2026 10:00:00 GMT\r\n") && !head)
        send_all (fd, body_b + s, len);
    }
  } else if (strcmp (p, "/resume-shifted") == 0) {
    if (!req->has_range)
      serve_half (fd, req, NULL);
    else if (send_head (fd, 206, 0, HOSTILE_BODY_SIZE, HOSTILE_BODY_SIZE, NULL) && !head)
      send_all (fd, body_a, HOSTILE_BODY_SIZE);
  } else if (strcmp (p, "/resume-total") == 0) {
    if (!req->has_range) {
      serve_half (fd, req, NULL);
    } else {
      guint64 s = req->range_start, total = sizeof body_b;
      if (s < total && send_head (fd, 206, s, total - s, total, NULL) && !head)
        send_all (fd, body_b + s, total - s);
    }
  } else if (strcmp (p, "/resume-nobody") == 0) {
    if (!req->has_range)
      serve_half (fd, req, NULL);
    else if (req->range_start < HOSTILE_BODY_SIZE)
      send_head (fd, 206, req->range_start, HOSTILE_BODY_SIZE - req->range_start, HOSTILE_BODY_SIZE, NULL);
  } else if (strcmp (p, "/resume-200") == 0) {
    if (!req->has_range)
      serve_half (fd, req, NULL);
    else if (send_head (fd, 200, 0, HOSTILE_BODY_SIZE, HOSTILE_BODY_SIZE, NULL) && !head)
      send_all (fd, body_a, HOSTILE_BODY_SIZE);
  } else {
    send_str (fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  }
}

static void
forget_fd (HostileServer *s, int fd)
{
  g_mutex_lock (&s->lock);
  for (guint i = 0; i < s->fds->len; i++)
    if (g_array_index (s->fds, int, i) == fd) {
      g_array_remove_index_fast (s->fds, i);
      break;
    }
  g_mutex_unlock (&s->lock);
}

static gpointer
conn_main (gpointer data)
{
  Conn *c = data;
  Request req;
  if (read_request (c->fd, &req)) {
    g_mutex_lock (&c->srv->lock);
    guint n = GPOINTER_TO_UINT (g_hash_table_lookup (c->srv->counts, req.path));
    g_hash_table_replace (c->srv->counts, g_strdup (req.path), GUINT_TO_POINTER (n + 1));
    g_mutex_unlock (&c->srv->lock);
    behave (c->fd, &req);
  }
  /* a clean close: the client sees the end of what was sent */
  shutdown (c->fd, SHUT_WR);
  forget_fd (c->srv, c->fd);
  close (c->fd);
  g_free (c);
  return NULL;
}

static gpointer
accept_main (gpointer data)
{
  HostileServer *s = data;
  struct pollfd p[2] = { { .fd = s->listen_fd, .events = POLLIN }, { .fd = s->wake[0], .events = POLLIN } };
  for (;;) {
    if (poll (p, 2, -1) < 0 && errno != EINTR)
      break;
    if (p[1].revents)
      break;
    if (!(p[0].revents & POLLIN))
      continue;
    int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    Conn *c = g_new0 (Conn, 1);
    c->srv = s;
    c->fd = fd;
    g_mutex_lock (&s->lock);
    g_array_append_val (s->fds, fd);
    g_ptr_array_add (s->threads, g_thread_new ("hostile-conn", conn_main, c));
    g_mutex_unlock (&s->lock);
  }
  return NULL;
}

HostileServer *
hostile_server_start (GError **error)
{
  make_bodies ();
  HostileServer *s = g_new0 (HostileServer, 1);
  g_mutex_init (&s->lock);
  s->threads = g_ptr_array_new ();
  s->fds = g_array_new (FALSE, FALSE, sizeof (int));
  s->counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t alen = sizeof a;
  s->listen_fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd < 0 || bind (s->listen_fd, (struct sockaddr *) &a, sizeof a) != 0
      || listen (s->listen_fd, 64) != 0 || getsockname (s->listen_fd, (struct sockaddr *) &a, &alen) != 0
      || pipe (s->wake) != 0) {
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "hostile server: %s",
                 g_strerror (errno));
    if (s->listen_fd >= 0)
      close (s->listen_fd);
    g_free (s);
    return NULL;
  }
  g_snprintf (s->url, sizeof s->url, "http://127.0.0.1:%u", ntohs (a.sin_port));
  s->acceptor = g_thread_new ("hostile-accept", accept_main, s);
  return s;
}

void
hostile_server_stop (HostileServer *s)
{
  if (s == NULL)
    return;
  if (write (s->wake[1], "x", 1) != 1)
    g_warning ("hostile server: cannot wake the acceptor");
  g_thread_join (s->acceptor);
  g_mutex_lock (&s->lock);
  for (guint i = 0; i < s->fds->len; i++)
    shutdown (g_array_index (s->fds, int, i), SHUT_RDWR);
  GPtrArray *threads = s->threads;
  s->threads = g_ptr_array_new ();
  g_mutex_unlock (&s->lock);
  for (guint i = 0; i < threads->len; i++)
    g_thread_join (threads->pdata[i]);
  g_ptr_array_free (threads, TRUE);
  g_ptr_array_free (s->threads, TRUE);
  g_array_free (s->fds, TRUE);
  g_hash_table_destroy (s->counts);
  close (s->listen_fd);
  close (s->wake[0]);
  close (s->wake[1]);
  g_mutex_clear (&s->lock);
  g_free (s);
}

const char *
hostile_server_url (HostileServer *s)
{
  return s->url;
}

guint
hostile_server_requests (HostileServer *s, const char *path)
{
  g_mutex_lock (&s->lock);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (s->counts, path));
  g_mutex_unlock (&s->lock);
  return n;
}

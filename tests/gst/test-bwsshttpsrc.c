/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-bwsshttpsrc.c — bwsshttpsrc against a local SoupServer (no network
 * beyond loopback): souphttpsrc's properties, byte-exact output with and
 * without seeks, a connection dropped mid-body, redirects, HTTP errors and
 * authentication, HEAD/size, is-live, registration in a BWSS domain, the
 * late-packet metric of a stream with a known stall, and reading over n
 * connections (byte-exact, a stripe cut, a seek, a server without ranges).
 */
#include <dlfcn.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/base/gstbasesrc.h>
#include <sys/mman.h>
#include <libsoup/soup.h>
#include <bwss/domain.h>

#define BODY_SIZE (1500 * 1000 + 123)
#define STRIPE_FLOOR (16 * 1024)  /* the element's least chunk, bytes */

static guint8 *body;
static SoupServer *server;
static GMainContext *server_ctx;
static GMainLoop *server_loop;
static GThread *server_thread;
static gchar *base_url;
static GHashTable *dropped;      /* /drop/TOKEN → requests seen (the first GET is cut) */
static GMutex conns_lock;
static guint n_conns;            /* connections the server has seen (X-Conn) */
static GHashTable *arrivals;     /* /busy/... path → GArray of arrival times (µs, monotonic) */
static GHashTable *request_log;  /* /striped/TOKEN etc. → GString "CONN RANGE\n" per request */
static GHashTable *barriers;     /* /striped/TOKEN → Barrier */

/* "/striped/TOKEN" answers no bounded range before such ranges were asked
 * on STRIPED_CONNECTIONS connections: whatever the threads' timing, the
 * element's n connections each carry a range (the element may take them up
 * to 2n ahead, so the n requests come).  An element that never asks on
 * that many is answered after STRIPED_WAIT_S, and its test fails on the
 * count, not on a hang. */
#define STRIPED_CONNECTIONS 3
#define STRIPED_WAIT_S      10
typedef struct {
  GHashTable *conns;             /* connection numbers that asked a bounded range */
  GPtrArray  *held;              /* SoupServerMessage *, waiting for the others */
  gboolean    open;              /* every answer goes at once */
} Barrier;

/* ---- the server ---- */

static void
serve_body (SoupServerMessage *msg, const guint8 *data, gsize size)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  goffset start = 0, end = (goffset) size - 1;
  SoupRange *ranges = NULL;
  int n = 0;
  soup_message_headers_replace (h, "Accept-Ranges", "bytes");
  if (soup_message_headers_get_ranges (soup_server_message_get_request_headers (msg), (goffset) size,
                                       &ranges, &n) && n == 1) {
    start = ranges[0].start;
    end = ranges[0].end;
    soup_message_headers_free_ranges (soup_server_message_get_request_headers (msg), ranges);
    soup_message_headers_set_content_range (h, start, end, (goffset) size);
    soup_server_message_set_status (msg, SOUP_STATUS_PARTIAL_CONTENT, NULL);
  } else {
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  }
  soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_STATIC,
                                    (const char *) data + start, (gsize) (end - start + 1));
}

static gboolean
unpause (gpointer data)
{
  SoupServerMessage *msg = data;
  SoupMessageBody *b = soup_server_message_get_response_body (msg);
  soup_message_body_append (b, SOUP_MEMORY_STATIC, body + 100000, 100000);
  soup_message_body_complete (b);
  soup_server_message_unpause (msg);
  g_object_unref (msg);
  return G_SOURCE_REMOVE;
}

/* "/trickle" after its first 40 kB: 10 kB every 250 ms, 200 kB in 4 s. */
static gboolean
trickle (gpointer data)
{
  SoupServerMessage *msg = data;
  SoupMessageBody *b = soup_server_message_get_response_body (msg);
  guint sent = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (msg), "sent"));
  soup_message_body_append (b, SOUP_MEMORY_STATIC, body + sent, 10000);
  sent += 10000;
  g_object_set_data (G_OBJECT (msg), "sent", GUINT_TO_POINTER (sent));
  if (sent == 200000)
    soup_message_body_complete (b);
  soup_server_message_unpause (msg);
  if (sent < 200000)
    return G_SOURCE_CONTINUE;
  g_object_unref (msg);
  return G_SOURCE_REMOVE;
}

static void
log_free (gpointer log)
{
  g_string_free (log, TRUE);
}

/* Notes a request for @path: its connection and its Range ("-" none). */
static void
log_request (const char *path, const char *conn, SoupServerMessage *msg)
{
  const char *range = soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "Range");
  g_mutex_lock (&conns_lock);
  GString *log = g_hash_table_lookup (request_log, path);
  if (log == NULL) {
    log = g_string_new (NULL);
    g_hash_table_insert (request_log, g_strdup (path), log);
  }
  g_string_append_printf (log, "%s %s\n", conn, range ? range : "-");
  g_mutex_unlock (&conns_lock);
}

static void
barrier_free (gpointer data)
{
  Barrier *b = data;
  g_hash_table_unref (b->conns);
  g_ptr_array_unref (b->held);
  g_free (b);
}

/* The body of a held range answer, and the answer goes. */
static void
release_range (gpointer data, gpointer unused)
{
  SoupServerMessage *msg = data;
  goffset start = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (msg), "start"));
  goffset end = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (msg), "end"));
  SoupMessageBody *b = soup_server_message_get_response_body (msg);
  soup_message_body_append (b, SOUP_MEMORY_STATIC, body + start, (gsize) (end - start + 1));
  soup_message_body_complete (b);
  soup_server_message_unpause (msg);
  g_object_unref (msg);
}

/* The barrier waited long enough: what it holds goes, and it holds no more. */
static gboolean
barrier_timeout (gpointer data)
{
  Barrier *b = data;
  g_mutex_lock (&conns_lock);
  GPtrArray *go = b->held;
  b->held = g_ptr_array_new ();
  b->open = TRUE;
  g_mutex_unlock (&conns_lock);
  g_ptr_array_foreach (go, release_range, NULL);
  g_ptr_array_unref (go);
  return G_SOURCE_REMOVE;
}

/* "/striped/TOKEN": a bounded range is answered (headers now, the body
 * once STRIPED_CONNECTIONS connections asked such ranges; "/hold/TOKEN":
 * once "/release/TOKEN" was asked); anything else is served at once.  TRUE
 * if this request was handled. */
static gboolean
striped_range (SoupServerMessage *msg, const char *path, const char *conn, guint needed)
{
  SoupMessageHeaders *req = soup_server_message_get_request_headers (msg);
  const char *asked = soup_message_headers_get_one (req, "Range");
  SoupRange *ranges = NULL;
  int n = 0;
  if (asked == NULL || asked[strlen (asked) - 1] == '-'
      || !soup_message_headers_get_ranges (req, BODY_SIZE, &ranges, &n))
    return FALSE;
  goffset start = ranges[0].start, end = ranges[0].end;
  soup_message_headers_free_ranges (req, ranges);
  if (n != 1)
    return FALSE;
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_server_message_set_status (msg, SOUP_STATUS_PARTIAL_CONTENT, NULL);
  soup_message_headers_replace (h, "Accept-Ranges", "bytes");
  soup_message_headers_set_content_range (h, start, end, BODY_SIZE);
  soup_message_headers_set_content_length (h, end - start + 1);
  g_object_set_data (G_OBJECT (msg), "start", GSIZE_TO_POINTER ((gsize) start));
  g_object_set_data (G_OBJECT (msg), "end", GSIZE_TO_POINTER ((gsize) end));
  g_mutex_lock (&conns_lock);
  Barrier *b = g_hash_table_lookup (barriers, path);
  if (b == NULL) {
    b = g_new0 (Barrier, 1);
    b->conns = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    b->held = g_ptr_array_new ();
    g_hash_table_insert (barriers, g_strdup (path), b);
    GSource *t = g_timeout_source_new_seconds (needed == G_MAXUINT ? 3 * STRIPED_WAIT_S : STRIPED_WAIT_S);
    g_source_set_callback (t, barrier_timeout, b, NULL);
    g_source_attach (t, server_ctx);
    g_source_unref (t);
  }
  g_hash_table_add (b->conns, g_strdup (conn));
  g_ptr_array_add (b->held, g_object_ref (msg));
  GPtrArray *go = NULL;
  if (b->open || g_hash_table_size (b->conns) >= needed) {
    b->open = TRUE;
    go = b->held;
    b->held = g_ptr_array_new ();
  }
  g_mutex_unlock (&conns_lock);
  if (go) {
    g_ptr_array_foreach (go, release_range, NULL);
    g_ptr_array_unref (go);
  }
  return TRUE;
}

/* "/cutstripe/TOKEN": the first request for a bounded range that does not
 * start at 0 gets a 206 announcing the whole range, half of it, and the
 * connection closed.  TRUE if this one was cut. */
static gboolean
cut_stripe (SoupServerMessage *msg, const char *path)
{
  SoupMessageHeaders *req = soup_server_message_get_request_headers (msg);
  SoupRange *ranges = NULL;
  int n = 0;
  if (!soup_message_headers_get_ranges (req, BODY_SIZE, &ranges, &n))
    return FALSE;
  goffset start = ranges[0].start, end = ranges[0].end;
  soup_message_headers_free_ranges (req, ranges);
  const char *asked = soup_message_headers_get_one (req, "Range");
  gboolean bounded = n == 1 && asked && asked[strlen (asked) - 1] != '-';
  g_autofree char *key = g_strdup_printf ("%s#cut", path);
  g_mutex_lock (&conns_lock);
  gboolean first = bounded && start > 0 && end - start > 1000 && !g_hash_table_contains (dropped, key);
  if (first)
    g_hash_table_replace (dropped, g_steal_pointer (&key), GUINT_TO_POINTER (1));
  g_mutex_unlock (&conns_lock);
  if (!first)
    return FALSE;
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_server_message_set_status (msg, SOUP_STATUS_PARTIAL_CONTENT, NULL);
  soup_message_headers_replace (h, "Accept-Ranges", "bytes");
  soup_message_headers_replace (h, "Connection", "close");
  soup_message_headers_set_content_range (h, start, end, BODY_SIZE);
  soup_message_headers_set_content_length (h, end - start + 1);
  SoupMessageBody *b = soup_server_message_get_response_body (msg);
  soup_message_body_append (b, SOUP_MEMORY_STATIC, body + start, (gsize) (end - start + 1) / 2);
  soup_message_body_complete (b);
  return TRUE;
}

static void
handler (SoupServer *srv, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  const char *method = soup_server_message_get_method (msg);
  /* every response says which connection it came on, numbered from 1 (the
   * server runs in the parent of the forked tests: they read it here) */
  GSocket *sock = soup_server_message_get_socket (msg);
  g_mutex_lock (&conns_lock);
  if (sock && !g_object_get_data (G_OBJECT (sock), "conn"))
    g_object_set_data (G_OBJECT (sock), "conn", GUINT_TO_POINTER (++n_conns));
  g_autofree char *conn = g_strdup_printf ("%u", sock ? GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (sock), "conn")) : 0);
  g_mutex_unlock (&conns_lock);
  soup_message_headers_replace (h, "X-Conn", conn);
  /* and which User-Agent it was asked with */
  const char *ua = soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "User-Agent");
  soup_message_headers_replace (h, "X-User-Agent", ua ? ua : "(none)");
  if (g_str_has_prefix (path, "/auth/"))
    path += strlen ("/auth");
  if (strcmp (path, "/file") == 0) {
    serve_body (msg, body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/striped/")) {
    log_request (path, conn, msg);
    if (!striped_range (msg, path, conn, STRIPED_CONNECTIONS))
      serve_body (msg, body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/hold/")) {
    log_request (path, conn, msg);
    if (!striped_range (msg, path, conn, G_MAXUINT))
      serve_body (msg, body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/release/")) {
    /* /release/TOKEN: what /hold/TOKEN holds goes, and from now on at once */
    g_autofree char *key = g_strdup_printf ("/hold/%s", path + strlen ("/release/"));
    g_mutex_lock (&conns_lock);
    Barrier *b = g_hash_table_lookup (barriers, key);
    g_mutex_unlock (&conns_lock);
    if (b)
      barrier_timeout (b);
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "ok", 2);
  } else if (g_str_has_prefix (path, "/cutstripe/")) {
    log_request (path, conn, msg);
    if (!cut_stripe (msg, path))
      serve_body (msg, body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/whole/")) {
    /* no ranges, and no word about them: a 200 with the whole body to any
     * request */
    log_request (path, conn, msg);
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_STATIC,
                                      (const char *) body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/log/")) {
    /* /log/KIND/TOKEN: the requests /KIND/TOKEN got */
    g_autofree char *key = g_strdup (path + strlen ("/log"));
    g_mutex_lock (&conns_lock);
    GString *log = g_hash_table_lookup (request_log, key);
    g_autofree char *text = g_strdup (log ? log->str : "");
    g_mutex_unlock (&conns_lock);
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, text, strlen (text));
  } else if (strcmp (path, "/norange") == 0) {
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_message_headers_replace (h, "Accept-Ranges", "none");
    soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_STATIC,
                                      (const char *) body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/drop/")) {
    /* the server runs in the parent of the forked tests: a test names its
     * own token, whose first GET is cut */
    g_mutex_lock (&conns_lock);
    guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (dropped, path));
    gboolean first = strcmp (method, "GET") == 0 && seen == 0
        && !soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "Range");
    g_hash_table_replace (dropped, g_strdup (path), GUINT_TO_POINTER (seen + 1));
    g_mutex_unlock (&conns_lock);
    if (first) {
      /* announce the whole body, send half, close: the client must resume
       * with a Range from where it stopped */
      soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
      soup_message_headers_replace (h, "Accept-Ranges", "bytes");
      soup_message_headers_replace (h, "Connection", "close");
      soup_message_headers_set_content_length (h, BODY_SIZE);
      SoupMessageBody *b = soup_server_message_get_response_body (msg);
      soup_message_body_append (b, SOUP_MEMORY_STATIC, body, BODY_SIZE / 2);
      soup_message_body_complete (b);
    } else {
      serve_body (msg, body, BODY_SIZE);
    }
  } else if (g_str_has_prefix (path, "/count/")) {
    /* how many requests /drop/TOKEN got, for the forked test to ask */
    g_autofree char *key = g_strdup_printf ("/drop/%s", path + strlen ("/count/"));
    g_mutex_lock (&conns_lock);
    g_autofree char *n = g_strdup_printf ("%u", GPOINTER_TO_UINT (g_hash_table_lookup (dropped, key)));
    g_mutex_unlock (&conns_lock);
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, n, strlen (n));
  } else if (g_str_has_prefix (path, "/busy/")) {
    /* /busy/STATUS/N/TOKEN: the first N requests are answered STATUS,
     * then the body; the server notes when each arrived */
    guint status = 0, n = 0;
    sscanf (path, "/busy/%u/%u/", &status, &n);
    g_mutex_lock (&conns_lock);
    GArray *times = g_hash_table_lookup (arrivals, path);
    if (times == NULL) {
      times = g_array_new (FALSE, FALSE, sizeof (gint64));
      g_hash_table_insert (arrivals, g_strdup (path), times);
    }
    gint64 now = g_get_monotonic_time ();
    g_array_append_val (times, now);
    guint seen = times->len;
    g_mutex_unlock (&conns_lock);
    if (seen <= n)
      soup_server_message_set_status (msg, status, NULL);
    else
      serve_body (msg, body, BODY_SIZE);
  } else if (g_str_has_prefix (path, "/times/")) {
    /* /times/busy/...: when the requests for /busy/... arrived */
    GString *text = g_string_new (NULL);
    g_mutex_lock (&conns_lock);
    GArray *times = g_hash_table_lookup (arrivals, path + strlen ("/times"));
    for (guint i = 0; times && i < times->len; i++)
      g_string_append_printf (text, "%" G_GINT64_FORMAT " ", g_array_index (times, gint64, i));
    g_mutex_unlock (&conns_lock);
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, text->str, text->len);
    g_string_free (text, TRUE);
  } else if (g_str_has_prefix (path, "/redirect/")) {
    guint status = (guint) atoi (path + strlen ("/redirect/"));
    soup_server_message_set_redirect (msg, status, "/file");
  } else if (strcmp (path, "/icy") == 0) {
    soup_message_headers_replace (h, "icy-metaint", "8192");
    soup_message_headers_replace (h, "icy-name", "Test Radio");
    soup_message_headers_replace (h, "icy-genre", "Lab");
    serve_body (msg, body, 50000);
  } else if (strcmp (path, "/404") == 0) {
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
  } else if (strcmp (path, "/403") == 0) {
    soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
  } else if (strcmp (path, "/trickle") == 0) {
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_message_headers_set_content_length (h, 200000);
    SoupMessageBody *b = soup_server_message_get_response_body (msg);
    if (strcmp (method, "HEAD") != 0) {
      soup_message_body_append (b, SOUP_MEMORY_STATIC, body, 40000);
      g_object_set_data (G_OBJECT (msg), "sent", GUINT_TO_POINTER (40000));
      GSource *t = g_timeout_source_new (250);
      g_source_set_callback (t, trickle, g_object_ref (msg), NULL);
      g_source_attach (t, server_ctx);
      g_source_unref (t);
    } else {
      soup_message_body_complete (b);
    }
  } else if (strcmp (path, "/stall") == 0) {
    /* 100 kB now, the next 100 kB three seconds later (the body is left
     * open: the server writes what it has and waits for the rest) */
    soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
    soup_message_headers_set_content_length (h, 200000);
    SoupMessageBody *b = soup_server_message_get_response_body (msg);
    if (strcmp (method, "HEAD") != 0) {
      soup_message_body_append (b, SOUP_MEMORY_STATIC, body, 100000);
      GSource *t = g_timeout_source_new (3000);
      g_source_set_callback (t, unpause, g_object_ref (msg), NULL);
      g_source_attach (t, server_ctx);
      g_source_unref (t);
    } else {
      soup_message_body_complete (b);
    }
  } else {
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
  }
}

static gboolean
auth_cb (SoupAuthDomain *d, SoupServerMessage *msg, const char *user, const char *pw, gpointer data)
{
  return g_strcmp0 (user, "alice") == 0 && g_strcmp0 (pw, "secret") == 0;
}

static gpointer
server_main (gpointer data)
{
  g_main_context_push_thread_default (server_ctx);
  g_main_loop_run (server_loop);
  g_main_context_pop_thread_default (server_ctx);
  return NULL;
}

static void
start_server (void)
{
  body = g_malloc (BODY_SIZE);
  dropped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  arrivals = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  request_log = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, log_free);
  barriers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, barrier_free);
  for (gsize i = 0; i < BODY_SIZE; i++)
    body[i] = (guint8) (i * 2654435761u >> 13);
  server_ctx = g_main_context_new ();
  g_main_context_push_thread_default (server_ctx);
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, handler, NULL, NULL);
  SoupAuthDomain *auth = soup_auth_domain_basic_new ("realm", "bwss-test", NULL);
  soup_auth_domain_add_path (auth, "/auth");
  soup_auth_domain_basic_set_auth_callback (auth, auth_cb, NULL, NULL);
  soup_server_add_auth_domain (server, auth);
  soup_server_add_handler (server, "/auth", handler, NULL, NULL);
  g_object_unref (auth);
  GError *err = NULL;
  fail_unless (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &err));
  GSList *uris = soup_server_get_uris (server);
  GUri *u = uris->data;
  base_url = g_strdup_printf ("http://127.0.0.1:%d", g_uri_get_port (u));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_main_context_pop_thread_default (server_ctx);
  server_loop = g_main_loop_new (server_ctx, FALSE);
  server_thread = g_thread_new ("server", server_main, NULL);
}

/* ---- running the element ---- */

typedef struct {
  GChecksum *sum;
  gsize bytes;
  GstMessage *error;
  GList *stats;           /* bwss-stats structures */
  GstStructure *headers;
} Result;

static void
on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, Result *r)
{
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_checksum_update (r->sum, map.data, map.size);
  r->bytes += map.size;
  gst_buffer_unmap (buf, &map);
}

/* Runs src ! fakesink to EOS or error; seeks to @seek_to bytes first if > 0. */
static void
run (GstElement *src, gint64 seek_to, Result *r)
{
  memset (r, 0, sizeof *r);
  r->sum = g_checksum_new (G_CHECKSUM_SHA256);
  GstElement *pipe = gst_pipeline_new (NULL), *sink = gst_element_factory_make ("fakesink", NULL);
  g_object_set (sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), r);
  gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
  fail_unless (gst_element_link (src, sink));
  GstBus *bus = gst_element_get_bus (pipe);
  if (seek_to > 0) {
    gst_element_set_state (pipe, GST_STATE_PAUSED);
    gst_element_get_state (pipe, NULL, NULL, GST_CLOCK_TIME_NONE);
    g_checksum_reset (r->sum);
    r->bytes = 0;
    fail_unless (gst_element_seek_simple (pipe, GST_FORMAT_BYTES, GST_SEEK_FLAG_FLUSH, seek_to));
    gst_element_get_state (pipe, NULL, NULL, GST_CLOCK_TIME_NONE);
    g_checksum_reset (r->sum);
    r->bytes = 0;
    /* the flush dropped what was prerolled; count from the seek target */
  }
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL, "the pipeline hung");
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT) {
      const GstStructure *s = gst_message_get_structure (m);
      if (gst_structure_has_name (s, "bwss-stats"))
        r->stats = g_list_append (r->stats, gst_structure_copy (s));
      else if (gst_structure_has_name (s, "http-headers") && !r->headers)
        r->headers = gst_structure_copy (s);
      gst_message_unref (m);
      continue;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
      r->error = m;
    else
      gst_message_unref (m);
    break;
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

static void
result_clear (Result *r)
{
  g_checksum_free (r->sum);
  if (r->error)
    gst_message_unref (r->error);
  g_list_free_full (r->stats, (GDestroyNotify) gst_structure_free);
  if (r->headers)
    gst_structure_free (r->headers);
}

static GstElement *
make_src (const char *path)
{
  GstElement *src = gst_element_factory_make ("bwsshttpsrc", NULL);
  fail_unless (src != NULL);
  g_autofree char *url = g_strdup_printf ("%s%s", base_url, path);
  g_object_set (src, "location", url, NULL);
  return src;
}

static char *
digest_of (const guint8 *data, gsize len)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
}

/* What the server answers to GET @path (the server runs in the parent of
 * the forked tests: they ask it). */
static gchar *
ask_server (const char *path)
{
  SoupSession *s = soup_session_new ();
  g_autofree char *url = g_strdup_printf ("%s%s", base_url, path);
  SoupMessage *m = soup_message_new ("GET", url);
  GBytes *b = soup_session_send_and_read (s, m, NULL, NULL);
  fail_unless (b != NULL);
  /* an empty body has no data at all (GLib >= 2.76 gives NULL, and
   * g_strndup (NULL, 0) is NULL): it is the empty string */
  gsize size = 0;
  const char *data = g_bytes_get_data (b, &size);
  gchar *text = data ? g_strndup (data, size) : g_strdup ("");
  g_bytes_unref (b);
  g_object_unref (m);
  g_object_unref (s);
  return text;
}

/* Requests the server saw for /drop/@token. */
static guint
drop_requests (const char *token)
{
  g_autofree char *path = g_strdup_printf ("/count/%s", token);
  g_autofree char *text = ask_server (path);
  return (guint) atoi (text);
}

/* When the requests for @busy (a /busy/... path) arrived, µs (monotonic),
 * and how many there were. */
static GArray *
busy_arrivals (const char *busy)
{
  g_autofree char *path = g_strdup_printf ("/times%s", busy);
  g_autofree char *text = ask_server (path);
  g_auto (GStrv) parts = g_strsplit (g_strstrip (text), " ", -1);
  GArray *times = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (gchar **p = parts; *p; p++) {
    if (**p) {
      gint64 t = g_ascii_strtoll (*p, NULL, 10);
      g_array_append_val (times, t);
    }
  }
  return times;
}

/* The lowest first byte of /KIND/TOKEN's bounded ranges, G_MAXUINT64 for
 * none (set by request_summary). */
static guint64 lowest_bounded;

/* What /KIND/TOKEN's requests were: *@conns the distinct connections they
 * came on, *@bounded those for a range with a last byte; returns the
 * requests. */
static guint
request_summary (const char *path, guint *conns, guint *bounded)
{
  lowest_bounded = G_MAXUINT64;
  g_autofree char *log_path = g_strdup_printf ("/log%s", path);
  g_autofree char *text = ask_server (log_path);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint requests = 0;
  *bounded = 0;
  for (gchar **l = lines; *l; l++) {
    if (!**l)
      continue;
    requests++;
    g_auto (GStrv) f = g_strsplit (*l, " ", 2);
    g_hash_table_add (seen, g_strdup (f[0]));
    guint64 first;
    if (f[1] && strcmp (f[1], "-") != 0 && f[1][strlen (f[1]) - 1] != '-') {
      (*bounded)++;
      if (sscanf (f[1], "bytes=%" G_GUINT64_FORMAT "-", &first) == 1)
        lowest_bounded = MIN (lowest_bounded, first);
    }
  }
  *conns = g_hash_table_size (seen);
  return requests;
}

/* The most connections a bwss-stats of @r said it read over. */
static guint
most_connections (const Result *r)
{
  guint most = 0;
  for (GList *l = r->stats; l; l = l->next) {
    guint n = 0;
    fail_unless (gst_structure_get_uint (l->data, "connections", &n), "no connections in bwss-stats");
    most = MAX (most, n);
  }
  return most;
}

/* A source of @kind/TOKEN read over @connections with @striping, a 1-Mbit/s
 * stream (chunks of the floor, 16 kB: 92 of them), statistics every 10 ms;
 * *@path the path it reads. */
static GstElement *
make_striped (const char *kind, const char *striping, guint connections, gchar **path)
{
  static guint serial;
  *path = g_strdup_printf ("/%s/%d-%u", kind, (int) getpid (), ++serial);
  GstElement *src = make_src (*path);
  gst_util_set_object_arg (G_OBJECT (src), "striping", striping);
  g_object_set (src, "connections", connections, "bitrate", (guint64) 1000000,
                "stats-interval", (guint64) 10 * GST_MSECOND, NULL);
  return src;
}

/* The gap between request @i and request @i + 1, seconds. */
static double
gap_s (GArray *times, guint i)
{
  return (g_array_index (times, gint64, i + 1) - g_array_index (times, gint64, i)) / 1e6;
}

/* ---- tests ---- */

/* ---- parity with the souphttpsrc present at run time ---- */

/* The properties bwsshttpsrc has beyond souphttpsrc's. */
static const char *const bwss_only[] = {
  "priority", "weight", "min-rate", "rate-headroom", "bitrate", "stats-interval", "stats",
  "connections", "striping", NULL
};

/* Flags that make a property what it is (not the static-strings hints). */
#define PARITY_FLAGS (~(GParamFlags) (G_PARAM_STATIC_NAME | G_PARAM_STATIC_NICK | G_PARAM_STATIC_BLURB))

/* Appends to @why what differs in the range of two pspecs of one type. */
static void
compare_range (GParamSpec *a, GParamSpec *b, GString *why)
{
  g_autofree char *ra = NULL, *rb = NULL;
#define RANGE(TYPE, CAST, FMT) \
  if (G_IS_PARAM_SPEC_##TYPE (a)) { \
    ra = g_strdup_printf ("[" FMT ", " FMT "]", CAST (a)->minimum, CAST (a)->maximum); \
    rb = g_strdup_printf ("[" FMT ", " FMT "]", CAST (b)->minimum, CAST (b)->maximum); \
  }
  RANGE (CHAR, G_PARAM_SPEC_CHAR, "%d")
  RANGE (UCHAR, G_PARAM_SPEC_UCHAR, "%u")
  RANGE (INT, G_PARAM_SPEC_INT, "%d")
  RANGE (UINT, G_PARAM_SPEC_UINT, "%u")
  RANGE (LONG, G_PARAM_SPEC_LONG, "%ld")
  RANGE (ULONG, G_PARAM_SPEC_ULONG, "%lu")
  RANGE (INT64, G_PARAM_SPEC_INT64, "%" G_GINT64_FORMAT)
  RANGE (UINT64, G_PARAM_SPEC_UINT64, "%" G_GUINT64_FORMAT)
  RANGE (FLOAT, G_PARAM_SPEC_FLOAT, "%.17g")
  RANGE (DOUBLE, G_PARAM_SPEC_DOUBLE, "%.17g")
#undef RANGE
  if (ra && strcmp (ra, rb) != 0)
    g_string_append_printf (why, "  %s: range %s, souphttpsrc's %s\n", a->name, rb, ra);
}

/* A value for a message (g_strdup_value_contents asserts on a NULL
 * GstStructure). */
static gchar *
describe_value (const GValue *v)
{
  if (G_VALUE_HOLDS_BOXED (v) && g_value_get_boxed (v) == NULL)
    return g_strdup ("NULL");
  if (G_VALUE_HOLDS_OBJECT (v))
    return g_value_get_object (v) ? g_strdup_printf ("a %s", G_OBJECT_TYPE_NAME (g_value_get_object (v)))
                                  : g_strdup ("NULL");
  return g_strdup_value_contents (v);
}

/* Appends to @why every way bwsshttpsrc's property @name differs from
 * souphttpsrc's @a (the pspec: type, default, range, flags; the value of a
 * fresh element).  The user agent's text names the element and its
 * version: it must be souphttpsrc's with those two replaced. */
static void
compare_property (GstElement *soup, GstElement *ours, GParamSpec *a, GString *why)
{
  const char *name = a->name;
  GParamSpec *b = g_object_class_find_property (G_OBJECT_GET_CLASS (ours), name);
  if (b == NULL) {
    g_string_append_printf (why, "  %s: missing (%s, %s)\n", name, G_PARAM_SPEC_TYPE_NAME (a),
                            g_type_name (a->value_type));
    return;
  }
  if (G_PARAM_SPEC_TYPE (a) != G_PARAM_SPEC_TYPE (b) || a->value_type != b->value_type) {
    g_string_append_printf (why, "  %s: %s of %s, souphttpsrc's %s of %s\n", name,
                            G_PARAM_SPEC_TYPE_NAME (b), g_type_name (b->value_type),
                            G_PARAM_SPEC_TYPE_NAME (a), g_type_name (a->value_type));
    return;
  }
  if ((a->flags & PARITY_FLAGS) != (b->flags & PARITY_FLAGS))
    g_string_append_printf (why, "  %s: flags 0x%x, souphttpsrc's 0x%x\n", name,
                            b->flags & PARITY_FLAGS, a->flags & PARITY_FLAGS);
  compare_range (a, b, why);
  const GValue *da = g_param_spec_get_default_value (a);
  const GValue *db = g_param_spec_get_default_value (b);
  if (strcmp (name, "user-agent") == 0) {
    /* "GStreamer souphttpsrc 1.22.0 " / "GStreamer souphttpsrc {VERSION} " */
    GstPlugin *sp = gst_plugin_feature_get_plugin (GST_PLUGIN_FEATURE (gst_element_get_factory (soup)));
    GstPlugin *bp = gst_plugin_feature_get_plugin (GST_PLUGIN_FEATURE (gst_element_get_factory (ours)));
    GString *want = g_string_new (g_value_get_string (da));
    g_string_replace (want, "souphttpsrc", "bwsshttpsrc", 0);
    g_string_replace (want, gst_plugin_get_version (sp), gst_plugin_get_version (bp), 0);
    if (g_strcmp0 (want->str, g_value_get_string (db)) != 0)
      g_string_append_printf (why, "  user-agent: default \"%s\", souphttpsrc's \"%s\" gives \"%s\"\n",
                              g_value_get_string (db), g_value_get_string (da), want->str);
    g_string_free (want, TRUE);
    gst_object_unref (sp);
    gst_object_unref (bp);
  } else if (g_param_values_cmp (a, da, db) != 0) {
    g_autofree char *sa = describe_value (da), *sb = describe_value (db);
    g_string_append_printf (why, "  %s: default %s, souphttpsrc's %s\n", name, sb, sa);
  }
  /* the value of a fresh element (what init() set), but for its name */
  if ((a->flags & G_PARAM_READABLE) && strcmp (name, "name") != 0 && strcmp (name, "user-agent") != 0) {
    GValue va = G_VALUE_INIT, vb = G_VALUE_INIT;
    g_value_init (&va, a->value_type);
    g_value_init (&vb, b->value_type);
    g_object_get_property (G_OBJECT (soup), name, &va);
    g_object_get_property (G_OBJECT (ours), name, &vb);
    /* souphttpsrc on libsoup 3 ignores ssl-use-system-ca-file (its getter
     * leaves FALSE, not the default it declares); bwsshttpsrc uses it */
    gboolean ignored = strcmp (name, "ssl-use-system-ca-file") == 0
        && g_param_values_cmp (a, &va, g_param_spec_get_default_value (a)) != 0
        && g_param_values_cmp (a, &vb, g_param_spec_get_default_value (a)) == 0;
    if (ignored) {
      GST_INFO ("%s: souphttpsrc reads back a value other than its default (it ignores the "
                "property on libsoup 3); bwsshttpsrc its default", name);
    } else if (g_param_values_cmp (a, &va, &vb) != 0) {
      g_autofree char *ca = describe_value (&va), *cb = describe_value (&vb);
      g_string_append_printf (why, "  %s: a new element's value %s, souphttpsrc's %s\n", name, cb, ca);
    }
    g_value_unset (&va);
    g_value_unset (&vb);
  }
}

/* "name (GType, GType) -> GType [flags]" of a signal. */
static gchar *
describe_signal (guint id)
{
  GSignalQuery q;
  g_signal_query (id, &q);
  GString *s = g_string_new (q.signal_name);
  g_string_append (s, " (");
  for (guint i = 0; i < q.n_params; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "",
                            g_type_name (q.param_types[i] & ~G_SIGNAL_TYPE_STATIC_SCOPE));
  g_string_append_printf (s, ") -> %s [flags 0x%x]", g_type_name (q.return_type & ~G_SIGNAL_TYPE_STATIC_SCOPE),
                          q.signal_flags);
  return g_string_free (s, FALSE);
}

/* Appends to @why every signal of @type and its ancestors that @other has
 * not with the same parameters, return type and flags (@which: "missing" or
 * "extra"). */
static void
compare_signals (GType type, GType other, const char *which, GString *why)
{
  for (GType t = type; t; t = g_type_parent (t)) {
    guint n = 0;
    guint *ids = g_signal_list_ids (t, &n);
    for (guint i = 0; i < n; i++) {
      g_autofree char *mine = describe_signal (ids[i]);
      guint id = g_signal_lookup (g_signal_name (ids[i]), other);
      if (id == 0) {
        g_string_append_printf (why, "  signal %s: %s\n", mine, which);
        continue;
      }
      g_autofree char *theirs = describe_signal (id);
      if (strcmp (mine, theirs) != 0)
        g_string_append_printf (why, "  signal %s, the other's %s\n", mine, theirs);
    }
    g_free (ids);
  }
}

/* Every property of the souphttpsrc present at run time (pspec type, value
 * type, default, range, flags, a new element's value) and every signal
 * (parameters, return type, flags) exists identically on bwsshttpsrc; its
 * properties beyond souphttpsrc's are the BWSS ones and it has no other
 * signal.  Every difference is listed, then the test fails. */
GST_START_TEST (test_property_parity)
{
  GstElementFactory *soup = gst_element_factory_find ("souphttpsrc");
  if (soup == NULL) {
    GST_WARNING ("souphttpsrc not installed: nothing to compare with");
    return;
  }
  GstElement *a = gst_element_factory_create (soup, NULL), *b = gst_element_factory_make ("bwsshttpsrc", NULL);
  GString *why = g_string_new (NULL);
  guint n = 0;
  GParamSpec **specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (a), &n);
  for (guint i = 0; i < n; i++)
    compare_property (a, b, specs[i], why);
  g_free (specs);
  specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (b), &n);
  for (guint i = 0; i < n; i++)
    if (!g_object_class_find_property (G_OBJECT_GET_CLASS (a), specs[i]->name)
        && !g_strv_contains (bwss_only, specs[i]->name))
      g_string_append_printf (why, "  %s: not a property of this souphttpsrc nor a BWSS one\n",
                              specs[i]->name);
  g_free (specs);
  compare_signals (G_OBJECT_TYPE (a), G_OBJECT_TYPE (b), "missing", why);
  compare_signals (G_OBJECT_TYPE (b), G_OBJECT_TYPE (a), "not souphttpsrc's", why);
  GstPlugin *sp = gst_plugin_feature_get_plugin (GST_PLUGIN_FEATURE (soup));
  GST_INFO ("compared with souphttpsrc %s (built against GStreamer %d.%d.%d): %s",
            gst_plugin_get_version (sp), GST_VERSION_MAJOR, GST_VERSION_MINOR, GST_VERSION_MICRO,
            why->len ? "differences" : "identical");
  fail_unless (why->len == 0, "bwsshttpsrc differs from souphttpsrc %s:\n%s", gst_plugin_get_version (sp),
               why->str);
  gst_object_unref (sp);
  g_string_free (why, TRUE);
  /* the same URI schemes, and ranked above souphttpsrc */
  GstElementFactory *ours_f = gst_element_factory_find ("bwsshttpsrc");
  fail_unless (gst_plugin_feature_get_rank (GST_PLUGIN_FEATURE (ours_f))
               > gst_plugin_feature_get_rank (GST_PLUGIN_FEATURE (soup)));
  const gchar *const *pa = gst_element_factory_get_uri_protocols (soup);
  const gchar *const *pb = gst_element_factory_get_uri_protocols (ours_f);
  for (; *pa; pa++)
    fail_unless (g_strv_contains (pb, *pa), "protocol %s missing", *pa);
  GstElement *made = gst_element_make_from_uri (GST_URI_SRC, "http://127.0.0.1/x", NULL, NULL);
  fail_unless (made && G_OBJECT_TYPE (made) == G_OBJECT_TYPE (b), "http:// does not pick bwsshttpsrc");
  gst_object_unref (made);
  gst_object_unref (ours_f);
  gst_object_unref (soup);
  gst_object_unref (a);
  gst_object_unref (b);
}
GST_END_TEST;

GST_START_TEST (test_byte_identical)
{
  Result r;
  run (make_src ("/file"), 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  /* the http-headers message */
  fail_unless (r.headers != NULL);
  guint code = 0;
  fail_unless (gst_structure_get_uint (r.headers, "http-status-code", &code));
  fail_unless_equals_int (code, 200);
  fail_unless (gst_structure_has_field (r.headers, "response-headers"));
  result_clear (&r);
}
GST_END_TEST;

GST_START_TEST (test_seek)
{
  Result r;
  const gint64 at = 777777;
  run (make_src ("/file"), at, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE - at);
  g_autofree char *want = digest_of (body + at, BODY_SIZE - at);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  result_clear (&r);
}
GST_END_TEST;

GST_START_TEST (test_resume_after_drop)
{
  Result r;
  g_autofree char *token = g_strdup_printf ("resume-%d", (int) getpid ());
  g_autofree char *path = g_strdup_printf ("/drop/%s", token);
  GstElement *src = make_src (path);
  run (src, 0, &r);
  fail_unless (r.error == NULL, "a dropped connection was not resumed");
  fail_unless (drop_requests (token) >= 2, "the connection was never cut: nothing was resumed");
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  result_clear (&r);
}
GST_END_TEST;

/* ---- reading over n connections ---- */

/* Forced over three connections: every byte once, in order, to EOS; the
 * server saw a connection for the first request and three more for the
 * chunks, each a bounded range. */
GST_START_TEST (test_striped_identical)
{
  Result r;
  g_autofree char *path = NULL;
  run (make_striped ("striped", "always", 3, &path), 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  guint conns, bounded;
  guint requests = request_summary (path, &conns, &bounded);
  fail_unless (conns == 4, "%u connections for %u requests", conns, requests);
  /* the first request reads the chunks' bytes before the stripes start */
  fail_unless (bounded >= 2 * 3 && bounded <= BODY_SIZE / STRIPE_FLOOR + 1, "%u ranges", bounded);
  /* the hand-over: the chunks start a window (2n chunks) past the byte the
   * open request had reached, and it reads on to there */
  fail_unless (lowest_bounded >= 2 * 3 * STRIPE_FLOOR && lowest_bounded < BODY_SIZE / 2,
               "the first range from %" G_GUINT64_FORMAT, lowest_bounded);
  fail_unless_equals_int (most_connections (&r), 3);
  result_clear (&r);
}
GST_END_TEST;

/* The default (auto) with no loop in COMPETE, and "never": one connection. */
GST_START_TEST (test_striped_only_when_asked)
{
  static const char *policies[] = { "auto", "never" };
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++) {
    Result r;
    g_autofree char *path = NULL;
    run (make_striped ("striped", policies[i], 3, &path), 0, &r);
    fail_unless (r.error == NULL);
    fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
    guint conns, bounded;
    guint requests = request_summary (path, &conns, &bounded);
    fail_unless (requests == 1 && conns == 1 && bounded == 0, "%s: %u requests, %u connections",
                 policies[i], requests, conns);
    fail_unless_equals_int (most_connections (&r), 1);
    result_clear (&r);
  }
}
GST_END_TEST;

/* A server that answers every request with the whole body and says nothing
 * of ranges: one connection, the same bytes. */
GST_START_TEST (test_striped_no_ranges)
{
  Result r;
  g_autofree char *path = NULL;
  run (make_striped ("whole", "always", 3, &path), 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  guint conns, bounded;
  guint requests = request_summary (path, &conns, &bounded);
  fail_unless (requests == 1 && conns == 1 && bounded == 0, "%u requests, %u connections", requests, conns);
  fail_unless_equals_int (most_connections (&r), 1);
  result_clear (&r);
}
GST_END_TEST;

/* One stripe's connection cut in the middle of its chunk: asked again from
 * the byte it got to, the output the same bytes. */
GST_START_TEST (test_striped_cut)
{
  Result r;
  g_autofree char *path = NULL;
  run (make_striped ("cutstripe", "always", 3, &path), 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  guint conns, bounded;
  request_summary (path, &conns, &bounded);
  /* the cut connection's successor is a fifth */
  fail_unless (conns == 5, "%u connections", conns);
  result_clear (&r);
}
GST_END_TEST;

/* Counts the bytes the source pushed; past half the body, striping goes to
 * "never" (once). */
static GstPadProbeReturn
narrow_halfway (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstElement *src = data;
  gsize *pushed = g_object_get_data (G_OBJECT (src), "pushed");
  *pushed += gst_buffer_get_size (GST_PAD_PROBE_INFO_BUFFER (info));
  if (*pushed > BODY_SIZE / 2 && !g_object_get_data (G_OBJECT (src), "narrowed")) {
    g_object_set_data (G_OBJECT (src), "narrowed", GINT_TO_POINTER (1));
    gst_util_set_object_arg (G_OBJECT (src), "striping", "never");
  }
  return GST_PAD_PROBE_OK;
}

/* Back to one connection in the middle of the stream: the chunks asked for
 * finish, one request reads on from the next byte with an open range, the
 * output the same bytes; the statistics say 3, then 1. */
GST_START_TEST (test_striped_narrow)
{
  Result r;
  g_autofree char *path = NULL;
  GstElement *src = make_striped ("striped", "always", 3, &path);
  gsize pushed = 0;
  g_object_set_data (G_OBJECT (src), "pushed", &pushed);
  GstPad *pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, narrow_halfway, src, NULL);
  gst_object_unref (pad);
  run (src, 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  /* the last request: an open range from past the middle */
  g_autofree char *log_path = g_strdup_printf ("/log%s", path);
  g_autofree char *text = ask_server (log_path);
  g_auto (GStrv) lines = g_strsplit (g_strstrip (text), "\n", -1);
  const char *last = lines[g_strv_length (lines) - 1];
  guint64 from = 0;
  fail_unless (sscanf (last, "%*s bytes=%" G_GUINT64_FORMAT "-", &from) == 1 && last[strlen (last) - 1] == '-',
               "last request: %s", last);
  fail_unless (from > BODY_SIZE / 2 && from < BODY_SIZE, "read on from %" G_GUINT64_FORMAT, from);
  fail_unless_equals_int (most_connections (&r), 3);
  guint n = 0;
  fail_unless (gst_structure_get_uint (g_list_last (r.stats)->data, "connections", &n));
  fail_unless_equals_int (n, 1);
  result_clear (&r);
}
GST_END_TEST;

typedef struct {
  const char *hold;              /* the /hold/TOKEN path */
  guint       grouped;           /* the most of our flows seen in one group at once */
  gboolean    one_key;           /* they had one key */
  double      min_rate;          /* the minimum they were registered with */
} GroupSeen;

/* Watches the domain while the element reads /hold/TOKEN: the most flows of
 * this process seen in one stream at once; then lets the server
 * answer. */
static gpointer
watch_group (gpointer data)
{
  GroupSeen *seen = data;
  BwssDomain *d = NULL;
  for (int i = 0; i < 1000 && seen->grouped < 3; i++) {
    if (d == NULL && bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      d = NULL;
    BwssFlowInfo rows[16];
    BwssFlowGroup groups[16];
    size_t n = 0;
    if (d && bwss_domain_list_flow_groups (d, rows, groups, 16, &n) == 0) {
      guint grouped = 0;
      guint64 key = 0;
      gboolean one = TRUE;
      for (size_t k = 0; k < n; k++) {
        if (rows[k].pid != getpid () || groups[k].share != BWSS_SHARE_STREAM || groups[k].group == 0)
          continue;
        one = one && (key == 0 || key == groups[k].group);
        key = groups[k].group;
        seen->min_rate = rows[k].stats.prefs.min_rate_bps;
        grouped++;
      }
      if (grouped > seen->grouped) {
        seen->grouped = grouped;
        seen->one_key = one;
      }
    }
    g_usleep (10000);
  }
  if (d)
    bwss_domain_close (d);
  g_autofree char *release = g_strdup_printf ("/release/%s", seen->hold + strlen ("/hold/"));
  g_free (ask_server (release));
  return NULL;
}

/* The n connections are flows of the element's stream, each with the
 * element's minimum (the group counts it once); the output the same. */
GST_START_TEST (test_striped_group)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-group-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  g_autofree char *path = NULL;
  GstElement *src = make_striped ("hold", "always", 3, &path);
  GroupSeen seen = { .hold = path };
  GThread *t = g_thread_new ("watch", watch_group, &seen);
  Result r;
  run (src, 0, &r);
  g_thread_join (t);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  fail_unless (seen.grouped >= 3, "%u flows in the process's group", seen.grouped);
  fail_unless (seen.one_key, "the connections in more than one group");
  /* 1 Mbit/s × 520/450, the element's whole minimum on each */
  fail_unless (fabs (seen.min_rate - 1000000.0 * 520 / 450) < 2, "min %f", seen.min_rate);
  g_autofree char *shm = g_strdup_printf ("/%s", name);
  shm_unlink (shm);
  g_unsetenv ("BWSS_DOMAIN");
  result_clear (&r);
}
GST_END_TEST;

/* Two striping elements of one process, as a player's audio and video:
 * each reads /hold/TOKEN with its own bitrate; the watcher counts our
 * flows by stream key while both are held, then lets the server answer. */
typedef struct {
  const char *holds[2];
  guint       keys;              /* distinct stream keys seen at once */
  guint       least;             /* the fewest flows of one of them then */
  gboolean    own_minima;        /* each key's flows carry one minimum, the two differ */
} StreamsSeen;

static gpointer
watch_streams (gpointer data)
{
  StreamsSeen *seen = data;
  BwssDomain *d = NULL;
  for (int i = 0; i < 1000 && !(seen->keys == 2 && seen->least >= 3); i++) {
    if (d == NULL && bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      d = NULL;
    BwssFlowInfo rows[32];
    BwssFlowGroup groups[32];
    size_t n = 0;
    if (d && bwss_domain_list_flow_groups (d, rows, groups, 32, &n) == 0) {
      guint64 key[2] = { 0, 0 };
      guint count[2] = { 0, 0 }, keys = 0;
      double min[2] = { -1, -1 };
      gboolean one_min = TRUE;
      for (size_t k = 0; k < n; k++) {
        if (rows[k].pid != getpid () || groups[k].share != BWSS_SHARE_STREAM || groups[k].group == 0)
          continue;
        guint j = key[0] == groups[k].group ? 0 : key[1] == groups[k].group ? 1 : keys;
        if (j >= 2)
          continue;                      /* a third key: counted as none */
        if (j == keys) {
          key[j] = groups[k].group;
          min[j] = rows[k].stats.prefs.min_rate_bps;
          keys++;
        }
        one_min = one_min && min[j] == rows[k].stats.prefs.min_rate_bps;
        count[j]++;
      }
      guint least = keys == 2 ? MIN (count[0], count[1]) : count[0];
      if (keys > seen->keys || (keys == seen->keys && least > seen->least)) {
        seen->keys = keys;
        seen->least = least;
        seen->own_minima = one_min && min[0] != min[1];
      }
    }
    g_usleep (10000);
  }
  if (d)
    bwss_domain_close (d);
  for (int j = 0; j < 2; j++) {
    g_autofree char *release = g_strdup_printf ("/release/%s", seen->holds[j] + strlen ("/hold/"));
    g_free (ask_server (release));
  }
  return NULL;
}

typedef struct {
  GstElement *src;
  Result      r;
} Reader;

static gpointer
read_all (gpointer data)
{
  Reader *rd = data;
  run (rd->src, 0, &rd->r);
  return NULL;
}

/* A player's audio and video, each a striping element of one process: two
 * streams (two keys), each of its element's connections with that
 * element's own minimum, not one group of the process against the larger
 * minimum. */
GST_START_TEST (test_striped_two_streams)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-streams-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  g_autofree char *video_path = NULL, *audio_path = NULL;
  Reader video = { .src = make_striped ("hold", "always", 3, &video_path) };
  Reader audio = { .src = make_striped ("hold", "always", 3, &audio_path) };
  g_object_set (audio.src, "bitrate", (guint64) 128000, NULL);
  StreamsSeen seen = { .holds = { video_path, audio_path } };
  GThread *w = g_thread_new ("watch", watch_streams, &seen);
  GThread *tv = g_thread_new ("video", read_all, &video);
  GThread *ta = g_thread_new ("audio", read_all, &audio);
  g_thread_join (tv);
  g_thread_join (ta);
  g_thread_join (w);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  Reader *both[] = { &video, &audio };
  for (int j = 0; j < 2; j++) {
    fail_unless (both[j]->r.error == NULL);
    fail_unless_equals_uint64 (both[j]->r.bytes, BODY_SIZE);
    fail_unless_equals_string (g_checksum_get_string (both[j]->r.sum), want);
    result_clear (&both[j]->r);
  }
  fail_unless (seen.keys == 2 && seen.least >= 3, "%u stream keys, the smaller with %u flows",
               seen.keys, seen.least);
  fail_unless (seen.own_minima, "the two streams' flows do not carry their own minima");
  g_autofree char *shm = g_strdup_printf ("/%s", name);
  shm_unlink (shm);
  g_unsetenv ("BWSS_DOMAIN");
}
GST_END_TEST;

/* A flushing seek while reading over three connections: the bytes from the
 * target, every one once, to EOS. */
GST_START_TEST (test_striped_seek)
{
  Result r;
  const gint64 at = 777777;
  g_autofree char *path = NULL;
  run (make_striped ("striped", "always", 3, &path), at, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE - at);
  g_autofree char *want = digest_of (body + at, BODY_SIZE - at);
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  fail_unless_equals_int (most_connections (&r), 3);
  result_clear (&r);
}
GST_END_TEST;

GST_START_TEST (test_redirects)
{
  static const char *codes[] = { "301", "302", "307" };
  g_autofree char *want = digest_of (body, BODY_SIZE);
  for (guint i = 0; i < G_N_ELEMENTS (codes); i++) {
    Result r;
    g_autofree char *path = g_strdup_printf ("/redirect/%s", codes[i]);
    GstElement *src = make_src (path);
    gst_object_ref (src);
    run (src, 0, &r);
    fail_unless (r.error == NULL, "redirect %s failed", codes[i]);
    fail_unless_equals_string (g_checksum_get_string (r.sum), want);
    /* the URI query reports the redirection */
    g_autofree char *uri = gst_uri_handler_get_uri (GST_URI_HANDLER (src));
    fail_unless (g_str_has_suffix (uri, "/file"), "uri %s", uri);
    gst_object_unref (src);
    result_clear (&r);
  }
  /* automatic-redirect off: an error carrying the status and the target */
  Result r;
  GstElement *src = make_src ("/redirect/302");
  g_object_set (src, "automatic-redirect", FALSE, NULL);
  run (src, 0, &r);
  fail_unless (r.error != NULL);
  const GstStructure *d = NULL;
  gst_message_parse_error_details (r.error, &d);
  guint code = 0;
  fail_unless (d && gst_structure_get_uint (d, "http-status-code", &code));
  fail_unless_equals_int (code, 302);
  fail_unless (g_str_has_suffix (gst_structure_get_string (d, "http-redirect-uri"), "/file"));
  result_clear (&r);
}
GST_END_TEST;

static void
expect_error (const char *path, GQuark domain, gint code, guint status)
{
  Result r;
  run (make_src (path), 0, &r);
  fail_unless (r.error != NULL, "%s: no error", path);
  GError *err = NULL;
  gst_message_parse_error (r.error, &err, NULL);
  fail_unless (g_error_matches (err, domain, code), "%s: %s", path, err->message);
  const GstStructure *d = NULL;
  gst_message_parse_error_details (r.error, &d);
  guint got = 0;
  fail_unless (d && gst_structure_get_uint (d, "http-status-code", &got));
  fail_unless_equals_int (got, status);
  g_error_free (err);
  result_clear (&r);
}

GST_START_TEST (test_errors_and_auth)
{
  expect_error ("/404", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, 404);
  expect_error ("/403", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_AUTHORIZED, 403);
  expect_error ("/auth/file", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_AUTHORIZED, 401);
  Result r;
  GstElement *src = make_src ("/auth/file");
  g_object_set (src, "user-id", "alice", "user-pw", "secret", NULL);
  run (src, 0, &r);
  if (r.error) {
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (r.error, &e, &dbg);
    fail ("basic auth: %s (%s)", e->message, dbg);
  }
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  result_clear (&r);
  /* a server that cannot seek: a seek fails, no silent wrong data */
  GstElement *pipe = gst_parse_launch ("bwsshttpsrc name=s ! fakesink name=k", NULL);
  GstElement *s = gst_bin_get_by_name (GST_BIN (pipe), "s");
  g_autofree char *url = g_strdup_printf ("%s/norange", base_url);
  g_object_set (s, "location", url, NULL);
  gst_element_set_state (pipe, GST_STATE_PAUSED);
  gst_element_get_state (pipe, NULL, NULL, GST_CLOCK_TIME_NONE);
  fail_if (gst_element_seek_simple (pipe, GST_FORMAT_BYTES, GST_SEEK_FLAG_FLUSH, 1000));
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (s);
  gst_object_unref (pipe);
}
GST_END_TEST;

GST_START_TEST (test_size_and_live)
{
  GstElement *pipe = gst_parse_launch ("bwsshttpsrc name=s ! fakesink", NULL);
  GstElement *s = gst_bin_get_by_name (GST_BIN (pipe), "s");
  g_autofree char *url = g_strdup_printf ("%s/file", base_url);
  g_object_set (s, "location", url, NULL);
  gst_element_set_state (pipe, GST_STATE_PAUSED);
  gst_element_get_state (pipe, NULL, NULL, GST_CLOCK_TIME_NONE);
  gint64 dur = 0;
  fail_unless (gst_element_query_duration (s, GST_FORMAT_BYTES, &dur));
  fail_unless_equals_int64 (dur, BODY_SIZE);
  /* the scheduling query says bandwidth-limited, so uridecodebin buffers */
  GstQuery *q = gst_query_new_scheduling ();
  fail_unless (gst_pad_query (GST_BASE_SRC_PAD (s), q));
  GstSchedulingFlags flags;
  gst_query_parse_scheduling (q, &flags, NULL, NULL, NULL);
  fail_unless (flags & GST_SCHEDULING_FLAG_BANDWIDTH_LIMITED);
  gst_query_unref (q);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (s);
  gst_object_unref (pipe);

  GstElement *live = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_object_set (live, "is-live", TRUE, NULL);
  fail_unless (gst_base_src_is_live (GST_BASE_SRC (live)));
  gst_object_unref (live);
}
GST_END_TEST;

/* The element's flow appears in the domain with priority 10 and the minimum
 * from the bitrate hint x headroom, and is gone after EOS.  (A flow kept on
 * its connection between requests holds no minimum until the next request
 * opens: the first row that holds one is taken.) */
static gpointer
watch_domain (gpointer data)
{
  BwssFlowInfo *seen = data;
  BwssDomain *d = NULL;
  for (int i = 0; i < 500 && seen->pid == 0; i++) {
    if (d == NULL && bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      d = NULL;
    BwssFlowInfo rows[8];
    size_t n = 0;
    if (d && bwss_domain_list_flows (d, rows, 8, &n) == 0 && n > 0 && rows[0].stats.prefs.min_rate_bps > 0)
      *seen = rows[0];
    g_usleep (10000);
  }
  if (d)
    bwss_domain_close (d);
  return NULL;
}

GST_START_TEST (test_registration)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  BwssFlowInfo seen = { 0 };
  GThread *t = g_thread_new ("watch", watch_domain, &seen);
  Result r;
  GstElement *src = make_src ("/stall");          /* lasts 3 s: time to look */
  g_object_set (src, "bitrate", (guint64) 450000, NULL);
  run (src, 0, &r);
  g_thread_join (t);
  fail_unless (r.error == NULL);
  fail_unless (seen.pid == getpid (), "the flow never appeared in the domain");
  fail_unless_equals_int (seen.stats.prefs.priority, 10);
  fail_unless (fabs (seen.stats.prefs.min_rate_bps - 520000) < 1, "min %f", seen.stats.prefs.min_rate_bps);
  /* after EOS the flow is gone */
  BwssDomain *d = NULL;
  fail_unless_equals_int (bwss_domain_open (NULL, BWSS_DOMAIN_NO_CONTROLLER, &d), 0);
  BwssFlowInfo rows[4];
  size_t n = 9;
  fail_unless_equals_int (bwss_domain_list_flows (d, rows, 4, &n), 0);
  fail_unless_equals_int (n, 0);
  bwss_domain_close (d);
  g_autofree char *path = g_strdup_printf ("/%s", name);
  shm_unlink (path);
  g_unsetenv ("BWSS_DOMAIN");
  result_clear (&r);
}
GST_END_TEST;

/* Plays @path to EOS in @pipe (already holding the source), then goes back
 * to READY, the way adaptive demuxers fetch fragment after fragment;
 * returns the number of the connection the server saw it on. */
static guint
fetch_in_ready_cycle (GstElement *pipe, GstElement *src, const char *path)
{
  g_autofree char *url = g_strdup_printf ("%s%s", base_url, path);
  g_object_set (src, "location", url, NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipe);
  guint conn = 0;
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR, "no EOS for %s", path);
    const GstStructure *s = gst_message_get_structure (m);
    const GstStructure *resp = NULL;
    if (s && gst_structure_has_name (s, "http-headers")
        && gst_structure_get (s, "response-headers", GST_TYPE_STRUCTURE, &resp, NULL)) {
      const gchar *v = gst_structure_get_string (resp, "X-Conn");
      conn = v ? (guint) atoi (v) : 0;
      gst_structure_free ((GstStructure *) resp);
    }
    gboolean eos = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
    gst_message_unref (m);
    if (eos)
      break;
  }
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_READY);
  return conn;
}

/* keep-alive (the default, and what hlsdemux sets): a second request after
 * READY reuses the connection, like souphttpsrc, and the flow is registered
 * again on it although libsoup announces no new connection.  Without
 * keep-alive each request has its own connection. */
GST_START_TEST (test_keep_alive)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-ka-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  for (int keep = 1; keep >= 0; keep--) {
    GstElement *pipe = gst_pipeline_new (NULL);
    GstElement *src = make_src ("/file");
    GstElement *sink = gst_element_factory_make ("fakesink", NULL);
    g_object_set (src, "keep-alive", (gboolean) keep, "bitrate", (guint64) 450000, NULL);
    gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
    fail_unless (gst_element_link (src, sink));
    guint conn_a = fetch_in_ready_cycle (pipe, src, "/file");
    BwssFlowInfo seen = { 0 };
    GThread *t = g_thread_new ("watch", watch_domain, &seen);
    guint conn_b = fetch_in_ready_cycle (pipe, src, "/stall");   /* 3 s: time to look */
    g_thread_join (t);
    fail_unless (conn_a != 0 && conn_b != 0);
    if (keep) {
      fail_unless (conn_b == conn_a, "keep-alive=true: connection %u, then %u", conn_a, conn_b);
    } else {
      fail_unless (conn_b != conn_a, "keep-alive=false reused connection %u", conn_a);
    }
    fail_unless (seen.pid == getpid (), "keep-alive=%d: the second request's flow was not registered",
                 keep);
    fail_unless (fabs (seen.stats.prefs.min_rate_bps - 520000) < 1);
    gst_element_set_state (pipe, GST_STATE_NULL);
    gst_object_unref (pipe);
  }
  g_autofree char *path = g_strdup_printf ("/%s", name);
  shm_unlink (path);
  g_unsetenv ("BWSS_DOMAIN");
}
GST_END_TEST;

/* The flows of this process in the domain. */
static size_t
own_flows (BwssFlowInfo *rows, size_t max)
{
  BwssDomain *d = NULL;
  fail_unless_equals_int (bwss_domain_open (NULL, BWSS_DOMAIN_NO_CONTROLLER, &d), 0);
  size_t n = 0, mine = 0;
  BwssFlowInfo all[32];
  fail_unless_equals_int (bwss_domain_list_flows (d, all, G_N_ELEMENTS (all), &n), 0);
  for (size_t i = 0; i < n; i++)
    if (all[i].pid == getpid () && mine < max)
      rows[mine++] = all[i];
  bwss_domain_close (d);
  return mine;
}

/* Between two requests (the source in READY, as a demuxer leaves it between
 * fragments) the flow stays registered on its persistent connection, so the
 * controller does not see a flow leave and join at every fragment, and holds
 * no minimum until the next request (a minimum counts while it is used,
 * issue 29); without keep-alive the connection closes and so does the
 * flow. */
GST_START_TEST (test_flow_kept_between_requests)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-kept-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  for (int keep = 1; keep >= 0; keep--) {
    GstElement *pipe = gst_pipeline_new (NULL);
    GstElement *src = make_src ("/file");
    GstElement *sink = gst_element_factory_make ("fakesink", NULL);
    g_object_set (src, "keep-alive", (gboolean) keep, "bitrate", (guint64) 450000, NULL);
    gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
    fail_unless (gst_element_link (src, sink));
    fetch_in_ready_cycle (pipe, src, "/file");
    BwssFlowInfo rows[4];
    size_t n = own_flows (rows, G_N_ELEMENTS (rows));
    if (keep) {
      fail_unless_equals_int (n, 1);
      fail_unless (rows[0].stats.prefs.min_rate_bps == 0, "the minimum %.0f is held between requests",
                   rows[0].stats.prefs.min_rate_bps);
      /* and the next request on the same connection keeps that flow */
      fetch_in_ready_cycle (pipe, src, "/file");
      BwssFlowInfo again[4];
      fail_unless_equals_int (own_flows (again, G_N_ELEMENTS (again)), 1);
      fail_unless_equals_string (again[0].local, rows[0].local);
    } else {
      fail_unless_equals_int (n, 0);
    }
    gst_element_set_state (pipe, GST_STATE_NULL);
    gst_object_unref (pipe);
    fail_unless_equals_int (own_flows (rows, G_N_ELEMENTS (rows)), 0);
  }
  g_autofree char *path = g_strdup_printf ("/%s", name);
  shm_unlink (path);
  g_unsetenv ("BWSS_DOMAIN");
}
GST_END_TEST;

/* The fourth bitrate source: nothing tells the bitrate, but downstream
 * takes a 4096-byte buffer every 10 ms (identity sleep-time): once it
 * pushes back, the rate it consumes, 3.28 Mbit/s, is the stream's, and the
 * minimum follows.  The measured rate can only be lower than the throttle
 * (a slow machine), never higher; so can every message's current-rate. */
GST_START_TEST (test_consumption_rate)
{
  const double throttle = 4096 * 8 / 0.010;
  g_autofree char *desc = g_strdup_printf (
      "bwsshttpsrc name=s location=%s/file ! identity sleep-time=10000 ! fakesink sync=false", base_url);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstStructure *last = NULL;
  guint periodic = 0;
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR, "no EOS");
    const GstStructure *st = gst_message_get_structure (m);
    if (st && gst_structure_has_name (st, "bwss-stats")) {
      double current = -1;
      fail_unless (gst_structure_get_double (st, "current-rate", &current));
      /* every periodic message: the rate of its interval, the throttle's */
      GST_INFO ("current-rate %.0f bit/s", current);
      fail_unless (current >= 0.5 * throttle && current <= 1.05 * throttle, "current-rate %.0f", current);
      periodic++;
      if (last)
        gst_structure_free (last);
      last = gst_structure_copy (st);
    }
    gboolean eos = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
    gst_message_unref (m);
    if (eos)
      break;
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  fail_unless (last != NULL);
  fail_unless (periodic >= 2, "%u stats messages over ~3.7 s", periodic);
  guint64 bitrate = 0;
  double min = 0;
  fail_unless_equals_string (gst_structure_get_string (last, "bitrate-source"), "consumption");
  fail_unless (gst_structure_get_uint64 (last, "bitrate", &bitrate));
  fail_unless (gst_structure_get_double (last, "min-rate", &min));
  GST_INFO ("consumption %" G_GUINT64_FORMAT " bit/s (throttle %.0f), minimum %.0f", bitrate, throttle, min);
  fail_unless (bitrate >= 0.5 * throttle && bitrate <= 1.05 * throttle, "consumption %" G_GUINT64_FORMAT, bitrate);
  fail_unless (fabs (min - bitrate * 520.0 / 450.0) < 1);
  gst_structure_free (last);
}
GST_END_TEST;

/* The stats property read from another thread while the streaming thread
 * unregisters the flow (an error, before any stats message exists, so
 * every read builds from the live flow).  The race of today's main (the getter reads a flow the streaming thread has just
 * freed, between bwss_flow_unregister() and forgetting its pointer) is two
 * statements wide; this test widens it: its own bwss_flow_unregister()
 * (the executable's symbol comes first) calls libbwss's and then waits
 * 20 ms before returning to the element. */
static gint widen_unregister;

void
bwss_flow_unregister (BwssFlow *f)
{
  static void (*real) (BwssFlow *);
  if (real == NULL)
    real = (void (*) (BwssFlow *)) dlsym (RTLD_NEXT, "bwss_flow_unregister");
  real (f);
  if (g_atomic_int_get (&widen_unregister))
    g_usleep (20000);
}

static gpointer
read_stats (gpointer data)
{
  GstElement *src = data;
  guint reads = 0;
  while (!g_object_get_data (G_OBJECT (src), "stop")) {
    GstStructure *s = NULL;
    g_object_get (src, "stats", &s, NULL);
    fail_unless (s && gst_structure_has_field (s, "bytes"));
    gst_structure_free (s);
    reads++;
  }
  return GUINT_TO_POINTER (reads);
}

GST_START_TEST (test_stats_from_another_thread)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-stats-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  g_atomic_int_set (&widen_unregister, 1);
  /* a connection cut mid-body with no retry: the error unregisters the flow
   * while no stats message exists yet, so every read builds from the flow */
  for (int i = 0; i < 5; i++) {
    g_autofree char *path = g_strdup_printf ("/drop/stats-%d-%d", (int) getpid (), i);
    GstElement *src = gst_object_ref (make_src (path));
    g_object_set (src, "retries", 0, "stats-interval", (guint64) 0, "bitrate", (guint64) 450000, NULL);
    GThread *t = g_thread_new ("stats", read_stats, src);
    Result r;
    run (src, 0, &r);
    g_object_set_data (G_OBJECT (src), "stop", GINT_TO_POINTER (1));
    guint reads = GPOINTER_TO_UINT (g_thread_join (t));
    GST_INFO ("%u reads", reads);
    fail_unless (r.error != NULL, "the cut connection was not an error with retries=0");
    fail_unless (reads > 0);
    result_clear (&r);
    gst_object_unref (src);
  }
  g_autofree char *shm = g_strdup_printf ("/%s", name);
  shm_unlink (shm);
  g_unsetenv ("BWSS_DOMAIN");
}
GST_END_TEST;

/* The BWSS properties set 10 000 times from the application's thread while
 * the element streams (the stream refreshes its bitrate and applies the
 * flow's preferences at every buffer: stats-interval 1 µs): the stream
 * completes byte for byte, and the flow, the getters and the statistics
 * end with the last values set.  A gate in the sink holds the stream at
 * half the body until the setter is done and checked, so the check is made
 * while the flow streams however slow the machine (a sanitizer build). */
#define STRESS_SETS 10000

typedef struct {
  GstElement *src;
  GMutex lock;
  GCond cond;
  gboolean started, checked;
  GChecksum *sum;
  gsize bytes;
  gint last_priority;
  double last_weight;
  guint64 last_min;
  double flow_min, flow_weight;
  gint flow_priority;
  size_t flows;
} Stress;

static void
stress_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, Stress *st)
{
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_checksum_update (st->sum, map.data, map.size);
  st->bytes += map.size;
  gst_buffer_unmap (buf, &map);
  g_mutex_lock (&st->lock);
  st->started = TRUE;
  g_cond_broadcast (&st->cond);
  while (st->bytes >= BODY_SIZE / 2 && !st->checked)
    g_cond_wait (&st->cond, &st->lock);
  g_mutex_unlock (&st->lock);
}

static gpointer
stress_setter (gpointer data)
{
  Stress *st = data;
  g_mutex_lock (&st->lock);
  while (!st->started)
    g_cond_wait (&st->cond, &st->lock);
  g_mutex_unlock (&st->lock);
  for (gint i = 0; i < STRESS_SETS; i++) {
    st->last_priority = i % 2001 - 1000;
    st->last_weight = 0.5 + i % 13;
    st->last_min = 100000 + (guint64) i * 97;
    g_object_set (st->src, "priority", st->last_priority, "weight", st->last_weight,
                  "min-rate", st->last_min, NULL);
  }
  /* the flow, while the stream is held at half its body */
  BwssFlowInfo rows[4];
  st->flows = own_flows (rows, G_N_ELEMENTS (rows));
  if (st->flows == 1) {
    st->flow_priority = rows[0].stats.prefs.priority;
    st->flow_weight = rows[0].stats.prefs.weight;
    st->flow_min = rows[0].stats.prefs.min_rate_bps;
  }
  g_mutex_lock (&st->lock);
  st->checked = TRUE;
  g_cond_broadcast (&st->cond);
  g_mutex_unlock (&st->lock);
  return NULL;
}

GST_START_TEST (test_props_from_another_thread)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-gst-props-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  Stress st = { 0 };
  g_mutex_init (&st.lock);
  g_cond_init (&st.cond);
  st.sum = g_checksum_new (G_CHECKSUM_SHA256);
  st.src = gst_object_ref (make_src ("/file"));
  g_object_set (st.src, "stats-interval", (guint64) 1000, "bitrate", (guint64) 450000, NULL);
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *throttle = gst_element_factory_make ("identity", NULL);
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  g_object_set (throttle, "sleep-time", 1000, NULL);
  g_object_set (sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (stress_handoff), &st);
  gst_bin_add_many (GST_BIN (pipe), st.src, throttle, sink, NULL);
  fail_unless (gst_element_link_many (st.src, throttle, sink, NULL));
  GThread *setter = g_thread_new ("setter", stress_setter, &st);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstStructure *last = NULL;
  guint messages = 0;
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR, "no EOS");
    const GstStructure *s = gst_message_get_structure (m);
    if (s && gst_structure_has_name (s, "bwss-stats")) {
      messages++;
      if (last)
        gst_structure_free (last);
      last = gst_structure_copy (s);
    }
    gboolean eos = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
    gst_message_unref (m);
    if (eos)
      break;
  }
  g_thread_join (setter);
  /* the getters, before NULL (the stream is over, nothing changes them) */
  gint priority = 0;
  double weight = 0;
  guint64 min = 0;
  g_object_get (st.src, "priority", &priority, "weight", &weight, "min-rate", &min, NULL);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);

  GST_INFO ("%d sets; flow: priority %d weight %g min %.0f; %u stats messages", STRESS_SETS,
            st.flow_priority, st.flow_weight, st.flow_min, messages);
  /* the stream, byte for byte */
  fail_unless_equals_uint64 (st.bytes, BODY_SIZE);
  g_autofree char *want = digest_of (body, BODY_SIZE);
  fail_unless_equals_string (g_checksum_get_string (st.sum), want);
  /* the flow had the last values while it streamed */
  fail_unless_equals_int (st.flows, 1);
  fail_unless_equals_int (st.flow_priority, st.last_priority);
  fail_unless (st.flow_weight == st.last_weight, "flow weight %g, last set %g", st.flow_weight, st.last_weight);
  fail_unless (st.flow_min == (double) st.last_min, "flow min %.0f, last set %" G_GUINT64_FORMAT,
               st.flow_min, st.last_min);
  /* the getters and the statistics say the same */
  fail_unless_equals_int (priority, st.last_priority);
  fail_unless (weight == st.last_weight);
  fail_unless_equals_uint64 (min, st.last_min);
  fail_unless (messages > 2 && last != NULL);
  double stats_min = 0;
  fail_unless (gst_structure_get_double (last, "min-rate", &stats_min));
  fail_unless (stats_min == (double) st.last_min, "bwss-stats min-rate %.0f", stats_min);
  gst_structure_free (last);
  gst_object_unref (st.src);
  g_checksum_free (st.sum);
  g_mutex_clear (&st.lock);
  g_cond_clear (&st.cond);
  g_autofree char *shm = g_strdup_printf ("/%s", name);
  shm_unlink (shm);
  g_unsetenv ("BWSS_DOMAIN");
}
GST_END_TEST;

/* 200 kB at 400 kbit/s is 4 s of media in 200 packets; 100 kB arrive at
 * once, the rest 3 s later: packets 100..199 (media 2..3.98 s) arrive at
 * ~3 s.  Late with 0.5 s of prebuffer: packets whose media time is below
 * 2.5 s, i.e. 100..124 → 12.5 %; none with 2 s; ~1 s of prebuffer needed. */
/* One buffer leaving the element: when (µs, monotonic) and the bytes so far. */
typedef struct {
  gint64 t;
  guint64 bytes;
} Arrival;

static GstPadProbeReturn
note_arrival (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GArray *a = data;
  Arrival x = { g_get_monotonic_time (), gst_buffer_get_size (GST_PAD_PROBE_INFO_BUFFER (info)) };
  if (a->len)
    x.bytes += g_array_index (a, Arrival, a->len - 1).bytes;
  g_array_append_val (a, x);
  return GST_PAD_PROBE_OK;
}

/* The late-packet figures the stream's own arrivals give, computed here from
 * docs/element.md's definition and not with libbwss: packet k of @packet
 * bytes is due k·Δ after the first byte and arrives with the buffer that
 * completes it; @late[i] is the fraction of packets later than @th[i]
 * seconds, @worst the largest lateness. */
static void
late_expected (const GArray *a, double rate_bps, guint packet, const double *th, double *late,
    size_t n, double *worst)
{
  double delta = 8.0 * packet / rate_bps;
  guint64 k = 0, late_n[8] = { 0 };
  *worst = 0.0;
  fail_unless (a->len > 0 && n <= G_N_ELEMENTS (late_n));
  gint64 t0 = g_array_index (a, Arrival, 0).t;
  for (guint j = 0; j < a->len; j++) {
    const Arrival *x = &g_array_index (a, Arrival, j);
    for (; (k + 1) * packet <= x->bytes; k++) {
      double lateness = (double) (x->t - t0) / 1e6 - (double) k * delta;
      *worst = MAX (*worst, lateness);
      for (size_t i = 0; i < n; i++)
        late_n[i] += lateness > th[i];
    }
  }
  for (size_t i = 0; i < n; i++)
    late[i] = k ? (double) late_n[i] / (double) k : 0.0;
}

/* The late metric judged against the arrivals this run saw, not the
 * server's nominal 3-s stall: how the loopback flow and the server's timer
 * spread the bytes is the host's, what the element makes of them is ours.
 * The probe sees each buffer a moment after the element timed it (the same
 * streaming thread, between the element's clock reading and the push): a
 * few µs, more only if the thread is preempted right there.  A packet is
 * Δ = 20 ms of media, so the figures agree to within a packet; three are
 * allowed (60 ms of preemption), while any error in the metric itself —
 * t0, Δ, the byte count, the threshold — moves them by tens of packets. */
GST_START_TEST (test_late_metric)
{
  Result r;
  GstElement *src = gst_object_ref (make_src ("/stall"));
  g_object_set (src, "bitrate", (guint64) 400000, "stats-interval", (guint64) 0, NULL);
  GArray *seen = g_array_new (FALSE, FALSE, sizeof (Arrival));
  GstPad *pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, note_arrival, seen, NULL);
  gst_object_unref (pad);
  run (src, 0, &r);
  fail_unless (r.error == NULL);
  fail_unless (r.stats != NULL, "no bwss-stats at EOS");
  GstStructure *last = g_list_last (r.stats)->data;
  double late05 = -1, late2 = -1, need = -1;
  guint64 bytes = 0;
  fail_unless (gst_structure_get_double (last, "late-0.5", &late05));
  fail_unless (gst_structure_get_double (last, "late-2", &late2));
  fail_unless (gst_structure_get_double (last, "required-prebuffer", &need));
  fail_unless (gst_structure_get_uint64 (last, "bytes", &bytes));
  GST_INFO ("late-0.5 %.3f late-2 %.3f required %.3f", late05, late2, need);
  fail_unless_equals_uint64 (bytes, 200000);
  static const double th[] = { 0.5, 2.0 };
  double want[2], want_need;
  late_expected (seen, 400000.0, 1000, th, want, 2, &want_need);
  GST_INFO ("expected: late-0.5 %.3f late-2 %.3f required %.3f", want[0], want[1], want_need);
  /* the stall is there: 100 kB (2 s of media) then nothing for 3 s
   * (0.125 and 1.0 s were the first byte at the server's start) */
  fail_unless (want[0] > 0.08 && want_need > 0.8,
      "the run shows no 3-s stall: late-0.5 %f, required %f", want[0], want_need);
  const double one_packet = 1.0 / 200.0;
  fail_unless (fabs (late05 - want[0]) <= 3 * one_packet, "late-0.5 = %f, the arrivals say %f", late05, want[0]);
  fail_unless (fabs (late2 - want[1]) <= 3 * one_packet, "late-2 = %f, the arrivals say %f", late2, want[1]);
  fail_unless (fabs (need - want_need) <= 0.06, "required prebuffer %f, the arrivals say %f", need, want_need);
  g_array_unref (seen);
  /* the stats property holds the same */
  GstStructure *prop = NULL;
  g_object_get (src, "stats", &prop, NULL);
  fail_unless (prop && gst_structure_has_field (prop, "required-prebuffer"));
  gst_structure_free (prop);
  gst_object_unref (src);
  result_clear (&r);
}
GST_END_TEST;

/* What the domain and bwss-top showed of the element's flow. */
typedef struct {
  double domain;               /* the largest late_fraction the domain listed */
  double top;                  /* late_fraction of bwss-top --json, -1 if none */
} LateSeen;

/* Lists the domain until its flow has been late by more than 5 % of its
 * packets, then asks bwss-top once. */
static gpointer
watch_late (gpointer data)
{
  LateSeen *seen = data;
  BwssDomain *d = NULL;
  for (int i = 0; i < 800 && seen->top < 0; i++, g_usleep (10000)) {
    if (d == NULL && bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      d = NULL;
    BwssFlowInfo rows[8];
    size_t n = 0;
    if (d == NULL || bwss_domain_list_flows (d, rows, 8, &n) != 0)
      continue;
    for (size_t k = 0; k < n; k++)
      if (rows[k].pid == getpid ())
        seen->domain = MAX (seen->domain, rows[k].stats.late_fraction);
    if (seen->domain <= 0.05)
      continue;
    const char *argv[] = { g_getenv ("BWSS_TOP"), "--once", "--json", NULL };
    g_autofree char *out = NULL;
    if (argv[0] && g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                 &out, NULL, NULL, NULL)) {
      const char *p = out ? strstr (out, "\"late_fraction\":") : NULL;
      seen->top = p ? g_ascii_strtod (p + strlen ("\"late_fraction\":"), NULL) : 0.0;
    }
  }
  if (d)
    bwss_domain_close (d);
  return NULL;
}

/* Whether @late is the late-1 of one of the element's messages. */
static gboolean
posted_late1 (GList *stats, double late)
{
  for (GList *l = stats; l; l = l->next) {
    double v;
    if (gst_structure_get_double (l->data, "late-1", &v) && fabs (v - late) < 1e-9)
      return TRUE;
  }
  return FALSE;
}

/* The element tells bwssd how late its stream is (bwss_flow_report_late()):
 * a server slower than the 800 kbit/s the stream plays at (40 kB, then
 * 40 kB/s) makes its packets late with 1 s of prebuffering from about
 * 2.3 s on; the domain lists the element's own late-1 with the flow, above
 * zero, and bwss-top --json prints it. */
GST_START_TEST (test_late_in_domain)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-late-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  LateSeen seen = { .domain = -1.0, .top = -1.0 };
  GThread *t = g_thread_new ("watch", watch_late, &seen);
  GstElement *src = make_src ("/trickle");
  g_object_set (src, "bitrate", (guint64) 800000, "stats-interval", (guint64) (100 * GST_MSECOND), NULL);
  Result r;
  run (src, 0, &r);
  g_thread_join (t);
  fail_unless (r.error == NULL);
  GST_INFO ("late-1: domain %.3f, bwss-top %.3f", seen.domain, seen.top);
  fail_unless (seen.domain > 0.05, "the domain never showed the flow late (%f)", seen.domain);
  fail_unless (posted_late1 (r.stats, seen.domain), "the domain's %f is no late-1 the element posted",
               seen.domain);
  fail_unless (seen.top > 0.05 && posted_late1 (r.stats, seen.top), "bwss-top showed %f", seen.top);
  g_unsetenv ("BWSS_DOMAIN");
  result_clear (&r);
}
GST_END_TEST;

/* An icecast-like server: application/x-icy caps with the interval, tags. */
static GstPadProbeReturn
catch_events (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);
  GList **events = data;
  if (GST_EVENT_TYPE (ev) == GST_EVENT_CAPS || GST_EVENT_TYPE (ev) == GST_EVENT_TAG)
    *events = g_list_append (*events, gst_event_ref (ev));
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_icy)
{
  GList *events = NULL;
  GstElement *src = make_src ("/icy");
  GstPad *pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, catch_events, &events, NULL);
  gst_object_unref (pad);
  Result r;
  run (src, 0, &r);
  fail_unless (r.error == NULL);
  gint interval = 0;
  gchar *org = NULL, *genre = NULL;
  for (GList *l = events; l; l = l->next) {
    GstEvent *ev = l->data;
    if (GST_EVENT_TYPE (ev) == GST_EVENT_CAPS) {
      GstCaps *caps;
      gst_event_parse_caps (ev, &caps);
      GstStructure *st = gst_caps_get_structure (caps, 0);
      if (gst_structure_has_name (st, "application/x-icy"))
        gst_structure_get_int (st, "metadata-interval", &interval);
    } else {
      GstTagList *tl;
      gst_event_parse_tag (ev, &tl);
      if (!org)
        gst_tag_list_get_string (tl, GST_TAG_ORGANIZATION, &org);
      if (!genre)
        gst_tag_list_get_string (tl, GST_TAG_GENRE, &genre);
    }
  }
  fail_unless_equals_int (interval, 8192);
  fail_unless_equals_string (org, "Test Radio");
  fail_unless_equals_string (genre, "Lab");
  g_free (org);
  g_free (genre);
  g_list_free_full (events, (GDestroyNotify) gst_event_unref);
  result_clear (&r);
}
GST_END_TEST;

/* The User-Agent the server was asked with for /file, @property set on
 * the element (NULL: left at its default). */
static gchar *
sent_user_agent (const char *property)
{
  Result r;
  GstElement *src = make_src ("/file");
  if (property)
    g_object_set (src, "user-agent", property, NULL);
  run (src, 0, &r);
  fail_unless (r.error == NULL && r.headers != NULL);
  GstStructure *resp = NULL;
  fail_unless (gst_structure_get (r.headers, "response-headers", GST_TYPE_STRUCTURE, &resp, NULL));
  gchar *ua = g_strdup (gst_structure_get_string (resp, "X-User-Agent"));
  gst_structure_free (resp);
  result_clear (&r);
  return ua;
}

/* The user agent in the form of the GStreamer built against: the default
 * names the element and its version ("{VERSION}" from 1.24, replaced when
 * sent); libsoup's token is appended to an empty value or one ending with
 * a space; any other value is sent as it is. */
GST_START_TEST (test_user_agent)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (), "bwss");
  fail_unless (plugin != NULL);
  const gchar *version = gst_plugin_get_version (plugin);
  g_autofree char *soup = g_strdup_printf ("libsoup/%u.%u.%u", soup_get_major_version (),
                                           soup_get_minor_version (), soup_get_micro_version ());
  GstElement *src = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_autofree char *dflt = NULL;
  g_object_get (src, "user-agent", &dflt, NULL);
  gst_object_unref (src);
#if GST_CHECK_VERSION(1, 24, 0)
  fail_unless_equals_string (dflt, "GStreamer bwsshttpsrc {VERSION} ");
#else
  g_autofree char *want_default = g_strdup_printf ("GStreamer bwsshttpsrc %s ", version);
  fail_unless_equals_string (dflt, want_default);
#endif
  g_autofree char *sent = sent_user_agent (NULL);
  g_autofree char *want = g_strdup_printf ("GStreamer bwsshttpsrc %s %s", version, soup);
  fail_unless_equals_string (sent, want);
  g_autofree char *plain = sent_user_agent ("FooPlayer 0.99 beta");
  fail_unless_equals_string (plain, "FooPlayer 0.99 beta");
  g_autofree char *empty = sent_user_agent ("");
  fail_unless_equals_string (empty, soup);
  g_autofree char *templ = sent_user_agent ("App/{VERSION}");
#if GST_CHECK_VERSION(1, 24, 0)
  g_autofree char *want_templ = g_strdup_printf ("App/%s", version);
  fail_unless_equals_string (templ, want_templ);
#else
  fail_unless_equals_string (templ, "App/{VERSION}");
#endif
  gst_object_unref (plugin);
}
GST_END_TEST;

/* Plays @busy (a /busy/... path) with @retries and @factor (and @max if
 * > 0) set; returns the arrival times of its requests, the result in @r. */
static GArray *
run_busy (const char *busy, gint retries, double factor, double max, Result *r)
{
  GstElement *src = make_src (busy);
  g_object_set (src, "retries", retries, NULL);
#if GST_CHECK_VERSION(1, 26, 0)
  g_object_set (src, "retry-backoff-factor", factor, NULL);
  if (max > 0)
    g_object_set (src, "retry-backoff-max", max, NULL);
#endif
  run (src, 0, r);
  GArray *times = busy_arrivals (busy);
  for (guint i = 0; i + 1 < times->len; i++)
    GST_INFO ("%s: %.3f s between requests %u and %u", busy, gap_s (times, i), i + 1, i + 2);
  return times;
}

/* The error of @r is RESOURCE/OPEN_READ with http-status-code @status. */
static void
check_status_error (Result *r, guint status)
{
  fail_unless (r->error != NULL, "no error for status %u", status);
  GError *err = NULL;
  gst_message_parse_error (r->error, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ), "%s", err->message);
  g_error_free (err);
  const GstStructure *d = NULL;
  guint got = 0;
  gst_message_parse_error_details (r->error, &d);
  fail_unless (d && gst_structure_get_uint (d, "http-status-code", &got));
  fail_unless_equals_int (got, status);
}

#if GST_CHECK_VERSION(1, 26, 0)
/* Slack for a late wake-up on a loaded machine, seconds. */
#define SLACK_S 0.5

/* GStreamer 1.26: a 500 or a 503 is retried; with retry-backoff-factor f,
 * the n-th request (n >= 2) waits min (f × 2^(n-1), retry-backoff-max)
 * seconds (souphttpsrc 1.26's formula); without it, none. */
GST_START_TEST (test_retry_backoff)
{
  g_autofree char *want = digest_of (body, BODY_SIZE);
  int pid = (int) getpid ();
  Result r;
  /* two 503s, then the body: waits of 2f and 4f */
  g_autofree char *a = g_strdup_printf ("/busy/503/2/backoff-%d", pid);
  GArray *t = run_busy (a, 3, 0.3, 0, &r);
  fail_unless (r.error == NULL, "503 twice, then 200: an error");
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  fail_unless_equals_int (t->len, 3);
  fail_unless (gap_s (t, 0) >= 0.6 && gap_s (t, 0) < 0.6 + SLACK_S, "first wait %.3f s, 0.6 due", gap_s (t, 0));
  fail_unless (gap_s (t, 1) >= 1.2 && gap_s (t, 1) < 1.2 + SLACK_S, "second wait %.3f s, 1.2 due", gap_s (t, 1));
  g_array_unref (t);
  result_clear (&r);
  /* 500 too, the waits capped by retry-backoff-max */
  g_autofree char *b = g_strdup_printf ("/busy/500/2/backoff-max-%d", pid);
  t = run_busy (b, 3, 0.3, 0.4, &r);
  fail_unless (r.error == NULL, "500 twice, then 200: an error");
  fail_unless_equals_int (t->len, 3);
  for (guint i = 0; i < 2; i++)
    fail_unless (gap_s (t, i) >= 0.4 && gap_s (t, i) < 0.4 + SLACK_S, "wait %u: %.3f s, 0.4 due", i,
                 gap_s (t, i));
  g_array_unref (t);
  result_clear (&r);
  /* no factor (the default): retried at once */
  g_autofree char *c = g_strdup_printf ("/busy/503/2/nobackoff-%d", pid);
  t = run_busy (c, 3, 0, 0, &r);
  fail_unless (r.error == NULL);
  fail_unless_equals_int (t->len, 3);
  fail_unless (gap_s (t, 0) < SLACK_S && gap_s (t, 1) < SLACK_S, "waited without a backoff factor");
  g_array_unref (t);
  result_clear (&r);
  /* a 503 that lasts: retries + 1 requests, then the error with its status */
  g_autofree char *d = g_strdup_printf ("/busy/503/100/giveup-%d", pid);
  t = run_busy (d, 2, 0, 0, &r);
  check_status_error (&r, 503);
  fail_unless_equals_int (t->len, 3);
  g_array_unref (t);
  result_clear (&r);
}
GST_END_TEST;

/* A flush (here: the pipeline stopped) ends a backoff at once. */
GST_START_TEST (test_retry_backoff_flush)
{
  g_autofree char *busy = g_strdup_printf ("/busy/503/100/flush-%d", (int) getpid ());
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *src = make_src (busy), *sink = gst_element_factory_make ("fakesink", NULL);
  g_object_set (src, "retries", -1, "retry-backoff-factor", 20.0, NULL);   /* 40 s before the 2nd */
  gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
  fail_unless (gst_element_link (src, sink));
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GArray *t = NULL;
  for (int i = 0; i < 500; i++) {
    t = busy_arrivals (busy);
    if (t->len >= 1)
      break;
    g_array_unref (t);
    t = NULL;
    g_usleep (10000);
  }
  fail_unless (t != NULL, "no request");
  g_array_unref (t);
  g_usleep (300000);                    /* well into the wait */
  gint64 t0 = g_get_monotonic_time ();
  gst_element_set_state (pipe, GST_STATE_NULL);
  double took = (g_get_monotonic_time () - t0) / 1e6;
  GST_INFO ("stopped during the backoff in %.3f s", took);
  fail_unless (took < 2.0, "stopping took %.3f s: the backoff was not cut short", took);
  t = busy_arrivals (busy);
  fail_unless_equals_int (t->len, 1);
  g_array_unref (t);
  gst_object_unref (pipe);
}
GST_END_TEST;
#else
/* Before GStreamer 1.26 (as its souphttpsrc): a 503 is an error at once,
 * and there is no backoff property. */
GST_START_TEST (test_retry_backoff)
{
  GstElement *src = gst_element_factory_make ("bwsshttpsrc", NULL);
  fail_unless (g_object_class_find_property (G_OBJECT_GET_CLASS (src), "retry-backoff-factor") == NULL);
  fail_unless (g_object_class_find_property (G_OBJECT_GET_CLASS (src), "retry-backoff-max") == NULL);
  gst_object_unref (src);
  for (guint status = 500; status <= 503; status += 3) {
    g_autofree char *busy = g_strdup_printf ("/busy/%u/1/noretry-%d", status, (int) getpid ());
    Result r;
    GArray *t = run_busy (busy, 3, 0, 0, &r);
    check_status_error (&r, status);
    fail_unless_equals_int (t->len, 1);
    g_array_unref (t);
    result_clear (&r);
  }
}
GST_END_TEST;
#endif

static gpointer
tls_server_main (gpointer data)
{
  gpointer *lc = data;
  g_main_context_push_thread_default (lc[0]);
  g_main_loop_run (lc[1]);
  g_main_context_pop_thread_default (lc[0]);
  return NULL;
}

#if GST_CHECK_VERSION(1, 24, 0)
/* What accept-certificate handlers saw. */
typedef struct {
  gint calls;
  gboolean answer;
  GMutex lock;
  GTlsCertificate *cert;
  GTlsCertificateFlags errors;
} CertAsked;

static gboolean
on_accept_certificate (GstElement *src, GTlsCertificate *cert, GTlsCertificateFlags errors, CertAsked *a)
{
  g_mutex_lock (&a->lock);
  a->calls++;
  g_set_object (&a->cert, cert);
  a->errors = errors;
  g_mutex_unlock (&a->lock);
  return a->answer;
}

/* Plays @url with ssl-strict @strict (and @ca as ssl-ca-file) and an
 * accept-certificate handler answering @answer; what it was asked in @a. */
static void
run_asking (const char *url, gboolean strict, const char *ca, gboolean answer, CertAsked *a, Result *r)
{
  memset (a, 0, sizeof *a);
  g_mutex_init (&a->lock);
  a->answer = answer;
  GstElement *src = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_object_set (src, "location", url, "retries", 0, "ssl-strict", strict, "ssl-ca-file", ca, NULL);
  g_signal_connect (src, "accept-certificate", G_CALLBACK (on_accept_certificate), a);
  run (src, 0, r);
}

static void
asked_clear (CertAsked *a)
{
  g_clear_object (&a->cert);
  g_mutex_clear (&a->lock);
}
#endif

/* HTTPS with a certificate made for the test: refused while untrusted
 * (ssl-strict, no CA), byte-exact with ssl-ca-file, accepted without
 * ssl-strict.  From GStreamer 1.24, as souphttpsrc: an untrusted
 * certificate goes to accept-certificate (the server's, with
 * UNKNOWN_CA), whose TRUE lets it through and FALSE refuses it; a trusted
 * one, or ssl-strict=false, asks nobody. */
GST_START_TEST (test_https)
{
  g_autofree char *dir = g_dir_make_tmp ("bwss-tls-XXXXXX", NULL);
  g_autofree char *key = g_build_filename (dir, "key.pem", NULL);
  g_autofree char *crt = g_build_filename (dir, "cert.pem", NULL);
  const char *argv[] = { "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                         "-keyout", key, "-out", crt, NULL };
  gint status = -1;
  GError *err = NULL;
  fail_unless (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                             | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &err),
               "openssl: %s", err ? err->message : "");
  fail_unless (g_spawn_check_wait_status (status, NULL));
  GTlsCertificate *cert = g_tls_certificate_new_from_files (crt, key, &err);
  fail_unless (cert != NULL, "%s", err ? err->message : "");

  /* its own context and thread: server_ctx belongs to the plain server */
  GMainContext *tls_ctx = g_main_context_new ();
  g_main_context_push_thread_default (tls_ctx);
  SoupServer *tls = soup_server_new ("tls-certificate", cert, NULL);
  soup_server_add_handler (tls, NULL, handler, NULL, NULL);
  fail_unless (soup_server_listen_local (tls, 0, SOUP_SERVER_LISTEN_IPV4_ONLY | SOUP_SERVER_LISTEN_HTTPS, &err));
  GSList *uris = soup_server_get_uris (tls);
  g_autofree char *url = g_strdup_printf ("https://127.0.0.1:%d/file", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_main_context_pop_thread_default (tls_ctx);
  GMainLoop *tls_loop = g_main_loop_new (tls_ctx, FALSE);
  gpointer loop_ctx[2] = { tls_ctx, tls_loop };
  GThread *tls_thread = g_thread_new ("tls", tls_server_main, loop_ctx);

  g_autofree char *want = digest_of (body, BODY_SIZE);
  Result r;
  GstElement *src = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_object_set (src, "location", url, "retries", 0, NULL);
  run (src, 0, &r);
  fail_unless (r.error != NULL, "an untrusted certificate was accepted");
  result_clear (&r);

  src = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_object_set (src, "location", url, "ssl-ca-file", crt, NULL);
  run (src, 0, &r);
  fail_unless (r.error == NULL, "with ssl-ca-file");
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  result_clear (&r);

  src = gst_element_factory_make ("bwsshttpsrc", NULL);
  g_object_set (src, "location", url, "ssl-strict", FALSE, NULL);
  run (src, 0, &r);
  fail_unless (r.error == NULL, "with ssl-strict=false");
  fail_unless_equals_uint64 (r.bytes, BODY_SIZE);
  result_clear (&r);

#if GST_CHECK_VERSION(1, 24, 0)
  CertAsked asked;
  run_asking (url, TRUE, NULL, TRUE, &asked, &r);
  fail_unless (r.error == NULL, "a handler accepting the certificate: an error");
  fail_unless_equals_string (g_checksum_get_string (r.sum), want);
  fail_unless (asked.calls >= 1, "accept-certificate was not emitted");
  fail_unless (asked.cert && g_tls_certificate_is_same (asked.cert, cert), "not the server's certificate");
  fail_unless (asked.errors & G_TLS_CERTIFICATE_UNKNOWN_CA, "errors 0x%x", asked.errors);
  asked_clear (&asked);
  result_clear (&r);

  run_asking (url, TRUE, NULL, FALSE, &asked, &r);
  fail_unless (r.error != NULL, "a handler refusing the certificate: no error");
  fail_unless (asked.calls >= 1);
  asked_clear (&asked);
  result_clear (&r);

  run_asking (url, FALSE, NULL, FALSE, &asked, &r);
  fail_unless (r.error == NULL, "ssl-strict=false with a refusing handler: an error");
  fail_unless_equals_int (asked.calls, 0);
  asked_clear (&asked);
  result_clear (&r);

  run_asking (url, TRUE, crt, FALSE, &asked, &r);
  fail_unless (r.error == NULL, "a trusted certificate with a refusing handler: an error");
  fail_unless_equals_int (asked.calls, 0);
  asked_clear (&asked);
  result_clear (&r);
#else
  src = gst_element_factory_make ("bwsshttpsrc", NULL);
  fail_unless (g_signal_lookup ("accept-certificate", G_OBJECT_TYPE (src)) == 0,
               "accept-certificate before GStreamer 1.24");
  gst_object_unref (src);
#endif

  g_main_loop_quit (tls_loop);
  g_thread_join (tls_thread);
  g_main_context_push_thread_default (tls_ctx);
  soup_server_disconnect (tls);
  g_object_unref (tls);
  g_main_context_pop_thread_default (tls_ctx);
  g_main_loop_unref (tls_loop);
  g_main_context_unref (tls_ctx);
  g_object_unref (cert);
  g_unlink (key);
  g_unlink (crt);
  g_rmdir (dir);
}
GST_END_TEST;

static Suite *
bwsshttpsrc_suite (void)
{
  Suite *s = suite_create ("bwsshttpsrc");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  tcase_add_unchecked_fixture (tc, start_server, NULL);
  tcase_add_test (tc, test_property_parity);
  tcase_add_test (tc, test_byte_identical);
  tcase_add_test (tc, test_seek);
  tcase_add_test (tc, test_resume_after_drop);
  tcase_add_test (tc, test_striped_identical);
  tcase_add_test (tc, test_striped_only_when_asked);
  tcase_add_test (tc, test_striped_no_ranges);
  tcase_add_test (tc, test_striped_cut);
  tcase_add_test (tc, test_striped_seek);
  tcase_add_test (tc, test_striped_narrow);
  tcase_add_test (tc, test_striped_group);
  tcase_add_test (tc, test_striped_two_streams);
  tcase_add_test (tc, test_redirects);
  tcase_add_test (tc, test_errors_and_auth);
  tcase_add_test (tc, test_size_and_live);
  tcase_add_test (tc, test_registration);
  tcase_add_test (tc, test_keep_alive);
  tcase_add_test (tc, test_flow_kept_between_requests);
  tcase_add_test (tc, test_consumption_rate);
  tcase_add_test (tc, test_stats_from_another_thread);
  tcase_add_test (tc, test_props_from_another_thread);
  tcase_add_test (tc, test_late_metric);
  tcase_add_test (tc, test_late_in_domain);
  tcase_add_test (tc, test_icy);
  tcase_add_test (tc, test_https);
  tcase_add_test (tc, test_user_agent);
  tcase_add_test (tc, test_retry_backoff);
#if GST_CHECK_VERSION(1, 26, 0)
  tcase_add_test (tc, test_retry_backoff_flush);
#endif
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (bwsshttpsrc);

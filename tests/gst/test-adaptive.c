/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-adaptive.c — the video's minimum follows an HLS stream, in both of
 * GStreamer's adaptive stacks, with nothing set by hand on the source.
 *
 * A SoupServer in the test process serves a master playlist with two
 * variants, 200 and 800 kbit/s (the lower one listed first, so the demuxers
 * start on it and switch up later), over
 * MP3-in-MPEG-TS segments made at setup with GStreamer.  The domain is
 * suspended (sharing off: no controller publishes σ), so the ABR rule holds
 * the variant in use: minimum = BANDWIDTH / usage factor × 1.10.  Every
 * check reads the minimum back from the domain.
 */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <libsoup/soup.h>
#include <sys/mman.h>
#include <bwss/domain.h>

#define N_SEGMENTS 4

static GBytes *segments[N_SEGMENTS];
static SoupServer *server;
static GMainContext *server_ctx;
static GMainLoop *server_loop;
static GThread *server_thread;
static gchar *base_url;

static GMutex lock;
static GCond cond;
static gboolean gate_closed;           /* hold /high/index.m3u8 and /low/a00.ts while set */
static gboolean high_gate_closed;      /* hold /high/a*.ts while set */
static GPtrArray *ts_ports;            /* client ports of segment requests (guint) */

/* ---- content ---- */

/* MP3 in MPEG-TS, cut every 2 s at frame boundaries, in memory. */
static void
make_segments (void)
{
  g_autofree char *dir = g_dir_make_tmp ("bwss-hls-XXXXXX", NULL);
  fail_unless (dir != NULL);
  g_autofree char *pattern = g_build_filename (dir, "a%02d.ts", NULL);
  g_autofree char *desc = g_strdup_printf (
      "audiotestsrc num-buffers=345 ! audio/x-raw,rate=44100,channels=1 ! lamemp3enc bitrate=64 ! "
      "mpegaudioparse ! splitmuxsink muxer=mpegtsmux max-size-time=2000000000 location=%s", pattern);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "making the segments failed");
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  for (int i = 0; i < N_SEGMENTS; i++) {
    g_autofree char *name = g_strdup_printf ("a%02d.ts", i);
    g_autofree char *path = g_build_filename (dir, name, NULL);
    gchar *data;
    gsize len;
    fail_unless (g_file_get_contents (path, &data, &len, NULL), "segment %d missing", i);
    segments[i] = g_bytes_new_take (data, len);
    g_unlink (path);
  }
  g_rmdir (dir);
}

/* ---- the server ---- */

static void
respond (SoupServerMessage *msg, const char *type, const void *data, gsize len)
{
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, type, SOUP_MEMORY_COPY, data, len);
}

static void
handler (SoupServer *srv, SoupServerMessage *msg, const char *path, GHashTable *q, gpointer data)
{
  if (strcmp (path, "/master.m3u8") == 0) {
    const char *m = "#EXTM3U\n#EXT-X-VERSION:3\n"
                    "#EXT-X-STREAM-INF:BANDWIDTH=200000\nlow/index.m3u8\n"
                    "#EXT-X-STREAM-INF:BANDWIDTH=800000\nhigh/index.m3u8\n";
    respond (msg, "application/vnd.apple.mpegurl", m, strlen (m));
    return;
  }
  if (g_str_has_suffix (path, "/index.m3u8")) {
    if (strcmp (path, "/high/index.m3u8") == 0) {
      /* the switch up: held until the test has seen the first minimum */
      g_mutex_lock (&lock);
      gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
      while (gate_closed && g_cond_wait_until (&cond, &lock, end))
        ;
      g_mutex_unlock (&lock);
    }
    GString *pl = g_string_new ("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXT-X-MEDIA-SEQUENCE:0\n");
    for (int i = 0; i < N_SEGMENTS; i++)
      g_string_append_printf (pl, "#EXTINF:2.0,\na%02d.ts\n", i);
    g_string_append (pl, "#EXT-X-ENDLIST\n");
    respond (msg, "application/vnd.apple.mpegurl", pl->str, pl->len);
    g_string_free (pl, TRUE);
    return;
  }
  int i = -1;
  const char *base = strrchr (path, '/');
  if (base && sscanf (base, "/a%02d.ts", &i) == 1 && i >= 0 && i < N_SEGMENTS) {
    GSocketAddress *remote = soup_server_message_get_remote_address (msg);
    g_mutex_lock (&lock);
    /* a fragment held open: the minimum counts only while one is fetched
     * (issue 29), so the test looks while the server holds one */
    gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
    while (((strcmp (path, "/low/a00.ts") == 0 && gate_closed)
            || (g_str_has_prefix (path, "/high/") && high_gate_closed))
           && g_cond_wait_until (&cond, &lock, end))
      ;
    if (G_IS_INET_SOCKET_ADDRESS (remote))
      g_ptr_array_add (ts_ports, GUINT_TO_POINTER (g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote))));
    g_mutex_unlock (&lock);
    gsize len;
    const void *d = g_bytes_get_data (segments[i], &len);
    respond (msg, "video/mp2t", d, len);
    return;
  }
  soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
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
  make_segments ();
  ts_ports = g_ptr_array_new ();
  server_ctx = g_main_context_new ();
  g_main_context_push_thread_default (server_ctx);
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, handler, NULL, NULL);
  GError *err = NULL;
  fail_unless (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &err));
  GSList *uris = soup_server_get_uris (server);
  base_url = g_strdup_printf ("http://127.0.0.1:%d", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_main_context_pop_thread_default (server_ctx);
  server_loop = g_main_loop_new (server_ctx, FALSE);
  server_thread = g_thread_new ("server", server_main, NULL);
}

/* Each test forks: the server runs in the test's own process, so its
 * records and its gate are the test's. */
static void
stop_server (void)
{
  g_main_loop_quit (server_loop);
  g_thread_join (server_thread);
  g_main_context_push_thread_default (server_ctx);
  soup_server_disconnect (server);
  g_clear_object (&server);
  g_main_context_pop_thread_default (server_ctx);
  g_main_loop_unref (server_loop);
  g_main_context_unref (server_ctx);
  g_ptr_array_free (ts_ports, TRUE);
  for (int i = 0; i < N_SEGMENTS; i++)
    g_bytes_unref (segments[i]);
  g_clear_pointer (&base_url, g_free);
}

static void
set_gate (gboolean closed)
{
  g_mutex_lock (&lock);
  gate_closed = closed;
  g_cond_broadcast (&cond);
  g_mutex_unlock (&lock);
}

static void
set_high_gate (gboolean closed)
{
  g_mutex_lock (&lock);
  high_gate_closed = closed;
  g_cond_broadcast (&cond);
  g_mutex_unlock (&lock);
}

/* ---- the domain ---- */

/* A fresh domain of the test's own, sharing switched off (no σ). */
static BwssDomain *
open_suspended_domain (const char *tag)
{
  g_autofree char *name = g_strdup_printf ("bwss-test-adaptive-%s-%d", tag, (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  BwssDomain *d = NULL;
  fail_unless_equals_int (bwss_domain_open (NULL, BWSS_DOMAIN_NO_CONTROLLER, &d), 0);
  /* again while bwssd, just started, is too busy to answer (a loaded
   * host), within a hang guard */
  gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  int err;
  while ((err = bwss_domain_set_suspended (d, true)) == BWSS_EBUSY && g_get_monotonic_time () < end)
    g_usleep (50000);
  fail_unless_equals_int (err, 0);
  return d;
}

static void
close_domain (BwssDomain *d, const char *tag)
{
  bwss_domain_close (d);
  g_autofree char *path = g_strdup_printf ("/bwss-test-adaptive-%s-%d", tag, (int) getpid ());
  shm_unlink (path);
  g_unsetenv ("BWSS_DOMAIN");
}

static guint
local_port (const BwssFlowInfo *fi)
{
  const char *colon = strrchr (fi->local, ':');
  return colon ? (guint) atoi (colon + 1) : 0;
}

/* Waits (up to 30 s) for a flow of this process with priority 10 and
 * minimum @min (bit/s), on local port @port if not 0; returns its port, or
 * 0 if none came. */
static guint
wait_for_min (BwssDomain *d, double min, guint port)
{
  for (int tries = 0; tries < 1500; tries++) {
    BwssFlowInfo rows[32];
    size_t n = 0;
    if (bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n) == 0)
      for (size_t i = 0; i < n; i++)
        if (rows[i].pid == getpid () && rows[i].stats.prefs.priority == 10
            && fabs (rows[i].stats.prefs.min_rate_bps - min) < 1 && (port == 0 || local_port (&rows[i]) == port))
          return local_port (&rows[i]);
    g_usleep (20000);
  }
  return 0;
}

/* The number of this process's flows in the domain. */
static size_t
own_flows (BwssDomain *d)
{
  BwssFlowInfo rows[32];
  size_t n = 0, mine = 0;
  fail_unless_equals_int (bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n), 0);
  for (size_t i = 0; i < n; i++)
    mine += rows[i].pid == getpid ();
  return mine;
}

/* ---- tests ---- */

/* Every pad the demuxer adds gets a sink of its own: the legacy demuxer
 * switches variants on a new pad (the old one ends with EOS), and a
 * pad left unlinked stops the stream with not-linked, which tears the
 * fragment's source, its connection and its flow down. */
static void
link_new_pad (GstElement *demux, GstPad *pad, gpointer data)
{
  GstElement *pipe = data;
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  fail_unless (sink != NULL);
  g_object_set (sink, "sync", FALSE, NULL);
  gst_bin_add (GST_BIN (pipe), sink);
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  fail_unless_equals_int (gst_pad_link (pad, sinkpad), GST_PAD_LINK_OK);
  gst_object_unref (sinkpad);
  fail_unless (gst_element_sync_state_with_parent (sink));
}

/* The legacy stack: hlsdemux fetches its fragments with bwsshttpsrc.  The
 * minimum is the first variant's need while the demuxer plays it, the
 * second one's after it switched, with the usage factor read from the
 * demuxer (bitrate-limit 0.5 here: 200k / 0.5 × 1.1, 800k / 0.5 × 1.1) —
 * each while a fragment is fetched (the server holds one), none between
 * fragments.
 *
 * The switch is the player's: once the first minimum is seen, the test
 * tells the demuxer its connection speed (connection-speed, kbit/s, which
 * it then uses in place of its own estimate), so it takes the 800k variant
 * at the next fragment.  Left to its estimate, the switch would hang on
 * time: a 2-s fragment of this stream is about 22 kB, and bitrate-limit 0.5
 * takes the 800k variant only when such fragments come in under 110 ms
 * (1.6 Mbit/s), which a loaded host does not promise. */
GST_START_TEST (test_legacy_switch_updates_minimum)
{
  BwssDomain *d = open_suspended_domain ("legacy");
  set_gate (TRUE);
  g_autofree char *desc = g_strdup_printf (
      "bwsshttpsrc location=%s/master.m3u8 ! hlsdemux name=demux bitrate-limit=0.5", base_url);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  GstElement *demux = gst_bin_get_by_name (GST_BIN (pipe), "demux");
  fail_unless (demux != NULL);
  g_signal_connect (demux, "pad-added", G_CALLBACK (link_new_pad), pipe);
  set_high_gate (TRUE);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  guint first = wait_for_min (d, 440000, 0);
  /* set while the first fragment is held, so the demuxer's choice after it
   * reads it: 2000 kbit/s affords the 800k variant */
  g_object_set (demux, "connection-speed", 2000u, NULL);
  set_gate (FALSE);
  fail_unless (first != 0, "the first variant's minimum (440000) never appeared in the domain");
  guint second = wait_for_min (d, 1760000, 0);
  set_high_gate (FALSE);
  fail_unless (second != 0, "after the switch the minimum did not become 1760000");
  /* the stream plays through the switch to its end (a hang guard of 30 s) */
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  GError *err = NULL;
  if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
    gst_message_parse_error (m, &err, NULL);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "the stream did not reach its end: %s",
               err ? err->message : "no EOS");
  gst_message_unref (m);
  gst_object_unref (bus);
  /* between fragments (the stream's end: nothing left to fetch) no
   * minimum is held; the flow stays on its persistent connection */
  fail_unless (wait_for_min (d, 0, second) == second, "the minimum was not released between fragments");
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (demux);
  gst_object_unref (pipe);
  /* the playlists' source belongs to the demuxer's downloader and goes
   * with the demuxer's last reference, which a thread of the demuxer may
   * drop after ours (a hang guard of 30 s) */
  int tries = 0;
  while (own_flows (d) > 0 && tries++ < 1500)
    g_usleep (20000);
  fail_unless_equals_int (own_flows (d), 0);
  close_domain (d, "legacy");
}
GST_END_TEST;

/* The adaptivedemux2 stack: playbin3 plays the stream with hlsdemux2,
 * which downloads with its own libsoup session.  The connection the
 * segments came on is registered (priority 10) with the minimum of the
 * variant in use (800k / 0.8 × 1.1 once it switched up), and is gone once
 * the player stops. */
GST_START_TEST (test_playbin3_registers_demuxer_connection)
{
  BwssDomain *d = open_suspended_domain ("pb3");
  GstElement *play = gst_element_factory_make ("playbin3", NULL);
  fail_unless (play != NULL);
  g_autofree char *uri = g_strdup_printf ("%s/master.m3u8", base_url);
  g_object_set (play, "uri", uri, "audio-sink", gst_element_factory_make ("fakesink", NULL),
                "video-sink", gst_element_factory_make ("fakesink", NULL), NULL);
  gst_element_set_state (play, GST_STATE_PLAYING);
  guint port = 0;
  for (int tries = 0; tries < 1500 && port == 0; tries++) {
    g_mutex_lock (&lock);
    port = ts_ports->len ? GPOINTER_TO_UINT (ts_ports->pdata[ts_ports->len - 1]) : 0;
    g_mutex_unlock (&lock);
    if (!port)
      g_usleep (20000);
  }
  fail_unless (port != 0, "no segment was requested");
  fail_unless (wait_for_min (d, 1100000, port) == port,
               "the demuxer's connection (port %u) was not registered with the 800k variant's minimum", port);
  gst_element_set_state (play, GST_STATE_NULL);
  gst_object_unref (play);
  int tries = 0;
  while (own_flows (d) > 0 && tries++ < 1500)
    g_usleep (20000);
  fail_unless_equals_int (own_flows (d), 0);
  close_domain (d, "pb3");
}
GST_END_TEST;

static Suite *
adaptive_suite (void)
{
  Suite *s = suite_create ("adaptive");
  TCase *tc = tcase_create ("hls");
  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, start_server, stop_server);
  tcase_add_test (tc, test_legacy_switch_updates_minimum);
  tcase_add_test (tc, test_playbin3_registers_demuxer_connection);
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (adaptive);

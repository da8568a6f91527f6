/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-player — plays a URL with playbin (which picks bwsshttpsrc for
 * http/https) and prints the source's bwss-stats once a second: rate, target,
 * σ, RTT, window, late packets and the prebuffer the stream needed so far.
 *
 *   bwss-player [--video-sink=fakesink] [--audio-sink=fakesink] URL
 *
 * Start a download beside it with `bwss-run -- curl -o /dev/null URL2`: the
 * video's target and rate hold while the download takes what is left.
 */
#include <stdio.h>
#include <gst/gst.h>

static gchar *opt_video_sink;
static gchar *opt_audio_sink;

static GOptionEntry entries[] = {
  { "video-sink", 0, 0, G_OPTION_ARG_STRING, &opt_video_sink, "Video sink (e.g. fakesink)", "ELEMENT" },
  { "audio-sink", 0, 0, G_OPTION_ARG_STRING, &opt_audio_sink, "Audio sink (e.g. fakesink)", "ELEMENT" },
  { NULL }
};

static void
print_stats (const GstStructure *s)
{
  guint64 bytes = 0, bitrate = 0, rtt = 0;
  double rate = 0, target = -1, sigma = -1, need = -1, late1 = -1, min = 0;
  guint window = 0;
  const gchar *from = gst_structure_get_string (s, "bitrate-source");
  gst_structure_get_uint64 (s, "bytes", &bytes);
  gst_structure_get_double (s, "current-rate", &rate);
  gst_structure_get_double (s, "target-rate", &target);
  gst_structure_get_double (s, "sigma", &sigma);
  gst_structure_get_uint64 (s, "bitrate", &bitrate);
  gst_structure_get_uint64 (s, "rtt", &rtt);
  gst_structure_get_uint (s, "window", &window);
  gst_structure_get_double (s, "late-1", &late1);
  gst_structure_get_double (s, "required-prebuffer", &need);
  gst_structure_get_double (s, "min-rate", &min);
  printf ("%8.1f kB  rate %6.0f kbit/s  target %6.0f  min %6.0f  sigma %6.0f  bitrate %6.0f (%s)  "
          "rtt %5.1f ms  window %6u B  late@1s %5.3f  prebuffer %.2f s\n",
          bytes / 1e3, rate / 1e3, target / 1e3, min / 1e3, sigma / 1e3, bitrate / 1e3,
          from ? from : "none", rtt / 1e6, window, late1, need);
  fflush (stdout);
}

static gboolean
on_message (GstBus *bus, GstMessage *msg, gpointer data)
{
  GMainLoop *loop = data;
  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ELEMENT:
      if (gst_message_has_name (msg, "bwss-stats"))
        print_stats (gst_message_get_structure (msg));
      break;
    case GST_MESSAGE_ERROR: {
      g_autoptr (GError) err = NULL;
      g_autofree gchar *dbg = NULL;
      gst_message_parse_error (msg, &err, &dbg);
      fprintf (stderr, "bwss-player: %s\n", err->message);
      g_main_loop_quit (loop);
      break;
    }
    case GST_MESSAGE_EOS:
      g_main_loop_quit (loop);
      break;
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("URL");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2) {
    fprintf (stderr, "bwss-player: %s\n", error ? error->message : "one URL is needed");
    return 2;
  }
  GstElement *play = gst_element_factory_make ("playbin", NULL);
  if (play == NULL) {
    fprintf (stderr, "bwss-player: playbin is missing (gstreamer1.0-plugins-base)\n");
    return 1;
  }
  g_object_set (play, "uri", argv[1], NULL);
  if (opt_video_sink)
    g_object_set (play, "video-sink", gst_element_factory_make (opt_video_sink, NULL), NULL);
  if (opt_audio_sink)
    g_object_set (play, "audio-sink", gst_element_factory_make (opt_audio_sink, NULL), NULL);
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);
  GstBus *bus = gst_element_get_bus (play);
  gst_bus_add_watch (bus, on_message, loop);
  gst_element_set_state (play, GST_STATE_PLAYING);
  g_main_loop_run (loop);
  gst_element_set_state (play, GST_STATE_NULL);
  gst_bus_remove_watch (bus);
  gst_object_unref (bus);
  gst_object_unref (play);
  g_main_loop_unref (loop);
  return 0;
}

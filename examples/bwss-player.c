/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-player — plays a URL with playbin (which picks bwsshttpsrc for
 * http/https), gives the source the application's BWSS preferences through
 * playbin's source-setup signal, and prints the source's bwss-stats
 * messages (every stats-interval, 1 s by default, and at EOS): rate,
 * target, minimum, σ, RTT, window, late packets and the prebuffer the
 * stream needed so far.
 *
 *   bwss-player [--priority=N] [--min-rate=BIT/S] [--weight=W]
 *               [--video-sink=fakesink] [--audio-sink=fakesink] URL
 *
 * Start a download beside it with `bwss-run -- curl -o /dev/null URL2`: the
 * video's target and rate hold while the download takes what is left.
 *
 * What an application embedding the element does:
 *   - source-setup: playbin made its source; if it is a bwsshttpsrc (found
 *     by its factory, as another source may be picked: a file, or
 *     souphttpsrc when ours is demoted), set its properties there, before
 *     it starts.  The BWSS ones may be changed later while playing too.
 *   - the bus: bwss-stats is an element message (docs/element.md,
 *     "Metrics"); the stats property holds the last one.
 */
#include <math.h>
#include <stdio.h>
#include <gst/gst.h>
#include <bwss/bwss.h>

static gchar *opt_video_sink;
static gchar *opt_audio_sink;
static gint opt_priority = G_MININT;     /* unset: the element's default (10) */
static gchar *opt_min_rate;              /* unset: automatic */
static guint64 min_rate_bps;             /* opt_min_rate parsed */
static gdouble opt_weight = NAN;         /* unset: the element's default (1) */

static GOptionEntry entries[] = {
  { "priority", 0, 0, G_OPTION_ARG_INT, &opt_priority, "BWSS priority of the video's flow (-1000..1000)", "N" },
  { "min-rate", 0, 0, G_OPTION_ARG_STRING, &opt_min_rate, "Minimum rate of the video's flow: bit/s, or with k, M, G (default: from the stream's bitrate)", "RATE" },
  { "weight", 0, 0, G_OPTION_ARG_DOUBLE, &opt_weight, "BWSS weight of the video's flow", "W" },
  { "video-sink", 0, 0, G_OPTION_ARG_STRING, &opt_video_sink, "Video sink (e.g. fakesink)", "ELEMENT" },
  { "audio-sink", 0, 0, G_OPTION_ARG_STRING, &opt_audio_sink, "Audio sink (e.g. fakesink)", "ELEMENT" },
  { NULL }
};

/* playbin made its source (in the thread that set it to READY or PAUSED,
 * before the source starts): the BWSS preferences go there. */
static void
on_source_setup (GstElement *playbin, GstElement *source, gpointer data)
{
  GstElementFactory *f = gst_element_get_factory (source);
  if (f == NULL || g_strcmp0 (gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (f)), "bwsshttpsrc") != 0) {
    printf ("source-setup: %s is not bwsshttpsrc, no BWSS preferences\n", G_OBJECT_TYPE_NAME (source));
    return;
  }
  if (opt_priority != G_MININT)
    g_object_set (source, "priority", opt_priority, NULL);
  if (!isnan (opt_weight))
    g_object_set (source, "weight", opt_weight, NULL);
  if (opt_min_rate)
    g_object_set (source, "min-rate", min_rate_bps, NULL);
  gint priority;
  gdouble weight;
  guint64 min;
  g_object_get (source, "priority", &priority, "weight", &weight, "min-rate", &min, NULL);
  printf ("source-setup: bwsshttpsrc priority %d weight %g min-rate %" G_GUINT64_FORMAT " bit/s%s\n",
          priority, weight, min, min ? "" : " (automatic)");
  fflush (stdout);
}

/* A rate in kbit/s, or "-" where the structure says unknown (< 0). */
static const char *
kbit (char *buf, gsize len, double bps)
{
  if (bps < 0)
    g_strlcpy (buf, "-", len);
  else
    g_snprintf (buf, len, "%.0f", bps / 1e3);
  return buf;
}

/* One line per bwss-stats message (its fields: docs/element.md, "Metrics"). */
static void
print_stats (const GstStructure *s)
{
  guint64 bytes = 0, bitrate = 0, rtt = 0;
  double rate = 0, target = -1, sigma = -1, need = -1, late1 = -1, min = 0;
  guint window = 0;
  gboolean registered = FALSE, controlled = FALSE;
  char t[32], sg[32];
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
  gst_structure_get_boolean (s, "registered", &registered);
  gst_structure_get_boolean (s, "controlled", &controlled);
  printf ("bwss-stats: %.1f kB  rate %.0f kbit/s  target %s  min %.0f  sigma %s  bitrate %.0f (%s)  "
          "rtt %.1f ms  window %u B",
          bytes / 1e3, rate / 1e3, kbit (t, sizeof t, target), min / 1e3, kbit (sg, sizeof sg, sigma),
          bitrate / 1e3, from ? from : "none", rtt / 1e6, window);
  if (late1 >= 0)                /* the late metric starts with a known bitrate */
    printf ("  late@1s %.3f  prebuffer %.2f s", late1, need);
  printf ("  %s\n", !registered ? "not registered" : controlled ? "controlled" : "registered");
  fflush (stdout);
}

static int status;

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
      status = 1;
      g_main_loop_quit (loop);
      break;
    }
    case GST_MESSAGE_EOS:
      printf ("end of stream\n");
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
  /* bad preferences are refused before anything plays (the element would
   * only warn and keep its default) */
  double bps = 0;
  if (opt_min_rate && bwss_parse_rate (opt_min_rate, &bps) != 0) {
    fprintf (stderr, "bwss-player: --min-rate: '%s' is not a rate (e.g. 2500000, 2.5M, 800k)\n", opt_min_rate);
    return 2;
  }
  min_rate_bps = (guint64) bps;
  if (opt_priority != G_MININT && (opt_priority < BWSS_PRIORITY_MIN || opt_priority > BWSS_PRIORITY_MAX)) {
    fprintf (stderr, "bwss-player: --priority: %d is outside %d..%d\n", opt_priority,
             BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX);
    return 2;
  }
  if (!isnan (opt_weight) && !(opt_weight >= 0 && opt_weight <= BWSS_WEIGHT_MAX)) {
    fprintf (stderr, "bwss-player: --weight: %g is outside 0..%g\n", opt_weight, BWSS_WEIGHT_MAX);
    return 2;
  }
  GstElement *play = gst_element_factory_make ("playbin", NULL);
  if (play == NULL) {
    fprintf (stderr, "bwss-player: playbin is missing (gstreamer1.0-plugins-base)\n");
    return 1;
  }
  g_object_set (play, "uri", argv[1], NULL);
  g_signal_connect (play, "source-setup", G_CALLBACK (on_source_setup), NULL);
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
  return status;
}

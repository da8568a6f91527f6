/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-lab-player — the lab's adaptive-streaming client: plays a URI (an HLS
 * master playlist) in real time the way a player application does, and
 * writes what the viewer saw as JSON.
 *
 *   bwss-lab-player --duration S --json FILE [--pipeline P] [--min-rate BPS]
 *                   [--priority N] [--weight W] URI
 *
 * --pipeline says how the application is written:
 *   playbin        GStreamer's legacy player (decodebin2: hlsdemux, dashdemux)
 *   playbin3       the newer one (decodebin3: hlsdemux2, dashdemux2, which
 *                  download with their own libsoup session)
 *   uridecodebin   (the default) / uridecodebin3: the same stacks, the
 *                  stream taken as parsed H.264 / MPEG audio, so no decoder
 *                  runs (less CPU on a machine that also forwards packets)
 * The HTTP source is picked by rank (bwsshttpsrc when it is on
 * GST_PLUGIN_PATH, souphttpsrc otherwise); fakesinks sync to the clock, so
 * media is consumed at playback speed.  Buffering is handled as players do:
 * PAUSED below 100 %, PLAYING at 100 %.  A stall is a buffering pause after
 * playback began.
 *
 * Nothing needs setting for bwss: bwsshttpsrc and the bwss tracer learn the
 * variant's minimum themselves.  --min-rate, --priority and --weight, if
 * given, are set on every bwsshttpsrc the pipeline creates (the legacy
 * demuxer makes its own), as an application could.
 *
 * JSON: startup_s (start to first PLAYING), stalls, stall_s (time in
 * buffering pauses after the start), played_s (media position at the end),
 * lag_s (wall time since the start minus media played: every kind of
 * interruption), and fragments: one {t, uri, stream_bytes, download_s} per
 * adaptive-streaming-statistics message (stream_bytes is the demuxer's
 * running total for the stream, not the fragment's size; adaptivedemux2
 * posts none in 1.22), and switches: one {t, uri, bitrate} per variant
 * switch an HLS demuxer of either stack announced.
 */
#include <stdio.h>
#include <string.h>
#include <glib-unix.h>
#include <gst/gst.h>
#include <json-glib/json-glib.h>

static gdouble opt_duration = 60.0;
static gchar *opt_json;
static gint64 opt_min_rate = -1;
static gint opt_priority = G_MININT;
static gdouble opt_weight = -1.0;
static gchar *opt_pipeline;

static GOptionEntry entries[] = {
  { "duration", 0, 0, G_OPTION_ARG_DOUBLE, &opt_duration, "Stop after this many seconds (default 60)", "S" },
  { "json", 0, 0, G_OPTION_ARG_FILENAME, &opt_json, "Write the results here (default: stdout)", "FILE" },
  { "min-rate", 0, 0, G_OPTION_ARG_INT64, &opt_min_rate, "min-rate of every bwsshttpsrc (bit/s)", "BPS" },
  { "priority", 0, 0, G_OPTION_ARG_INT, &opt_priority, "priority of every bwsshttpsrc", "N" },
  { "weight", 0, 0, G_OPTION_ARG_DOUBLE, &opt_weight, "weight of every bwsshttpsrc", "W" },
  { "pipeline", 0, 0, G_OPTION_ARG_STRING, &opt_pipeline,
    "playbin, playbin3, uridecodebin (default) or uridecodebin3", "P" },
  { NULL }
};

typedef struct {
  GstElement *pipeline;
  GMainLoop  *loop;
  gint64      t_start;          /* µs, monotonic */
  gint64      t_playing;        /* first PLAYING, 0 = not yet */
  gint64      stall_since;      /* 0 = not stalled */
  gint64      stall_us;
  guint       stalls;
  gboolean    buffering;
  gboolean    error;
  JsonBuilder *fragments;
  JsonBuilder *switches;
} Player;

static double
since_start (Player *pl, gint64 t)
{
  return (t - pl->t_start) / 1e6;
}

static void
on_pad_added (GstElement *dec, GstPad *pad, gpointer data)
{
  Player *pl = data;
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  g_object_set (sink, "sync", TRUE, NULL);
  gst_bin_add (GST_BIN (pl->pipeline), sink);
  gst_element_sync_state_with_parent (sink);
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  if (gst_pad_link (pad, sinkpad) != GST_PAD_LINK_OK)
    g_printerr ("bwss-lab-player: cannot link a %s pad\n", GST_PAD_NAME (pad));
  gst_object_unref (sinkpad);
}

static void
on_deep_element_added (GstBin *bin, GstBin *sub, GstElement *el, gpointer data)
{
  GstElementFactory *f = gst_element_get_factory (el);
  if (f == NULL || g_strcmp0 (GST_OBJECT_NAME (f), "bwsshttpsrc") != 0)
    return;
  if (opt_min_rate >= 0)
    g_object_set (el, "min-rate", (guint64) opt_min_rate, NULL);
  if (opt_priority != G_MININT)
    g_object_set (el, "priority", opt_priority, NULL);
  if (opt_weight >= 0)
    g_object_set (el, "weight", opt_weight, NULL);
}

static void
on_buffering (Player *pl, gint percent)
{
  gint64 now = g_get_monotonic_time ();
  if (percent < 100 && !pl->buffering) {
    pl->buffering = TRUE;
    gst_element_set_state (pl->pipeline, GST_STATE_PAUSED);
    if (pl->t_playing) {
      pl->stalls++;
      pl->stall_since = now;
      g_printerr ("bwss-lab-player: stall %u at %.1f s\n", pl->stalls, since_start (pl, now));
    }
  } else if (percent >= 100 && pl->buffering) {
    pl->buffering = FALSE;
    if (pl->stall_since) {
      pl->stall_us += now - pl->stall_since;
      pl->stall_since = 0;
    }
    gst_element_set_state (pl->pipeline, GST_STATE_PLAYING);
  }
}

static void
on_fragment (Player *pl, const GstStructure *s)
{
  const gchar *uri = gst_structure_get_string (s, "uri");
  guint64 size = 0, dl = 0;
  gint bitrate = 0;
  if (uri && gst_structure_get_int (s, "bitrate", &bitrate)) {
    json_builder_begin_object (pl->switches);
    json_builder_set_member_name (pl->switches, "t");
    json_builder_add_double_value (pl->switches, since_start (pl, g_get_monotonic_time ()));
    json_builder_set_member_name (pl->switches, "uri");
    json_builder_add_string_value (pl->switches, uri);
    json_builder_set_member_name (pl->switches, "bitrate");
    json_builder_add_int_value (pl->switches, bitrate);
    json_builder_end_object (pl->switches);
    return;
  }
  if (uri == NULL || !gst_structure_get_uint64 (s, "fragment-size", &size))
    return;
  gst_structure_get_uint64 (s, "fragment-download-time", &dl);
  json_builder_begin_object (pl->fragments);
  json_builder_set_member_name (pl->fragments, "t");
  json_builder_add_double_value (pl->fragments, since_start (pl, g_get_monotonic_time ()));
  json_builder_set_member_name (pl->fragments, "uri");
  json_builder_add_string_value (pl->fragments, uri);
  json_builder_set_member_name (pl->fragments, "stream_bytes");
  json_builder_add_int_value (pl->fragments, (gint64) size);
  json_builder_set_member_name (pl->fragments, "download_s");
  json_builder_add_double_value (pl->fragments, dl / 1e9);
  json_builder_end_object (pl->fragments);
}

static gboolean
on_message (GstBus *bus, GstMessage *msg, gpointer data)
{
  Player *pl = data;
  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_BUFFERING: {
      gint percent = 0;
      gst_message_parse_buffering (msg, &percent);
      on_buffering (pl, percent);
      break;
    }
    case GST_MESSAGE_STATE_CHANGED:
      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (pl->pipeline) && !pl->t_playing) {
        GstState st;
        gst_message_parse_state_changed (msg, NULL, &st, NULL);
        if (st == GST_STATE_PLAYING)
          pl->t_playing = g_get_monotonic_time ();
      }
      break;
    case GST_MESSAGE_ELEMENT:
      if (gst_message_has_name (msg, "adaptive-streaming-statistics"))
        on_fragment (pl, gst_message_get_structure (msg));
      break;
    case GST_MESSAGE_ERROR: {
      g_autoptr (GError) err = NULL;
      g_autofree gchar *dbg = NULL;
      gst_message_parse_error (msg, &err, &dbg);
      g_printerr ("bwss-lab-player: %s (%s)\n", err->message, dbg ? dbg : "");
      pl->error = TRUE;
      g_main_loop_quit (pl->loop);
      break;
    }
    case GST_MESSAGE_EOS:
      g_main_loop_quit (pl->loop);
      break;
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_stop (gpointer data)
{
  g_main_loop_quit (((Player *) data)->loop);
  return G_SOURCE_REMOVE;
}

static void
add_double (JsonBuilder *b, const char *name, double v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_double_value (b, v);
}

static gboolean
write_results (Player *pl, GError **error)
{
  gint64 now = g_get_monotonic_time ();
  gint64 pos = 0;
  gst_element_query_position (pl->pipeline, GST_FORMAT_TIME, &pos);
  if (pl->stall_since)
    pl->stall_us += now - pl->stall_since;
  double played = pos > 0 ? pos / 1e9 : 0.0;
  double since_playing = pl->t_playing ? (now - pl->t_playing) / 1e6 : 0.0;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_double (b, "startup_s", pl->t_playing ? since_start (pl, pl->t_playing) : -1.0);
  json_builder_set_member_name (b, "stalls");
  json_builder_add_int_value (b, pl->stalls);
  add_double (b, "stall_s", pl->stall_us / 1e6);
  add_double (b, "played_s", played);
  add_double (b, "lag_s", pl->t_playing ? MAX (0.0, since_playing - played) : -1.0);
  json_builder_set_member_name (b, "error");
  json_builder_add_boolean_value (b, pl->error);
  json_builder_set_member_name (b, "fragments");
  json_builder_end_array (pl->fragments);
  json_builder_add_value (b, json_builder_get_root (pl->fragments));
  json_builder_set_member_name (b, "switches");
  json_builder_end_array (pl->switches);
  json_builder_add_value (b, json_builder_get_root (pl->switches));
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) g = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (g, root);
  json_generator_set_pretty (g, TRUE);
  if (opt_json == NULL) {
    g_autofree gchar *text = json_generator_to_data (g, NULL);
    puts (text);
    return TRUE;
  }
  return json_generator_to_file (g, opt_json, error);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("URI — play an (adaptive) stream in real time, report stalls");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("bwss-lab-player: %s\n", err->message);
    return 2;
  }
  if (argc != 2 || !gst_uri_is_valid (argv[1])) {
    g_printerr ("bwss-lab-player: exactly one URI expected\n");
    return 2;
  }
  if (!(opt_duration > 0.0 && opt_duration < 1e6)) {
    g_printerr ("bwss-lab-player: --duration must be in (0, 1e6) seconds\n");
    return 2;
  }
  const char *kind = opt_pipeline ? opt_pipeline : "uridecodebin";
  gboolean player = strcmp (kind, "playbin") == 0 || strcmp (kind, "playbin3") == 0;
  if (!player && strcmp (kind, "uridecodebin") != 0 && strcmp (kind, "uridecodebin3") != 0) {
    g_printerr ("bwss-lab-player: --pipeline: playbin, playbin3, uridecodebin or uridecodebin3\n");
    return 2;
  }
  Player pl = { 0 };
  pl.loop = g_main_loop_new (NULL, FALSE);
  pl.fragments = json_builder_new ();
  json_builder_begin_array (pl.fragments);
  pl.switches = json_builder_new ();
  json_builder_begin_array (pl.switches);
  GstElement *dec = gst_element_factory_make (kind, NULL);
  if (dec == NULL) {
    g_printerr ("bwss-lab-player: %s is missing (gstreamer1.0-plugins-base)\n", kind);
    return 1;
  }
  if (player) {
    /* the application as written: a player with its sinks */
    GstElement *vsink = gst_element_factory_make ("fakesink", NULL);
    GstElement *asink = gst_element_factory_make ("fakesink", NULL);
    g_object_set (vsink, "sync", TRUE, NULL);
    g_object_set (asink, "sync", TRUE, NULL);
    g_object_set (dec, "uri", argv[1], "video-sink", vsink, "audio-sink", asink, NULL);
    pl.pipeline = dec;
  } else {
    pl.pipeline = gst_pipeline_new ("player");
    GstCaps *caps = gst_caps_from_string ("video/x-h264; audio/mpeg");
    g_object_set (dec, "uri", argv[1], "caps", caps, NULL);
    gst_caps_unref (caps);
    gst_bin_add (GST_BIN (pl.pipeline), dec);
    g_signal_connect (dec, "pad-added", G_CALLBACK (on_pad_added), &pl);
  }
  g_signal_connect (pl.pipeline, "deep-element-added", G_CALLBACK (on_deep_element_added), &pl);
  GstBus *bus = gst_element_get_bus (pl.pipeline);
  gst_bus_add_watch (bus, on_message, &pl);
  gst_object_unref (bus);
  g_timeout_add ((guint) (opt_duration * 1000), on_stop, &pl);
  g_unix_signal_add (SIGINT, on_stop, &pl);
  g_unix_signal_add (SIGTERM, on_stop, &pl);
  pl.t_start = g_get_monotonic_time ();
  if (gst_element_set_state (pl.pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    g_printerr ("bwss-lab-player: cannot start the pipeline\n");
    return 1;
  }
  g_main_loop_run (pl.loop);
  int rc = pl.error ? 1 : 0;
  if (!write_results (&pl, &err)) {
    g_printerr ("bwss-lab-player: %s\n", err->message);
    rc = 1;
  }
  gst_element_set_state (pl.pipeline, GST_STATE_NULL);
  gst_object_unref (pl.pipeline);
  g_object_unref (pl.fragments);
  g_object_unref (pl.switches);
  g_main_loop_unref (pl.loop);
  return rc;
}

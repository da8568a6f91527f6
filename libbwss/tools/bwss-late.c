/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-late — late packets and required prebuffer of a recorded stream.
 *
 *   bwss-late --rate 496k [--packet-bytes 1000] [--prebuffer 0.5,1,2,4,8]
 *             [--end SECONDS] [--eos] TRACE
 *
 * TRACE has one line per read: "<t_seconds> <bytes>" (seconds on any clock,
 * bytes read by that call); "-" reads standard input.  Prints one JSON
 * object: {"late_fraction": {"0.5": f, …}, "required_prebuffer_s": x,
 * "packets": n, "bytes": b, "t0": t, "end": t}.  The metric is the one of
 * bwss/late.h, the same the GStreamer element reports.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <bwss/bwss.h>

static gchar *opt_rate;
static gint opt_packet_bytes = BWSS_LATE_DEFAULT_PACKET_BYTES;
static gchar *opt_prebuffers;
static gdouble opt_end = NAN;
static gboolean opt_eos;

static GOptionEntry entries[] = {
  { "rate", 'r', 0, G_OPTION_ARG_STRING, &opt_rate,
    "Stream rate in bit/s, with k/M/G (required)", "RATE" },
  { "packet-bytes", 'p', 0, G_OPTION_ARG_INT, &opt_packet_bytes,
    "Packet size in bytes (default 1000)", "BYTES" },
  { "prebuffer", 'b', 0, G_OPTION_ARG_STRING, &opt_prebuffers,
    "Comma-separated prebuffers in seconds (default 0.5,1,2,4,8)", "LIST" },
  { "end", 'e', 0, G_OPTION_ARG_DOUBLE, &opt_end,
    "Observation end on the trace's clock (default: the last line)", "SECONDS" },
  { "eos", 0, 0, G_OPTION_ARG_NONE, &opt_eos,
    "The stream was complete: expect no packet after the last one", NULL },
  { NULL }
};

/* Parses "0.5,1,2" into @out; returns the count or -1 on a bad list. */
static int
parse_prebuffers (const char *text, double *out, size_t max)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  size_t n = 0;
  for (char **p = parts; *p; p++) {
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod (*p, &end);
    if (errno || end == *p || *end != '\0' || !isfinite (v) || v < 0 || n == max)
      return -1;
    out[n++] = v;
  }
  return n ? (int) n : -1;
}

static void
usage_error (GOptionContext *ctx, const char *msg)
{
  g_printerr ("bwss-late: %s\n", msg);
  (void) ctx;
  exit (2);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE");
  g_option_context_set_summary (ctx,
      "Late packets and required prebuffer of a recorded stream (paper Fig. 7c).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    usage_error (ctx, error->message);
  if (argc != 2)
    usage_error (ctx, "exactly one TRACE file is needed (\"-\" for standard input)");

  double rate;
  if (opt_rate == NULL)
    usage_error (ctx, "--rate is required");
  if (bwss_parse_rate (opt_rate, &rate) != BWSS_OK || rate <= 0)
    usage_error (ctx, "--rate: not a positive rate (e.g. 496k, 2.5M)");
  if (opt_packet_bytes <= 0)
    usage_error (ctx, "--packet-bytes: must be a positive number of bytes");
  double th[BWSS_LATE_MAX_THRESHOLDS];
  int n_th = 0;
  if (opt_prebuffers) {
    n_th = parse_prebuffers (opt_prebuffers, th, BWSS_LATE_MAX_THRESHOLDS);
    if (n_th < 0)
      usage_error (ctx, "--prebuffer: expected up to 16 comma-separated seconds >= 0");
  }

  BwssLate late;
  if (bwss_late_init (&late, rate, (uint32_t) opt_packet_bytes, n_th ? th : NULL, n_th) != 0)
    usage_error (ctx, "invalid metric parameters");

  FILE *in = g_strcmp0 (argv[1], "-") == 0 ? stdin : fopen (argv[1], "r");
  if (in == NULL) {
    g_printerr ("bwss-late: %s: %s\n", argv[1], g_strerror (errno));
    return 1;
  }
  char line[256];
  unsigned lineno = 0;
  double t0 = NAN, last = NAN;
  uint64_t bytes = 0;
  while (fgets (line, sizeof line, in)) {
    lineno++;
    double t;
    unsigned long long b;
    char extra;
    if (line[0] == '#' || line[0] == '\n')
      continue;
    if (sscanf (line, "%lf %llu %c", &t, &b, &extra) != 2 || !isfinite (t) || t < 0) {
      g_printerr ("bwss-late: %s:%u: expected \"<t_seconds> <bytes>\"\n", argv[1], lineno);
      return 1;
    }
    if (isnan (t0))
      t0 = t;
    if (!isnan (last) && t < last) {
      g_printerr ("bwss-late: %s:%u: time goes backwards\n", argv[1], lineno);
      return 1;
    }
    last = t;
    bytes += b;
    /* times relative to the first line, in µs (a trace of days still fits) */
    bwss_late_add (&late, (uint64_t) llround ((t - t0) * 1e6), bytes);
  }
  if (in != stdin)
    fclose (in);
  if (isnan (t0)) {
    g_printerr ("bwss-late: %s: empty trace\n", argv[1]);
    return 1;
  }
  double end = isnan (opt_end) ? last : opt_end;
  if (end < t0)
    usage_error (ctx, "--end is before the first line of the trace");
  if (opt_eos)
    bwss_late_finish (&late);
  uint64_t end_us = (uint64_t) llround ((end - t0) * 1e6);
  /* t0 of the metric is the first line that carried bytes */
  double first_byte_s = t0 + (double) late.t0_us / 1e6;

  g_autoptr (JsonBuilder) jb = json_builder_new ();
  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "late_fraction");
  json_builder_begin_object (jb);
  for (size_t i = 0; i < late.n_thresholds; i++) {
    char key[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd (key, sizeof key, "%g", late.thresholds_s[i]);
    json_builder_set_member_name (jb, key);
    json_builder_add_double_value (jb, bwss_late_fraction (&late, i, end_us));
  }
  json_builder_end_object (jb);
  json_builder_set_member_name (jb, "required_prebuffer_s");
  json_builder_add_double_value (jb, bwss_late_required_prebuffer (&late, end_us));
  json_builder_set_member_name (jb, "packets");
  json_builder_add_int_value (jb, (gint64) late.arrived);
  json_builder_set_member_name (jb, "bytes");
  json_builder_add_int_value (jb, (gint64) late.bytes);
  json_builder_set_member_name (jb, "t0");
  json_builder_add_double_value (jb, first_byte_s);
  json_builder_set_member_name (jb, "end");
  json_builder_add_double_value (jb, end);
  json_builder_end_object (jb);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (jb);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  g_print ("%s\n", text);
  return 0;
}

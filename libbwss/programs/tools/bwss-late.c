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
 * bwss/late.h, the same the GStreamer element reports; the trace format and
 * the report are late-trace.c.  Numbers on the command line and in the
 * trace are decimal and bounded, so nothing overflows or loops long.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib.h>
#include <bwss/bwss.h>
#include "late-trace.h"

static gchar *opt_rate;
static gchar *opt_packet_bytes;
static gchar *opt_prebuffers;
static gchar *opt_end;
static gboolean opt_eos;

static GOptionEntry entries[] = {
  { "rate", 'r', 0, G_OPTION_ARG_STRING, &opt_rate,
    "Stream rate in bit/s, with k/M/G (required)", "RATE" },
  { "packet-bytes", 'p', 0, G_OPTION_ARG_STRING, &opt_packet_bytes,
    "Packet size in bytes (default 1000)", "BYTES" },
  { "prebuffer", 'b', 0, G_OPTION_ARG_STRING, &opt_prebuffers,
    "Comma-separated prebuffers in seconds (default 0.5,1,2,4,8)", "LIST" },
  { "end", 'e', 0, G_OPTION_ARG_STRING, &opt_end,
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
    if (n == max || bwss_parse_decimal (*p, LATE_TRACE_MAX_TIME_S, &out[n]) != 0)
      return -1;
    n++;
  }
  return n ? (int) n : -1;
}

G_GNUC_NORETURN static void
usage_error (const char *msg)
{
  g_printerr ("bwss-late: %s\n", msg);
  exit (2);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE");
  g_option_context_set_summary (ctx,
      "Late packets and required prebuffer of a recorded stream (paper Fig. 7c).");
  g_option_context_set_description (ctx,
      "TRACE: one line per read, \"<t_seconds> <bytes>\" (decimal numbers; '#' comments).\n"
      "Exit status: 0; 1 for an unreadable or bad trace; 2 for a usage error.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    usage_error (error->message);
  if (argc != 2)
    usage_error ("exactly one TRACE file is needed (\"-\" for standard input)");

  double rate;
  if (opt_rate == NULL)
    usage_error ("--rate is required");
  if (bwss_parse_rate (opt_rate, &rate) != BWSS_OK || rate <= 0)
    usage_error ("--rate: not a positive rate (e.g. 496k, 2.5M)");
  uint64_t packet_bytes = BWSS_LATE_DEFAULT_PACKET_BYTES;
  if (opt_packet_bytes && (bwss_parse_count (opt_packet_bytes, UINT32_MAX, &packet_bytes) != 0
                           || packet_bytes == 0))
    usage_error ("--packet-bytes: must be a decimal number of bytes from 1 to 4294967295");
  double th[BWSS_LATE_MAX_THRESHOLDS];
  int n_th = 0;
  if (opt_prebuffers) {
    n_th = parse_prebuffers (opt_prebuffers, th, BWSS_LATE_MAX_THRESHOLDS);
    if (n_th < 0)
      usage_error ("--prebuffer: expected up to 16 comma-separated decimal seconds");
  }
  double end = NAN;
  if (opt_end && bwss_parse_decimal (opt_end, LATE_TRACE_MAX_TIME_S, &end) != 0)
    usage_error ("--end: not a decimal number of seconds up to 1e12");

  BwssLate late;
  if (bwss_late_init (&late, rate, (uint32_t) packet_bytes, n_th ? th : NULL, n_th) != 0)
    usage_error ("invalid metric parameters");

  FILE *in = g_strcmp0 (argv[1], "-") == 0 ? stdin : fopen (argv[1], "r");
  if (in == NULL) {
    g_printerr ("bwss-late: %s: %s\n", argv[1], g_strerror (errno));
    return 1;
  }
  LateTrace tr;
  late_trace_init (&tr, &late);
  gboolean ok = late_trace_read (&tr, in, argv[1], &error);
  if (in != stdin)
    fclose (in);
  if (!ok) {
    g_printerr ("bwss-late: %s\n", error->message);
    return 1;
  }
  if (isnan (tr.t0)) {
    g_printerr ("bwss-late: %s: empty trace\n", argv[1]);
    return 1;
  }
  if (isnan (end))
    end = tr.last;
  if (end < tr.t0)
    usage_error ("--end is before the first line of the trace");
  if (opt_eos)
    bwss_late_finish (&late);
  g_autofree char *text = late_trace_report (&tr, end);
  g_print ("%s\n", text);
  return 0;
}

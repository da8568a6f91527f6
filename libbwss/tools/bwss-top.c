/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-top — the user's BWSS domain, like ss(8)/nethogs: every flow with its
 * owner, preferences, target, measured rate, RTT and window, and the
 * controller's σ and phase.
 *
 *   bwss-top [--once] [--json] [--interval SECONDS] [--domain NAME]
 *   bwss-top --suspend | --resume [--domain NAME]
 *
 * It never creates the domain nor takes the controller role; --suspend
 * switches sharing off for the whole domain (every window back to the
 * kernel's, flows stay registered) and --resume switches it on again.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <bwss/domain.h>

#define MAX_ROWS 256

static gboolean opt_once;
static gboolean opt_json;
static gdouble opt_interval = 1.0;
static gchar *opt_domain;
static gboolean opt_suspend;
static gboolean opt_resume;

static GOptionEntry entries[] = {
  { "once", '1', 0, G_OPTION_ARG_NONE, &opt_once, "Print one snapshot and exit", NULL },
  { "json", 'j', 0, G_OPTION_ARG_NONE, &opt_json, "Machine-readable output (one JSON object per snapshot)", NULL },
  { "interval", 'i', 0, G_OPTION_ARG_DOUBLE, &opt_interval, "Seconds between snapshots (default 1)", "SECONDS" },
  { "domain", 0, 0, G_OPTION_ARG_STRING, &opt_domain, "Domain name (default $BWSS_DOMAIN, else per user)", "NAME" },
  { "suspend", 0, 0, G_OPTION_ARG_NONE, &opt_suspend, "Switch sharing off (windows back to the kernel's) and exit", NULL },
  { "resume", 0, 0, G_OPTION_ARG_NONE, &opt_resume, "Switch sharing on again and exit", NULL },
  { NULL }
};

static void
add_rate (JsonBuilder *b, const char *name, double bps)
{
  json_builder_set_member_name (b, name);
  if (bps < 0 || !isfinite (bps))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, bps);
}

static void
print_json (const BwssDomainStats *ds, const BwssFlowInfo *rows, size_t n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "controller_pid");
  json_builder_add_int_value (b, ds->controller_pid);
  json_builder_set_member_name (b, "phase");
  json_builder_add_string_value (b, ds->controller_pid ? bwss_phase_name (ds->phase) : "none");
  add_rate (b, "sigma_bps", ds->controller_pid ? ds->sigma_bps : -1);
  json_builder_set_member_name (b, "loop");
  json_builder_add_string_value (b, bwss_loop_name (ds->loop));
  json_builder_set_member_name (b, "queue_delay_us");
  if (ds->controller_pid && ds->queue_us >= 0)
    json_builder_add_double_value (b, ds->queue_us);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "queue_target_us");
  if (ds->controller_pid && ds->loop == BWSS_LOOP_DELAY)
    json_builder_add_double_value (b, ds->queue_target_us);
  else
    json_builder_add_null_value (b);
  add_rate (b, "aggregate_bps", ds->controller_pid ? ds->aggregate_bps : -1);
  json_builder_set_member_name (b, "suspended");
  json_builder_add_boolean_value (b, ds->suspended);
  json_builder_set_member_name (b, "flows");
  json_builder_begin_array (b);
  for (size_t i = 0; i < n; i++) {
    const BwssFlowInfo *f = &rows[i];
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "pid");
    json_builder_add_int_value (b, f->pid);
    json_builder_set_member_name (b, "command");
    json_builder_add_string_value (b, f->comm);
    json_builder_set_member_name (b, "local");
    json_builder_add_string_value (b, f->local);
    json_builder_set_member_name (b, "remote");
    json_builder_add_string_value (b, f->remote);
    json_builder_set_member_name (b, "priority");
    json_builder_add_int_value (b, f->stats.prefs.priority);
    json_builder_set_member_name (b, "min_rate_bps");
    json_builder_add_double_value (b, f->stats.prefs.min_rate_bps);
    json_builder_set_member_name (b, "weight");
    json_builder_add_double_value (b, f->stats.prefs.weight);
    add_rate (b, "target_bps", f->stats.target_bps);
    add_rate (b, "rate_bps", f->stats.rate_bps);
    json_builder_set_member_name (b, "rtt_us");
    json_builder_add_int_value (b, f->stats.rtt_us);
    json_builder_set_member_name (b, "base_rtt_us");
    json_builder_add_int_value (b, f->stats.base_rtt_us);
    json_builder_set_member_name (b, "window_bytes");
    json_builder_add_int_value (b, f->stats.window_bytes);
    json_builder_set_member_name (b, "bytes_received");
    json_builder_add_int_value (b, (gint64) f->stats.bytes_received);
    json_builder_set_member_name (b, "controlled");
    json_builder_add_boolean_value (b, f->stats.controlled);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
fmt_rate (char *buf, size_t len, double bps)
{
  if (bps < 0 || !isfinite (bps))
    g_snprintf (buf, len, "-");
  else if (bps >= 1e6)
    g_snprintf (buf, len, "%.2fM", bps / 1e6);
  else
    g_snprintf (buf, len, "%.0fk", bps / 1e3);
}

static void
print_table (const BwssDomainStats *ds, const BwssFlowInfo *rows, size_t n)
{
  char sigma[32], agg[32];
  fmt_rate (sigma, sizeof sigma, ds->controller_pid ? ds->sigma_bps : -1);
  fmt_rate (agg, sizeof agg, ds->controller_pid ? ds->aggregate_bps : -1);
  if (ds->suspended)
    printf ("sharing suspended (bwss-top --resume)  flows %u\n", ds->n_flows);
  else if (ds->controller_pid && ds->loop == BWSS_LOOP_DELAY && ds->queue_us >= 0)
    printf ("controller %d  loop delay  phase %s  sigma %s  aggregate %s  queue %.1f/%.1fms  flows %u\n",
            ds->controller_pid, bwss_phase_name (ds->phase), sigma, agg, ds->queue_us / 1000.0,
            ds->queue_target_us / 1000.0, ds->n_flows);
  else if (ds->controller_pid)
    printf ("controller %d  loop %s  phase %s  sigma %s  aggregate %s  flows %u\n", ds->controller_pid,
            bwss_loop_name (ds->loop), bwss_phase_name (ds->phase), sigma, agg, ds->n_flows);
  else
    printf ("no controller (windows are the kernel's)  flows %u\n", ds->n_flows);
  printf ("%7s %-12s %-22s %-22s %4s %8s %6s %8s %8s %7s %7s %8s\n", "PID", "COMMAND", "LOCAL",
          "REMOTE", "PRIO", "MIN", "WEIGHT", "TARGET", "RATE", "RTT", "BASE", "WINDOW");
  for (size_t i = 0; i < n; i++) {
    const BwssFlowInfo *f = &rows[i];
    char min[32], target[32], rate[32], win[32];
    fmt_rate (min, sizeof min, f->stats.prefs.min_rate_bps);
    fmt_rate (target, sizeof target, f->stats.target_bps);
    fmt_rate (rate, sizeof rate, f->stats.rate_bps);
    if (f->stats.window_bytes)
      g_snprintf (win, sizeof win, "%u", f->stats.window_bytes);
    else
      g_snprintf (win, sizeof win, "kernel");
    printf ("%7d %-12.12s %-22.22s %-22.22s %4d %8s %6.3g %8s %8s %5.1fms %5.1fms %8s\n", f->pid,
            f->comm, f->local, f->remote, f->stats.prefs.priority, min, f->stats.prefs.weight, target,
            rate, f->stats.rtt_us / 1000.0, f->stats.base_rtt_us / 1000.0, win);
  }
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx, "Show the flows of the user's BWSS domain.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    fprintf (stderr, "bwss-top: %s\n", error->message);
    return 2;
  }
  if (argc > 1) {
    fprintf (stderr, "bwss-top: unexpected argument '%s'\n", argv[1]);
    return 2;
  }
  if (!isfinite (opt_interval) || opt_interval < 0.05 || opt_interval > 3600) {
    fprintf (stderr, "bwss-top: --interval: must be between 0.05 and 3600 seconds\n");
    return 2;
  }
  if (opt_suspend && opt_resume) {
    fprintf (stderr, "bwss-top: --suspend and --resume exclude each other\n");
    return 2;
  }
  BwssDomain *d = NULL;
  int err = bwss_domain_open (opt_domain, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d);
  if (err == BWSS_ENOENT) {
    fprintf (stderr, "bwss-top: no domain yet (no process has joined one)\n");
    return 1;
  }
  if (err) {
    fprintf (stderr, "bwss-top: cannot open the domain: %s\n", bwss_strerror (err));
    return 1;
  }
  if (opt_suspend || opt_resume) {
    err = bwss_domain_set_suspended (d, opt_suspend);
    bwss_domain_close (d);
    if (err) {
      fprintf (stderr, "bwss-top: %s\n", bwss_strerror (err));
      return 1;
    }
    printf ("sharing %s\n", opt_suspend ? "suspended" : "resumed");
    return 0;
  }
  static BwssFlowInfo rows[MAX_ROWS];
  for (;;) {
    BwssDomainStats ds;
    size_t n = 0;
    if (bwss_domain_get_stats (d, &ds) != 0 || bwss_domain_list_flows (d, rows, MAX_ROWS, &n) != 0) {
      fprintf (stderr, "bwss-top: the domain segment cannot be read\n");
      bwss_domain_close (d);
      return 1;
    }
    if (opt_json)
      print_json (&ds, rows, n);
    else
      print_table (&ds, rows, n);
    if (opt_once)
      break;
    if (!opt_json)
      printf ("\n");
    g_usleep ((gulong) (opt_interval * 1e6));
  }
  bwss_domain_close (d);
  return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-top — the user's BWSS domain, like ss(8)/nethogs: every flow with its
 * owner, preferences, group (whose flows share one share: a process, a
 * unit, or the flow alone), target, measured rate, RTT and window, and the
 * controller's σ and phase.
 *
 *   bwss-top [--once] [--json] [--interval SECONDS] [--domain NAME]
 *   bwss-top --suspend | --resume [--domain NAME]
 *   bwss-top --paths [--domain NAME]
 *   bwss-top --check [--domain NAME]
 *
 * On a terminal the view is redrawn in place, one screen (the verdict line
 * first: is the video safe?); piped, it appends plain snapshots, one blank
 * line apart; --json prints one object a snapshot.  --check says whether
 * protection is on (top-check.h): exit status 0 if it is, 1 if not, with
 * the command that turns it on.
 *
 * It never creates the domain nor takes the controller role; --suspend
 * switches sharing off for the whole domain (every window back to the
 * kernel's, flows stay registered) and --resume switches it on again.
 *
 * It never waits for the domain's lock more than BUSY_WAIT_US: a domain
 * whose lock stays taken (a participant stopped inside it) is reported as
 * busy, exit status 3.  Exit status 1: no domain or an unreadable one; 2: a
 * usage error (also a bad --domain or $BWSS_DOMAIN, an empty one included).
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <bwss/domain.h>
#include "tool-domain.h"
#include "tool-file.h"
#include "tool-json.h"
#include "top-check.h"
#include "top-verdict.h"
#include "sys.h"

#define MAX_ROWS BWSS_DOMAIN_MAX_FLOWS
/* How long a snapshot may wait for a busy domain lock, µs. */
#define BUSY_WAIT_US (1 * G_USEC_PER_SEC)
#define EXIT_BUSY 3
/* bwssd's status file: at most this big (bwssd lists at most
 * ADOPT_STATUS_MAX_REFUSED sockets, a few hundred bytes each), nested this
 * deep (it nests 3). */
#define STATUS_MAX (1024 * 1024)
#define STATUS_DEPTH 8

static gboolean opt_once;
static gboolean opt_json;
static gchar *opt_interval;
static gchar *opt_domain;
static gboolean opt_suspend;
static gboolean opt_resume;
static gboolean opt_paths;
static gboolean opt_check;

static GOptionEntry entries[] = {
  { "once", '1', 0, G_OPTION_ARG_NONE, &opt_once, "Print one snapshot and exit", NULL },
  { "json", 'j', 0, G_OPTION_ARG_NONE, &opt_json, "Machine-readable output (one JSON object per snapshot)", NULL },
  { "interval", 'i', 0, G_OPTION_ARG_STRING, &opt_interval, "Seconds between snapshots, 0.05 to 3600 (default 1)", "SECONDS" },
  { "domain", 0, 0, G_OPTION_ARG_STRING, &opt_domain, "Domain name (default $BWSS_DOMAIN, else per user)", "NAME" },
  { "suspend", 0, 0, G_OPTION_ARG_NONE, &opt_suspend, "Switch sharing off (windows back to the kernel's) and exit", NULL },
  { "resume", 0, 0, G_OPTION_ARG_NONE, &opt_resume, "Switch sharing on again and exit", NULL },
  { "paths", 0, 0, G_OPTION_ARG_NONE, &opt_paths, "Print where the domain's files are (runtime-dir, segment, bwssd-status, bwssd-lock) and exit", NULL },
  { "check", 0, 0, G_OPTION_ARG_NONE, &opt_check, "Say whether protection is on (bwssd, adoption, bwss-sockd, the plugin) and the command that turns it on; exit 0 if on, 1 if not", NULL },
  { NULL }
};

/* Adds member @name: @bps, or null while unknown (negative). */
static void
add_rate (JsonBuilder *b, const char *name, double bps)
{
  json_builder_set_member_name (b, name);
  tool_json_add_number (b, bps < 0 ? NAN : bps);
}

static void
add_number (JsonBuilder *b, const char *name, double v)
{
  json_builder_set_member_name (b, name);
  tool_json_add_number (b, v);
}

static void
add_string (JsonBuilder *b, const char *name, const char *s, size_t max)
{
  json_builder_set_member_name (b, name);
  tool_json_add_string (b, s, max);
}

/* Returns member @name of @o if it is a string, else "?". */
static const char *
str_member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  const char *s = n && json_node_get_value_type (n) == G_TYPE_STRING ? json_node_get_string (n) : NULL;
  return s ? s : "?";
}

/* Returns member @name of @o if it is an integer, else 0. */
static gint64
int_member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && json_node_get_value_type (n) == G_TYPE_INT64 ? json_node_get_int (n) : 0;
}

/* Returns the "not_adopted" array of bwssd's status @o, NULL if none. */
static JsonArray *
not_adopted (JsonObject *o)
{
  JsonNode *n = json_object_get_member (o, "not_adopted");
  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

/* Returns TRUE if @pid is a live process of this user named bwssd. */
static gboolean
is_users_bwssd (gint64 pid)
{
  if (pid <= 0 || pid > G_MAXINT || kill ((pid_t) pid, 0) != 0)
    return FALSE;
  uid_t owner;
  char comm[64];
  if (proc_owner ((pid_t) pid, &owner) != 0 || owner != geteuid ())
    return FALSE;
  return proc_comm ((pid_t) pid, comm, sizeof comm) == 0 && g_str_has_prefix (comm, "bwssd");
}

/* Says once on stderr that bwssd's status file is ignored, and why. */
static void
ignore_status (const char *why)
{
  static gboolean told;
  if (!told)
    fprintf (stderr, "bwss-top: ignoring bwssd's status file: %s\n", why);
  told = TRUE;
}

/* Returns bwssd's status for the domain (adopter.h), or NULL if no bwssd
 * runs for it.  The file is read as tool_file_read() reads (no link
 * followed, no FIFO waited for, this user's regular file, at most
 * STATUS_MAX bytes) and parsed with its nesting bounded: anything else is
 * "no bwssd", said once on stderr. */
static JsonObject *
read_bwssd_status (void)
{
  g_autofree char *path = tool_domain_bwssd_status (opt_domain);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;
  if (path == NULL)
    return NULL;
  if (!tool_file_read (path, STATUS_MAX, TRUE, &text, &len, &error)) {
    if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      ignore_status (error->message);
    return NULL;
  }
  g_autoptr (JsonNode) root = tool_json_parse (text, len, STATUS_DEPTH, &error);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root)) {
    g_autofree char *why = g_strdup_printf ("%s: not bwssd's JSON (%s)", path,
                                            error ? error->message : "not an object");
    ignore_status (why);
    return NULL;
  }
  JsonObject *o = json_node_get_object (root);
  JsonNode *pid = json_object_get_member (o, "pid");
  if (pid == NULL || json_node_get_value_type (pid) != G_TYPE_INT64
      || !is_users_bwssd (json_node_get_int (pid)))
    return NULL;                       /* left behind by a bwssd that is gone */
  JsonArray *a = not_adopted (o);
  for (guint i = 0; a && i < json_array_get_length (a); i++)
    if (!JSON_NODE_HOLDS_OBJECT (json_array_get_element (a, i))) {
      g_autofree char *why = g_strdup_printf ("%s: not bwssd's JSON (not_adopted)", path);
      ignore_status (why);
      return NULL;
    }
  return json_object_ref (o);
}

/* Adds bwssd's pid and the flows it did not adopt (with the reason) to @b;
 * null and an empty list without bwssd. */
static void
add_bwssd (JsonBuilder *b, JsonObject *st)
{
  add_number (b, "bwssd_pid", st ? (double) int_member (st, "pid") : NAN);
  json_builder_set_member_name (b, "not_adopted");
  json_builder_begin_array (b);
  JsonArray *a = st ? not_adopted (st) : NULL;
  for (guint i = 0; a && i < json_array_get_length (a); i++) {
    JsonObject *r = json_array_get_object_element (a, i);
    json_builder_begin_object (b);
    add_number (b, "pid", (double) int_member (r, "pid"));
    add_string (b, "command", str_member (r, "command"), 64);
    add_string (b, "remote", str_member (r, "remote"), 64);
    add_string (b, "reason", str_member (r, "reason"), 256);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

/* Writes flow @g's group for the table: "flow" alone, else the share and
 * how many listed flows it holds ("process/8"). */
static void
fmt_group (char *buf, size_t len, const BwssFlowGroup *g)
{
  if (g->group == 0)
    g_snprintf (buf, len, "flow");
  else
    g_snprintf (buf, len, "%s/%u", bwss_share_name (g->share), g->members);
}

static void
print_json (const BwssDomainStats *ds, const BwssFlowInfo *rows, const BwssFlowGroup *groups,
            size_t n)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_number (b, "controller_pid", ds->controller_pid);
  json_builder_set_member_name (b, "phase");
  json_builder_add_string_value (b, ds->controller_pid ? bwss_phase_name (ds->phase) : "none");
  /* what the loop does (bwss_phase_mode()), null where nothing is decided */
  const char *mode = ds->controller_pid && !ds->suspended ? bwss_phase_mode (ds->phase) : NULL;
  json_builder_set_member_name (b, "mode");
  if (mode)
    json_builder_add_string_value (b, mode);
  else
    json_builder_add_null_value (b);
  add_rate (b, "sigma_bps", ds->controller_pid ? ds->sigma_bps : -1);
  json_builder_set_member_name (b, "loop");
  json_builder_add_string_value (b, bwss_loop_name (ds->loop));
  add_number (b, "queue_delay_us", ds->controller_pid && ds->queue_us >= 0 ? ds->queue_us : NAN);
  add_number (b, "queue_target_us",
              ds->controller_pid && ds->loop == BWSS_LOOP_DELAY ? ds->queue_target_us : NAN);
  add_rate (b, "aggregate_bps", ds->controller_pid ? ds->aggregate_bps : -1);
  json_builder_set_member_name (b, "suspended");
  json_builder_add_boolean_value (b, ds->suspended);
  g_autoptr (JsonObject) st = read_bwssd_status ();
  add_bwssd (b, st);
  json_builder_set_member_name (b, "flows");
  json_builder_begin_array (b);
  for (size_t i = 0; i < n; i++) {
    const BwssFlowInfo *f = &rows[i];
    json_builder_begin_object (b);
    add_number (b, "pid", f->pid);
    add_string (b, "command", f->comm, sizeof f->comm);
    add_string (b, "origin", f->origin, sizeof f->origin);
    add_string (b, "local", f->local, sizeof f->local);
    add_string (b, "remote", f->remote, sizeof f->remote);
    add_number (b, "priority", f->stats.prefs.priority);
    add_number (b, "min_rate_bps", f->stats.prefs.min_rate_bps);
    add_number (b, "weight", f->stats.prefs.weight);
    json_builder_set_member_name (b, "share");
    json_builder_add_string_value (b, groups[i].group ? bwss_share_name (groups[i].share) : "flow");
    json_builder_set_member_name (b, "group");   /* a key the flows of one group share */
    g_autofree char *key = g_strdup_printf ("%016" G_GINT64_MODIFIER "x", groups[i].group);
    json_builder_add_string_value (b, key);
    add_number (b, "group_members", groups[i].members);
    add_rate (b, "target_bps", f->stats.target_bps);
    add_rate (b, "rate_bps", f->stats.rate_bps);
    add_number (b, "rtt_us", f->stats.rtt_us);
    add_number (b, "base_rtt_us", f->stats.base_rtt_us);
    add_number (b, "window_bytes", f->stats.window_bytes);
    add_number (b, "read_rate_bps", f->stats.read_rate_bps);
    add_number (b, "bytes_received", (double) f->stats.bytes_received);
    json_builder_set_member_name (b, "controlled");
    json_builder_add_boolean_value (b, f->stats.controlled);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autofree char *text = tool_json_to_string (b);
  printf ("%s\n", text);
  fflush (stdout);
}

/* Copies at most @max bytes of @s into @out (@len bytes), every byte that
 * is not printable ASCII shown as '?' (a command name may hold anything,
 * terminal escapes included). */
static void
printable (char *out, size_t len, const char *s, size_t max)
{
  size_t n = 0;
  for (; n + 1 < len && n < max && s[n]; n++)
    out[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
  out[n] = '\0';
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
print_table (FILE *out, const BwssDomainStats *ds, const BwssFlowInfo *rows,
             const BwssFlowGroup *groups, size_t n)
{
  char sigma[32], agg[32];
  fmt_rate (sigma, sizeof sigma, ds->controller_pid ? ds->sigma_bps : -1);
  fmt_rate (agg, sizeof agg, ds->controller_pid ? ds->aggregate_bps : -1);
  char verdict[256];
  top_verdict (verdict, sizeof verdict, ds, rows, n, g_get_charset (NULL));
  fprintf (out, "%s\n", verdict);
  /* the count is that of the rows below: taken after the sweep, in the same
   * snapshot */
  if (ds->suspended)
    fprintf (out, "sharing suspended (bwss-top --resume)  flows %zu\n", n);
  else if (ds->controller_pid && ds->loop == BWSS_LOOP_DELAY && ds->queue_us >= 0)
    fprintf (out, "controller %d  loop delay  phase %s  sigma %s  aggregate %s  queue %.1f/%.1fms  flows %zu\n",
            ds->controller_pid, bwss_phase_name (ds->phase), sigma, agg, ds->queue_us / 1000.0,
            ds->queue_target_us / 1000.0, n);
  else if (ds->controller_pid)
    fprintf (out, "controller %d  loop %s  phase %s  sigma %s  aggregate %s  flows %zu\n", ds->controller_pid,
            bwss_loop_name (ds->loop), bwss_phase_name (ds->phase), sigma, agg, n);
  else
    fprintf (out, "no controller (windows are the kernel's)  flows %zu\n", n);
  fprintf (out, "%7s %-12s %-14s %-22s %-22s %4s %8s %6s %-11s %8s %8s %7s %7s %8s %8s\n", "PID",
           "COMMAND", "ORIGIN", "LOCAL", "REMOTE", "PRIO", "MIN", "WEIGHT", "GROUP", "TARGET", "RATE",
           "RTT", "BASE", "WINDOW", "READS");
  for (size_t i = 0; i < n; i++) {
    const BwssFlowInfo *f = &rows[i];
    char min[32], target[32], rate[32], win[32], comm[17], origin[BWSS_ORIGIN_MAX], local[65], remote[65];
    printable (comm, sizeof comm, f->comm, sizeof f->comm);
    printable (origin, sizeof origin, f->origin, sizeof f->origin);
    printable (local, sizeof local, f->local, sizeof f->local);
    printable (remote, sizeof remote, f->remote, sizeof f->remote);
    fmt_rate (min, sizeof min, f->stats.prefs.min_rate_bps);
    fmt_rate (target, sizeof target, f->stats.target_bps);
    fmt_rate (rate, sizeof rate, f->stats.rate_bps);
    if (f->stats.window_bytes)
      g_snprintf (win, sizeof win, "%u", f->stats.window_bytes);
    else
      g_snprintf (win, sizeof win, "kernel");
    char reads[32], group[32];
    fmt_group (group, sizeof group, &groups[i]);
    if (f->stats.read_rate_bps > 0.0)
      fmt_rate (reads, sizeof reads, f->stats.read_rate_bps);
    else
      g_snprintf (reads, sizeof reads, "free");
    fprintf (out, "%7d %-12.12s %-14.14s %-22.22s %-22.22s %4d %8s %6.3g %-11.11s %8s %8s %5.1fms %5.1fms %8s %8s\n",
             f->pid, comm, origin, local, remote, f->stats.prefs.priority, min, f->stats.prefs.weight, group,
             target, rate, f->stats.rtt_us / 1000.0, f->stats.base_rtt_us / 1000.0, win, reads);
  }
  g_autoptr (JsonObject) st = read_bwssd_status ();
  JsonArray *a = st ? not_adopted (st) : NULL;
  if (a && json_array_get_length (a) > 0)
    fprintf (out, "not adopted by bwssd %" G_GINT64_FORMAT ":\n", int_member (st, "pid"));
  for (guint i = 0; a && i < json_array_get_length (a); i++) {
    JsonObject *r = json_array_get_object_element (a, i);
    char comm[17], remote[65], reason[257];
    printable (comm, sizeof comm, str_member (r, "command"), 16);
    printable (remote, sizeof remote, str_member (r, "remote"), 64);
    printable (reason, sizeof reason, str_member (r, "reason"), 256);
    fprintf (out, "%7" G_GINT64_FORMAT " %-12.12s %-22.22s %s\n", int_member (r, "pid"),
            comm, remote, reason);
  }
  }

/* --paths: where the files of the domain in force are, one "KEY PATH" a
 * line, for scripts (the lab, the tests).  Returns the exit status. */
static int
print_paths (void)
{
  char dir[PATH_MAX];
  if (bwss_runtime_dir (dir, sizeof dir) != 0)
    return 1;
  g_autofree char *sock = tool_domain_path (opt_domain, ".sock");
  g_autofree char *status = tool_domain_path (opt_domain, ".bwssd");
  g_autofree char *lock = tool_domain_path (opt_domain, ".bwssd.lock");
  if (sock == NULL || status == NULL || lock == NULL)
    return 1;
  printf ("runtime-dir %s\nsocket %s\nbwssd-status %s\nbwssd-lock %s\n", dir, sock, status, lock);
  return 0;
}

/* The live view on a terminal (as top's): the alternate screen (the shell's
 * screen comes back on exit), each frame drawn from the top-left corner,
 * every line cut to the terminal's width and the frame to its height, the
 * rest of the screen cleared.  SIGINT, SIGTERM and SIGHUP end it (the
 * terminal restored); SIGWINCH redraws at once. */
static volatile sig_atomic_t stop_requested;

static void
on_stop (int sig)
{
  stop_requested = 1;
}

static void
on_winch (int sig)
{
}

static void
live_begin (void)
{
  struct sigaction sa = { .sa_handler = on_stop };   /* no SA_RESTART: the sleep ends */
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  sa.sa_handler = on_winch;
  sigaction (SIGWINCH, &sa, NULL);
  fputs ("\033[?1049h\033[?25l", stdout);   /* alternate screen, no cursor */
  fflush (stdout);
}

static void
live_end (void)
{
  fputs ("\033[?25h\033[?1049l", stdout);
  fflush (stdout);
}

static void
live_draw (const char *frame)
{
  struct winsize ws = { 0 };
  size_t cols = 80, lines = 24;
  if (ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    cols = ws.ws_col;
    lines = ws.ws_row;
  }
  g_autoptr (GString) s = g_string_new ("\033[H");
  const char *p = frame;
  for (size_t row = 0; *p && row < lines; row++) {
    const char *nl = strchr (p, '\n');
    size_t len = nl ? (size_t) (nl - p) : strlen (p), cut = MIN (len, cols);
    while (cut < len && cut > 0 && ((unsigned char) p[cut] & 0xc0) == 0x80)
      cut--;                           /* never half a UTF-8 character (the verdict's dash) */
    g_string_append_len (s, p, (gssize) cut);
    g_string_append (s, "\033[K");
    if (row + 1 < lines && nl)
      g_string_append_c (s, '\n');     /* no newline on the last row: the screen never scrolls */
    p = nl ? nl + 1 : p + len;
  }
  g_string_append (s, "\033[J");
  fwrite (s->str, 1, s->len, stdout);
  fflush (stdout);
}

/* Sleeps @seconds, cut short by a signal (the live view's end, a resize). */
static void
pause_for (double seconds)
{
  struct timespec ts = { .tv_sec = (time_t) seconds,
                         .tv_nsec = (long) ((seconds - (double) (time_t) seconds) * 1e9) };
  nanosleep (&ts, NULL);
}

/* Takes one snapshot of the domain, retrying while its lock is busy for at
 * most BUSY_WAIT_US.  Returns 0, BWSS_EBUSY or another BWSS_E code. */
static int
snapshot (BwssDomain *d, BwssDomainStats *ds, BwssFlowInfo *rows, BwssFlowGroup *groups, size_t *n)
{
  gint64 deadline = g_get_monotonic_time () + BUSY_WAIT_US;
  for (;;) {
    int err = bwss_domain_list_flow_groups (d, rows, groups, MAX_ROWS, n);
    if (err == 0)
      err = bwss_domain_get_stats (d, ds);
    if (err != BWSS_EBUSY || g_get_monotonic_time () >= deadline)
      return err;
    g_usleep (10000);
  }
}

/* --suspend or --resume: the domain's sharing off or on again.  Returns the
 * exit status. */
static int
set_suspended (BwssDomain *d)
{
  int err = bwss_domain_set_suspended (d, opt_suspend);
  bwss_domain_close (d);
  if (err) {
    fprintf (stderr, "bwss-top: %s\n", bwss_strerror (err));
    return 1;
  }
  printf ("sharing %s\n", opt_suspend ? "suspended" : "resumed");
  return 0;
}

/* The view: a snapshot every @interval s (once with --once), as JSON, as
 * plain lines when piped, or redrawn in place on a terminal.  Returns the
 * exit status. */
static int
show (BwssDomain *d, double interval)
{
  int err;
  static BwssFlowInfo rows[MAX_ROWS];
  static BwssFlowGroup groups[MAX_ROWS];
  int status = 0;
  gboolean live = !opt_json && !opt_once && isatty (STDOUT_FILENO);
  if (live)
    live_begin ();
  while (!stop_requested) {
    BwssDomainStats ds;
    size_t n = 0;
    err = snapshot (d, &ds, rows, groups, &n);
    if (err == BWSS_EBUSY) {
      fprintf (stderr, "bwss-top: bwssd did not answer (stopped, or too busy): try again\n");
      status = EXIT_BUSY;
      break;
    }
    if (err) {
      fprintf (stderr, "bwss-top: the domain cannot be read: %s\n", bwss_strerror (err));
      status = 1;
      break;
    }
    if (opt_json) {
      print_json (&ds, rows, groups, n);
    } else if (live) {
      g_autofree char *frame = NULL;
      size_t len = 0;
      FILE *f = open_memstream (&frame, &len);
      if (f == NULL) {
        status = 1;
        break;
      }
      print_table (f, &ds, rows, groups, n);
      fclose (f);
      live_draw (frame);
    } else {
      print_table (stdout, &ds, rows, groups, n);
      fflush (stdout);
    }
    if (opt_once)
      break;
    if (!opt_json && !live)
      printf ("\n");
    pause_for (interval);
  }
  if (live)
    live_end ();
  return status;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx, "Show the flows of the user's BWSS domain.");
  g_option_context_set_description (ctx,
      "Exit status: 0; 1 if there is no domain or it cannot be read; 2 for a usage error;\n"
      "3 if the domain stays busy (a participant holds its lock, e.g. stopped inside it).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    fprintf (stderr, "bwss-top: %s\n", error->message);
    return 2;
  }
  if (argc > 1) {
    fprintf (stderr, "bwss-top: unexpected argument '%s'\n", argv[1]);
    return 2;
  }
  double interval = 1.0;
  if (opt_interval && (bwss_parse_decimal (opt_interval, 3600, &interval) != 0 || interval < 0.05)) {
    fprintf (stderr, "bwss-top: --interval: '%s' is not a number of seconds from 0.05 to 3600\n",
             opt_interval);
    return 2;
  }
  if (opt_suspend && opt_resume) {
    fprintf (stderr, "bwss-top: --suspend and --resume exclude each other\n");
    return 2;
  }
  g_autofree char *bad_domain = tool_domain_name_problem (opt_domain);
  if (bad_domain) {
    fprintf (stderr, "bwss-top: %s\n", bad_domain);
    return 2;
  }
  g_autofree char *bad_dir = tool_domain_runtime_problem ();
  if (opt_check) {
    g_autofree char *name = tool_domain_name (opt_domain);
    g_autoptr (JsonObject) st = bad_dir ? NULL : read_bwssd_status ();
    return top_check (name, opt_domain != NULL, st, bad_dir);
  }
  if (bad_dir) {
    fprintf (stderr, "bwss-top: %s\n", bad_dir);
    return 1;
  }
  if (opt_paths)
    return print_paths ();
  BwssDomain *d = NULL;
  int err = bwss_domain_open (opt_domain, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d);
  if (err == BWSS_ENOENT) {
    fprintf (stderr, "bwss-top: no domain yet (no bwssd runs for it)\n");
    return 1;
  }
  if (err) {
    fprintf (stderr, "bwss-top: cannot open the domain: %s\n", bwss_strerror (err));
    return err == BWSS_EBUSY ? EXIT_BUSY : 1;
  }
  if (opt_suspend || opt_resume)
    return set_suspended (d);
  int status = show (d, interval);
  bwss_domain_close (d);
  return status;
}

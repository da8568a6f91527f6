/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-run — run a command with its TCP flows in the user's BWSS domain.
 *
 *   bwss-run [--priority N] [--min-rate RATE] [--weight W] [--no-inherit] -- COMMAND [ARGS…]
 *
 * Like nice(1) or trickle(1): the command runs with libbwss-preload.so in
 * LD_PRELOAD (kept in front of what was there) and its preferences in the
 * environment.  bwss-run stays as the command's parent and is a controller
 * candidate: while it lives the domain has a controller even if every other
 * participant is a preloaded program.  It forwards SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT and exits with the command's status (128 + signal if killed).
 *
 * Bad options: one line naming the option on stderr, exit status 2, nothing
 * started.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <bwss/domain.h>

static gint opt_priority;
static gchar *opt_min_rate;
static gchar *opt_weight;
static gboolean opt_no_inherit;
static gchar *opt_domain;
static gchar *opt_loop;

static GOptionEntry entries[] = {
  { "priority", 'p', 0, G_OPTION_ARG_INT, &opt_priority,
    "Priority: a larger value is served first (default 0)", "N" },
  { "min-rate", 'm', 0, G_OPTION_ARG_STRING, &opt_min_rate,
    "Minimum rate in bit/s, with k/M/G (default 0)", "RATE" },
  { "weight", 'w', 0, G_OPTION_ARG_STRING, &opt_weight,
    "Weight of the rest of the link (default 1)", "W" },
  { "no-inherit", 0, 0, G_OPTION_ARG_NONE, &opt_no_inherit,
    "Programs the command executes run outside the domain", NULL },
  { "domain", 0, 0, G_OPTION_ARG_STRING, &opt_domain,
    "Domain name (default $BWSS_DOMAIN, else per user)", "NAME" },
  { "loop", 0, 0, G_OPTION_ARG_STRING, &opt_loop,
    "The sigma loop if this process becomes the controller: delay (default) or paper "
    "(sets $BWSS_LOOP)", "LOOP" },
  { NULL }
};

static pid_t child = -1;

static void
forward (int sig)
{
  if (child > 0)
    kill (child, sig);
}

G_GNUC_NORETURN static void
die_usage (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("bwss-run: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (2);
}

/* Returns the path of libbwss-preload.so: $BWSS_PRELOAD, else next to this
 * executable (the build tree), else the installed one. */
static char *
find_shim (void)
{
  const char *env = g_getenv ("BWSS_PRELOAD");
  if (env && *env)
    return g_strdup (env);
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe) {
    g_autofree char *dir = g_path_get_dirname (exe);
    char *beside = g_build_filename (dir, "libbwss-preload.so", NULL);
    if (g_file_test (beside, G_FILE_TEST_IS_REGULAR))
      return beside;
    g_free (beside);
  }
  return g_strdup (BWSS_PRELOAD_INSTALLED);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("-- COMMAND [ARGS…]");
  g_option_context_set_summary (ctx,
      "Run COMMAND with its TCP flows shared by the user's preferences (receiver-driven\n"
      "bandwidth sharing: priority first, then minimum rates, then weights).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_strict_posix (ctx, TRUE);   /* options stop at COMMAND */
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    die_usage ("%s", error->message);

  BwssPrefs prefs = { .priority = opt_priority, .min_rate_bps = 0, .weight = 1 };
  if (opt_min_rate && bwss_parse_rate (opt_min_rate, &prefs.min_rate_bps) != 0)
    die_usage ("--min-rate: '%s' is not a rate in bit/s (e.g. 500k, 2.5M)", opt_min_rate);
  if (opt_weight) {
    char *end = NULL;
    errno = 0;
    double w = g_ascii_strtod (opt_weight, &end);
    if (errno || end == opt_weight || *end || !isfinite (w) || w < 0 || w > 1e9)
      die_usage ("--weight: '%s' is not a weight between 0 and 1e9", opt_weight);
    prefs.weight = w;
  }
  int first = 1;
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  if (first >= argc)
    die_usage ("no COMMAND given (bwss-run [OPTION…] -- COMMAND [ARGS…])");

  BwssLoop loop;
  if (opt_loop && bwss_loop_parse (opt_loop, &loop) != 0)
    die_usage ("--loop: '%s' is neither delay nor paper", opt_loop);
  if (opt_loop)
    g_setenv ("BWSS_LOOP", opt_loop, TRUE);
  if (opt_domain)
    g_setenv ("BWSS_DOMAIN", opt_domain, TRUE);
  BwssDomain *domain = NULL;
  int err = bwss_domain_open (NULL, 0, &domain);
  if (err) {
    fprintf (stderr, "bwss-run: cannot open the domain: %s\n", bwss_strerror (err));
    return 1;
  }

  g_autofree char *shim = find_shim ();
  const char *old = g_getenv ("LD_PRELOAD");
  g_autofree char *preload = old && *old ? g_strdup_printf ("%s %s", shim, old) : g_strdup (shim);
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  g_setenv ("LD_PRELOAD", preload, TRUE);
  g_snprintf (num, sizeof num, "%d", prefs.priority);
  g_setenv ("BWSS_PRIORITY", num, TRUE);
  g_setenv ("BWSS_MIN_RATE", g_ascii_dtostr (num, sizeof num, prefs.min_rate_bps), TRUE);
  g_setenv ("BWSS_WEIGHT", g_ascii_dtostr (num, sizeof num, prefs.weight), TRUE);
  g_setenv ("BWSS_INHERIT", opt_no_inherit ? "0" : "1", TRUE);

  child = fork ();
  if (child < 0) {
    fprintf (stderr, "bwss-run: fork: %s\n", g_strerror (errno));
    return 1;
  }
  if (child == 0) {
    execvp (argv[first], &argv[first]);
    fprintf (stderr, "bwss-run: %s: %s\n", argv[first], g_strerror (errno));
    _exit (errno == ENOENT ? 127 : 126);
  }
  /* the parent must not run with the shim: its own reads are not flows */
  struct sigaction sa = { .sa_handler = forward };
  sigemptyset (&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  sigaction (SIGQUIT, &sa, NULL);

  int status = 0;
  for (;;) {
    pid_t r = waitpid (child, &status, WNOHANG);
    if (r == child)
      break;
    if (r < 0 && errno != EINTR) {
      status = 1 << 8;
      break;
    }
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    uint64_t wait = bwss_domain_dispatch (domain, (uint64_t) ts.tv_sec * 1000000ull
                                                 + (uint64_t) ts.tv_nsec / 1000);
    struct timespec sl = { .tv_sec = 0, .tv_nsec = (long) wait * 1000 };
    nanosleep (&sl, NULL);
  }
  bwss_domain_close (domain);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-run — run a command with its TCP flows in the user's BWSS domain.
 *
 *   bwss-run [--priority N] [--min-rate RATE] [--weight W] [--share S]
 *            [--no-inherit] [--domain NAME] -- COMMAND [ARGS…]
 *
 * Like nice(1) or trickle(1): the command runs with libbwss-preload.so in
 * LD_PRELOAD (kept in front of what was there) and its preferences in the
 * environment, as given (the shim reads them with the same parsers).  The
 * preferences are each process's, not each connection's: a process's flows
 * share one share (--share process, the default; --share flow gives each
 * connection its own; --share unit groups by systemd unit).
 * bwss-run stays as the command's parent, a client of bwssd that may start
 * it (the preloaded command never does: bwss/domain.h's NO_CREATE), so the
 * command's flows find a bwssd even where none ran.  It forwards SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT and exits with the command's status (128 +
 * signal if killed).  On SIGTSTP (Ctrl-Z, or a kill of bwss-run alone) it
 * stops the command and itself, and continues the command with itself.
 *
 * Everything is checked before the domain is touched: a bad option, domain
 * name ($BWSS_DOMAIN too) or a missing command gives one line naming it and
 * exit status 2; a COMMAND that cannot be executed gives 127 (not found) or
 * 126 (not executable), as a shell would.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <bwss/bwss-glib.h>
#include <bwss/domain.h>
#include "tool-domain.h"
#include "tool-prefs.h"
#include "sys.h"

static gchar *opt_pref[TOOL_PREF_N];   /* by ToolPref */
static gboolean opt_no_inherit;
static gchar *opt_domain;
static gchar *opt_loop;

static GOptionEntry entries[] = {
  { "priority", 'p', 0, G_OPTION_ARG_STRING, &opt_pref[TOOL_PREF_PRIORITY],
    "Priority from -1000 to 1000: a larger value is served first (default 0)", "N" },
  { "min-rate", 'm', 0, G_OPTION_ARG_STRING, &opt_pref[TOOL_PREF_MIN_RATE],
    "Minimum rate in bit/s, with k/M/G (default 0)", "RATE" },
  { "weight", 'w', 0, G_OPTION_ARG_STRING, &opt_pref[TOOL_PREF_WEIGHT],
    "Weight of the rest of the link, 0 to 1e9 (default 1)", "W" },
  { "share", 's', 0, G_OPTION_ARG_STRING, &opt_pref[TOOL_PREF_SHARE],
    "Whose flows share the preferences: process (default: one share for all the "
    "connections of a process), flow (one per connection) or unit (per systemd unit)", "S" },
  { "no-inherit", 0, 0, G_OPTION_ARG_NONE, &opt_no_inherit,
    "Programs the command executes run outside the domain", NULL },
  { "domain", 0, 0, G_OPTION_ARG_STRING, &opt_domain,
    "Domain name (default $BWSS_DOMAIN, else per user)", "NAME" },
  { "loop", 0, 0, G_OPTION_ARG_STRING, &opt_loop,
    "The sigma loop of the bwssd started for the domain if none runs: delay (default) or "
    "paper (sets $BWSS_LOOP; a running bwssd keeps its own)", "LOOP" },
  { NULL }
};

static pid_t child = -1;

/* The parent's main loop: the command's exit, forwarded signals and the
 * domain's dispatch (bwss/bwss-glib.h's source: at the time the domain
 * asks for). */
typedef struct {
  GMainLoop  *loop;
  int         wstatus;         /* the command's wait status */
} Run;

static void
on_child_exit (GPid pid, gint wstatus, gpointer data)
{
  Run *run = data;
  run->wstatus = wstatus;
  g_spawn_close_pid (pid);
  g_main_loop_quit (run->loop);
}

static gboolean
on_forward (gpointer data)
{
  if (child > 0)
    kill (child, GPOINTER_TO_INT (data));
  return G_SOURCE_CONTINUE;
}

static void
forward_quit (int sig)
{
  if (child > 0)
    kill (child, sig);
}

/* SIGTSTP (SA_NODEFER: not blocked while it runs): stops the command, then
 * this process with the default action, puts itself back once continued,
 * and continues the command.  Only async-signal-safe calls. */
static void
on_tstp (int sig)
{
  int saved = errno;
  struct sigaction dfl = { .sa_handler = SIG_DFL }, mine;
  sigemptyset (&dfl.sa_mask);
  if (child > 0)
    kill (child, SIGTSTP);
  sigaction (SIGTSTP, &dfl, &mine);
  raise (SIGTSTP);                       /* stops here, unless no shell can continue us */
  sigaction (SIGTSTP, &mine, NULL);
  if (child > 0)
    kill (child, SIGCONT);
  errno = saved;
}

G_GNUC_NORETURN G_GNUC_PRINTF (2, 3) static void
die (int status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("bwss-run: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (status);
}

/* Returns the path of libbwss-preload.so: $BWSS_PRELOAD, else next to this
 * executable or in the build tree's shim folder beside it (libbwss/programs/tools and
 * libbwss/programs/shim of a meson build), else the installed one. */
static char *
find_shim (void)
{
  const char *env = g_getenv ("BWSS_PRELOAD");
  if (env && *env)
    return g_strdup (env);
  char exe[PATH_MAX];
  if (proc_exe (0, exe, sizeof exe) > 0) {
    g_autofree char *dir = g_path_get_dirname (exe);
    const char *const places[] = { ".", "../shim" };
    for (size_t i = 0; i < G_N_ELEMENTS (places); i++) {
      char *path = g_build_filename (dir, places[i], "libbwss-preload.so", NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
    }
  }
  return g_strdup (BWSS_PRELOAD_INSTALLED);
}

/* Checks that @path could be executed.  Returns 0, or the shell's status
 * (127 missing, 126 not executable) with *err the errno execve would give. */
static int
check_executable (const char *path, int *err)
{
  struct stat st;
  if (stat (path, &st) != 0) {
    *err = errno;
    return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
  }
  if (!S_ISREG (st.st_mode)) {
    *err = EACCES;                       /* a directory, a device */
    return 126;
  }
  if (access (path, X_OK) != 0) {
    *err = errno;
    return 126;
  }
  return 0;
}

/* Finds @cmd as execvp() would (a name with a '/' as is, else along $PATH).
 * Returns 0, or 127/126 with *err set. */
static int
check_command (const char *cmd, int *err)
{
  *err = ENOENT;
  if (*cmd == '\0')
    return 127;
  if (strchr (cmd, '/'))
    return check_executable (cmd, err);
  const char *path = g_getenv ("PATH");
  g_auto (GStrv) dirs = g_strsplit (path ? path : "/bin:/usr/bin", ":", -1);
  int status = 127;
  for (char **dir = dirs; *dir; dir++) {
    g_autofree char *full = g_build_filename (**dir ? *dir : ".", cmd, NULL);
    int e, r = check_executable (full, &e);
    if (r == 0)
      return 0;
    if (r == 126 && status == 127) {     /* execvp also goes on, and reports this */
      status = 126;
      *err = e;
    }
  }
  return status;
}

/* Every option checked with the shim's parser (tool-prefs.h); a bad one
 * ends the program with status 2 before anything runs. */
static void
check_options (void)
{
  BwssPrefs prefs;
  BwssShare share;
  ToolPref bad = tool_prefs_parse ((const char *const *) opt_pref, &prefs, &share);
  char valid[128];
  if (bad != TOOL_PREF_N) {
    tool_pref_valid (bad, valid, sizeof valid);
    die (2, "%s: '%s' is not %s", tool_pref_option[bad], opt_pref[bad], valid);
  }
  BwssLoop loop;
  if (opt_loop && bwss_loop_parse (opt_loop, &loop) != 0)
    die (2, "--loop: '%s' is neither delay nor paper", opt_loop);
  g_autofree char *bad_domain = tool_domain_name_problem (opt_domain);
  if (bad_domain)
    die (2, "%s", bad_domain);
}

/* The shim and the preferences into the environment COMMAND inherits: as
 * they were given (the shim parses them as check_options() did), none
 * inherited for one not given (the shim's default). */
static void
set_child_environment (void)
{
  g_autofree char *shim = find_shim ();
  const char *old = g_getenv ("LD_PRELOAD");
  g_autofree char *preload = old && *old ? g_strdup_printf ("%s %s", shim, old) : g_strdup (shim);
  g_setenv ("LD_PRELOAD", preload, TRUE);
  for (int i = 0; i < TOOL_PREF_N; i++)
    if (opt_pref[i])
      g_setenv (tool_pref_var[i], opt_pref[i], TRUE);
    else
      g_unsetenv (tool_pref_var[i]);
  g_setenv ("BWSS_INHERIT", opt_no_inherit ? "0" : "1", TRUE);
}

/* The parent's sources: the child's exit and the signals it forwards. */
static void
watch_child_and_signals (Run *run)
{
  g_child_watch_add (child, on_child_exit, run);
  g_unix_signal_add (SIGINT, on_forward, GINT_TO_POINTER (SIGINT));
  g_unix_signal_add (SIGTERM, on_forward, GINT_TO_POINTER (SIGTERM));
  g_unix_signal_add (SIGHUP, on_forward, GINT_TO_POINTER (SIGHUP));
  /* GLib has no source for these two: plain handlers, async-signal-safe */
  struct sigaction quit = { .sa_handler = forward_quit, .sa_flags = SA_RESTART };
  sigemptyset (&quit.sa_mask);
  sigaction (SIGQUIT, &quit, NULL);
  struct sigaction tstp = { .sa_handler = on_tstp, .sa_flags = SA_RESTART | SA_NODEFER };
  sigemptyset (&tstp.sa_mask);
  sigaction (SIGTSTP, &tstp, NULL);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("-- COMMAND [ARGS…]");
  g_option_context_set_summary (ctx,
      "Run COMMAND with its TCP flows shared by the user's preferences (receiver-driven\n"
      "bandwidth sharing: priority first, then minimum rates, then weights).");
  g_option_context_set_description (ctx,
      "Numbers are decimal. Exit status: the command's; 2 for a usage error; 126/127 if\n"
      "COMMAND cannot be executed or found; 1 if the domain cannot be opened.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_strict_posix (ctx, TRUE);   /* options stop at COMMAND */
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    die (2, "%s", error->message);

  check_options ();
  int first = 1;
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  if (first >= argc)
    die (2, "no COMMAND given (bwss-run [OPTION…] -- COMMAND [ARGS…])");
  int exec_err, status = check_command (argv[first], &exec_err);
  if (status)
    die (status, "%s: %s", *argv[first] ? argv[first] : "''", g_strerror (exec_err));

  if (opt_loop)
    g_setenv ("BWSS_LOOP", opt_loop, TRUE);
  if (opt_domain)
    g_setenv ("BWSS_DOMAIN", opt_domain, TRUE);
  BwssDomain *domain = NULL;
  int err = bwss_domain_open (NULL, 0, &domain);
  g_autofree char *bad_dir = err ? tool_domain_runtime_problem () : NULL;
  if (bad_dir)
    die (1, "%s", bad_dir);
  if (err)
    die (1, "cannot open the domain: %s", bwss_strerror (err));

  set_child_environment ();

  child = fork ();
  if (child < 0)
    die (1, "fork: %s", g_strerror (errno));
  if (child == 0) {
    execvp (argv[first], &argv[first]);
    fprintf (stderr, "bwss-run: %s: %s\n", argv[first], g_strerror (errno));
    _exit (errno == ENOENT ? 127 : 126);
  }
  /* the parent must not run with the shim: its own reads are not flows */
  Run run = { .loop = g_main_loop_new (NULL, FALSE), .wstatus = 1 << 8 };
  watch_child_and_signals (&run);
  GSource *dispatch = bwss_domain_source_new (domain);
  g_source_attach (dispatch, NULL);

  g_main_loop_run (run.loop);
  g_source_destroy (dispatch);
  g_source_unref (dispatch);
  g_main_loop_unref (run.loop);
  int wstatus = run.wstatus;
  bwss_domain_close (domain);
  if (WIFSIGNALED (wstatus))
    return 128 + WTERMSIG (wstatus);
  return WEXITSTATUS (wstatus);
}

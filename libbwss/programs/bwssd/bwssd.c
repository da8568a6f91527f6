/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwssd — the user's BWSS daemon: the domain's one controller.  Clients
 * (the element, the tracer, the shim, bwss-run: libbwss's client.c) hand it
 * their sockets over the domain's socket (serve.h); it adopts every TCP
 * download of the user that no client handed over (a browser, a game's
 * updater, a torrent client started without bwss-run: adopter.h); it
 * measures them all and sets their windows (ctl.h).
 *
 *   bwssd [--foreground] [--domain NAME] [--rules FILE]
 *   bwssd --autostart [--domain NAME] (started by the first client where none
 *                                      runs: serves clients, adopts nothing,
 *                                      and exits AUTOSTART_LINGER_S after its
 *                                      last client is gone)
 *   bwssd --check [--rules FILE]     (is the rules file in force good?)
 *   bwssd --restore                  (give back what a dead bwssd left adopted)
 *
 * Rules (adopt-rules.h, docs/adopt.md) come from --rules, else
 * $XDG_CONFIG_HOME/bwss/rules.conf, else SYSCONFDIR/bwss/rules.conf, else
 * the built-in default (every flow at priority 0, weight 1).  They are read
 * again when the file changes and on SIGHUP, in a worker thread (the main
 * loop never waits for a file: a FIFO is refused at once, a hung network
 * home holds up only that thread); a bad file is reported once (file:line:
 * key) and the rules in force stay.  SIGTERM and SIGINT give
 * every adopted flow back to the kernel and exit 0; if bwssd dies any other
 * way, its watchdog does that, and if both die, the next bwssd of any domain
 * or `bwssd --restore` (adopt-watchdog.h, adopt-ledger.h).  One bwssd per
 * domain; one bwssd per socket.
 *
 * The user's own bwssd (the unit's, or one started by hand) takes the
 * domain from a client's autostarted one (take_over()); its clients, their
 * sockets the kernel's meanwhile, hand them to the new one.
 *
 * Exit status: 0; 1 if it cannot run (another bwssd, no domain, no
 * runtime directory, a watchdog that cannot be kept alive); 2 for a
 * usage error (options, a bad --domain, a bad --rules file at start, or
 * with --check a bad rules file in force).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <bwss/domain.h>
#include "adopt-helper.h"
#include "adopt-proc.h"
#include "adopt-rules.h"
#include "adopt-watchdog.h"
#include "adopter.h"
#include "ctl.h"
#include "serve.h"
#include "sys.h"
#include "tool-domain.h"

static gboolean opt_foreground;
static gboolean opt_check;
static gboolean opt_restore;
static gchar *opt_domain;
static gchar *opt_rules;
static gint opt_watchdog_for;
static gchar *opt_ledger;
static gboolean opt_autostart;

/* An autostarted bwssd lingers this long after its last client left: a
 * player that opens its next connection finds it still there. */
#define AUTOSTART_LINGER_S 2
/* Handed-over sockets are checked against their clients' fd tables (one
 * whose client closed it without telling is given back), a slice of them
 * a round, each about this often, µs: a slice is the share of them one
 * round's wait is of it (a 25th at the 10-ms control period; all of them
 * in a round after which the next is this far off or further: the flows
 * at rest).  A kcmp(2) each (readlink of the client's fd in /proc where
 * the kernel has none, four to five times the cost): all of 1000 flows in
 * one round would add about 1 ms of CPU to it. */
#define HELD_EVERY_US 250000
/* Which bwssd holds the domain, for a bwssd that finds its lock taken: a
 * record lock (fcntl(2), which names its process and goes with it) on one
 * byte of the lock file, beside the flock that decides who holds it. */
#define LOCK_BYTE_OWN       0          /* the user's own bwssd */
#define LOCK_BYTE_AUTOSTART 1          /* a client's autostarted bwssd */
/* The longest wait for an autostarted bwssd to leave (SIGTERM: a few ms),
 * or for one that is starting to name itself. */
#define TAKEOVER_WAIT_US    5000000
/* An autostarted bwssd still there this long after its SIGTERM is stopped
 * or hung: it is killed (it adopts nothing; its clients give their sockets
 * back themselves when it does not answer). */
#define TAKEOVER_KILL_US    2000000

/* A scan due before the next round and at most this much before it, µs,
 * waits for that round: both in one wakeup.  At rounds an estimation
 * period apart (up to 40 ms) every scan of a busy domain joins one, and a
 * flow is adopted at most this much later than its scan's own time. */
#define SCAN_JOIN_US 50000

static GOptionEntry entries[] = {
  { "adopt-helper", 0, G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) adopt_helper_option, "Take sockets only through the bwss-sockd helper at PATH, never with pidfd_getfd (default: $BWSSD_ADOPT_HELPER; else the helper at /run/bwss-sockd.sock is asked where pidfd_getfd is refused)", "PATH" },
  { "foreground", 'f', 0, G_OPTION_ARG_NONE, &opt_foreground, "Do not detach (for systemd and the terminal)", NULL },
  { "domain", 0, 0, G_OPTION_ARG_STRING, &opt_domain, "Domain name (default $BWSS_DOMAIN, else per user)", "NAME" },
  { "rules", 'r', 0, G_OPTION_ARG_FILENAME, &opt_rules, "Rules file (default $XDG_CONFIG_HOME/bwss/rules.conf)", "FILE" },
  { "check", 0, 0, G_OPTION_ARG_NONE, &opt_check, "Check the rules file in force and exit: 0 if it is good, 2 if not", NULL },
  { "restore", 0, 0, G_OPTION_ARG_NONE, &opt_restore, "Give back every socket a dead bwssd (any domain) left adopted, and exit", NULL },
  { "autostart", 0, 0, G_OPTION_ARG_NONE, &opt_autostart, "Started by a client: serve clients only (no adoption), detached, and exit once the last client is gone", NULL },
  /* the watchdog: bwssd starts it (adopt-watchdog.h) */
  { "watchdog-for", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opt_watchdog_for, NULL, "PID" },
  { "ledger", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &opt_ledger, NULL, "DIR" },
  { NULL }
};

typedef struct {
  GMainLoop    *loop;
  int           status;        /* the exit status */
  AdoptWatchdog watchdog;
  Adopter      *adopter;
  Ctl          *ctl;
  Serve        *serve;
  GSource      *round;         /* the controller's rounds (on_round) */
  guint         held_slice;    /* the slice serve_check_held() checks next */
  guint         linger;        /* autostarted, no client: the exit's timeout */
  int           listen_fd;
  GSource      *scan;          /* at the time the last scan set (on_scan) */
  char         *user_rules;    /* the file watched: --rules, or the user's */
  GFileMonitor *monitor;
  gboolean      loading;       /* a reload runs in a worker thread */
  gboolean      load_again;    /* ... and another was asked for meanwhile */
} Daemon;

/* Returns the rules file in force: --rules, the user's if it exists, the
 * system's if it exists, else NULL (built in). */
static char *
rules_path (void)
{
  if (opt_rules)
    return g_strdup (opt_rules);
  g_autofree char *user = g_build_filename (g_get_user_config_dir (), "bwss", "rules.conf", NULL);
  if (g_file_test (user, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&user);
  g_autofree char *sys = g_build_filename (BWSS_SYSCONFDIR, "bwss", "rules.conf", NULL);
  if (g_file_test (sys, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&sys);
  return NULL;
}

/* Returns the rules now in force on disk, or NULL with @error set. */
static AdoptRules *
load_rules (GError **error)
{
  g_autofree char *path = rules_path ();
  return path ? adopt_rules_load (path, error) : adopt_rules_builtin ();
}

static gboolean reload (gpointer data);

/* A worker thread's reading of the rules in force (the file may sit on a
 * hung network file system: the main loop never waits for it). */
static void
load_in_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  GError *error = NULL;
  AdoptRules *r = load_rules (&error);
  if (r)
    g_task_return_pointer (task, r, (GDestroyNotify) adopt_rules_free);
  else
    g_task_return_error (task, error);
}

/* Back in the main loop: the rules read, or why not; a bad file changes
 * nothing. */
static void
loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  Daemon *dm = data;
  g_autoptr (GError) error = NULL;
  AdoptRules *r = g_task_propagate_pointer (G_TASK (result), &error);
  dm->loading = FALSE;
  if (r == NULL) {
    g_printerr ("bwssd: %s (the rules in force stay)\n", error->message);
  } else {
    g_printerr ("bwssd: rules from %s: %u rules and [default]\n", r->path ? r->path : "(built in)",
                r->rules->len);
    adopter_set_rules (dm->adopter, r);
  }
  if (dm->load_again) {
    dm->load_again = FALSE;
    reload (dm);
  }
}

/* Reads the rules again, in a worker thread (one at a time: a change
 * meanwhile is read once the running read ends); SIGHUP's callback too. */
static gboolean
reload (gpointer data)
{
  Daemon *dm = data;
  if (dm->loading) {
    dm->load_again = TRUE;
    return G_SOURCE_CONTINUE;
  }
  dm->loading = TRUE;
  g_autoptr (GTask) task = g_task_new (NULL, NULL, loaded, dm);
  g_task_run_in_thread (task, load_in_thread);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_term (gpointer data)
{
  Daemon *dm = data;
  g_main_loop_quit (dm->loop);
  return G_SOURCE_CONTINUE;
}

/* A round at once if none is due within the control period and the
 * controller has flows (a flow came, handed over or adopted, or changed
 * while every flow was at rest): the rounds stop by themselves when the
 * last flow is gone (on_round); CtlFuncs.wake. */
static void
kick_round (gpointer data)
{
  Daemon *dm = data;
  gint64 ready = g_source_get_ready_time (dm->round);
  gint64 soon = g_get_monotonic_time () + (gint64) ctl_period (dm->ctl);
  if ((ready < 0 || ready > soon) && ctl_count (dm->ctl) > 0)
    g_source_set_ready_time (dm->round, 0);
}

/* A scan, and when the next is due: ADOPT_SCAN_MS while the domain has
 * flows; with none, the next whole second of the monotonic clock, when the
 * idle domain's dispatch runs too (bwss_domain_dispatch()): an idle bwssd
 * wakes once a second for both. */
static gboolean
on_scan (gpointer data)
{
  Daemon *dm = data;
  gboolean busy = adopter_scan (dm->adopter);   /* a flow adopted asks for a round (ctl_add()) */
  gint64 now = g_get_monotonic_time ();
  g_source_set_ready_time (dm->scan, busy ? now + ADOPT_SCAN_MS * 1000
                                          : now + ADOPT_IDLE_SCAN_US - now % ADOPT_IDLE_SCAN_US);
  return G_SOURCE_CONTINUE;
}

static gboolean
timed_source_dispatch (GSource *source, GSourceFunc callback, gpointer data)
{
  return callback (data);
}

/* A source that calls @func (@dm) at the ready time it sets itself (the
 * first: @ready, monotonic µs; -1 none), at @priority. */
static GSource *
timed_source_new (const char *name, int priority, GSourceFunc func, Daemon *dm, gint64 ready)
{
  static GSourceFuncs funcs = { NULL, NULL, timed_source_dispatch, NULL, NULL, NULL };
  GSource *source = g_source_new (&funcs, sizeof (GSource));
  g_source_set_name (source, name);
  g_source_set_priority (source, priority);
  g_source_set_callback (source, func, dm, NULL);
  g_source_set_ready_time (source, ready);
  return source;
}

/* A controller round, and when the next is due (ctl_round(): as the laws
 * ask); none (no wakeup) without flows. */
static gboolean
on_round (gpointer data)
{
  Daemon *dm = data;
  gint64 now = g_get_monotonic_time ();
  guint64 wait = ctl_round (dm->ctl, (guint64) now);
  if (dm->serve) {
    guint slices = wait && wait < HELD_EVERY_US ? (guint) (HELD_EVERY_US / wait) : 1;
    dm->held_slice %= slices;
    serve_check_held (dm->serve, dm->held_slice, slices);
    dm->held_slice = (dm->held_slice + 1) % slices;
  }
  g_source_set_ready_time (dm->round, wait ? now + (gint64) wait : -1);
  if (dm->scan && wait) {
    gint64 next = now + (gint64) wait, scan = g_source_get_ready_time (dm->scan);
    if (scan > now && scan < next && next - scan <= SCAN_JOIN_US)
      g_source_set_ready_time (dm->scan, next);
  }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_linger_end (gpointer data)
{
  Daemon *dm = data;
  dm->linger = 0;
  struct pollfd p = { .fd = dm->listen_fd, .events = POLLIN };
  if (poll (&p, 1, 0) > 0)
    return G_SOURCE_REMOVE;            /* a client is connecting: it is served first */
  if (serve_clients (dm->serve) == 0 && ctl_count (dm->ctl) == 0)
    g_main_loop_quit (dm->loop);
  return G_SOURCE_REMOVE;
}

/* Clients or their flows changed: a round at once if one is not due (a
 * flow came), and an autostarted bwssd with no client left lingers, then
 * exits. */
static void
on_serve_changed (gpointer data)
{
  Daemon *dm = data;
  kick_round (dm);
  if (opt_autostart && dm->linger == 0 && serve_clients (dm->serve) == 0)
    dm->linger = g_timeout_add_seconds (AUTOSTART_LINGER_S, on_linger_end, dm);
}

static void
on_serve_yield (guint64 inode, gpointer data)
{
  Daemon *dm = data;
  adopter_yield (dm->adopter, inode);
}

/* Sharing off or on, for this bwssd and the next: the domain's
 * ".suspended" file says it is off (a bwssd started again keeps it off). */
static void
on_serve_suspend (gboolean on, gpointer data)
{
  Daemon *dm = data;
  ctl_set_suspended (dm->ctl, on);
  g_autofree char *path = tool_domain_path (opt_domain, ".suspended");
  if (path && on)
    g_file_set_contents_full (path, "", 0, G_FILE_SET_CONTENTS_NONE, 0600, NULL);
  else if (path)
    unlink (path);
}

static char *
on_serve_status (gpointer data)
{
  Daemon *dm = data;
  return adopter_status (dm->adopter);
}

static void
on_rules_changed (GFileMonitor *m, GFile *file, GFile *other, GFileMonitorEvent ev, gpointer data)
{
  if (ev == G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT || ev == G_FILE_MONITOR_EVENT_CREATED
      || ev == G_FILE_MONITOR_EVENT_DELETED || ev == G_FILE_MONITOR_EVENT_RENAMED
      || ev == G_FILE_MONITOR_EVENT_MOVED_IN)
    reload (data);
}

/* Returns the pid whose record lock holds byte @byte of the lock file
 * @lock, 0 if none (or one in a PID namespace not seen from here). */
static pid_t
lock_holder (int lock, off_t byte)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };
  if (fcntl (lock, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
    return 0;
  return fl.l_pid;
}

/* The domain's lock @lock is taken.  If a client's autostarted bwssd holds
 * it, asks that one to give its flows back and leave (SIGTERM through a
 * pidfd opened while it held the lock: never another process that took its
 * pid; SIGKILL after TAKEOVER_KILL_US), and any autostarted one that takes
 * its place meanwhile; waits for the lock at most TAKEOVER_WAIT_US.  Never
 * asks the user's own bwssd.  Returns TRUE once the lock is ours. */
static gboolean
take_over (int lock)
{
  gint64 start = g_get_monotonic_time (), asked_at = 0;
  pid_t asked = 0;
  do {
    if (lock_holder (lock, LOCK_BYTE_OWN) != 0)
      return FALSE;
    pid_t pid = lock_holder (lock, LOCK_BYTE_AUTOSTART);
    gint64 now = g_get_monotonic_time ();
    gboolean hung = pid == asked && now - asked_at > TAKEOVER_KILL_US;
    int pidfd = pid > 0 && (pid != asked || hung) ? proc_pidfd (pid) : -1;
    if (pidfd >= 0 && lock_holder (lock, LOCK_BYTE_AUTOSTART) == pid
        && proc_pidfd_signal (pidfd, hung ? SIGKILL : SIGTERM) == 0) {
      g_printerr (hung ? "bwssd: the autostarted bwssd (pid %d) did not leave: killed\n"
                       : "bwssd: a client's autostarted bwssd (pid %d) holds the domain: "
                         "it gives its flows back and leaves\n", (int) pid);
      asked = pid;
      asked_at = now;
    }
    if (pidfd >= 0)
      close (pidfd);
    g_usleep (10000);
    if (flock (lock, LOCK_EX | LOCK_NB) == 0)
      return TRUE;
  } while (g_get_monotonic_time () - start < TAKEOVER_WAIT_US);
  return FALSE;
}

/* Takes the one-bwssd-per-domain lock: a file in the user's runtime
 * directory (no other user can hold it), opened without following a link
 * or waiting, and only if it is this user's regular file; the user's own
 * bwssd takes it from a client's autostarted one (take_over()).  Returns
 * its fd, or -1 with a message. */
static int
single_instance (const char *domain)
{
  g_autofree char *problem = tool_domain_runtime_problem ();
  g_autofree char *path = tool_domain_path (domain, ".bwssd.lock");
  if (problem || path == NULL) {
    g_printerr ("bwssd: %s\n", problem ? problem : "no runtime directory");
    return -1;
  }
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0) {
    g_printerr ("bwssd: cannot open %s: %s\n", path, g_strerror (errno));
    return -1;
  }
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ()) {
    g_printerr ("bwssd: %s is not a regular file of this user: remove it\n", path);
    close (fd);
    return -1;
  }
  if (flock (fd, LOCK_EX | LOCK_NB) != 0 && (opt_autostart || !take_over (fd))) {
    g_autofree char *name = tool_domain_name (domain);
    g_printerr ("bwssd: another bwssd runs for domain %s\n", name);
    close (fd);
    return -1;
  }
  return fd;
}

/* Parses the command line.  Returns 0, or 2 (usage error) with a message. */
static int
parse_options (int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_option_context_set_summary (ctx, "The user's BWSS daemon: controls the domain and adopts every "
                                "TCP download of the user,\nwith the preferences of a rules file.");
  g_option_context_set_description (ctx,
      "Rules: --rules, else $XDG_CONFIG_HOME/bwss/rules.conf, else " BWSS_SYSCONFDIR "/bwss/rules.conf.\n"
      "SIGHUP reads them again.  Exit status: 0; 1 if it cannot run; 2 for a usage error\n"
      "(or, with --check, a bad rules file).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &error)) {
    g_printerr ("bwssd: %s\n", error->message);
    return 2;
  }
  if (opt_watchdog_for > 0)
    return 0;                          /* the watchdog: nothing else is its business */
  if (*argc > 1) {
    g_printerr ("bwssd: unexpected argument '%s'\n", (*argv)[1]);
    return 2;
  }
  g_autofree char *bad_domain = tool_domain_name_problem (opt_domain);
  if (bad_domain) {
    g_printerr ("bwssd: %s\n", bad_domain);
    return 2;
  }
  return 0;
}

/* --check: is the rules file in force good?  Returns the exit status. */
static int
check_rules (void)
{
  g_autoptr (GError) error = NULL;
  AdoptRules *rules = load_rules (&error);
  if (rules == NULL) {
    g_printerr ("bwssd: %s\n", error->message);
    return 2;
  }
  g_print ("%s: %u rules and [default]: good\n", rules->path ? rules->path : "(built in)",
           rules->rules->len);
  adopt_rules_free (rules);
  return 0;
}

/* The rules to start with: a bad --rules file is a usage error (NULL); a
 * bad file found in the usual places gives the built-in rules until it is
 * fixed. */
static AdoptRules *
rules_at_start (void)
{
  g_autoptr (GError) error = NULL;
  AdoptRules *rules = load_rules (&error);
  if (rules)
    return rules;
  if (opt_rules) {
    g_printerr ("bwssd: %s\n", error->message);
    return NULL;
  }
  g_printerr ("bwssd: %s (built-in rules until it is fixed)\n", error->message);
  return adopt_rules_builtin ();
}

/* --restore (the unit's ExecStopPost): what a dead bwssd left adopted, any
 * domain.  Returns the exit status. */
static int
restore_left (void)
{
  g_autoptr (GError) error = NULL;
  AdoptLedger *l = adopt_ledger_open (NULL, NULL, &error);
  if (l == NULL) {
    g_printerr ("bwssd: %s\n", error->message);
    return 1;
  }
  guint n = adopt_ledger_restore_dead (l, ADOPT_LEDGER_RESTORE_WAIT_US);
  g_print ("bwssd: %u socket%s left adopted by a dead bwssd given back\n", n, n == 1 ? "" : "s");
  adopt_ledger_free (l);
  return 0;
}

/* The socket file this bwssd bound (none if systemd's): removed at exit
 * only if the path still names it (systemd's socket unit may have
 * replaced it meanwhile). */
static struct stat bound;

/* Returns the domain's listening socket: systemd's (socket activation),
 * else the domain's socket bound now.  -1 with a message if neither. */
static int
domain_socket (void)
{
  int fd = sock_systemd_listener ();
  if (fd == -EINVAL)
    g_printerr ("bwssd: systemd must pass exactly one listening SOCK_SEQPACKET socket\n");
  if (fd != -ENOENT)
    return fd < 0 ? -1 : fd;
  g_autofree char *path = tool_domain_path (opt_domain, ".sock");
  if (path)
    unlink (path);                     /* a dead bwssd's: we hold the domain's lock */
  fd = path ? sock_unix_listen (path, 0600) : -ENOENT;
  if (fd >= 0 && stat (path, &bound) != 0)
    bound.st_ino = 0;
  if (fd < 0)
    g_printerr ("bwssd: cannot listen on %s: %s\n", path ? path : "the domain's socket",
                g_strerror (-fd));
  return fd < 0 ? -1 : fd;
}

/* Becomes the domain's daemon: the one-per-domain lock, its socket (before
 * detaching: a client that started it connects as soon as it returns),
 * detached unless --foreground, the ledger of adopted sockets (what a dead
 * bwssd left in it given back at once).  Returns 0, or 1 with a message
 * (*lock closed). */
static int
become_daemon (int *lock, AdoptLedger **ledger, int *listen_fd)
{
  *lock = single_instance (opt_domain);
  if (*lock < 0)
    return 1;
  *listen_fd = domain_socket ();
  if (*listen_fd < 0) {
    close (*lock);
    return 1;
  }
  if (!opt_foreground && daemon (0, 1) != 0) {
    g_printerr ("bwssd: cannot detach: %s\n", g_strerror (errno));
    close (*lock);
    return 1;
  }
  g_autoptr (GError) error = NULL;
  g_autofree char *name = tool_domain_name (opt_domain);
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1,
                      .l_start = opt_autostart ? LOCK_BYTE_AUTOSTART : LOCK_BYTE_OWN };
  fcntl (*lock, F_SETLK, &fl);       /* after daemon(): it names our pid (take_over()) */
  *ledger = adopt_ledger_open (NULL, name, &error);   /* after daemon(): it records our pid */
  if (*ledger == NULL) {
    g_printerr ("bwssd: no ledger of adopted sockets: %s\n", error->message);
    close (*lock);
    return 1;
  }
  guint n = adopt_ledger_restore_dead (*ledger, ADOPT_LEDGER_RESTORE_WAIT_US);
  if (n)
    g_printerr ("bwssd: %u socket%s left adopted by a dead bwssd given back\n", n, n == 1 ? "" : "s");
  return 0;
}

/* Watches the rules file in force (--rules, else the user's, which may not
 * exist yet) and the signals. */
static void
watch_inputs (Daemon *dm)
{
  dm->user_rules = opt_rules ? g_strdup (opt_rules)
                             : g_build_filename (g_get_user_config_dir (), "bwss", "rules.conf", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (dm->user_rules);
  dm->monitor = g_file_monitor_file (file, G_FILE_MONITOR_WATCH_MOVES, NULL, NULL);
  if (dm->monitor)
    g_signal_connect (dm->monitor, "changed", G_CALLBACK (on_rules_changed), dm);
  g_unix_signal_add (SIGHUP, reload, dm);
  g_unix_signal_add (SIGTERM, on_term, dm);
  g_unix_signal_add (SIGINT, on_term, dm);
}

/* The watchdog keeps dying: every flow back, exit 1. */
static void
give_up (gpointer data)
{
  Daemon *dm = data;
  dm->status = 1;
  g_main_loop_quit (dm->loop);
}

/* Controls the domain and adopts until SIGTERM or SIGINT (or until its
 * watchdog cannot be kept alive), then gives every adopted flow back to the
 * kernel.  Returns the exit status. */
static int
run (int listen_fd, AdoptLedger *ledger, AdoptRules *rules)
{
  gboolean can = FALSE;
  g_autofree char *capability = opt_autostart
      ? g_strdup ("started by a client (--autostart): adopts nothing")
      : adopt_proc_capability (&can);
  g_printerr ("bwssd: %s\n", capability);
  g_printerr ("bwssd: rules from %s: %u rules and [default]\n",
              rules->path ? rules->path : "(built in)", rules->rules->len);

  Daemon dm = { .listen_fd = listen_fd };
  dm.loop = g_main_loop_new (NULL, FALSE);
  int werr = adopt_watchdog_start (&dm.watchdog, adopt_ledger_dir (ledger), give_up, &dm);
  if (werr) {
    g_printerr ("bwssd: cannot start its watchdog: %s\n", g_strerror (-werr));
    g_main_loop_unref (dm.loop);
    adopt_rules_free (rules);
    return 1;
  }
  CtlFuncs cf = { .pace = serve_pace, .wake = kick_round, .data = &dm };
  dm.round = timed_source_new ("bwssd-round", G_PRIORITY_HIGH, on_round, &dm, -1);
  dm.ctl = ctl_new (&cf);
  g_source_attach (dm.round, NULL);
  dm.adopter = adopter_new (dm.ctl, &dm.watchdog, ledger, rules, capability);
  g_autofree char *suspended = tool_domain_path (opt_domain, ".suspended");
  if (suspended && g_file_test (suspended, G_FILE_TEST_EXISTS))
    ctl_set_suspended (dm.ctl, TRUE);
  ServeFuncs sf = { .changed = on_serve_changed, .yield = on_serve_yield,
                    .suspend = on_serve_suspend, .status = on_serve_status, .data = &dm };
  dm.serve = serve_new (dm.ctl, listen_fd, &sf);
  on_serve_changed (&dm);              /* autostarted: exits if nobody connects */
  if (can) {
    dm.scan = timed_source_new ("bwssd-scan", G_PRIORITY_DEFAULT, on_scan, &dm, 0);
    on_scan (&dm);                     /* the first scan before anything else */
    g_source_attach (dm.scan, NULL);
  }
  watch_inputs (&dm);
  /* the unit is Type=notify: systemd counts bwssd as started once the
   * domain's socket is served, the adopter scans and the rules are watched,
   * not once the process exists */
  int nerr = sock_systemd_notify ("READY=1");
  if (nerr < 0)
    g_printerr ("bwssd: cannot tell systemd it is ready ($NOTIFY_SOCKET): %s\n", g_strerror (-nerr));

  g_main_loop_run (dm.loop);

  sock_systemd_notify ("STOPPING=1");

  if (dm.scan) {
    g_source_destroy (dm.scan);
    g_source_unref (dm.scan);
  }
  g_clear_object (&dm.monitor);
  serve_free (dm.serve);               /* every client's flow back to the kernel */
  adopter_free (dm.adopter);           /* every adopted flow back to the kernel */
  ctl_free (dm.ctl);
  g_source_destroy (dm.round);
  g_source_unref (dm.round);
  if (dm.linger)
    g_source_remove (dm.linger);
  adopt_watchdog_forget (&dm.watchdog);
  g_main_loop_unref (dm.loop);
  g_free (dm.user_rules);
  return dm.status;
}

int
main (int argc, char **argv)
{
  int status = parse_options (&argc, &argv);
  if (status)
    return status;
  if (opt_watchdog_for > 0 && opt_ledger)
    return adopt_watchdog_main (opt_watchdog_for, opt_ledger);
  if (opt_check)
    return check_rules ();
  if (opt_restore)
    return restore_left ();
  AdoptRules *rules = rules_at_start ();
  if (rules == NULL)
    return 2;
  struct rlimit rl;                      /* a duplicate of every flow's socket: as many as allowed */
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit (RLIMIT_NOFILE, &rl);
  }
  int lock, listen_fd = -1;
  AdoptLedger *ledger = NULL;
  status = become_daemon (&lock, &ledger, &listen_fd);
  if (status) {
    adopt_rules_free (rules);
    return status;
  }
  status = run (listen_fd, ledger, rules);   /* the adopter owns the rules */
  g_autofree char *path = tool_domain_path (opt_domain, ".sock");
  struct stat st;
  if (path && bound.st_ino && stat (path, &st) == 0 && st.st_ino == bound.st_ino
      && st.st_dev == bound.st_dev)
    unlink (path);                           /* before the lock goes: ours */
  close (listen_fd);
  adopt_ledger_free (ledger);
  close (lock);
  return status;
}

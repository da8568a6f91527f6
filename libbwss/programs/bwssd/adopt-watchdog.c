/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-watchdog.c — see adopt-watchdog.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib-unix.h>
#include "adopt-ledger.h"
#include "adopt-watchdog.h"
#include "sys.h"

/* ---- bwssd's side ---- */

static gboolean on_watchdog_exit (gint fd, GIOCondition cond, gpointer data);

/* Starts a watchdog: a fresh execution of this executable.  Returns 0 or
 * -errno. */
static int
spawn (AdoptWatchdog *w)
{
  char daemon[16];
  g_snprintf (daemon, sizeof daemon, "%d", (int) getpid ());
  char *argv[] = { (char *) "bwssd", (char *) "--watchdog-for", daemon, (char *) "--ledger",
                   w->ledger_dir, NULL };
  pid_t pid = fork ();
  if (pid < 0)
    return -errno;
  if (pid == 0) {
    proc_exec_self (argv);             /* only exec after a fork of a threaded process */
    _exit (127);
  }
  int fd = proc_pidfd (pid);
  if (fd < 0) {
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return fd;
  }
  w->pid = pid;
  w->pidfd = fd;
  w->source = g_unix_fd_add (fd, G_IO_IN, on_watchdog_exit, w);
  return 0;
}

/* Returns TRUE if the watchdog has died WATCHDOG_RESTARTS times within
 * WATCHDOG_WINDOW_S, counting a death now. */
static gboolean
dies_too_often (AdoptWatchdog *w)
{
  gint64 now = g_get_monotonic_time ();
  w->deaths[w->n_deaths % WATCHDOG_RESTARTS] = now;
  w->n_deaths++;
  gint64 oldest = w->deaths[w->n_deaths % WATCHDOG_RESTARTS];
  return w->n_deaths >= WATCHDOG_RESTARTS && now - oldest < WATCHDOG_WINDOW_S * G_USEC_PER_SEC;
}

/* The watchdog died: another one, or give up. */
static gboolean
on_watchdog_exit (gint fd, GIOCondition cond, gpointer data)
{
  AdoptWatchdog *w = data;
  int status = 0;
  pid_t dead = w->pid;
  if (waitpid (dead, &status, WNOHANG) != dead)
    status = 0;
  close (w->pidfd);
  w->pidfd = -1;
  w->pid = 0;
  w->source = 0;
  g_autofree char *how = WIFSIGNALED (status) ? g_strdup_printf ("was killed (%s)", g_strsignal (WTERMSIG (status)))
                                              : g_strdup_printf ("exited (%d)", WEXITSTATUS (status));
  int err = dies_too_often (w) ? -EAGAIN : spawn (w);
  if (err == 0) {
    g_printerr ("bwssd: its watchdog [%d] %s; started another [%d]\n", (int) dead, how, (int) w->pid);
  } else {
    g_printerr ("bwssd: its watchdog [%d] %s and %s: giving every flow back and exiting\n", (int) dead,
                how, err == -EAGAIN ? "keeps dying" : "cannot be started again");
    if (w->give_up)
      w->give_up (w->data);
  }
  return G_SOURCE_REMOVE;
}

int
adopt_watchdog_start (AdoptWatchdog *w, const char *ledger_dir, void (*give_up) (gpointer), gpointer data)
{
  memset (w, 0, sizeof *w);
  w->pidfd = -1;
  w->ledger_dir = g_strdup (ledger_dir);
  w->give_up = give_up;
  w->data = data;
  return spawn (w);
}

gboolean
adopt_watchdog_alive (AdoptWatchdog *w)
{
  return w->pid > 0 && w->pidfd >= 0 && !proc_pidfd_exited (w->pidfd);
}

void
adopt_watchdog_forget (AdoptWatchdog *w)
{
  if (w->source)
    g_source_remove (w->source);
  if (w->pidfd >= 0)
    close (w->pidfd);
  w->source = 0;
  w->pidfd = -1;
  w->pid = 0;
  g_clear_pointer (&w->ledger_dir, g_free);
}

/* ---- the watchdog's side ---- */

/* Returns once @daemon, this process's parent, has died (a pidfd: bwssd
 * started this watchdog only after it opened one of its own). */
static void
wait_for (pid_t daemon)
{
  int fd = proc_pidfd (daemon);
  if (fd >= 0 && getppid () == daemon) {
    /* opened while it was our parent, so it is that process */
    struct pollfd p = { .fd = fd, .events = POLLIN };
    while (poll (&p, 1, -1) < 0 && errno == EINTR)
      ;
  }
  if (fd >= 0)
    close (fd);
}

int
adopt_watchdog_main (pid_t daemon, const char *ledger_dir)
{
  signal (SIGTERM, SIG_IGN);
  signal (SIGINT, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
  prctl (PR_SET_NAME, "bwssd-watchdog");
  close_range (3, ~0u, 0);             /* it holds no socket, nor a pipe someone waits on */
  wait_for (daemon);
  g_autoptr (GError) error = NULL;
  AdoptLedger *l = adopt_ledger_open (ledger_dir, NULL, &error);
  if (l == NULL) {
    g_printerr ("bwssd-watchdog: %s: nothing restored\n", error->message);
    return 1;
  }
  adopt_ledger_restore_dead (l, ADOPT_LEDGER_RESTORE_WAIT_US);
  adopt_ledger_free (l);
  return 0;
}

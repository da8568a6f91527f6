/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-watchdog.h — fail-open for adopted flows, whatever dies first.  The
 * clamp bwssd sets on a duplicate of another process's socket outlives
 * bwssd, and no participant of the domain owns that socket to undo it.  The
 * clamp each adopted socket had is in the ledger (adopt-ledger.h), written
 * before bwssd touches the socket; what is left is someone alive to put it
 * back:
 *
 *   dies                        | noticed by                 | then
 *   bwssd (crash, kill -9, OOM) | its watchdog: a pidfd of   | it restores every record of a dead
 *                               | bwssd becomes readable     | daemon and exits
 *   the watchdog                | bwssd: a pidfd of the      | bwssd starts another (at most
 *                               | watchdog, a GLib source    | WATCHDOG_RESTARTS in WATCHDOG_WINDOW_S);
 *                               |                            | beyond that it gives every flow back and
 *                               |                            | exits (the give-up callback)
 *   both at once (SIGKILL of    | the next bwssd of any      | restores at start and at every scan;
 *   the unit's cgroup)          | domain, `bwssd --restore`  | the unit runs `bwssd --restore` as
 *                               | (ExecStopPost)             | ExecStopPost and restarts bwssd
 *
 * The watchdog is a fresh execution of bwssd's own executable (`bwssd
 * --watchdog-for PID --ledger DIR`: a fork of a threaded process may run
 * nothing but exec), named bwssd-watchdog.  It ignores SIGTERM, SIGINT and
 * SIGHUP, so that stopping the service (which signals the whole cgroup)
 * leaves it the time to restore; it holds no socket.  bwssd adopts nothing
 * while no watchdog of its lives.
 */
#ifndef BWSS_ADOPT_WATCHDOG_H
#define BWSS_ADOPT_WATCHDOG_H

#include <glib.h>
#include <sys/types.h>

#define WATCHDOG_RESTARTS 5
#define WATCHDOG_WINDOW_S 10

typedef struct {
  pid_t    pid;                /* 0: none */
  int      pidfd;              /* -1: none */
  guint    source;             /* watches pidfd */
  char    *ledger_dir;
  gint64   deaths[WATCHDOG_RESTARTS]; /* monotonic µs of the last deaths, a ring */
  guint    n_deaths;
  void   (*give_up) (gpointer data);
  gpointer data;
} AdoptWatchdog;

/* Starts the watchdog of this process for the ledger in @ledger_dir, and
 * watches it from the default main context: if it dies it is started again,
 * and if it dies too often (or cannot be started again) @give_up is called
 * once.  Returns 0 or -errno. */
int  adopt_watchdog_start (AdoptWatchdog *w, const char *ledger_dir, void (*give_up) (gpointer),
                           gpointer data);

/* Returns TRUE if the watchdog lives. */
gboolean adopt_watchdog_alive (AdoptWatchdog *w);

/* Stops watching the watchdog (it sees this process exit and finds nothing
 * left to restore). */
void adopt_watchdog_forget (AdoptWatchdog *w);

/* The watchdog's life (`bwssd --watchdog-for @daemon --ledger @ledger_dir`):
 * waits for @daemon (its parent) to die, restores every record of a dead
 * daemon, exits.  Returns the exit status. */
int  adopt_watchdog_main (pid_t daemon, const char *ledger_dir);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-watchdog.h — fail-open for adopted flows.  The clamp bwssd sets on a
 * duplicate of another process's socket outlives bwssd, and no participant
 * of the domain owns that socket to undo it.  So bwssd forks, first thing,
 * a watchdog joined to it by a socket pair: bwssd tells it, for each flow
 * it adopts, where the socket is (pid, fd, inode) and the clamp the kernel
 * had.  When the pair reads end-of-file (bwssd exited, crashed or was
 * killed -9: the kernel closes its end at once), the watchdog takes each
 * socket again (pidfd_getfd), puts that clamp back and exits.  It ignores
 * SIGTERM, SIGINT and SIGHUP, so that stopping the service (which signals
 * the whole cgroup) leaves it the time to do so.  It holds no socket
 * itself: a flow closed by its owner closes.
 */
#ifndef BWSS_ADOPT_WATCHDOG_H
#define BWSS_ADOPT_WATCHDOG_H

#include <glib.h>
#include <sys/types.h>

typedef struct {
  int   sock;          /* -1: no watchdog */
  pid_t pid;
} AdoptWatchdog;

/* Forks the watchdog.  Call it before any thread exists.  Returns 0 or
 * -errno (then w->sock is -1). */
int  adopt_watchdog_start (AdoptWatchdog *w);

/* Socket @inode, fd @fd of @pid, had clamp @clamp (bytes) before bwssd
 * touched it.  Returns FALSE if the watchdog is gone. */
gboolean adopt_watchdog_hold (AdoptWatchdog *w, pid_t pid, int fd, guint64 inode, guint32 clamp);

/* bwssd gave socket @inode back (or its owner closed it). */
gboolean adopt_watchdog_drop (AdoptWatchdog *w, guint64 inode);

#endif

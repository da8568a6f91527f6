/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-ledger.h — the record of the sockets adopted by the user's bwssd,
 * shared by every bwssd of the user (whatever its domain), their watchdogs
 * and `bwssd --restore`.  One file per socket, ADOPTED/<inode> in the
 * user's runtime directory (bwss_runtime_dir()), one line:
 *
 *   clamp=BYTES owner=PID fd=FD daemon=PID start=TICKS domain=NAME pidns=INODE
 *
 * the clamp the socket had before any bwssd touched it, where the socket is
 * (its owner's pid and fd), and which bwssd holds it (pid and start time,
 * its domain, the PID namespace its pids mean something in).  The file is
 * the claim: it is linked complete under its name and link() fails if the
 * name exists, so two daemons never adopt one
 * socket, and the clamp is recorded once, by the first — never the clamp a
 * daemon left behind.
 *
 *   who                        | when                               | does
 *   bwssd                      | adopting, before it registers the  | claim: make the record; or, if a dead
 *                              | socket (before any clamp changes)  | daemon's holds it, put its clamp back and
 *                              |                                    | take it over with that clamp; or refuse,
 *                              |                                    | if a live daemon's holds it
 *   bwssd                      | giving a socket back, after the    | release: remove its record
 *                              | domain put the clamp back          |
 *   bwssd (any domain)         | at start and every scan            | restore: for each record of a dead daemon,
 *   its watchdog               | when its bwssd dies                | put the recorded clamp back on the socket
 *   bwssd --restore            | the unit's ExecStopPost            | (found by owner and fd, else in /proc),
 *                              |                                    | remove the record
 *
 * A daemon is dead when its pid no longer runs with the start time it
 * recorded (a zombie is dead).  The runtime directory can be shared by
 * processes in other PID namespaces (a container, a sandbox, a test in
 * namespaces of its own), where the pid names another process or none: a
 * record of another namespace's daemon is never judged, and its sockets are
 * left to that daemon and its watchdog, which live where its pids mean
 * something.  Whoever restores or takes over a record
 * holds an exclusive flock on it and checks that the name still names the
 * file it locked; a record locked by someone else is skipped (tried again
 * at the next scan), never waited for.  Every record is read as a file
 * someone else may have put there: this user's regular file, no link
 * followed, at most a line.
 */
#ifndef BWSS_ADOPT_LEDGER_H
#define BWSS_ADOPT_LEDGER_H

#include <glib.h>
#include <sys/types.h>

#define ADOPT_LEDGER_DIR "adopted"

/* How long bwssd at start, its watchdog and `bwssd --restore` try again
 * the records another process holds (one restoring them too), µs. */
#define ADOPT_LEDGER_RESTORE_WAIT_US (2 * G_USEC_PER_SEC)

typedef struct AdoptLedger AdoptLedger;

/* Opens the ledger in directory @dir (NULL: ADOPT_LEDGER_DIR in the runtime
 * directory), created 0700 if missing and refused unless it is a directory
 * of this user closed to others; records made through it name this process
 * and @domain (NULL for one that only restores).  Returns NULL with @error
 * set. */
AdoptLedger *adopt_ledger_open (const char *dir, const char *domain, GError **error);
void adopt_ledger_free (AdoptLedger *l);

/* The ledger's directory. */
const char *adopt_ledger_dir (const AdoptLedger *l);

/* Claims socket @inode, which @fd (ours) duplicates and @owner holds as
 * @owner_fd.  Returns 0 with *@clamp the clamp it had before any bwssd
 * touched it (put back on it if a dead daemon left another); -EALREADY with
 * *@holder ("bwssd PID of domain NAME", g_free() it) if a live daemon holds
 * it; -EBUSY if another process restores it right now (try again later);
 * or -errno. */
int adopt_ledger_claim (AdoptLedger *l, guint64 inode, int fd, pid_t owner, int owner_fd,
                        guint32 *clamp, char **holder);

/* Removes this process's record of @inode, if it has one. */
void adopt_ledger_release (AdoptLedger *l, guint64 inode);

/* Returns TRUE, with *@holder as above, if a live daemon other than this
 * process holds @inode. */
gboolean adopt_ledger_held_elsewhere (AdoptLedger *l, guint64 inode, char **holder);

/* Puts back the clamp of every socket whose record names a dead daemon and
 * removes those records; a record someone else holds (a bwssd restoring it
 * too) is tried again for up to @wait_us (0: skipped).  Returns the number
 * of sockets given their clamp back. */
guint adopt_ledger_restore_dead (AdoptLedger *l, gint64 wait_us);

#endif

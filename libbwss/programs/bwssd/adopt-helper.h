/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-helper.h — bwssd's side of bwss-sockd (libbwss/programs/sockd/).  Where
 * Yama's ptrace_scope = 1 refuses bwssd pidfd_getfd(2) on the user's
 * processes that are not its descendants, the system service hands bwssd
 * the socket instead, after the checks of docs/adopt.md ("bwss-sockd"):
 * the socket and its process are the user's, the process dumpable.
 *
 * adopt_proc_take() asks it when pidfd_getfd says EPERM, or always (and
 * never pidfd_getfd) when forced: bwssd --adopt-helper PATH, or
 * $BWSSD_ADOPT_HELPER=PATH — for the tests on kernels without Yama, and
 * for administrators who want bwssd to take sockets only that way.  The
 * watchdog, a fork of bwssd, asks the same way.
 */
#ifndef BWSS_ADOPT_HELPER_H
#define BWSS_ADOPT_HELPER_H

#include <glib.h>
#include <sys/types.h>

/* A refusal of the helper is returned as -(ADOPT_HELPER_ERRNO_BASE +
 * status): above every errno (the kernel's MAX_ERRNO is 4095). */
#define ADOPT_HELPER_ERRNO_BASE 4096

/* How long bwssd waits for the helper's answer (a socket-activated helper
 * starts first). */
#define ADOPT_HELPER_TIMEOUT_MS 1000

/* The GOptionArgFunc of bwssd's --adopt-helper PATH: forces the helper at
 * PATH, in this process and (through $BWSSD_ADOPT_HELPER) in what it
 * executes.  Call it before any thread exists (it sets the environment). */
gboolean adopt_helper_option (const char *name, const char *value, gpointer data, GError **error);

/* Returns the socket of the forced helper (--adopt-helper, else
 * $BWSSD_ADOPT_HELPER), or NULL if the helper is not forced. */
const char *adopt_helper_forced (void);

/* Asks the helper (the forced one, else the system's at
 * /run/bwss-sockd.sock) for fd @fd of @pid, the socket @inode.  Returns the
 * duplicate (close-on-exec), -ESRCH (the process is gone), -ESTALE (the fd
 * is no longer that socket), -(ADOPT_HELPER_ERRNO_BASE + a SockdStatus)
 * for a refusal or a helper that does not answer, or @absent if the helper
 * is not forced and not installed (no socket at its path). */
int adopt_helper_take (pid_t pid, int fd, guint64 inode, int absent);

/* Returns why a take failed with -@err if the helper said so (static),
 * else NULL. */
const char *adopt_helper_why (int err);

/* Returns TRUE if the system's helper is installed (its socket is there). */
gboolean adopt_helper_present (void);

/* Returns the sentence saying what bwssd adopts through the helper: only
 * through it if forced, else its descendants itself and the rest through
 * the helper (Yama ptrace_scope 1).  Sets *@can to TRUE.  g_free() it. */
char *adopt_helper_capability (gboolean *can);

#endif

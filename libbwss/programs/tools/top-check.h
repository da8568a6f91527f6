/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * top-check.h — `bwss-top --check`: is protection on for this user?  One
 * screen, one line per part that must work, and the one command that turns
 * it on when it is off:
 *
 *   bwssd       runs for this user's domain (it answers on the domain's
 *               socket with its status);
 *   adoption    what that bwssd says it can adopt: every download of the
 *               user, or only its own children, or nothing;
 *   bwss-sockd  reachable where Yama's ptrace_scope = 1 needs it (a
 *               connect() to its socket), "not needed" elsewhere;
 *   plugin      GStreamer finds bwsshttpsrc and it ranks above souphttpsrc
 *               (so playbin picks it), asked of GStreamer's own registry:
 *               libgstreamer is loaded at run time, so bwss-top needs no
 *               GStreamer and a host without it has no player to protect.
 *
 * The fix printed is that of the first part that fails, in the order above
 * (a plugin without bwssd protects nothing against other downloads).
 */
#ifndef BWSS_TOP_CHECK_H
#define BWSS_TOP_CHECK_H

#include <json-glib/json-glib.h>

/* Exit status of `bwss-top --check` when protection is off. */
#define TOP_CHECK_OFF 1

/* Prints the check for domain @domain (the name in force; @named: given
 * with --domain, which the fix then names too), @bwssd the
 * status of a live bwssd of it (NULL if none runs; bwss-top reads it),
 * @runtime_problem why the runtime directory is refused (NULL if it is
 * usable).  Returns 0 if protection is on, TOP_CHECK_OFF if not. */
int top_check (const char *domain, gboolean named, JsonObject *bwssd, const char *runtime_problem);

#endif

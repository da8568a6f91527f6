/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * serve.h — bwssd's clients: every process that hands it flows or asks for
 * statistics, over the domain's socket (the protocol: libbwss's wire.h).
 *
 *   event                            | then
 *   a connection                     | kept if its peer (SO_PEERCRED) is this user
 *   REGISTER (the socket attached)   | the socket into the controller (ctl.h) under
 *                                    | the peer's pid, unless it is not a connected
 *                                    | TCP socket, already there, or the client has
 *                                    | SERVE_CLIENT_MAX_FLOWS: REJECT; a socket the
 *                                    | adopter holds is given back to it first (the
 *                                    | owner's own preferences win)
 *   UPDATE, LATE, UNREGISTER         | on that client's flow of that id (none, or a
 *                                    | late figure out of range: ignored)
 *   LIST, GET_DOMAIN, GET_FLOW,      | the answer: the controller's figures, bwssd's
 *   STATUS                           | status (ServeFuncs.status)
 *   a client's fd no longer its      | its flow removed (serve_check_held(): bwssd's
 *   socket (closed without telling)  | duplicate would keep the connection open)
 *   the connection ends, or a        | every flow of that client given back and
 *   message is malformed             | removed; the connection closed
 *
 * Each client's messages are read SERVE_BUDGET at a time: one that floods
 * delays only itself.  A client that sends faster than bwssd reads (a
 * burst of thousands of hand-overs, bwssd slow on a loaded machine) is held
 * back by its connection's buffer: its messages wait in its own queue
 * (libbwss's client.c) and come as bwssd reads them; bwssd never ends a
 * connection for that, only for its end or a malformed message.  What bwssd
 * sends a client is never waited for: a client that does not read loses its
 * own replies and read rates.
 */
#ifndef BWSS_SERVE_H
#define BWSS_SERVE_H

#include <glib.h>
#include "ctl.h"

#define SERVE_CLIENT_MAX_FLOWS 4096  /* one client cannot fill the domain (10240) */
#define SERVE_BUDGET 64               /* messages of one client per wakeup */

typedef struct Serve Serve;

typedef struct {
  /* the set of clients or their flows changed */
  void     (*changed) (gpointer data);
  /* the adopter holds @inode: give it back (a client registers it) */
  void     (*yield) (guint64 inode, gpointer data);
  /* a client switched sharing off (@on) or on again */
  void     (*suspend) (gboolean on, gpointer data);
  /* bwssd's status, a JSON object (g_free()d) */
  char    *(*status) (gpointer data);
  gpointer data;
} ServeFuncs;

/* Serves the clients that connect to @listen_fd (the domain's socket). */
Serve *serve_new (Ctl *ctl, int listen_fd, const ServeFuncs *funcs);
void   serve_free (Serve *s);        /* every client's flows given back */
guint  serve_clients (const Serve *s);
/* Removes the flows whose client no longer holds their socket, of those
 * in @slice of @slices (their places in the list of handed-over flows
 * modulo @slices, so a round's check reads only its own: a caller that
 * goes through the slices one a round spreads the checks' cost over the
 * rounds). */
void   serve_check_held (Serve *s, guint slice, guint slices);
/* CtlFuncs.pace: tells @f's client its read rate. */
void   serve_pace (CtlFlow *f, double rate, gpointer data);

#endif

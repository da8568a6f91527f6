/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ctl.h — bwssd's controller: the domain's flows, whoever brought them in
 * (a client handed its socket over, serve.c; the adopter took one,
 * adopter.c), each held as bwssd's own duplicate of the socket.  A round
 * (ctl_round(), every control period while a flow moves data; while every
 * flow is at rest, when the first is due) measures the
 * flows the laws ask about through the duplicate (TCP_INFO and SIOCINQ:
 * what sock_diag would say, for half its kernel time), runs the laws
 * (bwss/control.h) and sets
 * each window and, for a flow whose owner paces its reads, its receive
 * buffer through the duplicate; the read rate goes to its owner
 * (CtlFuncs.pace).  A flow leaves by ctl_remove(): its socket given back
 * (the clamp it had when it came in, the largest buffer if pacing fixed
 * it) and the duplicate closed.
 */
#ifndef BWSS_CTL_H
#define BWSS_CTL_H

#include <glib.h>
#include <bwss/domain.h>
#include "sys.h"

/* Flows whose socket is measured not established this many times in a row
 * are released (a connection closed by its peer, reset or timed out). */
#define CTL_GONE_ROUNDS 3

typedef struct Ctl Ctl;

typedef struct {
  /* what a round reads and writes, first: a round of a thousand flows
   * reads a few hundred of them, each from as few cache lines as can be */
  guint64       id;          /* the controller's id, unique in bwssd */
  int           fd;          /* bwssd's duplicate */
  guint32       applied;     /* the window set; 0 = the original clamp is in place */
  guint32       rcvbuf;      /* SO_RCVBUF set for pacing; 0 = the kernel's */
  guint32       ssthresh;    /* its tcpi_rcv_ssthresh at that measurement; 0 unread */
  gboolean      paced;       /* its owner paces its reads */
  gboolean      released;    /* closed, or no longer established: out of the laws */
  gboolean      asked;       /* measured this round (the laws said it was due) */
  gboolean      reapply;     /* the next round applies it (ctl.c reapply()) */
  gboolean      have_st;
  guint         gone;        /* measurements in a row not established */
  guint64       todo;        /* the last round that applied it */
  guint64       bytes;
  guint64       none_unread_at; /* a count of bytes received at which none was unread; G_MAXUINT64: none */
  double        pace_sent;   /* the read rate its owner was told (-1: to be told) */
  BwssFlowState st;
  gpointer      owner;       /* the client (serve.c), NULL for an adopted flow */
  guint64       owner_id;    /* its id on that client's connection */
  int           owner_fd;    /* the socket's number in that client */
  guint32       orig_clamp;  /* when it came in */
  /* the rest: its identity and what the tools show */
  KnobInfo      diag;        /* how sock_diag names it (its inode: the key) */
  BwssPrefs     prefs;
  BwssShare     share;
  guint64       group;       /* the key its group shares (0 alone) */
  pid_t         pid;         /* the socket's owner, as listed */
  pid_t         key_pid;     /* whose process group share=process joins */
  guint64       key_stream;  /* the stream share=stream joins (< 2^62, 0: none) */
  pid_t         participant; /* the client that handed it over, or bwssd */
  char          origin[BWSS_ORIGIN_MAX];
  char          comm[16];
  char          local[64];
  char          remote[64];
  double        late_fraction;        /* its client's last late-packet report, */
  double        required_prebuffer_s; /* negative if none (BwssFlowStats) */
} CtlFlow;

typedef struct {
  /* @f's owner should read at @rate bit/s (0: freely) */
  void (*pace) (CtlFlow *f, double rate, gpointer data);
  /* a round is wanted within the control period (a flow came, or its
   * preferences, group or pacing changed: it is measured at every round
   * again), however far off ctl_round() said the next one was */
  void (*wake) (gpointer data);
  gpointer data;
} CtlFuncs;

Ctl     *ctl_new (const CtlFuncs *funcs);
void     ctl_free (Ctl *c);       /* every flow given back */

/* Takes the socket @fd (a duplicate: closed on failure too), checked: a
 * connected TCP socket not in the controller yet.  Returns 0 with *@out,
 * or BWSS_EBADF, BWSS_EEXIST, BWSS_ENOSPC, BWSS_ENOMEM. */
int      ctl_add (Ctl *c, int fd, const BwssPrefs *prefs, const char *origin, pid_t pid,
                  pid_t participant, CtlFlow **out);
void     ctl_set_prefs (Ctl *c, CtlFlow *f, const BwssPrefs *prefs);
/* Puts @f in the group @share names, its key found here (a process: its
 * key_pid; a unit: that process's cgroup; a stream: its key_stream).
 * Returns 0, BWSS_EINVAL (a stream without a key) or BWSS_ENOENT (no
 * cgroup v2): then @f is left as it was. */
int      ctl_set_share (Ctl *c, CtlFlow *f, BwssShare share);
void     ctl_set_paced (Ctl *c, CtlFlow *f, gboolean paced);
void     ctl_remove (Ctl *c, CtlFlow *f);

/* One round at @now (CLOCK_MONOTONIC µs).  Returns the µs to the next one,
 * 0 if there is no flow (then none is due until one comes): as the laws
 * ask (bwss_controller_next_round(): the control period or a few, by the
 * RTTs of the flows that move data; while every flow is at rest, until the
 * first is due); a second while sharing is suspended. */
guint64  ctl_round (Ctl *c, guint64 now);
/* The control period, µs. */
guint64  ctl_period (const Ctl *c);

guint    ctl_count (const Ctl *c);
gboolean ctl_holds_inode (const Ctl *c, guint64 inode);
void     ctl_flow_stats (const Ctl *c, const CtlFlow *f, BwssFlowStats *out);
void     ctl_stats (const Ctl *c, BwssDomainStats *out);
/* Returns a new array of every flow not released (closed sockets wait
 * for their owner to remove them; the flows are the controller's). */
GPtrArray *ctl_flows (const Ctl *c);
/* Sharing off (every window back to the kernel's, the laws forgotten) or
 * on again (the laws start from their initialisation). */
void     ctl_set_suspended (Ctl *c, gboolean suspended);

#endif

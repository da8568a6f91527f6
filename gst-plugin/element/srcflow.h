/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcflow.h — the element's TCP flow in the user's BWSS domain.
 *
 * The flow follows the connection, not the request: it is registered when
 * libsoup opens a connection and stays registered while later requests run
 * on the same persistent connection (keep-alive, which adaptive demuxers
 * set), so the controller sees one video flow across fragments instead of
 * a flow joining and leaving at every fragment.  It goes when another
 * connection replaces it, on error, and when the element releases it.
 *
 * Every function takes the flow's lock: the streaming thread registers and
 * unregisters while the application reads statistics (src_flow_snapshot).
 *
 * Reading over n connections (srcstripes.h), each connection is a stripe
 * flow: it borrows the element's domain (one handle per element) and is
 * registered with the element's preferences in the element's stream
 * (bwss_flow_set_stream(), BWSS_SHARE_STREAM): the allocation counts a
 * group once, with the largest minimum of its flows, so the n connections
 * ask for the video's minimum once; the element's own flow joins the
 * stream while they run.  Each element is a stream of its own (a number
 * given in src_flow_init()): two striping elements of one player, its
 * audio and its video, are two groups, each held to its own minimum.  Locks: a
 * stripe flow's, then its parent's; never the other way round.
 */
#ifndef BWSS_SRC_FLOW_H
#define BWSS_SRC_FLOW_H

#include <gst/gst.h>
#include <bwss/domain.h>

typedef struct SrcFlow SrcFlow;

struct SrcFlow {
  GMutex      lock;
  GstObject  *owner;          /* for the debug log */
  SrcFlow    *parent;         /* a stripe flow's: whose domain it borrows */
  gboolean    grouped;        /* in the element's stream (BWSS_SHARE_STREAM) */
  guint32     stream;         /* the element's stream: its number in this process */
  BwssDomain *domain;
  gboolean    no_domain;      /* opening failed: a plain HTTP source */
  BwssFlow   *flow;
  int         fd;
  guint64     inode;          /* of the flow's socket */
  guint64     conn_id;        /* libsoup's id of the flow's connection, 0 = not yet known */
  BwssPrefs   prefs;
  BwssFlowStats   last_flow;    /* the last statistics read (the domain was busy) */
  gboolean        have_last_flow;
  BwssDomainStats last_domain;
  gboolean        have_last_domain;
};

typedef struct {
  gboolean         registered;   /* the flow is in the domain */
  gboolean         have_flow;    /* and flow holds its statistics (read now,
                                  * or the last ones while the domain is busy;
                                  * none yet for a new flow whose first read
                                  * found the domain busy) */
  BwssFlowStats    flow;
  gboolean         have_domain;
  BwssDomainStats  domain;
} SrcFlowSnapshot;

void   src_flow_init (SrcFlow *f, GstObject *owner);
/* A stripe flow of @parent's (above), grouped; @parent must outlive it. */
void   src_flow_init_stripe (SrcFlow *f, GstObject *owner, SrcFlow *parent);
/* @parent's preferences, for its stripe flows. */
void   src_flow_parent_prefs (SrcFlow *parent, BwssPrefs *out);
/* Puts the flow (now and after each new connection) in the process's
 * group, or alone again. */
void   src_flow_set_grouped (SrcFlow *f, gboolean grouped);
/* TRUE if the domain's loop is in COMPETE now (FALSE with no domain, no
 * live controller, sharing suspended, or the domain busy); *@queue_us the
 * queue it reads, µs, and *@queue_ratio that over its target (negative
 * unknown). */
gboolean src_flow_loop_view (SrcFlow *f, double *queue_us, double *queue_ratio);
/* Unregisters and closes the domain. */
void   src_flow_clear (SrcFlow *f);
/* src_flow_clear(), and the lock goes: for finalize. */
void   src_flow_destroy (SrcFlow *f);
/* A new TCP connection @fd: it becomes the flow (the previous one goes). */
void   src_flow_connected (SrcFlow *f, int fd);
/* A response arrived on libsoup's connection @conn_id: the first one names
 * the flow's connection; one on another connection ends the flow (its
 * socket is not in use). */
void   src_flow_response (SrcFlow *f, guint64 conn_id);
/* Stores the preferences and applies them to the flow if there is one. */
void   src_flow_set_prefs (SrcFlow *f, const BwssPrefs *prefs);
/* Reports the stream's late-packet figures to bwssd with the flow, if
 * there is one (bwss_flow_report_late()). */
void   src_flow_report_late (SrcFlow *f, double late_fraction, double required_prebuffer_s);
/* Unregisters now (the socket gets the kernel's window back). */
void   src_flow_release (SrcFlow *f);
/* The flow's and the domain's statistics, safe from any thread. */
/* The flow's and the domain's statistics now; while the domain's lock is
 * busy (BWSS_EBUSY) the last ones read. */
void   src_flow_snapshot (SrcFlow *f, SrcFlowSnapshot *out);
/* Unregisters the flow if its socket is gone (closed, or the fd now names
 * another socket): a persistent connection the server closed while idle. */
void   src_flow_check (SrcFlow *f);

#endif

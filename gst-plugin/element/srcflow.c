/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcflow.c — the element's flow in the BWSS domain (see srcflow.h). */
#include <string.h>
#include <sys/stat.h>
#include "srcflow.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

/* The last stream number given in this process (bwss_flow_set_stream()):
 * each element's connections are one stream of their own. */
static gint last_stream;

void
src_flow_init (SrcFlow *f, GstObject *owner)
{
  memset (f, 0, sizeof *f);
  g_mutex_init (&f->lock);
  f->owner = owner;
  f->fd = -1;
  do
    f->stream = (guint32) g_atomic_int_add (&last_stream, 1) + 1;
  while (f->stream == 0);
}

void
src_flow_init_stripe (SrcFlow *f, GstObject *owner, SrcFlow *parent)
{
  src_flow_init (f, owner);
  f->parent = parent;
  f->grouped = TRUE;
  f->stream = parent->stream;
}

void
src_flow_parent_prefs (SrcFlow *parent, BwssPrefs *out)
{
  g_mutex_lock (&parent->lock);
  *out = parent->prefs;
  g_mutex_unlock (&parent->lock);
}

/* Puts the registered flow in the element's stream, or alone.  Lock held. */
static void
apply_share_locked (SrcFlow *f)
{
  if (f->flow == NULL)
    return;
  int err = bwss_flow_set_stream (f->flow, f->grouped ? f->stream : 0);
  if (err)
    GST_WARNING_OBJECT (f->owner, "cannot set the flow's group: %s", bwss_strerror (err));
}

void
src_flow_set_grouped (SrcFlow *f, gboolean grouped)
{
  g_mutex_lock (&f->lock);
  if (f->grouped != grouped) {
    f->grouped = grouped;
    apply_share_locked (f);
  }
  g_mutex_unlock (&f->lock);
}

gboolean
src_flow_loop_view (SrcFlow *f, double *queue_us, double *queue_ratio)
{
  BwssDomainStats st;
  g_mutex_lock (&f->lock);
  gboolean live = f->domain && bwss_domain_get_stats (f->domain, &st) == 0 && st.controller_pid
                  && !st.suspended;
  g_mutex_unlock (&f->lock);
  *queue_us = live && st.queue_us >= 0.0 ? st.queue_us : -1.0;
  *queue_ratio = live && st.queue_us >= 0.0 && st.queue_target_us > 0.0 ? st.queue_us / st.queue_target_us
                                                                        : -1.0;
  return live && st.phase == BWSS_PHASE_COMPETE;
}

/* Unregisters the flow.  Lock held. */
static void
release_locked (SrcFlow *f)
{
  if (f->flow == NULL)
    return;
  GST_DEBUG_OBJECT (f->owner, "unregistering fd %d", f->fd);
  bwss_flow_unregister (f->flow);
  f->flow = NULL;
  f->fd = -1;
  f->conn_id = 0;
  f->have_last_flow = FALSE;           /* a new flow starts afresh */
}

void
src_flow_clear (SrcFlow *f)
{
  g_mutex_lock (&f->lock);
  release_locked (f);
  if (f->domain && f->parent == NULL)
    bwss_domain_close (f->domain);
  f->domain = NULL;
  g_mutex_unlock (&f->lock);
}

void
src_flow_destroy (SrcFlow *f)
{
  src_flow_clear (f);
  g_mutex_clear (&f->lock);
}

/* Opens the domain once (a stripe flow: its parent's); FALSE if there is
 * none (logged once).  Lock held. */
static gboolean
ensure_domain (SrcFlow *f)
{
  if (f->domain)
    return TRUE;
  if (f->no_domain)
    return FALSE;
  if (f->parent) {
    g_mutex_lock (&f->parent->lock);
    gboolean have = ensure_domain (f->parent);
    f->domain = f->parent->domain;
    g_mutex_unlock (&f->parent->lock);
    f->no_domain = !have;
    return have;
  }
  int err = bwss_domain_open (NULL, BWSS_DOMAIN_THREAD, &f->domain);
  if (err) {
    GST_INFO_OBJECT (f->owner, "no BWSS domain (%s): behaving as a plain HTTP source",
                     bwss_strerror (err));
    f->domain = NULL;
    f->no_domain = TRUE;
    return FALSE;
  }
  return TRUE;
}

void
src_flow_connected (SrcFlow *f, int fd)
{
  g_mutex_lock (&f->lock);
  if (!(f->flow && f->fd == fd)) {
    release_locked (f);
    if (ensure_domain (f)) {
      int err = bwss_flow_register_as (f->domain, fd, &f->prefs, "bwsshttpsrc", 0, &f->flow);
      if (err) {
        GST_WARNING_OBJECT (f->owner, "cannot register the connection: %s", bwss_strerror (err));
        f->flow = NULL;
      } else {
        struct stat st;
        f->fd = fd;
        f->inode = fstat (fd, &st) == 0 ? (guint64) st.st_ino : 0;
        f->conn_id = 0;
        if (f->grouped)
          apply_share_locked (f);
        GST_INFO_OBJECT (f->owner, "flow registered: fd %d, priority %d, min %.0f bit/s, weight %g%s",
                         fd, f->prefs.priority, f->prefs.min_rate_bps, f->prefs.weight,
                         f->grouped ? ", the element's stream" : "");
      }
    }
  }
  g_mutex_unlock (&f->lock);
}

void
src_flow_response (SrcFlow *f, guint64 conn_id)
{
  if (conn_id == 0)
    return;
  g_mutex_lock (&f->lock);
  if (f->flow && f->conn_id == 0) {
    f->conn_id = conn_id;
  } else if (f->flow && f->conn_id != conn_id) {
    /* libsoup took another pooled connection whose socket we never saw */
    GST_DEBUG_OBJECT (f->owner, "request on connection %" G_GUINT64_FORMAT ", not the flow's", conn_id);
    release_locked (f);
  }
  g_mutex_unlock (&f->lock);
}

void
src_flow_report_late (SrcFlow *f, double late_fraction, double required_prebuffer_s)
{
  g_mutex_lock (&f->lock);
  if (f->flow)
    bwss_flow_report_late (f->flow, late_fraction, required_prebuffer_s);
  g_mutex_unlock (&f->lock);
}

void
src_flow_set_prefs (SrcFlow *f, const BwssPrefs *prefs)
{
  g_mutex_lock (&f->lock);
  gboolean changed = f->prefs.priority != prefs->priority || f->prefs.weight != prefs->weight
                     || f->prefs.min_rate_bps != prefs->min_rate_bps;
  f->prefs = *prefs;
  if (f->flow && changed) {
    int err = bwss_flow_set_prefs (f->flow, prefs);
    if (err)
      GST_WARNING_OBJECT (f->owner, "cannot update the flow's preferences: %s", bwss_strerror (err));
    else
      GST_DEBUG_OBJECT (f->owner, "preferences: priority %d, min %.0f bit/s, weight %g",
                        prefs->priority, prefs->min_rate_bps, prefs->weight);
  }
  g_mutex_unlock (&f->lock);
}

void
src_flow_release (SrcFlow *f)
{
  g_mutex_lock (&f->lock);
  release_locked (f);
  g_mutex_unlock (&f->lock);
}

void
src_flow_snapshot (SrcFlow *f, SrcFlowSnapshot *out)
{
  memset (out, 0, sizeof *out);
  g_mutex_lock (&f->lock);
  int err = f->flow ? bwss_flow_get_stats (f->flow, &out->flow) : BWSS_ENOENT;
  if (err == 0) {
    f->last_flow = out->flow;
    f->have_last_flow = TRUE;
  } else if (err == BWSS_EBUSY && f->have_last_flow) {
    out->flow = f->last_flow;            /* the domain is busy: its last word */
    err = 0;
  }
  out->registered = f->flow != NULL;
  out->have_flow = err == 0;
  err = f->domain ? bwss_domain_get_stats (f->domain, &out->domain) : BWSS_ENOENT;
  if (err == 0) {
    f->last_domain = out->domain;
    f->have_last_domain = TRUE;
  } else if (err == BWSS_EBUSY && f->have_last_domain) {
    out->domain = f->last_domain;
    err = 0;
  }
  out->have_domain = err == 0;
  g_mutex_unlock (&f->lock);
}

void
src_flow_check (SrcFlow *f)
{
  g_mutex_lock (&f->lock);
  struct stat st;
  if (f->flow && (fstat (f->fd, &st) != 0 || (guint64) st.st_ino != f->inode)) {
    GST_DEBUG_OBJECT (f->owner, "the flow's socket is gone");
    release_locked (f);
  }
  g_mutex_unlock (&f->lock);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcstats.c — the element's statistics (see srcstats.h). */
#include "srcstats.h"

double
src_stats_rate_bps (guint64 bytes, gint64 span_us)
{
  return span_us > 0 ? (double) bytes * 8.0 * 1e6 / (double) span_us : 0.0;
}

void
src_stats_init (SrcStats *s)
{
  BwssParams defaults;
  memset (s, 0, sizeof *s);
  g_mutex_init (&s->lock);
  bwss_params_init (&defaults);
  s->meter_step_us = defaults.meter_step_us;
  bwss_estimator_init (&s->meter);
  s->connections = 1;
}

void
src_stats_clear (SrcStats *s)
{
  if (s->last)
    gst_structure_free (s->last);
  g_mutex_clear (&s->lock);
}

void
src_stats_reset (SrcStats *s)
{
  g_mutex_lock (&s->lock);
  s->bytes = 0;
  s->start_us = s->next_us = 0;
  bwss_estimator_init (&s->meter);
  s->current_bps = 0;
  s->late_on = FALSE;
  s->bitrate = 0;
  s->source = NULL;
  s->min_rate = 0;
  s->connections = 1;
  g_mutex_unlock (&s->lock);
}

void
src_stats_set_connections (SrcStats *s, guint n)
{
  g_mutex_lock (&s->lock);
  s->connections = n;
  g_mutex_unlock (&s->lock);
}

double
src_stats_current_rate (SrcStats *s)
{
  g_mutex_lock (&s->lock);
  double r = s->current_bps;
  g_mutex_unlock (&s->lock);
  return r;
}

gboolean
src_stats_add (SrcStats *s, gsize n, gint64 now, guint64 interval_ns)
{
  gboolean due = FALSE;
  gint64 interval_us = (gint64) MIN (interval_ns / 1000, (guint64) G_MAXINT64 / 2);
  g_mutex_lock (&s->lock);
  if (s->start_us == 0) {
    s->start_us = now;
    s->next_us = now + interval_us;
    bwss_estimator_sample (&s->meter, (uint64_t) now, 0, 0, 0.0, s->meter_step_us);
  }
  s->bytes += n;
  /* φ = 0: only the meter, the element has no use for the FCS's R */
  bwss_estimator_sample (&s->meter, (uint64_t) now, s->bytes, 0, 0.0, s->meter_step_us);
  if (s->late_on)
    bwss_late_add (&s->late, (uint64_t) (now - s->start_us), s->bytes);
  if (interval_us && now >= s->next_us) {
    s->current_bps = MAX (bwss_estimator_mean (&s->meter, (uint64_t) interval_us), 0.0);
    s->next_us = now + interval_us;
    due = TRUE;
  }
  g_mutex_unlock (&s->lock);
  return due;
}

void
src_stats_set_stream (SrcStats *s, guint64 bitrate, const char *source, double min_rate)
{
  g_mutex_lock (&s->lock);
  s->bitrate = bitrate;
  s->source = source;
  s->min_rate = min_rate;
  if (bitrate && !s->late_on && bwss_late_init (&s->late, (double) bitrate, LATE_PACKET_BYTES, NULL, 0) == 0)
    s->late_on = TRUE;
  g_mutex_unlock (&s->lock);
}

void
src_stats_finish (SrcStats *s)
{
  g_mutex_lock (&s->lock);
  if (s->late_on)
    bwss_late_finish (&s->late);
  g_mutex_unlock (&s->lock);
}

/* Lock held. */
static GstStructure *
build (SrcStats *s, gint64 now, const SrcFlowSnapshot *snap)
{
  const BwssFlowStats *fs = &snap->flow;
  gboolean reg = snap->registered && snap->have_flow;   /* the flow's figures are known */
  gboolean live = snap->have_domain && snap->domain.controller_pid;
  GstStructure *st = gst_structure_new ("bwss-stats",
      "bytes", G_TYPE_UINT64, s->bytes,
      "mean-rate", G_TYPE_DOUBLE, s->start_us ? src_stats_rate_bps (s->bytes, now - s->start_us) : 0.0,
      "current-rate", G_TYPE_DOUBLE, s->current_bps,
      "target-rate", G_TYPE_DOUBLE, reg && fs->controlled ? fs->target_bps : -1.0,
      "min-rate", G_TYPE_DOUBLE, s->min_rate,
      "bitrate", G_TYPE_UINT64, s->bitrate,
      "bitrate-source", G_TYPE_STRING, s->source ? s->source : "none",
      "sigma", G_TYPE_DOUBLE, live ? snap->domain.sigma_bps : -1.0,
      "loop-phase", G_TYPE_STRING, live ? bwss_phase_name (snap->domain.phase) : "none",
      "rtt", G_TYPE_UINT64, (guint64) (reg ? fs->rtt_us : 0) * GST_USECOND,
      "window", G_TYPE_UINT, reg ? fs->window_bytes : 0,
      "registered", G_TYPE_BOOLEAN, snap->registered,
      "controlled", G_TYPE_BOOLEAN, reg && fs->controlled,
      "connections", G_TYPE_UINT, s->connections, NULL);
  /* what the loop does for a user (bwss_phase_mode()): absent where
   * nothing is decided (no live controller, sharing suspended, idle) */
  const char *mode = live && !snap->domain.suspended ? bwss_phase_mode (snap->domain.phase) : NULL;
  if (mode)
    gst_structure_set (st, "loop-mode", G_TYPE_STRING, mode, NULL);
  if (s->late_on) {
    uint64_t t = s->start_us ? (uint64_t) (now - s->start_us) : 0;
    static const char *names[] = { "late-0.5", "late-1", "late-2", "late-4", "late-8" };
    for (size_t i = 0; i < s->late.n_thresholds && i < G_N_ELEMENTS (names); i++)
      gst_structure_set (st, names[i], G_TYPE_DOUBLE, bwss_late_fraction (&s->late, i, t), NULL);
    gst_structure_set (st, "required-prebuffer", G_TYPE_DOUBLE, bwss_late_required_prebuffer (&s->late, t), NULL);
  }
  return st;
}

GstStructure *
src_stats_publish (SrcStats *s, gint64 now, SrcFlow *flow)
{
  SrcFlowSnapshot snap;
  src_flow_snapshot (flow, &snap);      /* its own lock, taken first */
  g_mutex_lock (&s->lock);
  GstStructure *st = build (s, now, &snap);
  if (s->last)
    gst_structure_free (s->last);
  s->last = gst_structure_copy (st);
  g_mutex_unlock (&s->lock);
  return st;
}

GstStructure *
src_stats_get (SrcStats *s, SrcFlow *flow)
{
  SrcFlowSnapshot snap;
  src_flow_snapshot (flow, &snap);
  g_mutex_lock (&s->lock);
  GstStructure *st = s->last ? gst_structure_copy (s->last) : build (s, g_get_monotonic_time (), &snap);
  g_mutex_unlock (&s->lock);
  return st;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flowmodel.c — see flowmodel.h for the model. */
#include <math.h>
#include <string.h>
#include "flowmodel.h"

void
model_init (Model *m, double capacity_bps, double max_queue_s)
{
  memset (m, 0, sizeof *m);
  m->capacity_bps = capacity_bps;
  m->max_queue_s = max_queue_s;
}

size_t
model_add (Model *m, double base_rtt_s)
{
  ModelFlow *f = &m->f[m->n];
  memset (f, 0, sizeof *f);
  f->active = true;
  f->base_rtt_s = base_rtt_s;
  f->rtt_s = base_rtt_s;
  return m->n++;
}

/* Returns flow @f's demand at queueing delay @q, bit/s (INFINITY if none). */
static double
demand (const ModelFlow *f, double q)
{
  double d = INFINITY;
  if (f->window_bytes)
    d = f->window_bytes * 8.0 / (f->base_rtt_s + q);
  if (f->path_limit_bps > 0 && f->path_limit_bps < d)
    d = f->path_limit_bps;
  if (f->source_bps > 0 && f->source_bps < d)
    d = f->source_bps;
  return d;
}

static double
total_demand (const Model *m, double q)
{
  double s = 0;
  for (size_t i = 0; i < m->n; i++)
    if (m->f[i].active)
      s += demand (&m->f[i], q);
  return s;
}

/* Weighted max-min share of @avail with weights 1/RTT and caps demand(q). */
static void
water_fill (Model *m, double avail, double q)
{
  bool done[MODEL_MAX_FLOWS] = { false };
  for (size_t i = 0; i < m->n; i++) {
    m->f[i].rate_bps = 0;
    done[i] = !m->f[i].active;
  }
  for (;;) {
    double wsum = 0;
    for (size_t i = 0; i < m->n; i++)
      if (!done[i])
        wsum += 1.0 / (m->f[i].base_rtt_s + q);
    if (wsum == 0 || avail <= 0)
      break;
    bool capped = false;
    for (size_t i = 0; i < m->n; i++) {
      if (done[i])
        continue;
      double share = avail * (1.0 / (m->f[i].base_rtt_s + q)) / wsum;
      double d = demand (&m->f[i], q);
      if (d <= share) {
        m->f[i].rate_bps = d;
        avail -= d;
        done[i] = true;
        capped = true;
      }
    }
    if (!capped) {
      for (size_t i = 0; i < m->n; i++)
        if (!done[i])
          m->f[i].rate_bps = avail * (1.0 / (m->f[i].base_rtt_s + q)) / wsum;
      break;
    }
  }
}

void
model_solve (Model *m)
{
  double avail = m->capacity_bps - m->cross_bps;
  if (avail < 0)
    avail = 0;
  double q;
  if (total_demand (m, 0) <= avail) {
    q = 0;
    for (size_t i = 0; i < m->n; i++)
      m->f[i].rate_bps = m->f[i].active ? demand (&m->f[i], 0) : 0;
  } else if (isfinite (total_demand (m, m->max_queue_s))
             && total_demand (m, m->max_queue_s) <= avail) {
    double lo = 0, hi = m->max_queue_s;
    for (int it = 0; it < 60; it++) {
      double mid = (lo + hi) / 2;
      if (total_demand (m, mid) > avail)
        lo = mid;
      else
        hi = mid;
    }
    q = hi;
    for (size_t i = 0; i < m->n; i++)
      m->f[i].rate_bps = m->f[i].active ? demand (&m->f[i], q) : 0;
  } else {
    q = m->max_queue_s;
    water_fill (m, avail, q);
  }
  m->queue_s = q;
  for (size_t i = 0; i < m->n; i++)
    m->f[i].rtt_s = m->f[i].base_rtt_s + q;
}

void
model_advance (Model *m, double dt_s)
{
  for (size_t i = 0; i < m->n; i++)
    if (m->f[i].active)
      m->f[i].bytes += (uint64_t) llround (m->f[i].rate_bps * dt_s / 8.0);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flowmodel.c — see flowmodel.h for the model. */
#include <math.h>
#include <string.h>
#include "flowmodel.h"

#define INITIAL_CWND_SEGMENTS 10       /* RFC 6928 */
#define MIN_CWND_SEGMENTS     2
#define DEFAULT_AQM_INTERVAL  0.100    /* CoDel's interval */
#define SUB_MSS_YIELD         0.5      /* a window below one MSS: half of it per RTT */

void
model_init (Model *m, double capacity_bps, double max_queue_s, double dt_s)
{
  memset (m, 0, sizeof *m);
  m->capacity_bps = capacity_bps;
  m->max_queue_s = max_queue_s;
  m->dt_s = dt_s;
  m->aqm_interval_s = DEFAULT_AQM_INTERVAL;
  m->sub_mss_yield = SUB_MSS_YIELD;
  m->above_since_s = -1.0;
}

size_t
model_add (Model *m, double base_rtt_s)
{
  ModelFlow *f = &m->f[m->n];
  memset (f, 0, sizeof *f);
  f->active = true;
  f->base_rtt_s = base_rtt_s;
  f->rtt_s = base_rtt_s;
  f->cwnd_bytes = INITIAL_CWND_SEGMENTS * MODEL_MSS;
  f->ssthresh_bytes = INFINITY;
  f->last_loss_s = -INFINITY;
  f->min_rtt_us = (uint32_t) ((base_rtt_s + model_queued_bits (m) / m->capacity_bps) * 1e6);
  return m->n++;
}

double
model_queued_bits (const Model *m)
{
  double q = m->cross_queued_bits;
  for (size_t i = 0; i < m->n; i++)
    q += m->f[i].queued_bits;
  return q;
}

/* Returns true if flow @f's path limit binds at sending rate @rate. */
static bool
path_binds (const ModelFlow *f, double rate)
{
  return f->path_limit_bps > 0 && rate >= f->path_limit_bps;
}

/* Returns the rate flow @f sends at now, bit/s, and whether its congestion
 * window is what limits it (in *cwnd_limited). */
static double
sending_rate (const Model *m, ModelFlow *f, double q, bool *cwnd_limited)
{
  double rtt = f->base_rtt_s + q;
  double adv = f->window_bytes ? (double) f->window_bytes : INFINITY;
  if (adv < MODEL_MSS)
    adv *= m->sub_mss_yield;
  double w = f->cwnd_bytes < adv ? f->cwnd_bytes : adv;
  double rate = w * 8.0 / rtt;
  double other = INFINITY;
  if (f->source_bps > 0)
    other = f->source_bps;
  if (f->path_limit_bps > 0 && f->path_limit_bps < other)
    other = f->path_limit_bps;
  f->read_bound = false;
  if (f->read_bps > 0 && f->read_bps < other) {
    other = f->read_bps;              /* the window opens by what is read */
    f->read_bound = f->read_bps < rate;
  }
  *cwnd_limited = f->cwnd_bytes < adv && rate <= other;
  if (path_binds (f, rate)) {
    /* the queue elsewhere stretches the RTT the window is spread over */
    double r2 = w * 8.0 / (rtt + f->path_delay_s);
    if (r2 < rate)
      rate = r2 > f->path_limit_bps ? f->path_limit_bps : r2;
  }
  return rate < other ? rate : other;
}

/* A loss seen by @f at @now: Reno halves its window, once per RTT. */
static void
lose (ModelFlow *f, double now)
{
  if (now - f->last_loss_s < f->rtt_s)
    return;
  f->last_loss_s = now;
  f->cwnd_bytes /= 2.0;
  if (f->cwnd_bytes < MIN_CWND_SEGMENTS * MODEL_MSS)
    f->cwnd_bytes = MIN_CWND_SEGMENTS * MODEL_MSS;
  f->ssthresh_bytes = f->cwnd_bytes;
  f->losses++;
}

/* Grows @f's cwnd for @acked_bytes acknowledged (slow start or +1 MSS per
 * window), if the cwnd is what limits it. */
static void
grow (ModelFlow *f, double acked_bytes, bool cwnd_limited)
{
  if (!cwnd_limited || acked_bytes <= 0)
    return;
  if (f->cwnd_bytes < f->ssthresh_bytes)
    f->cwnd_bytes += acked_bytes;
  else
    f->cwnd_bytes += MODEL_MSS * acked_bytes / f->cwnd_bytes;
  if (f->window_bytes && f->cwnd_bytes > 2.0 * f->window_bytes)
    f->cwnd_bytes = 2.0 * f->window_bytes;   /* nothing beyond what it may send */
}

/* The receiver's RTT estimate: one ms-granular sample per two segments,
 * rtt8 += sample − rtt8/8 (tcp_rcv_rtt_update). */
static void
sample_rtt (ModelFlow *f, double received_bits)
{
  f->seg_credit += received_bits / (8.0 * MODEL_MSS) / 2.0;
  double sample_us = floor (f->rtt_s * 1e3) * 1e3;
  if (sample_us < 1000.0)
    sample_us = 1000.0;
  while (f->seg_credit >= 1.0) {
    f->seg_credit -= 1.0;
    if (f->rcv_rtt8_us == 0)
      f->rcv_rtt8_us = 8.0 * sample_us;
    else
      f->rcv_rtt8_us += sample_us - f->rcv_rtt8_us / 8.0;
  }
  f->rcv_rtt_us = (uint32_t) (f->rcv_rtt8_us / 8.0);
}

void
model_step (Model *m)
{
  double dt = m->dt_s, c = m->capacity_bps;
  double q = model_queued_bits (m) / c;
  size_t slot = m->step % MODEL_PIPE_STEPS;
  bool cwnd_limited[MODEL_MAX_FLOWS];
  double arriving[MODEL_MAX_FLOWS], total_in = m->cross_bps * dt;

  /* 1. senders: what leaves them now, what reaches the bottleneck now */
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    f->send_bps = f->active ? sending_rate (m, f, q, &cwnd_limited[i]) : 0.0;
    f->pipe[slot] = f->send_bps;
    size_t lag = (size_t) llround (f->base_rtt_s / 2.0 / dt);
    if (lag >= MODEL_PIPE_STEPS)
      lag = MODEL_PIPE_STEPS - 1;
    double in = m->step >= lag ? f->pipe[(m->step - lag) % MODEL_PIPE_STEPS] : 0.0;
    arriving[i] = in * dt;
    total_in += arriving[i];
  }

  /* 2. the buffer: drop-tail beyond max_queue_s */
  double queued = model_queued_bits (m);
  double room = m->max_queue_s * c + c * dt - queued;
  double keep = 1.0;
  m->dropped_bits = 0.0;
  if (total_in > room) {
    keep = room > 0 ? room / total_in : 0.0;
    m->dropped_bits = total_in * (1.0 - keep);
  }
  m->cross_queued_bits += m->cross_bps * dt * keep;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    f->queued_bits += arriving[i] * keep;
    if (keep < 1.0 && arriving[i] > 0)
      lose (f, m->now_s);
  }

  /* 3. the AQM, if any: losses while the delay stays above its target */
  if (m->aqm_target_s > 0) {
    if (q > m->aqm_target_s) {
      if (m->above_since_s < 0)
        m->above_since_s = m->now_s;
      else if (m->now_s - m->above_since_s >= m->aqm_interval_s) {
        for (size_t i = 0; i < m->n; i++)
          if (m->f[i].queued_bits > 0)
            lose (&m->f[i], m->now_s);
        m->above_since_s = m->now_s;    /* next drop one interval later */
      }
    } else {
      m->above_since_s = -1.0;
    }
  }

  /* 4. service: C·dt bits leave, FIFO shares */
  queued = model_queued_bits (m);
  double serve = c * dt, frac = queued > serve ? serve / queued : 1.0;
  double cross_out = m->cross_queued_bits * frac;
  m->cross_queued_bits -= cross_out;
  m->cross_rate_bps = cross_out / dt;
  m->queue_s = (queued - queued * frac) / c;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    double out = f->queued_bits * frac;
    f->queued_bits -= out;
    f->rate_bps = out / dt;
    f->bits_frac += out;
    uint64_t whole = (uint64_t) (f->bits_frac / 8.0);
    f->bytes += whole;
    f->bits_frac -= 8.0 * (double) whole;
    f->rtt_s = f->base_rtt_s + m->queue_s
        + (path_binds (f, f->send_bps) ? f->path_delay_s : 0.0);
    sample_rtt (f, out);
    if (f->active)
      grow (f, out / 8.0, cwnd_limited[i]);
  }
  m->step++;
  m->now_s += dt;
}

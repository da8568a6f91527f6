/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * estimator.c — the rate estimator: the FCS's R (paper Sec. IV-B) and the
 * windowed mean rate every other user needs, from one byte counter.
 *
 * R is estimated at the end of successive periods φ.  R_φ is the number of
 * bits received during the period divided by its length; the estimate is an
 * exponentially weighted moving average R ← ε·R + (1−ε)·R_φ.  After a window
 * change past estimates are irrelevant: the next period starts when the
 * change takes effect and its R_φ replaces R.
 *
 * The meter keeps the counter's history, one sample per meter step, in a
 * ring.  The mean over a window W ending at the last sample t_n is
 *     (B(t_n) − B(t_n − W)) / W
 * with B(t_n − W) interpolated linearly between the two samples around it,
 * so a window that is not a multiple of the step is still measured over its
 * own length (the counter is cumulative: the interpolation error is at most
 * the bytes of one step, spread over the window).
 *
 * Byte counts are cumulative (tcpi_bytes_received or the reads).  A period is
 * measured against the time of the sample that closes it, so a period is at
 * least φ long and its rate is exact for the bytes it saw.
 */
#include "laws.h"

void
bwss_estimator_init (BwssEstimator *e)
{
  e->rate_bps = -1.0;
  e->period_start_us = 0;
  e->period_bytes = UINT64_MAX;   /* no period open */
  e->last_bytes = 0;
  e->last_us = 0;
  e->periods = 0;
  e->restart = true;
  e->hist_n = 0;
  e->hist_head = 0;
}

void
bwss__estimator_restart (BwssEstimator *e, uint64_t start_us)
{
  /* period_start_us marks when measuring may begin; period_bytes is set by
   * the first sample at or after it. */
  e->period_start_us = start_us;
  e->period_bytes = UINT64_MAX;
  e->periods = 0;
  e->restart = true;
}

/* Records (@now_us, @bytes) in the meter if a step has passed since the
 * newest entry. */
static void
meter_push (BwssEstimator *e, uint64_t now_us, uint64_t bytes, uint64_t step_us)
{
  if (e->hist_n) {
    uint32_t newest = (e->hist_head + BWSS_METER_ENTRIES - 1) % BWSS_METER_ENTRIES;
    if (now_us < e->hist_us[newest] + step_us)
      return;
  }
  e->hist_us[e->hist_head] = now_us;
  e->hist_bytes[e->hist_head] = bytes;
  e->hist_head = (e->hist_head + 1) % BWSS_METER_ENTRIES;
  if (e->hist_n < BWSS_METER_ENTRIES)
    e->hist_n++;
}

bool
bwss_estimator_sample (BwssEstimator *e, uint64_t now_us, uint64_t bytes,
                       uint64_t phi_us, double epsilon, uint64_t meter_step_us)
{
  if (bytes < e->last_bytes) {
    /* The counter went backwards: another socket behind the same flow. */
    bwss__estimator_restart (e, now_us);
    e->hist_n = 0;
    e->hist_head = 0;
  }
  e->last_bytes = bytes;
  e->last_us = now_us;
  meter_push (e, now_us, bytes, meter_step_us);

  if (now_us < e->period_start_us)
    return false;                       /* the change is not effective yet */
  if (e->period_bytes == UINT64_MAX) {
    /* First sample of a period: it opens the period. */
    e->period_start_us = now_us;
    e->period_bytes = bytes;
    return false;
  }
  if (phi_us == 0 || now_us - e->period_start_us < phi_us)
    return false;

  /* bits / µs → bit/s.  (bytes delta) < 2^64 and ·8e6 is done in double, so
   * no integer overflow. */
  double elapsed_s = (double) (now_us - e->period_start_us) / 1e6;
  double r_phi = (double) (bytes - e->period_bytes) * 8.0 / elapsed_s;

  if (e->restart || e->rate_bps < 0.0) {
    e->rate_bps = r_phi;
    e->restart = false;
  } else {
    e->rate_bps = epsilon * e->rate_bps + (1.0 - epsilon) * r_phi;
  }
  e->periods++;
  e->period_start_us = now_us;
  e->period_bytes = bytes;
  return true;
}

/* Finds the window's start for a window of @window_us before the last
 * sample: sets *t0 (µs) and *b0 (bytes, interpolated).  Returns false if the
 * history spans no time. */
static bool
window_start (const BwssEstimator *e, uint64_t window_us, double *t0, double *b0)
{
  if (e->hist_n == 0)
    return false;
  double from = (double) e->last_us - (double) window_us;
  /* walk back from the newest entry to the first at or before `from` */
  double t_after = (double) e->last_us, b_after = (double) e->last_bytes;
  for (uint32_t k = 1; k <= e->hist_n; k++) {
    uint32_t i = (e->hist_head + BWSS_METER_ENTRIES - k) % BWSS_METER_ENTRIES;
    double t = (double) e->hist_us[i], b = (double) e->hist_bytes[i];
    if (t <= from) {
      if (t_after > t) {                 /* interpolate inside [t, t_after] */
        double frac = (from - t) / (t_after - t);
        *t0 = from;
        *b0 = b + frac * (b_after - b);
      } else {
        *t0 = t;
        *b0 = b;
      }
      return true;
    }
    t_after = t;
    b_after = b;
  }
  /* the history is shorter than the window: use all of it */
  *t0 = t_after;
  *b0 = b_after;
  return (double) e->last_us > t_after;
}

void
bwss__estimator_window (const BwssEstimator *e, uint64_t window_us, double *mean, double *bytes)
{
  double t0, b0;
  bool found = window_start (e, window_us, &t0, &b0);
  *bytes = found ? (double) e->last_bytes - b0 : 0.0;
  *mean = !found || (double) e->last_us <= t0
      ? -1.0 : ((double) e->last_bytes - b0) * 8.0 / (((double) e->last_us - t0) / 1e6);
}

double
bwss__estimator_bytes_bound (const BwssEstimator *e, uint64_t window_us, uint64_t meter_step_us)
{
  if (e->hist_n == 0)
    return 0.0;
  /* entry k back (k = 1: the newest) is at most last_us − (k − 1)·step:
   * at or before last_us − window from k = 1 + ⌈window / step⌉ on, and
   * the newest at or before it, whose count window_start() interpolates
   * from, is that one or a later one with as many bytes or more */
  uint64_t step = meter_step_us ? meter_step_us : 1;
  uint64_t k = 1 + (window_us + step - 1) / step;
  if (k > e->hist_n)
    k = e->hist_n;
  uint32_t i = (uint32_t) ((e->hist_head + BWSS_METER_ENTRIES - k) % BWSS_METER_ENTRIES);
  return (double) e->last_bytes - (double) e->hist_bytes[i];
}

double
bwss_estimator_mean (const BwssEstimator *e, uint64_t window_us)
{
  double mean, bytes;
  bwss__estimator_window (e, window_us, &mean, &bytes);
  return mean;
}

double
bwss__estimator_bytes (const BwssEstimator *e, uint64_t window_us)
{
  double mean, bytes;
  bwss__estimator_window (e, window_us, &mean, &bytes);
  return bytes;
}

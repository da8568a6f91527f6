/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * estimator.c — the FCS rate estimator (paper Sec. IV-B).
 *
 * R is estimated at the end of successive periods φ.  R_φ is the number of
 * bits received during the period divided by its length; the estimate is an
 * exponentially weighted moving average R ← ε·R + (1−ε)·R_φ.  After a window
 * change past estimates are irrelevant: the next period starts when the
 * change takes effect and its R_φ replaces R.
 *
 * Byte counts are cumulative (tcpi_bytes_received or the reads).  A period is
 * measured against the time of the sample that closes it, so a period is at
 * least φ long and its rate is exact for the bytes it saw; no interpolation.
 */
#include <bwss/control.h>

void
bwss_estimator_init (BwssEstimator *e)
{
  e->rate_bps = -1.0;
  e->period_start_us = 0;
  e->period_bytes = UINT64_MAX;   /* no period open */
  e->last_bytes = 0;
  e->periods = 0;
  e->restart = true;
}

void
bwss_estimator_restart (BwssEstimator *e, uint64_t start_us)
{
  /* period_start_us marks when measuring may begin; period_bytes is set by
   * the first sample at or after it. */
  e->period_start_us = start_us;
  e->period_bytes = UINT64_MAX;
  e->periods = 0;
  e->restart = true;
}

bool
bwss_estimator_sample (BwssEstimator *e, uint64_t now_us, uint64_t bytes,
                       uint64_t phi_us, double epsilon)
{
  if (bytes < e->last_bytes) {
    /* The counter went backwards: another socket behind the same flow. */
    e->last_bytes = bytes;
    bwss_estimator_restart (e, now_us);
  }
  e->last_bytes = bytes;

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

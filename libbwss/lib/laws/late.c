/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * late.c — late packets and required prebuffer (paper Sec. VI-C, Fig. 7c).
 * The definition is in bwss/late.h.  Each completed packet is judged once,
 * against every threshold, when the sample that completes it arrives; a
 * sample completing many packets costs O(thresholds · log packets), so any
 * byte count is cheap.
 */
#include <math.h>
#include <string.h>
#include <bwss/late.h>

const double bwss_late_default_prebuffers_s[5] = { 0.5, 1.0, 2.0, 4.0, 8.0 };

int
bwss_late_init (BwssLate *l, double rate_bps, uint32_t packet_bytes,
                const double *thresholds_s, size_t n)
{
  if (l == NULL || !isfinite (rate_bps) || rate_bps <= 0.0 || packet_bytes == 0)
    return BWSS_EINVAL;
  if (thresholds_s == NULL || n == 0) {
    thresholds_s = bwss_late_default_prebuffers_s;
    n = sizeof bwss_late_default_prebuffers_s / sizeof bwss_late_default_prebuffers_s[0];
  }
  if (n > BWSS_LATE_MAX_THRESHOLDS)
    return BWSS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!isfinite (thresholds_s[i]) || thresholds_s[i] < 0.0)
      return BWSS_EINVAL;

  memset (l, 0, sizeof *l);
  l->rate_bps = rate_bps;
  l->packet_bytes = packet_bytes;
  l->n_thresholds = n;
  memcpy (l->thresholds_s, thresholds_s, n * sizeof *thresholds_s);
  return BWSS_OK;
}

/* Returns Δ, the media duration of one packet, seconds. */
static double
packet_s (const BwssLate *l)
{
  return 8.0 * (double) l->packet_bytes / l->rate_bps;
}

/* Returns how many packets k in [@lo, @hi) are late against @th, i.e. have
 * since − k·Δ > th.  Lateness falls as k grows (also in floating point: each
 * step of the expression is monotonic), so the late ones come first; a
 * binary search finds the first one that is not, with the very comparison
 * a packet-by-packet loop would make: the same count, in O(log n). */
static uint64_t
late_in (double since, double delta, double th, uint64_t lo, uint64_t hi)
{
  uint64_t a = lo, b = hi;               /* the first packet not late is in [a, b] */
  while (a < b) {
    uint64_t mid = a + (b - a) / 2;
    if (since - (double) mid * delta > th)
      a = mid + 1;
    else
      b = mid;
  }
  return a - lo;
}

void
bwss_late_add (BwssLate *l, uint64_t now_us, uint64_t bytes)
{
  if (l->finished || bytes <= l->bytes)
    return;
  if (!l->started) {
    l->started = true;
    l->t0_us = now_us;
  }
  l->bytes = bytes;
  if (now_us > l->last_us)
    l->last_us = now_us;

  double since_t0 = now_us >= l->t0_us ? (double) (now_us - l->t0_us) / 1e6 : 0.0;
  double delta = packet_s (l);
  uint64_t complete = bytes / l->packet_bytes;
  if (complete <= l->arrived)
    return;
  /* packets arrived..complete-1 complete now; the first is the latest */
  double lateness = since_t0 - (double) l->arrived * delta;   /* arrival − t0 − kΔ */
  if (lateness > l->max_lateness_s)
    l->max_lateness_s = lateness;
  for (size_t i = 0; i < l->n_thresholds; i++)
    l->late_count[i] += late_in (since_t0, delta, l->thresholds_s[i], l->arrived, complete);
  l->arrived = complete;
}

void
bwss_late_finish (BwssLate *l)
{
  l->finished = true;
}

/* Returns how many packets are due at @now_us with prebuffer @p seconds. */
static uint64_t
due_packets (const BwssLate *l, double p, uint64_t now_us)
{
  if (!l->started || now_us < l->t0_us)
    return 0;
  double t = (double) (now_us - l->t0_us) / 1e6 - p;
  if (t < 0.0)
    return 0;
  /* packet k is due when t0 + p + kΔ <= now: k <= t/Δ */
  double k = floor (t / packet_s (l));
  return k < 1.8e19 ? (uint64_t) k + 1 : UINT64_MAX;
}

double
bwss_late_fraction (const BwssLate *l, size_t i, uint64_t now_us)
{
  if (i >= l->n_thresholds)
    return -1.0;
  uint64_t late = l->late_count[i];
  uint64_t counted = l->arrived;
  if (!l->finished) {
    uint64_t due = due_packets (l, l->thresholds_s[i], now_us);
    if (due > l->arrived) {
      late += due - l->arrived;         /* overdue and still missing */
      counted = due;
    }
  }
  return counted ? (double) late / (double) counted : 0.0;
}

double
bwss_late_required_prebuffer (const BwssLate *l, uint64_t now_us)
{
  double need = l->max_lateness_s;
  if (!l->finished && l->started && now_us >= l->t0_us) {
    /* the next packet has waited at least this long past its media time */
    double waited = (double) (now_us - l->t0_us) / 1e6 - (double) l->arrived * packet_s (l);
    if (waited > need)
      need = waited;
  }
  return need > 0.0 ? need : 0.0;
}

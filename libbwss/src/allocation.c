/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * allocation.c — the target rate allocation subsystem, TRAS (paper Sec. V-A).
 *
 * Given the system target σ and each flow's (priority p_i, minimum m_i,
 * weight w_i), the desired partition {T_i} with Σ T_i = σ (eq. 5) is:
 *
 *   σ >= Σm:  T_i = m_i + w_i·(σ − Σm)/Σw                        (eq. 6)
 *   σ <  Σm:  T_i = min(m_i, max(0, σ − Σ_{j before i} m_j))      (eq. 7)
 *             with flows taken in decreasing priority.
 *
 * Open points, decided here:
 *   - Eq. (7) assumes distinct priorities.  Flows of equal priority form one
 *     group; what is left for the group is split in proportion to the
 *     members' minima, so each gets the same fraction of its minimum and the
 *     result does not depend on the order flows were registered in.
 *   - Σw = 0 in eq. (6): every weight counts as 1, so the remainder is still
 *     used (Σ T = σ holds) and a flow with only a minimum gets the link when
 *     alone.
 *   - Overflow: any finite doubles are accepted.  Sums of minima or weights
 *     can exceed DBL_MAX, so they are taken after dividing by the largest
 *     element (then each term is <= 1 and a sum of n terms is <= n).
 */
#include <math.h>
#include <stdlib.h>
#include <bwss/control.h>

int
bwss_prefs_validate (const BwssPrefs *prefs)
{
  if (prefs == NULL)
    return BWSS_EINVAL;
  if (!isfinite (prefs->min_rate_bps) || prefs->min_rate_bps < 0.0)
    return BWSS_EINVAL;
  if (!isfinite (prefs->weight) || prefs->weight < 0.0)
    return BWSS_EINVAL;
  return BWSS_OK;
}

/* Returns the largest weight (@weights) or minimum rate of @prefs, >= 0. */
static double
max_of (const BwssPrefs *prefs, size_t n, bool weights)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = weights ? prefs[i].weight : prefs[i].min_rate_bps;
    if (v > m)
      m = v;
  }
  return m;
}

/* Returns Σ field / scale, each term <= 1 (so the sum is finite). */
static double
scaled_sum (const BwssPrefs *prefs, size_t n, bool weights, double scale)
{
  double s = 0.0;
  for (size_t i = 0; i < n; i++)
    s += (weights ? prefs[i].weight : prefs[i].min_rate_bps) / scale;
  return s;
}

/* eq. (6): everyone has its minimum; share the remainder by weight. */
static void
allocate_weighted (double sigma, const BwssPrefs *prefs, size_t n,
                   double min_scale, double min_sum_scaled, double *targets)
{
  /* remainder = σ − Σm >= 0, computed in the scaled domain so Σm never
   * materialises when it would overflow. */
  double remainder = min_scale > 0.0 ? (sigma / min_scale - min_sum_scaled) * min_scale
                                     : sigma;
  if (remainder < 0.0)
    remainder = 0.0;
  double w_scale = max_of (prefs, n, true);
  double w_sum = w_scale > 0.0 ? scaled_sum (prefs, n, true, w_scale) : 0.0;

  for (size_t i = 0; i < n; i++) {
    double share = w_sum > 0.0 ? (prefs[i].weight / w_scale) / w_sum
                               : 1.0 / (double) n;
    targets[i] = prefs[i].min_rate_bps + share * remainder;
  }
}

static int
by_priority_desc (const void *a, const void *b, void *ctx)
{
  const BwssPrefs *prefs = ctx;
  size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
  if (prefs[ia].priority != prefs[ib].priority)
    return prefs[ia].priority > prefs[ib].priority ? -1 : 1;
  return ia < ib ? -1 : (ia > ib);
}

/* eq. (7): minima in decreasing priority until σ runs out. */
static int
allocate_by_priority (double sigma, const BwssPrefs *prefs, size_t n, double *targets)
{
  size_t *order = malloc (n * sizeof *order);
  if (order == NULL)
    return BWSS_ENOMEM;
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  qsort_r (order, n, sizeof *order, by_priority_desc, (void *) prefs);

  double left = sigma;
  size_t g = 0;
  while (g < n) {
    /* One group of equal priority: [g, end). */
    size_t end = g;
    double group_max = 0.0;
    while (end < n && prefs[order[end]].priority == prefs[order[g]].priority) {
      if (prefs[order[end]].min_rate_bps > group_max)
        group_max = prefs[order[end]].min_rate_bps;
      end++;
    }
    double group_sum_scaled = 0.0;
    for (size_t k = g; k < end && group_max > 0.0; k++)
      group_sum_scaled += prefs[order[k]].min_rate_bps / group_max;

    /* fraction of the group's minima that fits in what is left */
    double frac = 0.0;
    if (group_max > 0.0 && left > 0.0) {
      frac = (left / group_max) / group_sum_scaled;
      if (frac > 1.0)
        frac = 1.0;
    }
    for (size_t k = g; k < end; k++)
      targets[order[k]] = prefs[order[k]].min_rate_bps * frac;
    /* left −= frac·Σ group minima, in the scaled domain */
    if (group_max > 0.0 && left > 0.0) {
      left = (left / group_max - frac * group_sum_scaled) * group_max;
      if (left < 0.0)
        left = 0.0;
    }
    g = end;
  }
  free (order);
  return BWSS_OK;
}

int
bwss_allocate (double sigma, const BwssPrefs *prefs, size_t n, double *targets)
{
  if (!isfinite (sigma) || sigma < 0.0)
    return BWSS_EINVAL;
  if (n == 0)
    return BWSS_OK;
  if (prefs == NULL || targets == NULL)
    return BWSS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (bwss_prefs_validate (&prefs[i]) != BWSS_OK)
      return BWSS_EINVAL;

  double min_scale = max_of (prefs, n, false);
  double min_sum_scaled = min_scale > 0.0 ? scaled_sum (prefs, n, false, min_scale) : 0.0;

  /* σ >= Σm  ⇔  σ/scale >= Σ(m/scale) */
  bool minima_met = min_scale == 0.0 || sigma / min_scale >= min_sum_scaled;
  if (minima_met) {
    allocate_weighted (sigma, prefs, n, min_scale, min_sum_scaled, targets);
    return BWSS_OK;
  }
  return allocate_by_priority (sigma, prefs, n, targets);
}

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
 *
 * Demand caps (bwss__allocate_capped, the delay loop): a flow that something
 * else than its target limits (its source, another path) takes no more than
 * its cap, and what it leaves goes to the others by eq. (6) — water-filling
 * at a common excess per unit of weight λ:
 *
 *   T_i = min(m_i + w_i·λ, c_i),  Σ T_i = σ                          (eq. 6')
 *
 * the paper's rule (a) ("tracked" flows, Sec. V-C) as an allocation: σ
 * stays at the link's rate instead of growing by every share a flow leaves
 * unused.  Caps never go below a minimum; if every flow is capped, what is
 * left is split by eq. (6) over all (no flow wants it; Σ T = σ holds).
 */
#include <math.h>
#include <stdlib.h>
#include "laws.h"

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

/* The TRAS on preferences already validated (bwss_allocate checks them at
 * the public entry; the controller's were checked when they entered it). */
static int
allocate_trusted (double sigma, const BwssPrefs *prefs, size_t n, double *targets)
{
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
  return allocate_trusted (sigma, prefs, n, targets);
}

/* Fills @targets by eq. (6') for σ >= Σm, all in units of @scale (so the
 * sums stay finite); @caps < 0 is none.  @frozen is scratch of n bools. */
static void
fill_water (double sigma, const BwssPrefs *prefs, const double *caps, size_t n,
            double scale, double wscale, bool *frozen, double *targets)
{
  for (size_t i = 0; i < n; i++)
    frozen[i] = false;
  for (;;) {
    double left = sigma / scale, wsum = 0.0;
    size_t free_n = 0;
    for (size_t i = 0; i < n; i++) {
      if (frozen[i]) {
        left -= caps[i] / scale;
      } else {
        left -= prefs[i].min_rate_bps / scale;
        wsum += prefs[i].weight / wscale;
        free_n++;
      }
    }
    if (free_n == 0) {
      /* every flow capped: the rest by eq. (6) over all, on top */
      double w_all = wscale > 0.0 ? scaled_sum (prefs, n, true, wscale) : 0.0;
      for (size_t i = 0; i < n; i++) {
        double share = w_all > 0.0 ? (prefs[i].weight / wscale) / w_all : 1.0 / (double) n;
        targets[i] = caps[i] + (left > 0.0 ? left * share * scale : 0.0);
      }
      return;
    }
    bool equal = !(wsum > 0.0);        /* Σw = 0: every weight counts as 1 */
    double lambda = left / (equal ? (double) free_n : wsum);  /* excess per unit of weight */
    bool froze = false;
    for (size_t i = 0; i < n; i++) {
      if (frozen[i] || caps[i] < 0.0)
        continue;
      double w = equal ? 1.0 : prefs[i].weight / wscale;
      if (prefs[i].min_rate_bps / scale + w * lambda > caps[i] / scale) {
        frozen[i] = true;
        froze = true;
      }
    }
    if (!froze) {
      for (size_t i = 0; i < n; i++) {
        double w = equal ? 1.0 : prefs[i].weight / wscale;
        targets[i] = frozen[i] ? caps[i] : (prefs[i].min_rate_bps / scale + w * lambda) * scale;
      }
      return;
    }
  }
}

int
bwss__allocate_capped (double sigma, const BwssPrefs *prefs, const double *caps, size_t n,
                      double *targets)
{
  if (!isfinite (sigma) || sigma < 0.0 || (n > 0 && (prefs == NULL || targets == NULL)))
    return BWSS_EINVAL;
  for (size_t i = 0; caps != NULL && i < n; i++)
    if (isnan (caps[i]))
      return BWSS_EINVAL;
  if (n == 0)
    return BWSS_OK;
  int err = allocate_trusted (sigma, prefs, n, targets);
  if (err != BWSS_OK || caps == NULL)
    return err;
  /* eq. (7) already serves less than the minima: caps (>= minima) cannot bind */
  double min_scale = max_of (prefs, n, false);
  if (min_scale > 0.0 && sigma / min_scale < scaled_sum (prefs, n, false, min_scale))
    return BWSS_OK;
  double *c = malloc (n * sizeof *c);
  bool *frozen = malloc (n * sizeof *frozen);
  double *out = malloc (n * sizeof *out);
  if (c == NULL || frozen == NULL || out == NULL) {
    free (c);
    free (frozen);
    free (out);
    return BWSS_ENOMEM;
  }
  double scale = sigma > min_scale ? sigma : min_scale;
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    c[i] = caps[i] < 0.0 || isinf (caps[i]) ? -1.0 : caps[i];
    if (c[i] >= 0.0 && c[i] < prefs[i].min_rate_bps)
      c[i] = prefs[i].min_rate_bps;    /* a cap never cuts a minimum */
    if (c[i] >= 0.0) {
      any = true;
      if (c[i] > scale)
        scale = c[i];
    }
  }
  if (any && scale > 0.0) {
    fill_water (sigma, prefs, c, n, scale, max_of (prefs, n, true), frozen, out);
    for (size_t i = 0; i < n; i++)
      targets[i] = out[i];
  }
  free (c);
  free (frozen);
  free (out);
  return BWSS_OK;
}

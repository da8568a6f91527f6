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
 *
 * Groups (bwss_allocate_grouped: an application is one download):
 * flows with the same non-zero group key are one participant of the TRAS.
 * The split is done twice, by the same equations:
 *
 *   over groups:  group g has p_g = max p_i, m_g = max m_i, w_g = max w_i
 *                 (the rule gives each member the group's preferences; a
 *                 member that differs cannot raise the group above its
 *                 largest), cap c_g = Σ c_i if every member is capped,
 *                 else none; T_g by eq. (5)–(7), (6')               (eq. 5g)
 *   within g:     member i has p_i, m_i' = m_g·m_i/Σ_{j∈g} m_j, w_i, c_i;
 *                 T_i by eq. (5)–(7), (6') of T_g                   (eq. 5m)
 *
 * so Σ_{i∈g} T_i = T_g and Σ T = σ; a group of k connections gets one
 * share, not k; its minimum is split in proportion to the members' own
 * (equally, when the rule gave them all the same), so the group as a whole
 * gets it; a member limited elsewhere leaves its part to its siblings first.
 * A flow of key 0 is a group of its own.
 */
#include <math.h>
#include <stdlib.h>
#include "laws.h"

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

/* The public entries' one check of their input (the trust boundary: within
 * the laws the prefs are trusted).  Returns BWSS_OK or BWSS_EINVAL. */
static int
check_input (double sigma, const BwssPrefs *prefs, size_t n, const double *targets)
{
  if (!isfinite (sigma) || sigma < 0.0)
    return BWSS_EINVAL;
  if (n == 0)
    return BWSS_OK;
  if (prefs == NULL || targets == NULL)
    return BWSS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (bwss_prefs_check (&prefs[i]) != BWSS_OK)
      return BWSS_EINVAL;
  return BWSS_OK;
}

int
bwss_allocate (double sigma, const BwssPrefs *prefs, size_t n, double *targets)
{
  int err = check_input (sigma, prefs, n, targets);
  if (err != BWSS_OK || n == 0)
    return err;
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

/* The capped allocations' check of what the laws pass them (their prefs
 * are trusted): σ, the arrays, no NaN cap.  Returns BWSS_OK or BWSS_EINVAL. */
static int
check_capped_input (double sigma, const BwssPrefs *prefs, const double *caps, size_t n,
                    const double *targets)
{
  if (!isfinite (sigma) || sigma < 0.0 || (n > 0 && (prefs == NULL || targets == NULL)))
    return BWSS_EINVAL;
  for (size_t i = 0; caps != NULL && i < n; i++)
    if (isnan (caps[i]))
      return BWSS_EINVAL;
  return BWSS_OK;
}

int
bwss__allocate_capped (double sigma, const BwssPrefs *prefs, const double *caps, size_t n,
                      double *targets)
{
  int err = check_capped_input (sigma, prefs, caps, n, targets);
  if (err != BWSS_OK || n == 0)
    return err;
  err = allocate_trusted (sigma, prefs, n, targets);
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

/* ---- groups (eq. 5g, 5m) ---- */

typedef struct {
  const uint64_t *keys;
} GroupOrder;

static int
by_group (const void *a, const void *b, void *ctx)
{
  const GroupOrder *o = ctx;
  size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
  uint64_t ka = o->keys[ia], kb = o->keys[ib];
  /* key 0 flows sort by index; group_starts() keeps each apart */
  if (ka != kb)
    return ka < kb ? -1 : 1;
  return ia < ib ? -1 : (ia > ib);
}

/* Returns true if @order[k] starts a new group (a key other than the
 * previous one's, or key 0). */
static bool
group_starts (const uint64_t *keys, const size_t *order, size_t k)
{
  return k == 0 || keys[order[k]] == 0 || keys[order[k]] != keys[order[k - 1]];
}

/* Scratch of bwss__allocate_grouped_capped, one allocation. */
typedef struct {
  size_t    *order;    /* flows by group */
  BwssPrefs *gprefs;   /* per group, then per member of the group being split */
  double    *gcaps;
  double    *gtargets;
  double    *mtargets;
} GroupScratch;

/* eq. (5g): the flows, in w->order, as one participant per group (its
 * members' largest priority, minimum and weight; capped only if every
 * member is, by the sum of their caps, a cap under a member's minimum
 * counting as the minimum).  Returns the number of groups. */
static size_t
groups_as_participants (const BwssPrefs *prefs, const double *caps, const uint64_t *groups,
                        size_t n, GroupScratch *w)
{
  size_t ng = 0;
  for (size_t k = 0; k < n; k++) {
    const BwssPrefs *pi = &prefs[w->order[k]];
    double ci = caps ? caps[w->order[k]] : -1.0;
    bool capped = ci >= 0.0 && !isinf (ci);
    if (group_starts (groups, w->order, k)) {
      w->gprefs[ng++] = *pi;
      w->gcaps[ng - 1] = capped ? 0.0 : -1.0;
    }
    BwssPrefs *g = &w->gprefs[ng - 1];
    if (pi->priority > g->priority)
      g->priority = pi->priority;
    if (pi->min_rate_bps > g->min_rate_bps)
      g->min_rate_bps = pi->min_rate_bps;
    if (pi->weight > g->weight)
      g->weight = pi->weight;
    if (!capped)
      w->gcaps[ng - 1] = -1.0;
    else if (w->gcaps[ng - 1] >= 0.0)
      w->gcaps[ng - 1] += ci > pi->min_rate_bps ? ci : pi->min_rate_bps;
  }
  return ng;
}

/* eq. (5m): the target @tg of the group of the members w->order[k..end)
 * among them: the group's minimum in proportion to their own minima, the
 * rest by weight (and their caps).  The groups' prefs and caps of @w are
 * reused as the members'.  Returns 0 or what bwss__allocate_capped returns. */
static int
split_group (double tg, const BwssPrefs *prefs, const double *caps, size_t k, size_t end,
             GroupScratch *w, double *targets, double *minima)
{
  size_t m = end - k;
  double mmax = 0.0;
  for (size_t j = k; j < end; j++)
    if (prefs[w->order[j]].min_rate_bps > mmax)
      mmax = prefs[w->order[j]].min_rate_bps;
  double gmin = mmax;                /* m_g, eq. (5g) */
  double msum_scaled = 0.0;          /* Σ m_j / max m_j, finite */
  for (size_t j = k; j < end && mmax > 0.0; j++)
    msum_scaled += prefs[w->order[j]].min_rate_bps / mmax;
  BwssPrefs *mp = w->gprefs;
  double *mc = w->gcaps;
  for (size_t j = k; j < end; j++) {
    const BwssPrefs *pj = &prefs[w->order[j]];
    mp[j - k] = *pj;
    /* m_i' = m_g·m_i/Σm (eq. 5m) */
    mp[j - k].min_rate_bps = mmax > 0.0 ? gmin * ((pj->min_rate_bps / mmax) / msum_scaled) : 0.0;
    mc[j - k] = caps ? caps[w->order[j]] : -1.0;
  }
  int err = bwss__allocate_capped (tg, mp, caps ? mc : NULL, m, w->mtargets);
  if (err != BWSS_OK)
    return err;
  for (size_t j = k; j < end; j++) {
    targets[w->order[j]] = w->mtargets[j - k];
    if (minima != NULL)
      minima[w->order[j]] = mp[j - k].min_rate_bps;
  }
  return BWSS_OK;
}

int
bwss__allocate_grouped_capped (double sigma, const BwssPrefs *prefs, const double *caps,
                              const uint64_t *groups, size_t n, double *targets,
                              double *minima)
{
  if (groups == NULL) {
    int err = bwss__allocate_capped (sigma, prefs, caps, n, targets);
    for (size_t i = 0; err == BWSS_OK && minima != NULL && i < n; i++)
      minima[i] = prefs[i].min_rate_bps;
    return err;
  }
  int err = check_capped_input (sigma, prefs, caps, n, targets);
  if (err != BWSS_OK || n == 0)
    return err;
  GroupScratch w = {
    .order = malloc (n * sizeof *w.order), .gprefs = malloc (n * sizeof *w.gprefs),
    .gcaps = malloc (n * sizeof *w.gcaps), .gtargets = malloc (n * sizeof *w.gtargets),
    .mtargets = malloc (n * sizeof *w.mtargets),
  };
  err = BWSS_ENOMEM;
  if (w.order == NULL || w.gprefs == NULL || w.gcaps == NULL || w.gtargets == NULL
      || w.mtargets == NULL)
    goto out;
  for (size_t i = 0; i < n; i++)
    w.order[i] = i;
  GroupOrder o = { groups };
  qsort_r (w.order, n, sizeof *w.order, by_group, &o);

  size_t ng = groups_as_participants (prefs, caps, groups, n, &w);      /* eq. (5g) */
  err = bwss__allocate_capped (sigma, w.gprefs, caps ? w.gcaps : NULL, ng, w.gtargets);
  for (size_t k = 0, g = 0; err == BWSS_OK && k < n; g++) {            /* eq. (5m) */
    size_t end = k + 1;
    while (end < n && !group_starts (groups, w.order, end))
      end++;
    if (end - k == 1) {
      targets[w.order[k]] = w.gtargets[g];
      if (minima != NULL)
        minima[w.order[k]] = prefs[w.order[k]].min_rate_bps;
    } else {
      err = split_group (w.gtargets[g], prefs, caps, k, end, &w, targets, minima);
    }
    k = end;
  }
out:
  free (w.order);
  free (w.gprefs);
  free (w.gcaps);
  free (w.gtargets);
  free (w.mtargets);
  return err;
}

int
bwss_allocate_grouped (double sigma, const BwssPrefs *prefs, const uint64_t *groups, size_t n,
                       double *targets)
{
  int err = check_input (sigma, prefs, n, targets);
  if (err != BWSS_OK || n == 0)
    return err;
  return bwss__allocate_grouped_capped (sigma, prefs, NULL, groups, n, targets, NULL);
}

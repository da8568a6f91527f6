/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-allocation.c — the TRAS, eq. (5)–(7), and the cases the paper leaves open. */
#include <float.h>
#include <math.h>
#include <glib.h>
#include "laws.h"

#define P(prio, min, w) ((BwssPrefs) { .priority = (prio), .min_rate_bps = (min), .weight = (w) })

static double
sum (const double *t, size_t n)
{
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += t[i];
  return s;
}

/* eq. (6): weights only (the paper's experiment 1: 1:2:3 of 960 kbit/s). */
static void
test_weights_only (void)
{
  BwssPrefs p[] = { P (0, 0, 1), P (0, 0, 2), P (0, 0, 3) };
  double t[3];
  g_assert_cmpint (bwss_allocate (960000, p, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 160000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 320000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 480000, 1e-6);
}

/* eq. (6) with minima: T_i = m_i + w_i·(σ − Σm)/Σw. */
static void
test_minima_then_weights (void)
{
  BwssPrefs p[] = { P (10, 496000, 1), P (0, 0, 1), P (0, 0, 2) };
  double t[3];
  g_assert_cmpint (bwss_allocate (960000, p, 3, t), ==, 0);
  /* remainder 464000 split 1:1:2 */
  g_assert_cmpfloat_with_epsilon (t[0], 496000 + 116000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 116000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 232000, 1e-6);
  g_assert_cmpfloat_with_epsilon (sum (t, 3), 960000, 1e-6);
}

/* eq. (7): σ < Σm, minima served in decreasing priority. */
static void
test_priority_order (void)
{
  BwssPrefs p[] = { P (1, 300000, 1), P (5, 400000, 1), P (3, 200000, 1) };
  double t[3];
  /* priority 5 gets 400k, priority 3 gets 200k, priority 1 gets the last 100k */
  g_assert_cmpint (bwss_allocate (700000, p, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[1], 400000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 200000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[0], 100000, 1e-6);
  /* starved: 350k covers only part of the top flow */
  g_assert_cmpint (bwss_allocate (350000, p, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[1], 350000, 1e-6);
  g_assert_cmpfloat (t[0], ==, 0);
  g_assert_cmpfloat (t[2], ==, 0);
}

/* Equal priorities in eq. (7): same fraction of each minimum. */
static void
test_equal_priorities (void)
{
  BwssPrefs p[] = { P (2, 100000, 1), P (2, 300000, 1), P (9, 200000, 0) };
  double t[3];
  /* top flow 200k; 200k left for the pair needing 400k: half of each */
  g_assert_cmpint (bwss_allocate (400000, p, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[2], 200000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[0], 50000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 150000, 1e-6);
  g_assert_cmpfloat_with_epsilon (sum (t, 3), 400000, 1e-6);
}

/* Σw = 0: remainder split equally; a lone flow with only a minimum takes σ. */
static void
test_zero_weights (void)
{
  BwssPrefs p[] = { P (0, 100000, 0), P (0, 0, 0) };
  double t[2];
  g_assert_cmpint (bwss_allocate (500000, p, 2, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 300000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 200000, 1e-6);

  BwssPrefs lone[] = { P (7, 496000, 0) };
  g_assert_cmpint (bwss_allocate (960000, lone, 1, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 960000, 1e-6);
}

/* A weight-0 flow with a minimum next to weighted flows gets just its minimum. */
static void
test_min_only_flow (void)
{
  BwssPrefs p[] = { P (10, 496000, 0), P (0, 0, 1) };
  double t[2];
  g_assert_cmpint (bwss_allocate (960000, p, 2, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 496000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 464000, 1e-6);
}

static void
test_sigma_zero_and_empty (void)
{
  BwssPrefs p[] = { P (1, 1000, 1), P (0, 0, 1) };
  double t[2] = { 7, 7 };
  g_assert_cmpint (bwss_allocate (0, p, 2, t), ==, 0);
  g_assert_cmpfloat (t[0], ==, 0);
  g_assert_cmpfloat (t[1], ==, 0);
  g_assert_cmpint (bwss_allocate (1000, NULL, 0, NULL), ==, 0);
}

/* Huge values must not overflow to inf or NaN: σ up to DBL_MAX, the
 * preferences up to the limits of bwss_prefs_check() (and none beyond). */
static void
test_huge_values (void)
{
  BwssPrefs p[] = { P (1, BWSS_RATE_MAX_BPS, BWSS_WEIGHT_MAX), P (1, BWSS_RATE_MAX_BPS, BWSS_WEIGHT_MAX),
                    P (0, 0, BWSS_WEIGHT_MAX) };
  double t[3];
  g_assert_cmpint (bwss_allocate (DBL_MAX, p, 3, t), ==, 0);
  for (int i = 0; i < 3; i++)
    g_assert_true (isfinite (t[i]) && t[i] >= 0);
  g_assert_cmpfloat_with_epsilon (t[0] / t[1], 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon ((t[0] + t[1] + t[2]) / DBL_MAX, 1.0, 1e-9);
  /* σ = 1e15 < Σm = 2e15: the equal-priority pair shares it */
  g_assert_cmpint (bwss_allocate (BWSS_RATE_MAX_BPS, p, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0] / BWSS_RATE_MAX_BPS, 0.5, 1e-9);
  g_assert_cmpfloat_with_epsilon (t[1] / BWSS_RATE_MAX_BPS, 0.5, 1e-9);
  g_assert_cmpfloat (t[2], ==, 0);

  BwssPrefs q[] = { P (0, 0, BWSS_WEIGHT_MAX), P (0, 0, BWSS_WEIGHT_MAX / 2) };
  g_assert_cmpint (bwss_allocate (3e9, q, 2, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 2e9, 1e-3);
  g_assert_cmpfloat_with_epsilon (t[1], 1e9, 1e-3);

  /* beyond the limits: refused, the targets untouched */
  BwssPrefs over[] = { P (0, 0, DBL_MAX), P (0, 0, 1) };
  t[0] = 7;
  g_assert_cmpint (bwss_allocate (3e9, over, 2, t), ==, BWSS_EINVAL);
  g_assert_cmpfloat (t[0], ==, 7);
}

/* Bad input: a clear error and the output untouched. */
static void
test_invalid_input (void)
{
  BwssPrefs good[] = { P (0, 0, 1) };
  BwssPrefs bad_min[] = { P (0, -1, 1) };
  BwssPrefs nan_w[] = { P (0, 0, NAN) };
  BwssPrefs inf_min[] = { P (0, INFINITY, 1) };
  double t[1] = { 42 };
  g_assert_cmpint (bwss_allocate (NAN, good, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (-5, good, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (INFINITY, good, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (100, bad_min, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (100, nan_w, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (100, inf_min, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (100, NULL, 1, t), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate (100, good, 1, NULL), ==, BWSS_EINVAL);
  g_assert_cmpfloat (t[0], ==, 42);
  g_assert_cmpstr (bwss_strerror (BWSS_EINVAL), !=, bwss_strerror (BWSS_ENOENT));
}

/* eq. (5) holds for random inputs, and eq. (6)/(7) pick the right branch. */
static void
test_partition_property (void)
{
  GRand *r = g_rand_new_with_seed (20261122);
  for (int round = 0; round < 2000; round++) {
    size_t n = g_rand_int_range (r, 1, 12);
    BwssPrefs p[12];
    double t[12], msum = 0;
    for (size_t i = 0; i < n; i++) {
      p[i] = P (g_rand_int_range (r, 0, 4), g_rand_boolean (r) ? g_rand_double_range (r, 0, 1e6) : 0,
                g_rand_boolean (r) ? g_rand_double_range (r, 0, 5) : 0);
      msum += p[i].min_rate_bps;
    }
    double sigma = g_rand_double_range (r, 0, 3e6);
    g_assert_cmpint (bwss_allocate (sigma, p, n, t), ==, 0);
    g_assert_cmpfloat_with_epsilon (sum (t, n), sigma, 1e-6 * (sigma + 1));
    for (size_t i = 0; i < n; i++) {
      g_assert_cmpfloat (t[i], >=, 0);
      if (sigma >= msum)
        g_assert_cmpfloat (t[i], >=, p[i].min_rate_bps - 1e-6);
      else
        g_assert_cmpfloat (t[i], <=, p[i].min_rate_bps + 1e-6);
    }
    if (sigma < msum) {
      /* no flow of lower priority gets anything while a higher one lacks */
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
          if (p[i].priority > p[j].priority && t[i] < p[i].min_rate_bps - 1e-6)
            g_assert_cmpfloat (t[j], <=, 1e-6);
    }
  }
  g_rand_free (r);
}

/* eq. (6'): a flow capped at its demand takes its cap, the others share
 * the rest by weight; Σ T = σ. */
static void
test_capped_water_fill (void)
{
  /* a video (min 496k, weight 1) its source holds at 520k, two bulk flows */
  BwssPrefs p[] = { P (10, 496000, 1), P (0, 0, 1), P (0, 0, 2) };
  double caps[] = { 620000, -1, INFINITY }, t[3], plain[3];
  g_assert_cmpint (bwss__allocate_capped (1200000, p, caps, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 620000, 1e-6);
  /* the rest, 580k, 1:2 (the minima of the others are 0) */
  g_assert_cmpfloat_with_epsilon (t[1], 580000 / 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 2 * 580000 / 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (sum (t, 3), 1200000, 1e-6);
  /* a cap that does not bind changes nothing */
  caps[0] = 5e6;
  g_assert_cmpint (bwss__allocate_capped (1200000, p, caps, 3, t), ==, 0);
  g_assert_cmpint (bwss_allocate (1200000, p, 3, plain), ==, 0);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (t[i], plain[i], 1e-6);
  /* no caps at all: bwss_allocate */
  g_assert_cmpint (bwss__allocate_capped (1200000, p, NULL, 3, t), ==, 0);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (t[i], plain[i], 1e-6);
  /* a cap below the minimum counts as the minimum */
  caps[0] = 100000;
  g_assert_cmpint (bwss__allocate_capped (1200000, p, caps, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 496000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1] + t[2], 1200000 - 496000, 1e-6);
  /* freezing one flow can push another over its cap: flow 1 gets 176k
   * while flow 0 is free, 200k once it is frozen at 600k; at 190k it is
   * frozen too and flow 2 takes the rest */
  double caps2[] = { 600000, 190000, -1 };
  g_assert_cmpint (bwss__allocate_capped (1200000, p, caps2, 3, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 600000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 190000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 410000, 1e-6);
}

/* eq. (6') when every flow is capped: the rest by eq. (6) over all; below
 * Σm eq. (7), caps or not; bad caps change nothing. */
static void
test_capped_edges (void)
{
  BwssPrefs p[] = { P (10, 496000, 1), P (0, 0, 3) };
  double caps[] = { 600000, 100000 }, t[2] = { -1, -1 };
  g_assert_cmpint (bwss__allocate_capped (1000000, p, caps, 2, t), ==, 0);
  /* 300k left over, 1:3 */
  g_assert_cmpfloat_with_epsilon (t[0], 600000 + 75000, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 100000 + 225000, 1e-6);
  /* σ < Σm: the minima by priority */
  g_assert_cmpint (bwss__allocate_capped (400000, p, caps, 2, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 400000, 1e-6);
  g_assert_cmpfloat (t[1], ==, 0.0);
  /* a NaN cap, or bad σ: EINVAL, targets untouched */
  double bad[] = { NAN, 1 }, keep[2] = { 7, 8 };
  g_assert_cmpint (bwss__allocate_capped (1e6, p, bad, 2, keep), ==, BWSS_EINVAL);
  g_assert_cmpfloat (keep[0], ==, 7);
  g_assert_cmpfloat (keep[1], ==, 8);
  g_assert_cmpint (bwss__allocate_capped (-1, p, caps, 2, keep), ==, BWSS_EINVAL);
  g_assert_cmpfloat (keep[0], ==, 7);
  /* huge values stay finite */
  BwssPrefs h[] = { P (0, BWSS_RATE_MAX_BPS / 2, 1), P (0, 0, BWSS_WEIGHT_MAX) };
  double hc[] = { DBL_MAX / 2, DBL_MAX / 4 };
  g_assert_cmpint (bwss__allocate_capped (DBL_MAX, h, hc, 2, t), ==, 0);
  g_assert_true (isfinite (t[0]) && isfinite (t[1]));
  g_assert_cmpfloat (t[1], >=, DBL_MAX / 4 * (1 - 1e-9));
}

/* Groups (eq. 5g, 5m): one 8-connection download and one 1-connection
 * download of equal weights get equal halves; within the group equal
 * parts; key 0 is alone; no keys at all is bwss_allocate. */
static void
test_grouped_halves (void)
{
  BwssPrefs p[9];
  uint64_t g[9];
  double t[9], m[9];
  for (int i = 0; i < 9; i++) {
    p[i] = P (0, 0, 1);
    g[i] = i < 8 ? 42 : 0;
  }
  g_assert_cmpint (bwss_allocate_grouped (8e6, p, g, 9, t), ==, 0);
  for (int i = 0; i < 8; i++)
    g_assert_cmpfloat_with_epsilon (t[i], 0.5e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[8], 4e6, 1e-6);
  /* the members need not be next to each other, nor the key small */
  uint64_t mixed[9] = { 0, UINT64_MAX, 7, UINT64_MAX, 0, 7, 7, UINT64_MAX, 0 };
  g_assert_cmpint (bwss_allocate_grouped (9e6, p, mixed, 9, t), ==, 0);
  /* five participants: three alone, the group of 3 (key MAX), the group of 3 (key 7) */
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat_with_epsilon (t[i], mixed[i] == 0 ? 1.8e6 : 0.6e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (sum (t, 9), 9e6, 1e-6);
  /* groups NULL, or every key 0: bwss_allocate */
  double plain[9];
  uint64_t none[9] = { 0 };
  g_assert_cmpint (bwss_allocate (8e6, p, 9, plain), ==, 0);
  g_assert_cmpint (bwss_allocate_grouped (8e6, p, NULL, 9, t), ==, 0);
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat_with_epsilon (t[i], plain[i], 1e-6);
  g_assert_cmpint (bwss__allocate_grouped_capped (8e6, p, NULL, none, 9, t, m), ==, 0);
  for (int i = 0; i < 9; i++) {
    g_assert_cmpfloat_with_epsilon (t[i], plain[i], 1e-6);
    g_assert_cmpfloat (m[i], ==, 0.0);
  }
  /* weights between groups: a group of weight 2 against one flow of weight 1 */
  for (int i = 0; i < 8; i++)
    p[i].weight = 2;
  g_assert_cmpint (bwss_allocate_grouped (9e6, p, g, 9, t), ==, 0);
  g_assert_cmpfloat_with_epsilon (sum (t, 8), 6e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[8], 3e6, 1e-6);
}

/* A group's minimum is split so the group as a whole gets it: four
 * connections whose rule gives 1 Mbit/s hold 1 Mbit/s together (250k
 * each), not 4; below Σm eq. (7) serves the group by its priority. */
static void
test_grouped_minimum (void)
{
  BwssPrefs p[] = { P (10, 1e6, 1), P (10, 1e6, 1), P (10, 1e6, 1), P (10, 1e6, 1),
                    P (0, 0, 1) };
  uint64_t g[] = { 5, 5, 5, 5, 0 };
  double t[5], m[5];
  g_assert_cmpint (bwss__allocate_grouped_capped (3e6, p, NULL, g, 5, t, m), ==, 0);
  /* Σm = 1M (one group), 2M left 1:1 */
  for (int i = 0; i < 4; i++) {
    g_assert_cmpfloat_with_epsilon (t[i], 0.5e6, 1e-6);
    g_assert_cmpfloat_with_epsilon (m[i], 0.25e6, 1e-6);
  }
  g_assert_cmpfloat_with_epsilon (t[4], 1e6, 1e-6);
  g_assert_cmpfloat (m[4], ==, 0.0);
  /* σ below the group's minimum: all of it to the group, a quarter each */
  g_assert_cmpint (bwss_allocate_grouped (0.6e6, p, g, 5, t), ==, 0);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (t[i], 0.15e6, 1e-6);
  g_assert_cmpfloat (t[4], ==, 0.0);
  /* members of unequal minima: the group's (the largest) in proportion */
  BwssPrefs q[] = { P (10, 600e3, 1), P (10, 200e3, 1), P (0, 0, 1) };
  uint64_t gq[] = { 9, 9, 0 };
  g_assert_cmpint (bwss__allocate_grouped_capped (600e3, q, NULL, gq, 3, t, m), ==, 0);
  g_assert_cmpfloat_with_epsilon (m[0], 450e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (m[1], 150e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[0] + t[1], 600e3, 1e-6);
  g_assert_cmpfloat (t[2], ==, 0.0);
}

/* Caps in groups: a member limited elsewhere leaves its part to its
 * siblings first; a group whose every member is capped leaves the rest to
 * the others; bad input changes nothing. */
static void
test_grouped_capped (void)
{
  BwssPrefs p[] = { P (0, 0, 1), P (0, 0, 1), P (0, 0, 1), P (0, 0, 1) };
  uint64_t g[] = { 3, 3, 3, 0 };
  double caps[] = { 100e3, -1, -1, -1 }, t[4];
  g_assert_cmpint (bwss__allocate_grouped_capped (2e6, p, caps, g, 4, t, NULL), ==, 0);
  g_assert_cmpfloat_with_epsilon (t[0], 100e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[1], 450e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[2], 450e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[3], 1e6, 1e-6);
  double all[] = { 100e3, 100e3, 100e3, -1 };
  g_assert_cmpint (bwss__allocate_grouped_capped (2e6, p, all, g, 4, t, NULL), ==, 0);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (t[i], 100e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[3], 1.7e6, 1e-6);
  double keep[4] = { 1, 2, 3, 4 }, bad[] = { NAN, -1, -1, -1 };
  g_assert_cmpint (bwss__allocate_grouped_capped (2e6, p, bad, g, 4, keep, NULL), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate_grouped (-1, p, g, 4, keep), ==, BWSS_EINVAL);
  BwssPrefs neg[] = { P (0, 0, 1), P (0, -1, 1) };
  g_assert_cmpint (bwss_allocate_grouped (1e6, neg, g, 2, keep), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_allocate_grouped (1e6, p, g, 4, NULL), ==, BWSS_EINVAL);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (keep[i], ==, i + 1);
  g_assert_cmpint (bwss_allocate_grouped (1e6, NULL, NULL, 0, NULL), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/allocation/eq6/weights-only", test_weights_only);
  g_test_add_func ("/allocation/eq6/minima-then-weights", test_minima_then_weights);
  g_test_add_func ("/allocation/eq7/priority-order", test_priority_order);
  g_test_add_func ("/allocation/eq7/equal-priorities", test_equal_priorities);
  g_test_add_func ("/allocation/open/zero-weights", test_zero_weights);
  g_test_add_func ("/allocation/open/min-only-flow", test_min_only_flow);
  g_test_add_func ("/allocation/open/sigma-zero-and-empty", test_sigma_zero_and_empty);
  g_test_add_func ("/allocation/open/huge-values", test_huge_values);
  g_test_add_func ("/allocation/invalid-input", test_invalid_input);
  g_test_add_func ("/allocation/eq5/partition-property", test_partition_property);
  g_test_add_func ("/allocation/eq6-capped/water-fill", test_capped_water_fill);
  g_test_add_func ("/allocation/eq6-capped/edges", test_capped_edges);
  g_test_add_func ("/allocation/groups/halves", test_grouped_halves);
  g_test_add_func ("/allocation/groups/minimum", test_grouped_minimum);
  g_test_add_func ("/allocation/groups/capped", test_grouped_capped);
  return g_test_run ();
}

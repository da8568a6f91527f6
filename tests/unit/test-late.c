/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-late.c — late packets and required prebuffer (bwss/late.h), exact cases. */
#include <math.h>
#include <glib.h>
#include <bwss/late.h>

#define S 1000000ull

/* 8000 bit/s in 1000-byte packets: Δ = 1 s per packet. */
static void
init_slow (BwssLate *l)
{
  g_assert_cmpint (bwss_late_init (l, 8000, 1000, NULL, 0), ==, 0);
  g_assert_cmpuint (l->n_thresholds, ==, 5);
}

static void
test_on_time (void)
{
  BwssLate l;
  init_slow (&l);
  bwss_late_add (&l, 0, 1);                       /* first byte: t0 */
  for (int k = 0; k < 10; k++)                    /* packet k completes at k + 0.5 s */
    bwss_late_add (&l, (uint64_t) (k * S + S / 2), (uint64_t) (k + 1) * 1000);
  bwss_late_finish (&l);
  for (size_t i = 0; i < 5; i++)
    g_assert_cmpfloat (bwss_late_fraction (&l, i, 20 * S), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (bwss_late_required_prebuffer (&l, 20 * S), 0.5, 1e-9);
}

/* Five packets on time, then a stall: packets 5..9 all arrive at 8 s. */
static void
stall (BwssLate *l)
{
  init_slow (l);
  bwss_late_add (l, 0, 1);
  for (int k = 0; k < 5; k++)
    bwss_late_add (l, (uint64_t) k * S + S / 10, (uint64_t) (k + 1) * 1000);
}

static void
test_stall (void)
{
  BwssLate l;
  stall (&l);
  bwss_late_add (&l, 8 * S, 10000);
  bwss_late_finish (&l);
  /* lateness of packets 5..9: 3, 2, 1, 0, −1 s */
  g_assert_cmpfloat_with_epsilon (bwss_late_fraction (&l, 0, 9 * S), 0.3, 1e-9); /* P = 0.5 */
  g_assert_cmpfloat_with_epsilon (bwss_late_fraction (&l, 1, 9 * S), 0.2, 1e-9); /* P = 1 */
  g_assert_cmpfloat_with_epsilon (bwss_late_fraction (&l, 2, 9 * S), 0.1, 1e-9); /* P = 2 */
  g_assert_cmpfloat (bwss_late_fraction (&l, 3, 9 * S), ==, 0.0);                /* P = 4 */
  g_assert_cmpfloat (bwss_late_fraction (&l, 4, 9 * S), ==, 0.0);                /* P = 8 */
  g_assert_cmpfloat_with_epsilon (bwss_late_required_prebuffer (&l, 9 * S), 3.0, 1e-9);
  g_assert_cmpfloat (bwss_late_fraction (&l, 5, 9 * S), <, 0.0);                 /* no such index */
}

/* During the stall, packets past their deadline count as late already. */
static void
test_missing_packets_count (void)
{
  BwssLate l;
  stall (&l);
  /* at 7 s with P = 0.5, packets 0..6 are due, 5 and 6 are missing */
  g_assert_cmpfloat_with_epsilon (bwss_late_fraction (&l, 0, 7 * S), 2.0 / 7.0, 1e-9);
  /* packet 5 has waited 2 s past its media time */
  g_assert_cmpfloat_with_epsilon (bwss_late_required_prebuffer (&l, 7 * S), 2.0, 1e-9);
  /* once the stream is over, nothing more is expected */
  bwss_late_finish (&l);
  g_assert_cmpfloat (bwss_late_fraction (&l, 0, 7 * S), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (bwss_late_required_prebuffer (&l, 7 * S), 0.1, 1e-9);
}

/* The paper's stream: 496 kbit/s = 62 packets of 1000 B per second. */
static void
test_paper_rate (void)
{
  BwssLate l;
  double th[] = { 0.0, 1.0 };
  g_assert_cmpint (bwss_late_init (&l, 496000, 1000, th, 2), ==, 0);
  /* 10 s delivered at 80 % of the rate: the deficit grows by 0.2 s per s */
  uint64_t bytes = 0;
  for (int ms = 10; ms <= 10000; ms += 10) {
    bytes += 496;                                  /* 0.8 · 62000 B/s · 10 ms */
    bwss_late_add (&l, (uint64_t) ms * 1000, bytes);
  }
  bwss_late_finish (&l);
  /* 496 packets arrived; the last one 10 s after t0 with media time 495/62 */
  g_assert_cmpuint (l.arrived, ==, 496);
  g_assert_cmpfloat_with_epsilon (bwss_late_required_prebuffer (&l, 0),
                                  10.0 - 0.01 - 495.0 / 62.0, 0.02);
  /* without prebuffer nearly everything is late; with 1 s the first ~5 s are fine */
  g_assert_cmpfloat (bwss_late_fraction (&l, 0, 0), >, 0.95);
  double f1 = bwss_late_fraction (&l, 1, 0);
  g_assert_cmpfloat (f1, >, 0.45);
  g_assert_cmpfloat (f1, <, 0.55);
}

static void
test_invalid (void)
{
  BwssLate l = { .rate_bps = 42 };
  double bad[] = { -1.0 };
  double many[17] = { 0 };
  g_assert_cmpint (bwss_late_init (&l, 0, 1000, NULL, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_late_init (&l, NAN, 1000, NULL, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_late_init (&l, 8000, 0, NULL, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_late_init (&l, 8000, 1000, bad, 1), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_late_init (&l, 8000, 1000, many, 17), ==, BWSS_EINVAL);
  g_assert_cmpfloat (l.rate_bps, ==, 42);          /* untouched */
  g_assert_cmpint (bwss_late_init (NULL, 8000, 1000, NULL, 0), ==, BWSS_EINVAL);
}

static void
test_counter_backwards_ignored (void)
{
  BwssLate l;
  init_slow (&l);
  bwss_late_add (&l, 0, 1);
  bwss_late_add (&l, S / 2, 3000);
  bwss_late_add (&l, S, 10);                       /* ignored */
  g_assert_cmpuint (l.arrived, ==, 3);
  g_assert_cmpuint (l.bytes, ==, 3000);
}

/* A sample that completes 2^50 / 1000 packets at once (a corrupt or hostile
 * counter) costs no more than one that completes ten: each threshold counts
 * its late packets by bisection, not one by one (this hung before). */
static void
test_huge_jump (void)
{
  BwssLate l;
  init_slow (&l);
  bwss_late_add (&l, 0, 1);
  bwss_late_add (&l, 10 * S, UINT64_C (1) << 50);
  g_assert_cmpuint (l.arrived, ==, (UINT64_C (1) << 50) / 1000);
  /* packet k arrives at 10 s: lateness 10 − k; late for P while k < 10 − P */
  const uint64_t want[5] = { 10, 9, 8, 6, 2 };                     /* P = 0.5 1 2 4 8 */
  for (size_t i = 0; i < 5; i++)
    g_assert_cmpuint (l.late_count[i], ==, want[i]);
  g_assert_cmpfloat (l.max_lateness_s, ==, 10.0);
  bwss_late_add (&l, 20 * S, UINT64_MAX);                          /* and the largest count */
  g_assert_cmpuint (l.arrived, ==, UINT64_MAX / 1000);
  g_assert_cmpfloat (bwss_late_required_prebuffer (&l, 20 * S), ==, 10.0);
  g_assert_cmpfloat (bwss_late_fraction (&l, 0, UINT64_MAX), <=, 1.0);
}

/* The reference: every completed packet judged one by one, as the metric is
 * defined in bwss/late.h (what bwss_late_add did before). */
typedef struct {
  uint64_t arrived, bytes, t0_us, late[BWSS_LATE_MAX_THRESHOLDS];
  bool started;
  double max_lateness_s;
} RefLate;

static void
ref_add (RefLate *r, const BwssLate *l, uint64_t now_us, uint64_t bytes)
{
  if (bytes <= r->bytes)
    return;
  if (!r->started) {
    r->started = true;
    r->t0_us = now_us;
  }
  r->bytes = bytes;
  double since = (double) (now_us - r->t0_us) / 1e6;
  double delta = 8.0 * l->packet_bytes / l->rate_bps;
  uint64_t complete = bytes / l->packet_bytes;
  for (uint64_t k = r->arrived; k < complete; k++) {
    double lateness = since - (double) k * delta;
    if (lateness > r->max_lateness_s)
      r->max_lateness_s = lateness;
    for (size_t i = 0; i < l->n_thresholds; i++)
      if (lateness > l->thresholds_s[i])
        r->late[i]++;
  }
  if (complete > r->arrived)
    r->arrived = complete;
}

/* On 2000 random traces the bisection gives exactly the reference's counts
 * (rates, sizes and thresholds chosen to put lateness on the thresholds). */
static void
test_matches_reference (void)
{
  GRand *rand = g_rand_new_with_seed (11);
  for (int trace = 0; trace < 2000; trace++) {
    double th[3] = { 0, g_rand_int_range (rand, 0, 4) * 0.5, g_rand_double_range (rand, 0, 3) };
    BwssLate l;
    uint32_t packet = (uint32_t) g_rand_int_range (rand, 1, 1500);
    double rate = packet * 8.0 / (g_rand_int_range (rand, 1, 5) * 0.25);   /* Δ = 0.25..1 s */
    g_assert_cmpint (bwss_late_init (&l, rate, packet, th, 3), ==, 0);
    RefLate r = { 0 };
    uint64_t now = 0, bytes = 0;
    for (int step = 0; step < 40; step++) {
      now += (uint64_t) g_rand_int_range (rand, 0, 3) * S / 4;
      bytes += (uint64_t) g_rand_int_range (rand, 0, 6 * packet);
      bwss_late_add (&l, now, bytes);
      ref_add (&r, &l, now, bytes);
    }
    g_assert_cmpuint (l.arrived, ==, r.arrived);
    g_assert_cmpfloat (l.max_lateness_s, ==, r.max_lateness_s);
    for (size_t i = 0; i < 3; i++)
      g_assert_cmpuint (l.late_count[i], ==, r.late[i]);
  }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/late/on-time", test_on_time);
  g_test_add_func ("/late/stall", test_stall);
  g_test_add_func ("/late/missing-packets-count", test_missing_packets_count);
  g_test_add_func ("/late/paper-rate", test_paper_rate);
  g_test_add_func ("/late/invalid", test_invalid);
  g_test_add_func ("/late/counter-backwards-ignored", test_counter_backwards_ignored);
  g_test_add_func ("/late/huge-jump", test_huge_jump);
  g_test_add_func ("/late/matches-reference", test_matches_reference);
  return g_test_run ();
}

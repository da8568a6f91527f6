/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-estimator-fcs.c — the rate estimator (Sec. IV-B) and the FCS law
 * (Sec. IV-A): exact steps of eq. (1), (3), (4), the hold, and convergence
 * against a window-limited flow model, including RTT and target changes.
 */
#include <math.h>
#include <glib.h>
#include "laws.h"
#include "flowmodel.h"

#define MS 1000ull
#define S  1000000ull

/* The paper's FCS (no rescale, restart below half) for the exact steps of
 * its equations; the delay loop's defaults where the test says so. */
static BwssParams params, delay_params;

static void
setup_params (void)
{
  bwss_params_init_for (&params, BWSS_LOOP_PAPER);
  bwss_params_init (&delay_params);
}

#define STEP (25 * MS)   /* the meter step of these tests */

/* ---- estimator ---- */

static void
test_estimator_ewma (void)
{
  BwssEstimator e;
  bwss_estimator_init (&e);
  g_assert_false (bwss_estimator_sample (&e, 0, 0, 100 * MS, 0.3, STEP));          /* opens */
  g_assert_false (bwss_estimator_sample (&e, 50 * MS, 600, 100 * MS, 0.3, STEP));  /* inside φ */
  g_assert_true (bwss_estimator_sample (&e, 100 * MS, 1250, 100 * MS, 0.3, STEP));
  g_assert_cmpfloat_with_epsilon (e.rate_bps, 100000, 1e-6);                 /* R ← R_φ */
  g_assert_true (bwss_estimator_sample (&e, 200 * MS, 1250 + 2500, 100 * MS, 0.3, STEP));
  /* R ← 0.3·100000 + 0.7·200000 */
  g_assert_cmpfloat_with_epsilon (e.rate_bps, 170000, 1e-6);
  g_assert_cmpuint (e.periods, ==, 2);
}

static void
test_estimator_restart (void)
{
  BwssEstimator e;
  bwss_estimator_init (&e);
  bwss_estimator_sample (&e, 0, 0, 100 * MS, 0.3, STEP);
  bwss_estimator_sample (&e, 100 * MS, 12500, 100 * MS, 0.3, STEP);     /* 1 Mbit/s */
  bwss__estimator_restart (&e, 300 * MS);
  g_assert_false (bwss_estimator_sample (&e, 250 * MS, 20000, 100 * MS, 0.3, STEP)); /* not yet */
  g_assert_false (bwss_estimator_sample (&e, 300 * MS, 25000, 100 * MS, 0.3, STEP)); /* opens */
  g_assert_true (bwss_estimator_sample (&e, 400 * MS, 26250, 100 * MS, 0.3, STEP));
  g_assert_cmpfloat_with_epsilon (e.rate_bps, 100000, 1e-6);        /* replaced, not averaged */
  g_assert_cmpuint (e.periods, ==, 1);

  /* a counter that goes backwards (new socket) restarts the estimate */
  g_assert_false (bwss_estimator_sample (&e, 500 * MS, 10, 100 * MS, 0.3, STEP)); /* reopens */
  g_assert_cmpuint (e.periods, ==, 0);
  g_assert_false (bwss_estimator_sample (&e, 510 * MS, 10, 100 * MS, 0.3, STEP));
  g_assert_true (bwss_estimator_sample (&e, 600 * MS, 10 + 2500, 100 * MS, 0.3, STEP));
  g_assert_cmpfloat_with_epsilon (e.rate_bps, 200000, 1e-6);
}

/* The meter: the mean over a window is measured over the window's own
 * length, the count at its start interpolated between two samples. */
static void
test_estimator_mean_interpolates (void)
{
  BwssEstimator e;
  bwss_estimator_init (&e);
  g_assert_cmpfloat (bwss_estimator_mean (&e, 100 * MS), <, 0.0);   /* nothing yet */
  /* 1 Mbit/s = 125 bytes per ms, sampled every 10 ms (the meter keeps one
   * entry per 25 ms: at 0, 30, 60, ...) */
  for (uint64_t t = 0; t <= 1000 * MS; t += 10 * MS)
    bwss_estimator_sample (&e, t, t / MS * 125, 100 * MS, 0.3, STEP);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, 100 * MS), 1e6, 1e-3);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, 110 * MS), 1e6, 1e-3);
  g_assert_cmpfloat_with_epsilon (bwss__estimator_bytes (&e, 110 * MS), 110 * 125, 1e-6);
  /* then 2 Mbit/s for 50 ms: a 100-ms window is half of each */
  for (uint64_t t = 1010 * MS; t <= 1050 * MS; t += 10 * MS)
    bwss_estimator_sample (&e, t, 125000 + (t / MS - 1000) * 250, 100 * MS, 0.3, STEP);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, 100 * MS), 1.5e6, 1e-3);
  /* a window longer than the history: the whole history */
  BwssEstimator g;
  bwss_estimator_init (&g);
  bwss_estimator_sample (&g, 0, 0, 100 * MS, 0.3, STEP);
  bwss_estimator_sample (&g, 40 * MS, 5000, 100 * MS, 0.3, STEP);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&g, 10 * S), 1e6, 1e-3);
  /* a counter going backwards clears the history */
  bwss_estimator_sample (&g, 50 * MS, 10, 100 * MS, 0.3, STEP);
  g_assert_cmpfloat (bwss_estimator_mean (&g, 10 * S), <, 0.0);
}

/* Samples at unequal intervals (a slack flow's, 100 ms apart, between a
 * flow's 40-ms ones): every mean is over the interval the samples span —
 * the window ends at the last sample, its start interpolated between the
 * two around it — and each estimation period's R_φ over the period as
 * measured, however long past φ it ran; a rate that changed at a sample
 * is read from that sample on. */
static void
test_estimator_unequal_intervals (void)
{
  BwssEstimator e;
  bwss_estimator_init (&e);
  static const uint64_t at_ms[] = { 0, 40, 80, 180, 280, 320, 420, 460, 560, 660 };
  unsigned periods = 0;
  for (size_t k = 0; k < G_N_ELEMENTS (at_ms); k++) {   /* 1 Mbit/s: 125 bytes a ms */
    if (bwss_estimator_sample (&e, at_ms[k] * MS, at_ms[k] * 125, 80 * MS, 0.5, STEP)) {
      periods++;
      g_assert_cmpfloat_with_epsilon (e.rate_bps, 1e6, 1e-3);
    }
  }
  g_assert_cmpuint (periods, >=, 4);
  for (uint64_t w = 30; w <= 600; w += 70)
    g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, w * MS), 1e6, 1e-3);
  /* from 660 ms at 3 Mbit/s, sampled 100 ms apart: a window within the
   * new rate reads it, one reaching back before 660 ms the mix */
  uint64_t b660 = 660 * 125;
  bwss_estimator_sample (&e, 760 * MS, b660 + 100 * 375, 80 * MS, 0.5, STEP);
  bwss_estimator_sample (&e, 860 * MS, b660 + 200 * 375, 80 * MS, 0.5, STEP);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, 200 * MS), 3e6, 1e-3);
  g_assert_cmpfloat_with_epsilon (bwss_estimator_mean (&e, 400 * MS), 2e6, 1e-3);
}

/* The bound of the bytes over a window (what the delay loop's urgent check
 * asks of every flow first): never below the bytes the meter reads, and the
 * same when the window covers the whole history; samples at irregular
 * times, some closer than a meter step, bursts and silences. */
static void
test_estimator_bytes_bound (void)
{
  GRand *r = g_rand_new_with_seed (35);
  for (int run = 0; run < 50; run++) {
    BwssEstimator e;
    bwss_estimator_init (&e);
    g_assert_cmpfloat (bwss__estimator_bytes_bound (&e, 100 * MS, STEP), ==, 0.0);
    uint64_t t = 0, bytes = 0;
    for (int i = 0; i < 400; i++) {
      t += (uint64_t) g_rand_int_range (r, 1, 60) * MS;
      if (g_rand_int_range (r, 0, 4) != 0)
        bytes += (uint64_t) g_rand_int_range (r, 0, 40000);
      bwss_estimator_sample (&e, t, bytes, 100 * MS, 0.3, STEP);
      uint64_t w = (uint64_t) g_rand_int_range (r, 1, 5000) * MS;
      double exact = bwss__estimator_bytes (&e, w), bound = bwss__estimator_bytes_bound (&e, w, STEP);
      g_assert_cmpfloat (bound, >=, exact);
      g_assert_cmpfloat (bwss__estimator_bytes_bound (&e, 100 * S, STEP), ==,
                         bwss__estimator_bytes (&e, 100 * S));
    }
  }
  g_rand_free (r);
}

/* ---- FCS exact steps ---- */

/* Brings a fresh FCS to w = 9 (T = 1 Mbit/s, RTT 100 ms, MSS 1448) and feeds
 * one estimation period measuring @rate_bps; returns the time the hold ends. */
static uint64_t
fcs_with_estimate (BwssFcs *f, double rate_bps)
{
  bwss__fcs_init (f);
  /* eq. (1): w = T·RTT/p = 1e6·0.1/(1448·8) = 8.63 → 9 */
  g_assert_cmpuint (bwss__fcs_step (f, &params, 0, 1e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpint (f->state, ==, BWSS_FCS_HOLD);
  /* estimation starts one RTT after the change; φ = 200 ms */
  bwss__fcs_observe (f, &params, 100 * MS, 1000, 100 * MS);
  g_assert_true (bwss__fcs_observe (f, &params, 300 * MS,
                                   1000 + (uint64_t) (rate_bps * 0.2 / 8), 100 * MS));
  /* hold = RTT + 3φ = 700 ms */
  g_assert_cmpuint (bwss__fcs_hold_us (&params, 100 * MS), ==, 700 * MS);
  return 700 * MS;
}

static void
test_fcs_init_and_hold (void)
{
  BwssFcs f;
  uint64_t hold = fcs_with_estimate (&f, 2e6);
  /* inside the hold nothing moves, whatever the estimate says */
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold - 1, 1e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpuint (bwss__fcs_step (&f, &params, 400 * MS, 1e6, 100 * MS, 1448), ==, 9);
  /* unknown RTT: stays released */
  BwssFcs g;
  bwss__fcs_init (&g);
  g_assert_cmpuint (bwss__fcs_step (&g, &params, 0, 1e6, 0, 1448), ==, 0);
  g_assert_cmpint (g.state, ==, BWSS_FCS_RELEASED);
}

static void
test_fcs_eq3_decrease (void)
{
  BwssFcs f;
  uint64_t hold = fcs_with_estimate (&f, 1.5e6);
  /* eq. (3): Δw' = ⌊(1.5e6 − 1e6)·0.1/11584 + 0.5⌋ = ⌊4.816⌋ = 4 */
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold, 1e6, 100 * MS, 1448), ==, 5);
  g_assert_cmpint (f.state, ==, BWSS_FCS_DECREASED);
  g_assert_cmpuint (f.hold_until_us, ==, hold + 700 * MS);
}

static void
test_fcs_eq3_floor_at_one (void)
{
  BwssFcs f;
  uint64_t hold = fcs_with_estimate (&f, 10e6);
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold, 1e6, 100 * MS, 1448), ==, 1);
}

static void
test_fcs_eq4_increase (void)
{
  BwssFcs f;
  uint64_t hold = fcs_with_estimate (&f, 0.5e6);
  /* eq. (4): Δw'' = ⌊0.7·(1e6 − 0.5e6)·0.1/11584⌋ = ⌊3.02⌋ = 3 */
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold, 1e6, 100 * MS, 1448), ==, 12);
  g_assert_cmpint (f.state, ==, BWSS_FCS_INCREASED);

  /* just below the interval: eq. (4) gives 0, the law adds at least 1 */
  uint64_t hold2 = fcs_with_estimate (&f, 0.94e6);
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold2, 1e6, 100 * MS, 1448), ==, 10);
}

/* A target cut by more than half restarts from eq. (1) at once, even in
 * the hold: 1 Mbit/s → 0.3 Mbit/s at 100 ms is ⌊2.59 + 0.5⌋ = 3 segments. */
static void
test_fcs_restart_on_target_cut (void)
{
  BwssFcs f;
  fcs_with_estimate (&f, 1e6);
  g_assert_cmpuint (bwss__fcs_step (&f, &params, 200 * MS, 0.3e6, 100 * MS, 1448), ==, 3);
  g_assert_cmpint (f.state, ==, BWSS_FCS_HOLD);
  /* a cut to 60 % is left to eq. (3) */
  BwssFcs g;
  fcs_with_estimate (&g, 1e6);
  g_assert_cmpuint (bwss__fcs_step (&g, &params, 200 * MS, 0.6e6, 100 * MS, 1448), ==, 9);
}

/* The delay loop's rescale: a target moved by more than 10 % scales the
 * window at once, holds or not, by the rate it carries: with no estimate
 * yet, the target it was set for: 9 segments for 1 Mbit/s become ⌊9·0.5 +
 * 0.5⌋ = 5 for 0.5 Mbit/s, ⌊5·0.75/0.5 + 0.5⌋ = 8 for 0.75 Mbit/s; a move
 * of 8 % is left to eq. (3)/(4).  With a fresh estimate (the window carries
 * 0.6 Mbit/s, say a longer path than the RTT given), by that: 9 segments
 * for 1.2 Mbit/s become 18. */
static void
test_fcs_rescale_on_retarget (void)
{
  BwssFcs f;
  bwss__fcs_init (&f);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 0, 1e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 10 * MS, 1.08e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 20 * MS, 0.5e6, 100 * MS, 1448), ==, 5);
  g_assert_cmpint (f.state, ==, BWSS_FCS_HOLD);
  g_assert_cmpfloat (f.target_bps, ==, 0.5e6);
  g_assert_cmpuint (f.hold_until_us, ==, 20 * MS + 700 * MS);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 30 * MS, 0.75e6, 100 * MS, 1448), ==, 8);
  /* with an estimate of what the window carries */
  BwssFcs h;
  bwss__fcs_init (&h);
  g_assert_cmpuint (bwss__fcs_step (&h, &delay_params, 0, 1e6, 100 * MS, 1448), ==, 9);
  bwss__fcs_observe (&h, &delay_params, 100 * MS, 1000, 100 * MS);
  g_assert_true (bwss__fcs_observe (&h, &delay_params, 300 * MS, 1000 + 15000, 100 * MS));
  g_assert_cmpfloat_with_epsilon (h.est.rate_bps, 0.6e6, 1.0);
  g_assert_cmpuint (bwss__fcs_step (&h, &delay_params, 310 * MS, 1.2e6, 100 * MS, 1448), ==, 18);
  /* the paper's FCS does not rescale */
  BwssFcs g;
  bwss__fcs_init (&g);
  g_assert_cmpuint (bwss__fcs_step (&g, &params, 0, 1e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpuint (bwss__fcs_step (&g, &params, 10 * MS, 0.6e6, 100 * MS, 1448), ==, 9);
}

/* The delay loop's sub-segment window: eq. (3) from one segment goes one
 * level down, to min_window_bytes; eq. (4) comes back up; eq. (1) for
 * less than half a segment starts there. */
static void
test_fcs_sub_segment_window (void)
{
  BwssFcs f;
  bwss__fcs_init (&f);
  /* 100 kbit/s at 30 ms is 0.26 segment: the sub-segment window */
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 0, 100e3, 30 * MS, 1448), ==, 1);
  g_assert_true (f.sub);
  g_assert_cmpuint (bwss__fcs_window_bytes (&f, &delay_params, 1448), ==,
                    delay_params.min_window_bytes);
  /* 200 kbit/s at 30 ms is 0.52 segment: eq. (1) rounds to one; measured
   * 386 kbit/s (one segment per 30 ms), eq. (3) rounds its step to 0 but
   * the rate debt says over on balance: one level down, the sub-segment
   * window */
  BwssFcs g;
  bwss__fcs_init (&g);
  g_assert_cmpuint (bwss__fcs_step (&g, &delay_params, 0, 200e3, 30 * MS, 1448), ==, 1);
  g_assert_false (g.sub);
  uint64_t t = 10 * MS, bytes = 0;
  while (!g.sub && t < 5 * S) {
    bytes += 386000 / 8 / 100;                  /* 386 kbit/s in 10-ms steps */
    bwss__fcs_observe (&g, &delay_params, t, bytes, 30 * MS);
    bwss__fcs_step (&g, &delay_params, t, 200e3, 30 * MS, 1448);
    t += 10 * MS;
  }
  g_assert_true (g.sub);
  g_assert_cmpint (g.state, ==, BWSS_FCS_DECREASED);
  g_assert_cmpuint (bwss__fcs_window_bytes (&g, &delay_params, 1448), ==, 1152);
  /* the paper's FCS has no such window */
  BwssFcs h;
  bwss__fcs_init (&h);
  g_assert_cmpuint (bwss__fcs_step (&h, &params, 0, 100e3, 30 * MS, 1448), ==, 1);
  g_assert_false (h.sub);
  g_assert_cmpuint (bwss__fcs_window_bytes (&h, &params, 1448), ==, 1448);
  /* nor do segments more than twice its size (loopback's 32 kB: the sender
   * would wait on its persist timer): one whole segment is the floor, at
   * eq. (1) and after eq. (3) */
  BwssFcs l;
  bwss__fcs_init (&l);
  g_assert_cmpuint (bwss__fcs_step (&l, &delay_params, 0, 100e3, 30 * MS, 32768), ==, 1);
  g_assert_false (l.sub);
  g_assert_cmpuint (bwss__fcs_window_bytes (&l, &delay_params, 32768), ==, 32768);
  t = 10 * MS;
  bytes = 0;
  for (int i = 0; i < 200; i++, t += 10 * MS) {
    bytes += 8738000 / 8 / 100;                 /* one segment per 30 ms */
    bwss__fcs_observe (&l, &delay_params, t, bytes, 30 * MS);
    bwss__fcs_step (&l, &delay_params, t, 100e3, 30 * MS, 32768);
    g_assert_false (l.sub);
    g_assert_cmpuint (l.window, ==, 1);
  }
}

/* The segment the laws reason about is never below the sender's: the
 * advertised MSS (tcpi_advmss) bounds it from above, the estimate from the
 * segments seen (tcpi_rcv_mss) from below. */
static void
test_fcs_sender_segment (void)
{
  /* loopback after a small first window: 1536 seen, 65483 sent later */
  g_assert_cmpuint (bwss_sender_segment (1536, 65483), ==, 65483);
  g_assert_cmpuint (bwss_sender_segment (65483, 65483), ==, 65483);
  /* an Ethernet path (MTU 1500, timestamps): both 1448 */
  g_assert_cmpuint (bwss_sender_segment (1448, 1448), ==, 1448);
  g_assert_cmpuint (bwss_sender_segment (536, 1448), ==, 1448);
  /* one of them unknown: the other; both: unknown */
  g_assert_cmpuint (bwss_sender_segment (1448, 0), ==, 1448);
  g_assert_cmpuint (bwss_sender_segment (0, 1448), ==, 1448);
  g_assert_cmpuint (bwss_sender_segment (0, 0), ==, 0);
}

/* Segments large against the receive buffer (loopback's 65483) get a floor
 * of two whole segments in both loops, at eq. (1) and after eq. (3), and
 * never the sub-segment window; Ethernet's keep the paper's one. */
static void
test_fcs_large_segment_floor (void)
{
  const uint32_t lo = 65483;
  const BwssParams *loops[] = { &params, &delay_params };
  for (size_t k = 0; k < G_N_ELEMENTS (loops); k++) {
    const BwssParams *p = loops[k];
    BwssFcs f;
    bwss__fcs_init (&f);
    /* 100 kbit/s at 30 ms is 0.006 of such a segment */
    g_assert_cmpuint (bwss__fcs_step (&f, p, 0, 100e3, 30 * MS, lo), ==, 2);
    g_assert_false (f.sub);
    g_assert_cmpuint (bwss__fcs_window_bytes (&f, p, lo), ==, 2 * lo);
    g_assert_true (bwss__fcs_at_floor (&f, p, lo));
    /* measured far above: eq. (3) steps down, never below two */
    uint64_t t = 10 * MS, bytes = 0;
    for (int i = 0; i < 300; i++, t += 10 * MS) {
      bytes += 2 * lo;                          /* two segments a 10-ms step */
      bwss__fcs_observe (&f, p, t, bytes, 30 * MS);
      bwss__fcs_step (&f, p, t, 100e3, 30 * MS, lo);
      g_assert_false (f.sub);
      g_assert_cmpuint (f.window, ==, 2);
    }
    /* a target of 20 such segments per RTT is no floor */
    BwssFcs g;
    bwss__fcs_init (&g);
    g_assert_cmpuint (bwss__fcs_step (&g, p, 0, 20.0 * lo * 8 / 0.030, 30 * MS, lo), ==, 20);
    g_assert_false (bwss__fcs_at_floor (&g, p, lo));
    /* Ethernet's segments: one segment is the floor, as the paper's */
    BwssFcs e;
    bwss__fcs_init (&e);
    g_assert_cmpuint (bwss__fcs_step (&e, p, 0, 300e3, 30 * MS, 1448), ==, 1);
    g_assert_true (bwss__fcs_at_floor (&e, p, 1448));
    g_assert_cmpuint (bwss__fcs_window_bytes (&e, p, 1448), ==, 1448);
  }
}

/* Paced reads (the delay loop on a slow link): the reads carry the target
 * under a window one segment above what it needs per RTT, at least
 * pace_window_segments; without pacing the window takes over from eq. (1). */
static void
test_fcs_paced_reads (void)
{
  BwssFcs f;
  bwss__fcs_init (&f);
  /* released: no pacing before eq. (1) */
  bwss__fcs_set_paced (&f, &delay_params, true);
  g_assert_cmpfloat (bwss__fcs_pace_bps (&f, &delay_params, 100e3), ==, 0.0);
  /* 100 kbit/s at 30 ms (0.26 segment): eq. (1), then paced at T */
  bwss__fcs_step (&f, &delay_params, 0, 100e3, 30 * MS, 1448);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 10 * MS, 100e3, 30 * MS, 1448), ==,
                    delay_params.pace_window_segments);
  g_assert_true (f.pacing);
  g_assert_false (f.sub);
  g_assert_cmpfloat (bwss__fcs_pace_bps (&f, &delay_params, 100e3), ==, 100e3);
  /* below the slowest pace: the progress floor (64 KiB per 30 s, above
   * pace_min_bps: fcs.c's progress law) */
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 20 * MS, 0.0, 30 * MS, 1448), ==, 2);
  g_assert_cmpfloat (bwss__progress_floor_bps (&delay_params), >, delay_params.pace_min_bps);
  g_assert_cmpfloat_with_epsilon (bwss__fcs_pace_bps (&f, &delay_params, 0.0), 65536 * 8 / 30.0,
                                  1e-6);
  /* 1 Mbit/s at 30 ms needs 2.6 segments: ceil + 1 = 4, at once (no hold) */
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 30 * MS, 1e6, 30 * MS, 1448), ==, 4);
  g_assert_cmpfloat (bwss__fcs_pace_bps (&f, &delay_params, 1e6), ==, 1e6);
  /* back down to 0.5 Mbit/s (ceil 2 + 1 = 3): one segment less is no resize,
   * two are */
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 40 * MS, 5e5, 30 * MS, 1448), ==, 4);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 50 * MS, 1e5, 30 * MS, 1448), ==, 2);
  /* the receiver can no longer pace: released, then eq. (1) for the target */
  bwss__fcs_set_paced (&f, &delay_params, false);
  g_assert_cmpuint (bwss__fcs_step (&f, &delay_params, 60 * MS, 1e6, 30 * MS, 1448), ==, 3);
  g_assert_false (f.pacing);
  g_assert_cmpfloat (bwss__fcs_pace_bps (&f, &delay_params, 1e6), ==, 0.0);
  /* the paper's FCS never paces */
  BwssFcs g;
  bwss__fcs_init (&g);
  bwss__fcs_set_paced (&g, &params, true);
  bwss__fcs_step (&g, &params, 0, 100e3, 30 * MS, 1448);
  bwss__fcs_step (&g, &params, 10 * MS, 100e3, 30 * MS, 1448);
  g_assert_false (g.pacing);
  g_assert_cmpfloat (bwss__fcs_pace_bps (&g, &params, 100e3), ==, 0.0);
}

static void
test_fcs_in_interval_consumes_estimate (void)
{
  BwssFcs f;
  uint64_t hold = fcs_with_estimate (&f, 1.02e6);
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold, 1e6, 100 * MS, 1448), ==, 9);
  g_assert_cmpint (f.state, ==, BWSS_FCS_STEADY);
  /* the same estimate never drives a second decision: even with a new
   * target, nothing moves until a new period ends */
  g_assert_cmpuint (bwss__fcs_step (&f, &params, hold + 10 * MS, 3e6, 100 * MS, 1448), ==, 9);
}

/* ---- FCS against the flow model ---- */

typedef struct {
  Model   m;
  BwssFcs f;
  uint64_t now;
} Sim;

/* Runs one flow for @secs with target @t (the model in 1-ms steps, the FCS
 * every 10 ms with the kernel's receiver RTT), returns its mean rate over
 * the last @tail seconds (bit/s). */
static double
run_fcs (Sim *s, double t, double secs, double tail)
{
  uint64_t end = s->now + (uint64_t) (secs * S);
  uint64_t tail_start = end - (uint64_t) (tail * S), tail_bytes = 0;
  while (s->now < end) {
    model_step (&s->m);
    s->now += MS;
    if (s->now == tail_start)
      tail_bytes = s->m.f[0].bytes;
    if (s->now % (10 * MS))
      continue;
    uint32_t rtt = s->m.f[0].rcv_rtt_us;
    bwss__fcs_observe (&s->f, &params, s->now, s->m.f[0].bytes, rtt);
    uint32_t w = bwss__fcs_step (&s->f, &params, s->now, t, rtt, MODEL_MSS);
    s->m.f[0].window_bytes = w * MODEL_MSS;
  }
  return (s->m.f[0].bytes - tail_bytes) * 8.0 / tail;
}

static void
sim_init (Sim *s, double capacity, double rtt)
{
  model_init (&s->m, capacity, 0.1, 0.001);
  model_add (&s->m, rtt);
  bwss__fcs_init (&s->f);
  s->now = 0;
}

static void
test_fcs_converges (void)
{
  Sim s;
  sim_init (&s, 10e6, 0.050);
  double r = run_fcs (&s, 3e6, 20, 5);
  g_test_message ("3 Mbit/s target at 50 ms: %.0f bit/s, w = %u", r, s.f.window);
  g_assert_cmpfloat (r, >=, 0.95 * 3e6);
  g_assert_cmpfloat (r, <=, 1.05 * 3e6);
  model_free (&s.m);
}

static void
test_fcs_follows_rtt_change (void)
{
  Sim s;
  sim_init (&s, 10e6, 0.050);
  run_fcs (&s, 3e6, 20, 5);
  uint32_t w50 = s.f.window;
  s.m.f[0].base_rtt_s = 0.150;          /* the path gets 3× longer */
  double r = run_fcs (&s, 3e6, 20, 5);
  g_test_message ("after RTT 50→150 ms: %.0f bit/s, w %u → %u", r, w50, s.f.window);
  g_assert_cmpfloat (r, >=, 0.95 * 3e6);
  g_assert_cmpfloat (r, <=, 1.05 * 3e6);
  g_assert_cmpuint (s.f.window, >=, 3 * w50 - 3);
  s.m.f[0].base_rtt_s = 0.040;          /* and much shorter */
  r = run_fcs (&s, 3e6, 20, 5);
  g_assert_cmpfloat (r, >=, 0.95 * 3e6);
  g_assert_cmpfloat (r, <=, 1.05 * 3e6);
  model_free (&s.m);
}

static void
test_fcs_follows_target_change (void)
{
  Sim s;
  sim_init (&s, 10e6, 0.040);
  run_fcs (&s, 6e6, 15, 5);
  double r = run_fcs (&s, 1e6, 10, 5);
  g_assert_cmpfloat (r, >=, 0.95 * 1e6);
  g_assert_cmpfloat (r, <=, 1.05 * 1e6);
  r = run_fcs (&s, 4e6, 10, 5);
  g_assert_cmpfloat (r, >=, 0.95 * 4e6);
  g_assert_cmpfloat (r, <=, 1.05 * 4e6);
  model_free (&s.m);
}

/* The paper's smallest windows: 496 kbit/s at 70 ms is 3 segments. */
static void
test_fcs_small_window (void)
{
  Sim s;
  sim_init (&s, 960e3, 0.070);
  double r = run_fcs (&s, 496e3, 30, 10);
  g_test_message ("496 kbit/s at 70 ms: %.0f bit/s, w = %u", r, s.f.window);
  /* one segment is 165 kbit/s here: the law dithers between 2 and 3 and the
   * average must still sit near the target */
  g_assert_cmpfloat (r, >=, 0.85 * 496e3);
  g_assert_cmpfloat (r, <=, 1.15 * 496e3);
  model_free (&s.m);
}

/* A flow limited elsewhere must not wind its window up for ever. */
static void
test_fcs_no_windup (void)
{
  Sim s;
  sim_init (&s, 10e6, 0.050);
  s.m.f[0].path_limit_bps = 1e6;
  double r = run_fcs (&s, 3e6, 60, 10);
  /* cap = ⌊4·T·RTT/p⌋ + 1 = ⌊4·12.95⌋ + 1 = 52 */
  g_assert_cmpuint (s.f.window, <=, 52);
  g_assert_cmpfloat_with_epsilon (r, 1e6, 2e4);
  /* when the limit lifts, the flow is brought back to T, not far above */
  s.m.f[0].path_limit_bps = 0;
  r = run_fcs (&s, 3e6, 20, 5);
  g_assert_cmpfloat (r, >=, 0.95 * 3e6);
  g_assert_cmpfloat (r, <=, 1.05 * 3e6);
  model_free (&s.m);
}

static void
test_params_validate (void)
{
  BwssParams p;
  const char *field = NULL;
  bwss_params_init (&p);
  g_assert_cmpint (bwss_params_validate (&p, &field), ==, 0);
  g_assert_null (field);
  p.alpha = NAN;
  g_assert_cmpint (bwss_params_validate (&p, &field), ==, BWSS_EINVAL);
  g_assert_cmpstr (field, ==, "alpha");
  bwss_params_init (&p);
  p.beta = 1.5;
  g_assert_cmpint (bwss_params_validate (&p, &field), ==, BWSS_EINVAL);
  g_assert_cmpstr (field, ==, "beta");
  bwss_params_init (&p);
  p.gamma = 0;
  g_assert_cmpint (bwss_params_validate (&p, &field), ==, BWSS_EINVAL);
  g_assert_cmpstr (field, ==, "gamma");
  bwss_params_init (&p);
  p.probe_min_us = p.probe_max_us + 1;
  g_assert_cmpint (bwss_params_validate (&p, &field), ==, BWSS_EINVAL);
  g_assert_cmpstr (field, ==, "probe_min_us");
  BwssController *c = NULL;
  g_assert_cmpint (bwss_controller_new (&p, &c), ==, BWSS_EINVAL);
  g_assert_null (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  setup_params ();
  g_test_add_func ("/estimator/ewma", test_estimator_ewma);
  g_test_add_func ("/estimator/restart", test_estimator_restart);
  g_test_add_func ("/estimator/mean-interpolates", test_estimator_mean_interpolates);
  g_test_add_func ("/estimator/bytes-bound", test_estimator_bytes_bound);
  g_test_add_func ("/estimator/unequal-intervals", test_estimator_unequal_intervals);
  g_test_add_func ("/fcs/init-and-hold", test_fcs_init_and_hold);
  g_test_add_func ("/fcs/eq3-decrease", test_fcs_eq3_decrease);
  g_test_add_func ("/fcs/eq3-floor-at-one", test_fcs_eq3_floor_at_one);
  g_test_add_func ("/fcs/eq4-increase", test_fcs_eq4_increase);
  g_test_add_func ("/fcs/in-interval-consumes-estimate", test_fcs_in_interval_consumes_estimate);
  g_test_add_func ("/fcs/restart-on-target-cut", test_fcs_restart_on_target_cut);
  g_test_add_func ("/fcs/rescale-on-retarget", test_fcs_rescale_on_retarget);
  g_test_add_func ("/fcs/sub-segment-window", test_fcs_sub_segment_window);
  g_test_add_func ("/fcs/paced-reads", test_fcs_paced_reads);
  g_test_add_func ("/fcs/sender-segment", test_fcs_sender_segment);
  g_test_add_func ("/fcs/large-segment-floor", test_fcs_large_segment_floor);
  g_test_add_func ("/fcs/model/converges", test_fcs_converges);
  g_test_add_func ("/fcs/model/rtt-change", test_fcs_follows_rtt_change);
  g_test_add_func ("/fcs/model/target-change", test_fcs_follows_target_change);
  g_test_add_func ("/fcs/model/small-window", test_fcs_small_window);
  g_test_add_func ("/fcs/model/no-windup", test_fcs_no_windup);
  g_test_add_func ("/params/validate", test_params_validate);
  return g_test_run ();
}

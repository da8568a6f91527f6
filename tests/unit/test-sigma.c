/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sigma.c — the paper's σ loop's rules, one by one, with hand-made inputs
 * (Sec. V-C: initialisation, γ rules, half-of-the-flows heuristic, periodic
 * re-initialisation).  Whole traces against a flow model are in
 * test-controller.c.
 */
#include <glib.h>
#include "laws.h"

#define S 1000000ull

static BwssParams p;

static BwssSigmaFlow
flow (double rate, double target, bool settled)
{
  return (BwssSigmaFlow) { .rate_bps = rate, .target_bps = target, .settled = settled };
}

/* Drives @s through the initialisation to REACTIVE at σ = 900 kbit/s. */
static uint64_t
to_reactive (BwssSigma *s, BwssSigmaFlow *f, size_t n)
{
  bwss__sigma_init (s);
  g_assert_true (bwss__sigma_step (s, &p, 0, 0, f, n, S));
  g_assert_cmpint (s->phase, ==, BWSS_PHASE_RELEASE);
  /* nothing is decided during the release */
  g_assert_false (bwss__sigma_step (s, &p, p.release_us - 1, 500e3, f, n, S));
  /* σ ← U, then the first raise step */
  g_assert_true (bwss__sigma_step (s, &p, p.release_us, 900e3, f, n, S));
  g_assert_cmpint (s->phase, ==, BWSS_PHASE_RAISE);
  g_assert_cmpfloat_with_epsilon (s->sigma_bps, 990e3, 1e-6);
  /* U does not follow and the flows miss their raised targets: back to
   * 900k, reactive */
  uint64_t t = p.release_us + S;
  double saved[8];
  for (size_t i = 0; i < n; i++) {
    saved[i] = f[i].target_bps;
    f[i].target_bps = f[i].rate_bps * 1.1;
  }
  g_assert_true (bwss__sigma_step (s, &p, t, 905e3, f, n, S));
  for (size_t i = 0; i < n; i++)
    f[i].target_bps = saved[i];
  g_assert_cmpint (s->phase, ==, BWSS_PHASE_REACTIVE);
  g_assert_cmpfloat_with_epsilon (s->sigma_bps, 900e3, 1e-6);
  return t + S;
}

static void
test_init_raise_while_rising (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (0, 0, false), flow (0, 0, false) };
  bwss__sigma_init (&s);
  bwss__sigma_step (&s, &p, 0, 0, f, 2, S);
  bwss__sigma_step (&s, &p, p.release_us, 1000e3, f, 2, S);      /* σ 1000k → 1100k */
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 1100e3, 1e-6);
  /* too early for the next probe */
  g_assert_false (bwss__sigma_step (&s, &p, p.release_us + S / 2, 1080e3, f, 2, S));
  /* U rose by > 3 %: raise again from 1100k */
  g_assert_true (bwss__sigma_step (&s, &p, p.release_us + S, 1040e3, f, 2, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 1210e3, 1e-6);
  /* U flat (and no flow has a target to reach): σ returns to the last σ
   * that made U rise (1100k) */
  g_assert_true (bwss__sigma_step (&s, &p, p.release_us + 2 * S, 1050e3, f, 2, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_REACTIVE);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 1100e3, 1e-6);
  /* the raise floor lets σ leave small values: 64 kbit/s at least */
  bwss__sigma_init (&s);
  bwss__sigma_step (&s, &p, 0, 0, f, 2, S);
  bwss__sigma_step (&s, &p, p.release_us, 0, f, 2, S);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 64e3, 1e-6);
}

static void
test_one_flow_congested (void)
{
  BwssSigma s;
  BwssSigmaFlow f[3] = { flow (300e3, 300e3, true), flow (300e3, 300e3, true),
                         flow (300e3, 300e3, true) };
  uint64_t t = to_reactive (&s, f, 3);
  g_assert_false (bwss__sigma_step (&s, &p, t, 900e3, f, 3, S));   /* all fine */
  f[2].rate_bps = 200e3;                                          /* < 0.8·300k */
  /* (a): σ += (1−γ)·T* and the flow is tracked */
  g_assert_true (bwss__sigma_step (&s, &p, t + S, 800e3, f, 3, S));
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 900e3 + 0.2 * 300e3, 1e-6);
  g_assert_true (f[2].tracked);
  g_assert_cmpfloat (f[2].tracked_target, ==, 300e3);
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
  /* the others use the share (U follows): σ keeps growing */
  f[0].target_bps = f[1].target_bps = 330e3;
  g_assert_true (bwss__sigma_step (&s, &p, t + 2 * S, 860e3, f, 3, S));
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 960e3 + 96e3, 1e-6);
  /* U stops following, the untracked flows miss their targets: back to
   * the last σ that made it rise */
  f[0].target_bps = f[1].target_bps = 400e3;
  g_assert_true (bwss__sigma_step (&s, &p, t + 3 * S, 865e3, f, 3, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_REACTIVE);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 960e3, 1e-6);
  /* still congested: no new increase for the same flow */
  f[0].target_bps = f[1].target_bps = 300e3;
  g_assert_false (bwss__sigma_step (&s, &p, t + 4 * S, 865e3, f, 3, S));
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 960e3, 1e-6);
  /* (b) it recovers above γ·T*: σ ← U */
  f[2].rate_bps = 290e3;
  g_assert_true (bwss__sigma_step (&s, &p, t + 5 * S, 930e3, f, 3, S));
  g_assert_false (f[2].tracked);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 930e3, 1e-6);
}

/* Rule (c): at least half below γ·T* → σ ← U; U rising again → σ ← U, raise. */
static void
test_link_congestion (void)
{
  BwssSigma s;
  BwssSigmaFlow f[3] = { flow (300e3, 300e3, true), flow (300e3, 300e3, true),
                         flow (300e3, 300e3, true) };
  uint64_t t = to_reactive (&s, f, 3);
  f[0].rate_bps = 200e3;
  f[1].rate_bps = 200e3;
  g_assert_true (bwss__sigma_step (&s, &p, t, 700e3, f, 3, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_LINK_CONGESTED);
  /* σ ← (1 − α)·U: just below what the link carries, so its queue drains */
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 0.95 * 700e3, 1e-6);
  g_assert_false (f[0].tracked || f[1].tracked || f[2].tracked);
  /* U dips further without half of the judged flows below: the low point
   * follows */
  for (int i = 0; i < 3; i++) {
    f[i].target_bps = 233e3;
    f[i].rate_bps = 225e3;
  }
  /* ... and once U has settled after the onset, σ is taken again from it
   * (once) */
  g_assert_true (bwss__sigma_step (&s, &p, t + S, 600e3, f, 3, S));
  g_assert_cmpfloat_with_epsilon (s.u_ref_bps, 600e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 0.95 * 600e3, 1e-6);
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_LINK_CONGESTED);
  /* U rises above the low point: σ ← U then the raise phase climbs */
  g_assert_true (bwss__sigma_step (&s, &p, t + 2 * S, 760e3, f, 3, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
  g_assert_cmpfloat_with_epsilon (s.sigma_good_bps, 760e3, 1e-6);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 836e3, 1e-6);
}

/* Flows whose FCS has not settled are not judged. */
static void
test_unsettled_not_judged (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (300e3, 450e3, true), flow (300e3, 450e3, true) };
  uint64_t t = to_reactive (&s, f, 2);
  f[0] = flow (100e3, 450e3, false);
  f[1] = flow (100e3, 450e3, false);
  g_assert_false (bwss__sigma_step (&s, &p, t, 200e3, f, 2, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_REACTIVE);
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 900e3, 1e-6);
}

/* A flow start/stop goes to the raise phase from the current σ, after one
 * settle interval. */
static void
test_probe_on_flow_change (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (450e3, 450e3, true), flow (450e3, 450e3, true) };
  uint64_t t = to_reactive (&s, f, 2);
  bwss__sigma_probe (&s, t);
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
  g_assert_false (bwss__sigma_step (&s, &p, t, 900e3, f, 2, S));
  g_assert_false (bwss__sigma_step (&s, &p, t + S - 1, 900e3, f, 2, S));
  g_assert_true (bwss__sigma_step (&s, &p, t + S, 900e3, f, 2, S));
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 990e3, 1e-6);
}

/* Flows that come and go faster than the settle interval (a player fetching
 * fragments) must not raise σ by themselves: while raising, a flow change
 * takes U of reference again, and a U that does not rise ends the raise. */
static void
test_flow_churn_does_not_raise (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (300e3, 450e3, true), flow (300e3, 450e3, true) };
  uint64_t t = to_reactive (&s, f, 2);
  double start = s.sigma_bps;
  for (int i = 0; i < 40; i++) {
    /* a join or a leave every half settle interval; U jumps with the set */
    bwss__sigma_probe (&s, t);
    double u = (i % 2) ? 600e3 : 900e3;
    bwss__sigma_step (&s, &p, t, u, f, 2, S);
    t += S / 2;
  }
  /* one probe step at most above where it started */
  g_assert_cmpfloat (s.sigma_bps, <=, start * (1.0 + p.raise_step) + p.raise_floor_bps + 1.0);
}

static void
test_periodic_reinit_and_idle (void)
{
  BwssSigma s;
  BwssSigmaFlow f[1] = { flow (900e3, 900e3, true) };
  uint64_t t = to_reactive (&s, f, 1);
  g_assert_false (bwss__sigma_step (&s, &p, p.reinit_period_us - 1, 900e3, f, 1, S));
  /* the periodic re-initialisation raises from the current σ (a release
   * would hand a protected video to plain TCP) */
  g_assert_true (bwss__sigma_step (&s, &p, p.reinit_period_us, 900e3, f, 1, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
  g_assert_true (bwss__sigma_step (&s, &p, p.reinit_period_us + S, 0, f, 0, S));
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_IDLE);
  (void) t;
}

/* (a) is not held back by a flow above its target whose window is at its
 * floor (the lab's redistribution: one segment per 30 ms is 386 kbit/s). */
static void
test_floor_flow_does_not_block (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (496e3, 680e3, true), flow (386e3, 200e3, true) };
  f[0].rate_bps = 660e3;
  uint64_t t = to_reactive (&s, f, 2);
  f[0].rate_bps = 160e3;                      /* the video's source slows down */
  g_assert_false (bwss__sigma_step (&s, &p, t, 546e3, f, 2, S));   /* excess: waits */
  f[1].at_floor = true;
  g_assert_true (bwss__sigma_step (&s, &p, t + S, 546e3, f, 2, S)); /* (a) */
  g_assert_true (f[0].tracked);
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_RAISE);
}

/* Rule (d): every flow a little short of its target: σ is above the link. */
static void
test_sigma_above_link (void)
{
  BwssSigma s;
  BwssSigmaFlow f[2] = { flow (450e3, 450e3, true), flow (450e3, 450e3, true) };
  uint64_t t = to_reactive (&s, f, 2);
  /* one flow short by 7 %: not (d) */
  f[0].rate_bps = 418e3;
  g_assert_false (bwss__sigma_step (&s, &p, t, 868e3, f, 2, S));
  /* both short by 7 % (more than α, less than 1 − γ): σ ← U */
  f[1].rate_bps = 418e3;
  g_assert_true (bwss__sigma_step (&s, &p, t + S, 836e3, f, 2, S));
  g_assert_cmpfloat_with_epsilon (s.sigma_bps, 0.95 * 836e3, 1e-6);
  g_assert_cmpint (s.phase, ==, BWSS_PHASE_REACTIVE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  bwss_params_init_for (&p, BWSS_LOOP_PAPER);
  g_test_add_func ("/sigma/init/raise-while-rising", test_init_raise_while_rising);
  g_test_add_func ("/sigma/reactive/one-flow-congested", test_one_flow_congested);
  g_test_add_func ("/sigma/reactive/link-congestion", test_link_congestion);
  g_test_add_func ("/sigma/reactive/unsettled-not-judged", test_unsettled_not_judged);
  g_test_add_func ("/sigma/probe-on-flow-change", test_probe_on_flow_change);
  g_test_add_func ("/sigma/flow-churn-does-not-raise", test_flow_churn_does_not_raise);
  g_test_add_func ("/sigma/periodic-reinit-and-idle", test_periodic_reinit_and_idle);
  g_test_add_func ("/sigma/reactive/sigma-above-link", test_sigma_above_link);
  g_test_add_func ("/sigma/reactive/floor-flow-does-not-block", test_floor_flow_does_not_block);
  return g_test_run ();
}

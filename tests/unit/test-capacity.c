/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-capacity.c — the delay loop (capacity.c): its measures (the link's
 * queue, the queue target C2, the decision interval), each rule of its
 * table with hand-made inputs, and whole traces against the fluid model
 * with a queue (sim.h): the paper's experiments, two flows 1:2 on
 * 8 Mbit/s, cross traffic start/stop, a flow joining behind a queue, path
 * congestion vs link congestion, a route whose RTT changes, an AQM
 * bottleneck, an uncontrolled competitor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "laws.h"
#include "sim.h"

#define MS 1000ull
#define S  1000000ull

static BwssParams p;

/* A fresh flow held by its window: @rate of @target, RTT @rtt over @base (µs). */
static BwssCapacityFlow
flow (double rate, double target, uint32_t rtt, uint32_t base)
{
  return (BwssCapacityFlow) { .rate_bps = rate, .target_bps = target, .rtt_us = rtt,
                              .base_rtt_us = base, .mss = 1448, .fresh = true,
                              .window_limited = true };
}

/* ---- measures ---- */

static void
test_queue_is_smallest_excess (void)
{
  BwssCapacityFlow f[3] = { flow (1e6, 1e6, 52000, 40000), flow (1e6, 1e6, 95000, 60000),
                            flow (1e6, 1e6, 250000, 40000) };
  /* 12 ms, 35 ms, 210 ms (a queue on its own path): the link holds 12 */
  g_assert_cmpfloat (bwss__capacity_queue (f, 3), ==, 12000.0);
  /* a flow that received nothing lately does not count */
  f[0].fresh = false;
  g_assert_cmpfloat (bwss__capacity_queue (f, 3), ==, 35000.0);
  /* nor one without a base or an RTT */
  f[1].base_rtt_us = 0;
  f[2].rtt_us = 0;
  g_assert_cmpfloat (bwss__capacity_queue (f, 3), <, 0.0);
  /* RTT below base (a sample racing the base's update) reads as empty */
  BwssCapacityFlow g = flow (1e6, 1e6, 39000, 40000);
  g_assert_cmpfloat (bwss__capacity_queue (&g, 1), ==, 0.0);
}

/* C2: q_t = max(q_min, k·p/C), at most q_max. */
static void
test_queue_target (void)
{
  BwssCapacityFlow f[2] = { flow (2.67e6, 2.67e6, 50000, 40000),
                            flow (5.33e6, 5.33e6, 50000, 40000) };
  /* 8 Mbit/s: two packets are 2.9 ms: q_min */
  g_assert_cmpfloat (bwss__capacity_queue_target (&p, f, 2, 8e6), ==, 10000.0);
  /* 960 kbit/s: two packets, 2·11584/960000 = 24.13 ms */
  g_assert_cmpfloat_with_epsilon (bwss__capacity_queue_target (&p, f, 2, 960e3),
                                  2 * 11584 / 960e3 * 1e6, 1.0);
  /* the flows' MSS counts: 1000-byte segments */
  f[0].mss = f[1].mss = 1000;
  g_assert_cmpfloat_with_epsilon (bwss__capacity_queue_target (&p, f, 2, 960e3),
                                  2 * 8000 / 960e3 * 1e6, 1.0);
  /* a bound for a very slow link */
  g_assert_cmpfloat (bwss__capacity_queue_target (&p, f, 2, 50e3), ==,
                     (double) p.queue_target_max_us);
  /* no link measured yet: q_min */
  g_assert_cmpfloat (bwss__capacity_queue_target (&p, f, 2, 0), ==, 10000.0);
}

static void
test_interval (void)
{
  /* 2 RTTs (base + q_t) of the slowest flow */
  BwssCapacityFlow f[2] = { flow (8e6, 8e6, 50000, 40000), flow (8e6, 8e6, 210000, 200000) };
  g_assert_cmpuint (bwss__capacity_interval (&p, f, 2, 10000.0), ==, 2 * 210000);
  /* 16 segments of the fastest flow when that is longer: 960 kbit/s */
  BwssCapacityFlow g = flow (960e3, 960e3, 40000, 30000);
  g_assert_cmpuint (bwss__capacity_interval (&p, &g, 1, 10000.0), ==,
                    (uint64_t) (16 * 11584 / 960e3 * 1e6));
  /* bounds */
  g = flow (100e6, 100e6, 2000, 1000);
  g_assert_cmpuint (bwss__capacity_interval (&p, &g, 1, 1000.0), ==, p.decision_min_us);
  g = flow (10e3, 10e3, 2000000, 1000000);
  g_assert_cmpuint (bwss__capacity_interval (&p, &g, 1, 1000.0), ==, p.decision_max_us);
}

/* ---- rules ---- */

/* Brings @c to TRACK at σ = U = @u: the start (σ at the minima), then a
 * decision. */
static uint64_t
to_track (BwssCapacity *c, BwssCapacityFlow *f, size_t n, double u)
{
  bwss__capacity_init (c);
  g_assert_true (bwss__capacity_step (c, &p, 1, u, f, n));
  g_assert_cmpint (c->phase, ==, BWSS_PHASE_START);
  double minima = 0;
  for (size_t i = 0; i < n; i++)
    minima += f[i].min_rate_bps;
  g_assert_cmpfloat (c->sigma_bps, ==, minima);
  g_assert_false (bwss__capacity_step (c, &p, p.release_us, u, f, n));   /* not yet */
  g_assert_true (bwss__capacity_step (c, &p, 1 + p.release_us, u, f, n));
  g_assert_cmpint (c->phase, ==, BWSS_PHASE_TRACK);
  g_assert_cmpfloat (c->sigma_bps, ==, u);
  g_assert_cmpstr (bwss__capacity_rule_name (c), ==, "start");
  return c->next_decision_us;
}

/* The detector's "link this host had alone": a U of about the minima is no
 * such link.  The lab's household with three neighbour flows and a
 * 1-Mbit/s video: in the first second, before σ held the downloads at
 * their floors, the neighbour's queue already stood and this host moved
 * 1.15 Mbit/s; learned as the link alone, it made every later decision —
 * the video at its minimum, the downloads at their floors, 130 ms of the
 * neighbour's queue — read as "this host moves the link it had alone", and
 * the loop stayed in TRACK for the whole run. */
static void
test_compete_alone_at_minima (void)
{
  BwssCapacity c;
  double floor = bwss__progress_floor_bps (&p);
  if (8.0 * p.min_window_bytes / 0.160 > floor)
    floor = 8.0 * p.min_window_bytes / 0.160;
  /* the video (its source holds it at its minimum) and two downloads that
   * are not yet at their floors */
  BwssCapacityFlow f[3] = { flow (1e6, 1e6, 160000, 30000), flow (75e3, 5 * floor, 160000, 30000),
                            flow (75e3, 5 * floor, 160000, 30000) };
  f[0].min_rate_bps = 1e6;
  f[0].window_limited = false;
  uint64_t t = to_track (&c, f, 3, 1.15e6);
  g_assert_true (bwss__capacity_step (&c, &p, t, 1.15e6, f, 3));
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_TRACK);
  g_assert_cmpfloat (c.link_alone_bps, ==, 0.0);
  /* then the downloads at their floors, the video at its minimum, the
   * neighbour's queue standing: COMPETE within a few seconds */
  f[1].target_bps = f[2].target_bps = floor;
  f[1].rate_bps = f[2].rate_bps = floor;
  double u = 1e6 + 2 * floor;
  uint64_t end = t + 4000000;
  while (c.phase == BWSS_PHASE_TRACK && t < end) {
    t = c.next_decision_us;
    bwss__capacity_step (&c, &p, t, u, f, 3);
  }
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_COMPETE);
}

/* Steps @c every @step_us from *@t (its decision's due time) for @us, flows
 * @f at their queue target, the caller's rounds @gap_us apart
 * (round_gap_us); returns the decisions taken and the shortest time
 * between two of them in *@shortest_us (UINT64_MAX with fewer than two). */
static unsigned
decide_for (BwssCapacity *c, BwssCapacityFlow *f, size_t n, uint64_t *t, uint64_t step_us,
            uint64_t gap_us, uint64_t us, uint64_t *shortest_us)
{
  unsigned decisions = 0;
  uint64_t end = *t + us, last = c->last_decision_us;
  *shortest_us = UINT64_MAX;
  for (; *t <= end; *t += step_us) {
    c->round_gap_us = gap_us;
    bwss__capacity_step (c, &p, *t, 8e6, f, n);
    if (c->last_decision_us != last) {
      if (decisions > 0 && c->last_decision_us - last < *shortest_us)
        *shortest_us = c->last_decision_us - last;
      last = c->last_decision_us;
      decisions++;
    }
  }
  return decisions;
}

/* Rounds an estimation period apart: a decision lands up to a round late,
 * and the next interval counts from its due time, so the decisions keep
 * their rate (a 420-ms interval at 40-ms rounds: 72 in 30 s, where counted
 * from the round that took it, 440 ms apart, 69), never closer than
 * decision_min_us (a 100-ms interval stays 120 ms at 40-ms rounds). */
static void
test_late_decisions (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (4e6, 4e6, 210000, 200000), flow (4e6, 4e6, 210000, 200000) };
  uint64_t t = to_track (&c, f, 2, 8e6), shortest;
  g_assert_cmpuint (bwss__capacity_interval (&p, f, 2, 10000.0), ==, 420000);
  unsigned d = decide_for (&c, f, 2, &t, 40000, 40000, 30000000, &shortest);
  g_test_message ("420-ms interval, 40-ms rounds: %u decisions in 30 s, %" G_GUINT64_FORMAT
                  " µs apart at least", d, shortest);
  g_assert_cmpuint (d, ==, 30000000 / 420000 + 1);
  g_assert_cmpuint (shortest, >=, p.decision_min_us);
  /* the same rounds with the rule off (a caller said to step every period) */
  t = to_track (&c, f, 2, 8e6);
  d = decide_for (&c, f, 2, &t, 40000, 0, 30000000, &shortest);
  g_assert_cmpuint (d, ==, 30000000 / 440000 + 1);
  /* the shortest interval: decision_min_us apart at least, 120 ms at 40-ms rounds */
  BwssCapacityFlow g[2] = { flow (4e6, 4e6, 50000, 40000), flow (4e6, 4e6, 50000, 40000) };
  t = to_track (&c, g, 2, 8e6);
  g_assert_cmpuint (bwss__capacity_interval (&p, g, 2, 10000.0), ==, p.decision_min_us);
  d = decide_for (&c, g, 2, &t, 40000, 40000, 12000000, &shortest);
  g_assert_cmpuint (shortest, ==, 120000);
  g_assert_cmpuint (d, ==, 12000000 / 120000 + 1);
}

static void
test_rule_cut (void)
{
  BwssCapacity c;
  /* 8 Mbit/s, 40 ms: q_t = 10 ms, b̄ + q_t = 50 ms, horizon 100 ms */
  BwssCapacityFlow f[2] = { flow (4e6, 4e6, 50000, 40000), flow (4e6, 4e6, 50000, 40000) };
  uint64_t t = to_track (&c, f, 2, 8e6);
  /* 20 ms of queue (10 over): the drain, σ ← U·(1 − 10/100) ... */
  f[0].rtt_us = f[1].rtt_us = 60000;
  g_assert_true (bwss__capacity_step (&c, &p, t, 8e6, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "cut");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 8e6 * 0.9, 1.0);
  /* ... for the horizon (two RTTs of 50 ms, also the decision interval),
   * then the cruise: (1 − α)·U; the queue falls fast enough on its own
   * (20 → 12 ms in one interval, the excess of 2 ms gone within the
   * horizon): no further cut */
  g_assert_false (bwss__capacity_step (&c, &p, t + 99999, 8e6, f, 2));
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 8e6 * 0.9, 1.0);
  g_assert_cmpuint (c.next_decision_us, ==, t + 100000);
  t = c.next_decision_us;
  f[0].rtt_us = f[1].rtt_us = 52000;
  g_assert_true (bwss__capacity_step (&c, &p, t, 7.2e6, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 8e6 * (1.0 - p.alpha), 1.0);
  /* 140 ms of cross traffic's queue: a drain of at most max_cut of U, and
   * a cruise at (1 − α)·U over the last half second (decisions at 8, 7.2
   * and now 6 Mbit/s), never above the σ before */
  t = c.next_decision_us;
  f[0].rtt_us = f[1].rtt_us = 180000;
  f[0].rate_bps = f[1].rate_bps = 3e6;
  g_assert_true (bwss__capacity_step (&c, &p, t, 6e6, f, 2));
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 6e6 * (1.0 - p.max_cut), 1.0);
  g_assert_cmpfloat (c.cruise_bps, >, 6e6 * (1.0 - p.alpha));
  g_assert_cmpfloat (c.cruise_bps, <, 8e6 * (1.0 - p.alpha));
}

/* A cut sheds cut·U from U' = Σ max(R_i, m_i): the video's unused minimum
 * stays reserved; and it never takes σ below the minima. */
static void
test_rule_cut_keeps_minima (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (496e3, 496e3, 60000, 30000), flow (300e3, 300e3, 60000, 30000) };
  f[0].min_rate_bps = 496e3;
  uint64_t t = to_track (&c, f, 2, 800e3);
  f[0].rtt_us = f[1].rtt_us = 180000;
  f[0].rate_bps = 440e3;                      /* cross traffic: 640k left for us */
  f[1].rate_bps = 200e3;
  /* U' = max(440k, 496k) + 200k = 696k; shed 30 % of U = 192k: 504k */
  g_assert_true (bwss__capacity_step (&c, &p, t, 640e3, f, 2));
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 696e3 - 0.3 * 640e3, 1.0);
  /* less again: 596k − 120k = 476k would cut the video's minimum */
  t = c.next_decision_us;
  f[0].rate_bps = 300e3;
  f[1].rate_bps = 100e3;
  g_assert_true (bwss__capacity_step (&c, &p, t, 400e3, f, 2));
  g_assert_cmpfloat (c.sigma_bps, ==, 496e3);
}

/* The group law (capacity-model.c, G1-G3): a video over three connections
 * in one group, each with a third of its 1.5-Mbit/s minimum, and a
 * download.  The connections carry the stream's ranges in turn: over one
 * decision one moved the whole minimum, the others nothing.  Judged one by
 * one, two are short of their third and the loop counts a deficit of a
 * minimum that was met; judged as one stream, none is short.  A stream
 * short as a whole is one flow short, by the sum's shortfall. */
static void
test_rule_group_one_stream (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[4] = { flow (500e3, 500e3, 40000, 30000), flow (500e3, 500e3, 40000, 30000),
                            flow (500e3, 500e3, 40000, 30000), flow (2e6, 2e6, 40000, 30000) };
  for (int i = 0; i < 3; i++) {
    f[i].min_rate_bps = 500e3;
    f[i].window_limited = false;
  }
  uint64_t t = to_track (&c, f, 4, 3.5e6);
  BwssCapacity alone = c;
  /* the queue at its target, the link busy, U 3 Mbit/s under σ */
  f[0].rate_bps = 1.5e6;
  f[1].rate_bps = f[2].rate_bps = 0.0;
  f[3].rate_bps = 1.5e6;
  /* one by one: two flows short by their whole third, rule "deficit"
   * takes the 1 Mbit/s they miss off σ */
  g_assert_true (bwss__capacity_step (&alone, &p, t, 3e6, f, 4));
  g_assert_cmpuint (alone.seen_short, ==, 2);
  g_assert_cmpstr (bwss__capacity_rule_name (&alone), ==, "deficit");
  g_assert_cmpfloat_with_epsilon (alone.sigma_bps, 2.5e6, 1.0);
  /* one stream: 1.5 of 1.5 Mbit/s, nobody short, no deficit */
  for (int i = 0; i < 3; i++)
    f[i].group = 9;
  BwssCapacity one = c;
  bwss__capacity_step (&one, &p, t, 3e6, f, 4);
  g_assert_cmpuint (one.seen_short, ==, 0);
  g_assert_cmpstr (bwss__capacity_rule_name (&one), !=, "deficit");
  g_assert_cmpuint (one.group_key[0], ==, 9);
  g_assert_cmpuint (one.group_below_since_us[0], ==, 0);
  /* the stream at 0.9 of 1.5 Mbit/s: one flow short, remembered since */
  t = one.next_decision_us;
  f[0].rate_bps = 0.9e6;
  bwss__capacity_step (&one, &p, t, 2.4e6, f, 4);
  g_assert_cmpuint (one.seen_short, ==, 1);
  g_assert_cmpuint (one.group_below_since_us[0], ==, t);
  /* a flow of another key with a minimum is another stream; the first
   * still short, since the same decision */
  uint64_t since = t;
  f[3].min_rate_bps = 1e6;
  f[3].group = 10;
  t = one.next_decision_us;
  bwss__capacity_step (&one, &p, t, 2.4e6, f, 4);
  g_assert_cmpuint (one.group_key[0], ==, 9);
  g_assert_cmpuint (one.group_below_since_us[0], ==, since);
  g_assert_cmpuint (one.group_key[1], ==, 10);
  g_assert_cmpuint (one.group_below_since_us[1], ==, 0);
}

static void
test_rule_raise (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[1] = { flow (4e6, 4e6, 40000, 40000) };
  uint64_t t = to_track (&c, f, 1, 4e6);
  /* an empty queue, the flow uses all its target: σ·(1 + α), C1's step
   * (gain·q_t/(b̄+q_t) = 10 %) bounded by the ramp */
  g_assert_true (bwss__capacity_step (&c, &p, t, 4e6, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "raise");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 4e6 * (1.0 + p.alpha), 1.0);
  /* still empty, the flow follows: the ramp doubles, up to C1's step */
  t = c.next_decision_us;
  double before = c.sigma_bps;
  f[0].rate_bps = f[0].target_bps = 4.2e6;
  g_assert_true (bwss__capacity_step (&c, &p, t, 4.2e6, f, 1));
  double c1 = p.raise_gain * 10000.0 / 50000.0;
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, before * (1.0 + MIN (2 * p.alpha, c1)), 1.0);
  /* ... never more than max_raise above what the flows use: the flow stays
   * at 4.2 Mbit/s for four decisions */
  for (int i = 0; i < 4; i++) {
    t = c.next_decision_us;
    bwss__capacity_step (&c, &p, t, 4.2e6, f, 1);
  }
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 4.2e6 * (1.0 + p.max_raise), 1.0);
  /* a short queue (an AQM's), no window holds the flow (losses do): no
   * raise, and σ comes down to U (rule "loss") */
  t = c.next_decision_us;
  f[0].rate_bps = 3e6;
  f[0].target_bps = 4.84e6;
  f[0].window_limited = false;
  f[0].rtt_us = 44000;
  for (uint32_t i = 1; i < p.loss_decisions; i++) {   /* a transient is no verdict */
    bwss__capacity_step (&c, &p, t, 3e6, f, 1);
    g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
    t = c.next_decision_us;
  }
  g_assert_true (bwss__capacity_step (&c, &p, t, 3e6, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "loss");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, (1.0 - p.alpha) * 3e6, 1.0);
  /* after it, raises creep by loss_raise at most */
  t = c.next_decision_us;
  f[0] = flow (2.85e6, 2.85e6, 40000, 40000);
  before = c.sigma_bps;
  g_assert_true (bwss__capacity_step (&c, &p, t, 2.85e6, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "raise");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, before * (1.0 + p.loss_raise), 1.0);
  /* a flow its window holds below its target, with the queue at its
   * target: the FCS's business, hold */
  t = c.next_decision_us;
  f[0] = flow (2e6, 3e6, 48000, 40000);
  g_assert_false (bwss__capacity_step (&c, &p, t, 2e6, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
  /* inside the band: hold */
  t = c.next_decision_us;
  f[0] = flow (3e6, 3e6, 50000, 40000);
  g_assert_false (bwss__capacity_step (&c, &p, t, 3e6, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
}

/* Brings @c to a probe's first step (test_rule_probe): 8 Mbit/s, 40 ms, a
 * video its source holds at 1 Mbit/s (target 1.5) and a bulk flow at its
 * target in @f; a cut, the ramp to the link seen busy and the video's
 * idle 0.5 Mbit/s, and the step beyond.  Returns the time of that step. */
static uint64_t
to_probe (BwssCapacity *cp, BwssCapacityFlow *f)
{
  BwssCapacity c;
  f[0] = flow (1e6, 1.5e6, 60000, 40000);
  f[1] = flow (7e6, 7e6, 60000, 40000);
  f[0].window_limited = false;
  uint64_t t = to_track (&c, f, 2, 8e6);
  /* 20 ms of queue: the link is busy at 8 Mbit/s; a cut */
  g_assert_true (bwss__capacity_step (&c, &p, t, 8e6, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "cut");
  g_assert_cmpfloat (c.busy_link_bps, ==, 8e6);
  /* the queue empty, the bulk flow at its target: the ramp, up to the link
   * seen busy and the video's idle 0.5 Mbit/s */
  f[0].rtt_us = f[1].rtt_us = 40000;
  for (int i = 0; i < 10 && c.sigma_bps < 8.5e6 - 1.0; i++) {
    t = c.next_decision_us > t ? c.next_decision_us : t + 100000;
    f[1].target_bps = f[1].rate_bps = c.sigma_bps - 1.5e6;
    bwss__capacity_step (&c, &p, t, 1e6 + f[1].rate_bps, f, 2);
    g_assert_cmpfloat (c.sigma_bps, <=, 8.5e6 + 1.0);
  }
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 8.5e6, 1.0);
  /* beyond it: a probe, the ramp going on (it doubled while the queue
   * stayed empty) */
  t = c.next_decision_us;
  f[1].target_bps = f[1].rate_bps = 7e6;
  g_assert_true (bwss__capacity_step (&c, &p, t, 8e6, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "raise");
  g_assert_cmpfloat (c.sigma_bps, >=, 8.5e6 * (1.0 + p.alpha) - 1.0);
  g_assert_cmpfloat (c.sigma_bps, <=, 8.5e6 * (1.0 + p.max_raise) + 1.0);
  g_assert_cmpfloat_with_epsilon (c.probe_from_bps, 8.5e6, 1.0);
  *cp = c;
  return t;
}

/* The link seen busy: the ramp stops there (plus what the flows something
 * else holds leave idle); beyond it a probe of α a decision, and a queue
 * answering it sends σ back below where it started and holds the next
 * probe for probe_wait. */
static void
test_rule_probe (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2];
  uint64_t t = to_probe (&c, f);
  /* a queue answers: back below where it started, at once */
  t = c.next_decision_us;
  f[0].rtt_us = f[1].rtt_us = 45000;
  g_assert_true (bwss__capacity_step (&c, &p, t, 8e6, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "probed");
  g_assert_cmpfloat_with_epsilon (c.sigma_bps, 8.5e6 * (1.0 - p.alpha), 1.0);
  g_assert_cmpfloat (c.probe_from_bps, ==, 0.0);
  /* back up to the link, then no probe before probe_wait ... */
  f[0].rtt_us = f[1].rtt_us = 40000;
  uint64_t probed = c.last_probed_us;
  while (c.next_decision_us < probed + p.probe_wait_us) {
    t = c.next_decision_us;
    bwss__capacity_step (&c, &p, t, 8e6, f, 2);
    g_assert_cmpfloat (c.sigma_bps, <=, 8.5e6 + 1.0);
  }
  /* ... then the next one */
  t = c.next_decision_us;
  g_assert_true (bwss__capacity_step (&c, &p, t, 8e6, f, 2));
  g_assert_cmpfloat (c.sigma_bps, >, 8.5e6 + 1.0);
  g_assert_cmpfloat_with_epsilon (c.probe_from_bps, 8.5e6, 1.0);
}

/* A probe's step that the flows' FCSs keep off the link: the bulk flow's
 * window carries 0.75 of the step less than its target, within α of it,
 * so its FCS keeps that window (fcs.c, eq. 3 and 4) and neither U nor the
 * queue will ever answer the step.  It is over once it has stood
 * probe_wait_max: the next step goes.  A flow below that band is a step
 * still landing (its FCS widens the window), and in regime "per-flow
 * queues" (the video shows a queue of its own) no queue would answer the
 * next step: in both the probe holds. */
static void
test_rule_probe_in_band (void)
{
  for (int kase = 0; kase < 3; kase++) {
    BwssCapacity c;
    BwssCapacityFlow f[2];
    uint64_t stepped = to_probe (&c, f), t = stepped;
    double sigma = c.sigma_bps, step = c.sigma_bps - c.probe_from_bps;
    f[1].target_bps = sigma - 1.5e6;
    f[1].rate_bps = kase != 1 ? f[1].target_bps - 0.75 * step
                              : (1.0 - p.alpha) * f[1].target_bps - 1e3;
    g_assert_cmpfloat (f[1].rate_bps, >=, (1.0 - p.alpha) * f[1].target_bps - 2e3);
    if (kase == 2)
      f[0].rtt_us = 70000;          /* 30 ms above the link's queue, 10 above its peak */
    for (;;) {
      t = c.next_decision_us;
      bwss__capacity_step (&c, &p, t, 1e6 + f[1].rate_bps, f, 2);
      if (t - stepped >= p.probe_wait_max_us)
        break;
      g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
      g_assert_cmpfloat (c.sigma_bps, ==, sigma);
    }
    g_assert_cmpint (c.per_flow, ==, kase == 2);
    if (kase == 0) {
      g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "raise");
      g_assert_cmpfloat (c.sigma_bps, >, sigma + 1.0);
      g_assert_cmpfloat_with_epsilon (c.probe_from_bps, sigma, 1.0);
    } else {
      g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "hold");
      g_assert_cmpfloat (c.sigma_bps, ==, sigma);
    }
  }
}

/* Probes refused while the link carries less than the minima (a video's
 * minimum of 600 kbit/s, the link leaving 560): each refused probe goes
 * back α below where it began, never below the minima's band (1 − α)·Σm —
 * each one took another α off the video's target before. */
static void
test_rule_probed_keeps_minima (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (540e3, 600e3, 30000, 30000), flow (20e3, 20e3, 30000, 30000) };
  f[0].min_rate_bps = 600e3;
  uint64_t t = to_track (&c, f, 2, 600e3);
  /* a queue at its target: the link is busy */
  f[0].rtt_us = f[1].rtt_us = 80000;
  bwss__capacity_step (&c, &p, t, 560e3, f, 2);
  g_assert_cmpfloat (c.busy_link_bps, >, 0.0);
  double least = (1.0 - p.alpha) * 600e3;
  unsigned probed = 0, bound = 0;
  for (int i = 0; i < 200 && probed < 4; i++) {
    /* a queue whenever a probe is out: the link has no room */
    f[0].rtt_us = f[1].rtt_us = c.probe_from_bps > 0.0 ? 60000 : 30000;
    double from = c.probe_from_bps;
    t = c.next_decision_us > t ? c.next_decision_us : t + 100000;
    bwss__capacity_step (&c, &p, t, 560e3, f, 2);
    if (strcmp (bwss__capacity_rule_name (&c), "probed") == 0) {
      probed++;
      bound += (1.0 - p.alpha) * from < least;
    }
    g_assert_cmpfloat (c.sigma_bps, >=, least - 1.0);
  }
  g_test_message ("%u probes refused, %u of them from below the minima", probed, bound);
  g_assert_cmpuint (probed, ==, 4);
  g_assert_cmpuint (bound, >, 0);
}

/* σ below the minima's band when a minimum arrives (a player's request
 * after σ followed the downloads down between two fragments) goes up to
 * the minima, in TRACK; σ in the band or above stays, and COMPETE keeps
 * its own. */
static void
test_minimum_lifts_sigma (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (60e3, 60e3, 30000, 30000), flow (20e3, 20e3, 30000, 30000) };
  to_track (&c, f, 2, 80e3);
  g_assert_true (bwss__capacity_minima (&c, &p, 619e3));
  g_assert_cmpfloat (c.sigma_bps, ==, 619e3);
  g_assert_false (bwss__capacity_minima (&c, &p, 619e3 / (1.0 - p.alpha) - 1.0));
  g_assert_cmpfloat (c.sigma_bps, ==, 619e3);
  c.phase = BWSS_PHASE_COMPETE;
  g_assert_false (bwss__capacity_minima (&c, &p, 900e3));
  g_assert_cmpfloat (c.sigma_bps, ==, 619e3);
}

/* Rule "loss" keeps the minima: a paced video below its minimum alone. */
static void
test_rule_loss_keeps_minima (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[1] = { flow (496e3, 496e3, 30000, 30000) };
  f[0].min_rate_bps = 496e3;
  f[0].window_limited = false;
  uint64_t t = to_track (&c, f, 1, 600e3);
  f[0].rate_bps = 160e3;                /* the source slows down */
  f[0].target_bps = 600e3;
  f[0].rtt_us = 80000;                  /* 50 ms of queue: the link is busy */
  for (uint32_t i = 1; i < p.loss_decisions; i++) {
    bwss__capacity_step (&c, &p, t, 160e3, f, 1);
    t = c.next_decision_us;
  }
  g_assert_true (bwss__capacity_step (&c, &p, t, 160e3, f, 1));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "loss");
  g_assert_cmpfloat (c.sigma_bps, ==, 496e3);
}

/* A queue somebody else fills (a download outside the domain): the cuts go
 * down to the minima, never below, whatever U does. */
static void
test_rule_cuts_stop_at_minima (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (2e6, 2e6, 50000, 40000), flow (2e6, 2e6, 50000, 40000) };
  f[0].min_rate_bps = 1.5e6;
  uint64_t t = to_track (&c, f, 2, 4e6);
  f[0].rtt_us = f[1].rtt_us = 190000;         /* a full queue */
  double u = 4e6;
  for (int i = 0; i < 10; i++) {
    f[0].rate_bps = f[1].rate_bps = u / 2;
    bwss__capacity_step (&c, &p, t, u, f, 2);
    g_assert_cmpfloat (c.sigma_bps, >=, 1.5e6);
    t = c.next_decision_us;
    u *= 0.7;                                  /* the other download takes more */
  }
  /* down to the minimum (and what the others still use above it) */
  g_assert_cmpfloat (c.sigma_bps, <=, 1.6e6);
}

/* The start ends with a first U, not before: flows adopted mid-stream
 * behind a full queue have no rate estimate for 2·RTT, and σ ← U = 0 left
 * the loop at 0 for good (lab, capacity-drop under bwssd). */
static void
test_start_waits_for_u (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (-1, 0, 188000, 30000), flow (-1, 0, 189000, 30000) };
  bwss__capacity_init (&c);
  g_assert_true (bwss__capacity_step (&c, &p, 1, 0, f, 2));
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_START);
  bwss__capacity_step (&c, &p, 1 + p.release_us, 0, f, 2);
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_START);          /* no U yet: still the minima */
  g_assert_cmpfloat (c.sigma_bps, ==, 0.0);
  f[0].rate_bps = 425e3;
  f[1].rate_bps = 440e3;
  g_assert_true (bwss__capacity_step (&c, &p, 1 + 2 * p.release_us, 865e3, f, 2));
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_TRACK);
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "start");
  g_assert_cmpfloat (c.sigma_bps, ==, 865e3);
}

/* A σ of 0 (a cut to minima of 0) ramps from what the flows move: a ramp
 * relative to σ alone would never leave 0. */
static void
test_raise_from_zero (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[2] = { flow (450e3, 450e3, 36000, 30000), flow (450e3, 450e3, 36000, 30000) };
  uint64_t t = to_track (&c, f, 2, 900e3);
  c.sigma_bps = 0.0;
  f[0].target_bps = f[1].target_bps = 0.0;   /* held at their floors, moving 450k each */
  g_assert_true (bwss__capacity_step (&c, &p, t, 900e3, f, 2));
  g_assert_cmpstr (bwss__capacity_rule_name (&c), ==, "raise");
  g_assert_cmpfloat (c.sigma_bps, >, 900e3);
}

static void
test_idle (void)
{
  BwssCapacity c;
  BwssCapacityFlow f[1] = { flow (1e6, 1e6, 50000, 40000) };
  uint64_t t = to_track (&c, f, 1, 1e6);
  g_assert_true (bwss__capacity_step (&c, &p, t, 0, f, 0));
  g_assert_cmpint (c.phase, ==, BWSS_PHASE_IDLE);
  g_assert_false (bwss__capacity_step (&c, &p, t + S, 0, f, 0));
}

/* ---- traces ---- */

static BwssParams delay;

static double
share (const Sim *s, size_t i, unsigned from, unsigned to)
{
  return sim_mean (s, i, from, to) / sim_mean_aggregate (s, from, to);
}

/* The streaming scenario's preferences: the video, a bulk download. */
static const BwssPrefs VIDEO = { .priority = 10, .min_rate_bps = 496e3, .weight = 1.0 };
static const BwssPrefs BULK = { .priority = 0, .min_rate_bps = 0.0, .weight = 1.0 };

/* Feeds flow @id one sample at @t: @bytes received in all, receiver RTT
 * @rtt (0 = none yet) and handshake RTT @min_rtt, µs; Ethernet MSS. */
static void
observe (BwssController *c, uint64_t id, uint64_t t, uint64_t bytes, uint32_t rtt, uint32_t min_rtt)
{
  BwssSample smp = { .now_us = t, .bytes_received = bytes, .rtt_us = rtt, .mss = 1448,
                     .min_rtt_us = min_rtt };
  g_assert_cmpint (bwss_controller_observe (c, id, &smp), ==, 0);
}

/* Feeds flows 1 and 2 the same samples (30 ms, @add bytes each 10 ms) and
 * ticks, from @from to @to µs; returns the time reached. */
static uint64_t
feed_both (BwssController *c, uint64_t from, uint64_t to, uint64_t add, uint64_t *bytes)
{
  uint64_t t;
  for (t = from; t < to; t += 10 * MS) {
    *bytes += add;
    observe (c, 1, t, *bytes, 30000, 30000);
    observe (c, 2, t, *bytes, 30000, 30000);
    bwss_controller_tick (c, t);
  }
  return t;
}

/* The start (release_us): the flows without a minimum at their floor, a
 * flow with one left to the kernel (a video alone starts at the link's
 * pace); then eq. (1) for both from σ = max(U, Σm). */
static void
test_start_releases_minima (void)
{
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (&delay, &c), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &VIDEO, 0), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 2, &BULK, 0), ==, 0);
  uint64_t bytes = 0, t = feed_both (c, 0, delay.release_us / 2, 1000, &bytes);
  BwssFlowState v, b;
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  g_assert_cmpint (st.phase, ==, BWSS_PHASE_START);
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &v), ==, 0);
  g_assert_cmpint (bwss_controller_flow_state (c, 2, &b), ==, 0);
  g_assert_cmpint (v.fcs_state, ==, BWSS_FCS_RELEASED);
  g_assert_cmpuint (v.window_bytes, ==, 0);
  g_assert_cmpint (b.fcs_state, !=, BWSS_FCS_RELEASED);
  g_assert_cmpuint (b.window_bytes, >, 0);
  g_assert_cmpuint (b.window_bytes, <=, 1448);
  feed_both (c, t, 2 * delay.release_us, 2000, &bytes);
  bwss_controller_stats (c, &st);
  g_assert_cmpint (st.phase, ==, BWSS_PHASE_TRACK);
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &v), ==, 0);
  g_assert_cmpint (v.fcs_state, !=, BWSS_FCS_RELEASED);
  g_assert_cmpuint (v.window_bytes, >, 0);
  bwss_controller_free (c);
}

/* The base of a flow that starts while the others' first windows fill the
 * queue: its handshake (tcpi_min_rtt) crossed an empty link, its first RTT
 * of data the queue the others measure.  The seed pairs that RTT with that
 * queue; the handshake's RTT less the later queue would make a base a whole
 * queue too short (180 ms path: 125 ms), and its excess would read as the
 * link's queue for good. */
static void
test_seed_is_one_moment (void)
{
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (&delay, &c), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &BULK, 0), ==, 0);
  uint64_t t, b1 = 0, b2 = 0;
  BwssControllerStats st;
  /* the bulk flow on a 20 ms path, its queue growing to 55 ms */
  for (t = 0; t < 2 * S; t += 10 * MS) {
    b1 += 1200;
    observe (c, 1, t, b1, t < 300 * MS ? 20000 : 75000, 20000);
    bwss_controller_tick (c, t);
  }
  bwss_controller_stats (c, &st);
  g_assert_cmpfloat (st.queue_us, >, 50000.0);
  /* the video: its handshake at 180 ms, its first RTT of data 235 ms */
  g_assert_cmpint (bwss_controller_add_flow (c, 2, &VIDEO, t), ==, 0);
  observe (c, 2, t, 0, 0, 180000);
  for (uint64_t end = t + S; t < end; t += 10 * MS) {
    b1 += 600;
    b2 += 600;
    observe (c, 1, t, b1, 75000, 20000);
    observe (c, 2, t, b2, 235000, 180000);
    bwss_controller_tick (c, t);
  }
  BwssFlowState v;
  g_assert_cmpint (bwss_controller_flow_state (c, 2, &v), ==, 0);
  g_test_message ("video's base %u µs (path 180000)", v.base_rtt_us);
  g_assert_cmpuint (v.base_rtt_us, >=, 175000);
  g_assert_cmpuint (v.base_rtt_us, <=, 180000);
  bwss_controller_free (c);
}

/* Today's stuck σ: two flows 1:2 on 8 Mbit/s, 40 ms (netns-weights). */
static void
test_trace_weights_8m (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, NULL);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 2, true);
  sim_run (&s, 40);
  sim_log (&s, 4);
  double a = share (&s, 0, 10, 40), agg = sim_mean_aggregate (&s, 10, 40);
  double q = sim_median_queue_ms (&s, 10, 40);
  g_test_message ("shares %.3f / %.3f, aggregate %.0f, median queue %.1f ms", a, 1 - a, agg, q);
  g_assert_cmpfloat (fabs (a - 1 / 3.0), <=, 0.05 / 3.0);
  g_assert_cmpfloat (agg, >=, 0.95 * 8e6);
  g_assert_cmpfloat (q, <=, 15.0);
  g_assert_cmpfloat (s.stats[39].sigma_bps, >=, 0.95 * 8e6);   /* σ not stuck */
  sim_free (&s);
}

/* A domain of many flows: 300 connections their sources hold at 20 kbit/s
 * each (a browser's and a chat client's, 6 Mbit/s in all) beside two
 * downloads 1:2, 24 Mbit/s drop-tail, 20 ms.  More flows move data than a
 * round measures at one instant, so the rounds spread (controller.c,
 * "Rounds"), and the held flows' windows carry far more than their
 * sources send: slack, measured once per decision interval ("Measuring").
 * At 40 s one of them starts a transfer at 4 Mbit/s: its window must
 * follow.  The figures, as the laws that measure every flow once a gap
 * reach them too (docs/testing.md, "The sixth step"): the downloads
 * 1:2 within 5 % of the split, the link used, the queue short, each held
 * flow at its source's rate, the one that started at its own from 45 s;
 * and the samples the laws took a second: the held flows 10 (one a
 * decision interval), the downloads 25 (one a gap) — 3050, where once a
 * gap every flow took 7550. */
#define SPREAD_HELD 300
static void
test_trace_spread_held (void)
{
  Sim s;
  sim_init (&s, 24e6, &delay, NULL);
  size_t d1 = sim_add (&s, 0.020, 0, 0, 1, true);
  sim_add (&s, 0.020, 0, 0, 2, true);
  for (int i = 0; i < SPREAD_HELD; i++) {
    size_t f = sim_add (&s, 0.020, 0, 0, 1, true);
    s.m.f[f].source_bps = 20e3;
  }
  sim_run (&s, 10);
  uint64_t before = s.samples;
  sim_run (&s, 40);
  double per_s = (double) (s.samples - before) / 30.0;
  double one = sim_mean (&s, d1, 10, 40), two = sim_mean (&s, d1 + 1, 10, 40);
  double a = one / (one + two), agg = sim_mean_aggregate (&s, 10, 40);
  double q = sim_median_queue_ms (&s, 10, 40), least = INFINITY;
  for (size_t f = 2; f < 2 + SPREAD_HELD; f++)
    least = MIN (least, sim_mean (&s, f, 10, 40));
  size_t rising = 2;
  s.m.f[rising].source_bps = 4e6;
  sim_run (&s, 60);
  double risen = sim_mean (&s, rising, 45, 60);
  double one2 = sim_mean (&s, d1, 45, 60), two2 = sim_mean (&s, d1 + 1, 45, 60);
  g_test_message ("downloads %.3f / %.3f (of the two), aggregate %.0f, median queue %.1f ms, "
                  "least held flow %.0f bit/s, %.0f samples a second; from 45 s the risen one "
                  "%.0f bit/s, downloads %.3f / %.3f, aggregate %.0f", a, 1 - a, agg, q, least, per_s,
                  risen, one2 / (one2 + two2), two2 / (one2 + two2), sim_mean_aggregate (&s, 45, 60));
  g_assert_cmpfloat (fabs (a - 1 / 3.0), <=, 0.05 / 3.0);
  g_assert_cmpfloat (agg, >=, 0.95 * 24e6);
  g_assert_cmpfloat (q, <=, 15.0);
  g_assert_cmpfloat (least, >=, 0.95 * 20e3);
  g_assert_cmpfloat (per_s, <=, SPREAD_HELD * 10 + 2 * 25);
  g_assert_cmpfloat (risen, >=, 0.95 * 4e6);
  g_assert_cmpfloat (fabs (one2 / (one2 + two2) - 1 / 3.0), <=, 0.05 / 3.0);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 45, 60), >=, 0.95 * 24e6);
  sim_free (&s);
}

/* spread-held's domain beside a video (2 Mbit/s, its minimum 2 Mbit/s,
 * priority 10, its reads not paced): the video brings the rounds to every
 * period, and while more flows move data than a round measures at one
 * instant the slack ones are let out of each round (controller.c,
 * "Rounds": beside a minimum).  The figures, 10-40 s: the video's seconds
 * below 95 % of its minimum, none; the link used, 99 % of it (23.92-23.94
 * Mbit/s at every tick phase: the probe beyond the link seen busy steps
 * on when its step stays inside the downloads' FCS bands, capacity.c,
 * "The probe" — a step that waited to land there held the link at 20.16
 * for good), the queue short, each held flow at its source's rate; and
 * the samples the laws took a second: the held flows 10 (one a decision
 * interval), the video and the downloads 100 (every period) — 3300, where
 * every flow at every round took 30 300. */
static void
test_trace_spread_video (void)
{
  Sim s;
  sim_init (&s, 24e6, &delay, NULL);
  size_t d1 = sim_add (&s, 0.020, 0, 0, 1, true);
  sim_add (&s, 0.020, 0, 0, 2, true);
  size_t v = sim_add (&s, 0.020, 10, 2e6, 1, true);
  s.m.f[v].source_bps = 2e6;
  sim_no_pacing (&s, v);
  for (int i = 0; i < SPREAD_HELD; i++) {
    size_t f = sim_add (&s, 0.020, 0, 0, 1, true);
    s.m.f[f].source_bps = 20e3;
  }
  sim_run (&s, 10);
  uint64_t before = s.samples;
  sim_run (&s, 40);
  double per_s = (double) (s.samples - before) / 30.0;
  double one = sim_mean (&s, d1, 10, 40), two = sim_mean (&s, d1 + 1, 10, 40);
  double agg = sim_mean_aggregate (&s, 10, 40), q = sim_median_queue_ms (&s, 10, 40);
  unsigned short_s = sim_seconds_below (&s, v, 0.95 * 2e6, 10, 40);
  double least = INFINITY;
  for (size_t f = v + 1; f < v + 1 + SPREAD_HELD; f++)
    least = MIN (least, sim_mean (&s, f, 10, 40));
  g_test_message ("video %.0f bit/s, %u s below 95 %% of its minimum; downloads %.3f / %.3f (of the "
                  "two), aggregate %.0f, median queue %.1f ms, least held flow %.0f bit/s, %.0f "
                  "samples a second", sim_mean (&s, v, 10, 40), short_s, one / (one + two),
                  two / (one + two), agg, q, least, per_s);
  g_assert_cmpuint (short_s, ==, 0);
  g_assert_cmpfloat (agg, >=, 0.99 * 24e6);
  g_assert_cmpfloat (q, <=, 15.0);
  g_assert_cmpfloat (least, >=, 0.95 * 20e3);
  g_assert_cmpfloat (per_s, <=, SPREAD_HELD * 10 + 3 * 100);
  sim_free (&s);
}

/* The link under spread-held's domain halves for 20 s (24 → 12 Mbit/s at
 * 20-40 s): the urgent cut and σ's way down and up again with most flows
 * slack, each sampled once per decision interval.  The figures at every
 * tick phase (docs/testing.md, "The sixth step", has them beside the laws
 * that measured every flow once a gap, which reach them at most phases):
 * the queue's worst second in the drop's first three at most 20 ms
 * (10.5-18.4), its median over the drop at most 5 ms (1.6-3.3), the link
 * used over the drop (95 % of 12 Mbit/s) and after it (95 % of 24), the
 * held flows at their sources' rate throughout. */
static void
half_20_40 (Sim *s, unsigned sec)
{
  s->m.capacity_bps = (sec >= 20 && sec < 40) ? 12e6 : 24e6;
}

static void
test_trace_spread_step (void)
{
  Sim s;
  sim_init (&s, 24e6, &delay, half_20_40);
  sim_add (&s, 0.020, 0, 0, 1, true);
  sim_add (&s, 0.020, 0, 0, 2, true);
  for (int i = 0; i < SPREAD_HELD; i++) {
    size_t f = sim_add (&s, 0.020, 0, 0, 1, true);
    s.m.f[f].source_bps = 20e3;
  }
  sim_run (&s, 60);
  double worst = 0.0, least = INFINITY;
  for (unsigned t = 20; t < 23; t++)
    worst = MAX (worst, s.queue_ms[t]);
  for (size_t f = 2; f < 2 + SPREAD_HELD; f++)
    least = MIN (least, sim_mean (&s, f, 10, 60));
  double q = sim_median_queue_ms (&s, 22, 40), in = sim_mean_aggregate (&s, 22, 40);
  double after = sim_mean_aggregate (&s, 45, 60);
  g_test_message ("the drop's worst queue second %.1f ms, median %.1f ms; aggregate 22-40 s %.0f, "
                  "45-60 s %.0f; least held flow %.0f bit/s", worst, q, in, after, least);
  g_assert_cmpfloat (worst, <=, 20.0);
  g_assert_cmpfloat (q, <=, 5.0);
  g_assert_cmpfloat (in, >=, 0.95 * 12e6);
  g_assert_cmpfloat (after, >=, 0.95 * 24e6);
  g_assert_cmpfloat (least, >=, 0.95 * 20e3);
  sim_free (&s);
}

/* An application is one download (issue 29): a download of 8 connections
 * (one group) beside a download of one, equal weights, 8 Mbit/s, 40 ms:
 * each side within 5 % of half, the link used.  Ungrouped, the eight take
 * eight shares (the comparison: 1/9 each within 5 points). */
static void
test_trace_groups_8m (void)
{
  for (int grouped = 1; grouped >= 0; grouped--) {
    Sim s;
    sim_init (&s, 8e6, &delay, NULL);
    for (int i = 0; i < 9; i++) {
      size_t f = sim_add (&s, 0.040, 0, 0, 1, true);
      if (grouped && i < 8)
        g_assert_cmpint (bwss_controller_set_group (s.c, f, 4242, 0), ==, 0);
    }
    sim_run (&s, 40);
    sim_log (&s, 8);
    double one = sim_mean (&s, 8, 10, 40), agg = sim_mean_aggregate (&s, 10, 40);
    g_test_message ("%s: single %.0f of %.0f (%.3f)", grouped ? "grouped" : "per flow",
                    one, agg, one / agg);
    if (grouped) {
      g_assert_cmpfloat (agg, >=, 0.95 * 8e6);
      g_assert_cmpfloat (fabs (one / agg - 0.5), <=, 0.05 * 0.5);
    } else {
      g_assert_cmpfloat (fabs (one / agg - 1 / 9.0), <=, 0.05);
    }
    sim_free (&s);
  }
}

/* Fig. 5a at 960 kbit/s and 30 ms.  A segment per RTT is 40 % of the link
 * here, so windows alone cannot split it 1:2:3; paced reads carry the
 * targets (fcs.c): each share within 5 % of itself (the issue's target),
 * the link used, no standing queue. */
static void
test_trace_weights_960k (void)
{
  Sim s;
  sim_init (&s, 960e3, &delay, NULL);
  for (int w = 1; w <= 3; w++)
    sim_add (&s, 0.030, 0, 0, w, true);
  sim_run (&s, 60);
  sim_log (&s, 5);
  double agg = sim_mean_aggregate (&s, 20, 60), q = sim_median_queue_ms (&s, 20, 60);
  for (size_t i = 0; i < 3; i++) {
    double want = (i + 1) / 6.0, got = share (&s, i, 20, 60);
    g_test_message ("flow %zu share %.3f (want %.3f)", i, got, want);
    g_assert_cmpfloat (fabs (got - want), <=, 0.05 * want);
  }
  g_test_message ("aggregate %.0f, median queue %.1f ms", agg, q);
  g_assert_cmpfloat (agg, >=, 0.95 * 960e3);
  g_assert_cmpfloat (q, <=, 25.0);
  sim_free (&s);
}

/* Reads are paced only on a link seen busy at no more than
 * pace_max_link_bps, and only where the receiver can pace them: at 50
 * Mbit/s never (a paced socket keeps a fixed receive buffer), at 960
 * kbit/s the bulk flows are, the element's video is not. */
static void
test_trace_pacing_where (void)
{
  Sim s;
  sim_init (&s, 50e6, &delay, NULL);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_add (&s, 0.030, 0, 0, 2, true);
  sim_run (&s, 20);
  g_test_message ("50 Mbit/s: sigma %.1f Mbit/s on a %.1f Mbit/s link", s.stats[19].sigma_bps / 1e6,
                  s.m.capacity_bps / 1e6);
  for (unsigned t = 0; t < 20; t++)
    for (size_t i = 0; i < 2; i++)
      g_assert_cmpfloat (s.pace[t][i], ==, 0.0);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 10, 20), >=, 0.9 * 50e6);
  sim_free (&s);

  sim_init (&s, 960e3, &delay, NULL);
  size_t v = sim_add (&s, 0.030, 10, 300e3, 1, true);
  s.m.f[v].source_bps = 300e3;
  sim_no_pacing (&s, v);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_run (&s, 20);
  unsigned paced = 0;
  for (unsigned t = 5; t < 20; t++) {
    g_assert_cmpfloat (s.pace[t][v], ==, 0.0);
    paced += s.pace[t][1] > 0.0;
  }
  g_test_message ("960 kbit/s: the bulk flow paced in %u of 15 s", paced);
  g_assert_cmpuint (paced, ==, 15);
  sim_free (&s);
}

/* RTT unfairness undone: 20/60/180 ms, equal weights, 8 Mbit/s. */
static void
test_trace_rtt_unfairness (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, NULL);
  double rtts[] = { 0.020, 0.060, 0.180 };
  for (int i = 0; i < 3; i++)
    sim_add (&s, rtts[i], 0, 0, 1, true);
  sim_run (&s, 60);
  sim_log (&s, 5);
  for (size_t i = 0; i < 3; i++) {
    double got = share (&s, i, 20, 60);
    g_test_message ("rtt %.0f ms share %.3f", rtts[i] * 1e3, got);
    g_assert_cmpfloat (fabs (got - 1 / 3.0), <=, 0.05 / 3.0);
  }
  g_assert_cmpfloat (sim_mean_aggregate (&s, 20, 60), >=, 0.93 * 8e6);
  g_assert_cmpfloat (sim_median_queue_ms (&s, 20, 60), <=, 15.0);
  sim_free (&s);
}

/* Fig. 5b: 1:2 at 960 kbit/s, 320 kbit/s of UDP from 40 to 80 s. */
static void
udp_40_80 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 40 && sec < 80) ? 320e3 : 0;
}

static void
test_trace_capacity_drop (void)
{
  Sim s;
  sim_init (&s, 960e3, &delay, udp_40_80);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_add (&s, 0.030, 0, 0, 2, true);
  sim_run (&s, 120);
  sim_log (&s, 2);
  double before = sim_mean (&s, 1, 10, 40) / sim_mean (&s, 0, 10, 40);
  double during = sim_mean (&s, 1, 45, 80) / sim_mean (&s, 0, 45, 80);
  double after = sim_mean (&s, 1, 82, 120) / sim_mean (&s, 0, 82, 120);
  g_test_message ("ratio before %.2f, during %.2f, after %.2f", before, during, after);
  /* windows of 1-4 segments: the paper loop's bound (test-controller.c) */
  g_assert_cmpfloat (fabs (before - 2.0), <=, 0.3);
  g_assert_cmpfloat (fabs (during - 2.0), <=, 0.3);
  g_assert_cmpfloat (fabs (after - 2.0), <=, 0.3);
  /* the shares within 2 s of the UDP stopping (the issue's target) */
  double back = sim_mean (&s, 1, 80, 82) / sim_mean (&s, 0, 80, 82);
  g_test_message ("ratio in the 2 s after: %.2f", back);
  g_assert_cmpfloat (fabs (back - 2.0), <=, 0.3);
  /* the link is used while the UDP runs, and again after it: the probes
   * beyond the link seen busy during the UDP start at α and double while
   * the queue stays empty (two seconds and a half in this trace) */
  g_assert_cmpfloat (sim_mean_aggregate (&s, 45, 80), >=, 0.93 * 640e3);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 84, 86), >=, 0.93 * 960e3);
  sim_free (&s);
}

/* Fig. 5c: the video's source sends 160k from 40 to 100 s; the bulk flow
 * takes what it leaves. */
static void
video_source_40_100 (Sim *s, unsigned sec)
{
  s->m.f[0].source_bps = (sec >= 40 && sec < 100) ? 160e3 : 496e3;
}

static void
test_trace_redistribution (void)
{
  Sim s;
  sim_init (&s, 960e3, &delay, video_source_40_100);
  sim_add (&s, 0.030, 10, 496e3, 1, true);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_run (&s, 130);
  sim_log (&s, 2);
  double bulk = sim_mean (&s, 1, 45, 100);
  g_test_message ("bulk while the video sends 160k: %.0f of %.0f", bulk, 960e3 - 160e3);
  /* the issue's target: the bulk flow takes 90 % of what the video leaves
   * (the video's idle target goes to it, capacity.c's known link) */
  g_assert_cmpfloat (bulk, >=, 0.90 * (960e3 - 160e3));
  g_assert_cmpfloat (sim_mean (&s, 0, 10, 40), >=, 0.97 * 496e3);
  g_assert_cmpfloat (sim_mean (&s, 0, 103, 130), >=, 0.97 * 496e3);
  g_assert_cmpuint (sim_seconds_below (&s, 0, 0.9 * 496e3, 102, 130), <=, 1);
  sim_free (&s);
}

/* Fig. 7: a paced 496 kbit/s video (min 496k, priority 10), two bulk flows,
 * 320 kbit/s of UDP from 30 to 60 s. */
static void
udp_30_60 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 30 && sec < 60) ? 320e3 : 0;
}

static void
streaming_with (double rtt_video, double rtt_bulk, bool controlled, bool video_paced,
                unsigned *below, double *queue)
{
  Sim s;
  sim_init (&s, 960e3, &delay, udp_30_60);
  size_t v = sim_add (&s, rtt_video, 10, 496e3, 1, controlled);
  s.m.f[v].source_bps = 496e3;
  if (!video_paced)
    sim_no_pacing (&s, v);
  sim_add (&s, rtt_bulk, 0, 0, 1, controlled);
  sim_add (&s, rtt_bulk, 0, 0, 1, controlled);
  sim_run (&s, 90);
  if (controlled)
    sim_log (&s, 1);
  *below = sim_seconds_below (&s, v, 0.9 * 496e3, 5, 90);
  *queue = sim_median_queue_ms (&s, 5, 30);
  sim_free (&s);
}

/* The video under bwss-run (its reads paced, like the bulk flows'). */
static void
streaming (double rtt_video, double rtt_bulk, bool controlled, unsigned *below, double *queue)
{
  streaming_with (rtt_video, rtt_bulk, controlled, true, below, queue);
}

static void
test_trace_streaming (void)
{
  unsigned tcp, bwss;
  double qtcp, qbwss;
  streaming (0.030, 0.030, false, &tcp, &qtcp);
  streaming (0.030, 0.030, true, &bwss, &qbwss);
  g_test_message ("seconds with video < 90%% of 496k: tcp %u, bwss %u (of 85); "
                  "median queue before the UDP: tcp %.1f, bwss %.1f ms", tcp, bwss, qtcp, qbwss);
  g_assert_cmpuint (tcp, >=, 20);
  /* the onset of the UDP: the buffer fills before the first cut acts, and
   * its drops halve the video's congestion window once; and a probe beyond
   * the link that finds no room now and then (each costs a queue of a few
   * tens of ms, which a video at 99 % of the link's spare capacity feels) */
  g_assert_cmpuint (bwss, <=, 2);
  /* two packets of the link (24 ms at 960 kbit/s): the allocation needs no
   * more here (the bulk flows' floor is a sub-segment window) */
  g_assert_cmpfloat (qbwss, <=, 25.0);
  g_assert_cmpfloat (qtcp, >=, 100.0);
  /* the video at 180 ms, the bulk flows at 20 ms */
  streaming (0.180, 0.020, false, &tcp, &qtcp);
  streaming (0.180, 0.020, true, &bwss, &qbwss);
  g_test_message ("rtt 180/20: tcp %u, bwss %u", tcp, bwss);
  g_assert_cmpuint (tcp, >=, 20);
  /* the video from bwsshttpsrc: the element reads by itself, only its
   * window holds it (the bulk flows' reads are still paced) */
  unsigned element;
  double qelement;
  streaming_with (0.030, 0.030, true, false, &element, &qelement);
  g_test_message ("video through the element: bwss %u, median queue %.1f ms", element, qelement);
  g_assert_cmpuint (element, <=, 2);
  g_assert_cmpfloat (qelement, <=, 25.0);
  /* the onset of the UDP costs the 180-ms video a few seconds: its window
   * is sized for 20 ms of queue, the FCS needs RTT + 3φ (1.4 s here) to
   * widen it for the 130 ms the one-segment floors then hold */
  g_assert_cmpuint (bwss, <=, 3);
}

/* 8 Mbit/s, two flows 1:1, 3 Mbit/s of UDP on and off: σ follows within a
 * second each way, the queue stays short. */
static void
udp_on_off (Sim *s, unsigned sec)
{
  s->m.cross_bps = ((sec >= 20 && sec < 30) || (sec >= 40 && sec < 50)) ? 3e6 : 0;
}

static void
test_trace_cross_on_off (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, udp_on_off);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_run (&s, 60);
  sim_log (&s, 1);
  /* the second after each change already carries what is left */
  g_assert_cmpfloat (sim_mean_aggregate (&s, 21, 30), >=, 0.93 * 5e6);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 31, 40), >=, 0.93 * 8e6);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 41, 50), >=, 0.93 * 5e6);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 51, 60), >=, 0.93 * 8e6);
  /* and the queue is back near its target within a second of the onset */
  g_assert_cmpfloat (s.queue_ms[21], <=, 25.0);
  g_assert_cmpfloat (s.queue_ms[41], <=, 25.0);
  g_assert_cmpfloat (sim_median_queue_ms (&s, 5, 60), <=, 15.0);
  g_assert_cmpfloat (fabs (share (&s, 0, 21, 30) - 0.5), <=, 0.05 * 0.5);
  sim_free (&s);
}

/* A flow joins at 30 s while two others hold the queue at its target: its
 * base is seeded from their queue, not read as 40 ms + queue. */
static void
third_joins_30 (Sim *s, unsigned sec)
{
  if (sec == 30)
    sim_add (s, 0.040, 0, 0, 2, true);
}

static void
test_trace_join_behind_queue (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, third_joins_30);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_run (&s, 60);
  sim_log (&s, 2);
  BwssFlowState st;
  g_assert_cmpint (bwss_controller_flow_state (s.c, 2, &st), ==, 0);
  g_test_message ("newcomer's base %u µs (path 40000), queue when it joined %.1f ms",
                  st.base_rtt_us, s.queue_ms[29]);
  g_assert_cmpint (abs ((int) st.base_rtt_us - 40000), <=, 3000);
  g_assert_cmpfloat (fabs (share (&s, 2, 40, 60) - 0.5), <=, 0.05 * 0.5);
  g_assert_cmpfloat (sim_median_queue_ms (&s, 35, 60), <=, 15.0);
  sim_free (&s);
}

/* Path congestion (one flow's path limited, a queue there) is not link
 * congestion: the others take its room and the link's queue stays short. */
static void
path_congested_20_40 (Sim *s, unsigned sec)
{
  bool on = sec >= 20 && sec < 40;
  s->m.f[0].path_limit_bps = on ? 1e6 : 0;
  s->m.f[0].path_delay_s = on ? 0.150 : 0;
}

static void
test_trace_path_congestion (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, path_congested_20_40);
  for (int i = 0; i < 3; i++)
    sim_add (&s, 0.040, 0, 0, 1, true);
  sim_run (&s, 60);
  sim_log (&s, 2);
  double others = sim_mean (&s, 1, 25, 40) + sim_mean (&s, 2, 25, 40);
  g_test_message ("others while flow 0's path carries 1 Mbit/s: %.0f", others);
  g_assert_cmpfloat (others, >=, 0.90 * 7e6);
  g_assert_cmpfloat (sim_median_queue_ms (&s, 25, 40), <=, 15.0);
  g_assert_cmpfloat (fabs (share (&s, 0, 45, 60) - 1 / 3.0), <=, 0.05 / 3.0);
  sim_free (&s);
}

/* One flow's route gets 40 ms longer at 20 s: the others still measure the
 * link's queue, nothing is cut for it. */
static void
route_change_20 (Sim *s, unsigned sec)
{
  if (sec == 20)
    s->m.f[0].base_rtt_s = 0.080;
}

static void
test_trace_route_change (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, route_change_20);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_run (&s, 50);
  sim_log (&s, 2);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 25, 50), >=, 0.95 * 8e6);
  g_assert_cmpfloat (fabs (share (&s, 0, 25, 50) - 0.5), <=, 0.05 * 0.5);
  g_assert_cmpfloat (sim_median_queue_ms (&s, 25, 50), <=, 15.0);
  sim_free (&s);
}

/* An AQM at the bottleneck (5 ms target): the queue signal is weak, the
 * throughput rule ("loss") brings σ back under the link, and the weights
 * hold roughly: the windows bind only between the AQM's drops. */
static void
test_trace_aqm (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, NULL);
  s.m.aqm_target_s = 0.005;
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 3, true);
  sim_run (&s, 60);
  sim_log (&s, 3);
  double a = share (&s, 0, 20, 60);
  g_test_message ("shares %.3f / %.3f", a, 1 - a);
  g_assert_cmpfloat (fabs (a - 0.25), <=, 0.05);
  g_assert_cmpfloat (sim_mean_aggregate (&s, 20, 60), >=, 0.90 * 8e6);
  sim_free (&s);
}

/* A download outside the domain fills the queue: the loop does not spiral
 * down (LEDBAT would yield), the video keeps its minimum. */
static void
test_trace_uncontrolled_competitor (void)
{
  Sim s;
  sim_init (&s, 8e6, &delay, NULL);
  size_t v = sim_add (&s, 0.040, 10, 2e6, 1, true);
  s.m.f[v].source_bps = 2e6;
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, false);                /* plain TCP */
  sim_run (&s, 90);
  sim_log (&s, 3);
  double ours = sim_mean (&s, 0, 30, 90) + sim_mean (&s, 1, 30, 90);
  g_test_message ("ours %.0f, video %.0f, the other %.0f", ours, sim_mean (&s, 0, 30, 90),
                  sim_mean (&s, 2, 30, 90));
  g_assert_cmpfloat (sim_mean (&s, 0, 30, 90), >=, 0.95 * 2e6);
  for (unsigned t = 10; t < 90; t++)
    g_assert_cmpfloat (s.stats[t].sigma_bps, >=, 2e6);      /* σ never below the minimum */
  sim_free (&s);
}

/* What a run's decision lines say (bwss_controller_last_decision()): each
 * decision's verdict follows from the conditions it lacked — none lacked is
 * "foreign", and COMPETE is entered at a decision that saw a foreign queue
 * with the score at compete_enter; COMPETE's own decisions carry no
 * verdict.  Beside a plain-TCP download outside the domain the loop enters;
 * alone it does not, and every decision in TRACK names what it lacked. */
typedef struct {
  uint64_t at_us;
  unsigned track, foreign, entries, compete, bad;
  uint32_t lacked;            /* the union of the TRACK decisions' missing bits */
} DecisionLog;

static void
log_decision (Sim *s)
{
  DecisionLog *l = s->user;
  BwssDecision d;
  g_assert_cmpint (bwss_controller_last_decision (s->c, &d), ==, BWSS_OK);
  if (d.at_us == 0 || d.at_us == l->at_us)
    return;
  l->at_us = d.at_us;
  uint32_t real = d.missing & ~(uint32_t) BWSS_DETECT_HELD;
  if (strcmp (d.rule, "enter") == 0) {
    l->entries++;
    if (d.seen != BWSS_SEEN_FOREIGN || d.missing != 0 || d.score < delay.compete_enter
        || d.phase != BWSS_PHASE_COMPETE)
      l->bad++;
  } else if (d.phase == BWSS_PHASE_COMPETE || d.phase == BWSS_PHASE_START) {
    l->compete += d.phase == BWSS_PHASE_COMPETE;
    if (d.seen != BWSS_SEEN_NONE)
      l->bad++;
    return;
  }
  if (d.seen == BWSS_SEEN_NONE)
    return;
  l->track++;
  l->lacked |= d.missing;
  if ((d.seen == BWSS_SEEN_FOREIGN) != (real == 0) || d.bulk_floored > d.bulk)
    l->bad++;
  l->foreign += d.seen == BWSS_SEEN_FOREIGN;
  if ((real & BWSS_DETECT_NO_BULK) && d.bulk != 0)
    l->bad++;
  if ((real & BWSS_DETECT_UNFLOORED) && d.bulk_floored >= d.bulk)
    l->bad++;
  if ((real & BWSS_DETECT_SHORT_MIN) && d.short_min == 0)
    l->bad++;
  if ((real & BWSS_DETECT_NO_QUEUE) && d.queue_us > d.queue_target_us + 1.0 * d.queue_target_us)
    l->bad++;
}

static DecisionLog
decisions_beside (bool neighbour)
{
  DecisionLog l = { 0 };
  Sim s;
  sim_init (&s, 8e6, &delay, NULL);
  s.user = &l;
  s.on_tick = log_decision;
  size_t v = sim_add (&s, 0.040, 10, 2e6, 1, true);
  s.m.f[v].source_bps = 2e6;
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, !neighbour);
  sim_run (&s, 60);
  g_test_message ("%s: %u decisions in TRACK, %u foreign, %u entries, %u in COMPETE, lacked 0x%x, "
                  "%u inconsistent", neighbour ? "a neighbour" : "alone", l.track, l.foreign,
                  l.entries, l.compete, l.lacked, l.bad);
  sim_free (&s);
  return l;
}

static void
test_compete_decision_lines (void)
{
  DecisionLog with = decisions_beside (true);
  g_assert_cmpuint (with.bad, ==, 0);
  g_assert_cmpuint (with.entries, >=, 1);
  g_assert_cmpuint (with.foreign, >=, 1);
  g_assert_cmpuint (with.compete, >=, 1);
  DecisionLog alone = decisions_beside (false);
  g_assert_cmpuint (alone.bad, ==, 0);
  g_assert_cmpuint (alone.entries, ==, 0);
  g_assert_cmpuint (alone.foreign, ==, 0);
  g_assert_cmpuint (alone.track, >=, 100);
  g_assert_cmpuint (alone.lacked, !=, 0);
  /* the paper's loop has no detector */
  BwssParams paper;
  bwss_params_init_for (&paper, BWSS_LOOP_PAPER);
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (&paper, &c), ==, BWSS_OK);
  BwssDecision d;
  g_assert_cmpint (bwss_controller_last_decision (c, &d), ==, BWSS_ENOENT);
  g_assert_cmpint (bwss_controller_last_decision (NULL, &d), ==, BWSS_EINVAL);
  bwss_controller_free (c);
}

/* ---- bottlenecks that hold no standing queue, and a link that moves ----
 *
 * A short drop-tail buffer (12 ms) or CoDel (5 ms) never lets the queue
 * reach its target: no cut.  The flows without a minimum then reach their
 * targets through losses, which the video shares; rule "deficit" sees the
 * video under its minimum on a busy link and sets σ to what the link
 * delivers (8 Mbit/s, video 3 Mbit/s with its minimum, three bulk flows,
 * 2 Mbit/s of UDP from 30 to 60 s: the lab's short-buffer run of 2026-11-25
 * had the video at its minimum in 83.5 % of the seconds). */

static void
udp_2m_30_60 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 30 && sec < 60) ? 2e6 : 0;
}

static void
capacity_40_percent_30_60 (Sim *s, unsigned sec)
{
  s->m.capacity_bps = (sec >= 30 && sec < 60) ? 0.4 * 8e6 : 8e6;
}

/* Runs a video of minimum @vmin (the element: reads not paced) and three
 * bulk flows on 8 Mbit/s with a @buffer_s drop-tail buffer and an AQM of
 * @aqm_s (0: none); returns the seconds of [5, 90) with the video under
 * 95 % of its minimum and the aggregate over them in *aggregate. */
static unsigned
no_standing_queue (SimEvent event, double buffer_s, double aqm_s, bool fq, double vmin,
                   bool controlled, double *aggregate, Sim *keep)
{
  Sim s;
  sim_init (&s, 8e6, &delay, event);
  s.m.max_queue_s = buffer_s;
  s.m.aqm_target_s = aqm_s;
  s.m.fq = fq;
  size_t v = sim_add (&s, 0.030, 10, vmin, 1, controlled);
  s.m.f[v].source_bps = vmin;
  sim_no_pacing (&s, v);
  for (int i = 0; i < 3; i++)
    sim_add (&s, 0.030, 0, 0, 1, controlled);
  sim_run (&s, 90);
  if (controlled)
    sim_log (&s, 3);
  unsigned below = sim_seconds_below (&s, v, 0.95 * vmin, 5, 90);
  *aggregate = sim_mean_aggregate (&s, 5, 90);
  if (keep)
    *keep = s;
  else
    sim_free (&s);
  return below;
}

/* The video against plain TCP behind a @buffer_s buffer with an AQM of
 * @aqm_s; returns the seconds bwss leaves it under 95 % of its minimum. */
static unsigned
video_against_tcp (const char *what, double buffer_s, double aqm_s)
{
  double tcp, bwss;
  unsigned plain = no_standing_queue (udp_2m_30_60, buffer_s, aqm_s, false, 3e6, false, &tcp,
                                      NULL);
  unsigned ours = no_standing_queue (udp_2m_30_60, buffer_s, aqm_s, false, 3e6, true, &bwss, NULL);
  g_test_message ("%s: seconds with the video < 95 %% of 3M: tcp %u, bwss %u (of 85); "
                  "aggregate tcp %.0f, bwss %.0f", what, plain, ours, tcp, bwss);
  g_assert_cmpuint (plain, >=, 60);
  g_assert_cmpfloat (bwss, >=, 0.95 * tcp);
  return ours;
}

static void
test_trace_short_buffer (void)
{
  /* 27 s before rule "deficit" */
  g_assert_cmpuint (video_against_tcp ("12-ms buffer", 0.012, 0.0), <=, 2);
}

static void
test_trace_codel (void)
{
  g_assert_cmpuint (video_against_tcp ("CoDel", 0.150, 0.005), <=, 2);
}

/* The link falls to 40 % for 30 s (Wi-Fi, a neighbour's cell), a video of
 * 2 Mbit/s beside three bulk flows: σ follows it down at the first
 * decision that sees the video short, and the flows take the link back
 * within seconds when it returns — behind a short buffer, behind CoDel and
 * behind fq_codel (there by the video's own queue: the others' stay empty). */
static void
test_trace_capacity_step (void)
{
  const double buffers[] = { 0.012, 0.150, 0.150 }, aqms[] = { 0.0, 0.005, 0.005 };
  const char *const names[] = { "12-ms buffer", "CoDel", "fq_codel" };
  for (unsigned i = 0; i < 3; i++) {
    Sim s;
    double agg;
    unsigned below = no_standing_queue (capacity_40_percent_30_60, buffers[i], aqms[i], i == 2,
                                        2e6, true, &agg, &s);
    double back = sim_mean_aggregate (&s, 62, 67);
    g_test_message ("%s: seconds with the video < 95 %% of 2M: %u (of 85); sigma at 31 s %.0f; "
                    "aggregate 62-67 s %.0f", names[i], below, s.stats[31].sigma_bps, back);
    g_assert_cmpuint (below, <=, 2);        /* 32 and 30 before rule "deficit" */
    g_assert_cmpfloat (s.stats[31].sigma_bps, <=, 1.25 * 0.4 * 8e6);
    g_assert_cmpfloat (back, >=, 0.90 * 8e6);
    sim_free (&s);
  }
}

/* ---- behind fq_codel, CoDel and a moving rate: the video's own evidence ----
 *
 * Under fq_codel every flow has a queue of its own: a video below its fair
 * share has an empty one while the downloads' stand, and the loop's queue
 * (the smallest excess) reads the link as idle.  What shows is the video's
 * own queue — near CoDel's 5 ms while the sender fills it — and its own
 * losses.  The cells of issue 28, each under both receiver RTTs of Linux
 * (before 6.16 a plain 1/8 average; from 6.16 lower samples latched). */

typedef struct {
  const char   *name;
  double        link_bps;
  double        buffer_s;      /* drop-tail buffer, or fq_codel's limit */
  double        aqm_s;         /* CoDel's target; 0 = none */
  bool          fq;
  double        video_min;     /* the video's minimum and its source's rate */
  unsigned      downloads;
  unsigned      conns;         /* connections per download */
  const double *rtt_bulk;      /* one per download, s */
  double        cross_bps;     /* UDP from 30 to 60 s */
  int           trace;         /* the link moves: TRACE_WIFI, TRACE_LTE; 0 = fixed */
  bool          packets;       /* the model at packet level (Model.packets) */
  double        syn_bulk;      /* packets: what the downloads' SYNs offer, bytes (0: Linux's) */
  double        join_s;        /* packets: every flow joins the controller this long after
                                * its first byte, the kernel's window until then
                                * (sim_add_late); 0: from its start, clamped from its
                                * first RTT sample */
  bool          rtt_fallback;  /* the sample's RTT falls back to the handshake's (bwssd's) */
  unsigned      run_s;         /* the run's length, s (0: 90) */
  unsigned      cross_from_s, cross_to_s;   /* the UDP's seconds (both 0: 30 to 60) */
  double        fifo_bytes;    /* packets, drop-tail: a FIFO of this many bytes of IP
                                * packets (Model.fifo_limit_bytes); 0: the fluid buffer */
  bool          holes;         /* packets: a repaired loss holds the video's (and every
                                * flow's) in-order bytes an RTT (Model.repair_holes) */
  bool          payload_only;  /* the link carries payload only; false: a single FIFO
                                * carries the segments' headers too (Model.wire_headers,
                                * cell_wire), as the lab's links do */
  bool          lab_receiver;  /* packets: the lab's receivers — the shim's paced reads
                                * (Model.shim_reads), handshakes behind the queue they
                                * meet (handshake_queue), the video's samples each with its
                                * own wait for its source (gap_spread) */
  bool          cubic;         /* every sender CUBIC (ModelFlow.cubic); false: Reno */
} Cell;

typedef struct {
  unsigned at_min;             /* seconds of [5, 90) with the video at >= 95 % of its
                                * minimum (a moving link: 90 %, of the seconds
                                * trace_capable counts) */
  unsigned counted;            /* ... of these many */
  unsigned at_min_lab;         /* ... at >= 90 % of it (the lab's video_at_min) */
  double   prebuffer_s;        /* the video's largest lateness (required prebuffer) */
  double   prebuffer_at_s;     /* ... when it was reached */
  double   start_late_s;       /* ... within the first 5 s */
  double   video, downloads;   /* mean rates over [5, 90), bit/s */
  double   left;               /* what the link leaves the downloads, bit/s */
  double   share_dev;          /* largest |share − 1/N| / (1/N) among the downloads */
  double   q_video, q_bulk;    /* median own queue, ms */
  double   over_room;          /* largest Σ of the downloads' targets over link −
                                * minimum − UDP delivered, of the seconds (fixed link) */
  unsigned steady;             /* a moving link: seconds it has held within ±15 % for 3 s */
  double   sigma_lo, sigma_hi; /* ... σ over the link's payload rate in them, least and most */
  /* the downloads' use of what the video and the UDP leave, per phase:
   * before the UDP, with it, the RECOVER_S after it, the rest (the lab's
   * phases, tests/lab/matrix-why.py) */
  double   use_phase[4];
  unsigned lab_capable;        /* a moving link: the seconds the lab counts (its mean at
                                * least 1.1 × the minimum) ... */
  unsigned lab_at_min;         /* ... with the video at >= 90 % of its minimum */
  unsigned compete_s;          /* seconds the loop spent in COMPETE */
  double   foreign_s;          /* seconds the detector's last verdict read "foreign" */
  double   beside_s;           /* ... of them, by a queue beside a small share alone (the
                                * downloads above their floors, or the queue at its target) */
  unsigned video_losses;       /* the video's losses (fq_codel: its own queue's drops) */
  unsigned drops;              /* packets: the bottleneck's drops over the run ... */
  unsigned drops_video, drops_cross;   /* ... the video's, the UDP's */
  double   sojourn_p50_ms, sojourn_p95_ms;   /* packets: what the packets waited there */
} CellResult;

/* The @q quantile of the waits at @m's bottleneck, ms (packets). */
static double
sojourn_quantile (const Model *m, double q)
{
  uint64_t total = 0, seen = 0;
  for (size_t b = 0; b < MODEL_SOJOURN_BINS; b++)
    total += m->sojourn_ms[b];
  for (size_t b = 0; b < MODEL_SOJOURN_BINS && total > 0; b++) {
    seen += m->sojourn_ms[b];
    if ((double) seen > q * (double) total)
      return (double) b + 0.5;
  }
  return 0.0;
}

#define RECOVER_S 5

static unsigned
cell_run_s (const Cell *cell)
{
  return cell->run_s ? cell->run_s : 90;
}

static unsigned
cell_cross_from (const Cell *cell)
{
  return cell->cross_to_s ? cell->cross_from_s : 30;
}

static unsigned
cell_cross_to (const Cell *cell)
{
  return cell->cross_to_s ? cell->cross_to_s : 60;
}

static const Cell *cell_now;
enum { TRACE_FIXED = 0, TRACE_WIFI, TRACE_LTE, TRACE_FALL };
#define TRACE_STEPS_PER_S 100
static double trace_rate[SIM_MAX_SECONDS * TRACE_STEPS_PER_S];   /* per 10 ms */

/* A fixed LCG, so every run sees the same trace: uniform in [lo, hi). */
static double
trace_uniform (uint32_t *x, double lo, double hi)
{
  *x = *x * 1103515245u + 12345u;
  return lo + (hi - lo) * (double) (*x >> 8) / (double) (1u << 24);
}

/* TRACE_FALL: the link at this fraction of its rate over [FALL_FROM_S,
 * FALL_TO_S) (a station that walks away from its access point, a cell at
 * its edge), at its rate otherwise. */
static double trace_fall_to;
#define FALL_FROM_S 30
#define FALL_TO_S   50

/* Fills trace_rate from @i on with @rate for @len_s; returns the next index. */
static unsigned
trace_hold (unsigned i, double rate, double len_s)
{
  unsigned end = i + (unsigned) (len_s * TRACE_STEPS_PER_S + 0.5);
  for (; i < end && i < G_N_ELEMENTS (trace_rate); i++)
    trace_rate[i] = rate;
  return end;
}

/* The lab's moving links (linktrace.py), around @link: "wifi" a new rate
 * every 100-500 ms, uniform within ±50 %; "lte" levels of 1-4 s between
 * 40 % and 130 % with ±10 % jitter every 250-500 ms, and fades of 2-5 s at
 * 20 % (one level in five). */
static void
trace_fill (int kind, double link)
{
  uint32_t x = 12345;
  unsigned i = 0;
  if (kind == TRACE_FALL) {
    i = trace_hold (0, link, FALL_FROM_S);
    i = trace_hold (i, trace_fall_to * link, FALL_TO_S - FALL_FROM_S);
    trace_hold (i, link, SIM_MAX_SECONDS - FALL_TO_S);
    return;
  }
  while (i < G_N_ELEMENTS (trace_rate)) {
    if (kind == TRACE_WIFI) {
      double rate = link * trace_uniform (&x, 0.5, 1.5);
      i = trace_hold (i, rate, trace_uniform (&x, 0.1, 0.5));
      continue;
    }
    bool fade = i > 0 && trace_uniform (&x, 0.0, 1.0) < 0.2;
    double level = fade ? 0.2 : trace_uniform (&x, 0.4, 1.3);
    double left = fade ? trace_uniform (&x, 2.0, 5.0) : trace_uniform (&x, 1.0, 4.0);
    while (left > 0.0 && i < G_N_ELEMENTS (trace_rate)) {
      double jitter = fade ? 1.0 : trace_uniform (&x, 0.9, 1.1);
      double len = trace_uniform (&x, 0.25, 0.5);
      i = trace_hold (i, link * level * jitter, len);
      left -= len;
    }
  }
}

static double
trace_at (const Sim *s, double t)
{
  (void) s;
  return trace_rate[(unsigned) (t * TRACE_STEPS_PER_S) % G_N_ELEMENTS (trace_rate)];
}

/* The link's mean rate over second @sec, bit/s. */
static double
trace_mean (unsigned sec)
{
  double sum = 0.0;
  for (unsigned k = 0; k < TRACE_STEPS_PER_S; k++)
    sum += trace_rate[sec * TRACE_STEPS_PER_S + k];
  return sum / TRACE_STEPS_PER_S;
}

/* Returns true if second @sec counts for a video of minimum @vmin on a
 * moving link (issue 28): the link carries at least 1.1 × the minimum
 * throughout it (a paced video cannot catch up a fade's shortfall later in
 * the second), and does not fall within it by more than 30 % below the
 * second before (no receiver sees a fall before its queue does: the second
 * after the fall is excluded, whichever part of it the fall lands in). */
static bool
trace_capable (unsigned sec, double vmin)
{
  double before = trace_mean (sec - 1);
  for (unsigned k = 0; k < TRACE_STEPS_PER_S; k++) {
    double rate = trace_rate[sec * TRACE_STEPS_PER_S + k];
    if (rate < 1.1 * vmin || rate < 0.7 * before)
      return false;
  }
  return true;
}

/* The video's lateness so far (what bwss-late calls the required
 * prebuffer): of the media received, how long after its time it came —
 * the video is flow 0, its stream starts with the run. */
static double cell_late_s, cell_late_start_s;    /* all run; its first 5 s */
static double cell_late_at_s;                     /* when the run's largest was reached */
/* per second, over the controller's ticks: σ's sum, the ticks, and those
 * with σ above what the link leaves us then (its rate less the UDP) */
static double cell_sigma_sum[SIM_MAX_SECONDS];
static unsigned cell_ticks[SIM_MAX_SECONDS], cell_sigma_over[SIM_MAX_SECONDS];
/* the time, from 5 s, the detector's last verdict in TRACK was "foreign",
 * and of it by a queue beside a small share alone, s; the last tick seen */
static double cell_foreign_s, cell_beside_s;
static uint64_t cell_tick_at_us;

/* Counts the time since the last tick under the detector's last verdict. */
static void
cell_verdict (Sim *s)
{
  BwssDecision d;
  double dt = (double) (s->now_us - cell_tick_at_us) / 1e6;
  cell_tick_at_us = s->now_us;
  if (s->now_us < 5000000u || bwss_controller_last_decision (s->c, &d) != BWSS_OK
      || d.phase != BWSS_PHASE_TRACK || d.seen != BWSS_SEEN_FOREIGN)
    return;
  cell_foreign_s += dt;
  if (d.bulk_floored < d.bulk || d.queue_us <= d.queue_target_us)
    cell_beside_s += dt;
}

static void
cell_sigma (Sim *s)
{
  unsigned sec = (unsigned) (s->now_us / 1000000u);
  if (sec >= SIM_MAX_SECONDS || !s->c)
    return;
  cell_verdict (s);
  BwssControllerStats st;
  bwss_controller_stats (s->c, &st);
  double room = s->m.capacity_bps
              - s->m.cross_bps;
  cell_sigma_sum[sec] += st.sigma_bps;
  cell_ticks[sec]++;
  if (st.sigma_bps > room)
    cell_sigma_over[sec]++;
}

static void
cell_lateness (Sim *s)
{
  cell_sigma (s);
  double due = (double) s->m.f[0].bytes * 8.0 / cell_now->video_min;
  double late = (double) s->now_us / 1e6 - due;
  if (late > cell_late_s) {
    cell_late_s = late;
    cell_late_at_s = (double) s->now_us / 1e6;
  }
  if (s->now_us < 5000000 && late > cell_late_start_s)
    cell_late_start_s = late;
}

static void
cell_cross (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= cell_cross_from (cell_now) && sec < cell_cross_to (cell_now))
                  ? cell_now->cross_bps : 0;
}

/* A moving link second by second (in --verbose), from 5 s: the link's
 * mean and least rate, σ's mean and the part of the second it stood above
 * what the link left us (its rate less the UDP), the video, the downloads
 * and the queue.  Each second the video is short (below 90 % of its
 * minimum, of the seconds the lab counts: the link's mean at least 1.1 ×
 * it) by its cause: σ above the link for part of the second (the loop's
 * reaction to a fall), else the downloads above what the link left the
 * video's minimum with σ below it (their windows in flight), else neither
 * (the video's own window or losses).  And what the flows left of the link
 * (the ideal router's aggregate): below σ's mean (σ held low) or under σ
 * (the flows did not take what σ allowed). */
static void
cell_breakdown (const Sim *s, const Cell *cell, size_t v, unsigned dur)
{
  unsigned no_room = 0, dip_room = 0, fall = 0, bulk_over = 0, own = 0;
  double room_sum = 0.0, lost_sigma = 0.0, lost_under = 0.0;
  for (unsigned t = 5; t < dur; t++) {
    double least = INFINITY;
    for (unsigned k = t * TRACE_STEPS_PER_S; k < (t + 1) * TRACE_STEPS_PER_S; k++)
      least = fmin (least, trace_rate[k]);
    double room = trace_mean (t) - s->cross[t];
    double sigma = cell_ticks[t] ? cell_sigma_sum[t] / cell_ticks[t] : 0.0;
    double over = cell_ticks[t] ? (double) cell_sigma_over[t] / cell_ticks[t] : 0.0;
    double video = s->rate[t][v];
    double bulk = sim_mean_aggregate (s, t, t + 1) - video;
    double lost = fmax (0.0, room - video - bulk);
    double by_sigma = fmin (lost, fmax (0.0, room - sigma));
    room_sum += room;
    lost_sigma += by_sigma;
    lost_under += lost - by_sigma;
    const char *why = "";
    if (trace_mean (t) >= 1.1 * cell->video_min && video < 0.9 * cell->video_min) {
      if (room < cell->video_min) {
        why = "  short: the link less the UDP below the minimum";
        no_room++;
      } else if (least - s->cross[t] < cell->video_min) {
        why = "  short: the link less the UDP below the minimum in a dip";
        dip_room++;
      } else if (over > 0.0 && sigma > 1.05 * cell->video_min) {
        why = "  short: sigma above the link";
        fall++;
      } else if (bulk > room - cell->video_min) {
        why = "  short: the downloads above the room";
        bulk_over++;
      } else {
        why = "  short: the video's own";
        own++;
      }
    }
    g_test_message ("%s: %2u s link %6.0f (least %6.0f, UDP %5.0f) sigma %6.0f (above %3.0f %%) "
                    "video %6.0f downloads %6.0f queue %5.1f ms, left %6.0f (sigma low %6.0f)%s",
                    cell->name, t, trace_mean (t) / 1e3, least / 1e3, s->cross[t] / 1e3,
                    sigma / 1e3, 100.0 * over, video / 1e3, bulk / 1e3, s->queue_ms[t],
                    lost / 1e3, by_sigma / 1e3, why);
  }
  g_test_message ("%s: the video short in %u s: the link less the UDP below its minimum %u "
                  "(in a dip %u), sigma above the link %u, the downloads above the room %u, its "
                  "own %u; of the link's %.0f kbit/s the flows left %.1f %%: %.1f %% below sigma, "
                  "%.1f %% under it", cell->name, no_room + dip_room + fall + bulk_over + own,
                  no_room, dip_room, fall,
                  bulk_over, own, room_sum / (dur - 5) / 1e3,
                  100.0 * (lost_sigma + lost_under) / room_sum, 100.0 * lost_sigma / room_sum,
                  100.0 * lost_under / room_sum);
}

/* Returns true if @cell's link carries the segments' headers: every single
 * FIFO and fq_codel packet by packet unless the cell asks for payload only;
 * never under the fluid fq, whose model counts payload only. */
static bool
cell_wire (const Cell *cell)
{
  return (!cell->fq || cell->packets) && !cell->payload_only;
}

/* What a link of @link_bps carries of full segments' payload, bit/s (with
 * the headers on the wire, Model.wire_headers: MODEL_MSS of every
 * MODEL_MSS + MODEL_WIRE_HEADER bytes): what "what the video leaves"
 * counts, as the lab's payload share does */
static double
cell_payload (const Cell *cell, double link_bps)
{
  return cell_wire (cell) ? link_bps * MODEL_MSS / (MODEL_MSS + MODEL_WIRE_HEADER) : link_bps;
}

/* ... and what @cross_bps of UDP payload takes of the link, bit/s */
static double
cell_cross_wire (const Cell *cell, double cross_bps)
{
  return cell_wire (cell)
         ? cross_bps * (MODEL_UDP_PAYLOAD + MODEL_UDP_WIRE_HEADER) / MODEL_UDP_PAYLOAD
         : cross_bps;
}

/* The seconds in COMPETE a cell's run may spend (Sim.compete_max_s): set
 * by a test that asserts the loop's entries itself; 0: sim_free's bound */
static unsigned cell_compete_max_s;

static CellResult
run_cell_at (const Cell *cell, bool controlled, bool latch, unsigned shift_ms)
{
  Sim s;
  cell_now = cell;
  unsigned dur = cell_run_s (cell);
  sim_init (&s, cell->link_bps, &delay, cell_cross);
  s.tick_phase_us = (s.tick_phase_us + shift_ms * 1000u) % 10000u;
  s.m.max_queue_s = cell->buffer_s;
  s.m.aqm_target_s = cell->aqm_s;
  s.m.fq = cell->fq;
  s.m.rcv_rtt_latch = latch;
  s.m.packets = cell->packets;
  s.m.fifo_limit_bytes = cell->fifo_bytes;
  s.m.repair_holes = cell->holes;
  s.m.wire_headers = cell_wire (cell);
  cell_late_s = cell_late_start_s = cell_late_at_s = 0.0;
  memset (cell_sigma_sum, 0, sizeof cell_sigma_sum);
  memset (cell_ticks, 0, sizeof cell_ticks);
  memset (cell_sigma_over, 0, sizeof cell_sigma_over);
  cell_foreign_s = cell_beside_s = 0.0;
  cell_tick_at_us = 0;
  s.on_tick = cell_lateness;
  s.m.source_gaps = cell->packets;          /* the lab's video source, at packet level */
  s.m.shim_reads = cell->packets && cell->lab_receiver;
  s.m.gap_spread = cell->packets && cell->lab_receiver;
  s.m.handshake_queue = cell->packets && cell->lab_receiver;
  if (cell->trace) {
    trace_fill (cell->trace, cell->link_bps);
    s.capacity_at = trace_at;
  }
  s.rtt_fallback = cell->rtt_fallback;
  s.compete_max_s = cell_compete_max_s;
  bool late = controlled && cell->join_s > 0.0;
  size_t v = late ? sim_add_late (&s, 0.030, 10, cell->video_min, 1, cell->join_s)
                  : sim_add (&s, 0.030, 10, cell->video_min, 1, controlled);
  s.m.f[v].source_bps = cell->video_min;
  if (cell->packets)
    s.m.f[v].source_packet = 1000;          /* the lab's source: 1000 bytes every 16 ms */
  sim_no_pacing (&s, v);                    /* the element reads by itself */
  for (unsigned d = 0; d < cell->downloads; d++)
    for (unsigned k = 0; k < cell->conns; k++)
      s.m.f[late ? sim_add_late (&s, cell->rtt_bulk[d], 0, 0, 1, cell->join_s)
                 : sim_add (&s, cell->rtt_bulk[d], 0, 0, 1, controlled)].syn_window_bytes
          = cell->syn_bulk;
  for (size_t i = 0; i < s.m.n; i++)
    s.m.f[i].cubic = cell->cubic;
  sim_run (&s, dur);
  if (controlled)
    sim_log (&s, 3);
  CellResult r = { 0 };
  double carried = 0.0;
  for (unsigned t = 5; t < dur; t++) {
    double link = cell->trace ? trace_mean (t) : cell->link_bps;
    double floor = cell->trace ? 0.9 : 0.95;
    if (cell->trace && !trace_capable (t, cell->video_min))
      continue;
    r.counted++;
    if (s.rate[t][v] >= floor * cell->video_min)
      r.at_min++;
    if (s.rate[t][v] >= 0.9 * cell->video_min)
      r.at_min_lab++;
    else if (controlled)
      g_test_message ("%s: video short at %u s: %.0f (link %.0f)", cell->name, t,
                      s.rate[t][v] / 1e3, link / 1e3);
    carried += link - s.cross[t];
  }
  /* the lab's capable seconds (linkstats.py): the second's mean rate at
   * least 1.1 × the minimum */
  for (unsigned t = 5; cell->trace && t < dur; t++) {
    if (trace_mean (t) < 1.1 * cell->video_min)
      continue;
    r.lab_capable++;
    if (s.rate[t][v] >= 0.9 * cell->video_min)
      r.lab_at_min++;
  }
  if (controlled && cell->trace)
    cell_breakdown (&s, cell, v, dur);
  /* σ follows the link: where it has held for 3 s (a level of the LTE
   * trace), σ at the end of the second against its rate */
  r.sigma_lo = INFINITY;
  for (unsigned t = 7; cell->trace && t < dur; t++) {
    double lo = INFINITY, hi = 0.0;
    for (unsigned k = (t - 2) * TRACE_STEPS_PER_S; k < (t + 1) * TRACE_STEPS_PER_S; k++) {
      lo = fmin (lo, trace_rate[k]);
      hi = fmax (hi, trace_rate[k]);
    }
    if (hi > 1.25 * lo || lo < 1.1 * cell->video_min)
      continue;
    double ratio = s.stats[t].sigma_bps / cell_payload (cell, trace_mean (t));
    r.steady++;
    r.sigma_lo = fmin (r.sigma_lo, ratio);
    r.sigma_hi = fmax (r.sigma_hi, ratio);
  }
  r.video_losses = s.m.f[v].losses;
  r.prebuffer_s = cell_late_s;
  r.prebuffer_at_s = cell_late_at_s;
  r.start_late_s = cell_late_start_s;
  r.video = sim_mean (&s, v, 5, dur);
  r.downloads = sim_mean_aggregate (&s, 5, dur) - r.video;
  double cross = 0.0;
  for (unsigned t = 5; t < dur; t++)
    cross += s.cross[t] / (dur - 5.0);
  double link = cell->trace ? 0.0 : cell->link_bps;
  if (cell->trace)
    for (unsigned t = 5; t < dur; t++)
      link += trace_mean (t) / (dur - 5.0);
  r.left = cell_payload (cell, link) - cell_cross_wire (cell, cross) - r.video;
  unsigned c0 = cell_cross_from (cell), c1 = cell_cross_to (cell);
  const unsigned edges[5] = { 5, c0, c1, c1 + RECOVER_S, dur };
  for (unsigned ph = 0; ph < 4; ph++) {
    double got = 0.0, left = 0.0;
    for (unsigned t = edges[ph]; t < edges[ph + 1]; t++) {
      double l = cell->trace ? trace_mean (t) : cell->link_bps;
      got += sim_mean_aggregate (&s, t, t + 1) - s.rate[t][v];
      left += fmax (0.0, cell_payload (cell, l) - cell_cross_wire (cell, s.cross[t])
                             - s.rate[t][v]);
    }
    r.use_phase[ph] = left > 0.0 ? got / left : 0.0;
  }
  size_t nd = cell->downloads * cell->conns;
  for (unsigned d = 0; d < cell->downloads; d++) {
    double got = 0.0;
    for (unsigned k = 0; k < cell->conns; k++)
      got += sim_mean (&s, 1 + d * cell->conns + k, 5, dur);
    double want = (double) cell->conns / (double) nd;
    double dev = fabs (got / r.downloads - want) / want;
    if (dev > r.share_dev)
      r.share_dev = dev;
  }
  r.q_video = sim_median_flow_queue_ms (&s, v, 5, dur);
  r.q_bulk = sim_median_flow_queue_ms (&s, 1, 5, dur);
  /* under FQ σ is no slack: what the downloads may take (their targets)
   * against what the link leaves them, second by second */
  for (unsigned t = 5; controlled && !cell->trace && t < dur; t++) {
    double targets = 0.0;
    for (size_t i = 1; i < s.m.n; i++)
      targets += s.target[t][i];
    double room = cell_payload (cell, cell->link_bps) - cell->video_min
                  - cell_cross_wire (cell, s.cross[t]);
    if (targets / room > r.over_room)
      r.over_room = targets / room;
  }
  (void) carried;
  r.compete_s = sim_seconds_competing (&s, 0, dur);
  r.foreign_s = cell_foreign_s;
  r.beside_s = cell_beside_s;
  if (cell->packets) {
    g_test_message ("%s: %s: the bottleneck dropped %u packets; the video lost %u times (%u tail "
                    "loss probes), a download %u (%u)", cell->name,
                    controlled ? (latch ? "bwss 6.16+" : "bwss before 6.16") : "plain TCP",
                    s.m.codel_drops, s.m.f[v].losses, s.m.f[v].stalls, s.m.f[1].losses,
                    s.m.f[1].stalls);
    r.drops = s.m.codel_drops;
    r.drops_video = s.m.f[v].drops;
    r.drops_cross = s.m.cross_drops;
    r.sojourn_p50_ms = sojourn_quantile (&s.m, 0.5);
    r.sojourn_p95_ms = sojourn_quantile (&s.m, 0.95);
    g_test_message ("%s: drops by flow: the video %u, the downloads %u, the UDP %u; the packets' "
                    "sojourn p50 %.0f ms, p95 %.0f ms", cell->name, r.drops_video,
                    r.drops - r.drops_video - r.drops_cross, r.drops_cross, r.sojourn_p50_ms,
                    r.sojourn_p95_ms);
  }
  sim_free (&s);
  return r;
}

static CellResult
run_cell (const Cell *cell, bool controlled, bool latch)
{
  return run_cell_at (cell, controlled, latch, 0);
}

/* A cell at packet level runs three times, its controller's ticks shifted
 * by 0, 3 and 6 ms (the lab's three runs: where a tick falls among the
 * segments' arrivals is chance there, and at 960 kbit/s, 12 ms a segment,
 * it decides which state the loop settles in: the downloads' use of what
 * the video leaves ranges over 34-74 % across the ten phases before 6.16).
 * The other cells run once, at the phase BWSS_SIM_TICK_PHASE_MS gives
 * (tests/unit/sim-spread.sh measures their spread; docs/testing.md). */
#define CELL_RUNS_PACKETS 3

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static int
cmp_unsigned (const void *a, const void *b)
{
  unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
  return (x > y) - (x < y);
}

static int
cmp_use (const void *a, const void *b)
{
  const CellResult *x = a, *y = b;
  double ux = x->downloads / x->left, uy = y->downloads / y->left;
  return (ux > uy) - (ux < uy);
}

/* Runs @cell under plain TCP and bwss (both RTT behaviours); asserts that
 * bwss leaves the video short in at most @short_max of the counted seconds
 * (in every run) and the downloads use at least @downloads_use of what it
 * leaves (at the median run; issue 28's targets are 98 % of the seconds and
 * 85 %: where a cell's bound is looser, the comment at the cell says why);
 * returns bwss's figures (6.16+, the median run). */
static CellResult
check_cell (const Cell *cell, unsigned short_max, double downloads_use)
{
  CellResult tcp = run_cell (cell, false, true);
  g_test_message ("%s: plain TCP: video at its minimum %u of %u s, video %.0f, downloads %.0f "
                  "(left %.0f), own queue video %.1f, downloads %.1f ms", cell->name, tcp.at_min,
                  tcp.counted, tcp.video / 1e3, tcp.downloads / 1e3, tcp.left / 1e3, tcp.q_video,
                  tcp.q_bulk);
  CellResult r = { 0 };
  for (int latch = 0; latch < 2; latch++) {
    /* the video in every run; the downloads' use at the median run */
    unsigned runs = cell->packets ? CELL_RUNS_PACKETS : 1;
    CellResult each[CELL_RUNS_PACKETS];
    for (unsigned k = 0; k < runs; k++) {
      each[k] = run_cell_at (cell, true, latch, 3 * k);
      g_assert_cmpuint (each[k].counted - each[k].at_min, <=, short_max);
      if (runs > 1)
        g_test_message ("%s, rcv_rtt %s, ticks shifted %u ms: video at its minimum %u of %u s, "
                        "downloads %.1f %% of what it leaves, required prebuffer %.2f s",
                        cell->name, latch ? "6.16+" : "before 6.16", 3 * k, each[k].at_min,
                        each[k].counted, 100.0 * each[k].downloads / each[k].left,
                        each[k].prebuffer_s);
    }
    qsort (each, runs, sizeof each[0], cmp_use);
    CellResult b = each[runs / 2];
    g_test_message ("%s, rcv_rtt %s: bwss: video at its minimum %u of %u s (%.1f %%), video %.0f, "
                    "downloads %.0f of %.0f left (%.1f %%, shares within %.1f %%), own queue "
                    "video %.1f, downloads %.1f ms; their targets at most %.2f × the room "
                    "(fixed link); the video's losses %u", cell->name,
                    latch ? "6.16+" : "before 6.16", b.at_min, b.counted,
                    100.0 * b.at_min / b.counted, b.video / 1e3, b.downloads / 1e3, b.left / 1e3,
                    100.0 * b.downloads / b.left, 100.0 * b.share_dev, b.q_video, b.q_bulk,
                    b.over_room, b.video_losses);
    g_assert_cmpuint (b.counted - b.at_min, <=, short_max);
    g_assert_cmpuint (b.at_min, >, tcp.at_min);
    g_assert_cmpfloat (b.downloads, >=, downloads_use * b.left);
    /* under FQ the flows we window sum to at most link − minimum − what the
     * UDP takes (issue 28), within the loop's steps (α, and a probe's) */
    if (cell->fq && !cell->trace)
      g_assert_cmpfloat (b.over_room, <=, 1.10);
    /* σ follows a moving link (issue 28, item 3): in the seconds the link
     * has held for 3 s, within 0.85-1.35 × its rate (above it by what the
     * video's target leaves unused and a probe's step) */
    if (b.steady > 0) {
      g_test_message ("%s, rcv_rtt %s: σ over the link's payload rate in the %u steady seconds "
                      "%.2f-%.2f",
                      cell->name, latch ? "6.16+" : "before 6.16", b.steady, b.sigma_lo,
                      b.sigma_hi);
      g_assert_cmpfloat (b.sigma_lo, >=, 0.85);
      g_assert_cmpfloat (b.sigma_hi, <=, 1.35);
    }
    g_test_message ("%s, rcv_rtt %s: the video at >= 90 %% of its minimum (the lab's measure) "
                    "%u of %u s; the downloads' use of what is left before, with, the %u s "
                    "after the UDP and the rest: %.1f, %.1f, %.1f, %.1f %%", cell->name,
                    latch ? "6.16+" : "before 6.16", b.at_min_lab, b.counted, RECOVER_S,
                    100.0 * b.use_phase[0], 100.0 * b.use_phase[1], 100.0 * b.use_phase[2],
                    100.0 * b.use_phase[3]);
    /* lateness means something where the source keeps what it could not
     * send (packet level); elsewhere a shortfall is never made up */
    if (cell->packets)
      g_test_message ("%s, rcv_rtt %s: required prebuffer %.2f s (plain TCP %.2f s)", cell->name,
                      latch ? "6.16+" : "before 6.16", b.prebuffer_s, tcp.prebuffer_s);
    if (latch)
      r = b;
  }
  return r;
}

static const double rtt_15_40_90[] = { 0.015, 0.040, 0.090 };
static const double rtt_30[] = { 0.030, 0.030, 0.030 };

/* The lab's first cell of issue 28: 8 Mbit/s fq_codel, video 3 Mbit/s, three
 * downloads at 15/40/90 ms, 2 Mbit/s UDP from 30 to 60 s. */
static void
test_trace_fq_codel (void)
{
  Cell cell = { "fq_codel 8M", 8e6, 0.150, 0.005, true, 3e6, 3, 1, rtt_15_40_90, 2e6, TRACE_FIXED,
                false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  /* 9.4 % of the seconds before the video's own evidence (the lab's figure
   * too), 97.6 % with it; short now only in the second the UDP arrives (its
   * fair share taken at once, before the video's queue shows): 98.8 % (the
   * climb after the UDP left stops at the link its own queue showed) */
  CellResult r = check_cell (&cell, 1, 0.90);
  g_assert_cmpfloat (r.share_dev, <=, 0.10);
}

/* 20 Mbit/s fq_codel, video 10.3 Mbit/s, one download of 8 connections:
 * each connection is one more fair share taken from the video. */
static void
test_trace_fq_codel_many (void)
{
  static const double rtt[] = { 0.030 };
  Cell cell = { "fq_codel 20M, 8 connections", 20e6, 0.150, 0.005, true, 10.3e6, 1, 8, rtt,
                0.0, TRACE_FIXED, false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false,
                false };
  /* 3.5 % of the seconds before (6.16+); one second short in the start */
  check_cell (&cell, 1, 0.90);
}

/* The Fig. 7 streaming cell behind CoDel at 960 kbit/s (one queue), at
 * packet level: a segment takes 12 ms to send here, more than CoDel's
 * 5-ms target, so what CoDel drops depends on whole packets, every data
 * RTT holds a segment's transmission that the handshake's (the base) does
 * not, and a download its reads pace has one segment in flight, so each
 * of its losses waits for the tail loss probe (flowmodel.h); the video is
 * the lab's source: 1000-byte writes every 16 ms into a large send buffer
 * (each its own segment; what the sender could not send yet leaves later,
 * as the lab's video-server.py), and the receiver's samples read the
 * sender's wait for them (source_gaps); the window each SYN offered
 * (64 kB, before any clamp) stays open until used, so the first second
 * carries the senders' initial windows; the receiver's RTT samples are
 * whole ms ticks of TCP timestamps (flowmodel.c, sample_rtt).  The fluid
 * model had the downloads at 90 % of what the video leaves; at packet level
 * with the samples floored to the ms, 69.8 % (before 6.16) and 83.7 %
 * (6.16+) at one tick phase; with the ticks and over three phases (medians)
 * 59.8 % and 78.6 %, each run's video short in at most 4 of the 85 s.  With
 * the headers on the wire (66 B a segment, 42 B a UDP datagram: the link
 * carries ~94 kbit/s of payload beside the video and the UDP, not 144) and
 * what the video leaves counted in payload, 47.9 % (39.1-56.5 % over the
 * three phases) and 80.4 %: the lab's on main (docs/lab-results.md, medians
 * of 3 runs) is 47-49 %, the video at its minimum in 81 of 85 s (95.3 %).
 * The bar is the model's median before 6.16. docs/testing.md compares the
 * rest. */
static void
test_trace_codel_960k (void)
{
  Cell cell = { "CoDel 960k", 960e3, 0.150, 0.005, false, 496e3, 2, 1, rtt_30, 320e3, TRACE_FIXED,
                true, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  check_cell (&cell, 4, 0.47);
}

/* The first second of the same cell: what the downloads' SYNs offer (64
 * kB, before any clamp) arrives with the video's first response.  Bounded
 * to two segments (a window offered small before connect()), the video's
 * lateness in its first 5 s falls from 0.73-1.19 s to 0.08-0.10 s under
 * both receiver RTTs at every tick phase: in the model the downloads'
 * first windows are the whole of the first second's cost (in the lab they
 * are not: docs/testing.md). */
static void
test_trace_codel_960k_first_second (void)
{
  Cell cell = { "CoDel 960k", 960e3, 0.150, 0.005, false, 496e3, 2, 1, rtt_30, 320e3, TRACE_FIXED,
                true, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  Cell bounded = cell;
  bounded.syn_bulk = 2.0 * MODEL_MSS;
  for (int latch = 0; latch < 2; latch++) {
    CellResult open = run_cell (&cell, true, latch), held = run_cell (&bounded, true, latch);
    g_test_message ("rcv_rtt %s: the video's lateness in its first 5 s %.2f s with the "
                    "downloads' SYNs at 64 kB, %.2f s at two segments (over the run %.2f and "
                    "%.2f s; the downloads' use of what the video leaves %.1f and %.1f %%, the "
                    "video at its minimum %u and %u of %u s)", latch ? "6.16+" : "before 6.16",
                    open.start_late_s, held.start_late_s, open.prebuffer_s, held.prebuffer_s,
                    100.0 * open.downloads / open.left, 100.0 * held.downloads / held.left,
                    open.at_min, held.at_min, open.counted);
    g_assert_cmpfloat (held.start_late_s, <, open.start_late_s - 0.2);
  }
}

/* The first second as the lab meets it: Fig. 7 behind 960 kbit/s of
 * drop-tail (150 ms), at packet level, every flow joining the controller
 * join_s after its first byte with the kernel's own window until then
 * (the preload shim registers a socket at its first read, and in the lab
 * bwssd admitted the flows 0.00-0.91 s after their first bytes, median
 * 0.64 s, 9 runs), the sample's RTT the handshake's until the receiver
 * has one (bwssd's).  Prints the video's lateness in its first 5 s for
 * each join delay and SYN window. */
static void
test_trace_first_second_join (void)
{
  static const double joins[] = { 0.0, 0.01, 0.05, 0.1, 0.3, 0.65, 0.9 };
  Cell cell = { "Fig. 7 960k drop-tail", 960e3, 0.150, 0.0, false, 496e3, 2, 1, rtt_30, 320e3,
                TRACE_FIXED, true, 0.0, 0.0, true, 0, 0, 0, 0.0, false, false, false, false };
  for (int latch = 0; latch < 2; latch++)
    for (int syn = 0; syn < 2; syn++) {
      double late[G_N_ELEMENTS (joins)];
      for (size_t j = 0; j < G_N_ELEMENTS (joins); j++) {
        Cell c = cell;
        c.syn_bulk = syn ? 2.0 * MODEL_MSS : 0.0;
        c.join_s = joins[j];
        CellResult r = run_cell (&c, true, latch);
        late[j] = r.start_late_s;
        g_test_message ("rcv_rtt %s, SYN %s, flows join %.2f s after their first byte: the "
                        "video's lateness in its first 5 s %.2f s (over the run %.2f s)",
                        latch ? "6.16+" : "before 6.16", syn ? "2 segments" : "64 kB", joins[j],
                        r.start_late_s, r.prebuffer_s);
      }
      /* the handshake's RTT before the receiver's first sample (bwssd's
       * fallback) against the receiver's alone, joined at the first byte */
      Cell c = cell;
      c.syn_bulk = syn ? 2.0 * MODEL_MSS : 0.0;
      c.rtt_fallback = false;
      CellResult r = run_cell (&c, true, latch);
      g_test_message ("rcv_rtt %s, SYN %s, joined at the first byte, the receiver's RTT alone "
                      "(no handshake RTT before its first sample): %.2f s (with it %.2f s)",
                      latch ? "6.16+" : "before 6.16", syn ? "2 segments" : "64 kB",
                      r.start_late_s, late[0]);
      /* the kernel's window until the join is what the first second costs:
       * joined at the lab's median delay (0.65 s) the video is later by
       * more than 0.2 s than joined at its first byte, whatever the SYN */
      g_assert_cmpfloat (late[5], >, late[0] + 0.2);
      /* with a small SYN and no delay the video is held from its start;
       * 10 ms of the kernel's window after the first byte (its update
       * offers two segments more per segment received, and an offered
       * window is never taken back) already costs it, and 50 ms more */
      if (syn) {
        g_assert_cmpfloat (late[0], <, 0.10);
        g_assert_cmpfloat (late[1], >, late[0]);
        g_assert_cmpfloat (late[2], >, late[1]);
      }
    }
}

/* Moving links (the lab's traces, around 8 Mbit/s), a video of 2 Mbit/s
 * and three downloads, behind a 60-ms drop-tail buffer and behind
 * fq_codel.  The video is counted in the seconds issue 28 names
 * (trace_capable); what the downloads use of what it leaves is short of
 * the 85 % target where the bound says so: the loop decides every 100 ms
 * and a level of the Wi-Fi trace lasts 300 ms on average, so σ spends
 * most of it on the way up (drop-tail) or held below the dips that take
 * the video's fair share (fq_codel). */
static void
test_trace_wifi (void)
{
  /* downloads 71.9 / 80.8 % of the payload the video leaves (the queue
   * holds σ; a payload-only link gave 79.0 / 81.6 %) */
  Cell tail = { "wifi, 60-ms drop-tail", 8e6, 0.060, 0.0, false, 2e6, 3, 1, rtt_30, 0.0,
                TRACE_WIFI, false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  check_cell (&tail, 0, 0.71);
  /* downloads 55.4 / 57.8 % before the deficits the video's own queue
   * shows stopped bounding the raises, 60.8 / 59.0 % now */
  Cell fq = { "wifi, fq_codel", 8e6, 0.150, 0.005, true, 2e6, 3, 1, rtt_30, 0.0, TRACE_WIFI,
              false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  check_cell (&fq, 0, 0.58);
}

/* The LTE-like trace: levels of 1-4 s, fades of 2-5 s to 20 %. */
static void
test_trace_lte (void)
{
  /* downloads 72.4 / 86.7 % before the link the video's own queue showed
   * became the link seen busy, 80.7 / 86.7 % after on a payload-only link;
   * 79.1 / 85.8 % of the payload the video leaves with the headers on the
   * wire */
  Cell tail = { "lte, 60-ms drop-tail", 8e6, 0.060, 0.0, false, 2e6, 3, 1, rtt_30, 0.0,
                TRACE_LTE, false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  check_cell (&tail, 0, 0.78);
  /* the video at its minimum 54 / 55 of 56 s (96.4 / 98.2 %: short in the
   * second after the excluded one, σ still settling after a fall from 10
   * to 3.4 or from 7.8 to 5.2 Mbit/s), downloads 78.9 / 82.2 % before,
   * 80.6 / 85.4 % now */
  Cell fq = { "lte, fq_codel", 8e6, 0.150, 0.005, true, 2e6, 3, 1, rtt_30, 0.0, TRACE_LTE, false,
              0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false, false };
  check_cell (&fq, 2, 0.80);
}

static const double rtt_20_80[] = { 0.020, 0.080 };

/* Runs a matrix cell under bwss (both receiver RTTs; three tick phases at
 * packet level, as check_cell) and prints the lab's figures: the video at
 * >= 90 % of its minimum (video_at_min) and the downloads' use of what it
 * leaves, over the run and per phase, and the required prebuffer with where
 * it is set; asserts the video short in at most @short_max seconds in every
 * run and, under 6.16+ (the lab's kernel), the downloads' use at the median
 * run at least @use_616.  With @prebuffer_s > 0, also that the first 5 s
 * need at most START_LATE_S in every run and, under 6.16+, the required
 * prebuffer of the median run is at most @prebuffer_s (the lab's target is
 * a median of three runs). */
#define START_LATE_S 0.10
static void
matrix_cell (const Cell *cell, unsigned short_max, double use_616, double prebuffer_s)
{
  for (int latch = 0; latch < 2; latch++) {
    unsigned runs = cell->packets ? CELL_RUNS_PACKETS : 1;
    CellResult each[CELL_RUNS_PACKETS];
    for (unsigned k = 0; k < runs; k++) {
      each[k] = run_cell_at (cell, true, latch, 3 * k);
      g_test_message ("%s, rcv_rtt %s, ticks +%u ms: video at >= 90 %% of its minimum %u of %u s; "
                      "downloads' use %.1f %%: before, with, %u s after the UDP, the rest %.1f, "
                      "%.1f, %.1f, %.1f %%", cell->name, latch ? "6.16+" : "before 6.16", 3 * k,
                      each[k].at_min_lab, each[k].counted, 100.0 * each[k].downloads / each[k].left,
                      RECOVER_S, 100.0 * each[k].use_phase[0], 100.0 * each[k].use_phase[1],
                      100.0 * each[k].use_phase[2], 100.0 * each[k].use_phase[3]);
      if (cell->trace)
        g_test_message ("%s: the lab's capable seconds: the video at >= 90 %% of its minimum "
                        "%u of %u s", cell->name, each[k].lab_at_min, each[k].lab_capable);
      g_test_message ("%s: required prebuffer %.2f s (reached at %.2f s), in the first 5 s %.2f s; "
                      "median own queue: the video %.1f ms, a download %.1f ms; the video's "
                      "losses %u", cell->name, each[k].prebuffer_s, each[k].prebuffer_at_s,
                      each[k].start_late_s, each[k].q_video, each[k].q_bulk,
                      each[k].video_losses);
      g_assert_cmpuint (each[k].counted - each[k].at_min_lab, <=, short_max);
      if (prebuffer_s > 0.0)
        g_assert_cmpfloat (each[k].start_late_s, <=, START_LATE_S);
    }
    if (prebuffer_s > 0.0 && latch) {
      double pre[CELL_RUNS_PACKETS];
      for (unsigned k = 0; k < runs; k++)
        pre[k] = each[k].prebuffer_s;
      qsort (pre, runs, sizeof pre[0], cmp_double);
      g_test_message ("%s, rcv_rtt 6.16+: required prebuffer, the median run %.2f s", cell->name,
                      pre[runs / 2]);
      g_assert_cmpfloat (pre[runs / 2], <=, prebuffer_s);
    }
    qsort (each, runs, sizeof each[0], cmp_use);
    if (latch)
      g_assert_cmpfloat (each[runs / 2].downloads, >=, use_616 * each[runs / 2].left);
  }
}

/* The bottleneck matrix's shape (tests/lab/bwsslab/matrix.py): a video of
 * 45 % of the link, two downloads at 20 and 80 ms, UDP of a third of the
 * link from 20 to 40 s of a 60-s run; four of the cells the lab ran on the
 * laws these assert (docs/results/matrix-why.md sets the lab's figures,
 * per phase of the run, beside these).  Each bar holds at every tick phase
 * (sim-spread.sh): the model's worst where it is below the lab, never
 * below the lab's figure where it reaches more.  The video short in at
 * most 2 s at 960k drop-tail (the UDP's onset and, in some runs, the
 * second σ ramps past what the link leaves inside the UDP; the lab 2 s), 2 behind
 * CoDel (the lab 3), none at 20M drop-tail (the lab none), 3 behind
 * fq_codel (the lab 4: two at each edge of the UDP, the model's at its
 * onset).  The downloads' use of what the video leaves (the drop-tail and
 * CoDel cells with the headers on the wire, counted in payload), 6.16+: at
 * 960k drop-tail 66.3-70.1 % over three phases, 68.5 % the median (the
 * payload-only link 69.9-76.9 %; the lab 88 %: after the UDP has gone the
 * model's σ holds for 12 s just below the link it saw busy beside the
 * UDP — each raise moves the stop up by the video's share of it, so the
 * ramp never reaches it and never probes beyond — where the lab's climbs
 * in 3 s), behind CoDel 72-88 % (the lab 63.5 %: the bar is the lab's),
 * at 20M drop-tail 89-97 % (the lab 94.6 %), behind fq_codel 61-80 % (the
 * lab 82 %).  The required prebuffer at 960k drop-tail is the UDP's onset's,
 * not the first second's: the cell repairs its losses as TCP does (holes),
 * so when the onset's queue reaches the 150-ms buffer the video's in-order
 * bytes stop an RTT per loss, two or three times, as in the lab (its
 * arrivals stopped 0.20-0.25 s each).  The median of the three runs under
 * 6.16+ at most 0.43 s, the lab's worst of its three (0.37, 0.41, 0.43 s,
 * set 1.1-1.4 s after the onset); the model's 0.15-0.41 s over the ten
 * tick phases, set 1.0-1.5 s after it — above the issue's bound of about
 * 0.28 s, as the lab is; the first 5 s need at most 0.10 s in every run
 * (0.04-0.08 s). */
static void
test_trace_matrix (void)
{
  const Cell tail_960k = { "matrix droptail150 960k", 960e3, 0.150, 0.0, false, 432e3, 2, 1,
                           rtt_20_80, 320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.0, true,
                           60, 20, 40, 0.0, true, false, false, false };
  matrix_cell (&tail_960k, 2, 0.67, 0.43);
  const Cell codel_960k = { "matrix codel 960k", 960e3, 0.150, 0.005, false, 432e3, 2, 1,
                            rtt_20_80, 320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.0, true,
                            60, 20, 40, 0.0, false, false, false, false };
  matrix_cell (&codel_960k, 2, 0.635, 0.0);
  const Cell tail_20m = { "matrix droptail150 20M", 20e6, 0.150, 0.0, false, 9e6, 2, 1, rtt_20_80,
                          20e6 / 3, TRACE_FIXED, false, 0.0, 0.0, true, 60, 20, 40, 0.0, false,
                          false, false, false };
  matrix_cell (&tail_20m, 0, 0.89, 0.0);
  const Cell fq_20m = { "matrix fq_codel 20M", 20e6, 0.150, 0.005, true, 9e6, 2, 1, rtt_20_80,
                        20e6 / 3, TRACE_FIXED, false, 0.0, 0.0, true, 60, 20, 40, 0.0, false,
                        false, false, false };
  matrix_cell (&fq_20m, 3, 0.60, 0.0);
}

/* The matrix's CoDel 960k cell with the lab's receivers (Cell.lab_receiver)
 * and the lab's joins (0.65 s after a flow's first byte, the lab's median),
 * against the lab's drops.  What the lab's receivers do that the cell above
 * does not: the shim's paced reads (a read waits until its credit covers a
 * segment, then takes all that waits; the window reopens by it and the
 * sender sends that at once: the 80-ms download's 50-ms samples in the lab
 * show bursts of its 4-segment window every ~200 ms), one RTT sample per
 * window a read reopens (its segments echo one timestamp: its first
 * segment's), each handshake behind the queue it meets (the 80-ms
 * download's SYN-ACK crosses the others' first windows: its base in the lab
 * 92 ms, a segment's transmission in it, so the loop's queue reads the
 * lab's 1-5 ms where the cell above reads 13), and the video's samples each
 * with its own wait for its source (the lab's floor 39 ms: 30 and its
 * segment).  Under 6.16+ (the lab's kernel) over ten tick phases, each at
 * ticks +0/+3/+6 ms (ten distinct runs): the bottleneck drops 83-172
 * packets a run, the median of three at least 99 (the cell above 23-42;
 * the lab 120-138 on main's laws, half of them the video's, as here), the
 * downloads use 48.7-69.3 % of what the video leaves, the median of three
 * at least 51.5 % (the cell above 70-90 %; the lab 58.9-72.9 %), the video
 * at >= 90 % of its minimum in 52-55 of 55 s (the lab 51-54).  Asserted: the
 * video short in at most 3 s of every run, the median run's drops and use
 * at the model's worst over the phases. */
#define DROPS_LAB_RX 95
#define USE_LAB_RX   0.51
static void
test_trace_matrix_codel_lab (void)
{
  const Cell cell = { "matrix codel 960k, the lab's receivers", 960e3, 0.150, 0.005, false, 432e3,
                      2, 1, rtt_20_80, 320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.65, true, 60,
                      20, 40, 0.0, false, false, true, false };
  const Cell plain = { "matrix codel 960k", 960e3, 0.150, 0.005, false, 432e3, 2, 1, rtt_20_80,
                       320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.0, true, 60, 20, 40, 0.0,
                       false, false, false, false };
  unsigned drops[CELL_RUNS_PACKETS];
  double use[CELL_RUNS_PACKETS];
  for (unsigned k = 0; k < CELL_RUNS_PACKETS; k++) {
    CellResult r = run_cell_at (&cell, true, true, 3 * k);
    CellResult o = run_cell_at (&plain, true, true, 3 * k);
    g_test_message ("ticks +%u ms, 6.16+: the lab's receivers: %u drops (the video %u, the UDP "
                    "%u), sojourn p50 %.0f / p95 %.0f ms, downloads' use %.1f %%, the video at "
                    ">= 90 %% of its minimum %u of %u s; without them: %u drops, p95 %.0f ms, "
                    "use %.1f %%", 3 * k, r.drops, r.drops_video, r.drops_cross, r.sojourn_p50_ms,
                    r.sojourn_p95_ms, 100.0 * r.downloads / r.left, r.at_min_lab, r.counted,
                    o.drops, o.sojourn_p95_ms, 100.0 * o.downloads / o.left);
    drops[k] = r.drops;
    use[k] = r.downloads / r.left;
    g_assert_cmpuint (r.counted - r.at_min_lab, <=, 3);
    CellResult e = run_cell_at (&cell, true, false, 3 * k);
    g_test_message ("ticks +%u ms, before 6.16: the lab's receivers: %u drops, sojourn p95 %.0f "
                    "ms, downloads' use %.1f %%, the video at >= 90 %% of its minimum %u of %u s",
                    3 * k, e.drops, e.sojourn_p95_ms, 100.0 * e.downloads / e.left, e.at_min_lab,
                    e.counted);
  }
  qsort (drops, CELL_RUNS_PACKETS, sizeof drops[0], cmp_unsigned);
  qsort (use, CELL_RUNS_PACKETS, sizeof use[0], cmp_double);
  g_assert_cmpuint (drops[CELL_RUNS_PACKETS / 2], >=, DROPS_LAB_RX);
  g_assert_cmpfloat (use[CELL_RUNS_PACKETS / 2], >=, USE_LAB_RX);
}

/* The matrix's fq_codel-cubic-fixed-960k cell, fluid (the model's fq
 * counts payload, its round robin is a fluid one: no packet of another flow
 * ahead of each of the video's, which at 960 kbit/s is 12 ms).  The lab on
 * main (three runs, docs/lab-results.md): the video at 90 % of its minimum
 * in 50-52 of 55 s, 4 of its 12 short seconds at the UDP's onset and 6
 * after σ rose above what the flows moved, the AQM then dropping from the
 * video's own queue.  The model on main: 52-54 of 55 over ten tick phases,
 * short at the onset and, before 6.16, once or twice after a probe; the
 * downloads' use 72-92 % of what the video leaves (before 6.16), 88.9-91.5 %
 * (6.16+).  Asserted: at most 3 short seconds (the model's worst, above the
 * lab's), under 6.16+ a use of at least 88 %. */
static void
test_trace_matrix_fq_960k (void)
{
  const Cell fq_960k = { "matrix fq_codel 960k", 960e3, 0.150, 0.005, true, 432e3, 2, 1,
                         rtt_20_80, 320e3, TRACE_FIXED, false, 0.0, 0.0, true, 60, 20, 40, 0.0,
                         false, false, false, false };
  matrix_cell (&fq_960k, 3, 0.88, 0.0);
}

/* Runs @cell (fq_codel packet by packet, the lab's receivers) under bwss,
 * both receiver RTTs, ticks +0/+3/+6 ms, and prints the lab's figures of
 * each run: the video at >= 90 % of its minimum, fq_codel's drops by flow,
 * the packets' sojourn, the downloads' use of what the video leaves, the
 * video's own queue.  Asserts the video short in at most @short_max
 * seconds of every run and, under 6.16+ (the lab's kernel), the median
 * run's drops at least @drops_min and the downloads' use at least
 * @use_min. */
static void
fq_packets_cell (const Cell *cell, unsigned short_max, unsigned drops_min, double use_min)
{
  for (int latch = 0; latch < 2; latch++) {
    unsigned drops[CELL_RUNS_PACKETS];
    double use[CELL_RUNS_PACKETS];
    for (unsigned k = 0; k < CELL_RUNS_PACKETS; k++) {
      CellResult r = run_cell_at (cell, true, latch, 3 * k);
      g_test_message ("%s, rcv_rtt %s, ticks +%u ms: the video at >= 90 %% of its minimum %u of "
                      "%u s; %u drops (the video %u, the UDP %u), sojourn p50 %.0f / p95 %.0f "
                      "ms; the downloads' use %.1f %%; the video's own queue %.1f ms, its losses "
                      "%u; required prebuffer %.2f s (reached at %.2f s)", cell->name,
                      latch ? "6.16+" : "before 6.16", 3 * k, r.at_min_lab, r.counted, r.drops,
                      r.drops_video, r.drops_cross, r.sojourn_p50_ms, r.sojourn_p95_ms,
                      100.0 * r.downloads / r.left, r.q_video, r.video_losses, r.prebuffer_s,
                      r.prebuffer_at_s);
      g_assert_cmpuint (r.counted - r.at_min_lab, <=, short_max);
      drops[k] = r.drops;
      use[k] = r.downloads / r.left;
    }
    qsort (drops, CELL_RUNS_PACKETS, sizeof drops[0], cmp_unsigned);
    qsort (use, CELL_RUNS_PACKETS, sizeof use[0], cmp_double);
    g_test_message ("%s, rcv_rtt %s: the median run's drops %u, the downloads' use %.1f %%",
                    cell->name, latch ? "6.16+" : "before 6.16", drops[CELL_RUNS_PACKETS / 2],
                    100.0 * use[CELL_RUNS_PACKETS / 2]);
    if (latch) {
      g_assert_cmpuint (drops[CELL_RUNS_PACKETS / 2], >=, drops_min);
      g_assert_cmpfloat (use[CELL_RUNS_PACKETS / 2], >=, use_min);
    }
  }
}

/* The matrix's fq_codel-cubic-fixed-960k cell with fq_codel packet by
 * packet (Model.fq and Model.packets: a queue per flow, round robin over
 * whole frames, CoDel per queue), the lab's receivers and joins (as the
 * CoDel cell above) and a repaired loss holding the in-order bytes an RTT
 * (Cell.holes: the lab's receivers count what reaches the reader).  The
 * fluid cell above shows few of the lab's short seconds (its round robin
 * serves every queue at once: 0.3 a run after a raise, 1.0 at the onset,
 * under 6.16+ over ten phases); this one does, by the lab's own classes
 * (tests/unit/sim-short-decisions.py, the lab's short-decisions.py on the
 * model's decision lines): under 6.16+ over ten tick phases, 2.8 short
 * seconds a run — 1.5 after σ was raised above what the flows moved, 0.9
 * at the UDP's onset, 0.4 neither — where the lab's three runs on main had
 * 4 a run (2, 1.3, 0.7); at the deficits the video's RTT 55-97 ms (its
 * own queue; the lab 55-86).  The video at >= 90 % of its minimum 49-54 of
 * 55 s (the lab 50-52), fq_codel's drops 72-143 a run (the lab 93-94), the
 * packets' sojourn p50 6-12 / p95 48-70 ms (the lab 10-11 / 62-68), the
 * downloads' use of what the video leaves 69.3-76.5 % (the lab 70.0-77.4
 * %).  Not the lab's: the required prebuffer, 0.95-1.73 s against 0.47-0.49,
 * reached at 48-60 s where the lab's is the UDP's onset's (21.6-22.2 s) — the
 * model's video does not catch up what it lost (CUBIC senders in the
 * model do not change that: 1.17-1.48 s at five phases).  Asserted: the
 * video short in at most 6 s of every run (the model's worst; the lab's
 * 5), under 6.16+
 * the median run's drops at least 89 and the downloads' use at least 72 %
 * (the model's worst medians over ten phases; the lab's 93 and 72.4 %). */
static void
test_trace_matrix_fq_960k_packets (void)
{
  const Cell fq_960k = { "matrix fq_codel 960k, packets", 960e3, 0.150, 0.005, true, 432e3, 2, 1,
                         rtt_20_80, 320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.65, true, 60,
                         20, 40, 0.0, true, false, true, false };
  fq_packets_cell (&fq_960k, 6, 89, 0.72);
}

/* The matrix's codel-cubic-fixed-960k cell as the fq_codel 960k cell
 * above, one CoDel queue instead of one a flow (the same code: the lab's
 * receivers and joins, repaired-loss holes), so its runs print and class
 * as the fq cell's (tests/unit/sim-short-decisions.py).  Under 6.16+ over
 * ten tick phases: the video short (below 90 % of its minimum) 2.0 s a
 * run, at most 6 — by the lab's classes 1.1 after σ was raised above what
 * the flows moved, 0.5 at the UDP's onset, 0.4 neither — where the lab's
 * runs on main had 1-4; the downloads' use of what the video leaves
 * 48.5-61.5 %, the median run's 55.0-61.4 % (the lab 58.9-72.9 %, median
 * 64.2); the median run's drops 89-115 (the lab 120-138).  Not the lab's:
 * the required prebuffer, 0.92-1.64 s against 0.32-0.50 (the fq cell's
 * shortfall: the model's video does not catch up what it lost).
 * Asserted, the model's worst over the ten phases where it is below the
 * lab: the video short in at most 6 s of every run, under 6.16+ the median
 * run's drops at least 89 and the downloads' use at least 54.9 %. */
#define SHORT_MAX_CODEL_PACKETS 6
#define DROPS_CODEL_PACKETS     89
#define USE_CODEL_PACKETS       0.549
static void
test_trace_matrix_codel_960k_packets (void)
{
  const Cell codel_960k = { "matrix codel 960k, packets", 960e3, 0.150, 0.005, false, 432e3, 2, 1,
                            rtt_20_80, 320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.65, true, 60,
                            20, 40, 0.0, true, false, true, false };
  fq_packets_cell (&codel_960k, SHORT_MAX_CODEL_PACKETS, DROPS_CODEL_PACKETS, USE_CODEL_PACKETS);
}

/* The fq_codel 8M cell (the lab's streaming cell of issue 28) packet by
 * packet, as the 960k cell above.  The lab on main (two runs,
 * docs/lab-results.md): the video at >= 90 % of its minimum 82 and 80 of
 * 85 s, fq_codel's drops 69 / 117, sojourn p50 3.3-3.7 / p95 20-23 ms, the
 * downloads' use 79.2 / 82.2 %, prebuffer 0.22 / 0.39 s.  The model under
 * 6.16+ over ten tick phases: the video 83-85 of 85, drops 83-122, sojourn
 * p50 4 / p95 14-18 ms, use 84.2-88.3 %, prebuffer 0.27-0.44 s — the same
 * cycle (σ raised past what the flows move, the deficit, fq_codel dropping
 * from the video's own queue: 57-86 of its packets a run) but shallower
 * dips: 0.7 short seconds a run by the lab's classes (0.2 raised, 0.3 at
 * the onset, 0.2 neither) where the lab had 4 (3 raised).  Asserted: the
 * video short in at most 2 s of every run (the model's worst), under 6.16+
 * the median run's drops at least 93 and the downloads' use at least 80 %
 * (the lab's medians: the model reaches more). */
static void
test_trace_fq_codel_packets (void)
{
  Cell cell = { "fq_codel 8M, packets", 8e6, 0.150, 0.005, true, 3e6, 3, 1, rtt_15_40_90, 2e6,
                TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.65, true, 0, 0, 0, 0.0, true, false, true, false };
  fq_packets_cell (&cell, 2, 93, 0.80);
}

/* The matrix's worst cell, droptail12-cubic-wifi-960k: the wifi trace
 * (a new rate every 100-500 ms within ±50 % of 960 kbit/s) into a 12-ms
 * drop-tail buffer, which the lab's stage sizes at the nominal rate and at
 * least two packets (3000 bytes: two full segments waiting, one in
 * service), so the model's FIFO of whole packets with that limit
 * (Model.fifo_limit_bytes).  The loop's queue there is the serialisation
 * of a packet or two (12 ms each at 960 kbit/s, 25 ms at a dip to 480),
 * never its target (30-60 ms): rule "cut" never acts, rule "deficit" does
 * after each of the video's losses, and bounds the raises by loss_raise for
 * loss_memory_us — σ near the minima, the downloads at their floors.  The
 * lab (7b047eb, one run): the downloads used 15 % of what the video leaves,
 * the video at its minimum in 24 of 55 capable seconds with a required
 * prebuffer of 12.52 s (its sender backlogged behind RTO gaps of 0.25-1.9 s).
 * The model reaches the downloads' figure (22-37 % over ten tick phases)
 * but not the video's (46-53 of 55 s, prebuffer 1.5-2.4 s): its senders'
 * losses cost a window's cut and at most one tail-loss stall, never the
 * lab's timeouts in a row.  With the headers on the wire (a 12-ms buffer
 * of whole packets holds less payload) the video is short in at most 5 of
 * the 21 seconds the model counts (trace_capable) over ten tick phases, 4
 * at the default one (3 on a payload-only link), the downloads use 20-35 %.
 * Asserted: the video short in at most 5 s (its worst over ten tick
 * phases), the downloads' use at least the lab's. */
static void
test_trace_matrix_wifi (void)
{
  const Cell wifi_960k = { "matrix droptail12 wifi 960k", 960e3, 0.012, 0.0, false, 432e3, 2, 1,
                           rtt_20_80, 320e3, TRACE_WIFI, true, 2.0 * MODEL_MSS, 0.0, true,
                           60, 20, 40, 3000.0, false, false, false, false };
  matrix_cell (&wifi_960k, 5, 0.15, 0.0);
}

/* The matrix's wifi cell at 20 Mbit/s behind the 150-ms drop-tail buffer,
 * droptail150-cubic-wifi-20M, where the lab's link idles: the trace moves
 * every 100-500 ms within ±50 % of 20 Mbit/s, about as often as the loop
 * decides (180 ms: two RTTs of the 80-ms download).  The lab (7b047eb, one
 * run): the downloads used 44.2 % of what the video leaves (the ideal
 * router 95.2 %), the video at 90 % of its minimum in 52 of 55 capable
 * seconds.  The model reproduces it: over ten tick phases the downloads
 * use 42.0-56.5 % under 6.16+ (39.7-54.5 % before; 36.8-56.5 % before
 * regime "moving" started the probe at the link seen busy), the video
 * 51-52 of the lab's 55 capable seconds; of its 3-4 short seconds all come
 * while the UDP runs and the link less the UDP falls below the video's
 * minimum (in the second's mean or in a dip within it: the breakdown in
 * --verbose).  Where the link goes: σ follows the dips — a
 * dip fills the queue, "cut" (several decisions in a row while the kernel's
 * RTT average still reads the drained queue) takes σ to the dip's rate,
 * the raise climbs back to the link seen busy there plus what the video
 * leaves idle of its target and stops, the next dip cuts again — so σ
 * averages 15.0 Mbit/s outside the UDP on a trace around 20 (phase 0, 6.16+),
 * and the flows move 13.3 of it (the video's target holds its demand
 * headroom, and a download its window no longer holds leaves the raise
 * rule without a hungry flow).  With the headers on the wire the video is
 * short in 1-2 of the 21 seconds the model counts over ten tick phases (1
 * on a payload-only link), the downloads use 36.5-47.1 % (6.16+).
 * Asserted: the video short in at most 2 s, the downloads' use at least
 * the model's worst phase (the lab's 44.2 % is inside its spread). */
static void
test_trace_matrix_wifi_20m (void)
{
  const Cell wifi_20m = { "matrix droptail150 wifi 20M", 20e6, 0.150, 0.0, false, 9e6, 2, 1,
                          rtt_20_80, 20e6 / 3, TRACE_WIFI, false, 0.0, 0.0, true, 60, 20, 40,
                          0.0, false, false, false, false };
  matrix_cell (&wifi_20m, 2, 0.36, 0.0);
}

/* The matrix's fq_codel wifi cell at 20 Mbit/s, fq_codel-cubic-wifi-20M,
 * its worst on the video.  The lab (7b047eb, one run): the video at 90 %
 * of its minimum in 55 % of the 55 capable seconds, a required prebuffer
 * of 4.71 s, the downloads 2176 + 1962 kbit/s (the ideal router 5012 +
 * 2071).  The model: the video 36 / 39 of those 55 s (65 / 71 %), the
 * prebuffer 5.18 / 4.57 s, the downloads' use of what the video leaves
 * 29.1 / 25.5 % (before 6.16 / 6.16+) — the video about the lab's, the
 * downloads below it.  Where the video's seconds go (the breakdown in
 * --verbose): 13 of its 16-19 short seconds come while the UDP runs and
 * the link less the UDP falls below the video's minimum (3 on the
 * second's mean, 10 in a dip within it): fq_codel gives the UDP its share
 * and the video's own queue the rest, so the video's sender sees CoDel's
 * drops whatever the downloads do (the ideal router serves the video
 * first).  The lab's trace has 16 such seconds of its 55 (3 and 13).  The
 * rest are σ above the link after a fall (3-6).  And the link: the flows
 * leave 38-40 % of it, 29-32 points of that below σ — after each of the
 * video's losses rule "deficit" takes σ to the dip's rate, the raise is
 * bounded by loss_raise for loss_memory_us and stops at that dip's link
 * while the link is back.  Over ten tick phases the video 36-40 of the 55
 * capable seconds, the downloads' use 21.8-27.8 % under 6.16+.  Asserted:
 * the video short in at most 6 of the 21 seconds the model counts, the
 * downloads' use at least the model's worst phase (the lab's is higher:
 * the model is short there). */
static void
test_trace_matrix_wifi_fq_20m (void)
{
  const Cell wifi_fq_20m = { "matrix fq_codel wifi 20M", 20e6, 0.150, 0.005, true, 9e6, 2, 1,
                             rtt_20_80, 20e6 / 3, TRACE_WIFI, false, 0.0, 0.0, true, 60, 20, 40,
                             0.0, false, false, false, false };
  matrix_cell (&wifi_fq_20m, 6, 0.21, 0.0);
}

/* Fig. 7 as the lab runs it (960 kbit/s drop-tail 150 ms, the video at its
 * 496-kbit/s minimum, two downloads whose SYNs offer two segments, 320
 * kbit/s of UDP from 30 to 60 s; packet level, a repaired loss holds the
 * in-order bytes an RTT; the headers on the wire), at every tick phase
 * under both receiver RTTs.  Only this host's flows and the UDP share the
 * queue: COMPETE there is a false entry (the UDP is no neighbour to compete
 * with: competing only takes the video's share).  With the headers the
 * link leaves ~94 kbit/s of payload beside the video and the UDP, and
 * after the onset the detector meets σ at the minima, the downloads at
 * their floors and the onset's queue standing at 100-125 ms, the video at
 * about 530 kbit/s catching up what its losses held back (readings that
 * count: the minimum was owed it), and then, its debt repaid, a few per
 * cent above its minimum on a window its own queue lengthens — the queue
 * its own, the readings lack "overrun" (read as foreign, they take 2 of the
 * 20 runs into COMPETE, for 13 s and 4 s, the prebuffer 1.89 and 0.80 s;
 * the lab's runs: docs/lab-results.md).
 * Asserted: no run enters COMPETE, each needs at most ONSET_S of
 * prebuffer (set at the onset), and the first 5 s at most START_LATE_S in
 * every run (the downloads' small SYNs, clamped from their first data,
 * leave the first second the video's). */
static void
test_compete_fig7_udp (void)
{
  const double ONSET_S = 0.55;
  const Cell fig7 = { "Fig. 7 960k drop-tail", 960e3, 0.150, 0.0, false, 496e3, 2, 1, rtt_30,
                      320e3, TRACE_FIXED, true, 2.0 * MODEL_MSS, 0.0, true, 0, 0, 0, 0.0, true,
                      false, false, false };
  unsigned entered = 0;
  for (int latch = 0; latch < 2; latch++)
    for (unsigned k = 0; k < 10; k++) {
      CellResult r = run_cell_at (&fig7, true, latch, k);
      g_test_message ("rcv_rtt %s, ticks +%u ms: COMPETE %u s; required prebuffer %.2f s (set "
                      "at %.1f s), the first 5 s %.2f s; video at >= 90 %% of its minimum %u of %u s",
                      latch ? "6.16+" : "before 6.16", k, r.compete_s, r.prebuffer_s,
                      r.prebuffer_at_s, r.start_late_s, r.at_min_lab, r.counted);
      if (r.compete_s > 0)
        entered++;
      g_assert_cmpfloat (r.prebuffer_s, <=, ONSET_S);
      g_assert_cmpfloat (r.start_late_s, <=, START_LATE_S);
    }
  g_test_message ("runs in COMPETE: %u of 20", entered);
  g_assert_cmpuint (entered, ==, 0);
}

/* Moving links with nobody else on them, against the detector's second
 * reading of "foreign" (a queue beside a small share, capacity-compete.c:
 * the flows we control at most a quarter of the largest link seen busy, the
 * queue standing 40 ms or more): the lab's wifi and lte traces (a video of
 * 2 Mbit/s, three downloads, behind a 60-ms drop-tail buffer and behind
 * fq_codel; Reno and CUBIC senders), and a link that falls to 10, 15 or 20 %
 * of its rate for FALL_TO_S - FALL_FROM_S s with our own queue behind it
 * (60, 150 and 600 ms of drop-tail; a video of 100 or 500 kbit/s, within
 * what the link keeps, or of 2 Mbit/s, beyond it).  Every queue is ours: a
 * second of COMPETE, or of the detector reading "foreign", is a wrong one.
 * The loop drains a queue of its own within a decision or two after a fall
 * (its mean over a second 0-50 ms, its median ~15 ms, at a fifth of 8
 * Mbit/s), so a standing queue of 40 ms is met at single decisions, and the
 * score (an exponential memory of compete_detect_us) never nears
 * compete_enter.  Over ten tick phases and both receiver RTTs
 * (tests/unit/moving-spread.sh): COMPETE in no second of any cell; the
 * detector's last verdict "foreign" for at most 4.3 s of 85 (the 100-kbit/s
 * video on a fall to a tenth behind 150 ms), of it by the second reading
 * alone at most 4.3 s; none on the wifi traces (their rate stays within
 * ±50 % of its mean: a third of its best at least) nor under fq_codel;
 * the video short of 90 % of its minimum in at most 3 of the seconds a
 * link that keeps it counts.  Asserted: no second of COMPETE, the foreign
 * seconds at most the model's largest (rounded up to the next half second). */
typedef struct {
  const char *name;
  int         trace;
  double      fall_to;     /* TRACE_FALL: what the link keeps */
  double      buffer_s;
  double      aqm_s;
  bool        fq;
  double      video_min;
  bool        cubic;
  double      foreign_max; /* the most seconds reading "foreign" (the model's, ten phases) */
} Moving;

static void
test_compete_moving_alone (void)
{
  static const Moving cells[] = {
    { "wifi, 60-ms drop-tail", TRACE_WIFI, 0.0, 0.060, 0.0, false, 2e6, false, 0.0 },
    { "wifi, fq_codel", TRACE_WIFI, 0.0, 0.150, 0.005, true, 2e6, false, 0.0 },
    { "lte, 60-ms drop-tail", TRACE_LTE, 0.0, 0.060, 0.0, false, 2e6, false, 1.0 },
    { "lte, fq_codel", TRACE_LTE, 0.0, 0.150, 0.005, true, 2e6, false, 0.0 },
    { "CUBIC, wifi, 60-ms drop-tail", TRACE_WIFI, 0.0, 0.060, 0.0, false, 2e6, true, 0.0 },
    { "CUBIC, wifi, fq_codel", TRACE_WIFI, 0.0, 0.150, 0.005, true, 2e6, true, 0.0 },
    { "CUBIC, lte, 60-ms drop-tail", TRACE_LTE, 0.0, 0.060, 0.0, false, 2e6, true, 0.5 },
    { "CUBIC, lte, fq_codel", TRACE_LTE, 0.0, 0.150, 0.005, true, 2e6, true, 0.0 },
    { "CUBIC, wifi, 600-ms drop-tail", TRACE_WIFI, 0.0, 0.600, 0.0, false, 2e6, true, 0.0 },
    { "CUBIC, lte, 600-ms drop-tail", TRACE_LTE, 0.0, 0.600, 0.0, false, 2e6, true, 2.0 },
    { "falls to 10 %, 60-ms drop-tail, video 500k", TRACE_FALL, 0.10, 0.060, 0.0, false, 500e3,
      false, 0.5 },
    { "falls to 15 %, 60-ms drop-tail, video 500k", TRACE_FALL, 0.15, 0.060, 0.0, false, 500e3,
      false, 1.0 },
    { "falls to 20 %, 60-ms drop-tail, video 500k", TRACE_FALL, 0.20, 0.060, 0.0, false, 500e3,
      false, 1.0 },
    { "falls to 10 %, 150-ms drop-tail, video 500k", TRACE_FALL, 0.10, 0.150, 0.0, false, 500e3,
      false, 1.5 },
    { "falls to 15 %, 150-ms drop-tail, video 500k", TRACE_FALL, 0.15, 0.150, 0.0, false, 500e3,
      false, 2.5 },
    { "falls to 20 %, 150-ms drop-tail, video 500k", TRACE_FALL, 0.20, 0.150, 0.0, false, 500e3,
      false, 4.0 },
    { "CUBIC, falls to 10 %, 150-ms drop-tail, video 500k", TRACE_FALL, 0.10, 0.150, 0.0, false,
      500e3, true, 1.5 },
    { "falls to 10 %, 150-ms drop-tail, video 100k", TRACE_FALL, 0.10, 0.150, 0.0, false, 100e3,
      false, 4.5 },
    { "falls to 20 %, 150-ms drop-tail, video 100k", TRACE_FALL, 0.20, 0.150, 0.0, false, 100e3,
      false, 1.5 },
    { "falls to 15 %, 150-ms drop-tail, video 2M", TRACE_FALL, 0.15, 0.150, 0.0, false, 2e6, false,
      0.5 },
    { "falls to 10 %, 600-ms drop-tail, video 500k", TRACE_FALL, 0.10, 0.600, 0.0, false, 500e3,
      false, 2.0 },
    { "falls to 20 %, 600-ms drop-tail, video 500k", TRACE_FALL, 0.20, 0.600, 0.0, false, 500e3,
      false, 3.0 },
    { "CUBIC, falls to 20 %, 600-ms drop-tail, video 500k", TRACE_FALL, 0.20, 0.600, 0.0, false,
      500e3, true, 3.0 },
  };
  /* this test counts the seconds in COMPETE itself (sim_free's bound: a
   * tenth of the run) */
  cell_compete_max_s = 90;
  for (size_t i = 0; i < G_N_ELEMENTS (cells); i++) {
    const Moving *m = &cells[i];
    const Cell cell = { m->name, 8e6, m->buffer_s, m->aqm_s, m->fq, m->video_min, 3, 1, rtt_30,
                        0.0, m->trace, false, 0.0, 0.0, false, 0, 0, 0, 0.0, false, false, false,
                        m->cubic };
    trace_fall_to = m->fall_to;
    for (int latch = 0; latch < 2; latch++) {
      CellResult r = run_cell (&cell, true, latch);
      g_test_message ("moving alone: %s, rcv_rtt %s: foreign %.1f s (beside a small share %.1f s), "
                      "COMPETE %u s, video at 90 %% of its minimum %u of %u s", m->name,
                      latch ? "6.16+" : "before 6.16", r.foreign_s, r.beside_s, r.compete_s,
                      r.at_min_lab, r.counted);
      g_assert_cmpuint (r.compete_s, ==, 0);
      g_assert_cmpfloat (r.foreign_s, <=, m->foreign_max);
      g_assert_cmpuint (r.counted - r.at_min_lab, <=, 3);
    }
  }
  cell_compete_max_s = 0;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  bwss_params_init (&p);
  bwss_params_init (&delay);
  g_test_add_func ("/capacity/queue/smallest-excess", test_queue_is_smallest_excess);
  g_test_add_func ("/capacity/trace/groups-8m", test_trace_groups_8m);
  g_test_add_func ("/capacity/queue/target-C2", test_queue_target);
  g_test_add_func ("/capacity/interval", test_interval);
  g_test_add_func ("/capacity/late-decisions", test_late_decisions);
  g_test_add_func ("/capacity/rule/cut", test_rule_cut);
  g_test_add_func ("/capacity/compete/alone-at-minima", test_compete_alone_at_minima);
  g_test_add_func ("/capacity/rule/cut-keeps-minima", test_rule_cut_keeps_minima);
  g_test_add_func ("/capacity/rule/group-one-stream", test_rule_group_one_stream);
  g_test_add_func ("/capacity/rule/raise-loss-hold", test_rule_raise);
  g_test_add_func ("/capacity/rule/probe", test_rule_probe);
  g_test_add_func ("/capacity/rule/probe-in-band", test_rule_probe_in_band);
  g_test_add_func ("/capacity/rule/probed-keeps-minima", test_rule_probed_keeps_minima);
  g_test_add_func ("/capacity/rule/minimum-lifts-sigma", test_minimum_lifts_sigma);
  g_test_add_func ("/capacity/rule/loss-keeps-minima", test_rule_loss_keeps_minima);
  g_test_add_func ("/capacity/rule/cuts-stop-at-minima", test_rule_cuts_stop_at_minima);
  g_test_add_func ("/capacity/rule/idle", test_idle);
  g_test_add_func ("/capacity/start/minima-released", test_start_releases_minima);
  g_test_add_func ("/capacity/start/waits-for-u", test_start_waits_for_u);
  g_test_add_func ("/capacity/rule/raise-from-zero", test_raise_from_zero);
  g_test_add_func ("/capacity/base/seed-is-one-moment", test_seed_is_one_moment);
  g_test_add_func ("/capacity/trace/weights-8M-1-2", test_trace_weights_8m);
  g_test_add_func ("/capacity/trace/weights-960k-1-2-3", test_trace_weights_960k);
  g_test_add_func ("/capacity/trace/pacing-where", test_trace_pacing_where);
  g_test_add_func ("/capacity/trace/rtt-unfairness", test_trace_rtt_unfairness);
  g_test_add_func ("/capacity/trace/capacity-drop", test_trace_capacity_drop);
  g_test_add_func ("/capacity/trace/redistribution", test_trace_redistribution);
  g_test_add_func ("/capacity/trace/streaming", test_trace_streaming);
  g_test_add_func ("/capacity/trace/cross-on-off", test_trace_cross_on_off);
  g_test_add_func ("/capacity/trace/join-behind-queue", test_trace_join_behind_queue);
  g_test_add_func ("/capacity/trace/path-congestion", test_trace_path_congestion);
  g_test_add_func ("/capacity/trace/route-change", test_trace_route_change);
  g_test_add_func ("/capacity/trace/aqm", test_trace_aqm);
  g_test_add_func ("/capacity/trace/uncontrolled-competitor", test_trace_uncontrolled_competitor);
  g_test_add_func ("/capacity/trace/short-buffer", test_trace_short_buffer);
  g_test_add_func ("/capacity/trace/codel", test_trace_codel);
  g_test_add_func ("/capacity/trace/capacity-step", test_trace_capacity_step);
  g_test_add_func ("/capacity/trace/fq-codel", test_trace_fq_codel);
  g_test_add_func ("/capacity/trace/fq-codel-many", test_trace_fq_codel_many);
  g_test_add_func ("/capacity/trace/spread-held", test_trace_spread_held);
  g_test_add_func ("/capacity/trace/spread-step", test_trace_spread_step);
  g_test_add_func ("/capacity/trace/spread-video", test_trace_spread_video);
  g_test_add_func ("/capacity/trace/codel-960k", test_trace_codel_960k);
  g_test_add_func ("/capacity/trace/codel-960k-first-second", test_trace_codel_960k_first_second);
  g_test_add_func ("/capacity/trace/first-second-join", test_trace_first_second_join);
  g_test_add_func ("/capacity/trace/wifi", test_trace_wifi);
  g_test_add_func ("/capacity/trace/lte", test_trace_lte);
  g_test_add_func ("/capacity/trace/matrix", test_trace_matrix);
  g_test_add_func ("/capacity/trace/matrix-fq-960k", test_trace_matrix_fq_960k);
  g_test_add_func ("/capacity/trace/matrix-fq-960k-packets", test_trace_matrix_fq_960k_packets);
  g_test_add_func ("/capacity/trace/fq-codel-packets", test_trace_fq_codel_packets);
  g_test_add_func ("/capacity/trace/matrix-codel-960k-packets", test_trace_matrix_codel_960k_packets);
  g_test_add_func ("/capacity/trace/matrix-codel-lab", test_trace_matrix_codel_lab);
  g_test_add_func ("/capacity/trace/matrix-wifi", test_trace_matrix_wifi);
  g_test_add_func ("/capacity/trace/matrix-wifi-20M", test_trace_matrix_wifi_20m);
  g_test_add_func ("/capacity/trace/matrix-wifi-fq-20M", test_trace_matrix_wifi_fq_20m);
  g_test_add_func ("/capacity/compete/fig7-udp", test_compete_fig7_udp);
  g_test_add_func ("/capacity/compete/decision-lines", test_compete_decision_lines);
  g_test_add_func ("/capacity/compete/moving-alone", test_compete_moving_alone);
  return g_test_run ();
}

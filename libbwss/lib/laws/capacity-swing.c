/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-swing.c — the delay loop on a link that swings faster than it
 * decides: SWING, a sub-state of TRACK with its entry and exit; TRACK's
 * rules are capacity.c's and capacity-full.c's, the model
 * capacity-model.c's.
 *
 * The model.  C1 reads the queue as σ against the link now.  A radio link
 * (Wi-Fi's rate adaptation, a contended medium) moves between levels every
 * few hundred milliseconds, about as often as the loop decides (two RTTs of
 * the slowest flow, 180 ms beside an 80-ms download), and the kernel's RTT
 * average shows a queue a decision late.  TRACK then follows the dips and
 * misses the rises: a dip fills the queue and "cut" brings σ to the dip's
 * rate; the raise climbs back a step a decision, stops at the link it saw
 * busy (the dip's rate, again), and the next dip cuts before it got there.
 * σ sits near the dips and the link idles through every rise (the lab's
 * 20-Mbit/s Wi-Fi trace: σ swung between 10 and 23 Mbit/s around a 20-Mbit/s
 * mean, the downloads used 44 % of what the video left, the ideal router's
 * 95 %).
 *
 * What a receiver can do on such a link is hold σ where the queue is at its
 * target on average over the swings: at a dip to C the queue grows towards
 * (σ/C − 1)·(b̄ + q_t) + q_t (C1), at a rise it drains into the link and
 * the windows fill it.  So SWING runs C1 on the queue's mean over the link
 * window (link_window_us, an exponential memory over the decisions), not on
 * the queue now: it raises σ by at most α a decision while the mean is under
 * the target and its band, and cuts by the drain's step while it is above.
 * The minima come first as in TRACK: "deficit" (a video below its minimum
 * with the link busy) and "loss" (drops, not windows, hold the flows) act
 * before the mean's rule.
 *
 *     TRACK ──(swing_falls falls within swing_memory_us)──► SWING
 *     SWING ──(no fall for long: the score under 1; a queue standing over
 *              its target longer than swing_level_us; COMPETE)──► TRACK
 *
 * Entry.  A fall is a decision that finds the queue over its target and
 * band, where the one before found it empty, while no probe of ours runs:
 * the link fell under the flows within a decision (a probe's overshoot is
 * its own rule's; cross traffic that arrives falls once and then stands).  The falls are scored with an
 * exponential memory of swing_memory_us; at swing_falls the loop swings.
 *
 * Exit.  The score decays under one (no fall for about swing_memory_us: the
 * link holds its rate, and TRACK follows it exactly); or the queue stands
 * over its target and band longer than a level of the swings lasts
 * (swing_level_us: cross traffic came, or the link fell for good — TRACK's
 * cut takes it at this decision); or COMPETE (capacity_forget_track).
 */
#include <math.h>
#include "capacity.h"

/* Returns the σ SWING's cut asks for, bit/s: the drain's step (C1, H RTTs)
 * on the mean queue's excess, from σ or from what the flows use if that is
 * lower (σ the flows do not take is no evidence against the link), at most
 * max_cut, never below the minima. */
static double
swing_cut_sigma (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  double cut = (c->swing_queue_us - k->qt) / (p->drain_horizon_rtts * k->rtt_ref);   /* C1 */
  if (cut > p->max_cut)
    cut = p->max_cut;
  double from = k->u_link + k->idle;
  if (from > c->sigma_bps)
    from = c->sigma_bps;
  double s = from * (1.0 - cut);
  return s > k->minima ? s : k->minima;
}

/* Returns the σ SWING's raise asks for, bit/s: C1's step on the mean
 * queue, at most α a decision (the mean lags the swings by the link window:
 * a faster ramp overshoots by the time it shows), and never more than
 * max_raise above what the flows use and what those something else holds
 * leave unused (as TRACK's raise). */
static double
swing_raise_sigma (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  double step = p->raise_gain * (k->qt - c->swing_queue_us) / k->rtt_ref;   /* C1 */
  if (step > p->alpha)
    step = p->alpha;
  double from = c->sigma_bps > 0.0 ? c->sigma_bps : k->u_kept;
  double s = from * (1.0 + step);
  double most = (k->u_kept + k->unused) * (1.0 + p->max_raise);
  if (s > most)
    s = most > c->sigma_bps ? most : c->sigma_bps;
  return s;
}

int
capacity_swing_decide (BwssCapacity *c, const BwssParams *p, uint64_t now,
                       const CapacityCounts *k)
{
  if (capacity_rule_deficit (c, k))
    return capacity_act_deficit (c, now, k);
  if (capacity_rule_loss (c, p))
    return capacity_act_loss (c, p, now, k);
  if (c->swing_queue_us > k->qt + k->band) {
    double s = swing_cut_sigma (c, p, k);
    if (s < c->sigma_bps) {
      capacity_set_sigma (c, s);
      return RULE_SWING_CUT;
    }
    return RULE_HOLD;
  }
  if (c->swing_queue_us < k->qt - k->band && (k->hungry > 0 || k->held > 0)) {
    capacity_set_sigma (c, swing_raise_sigma (c, p, k));
    return RULE_SWING_RAISE;
  }
  return RULE_HOLD;
}

/* Returns true if this decision is a fall: the queue over its target and
 * band where the last decision found it under its target, and U lower than
 * then by more than α (a probe's overshoot leaves U where it was). */
static bool
fall (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  uint32_t last = (c->u_hist_head + BWSS_CAPACITY_U_HISTORY - 1) % BWSS_CAPACITY_U_HISTORY;
  return over_target (k) && c->prev_queue_us >= 0.0 && c->prev_queue_us < k->qt
      && c->u_hist_us[last] > 0 && k->u < (1.0 - p->alpha) * c->u_hist[last];
}

void
capacity_swing_watch (BwssCapacity *c, const BwssParams *p, uint64_t now,
                      const CapacityCounts *k, double interval_us)
{
  /* the queue's mean over the link window: each decision weighs by its
   * interval (an unknown queue keeps the mean) */
  if (k->q >= 0.0 && c->swing_queue_us < 0.0)
    c->swing_queue_us = k->q;
  else if (k->q >= 0.0) {
    double w = p->link_window_us > 0 ? interval_us / (double) p->link_window_us : 1.0;
    c->swing_queue_us += (w < 1.0 ? w : 1.0) * (k->q - c->swing_queue_us);
  }
  c->swing_score *= exp (-interval_us / (double) p->swing_memory_us);
  if (fall (c, p, k))
    c->swing_score += 1.0;
  /* how long the queue has stood over its target and band */
  if (!over_target (k))
    c->swing_over_since_us = 0;
  else if (!c->swing_over_since_us)
    c->swing_over_since_us = now;

  if (!c->swing_since_us) {
    if (c->swing_score >= p->swing_falls) {
      /* TRACK's probe and drain end here: SWING's mean rules σ */
      c->swing_since_us = now;
      c->probe_from_bps = 0.0;
      c->drain_until_us = 0;
    }
    return;
  }
  bool standing = c->swing_over_since_us && now - c->swing_over_since_us > p->swing_level_us;
  if (c->swing_score < 0.5 || standing)
    c->swing_since_us = 0;
}

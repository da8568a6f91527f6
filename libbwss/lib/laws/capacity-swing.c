/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-swing.c — the delay loop on a link that swings faster than it
 * decides: SWING, a sub-state of TRACK with its entry and exit, which holds
 * a longer queue; TRACK's rules are capacity.c's and capacity-full.c's, the
 * model capacity-model.c's.
 *
 * The model.  C1 reads the queue as σ against the link now.  A radio link
 * (Wi-Fi's rate adaptation, a contended medium) moves between levels every
 * few hundred milliseconds, about as often as the loop decides (two RTTs of
 * the slowest flow, 180 ms beside an 80-ms download), and the kernel's RTT
 * average shows a queue a decision late.  TRACK then follows the dips and
 * misses the rises: a dip fills the queue and "cut" brings σ to the dip's
 * rate, the raise climbs back to the link it saw busy there and stops, and
 * the next dip cuts before a probe found the rest.  What a link that rises
 * without warning needs is data waiting at it when it does: a queue.  A
 * queue of q_t holds q_t·C of data; at a rise from C to 1.5·C it feeds the
 * link for 2·q_t while the windows, which the raise widens a decision later,
 * catch up.  So SWING keeps TRACK's rules and raises their target to
 * swing_target_us (C2's if longer): the dips fill it, the rises drain it,
 * and its median stays below it (the model's 20-Mbit/s Wi-Fi cell: the
 * downloads' use of what the video leaves from 39-57 % to 60-71 % with a
 * 25-ms target).
 *
 *     TRACK ──(swing_falls falls within swing_memory_us)──► SWING
 *     SWING ──(no fall for about swing_memory_us; a queue standing over its
 *              target longer than swing_level_us; COMPETE)──► TRACK
 *
 * Entry.  A fall is a decision that finds the queue over TRACK's target and
 * band, where the one before found it under that target, with U lower than
 * then by more than α: the link fell under the flows within a decision (a
 * probe's overshoot leaves U where it was; cross traffic that arrives falls
 * once and then stands).  The falls are scored with an exponential memory of
 * swing_memory_us; at swing_falls the loop swings.  In SWING the falls are
 * still counted against TRACK's target (the dips go on filling it).
 *
 * Exit.  The score decays under half a fall (the link holds its rate, and
 * TRACK's target is enough); or the queue stands over SWING's target and
 * band longer than a level of the swings lasts (swing_level_us: cross
 * traffic came, or the link fell for good — TRACK's target answers it from
 * the next decision); or COMPETE (capacity_forget_track).
 */
#include <math.h>
#include "capacity.h"

/* The score under which SWING ends: no fall for about
 * swing_memory_us·ln(2·swing_falls). */
#define SWING_EXIT_SCORE 0.5

void
capacity_swing_target (const BwssCapacity *c, const BwssParams *p, CapacityCounts *k,
                       double mean_base_us, double mss)
{
  if (!c->swing_since_us || k->qt >= (double) p->swing_target_us)
    return;
  k->qt = (double) p->swing_target_us;
  /* the band as capacity-model.c sets it, for this target */
  k->band = p->queue_band * k->qt;
  if (k->link > 0.0 && 8.0 * mss / k->link * 1e6 > k->band)
    k->band = 8.0 * mss / k->link * 1e6;
  k->rtt_ref = mean_base_us + k->qt;
}

/* Returns true if this decision is a fall: the queue over TRACK's target
 * and band where the last decision found it under that target, and U lower
 * than then by more than α. */
static bool
fall (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  uint32_t last = (c->u_hist_head + BWSS_CAPACITY_U_HISTORY - 1) % BWSS_CAPACITY_U_HISTORY;
  return k->q >= 0.0 && k->q > k->qt_track + k->band_track && c->prev_queue_us >= 0.0
      && c->prev_queue_us < k->qt_track && c->u_hist_us[last] > 0
      && k->u < (1.0 - p->alpha) * c->u_hist[last];
}

void
capacity_swing_watch (BwssCapacity *c, const BwssParams *p, uint64_t now,
                      const CapacityCounts *k, double interval_us)
{
  c->swing_score *= exp (-interval_us / (double) p->swing_memory_us);
  if (fall (c, p, k))
    c->swing_score += 1.0;
  /* how long the queue has stood over its target and band */
  if (!over_target (k))
    c->swing_over_since_us = 0;
  else if (!c->swing_over_since_us)
    c->swing_over_since_us = now;

  if (!c->swing_since_us) {
    if (c->swing_score >= p->swing_falls)
      c->swing_since_us = now;
    return;
  }
  bool standing = c->swing_over_since_us && now - c->swing_over_since_us > p->swing_level_us;
  if (c->swing_score < SWING_EXIT_SCORE || standing)
    c->swing_since_us = 0;
}

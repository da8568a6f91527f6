/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-full.c — the delay loop's rules that tell a full link without a
 * standing queue; the model is capacity-model.c's, the other rules and the
 * decision capacity.c's (its table lists these two in their place).
 *
 * Where the bottleneck has an AQM (CoDel, fq_codel, cake) or a short buffer
 * (12 ms) the queue never reaches the target, so "cut" never acts.  Two
 * rules tell that the link is full without a standing queue.  "deficit":
 * a flow with a minimum gets less than it while a queue shows at all and σ
 * is above what the link delivers (U) — the flows without a minimum reach
 * their targets through the buffer's or the AQM's drops, which the video
 * shares; σ lowered by D, what the minima miss, takes exactly that from
 * them (eq. 6), decision after decision while the video stays short, and
 * never below U over the link window (a momentary dip of U is not the
 * link); that U is the link seen busy (the raise stops there; on a link
 * whose rate falls this is the verdict that follows it down, from the first
 * decision after the video falls short).
 *
 * The video's own evidence.  Under fq_codel each flow has a
 * queue of its own: a video held below its fair share keeps CoDel's 5 ms in
 * its own queue while the downloads' — whose windows and paced reads hold
 * them under their share — stay empty, so the link's queue (the smallest
 * excess) reads an idle link and the shared-queue gate never opens.  The
 * video's RTT excess above the link's queue says it: its sender has data
 * waiting at the bottleneck, so neither its source nor its window (it is
 * not window-limited) holds it — the network does.  A flow below its
 * minimum with a queue of its own (capacity-model.c: own_queue, by
 * own_queue_us = 2 ms, below CoDel's 5-ms target, and the band, over the
 * link's largest queue of the last own_queue_memory_us, which the RTT
 * average of a slow flow still reads) counts in D and fires the rule
 * without a shared queue, for as long as it lasts: under FQ, σ must leave
 * the video its minimum and the unresponsive traffic its share — σ above
 * the link is no slack there, every bit a download takes beyond it comes out
 * of the video's queue.  Without that evidence a minimum unmet for
 * reserve_hold_us is its source's doing, not the link's (Fig. 5c's video
 * that falls to 160k has no queue of its own): the rule no longer counts
 * it, and the raise takes the room back; until then its losses (segments
 * received after a hole, tcpi_rcv_ooopack) say the link is busy, as a
 * queue would.  Under FIFO every flow sees one queue: no flow has its
 * own, and the rule is the one it was.  On its own evidence the rule also
 * learns the link (the video's data waiting keeps a work-conserving
 * scheduler busy: this decision's U is the link now) and leaves the raises
 * unbounded (its queue shows the next overshoot at once; without it a
 * raise goes blind into losses the video shares, and loss_raise bounds it
 * for loss_memory_us).
 *
 * "loss" brings σ back to U once the drops,
 * not the windows, hold the flows (a flow that moves less than a window per
 * RTT) — the paper's throughput rule, so the windows bind again.  A flow
 * its window holds below its target with the queue short is its FCS's
 * business (eq. 4), not the link's.
 */
#include "capacity.h"

/* Rule "deficit": a flow with a minimum gets less than it with a queue of
 * its own (the network holds it: fq_codel), or for less than
 * reserve_hold_us (longer, its source is what sends less) while the link
 * is busy (link_busy, capacity.h) or it has losses; and σ lets the others
 * take more than the link leaves: U is what the link delivers to us, and
 * σ above it means targets the flows without a minimum reach only through
 * losses — which the flow with a minimum shares (a 12-ms drop-tail buffer
 * or CoDel drop from every flow). */
bool
capacity_rule_deficit (const BwssCapacity *c, const CapacityCounts *k)
{
  bool busy = link_busy (c, k) || k->short_lost > 0;
  bool evidence = k->deficit_own > 0.0 || (k->deficit > 0.0 && k->q >= 0.0 && busy);
  return evidence && c->sigma_bps > k->u && k->u > k->minima;
}

/* Returns true if this decision finds σ above what the link gives: the link
 * busy (link_busy, capacity.h), U below σ, and the flows
 * that something else than their window holds below their target carry at
 * least half of U — losses hold them: the link (the paper's "half of the
 * flows", weighed by rate; a flow its window holds at its target meanwhile
 * is the minority the windows still bind).  One such flow among others is
 * its own path's (Fig. 5c) or its source's business: its unused share is
 * room for the others.  An empty queue says the link has room: then a flow
 * short of its target is its FCS's business (eq. 4), or its source's. */
static bool
above_link (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return k->q >= 0.0 && !over_target (k) && link_busy (c, k)
      && k->u < (1.0 - p->alpha) * c->sigma_bps && 2.0 * k->u_lost >= k->u;
}

/* ... for loss_decisions in a row (windows that are still growing towards
 * new targets look the same for a decision or two). */
bool
capacity_rule_loss (const BwssCapacity *c, const BwssParams *p)
{
  return c->loss_votes >= p->loss_decisions;
}

/* Rule "deficit": σ lowered by what the minima miss, not above U over the
 * link window; the link seen busy is that U — or U now, if higher, when
 * the video's own queue says so: a flow with data waiting at the
 * bottleneck keeps a work-conserving scheduler busy, so this decision's U
 * is the link now (the window's mean still holds the seconds before a
 * raise: the ramp then stopped short of the link, and the probe beyond it
 * took the video's share; fq_codel 8M in the model: 83 → 84 of 85 s);
 * raises bounded as after a loss, unless its own queue said so. */
int
capacity_act_deficit (BwssCapacity *c, uint64_t now, const CapacityCounts *k)
{
  c->probe_from_bps = 0.0;
  double s = c->sigma_bps - k->deficit;
  if (s > k->u_link)
    s = k->u_link;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  double busy = k->u_link;
  if (k->deficit_own > 0.0 && k->u > busy)
    busy = k->u;
  capacity_note_busy (c, now, busy);
  /* the video's own queue shows the next overshoot at the next decision:
   * no bound on the raises then (fq_codel 8M, downloads 91 → 95 % of what
   * the video leaves); without it a raise goes blind into losses the video
   * shares */
  if (k->deficit_own <= 0.0)
    c->last_loss_us = now;
  c->loss_votes = 0;
  return RULE_DEFICIT;
}

/* Rule "loss": σ just below what the flows move, their minima kept, so the
 * windows bind again; raises bounded for a while (raise_by). */
int
capacity_act_loss (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  c->probe_from_bps = 0.0;
  double s = (1.0 - p->alpha) * k->u_kept;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  c->last_loss_us = now;
  c->loss_votes = 0;
  return RULE_LOSS;
}

/* Counts this decision's vote for rule "loss"; a queue at its target says
 * no AQM holds it below, and ends the bound on raises after a "loss". */
void
capacity_vote_loss (BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  c->loss_votes = above_link (c, p, k) ? c->loss_votes + 1 : 0;
  if (k->q >= k->qt)
    c->last_loss_us = 0;
}

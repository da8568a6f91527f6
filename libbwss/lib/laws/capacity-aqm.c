/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-aqm.c — the delay loop beside elastic traffic it does not control
 * on one queue that an AQM (CoDel) keeps short: COMPETE's form for a queue
 * that never stands, with its own entry (a detector that runs in TRACK) and
 * exit; COMPETE beside a standing queue is capacity-compete.c's, the rules
 * of TRACK capacity.c's and capacity-full.c's.
 *
 * The model.  CoDel drops at the head of one queue while its sojourn stays
 * above its target (5 ms) for an interval (100 ms), at interval/√count while
 * it stays there.  A neighbour's plain-TCP download grows its congestion
 * window until CoDel drops it, so CoDel drops all the time it is there —
 * whoever's packet is at the head: the neighbour's, our downloads', the
 * video's.  The queue stays under CoDel's target, under our q_t, so the
 * detector of a standing queue (capacity-compete.c) never scores, and
 * TRACK reads each drop as σ above the link ("loss", "deficit",
 * capacity-full.c): σ just below U, raises held to loss_raise for
 * loss_memory_us — which the next drop renews.  Our downloads then yield a
 * little at every drop the neighbour causes, and the neighbour takes what
 * they give: beside one neighbour flow this host had 58-60 % of plain TCP's
 * total in the lab, beside three 44-47 %.
 *
 * What tells the neighbour (Nimbus's question, asked with our own yields):
 * losses of ours that go on while nothing of ours could cause them — no
 * queue above the target (a queue of ours is the cut's business), every
 * minimum met (a video short of it is the link's limit, or its own), no flow
 * of ours above its allotment (a released fragment fills the queue itself),
 * U short of the largest link seen busy (alone, the loop's own probes
 * beyond the link cost a drop now and then, with U at the link), and a
 * link fast enough that two segments fit in q_min.  Alone, the loop holds the sojourn under
 * CoDel's target and nothing of ours is dropped (the model: not one segment
 * in 85 s at 8 Mbit/s); inelastic traffic (UDP, a call) above what the link
 * leaves is answered by TRACK's cut, after which it fits and the drops stop;
 * an elastic neighbour drops on, whatever we yield.  On a slow link the gate
 * is the segment: at 960 kbit/s one takes 12 ms to send, more than CoDel's
 * target, so CoDel drops the video's own segments with nobody beside it
 * (the model read CoDel 960k's UDP as a neighbour from such drops, and the
 * video was short 8-9 s of 85).  The score is our losing decisions per
 * second over the last aqm_memory (an exponential memory); at
 * AQM_ENTER_RATE the loop enters COMPETE in this form.  The question costs
 * the video nothing: TRACK's σ is where it was.
 *
 * The state.  Free windows cost the video beside CoDel (the lab's plain TCP:
 * the video at its minimum 58 % of the seconds; the model's COMPETE with
 * free downloads 55-64 %): they raise CoDel's drop rate for every flow, and
 * the video, whose window its drops cut, falls short after each.  So the
 * downloads' windows stay held (a flow its window holds does not push the
 * drop rate: CoDel's drops of it cut a congestion window above the one that
 * binds) and σ grows while every minimum is met, as much as the downloads
 * take of it: drops are not a verdict on σ here — the neighbour makes them.
 * What tells σ where to stop is the video: a minimum missed for two
 * decisions in a row makes the downloads yield compete_yield·D (the FIFO
 * shares what they give up with the neighbour), at most max_cut of what
 * they move; a loss of a flow with a minimum holds σ for AQM_VIDEO_HOLD
 * decisions (its window was just cut: the downloads growing then is what
 * would leave it short).  A minimum missed by a fifth or more most of the
 * last reserve_hold_us whatever they yielded says competing costs the
 * video: back to TRACK, and no entry for compete_probe_us, doubling up to
 * four times that.
 *
 * Exit.  The neighbour gone shows as drops that stop: no loss of ours for
 * AQM_QUIET_US while σ grows (alone, CoDel drops nothing until the link is
 * full, and the downloads' growth stops at their targets: see below), or U
 * back at the link this host had alone (compete's has_link); and at least
 * every compete_probe_us the loop goes back to TRACK and asks again (a
 * neighbour there from the start leaves no link alone to compare with).
 * TRACK then starts from σ = what the flows move.
 */
#include "capacity.h"
#ifdef CAPACITY_DEBUG
#include <stdio.h>
#endif

/* Our losing decisions per second that enter: one neighbour's CUBIC flow
 * keeps CoDel dropping 1-2 packets a second at 8 Mbit/s (the lab's stage:
 * 1.8 a second on average), ours taking their part of them. */
#define AQM_ENTER 0.75
#define AQM_LOSS_SPAN_US 1500000

/* ... over this memory, s (an exponential memory: a loss weighs its
 * decision's interval over it).  Long enough that the drops of an onset
 * of UDP, which TRACK's cut answers within a second or two, stay under
 * the rate. */
#define AQM_MEMORY_US 4000000.0

/* Growth of σ a decision while every minimum is met, of what the flows
 * move: about what a CUBIC download regrows per RTT near its last
 * window, a hundred times slower than Reno's segment per RTT at 30 ms —
 * that rate undid each yield within a decision in the model, and the
 * video was short after every drop. */
#define AQM_GROW 0.05

/* A flow with a minimum lost a segment: σ holds for this many decisions. */
#define AQM_VIDEO_HOLD 4

/* No loss of ours for this long while σ grows: the drops stopped, the
 * neighbour left. */
#define AQM_QUIET_US 3000000

/* A minimum missed by more than this fraction of the minima ... */
#define AQM_DEEP 0.2

/* ... half of the last reserve_hold_us: competing costs the video. */
#define AQM_FAIL_SCORE 0.5

/* After a fail, no entry for compete_probe_us, doubling up to this many times it. */
#define AQM_HOLD_MAX 4

/* ---- the detector (TRACK) ---- */

/* Returns true if the link is fast against the queue target: C2's packets
 * at the largest link seen (busy, or now) fit in q_min, so the target is
 * not a slow link's — where a segment takes longer to send than an AQM's
 * target, the AQM drops our own segments and the floors fill the link with
 * nobody beside us (CoDel 960k: 12 ms a segment; the model read its UDP, and
 * its floors, as a neighbour, and the video was short 8-9 s of 85). */
static bool
fast_link (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  double link = k->link > c->link_max_bps ? k->link : c->link_max_bps;
  return link > 0.0
      && p->queue_target_packets * 8.0 * p->default_mss / link * 1e6 <= (double) p->queue_target_min_us;
}

/* Returns true if nothing of ours would make a queue that an AQM drops:
 * none stands above the target, every minimum met, no flow above its
 * allotment.  Whether σ binds the downloads is no part of it: beside a
 * neighbour CoDel's drops hold their congestion windows under what σ gives
 * them (the lab: σ 3.5-4.2 Mbit/s, the downloads 0.7 each, their paced
 * reads not binding), and TRACK then never has them held. */
static bool
nothing_of_ours (const CapacityCounts *k)
{
  return k->q >= 0.0 && !over_target (k) && k->minima > 0.0 && k->short_min == 0
      && k->overrun == 0 && k->bulk > 0;
}

/* Returns true if this host moves about all of the largest link it saw
 * busy: nobody else's traffic is on it. */
static bool
moves_link (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return c->link_max_bps > 0.0 && k->u_link >= (1.0 - p->compete_probe_rise) * c->link_max_bps;
}

bool
capacity_aqm_watch (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
                    double interval_us)
{
  if (c->phase != BWSS_PHASE_TRACK || interval_us <= 0.0)
    return false;
  if (k->lost > 0)
    c->aqm_last_loss_us = now;
  bool lossy = c->aqm_last_loss_us && now - c->aqm_last_loss_us <= AQM_LOSS_SPAN_US;
  double x = -1.0;
  if (nothing_of_ours (k) && link_busy (c, k) && fast_link (c, p, k) && !moves_link (c, p, k)
      && (lossy || k->bulk_floored == k->bulk))
    x = 1.0;
  else if (over_target (k) || (queue_empty (k) && !lossy))
    x = 0.0;
  if (x >= 0.0) {
    double w = interval_us / AQM_MEMORY_US;
    c->aqm_loss_rate += (w < 1.0 ? w : 1.0) * (x - c->aqm_loss_rate);
  }
#ifdef CAPACITY_DEBUG
  fprintf (stderr, "%8.3f aqm-watch ours %d busy %d lossy %d floored %zu/%zu short %zu held %zu over %zu x %.0f score %.2f link_max %.0f\n",
           now / 1e6, nothing_of_ours (k), link_busy (c, k), lossy, k->bulk_floored, k->bulk,
           k->short_min, k->held, k->overrun, x, c->aqm_loss_rate, c->link_max_bps / 1e3);
#endif
  if (c->aqm_loss_rate < AQM_ENTER || now < c->aqm_hold_until_us)
    return false;
  c->phase = BWSS_PHASE_COMPETE;
  c->phase_since_us = now;
  c->compete_aqm = true;
  c->compete_free = false;
  c->aqm_exit_at_us = now + p->compete_probe_us;
  c->aqm_last_loss_us = now;
  c->aqm_short_score = 0.0;
  c->aqm_yield_votes = 0;
  c->aqm_video_hold = 0;
  capacity_forget_track (c);
  if (c->sigma_bps < k->u_kept)
    capacity_set_sigma (c, k->u_kept);
  return true;
}

/* ---- COMPETE beside an AQM ---- */

/* Back to TRACK, from what the flows move. */
static int
leave (BwssCapacity *c, uint64_t now, const CapacityCounts *k)
{
  c->phase = BWSS_PHASE_TRACK;
  c->phase_since_us = now;
  c->compete_aqm = false;
  c->aqm_loss_rate = 0.0;
  c->foreign_score = 0.0;
  capacity_forget_track (c);
  capacity_set_sigma (c, k->u_kept > k->minima ? k->u_kept : k->minima);
  return RULE_EXIT;
}

/* Back to TRACK because competing cost the video; no entry for a while. */
static int
fail (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  uint64_t hold = c->aqm_hold_us ? 2 * c->aqm_hold_us : p->compete_probe_us;
  if (hold > AQM_HOLD_MAX * p->compete_probe_us)
    hold = AQM_HOLD_MAX * p->compete_probe_us;
  leave (c, now, k);
  c->aqm_hold_us = hold;
  c->aqm_hold_until_us = now + hold;
  return RULE_EXIT;
}

int
capacity_aqm_decide (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
                     double interval_us)
{
  double deep = k->short_min > 0 && k->shortfall > AQM_DEEP * k->minima ? 1.0 : 0.0;
  double w = interval_us / (double) (p->reserve_hold_us ? p->reserve_hold_us : 1);
  c->aqm_short_score += (w < 1.0 ? w : 1.0) * (deep - c->aqm_short_score);
  if (c->aqm_short_score >= AQM_FAIL_SCORE)
    return fail (c, p, now, k);
  if (k->lost > 0)
    c->aqm_last_loss_us = now;
  if (now >= c->aqm_exit_at_us || now - c->aqm_last_loss_us >= AQM_QUIET_US)
    return leave (c, now, k);
  /* the video first: a minimum missed two decisions in a row */
  c->aqm_yield_votes = k->deficit > 0.0 ? c->aqm_yield_votes + 1 : 0;
  if (c->aqm_yield_votes >= 2) {
    double s = k->u_kept - p->compete_yield * k->deficit;
    double least = k->minima + (1.0 - p->max_cut) * (k->u_kept - k->minima);
    if (s < least)
      s = least;
    if (s > c->sigma_bps)
      s = c->sigma_bps;
    capacity_set_sigma (c, s > k->minima ? s : k->minima);
    c->aqm_yield_votes = 0;
    return RULE_YIELD;
  }
  if (k->short_lost > 0 || (k->short_min == 0 && k->lost > 0 && k->minima_lost > 0))
    c->aqm_video_hold = AQM_VIDEO_HOLD;
  if (c->aqm_video_hold > 0 || k->short_min > 0) {
    if (c->aqm_video_hold > 0)
      c->aqm_video_hold--;
    return RULE_HOLD;
  }
  /* grow while every minimum is met, from σ (a burst of U — the video
   * catching up — is no level to start from), never more than max_raise
   * above what the flows move */
  double s = c->sigma_bps + AQM_GROW * k->u_kept;
  double most = (1.0 + p->max_raise) * k->u_kept;
  if (s > most)
    s = most > c->sigma_bps ? most : c->sigma_bps;
  capacity_set_sigma (c, s);
  return RULE_COMPETE;
}

void
capacity_aqm_init (BwssCapacity *c)
{
  c->compete_aqm = false;
  c->aqm_loss_rate = 0.0;
  c->aqm_exit_at_us = 0;
  c->aqm_last_loss_us = 0;
  c->aqm_short_score = 0.0;
  c->aqm_yield_votes = 0;
  c->aqm_video_hold = 0;
  c->aqm_hold_us = 0;
  c->aqm_hold_until_us = 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-compete.c — the delay loop beside traffic it does not control: a
 * state of the loop, COMPETE, with its entry (a detector that runs in
 * TRACK) and its exit (a drain that asks whether the queue is ours again);
 * the rules of TRACK are capacity.c's and capacity-full.c's, the model
 * capacity-model.c's.
 *
 * The model.  C1 holds while every flow on the link's queue is ours: the
 * queue measures σ against the link, and σ below the link drains it.  A
 * second host's plain-TCP downloads (a phone, a TV) or a QUIC download of
 * this host share the queue and are elastic: they grow their congestion
 * windows until the buffer drops (drop-tail) or the AQM does (CoDel).
 * Then the queue measures their windows, not σ: every cut of ours is room
 * they take, the queue stands, and the loop cuts again, down to the
 * floors — our downloads at a few kbit/s while theirs take the link
 * (LEDBAT's scavenger behaviour, which nobody asked for).  No receiver can
 * hold such a queue short; it can only stop yielding to it.
 *
 *     states:  TRACK ──(detector)──► COMPETE ──(drain finds the queue ours)──► TRACK
 *
 * Entry (Copa's test: does the queue nearly empty when we hold back?).
 * At every decision in TRACK the detector scores what it sees:
 *   - foreign: σ holds every download at its floor, every minimum is met
 *     (a link that cannot carry them holds a queue of the video's own: a
 *     fade), no flow its window does not hold moves well above its
 *     target, minimum and floor (a player's fragment, released, fills the
 *     queue itself), U is short of
 *     the link this host had to itself when the queue was its own (if it
 *     knows it: a video whose window covers a queue it made moves all of
 *     the link), and the queue still stands above its target and band;
 *   - ours: the queue at or under its target without losses, or empty, or
 *     a flow of ours above its allotment, or no queue to measure;
 *   - neither: the loop is still cutting, or losses (an AQM's business).
 * The score is the share of the last compete_detect_us (an exponential
 * memory, each decision one observation of at most two short intervals)
 * that was foreign; at compete_enter the loop enters COMPETE.  A queue of
 * our own above target is cut within a second (max_cut a decision), so it
 * does not score long enough; inelastic cross traffic (a call, a CBR
 * stream) below the link leaves room once the downloads yield, the queue
 * falls to its target and scores "ours"; under fq_codel every flow has its
 * own queue and the neighbour's never shows in ours.  The question costs
 * the video nothing: σ is already where the cuts put it, and the minima are
 * never cut.  What it does not see: a single-queue AQM (CoDel) shared with
 * a neighbour keeps the queue under our target, and its drops, which would
 * say the link is full, are as much the floors' and the video's own on a
 * slow link (CoDel at 960 kbit/s with UDP read as a neighbour in the
 * model, and cost the video 8 s): there the loop stays in TRACK.
 *
 * COMPETE.  This host competes for its total as plain TCP would, the
 * video first within it.  The downloads are in one of two ways:
 *
 *     FREE ──(a minimum missed two decisions in a row: the first yield)──► FOLLOW
 *     (entered with COMPETE)                (and after each drain: FOLLOW)
 *     FREE, FOLLOW ──(a flow with a minimum lost segments, a download did not)──► PROTECT
 *     PROTECT ──(its backlog paid, no new loss; or PROTECT_MAX_DRAINS drains long)──► FOLLOW
 *
 *   - FREE: their windows go back to the kernel (controller.c) — their
 *     congestion windows, the senders' loss response, set their rates, as
 *     under plain TCP;
 *   - FOLLOW: each download's window follows its own delivered rate R at
 *     the RTT measured, compete_headroom above it (bwss__fcs_follow: the
 *     sender's congestion window, not ours, holds it), resized at each fresh
 *     estimate.  A share held through windows sized for a rate falls behind
 *     an elastic neighbour that grows the queue (rate = window / RTT) while
 *     plain TCP's downloads grow their windows with it; windows that follow
 *     R at the RTT now grow with the queue as the senders' own do;
 *   - PROTECT: the video lost a segment.  In a FIFO whose queue stands, every
 *     flow held by its congestion window moves the link in proportion to
 *     what it has in flight.  The video's source holds its window near its
 *     need (no headroom); a loss leaves its sender β (0.7 for CUBIC, 0.5
 *     for Reno) of it, regrown about a segment per RTT — seconds at a
 *     150-ms queue — and all that time its share is β of what it needs,
 *     unless everyone else's inflight shrinks by (1 − β) at once.  Only our
 *     downloads can shrink: they keep PROTECT_KEEP of their rate at the RTT
 *     measured (bwss__fcs_shrink), and hold it — no room, no yield, no
 *     drain — until what the video's source sent since the loss has arrived
 *     (the minima's debt paid) with no new loss, at least PROTECT_MIN_RTTS
 *     after the entry; then FOLLOW grows their windows back a room a fresh
 *     estimate.  Triggered by the loss itself, seen within the RTT it
 *     arrives out of order in, not by a shortfall read a decision or two
 *     later: by then the neighbour has taken the room.
 * The video's window is sized with compete_headroom above its minimum for
 * the RTT measured (the queue swings with the neighbour's sawtooth).  The
 * video comes first: a flow below its minimum (the deficit D of
 * capacity-model.c) for two decisions in a row (its rate over one decision
 * is a few segments) makes the downloads yield compete_yield·D, each by its
 * weight and at most max_cut of what it delivers, from the rate it
 * delivers, at once (the FIFO shares what they give up among every flow
 * still sending, the neighbour's included); only the shortfall is taken
 * from them, and at the first decision the minima are met their windows
 * follow their rates again.  σ stays above what the flows move: it binds
 * nobody.  A minimum missed by a fifth or more for half of the last
 * reserve_hold_us whatever they yielded says the traffic beside us did not give way: it is inelastic (UDP
 * above what the link leaves), competing only took the video's share, and
 * the loop goes back to TRACK and stays out of COMPETE for a while,
 * longer each time (Nimbus's question, asked with the entry as the pulse).  Decisions are two RTTs of
 * the queue that stands, not of the target.
 *
 * Exit (BBR's PROBE_RTT: the only way to see a queue's floor is to stop
 * filling it).  A drain when U reaches the link this host had to itself
 * (less compete_probe_rise: the neighbour's share came back to us), and at
 * least every compete_probe_us (the neighbour may have been there from
 * the start): the downloads at a quarter of what they move, for at most
 * compete_drain_us.  If the queue falls under its target, it was ours: TRACK, from σ = what the flows move, with the link seen
 * busy forgotten (it was our share, not the link).  If it stops falling
 * above twice its target, its floor is somebody else's: FOLLOW, the
 * windows growing back from what the flows move a room a step (released at
 * once, their congestion windows would burst into the buffer together, and
 * its overflow takes the video's segments too).
 *
 * Whatever σ and the state decide, every flow keeps moving: the progress
 * law is fcs.c's (bwss__progress_floor_bps).
 */
#include "capacity.h"

/* What the downloads keep of their rate during a drain: a quarter (the
 * queue falls at three quarters of their share; its floor, if somebody
 * else's, shows all the same). */
#define DRAIN_KEEP 0.25

/* ... and it judges a floor no sooner than this many RTTs (of the base and
 * the target) after its start: the windows act within one, the kernel's
 * RTT average shows it within a few more. */
#define DRAIN_SETTLE_RTTS 4.0

/* The link this host has to itself is U with the queue at its target while
 * the detector's score is below this (the queue ours) and σ does not hold
 * the downloads down. */
#define ALONE_SCORE 0.25

/* After COMPETE failed the video, no entry for compete_probe_us, doubling
 * up to four times it while it keeps failing: each test (an entry) costs
 * the video a few seconds (the downloads climb, the video falls, the score
 * rises: 5-6 s of COMPETE at 960 kbit/s in the model). */
#define COMPETE_HOLD_MAX 4

/* A minimum missed by more than this fraction of the minima is one that
 * competing costs (a neighbour's drop costs the video a few per cent for a
 * second; traffic that does not give way, a third or more for good). */
#define DEEP 0.2

/* ... half of the last reserve_hold_us (an exponential memory: about 1.5 s
 * of a video deeply short without a break; decided through the brief
 * recoveries a yield buys it, not reset by them — in the lab a rule that
 * forgot the shortfall only after 2 s met ended COMPETE beside a neighbour
 * whose video was at 1.8-2.2 of 2 Mbit/s a second) */
#define FAIL_SCORE 0.5

/* The downloads yield once the video has been short this many decisions in
 * a row: its rate over one decision (two RTTs) is a few segments, one of
 * them late is no shortfall. */
#define YIELD_DECISIONS 2

/* PROTECT: what the downloads keep of their rate when the video lost.  To
 * give the video back its share after its window fell to β, the others'
 * inflight must fall by (1 − β) of everyone's (video excluded): with the
 * downloads at B and the neighbour at N, the downloads keep
 * 1 − (1 − β)(B + N)/B.  A receiver does not see N; beside one plain-TCP
 * neighbour it moves about what our downloads do (N ≈ B), so with CUBIC's
 * β = 0.7: 1 − 2·0.3 = 0.4. */
#define PROTECT_KEEP 0.4

/* ... held at least this many RTTs (measured, the queue included): the
 * video's retransmission and its backlog's first window arrive within
 * two, the queue's fall shows in the kernel's RTT within a few more. */
#define PROTECT_MIN_RTTS 4.0

/* ... and at most this many drains long (compete_drain_us each): a video
 * that lost for good behind traffic that does not give way is the fail
 * rule's to judge, not a reason to hold the downloads. */
#define PROTECT_MAX_DRAINS 4

/* ---- the detector (TRACK) ---- */

/* Returns true if this host moves about all of the link it had to itself
 * (link_alone_bps): nobody else's traffic is on it. */
static bool
has_link (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return c->link_alone_bps > 0.0 && k->u_link >= (1.0 - p->compete_probe_rise) * c->link_alone_bps;
}

/* The queue we did not make: every download held at its floor, every
 * minimum met, no flow above its allotment, U short of the link we had
 * alone, and still a standing queue. */
static bool
foreign (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return k->bulk > 0 && k->bulk_floored == k->bulk && k->overrun == 0 && k->short_min == 0
      && !has_link (c, p, k) && over_target (k);
}

/* The queue in hand: at or under its target without losses, or empty; or
 * one of our flows above what it is allotted fills it; or no queue to
 * measure (no flow moved enough to show one). */
static bool
in_hand (const CapacityCounts *k)
{
  return k->q < 0.0 || queue_empty (k) || k->overrun > 0 || (!over_target (k) && k->lost == 0);
}

/* Moves the score towards @x over @interval_us of the detector's memory —
 * as one observation: no more than two of the shortest decision intervals
 * (a long interval is a quiet one, its rates are mostly the silence before
 * a burst: a player's fragment). */
static void
score (BwssCapacity *c, const BwssParams *p, double x, double interval_us)
{
  if (interval_us > 2.0 * (double) p->decision_min_us)
    interval_us = 2.0 * (double) p->decision_min_us;
  double w = interval_us / (double) p->compete_detect_us;
  if (w > 1.0)
    w = 1.0;
  c->foreign_score += w * (x - c->foreign_score);
}

void
capacity_compete_init (BwssCapacity *c)
{
  c->foreign_score = 0.0;
  c->link_alone_bps = 0.0;
  c->compete_probe_at_us = 0;
  c->compete_drain_until_us = 0;
  c->compete_u_before = 0.0;
  c->compete_yield_votes = 0;
  c->compete_short_score = 0.0;
  c->compete_hold_us = 0;
  c->compete_hold_until_us = 0;
  c->compete_free = false;
  c->compete_yield_bps = 0.0;
  c->compete_protect_since_us = 0;
  c->compete_protect_epoch = 0;
  c->compete_protect_debt_bits = 0.0;
  c->compete_protect_keep = 1.0;
}

/* Enters COMPETE: from what the flows move, the drain first due after a
 * full probe interval; what TRACK learned of the link is not the link's
 * now (the neighbour takes part of it). */
static void
enter_compete (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  c->phase = BWSS_PHASE_COMPETE;
  c->phase_since_us = now;
  c->compete_probe_at_us = now + p->compete_probe_us;
  c->compete_drain_until_us = 0;
  c->compete_free = true;
  c->compete_yield_bps = 0.0;
  c->compete_short_score = 0.0;
  c->compete_yield_votes = 0;
  c->compete_protect_since_us = 0;
  capacity_forget_track (c);
  double s = (1.0 + p->compete_headroom) * k->u_kept;
  capacity_set_sigma (c, s > c->sigma_bps ? s : c->sigma_bps);
}

bool
capacity_compete_watch (BwssCapacity *c, const BwssParams *p, uint64_t now,
                        const CapacityCounts *k, double interval_us)
{
  if (c->phase != BWSS_PHASE_TRACK || interval_us <= 0.0)
    return false;
  if (foreign (c, p, k))
    score (c, p, 1.0, interval_us);
  else if (in_hand (k))
    score (c, p, 0.0, interval_us);
  if (c->foreign_score < ALONE_SCORE && k->bulk_floored < k->bulk && k->q >= k->qt
      && k->u_link > c->link_alone_bps)
    c->link_alone_bps = k->u_link;
  if (c->foreign_score < p->compete_enter || now < c->compete_hold_until_us)
    return false;
  enter_compete (c, p, now, k);
  return true;
}

/* ---- COMPETE ---- */

/* Leaves COMPETE: the queue was ours.  σ from what the flows move; the
 * link seen busy was our share beside the neighbour, not the link. */
static int
exit_compete (BwssCapacity *c, uint64_t now, const CapacityCounts *k)
{
  c->compete_hold_us = 0;
  c->phase = BWSS_PHASE_TRACK;
  c->phase_since_us = now;
  c->foreign_score = 0.0;
  c->compete_drain_until_us = 0;
  c->compete_free = false;
  c->compete_yield_bps = 0.0;
  c->compete_protect_since_us = 0;
  capacity_forget_track (c);
  capacity_set_sigma (c, k->u_kept > k->minima ? k->u_kept : k->minima);
  return RULE_EXIT;
}

/* Leaves COMPETE because it failed the video: minima missed by a fifth or
 * more most of the time lately, whatever the downloads yielded — the traffic beside us
 * did not give way, it is inelastic (UDP, a CBR stream above what the link
 * leaves), and competing only took the video's share.  TRACK, and no entry
 * for compete_probe_us (doubling up to COMPETE_HOLD_MAX times it while it
 * keeps failing). */
static int
fail_compete (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  uint64_t hold = c->compete_hold_us ? 2 * c->compete_hold_us : p->compete_probe_us;
  if (hold > COMPETE_HOLD_MAX * p->compete_probe_us)
    hold = COMPETE_HOLD_MAX * p->compete_probe_us;
  exit_compete (c, now, k);
  c->compete_hold_us = hold;
  c->compete_hold_until_us = now + hold;
  return RULE_EXIT;
}

/* Starts a drain: the downloads at a quarter of what they move (DRAIN_KEEP).
 * Alone, this host's U is the link, so σ is then well below it and the
 * queue drains at what they gave up (a 150-ms buffer in a quarter of a
 * second at 8 Mbit/s, a video of a quarter of the link beside them);
 * at their floor, their congestion windows would have nothing to start
 * from again but a burst. */
static int
start_drain (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  c->compete_free = false;
  c->compete_yield_bps = 0.0;
  c->compete_u_before = k->u_link;
  c->compete_drain_until_us = now + p->compete_drain_us;
  capacity_set_sigma (c, k->minima + DRAIN_KEEP * (k->u_kept - k->minima));
  return RULE_DRAIN;
}

/* A running drain: the queue under its target says it was ours (losses
 * are no verdict here: segments that arrive out of order after the last
 * overflow, or on a path that reorders, held the lab's loop in COMPETE for
 * 30 s after the neighbour left, the queue at 20 ms under drain after
 * drain); at its end σ goes back. */
static int
judge_drain (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  if (k->q >= 0.0 && k->q < k->qt)
    return exit_compete (c, now, k);
  /* a queue that stopped falling above twice its target has found its
   * floor: somebody else's */
  bool floor = c->prev_queue_us >= 0.0 && k->q >= c->prev_queue_us && k->q >= 2.0 * k->qt
      && now + p->compete_drain_us >= c->compete_drain_until_us + DRAIN_SETTLE_RTTS * k->rtt_ref;
  if (now < c->compete_drain_until_us && !floor)
    return RULE_DRAIN;
  c->compete_drain_until_us = 0;
  c->compete_probe_at_us = now + p->compete_probe_us;
  /* the neighbour is still there: the link this host had to itself is
   * beyond reach beside it, and a drain due to a U that only climbs back to
   * what it moved before would follow every drain.  The next one due to U
   * needs compete_probe_rise more than that (the neighbour's share coming
   * back), else the probe interval */
  if (floor && c->link_alone_bps > 0.0 && p->compete_probe_rise < 1.0) {
    double beside = (1.0 + p->compete_probe_rise) / (1.0 - p->compete_probe_rise)
        * c->compete_u_before;
    if (c->link_alone_bps < beside)
      c->link_alone_bps = beside;
  }
  /* FOLLOW: the windows grow back from what the flows move now, a room a
   * step (released at once, the downloads' congestion windows would burst
   * into the buffer together, and its overflow would take the video's
   * segments too) */
  c->compete_free = false;
  capacity_set_sigma (c, (1.0 + p->compete_headroom) * k->u_kept);
  return RULE_COMPETE;
}

/* Enters PROTECT: the downloads keep PROTECT_KEEP of their rates, once
 * (controller.c, at the new epoch), and hold there; σ binds nobody. */
static int
start_protect (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  c->compete_free = false;
  c->compete_yield_bps = 0.0;
  c->compete_yield_votes = 0;
  c->compete_protect_since_us = now;
  c->compete_protect_epoch++;
  c->compete_protect_debt_bits = 0.0;
  c->compete_protect_keep = PROTECT_KEEP;
  double s = (1.0 + p->compete_headroom) * k->u_kept;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  return RULE_PROTECT;
}

/* A running PROTECT: counts what the minima's flows owe their sources
 * (their minima less what they moved, over the interval: a live source at
 * its minimum sends that much, and what did not arrive waits at the
 * sender); ends once that is paid with no new loss, at least
 * PROTECT_MIN_RTTS after the entry, or PROTECT_MAX_DRAINS drains after it.
 * Then FOLLOW: the windows grow back from what the flows move. */
static int
hold_protect (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
              double interval_us)
{
  c->compete_protect_debt_bits += (k->minima - k->min_moved) * interval_us / 1e6;
  double rtt = k->rtt_ref + (k->q > 0.0 ? k->q : 0.0);
  uint64_t held = now - c->compete_protect_since_us;
  bool paid = c->compete_protect_debt_bits <= 0.0 && k->min_lost == 0
      && (double) held >= PROTECT_MIN_RTTS * rtt;
  if (!paid && held < PROTECT_MAX_DRAINS * p->compete_drain_us)
    return RULE_PROTECT;
  c->compete_protect_since_us = 0;
  c->compete_protect_debt_bits = 0.0;
  c->compete_protect_keep = 1.0;
  double s = (1.0 + p->compete_headroom) * k->u_kept;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  return RULE_COMPETE;
}

/* Returns true if a drain is due: the interval is over, or U reached the
 * link this host had to itself before (the neighbour's share came back to
 * us; unknown if the neighbour was there from the start: the interval
 * only). */
static bool
drain_due (const BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  return now >= c->compete_probe_at_us || has_link (c, p, k);
}

int
capacity_compete_decide (BwssCapacity *c, const BwssParams *p, uint64_t now,
                         const CapacityCounts *k, double interval_us)
{
  /* minima missed by more than DEEP of them most of the time lately (an
   * exponential memory of reserve_hold_us, a decision weighing its interval,
   * two RTTs of the standing queue, up to four short ones): competing costs
   * the video.  A video a few per cent
   * short, or deeply short for a decision (its rate over one is a few
   * segments), is a drop's doing, which the yields answer; and so is one
   * deeply short while the downloads still move more than a yield would
   * take (beside an elastic neighbour the video's own congestion window
   * regrows over a second or two after its loss, and a fail there cost the
   * downloads the probe interval at their floors): only what the yields
   * cannot cover is the traffic beside us not giving way. */
  double deep = k->short_min > 0 && k->shortfall > DEEP * k->minima
      && k->bulk_bps < p->compete_yield * k->shortfall ? 1.0 : 0.0;
  double span = interval_us < 4.0 * (double) p->decision_min_us ? interval_us
                                                                : 4.0 * (double) p->decision_min_us;
  double w = span / (double) (p->reserve_hold_us ? p->reserve_hold_us : 1);
  c->compete_short_score += (w < 1.0 ? w : 1.0) * (deep - c->compete_short_score);
  if (c->compete_short_score >= FAIL_SCORE)
    return fail_compete (c, p, now, k);
  if (c->compete_drain_until_us)
    return judge_drain (c, p, now, k);
  /* the video first, before its shortfall shows: its own loss — unless
   * every download lost in the same interval (an overflow that dropped from
   * every flow: their senders shrank with the video's, the shares stand) */
  if (c->compete_protect_since_us)
    return hold_protect (c, p, now, k, interval_us);
  if (k->min_lost > 0 && k->bulk > 0 && k->lost - k->min_lost < k->bulk)
    return start_protect (c, p, now, k);
  if (drain_due (c, p, now, k))
    return start_drain (c, p, now, k);
  /* the video first: a minimum missed two decisions in a row makes the
   * downloads yield compete_yield times what the minima miss (the FIFO
   * shares what they give up with the neighbour), each by its weight, from
   * what it delivers (controller.c); FREE ends at the first yield: from
   * then on their windows FOLLOW what they deliver at the RTT measured */
  c->compete_yield_votes = k->deficit > 0.0 ? c->compete_yield_votes + 1 : 0;
  bool yield = c->compete_yield_votes >= YIELD_DECISIONS;
  c->compete_yield_bps = yield ? p->compete_yield * k->deficit : 0.0;
  if (yield)
    c->compete_free = false;
  /* σ above what the flows move, binding nobody: the windows, not σ, hold
   * the downloads here (the video's is sized for its minimum, controller.c) */
  double s = (1.0 + p->compete_headroom) * k->u_kept;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  return yield ? RULE_YIELD : RULE_COMPETE;
}

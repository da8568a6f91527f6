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
 * COMPETE.  This host competes for its total as plain TCP would, and
 * within it the video comes first.  Inside a shared drop-tail FIFO an
 * overflow drops the few segments that arrive while it is full: one or two
 * flows lose, and a CUBIC window that lost regrows slowly near where it
 * lost — so the video, whose window its source holds near its need, is
 * short for seconds after each of its losses, whoever else is sending.
 * What this host can do: keep its downloads from filling the FIFO beyond
 * their share (windows, not congestion windows, hold them), and give the
 * video the room while it is short.  Two phases:
 *   - free, from the entry: the downloads' windows go back to the kernel
 *     (compete_free; controller.c), and what they move beside the
 *     neighbour is plain TCP's share for them — the share d, averaged over
 *     compete_detect_us — until the video misses its minimum (the deficit
 *     D of capacity-model.c) for YIELD_DECISIONS decisions;
 *   - held: σ = Σm + d, the downloads' windows sized for it at the RTT
 *     measured (the queue is the neighbour's as much as ours, no target of
 *     ours), and d follows what plain TCP would do with it on the
 *     receiver's evidence: a download that lost segments cuts it by
 *     (1 − SHARE_BETA) of its part; a decision with the queue standing and
 *     every minimum met adds a segment per RTT per download (Reno), no
 *     further than compete_headroom above what they carry.  Inside it,
 *     two ways, each a state with its entry and exit:
 *
 *         HELD ──(a minimum missed by more than GIVE_AT_ONCE of the minima,
 *                 or missed YIELD_DECISIONS decisions in a row)──► GIVE
 *         GIVE ──(every minimum met for a decision)──► HELD
 *
 *     GIVE: the downloads keep 1/(1 + compete_yield) of d (the FIFO shares
 *     what they give up with every flow still sending, and the video's
 *     window recovers only at a shorter queue), and d does not grow; HELD:
 *     d whole again.  A minimum is missed when the deficit of
 *     capacity-model.c says so, or when it is short by more than DEEP of
 *     the minima (a video its source holds back for want of the link has
 *     no deficit, yet competing costs it).  The give-way is due at once
 *     when the video is short by more than a tenth — its window, cut by the
 *     FIFO's overflow, regrows over seconds, and each decision waited is
 *     short — and only after a few decisions for a smaller miss, which a
 *     few late segments or a drop shared by every flow make (a give-way at
 *     each hands the FIFO to the neighbour).
 * The video's window is sized compete_headroom above its minimum for the
 * RTT measured (the queue swings with the neighbour's sawtooth).  A
 * minimum missed by a fifth or more for FAIL_SCORE of the last reserve_hold_us
 * of give-ways that held (GIVE for GIVE_SETTLE_DECISIONS decisions or
 * more: while the share is held, or a give-way has not yet acted, a
 * shortfall is this host's own share's doing, not the neighbour's), or d
 * down to SHARE_FLOORS times the downloads' floors with a minimum still
 * missed, says the traffic beside us did not give way: it is inelastic
 * (UDP above what the link leaves), competing only took the video's share,
 * and the loop goes back to TRACK and stays out of COMPETE
 * for a while, longer each time (Nimbus's question, asked with the entry
 * as the pulse).  Decisions are two RTTs of the queue that stands, not of
 * the target.
 *
 * Exit.  Held windows do not fill a queue that nobody else fills: a queue
 * under its target while the share is held was ours — TRACK, from σ = what
 * the flows move, with the link seen busy forgotten (it was our share, not
 * the link).  And BBR's PROBE_RTT (the only way to see a queue's floor is
 * to stop filling it): a drain when U reaches the link this host had to
 * itself (less compete_probe_rise: the neighbour's share came back to us),
 * and at least every compete_probe_us: the downloads at a quarter of what
 * they move, for at most compete_drain_us.  If the queue falls under its
 * target, it was ours: TRACK.  If it stops falling above twice its target,
 * its floor is somebody else's: the share held again, and the link this
 * host had alone — learned, it may be, with the neighbour already there —
 * raised past what it moved, so that the next drain waits for U to rise.
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

/* ... three quarters of the last reserve_hold_us (an exponential memory:
 * about 2.8 s of a video deeply short without a break; decided through the
 * brief recoveries a yield buys it, not reset by them — in the lab a rule
 * that forgot the shortfall only after 2 s met ended COMPETE beside a
 * neighbour whose video was at 1.8-2.2 of 2 Mbit/s a second).  Half: with
 * the give-way at the first decision short by a tenth (below), a video that
 * lost to the neighbour's overflow and regrows its window for 2-3 s ended
 * COMPETE twice in the one-neighbour CUBIC cell's 10 runs (5 draws, both
 * receiver RTTs: the detector right 93.2 % of its seconds, 96.2 % here);
 * a share given up that wins nothing still ends it, at its floors
 * (SHARE_FLOORS). */
#define FAIL_SCORE 0.75

/* The downloads give way at the first decision that finds a minimum missed
 * by more than this fraction of the minima: a video under 90 % of its
 * minimum is short (the lab's criterion), and a CUBIC window cut by the
 * FIFO's overflow regrows over seconds, so each decision waited costs it
 * (the calibrated household cell, 21 draws: the video at its minimum 96.5 %
 * of the seconds, 81.2 % when this waits like a small miss). */
#define GIVE_AT_ONCE 0.1

/* ... and after this many decisions in a row that miss a minimum by less:
 * its rate over one decision (two RTTs) is a few segments, one or two of
 * them late is no shortfall, and a give-way at every such decision hands
 * the FIFO to the neighbour (the Reno cell of three neighbour flows, whose
 * synchronised drops leave the video a few per cent short after each:
 * this machine 96.4 / 96.8 % of plain TCP's, 70.9 / 67.7 % at two; the
 * calibrated household cell 80.5 %, 77.2 % at two). */
#define YIELD_DECISIONS 3

/* What a loss of one download leaves of the share the downloads hold: a
 * CUBIC sender's β (RFC 9438), the window plain TCP would keep — the share
 * falls by (1 − β) times the fraction of the downloads that lost. */
#define SHARE_BETA 0.7

/* A share down to this many times the downloads' progress floors wins them
 * nothing: with a minimum still missed, the traffic beside us does not
 * give way.  Twice: the Reno growth of a held decision lifts a share near
 * its floors back above it between losses, and without a neighbour the
 * model stayed in COMPETE 38 s of 130 beside a player and UDP that leaves
 * no room (`/player/trace/adaptive3`) and 13 s of 90 in
 * `/household/progress-floor` (8 and 8 s at four times). */
#define SHARE_FLOORS 4.0

/* A give-way has held once it has lasted this many decisions: the windows
 * act within one, the video's window shows it within another.  Only then
 * does a minimum missed speak of the traffic beside us (the fail rule).
 * The calibrated model's household cell (21 draws): the fail rule judged
 * over every decision ended COMPETE in 5 draws, over give-ways that held
 * in 1. */
#define GIVE_SETTLE_DECISIONS 2

/* The held share's ways (COMPETE, above). */
enum { WAY_HELD = 0, WAY_GIVE };

static void
set_way (BwssCapacity *c, uint8_t way)
{
  c->compete_way = (uint8_t) way;
  c->compete_way_decisions = 0;
}

/* A minimum missed by more than @fraction of the minima. */
static bool
short_by (const CapacityCounts *k, double fraction)
{
  return k->short_min > 0 && k->shortfall > fraction * k->minima;
}

/* A minimum missed by more than DEEP of the minima. */
static bool
deep_short (const CapacityCounts *k)
{
  return short_by (k, DEEP);
}

static int hold_share (BwssCapacity *c, const BwssParams *p, uint64_t now,
                       const CapacityCounts *k, double interval_us);

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
  c->compete_sigma_before = 0.0;
  c->compete_yield_votes = 0;
  c->compete_short_score = 0.0;
  c->compete_hold_us = 0;
  c->compete_hold_until_us = 0;
  c->compete_free = false;
  c->compete_share_bps = 0.0;
  set_way (c, WAY_HELD);
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
  c->compete_sigma_before = 0.0;
  c->compete_free = true;
  c->compete_short_score = 0.0;
  c->compete_yield_votes = 0;
  c->compete_share_bps = k->u_kept > k->minima ? k->u_kept - k->minima : 0.0;
  set_way (c, WAY_HELD);
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
  c->compete_share_bps = 0.0;
  set_way (c, WAY_HELD);
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
  c->compete_sigma_before = k->u_kept;
  c->compete_free = false;
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
  /* over without a floor, the queue under twice its target (the least a
   * floor of somebody else's is, above): still falling, and ours — held
   * windows above the link keep such a queue for good once the neighbour
   * has left (15 ms beside a 10-ms target in the model, drain after
   * drain) */
  if (!floor && k->q >= 0.0 && k->q < 2.0 * k->qt)
    return exit_compete (c, now, k);
  c->compete_drain_until_us = 0;
  c->compete_probe_at_us = now + p->compete_probe_us;
  /* the floor is somebody else's at what this host moved: the link it had
   * alone is more than that (learned with a neighbour already there), and
   * the next drain waits for U to rise compete_probe_rise above it */
  double above = (1.0 + p->compete_probe_rise) * c->compete_sigma_before
      / (1.0 - p->compete_probe_rise);
  if (above > c->link_alone_bps)
    c->link_alone_bps = above;
  /* back to what the flows moved before it, through the windows (released
   * at once, the downloads' congestion windows would burst into the buffer
   * together, and its overflow would take the video's segments too) */
  c->compete_free = false;
  return RULE_COMPETE;
}

/* Returns true if a drain is due: the interval is over, or U reached the
 * link this host had to itself before (the neighbour's share came back to
 * us; unknown if the neighbour was there from the start: the interval
 * only). */
static bool
drain_due (const BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  if (now >= c->compete_probe_at_us)
    return true;
  return has_link (c, p, k);
}

/* COMPETE's decision between drains.  Free (from the entry): the kernel
 * has the downloads, and what they move beside the neighbour is plain
 * TCP's share for them, averaged over compete_detect_us, until a minimum
 * is missed for YIELD_DECISIONS decisions.  Then the share is held: σ =
 * Σm + d (HELD) or Σm + d/(1 + compete_yield) (GIVE), the downloads'
 * windows sized for it at the RTT measured, so they neither fill the FIFO
 * beyond their share nor give it up.  d follows what plain TCP would do
 * with it, on the receiver's evidence — a download that lost segments cuts
 * it by (1 − SHARE_BETA) of its part, and each HELD decision with the queue
 * standing and every minimum met adds a segment per RTT per download
 * (Reno), no further than the downloads carry (Linux grows a window only
 * while it limits).  A queue under its target was ours (a neighbour's
 * elastic flows hold one whatever we yield): TRACK.  A share down to its
 * floors with a minimum still missed: competing wins nothing, the traffic
 * beside us does not give way. */
static int
hold_share (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
            double interval_us)
{
  double moved = k->u_kept - k->minima > 0.0 ? k->u_kept - k->minima : 0.0;
  bool missed = k->deficit > 0.0 || deep_short (k);
  c->compete_yield_votes = missed ? c->compete_yield_votes + 1 : 0;
  bool give = missed && (short_by (k, GIVE_AT_ONCE) || c->compete_yield_votes >= YIELD_DECISIONS);
  if (c->compete_free) {
    double w = interval_us / (double) p->compete_detect_us;
    c->compete_share_bps += (w < 1.0 ? w : 1.0) * (moved - c->compete_share_bps);
    if (c->compete_yield_votes < YIELD_DECISIONS) {
      capacity_set_sigma (c, (1.0 + p->compete_headroom) * k->u_kept);
      return RULE_COMPETE;
    }
    c->compete_free = false;
    if (moved > c->compete_share_bps)
      c->compete_share_bps = moved;
    set_way (c, WAY_HELD);
  }
  if (k->q >= 0.0 && k->q < k->qt)
    return exit_compete (c, now, k);
  double d = c->compete_share_bps;
  double rtt = (k->rtt_ref - k->qt + (k->q > 0.0 ? k->q : 0.0)) / 1e6;
  if (k->bulk_lost > 0 && k->bulk > 0) {
    d *= 1.0 - (1.0 - SHARE_BETA) * (double) k->bulk_lost / (double) k->bulk;
  } else if (c->compete_way == WAY_HELD && !missed && rtt > 0.0
             && k->q >= 2.0 * k->qt + k->band) {
    double grown = d + (double) k->bulk * 8.0 * p->default_mss * (interval_us / 1e6) / (rtt * rtt);
    double carried = (1.0 + p->compete_headroom) * moved;
    if (grown > carried)
      grown = d > carried ? d : carried;
    d = grown;
  }
  c->compete_share_bps = d;
  if (missed && d <= SHARE_FLOORS * (double) k->bulk * bwss__progress_floor_bps (p))
    return fail_compete (c, p, now, k);
  c->compete_way_decisions++;
  if (c->compete_way == WAY_HELD && give)
    set_way (c, WAY_GIVE);
  else if (c->compete_way == WAY_GIVE && !missed)
    set_way (c, WAY_HELD);
  if (c->compete_way == WAY_GIVE) {
    capacity_set_sigma (c, k->minima + d / (1.0 + p->compete_yield));
    return RULE_YIELD;
  }
  if (!missed)
    capacity_set_sigma (c, k->minima + d);
  return RULE_COMPETE;
}

/* Returns true if a give-way has held long enough that a minimum still
 * missed speaks of the traffic beside us. */
static bool
give_held (const BwssCapacity *c)
{
  return !c->compete_free && c->compete_way == WAY_GIVE
      && c->compete_way_decisions >= GIVE_SETTLE_DECISIONS;
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
   * segments), is a drop's doing, which the yields answer. */
  double deep = deep_short (k) ? 1.0 : 0.0;
  double span = interval_us < 4.0 * (double) p->decision_min_us ? interval_us
                                                                : 4.0 * (double) p->decision_min_us;
  double w = span / (double) (p->reserve_hold_us ? p->reserve_hold_us : 1);
  if (give_held (c))
    c->compete_short_score += (w < 1.0 ? w : 1.0) * (deep - c->compete_short_score);
  if (c->compete_short_score >= FAIL_SCORE)
    return fail_compete (c, p, now, k);
  if (c->compete_drain_until_us)
    return judge_drain (c, p, now, k);
  if (drain_due (c, p, now, k))
    return start_drain (c, p, now, k);
  return hold_share (c, p, now, k, interval_us);
}

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
 *     and no flow with a minimum moves above it by more than α while the
 *     minima are owed nothing.  A source sends above its minimum for one
 *     of two reasons.  It catches up what the link held back (the minima
 *     fell short, and were owed it: a neighbour's queue took the video's
 *     share, or a UDP onset did) — a reading that says nothing about who
 *     holds the queue, and counts as it did.  Or it has more of its own to
 *     send (a player fetching a fragment as fast as the link lets it, a
 *     window sized with headroom on an RTT its own queue lengthens): owed
 *     nothing, it fills the queue itself whoever else is there, and beside
 *     inelastic traffic (UDP) it alone holds that queue up — the UDP takes
 *     its share, the video the rest, σ at the minima cannot cut it.  Such
 *     a reading is "neither" (it lacks "overrun", the bit of a flow that
 *     may fill the queue itself).  (Beside an elastic neighbour the video at
 *     its minimum and the queue standing read foreign all the same.)  What
 *     this does not tell apart: a catch-up after a UDP onset from a catch-up
 *     after a neighbour's arrival — the same readings, the same debt;
 *     Or, for the floors and the queue above its target, a queue beside a
 *     small share: the flows we control move a small share of the largest
 *     link seen busy (BESIDE_SHARE) while the queue stands tens of ms
 *     (BESIDE_QUEUE_US).  Flows that are not registered (a player's
 *     connections this host opens beside its own) are traffic beside ours
 *     as a neighbour's is; once the loop has cut σ to the few hundred
 *     kbit/s the downloads keep above their floors, C2 sets the target on
 *     the link U shows (a few packets there are ~100 ms), the standing
 *     queue reads as at its target, and the first reading never holds;
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
 * COMPETE.  This host competes for its total as plain TCP would: the
 * downloads' windows go back to the kernel (compete_free; controller.c) —
 * their congestion windows, the senders' loss response, set their rates,
 * as under plain TCP; the video's window is sized with compete_headroom
 * above its minimum for the RTT measured (the queue swings with the
 * neighbour's sawtooth).  Within that total the video still comes first: a
 * flow below its minimum (the deficit D of capacity-model.c) for two
 * decisions in a row (its rate over one decision is a few segments) makes
 * the downloads yield compete_yield·D, at most max_cut of what they move
 * (the FIFO shares what they give up among every flow still sending, the
 * neighbour's included); their windows, sized for the RTT measured (the
 * queue is the neighbour's, no target of ours), bind again, and σ climbs
 * back as Reno grows a window — a segment per RTT per download — until,
 * compete_detect_us after the last yield, no window binds, and the kernel
 * has them again.  A minimum missed by a fifth or more for half of the last
 * reserve_hold_us whatever they yielded (and, for a stream over several
 * connections, no nearer its minimum over REPAIR_HOLDS times that) says
 * the traffic beside us did not give way: it is inelastic (UDP above what the link leaves), competing
 * only took the video's share, and the loop goes back to TRACK and stays
 * out of COMPETE for a while, longer each time (Nimbus's question, asked
 * with the entry as the pulse).  A loss of one of a stream's several
 * connections (a stripe's, a window cut or a probe's wait) leaves it short
 * of that connection's part for a second or two while its source's backlog
 * grows, the others carrying theirs, and the backlog then leaves above the
 * minimum: over the longer memory the stream met it, the neighbour gave
 * way, and COMPETE goes on.  A stream over one connection has no other to
 * carry it: its loss is the whole stream's, and the shorter memory
 * decides alone.  Decisions are two RTTs of
 * the queue that stands, not of the target.
 *
 * Exit (BBR's PROBE_RTT: the only way to see a queue's floor is to stop
 * filling it).  A drain when U reaches the link this host had to itself
 * (less compete_probe_rise: the neighbour's share came back to us), and at
 * least every compete_probe_us (the neighbour may have been there from
 * the start): the downloads at a quarter of what they move, for at most
 * compete_drain_us.  If the queue falls under its target, it was ours: TRACK, from σ = what the flows move, with the link seen
 * busy forgotten (it was our share, not the link).  If it stops falling
 * above twice its target, its floor is somebody else's: σ back to what the
 * flows moved before, through the windows (released at once, their
 * congestion windows would burst into the buffer together, and its
 * overflow takes the video's segments too).
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

/* ... and U is this fraction above the minima: a U of about the minima is
 * what the video at its minimum and the floors move beside anything.  In
 * the first second, before σ holds the downloads at their floors, a
 * neighbour's queue may already stand; a link learned there from such a U
 * makes every later decision read "this host moves the link it had alone",
 * and the detector never enters. */
#define ALONE_ABOVE_MINIMA 0.25

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
 * recoveries a yield buys it, not reset by them — beside a neighbour a
 * video met on the whole reads a little above and below its minimum second
 * by second, and a rule that forgot the shortfall only after 2 s met ends
 * COMPETE on that jitter: docs/architecture.md, COMPETE's cells) */
#define FAIL_SCORE 0.5

/* ... and, if a stream over several connections (G1) is among them, the
 * flows with a minimum moved less than 1 − DEEP of it over this many
 * reserve_hold_us (an exponential memory of what the flows with a minimum
 * carried, each decision's share at most REPAIR_CAP): a stream that lost
 * a connection's segments is short for a second or two and then catches
 * up from its source's backlog (a 2-s dip to three quarters of the
 * minimum and a catch-up at 1.65 × it stay above 0.9 of the minimum over
 * this memory: docs/household.md, the stripes' loss dip), where traffic
 * that does not give way keeps it a third or more short (0.8 of it
 * reached in 3.7 s).  Fewer, and a
 * dip of two seconds ends COMPETE; more, and a video beside UDP above
 * what the link leaves waits that much longer for TRACK. */
#define REPAIR_HOLDS 2.0

/* ... a decision's share of the minima counted at most this: the catch-up
 * after a long stall is repair, not credit for a later shortfall. */
#define REPAIR_CAP 2.0

/* The downloads yield once the video has been short this many decisions in
 * a row: its rate over one decision (two RTTs) is a few segments, one of
 * them late is no shortfall. */
#define YIELD_DECISIONS 2

/* A queue beside a small share (the detector's second reading of foreign,
 * below): the flows this host controls move no more than this fraction of
 * the largest link it saw busy (link_max_bps).  A quarter: a link that falls
 * to a quarter of its best and stays there is not a Wi-Fi station's level
 * (0.5-1.5 of its mean), and a queue of our own above its target is cut
 * within a second; while our flows move that little, a standing queue of
 * tens of ms is somebody else's. */
#define BESIDE_SHARE 0.25

/* ... and the queue stands at least this long, µs: tens of ms, above the
 * target C2 gives a link our flows fill at their floors (a few packets at
 * a few Mbit/s) and well above any queue the progress floors alone keep. */
#define BESIDE_QUEUE_US 40000.0

/* ---- the detector (TRACK) ---- */

/* Returns true if this host moves about all of the link it had to itself
 * (link_alone_bps): nobody else's traffic is on it. */
static bool
has_link (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return c->link_alone_bps > 0.0 && k->u_link >= (1.0 - p->compete_probe_rise) * c->link_alone_bps;
}

/* Returns true if the queue stands beside a small share: at least
 * BESIDE_QUEUE_US while the flows this host controls move no more than
 * BESIDE_SHARE of the largest link it saw busy.  Then they cannot be what
 * fills it, wherever σ and the target stand: the target follows the link
 * U shows (C2: a few packets on a link of U are a long queue), and a
 * download the loop holds at a small σ is above its floor all the same. */
static bool
beside_small (const BwssCapacity *c, const CapacityCounts *k)
{
  return c->link_max_bps > 0.0 && k->q >= BESIDE_QUEUE_US
      && k->u_link <= BESIDE_SHARE * c->link_max_bps;
}

/* Returns the conditions of a queue we did not make that this decision
 * lacks (BWSS_DETECT_* bits; none: foreign): every download held at its
 * floor, every minimum met, no flow above its allotment, none above its
 * minimum with nothing owed, U short of the link we had alone, and still a
 * standing queue — or, for the floor and the queue above its target, a
 * queue beside a small share. */
static uint32_t
lacks (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  uint32_t m = 0;
  bool beside = beside_small (c, k);
  if (k->bulk == 0)
    m |= BWSS_DETECT_NO_BULK;
  else if (k->bulk_floored < k->bulk && !beside)
    m |= BWSS_DETECT_UNFLOORED;
  /* a flow that may fill the queue itself: released well above its
   * allotment, or above its minimum with the minima owed nothing */
  if (k->overrun > 0 || (k->above_min > 0 && c->minima_owed_bits <= 0.0 && !beside))
    m |= BWSS_DETECT_OVERRUN;
  if (k->short_min > 0)
    m |= BWSS_DETECT_SHORT_MIN;
  if (has_link (c, p, k))
    m |= BWSS_DETECT_HAS_LINK;
  if (!over_target (k) && !beside)
    m |= BWSS_DETECT_NO_QUEUE;
  return m;
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
  c->minima_owed_bits = 0.0;
  c->link_alone_bps = 0.0;
  c->compete_probe_at_us = 0;
  c->compete_drain_until_us = 0;
  c->compete_sigma_before = 0.0;
  c->compete_yield_at_us = 0;
  c->compete_yield_votes = 0;
  c->compete_short_score = 0.0;
  c->compete_carried = 1.0;
  c->compete_hold_us = 0;
  c->compete_hold_until_us = 0;
  c->compete_free = false;
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
  c->compete_carried = 1.0;
  c->compete_yield_votes = 0;
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
  /* what the minima are owed: their shortfall, less what they moved above
   * them since */
  c->minima_owed_bits += (k->minima - k->carried) * interval_us / 1e6;
  if (c->minima_owed_bits < 0.0)
    c->minima_owed_bits = 0.0;
  uint32_t missing = lacks (c, p, k);
  c->detect_seen = missing == 0 ? BWSS_SEEN_FOREIGN : in_hand (k) ? BWSS_SEEN_OURS : BWSS_SEEN_NEITHER;
  c->detect_missing = missing | (now < c->compete_hold_until_us ? BWSS_DETECT_HELD : 0u);
  if (c->detect_seen == BWSS_SEEN_FOREIGN)
    score (c, p, 1.0, interval_us);
  else if (c->detect_seen == BWSS_SEEN_OURS)
    score (c, p, 0.0, interval_us);
  if (c->foreign_score < ALONE_SCORE && k->bulk_floored < k->bulk && k->q >= k->qt
      && !beside_small (c, k)
      && k->u_link > (1.0 + ALONE_ABOVE_MINIMA) * k->minima && k->u_link > c->link_alone_bps)
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
 * overflow, or on a path that reorders, count as losses long after the
 * neighbour left, and would hold the loop in COMPETE drain after drain with
 * the queue short); at its end σ goes back. */
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
  return c->compete_free && has_link (c, p, k);
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
  double deep = k->short_min > 0 && k->shortfall > DEEP * k->minima ? 1.0 : 0.0;
  double span = interval_us < 4.0 * (double) p->decision_min_us ? interval_us
                                                                : 4.0 * (double) p->decision_min_us;
  double w = span / (double) (p->reserve_hold_us ? p->reserve_hold_us : 1);
  c->compete_short_score += (w < 1.0 ? w : 1.0) * (deep - c->compete_short_score);
  /* ... and over the longer memory the stream did not catch up: not a
   * dip its backlog repairs */
  double carried = k->minima > 0.0 ? k->carried / k->minima : 1.0;
  if (carried > REPAIR_CAP)
    carried = REPAIR_CAP;
  double wr = w / REPAIR_HOLDS;
  c->compete_carried += (wr < 1.0 ? wr : 1.0) * (carried - c->compete_carried);
  if (c->compete_short_score >= FAIL_SCORE && (k->groups == 0 || c->compete_carried < 1.0 - DEEP))
    return fail_compete (c, p, now, k);
  if (c->compete_drain_until_us)
    return judge_drain (c, p, now, k);
  if (drain_due (c, p, now, k))
    return start_drain (c, p, now, k);
  /* the video first: the downloads yield what the minima miss, and more
   * (the neighbour takes its part); never below the minima */
  c->compete_yield_votes = k->deficit > 0.0 ? c->compete_yield_votes + 1 : 0;
  if (c->compete_yield_votes >= YIELD_DECISIONS) {
    /* at most max_cut of what the downloads move, a decision */
    double s = k->u_kept - p->compete_yield * k->deficit;
    double least = k->minima + (1.0 - p->max_cut) * (k->u_kept - k->minima);
    if (s < least)
      s = least;
    if (!c->compete_free && s > c->sigma_bps)
      s = c->sigma_bps;
    capacity_set_sigma (c, s > k->minima ? s : k->minima);
    c->compete_free = false;
    c->compete_sigma_before = 0.0;
    c->compete_yield_at_us = now;
    return RULE_YIELD;
  }
  /* free: σ above what the flows move, binding nobody (the kernel has the
   * downloads).  After a yield or a drain, the windows bind: σ grows as Reno
   * grows a window — a segment per RTT per download (faster, the windows
   * fill the buffer within a second, and its overflow takes the video's
   * segments too) — until no window binds (the senders' congestion windows
   * hold every flow), and the kernel has them again */
  double free_at = (1.0 + p->compete_headroom) * k->u_kept;
  double rtt = (k->rtt_ref - k->qt + (k->q > 0.0 ? k->q : 0.0)) / 1e6;
  double s = free_at;
  bool back = k->u_kept >= (1.0 - p->alpha) * c->compete_sigma_before
      && now - c->compete_yield_at_us >= p->compete_detect_us;
  if (!c->compete_free && (k->hungry > 0 || !back) && rtt > 0.0)
    s = c->sigma_bps + (double) k->bulk * 8.0 * p->default_mss * (interval_us / 1e6) / (rtt * rtt);
  else
    c->compete_free = true;
  capacity_set_sigma (c, s > k->minima ? s : k->minima);
  return RULE_COMPETE;
}

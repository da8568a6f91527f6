/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity.c — the delay loop: σ from the access link's queueing delay.
 *
 * The model (C1: the queue measures σ against the link), what the loop
 * measures, the queue target (C2) and the one pass that counts are
 * capacity-model.c's; this file is the loop's start, its rules and its
 * decision.
 *
 * The start.  The paper releases every constraint for two seconds to take
 * U from plain TCP; at 960 kbit/s that fills the buffer with the bulk
 * flows' slow start and costs a video that starts with them a second or
 * two of media.  The delay loop holds σ at the minima instead from the
 * first flow on (windows from the first RTT: the handshake's), takes a
 * first U after release_us, and finds the link by its raise rule.
 *
 * Decisions (every bwss__capacity_interval(): a few RTTs, enough segments for
 * the kernel's RTT average to move; at once when the queue reaches twice its
 * target and band: cross traffic must not fill the buffer before the cut).
 * One pass counts; the first rule whose predicate holds acts:
 *
 * | rule      | origin                       | condition                                   | action                                      |
 * |-----------|------------------------------|---------------------------------------------|---------------------------------------------|
 * | start     | paper V-C initialisation     | START (σ = Σm) for release_us, and a first  | σ ← max(U, Σm); TRACK                       |
 * |           |                              | U measured                                  |                                             |
 * | probed    | BBR's bandwidth probe        | a probe beyond the link seen busy running,  | σ ← (1−α)·σ before its last step, not below |
 * |           |                              | and a queue (above the band)                | (1−α)·Σm; no probe for probe_wait, doubling |
 * |           |                              |                                             | up to probe_wait_max (U above the link seen |
 * |           |                              |                                             | busy with no queue, a standing queue gone   |
 * |           |                              |                                             | while σ held, or a cut no probe caused,     |
 * |           |                              |                                             | start it over)                              |
 * | cut       | C1; paper rule (c)           | q > q_t + band, and the queue is not        | drain: σ ← U' − U·min(max_cut,              |
 * |           |                              | already falling at that pace                | (q−q_t)/(H·(b̄+q_t))) for H·(b̄+q_t), then   |
 * |           |                              |                                             | cruise: σ ← (1−α)·U + unused targets;       |
 * |           |                              |                                             | U' = Σ max(R_i, m_i); not below Σm, never   |
 * |           |                              |                                             | above the σ before                          |
 * | deficit   | short buffers, AQMs, FQ      | a flow with a minimum below (1−α)·m, and    | σ ← max(Σm, min(σ − D, U_link)), D what the |
 * |           | (capacity-full.c)            | either its own queue (RTT excess over the   | minima miss; the link seen busy ← U_link    |
 * |           |                              | link's largest queue of own_queue_memory_us | (U if higher, on its own queue); raises     |
 * |           |                              | by own_queue_us and the band, not held by   | bounded by loss_raise for loss_memory_us    |
 * |           |                              | its window) or, for less than               | (room again ends it), not on its own queue  |
 * |           |                              | reserve_hold_us, a queue (above the band)   |                                             |
 * |           |                              | now or at the last decision or its losses   |                                             |
 * |           |                              | (ooopack); Σm < U < σ                       |                                             |
 * | loss      | paper rules (c), (d); AQMs   | a queue but not over target, flows short of | σ ← (1−α)·U', not below Σm; raises bounded  |
 * |           |                              | target and held neither by their window nor | by loss_raise for loss_memory_us, or until  |
 * |           |                              | at their minimum carry >= U/2, U < (1−α)·σ, | q reaches q_t                               |
 * |           |                              | loss_decisions in a row                     |                                             |
 * | raise     | C1; LEDBAT's ramp            | q < q_t − band, and a flow held by its      | σ ← σ·(1 + min(max_raise, boost·α,          |
 * |           |                              | window uses all its target (or any, with    |   gain·(q_t−q)/(b̄+q_t))), at most           |
 * |           |                              | the queue empty)                            | (U' + unused targets)·(1 + max_raise), from |
 * |           |                              |                                             | U' if σ is 0; the                           |
 * |           |                              |                                             | ramp stops at the link seen busy + idle,    |
 * |           |                              |                                             | beyond it a probe (a ramp from α again,     |
 * |           |                              |                                             | a step once the last is over, below)        |
 * |           |                              |                                             | doubles while the queue stays empty         |
 * | hold      |                              | otherwise                                   | —                                           |
 *
 * Regime "moving", a state of TRACK (entry and exit: update_moving): a link
 * whose rate moves faster than the loop settles, as a Wi-Fi station's — the
 * link seen busy dipped and came back within a few seconds.  There the
 * link seen busy is the last dip's, and the ramp that reaches it starts
 * its probe at once (at_known).
 *
 * The probe, a state of TRACK (probe_from_bps: the level of its last
 * step, probe_step_us: when).  Entry: a raise that finds σ at the link
 * seen busy.  A step is taken once the last one is over and, after a
 * refused probe, probe_wait later.  A step is over when it landed — U with
 * the idle targets took half of it (the queue, which the kernel's RTT
 * average shows late, says the rest) — or when the flows' FCSs keep it
 * off the link: a flow its window holds within α below its target keeps
 * that window (fcs.c, eq. 3 and 4, in whole segments), so a step that
 * leaves each flow it went to in that band (or at its floor) moves no
 * window, and neither U nor the queue will ever answer it; only a larger σ
 * can.  Such a step is over once it has stood probe_wait_max_us (the
 * longest a refused probe waits; the kernel's RTT average has long shown
 * any queue by then) with what the flows lack of it inside their bands.
 * Exits: a queue (rule "probed": σ below the last level that found none,
 * never below the minima's band), a cut, or rule "deficit" or "loss"
 * (capacity-full.c).
 *
 * Regime "per-flow queues", a state of TRACK (entry: a flow shows a queue
 * of its own, own_queue() in capacity-model.c — under fq_codel or cake a
 * flow that sends more than its share queues alone, under one FIFO never;
 * exit: with TRACK's memory, at the start and when COMPETE begins or
 * ends).  There a step beyond the link is answered by no queue the loop
 * reads but by the video's own, a deficit it pays for (the windows that
 * leave their bands together move by a segment each: eight connections at
 * three segments are 3 Mbit/s of 20), so a step the FCSs keep off the
 * link does not end: the probe holds where it is, as the flows do.
 *
 * A cut is a drain, then a cruise (as BBR drains its queue): while the
 * queue is above its target U' is what the link delivers to us, so σ = U'
 * holds the queue where it is (C1) and σ below it drains the excess.  The
 * drain takes the excess out over H RTTs; then σ goes back to U' at once —
 * a σ left at the drain's level would idle the link until the raise rule
 * climbed back, and with flows that follow their targets within an RTT
 * (paced reads, fcs.c) that swing was ±50 % in the model.
 *
 * Never a spiral: σ is cut only while the queue is above its target, i.e.
 * while the link is busy and U is what it delivers; a cut is relative to
 * U, not to σ, and by no more than max_cut; and the minima are never cut (a
 * download outside the domain that takes the link does not take the
 * video's minimum with it: the video's FCS widens its window and competes;
 * where the link cannot carry the minima the TRAS serves them by priority).
 * What the loop does not do: tell a queue that somebody else's download
 * fills (a plain TCP flow outside the domain) from its own.  Our bulk flows
 * then yield to it down to their floor, as LEDBAT's would; the video keeps
 * its minimum.  (A verdict from "our windows shrank and the queue did not"
 * misfires at 960 kbit/s, where a few segments of window are most of the
 * queue, and holds σ while the FCSs fill the link; the user's daemon,
 * bwssd, puts those downloads in the domain instead.)
 *
 * The minima.  Outside COMPETE (whose decisions take σ from Σ max(R_i, m_i)
 * each time) σ is never below the minima's band, (1 − α)·Σm: a target
 * within α under its minimum reaches the flow's FCS as (1 + α)·m
 * (controller.c, fcs_target()), so σ in the band still serves every
 * minimum in full.  The start sets σ = Σm, every rule that lowers σ keeps
 * the minima it sees (a refused probe their band), and a minimum that
 * arrives while σ is below the band — a player's next request, its
 * minimum back from 0 after σ followed the downloads down between two
 * fragments, which the decisions do not see for a window — lifts σ to Σm
 * at once (bwss__capacity_minima, whenever σ or a minimum moves).  The
 * paper's priority rule then holds: each minimum first, the downloads what
 * is left (eq. 6); eq. (7), σ short of the minima, is the paper's loop's
 * case, whose σ follows U (sigma.c).  Left to the raise rule, a returning
 * minimum would sit below itself for as long as the ramp takes to climb
 * back (seconds at DSL rates).
 *
 * Where the bottleneck has an AQM (CoDel, fq_codel, cake) or a short buffer
 * (12 ms) the queue never reaches the target, so "cut" never acts: the
 * rules that tell a full link without a standing queue ("deficit",
 * "loss") are capacity-full.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "capacity.h"

/* The raise boost doubles while the queue stays empty; the step is bounded
 * by max_raise anyway, this only keeps the number finite. */
#define MAX_BOOST 1024.0


static const char *const rule_names[] = {
  [RULE_NONE] = "none", [RULE_START] = "start", [RULE_PROBED] = "probed", [RULE_CUT] = "cut",
  [RULE_DEFICIT] = "deficit", [RULE_LOSS] = "loss",
  [RULE_RAISE] = "raise", [RULE_HOLD] = "hold", [RULE_IDLE] = "idle",
  [RULE_ENTER] = "enter", [RULE_COMPETE] = "compete", [RULE_YIELD] = "yield",
  [RULE_DRAIN] = "drain", [RULE_EXIT] = "exit",
};

const char *
bwss__capacity_rule_name (const BwssCapacity *c)
{
  return c->last_rule < sizeof rule_names / sizeof rule_names[0] ? rule_names[c->last_rule]
                                                                  : "unknown";
}

void
bwss__capacity_init (BwssCapacity *c)
{
  c->phase = BWSS_PHASE_IDLE;
  c->sigma_bps = 0.0;
  c->queue_us = -1.0;
  c->queue_target_us = 0.0;
  c->last_band_us = 0.0;
  c->link_bps = 0.0;
  c->link_max_bps = 0.0;
  c->queue_peak_us = 0.0;
  c->queue_peak_at_us = 0;
  c->last_rtt_us = 0.0;
  c->phase_since_us = 0;
  c->next_decision_us = 0;
  c->last_decision_us = 0;
  c->round_gap_us = 0;
  c->prev_queue_us = -1.0;
  memset (c->u_hist, 0, sizeof c->u_hist);
  memset (c->u_hist_us, 0, sizeof c->u_hist_us);
  c->u_hist_head = 0;
  c->changes = 0;
  c->last_rule = RULE_NONE;
  c->detect_seen = BWSS_SEEN_NONE;
  c->detect_missing = 0;
  c->seen_bulk = c->seen_floored = c->seen_lost = c->seen_short = c->seen_overrun = 0;
  memset (c->group_key, 0, sizeof c->group_key);
  memset (c->group_below_since_us, 0, sizeof c->group_below_since_us);
  capacity_forget_track (c);
  capacity_compete_init (c);
}

/* ---- one predicate per rule (deficit and loss: capacity-full.c) ---- */

/* Returns true once the start is over: release_us at the minima, and a
 * first U measured.  Flows adopted mid-stream behind a full queue have no
 * rate estimate for φ = 2·RTT (400 ms at 200 ms), longer than release_us:
 * σ ← U = 0 then, and no raise can leave 0 (docs/lab-results.md). */
static bool
rule_start (const BwssCapacity *c, const BwssParams *p, uint64_t now, double u)
{
  return c->phase == BWSS_PHASE_START && now - c->phase_since_us >= p->release_us && u > 0.0;
}

/* Rule "probed": a probe beyond the link seen busy is running, and a queue
 * answers it. */
static bool
rule_probed (const BwssCapacity *c, const CapacityCounts *k)
{
  return c->probe_from_bps > 0.0 && !queue_empty (k);
}

/* Returns true if the link has room again (probes start over): U above
 * what it gave with a queue, or a queue that stood (at least at its
 * target's lower edge) gone while σ held (the cross traffic left). */
static bool
room_again (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k)
{
  return queue_empty (k) && c->busy_link_bps > 0.0
      && (k->u > (1.0 + p->alpha) * c->busy_link_bps
          || (c->prev_queue_us >= k->qt - k->band && c->last_rule == RULE_HOLD));
}

/* Rule "cut": the queue above its target and band (C1: σ above the link,
 * or cross traffic came). */
static bool
rule_cut (const CapacityCounts *k)
{
  return over_target (k);
}


/* Under target, and a flow its window holds uses all its target: it would
 * take more; or the queue is empty and a window holds any flow (one that
 * dithers between two windows around its target can sit just below it on
 * average while the link idles).  (A flow at its smallest window that
 * carries more than its target counts too: raising σ lifts its target
 * towards what it carries.) */
static bool
rule_raise (const CapacityCounts *k)
{
  return under_target (k) && (k->hungry > 0 || (queue_empty (k) && k->held > 0));
}

/* ---- actions ---- */

static void
enter (BwssCapacity *c, BwssPhase phase, uint64_t now)
{
  if (c->phase != phase)
    c->phase_since_us = now;
  c->phase = phase;
}


/* Returns the raise factor for this decision (σ ← σ·(1 + it)): C1's step,
 * at most the ramp α·boost, bounded by max_raise — and by loss_raise for a
 * while after rule "loss" (the queue does not measure that link). */
static double
raise_by (const BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  /* C1's step, from α (the cruise after a drain is (1 − α)·U': one step
   * back) doubling while the queue stays empty.  C1 alone assumes windows
   * that hold the queue; flows whose reads are paced (fcs.c) hold none,
   * the queue integrates σ − C, and C1's step from a cruise overshot by
   * 10-20 % in the model */
  double step = p->raise_gain * (k->qt - k->q) / k->rtt_ref;   /* C1 */
  double ramp = c->raise_boost * p->alpha;
  if (step > ramp)
    step = ramp;
  double most = p->max_raise;
  if (c->last_loss_us && now - c->last_loss_us < p->loss_memory_us)
    most = p->loss_raise;
  return step < most ? step : most;
}

/* Returns the link this loop last saw busy, as σ, bit/s: that U plus what
 * the flows something else holds leave idle of their targets (σ that goes
 * to them is not on the link: a video below its minimum leaves it to the
 * others, Fig. 5c); infinite before the link was busy. */
static double
known_link (const BwssCapacity *c, const CapacityCounts *k)
{
  return c->busy_link_bps > 0.0 ? c->busy_link_bps + k->idle : INFINITY;
}

/* Returns the drain's length, µs: H RTTs of the reference RTT. */
static double
drain_us (const BwssParams *p, const CapacityCounts *k)
{
  return p->drain_horizon_rtts * k->rtt_ref;
}

/* Returns the σ the drain asks for (bit/s), or a negative value if the
 * queue is already falling fast enough to reach q_t within the drain. */
static double
drain_sigma (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k,
             double interval_us)
{
  double horizon = drain_us (p, k);
  double excess = k->q - k->qt;
  if (c->prev_queue_us >= 0.0 && interval_us > 0.0) {
    double fall = (c->prev_queue_us - k->q) / interval_us;   /* µs of queue per µs */
    if (fall * horizon >= excess)
      return -1.0;
  }
  double cut = excess / horizon;
  if (cut > p->max_cut)
    cut = p->max_cut;
  /* shed cut·U of what arrives, from what the link delivers with every
   * minimum kept: a video that sends less than its minimum keeps its
   * reserve, and the rate to shed falls on the flows that can shed it */
  double sigma = k->u_kept - cut * k->u;                      /* C1 */
  return sigma > k->minima ? sigma : k->minima;
}

/* Returns the σ after the drain, bit/s: (1 − α)·U (over link_window_us),
 * just below what the link delivers to us (C1: at U the queue would stay
 * where the drain left it, and windows in whole segments round up, so a little below lets it
 * settle at q_t; the raise rule finds the rest), plus what the flows
 * something else holds leave unused of their targets above their minima (σ
 * that goes to them is not on the link; a flow below its minimum with a
 * queue standing may be the queue's victim, not its source's), at least
 * the minima (the TRAS serves them first),
 * never above @before, the σ the queue grew under. */
static double
cruise_sigma (const BwssParams *p, const CapacityCounts *k, double before)
{
  double s = (1.0 - p->alpha) * k->u_link + k->idle;
  if (s < k->minima)
    s = k->minima;
  return s < before ? s : before;
}

/* Rule "start": σ ← U, the minima kept; the loop tracks the link. */
static int
act_start (BwssCapacity *c, uint64_t now, const CapacityCounts *k)
{
  capacity_set_sigma (c, k->u > k->minima ? k->u : k->minima);
  enter (c, BWSS_PHASE_TRACK, now);
  return RULE_START;
}

/* Returns the least σ the loop leaves, bit/s: the minima's band,
 * (1 − α)·Σm — a minimum's target in [(1 − α)·m, m) still reaches its FCS
 * as (1 + α)·m (controller.c, fcs_target()), so σ there serves every
 * minimum; below it the TRAS gives the priority flow less (eq. 7). */
static double
minima_band (const BwssParams *p, double minima)
{
  return (1.0 - p->alpha) * minima;
}

/* Rule "probed": back below where the probe started, at once, before the
 * queue grows (the flows that fell behind catch up meanwhile), not below
 * the minima's band (a probe from σ at the minima must not take the
 * video's: each refused probe would cut another α off its target); no
 * room, so the next probe waits twice as long (up to probe_wait_max). */
static int
act_probed (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  double s = (1.0 - p->alpha) * c->probe_from_bps, least = minima_band (p, k->minima);
  capacity_set_sigma (c, s > least ? s : least);
  c->probe_from_bps = 0.0;
  c->last_probed_us = now;
  c->probe_wait_us = c->probe_wait_us ? 2 * c->probe_wait_us : p->probe_wait_us;
  if (c->probe_wait_us > p->probe_wait_max_us)
    c->probe_wait_us = p->probe_wait_max_us;
  c->drain_until_us = 0;
  return RULE_PROBED;
}

/* The link has room again: the next probe need not wait, and what losses
 * or a deficit said of the link is past (the raise is not held to
 * loss_raise: a link whose rate came back is found in seconds). */
static void
forget_probes (BwssCapacity *c)
{
  c->probe_wait_us = 0;
  c->last_probed_us = 0;
  c->last_loss_us = 0;
}

/* Rule "cut": a drain to the σ drain_sigma asks for, for H RTTs, then the
 * cruise.  A hold if the queue already falls at the drain's pace or the
 * drain would not lower σ. */
static int
act_cut (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
         double interval_us)
{
  double s = drain_sigma (c, p, k, interval_us);
  if (!(s >= 0.0 && s < c->sigma_bps))
    return RULE_HOLD;
  c->cruise_bps = cruise_sigma (p, k, c->drain_until_us ? c->cruise_bps : c->sigma_bps);
  /* a queue no probe of ours made (cross traffic came): the link changed,
   * probes start over */
  if (c->probe_from_bps <= 0.0
      && (c->last_probed_us == 0 || now - c->last_probed_us > p->probe_wait_max_us / 4))
    c->probe_wait_us = 0;
  c->probe_from_bps = 0.0;
  c->drain_until_us = now + (uint64_t) drain_us (p, k);
  capacity_set_sigma (c, s);
  return RULE_CUT;
}

/* Returns true if a probe beyond the link seen busy may take its next step:
 * no sooner than probe_wait_us after one that found no room (each costs a
 * queue), and once the last step is over (the header's "The probe"):
 * landed, or kept off the link by the flows' FCSs for probe_wait_max_us
 * outside regime "per-flow queues". */
static bool
probe_may_step (const BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  uint64_t wait = c->probe_wait_us ? c->probe_wait_us : p->probe_wait_us;
  if (c->last_probed_us && now - c->last_probed_us < wait)
    return false;
  if (c->probe_from_bps <= 0.0)
    return true;
  double bar = c->sigma_bps - 0.5 * (c->sigma_bps - c->probe_from_bps);
  if (k->u + k->idle >= bar)
    return true;                                    /* landed */
  return !c->per_flow && now - c->probe_step_us >= p->probe_wait_max_us
      && k->u + k->idle + k->banded >= bar;         /* kept off the link */
}

/* Returns true if σ has reached the link seen busy, @known: within
 * KNOWN_REACHED of it (the ramp stops at it, and what the others leave idle
 * moves it by a few bit/s a decision: σ that followed it from just below
 * would never count as there, and no probe would start). */
#define KNOWN_REACHED 0.001
static bool
at_known (const BwssCapacity *c, double known)
{
  return c->sigma_bps >= (c->moving ? 1.0 - KNOWN_REACHED : 1.0) * known;
}

/* Returns σ raised by @step: from σ, or from what the flows move if σ is 0
 * (a cut to minima of 0; a ramp is relative, it would stay at 0 for good);
 * the ramp stops at the link seen busy (@known); and never more than
 * max_raise above what the flows use (their minima kept) and what those
 * that something else holds leave unused (room for the others: Fig. 5c) —
 * more is a raise the queue has not shown yet (the kernel's RTT average
 * lags half a second at 960 kbit/s). */
static double
raised_sigma (const BwssCapacity *c, const BwssParams *p, const CapacityCounts *k, double step,
              double known)
{
  double from = c->sigma_bps > 0.0 ? c->sigma_bps : k->u_kept;
  double s = from * (1.0 + step);
  if (!at_known (c, known) && s > known)
    s = known;
  double most = (k->u_kept + k->unused) * (1.0 + p->max_raise);
  if (s > most)
    s = most > c->sigma_bps ? most : c->sigma_bps;
  return s;
}

/* Rule "raise": σ up by C1's step.  Beyond the link seen busy the raise is
 * a probe, a ramp of its own (from α, doubling while the queue stays empty:
 * the link grew, or the cross traffic left) that grows σ by α a decision at
 * most (a faster link is found, just not at the ramp's pace: flows that
 * follow σ within an RTT fill the queue faster than its average shows). */
static int
act_raise (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  double step = raise_by (c, p, now, k);
  double known = known_link (c, k);
  if (at_known (c, known)) {
    if (!probe_may_step (c, p, now, k))
      return RULE_HOLD;
    if (c->probe_from_bps <= 0.0) {
      c->raise_boost = 1.0;            /* a probe starts from α */
      step = raise_by (c, p, now, k);
    }
    c->probe_from_bps = c->sigma_bps;   /* the last level that found no queue */
    c->probe_step_us = now;
  }
  capacity_set_sigma (c, raised_sigma (c, p, k, step, known));
  return RULE_RAISE;
}

/* ---- the decision ---- */


/* The START rule: the first U, or hold. */
static int
decide_start (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  return rule_start (c, p, now, k->u) ? act_start (c, now, k) : RULE_HOLD;
}

/* The TRACK rules, in the order of the table; returns the rule taken. */
static int
decide (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
        double interval_us)
{
  capacity_vote_loss (c, p, k);
  if (rule_probed (c, k))
    return act_probed (c, p, now, k);
  if (room_again (c, p, k))
    forget_probes (c);
  if (rule_cut (k))
    return act_cut (c, p, now, k, interval_us);
  c->drain_until_us = 0;   /* any other verdict ends a drain */
  if (capacity_rule_deficit (c, k))
    return capacity_act_deficit (c, now, k);
  if (capacity_rule_loss (c, p))
    return capacity_act_loss (c, p, now, k);
  if (rule_raise (k))
    return act_raise (c, p, now, k);
  return RULE_HOLD;
}

/* ---- each tick ---- */

/* Returns the queue above which the next decision cannot wait, µs: twice
 * the last target plus its band (cross traffic arrived; at 960 kbit/s 320
 * kbit/s of UDP fill a 150-ms buffer in 0.4 s) — none (infinity) before the
 * last decision's RTT is over (its cut cannot show sooner). */
static double
urgent_bar (const BwssCapacity *c, uint64_t now)
{
  if (c->phase != BWSS_PHASE_TRACK || c->queue_target_us <= 0.0
      || (double) (now - c->last_decision_us) < c->last_rtt_us)
    return INFINITY;
  return 2.0 * c->queue_target_us + 2.0 * c->last_band_us;
}

/* No flows: the loop idles. */
static bool
go_idle (BwssCapacity *c, uint64_t now)
{
  if (c->phase == BWSS_PHASE_IDLE)
    return false;
  enter (c, BWSS_PHASE_IDLE, now);
  c->last_rule = RULE_IDLE;
  return true;
}

/* The first flow: the minima only, while a first U is measured — the
 * windows hold from the first RTT, so no slow start of plain TCP fills the
 * buffer before a video has its minimum. */
static bool
start_at_minima (BwssCapacity *c, const BwssParams *p, uint64_t now,
                 const BwssCapacityFlow *flows, size_t n)
{
  double minima = 0.0;
  for (size_t i = 0; i < n; i++)
    minima += flows[i].min_rate_bps;
  capacity_set_sigma (c, minima);
  enter (c, BWSS_PHASE_START, now);
  c->next_decision_us = now + p->release_us;
  return true;
}

/* The drain is over: cruise. */
static void
end_drain (BwssCapacity *c, uint64_t now)
{
  if (!c->drain_until_us || now < c->drain_until_us)
    return;
  c->drain_until_us = 0;
  if (c->cruise_bps > c->sigma_bps)
    capacity_set_sigma (c, c->cruise_bps);
}

/* The raise boost doubles while raises find the queue empty; anything but
 * a hold under target resets it. */
static void
update_boost (BwssCapacity *c, int rule, const CapacityCounts *k)
{
  if (rule == RULE_RAISE && queue_empty (k))
    c->raise_boost = c->raise_boost < MAX_BOOST ? 2.0 * c->raise_boost : MAX_BOOST;
  else if (rule != RULE_HOLD || !under_target (k))
    c->raise_boost = 1.0;
}

/* The link seen busy (capacity.h, "Busy"): U while the queue is at its
 * target or above: what the link gives us now
 * (what the raise ramps to; a shorter queue, as the kernel's average shows
 * it, may have been empty for part of the interval), at most max_raise
 * above the last such U (a burst measured over a short interval is not the
 * link); and the largest of those (what read pacing may rely on,
 * controller.c). */
static void
note_busy_link (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k)
{
  /* in COMPETE the queue is the neighbour's too: U is our share, not the link */
  if (c->phase != BWSS_PHASE_TRACK || !(k->q >= 0.0 && k->q >= k->qt))
    return;
  double busy = k->u_link;
  if (c->busy_link_bps > 0.0 && busy > (1.0 + p->max_raise) * c->busy_link_bps)
    busy = (1.0 + p->max_raise) * c->busy_link_bps;
  capacity_note_busy (c, now, busy);
}

/* Regime "moving": a link whose rate moves faster than the loop settles
 * (a Wi-Fi station's rate, a new one every few hundred ms).  What the link
 * seen busy said of it is past within a level: the ramp that stops at it
 * stops at the last dip.  The samples are the links seen busy of the last
 * MOVING_WINDOW_US, in their order: the link moves when one of them fell
 * below an earlier one and a later one rose above the least since, each
 * by a factor (MOVING_SPREAD_IN to enter, MOVING_SPREAD_OUT to stay): a dip
 * the link came back from.  A step (the link falls and stays, or comes
 * back after longer than the window), a neighbour that comes and goes
 * slower than that, and the start's climb that a first cut ends (a rise,
 * then a fall) are no dip; the Wi-Fi trace's levels (0.5-1.5 of its mean)
 * dip and come back every few hundred ms.  (A probe that found a queue
 * waits twice as long before the next here too: not doubling the wait
 * cost the 60-ms wifi cell 4-6 points at two tick phases of ten.) */
#define MOVING_WINDOW_US  (5ull * 1000000ull)  /* fifteen levels of the trace; a step
                                                * that lasts longer is two steps */
#define MOVING_SPREAD_IN  1.3
#define MOVING_SPREAD_OUT 1.15                  /* hysteresis: levels near the mean */

static void
update_moving (BwssCapacity *c, uint64_t now)
{
  if (c->phase != BWSS_PHASE_TRACK) {
    c->moving = false;
    return;
  }
  double spread = c->moving ? MOVING_SPREAD_OUT : MOVING_SPREAD_IN;
  double lo = INFINITY, hi = 0.0;
  bool fell = false, rose = false;
  for (unsigned j = 0; j < BWSS_CAPACITY_BUSY_HISTORY; j++) {
    unsigned i = (c->busy_seen_head + j) % BWSS_CAPACITY_BUSY_HISTORY;   /* oldest first */
    uint64_t at = c->busy_seen_at_us[i];
    if (!at || now - at > MOVING_WINDOW_US)
      continue;
    double b = c->busy_seen_bps[i];
    if (fell && b >= spread * lo)
      rose = true;
    if (!fell && hi > 0.0 && b * spread <= hi) {
      fell = true;
      lo = b;
    }
    lo = fmin (lo, b);
    hi = fmax (hi, b);
  }
  c->moving = fell && rose;
}

/* Returns when the decision after one at @now is due, @interval_us on.
 * While the caller steps more than a control period apart (rounds once per
 * estimation period, controller.c), a decision lands on the first step at
 * or after its due time, up to a gap late; counted from that step, every
 * interval would stretch by the lateness (a 290-ms interval became 320 ms
 * at 40-ms steps, and the start's raises came that much slower).  So the
 * next interval counts from the due time this decision was late for, as
 * long as that leaves decision_min_us at least after this one (U is a mean
 * over that much at least, controller.c: a decision sooner would judge
 * bytes from before this one's change — the model's on-off cross traffic
 * then found the link a second late at four tick phases of ten).  From
 * @now after an urgent decision, a late one by a gap or more, and at every
 * period's step (the lateness then under a period, as the loop was
 * tuned). */
static uint64_t
next_decision (const BwssCapacity *c, const BwssParams *p, uint64_t now, uint64_t interval_us)
{
  uint64_t due = c->next_decision_us;
  if (c->round_gap_us > p->min_phi_us && due != 0 && due <= now && now - due < c->round_gap_us
      && due + interval_us >= now + p->decision_min_us)
    return due + interval_us;
  return now + interval_us;
}

/* Keeps what this decision measured, for the statistics and the next one,
 * due @interval_us from @now. */
static void
record (BwssCapacity *c, const BwssParams *p, uint64_t now, const CapacityCounts *k,
        uint64_t interval_us, double since_last_us)
{
  c->queue_us = k->q;
  c->queue_target_us = k->qt;
  c->last_band_us = k->band;
  c->link_bps = k->link;
  note_busy_link (c, p, now, k);
  capacity_groups_record (c, now, k);
  update_moving (c, now);
  if (c->phase == BWSS_PHASE_TRACK && k->own > 0)
    c->per_flow = true;              /* regime "per-flow queues": entry */
  if (k->q >= c->queue_peak_us || now - c->queue_peak_at_us > p->own_queue_memory_us) {
    c->queue_peak_us = k->q;
    c->queue_peak_at_us = now;
  }
  c->last_rtt_us = k->rtt_ref;
  capacity_u_record (c, k->u, since_last_us);
  c->prev_queue_us = k->q;
  c->last_decision_us = now;
  c->next_decision_us = next_decision (c, p, now, interval_us);
}

/* What this decision counted, for bwss_controller_last_decision(); the
 * detector adds its verdict in TRACK (capacity-compete.c). */
static void
see_counts (BwssCapacity *c, const CapacityCounts *k)
{
  c->detect_seen = BWSS_SEEN_NONE;
  c->detect_missing = 0;
  c->seen_bulk = (uint32_t) k->bulk;
  c->seen_floored = (uint32_t) k->bulk_floored;
  c->seen_lost = (uint32_t) k->lost;
  c->seen_short = (uint32_t) k->short_min;
  c->seen_overrun = (uint32_t) k->overrun;
}

/* With CAPACITY_DEBUG, one line per decision on stderr. */
static void
trace_decision (const BwssCapacity *c, uint64_t now, int rule, double sigma_before,
                const CapacityCounts *k)
{
#ifdef CAPACITY_DEBUG
  fprintf (stderr, "%8.3f %-9s%s %-9s σ %7.0f→%7.0f U %7.0f kept %7.0f unused %5.0f q %6.1f qt %6.1f hungry %zu own %zu\n",
           now / 1e6, bwss_phase_name (c->phase), c->moving ? "~" : " ", rule_names[rule], sigma_before / 1e3,
           c->sigma_bps / 1e3, k->u / 1e3, k->u_kept / 1e3, k->unused / 1e3, k->q / 1e3,
           k->qt / 1e3, k->hungry, k->own);
#endif
}

/* Each tick: idle without flows, the minima for a first flow, the end of a
 * drain; then, once the interval is over (or at once if urgent), one pass
 * that counts, the rule, and the record. */
double
bwss__capacity_due_bar (const BwssCapacity *c, uint64_t now, size_t n)
{
  if (n == 0 || c->phase == BWSS_PHASE_IDLE || now >= c->next_decision_us)
    return -INFINITY;
  return urgent_bar (c, now);
}

bool
bwss__capacity_minima (BwssCapacity *c, const BwssParams *p, double minima)
{
  if ((c->phase != BWSS_PHASE_START && c->phase != BWSS_PHASE_TRACK)
      || !(c->sigma_bps < minima_band (p, minima)))
    return false;
  capacity_set_sigma (c, minima);
  c->probe_from_bps = 0.0;             /* a step from below the minima says nothing */
  return true;
}

bool
bwss__capacity_pass (BwssCapacity *c, uint64_t now)
{
  double sigma_before = c->sigma_bps;
  end_drain (c, now);
  return c->sigma_bps != sigma_before;
}

bool
bwss__capacity_step (BwssCapacity *c, const BwssParams *p, uint64_t now,
                    double u, const BwssCapacityFlow *flows, size_t n)
{
  if (!isfinite (u) || u < 0.0)
    u = 0.0;
  if (n == 0)
    return go_idle (c, now);
  if (c->phase == BWSS_PHASE_IDLE)
    return start_at_minima (c, p, now, flows, n);
  double sigma_before = c->sigma_bps;
  end_drain (c, now);
  if (now < c->next_decision_us && !(bwss__capacity_queue (flows, n) > urgent_bar (c, now)))
    return c->sigma_bps != sigma_before;

  BwssPhase phase_before = c->phase;
  double since_last = c->last_decision_us ? (double) (now - c->last_decision_us) : 0.0;
  CapacityCounts k = capacity_count (c, p, now, u, flows, n, since_last);
  see_counts (c, &k);
  int rule;
  if (c->phase == BWSS_PHASE_START)
    rule = decide_start (c, p, now, &k);
  else if (c->phase == BWSS_PHASE_COMPETE)
    rule = capacity_compete_decide (c, p, now, &k, since_last);
  else {
    rule = decide (c, p, now, &k, since_last);
    if (capacity_compete_watch (c, p, now, &k, since_last))
      rule = RULE_ENTER;
  }
  update_boost (c, rule, &k);
  c->last_rule = (uint32_t) rule;
  trace_decision (c, now, rule, sigma_before, &k);
  /* in COMPETE the queue stands: the flows' RTT holds it, not the target */
  double held = c->phase == BWSS_PHASE_COMPETE && k.q > k.qt ? k.q : k.qt;
  record (c, p, now, &k, bwss__capacity_interval (p, flows, n, held), since_last);
  return c->phase != phase_before || c->sigma_bps != sigma_before;
}

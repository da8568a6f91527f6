/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity.h — between the delay loop's model (capacity-model.c) and its
 * rules (capacity.c, and capacity-full.c for a full link without a standing
 * queue): what one decision counts, the queue's three predicates and the
 * rules' names.  Internal to those three.
 */
#ifndef BWSS_CAPACITY_H
#define BWSS_CAPACITY_H

#include <string.h>
#include "laws.h"

/* What a decision of the delay loop sees, from one pass over the flows. */
typedef struct {
  double u;            /* U, bit/s */
  double q;            /* the link's queue, µs; negative if unknown */
  double q_peak;       /* its largest within own_queue_memory_us, µs */
  double qt;           /* its target, µs */
  double rtt_ref;      /* b̄ + q_t, µs */
  double minima;       /* Σ m_i, bit/s */
  size_t hungry;       /* flows using all their target, held by their window */
  size_t held;         /* flows held by their window */
  double u_kept;       /* Σ max(R_i, m_i): U with every minimum kept, bit/s */
  double u_lost;       /* Σ R_i of the flows short of target, held neither by their
                        * window nor at their minimum */
  double unused;       /* Σ T_i − max(R_i, m_i) of the flows not held by their window */
  double idle;         /* Σ T_i − R_i of the flows not held by their window: σ that
                        * is not on the link, minima unused for reserve_hold_us
                        * included */
  size_t own;          /* flows with a queue of their own (own_queue) */
  double banded;       /* Σ T_i − R_i of the flows their window holds within α
                        * below their target: σ their FCSs keep off the link */
  double deficit;      /* Σ m_i − R_i of the flows below (1−α)·m_i with a queue of
                        * their own, or for less than reserve_hold_us: minima the
                        * link may be what denies */
  double deficit_own;  /* ... of those with a queue of their own: minima the link
                        * denies (their own evidence) */
  size_t short_lost;   /* flows counted in the deficit that lost segments */
  double band;         /* half the dead zone around q_t, µs */
  double u_link;       /* U over link_window_us at least: the link's rate for us */
  double link;         /* the link's rate for C2 and the band, bit/s */
  size_t bulk;         /* flows without a minimum */
  size_t bulk_floored; /* ... allocated no more than their floor: σ holds them down */
  size_t lost;         /* flows that lost segments during the interval */
  size_t short_min;    /* flows below their minimum ((1−α)·m_i) ... */
  double shortfall;    /* ... Σ m_i − R_i over them, bit/s */
  double carried;      /* Σ R_i of the flows (streams, G1) with a minimum, a flow not
                        * measured yet at its minimum, bit/s */
  size_t overrun;      /* flows moving well above their target, minimum and floor
                        * (released: a player's fragment): they may fill the queue */
  size_t above_min;    /* flows (streams, G1) with a minimum moving above (1+α)·m_i, whatever
                        * holds them: their source's backlog may be what fills the queue */
  size_t groups;       /* streams over several flows judged as one (G1-G3) ... */
  uint64_t group_key[BWSS_CAPACITY_GROUPS];   /* ... their keys ... */
  bool   group_below[BWSS_CAPACITY_GROUPS];   /* ... and which are below their minimum (G2) */
} CapacityCounts;

/* The rules, in the order of capacity.c's table (bwss__capacity_rule_name). */
enum { RULE_NONE = 0, RULE_START, RULE_PROBED, RULE_CUT, RULE_DEFICIT, RULE_LOSS, RULE_RAISE,
       RULE_HOLD, RULE_IDLE,
       /* the COMPETE state's (capacity-compete.c) */
       RULE_ENTER, RULE_COMPETE, RULE_YIELD, RULE_DRAIN, RULE_EXIT };

/* The queue above its target and band. */
static inline bool
over_target (const CapacityCounts *k)
{
  return k->q >= 0.0 && k->q > k->qt + k->band;
}

/* The queue below its target and band. */
static inline bool
under_target (const CapacityCounts *k)
{
  return k->q >= 0.0 && k->q < k->qt - k->band;
}

/* The queue is "empty": within the band of nothing. */
static inline bool
queue_empty (const CapacityCounts *k)
{
  return k->q >= 0.0 && k->q <= k->band;
}

/* Busy, the one definition.  The link is busy when it carries all it can
 * give us: then σ above it shows as a queue.  The loop reads that two ways:
 *   - the link seen busy (BwssCapacity.busy_link_bps): U at a decision that
 *     found the queue at its target or above, so U is what the link
 *     delivers (note_busy_link, capacity.c; on a flow's own evidence, rule
 *     "deficit", capacity-full.c);
 *   - the link busy at this decision (link_busy): a queue above the band
 *     now or at the last decision — an AQM's queue comes and goes with its
 *     drops, decision by decision, and a short one is all a full link
 *     behind an AQM or a short buffer shows. */
static inline bool
link_busy (const BwssCapacity *c, const CapacityCounts *k)
{
  return !queue_empty (k) || c->prev_queue_us > k->band;
}

/* Sets σ (bit/s, 0 for anything not positive) and counts a change. */
static inline void
capacity_set_sigma (BwssCapacity *c, double sigma)
{
  if (!(sigma > 0.0))
    sigma = 0.0;
  if (sigma != c->sigma_bps)
    c->changes++;
  c->sigma_bps = sigma;
}

/* The one pass that counts, for a decision at @now whose aggregate is @u
 * over the @interval_us since the last one. */
CapacityCounts capacity_count (const BwssCapacity *c, const BwssParams *p, uint64_t now, double u,
                               const BwssCapacityFlow *flows, size_t n, double interval_us);

/* Keeps which streams over several flows (G1-G3) this decision at @now
 * found below their minimum, and since when. */
void capacity_groups_record (BwssCapacity *c, uint64_t now, const CapacityCounts *k);

/* Records this decision's U over @interval_us: the link's rate is U over
 * the last decisions. */
void capacity_u_record (BwssCapacity *c, double u, double interval_us);

/* Records @busy as the link seen busy at @now (its largest, and the
 * samples regime "moving" reads: capacity.c). */
static inline void
capacity_note_busy (BwssCapacity *c, uint64_t now, double busy)
{
  c->busy_link_bps = busy;
  if (busy > c->link_max_bps)
    c->link_max_bps = busy;
  c->busy_seen_bps[c->busy_seen_head] = busy;
  c->busy_seen_at_us[c->busy_seen_head] = now ? now : 1;
  c->busy_seen_head = (c->busy_seen_head + 1) % BWSS_CAPACITY_BUSY_HISTORY;
}

/* capacity-full.c: rules "deficit" and "loss" (predicate, action), and the
 * vote every decision casts for "loss". */
bool capacity_rule_deficit (const BwssCapacity *c, const CapacityCounts *k);
int  capacity_act_deficit (BwssCapacity *c, uint64_t now, const CapacityCounts *k);
bool capacity_rule_loss (const BwssCapacity *c, const BwssParams *p);
int  capacity_act_loss (BwssCapacity *c, const BwssParams *p, uint64_t now,
                        const CapacityCounts *k);
void capacity_vote_loss (BwssCapacity *c, const BwssParams *p, const CapacityCounts *k);

/* TRACK's memory of its own steps and of the link it saw busy — the one
 * place it is reset: at the start (capacity.c), and when COMPETE begins or
 * ends (capacity-compete.c): what TRACK learned before COMPETE is not the
 * link beside the neighbour, and what the loop moved in COMPETE was its
 * share beside it, not the link. */
static inline void
capacity_forget_track (BwssCapacity *c)
{
  c->busy_link_bps = 0.0;
  memset (c->busy_seen_at_us, 0, sizeof c->busy_seen_at_us);
  c->busy_seen_head = 0;
  c->moving = false;
  c->per_flow = false;
  c->cruise_bps = 0.0;
  c->drain_until_us = 0;
  c->last_probed_us = 0;
  c->probe_wait_us = 0;
  c->probe_from_bps = 0.0;
  c->probe_step_us = 0;
  c->raise_boost = 1.0;
  c->last_loss_us = 0;
  c->loss_votes = 0;
}

/* capacity-compete.c: the state beside traffic the loop does not control —
 * its fields at the start (the one place they are set so); in TRACK, the
 * detector (called at every decision, after the rule): returns true if it
 * entered COMPETE; in COMPETE, the decision: returns the rule. */
void capacity_compete_init (BwssCapacity *c);
bool capacity_compete_watch (BwssCapacity *c, const BwssParams *p, uint64_t now,
                             const CapacityCounts *k, double interval_us);
int  capacity_compete_decide (BwssCapacity *c, const BwssParams *p, uint64_t now,
                              const CapacityCounts *k, double interval_us);

#endif /* BWSS_CAPACITY_H */

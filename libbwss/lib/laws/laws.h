/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * laws.h — the control laws' own state and functions, private to libbwss.
 *
 * The controller (controller.c, bwss/control.h) is the laws' one public
 * face: it owns an FCS and a base RTT per flow and both σ loops, and runs
 * them on its injected clock (the block diagram is bwss/control.h's).  Their
 * state structs and functions are declared here: not installed, not
 * exported (libbwss is built with -fvisibility=hidden and none of them is
 * BWSS_API), so their layout is no ABI.  The unit tests and fuzz targets,
 * which link the laws statically, include this header to drive one law on
 * its own.
 *
 * What stays in bwss/control.h, and for whom: the tunables (BwssParams,
 * BwssLoop), the preferences and bwss_allocate() (the install test's
 * consumer), the rate estimator's init, sample and mean (the element's
 * statistics, gst-plugin/srcstats.c), BwssFcsState and BwssPhase (the
 * controller's and the domain's statistics, bwss-top), the controller.
 */
#ifndef BWSS_LAWS_H
#define BWSS_LAWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <bwss/control.h>

/* ---- target rate allocation with demand caps (allocation.c) ---- */

/* The TRAS with demand caps (allocation.c, eq. 6'): flow i takes at most
 * @caps[i] bit/s (negative or infinite: no cap; a cap below m_i counts as
 * m_i), and what the capped flows leave goes to the others by eq. (6);
 * if every flow is capped the rest is split by eq. (6) over all, so Σ T =
 * σ still holds.  Below Σm eq. (7) as bwss_allocate.  @caps NULL is
 * bwss_allocate.  @prefs are trusted: validated where they entered the
 * laws (bwss_controller_add_flow, bwss_controller_set_prefs), not again per
 * allocation.  Returns 0, BWSS_EINVAL (σ negative or not finite, a NULL
 * array, a NaN cap; @targets untouched) or BWSS_ENOMEM. */
int bwss__allocate_capped (double sigma, const BwssPrefs *prefs, const double *caps,
                          size_t n, double *targets);

/* The TRAS over groups (allocation.c, eq. 5g and 5m): flows of one
 * non-zero @groups key are split σ as one participant (its largest
 * priority, minimum and weight; capped when every member is, by Σ of the
 * caps), then its target among them (the group's minimum in proportion to
 * the members' own minima, the rest by their weights, caps water-filled
 * within the group first).  Key 0 is a group of its own; @groups NULL is
 * bwss__allocate_capped.  @prefs trusted as there.  @minima, if not NULL,
 * gets each flow's part of its group's minimum (m_i' of eq. 5m; m_i for a
 * flow alone): the floor the loops keep for it.  Returns 0, BWSS_EINVAL
 * (as bwss__allocate_capped; @targets untouched) or BWSS_ENOMEM (@targets
 * and @minima then undefined). */
int bwss__allocate_grouped_capped (double sigma, const BwssPrefs *prefs, const double *caps,
                                  const uint64_t *groups, size_t n, double *targets,
                                  double *minima);

/* ---- the minimum rate ---- */

/* Returns true if a flow of minimum @min_rate_bps that moves @rate_bps is
 * below its minimum: it has one, its rate is known (>= 0), and the rate is
 * under (1 − α)·m — the FCS's own slack (Sec. IV-A): within it a flow is at
 * its target.  The one definition the controller and the delay loop use. */
static inline bool
bwss__below_minimum (double rate_bps, double min_rate_bps, double alpha)
{
  return min_rate_bps > 0.0 && rate_bps >= 0.0 && rate_bps < (1.0 - alpha) * min_rate_bps;
}

/* ---- rate estimator (estimator.c): what the laws add ---- */

/* Discards the running period and the average R: the next period starts at
 * @start_us (e.g. one RTT after a window change, when it takes effect) and
 * its result replaces R.  Until then samples only track the byte count.
 * The meter's history is kept (it measures what arrived, whatever the
 * window). */
void bwss__estimator_restart (BwssEstimator *e, uint64_t start_us);

/* Returns the bytes counted over the @window_us before the last sample
 * (interpolated like bwss_estimator_mean), 0 with no history. */
double bwss__estimator_bytes (const BwssEstimator *e, uint64_t window_us);
/* Both at once: bwss_estimator_mean() in *@mean, the bytes in *@bytes. */
void bwss__estimator_window (const BwssEstimator *e, uint64_t window_us, double *mean,
                             double *bytes);
/* A bound from above of bwss__estimator_bytes (@e, @window_us), for a
 * meter fed with @meter_step_us, in one read of its history: the bytes
 * since the entry 1 + ⌈window / step⌉ back from the newest (or the oldest
 * there is), which lies at or before the window's start (entries are a
 * step apart at least, the counter never falls within the history).  A
 * caller asking "at least so many bytes?" of many flows asks this first. */
double bwss__estimator_bytes_bound (const BwssEstimator *e, uint64_t window_us,
                                    uint64_t meter_step_us);

/* ---- flow control system (Sec. IV-A, fcs.c) ---- */

typedef struct {
  BwssEstimator est;
  BwssFcsState  state;
  uint32_t      window;        /* w in segments; 0 while released */
  bool          sub;           /* the window is min_window_bytes, below a segment */
  bool          paced;         /* the receiver can pace its reads (bwss__fcs_set_paced) */
  bool          pacing;        /* ... and does: the reads carry T, not the window */
  uint64_t      hold_until_us; /* no adjustment before this time */
  uint64_t      changed_us;    /* time of the last window change */
  uint32_t      periods_at_change; /* estimator periods needed before deciding */
  double        target_bps;    /* the target the window was last set for */
  double        debt_bits;     /* dither: ∫(T − R)dt since the target was set */
} BwssFcs;

void bwss__fcs_init (BwssFcs *f);

/* Releases the constraint (window 0 = kernel default).  The estimator keeps
 * running. */
void bwss__fcs_release (BwssFcs *f);

/* One FCS step at @now_us for target @target_bps with RTT @rtt_us (the
 * RTT the window is sized for: the measured one in the paper's loop, the
 * base RTT plus the queue target in the delay loop) and segment size @mss
 * bytes (0 = params->default_mss).  The caller has fed the estimator
 * (bwss__fcs_observe) first.  If released, starts the law with w = T·RTT/p
 * (eq. 1).  A target moved by more than rescale_threshold from the one the
 * window was set for rescales it at once (w·T'/T); one cut below
 * restart_fraction of it restarts from eq. (1).  Otherwise, once the hold is
 * over and a fresh estimate exists: no change inside [(1−α)T, (1+α)T]; above
 * it w −= eq. (3); below it w += max(eq. (4), 1); w stays within
 * [min_window, cap].  Returns the window in segments (0 if released because
 * the RTT is still unknown). */
uint32_t bwss__fcs_step (BwssFcs *f, const BwssParams *params,
                        uint64_t now_us, double target_bps,
                        uint32_t rtt_us, uint32_t mss);

/* Feeds a cumulative byte count into the FCS's estimator, with φ derived from
 * @rtt_us.  Returns true when a new estimate was produced. */
bool bwss__fcs_observe (BwssFcs *f, const BwssParams *params,
                       uint64_t now_us, uint64_t bytes,
                       uint32_t rtt_us);

/* Returns true if @f holds its smallest whole window (or the sub-segment
 * one) for segments of @mss bytes (0 = params->default_mss). */
bool bwss__fcs_at_floor (const BwssFcs *f, const BwssParams *params, uint32_t mss);

/* Returns the window to apply, bytes: w·@mss (0 = released), or
 * min_window_bytes below a segment. */
uint32_t bwss__fcs_window_bytes (const BwssFcs *f, const BwssParams *params,
                                uint32_t mss);

/* Says whether the receiver can pace the flow's reads (params->pace_reads
 * and the caller's own conditions).  While it can, the reads carry the
 * target (open loop: they are exact) under a window one segment above what
 * the target needs per RTT, at least pace_window_segments; when it no
 * longer can, the window takes over again from eq. (1). */
void bwss__fcs_set_paced (BwssFcs *f, const BwssParams *params, bool paced);

/* Returns the slowest rate any controlled flow is read at, bit/s:
 * progress_bytes per progress_period_us (fcs.c: the progress law). */
double bwss__progress_floor_bps (const BwssParams *params);

/* Returns the rate at which the receiver should read the flow, bit/s:
 * @target_bps (at least pace_min_bps and the progress floor) while the
 * reads carry it; 0 (read freely) otherwise. */
double bwss__fcs_pace_bps (const BwssFcs *f, const BwssParams *params,
                          double target_bps);

/* Returns the estimation period φ for @rtt_us, µs (φ = phi_rtts·RTT, at
 * least min_phi_us). */
uint64_t bwss__fcs_phi_us (const BwssParams *params, uint32_t rtt_us);

/* Returns the hold after a window change, µs: RTT + wait_phis·φ. */
uint64_t bwss__fcs_hold_us (const BwssParams *params, uint32_t rtt_us);

/* ---- the paper's σ loop (sigma.c) ---- */

/* What the σ loop sees of one flow. */
typedef struct {
  double rate_bps;       /* R_i, negative if no estimate yet */
  double target_bps;     /* T_i currently allocated */
  bool   settled;        /* the FCS has had time to reach T_i (see controller) */
  bool   at_floor;       /* its window is at the minimum: it cannot be slowed more */
  bool   tracked;        /* in/out: the flow is tracked as congested */
  double tracked_target; /* in/out: T* of a tracked flow */
} BwssSigmaFlow;

typedef struct {
  BwssPhase phase;
  double    sigma_bps;
  double    u_ref_bps;     /* aggregate of reference (raise / link congestion) */
  double    sigma_good_bps;/* last σ of the raise phase that made U rise */
  uint64_t  phase_since_us;
  uint64_t  next_decision_us;
  uint64_t  next_reinit_us;
  uint64_t  next_probe_us;    /* LINK_CONGESTED: next raise probe */
  uint64_t  probe_backoff_us; /* ... and the wait after the one after it */
  bool      after_congestion; /* a raise that fails returns to LINK_CONGESTED */
  bool      excess_seen;      /* since flows went below γ·T, another was above */
  bool      congestion_settled; /* LINK_CONGESTED: σ re-taken from a settled U */
  bool      rebase;        /* RAISE: the flow set changed, take U of reference again */
  uint32_t  changes;       /* count of σ changes, for statistics */
} BwssSigma;

void bwss__sigma_init (BwssSigma *s);

/* Restarts the initialisation (release phase) at @now_us. */
void bwss__sigma_reinit (BwssSigma *s, uint64_t now_us);

/* A flow started or stopped at @now_us: goes to the raise phase from the
 * current σ, one settle interval later; if already raising, takes U of
 * reference again at the next decision. */
void bwss__sigma_probe (BwssSigma *s, uint64_t now_us);

/* One decision of the σ loop at @now_us over @n flows whose aggregate rate is
 * @aggregate_bps; @settle_us is how long the FCSs need to follow a new σ.
 * Returns true if σ or the phase changed (the caller re-runs the TRAS). */
bool bwss__sigma_step (BwssSigma *s, const BwssParams *params,
                      uint64_t now_us, double aggregate_bps,
                      BwssSigmaFlow *flows, size_t n,
                      uint64_t settle_us);

/* ---- base RTT (basertt.c) ---- */

/* A flow's base RTT: the smallest receiver RTT it has shown, or, for a flow
 * that joined behind a queue, its RTT less the queue the other flows
 * measure (basertt.c explains why it never expires). */
typedef struct {
  uint32_t base_us;   /* 0 = no sample yet */
  uint32_t floor_us;  /* the smallest RTT sample, 0 = none: a seed's upper bound */
  uint32_t samples;   /* RTT samples taken */
  bool     seeded;    /* the base came from the others' queue */
} BwssBaseRtt;

void bwss__base_rtt_init (BwssBaseRtt *b);
/* Feeds a receiver RTT sample @rtt_us (0 = none). */
void bwss__base_rtt_sample (BwssBaseRtt *b, uint32_t rtt_us);
/* A flow whose RTT is @rtt_us while the link's queue is @queue_us (measured
 * on the other flows): its base is at most the difference. */
void bwss__base_rtt_seed (BwssBaseRtt *b, uint32_t rtt_us, double queue_us);
/* A seeded flow whose RTT is @rtt_us while the link's queue is a calm
 * @queue_us: its base is at least the difference, and at most its smallest
 * sample (basertt.c: a seed that fell short). */
void bwss__base_rtt_reseed (BwssBaseRtt *b, uint32_t rtt_us, double queue_us);
/* Returns the base RTT, µs; 0 if none yet. */
uint32_t bwss__base_rtt_get (const BwssBaseRtt *b);

/* ---- the delay loop (capacity-model.c: model, measures; capacity.c: rules) ---- */

/* Decisions whose U the link's rate is averaged over (link_window_us). */
#define BWSS_CAPACITY_U_HISTORY 16
#define BWSS_CAPACITY_BUSY_HISTORY 32
/* Streams over several flows the loop judges as one at a decision
 * (capacity-model.c, G1-G3): a host plays a few videos at once; a group
 * beyond these is judged flow by flow, as the loop judges every flow
 * without the law. */
#define BWSS_CAPACITY_GROUPS 8

/* What the delay loop sees of one flow over the last decision interval. */
typedef struct {
  double   rate_bps;      /* mean rate over the interval, negative if unknown */
  double   target_bps;    /* T_i allocated (0 while released) */
  double   min_rate_bps;  /* m_i */
  uint32_t rtt_us;        /* receiver RTT now, 0 unknown */
  uint32_t base_rtt_us;   /* its base RTT, 0 unknown */
  uint32_t mss;           /* bytes */
  bool     fresh;         /* data arrived during the interval: rtt_us is current */
  bool     window_limited;/* it moved (nearly) a window per RTT: its window holds it,
                           * not its source or another path */
  uint64_t below_min_us;  /* how long it has moved less than its minimum, µs; 0 = not */
  bool     lost;          /* segments arrived after a hole during the interval: the
                           * network dropped some of its data */
  uint64_t group;         /* one stream with the other flows of this key: its minimum is
                           * judged on their sums (capacity-model.c, G1-G3); 0 = alone */
} BwssCapacityFlow;

typedef struct {
  BwssPhase phase;
  double    sigma_bps;
  double    queue_us;         /* the access link's queueing delay, last decision */
  double    queue_target_us;  /* q_t, last decision */
  double    last_band_us;     /* its dead zone's half width, last decision */
  double    link_bps;         /* the link's rate C2 saw, last decision */
  double    busy_link_bps;    /* the link seen busy (capacity.h, "Busy"): U when it
                               * last was, what it gives us; 0 = never */
  double    link_max_bps;     /* the largest of those, 0 = never */
  double    busy_seen_bps[BWSS_CAPACITY_BUSY_HISTORY];  /* the last of those, ... */
  uint64_t  busy_seen_at_us[BWSS_CAPACITY_BUSY_HISTORY];/* ... when (0: none) */
  uint32_t  busy_seen_head;
  bool      per_flow;         /* TRACK's regime "per-flow queues": a flow showed a
                               * queue of its own (capacity.c) */
  bool      moving;           /* TRACK's regime "moving": the link seen busy
                               * spreads (capacity.c) */
  double    queue_peak_us;    /* the link's largest queue lately (own_queue_memory_us) */
  uint64_t  queue_peak_at_us; /* ... measured then */
  double    cruise_bps;       /* σ after the running drain (rule "cut") */
  double    u_hist[BWSS_CAPACITY_U_HISTORY];   /* U of the last decisions ... */
  uint64_t  u_hist_us[BWSS_CAPACITY_U_HISTORY];/* ... over these intervals, µs */
  uint32_t  u_hist_head;
  uint64_t  last_probed_us;   /* the last rule "probed", 0 = never */
  uint64_t  probe_wait_us;    /* the wait after it, µs (0: params' first) */
  double    probe_from_bps;   /* σ before the last step of the running probe, 0 = none */
  uint64_t  probe_step_us;    /* ... that step's time */
  uint64_t  drain_until_us;   /* end of the running drain, 0 = none */
  double    last_rtt_us;      /* b̄ + q_t, last decision */
  uint64_t  phase_since_us;
  uint64_t  next_decision_us;
  uint64_t  last_decision_us;
  uint64_t  round_gap_us;     /* the gap of the caller's steps while flows are measured
                               * at every step, µs (set before each; 0 = none is) */
  double    prev_queue_us;    /* at the previous decision, -1 if none */
  double    raise_boost;      /* multiplies the raise while the queue stays empty */
  uint64_t  last_loss_us;     /* the last decision of rule "loss", 0 = never */
  uint32_t  loss_votes;       /* decisions in a row that found σ above the link */
  uint32_t  changes;          /* count of σ changes, for statistics */
  uint32_t  last_rule;        /* the rule of the last decision (capacity.c) */
  /* beside traffic the loop does not control (capacity-compete.c) */
  double    foreign_score;    /* TRACK: the share of the detector's memory in which the
                               * queue stood while σ held the downloads down, [0, 1] */
  double    minima_owed_bits; /* TRACK: what the flows with a minimum fell short of it
                               * (Σ (m_i − R_i)·dt) less what they moved above it since,
                               * bits, ≥ 0: what their sources hold back to catch up */
  double    link_alone_bps;   /* the most U reached with the queue ours and at its
                               * target: the link this host has to itself, 0 = unknown */
  uint64_t  compete_probe_at_us;   /* COMPETE: the next drain is due, µs */
  uint64_t  compete_drain_until_us;/* COMPETE: the running drain ends, 0 = none */
  double    compete_sigma_before;  /* COMPETE: what the flows moved before the last drain,
                               * bit/s (the windows bind until they move it again) */
  uint64_t  compete_yield_at_us;    /* COMPETE: the last yield to a minimum */
  uint32_t  compete_yield_votes;    /* COMPETE: decisions in a row a minimum was missed */
  double    compete_short_score;    /* COMPETE: the share of the last reserve_hold_us a
                                     * minimum was missed by a fifth or more, [0, 1] */
  double    compete_carried;        /* COMPETE: what the flows with a minimum moved of
                                     * the minima over the last REPAIR_HOLDS reserve_hold_us
                                     * (capacity-compete.c), a fraction */
  uint64_t  compete_hold_us;  /* after COMPETE failed the video: no entry for this long,
                               * doubling (0: params' first) ... */
  uint64_t  compete_hold_until_us; /* ... until then */
  bool      compete_free;     /* COMPETE: σ binds nobody — the flows without a minimum
                               * are left to the kernel (controller.c) */
  /* what the detector saw at the last decision (bwss_controller_last_decision()) */
  uint32_t  detect_seen;      /* a BwssSeen */
  uint32_t  detect_missing;   /* BWSS_DETECT_* bits: the conditions of "foreign" it lacked */
  uint32_t  seen_bulk;        /* the downloads ... */
  uint32_t  seen_floored;     /* ... of them σ held at their floor */
  uint32_t  seen_lost;        /* flows that lost segments */
  uint32_t  seen_short;       /* flows below their minimum */
  uint32_t  seen_overrun;     /* flows well above their target, minimum and floor */
  /* the streams over several flows (capacity-model.c, G1-G3) at the last decision */
  uint64_t  group_key[BWSS_CAPACITY_GROUPS];            /* their keys, 0 = none ... */
  uint64_t  group_below_since_us[BWSS_CAPACITY_GROUPS]; /* ... below their minimum (G2)
                                                         * since, 0 = not */
} BwssCapacity;

void bwss__capacity_init (BwssCapacity *c);

/* Returns the name of the rule the last decision took ("cut", "raise", ...). */
const char *bwss__capacity_rule_name (const BwssCapacity *c);

/* Returns the queue target for these flows on a link of @link_bps, µs:
 * queue_target_min_us, and at least queue_target_packets packets of the
 * link, at most queue_target_max_us (capacity-model.c, C2). */
double bwss__capacity_queue_target (const BwssParams *params,
                                   const BwssCapacityFlow *flows, size_t n,
                                   double link_bps);

/* Returns the access link's queueing delay seen by these flows, µs: the
 * smallest excess of RTT over base among the fresh flows (the link's queue
 * delays every flow; a queue elsewhere on one path delays only that one).
 * Negative if no flow can tell. */
double bwss__capacity_queue (const BwssCapacityFlow *flows, size_t n);

/* Returns the decision interval for these flows, µs (decision_rtts RTTs of
 * the slowest, decision_segments segments of the fastest, within bounds). */
uint64_t bwss__capacity_interval (const BwssParams *params,
                                 const BwssCapacityFlow *flows, size_t n,
                                 double queue_target_us);

/* One step of the delay loop at @now_us over @n flows with aggregate @u_bps
 * (means since the last decision): decides if the interval is over, or at
 * once if the queue is far above target.  Call it every tick.  Returns true
 * if σ or the phase changed (the caller re-runs the TRAS). */
bool bwss__capacity_step (BwssCapacity *c, const BwssParams *params,
                         uint64_t now_us, double u_bps,
                         const BwssCapacityFlow *flows, size_t n);

/* Returns the flows' queue (bwss__capacity_queue()) above which
 * bwss__capacity_step() at @now_us reads its flows, µs: -infinity if it
 * does whatever the queue (no flow is left, the loop starts, a decision is
 * due), infinity if it does not, else the bar of a decision at once.  When
 * it does not, the step is bwss__capacity_pass(): only a drain may end
 * (returns true if σ changed), so a caller of many flows builds their view
 * only for the ticks that read it. */
double bwss__capacity_due_bar (const BwssCapacity *c, uint64_t now_us, size_t n);
bool bwss__capacity_pass (BwssCapacity *c, uint64_t now_us);

/* σ moved or a minimum arrived, and the flows' minima now sum to
 * @minima_bps: σ below their band ((1 − α)·Σm) is lifted to them at once
 * (capacity.c, "The minima").  Returns true if σ changed (the caller
 * re-runs the TRAS). */
bool bwss__capacity_minima (BwssCapacity *c, const BwssParams *params, double minima_bps);

#endif /* BWSS_LAWS_H */

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/control.h — the control laws of BWSS, as pure functions and objects.
 *
 * Block diagram (paper Fig. 1 and 2):
 *
 *   measured R_i ──► σ loop (sigma.c) ──σ──► TRAS (allocation.c) ──T_i──► FCS_i (fcs.c) ──w_i──► socket
 *        ▲                                                                  ▲
 *        └───────────── rate estimator (estimator.c) ◄── bytes, RTT ─────────┘
 *
 * The controller (controller.c) owns the flows and runs the three boxes on an
 * injected clock with injected measurements; nothing here reads a socket, a
 * clock or a file.  The socket layer (bwss/domain.h) feeds it real samples and
 * applies the windows it returns.
 *
 * Units: rates in bit/s (double), times in µs (uint64_t, monotonic, any
 * origin), windows in bytes or in segments where the name says so.
 */
#ifndef BWSS_CONTROL_H
#define BWSS_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <bwss/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tunables ---------------------------------------------------------- */

/* Which σ loop runs (see the σ section below). */
typedef enum {
  BWSS_LOOP_DELAY = 0,  /* the default: σ held where the access link's queue
                         * stays at a short target (capacity.c) */
  BWSS_LOOP_PAPER = 1,  /* the paper's throughput-only loop, Sec. V-C (sigma.c) */
} BwssLoop;

/* Returns "delay" or "paper" (NULL for an unknown value). */
BWSS_API const char *bwss_loop_name (BwssLoop loop);
/* Parses "delay" or "paper"; returns 0 or BWSS_EINVAL (out untouched). */
BWSS_API int bwss_loop_parse (const char *text, BwssLoop *out);

/* Every tunable of the laws, with its unit.  bwss_params_init() fills the
 * defaults; params.c gives each value's reason. */
typedef struct {
  BwssLoop loop;
  /* FCS, Sec. IV */
  double   alpha;               /* rate slack α: desired interval [(1-α)T, (1+α)T]; (0, 1) */
  double   beta;                /* stability factor β of eq. (4); (0, 1] */
  double   epsilon;             /* EWMA weight ε of the previous estimate; [0, 1) */
  double   phi_rtts;            /* estimation period φ in RTTs (paper: 2); > 0 */
  double   wait_phis;           /* hold after a change: RTT + wait_phis·φ (paper: 3); >= 1 */
  uint64_t min_phi_us;          /* floor on φ, µs (tick resolution) */
  uint32_t min_window_segments; /* w >= this (paper: 1); >= 1 */
  uint32_t min_window_bytes;    /* below min_window_segments: one window smaller than a
                                 * segment, bytes (0 = none; the kernel clamps at ~1140) */
  double   sub_window_yield;    /* ... which moves this fraction of itself per RTT; (0, 1] */
  double   max_window_factor;   /* anti-windup: w <= factor·T·RTT/p + 1; >= 1 */
  uint32_t default_mss;         /* p_size used while the MSS is unknown, bytes */
  double   restart_fraction;    /* a target cut below this fraction of the one the
                                 * window was set for restarts eq. (1); [0, 1), 0 = never */
  bool     dither;              /* between two whole-segment windows, alternate so
                                 * the mean rate meets T (the rate debt decides) */
  double   rescale_threshold;   /* a target moved by more than this fraction rescales
                                 * the window at once, w·T'/T; [0, 1), 0 = never */
  /* read pacing: below the sub-segment window, the receiver's reads */
  bool     pace_reads;          /* a flow held at the window floor whose reads the
                                 * receiver controls is read at its target */
  double   pace_min_bps;        /* slowest pace, bit/s; > 0 */
  double   pace_max_link_bps;   /* only on a link seen busy at no more than this,
                                 * bit/s: a paced socket keeps a fixed receive buffer */
  uint32_t pace_rcvbuf_bytes;   /* SO_RCVBUF of a paced socket: its window, at least
                                 * this, bytes */
  uint32_t pace_window_segments;/* smallest window over paced reads, segments; >= 1 */
  double   pace_burst_segments; /* read-pacing token bucket depth, segments; >= 1 */
  /* rate meter (windowed means, estimator.c) */
  uint64_t meter_step_us;       /* one history entry per this, µs */
  /* σ loop of the paper, Sec. V-C (sigma.c) */
  double   gamma;               /* γ: a flow below γ·T* is congested (paper: 0.8); (0, 1) */
  double   raise_step;          /* raise phase: σ grows by this fraction per probe; > 0 */
  double   raise_floor_bps;     /* ... and by at least this many bit/s; >= 0 */
  double   rise_threshold;      /* U "rises" when above (1+this)·the reference; > 0 */
  uint64_t release_us;          /* initialisation, µs: the paper's loop releases the
                                 * constraints this long; the delay loop holds σ at the
                                 * minima this long */
  uint64_t probe_min_us;        /* bounds on the probe/settle interval, µs */
  uint64_t probe_max_us;
  uint64_t reinit_period_us;    /* periodic re-initialisation, µs; 0 = never */
  uint32_t settle_cycles;       /* settle interval = this many FCS cycles of the slowest flow */
  uint32_t congested_probe_settles; /* LINK_CONGESTED: first probe after this many settles */
  uint64_t congested_probe_max_us;  /* ... backing off up to this, µs */
  /* the delay loop (capacity.c) */
  uint64_t queue_target_min_us; /* shortest queue target, µs */
  uint64_t queue_target_max_us; /* longest queue target, µs (a bound for a slow link) */
  double   queue_target_packets;/* the target holds at least this many packets of U */
  double   queue_band;          /* no action while |q − q_t| <= band·q_t; (0, 1) */
  double   link_decay;          /* the link's rate for C2 falls by at most this
                                 * fraction a decision; [0, 1) */
  double   drain_horizon_rtts;  /* excess queue removed over this many RTTs; > 0 */
  double   max_cut;             /* largest σ cut of one decision, fraction of U; (0, 1) */
  double   raise_gain;          /* σ grows by gain·(q_t − q)/(RTT) per decision; > 0 */
  double   max_raise;           /* largest σ raise of one decision, fraction; > 0 */
  double   decision_rtts;       /* decisions spaced by this many RTTs ... */
  double   decision_segments;   /* ... and this many segments of the fastest flow */
  uint64_t decision_min_us;     /* bounds on the decision interval, µs */
  uint64_t decision_max_us;
  uint32_t loss_decisions;      /* rule "loss" waits for this many decisions in a
                                 * row: a transient is no verdict */
  double   window_limited_fraction; /* a flow moving this fraction of window/RTT
                                 * is held by its window; (0, 1] */
  double   loss_raise;          /* after rule "loss", σ grows by at most this
                                 * fraction per decision ... ; (0, 1] */
  uint64_t loss_memory_us;      /* ... for this long, µs */
  uint64_t probe_wait_us;       /* σ grows beyond the link seen busy no sooner than
                                 * this after a probe that found no room, µs ... */
  uint64_t probe_wait_max_us;   /* ... doubling after each such probe up to this */
  uint64_t link_window_us;      /* the link's rate is U over at least this, µs */
  uint64_t reserve_hold_us;     /* a flow below its minimum keeps the rest of it
                                 * reserved this long, µs */
  double   demand_headroom;     /* a flow limited elsewhere is allocated at most this
                                 * fraction above what it used (eq. 6'); >= 0 */
} BwssParams;

/* Fills @p with the defaults of the delay loop.  Never fails. */
BWSS_API void bwss_params_init (BwssParams *p);

/* Fills @p with the defaults for @loop: BWSS_LOOP_PAPER restores the
 * paper's loop with the FCS exactly as it ran with it (measured RTT, restart
 * on a target cut below half, no rescale).  Returns 0 or BWSS_EINVAL. */
BWSS_API int bwss_params_init_for (BwssParams *p, BwssLoop loop);

/* Returns 0 if every field of @p is finite and in range, BWSS_EINVAL
 * otherwise (and, if @field is not NULL, sets it to the offending name). */
BWSS_API int bwss_params_validate (const BwssParams *p, const char **field);

/* ---- user preferences and the target rate allocation (Sec. V-A) -------- */

typedef struct {
  int32_t priority;     /* p_i: a larger value is more important */
  double  min_rate_bps; /* m_i >= 0, bit/s */
  double  weight;       /* w_i >= 0 */
} BwssPrefs;

/* Returns 0 if @prefs is finite and non-negative (priority is free),
 * BWSS_EINVAL otherwise. */
BWSS_API int bwss_prefs_validate (const BwssPrefs *prefs);

/* Returns 0 if @prefs lies within the limits of bwss/base.h (priority in
 * [BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX], min_rate_bps in
 * [0, BWSS_RATE_MAX_BPS], weight in [0, BWSS_WEIGHT_MAX]), BWSS_EINVAL
 * otherwise.  The laws accept any finite non-negative input; a domain and
 * every front end accept only this. */
BWSS_API int bwss_prefs_check (const BwssPrefs *prefs);

/* The TRAS: splits @sigma (bit/s) among @n flows into @targets (bit/s) so
 * that Σ targets = sigma (eq. 5):
 *   σ >= Σm: eq. (6), T_i = m_i + w_i·(σ − Σm)/Σw;
 *   σ <  Σm: eq. (7), minima served in decreasing priority.
 * Cases the paper leaves open:
 *   - equal priorities in eq. (7): flows of one priority share what is left
 *     for them in proportion to their minima (each gets the same fraction);
 *   - Σw = 0 in eq. (6): the remainder is split equally (every weight
 *     counts as 1), so a lone flow with only a minimum still uses the link;
 *   - σ = 0 or n = 0: all targets 0.
 * Any finite input is handled without overflow (sums are scaled).  Returns 0,
 * or BWSS_EINVAL (and leaves @targets untouched) if sigma is negative/NaN/inf,
 * if any prefs is invalid, or if a pointer is NULL while n > 0. */
BWSS_API int bwss_allocate (double sigma, const BwssPrefs *prefs, size_t n,
                            double *targets);

/* The TRAS with demand caps (allocation.c, eq. 6'): flow i takes at most
 * @caps[i] bit/s (negative or infinite: no cap; a cap below m_i counts as
 * m_i), and what the capped flows leave goes to the others by eq. (6);
 * if every flow is capped the rest is split by eq. (6) over all, so Σ T =
 * σ still holds.  Below Σm eq. (7) as bwss_allocate.  @caps NULL is
 * bwss_allocate.  Returns 0, BWSS_EINVAL (as bwss_allocate, or a NaN cap;
 * @targets untouched) or BWSS_ENOMEM. */
BWSS_API int bwss_allocate_capped (double sigma, const BwssPrefs *prefs, const double *caps,
                                   size_t n, double *targets);

/* ---- rate estimator (Sec. IV-B) and rate meter ---------------------------- */

/* Entries of the meter's history: with the default step (25 ms) they cover
 * 3.2 s, more than the longest window any caller asks for. */
#define BWSS_METER_ENTRIES 128

/* The one rate estimator of libbwss, fed with a cumulative byte count:
 *   - R, the paper's estimate (Sec. IV-B): the rate over successive periods
 *     φ, averaged R ← ε·R + (1−ε)·R_φ, restarted after a window change (the
 *     FCS uses it);
 *   - the mean rate over any recent window (bwss_estimator_mean), from a
 *     history of samples one meter step apart, interpolated at the window's
 *     start (the σ loops, the element's statistics and the tools use it). */
typedef struct {
  double   rate_bps;        /* R, bit/s; negative until the first period ends */
  uint64_t period_start_us; /* start of the running period φ; 0 before start */
  uint64_t period_bytes;    /* cumulative byte count at that start */
  uint64_t last_bytes;      /* last cumulative byte count seen */
  uint64_t last_us;         /* ... and when */
  uint32_t periods;         /* periods completed since the last reset */
  bool     restart;         /* next period replaces R instead of averaging */
  /* the meter: a ring of (time, count) samples */
  uint64_t hist_us[BWSS_METER_ENTRIES];
  uint64_t hist_bytes[BWSS_METER_ENTRIES];
  uint32_t hist_n, hist_head;   /* head = next slot */
} BwssEstimator;

BWSS_API void bwss_estimator_init (BwssEstimator *e);

/* Discards the running period and the average R: the next period starts at
 * @start_us (e.g. one RTT after a window change, when it takes effect) and
 * its result replaces R.  Until then samples only track the byte count.
 * The meter's history is kept (it measures what arrived, whatever the
 * window). */
BWSS_API void bwss_estimator_restart (BwssEstimator *e, uint64_t start_us);

/* Feeds the cumulative byte count at @now_us.  The meter records it if
 * @meter_step_us has passed since its last entry.  When a period of @phi_us
 * has elapsed, updates R ← ε·R + (1−ε)·R_φ (or R ← R_φ after a restart) and
 * returns true; otherwise returns false.  A byte counter that goes backwards
 * (a new socket) restarts the estimator and clears the meter. */
BWSS_API bool bwss_estimator_sample (BwssEstimator *e, uint64_t now_us,
                                     uint64_t bytes, uint64_t phi_us,
                                     double epsilon, uint64_t meter_step_us);

/* Returns the mean rate over the @window_us before the last sample, bit/s:
 * the bytes since the count interpolated at (last − window) over the time
 * between; over the whole history if it is shorter.  Negative if the
 * history spans no time. */
BWSS_API double bwss_estimator_mean (const BwssEstimator *e, uint64_t window_us);

/* Returns the bytes counted over the @window_us before the last sample
 * (interpolated like bwss_estimator_mean), 0 with no history. */
BWSS_API double bwss_estimator_bytes (const BwssEstimator *e, uint64_t window_us);

/* ---- flow control system (Sec. IV-A) ----------------------------------- */

typedef enum {
  BWSS_FCS_RELEASED = 0, /* no constraint: the kernel's own window */
  BWSS_FCS_HOLD,         /* a change was made; waiting RTT + 3φ */
  BWSS_FCS_STEADY,       /* R in the desired interval */
  BWSS_FCS_INCREASED,    /* last step raised w (eq. 4) */
  BWSS_FCS_DECREASED,    /* last step lowered w (eq. 3) */
} BwssFcsState;

typedef struct {
  BwssEstimator est;
  BwssFcsState  state;
  uint32_t      window;        /* w in segments; 0 while released */
  bool          sub;           /* the window is min_window_bytes, below a segment */
  bool          paced;         /* the receiver can pace its reads (bwss_fcs_set_paced) */
  bool          pacing;        /* ... and does: the reads carry T, not the window */
  uint64_t      hold_until_us; /* no adjustment before this time */
  uint64_t      changed_us;    /* time of the last window change */
  uint32_t      periods_at_change; /* estimator periods needed before deciding */
  double        target_bps;    /* the target the window was last set for */
  double        debt_bits;     /* dither: ∫(T − R)dt since the target was set */
} BwssFcs;

BWSS_API void bwss_fcs_init (BwssFcs *f);

/* Releases the constraint (window 0 = kernel default).  The estimator keeps
 * running. */
BWSS_API void bwss_fcs_release (BwssFcs *f);

/* One FCS step at @now_us for target @target_bps with RTT @rtt_us (the
 * RTT the window is sized for: the measured one in the paper's loop, the
 * base RTT plus the queue target in the delay loop) and segment size @mss
 * bytes (0 = params->default_mss).  The caller has fed the estimator
 * (bwss_fcs_observe) first.  If released, starts the law with w = T·RTT/p
 * (eq. 1).  A target moved by more than rescale_threshold from the one the
 * window was set for rescales it at once (w·T'/T); one cut below
 * restart_fraction of it restarts from eq. (1).  Otherwise, once the hold is
 * over and a fresh estimate exists: no change inside [(1−α)T, (1+α)T]; above
 * it w −= eq. (3); below it w += max(eq. (4), 1); w stays within
 * [min_window, cap].  Returns the window in segments (0 if released because
 * the RTT is still unknown). */
BWSS_API uint32_t bwss_fcs_step (BwssFcs *f, const BwssParams *params,
                                 uint64_t now_us, double target_bps,
                                 uint32_t rtt_us, uint32_t mss);

/* Feeds a cumulative byte count into the FCS's estimator, with φ derived from
 * @rtt_us.  Returns true when a new estimate was produced. */
BWSS_API bool bwss_fcs_observe (BwssFcs *f, const BwssParams *params,
                                uint64_t now_us, uint64_t bytes,
                                uint32_t rtt_us);

/* Returns the window to apply, bytes: w·@mss (0 = released), or
 * min_window_bytes below a segment. */
BWSS_API uint32_t bwss_fcs_window_bytes (const BwssFcs *f, const BwssParams *params,
                                         uint32_t mss);

/* Says whether the receiver can pace the flow's reads (params->pace_reads
 * and the caller's own conditions).  While it can, the reads carry the
 * target (open loop: they are exact) under a window one segment above what
 * the target needs per RTT, at least pace_window_segments; when it no
 * longer can, the window takes over again from eq. (1). */
BWSS_API void bwss_fcs_set_paced (BwssFcs *f, const BwssParams *params, bool paced);

/* Returns the rate at which the receiver should read the flow, bit/s:
 * @target_bps (at least pace_min_bps) while the reads carry it; 0 (read
 * freely) otherwise. */
BWSS_API double bwss_fcs_pace_bps (const BwssFcs *f, const BwssParams *params,
                                   double target_bps);

/* Returns the estimation period φ for @rtt_us, µs (φ = phi_rtts·RTT, at
 * least min_phi_us). */
BWSS_API uint64_t bwss_fcs_phi_us (const BwssParams *params, uint32_t rtt_us);

/* Returns the hold after a window change, µs: RTT + wait_phis·φ. */
BWSS_API uint64_t bwss_fcs_hold_us (const BwssParams *params, uint32_t rtt_us);

/* ---- σ calculation (Sec. V-B, V-C) -------------------------------------- */

/* The phases of both loops (bwss-top shows them). */
typedef enum {
  BWSS_PHASE_IDLE = 0,       /* no flows */
  BWSS_PHASE_RELEASE,        /* initialisation: constraints released, measuring U */
  BWSS_PHASE_RAISE,          /* paper: σ raised while U keeps rising */
  BWSS_PHASE_REACTIVE,       /* paper: the reactive rules with γ */
  BWSS_PHASE_LINK_CONGESTED, /* paper: σ lowered to U; waiting for U to rise again */
  BWSS_PHASE_TRACK,          /* delay: σ follows the link, holding the queue target */
  BWSS_PHASE_START,          /* delay: σ = the minima while a first U is measured */
} BwssPhase;

#define BWSS_PHASE_LAST BWSS_PHASE_START

BWSS_API const char *bwss_phase_name (BwssPhase phase);

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

BWSS_API void bwss_sigma_init (BwssSigma *s);

/* Restarts the initialisation (release phase) at @now_us. */
BWSS_API void bwss_sigma_reinit (BwssSigma *s, uint64_t now_us);

/* A flow started or stopped at @now_us: goes to the raise phase from the
 * current σ, one settle interval later; if already raising, takes U of
 * reference again at the next decision. */
BWSS_API void bwss_sigma_probe (BwssSigma *s, uint64_t now_us);

/* One decision of the σ loop at @now_us over @n flows whose aggregate rate is
 * @aggregate_bps; @settle_us is how long the FCSs need to follow a new σ.
 * Returns true if σ or the phase changed (the caller re-runs the TRAS). */
BWSS_API bool bwss_sigma_step (BwssSigma *s, const BwssParams *params,
                               uint64_t now_us, double aggregate_bps,
                               BwssSigmaFlow *flows, size_t n,
                               uint64_t settle_us);

/* ---- base RTT (basertt.c) ---- */

/* A flow's base RTT: the smallest receiver RTT it has shown, or, for a flow
 * that joined behind a queue, its RTT less the queue the other flows
 * measure (basertt.c explains why it never expires). */
typedef struct {
  uint32_t base_us;   /* 0 = no sample yet */
  uint32_t samples;   /* RTT samples taken */
  bool     seeded;    /* the base came from the others' queue */
} BwssBaseRtt;

BWSS_API void bwss_base_rtt_init (BwssBaseRtt *b);
/* Feeds a receiver RTT sample @rtt_us (0 = none). */
BWSS_API void bwss_base_rtt_sample (BwssBaseRtt *b, uint32_t rtt_us);
/* A flow whose RTT is @rtt_us while the link's queue is @queue_us (measured
 * on the other flows): its base is at most the difference. */
BWSS_API void bwss_base_rtt_seed (BwssBaseRtt *b, uint32_t rtt_us, double queue_us);
/* Returns the base RTT, µs; 0 if none yet. */
BWSS_API uint32_t bwss_base_rtt_get (const BwssBaseRtt *b);

/* ---- the delay loop (capacity.c) ---- */

/* Decisions whose U the link's rate is averaged over (link_window_us). */
#define BWSS_CAPACITY_U_HISTORY 16

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
} BwssCapacityFlow;

typedef struct {
  BwssPhase phase;
  double    sigma_bps;
  double    queue_us;         /* the access link's queueing delay, last decision */
  double    queue_target_us;  /* q_t, last decision */
  double    last_band_us;     /* its dead zone's half width, last decision */
  double    link_bps;         /* the link's rate C2 saw, last decision */
  double    busy_link_bps;    /* U at the last decision that found the queue at its
                               * target (the link busy: what it gives us now), 0 = never */
  double    link_max_bps;     /* the largest of those, 0 = never */
  double    cruise_bps;       /* σ after the running drain (rule "cut") */
  double    u_hist[BWSS_CAPACITY_U_HISTORY];   /* U of the last decisions ... */
  uint64_t  u_hist_us[BWSS_CAPACITY_U_HISTORY];/* ... over these intervals, µs */
  uint32_t  u_hist_head;
  uint64_t  last_probed_us;   /* the last rule "probed", 0 = never */
  uint64_t  probe_wait_us;    /* the wait after it, µs (0: params' first) */
  double    probe_from_bps;   /* σ before the last step of the running probe, 0 = none */
  uint64_t  drain_until_us;   /* end of the running drain, 0 = none */
  double    last_rtt_us;      /* b̄ + q_t, last decision */
  uint64_t  phase_since_us;
  uint64_t  next_decision_us;
  uint64_t  last_decision_us;
  double    prev_queue_us;    /* at the previous decision, -1 if none */
  double    raise_boost;      /* multiplies the raise while the queue stays empty */
  uint64_t  last_loss_us;     /* the last decision of rule "loss", 0 = never */
  uint32_t  loss_votes;       /* decisions in a row that found σ above the link */
  uint32_t  changes;          /* count of σ changes, for statistics */
  uint32_t  last_rule;        /* the rule of the last decision (capacity.c) */
} BwssCapacity;

BWSS_API void bwss_capacity_init (BwssCapacity *c);

/* Returns the name of the rule the last decision took ("cut", "raise", ...). */
BWSS_API const char *bwss_capacity_rule_name (const BwssCapacity *c);

/* Returns the queue target for these flows on a link of @link_bps, µs:
 * queue_target_min_us, and at least queue_target_packets packets of the
 * link, at most queue_target_max_us (capacity.c, C2). */
BWSS_API double bwss_capacity_queue_target (const BwssParams *params,
                                            const BwssCapacityFlow *flows, size_t n,
                                            double link_bps);

/* Returns the access link's queueing delay seen by these flows, µs: the
 * smallest excess of RTT over base among the fresh flows (the link's queue
 * delays every flow; a queue elsewhere on one path delays only that one).
 * Negative if no flow can tell. */
BWSS_API double bwss_capacity_queue (const BwssCapacityFlow *flows, size_t n);

/* Returns the decision interval for these flows, µs (decision_rtts RTTs of
 * the slowest, decision_segments segments of the fastest, within bounds). */
BWSS_API uint64_t bwss_capacity_interval (const BwssParams *params,
                                          const BwssCapacityFlow *flows, size_t n,
                                          double queue_target_us);

/* One step of the delay loop at @now_us over @n flows with aggregate @u_bps
 * (means since the last decision): decides if the interval is over, or at
 * once if the queue is far above target.  Call it every tick.  Returns true
 * if σ or the phase changed (the caller re-runs the TRAS). */
BWSS_API bool bwss_capacity_step (BwssCapacity *c, const BwssParams *params,
                                  uint64_t now_us, double u_bps,
                                  const BwssCapacityFlow *flows, size_t n);

/* ---- the controller ------------------------------------------------------ */

typedef struct BwssController BwssController;

/* One measurement of one flow. */
typedef struct {
  uint64_t now_us;
  uint64_t bytes_received; /* cumulative payload bytes received */
  uint32_t rtt_us;         /* the receiver's smoothed RTT (tcpi_rcv_rtt), 0 = unknown */
  uint32_t mss;            /* receive MSS in bytes, 0 = unknown */
  uint32_t min_rtt_us;     /* the smallest RTT the connection has seen, its handshake
                            * included (tcpi_min_rtt), 0 = unknown */
  bool     can_pace;       /* the receiver can pace this flow's reads */
  uint32_t unread_bytes;   /* received, not yet read by the application */
} BwssSample;

/* What the controller decided for one flow. */
typedef struct {
  BwssPrefs    prefs;
  double       target_bps;     /* T_i; meaningless while released */
  double       rate_bps;       /* R_i estimate, negative if none yet */
  uint32_t     window_bytes;   /* apply this; 0 = unconstrained (kernel default) */
  double       read_rate_bps;  /* read the flow at this rate, bit/s; 0 = freely */
  uint32_t     window_segments;
  uint32_t     rtt_us;         /* the receiver RTT measured */
  uint32_t     base_rtt_us;    /* its base RTT (delay loop), 0 unknown */
  uint32_t     mss;
  BwssFcsState fcs_state;
  bool         congested;      /* tracked by the σ loop (paper) */
} BwssFlowState;

typedef struct {
  BwssLoop  loop;
  BwssPhase phase;
  double    sigma_bps;
  double    aggregate_bps;     /* U = Σ R_i */
  double    queue_us;          /* delay loop: the access link's queueing delay, -1 unknown */
  double    queue_target_us;   /* delay loop: its target */
  uint32_t  n_flows;
  uint32_t  sigma_changes;
} BwssControllerStats;

/* Creates a controller with @params (NULL = defaults).  Returns 0 and sets
 * *out, BWSS_EINVAL for invalid params, BWSS_ENOMEM. */
BWSS_API int  bwss_controller_new (const BwssParams *params, BwssController **out);
BWSS_API void bwss_controller_free (BwssController *c);

/* Adds flow @id (any caller-chosen key) at @now_us.  BWSS_EEXIST if present,
 * BWSS_EINVAL for invalid prefs. */
BWSS_API int bwss_controller_add_flow (BwssController *c, uint64_t id,
                                       const BwssPrefs *prefs, uint64_t now_us);
BWSS_API int bwss_controller_set_prefs (BwssController *c, uint64_t id,
                                        const BwssPrefs *prefs, uint64_t now_us);
BWSS_API int bwss_controller_remove_flow (BwssController *c, uint64_t id,
                                          uint64_t now_us);

/* Feeds one sample of flow @id.  BWSS_ENOENT, BWSS_EINVAL. */
BWSS_API int bwss_controller_observe (BwssController *c, uint64_t id,
                                      const BwssSample *sample);

/* Runs the σ loop, the TRAS and every FCS at @now_us.  Call it at least
 * every few ms of the shortest φ (the socket layer uses 10 ms). */
BWSS_API void bwss_controller_tick (BwssController *c, uint64_t now_us);

BWSS_API int  bwss_controller_flow_state (const BwssController *c, uint64_t id,
                                          BwssFlowState *out);
BWSS_API void bwss_controller_stats (const BwssController *c,
                                     BwssControllerStats *out);
BWSS_API const BwssParams *bwss_controller_params (const BwssController *c);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_CONTROL_H */

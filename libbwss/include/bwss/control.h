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
#include <bwss/bwss.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tunables ---------------------------------------------------------- */

/* Every tunable of the laws, with its unit.  bwss_params_init() fills the
 * paper's values (Sec. IV and V); see the constants in the .c files for the
 * reasoning behind each default. */
typedef struct {
  /* FCS, Sec. IV */
  double   alpha;               /* rate slack α: desired interval [(1-α)T, (1+α)T]; (0, 1) */
  double   beta;                /* stability factor β of eq. (4); (0, 1] */
  double   epsilon;             /* EWMA weight ε of the previous estimate; [0, 1) */
  double   phi_rtts;            /* estimation period φ in RTTs (paper: 2); > 0 */
  double   wait_phis;           /* hold after a change: RTT + wait_phis·φ (paper: 3); >= 1 */
  uint64_t min_phi_us;          /* floor on φ, µs (tick resolution) */
  uint32_t min_window_segments; /* w >= this (paper: 1); >= 1 */
  double   max_window_factor;   /* anti-windup: w <= factor·T·RTT/p + 1; >= 1 */
  uint32_t default_mss;         /* p_size used while the MSS is unknown, bytes */
  /* σ loop, Sec. V-C */
  double   gamma;               /* γ: a flow below γ·T* is congested (paper: 0.8); (0, 1) */
  double   raise_step;          /* raise phase: σ grows by this fraction per probe; > 0 */
  double   raise_floor_bps;     /* ... and by at least this many bit/s; >= 0 */
  double   rise_threshold;      /* U "rises" when above (1+this)·the reference; > 0 */
  uint64_t release_us;          /* initialisation: constraints released this long, µs */
  uint64_t probe_min_us;        /* bounds on the probe/settle interval, µs */
  uint64_t probe_max_us;
  uint64_t reinit_period_us;    /* periodic re-initialisation, µs; 0 = never */
} BwssParams;

/* Fills @p with the defaults.  Never fails. */
BWSS_API void bwss_params_init (BwssParams *p);

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

/* Returns 0 if @prefs lies within the limits of bwss/bwss.h (priority in
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

/* ---- rate estimator (Sec. IV-B) ---------------------------------------- */

typedef struct {
  double   rate_bps;        /* R, bit/s; negative until the first period ends */
  uint64_t period_start_us; /* start of the running period φ; 0 before start */
  uint64_t period_bytes;    /* cumulative byte count at that start */
  uint64_t last_bytes;      /* last cumulative byte count seen */
  uint32_t periods;         /* periods completed since the last reset */
  bool     restart;         /* next period replaces R instead of averaging */
} BwssEstimator;

BWSS_API void bwss_estimator_init (BwssEstimator *e);

/* Discards the running period and the average: the next period starts at
 * @start_us (e.g. one RTT after a window change, when it takes effect) and
 * its result replaces R.  Until then samples only track the byte count. */
BWSS_API void bwss_estimator_restart (BwssEstimator *e, uint64_t start_us);

/* Feeds the cumulative byte count at @now_us.  When a period of @phi_us has
 * elapsed, updates R ← ε·R + (1−ε)·R_φ (or R ← R_φ after a restart) and
 * returns true; otherwise returns false.  A byte counter that goes backwards
 * (a new socket) restarts the estimator. */
BWSS_API bool bwss_estimator_sample (BwssEstimator *e, uint64_t now_us,
                                     uint64_t bytes, uint64_t phi_us,
                                     double epsilon);

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
  uint64_t      hold_until_us; /* no adjustment before this time */
  uint64_t      changed_us;    /* time of the last window change */
  uint32_t      periods_at_change; /* estimator periods needed before deciding */
  double        target_bps;    /* the target the window was last set for */
} BwssFcs;

BWSS_API void bwss_fcs_init (BwssFcs *f);

/* Releases the constraint (window 0 = kernel default).  The estimator keeps
 * running. */
BWSS_API void bwss_fcs_release (BwssFcs *f);

/* One FCS step at @now_us for target @target_bps with smoothed RTT @rtt_us
 * and segment size @mss bytes (0 = params->default_mss).  The caller has fed
 * the estimator (bwss_fcs_observe) first.  If released, starts the law with
 * w = T·RTT/p (eq. 1).  Otherwise, once the hold is over and a fresh
 * estimate exists: no change inside [(1−α)T, (1+α)T]; above it w −= eq. (3);
 * below it w += max(eq. (4), 1); w stays within [min_window, cap].
 * Returns the window in segments (0 if released because the RTT is still
 * unknown). */
BWSS_API uint32_t bwss_fcs_step (BwssFcs *f, const BwssParams *params,
                                 uint64_t now_us, double target_bps,
                                 uint32_t rtt_us, uint32_t mss);

/* Feeds a cumulative byte count into the FCS's estimator, with φ derived from
 * @rtt_us.  Returns true when a new estimate was produced. */
BWSS_API bool bwss_fcs_observe (BwssFcs *f, const BwssParams *params,
                                uint64_t now_us, uint64_t bytes,
                                uint32_t rtt_us);

/* Returns the estimation period φ for @rtt_us, µs (φ = phi_rtts·RTT, at
 * least min_phi_us). */
BWSS_API uint64_t bwss_fcs_phi_us (const BwssParams *params, uint32_t rtt_us);

/* Returns the hold after a window change, µs: RTT + wait_phis·φ. */
BWSS_API uint64_t bwss_fcs_hold_us (const BwssParams *params, uint32_t rtt_us);

/* ---- σ calculation (Sec. V-B, V-C) -------------------------------------- */

typedef enum {
  BWSS_PHASE_IDLE = 0,       /* no flows */
  BWSS_PHASE_RELEASE,        /* initialisation: constraints released, measuring U */
  BWSS_PHASE_RAISE,          /* initialisation: σ raised while U keeps rising */
  BWSS_PHASE_REACTIVE,       /* the reactive rules with γ */
  BWSS_PHASE_LINK_CONGESTED, /* σ lowered to U; waiting for U to rise again */
} BwssPhase;

BWSS_API const char *bwss_phase_name (BwssPhase phase);

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

/* ---- the controller ------------------------------------------------------ */

typedef struct BwssController BwssController;

/* One measurement of one flow. */
typedef struct {
  uint64_t now_us;
  uint64_t bytes_received; /* cumulative payload bytes received */
  uint32_t rtt_us;         /* smoothed RTT, 0 = unknown */
  uint32_t mss;            /* receive MSS in bytes, 0 = unknown */
} BwssSample;

/* What the controller decided for one flow. */
typedef struct {
  BwssPrefs    prefs;
  double       target_bps;     /* T_i; meaningless while released */
  double       rate_bps;       /* R_i estimate, negative if none yet */
  uint32_t     window_bytes;   /* apply this; 0 = unconstrained (kernel default) */
  uint32_t     window_segments;
  uint32_t     rtt_us;
  uint32_t     mss;
  BwssFcsState fcs_state;
  bool         congested;      /* tracked by the σ loop */
} BwssFlowState;

typedef struct {
  BwssPhase phase;
  double    sigma_bps;
  double    aggregate_bps;     /* U = Σ R_i */
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

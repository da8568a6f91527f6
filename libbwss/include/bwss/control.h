/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/control.h — the controller of BWSS: the control laws behind one object.
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
 * Public here: the controller, its tunables, the preferences and the TRAS as a
 * pure function (bwss_allocate), the rate estimator, and the states and phases
 * its statistics report.  The laws' own state (the FCS, both σ loops, the
 * base RTT) is private to libbwss (libbwss/lib/laws/laws.h): no ABI.
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

/* Which σ loop runs. */
typedef enum {
  BWSS_LOOP_DELAY = 0,  /* the default: σ held where the access link's queue
                         * stays at a short target (capacity.c) */
  BWSS_LOOP_PAPER = 1,  /* the paper's throughput-only loop, Sec. V-C (sigma.c) */
} BwssLoop;

/* Returns "delay" or "paper" (NULL for an unknown value). */
BWSS_API const char *bwss_loop_name (BwssLoop loop);
/* Parses "delay" or "paper"; returns 0 or BWSS_EINVAL (out untouched). */
BWSS_API int bwss_loop_parse (const char *text, BwssLoop *out);

/* Unstable API.  The layouts of BwssParams and BwssEstimator, which a
 * caller allocates, are not part of libbwss's stable ABI: a release may add,
 * remove or reorder their fields (and then changes the soname).  Their
 * definitions are visible only to a program that says it follows them,
 * as GStreamer's unstable libraries ask for GST_USE_UNSTABLE_API:
 *
 *     #define BWSS_USE_UNSTABLE_API   (or -DBWSS_USE_UNSTABLE_API)
 *     #include <bwss/bwss.h>
 *
 * Without it both are incomplete types: pointers to them pass through the
 * stable API (bwss_controller_params()), and the domain (bwss/domain.h),
 * the preferences and bwss_allocate() need neither (docs/architecture.md,
 * "The ABI"). */
typedef struct BwssParams BwssParams;
typedef struct BwssEstimator BwssEstimator;

#ifdef BWSS_USE_UNSTABLE_API
/* Every tunable of the laws, with its unit.  bwss_params_init() fills the
 * defaults; params.c gives each value's reason. */
struct BwssParams {
  BwssLoop loop;
  /* FCS, Sec. IV */
  double   alpha;               /* rate slack α: desired interval [(1-α)T, (1+α)T]; (0, 1) */
  double   beta;                /* stability factor β of eq. (4); (0, 1] */
  double   epsilon;             /* EWMA weight ε of the previous estimate; [0, 1) */
  double   phi_rtts;            /* estimation period φ in RTTs (paper: 2); > 0 */
  double   wait_phis;           /* hold after a change: RTT + wait_phis·φ (paper: 3); >= 1 */
  uint64_t min_phi_us;          /* the control period, µs: the controller is ticked (and
                                 * the domain dispatched) this often while flows run;
                                 * the floor on φ */
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
  uint64_t own_queue_us;        /* a flow whose RTT exceeds the link's queue by this
                                 * holds a queue of its own (fq_codel), µs ... */
  uint64_t own_queue_memory_us; /* ... the link's queue being its largest over this, µs */
  /* the delay loop beside traffic it does not control (capacity-compete.c) */
  uint64_t compete_detect_us;   /* the detector's memory: its score's time constant, µs */
  double   compete_enter;       /* COMPETE once the score (the share of time the queue
                                 * stood while σ held our downloads down) reaches this;
                                 * (0, 1] */
  double   compete_headroom;    /* COMPETE: σ this fraction above what the flows move,
                                 * the video's window above its minimum, so no window
                                 * binds them; > 0 */
  double   compete_yield;       /* COMPETE: the downloads yield this many times what the
                                 * minima miss (the neighbour takes its part); > 0 */
  uint64_t compete_probe_us;    /* COMPETE: a drain that asks whether the queue is ours
                                 * again at least this often, µs ... */
  double   compete_probe_rise;  /* ... and as soon as U comes within this fraction of
                                 * the link this host had alone (the neighbour left);
                                 * (0, 100] */
  uint64_t compete_drain_us;    /* ... each drain lasting at most this, µs */
  double   progress_bytes;      /* every controlled flow moves at least this many bytes
                                 * ... ; > 0 */
  uint64_t progress_period_us;  /* ... per this, µs (no peer's stall timeout fires) */
};
#endif /* BWSS_USE_UNSTABLE_API */

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

/* Returns 0 if @prefs lies within the limits of bwss/base.h (priority in
 * [BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX], min_rate_bps in
 * [0, BWSS_RATE_MAX_BPS], weight in [0, BWSS_WEIGHT_MAX]), BWSS_EINVAL
 * otherwise (NULL, NaN).  The one check of preferences: the laws (the
 * controller, bwss_allocate()), a domain and every front end accept what
 * it accepts and nothing else. */
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

/* The TRAS over groups of flows (an application is one download): flows
 * whose @groups key is the same non-zero value share one share of σ, as if
 * they were one flow with the group's largest priority, minimum and weight
 * (eq. 5–7 over the groups), and the group's target is split among them by
 * the same equations (the group's minimum in proportion to the members'
 * own minima, the rest by their weights).  A key of 0 is a flow alone;
 * @groups NULL is bwss_allocate().  E.g. eight flows of one key and one flow
 * alone, equal weights: each side gets σ/2, each of the eight σ/16.
 * Returns what bwss_allocate() returns, or BWSS_ENOMEM. */
BWSS_API int bwss_allocate_grouped (double sigma, const BwssPrefs *prefs,
                                    const uint64_t *groups, size_t n, double *targets);

/* ---- rate estimator (Sec. IV-B) and rate meter ---------------------------- */

/* Entries of the meter's history: with the default step (25 ms) they cover
 * 3.2 s, more than the longest window any caller asks for. */
#define BWSS_METER_ENTRIES 128

#ifdef BWSS_USE_UNSTABLE_API

/* The one rate estimator of libbwss, fed with a cumulative byte count:
 *   - R, the paper's estimate (Sec. IV-B): the rate over successive periods
 *     φ, averaged R ← ε·R + (1−ε)·R_φ, restarted after a window change (the
 *     FCS uses it);
 *   - the mean rate over any recent window (bwss_estimator_mean), from a
 *     history of samples one meter step apart, interpolated at the window's
 *     start (the σ loops, the element's statistics and the tools use it).
 * Unstable API: see BwssParams. */
struct BwssEstimator {
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
};
#endif /* BWSS_USE_UNSTABLE_API */

BWSS_API void bwss_estimator_init (BwssEstimator *e);

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

/* ---- flow control system (Sec. IV-A) ----------------------------------- */

/* The state of a flow's FCS, as BwssFlowState reports it (the law itself,
 * fcs.c, is the controller's). */
typedef enum {
  BWSS_FCS_RELEASED = 0, /* no constraint: the kernel's own window */
  BWSS_FCS_HOLD,         /* a change was made; waiting RTT + 3φ */
  BWSS_FCS_STEADY,       /* R in the desired interval */
  BWSS_FCS_INCREASED,    /* last step raised w (eq. 4) */
  BWSS_FCS_DECREASED,    /* last step lowered w (eq. 3) */
} BwssFcsState;

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
  BWSS_PHASE_COMPETE,        /* delay: a queue others refill (elastic traffic bwss does
                              * not control): this host competes for its total as plain
                              * TCP would, the video first within it */
} BwssPhase;

#define BWSS_PHASE_LAST BWSS_PHASE_COMPETE

BWSS_API const char *bwss_phase_name (BwssPhase phase);

/* Returns what the loop is doing in @phase, for a user: "keeping the queue
 * short" (the delay loop's START and TRACK), "sharing the link with traffic
 * bwss does not control" (COMPETE: a queue others refill, this host
 * competes for its total as plain TCP would); NULL for the other phases
 * (idle, the paper's loop). */
BWSS_API const char *bwss_phase_mode (BwssPhase phase);

/* ---- the controller ------------------------------------------------------ */

typedef struct BwssController BwssController;

/* One measurement of one flow. */
typedef struct {
  uint64_t now_us;
  uint64_t bytes_received; /* cumulative payload bytes received */
  uint32_t rtt_us;         /* the receiver's smoothed RTT (tcpi_rcv_rtt), 0 = unknown */
  uint32_t mss;            /* the sender's segment, bytes, 0 = unknown: from a
                            * socket, bwss_sender_segment (tcpi_rcv_mss,
                            * tcpi_advmss) */
  uint32_t min_rtt_us;     /* the smallest RTT the connection has seen, its handshake
                            * included (tcpi_min_rtt), 0 = unknown */
  bool     can_pace;       /* the receiver can pace this flow's reads */
  uint32_t unread_bytes;   /* received, not yet read by the application */
  uint32_t rcv_ooopack;    /* cumulative segments received after a hole
                            * (tcpi_rcv_ooopack, Linux >= 5.4): its losses; a
                            * count that grows between two decisions is the
                            * network's verdict on this flow (0 = unknown) */} BwssSample;

/* Returns the segment a sample's mss should be, bytes, from the socket's
 * @rcv_mss (tcpi_rcv_mss: the kernel's estimate from the segments seen, a
 * lower bound) and @advmss (tcpi_advmss: the MSS this end advertised, an
 * upper bound): never smaller than a segment the sender can send, since a
 * window below one of them moves data only on the sender's persist timer.
 * 0 if both are 0. */
BWSS_API uint32_t bwss_sender_segment (uint32_t rcv_mss, uint32_t advmss);

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
/* Puts flow @id in group @group (0: alone, the default): the flows of one
 * group share one share of σ (bwss_allocate_grouped()).  BWSS_ENOENT,
 * BWSS_EINVAL. */
BWSS_API int bwss_controller_set_group (BwssController *c, uint64_t id, uint64_t group,
                                        uint64_t now_us);

/* Feeds one sample of flow @id.  BWSS_ENOENT, BWSS_EINVAL. */
BWSS_API int bwss_controller_observe (BwssController *c, uint64_t id,
                                      const BwssSample *sample);

/* Runs the σ loop, the TRAS and every FCS at @now_us.  Call it every
 * control period (params min_phi_us; the domain does). */
BWSS_API void bwss_controller_tick (BwssController *c, uint64_t now_us);

/* Returns when flow @id is next due for a sample, µs on the clock of the
 * samples: 0 while it is due at every tick; later while it is quiet (its
 * last samples carried no byte and found none unread), from a few control
 * periods up to a few tenths of a second.  A caller that measures many
 * flows measures at each tick only those due by then, and observes only
 * what it measured.  0 for an unknown flow. */
BWSS_API uint64_t bwss_controller_next_measure (const BwssController *c, uint64_t id);

/* Returns true if the round at @round_us measures flow @id: it is due by
 * then, or within half a control period after (the one rule of every
 * caller's rounds).  An unknown flow is due. */
BWSS_API bool bwss_controller_due (const BwssController *c, uint64_t id, uint64_t round_us);

/* Puts in @ids (room for @n) the flows the round at @round_us measures
 * (bwss_controller_due()), in one pass; returns how many there are (more
 * than @n: only the first @n were put).  A caller of many flows walks these
 * only. */
BWSS_API size_t bwss_controller_due_flows (const BwssController *c, uint64_t round_us,
                                           uint64_t *ids, size_t n);

/* Puts in @ids (room for @n) the flows whose window or read rate
 * (bwss_controller_flow_state()) the last tick may have moved: those
 * observed before it, and those whose window or read rate it changed;
 * returns how many there are.  The windows of the others are as the tick
 * before left them. */
BWSS_API size_t bwss_controller_moved_flows (const BwssController *c, uint64_t *ids, size_t n);

/* Returns when the caller's next round is needed, µs, at @from_us or
 * later: while flows move data, one estimation period (φ = 2·RTT, in whole
 * control periods, at most four) of the one with the shortest after the
 * last round, or every period while one of them has a minimum or an
 * unknown RTT; while every flow is at rest, the round that first finds one
 * due; @from_us with no flow.  A caller sleeps until then; a flow that
 * comes, goes or has new preferences needs a round at once. */
BWSS_API uint64_t bwss_controller_next_round (const BwssController *c, uint64_t from_us);

BWSS_API int  bwss_controller_flow_state (const BwssController *c, uint64_t id,
                                          BwssFlowState *out);
BWSS_API void bwss_controller_stats (const BwssController *c,
                                     BwssControllerStats *out);
BWSS_API const BwssParams *bwss_controller_params (const BwssController *c);

/* The delay loop's last decision, and what its detector of traffic beside
 * ours (the entry into COMPETE) saw there: a run's record of why the loop
 * entered, or did not. */
typedef enum {
  BWSS_SEEN_NONE = 0,   /* no detector at this decision (not in TRACK) */
  BWSS_SEEN_FOREIGN,    /* a queue this host did not make: the score rises */
  BWSS_SEEN_OURS,       /* the queue in hand: the score falls */
  BWSS_SEEN_NEITHER     /* no verdict (the loop still cutting, or losses): unchanged */
} BwssSeen;

/* The conditions of "foreign" a decision lacked (BwssDecision.missing). */
enum {
  BWSS_DETECT_NO_BULK   = 1u << 0,  /* no download */
  BWSS_DETECT_UNFLOORED = 1u << 1,  /* a download allotted above its floor */
  BWSS_DETECT_OVERRUN   = 1u << 2,  /* a flow well above its target, minimum and floor */
  BWSS_DETECT_SHORT_MIN = 1u << 3,  /* a flow below its minimum */
  BWSS_DETECT_HAS_LINK  = 1u << 4,  /* this host moves the link it had to itself */
  BWSS_DETECT_NO_QUEUE  = 1u << 5,  /* the queue not above its target and band */
  BWSS_DETECT_HELD      = 1u << 6   /* entry barred: COMPETE failed the video lately */
};

typedef struct {
  uint64_t    at_us;          /* when, 0 = no decision yet (or the paper's loop) */
  BwssPhase   phase;          /* the phase after it */
  const char *rule;           /* the rule it took ("cut", "raise", "enter", ...) */
  double      sigma_bps;      /* σ after it */
  double      aggregate_bps;  /* U it judged */
  double      queue_us;       /* the link's queue it measured, negative unknown */
  double      queue_target_us;
  BwssSeen    seen;           /* the detector's verdict */
  double      score;          /* its score after it, [0, 1]: COMPETE at compete_enter */
  uint32_t    missing;        /* BWSS_DETECT_* bits (with seen != BWSS_SEEN_NONE) */
  uint32_t    bulk;           /* flows without a minimum */
  uint32_t    bulk_floored;   /* ... of them held at their floor */
  uint32_t    lost;           /* flows that lost segments in its interval */
  uint32_t    short_min;      /* flows below their minimum */
  uint32_t    overrun;        /* flows well above their target */
  uint32_t    reserved[8];    /* zero: room for later fields without an ABI break */
} BwssDecision;

/* Fills @out with the delay loop's last decision.  Returns 0, BWSS_EINVAL
 * (NULL), or BWSS_ENOENT for the paper's loop (it has no detector). */
BWSS_API int bwss_controller_last_decision (const BwssController *c, BwssDecision *out);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_CONTROL_H */

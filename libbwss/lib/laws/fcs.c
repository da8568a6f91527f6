/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fcs.c — the TCP flow control system (paper Sec. IV).
 *
 * Model.  A flow whose advertised window w (segments of p bits) is smaller
 * than the sender's congestion window sends one window per round trip:
 *
 *     R = w·p / RTT                                             (eq. 1)
 *     ΔR/Δw = p / RTT                                           (eq. 2)
 *
 * Law.  Start at w = T·RTT/p.  Then, each time a fresh rate estimate R is
 * available and the last change has had time to act (RTT + 3φ):
 *   - R within [(1−α)T, (1+α)T]: keep w;
 *   - R above: w −= ⌊(R−T)/(p/RTT) + 0.5⌋                       (eq. 3)
 *   - R below: w += max(⌊β·(T−R)/(p/RTT)⌋, 1)                   (eq. 4)
 * with w >= min_window.  Decreases use the full model step (too fast is the
 * harmful direction for the flows we hold back); increases are damped by β.
 *
 * Additions the paper leaves open:
 *   - a cap w <= max_window_factor·T·RTT/p + 1: when the flow is limited
 *     elsewhere (its cwnd, a remote bottleneck) eq. (4) would otherwise grow
 *     w for ever, and the day the limit lifts the flow would burst far past T;
 *   - a decision consumes an estimate: the next one waits for a new period,
 *     so a stale R never drives two steps;
 *   - while the RTT is unknown the flow stays released (eq. 1 needs it);
 *   - a target cut to less than restart_fraction of the one the window was
 *     set for restarts the law from eq. (1) at once, holds or not (the
 *     paper's loop: when σ falls because the link is congested, eq. (3)
 *     steps spaced by RTT + 3φ of a queue-inflated RTT would take tens of
 *     seconds to make room for the video, and the new target is known now);
 *   - a target moved by more than rescale_threshold (either way) scales the
 *     window with it at once, holds or not (the delay loop: σ moves because
 *     the link changed): w ← w·T'/R with R the rate the window carries (the
 *     fresh estimate, else the target it was set for: the flow's measured
 *     ratio of window to rate — its RTT, its path, its ACK clock — still
 *     holds); eq. (3)/(4) then correct what is left;
 *   - dither (the delay loop): with a short queue a window is a few
 *     segments and one segment can be a third of the flow's share, so often
 *     no whole window lands in [(1−α)T, (1+α)T].  The FCS keeps the rate
 *     debt D = ∫(T − R)dt since its target was set and lets the whole-segment
 *     steps follow it: above the interval by less than half a segment (eq. 3
 *     rounds to 0) it still steps down one segment once it has delivered more
 *     than T on balance (D < 0); below it by less than one segment (eq. 4's
 *     "at least 1") it waits while D < 0.  The window then alternates between
 *     the two segments around T, each held RTT + 3φ at least, and the mean
 *     rate meets T (a first-order sigma-delta modulator);
 *   - below the smallest whole window, one window smaller than a segment
 *     (min_window_bytes, the delay loop): the law takes it as one more
 *     level down (eq. 3 from one segment, eq. 1 or a rescale to less than
 *     half a segment); what the sender then moves depends on it (0.4 to 1.4
 *     segments per RTT, measured; see params.c), hence:
 *   - read pacing: where the receiver controls the flow's reads (and the
 *     caller allows it: a slow link, controller.c), the reads carry T
 *     instead (open loop, exact: the receive buffer is the window, so the
 *     sender sends what is read), under a window one segment above what T
 *     needs per RTT (at least pace_window_segments).  No whole-segment
 *     quantum then: at 960 kbit/s and 30 ms a segment per RTT is 40 % of
 *     the link.
 */
#include <math.h>
#include "laws.h"

/* Largest window we ever ask for, bytes: the largest TCP window with window
 * scale 14 (RFC 7323) is 2^30 bytes. */
#define FCS_MAX_WINDOW_BYTES (1u << 30)

/* Segments above this size get a floor of two, bytes: half the window the
 * kernel's default receive buffer offers (tcp_rmem[1], 128 KiB, about 64 KiB
 * of window at its default overhead ratio).  Ethernet's 1448 and a jumbo
 * frame's 8948 stay far below it; loopback's 65483 is above (floor_segments) */
#define FCS_LARGE_SEGMENT_BYTES 32768u

void
bwss__fcs_init (BwssFcs *f)
{
  bwss_estimator_init (&f->est);
  f->state = BWSS_FCS_RELEASED;
  f->window = 0;
  f->sub = false;
  f->paced = false;
  f->pacing = false;
  f->hold_until_us = 0;
  f->changed_us = 0;
  f->periods_at_change = 0;
  f->target_bps = 0.0;
  f->debt_bits = 0.0;
}

void
bwss__fcs_release (BwssFcs *f)
{
  f->state = BWSS_FCS_RELEASED;
  f->window = 0;
  f->sub = false;
  f->pacing = false;
  f->hold_until_us = 0;
}

void
bwss__fcs_set_paced (BwssFcs *f, const BwssParams *params, bool paced)
{
  f->paced = paced && params->pace_reads;
}

/* The progress law.  Whatever σ decides, no flow is read slower than
 * progress_bytes per progress_period_us: a sender blocked on a full send
 * buffer (nginx: send_timeout, 60 s between two writes) is woken when a
 * third of it has gone, a client gives up after 30 s without data (a flow
 * read at a few kbit/s for a minute can lose its server).  The window's
 * own floor (below a segment, min_window_bytes) moves more than this at any
 * RTT under 250 ms; the paced reads, which carry the target open loop, are
 * where it binds. */
double
bwss__progress_floor_bps (const BwssParams *params)
{
  return 8.0 * params->progress_bytes / ((double) params->progress_period_us / 1e6);
}

double
bwss__fcs_pace_bps (const BwssFcs *f, const BwssParams *params, double target_bps)
{
  if (!f->pacing || f->state == BWSS_FCS_RELEASED)
    return 0.0;
  double floor = bwss__progress_floor_bps (params);
  if (params->pace_min_bps > floor)
    floor = params->pace_min_bps;
  if (!(target_bps > floor))   /* also catches NaN */
    return floor;
  return target_bps;
}

/* Returns φ in µs: phi_rtts·RTT, at least min_phi_us. */
uint64_t
bwss__fcs_phi_us (const BwssParams *params, uint32_t rtt_us)
{
  double phi = params->phi_rtts * (double) rtt_us;
  uint64_t phi_us = (uint64_t) phi;
  return phi_us < params->min_phi_us ? params->min_phi_us : phi_us;
}

/* Returns the wait after a window change in µs: RTT + wait_phis·φ. */
uint64_t
bwss__fcs_hold_us (const BwssParams *params, uint32_t rtt_us)
{
  return (uint64_t) rtt_us
      + (uint64_t) (params->wait_phis * (double) bwss__fcs_phi_us (params, rtt_us));
}

bool
bwss__fcs_observe (BwssFcs *f, const BwssParams *params, uint64_t now_us,
                  uint64_t bytes, uint32_t rtt_us)
{
  return bwss_estimator_sample (&f->est, now_us, bytes, bwss__fcs_phi_us (params, rtt_us),
                                params->epsilon, params->meter_step_us);
}

/* The segment p of eq. (1) and of the window's floor.  A Linux sender
 * sends only when one whole segment of its own fits the window it was
 * offered (tcp_snd_wnd_test); a smaller window moves data only on its
 * persist timer's probes (200 ms and up), so every window the laws apply
 * must hold at least one of the sender's segments.  What the receiver knows
 * of that segment:
 *   - tcpi_rcv_mss, the kernel's estimate from the segments seen, is a
 *     lower bound only: the sender bounds its segment to half the largest
 *     window it was offered (tcp_bound_to_half_wnd), so a flow that started
 *     on a small first window (the shim's) shows small segments and keeps
 *     that estimate while the window stays small (the kernel raises it only
 *     on a segment at least as large, tcp_measure_rcv_mss).  On loopback
 *     a 3072-byte first window teaches it 1536 bytes, while the sender's
 *     segment, once the window has opened, is 65483;
 *   - tcpi_advmss, the MSS this end advertised less the timestamp option,
 *     is an upper bound: no compliant sender sends more, and the kernel
 *     caps its own estimate with it.  On a path with the same MTU at both
 *     ends (Ethernet's 1500: 1448 bytes, loopback: 65483) it is the
 *     sender's segment.
 * So p is the upper bound when known, never below what was seen.  Where a
 * middlebox lowered the sender's MSS the windows are then whole multiples
 * of a segment a little larger than the sender's: coarser levels, never a
 * window the sender cannot use. */
uint32_t
bwss_sender_segment (uint32_t rcv_mss, uint32_t advmss)
{
  return advmss > rcv_mss ? advmss : rcv_mss;
}

/* The smallest whole window, segments of @mss bytes: the paper's
 * min_window_segments, but two where a segment is large against the receive
 * buffer.  After a read the kernel reopens the window only while what is
 * left of it is at most half the clamp (tcp_cleanup_rbuf), and a sender
 * blocked because less than one of its segments is left (L < p) waits for
 * that update, else for its persist timer.  Under a one-segment clamp the
 * update comes when L <= p/2: true while the clamp is what limits the window
 * (L is then its rounding slack, a few bytes), not when the buffer's free
 * space limits it, which leaves L anywhere below a segment once a segment is
 * most of the buffer's window (loopback's 65483 against about 64 KiB).  Under
 * two segments L < p <= clamp/2 always: every read that frees room reopens
 * the window. */
static uint32_t
floor_segments (const BwssParams *params, uint32_t mss)
{
  if (mss > FCS_LARGE_SEGMENT_BYTES && params->min_window_segments < 2)
    return 2;
  return params->min_window_segments;
}

bool
bwss__fcs_at_floor (const BwssFcs *f, const BwssParams *params, uint32_t mss)
{
  if (mss == 0)
    mss = params->default_mss;
  return f->state != BWSS_FCS_RELEASED && f->window <= floor_segments (params, mss);
}

/* Returns the segments per RTT that carry @rate_bps: rate·RTT/p, as a
 * double (no rounding; callers round). */
static double
segments_for_rate (double rate_bps, uint32_t rtt_us, uint32_t mss)
{
  return rate_bps * ((double) rtt_us / 1e6) / (8.0 * (double) mss);
}

/* Returns the largest window the law may use for target @t, segments. */
static uint32_t
window_cap (const BwssParams *params, double t, uint32_t rtt_us, uint32_t mss)
{
  double cap = floor (params->max_window_factor * segments_for_rate (t, rtt_us, mss)) + 1.0;
  double hard = (double) (FCS_MAX_WINDOW_BYTES / mss);
  if (cap > hard)
    cap = hard;
  if (cap < floor_segments (params, mss))
    cap = floor_segments (params, mss);
  return (uint32_t) cap;
}

/* The window's level: its segments, or one below the smallest whole window
 * for the sub-segment window.  The law steps in levels. */
static double
level_of (const BwssFcs *f)
{
  return f->sub ? (double) f->window - 1.0 : (double) f->window;
}

/* Returns true if the sub-segment window can move segments of @mss bytes
 * (the sender's, bwss_sender_segment()): it is at least half of one.
 * Measured with Ethernet's 1448-byte segments (params.c); against a larger
 * segment (loopback's) a window below one waits on the sender's persist
 * timer: ~200 ms a probe, an RTT that is no queue and ~70 kbit/s on a link
 * of gigabits. */
static bool
sub_window_fits (const BwssParams *params, uint32_t mss)
{
  if (mss == 0)
    mss = params->default_mss;
  return params->min_window_bytes > 0 && 2.0 * params->min_window_bytes >= (double) mss;
}

/* Places level @w (segments, as a double, already rounded) within
 * [floor, cap]: below the floor it is the sub-segment window if params
 * allow one and it fits segments of @mss bytes.  Sets *sub; returns the
 * window in segments. */
static uint32_t
clamp_window (const BwssParams *params, double w, uint32_t cap, uint32_t mss, bool *sub)
{
  uint32_t floor_w = floor_segments (params, mss);
  *sub = false;
  if (!(w >= floor_w)) {   /* also catches NaN */
    *sub = sub_window_fits (params, mss) && w < floor_w;
    return floor_w;
  }
  if (w > cap)
    return cap;
  return (uint32_t) w;
}

uint32_t
bwss__fcs_window_bytes (const BwssFcs *f, const BwssParams *params, uint32_t mss)
{
  if (f->window == 0)
    return 0;
  if (f->sub)
    return params->min_window_bytes;
  if (mss == 0)
    mss = params->default_mss;
  return f->window * mss;
}

static void
set_window (BwssFcs *f, const BwssParams *params, uint32_t w, bool sub, uint64_t now_us,
            uint32_t rtt_us)
{
  f->window = w;
  f->sub = sub;
  f->changed_us = now_us;
  f->hold_until_us = now_us + bwss__fcs_hold_us (params, rtt_us);
  /* The change acts about one RTT from now; measure from then (Sec. IV-B). */
  bwss__estimator_restart (&f->est, now_us + rtt_us);
  f->periods_at_change = 0;
}

/* Regime 1, the reads carry T exactly: the window is only a ceiling above
 * them, one segment more than T needs per RTT, resized when that is more,
 * or two segments less (the receive buffer follows the window).  Returns
 * the window in segments. */
static uint32_t
step_paced (BwssFcs *f, const BwssParams *params, uint64_t now_us, double target_bps,
            uint32_t rtt_us, uint32_t mss)
{
  double need = ceil (segments_for_rate (target_bps, rtt_us, mss)) + 1.0;
  if (need < (double) params->pace_window_segments)
    need = params->pace_window_segments;
  uint32_t cap = window_cap (params, target_bps, rtt_us, mss);
  if (need > (double) cap && cap >= params->pace_window_segments)
    need = cap;
  f->target_bps = target_bps;
  f->debt_bits = 0.0;
  if (!f->pacing || f->sub || need > (double) f->window || need + 2.0 <= (double) f->window) {
    f->pacing = true;
    set_window (f, params, (uint32_t) need, false, now_us, rtt_us);
    f->state = BWSS_FCS_HOLD;
  } else if (now_us >= f->hold_until_us) {
    f->state = BWSS_FCS_STEADY;
  }
  return f->window;
}

/* Returns true if @target is a cut below restart_fraction of the target the
 * window was set for: eq. (1) again, at once. */
static bool
cut_restarts (const BwssParams *params, const BwssFcs *f, double target, uint32_t rtt_us)
{
  return f->state != BWSS_FCS_RELEASED && rtt_us != 0
      && target < params->restart_fraction * f->target_bps;
}

/* Regime 2, a window for a new target: w = T·RTT/p rounded to the nearest
 * segment (eq. 1), after a release or a deep cut.  Returns the window in
 * segments, 0 while the RTT is unknown. */
static uint32_t
start (BwssFcs *f, const BwssParams *params, uint64_t now_us, double target_bps,
       uint32_t rtt_us, uint32_t mss)
{
  if (rtt_us == 0)
    return 0;                           /* eq. (1) needs the RTT */
  double level = floor (segments_for_rate (target_bps, rtt_us, mss) + 0.5);   /* eq. (1) */
  uint32_t cap = window_cap (params, target_bps, rtt_us, mss);
  bool sub;
  uint32_t w = clamp_window (params, level, cap, mss, &sub);
  set_window (f, params, w, sub, now_us, rtt_us);
  f->target_bps = target_bps;
  f->debt_bits = 0.0;
  f->state = BWSS_FCS_HOLD;
  return f->window;
}

/* Returns true if @target moved from the target the window was set for by
 * more than rescale_threshold. */
static bool
retargeted (const BwssParams *params, const BwssFcs *f, double target)
{
  if (params->rescale_threshold <= 0.0 || f->target_bps <= 0.0)
    return false;
  return fabs (target - f->target_bps) > params->rescale_threshold * f->target_bps;
}

/* Regime 2 after a large move: scales the window with the target,
 * w ← w·T'/R, where R is the rate the window carries: the fresh estimate
 * for this window if there is one (the flow's own ratio of window to rate:
 * its RTT, its path, its ACK clock), else the target it was set for.
 * Rounded, within the bounds.  Returns the window in segments. */
static uint32_t
rescale (BwssFcs *f, const BwssParams *params, uint64_t now_us, double target_bps,
         uint32_t rtt_us, uint32_t mss)
{
  double carried = f->target_bps;
  if (f->est.periods > 0 && f->est.rate_bps > 0.0)
    carried = f->est.rate_bps;
  uint32_t cap = window_cap (params, target_bps, rtt_us, mss);
  bool sub;
  double size = f->sub ? (double) params->min_window_bytes / mss : (double) f->window;
  uint32_t w = clamp_window (params, floor (size * target_bps / carried + 0.5), cap, mss, &sub);
  f->target_bps = target_bps;
  f->debt_bits = 0.0;
  if (w != f->window || sub != f->sub) {
    set_window (f, params, w, sub, now_us, rtt_us);
    f->state = BWSS_FCS_HOLD;
  }
  return f->window;
}

/* Returns true if regime 3 may decide now: the RTT known, the hold after
 * the last change over, and an estimate the law has not used yet. */
static bool
decision_due (const BwssFcs *f, uint64_t now_us, uint32_t rtt_us)
{
  if (rtt_us == 0 || now_us < f->hold_until_us)
    return false;                       /* the last change has not acted yet */
  if (f->est.periods <= f->periods_at_change || f->est.rate_bps < 0.0)
    return false;                       /* no fresh estimate yet */
  return true;
}

/* Dither: adds this period's (T − R)·φ to the rate debt, bounded by one
 * hold's worth of the target. */
static void
accrue_debt (BwssFcs *f, const BwssParams *params, double target_bps, double r,
             uint32_t rtt_us)
{
  double period_s = (double) bwss__fcs_phi_us (params, rtt_us) / 1e6;
  double bound = target_bps * (double) bwss__fcs_hold_us (params, rtt_us) / 1e6;
  f->debt_bits += (target_bps - r) * period_s;
  if (f->debt_bits > bound)
    f->debt_bits = bound;
  if (f->debt_bits < -bound)
    f->debt_bits = -bound;
}

/* Returns the step down for a rate @r above the interval, segments;
 * @seg_per_bps is 1 / (ΔR/Δw). */
static double
step_down (const BwssFcs *f, const BwssParams *params, double r, double target_bps,
           double seg_per_bps)
{
  double dw = floor ((r - target_bps) * seg_per_bps + 0.5);               /* eq. (3) */
  if (dw < 1.0 && params->dither && f->debt_bits < 0.0)
    dw = 1.0;                           /* dither: over on balance, step down */
  return dw;
}

/* Returns the step up for a rate @r below the interval, segments: at least
 * one, unless the dither is still paying back an excess. */
static double
step_up (const BwssFcs *f, const BwssParams *params, double r, double target_bps,
         double seg_per_bps)
{
  double dw = floor (params->beta * (target_bps - r) * seg_per_bps);      /* eq. (4) */
  if (dw < 1.0 && params->dither && f->debt_bits < 0.0)
    dw = 0.0;                           /* dither: still paying back an excess */
  else if (dw < 1.0)
    dw = 1.0;
  return dw;
}

/* Moves the window to level @w, within [min_window, cap], and records
 * @state; at a bound nothing is left to do: steady.  Returns the window in
 * segments. */
static uint32_t
move_window (BwssFcs *f, const BwssParams *params, uint64_t now_us, double w,
             BwssFcsState state, double target_bps, uint32_t rtt_us, uint32_t mss)
{
  uint32_t cap = window_cap (params, target_bps, rtt_us, mss);
  bool sub;
  uint32_t nw = clamp_window (params, w, cap, mss, &sub);
  if (nw != f->window || sub != f->sub) {
    set_window (f, params, nw, sub, now_us, rtt_us);
    f->target_bps = target_bps;
    f->state = state;
  } else {
    f->state = BWSS_FCS_STEADY;         /* at a bound: nothing left to do */
  }
  return f->window;
}

/* Regime 3, the law: once the hold is over and a fresh estimate R exists,
 * keep w inside [(1−α)T, (1+α)T], step down by eq. (3) above it, up by
 * eq. (4) below it.  Returns the window in segments. */
static uint32_t
adjust (BwssFcs *f, const BwssParams *params, uint64_t now_us, double target_bps,
        uint32_t rtt_us, uint32_t mss)
{
  if (!decision_due (f, now_us, rtt_us))
    return f->window;
  f->periods_at_change = f->est.periods;   /* a decision consumes its estimate */
  double r = f->est.rate_bps;
  if (params->dither)
    accrue_debt (f, params, target_bps, r, rtt_us);
  double seg_per_bps = segments_for_rate (1.0, rtt_us, mss);   /* 1 / (ΔR/Δw) */
  double w = level_of (f);
  if (r > (1.0 + params->alpha) * target_bps)
    return move_window (f, params, now_us, w - step_down (f, params, r, target_bps, seg_per_bps),
                        BWSS_FCS_DECREASED, target_bps, rtt_us, mss);
  if (r < (1.0 - params->alpha) * target_bps)
    return move_window (f, params, now_us, w + step_up (f, params, r, target_bps, seg_per_bps),
                        BWSS_FCS_INCREASED, target_bps, rtt_us, mss);
  f->state = BWSS_FCS_STEADY;
  f->debt_bits = 0.0;
  return f->window;
}

/* One step, in three regimes: the receiver paces the reads; a window for a
 * new target (eq. 1 after a release or a deep cut, a rescale after a large
 * move); the law's adjustment (eq. 3, 4). */
uint32_t
bwss__fcs_step (BwssFcs *f, const BwssParams *params, uint64_t now_us,
               double target_bps, uint32_t rtt_us, uint32_t mss)
{
  if (mss == 0)
    mss = params->default_mss;
  if (!isfinite (target_bps) || target_bps < 0.0)
    target_bps = 0.0;

  if (f->paced && rtt_us != 0 && f->state != BWSS_FCS_RELEASED)
    return step_paced (f, params, now_us, target_bps, rtt_us, mss);
  if (f->pacing)
    bwss__fcs_release (f);               /* the window takes over, from eq. (1) */

  if (f->state == BWSS_FCS_RELEASED || cut_restarts (params, f, target_bps, rtt_us))
    return start (f, params, now_us, target_bps, rtt_us, mss);
  if (rtt_us != 0 && retargeted (params, f, target_bps))
    return rescale (f, params, now_us, target_bps, rtt_us, mss);
  return adjust (f, params, now_us, target_bps, rtt_us, mss);
}

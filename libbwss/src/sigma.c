/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sigma.c — the σ calculation subsystem (paper Sec. V-B, V-C).
 *
 * σ is the sum of the targets handed to the TRAS.  Too small and the link is
 * under-used; too large and the constraints loosen until flows share by RTT
 * again.  The goal is σ_ideal: the smallest σ that fills the link (Fig. 4).
 * U = Σ R_i is the measured aggregate.
 *
 * Phases:
 *   RELEASE   initialisation: every constraint is released for release_us,
 *             then σ ← U (what plain TCP achieves);
 *   RAISE     initialisation, continued: σ grows by raise_step per probe
 *             while U keeps rising by more than rise_threshold; when it stops
 *             rising σ returns to the last value that made it rise;
 *   REACTIVE  the rules of Sec. V-C with γ:
 *             (a) a flow below γ·T*  → σ += (1−γ)·T*, the flow is tracked,
 *                 and σ keeps growing (RAISE) while U follows, so what the
 *                 congested flow leaves unused goes to the others;
 *             (b) a tracked flow back above γ·T* → σ ← U;
 *             (c) at least half of the flows below γ·T* → the whole link is
 *                 congested: σ ← U, enter LINK_CONGESTED.  "Half" is
 *                 counted in target rate, not in flows, and U must have
 *                 fallen too (see link_drop());
 *   LINK_CONGESTED
 *             waits for U to rise above its low point (congestion subsides):
 *             σ ← U, then RAISE to find the capacity again.  It also probes
 *             (RAISE) after a back-off, in case U cannot rise by itself (a
 *             flow pinned at a tiny window by eq. 7 never shows the room).
 *
 * Decisions are spaced by the settle interval the caller computes from the
 * flows' FCS hold times: a rule only fires on rates that had time to answer
 * the previous σ.  Flows whose FCS has not settled since their target moved
 * are not judged at all (the FCS lag, not congestion, explains their rate).
 *
 * Additions the paper leaves open, each needed in the traces of
 * tests/unit/test-controller.c:
 *   - (a) repeats while U follows: one step of (1−γ)·T* gives the others only
 *     a fifth of the congested flow's share (Fig. 5c shows them taking all);
 *   - the RAISE and the back-off probes after LINK_CONGESTED (the paper sets
 *     σ ← U once and relies on the periodic reset to climb back; we climb at
 *     once so the weighted shares come back within seconds);
 *   - (c) needs two judged flows and one untracked flow below γ·T*: flows
 *     already known to be congested on their own path do not make the link
 *     look congested by themselves;
 *   - (c) weighs flows by target: a video holding half of σ that falls below
 *     γ·T* while two small bulk flows hold their targets is link congestion
 *     (with cross traffic a full queue shares by RTT, not by window), and
 *     answering it with (a), more σ, would starve the video further.  With
 *     equal targets this is the paper's count.  To tell that from the
 *     video's own path being congested (Fig. 5c), (c) also needs U to have
 *     fallen: on a congested link everybody loses, on a congested path the
 *     others fill the gap;
 *   - while LINK_CONGESTED, σ follows U down once U has settled (the U taken
 *     at the onset still holds traffic from before it);
 *   - (d) σ ← U when every flow is short of its target by more than α (but
 *     not by γ): σ is just above the link, and the FCSs would otherwise
 *     push their windows into the bottleneck's queue until losses share the
 *     link as plain TCP does (seen in the lab, not in the paper's text);
 *   - (d') the mirror: every flow above its target and U above σ → σ ← U
 *     and raise (the capacity came back while no rule was watching);
 *   - the periodic re-initialisation is a raise from the current σ, not a
 *     release (see bwss_sigma_step);
 *   - (a) waits while another flow is above (2−γ)·T: then the FCS of that
 *     flow, not a congested path, explains the deficit (a flow that just
 *     joined is below its target until the others have made room) — unless
 *     that flow's window is already at its floor (one segment per RTT can be
 *     more than its target on a slow link: nothing will take it back);
 *   - (c) is not taken if, since the flows fell below γ·T*, another flow was
 *     seen above (2−γ)·T: on a congested link nobody gains, while the room a
 *     congested path leaves is taken at once by the others (until their FCS
 *     takes it back, after which U has fallen as if the link were congested:
 *     without this memory Fig. 5c would look like Fig. 5b).
 */
#include <math.h>
#include <bwss/control.h>

const char *
bwss_phase_name (BwssPhase phase)
{
  switch (phase) {
    case BWSS_PHASE_IDLE:           return "idle";
    case BWSS_PHASE_RELEASE:        return "release";
    case BWSS_PHASE_RAISE:          return "raise";
    case BWSS_PHASE_REACTIVE:       return "reactive";
    case BWSS_PHASE_LINK_CONGESTED: return "link-congested";
    default:                        return "unknown";
  }
}

void
bwss_sigma_init (BwssSigma *s)
{
  s->phase = BWSS_PHASE_IDLE;
  s->sigma_bps = 0.0;
  s->u_ref_bps = 0.0;
  s->sigma_good_bps = 0.0;
  s->phase_since_us = 0;
  s->next_decision_us = 0;
  s->next_reinit_us = 0;
  s->next_probe_us = 0;
  s->probe_backoff_us = 0;
  s->after_congestion = false;
  s->excess_seen = false;
  s->congestion_settled = false;
  s->rebase = false;
  s->changes = 0;
}

static void
enter (BwssSigma *s, BwssPhase phase, uint64_t now_us)
{
  s->phase = phase;
  s->phase_since_us = now_us;
}

void
bwss_sigma_reinit (BwssSigma *s, uint64_t now_us)
{
  enter (s, BWSS_PHASE_RELEASE, now_us);
  s->next_decision_us = 0;              /* set from release_us at the next step */
  s->next_reinit_us = 0;
}

/* A flow started or stopped.  The first raise step waits one settle
 * interval, so the flows answer the re-split before anything is judged.  If
 * a raise is already under way, U of reference is taken again (after the
 * change) instead: U compared across a change of the flow set says nothing
 * about σ.  Without this, a player that opens a connection per fragment
 * (or registers only while it downloads) raised σ by a step at every join
 * and every leave, and σ ran away above the link (lab, adaptive scenario). */
void
bwss_sigma_probe (BwssSigma *s, uint64_t now_us)
{
  if (s->phase == BWSS_PHASE_IDLE || s->phase == BWSS_PHASE_RELEASE)
    return;                             /* the initialisation will do it */
  if (s->phase == BWSS_PHASE_RAISE) {
    s->rebase = true;
    return;
  }
  enter (s, BWSS_PHASE_RAISE, now_us);
  s->u_ref_bps = -1.0;                  /* taken at the first decision */
  s->sigma_good_bps = s->sigma_bps;
  s->rebase = false;
  s->next_decision_us = 0;              /* one settle interval from the next step */
}

/* Returns σ one raise step above @sigma, bit/s. */
static double
raised (const BwssParams *p, double sigma)
{
  double step = p->raise_step * sigma;
  return sigma + (step > p->raise_floor_bps ? step : p->raise_floor_bps);
}

static void
set_sigma (BwssSigma *s, double sigma)
{
  s->sigma_bps = sigma > 0.0 ? sigma : 0.0;
  s->changes++;
}

static void
untrack_all (BwssSigmaFlow *flows, size_t n)
{
  for (size_t i = 0; i < n; i++)
    flows[i].tracked = false;
}

/* Link congestion: the first probe comes after CONGESTED_PROBE_SETTLES
 * settle intervals, each failed probe doubles the wait up to
 * CONGESTED_PROBE_MAX_US (a permanently smaller link costs one probe every
 * half minute). */
#define CONGESTED_PROBE_SETTLES 8
#define CONGESTED_PROBE_MAX_US  (32ull * 1000000ull)

/* Returns the fraction of σ below which U shows a congested link: halfway
 * between σ and γ·σ.  When only the flows of one path are congested the
 * others soon fill the gap and U stays near σ; when the link is congested
 * everybody loses and U falls. */
static double
link_drop (const BwssParams *p)
{
  return (1.0 + p->gamma) / 2.0;
}

/* Returns the σ to take when σ comes down to a measured U on a full link:
 * (1 − α)·U.  With Σ T = U exactly, a full bottleneck queue is as much an
 * equilibrium of the FCSs as an empty one (every window scales with the
 * queue's RTT), and a full queue shares by losses; α below U the queue
 * drains and the windows follow the path's RTT. */
static double
drained (const BwssParams *p, double u)
{
  return (1.0 - p->alpha) * u;
}

/* Enters RAISE with U of reference @u and σ += @increment. */
static void
start_raise (BwssSigma *s, uint64_t now_us, double u, double increment)
{
  enter (s, BWSS_PHASE_RAISE, now_us);
  s->u_ref_bps = u;
  s->sigma_good_bps = s->sigma_bps;
  set_sigma (s, s->sigma_bps + increment);
}

static void
enter_link_congested (BwssSigma *s, uint64_t now_us, double u, uint64_t settle_us)
{
  enter (s, BWSS_PHASE_LINK_CONGESTED, now_us);
  s->u_ref_bps = u;
  s->after_congestion = true;
  s->congestion_settled = false;
  s->probe_backoff_us = CONGESTED_PROBE_SETTLES * settle_us;
  s->next_probe_us = now_us + s->probe_backoff_us;
}

/* Returns true if the untracked flows, together, reach the targets they were
 * given: Σ R >= (1−α)·Σ T over the flows with a target and an estimate. */
static bool
targets_reached (const BwssParams *p, const BwssSigmaFlow *flows, size_t n)
{
  double r = 0.0, t = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (flows[i].tracked || flows[i].target_bps <= 0.0 || flows[i].rate_bps < 0.0)
      continue;
    r += flows[i].rate_bps;
    t += flows[i].target_bps;
  }
  return t > 0.0 && r >= (1.0 - p->alpha) * t;
}

/* RAISE: keep raising while U answers, i.e. U rose or the flows reached
 * their raised targets (U can stay flat when the step only takes back what
 * a flow was using above its old target).  Returns true (σ always moves). */
static bool
step_raise (BwssSigma *s, const BwssParams *p, uint64_t now_us, double u,
            const BwssSigmaFlow *flows, size_t n)
{
  if (s->rebase && s->u_ref_bps >= 0.0) {
    s->rebase = false;                  /* the flow set changed: new reference */
    s->u_ref_bps = u;
    return true;                        /* and judge it a settle interval later */
  }
  s->rebase = false;
  if (s->u_ref_bps < 0.0) {             /* entered by a probe: first look */
    start_raise (s, now_us, u, raised (p, s->sigma_bps) - s->sigma_bps);
    return true;
  }
  if (u > s->u_ref_bps * (1.0 + p->rise_threshold) || targets_reached (p, flows, n)) {
    s->after_congestion = false;        /* the capacity is coming back */
    start_raise (s, now_us, u, raised (p, s->sigma_bps) - s->sigma_bps);
    return true;
  }
  /* U no longer follows σ: the link is full at the last good σ. */
  set_sigma (s, s->sigma_good_bps);
  if (s->after_congestion) {
    enter (s, BWSS_PHASE_LINK_CONGESTED, now_us);
    s->u_ref_bps = u;
    s->next_probe_us = now_us + s->probe_backoff_us;
    s->probe_backoff_us *= 2;
    if (s->probe_backoff_us > CONGESTED_PROBE_MAX_US)
      s->probe_backoff_us = CONGESTED_PROBE_MAX_US;
  } else {
    enter (s, BWSS_PHASE_REACTIVE, now_us);
  }
  return true;
}

/* REACTIVE and LINK_CONGESTED: the γ rules.  Returns true if σ or the
 * phase changed. */
static bool
step_reactive (BwssSigma *s, const BwssParams *p, uint64_t now_us, double u,
               BwssSigmaFlow *flows, size_t n, uint64_t settle_us)
{
  size_t judged = 0, untracked_below = 0;
  bool excess = false;   /* an untracked flow well above its target */
  size_t untracked_judged = 0, short_of_target = 0, over_target = 0;
  double judged_t = 0.0, below_t = 0.0;  /* Σ T of judged / of those below γ·T */
  bool recovered = false;

  for (size_t i = 0; i < n; i++) {
    BwssSigmaFlow *f = &flows[i];
    if (f->tracked) {
      /* (b) a tracked flow that is back above γ·T* */
      if (f->rate_bps > p->gamma * f->tracked_target) {
        f->tracked = false;
        recovered = true;
      } else {
        judged++;
        judged_t += f->tracked_target;
        below_t += f->tracked_target;
      }
      continue;
    }
    if (!f->settled || f->rate_bps < 0.0 || f->target_bps <= 0.0)
      continue;
    judged++;
    judged_t += f->target_bps;
    untracked_judged++;
    if (f->rate_bps < (1.0 - p->alpha) * f->target_bps)
      short_of_target++;
    if (f->rate_bps > (1.0 + p->alpha) * f->target_bps)
      over_target++;
    if (f->rate_bps > (2.0 - p->gamma) * f->target_bps && !f->at_floor)
      excess = true;
    if (f->rate_bps < p->gamma * f->target_bps) {
      below_t += f->target_bps;
      untracked_below++;
    }
  }

  if (s->phase == BWSS_PHASE_LINK_CONGESTED) {
    if (u < s->u_ref_bps)
      s->u_ref_bps = u;                 /* follow the low point */
    if (u > s->u_ref_bps * (1.0 + p->rise_threshold)) {
      /* congestion subsides: σ ← U, then climb back to the capacity */
      set_sigma (s, u);
      untrack_all (flows, n);
      s->after_congestion = false;
      start_raise (s, now_us, u, raised (p, u) - u);
      return true;
    }
    if (!s->congestion_settled && now_us - s->phase_since_us >= settle_us / 2) {
      /* once, when U has settled after the onset (the U taken at the onset
       * still held pre-congestion traffic): σ ← (1 − α)·U if lower */
      s->congestion_settled = true;
      if (drained (p, u) < s->sigma_bps) {
        set_sigma (s, drained (p, u));
        return true;
      }
    }
    if (now_us >= s->next_probe_us && untracked_below == 0) {
      start_raise (s, now_us, u, raised (p, s->sigma_bps) - s->sigma_bps);
      return true;
    }
  }

  /* Remember whether, since flows fell below γ·T*, others gained: then the
   * room they left was taken, their path is the problem, not the link. */
  if (untracked_below == 0)
    s->excess_seen = false;
  else if (excess)
    s->excess_seen = true;

  if (judged >= 2 && 2.0 * below_t >= judged_t && untracked_below > 0
      && !s->excess_seen && u < link_drop (p) * s->sigma_bps) {
    /* (c) the whole access link is congested */
    if (s->phase == BWSS_PHASE_LINK_CONGESTED && u >= s->sigma_bps)
      return recovered;
    set_sigma (s, drained (p, u));
    untrack_all (flows, n);
    enter_link_congested (s, now_us, u, settle_us);
    return true;
  }

  if (recovered) {
    set_sigma (s, u);                   /* (b) */
    return true;
  }

  /* (d') the mirror of (d): every flow above its target and U above σ —
   * the link has more room than σ (windows cannot go below one segment,
   * or the capacity came back while we were not looking): σ ← U, raise. */
  if (s->phase == BWSS_PHASE_REACTIVE && untracked_judged >= 1
      && over_target == untracked_judged && u > s->sigma_bps * (1.0 + p->rise_threshold)) {
    set_sigma (s, u);
    start_raise (s, now_us, u, raised (p, u) - u);
    return true;
  }

  /* (d) every flow short of its target, none by much: σ is a little above
   * what the link carries.  Each FCS would keep growing its window into the
   * bottleneck's queue, the queue would fill and the link would be shared
   * by losses, like plain TCP.  σ ← U. */
  if (s->phase == BWSS_PHASE_REACTIVE && untracked_judged >= 1
      && short_of_target == untracked_judged && u < s->sigma_bps) {
    set_sigma (s, drained (p, u));
    return true;
  }

  /* (a) is not judged while another flow is well above its target: its FCS
   * is still taking back what it uses too much, and that alone explains a
   * flow below γ·T* (a flow that just started, say). */
  if (excess)
    return false;
  for (size_t i = 0; i < n; i++) {
    BwssSigmaFlow *f = &flows[i];
    if (f->tracked || !f->settled || f->rate_bps < 0.0 || f->target_bps <= 0.0)
      continue;
    if (f->rate_bps < p->gamma * f->target_bps) {
      /* (a) congestion on this flow's own path: give its unused share away,
       * and keep giving while the others use it */
      f->tracked = true;
      f->tracked_target = f->target_bps;
      start_raise (s, now_us, u, (1.0 - p->gamma) * f->target_bps);
      return true;
    }
  }
  return false;
}

bool
bwss_sigma_step (BwssSigma *s, const BwssParams *p, uint64_t now_us,
                 double u, BwssSigmaFlow *flows, size_t n, uint64_t settle_us)
{
  if (!isfinite (u) || u < 0.0)
    u = 0.0;
  if (settle_us < p->probe_min_us)
    settle_us = p->probe_min_us;
  if (settle_us > p->probe_max_us)
    settle_us = p->probe_max_us;

  if (n == 0) {
    if (s->phase == BWSS_PHASE_IDLE)
      return false;
    enter (s, BWSS_PHASE_IDLE, now_us);
    return true;
  }
  if (s->phase == BWSS_PHASE_IDLE) {
    bwss_sigma_reinit (s, now_us);       /* the first flow: initialise */
    untrack_all (flows, n);
    s->next_decision_us = now_us + p->release_us;
    s->next_reinit_us = p->reinit_period_us ? now_us + p->reinit_period_us : 0;
    return true;
  }
  if (s->next_reinit_us == 0 && p->reinit_period_us)
    s->next_reinit_us = now_us + p->reinit_period_us;
  if (p->reinit_period_us && now_us >= s->next_reinit_us) {
    /* periodic re-initialisation (Sec. V-C), as a raise from the current σ:
     * a full release would hand a protected video to plain TCP for
     * release_us every period */
    s->next_reinit_us = now_us + p->reinit_period_us;
    if (s->phase == BWSS_PHASE_REACTIVE || s->phase == BWSS_PHASE_LINK_CONGESTED) {
      untrack_all (flows, n);
      bwss_sigma_probe (s, now_us);
      return true;
    }
  }
  if (s->next_decision_us == 0)
    s->next_decision_us = now_us + (s->phase == BWSS_PHASE_RELEASE ? p->release_us : settle_us);
  if (now_us < s->next_decision_us)
    return false;

  bool changed;
  switch (s->phase) {
    case BWSS_PHASE_RELEASE:
      set_sigma (s, u);                  /* σ ← what plain TCP achieves */
      s->after_congestion = false;
      start_raise (s, now_us, u, raised (p, u) - u);
      changed = true;
      break;
    case BWSS_PHASE_RAISE:
      changed = step_raise (s, p, now_us, u, flows, n);
      break;
    default:
      changed = step_reactive (s, p, now_us, u, flows, n, settle_us);
      break;
  }
  /* After a change let the FCSs answer; otherwise look again soon. */
  s->next_decision_us = now_us + (changed ? settle_us : settle_us / 4);
  return changed;
}

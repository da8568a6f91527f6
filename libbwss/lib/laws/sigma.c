/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sigma.c — the paper's σ loop (Sec. V-B, V-C), selected by
 * BWSS_LOOP_PAPER; the default is the delay loop (capacity.c).
 *
 * σ is the sum of the targets handed to the TRAS.  Too small and the link is
 * under-used; too large and the constraints loosen until flows share by RTT
 * again.  The goal is σ_ideal: the smallest σ that fills the link (Fig. 4).
 * U = Σ R_i is the measured aggregate; the loop sees nothing else.
 *
 * Phases:
 *   RELEASE   initialisation: every constraint is released for release_us,
 *             then σ ← U (what plain TCP achieves);
 *   RAISE     σ grows by raise_step per probe while U keeps rising by more
 *             than rise_threshold (or the flows reach their raised targets);
 *             when it stops rising σ returns to the last value that made it
 *             rise (to LINK_CONGESTED, with a longer back-off, if the raise
 *             came from there);
 *   REACTIVE, LINK_CONGESTED: the rules below.
 *
 * Decisions are spaced by the settle interval the caller computes from the
 * flows' FCS hold times: a rule only fires on rates that had time to answer
 * the previous σ.  Flows whose FCS has not settled since their target moved
 * are not judged at all (the FCS lag, not congestion, explains their rate).
 * One pass counts (count()); then the first rule whose predicate holds acts
 * (a rule marked "+" is the paper's, the others were needed in the traces of
 * tests/unit/test-controller.c or in the lab):
 *
 * | rule               | paper        | condition                                     | action                                  |
 * |--------------------|--------------|-----------------------------------------------|-----------------------------------------|
 * | (b) bookkeeping    | + (b)        | a tracked flow is back above γ·T*             | it is no longer tracked                 |
 * | congestion-subsides| (after (c))  | LINK_CONGESTED, U > (1+rise)·its low point    | σ ← U, untrack all, RAISE               |
 * | congestion-settles | (after (c))  | LINK_CONGESTED, half a settle after the onset | σ ← (1−α)·U if lower (once)             |
 * | congested-probe    | (after (c))  | LINK_CONGESTED, back-off over, no untracked   | RAISE one step (a flow pinned at a tiny |
 * |                    |              | flow below γ·T                                | window by eq. 7 never shows the room)   |
 * | (c) link congested | + (c)        | flows holding >= half the judged target below | σ ← (1−α)·U, untrack all,               |
 * |                    |              | γ·T (one untracked, two judged), U < (1+γ)/2·σ| LINK_CONGESTED                          |
 * |                    |              | and nobody gained since they fell             |                                         |
 * | (b) recovered      | + (b)        | a tracked flow recovered                      | σ ← U                                   |
 * | (d') room          | –            | REACTIVE, every flow above (1+α)·T, U above σ | σ ← U, RAISE                            |
 * | (d) above the link | –            | REACTIVE, every flow below (1−α)·T, U below σ | σ ← (1−α)·U                             |
 * | (a) congested path | + (a)        | an untracked flow below γ·T, and no other     | track it, σ += (1−γ)·T*, RAISE (which   |
 * |                    |              | flow above (2−γ)·T unless at its floor        | keeps giving while U follows)           |
 *
 * Why the additions:
 *   - (a) repeats while U follows: one step of (1−γ)·T* gives the others only
 *     a fifth of the congested flow's share (Fig. 5c shows them taking all);
 *   - (a) waits while another flow is above (2−γ)·T: its FCS, not a congested
 *     path, explains the deficit (a flow that just joined is below its target
 *     until the others have made room) — unless that flow's window is at its
 *     floor (one segment per RTT can exceed its target on a slow link);
 *   - (c) weighs flows by target, needs two judged flows and U to have
 *     fallen: a video holding half of σ that falls below γ·T while two small
 *     bulk flows hold theirs is link congestion, while on a congested path
 *     (Fig. 5c) the others fill the gap and U stays; and (c) is not taken
 *     if, since the flows fell, another was seen above (2−γ)·T (the room a
 *     congested path leaves is taken at once by the others);
 *   - the LINK_CONGESTED rules: the paper sets σ ← U once and relies on the
 *     periodic reset to climb back; we climb back at once so the weighted
 *     shares return within seconds, and σ follows U down once U has settled;
 *   - (d)/(d'): σ just above the link lets every FCS push its window into the
 *     bottleneck's queue until losses share the link as plain TCP does; σ
 *     just below it (windows cannot go below a segment) wastes the link;
 *   - σ ← (1 − α)·U rather than U on a full link: with Σ T = U exactly a full
 *     queue is as much an equilibrium of the FCSs as an empty one;
 *   - the periodic re-initialisation and flow start/stop are a raise from the
 *     current σ, not a release (a release hands a protected video to plain
 *     TCP); a flow change during a raise takes U of reference again (a player
 *     that opens a connection per fragment ran σ away otherwise).
 */
#include <math.h>
#include "laws.h"

const char *
bwss_phase_name (BwssPhase phase)
{
  switch (phase) {
    case BWSS_PHASE_IDLE:           return "idle";
    case BWSS_PHASE_RELEASE:        return "release";
    case BWSS_PHASE_RAISE:          return "raise";
    case BWSS_PHASE_REACTIVE:       return "reactive";
    case BWSS_PHASE_LINK_CONGESTED: return "link-congested";
    case BWSS_PHASE_TRACK:          return "track";
    case BWSS_PHASE_START:          return "start";
    case BWSS_PHASE_COMPETE:        return "compete";
    default:                        return "unknown";
  }
}

const char *
bwss_phase_mode (BwssPhase phase)
{
  switch (phase) {
    case BWSS_PHASE_START:
    case BWSS_PHASE_TRACK:   return "keeping the queue short";
    case BWSS_PHASE_COMPETE: return "sharing the link with traffic bwss does not control";
    default:                 return NULL;
  }
}

void
bwss__sigma_init (BwssSigma *s)
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
bwss__sigma_reinit (BwssSigma *s, uint64_t now_us)
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
bwss__sigma_probe (BwssSigma *s, uint64_t now_us)
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

/* Link congestion: the first probe comes after congested_probe_settles
 * settle intervals, each failed probe doubles the wait up to
 * congested_probe_max_us. */
static void
enter_link_congested (BwssSigma *s, const BwssParams *p, uint64_t now_us, double u,
                      uint64_t settle_us)
{
  enter (s, BWSS_PHASE_LINK_CONGESTED, now_us);
  s->u_ref_bps = u;
  s->after_congestion = true;
  s->congestion_settled = false;
  s->probe_backoff_us = p->congested_probe_settles * settle_us;
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
    if (s->probe_backoff_us > p->congested_probe_max_us)
      s->probe_backoff_us = p->congested_probe_max_us;
  } else {
    enter (s, BWSS_PHASE_REACTIVE, now_us);
  }
  return true;
}

/* ---- REACTIVE and LINK_CONGESTED: one pass that counts ---- */

typedef struct {
  size_t judged;            /* flows the rules may judge (tracked ones included) */
  size_t untracked_judged;
  size_t untracked_below;   /* untracked flows below γ·T */
  size_t short_of_target;   /* untracked flows below (1−α)·T */
  size_t over_target;       /* untracked flows above (1+α)·T */
  size_t recovered;         /* tracked flows back above γ·T* */
  double judged_t;          /* Σ T of the judged flows */
  double below_t;           /* Σ T of those below γ·T (tracked ones at T*) */
  bool   excess;            /* an untracked flow above (2−γ)·T, not at its floor */
} Counts;

/* Returns true if the rules may judge @f (untracked): it is settled and has a
 * rate and a target. */
static bool
judgeable (const BwssSigmaFlow *f)
{
  return f->settled && f->rate_bps >= 0.0 && f->target_bps > 0.0;
}

static Counts
count (const BwssParams *p, const BwssSigmaFlow *flows, size_t n)
{
  Counts k = { 0 };
  for (size_t i = 0; i < n; i++) {
    const BwssSigmaFlow *f = &flows[i];
    if (f->tracked) {
      if (f->rate_bps > p->gamma * f->tracked_target) {
        k.recovered++;
      } else {
        k.judged++;
        k.judged_t += f->tracked_target;
        k.below_t += f->tracked_target;
      }
      continue;
    }
    if (!judgeable (f))
      continue;
    k.judged++;
    k.judged_t += f->target_bps;
    k.untracked_judged++;
    if (f->rate_bps < (1.0 - p->alpha) * f->target_bps)
      k.short_of_target++;
    if (f->rate_bps > (1.0 + p->alpha) * f->target_bps)
      k.over_target++;
    if (f->rate_bps > (2.0 - p->gamma) * f->target_bps && !f->at_floor)
      k.excess = true;
    if (f->rate_bps < p->gamma * f->target_bps) {
      k.below_t += f->target_bps;
      k.untracked_below++;
    }
  }
  return k;
}

/* ---- one predicate per rule ---- */

/* LINK_CONGESTED: U rose above its low point. */
static bool
rule_congestion_subsides (const BwssSigma *s, const BwssParams *p, double u)
{
  return s->phase == BWSS_PHASE_LINK_CONGESTED && u > s->u_ref_bps * (1.0 + p->rise_threshold);
}

/* LINK_CONGESTED: U has had half a settle interval to settle since the
 * onset (once), and (1 − α)·U is below σ. */
static bool
rule_congestion_settles (const BwssSigma *s, uint64_t now, uint64_t settle)
{
  return s->phase == BWSS_PHASE_LINK_CONGESTED && !s->congestion_settled
      && now - s->phase_since_us >= settle / 2;
}

/* LINK_CONGESTED: the back-off has passed and no untracked flow is below
 * γ·T: probe for room. */
static bool
rule_congested_probe (const BwssSigma *s, uint64_t now, const Counts *k)
{
  return s->phase == BWSS_PHASE_LINK_CONGESTED && now >= s->next_probe_us
      && k->untracked_below == 0;
}

/* (c): flows carrying at least half the judged target are below γ·T, one of
 * them untracked, U fell, and nobody gained since they fell. */
static bool
rule_c_link_congested (const BwssSigma *s, const BwssParams *p, double u, const Counts *k)
{
  return k->judged >= 2 && 2.0 * k->below_t >= k->judged_t && k->untracked_below > 0
      && !s->excess_seen && u < link_drop (p) * s->sigma_bps;
}

/* (b): a tracked flow is back above γ·T*. */
static bool
rule_b_recovered (const Counts *k)
{
  return k->recovered > 0;
}

/* (d'): every judged flow above its target and U above σ. */
static bool
rule_dprime_room (const BwssSigma *s, const BwssParams *p, double u, const Counts *k)
{
  return s->phase == BWSS_PHASE_REACTIVE && k->untracked_judged >= 1
      && k->over_target == k->untracked_judged && u > s->sigma_bps * (1.0 + p->rise_threshold);
}

/* (d): every judged flow short of its target (by less than γ) and U below σ. */
static bool
rule_d_above_link (const BwssSigma *s, double u, const Counts *k)
{
  return s->phase == BWSS_PHASE_REACTIVE && k->untracked_judged >= 1
      && k->short_of_target == k->untracked_judged && u < s->sigma_bps;
}

/* (a): returns the index of the first untracked, judged flow below γ·T, or
 * n if none — and n while another flow is well above its target (its FCS,
 * not a congested path, explains the deficit). */
static size_t
rule_a_congested_path (const BwssParams *p, const BwssSigmaFlow *flows, size_t n,
                       const Counts *k)
{
  if (k->excess)
    return n;
  for (size_t i = 0; i < n; i++) {
    const BwssSigmaFlow *f = &flows[i];
    if (!f->tracked && judgeable (f) && f->rate_bps < p->gamma * f->target_bps)
      return i;
  }
  return n;
}

/* REACTIVE and LINK_CONGESTED: the γ rules, in the order of the table.
 * Returns true if σ or the phase changed. */
static bool
step_reactive (BwssSigma *s, const BwssParams *p, uint64_t now_us, double u,
               BwssSigmaFlow *flows, size_t n, uint64_t settle_us)
{
  Counts k = count (p, flows, n);
  /* (b) bookkeeping: a tracked flow back above γ·T* is no longer tracked */
  for (size_t i = 0; i < n; i++)
    if (flows[i].tracked && flows[i].rate_bps > p->gamma * flows[i].tracked_target)
      flows[i].tracked = false;

  if (s->phase == BWSS_PHASE_LINK_CONGESTED && u < s->u_ref_bps)
    s->u_ref_bps = u;                   /* follow the low point */
  if (rule_congestion_subsides (s, p, u)) {
    set_sigma (s, u);                   /* σ ← U, then climb back to the capacity */
    untrack_all (flows, n);
    s->after_congestion = false;
    start_raise (s, now_us, u, raised (p, u) - u);
    return true;
  }
  if (rule_congestion_settles (s, now_us, settle_us)) {
    s->congestion_settled = true;       /* the U at the onset held traffic from before */
    if (drained (p, u) < s->sigma_bps) {
      set_sigma (s, drained (p, u));
      return true;
    }
  }
  if (rule_congested_probe (s, now_us, &k)) {
    start_raise (s, now_us, u, raised (p, s->sigma_bps) - s->sigma_bps);
    return true;
  }

  /* Remember whether, since flows fell below γ·T*, others gained: then the
   * room they left was taken, their path is the problem, not the link. */
  if (k.untracked_below == 0)
    s->excess_seen = false;
  else if (k.excess)
    s->excess_seen = true;

  if (rule_c_link_congested (s, p, u, &k)) {
    if (s->phase == BWSS_PHASE_LINK_CONGESTED && u >= s->sigma_bps)
      return k.recovered > 0;
    set_sigma (s, drained (p, u));
    untrack_all (flows, n);
    enter_link_congested (s, p, now_us, u, settle_us);
    return true;
  }
  if (rule_b_recovered (&k)) {
    set_sigma (s, u);
    return true;
  }
  if (rule_dprime_room (s, p, u, &k)) {
    set_sigma (s, u);
    start_raise (s, now_us, u, raised (p, u) - u);
    return true;
  }
  if (rule_d_above_link (s, u, &k)) {
    set_sigma (s, drained (p, u));
    return true;
  }
  size_t a = rule_a_congested_path (p, flows, n, &k);
  if (a < n) {
    /* give its unused share away, and keep giving while the others use it */
    flows[a].tracked = true;
    flows[a].tracked_target = flows[a].target_bps;
    start_raise (s, now_us, u, (1.0 - p->gamma) * flows[a].target_bps);
    return true;
  }
  return false;
}

bool
bwss__sigma_step (BwssSigma *s, const BwssParams *p, uint64_t now_us,
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
    bwss__sigma_reinit (s, now_us);       /* the first flow: initialise */
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
      bwss__sigma_probe (s, now_us);
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

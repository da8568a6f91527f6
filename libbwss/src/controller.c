/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * controller.c — the BWSS of Fig. 1: flows, σ loop, TRAS and one FCS each,
 * run on an injected clock with injected measurements.
 *
 * Each tick:
 *   1. U = Σ R_i from the flows' estimators;
 *   2. the σ loop decides (sigma.c), judging only flows whose FCS had time to
 *      reach their current target;
 *   3. if σ, the flow set or a preference changed, the TRAS re-splits σ
 *      (allocation.c);
 *   4. every FCS steps towards its target (fcs.c); in the release phase every
 *      flow is unconstrained (window 0 = the kernel's own).
 *
 * The rates handed to the σ loop (each R_i and U) are means over the last
 * half settle interval, from the byte counters, not the FCS's EWMA: at small
 * windows each FCS dithers between two whole-segment windows, and an
 * instantaneous estimate would judge a σ step by the phase of that dither.
 *
 * The settle interval handed to the σ loop is two FCS cycles of the slowest
 * flow: a cycle is the hold after a change (RTT + 3φ) plus one estimation
 * period, and the law needs about two cycles to come within γ of a new target
 * (each increase closes β = 70 % of the gap).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <bwss/control.h>

/* A byte-count history, one entry every HISTORY_STEP_US; HISTORY_LEN
 * entries cover 6.4 s, more than half the longest settle interval
 * (probe_max_us = 5 s by default; longer ones use what exists). */
#define HISTORY_STEP_US 50000
#define HISTORY_LEN     128

typedef struct {
  uint64_t t_us[HISTORY_LEN];
  uint64_t bytes[HISTORY_LEN];
  size_t   n, head;             /* ring: head = next slot */
} History;

typedef struct {
  uint64_t  id;
  BwssPrefs prefs;
  BwssFcs   fcs;
  uint32_t  rtt_us;
  uint32_t  mss;
  double    target_bps;
  uint64_t  target_moved_us;  /* last time the target moved by more than α */
  bool      tracked;          /* σ loop: congested on its own path */
  double    tracked_target;
  uint64_t  last_bytes;       /* cumulative count at the last sample */
  bool      have_bytes;
  uint64_t  received;         /* bytes counted since the flow was added */
  History   history;          /* of `received`, for the σ loop's mean rate */
} Flow;

struct BwssController {
  BwssParams     p;
  Flow          *flows;
  size_t         n, cap;
  BwssSigmaFlow *view;         /* scratch for the σ loop, cap entries */
  BwssPrefs     *prefs;        /* scratch for the TRAS */
  double        *targets;
  BwssSigma      sigma;
  bool           reallocate;
  double         aggregate_bps;
  uint64_t       aggregate_bytes;   /* Σ of every flow's received bytes */
  History        history;           /* of aggregate_bytes */
};

/* Settle interval = SETTLE_CYCLES FCS cycles of the slowest flow. */
#define SETTLE_CYCLES 2

int
bwss_controller_new (const BwssParams *params, BwssController **out)
{
  if (out == NULL)
    return BWSS_EINVAL;
  BwssParams p;
  if (params)
    p = *params;
  else
    bwss_params_init (&p);
  if (bwss_params_validate (&p, NULL) != BWSS_OK)
    return BWSS_EINVAL;
  BwssController *c = calloc (1, sizeof *c);
  if (c == NULL)
    return BWSS_ENOMEM;
  c->p = p;
  bwss_sigma_init (&c->sigma);
  *out = c;
  return BWSS_OK;
}

void
bwss_controller_free (BwssController *c)
{
  if (c == NULL)
    return;
  free (c->flows);
  free (c->view);
  free (c->prefs);
  free (c->targets);
  free (c);
}

const BwssParams *
bwss_controller_params (const BwssController *c)
{
  return &c->p;
}

static Flow *
find (const BwssController *c, uint64_t id)
{
  for (size_t i = 0; i < c->n; i++)
    if (c->flows[i].id == id)
      return &c->flows[i];
  return NULL;
}

static int
grow (BwssController *c)
{
  if (c->n < c->cap)
    return BWSS_OK;
  size_t cap = c->cap ? 2 * c->cap : 8;
  Flow *flows = realloc (c->flows, cap * sizeof *flows);
  if (flows == NULL)
    return BWSS_ENOMEM;
  c->flows = flows;
  BwssSigmaFlow *view = realloc (c->view, cap * sizeof *view);
  if (view == NULL)
    return BWSS_ENOMEM;
  c->view = view;
  BwssPrefs *prefs = realloc (c->prefs, cap * sizeof *prefs);
  if (prefs == NULL)
    return BWSS_ENOMEM;
  c->prefs = prefs;
  double *targets = realloc (c->targets, cap * sizeof *targets);
  if (targets == NULL)
    return BWSS_ENOMEM;
  c->targets = targets;
  c->cap = cap;
  return BWSS_OK;
}

int
bwss_controller_add_flow (BwssController *c, uint64_t id, const BwssPrefs *prefs,
                          uint64_t now_us)
{
  if (c == NULL || bwss_prefs_validate (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  if (find (c, id))
    return BWSS_EEXIST;
  int err = grow (c);
  if (err)
    return err;
  Flow *f = &c->flows[c->n++];
  memset (f, 0, sizeof *f);
  f->id = id;
  f->prefs = *prefs;
  bwss_fcs_init (&f->fcs);
  f->target_moved_us = now_us;
  c->reallocate = true;
  /* Flow start: look for the new optimum from the current σ (Sec. V-C). */
  bwss_sigma_probe (&c->sigma, now_us);
  return BWSS_OK;
}

int
bwss_controller_set_prefs (BwssController *c, uint64_t id, const BwssPrefs *prefs,
                           uint64_t now_us)
{
  if (c == NULL || bwss_prefs_validate (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  f->prefs = *prefs;
  c->reallocate = true;
  return BWSS_OK;
}

int
bwss_controller_remove_flow (BwssController *c, uint64_t id, uint64_t now_us)
{
  if (c == NULL)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  size_t i = (size_t) (f - c->flows);
  memmove (&c->flows[i], &c->flows[i + 1], (c->n - i - 1) * sizeof *f);
  c->n--;
  c->reallocate = true;
  /* Flow stop: its share is re-split now, then look for more (Sec. V-C). */
  bwss_sigma_probe (&c->sigma, now_us);
  return BWSS_OK;
}

int
bwss_controller_observe (BwssController *c, uint64_t id, const BwssSample *s)
{
  if (c == NULL || s == NULL)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  if (f->have_bytes && s->bytes_received >= f->last_bytes) {
    c->aggregate_bytes += s->bytes_received - f->last_bytes;
    f->received += s->bytes_received - f->last_bytes;
  }
  f->last_bytes = s->bytes_received;
  f->have_bytes = true;
  if (s->rtt_us)
    f->rtt_us = s->rtt_us;
  if (s->mss)
    f->mss = s->mss;
  bwss_fcs_observe (&f->fcs, &c->p, s->now_us, s->bytes_received, f->rtt_us);
  return BWSS_OK;
}

/* Returns the settle interval for the σ loop, µs. */
static uint64_t
settle_us (const BwssController *c)
{
  uint64_t worst = 0;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    uint64_t cycle = bwss_fcs_hold_us (&c->p, f->rtt_us) + bwss_fcs_phi_us (&c->p, f->rtt_us);
    if (cycle > worst)
      worst = cycle;
  }
  return SETTLE_CYCLES * worst;
}

static void
history_push (History *h, uint64_t now_us, uint64_t bytes)
{
  if (h->n) {
    size_t last = (h->head + HISTORY_LEN - 1) % HISTORY_LEN;
    if (now_us < h->t_us[last] + HISTORY_STEP_US)
      return;
  }
  h->t_us[h->head] = now_us;
  h->bytes[h->head] = bytes;
  h->head = (h->head + 1) % HISTORY_LEN;
  if (h->n < HISTORY_LEN)
    h->n++;
}

/* Returns the mean rate of a counter now at @bytes over about the last
 * @window_us, bit/s (over what history exists if shorter); negative with no
 * history. */
static double
history_rate (const History *h, uint64_t now_us, uint64_t bytes, uint64_t window_us)
{
  size_t from = HISTORY_LEN;
  for (size_t k = 1; k <= h->n; k++) {
    from = (h->head + HISTORY_LEN - k) % HISTORY_LEN;
    if (h->t_us[from] + window_us <= now_us)
      break;
  }
  if (from == HISTORY_LEN || now_us <= h->t_us[from])
    return -1.0;
  return (double) (bytes - h->bytes[from]) * 8.0 / ((double) (now_us - h->t_us[from]) / 1e6);
}

/* Re-runs the TRAS and notes which targets moved by more than α. */
static void
reallocate (BwssController *c, uint64_t now_us)
{
  for (size_t i = 0; i < c->n; i++)
    c->prefs[i] = c->flows[i].prefs;
  if (bwss_allocate (c->sigma.sigma_bps, c->prefs, c->n, c->targets) != BWSS_OK)
    return;                             /* prefs were validated on entry */
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    double old = f->target_bps, t = c->targets[i];
    if (fabs (t - old) > c->p.alpha * old)
      f->target_moved_us = now_us;
    f->target_bps = t;
  }
  c->reallocate = false;
}

void
bwss_controller_tick (BwssController *c, uint64_t now_us)
{
  if (c == NULL)
    return;
  uint64_t settle = settle_us (c);

  uint64_t window = settle / 2;
  history_push (&c->history, now_us, c->aggregate_bytes);
  double u = history_rate (&c->history, now_us, c->aggregate_bytes, window);
  c->aggregate_bps = u > 0.0 ? u : 0.0;

  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    BwssSigmaFlow *v = &c->view[i];
    history_push (&f->history, now_us, f->received);
    v->rate_bps = history_rate (&f->history, now_us, f->received, window);
    v->target_bps = f->target_bps;
    /* settled: the FCS has had the settle interval to follow the target
     * (whether or not it is still stepping: a congested flow keeps raising
     * its window and must still be judged) */
    v->settled = f->fcs.state != BWSS_FCS_RELEASED
        && now_us - f->target_moved_us >= settle;
    v->at_floor = f->fcs.state != BWSS_FCS_RELEASED
        && f->fcs.window <= c->p.min_window_segments;
    v->tracked = f->tracked;
    v->tracked_target = f->tracked_target;
  }
  if (bwss_sigma_step (&c->sigma, &c->p, now_us, u, c->view, c->n, settle))
    c->reallocate = true;
  for (size_t i = 0; i < c->n; i++) {
    c->flows[i].tracked = c->view[i].tracked;
    c->flows[i].tracked_target = c->view[i].tracked_target;
  }
  if (c->reallocate)
    reallocate (c, now_us);

  bool released = c->sigma.phase == BWSS_PHASE_RELEASE || c->sigma.phase == BWSS_PHASE_IDLE;
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    if (released)
      bwss_fcs_release (&f->fcs);
    else
      bwss_fcs_step (&f->fcs, &c->p, now_us, f->target_bps, f->rtt_us, f->mss);
  }
}

int
bwss_controller_flow_state (const BwssController *c, uint64_t id, BwssFlowState *out)
{
  if (c == NULL || out == NULL)
    return BWSS_EINVAL;
  const Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  uint32_t mss = f->mss ? f->mss : c->p.default_mss;
  out->prefs = f->prefs;
  out->target_bps = f->target_bps;
  out->rate_bps = f->fcs.est.rate_bps;
  out->window_segments = f->fcs.window;
  /* window ≤ 2^30 / mss segments (fcs.c), so the product fits 32 bits. */
  out->window_bytes = f->fcs.window * mss;
  out->rtt_us = f->rtt_us;
  out->mss = mss;
  out->fcs_state = f->fcs.state;
  out->congested = f->tracked;
  return BWSS_OK;
}

void
bwss_controller_stats (const BwssController *c, BwssControllerStats *out)
{
  if (c == NULL || out == NULL)
    return;
  out->phase = c->sigma.phase;
  out->sigma_bps = c->sigma.sigma_bps;
  out->aggregate_bps = c->aggregate_bps;
  out->n_flows = (uint32_t) c->n;
  out->sigma_changes = c->sigma.changes;
}

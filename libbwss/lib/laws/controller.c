/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * controller.c — the BWSS of Fig. 1: flows, σ loop, TRAS and one FCS each,
 * run on an injected clock with injected measurements.
 *
 * Each tick:
 *   1. U = Σ R_i and each R_i, from the flows' estimators (estimator.c);
 *   2. the σ loop decides — the delay loop (capacity.c, the default) or the
 *      paper's (sigma.c), as params->loop says;
 *   3. if σ, the flow set, a preference or a group changed, the TRAS
 *      re-splits σ (allocation.c: over the groups, then within each);
 *   4. every FCS steps towards its target (fcs.c); while the loop releases
 *      the flows (its initialisation) every window is the kernel's own.
 *
 * The delay loop sizes each window for the flow's base RTT plus the queue
 * target (basertt.c keeps the base), so a link at σ holds q_t of queue; its
 * rates are means over the time since its last decision.  A flow that joins
 * while the others measure a queue has its base seeded from it.
 *
 * The paper's loop sizes each window for the measured RTT (Sec. IV) and
 * judges means over the last half settle interval: at small windows each FCS
 * dithers between two whole-segment windows, and an instantaneous estimate
 * would judge a σ step by the phase of that dither.  Its settle interval is
 * settle_cycles FCS cycles of the slowest flow: a cycle is the hold after a
 * change (RTT + 3φ) plus one estimation period.
 *
 * Measuring.  A flow is in one of three states.  MEASURE_EVERY (a new flow,
 * one that moves data, one with a minimum): the caller measures it at
 * every tick.  MEASURE_QUIET (entry: MEASURE_QUIET_SAMPLES samples in a row
 * carried no byte and found none unread, and it has no minimum: a
 * connection at rest): a sample would show the same counters, and its
 * window, whatever it is, holds nothing back; its gap between samples
 * starts at MEASURE_QUIET_GAP_MIN_US and doubles with each quiet sample up
 * to MEASURE_QUIET_GAP_MAX_US, each sample on the flow's own slot of its
 * gap on the clock (next_in_slot()) so that flows that went quiet together
 * spread over the ticks; it is also due when a window change of its takes
 * effect (the sample that opens its estimator's period, fcs.c).  Exit: a
 * sample that carried bytes or found some unread, new preferences (a
 * request that begins), or a minimum.  A flow with a minimum is never
 * quiet: one that resumes without new preferences (a player that keeps its
 * minimum between fragments) brings first bytes the delay loop's deficit
 * rule must see at once — in the fluid model's adaptive3 player on a
 * 2.4 Mbit/s link with its minimum kept, its fetches seen up to a gap late
 * moved the downloads beside it by −32 %, +7 % and −20 % at three tick
 * phases.
 * MEASURE_SLACK (only while the rounds spread or spread beside a minimum,
 * below, and in the delay loop; entry: MEASURE_SLACK_SAMPLES samples in a
 * row, a flow without a minimum and not released, whose mean over the last
 * decision interval is at most SLACK_FRACTION of what its window carries
 * in its RTT — its source or its reader holds it, not its window): its
 * window holds nothing back, so its samples serve only U and the delay
 * loop's decisions, which read each flow's mean over an interval ending at
 * its last sample (estimator.c: a rate over the interval measured, however
 * far apart its samples); it is measured once per decision interval
 * (slack_gap()), on its own slot.  Exit (measured every gap again, on its
 * own slot): a sample whose mean is above that fraction (it may reach its
 * window), a window change that leaves its window carrying less than its
 * last mean asks of a slack flow, a minimum or new preferences, the rounds
 * together again (a flow that leaves it while the rounds spread beside a
 * minimum is measured at every tick, as the flows there whose windows may
 * hold them are).  In the urgent check (queue_above()) a slack flow
 * sampled longer than the rounds' gap ago may say that the queue stands,
 * never that it is gone: a sample older than any the urgent check read
 * before cannot hold the cut back.
 * bwss_controller_next_measure() tells the caller when each flow is due;
 * the laws run on the samples that came.
 *
 * Rounds.  The flows measured at every tick are measured together, and a
 * caller that sleeps until bwss_controller_next_round() ticks once per
 * estimation period φ (Sec. IV-B) of the one with the shortest, in whole
 * control periods, at most ROUND_GAP_MAX_US: a window decided for an RTT
 * shows in the flow's bytes an RTT later, and its FCS holds RTT + 3φ
 * after each change (fcs.c), so ticks closer than φ add samples, not
 * decisions.  Every period while a flow with a minimum moves data (its
 * deficit must show at once) or one's RTT is unknown.  The rounds have
 * three states.  ROUNDS_TOGETHER: every flow measured at every tick is
 * measured in the same ticks, and U's meter sums bytes counted at one
 * instant (flows sampled an RTT apart each, staggered, put each flow's
 * bytes into U's window in lumps and moved the σ loop's decisions in the
 * fluid model).  ROUNDS_SPREAD (entry: more than ROUNDS_TOGETHER_MAX flows
 * measured at every tick while their rounds are more than a period apart;
 * exit: half as many or fewer, or rounds every period): a round of all of
 * them would cost the caller its whole gap's work at one instant, so each
 * takes its own slot of the gap (next_in_slot(), as a quiet flow does),
 * the ticks come every period with a part of the flows in each, and U is
 * the sum of the flows' own meters (each a rate over its own samples).
 * ROUNDS_BESIDE (entry: more than ROUNDS_TOGETHER_MAX flows measured at
 * every tick while a flow with a minimum brings the rounds to every
 * period — a video beside a domain's connections; from ROUNDS_SPREAD, more
 * than half as many; exit: half as many or fewer, or no flow with a minimum
 * (ROUNDS_TOGETHER), or the rounds more than a period apart again
 * (ROUNDS_SPREAD)): the rounds come every period, as together, and each
 * flow measured at every tick is measured in each of them (a flow with a
 * minimum, and every flow whose window may hold it); the slack flows are
 * measured once per decision interval, each on its own slot, so the
 * rounds hold a tenth of them; U is the sum of the flows' own meters, as
 * spread (the slack flows' bytes come at their own slots).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "laws.h"
#include "idmap.h"

/* Samples in a row that carry no byte and find none unread before a flow is
 * quiet: a second of control periods (more while its rounds come further
 * apart: round_gap()).  A transfer's own lulls are shorter
 * — a handshake and a request on a long path, a loss repaired by a timeout
 * (200 ms at least, backed off), a sender's pause — and their first bytes
 * are ones the laws must see at once: in the fluid model's CoDel 960k cell,
 * where stalls after losses abound, a threshold of four or ten periods
 * moved the downloads' share by points; a second moves no figure of any
 * cell.  What is silent longer is a connection at rest. */
#define MEASURE_QUIET_SAMPLES    100

/* The longest gap between rounds while every flow that moves data has a
 * long RTT, µs: four control periods, one estimation period φ (Sec. IV-B,
 * φ = 2·RTT) of a 20-ms path (25 rounds a second).  The delay loop's
 * shortest decision interval (decision_min_us, 100 ms) still sees two
 * samples of each flow or more, and its urgent cut on a rising queue comes
 * at most this much later.  At 50 ms the fluid model's two-flow 8 Mbit/s
 * cell fell short of its link at three tick phases of ten. */
#define ROUND_GAP_MAX_US         40000ull

/* Flows measured at every tick that still share their rounds, at most:
 * beyond it they spread over the gap (ROUNDS_SPREAD), or beside a flow
 * with a minimum let their slack ones out of each round (ROUNDS_BESIDE).  A
 * caller's round costs about 4-5.5 µs a flow it measures (bwssd: TCP_INFO,
 * SIOCINQ, the clamp's read-back and write, on a 2-core VM): a round of
 * this many costs what a spread round of a thousand flows does (a quarter
 * of them at each period of a 40-ms gap), so fewer would gain no smaller
 * peak for the wakeups spreading adds; a household's few flows keep one
 * round a gap. */
#define ROUNDS_TOGETHER_MAX      256

/* A quiet flow's first gap between samples, µs: two control periods. */
#define MEASURE_QUIET_GAP_MIN_US 20000ull
/* ... and its longest, µs: a quiet flow that resumes is seen at most this
 * late (one and a half of it while the gap grows): one or two of the delay
 * loop's decisions (decision_min_us apart), each on means over the time
 * since the last. */
#define MEASURE_QUIET_GAP_MAX_US 160000ull

/* A flow whose mean over the last decision interval is at most this
 * fraction of what its window carries in an RTT (8·w / RTT) is slack: its
 * rate may double before its window holds it, and a rise that doubles it
 * shows at its next sample, a decision interval later at most, when it is
 * measured every gap again (the header's "Measuring"). */
#define SLACK_FRACTION           0.5
/* Samples in a row that find a flow slack before it is measured as one:
 * three gaps of the spread rounds (120 ms at 40 ms), more than a decision
 * interval, so that one interval's lull of a transfer is not taken for its
 * source's pace. */
#define MEASURE_SLACK_SAMPLES    3

typedef enum {
  MEASURE_EVERY,                /* measured at every tick (once a gap while the rounds spread) */
  MEASURE_QUIET,                /* measured every gap_us (the header's "Measuring") */
  MEASURE_SLACK,                /* its window holds nothing: once per decision interval */
} Measure;

typedef enum {
  ROUNDS_TOGETHER,              /* every flow measured at every tick in the same ticks */
  ROUNDS_SPREAD,                /* ... each on its own slot of the rounds' gap */
  ROUNDS_BESIDE,                /* every period, the slack flows each on its own slot */
} Rounds;

typedef struct {
  uint64_t    id;
  BwssPrefs   prefs;
  uint64_t    group;            /* shares σ with the flows of this key; 0 = alone */
  double      min_bps;          /* its minimum: m_i, or its part of its group's (eq. 5m) */
  double      stream_target_bps;/* a member of a stream (a group with a minimum): the group's
                                 * target and minimum, its members' summed (G1), bit/s ... */
  double      stream_min_bps;   /* ... 0 = none (alone, or beyond BWSS_CAPACITY_GROUPS) */
  BwssFcs     fcs;              /* its estimator is the flow's one rate estimator */
  BwssBaseRtt base;
  double      joined_queue_us;  /* the link's queue when it was added, µs; < 0 unknown */
  uint64_t    min_back_us;      /* when its minimum last came back from 0 (a request), 0 = never */
  uint32_t    rtt_us;
  uint32_t    mss;
  double      target_bps;
  uint64_t    target_moved_us;  /* last time the target moved by more than α */
  uint32_t    window_low;       /* delay loop: smallest window since its last decision */
  bool        can_pace;         /* the receiver can pace its reads (last sample) */
  uint64_t    below_min_since;  /* delay loop: below its minimum since, 0 = not */
  uint32_t    samples;          /* delay loop: samples since its last decision ... */
  uint32_t    backlogged;       /* ... that found a segment or more unread */
  uint32_t    ooopack;          /* segments received after a hole, cumulative */
  uint32_t    ooopack_mark;     /* delay loop: ... at its last decision */
  double      demand_cap;       /* delay loop: the most it takes (eq. 6'), -1 = none */
  double      pace_bps;         /* read it at this rate, bit/s; 0 = freely */
  bool        tracked;          /* paper loop: congested on its own path */
  double      tracked_target;
  uint64_t    last_bytes;       /* cumulative count at the last sample */
  bool        have_bytes;
  Measure     measure;
  uint32_t    quiet;            /* samples in a row that carried nothing */
  uint32_t    slack;            /* samples in a row that found it slack (SLACK_FRACTION) */
  bool        sampled;          /* observed since the last tick */
  bool        moved;            /* at the last tick: sampled before it, or its window or
                                 * read rate moved (bwss_controller_moved_flows()) */
  uint64_t    last_sample_us;
  uint64_t    gap_us;           /* MEASURE_QUIET: from the last sample to the next */
  uint64_t    next_measure_us;  /* its next sample is due then; 0 = at every tick */
} Flow;

struct BwssController {
  BwssParams        p;
  Flow             *flows;
  size_t            n, cap;
  IdMap             index;       /* id → position in flows[] */
  BwssSigmaFlow    *sigma_view;  /* scratch for the paper's loop, cap entries */
  BwssCapacityFlow *cap_view;    /* scratch for the delay loop */
  BwssPrefs        *prefs;       /* scratch for the TRAS */
  double           *caps;
  uint64_t         *groups;      /* scratch: each flow's group, for the TRAS */
  double           *targets;
  double           *minima;
  BwssSigma         sigma;       /* the paper's loop */
  BwssCapacity      capacity;    /* the delay loop */
  bool              reallocate;
  bool              minimum_came;  /* a minimum arrived since the last tick */
  double            aggregate_bps;
  uint64_t          aggregate_bytes;   /* Σ of every flow's received bytes */
  BwssEstimator     aggregate;         /* ... and its meter */
  uint64_t          last_tick_us;      /* the last round's clock, 0 = none yet */
  Rounds            rounds;            /* the header's "Rounds" */
  bool              planned;           /* the next two hold since the last tick */
  uint64_t          plan_gap, plan_first;  /* its rounds' gap (0: spread), first_due() */
  bool              u_later;           /* aggregate_bps is U over u_window_us, to sum */
  uint64_t          u_window_us;
};

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
  bwss__sigma_init (&c->sigma);
  bwss__capacity_init (&c->capacity);
  bwss_estimator_init (&c->aggregate);
  *out = c;
  return BWSS_OK;
}

void
bwss_controller_free (BwssController *c)
{
  if (c == NULL)
    return;
  free (c->flows);
  idmap_free (&c->index);
  free (c->sigma_view);
  free (c->cap_view);
  free (c->prefs);
  free (c->caps);
  free (c->groups);
  free (c->targets);
  free (c->minima);
  free (c);
}

const BwssParams *
bwss_controller_params (const BwssController *c)
{
  return &c->p;
}

static bool
paper_loop (const BwssController *c)
{
  return c->p.loop == BWSS_LOOP_PAPER;
}

/* Returns the flow with @id, or NULL: O(1) on average (the index). */
static Flow *
find (const BwssController *c, uint64_t id)
{
  uint32_t i;
  return idmap_get (&c->index, id, &i) ? &c->flows[i] : NULL;
}

/* Builds the index again after flows[] moved (a removal).  Needs no
 * memory: the map already held every one of these flows. */
static void
reindex (BwssController *c)
{
  idmap_clear (&c->index);
  for (size_t i = 0; i < c->n; i++)
    idmap_put (&c->index, c->flows[i].id, (uint32_t) i);
}

/* Sizes *@ptr to @cap elements of @size; returns false on failure (then
 * *@ptr is as it was). */
static bool
grow_array (void **ptr, size_t cap, size_t size)
{
  void *p = realloc (*ptr, cap * size);
  if (p == NULL)
    return false;
  *ptr = p;
  return true;
}

/* Sizes the per-flow arrays, every one, to @cap elements: the one list of
 * them.  Returns false if the allocator refused one; the arrays before it
 * are then at @cap and the rest as they were, so each holds at least
 * MIN (@cap, c->cap) elements. */
static bool
resize_arrays (BwssController *c, size_t cap)
{
  return grow_array ((void **) &c->flows, cap, sizeof *c->flows)
         && grow_array ((void **) &c->sigma_view, cap, sizeof *c->sigma_view)
         && grow_array ((void **) &c->cap_view, cap, sizeof *c->cap_view)
         && grow_array ((void **) &c->prefs, cap, sizeof *c->prefs)
         && grow_array ((void **) &c->caps, cap, sizeof *c->caps)
         && grow_array ((void **) &c->groups, cap, sizeof *c->groups)
         && grow_array ((void **) &c->targets, cap, sizeof *c->targets)
         && grow_array ((void **) &c->minima, cap, sizeof *c->minima);
}

/* A removal that leaves the arrays a quarter full or less gives memory
 * back: they shrink to two to four times the flows (8 at least), the
 * index with them, so that a long-lived controller (bwssd's) holds memory
 * for the flows it has, not for the most it ever had.  A smaller block
 * the allocator refuses leaves that array and the ones after it larger
 * than the new capacity, which only bounds what is used: the capacity is
 * the smaller one either way.  An index it cannot rebuild stays as it was. */
static void
shrink (BwssController *c)
{
  if (c->cap <= 8 || c->n > c->cap / 4)
    return;
  size_t cap = c->cap;
  while (cap > 8 && c->n <= cap / 4)
    cap /= 2;
  /* a refusal is not an error here: the arrays are all at least cap */
  (void) resize_arrays (c, cap);
  c->cap = cap;
  IdMap index = { 0 };
  bool ok = true;
  for (size_t i = 0; i < c->n && ok; i++)
    ok = idmap_put (&index, c->flows[i].id, (uint32_t) i);
  if (!ok) {
    idmap_free (&index);
    return;
  }
  idmap_free (&c->index);
  c->index = index;
}

/* Makes room for one more flow: doubles the arrays when they are full.  A
 * refused block keeps the capacity as it was (every array holds at least
 * that) and returns BWSS_ENOMEM. */
static int
grow (BwssController *c)
{
  if (c->n < c->cap)
    return BWSS_OK;
  size_t cap = c->cap ? 2 * c->cap : 8;
  if (!resize_arrays (c, cap))
    return BWSS_ENOMEM;
  c->cap = cap;
  return BWSS_OK;
}

int
bwss_controller_add_flow (BwssController *c, uint64_t id, const BwssPrefs *prefs,
                          uint64_t now_us)
{
  if (c == NULL || bwss_prefs_check (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  if (find (c, id))
    return BWSS_EEXIST;
  int err = grow (c);
  if (err)
    return err;
  if (!idmap_put (&c->index, id, (uint32_t) c->n))
    return BWSS_ENOMEM;
  Flow *f = &c->flows[c->n++];
  c->planned = false;
  memset (f, 0, sizeof *f);
  f->id = id;
  f->prefs = *prefs;
  f->min_bps = prefs->min_rate_bps;     /* until the TRAS splits a group's */
  bwss__fcs_init (&f->fcs);
  bwss__base_rtt_init (&f->base);
  f->joined_queue_us = c->capacity.queue_us;
  f->target_moved_us = now_us;
  f->demand_cap = -1.0;
  c->reallocate = true;
  c->minimum_came = c->minimum_came || prefs->min_rate_bps > 0.0;
  /* Flow start: the paper's loop looks for the new optimum from the current
   * σ (Sec. V-C); the delay loop just re-splits (the queue tells the rest). */
  if (paper_loop (c))
    bwss__sigma_probe (&c->sigma, now_us);
  return BWSS_OK;
}

int
bwss_controller_set_prefs (BwssController *c, uint64_t id, const BwssPrefs *prefs,
                           uint64_t now_us)
{
  if (c == NULL || bwss_prefs_check (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  /* a minimum that comes back (from 0) is a request that begins: its
   * window is set for the new target by eq. (1) at the next step, not
   * scaled from the window of its idle time, whose rate near 0 would make
   * the rescale put the whole cap (max_window_factor·T·RTT) on the link
   * (docs/lab-results.md, "Why the code does what it does") */
  if (f->prefs.min_rate_bps <= 0.0 && prefs->min_rate_bps > 0.0) {
    f->min_back_us = now_us ? now_us : 1;
    if (f->fcs.state != BWSS_FCS_RELEASED && !f->fcs.paced)
      bwss__fcs_release (&f->fcs);
  }
  c->minimum_came = c->minimum_came || prefs->min_rate_bps > f->prefs.min_rate_bps;
  f->prefs = *prefs;
  c->planned = false;
  f->measure = MEASURE_EVERY;           /* what it asks for now shows at once */
  f->quiet = 0;
  f->slack = 0;
  f->next_measure_us = 0;
  c->reallocate = true;
  return BWSS_OK;
}

int
bwss_controller_set_group (BwssController *c, uint64_t id, uint64_t group, uint64_t now_us)
{
  (void) now_us;
  if (c == NULL)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  if (f->group != group)
    c->reallocate = true;
  c->planned = false;
  f->group = group;
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
  c->planned = false;
  shrink (c);
  reindex (c);                 /* flows[] keeps its order: the allocation's ties follow it */
  c->reallocate = true;
  if (paper_loop (c))
    bwss__sigma_probe (&c->sigma, now_us);   /* flow stop (Sec. V-C) */
  return BWSS_OK;
}

/* Returns true if flow @f has a minimum rate (m_i > 0): a floor the loops
 * keep, never paced, left to the kernel at the delay loop's start. */
static bool
has_minimum (const Flow *f)
{
  return f->min_bps > 0.0;
}

/* Returns the RTT flow @f's window is sized for, µs: its measured RTT in
 * the paper's loop.  In the delay loop, its measured RTT with the link's
 * queue replaced by the queue it should hold: RTT − q + q', q' the queue
 * target, or the queue now if that is shorter (a target that one flow's
 * floor inflates must not size the others' windows for a queue the link does
 * not hold), and at least the shortest target (an empty queue is no reason
 * to offer less than a full pipe).  What remains of the RTT is the flow's
 * own: its base, and any queue on its own path or a longer route.  The
 * measured RTT while the link's queue is unknown, and for a flow with a
 * minimum rate: a queue it cannot drain (cross traffic, the others' floors)
 * must not starve it below its minimum — the drain falls on the others. */
static uint32_t
model_rtt (const BwssController *c, const Flow *f)
{
  double now = c->capacity.queue_us;
  /* in COMPETE the queue is the neighbour's as much as ours: no target of
   * ours to size for, the windows follow the RTT measured (capacity-compete.c) */
  if (paper_loop (c) || now < 0.0 || f->rtt_us == 0 || has_minimum (f)
      || c->capacity.phase == BWSS_PHASE_COMPETE)
    return f->rtt_us;
  double q = c->capacity.queue_target_us;
  if (now < q)
    q = now;
  if (q < (double) c->p.queue_target_min_us)
    q = (double) c->p.queue_target_min_us;
  double own = (double) f->rtt_us - now;
  uint32_t base = bwss__base_rtt_get (&f->base);
  if (own < (double) base)
    own = (double) base;
  return (uint32_t) (own + q);
}

int
bwss_controller_observe (BwssController *c, uint64_t id, const BwssSample *s)
{
  if (c == NULL || s == NULL)
    return BWSS_EINVAL;
  Flow *f = find (c, id);
  if (f == NULL)
    return BWSS_ENOENT;
  c->planned = false;
  if (f->have_bytes && s->bytes_received >= f->last_bytes)
    c->aggregate_bytes += s->bytes_received - f->last_bytes;
  bool carried = !f->have_bytes || s->bytes_received != f->last_bytes || s->unread_bytes > 0;
  f->quiet = carried ? 0 : f->quiet + 1;
  f->sampled = true;
  f->last_sample_us = s->now_us;
  f->last_bytes = s->bytes_received;
  f->have_bytes = true;
  bool first_rtt = s->rtt_us && f->rtt_us == 0;
  if (s->rtt_us)
    f->rtt_us = s->rtt_us;
  if (s->mss)
    f->mss = s->mss;
  f->can_pace = s->can_pace;
  if (s->rcv_ooopack < f->ooopack)
    f->ooopack_mark = s->rcv_ooopack;   /* a counter that went back: a new count */
  f->ooopack = s->rcv_ooopack;
  f->samples++;
  if (s->unread_bytes >= (f->mss ? f->mss : c->p.default_mss))
    f->backlogged++;
  /* a newcomer behind a queue the others measure: that queue is not its
   * path.  Its first RTT of data less the queue now: two measures of one
   * moment.  Not its handshake's RTT (tcpi_min_rtt), which may be from
   * before that queue: flows that start together (one whose request is on
   * the way while the others' first windows fill the buffer) would get a
   * base a whole queue too short, and that excess, read as the link's
   * queue, would hold σ at the minima for good.  Only a flow that joined
   * behind a queue: one added to an empty link (or with the others, before
   * any queue was measured) crossed it with its handshake, and its first
   * RTT paired with the queue of the others' slow start (which their
   * kernel's average reads high while the loop drains it) falls short of
   * its path (docs/lab-results.md, "Why the code does what it does") */
  if (first_rtt && f->joined_queue_us > c->capacity.last_band_us && c->capacity.queue_us > 0.0)
    bwss__base_rtt_seed (&f->base, s->rtt_us, c->capacity.queue_us);
  bwss__base_rtt_sample (&f->base, s->rtt_us);
  bwss__base_rtt_sample (&f->base, s->min_rtt_us);
  /* a seed that fell short (a lagging queue): paired again while the
   * link's queue is calm (basertt.c) */
  if (!first_rtt && c->capacity.queue_us >= 0.0 && c->capacity.queue_us <= c->capacity.last_band_us)
    bwss__base_rtt_reseed (&f->base, s->rtt_us, c->capacity.queue_us);
  bwss__fcs_observe (&f->fcs, &c->p, s->now_us, s->bytes_received, model_rtt (c, f));
  return BWSS_OK;
}

/* Returns true if flow @f is a member of a stream: a group whose members
 * carry a minimum (capacity-model.c, G1). */
static bool
in_stream (const Flow *f)
{
  return f->group != 0 && f->prefs.min_rate_bps > 0.0;
}

/* Sets each stream member's stream_target_bps and stream_min_bps: its
 * group's targets and minima summed (G1), for at most
 * BWSS_CAPACITY_GROUPS streams (the others' members: 0, each on its own
 * part, as the loop judges them). */
static void
sum_streams (BwssController *c)
{
  uint64_t key[BWSS_CAPACITY_GROUPS];
  double target[BWSS_CAPACITY_GROUPS], min[BWSS_CAPACITY_GROUPS];
  size_t ng = 0;
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < c->n; i++) {
      Flow *f = &c->flows[i];
      size_t g = 0;
      while (g < ng && (!in_stream (f) || key[g] != f->group))
        g++;
      if (pass == 1) {
        bool found = in_stream (f) && g < ng;
        f->stream_target_bps = found ? target[g] : 0.0;
        f->stream_min_bps = found ? min[g] : 0.0;
        continue;
      }
      if (!in_stream (f) || (g == ng && ng == BWSS_CAPACITY_GROUPS))
        continue;
      if (g == ng) {
        key[ng++] = f->group;
        target[g] = min[g] = 0.0;
      }
      target[g] += f->target_bps;
      min[g] += f->min_bps;
    }
}

/* Re-runs the TRAS at σ and notes which targets moved by more than α. */
static void
reallocate (BwssController *c, double sigma, uint64_t now_us)
{
  bool grouped = false;
  for (size_t i = 0; i < c->n; i++) {
    c->prefs[i] = c->flows[i].prefs;
    c->caps[i] = c->flows[i].demand_cap;
    c->groups[i] = c->flows[i].group;
    grouped = grouped || c->groups[i] != 0;
  }
  if (bwss__allocate_grouped_capped (sigma, c->prefs, paper_loop (c) ? NULL : c->caps,
                                    grouped ? c->groups : NULL, c->n, c->targets,
                                    c->minima) != BWSS_OK)
    return;                             /* prefs were validated on entry; out of memory:
                                         * the targets stay, the next decision retries */
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    double old = f->target_bps, t = c->targets[i];
    f->min_bps = c->minima[i];
    if (fabs (t - old) > c->p.alpha * old)
      f->target_moved_us = now_us;
    f->target_bps = t;
  }
  sum_streams (c);
  c->reallocate = false;
}

/* Returns the target handed to flow @f's FCS, bit/s: its target, raised in
 * the delay loop to (1 + α)·m when that is more, so that the FCS's desired
 * interval [(1−α)T, (1+α)T] lies above the minimum m: a minimum is a floor
 * of what the flow gets, not the middle of the law's slack (held at its
 * middle, a flow runs up to α under its minimum for seconds, and every bit
 * short of a minimum is late data). */
static double
fcs_target (const BwssController *c, const Flow *f)
{
  double t = f->target_bps, m = f->min_bps;
  /* a member of a stream carries the stream's ranges in turn, the whole
   * stream's rate for its range and nothing for the next n − 1: its window
   * is sized for the stream's target and minimum, not its part (sized for
   * its part, the live source's ranges queued behind the member whose turn
   * it was, and the video fell short of its minimum in COMPETE) */
  if (!paper_loop (c) && f->stream_min_bps > 0.0) {
    t = f->stream_target_bps;
    m = f->stream_min_bps;
  }
  if (!paper_loop (c) && m > 0.0 && t >= (1.0 - c->p.alpha) * m && t < (1.0 + c->p.alpha) * m)
    t = (1.0 + c->p.alpha) * m;
  /* in COMPETE the queue swings with the neighbour's sawtooth, and the RTT
   * the window is sized for lags it: a window of (1 + α)·m held the video
   * under its minimum at every rise (capacity-compete.c) */
  if (!paper_loop (c) && m > 0.0 && c->capacity.phase == BWSS_PHASE_COMPETE
      && t < (1.0 + c->p.compete_headroom) * m)
    t = (1.0 + c->p.compete_headroom) * m;
  return t;
}

/* Returns true if the delay loop may pace reads: the link was seen busy,
 * and at no more than pace_max_link_bps. */
static bool
may_pace (const BwssController *c)
{
  double link = c->capacity.link_max_bps;
  /* not in COMPETE: the reads would carry σ open loop, and σ there is no
   * bound of ours but room above what the flows win */
  return !paper_loop (c) && c->p.pace_reads && link > 0.0 && link <= c->p.pace_max_link_bps
      && c->capacity.phase != BWSS_PHASE_COMPETE;
}

/* ---- the paper's loop ---- */

/* Returns the paper loop's settle interval, µs. */
static uint64_t
settle_us (const BwssController *c)
{
  uint64_t worst = 0;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    uint64_t cycle = bwss__fcs_hold_us (&c->p, f->rtt_us) + bwss__fcs_phi_us (&c->p, f->rtt_us);
    if (cycle > worst)
      worst = cycle;
  }
  return c->p.settle_cycles * worst;
}

/* Σ of the flows' own means over @window_us (from @view if given). */
static double
flows_sum (const BwssController *c, uint64_t window_us, const BwssCapacityFlow *view)
{
  double u = 0.0;
  for (size_t i = 0; i < c->n; i++) {
    double r = view ? view[i].rate_bps : bwss_estimator_mean (&c->flows[i].fcs.est, window_us);
    if (r > 0.0)
      u += r;
  }
  return u;
}

/* Returns U over the last @window_us, bit/s: the aggregate's meter while
 * the flows share their rounds; while they are spread (or beside a
 * minimum, the slack flows on their own slots), the sum of their
 * own meters (the aggregate's would take each flow's bytes in lumps at its
 * own slot), read from @view (each flow's mean over @window_us) if given. */
static double
aggregate_mean (const BwssController *c, uint64_t window_us, const BwssCapacityFlow *view)
{
  if (c->rounds == ROUNDS_TOGETHER)
    return bwss_estimator_mean (&c->aggregate, window_us);
  return flows_sum (c, window_us, view);
}

/* Runs the paper's σ loop; returns true if the TRAS must re-split. */
static bool
tick_paper (BwssController *c, uint64_t now_us)
{
  uint64_t settle = settle_us (c), window = settle / 2;
  double u = aggregate_mean (c, window, NULL);
  c->aggregate_bps = u > 0.0 ? u : 0.0;
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    BwssSigmaFlow *v = &c->sigma_view[i];
    v->rate_bps = bwss_estimator_mean (&f->fcs.est, window);
    v->target_bps = f->target_bps;
    /* settled: the FCS has had the settle interval to follow the target
     * (whether or not it is still stepping: a congested flow keeps raising
     * its window and must still be judged) */
    v->settled = f->fcs.state != BWSS_FCS_RELEASED && now_us - f->target_moved_us >= settle;
    v->at_floor = bwss__fcs_at_floor (&f->fcs, &c->p, f->mss);
    v->tracked = f->tracked;
    v->tracked_target = f->tracked_target;
  }
  bool changed = bwss__sigma_step (&c->sigma, &c->p, now_us, u, c->sigma_view, c->n, settle);
  for (size_t i = 0; i < c->n; i++) {
    c->flows[i].tracked = c->sigma_view[i].tracked;
    c->flows[i].tracked_target = c->sigma_view[i].tracked_target;
  }
  return changed;
}

/* ---- the delay loop ---- */

/* Returns true if flow @f, @bytes received over the delay loop's window,
 * measures the link's queue: two segments at least (one delayed ACK's worth
 * of RTT sample), and not held by its own reader (data waited unread most
 * of the interval, not by our pacing): then its receiver RTT is the spacing
 * of its reads' window openings, not its path's — the kernel's window-based
 * sample, a minimum, falls to it and reads no queue where there is one. */
static bool
fresh (const BwssController *c, const Flow *f, double bytes)
{
  uint32_t mss = f->mss ? f->mss : c->p.default_mss;
  return bytes >= 2.0 * mss && !(f->pace_bps <= 0.0 && f->samples > 0 && 2 * f->backlogged > f->samples);
}

/* Fills the delay loop's view of the flows over the last @window_us. */
static void
capacity_view (BwssController *c, uint64_t now_us, uint64_t window_us)
{
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    BwssCapacityFlow *v = &c->cap_view[i];
    uint32_t mss = f->mss ? f->mss : c->p.default_mss;
    double bytes;
    bwss__estimator_window (&f->fcs.est, window_us, &v->rate_bps, &bytes);
    v->target_bps = f->fcs.state == BWSS_FCS_RELEASED ? 0.0 : f->target_bps;
    /* a minimum that came back within the window is a request ramping up:
     * its rate over the window still holds the idle time before it, no
     * verdict on the link (read as a deficit, its own first burst would
     * make it "held" and cut σ to the minima at every request) */
    v->min_rate_bps = f->min_back_us && now_us - f->min_back_us < window_us ? 0.0 : f->min_bps;
    /* a group with a minimum is one stream over several connections: the
     * loop judges its minimum on the members' sums (capacity-model.c, G1) */
    v->group = f->prefs.min_rate_bps > 0.0 ? f->group : 0;
    v->rtt_us = f->rtt_us;
    v->base_rtt_us = bwss__base_rtt_get (&f->base);
    v->mss = mss;
    v->fresh = fresh (c, f, bytes);
    /* held by its window: it moved (nearly) a window per measured RTT — the
     * smallest window of the interval, a window that just grew has not
     * filled yet */
    double w = f->window_low && f->window_low < f->fcs.window ? f->window_low * (double) mss
                                                             : bwss__fcs_window_bytes (&f->fcs, &c->p, mss);
    if (f->fcs.sub)
      w = c->p.min_window_bytes * c->p.sub_window_yield;
    v->window_limited = w > 0.0 && f->rtt_us > 0 && v->rate_bps > 0.0
        && v->rate_bps >= c->p.window_limited_fraction * (8.0 * w) / ((double) f->rtt_us / 1e6);
    /* losses since its last decision: segments that arrived after a hole */
    v->lost = f->ooopack != f->ooopack_mark;
    /* below its minimum since when (judged at decisions) */
    if (!bwss__below_minimum (v->rate_bps, f->min_bps, c->p.alpha))
      v->below_min_us = 0;
    else
      v->below_min_us = f->below_min_since ? now_us - f->below_min_since : 0;
    /* read at its pace: held by the receiver, as by a window, when data
     * waits to be read most of the interval (the reads bind, not its
     * source; a rate measured over an interval of a few segments cannot
     * tell) */
    if (f->pace_bps > 0.0)
      v->window_limited = 2 * f->backlogged > f->samples;
  }
}

/* Returns true if the queue the delay loop would read in the view of the
 * last @window_us (bwss__capacity_queue(): the smallest RTT excess of a
 * fresh flow) is above @bar_us, measuring the window only of the flows that
 * can tell: one at or under the bar answers no if fresh, one above it only
 * until a first is fresh (no fresh flow: no queue, not above).  A domain's
 * thousand flows are not each read at every tick for this. */
static bool
queue_above (const BwssController *c, uint64_t now_us, uint64_t window_us, double bar_us)
{
  bool any = false;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    uint32_t base = bwss__base_rtt_get (&f->base);
    double q = (double) f->rtt_us - (double) base, mean, bytes;
    /* a slack flow's sample older than the rounds' gap may say that the
     * queue stands, not that it is gone (the header's "Measuring") */
    bool stale = f->measure == MEASURE_SLACK && now_us - f->last_sample_us > c->capacity.round_gap_us;
    if (f->rtt_us == 0 || base == 0 || (any && q > bar_us) || (stale && q <= bar_us))
      continue;
    /* fewer than two segments even by the meter's bound: not fresh, its
     * history not walked (most of a large domain's flows, each with a
     * small share, between two decisions) */
    double most = bwss__estimator_bytes_bound (&f->fcs.est, window_us, c->p.meter_step_us);
    if (!fresh (c, f, most))
      continue;
    bwss__estimator_window (&f->fcs.est, window_us, &mean, &bytes);
    if (!fresh (c, f, bytes))
      continue;
    if ((q > 0.0 ? q : 0.0) <= bar_us)
      return false;
    any = true;
  }
  return any;
}

/* Returns flow @i's demand cap from the delay loop's view of the decision
 * just taken, bit/s: a flow short of its target that neither its window nor
 * its reads hold (its source, another path) takes at most demand_headroom
 * above what it used, and at least (1 + α)·m_i; -1 (none) otherwise.  A
 * capped flow that uses its cap is held by its target again: uncapped at
 * the next decision. */
static double
demand_cap (const BwssController *c, size_t i)
{
  const Flow *f = &c->flows[i];
  const BwssCapacityFlow *v = &c->cap_view[i];
  if (v->window_limited || !(v->rate_bps >= 0.0) || !(f->target_bps > 0.0)
      || v->rate_bps >= (1.0 - c->p.alpha) * f->target_bps)
    return -1.0;
  double cap = (1.0 + c->p.demand_headroom) * v->rate_bps;
  double floor = (1.0 + c->p.alpha) * f->min_bps;
  return cap > floor ? cap : floor;
}

/* Updates every flow's demand cap; returns true if one moved by more than
 * α (or appeared, or went): the TRAS must re-split. */
static bool
update_caps (BwssController *c)
{
  bool moved = false;
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    double cap = demand_cap (c, i), old = f->demand_cap;
    if ((cap < 0.0) != (old < 0.0) || fabs (cap - old) > c->p.alpha * old)
      moved = true;
    f->demand_cap = cap;
  }
  return moved;
}

static uint64_t rounds_gap (const BwssController *c);

/* Runs the delay loop; returns true if the TRAS must re-split. */
static bool
tick_delay (BwssController *c, uint64_t now_us)
{
  BwssCapacity *cap = &c->capacity;
  cap->round_gap_us = rounds_gap (c);
  /* means since the last decision, over decision_min_us at least (an urgent
   * decision may come a tick after the last one) */
  uint64_t window = cap->last_decision_us ? now_us - cap->last_decision_us : 0;
  if (window < c->p.decision_min_us)
    window = c->p.decision_min_us;
  /* the flows' view only for a step that reads it (a decision, or its
   * check of the queue calls for one); U from their own meters when asked
   * (bwss_controller_stats()) between decisions while the rounds spread */
  double bar = bwss__capacity_due_bar (cap, now_us, c->n);
  bool view = cap->last_decision_us == now_us || bar == -INFINITY
      || (bar < INFINITY && queue_above (c, now_us, window, bar));
  c->u_window_us = window;
  c->u_later = !view && c->rounds != ROUNDS_TOGETHER;
  if (view)
    capacity_view (c, now_us, window);
  double u = c->u_later ? 0.0 : aggregate_mean (c, window, view ? c->cap_view : NULL);
  c->aggregate_bps = u > 0.0 ? u : 0.0;
  bool changed = view ? bwss__capacity_step (cap, &c->p, now_us, c->aggregate_bps, c->cap_view, c->n)
                      : bwss__capacity_pass (cap, now_us);
  if (cap->last_decision_us == now_us)
    for (size_t i = 0; i < c->n; i++) {
      Flow *f = &c->flows[i];
      f->window_low = f->fcs.window;   /* a new interval */
      f->samples = f->backlogged = 0;
      f->ooopack_mark = f->ooopack;
      if (!bwss__below_minimum (c->cap_view[i].rate_bps, f->min_bps, c->p.alpha))
        f->below_min_since = 0;
      else if (f->below_min_since == 0)
        f->below_min_since = now_us;
    }
  if (cap->last_decision_us == now_us && update_caps (c))
    changed = true;
  return changed;
}

/* ---- measuring ---- */

/* Returns when quiet flow @f is next due, its last sample at @last_us and
 * its gap @gap_us: the first moment at least half a gap after its last
 * sample that falls on its own slot of the gap on the clock, a fraction
 * fixed by its id.  At a steady gap its samples are a gap apart (one to
 * one and a half gaps while the gap grows), and connections that went
 * quiet together (a browser's, at rest after a page) come due spread over
 * the ticks of a gap, not all in one. */
static uint64_t
next_in_slot (const Flow *f, uint64_t last_us, uint64_t gap_us)
{
  uint64_t h = f->id * 0x9e3779b97f4a7c15ull;          /* Fibonacci hashing */
  double u = (double) (h >> 11) / (double) (1ull << 53);  /* [0, 1) */
  uint64_t slot = (uint64_t) (u * (double) gap_us);
  uint64_t from = last_us + gap_us / 2;
  uint64_t t = from - from % gap_us + slot;
  return t < from ? t + gap_us : t;
}

/* Returns the gap between a slack flow's samples, µs: the delay loop's
 * shortest decision interval in whole control periods, so that each
 * decision reads a mean of every slack flow ending at most that long
 * before it; never shorter than the rounds' gap. */
static uint64_t
slack_gap (const BwssController *c)
{
  uint64_t period = c->p.min_phi_us ? c->p.min_phi_us : 1;
  uint64_t gap = c->p.decision_min_us / period * period;
  return gap > c->capacity.round_gap_us ? gap : c->capacity.round_gap_us;
}

/* Returns true if flow @f, just sampled, is slack (the header's
 * "Measuring"): the rounds spread (or beside a minimum), the delay loop,
 * no minimum, its window set by its FCS (not the kernel's, not below a
 * segment), and its mean over the last decision interval at most
 * SLACK_FRACTION of what that window carries in its RTT. */
static bool
slack_now (const BwssController *c, const Flow *f)
{
  if (c->rounds == ROUNDS_TOGETHER || paper_loop (c) || has_minimum (f) || f->rtt_us == 0
      || f->fcs.state == BWSS_FCS_RELEASED || f->fcs.sub)
    return false;
  uint32_t mss = f->mss ? f->mss : c->p.default_mss;
  double w = bwss__fcs_window_bytes (&f->fcs, &c->p, mss);
  double mean = bwss_estimator_mean (&f->fcs.est, c->p.decision_min_us);
  return w > 0.0 && mean >= 0.0 && mean <= SLACK_FRACTION * 8.0 * w / ((double) f->rtt_us / 1e6);
}

/* Moves flow @f's measuring state after this tick's step and sets when it
 * is next due (the header's "Measuring").  The state moves on a sample
 * only; between its samples a quiet or slack flow keeps its time, unless a
 * window change of its takes effect sooner. */
static void
schedule_measure (const BwssController *c, Flow *f, uint64_t now_us)
{
  if (f->sampled) {
    f->sampled = false;
    if (f->quiet < MEASURE_QUIET_SAMPLES || has_minimum (f)) {
      f->slack = slack_now (c, f) ? f->slack + 1 : 0;
      if (f->slack >= MEASURE_SLACK_SAMPLES) {
        f->measure = MEASURE_SLACK;
        f->next_measure_us = next_in_slot (f, f->last_sample_us, slack_gap (c));
      } else {
        f->measure = MEASURE_EVERY;
        f->next_measure_us = 0;
      }
    } else {
      f->slack = 0;
      if (f->measure == MEASURE_QUIET) {
        f->gap_us = 2 * f->gap_us;
        if (f->gap_us > MEASURE_QUIET_GAP_MAX_US)
          f->gap_us = MEASURE_QUIET_GAP_MAX_US;
      } else {
        f->measure = MEASURE_QUIET;
        f->gap_us = MEASURE_QUIET_GAP_MIN_US;
      }
      f->next_measure_us = next_in_slot (f, f->last_sample_us, f->gap_us);
    }
  }
  const BwssEstimator *e = &f->fcs.est;
  bool changed = e->period_bytes == UINT64_MAX && e->period_start_us > now_us;
  /* a window change of a slack flow that leaves it slack (slack_now() on
   * its last mean and the new window) shows at its next sample: its FCS's
   * period opens a little later, and the window holds nothing either way.
   * One whose new window could hold it is measured every gap again, on
   * its own slot (schedule_rounds()): flows whose windows one decision
   * moved are not all due at one instant. */
  if (f->measure == MEASURE_SLACK && changed && !slack_now (c, f)) {
    f->measure = MEASURE_EVERY;
    f->slack = 0;
    f->next_measure_us = 0;
  }
  if (f->measure == MEASURE_QUIET && changed && e->period_start_us < f->next_measure_us)
    f->next_measure_us = e->period_start_us;
}

uint64_t
bwss_controller_next_measure (const BwssController *c, uint64_t id)
{
  const Flow *f = c ? find (c, id) : NULL;
  return f ? f->next_measure_us : 0;
}

/* A round measures the flows due by it or within half a control period
 * after it: the nearest round to a flow's due time takes it, whatever the
 * phase of the caller's rounds against the clock of the samples. */
bool
bwss_controller_due (const BwssController *c, uint64_t id, uint64_t round_us)
{
  return c == NULL || bwss_controller_next_measure (c, id) <= round_us + c->p.min_phi_us / 2;
}

size_t
bwss_controller_due_flows (const BwssController *c, uint64_t round_us, uint64_t *ids, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; c && i < c->n; i++)
    if (c->flows[i].next_measure_us <= round_us + c->p.min_phi_us / 2 && k++ < n)
      ids[k - 1] = c->flows[i].id;
  return k;
}

size_t
bwss_controller_moved_flows (const BwssController *c, uint64_t *ids, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; c && i < c->n; i++)
    if (c->flows[i].moved && k++ < n)
      ids[k - 1] = c->flows[i].id;
  return k;
}

/* Returns the gap between rounds flow @f, measured at every round, asks
 * for, µs: its estimation period φ (Sec. IV-B), to the nearest whole
 * control period (an RTT that reads 19.6 ms asks for 40 ms, not 30), at
 * most ROUND_GAP_MAX_US; one control period while its RTT is unknown and
 * for a flow with a minimum (its deficit must be seen at once: the
 * header's "Measuring"). */
static uint64_t
round_gap (const BwssController *c, const Flow *f)
{
  uint64_t period = c->p.min_phi_us;
  if (period == 0 || f->rtt_us == 0 || has_minimum (f))
    return period;
  uint64_t gap = bwss__fcs_phi_us (&c->p, f->rtt_us);
  if (gap > ROUND_GAP_MAX_US)
    gap = ROUND_GAP_MAX_US;
  gap = (gap + period / 2) / period * period;   /* the nearest whole period */
  return gap > period ? gap : period;
}

/* Returns the gap of the rounds while flows move data (measured at every
 * round, or slack): the shortest of their round_gap()s, µs; 0 if none
 * does. */
static uint64_t
rounds_gap (const BwssController *c)
{
  uint64_t gap = 0;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    if (f->measure != MEASURE_QUIET) {
      uint64_t g = round_gap (c, f);
      if (gap == 0 || g < gap)
        gap = g;
    }
  }
  return gap;
}

/* The first round at or after @from_us that finds a flow due
 * (bwss_controller_due()).  While flows are measured at every round and
 * together, the rounds come the shortest of their round_gap()s apart: all
 * of them in the same rounds, so that U's meter sums every flow's bytes
 * over the same instants; spread, each is due at its own slot, as a quiet
 * flow is.  A flow is due half a period before its due time.  At
 * once with no flow (a round then costs nothing and keeps the loop's
 * clock), before the first round, and when a flow came, went or changed
 * its preferences or group (the TRAS must re-split).  Between rounds
 * nothing of the laws moves: a quiet flow's window change is due as a
 * measurement (schedule_measure()). */
/* The first due time of a flow due at its own time (not at every round
 * while the rounds are together), UINT64_MAX if none is. */
static uint64_t
first_due (const BwssController *c)
{
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    if ((f->measure != MEASURE_EVERY || c->rounds == ROUNDS_SPREAD) && f->next_measure_us < first)
      first = f->next_measure_us;
  }
  return first;
}

uint64_t
bwss_controller_next_round (const BwssController *c, uint64_t from_us)
{
  if (c == NULL || c->n == 0 || c->reallocate || c->last_tick_us == 0)
    return from_us;
  /* what the last tick found, unless a flow was measured, came, went or
   * changed since */
  uint64_t gap = c->plan_gap, first = c->plan_first;
  if (!c->planned) {
    gap = c->rounds != ROUNDS_SPREAD ? rounds_gap (c) : 0;
    first = first_due (c);
  }
  uint64_t next = UINT64_MAX;
  if (gap != 0)
    next = c->last_tick_us + gap > from_us ? c->last_tick_us + gap : from_us;
  uint64_t half = c->p.min_phi_us / 2;
  if (first != UINT64_MAX) {
    uint64_t due = first <= from_us + half ? from_us : first - half;
    if (due < next)
      next = due;
  }
  return next;
}

/* Moves the rounds' state after a tick (the header's "Rounds") and gives
 * each flow measured at every tick its time: at every tick while the
 * rounds are together or beside a minimum; while they are spread, its own
 * slot of their gap a gap after its last sample (schedule_measure()
 * cleared its time when it sampled; one due and not yet measured keeps its
 * time). */
static void
schedule_rounds (BwssController *c)
{
  /* rounds_gap() and the count in one pass, first_due() in the next: a
   * domain's thousand flows are walked twice a tick here, not four times;
   * a slack flow moves data and counts as one measured at every tick */
  size_t every = 0;
  uint64_t gap = 0;
  bool minimum = false;
  for (size_t i = 0; i < c->n; i++) {
    const Flow *f = &c->flows[i];
    if (f->measure != MEASURE_QUIET) {
      every++;
      minimum = minimum || has_minimum (f);
      uint64_t g = round_gap (c, f);
      if (gap == 0 || g < gap)
        gap = g;
    }
  }
  bool gapped = gap > c->p.min_phi_us;
  bool many = c->rounds == ROUNDS_TOGETHER ? every > ROUNDS_TOGETHER_MAX
                                            : every > ROUNDS_TOGETHER_MAX / 2;
  if (!many)
    c->rounds = ROUNDS_TOGETHER;
  else if (gapped)
    c->rounds = ROUNDS_SPREAD;
  else
    c->rounds = minimum && !paper_loop (c) ? ROUNDS_BESIDE : ROUNDS_TOGETHER;
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    if (f->measure == MEASURE_SLACK && c->rounds == ROUNDS_TOGETHER) {
      f->measure = MEASURE_EVERY;        /* slack only while the rounds spread */
      f->slack = 0;
    }
    if (f->measure == MEASURE_EVERY) {
      if (c->rounds != ROUNDS_SPREAD)
        f->next_measure_us = 0;
      else if (f->next_measure_us == 0) {
        /* a gap after its last sample; one that left slack between its
         * samples (schedule_measure()), within a gap after the next round
         * (this one has measured) */
        uint64_t from = f->last_sample_us, after = c->last_tick_us + c->p.min_phi_us / 2 + 1;
        if (from + gap / 2 < after)
          from = after - gap / 2;
        f->next_measure_us = next_in_slot (f, from, gap);
      }
    }
    if ((f->measure != MEASURE_EVERY || c->rounds == ROUNDS_SPREAD) && f->next_measure_us < first)
      first = f->next_measure_us;        /* first_due() */
  }
  c->plan_gap = c->rounds != ROUNDS_SPREAD ? gap : 0;
  c->plan_first = first;
  c->planned = true;
}

/* σ moved or a minimum arrived: the delay loop lifts σ to the minima the
 * TRAS just split (a group's once) if it is below their band (capacity.c,
 * "The minima": the loop's own rules keep the minima it sees, and it does
 * not see one back from 0 for a decision window).  Returns true if σ
 * changed. */
static bool
lift_to_minima (BwssController *c)
{
  double minima = 0.0;
  for (size_t i = 0; i < c->n; i++)
    minima += c->flows[i].min_bps;
  return bwss__capacity_minima (&c->capacity, &c->p, minima);
}

void
bwss_controller_tick (BwssController *c, uint64_t now_us)
{
  if (c == NULL)
    return;
  c->last_tick_us = now_us;
  bwss_estimator_sample (&c->aggregate, now_us, c->aggregate_bytes, 0, 0.0,
                         c->p.meter_step_us);
  bool changed = paper_loop (c) ? tick_paper (c, now_us) : tick_delay (c, now_us);
  BwssPhase phase = paper_loop (c) ? c->sigma.phase : c->capacity.phase;
  double sigma = paper_loop (c) ? c->sigma.sigma_bps : c->capacity.sigma_bps;
  if (changed || c->reallocate)
    reallocate (c, sigma, now_us);
  if ((changed || c->minimum_came) && !paper_loop (c) && lift_to_minima (c))
    reallocate (c, c->capacity.sigma_bps, now_us);
  c->minimum_came = false;

  bool released = phase == BWSS_PHASE_RELEASE || phase == BWSS_PHASE_IDLE;
  /* the delay loop's start holds the flows without a minimum at their
   * floor and leaves those with one to the kernel: the start protects
   * them, and a flow with a minimum alone starts at the link's pace, not
   * its minimum's (σ = Σm would clamp it to its minimum until the raise
   * found the link) */
  bool start = !paper_loop (c) && phase == BWSS_PHASE_START;
  /* COMPETE with σ binding nobody: the flows without a minimum are the
   * kernel's, as under plain TCP (capacity-compete.c) */
  bool compete_free = !paper_loop (c) && phase == BWSS_PHASE_COMPETE && c->capacity.compete_free;
  bool pace = may_pace (c);
  for (size_t i = 0; i < c->n; i++) {
    Flow *f = &c->flows[i];
    uint32_t window = f->fcs.window;
    bool sub = f->fcs.sub;
    double pace_bps = f->pace_bps, target = fcs_target (c, f);
    /* a flow with a minimum is not paced: its minimum is a floor, and
     * after a stall it needs more than its target to catch up */
    bwss__fcs_set_paced (&f->fcs, &c->p, pace && f->can_pace && !has_minimum (f));
    if (released || (start && has_minimum (f)) || (compete_free && !has_minimum (f)))
      bwss__fcs_release (&f->fcs);
    else
      bwss__fcs_step (&f->fcs, &c->p, now_us, target, model_rtt (c, f), f->mss);
    if (f->fcs.window < f->window_low || f->window_low == 0)
      f->window_low = f->fcs.window;
    f->pace_bps = bwss__fcs_pace_bps (&f->fcs, &c->p, target);
    f->moved = f->sampled || f->fcs.window != window || f->fcs.sub != sub || f->pace_bps != pace_bps;
    schedule_measure (c, f, now_us);
  }
  schedule_rounds (c);
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
  out->window_bytes = bwss__fcs_window_bytes (&f->fcs, &c->p, mss);
  out->read_rate_bps = f->pace_bps;
  out->rtt_us = f->rtt_us;
  out->base_rtt_us = bwss__base_rtt_get (&f->base);
  out->mss = mss;
  out->fcs_state = f->fcs.state;
  out->congested = f->tracked;
  return BWSS_OK;
}

int
bwss_controller_last_decision (const BwssController *c, BwssDecision *out)
{
  if (c == NULL || out == NULL)
    return BWSS_EINVAL;
  if (paper_loop (c))
    return BWSS_ENOENT;
  const BwssCapacity *cap = &c->capacity;
  *out = (BwssDecision) {
    .at_us = cap->last_decision_us, .phase = cap->phase, .rule = bwss__capacity_rule_name (cap),
    .sigma_bps = cap->sigma_bps, .aggregate_bps = c->aggregate_bps, .queue_us = cap->queue_us,
    .queue_target_us = cap->queue_target_us, .seen = (BwssSeen) cap->detect_seen,
    .score = cap->foreign_score, .missing = cap->detect_missing, .bulk = cap->seen_bulk,
    .bulk_floored = cap->seen_floored, .lost = cap->seen_lost, .short_min = cap->seen_short,
    .overrun = cap->seen_overrun,
  };
  return BWSS_OK;
}

void
bwss_controller_stats (const BwssController *c, BwssControllerStats *out)
{
  if (c == NULL || out == NULL)
    return;
  out->loop = c->p.loop;
  out->aggregate_bps = c->aggregate_bps;
  if (c->u_later) {
    double u = flows_sum (c, c->u_window_us, NULL);
    out->aggregate_bps = u > 0.0 ? u : 0.0;
  }
  out->n_flows = (uint32_t) c->n;
  if (paper_loop (c)) {
    out->phase = c->sigma.phase;
    out->sigma_bps = c->sigma.sigma_bps;
    out->sigma_changes = c->sigma.changes;
    out->queue_us = -1.0;
    out->queue_target_us = 0.0;
  } else {
    out->phase = c->capacity.phase;
    out->sigma_bps = c->capacity.sigma_bps;
    out->sigma_changes = c->capacity.changes;
    out->queue_us = c->capacity.queue_us;
    out->queue_target_us = c->capacity.queue_target_us;
  }
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-household.c — the delay loop beside traffic it does not control
 * (capacity-compete.c): a second machine's plain-TCP downloads on the same
 * queue, on and off, inelastic UDP, the fq_codel household, a video out of
 * reach beside the neighbour, and the progress law (fcs.c), against the
 * fluid model (sim.h), under both receiver RTTs of Linux (before 6.16 a
 * plain 1/8 average; from 6.16 lower samples latched).
 *
 * Each cell runs twice: every flow plain TCP ("tcp", the figure bwss must
 * not fall below) and this machine's flows under bwss, the neighbour's
 * always plain.  Per second the detector is right or wrong: COMPETE is right
 * while an elastic neighbour shares one queue with us (drop-tail, CoDel),
 * DELAY otherwise (no neighbour, UDP only, fq_codel's flow queues).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "laws.h"
#include "sim.h"
#include "stripes.h"

static BwssParams delay;

enum { NB_NONE = 0, NB_TCP, NB_UDP };

typedef struct {
  const char *name;
  double      link_bps;
  double      aqm_s;        /* CoDel's target; 0 = drop-tail */
  bool        fq;           /* fq_codel */
  double      video_min;    /* the video's minimum and its source's rate */
  unsigned    downloads;    /* this machine's */
  int         neighbour;    /* NB_TCP: plain-TCP flows of a second host; NB_UDP: its UDP */
  unsigned    nb_flows;     /* NB_TCP: how many */
  double      nb_udp_bps;   /* NB_UDP: its rate */
  unsigned    nb_on, nb_off;/* the neighbour runs over [nb_on, nb_off) s */
  bool        cubic;        /* every sender CUBIC-like (cubic_like) */
} House;

typedef struct {
  double   video, total;            /* this machine's, mean over the neighbour's seconds */
  double   dl[4];                   /* each download's */
  double   neighbour;
  unsigned at_min, counted;         /* video at >= 95 % of its minimum */
  unsigned at_min90;                /* ... at >= 90 % (the lab's video_at_min) */
  unsigned right, judged;           /* detector right, of the seconds judged */
  double   q_on, q_after, q_before; /* median queue: neighbour on, after it, before it */
  unsigned back_at;                 /* first second after nb_off from which the
                                     * detector says DELAY for good (0: never off) */
  double   min_progress_s;          /* the longest a download went without 2 segments */
  unsigned short_own_loss;          /* seconds under 90 % of its minimum with a loss of the
                                     * video's own in them or in the second before */
  unsigned compete_s;               /* of the seconds counted, those in COMPETE */
  double   sigma, qt_ms;            /* σ and the queue's target, means over them */
  unsigned many_s;                  /* house_video_element: of the seconds counted, those
                                     * the element read over n connections */
  unsigned widened, narrowed;       /* ... its switches to n connections and back to one */
} HouseResult;

static const House *house_now;
static uint64_t house_seed = 1;    /* the CUBIC cells' drop draw (flowmodel's drop_packets) */
static double *house_video_trace;  /* if set: the video's rate per second, [90] */

/* The lab's 8 Mbit/s is a rate of Ethernet frames: a full segment's 1448
 * bytes of payload travel in 1514, so its flows move at most 7.65 Mbit/s
 * (the lab's aggregate: 7649-7654 kbit/s under plain TCP); the CUBIC
 * cells' link is that payload rate — four flows' fair share, 1.91 Mbit/s,
 * is then short of a 2-Mbit/s video's minimum, as in the lab. */
#define LAB_8M (8e6 * MODEL_MSS / (MODEL_MSS + MODEL_WIRE_HEADER))

/* The lab's senders are CUBIC (flowmodel's cubic: RFC 9438's window
 * function): a loss leaves 0.7 of the window, which regrows fast at first
 * and slowly near where it lost, so the shared 150-ms buffer overflows
 * every few seconds, not every few tens — and the video, whose window its
 * source holds near its need, is short for a second or more after each of
 * its losses and catches up from its backlog: 1.3-2.6 Mbit/s second by
 * second for a 2-Mbit/s video in the lab.  Reno senders with synchronised
 * drops hide that (the model's video then reads smooth). */
static void
cubic_like (Sim *s, const House *h, size_t i)
{
  if (!h->cubic)
    return;
  s->m.f[i].cubic = true;
}
static size_t nb_first;            /* index of the neighbour's first flow */

/* The neighbour starts and stops. */
static void
house_event (Sim *s, unsigned sec)
{
  const House *h = house_now;
  if (h->neighbour == NB_UDP)
    s->m.cross_bps = sec >= h->nb_on && sec < h->nb_off ? h->nb_udp_bps : 0.0;
  if (h->neighbour != NB_TCP)
    return;
  if (sec == h->nb_on) {
    nb_first = s->m.n;
    for (unsigned k = 0; k < h->nb_flows; k++)
      cubic_like (s, h, sim_add (s, 0.030, 0, 0, 1, false));
  }
  if (sec == h->nb_off && h->nb_off < 90)
    for (unsigned k = 0; k < h->nb_flows; k++)
      sim_stop_flow (s, nb_first + k);
}

/* ---- the frontier: simple receiver policies, not the law ----
 *
 * What can any receiver reach beside a plain-CUBIC neighbour on a shared
 * FIFO?  These policies hold this machine's downloads by their advertised
 * windows (the only knob a receiver has) with knowledge no law has; the
 * video and the neighbour are plain (the kernel's windows):
 *   - share f: the downloads together at f of the path's in-flight,
 *     C × the RTT each download's receiver measures (the neighbour's queue
 *     included), split evenly, never under two segments;
 *   - oracle k: the downloads free until the video's source has fallen
 *     behind by oracle_lead_s of its minimum (the shortfall, the instant it
 *     starts, which no receiver sees that soon), then each held at k of its
 *     congestion window of that instant until the video has caught up;
 *   - both: the share, and the oracle's cuts under it.
 * test-household --frontier prints the table (docs/household.md). */
typedef struct {
  double   share;          /* of C × RTT measured; < 0: none */
  double   cut;            /* oracle: what a cut keeps of the window; < 0: no oracle */
  bool     cutting;
  double   held[4];        /* the windows while cutting, bytes */
} Policy;

static Policy *house_policy;       /* set: our flows plain, the downloads held by it */

/* The video's connections: a player that fetches one stream over n TCP
 * connections (range requests), each carrying 1/n of it from a source of
 * 1/n of the video's rate with its own backlog.  At an overflow of the
 * shared FIFO one of them loses, not the video: a CUBIC loss leaves 0.7 of
 * one connection's window, 1 − 0.3/n of the video's.  A second of the
 * video is met when the sum of what its connections delivered in it
 * covers it (no connection runs ahead of its source, so the sum is what a
 * player can play).  Flows 0..n−1 are the video's, the downloads follow.
 * One connection in every cell; the frontier also runs 2 and 3. */
static unsigned house_video_n = 1;

/* ... and whether the controller sees them: false, the video is one
 * registered connection until stripe_at_s, then three more, plain TCP (the
 * kernel's windows), carry it beside the downloads the law holds —
 * bwsshttpsrc's stripes, which are not registered with bwssd (flows 0..3
 * the video's, house_video_n 4). */
static bool house_video_seen = true;

/* ... and, when it does not see them as one: true, the stripes are
 * registered as they open, in one group, each with the video's whole
 * minimum (bwsshttpsrc's stripes registered with the element's
 * preferences: the TRAS gives the group that minimum once and splits it
 * among them), judged as one stream (capacity-model.c, G1-G3). */
static bool house_video_grouped = false;

/* The stripes' group key. */
#define VIDEO_GROUP 7


/* When the stripes take the video over: the lab's element began them
 * 3.3 s into a run beside a neighbour (its queue stood from the start). */
static const unsigned stripe_at_s = 3;

/* A stripe's loss that stalls it (house_dip_at_s > 0): at that second
 * stripe 1 delivers nothing for DIP_S — a retransmission timed out, backed
 * off — while its ranges are written behind it; it sends them after, at
 * its window.  The lab's 2-Mbit/s video over three stripes beside a
 * neighbour moved 1.47 and 1.53 Mbit/s in two such seconds, then 3.30. */
static unsigned house_dip_at_s;
#define DIP_S 2.0

/* The grouped cells' stripes carry the element's ranges: consecutive
 * RANGE_S of the stream (stripes.h: 0.1 s), handed to the stripes in turn,
 * each written by the lab's live source as it produces it (at the video's
 * rate, during its own tenth of a second): a stripe moves its range, then
 * waits two ranges for its next — bursts of the whole minimum a third of
 * the time, which a stripe judged against its third of the minimum reads
 * as short or as an overrun by turns.  house_range_bits[k]: what stripe k's
 * source has written so far. */
#define RANGE_S 0.1
static double house_range_bits[4];

/* Returns the bits stripe @k (1..@stripes) has been handed by @t s after
 * the stripes began, at @rate bit/s. */
static double
range_bits (unsigned k, unsigned stripes, double t, double rate)
{
  double x = t / RANGE_S;
  unsigned full = (unsigned) x, mine = k - 1;
  double ranges = full > mine ? (double) ((full - mine + stripes - 1) / stripes) : 0.0;
  if (full % stripes == mine)
    ranges += x - full;
  return ranges * RANGE_S * rate;
}

/* The ranges' bits written since the last call, the stripes begun @t s
 * ago. */
static void
write_ranges (Sim *s, double t)
{
  const House *h = house_now;
  if (t <= 0.0)
    return;
  for (unsigned k = 1; k <= 3; k++) {
    double b = range_bits (k, 3, t, h->video_min);
    s->m.f[k].source_backlog_bits += b - house_range_bits[k];
    house_range_bits[k] = b;
  }
}

/* Each controller tick of the grouped cells: the stripes begun at
 * stripe_at_s. */
static void
stripe_ranges (Sim *s)
{
  write_ranges (s, (double) s->now_us / 1e6 - stripe_at_s);
}

/* ... or, with house_video_element, when the element's own regime says
 * (stripes.c's stripe_mode_update, striping auto): it reads the loop's
 * phase and queue every ELEMENT_READ_US (the element asks bwssd no more
 * often), ONE -> MANY stops the registered connection and starts the
 * three stripes, MANY -> ONE lets the stripes finish what their sources
 * hold and opens one connection again, which registers at its first byte
 * (sim_add_late) — the video registering again after the hold.  Flows:
 * 0 the first registered connection, 1..3 the stripes, 4..3+ELEMENT_AGAIN
 * the connections of later returns to ONE, idle until then. */
static bool house_video_element;

/* ... and its stripes registered as they open, in one group with the
 * video's whole minimum each, carrying the element's ranges in turn from
 * the switch to MANY (write_ranges) — as bwsshttpsrc registers them; false:
 * three plain connections the loop does not see, a third of the video's
 * rate each. */
static bool house_element_grouped;
#define ELEMENT_READ_US 250000u
#define ELEMENT_AGAIN   3
typedef struct {
  StripeMode mode;
  size_t     one;            /* the registered connection in ONE */
  size_t     next;           /* the next one for a return to ONE */
  uint64_t   read_at_us;
  unsigned   widened, narrowed;
  bool       closing;        /* the stripes finish what their sources hold */
  uint64_t   ranges_from_us; /* house_element_grouped: the stripes began then */
  unsigned   many_s[91];     /* 1 if the regime was MANY at the end of second t */
} Element;
static Element element;

/* The element's regime at a controller tick (Sim.on_tick). */
static void
element_tick (Sim *s)
{
  Element *e = &element;
  const House *h = house_now;
  /* a stripe that has sent what its source held closes (a source of 1
   * bit/s sends its backlog and no more) */
  for (size_t k = 1; e->closing && k <= 3; k++)
    if (s->m.f[k].active && s->m.f[k].source_backlog_bits <= 0.0)
      s->m.f[k].active = false;
  if (house_element_grouped && e->mode.regime == STRIPE_MANY && !e->closing)
    write_ranges (s, (double) (s->now_us - e->ranges_from_us) / 1e6);
  if (s->now_us < e->read_at_us + ELEMENT_READ_US)
    return;
  e->read_at_us = s->now_us;
  BwssControllerStats st;
  bwss_controller_stats (s->c, &st);
  double ratio = st.queue_us >= 0.0 && st.queue_target_us > 0.0 ? st.queue_us / st.queue_target_us
                                                                : -1.0;
  StripeRegime before = e->mode.regime;
  StripeRegime now = stripe_mode_update (&e->mode, STRIPING_AUTO,
                                         st.phase == BWSS_PHASE_COMPETE, ratio, st.queue_us,
                                         (gint64) s->now_us);
  if (now == before)
    return;
  if (now == STRIPE_MANY) {
    sim_stop_flow (s, e->one);
    e->closing = false;
    for (size_t k = 1; k <= 3; k++) {
      s->m.f[k].active = true;
      s->m.f[k].source_bps = house_element_grouped ? 1.0 : h->video_min / 3.0;
    }
    e->ranges_from_us = s->now_us;
    memset (house_range_bits, 0, sizeof house_range_bits);
    e->widened++;
  } else {
    /* a return to ONE more than ELEMENT_AGAIN times has no connection */
    g_assert_cmpuint (e->next, <, 4 + ELEMENT_AGAIN);
    e->closing = true;
    for (size_t k = 1; k <= 3; k++)
      s->m.f[k].source_bps = 1.0;
    e->one = e->next++;
    s->m.f[e->one].active = true;
    s->m.f[e->one].source_bps = h->video_min;
    e->narrowed++;
  }
}

/* The video's rate in second @t: the sum over its connections. */
static double
video_rate (const Sim *s, unsigned t)
{
  double r = 0.0;
  for (unsigned k = 0; k < house_video_n; k++)
    r += s->rate[t][k];
  return r;
}

/* What the video's sources have written and their senders not yet sent. */
static double
video_backlog_bits (const Sim *s)
{
  double b = 0.0;
  for (unsigned k = 0; k < house_video_n; k++)
    b += s->m.f[k].source_backlog_bits;
  return b;
}

/* How far behind its source the video is when the oracle cuts: a tenth of
 * a second of its minimum (the second still reaches 90 % of it). */
static const double oracle_lead_s = 0.1;

static void
policy_tick (Sim *s)
{
  Policy *p = house_policy;
  const House *h = house_now;
  const size_t first = house_video_n;        /* the first download */
  const double backlog = video_backlog_bits (s);
  if (p->cut >= 0.0) {
    if (!p->cutting && backlog > oracle_lead_s * h->video_min) {
      p->cutting = true;
      for (unsigned d = 0; d < h->downloads; d++) {
        const ModelFlow *f = &s->m.f[first + d];
        double w = f->cwnd_bytes;
        if (f->window_bytes && f->window_bytes < w)
          w = f->window_bytes;
        p->held[d] = p->cut * w;
      }
    } else if (p->cutting && backlog <= 0.0) {
      p->cutting = false;
    }
  }
  for (unsigned d = 0; d < h->downloads; d++) {
    ModelFlow *f = &s->m.f[first + d];
    double w = INFINITY;
    if (p->share >= 0.0 && f->rcv_rtt_us > 0)
      w = p->share * s->m.capacity_bps / 8.0 * (f->rcv_rtt_us / 1e6) / h->downloads;
    if (p->cutting && p->held[d] < w)
      w = p->held[d];
    if (w < 2.0 * MODEL_MSS)
      w = 2.0 * MODEL_MSS;
    f->window_bytes = isinf (w) ? 0 : (uint32_t) w;
  }
}

/* Returns true if second @t's right answer is COMPETE. */
static bool
elastic_neighbour (const House *h, unsigned t)
{
  return h->neighbour == NB_TCP && !h->fq && t >= h->nb_on && t < h->nb_off;
}

static HouseResult
run_house (const House *h, bool controlled, bool latch)
{
  Sim s;
  house_now = h;
  nb_first = 0;
  sim_init (&s, h->link_bps, &delay, house_event);
  s.m.aqm_target_s = h->aqm_s;
  s.m.fq = h->fq;
  s.m.rcv_rtt_latch = latch;
  if (house_policy) {
    controlled = false;
    house_policy->cutting = false;
    s.on_tick = policy_tick;
  }
  s.m.source_buffer = h->cubic;              /* the lab's video source: a backlog */
  /* the lab's shared FIFO drops the segments that arrive at it full: one
   * or two flows lose at an overflow, not all (flowmodel.h) */
  s.m.drop_packets = h->cubic;
  s.m.drop_seed = house_seed;
  /* ... and its CoDel is RFC 8289's on whole packets at their dequeue, as
   * the lab's stage runs it: it drops the packet at the head, whoever's it
   * is, at interval/√count while the sojourn stays above its target */
  s.m.packets = h->cubic && h->aqm_s > 0.0 && !h->fq;
  const unsigned vn = house_video_n;
  const bool stripes = !house_video_seen && !house_video_element;
  const bool ranges = stripes && house_video_grouped;
  const bool elem = house_video_element && controlled;
  memset (house_range_bits, 0, sizeof house_range_bits);
  if (ranges && !house_policy)
    s.on_tick = stripe_ranges;
  if (elem) {
    /* flow 0 registered, 1..3 the stripes (plain), then the connections
     * of later returns to ONE (registered at their first byte), all idle
     * but the first */
    g_assert_cmpuint (vn, ==, 4 + ELEMENT_AGAIN);
    memset (&element, 0, sizeof element);
    stripe_mode_init (&element.mode);
    element.next = 4;
    s.on_tick = element_tick;
    for (unsigned k = 0; k < vn; k++) {
      size_t v = k == 0 ? sim_add (&s, 0.030, 10, h->video_min, 1, true)
               : k <= 3 && !house_element_grouped ? sim_add (&s, 0.030, 10, h->video_min / 3.0, 1,
                                                             false)
                        : sim_add_late (&s, 0.030, 10, h->video_min, 1, 0.0);
      if (k >= 1 && k <= 3 && house_element_grouped)
        sim_set_group (&s, v, VIDEO_GROUP);
      s.m.f[v].source_bps = h->video_min / (k >= 1 && k <= 3 ? 3.0 : 1.0);
      s.m.f[v].active = k == 0;
      sim_no_pacing (&s, v);
    }
  }
  for (unsigned k = 0; k < vn && !elem; k++) {
    /* striped: flow 0 the registered connection, 1..3 the stripes, idle
     * until stripe_at_s */
    double share = stripes ? (k ? h->video_min / (vn - 1) : h->video_min) : h->video_min / vn;
    size_t v;
    if (ranges) {
      /* the grouped cells' stripes: their sources are the ranges
       * (stripe_ranges) */
      if (k && controlled) {
        v = sim_add_late (&s, 0.030, 10, h->video_min, 1, 0.0);
        sim_set_group (&s, v, VIDEO_GROUP);
      } else {
        v = sim_add (&s, 0.030, 10, share, 1, controlled && k == 0);
      }
      s.m.f[v].source_bps = k ? 0.0 : share;
    } else {
      v = sim_add (&s, 0.030, 10, share, 1, controlled && (!stripes || k == 0));
      s.m.f[v].source_bps = share;
      s.m.f[v].active = !stripes || k == 0;   /* a source of 0 would send freely */
    }
    sim_no_pacing (&s, v);                    /* the element reads by itself */
  }
  for (unsigned d = 0; d < h->downloads; d++)
    sim_add (&s, 0.030, 0, 0, 1, controlled);
  for (size_t i = 0; i < s.m.n; i++)
    cubic_like (&s, h, i);
  /* progress: the longest gap without two segments, per download */
  uint64_t last_bytes[4] = { 0 };
  double last_at[4] = { 0 }, worst = 0.0;
  uint32_t video_losses[91] = { 0 };          /* the video's losses by the end of each second */
  for (unsigned sec = 1; sec <= 90; sec++) {
    sim_run (&s, sec);
    if (stripes && sec == stripe_at_s) {
      sim_stop_flow (&s, 0);
      /* the ranges' sources write their backlogs (stripe_ranges); a
       * source of a bit a second keeps each sender bound by them */
      for (unsigned k = 1; k < vn; k++)
        if (ranges)
          s.m.f[k].source_bps = 1.0;
        else
          s.m.f[k].active = true;
    }
    if (ranges && house_dip_at_s && sec == house_dip_at_s)
      s.m.f[1].stall_until_s = (double) sec + DIP_S;
    if (elem)
      element.many_s[sec - 1] = element.mode.regime == STRIPE_MANY;
    for (unsigned k = 0; k < vn; k++)
      video_losses[sec] += s.m.f[k].losses;
    for (unsigned d = 0; d < h->downloads; d++) {
      const ModelFlow *f = &s.m.f[vn + d];
      if (f->bytes >= last_bytes[d] + 2 * MODEL_MSS) {
        last_bytes[d] = f->bytes;
        last_at[d] = sec;
      }
      if (sec - last_at[d] > worst)
        worst = sec - last_at[d];
    }
  }
  if (controlled)
    sim_log (&s, 3);
  HouseResult r = { 0 };
  r.min_progress_s = worst;
  unsigned from = h->nb_on > 5 ? h->nb_on : 5, to = h->nb_off < 90 ? h->nb_off : 90;
  if (h->neighbour == NB_NONE)
    from = 5, to = 90;
  if (house_video_trace)
    for (unsigned t = 0; t < 90; t++)
      house_video_trace[t] = video_rate (&s, t);
  for (unsigned k = 0; k < vn; k++)
    r.video += sim_mean (&s, k, from, to);
  r.total = r.video;
  for (unsigned d = 0; d < h->downloads; d++) {
    r.dl[d] = sim_mean (&s, vn + d, from, to);
    r.total += r.dl[d];
  }
  for (size_t i = vn + h->downloads; i < s.m.n; i++)
    r.neighbour += sim_mean (&s, i, from, to);
  for (unsigned t = from; t < to; t++) {
    r.counted++;
    double vr = video_rate (&s, t);
    if (vr >= 0.90 * h->video_min)
      r.at_min90++;
    else if (video_losses[t + 1] > video_losses[t > 0 ? t - 1 : 0])
      r.short_own_loss++;
    if (elem)
      r.many_s += element.many_s[t];
    if (controlled) {
      r.compete_s += s.stats[t].phase == BWSS_PHASE_COMPETE;
      r.sigma += s.stats[t].sigma_bps / (to - from);
      r.qt_ms += s.stats[t].queue_target_us / 1e3 / (to - from);
    }
    if (vr >= 0.95 * h->video_min)
      r.at_min++;
    else if (controlled)
      g_test_message ("%s: video short at %u s: %.0f (%s)", h->name, t, vr / 1e3,
                      bwss_phase_name (s.stats[t].phase));
  }
  for (unsigned t = 5; controlled && t < 90; t++) {
    bool compete = s.stats[t].phase == BWSS_PHASE_COMPETE;
    r.judged++;
    if (compete == elastic_neighbour (h, t))
      r.right++;
  }
  r.widened = element.widened;
  r.narrowed = element.narrowed;
  if (!elem)
    r.widened = r.narrowed = 0;
  r.q_on = sim_median_queue_ms (&s, from, to);
  r.q_before = h->nb_on > 10 ? sim_median_queue_ms (&s, 5, h->nb_on) : -1.0;
  r.q_after = h->nb_off + 10 <= 90 ? sim_median_queue_ms (&s, h->nb_off + 5, 90) : -1.0;
  if (controlled && h->nb_off < 90) {
    r.back_at = 0;
    for (unsigned t = 89; t >= h->nb_off; t--) {
      if (s.stats[t].phase == BWSS_PHASE_COMPETE)
        break;
      r.back_at = t;
    }
  }
  sim_free (&s);
  return r;
}

/* The CUBIC cells' draws pooled: which flow loses at an overflow is drawn
 * (flowmodel's drop_packets), and one draw is one lab run — this machine
 * 48-84 % of plain TCP's over three runs of one law in the lab.  A cell's
 * figures are then those of POOL_DRAWS draws together: rates, queues and
 * the judged seconds averaged, the seconds counted summed, the worst stall
 * and the latest return kept. */
#define POOL_DRAWS 5

static HouseResult
run_pooled (const House *h, bool controlled, bool latch)
{
  if (!h->cubic)
    return run_house (h, controlled, latch);
  HouseResult p = { 0 };
  for (uint64_t k = 1; k <= POOL_DRAWS; k++) {
    house_seed = k;
    HouseResult r = run_house (h, controlled, latch);
    p.video += r.video / POOL_DRAWS;
    p.total += r.total / POOL_DRAWS;
    for (unsigned d = 0; d < 4; d++)
      p.dl[d] += r.dl[d] / POOL_DRAWS;
    p.neighbour += r.neighbour / POOL_DRAWS;
    p.at_min += r.at_min;
    p.counted += r.counted;
    p.at_min90 += r.at_min90;
    p.short_own_loss += r.short_own_loss;
    p.compete_s += r.compete_s;
    p.many_s += r.many_s;
    p.widened += r.widened;
    p.narrowed += r.narrowed;
    p.sigma += r.sigma / POOL_DRAWS;
    p.qt_ms += r.qt_ms / POOL_DRAWS;
    p.right += r.right;
    p.judged += r.judged;
    p.q_on += r.q_on / POOL_DRAWS;
    p.q_after += r.q_after / POOL_DRAWS;
    p.q_before += r.q_before / POOL_DRAWS;
    if (k == 1 || r.back_at == 0 || (p.back_at != 0 && r.back_at > p.back_at))
      p.back_at = k == 1 || p.back_at != 0 ? r.back_at : 0;
    if (r.min_progress_s > p.min_progress_s)
      p.min_progress_s = r.min_progress_s;
  }
  house_seed = 1;
  return p;
}

static void
report (const House *h, const char *what, const HouseResult *r)
{
  GString *dl = g_string_new (NULL);
  for (unsigned d = 0; d < h->downloads; d++)
    g_string_append_printf (dl, "%s%.0f", d ? " + " : "", r->dl[d] / 1e3);
  g_test_message ("%s, %s: this machine %.0f (video %.0f at its minimum %u of %u s, downloads %s), "
                  "neighbour %.0f kbit/s; queue %.1f ms (before %.1f, after %.1f); detector right "
                  "%u of %u s; back to DELAY at %u s; longest download stall %.0f s",
                  h->name, what, r->total / 1e3, r->video / 1e3, r->at_min, r->counted, dl->str,
                  r->neighbour / 1e3, r->q_on, r->q_before, r->q_after, r->right, r->judged,
                  r->back_at, r->min_progress_s);
  g_string_free (dl, TRUE);
}

/* What a cell must show under bwss, of the targets: this machine's
 * total against plain TCP's, the seconds the video is at its minimum, the
 * seconds the detector is right.  Where a cell's bound is short of the
 * target, the comment at the cell says why. */
typedef struct {
  double total;     /* of plain TCP's total (target 0.90) */
  double at_min;    /* of the seconds (target 0.98) */
  double right;     /* of the judged seconds (target 0.90) */
  double video;     /* the video's mean, of plain TCP's (0: not asserted) */
  double at_min90;  /* seconds at >= 90 % of its minimum (the lab's criterion) */
  double dl;        /* each download, of its plain-TCP figure (0: the target, 0.50) */
} Bounds;

/* Runs @h plain and under bwss (both receiver RTTs), logs every figure,
 * then asserts @b; and, whatever the cell: each download >= 50 % of its
 * TCP figure where the detector is meant to compete, no download 30 s (a
 * client's stall timeout) without progress, and after a neighbour that
 * stops the short queue back within 5 s. */
static void
check_house (const House *h, Bounds bd)
{
  HouseResult tcp = run_pooled (h, false, true), r[2];
  report (h, "tcp", &tcp);
  for (int latch = 0; latch < 2; latch++) {
    r[latch] = run_pooled (h, true, latch);
    report (h, latch ? "bwss, rcv_rtt 6.16+" : "bwss, rcv_rtt before 6.16", &r[latch]);
    double worst = INFINITY;
    for (unsigned d = 0; d < h->downloads; d++)
      worst = fmin (worst, r[latch].dl[d] / tcp.dl[d]);
    g_test_message ("%s, rcv_rtt %s: total %.1f %% of tcp, video at its minimum %.1f %% of the "
                    "seconds (tcp %.1f %%; at 90 %% of it %.1f %%, tcp %.1f %%), each download >= "
                    "%.0f %% of its tcp figure, detector right %.1f %%", h->name,
                    latch ? "6.16+" : "before 6.16", 100.0 * r[latch].total / tcp.total,
                    100.0 * r[latch].at_min / r[latch].counted,
                    100.0 * tcp.at_min / tcp.counted, 100.0 * r[latch].at_min90 / r[latch].counted,
                    100.0 * tcp.at_min90 / tcp.counted, 100.0 * worst,
                    100.0 * r[latch].right / r[latch].judged);
  }
  for (int latch = 0; latch < 2; latch++) {
    const HouseResult *b = &r[latch];
    g_assert_cmpfloat (b->total, >=, bd.total * tcp.total);
    g_assert_cmpfloat (b->at_min, >=, bd.at_min * b->counted);
    g_assert_cmpfloat (b->right, >=, bd.right * b->judged);
    g_assert_cmpfloat (b->video, >=, bd.video * tcp.video);
    g_assert_cmpfloat (b->at_min90, >=, bd.at_min90 * b->counted);
    for (unsigned d = 0; (bd.total >= 0.5 || bd.dl > 0.0) && d < h->downloads; d++)
      g_assert_cmpfloat (b->dl[d], >=, (bd.dl > 0.0 ? bd.dl : 0.50) * tcp.dl[d]);
    g_assert_cmpfloat (b->min_progress_s, <, 30.0);
    if (h->nb_off < 90) {
      g_assert_cmpuint (b->back_at, >, 0);
      g_assert_cmpuint (b->back_at, <=, h->nb_off + 5);
      g_assert_cmpfloat (b->q_after, <=, 25.0);
    }
  }
}

/* ---- the traces ---- */

/* The first household: a 2-Mbit/s video and two downloads here,
 * one plain-TCP download on the second host, one 150-ms drop-tail queue.
 * Before COMPETE: our downloads 8 + 8 kbit/s, this machine 33 % of TCP's;
 * now 93.7 %, the video at its minimum in 98.8 % of the seconds (plain TCP:
 * 97.6 %: the model's drop-tail takes a segment of every flow that arrives
 * at a full buffer, the video's too; the yields win it back). */
static void
test_droptail_one (void)
{
  House h = { "drop-tail 8M, video 2M, 1 neighbour flow", 8e6, 0.0, false, 2e6, 2, NB_TCP, 1, 0,
              0, 90, false };
  check_house (&h, (Bounds) { 0.90, 0.98, 0.95, 1.0, 0.98, 0.0 });
}

/* ... a 1-Mbit/s video, three neighbour flows. */
static void
test_droptail_three (void)
{
  House h = { "drop-tail 8M, video 1M, 3 neighbour flows", 8e6, 0.0, false, 1e6, 2, NB_TCP, 3, 0,
              0, 90, false };
  check_house (&h, (Bounds) { 0.90, 0.98, 0.95, 1.0, 0.0, 0.0 });
}

/* One queue with CoDel: the detector is blind (capacity-compete.c: CoDel
 * keeps the queue under our target; its drops are no verdict on a slow
 * link).  The loop stays in TRACK and yields to the neighbour down to the
 * progress floor: this machine ~33 % of plain TCP's (the target of
 * 90 % is not met here).  Asserted: the video no worse than under plain
 * TCP, and progress. */
static void
test_codel_one (void)
{
  House h = { "CoDel 8M, video 2M, 1 neighbour flow", 8e6, 0.005, false, 2e6, 2, NB_TCP, 1, 0,
              0, 90, false };
  check_house (&h, (Bounds) { 0.30, 0.98, 0.0, 1.0, 0.0, 0.0 });
}

static void
test_codel_three (void)
{
  House h = { "CoDel 8M, video 1M, 3 neighbour flows", 8e6, 0.005, false, 1e6, 2, NB_TCP, 3, 0,
              0, 90, false };
  /* the video under its minimum in every second, plain TCP or not: the
   * model's CoDel takes a segment of every flow in its queue at each drop */
  check_house (&h, (Bounds) { 0.30, 0.0, 0.0, 1.0, 0.0, 0.0 });
}

/* The neighbour on from 20 to 60 s: COMPETE while it runs (entered ~3 s
 * after its start, the downloads climbing from their floor for a few more:
 * 84.6 / 82.5 % of plain TCP's total over those 40 s, short of the 90 %
 * target),
 * the short queue within 5 s after it (the drain when U reaches the link
 * this host had alone before). */
static void
test_on_off (void)
{
  House h = { "drop-tail 8M, video 2M, 1 neighbour flow 20-60 s", 8e6, 0.0, false, 2e6, 2, NB_TCP,
              1, 0, 20, 60, false };
  /* the video over those 40 s at 99.8 % of plain TCP's: the detector's
   * seconds at the onset, before the downloads let go */
  check_house (&h, (Bounds) { 0.80, 0.90, 0.90, 0.98, 0.0, 0.0 });
}

/* 2 Mbit/s of UDP from the second host: inelastic, the short queue stays
 * (Reno senders, then CUBIC-like ones). */
static void
test_udp (void)
{
  for (int cubic = 0; cubic < 2; cubic++) {
    House none = { cubic ? "CUBIC, drop-tail 8M, video 2M, nobody" : "drop-tail 8M, video 2M, nobody",
                   cubic ? LAB_8M : 8e6, 0.0, false, 2e6, 2, NB_NONE, 0, 0, 0, 90, cubic };
    House udp = { cubic ? "CUBIC, drop-tail 8M, video 2M, 2M UDP" : "drop-tail 8M, video 2M, 2M UDP",
                  cubic ? LAB_8M : 8e6, 0.0, false, 2e6, 2, NB_UDP, 0, 2e6, 0, 90, cubic };
    for (int latch = 0; latch < 2; latch++) {
      HouseResult a = run_pooled (&none, true, latch), b = run_pooled (&udp, true, latch);
      report (&none, latch ? "bwss, rcv_rtt 6.16+" : "bwss, rcv_rtt before 6.16", &a);
      report (&udp, latch ? "bwss, rcv_rtt 6.16+" : "bwss, rcv_rtt before 6.16", &b);
      g_assert_cmpfloat (a.right, >=, 0.90 * a.judged);
      g_assert_cmpfloat (b.right, >=, 0.90 * b.judged);
      g_assert_cmpfloat (b.q_on, <=, 25.0);
      /* Reno: within 5 ms of the queue without it; CUBIC on the lab's
       * payload rate, 2 Mbit/s of UDP leave 5.65 Mbit/s: 5.7 / 7.1 ms
       * against 5.2 / 0.5 ms (the bound: 25 ms) */
      g_assert_cmpfloat (b.q_on, <=, a.q_on + (cubic ? 7.0 : 5.0));
      g_assert_cmpfloat (b.at_min, >=, 0.98 * b.counted);
    }
  }
}

/* The cells above as the lab runs them (the calibration below): CUBIC
 * senders (cubic_like), the lab's payload rate (LAB_8M), a full FIFO's
 * drops drawn flow by flow, POOL_DRAWS draws pooled.  Asserted: what this
 * law does there, short of the targets — this machine 70.0 / 66.6 %
 * of plain TCP's (the lab: 70.5 %, the median of 3 runs), each download
 * >= 49 / 45 % of its figure, the video at 90 % of its minimum (the lab's
 * criterion) in 82.1 / 87.1 % of the seconds (the lab: 90.6 %; plain TCP
 * 45.2 %, the lab 44.7 %); the detector in COMPETE in only 61 / 58 % of the
 * seconds: each entry's free downloads leave the video short, and the
 * loop leaves COMPETE for a while. */
static void
test_cubic_one (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M, 1 neighbour flow", LAB_8M, 0.0, false, 2e6, 2, NB_TCP,
              1, 0, 0, 90, true };
  check_house (&h, (Bounds) { 0.65, 0.0, 0.55, 1.0, 0.80, 0.40 });
}

/* ... the neighbour from 1 s: while the loop starts, the queue at its
 * target with the downloads not yet held is the neighbour's too, and the
 * link this host "had alone" is learned at its share beside it; a drain at
 * every climb of U to that share (the lab: σ swinging 2.4-6.7 Mbit/s every
 * ~4 s, this machine 47.7 % of plain TCP's in one run of 3).  Here 62.1 /
 * 61.3 %, each download 38 / 37 % of its figure: asserted so. */
static void
test_cubic_early (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M, 1 neighbour flow from 1 s", LAB_8M, 0.0, false, 2e6, 2,
              NB_TCP, 1, 0, 1, 90, true };
  check_house (&h, (Bounds) { 0.58, 0.0, 0.80, 1.0, 0.82, 0.35 });
}

/* ... three neighbour flows, a 1-Mbit/s video: 71.2 / 71.5 % (the lab:
 * 2238 of 3703 kbit/s, 60 %, on another law), each download >= 59 %. */
static void
test_cubic_three (void)
{
  House h = { "CUBIC, drop-tail 8M, video 1M, 3 neighbour flows", LAB_8M, 0.0, false, 1e6, 2, NB_TCP,
              3, 0, 0, 90, true };
  check_house (&h, (Bounds) { 0.68, 0.0, 0.72, 0.98, 0.85, 0.55 });
}

static void
test_cubic_on_off (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M, 1 neighbour flow 20-60 s", LAB_8M, 0.0, false, 2e6, 2,
              NB_TCP, 1, 0, 20, 60, true };
  /* short of the targets: over the neighbour's 40 s the detector's entry
   * and our downloads' climb from their floor beside an incumbent CUBIC
   * flow: 76.8 / 83.4 % of plain TCP's total, each download >= 60 % of its
   * figure, the video at 90 % of its minimum 80.5 / 78.0 % of the seconds */
  check_house (&h, (Bounds) { 0.74, 0.0, 0.85, 0.92, 0.75, 0.55 });
}

/* ... and the QUIC cell: 62.1 / 64.0 %, each download >= 25 %; the
 * detector right in 40-47 % of the seconds. */
static void
test_cubic_quic (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2.5M, 1 uncontrolled flow", LAB_8M, 0.0, false, 2.5e6, 2,
              NB_TCP, 1, 0, 0, 90, true };
  check_house (&h, (Bounds) { 0.60, 0.0, 0.35, 1.0, 0.78, 0.22 });
}

/* One CoDel queue as the lab's household has it (the matrix's cells
 * household-codel-1tcp and -3tcp): CUBIC senders, the lab's payload rate,
 * CoDel on whole packets.  The queue stays near CoDel's 5-ms target, under
 * the loop's 10 ms: no standing queue shows the neighbour, the detector
 * never enters, and TRACK holds our downloads at their floors beside it.
 * Asserted: what the loop does there, short of the targets — this
 * machine 36.2 / 36.6 % of plain TCP's (the lab: 60 %, one run), each
 * download >= 2 / 3 % of its figure (the lab: 30 and 65 %: its loop is not
 * held at the floors), the video at 90 % of its minimum in every second
 * (plain TCP 57.6 %). */
static void
test_cubic_codel_one (void)
{
  House h = { "CUBIC, CoDel 8M, video 2M, 1 neighbour flow", LAB_8M, 0.005, false, 2e6, 2, NB_TCP,
              1, 0, 0, 90, true };
  check_house (&h, (Bounds) { 0.33, 0.0, 0.0, 0.98, 0.98, 0.015 });
}

/* ... three neighbour flows, a 1-Mbit/s video: 28.4 / 31.1 % (the lab: 47 %),
 * each download >= 2 / 6 %, the video at 90 % of its minimum 98.8 % of the
 * seconds (plain TCP 80.0 %). */
static void
test_cubic_codel_three (void)
{
  House h = { "CUBIC, CoDel 8M, video 1M, 3 neighbour flows", LAB_8M, 0.005, false, 1e6, 2, NB_TCP,
              3, 0, 0, 90, true };
  check_house (&h, (Bounds) { 0.26, 0.0, 0.0, 0.98, 0.95, 0.015 });
}

/* ... and nobody beside us: the loop keeps the short queue (TRACK in every
 * second), this machine 89.2 / 98.7 % of plain TCP's, the video at its
 * minimum in every second (plain TCP 81.2 %). */
static void
test_cubic_codel_none (void)
{
  House h = { "CUBIC, CoDel 8M, video 2M, nobody", LAB_8M, 0.005, false, 2e6, 2, NB_NONE, 0, 0, 0,
              90, true };
  check_house (&h, (Bounds) { 0.85, 0.98, 0.95, 0.98, 0.98, 0.80 });
}

/* fq_codel: the flow queues hide the neighbour; DELAY stays and nothing
 * regresses. */
static void
test_fq_codel (void)
{
  House h = { "fq_codel 8M, video 2M, 1 neighbour flow", 8e6, 0.005, true, 2e6, 2, NB_TCP, 1, 0,
              0, 90, false };
  check_house (&h, (Bounds) { 0.90, 0.98, 0.90, 1.0, 0.0, 0.0 });
}

/* A video out of reach beside the neighbour: 3 Mbit/s beside two downloads
 * here and two plain-TCP flows of the second host on one 150-ms drop-tail
 * queue (its fair fifth is 1.6 Mbit/s).  The downloads yield to it first —
 * the user's priority — so it gets at least what the loop without COMPETE
 * gives it (the downloads then at their floor), and COMPETE, which fails
 * it, is left for a while each time. */
static void
test_out_of_reach (void)
{
  House h = { "drop-tail 8M, video 3M, 2 neighbour flows", 8e6, 0.0, false, 3e6, 2, NB_TCP, 2, 0,
              0, 90, false };
  BwssParams never = delay;
  never.compete_enter = 1.0;          /* the score never reaches 1: TRACK only */
  HouseResult tcp = run_house (&h, false, true);
  report (&h, "tcp", &tcp);
  for (int latch = 0; latch < 2; latch++) {
    delay = never;
    HouseResult before = run_house (&h, true, latch);
    bwss_params_init (&delay);
    HouseResult now = run_house (&h, true, latch);
    report (&h, "bwss without COMPETE", &before);
    report (&h, "bwss", &now);
    g_test_message ("%s, rcv_rtt %s: video %.0f (without COMPETE %.0f, tcp %.0f), this machine "
                    "%.0f (%.0f, %.0f) kbit/s", h.name, latch ? "6.16+" : "before 6.16",
                    now.video / 1e3, before.video / 1e3, tcp.video / 1e3, now.total / 1e3,
                    before.total / 1e3, tcp.total / 1e3);
    g_assert_cmpfloat (now.video, >=, 0.97 * before.video);
    g_assert_cmpfloat (now.min_progress_s, <, 30.0);
  }
}

/* A QUIC download of this machine — to the loop, an elastic flow it does
 * not control, as a neighbour's — beside a 2.5-Mbit/s video and two TCP
 * downloads, one 150-ms drop-tail queue: the video at the edge of its reach
 * (plain TCP gives it 1995 kbit/s).  The targets: the TCP downloads
 * >= 50 % of their plain-TCP figures (asserted by check_house), the video no
 * worse than under plain TCP.  Here the downloads at 41 / 37 % of their
 * plain-TCP figures (short of the target: a yield at every dip of the
 * video hands the uncontrolled flow room its window keeps), this machine
 * 67.6 / 65.1 % of plain TCP's, the video at 90 % of its minimum in every
 * second. */
static void
test_quic (void)
{
  House h = { "drop-tail 8M, video 2.5M, 1 uncontrolled flow", 8e6, 0.0, false, 2.5e6, 2, NB_TCP,
              1, 0, 0, 90, false };
  check_house (&h, (Bounds) { 0.60, 0.80, 0.95, 1.0, 0.98, 0.35 });
}

/* No download fails because of bwss (fcs.c's progress law): the worst the
 * loop does to a download is hold it at its floor for good — here a video
 * and UDP that take all of a 960-kbit/s link but a few kbit/s, beside two
 * downloads, for 85 s.  With the shortest common timeout, a client's 30 s
 * without data: every download receives data in every second, and about
 * progress_bytes in every 30 s (the third of a 192-KiB send buffer that
 * wakes a sender waiting for room: nginx's send_timeout, 60 s, does not
 * fire for such a buffer).  The video and the UDP overfill the link: the
 * queue stands and looks like a neighbour's; the detector tries COMPETE,
 * finds the video short and stays out of it for longer each time. */
static void
udp_5_90 (Sim *s, unsigned sec)
{
  s->m.cross_bps = sec >= 5 ? 440e3 : 0.0;
}

static void
test_progress_floor (void)
{
  const unsigned timeout_s = 30;
  Sim s;
  sim_init (&s, 960e3, &delay, udp_5_90);
  size_t v = sim_add (&s, 0.030, 10, 496e3, 1, true);
  s.m.f[v].source_bps = 496e3;
  sim_no_pacing (&s, v);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_run (&s, 90);
  sim_log (&s, 5);
  for (size_t i = 1; i <= 2; i++) {
    double least = INFINITY;
    for (unsigned t = 10; t + timeout_s <= 90; t++) {
      double bytes = sim_mean (&s, i, t, t + timeout_s) * timeout_s / 8.0;
      least = fmin (least, bytes);
    }
    unsigned silent = sim_seconds_below (&s, i, 1.0, 10, 90);
    g_test_message ("download %zu: at least %.0f bytes in any %u s, %.0f kbit/s over 10-90 s, "
                    "%u seconds without data", i, least, timeout_s, sim_mean (&s, i, 10, 90) / 1e3,
                    silent);
    /* the reads are paced at exactly that rate: less a segment of slack */
    g_assert_cmpfloat (least, >=, delay.progress_bytes - MODEL_MSS);
    g_assert_cmpuint (silent, ==, 0);
  }
  sim_free (&s);
}

/* ---- calibration against the lab ---- */

/* The lab's household cell (docs/testing.md: the calibration), run as the
 * lab runs it, CUBIC senders on one 150-ms drop-tail FIFO, with
 * CAL_SEEDS draws of which flow loses at each overflow (the lab's runs
 * differ as much: this machine 48-84 % of plain TCP's in three runs of one
 * law).  Per draw: this machine's total, the video's seconds at 90 % of its
 * minimum (the lab's video_at_min), its longest stretch short of that. */
#define CAL_SEEDS 21

typedef struct {
  double   total;          /* this machine, bit/s */
  double   at_min90;       /* of the seconds, % */
  unsigned longest_short;  /* s */
} CalRun;

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median_of (double *v, size_t n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static CalRun
cal_run (const House *h, bool controlled, uint64_t seed)
{
  double tr[90];
  house_seed = seed;
  house_video_trace = tr;
  HouseResult r = run_house (h, controlled, true);
  house_video_trace = NULL;
  house_seed = 1;
  CalRun c = { r.total, 100.0 * r.at_min90 / r.counted, 0 };
  GString *line = g_string_new (NULL);
  unsigned run = 0;
  for (unsigned t = 0; t < 90; t++) {
    g_string_append_printf (line, " %.1f", tr[t] / 1e6);
    run = t >= 5 && tr[t] < 0.90 * h->video_min ? run + 1 : 0;
    if (run > c.longest_short)
      c.longest_short = run;
  }
  g_test_message ("%s, %s, draw %" G_GUINT64_FORMAT ": this machine %.0f kbit/s, video at 90 %% of "
                  "its minimum %.1f %% of the seconds, longest short %u s; video Mbit/s by second:%s",
                  h->name, controlled ? "bwss" : "tcp", seed, r.total / 1e3, c.at_min90,
                  c.longest_short, line->str);
  g_string_free (line, TRUE);
  return c;
}

/* The lab's figures of the cell (c7aa1f9, 3 runs of each mode, medians):
 * plain TCP this machine 5740 kbit/s, the video at 90 % of its minimum
 * 44.7 % of the seconds, short for 10-39 s at its longest stretch a run;
 * the delay loop 70.5 % of plain TCP's, the video 90.6 %, short 1-2 s at
 * most.  The model must give the medians within 5 points, and the video's
 * stretches of the same kind: long under plain TCP (a CUBIC window that
 * lost regrows slowly near where it lost, and the flow that lost keeps
 * losing its share), a few seconds under the loop. */
static void
test_calibrate (void)
{
  House h = { "lab cell: CUBIC, drop-tail 8M, video 2M, 1 neighbour flow", LAB_8M, 0.0, false,
              2e6, 2, NB_TCP, 1, 0, 0, 90, true };
  double tcp_total[CAL_SEEDS], tcp_min[CAL_SEEDS], tcp_long[CAL_SEEDS];
  double ratio[CAL_SEEDS], bw_min[CAL_SEEDS], bw_long[CAL_SEEDS];
  for (unsigned k = 0; k < CAL_SEEDS; k++) {
    CalRun t = cal_run (&h, false, k + 1), b = cal_run (&h, true, k + 1);
    tcp_total[k] = t.total;
    tcp_min[k] = t.at_min90;
    tcp_long[k] = t.longest_short;
    ratio[k] = 100.0 * b.total / t.total;
    bw_min[k] = b.at_min90;
    bw_long[k] = b.longest_short;
  }
  double mt = median_of (tcp_total, CAL_SEEDS), mm = median_of (tcp_min, CAL_SEEDS);
  double ml = median_of (tcp_long, CAL_SEEDS), mr = median_of (ratio, CAL_SEEDS);
  double bm = median_of (bw_min, CAL_SEEDS), bl = median_of (bw_long, CAL_SEEDS);
  g_test_message ("calibration, medians of %d draws: plain TCP this machine %.0f kbit/s (lab "
                  "5740), video at its minimum %.1f %% (lab 44.7 %%), longest short %.0f s (lab "
                  "10-39); bwss %.1f %% of plain TCP's (lab 70.5 %%), video %.1f %% (lab 90.6 %%), "
                  "longest short %.0f s (lab 1-2)", CAL_SEEDS, mt / 1e3, mm, ml, mr, bm, bl);
  g_assert_cmpfloat (fabs (mt - 5740e3), <=, 0.05 * LAB_8M);
  g_assert_cmpfloat (fabs (mm - 44.7), <=, 5.0);
  g_assert_cmpfloat (ml, >=, 10.0);
  g_assert_cmpfloat (fabs (mr - 70.5), <=, 5.0);
  g_assert_cmpfloat (fabs (bm - 90.6), <=, 5.0);
  g_assert_cmpfloat (bl, <=, 4.0);
}

/* The runs' logs (g_test_message) while the frontier prints its table. */
static void
print_nothing (const gchar *text)
{
  (void) text;
}

/* One row of the frontier: @label's figures against plain TCP's @tcp. */
static void
frontier_row (const char *cell, const char *label, int latch, const HouseResult *tcp,
              const HouseResult *r)
{
  unsigned shorts = r->counted - r->at_min90;
  printf ("| %s | %s | %s | %.1f | %.1f | %u of %u | %.0f | %.0f | %.0f | %.0f |\n", cell,
          latch ? "6.16+" : "before 6.16", label, 100.0 * r->total / tcp->total,
          100.0 * r->at_min90 / r->counted, r->short_own_loss, shorts, r->video / 1e3,
          r->neighbour / 1e3, 100.0 * r->dl[0] / tcp->dl[0], 100.0 * r->dl[1] / tcp->dl[1]);
}

/* The frontier's rows of cell @h with the video over @n connections (1: the
 * cell as it is), against plain TCP's @tcp (one connection). */
static void
frontier_rows (const House *h, unsigned n, const HouseResult *tcp)
{
  static const double shares[] = { 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0 };
  static const double cuts[] = { 0.7, 0.5, 0.25, 0.1 };
  static const double both[] = { 0.3, 0.4, 0.5, 0.6 };
  char conns[32] = "", label[64];
  HouseResult r;
  house_video_n = n;
  house_policy = NULL;
  if (n > 1) {
    g_snprintf (conns, sizeof conns, "video over %u: ", n);
    r = run_pooled (h, false, true);
    g_snprintf (label, sizeof label, "%splain TCP", conns);
    frontier_row (h->name, label, 1, tcp, &r);
  }
  for (int latch = 0; latch < 2; latch++) {
    house_policy = NULL;
    r = run_pooled (h, true, latch);
    g_snprintf (label, sizeof label, "%sCOMPETE (the law)", conns);
    frontier_row (h->name, label, latch, tcp, &r);
    for (size_t i = 0; i < G_N_ELEMENTS (shares); i++) {
      Policy p = { shares[i], -1.0, false, { 0 } };
      house_policy = &p;
      r = run_pooled (h, false, latch);
      g_snprintf (label, sizeof label, "%sshare %.1f", conns, shares[i]);
      frontier_row (h->name, label, latch, tcp, &r);
    }
    for (size_t i = 0; i < G_N_ELEMENTS (cuts); i++) {
      Policy p = { -1.0, cuts[i], false, { 0 } };
      house_policy = &p;
      r = run_pooled (h, false, latch);
      g_snprintf (label, sizeof label, "%soracle %.2f", conns, cuts[i]);
      frontier_row (h->name, label, latch, tcp, &r);
    }
    for (size_t i = 0; i < G_N_ELEMENTS (both); i++) {
      Policy p = { both[i], 0.5, false, { 0 } };
      house_policy = &p;
      r = run_pooled (h, false, latch);
      g_snprintf (label, sizeof label, "%sshare %.1f + oracle 0.50", conns, both[i]);
      frontier_row (h->name, label, latch, tcp, &r);
    }
  }
  house_policy = NULL;
  house_video_n = 1;
}

/* test-household --frontier: the policies above and the law, in the cells
 * cubic-1 and cubic-3 (POOL_DRAWS draws pooled), the video over 1, 2 and 3
 * connections, as a markdown table; every row against plain TCP's with the
 * video over one. */
static void
frontier (void)
{
  House cells[2] = {
    { "cubic-1", LAB_8M, 0.0, false, 2e6, 2, NB_TCP, 1, 0, 0, 90, true },
    { "cubic-3", LAB_8M, 0.0, false, 1e6, 2, NB_TCP, 3, 0, 0, 90, true },
  };
  printf ("| cell | rcv_rtt | policy | this machine, %% of plain TCP's | video at >= 90 %% of its "
          "minimum, %% of the seconds | of its seconds short, those after a loss of its own | "
          "video kbit/s | neighbour kbit/s | download 1, %% of TCP's | download 2, %% of TCP's |\n"
          "|---|---|---|---|---|---|---|---|---|---|\n");
  for (unsigned c = 0; c < 2; c++) {
    const House *h = &cells[c];
    house_policy = NULL;
    house_video_n = 1;
    HouseResult tcp = run_pooled (h, false, true);
    frontier_row (h->name, "plain TCP", 1, &tcp, &tcp);
    for (unsigned n = 1; n <= 3; n++)
      frontier_rows (h, n, &tcp);
  }
}

/* ---- the video over connections the law does not see ----
 *
 * bwsshttpsrc reads the video over three connections while the loop
 * competes or its queue stands (gst-plugin/element/stripes.h), and bwssd
 * does not know them: to the law, this machine is its two downloads, and
 * the video is traffic beside them, as the neighbour's.  Each cell runs
 * plain TCP (the video over one connection, as a player without the
 * element), then the law with the video over one registered connection
 * for stripe_at_s and over three unseen ones after it (both receiver RTTs), and logs this machine's total, the video's
 * seconds at its minimum, each download, against plain TCP's, and the
 * seconds in COMPETE, σ and the queue's target. */
static void
check_striped (const House *h, Bounds bd, bool grouped)
{
  HouseResult tcp = run_pooled (h, false, true), r[2];
  const char *how = grouped ? "grouped" : "unseen";
  report (h, "tcp", &tcp);
  house_video_n = 4;
  house_video_seen = false;
  house_video_grouped = grouped;
  for (int latch = 0; latch < 2; latch++) {
    r[latch] = run_pooled (h, true, latch);
    char *what = g_strdup_printf ("bwss, video over 3 %s, rcv_rtt %s", how,
                                  latch ? "6.16+" : "before 6.16");
    report (h, what, &r[latch]);
    g_free (what);
    g_test_message ("%s, video over 3 %s, rcv_rtt %s: total %.1f %% of tcp, video at 90 %% of "
                    "its minimum %.1f %% of the seconds (tcp %.1f %%; at 95 %% %.1f %%), downloads "
                    "%.1f / %.1f %% of tcp's, COMPETE %u of %u s, sigma %.0f kbit/s, queue target "
                    "%.1f ms", h->name, how,
                    latch ? "6.16+" : "before 6.16", 100.0 * r[latch].total / tcp.total,
                    100.0 * r[latch].at_min90 / r[latch].counted,
                    100.0 * tcp.at_min90 / tcp.counted, 100.0 * r[latch].at_min / r[latch].counted,
                    100.0 * r[latch].dl[0] / tcp.dl[0],
                    100.0 * r[latch].dl[1] / tcp.dl[1], r[latch].compete_s, r[latch].counted,
                    r[latch].sigma / 1e3, r[latch].qt_ms);
  }
  house_video_n = 1;
  house_video_seen = true;
  house_video_grouped = false;
  for (int latch = 0; latch < 2; latch++) {
    const HouseResult *b = &r[latch];
    g_assert_cmpfloat (b->total, >=, bd.total * tcp.total);
    g_assert_cmpfloat (b->at_min, >=, bd.at_min * b->counted);
    g_assert_cmpfloat (b->at_min90, >=, bd.at_min90 * b->counted);
    g_assert_cmpfloat (b->compete_s, >=, bd.right * b->counted);
    for (unsigned d = 0; d < h->downloads; d++)
      g_assert_cmpfloat (b->dl[d], >=, bd.dl * tcp.dl[d]);
    g_assert_cmpfloat (b->min_progress_s, <, 30.0);
  }
}

/* One plain-CUBIC neighbour flow, a 2-Mbit/s video.  Without the detector's
 * second reading (a queue beside a small share, capacity-compete.c) the
 * loop cuts σ to ~250 kbit/s once the stripes start and holds it there, its
 * target grown to ~90 ms (C2 on the link U shows), the detector lacking
 * "unfloored" and "no-queue" in every decision: this machine 39.6 % of
 * plain TCP's (the lab: 37.7 %), each download ~7 % (measured while the
 * stripes still sent freely before they started).  With it, at ten tick
 * phases and both receiver RTTs: 75.0-81.9 %, the video at 90 % of its
 * minimum in >= 98.1 % of the seconds (plain TCP 45.2 %), each download
 * >= 58.8 % of its figure, COMPETE >= 381 of 425 s.  Asserted there (Bounds:
 * total, at_min90, COMPETE's share in .right, each download in .dl). */
static void
test_unseen_one (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M over 3 unseen, 1 neighbour flow", LAB_8M, 0.0, false,
              2e6, 2, NB_TCP, 1, 0, 0, 90, true };
  check_striped (&h, (Bounds) { 0.75, 0.0, 0.89, 0.0, 0.98, 0.58 }, false);
}

/* ... three neighbour flows, a 1-Mbit/s video: without it 34.4 % (the lab:
 * 35.8 %); with it 67.6-73.3 %, the video at 90 % of its minimum in >= 99.8 %
 * of the seconds, each download >= 54.8 %, COMPETE >= 344 of 425 s. */
static void
test_unseen_three (void)
{
  House h = { "CUBIC, drop-tail 8M, video 1M over 3 unseen, 3 neighbour flows", LAB_8M, 0.0, false,
              1e6, 2, NB_TCP, 3, 0, 0, 90, true };
  check_striped (&h, (Bounds) { 0.67, 0.0, 0.80, 0.0, 0.99, 0.54 }, false);
}

/* ---- the video over connections registered as one stream ----
 *
 * As the unseen cells, but the stripes registered as they open, in one
 * group with the video's minimum, and each carrying the element's ranges
 * in turn (house_video_grouped, stripe_ranges()): the loop sees the whole
 * machine.  Each stripe judged against its third of the minimum (the law
 * without G1-G3) reads short two ranges of three: the loop holds σ at the
 * minima and never competes — at ten tick phases, both receiver RTTs, this
 * machine 35.5 % of plain TCP's beside one neighbour flow (each download
 * 0.9 %, COMPETE 0 s: the lab's short-min), 28.6-40.8 % beside three (each
 * download >= 1.3 %, COMPETE 12-14 % of the seconds).  Judged
 * as one stream (capacity-model.c, G1-G3), each member's window sized for
 * the stream (controller.c): 74.6-77.0 %, the video at 90 % of its minimum
 * in >= 99.8 % of the seconds, each download >= 54.5 %, COMPETE every
 * second.  Asserted there (Bounds as the unseen cells'). */
static void
test_grouped_one (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M over 3 grouped, 1 neighbour flow", LAB_8M, 0.0, false,
              2e6, 2, NB_TCP, 1, 0, 0, 90, true };
  check_striped (&h, (Bounds) { 0.74, 0.0, 0.98, 0.0, 0.99, 0.54 }, true);
}

/* ... three neighbour flows, a 1-Mbit/s video: 80.2-84.9 %, the video at
 * 90 % of its minimum in every second, each download >= 70.8 %, COMPETE
 * every second. */
static void
test_grouped_three (void)
{
  House h = { "CUBIC, drop-tail 8M, video 1M over 3 grouped, 3 neighbour flows", LAB_8M, 0.0, false,
              1e6, 2, NB_TCP, 3, 0, 0, 90, true };
  check_striped (&h, (Bounds) { 0.78, 0.0, 0.98, 0.0, 1.0, 0.69 }, true);
}

/* grouped-1 with a stripe's stall of DIP_S at 30 s (house_dip_at_s), the
 * lab's dip of the stream: the video a third short for two seconds, then
 * above its minimum while the stripe's backlog leaves.  The loop must not
 * read it as a neighbour that does not give way (the failure rule's
 * shorter memory alone did: TRACK at the dip, and the hold after it kept
 * the downloads at their floors: 53.0-57.9 % of plain TCP's, COMPETE 47-48 %
 * of the seconds, at ten tick phases).  Kept in COMPETE, at ten tick phases and
 * both receiver RTTs: 73.9-75.7 %, COMPETE >= 424 of 425 s, the video at 90 %
 * of its minimum in 97.4-97.6 % of the seconds (the dip's own two of each
 * draw's 85 are short), each download >= 54.6 %.  Asserted there. */
static void
test_grouped_dip (void)
{
  House h = { "CUBIC, drop-tail 8M, video 2M over 3 grouped, 1 neighbour flow, a stripe stalled "
              "2 s at 30 s", LAB_8M, 0.0, false, 2e6, 2, NB_TCP, 1, 0, 0, 90, true };
  house_dip_at_s = 30;
  check_striped (&h, (Bounds) { 0.73, 0.0, 0.98, 0.0, 0.97, 0.54 }, true);
  house_dip_at_s = 0;
}
  
/* ---- the video read by the element ----
 *
 * The lab's household cells read the video with bwsshttpsrc (striping
 * auto): one registered connection until its regime (stripes.c) says MANY
 * — a second of COMPETE, or a loop queue whose median over 3 s is five
 * times its target — then three the loop does not see, and one again
 * (registered at its first byte) 10 s out of COMPETE with the queue's
 * median at most 25 ms (house_video_element).  Each cell runs plain TCP
 * (the video over one connection, souphttpsrc), then the law with the
 * element (both receiver RTTs), and logs this machine's total, the
 * video's seconds at 90 % of its minimum, each download, against plain
 * TCP's; the seconds in COMPETE and the detector's right ones; the
 * seconds over n connections, its switches; the queue while the
 * neighbour runs and after it, and when the loop was back to DELAY. */
typedef struct {
  Bounds   b;           /* as check_house's; .right: the detector's right seconds */
  bool     one;         /* the element reads over one connection throughout */
  double   q_on_ms;     /* > 0: the queue's median while the traffic beside us runs, at most */
  unsigned back_s;      /* > 0: back to DELAY at most this long after the neighbour stops, s,
                         * the queue's median after it under 25 ms */
} ElementBounds;

static void
check_element (const House *h, ElementBounds eb)
{
  HouseResult tcp = run_pooled (h, false, true), r[2];
  report (h, "tcp", &tcp);
  house_video_n = 4 + ELEMENT_AGAIN;
  house_video_element = true;
  for (int latch = 0; latch < 2; latch++) {
    r[latch] = run_pooled (h, true, latch);
    report (h, latch ? "bwss, the element, rcv_rtt 6.16+" : "bwss, the element, rcv_rtt before 6.16",
            &r[latch]);
    double worst = INFINITY;
    for (unsigned d = 0; d < h->downloads; d++)
      worst = fmin (worst, r[latch].dl[d] / tcp.dl[d]);
    g_test_message ("%s, the element, rcv_rtt %s: total %.1f %% of tcp, video at 90 %% of its "
                    "minimum %.1f %% of the seconds (tcp %.1f %%), each download >= %.1f %% of "
                    "tcp's, COMPETE %u of %u s, detector right %u of %u s, over n connections "
                    "%u s (%u widenings, %u narrowings), queue %.1f ms (after %.1f ms), back to "
                    "DELAY at %u s", h->name, latch ? "6.16+" : "before 6.16",
                    100.0 * r[latch].total / tcp.total, 100.0 * r[latch].at_min90 / r[latch].counted,
                    100.0 * tcp.at_min90 / tcp.counted, 100.0 * worst, r[latch].compete_s,
                    r[latch].counted, r[latch].right, r[latch].judged, r[latch].many_s,
                    r[latch].widened, r[latch].narrowed, r[latch].q_on, r[latch].q_after,
                    r[latch].back_at);
  }
  house_video_n = 1;
  house_video_element = false;
  for (int latch = 0; latch < 2; latch++) {
    const HouseResult *b = &r[latch];
    g_assert_cmpfloat (b->total, >=, eb.b.total * tcp.total);
    g_assert_cmpfloat (b->at_min90, >=, eb.b.at_min90 * b->counted);
    g_assert_cmpfloat (b->right, >=, eb.b.right * b->judged);
    for (unsigned d = 0; d < h->downloads; d++)
      g_assert_cmpfloat (b->dl[d], >=, eb.b.dl * tcp.dl[d]);
    g_assert_cmpfloat (b->min_progress_s, <, 30.0);
    if (eb.one)
      g_assert_cmpuint (b->widened, ==, 0);
    if (eb.q_on_ms > 0.0)
      g_assert_cmpfloat (b->q_on, <=, eb.q_on_ms);
    if (eb.back_s > 0) {
      g_assert_cmpuint (b->back_at, >=, h->nb_off);
      g_assert_cmpuint (b->back_at, <=, h->nb_off + eb.back_s);
      g_assert_cmpfloat (b->q_after, >=, 0.0);
      g_assert_cmpfloat (b->q_after, <, 25.0);
    }
  }
}

/* The lab's droptail150-1tcp and -3tcp on the element: /household/unseen-1
 * and -3 with the element's own switch (a second of COMPETE, or the queue's
 * median five times its target) in place of a fixed one.  At ten tick
 * phases, both receiver RTTs (tests/unit/element-spread.sh): 1 flow, this
 * machine 77.0-82.2 % of plain TCP's, the video at 90 % of its minimum in
 * >= 98.1 % of the seconds, each download >= 60.5 %, COMPETE (the right
 * answer) >= 91.8 % of the seconds; 3 flows 74.8-85.9 %, 100 %, >= 64.8 %,
 * >= 86.8 %.  Asserted there. */
static void
test_element_one (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 2M, 1 neighbour flow", LAB_8M, 0.0, false, 2e6,
              2, NB_TCP, 1, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.77, 0.0, 0.91, 0.0, 0.98, 0.60 }, false, 0.0, 0 });
}

static void
test_element_three (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 1M, 3 neighbour flows", LAB_8M, 0.0, false, 1e6,
              2, NB_TCP, 3, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.74, 0.0, 0.86, 0.0, 1.0, 0.64 }, false, 0.0, 0 });
}

/* ... the neighbour from 20 to 60 s (household-droptail150-1tcp-on20-60).
 * The element's stripes outlive the neighbour: COMPETE is left by a drain
 * when U reaches the link this host had alone, and U no longer counts the
 * video; the next drain, compete_probe_us after the entry, meets windows
 * sized for the RTT it started from, which hold the queue above its
 * target as it falls: in no phase back to DELAY in the 30 s after, the
 * queue's median after it 114-142 ms.  While the neighbour runs: this
 * machine 85.1-93.8 % of plain TCP's, the video at 90 % of its minimum in
 * >= 93.5 % of the seconds, each download >= 70.1 %.  Asserted: those (the
 * issue's target, the queue back to 25 ms within 5 s, is not met:
 * docs/household.md). */
static void
test_element_on_off (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 2M, 1 neighbour flow 20-60 s", LAB_8M, 0.0, false,
              2e6, 2, NB_TCP, 1, 0, 20, 60, true };
  check_element (&h, (ElementBounds) { { 0.85, 0.0, 0.0, 0.0, 0.93, 0.70 }, false, 0.0, 0 });
}

/* ---- the element's stripes registered as one stream ----
 *
 * element-1, -3 and -on-off with the stripes as bwsshttpsrc registers them:
 * in one group, each with the video's whole minimum, carrying its ranges
 * in turn (house_element_grouped); the loop judges them as one stream
 * (capacity-model.c, G1-G3) and its U holds the video.  At ten tick
 * phases, both receiver RTTs: 1 flow, this machine 96.2-98.6 % of plain
 * TCP's, the video at 90 % of its minimum in every second, each download
 * >= 85.2 %, COMPETE (the right answer) >= 424 of 425 s; 3 flows 93.5-96.6 %,
 * every second, >= 89.4 %, >= 420 of 425 s.  Neighbour from 20 to 60 s: U
 * holds the video, the drain due when U reaches the link this host had
 * alone comes, and the loop is back to DELAY 0-2 s after the neighbour
 * stops, the queue's median after it 0.4-2.0 ms; while the neighbour runs
 * 85.9-89.7 %, the video >= 95.0 %, each download >= 70.7 %, the detector
 * right in >= 94.5 % of the seconds.  Asserted there (the unseen stripes'
 * element-on-off never comes back). */
static void
test_element_grouped_one (void)
{
  House h = { "element: stripes grouped, CUBIC, drop-tail 8M, video 2M, 1 neighbour flow", LAB_8M,
              0.0, false, 2e6, 2, NB_TCP, 1, 0, 0, 90, true };
  house_element_grouped = true;
  check_element (&h, (ElementBounds) { { 0.96, 0.0, 0.99, 0.0, 1.0, 0.85 }, false, 0.0, 0 });
  house_element_grouped = false;
}

static void
test_element_grouped_three (void)
{
  House h = { "element: stripes grouped, CUBIC, drop-tail 8M, video 1M, 3 neighbour flows", LAB_8M,
              0.0, false, 1e6, 2, NB_TCP, 3, 0, 0, 90, true };
  house_element_grouped = true;
  check_element (&h, (ElementBounds) { { 0.93, 0.0, 0.98, 0.0, 1.0, 0.89 }, false, 0.0, 0 });
  house_element_grouped = false;
}

static void
test_element_grouped_on_off (void)
{
  House h = { "element: stripes grouped, CUBIC, drop-tail 8M, video 2M, 1 neighbour flow 20-60 s",
              LAB_8M, 0.0, false, 2e6, 2, NB_TCP, 1, 0, 20, 60, true };
  house_element_grouped = true;
  check_element (&h, (ElementBounds) { { 0.85, 0.0, 0.94, 0.0, 0.95, 0.70 }, false, 0.0, 5 });
  house_element_grouped = false;
}

/* 2 Mbit/s of UDP from the second host (household-droptail150-udp): the
 * short queue stays (its median 5.9-7.3 ms), the loop never competes (the
 * detector right in every second), the element never stripes; this
 * machine >= 98.5 % of plain TCP's, the video at its minimum throughout,
 * each download >= 92.2 %. */
static void
test_element_udp (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 2M, 2M UDP", LAB_8M, 0.0, false, 2e6, 2, NB_UDP,
              0, 2e6, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.98, 0.0, 1.0, 0.0, 1.0, 0.92 }, true, 8.0, 0 });
}

/* One CoDel queue (household-codel-1tcp, -3tcp): CoDel keeps the queue
 * under the loop's target, COMPETE is never entered (the detector wrong in
 * every second), and so the element never stripes: the figures of
 * /household/cubic-codel-1 and -3, 35.6-40.6 and 28.3-31.7 % of plain TCP's,
 * the video at 90 % of its minimum >= 97.6 and 95.3 %. */
static void
test_element_codel_one (void)
{
  House h = { "element: CUBIC, CoDel 8M, video 2M, 1 neighbour flow", LAB_8M, 0.005, false, 2e6, 2,
              NB_TCP, 1, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.35, 0.0, 0.0, 0.0, 0.97, 0.01 }, true, 0.0, 0 });
}

static void
test_element_codel_three (void)
{
  House h = { "element: CUBIC, CoDel 8M, video 1M, 3 neighbour flows", LAB_8M, 0.005, false, 1e6, 2,
              NB_TCP, 3, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.28, 0.0, 0.0, 0.0, 0.95, 0.02 }, true, 0.0, 0 });
}

/* fq_codel (household-fq_codel-1tcp): the flow queues hide the neighbour;
 * no COMPETE, one connection, this machine 97.8-99.5 % of plain TCP's, the
 * video at its minimum throughout, each download >= 95.6 %. */
static void
test_element_fq (void)
{
  House h = { "element: CUBIC, fq_codel 8M, video 2M, 1 neighbour flow", LAB_8M, 0.005, true, 2e6, 2,
              NB_TCP, 1, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.97, 0.0, 1.0, 0.0, 1.0, 0.95 }, true, 5.5, 0 });
}

/* A QUIC download of this machine beside a 2.5-Mbit/s video and two TCP
 * downloads (household-droptail150-quic): to the loop a neighbour's flow.
 * 83.0-87.4 % of plain TCP's, the video at 90 % of its minimum >= 95.3 %
 * (plain TCP 15.8 %), each TCP download >= 56.8 %, COMPETE >= 90.6 %. */
static void
test_element_quic (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 2.5M, 1 uncontrolled flow", LAB_8M, 0.0, false,
              2.5e6, 2, NB_TCP, 1, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.83, 0.0, 0.90, 0.0, 0.95, 0.56 }, false, 0.0, 0 });
}

/* ... and nobody beside us: no COMPETE, one connection, >= 99.0 % of
 * plain TCP's, each download >= 95.3 %. */
static void
test_element_none (void)
{
  House h = { "element: CUBIC, drop-tail 8M, video 2M, nobody", LAB_8M, 0.0, false, 2e6, 2, NB_NONE,
              0, 0, 0, 90, true };
  check_element (&h, (ElementBounds) { { 0.99, 0.0, 1.0, 0.0, 1.0, 0.95 }, true, 6.0, 0 });
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  bwss_params_init (&delay);
  if (argc > 1 && strcmp (argv[1], "--frontier") == 0) {
    g_set_print_handler (print_nothing);     /* the runs' logs: the table alone */
    frontier ();
    return 0;
  }
  g_test_add_func ("/household/droptail-1", test_droptail_one);
  g_test_add_func ("/household/droptail-3", test_droptail_three);
  g_test_add_func ("/household/codel-1", test_codel_one);
  g_test_add_func ("/household/codel-3", test_codel_three);
  g_test_add_func ("/household/on-off", test_on_off);
  g_test_add_func ("/household/udp", test_udp);
  g_test_add_func ("/household/fq-codel", test_fq_codel);
  g_test_add_func ("/household/out-of-reach", test_out_of_reach);
  g_test_add_func ("/household/quic", test_quic);
  g_test_add_func ("/household/cubic-1", test_cubic_one);
  g_test_add_func ("/household/cubic-early", test_cubic_early);
  g_test_add_func ("/household/cubic-3", test_cubic_three);
  g_test_add_func ("/household/cubic-on-off", test_cubic_on_off);
  g_test_add_func ("/household/cubic-quic", test_cubic_quic);
  g_test_add_func ("/household/cubic-codel-1", test_cubic_codel_one);
  g_test_add_func ("/household/cubic-codel-3", test_cubic_codel_three);
  g_test_add_func ("/household/cubic-codel-none", test_cubic_codel_none);
  g_test_add_func ("/household/unseen-1", test_unseen_one);
  g_test_add_func ("/household/unseen-3", test_unseen_three);
  g_test_add_func ("/household/grouped-1", test_grouped_one);
  g_test_add_func ("/household/grouped-3", test_grouped_three);
  g_test_add_func ("/household/grouped-dip", test_grouped_dip);
  g_test_add_func ("/household/element-1", test_element_one);
  g_test_add_func ("/household/element-3", test_element_three);
  g_test_add_func ("/household/element-on-off", test_element_on_off);
  g_test_add_func ("/household/element-grouped-1", test_element_grouped_one);
  g_test_add_func ("/household/element-grouped-3", test_element_grouped_three);
  g_test_add_func ("/household/element-grouped-on-off", test_element_grouped_on_off);
  g_test_add_func ("/household/element-udp", test_element_udp);
  g_test_add_func ("/household/element-codel-1", test_element_codel_one);
  g_test_add_func ("/household/element-codel-3", test_element_codel_three);
  g_test_add_func ("/household/element-fq-codel", test_element_fq);
  g_test_add_func ("/household/element-quic", test_element_quic);
  g_test_add_func ("/household/element-none", test_element_none);
  g_test_add_func ("/household/progress-floor", test_progress_floor);
  g_test_add_func ("/household/calibrate", test_calibrate);
  return g_test_run ();
}

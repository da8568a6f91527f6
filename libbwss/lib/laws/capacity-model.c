/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * capacity-model.c — the delay loop's model and what it measures; its rules
 * and decision are capacity.c's.
 *
 * Model.  The flows share one access link of capacity C (less any cross
 * traffic).  Flow i's receiver RTT is b_i + q + e_i: its base RTT
 * (basertt.c), the link's queueing delay q, and any queue elsewhere on its
 * own path e_i.  Each FCS sizes its window for its base RTT plus the queue
 * target q_t:  w_i = T_i·(b_i + q_t)/p  (eq. 1 with that RTT).  While the
 * link is busy the windows fill the pipe and the queue:
 *
 *     Σ w_i = Σ R_i·b_i + C·q        and, with R_i = T_i·(b_i+q_t)/(b_i+q),
 *     σ/C − 1 ≈ (q − q_t)/(b̄ + q_t)                                  (C1)
 *
 * where b̄ is the rate-weighted mean base RTT.  So the queue measures σ
 * against the link: q = q_t when σ = C, more when σ is above the link or
 * cross traffic arrived, nothing when σ is below it.  A queue that is kept
 * at q_t makes the windows, not losses, decide the shares; and every law then
 * runs at the path's RTT, not at a full buffer's.  While the link is busy
 * (q > 0) U = Σ R_i is what it delivers to us: the measure to cut σ to.
 *
 * What the loop measures (bwss__capacity_queue): q is the smallest excess of
 * RTT over base among the flows that received data lately — the link's
 * queue delays them all; a queue on one path (Fig. 5c) delays only that
 * flow and does not count.  Bases: basertt.c.
 *
 * The queue target (bwss__capacity_queue_target):
 *     q_t = max(q_min, k·p/C)                                          (C2)
 * q_min is short (10 ms); k = 2 packets of the link keep a slow link from
 * idling (a packet is 12 ms at 960 kbit/s: one segment more or less in any
 * window moves the queue by that much, so a target of less than two packets
 * is empty half the time).  The dead zone around q_t is band·q_t and at
 * least one packet either side.  At 960 kbit/s the target is 24 ms; from
 * 8 Mbit/s up it is q_min.
 *
 * The queue the allocation itself needs.  A window is at least a floor, so
 * a flow held at its floor takes floor/RTT whatever its target; the queue
 * must grow until the floors fit.  With whole segments that floor was the
 * problem (at 960 kbit/s and 30 ms one segment per RTT is 386 kbit/s: three
 * flows cannot be shared 1:2:3 below 42 ms of queue).  The FCS's floor is
 * a window below one segment instead (min_window_bytes: the kernel's
 * smallest clamp; the sender then sends about 576 bytes per RTT, 150 kbit/s
 * at 30 ms), so the shares of the paper's DSL experiments are reachable at
 * the two-packet target (the traces of test-capacity.c).  Where floors still
 * exceed the link (many flows, or cross traffic on a slow link) the queue
 * they hold is physics: the loop cuts σ to the minima and no further, and
 * the queue settles where the floors fit — it is not a target the loop
 * chases (a target that rose with the need made the loop raise σ into it,
 * and the targets then grew the windows: tried and measured,
 * docs/lab-results.md).
 *
 * The decision interval (bwss__capacity_interval): decision_rtts RTTs of the
 * slowest flow (its base plus q_t), and at least decision_segments segments
 * of the fastest (the kernel's RTT average moves by segments), within
 * [decision_min_us, decision_max_us].
 *
 * The one pass that counts (capacity_count, capacity.h): at each decision
 * q, q_t and its band, the reference RTT b̄ + q_t, the link's rate over
 * link_window_us, and the sums over the flows that the rules of capacity.c
 * read (capacity.h says what each is).
 *
 * A stream over several flows (the group law).  A player that reads one
 * video over n connections (bwsshttpsrc's stripes) registers them in one
 * group with the video's minimum: the TRAS gives the group one share and
 * splits its minimum among the members (allocation.c, eq. 5g, 5m).  Each
 * connection's bytes come in bursts (a range, then the next request), so
 * one judged against its part m_g/n reads short while the stream is on
 * time, and the rules cut σ for a deficit that is not there.  So a group
 * whose members carry a minimum is judged as one flow:
 *
 *     R_g = Σ_{i∈g} R_i,   T_g = Σ T_i,   m_g = Σ m_i                 (G1)
 *
 * (Σ m_i is the group's minimum: the TRAS's parts add up to it), below its
 * minimum when
 *
 *     R_g < (1−α)·m_g                                                   (G2)
 *
 * for as long as the loop's own memory of the group says (it keeps each
 * group's key from decision to decision), and everything the rules read of
 * a minimum or a target — U with the minima kept, what is unused or idle,
 * the deficit, the flows short and their shortfall, the overruns, a loss
 * of the stream's — read from (R_g, T_g, m_g).  The group is held by its
 * windows only if every member is, and holds a queue of its own only if
 * its least delayed fresh member does (under fq_codel each connection has
 * its queue; the stream waits for none of them if one has none).  What a
 * window measures stays each flow's:                                    (G3)
 * the link's queue, the bases, the interval, the flows held by their
 * windows and hungry, the flows that lost segments.  At most
 * BWSS_CAPACITY_GROUPS groups a decision (laws.h); a flow of a group
 * beyond them, or of key 0, or without a minimum, is judged alone.
 */
#include "capacity.h"

/* ---- the queue, its target, the interval ---- */

double
bwss__capacity_queue (const BwssCapacityFlow *flows, size_t n)
{
  double q = -1.0;
  for (size_t i = 0; i < n; i++) {
    const BwssCapacityFlow *f = &flows[i];
    if (!f->fresh || f->rtt_us == 0 || f->base_rtt_us == 0)
      continue;
    double qi = (double) f->rtt_us - (double) f->base_rtt_us;
    if (qi < 0.0)
      qi = 0.0;
    if (q < 0.0 || qi < q)
      q = qi;
  }
  return q;
}

/* Returns the rate-weighted mean base RTT of the fresh flows, µs (the plain
 * mean if none has a rate; 0 if none has a base). */
static double
mean_base (const BwssCapacityFlow *flows, size_t n)
{
  double wsum = 0.0, sum = 0.0, plain = 0.0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const BwssCapacityFlow *f = &flows[i];
    if (f->base_rtt_us == 0)
      continue;
    plain += f->base_rtt_us;
    k++;
    if (f->fresh && f->rate_bps > 0.0) {
      wsum += f->rate_bps;
      sum += f->rate_bps * f->base_rtt_us;
    }
  }
  if (wsum > 0.0)
    return sum / wsum;
  return k ? plain / (double) k : 0.0;
}

/* Returns the segment size p of C2 and the band, bytes: the last flow's
 * that knows it, default_mss if none does. */
static double
packet_bytes (const BwssParams *p, const BwssCapacityFlow *flows, size_t n)
{
  double mss = p->default_mss;
  for (size_t i = 0; i < n; i++)
    if (flows[i].mss)
      mss = flows[i].mss;
  return mss;
}

double
bwss__capacity_queue_target (const BwssParams *p, const BwssCapacityFlow *flows, size_t n,
                            double link_bps)
{
  double qt = (double) p->queue_target_min_us;
  double mss = packet_bytes (p, flows, n);
  if (link_bps > 0.0) {
    double packets = p->queue_target_packets * 8.0 * mss / link_bps * 1e6;   /* C2 */
    if (packets > qt)
      qt = packets;
  }
  if (qt > (double) p->queue_target_max_us)
    qt = (double) p->queue_target_max_us;
  return qt;
}

uint64_t
bwss__capacity_interval (const BwssParams *p, const BwssCapacityFlow *flows, size_t n,
                        double queue_target_us)
{
  double slowest = 0.0, fastest_seg_us = 0.0;
  for (size_t i = 0; i < n; i++) {
    const BwssCapacityFlow *f = &flows[i];
    double rtt = f->base_rtt_us ? f->base_rtt_us + queue_target_us : f->rtt_us;
    if (rtt > slowest)
      slowest = rtt;
    if (f->rate_bps > 0.0) {
      double seg = f->mss ? f->mss : p->default_mss;
      double seg_us = p->decision_segments * 8.0 * seg / f->rate_bps * 1e6;
      if (fastest_seg_us == 0.0 || seg_us < fastest_seg_us)
        fastest_seg_us = seg_us;
    }
  }
  double t = p->decision_rtts * slowest;
  if (fastest_seg_us > t)
    t = fastest_seg_us;
  if (t < (double) p->decision_min_us)
    t = (double) p->decision_min_us;
  if (t > (double) p->decision_max_us)
    t = (double) p->decision_max_us;
  return (uint64_t) t;
}

/* ---- the link's rate over the last decisions ---- */

/* Returns U over the last decisions covering link_window_us (this one's
 * @u over @interval_us included), bit/s: an interval-weighted mean. */
static double
u_over_window (const BwssCapacity *c, const BwssParams *p, double u, double interval_us)
{
  double sum = u * interval_us, span = interval_us;
  for (uint32_t k = 1; k < BWSS_CAPACITY_U_HISTORY && span < (double) p->link_window_us; k++) {
    uint32_t i = (c->u_hist_head + BWSS_CAPACITY_U_HISTORY - k) % BWSS_CAPACITY_U_HISTORY;
    if (c->u_hist_us[i] == 0)
      break;
    sum += c->u_hist[i] * (double) c->u_hist_us[i];
    span += (double) c->u_hist_us[i];
  }
  return span > 0.0 ? sum / span : u;
}

void
capacity_u_record (BwssCapacity *c, double u, double interval_us)
{
  c->u_hist[c->u_hist_head] = u;
  c->u_hist_us[c->u_hist_head] = (uint64_t) interval_us;
  c->u_hist_head = (c->u_hist_head + 1) % BWSS_CAPACITY_U_HISTORY;
}

/* ---- one pass that counts ---- */

/* Sets the link's rate for C2, q_t, its band and the reference RTT in @k. */
static void
count_link (CapacityCounts *k, const BwssCapacity *c, const BwssParams *p,
            const BwssCapacityFlow *flows, size_t n)
{
  /* the link: U, or what it was a decision ago less link_decay (a queue
   * target in packets must not jump with a U that dips for one interval) */
  double link = (1.0 - p->link_decay) * c->link_bps;
  if (k->u > link)
    link = k->u;
  k->qt = bwss__capacity_queue_target (p, flows, n, link);
  k->link = link;
  /* the dead zone: band·q_t, and at least one packet of U either side (one
   * segment more or less in any window moves the queue by that much) */
  double mss = packet_bytes (p, flows, n);
  k->band = p->queue_band * k->qt;
  if (link > 0.0 && 8.0 * mss / link * 1e6 > k->band)
    k->band = 8.0 * mss / link * 1e6;
  k->rtt_ref = mean_base (flows, n) + k->qt;
}

/* Returns true if flow @f holds a queue of its own at the bottleneck: its
 * RTT excess above the link's queue (the smallest, k->q) by own_queue_us —
 * under fq_codel the queue of a flow that sends more than the scheduler
 * gives it (its sender has data waiting there: the network holds it, not
 * its source, not its window).  Under FIFO every flow sees one queue: never. */
static bool
own_queue (const CapacityCounts *k, const BwssParams *p, const BwssCapacityFlow *f)
{
  if (f->window_limited || !f->fresh || f->rtt_us == 0 || f->base_rtt_us == 0 || k->q < 0.0)
    return false;
  /* above the link's queue lately, not now only: the kernel samples the
   * RTT of a flow at 160 kbit/s 7 times a second, its average reads a queue
   * the others' show drained for a second or two (the redistribution trace:
   * σ cut to U after every probe); and beyond the band (a packet of a slow
   * link) */
  double link = k->q > k->q_peak ? k->q : k->q_peak;
  double excess = (double) f->rtt_us - (double) f->base_rtt_us - link;
  return excess >= (double) p->own_queue_us && excess > k->band;
}

/* Adds what flow @f's window says (G3) to @k: held by it, hungry, losses. */
static void
count_window (CapacityCounts *k, const BwssParams *p, const BwssCapacityFlow *f)
{
  if (f->window_limited)
    k->held++;
  if (f->window_limited && f->rate_bps >= (1.0 - p->alpha) * f->target_bps) {
    k->hungry++;
    /* its FCS keeps a window whose rate is within α of the target (eq. 3,
     * 4) in whole segments: what it lacks of the target stays off the link
     * until the target leaves that band */
    if (f->target_bps > f->rate_bps)
      k->banded += f->target_bps - f->rate_bps;
  }
  if (f->lost)
    k->lost++;
}

/* Adds what flow (or stream, G1) @f says of its minimum and target to @k. */
static void
count_need (CapacityCounts *k, const BwssParams *p, const BwssCapacityFlow *f)
{
  bool below = bwss__below_minimum (f->rate_bps, f->min_rate_bps, p->alpha);
  /* below its minimum with a queue of its own: the network's doing for as
   * long as it lasts (no reserve_hold_us); without, its source's after
   * reserve_hold_us */
  bool own = own_queue (k, p, f);
  bool held = below && own;
  if (own)
    k->own++;
  bool counts = below && (held || f->below_min_us < p->reserve_hold_us);
  k->minima += f->min_rate_bps;
  if (f->min_rate_bps > 0.0)
    k->carried += f->rate_bps >= 0.0 ? f->rate_bps : f->min_rate_bps;
  k->u_kept += f->rate_bps > f->min_rate_bps ? f->rate_bps : f->min_rate_bps;
  /* short of its target, and neither its window nor its minimum says why
   * (a video its source paces at its minimum is no verdict on the link) */
  bool at_min = f->min_rate_bps > 0.0 && f->rate_bps >= 0.0
      && !bwss__below_minimum (f->rate_bps, f->min_rate_bps, p->alpha);
  if (!f->window_limited && !at_min && f->rate_bps >= 0.0
      && f->rate_bps < (1.0 - p->alpha) * f->target_bps)
    k->u_lost += f->rate_bps;
  double kept = f->rate_bps > f->min_rate_bps ? f->rate_bps : f->min_rate_bps;
  if (!f->window_limited && f->target_bps > kept)
    k->unused += f->target_bps - kept;
  /* idle: what it leaves of its target; below its minimum, the rest of
   * the minimum only once it has stayed there reserve_hold_us (before,
   * the queue may be what holds it back) */
  double used = f->rate_bps;
  if (f->min_rate_bps > used && (held || f->below_min_us < p->reserve_hold_us))
    used = f->min_rate_bps;
  if (!f->window_limited && f->rate_bps >= 0.0 && f->target_bps > used)
    k->idle += f->target_bps - used;
  /* deficit: a minimum the network holds down (its own queue), or not met
   * lately (longer, its source sends less); its own evidence apart */
  if (counts)
    k->deficit += f->min_rate_bps - f->rate_bps;
  if (held)
    k->deficit_own += f->min_rate_bps - f->rate_bps;
  if (counts && f->lost)
    k->short_lost++;
  if (below) {
    k->short_min++;
    k->shortfall += f->min_rate_bps - f->rate_bps;
  }
  /* its floor: the sub-segment window's rate at its RTT, or the progress
   * floor (fcs.c) */
  double rtt = f->rtt_us ? (double) f->rtt_us / 1e6 : 0.0;
  double floor = bwss__progress_floor_bps (p);
  if (rtt > 0.0 && 8.0 * p->min_window_bytes / rtt > floor)
    floor = 8.0 * p->min_window_bytes / rtt;
  /* moving well above what it is allotted — compete_headroom above, more
   * than a decision's jitter of a few segments (beside a neighbour a
   * video's rate moves 10-20 % about its minimum second by second, more
   * over a decision), and not held by its window (a download at its floor
   * moves up to twice what the floor's estimate says, its sender's
   * sub-segment windows; read as an overrun it would keep the detector
   * out): released (a player's fragment, a flow just added), it may fill
   * the queue itself */
  double allotted = f->target_bps > f->min_rate_bps ? f->target_bps : f->min_rate_bps;
  if (floor > allotted)
    allotted = floor;
  if (!f->window_limited && f->rate_bps > (1.0 + p->compete_headroom) * allotted)
    k->overrun++;
  /* above its minimum by more than a decision's slack (α), held by its
   * window or not: its source has more waiting (a fragment, what a loss
   * held back), and it may be what holds the queue up */
  if (f->min_rate_bps > 0.0 && f->rate_bps > (1.0 + p->alpha) * f->min_rate_bps)
    k->above_min++;
  /* held down by σ: allocated no more than its floor */
  if (f->min_rate_bps <= 0.0) {
    k->bulk++;
    if (f->target_bps <= (1.0 + p->alpha) * floor)
      k->bulk_floored++;
  }
}

/* ---- streams over several flows (G1-G3) ---- */

/* Returns the slot of @f's stream among the @ng of @keys; @ng if it starts
 * a new one, BWSS_CAPACITY_GROUPS if it is judged alone. */
static size_t
stream_slot (const BwssCapacityFlow *f, const uint64_t *keys, size_t ng)
{
  if (f->group == 0)
    return BWSS_CAPACITY_GROUPS;
  for (size_t g = 0; g < ng; g++)
    if (keys[g] == f->group)
      return g;
  return ng < BWSS_CAPACITY_GROUPS ? ng : BWSS_CAPACITY_GROUPS;
}

/* Adds member @f to its stream @s (G1): rates, targets and minima summed;
 * fresh or lost if any member is; held by its windows if all are; the RTT
 * of its least delayed fresh member. */
static void
fold_member (BwssCapacityFlow *s, bool first, const BwssCapacityFlow *f)
{
  if (first) {
    *s = *f;
    s->rate_bps = f->rate_bps >= 0.0 ? f->rate_bps : -1.0;
    return;
  }
  if (f->rate_bps >= 0.0)
    s->rate_bps = (s->rate_bps >= 0.0 ? s->rate_bps : 0.0) + f->rate_bps;
  s->target_bps += f->target_bps;
  s->min_rate_bps += f->min_rate_bps;
  s->window_limited = s->window_limited && f->window_limited;
  s->lost = s->lost || f->lost;
  bool usable = f->fresh && f->rtt_us && f->base_rtt_us;
  double excess = (double) f->rtt_us - (double) f->base_rtt_us;
  if (usable && (!s->fresh || !s->rtt_us || !s->base_rtt_us
                 || excess < (double) s->rtt_us - (double) s->base_rtt_us)) {
    s->rtt_us = f->rtt_us;
    s->base_rtt_us = f->base_rtt_us;
    s->fresh = true;
  }
}

/* How long stream @key has been below its minimum at @now by the loop's
 * memory of the last decision, µs (G2); 0 if it was not. */
static uint64_t
stream_below_us (const BwssCapacity *c, uint64_t key, uint64_t now)
{
  for (size_t g = 0; g < BWSS_CAPACITY_GROUPS; g++)
    if (c->group_key[g] == key && c->group_below_since_us[g])
      return now - c->group_below_since_us[g];
  return 0;
}

void
capacity_groups_record (BwssCapacity *c, uint64_t now, const CapacityCounts *k)
{
  uint64_t since[BWSS_CAPACITY_GROUPS] = { 0 };
  for (size_t g = 0; g < k->groups; g++) {
    uint64_t was = stream_below_us (c, k->group_key[g], now);
    if (k->group_below[g])
      since[g] = was ? now - was : now;
  }
  memset (c->group_key, 0, sizeof c->group_key);
  memcpy (c->group_key, k->group_key, k->groups * sizeof *k->group_key);
  memcpy (c->group_below_since_us, since, sizeof since);
}

CapacityCounts
capacity_count (const BwssCapacity *c, const BwssParams *p, uint64_t now, double u,
                const BwssCapacityFlow *flows, size_t n, double interval_us)
{
  CapacityCounts k = { .u = u };
  k.u_link = u_over_window (c, p, u, interval_us);
  k.q = bwss__capacity_queue (flows, n);
  k.q_peak = c->queue_peak_at_us ? c->queue_peak_us : 0.0;
  count_link (&k, c, p, flows, n);
  BwssCapacityFlow streams[BWSS_CAPACITY_GROUPS];
  for (size_t i = 0; i < n; i++) {
    const BwssCapacityFlow *f = &flows[i];
    count_window (&k, p, f);
    size_t g = stream_slot (f, k.group_key, k.groups);
    if (g == BWSS_CAPACITY_GROUPS) {
      count_need (&k, p, f);
      continue;
    }
    fold_member (&streams[g], g == k.groups, f);
    if (g == k.groups)
      k.group_key[k.groups++] = f->group;
  }
  for (size_t g = 0; g < k.groups; g++) {
    BwssCapacityFlow *s = &streams[g];
    s->below_min_us = stream_below_us (c, s->group, now);
    k.group_below[g] = bwss__below_minimum (s->rate_bps, s->min_rate_bps, p->alpha);
    count_need (&k, p, s);
  }
  return k;
}

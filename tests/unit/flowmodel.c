/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flowmodel.c — see flowmodel.h for the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flowmodel.h"

#define INITIAL_CWND_SEGMENTS 10       /* RFC 6928 */
#define MIN_CWND_SEGMENTS     2
#define DEFAULT_AQM_INTERVAL  0.100    /* CoDel's interval */
#define SUB_MSS_YIELD         0.5      /* a window below one MSS: half of it per RTT */
#define SYN_WINDOW            64240.0  /* bytes: the window Linux's SYN offers (44 segments) */
#define TAIL_FLIGHT_SEGMENTS  2.0      /* fewer segments in flight: a loss is a tail loss */
#define RTO_MIN               0.200    /* TCP_RTO_MIN, s: the probe timeout's floor with one
                                        * segment out (tcp_schedule_loss_probe) */
/* CUBIC (RFC 9438; Linux's tcp_cubic.c defaults) */
#define CUBIC_C               0.4      /* segments / s³: the cubic's scale */
#define CUBIC_BETA            0.7      /* what a loss leaves of the window */
#define CUBIC_FAST_CONV       0.85     /* (1 + β)/2: W_max after a loss below the last W_max */
#define CUBIC_MAX_GROWTH      1.5      /* at most this factor per RTT towards the target */

void
model_init (Model *m, double capacity_bps, double max_queue_s, double dt_s)
{
  memset (m, 0, sizeof *m);
  m->f = calloc (MODEL_MAX_FLOWS, sizeof *m->f);
  if (m->f == NULL)
    abort ();
  m->capacity_bps = capacity_bps;
  m->max_queue_s = max_queue_s;
  m->dt_s = dt_s;
  m->aqm_interval_s = DEFAULT_AQM_INTERVAL;
  m->sub_mss_yield = SUB_MSS_YIELD;
  m->above_since_s = -1.0;
}

void
model_free (Model *m)
{
  free (m->f);
  m->f = NULL;
  free (m->fqp);
  m->fqp = NULL;
}

size_t
model_add (Model *m, double base_rtt_s)
{
  ModelFlow *f = &m->f[m->n];
  memset (f, 0, sizeof *f);
  f->active = true;
  f->base_rtt_s = base_rtt_s;
  f->rtt_s = base_rtt_s;
  f->cwnd_bytes = INITIAL_CWND_SEGMENTS * MODEL_MSS;
  f->ssthresh_bytes = INFINITY;
  f->last_loss_s = -INFINITY;
  /* its SYN-ACK waits behind the queue; under fq_codel, packet by packet,
   * a new flow's packet goes first: behind the packet in service only */
  double wait = model_queued_bits (m) / m->capacity_bps;
  if (m->fq && m->packets)
    wait = m->link_free_s > m->now_s ? m->link_free_s - m->now_s : 0.0;
  f->min_rtt_us = (uint32_t) ((base_rtt_s + wait) * 1e6);
  f->added_s = m->now_s;
  return m->n++;
}

/* What a bit of flow @f's payload takes of the link (wire_headers): its
 * segments' headers over their payload — a source that holds its sender
 * sends each write as a segment. */
static double
wire_per_bit (const Model *m, const ModelFlow *f)
{
  if (!m->wire_headers || (m->fq && !m->packets))
    return 1.0;
  double seg = f->source_packet > 0 && f->source_bound ? f->source_packet : MODEL_MSS;
  return 1.0 + MODEL_WIRE_HEADER / seg;
}

/* ... and of the cross traffic's. */
static double
wire_per_cross_bit (const Model *m)
{
  return m->wire_headers && (!m->fq || m->packets)
         ? 1.0 + (double) MODEL_UDP_WIRE_HEADER / MODEL_UDP_PAYLOAD : 1.0;
}

double
model_queued_bits (const Model *m)
{
  double q = m->cross_queued_bits * wire_per_cross_bit (m);
  for (size_t i = 0; i < m->n; i++)
    q += m->f[i].queued_bits * wire_per_bit (m, &m->f[i]);
  return q;
}

/* Returns true if flow @f's path limit binds at sending rate @rate. */
static bool
path_binds (const ModelFlow *f, double rate)
{
  return f->path_limit_bps > 0 && rate >= f->path_limit_bps;
}

/* The steps flow @f's data takes to the bottleneck (b_i/2), and its ACKs back. */
static size_t
half_rtt_steps (const Model *m, const ModelFlow *f)
{
  size_t lag = (size_t) llround (f->base_rtt_s / 2.0 / m->dt_s);
  return lag < MODEL_PIPE_STEPS ? lag : MODEL_PIPE_STEPS - 1;
}

/* shim_reads: what paced flow @f sends now, bit/s — what the right edge its
 * receiver offered b_i/2 ago lets it send beyond what it sent, at once,
 * within its congestion window (in flight: sent, not received). */
static double
shim_sending_rate (const Model *m, ModelFlow *f, bool *cwnd_limited)
{
  size_t lag = half_rtt_steps (m, f);
  double edge = m->step >= lag ? f->edge_pipe[(m->step - lag) % MODEL_PIPE_STEPS] : f->read_edge;
  double room = edge - f->sent_bytes;
  double cwnd_room = f->cwnd_bytes - (f->sent_bytes - (double) f->bytes);
  double bytes = room < cwnd_room ? room : cwnd_room;
  if (bytes < 0.0)
    bytes = 0.0;
  *cwnd_limited = cwnd_room < room;
  f->read_bound = f->unread_bytes > 0.0;
  f->source_bound = false;
  double rate = bytes * 8.0 / m->dt_s;
  if (f->source_bps > 0 && f->source_bps + f->source_backlog_bits / m->dt_s < rate) {
    rate = f->source_bps + f->source_backlog_bits / m->dt_s;
    f->source_bound = true;
  }
  if (f->path_limit_bps > 0 && f->path_limit_bps < rate)
    rate = f->path_limit_bps;
  return rate;
}

/* shim_reads: enters or leaves the shim's paced reads for @f (paced, a
 * window of a segment or more): on entry nothing waits unread, no credit,
 * and the right edge is what it received and its window. */
static void
shim_follow (Model *m, ModelFlow *f)
{
  bool paced = m->shim_reads && m->packets && f->read_bps > 0.0 && f->window_bytes >= MODEL_MSS;
  if (paced && !f->shim_paced) {
    f->unread_bytes = 0.0;
    f->read_tokens = 0.0;
    f->read_edge = (double) f->bytes + f->window_bytes;
    f->ts_fresh = true;
    f->seg_credit = 0.0;
    for (size_t k = 0; k < MODEL_PIPE_STEPS; k++)
      f->edge_pipe[k] = f->read_edge;
  }
  if (!paced)
    f->unread_bytes = 0.0;
  f->shim_paced = paced;
}

/* shim_reads: @f's receiver over one step — its credit grows at read_bps
 * (at most MODEL_READ_BURST_SEGMENTS deep); once it covers a segment, a
 * read takes all that waits; the right edge is what was read and the
 * window, never taken back. */
static void
shim_read (Model *m, ModelFlow *f)
{
  if (!f->shim_paced)
    return;
  f->read_tokens += f->read_bps / 8.0 * m->dt_s;
  if (f->read_tokens > MODEL_READ_BURST_SEGMENTS * MODEL_MSS)
    f->read_tokens = MODEL_READ_BURST_SEGMENTS * MODEL_MSS;
  if (f->unread_bytes >= 1.0 && f->read_tokens >= MODEL_MSS) {
    f->read_tokens -= f->unread_bytes;
    f->unread_bytes = 0.0;
    f->ts_fresh = true;                   /* its window update: a new timestamp */
  }
  double edge = (double) f->bytes - f->unread_bytes + f->window_bytes;
  if (edge > f->read_edge)
    f->read_edge = edge;
  f->edge_pipe[m->step % MODEL_PIPE_STEPS] = f->read_edge;
}

/* Returns the rate flow @f sends at now, bit/s, and whether its congestion
 * window is what limits it (in *cwnd_limited). */
static double
sending_rate (const Model *m, ModelFlow *f, double q, bool *cwnd_limited)
{
  if (m->now_s < f->stall_until_s) {
    *cwnd_limited = false;                /* waiting for the loss probe */
    f->read_bound = false;
    f->source_bound = false;
    return 0.0;
  }
  double rtt = f->base_rtt_s + q;
  double adv = f->window_bytes ? (double) f->window_bytes : INFINITY;
  bool offered = false;
  double syn = f->syn_window_bytes > 0 ? f->syn_window_bytes : SYN_WINDOW;
  if (m->packets && f->kernel_window) {
    double grown = syn + 2.0 * (double) f->bytes;   /* tcp_grow_window: 2 segments a segment */
    if (grown > SYN_WINDOW && syn <= SYN_WINDOW)
      grown = SYN_WINDOW;
    if (!f->window_bytes) {
      adv = grown;                      /* no clamp yet: the kernel's own window */
      if ((double) f->bytes + adv > f->offered_edge)
        f->offered_edge = (double) f->bytes + adv;
    } else if (f->offered_edge - (double) f->bytes > adv) {
      adv = f->offered_edge - (double) f->bytes;   /* offered before the clamp: still open */
      offered = true;
    }
  } else if (m->packets && !f->window_bytes)
    adv = syn;                          /* no clamp yet: the window its SYN offered */
  else if (m->packets && syn - (double) f->bytes > adv) {
    /* a receiver never takes back a window it offered: what its SYN
     * offered (before any clamp) stays open until that much arrived, and
     * the reads need not open it */
    adv = syn - (double) f->bytes;
    offered = true;
  }
  if (f->shim_paced && !offered)
    return shim_sending_rate (m, f, cwnd_limited);
  if (adv < MODEL_MSS)
    adv *= m->sub_mss_yield;
  double w = f->cwnd_bytes < adv ? f->cwnd_bytes : adv;
  double rate = w * 8.0 / rtt;
  double other = INFINITY;
  if (f->source_bps > 0)
    other = f->source_bps + f->source_backlog_bits / m->dt_s;
  if (f->path_limit_bps > 0 && f->path_limit_bps < other)
    other = f->path_limit_bps;
  f->read_bound = false;
  if (f->read_bps > 0 && f->read_bps < other && !offered) {
    other = f->read_bps;              /* the window opens by what is read */
    f->read_bound = f->read_bps < rate;
  }
  *cwnd_limited = f->cwnd_bytes < adv && rate <= other;
  double source = f->source_bps + f->source_backlog_bits / m->dt_s;
  f->source_bound = f->source_bps > 0 && source <= other && source < rate;
  if (path_binds (f, rate)) {
    /* the queue elsewhere stretches the RTT the window is spread over */
    double r2 = w * 8.0 / (rtt + f->path_delay_s);
    if (r2 < rate)
      rate = r2 > f->path_limit_bps ? f->path_limit_bps : r2;
  }
  return rate < other ? rate : other;
}

/* A loss seen by @f now: Reno halves its window, once per RTT.  With
 * fewer than TAIL_FLIGHT_SEGMENTS in flight no later segment tells the
 * sender (no SACK, no RACK), and with one segment out Linux's tail loss
 * probe waits 2·SRTT + TCP_RTO_MIN: the flow delivers nothing until then
 * (a flow its reads pace at a DSL rate sends one segment per window
 * opening, so each of its losses is one).  Any other loss, with
 * repair_holes, is a hole in the receiver's sequence for an RTT. */
static void
lose (const Model *m, ModelFlow *f)
{
  double now = m->now_s;
  bool tail_probe = m->packets;
  if (now - f->last_loss_s < f->rtt_s)
    return;
  f->last_loss_s = now;
  double in_flight = f->shim_paced ? (f->sent_bytes - (double) f->bytes) / MODEL_MSS
                                    : f->send_bps * f->rtt_s / (8.0 * MODEL_MSS);
  if (tail_probe && f->active && in_flight < TAIL_FLIGHT_SEGMENTS) {
    f->stall_until_s = now + 2.0 * f->rtt_s + RTO_MIN;
    f->stalls++;
  } else if (tail_probe && m->repair_holes && f->active) {
    /* the lost segment was due after the queue it met; its retransmission
     * comes an RTT after the segments behind it told the sender */
    f->hole_from_s = now + f->queue_s;
    f->hole_until_s = f->hole_from_s + f->rtt_s;
  }
  if (f->cubic) {
    /* the epoch: W_max (less, with fast convergence, if the window lost
     * at is below the last one: a newcomer takes its share), K */
    double w = f->cwnd_bytes / MODEL_MSS;
    f->cubic_wmax = w < f->cubic_wmax ? CUBIC_FAST_CONV * w : w;
    f->cubic_k_s = cbrt (f->cubic_wmax * (1.0 - CUBIC_BETA) / CUBIC_C);
    f->cwnd_bytes *= CUBIC_BETA;
    f->cubic_west = f->cwnd_bytes / MODEL_MSS;
  } else {
    f->cwnd_bytes *= f->md_keep > 0.0 ? f->md_keep : 0.5;
  }
  if (f->cwnd_bytes < MIN_CWND_SEGMENTS * MODEL_MSS)
    f->cwnd_bytes = MIN_CWND_SEGMENTS * MODEL_MSS;
  f->ssthresh_bytes = f->cwnd_bytes;
  f->losses++;
  /* the segments in flight behind the hole arrive out of order */
  double flight = f->cwnd_bytes * 2.0;
  if (f->window_bytes && f->window_bytes < flight)
    flight = f->window_bytes;
  f->ooopack += flight > MODEL_MSS ? (uint32_t) (flight / MODEL_MSS) : 1;
}

/* CUBIC's congestion avoidance for @acked_bytes at @now: towards the
 * larger of the cubic W(t + RTT) and Reno's estimate (which grows by
 * 3(1 − β)/(1 + β) segments per RTT: the TCP-friendly region), reaching
 * it within an RTT, at most CUBIC_MAX_GROWTH of the window per RTT; above
 * both, a hundredth of a segment per RTT (tcp_cubic.c's cnt = 100·cwnd). */
static void
grow_cubic (ModelFlow *f, double now, double acked_bytes)
{
  double w = f->cwnd_bytes / MODEL_MSS, acked = acked_bytes / MODEL_MSS;
  double t = now - f->last_loss_s + f->rtt_s - f->cubic_k_s;
  double target = isfinite (f->last_loss_s) ? f->cubic_wmax + CUBIC_C * t * t * t : w;
  f->cubic_west += 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA) * acked / w;
  if (f->cubic_west > target)
    target = f->cubic_west;
  if (target > CUBIC_MAX_GROWTH * w)
    target = CUBIC_MAX_GROWTH * w;
  double inc = target > w ? (target - w) * acked / w : 0.01 * acked / w;
  f->cwnd_bytes += inc * MODEL_MSS;
}

/* Grows @f's cwnd for @acked_bytes acknowledged at @now (slow start, then
 * +ai_segments MSS per window, or CUBIC's function), if the cwnd is what
 * limits it. */
static void
grow (ModelFlow *f, double now, double acked_bytes, bool cwnd_limited)
{
  if (!cwnd_limited || acked_bytes <= 0)
    return;
  if (f->cwnd_bytes < f->ssthresh_bytes)
    f->cwnd_bytes += acked_bytes;
  else if (f->cubic)
    grow_cubic (f, now, acked_bytes);
  else
    f->cwnd_bytes += (f->ai_segments > 0.0 ? f->ai_segments : 1.0) * MODEL_MSS * acked_bytes
                     / f->cwnd_bytes;
  if (f->window_bytes && f->cwnd_bytes > 2.0 * f->window_bytes)
    f->cwnd_bytes = 2.0 * f->window_bytes;   /* nothing beyond what it may send */
}

/* The receiver's RTT estimate: one ms-granular sample per two segments,
 * rtt8 += sample − rtt8/8 (tcp_rcv_rtt_update); with @latch (Linux >=
 * 6.16) a sample below the estimate replaces it.  With @ticks (packet
 * level) a sample is what TCP timestamps give: whole ticks of 1 ms between
 * the stamp a segment echoes and its arrival, so an RTT of 42.6 ms reads 42
 * or 43 and the estimate settles near 42.3 — the lab's 12.2-12.3 ms of
 * queue over an idle 960-kbit/s link, where the floor read 12.0 and took
 * the raise rule's side of its band (12.07 ms there).  The fluid cells
 * keep the floor (their bars were set with it). */
static void
sample_rtt (ModelFlow *f, double received_bits, bool latch, bool gaps, bool ticks, bool spread)
{
  f->seg_credit += received_bits / (8.0 * MODEL_MSS) / 2.0;
  double rtt_s = f->rtt_s, spacing = 0.0;
  if (gaps && f->source_bound) {
    double packet = f->source_packet > 0 ? f->source_packet : MODEL_MSS;
    spacing = 8.0 * packet / f->source_bps;
    if (!spread)
      rtt_s += 0.5 * spacing;                     /* the sender's wait for data */
  }
  while (f->seg_credit >= 1.0) {
    f->seg_credit -= 1.0;
    if (spread && spacing > 0.0) {
      f->gap_phase += 0.7548776662466927;
      f->gap_phase -= floor (f->gap_phase);
      rtt_s = f->rtt_s + f->gap_phase * spacing;
    }
    /* TCP timestamps tick in ms: the sample is the ticks between the echoed
     * stamp and now, ceil(d − u) for a segment u into its tick — d's floor
     * or ceiling, the ceiling a fraction frac(d) of the time.  Where each
     * segment falls in its tick: an even spread (the golden ratio's
     * sequence), not one phase for ever */
    double sample_us = floor (rtt_s * 1e3) * 1e3;
    if (ticks) {
      f->ts_phase += 0.6180339887498949;
      f->ts_phase -= floor (f->ts_phase);
      sample_us = ceil (rtt_s * 1e3 - f->ts_phase) * 1e3;
    }
    if (sample_us < 1000.0)
      sample_us = 1000.0;
    if (f->rcv_rtt8_us == 0 || (latch && 8.0 * sample_us < f->rcv_rtt8_us))
      f->rcv_rtt8_us = 8.0 * sample_us;
    else
      f->rcv_rtt8_us += sample_us - f->rcv_rtt8_us / 8.0;
  }
  f->rcv_rtt_us = (uint32_t) (f->rcv_rtt8_us / 8.0);
}

/* Senders: what leaves each flow now (its window over its RTT, with the
 * queue its packets see), and what reaches the bottleneck now (what it sent
 * b_i/2 ago) in @arriving; returns the total, cross traffic included. */
static double
send (Model *m, bool *cwnd_limited, double *arriving)
{
  double dt = m->dt_s, total_in = m->cross_bps * dt;
  double q = model_queued_bits (m) / m->capacity_bps;
  size_t slot = m->step % MODEL_PIPE_STEPS;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    double qi = m->fq ? f->queue_s : q;
    shim_follow (m, f);
    f->send_bps = f->active ? sending_rate (m, f, qi, &cwnd_limited[i]) : 0.0;
    f->sent_bytes += f->send_bps * dt / 8.0;
    if ((m->packets || m->source_buffer) && f->active && f->source_bps > 0) {
      /* the source writes at its rate into a large send buffer: what the
       * sender could not send yet waits there and leaves later */
      f->source_backlog_bits += (f->source_bps - f->send_bps) * dt;
      if (f->source_backlog_bits < 0.0)
        f->source_backlog_bits = 0.0;
    }
    f->pipe[slot] = f->send_bps;
    size_t lag = half_rtt_steps (m, f);
    double in = m->step >= lag ? f->pipe[(m->step - lag) % MODEL_PIPE_STEPS] : 0.0;
    arriving[i] = in * dt;
    total_in += arriving[i];
  }
  return total_in;
}

/* Flow @f received @out bits this step: its bytes, RTT samples, cwnd. */
static void
receive (Model *m, ModelFlow *f, double out, bool cwnd_limited)
{
  f->rate_bps = out / m->dt_s;
  double sampled = out;                 /* segments behind a hole give no RTT sample */
  if (m->now_s >= f->hole_from_s && m->now_s < f->hole_until_s) {
    f->held_bits += out;                /* behind the hole: not in order yet */
    out = sampled = 0.0;
  } else if (f->held_bits > 0.0) {
    out += f->held_bits;                /* the retransmission filled it */
    f->held_bits = 0.0;
  }
  f->bits_frac += out;
  uint64_t whole = (uint64_t) (f->bits_frac / 8.0);
  f->bytes += whole;
  if (f->shim_paced)
    f->unread_bytes += (double) whole;
  f->bits_frac -= 8.0 * (double) whole;
  /* a data segment's RTT holds its frame's transmission at the bottleneck,
   * which the handshake's small segments (the base) do not: 12.6 ms at
   * 960 kbit/s */
  f->rtt_s = f->base_rtt_s + f->queue_s
      + (m->packets ? 8.0 * (MODEL_MSS + MODEL_WIRE_HEADER) / m->capacity_bps : 0.0)
      + (path_binds (f, f->send_bps) ? f->path_delay_s : 0.0);
  if (!f->shim_paced) {
    sample_rtt (f, sampled, m->rcv_rtt_latch, m->source_gaps, m->packets, m->gap_spread);
  } else if (f->ts_fresh && sampled > 0.0) {
    /* every segment of the window a read reopened echoes that window
     * update's timestamp: one sample, its first segment's */
    f->seg_credit = 1.0;
    sample_rtt (f, 0.0, m->rcv_rtt_latch, m->source_gaps, m->packets, m->gap_spread);
    f->ts_fresh = false;
  }
  if (f->active)
    grow (f, m->now_s, out / 8.0, cwnd_limited);
  shim_read (m, f);
}

/* ---- fq_codel ---- */

/* Returns true if CoDel drops a packet of a queue whose sojourn time is
 * @sojourn_s and which holds @bits now (RFC 8289's dequeue, per step). */
static bool
codel_drops (const Model *m, ModelCodel *cd, double sojourn_s, double bits)
{
  double now = m->now_s, interval = m->aqm_interval_s;
  bool ok = false;
  /* at most one MTU queued: a full segment, with its headers where the
   * link carries them (the queue holds what the wire holds) */
  double mtu = MODEL_MSS + (m->wire_headers && !m->fq ? MODEL_WIRE_HEADER : 0);
  if (sojourn_s < m->aqm_target_s || bits <= 8.0 * mtu) {
    cd->first_above_s = 0.0;
  } else if (cd->first_above_s == 0.0) {
    cd->first_above_s = now + interval;
  } else if (now >= cd->first_above_s) {
    ok = true;
  }
  if (cd->dropping) {
    if (!ok) {
      cd->dropping = false;
      return false;
    }
    if (now < cd->drop_next_s)
      return false;
    cd->count++;
    cd->drop_next_s += interval / sqrt ((double) cd->count);
    return true;
  }
  if (!ok)
    return false;
  /* re-enter near the last drop rate if it ended recently */
  cd->count = cd->count > 2 && now - cd->drop_next_s < 16.0 * interval ? cd->count - 2 : 1;
  cd->dropping = true;
  cd->drop_next_s = now + interval / sqrt ((double) cd->count);
  return true;
}

/* Splits @serve bits among @k queues holding @want[i] bits, max-min (a
 * fluid DRR): @got[i]. */
static void
share_max_min (const double *want, size_t k, double serve, double *got)
{
  bool done[MODEL_MAX_FLOWS + 1] = { false };
  size_t left = 0;
  for (size_t i = 0; i < k; i++) {
    got[i] = 0.0;
    done[i] = want[i] <= 0.0;
    if (!done[i])
      left++;
  }
  while (left > 0 && serve > 1e-9) {
    double each = serve / (double) left;
    bool any = false;
    for (size_t i = 0; i < k; i++)
      if (!done[i] && want[i] - got[i] <= each) {
        serve -= want[i] - got[i];
        got[i] = want[i];
        done[i] = true;
        left--;
        any = true;
      }
    if (!any) {
      for (size_t i = 0; i < k; i++)
        if (!done[i])
          got[i] += each;
      serve = 0.0;
    }
  }
}

/* Drops @bits of queue @i (the cross traffic's if @i == m->n). */
static void
drop_from (Model *m, size_t i, double bits)
{
  if (i == m->n) {
    m->cross_queued_bits -= bits;
    return;
  }
  m->f[i].queued_bits -= bits;
  m->f[i].sent_bytes -= bits / 8.0;
  lose (m, &m->f[i]);
}

/* fq_codel's overflow: beyond the limit, the fattest queue drops. */
static void
fq_overflow (Model *m)
{
  double limit = m->max_queue_s * m->capacity_bps + m->capacity_bps * m->dt_s;
  double excess = model_queued_bits (m) - limit;
  while (excess > 1e-9) {
    size_t fat = m->n;
    double most = m->cross_queued_bits;
    for (size_t i = 0; i < m->n; i++)
      if (m->f[i].queued_bits > most) {
        most = m->f[i].queued_bits;
        fat = i;
      }
    double d = excess < most ? excess : most;
    if (d <= 0.0)
      break;
    drop_from (m, fat, d);
    excess -= d;
  }
}

/* One step of the fq_codel bottleneck. */
static void
step_fq (Model *m, const bool *cwnd_limited, const double *arriving)
{
  double dt = m->dt_s, c = m->capacity_bps;
  size_t k = m->n + 1;                     /* the flows' queues, then the cross traffic's */
  m->cross_queued_bits += m->cross_bps * dt;
  for (size_t i = 0; i < m->n; i++)
    m->f[i].queued_bits += arriving[i];
  m->dropped_bits = 0.0;
  fq_overflow (m);

  double want[MODEL_MAX_FLOWS + 1], got[MODEL_MAX_FLOWS + 1];
  size_t busy = 0;
  for (size_t i = 0; i < k; i++) {
    want[i] = i < m->n ? m->f[i].queued_bits : m->cross_queued_bits;
    if (want[i] > 0.0)
      busy++;
  }
  /* CoDel per queue: the sojourn at the rate the queue is served now */
  if (m->aqm_target_s > 0) {
    share_max_min (want, k, c * dt, got);
    for (size_t i = 0; i < k; i++) {
      double rate = got[i] > 0.0 ? got[i] / dt : c / (double) (busy ? busy : 1);
      ModelCodel *cd = i < m->n ? &m->f[i].codel : &m->cross_codel;
      if (want[i] > 0.0 && codel_drops (m, cd, want[i] / rate, want[i])) {
        double d = want[i] < 8.0 * MODEL_MSS ? want[i] : 8.0 * MODEL_MSS;
        drop_from (m, i, d);
        want[i] -= d;
        m->dropped_bits += d;
      }
    }
  }
  share_max_min (want, k, c * dt, got);
  m->cross_queued_bits -= got[m->n];
  m->cross_rate_bps = got[m->n] / dt;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    f->queued_bits -= got[i];
    if (f->queued_bits < 1e-9)
      f->queued_bits = 0.0;
    /* its sojourn: what is left of its queue at the rate it is served */
    double rate = got[i] > 0.0 ? got[i] / dt : c / (double) (busy ? busy : 1);
    f->queue_s = f->queued_bits / rate;
    receive (m, f, got[i], cwnd_limited[i]);
  }
  m->queue_s = model_queued_bits (m) / c;
}

/* ---- the single CoDel queue, packet by packet ----
 *
 * At a DSL rate a packet takes longer to send than CoDel's target (12 ms
 * at 960 kbit/s against 5 ms), so what CoDel does depends on whole
 * packets: a fluid queue that is empty while the arrivals fit the link
 * holds a packet or two in the real one whenever two flows' packets meet,
 * and CoDel drops once more than one MTU stayed queued with a sojourn
 * above target for an interval.  So this bottleneck queues packets: what
 * reaches it becomes whole segments, served one at a time in FIFO order,
 * and CoDel runs at each dequeue as RFC 8289 (and the lab's stage) does. */

/* Drops the packet @p (CoDel or the limit): its flow sees a loss. */
static void
fifo_drop (Model *m, const ModelPacket *p)
{
  m->dropped_bits += p->bits;
  m->codel_drops++;
  if (p->flow < m->n)
    m->f[p->flow].drops++;
  else
    m->cross_drops++;
  if (p->flow < m->n) {
    ModelFlow *f = &m->f[p->flow];
    lose (m, f);
    f->sent_bytes -= p->bits / 8.0;       /* not in flight: its window lets it send it again */
  }
}

/* IP and TCP headers (timestamps) of a packet the lab's stage counts, bytes */
#define FIFO_IP_HEADER 52.0

/* Returns the bytes of IP packets waiting in the FIFO (not the one in service). */
static double
fifo_ip_bytes (const Model *m)
{
  double bytes = 0.0;
  for (size_t k = 0; k < m->fifo_n; k++)
    bytes += m->fifo[(m->fifo_head + k) % MODEL_FIFO_PACKETS].bits / 8.0 + FIFO_IP_HEADER;
  return bytes;
}

/* ---- fq_codel, packet by packet (flowmodel.h: "With fq and packets") ---- */

/* CoDel's "at most one MTU queued" under fq_codel, bytes: a full frame,
 * asked of the whole scheduler's backlog (Linux's fq_codel, the lab's mtu) */
#define FQ_CODEL_MTU 1514.0

/* The fq state, made at the first step that needs it. */
static ModelFq *
fq_state (Model *m)
{
  if (m->fqp != NULL)
    return m->fqp;
  ModelFq *fq = calloc (1, sizeof *fq);
  if (fq == NULL)
    abort ();
  for (int32_t k = 0; k <= MODEL_FQ_LIMIT; k++)
    fq->link[k] = k < MODEL_FQ_LIMIT ? k + 1 : -1;
  fq->free_head = 0;
  for (size_t i = 0; i <= MODEL_MAX_FLOWS; i++)
    fq->q[i].head = fq->q[i].tail = fq->q[i].next = -1;
  fq->new_head = fq->new_tail = fq->old_head = fq->old_tail = -1;
  m->fqp = fq;
  return fq;
}

/* The queue of the packets of @flow (m->n: the cross traffic's). */
static size_t
fq_index (const Model *m, uint32_t flow)
{
  return flow < m->n ? flow : MODEL_MAX_FLOWS;
}

/* Packet @p's bytes on the wire: its payload and, with wire_headers, its
 * headers (a TCP segment's, a cross datagram's). */
static double
packet_wire_bytes (const Model *m, const ModelPacket *p)
{
  double header = !m->wire_headers ? 0.0 : p->flow < m->n ? MODEL_WIRE_HEADER
                                                          : MODEL_UDP_WIRE_HEADER;
  return p->bits / 8.0 + header;
}

static void
fq_list_append (ModelFq *fq, int32_t *head, int32_t *tail, int32_t qi, uint8_t which)
{
  fq->q[qi].next = -1;
  fq->q[qi].list = which;
  if (*tail >= 0)
    fq->q[*tail].next = qi;
  else
    *head = qi;
  *tail = qi;
}

static void
fq_list_pop (ModelFq *fq, int32_t *head, int32_t *tail)
{
  int32_t qi = *head;
  *head = fq->q[qi].next;
  if (*head < 0)
    *tail = -1;
  fq->q[qi].next = -1;
  fq->q[qi].list = MODEL_FQ_NONE;
}

/* Takes the head packet of the single FIFO, or with fq of queue @qi, into
 * *@p (its flow's bits leave the queue); false if there is none. */
static bool
take_head (Model *m, size_t qi, ModelPacket *p)
{
  if (!m->fq) {
    if (m->fifo_n == 0)
      return false;
    *p = m->fifo[m->fifo_head];
    m->fifo_head = (m->fifo_head + 1) % MODEL_FIFO_PACKETS;
    m->fifo_n--;
  } else {
    ModelFq *fq = m->fqp;
    ModelFqQueue *q = &fq->q[qi];
    int32_t k = q->head;
    if (k < 0)
      return false;
    *p = fq->pkt[k];
    q->head = fq->link[k];
    if (q->head < 0)
      q->tail = -1;
    q->n--;
    double wire = packet_wire_bytes (m, p);
    q->bytes -= wire;
    fq->backlog_bytes -= wire;
    fq->backlog_pkts--;
    fq->link[k] = fq->free_head;
    fq->free_head = k;
  }
  if (p->flow < m->n)
    m->f[p->flow].queued_bits -= p->bits;
  else
    m->cross_queued_bits -= p->bits;
  return true;
}

/* fq_codel's limits: beyond them, the head of the queue holding the most
 * bytes is dropped (no CoDel verdict), until they hold. */
static void
fq_limit (Model *m)
{
  ModelFq *fq = m->fqp;
  uint32_t limit = m->fq_limit_packets > 0 && m->fq_limit_packets < MODEL_FQ_LIMIT
                   ? m->fq_limit_packets : MODEL_FQ_LIMIT;
  while (fq->backlog_pkts > limit || fq->backlog_bytes > MODEL_FQ_MEMORY) {
    size_t fat = MODEL_MAX_FLOWS;
    for (size_t i = 0; i < m->n; i++)
      if (fq->q[i].bytes > fq->q[fat].bytes)
        fat = i;
    ModelPacket p;
    if (!take_head (m, fat, &p))
      return;
    fifo_drop (m, &p);
  }
}

/* Queues packet @p in its flow's queue; a queue that was in neither list
 * joins the new flows' with a quantum of credit. */
static void
fq_enqueue (Model *m, const ModelPacket *p)
{
  ModelFq *fq = m->fqp;
  size_t qi = fq_index (m, p->flow);
  ModelFqQueue *q = &fq->q[qi];
  int32_t k = fq->free_head;               /* the pool holds one more than the limit */
  fq->free_head = fq->link[k];
  fq->pkt[k] = *p;
  fq->link[k] = -1;
  if (q->tail >= 0)
    fq->link[q->tail] = k;
  else
    q->head = k;
  q->tail = k;
  q->n++;
  double wire = packet_wire_bytes (m, p);
  q->bytes += wire;
  fq->backlog_bytes += wire;
  fq->backlog_pkts++;
  if (p->flow < m->n)
    m->f[p->flow].queued_bits += p->bits;
  else
    m->cross_queued_bits += p->bits;
  if (q->list == MODEL_FQ_NONE) {
    fq_list_append (fq, &fq->new_head, &fq->new_tail, (int32_t) qi, MODEL_FQ_NEW);
    q->deficit = MODEL_FQ_QUANTUM;
  }
  fq_limit (m);
}

/* Queues @bits of flow @i (m->n: the cross traffic), a packet once a
 * whole segment arrived; beyond the buffer the packet is dropped (fq:
 * fq_codel's limits). */
static void
fifo_arrive (Model *m, size_t i, double bits)
{
  /* a source that writes less than a segment at a time, with the sender
   * waiting for it (source_gaps), sends each write as a segment */
  double pkt = 8.0 * MODEL_MSS;
  if (i < m->n && m->source_gaps && m->f[i].source_packet > 0 && m->f[i].source_bound)
    pkt = 8.0 * m->f[i].source_packet;
  if (i == m->n && m->wire_headers)
    pkt = 8.0 * MODEL_UDP_PAYLOAD;
  m->packet_credit[i] += bits;
  while (m->packet_credit[i] >= pkt) {
    m->packet_credit[i] -= pkt;
    ModelPacket p = { .flow = (uint32_t) i, .bits = pkt, .enq_s = m->now_s };
    if (m->fq) {
      fq_enqueue (m, &p);
      continue;
    }
    bool full = m->fifo_limit_bytes > 0.0
                ? fifo_ip_bytes (m) + pkt / 8.0 + FIFO_IP_HEADER > m->fifo_limit_bytes
                : model_queued_bits (m) + pkt > m->max_queue_s * m->capacity_bps;
    if (m->fifo_n >= MODEL_FIFO_PACKETS || full) {
      fifo_drop (m, &p);
      continue;
    }
    m->fifo[(m->fifo_head + m->fifo_n) % MODEL_FIFO_PACKETS] = p;
    m->fifo_n++;
    if (i < m->n)
      m->f[i].queued_bits += pkt;
    else
      m->cross_queued_bits += pkt;
  }
}

/* Takes the head packet of the single FIFO (with fq: of queue @qi) at @now
 * into *@p; returns whether CoDel @cd finds its sojourn above target for
 * an interval (RFC 8289's dodequeue; no verdict while at most one MTU
 * stays queued: the FIFO's bits as the wire counts them against a
 * segment, fq_codel's whole backlog against a frame). */
static bool
queue_pop (Model *m, ModelCodel *cd, size_t qi, double now, ModelPacket *p, bool *ok_to_drop)
{
  *ok_to_drop = false;
  if (!take_head (m, qi, p)) {
    cd->first_above_s = 0.0;
    return false;
  }
  double sojourn = now - p->enq_s;
  if (m->aqm_target_s <= 0.0 || sojourn < m->aqm_target_s
      || (m->fq ? m->fqp->backlog_bytes <= FQ_CODEL_MTU
                : model_queued_bits (m) <= 8.0 * MODEL_MSS))
    cd->first_above_s = 0.0;
  else if (cd->first_above_s == 0.0)
    cd->first_above_s = now + m->aqm_interval_s;
  else if (now >= cd->first_above_s)
    *ok_to_drop = true;
  return true;
}

/* CoDel @cd's dequeue at @now (RFC 8289) from the single FIFO (with fq:
 * queue @qi): the packet to send next in *@p, or false if none is left. */
static bool
codel_dequeue (Model *m, ModelCodel *cd, size_t qi, double now, ModelPacket *p)
{
  double interval = m->aqm_interval_s;
  bool ok;
  if (!queue_pop (m, cd, qi, now, p, &ok)) {
    cd->dropping = false;
    return false;
  }
  if (cd->dropping) {
    if (!ok) {
      cd->dropping = false;
      return true;
    }
    while (cd->dropping && now >= cd->drop_next_s) {
      fifo_drop (m, p);
      cd->count++;
      if (!queue_pop (m, cd, qi, now, p, &ok)) {
        cd->dropping = false;
        return false;
      }
      if (!ok)
        cd->dropping = false;
      else
        cd->drop_next_s += interval / sqrt ((double) cd->count);
    }
    return true;
  }
  if (!ok)
    return true;
  fifo_drop (m, p);
  bool more = queue_pop (m, cd, qi, now, p, &ok);
  cd->dropping = true;
  /* a drop state entered soon after the last resumes its rate */
  uint32_t delta = cd->count - cd->lastcount;
  cd->count = delta > 1 && now - cd->drop_next_s < 16.0 * interval ? delta : 1;
  cd->drop_next_s = now + interval / sqrt ((double) cd->count);
  cd->lastcount = cd->count;
  return more;
}

/* fq_codel's dequeue at @now (RFC 8290): the new flows' list first, then
 * the old; a queue that spent its credit gets a quantum more at the old
 * list's end; CoDel on the queue served; an emptied new queue goes once
 * through the old list (unless it is empty), an emptied old one leaves.
 * The packet to send next in *@p, or false if none is left. */
static bool
fq_dequeue (Model *m, double now, ModelPacket *p)
{
  ModelFq *fq = m->fqp;
  for (;;) {
    bool from_new = fq->new_head >= 0;
    int32_t *head = from_new ? &fq->new_head : &fq->old_head;
    int32_t *tail = from_new ? &fq->new_tail : &fq->old_tail;
    if (*head < 0)
      return false;
    int32_t qi = *head;
    ModelFqQueue *q = &fq->q[qi];
    if (q->deficit <= 0.0) {
      q->deficit += MODEL_FQ_QUANTUM;
      fq_list_pop (fq, head, tail);
      fq_list_append (fq, &fq->old_head, &fq->old_tail, qi, MODEL_FQ_OLD);
      continue;
    }
    if (!codel_dequeue (m, &q->codel, (size_t) qi, now, p)) {
      fq_list_pop (fq, head, tail);
      if (from_new && fq->old_head >= 0)
        fq_list_append (fq, &fq->old_head, &fq->old_tail, qi, MODEL_FQ_OLD);
      continue;
    }
    q->deficit -= packet_wire_bytes (m, p);
    return true;
  }
}

/* Packets waiting at the bottleneck (not the one in service). */
static bool
packets_queued (const Model *m)
{
  return m->fq ? m->fqp->backlog_pkts > 0 : m->fifo_n > 0;
}

/* The packet the link sends next at @now, into *@p; false if none. */
static bool
next_packet (Model *m, double now, ModelPacket *p)
{
  return m->fq ? fq_dequeue (m, now, p) : codel_dequeue (m, &m->codel, 0, now, p);
}

/* One step of the single CoDel queue (with fq: of fq_codel): arrivals as
 * packets, then the link sends packet after packet, each from when the one
 * before has left. */
static void
step_packets (Model *m, const bool *cwnd_limited, const double *arriving)
{
  double dt = m->dt_s, c = m->capacity_bps, end = m->now_s + dt;
  double got[MODEL_MAX_FLOWS + 1] = { 0.0 };
  double wait[MODEL_MAX_FLOWS];
  bool waited[MODEL_MAX_FLOWS] = { false }, arrived[MODEL_MAX_FLOWS] = { false };
  m->dropped_bits = 0.0;
  if (m->fq)
    fq_state (m);
  fifo_arrive (m, m->n, m->cross_bps * dt);
  for (size_t i = 0; i < m->n; i++)
    fifo_arrive (m, i, arriving[i]);
  for (;;) {
    if (m->in_service.bits > 0.0) {
      if (m->link_free_s > end)
        break;
      uint32_t fl = m->in_service.flow;
      if (fl < m->n && m->f[fl].shim_paced && !arrived[fl]) {
        wait[fl] = m->in_service.wait_s;   /* a burst's RTT sample: its first segment's */
        waited[fl] = arrived[fl] = true;
      }
      got[m->in_service.flow] += m->in_service.bits;
      m->in_service.bits = 0.0;
    }
    double start = m->link_free_s > m->now_s ? m->link_free_s : m->now_s;
    ModelPacket p;
    if (!packets_queued (m) || start >= end || !next_packet (m, start, &p))
      break;
    p.wait_s = start - p.enq_s;
    if (p.flow < m->n && !m->f[p.flow].shim_paced) {
      wait[p.flow] = p.wait_s;
      waited[p.flow] = true;
    }
    unsigned bin = (unsigned) ((start - p.enq_s) * 1e3);
    m->sojourn_ms[bin < MODEL_SOJOURN_BINS - 1 ? bin : MODEL_SOJOURN_BINS - 1]++;
    m->in_service = p;
    double wire = !m->wire_headers ? 0.0 : p.flow < m->n ? MODEL_WIRE_HEADER : MODEL_UDP_WIRE_HEADER;
    m->link_free_s = start + (p.bits + 8.0 * wire) / c;
  }
  m->cross_rate_bps = got[m->n] / dt;
  m->queue_s = model_queued_bits (m) / c;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    if (waited[i])
      f->queue_s = wait[i];              /* what its last packet waited */
    receive (m, f, got[i], cwnd_limited[i]);
  }
}

/* Returns a uniform draw in [0, 1) (xorshift64*, seeded by drop_seed). */
static double
draw (Model *m)
{
  if (m->rng == 0)
    m->rng = m->drop_seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  m->rng ^= m->rng >> 12;
  m->rng ^= m->rng << 25;
  m->rng ^= m->rng >> 27;
  return (double) ((m->rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* drop_packets: this step's dropped bits, counted in whole segments; each
 * segment is one flow's loss, drawn in proportion to what each flow (and
 * the cross traffic) brought of @total_in. */
static void
drop_segments (Model *m, const double *arriving, double total_in)
{
  m->drop_credit_bits += m->dropped_bits;
  while (m->drop_credit_bits >= 8.0 * MODEL_MSS) {
    m->drop_credit_bits -= 8.0 * MODEL_MSS;
    double x = draw (m) * total_in;
    for (size_t i = 0; i < m->n; i++) {
      x -= arriving[i];
      if (x < 0.0) {
        lose (m, &m->f[i]);
        break;
      }
    }
  }
}

void
model_step (Model *m)
{
  double dt = m->dt_s, c = m->capacity_bps;
  double q = model_queued_bits (m) / c;
  bool cwnd_limited[MODEL_MAX_FLOWS];
  double arriving[MODEL_MAX_FLOWS];

  /* 0. handshakes: a flow's SYN-ACK crosses the bottleneck b_i/2 after it
   * was added, behind what is queued there then */
  for (size_t i = 0; m->handshake_queue && i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    if (!f->handshake_done && m->now_s - f->added_s >= f->base_rtt_s / 2.0) {
      /* under fq_codel, packet by packet, a new flow's packet goes first */
      double wait = m->fq && m->packets ? 0.0 : model_queued_bits (m) / c;
      if (m->packets && m->link_free_s > m->now_s)
        wait += m->link_free_s - m->now_s;     /* the packet in service */
      f->min_rtt_us = (uint32_t) ((f->base_rtt_s + wait) * 1e6);
      f->handshake_done = true;
    }
  }
  /* 1. senders: what leaves them now, what reaches the bottleneck now */
  double total_in = send (m, cwnd_limited, arriving);
  if (m->fq || (m->packets && (m->aqm_target_s > 0 || m->fifo_limit_bytes > 0.0))) {
    if (m->fq && !m->packets)
      step_fq (m, cwnd_limited, arriving);
    else
      step_packets (m, cwnd_limited, arriving);
    m->step++;
    m->now_s += dt;
    return;
  }

  /* 2. the buffer: drop-tail beyond max_queue_s (as the wire counts it) */
  double queued = model_queued_bits (m);
  double room = m->max_queue_s * c + c * dt - queued;
  double wire_in = m->cross_bps * dt * wire_per_cross_bit (m);
  for (size_t i = 0; i < m->n; i++)
    wire_in += arriving[i] * wire_per_bit (m, &m->f[i]);
  double keep = 1.0;
  m->dropped_bits = 0.0;
  if (wire_in > room) {
    keep = room > 0 ? room / wire_in : 0.0;
    m->dropped_bits = total_in * (1.0 - keep);
  }
  m->cross_queued_bits += m->cross_bps * dt * keep;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    f->queued_bits += arriving[i] * keep;
    if (keep < 1.0 && arriving[i] > 0 && !m->drop_packets)
      lose (m, f);
  }
  if (m->drop_packets && keep < 1.0)
    drop_segments (m, arriving, total_in);

  /* 3. the AQM, if any: losses while the delay stays above its target */
  if (m->aqm_target_s > 0) {
    if (q > m->aqm_target_s) {
      if (m->above_since_s < 0)
        m->above_since_s = m->now_s;
      else if (m->now_s - m->above_since_s >= m->aqm_interval_s) {
        for (size_t i = 0; i < m->n; i++)
          if (m->f[i].queued_bits > 0)
            lose (m, &m->f[i]);
        m->above_since_s = m->now_s;    /* next drop one interval later */
      }
    } else {
      m->above_since_s = -1.0;
    }
  }

  /* 4. service: C·dt bits of the wire leave, FIFO shares */
  queued = model_queued_bits (m);
  double serve = c * dt, frac = queued > serve ? serve / queued : 1.0;
  double cross_out = m->cross_queued_bits * frac;
  m->cross_queued_bits -= cross_out;
  m->cross_rate_bps = cross_out / dt;
  m->queue_s = (queued - queued * frac) / c;
  for (size_t i = 0; i < m->n; i++) {
    ModelFlow *f = &m->f[i];
    double out = f->queued_bits * frac;
    f->queued_bits -= out;
    f->queue_s = m->queue_s;
    receive (m, f, out, cwnd_limited[i]);
  }
  m->step++;
  m->now_s += dt;
}

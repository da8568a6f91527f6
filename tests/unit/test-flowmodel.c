/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-flowmodel.c — the fluid model's fq_codel bottleneck packet by packet
 * (flowmodel.h, "With fq and packets") against what RFC 8290 and RFC 8289
 * say the algorithm does: a sparse flow's packet goes before the standing
 * queues; flows that keep their queues full split the link equally in
 * bytes, whatever their packets' sizes; beyond the limit the fattest queue
 * drops; CoDel's drops in one queue come interval/√count apart.  Each case
 * also runs the single FIFO where that shows the case can fail.
 *
 * The flows that keep a queue full are senders that do not back off (a
 * loss leaves them their whole window, md_keep 1, and no SYN window holds
 * them): their offered rate is their source's, so what the bottleneck does
 * is all that sets what each gets.
 */
#include <glib.h>
#include <math.h>
#include "flowmodel.h"

#define STEP_S 0.001

/* A link of @capacity_bps, fq_codel packet by packet (@fq) or the single
 * FIFO with CoDel, headers on the wire, CoDel's target @target_s (0: none). */
static void
link_init (Model *m, double capacity_bps, bool fq, double target_s)
{
  model_init (m, capacity_bps, 0.150, STEP_S);
  m->fq = fq;
  m->packets = true;
  m->wire_headers = true;
  m->aqm_target_s = target_s;
}

/* A sender at @source_bps that never backs off, base RTT 20 ms. */
static size_t
add_bulk (Model *m, double source_bps)
{
  size_t i = model_add (m, 0.020);
  m->f[i].source_bps = source_bps;
  m->f[i].md_keep = 1.0;
  m->f[i].syn_window_bytes = 1e9;
  return i;
}

static void
run_until (Model *m, double t_s)
{
  while (m->now_s < t_s - STEP_S / 2)
    model_step (m);
}

/* A full frame's transmission at @capacity_bps, s: the packet in service. */
static double
frame_s (double capacity_bps)
{
  return 8.0 * (MODEL_MSS + MODEL_WIRE_HEADER) / capacity_bps;
}

/* The largest wait of flow @s's packets between @from_s and @to_s (what
 * its last packet waited, read after every step). */
static double
largest_wait (Model *m, size_t s, double from_s, double to_s)
{
  run_until (m, from_s);
  double most = 0.0;
  uint64_t bytes = m->f[s].bytes;
  while (m->now_s < to_s - STEP_S / 2) {
    model_step (m);
    if (m->f[s].queue_s > most)
      most = m->f[s].queue_s;
  }
  g_assert_cmpuint (m->f[s].bytes, >, bytes);   /* it was served meanwhile */
  return most;
}

/* Two bulk flows keep their queues standing at 10 Mbit/s (16 Mbit/s
 * offered); a sparse flow (one 200-byte write every 40 ms) joins the new
 * flows' list at each packet and waits for the packet in service only —
 * under the single FIFO it waits behind the standing queue. */
static void
test_fq_sparse_first (void)
{
  const double c = 10e6;
  double wait[2], bulk_wait = 0.0;
  for (int fq = 0; fq < 2; fq++) {
    Model m;
    link_init (&m, c, fq, 0.005);
    m.source_gaps = true;
    add_bulk (&m, 8e6);
    add_bulk (&m, 8e6);
    size_t s = model_add (&m, 0.020);
    m.f[s].source_bps = 40e3;
    m.f[s].source_packet = 200;
    wait[fq] = largest_wait (&m, s, 2.0, 10.0);
    if (fq)
      bulk_wait = fmin (m.f[0].queue_s, m.f[1].queue_s);
    g_test_message ("%s: the sparse flow's largest wait %.2f ms; the bulk flows' last %.1f / "
                    "%.1f ms", fq ? "fq_codel" : "FIFO", 1e3 * wait[fq], 1e3 * m.f[0].queue_s,
                    1e3 * m.f[1].queue_s);
    model_free (&m);
  }
  g_assert_cmpfloat (bulk_wait, >, 0.005);            /* their queues stand above the target */
  g_assert_cmpfloat (wait[1], <=, frame_s (c) + 1e-9);
  g_assert_cmpfloat (wait[0], >, 0.005);
}

/* A TCP sender (1514-byte frames) and the cross traffic (1042-byte
 * datagrams) each offer 8 Mbit/s to a 10-Mbit/s link: the round robin's
 * credit counts bytes, so each gets half of the wire, within a frame per
 * round — under the single FIFO each gets what it brought, so a sender
 * offering 8 against 4 gets twice the other's share. */
static void
test_fq_equal_split (void)
{
  const double c = 10e6;
  const double tcp_frame = MODEL_MSS + MODEL_WIRE_HEADER;
  const double udp_frame = MODEL_UDP_PAYLOAD + MODEL_UDP_WIRE_HEADER;
  double share[2];
  for (int fq = 0; fq < 2; fq++) {
    Model m;
    link_init (&m, c, fq, 0.005);
    m.cross_bps = fq ? 8e6 : 4e6;
    size_t a = add_bulk (&m, 8e6);
    run_until (&m, 3.0);
    uint64_t bytes = m.f[a].bytes;
    double cross = 0.0;
    while (m.now_s < 13.0 - STEP_S / 2) {
      model_step (&m);
      cross += m.cross_rate_bps * STEP_S / 8.0;
    }
    double tcp_wire = (double) (m.f[a].bytes - bytes) * tcp_frame / MODEL_MSS * 8.0 / 10.0;
    double udp_wire = cross * udp_frame / MODEL_UDP_PAYLOAD * 8.0 / 10.0;
    share[fq] = tcp_wire / (tcp_wire + udp_wire);
    g_test_message ("%s: on the wire the TCP sender %.3f, the cross traffic %.3f Mbit/s (the "
                    "sender's share %.3f)", fq ? "fq_codel" : "FIFO", tcp_wire / 1e6,
                    udp_wire / 1e6, share[fq]);
    g_assert_cmpfloat (tcp_wire + udp_wire, >=, 0.99 * c);      /* the link kept busy */
    model_free (&m);
  }
  g_assert_cmpfloat (fabs (share[1] - 0.5), <=, 0.01);
  g_assert_cmpfloat (share[0], >=, 0.6);
}

/* Beyond fq_codel's packet limit the head of the fattest queue drops: a
 * flow above its fair share (8 of 10 Mbit/s) fills its queue to the limit
 * (its window then holds it near there: at the limit in most steps), a
 * flow below it (3 Mbit/s) keeps an empty one and loses nothing, though
 * its packets arrive at a full scheduler. */
static void
test_fq_fattest_drops (void)
{
  Model m;
  link_init (&m, 10e6, true, 0.0);
  m.fq_limit_packets = 50;
  size_t a = add_bulk (&m, 8e6);
  size_t b = add_bulk (&m, 3e6);
  run_until (&m, 2.0);
  uint64_t bytes = m.f[b].bytes;
  uint32_t full = 0;
  for (unsigned k = 0; k < 8000; k++) {
    model_step (&m);
    g_assert_cmpuint (m.fqp->backlog_pkts, <=, 50);
    if (m.fqp->backlog_pkts >= 49)
      full++;
  }
  double rate_b = (double) (m.f[b].bytes - bytes) * 8.0 / 8.0;
  g_test_message ("drops: the fat flow %u, the thin one %u; the scheduler near its limit in %u "
                  "of 8000 steps; the thin flow %.3f Mbit/s", m.f[a].drops, m.f[b].drops, full,
                  rate_b / 1e6);
  g_assert_cmpuint (m.f[a].drops, >, 0);
  g_assert_cmpuint (m.f[b].drops, ==, 0);
  g_assert_cmpuint (full, >=, 4000);
  g_assert_cmpfloat (rate_b, >=, 0.99 * 3e6);
  model_free (&m);
}

/* CoDel in a queue that stays above its target: once in the drop state,
 * the k-th drop after the first comes at Σ_{j<k} interval/√j (RFC 8289's
 * control law), each at the first dequeue from then — within a frame's
 * transmission, read at the step's resolution.  The flow offers twice the
 * link, so its sojourn never falls below the target and the count grows
 * by one a drop. */
static void
test_fq_codel_spacing (void)
{
  const double c = 10e6;
  Model m;
  link_init (&m, c, true, 0.005);
  size_t a = add_bulk (&m, 20e6);
  double at[24];
  unsigned n = 0;
  uint32_t drops = 0;
  while (n < G_N_ELEMENTS (at) && m.now_s < 20.0) {
    model_step (&m);
    g_assert_cmpuint (m.f[a].drops - drops, <=, 1);
    if (m.f[a].drops > drops)
      at[n++] = m.now_s;
    drops = m.f[a].drops;
  }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (at));
  double due = at[0];
  for (unsigned k = 1; k < n; k++) {
    due += m.aqm_interval_s / sqrt ((double) k);
    g_test_message ("drop %u at %.4f s, the control law's %.4f s", k + 1, at[k], due);
    g_assert_cmpfloat (fabs (at[k] - due), <=, frame_s (c) + STEP_S);
  }
  g_assert_true (m.fqp->q[a].codel.dropping);
  model_free (&m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/flowmodel/fq-packets/sparse-first", test_fq_sparse_first);
  g_test_add_func ("/flowmodel/fq-packets/equal-split", test_fq_equal_split);
  g_test_add_func ("/flowmodel/fq-packets/fattest-drops", test_fq_fattest_drops);
  g_test_add_func ("/flowmodel/fq-packets/codel-spacing", test_fq_codel_spacing);
  return g_test_run ();
}

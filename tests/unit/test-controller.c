/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-controller.c — the whole BWSS with the paper's σ loop (Sec. V-C) on
 * a simulated clock against the fluid flow model (sim.h): the paper's
 * experiments as traces (Fig. 5a weights, 5b capacity drop, 5c
 * redistribution, Fig. 7 streaming), flow start/stop and RTT unfairness,
 * plus the controller's API errors.  The delay loop's traces are in
 * test-capacity.c.
 */
#include <malloc.h>
#include <math.h>
#include <string.h>
#include <glib.h>
#include <bwss/control.h>
#include "sim.h"

#define MS 1000ull
#define S  1000000ull

/* The paper's loop: every trace of this file runs with it (the delay
 * loop's are in test-capacity.c). */
static BwssParams paper;

/* A simulated link of @capacity, a single FIFO that carries the segments'
 * headers besides their payload (Model.wire_headers: 66 bytes a TCP
 * segment, 42 a 1000-byte UDP datagram), as a real link does. */
static void
link_init (Sim *s, double capacity, SimEvent event)
{
  sim_init (s, capacity, &paper, event);
  s->m.wire_headers = true;
}

#define mean sim_mean
#define mean_aggregate sim_mean_aggregate

/* ---- Fig. 5(a): weights 1:2:3, no minimum ---- */
static void
weights (double capacity, double tolerance_rel, double tolerance_abs)
{
  Sim s;
  link_init (&s, capacity, NULL);
  for (int w = 1; w <= 3; w++)
    sim_add (&s, 0.040, 0, 0, w, true);
  sim_run (&s, 60);
  sim_log (&s, 5);
  double agg = mean_aggregate (&s, 30, 60);
  for (size_t i = 0; i < 3; i++) {
    double want = (i + 1) / 6.0, share = mean (&s, i, 30, 60) / agg;
    g_test_message ("flow %zu share %.3f (want %.3f)", i, share, want);
    g_assert_cmpfloat (fabs (share - want), <=, tolerance_rel * want + tolerance_abs);
  }
  g_assert_cmpfloat (agg, >=, 0.95 * capacity);
  sim_free (&s);
}

/* With room for ~30 segments per RTT the shares are within the slack. */
static void
test_weights (void)
{
  weights (9.6e6, 0.05, 0.0);
}

/* The paper's 960 kbit/s at 40 ms: the whole window is ~15 segments
 * (3 of path, 12 of buffer), so a share can be off by one segment: the
 * smallest flow (1/6) sits at 3 segments where 2.5 would be exact. */
static void
test_weights_small_link (void)
{
  weights (960e3, 0.0, 0.03);
}

/* RTT unfairness undone: 20/60/180 ms, equal weights. */
static void
test_rtt_unfairness (void)
{
  Sim s;
  link_init (&s, 960e3, NULL);
  double rtts[] = { 0.020, 0.060, 0.180 };
  for (int i = 0; i < 3; i++)
    sim_add (&s, rtts[i], 0, 0, 1, true);
  sim_run (&s, 90);
  double agg = mean_aggregate (&s, 60, 90);
  for (size_t i = 0; i < 3; i++) {
    double share = mean (&s, i, 60, 90) / agg;
    g_test_message ("rtt %.0f ms share %.3f", rtts[i] * 1e3, share);
    g_assert_cmpfloat (fabs (share - 1 / 3.0), <=, 0.05);
  }
  g_assert_cmpfloat (agg, >=, 0.93 * 960e3);
  sim_free (&s);
}

/* ---- Fig. 5(b): weights 1:2, 320 kbit/s of UDP from 40 s to 80 s ---- */
static void
udp_40_80 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 40 && sec < 80) ? 320e3 : 0;
}

static void
test_capacity_drop (void)
{
  Sim s;
  link_init (&s, 960e3, udp_40_80);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 2, true);
  sim_run (&s, 120);
  sim_log (&s, 4);
  /* during the drop: the 1:2 split holds on what is left */
  double a = mean (&s, 0, 50, 80), b = mean (&s, 1, 50, 80);
  g_test_message ("during UDP: %.0f / %.0f (ratio %.2f)", a, b, b / a);
  g_assert_cmpfloat (b / a, >=, 1.7);
  g_assert_cmpfloat (b / a, <=, 2.3);
  g_assert_cmpfloat (a + b, >=, 0.9 * 640e3);
  /* after it: full link again, within 10 s, still 1:2 */
  a = mean (&s, 0, 90, 120);
  b = mean (&s, 1, 90, 120);
  g_test_message ("after UDP: %.0f / %.0f (ratio %.2f)", a, b, b / a);
  g_assert_cmpfloat (a + b, >=, 0.93 * 960e3);
  g_assert_cmpfloat (b / a, >=, 1.7);
  g_assert_cmpfloat (b / a, <=, 2.3);
  sim_free (&s);
}

/* ---- Fig. 5(c): the video's own path congested from 40 s to 100 s ---- */
static void
video_path_40_100 (Sim *s, unsigned sec)
{
  s->m.f[0].path_limit_bps = (sec >= 40 && sec < 100) ? 160e3 : 0;
}

static void
test_redistribution (void)
{
  Sim s;
  link_init (&s, 960e3, video_path_40_100);
  size_t v = sim_add (&s, 0.070, 10, 496e3, 0, true);
  s.m.f[v].source_bps = 496e3;                  /* a paced 496 kbit/s source */
  sim_add (&s, 0.070, 0, 0, 1, true);
  sim_run (&s, 130);
  sim_log (&s, 2);
  g_assert_cmpfloat (mean (&s, 0, 20, 40), >=, 0.95 * 496e3);
  /* congested video: its unused share goes to the bulk flow */
  double bulk = mean (&s, 1, 55, 100);
  g_test_message ("bulk during video congestion: %.0f", bulk);
  g_assert_cmpfloat (bulk, >=, 0.85 * (960e3 - 160e3));
  /* afterwards the video gets its minimum back */
  g_assert_cmpfloat (mean (&s, 0, 110, 130), >=, 0.95 * 496e3);
  sim_free (&s);
}

/* ---- Fig. 7: streaming with two bulk flows and 320 kbit/s of UDP ---- */
static void
udp_30_60 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 30 && sec < 60) ? 320e3 : 0;
}

static void
streaming (bool controlled, unsigned *below)
{
  Sim s;
  link_init (&s, 960e3, udp_30_60);
  size_t v = sim_add (&s, 0.060, 10, 496e3, 0, controlled);
  s.m.f[v].source_bps = 496e3;
  sim_add (&s, 0.040, 0, 0, 1, controlled);
  sim_add (&s, 0.050, 0, 0, 1, controlled);
  sim_run (&s, 90);
  if (controlled)
    sim_log (&s, 2);
  *below = sim_seconds_below (&s, v, 0.9 * 496e3, 5, 90);
  sim_free (&s);
}

static void
test_streaming (void)
{
  unsigned tcp_below, bwss_below;
  streaming (false, &tcp_below);
  streaming (true, &bwss_below);
  g_test_message ("seconds with video < 90%% of 496k: tcp %u, bwss %u (of 85)",
                  tcp_below, bwss_below);
  /* the model reproduces the problem (plain TCP starves the video under
   * cross traffic) and BWSS removes it */
  g_assert_cmpuint (tcp_below, >=, 20);
  /* the onset of the cross traffic costs the paper's loop about one settle
   * interval (two FCS cycles at 210 ms RTT with a full queue, ~4 s) plus the
   * time for U to show the drop, and the drops of the full buffer then halve
   * the video's congestion window (the model has had drop-tail losses since
   * the delay loop came: 9 seconds here on a link of payload only, 8 in the
   * lossless model before); with the headers on the wire the link leaves
   * ~94 kbit/s of payload beside the video and the UDP, not 144, and the
   * video is short in 17 s */
  g_assert_cmpuint (bwss_below, <=, 18);
}

/* ---- flow start and stop ---- */
static void
third_flow_30_60 (Sim *s, unsigned sec)
{
  if (sec == 30)
    sim_add (s, 0.040, 0, 0, 2, true);
  if (sec == 60)
    sim_stop_flow (s, 2);
}

static void
test_flow_start_stop (void)
{
  Sim s;
  link_init (&s, 960e3, third_flow_30_60);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_add (&s, 0.040, 0, 0, 1, true);
  sim_run (&s, 90);
  sim_log (&s, 3);
  double agg = mean_aggregate (&s, 45, 60);
  g_assert_cmpfloat (agg, >=, 0.93 * 960e3);
  g_assert_cmpfloat (fabs (mean (&s, 2, 45, 60) / agg - 0.5), <=, 0.05);
  g_assert_cmpfloat (fabs (mean (&s, 0, 45, 60) / agg - 0.25), <=, 0.05);
  /* after the stop the two remaining flows split the link again */
  double a = mean (&s, 0, 75, 90), b = mean (&s, 1, 75, 90);
  g_assert_cmpfloat (a + b, >=, 0.93 * 960e3);
  g_assert_cmpfloat (fabs (a / (a + b) - 0.5), <=, 0.05);
  sim_free (&s);
}

/* ---- API errors ---- */
static void
test_api_errors (void)
{
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, NULL), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs ok = { 0, 0, 1 }, bad = { 0, -1, 1 }, nan_w = { 0, 0, NAN };
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &bad, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &nan_w, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, NULL, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &ok, 0), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &ok, 0), ==, BWSS_EEXIST);
  g_assert_cmpint (bwss_controller_set_prefs (c, 1, &bad, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_set_prefs (c, 2, &ok, 0), ==, BWSS_ENOENT);
  g_assert_cmpint (bwss_controller_set_group (c, 2, 7, 0), ==, BWSS_ENOENT);
  g_assert_cmpint (bwss_controller_set_group (NULL, 1, 7, 0), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_controller_set_group (c, 1, 7, 0), ==, 0);
  g_assert_cmpint (bwss_controller_set_group (c, 1, 0, 0), ==, 0);
  BwssSample smp = { 0 };
  g_assert_cmpint (bwss_controller_observe (c, 2, &smp), ==, BWSS_ENOENT);
  BwssFlowState st;
  g_assert_cmpint (bwss_controller_flow_state (c, 2, &st), ==, BWSS_ENOENT);
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &st), ==, 0);
  g_assert_cmpfloat (st.prefs.weight, ==, 1);   /* the bad update changed nothing */
  g_assert_cmpint (bwss_controller_remove_flow (c, 1, 0), ==, 0);
  g_assert_cmpint (bwss_controller_remove_flow (c, 1, 0), ==, BWSS_ENOENT);
  bwss_controller_free (c);
}

/* The flow's segment is the sample's, filled as bwssd fills it: the
 * advertised MSS over the estimate from small first segments (loopback),
 * the estimate alone when the advertised MSS is unknown. */
static void
test_sender_segment (void)
{
  BwssController *c;
  BwssPrefs ok = { 0, 0, 1 };
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &ok, 0), ==, 0);
  BwssFlowState st;
  BwssSample lo = { .now_us = 10000, .bytes_received = 3072, .rtt_us = 50,
                    .mss = bwss_sender_segment (1536, 65483) };
  g_assert_cmpint (bwss_controller_observe (c, 1, &lo), ==, 0);
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &st), ==, 0);
  g_assert_cmpuint (st.mss, ==, 65483);
  BwssSample eth = { .now_us = 20000, .bytes_received = 6144, .rtt_us = 50,
                     .mss = bwss_sender_segment (1448, 0) };
  g_assert_cmpint (bwss_controller_observe (c, 1, &eth), ==, 0);
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &st), ==, 0);
  g_assert_cmpuint (st.mss, ==, 1448);
  bwss_controller_free (c);
}

/* ---- measuring: a connection at rest is measured less often ---- */

/* Ticks @c every 10 ms from *@now for @ms, measuring, as the domain does,
 * only the flows due by each tick; flow i's counter grows by @grow[i]
 * bytes a tick.  Counts samples per flow in @taken[] and the most flows
 * due in one tick in *@peak. */
static void
run_measured (BwssController *c, uint64_t *now, unsigned ms, size_t n, const uint64_t *grow,
              uint64_t *bytes, unsigned *taken, unsigned *peak)
{
  for (unsigned t = 0; t < ms; t += 10) {
    *now += 10000;
    unsigned due = 0;
    for (size_t i = 0; i < n; i++) {
      bytes[i] += grow[i];
      if (!bwss_controller_due (c, i + 1, *now))
        continue;
      BwssSample smp = { .now_us = *now, .bytes_received = bytes[i], .rtt_us = 20000,
                         .min_rtt_us = 20000, .mss = 1448 };
      g_assert_cmpint (bwss_controller_observe (c, i + 1, &smp), ==, 0);
      taken[i]++;
      due++;
    }
    if (peak && due > *peak)
      *peak = due;
    bwss_controller_tick (c, *now);
  }
}

static void
test_measure_quiet (void)
{
  enum { N = 200 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs p = { 0, 0, 1 };
  for (size_t i = 0; i < N; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, i + 1, &p, 0), ==, 0);
  g_assert_cmpuint (bwss_controller_next_measure (c, N + 1), ==, 0);   /* unknown */
  uint64_t now = 0, grow[N], bytes[N] = { 0 };
  unsigned taken[N] = { 0 }, peak = 0;
  for (size_t i = 0; i < N; i++)
    grow[i] = 2000;                      /* 1.6 Mbit/s each */
  /* moving data: every flow at every tick */
  run_measured (c, &now, 2000, N, grow, bytes, taken, NULL);
  for (size_t i = 0; i < N; i++) {
    g_assert_cmpuint (taken[i], ==, 200);
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), ==, 0);
  }
  /* flow 1 keeps moving, the others stop: for a second they are still
   * measured at every tick (a stall of a transfer, not a rest) */
  for (size_t i = 1; i < N; i++)
    grow[i] = 0;
  memset (taken, 0, sizeof taken);
  run_measured (c, &now, 990, N, grow, bytes, taken, NULL);
  for (size_t i = 0; i < N; i++)
    g_assert_cmpuint (taken[i], ==, 99);
  /* then at rest: gaps of 20 ms growing to 160; flow 1 still every tick */
  memset (taken, 0, sizeof taken);
  run_measured (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_assert_cmpuint (taken[0], ==, 100);
  for (size_t i = 1; i < N; i++) {
    g_assert_cmpuint (taken[i], >=, 1000 / 160);
    g_assert_cmpuint (taken[i], <=, 1 + 1000 / 10 / 2);
  }
  /* a rest of 8 s: a sample every 160 ms (80 to 240 while the gap grows);
   * the flows spread over the 16 ticks of a gap, not all in one */
  memset (taken, 0, sizeof taken);
  run_measured (c, &now, 8000, N, grow, bytes, taken, &peak);
  for (size_t i = 1; i < N; i++) {
    g_assert_cmpuint (taken[i], <=, 8000 / 80 + 1);
    g_assert_cmpuint (taken[i], >=, 8000 / 250);
  }
  g_assert_cmpuint (peak, <=, N / 6);
  g_test_message ("200 flows, 199 at rest: %u samples of flow 2 in 8 s (800 every tick), "
                  "at most %u flows due in a tick", taken[1], peak);
  /* bytes again: due at the next tick and every tick after it */
  grow[1] = 2000;
  uint64_t next = bwss_controller_next_measure (c, 2);
  g_assert_cmpuint (next, >, now);
  memset (taken, 0, sizeof taken);
  run_measured (c, &now, 250, N, grow, bytes, taken, NULL);
  g_assert_cmpuint (bwss_controller_next_measure (c, 2), ==, 0);
  run_measured (c, &now, 100, N, grow, bytes, taken, NULL);
  g_assert_cmpuint (taken[1], >=, 10);
  /* new preferences (a request that begins): due at once */
  g_assert_cmpuint (bwss_controller_next_measure (c, 3), >, now);
  BwssPrefs video = { 0, 1e6, 1 };
  g_assert_cmpint (bwss_controller_set_prefs (c, 3, &video, now), ==, 0);
  g_assert_cmpuint (bwss_controller_next_measure (c, 3), ==, 0);
  bwss_controller_free (c);
}

/* run_sleeping()'s flows: flow i grows by grow[i] a period (its source
 * holds it) if window_held is NULL or window_held[i] is 0; else by that
 * fraction of what its window carries in the time since the last round at
 * its 20-ms RTT (its window holds it; grow[i] while the window is the
 * kernel's) */
static const double *window_held;

/* Runs @n flows (ids 1..n) for @ms as a caller that sleeps until
 * bwss_controller_next_round() does (bwssd), its period 10 ms, each flow
 * growing by grow[i] bytes per period at a 20-ms RTT (or as its window
 * lets it: window_held): every round finds a
 * flow due, and no flow is measured more than half a period after its due
 * time; bwss_controller_due_flows() lists exactly the flows due, and
 * bwss_controller_moved_flows() every flow observed or whose window or
 * read rate the tick moved.  Returns the rounds, @now at the last; the
 * most flows one measured into @peak (unless NULL). */
static unsigned
run_sleeping (BwssController *c, uint64_t *now, unsigned ms, size_t n, const uint64_t *grow,
              uint64_t *bytes, unsigned *taken, unsigned *peak)
{
  uint64_t end = *now + (uint64_t) ms * 1000, half = 5000, at = *now;
  unsigned rounds = 0;
  g_autofree uint64_t *ids = g_new (uint64_t, n);
  g_autofree BwssFlowState *before = g_new (BwssFlowState, n);
  g_autofree bool *seen = g_new (bool, n);
  for (*now = bwss_controller_next_round (c, *now + 10000); *now < end;
       *now = bwss_controller_next_round (c, *now + 10000)) {
    unsigned due = 0;
    size_t listed = bwss_controller_due_flows (c, *now, ids, n);
    for (size_t i = 0; i < n; i++) {
      BwssFlowState w;
      g_assert_cmpint (bwss_controller_flow_state (c, i + 1, &w), ==, 0);
      if (window_held && window_held[i] > 0.0 && w.window_bytes > 0)
        bytes[i] += (uint64_t) (window_held[i] * w.window_bytes * (double) (*now - at) / 20000.0);
      else
        bytes[i] += grow[i] * ((*now - at) / 10000);
      seen[i] = bwss_controller_due (c, i + 1, *now);
      if (!seen[i])
        continue;
      g_assert_cmpuint (due, <, listed);
      g_assert_cmpuint (ids[due], ==, i + 1);
      uint64_t next = bwss_controller_next_measure (c, i + 1);
      g_assert_true (next == 0 || *now <= next + half);   /* 0: at every round */
      BwssSample smp = { .now_us = *now, .bytes_received = bytes[i], .rtt_us = 20000,
                         .min_rtt_us = 20000, .mss = 1448 };
      g_assert_cmpint (bwss_controller_observe (c, i + 1, &smp), ==, 0);
      taken[i]++;
      due++;
    }
    g_assert_cmpuint (due, >=, 1);
    g_assert_cmpuint (due, ==, listed);
    if (peak && due > *peak)
      *peak = due;
    for (size_t i = 0; i < n; i++)
      g_assert_cmpint (bwss_controller_flow_state (c, i + 1, &before[i]), ==, 0);
    bwss_controller_tick (c, *now);
    size_t moved = bwss_controller_moved_flows (c, ids, n);
    g_assert_cmpuint (moved, <=, n);
    for (size_t i = 0; i < n; i++) {
      BwssFlowState st;
      g_assert_cmpint (bwss_controller_flow_state (c, i + 1, &st), ==, 0);
      seen[i] = seen[i] || st.window_bytes != before[i].window_bytes
          || st.read_rate_bps != before[i].read_rate_bps;
    }
    for (size_t k = 0; k < moved; k++)
      seen[ids[k] - 1] = false;           /* listed */
    for (size_t i = 0; i < n; i++)
      g_assert_false (seen[i]);           /* none measured or moved left out */
    at = *now;
    rounds++;
  }
  *now = at;                             /* the last round run, where the next call goes on */
  return rounds;
}

/* A caller that sleeps until bwss_controller_next_round(), as bwssd does:
 * while flows at a 20-ms RTT move data, a round every estimation period
 * (φ = 40 ms: 25 a second), every flow in each; every period while one of
 * them has a minimum; once every flow is at rest, each round finds a flow
 * due; a flow with new preferences needs a round at once. */
static void
test_next_round (void)
{
  enum { N = 3 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  g_assert_cmpuint (bwss_controller_next_round (c, 12345), ==, 12345);   /* no flow */
  BwssPrefs p = { 0, 0, 1 };
  for (size_t i = 0; i < N; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, i + 1, &p, 0), ==, 0);
  g_assert_cmpuint (bwss_controller_next_round (c, 12345), ==, 12345);   /* new flows */
  uint64_t now = 0, grow[N], bytes[N] = { 0 };
  unsigned taken[N] = { 0 };
  for (size_t i = 0; i < N; i++)
    grow[i] = 2000;
  run_measured (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_assert_cmpuint (bwss_controller_next_round (c, now + 10000), ==, now + 40000);
  memset (taken, 0, sizeof taken);
  unsigned rounds = run_sleeping (c, &now, 2000, N, grow, bytes, taken, NULL);
  g_test_message ("%d flows moving data at a 20-ms RTT: %u rounds in 2 s", N, rounds);
  g_assert_cmpuint (rounds, >=, 49);
  g_assert_cmpuint (rounds, <=, 51);
  for (size_t i = 0; i < N; i++)
    g_assert_cmpuint (taken[i], ==, rounds);
  BwssPrefs video = { 0, 1e6, 1 };
  g_assert_cmpint (bwss_controller_set_prefs (c, 2, &video, now), ==, 0);
  g_assert_cmpuint (bwss_controller_next_round (c, now), ==, now);
  rounds = run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_test_message ("... one of them with a minimum: %u rounds in 1 s", rounds);
  g_assert_cmpuint (rounds, >=, 99);
  g_assert_cmpuint (rounds, <=, 101);
  g_assert_cmpint (bwss_controller_set_prefs (c, 2, &p, now), ==, 0);
  memset (grow, 0, sizeof grow);
  run_measured (c, &now, 1500, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  rounds = run_sleeping (c, &now, 8000, N, grow, bytes, taken, NULL);
  for (size_t i = 0; i < N; i++)
    g_assert_cmpuint (taken[i], >=, 8000 / 250);
  g_assert_cmpuint (rounds, <=, N * (8000 / 160 + 2));
  g_test_message ("%d flows at rest: %u rounds in 8 s (800 at every period)", N, rounds);
  g_assert_cmpint (bwss_controller_set_prefs (c, 2, &video, now), ==, 0);
  g_assert_cmpuint (bwss_controller_next_round (c, now), ==, now);
  g_assert_true (bwss_controller_due (c, 2, now));
  bwss_controller_free (c);
}

/* More flows moving data at a 20-ms RTT than a round may measure at one
 * instant, each held by its window: each takes its own slot of the 40-ms
 * gap, a round comes every period with about a quarter of them, each flow
 * is measured once a gap.  Once most are at rest, the few that move share
 * their rounds again. */
static void
test_rounds_spread (void)
{
  enum { N = 1000 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs p = { 0, 0, 1 };
  for (size_t i = 0; i < N; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, i + 1, &p, 0), ==, 0);
  uint64_t now = 0, grow[N], bytes[N] = { 0 };
  unsigned taken[N] = { 0 }, peak = 0;
  for (size_t i = 0; i < N; i++)
    grow[i] = 2000;                      /* 1.6 Mbit/s each */
  static double held[N];
  for (size_t i = 0; i < N; i++)
    held[i] = 0.9;
  window_held = held;
  unsigned rounds = run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  rounds = run_sleeping (c, &now, 2000, N, grow, bytes, taken, &peak);
  unsigned least = UINT_MAX, most = 0;
  for (size_t i = 0; i < N; i++) {
    least = MIN (least, taken[i]);
    most = MAX (most, taken[i]);
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), >, 0);   /* its own slot */
  }
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  g_test_message ("%d flows their windows hold at a 20-ms RTT: %u rounds in 2 s, at most %u flows "
                  "in one, each measured %u-%u times; U %.0f bit/s", N, rounds, peak, least, most,
                  st.aggregate_bps);
  g_assert_cmpuint (rounds, >=, 199);
  g_assert_cmpuint (rounds, <=, 201);
  g_assert_cmpuint (least, >=, 49);
  g_assert_cmpuint (most, <=, 51);
  g_assert_cmpuint (peak, <=, 3 * N / 10);
  /* all but three at rest: once the others are quiet, the three share
   * their rounds (measured at every round) */
  window_held = NULL;
  for (size_t i = 3; i < N; i++)
    grow[i] = 0;
  run_sleeping (c, &now, 6000, N, grow, bytes, taken, NULL);
  for (size_t i = 0; i < 3; i++)
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), ==, 0);
  for (size_t i = 3; i < N; i++)
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), >, now);
  bwss_controller_free (c);
}

/* The same thousand flows, each held by its source at 1.6 Mbit/s, far
 * less than its window carries: slack once the rounds spread, each
 * measured once per decision interval on its own slot (10 a second, not
 * 25), a round still every period with a tenth of them, and U (the sum of
 * their own meters, each a rate over its own samples) reads what they
 * move.  One whose source rises beyond what its window carries is measured
 * once a gap again from its next sample; new preferences bring one back
 * at once. */
static void
test_rounds_slack (void)
{
  enum { N = 1000 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs p = { 0, 0, 1 };
  for (size_t i = 0; i < N; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, i + 1, &p, 0), ==, 0);
  uint64_t now = 0, grow[N], bytes[N] = { 0 };
  unsigned taken[N] = { 0 }, peak = 0;
  for (size_t i = 0; i < N; i++)
    grow[i] = 2000;                      /* 1.6 Mbit/s each */
  static double held[N];
  window_held = held;
  run_sleeping (c, &now, 2000, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  unsigned rounds = run_sleeping (c, &now, 2000, N, grow, bytes, taken, &peak);
  unsigned least = UINT_MAX, most = 0;
  for (size_t i = 0; i < N; i++) {
    least = MIN (least, taken[i]);
    most = MAX (most, taken[i]);
  }
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  BwssFlowState fs;
  g_assert_cmpint (bwss_controller_flow_state (c, 1, &fs), ==, 0);
  g_test_message ("%d flows their sources hold at 1.6 Mbit/s, 20-ms RTT (window %u bytes): %u rounds "
                  "in 2 s, at most %u flows in one, each measured %u-%u times; U %.0f of %.0f bit/s",
                  N, fs.window_bytes, rounds, peak, least, most, st.aggregate_bps, N * 1.6e6);
  g_assert_cmpuint (rounds, >=, 199);
  g_assert_cmpuint (rounds, <=, 201);
  g_assert_cmpuint (least, >=, 19);
  g_assert_cmpuint (most, <=, 21);
  g_assert_cmpuint (peak, <=, 3 * N / 20);
  g_assert_cmpfloat (fabs (st.aggregate_bps - N * 1.6e6), <, 0.05 * N * 1.6e6);
  /* flow 1's source rises beyond what its window carries: held by its
   * window, it is measured every gap again from its next sample (within a
   * decision interval) */
  held[0] = 0.9;
  run_sleeping (c, &now, 200, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_test_message ("... flow 1 held by its window: measured %u times in 1 s", taken[0]);
  g_assert_cmpuint (taken[0], >=, 24);
  /* new preferences: due at once */
  g_assert_cmpuint (bwss_controller_next_measure (c, 2), >, now);
  g_assert_cmpint (bwss_controller_set_prefs (c, 2, &p, now), ==, 0);
  g_assert_cmpuint (bwss_controller_next_measure (c, 2), ==, 0);
  window_held = NULL;
  bwss_controller_free (c);
}

/* The same thousand flows held by their sources beside a video (flow 1,
 * a minimum of 1 Mbit/s, its source at 1.6): the rounds come every period
 * (its deficit must show at once), the video in each of them, the others
 * slack as spread, each measured once per decision interval on its own
 * slot (10 a second, not 100), a round holding a tenth of them, and U (the
 * sum of their own meters) reads what they move.  One that its window
 * comes to hold is measured at every round again.
 * The video's minimum gone, the rounds spread over their 40-ms gap, the
 * slack flows still once per decision interval; most flows at rest, the
 * few that move share their rounds again. */
static void
test_rounds_beside (void)
{
  enum { N = 1000 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs p = { 0, 0, 1 }, video = { 0, 1e6, 1 };
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &video, 0), ==, 0);
  for (size_t i = 1; i < N; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, i + 1, &p, 0), ==, 0);
  uint64_t now = 0, grow[N], bytes[N] = { 0 };
  unsigned taken[N] = { 0 }, peak = 0;
  for (size_t i = 0; i < N; i++)
    grow[i] = 2000;                      /* 1.6 Mbit/s each */
  static double held[N];
  memset (held, 0, sizeof held);
  window_held = held;
  run_sleeping (c, &now, 2000, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  unsigned rounds = run_sleeping (c, &now, 2000, N, grow, bytes, taken, &peak);
  unsigned least = UINT_MAX, most = 0;
  for (size_t i = 1; i < N; i++) {
    least = MIN (least, taken[i]);
    most = MAX (most, taken[i]);
  }
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  g_test_message ("%d flows their sources hold at 1.6 Mbit/s beside a video: %u rounds in 2 s, the "
                  "video in %u, at most %u flows in one, the others measured %u-%u times; U %.0f of "
                  "%.0f bit/s", N, rounds, taken[0], peak, least, most, st.aggregate_bps, N * 1.6e6);
  g_assert_cmpuint (rounds, >=, 199);
  g_assert_cmpuint (rounds, <=, 201);
  g_assert_cmpuint (taken[0], ==, rounds);
  g_assert_cmpuint (least, >=, 19);
  g_assert_cmpuint (most, <=, 21);
  g_assert_cmpuint (peak, <=, 3 * N / 20);
  g_assert_cmpfloat (fabs (st.aggregate_bps - N * 1.6e6), <, 0.05 * N * 1.6e6);
  /* flow 2's source rises beyond what its window carries: at every round
   * again once its mean over a decision interval shows it (its first two
   * samples once slack, 200 ms) */
  held[1] = 0.9;
  run_sleeping (c, &now, 400, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  rounds = run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_test_message ("... flow 2 held by its window: measured %u times in %u rounds", taken[1], rounds);
  g_assert_cmpuint (taken[1], ==, rounds);
  g_assert_cmpuint (taken[2], <=, 11);
  /* the video's minimum gone: spread over the 40-ms gap */
  g_assert_cmpint (bwss_controller_set_prefs (c, 1, &p, now), ==, 0);
  run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  memset (taken, 0, sizeof taken);
  rounds = run_sleeping (c, &now, 1000, N, grow, bytes, taken, NULL);
  g_test_message ("... no minimum: flow 2 measured %u times, flow 3 %u in %u rounds", taken[1],
                  taken[2], rounds);
  g_assert_cmpuint (taken[1], >=, 24);
  g_assert_cmpuint (taken[1], <=, 26);
  g_assert_cmpuint (taken[2], <=, 11);
  g_assert_cmpuint (bwss_controller_next_measure (c, 2), >, 0);    /* its own slot */
  /* all but three at rest: the three share their rounds */
  window_held = NULL;
  for (size_t i = 3; i < N; i++)
    grow[i] = 0;
  g_assert_cmpint (bwss_controller_set_prefs (c, 1, &video, now), ==, 0);
  run_sleeping (c, &now, 6000, N, grow, bytes, taken, NULL);
  for (size_t i = 0; i < 3; i++)
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), ==, 0);
  for (size_t i = 3; i < N; i++)
    g_assert_cmpuint (bwss_controller_next_measure (c, i + 1), >, now);
  bwss_controller_free (c);
}

/* ---- a domain's worth of flows: lookups by id ---- */
/* Returns the id the socket layer gives slot @slot in generation @gen. */
static uint64_t
slot_id (uint32_t slot, uint32_t gen)
{
  return (uint64_t) gen << 32 | slot;
}

/* Returns the weight flow @slot was added with. */
static double
weight_of (uint32_t slot)
{
  return 1 + slot % 7;
}

/* 10 000 flows added, half removed in a shuffled order, the slots reused
 * in the next generation: every id finds its own flow (its weight), a
 * removed one is gone, and each tick still decides every flow. */
#define MANY_FLOWS 10000
static void
test_many_flows (void)
{
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  for (uint32_t i = 0; i < MANY_FLOWS; i++) {
    BwssPrefs p = { 0, 0, weight_of (i) };
    g_assert_cmpint (bwss_controller_add_flow (c, slot_id (i, 1), &p, 0), ==, 0);
  }
  uint32_t *order = g_new (uint32_t, MANY_FLOWS);
  for (uint32_t i = 0; i < MANY_FLOWS; i++)
    order[i] = i;
  GRand *r = g_rand_new_with_seed (12);
  for (uint32_t i = MANY_FLOWS - 1; i > 0; i--) {
    uint32_t j = (uint32_t) g_rand_int_range (r, 0, (gint32) i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (uint32_t k = 0; k < MANY_FLOWS / 2; k++)
    g_assert_cmpint (bwss_controller_remove_flow (c, slot_id (order[k], 1), 0), ==, 0);
  for (uint32_t k = 0; k < MANY_FLOWS / 2; k++) {      /* the slots in their next generation */
    BwssPrefs p = { 0, 0, weight_of (order[k]) };
    g_assert_cmpint (bwss_controller_add_flow (c, slot_id (order[k], 2), &p, 0), ==, 0);
  }
  bwss_controller_tick (c, 10000);
  BwssControllerStats cs;
  bwss_controller_stats (c, &cs);
  g_assert_cmpuint (cs.n_flows, ==, MANY_FLOWS);
  for (uint32_t k = 0; k < MANY_FLOWS; k++) {
    uint32_t slot = order[k], gen = k < MANY_FLOWS / 2 ? 2 : 1;
    BwssFlowState st;
    g_assert_cmpint (bwss_controller_flow_state (c, slot_id (slot, gen), &st), ==, 0);
    g_assert_cmpfloat (st.prefs.weight, ==, weight_of (slot));
    g_assert_cmpint (bwss_controller_flow_state (c, slot_id (slot, 3 - gen), &st), ==, BWSS_ENOENT);
  }
  g_rand_free (r);
  g_free (order);
  bwss_controller_free (c);
}

static size_t
heap_in_use (void)
{
  struct mallinfo2 m = mallinfo2 ();
  return m.uordblks + m.hblkhd;         /* allocated from the heap, and mmapped blocks */
}

/* A thousand flows come and go beside three: the controller gives back
 * what they took (a long-lived controller holds memory for the flows it
 * has, not the most it ever had).  Judged on the heap's bytes in use, 95 %
 * of the thousand's at least: the allocator keeps small freed blocks in
 * caches of its own, which count as in use (a few tens of kB). */
static void
test_flows_give_back (void)
{
  enum { KEPT = 3, PEAK = 1000 };
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  BwssPrefs p = { 0, 0, 1 };
  for (uint32_t i = 0; i < KEPT; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, slot_id (i, 1), &p, 0), ==, 0);
  bwss_controller_tick (c, 10000);
  size_t before = heap_in_use ();
  for (uint32_t i = KEPT; i < KEPT + PEAK; i++)
    g_assert_cmpint (bwss_controller_add_flow (c, slot_id (i, 1), &p, 0), ==, 0);
  bwss_controller_tick (c, 20000);
  size_t peak = heap_in_use ();
  for (uint32_t i = KEPT; i < KEPT + PEAK; i++)
    g_assert_cmpint (bwss_controller_remove_flow (c, slot_id (i, 1), 30000), ==, 0);
  size_t after = heap_in_use ();
  g_test_message ("in use: %zu bytes with %d flows, %zu with %d, %zu with %d again",
                  before, KEPT, peak, KEPT + PEAK, after, KEPT);
  g_assert_cmpuint (peak, >=, before + PEAK * 1000);      /* a flow takes a kB or more */
  g_assert_cmpuint (after, <=, before + (peak - before) / 20);
  BwssFlowState st;
  for (uint32_t i = 0; i < KEPT; i++)                     /* the three are found as before */
    g_assert_cmpint (bwss_controller_flow_state (c, slot_id (i, 1), &st), ==, 0);
  g_assert_cmpint (bwss_controller_flow_state (c, slot_id (KEPT, 1), &st), ==, BWSS_ENOENT);
  bwss_controller_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  bwss_params_init_for (&paper, BWSS_LOOP_PAPER);
  g_test_add_func ("/controller/api-errors", test_api_errors);
  g_test_add_func ("/controller/many-flows", test_many_flows);
  g_test_add_func ("/controller/flows-give-back", test_flows_give_back);
  g_test_add_func ("/controller/measure-quiet", test_measure_quiet);
  g_test_add_func ("/controller/sender-segment", test_sender_segment);
  g_test_add_func ("/controller/next-round", test_next_round);
  g_test_add_func ("/controller/rounds-spread", test_rounds_spread);
  g_test_add_func ("/controller/rounds-slack", test_rounds_slack);
  g_test_add_func ("/controller/rounds-beside", test_rounds_beside);
  g_test_add_func ("/controller/paper/weights", test_weights);
  g_test_add_func ("/controller/paper/weights-960k", test_weights_small_link);
  g_test_add_func ("/controller/paper/rtt-unfairness", test_rtt_unfairness);
  g_test_add_func ("/controller/paper/capacity-drop", test_capacity_drop);
  g_test_add_func ("/controller/paper/redistribution", test_redistribution);
  g_test_add_func ("/controller/paper/streaming", test_streaming);
  g_test_add_func ("/controller/paper/flow-start-stop", test_flow_start_stop);
  return g_test_run ();
}

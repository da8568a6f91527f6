/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-player.c — the video held to what its player needs (issue 29, items
 * 1 and 2), the laws' side, against the fluid model (sim.h): the lab's
 * adaptive3 scenario (960 kbit/s, two downloads, 240 kbit/s of UDP from 60
 * to 100 s) with an HLS player fetching 2-s fragments of its 450 kbit/s
 * top variant whenever its buffer is below 30 s (hlsdemux2's high
 * watermark), the flow's preferences those of player_prefs()
 * (gst-plugin/abr/abrrule.h): the ABR-aware minimum need = 450k / 0.8 ×
 * 1.10 only while a fragment is fetched, and the flow's weight only while
 * the buffer is below half of its target.  Against the same player with
 * the minimum and the weight kept all the time (before).  And the player
 * as it runs: the demuxer picks each fragment's variant by its own rule
 * (the lower of the last fragment's rate and the mean of the last three,
 * times 0.8), the minimum is abr_min_rate() of the variant and of σ.
 */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "abrrule.h"
#include "demux2flows.h"
#include "laws.h"
#include "sim.h"

#define VARIANT_BPS   450e3
#define NEED_BPS      (VARIANT_BPS / 0.8 * 1.10)
#define FRAGMENT_S    2.0
#define TARGET_S      30.0          /* hlsdemux2's high-watermark-time */
#define FULL_S        (0.5 * TARGET_S)
#define START_S       4.0           /* playback starts with this much buffered */
#define MSS_BYTES     1448
#define USAGE         0.8           /* the demuxer's bandwidth-target-ratio */

/* The lab's ladder (tests/lab/make-hls), bit/s, ascending. */
static const guint64 LADDER[] = { 60000, 262000, 350000, 450000 };
#define N_LADDER G_N_ELEMENTS (LADDER)

/* How the flow's preferences learn the player's state. */
typedef enum {
  VIEW_ALWAYS,              /* the minimum and the weight all the time (before player_prefs) */
  VIEW_ELEMENT,             /* player_prefs() from the player's own state, at once (the
                             * element, which opens and ends every request) */
  VIEW_TRACER,              /* player_prefs() from what the tracer sees of the socket at its
                             * looks, DEMUX2_TICK_MS apart: bytes since the last look, time
                             * since data last arrived and since the request was sent, held
                             * by the fetch hold (hold_ms; 0: player_fetch_hold_ms()) */
} View;

typedef struct {
  size_t   flow;
  View     view;
  double   hold_ms;         /* VIEW_TRACER's hold, ms; 0: player_fetch_hold_ms() */
  unsigned look_ms;         /* VIEW_TRACER's looks, ms apart */
  bool     idle_weight;     /* between fragments the weight stays (before: a full buffer's
                             * idle flow kept its share until the loop found it unused) */
  uint64_t next_look_us, look_bytes, last_recv_us, last_bytes;
  bool     seen_fetching;   /* what the last look concluded */
  bool     fetching;
  uint64_t fetch_from;      /* the flow's byte count when the fragment began */
  uint64_t fetch_us;        /* ... and when */
  double   buffer_s;
  bool     playing;
  unsigned stalls;
  double   stall_s;
  bool     stalled;
  unsigned fragments, slow;  /* fragments, and those the ABR would step down after */
  double   applied_min, applied_weight;
  /* the ABR player: the demuxer picks its variant by its own rule and the
   * flow's minimum is abr_min_rate() of the domain's σ */
  bool     abr;
  guint64  variant;         /* the demuxer's variant in use, bit/s */
  guint64  fragment_variant;/* ... the one of the fragment being fetched */
  guint64  abr_previous;    /* the variant abr_min_rate() chose last */
  double   abr_min;         /* the minimum it gave, bit/s */
  double   measured[3];     /* the last three fragments' download rates, bit/s */
  unsigned n_measured;
  unsigned on_variant[N_LADDER], switches;
  unsigned under_min;       /* ticks its target was below the band of the minimum it asked
                             * for (within α under it, its FCS aims at (1 + α)·m) */
} Player;

static BwssParams delay;

static void
udp_60_100 (Sim *s, unsigned sec)
{
  s->m.cross_bps = (sec >= 60 && sec < 100) ? 240e3 : 0;
}

static void
apply (Sim *s, Player *pl)
{
  bool fetching = pl->view == VIEW_TRACER ? pl->seen_fetching : pl->fetching;
  PlayerBuffer buffer = pl->buffer_s >= FULL_S ? PLAYER_BUFFER_FULL : PLAYER_BUFFER_LOW;
  PlayerInput in = { .min_rate = pl->abr ? pl->abr_min : NEED_BPS, .priority = VIDEO_FLOW_PRIORITY,
                     .weight = VIDEO_FLOW_WEIGHT, .buffer = buffer, .fetching = fetching };
  BwssPrefs p;
  player_prefs (&in, &p);
  if (pl->view == VIEW_ALWAYS) {
    p.min_rate_bps = NEED_BPS;
    p.weight = VIDEO_FLOW_WEIGHT;
  } else if (pl->idle_weight && !fetching) {
    p.weight = VIDEO_FLOW_WEIGHT;
  }
  if (p.min_rate_bps == pl->applied_min && p.weight == pl->applied_weight)
    return;
  g_assert_cmpint (bwss_controller_set_prefs (s->c, pl->flow, &p, s->now_us), ==, 0);
  pl->applied_min = p.min_rate_bps;
  pl->applied_weight = p.weight;
}

/* The ABR-aware minimum (demux2flows.c's tick, bwsshttpsrc's refresh):
 * abr_min_rate() of the demuxer's variant and of σ as the domain reports
 * it (abr_usable_sigma()). */
static void
abr_look (Sim *s, Player *pl)
{
  BwssControllerStats st;
  bwss_controller_stats (s->c, &st);
  BwssDomainStats ds = { .controller_pid = 1, .phase = st.phase, .sigma_bps = st.sigma_bps,
                         .aggregate_bps = st.aggregate_bps, .loop = st.loop,
                         .queue_us = st.queue_us, .queue_target_us = st.queue_target_us };
  AbrInput in = { .ladder = LADDER, .n = N_LADDER, .current = pl->variant, .usage = USAGE,
                  .sigma = abr_usable_sigma (&ds), .previous = pl->abr_previous };
  guint64 chosen = 0;
  pl->abr_min = abr_min_rate (&in, &chosen);
  pl->abr_previous = chosen;
}

/* The demuxer's rule after a fragment (abrrule.h): the highest variant
 * whose BANDWIDTH is at most USAGE × the lower of the last fragment's rate
 * and the mean of the last three. */
static void
abr_fragment_done (Player *pl, double rate)
{
  memmove (pl->measured + 1, pl->measured, 2 * sizeof (double));
  pl->measured[0] = rate;
  if (pl->n_measured < 3)
    pl->n_measured++;
  double mean = 0.0;
  for (unsigned i = 0; i < pl->n_measured; i++)
    mean += pl->measured[i] / pl->n_measured;
  double r = MIN (rate, mean);
  guint64 next = LADDER[0];
  for (unsigned i = 0; i < N_LADDER; i++)
    if ((double) LADDER[i] <= USAGE * r)
      next = LADDER[i];
  for (unsigned i = 0; i < N_LADDER; i++)
    if (LADDER[i] == pl->fragment_variant)
      pl->on_variant[i]++;
  if (next != pl->variant)
    pl->switches++;
  pl->variant = next;
}

/* The tracer's look (demux2flows.c): the connection is fetching if bytes
 * came since the last look, or data arrived or the request went within the
 * hold. */
static bool
tracer_look (Sim *s, Player *pl)
{
  ModelFlow *f = &s->m.f[pl->flow];
  if (s->now_us < pl->next_look_us)
    return false;
  pl->next_look_us += 1000ull * pl->look_ms;
  bool grew = f->bytes > pl->look_bytes;
  pl->look_bytes = f->bytes;
  double hold_ms = pl->hold_ms > 0.0 ? pl->hold_ms
                                     : player_fetch_hold_ms (f->rcv_rtt_us, MSS_BYTES,
                                                             pl->abr ? pl->abr_min : NEED_BPS);
  double idle_ms = (double) (s->now_us - pl->last_recv_us) / 1e3;
  double sent_ms = (double) (s->now_us - pl->fetch_us) / 1e3;
  pl->seen_fetching = grew || idle_ms < hold_ms || (pl->fetch_us && sent_ms < hold_ms);
  return true;
}

/* Every 10 ms: the buffer drains while it plays; a fragment ends when its
 * bytes are in; the next begins while the buffer is below its target. */
static void
player_tick (Sim *s)
{
  Player *pl = s->user;
  ModelFlow *f = &s->m.f[pl->flow];
  const double dt = 0.010;
  /* the allocation of the last tick against the minimum it had then: below
   * its band (to a bit/s: the TRAS's sums are scaled) */
  BwssFlowState st;
  BwssControllerStats cs;
  g_assert_cmpint (bwss_controller_flow_state (s->c, pl->flow, &st), ==, 0);
  bwss_controller_stats (s->c, &cs);
  if (cs.phase != BWSS_PHASE_IDLE
      && st.target_bps < (1.0 - delay.alpha) * st.prefs.min_rate_bps - 1.0)
    pl->under_min++;
  if (f->bytes > pl->last_bytes) {
    pl->last_bytes = f->bytes;
    pl->last_recv_us = s->now_us;
  }
  if (pl->playing) {
    if (pl->buffer_s >= dt) {
      pl->buffer_s -= dt;
      pl->stalled = false;
    } else {
      pl->buffer_s = 0.0;
      if (!pl->stalled)
        pl->stalls++;
      pl->stalled = true;
      pl->stall_s += dt;
    }
  }
  double fragment_bits = (pl->abr ? (double) pl->fragment_variant : VARIANT_BPS) * FRAGMENT_S;
  if (pl->fetching && (double) (f->bytes - pl->fetch_from) * 8.0 >= fragment_bits) {
    double took = (double) (s->now_us - pl->fetch_us) / 1e6;
    pl->fragments++;
    if (pl->abr)
      abr_fragment_done (pl, fragment_bits / took);
    /* the demuxer's rule: the next variant is the highest whose BANDWIDTH
     * is at most 0.8 × the rate it measured */
    if (0.8 * VARIANT_BPS * FRAGMENT_S / took < VARIANT_BPS) {
      pl->slow++;
      g_test_message ("t=%.1f s: a fragment at %.0f bit/s (buffer %.1f s)", (double) s->now_us / 1e6,
                      VARIANT_BPS * FRAGMENT_S / took, pl->buffer_s);
    }
    pl->buffer_s += FRAGMENT_S;
    pl->fetching = false;
    if (!pl->playing && pl->buffer_s >= START_S)
      pl->playing = true;
  }
  if (!pl->fetching && pl->buffer_s + FRAGMENT_S <= TARGET_S) {
    pl->fetching = true;
    pl->fetch_from = f->bytes;
    pl->fetch_us = s->now_us;
    pl->fragment_variant = pl->variant;
  }
  f->source_bps = pl->fetching ? 0.0 : 1.0;      /* 0: as fast as allowed */
  bool look = pl->view != VIEW_TRACER || s->now_us >= pl->next_look_us;
  if (pl->abr && look)
    abr_look (s, pl);
  if (pl->view == VIEW_TRACER)
    tracer_look (s, pl);
  apply (s, pl);
}

typedef struct {
  double video, downloads, cross;
  unsigned stalls, fragments, slow;
  unsigned on_variant[N_LADDER], switches;   /* the ABR player's */
  unsigned under_min;
  unsigned compete;         /* seconds in COMPETE: nobody else's queue is on this link */
} Result;

/* How a run's flow learns the player's state. */
typedef struct {
  const char *name;
  View        view;
  double      hold_ms;      /* VIEW_TRACER: 0, player_fetch_hold_ms() */
  unsigned    look_ms;      /* VIEW_TRACER */
  bool        idle_weight;
  bool        abr;          /* the demuxer's own rule and abr_min_rate() of σ */
} Policy;

/* before player_prefs(); the element; the tracer before (a fixed 400-ms
 * hold, looks 100 ms apart, the weight kept between fragments); the tracer */
static const Policy ALWAYS = { "the minimum and the weight always", VIEW_ALWAYS, 0, 0, false, false };
static const Policy ELEMENT = { "player_prefs(), the element", VIEW_ELEMENT, 0, 0, false, false };
static const Policy TRACER_BEFORE = { "the tracer before (hold 400 ms, looks 100 ms, weight kept "
                                      "between fragments)", VIEW_TRACER, PLAYER_FETCH_HOLD_MAX_MS,
                                      100, true, false };
static const Policy TRACER = { "player_prefs(), the tracer", VIEW_TRACER, 0, DEMUX2_TICK_MS, false,
                               false };
/* the same two views with the player's ABR: the variant the demuxer's
 * rule picks, the minimum abr_min_rate() of σ */
static const Policy ELEMENT_ABR = { "the element, ABR", VIEW_ELEMENT, 0, 0, false, true };
static const Policy TRACER_ABR = { "the tracer, ABR", VIEW_TRACER, 0, DEMUX2_TICK_MS, false, true };

static Result
run_player (const Policy *po, bool latch)
{
  Sim s;
  Player pl = { .view = po->view, .hold_ms = po->hold_ms, .look_ms = po->look_ms,
                .idle_weight = po->idle_weight, .applied_min = -1, .applied_weight = -1,
                .abr = po->abr, .variant = LADDER[N_LADDER - 1], .abr_min = NEED_BPS };
  sim_init (&s, 960e3, &delay, udp_60_100);
  s.m.rcv_rtt_latch = latch;
  pl.flow = sim_add (&s, 0.030, 10, NEED_BPS, 1, true);
  sim_no_pacing (&s, pl.flow);                   /* its own HTTP client reads it */
  sim_add (&s, 0.030, 0, 0, 1, true);
  sim_add (&s, 0.030, 0, 0, 1, true);
  s.user = &pl;
  s.on_tick = player_tick;
  sim_run (&s, 130);
  sim_log (&s, 5);
  Result r = { .video = sim_mean (&s, pl.flow, 5, 130),
               .downloads = sim_mean (&s, 1, 5, 130) + sim_mean (&s, 2, 5, 130),
               .stalls = pl.stalls, .fragments = pl.fragments, .slow = pl.slow,
               .switches = pl.switches, .under_min = pl.under_min,
               .compete = sim_seconds_competing (&s, 0, 130) };
  memcpy (r.on_variant, pl.on_variant, sizeof r.on_variant);
  for (unsigned t = 5; t < 130; t++)
    r.cross += s.cross[t] / 125.0;
  sim_free (&s);
  return r;
}

static double
report (const char *name, bool latch, const Result *r)
{
  /* what an ideal router leaves the downloads: the link less what the
   * video fetched and the UDP */
  double left = 960e3 - r->video - r->cross;
  g_test_message ("%s, %s: video %.0f, downloads %.0f (%.1f %% of %.0f left), stalls %u, "
                  "fragments %u (%u slow), COMPETE %u s", name, latch ? "rcv_rtt latched" : "rcv_rtt 1/8 average",
                  r->video, r->downloads, 100 * r->downloads / left, left, r->stalls, r->fragments,
                  r->slow, r->compete);
  return r->downloads / left;
}

/* The mean of the variants the demuxer plays, a fragment slower than its
 * rule needs followed by one on the variant below (350 kbit/s), bit/s. */
static double
played (const Result *r)
{
  return (VARIANT_BPS * (r->fragments - r->slow) + 350e3 * r->slow) / r->fragments;
}

/* The targets: no stall, the top variant at 95 % and the downloads
 * at 80 % of what the ideal router gives them; and with the player's
 * preferences (the element's, the tracer's) no second in COMPETE — the
 * UDP is no neighbour, the queue beside it the fragments' own backlog.  The player's own view (the
 * element): a fragment slower than the demuxer's rule needs costs at most
 * one fragment in twenty (here: the onset and the end of the UDP, each
 * found by the loop a moment after the fragment's request began), the
 * downloads at 80 % and more than twice what the minimum and the weight
 * kept all the time left them.  Seen from the socket (the tracer), a
 * request gets its minimum up to a look late, and a fragment that ended
 * keeps it a look and a hold: the video at 95 % of its top variant, the
 * downloads at 75 %, and 10 points above the tracer before (a fixed
 * 400-ms hold, the weight kept between fragments). */
static void
check_player (bool latch)
{
  Result before = run_player (&ALWAYS, latch), element = run_player (&ELEMENT, latch);
  Result tracer_before = run_player (&TRACER_BEFORE, latch), tracer = run_player (&TRACER, latch);
  report (ALWAYS.name, latch, &before);
  double e = report (ELEMENT.name, latch, &element);
  double tb = report (TRACER_BEFORE.name, latch, &tracer_before);
  double t = report (TRACER.name, latch, &tracer);
  g_test_message ("played: the element %.0f, the tracer before %.0f, the tracer %.0f bit/s",
                  played (&element), played (&tracer_before), played (&tracer));
  g_assert_cmpuint (element.compete, ==, 0);
  g_assert_cmpuint (tracer.compete, ==, 0);
  g_assert_cmpuint (element.stalls, ==, 0);
  g_assert_cmpfloat (element.slow, <=, 0.05 * element.fragments);
  g_assert_cmpfloat (e, >=, 0.80);
  g_assert_cmpfloat (element.downloads, >, 2.0 * before.downloads);
  g_assert_cmpuint (tracer.stalls, ==, 0);
  g_assert_cmpfloat (played (&tracer), >=, 0.95 * VARIANT_BPS);
  g_assert_cmpfloat (t, >=, 0.75);
  g_assert_cmpfloat (t, >=, tb + 0.10);
}

/* The mean of the variants fetched, bit/s. */
static double
delivered (const Result *r)
{
  double sum = 0.0;
  unsigned n = 0;
  for (unsigned i = 0; i < N_LADDER; i++) {
    sum += (double) LADDER[i] * r->on_variant[i];
    n += r->on_variant[i];
  }
  return n ? sum / n : 0.0;
}

static double
report_abr (const Policy *po, bool latch, const Result *r)
{
  double share = report (po->name, latch, r);
  g_test_message ("%s: fragments on 450/350/262/60k %u/%u/%u/%u, switches %u, delivered %.0f bit/s, "
                  "target below the minimum's band %.2f s", po->name, r->on_variant[3], r->on_variant[2],
                  r->on_variant[1], r->on_variant[0], r->switches, delivered (r),
                  r->under_min * 0.010);
  return share;
}

/* The player as it runs: the variant is the demuxer's choice, the
 * minimum follows it (abr_min_rate() of σ at each look), and what it
 * fetches is the figure — the video at 95 % of its top variant
 * with no stall, the downloads as above (80 % of what the link leaves them
 * for the element, 75 % for the tracer); and the video's target never
 * below the band of the minimum it asks for (α under it, where its FCS
 * still aims at (1 + α)·m: the priority rule, σ is never left under the
 * minima's band, capacity.c — through the UDP refused probes cut σ α
 * under it each, and a minimum back from 0 between two fragments found σ
 * where the downloads had left it: seconds a run below the minimum). */
static void
check_abr (bool latch)
{
  Result element = run_player (&ELEMENT_ABR, latch), tracer = run_player (&TRACER_ABR, latch);
  double e = report_abr (&ELEMENT_ABR, latch, &element);
  double t = report_abr (&TRACER_ABR, latch, &tracer);
  g_assert_cmpuint (element.compete, ==, 0);
  g_assert_cmpuint (tracer.compete, ==, 0);
  g_assert_cmpuint (element.stalls, ==, 0);
  g_assert_cmpfloat (delivered (&element), >=, 0.95 * VARIANT_BPS);
  g_assert_cmpfloat (e, >=, 0.80);
  g_assert_cmpuint (tracer.stalls, ==, 0);
  g_assert_cmpfloat (delivered (&tracer), >=, 0.95 * VARIANT_BPS);
  g_assert_cmpfloat (t, >=, 0.75);
  g_assert_cmpuint (element.under_min, ==, 0);
  g_assert_cmpuint (tracer.under_min, ==, 0);
}

static void
test_adaptive3_abr (void)
{
  check_abr (false);
}

static void
test_adaptive3_abr_latch (void)
{
  check_abr (true);
}

static void
test_adaptive3 (void)
{
  check_player (false);
}

static void
test_adaptive3_latch (void)
{
  check_player (true);
}

/* A progressive player whose buffer is full reads at the clip's rate and
 * leaves the rest unread: the kernel's receiver RTT of its socket falls to
 * the spacing of its window openings (30 ms flat in the lab under 110 ms of
 * queue).  The link's queue is the downloads', not that. */
static void
test_reader_held_no_queue_measure (void)
{
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (&delay, &c), ==, 0);
  BwssPrefs video = { .priority = 10, .min_rate_bps = 1.74e6, .weight = 0 };
  BwssPrefs bulk = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &video, 0), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 2, &bulk, 0), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 3, &bulk, 0), ==, 0);
  uint64_t bv = 0, bb = 0;
  for (uint64_t t = 10000; t <= 5000000; t += 10000) {
    bv += 1875;                          /* 1.5 Mbit/s, read by the player */
    bb += 1000;                          /* 800 kbit/s each */
    BwssSample v = { .now_us = t, .bytes_received = bv, .rtt_us = 30000, .min_rtt_us = 30000,
                     .mss = 1448, .unread_bytes = 65536 };
    BwssSample b = { .now_us = t, .bytes_received = bb, .rtt_us = 140000, .min_rtt_us = 30000,
                     .mss = 1448 };
    g_assert_cmpint (bwss_controller_observe (c, 1, &v), ==, 0);
    g_assert_cmpint (bwss_controller_observe (c, 2, &b), ==, 0);
    g_assert_cmpint (bwss_controller_observe (c, 3, &b), ==, 0);
    bwss_controller_tick (c, t);
  }
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  g_test_message ("the link's queue %.1f ms (the downloads' excess 110 ms)", st.queue_us / 1e3);
  g_assert_cmpfloat (st.queue_us, >=, 100000.0);
  bwss_controller_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  bwss_params_init (&delay);
  g_test_add_func ("/player/trace/adaptive3", test_adaptive3);
  g_test_add_func ("/player/trace/adaptive3-latch", test_adaptive3_latch);
  g_test_add_func ("/player/trace/adaptive3-abr", test_adaptive3_abr);
  g_test_add_func ("/player/trace/adaptive3-abr-latch", test_adaptive3_abr_latch);
  g_test_add_func ("/player/reader-held-no-queue-measure", test_reader_held_no_queue_measure);
  return g_test_run ();
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sim.c — see sim.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "decision-line.h"
#include "sim.h"

#define MS   1000ull
#define TICK (10 * MS)

void
sim_init (Sim *s, double capacity, const BwssParams *params, SimEvent event)
{
  memset (s, 0, sizeof *s);
  s->rate = g_malloc0 (SIM_MAX_SECONDS * sizeof *s->rate);
  s->target = g_malloc0 (SIM_MAX_SECONDS * sizeof *s->target);
  s->window = g_malloc0 (SIM_MAX_SECONDS * sizeof *s->window);
  s->pace = g_malloc0 (SIM_MAX_SECONDS * sizeof *s->pace);
  s->flow_queue_ms = g_malloc0 (SIM_MAX_SECONDS * sizeof *s->flow_queue_ms);
  model_init (&s->m, capacity, 0.15, 0.001);
  g_assert_cmpint (bwss_controller_new (params, &s->c), ==, 0);
  s->event = event;
  s->measure_all = getenv ("BWSS_SIM_MEASURE_ALL") != NULL;
  const char *phase = getenv ("BWSS_SIM_TICK_PHASE_MS");
  if (phase && *phase) {
    char *end;
    unsigned long ms = strtoul (phase, &end, 10);
    g_assert_true (*end == '\0' && ms * MS < TICK);     /* 0 to 9 */
    s->tick_phase_us = ms * MS;
  }
  const char *trace = getenv ("BWSS_SIM_TRACE");
  if (trace && *trace)
    g_assert_cmpint (sscanf (trace, "%lf,%lf", &s->trace_from_s, &s->trace_to_s), ==, 2);
}

size_t
sim_add (Sim *s, double rtt, int32_t prio, double min, double weight, bool controlled)
{
  size_t i = model_add (&s->m, rtt);
  s->controlled[i] = controlled;
  for (size_t k = 0; k < i; k++)
    if (s->controlled[k] != controlled)
      s->mixed = true;
  s->pacable[i] = controlled;
  if (controlled) {
    BwssPrefs p = { .priority = prio, .min_rate_bps = min, .weight = weight };
    g_assert_cmpint (bwss_controller_add_flow (s->c, i, &p, s->now_us), ==, 0);
  }
  return i;
}

size_t
sim_add_late (Sim *s, double rtt, int32_t prio, double min, double weight, double join_after_s)
{
  size_t i = model_add (&s->m, rtt);
  s->controlled[i] = true;
  for (size_t k = 0; k < i; k++)
    if (!s->controlled[k])
      s->mixed = true;
  s->pacable[i] = true;
  s->pending[i] = true;
  s->join_after_s[i] = join_after_s;
  s->first_byte_s[i] = -1.0;
  s->pending_prefs[i] = (BwssPrefs) { .priority = prio, .min_rate_bps = min, .weight = weight };
  s->m.f[i].kernel_window = true;
  return i;
}

/* Admits the pending flows whose time has come (sim_add_late). */
static void
join_pending (Sim *s)
{
  double now = (double) s->now_us / 1e6;
  for (size_t i = 0; i < s->m.n; i++) {
    if (!s->pending[i])
      continue;
    if (s->first_byte_s[i] < 0.0 && s->m.f[i].bytes > 0)
      s->first_byte_s[i] = now;
    if (s->first_byte_s[i] >= 0.0 && now >= s->first_byte_s[i] + s->join_after_s[i]) {
      g_assert_cmpint (bwss_controller_add_flow (s->c, i, &s->pending_prefs[i], s->now_us), ==, 0);
      if (s->pending_group[i])
        g_assert_cmpint (bwss_controller_set_group (s->c, i, s->pending_group[i], s->now_us), ==, 0);
      s->pending[i] = false;
    }
  }
}

void
sim_set_group (Sim *s, size_t i, uint64_t group)
{
  g_assert_true (s->controlled[i]);
  if (s->pending[i])
    s->pending_group[i] = group;
  else
    g_assert_cmpint (bwss_controller_set_group (s->c, i, group, s->now_us), ==, 0);
}

void
sim_no_pacing (Sim *s, size_t i)
{
  s->pacable[i] = false;
  s->m.f[i].read_bps = 0.0;
}

void
sim_stop_flow (Sim *s, size_t i)
{
  s->m.f[i].active = false;
  if (s->controlled[i] && !s->pending[i])
    g_assert_cmpint (bwss_controller_remove_flow (s->c, i, s->now_us), ==, 0);
  s->controlled[i] = false;
  s->pending[i] = false;
}

/* With $BWSS_SIM_TRACE, one line every 50 ms inside its span. */
static void
trace_line (const Sim *s)
{
  double now = (double) s->now_us / 1e6;
  if (now < s->trace_from_s || now >= s->trace_to_s || s->now_us % (50 * MS) >= TICK)
    return;
  BwssControllerStats st;
  bwss_controller_stats (s->c, &st);
  GString *line = g_string_new (NULL);
  g_string_append_printf (line, "%7.3f link q %5.1f ms σ %5.0f loop q %5.1f |", now,
                          s->m.queue_s * 1e3, st.sigma_bps / 1e3, st.queue_us / 1e3);
  for (size_t i = 0; i < s->m.n; i++)
    g_string_append_printf (line, " %8" G_GUINT64_FORMAT " rtt %5.1f w %5u l%u", s->m.f[i].bytes,
                            s->m.f[i].rcv_rtt_us / 1e3, s->m.f[i].window_bytes,
                            s->m.f[i].losses);
  g_test_message ("%s", line->str);
  g_string_free (line, TRUE);
}

/* With $BWSS_SIM_DECISIONS, the delay loop's every decision and the flows'
 * states then appended to that file as bwssd writes $BWSS_DECISIONS
 * (decision-line.h), on the
 * model's clock: set it for one run (test -p) to read it as the lab's. */
static void
decision_out (Sim *s)
{
  const char *path = getenv ("BWSS_SIM_DECISIONS");
  BwssDecision d;
  if (path == NULL || *path == '\0' || bwss_controller_last_decision (s->c, &d) != 0
      || d.at_us == 0 || d.at_us == s->decided_us)
    return;
  s->decided_us = d.at_us;
  char line[512];
  size_t n = decision_line (line, sizeof line, &d, 0);
  FILE *f = fopen (path, "a");
  g_assert_nonnull (f);
  fwrite (line, 1, n, f);
  for (size_t i = 0; i < s->m.n; i++) {
    BwssFlowState st;
    if (s->controlled[i] && !s->pending[i] && bwss_controller_flow_state (s->c, i, &st) == 0
        && (n = decision_flow_line (line, sizeof line, d.at_us, 0, i, &st)) > 0)
      fwrite (line, 1, n, f);
  }
  fclose (f);
}

/* One controller tick: observe the controlled flows due by it
 * (bwss_controller_due(), as bwssd's round), tick, apply; none while no
 * round is needed (bwss_controller_next_round(): between rounds an
 * estimation period apart, or every controlled flow at rest), as bwssd
 * sleeps then. */
static void
tick (Sim *s)
{
  if (s->on_tick)
    s->on_tick (s);
  join_pending (s);
  if (!s->measure_all && bwss_controller_next_round (s->c, s->now_us) > s->now_us)
    return;
  for (size_t i = 0; i < s->m.n; i++) {
    if (!s->controlled[i] || s->pending[i])
      continue;
    if (!s->measure_all && !bwss_controller_due (s->c, i, s->now_us))
      continue;
    const ModelFlow *f = &s->m.f[i];
    BwssSample smp = { .now_us = s->now_us, .bytes_received = f->bytes,
                       .rtt_us = f->rcv_rtt_us || !s->rtt_fallback ? f->rcv_rtt_us : f->min_rtt_us,
                       .min_rtt_us = f->min_rtt_us, .mss = MODEL_MSS,
                       .can_pace = s->pacable[i],
                       .unread_bytes = f->shim_paced ? (uint32_t) f->unread_bytes
                                       : f->read_bound ? 2 * MODEL_MSS : 0,
                       .rcv_ooopack = f->ooopack };
    g_assert_cmpint (bwss_controller_observe (s->c, i, &smp), ==, 0);
    s->samples++;
  }
  bwss_controller_tick (s->c, s->now_us);
  trace_line (s);
  decision_out (s);
  for (size_t i = 0; i < s->m.n; i++) {
    BwssFlowState st;
    if (s->controlled[i] && !s->pending[i] && bwss_controller_flow_state (s->c, i, &st) == 0) {
      s->m.f[i].window_bytes = st.window_bytes;
      s->m.f[i].read_bps = s->pacable[i] ? st.read_rate_bps : 0.0;
    }
  }
}

void
sim_run (Sim *s, unsigned seconds)
{
  g_assert_cmpuint (seconds, <=, SIM_MAX_SECONDS);
  for (unsigned sec = s->seconds; sec < seconds; sec++) {
    if (s->event)
      s->event (s, sec);
    uint64_t start[MODEL_MAX_FLOWS];
    for (size_t i = 0; i < s->m.n; i++)
      start[i] = s->m.f[i].bytes;
    double qsum = 0.0, cross = 0.0, fqsum[MODEL_MAX_FLOWS] = { 0.0 };
    for (unsigned ms = 0; ms < 1000; ms++) {
      if (s->capacity_at)
        s->m.capacity_bps = s->capacity_at (s, s->m.now_s);
      model_step (&s->m);
      qsum += s->m.queue_s;
      for (size_t i = 0; i < s->m.n; i++)
        fqsum[i] += s->m.f[i].queue_s;
      cross += s->m.cross_rate_bps;
      s->now_us += MS;
      if (s->now_us % TICK == s->tick_phase_us)
        tick (s);
    }
    s->queue_ms[sec] = qsum;              /* Σ over 1000 ms of seconds = mean in ms */
    s->cross[sec] = cross / 1000.0;
    for (size_t i = 0; i < s->m.n; i++) {
      BwssFlowState st = { 0 };
      s->rate[sec][i] = (double) (s->m.f[i].bytes - start[i]) * 8.0;
      s->flow_queue_ms[sec][i] = fqsum[i];
      if (s->controlled[i])
        bwss_controller_flow_state (s->c, i, &st);
      s->target[sec][i] = st.target_bps;
      s->window[sec][i] = st.window_segments;
      s->pace[sec][i] = st.read_rate_bps;
    }
    bwss_controller_stats (s->c, &s->stats[sec]);
  }
  s->seconds = seconds;
}

unsigned
sim_seconds_competing (const Sim *s, unsigned from, unsigned to)
{
  unsigned n = 0;
  for (unsigned t = from; t < to && t < s->seconds; t++)
    if (s->stats[t].phase == BWSS_PHASE_COMPETE)
      n++;
  return n;
}

void
sim_free (Sim *s)
{
  if (!s->mixed && s->seconds > 0) {
    unsigned compete = sim_seconds_competing (s, 0, s->seconds);
    if (compete)
      g_test_message ("COMPETE in %u of %u s (nobody else's queue)", compete, s->seconds);
    g_assert_cmpuint (compete, <=, s->compete_max_s ? s->compete_max_s : s->seconds / 10);
  }
  bwss_controller_free (s->c);
  model_free (&s->m);
  g_free (s->rate);
  g_free (s->target);
  g_free (s->window);
  g_free (s->pace);
  g_free (s->flow_queue_ms);
}

double
sim_mean (const Sim *s, size_t i, unsigned from, unsigned to)
{
  double sum = 0;
  for (unsigned t = from; t < to; t++)
    sum += s->rate[t][i];
  return sum / (to - from);
}

double
sim_mean_aggregate (const Sim *s, unsigned from, unsigned to)
{
  double sum = 0;
  for (size_t i = 0; i < s->m.n; i++)
    sum += sim_mean (s, i, from, to);
  return sum;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
sim_median_queue_ms (const Sim *s, unsigned from, unsigned to)
{
  double v[SIM_MAX_SECONDS];
  unsigned n = 0;
  for (unsigned t = from; t < to; t++)
    v[n++] = s->queue_ms[t];
  qsort (v, n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double
sim_median_flow_queue_ms (const Sim *s, size_t i, unsigned from, unsigned to)
{
  double v[SIM_MAX_SECONDS];
  unsigned n = 0;
  for (unsigned t = from; t < to; t++)
    v[n++] = s->flow_queue_ms[t][i];
  qsort (v, n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned
sim_seconds_below (const Sim *s, size_t i, double rate, unsigned from, unsigned to)
{
  unsigned n = 0;
  for (unsigned t = from; t < to; t++)
    if (s->rate[t][i] < rate)
      n++;
  return n;
}

void
sim_log (const Sim *s, unsigned every)
{
  for (unsigned t = 0; t < s->seconds; t += every) {
    GString *line = g_string_new (NULL);
    g_string_append_printf (line, "t=%3u %-10s σ=%6.0f U=%6.0f q=%5.1f/%4.1f ms |", t,
                            bwss_phase_name (s->stats[t].phase), s->stats[t].sigma_bps / 1e3,
                            s->stats[t].aggregate_bps / 1e3, s->queue_ms[t],
                            s->stats[t].queue_target_us / 1e3);
    for (size_t i = 0; i < s->m.n; i++) {
      g_string_append_printf (line, " %5.0f/%5.0f w%-3u", s->rate[t][i] / 1e3,
                              s->target[t][i] / 1e3, s->window[t][i]);
      if (s->pace[t][i] > 0.0)
        g_string_append_printf (line, "p%.0f", s->pace[t][i] / 1e3);
    }
    g_test_message ("%s", line->str);
    g_string_free (line, TRUE);
  }
}

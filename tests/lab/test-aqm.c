/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-aqm.c — the lab bottleneck's queue (lab-aqm) and link (lab-link) on
 * synthetic packet sequences with an injected clock: CoDel's control law and
 * drop schedule, FQ-CoDel's deficit round robin, new-flow priority and
 * fattest-queue drop, drop-tail, the flow hash, the serialisation schedule
 * along a rate trace. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "lab-aqm.h"
#include "lab-link.h"

#define MS 1000000ull
#define US 1000ull

typedef struct {
  int      drops;
  uint64_t drop_t[4096];
  uint32_t drop_hash[4096];
  uint64_t now;
} Sink;

static void
on_drop (void *ctx, LabPkt *p, AqmDropWhy why)
{
  Sink *s = ctx;
  (void) why;
  if (s->drops < 4096) {
    s->drop_t[s->drops] = s->now;
    s->drop_hash[s->drops] = p->hash;
  }
  s->drops++;
  g_free (p);
}

static LabPkt *
pkt (uint32_t len, uint32_t hash)
{
  LabPkt *p = g_new0 (LabPkt, 1);
  p->len = len;
  p->hash = hash;
  return p;
}

static void
test_control_law (void)
{
  g_assert_cmpuint (codel_control_law (0, 100 * MS, 1), ==, 100 * MS);
  g_assert_cmpuint (codel_control_law (7, 100 * MS, 4), ==, 7 + 50 * MS);
  g_assert_cmpuint (codel_control_law (0, 100 * MS, 100), ==, 10 * MS);
  g_assert_cmpuint (codel_control_law (0, 100 * MS, 0), ==, 100 * MS);   /* never divides by 0 */
}

/* An unresponsive overload: 1500-byte packets arrive every 1 ms, leave
 * every 1.25 ms.  The sojourn passes 5 ms after ~20 ms; CoDel drops first
 * one interval later, then at interval/sqrt(count) gaps. */
static void
test_codel_schedule (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_CODEL);
  c.limit_pkts = 0;
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  uint64_t t_above = 0;
  uint64_t next_in = 0, next_out = 0;
  for (uint64_t t = 0; t < 600 * MS; t += 50 * US) {
    s.now = t;
    if (t >= next_in) {
      aqm_enqueue (&a, pkt (1500, 1), t);
      next_in += 1 * MS;
    }
    if (t >= next_out) {
      LabPkt *p = aqm_dequeue (&a, t);
      if (p && t - p->enq_ns >= 5 * MS && t_above == 0)
        t_above = t;
      g_free (p);
      next_out += 1250 * US;
    }
  }
  g_assert_cmpint (s.drops, >=, 5);
  g_assert_cmpuint (t_above, >, 0);
  /* first drop one interval after the sojourn went above target (± a dequeue) */
  g_assert_cmpuint (s.drop_t[0], >=, t_above + 100 * MS);
  g_assert_cmpuint (s.drop_t[0], <=, t_above + 100 * MS + 1250 * US);
  /* the gaps follow interval/sqrt(count), to a dequeue's granularity */
  for (int k = 1; k < s.drops && k < 6; k++) {
    double gap = (double) (s.drop_t[k] - s.drop_t[k - 1]) / 1e6, want = 100.0 / sqrt (k);
    g_assert_cmpfloat (fabs (gap - want), <=, 1.3);
  }
  g_assert_cmpuint (a.drops_codel, ==, (uint64_t) s.drops);
  aqm_clear (&a);
}

/* A queue whose sojourn stays under target, and one packet held long but
 * alone (at most an MTU queued), are never dropped. */
static void
test_codel_no_drop (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_CODEL);
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  for (uint64_t t = 0; t < 2000 * MS; t += 10 * MS) {
    for (int k = 0; k < 3; k++)                /* a burst of three ... */
      aqm_enqueue (&a, pkt (1500, 1), t);
    for (int k = 0; k < 3; k++)                /* ... gone within 3 ms */
      g_free (aqm_dequeue (&a, t + (uint64_t) (k + 1) * MS));
  }
  for (uint64_t t = 3000 * MS; t < 6000 * MS; t += 300 * MS) {
    aqm_enqueue (&a, pkt (1500, 1), t);        /* alone, 300 ms */
    g_free (aqm_dequeue (&a, t + 299 * MS));
  }
  g_assert_cmpint (s.drops, ==, 0);
  g_assert_true (aqm_empty (&a));
  g_assert_null (aqm_dequeue (&a, 7000 * MS));
  aqm_clear (&a);
}

static void
test_droptail (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_DROPTAIL);
  c.limit_bytes = 4500;
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  for (uint32_t k = 0; k < 5; k++)
    aqm_enqueue (&a, pkt (1500, k), 0);
  g_assert_cmpint (s.drops, ==, 2);              /* the fourth and fifth: tail */
  g_assert_cmpuint (s.drop_hash[0], ==, 3);
  g_assert_cmpuint (s.drop_hash[1], ==, 4);
  for (uint32_t k = 0; k < 3; k++) {
    LabPkt *p = aqm_dequeue (&a, 10 * MS);
    g_assert_nonnull (p);
    g_assert_cmpuint (p->hash, ==, k);           /* FIFO */
    g_free (p);
  }
  g_assert_null (aqm_dequeue (&a, 10 * MS));
  aqm_clear (&a);
}

/* Two backlogged flows of 1514- and 300-byte packets get the same bytes,
 * to one quantum; a new sparse flow is served before both. */
static void
test_fq_drr (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_FQ_CODEL);
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  for (int k = 0; k < 400; k++)
    aqm_enqueue (&a, pkt (1514, 7), 0);
  for (int k = 0; k < 2000; k++)
    aqm_enqueue (&a, pkt (300, 8), 0);
  uint64_t bytes[2] = { 0, 0 };
  for (int k = 0; k < 1200; k++) {
    LabPkt *p = aqm_dequeue (&a, 1 * MS);     /* sojourn 1 ms: under target */
    g_assert_nonnull (p);
    bytes[p->hash - 7] += p->len;
    g_free (p);
    double diff = fabs ((double) bytes[0] - (double) bytes[1]);
    g_assert_cmpfloat (diff, <=, 2 * 1514);
  }
  aqm_enqueue (&a, pkt (100, 9), 2 * MS);      /* a sparse newcomer */
  LabPkt *p = aqm_dequeue (&a, 2 * MS);
  g_assert_cmpuint (p->hash, ==, 9);
  g_free (p);
  g_assert_cmpint (s.drops, ==, 0);
  aqm_clear (&a);
  g_assert_cmpint (s.drops, >, 0);                /* the rest, dropped at the end */
}

/* Over the packet limit the fattest queue loses its head. */
static void
test_fq_limit (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_FQ_CODEL);
  c.limit_pkts = 10;
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  for (int k = 0; k < 3; k++)
    aqm_enqueue (&a, pkt (1000, 2), 0);
  for (int k = 0; k < 12; k++)
    aqm_enqueue (&a, pkt (1500, 1), 0);
  g_assert_cmpint (s.drops, ==, 5);
  for (int k = 0; k < 5; k++)
    g_assert_cmpuint (s.drop_hash[k], ==, 1);
  g_assert_cmpuint (a.backlog_pkts, ==, 10);
  g_assert_cmpuint (a.flows[2].q.n, ==, 3);
  g_assert_cmpuint (a.drops_limit, ==, 5);
  aqm_clear (&a);
}

/* CoDel per flow: the overloaded flow is dropped, a light flow beside it
 * never (its own queue's sojourn stays short). */
static void
test_fq_codel_isolation (void)
{
  Sink s = { 0 };
  AqmConfig c = aqm_defaults (AQM_FQ_CODEL);
  Aqm a;
  g_assert_true (aqm_init (&a, &c, on_drop, &s));
  for (uint64_t t = 0; t < 2000 * MS; t += 100 * US) {
    s.now = t;
    if (t % MS == 0)
      aqm_enqueue (&a, pkt (1500, 1), t);            /* 12 Mbit/s of a bulk flow */
    if (t % (20 * MS) == 0)
      aqm_enqueue (&a, pkt (200, 2), t);             /* a light one */
    if (t % (1100 * US) == 0)
      g_free (aqm_dequeue (&a, t));                  /* ~11 Mbit/s out */
  }
  g_assert_cmpint (s.drops, >, 0);
  for (int k = 0; k < s.drops && k < 4096; k++)
    g_assert_cmpuint (s.drop_hash[k], ==, 1);
  aqm_clear (&a);
}

static void
test_hash (void)
{
  uint8_t a[40] = { 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 77, 2, 11, 10, 77, 1, 2,
                    0, 80, 0xc3, 0x50 };
  uint8_t b[40];
  memcpy (b, a, sizeof a);
  g_assert_cmpuint (aqm_flow_hash (a, 40, 1), ==, aqm_flow_hash (b, 40, 1));
  b[23] ^= 1;                                         /* another client port */
  g_assert_cmpuint (aqm_flow_hash (a, 40, 1), !=, aqm_flow_hash (b, 40, 1));
  g_assert_cmpuint (aqm_flow_hash (a, 40, 1), !=, aqm_flow_hash (a, 40, 2));
  g_assert_cmpint (aqm_kind_from_name ("fq_codel"), ==, AQM_FQ_CODEL);
  g_assert_cmpint (aqm_kind_from_name ("red"), ==, -1);
}

/* ---- the link ---- */

typedef struct {
  int      n;
  uint64_t now, t[64];
} Wire;

static void
on_write (void *ctx, const LabPkt *p)
{
  Wire *w = ctx;
  (void) p;
  if (w->n < 64)
    w->t[w->n] = w->now;
  w->n++;
}

static LabPkt *
frame (void)
{
  LabPkt *p = g_malloc0 (sizeof *p);          /* the link frees with free() */
  p->frame_len = 1486;                        /* 1500 bytes on the link */
  p->data = g_malloc0 (1486);
  p->data[0] = 0x45;
  return p;
}

/* 12 Mbit/s: one 1500-byte packet per ms, back to back from the arrival;
 * at 10 ms the trace halves the rate. */
static void
test_link_schedule (void)
{
  Wire w = { 0 };
  AqmConfig c = aqm_defaults (AQM_DROPTAIL);
  c.limit_bytes = 1 << 20;
  LinkRatePoint *tr = g_malloc (2 * sizeof *tr);
  tr[0] = (LinkRatePoint) { 0, 12e6 };
  tr[1] = (LinkRatePoint) { 10 * MS, 6e6 };
  Link l;
  g_assert_true (link_init (&l, &c, 0, tr, 2, 0, on_write, &w));
  uint64_t t0 = 1000 * MS;
  link_start (&l, t0);
  for (int k = 0; k < 14; k++)
    link_arrive (&l, frame (), 0, t0 + 500 * US);
  g_assert_cmpuint (link_next_ns (&l), ==, t0 + 1500 * US);
  while (link_next_ns (&l) != UINT64_MAX) {
    w.now = link_next_ns (&l) + 20 * US;      /* always 20 µs late */
    link_service (&l, w.now);
  }
  g_assert_cmpint (w.n, ==, 14);
  for (int k = 0; k < 10; k++)                /* starts at 0.5 .. 9.5 ms: 1 ms each */
    g_assert_cmpuint (w.t[k], ==, t0 + 500 * US + (uint64_t) (k + 1) * MS + 20 * US);
  for (int k = 10; k < 14; k++)               /* from 10.5 ms: 2 ms each */
    g_assert_cmpuint (w.t[k], ==, t0 + 10500 * US + (uint64_t) (k - 9) * 2 * MS + 20 * US);
  g_assert_cmpuint (l.max_late_ns, ==, 20 * US);
  g_assert_cmpuint (l.bytes, ==, 14 * 1500);
  g_assert_cmpfloat (link_rate_at (&l, t0 + 9 * MS), ==, 12e6);
  g_assert_cmpfloat (link_rate_at (&l, t0 + 11 * MS), ==, 6e6);
  link_free (&l);
}

/* The ideal router: packets from the priority address go first. */
static void
test_link_priority (void)
{
  Wire w = { 0 };
  AqmConfig c = aqm_defaults (AQM_CODEL);
  Link l;
  uint32_t prio;
  memcpy (&prio, (uint8_t[]) { 10, 77, 2, 10 }, 4);
  g_assert_true (link_init (&l, &c, 12e6, NULL, 0, prio, on_write, &w));
  LabPkt *bulk[3], *video;
  for (int k = 0; k < 3; k++) {
    bulk[k] = frame ();
    memcpy (bulk[k]->data + 12, (uint8_t[]) { 10, 77, 2, 11 }, 4);
    link_arrive (&l, bulk[k], 0, MS);
  }
  video = frame ();
  memcpy (video->data + 12, (uint8_t[]) { 10, 77, 2, 10 }, 4);
  link_arrive (&l, video, 0, MS);
  g_assert_cmpuint (l.cls[0].backlog_pkts, ==, 1);   /* the first bulk is on the wire */
  g_assert_cmpuint (l.cls[1].backlog_pkts, ==, 2);
  w.now = 2 * MS;
  link_service (&l, w.now);                           /* bulk 0 leaves, the video starts */
  g_assert_cmpuint (l.cls[0].backlog_pkts, ==, 0);
  g_assert_cmpuint (l.on_wire->cls, ==, 0);
  link_free (&l);
}

/* A frame from source 10.77.2.@host. */
static LabPkt *
frame_from (uint8_t host)
{
  LabPkt *p = frame ();
  memcpy (p->data + 12, (uint8_t[]) { 10, 77, 2, host }, 4);
  return p;
}

/* What each source brought and lost, and each drop: 12 Mbit/s behind
 * CoDel, source .11 sends a frame every 0.8 ms (a quarter over the link),
 * source .12 one every 10 ms, for 400 ms from the trace's start. */
static void
test_link_sources (void)
{
  Wire w = { 0 };
  AqmConfig c = aqm_defaults (AQM_CODEL);
  Link l;
  g_assert_true (link_init (&l, &c, 12e6, NULL, 0, 0, on_write, &w));
  link_arrive (&l, frame_from (11), 0, MS);   /* before the start: not counted */
  uint64_t t0 = 10 * MS;
  link_start (&l, t0);
  unsigned sent11 = 0, sent12 = 0;
  for (uint64_t t = t0; t < t0 + 400 * MS; t += 200 * US) {
    w.now = t;
    link_service (&l, t);
    if ((t - t0) % (800 * US) == 0) {
      link_arrive (&l, frame_from (11), 0, t);
      sent11++;
    }
    if ((t - t0) % (10 * MS) == 0) {
      link_arrive (&l, frame_from (12), 0, t);
      sent12++;
    }
  }
  g_assert_cmpuint (l.n_src, ==, 2);
  uint32_t a11, a12;
  memcpy (&a11, (uint8_t[]) { 10, 77, 2, 11 }, 4);
  memcpy (&a12, (uint8_t[]) { 10, 77, 2, 12 }, 4);
  size_t i11 = l.src_addr[0] == a11 ? 0 : 1, i12 = 1 - i11;
  g_assert_cmpuint (l.src_addr[i12], ==, a12);
  g_assert_cmpuint (l.src_packets[i11], ==, sent11);
  g_assert_cmpuint (l.src_packets[i12], ==, sent12);
  g_assert_cmpuint (l.drops_codel, >, 0);
  g_assert_cmpuint (l.src_drops[i11] + l.src_drops[i12], ==, l.drops_codel);
  g_assert_cmpuint (l.n_drop_log, ==, l.drops_codel);
  for (size_t k = 0; k < l.n_drop_log; k++) {
    const LinkDrop *d = &l.drop_log[k];
    g_assert_true (d->src == a11 || d->src == a12);
    g_assert_cmpuint (d->sojourn_us, >=, 5000);    /* above CoDel's target */
    g_assert_cmpuint (d->backlog, >=, 1);           /* more than an MTU was queued */
    g_assert_cmpuint (d->len, ==, 1500);
    g_assert_cmpuint (d->t_ns, >=, 100 * MS);       /* an interval above the target first */
    g_assert_true (k == 0 || d->t_ns >= l.drop_log[k - 1].t_ns);
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  link_write_stats (&l, f);
  fclose (f);
  char *want = g_strdup_printf ("{\"addr\": \"10.77.2.12\", \"packets\": %u, \"drops\": %llu}",
                                sent12, (unsigned long long) l.src_drops[i12]);
  g_assert_nonnull (strstr (text, want));
  g_assert_nonnull (strstr (text, "\"drop_log\": [["));
  g_free (want);
  free (text);
  link_free (&l);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/aqm/codel/control-law", test_control_law);
  g_test_add_func ("/aqm/codel/schedule", test_codel_schedule);
  g_test_add_func ("/aqm/codel/no-drop", test_codel_no_drop);
  g_test_add_func ("/aqm/droptail", test_droptail);
  g_test_add_func ("/aqm/fq/drr", test_fq_drr);
  g_test_add_func ("/aqm/fq/limit", test_fq_limit);
  g_test_add_func ("/aqm/fq/isolation", test_fq_codel_isolation);
  g_test_add_func ("/aqm/hash", test_hash);
  g_test_add_func ("/link/schedule", test_link_schedule);
  g_test_add_func ("/link/priority", test_link_priority);
  g_test_add_func ("/link/sources", test_link_sources);
  return g_test_run ();
}

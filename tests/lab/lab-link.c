/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lab-link.c — the lab's user-space bottleneck (see lab-link.h). */
#include "lab-link.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LATE_BIN_NS    10000ull           /* 10 µs */
#define SOJOURN_BIN_NS 100000ull          /* 100 µs */
#define MAX_SECONDS    86400
#define HASH_SEED      0x6c616221u

static uint64_t clock_ns;                 /* the time of the call under way (drops) */

static long
sec_index (const Link *l, uint64_t t)
{
  if (l->t0_ns == 0 || t < l->t0_ns)
    return -1;
  uint64_t s = (t - l->t0_ns) / 1000000000ull;
  return s < MAX_SECONDS ? (long) s : -1;
}

/* Grows the per-second series to hold second @s; false if it cannot. */
static bool
sec_reserve (Link *l, long s)
{
  if (s < 0)
    return false;
  if ((size_t) s < l->n_sec)
    return true;
  size_t n = (size_t) s + 64;
  uint64_t **arrays[] = { &l->sec_bytes, &l->sec_busy_ns, &l->sec_drops, &l->sec_sojourn_ns,
                          &l->sec_sojourn_n };
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
    uint64_t *a = realloc (*arrays[k], n * sizeof *a);
    if (a == NULL)
      return false;
    memset (a + l->n_sec, 0, (n - l->n_sec) * sizeof *a);
    *arrays[k] = a;
  }
  l->n_sec = n;
  return true;
}

/* The slot counting source @src (the last one: every source beyond
 * LINK_SOURCES). */
static size_t
src_slot (Link *l, uint32_t src)
{
  for (size_t i = 0; i < l->n_src; i++)
    if (l->src_addr[i] == src)
      return i;
  if (l->n_src == LINK_SOURCES)
    return LINK_SOURCES;
  l->src_addr[l->n_src] = src;
  return l->n_src++;
}

static void
on_drop (void *ctx, LabPkt *p, AqmDropWhy why)
{
  Link *l = ctx;
  if (why == AQM_DROP_CODEL)
    l->drops_codel++;
  else
    l->drops_limit++;
  long s = sec_index (l, clock_ns);
  if (sec_reserve (l, s)) {
    l->sec_drops[s]++;
    l->src_drops[src_slot (l, p->src)]++;
    if (l->drop_log && l->n_drop_log < LINK_DROP_LOG) {
      uint64_t sojourn = clock_ns > p->enq_ns ? clock_ns - p->enq_ns : 0;
      l->drop_log[l->n_drop_log++] = (LinkDrop) {
        .t_ns = clock_ns - l->t0_ns, .src = p->src, .sojourn_us = (uint32_t) (sojourn / 1000),
        .backlog = l->cls[l->n_cls == 2 ? p->cls : 0].backlog_pkts, .len = p->len };
    }
  }
  free (p->data);
  free (p);
}

bool
link_init (Link *l, const AqmConfig *cfg, double rate_bps, LinkRatePoint *trace, size_t n_trace,
           uint32_t prio_addr, LinkWriteFn write, void *ctx)
{
  memset (l, 0, sizeof *l);
  if (n_trace == 0) {
    trace = malloc (sizeof *trace);
    if (trace == NULL || !(rate_bps > 0))
      return false;
    trace[0] = (LinkRatePoint) { 0, rate_bps };
    n_trace = 1;
  }
  l->trace = trace;
  l->n_trace = n_trace;
  l->prio_addr = prio_addr;
  l->n_cls = prio_addr ? 2 : 1;
  l->write = write;
  l->ctx = ctx;
  l->sojourn = calloc (LINK_SOJOURN_BINS + 1, sizeof *l->sojourn);
  l->drop_log = malloc (LINK_DROP_LOG * sizeof *l->drop_log);
  if (l->sojourn == NULL || l->drop_log == NULL)
    return false;
  for (int c = 0; c < l->n_cls; c++)
    if (!aqm_init (&l->cls[c], cfg, on_drop, l))
      return false;
  return true;
}

void
link_free (Link *l)
{
  for (int c = 0; c < l->n_cls; c++)
    aqm_clear (&l->cls[c]);
  if (l->on_wire) {
    free (l->on_wire->data);
    free (l->on_wire);
  }
  free (l->trace);
  free (l->sojourn);
  free (l->drop_log);
  free (l->sec_bytes);
  free (l->sec_busy_ns);
  free (l->sec_drops);
  free (l->sec_sojourn_ns);
  free (l->sec_sojourn_n);
  memset (l, 0, sizeof *l);
}

LinkRatePoint *
link_trace_load (const char *path, size_t *n)
{
  FILE *f = fopen (path, "r");
  if (f == NULL) {
    fprintf (stderr, "bwss-delay: --trace %s: %s\n", path, strerror (errno));
    return NULL;
  }
  LinkRatePoint *pts = NULL;
  size_t cap = 0, k = 0;
  char line[256];
  int lineno = 0;
  while (fgets (line, sizeof line, f)) {
    lineno++;
    char *s = line + strspn (line, " \t");
    if (*s == '#' || *s == '\n' || *s == '\0')
      continue;
    double t, kbps;
    char extra;
    if (sscanf (s, "%lf %lf %c", &t, &kbps, &extra) != 2 || !(t >= 0) || !isfinite (t)
        || !(kbps > 0) || !isfinite (kbps) || (k && t * 1e9 < (double) pts[k - 1].t_ns)) {
      fprintf (stderr, "bwss-delay: --trace %s:%d: expected \"seconds kbit/s\" (times rising, "
                       "rates > 0)\n", path, lineno);
      free (pts);
      fclose (f);
      return NULL;
    }
    if (k == cap) {
      cap = cap ? 2 * cap : 256;
      LinkRatePoint *p = realloc (pts, cap * sizeof *p);
      if (p == NULL) {
        free (pts);
        fclose (f);
        return NULL;
      }
      pts = p;
    }
    pts[k++] = (LinkRatePoint) { (uint64_t) (t * 1e9), kbps * 1000.0 };
  }
  fclose (f);
  if (k == 0) {
    fprintf (stderr, "bwss-delay: --trace %s: no \"seconds kbit/s\" line\n", path);
    free (pts);
    return NULL;
  }
  *n = k;
  return pts;
}

void
link_start (Link *l, uint64_t now_ns)
{
  l->t0_ns = now_ns;
}

/* Index of the trace point in force at @rel_ns after the start. */
static size_t
point_at (const Link *l, uint64_t rel_ns)
{
  size_t lo = 0, hi = l->n_trace;          /* last point with t <= rel, 0 before the first */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (l->trace[mid].t_ns <= rel_ns)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

double
link_rate_at (const Link *l, uint64_t t_ns)
{
  uint64_t rel = l->t0_ns && t_ns > l->t0_ns ? t_ns - l->t0_ns : 0;
  return l->trace[point_at (l, rel)].bps;
}

/* The bits the rate allows from @a_ns to @b_ns after the start. */
static double
capacity_bits (const Link *l, uint64_t a_ns, uint64_t b_ns)
{
  double bits = 0;
  for (size_t i = point_at (l, a_ns); i < l->n_trace && a_ns < b_ns; i++) {
    uint64_t end = i + 1 < l->n_trace && l->trace[i + 1].t_ns < b_ns ? l->trace[i + 1].t_ns : b_ns;
    if (end > a_ns)
      bits += l->trace[i].bps * (double) (end - a_ns) / 1e9;
    a_ns = end > a_ns ? end : a_ns;
  }
  return bits;
}

/* Adds the busy interval [a, b) to the seconds it covers. */
static void
add_busy (Link *l, uint64_t a, uint64_t b)
{
  while (a < b) {
    long s = sec_index (l, a);
    if (!sec_reserve (l, s))
      return;
    uint64_t end = l->t0_ns + (uint64_t) (s + 1) * 1000000000ull;
    uint64_t to = b < end ? b : end;
    l->sec_busy_ns[s] += to - a;
    a = to;
  }
}

/* Takes the next packet at @t (strict priority over the classes) and
 * schedules its departure. */
static void
start_next (Link *l, uint64_t t)
{
  LabPkt *p = NULL;
  clock_ns = t;
  for (int c = 0; c < l->n_cls && p == NULL; c++)
    p = aqm_dequeue (&l->cls[c], t);
  l->on_wire = p;
  if (p == NULL)
    return;
  uint64_t start = t > p->enq_ns ? t : p->enq_ns;
  uint64_t sojourn = start - p->enq_ns;
  uint64_t bin = sojourn / SOJOURN_BIN_NS;
  l->sojourn[bin < LINK_SOJOURN_BINS ? bin : LINK_SOJOURN_BINS]++;
  if (sojourn > l->max_sojourn_ns)
    l->max_sojourn_ns = sojourn;
  long s = sec_index (l, start);
  if (sec_reserve (l, s)) {
    l->sec_sojourn_ns[s] += sojourn;
    l->sec_sojourn_n[s]++;
  }
  uint64_t tx = (uint64_t) ((double) p->len * 8e9 / link_rate_at (l, start));
  p->depart_ns = start + tx;
  l->free_ns = p->depart_ns;
  add_busy (l, start, p->depart_ns);
}

void
link_arrive (Link *l, LabPkt *p, size_t hdr, uint64_t t_ns)
{
  const uint8_t *ip = p->data + hdr;
  size_t iplen = p->frame_len - hdr;
  p->len = (uint32_t) iplen + 14;
  p->hash = aqm_flow_hash (ip, iplen, HASH_SEED);
  p->cls = 1;
  p->src = 0;
  if (iplen >= 20 && (ip[0] >> 4) == 4)
    memcpy (&p->src, ip + 12, 4);
  if (l->n_cls == 2 && p->src != 0 && p->src == l->prio_addr)
    p->cls = 0;
  if (sec_index (l, t_ns) >= 0)
    l->src_packets[src_slot (l, p->src)]++;
  clock_ns = t_ns;
  aqm_enqueue (&l->cls[l->n_cls == 2 ? p->cls : 0], p, t_ns);
  if (l->on_wire == NULL)
    start_next (l, t_ns > l->free_ns ? t_ns : l->free_ns);
}

void
link_service (Link *l, uint64_t now_ns)
{
  while (l->on_wire && l->on_wire->depart_ns <= now_ns) {
    LabPkt *p = l->on_wire;
    l->write (l->ctx, p);
    uint64_t late = now_ns - p->depart_ns, bin = late / LATE_BIN_NS;
    l->late[bin < LINK_LATE_BINS ? bin : LINK_LATE_BINS]++;
    if (late > l->max_late_ns)
      l->max_late_ns = late;
    l->packets++;
    l->bytes += p->len;
    long s = sec_index (l, now_ns);
    if (sec_reserve (l, s))
      l->sec_bytes[s] += p->len;
    uint64_t t = p->depart_ns;
    free (p->data);
    free (p);
    l->on_wire = NULL;
    start_next (l, t);                     /* back to back: from the scheduled end */
  }
}

/* The bin holding quantile @q of @n counts in @bins (@len + 1 of them). */
static size_t
quantile_bin (const uint64_t *bins64, const uint32_t *bins32, size_t len, double q)
{
  uint64_t total = 0, seen = 0;
  for (size_t b = 0; b <= len; b++)
    total += bins64 ? bins64[b] : bins32[b];
  if (total == 0)
    return 0;
  uint64_t want = (uint64_t) (q * (double) total);
  for (size_t b = 0; b <= len; b++) {
    seen += bins64 ? bins64[b] : bins32[b];
    if (seen > want)
      return b;
  }
  return len;
}

static void
series (FILE *f, const char *name, const Link *l, size_t n, double (*value) (const Link *, size_t))
{
  fprintf (f, "\"%s\": [", name);
  for (size_t s = 0; s < n; s++)
    fprintf (f, "%s%.6g", s ? ", " : "", value (l, s));
  fprintf (f, "]");
}

static double v_bytes (const Link *l, size_t s) { return (double) l->sec_bytes[s]; }
static double v_busy (const Link *l, size_t s) { return (double) l->sec_busy_ns[s] / 1e6; }
static double v_drops (const Link *l, size_t s) { return (double) l->sec_drops[s]; }
static double
v_sojourn (const Link *l, size_t s)
{
  return l->sec_sojourn_n[s] ? (double) l->sec_sojourn_ns[s] / (double) l->sec_sojourn_n[s] / 1e6 : -1;
}
static double
v_capacity (const Link *l, size_t s)
{
  return capacity_bits (l, (uint64_t) s * 1000000000ull, (uint64_t) (s + 1) * 1000000000ull) / 8;
}

void
link_write_stats (const Link *l, FILE *f)
{
  static const char *kinds[] = { "droptail", "codel", "fq_codel" };
  double lw = LATE_BIN_NS / 1000.0, sw = SOJOURN_BIN_NS / 1e6;
  fprintf (f, "\"kind\": \"%s\", \"classes\": %d, \"packets\": %llu, \"bytes\": %llu, "
              "\"drops_aqm\": %llu, \"drops_limit\": %llu, ",
           kinds[l->cls[0].cfg.kind], l->n_cls, (unsigned long long) l->packets,
           (unsigned long long) l->bytes, (unsigned long long) l->drops_codel,
           (unsigned long long) l->drops_limit);
  fprintf (f, "\"late_p50_us\": %.0f, \"late_p99_us\": %.0f, \"late_max_us\": %llu, ",
           (double) (quantile_bin (l->late, NULL, LINK_LATE_BINS, 0.5) + 1) * lw,
           (double) (quantile_bin (l->late, NULL, LINK_LATE_BINS, 0.99) + 1) * lw,
           (unsigned long long) (l->max_late_ns / 1000));
  fprintf (f, "\"sojourn_p50_ms\": %.2f, \"sojourn_p95_ms\": %.2f, \"sojourn_p99_ms\": %.2f, "
              "\"sojourn_max_ms\": %.2f, \"trace_points\": %zu, \"trace_started\": %s, ",
           ((double) quantile_bin (NULL, l->sojourn, LINK_SOJOURN_BINS, 0.5) + 0.5) * sw,
           ((double) quantile_bin (NULL, l->sojourn, LINK_SOJOURN_BINS, 0.95) + 0.5) * sw,
           ((double) quantile_bin (NULL, l->sojourn, LINK_SOJOURN_BINS, 0.99) + 0.5) * sw,
           (double) l->max_sojourn_ns / 1e6, l->n_trace, l->t0_ns ? "true" : "false");
  /* the last second is cut short by the stop: leave it out */
  size_t n = 0;
  for (size_t s = 0; s < l->n_sec; s++)
    if (l->sec_bytes[s] || l->sec_busy_ns[s] || l->sec_drops[s])
      n = s;
  fprintf (f, "\"seconds\": {");
  series (f, "delivered_bytes", l, n, v_bytes);
  fprintf (f, ", ");
  series (f, "capacity_bytes", l, n, v_capacity);
  fprintf (f, ", ");
  series (f, "busy_ms", l, n, v_busy);
  fprintf (f, ", ");
  series (f, "drops", l, n, v_drops);
  fprintf (f, ", ");
  series (f, "sojourn_ms", l, n, v_sojourn);
  fprintf (f, "}, \"sources\": [");
  for (size_t i = 0; i < l->n_src; i++) {
    const uint8_t *a = (const uint8_t *) &l->src_addr[i];
    fprintf (f, "%s{\"addr\": \"%u.%u.%u.%u\", \"packets\": %llu, \"drops\": %llu}",
             i ? ", " : "", a[0], a[1], a[2], a[3], (unsigned long long) l->src_packets[i],
             (unsigned long long) l->src_drops[i]);
  }
  if (l->src_packets[LINK_SOURCES] || l->src_drops[LINK_SOURCES])
    fprintf (f, ", {\"addr\": \"other\", \"packets\": %llu, \"drops\": %llu}",
             (unsigned long long) l->src_packets[LINK_SOURCES],
             (unsigned long long) l->src_drops[LINK_SOURCES]);
  fprintf (f, "], \"drop_log\": [");
  for (size_t k = 0; k < l->n_drop_log; k++) {
    const LinkDrop *d = &l->drop_log[k];
    const uint8_t *a = (const uint8_t *) &d->src;
    fprintf (f, "%s[%.3f, \"%u.%u.%u.%u\", %.1f, %u, %u]", k ? ", " : "", (double) d->t_ns / 1e6,
             a[0], a[1], a[2], a[3], d->sojourn_us / 1e3, d->backlog, d->len);
  }
  fprintf (f, "]");
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-domain — what bwssd's rounds cost for 100 to 10 000 flows on real
 * sockets that carry data: bwssd's CPU time per 10 ms of wall time (the
 * control period), while it measures the domain's flows, runs the laws and
 * sets their windows.  A benchmark, not a test.
 *
 *   bench-domain [--idle] [--video] [FLOWS...]   (default: 100 1000 10000)
 *
 * The flows are loopback TCP connections from a sender process, which
 * writes MSS-sized chunks round-robin at SEND_BYTES_PER_S in all (so every
 * flow carries data, a few kB/s each at 10 000 flows; with --idle it
 * writes nothing: flows that are open and quiet; with --video the first of
 * them has a minimum, VIDEO_MIN_BPS, below what the sender gives it: a
 * video playing beside the domain's flows, which brings bwssd's rounds to
 * every control period), to two receivers: this
 * process and a child, half the flows each (so each stays within an
 * ordinary fd limit, as a domain's flows belong to several processes),
 * each a client of the domain that hands its sockets to bwssd (started by
 * the first client: $BWSS_BWSSD, else the installed one) and reads them in
 * a thread of its own.  After WARMUP_US (bwssd holds and controls every
 * flow), bwssd's process CPU clock (clock_getcpuclockid(3): all its
 * threads) is read at every WINDOW_US of wall time for WINDOWS windows or
 * MEASURE_MAX_US, whichever ends first; printed: the median, the 99th
 * percentile and the worst window's CPU time, scaled to 10 ms of wall time
 * (a window the machine stretched counts for its length), and bwssd's mean
 * share of one core.  Loopback flows have a loopback RTT (tens of µs): the
 * laws see them so.  Needs an fd limit of at least N + 64 for N flows (and
 * bwssd one of N + 64: its own limit is raised to its hard limit).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <bwss/domain.h>

#define WINDOWS           1000
#define WINDOW_US         10000               /* the control period */
#define MEASURE_MAX_US    (20 * G_USEC_PER_SEC)
#define WARMUP_US         (3 * G_USEC_PER_SEC)
#define SEND_BYTES_PER_S  (20 * 1000 * 1000)  /* 160 Mbit/s over all flows */
#define SEND_TICK_US      10000
#define CHUNK             1448                /* one segment */
/* --video: the first flow's minimum, bit/s — below the sender's share of
 * each flow at 1000 flows (160 kbit/s), so that the video is not short
 * of it and the laws hold it as they hold a video that keeps up. */
#define VIDEO_MIN_BPS     100000.0

/* ---- the sender: accepts every flow and writes round-robin ---- */

static gboolean idle_flows;                   /* --idle: the sender writes nothing */
static gboolean video_flow;                   /* --video: the first flow has a minimum */

static void G_GNUC_NORETURN
sender (int listener, int n)
{
  int *fds = g_new (int, n);
  for (int i = 0; i < n; i++) {
    fds[i] = accept4 (listener, NULL, NULL, SOCK_NONBLOCK);
    if (fds[i] < 0)
      _exit (1);
  }
  static char chunk[CHUNK];
  int next = 0;
  while (idle_flows)
    pause ();
  for (;;) {
    int budget = SEND_BYTES_PER_S / (G_USEC_PER_SEC / SEND_TICK_US) / CHUNK;
    for (int tries = 0; budget > 0 && tries < n; tries++) {
      if (write (fds[next], chunk, sizeof chunk) > 0)
        budget--;                             /* a full window: its turn again later */
      next = (next + 1) % n;
    }
    g_usleep (SEND_TICK_US);
  }
}

/* ---- a receiver: its flows, a reading thread ---- */

typedef struct {
  BwssDomain *domain;
  int        *fds;
  int         n;
  int         epoll;
  gint64      bytes;                          /* read so far (atomic) */
} Receiver;

static void
connect_flows (Receiver *r, const struct sockaddr_in *a, int n, gboolean video)
{
  r->fds = g_new (int, n);
  r->n = n;
  r->epoll = epoll_create1 (EPOLL_CLOEXEC);
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < n; i++) {
    int c = socket (AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect (c, (const struct sockaddr *) a, sizeof *a) != 0)
      g_error ("connect: %s", g_strerror (errno));
    fcntl (c, F_SETFL, O_NONBLOCK);
    BwssFlow *f;
    p.weight = 1 + i % 4;
    p.min_rate_bps = video && i == 0 ? VIDEO_MIN_BPS : 0;
    int err = bwss_flow_register (r->domain, c, &p, &f);
    if (err)
      g_error ("register: %s", bwss_strerror (err));
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = c };
    epoll_ctl (r->epoll, EPOLL_CTL_ADD, c, &ev);
    r->fds[i] = c;
  }
}

static gpointer
read_thread (gpointer data)
{
  Receiver *r = data;
  static __thread char buf[65536];
  struct epoll_event evs[256];
  for (;;) {
    int k = epoll_wait (r->epoll, evs, G_N_ELEMENTS (evs), -1);
    for (int i = 0; i < k; i++) {
      ssize_t got;
      while ((got = read (evs[i].data.fd, buf, sizeof buf)) > 0)
        __atomic_fetch_add (&r->bytes, got, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

/* ---- bwssd's CPU per window ---- */

static int
by_value (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static gint64
clock_us (clockid_t clk)
{
  struct timespec ts;
  if (clock_gettime (clk, &ts) != 0)
    return -1;
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* Sleeps until @t µs of CLOCK_MONOTONIC. */
static void
sleep_until (gint64 t)
{
  struct timespec ts = { .tv_sec = t / G_USEC_PER_SEC, .tv_nsec = (t % G_USEC_PER_SEC) * 1000 };
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

static void
bench (int n)
{
  g_autofree char *name = g_strdup_printf ("bwss-bench-%d-%d", (int) getpid (), n);
  int l = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  if (bind (l, (struct sockaddr *) &a, sizeof a) != 0 || listen (l, 4096) != 0
      || getsockname (l, (struct sockaddr *) &a, &len) != 0)
    g_error ("listener: %s", g_strerror (errno));
  pid_t send_pid = fork ();
  if (send_pid == 0)
    sender (l, n);
  close (l);

  int ready[2];
  if (pipe (ready) != 0)
    g_error ("pipe");
  pid_t child = fork ();
  if (child == 0) {                           /* the other client: half the flows */
    Receiver r = { 0 };
    if (bwss_domain_open (name, BWSS_DOMAIN_THREAD, &r.domain) != 0)
      _exit (1);
    connect_flows (&r, &a, n / 2, FALSE);
    g_thread_new ("reader", read_thread, &r);
    char b = 1;
    if (write (ready[1], &b, 1) != 1)
      _exit (1);
    for (;;)
      pause ();
  }
  char b;
  if (read (ready[0], &b, 1) != 1)
    g_error ("the child could not register its flows");
  Receiver r = { 0 };
  if (bwss_domain_open (name, BWSS_DOMAIN_THREAD, &r.domain) != 0)
    g_error ("domain");
  connect_flows (&r, &a, n - n / 2, video_flow);
  g_thread_new ("reader", read_thread, &r);

  g_usleep (WARMUP_US);                       /* every flow handed over and controlled */
  BwssDomainStats st;
  clockid_t clk;
  if (bwss_domain_get_stats (r.domain, &st) != 0 || st.controller_pid <= 0
      || clock_getcpuclockid (st.controller_pid, &clk) != 0)
    g_error ("no bwssd to measure");
  gint64 *cpu = g_new (gint64, WINDOWS), spent = 0;
  gint64 bytes0 = __atomic_load_n (&r.bytes, __ATOMIC_RELAXED);
  gint64 t0 = g_get_monotonic_time (), c0 = clock_us (clk), t = t0, c = c0;
  int windows = 0;
  while (windows < WINDOWS && t < t0 + MEASURE_MAX_US) {
    sleep_until (t + WINDOW_US);
    gint64 t1 = g_get_monotonic_time (), c1 = clock_us (clk);
    if (c1 < 0)
      g_error ("bwssd is gone");
    cpu[windows++] = (c1 - c) * WINDOW_US / MAX (t1 - t, 1);   /* per 10 ms of wall time */
    spent += c1 - c;
    t = t1;
    c = c1;
  }
  gint64 elapsed = t - t0;
  double read_bps = (double) (__atomic_load_n (&r.bytes, __ATOMIC_RELAXED) - bytes0) * 8.0 / ((double) elapsed / 1e6);
  bwss_domain_get_stats (r.domain, &st);
  qsort (cpu, (size_t) windows, sizeof *cpu, by_value);
  printf ("| %d | %u | %d | %.0f | %.0f | %.0f | %.0f | %.1f %% |\n",
          n, st.n_flows, windows, read_bps / 1e6, (double) cpu[windows / 2],
          (double) cpu[(windows * 99) / 100], (double) cpu[windows - 1],
          100.0 * (double) spent / (double) elapsed);
  fflush (stdout);
  g_free (cpu);
  kill (child, SIGKILL);
  kill (send_pid, SIGKILL);
  waitpid (child, NULL, 0);
  waitpid (send_pid, NULL, 0);
  bwss_domain_close (r.domain);               /* bwssd leaves once its clients are gone */
  for (int i = 0; i < r.n; i++)
    close (r.fds[i]);                         /* the reading thread sees nothing more */
  close (ready[0]);
  close (ready[1]);
}

int
main (int argc, char **argv)
{
  struct rlimit rl;
  getrlimit (RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit (RLIMIT_NOFILE, &rl);
  signal (SIGPIPE, SIG_IGN);
  int defaults[] = { 100, 1000, 10000 };
  for (; argc > 1 && g_str_has_prefix (argv[1], "--"); argv++, argc--) {
    if (g_str_equal (argv[1], "--idle"))
      idle_flows = TRUE;
    else if (g_str_equal (argv[1], "--video"))
      video_flow = TRUE;
    else {
      fprintf (stderr, "bench-domain: unknown option %s (--idle, --video)\n", argv[1]);
      return 2;
    }
  }
  printf ("| flows | in the domain | 10-ms windows | read by this process's half, Mbit/s "
          "| bwssd's CPU µs per 10 ms: median | p99 | worst | bwssd: one core |\n"
          "|---|---|---|---|---|---|---|---|\n");
  int n_sizes = argc > 1 ? argc - 1 : (int) G_N_ELEMENTS (defaults);
  for (int i = 0; i < n_sizes; i++) {
    int n = argc > 1 ? atoi (argv[i + 1]) : defaults[i];
    if (n < 2) {
      fprintf (stderr, "bench-domain: %s is not a number of flows (2 or more)\n", argv[i + 1]);
      return 2;
    }
    if ((rlim_t) n + 64 > rl.rlim_cur) {
      printf ("| %d | skipped: fd limit %llu |\n", n, (unsigned long long) rl.rlim_cur);
      continue;
    }
    bench (n);
  }
  return 0;
}

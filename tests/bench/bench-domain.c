/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-domain — cost of one controller round of the domain on real
 * sockets that carry data, for 100 to 10 000 flows: bwss_domain_dispatch()
 * of the process that holds the controller role, which measures every flow
 * of the domain (sock_diag), runs the laws, publishes a window per slot and
 * applies the windows of its own flows.  A benchmark, not a test.
 *
 *   bench-domain [--idle] [FLOWS...]   (default: 100 1000 10000)
 *
 * The flows are loopback TCP connections from a sender process, which
 * writes MSS-sized chunks round-robin at SEND_BYTES_PER_S in all (so every
 * flow carries data, a few kB/s each at 10 000 flows; with --idle it
 * writes nothing: flows that are open and quiet), to two receivers:
 * this process (the controller) and a child (a participant with
 * BWSS_DOMAIN_NO_CONTROLLER), half the flows each, so each stays within an
 * ordinary fd limit, as a domain's flows belong to several processes.  Each
 * receiver reads its sockets in a thread of its own and dispatches at the
 * time the domain asks for, as a real participant does.  After WARMUP_US
 * (the controller has learned every flow), the controller's dispatches
 * are timed for ROUNDS rounds or MEASURE_MAX_US, whichever ends first;
 * printed: the median, the 99th percentile and the worst round, in CPU time
 * (the thread's: what the round costs) and in wall-clock time (what it
 * took, preemption by the machine's other work included), and the mean
 * share of one core at the domain's period.  Needs an fd limit of at
 * least N + 64 for N flows.
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

#define ROUNDS            1000
#define MEASURE_MAX_US    (20 * G_USEC_PER_SEC)
#define WARMUP_US         (2 * G_USEC_PER_SEC)
#define SEND_BYTES_PER_S  (20 * 1000 * 1000)  /* 160 Mbit/s over all flows */
#define SEND_TICK_US      10000
#define CHUNK             1448                /* one segment */

/* ---- the sender: accepts every flow and writes round-robin ---- */

static gboolean idle_flows;                   /* --idle: the sender writes nothing */

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
connect_flows (Receiver *r, const struct sockaddr_in *a, int n)
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

/* ---- the controller's rounds ---- */

static int
by_value (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static gint64
cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static void
sleep_until (gint64 t)
{
  gint64 now = g_get_monotonic_time ();
  if (t > now)
    g_usleep ((gulong) (t - now));
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
  if (child == 0) {                           /* the participant: half the flows */
    Receiver r = { 0 };
    if (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &r.domain) != 0)
      _exit (1);
    connect_flows (&r, &a, n / 2);
    g_thread_new ("reader", read_thread, &r);
    char b = 1;
    if (write (ready[1], &b, 1) != 1)
      _exit (1);
    for (;;)
      g_usleep ((gulong) bwss_domain_dispatch (r.domain, 0));
  }
  char b;
  if (read (ready[0], &b, 1) != 1)
    g_error ("the child could not register its flows");
  Receiver r = { 0 };
  if (bwss_domain_open (name, 0, &r.domain) != 0)
    g_error ("domain");
  connect_flows (&r, &a, n - n / 2);
  g_thread_new ("reader", read_thread, &r);

  gint64 start = g_get_monotonic_time (), next = start;
  while (g_get_monotonic_time () < start + WARMUP_US) {  /* the role taken, every flow learned */
    sleep_until (next);
    next = g_get_monotonic_time () + (gint64) bwss_domain_dispatch (r.domain, 0);
  }
  gint64 *took = g_new (gint64, ROUNDS), *cpu = g_new (gint64, ROUNDS), spent = 0, period = 0;
  gint64 bytes0 = __atomic_load_n (&r.bytes, __ATOMIC_RELAXED), t0 = g_get_monotonic_time ();
  int rounds = 0;
  while (rounds < ROUNDS && g_get_monotonic_time () < t0 + MEASURE_MAX_US) {
    sleep_until (next);
    gint64 t = g_get_monotonic_time (), c = cpu_us ();
    period = (gint64) bwss_domain_dispatch (r.domain, 0);
    cpu[rounds] = cpu_us () - c;
    took[rounds] = g_get_monotonic_time () - t;
    next = t + period;
    spent += cpu[rounds++];
  }
  gint64 elapsed = g_get_monotonic_time () - t0;
  double read_bps = (double) (__atomic_load_n (&r.bytes, __ATOMIC_RELAXED) - bytes0) * 8.0 / ((double) elapsed / 1e6);
  BwssDomainStats st;
  bwss_domain_get_stats (r.domain, &st);
  qsort (took, (size_t) rounds, sizeof *took, by_value);
  qsort (cpu, (size_t) rounds, sizeof *cpu, by_value);
  printf ("| %d | %u | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f %% |\n",
          n, st.n_flows, rounds, read_bps / 1e6, (double) cpu[rounds / 2],
          (double) cpu[(rounds * 99) / 100], (double) cpu[rounds - 1], (double) took[rounds / 2],
          (double) took[(rounds * 99) / 100], (double) took[rounds - 1],
          100.0 * (double) spent / rounds / (double) period);
  fflush (stdout);
  g_free (took);
  g_free (cpu);
  kill (child, SIGKILL);
  kill (send_pid, SIGKILL);
  waitpid (child, NULL, 0);
  waitpid (send_pid, NULL, 0);
  for (int i = 0; i < r.n; i++)
    close (r.fds[i]);                         /* the reading thread sees nothing more */
  g_autofree char *path = NULL;
  char seg[4096];
  if (bwss_domain_path (name, "", seg, sizeof seg) == 0)
    path = g_strdup (seg);
  bwss_domain_close (r.domain);
  if (path)
    unlink (path);
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
  if (argc > 1 && g_str_equal (argv[1], "--idle")) {
    idle_flows = TRUE;
    argv++;
    argc--;
  }
  printf ("| flows | in the domain | rounds | read by the controller's half, Mbit/s "
          "| CPU µs: median | p99 | worst | wall µs: median | p99 | worst "
          "| one core at the period (CPU) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-domain — cost of one controller round of the domain on real
 * sockets, for 100 to 10 000 flows: bwss_domain_dispatch() of the process
 * that holds the controller role, which dumps every TCP socket of the
 * namespace (sock_diag), runs the laws and publishes a window per slot,
 * and applies the windows of its own flows.  A benchmark, not a test.
 *
 * The flows are loopback TCP pairs, half registered by this process and
 * half by a child (so each stays within an ordinary fd limit, as a domain's
 * flows belong to several processes); they carry no data, so the laws
 * decide every flow at its floor.  Needs an fd limit of at least N + 64 for
 * N flows.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <bwss/domain.h>

#define ROUNDS 200

/* A connected loopback pair; returns the client end (the receiver). */
static int
loopback_pair (int listener, const struct sockaddr_in *a)
{
  int c = socket (AF_INET, SOCK_STREAM, 0);
  if (c < 0 || connect (c, (const struct sockaddr *) a, sizeof *a) != 0 || accept (listener, NULL, NULL) < 0)
    g_error ("loopback pair: %s", g_strerror (errno));
  return c;
}

/* Registers @n loopback flows in @d. */
static void
register_flows (BwssDomain *d, int n)
{
  int l = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  if (bind (l, (struct sockaddr *) &a, sizeof a) != 0 || listen (l, 128) != 0
      || getsockname (l, (struct sockaddr *) &a, &len) != 0)
    g_error ("listener: %s", g_strerror (errno));
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < n; i++) {
    BwssFlow *f;
    p.weight = 1 + i % 4;
    int err = bwss_flow_register (d, loopback_pair (l, &a), &p, &f);
    if (err)
      g_error ("register: %s", bwss_strerror (err));
  }
  close (l);
}

static void
bench (int n)
{
  g_autofree char *name = g_strdup_printf ("bwss-bench-%d-%d", (int) getpid (), n);
  int ready[2];
  if (pipe (ready) != 0)
    g_error ("pipe");
  pid_t child = fork ();
  if (child == 0) {
    BwssDomain *d;
    if (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      _exit (1);
    register_flows (d, n / 2);
    char b = 1;
    if (write (ready[1], &b, 1) != 1)
      _exit (1);
    for (;;)
      pause ();
  }
  char b;
  if (read (ready[0], &b, 1) != 1)
    g_error ("the child could not register its flows");
  BwssDomain *d;
  if (bwss_domain_open (name, 0, &d) != 0)
    g_error ("domain");
  register_flows (d, n - n / 2);
  for (int i = 0; i < 20; i++)                 /* take the role, learn every flow */
    bwss_domain_dispatch (d, 0);
  gint64 spent = 0, worst = 0;
  for (int i = 0; i < ROUNDS; i++) {
    gint64 t = g_get_monotonic_time ();
    bwss_domain_dispatch (d, 0);
    t = g_get_monotonic_time () - t;
    spent += t;
    worst = MAX (worst, t);
  }
  BwssDomainStats st;
  bwss_domain_get_stats (d, &st);
  printf ("%5d flows (%u in the domain): %8.1f µs per round (worst %lld), %5.1f %% of one core "
          "at the 10-ms period\n", n, st.n_flows, (double) spent / ROUNDS, (long long) worst,
          (double) spent / ROUNDS / 100.0);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  bwss_domain_close (d);
  g_autofree char *path = g_strdup_printf ("/%s", name);
  shm_unlink (path);
  close (ready[0]);
  close (ready[1]);
}

int
main (void)
{
  struct rlimit rl;
  getrlimit (RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit (RLIMIT_NOFILE, &rl);
  int sizes[] = { 100, 1000, 10000 };
  for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++) {
    if ((rlim_t) sizes[i] + 64 > rl.rlim_cur) {
      printf ("%5d flows: skipped (fd limit %llu)\n", sizes[i], (unsigned long long) rl.rlim_cur);
      continue;
    }
    bench (sizes[i]);
  }
  return 0;
}

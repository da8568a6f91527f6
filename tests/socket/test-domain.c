/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-domain.c — the domain's control plane on real loopback TCP sockets:
 * clients hand their flows to bwssd (started by the first of them:
 * $BWSS_BWSSD), which controls them.  Registration rules, groups, a killed
 * client's flows given back (the clamp really goes back), a killed bwssd's
 * flows given back by their client and bwssd started again, a socket
 * closed without a word, clients that lie to bwssd or flood it, the
 * autostarted bwssd leaving with its last client, bwss-top, the GLib
 * source, idling, a burst of hand-overs while bwssd reads nothing.  Each test uses its own domain (its own bwssd).
 */
#define BWSS_USE_UNSTABLE_API        /* BwssParams: the control period the dispatch returns */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <bwss/domain.h>
#include <bwss/bwss-glib.h>
#include "wire.h"

#ifndef TCP_WINDOW_CLAMP
#define TCP_WINDOW_CLAMP 10
#endif

/* Waits are bounded, never measured: the deadline is only a hang guard. */
#define WAIT_LIMIT_US (20 * G_USEC_PER_SEC)

/* A name unique on the machine: two isolated runs (isolated.sh) can share
 * a PID; their PID namespaces' inodes tell them apart. */
static char *
domain_name (const char *what)
{
  struct stat st;
  unsigned long ns = stat ("/proc/self/ns/pid", &st) == 0 ? (unsigned long) st.st_ino : 0;

  return g_strdup_printf ("bwss-test-%s-%d-%lu", what, (int) getpid (), ns);
}

static uint64_t
mono_us (void)
{
  return (uint64_t) g_get_monotonic_time ();
}

/* A connected loopback TCP pair: *client (the receiver we register) and
 * *server.  The listener is closed. */
static void
tcp_pair (int *client, int *server)
{
  int l = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  g_assert_cmpint (bind (l, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (l, 4), ==, 0);
  g_assert_cmpint (getsockname (l, (struct sockaddr *) &a, &len), ==, 0);
  *client = socket (AF_INET, SOCK_STREAM, 0);
  g_assert_cmpint (connect (*client, (struct sockaddr *) &a, sizeof a), ==, 0);
  *server = accept (l, NULL, NULL);
  g_assert_cmpint (*server, >=, 0);
  close (l);
}

/* tcp_pair() with 64 kB sent through it, so the kernel has an RTT for the
 * flow and the controller something to measure. */
static void
tcp_pair_with_data (int *client, int *server)
{
  tcp_pair (client, server);
  char buf[65536];
  memset (buf, 1, sizeof buf);
  g_assert_cmpint (write (*server, buf, sizeof buf), ==, (ssize_t) sizeof buf);
  g_assert_cmpint (read (*client, buf, sizeof buf), >, 0);
}

static uint32_t
clamp_of (int fd)
{
  int v = 0;
  socklen_t len = sizeof v;
  g_assert_cmpint (getsockopt (fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &len), ==, 0);
  return (uint32_t) v;
}

/* The clamp a socket given back has: the free clamp, 65535 << its receive
 * window scale (knob_give_back_clamp(); these sockets' buffers are the
 * kernel's).  The tests move no data between a give-back and this read, so
 * the kernel has not written the clamp since. */
static uint32_t
given_back (int fd)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  g_assert_cmpint (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len), ==, 0);
  return 65535u << ti.tcpi_rcv_wscale;
}

/* Moves data through @c (read) from @s (written, non-blocking). */
static void
pump (int c, int s)
{
  static char buf[65536];
  if (write (s, buf, sizeof buf) < 0)
    g_assert_cmpint (errno, ==, EAGAIN);
  while (read (c, buf, sizeof buf) > 0)
    ;
}

static void
nonblocking (int fd)
{
  g_assert_cmpint (fcntl (fd, F_SETFL, O_NONBLOCK), ==, 0);
}

/* Waits (moving data from @s to @c unless @c is -1: autotuning then raises
 * no clamp; dispatching @d) until @f's window is set by bwssd
 * (@want) or not; returns FALSE at the hang guard. */
static gboolean
wait_controlled (BwssDomain *d, BwssFlow *f, int c, int s, gboolean want)
{
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  BwssFlowStats st = { 0 };
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());
    if (c >= 0)
      pump (c, s);
    if (bwss_flow_get_stats (f, &st) == 0 && (st.controlled && st.window_bytes) == want)
      return TRUE;
    g_usleep (10000);
  }
  return FALSE;
}

/* Returns the number of flows of @d listed. */
static size_t
listed (BwssDomain *d)
{
  static BwssFlowInfo rows[BWSS_DOMAIN_MAX_FLOWS];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n), ==, 0);
  return n;
}

/* Waits until @d lists @want flows; returns FALSE at the hang guard. */
static gboolean
wait_listed (BwssDomain *d, size_t want)
{
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline) {
    if (listed (d) == want)
      return TRUE;
    g_usleep (10000);
  }
  return FALSE;
}

static pid_t
bwssd_of (BwssDomain *d)
{
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  return ds.controller_pid;
}

static gboolean
wait_gone (pid_t pid)
{
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline && kill (pid, 0) == 0)
    g_usleep (20000);
  return kill (pid, 0) != 0;
}

/* ---- names, limits, registration ---- */

static void
test_names_and_limits (void)
{
  const char *bad[] = { "", ".", "..", ".hidden", "a/b", "/x", "bad name", "tab\t",
                        "0123456789012345678901234567890123456789012345678901234567890123x" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    BwssDomain *d = NULL;
    g_assert_cmpint (bwss_domain_check_name (bad[i]), ==, BWSS_EINVAL);
    g_assert_cmpint (bwss_domain_open (bad[i], 0, &d), ==, BWSS_EINVAL);
    g_assert_null (d);
  }
  g_assert_cmpint (bwss_domain_check_name (NULL), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_domain_check_name ("0123456789012345678901234567890123456789012345678901234567890123"),
                   ==, 0);
  /* an empty $BWSS_DOMAIN is an error, never the user's own domain */
  g_autofree char *saved = g_strdup (g_getenv ("BWSS_DOMAIN"));
  g_setenv ("BWSS_DOMAIN", "", TRUE);
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE, &d), ==, BWSS_EINVAL);
  if (saved)
    g_setenv ("BWSS_DOMAIN", saved, TRUE);
  else
    g_unsetenv ("BWSS_DOMAIN");

  /* no bwssd and not allowed to start one: BWSS_ENOENT */
  g_autofree char *name = domain_name ("limits");
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &d), ==, BWSS_ENOENT);

  /* preferences beyond the shared limits are refused and change nothing */
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  BwssFlow *f = NULL;
  BwssPrefs over[] = { { .priority = BWSS_PRIORITY_MAX + 1, .weight = 1 },
                       { .priority = BWSS_PRIORITY_MIN - 1, .weight = 1 },
                       { .weight = 2e9 }, { .weight = 1, .min_rate_bps = 2e15 } };
  for (size_t i = 0; i < G_N_ELEMENTS (over); i++)
    g_assert_cmpint (bwss_flow_register (d, c, &over[i], &f), ==, BWSS_EINVAL);
  BwssPrefs ok = { .priority = BWSS_PRIORITY_MAX, .weight = BWSS_WEIGHT_MAX, .min_rate_bps = BWSS_RATE_MAX_BPS };
  g_assert_cmpint (bwss_flow_register (d, c, &ok, &f), ==, 0);
  for (size_t i = 0; i < G_N_ELEMENTS (over); i++)
    g_assert_cmpint (bwss_flow_set_prefs (f, &over[i]), ==, BWSS_EINVAL);
  BwssFlowInfo rows[2];
  size_t n;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 2, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpfloat (rows[0].stats.prefs.weight, ==, BWSS_WEIGHT_MAX);
  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (d);
}

static void
test_register_rules (void)
{
  g_autofree char *name = domain_name ("register");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  BwssPrefs p = { .priority = 3, .min_rate_bps = 100e3, .weight = 2 };
  BwssFlow *f = NULL, *g = NULL;
  g_assert_cmpint (bwss_flow_register_as (d, c, &p, "test rules", 0, &f), ==, 0);
  g_assert_cmpint (bwss_flow_register (d, c, &p, &g), ==, BWSS_EEXIST);

  /* not connected TCP: UDP, UNIX, a listener, a closed fd */
  int u = socket (AF_INET, SOCK_DGRAM, 0), x = socket (AF_UNIX, SOCK_STREAM, 0);
  int l = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  g_assert_cmpint (bind (l, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (l, 1), ==, 0);
  g_assert_cmpint (bwss_flow_register (d, u, &p, &g), ==, BWSS_EBADF);
  g_assert_cmpint (bwss_flow_register (d, x, &p, &g), ==, BWSS_EBADF);
  g_assert_cmpint (bwss_flow_register (d, l, &p, &g), ==, BWSS_EBADF);
  g_assert_cmpint (bwss_flow_register (d, 9999, &p, &g), ==, BWSS_EBADF);
  BwssPrefs bad = { .weight = -1 };
  g_assert_cmpint (bwss_flow_register (d, s, &bad, &g), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_flow_register_as (d, s, &p, "tab\there", 0, &g), ==, BWSS_EINVAL);

  BwssFlowInfo rows[8];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].pid, ==, getpid ());
  g_assert_cmpint (rows[0].participant, ==, getpid ());
  g_assert_cmpstr (rows[0].origin, ==, "test rules");
  g_assert_cmpfloat (rows[0].stats.prefs.weight, ==, 2);
  g_assert_true (g_str_has_prefix (rows[0].remote, "127.0.0.1:"));

  /* preferences change; bad ones change nothing */
  BwssPrefs q = { .priority = 9, .min_rate_bps = 0, .weight = 5 };
  g_assert_cmpint (bwss_flow_set_prefs (f, &q), ==, 0);
  g_assert_cmpint (bwss_flow_set_prefs (f, &bad), ==, BWSS_EINVAL);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
  g_assert_cmpint (st.prefs.priority, ==, 9);
  g_assert_cmpfloat (st.prefs.weight, ==, 5);

  bwss_flow_unregister (f);
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 0);
  close (c); close (s); close (u); close (x); close (l);
  bwss_domain_close (d);
}

/* ---- groups: an application is one download ---- */

/* Four flows of this process sharing its share and one alone, under the
 * paper's loop (no demand caps: the targets are the TRAS's alone; bwssd
 * is started with this process's environment): the group is listed as
 * process/4, the alone one as a flow, and the four together get what the
 * one gets (eq. 5g), a quarter each (eq. 5m).  Bad shares change nothing. */
static void
test_groups (void)
{
  g_autofree char *name = domain_name ("groups");
  g_setenv ("BWSS_LOOP", "paper", TRUE);
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  g_unsetenv ("BWSS_LOOP");
  enum { N = 5 };
  int c[N], sv[N];
  BwssFlow *f[N];
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < N; i++) {
    tcp_pair_with_data (&c[i], &sv[i]);
    g_assert_cmpint (bwss_flow_register (d, c[i], &p, &f[i]), ==, 0);
    if (i < 4)
      g_assert_cmpint (bwss_flow_set_share (f[i], BWSS_SHARE_PROCESS), ==, 0);
    nonblocking (sv[i]);
    nonblocking (c[i]);
  }
  g_assert_cmpint (bwss_flow_set_share (f[4], (BwssShare) 4), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_flow_set_share (f[4], BWSS_SHARE_STREAM), ==, BWSS_EINVAL);   /* needs its number */
  g_assert_cmpint (bwss_flow_set_share (NULL, BWSS_SHARE_FLOW), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_flow_set_stream (NULL, 1), ==, BWSS_EINVAL);

  BwssFlowInfo rows[8];
  BwssFlowGroup groups[8];
  size_t n = 0;
  if (access ("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {   /* a unit: cgroup v2 */
    g_assert_cmpint (bwss_flow_set_share (f[4], BWSS_SHARE_UNIT), ==, 0);
    g_assert_cmpint (bwss_domain_list_flow_groups (d, rows, groups, 8, &n), ==, 0);
    size_t units = 0;
    for (size_t i = 0; i < n; i++)
      if (groups[i].share == BWSS_SHARE_UNIT) {
        g_assert_cmpuint (groups[i].members, ==, 1);
        g_assert_cmpuint (groups[i].group, !=, 0);
        units++;
      }
    g_assert_cmpuint (units, ==, 1);
    g_assert_cmpint (bwss_flow_set_share (f[4], BWSS_SHARE_FLOW), ==, 0);
  }
  g_assert_cmpint (bwss_domain_list_flow_groups (d, rows, groups, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, N);
  uint64_t key = 0;
  for (size_t i = 0; i < n; i++) {
    if (groups[i].group == 0) {
      g_assert_cmpint (groups[i].share, ==, BWSS_SHARE_FLOW);
      g_assert_cmpuint (groups[i].members, ==, 1);
    } else {
      g_assert_cmpint (groups[i].share, ==, BWSS_SHARE_PROCESS);
      g_assert_cmpuint (groups[i].members, ==, 4);
      g_assert_true (key == 0 || key == groups[i].group);
      key = groups[i].group;
    }
  }
  g_assert_cmpuint (key, !=, 0);

  BwssFlowStats st[N];
  bool all = false;
  for (uint64_t t0 = mono_us (); !all && mono_us () - t0 < WAIT_LIMIT_US;) {
    for (int i = 0; i < N; i++)
      pump (c[i], sv[i]);
    all = true;
    for (int i = 0; i < N; i++)
      all = all && bwss_flow_get_stats (f[i], &st[i]) == 0 && st[i].target_bps > 0;
    if (all) {                         /* one round: the five read between two rounds */
      double sum = 0;
      for (int i = 0; i < 4; i++)
        sum += st[i].target_bps;
      all = fabs (sum - st[4].target_bps) <= 1e-6 * st[4].target_bps;
    }
    g_usleep (10000);
  }
  g_assert_true (all);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (st[i].target_bps, st[0].target_bps, 1e-6 * st[0].target_bps);
  g_test_message ("group of 4: %.0f bit/s each, the one alone %.0f", st[0].target_bps, st[4].target_bps);
  for (int i = 0; i < N; i++) {
    bwss_flow_unregister (f[i]);
    close (c[i]);
    close (sv[i]);
  }
  bwss_domain_close (d);
}

/* A client process that registers @n sockets of @socks with minimum @min,
 * all in its stream @stream, says so on @ready and exits (without a word
 * to bwssd) when @go is written or closed. */
static pid_t
spawn_stream_client (const char *name, const int *socks, int n, double min, guint32 stream, int ready,
                     int go)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  BwssDomain *cd = NULL;
  BwssPrefs p = { .priority = 0, .min_rate_bps = min, .weight = 1 };
  if (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &cd) != 0)
    _exit (1);
  for (int i = 0; i < n; i++) {
    BwssFlow *f = NULL;
    if (bwss_flow_register (cd, socks[i], &p, &f) != 0 || bwss_flow_set_stream (f, stream) != 0)
      _exit (1);
  }
  char b = 'r';
  if (write (ready, &b, 1) != 1)
    _exit (1);
  while (read (go, &b, 1) < 0 && errno == EINTR)
    ;
  _exit (0);
}

/* What one stream key holds in a listing. */
typedef struct {
  guint64 key;
  pid_t   pid;                 /* its flows' owner (-1: more than one) */
  double  min;                 /* its flows' minimum (-1: more than one) */
  guint   rows, members;
} StreamSeen;

/* Lists @d's flows and sorts those of a stream by key into @out (at most
 * @max keys).  Returns the number of keys, or -1 if a row is not a
 * stream's or a listing's member count disagrees with its rows. */
static int
streams_of (BwssDomain *d, StreamSeen *out, int max)
{
  BwssFlowInfo rows[16];
  BwssFlowGroup groups[16];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flow_groups (d, rows, groups, G_N_ELEMENTS (rows), &n), ==, 0);
  int keys = 0;
  for (size_t i = 0; i < n; i++) {
    if (groups[i].share != BWSS_SHARE_STREAM || groups[i].group == 0)
      return -1;
    int k = 0;
    while (k < keys && out[k].key != groups[i].group)
      k++;
    if (k == max)
      return -1;
    if (k == keys) {
      out[k] = (StreamSeen) { .key = groups[i].group, .pid = rows[i].pid,
                              .min = rows[i].stats.prefs.min_rate_bps, .members = groups[i].members };
      keys++;
    }
    out[k].pid = out[k].pid == rows[i].pid ? out[k].pid : -1;
    out[k].min = out[k].min == rows[i].stats.prefs.min_rate_bps ? out[k].min : -1;
    out[k].rows++;
    if (groups[i].members != out[k].members)
      return -1;
  }
  for (int k = 0; k < keys; k++)
    if (out[k].members != out[k].rows)
      return -1;
  return keys;
}

static guint32
live_flows (BwssDomain *d)
{
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  return ds.n_flows;
}

/* Two processes give the same stream number: two streams in bwssd (a
 * process's numbers are its own), each of its client's flows with its
 * client's minimum; a client that exits takes its stream with it, and the
 * other's stays as it was.  The count of live flows follows. */
static void
test_streams (void)
{
  g_autofree char *name = domain_name ("streams");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  enum { PER = 2 };
  const double min[2] = { 1e6, 128e3 };
  int c[2][PER], s[2][PER], ready[2], go[2][2];
  pid_t pid[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  for (int j = 0; j < 2; j++) {
    for (int i = 0; i < PER; i++)
      tcp_pair_with_data (&c[j][i], &s[j][i]);
    g_assert_cmpint (pipe (go[j]), ==, 0);
    pid[j] = spawn_stream_client (name, c[j], PER, min[j], 7, ready[1], go[j][0]);
    close (go[j][0]);
    char b;
    g_assert_cmpint (read (ready[0], &b, 1), ==, 1);
  }
  close (ready[0]);
  close (ready[1]);

  StreamSeen seen[4];
  int keys = -1;
  for (uint64_t t0 = mono_us (); mono_us () - t0 < WAIT_LIMIT_US; g_usleep (10000))
    if ((keys = streams_of (d, seen, 4)) == 2 && seen[0].rows == PER && seen[1].rows == PER)
      break;
  g_assert_cmpint (keys, ==, 2);
  for (int k = 0; k < 2; k++) {
    g_assert_cmpuint (seen[k].rows, ==, PER);
    int j = seen[k].pid == pid[0] ? 0 : 1;
    g_assert_cmpint (seen[k].pid, ==, pid[j]);
    g_assert_cmpfloat (seen[k].min, ==, min[j]);
    g_test_message ("stream 7 of %d: key %#" G_GINT64_MODIFIER "x, %u flows at %.0f bit/s",
                    (int) seen[k].pid, seen[k].key, seen[k].rows, seen[k].min);
  }
  g_assert_cmpint (seen[0].pid, !=, seen[1].pid);
  g_assert_cmpuint (live_flows (d), ==, 2 * PER);

  /* the first exits: its stream goes, the second's stays */
  int k0 = seen[0].pid == pid[0] ? 0 : 1;
  StreamSeen kept = seen[1 - k0];
  g_assert_cmpint (write (go[0][1], "x", 1), ==, 1);   /* the second holds this pipe's end too */
  int status;
  g_assert_cmpint (waitpid (pid[0], &status, 0), ==, pid[0]);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_true (wait_listed (d, PER));
  g_assert_cmpint (streams_of (d, seen, 4), ==, 1);
  g_assert_cmpuint (seen[0].key, ==, kept.key);
  g_assert_cmpint (seen[0].pid, ==, pid[1]);
  g_assert_cmpfloat (seen[0].min, ==, min[1]);
  g_assert_cmpuint (seen[0].members, ==, PER);
  g_assert_cmpuint (live_flows (d), ==, PER);

  g_assert_cmpint (write (go[1][1], "x", 1), ==, 1);
  g_assert_cmpint (waitpid (pid[1], &status, 0), ==, pid[1]);
  g_assert_true (wait_listed (d, 0));
  g_assert_cmpuint (live_flows (d), ==, 0);
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < PER; i++) {
      close (c[j][i]);
      close (s[j][i]);
    }
  for (int j = 0; j < 2; j++)
    close (go[j][1]);
  bwss_domain_close (d);
}

/* ---- deaths ---- */

/* Forks a client that registers @sock in domain @name, named @comm if not
 * NULL, and waits.  Returns its pid once it is registered. */
static pid_t
spawn_client (const char *name, int sock, const char *comm)
{
  int ready[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t pid = fork ();
  if (pid == 0) {
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (comm)
      prctl (PR_SET_NAME, comm, 0, 0, 0);
    BwssDomain *cd = NULL;
    BwssFlow *f = NULL;
    BwssPrefs p = { .priority = 2, .weight = 1 };
    if (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &cd) || bwss_flow_register (cd, sock, &p, &f)
        || write (ready[1], "r", 1) != 1)
      _exit (1);
    for (;;)
      pause ();
  }
  char b;
  g_assert_cmpint (read (ready[0], &b, 1), ==, 1);
  close (ready[0]);
  close (ready[1]);
  return pid;
}

/* A client killed with a flow bwssd controls: bwssd gives the socket back
 * (its clamp as before, through bwssd's duplicate) and forgets the flow. */
static void
test_client_killed (void)
{
  g_autofree char *name = domain_name ("client-killed");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  nonblocking (c);
  nonblocking (s);
  uint32_t original = clamp_of (c);
  pid_t child = spawn_client (name, c, NULL);
  BwssFlowInfo rows[8];
  size_t n = 0;
  g_assert_true (wait_listed (d, 1));          /* its hand-over, on its own connection */
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].pid, ==, child);
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline && clamp_of (c) == original) {
    pump (c, s);
    g_usleep (10000);
  }
  g_test_message ("original clamp %u, bwssd's window %u", original, clamp_of (c));
  g_assert_cmpuint (clamp_of (c), !=, original);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  g_assert_true (wait_listed (d, 0));
  g_assert_cmpuint (clamp_of (c), ==, given_back (c));
  close (c); close (s);
  bwss_domain_close (d);
}

/* bwssd killed while it controls a flow: its client gives the socket back
 * itself (it still holds it), starts bwssd again and hands the flow over
 * again, controlled once more. */
static void
test_bwssd_killed (void)
{
  g_autofree char *name = domain_name ("bwssd-killed");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  nonblocking (c);
  nonblocking (s);
  uint32_t original = clamp_of (c);
  BwssFlow *f = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  g_assert_true (wait_controlled (d, f, c, s, TRUE));
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
  g_test_message ("clamp %u before, %u under bwssd (its window %u, mss %u)", original, clamp_of (c),
                  st.window_bytes, st.mss);
  g_assert_cmpuint (clamp_of (c), !=, original);
  pid_t first = bwssd_of (d);
  g_assert_cmpint (first, >, 0);
  kill (first, SIGKILL);
  g_assert_true (wait_gone (first));
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline && clamp_of (c) != given_back (c)) {
    bwss_domain_dispatch (d, mono_us ());
    g_usleep (10000);
  }
  g_assert_cmpuint (clamp_of (c), ==, given_back (c));
  g_assert_true (wait_controlled (d, f, c, s, TRUE));
  pid_t second = bwssd_of (d);
  g_test_message ("bwssd %d killed, %d started", (int) first, (int) second);
  g_assert_cmpint (second, >, 0);
  g_assert_cmpint (second, !=, first);
  bwss_flow_unregister (f);
  g_assert_cmpuint (clamp_of (c), ==, given_back (c));
  close (c); close (s);
  bwss_domain_close (d);
}

/* A socket its program closes without unregistering: bwssd's duplicate
 * does not keep the connection open (the peer sees its end), and the flow
 * leaves the domain. */
static void
test_closed_unannounced (void)
{
  g_autofree char *name = domain_name ("closed");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  BwssFlow *f = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  g_assert_true (wait_listed (d, 1));
  close (c);
  struct pollfd pf = { .fd = s, .events = POLLIN };
  g_assert_cmpint (poll (&pf, 1, WAIT_LIMIT_US / 1000), ==, 1);
  char b;
  g_assert_cmpint (read (s, &b, 1), ==, 0);                        /* the peer's FIN */
  g_assert_true (wait_listed (d, 0));
  bwss_flow_unregister (f);
  close (s);
  bwss_domain_close (d);
}

/* A socket closed before its flow was unregistered, and its fd number given
 * again to another socket (another thread's connection, as a GStreamer
 * element's stripes get the numbers of connections libsoup just closed): the
 * new socket registers — the number names another socket, not a duplicate —
 * the old flow's late unregister leaves it alone, and the same socket twice
 * is still refused. */
static void
test_fd_reused (void)
{
  g_autofree char *name = domain_name ("reused");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  BwssFlow *f = NULL, *g = NULL, *h = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  g_assert_true (wait_listed (d, 1));
  int c2, s2;
  tcp_pair_with_data (&c2, &s2);
  g_assert_cmpint (dup2 (c2, c), ==, c);          /* c's socket closed, its number now c2's socket */
  close (c2);
  g_assert_cmpint (bwss_flow_register (d, c, &p, &g), ==, 0);
  g_assert_cmpint (bwss_flow_register (d, c, &p, &h), ==, BWSS_EEXIST);
  g_assert_true (wait_listed (d, 1));             /* the old one noticed gone, the new one listed */
  bwss_flow_unregister (f);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (g, &st), ==, 0);
  g_assert_true (wait_listed (d, 1));
  bwss_flow_unregister (g);
  g_assert_true (wait_listed (d, 0));
  close (c); close (s); close (s2);
  bwss_domain_close (d);
}

/* A forked child's handles are inert and its exit takes nothing of the
 * parent's: the parent's flow stays handed over. */
static void
test_fork (void)
{
  g_autofree char *name = domain_name ("fork");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  BwssFlow *f = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  pid_t child = fork ();
  if (child == 0) {
    bwss_flow_unregister (f);
    bwss_domain_close (d);
    _exit (0);
  }
  int status;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_cmpuint (listed (d), ==, 1);
  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (d);
}

/* ---- clients that lie or flood ---- */

static int
raw_client (const char *name)
{
  char path[PATH_MAX];
  g_assert_cmpint (bwss_domain_path (name, ".sock", path, sizeof path), ==, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy (sa.sun_path, path, sizeof sa.sun_path);
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  g_assert_cmpint (connect (fd, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  return fd;
}

/* Sends the message @msg (@len bytes) on @h with @fd. */
static void
send_with_fd (int h, void *msg, size_t len, int fd)
{
  struct iovec iov = { .iov_base = msg, .iov_len = len };
  union { char buf[CMSG_SPACE (sizeof (int))]; struct cmsghdr align; } u;
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  g_assert_cmpint (sendmsg (h, &mh, 0), ==, (ssize_t) len);
}

/* Returns TRUE if bwssd closed @fd within the hang guard. */
static gboolean
closed_by_bwssd (int fd)
{
  char buf[4096];
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline) {
    struct pollfd pf = { .fd = fd, .events = POLLIN };
    if (poll (&pf, 1, 100) == 1 && recv (fd, buf, sizeof buf, MSG_DONTWAIT) == 0)
      return TRUE;
  }
  return FALSE;
}

/* Another client names our flow's id (its ids are its own: nothing of
 * ours changes), hands over something that is no TCP socket (refused),
 * floods bwssd with requests it never reads (our reads are still
 * answered), sends what is no message, and speaks the wire version before
 * ours (its connection is closed, its socket not taken). */
static void
test_hostile_clients (void)
{
  g_autofree char *name = domain_name ("hostile");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  BwssFlow *f = NULL;
  BwssPrefs p = { .priority = 4, .weight = 3 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);

  int h = raw_client (name);
  for (uint64_t id = 0; id < 64; id++) {
    WireFlow m = { .h = { .version = WIRE_VERSION, .type = WIRE_UPDATE, .flow = id },
                   .prefs = { .priority = -7, .weight = 1000 }, .share = BWSS_SHARE_PROCESS };
    g_assert_cmpint (send (h, &m, sizeof m, 0), ==, (ssize_t) sizeof m);
    WireHead u = { .version = WIRE_VERSION, .type = WIRE_UNREGISTER, .flow = id };
    g_assert_cmpint (send (h, &u, sizeof u, 0), ==, (ssize_t) sizeof u);
  }
  /* a UDP socket handed over: REJECT */
  int udp = socket (AF_INET, SOCK_DGRAM, 0);
  WireFlow r = { .h = { .version = WIRE_VERSION, .type = WIRE_REGISTER, .seq = 7, .flow = 1 },
                 .prefs = { .weight = 1 }, .origin = "x" };
  send_with_fd (h, &r, sizeof r, udp);
  WireMsg back;
  struct pollfd pf = { .fd = h, .events = POLLIN };
  g_assert_cmpint (poll (&pf, 1, WAIT_LIMIT_US / 1000), ==, 1);
  g_assert_cmpint (recv (h, &back, sizeof back, 0), >=, (ssize_t) sizeof back.h);
  g_assert_cmpint (back.h.type, ==, WIRE_REJECT);
  g_assert_cmpint (back.h.arg, ==, BWSS_EBADF);
  close (udp);
  /* a flood of requests never read */
  WireHead q = { .version = WIRE_VERSION, .type = WIRE_GET_DOMAIN };
  int sent = 0;
  while (sent < 100000 && send (h, &q, sizeof q, MSG_DONTWAIT) == (ssize_t) sizeof q)
    sent++;
  g_test_message ("%d requests queued unread", sent);
  BwssFlowInfo rows[4];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 4, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].stats.prefs.priority, ==, 4);
  g_assert_cmpfloat (rows[0].stats.prefs.weight, ==, 3);
  g_assert_cmpint (rows[0].participant, ==, getpid ());
  close (h);

  /* not a message: closed, nothing else changes */
  h = raw_client (name);
  WireHead junk = { .version = WIRE_VERSION + 1, .type = WIRE_LIST };
  g_assert_cmpint (send (h, &junk, sizeof junk, 0), ==, (ssize_t) sizeof junk);
  g_assert_true (closed_by_bwssd (h));
  close (h);
  h = raw_client (name);
  g_assert_cmpint (send (h, "x", 1, 0), ==, 1);
  g_assert_true (closed_by_bwssd (h));
  close (h);
  /* a library of the wire version before hands its socket over: closed,
   * the socket not taken (its clamp as it was) */
  int oc, os;
  tcp_pair_with_data (&oc, &os);
  uint32_t clamp = clamp_of (oc);
  h = raw_client (name);
  WireFlow old = { .h = { .version = WIRE_VERSION - 1, .type = WIRE_REGISTER, .seq = 1, .flow = 1 },
                   .prefs = { .weight = 1 }, .fd = oc, .origin = "old" };
  send_with_fd (h, &old, sizeof old, oc);
  g_assert_true (closed_by_bwssd (h));
  close (h);
  g_assert_cmpuint (clamp_of (oc), ==, clamp);
  close (oc); close (os);
  g_assert_cmpuint (listed (d), ==, 1);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
  g_assert_cmpint (st.prefs.priority, ==, 4);

  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (d);
}

/* ---- sharing switched off and on ---- */

static void
test_suspend_resume (void)
{
  g_autofree char *name = domain_name ("suspend");
  BwssDomain *d = NULL, *other = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &other), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  nonblocking (c);
  nonblocking (s);
  BwssFlow *f = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  g_assert_true (wait_controlled (d, f, -1, -1, TRUE));
  g_assert_cmpint (bwss_domain_set_suspended (other, true), ==, 0);
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_true (ds.suspended);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);     /* given back before the answer */
  g_assert_false (st.controlled);
  g_assert_cmpuint (clamp_of (c), ==, given_back (c));
  g_assert_cmpuint (listed (d), ==, 1);                      /* still handed over */
  g_usleep (200000);                                         /* and it stays released */
  g_assert_cmpuint (clamp_of (c), ==, given_back (c));
  g_assert_cmpint (bwss_domain_set_suspended (other, false), ==, 0);
  g_assert_true (wait_controlled (d, f, -1, -1, TRUE));
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_false (ds.suspended);
  g_assert_cmpint (bwss_domain_set_suspended (NULL, true), ==, BWSS_EINVAL);
  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (other);
  bwss_domain_close (d);
}

/* ---- the autostarted bwssd ---- */

/* Started by the first client, it leaves once the last one is gone (its
 * socket with it); a client that may not start one finds none then. */
static void
test_autostart_exits (void)
{
  g_autofree char *name = domain_name ("autostart");
  BwssDomain *d = NULL, *e = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  pid_t pid = bwssd_of (d);
  g_assert_cmpint (pid, >, 0);
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &e), ==, 0);
  g_assert_cmpint (bwssd_of (e), ==, pid);
  bwss_domain_close (d);
  bwss_domain_close (e);
  g_assert_true (wait_gone (pid));
  char path[PATH_MAX];
  g_assert_cmpint (bwss_domain_path (name, ".sock", path, sizeof path), ==, 0);
  g_assert_cmpint (access (path, F_OK), !=, 0);
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &d), ==, BWSS_ENOENT);
}

/* ---- bwss-top ---- */

static int
run_top (const char *name, const char *const *args, char **out)
{
  const char *top = g_getenv ("BWSS_TOP");
  g_assert_nonnull (top);
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) top);
  g_ptr_array_add (argv, (gpointer) "--domain");
  g_ptr_array_add (argv, (gpointer) name);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  int status = -1;
  g_autofree char *err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                               &err, &status, NULL));
  g_ptr_array_free (argv, TRUE);
  if (err && *err)
    g_test_message ("bwss-top: %s", err);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Its JSON is valid whatever a client's name is (not UTF-8, quotes,
 * control bytes), and its header counts the flows of live clients. */
static void
test_top_output (void)
{
  g_autofree char *name = domain_name ("topjson");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  pid_t child = spawn_client (name, c, "\xff\"\\\x01z");
  g_assert_true (wait_listed (d, 1));
  g_autofree char *out = NULL;
  const char *json_args[] = { "--once", "--json", NULL };
  g_assert_cmpint (run_top (name, json_args, &out), ==, 0);
  g_test_message ("%s", out);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  JsonArray *flows = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "flows");
  g_assert_cmpuint (json_array_get_length (flows), ==, 1);
  JsonObject *flow = json_array_get_object_element (flows, 0);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (flow, "command"), "\"\\\x01z"));
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  g_assert_true (wait_listed (d, 0));
  g_autofree char *table = NULL;
  const char *table_args[] = { "--once", NULL };
  g_assert_cmpint (run_top (name, table_args, &table), ==, 0);
  g_test_message ("%s", table);
  g_assert_nonnull (strstr (table, "flows 0\n"));
  close (c); close (s);
  bwss_domain_close (d);
}

/* ---- GLib, idling ---- */

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

typedef struct {
  BwssFlow  *f;
  GMainLoop *loop;
  int        c, s;
} Watch;

static gboolean
quit_when_controlled (gpointer data)
{
  Watch *w = data;
  BwssFlowStats st;
  pump (w->c, w->s);
  if (bwss_flow_get_stats (w->f, &st) == 0 && st.controlled && st.window_bytes) {
    g_main_loop_quit (w->loop);
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

/* A domain run from a GLib main loop: its flow is controlled. */
static void
test_glib_source (void)
{
  g_autofree char *name = domain_name ("glib");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  Watch w = { .loop = g_main_loop_new (NULL, FALSE) };
  tcp_pair_with_data (&w.c, &w.s);
  nonblocking (w.c);
  nonblocking (w.s);
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, w.c, &p, &w.f), ==, 0);
  guint id = bwss_domain_attach (d, NULL);
  g_timeout_add (20, quit_when_controlled, &w);
  guint guard = g_timeout_add_seconds (20, quit_loop, w.loop);   /* hang guard only */
  g_main_loop_run (w.loop);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (w.f, &st), ==, 0);
  g_assert_true (st.controlled);
  g_source_remove (id);
  g_source_remove (guard);
  g_main_loop_unref (w.loop);
  bwss_flow_unregister (w.f);
  close (w.c); close (w.s);
  bwss_domain_close (d);
}

/* The dispatch asks for the next whole second of CLOCK_MONOTONIC with no
 * flow, the next whole half second with flows bwssd controls (it asks
 * bwssd for a sign of life), and the control period while a flow's reads
 * are paced here. */
static void
test_idle_dispatch_delay (void)
{
  g_autofree char *name = domain_name ("idle-delay");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  BwssParams p;
  bwss_params_init (&p);
  uint64_t now = mono_us ();
  uint64_t wait = bwss_domain_dispatch (d, now);
  g_assert_cmpuint (wait, >, 0);
  g_assert_cmpuint (wait, <=, G_USEC_PER_SEC);
  g_assert_cmpuint ((now + wait) % G_USEC_PER_SEC, ==, 0);
  int c, sv;
  tcp_pair_with_data (&c, &sv);
  BwssFlow *f = NULL;
  BwssPrefs prefs = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &prefs, &f), ==, 0);
  now = mono_us ();
  wait = bwss_domain_dispatch (d, now);
  g_assert_cmpuint ((now + wait) % (G_USEC_PER_SEC / 2), ==, 0);   /* its sign of life */
  g_assert_cmpint (bwss_flow_offer_read_pacing (f), ==, 0);
  g_assert_cmpuint (bwss_domain_dispatch (d, mono_us ()), ==, p.min_phi_us);
  bwss_flow_unregister (f);
  now = mono_us ();
  wait = bwss_domain_dispatch (d, now);
  g_assert_cmpuint ((now + wait) % G_USEC_PER_SEC, ==, 0);
  g_assert_cmpuint (bwss_domain_dispatch (NULL, 0), ==, G_USEC_PER_SEC);
  close (c); close (sv);
  bwss_domain_close (d);
}

typedef struct {
  GMainContext *context;
  gint          iterations;
  gint          stop;
} Worker;

static gpointer
iterate_context (gpointer data)
{
  Worker *w = data;
  g_main_context_push_thread_default (w->context);
  while (!g_atomic_int_get (&w->stop)) {
    g_main_context_iteration (w->context, TRUE);
    g_atomic_int_inc (&w->iterations);
  }
  g_main_context_pop_thread_default (w->context);
  return NULL;
}

/* bwss_domain_source_new() on a worker thread's own main context wakes it
 * once a second with no flow; with one bwssd controls, twice a second to
 * ask for a sign of life and twice for its answer. */
static void
test_glib_source_idle (void)
{
  g_autofree char *name = domain_name ("glib-idle");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  g_assert_cmpint (bwss_domain_get_fd (NULL), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_domain_get_fd (d), >=, 0);
  Worker w = { .context = g_main_context_new () };
  GSource *src = bwss_domain_source_new (d);
  g_source_attach (src, w.context);
  GThread *t = g_thread_new ("worker", iterate_context, &w);
  g_usleep (500000);
  gint before = g_atomic_int_get (&w.iterations);
  g_usleep (2500000);
  gint idle = g_atomic_int_get (&w.iterations) - before;
  g_assert_cmpint (idle, <=, 4);

  int c, sv;
  tcp_pair_with_data (&c, &sv);
  BwssFlow *f = NULL;
  BwssPrefs prefs = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &prefs, &f), ==, 0);
  g_usleep (200000);
  before = g_atomic_int_get (&w.iterations);
  g_usleep (2500000);
  gint controlled = g_atomic_int_get (&w.iterations) - before;
  g_test_message ("wakeups in 2.5 s: %d with no flow, %d with one", idle, controlled);
  g_assert_cmpint (controlled, <=, 12);          /* 4 a second: the sign of life, its answer */

  g_atomic_int_set (&w.stop, 1);
  g_main_context_wakeup (w.context);
  g_thread_join (t);
  g_source_destroy (src);
  g_source_unref (src);
  g_main_context_unref (w.context);
  bwss_flow_unregister (f);
  close (c); close (sv);
  bwss_domain_close (d);
}

/* ---- many flows ---- */

static gboolean
fd_limit_at_least (rlim_t want)
{
  struct rlimit rl;
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &rl), ==, 0);
  if (rl.rlim_cur >= want)
    return TRUE;
  if (rl.rlim_max < want)
    return FALSE;
  rl.rlim_cur = want;
  return setrlimit (RLIMIT_NOFILE, &rl) == 0;
}

static size_t
count_controlled (BwssDomain *d, size_t *n_listed)
{
  static BwssFlowInfo rows[BWSS_DOMAIN_MAX_FLOWS];
  size_t n = 0, controlled = 0;
  int err = bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n);
  if (err == BWSS_EBUSY) {             /* bwssd is behind on this client's hand-overs: later */
    g_test_message ("list: busy");
    return 0;
  }
  g_assert_cmpint (err, ==, 0);
  for (size_t i = 0; i < n; i++)
    if (rows[i].stats.controlled && rows[i].stats.target_bps >= 0.0 && rows[i].stats.window_bytes > 0)
      controlled++;
  *n_listed = n;
  return controlled;
}

static gboolean
wait_all_controlled (BwssDomain *d, size_t want)
{
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  size_t n = 0;
  while (mono_us () < deadline) {
    if (count_controlled (d, &n) == want && n == want)
      return TRUE;
    g_usleep (20000);
  }
  g_test_message ("%zu listed", n);
  return FALSE;
}

/* 1000 real flows of one client are handed over, listed and every one
 * controlled; half unregistered, the rest stay controlled, new ones join. */
#define MANY 1000
static void
test_many_flows (void)
{
  if (!fd_limit_at_least (4 * MANY + 64)) {
    g_test_skip ("the fd hard limit is below 4000");
    return;
  }
  g_autofree char *name = domain_name ("many");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  static int c[MANY], s[MANY];
  static BwssFlow *f[MANY];
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < MANY; i++) {
    tcp_pair_with_data (&c[i], &s[i]);
    p.weight = 1 + i % 3;
    g_assert_cmpint (bwss_flow_register (d, c[i], &p, &f[i]), ==, 0);
  }
  g_assert_true (wait_all_controlled (d, MANY));
  for (int i = 0; i < MANY; i += 2) {
    bwss_flow_unregister (f[i]);
    close (c[i]);
    close (s[i]);
  }
  g_assert_true (wait_all_controlled (d, MANY / 2));
  for (int i = 0; i < MANY; i += 2) {
    tcp_pair_with_data (&c[i], &s[i]);
    g_assert_cmpint (bwss_flow_register (d, c[i], &p, &f[i]), ==, 0);
  }
  g_assert_true (wait_all_controlled (d, MANY));
  for (int i = 0; i < MANY; i++) {
    bwss_flow_unregister (f[i]);
    close (c[i]);
    close (s[i]);
  }
  bwss_domain_close (d);
}

/* ---- a burst of hand-overs while bwssd reads nothing ---- */

/* The inodes of this process's SOCK_SEQPACKET Unix sockets, comma-separated, as
 * one string: the domain's connection is the only one the test makes. */
static char *
seqpacket_sockets (void)
{
  g_autofree char *table = NULL;
  g_assert_true (g_file_get_contents ("/proc/net/unix", &table, NULL, NULL));
  g_autoptr (GHashTable) seqpacket = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) lines = g_strsplit (table, "\n", -1);
  for (guint i = 1; lines[i]; i++) {
    g_auto (GStrv) f = g_strsplit_set (g_strstrip (lines[i]), " ", -1);
    guint n = 0;
    const char *field[8] = { NULL };
    for (guint k = 0; f[k] && n < G_N_ELEMENTS (field); k++)
      if (*f[k])
        field[n++] = f[k];
    if (n >= 7 && strcmp (field[4], "0005") == 0)
      g_hash_table_add (seqpacket, g_strdup (field[6]));
  }
  g_autoptr (GPtrArray) mine = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  g_assert_nonnull (dir);
  for (const char *e; (e = g_dir_read_name (dir));) {
    g_autofree char *path = g_strdup_printf ("/proc/self/fd/%s", e);
    g_autofree char *link = g_file_read_link (path, NULL);
    if (link && g_str_has_prefix (link, "socket:[")) {
      link[strlen (link) - 1] = '\0';
      if (g_hash_table_contains (seqpacket, link + 8))
        g_ptr_array_add (mine, g_strdup (link + 8));
    }
  }
  g_ptr_array_add (mine, NULL);
  return g_strjoinv (",", (char **) mine->pdata);
}

/* The flows bwss-top (another process) lists in @name, -1 if it did not
 * answer with them. */
static int
top_flows (const char *name)
{
  g_autofree char *out = NULL;
  const char *args[] = { "--once", "--json", NULL };
  if (run_top (name, args, &out) != 0)
    return -1;
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, out, -1, NULL))
    return -1;
  return (int) json_array_get_length (json_object_get_array_member (
    json_node_get_object (json_parser_get_root (parser)), "flows"));
}

/* A client with its own dispatch thread registers MANY flows at once while
 * bwssd is stopped (far more hand-overs than the connection's buffer
 * holds): every registration returns at once, and once bwssd runs again
 * the client's thread hands them all over on the connection it had, with
 * no call of the test's to drive it (bwss-top, another process, counts). */
static void
test_burst_stopped_bwssd (void)
{
  if (!fd_limit_at_least (4 * MANY + 64)) {
    g_test_skip ("the fd hard limit is below 4000");
    return;
  }
  g_autofree char *name = domain_name ("burst");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_THREAD, &d), ==, 0);
  static int c[MANY + 1], s[MANY + 1];
  static BwssFlow *f[MANY + 1];
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  tcp_pair_with_data (&c[MANY], &s[MANY]);
  g_assert_cmpint (bwss_flow_register (d, c[MANY], &p, &f[MANY]), ==, 0);
  g_assert_true (wait_listed (d, 1));
  pid_t daemon = bwssd_of (d);
  g_assert_cmpint (daemon, >, 0);
  g_autofree char *before = seqpacket_sockets ();
  g_assert_cmpstr (before, !=, "");
  g_assert_null (strchr (before, ','));

  kill (daemon, SIGSTOP);
  for (int i = 0; i < MANY; i++) {
    tcp_pair_with_data (&c[i], &s[i]);
    g_assert_cmpint (bwss_flow_register (d, c[i], &p, &f[i]), ==, 0);
  }
  g_usleep (G_USEC_PER_SEC);             /* stopped longer than a client waits for anything */
  kill (daemon, SIGCONT);

  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  int n = -1;
  while (mono_us () < deadline && (n = top_flows (name)) != MANY + 1)
    g_usleep (100000);
  g_test_message ("bwss-top lists %d flows", n);
  g_assert_cmpint (n, ==, MANY + 1);
  g_autofree char *after = seqpacket_sockets ();
  g_test_message ("the domain's connection: %s before the burst, %s after", before, after);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpint (bwssd_of (d), ==, daemon);

  for (int i = 0; i <= MANY; i++) {
    bwss_flow_unregister (f[i]);
    close (c[i]);
    close (s[i]);
  }
  g_assert_true (wait_listed (d, 0));
  bwss_domain_close (d);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  signal (SIGPIPE, SIG_IGN);
  g_test_add_func ("/domain/names-and-limits", test_names_and_limits);
  g_test_add_func ("/domain/register-rules", test_register_rules);
  g_test_add_func ("/domain/groups", test_groups);
  g_test_add_func ("/domain/streams", test_streams);
  g_test_add_func ("/domain/client-killed", test_client_killed);
  g_test_add_func ("/domain/bwssd-killed", test_bwssd_killed);
  g_test_add_func ("/domain/closed-unannounced", test_closed_unannounced);
  g_test_add_func ("/domain/fd-reused", test_fd_reused);
  g_test_add_func ("/domain/fork", test_fork);
  g_test_add_func ("/domain/hostile-clients", test_hostile_clients);
  g_test_add_func ("/domain/suspend-resume", test_suspend_resume);
  g_test_add_func ("/domain/autostart-exits", test_autostart_exits);
  g_test_add_func ("/domain/top/output", test_top_output);
  g_test_add_func ("/domain/glib-source", test_glib_source);
  g_test_add_func ("/domain/idle/dispatch-delay", test_idle_dispatch_delay);
  g_test_add_func ("/domain/idle/glib-source", test_glib_source_idle);
  g_test_add_func ("/domain/many-flows", test_many_flows);
  g_test_add_func ("/domain/burst/stopped-bwssd", test_burst_stopped_bwssd);
  return g_test_run ();
}

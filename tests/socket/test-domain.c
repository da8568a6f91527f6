/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-domain.c — the per-user domain on real loopback TCP sockets: bad
 * segments refused and left untouched, registration rules, a killed
 * participant reclaimed, a killed controller's windows released (the clamp
 * really goes back) and its role taken over, a lock holder killed inside
 * the lock.  Each test uses its own domain name.
 */
#define BWSS_USE_UNSTABLE_API        /* BwssParams: the control period the dispatch returns */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <bwss/domain.h>
#include <bwss/bwss-glib.h>
#include "segment.h"

#ifndef TCP_WINDOW_CLAMP
#define TCP_WINDOW_CLAMP 10
#endif

/* Waits are bounded, never measured: the deadline is only a hang guard. */
#define WAIT_LIMIT_US (20 * G_USEC_PER_SEC)

static char *
domain_name (const char *what)
{
  return g_strdup_printf ("bwss-test-%s-%d", what, (int) getpid ());
}

/* Returns the path of domain @name's segment (the library's to say). */
static char *
segment_file (const char *name)
{
  char path[PATH_MAX];
  g_assert_cmpint (bwss_domain_path (name, "", path, sizeof path), ==, 0);
  return g_strdup (path);
}

static void
unlink_domain (const char *name)
{
  g_autofree char *path = segment_file (name);
  unlink (path);
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

/* Writes @size bytes of @fill as the segment @name with @mode. */
static void
make_segment (const char *name, size_t size, const void *head, size_t head_len, mode_t mode)
{
  g_autofree char *path = segment_file (name);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, mode);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fchmod (fd, mode), ==, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) size), ==, 0);
  if (head_len)
    g_assert_cmpint (pwrite (fd, head, head_len, 0), ==, (ssize_t) head_len);
  close (fd);
}

static char *
segment_digest (const char *name)
{
  g_autofree char *path = segment_file (name);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

/* Fills @s as a valid empty segment header would be (its lock included). */
static void
fill_valid_header (Segment *s)
{
  memset (s, 0, sizeof *s);
  s->magic = SEG_MAGIC;
  s->version = SEG_VERSION;
  s->header_size = offsetof (Segment, slots);
  s->slot_size = sizeof (SegSlot);
  s->max_flows = SEG_MAX_FLOWS;
  s->owner_uid = geteuid ();
  pthread_mutexattr_t a;
  pthread_mutexattr_init (&a);
  pthread_mutexattr_setpshared (&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust (&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init (&s->lock, &a);
  pthread_mutexattr_destroy (&a);
}

/* A valid active slot @i of this process. */
static void
fill_valid_slot (Segment *s, uint32_t i)
{
  s->slots[i].state = SLOT_ACTIVE;
  s->slots[i].gen = 1;
  s->slots[i].pid = getpid ();
  s->slots[i].prefs.weight = 1;
  s->n_flows++;
  if (s->slot_hwm <= i)
    s->slot_hwm = i + 1;
}

/* ---- bad segments ---- */

static void
check_refused (const char *name, int want)
{
  g_autofree char *before = segment_digest (name);
  BwssDomain *d = NULL;
  int err = bwss_domain_open (name, 0, &d);
  g_test_message ("open %s: %s", name, bwss_strerror (err));
  g_assert_cmpint (err, ==, want);
  g_assert_null (d);
  g_autofree char *after = segment_digest (name);
  g_assert_cmpstr (before, ==, after);           /* left untouched */
}

static void
test_corrupt_segment (void)
{
  g_autofree char *name = domain_name ("corrupt");
  /* right size, garbage header */
  guint8 junk[64];
  memset (junk, 0x5a, sizeof junk);
  make_segment (name, sizeof (Segment), junk, sizeof junk, 0600);
  check_refused (name, BWSS_EPROTO);
  /* a valid segment with one flow is accepted (the cases below each break
   * one thing of it) */
  Segment *s = g_malloc0 (sizeof (Segment));
  fill_valid_header (s);
  fill_valid_slot (s, 7);
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &d), ==, 0);
  bwss_domain_close (d);
  /* right header, a slot in an impossible state */
  s->slots[7].state = 42;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  /* a slot with a NaN weight */
  s->slots[7].state = SLOT_ACTIVE;
  s->slots[7].prefs.weight = NAN;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  /* preferences beyond the limits every front end shares */
  s->slots[7].prefs.weight = 1e308;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].prefs.weight = 1;
  s->slots[7].prefs.priority = BWSS_PRIORITY_MAX + 1;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].prefs.priority = 0;
  /* a share unknown, or a key that is not what its share says */
  s->slots[7].share = 7;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].share = BWSS_SHARE_PROCESS;
  s->slots[7].share_key = (uint64_t) getpid () + 1;   /* not the socket owner's */
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].share = BWSS_SHARE_UNIT;
  s->slots[7].share_key = 0;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].share = BWSS_SHARE_FLOW;
  s->slots[7].share_key = 5;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slots[7].share = BWSS_SHARE_PROCESS;             /* right: accepted */
  s->slots[7].share_key = (uint64_t) getpid ();
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &d), ==, 0);
  bwss_domain_close (d);
  s->slots[7].share = BWSS_SHARE_FLOW;
  s->slots[7].share_key = 0;
  /* a used slot above the high-water mark (hidden from every loop) */
  s->slot_hwm = 7;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  s->slot_hwm = 8;
  /* a lock that is not a robust process-shared mutex */
  Segment *t = g_memdup2 (s, sizeof (Segment));
  pthread_mutex_init (&t->lock, NULL);
  make_segment (name, sizeof (Segment), t, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  g_free (t);
  /* truncated */
  make_segment (name, 100, NULL, 0, 0600);
  check_refused (name, BWSS_EPROTO);
  g_free (s);
  unlink_domain (name);
}

static void
test_foreign_segment (void)
{
  g_autofree char *name = domain_name ("mode");
  make_segment (name, sizeof (Segment), NULL, 0, 0644);
  check_refused (name, BWSS_EPERM);
  unlink_domain (name);

  /* another layout version (another size, our magic) */
  g_autofree char *name2 = domain_name ("version");
  struct { uint64_t magic; uint32_t version; } head = { SEG_MAGIC, SEG_VERSION + 1 };
  make_segment (name2, 4096, &head, sizeof head, 0600);
  check_refused (name2, BWSS_EVERSION);
  unlink_domain (name2);

  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open ("../etc/passwd", 0, &d), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_domain_open ("x", 0x80, &d), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_domain_open ("bwss-test-missing-nocreate", BWSS_DOMAIN_NO_CREATE, &d),
                   ==, BWSS_ENOENT);
}

/* ---- registration ---- */

static void
test_register_rules (void)
{
  g_autofree char *name = domain_name ("register");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  BwssPrefs p = { .priority = 3, .min_rate_bps = 100e3, .weight = 2 };
  BwssFlow *f = NULL, *g = NULL;
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
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

  BwssFlowInfo rows[8];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].pid, ==, getpid ());
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
  g_assert_false (st.controlled);                 /* no controller in this domain */

  bwss_flow_unregister (f);
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 0);
  close (c); close (s); close (u); close (x); close (l);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* ---- groups: an application is one download ---- */

/* Four flows of this process sharing its share and one alone, through a
 * controller of this process running the paper's loop (no demand caps: the
 * targets are the TRAS's alone): the group is listed as process/4, the
 * alone one as a flow, and the controller gives the four together what it
 * gives the one (eq. 5g), a quarter each (eq. 5m).  Bad shares change
 * nothing. */
static void
test_groups (void)
{
  g_autofree char *name = domain_name ("groups");
  g_setenv ("BWSS_LOOP", "paper", TRUE);
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  enum { N = 5 };
  int c[N], sv[N];
  BwssFlow *f[N];
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < N; i++) {
    tcp_pair_with_data (&c[i], &sv[i]);
    g_assert_cmpint (bwss_flow_register (d, c[i], &p, &f[i]), ==, 0);
    if (i < 4)
      g_assert_cmpint (bwss_flow_set_share (f[i], BWSS_SHARE_PROCESS), ==, 0);
    g_assert_cmpint (fcntl (sv[i], F_SETFL, O_NONBLOCK), ==, 0);
    g_assert_cmpint (fcntl (c[i], F_SETFL, O_NONBLOCK), ==, 0);
  }
  g_assert_cmpint (bwss_flow_set_share (f[4], (BwssShare) 3), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_flow_set_share (NULL, BWSS_SHARE_FLOW), ==, BWSS_EINVAL);
  BwssShare sh = BWSS_SHARE_UNIT;
  g_assert_cmpint (bwss_share_parse ("thread", &sh), ==, BWSS_EINVAL);
  g_assert_cmpint (sh, ==, BWSS_SHARE_UNIT);
  g_assert_cmpint (bwss_share_parse ("process", &sh), ==, 0);
  g_assert_cmpint (sh, ==, BWSS_SHARE_PROCESS);
  g_assert_cmpstr (bwss_share_name (BWSS_SHARE_UNIT), ==, "unit");
  g_assert_null (bwss_share_name ((BwssShare) 9));

  BwssFlowInfo rows[8];
  BwssFlowGroup groups[8];
  size_t n = 0;
  /* a unit: this process's cgroup, where cgroup v2 is mounted */
  if (access ("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
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

  /* data through every flow until the controller gives each a target */
  static char buf[65536];
  BwssFlowStats st[N];
  bool all = false;
  for (uint64_t t0 = mono_us (); !all && mono_us () - t0 < WAIT_LIMIT_US;) {
    bwss_domain_dispatch (d, mono_us ());
    for (int i = 0; i < N; i++) {
      if (write (sv[i], buf, sizeof buf) < 0)
        g_assert_cmpint (errno, ==, EAGAIN);
      while (read (c[i], buf, sizeof buf) > 0)
        ;
    }
    all = true;
    for (int i = 0; i < N; i++)
      all = all && bwss_flow_get_stats (f[i], &st[i]) == 0 && st[i].target_bps > 0;
    g_usleep (10000);
  }
  g_assert_true (all);
  double group = 0;
  for (int i = 0; i < 4; i++) {
    g_assert_cmpfloat_with_epsilon (st[i].target_bps, st[0].target_bps, 1e-6 * st[0].target_bps);
    group += st[i].target_bps;
  }
  g_test_message ("group of 4: %.0f bit/s together, the one alone %.0f", group, st[4].target_bps);
  g_assert_cmpfloat_with_epsilon (group, st[4].target_bps, 1e-6 * st[4].target_bps);

  /* back to one share each: five equal targets */
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (bwss_flow_set_share (f[i], BWSS_SHARE_FLOW), ==, 0);
  all = false;
  for (uint64_t t0 = mono_us (); !all && mono_us () - t0 < WAIT_LIMIT_US;) {
    bwss_domain_dispatch (d, mono_us ());
    for (int i = 0; i < N; i++) {
      if (write (sv[i], buf, sizeof buf) < 0)
        g_assert_cmpint (errno, ==, EAGAIN);
      while (read (c[i], buf, sizeof buf) > 0)
        ;
    }
    all = true;                        /* one snapshot: the controller is this thread's */
    for (int i = 0; i < N; i++)
      all = bwss_flow_get_stats (f[i], &st[i]) == 0 && all;
    for (int i = 0; i < N; i++)
      all = all && st[i].target_bps > 0
            && fabs (st[i].target_bps - st[4].target_bps) <= 1e-6 * st[4].target_bps;
    g_usleep (10000);
  }
  g_test_message ("one share each: %.0f bit/s", st[4].target_bps);
  g_assert_true (all);
  for (int i = 0; i < N; i++) {
    bwss_flow_unregister (f[i]);
    close (c[i]);
    close (sv[i]);
  }
  bwss_domain_close (d);
  g_unsetenv ("BWSS_LOOP");
  unlink_domain (name);
}

/* ---- processes dying ---- */

/* Forks a participant that registers @sock in domain @name (never as a
 * controller), named @comm if not NULL; once registered it dispatches every
 * 10 ms if @dispatch (what the shim does from its hooks), else just waits.
 * Returns its pid once it is registered.  A forked child shares its
 * parent's handles, controller candidacy included: fork it before opening a
 * handle that may control if it must not. */
static pid_t
spawn_participant (const char *name, int sock, gboolean dispatch, const char *comm)
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
    if (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &cd)
        || bwss_flow_register (cd, sock, &p, &f) || write (ready[1], "r", 1) != 1)
      _exit (1);
    for (;;) {
      if (dispatch)
        bwss_domain_dispatch (cd, mono_us ());
      g_usleep (10000);
    }
  }
  char b;
  g_assert_cmpint (read (ready[0], &b, 1), ==, 1);
  close (ready[0]);
  close (ready[1]);
  return pid;
}


/* A participant killed with its flow registered is reclaimed. */
static void
test_killed_participant (void)
{
  g_autofree char *name = domain_name ("killed");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  pid_t child = spawn_participant (name, c, FALSE, NULL);
  BwssFlowInfo rows[8];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].pid, ==, child);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 0);
  close (c); close (s);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* Runs a controller in a child process; returns its pid. */
static pid_t
spawn_controller (const char *name)
{
  pid_t pid = fork ();
  if (pid == 0) {
    BwssDomain *cd = NULL;
    if (bwss_domain_open (name, 0, &cd))
      _exit (1);
    for (;;) {
      bwss_domain_dispatch (cd, mono_us ());
      g_usleep (10000);
    }
  }
  return pid;
}

/* The controller publishes a window, the participant applies it; the
 * controller is killed; the participant puts the kernel's clamp back and,
 * being allowed to, takes the controller role over. */
static void
test_controller_death_releases_windows (void)
{
  g_autofree char *name = domain_name ("failopen");
  BwssDomain *d = NULL;
  /* passive first: it only applies and releases (a controller taking over at
   * once would constrain the flow again from its start, at the minima) */
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  uint32_t original = clamp_of (c);
  BwssFlow *f = NULL;
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);

  /* another process holds the controller role first: lock it out of ours
   * by opening the child before we dispatch */
  pid_t ctl = spawn_controller (name);
  BwssDomainStats ds = { 0 };
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  while (mono_us () < deadline) {
    g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
    if (ds.controller_pid == ctl)
      break;
    g_usleep (10000);
  }
  g_assert_cmpint (ds.controller_pid, ==, ctl);

  /* after the release phase the controller constrains the flow and we apply it */
  BwssFlowStats st = { 0 };
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());        /* participant work (the role is taken) */
    g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
    if (st.controlled && st.window_bytes)
      break;
    g_usleep (10000);
  }
  g_test_message ("original clamp %u, applied window %u", original, st.window_bytes);
  g_assert_true (st.controlled);
  g_assert_cmpuint (st.window_bytes, >, 0);
  g_assert_cmpuint (clamp_of (c), ==, st.window_bytes);
  g_assert_cmpuint (clamp_of (c), !=, original);

  /* the controller dies: a participant that may not control puts the
   * window back to the kernel's */
  kill (ctl, SIGKILL);
  waitpid (ctl, NULL, 0);
  while (mono_us () < deadline && clamp_of (c) != original) {
    bwss_domain_dispatch (d, mono_us ());
    g_usleep (10000);
  }
  g_assert_cmpuint (clamp_of (c), ==, original);

  /* a participant that may control takes the role over, and constrains the
   * flow again */
  BwssDomain *active = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &active), ==, 0);
  bwss_domain_close (d);         /* the same mapping: the flow stays with it */
  d = NULL;
  while (mono_us () < deadline) {
    bwss_domain_dispatch (active, mono_us ());
    g_assert_cmpint (bwss_domain_get_stats (active, &ds), ==, 0);
    if (ds.controller_pid == getpid ())
      break;
    g_usleep (10000);
  }
  g_assert_cmpint (ds.controller_pid, ==, getpid ());

  close (c); close (s);
  bwss_domain_close (active);
  unlink_domain (name);
}

/* Suspending sharing gives every window back to the kernel while the flow
 * stays registered; resuming constrains it again after a fresh
 * initialisation.  Any participant may switch it (here a passive one). */
static gboolean
wait_controlled (BwssDomain *d, BwssFlow *f, gboolean want, uint64_t deadline)
{
  BwssFlowStats st = { 0 };
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());
    g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
    if ((st.controlled && st.window_bytes) == want)
      return TRUE;
    g_usleep (10000);
  }
  return FALSE;
}

static void
test_suspend_resume (void)
{
  g_autofree char *name = domain_name ("suspend");
  BwssDomain *d = NULL, *other = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &other), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  uint32_t original = clamp_of (c);
  BwssFlow *f = NULL;
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  g_assert_true (wait_controlled (d, f, TRUE, deadline));
  g_assert_cmpuint (clamp_of (c), !=, original);

  g_assert_cmpint (bwss_domain_set_suspended (other, true), ==, 0);
  g_assert_true (wait_controlled (d, f, FALSE, deadline));
  g_assert_cmpuint (clamp_of (c), ==, original);
  BwssDomainStats ds = { 0 };
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_true (ds.suspended);
  g_assert_cmpuint (ds.n_flows, ==, 1);                 /* still registered */
  /* and it stays released while suspended */
  for (int i = 0; i < 20; i++) {
    bwss_domain_dispatch (d, mono_us ());
    g_usleep (10000);
  }
  g_assert_cmpuint (clamp_of (c), ==, original);

  g_assert_cmpint (bwss_domain_set_suspended (other, false), ==, 0);
  deadline = mono_us () + WAIT_LIMIT_US;
  g_assert_true (wait_controlled (d, f, TRUE, deadline));
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_false (ds.suspended);
  g_assert_cmpint (bwss_domain_set_suspended (NULL, true), ==, BWSS_EINVAL);

  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (other);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* Maps the segment of domain @name. */
static Segment *
map_raw (const char *name)
{
  g_autofree char *path = segment_file (name);
  int fd = open (path, O_RDWR);
  g_assert_cmpint (fd, >=, 0);
  Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true (s != MAP_FAILED);
  close (fd);
  return s;
}

/* Forks a process that takes the segment lock of @name and stops itself
 * holding it (as SIGSTOP or Ctrl-Z can catch any participant); once
 * continued it unlocks and exits.  Returns its pid, stopped. */
static pid_t
hold_lock_stopped (const char *name)
{
  pid_t pid = fork ();
  if (pid == 0) {
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    g_autofree char *path = segment_file (name);
    int fd = open (path, O_RDWR);
    Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED || pthread_mutex_lock (&s->lock) != 0)
      _exit (1);
    raise (SIGSTOP);
    pthread_mutex_unlock (&s->lock);
    _exit (0);
  }
  int status;
  g_assert_cmpint (waitpid (pid, &status, WUNTRACED), ==, pid);
  g_assert_true (WIFSTOPPED (status));
  return pid;
}

static void
continue_and_reap (pid_t pid)
{
  kill (pid, SIGCONT);
  int status;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
}

/* A process killed while holding the segment lock does not lock the domain. */
static void
test_lock_holder_killed (void)
{
  g_autofree char *name = domain_name ("lock");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  pid_t child = hold_lock_stopped (name);
  kill (child, SIGKILL);                          /* dies holding the lock */
  waitpid (child, NULL, 0);
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);   /* would hang if not robust */
  BwssFlowInfo rows[2];
  size_t n;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 2, &n), ==, 0);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* ---- a participant stopped inside the lock (issue 11) ---- */

static size_t
count_flows (BwssDomain *d)
{
  static BwssFlowInfo rows[SEG_MAX_FLOWS];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, SEG_MAX_FLOWS, &n), ==, 0);
  return n;
}

/* Registering, changing preferences and unregistering from a data path
 * (a handle that may not control: the preload shim's) never wait for a
 * lock held by a stopped process; readers get BWSS_EBUSY instead of
 * hanging; what was deferred is written once the holder continues. */
static void
test_stopped_holder_defers (void)
{
  g_autofree char *name = domain_name ("stopped");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c1, s1, c2, s2;
  tcp_pair_with_data (&c1, &s1);
  tcp_pair_with_data (&c2, &s2);
  BwssPrefs p = { .priority = 1, .min_rate_bps = 0, .weight = 1 };
  BwssFlow *gone = NULL, *f = NULL;
  g_assert_cmpint (bwss_flow_register (d, c2, &p, &gone), ==, 0);   /* lock free: written now */
  g_assert_cmpuint (count_flows (d), ==, 1);

  pid_t holder = hold_lock_stopped (name);
  g_assert_cmpint (bwss_flow_register (d, c1, &p, &f), ==, 0);      /* hung forever before */
  BwssPrefs q = { .priority = 7, .min_rate_bps = 250e3, .weight = 3 };
  g_assert_cmpint (bwss_flow_set_prefs (f, &q), ==, 0);
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);            /* not in the segment yet */
  g_assert_false (st.controlled);
  g_assert_cmpint (st.prefs.priority, ==, 7);
  bwss_flow_unregister (gone);                                      /* needs no lock */
  bwss_domain_dispatch (d, mono_us ());
  BwssDomainStats ds;
  BwssFlowInfo rows[4];
  size_t n;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, BWSS_EBUSY);
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 4, &n), ==, BWSS_EBUSY);
  /* the data path still moves data */
  char buf[65536];
  memset (buf, 2, sizeof buf);
  g_assert_cmpint (write (s1, buf, sizeof buf), ==, (ssize_t) sizeof buf);
  g_assert_cmpint (read (c1, buf, sizeof buf), >, 0);

  continue_and_reap (holder);
  bwss_domain_dispatch (d, mono_us ());                             /* writes what waited */
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 4, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);                                      /* f; the released one is gone */
  g_assert_cmpint (rows[0].stats.prefs.priority, ==, 7);
  g_assert_cmpfloat (rows[0].stats.prefs.weight, ==, 3);
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_cmpuint (ds.n_flows, ==, 1);
  bwss_flow_unregister (f);
  g_assert_cmpuint (count_flows (d), ==, 0);
  close (c1); close (s1); close (c2); close (s2);
  bwss_domain_close (d);
  unlink_domain (name);
}

static ino_t
segment_inode (const char *name)
{
  g_autofree char *path = segment_file (name);
  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, 0);
  return st.st_ino;
}

/* A lock holder stopped for good: a controller candidate moves the domain
 * to a fresh segment after a couple of seconds, becomes its controller, and
 * every participant follows with its flows; the stopped one is left the
 * old segment. */
static void
test_stopped_holder_recovery (void)
{
  g_autofree char *name = domain_name ("recover");
  int c1, s1, c2, s2;
  tcp_pair_with_data (&c1, &s1);
  tcp_pair_with_data (&c2, &s2);
  pid_t part = spawn_participant (name, c2, TRUE, NULL);
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  ino_t before = segment_inode (name);

  pid_t holder = hold_lock_stopped (name);
  BwssFlow *f = NULL;
  BwssPrefs p = { .priority = 1, .weight = 2 };
  g_assert_cmpint (bwss_flow_register (d, c1, &p, &f), ==, 0);
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  BwssDomainStats ds = { 0 };
  size_t n = 0;
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());                          /* hung forever before */
    BwssFlowInfo rows[4];
    if (bwss_domain_get_stats (d, &ds) == 0 && bwss_domain_list_flows (d, rows, 4, &n) == 0
        && ds.controller_pid == getpid () && n == 2)
      break;
    g_usleep (10000);
  }
  g_test_message ("moved: inode %lu -> %lu, %zu flows, controller %d", (unsigned long) before,
                  (unsigned long) segment_inode (name), n, (int) ds.controller_pid);
  g_assert_cmpuint (segment_inode (name), !=, before);
  g_assert_cmpint (ds.controller_pid, ==, getpid ());
  g_assert_cmpuint (n, ==, 2);                                      /* ours and the follower's */

  /* the stopped one continues in the old segment and harms nobody */
  continue_and_reap (holder);
  kill (part, SIGKILL);
  waitpid (part, NULL, 0);
  bwss_domain_dispatch (d, mono_us ());
  g_assert_cmpuint (count_flows (d), ==, 1);
  bwss_flow_unregister (f);
  g_assert_cmpuint (count_flows (d), ==, 0);
  close (c1); close (s1); close (c2); close (s2);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* Lock words no live participant can have written: the lock is marked
 * owner-died, as the kernel marks a dead holder's, and the table repaired
 * at once.  Where /proc cannot tell (pid 1's maps may be unreadable even to
 * root in a container), the holder is given the benefit of the doubt and a
 * controller candidate moves the domain to a fresh segment instead: either
 * way the domain is usable again, and nothing ever hangs. */
static void
test_forged_lock_words (void)
{
  g_autofree char *name = domain_name ("lockword");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  Segment *s = map_raw (name);
  pid_t dead = fork ();
  if (dead == 0)
    _exit (0);
  waitpid (dead, NULL, 0);
  GPid sleeper;
  const char *argv[] = { "sleep", "60", NULL };
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                                &sleeper, NULL));
  struct { const char *what; unsigned word; } cases[] = {
    { "a dead task", (unsigned) dead },
    { "a live task that does not map the segment", (unsigned) sleeper },
    { "a thread of this process", (unsigned) gettid () },
    { "nobody, with waiters", 0x80000000u },
  };
  BwssDomainStats ds;
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    __atomic_store_n ((unsigned *) &s->lock.__data.__lock, cases[i].word, __ATOMIC_RELEASE);
    g_test_message ("lock word %#x (%s)", cases[i].word, cases[i].what);
    g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);         /* hung forever before */
    g_assert_cmpuint (__atomic_load_n ((unsigned *) &s->lock.__data.__lock, __ATOMIC_ACQUIRE), ==, 0);
  }
  kill (sleeper, SIGKILL);
  waitpid (sleeper, NULL, 0);

  /* pid 1: repaired at once, or the domain moved by this candidate */
  __atomic_store_n ((unsigned *) &s->lock.__data.__lock, 1u, __ATOMIC_RELEASE);
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  int err;
  while ((err = bwss_domain_get_stats (d, &ds)) != 0 && mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());
    g_usleep (10000);
  }
  g_assert_cmpint (err, ==, 0);
  munmap (s, sizeof (Segment));
  s = map_raw (name);
  g_test_message ("lock word 0x1 (pid 1): %s", s->lock.__data.__lock == 1 ? "?" : "usable");
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  munmap (s, sizeof (Segment));
  bwss_domain_close (d);
  unlink_domain (name);
}

/* ---- half-made segments (issue 11) ---- */

/* What a creator of an older version left when killed between creating the
 * file and finishing it: an empty file, or a full-size one without magic.
 * Without NO_CREATE it is replaced by a valid segment; with it, there is no
 * domain. */
static void
test_unfinished_segment_replaced (void)
{
  g_autofree char *name = domain_name ("unfinished");
  for (int full = 0; full < 2; full++) {
    make_segment (name, full ? sizeof (Segment) : 0, NULL, 0, 0600);
    BwssDomain *d = NULL;
    g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE, &d), ==, BWSS_ENOENT);
    g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);         /* EPROTO forever before */
    BwssDomainStats ds;
    g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
    g_assert_cmpuint (ds.n_flows, ==, 0);
    bwss_domain_close (d);
    g_autofree char *path = segment_file (name);
    struct stat st;
    g_assert_cmpint (stat (path, &st), ==, 0);
    g_assert_cmpuint (st.st_size, ==, sizeof (Segment));
    unlink_domain (name);
  }
}

/* ---- the controller's heartbeat (issue 11) ---- */

/* Waits until @f is constrained by a live controller and its clamp applied. */
static void
wait_window_applied (BwssDomain *d, BwssFlow *f, int c, uint64_t deadline)
{
  BwssFlowStats st = { 0 };
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());
    g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
    if (st.controlled && st.window_bytes)
      break;
    g_usleep (10000);
  }
  g_assert_true (st.controlled);
  g_assert_cmpuint (clamp_of (c), ==, st.window_bytes);
}

/* A heartbeat in the future, or a controller pid that is alive but not the
 * process that published (its start time differs), is no controller: the
 * window goes back to the kernel's. */
static void
test_forged_heartbeat (void)
{
  g_autofree char *name = domain_name ("heartbeat");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair_with_data (&c, &s);
  uint32_t original = clamp_of (c);
  BwssFlow *f = NULL;
  BwssPrefs p = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &p, &f), ==, 0);
  pid_t ctl = spawn_controller (name);
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  wait_window_applied (d, f, c, deadline);
  kill (ctl, SIGKILL);
  waitpid (ctl, NULL, 0);
  Segment *seg = map_raw (name);

  /* a live pid with a fresh heartbeat but another start time */
  seg->controller_pid = getpid ();
  seg->controller_start = 12345;
  seg->heartbeat_us = mono_us ();
  BwssFlowStats st;
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
  g_assert_false (st.controlled);                                   /* true before */

  /* pid 1 (alive, never ours) beating an hour ahead */
  seg->controller_pid = 1;
  seg->controller_start = 0;
  seg->heartbeat_us = mono_us () + 3600ull * G_USEC_PER_SEC;
  while (mono_us () < deadline && clamp_of (c) != original) {
    bwss_domain_dispatch (d, mono_us ());
    g_usleep (10000);
  }
  g_assert_cmpuint (clamp_of (c), ==, original);                    /* clamped forever before */
  g_assert_cmpint (bwss_flow_get_stats (f, &st), ==, 0);
  g_assert_false (st.controlled);
  munmap (seg, sizeof (Segment));
  bwss_flow_unregister (f);
  close (c); close (s);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* ---- names and preferences (issue 11) ---- */

static void
test_names_and_limits (void)
{
  const char *bad[] = { "", ".", "..", ".hidden", "a/b", "/x", "bad name", "tab\t",
                        "0123456789012345678901234567890123456789012345678901234567890123x" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    BwssDomain *d = NULL;
    g_assert_cmpint (bwss_domain_check_name (bad[i]), ==, BWSS_EINVAL);
    g_assert_cmpint (bwss_domain_open (bad[i], BWSS_DOMAIN_NO_CREATE, &d), ==, BWSS_EINVAL);
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

  /* preferences beyond the shared limits are refused and change nothing */
  g_autofree char *name = domain_name ("limits");
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
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
  unlink_domain (name);
}

/* ---- bwss-top over what the segment may hold (issue 11) ---- */

/* Runs bwss-top with @args on domain @name; returns its exit status. */
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

/* Its JSON is valid whatever the segment holds (a command name that is not
 * UTF-8 and has quotes and control bytes, a rate json-glib would write as
 * "1e+22.0"), and its header counts the flows after the sweep. */
static void
test_top_output (void)
{
  g_autofree char *name = domain_name ("topjson");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  pid_t child = spawn_participant (name, c, FALSE, "\xff\"\\\x01z");
  Segment *seg = map_raw (name);
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++)
    if (seg->slots[i].state == SLOT_ACTIVE) {
      seg->slots[i].rate_bps = 1e22;
      seg->slots[i].bytes_received = UINT64_MAX;
    }
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
  g_assert_cmpfloat (json_object_get_double_member (flow, "rate_bps") / 1e22, >, 0.999999);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (flow, "command"), "\"\\\x01z"));

  /* the participant dies: the header counts what the sweep left, 0 */
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  g_autofree char *table = NULL;
  const char *table_args[] = { "--once", NULL };
  g_assert_cmpint (run_top (name, table_args, &table), ==, 0);
  g_test_message ("%s", table);
  g_assert_nonnull (strstr (table, "flows 0\n"));                   /* "flows 1" before */

  munmap (seg, sizeof (Segment));
  close (c); close (s);
  bwss_domain_close (d);
  unlink_domain (name);
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* A domain run from a GLib main loop takes the controller role and publishes. */
static gboolean
quit_when_controller (gpointer data)
{
  gpointer *ctx = data;
  BwssDomainStats ds;
  if (bwss_domain_get_stats (ctx[0], &ds) == 0 && ds.controller_pid == getpid ()) {
    g_main_loop_quit (ctx[1]);
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

static void
test_glib_source (void)
{
  g_autofree char *name = domain_name ("glib");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  GMainLoop *loop = g_main_loop_new (NULL, FALSE);
  guint id = bwss_domain_attach (d, NULL);
  gpointer ctx[2] = { d, loop };
  g_timeout_add (20, quit_when_controller, ctx);
  guint guard = g_timeout_add_seconds (20, quit_loop, loop);   /* hang guard only */
  g_main_loop_run (loop);
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_cmpint (ds.controller_pid, ==, getpid ());
  g_source_remove (id);
  g_source_remove (guard);
  g_main_loop_unref (loop);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* ---- idle (issue 26): no flow, no work ---- */

/* The dispatch asks for the control period while there is a flow, and for
 * the next whole second of CLOCK_MONOTONIC while there is none. */
static void
test_idle_dispatch_delay (void)
{
  g_autofree char *name = domain_name ("idle-delay");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  BwssParams p;
  bwss_params_init (&p);
  uint64_t now = mono_us ();
  uint64_t wait = bwss_domain_dispatch (d, now);                    /* controller, no flow */
  g_assert_cmpuint (wait, >, 0);
  g_assert_cmpuint (wait, <=, G_USEC_PER_SEC);
  g_assert_cmpuint ((now + wait) % G_USEC_PER_SEC, ==, 0);
  int c, sv;
  tcp_pair_with_data (&c, &sv);
  BwssFlow *f = NULL;
  BwssPrefs prefs = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &prefs, &f), ==, 0);
  g_assert_cmpuint (bwss_domain_dispatch (d, mono_us ()), ==, p.min_phi_us);   /* 10 ms before, always */
  bwss_flow_unregister (f);
  now = mono_us ();
  wait = bwss_domain_dispatch (d, now);
  g_assert_cmpuint ((now + wait) % G_USEC_PER_SEC, ==, 0);
  g_assert_cmpuint (bwss_domain_dispatch (NULL, 0), ==, G_USEC_PER_SEC);
  close (c); close (sv);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* An idle controller promised its next heartbeat a second on: it stays
 * the controller for that second and one more (a heartbeat under 1 s old
 * was the rule before), then counts as gone. */
static void
test_idle_controller_alive (void)
{
  g_autofree char *name = domain_name ("idle-alive");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, 0, &d), ==, 0);
  bwss_domain_dispatch (d, mono_us ());
  uint64_t beat = mono_us ();
  BwssDomainStats ds;
  g_usleep (1500000);
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_cmpint (ds.controller_pid, ==, getpid ());              /* 0 before */
  while (mono_us () < beat + 2200000)
    g_usleep (100000);
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);
  g_assert_cmpint (ds.controller_pid, ==, 0);
  bwss_domain_close (d);
  unlink_domain (name);
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

/* bwss_domain_source_new() on a worker thread's own main context: idle, it
 * wakes that context once a second (a 10-ms timer woke it 100 times); a
 * flow registered from another thread wakes it at once (the domain's fd)
 * and from then on it dispatches every control period. */
static void
test_glib_source_idle (void)
{
  g_autofree char *name = domain_name ("glib-idle");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
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
  g_assert_cmpint (idle, <=, 4);                                   /* 250 before */

  int c, sv;
  tcp_pair_with_data (&c, &sv);
  BwssFlow *f = NULL;
  BwssPrefs prefs = { .weight = 1 };
  g_assert_cmpint (bwss_flow_register (d, c, &prefs, &f), ==, 0);
  before = g_atomic_int_get (&w.iterations);
  g_usleep (1000000);
  gint busy = g_atomic_int_get (&w.iterations) - before;
  g_assert_cmpint (busy, >=, 10);                                  /* ~100: every 10 ms */

  g_atomic_int_set (&w.stop, 1);
  g_main_context_wakeup (w.context);
  g_thread_join (t);
  g_source_destroy (src);
  g_source_unref (src);
  g_main_context_unref (w.context);
  bwss_flow_unregister (f);
  close (c); close (sv);
  bwss_domain_close (d);
  unlink_domain (name);
}

/* Raises this process's fd limit to at least @want; returns FALSE if the
 * hard limit is lower. */
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

/* Returns the number of flows of @d listed as controlled: the controller
 * decided a target and a window for it (idle flows: target 0, the window
 * the delay loop's floor). */
static size_t
count_controlled (BwssDomain *d, size_t *listed)
{
  static BwssFlowInfo rows[SEG_MAX_FLOWS];
  size_t n = 0, controlled = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, SEG_MAX_FLOWS, &n), ==, 0);
  for (size_t i = 0; i < n; i++)
    if (rows[i].stats.controlled && rows[i].stats.target_bps >= 0.0 && rows[i].stats.window_bytes > 0)
      controlled++;
  *listed = n;
  return controlled;
}

/* Dispatches @d until every one of its @want flows is controlled; returns FALSE at the hang guard. */
static gboolean
wait_all_controlled (BwssDomain *d, size_t want)
{
  uint64_t deadline = mono_us () + WAIT_LIMIT_US;
  size_t listed = 0;
  while (mono_us () < deadline) {
    bwss_domain_dispatch (d, mono_us ());
    if (count_controlled (d, &listed) == want && listed == want)
      return TRUE;
    g_usleep (10000);
  }
  return FALSE;
}

/* Far past the 256 slots of layout 5: 1000 real flows are registered,
 * listed and every one of them controlled; half unregistered in a stride
 * (holes below the high-water mark), the rest stay controlled and new
 * flows fill the holes. */
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
  unlink_domain (name);
}

/* Registers @n loopback flows in domain @name from a child process (no
 * controller, no data), writes one byte to @ready and waits to be killed. */
static pid_t
spawn_filler (const char *name, int n, int ready)
{
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid > 0)
    return pid;
  BwssDomain *d = NULL;
  if (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
    _exit (1);
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  for (int i = 0; i < n; i++) {
    int cl, sv;
    BwssFlow *f;
    tcp_pair (&cl, &sv);
    if (bwss_flow_register (d, cl, &p, &f) != 0)
      _exit (2);
  }
  char b = 1;
  if (write (ready, &b, 1) != 1)
    _exit (3);
  for (;;)
    pause ();
}

/* The table holds BWSS_DOMAIN_MAX_FLOWS flows of two processes (each
 * within an ordinary fd limit) and refuses one more with BWSS_ENOSPC; when
 * one process dies its flows' slots are free again. */
static void
test_full_table (void)
{
  const int half = BWSS_DOMAIN_MAX_FLOWS / 2;
  if (!fd_limit_at_least (2 * (rlim_t) half + 64)) {
    g_test_skip ("the fd hard limit is below 2 x BWSS_DOMAIN_MAX_FLOWS / 2");
    return;
  }
  g_autofree char *name = domain_name ("full");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int pp[2];
  g_assert_cmpint (pipe (pp), ==, 0);
  pid_t child = spawn_filler (name, half, pp[1]);
  char b;
  g_assert_cmpint (read (pp[0], &b, 1), ==, 1);
  BwssPrefs p = { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  int rest = BWSS_DOMAIN_MAX_FLOWS - half;
  int *cl = g_new (int, rest + 1), *sv = g_new (int, rest + 1);
  BwssFlow **f = g_new0 (BwssFlow *, rest + 1);
  for (int i = 0; i < rest; i++) {
    tcp_pair (&cl[i], &sv[i]);
    g_assert_cmpint (bwss_flow_register (d, cl[i], &p, &f[i]), ==, 0);
  }
  g_assert_cmpuint (count_flows (d), ==, BWSS_DOMAIN_MAX_FLOWS);
  tcp_pair (&cl[rest], &sv[rest]);
  g_assert_cmpint (bwss_flow_register (d, cl[rest], &p, &f[rest]), ==, BWSS_ENOSPC);
  kill (child, SIGKILL);
  g_assert_cmpint (waitpid (child, NULL, 0), ==, child);
  g_assert_cmpuint (count_flows (d), ==, (size_t) rest);   /* the reader's sweep */
  g_assert_cmpint (bwss_flow_register (d, cl[rest], &p, &f[rest]), ==, 0);
  for (int i = 0; i <= rest; i++) {
    bwss_flow_unregister (f[i]);
    close (cl[i]);
    close (sv[i]);
  }
  g_free (cl);
  g_free (sv);
  g_free (f);
  close (pp[0]);
  close (pp[1]);
  bwss_domain_close (d);
  unlink_domain (name);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/domain/segment/corrupt", test_corrupt_segment);
  g_test_add_func ("/domain/segment/foreign", test_foreign_segment);
  g_test_add_func ("/domain/register-rules", test_register_rules);
  g_test_add_func ("/domain/groups", test_groups);
  g_test_add_func ("/domain/killed-participant", test_killed_participant);
  g_test_add_func ("/domain/controller-death-releases-windows", test_controller_death_releases_windows);
  g_test_add_func ("/domain/lock-holder-killed", test_lock_holder_killed);
  g_test_add_func ("/domain/suspend-resume", test_suspend_resume);
  g_test_add_func ("/domain/glib-source", test_glib_source);
  g_test_add_func ("/domain/idle/dispatch-delay", test_idle_dispatch_delay);
  g_test_add_func ("/domain/idle/controller-alive", test_idle_controller_alive);
  g_test_add_func ("/domain/idle/glib-source", test_glib_source_idle);
  g_test_add_func ("/domain/stopped-holder/defers", test_stopped_holder_defers);
  g_test_add_func ("/domain/stopped-holder/recovery", test_stopped_holder_recovery);
  g_test_add_func ("/domain/lock/forged-words", test_forged_lock_words);
  g_test_add_func ("/domain/segment/unfinished-replaced", test_unfinished_segment_replaced);
  g_test_add_func ("/domain/heartbeat/forged", test_forged_heartbeat);
  g_test_add_func ("/domain/names-and-limits", test_names_and_limits);
  g_test_add_func ("/domain/top/output", test_top_output);
  g_test_add_func ("/domain/many-flows", test_many_flows);
  g_test_add_func ("/domain/full-table", test_full_table);
  return g_test_run ();
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-domain.c — the per-user domain on real loopback TCP sockets: bad
 * segments refused and left untouched, registration rules, a killed
 * participant reclaimed, a killed controller's windows released (the clamp
 * really goes back) and its role taken over, a lock holder killed inside
 * the lock.  Each test uses its own domain name.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
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

static void
unlink_domain (const char *name)
{
  g_autofree char *path = g_strdup_printf ("/%s", name);
  shm_unlink (path);
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
  g_autofree char *path = g_strdup_printf ("/%s", name);
  int fd = shm_open (path, O_RDWR | O_CREAT | O_TRUNC, mode);
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
  g_autofree char *path = g_strdup_printf ("/dev/shm/%s", name);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
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
  /* right header, a slot in an impossible state */
  Segment *s = g_malloc0 (sizeof (Segment));
  s->magic = SEG_MAGIC;
  s->version = SEG_VERSION;
  s->header_size = offsetof (Segment, slots);
  s->slot_size = sizeof (SegSlot);
  s->max_flows = SEG_MAX_FLOWS;
  s->owner_uid = geteuid ();
  s->slots[7].state = 42;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
  /* a slot with a NaN weight */
  s->slots[7].state = SLOT_ACTIVE;
  s->slots[7].pid = getpid ();
  s->slots[7].prefs.weight = NAN;
  make_segment (name, sizeof (Segment), s, sizeof (Segment), 0600);
  check_refused (name, BWSS_EPROTO);
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

/* ---- processes dying ---- */

/* A participant killed with its flow registered is reclaimed. */
static void
test_killed_participant (void)
{
  g_autofree char *name = domain_name ("killed");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int c, s;
  tcp_pair (&c, &s);
  int ready[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t child = fork ();
  if (child == 0) {
    BwssDomain *cd = NULL;
    BwssFlow *f = NULL;
    BwssPrefs p = { .weight = 1 };
    if (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &cd) || bwss_flow_register (cd, c, &p, &f))
      _exit (1);
    if (write (ready[1], "r", 1) != 1)
      _exit (1);
    pause ();
    _exit (0);
  }
  char b;
  g_assert_cmpint (read (ready[0], &b, 1), ==, 1);
  BwssFlowInfo rows[8];
  size_t n = 0;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (rows[0].pid, ==, child);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 8, &n), ==, 0);
  g_assert_cmpuint (n, ==, 0);
  close (c); close (s); close (ready[0]); close (ready[1]);
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

/* A process killed while holding the segment lock does not lock the domain. */
static void
test_lock_holder_killed (void)
{
  g_autofree char *name = domain_name ("lock");
  BwssDomain *d = NULL;
  g_assert_cmpint (bwss_domain_open (name, BWSS_DOMAIN_NO_CONTROLLER, &d), ==, 0);
  int ready[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t child = fork ();
  if (child == 0) {
    g_autofree char *path = g_strdup_printf ("/%s", name);
    int fd = shm_open (path, O_RDWR, 0);
    Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED || pthread_mutex_lock (&s->lock) != 0)
      _exit (1);
    if (write (ready[1], "l", 1) != 1)
      _exit (1);
    pause ();                                     /* dies holding the lock */
    _exit (0);
  }
  char b;
  g_assert_cmpint (read (ready[0], &b, 1), ==, 1);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  BwssDomainStats ds;
  g_assert_cmpint (bwss_domain_get_stats (d, &ds), ==, 0);   /* would hang if not robust */
  BwssFlowInfo rows[2];
  size_t n;
  g_assert_cmpint (bwss_domain_list_flows (d, rows, 2, &n), ==, 0);
  close (ready[0]); close (ready[1]);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/domain/segment/corrupt", test_corrupt_segment);
  g_test_add_func ("/domain/segment/foreign", test_foreign_segment);
  g_test_add_func ("/domain/register-rules", test_register_rules);
  g_test_add_func ("/domain/killed-participant", test_killed_participant);
  g_test_add_func ("/domain/controller-death-releases-windows", test_controller_death_releases_windows);
  g_test_add_func ("/domain/lock-holder-killed", test_lock_holder_killed);
  g_test_add_func ("/domain/suspend-resume", test_suspend_resume);
  g_test_add_func ("/domain/glib-source", test_glib_source);
  return g_test_run ();
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * preload.c — libbwss-preload.so: puts the TCP flows of an unmodified
 * program into the domain (the paper's Sec. VI-A prototype overrode
 * connect() and read(); we hook connect(), the reads and the waits).
 *
 * A socket is classified the first time a read on it returns data: a
 * connected TCP socket over IPv4 or IPv6 is registered with the preferences
 * of the environment (BWSS_PRIORITY, BWSS_MIN_RATE, BWSS_WEIGHT, set by
 * bwss-run) in the group BWSS_SHARE names (process when unset: the
 * process's connections share one share; flow, unit); UDP, UNIX, listening and other fds are remembered as not ours
 * and pass through.  A registered socket is handed to bwssd, which sets
 * its window; what bwssd sends back (the read rate, below) is read from the
 * same hooks (reads, poll, epoll, select), at the time the domain asks for
 * (bwss_domain_dispatch()), and so is bwssd's sign of life (without it the
 * shim gives its sockets back to the kernel).  The shim has no thread: a
 * program that makes no call the hooks see is not woken by it.  A program
 * that waits in poll(), select() or epoll_wait() while it holds flows is:
 * its wait is cut at the domain's next dispatch (wait_slice()), so a
 * stopped or hung bwssd is found out on time however long the program
 * waits (an event loop's second, a rate-limited download's pause).  close()
 * unregisters and restores the kernel's window.  Before that, connect()
 * gives a download's socket a small first window (first_window_begin()).
 *
 * Never blocked by bwssd: registering from inside a read and unregistering
 * in close() send a message and never wait, for an answer or for room
 * (bwss/domain.h); what bwssd has not read yet (a burst of thousands of
 * connections, a bwssd slow on a loaded machine) goes out at the hooks'
 * next dispatch, as bwssd reads it.
 *
 * Read pacing: the shim offers to pace the reads of the sockets it
 * registers.  While the controller asks for a read rate (a flow held below
 * a segment per round trip on a slow link), a read first sleeps until the
 * flow's credit covers a segment (or what was asked, if less) — the way
 * trickle paces, except that the receive buffer is the window, so the
 * sender sends no more than is read.  MSG_PEEK never waits.  A program that
 * reads several sockets in one thread waits for the paced one
 * (docs/sockets.md).
 *
 * Cost with no domain (not started by bwss-run, or no bwssd runs): one
 * predictable branch per call.  The shim never starts bwssd: bwss-run, its
 * parent, does that.
 *
 * BWSS_INHERIT=0 removes the shim from LD_PRELOAD at start-up, so programs
 * this one executes run outside the domain.
 *
 * Self-interposition.  This object carries libbwss statically (laws, kernel
 * layer, domain), and its hooks are the process's read(), recv(), close()
 * ...: the library's own calls inside it would go through them too.  The
 * client's calls on its connection to bwssd (close, recvmsg, poll) go to the
 * kernel directly (client.c), so they never come back into the domain from
 * under its lock; proc.c's reads reach read() below with an fd the table
 * does not know (FD_UNKNOWN, or a read that returns data: saw_data()
 * classifies it as not a connected TCP socket, FD_NOT_OURS), so they pass
 * straight through; knobs.c's sock_diag calls run only in bwssd.  stdio
 * (fopen/fgets of /proc files) and glibc's eventfd_read/eventfd_write (the
 * domain's wake fd) do not go through these symbols.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "sys.h"

#define PRELOAD_API __attribute__ ((visibility ("default")))

/* fds above this are left alone (a table of 64 Ki entries is 0.5 MiB) */
#define MAX_FD 65536
/* a paced read sleeps at most this long at a time, then looks again (the
 * rate may have changed or pacing ended) */
#define PACE_SLEEP_MAX_US 50000ull
/* While the process holds flows, a hooked wait (poll, select, epoll_wait)
 * is cut into slices ending at the domain's next dispatch, none shorter
 * than this (µs): the sign of life is asked every half second (LIVE_US in
 * client.c), so a stopped bwssd is found out within two of those and two
 * slices; a paced flow's next rate counts only at its next read, where the
 * read hooks dispatch anyway (not 100 wake-ups a second for it). */
#define WAIT_SLICE_MIN_US 100000ull
/* The receive buffer a download connects with, bytes (SO_RCVBUF's value;
 * the kernel doubles it for its accounting): its SYN offers about two
 * segments of a 1500-byte path instead of the kernel's 64 kB.  Below ten
 * segments (the senders' initial window) so that the first flight is the
 * receiver's choice; two, the least a delayed ACK is sent for. */
#define FIRST_RCVBUF_BYTES 2896

/* FD_FIRST_WINDOW: a TCP socket this process connected with the small first
 * window; classified at its first data as FD_UNKNOWN is, its buffer given
 * back to the kernel first (knob_first_window_end()). */
enum { FD_UNKNOWN = 0, FD_NOT_OURS, FD_REGISTERED, FD_FIRST_WINDOW };

static BwssDomain *domain;           /* NULL: pass-through */
static BwssPrefs prefs;
static BwssShare share = BWSS_SHARE_PROCESS;
static uint8_t *fd_state;
static BwssFlow **fd_flow;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_apply_us;       /* the domain's next dispatch is due then (µs) */
static unsigned flows_held;          /* fds FD_REGISTERED (table_lock) */

static ssize_t (*real_read) (int, void *, size_t);
static ssize_t (*real_readv) (int, const struct iovec *, int);
static ssize_t (*real_recv) (int, void *, size_t, int);
static ssize_t (*real_recvfrom) (int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_recvmsg) (int, struct msghdr *, int);
static int (*real_close) (int);
static int (*real_poll) (struct pollfd *, nfds_t, int);
static int (*real_epoll_wait) (int, struct epoll_event *, int, int);
static int (*real_select) (int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_connect) (int, const struct sockaddr *, socklen_t);

#define RESOLVE(name) \
  do { if (!real_##name) real_##name = dlsym (RTLD_NEXT, #name); } while (0)

/* $BWSS_TRACE_FIRST (sys_trace_first()): the domain joined or not, a
 * socket's first data and its registration, so a run can tell when each
 * flow met bwssd against when its bytes came. */
#define trace_first(...) sys_trace_first ("shim", __VA_ARGS__)

static void
warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("bwss-preload: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

/* Parses the preferences from the environment with the library's parsers
 * (bwss/bwss.h: decimal only, within the limits every front end shares);
 * false (and a message naming the variable) if one is malformed. */
static bool
prefs_from_env (BwssPrefs *p)
{
  const char *v;
  p->priority = 0;
  p->min_rate_bps = 0;
  p->weight = 1;
  if ((v = getenv ("BWSS_PRIORITY")) && bwss_parse_priority (v, &p->priority) != 0) {
    warn ("BWSS_PRIORITY=%s is not a priority (a decimal integer from %d to %d); not joining the domain",
          v, BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX);
    return false;
  }
  if ((v = getenv ("BWSS_MIN_RATE")) && bwss_parse_rate (v, &p->min_rate_bps) != 0) {
    warn ("BWSS_MIN_RATE=%s is not a rate (decimal bit/s with k, M or G, at most 1P); not joining the domain", v);
    return false;
  }
  if ((v = getenv ("BWSS_WEIGHT")) && bwss_parse_weight (v, &p->weight) != 0) {
    warn ("BWSS_WEIGHT=%s is not a weight (a decimal number from 0 to %g); not joining the domain",
          v, BWSS_WEIGHT_MAX);
    return false;
  }
  if ((v = getenv ("BWSS_SHARE")) && bwss_share_parse (v, &share) != 0) {
    warn ("BWSS_SHARE=%s is neither process, flow nor unit; not joining the domain", v);
    return false;
  }
  return true;
}

/* Removes this library from LD_PRELOAD (BWSS_INHERIT=0). */
static void
drop_from_ld_preload (void)
{
  const char *lp = getenv ("LD_PRELOAD");
  if (lp == NULL)
    return;
  char *copy = strdup (lp), *out = calloc (1, strlen (lp) + 1);
  if (copy == NULL || out == NULL) {
    free (copy);
    free (out);
    return;
  }
  for (char *save = NULL, *tok = strtok_r (copy, " :", &save); tok; tok = strtok_r (NULL, " :", &save)) {
    if (strstr (tok, "libbwss-preload"))
      continue;
    if (*out)
      strcat (out, " ");
    strcat (out, tok);
  }
  setenv ("LD_PRELOAD", out, 1);
  free (copy);
  free (out);
}

static void
after_fork_child (void)
{
  /* the parent owns the registrations of the sockets we inherited */
  pthread_mutex_init (&table_lock, NULL);
  if (fd_state)
    for (int fd = 0; fd < MAX_FD; fd++)
      if (fd_state[fd] == FD_REGISTERED) {
        fd_state[fd] = FD_NOT_OURS;
        fd_flow[fd] = NULL;
      }
  flows_held = 0;
}

__attribute__ ((constructor)) static void
preload_init (void)
{
  const char *inherit = getenv ("BWSS_INHERIT");
  if (inherit && strcmp (inherit, "0") == 0)
    drop_from_ld_preload ();
  if (!prefs_from_env (&prefs))
    return;
  BwssDomain *d = NULL;
  int err = bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d);
  trace_first ("domain open: %s", err ? bwss_strerror (err) : "ok");
  if (err) {
    if (err == BWSS_EINVAL)
      warn ("BWSS_DOMAIN=%s is not a domain name; not joining a domain", getenv ("BWSS_DOMAIN"));
    else if (err != BWSS_ENOENT)
      warn ("cannot join the domain: %s", bwss_strerror (err));
    return;
  }
  fd_state = calloc (MAX_FD, sizeof *fd_state);
  fd_flow = calloc (MAX_FD, sizeof *fd_flow);
  if (fd_state == NULL || fd_flow == NULL) {
    free (fd_state);
    free (fd_flow);
    fd_state = NULL;
    bwss_domain_close (d);
    return;
  }
  pthread_atfork (NULL, NULL, after_fork_child);
  domain = d;
}

__attribute__ ((destructor)) static void
preload_fini (void)
{
  if (domain) {
    BwssDomain *d = domain;
    domain = NULL;
    bwss_domain_close (d);            /* unregisters and restores windows */
  }
}

/* Dispatches the domain if it is due; one thread at a time does. */
static void
maybe_apply (void)
{
  uint64_t now = bwss__clock_now_us ();
  uint64_t next = __atomic_load_n (&next_apply_us, __ATOMIC_RELAXED);
  if (now < next || !__atomic_compare_exchange_n (&next_apply_us, &next, UINT64_MAX, false,
                                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  uint64_t wait = bwss_domain_dispatch (domain, now);
  __atomic_store_n (&next_apply_us, now + wait, __ATOMIC_RELEASE);
}

/* A download's first window.  The window a SYN offers is fixed at connect()
 * (the kernel's: 64 kB) and no clamp set later takes it back — a receiver
 * never shrinks a window it offered — so a download's sender may send 64 kB
 * before bwssd's first clamp binds, and on a slow link everything else waits
 * behind it (a video's first response behind two downloads' first windows).
 * A clamp before connect() would fix a small window scale for the
 * connection's life; a small receive buffer does not when it is unlocked
 * (SO_BUF_LOCK, Linux 5.14): the kernel chooses the scale from the system's
 * largest buffer and the SYN's window from this socket's.  At the socket's
 * first data the buffer goes back to the kernel's default, unlocked (its
 * autotuning grows it), and bwssd's clamp takes over.  Only for flows with
 * neither a priority nor a minimum (a video keeps the kernel's first window),
 * only where the program chose no buffer of its own, and not at all on a
 * kernel without SO_BUF_LOCK. */
static int kernel_rcvbuf;            /* SO_RCVBUF of a new TCP socket: the kernel's default */
static int first_rcvbuf;             /* SO_RCVBUF once FIRST_RCVBUF_BYTES is set */

/* Before connect() on @fd: a TCP socket of a download gets the small buffer. */
static void
first_window_begin (int fd)
{
  int kernel_buf, small_buf;
  if (prefs.priority > 0 || prefs.min_rate_bps != 0 || fd < 0 || fd >= MAX_FD
      || fd_state[fd] != FD_UNKNOWN
      || knob_first_window_begin (fd, FIRST_RCVBUF_BYTES, &kernel_buf, &small_buf) != 0)
    return;
  __atomic_store_n (&kernel_rcvbuf, kernel_buf, __ATOMIC_RELAXED);
  __atomic_store_n (&first_rcvbuf, small_buf, __ATOMIC_RELAXED);
  pthread_mutex_lock (&table_lock);
  if (fd_state[fd] == FD_UNKNOWN)
    fd_state[fd] = FD_FIRST_WINDOW;
  pthread_mutex_unlock (&table_lock);
  trace_first ("fd %d connect: receive buffer %d bytes (the kernel's %d)", fd, small_buf, kernel_buf);
}

/* Called after a read returned data on @fd. */
static void
saw_data (int fd)
{
  if (fd >= 0 && fd < MAX_FD && (fd_state[fd] == FD_UNKNOWN || fd_state[fd] == FD_FIRST_WINDOW)) {
    pthread_mutex_lock (&table_lock);
    if (fd_state[fd] == FD_FIRST_WINDOW) {
      knob_first_window_end (fd, __atomic_load_n (&kernel_rcvbuf, __ATOMIC_RELAXED),
                             __atomic_load_n (&first_rcvbuf, __ATOMIC_RELAXED));
      fd_state[fd] = FD_UNKNOWN;
    }
    if (fd_state[fd] == FD_UNKNOWN) {
      BwssFlow *f = NULL;
      int err = bwss_flow_register_as (domain, fd, &prefs, "shim", 0, &f);
      trace_first ("fd %d first data, registered: %s", fd, err ? bwss_strerror (err) : "ok");
      if (err == 0) {
        bwss_flow_offer_read_pacing (f);   /* the hooks below pace its reads */
        if (share != BWSS_SHARE_FLOW && bwss_flow_set_share (f, share) != 0)
          warn ("fd %d: no %s to share with; the flow has a share of its own", fd,
                bwss_share_name (share));
        fd_flow[fd] = f;
        fd_state[fd] = FD_REGISTERED;
        __atomic_add_fetch (&flows_held, 1, __ATOMIC_RELAXED);
        __atomic_store_n (&next_apply_us, 0, __ATOMIC_RELAXED);   /* a flow: dispatch now */
      } else {
        fd_state[fd] = FD_NOT_OURS;   /* not a connected TCP socket, or full */
      }
    }
    pthread_mutex_unlock (&table_lock);
  }
  maybe_apply ();
}

/* Before a read of @want bytes on @fd: if its flow's reads are paced,
 * sleeps until its credit covers them (a segment at most), applying the
 * published decisions meanwhile. */
static void
pace_before (int fd, size_t want)
{
  if (fd < 0 || fd >= MAX_FD || fd_state[fd] != FD_REGISTERED)
    return;
  for (;;) {
    pthread_mutex_lock (&table_lock);
    uint64_t wait = fd_state[fd] == FD_REGISTERED ? bwss_flow_read_wait_us (fd_flow[fd], want) : 0;
    pthread_mutex_unlock (&table_lock);
    if (wait == 0)
      return;
    if (wait > PACE_SLEEP_MAX_US)
      wait = PACE_SLEEP_MAX_US;
    struct timespec ts = { .tv_sec = (time_t) (wait / 1000000), .tv_nsec = (long) (wait % 1000000) * 1000 };
    nanosleep (&ts, NULL);
    maybe_apply ();
  }
}

/* After a read returned @r bytes on @fd. */
static void
after_read (int fd, ssize_t r)
{
  if (r <= 0)
    return;
  saw_data (fd);
  if (fd >= 0 && fd < MAX_FD && fd_state[fd] == FD_REGISTERED) {
    pthread_mutex_lock (&table_lock);
    if (fd_state[fd] == FD_REGISTERED)
      bwss_flow_read_took (fd_flow[fd], (size_t) r);
    pthread_mutex_unlock (&table_lock);
  }
}

/* Returns the bytes the iovec asks for. */
static size_t
iov_bytes (const struct iovec *iov, int cnt)
{
  size_t n = 0;
  for (int i = 0; iov && i < cnt; i++)
    n += iov[i].iov_len;
  return n;
}

/* A read hook's body: waits for @want bytes of credit before the real
 * call (@want evaluated only then) and classifies and counts what it read
 * after, each while the process is in the domain (the destructor may have
 * left it during the read); a peek (@peek true) neither waits nor counts. */
#define PACED_READ(name, want, peek, ...)        \
  do {                                           \
    RESOLVE (name);                              \
    bool counted = !(peek);                      \
    if (domain && counted)                       \
      pace_before (fd, (want));                  \
    ssize_t r = real_##name (__VA_ARGS__);       \
    if (domain && counted)                       \
      after_read (fd, r);                        \
    return r;                                    \
  } while (0)

PRELOAD_API ssize_t
read (int fd, void *buf, size_t n)
{
  PACED_READ (read, n, false, fd, buf, n);
}

PRELOAD_API ssize_t
readv (int fd, const struct iovec *iov, int cnt)
{
  PACED_READ (readv, iov_bytes (iov, cnt), false, fd, iov, cnt);
}

PRELOAD_API ssize_t
recv (int fd, void *buf, size_t n, int flags)
{
  PACED_READ (recv, n, flags & MSG_PEEK, fd, buf, n, flags);
}

PRELOAD_API ssize_t
recvfrom (int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *al)
{
  PACED_READ (recvfrom, n, flags & MSG_PEEK, fd, buf, n, flags, a, al);
}

PRELOAD_API ssize_t
recvmsg (int fd, struct msghdr *m, int flags)
{
  PACED_READ (recvmsg, m ? iov_bytes (m->msg_iov, (int) m->msg_iovlen) : 0, flags & MSG_PEEK, fd, m, flags);
}

PRELOAD_API int
close (int fd)
{
  RESOLVE (close);
  if (domain && fd >= 0 && fd < MAX_FD && fd_state[fd] != FD_UNKNOWN) {
    pthread_mutex_lock (&table_lock);
    if (fd_state[fd] == FD_REGISTERED) {
      bwss_flow_unregister (fd_flow[fd]);   /* restores the window first */
      __atomic_sub_fetch (&flows_held, 1, __ATOMIC_RELAXED);
    }
    fd_flow[fd] = NULL;
    fd_state[fd] = FD_UNKNOWN;
    pthread_mutex_unlock (&table_lock);
  }
  return real_close (fd);
}

PRELOAD_API int
connect (int fd, const struct sockaddr *addr, socklen_t len)
{
  RESOLVE (connect);
  if (domain)
    first_window_begin (fd);
  return real_connect (fd, addr, len);
}

/* The slice a hooked wait that began at @start_us and may last @wait_us
 * (UINT64_MAX: for ever) waits now, µs (UINT64_MAX: for ever): until the
 * domain's next dispatch, WAIT_SLICE_MIN_US at least, if the process holds
 * flows; never past the program's own end.  *@last: this slice is the end
 * of the program's wait (a return of nothing ready is the program's). */
static uint64_t
wait_slice (uint64_t start_us, uint64_t wait_us, bool *last)
{
  uint64_t now = bwss__clock_now_us ();
  uint64_t end = wait_us == UINT64_MAX || start_us + wait_us < start_us ? UINT64_MAX : start_us + wait_us;
  uint64_t next = __atomic_load_n (&next_apply_us, __ATOMIC_RELAXED);
  if (next < now + WAIT_SLICE_MIN_US)
    next = now + WAIT_SLICE_MIN_US;
  *last = __atomic_load_n (&flows_held, __ATOMIC_RELAXED) == 0 || next >= end;
  if (!*last)
    return next - now;
  return end == UINT64_MAX ? UINT64_MAX : end > now ? end - now : 0;
}

/* µs as poll()'s and epoll_wait()'s timeout (-1: for ever), rounded up. */
static int
ms_of (uint64_t us)
{
  return us == UINT64_MAX ? -1 : us / 1000 + 1 > INT_MAX ? INT_MAX : (int) ((us + 999) / 1000);
}

PRELOAD_API int
poll (struct pollfd *fds, nfds_t n, int timeout)
{
  RESOLVE (poll);
  if (!domain)
    return real_poll (fds, n, timeout);
  uint64_t start = bwss__clock_now_us ();
  for (bool first = true;; first = false) {
    maybe_apply ();
    bool last;
    uint64_t slice = wait_slice (start, timeout < 0 ? UINT64_MAX : (uint64_t) timeout * 1000, &last);
    if (first && last)
      return real_poll (fds, n, timeout);            /* not cut: the program's own call */
    int r = real_poll (fds, n, ms_of (slice));
    if (r != 0 || last)
      return r;
  }
}

PRELOAD_API int
epoll_wait (int ep, struct epoll_event *ev, int max, int timeout)
{
  RESOLVE (epoll_wait);
  if (!domain)
    return real_epoll_wait (ep, ev, max, timeout);
  uint64_t start = bwss__clock_now_us ();
  for (bool first = true;; first = false) {
    maybe_apply ();
    bool last;
    uint64_t slice = wait_slice (start, timeout < 0 ? UINT64_MAX : (uint64_t) timeout * 1000, &last);
    if (first && last)
      return real_epoll_wait (ep, ev, max, timeout); /* not cut: the program's own call */
    int r = real_epoll_wait (ep, ev, max, ms_of (slice));
    if (r != 0 || last)
      return r;
  }
}

/* select() sets its fd sets (and, on Linux, the time left in @tv) on
 * return, so a slice starts again from the program's sets.  Sets wider than
 * an fd_set (@n above FD_SETSIZE) are not copied: such a wait is not cut. */
PRELOAD_API int
select (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
  RESOLVE (select);
  if (!domain)
    return real_select (n, r, w, e, tv);
  uint64_t start = bwss__clock_now_us ();
  uint64_t wait = tv == NULL ? UINT64_MAX
                  : tv->tv_sec < 0 || tv->tv_usec < 0 ? 0
                  : (uint64_t) tv->tv_sec > UINT64_MAX / 2000000 ? UINT64_MAX
                  : (uint64_t) tv->tv_sec * 1000000 + (uint64_t) tv->tv_usec;
  /* the program's sets as given: the words its @n bits take, no more (a
   * caller may allocate only those) */
  fd_set sets[3];
  fd_set *const given[3] = { r, w, e };
  size_t bytes = n > 0 && n <= FD_SETSIZE ? (size_t) (n + NFDBITS - 1) / NFDBITS * sizeof (fd_mask) : 0;
  for (int i = 0; i < 3; i++)
    if (given[i])
      memcpy (&sets[i], given[i], bytes);
  for (bool first = true;; first = false) {
    maybe_apply ();
    bool last;
    uint64_t slice = wait_slice (start, wait, &last);
    if (first && (last || n < 0 || n > FD_SETSIZE))
      return real_select (n, r, w, e, tv);           /* not cut: the program's own call */
    struct timeval stv = { .tv_sec = (time_t) (slice / 1000000), .tv_usec = (suseconds_t) (slice % 1000000) };
    int res = real_select (n, r, w, e, slice == UINT64_MAX ? NULL : &stv);
    if (res != 0 || last) {
      if (tv) {                                        /* the time left, as Linux's select() */
        uint64_t spent = bwss__clock_now_us () - start, left = wait > spent ? wait - spent : 0;
        tv->tv_sec = (time_t) (left / 1000000);
        tv->tv_usec = (suseconds_t) (left % 1000000);
      }
      return res;
    }
    for (int i = 0; i < 3; i++)
      if (given[i])
        memcpy (given[i], &sets[i], bytes);
  }
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.c — the domain as every process but bwssd sees it: a thin client
 * of the user's bwssd, the one controller (wire.h says what they say).
 *
 * A process hands bwssd its sockets (the fd itself, SCM_RIGHTS) with their
 * preferences; bwssd measures them, runs the laws and sets their windows
 * through its duplicates.  What comes back is what a client needs itself:
 * a paced flow's read rate (its reads are paced here, in the owner), and the
 * statistics it asks for.
 *
 *   event                          | then
 *   open, no bwssd listening       | unless BWSS_DOMAIN_NO_CREATE: start one
 *                                  | (`bwssd --autostart`, spawn_bwssd()), and
 *                                  | connect within START_WAIT_US
 *   register, set_prefs, share,    | a message, never answered (REJECT refuses),
 *   stream, late                   | queued (below)
 *   unregister                     | a message, queued; the socket given back here
 *                                  | at once
 *   bwssd reads slower than the    | the messages wait in the queue, in order;
 *   client sends (a burst of flows,| nothing waits for them and nothing is dropped;
 *   a loaded machine)              | bwssd that has read nothing of them for
 *                                  | LIVE_US is treated as one that does not
 *                                  | answer (below); the connection stays
 *   the connection ends (bwssd     | fail-open: every socket of this process given
 *   died, or it refused to listen) | back here (its clamp as it was before it was
 *                                  | handed over, its buffer if paced); connect
 *                                  | again every RETRY_US while flows remain
 *                                  | (starting bwssd if allowed), then hand them
 *                                  | over again through the queue, oldest first
 *
 * The queue.  What a client sends unasked goes through one queue per
 * connection, sent while the connection's buffer has room and then as
 * bwssd reads (the dispatch sends more when the connection becomes
 * writable).  Its entries are the flows themselves, each at most once with
 * what it still owes bwssd (its hand-over, new preferences, a late figure,
 * its end): a flow changed again while it waits is sent as it is then, so
 * the queue never holds more than the process's flows and those it ended
 * whose end is not out yet, however fast they change or bwssd reads.
 * A full buffer is back-pressure, never a reason to end the connection:
 * only the connection's end or an error ends it.  A reader's request
 * (statistics, the flow list) goes after the queue, waiting up to
 * REPLY_WAIT_US for both (BWSS_EBUSY after that, the connection kept).
 *
 * One connection per process and domain name, shared by its handles; the
 * domain's fd (bwss_domain_get_fd()) is an epoll set of the connection and
 * an eventfd, so a client wakes for bwssd's messages and nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "sys.h"
#include "wire.h"

extern char **environ;

/* With no flow, or flows bwssd controls but none paced: the dispatch has
 * nothing periodic to do and asks again after this (a message wakes it at
 * once through the domain's fd). */
#define IDLE_US         1000000ull
/* Connecting again after the connection ended, while flows remain or the
 * handle may start bwssd (bwss-run keeps one for its command's flows);
 * after each failure twice as long, up to RETRY_MAX_US. */
#define RETRY_US        1000000ull
#define RETRY_MAX_US    16000000ull
/* An autostarted bwssd listens within this (its start is ~10 ms). */
#define START_WAIT_US   2000000ull
#define START_AGAIN_US  500000ull
/* Longest wait for a reader's reply, and for the queue and its request
 * to go out: bwssd answers between two rounds (well under a millisecond
 * each). */
#define REPLY_WAIT_US   200000ull
/* While it has flows handed over, a client asks bwssd for a sign of life
 * this often; one not answered by the next, or a queue bwssd has taken
 * nothing of for as long, is a bwssd that is stopped or hung: its sockets
 * go back to the kernel (fail-open) until it answers again (it then sets
 * their windows again itself).  A flow is left throttled by a stuck bwssd
 * for at most two of these. */
#define LIVE_US         500000ull

typedef struct Conn Conn;

/* What a flow owes bwssd (BwssFlow.out): it waits in the connection's
 * queue while any is set. */
enum {
  OUT_REGISTER   = 1u << 0,    /* its hand-over (carries its preferences, share, pacing) */
  OUT_UPDATE     = 1u << 1,    /* its preferences, share or pacing changed since */
  OUT_LATE       = 1u << 2,    /* a late figure (the last one reported) */
  OUT_UNREGISTER = 1u << 3,    /* its end: the flow is gone here, only this is left */
};

struct BwssFlow {
  Conn       *c;            /* NULL: inherited across fork, inert */
  BwssDomain *owner;
  int         fd;
  uint64_t    inode;        /* of the socket: an fd number can be reused */
  uint32_t    orig_clamp;   /* the clamp before it was handed over */
  uint64_t    id;           /* its name on the connection */
  BwssPrefs   prefs;
  BwssShare   share;
  uint32_t    stream;       /* share STREAM: its number in this process */
  bool        paced_reads;  /* the owner offered to pace its reads */
  bool        handed;       /* on the connection now: its hand-over went out */
  bool        gone;         /* unregistered: in the queue for its end only */
  unsigned    out;          /* OUT_*: what waits to be sent for it */
  BwssFlow   *out_next;     /* the next flow in the connection's queue */
  double      late_fraction, late_prebuffer_s;   /* OUT_LATE's figures */
  int         refused;      /* bwssd's REJECT: a BWSS_E code, 0 if none */
  pid_t       owner_pid;
  char        origin[BWSS_ORIGIN_MAX];
  double      pace_bps;     /* the read rate bwssd asks for, bit/s; 0 = freely */
  bool        was_paced;    /* bwssd fixed the socket's receive buffer for pacing */
  double      tokens;       /* read credit, bytes (negative: a read took more) */
  uint64_t    tokens_us;
  uint32_t    mss;
  BwssFlow   *next;
};

struct Conn {
  char        name[BWSS_DOMAIN_NAME_MAX + 1];
  char        path[PATH_MAX];      /* the socket's */
  pthread_mutex_t lock;            /* guards everything here and the flows */
  int         fd;                  /* the connection, -1 if none */
  int         wake_fd;             /* eventfd: a dispatch is due at once */
  int         ep_fd;               /* epoll: wake_fd and fd (bwss_domain_get_fd()) */
  unsigned    refs;
  bool        may_start;           /* some handle may start bwssd */
  BwssFlow   *flows;               /* oldest first */
  BwssFlow   *out_head;            /* the queue: flows that owe bwssd a message, */
  BwssFlow  **out_tail;            /* in the order they came to owe it */
  uint64_t    out_moved_us;        /* the queue last took a message out, or began to wait */
  bool        out_watched;         /* the epoll set wakes the dispatch for room to send */
  uint64_t    next_id;
  uint32_t    seq;
  uint64_t    next_connect_us;
  uint64_t    retry_us;            /* the wait after the next failure to connect */
  uint32_t    ping_seq;            /* the sign of life asked for, 0 if none outstanding */
  uint64_t    ping_us;             /* ... when */
  bool        failed_open;         /* bwssd did not answer: the sockets are the kernel's */
  BwssParams  params;              /* the pacing token bucket's depth */
  pthread_t   thread;
  bool        thread_on;
  atomic_bool thread_stop;
  Conn       *next;
};

struct BwssDomain {
  Conn *c;
};

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static Conn *conns;

/* The connection's own calls go to the kernel directly (sys_close,
 * sock_recv_msg, sys_poll): inside the preload shim the process's close(),
 * recvmsg() and poll() are the shim's hooks (programs/shim/preload.c),
 * which must not come back into the domain from under its lock. */

/* ---- the connection ---- */

/* Makes @c's wake fd readable: a dispatch is due at once.  Any thread. */
static void
conn_wake (Conn *c)
{
  if (c->wake_fd >= 0)
    eventfd_write (c->wake_fd, 1);
}

/* Gives @f's socket back to the kernel: the clamp it had before it was
 * handed over, the largest receive buffer if pacing fixed it, reads no
 * longer paced.  Only if the fd still names the socket. */
static void
restore_socket (BwssFlow *f)
{
  if (knob_fd_is (f->fd, f->inode)) {
    if (f->was_paced)
      knob_restore_rcvbuf (f->fd);
    knob_give_back_clamp (f->fd, f->orig_clamp, f->was_paced);
  }
  f->was_paced = false;
  f->pace_bps = 0.0;
}

/* Empties the queue: what waits there is not sent (the connection ended,
 * or is not this process's); flows that are gone are freed.  c->lock held. */
static void
out_clear (Conn *c)
{
  while (c->out_head) {
    BwssFlow *f = c->out_head;
    c->out_head = f->out_next;
    f->out = 0;
    f->out_next = NULL;
    if (f->gone)
      free (f);
  }
  c->out_tail = &c->out_head;
}

/* Ends the connection: every socket of this process back to the kernel
 * (fail-open), the queue emptied, bwssd tried again after RETRY_US.
 * c->lock held. */
static void
conn_lost (Conn *c)
{
  if (c->fd < 0)
    return;
  epoll_ctl (c->ep_fd, EPOLL_CTL_DEL, c->fd, NULL);
  sys_close (c->fd);
  c->fd = -1;
  c->out_watched = false;
  out_clear (c);
  for (BwssFlow *f = c->flows; f; f = f->next) {
    if (f->handed)
      restore_socket (f);
    f->handed = false;
  }
  c->ping_seq = 0;
  c->failed_open = false;
  c->next_connect_us = bwss__clock_now_us () + RETRY_US;
}

static void
fill_flow (WireFlow *m, uint16_t type, const BwssFlow *f)
{
  memset (m, 0, sizeof *m);
  wire_head (&m->h, type, 0, f->id, 0);
  /* field by field: a struct copy may carry BwssPrefs' padding, which the
   * caller's copy never set, onto the wire */
  m->prefs.priority = f->prefs.priority;
  m->prefs.min_rate_bps = f->prefs.min_rate_bps;
  m->prefs.weight = f->prefs.weight;
  m->share = (uint32_t) f->share;
  m->stream = f->stream;
  m->paced = f->paced_reads;
  m->fd = f->fd;
  m->owner_pid = f->owner_pid;
  memcpy (m->origin, f->origin, sizeof m->origin);
}

/* ---- the queue ---- */

/* Sets @what in what @f owes bwssd, putting it at the queue's end if it
 * owed nothing.  c->lock held. */
static void
out_add (Conn *c, BwssFlow *f, unsigned what)
{
  if (c->out_head == NULL)
    c->out_moved_us = bwss__clock_now_us ();   /* the wait starts now */
  if (f->out == 0) {
    f->out_next = NULL;
    *c->out_tail = f;
    c->out_tail = &f->out_next;
  }
  f->out |= what;
}

/* Takes @f out of the queue, owing nothing.  c->lock held. */
static void
out_remove (Conn *c, BwssFlow *f)
{
  if (f->out == 0)
    return;
  for (BwssFlow **pp = &c->out_head; *pp; pp = &(*pp)->out_next)
    if (*pp == f) {
      *pp = f->out_next;
      if (c->out_tail == &f->out_next)
        c->out_tail = pp;
      break;
    }
  f->out = 0;
  f->out_next = NULL;
}

/* Asks the epoll set to wake the dispatch when the connection has room
 * (@on), or only for bwssd's messages.  c->lock held, connected. */
static void
out_watch (Conn *c, bool on)
{
  if (c->out_watched == on)
    return;
  struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.fd = c->fd };
  if (epoll_ctl (c->ep_fd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
    c->out_watched = on;
}

/* Sends the first message @f owes, without waiting: its hand-over first
 * (which carries everything else but a late figure), its end alone if it
 * is gone.  Returns 0 (sent, or nothing left worth sending: the socket
 * closed behind our back, a flow bwssd refused) or -errno.  c->lock held,
 * connected. */
static int
out_send_one (Conn *c, BwssFlow *f)
{
  WireFlow m;
  int err = 0;
  if (f->out & OUT_UNREGISTER) {
    WireHead h;
    wire_head (&h, WIRE_UNREGISTER, 0, f->id, 0);
    if ((err = sock_send_msg (c->fd, &h, sizeof h, -1, 0)) == 0)
      f->out = 0;
  } else if (f->out & OUT_REGISTER) {
    if (!knob_fd_is (f->fd, f->inode)) {
      f->out = 0;                        /* closed behind our back: nothing to hand */
      return 0;
    }
    fill_flow (&m, WIRE_REGISTER, f);
    if ((err = sock_send_msg (c->fd, &m, sizeof m, f->fd, 0)) == 0) {
      f->out &= ~(unsigned) (OUT_REGISTER | OUT_UPDATE);
      f->handed = true;
      f->refused = 0;
    }
  } else if (!f->handed) {
    f->out = 0;                          /* refused since: bwssd has nothing to update */
  } else if (f->out & OUT_UPDATE) {
    fill_flow (&m, WIRE_UPDATE, f);
    if ((err = sock_send_msg (c->fd, &m, sizeof m, -1, 0)) == 0)
      f->out &= ~(unsigned) OUT_UPDATE;
  } else if (f->out & OUT_LATE) {
    WireLate l = { .late_fraction = f->late_fraction, .required_prebuffer_s = f->late_prebuffer_s };
    wire_head (&l.h, WIRE_LATE, 0, f->id, 0);
    if ((err = sock_send_msg (c->fd, &l, sizeof l, -1, 0)) == 0)
      f->out &= ~(unsigned) OUT_LATE;
  }
  return err;
}

/* Sends what the queue holds, in order, while the connection takes it
 * without waiting.  Returns 0 once it is empty; BWSS_EBUSY if bwssd has not
 * read enough of what it was sent (the rest waits, and the dispatch is woken
 * when there is room); BWSS_ENOENT if the connection ended (then lost).
 * c->lock held. */
static int
out_flush (Conn *c)
{
  if (c->fd < 0)
    return c->out_head ? BWSS_ENOENT : 0;
  while (c->out_head) {
    BwssFlow *f = c->out_head;
    int err = out_send_one (c, f);
    if (err == -EAGAIN || err == -ETOOMANYREFS) {
      /* a full buffer, or too many sockets in flight: bwssd reads them */
      out_watch (c, err == -EAGAIN);
      return BWSS_EBUSY;
    }
    if (err) {
      conn_lost (c);
      return BWSS_ENOENT;
    }
    c->out_moved_us = bwss__clock_now_us ();
    if (f->out == 0) {
      c->out_head = f->out_next;
      if (c->out_head == NULL)
        c->out_tail = &c->out_head;
      f->out_next = NULL;
      if (f->gone)
        free (f);
    }
  }
  out_watch (c, false);
  return 0;
}

/* Starts `bwssd --autostart` for domain @name, its output on /dev/null,
 * none of this process's other files (a daemon holding a program's pipe or
 * socket would keep it open) and without the preload shim, and waits for the process it spawned (it
 * detaches).  bwssd: $BWSS_BWSSD, else the installed one. */
static void
spawn_bwssd (const char *name)
{
  const char *exe = getenv ("BWSS_BWSSD");
  if (exe == NULL || *exe == '\0')
    exe = BWSS_BWSSD_PATH;
  char *argv[] = { (char *) exe, (char *) "--autostart", (char *) "--domain", (char *) name, NULL };
  size_t n = 0;
  while (environ && environ[n])
    n++;
  char **envp = calloc (n + 1, sizeof *envp);
  if (envp == NULL)
    return;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp (environ[i], "LD_PRELOAD=", 11) != 0)
      envp[k++] = environ[i];
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  for (int i = 0; i < 3; i++)
    posix_spawn_file_actions_addopen (&fa, i, "/dev/null", i ? O_WRONLY : O_RDONLY, 0);
  posix_spawn_file_actions_addclosefrom_np (&fa, 3);   /* none of this process's files */
  pid_t pid;
  if (posix_spawn (&pid, exe, &fa, NULL, argv, envp) == 0)
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
      ;
  posix_spawn_file_actions_destroy (&fa);
  free (envp);
}

/* Connects to bwssd, starting it if allowed and none listens, and hands
 * every flow over.  Returns 0, BWSS_ENOENT (no bwssd) or another code.
 * c->lock held. */
static int
conn_open (Conn *c)
{
  if (c->fd >= 0)
    return 0;
  int fd = sock_unix_connect (c->path, 0);
  if (fd < 0 && c->may_start && (fd == -ENOENT || fd == -ECONNREFUSED)) {
    /* started again every START_AGAIN_US: one that finds the domain's lock
     * still held by a bwssd that is dying exits at once */
    uint64_t now = bwss__clock_now_us (), end = now + START_WAIT_US, spawned = 0;
    while (fd < 0 && (fd == -ENOENT || fd == -ECONNREFUSED) && now < end) {
      if (now - spawned >= START_AGAIN_US) {
        spawn_bwssd (c->name);
        spawned = now;
      }
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
      fd = sock_unix_connect (c->path, 0);
      now = bwss__clock_now_us ();
    }
  }
  if (fd < 0) {
    c->retry_us = c->retry_us ? c->retry_us : RETRY_US;
    c->next_connect_us = bwss__clock_now_us () + c->retry_us;
    c->retry_us = c->retry_us * 2 < RETRY_MAX_US ? c->retry_us * 2 : RETRY_MAX_US;
    return fd == -ENOENT || fd == -ECONNREFUSED ? BWSS_ENOENT
           : fd == -EACCES || fd == -EPERM     ? BWSS_EPERM : BWSS_EPROTO;
  }
  c->fd = fd;
  c->retry_us = RETRY_US;
  c->out_watched = false;
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
  epoll_ctl (c->ep_fd, EPOLL_CTL_ADD, fd, &ev);
  /* every flow's hand-over queued, oldest first: sent as bwssd reads them */
  for (BwssFlow *f = c->flows; f; f = f->next)
    out_add (c, f, OUT_REGISTER);
  out_flush (c);
  return 0;
}

static BwssFlow *
find_flow (Conn *c, uint64_t id)
{
  for (BwssFlow *f = c->flows; f; f = f->next)
    if (f->id == id)
      return f;
  return NULL;
}

/* Brings @f's read credit up to @now (the bucket: pace_burst_segments). */
static void
pacing_refill (Conn *c, BwssFlow *f, uint64_t now)
{
  double mss = f->mss ? f->mss : c->params.default_mss;
  double depth = c->params.pace_burst_segments * mss;
  if (f->tokens_us && now > f->tokens_us)
    f->tokens += f->pace_bps / 8.0 * (double) (now - f->tokens_us) / 1e6;
  if (f->tokens > depth)
    f->tokens = depth;
  f->tokens_us = now;
}

static void update (Conn *c, BwssFlow *f);

/* A message bwssd sent unasked (REJECT, PACE), or the answer to a sign of
 * life.  c->lock held. */
static void
handle_push (Conn *c, const WireMsg *m, size_t len)
{
  if (m->h.type == WIRE_DOMAIN && c->ping_seq && m->h.seq == c->ping_seq) {
    c->ping_seq = 0;
    if (c->failed_open) {                /* back: paced owners are told their rates again */
      c->failed_open = false;
      for (BwssFlow *f = c->flows; f && c->fd >= 0; f = f->next)
        if (f->paced_reads)
          update (c, f);
    }
    return;
  }
  BwssFlow *f = find_flow (c, m->h.flow);
  if (f == NULL)
    return;
  if (m->h.type == WIRE_REJECT) {
    f->refused = m->h.arg ? m->h.arg : BWSS_EPROTO;
    f->handed = false;
    restore_socket (f);
  } else if (m->h.type == WIRE_PACE && len >= sizeof m->pace && f->paced_reads) {
    uint64_t now = bwss__clock_now_us ();
    double pace = m->pace.read_rate_bps > 0.0 ? m->pace.read_rate_bps : 0.0;
    if (pace > 0.0 && f->pace_bps == 0.0) {
      f->tokens = 0.0;                   /* pacing starts: no credit yet */
      f->tokens_us = now;
    } else if (f->pace_bps > 0.0) {
      pacing_refill (c, f, now);         /* the credit so far, at the old rate */
    }
    f->was_paced = f->was_paced || pace > 0.0;
    f->pace_bps = pace;
    f->mss = m->pace.mss;
  }
}

/* Receives one message into @m, closing any fd but the one *@fd_out
 * (if not NULL) takes.  Returns its length, 0 if none waits, -1 if the
 * connection ended (then lost).  c->lock held. */
static ssize_t
conn_recv (Conn *c, WireMsg *m, int *fd_out)
{
  int fd;
  ssize_t n = sock_recv_msg (c->fd, m, sizeof *m, &fd, NULL);
  if (n == -EAGAIN)
    return 0;
  if (n < (ssize_t) sizeof (WireHead) || m->h.version != WIRE_VERSION) {
    if (fd >= 0)
      sys_close (fd);
    conn_lost (c);
    return -1;
  }
  if (fd_out)
    *fd_out = fd;
  else if (fd >= 0)
    sys_close (fd);
  return n;
}

/* Reads every message waiting.  c->lock held. */
static void
conn_drain (Conn *c)
{
  WireMsg m;
  ssize_t n;
  while (c->fd >= 0 && (n = conn_recv (c, &m, NULL)) > 0)
    handle_push (c, &m, (size_t) n);
}

/* Waits until the connection has room, at most until @end (µs).  bwssd
 * never waits to send, so it reads on while we wait.  c->lock held,
 * connected. */
static void
wait_room (Conn *c, uint64_t end)
{
  uint64_t now = bwss__clock_now_us ();
  if (now >= end)
    return;
  struct pollfd p = { .fd = c->fd, .events = POLLOUT };
  sys_poll (&p, 1, (int) ((end - now + 999) / 1000));
}

/* Sends the queue and then the request @req (@len bytes), and waits for
 * its reply (the same seq) into @reply, passing what bwssd pushes meanwhile
 * on; all within REPLY_WAIT_US.  Returns the reply's length, or a BWSS_E
 * code: BWSS_ENOENT (no bwssd), BWSS_EBUSY (bwssd read or answered nothing
 * in time: the connection and the queue stay).  *@fd_out gets an fd the
 * reply carries (-1 if none).  c->lock held. */
static ssize_t
request (Conn *c, WireHead *req, size_t len, WireMsg *reply, int *fd_out)
{
  *fd_out = -1;
  int err = conn_open (c);
  if (err)
    return err;
  uint64_t end = bwss__clock_now_us () + REPLY_WAIT_US;
  /* the queue first: the request may be about a flow whose hand-over waits */
  while ((err = out_flush (c)) == BWSS_EBUSY && bwss__clock_now_us () < end)
    wait_room (c, end);
  if (err)
    return err;
  req->seq = ++c->seq;
  for (;;) {
    int e = sock_send_msg (c->fd, req, len, -1, 0);
    if (e == 0)
      break;
    if (e != -EAGAIN) {
      conn_lost (c);
      return BWSS_ENOENT;
    }
    if (bwss__clock_now_us () >= end)
      return BWSS_EBUSY;
    wait_room (c, end);
  }
  for (;;) {
    int fd = -1;
    ssize_t n = conn_recv (c, reply, &fd);
    if (n < 0)
      return BWSS_ENOENT;
    if (n > 0 && reply->h.seq == req->seq && reply->h.type >= WIRE_FLOW) {
      *fd_out = fd;
      return n;
    }
    if (fd >= 0)
      sys_close (fd);
    if (n > 0) {
      handle_push (c, reply, (size_t) n);
      continue;
    }
    uint64_t now = bwss__clock_now_us ();
    if (now >= end)
      return BWSS_EBUSY;
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    sys_poll (&p, 1, (int) ((end - now + 999) / 1000));
  }
}

/* ---- open, close, fork ---- */

static void *dispatch_thread (void *data);

static void
conn_stop_thread (Conn *c)
{
  if (!c->thread_on)
    return;
  atomic_store (&c->thread_stop, true);
  conn_wake (c);
  pthread_join (c->thread, NULL);
  c->thread_on = false;
}

/* Gives @f's socket back here (bwssd, which restores it through its
 * duplicate, may be gone) and queues its end if bwssd has it; a hand-over
 * still waiting is simply not sent.  Frees @f, now or once its end is
 * out.  c->lock held; @f out of c->flows. */
static void
release (Conn *c, BwssFlow *f)
{
  if (f->handed || f->refused == 0)
    restore_socket (f);
  out_remove (c, f);
  if (!f->handed || c->fd < 0) {
    free (f);
    return;
  }
  f->gone = true;
  f->c = NULL;
  out_add (c, f, OUT_UNREGISTER);
  out_flush (c);
}

static void
conn_free (Conn *c)
{
  conn_stop_thread (c);
  pthread_mutex_lock (&c->lock);
  while (c->flows) {
    BwssFlow *f = c->flows;
    c->flows = f->next;
    release (c, f);
  }
  out_clear (c);                         /* the connection's end says the rest */
  if (c->fd >= 0)
    sys_close (c->fd);
  pthread_mutex_unlock (&c->lock);
  if (c->wake_fd >= 0)
    sys_close (c->wake_fd);
  if (c->ep_fd >= 0)
    sys_close (c->ep_fd);
  pthread_mutex_destroy (&c->lock);
  free (c);
}

/* Makes @c's epoll set and eventfd (fresh ones, at the same numbers if it
 * had them: a forked child shares its parent's). */
static void
conn_fds (Conn *c)
{
  int w = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  int e = epoll_create1 (EPOLL_CLOEXEC);
  if (w >= 0 && c->wake_fd >= 0 && dup3 (w, c->wake_fd, O_CLOEXEC) >= 0) {
    sys_close (w);
    w = c->wake_fd;
  }
  if (e >= 0 && c->ep_fd >= 0 && dup3 (e, c->ep_fd, O_CLOEXEC) >= 0) {
    sys_close (e);
    e = c->ep_fd;
  }
  c->wake_fd = w;
  c->ep_fd = e;
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = w };
  if (e >= 0 && w >= 0)
    epoll_ctl (e, EPOLL_CTL_ADD, w, &ev);
}

/* In a forked child: the parent's connection, flows and thread are not
 * ours (its flows stay the parent's; the child connects on its own). */
static void
after_fork_child (void)
{
  for (Conn *c = conns; c; c = c->next) {
    pthread_mutex_init (&c->lock, NULL);
    while (c->flows) {
      BwssFlow *f = c->flows;
      c->flows = f->next;
      f->c = NULL;                       /* handles still point at it: inert */
    }
    out_clear (c);                       /* the parent's to send */
    if (c->fd >= 0)
      sys_close (c->fd);
    c->fd = -1;
    c->thread_on = false;
    conn_fds (c);
  }
  pthread_mutex_init (&conns_lock, NULL);
}

/* Returns the connection to the domain whose socket is @path: the runtime
 * directory's "<name>.sock" (bwss_domain_path()), so its name is the rest. */
static Conn *
conn_new (const char *path)
{
  Conn *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  const char *base = strrchr (path, '/') + 1;
  snprintf (c->path, sizeof c->path, "%s", path);
  snprintf (c->name, sizeof c->name, "%.*s", (int) (strlen (base) - strlen (".sock")), base);
  pthread_mutex_init (&c->lock, NULL);
  c->fd = c->wake_fd = c->ep_fd = -1;
  conn_fds (c);
  c->next_id = 1;
  c->out_tail = &c->out_head;
  bwss_params_init_for (&c->params, BWSS_LOOP_DELAY);
  return c;
}

int
bwss_domain_open (const char *name, unsigned flags, BwssDomain **out)
{
  char path[PATH_MAX];
  if (out == NULL || (flags & ~(BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER | BWSS_DOMAIN_THREAD)))
    return BWSS_EINVAL;
  int err = bwss_domain_path (name, ".sock", path, sizeof path);   /* the name in force, checked */
  if (err)
    return err;
  BwssDomain *d = calloc (1, sizeof *d);
  if (d == NULL)
    return BWSS_ENOMEM;
  pthread_mutex_lock (&conns_lock);
  static bool atfork_done;
  if (!atfork_done) {
    pthread_atfork (NULL, NULL, after_fork_child);
    atfork_done = true;
  }
  Conn *c;
  for (c = conns; c; c = c->next)
    if (strcmp (c->path, path) == 0)
      break;
  bool fresh = c == NULL;
  if (fresh && (c = conn_new (path)) == NULL) {
    pthread_mutex_unlock (&conns_lock);
    free (d);
    return BWSS_ENOMEM;
  }
  pthread_mutex_lock (&c->lock);
  if (!(flags & BWSS_DOMAIN_NO_CREATE))
    c->may_start = true;
  err = conn_open (c);
  pthread_mutex_unlock (&c->lock);
  if (err && fresh && !c->may_start) {   /* a handle that may start bwssd tries again later */
    conn_free (c);
    pthread_mutex_unlock (&conns_lock);
    free (d);
    return err;
  }
  if (fresh) {
    c->next = conns;
    conns = c;
  }
  c->refs++;
  if ((flags & BWSS_DOMAIN_THREAD) && !c->thread_on) {
    atomic_store (&c->thread_stop, false);
    if (pthread_create (&c->thread, NULL, dispatch_thread, c) == 0)
      c->thread_on = true;
  }
  pthread_mutex_unlock (&conns_lock);
  d->c = c;
  *out = d;
  return 0;
}

void
bwss_domain_close (BwssDomain *d)
{
  if (d == NULL)
    return;
  Conn *c = d->c;
  pthread_mutex_lock (&c->lock);
  for (BwssFlow **pp = &c->flows; *pp;) {
    BwssFlow *f = *pp;
    if (f->owner == d) {
      *pp = f->next;
      release (c, f);
    } else {
      pp = &f->next;
    }
  }
  pthread_mutex_unlock (&c->lock);
  pthread_mutex_lock (&conns_lock);
  bool last = --c->refs == 0;
  if (last)
    for (Conn **p = &conns; *p; p = &(*p)->next)
      if (*p == c) {
        *p = c->next;
        break;
      }
  pthread_mutex_unlock (&conns_lock);
  if (last)
    conn_free (c);
  free (d);
}

/* ---- flows ---- */

static bool
origin_is_valid (const char *origin)
{
  size_t n = strnlen (origin, BWSS_ORIGIN_MAX);
  if (n == 0 || n == BWSS_ORIGIN_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (origin[i] < 0x20 || origin[i] > 0x7e)
      return false;
  return true;
}

int
bwss_flow_register (BwssDomain *d, int fd, const BwssPrefs *prefs, BwssFlow **out)
{
  return bwss_flow_register_as (d, fd, prefs, NULL, 0, out);
}

int
bwss_flow_register_as (BwssDomain *d, int fd, const BwssPrefs *prefs, const char *origin,
                       pid_t owner_pid, BwssFlow **out)
{
  if (origin == NULL)
    origin = "registered";
  if (d == NULL || out == NULL || bwss_prefs_check (prefs) != BWSS_OK
      || !origin_is_valid (origin) || owner_pid < 0)
    return BWSS_EINVAL;
  if (fd < 0 || !knob_is_connected_tcp (fd))
    return BWSS_EBADF;
  KnobInfo k;
  uint32_t clamp;
  if (knob_read_info (fd, &k) != 0 || knob_get_clamp (fd, &clamp) != 0)
    return BWSS_EBADF;
  Conn *c = d->c;
  BwssFlow *f = calloc (1, sizeof *f);
  if (f == NULL)
    return BWSS_ENOMEM;
  f->c = c;
  f->owner = d;
  f->fd = fd;
  f->inode = k.inode;
  f->orig_clamp = clamp;
  f->prefs = *prefs;
  f->owner_pid = owner_pid;
  snprintf (f->origin, sizeof f->origin, "%s", origin);
  pthread_mutex_lock (&c->lock);
  /* a listed flow with this fd number is this socket only while it names
   * the same socket: a number closed before its flow was unregistered and
   * given again by the kernel is another socket (its old flow's calls test
   * the inode, restore_socket()) */
  BwssFlow **end = &c->flows;
  for (; *end; end = &(*end)->next)
    if ((*end)->fd == fd && (*end)->inode == k.inode) {
      pthread_mutex_unlock (&c->lock);
      free (f);
      return BWSS_EEXIST;
    }
  f->id = c->next_id++;
  *end = f;                              /* the list's end: hand-overs go oldest first */
  if (c->fd >= 0) {                      /* else at the next connection */
    out_add (c, f, OUT_REGISTER);
    out_flush (c);
  }
  pthread_mutex_unlock (&c->lock);
  conn_wake (c);
  *out = f;
  return 0;
}

/* Queues @f's preferences, share and pacing to be sent again.  c->lock
 * held. */
static void
update (Conn *c, BwssFlow *f)
{
  if (!f->handed || c->fd < 0)
    return;                              /* they go with the (next) hand-over */
  out_add (c, f, OUT_UPDATE);
  out_flush (c);
}

/* Locks @f's connection; returns it, or NULL (BWSS_EINVAL) for an inert
 * flow.  *@err: BWSS_ENOENT if bwssd refused or dropped the flow. */
static Conn *
flow_lock (BwssFlow *f, int *err)
{
  *err = BWSS_EINVAL;
  if (f == NULL || f->c == NULL)
    return NULL;
  pthread_mutex_lock (&f->c->lock);
  *err = f->refused ? BWSS_ENOENT : 0;
  return f->c;
}

int
bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs)
{
  int err;
  if (bwss_prefs_check (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  Conn *c = flow_lock (f, &err);
  if (c == NULL)
    return err;
  if (err == 0) {
    f->prefs = *prefs;
    update (c, f);
  }
  pthread_mutex_unlock (&c->lock);
  return err;
}

/* Puts @f in the group of @share (with BWSS_SHARE_STREAM, stream @stream
 * of this process) and queues the change if it is one. */
static int
set_group (BwssFlow *f, BwssShare share, uint32_t stream)
{
  int err;
  Conn *c = flow_lock (f, &err);
  if (c == NULL)
    return err;
  if (err == 0 && (f->share != share || f->stream != stream)) {
    f->share = share;
    f->stream = stream;
    update (c, f);
  }
  pthread_mutex_unlock (&c->lock);
  return err;
}

int
bwss_flow_set_share (BwssFlow *f, BwssShare share)
{
  if (bwss_share_name (share) == NULL || share == BWSS_SHARE_STREAM)
    return BWSS_EINVAL;
  pid_t owner = f && f->owner_pid ? f->owner_pid : getpid ();
  uint64_t id;
  if (share == BWSS_SHARE_UNIT && proc_cgroup_id (owner, &id) != 0)
    return f ? BWSS_ENOENT : BWSS_EINVAL;
  return set_group (f, share, 0);
}

int
bwss_flow_set_stream (BwssFlow *f, uint32_t stream)
{
  return set_group (f, stream ? BWSS_SHARE_STREAM : BWSS_SHARE_FLOW, stream);
}

int
bwss_flow_offer_read_pacing (BwssFlow *f)
{
  int err;
  Conn *c = flow_lock (f, &err);
  if (c == NULL)
    return err;
  if (err == 0 && !f->paced_reads) {
    f->paced_reads = true;
    update (c, f);
  }
  pthread_mutex_unlock (&c->lock);
  return err;
}

uint64_t
bwss_flow_read_wait_us (BwssFlow *f, size_t want)
{
  if (f == NULL || f->c == NULL)
    return 0;
  Conn *c = f->c;
  uint64_t wait = 0;
  pthread_mutex_lock (&c->lock);
  if (f->pace_bps > 0.0) {
    pacing_refill (c, f, bwss__clock_now_us ());
    double need = f->mss ? (double) f->mss : c->params.default_mss;
    if (want && (double) want < need)
      need = (double) want;
    if (f->tokens < need)
      wait = (uint64_t) ((need - f->tokens) * 8.0 / f->pace_bps * 1e6) + 1;
  }
  pthread_mutex_unlock (&c->lock);
  return wait;
}

void
bwss_flow_read_took (BwssFlow *f, size_t n)
{
  if (f == NULL || f->c == NULL || n == 0)
    return;
  Conn *c = f->c;
  pthread_mutex_lock (&c->lock);
  if (f->pace_bps > 0.0) {
    pacing_refill (c, f, bwss__clock_now_us ());
    f->tokens -= (double) n;
  }
  pthread_mutex_unlock (&c->lock);
}

int
bwss_flow_report_late (BwssFlow *f, double late_fraction, double required_prebuffer_s)
{
  int err;
  if (!wire_late_valid (late_fraction, required_prebuffer_s))
    return BWSS_EINVAL;
  Conn *c = flow_lock (f, &err);
  if (c == NULL)
    return err;
  if (err == 0 && (f->handed || (f->out & OUT_REGISTER)) && c->fd >= 0) {
    f->late_fraction = late_fraction;    /* a figure still waiting is replaced */
    f->late_prebuffer_s = required_prebuffer_s;
    out_add (c, f, OUT_LATE);
    out_flush (c);
  }
  pthread_mutex_unlock (&c->lock);
  return err;
}

void
bwss_flow_unregister (BwssFlow *f)
{
  if (f == NULL)
    return;
  Conn *c = f->c;
  if (c == NULL) {                       /* inherited across fork: not ours */
    free (f);
    return;
  }
  pthread_mutex_lock (&c->lock);
  for (BwssFlow **pp = &c->flows; *pp; pp = &(*pp)->next)
    if (*pp == f) {
      *pp = f->next;
      break;
    }
  release (c, f);
  pthread_mutex_unlock (&c->lock);
}

int
bwss_flow_get_stats (BwssFlow *f, BwssFlowStats *out)
{
  int err;
  if (out == NULL)
    return BWSS_EINVAL;
  Conn *c = flow_lock (f, &err);
  if (c == NULL || err) {
    if (c)
      pthread_mutex_unlock (&c->lock);
    return err;
  }
  BwssFlowStats st = { .prefs = f->prefs, .rate_bps = -1.0, .target_bps = -1.0,
                       .late_fraction = -1.0, .required_prebuffer_s = -1.0 };
  if (f->handed) {
    WireHead h;
    WireMsg m;
    int fd;
    wire_head (&h, WIRE_GET_FLOW, 0, f->id, 0);
    ssize_t n = request (c, &h, sizeof h, &m, &fd);
    if (n > 0 && m.h.type == WIRE_FLOW && (size_t) n >= sizeof m.flow_stats)
      st = m.flow_stats.st;
    else if (n == BWSS_EBUSY)
      err = BWSS_EBUSY;
    st.read_rate_bps = f->pace_bps;
  }
  pthread_mutex_unlock (&c->lock);
  if (err)
    return err;
  if (st.rtt_us == 0 || st.bytes_received == 0) {
    KnobInfo k;
    if (knob_read_info (f->fd, &k) == 0 && k.inode == f->inode) {
      st.rtt_us = k.rtt_us;
      st.mss = k.mss;
      st.bytes_received = k.bytes_received;
    }
  }
  *out = st;
  return 0;
}

/* ---- the domain-wide readers ---- */

/* Asks bwssd @type (with @arg): request() under the connection's lock. */
static ssize_t
ask (Conn *c, uint16_t type, int32_t arg, WireMsg *reply, int *fd_out)
{
  WireHead h;
  wire_head (&h, type, 0, 0, arg);
  pthread_mutex_lock (&c->lock);
  ssize_t n = request (c, &h, sizeof h, reply, fd_out);
  pthread_mutex_unlock (&c->lock);
  return n;
}

int
bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out)
{
  if (d == NULL || out == NULL)
    return BWSS_EINVAL;
  WireMsg m;
  int fd;
  ssize_t n = ask (d->c, WIRE_GET_DOMAIN, 0, &m, &fd);
  if (n == BWSS_ENOENT) {                /* no controller: what a reader saw before too */
    *out = (BwssDomainStats) { .phase = BWSS_PHASE_IDLE, .queue_us = -1.0 };
    return 0;
  }
  if (n < 0)
    return (int) n;
  if (m.h.type != WIRE_DOMAIN || (size_t) n < sizeof m.domain)
    return BWSS_EPROTO;
  *out = m.domain.st;
  return 0;
}

int
bwss_domain_set_suspended (BwssDomain *d, bool suspended)
{
  if (d == NULL)
    return BWSS_EINVAL;
  WireMsg m;
  int fd;
  ssize_t n = ask (d->c, WIRE_SUSPEND, suspended, &m, &fd);
  return n < 0 ? (int) n : m.h.arg;
}

int
bwss_domain_list_flows (BwssDomain *d, BwssFlowInfo *out, size_t max, size_t *n_out)
{
  return bwss_domain_list_flow_groups (d, out, NULL, max, n_out);
}

int
bwss_domain_list_flow_groups (BwssDomain *d, BwssFlowInfo *out, BwssFlowGroup *groups,
                              size_t max, size_t *n_out)
{
  if (d == NULL || n_out == NULL || (out == NULL && max > 0))
    return BWSS_EINVAL;
  WireMsg m;
  int fd;
  ssize_t n = ask (d->c, WIRE_LIST, 0, &m, &fd);
  *n_out = 0;
  if (n == BWSS_ENOENT)
    return 0;                            /* no bwssd: no flow is controlled */
  if (n < 0)
    return (int) n;
  if (m.h.type != WIRE_LISTED || (size_t) n < sizeof m.listed || m.listed.n > BWSS_DOMAIN_MAX_FLOWS) {
    if (fd >= 0)
      sys_close (fd);
    return BWSS_EPROTO;
  }
  size_t len = m.listed.n * sizeof (WireListEntry);
  const WireListEntry *e = NULL;
  if (len && (fd < 0 || (e = mmap (NULL, len, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)) {
    if (fd >= 0)
      sys_close (fd);
    return BWSS_EPROTO;
  }
  size_t k = 0;
  for (; k < m.listed.n && k < max; k++) {
    out[k] = e[k].info;
    if (groups)
      groups[k] = e[k].group;
  }
  if (len)
    munmap ((void *) e, len);
  if (fd >= 0)
    sys_close (fd);
  *n_out = k;
  return 0;
}

int
bwss_domain_get_daemon_status (BwssDomain *d, char **out)
{
  if (d == NULL || out == NULL)
    return BWSS_EINVAL;
  *out = NULL;
  WireMsg m;
  int fd;
  ssize_t n = ask (d->c, WIRE_STATUS, 0, &m, &fd);
  if (n < 0)
    return (int) n;
  bool listed = m.h.type == WIRE_LISTED && (size_t) n >= sizeof m.listed && m.h.arg == 0 && fd >= 0
                && m.listed.n <= BWSS_DAEMON_STATUS_MAX;
  size_t len = listed ? m.listed.n : 0;
  char *text = NULL;
  if (listed && (text = malloc (len + 1)) != NULL && pread (fd, text, len, 0) == (ssize_t) len) {
    text[len] = '\0';
    *out = text;
  } else {
    free (text);
  }
  if (fd >= 0)
    sys_close (fd);
  return *out ? 0 : m.h.arg == BWSS_ENOMEM ? BWSS_ENOMEM : BWSS_EPROTO;
}

/* ---- dispatch ---- */

/* Asks bwssd for a sign of life every LIVE_US, behind the queue; if the
 * last one is not answered by then, or bwssd has taken nothing of the
 * queue for as long, gives every socket back to the kernel until it
 * answers.  c->lock held, connected. */
static void
check_alive (Conn *c, uint64_t now)
{
  bool stuck = c->out_head && now - c->out_moved_us >= LIVE_US;
  bool unanswered = c->ping_seq && now - c->ping_us >= LIVE_US;
  if ((stuck || unanswered) && !c->failed_open) {
    c->failed_open = true;
    for (BwssFlow *f = c->flows; f; f = f->next)
      if (f->handed)
        restore_socket (f);
  }
  if (c->out_head || now - c->ping_us < LIVE_US)
    return;                              /* the queue goes first; or asked (and maybe
                                          * answered) less than LIVE_US ago */
  if (c->ping_seq && now - c->ping_us < 4 * LIVE_US)
    return;                              /* still waiting for that one (then ask again: an
                                          * answer bwssd could not send is lost) */
  WireHead h;
  wire_head (&h, WIRE_GET_DOMAIN, ++c->seq, 0, 0);
  if (sock_send_msg (c->fd, &h, sizeof h, -1, 0) == 0) {
    c->ping_seq = h.seq;
    c->ping_us = now;
  }
}

static uint64_t
conn_dispatch (Conn *c, uint64_t now)
{
  pthread_mutex_lock (&c->lock);
  eventfd_t v;
  if (c->wake_fd >= 0)
    eventfd_read (c->wake_fd, &v);
  bool wants = c->flows || c->may_start;
  if (c->fd < 0 && wants && now >= c->next_connect_us)
    conn_open (c);
  conn_drain (c);
  out_flush (c);
  /* a paced flow's owner reads bwssd's rates each control period, whether
   * or not it waits on the domain's fd (the preload shim does not) */
  bool paced = false, handed = false;
  for (BwssFlow *f = c->flows; f; f = f->next) {
    paced = paced || (f->handed && f->paced_reads);
    handed = handed || f->handed;
  }
  if (handed && c->fd >= 0)
    check_alive (c, now);
  uint64_t wait = paced || c->out_head ? c->params.min_phi_us
                  : c->fd < 0 && wants ? c->next_connect_us > now ? c->next_connect_us - now : 1
                  : handed ? LIVE_US - now % LIVE_US
                  : IDLE_US - now % IDLE_US;
  pthread_mutex_unlock (&c->lock);
  return wait;
}

uint64_t
bwss_domain_dispatch (BwssDomain *d, uint64_t now)
{
  if (d == NULL || d->c == NULL)
    return IDLE_US;
  return conn_dispatch (d->c, now ? now : bwss__clock_now_us ());
}

int
bwss_domain_get_fd (BwssDomain *d)
{
  if (d == NULL || d->c == NULL)
    return BWSS_EINVAL;
  return d->c->ep_fd >= 0 ? d->c->ep_fd : BWSS_ENOMEM;
}

/* BWSS_DOMAIN_THREAD: dispatches at the time the domain asks for, or at
 * once when its fd says so (a message, a registration, the close). */
static void *
dispatch_thread (void *data)
{
  Conn *c = data;
  while (!atomic_load (&c->thread_stop)) {
    uint64_t wait = conn_dispatch (c, bwss__clock_now_us ());
    struct pollfd p = { .fd = c->ep_fd, .events = POLLIN };
    int ms = (int) ((wait + 999) / 1000);
    if (c->ep_fd >= 0)
      sys_poll (&p, 1, ms);
    else
      usleep ((useconds_t) wait);
  }
  return NULL;
}

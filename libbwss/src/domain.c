/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain.c — the per-user domain: shared state, flows, controller election,
 * fail-open, recovery.  The laws are controller.c; the kernel is knobs.c; the
 * segment as a file and its lock are segment.c; this file is the plumbing
 * between processes.
 *
 * Roles.  Every process that registers sockets is a participant: it owns the
 * fds, so it applies the windows of its own sockets.  One process at a time
 * is the controller: it holds a POSIX record lock on the segment (the kernel
 * drops it when the process dies, so another candidate takes over at its next
 * dispatch), measures every flow with sock_diag, runs the laws and publishes a
 * window per slot with a heartbeat and its pid's start time.
 *
 * Fail-open.  A participant applies a published window only while the
 * heartbeat is fresh (FAILOPEN_US), not in the future, and the controller's
 * pid lives with the start time it published; otherwise it puts the clamp of
 * each of its sockets back to the value the kernel had before we touched it.
 * A crashed or stopped controller never leaves a flow throttled for more than
 * FAILOPEN_US plus one dispatch of the participant.
 *
 * Never waiting on another process.  The segment lock is taken within a
 * bound (segment_lock()): not at all from a data path (register, set_prefs,
 * and the dispatch of a handle that may not control, which is what the
 * preload shim calls from inside read() and poll()), LOCK_WAIT_US from the
 * controller's round and from readers.  A registration or a preference
 * change that finds the lock taken is kept in the BwssFlow (slot NO_SLOT,
 * prefs_dirty) and written at a later dispatch; an unregistration needs no
 * lock at all (the slot is marked RELEASED by compare-and-swap and freed by
 * the next lock holder).  No thread of this process holds the segment lock
 * without holding g->local, which segment.c relies on.
 *
 * Recovery.  If the lock stays taken (its holder stopped or hung inside it)
 * or the controller role stays held by a controller that no longer beats,
 * for RECOVER_US, a candidate that may create the domain moves it: it puts a
 * fresh segment in place of the stuck one under the same name, atomically
 * (segment_replace_if_current()).
 * Every process checks at each dispatch that the name still names the
 * segment it maps and otherwise follows: it maps the new one and registers
 * its flows again (the old one is left to the stuck process, which follows
 * when it runs again).  Nobody is ever robbed of a lock it holds.
 *
 * Reclaim.  Whoever takes the lock frees the slots of dead processes (pid
 * gone, or reused: start time differs) and released slots; the controller
 * also frees slots whose socket no longer exists in the namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "clock.h"
#include "knobs.h"
#include "proc.h"
#include "segment.h"

/* A controller silent for this long is dead: its windows are released.
 * 100 dispatch periods; a controller process that is merely busy for a
 * second loses nothing but a second of control. */
#define FAILOPEN_US       1000000ull
/* A heartbeat further in the future than this is forged or on another
 * clock (a reader's clock sample may predate the writer's by a round). */
#define FUTURE_SLACK_US   100000ull
/* Dispatch period: the FCS needs samples well inside φ = 2·RTT (>= 10 ms). */
#define DISPATCH_US       10000ull
/* Slots whose socket sock_diag no longer lists, this many dumps in a row,
 * are freed (a dump can race a connection that is just being set up). */
#define GONE_DUMPS        3
/* Wait for a segment an older creator is still initialising, at open. */
#define INIT_WAIT_US      500000ull
/* Longest wait for the segment lock from a controller round or a reader:
 * a round holds it for well under a millisecond. */
#define LOCK_WAIT_US      2000ull
/* Look at a busy lock's holder in /proc at most this often. */
#define JUDGE_EVERY_US    100000ull
/* A lock (or controller role) held this long by a process that does not
 * make progress gets the domain moved to a fresh segment. */
#define RECOVER_US        2000000ull
/* After a failed attempt to follow a moved domain, wait this long. */
#define FOLLOW_RETRY_US   100000ull

#define NO_SLOT UINT32_MAX

typedef struct Seg Seg;

struct BwssFlow {
  Seg        *seg;
  BwssDomain *owner;
  int         fd;
  uint64_t    inode;         /* of the socket: an fd number can be reused */
  uint32_t    orig_clamp;    /* the kernel's clamp before we touched it */
  uint32_t    applied;       /* window we set; 0 = the original clamp is in place */
  uint32_t    slot;          /* NO_SLOT: not written into the segment yet */
  uint32_t    gen;
  BwssPrefs   prefs;         /* what this process wants; the slot follows */
  bool        prefs_dirty;   /* prefs (or flags) not written into the slot yet */
  bool        paced_reads;   /* the owner offered to pace its reads */
  double      pace_bps;      /* the read rate applied, bit/s; 0 = freely */
  double      tokens;        /* read credit, bytes (negative: a read took more) */
  uint64_t    tokens_us;     /* when the credit was last brought up to date */
  uint32_t    rcvbuf;        /* SO_RCVBUF we set for pacing, bytes; 0 = the kernel's */
  uint32_t    mss;           /* the socket's receive MSS, for the token bucket */
  char        comm[16];      /* of the socket's owner */
  char        local[64];
  char        remote[64];
  char        origin[BWSS_ORIGIN_MAX];
  pid_t       owner_pid;     /* 0: this process's own socket */
  BwssFlow   *next;
};

/* One mapping per process and domain name, shared by its handles: POSIX
 * record locks belong to the process, so a second fd on the same file would
 * drop the controller lock when closed. */
struct Seg {
  char            path[80];       /* /dev/shm/<name> */
  int             fd;             /* of the segment mapped now */
  Segment        *s;
  dev_t           dev;
  ino_t           ino;
  unsigned        refs;
  pid_t           pid;            /* the process that opened it (fork check) */
  uint64_t        starttime;      /* of pid: published with the heartbeat */
  pthread_mutex_t local;          /* guards everything here, g->s included */
  BwssFlow       *flows;
  bool            may_control;
  bool            may_create;
  bool            controller;
  BwssController *ctl;
  KnobDump        dump;
  uint32_t        ctl_gen[SEG_MAX_FLOWS];    /* gen the controller knows per slot */
  uint32_t        ctl_serial[SEG_MAX_FLOWS]; /* prefs serial it knows */
  uint8_t         gone[SEG_MAX_FLOWS];
  uint32_t        ctl_hwm;                   /* ctl_gen[] is 0 from here on */
  uint64_t        lock_stuck_since;  /* first of the lock attempts failing since, 0 = none */
  uint64_t        role_stuck_since;  /* since when the role's holder does not beat */
  uint64_t        next_judge_us;
  uint64_t        next_follow_us;
  pthread_t       thread;
  bool            thread_on;
  atomic_bool     thread_stop;
  bool            debug;          /* $BWSS_DEBUG: controller decisions on stderr */
  uint64_t        next_debug_us;
  Seg            *next;
};

struct BwssDomain {
  Seg *seg;
};

static pthread_mutex_t segs_lock = PTHREAD_MUTEX_INITIALIZER;
static Seg *segs;

/* ---- the segment lock, within a bound ---- */

static SegFile
seg_file (const Seg *g)
{
  SegFile f = { .fd = g->fd, .s = g->s, .dev = g->dev, .ino = g->ino };
  return f;
}

/* Takes the segment lock, waiting at most @wait_us.  Returns 0 (held) or
 * BWSS_EBUSY; keeps count of how long attempts have been failing.
 * g->local held. */
static int
seg_lock (Seg *g, uint64_t wait_us)
{
  uint64_t now = bwss_clock_now_us ();
  bool judge = now >= g->next_judge_us;
  SegFile f = seg_file (g);
  SegHolder holder;
  int err = segment_lock (&f, wait_us, judge, &holder);
  if (err == 0) {
    g->lock_stuck_since = 0;
    return 0;
  }
  if (judge)
    g->next_judge_us = now + JUDGE_EVERY_US;
  if (err == BWSS_EPROTO)
    g->lock_stuck_since = 1;             /* the lock is unusable: move at once */
  else if (g->lock_stuck_since == 0)
    g->lock_stuck_since = now;
  if (g->debug && judge)
    fprintf (stderr, "bwss[%d]: segment lock busy (holder %d, state %c)\n", (int) getpid (),
             (int) holder.tid, holder.state ? holder.state : '?');
  return BWSS_EBUSY;
}

static void
seg_unlock (Segment *s)
{
  segment_unlock (s);
}

/* Returns true if the controller @s names is alive at @now: a heartbeat
 * neither stale nor in the future, and its pid living with the start time
 * it published. */
static bool
controller_alive (const Segment *s, uint64_t now)
{
  pid_t pid = s->controller_pid;
  uint64_t hb = s->heartbeat_us;
  if (pid <= 0 || hb > now + FUTURE_SLACK_US || now > hb + FAILOPEN_US)
    return false;
  return proc_alive (pid, s->controller_start);
}

/* The controller's mark of life.  s locked. */
static void
heartbeat (Seg *g, Segment *s, uint64_t now)
{
  s->controller_pid = getpid ();
  s->controller_start = g->starttime;
  s->heartbeat_us = now;
}

/* ---- slots of this process's flows ---- */

static bool
slot_is_ours (const Segment *s, const BwssFlow *f)
{
  return f->slot != NO_SLOT && s->slots[f->slot].state == SLOT_ACTIVE
         && s->slots[f->slot].gen == f->gen;
}

/* Writes @f into a free slot.  Returns 0, BWSS_ENOSPC (table full) or
 * BWSS_EBADF (the fd is no longer the socket).  s locked. */
static int
claim_slot (Seg *g, BwssFlow *f)
{
  Segment *s = g->s;
  struct stat st;
  if (fstat (f->fd, &st) != 0 || st.st_ino != f->inode)
    return BWSS_EBADF;
  uint32_t i;
  for (i = 0; i < SEG_MAX_FLOWS && s->slots[i].state != SLOT_FREE; i++)
    ;
  if (i == SEG_MAX_FLOWS) {
    segment_sweep (s);
    for (i = 0; i < SEG_MAX_FLOWS && s->slots[i].state != SLOT_FREE; i++)
      ;
  }
  if (i == SEG_MAX_FLOWS)
    return BWSS_ENOSPC;
  SegSlot *sl = &s->slots[i];
  uint32_t gen = sl->gen + 1;
  sl->pid = g->pid;
  sl->fd = f->fd;
  sl->starttime = g->starttime;
  sl->inode = f->inode;
  memcpy (sl->comm, f->comm, sizeof sl->comm);
  memcpy (sl->local, f->local, sizeof sl->local);
  memcpy (sl->remote, f->remote, sizeof sl->remote);
  memcpy (sl->origin, f->origin, sizeof sl->origin);
  sl->owner_pid = f->owner_pid;
  sl->prefs = f->prefs;
  sl->prefs_serial = 1;
  sl->flags = f->paced_reads ? SLOT_PACED_READS : 0;
  sl->controlled = 0;
  sl->window_bytes = 0;
  sl->rtt_us = 0;
  sl->mss = 0;
  sl->base_rtt_us = 0;
  sl->target_bps = -1.0;
  sl->rate_bps = -1.0;
  sl->read_rate_bps = 0.0;
  sl->bytes_received = 0;
  segment_activate_slot (s, i, gen);
  f->slot = i;
  f->gen = gen;
  f->prefs_dirty = false;
  return 0;
}

/* Returns true if some flow of @g waits to be written into the segment. */
static bool
seg_pending (const Seg *g)
{
  for (const BwssFlow *f = g->flows; f; f = f->next)
    if (f->slot == NO_SLOT || f->prefs_dirty)
      return true;
  return false;
}

/* Writes what registrations and preference changes could not write
 * before.  s locked. */
static void
seg_publish (Seg *g)
{
  Segment *s = g->s;
  for (BwssFlow *f = g->flows; f; f = f->next) {
    if (f->slot == NO_SLOT) {
      claim_slot (g, f);                 /* if the table is full: at a later dispatch */
    } else if (f->prefs_dirty) {
      if (slot_is_ours (s, f)) {
        s->slots[f->slot].prefs = f->prefs;
        s->slots[f->slot].flags = f->paced_reads ? SLOT_PACED_READS : 0;
        s->slots[f->slot].prefs_serial++;
      }
      f->prefs_dirty = false;
    }
  }
}

/* ---- following the domain to a fresh segment ---- */

/* Forgets the controller state (a new segment, or the role lost). */
static void
seg_reset_control (Seg *g)
{
  g->controller = false;
  bwss_controller_free (g->ctl);
  g->ctl = NULL;
  memset (g->ctl_gen, 0, sizeof g->ctl_gen);
  g->ctl_hwm = 0;
  memset (g->ctl_serial, 0, sizeof g->ctl_serial);
  memset (g->gone, 0, sizeof g->gone);
}

/* Maps @nf in place of @g's segment and makes every flow pending again (to
 * be registered in @nf).  g->local held. */
static void
seg_switch (Seg *g, const SegFile *nf)
{
  SegFile cur = seg_file (g);
  segment_close (&cur);                  /* drops the controller role of the old one */
  g->fd = nf->fd;
  g->s = nf->s;
  g->dev = nf->dev;
  g->ino = nf->ino;
  seg_reset_control (g);
  g->lock_stuck_since = 0;
  g->role_stuck_since = 0;
  for (BwssFlow *f = g->flows; f; f = f->next) {
    f->slot = NO_SLOT;
    f->prefs_dirty = false;
  }
}

/* If the domain's name no longer names the segment @g maps (moved by a
 * recovery, or deleted), maps the one it names now (creating it if @g may).
 * g->local held. */
static void
seg_follow (Seg *g, uint64_t now)
{
  if (now < g->next_follow_us)
    return;
  SegFile cur = seg_file (g);
  if (segment_is_current (&cur, g->path))
    return;
  SegFile nf;
  if (segment_open (g->path, g->may_create, 0, g->s, &nf) != 0) {
    g->next_follow_us = now + FOLLOW_RETRY_US;
    return;
  }
  if (g->debug)
    fprintf (stderr, "bwss[%d]: the domain moved to a new segment; following\n", (int) getpid ());
  seg_switch (g, &nf);
}

/* Returns how long the domain has been stuck as seen from @g, µs. */
static uint64_t
stuck_for (const Seg *g, uint64_t now)
{
  uint64_t a = g->lock_stuck_since && now > g->lock_stuck_since ? now - g->lock_stuck_since : 0;
  uint64_t b = g->role_stuck_since && now > g->role_stuck_since ? now - g->role_stuck_since : 0;
  return a > b ? a : b;
}

/* Moves a stuck domain to a fresh segment.  g->local held. */
static void
seg_recover (Seg *g, uint64_t now)
{
  SegFile cur = seg_file (g), nf;
  if (segment_replace_if_current (&cur, g->path, &nf) != 0) {
    seg_follow (g, now);                 /* another process moved it: follow */
    return;
  }
  if (g->debug)
    fprintf (stderr, "bwss[%d]: the domain's lock or role has been stuck for %.1f s; moved it\n",
             (int) getpid (), (double) stuck_for (g, now) / 1e6);
  seg_switch (g, &nf);
}

/* ---- process-local state ---- */

static void *dispatch_thread (void *data);

static void
seg_stop_thread (Seg *g)
{
  if (!g->thread_on)
    return;
  atomic_store (&g->thread_stop, true);
  pthread_join (g->thread, NULL);
  g->thread_on = false;
}

/* Gives @f's socket back to the kernel: its original clamp, its receive
 * buffer (if pacing fixed it: the largest the kernel allows), reads no
 * longer paced.  The one place that undoes what apply_windows() did.
 * @valid: the fd still names the socket (else nothing is touched). */
static void
restore_socket (BwssFlow *f, bool valid)
{
  if (valid && f->applied)
    knob_set_clamp (f->fd, f->orig_clamp);
  if (valid && f->rcvbuf)
    knob_restore_rcvbuf (f->fd);
  f->applied = 0;
  f->rcvbuf = 0;
  f->pace_bps = 0.0;
}

/* Returns true if @f's fd still names its socket. */
static bool
fd_is_flow (const BwssFlow *f)
{
  struct stat st;
  return fstat (f->fd, &st) == 0 && st.st_ino == f->inode;
}

/* Restores @f's socket, gives its slot up and frees it.  g->local held; @f
 * unlinked.  Needs no segment lock. */
static void
flow_release (Seg *g, BwssFlow *f)
{
  restore_socket (f, fd_is_flow (f));
  if (f->slot != NO_SLOT)
    segment_release_slot (g->s, f->slot, f->gen);
  free (f);
}

static void
seg_free (Seg *g)
{
  seg_stop_thread (g);
  pthread_mutex_lock (&g->local);
  while (g->flows) {
    BwssFlow *f = g->flows;
    g->flows = f->next;
    flow_release (g, f);
  }
  if (g->controller) {                   /* no controller from now on: no need to wait a second */
    int32_t me = (int32_t) getpid ();
    __atomic_compare_exchange_n (&g->s->controller_pid, &me, 0, false, __ATOMIC_ACQ_REL,
                                 __ATOMIC_ACQUIRE);
  }
  pthread_mutex_unlock (&g->local);
  bwss_controller_free (g->ctl);
  knob_dump_clear (&g->dump);
  SegFile f = seg_file (g);
  segment_close (&f);                    /* drops the controller lock, if held */
  pthread_mutex_destroy (&g->local);
  free (g);
}

/* In a forked child: the parent's flows, lock and thread are not ours. */
static void
after_fork_child (void)
{
  for (Seg *g = segs; g; g = g->next) {
    pthread_mutex_init (&g->local, NULL);
    while (g->flows) {
      BwssFlow *f = g->flows;
      g->flows = f->next;
      f->seg = NULL;                   /* handles still point at it: inert */
    }
    seg_reset_control (g);
    g->thread_on = false;
    g->pid = getpid ();
    g->starttime = proc_starttime (g->pid);
    g->lock_stuck_since = 0;
    g->role_stuck_since = 0;
  }
  pthread_mutex_init (&segs_lock, NULL);
}

int
bwss_domain_open (const char *name, unsigned flags, BwssDomain **out)
{
  char path[80];
  if (out == NULL || (flags & ~(BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER | BWSS_DOMAIN_THREAD)))
    return BWSS_EINVAL;
  int err = segment_path (name, path, sizeof path);
  if (err)
    return err;
  BwssDomain *d = calloc (1, sizeof *d);
  if (d == NULL)
    return BWSS_ENOMEM;

  pthread_mutex_lock (&segs_lock);
  static bool atfork_done;
  if (!atfork_done) {
    pthread_atfork (NULL, NULL, after_fork_child);
    atfork_done = true;
  }
  Seg *g;
  for (g = segs; g; g = g->next)
    if (strcmp (g->path, path) == 0)
      break;
  if (g == NULL) {
    g = calloc (1, sizeof *g);
    if (g == NULL) {
      err = BWSS_ENOMEM;
      goto fail;
    }
    SegFile f;
    err = segment_open (path, !(flags & BWSS_DOMAIN_NO_CREATE), INIT_WAIT_US, NULL, &f);
    if (err) {
      free (g);
      goto fail;
    }
    snprintf (g->path, sizeof g->path, "%s", path);
    g->fd = f.fd;
    g->s = f.s;
    g->dev = f.dev;
    g->ino = f.ino;
    pthread_mutex_init (&g->local, NULL);
    g->pid = getpid ();
    g->starttime = proc_starttime (g->pid);
    g->debug = getenv ("BWSS_DEBUG") != NULL;
    g->next = segs;
    segs = g;
  }
  g->refs++;
  pthread_mutex_lock (&g->local);
  if (!(flags & BWSS_DOMAIN_NO_CONTROLLER))
    g->may_control = true;
  if (!(flags & BWSS_DOMAIN_NO_CREATE))
    g->may_create = true;
  pthread_mutex_unlock (&g->local);
  if ((flags & BWSS_DOMAIN_THREAD) && !g->thread_on) {
    atomic_store (&g->thread_stop, false);
    if (pthread_create (&g->thread, NULL, dispatch_thread, g) == 0)
      g->thread_on = true;
  }
  pthread_mutex_unlock (&segs_lock);
  d->seg = g;
  *out = d;
  return 0;
fail:
  pthread_mutex_unlock (&segs_lock);
  free (d);
  return err;
}

void
bwss_domain_close (BwssDomain *d)
{
  if (d == NULL)
    return;
  Seg *g = d->seg;
  pthread_mutex_lock (&g->local);
  for (BwssFlow **pp = &g->flows; *pp;) {
    BwssFlow *f = *pp;
    if (f->owner == d) {
      *pp = f->next;
      flow_release (g, f);
    } else {
      pp = &f->next;
    }
  }
  pthread_mutex_unlock (&g->local);

  pthread_mutex_lock (&segs_lock);
  bool last = --g->refs == 0;
  if (last)
    for (Seg **p = &segs; *p; p = &(*p)->next)
      if (*p == g) {
        *p = g->next;
        break;
      }
  pthread_mutex_unlock (&segs_lock);
  if (last)
    seg_free (g);
  free (d);
}

/* ---- flows ---- */

/* Writes the name of process @pid (0: this one) to @comm. */
static void
read_comm (pid_t pid, char *comm, size_t len)
{
  char path[32];
  if (pid)
    snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  else
    snprintf (path, sizeof path, "/proc/self/comm");
  FILE *f = fopen (path, "re");
  comm[0] = '\0';
  if (f) {
    if (fgets (comm, (int) len, f))
      comm[strcspn (comm, "\n")] = '\0';
    fclose (f);
  }
}

/* Returns true if @origin is 1 to BWSS_ORIGIN_MAX - 1 printable ASCII
 * characters. */
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
  KnobInfo info;
  uint32_t clamp;
  if (knob_read_info (fd, &info) != 0 || knob_get_clamp (fd, &clamp) != 0)
    return BWSS_EBADF;
  Seg *g = d->seg;
  BwssFlow *f = calloc (1, sizeof *f);
  if (f == NULL)
    return BWSS_ENOMEM;
  f->seg = g;
  f->owner = d;
  f->fd = fd;
  f->inode = info.inode;
  f->orig_clamp = clamp;
  f->slot = NO_SLOT;
  f->prefs = *prefs;
  f->owner_pid = owner_pid;
  snprintf (f->origin, sizeof f->origin, "%s", origin);
  read_comm (owner_pid, f->comm, sizeof f->comm);
  knob_endpoints (fd, f->local, sizeof f->local, f->remote, sizeof f->remote);

  pthread_mutex_lock (&g->local);
  for (BwssFlow *o = g->flows; o; o = o->next)
    if (o->fd == fd) {
      pthread_mutex_unlock (&g->local);
      free (f);
      return BWSS_EEXIST;
    }
  /* written now if the lock is free, else at a later dispatch */
  int err = 0;
  if (seg_lock (g, 0) == 0) {
    err = claim_slot (g, f);
    seg_unlock (g->s);
  }
  if (err) {
    pthread_mutex_unlock (&g->local);
    free (f);
    return err;
  }
  f->next = g->flows;
  g->flows = f;
  pthread_mutex_unlock (&g->local);
  *out = f;
  return 0;
}

int
bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs)
{
  if (f == NULL || f->seg == NULL || bwss_prefs_check (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  Seg *g = f->seg;
  pthread_mutex_lock (&g->local);
  if (f->slot != NO_SLOT && !slot_is_ours (g->s, f)) {
    pthread_mutex_unlock (&g->local);
    return BWSS_ENOENT;                  /* reclaimed: its socket was gone */
  }
  f->prefs = *prefs;
  f->prefs_dirty = f->slot != NO_SLOT;
  if (f->prefs_dirty && seg_lock (g, 0) == 0) {
    seg_publish (g);
    seg_unlock (g->s);
  }
  pthread_mutex_unlock (&g->local);
  return 0;
}

int
bwss_flow_offer_read_pacing (BwssFlow *f)
{
  if (f == NULL || f->seg == NULL)
    return BWSS_EINVAL;
  Seg *g = f->seg;
  pthread_mutex_lock (&g->local);
  if (f->slot != NO_SLOT && !slot_is_ours (g->s, f)) {
    pthread_mutex_unlock (&g->local);
    return BWSS_ENOENT;
  }
  if (!f->paced_reads) {
    f->paced_reads = true;
    f->prefs_dirty = f->slot != NO_SLOT;
    if (f->prefs_dirty && seg_lock (g, 0) == 0) {
      seg_publish (g);
      seg_unlock (g->s);
    }
  }
  pthread_mutex_unlock (&g->local);
  return 0;
}

/* Brings @f's read credit up to @now: pace·elapsed, at most the bucket's
 * depth.  g->local held. */
static void
refill (BwssFlow *f, uint64_t now)
{
  static BwssParams defaults;
  static bool have_defaults;
  if (!have_defaults) {
    bwss_params_init (&defaults);
    have_defaults = true;
  }
  double mss = f->mss ? f->mss : defaults.default_mss;
  double depth = defaults.pace_burst_segments * mss;
  if (f->tokens_us && now > f->tokens_us)
    f->tokens += f->pace_bps / 8.0 * (double) (now - f->tokens_us) / 1e6;
  if (f->tokens > depth)
    f->tokens = depth;
  f->tokens_us = now;
}

uint64_t
bwss_flow_read_wait_us (BwssFlow *f, size_t want)
{
  if (f == NULL || f->seg == NULL)
    return 0;
  Seg *g = f->seg;
  uint64_t wait = 0;
  pthread_mutex_lock (&g->local);
  if (f->pace_bps > 0.0) {
    refill (f, bwss_clock_now_us ());
    double need = (double) (f->mss ? f->mss : 1448);
    if (want && (double) want < need)
      need = (double) want;
    if (f->tokens < need)
      wait = (uint64_t) ((need - f->tokens) * 8.0 / f->pace_bps * 1e6) + 1;
  }
  pthread_mutex_unlock (&g->local);
  return wait;
}

void
bwss_flow_read_took (BwssFlow *f, size_t n)
{
  if (f == NULL || f->seg == NULL || n == 0)
    return;
  Seg *g = f->seg;
  pthread_mutex_lock (&g->local);
  if (f->pace_bps > 0.0) {
    refill (f, bwss_clock_now_us ());
    f->tokens -= (double) n;
  }
  pthread_mutex_unlock (&g->local);
}

void
bwss_flow_unregister (BwssFlow *f)
{
  if (f == NULL)
    return;
  Seg *g = f->seg;
  if (g == NULL) {                     /* inherited across fork: not ours */
    free (f);
    return;
  }
  pthread_mutex_lock (&g->local);
  for (BwssFlow **pp = &g->flows; *pp; pp = &(*pp)->next)
    if (*pp == f) {
      *pp = f->next;
      break;
    }
  flow_release (g, f);
  pthread_mutex_unlock (&g->local);
}

int
bwss_flow_get_stats (BwssFlow *f, BwssFlowStats *out)
{
  if (f == NULL || f->seg == NULL || out == NULL)
    return BWSS_EINVAL;
  Seg *g = f->seg;
  pthread_mutex_lock (&g->local);
  BwssFlowStats st = { .prefs = f->prefs, .rate_bps = -1.0, .target_bps = -1.0,
                       .window_bytes = f->applied };
  if (f->slot != NO_SLOT) {
    Segment *s = g->s;
    int err = seg_lock (g, LOCK_WAIT_US);
    if (err) {
      pthread_mutex_unlock (&g->local);
      return err;
    }
    if (!slot_is_ours (s, f)) {
      seg_unlock (s);
      pthread_mutex_unlock (&g->local);
      return BWSS_ENOENT;
    }
    const SegSlot *sl = &s->slots[f->slot];
    bool alive = controller_alive (s, bwss_clock_now_us ());
    st.bytes_received = sl->bytes_received;
    st.rate_bps = sl->rate_bps;
    st.target_bps = alive && sl->controlled ? sl->target_bps : -1.0;
    st.rtt_us = sl->rtt_us;
    st.base_rtt_us = sl->base_rtt_us;
    st.mss = sl->mss;
    st.controlled = alive && sl->controlled;
    st.read_rate_bps = f->pace_bps;
    seg_unlock (s);
  }
  pthread_mutex_unlock (&g->local);
  if (st.rtt_us == 0 || st.bytes_received == 0) {
    KnobInfo k;
    if (knob_read_info (f->fd, &k) == 0) {
      st.rtt_us = k.rtt_us;
      st.mss = k.mss;
      st.bytes_received = k.bytes_received;
    }
  }
  *out = st;
  return 0;
}

/* For the domain-wide readers: takes g->local, follows a moved domain,
 * takes the segment lock (LOCK_WAIT_US at most) and frees the slots of dead
 * and released flows, so what is read counts live flows only.  Returns 0
 * with both locks held and *now set, or BWSS_EBUSY with neither. */
static int
seg_read_lock (Seg *g, uint64_t *now)
{
  pthread_mutex_lock (&g->local);
  *now = bwss_clock_now_us ();
  seg_follow (g, *now);
  int err = seg_lock (g, LOCK_WAIT_US);
  if (err) {
    pthread_mutex_unlock (&g->local);
    return err;
  }
  segment_sweep (g->s);
  return 0;
}

static void
seg_read_unlock (Seg *g)
{
  seg_unlock (g->s);
  pthread_mutex_unlock (&g->local);
}

int
bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out)
{
  if (d == NULL || out == NULL)
    return BWSS_EINVAL;
  Seg *g = d->seg;
  uint64_t now;
  int err = seg_read_lock (g, &now);
  if (err)
    return err;
  const Segment *s = g->s;
  bool alive = controller_alive (s, now);
  out->controller_pid = alive ? s->controller_pid : 0;
  out->phase = alive ? (BwssPhase) s->phase : BWSS_PHASE_IDLE;
  out->sigma_bps = alive ? s->sigma_bps : 0.0;
  out->aggregate_bps = alive ? s->aggregate_bps : 0.0;
  out->n_flows = s->n_flows;
  out->suspended = s->suspended != 0;
  out->loop = s->loop == BWSS_LOOP_PAPER ? BWSS_LOOP_PAPER : BWSS_LOOP_DELAY;
  out->queue_us = alive ? s->queue_us : -1.0;
  out->queue_target_us = alive ? s->queue_target_us : 0.0;
  seg_read_unlock (g);
  return 0;
}

int
bwss_domain_set_suspended (BwssDomain *d, bool suspended)
{
  if (d == NULL)
    return BWSS_EINVAL;
  Seg *g = d->seg;
  pthread_mutex_lock (&g->local);
  seg_follow (g, bwss_clock_now_us ());
  /* one word the controller reads under the lock: no need to take it */
  __atomic_store_n (&g->s->suspended, suspended ? 1u : 0u, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&g->local);
  return 0;
}

int
bwss_domain_list_flows (BwssDomain *d, BwssFlowInfo *out, size_t max, size_t *n_out)
{
  if (d == NULL || n_out == NULL || (out == NULL && max > 0))
    return BWSS_EINVAL;
  Seg *g = d->seg;
  uint64_t now;
  int err = seg_read_lock (g, &now);
  if (err)
    return err;
  const Segment *s = g->s;
  bool alive = controller_alive (s, now);
  size_t n = 0;
  for (uint32_t i = 0; i < s->slot_hwm && n < max; i++) {
    const SegSlot *sl = &s->slots[i];
    if (sl->state != SLOT_ACTIVE)
      continue;
    BwssFlowInfo *fi = &out[n++];
    memset (fi, 0, sizeof *fi);
    fi->pid = sl->owner_pid ? sl->owner_pid : sl->pid;
    fi->participant = sl->pid;
    fi->inode = sl->inode;
    memcpy (fi->origin, sl->origin, sizeof fi->origin);
    memcpy (fi->comm, sl->comm, sizeof fi->comm);
    memcpy (fi->local, sl->local, sizeof fi->local);
    memcpy (fi->remote, sl->remote, sizeof fi->remote);
    fi->stats.prefs = sl->prefs;
    fi->stats.bytes_received = sl->bytes_received;
    fi->stats.rate_bps = sl->rate_bps;
    fi->stats.controlled = alive && sl->controlled;
    fi->stats.target_bps = fi->stats.controlled ? sl->target_bps : -1.0;
    fi->stats.window_bytes = fi->stats.controlled ? sl->window_bytes : 0;
    fi->stats.rtt_us = sl->rtt_us;
    fi->stats.base_rtt_us = sl->base_rtt_us;
    fi->stats.mss = sl->mss;
    fi->stats.read_rate_bps = fi->stats.controlled ? sl->read_rate_bps : 0.0;
  }
  seg_read_unlock (g);
  *n_out = n;
  return 0;
}

/* ---- dispatch: apply, fail open, control ---- */

/* Applies the published windows (and read rates) to this process's
 * sockets, or restores them if no controller is alive.  g->local held. */
static void
apply_windows (Seg *g, uint64_t now)
{
  static BwssParams defaults;
  static bool have_defaults;
  if (!have_defaults) {
    bwss_params_init (&defaults);
    have_defaults = true;
  }
  Segment *s = g->s;
  bool alive = controller_alive (s, now);
  for (BwssFlow *f = g->flows; f; f = f->next) {
    if (!fd_is_flow (f)) {
      /* the program closed the socket behind our back (or the fd now
       * names something else): never touch it again */
      restore_socket (f, false);
      continue;
    }
    const SegSlot *sl = slot_is_ours (s, f) ? &s->slots[f->slot] : NULL;
    uint32_t want = alive && sl && sl->controlled ? sl->window_bytes : 0;
    if (want == 0) {
      restore_socket (f, true);
      continue;
    }
    /* re-assert too: receive-buffer autotuning may raise the clamp */
    uint32_t cur = 0;
    if (want != f->applied || (knob_get_clamp (f->fd, &cur) == 0 && cur != want)) {
      if (knob_set_clamp (f->fd, want) == 0)
        f->applied = want;
    }
    /* read pacing: a receive buffer the size of the window, so the sender
     * sends what is read (resized when the window moves by a quarter) */
    double pace = f->paced_reads && sl->read_rate_bps > 0.0 ? sl->read_rate_bps : 0.0;
    if (pace > 0.0) {
      uint32_t buf = want > defaults.pace_rcvbuf_bytes ? want : defaults.pace_rcvbuf_bytes;
      if ((f->rcvbuf == 0 || buf > f->rcvbuf + f->rcvbuf / 4 || buf + buf / 4 < f->rcvbuf)
          && knob_set_rcvbuf (f->fd, buf) == 0)
        f->rcvbuf = buf;
      if (f->pace_bps == 0.0) {
        f->tokens = 0.0;                 /* pacing starts: no credit yet */
        f->tokens_us = now;
      } else {
        refill (f, now);                 /* the credit so far, at the old rate */
      }
      f->mss = sl->mss;
      f->pace_bps = pace;
    } else {
      if (f->rcvbuf)
        knob_restore_rcvbuf (f->fd);
      f->rcvbuf = 0;
      f->pace_bps = 0.0;
    }
  }
}

static uint64_t
flow_id (uint32_t slot, uint32_t gen)
{
  return (uint64_t) gen << 32 | slot;
}

/* Fills @p with the controller's parameters: the delay loop, or the one
 * $BWSS_LOOP names.  An unknown name is reported once and ignored. */
static void
controller_params (BwssParams *p)
{
  static bool warned;
  BwssLoop loop = BWSS_LOOP_DELAY;
  const char *env = getenv ("BWSS_LOOP");
  if (env && *env && bwss_loop_parse (env, &loop) != 0) {
    if (!warned)
      fprintf (stderr, "bwss: BWSS_LOOP=%s is neither \"delay\" nor \"paper\"; "
                       "running the delay loop\n", env);
    warned = true;
    loop = BWSS_LOOP_DELAY;
  }
  bwss_params_init_for (p, loop);
}

/* Sharing is off: every slot released, the controller forgotten (it starts
 * from its initialisation when sharing is on again).  s locked. */
static void
suspend (Seg *g, Segment *s)
{
  if (g->ctl) {
    bwss_controller_free (g->ctl);
    g->ctl = NULL;
    memset (g->ctl_gen, 0, sizeof g->ctl_gen);
    g->ctl_hwm = 0;
  }
  for (uint32_t i = 0; i < s->slot_hwm; i++) {
    SegSlot *sl = &s->slots[i];
    sl->controlled = 0;
    sl->window_bytes = 0;
    sl->target_bps = -1.0;
    sl->read_rate_bps = 0.0;
  }
  s->phase = BWSS_PHASE_IDLE;
  s->sigma_bps = 0.0;
  s->queue_us = -1.0;
  s->queue_target_us = 0.0;
}

/* One controller round: measure, run the laws, publish. */
static void
control (Seg *g, uint64_t now)
{
  Segment *s = g->s;
  bool have_dump = knob_dump (&g->dump) == 0;   /* sock_diag: not under the lock */

  if (seg_lock (g, LOCK_WAIT_US) != 0)
    return;
  segment_sweep (s);
  BwssParams params;
  controller_params (&params);
  if (s->suspended || (g->ctl == NULL && bwss_controller_new (&params, &g->ctl) != 0)) {
    suspend (g, s);
    heartbeat (g, s, now);
    seg_unlock (s);
    return;
  }
  uint32_t end = s->slot_hwm > g->ctl_hwm ? s->slot_hwm : g->ctl_hwm;
  for (uint32_t i = 0; i < end; i++) {
    SegSlot *sl = &s->slots[i];
    bool active = sl->state == SLOT_ACTIVE;
    if (g->ctl_gen[i] && (!active || g->ctl_gen[i] != sl->gen)) {
      bwss_controller_remove_flow (g->ctl, flow_id (i, g->ctl_gen[i]), now);
      g->ctl_gen[i] = 0;
    }
    if (!active)
      continue;
    if (g->ctl_gen[i] == 0) {
      if (bwss_controller_add_flow (g->ctl, flow_id (i, sl->gen), &sl->prefs, now) != 0)
        continue;
      g->ctl_gen[i] = sl->gen;
      g->ctl_serial[i] = sl->prefs_serial;
      g->gone[i] = 0;
    } else if (g->ctl_serial[i] != sl->prefs_serial) {
      bwss_controller_set_prefs (g->ctl, flow_id (i, sl->gen), &sl->prefs, now);
      g->ctl_serial[i] = sl->prefs_serial;
    }
    const KnobInfo *k = have_dump ? knob_dump_find (&g->dump, sl->inode) : NULL;
    if (have_dump && (k == NULL || k->state != 1 /* TCP_ESTABLISHED */)) {
      if (++g->gone[i] >= GONE_DUMPS) {   /* the socket is closed */
        bwss_controller_remove_flow (g->ctl, flow_id (i, sl->gen), now);
        g->ctl_gen[i] = 0;
        segment_free_slot (s, i);
      }
      continue;
    }
    g->gone[i] = 0;
    if (k) {
      BwssSample smp = { .now_us = now, .bytes_received = k->bytes_received,
                         .rtt_us = k->rtt_us, .mss = k->mss, .min_rtt_us = k->min_rtt_us,
                         .can_pace = (sl->flags & SLOT_PACED_READS) != 0,
                         .unread_bytes = k->unread };
      bwss_controller_observe (g->ctl, flow_id (i, sl->gen), &smp);
      sl->bytes_received = k->bytes_received;
    }
  }
  while (end > 0 && g->ctl_gen[end - 1] == 0)
    end--;
  g->ctl_hwm = end;
  bwss_controller_tick (g->ctl, now);
  BwssControllerStats st;
  bwss_controller_stats (g->ctl, &st);
  for (uint32_t i = 0; i < s->slot_hwm; i++) {
    SegSlot *sl = &s->slots[i];
    BwssFlowState fs;
    if (sl->state != SLOT_ACTIVE || g->ctl_gen[i] != sl->gen
        || bwss_controller_flow_state (g->ctl, flow_id (i, sl->gen), &fs) != 0)
      continue;
    sl->controlled = 1;
    sl->window_bytes = fs.window_bytes;
    sl->target_bps = fs.window_bytes ? fs.target_bps : -1.0;
    sl->rate_bps = fs.rate_bps;
    sl->rtt_us = fs.rtt_us;
    sl->base_rtt_us = fs.base_rtt_us;
    sl->mss = fs.mss;
    sl->read_rate_bps = fs.window_bytes ? fs.read_rate_bps : 0.0;
  }
  if (g->debug && now >= g->next_debug_us) {
    g->next_debug_us = now + 1000000;
    fprintf (stderr, "bwss[%d]: loop %s phase %s sigma %.0f U %.0f queue %.0f/%.0f us flows %u\n",
             (int) getpid (), bwss_loop_name (st.loop), bwss_phase_name (st.phase), st.sigma_bps,
             st.aggregate_bps, st.queue_us, st.queue_target_us, st.n_flows);
    for (uint32_t i = 0; i < s->slot_hwm; i++)
      if (s->slots[i].state == SLOT_ACTIVE)
        fprintf (stderr, "bwss[%d]:   slot %u pid %d rate %.0f target %.0f window %u rtt %u mss %u bytes %llu\n",
                 (int) getpid (), i, s->slots[i].pid, s->slots[i].rate_bps, s->slots[i].target_bps,
                 s->slots[i].window_bytes, s->slots[i].rtt_us, s->slots[i].mss,
                 (unsigned long long) s->slots[i].bytes_received);
  }
  s->phase = st.phase;
  s->sigma_bps = st.sigma_bps;
  s->aggregate_bps = st.aggregate_bps;
  s->loop = st.loop;
  s->queue_us = st.queue_us;
  s->queue_target_us = st.queue_target_us;
  heartbeat (g, s, now);
  seg_unlock (s);
}

/* Tries to become the controller: a non-blocking POSIX write lock on the
 * segment's first byte, which the kernel drops when this process dies. */
static bool
try_take_control (Seg *g)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
  return fcntl (g->fd, F_SETLK, &fl) == 0;
}

/* Notes whether the controller role is held by a controller that does not
 * beat (stopped, hung).  g->local held; @g not the controller. */
static void
watch_role (Seg *g, uint64_t now)
{
  if (controller_alive (g->s, now))
    g->role_stuck_since = 0;
  else if (g->role_stuck_since == 0)
    g->role_stuck_since = now;
}

static uint64_t
seg_dispatch (Seg *g, uint64_t now)
{
  pthread_mutex_lock (&g->local);
  seg_follow (g, now);
  if (g->may_control && !g->controller) {
    if (try_take_control (g)) {
      seg_reset_control (g);
      g->controller = true;
      g->role_stuck_since = 0;
    } else {
      watch_role (g, now);
    }
  }
  /* a data path (the shim's hooks) never waits; a controller candidate may */
  if (seg_pending (g) && seg_lock (g, g->may_control ? LOCK_WAIT_US : 0) == 0) {
    seg_publish (g);
    seg_unlock (g->s);
  }
  if (g->controller)
    control (g, now);
  apply_windows (g, now);
  if (g->may_create && g->may_control && stuck_for (g, now) >= RECOVER_US)
    seg_recover (g, now);
  pthread_mutex_unlock (&g->local);
  return DISPATCH_US;
}

uint64_t
bwss_domain_dispatch (BwssDomain *d, uint64_t now)
{
  if (d == NULL || d->seg == NULL)
    return DISPATCH_US;
  return seg_dispatch (d->seg, now ? now : bwss_clock_now_us ());
}

static void *
dispatch_thread (void *data)
{
  Seg *g = data;
  while (!atomic_load (&g->thread_stop)) {
    uint64_t wait = seg_dispatch (g, bwss_clock_now_us ());
    struct timespec ts = { .tv_sec = (time_t) (wait / 1000000), .tv_nsec = (long) (wait % 1000000) * 1000 };
    nanosleep (&ts, NULL);
  }
  return NULL;
}

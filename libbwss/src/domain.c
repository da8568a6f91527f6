/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain.c — the per-user domain: shared state, flows, controller election,
 * fail-open.  The laws are controller.c; the kernel is knobs.c; this file is
 * the plumbing between processes.
 *
 * Roles.  Every process that registers sockets is a participant: it owns the
 * fds, so it applies the windows of its own sockets.  One process at a time
 * is the controller: it holds a POSIX record lock on the segment (the kernel
 * drops it when the process dies, so another candidate takes over at its next
 * dispatch), measures every flow with sock_diag, runs the laws and publishes a
 * window per slot with a heartbeat.
 *
 * Fail-open.  A participant applies a published window only while the
 * heartbeat is fresh (FAILOPEN_US) and the controller's pid lives; otherwise
 * it puts the clamp of each of its sockets back to the value the kernel had
 * before we touched it.  A crashed controller never leaves a flow throttled
 * for more than FAILOPEN_US plus one dispatch of the participant.
 *
 * Reclaim.  Whoever takes the lock frees the slots of dead processes (pid
 * gone, or reused: start time differs); the controller also frees slots whose
 * socket no longer exists in the namespace.
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
#include "segment.h"

/* A controller silent for this long is dead: its windows are released.
 * 100 dispatch periods; a controller process that is merely busy for a
 * second loses nothing but a second of control. */
#define FAILOPEN_US       1000000ull
/* Dispatch period: the FCS needs samples well inside φ = 2·RTT (>= 10 ms). */
#define DISPATCH_US       10000ull
/* Slots whose socket sock_diag no longer lists, this many dumps in a row,
 * are freed (a dump can race a connection that is just being set up). */
#define GONE_DUMPS        3
/* Wait for a segment another process is initialising. */
#define INIT_WAIT_US      500000ull

typedef struct Seg Seg;

struct BwssFlow {
  Seg      *seg;
  BwssDomain *owner;
  int       fd;
  uint32_t  slot;
  uint32_t  gen;
  uint64_t  inode;         /* of the socket: an fd number can be reused */
  uint32_t  orig_clamp;    /* the kernel's clamp before we touched it */
  uint32_t  applied;       /* window we set; 0 = the original clamp is in place */
  BwssFlow *next;
};

/* One mapping per process and domain name, shared by its handles: POSIX
 * record locks belong to the process, so a second fd on the same file would
 * drop the controller lock when closed. */
struct Seg {
  char            name[72];
  int             fd;
  Segment        *s;
  unsigned        refs;
  pid_t           pid;            /* the process that opened it (fork check) */
  pthread_mutex_t local;          /* guards flows and the controller state */
  BwssFlow       *flows;
  bool            may_control;
  bool            controller;
  BwssController *ctl;
  KnobDump        dump;
  uint32_t        ctl_gen[SEG_MAX_FLOWS];    /* gen the controller knows per slot */
  uint32_t        ctl_serial[SEG_MAX_FLOWS]; /* prefs serial it knows */
  uint8_t         gone[SEG_MAX_FLOWS];
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

/* Returns the start time of @pid (clock ticks since boot), 0 if unknown. */
static uint64_t
pid_starttime (pid_t pid)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return 0;
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields restart after the last ')' */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  unsigned long long st = 0;
  /* after ") " come fields 3..: state(3) … starttime(22) */
  if (sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
              &st) != 1)
    return 0;
  return st;
}

static bool
pid_alive (pid_t pid, uint64_t starttime)
{
  if (pid <= 0)
    return false;
  if (kill (pid, 0) != 0 && errno == ESRCH)
    return false;
  return starttime == 0 || pid_starttime (pid) == starttime;
}

/* ---- the segment: name, validation, creation ---- */

static int
domain_name (const char *name, char *out, size_t len)
{
  if (name == NULL)
    name = getenv ("BWSS_DOMAIN");
  if (name == NULL || *name == '\0') {
    snprintf (out, len, "/bwss-%u", (unsigned) geteuid ());
    return 0;
  }
  size_t n = strlen (name);
  if (n > 64)
    return BWSS_EINVAL;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_' || c == '.'))
      return BWSS_EINVAL;
  }
  snprintf (out, len, "/%s", name);
  return 0;
}

/* Checks every field a reader relies on; returns 0 or a BWSS_E code. */
static int
validate (const Segment *s)
{
  if (s->magic != SEG_MAGIC)
    return BWSS_EPROTO;
  if (s->version != SEG_VERSION)
    return BWSS_EVERSION;
  if (s->header_size != offsetof (Segment, slots) || s->slot_size != sizeof (SegSlot)
      || s->max_flows != SEG_MAX_FLOWS)
    return BWSS_EPROTO;
  if (s->owner_uid != geteuid ())
    return BWSS_EPERM;
  if (s->n_flows > SEG_MAX_FLOWS || s->phase > BWSS_PHASE_LAST || bwss_loop_name (s->loop) == NULL)
    return BWSS_EPROTO;
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
    const SegSlot *sl = &s->slots[i];
    if (sl->state != SLOT_FREE && sl->state != SLOT_ACTIVE)
      return BWSS_EPROTO;
    if (sl->state == SLOT_FREE)
      continue;
    if (memchr (sl->comm, 0, sizeof sl->comm) == NULL || memchr (sl->local, 0, sizeof sl->local) == NULL
        || memchr (sl->remote, 0, sizeof sl->remote) == NULL)
      return BWSS_EPROTO;
    if (bwss_prefs_validate (&sl->prefs) != BWSS_OK || sl->pid <= 0 || sl->fd < 0)
      return BWSS_EPROTO;
  }
  return 0;
}

static int
init_segment (Segment *s)
{
  memset (s, 0, sizeof *s);
  pthread_mutexattr_t a;
  pthread_mutexattr_init (&a);
  pthread_mutexattr_setpshared (&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust (&a, PTHREAD_MUTEX_ROBUST);
  int r = pthread_mutex_init (&s->lock, &a);
  pthread_mutexattr_destroy (&a);
  if (r)
    return BWSS_ENOMEM;
  s->version = SEG_VERSION;
  s->header_size = offsetof (Segment, slots);
  s->slot_size = sizeof (SegSlot);
  s->max_flows = SEG_MAX_FLOWS;
  s->owner_uid = geteuid ();
  /* publish: readers check the magic first */
  atomic_thread_fence (memory_order_release);
  s->magic = SEG_MAGIC;
  return 0;
}

/* Opens or creates the segment @name; on error nothing is changed. */
static int
map_segment (const char *name, bool create, int *fd_out, Segment **out)
{
  int fd = -1;
  bool created = false;
  if (create) {
    fd = shm_open (name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      created = true;
      if (fchmod (fd, 0600) != 0 || ftruncate (fd, sizeof (Segment)) != 0) {
        int e = errno;
        close (fd);
        shm_unlink (name);
        return e == ENOSPC ? BWSS_ENOSPC : BWSS_ENOMEM;
      }
    } else if (errno != EEXIST) {
      return errno == EACCES ? BWSS_EPERM : BWSS_ENOENT;
    }
  }
  if (fd < 0) {
    fd = shm_open (name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0)
      return errno == EACCES ? BWSS_EPERM : BWSS_ENOENT;
  }
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
    close (fd);
    return BWSS_EPROTO;
  }
  /* a segment another process has just created may not have its size yet */
  for (uint64_t waited = 0; !created && st.st_size == 0 && waited < INIT_WAIT_US; waited += 10000) {
    usleep (10000);
    if (fstat (fd, &st) != 0) {
      close (fd);
      return BWSS_EPROTO;
    }
  }
  if (st.st_uid != geteuid () || (st.st_mode & 0777) != 0600) {
    close (fd);
    return BWSS_EPERM;
  }
  if ((size_t) st.st_size != sizeof (Segment)) {
    /* another layout?  Peek at the header if there is one. */
    int err = BWSS_EPROTO;
    if ((size_t) st.st_size >= 12) {
      uint32_t head[3];
      if (pread (fd, head, sizeof head, 0) == (ssize_t) sizeof head
          && ((uint64_t) head[1] << 32 | head[0]) == SEG_MAGIC && head[2] != SEG_VERSION)
        err = BWSS_EVERSION;
    }
    close (fd);
    return err;
  }
  Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (s == MAP_FAILED) {
    close (fd);
    return BWSS_ENOMEM;
  }
  int err = 0;
  if (created) {
    err = init_segment (s);
  } else {
    /* a segment another process is creating has no magic yet */
    for (uint64_t waited = 0; s->magic == 0 && waited < INIT_WAIT_US; waited += 10000)
      usleep (10000);
    atomic_thread_fence (memory_order_acquire);
    err = validate (s);
  }
  if (err) {
    munmap (s, sizeof (Segment));
    close (fd);
    if (created)
      shm_unlink (name);
    return err;
  }
  *fd_out = fd;
  *out = s;
  return 0;
}

/* ---- locking and reclaim ---- */

static void sweep (Segment *s);

/* Takes the segment lock; repairs the table if the last holder died.
 * Returns 0 or BWSS_EPROTO (lock unrecoverable). */
static int
seg_lock (Segment *s)
{
  int r = pthread_mutex_lock (&s->lock);
  if (r == EOWNERDEAD) {
    pthread_mutex_consistent (&s->lock);
    sweep (s);
    return 0;
  }
  return r == 0 ? 0 : BWSS_EPROTO;
}

static void
seg_unlock (Segment *s)
{
  pthread_mutex_unlock (&s->lock);
}

static void
free_slot (Segment *s, uint32_t i)
{
  SegSlot *sl = &s->slots[i];
  if (sl->state == SLOT_ACTIVE && s->n_flows > 0)
    s->n_flows--;
  uint32_t gen = sl->gen + 1;
  memset (sl, 0, sizeof *sl);
  sl->gen = gen;
}

/* Frees the slots of dead processes.  Lock held. */
static void
sweep (Segment *s)
{
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++)
    if (s->slots[i].state == SLOT_ACTIVE
        && !pid_alive (s->slots[i].pid, s->slots[i].starttime))
      free_slot (s, i);
}

/* ---- process-local state ---- */

static void
seg_release_all_windows (Seg *g)
{
  for (BwssFlow *f = g->flows; f; f = f->next) {
    struct stat st;
    if (f->applied && fstat (f->fd, &st) == 0 && st.st_ino == f->inode)
      knob_set_clamp (f->fd, f->orig_clamp);
    f->applied = 0;
  }
}

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

static void
seg_free (Seg *g)
{
  seg_stop_thread (g);
  pthread_mutex_lock (&g->local);
  seg_release_all_windows (g);
  if (seg_lock (g->s) == 0) {
    for (BwssFlow *f = g->flows; f; f = f->next)
      if (g->s->slots[f->slot].gen == f->gen && g->s->slots[f->slot].pid == getpid ())
        free_slot (g->s, f->slot);
    if (g->controller && g->s->controller_pid == getpid ())
      g->s->controller_pid = 0;
    seg_unlock (g->s);
  }
  while (g->flows) {
    BwssFlow *f = g->flows;
    g->flows = f->next;
    free (f);
  }
  pthread_mutex_unlock (&g->local);
  bwss_controller_free (g->ctl);
  knob_dump_clear (&g->dump);
  munmap (g->s, sizeof (Segment));
  close (g->fd);                       /* drops the controller lock, if held */
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
    g->controller = false;
    bwss_controller_free (g->ctl);
    g->ctl = NULL;
    g->thread_on = false;
    g->pid = getpid ();
  }
  pthread_mutex_init (&segs_lock, NULL);
}

int
bwss_domain_open (const char *name, unsigned flags, BwssDomain **out)
{
  char full[72];
  if (out == NULL || (flags & ~(BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER | BWSS_DOMAIN_THREAD)))
    return BWSS_EINVAL;
  int err = domain_name (name, full, sizeof full);
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
    if (strcmp (g->name, full) == 0)
      break;
  if (g == NULL) {
    g = calloc (1, sizeof *g);
    if (g == NULL) {
      err = BWSS_ENOMEM;
      goto fail;
    }
    err = map_segment (full, !(flags & BWSS_DOMAIN_NO_CREATE), &g->fd, &g->s);
    if (err) {
      free (g);
      goto fail;
    }
    snprintf (g->name, sizeof g->name, "%s", full);
    pthread_mutex_init (&g->local, NULL);
    g->pid = getpid ();
    g->debug = getenv ("BWSS_DEBUG") != NULL;
    g->next = segs;
    segs = g;
  }
  g->refs++;
  if (!(flags & BWSS_DOMAIN_NO_CONTROLLER))
    g->may_control = true;
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

/* Restores @f's clamp and frees its slot.  g->local held; @f unlinked. */
static void
flow_release (Seg *g, BwssFlow *f)
{
  struct stat st;
  if (f->applied && fstat (f->fd, &st) == 0 && st.st_ino == f->inode)
    knob_set_clamp (f->fd, f->orig_clamp);
  if (seg_lock (g->s) == 0) {
    SegSlot *sl = &g->s->slots[f->slot];
    if (sl->state == SLOT_ACTIVE && sl->gen == f->gen)
      free_slot (g->s, f->slot);
    seg_unlock (g->s);
  }
  free (f);
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

static void
read_comm (char *comm, size_t len)
{
  FILE *f = fopen ("/proc/self/comm", "re");
  comm[0] = '\0';
  if (f) {
    if (fgets (comm, (int) len, f))
      comm[strcspn (comm, "\n")] = '\0';
    fclose (f);
  }
}

int
bwss_flow_register (BwssDomain *d, int fd, const BwssPrefs *prefs, BwssFlow **out)
{
  if (d == NULL || out == NULL || bwss_prefs_validate (prefs) != BWSS_OK)
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

  pthread_mutex_lock (&g->local);
  for (BwssFlow *o = g->flows; o; o = o->next)
    if (o->fd == fd) {
      pthread_mutex_unlock (&g->local);
      free (f);
      return BWSS_EEXIST;
    }
  int err = seg_lock (g->s);
  if (err) {
    pthread_mutex_unlock (&g->local);
    free (f);
    return err;
  }
  uint32_t i;
  for (i = 0; i < SEG_MAX_FLOWS && g->s->slots[i].state != SLOT_FREE; i++)
    ;
  if (i == SEG_MAX_FLOWS) {
    sweep (g->s);
    for (i = 0; i < SEG_MAX_FLOWS && g->s->slots[i].state != SLOT_FREE; i++)
      ;
  }
  if (i == SEG_MAX_FLOWS) {
    seg_unlock (g->s);
    pthread_mutex_unlock (&g->local);
    free (f);
    return BWSS_ENOSPC;
  }
  SegSlot *sl = &g->s->slots[i];
  uint32_t gen = sl->gen + 1;
  memset (sl, 0, sizeof *sl);
  sl->gen = gen;
  sl->pid = getpid ();
  sl->fd = fd;
  sl->starttime = pid_starttime (sl->pid);
  sl->inode = info.inode;
  read_comm (sl->comm, sizeof sl->comm);
  knob_endpoints (fd, sl->local, sizeof sl->local, sl->remote, sizeof sl->remote);
  sl->prefs = *prefs;
  sl->prefs_serial = 1;
  sl->target_bps = -1.0;
  sl->rate_bps = -1.0;
  sl->state = SLOT_ACTIVE;
  g->s->n_flows++;
  seg_unlock (g->s);

  f->seg = g;
  f->owner = d;
  f->fd = fd;
  f->slot = i;
  f->gen = gen;
  f->orig_clamp = clamp;
  f->inode = info.inode;
  f->next = g->flows;
  g->flows = f;
  pthread_mutex_unlock (&g->local);
  *out = f;
  return 0;
}

/* Locks the segment and returns @f's slot in *out, if it is still @f's.
 * Returns 0 (lock held), BWSS_ENOENT (unlocked) or a locking error. */
static int
lock_slot (BwssFlow *f, SegSlot **out)
{
  Segment *s = f->seg->s;
  int err = seg_lock (s);
  if (err)
    return err;
  SegSlot *sl = &s->slots[f->slot];
  if (sl->state != SLOT_ACTIVE || sl->gen != f->gen) {
    seg_unlock (s);
    return BWSS_ENOENT;
  }
  *out = sl;
  return 0;
}

int
bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs)
{
  if (f == NULL || f->seg == NULL || bwss_prefs_validate (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  SegSlot *sl;
  int err = lock_slot (f, &sl);
  if (err)
    return err;
  sl->prefs = *prefs;
  sl->prefs_serial++;
  seg_unlock (f->seg->s);
  return 0;
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

static bool
controller_alive (const Segment *s, uint64_t now)
{
  pid_t pid = s->controller_pid;
  uint64_t hb = s->heartbeat_us;
  if (pid <= 0 || now > hb + FAILOPEN_US)
    return false;
  return !(kill (pid, 0) != 0 && errno == ESRCH);
}

int
bwss_flow_get_stats (BwssFlow *f, BwssFlowStats *out)
{
  if (f == NULL || f->seg == NULL || out == NULL)
    return BWSS_EINVAL;
  Segment *s = f->seg->s;
  SegSlot *sl;
  int err = lock_slot (f, &sl);
  if (err)
    return err;
  bool alive = controller_alive (s, bwss_clock_now_us ());
  out->prefs = sl->prefs;
  out->bytes_received = sl->bytes_received;
  out->rate_bps = sl->rate_bps;
  out->target_bps = alive && sl->controlled ? sl->target_bps : -1.0;
  out->window_bytes = f->applied;
  out->rtt_us = sl->rtt_us;
  out->base_rtt_us = sl->base_rtt_us;
  out->mss = sl->mss;
  out->controlled = alive && sl->controlled;
  seg_unlock (s);
  if (out->rtt_us == 0 || out->bytes_received == 0) {
    KnobInfo k;
    if (knob_read_info (f->fd, &k) == 0) {
      out->rtt_us = k.rtt_us;
      out->mss = k.mss;
      out->bytes_received = k.bytes_received;
    }
  }
  return 0;
}

int
bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out)
{
  if (d == NULL || out == NULL)
    return BWSS_EINVAL;
  Segment *s = d->seg->s;
  int err = seg_lock (s);
  if (err)
    return err;
  bool alive = controller_alive (s, bwss_clock_now_us ());
  out->controller_pid = alive ? s->controller_pid : 0;
  out->phase = alive ? (BwssPhase) s->phase : BWSS_PHASE_IDLE;
  out->sigma_bps = alive ? s->sigma_bps : 0.0;
  out->aggregate_bps = alive ? s->aggregate_bps : 0.0;
  out->n_flows = s->n_flows;
  out->suspended = s->suspended != 0;
  out->loop = s->loop == BWSS_LOOP_PAPER ? BWSS_LOOP_PAPER : BWSS_LOOP_DELAY;
  out->queue_us = alive ? s->queue_us : -1.0;
  out->queue_target_us = alive ? s->queue_target_us : 0.0;
  seg_unlock (s);
  return 0;
}

int
bwss_domain_set_suspended (BwssDomain *d, bool suspended)
{
  if (d == NULL)
    return BWSS_EINVAL;
  Segment *s = d->seg->s;
  int err = seg_lock (s);
  if (err)
    return err;
  s->suspended = suspended ? 1u : 0u;
  seg_unlock (s);
  return 0;
}

int
bwss_domain_list_flows (BwssDomain *d, BwssFlowInfo *out, size_t max, size_t *n_out)
{
  if (d == NULL || n_out == NULL || (out == NULL && max > 0))
    return BWSS_EINVAL;
  Segment *s = d->seg->s;
  int err = seg_lock (s);
  if (err)
    return err;
  sweep (s);
  bool alive = controller_alive (s, bwss_clock_now_us ());
  size_t n = 0;
  for (uint32_t i = 0; i < SEG_MAX_FLOWS && n < max; i++) {
    const SegSlot *sl = &s->slots[i];
    if (sl->state != SLOT_ACTIVE)
      continue;
    BwssFlowInfo *fi = &out[n++];
    memset (fi, 0, sizeof *fi);
    fi->pid = sl->pid;
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
  }
  seg_unlock (s);
  *n_out = n;
  return 0;
}

/* ---- dispatch: apply, fail open, control ---- */

/* Applies the published windows to this process's sockets, or releases
 * them if no controller is alive.  g->local held. */
static void
apply_windows (Seg *g, uint64_t now)
{
  Segment *s = g->s;
  bool alive = controller_alive (s, now);
  for (BwssFlow *f = g->flows; f; f = f->next) {
    const SegSlot *sl = &s->slots[f->slot];
    uint32_t want = 0;
    struct stat st;
    if (fstat (f->fd, &st) != 0 || st.st_ino != f->inode) {
      /* the program closed the socket behind our back (or the fd now
       * names something else): never touch it again */
      f->applied = 0;
      continue;
    }
    if (alive && sl->state == SLOT_ACTIVE && sl->gen == f->gen && sl->controlled)
      want = sl->window_bytes;
    if (want == 0) {
      if (f->applied) {
        knob_set_clamp (f->fd, f->orig_clamp);
        f->applied = 0;
      }
      continue;
    }
    /* re-assert too: receive-buffer autotuning may raise the clamp */
    uint32_t cur = 0;
    if (want != f->applied || (knob_get_clamp (f->fd, &cur) == 0 && cur != want)) {
      if (knob_set_clamp (f->fd, want) == 0)
        f->applied = want;
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
  }
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
    SegSlot *sl = &s->slots[i];
    sl->controlled = 0;
    sl->window_bytes = 0;
    sl->target_bps = -1.0;
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

  if (seg_lock (s) != 0)
    return;
  sweep (s);
  BwssParams params;
  controller_params (&params);
  if (s->suspended || (g->ctl == NULL && bwss_controller_new (&params, &g->ctl) != 0)) {
    suspend (g, s);
    s->controller_pid = getpid ();
    s->heartbeat_us = now;
    seg_unlock (s);
    return;
  }
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
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
        free_slot (s, i);
      }
      continue;
    }
    g->gone[i] = 0;
    if (k) {
      BwssSample smp = { .now_us = now, .bytes_received = k->bytes_received,
                         .rtt_us = k->rtt_us, .mss = k->mss, .min_rtt_us = k->min_rtt_us };
      bwss_controller_observe (g->ctl, flow_id (i, sl->gen), &smp);
      sl->bytes_received = k->bytes_received;
    }
  }
  bwss_controller_tick (g->ctl, now);
  BwssControllerStats st;
  bwss_controller_stats (g->ctl, &st);
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
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
  }
  if (g->debug && now >= g->next_debug_us) {
    g->next_debug_us = now + 1000000;
    fprintf (stderr, "bwss[%d]: loop %s phase %s sigma %.0f U %.0f queue %.0f/%.0f us flows %u\n",
             (int) getpid (), bwss_loop_name (st.loop), bwss_phase_name (st.phase), st.sigma_bps,
             st.aggregate_bps, st.queue_us, st.queue_target_us, st.n_flows);
    for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++)
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
  s->controller_pid = getpid ();
  s->heartbeat_us = now;
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

static uint64_t
seg_dispatch (Seg *g, uint64_t now)
{
  pthread_mutex_lock (&g->local);
  if (g->may_control && !g->controller && try_take_control (g)) {
    g->controller = true;
    memset (g->ctl_gen, 0, sizeof g->ctl_gen);
    bwss_controller_free (g->ctl);
    g->ctl = NULL;
  }
  if (g->controller)
    control (g, now);
  apply_windows (g, now);
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

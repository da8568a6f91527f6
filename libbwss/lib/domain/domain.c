/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain.c — the per-user domain's handle: open and close, what a fork
 * leaves to the child, the dispatch that runs a process's roles, and the
 * domain-wide readers.  The laws are libbwss/lib/laws/ (controller.c); the
 * kernel is libbwss/lib/sys/ (sys.h); the segment as a file and its lock
 * are segment.c; the rest of the plumbing between processes is
 *
 *   domain-seg.c  the segment lock within a bound (never waiting on another
 *                 process); following and recovering a moved domain (it
 *                 reports a move; this file then resets the controller)
 *   flows.c       the flow registry: registration, preferences, slots (and
 *                 their reclaim), statistics
 *   apply.c       the participant: the published windows applied to its
 *                 own sockets, and put back when no controller lives
 *                 (fail-open); the owner's paced reads
 *   leader.c      the controller: the role, its heartbeat, a round of
 *                 measurement and publication
 *
 * and domain-private.h what they share.  Calls go one way: domain.c →
 * {flows, leader, domain-seg, apply}, flows → {apply, leader, domain-seg},
 * apply → leader (is the controller alive?), leader → domain-seg; segment.c
 * under all of them.
 *
 * Roles.  Every process that registers sockets is a participant: it owns the
 * fds, so it applies the windows of its own sockets.  One process at a time
 * is the controller: it holds a POSIX record lock on the segment (the kernel
 * drops it when the process dies, so another candidate takes over at its next
 * dispatch), measures every flow with sock_diag, runs the laws and publishes a
 * window per slot with a heartbeat and its pid's start time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "sys.h"
#include "domain-private.h"

static pthread_mutex_t segs_lock = PTHREAD_MUTEX_INITIALIZER;
static Seg *segs;

/* ---- process-local state ---- */

static void *dispatch_thread (void *data);

/* Empties @g's wake fd (a dispatch is running). */
static void
seg_drain_wake (Seg *g)
{
  eventfd_t v;
  if (g->wake_fd >= 0)
    eventfd_read (g->wake_fd, &v);
}

static void
seg_stop_thread (Seg *g)
{
  if (!g->thread_on)
    return;
  atomic_store (&g->thread_stop, true);
  seg_wake (g);
  pthread_join (g->thread, NULL);
  g->thread_on = false;
}

static void
seg_free (Seg *g)
{
  seg_stop_thread (g);
  pthread_mutex_lock (&g->local);
  while (g->flows) {
    BwssFlow *f = g->flows;
    g->flows = f->next;
    apply_release (g, f);
  }
  leader_resign (g);
  pthread_mutex_unlock (&g->local);
  bwss_controller_free (g->ctl);
  knob_dump_clear (&g->dump);
  knob_dump_clear (&g->want);
  knob_dump_clear (&g->due);
  SegFile f = seg_file (g);
  segment_close (&f);                    /* drops the controller lock, if held */
  if (g->wake_fd >= 0)
    close (g->wake_fd);
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
    leader_reset (g);
    g->thread_on = false;
    g->pid = getpid ();
    g->starttime = proc_starttime (g->pid);
    g->lock_stuck_since = 0;
    g->role_stuck_since = 0;
    /* the parent's wake fd is shared with it: a fresh one, same number */
    int fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd >= 0 && g->wake_fd >= 0 && dup3 (fd, g->wake_fd, O_CLOEXEC) >= 0)
      close (fd);
    else if (fd >= 0)
      g->wake_fd = fd;
  }
  pthread_mutex_init (&segs_lock, NULL);
}

int
bwss_domain_open (const char *name, unsigned flags, BwssDomain **out)
{
  char path[PATH_MAX];
  if (out == NULL || (flags & ~(BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER | BWSS_DOMAIN_THREAD)))
    return BWSS_EINVAL;
  int err = bwss_domain_path (name, "", path, sizeof path);
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
    g->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);   /* -1: the dispatch wakes on time only */
    leader_params (&g->params);
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
      apply_release (g, f);
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

/* Follows the domain to the segment its name names now; a new segment has
 * a new controller election, so this process's controller state goes. */
static void
follow (Seg *g, uint64_t now)
{
  if (seg_follow (g, now))
    leader_reset (g);
}

/* ---- the domain-wide readers ---- */

/* For the domain-wide readers: takes g->local, follows a moved domain,
 * takes the segment lock (LOCK_WAIT_US at most) and frees the slots of dead
 * and released flows, so what is read counts live flows only.  Returns 0
 * with both locks held and *now set, or BWSS_EBUSY with neither. */
static int
seg_read_lock (Seg *g, uint64_t *now)
{
  pthread_mutex_lock (&g->local);
  *now = bwss__clock_now_us ();
  follow (g, *now);
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
  bool alive = leader_alive (s, now);
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
  follow (g, bwss__clock_now_us ());
  /* one word the controller reads under the lock: no need to take it */
  __atomic_store_n (&g->s->suspended, suspended ? 1u : 0u, __ATOMIC_RELEASE);
  pthread_mutex_unlock (&g->local);
  return 0;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Counts, for each of @n listed flows, the listed flows of its group. */
static void
count_members (BwssFlowGroup *groups, size_t n)
{
  uint64_t *keys = malloc (n * sizeof *keys);
  for (size_t i = 0; i < n; i++) {
    groups[i].members = 1;
    if (keys)
      keys[i] = groups[i].group;
  }
  if (keys == NULL)
    return;                            /* out of memory: each counts itself */
  qsort (keys, n, sizeof *keys, cmp_u64);
  for (size_t i = 0; i < n; i++) {
    if (groups[i].group == 0)
      continue;
    size_t lo = 0, hi = n;             /* first key >= group */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < groups[i].group)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t end = lo;
    while (end < n && keys[end] == groups[i].group)
      end++;
    groups[i].members = (uint32_t) (end - lo);
  }
  free (keys);
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
  Seg *g = d->seg;
  uint64_t now;
  int err = seg_read_lock (g, &now);
  if (err)
    return err;
  const Segment *s = g->s;
  bool alive = leader_alive (s, now);
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
    if (groups) {
      BwssFlowGroup *gr = &groups[n - 1];
      memset (gr, 0, sizeof *gr);
      if (segment_slot_group (sl, &gr->group) == BWSS_OK)
        gr->share = (BwssShare) sl->share;
    }
  }
  seg_read_unlock (g);
  if (groups)
    count_members (groups, n);
  *n_out = n;
  return 0;
}

/* ---- dispatch: follow, elect, publish, control, apply, recover ---- */

/* Returns the delay from @now to the next whole multiple of IDLE_US on
 * CLOCK_MONOTONIC: idle processes wake together. */
static uint64_t
idle_delay (uint64_t now)
{
  return IDLE_US - now % IDLE_US;
}

static uint64_t
seg_dispatch (Seg *g, uint64_t now)
{
  pthread_mutex_lock (&g->local);
  seg_drain_wake (g);
  follow (g, now);
  leader_elect (g, now);
  /* a data path (the shim's hooks) never waits; a controller candidate may */
  if (flows_pending (g) && seg_lock (g, g->may_control ? LOCK_WAIT_US : 0) == 0) {
    flows_publish (g);
    seg_unlock (g->s);
  }
  /* the control period while there is work: windows to apply or flows to
   * publish, a round of the controller, or (a candidate) a role to take
   * over at once if its holder dies */
  bool busy = g->flows != NULL;
  if (g->controller)
    busy = leader_round (g, now) || busy;
  else if (g->may_control && __atomic_load_n (&g->s->n_flows, __ATOMIC_RELAXED) > 0)
    busy = true;
  apply_windows (g, now);
  if (g->may_create && g->may_control && seg_stuck_for (g, now) >= RECOVER_US
      && seg_recover (g, now))
    leader_reset (g);
  uint64_t wait = busy ? g->params.min_phi_us : idle_delay (now);
  pthread_mutex_unlock (&g->local);
  return wait;
}

uint64_t
bwss_domain_dispatch (BwssDomain *d, uint64_t now)
{
  if (d == NULL || d->seg == NULL)
    return IDLE_US;
  return seg_dispatch (d->seg, now ? now : bwss__clock_now_us ());
}

int
bwss_domain_get_fd (BwssDomain *d)
{
  if (d == NULL || d->seg == NULL)
    return BWSS_EINVAL;
  return d->seg->wake_fd >= 0 ? d->seg->wake_fd : BWSS_ENOMEM;
}

/* BWSS_DOMAIN_THREAD: dispatches at the time the domain asks for, or at
 * once when the wake fd says so (a registration, bwss_domain_close()). */
static void *
dispatch_thread (void *data)
{
  Seg *g = data;
  while (!atomic_load (&g->thread_stop)) {
    uint64_t wait = seg_dispatch (g, bwss__clock_now_us ());
    struct timespec ts = { .tv_sec = (time_t) (wait / 1000000), .tv_nsec = (long) (wait % 1000000) * 1000 };
    if (g->wake_fd >= 0) {
      struct pollfd p = { .fd = g->wake_fd, .events = POLLIN };
      while (ppoll (&p, 1, &ts, NULL) < 0 && errno == EINTR)
        ;
    } else {
      nanosleep (&ts, NULL);
    }
  }
  return NULL;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flows.c — the flow registry: a process's sockets registered in the
 * domain, each with its slot in the segment, its preferences and its
 * statistics.  What the windows do to the socket, and the owner's paced
 * reads, are apply.c (this file calls it to give a socket back; apply.c
 * never calls here).
 *
 * A registration or a preference change is written into the segment at
 * once if the lock is free, else kept in the BwssFlow and written at a
 * later dispatch (domain-seg.c says why nothing here waits).
 *
 * Reclaim.  Whoever takes the lock frees the slots of dead processes (pid
 * gone, or reused: start time differs) and released slots; the controller
 * also frees slots whose socket no longer exists in the namespace
 * (leader.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sys.h"
#include "domain-private.h"

/* ---- slots of this process's flows ---- */

/* Writes @f into a free slot.  Returns 0, BWSS_ENOSPC (table full) or
 * BWSS_EBADF (the fd is no longer the socket).  s locked. */
static int
claim_slot (Seg *g, BwssFlow *f)
{
  Segment *s = g->s;
  if (!knob_fd_is (f->fd, f->inode))
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
  sl->diag_family = f->diag.family;
  sl->diag_id = f->diag.id;
  sl->share = f->share;
  sl->share_key = f->share_key;
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
bool
flows_pending (const Seg *g)
{
  for (const BwssFlow *f = g->flows; f; f = f->next)
    if (f->slot == NO_SLOT || f->prefs_dirty)
      return true;
  return false;
}

/* Writes what registrations and preference changes could not write
 * before.  s locked. */
void
flows_publish (Seg *g)
{
  Segment *s = g->s;
  for (BwssFlow *f = g->flows; f; f = f->next) {
    if (f->slot == NO_SLOT) {
      claim_slot (g, f);                 /* if the table is full: at a later dispatch */
    } else if (f->prefs_dirty) {
      if (slot_is_ours (s, f)) {
        s->slots[f->slot].prefs = f->prefs;
        s->slots[f->slot].flags = f->paced_reads ? SLOT_PACED_READS : 0;
        s->slots[f->slot].share = f->share;
        s->slots[f->slot].share_key = f->share_key;
        s->slots[f->slot].prefs_serial++;
      }
      f->prefs_dirty = false;
    }
  }
}

/* ---- the flows' public API ---- */

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
  KnobInfo diag;
  uint32_t clamp;
  if (knob_diag_id (fd, &diag) != 0 || knob_get_clamp (fd, &clamp) != 0)
    return BWSS_EBADF;
  Seg *g = d->seg;
  BwssFlow *f = calloc (1, sizeof *f);
  if (f == NULL)
    return BWSS_ENOMEM;
  f->seg = g;
  f->owner = d;
  f->fd = fd;
  f->inode = diag.inode;
  f->diag = diag;
  f->orig_clamp = clamp;
  f->slot = NO_SLOT;
  f->prefs = *prefs;
  f->owner_pid = owner_pid;
  snprintf (f->origin, sizeof f->origin, "%s", origin);
  proc_comm (owner_pid, f->comm, sizeof f->comm);
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
  seg_wake (g);                          /* an idle dispatch runs now: windows from now on */
  *out = f;
  return 0;
}

/* Returns true if @f had a slot and lost it (reclaimed: its socket was
 * gone).  g->local held. */
static bool
reclaimed (const Seg *g, const BwssFlow *f)
{
  return f->slot != NO_SLOT && !slot_is_ours (g->s, f);
}

/* Marks @f's preferences and flags as changed, if it has a slot to write
 * them to: written now if the lock is free, else at a later dispatch.
 * g->local held. */
static void
mark_dirty (Seg *g, BwssFlow *f)
{
  f->prefs_dirty = f->slot != NO_SLOT;
  if (f->prefs_dirty && seg_lock (g, 0) == 0) {
    flows_publish (g);
    seg_unlock (g->s);
  }
  if (f->prefs_dirty)
    seg_wake (g);                        /* written at the next dispatch: now */
}

int
bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs)
{
  if (f == NULL || f->seg == NULL || bwss_prefs_check (prefs) != BWSS_OK)
    return BWSS_EINVAL;
  Seg *g = f->seg;
  pthread_mutex_lock (&g->local);
  if (reclaimed (g, f)) {
    pthread_mutex_unlock (&g->local);
    return BWSS_ENOENT;                  /* reclaimed: its socket was gone */
  }
  f->prefs = *prefs;
  mark_dirty (g, f);
  pthread_mutex_unlock (&g->local);
  return 0;
}

/* Returns the key of process @pid's unit for a slot: its cgroup's inode
 * (sys.h), 0 if it has none or one the slot cannot carry (the top bits
 * carry the share, segment.h). */
static uint64_t
unit_key (pid_t pid)
{
  uint64_t id = 0;
  if (proc_cgroup_id (pid, &id) != 0)
    return 0;
  return id >> 62 ? 0 : id;
}

int
bwss_flow_set_share (BwssFlow *f, BwssShare share)
{
  if (f == NULL || f->seg == NULL || bwss_share_name (share) == NULL)
    return BWSS_EINVAL;
  Seg *g = f->seg;
  pid_t owner = f->owner_pid ? f->owner_pid : g->pid;
  uint64_t key = 0;
  if (share == BWSS_SHARE_PROCESS)
    key = (uint64_t) owner;
  else if (share == BWSS_SHARE_UNIT && (key = unit_key (owner)) == 0)
    return BWSS_ENOENT;
  pthread_mutex_lock (&g->local);
  if (reclaimed (g, f)) {
    pthread_mutex_unlock (&g->local);
    return BWSS_ENOENT;
  }
  if (f->share != share || f->share_key != key) {
    f->share = share;
    f->share_key = key;
    mark_dirty (g, f);
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
  if (reclaimed (g, f)) {
    pthread_mutex_unlock (&g->local);
    return BWSS_ENOENT;
  }
  if (!f->paced_reads) {
    f->paced_reads = true;
    mark_dirty (g, f);
  }
  pthread_mutex_unlock (&g->local);
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
  apply_release (g, f);
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
    bool alive = leader_alive (s, bwss__clock_now_us ());
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


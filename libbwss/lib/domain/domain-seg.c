/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain-seg.c — a process's hold on the domain's segment: the segment lock
 * taken within a bound, and following the domain when it moves to a fresh
 * segment (recovery).  The segment as a file and the lock primitive are
 * segment.c.
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
 */
#include <stdio.h>
#include <unistd.h>
#include "sys.h"
#include "domain-private.h"

/* ---- the segment lock, within a bound ---- */

/* Returns @g's segment as segment.c knows it. */
SegFile
seg_file (const Seg *g)
{
  SegFile f = { .fd = g->fd, .s = g->s, .dev = g->dev, .ino = g->ino };
  return f;
}

/* Takes the segment lock, waiting at most @wait_us.  Returns 0 (held) or
 * BWSS_EBUSY; keeps count of how long attempts have been failing.
 * g->local held. */
int
seg_lock (Seg *g, uint64_t wait_us)
{
  uint64_t now = bwss__clock_now_us ();
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

void
seg_unlock (Segment *s)
{
  segment_unlock (s);
}

/* ---- following the domain to a fresh segment ---- */

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
  g->lock_stuck_since = 0;
  g->role_stuck_since = 0;
  for (BwssFlow *f = g->flows; f; f = f->next) {
    f->slot = NO_SLOT;
    f->prefs_dirty = false;
  }
}

/* If the domain's name no longer names the segment @g maps (moved by a
 * recovery, or deleted), maps the one it names now (creating it if @g may).
 * Returns true if it did.  g->local held. */
bool
seg_follow (Seg *g, uint64_t now)
{
  if (now < g->next_follow_us)
    return false;
  SegFile cur = seg_file (g);
  if (segment_is_current (&cur, g->path))
    return false;
  SegFile nf;
  if (segment_open (g->path, g->may_create, 0, g->s, &nf) != 0) {
    g->next_follow_us = now + FOLLOW_RETRY_US;
    return false;
  }
  if (g->debug)
    fprintf (stderr, "bwss[%d]: the domain moved to a new segment; following\n", (int) getpid ());
  seg_switch (g, &nf);
  return true;
}

/* Returns how long the domain has been stuck as seen from @g, µs. */
uint64_t
seg_stuck_for (const Seg *g, uint64_t now)
{
  uint64_t a = g->lock_stuck_since && now > g->lock_stuck_since ? now - g->lock_stuck_since : 0;
  uint64_t b = g->role_stuck_since && now > g->role_stuck_since ? now - g->role_stuck_since : 0;
  return a > b ? a : b;
}

/* Moves a stuck domain to a fresh segment.  Returns true if @g maps
 * another segment now.  g->local held. */
bool
seg_recover (Seg *g, uint64_t now)
{
  SegFile cur = seg_file (g), nf;
  if (segment_replace_if_current (&cur, g->path, &nf) != 0)
    return seg_follow (g, now);          /* another process moved it: follow */
  if (g->debug)
    fprintf (stderr, "bwss[%d]: the domain's lock or role has been stuck for %.1f s; moved it\n",
             (int) getpid (), (double) seg_stuck_for (g, now) / 1e6);
  seg_switch (g, &nf);
  return true;
}

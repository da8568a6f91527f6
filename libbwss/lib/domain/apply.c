/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apply.c — the participant's side: the windows (and read rates) the
 * controller published, applied to this process's own sockets, and each
 * socket given back to the kernel when no controller lives or its flow
 * ends.
 *
 * Fail-open.  A participant applies a published window only while the
 * heartbeat is fresh (FAILOPEN_US), not in the future, and the controller's
 * pid lives with the start time it published; otherwise it puts the clamp of
 * each of its sockets back to the value the kernel had before we touched it.
 * A crashed or stopped controller never leaves a flow throttled for more than
 * FAILOPEN_US plus one dispatch of the participant.
 */
#include <stdlib.h>
#include "domain-private.h"

/* ---- read pacing: the token bucket of a paced flow ---- */

/* Returns the default parameters, for what read pacing needs of them (the
 * bucket's depth, the receive buffer). */
static const BwssParams *
pacing_defaults (void)
{
  static BwssParams defaults;
  static bool have_defaults;
  if (!have_defaults) {
    bwss_params_init (&defaults);
    have_defaults = true;
  }
  return &defaults;
}

/* Brings @f's read credit up to @now: pace·elapsed, at most the bucket's
 * depth.  g->local held. */
static void
pacing_refill (BwssFlow *f, uint64_t now)
{
  const BwssParams *defaults = pacing_defaults ();
  double mss = f->mss ? f->mss : defaults->default_mss;
  double depth = defaults->pace_burst_segments * mss;
  if (f->tokens_us && now > f->tokens_us)
    f->tokens += f->pace_bps / 8.0 * (double) (now - f->tokens_us) / 1e6;
  if (f->tokens > depth)
    f->tokens = depth;
  f->tokens_us = now;
}

/* ---- applying and restoring ---- */

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

/* Restores @f's socket, gives its slot up and frees it.  g->local held; @f
 * unlinked.  Needs no segment lock. */
void
apply_release (Seg *g, BwssFlow *f)
{
  restore_socket (f, knob_fd_is (f->fd, f->inode));
  if (f->slot != NO_SLOT)
    segment_release_slot (g->s, f->slot, f->gen);
  free (f);
}

/* Applies the published windows (and read rates) to this process's
 * sockets, or restores them if no controller is alive.  g->local held. */
void
apply_windows (Seg *g, uint64_t now)
{
  const BwssParams *defaults = pacing_defaults ();
  Segment *s = g->s;
  bool alive = leader_alive (s, now);
  for (BwssFlow *f = g->flows; f; f = f->next) {
    if (!knob_fd_is (f->fd, f->inode)) {
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
      uint32_t buf = want > defaults->pace_rcvbuf_bytes ? want : defaults->pace_rcvbuf_bytes;
      if ((f->rcvbuf == 0 || buf > f->rcvbuf + f->rcvbuf / 4 || buf + buf / 4 < f->rcvbuf)
          && knob_set_rcvbuf (f->fd, buf) == 0)
        f->rcvbuf = buf;
      if (f->pace_bps == 0.0) {
        f->tokens = 0.0;                 /* pacing starts: no credit yet */
        f->tokens_us = now;
      } else {
        pacing_refill (f, now);           /* the credit so far, at the old rate */
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

/* ---- the owner's reads, paced at the published read rate ---- */

uint64_t
bwss_flow_read_wait_us (BwssFlow *f, size_t want)
{
  if (f == NULL || f->seg == NULL)
    return 0;
  Seg *g = f->seg;
  uint64_t wait = 0;
  pthread_mutex_lock (&g->local);
  if (f->pace_bps > 0.0) {
    pacing_refill (f, bwss__clock_now_us ());
    double need = f->mss ? (double) f->mss : pacing_defaults ()->default_mss;
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
    pacing_refill (f, bwss__clock_now_us ());
    f->tokens -= (double) n;
  }
  pthread_mutex_unlock (&g->local);
}

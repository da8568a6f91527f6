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
  const BwssParams *defaults = flows_defaults ();
  Segment *s = g->s;
  bool alive = leader_alive (s, now);
  for (BwssFlow *f = g->flows; f; f = f->next) {
    if (!knob_fd_is (f->fd, f->inode)) {
      /* the program closed the socket behind our back (or the fd now
       * names something else): never touch it again */
      restore_socket (f, false);
      continue;
    }
    const SegSlot *sl = flows_slot_is_ours (s, f) ? &s->slots[f->slot] : NULL;
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
        flows_refill (f, now);           /* the credit so far, at the old rate */
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

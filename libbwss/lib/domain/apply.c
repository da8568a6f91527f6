/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apply.c — the participant's side: the windows (and read rates) the
 * controller published, applied to this process's own sockets, and each
 * socket given back to the kernel when no controller lives or its flow
 * ends.
 *
 * Fail-open.  A participant applies a published window only while the
 * controller is alive (leader_alive(): its heartbeat not in the future and
 * at most FAILOPEN_US past the one it promised, its pid living with the
 * start time it published); otherwise it puts the clamp of each of its
 * sockets back to the value the kernel had before we touched it.  A crashed
 * or stopped controller never leaves a flow throttled for more than
 * FAILOPEN_US past its promised heartbeat plus one dispatch of the
 * participant: a controller that controls flows promises its next beat
 * within a control period, and a participant with flows dispatches every
 * control period.
 */
#include <stdlib.h>
#include "domain-private.h"

/* ---- read pacing: the token bucket of a paced flow ---- */

/* Brings @f's read credit up to @now: pace·elapsed, at most the bucket's
 * depth (the parameters the controller is built with, g->params).
 * g->local held. */
static void
pacing_refill (BwssFlow *f, uint64_t now)
{
  const BwssParams *p = &f->seg->params;
  double mss = f->mss ? f->mss : p->default_mss;
  double depth = p->pace_burst_segments * mss;
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

/* Returns true if @f's fd still names its socket, asking the kernel at
 * most once a round (*@known: asked already, the answer in *@valid); an
 * fd the program closed behind our back (or that now names something
 * else) is never written to again. */
static bool
still_ours (BwssFlow *f, bool *known, bool *valid)
{
  if (!*known) {
    *valid = knob_fd_is (f->fd, f->inode);
    *known = true;
    if (!*valid)
      restore_socket (f, false);
  }
  return *valid;
}

/* Applies the published windows (and read rates) to this process's
 * sockets, or restores them if no controller is alive.  The fd is checked
 * by inode before anything is written to it, not when nothing is: a round
 * that changes nothing costs one getsockopt per flow.  g->local held. */
void
apply_windows (Seg *g, uint64_t now)
{
  const BwssParams *p = &g->params;
  Segment *s = g->s;
  bool alive = leader_alive (s, now);
  for (BwssFlow *f = g->flows; f; f = f->next) {
    bool known = false, valid = false;
    const SegSlot *sl = slot_is_ours (s, f) ? &s->slots[f->slot] : NULL;
    uint32_t want = alive && sl && sl->controlled ? sl->window_bytes : 0;
    if (want == 0) {
      if ((f->applied || f->rcvbuf) && still_ours (f, &known, &valid))
        restore_socket (f, true);
      f->pace_bps = 0.0;
      continue;
    }
    /* re-assert too: receive-buffer autotuning may raise the clamp */
    uint32_t cur = 0;
    if (knob_get_clamp (f->fd, &cur) != 0) {
      restore_socket (f, false);         /* no longer a TCP socket: never touched again */
      continue;
    }
    if ((want != f->applied || cur != want) && still_ours (f, &known, &valid)
        && knob_set_clamp (f->fd, want) == 0)
      f->applied = want;
    if (known && !valid)
      continue;
    /* read pacing: a receive buffer the size of the window, so the sender
     * sends what is read (resized when the window moves by a quarter) */
    double pace = f->paced_reads && sl->read_rate_bps > 0.0 ? sl->read_rate_bps : 0.0;
    if (pace > 0.0) {
      uint32_t buf = want > p->pace_rcvbuf_bytes ? want : p->pace_rcvbuf_bytes;
      if ((f->rcvbuf == 0 || buf > f->rcvbuf + f->rcvbuf / 4 || buf + buf / 4 < f->rcvbuf)
          && still_ours (f, &known, &valid) && knob_set_rcvbuf (f->fd, buf) == 0)
        f->rcvbuf = buf;
      if (known && !valid)
        continue;
      if (f->pace_bps == 0.0) {
        f->tokens = 0.0;                 /* pacing starts: no credit yet */
        f->tokens_us = now;
      } else {
        pacing_refill (f, now);           /* the credit so far, at the old rate */
      }
      f->mss = sl->mss;
      f->pace_bps = pace;
    } else {
      if (f->rcvbuf && still_ours (f, &known, &valid))
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
    double need = f->mss ? (double) f->mss : g->params.default_mss;
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

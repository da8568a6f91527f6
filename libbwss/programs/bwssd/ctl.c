/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ctl.c — bwssd's controller (see ctl.h). */
#define BWSS_USE_UNSTABLE_API
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bwss/control.h>
#include "ctl.h"
#include "decision-line.h"
#include "sys.h"

/* A paced flow's owner is told its read rate again when it moves by more
 * than this fraction (or starts or ends): the bucket follows within it. */
#define PACE_TELL_FRACTION 0.05

/* While sharing is suspended no window is set and nothing is measured: a
 * round only lets bwssd find its flows' closed sockets (its check of every
 * held socket when the next round is far), so once a second, µs. */
#define CTL_SUSPENDED_ROUND_US 1000000

struct Ctl {
  CtlFuncs        funcs;
  BwssParams      params;      /* the laws' ($BWSS_LOOP), built once */
  BwssController *laws;        /* NULL until a flow comes, and while suspended */
  GHashTable     *flows;       /* id → CtlFlow (owned) */
  GHashTable     *inodes;      /* inode → CtlFlow */
  guint           n_released;  /* flows released, held until their owner removes them */
  guint64         next_id;
  gboolean        suspended;
  gboolean        debug;       /* $BWSS_DEBUG: the loop and every flow on stderr, once a second */
  guint64         next_debug_us;
  FILE           *decisions;   /* $BWSS_DECISIONS: the delay loop's every decision, a line each */
  guint64         decided_us;  /* ... the last one written */
  GArray         *ids;         /* a round's scratch: the laws' lists of flows */
  GArray         *reapply;     /* ids of flows whose window the next round sets again */
  GPtrArray      *todo;        /* a round's flows to apply */
  GPtrArray      *asked;       /* ... and those it fed the laws, in the laws' order */
  guint64         round;       /* rounds so far (CtlFlow.todo) */
};

static void
laws_params (BwssParams *p)
{
  BwssLoop loop = BWSS_LOOP_DELAY;
  const char *env = getenv ("BWSS_LOOP");
  if (env && *env && bwss_loop_parse (env, &loop) != 0) {
    g_printerr ("bwssd: BWSS_LOOP=%s is neither \"delay\" nor \"paper\"; running the delay loop\n", env);
    loop = BWSS_LOOP_DELAY;
  }
  bwss_params_init_for (p, loop);
}

Ctl *
ctl_new (const CtlFuncs *funcs)
{
  Ctl *c = g_new0 (Ctl, 1);
  c->funcs = *funcs;
  laws_params (&c->params);
  c->flows = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  c->inodes = g_hash_table_new (g_int64_hash, g_int64_equal);
  c->next_id = 1;
  c->debug = g_getenv ("BWSS_DEBUG") != NULL;
  const char *decisions = g_getenv ("BWSS_DECISIONS");
  if (decisions && *decisions) {
    c->decisions = fopen (decisions, "ae");
    if (c->decisions == NULL)
      g_printerr ("bwssd: BWSS_DECISIONS=%s: %s\n", decisions, g_strerror (errno));
  }
  c->ids = g_array_new (FALSE, FALSE, sizeof (guint64));
  c->reapply = g_array_new (FALSE, FALSE, sizeof (guint64));
  c->todo = g_ptr_array_new ();
  c->asked = g_ptr_array_new ();
  return c;
}

/* $BWSS_TRACE_FIRST (sys_trace_first()): a flow's admission and each clamp
 * set on a socket that had none, so a run can tell when a flow's first
 * clamp came. */
#define trace_first(...) sys_trace_first ("bwssd", __VA_ARGS__)

/* The laws, made when first needed.  NULL while suspended or out of memory. */
static BwssController *
laws (Ctl *c)
{
  if (c->laws == NULL && !c->suspended && bwss_controller_new (&c->params, &c->laws) != 0)
    c->laws = NULL;
  return c->laws;
}

/* Asks for a round within the control period (CtlFuncs.wake). */
static void
wake (Ctl *c)
{
  if (c->funcs.wake)
    c->funcs.wake (c->funcs.data);
}

/* Gives @f's socket back to the kernel: the clamp it came with, the
 * largest buffer if pacing fixed it; its owner reads freely.  The one
 * place that undoes what apply() does. */
static void
restore (Ctl *c, CtlFlow *f)
{
  if (f->rcvbuf && knob_fd_is (f->fd, f->diag.inode))
    knob_restore_rcvbuf (f->fd);
  if (f->applied && knob_fd_is (f->fd, f->diag.inode))
    knob_give_back_clamp (f->fd, f->orig_clamp, f->rcvbuf != 0);
  f->applied = 0;
  f->rcvbuf = 0;
  if (f->pace_sent > 0.0 && c->funcs.pace)
    c->funcs.pace (f, 0.0, c->funcs.data);
  f->pace_sent = 0.0;
}

/* Takes @f out of the laws (its socket given back). */
static void
release (Ctl *c, CtlFlow *f, guint64 now)
{
  if (c->laws && !f->released)
    bwss_controller_remove_flow (c->laws, f->id, now);
  restore (c, f);
  c->n_released += !f->released;
  f->released = TRUE;
  f->have_st = FALSE;
}

/* Puts @f into the laws with its preferences and group. */
static void
admit (Ctl *c, CtlFlow *f, guint64 now)
{
  BwssController *l = laws (c);
  if (l == NULL || bwss_controller_add_flow (l, f->id, &f->prefs, now) != 0)
    return;
  bwss_controller_set_group (l, f->id, f->group, now);
}

int
ctl_add (Ctl *c, int fd, const BwssPrefs *prefs, const char *origin, pid_t pid, pid_t participant,
         CtlFlow **out)
{
  KnobInfo diag;
  guint32 clamp;
  int err = 0;
  if (!knob_is_connected_tcp (fd) || knob_diag_id (fd, &diag) != 0 || knob_get_clamp (fd, &clamp) != 0)
    err = BWSS_EBADF;
  else if (bwss_prefs_check (prefs) != BWSS_OK)
    err = BWSS_EINVAL;
  else if (g_hash_table_contains (c->inodes, &diag.inode))
    err = BWSS_EEXIST;
  else if (g_hash_table_size (c->flows) >= BWSS_DOMAIN_MAX_FLOWS)
    err = BWSS_ENOSPC;
  if (err) {
    close (fd);
    return err;
  }
  CtlFlow *f = g_new0 (CtlFlow, 1);
  f->id = c->next_id++;
  f->fd = fd;
  f->diag = diag;
  f->orig_clamp = clamp;
  f->prefs = *prefs;
  f->pid = pid;
  f->key_pid = pid;
  f->participant = participant;
  f->late_fraction = f->required_prebuffer_s = -1.0;
  f->none_unread_at = G_MAXUINT64;
  g_strlcpy (f->origin, origin, sizeof f->origin);
  proc_comm (pid, f->comm, sizeof f->comm);
  knob_endpoints (fd, f->local, sizeof f->local, f->remote, sizeof f->remote);
  g_hash_table_insert (c->flows, &f->id, f);
  g_hash_table_insert (c->inodes, &f->diag.inode, f);
  admit (c, f, bwss__clock_now_us ());
  wake (c);
  trace_first ("admitted flow %" G_GUINT64_FORMAT " inode %" G_GUINT64_FORMAT " (%s, pid %d)",
               f->id, (guint64) f->diag.inode, origin, (int) pid);
  *out = f;
  return 0;
}

void
ctl_set_prefs (Ctl *c, CtlFlow *f, const BwssPrefs *prefs)
{
  if (bwss_prefs_check (prefs) != BWSS_OK)
    return;
  f->prefs = *prefs;
  if (c->laws && !f->released)
    bwss_controller_set_prefs (c->laws, f->id, prefs, bwss__clock_now_us ());
  wake (c);                              /* what it asks for now shows at once */
}

int
ctl_set_share (Ctl *c, CtlFlow *f, BwssShare share)
{
  guint64 key = 0, group = 0;
  if (share == BWSS_SHARE_PROCESS) {
    key = (guint64) f->key_pid;
  } else if (share == BWSS_SHARE_UNIT) {
    if (proc_cgroup_id (f->key_pid, &key) != 0 || key == 0 || key >> 62)
      return BWSS_ENOENT;
  } else if (share == BWSS_SHARE_STREAM) {
    if ((key = f->key_stream) == 0 || key >> 62)
      return BWSS_EINVAL;
  } else if (share != BWSS_SHARE_FLOW) {
    return BWSS_EINVAL;
  }
  if (key)
    group = (guint64) share << 62 | key;   /* a process, a unit and a stream never meet */
  f->share = share;
  if (group != f->group && c->laws && !f->released) {
    bwss_controller_set_group (c->laws, f->id, group, bwss__clock_now_us ());
    wake (c);
  }
  f->group = group;
  return 0;
}

/* The next round applies @f whether or not the laws move it. */
static void
reapply (Ctl *c, CtlFlow *f)
{
  if (!f->reapply)
    g_array_append_val (c->reapply, f->id);
  f->reapply = TRUE;
}

void
ctl_set_paced (Ctl *c, CtlFlow *f, gboolean paced)
{
  if (!paced && f->pace_sent > 0.0)
    restore (c, f);                      /* applied again at the next round */
  else if (paced)
    f->pace_sent = -1.0;                 /* its owner is told its rate at the next round */
  reapply (c, f);
  if (paced != f->paced)
    wake (c);
  f->paced = paced;
}

void
ctl_remove (Ctl *c, CtlFlow *f)
{
  release (c, f, bwss__clock_now_us ());
  c->n_released--;
  close (f->fd);
  g_hash_table_remove (c->inodes, &f->diag.inode);
  g_hash_table_remove (c->flows, &f->id);
}

void
ctl_free (Ctl *c)
{
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->flows);
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    CtlFlow *f = v;
    restore (c, f);
    close (f->fd);
  }
  g_hash_table_unref (c->inodes);
  g_hash_table_unref (c->flows);
  bwss_controller_free (c->laws);
  g_array_unref (c->ids);
  g_array_unref (c->reapply);
  g_ptr_array_unref (c->todo);
  g_ptr_array_unref (c->asked);
  if (c->decisions)
    fclose (c->decisions);
  g_free (c);
}

/* ---- a round ---- */

/* Fills c->ids with the laws' list of flows (@due: those the round at @now
 * measures; else those the last tick moved); returns how many. */
static guint
laws_list (Ctl *c, gboolean due, guint64 now)
{
  g_array_set_size (c->ids, g_hash_table_size (c->flows));   /* the laws hold no more */
  guint64 *ids = (guint64 *) (void *) c->ids->data;
  size_t n = due ? bwss_controller_due_flows (c->laws, now, ids, c->ids->len)
                 : bwss_controller_moved_flows (c->laws, ids, c->ids->len);
  return (guint) MIN (n, c->ids->len);
}

/* Adds @f, if it is one and in the laws, to this round's flows to apply. */
static void
todo (Ctl *c, CtlFlow *f)
{
  if (f && !f->released && f->todo != c->round) {
    f->todo = c->round;
    f->reapply = FALSE;
    g_ptr_array_add (c->todo, f);
  }
}

/* Whether @f's unread bytes must be asked for a measurement that reads
 * @bytes received and the laws' segment @segment (0: unknown): not when
 * no byte came since a measurement that found none unread (then none is:
 * reads only lower it), nor when bytes came since the last measurement and
 * fewer than a segment since one that found none unread — fewer than that
 * are unread, and the laws read such a count as none (bytes came, so the
 * flow carried data; less than a segment, so it is not backlogged,
 * bwss_controller_observe()).  A domain's thousand flows each get less
 * than a segment an estimation period on most links. */
static gboolean
unread_unknown (const CtlFlow *f, guint64 bytes, guint32 segment)
{
  guint64 zero = f->none_unread_at;
  if (zero == G_MAXUINT64 || bytes == 0 || bytes < zero)
    return TRUE;
  if (bytes == zero)
    return FALSE;
  return !(bytes != f->bytes && segment > 0 && bytes - zero < segment);
}

/* Measures @f (its own socket: TCP_INFO and SIOCINQ, what a sock_diag
 * answer would say; SIOCINQ only when the laws' reading of it is not
 * known, unread_unknown()) and feeds the laws; a socket no longer
 * established CTL_GONE_ROUNDS of its measurements in a row is released.
 * Returns TRUE if the laws took the sample. */
static gboolean
observe (Ctl *c, CtlFlow *f, guint64 now)
{
  KnobInfo k;
  f->ssthresh = 0;
  if (knob_read_sample (f->fd, &k) != 0)
    return FALSE;                        /* unmeasured this round */
  guint32 segment = bwss_sender_segment (k.mss, k.advmss);
  if (k.state == SYS_TCP_ESTABLISHED && unread_unknown (f, k.bytes_received, segment)) {
    if (knob_read_unread (f->fd, &k.unread) != 0)
      return FALSE;
    f->none_unread_at = k.unread == 0 ? k.bytes_received : G_MAXUINT64;
  }
  f->ssthresh = k.window_clamp;
  if (k.state != SYS_TCP_ESTABLISHED) {
    if (++f->gone >= CTL_GONE_ROUNDS)
      release (c, f, now);
    return FALSE;
  }
  f->gone = 0;
  BwssSample smp = { .now_us = now, .bytes_received = k.bytes_received, .rtt_us = k.rtt_us,
                     .mss = segment, .min_rtt_us = k.min_rtt_us, .can_pace = f->paced,
                     .unread_bytes = k.unread, .rcv_ooopack = k.rcv_ooopack };
  f->bytes = k.bytes_received;
  return bwss_controller_observe (c->laws, f->id, &smp) == BWSS_OK;
}

/* Sets @f's window and, if its reads are paced, its receive buffer and its
 * owner's read rate.  The clamp is set when the laws move the window, and
 * read back in a round that measured the flow (set again if it moved) when
 * the kernel may have moved it: autotuning raises it as the owner reads
 * more in an RTT than ever before (tcp_rcv_space_adjust()), a change of the
 * segments' overhead sets it from the buffer (tcp_measure_rcv_mss()).  The
 * kernel offers no window above tcpi_rcv_ssthresh, which never exceeds the
 * clamp, falls to a clamp set below it (tcp_set_window_clamp()) and grows
 * with each segment under a clamp raised (tcp_grow_window()): a measurement
 * that reads it at the window set finds that clamp in place, or a larger
 * one no segment has used yet (seen at the next).  A flow not measured this
 * round is one the laws do not ask about yet (bwss_controller_due_flows():
 * at rest, slack — its window carries twice what it moves — or waiting for
 * its slot of the rounds' gap): a clamp the kernel moved meanwhile is read
 * back at its next measurement. */
static void
apply (Ctl *c, CtlFlow *f)
{
  f->have_st = bwss_controller_flow_state (c->laws, f->id, &f->st) == 0;
  guint32 want = f->have_st ? f->st.window_bytes : 0;
  if (want == 0) {
    if (f->applied || f->rcvbuf)
      restore (c, f);
    return;
  }
  guint32 cur = want;
  if (want == f->applied && f->asked && f->ssthresh != want && knob_get_clamp (f->fd, &cur) != 0)
    return;
  if (want != f->applied || cur != want) {
    if (knob_set_clamp (f->fd, want) != 0) {
      reapply (c, f);                           /* tried again at the next round */
    } else {
      if (f->applied == 0)
        trace_first ("clamp %u bytes on flow %" G_GUINT64_FORMAT " (rtt %u us)", want, f->id,
                     f->st.rtt_us);
      f->applied = want;
    }
  }
  double pace = f->paced && f->st.read_rate_bps > 0.0 ? f->st.read_rate_bps : 0.0;
  if (pace > 0.0) {                      /* a buffer the size of the window: the sender sends what is read */
    guint32 buf = MAX (want, c->params.pace_rcvbuf_bytes);
    if ((f->rcvbuf == 0 || buf > f->rcvbuf + f->rcvbuf / 4 || buf + buf / 4 < f->rcvbuf)
        && knob_set_rcvbuf (f->fd, buf) == 0)
      f->rcvbuf = buf;
  } else if (f->rcvbuf) {
    knob_restore_rcvbuf (f->fd);
    f->rcvbuf = 0;
  }
  double d = pace - f->pace_sent;
  if ((pace == 0.0) != (f->pace_sent == 0.0) || d > PACE_TELL_FRACTION * f->pace_sent
      || -d > PACE_TELL_FRACTION * f->pace_sent) {
    f->pace_sent = pace;
    if (c->funcs.pace)
      c->funcs.pace (f, pace, c->funcs.data);
  }
}

/* @f's state in the laws now, if a round has applied it (a round refreshes
 * f->st only for the flows whose window may have moved). */
static gboolean
flow_state (const Ctl *c, const CtlFlow *f, BwssFlowState *st)
{
  return f->have_st && bwss_controller_flow_state (c->laws, f->id, st) == 0;
}

static void
debug_print (Ctl *c, guint64 now)
{
  if (!c->debug || now < c->next_debug_us || c->laws == NULL)
    return;
  c->next_debug_us = now + G_USEC_PER_SEC;
  BwssControllerStats st;
  bwss_controller_stats (c->laws, &st);
  g_printerr ("bwssd: loop %s phase %s sigma %.0f U %.0f queue %.0f/%.0f us flows %u\n",
              bwss_loop_name (st.loop), bwss_phase_name (st.phase), st.sigma_bps, st.aggregate_bps,
              st.queue_us, st.queue_target_us, st.n_flows);
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->flows);
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    CtlFlow *f = v;
    BwssFlowState st;
    if (flow_state (c, f, &st))
      g_printerr ("bwssd:   flow %" G_GUINT64_FORMAT " pid %d rate %.0f target %.0f window %u rtt %u\n",
                  f->id, (int) f->pid, st.rate_bps, st.target_bps, st.window_bytes, st.rtt_us);
  }
}

/* $BWSS_DECISIONS: a line for the delay loop's decision if it is new, and
 * one for each flow's state then, on the lab recorder's clock
 * (CLOCK_MONOTONIC; decision-line.h). */
static void
write_decision (Ctl *c)
{
  BwssDecision d;
  if (c->decisions == NULL || bwss_controller_last_decision (c->laws, &d) != 0 || d.at_us == 0
      || d.at_us == c->decided_us)
    return;
  c->decided_us = d.at_us;
  char line[512];
  size_t n = decision_line (line, sizeof line, &d, 0);
  if (n > 0)
    fwrite (line, 1, n, c->decisions);
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->flows);
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    CtlFlow *f = v;
    BwssFlowState st;
    if (!f->released && flow_state (c, f, &st)
        && (n = decision_flow_line (line, sizeof line, d.at_us, 0, f->id, &st)) > 0)
      fwrite (line, 1, n, c->decisions);
  }
  fflush (c->decisions);
}

guint64
ctl_round (Ctl *c, guint64 now)
{
  if (g_hash_table_size (c->flows) == 0)
    return 0;
  guint64 period = c->params.min_phi_us;
  if (c->suspended) {
    g_array_set_size (c->reapply, 0);    /* sharing resumed applies every flow */
    return CTL_SUSPENDED_ROUND_US;
  }
  if (laws (c) == NULL)
    return period;
  /* the flows the laws ask about are measured; those whose window may
   * have moved (measured, moved by the tick, or set again by bwssd) are
   * applied: a flow in neither costs the round nothing */
  c->round++;
  g_ptr_array_set_size (c->todo, 0);
  for (guint i = 0; i < c->reapply->len; i++)
    todo (c, g_hash_table_lookup (c->flows, &g_array_index (c->reapply, guint64, i)));
  g_array_set_size (c->reapply, 0);
  guint n = laws_list (c, TRUE, now);
  g_ptr_array_set_size (c->asked, 0);
  for (guint i = 0; i < n; i++) {
    CtlFlow *f = g_hash_table_lookup (c->flows, &g_array_index (c->ids, guint64, i));
    if (f && !f->released) {
      todo (c, f);
      f->asked = TRUE;
      if (observe (c, f, now))
        g_ptr_array_add (c->asked, f);
    }
  }
  bwss_controller_tick (c->laws, now);
  /* the moved list holds every flow the laws were fed (in their order, as
   * the due list): those come from c->asked, the others are looked up */
  n = laws_list (c, FALSE, 0);
  guint a = 0;
  for (guint i = 0; i < n; i++) {
    guint64 id = g_array_index (c->ids, guint64, i);
    CtlFlow *fed = a < c->asked->len ? g_ptr_array_index (c->asked, a) : NULL;
    if (fed && fed->id == id)
      a++;
    else
      fed = g_hash_table_lookup (c->flows, &id);
    todo (c, fed);
  }
  for (guint i = 0; i < c->todo->len; i++) {
    CtlFlow *f = g_ptr_array_index (c->todo, i);
    if (!f->released)
      apply (c, f);
    f->asked = FALSE;
  }
  debug_print (c, now);
  write_decision (c);
  /* as the laws ask: while flows move data, their estimation period in
   * whole control periods; while every flow is at rest, the round that
   * first finds one due (a round in between would measure nothing and the
   * laws' tick has nothing to act on); a flow that comes or changes asks
   * for a round (wake()) */
  return bwss_controller_next_round (c->laws, now + period) - now;
}

guint64
ctl_period (const Ctl *c)
{
  return c->params.min_phi_us;
}

void
ctl_set_suspended (Ctl *c, gboolean suspended)
{
  if (suspended == c->suspended)
    return;
  c->suspended = suspended;
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->flows);
  guint64 now = bwss__clock_now_us ();
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    CtlFlow *f = v;
    restore (c, f);
    f->have_st = FALSE;
    if (!suspended && !f->released)
      admit (c, f, now);
  }
  if (suspended)
    g_clear_pointer (&c->laws, bwss_controller_free);
  else
    wake (c);
}

/* ---- readers ---- */

guint
ctl_count (const Ctl *c)
{
  return g_hash_table_size (c->flows);
}

gboolean
ctl_holds_inode (const Ctl *c, guint64 inode)
{
  return g_hash_table_contains (c->inodes, &inode);
}

void
ctl_flow_stats (const Ctl *c, const CtlFlow *f, BwssFlowStats *out)
{
  BwssFlowState st;
  gboolean have = flow_state (c, f, &st), on = have && !c->suspended && !f->released;
  *out = (BwssFlowStats) {
    .prefs = f->prefs, .bytes_received = f->bytes,
    .rate_bps = have ? st.rate_bps : -1.0,
    .target_bps = on && st.window_bytes ? st.target_bps : -1.0,
    .window_bytes = on ? st.window_bytes : 0,
    .rtt_us = have ? st.rtt_us : 0, .base_rtt_us = have ? st.base_rtt_us : 0,
    .mss = have ? st.mss : 0, .controlled = on,
    .read_rate_bps = on && st.window_bytes && f->paced ? st.read_rate_bps : 0.0,
    .late_fraction = f->late_fraction, .required_prebuffer_s = f->required_prebuffer_s,
  };
}

void
ctl_stats (const Ctl *c, BwssDomainStats *out)
{
  /* counted, not listed: every client with flows asks for this as its sign of life */
  *out = (BwssDomainStats) { .controller_pid = getpid (), .phase = BWSS_PHASE_IDLE,
                             .n_flows = g_hash_table_size (c->flows) - c->n_released,
                             .suspended = c->suspended, .loop = c->params.loop, .queue_us = -1.0 };
  if (c->laws == NULL)
    return;
  BwssControllerStats st;
  bwss_controller_stats (c->laws, &st);
  out->phase = st.phase;
  out->sigma_bps = st.sigma_bps;
  out->aggregate_bps = st.aggregate_bps;
  out->loop = st.loop;
  out->queue_us = st.queue_us;
  out->queue_target_us = st.queue_target_us;
}

GPtrArray *
ctl_flows (const Ctl *c)
{
  GPtrArray *a = g_ptr_array_sized_new (g_hash_table_size (c->flows));
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->flows);
  while (g_hash_table_iter_next (&it, NULL, &v))
    if (!((CtlFlow *) v)->released)
      g_ptr_array_add (a, v);
  return a;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leader.c — the controller role: taking it (a POSIX record lock on the
 * segment's first byte, which the kernel drops when the process dies),
 * its heartbeat and how the others judge it, and the controller's round:
 * measure every flow with sock_diag, run the laws, publish a window per
 * slot.  The laws are controller.c; what a participant does with the
 * windows is apply.c.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "domain-private.h"
#include "sys.h"

/* ---- the role and its heartbeat ---- */

/* Returns true if the controller @s names is alive at @now: its heartbeat
 * not in the future, the next one it promised (beat_every_us after it, at
 * most IDLE_US: a promise read from shared memory is bounded) late by no
 * more than FAILOPEN_US, and its pid living with the start time it
 * published. */
bool
leader_alive (const Segment *s, uint64_t now)
{
  pid_t pid = s->controller_pid;
  uint64_t hb = s->heartbeat_us;
  uint64_t every = s->beat_every_us < IDLE_US ? s->beat_every_us : IDLE_US;
  if (pid <= 0 || hb > now + FUTURE_SLACK_US || now > hb + every + FAILOPEN_US)
    return false;
  return proc_alive (pid, s->controller_start);
}

/* The controller's mark of life, and when the next one is due (@every,
 * µs).  s locked. */
static void
heartbeat (Seg *g, Segment *s, uint64_t now, uint64_t every)
{
  s->controller_pid = getpid ();
  s->controller_start = g->starttime;
  s->heartbeat_us = now;
  s->beat_every_us = (uint32_t) every;
}

/* Frees the laws' state and what they knew of the slots. */
static void
drop_laws (Seg *g)
{
  bwss_controller_free (g->ctl);
  g->ctl = NULL;
  memset (g->ctl_gen, 0, sizeof g->ctl_gen);
  g->ctl_hwm = 0;
  g->want.n = 0;                         /* no flow known, none measured */
  g->due.n = 0;
  memset (g->asked, 0, sizeof g->asked);
}

/* Forgets the controller state (a new segment, or the role lost). */
void
leader_reset (Seg *g)
{
  g->controller = false;
  drop_laws (g);
  memset (g->ctl_serial, 0, sizeof g->ctl_serial);
  memset (g->gone, 0, sizeof g->gone);
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
  if (leader_alive (g->s, now))
    g->role_stuck_since = 0;
  else if (g->role_stuck_since == 0)
    g->role_stuck_since = now;
}

/* If @g may control and does not: takes the role if it is free, else
 * watches its holder.  g->local held. */
void
leader_elect (Seg *g, uint64_t now)
{
  if (!g->may_control || g->controller)
    return;
  if (try_take_control (g)) {
    leader_reset (g);
    g->controller = true;
    g->role_stuck_since = 0;
  } else {
    watch_role (g, now);
  }
}

/* Clears the pid @g published if it is the controller, so that nobody
 * waits for its heartbeat to go stale.  g->local held. */
void
leader_resign (Seg *g)
{
  if (g->controller) {                   /* no controller from now on: no need to wait a second */
    int32_t me = (int32_t) getpid ();
    __atomic_compare_exchange_n (&g->s->controller_pid, &me, 0, false, __ATOMIC_ACQ_REL,
                                 __ATOMIC_ACQUIRE);
  }
}

/* ---- a controller round ---- */

/* Returns the controller's id for the flow in @slot at generation @gen. */
static uint64_t
flow_id (uint32_t slot, uint32_t gen)
{
  return (uint64_t) gen << 32 | slot;
}

/* Fills @p with the controller's parameters: the delay loop, or the one
 * $BWSS_LOOP names.  An unknown name is reported once and ignored.  Called
 * once per process and domain (bwss_domain_open()). */
void
leader_params (BwssParams *p)
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
  if (g->ctl)
    drop_laws (g);
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

/* Builds g->want again from the slots of the flows the controller knows:
 * each socket as its participant named it (inode, family, id).  s locked. */
static void
build_want (Seg *g, const Segment *s)
{
  g->want.n = 0;
  for (uint32_t i = 0; i < g->ctl_hwm; i++) {
    const SegSlot *sl = &s->slots[i];
    if (g->ctl_gen[i] == 0 || sl->state != SLOT_ACTIVE || g->ctl_gen[i] != sl->gen
        || (sl->diag_family != AF_INET && sl->diag_family != AF_INET6))
      continue;
    KnobInfo k = { .inode = sl->inode, .family = (uint8_t) sl->diag_family, .id = sl->diag_id };
    g->want_slot[g->want.n] = i;
    if (knob_dump_push (&g->want, &k) != 0)
      break;                             /* out of memory: the rest go unmeasured */
  }
  g->want_stale = false;
}

/* Measures the sockets of the flows the controller knows and the laws
 * ask about by the round at @now (bwss_controller_next_measure(): a quiet
 * flow less often) into g->dump: one exact query each, by the id the
 * participant wrote (the answer must carry the same inode: a forged id
 * measures nothing).  g->asked marks the slots asked about.  Returns false
 * if the kernel did not answer.  Not under the segment lock. */
static bool
measure (Seg *g, uint64_t now)
{
  memset (g->asked, 0, sizeof g->asked);
  g->due.n = 0;
  for (size_t j = 0; j < g->want.n; j++) {
    uint32_t i = g->want_slot[j];
    if (g->ctl && g->ctl_gen[i]
        && bwss_controller_next_measure (g->ctl, flow_id (i, g->ctl_gen[i])) > now + g->params.min_phi_us / 2)
      continue;                          /* not due by this round */
    if (knob_dump_push (&g->due, &g->want.items[j]) != 0)
      break;                             /* out of memory: the rest go unmeasured */
    g->asked[i] = 1;
  }
  return knob_query (&g->due, &g->dump) == 0;
}

/* Passes slot @i's group to the controller.  The slot's share is read here
 * from memory every participant writes: one it does not check out
 * (segment_slot_group()) leaves the flow alone.  s locked. */
static void
sync_group (Seg *g, const SegSlot *sl, uint32_t i, uint64_t now)
{
  uint64_t group = 0;
  if (segment_slot_group (sl, &group) != BWSS_OK)
    group = 0;
  bwss_controller_set_group (g->ctl, flow_id (i, sl->gen), group, now);
}

/* Brings the controller's flow of slot @i in line with the slot: a flow
 * whose slot was freed or reused is removed, a new one added, changed
 * preferences passed on.  Returns true if slot @i holds a flow the
 * controller knows.  s locked. */
static bool
sync_slot (Seg *g, SegSlot *sl, uint32_t i, uint64_t now)
{
  bool active = sl->state == SLOT_ACTIVE;
  if (g->ctl_gen[i] && (!active || g->ctl_gen[i] != sl->gen)) {
    bwss_controller_remove_flow (g->ctl, flow_id (i, g->ctl_gen[i]), now);
    g->ctl_gen[i] = 0;
    g->want_stale = true;
  }
  if (!active)
    return false;
  if (g->ctl_gen[i] == 0) {
    if (bwss_controller_add_flow (g->ctl, flow_id (i, sl->gen), &sl->prefs, now) != 0)
      return false;
    g->ctl_gen[i] = sl->gen;
    g->ctl_serial[i] = sl->prefs_serial;
    g->gone[i] = 0;
    sync_group (g, sl, i, now);
    g->want_stale = true;
    return false;                        /* measured from the next round on */
  } else if (g->ctl_serial[i] != sl->prefs_serial) {
    bwss_controller_set_prefs (g->ctl, flow_id (i, sl->gen), &sl->prefs, now);
    g->ctl_serial[i] = sl->prefs_serial;
    sync_group (g, sl, i, now);
  }
  return true;
}

/* Feeds the controller this round's measurement of slot @i's socket.  A
 * socket the kernel no longer lists as established for GONE_DUMPS rounds in
 * a row is closed: its flow goes and its slot is freed.  s locked. */
static void
observe_slot (Seg *g, Segment *s, SegSlot *sl, uint32_t i, bool have_dump, uint64_t now)
{
  if (!g->asked[i])
    return;                              /* not due: the laws did not ask */
  const KnobInfo *k = have_dump ? knob_dump_find (&g->dump, sl->inode) : NULL;
  if (have_dump && (k == NULL || k->state != SYS_TCP_ESTABLISHED)) {
    if (++g->gone[i] >= GONE_DUMPS) {
      bwss_controller_remove_flow (g->ctl, flow_id (i, sl->gen), now);
      g->ctl_gen[i] = 0;
      g->want_stale = true;
      segment_free_slot (s, i);
    }
    return;
  }
  g->gone[i] = 0;
  if (k == NULL)
    return;
  BwssSample smp = { .now_us = now, .bytes_received = k->bytes_received,
                     .rtt_us = k->rtt_us, .mss = k->mss, .min_rtt_us = k->min_rtt_us,
                     .can_pace = (sl->flags & SLOT_PACED_READS) != 0,
                     .unread_bytes = k->unread, .rcv_ooopack = k->rcv_ooopack };
  bwss_controller_observe (g->ctl, flow_id (i, sl->gen), &smp);
  sl->bytes_received = k->bytes_received;
}

/* Every slot: synced with the controller, then observed.  Lowers the
 * controller's high-water mark past the slots it no longer knows.  s locked. */
static void
observe_slots (Seg *g, Segment *s, bool have_dump, uint64_t now)
{
  uint32_t end = s->slot_hwm > g->ctl_hwm ? s->slot_hwm : g->ctl_hwm;
  for (uint32_t i = 0; i < end; i++) {
    SegSlot *sl = &s->slots[i];
    if (sync_slot (g, sl, i, now))
      observe_slot (g, s, sl, i, have_dump, now);
  }
  while (end > 0 && g->ctl_gen[end - 1] == 0)
    end--;
  g->ctl_hwm = end;
  if (g->want_stale)
    build_want (g, s);
}

/* Writes the controller's decision for each flow into its slot.  s locked. */
static void
publish_flows (Seg *g, Segment *s)
{
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
}

/* Writes the domain-wide figures of @st into the segment.  s locked. */
static void
publish_domain (Segment *s, const BwssControllerStats *st)
{
  s->phase = st->phase;
  s->sigma_bps = st->sigma_bps;
  s->aggregate_bps = st->aggregate_bps;
  s->loop = st->loop;
  s->queue_us = st->queue_us;
  s->queue_target_us = st->queue_target_us;
}

/* $BWSS_DEBUG: the loop and every flow on stderr, once a second. */
static void
debug_print (Seg *g, const Segment *s, const BwssControllerStats *st, uint64_t now)
{
  if (!g->debug || now < g->next_debug_us)
    return;
  g->next_debug_us = now + 1000000;
  fprintf (stderr, "bwss[%d]: loop %s phase %s sigma %.0f U %.0f queue %.0f/%.0f us flows %u\n",
           (int) getpid (), bwss_loop_name (st->loop), bwss_phase_name (st->phase), st->sigma_bps,
           st->aggregate_bps, st->queue_us, st->queue_target_us, st->n_flows);
  for (uint32_t i = 0; i < s->slot_hwm; i++)
    if (s->slots[i].state == SLOT_ACTIVE)
      fprintf (stderr, "bwss[%d]:   slot %u pid %d rate %.0f target %.0f window %u rtt %u mss %u bytes %llu\n",
               (int) getpid (), i, s->slots[i].pid, s->slots[i].rate_bps, s->slots[i].target_bps,
               s->slots[i].window_bytes, s->slots[i].rtt_us, s->slots[i].mss,
               (unsigned long long) s->slots[i].bytes_received);
}

/* One controller round: measure the sockets (outside the lock), then under
 * it sync and observe the slots, run the laws, publish, beat.  Returns
 * true if the domain has flows (the next round is due in a control period,
 * else in IDLE_US).  g->local held. */
bool
leader_round (Seg *g, uint64_t now)
{
  Segment *s = g->s;
  bool have_dump = measure (g, now);

  if (seg_lock (g, LOCK_WAIT_US) != 0)
    return true;                         /* busy: try again at the next period */
  segment_sweep (s);
  if (s->suspended || (g->ctl == NULL && bwss_controller_new (&g->params, &g->ctl) != 0)) {
    suspend (g, s);
  } else {
    observe_slots (g, s, have_dump, now);
    bwss_controller_tick (g->ctl, now);
    BwssControllerStats st;
    bwss_controller_stats (g->ctl, &st);
    publish_flows (g, s);
    debug_print (g, s, &st, now);
    publish_domain (s, &st);
  }
  bool busy = s->n_flows > 0;
  heartbeat (g, s, now, busy ? g->params.min_phi_us : IDLE_US);
  seg_unlock (s);
  return busy;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain-private.h — what the files of the per-user domain (domain.c says
 * which does what) share: a process's mapping of the segment (Seg), its
 * flows (BwssFlow), the domain's tunables, and the functions one file
 * offers the others.  Internal to libbwss.
 */
#ifndef BWSS_DOMAIN_PRIVATE_H
#define BWSS_DOMAIN_PRIVATE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <bwss/control.h>
#include <bwss/domain.h>
#include "sys.h"
#include "segment.h"

/* Control period and idling.  While the domain has flows, a controller
 * runs a round and a participant with flows applies its windows once per
 * control period: the laws' tick, min_phi_us of the controller's parameters
 * (params.c owns the value, 10 ms).  With no flow there is nothing to
 * measure or apply: a process dispatches once per IDLE_US, on whole
 * multiples of it on CLOCK_MONOTONIC so that the idle processes of a domain
 * (and bwssd's scan) wake together; a flow registered meanwhile wakes the
 * dispatch at once (the domain's wake fd, bwss_domain_get_fd()). */
#define IDLE_US           1000000ull
/* A controller counts as dead FAILOPEN_US after the heartbeat it promised:
 * its last heartbeat plus the period it published with it (the control
 * period while it controls flows, IDLE_US while it has none: with no flow
 * there is nothing to fail open).  With flows, 100 control periods: a
 * controller process that is merely busy for a second loses nothing but a
 * second of control. */
#define FAILOPEN_US       1000000ull
/* A heartbeat further in the future than this is forged or on another
 * clock (a reader's clock sample may predate the writer's by a round). */
#define FUTURE_SLACK_US   100000ull
/* Slots whose socket sock_diag no longer lists, this many of its
 * measurements in a row (every round, or a quiet flow's fewer), are freed
 * (an answer can race a connection that is just being set up). */
#define GONE_DUMPS        3
/* The controller asks the kernel about each flow's socket by the id its
 * participant wrote into the slot (knob_query(): exact lookups, 64 to a
 * message), never with a dump of every socket of the namespace: a dump
 * walks the kernel's whole connection table whatever it finds (about a
 * millisecond a family on a 256k-bucket table; docs/testing.md). */
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
  KnobInfo    diag;          /* how sock_diag names the socket (knob_diag_id()) */
  char        comm[16];      /* of the socket's owner */
  char        local[64];
  char        remote[64];
  char        origin[BWSS_ORIGIN_MAX];
  pid_t       owner_pid;     /* 0: this process's own socket */
  BwssShare   share;         /* its group (bwss_flow_set_share) ... */
  uint64_t    share_key;     /* ... and the key the slot carries (segment.h) */
  BwssFlow   *next;
};

/* One mapping per process and domain name, shared by its handles: POSIX
 * record locks belong to the process, so a second fd on the same file would
 * drop the controller lock when closed. */
struct Seg {
  char            path[PATH_MAX]; /* the segment's: bwss_domain_path (name, "") */
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
  BwssParams      params;         /* the laws' parameters, built once at open ($BWSS_LOOP) */
  BwssController *ctl;
  KnobDump        dump;           /* the round's measurement, inode order */
  KnobDump        want;           /* the sockets of the flows the controller knows */
  uint32_t        want_slot[SEG_MAX_FLOWS];  /* ... the slot of each */
  bool            want_stale;     /* a flow came or went: want is built again */
  KnobDump        due;            /* the round's part of want: the flows the laws ask about */
  uint8_t         asked[SEG_MAX_FLOWS];      /* per slot: in this round's due */
  uint32_t        ctl_gen[SEG_MAX_FLOWS];    /* gen the controller knows per slot */
  uint32_t        ctl_serial[SEG_MAX_FLOWS]; /* prefs serial it knows */
  uint8_t         gone[SEG_MAX_FLOWS];
  uint32_t        ctl_hwm;                   /* ctl_gen[] is 0 from here on */
  uint64_t        lock_stuck_since;  /* first of the lock attempts failing since, 0 = none */
  uint64_t        role_stuck_since;  /* since when the role's holder does not beat */
  uint64_t        next_judge_us;
  uint64_t        next_follow_us;
  int             wake_fd;        /* an eventfd: readable when a dispatch is due at once */
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

/* Returns true if @f's slot in @s is still the one it claimed (not
 * reclaimed, not reused). */
static inline bool
slot_is_ours (const Segment *s, const BwssFlow *f)
{
  return f->slot != NO_SLOT && s->slots[f->slot].state == SLOT_ACTIVE
         && s->slots[f->slot].gen == f->gen;
}

/* Makes @g's wake fd readable: a dispatch is due at once (a flow to
 * publish, the dispatch thread to stop).  Any thread. */
static inline void
seg_wake (Seg *g)
{
  if (g->wake_fd >= 0)
    eventfd_write (g->wake_fd, 1);
}

/* ---- domain-seg.c: the segment lock, following, recovery ---- */

/* Returns @g's segment as segment.c knows it. */
SegFile  seg_file (const Seg *g);
/* Takes the segment lock, waiting at most @wait_us.  Returns 0 (held) or
 * BWSS_EBUSY.  g->local held. */
int      seg_lock (Seg *g, uint64_t wait_us);
void     seg_unlock (Segment *s);
/* Maps the segment the domain's name names now, if it moved.  Returns true
 * if @g maps another segment now: the caller forgets the controller state
 * (domain.c; the segment layer knows nothing of the controller).  g->local
 * held. */
bool     seg_follow (Seg *g, uint64_t now);
/* Returns how long the domain has been stuck as seen from @g, µs. */
uint64_t seg_stuck_for (const Seg *g, uint64_t now);
/* Moves a stuck domain to a fresh segment (or follows whoever moved it).
 * Returns true like seg_follow.  g->local held. */
bool     seg_recover (Seg *g, uint64_t now);

/* ---- flows.c: the flow registry ---- */

/* Returns true if some flow of @g waits to be written into the segment. */
bool flows_pending (const Seg *g);
/* Writes what registrations and preference changes could not write
 * before.  s locked. */
void flows_publish (Seg *g);

/* ---- apply.c: the participant's side ---- */

/* Applies the published windows to this process's sockets, or restores
 * them if no controller is alive.  g->local held. */
void apply_windows (Seg *g, uint64_t now);
/* Restores @f's socket, gives its slot up and frees it.  g->local held; @f
 * unlinked. */
void apply_release (Seg *g, BwssFlow *f);

/* ---- leader.c: the controller role ---- */

/* Fills @p with the parameters of the laws: the delay loop, or the one
 * $BWSS_LOOP names (an unknown name reported once). */
void leader_params (BwssParams *p);
/* Returns true if the controller @s names is alive at @now. */
bool leader_alive (const Segment *s, uint64_t now);
/* Takes the controller role if @g may and it is free.  g->local held. */
void leader_elect (Seg *g, uint64_t now);
/* One controller round: measure, run the laws, publish.  Returns true if
 * the domain has flows.  g->local held. */
bool leader_round (Seg *g, uint64_t now);
/* Forgets the controller state (a new segment, or the role lost). */
void leader_reset (Seg *g);
/* Tells the domain at once that @g's controller is gone.  g->local held. */
void leader_resign (Seg *g);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * segment.h — layout of the per-user domain segment (<name> in the user's
 * runtime directory, runtime.c; mode 0600) and the functions of segment.c that create, validate, repair and
 * lock it.  Internal to libbwss; the layout version changes whenever the
 * layout does.
 *
 * Every participating process maps it.  Participants write their flows'
 * slots (who, which socket, preferences); the one controller writes back a
 * decision per slot and a heartbeat.  A process-shared robust mutex guards
 * it, taken only within a bound (see segment_lock()); a slot's owner may
 * also give it up without the lock (SLOT_RELEASED, a compare-and-swap).
 */
#ifndef BWSS_SEGMENT_H
#define BWSS_SEGMENT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/inet_diag.h>
#include <bwss/control.h>
#include <bwss/domain.h>

#define SEG_MAGIC     UINT64_C (0x314d4f4453535742) /* "BWSSDOM1" */
#define SEG_VERSION   8u        /* 2: `suspended`; 3: loop, queue, base RTT;
                                 * 4: controller_start, SLOT_RELEASED;
                                 * 5: read pacing (flags, read_rate_bps);
                                 * 6: origin, owner_pid (adopted flows),
                                 *    10240 slots, slot_hwm;
                                 * 7: beat_every_us (the heartbeat's promise),
                                 *    diag_family, diag_id (exact queries);
                                 * 8: share, share_key (groups) */
#define SEG_MAX_FLOWS ((uint32_t) BWSS_DOMAIN_MAX_FLOWS)

enum {
  SLOT_FREE = 0,
  SLOT_ACTIVE = 1,
  SLOT_RELEASED = 2,         /* its owner let it go; the next lock holder frees it */
};

#define SLOT_PACED_READS 1u    /* SegSlot.flags: the owner can pace the flow's reads */

typedef struct {
  union {                    /* one word, so a release is a single compare-and-swap */
    struct {
      uint32_t state;        /* SLOT_FREE / SLOT_ACTIVE / SLOT_RELEASED */
      uint32_t gen;          /* bumped on every (re)use */
    };
    uint64_t state_gen;
  };
  int32_t   pid;
  int32_t   fd;              /* in the owner's fd table */
  uint64_t  starttime;       /* of pid (proc(5) field 22): detects pid reuse */
  uint64_t  inode;           /* of the socket: the key for sock_diag */
  char      comm[16];        /* of the socket's owner (owner_pid if set) */
  char      local[64];
  char      remote[64];
  char      origin[BWSS_ORIGIN_MAX]; /* how the flow got in: "registered", "shim", "rule NAME" */
  int32_t   owner_pid;       /* the process whose socket pid holds a duplicate of; 0 = pid's own */
  BwssPrefs prefs;
  uint32_t  prefs_serial;    /* bumped by every preference change */
  uint32_t  flags;           /* SLOT_PACED_READS: the owner paces its reads */
  uint32_t  diag_family;     /* AF_INET or AF_INET6: what sock_diag asks about it by ... */
  struct inet_diag_sockid diag_id; /* ... its addresses, ports, interface and cookie */
  uint32_t  share;           /* BwssShare: whose flows share this one's share */
  uint32_t  pad;
  uint64_t  share_key;       /* FLOW: 0; PROCESS: the socket owner's pid; UNIT: its
                              * cgroup's inode (the controller checks: slot_group()) */
  /* written by the controller */
  uint32_t  controlled;      /* 1: window_bytes is a decision for this slot */
  uint32_t  window_bytes;    /* 0 = kernel default */
  uint32_t  rtt_us;
  uint32_t  mss;
  uint32_t  base_rtt_us;     /* delay loop: the flow's base RTT, 0 unknown */
  double    target_bps;      /* negative while released */
  double    rate_bps;
  double    read_rate_bps;   /* the owner reads at this rate, bit/s; 0 = freely */
  uint64_t  bytes_received;
} SegSlot;

typedef struct {
  uint64_t        magic;           /* a segment is complete before it has a name */
  uint32_t        version;
  uint32_t        header_size;
  uint32_t        slot_size;
  uint32_t        max_flows;
  uint32_t        owner_uid;
  uint32_t        slot_hwm;        /* every slot from here on is FREE (loops stop here) */
  pthread_mutex_t lock;            /* robust, process-shared */
  /* written by the controller */
  int32_t         controller_pid;
  uint32_t        phase;
  uint64_t        heartbeat_us;    /* CLOCK_MONOTONIC of its last tick */
  uint64_t        controller_start; /* start time of controller_pid (proc(5) field 22) */
  double          sigma_bps;
  double          aggregate_bps;
  uint32_t        n_flows;         /* slots ACTIVE or RELEASED */
  uint32_t        suspended;       /* 1: sharing switched off (any participant) */
  uint32_t        loop;            /* BwssLoop the controller runs */
  uint32_t        beat_every_us;   /* its next heartbeat is due this long after the last,
                                    * µs: the control period, or IDLE_US with no flow */
  double          queue_us;        /* delay loop: the link's queueing delay, -1 unknown */
  double          queue_target_us; /* ... and its target */
  SegSlot         slots[SEG_MAX_FLOWS];
} Segment;

/* A segment mapped by this process. */
typedef struct {
  int      fd;                     /* its first byte carries the controller's record lock */
  Segment *s;
  dev_t    dev;
  ino_t    ino;
} SegFile;

/* Maps the segment at @path into *out.  A complete segment is validated
 * (refused and left untouched: BWSS_EPERM, BWSS_EVERSION, BWSS_EPROTO).  A
 * missing one is created if @create, atomically: it gets its name only
 * once complete (copying `suspended` from @carry if not NULL).  An
 * unfinished one (empty, or full size without magic: a creator of an older
 * version died) is waited for up to @wait_us, then replaced if @create or
 * reported missing (BWSS_ENOENT) otherwise.  Returns 0 or a BWSS_E code. */
int  segment_open (const char *path, bool create, uint64_t wait_us, const Segment *carry,
                   SegFile *out);
void segment_close (SegFile *f);

/* Returns true if @path names the file @f maps (false if it is gone or
 * replaced). */
bool segment_is_current (const SegFile *f, const char *path);

/* Puts a fresh segment at @path in place of @f's file (copying its
 * `suspended` flag), atomically and only if @path still names @f's file,
 * under a lock that serialises every process doing so.  Returns 0 with
 * *out the new segment, BWSS_EBUSY if another process replaced it or is at
 * it, or another BWSS_E code. */
int  segment_replace_if_current (const SegFile *f, const char *path, SegFile *out);

/* Fills @s as a new, empty, valid segment (its robust process-shared lock
 * initialised; `suspended` copied from @carry if not NULL), magic last. */
void segment_init (Segment *s, const Segment *carry);

/* Checks every field a reader relies on, the lock's type included; a slot
 * that changes while it is being checked is someone's write in progress,
 * not corruption.  Returns 0 or a BWSS_E code. */
int  segment_validate (const Segment *s);

/* Checks slot @sl's share (a share known, its key what it must be) and, if
 * @group is not NULL, sets it to the controller's group key: 0 for a flow
 * alone, else the share in the top two bits and the key below, so a
 * process and a unit never meet.  Returns 0 or BWSS_EPROTO. */
int  segment_slot_group (const SegSlot *sl, uint64_t *group);

/* Who holds the lock, as far as /proc tells (for messages). */
typedef struct {
  pid_t tid;                       /* 0 if unknown */
  char  state;                     /* proc(5) state letter; 'T' stopped */
} SegHolder;

/* Takes the lock, waiting at most @wait_us (0: only if free).  A last
 * holder that died is detected (the robust mutex's EOWNERDEAD) and the
 * table repaired (segment_sweep()).  If @judge, a holder that cannot hold
 * it (a dead task the kernel did not mark, another user's task, a task that
 * does not map this file, a thread of this process, none at all) is marked
 * dead the way the kernel would and the lock taken.  Returns 0 (held),
 * BWSS_EBUSY (a live holder; *holder says which) or BWSS_EPROTO (the lock
 * can never be taken again). */
int  segment_lock (const SegFile *f, uint64_t wait_us, bool judge, SegHolder *holder);
void segment_unlock (Segment *s);

/* Frees the slots of dead processes and RELEASED slots.  Lock held.  Asks
 * /proc about each process once per sweep, not once per slot. */
void segment_sweep (Segment *s);
/* Frees slot @i (slot_hwm follows).  Lock held. */
void segment_free_slot (Segment *s, uint32_t i);
/* Publishes slot @i, filled by the caller, as ACTIVE with generation @gen.
 * Lock held. */
void segment_activate_slot (Segment *s, uint32_t i, uint32_t gen);
/* Marks slot @i RELEASED if it is still ACTIVE with generation @gen: no
 * lock needed.  Returns true if it did. */
bool segment_release_slot (Segment *s, uint32_t i, uint32_t gen);

#endif

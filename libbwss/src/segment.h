/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * segment.h — layout of the per-user domain segment (POSIX shared memory,
 * mode 0600).  Internal to libbwss; the layout version changes whenever this
 * file does.
 *
 * Every participating process maps it.  Participants write their flows'
 * slots (who, which socket, preferences); the one controller writes back a
 * decision per slot and a heartbeat.  A process-shared robust mutex guards
 * it: a participant killed while holding it is detected (EOWNERDEAD) and the
 * next locker repairs the table.
 */
#ifndef BWSS_SEGMENT_H
#define BWSS_SEGMENT_H

#include <pthread.h>
#include <stdint.h>
#include <bwss/control.h>

#define SEG_MAGIC     UINT64_C (0x314d4f4453535742) /* "BWSSDOM1" */
#define SEG_VERSION   3u        /* 2: `suspended`; 3: loop, queue, base RTT */
#define SEG_MAX_FLOWS 256u

enum { SLOT_FREE = 0, SLOT_ACTIVE = 1 };

typedef struct {
  uint32_t  state;           /* SLOT_FREE / SLOT_ACTIVE */
  uint32_t  gen;             /* bumped on every (re)use */
  int32_t   pid;
  int32_t   fd;              /* in the owner's fd table */
  uint64_t  starttime;       /* of pid (proc(5) field 22): detects pid reuse */
  uint64_t  inode;           /* of the socket: the key for sock_diag */
  char      comm[16];
  char      local[64];
  char      remote[64];
  BwssPrefs prefs;
  uint32_t  prefs_serial;    /* bumped by every preference change */
  /* written by the controller */
  uint32_t  controlled;      /* 1: window_bytes is a decision for this slot */
  uint32_t  window_bytes;    /* 0 = kernel default */
  uint32_t  rtt_us;
  uint32_t  mss;
  uint32_t  base_rtt_us;     /* delay loop: the flow's base RTT, 0 unknown */
  double    target_bps;      /* negative while released */
  double    rate_bps;
  uint64_t  bytes_received;
} SegSlot;

typedef struct {
  uint64_t        magic;           /* written last at creation */
  uint32_t        version;
  uint32_t        header_size;
  uint32_t        slot_size;
  uint32_t        max_flows;
  uint32_t        owner_uid;
  uint32_t        pad;
  pthread_mutex_t lock;            /* robust, process-shared */
  /* written by the controller */
  int32_t         controller_pid;
  uint32_t        phase;
  uint64_t        heartbeat_us;    /* CLOCK_MONOTONIC of its last tick */
  double          sigma_bps;
  double          aggregate_bps;
  uint32_t        n_flows;
  uint32_t        suspended;       /* 1: sharing switched off (any participant) */
  uint32_t        loop;            /* BwssLoop the controller runs */
  uint32_t        pad2;
  double          queue_us;        /* delay loop: the link's queueing delay, -1 unknown */
  double          queue_target_us; /* ... and its target */
  SegSlot         slots[SEG_MAX_FLOWS];
} Segment;

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos.h — what every downloading participant of the chaos test publishes
 * about itself, in a file every process maps (one record each).  Written by
 * the participant, read by the driver; each field is one aligned word.
 */
#ifndef BWSS_CHAOS_H
#define BWSS_CHAOS_H

#include <stdint.h>

#define CHAOS_MAX_PARTICIPANTS 16
/* Segment size of the test's connections, both ways: Ethernet's.  Loopback's
 * own (its MTU is 64 KiB) makes the kernel report a receive MSS below the
 * segments the sender really uses, and a window of "one segment" then
 * stalls the sender in zero-window probing for seconds (see
 * docs/hardening.md): a knob matter, not what this suite is about. */
#define CHAOS_MSS 1448

typedef struct {
  int32_t  pid;            /* the process that owns the socket */
  uint32_t port;           /* local port of its connection now, 0 between two */
  uint64_t last_read_us;   /* CLOCK_MONOTONIC of its last read that brought data */
  uint64_t bytes;          /* received in all */
  uint64_t downloads;      /* finished */
  uint32_t orig_clamp;     /* TCP_WINDOW_CLAMP before anything touched the socket */
  uint32_t clamp;          /* TCP_WINDOW_CLAMP at its last read */
} ChaosStatus;

#endif

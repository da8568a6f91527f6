/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-segment.c — the domain segment validator (segment_validate()) on
 * segments patched at random, against an independent oracle: whatever it
 * accepts must satisfy every invariant a reader of the segment relies on.
 *
 * Input: one byte choosing the base image (0: a valid empty segment, 1: a
 * valid one with active and released flows and a controller, 2: all zero,
 * as an unfinished file), then patches "offset (2 bytes, little endian,
 * modulo the segment's size), length (1 byte), bytes".  The image is a heap
 * block of exactly sizeof (Segment), so any read beyond it is caught by
 * AddressSanitizer in the sanitizer build.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "segment.h"

const char fuzz_target_name[] = "segment";

static Segment bases[3];

static void
init_base (Segment *s, int with_flows)
{
  segment_init (s, NULL);
  if (!with_flows)
    return;
  s->controller_pid = 4321;
  s->controller_start = 99;
  s->heartbeat_us = 123456789;
  s->phase = BWSS_PHASE_TRACK;
  s->loop = BWSS_LOOP_DELAY;
  s->sigma_bps = 8e6;
  s->aggregate_bps = 7.5e6;
  s->queue_us = 12000.0;
  s->queue_target_us = 10000.0;
  for (uint32_t i = 0; i < 4; i++) {
    SegSlot *sl = &s->slots[i * 37];
    sl->state = i == 3 ? SLOT_RELEASED : SLOT_ACTIVE;
    sl->gen = i + 1;
    sl->pid = 1000 + (int32_t) i;
    sl->fd = 3 + (int32_t) i;
    sl->starttime = 777;
    sl->inode = 5000 + i;
    snprintf (sl->comm, sizeof sl->comm, "curl");
    snprintf (sl->local, sizeof sl->local, "127.0.0.1:%u", 40000 + i);
    snprintf (sl->remote, sizeof sl->remote, "[::1]:80");
    sl->prefs = (BwssPrefs) { .priority = (int32_t) i * 10, .min_rate_bps = 496e3 * i, .weight = 1 + i };
    sl->prefs_serial = 1;
    sl->share = i % 3;                       /* flow, process, unit */
    sl->share_key = i % 3 == 1 ? (uint64_t) sl->pid : i % 3 == 2 ? 4242 : 0;
    sl->controlled = 1;
    sl->window_bytes = 14480;
    sl->target_bps = 1e6;
    sl->rate_bps = 9e5;
    sl->base_rtt_us = 30000;
    s->n_flows++;
    s->slot_hwm = i * 37 + 1;
  }
}

static bool
terminated (const char *s, size_t n)
{
  return memchr (s, 0, n) != NULL;
}

static bool
prefs_ok (const BwssPrefs *p)
{
  return p->priority >= -1000 && p->priority <= 1000 && isfinite (p->min_rate_bps)
         && p->min_rate_bps >= 0 && p->min_rate_bps <= 1e15 && isfinite (p->weight)
         && p->weight >= 0 && p->weight <= 1e9;
}

#define CHECK(cond) do { if (!(cond)) { fprintf (stderr, "fuzz-segment: accepted, but not %s\n", #cond); abort (); } } while (0)

/* What every reader of an accepted segment relies on. */
static void
check_accepted (const Segment *s, const Segment *kind)
{
  CHECK (s->magic == SEG_MAGIC && s->version == SEG_VERSION);
  CHECK (s->header_size == offsetof (Segment, slots) && s->slot_size == sizeof (SegSlot));
  CHECK (s->max_flows == SEG_MAX_FLOWS && s->owner_uid == geteuid ());
  CHECK (s->lock.__data.__kind == kind->lock.__data.__kind);
  CHECK (s->n_flows <= SEG_MAX_FLOWS && s->phase <= BWSS_PHASE_LAST && bwss_loop_name (s->loop) != NULL);
  CHECK (s->suspended <= 1 && s->controller_pid >= 0 && s->slot_hwm <= SEG_MAX_FLOWS);
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
    const SegSlot *sl = &s->slots[i];
    if (sl->state == SLOT_FREE)
      continue;
    CHECK (i < s->slot_hwm);                 /* no used slot hidden from the loops */
    CHECK (sl->state == SLOT_ACTIVE || sl->state == SLOT_RELEASED);
    CHECK (terminated (sl->comm, sizeof sl->comm) && terminated (sl->local, sizeof sl->local)
           && terminated (sl->remote, sizeof sl->remote));
    CHECK (prefs_ok (&sl->prefs));
    CHECK (sl->pid > 0 && sl->fd >= 0);
    /* a group the controller can trust: a share it knows, the key its share says */
    int32_t owner = sl->owner_pid ? sl->owner_pid : sl->pid;
    CHECK ((sl->share == 0 && sl->share_key == 0)
           || (sl->share == 1 && owner > 0 && sl->share_key == (uint64_t) owner)
           || (sl->share == 2 && sl->share_key != 0 && sl->share_key < (UINT64_C (1) << 62)));
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int ready;
  if (!ready++) {
    init_base (&bases[0], 0);
    init_base (&bases[1], 1);
    memset (&bases[2], 0, sizeof bases[2]);
  }
  if (size == 0)
    return 0;
  Segment *s = malloc (sizeof *s);
  memcpy (s, &bases[data[0] % 3], sizeof *s);
  for (size_t at = 1; at + 3 <= size;) {
    size_t off = (data[at] | (size_t) data[at + 1] << 8) % sizeof *s;
    size_t len = data[at + 2];
    at += 3;
    for (size_t k = 0; k < len && at < size; k++, at++)
      ((uint8_t *) s)[(off + k) % sizeof *s] = data[at];
  }
  if (segment_validate (s) == 0)
    check_accepted (s, &bases[0]);
  free (s);
  return 0;
}

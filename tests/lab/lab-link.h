/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lab-link — the lab's user-space bottleneck: a queue (lab-aqm) in front of
 * a serialisation at the link's rate.  A packet's transmission starts when
 * the previous one's ends (or when it arrives at an idle link) and lasts
 * bytes·8/rate; it is written out at its scheduled end.  The rate is fixed
 * or follows a trace (a step function of time from the trace's start).
 * With a priority address (the ideal router) the packets from it form class
 * 0, served strictly before class 1; each class has its own queue of the
 * same kind.
 *
 * It measures itself: how late each departure was written against its
 * schedule, the queue's sojourn time, drops, and per second from the
 * trace's start the bytes written, the bytes the rate allowed and the time
 * the link was busy; per IPv4 source (a flow's server) the packets it
 * brought and the drops, and each drop from the trace's start: when, whose,
 * its sojourn and the packets left queued behind it (what a model's drops
 * are set against).
 */
#ifndef LAB_LINK_H
#define LAB_LINK_H

#include <stdio.h>
#include "lab-aqm.h"

#define LINK_LATE_BINS    2000            /* 10 µs each: up to 20 ms */
#define LINK_SOJOURN_BINS 100000          /* 100 µs each: up to 10 s */
#define LINK_SOURCES      32              /* sources counted apart; the rest as one */
#define LINK_DROP_LOG     65536           /* drops logged one by one */

typedef struct {
  uint64_t t_ns;                          /* from the trace's start */
  uint32_t src;                           /* network order */
  uint32_t sojourn_us;
  uint32_t backlog;                       /* packets still queued in its class */
  uint32_t len;                           /* bytes on the link */
} LinkDrop;

typedef struct {
  uint64_t t_ns;                          /* from the trace's start */
  double   bps;
} LinkRatePoint;

/* Writes @p out (the link frees it afterwards). */
typedef void (*LinkWriteFn) (void *ctx, const LabPkt *p);

typedef struct {
  Aqm            cls[2];
  int            n_cls;
  uint32_t       prio_addr;               /* network order; class 0's source */
  LinkRatePoint *trace;
  size_t         n_trace;
  uint64_t       t0_ns;                   /* the trace's start; 0: not started */
  LabPkt        *on_wire;
  uint64_t       free_ns;                 /* when the last transmission ends */
  LinkWriteFn    write;
  void          *ctx;
  /* statistics */
  uint64_t       packets, bytes, max_late_ns, max_sojourn_ns;
  uint64_t       late[LINK_LATE_BINS + 1];
  uint32_t      *sojourn;                 /* LINK_SOJOURN_BINS + 1 */
  uint64_t       drops_limit, drops_codel;
  size_t         n_sec;                   /* per-second series from t0 */
  uint64_t      *sec_bytes, *sec_busy_ns, *sec_drops, *sec_sojourn_ns, *sec_sojourn_n;
  uint32_t       src_addr[LINK_SOURCES + 1];  /* the last slot: every other source */
  uint64_t       src_packets[LINK_SOURCES + 1], src_drops[LINK_SOURCES + 1];
  size_t         n_src;
  LinkDrop      *drop_log;                /* LINK_DROP_LOG of them, from t0 */
  size_t         n_drop_log;
} Link;

/* A link of @kind queues (@cfg) at @rate_bps, or following @trace (owned by
 * the link after the call) when @n_trace > 0. */
bool link_init (Link *l, const AqmConfig *cfg, double rate_bps, LinkRatePoint *trace,
                size_t n_trace, uint32_t prio_addr, LinkWriteFn write, void *ctx);
void link_free (Link *l);

/* Reads a trace file of "seconds kbit/s" lines; NULL (and a message on
 * stderr) if it is not one. */
LinkRatePoint *link_trace_load (const char *path, size_t *n);

/* The trace (and the per-second series) start at @now_ns. */
void link_start (Link *l, uint64_t now_ns);
double link_rate_at (const Link *l, uint64_t t_ns);

/* A packet (malloc'd, data malloc'd; IP packet at data + hdr) reaches the
 * bottleneck at @t_ns. */
void link_arrive (Link *l, LabPkt *p, size_t hdr, uint64_t t_ns);
/* Writes every packet whose departure is due at @now_ns. */
void link_service (Link *l, uint64_t now_ns);
/* When the next departure is due, UINT64_MAX if none. */
static inline uint64_t link_next_ns (const Link *l) { return l->on_wire ? l->on_wire->depart_ns : UINT64_MAX; }

/* Its statistics as the members of a JSON object (no braces). */
void link_write_stats (const Link *l, FILE *f);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lab-aqm — the queue in front of the lab's user-space bottleneck: drop-tail,
 * CoDel (RFC 8289) or FQ-CoDel (RFC 8290).  Pure logic: no I/O, no clock —
 * every call is given the time (ns), so a unit test drives it with a
 * synthetic packet sequence.  Packets it drops go to the owner's drop
 * callback (which frees them); the packets it holds are linked through
 * LabPkt.next.
 */
#ifndef LAB_AQM_H
#define LAB_AQM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct LabPkt {
  struct LabPkt *next;
  uint64_t enq_ns;        /* when it entered the bottleneck's queue */
  uint64_t depart_ns;     /* scheduled end of its serialisation (lab-link) */
  uint32_t len;           /* bytes on the link: IP packet + 14 (Ethernet) */
  uint32_t frame_len;     /* bytes to write to the TUN (vnet header included) */
  uint32_t hash;          /* 5-tuple hash (FQ-CoDel) */
  uint8_t  cls;           /* 0: the priority class (ideal router), 1: the rest */
  uint32_t src;           /* IPv4 source address, network order (0: not IPv4) */
  uint8_t *data;
} LabPkt;

typedef struct {
  LabPkt  *head, *tail;
  uint32_t n;
  uint64_t bytes;
} LabFifo;

typedef enum { AQM_DROPTAIL, AQM_CODEL, AQM_FQ_CODEL } AqmKind;

typedef enum { AQM_DROP_LIMIT, AQM_DROP_CODEL } AqmDropWhy;

typedef struct {
  AqmKind  kind;
  uint64_t limit_bytes;   /* drop-tail: the buffer; CoDel/FQ-CoDel: memory limit */
  uint32_t limit_pkts;    /* CoDel/FQ-CoDel: packets held at most (0: none) */
  uint64_t target_ns;     /* CoDel: 5 ms */
  uint64_t interval_ns;   /* CoDel: 100 ms */
  uint32_t mtu;           /* CoDel: no drop with at most this many bytes queued */
  uint32_t flows;         /* FQ-CoDel: number of queues (1024) */
  uint32_t quantum;       /* FQ-CoDel: DRR quantum, bytes (1514) */
} AqmConfig;

/* CoDel's state of one queue (RFC 8289 §5). */
typedef struct {
  uint64_t first_above_ns;
  uint64_t drop_next_ns;
  uint32_t count, lastcount;
  bool     dropping;
} CodelVars;

typedef struct {
  LabFifo   q;
  CodelVars cv;
  int32_t   deficit;
  int32_t   next;          /* next flow in its list, -1: last */
  uint8_t   list;          /* FQ_NONE, FQ_NEW or FQ_OLD */
} FqFlow;

typedef void (*AqmDropFn) (void *ctx, LabPkt *p, AqmDropWhy why);

typedef struct {
  AqmConfig cfg;
  AqmDropFn drop;
  void     *ctx;
  LabFifo   fifo;          /* drop-tail, CoDel */
  CodelVars cv;            /* CoDel */
  FqFlow   *flows;         /* FQ-CoDel */
  int32_t   new_head, new_tail, old_head, old_tail;
  uint64_t  backlog_bytes;
  uint32_t  backlog_pkts;
  uint64_t  drops_limit, drops_codel;
} Aqm;

/* A configuration with RFC defaults for @kind (limit_bytes still to set for drop-tail). */
AqmConfig aqm_defaults (AqmKind kind);
/* Returns the kind named @name ("droptail", "codel", "fq_codel"), -1 if none. */
int aqm_kind_from_name (const char *name);

bool aqm_init (Aqm *a, const AqmConfig *cfg, AqmDropFn drop, void *ctx);
void aqm_clear (Aqm *a);              /* drops what it holds (AQM_DROP_LIMIT), frees */

/* Queues @p at @now_ns (sets p->enq_ns); may drop it or, over FQ-CoDel's
 * limits, packets of the fattest queue. */
void aqm_enqueue (Aqm *a, LabPkt *p, uint64_t now_ns);
/* The packet to send at @now_ns, NULL if none; CoDel drops at dequeue. */
LabPkt *aqm_dequeue (Aqm *a, uint64_t now_ns);
static inline bool aqm_empty (const Aqm *a) { return a->backlog_pkts == 0; }

/* CoDel's control law: the next drop @interval_ns / sqrt(@count) after @t_ns. */
uint64_t codel_control_law (uint64_t t_ns, uint64_t interval_ns, uint32_t count);

/* Hash of the 5-tuple of the IP packet @ip (@len bytes), perturbed by @seed
 * (addresses and protocol only when it carries no TCP/UDP ports). */
uint32_t aqm_flow_hash (const uint8_t *ip, size_t len, uint32_t seed);

#endif

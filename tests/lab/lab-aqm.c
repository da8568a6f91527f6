/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lab-aqm.c — drop-tail, CoDel and FQ-CoDel for the lab's user-space
 * bottleneck (see lab-aqm.h).  Written after RFC 8289 (CoDel: target,
 * interval, the control law interval/sqrt(count), drops at dequeue) and
 * RFC 8290 (FQ-CoDel: flows hashed to queues, deficit round robin over a
 * list of new and a list of old flows, CoDel in each queue, a packet and a
 * memory limit enforced by dropping from the head of the fattest queue).
 * Like Linux's fq_codel, each queue's CoDel asks "more than one MTU queued?"
 * of the whole scheduler's backlog.
 */
#include "lab-aqm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FQ_NONE, FQ_NEW, FQ_OLD };

AqmConfig
aqm_defaults (AqmKind kind)
{
  AqmConfig c = {
    .kind = kind,
    .limit_bytes = 32u * 1024u * 1024u,
    .limit_pkts = kind == AQM_FQ_CODEL ? 10240 : 1000,
    .target_ns = 5000000,
    .interval_ns = 100000000,
    .mtu = 1514,
    .flows = 1024,
    .quantum = 1514,
  };
  if (kind == AQM_DROPTAIL)
    c.limit_pkts = 0;
  return c;
}

int
aqm_kind_from_name (const char *name)
{
  if (strcmp (name, "droptail") == 0)
    return AQM_DROPTAIL;
  if (strcmp (name, "codel") == 0)
    return AQM_CODEL;
  if (strcmp (name, "fq_codel") == 0)
    return AQM_FQ_CODEL;
  return -1;
}

/* ---- FIFO ---- */

static void
fifo_push (LabFifo *f, LabPkt *p)
{
  p->next = NULL;
  if (f->tail)
    f->tail->next = p;
  else
    f->head = p;
  f->tail = p;
  f->n++;
  f->bytes += p->len;
}

static LabPkt *
fifo_pop (LabFifo *f)
{
  LabPkt *p = f->head;
  if (p == NULL)
    return NULL;
  f->head = p->next;
  if (f->head == NULL)
    f->tail = NULL;
  p->next = NULL;
  f->n--;
  f->bytes -= p->len;
  return p;
}

/* ---- CoDel (RFC 8289 §5.5 - 5.7) ---- */

uint64_t
codel_control_law (uint64_t t_ns, uint64_t interval_ns, uint32_t count)
{
  return t_ns + (uint64_t) ((double) interval_ns / sqrt ((double) (count ? count : 1)));
}

/* Takes the head of @q; *ok_to_drop says whether its sojourn has been above
 * target for an interval. */
static LabPkt *
codel_dodequeue (Aqm *a, LabFifo *q, CodelVars *v, uint64_t now, bool *ok_to_drop)
{
  *ok_to_drop = false;
  LabPkt *p = fifo_pop (q);
  if (p == NULL) {
    v->first_above_ns = 0;
    return NULL;
  }
  a->backlog_bytes -= p->len;
  a->backlog_pkts--;
  uint64_t sojourn = now > p->enq_ns ? now - p->enq_ns : 0;
  if (sojourn < a->cfg.target_ns || a->backlog_bytes <= a->cfg.mtu) {
    v->first_above_ns = 0;                 /* went below: stay below for an interval */
  } else if (v->first_above_ns == 0) {
    v->first_above_ns = now + a->cfg.interval_ns;
  } else if (now >= v->first_above_ns) {
    *ok_to_drop = true;
  }
  return p;
}

static void
drop_pkt (Aqm *a, LabPkt *p, AqmDropWhy why)
{
  if (why == AQM_DROP_CODEL)
    a->drops_codel++;
  else
    a->drops_limit++;
  a->drop (a->ctx, p, why);
}

static LabPkt *
codel_dequeue (Aqm *a, LabFifo *q, CodelVars *v, uint64_t now)
{
  bool ok;
  LabPkt *p = codel_dodequeue (a, q, v, now, &ok);
  if (p == NULL) {
    v->dropping = false;
    return NULL;
  }
  if (v->dropping) {
    if (!ok) {
      v->dropping = false;                 /* sojourn below target: leave drop state */
    } else {
      while (v->dropping && now >= v->drop_next_ns) {
        drop_pkt (a, p, AQM_DROP_CODEL);
        v->count++;
        p = codel_dodequeue (a, q, v, now, &ok);
        if (p == NULL || !ok)
          v->dropping = false;
        else
          v->drop_next_ns = codel_control_law (v->drop_next_ns, a->cfg.interval_ns, v->count);
      }
    }
  } else if (ok) {
    drop_pkt (a, p, AQM_DROP_CODEL);
    p = codel_dodequeue (a, q, v, now, &ok);
    v->dropping = true;
    /* a drop state entered soon after the last one resumes its rate */
    uint32_t delta = v->count - v->lastcount;
    v->count = 1;
    if (delta > 1 && (int64_t) (now - v->drop_next_ns) < (int64_t) (16 * a->cfg.interval_ns))
      v->count = delta;
    v->drop_next_ns = codel_control_law (now, a->cfg.interval_ns, v->count);
    v->lastcount = v->count;
  }
  return p;
}

/* ---- FQ-CoDel flow lists ---- */

static void
list_append (Aqm *a, int32_t *head, int32_t *tail, int32_t i, uint8_t which)
{
  a->flows[i].next = -1;
  a->flows[i].list = which;
  if (*tail >= 0)
    a->flows[*tail].next = i;
  else
    *head = i;
  *tail = i;
}

static int32_t
list_pop (Aqm *a, int32_t *head, int32_t *tail)
{
  int32_t i = *head;
  *head = a->flows[i].next;
  if (*head < 0)
    *tail = -1;
  a->flows[i].next = -1;
  a->flows[i].list = FQ_NONE;
  return i;
}

/* Over a limit: drop from the head of the queue holding the most bytes. */
static void
fq_drop_fattest (Aqm *a)
{
  uint32_t fat = 0;
  for (uint32_t i = 1; i < a->cfg.flows; i++)
    if (a->flows[i].q.bytes > a->flows[fat].q.bytes)
      fat = i;
  LabPkt *p = fifo_pop (&a->flows[fat].q);
  if (p == NULL)
    return;
  a->backlog_bytes -= p->len;
  a->backlog_pkts--;
  drop_pkt (a, p, AQM_DROP_LIMIT);
}

static bool
over_limits (const Aqm *a)
{
  return (a->cfg.limit_pkts && a->backlog_pkts > a->cfg.limit_pkts)
         || (a->cfg.limit_bytes && a->backlog_bytes > a->cfg.limit_bytes);
}

/* ---- the interface ---- */

bool
aqm_init (Aqm *a, const AqmConfig *cfg, AqmDropFn drop, void *ctx)
{
  memset (a, 0, sizeof *a);
  a->cfg = *cfg;
  a->drop = drop;
  a->ctx = ctx;
  a->new_head = a->new_tail = a->old_head = a->old_tail = -1;
  if (cfg->kind == AQM_FQ_CODEL) {
    if (cfg->flows == 0 || cfg->quantum == 0)
      return false;
    a->flows = calloc (cfg->flows, sizeof *a->flows);
    if (a->flows == NULL)
      return false;
    for (uint32_t i = 0; i < cfg->flows; i++)
      a->flows[i].next = -1;
  }
  return true;
}

void
aqm_clear (Aqm *a)
{
  LabPkt *p;
  while ((p = fifo_pop (&a->fifo)) != NULL)
    a->drop (a->ctx, p, AQM_DROP_LIMIT);
  for (uint32_t i = 0; a->flows && i < a->cfg.flows; i++)
    while ((p = fifo_pop (&a->flows[i].q)) != NULL)
      a->drop (a->ctx, p, AQM_DROP_LIMIT);
  free (a->flows);
  a->flows = NULL;
  a->backlog_bytes = 0;
  a->backlog_pkts = 0;
}

void
aqm_enqueue (Aqm *a, LabPkt *p, uint64_t now_ns)
{
  p->enq_ns = now_ns;
  switch (a->cfg.kind) {
  case AQM_DROPTAIL:
    if (a->backlog_bytes + p->len > a->cfg.limit_bytes) {
      drop_pkt (a, p, AQM_DROP_LIMIT);     /* the buffer is full */
      return;
    }
    fifo_push (&a->fifo, p);
    break;
  case AQM_CODEL:
    if (a->cfg.limit_pkts && a->backlog_pkts >= a->cfg.limit_pkts) {
      drop_pkt (a, p, AQM_DROP_LIMIT);
      return;
    }
    fifo_push (&a->fifo, p);
    break;
  case AQM_FQ_CODEL: {
    uint32_t i = p->hash % a->cfg.flows;
    FqFlow *f = &a->flows[i];
    fifo_push (&f->q, p);
    if (f->list == FQ_NONE) {
      list_append (a, &a->new_head, &a->new_tail, (int32_t) i, FQ_NEW);
      f->deficit = (int32_t) a->cfg.quantum;
    }
    a->backlog_bytes += p->len;
    a->backlog_pkts++;
    while (over_limits (a))
      fq_drop_fattest (a);
    return;
  }
  }
  a->backlog_bytes += p->len;
  a->backlog_pkts++;
}

static LabPkt *
fq_dequeue (Aqm *a, uint64_t now)
{
  for (;;) {
    bool from_new = a->new_head >= 0;
    int32_t *head = from_new ? &a->new_head : &a->old_head;
    int32_t *tail = from_new ? &a->new_tail : &a->old_tail;
    if (*head < 0)
      return NULL;
    int32_t i = *head;
    FqFlow *f = &a->flows[i];
    if (f->deficit <= 0) {
      f->deficit += (int32_t) a->cfg.quantum;   /* its round is over: to the old list's end */
      list_pop (a, head, tail);
      list_append (a, &a->old_head, &a->old_tail, i, FQ_OLD);
      continue;
    }
    LabPkt *p = codel_dequeue (a, &f->q, &f->cv, now);
    if (p == NULL) {
      list_pop (a, head, tail);
      /* an emptied new flow goes once through the old list (no
       * re-entering as new straight away); an emptied old flow leaves */
      if (from_new && a->old_head >= 0)
        list_append (a, &a->old_head, &a->old_tail, i, FQ_OLD);
      continue;
    }
    f->deficit -= (int32_t) p->len;
    return p;
  }
}

LabPkt *
aqm_dequeue (Aqm *a, uint64_t now_ns)
{
  switch (a->cfg.kind) {
  case AQM_DROPTAIL: {
    LabPkt *p = fifo_pop (&a->fifo);
    if (p) {
      a->backlog_bytes -= p->len;
      a->backlog_pkts--;
    }
    return p;
  }
  case AQM_CODEL:
    return codel_dequeue (a, &a->fifo, &a->cv, now_ns);
  case AQM_FQ_CODEL:
    return fq_dequeue (a, now_ns);
  }
  return NULL;
}

/* ---- the flow hash ---- */

static uint32_t
mix (uint32_t h, uint32_t k)
{
  k *= 0xcc9e2d51u;
  k = (k << 15) | (k >> 17);
  k *= 0x1b873593u;
  h ^= k;
  h = (h << 13) | (h >> 19);
  return h * 5 + 0xe6546b64u;
}

static uint32_t
rd32 (const uint8_t *b)
{
  return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

uint32_t
aqm_flow_hash (const uint8_t *ip, size_t len, uint32_t seed)
{
  uint32_t h = seed;
  size_t l4 = 0;
  uint8_t proto = 0;
  if (len >= 20 && (ip[0] >> 4) == 4) {
    size_t ihl = (size_t) (ip[0] & 15) * 4;
    proto = ip[9];
    h = mix (mix (h, rd32 (ip + 12)), rd32 (ip + 16));
    bool fragment = ((ip[6] & 0x1f) | ip[7]) != 0;   /* offset != 0: no ports */
    if (!fragment && ihl >= 20)
      l4 = ihl;
  } else if (len >= 40 && (ip[0] >> 4) == 6) {
    proto = ip[6];
    for (int k = 8; k < 40; k += 4)
      h = mix (h, rd32 (ip + k));
    l4 = 40;                                          /* extension headers: not followed */
  } else {
    return mix (h, (uint32_t) len);
  }
  h = mix (h, proto);
  if (l4 && (proto == 6 || proto == 17) && len >= l4 + 4)
    h = mix (h, rd32 (ip + l4));                      /* source and destination port */
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wire.h — what a client (client.c: every process that registers flows or
 * reads statistics) and bwssd say to each other over the domain's socket,
 * <domain>.sock in the user's runtime directory (runtime.c).  Internal to
 * libbwss and bwssd, which build together: no compatibility across
 * versions (a message of another version closes the connection).
 *
 * An AF_UNIX SOCK_SEQPACKET connection: one message per packet, the
 * sockets handed over as SCM_RIGHTS, and its end (EOF) the one sign of a
 * death on either side.  bwssd knows the client by SO_PEERCRED (another
 * user's connection is closed at once); a flow's id is the client's choice
 * and names a flow of that connection only, so a client can name no other
 * client's flow.
 *
 *   client → bwssd              | bwssd → client
 *   REGISTER  WireFlow + the fd  | REJECT  WireFlow's id refused, err
 *   UPDATE    WireFlow           | PACE    WirePace: a paced flow's read rate
 *   UNREGISTER, GET_FLOW         | FLOW    WireFlowStats (the reply to GET_FLOW)
 *   LATE      WireLate           |
 *   GET_DOMAIN, LIST, SUSPEND,   | DOMAIN  WireDomain; LISTED WireListed + a memfd
 *   STATUS                       |         of n × WireListEntry (LIST) or of bwssd's
 *                                |         status, n bytes of JSON (STATUS); DONE
 *                                |         (SUSPEND, errors)
 *
 * REGISTER, UPDATE, LATE and UNREGISTER are not answered (REJECT says a refusal);
 * the readers' replies carry the request's seq.
 */
#ifndef BWSS_WIRE_H
#define BWSS_WIRE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <bwss/domain.h>

#define WIRE_VERSION 3u             /* 2: STATUS, LATE, the late figures in FLOW and LIST;
                                     * 3: a flow's stream (WireFlow.stream) */

enum {
  WIRE_REGISTER = 1,
  WIRE_UPDATE,
  WIRE_UNREGISTER,
  WIRE_GET_FLOW,
  WIRE_GET_DOMAIN,
  WIRE_LIST,
  WIRE_SUSPEND,
  WIRE_STATUS,
  WIRE_LATE,
  WIRE_REJECT = 64,
  WIRE_PACE,
  WIRE_FLOW,
  WIRE_DOMAIN,
  WIRE_LISTED,
  WIRE_DONE,
};

typedef struct {
  uint16_t version;
  uint16_t type;
  uint32_t seq;
  uint64_t flow;               /* the client's id of the flow, 0 if none */
  int32_t  arg;                /* SUSPEND: on; REJECT, DONE: a BWSS_E code */
  uint32_t pad;
} WireHead;

typedef struct {               /* REGISTER, UPDATE */
  WireHead  h;
  BwssPrefs prefs;
  uint32_t  share;             /* BwssShare: bwssd finds the group's key itself */
  uint32_t  stream;            /* share STREAM: the client's number of the stream */
  uint32_t  paced;             /* the client paces its reads (bwss_flow_offer_read_pacing) */
  int32_t   fd;                /* the socket's number in the client (REGISTER) */
  int32_t   owner_pid;         /* 0: the client's own socket */
  uint32_t  pad;
  char      origin[BWSS_ORIGIN_MAX];
} WireFlow;

typedef struct {               /* LATE: bwss_flow_report_late() */
  WireHead h;
  double   late_fraction;
  double   required_prebuffer_s;
} WireLate;

/* Returns true if a LATE's figures are what bwss_flow_report_late()
 * accepts: a fraction in [0, 1] and a finite prebuffer >= 0 (the client
 * refuses others, bwssd ignores them). */
static inline bool
wire_late_valid (double late_fraction, double required_prebuffer_s)
{
  return late_fraction >= 0.0 && late_fraction <= 1.0 && required_prebuffer_s >= 0.0
         && isfinite (required_prebuffer_s);
}

typedef struct {               /* PACE */
  WireHead h;
  double   read_rate_bps;      /* 0: read freely */
  uint32_t mss;
  uint32_t pad;
} WirePace;

typedef struct {
  WireHead      h;
  BwssFlowStats st;
} WireFlowStats;

typedef struct {
  WireHead        h;
  BwssDomainStats st;
} WireDomain;

typedef struct {               /* LISTED: the entries or the text are in the memfd it carries */
  WireHead h;
  uint64_t n;                  /* entries (LIST), bytes (STATUS) */
} WireListed;

typedef struct {
  BwssFlowInfo  info;
  BwssFlowGroup group;
} WireListEntry;

/* Fills @h: this version, @type, @seq, @flow and @arg. */
static inline void
wire_head (WireHead *h, uint16_t type, uint32_t seq, uint64_t flow, int32_t arg)
{
  *h = (WireHead) { .version = WIRE_VERSION, .type = type, .seq = seq, .flow = flow, .arg = arg };
}

typedef union {
  WireHead      h;
  WireFlow      flow;
  WireLate      late;
  WirePace      pace;
  WireFlowStats flow_stats;
  WireDomain    domain;
  WireListed    listed;
} WireMsg;

#endif

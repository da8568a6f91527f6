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
 *   GET_DOMAIN, LIST, SUSPEND    | DOMAIN  WireDomain; LISTED WireListed + a memfd
 *                                |         of n × WireListEntry; DONE (SUSPEND, errors)
 *
 * REGISTER, UPDATE and UNREGISTER are not answered (REJECT says a refusal);
 * the readers' replies carry the request's seq.
 */
#ifndef BWSS_WIRE_H
#define BWSS_WIRE_H

#include <stdint.h>
#include <bwss/domain.h>

#define WIRE_VERSION 1u

enum {
  WIRE_REGISTER = 1,
  WIRE_UPDATE,
  WIRE_UNREGISTER,
  WIRE_GET_FLOW,
  WIRE_GET_DOMAIN,
  WIRE_LIST,
  WIRE_SUSPEND,
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
  uint32_t  paced;             /* the client paces its reads (bwss_flow_offer_read_pacing) */
  int32_t   fd;                /* the socket's number in the client (REGISTER) */
  int32_t   owner_pid;         /* 0: the client's own socket */
  char      origin[BWSS_ORIGIN_MAX];
} WireFlow;

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

typedef struct {               /* LISTED: the entries are in the memfd it carries */
  WireHead h;
  uint64_t n;
} WireListed;

typedef struct {
  BwssFlowInfo  info;
  BwssFlowGroup group;
} WireListEntry;

typedef union {
  WireHead      h;
  WireFlow      flow;
  WirePace      pace;
  WireFlowStats flow_stats;
  WireDomain    domain;
  WireListed    listed;
} WireMsg;

#endif

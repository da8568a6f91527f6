/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flowmodel.h — a fluid model of TCP flows sharing one bottleneck, for the
 * pure unit tests of the control laws (not a network: the lab has the real
 * one).
 *
 * Each flow i has a base RTT, an advertised window (0 = unlimited), and
 * optional limits elsewhere on its path (path_limit_bps) or at its source
 * (source_bps).  At queueing delay q its demand is
 *     d_i(q) = min(window_i·8/(base_i + q), path_limit_i, source_i).
 * The bottleneck has capacity C minus unresponsive cross traffic, and a
 * buffer of at most max_queue_s.  If every demand is finite and fits at some
 * q the queue settles there (bisection); otherwise the queue is full and the
 * link is shared like TCP does: weighted max-min with weights 1/RTT (RTT
 * unfairness), each flow capped by its demand.
 */
#ifndef FLOWMODEL_H
#define FLOWMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_FLOWS 16

typedef struct {
  bool     active;
  double   base_rtt_s;
  uint32_t window_bytes;    /* 0 = unlimited */
  double   path_limit_bps;  /* 0 = none */
  double   source_bps;      /* 0 = sends as fast as allowed */
  /* outputs */
  double   rate_bps;
  double   rtt_s;
  uint64_t bytes;
} ModelFlow;

typedef struct {
  double    capacity_bps;
  double    cross_bps;
  double    max_queue_s;
  size_t    n;
  ModelFlow f[MODEL_MAX_FLOWS];
  double    queue_s;
} Model;

void model_init (Model *m, double capacity_bps, double max_queue_s);
size_t model_add (Model *m, double base_rtt_s);
/* Solves rates and RTTs for the current windows and limits. */
void model_solve (Model *m);
/* Advances the byte counters by @dt_s at the solved rates. */
void model_advance (Model *m, double dt_s);

#endif

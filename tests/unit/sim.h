/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sim.h — the whole BWSS (σ loop + TRAS + FCS) on a simulated clock against
 * the fluid model of flowmodel.h: the model advances in 1-ms steps, the
 * controller ticks on a 10-ms grid when bwss_controller_next_round() asks
 * (as bwssd's rounds) and, before each tick,
 * observes the controlled flows due by then (received bytes, the kernel's
 * receiver RTT; bwss_controller_due(), as the domain measures
 * them), and its windows go back into the model.  Per-second records for
 * the traces' assertions.
 *
 * $BWSS_SIM_MEASURE_ALL set: every controlled flow is observed at every
 * 10-ms tick instead (the law before the measuring schedule and the rounds'
 * gap, to compare with sim-spread.sh; not set in the suite).
 *
 * $BWSS_SIM_DECISIONS (a file): the delay loop's decisions appended to it,
 * a line each as bwssd's $BWSS_DECISIONS (the lab's decisions.txt).
 *
 * $BWSS_SIM_TICK_PHASE_MS (0 to 9, default 0): the controller ticks that
 * many ms after each multiple of 10 ms of the model's clock — physically
 * neutral (a controller's clock has no phase relation to the link's), so
 * a law's figures over the ten phases are its spread in the model
 * (tests/unit/sim-spread.sh).  Not set in the suite.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <bwss/control.h>
#include "flowmodel.h"

#define SIM_MAX_SECONDS 200

typedef struct Sim Sim;
/* Called at the start of every second (to start flows, cross traffic...). */
typedef void (*SimEvent) (Sim *s, unsigned second);

struct Sim {
  Model           m;
  BwssController *c;
  bool            controlled[MODEL_MAX_FLOWS];
  bool            pacable[MODEL_MAX_FLOWS];  /* the receiver can pace its reads */
  /* sim_add_late: a controlled flow the controller has not met yet joins
   * join_after_s[i] after its first byte (pending[i] until then) */
  bool            pending[MODEL_MAX_FLOWS];
  double          join_after_s[MODEL_MAX_FLOWS];
  double          first_byte_s[MODEL_MAX_FLOWS];     /* < 0: none yet */
  BwssPrefs       pending_prefs[MODEL_MAX_FLOWS];
  uint64_t        pending_group[MODEL_MAX_FLOWS];    /* sim_set_group() before it joined */
  /* the sample's RTT is the kernel's receiver RTT, else its handshake's
   * (bwssd's, knobs.c: tcpi_rcv_rtt, else tcpi_rtt); false: the receiver
   * RTT alone, 0 until its first sample (the cells' bars were set so) */
  bool            rtt_fallback;
  uint64_t        tick_phase_us;             /* ticks at this offset in each 10 ms */
  bool            measure_all;               /* $BWSS_SIM_MEASURE_ALL */
  /* $BWSS_SIM_TRACE="FROM,TO" (s): every 50 ms between them, a line of the
   * link's queue, the loop's σ and queue and each flow's bytes, receiver
   * RTT and losses (a tool to read an onset against the lab's samples.txt) */
  double          trace_from_s, trace_to_s;
  uint64_t        decided_us;                /* $BWSS_SIM_DECISIONS: the last decision written */
  uint64_t        samples;                   /* observations so far */
  uint64_t        now_us;
  /* per second (the per-flow records: [SIM_MAX_SECONDS][MODEL_MAX_FLOWS],
   * on the heap from sim_init() to sim_free(): a domain's worth of flows
   * would not fit a test's stack twice) */
  double        (*rate)[MODEL_MAX_FLOWS];    /* bit/s */
  double        (*target)[MODEL_MAX_FLOWS];  /* bit/s, end of the second */
  uint32_t      (*window)[MODEL_MAX_FLOWS];  /* segments */
  double        (*pace)[MODEL_MAX_FLOWS];    /* read rate, bit/s; 0 = free */
  double          queue_ms[SIM_MAX_SECONDS];                 /* mean queueing delay */
  double        (*flow_queue_ms)[MODEL_MAX_FLOWS]; /* ... each flow's own */
  double          cross[SIM_MAX_SECONDS];                    /* cross traffic delivered */
  BwssControllerStats stats[SIM_MAX_SECONDS];
  unsigned        seconds;
  SimEvent        event;
  /* if set, the link's rate at @t_s, every model step (a moving rate) */
  double        (*capacity_at) (const Sim *s, double t_s);
  /* if set, called at every controller tick before the flows are observed
   * (an application that changes its flows' sources or preferences) */
  void          (*on_tick) (Sim *s);
  void           *user;
  bool            mixed;     /* flows bwss controls beside flows it does not */
  unsigned        compete_max_s; /* seconds in COMPETE sim_free allows a run of
                              * only bwss's flows and cross traffic: a test that
                              * asserts a false entry itself; 0: a tenth of the run */
};

/* A link of @capacity with a 150-ms drop-tail buffer (tbf latency 150ms),
 * controlled with @params (NULL: the defaults: the delay loop). */
void   sim_init (Sim *s, double capacity, const BwssParams *params, SimEvent event);
/* Adds a flow of base RTT @rtt (s), registered with the controller if
 * @controlled; its reads can be paced (a program under the shim) unless
 * sim_no_pacing() says otherwise. */
size_t sim_add (Sim *s, double rtt, int32_t prio, double min, double weight, bool controlled);
/* Adds a controlled flow the controller meets @join_after_s after its
 * first byte (the preload shim registers a socket at its first read that
 * returns data, and bwssd admits it then); until then the kernel's own
 * window (ModelFlow.kernel_window). */
size_t sim_add_late (Sim *s, double rtt, int32_t prio, double min, double weight,
                     double join_after_s);
void   sim_stop_flow (Sim *s, size_t i);
/* Puts controlled flow @i in group @group (bwss_controller_set_group), at
 * once or, for one that has not joined yet (sim_add_late), as it joins. */
void   sim_set_group (Sim *s, size_t i, uint64_t group);
/* Flow @i's reads cannot be paced (an application reading by itself). */
void   sim_no_pacing (Sim *s, size_t i);
/* Runs until @seconds from the start (the records are indexed by second). */
void   sim_run (Sim *s, unsigned seconds);
/* Frees @s.  A run where every flow is controlled (or none is) has nobody
 * else's queue: it asserts that the delay loop stayed out of COMPETE in at
 * least 90 % of its seconds (capacity-compete.c). */
void   sim_free (Sim *s);
/* Seconds of [from, to) the delay loop spent in COMPETE. */
unsigned sim_seconds_competing (const Sim *s, unsigned from, unsigned to);

/* Mean rate of flow @i over seconds [from, to), bit/s. */
double sim_mean (const Sim *s, size_t i, unsigned from, unsigned to);
/* Σ of every flow's mean over [from, to), bit/s. */
double sim_mean_aggregate (const Sim *s, unsigned from, unsigned to);
/* Median of the per-second mean queueing delay over [from, to), ms. */
double sim_median_queue_ms (const Sim *s, unsigned from, unsigned to);
/* Median of flow @i's per-second mean queueing delay (under FQ its own
 * queue's) over [from, to), ms. */
double sim_median_flow_queue_ms (const Sim *s, size_t i, unsigned from, unsigned to);
/* Seconds of [from, to) in which flow @i got less than @rate. */
unsigned sim_seconds_below (const Sim *s, size_t i, double rate, unsigned from, unsigned to);
/* Logs the trace every @every seconds (g_test_message: --verbose). */
void   sim_log (const Sim *s, unsigned every);

#endif

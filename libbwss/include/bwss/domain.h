/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/domain.h — BWSS on real sockets: the per-user domain and its flows.
 *
 * A domain is the state shared by every participating process of one user
 * (a shared-memory segment, mode 0600).  Each process registers its
 * connected TCP sockets with preferences; one process at a time is the
 * controller: it measures every flow of the domain, runs the control laws
 * (bwss/control.h) and publishes a window per flow; each participant applies
 * the windows of its own sockets.  If no controller is alive, every window
 * goes back to the kernel's own (fail-open).
 *
 * The controller runs the delay loop unless $BWSS_LOOP says "paper" (the
 * paper's throughput-only loop, bwss/control.h); an unknown value is
 * reported on stderr once and the default is used.
 *
 * Threads: a BwssDomain may be used from several threads.  Nothing runs by
 * itself: call bwss_domain_dispatch() periodically, attach it to a GLib main
 * context (bwss/bwss-glib.h), or let it run its own thread
 * (BWSS_DOMAIN_THREAD).
 */
#ifndef BWSS_DOMAIN_H
#define BWSS_DOMAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <bwss/bwss.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BwssDomain BwssDomain;
typedef struct BwssFlow BwssFlow;

enum {
  BWSS_DOMAIN_NO_CREATE     = 1u << 0, /* fail with BWSS_ENOENT if missing */
  BWSS_DOMAIN_NO_CONTROLLER = 1u << 1, /* never take the controller role */
  BWSS_DOMAIN_THREAD        = 1u << 2, /* dispatch from an internal thread */
};

/* Opens the domain @name (NULL: $BWSS_DOMAIN, else "bwss-<uid>"), creating it
 * unless BWSS_DOMAIN_NO_CREATE.  A segment that is corrupt, of another
 * version or not owned by this user with mode 0600 is refused (BWSS_EPROTO,
 * BWSS_EVERSION, BWSS_EPERM) and left untouched. */
BWSS_API int  bwss_domain_open (const char *name, unsigned flags, BwssDomain **out);
/* Unregisters this handle's flows (restoring their windows) and closes. */
BWSS_API void bwss_domain_close (BwssDomain *d);

/* Registers the connected TCP socket @fd of this process. */
BWSS_API int  bwss_flow_register (BwssDomain *d, int fd, const BwssPrefs *prefs,
                                  BwssFlow **out);
BWSS_API int  bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs);
/* Restores the kernel's window on the socket and frees @f. */
BWSS_API void bwss_flow_unregister (BwssFlow *f);

typedef struct {
  BwssPrefs prefs;
  uint64_t  bytes_received;
  double    rate_bps;       /* controller's estimate, negative if none */
  double    target_bps;     /* allocated target; negative while released */
  uint32_t  window_bytes;   /* window applied, 0 = kernel default */
  uint32_t  rtt_us;
  uint32_t  base_rtt_us;    /* delay loop: its RTT with the link's queue empty, 0 unknown */
  uint32_t  mss;
  bool      controlled;     /* a live controller decides this flow's window */
} BwssFlowStats;

BWSS_API int bwss_flow_get_stats (BwssFlow *f, BwssFlowStats *out);

typedef struct {
  pid_t     controller_pid; /* 0 if none */
  BwssPhase phase;
  double    sigma_bps;
  double    aggregate_bps;
  uint32_t  n_flows;
  bool      suspended;      /* sharing is switched off (bwss_domain_set_suspended) */
  BwssLoop  loop;           /* the σ loop the controller runs ($BWSS_LOOP) */
  double    queue_us;       /* delay loop: the link's queueing delay, negative unknown */
  double    queue_target_us;/* delay loop: its target */
} BwssDomainStats;

BWSS_API int bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out);

/* Switches sharing off (@suspended true) or on again for the whole domain.
 * Off: flows stay registered, every window goes back to the kernel's and
 * the controller forgets what it learned; on: the controller starts from
 * its initialisation (release, σ ← U, raise), as for a first flow. */
BWSS_API int bwss_domain_set_suspended (BwssDomain *d, bool suspended);

/* One flow of the whole domain, for bwss-top. */
typedef struct {
  pid_t         pid;
  char          comm[16];
  char          local[64];   /* "addr:port" / "[addr]:port" */
  char          remote[64];
  BwssFlowStats stats;
} BwssFlowInfo;

/* Copies up to @max flows of the domain into @out; *n_out = number copied. */
BWSS_API int bwss_domain_list_flows (BwssDomain *d, BwssFlowInfo *out, size_t max,
                                     size_t *n_out);

/* Does this process's share of the work at @now_us (CLOCK_MONOTONIC µs):
 * applies published windows to its own sockets, restores them if the
 * controller is gone, takes the controller role if free and allowed, and if
 * controller, measures and runs the laws.  Returns the µs until it wants to
 * run again. */
BWSS_API uint64_t bwss_domain_dispatch (BwssDomain *d, uint64_t now_us);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_DOMAIN_H */

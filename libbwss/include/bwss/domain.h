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
 * itself: call bwss_domain_dispatch() when it asks (its return value, and
 * bwss_domain_get_fd()), attach it to a GLib main context
 * (bwss/bwss-glib.h), or let it run its own thread (BWSS_DOMAIN_THREAD).
 *
 * Never blocked by another process: the domain's lock is shared by every
 * participant, and one of them may be stopped (SIGSTOP, Ctrl-Z) or hung
 * while holding it.  So registering, changing preferences and unregistering
 * never wait for it: what cannot be written at once is kept in this process
 * and written at a later dispatch (a flow is unconstrained meanwhile).
 * Reading (statistics, the flow list) waits a few milliseconds at most and
 * then fails with BWSS_EBUSY.  A domain whose lock stays held for seconds is
 * moved to a fresh segment by the next controller candidate that may create
 * it; every participant follows at its next dispatch (docs/sockets.md).
 */
#ifndef BWSS_DOMAIN_H
#define BWSS_DOMAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <bwss/base.h>
#include <bwss/control.h>

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

/* Most flows a domain holds (all processes together). */
#define BWSS_DOMAIN_MAX_FLOWS 10240

/* Longest domain name. */
#define BWSS_DOMAIN_NAME_MAX 64

/* Returns 0 if @name is a valid domain name: 1 to BWSS_DOMAIN_NAME_MAX
 * ASCII letters, digits, '.', '_' or '-', not starting with '.'; else
 * BWSS_EINVAL (also for NULL and ""). */
BWSS_API int  bwss_domain_check_name (const char *name);

/* The user's runtime directory: the domains' segments, bwssd's status file
 * and lock and the record of the sockets bwssd adopted live there.
 * $XDG_RUNTIME_DIR/bwss, else /run/user/<euid>/bwss, else
 * /dev/shm/bwss-<euid>.d, created 0700 if missing, and used only if it is a
 * directory of this user closed to everyone else that no other user can
 * replace (docs/sockets.md, "Where the files are").  Writes its real path to
 * @path and returns 0; else returns BWSS_EPERM (refused: another user's,
 * open to others, a symbolic link, or under a directory others may change),
 * BWSS_ENOENT (cannot be made), BWSS_EINVAL (@len too short) or
 * BWSS_ENOSPC, with @path naming the directory refused. */
BWSS_API int  bwss_runtime_dir (char *path, size_t len);

/* Writes the path of domain @name's file @suffix in the runtime directory
 * to @path: "" is the segment, ".bwssd" bwssd's status, ".bwssd.lock" its
 * lock.  @name NULL: $BWSS_DOMAIN, else "bwss-<uid>".  Returns 0, BWSS_EINVAL
 * (a bad name, an empty one included, or a suffix other than up to 32 of
 * [A-Za-z0-9._-]) or what bwss_runtime_dir() returns. */
BWSS_API int  bwss_domain_path (const char *name, const char *suffix, char *path, size_t len);

/* Opens the domain @name (NULL: $BWSS_DOMAIN, else "bwss-<uid>"), creating it
 * unless BWSS_DOMAIN_NO_CREATE, in the runtime directory (an unsafe one:
 * what bwss_runtime_dir() returns).  An invalid name, also an empty one or an
 * empty $BWSS_DOMAIN, is BWSS_EINVAL.  A segment that is corrupt, of another
 * version or not owned by this user with mode 0600 is refused (BWSS_EPROTO,
 * BWSS_EVERSION, BWSS_EPERM) and left untouched; one left unfinished by a
 * creator that died is replaced (or, with BWSS_DOMAIN_NO_CREATE, reported
 * as BWSS_ENOENT). */
BWSS_API int  bwss_domain_open (const char *name, unsigned flags, BwssDomain **out);
/* Unregisters this handle's flows (restoring their windows) and closes. */
BWSS_API void bwss_domain_close (BwssDomain *d);

/* Registers the connected TCP socket @fd of this process with @prefs (within
 * the limits of bwss_prefs_check(), else BWSS_EINVAL).  Returns 0 and sets
 * *out; BWSS_EBADF, BWSS_EEXIST, or BWSS_ENOSPC if the table is full.  Never
 * waits for the domain's lock: if it is taken, the flow is written into the
 * domain at a later dispatch (and stays unconstrained until then). */
BWSS_API int  bwss_flow_register (BwssDomain *d, int fd, const BwssPrefs *prefs,
                                  BwssFlow **out);
/* Longest origin of a flow, with its terminating NUL. */
#define BWSS_ORIGIN_MAX 32

/* As bwss_flow_register(), saying how the flow got in and whose socket it
 * is.  @origin (NULL: "registered", what bwss_flow_register() records):
 * 1 to BWSS_ORIGIN_MAX - 1 printable ASCII characters, e.g. "shim" or "rule
 * browser"; bwss-top shows it.  @owner_pid: 0 if @fd is this process's own
 * socket, else the process whose socket @fd duplicates (bwssd adopts other
 * processes' flows through pidfd_getfd(2)); the domain lists the flow under
 * that process's pid and name.  The flow lives as long as this process and
 * @fd: the caller unregisters it when the owner closes its socket.  Returns
 * what bwss_flow_register() does, BWSS_EINVAL for a bad @origin or a
 * negative @owner_pid. */
BWSS_API int  bwss_flow_register_as (BwssDomain *d, int fd, const BwssPrefs *prefs,
                                     const char *origin, pid_t owner_pid, BwssFlow **out);
/* Changes @f's preferences (checked as above); never waits either. */
BWSS_API int  bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs);

/* Puts @f in the group @share names (BWSS_SHARE_FLOW: alone again).
 * BWSS_SHARE_UNIT reads the owner's cgroup once, now (a process that moves
 * to another unit keeps its group until set again).  Returns 0, BWSS_EINVAL
 * (an unknown share), BWSS_ENOENT (reclaimed: its socket was gone; or no
 * cgroup v2 for the owner: @f is left as it was).  Never waits. */
BWSS_API int  bwss_flow_set_share (BwssFlow *f, BwssShare share);

/* Read pacing.  A participant that reads @f's socket itself (the preload
 * shim does) may offer to pace its reads: on a slow link the controller can
 * then hold the flow below one segment per round trip, which no window can
 * (docs/sockets.md).  While the controller asks for a read rate, the
 * socket's receive buffer is fixed to its window (SO_RCVBUF: the kernel's
 * autotuning ends for this socket; when pacing ends or the flow is released
 * it is set back to the largest, net.core.rmem_max), and the participant
 * must ask bwss_flow_read_wait_us() before each read and report what it
 * read with bwss_flow_read_took().  Never waits. */
BWSS_API int  bwss_flow_offer_read_pacing (BwssFlow *f);
/* Returns how long to wait before reading @want bytes from @f's socket, µs:
 * 0 when the flow is not paced or its token bucket (the read rate, at most
 * pace_burst_segments of credit) holds min(@want, a segment); the time until
 * it does otherwise.  Takes no domain lock. */
BWSS_API uint64_t bwss_flow_read_wait_us (BwssFlow *f, size_t want);
/* @n bytes were read from @f's socket (paced or not). */
BWSS_API void bwss_flow_read_took (BwssFlow *f, size_t n);
/* Restores the kernel's window on the socket and frees @f; never waits. */
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
  double    read_rate_bps;  /* its reads are paced at this rate, 0 = read freely */
} BwssFlowStats;

/* Returns 0, or BWSS_EBUSY if the domain's lock was not free within a few
 * milliseconds (then try again later). */
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

/* Returns 0 or BWSS_EBUSY (as bwss_flow_get_stats()).  n_flows counts the
 * flows of live processes only. */
BWSS_API int bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out);

/* Switches sharing off (@suspended true) or on again for the whole domain.
 * Off: flows stay registered, every window goes back to the kernel's and
 * the controller forgets what it learned; on: the controller starts from
 * its initialisation (release, σ ← U, raise), as for a first flow. */
BWSS_API int bwss_domain_set_suspended (BwssDomain *d, bool suspended);

/* One flow of the whole domain, for bwss-top. */
typedef struct {
  pid_t         pid;         /* the socket's owner */
  pid_t         participant; /* the process that registered it (pid, or bwssd for an adopted flow) */
  uint64_t      inode;       /* of the socket */
  char          origin[BWSS_ORIGIN_MAX]; /* bwss_flow_register_as() */
  char          comm[16];    /* of pid */
  char          local[64];   /* "addr:port" / "[addr]:port" */
  char          remote[64];
  BwssFlowStats stats;
} BwssFlowInfo;

/* Copies up to @max flows of the domain (of live processes) into @out;
 * *n_out = number copied.  Returns 0 or BWSS_EBUSY. */
BWSS_API int bwss_domain_list_flows (BwssDomain *d, BwssFlowInfo *out, size_t max,
                                     size_t *n_out);

/* Which group a flow of bwss_domain_list_flow_groups() is in. */
typedef struct {
  BwssShare share;
  uint64_t  group;         /* the key its group shares: 0 alone, else the same
                            * value for every flow of one group */
  uint32_t  members;       /* listed flows of its group, itself included */
  uint32_t  reserved[5];
} BwssFlowGroup;

/* As bwss_domain_list_flows(), with each flow's group in @groups[i] (@max
 * entries too).  Returns 0, BWSS_EINVAL or BWSS_EBUSY. */
BWSS_API int bwss_domain_list_flow_groups (BwssDomain *d, BwssFlowInfo *out,
                                           BwssFlowGroup *groups, size_t max,
                                           size_t *n_out);

/* Does this process's share of the work at @now_us (CLOCK_MONOTONIC µs):
 * applies published windows to its own sockets, restores them if the
 * controller is gone, takes the controller role if free and allowed, and if
 * controller, measures and runs the laws; writes what registrations and
 * preference changes could not write before; follows the domain to a fresh
 * segment if it moved (and moves it, if its lock is stuck and this handle
 * may create it).  @now_us must be CLOCK_MONOTONIC (0: read it): heartbeats
 * on another clock look dead or forged to the other processes.  Waits for
 * the lock a few milliseconds at most, and only if this handle may control.
 *
 * Returns the µs until it wants to run again: the control period (the
 * laws' min_phi_us, 10 ms) while this process has flows or controls the
 * domain's; with none, the time to the next whole second of
 * CLOCK_MONOTONIC (at most 1 s, so idle processes wake together).  Run it
 * then, and at once when bwss_domain_get_fd() is readable: a process with
 * no flow costs one wakeup a second. */
BWSS_API uint64_t bwss_domain_dispatch (BwssDomain *d, uint64_t now_us);

/* Returns a file descriptor that becomes readable when @d wants
 * bwss_domain_dispatch() before the time it last returned: a flow was
 * registered or its preferences changed (from any thread) while the domain
 * was idle.  bwss_domain_dispatch() reads it empty.  Owned by the domain
 * (valid until the last handle of this domain in this process is closed;
 * do not read or close it): poll it for input, with the dispatch's delay as
 * the timeout.  Returns BWSS_EINVAL for NULL, or BWSS_ENOMEM if the domain
 * has none (then the delay alone wakes the dispatch). */
BWSS_API int bwss_domain_get_fd (BwssDomain *d);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_DOMAIN_H */

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/domain.h — BWSS on real sockets: the per-user domain and its flows.
 *
 * A domain is one user's flows under one controller: that user's bwssd,
 * the only process that runs the control laws (bwss/control.h).  Every
 * other process is its client: it hands bwssd its connected TCP sockets
 * (the sockets themselves, over the domain's Unix socket in the user's
 * runtime directory) with preferences; bwssd measures them, sets their
 * windows and sends back what the client needs (a paced flow's read rate,
 * statistics).  Where no bwssd runs, the first client that may starts one
 * (`bwssd --autostart`: $BWSS_BWSSD, else the installed bwssd), which
 * leaves once its last client is gone.  If bwssd dies or stops answering,
 * every client gives its own sockets back to the kernel (fail-open), and
 * hands them over again once a bwssd answers (docs/sockets.md).
 *
 * bwssd runs the delay loop unless $BWSS_LOOP, in the environment it was
 * started with, says "paper" (the paper's throughput-only loop).
 *
 * Threads: a BwssDomain may be used from several threads.  Nothing runs by
 * itself: call bwss_domain_dispatch() when it asks (its return value, and
 * bwss_domain_get_fd()), attach it to a GLib main context
 * (bwss/bwss-glib.h), or let it run its own thread (BWSS_DOMAIN_THREAD).
 *
 * Never blocked by bwssd: registering, changing preferences and
 * unregistering send a message and never wait, for an answer or for room
 * (a refusal comes later: the flow's calls then return BWSS_ENOENT); what
 * bwssd has not read yet waits in this process, in order, and goes out as
 * bwssd reads it (bwss_domain_dispatch()): a burst of flows, or a bwssd
 * slow on a loaded machine, delays their hand-over and ends nothing.
 * Reading (statistics, the flow list) waits for bwssd's answer a fraction
 * of a second at most and then fails with BWSS_EBUSY.
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
  BWSS_DOMAIN_NO_CREATE     = 1u << 0, /* never start bwssd: BWSS_ENOENT if none runs */
  BWSS_DOMAIN_NO_CONTROLLER = 1u << 1, /* accepted, no effect: only bwssd controls */
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

/* The user's runtime directory: the domains' sockets, bwssd's lock and
 * the record of the sockets bwssd adopted live there.
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
 * to @path: ".sock" is bwssd's socket, ".bwssd.lock" its lock, ".suspended" says sharing is off.  @name NULL: $BWSS_DOMAIN,
 * else "bwss-<uid>".  Returns 0, BWSS_EINVAL (a bad name, an empty one
 * included, or a suffix other than up to 32 of [A-Za-z0-9._-]) or what
 * bwss_runtime_dir() returns. */
BWSS_API int  bwss_domain_path (const char *name, const char *suffix, char *path, size_t len);

/* Opens the domain @name (NULL: $BWSS_DOMAIN, else "bwss-<uid>"): connects
 * to its bwssd, starting one if none runs unless BWSS_DOMAIN_NO_CREATE (it
 * waits up to 2 s for it).  An invalid name, also an empty one or an empty
 * $BWSS_DOMAIN, is BWSS_EINVAL; an unsafe runtime directory what
 * bwss_runtime_dir() returns.  With BWSS_DOMAIN_NO_CREATE and no bwssd:
 * BWSS_ENOENT.  Without it, a bwssd that cannot be started (yet) is tried
 * again from the dispatch, its flows unconstrained meanwhile. */
BWSS_API int  bwss_domain_open (const char *name, unsigned flags, BwssDomain **out);
/* Unregisters this handle's flows (restoring their windows) and closes. */
BWSS_API void bwss_domain_close (BwssDomain *d);

/* Hands the connected TCP socket @fd of this process to bwssd with @prefs
 * (within the limits of bwss_prefs_check(), else BWSS_EINVAL).  Returns 0
 * and sets *out; BWSS_EBADF, BWSS_EEXIST (this socket already registered
 * here; an fd number whose registered socket was closed is not).  Never
 * waits: if bwssd refuses it (the domain full, or the socket already
 * there), the flow stays unconstrained and its calls return BWSS_ENOENT.
 * Unregister it before closing @fd: bwssd holds a duplicate of the socket
 * (one closed without a word is noticed within a second). */
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
 * @fd: the caller unregisters it when the owner closes its socket (bwssd
 * lists @owner_pid only if it is a process of this user, and groups the
 * flow with this process's).  Returns what bwss_flow_register() does,
 * BWSS_EINVAL for a bad @origin or a negative @owner_pid. */
BWSS_API int  bwss_flow_register_as (BwssDomain *d, int fd, const BwssPrefs *prefs,
                                     const char *origin, pid_t owner_pid, BwssFlow **out);
/* Changes @f's preferences (checked as above); never waits either. */
BWSS_API int  bwss_flow_set_prefs (BwssFlow *f, const BwssPrefs *prefs);

/* Puts @f in the group @share names (BWSS_SHARE_FLOW: alone again).
 * BWSS_SHARE_UNIT reads the owner's cgroup once, now (a process that moves
 * to another unit keeps its group until set again).  Returns 0, BWSS_EINVAL
 * (an unknown share, or BWSS_SHARE_STREAM: bwss_flow_set_stream() names a
 * stream), BWSS_ENOENT (reclaimed: its socket was gone; or no cgroup v2 for
 * the owner: @f is left as it was).  Never waits. */
BWSS_API int  bwss_flow_set_share (BwssFlow *f, BwssShare share);

/* Puts @f in stream @stream of this process (BWSS_SHARE_STREAM): the flows
 * a process marks with one non-zero number are one stream to the laws, one
 * flow of their largest priority, minimum and weight whose target is split
 * among them (bwss_allocate_grouped()), apart from the process's other
 * flows and streams: a player's video and its audio, each over several
 * connections, are two streams, each held to its own minimum.  The numbers
 * are the process's own (another process's 1 is another stream).  0: alone
 * again (BWSS_SHARE_FLOW); bwss_flow_set_share() leaves the stream.
 * Returns 0, BWSS_EINVAL (@f NULL or inherited across fork) or BWSS_ENOENT
 * (reclaimed).  Never waits. */
BWSS_API int  bwss_flow_set_stream (BwssFlow *f, uint32_t stream);

/* Read pacing.  A client that reads @f's socket itself (the preload shim
 * does) may offer to pace its reads: on a slow link the controller can
 * then hold the flow below one segment per round trip, which no window can
 * (docs/sockets.md).  While the controller asks for a read rate, the
 * socket's receive buffer is fixed to its window (SO_RCVBUF: the kernel's
 * autotuning ends for this socket; when pacing ends or the flow is released
 * it is set back to the largest, net.core.rmem_max), and the client
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
/* Tells bwssd how late @f's data is for the stream it carries, as a player
 * measures it (bwss/late.h; bwsshttpsrc reports it with its statistics):
 * @late_fraction (0 to 1) of the stream's packets late with 1 s of
 * prebuffering, @required_prebuffer_s (>= 0) the prebuffer with none late.
 * The flow's statistics carry the last report (bwss-top shows it).
 * Returns 0, BWSS_EINVAL (out of range) or BWSS_ENOENT.  Never waits. */
BWSS_API int bwss_flow_report_late (BwssFlow *f, double late_fraction, double required_prebuffer_s);
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
  double    late_fraction;  /* its client's late-packet figure (bwss_flow_report_late()):
                             * the fraction of its packets late with 1 s of prebuffering;
                             * negative if none was reported */
  double    required_prebuffer_s; /* ... the prebuffer with none late, s; negative if none */
} BwssFlowStats;

/* Returns 0, BWSS_ENOENT (bwssd refused the flow), or BWSS_EBUSY if bwssd
 * did not answer within a fraction of a second (then try again later). */
BWSS_API int bwss_flow_get_stats (BwssFlow *f, BwssFlowStats *out);

typedef struct {
  pid_t     controller_pid; /* bwssd's; 0 if none runs */
  BwssPhase phase;
  double    sigma_bps;
  double    aggregate_bps;
  uint32_t  n_flows;
  bool      suspended;      /* sharing is switched off (bwss_domain_set_suspended) */
  BwssLoop  loop;           /* the σ loop the controller runs ($BWSS_LOOP) */
  double    queue_us;       /* delay loop: the link's queueing delay, negative unknown */
  double    queue_target_us;/* delay loop: its target */
} BwssDomainStats;

/* Returns 0 (all zero, phase IDLE, if no bwssd runs) or BWSS_EBUSY (as
 * bwss_flow_get_stats()).  n_flows counts the flows of live processes only. */
BWSS_API int bwss_domain_get_stats (BwssDomain *d, BwssDomainStats *out);

/* Switches sharing off (@suspended true) or on again for the whole domain
 * (bwssd keeps it so across its restarts).  Off: flows stay registered,
 * every window goes back to the kernel's and the controller forgets what it
 * learned; on: the controller starts from its initialisation (release,
 * σ ← U, raise), as for a first flow.  Returns 0, BWSS_ENOENT (no bwssd
 * runs) or BWSS_EBUSY. */
BWSS_API int bwss_domain_set_suspended (BwssDomain *d, bool suspended);

/* One flow of the whole domain, for bwss-top. */
typedef struct {
  pid_t         pid;         /* the socket's owner */
  pid_t         participant; /* the client that handed it over (bwssd for an adopted flow) */
  uint64_t      inode;       /* of the socket */
  char          origin[BWSS_ORIGIN_MAX]; /* bwss_flow_register_as() */
  char          comm[16];    /* of pid */
  char          local[64];   /* "addr:port" / "[addr]:port" */
  char          remote[64];
  BwssFlowStats stats;
} BwssFlowInfo;

/* Copies up to @max flows of the domain (of live processes) into @out;
 * *n_out = number copied (0 if no bwssd runs).  Returns 0 or BWSS_EBUSY. */
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

/* Longest status bwss_domain_get_daemon_status() returns, bytes. */
#define BWSS_DAEMON_STATUS_MAX (1024 * 1024)

/* Writes to *@out bwssd's own status, a JSON object (free() it): {pid,
 * rules (its rules file, null if built in), adoption (whether and how it
 * adopts flows no client handed over), adopted (how many it holds),
 * not_adopted: [{pid, command, remote, reason}], not_adopted_omitted (how
 * many more sockets it left alone than the list holds)} (docs/adopt.md).
 * Returns 0, BWSS_ENOENT (no bwssd runs), BWSS_EBUSY, BWSS_ENOMEM or
 * BWSS_EPROTO (*@out NULL then). */
BWSS_API int bwss_domain_get_daemon_status (BwssDomain *d, char **out);

/* Does this process's share of the work at @now_us (CLOCK_MONOTONIC µs, 0:
 * read it): reads what bwssd sent (read rates, refusals), sends what waits
 * for bwssd to read (hand-overs, preferences), asks it for a sign
 * of life while flows are handed over and gives them back to the kernel if
 * it does not answer, connects again (and starts bwssd, if allowed) when the
 * connection ended.  Never waits.
 *
 * Returns the µs until it wants to run again: the control period (the
 * laws' min_phi_us, 10 ms) while a flow's reads are paced here or messages
 * wait for bwssd to read them; with flows handed over, the next whole half
 * second of CLOCK_MONOTONIC; else the next whole second (so idle processes
 * wake together).  Run it then, and at once when bwss_domain_get_fd() is
 * readable (bwssd sent something, or made room for what waits): a process
 * whose flows bwssd controls wakes twice a second. */
BWSS_API uint64_t bwss_domain_dispatch (BwssDomain *d, uint64_t now_us);

/* Returns a file descriptor that becomes readable when @d wants
 * bwss_domain_dispatch() before the time it last returned: bwssd sent
 * something, a flow was registered (from any thread), or the connection
 * has room again for messages that wait.
 * bwss_domain_dispatch() reads it empty.  Owned by the domain
 * (valid until the last handle of this domain in this process is closed;
 * do not read or close it): poll it for input, with the dispatch's delay as
 * the timeout.  Returns BWSS_EINVAL for NULL, or BWSS_ENOMEM if the domain
 * has none (then the delay alone wakes the dispatch). */
BWSS_API int bwss_domain_get_fd (BwssDomain *d);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_DOMAIN_H */

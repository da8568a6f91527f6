/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sys.h — the system layer of libbwss, private to the library: everything
 * that asks the kernel something or sets something in it, and nothing else.
 *
 *   the clock    CLOCK_MONOTONIC in µs: the clock bwss_domain_dispatch(), the
 *                controller's heartbeat and the shim's read pacing use
 *   knobs.c      a socket's TCP receive-side knobs (the window clamp, the
 *                receive buffer, TCP_INFO) and the kernel's view of every TCP
 *                socket of the namespace (sock_diag dumps and exact lookups)
 *   proc.c       what /proc says about a process or a thread (alive, same
 *                process as before, stopped, whose, maps a file)
 *
 * The laws (libbwss/lib/laws/) never see this header: the build gives them no
 * include path to it (libbwss/meson.build).
 */
#ifndef BWSS_SYS_H
#define BWSS_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <linux/inet_diag.h>

/* ---- the clock -------------------------------------------------------- */

static inline uint64_t
bwss_clock_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- socket knobs and sock_diag (knobs.c) ------------------------------ */

typedef struct {
  uint64_t inode;          /* socket inode: the key across processes */
  uint32_t uid;
  uint64_t bytes_received; /* tcpi_bytes_received */
  uint32_t rtt_us;         /* tcpi_rcv_rtt, else tcpi_rtt */
  uint32_t min_rtt_us;     /* tcpi_min_rtt: the handshake's RTT for a receiver */
  uint32_t mss;            /* tcpi_rcv_mss */
  uint32_t window_clamp;   /* tcpi_rcv_ssthresh, what the clamp bounds */
  uint32_t unread;         /* bytes received, not yet read (idiag_rqueue; dump only) */
  uint8_t  state;          /* TCP_ESTABLISHED, … */
  uint8_t  family;         /* AF_INET, AF_INET6 (sock_diag only) */
  struct inet_diag_sockid id; /* sock_diag only: what names it in an exact query */
  char     remote[64];     /* "addr:port", filled by knob_dump only */
} KnobInfo;

/* Returns true if @fd is a connected (ESTABLISHED) TCP socket over IPv4 or
 * IPv6; false for UDP, UNIX, listening or not-yet-connected sockets. */
bool knob_is_connected_tcp (int fd);

/* Returns true if @fd still names the socket @inode: an fd number is reused
 * once its socket is closed. */
bool knob_fd_is (int fd, uint64_t inode);

/* Fills @out from TCP_INFO of @fd (inode from fstat).  0 or -errno. */
int knob_read_info (int fd, KnobInfo *out);

/* The window clamp, bytes.  0 or -errno.  Setting needs an established
 * socket (never before connect: the window scale is chosen from it). */
int knob_get_clamp (int fd, uint32_t *bytes);
int knob_set_clamp (int fd, uint32_t bytes);

/* The receive buffer (SO_RCVBUF), bytes: set ends the kernel's autotuning
 * for the socket for good (the kernel doubles the value for its overhead);
 * restore sets the largest the kernel allows an unprivileged process
 * (net.core.rmem_max), the nearest to autotuning's room.  0 or -errno. */
int knob_set_rcvbuf (int fd, uint32_t bytes);
int knob_restore_rcvbuf (int fd);

/* "addr:port" / "[addr]:port" of the local and remote ends of @fd. */
void knob_endpoints (int fd, char *local, size_t local_len, char *remote, size_t remote_len);

/* sock_diag: one dump of every TCP socket of this network namespace. */
typedef struct {
  KnobInfo *items;
  size_t    n, cap;
} KnobDump;

/* Dumps the IPv4 and IPv6 TCP sockets of the namespace, in inode order.
 * 0 or -errno. */
int  knob_dump (KnobDump *dump);
/* Asks the kernel about each socket of @want (entries of an earlier dump)
 * by its id, one exact lookup each instead of a walk of the whole
 * connection table (which a dump is, however few sockets we want: ~1 ms a
 * family on a desktop's 256k-bucket table).  @out gets the sockets still
 * there under the same inode, in inode order, in the states a dump lists
 * and others (check ->state).  0 or -errno. */
int  knob_query (const KnobDump *want, KnobDump *out);
/* Fills @out with what names @fd's socket to sock_diag — inode, uid,
 * family and the id an exact query needs (addresses, ports, interface,
 * cookie) — without walking the connection table: @out can go to
 * knob_query() as it is.  0 or -errno (not an IPv4/IPv6 socket, not
 * connected). */
int  knob_diag_id (int fd, KnobInfo *out);
/* Appends @k to @d (0 or -ENOMEM); puts @d in inode order again. */
int  knob_dump_push (KnobDump *d, const KnobInfo *k);
void knob_dump_sort (KnobDump *d);
/* Returns the entry with @inode, or NULL (a binary search). */
const KnobInfo *knob_dump_find (const KnobDump *dump, uint64_t inode);
void knob_dump_clear (KnobDump *dump);

/* ---- procfs (proc.c) ---------------------------------------------------- */

/* Returns the start time of @pid (clock ticks since boot, proc(5) field
 * 22), 0 if unknown. */
uint64_t proc_starttime (pid_t pid);

/* Returns the state letter of @pid (proc(5) field 3: 'R', 'S', 'D', 'T'
 * stopped, 't' traced, 'Z' zombie, ...), or 0 if there is no such task. */
char proc_state (pid_t pid);

/* Returns true if @pid is a live (not zombie) process this user may signal
 * and, unless @starttime is 0 (unknown), started at @starttime. */
bool proc_alive (pid_t pid, uint64_t starttime);

/* Returns 1 if task @tid belongs to another user than this process's
 * effective user, 0 if to this user, -1 if unknown (no such task). */
int proc_foreign (pid_t tid);

/* Returns 1 if task @tid maps the file @dev:@ino, 0 if it does not, -1 if
 * that cannot be known (no permission to read its maps). */
int proc_maps_file (pid_t tid, dev_t dev, ino_t ino);

/* Returns true if @tid is a thread of this process. */
bool proc_is_own_thread (pid_t tid);

#endif /* BWSS_SYS_H */

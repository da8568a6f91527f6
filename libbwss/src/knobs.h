/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * knobs.h — the kernel's TCP receive-side knobs, and the kernel's view of
 * every TCP socket of the namespace (sock_diag).  Internal to libbwss.
 */
#ifndef BWSS_KNOBS_H
#define BWSS_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>

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
/* Appends @k to @d (0 or -ENOMEM); puts @d in inode order again. */
int  knob_dump_push (KnobDump *d, const KnobInfo *k);
void knob_dump_sort (KnobDump *d);
/* Returns the entry with @inode, or NULL (a binary search). */
const KnobInfo *knob_dump_find (const KnobDump *dump, uint64_t inode);
void knob_dump_clear (KnobDump *dump);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ownsockets.h — this process's established TCP connections to given
 * servers, found without help from the code that made them: every fd of the
 * process, its peer (getpeername) and its TCP_INFO, through libbwss's system
 * layer (sys.h: proc_each_fd, knob_is_connected_tcp, knob_read_info).  adaptivedemux2
 * downloads with a libsoup session of its own; this is how its connections
 * are found.
 */
#ifndef BWSS_SRC_OWNSOCKETS_H
#define BWSS_SRC_OWNSOCKETS_H

#include <gio/gio.h>

typedef struct {
  int     fd;
  guint64 inode;              /* of the socket, to tell a reused fd number */
  guint64 bytes_received;     /* tcpi_bytes_received */
  guint32 idle_ms;            /* since the last data arrived (tcpi_last_data_recv) */
  guint32 sent_idle_ms;       /* since we last sent data, a request (tcpi_last_data_sent) */
  guint32 rtt_us;             /* its receiver RTT (tcpi_rcv_rtt, else tcpi_rtt); 0 unknown */
  guint32 mss;                /* the sender's segment, the laws' own
                               * (bwss_sender_segment(): tcpi_rcv_mss,
                               * tcpi_advmss) */
} OwnSocket;

/* Returns the established TCP sockets of this process whose peer address
 * and port are one of @peers (GInetSocketAddress*), as an array of
 * OwnSocket. */
GArray *own_sockets_to (GPtrArray *peers);

#endif

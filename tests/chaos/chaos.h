/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos.h — what every downloading participant of the chaos test publishes
 * about itself, in a file every process maps (one record each).  Written by
 * the participant, read by the driver; each field is one aligned word.
 */
#ifndef BWSS_CHAOS_H
#define BWSS_CHAOS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CHAOS_MAX_PARTICIPANTS 16
/* Segment size of the test's connections, both ways: Ethernet's, so that
 * windows of a few segments mean what they mean on a real link (loopback's
 * own MTU is 64 KiB). */
#define CHAOS_MSS 1448

typedef struct {
  int32_t  pid;            /* the process that owns the socket */
  uint32_t port;           /* local port of its connection now, 0 between two */
  uint64_t last_read_us;   /* CLOCK_MONOTONIC of its last read that brought data */
  uint64_t bytes;          /* received in all */
  uint64_t downloads;      /* finished */
  uint32_t orig_clamp;     /* TCP_WINDOW_CLAMP before anything touched the socket */
  uint32_t clamp;          /* TCP_WINDOW_CLAMP at its last read */
} ChaosStatus;

static inline uint64_t
chaos_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

static inline uint32_t
chaos_clamp_of (int fd)
{
  int v = 0;
  socklen_t len = sizeof v;
  getsockopt (fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &len);
  return (uint32_t) v;
}

/* Connects to 127.0.0.1:@port with the test's segment size and publishes
 * the connection (port, clamp before anything touched it) in @me.  Returns
 * the socket, or -1. */
static inline int
chaos_connect (int port, ChaosStatus *me)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  int mss = CHAOS_MSS;
  setsockopt (fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
  if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0) {
    close (fd);
    return -1;
  }
  struct sockaddr_in l;
  socklen_t ll = sizeof l;
  getsockname (fd, (struct sockaddr *) &l, &ll);
  __atomic_store_n (&me->orig_clamp, chaos_clamp_of (fd), __ATOMIC_RELAXED);
  __atomic_store_n (&me->clamp, chaos_clamp_of (fd), __ATOMIC_RELAXED);
  __atomic_store_n (&me->port, ntohs (l.sin_port), __ATOMIC_RELEASE);
  return fd;
}

/* Publishes a read of @n bytes on @fd. */
static inline void
chaos_note_read (ChaosStatus *me, int fd, size_t n)
{
  __atomic_add_fetch (&me->bytes, (uint64_t) n, __ATOMIC_RELAXED);
  __atomic_store_n (&me->clamp, chaos_clamp_of (fd), __ATOMIC_RELAXED);
  __atomic_store_n (&me->last_read_us, chaos_now_us (), __ATOMIC_RELEASE);
}

/* Publishes that the connection is closed (after close()). */
static inline void
chaos_note_closed (ChaosStatus *me)
{
  __atomic_store_n (&me->port, 0, __ATOMIC_RELEASE);
  __atomic_add_fetch (&me->downloads, 1, __ATOMIC_RELAXED);
}

#endif

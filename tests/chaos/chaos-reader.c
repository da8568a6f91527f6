/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos-reader — a download client for the chaos test that knows nothing of
 * BWSS: run under bwss-run, the preload shim registers its sockets from
 * inside its read() calls, applies windows from them and unregisters in
 * close().  `chaos-reader PORT STATUS INDEX`: downloads from 127.0.0.1:PORT
 * again and again, publishing its progress in record INDEX of the file
 * STATUS (chaos.h).  It dies with its parent (bwss-run).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "chaos.h"

static uint64_t
mono_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

static uint32_t
clamp_of (int fd)
{
  int v = 0;
  socklen_t len = sizeof v;
  getsockopt (fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &len);
  return (uint32_t) v;
}

int
main (int argc, char **argv)
{
  if (argc != 4) {
    fprintf (stderr, "usage: chaos-reader PORT STATUS INDEX\n");
    return 2;
  }
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  int index = atoi (argv[3]);
  int sfd = open (argv[2], O_RDWR);
  ChaosStatus *all = mmap (NULL, sizeof (ChaosStatus) * CHAOS_MAX_PARTICIPANTS,
                           PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
  if (sfd < 0 || all == MAP_FAILED || index < 0 || index >= CHAOS_MAX_PARTICIPANTS)
    return 1;
  ChaosStatus *me = &all[index];
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (argv[1])),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  __atomic_store_n (&me->pid, getpid (), __ATOMIC_RELEASE);
  static char buf[65536];
  for (;;) {
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    int mss = CHAOS_MSS;
    setsockopt (fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
    if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0) {
      close (fd);
      usleep (10000);
      continue;
    }
    struct sockaddr_in l;
    socklen_t ll = sizeof l;
    getsockname (fd, (struct sockaddr *) &l, &ll);
    __atomic_store_n (&me->orig_clamp, clamp_of (fd), __ATOMIC_RELAXED);
    __atomic_store_n (&me->clamp, clamp_of (fd), __ATOMIC_RELAXED);
    __atomic_store_n (&me->port, ntohs (l.sin_port), __ATOMIC_RELEASE);
    ssize_t n;
    while ((n = read (fd, buf, sizeof buf)) > 0) {        /* the shim's hook */
      __atomic_add_fetch (&me->bytes, (uint64_t) n, __ATOMIC_RELAXED);
      __atomic_store_n (&me->clamp, clamp_of (fd), __ATOMIC_RELAXED);
      __atomic_store_n (&me->last_read_us, mono_us (), __ATOMIC_RELEASE);
    }
    close (fd);                                            /* the shim's hook */
    __atomic_store_n (&me->port, 0, __ATOMIC_RELEASE);
    __atomic_add_fetch (&me->downloads, 1, __ATOMIC_RELAXED);
  }
}

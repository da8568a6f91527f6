/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chaos-reader — a download client for the chaos test that knows nothing of
 * BWSS: run under bwss-run, the preload shim registers its sockets from
 * inside its read() calls, applies windows from them and unregisters in
 * close().  `chaos-reader PORT STATUS INDEX`: downloads from 127.0.0.1:PORT
 * again and again, publishing its progress in record INDEX of the file
 * STATUS (chaos.h).  It dies with its parent (bwss-run).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "chaos.h"

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
  __atomic_store_n (&me->pid, getpid (), __ATOMIC_RELEASE);
  static char buf[65536];
  for (;;) {
    int fd = chaos_connect (atoi (argv[1]), me);
    if (fd < 0) {
      usleep (10000);
      continue;
    }
    ssize_t n;
    while ((n = read (fd, buf, sizeof buf)) > 0)            /* the shim's hook */
      chaos_note_read (me, fd, (size_t) n);
    close (fd);                                            /* the shim's hook */
    chaos_note_closed (me);
  }
}

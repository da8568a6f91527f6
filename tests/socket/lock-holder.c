/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock-holder — a participant stopped inside the domain's lock, for the
 * tools and chaos tests: `lock-holder DOMAIN` takes the segment lock of the
 * domain DOMAIN (its file: bwss_domain_path()), prints "locked", and stops itself (SIGSTOP, what Ctrl-Z
 * or a debugger does to any participant).  Continued, it unlocks and exits.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "segment.h"

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: lock-holder DOMAIN\n");
    return 2;
  }
  char path[PATH_MAX];
  if (bwss_domain_path (argv[1], "", path, sizeof path) != 0) {
    fprintf (stderr, "lock-holder: no path for domain %s\n", argv[1]);
    return 1;
  }
  int fd = open (path, O_RDWR);
  if (fd < 0) {
    perror (path);
    return 1;
  }
  Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (s == MAP_FAILED || pthread_mutex_lock (&s->lock) != 0) {
    fprintf (stderr, "lock-holder: cannot lock %s\n", path);
    return 1;
  }
  printf ("locked\n");
  fflush (stdout);
  raise (SIGSTOP);
  pthread_mutex_unlock (&s->lock);
  return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-lab-sample — the lab's recorder.  Every --period ms it asks the
 * kernel (sock_diag) for every TCP socket of the namespace and prints, for
 * each whose received byte count moved, one line
 *     <t_seconds CLOCK_MONOTONIC> <remote addr:port> <bytes_received> <socket inode> <rcv_rtt_us>
 * It sees every client the same way — plain, under bwss-run, under trickle —
 * without touching them (the paper's throughput library hooked reads; the
 * kernel's count is the arrival at the receiver, which is what the late-packet
 * metric is about; its receiver RTT is what the flow's packets waited, the
 * queue included).
 *
 * It links only the sys layer's socket dump, none of the domain or the laws:
 * it runs in every mode, the baseline modes (plain TCP, the ideal router)
 * included, so what it is built from is part of a baseline run's key
 * (tests/lab/bwsslab/baseline.py).  The domain's state in the bwss modes is
 * bwss-lab-domain's.
 *
 * Runs until SIGTERM/SIGINT or --duration seconds.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sys.h"

#define MAX_SEEN 4096

static volatile sig_atomic_t stop;

static void
on_signal (int sig)
{
  (void) sig;
  stop = 1;
}

static void
usage (void)
{
  fprintf (stderr, "usage: bwss-lab-sample [--period MS] [--duration S]\n");
  exit (2);
}

int
main (int argc, char **argv)
{
  double period_ms = 50, duration = 0;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc)
      usage ();
    if (strcmp (argv[i], "--period") == 0)
      period_ms = atof (argv[i + 1]);
    else if (strcmp (argv[i], "--duration") == 0)
      duration = atof (argv[i + 1]);
    else
      usage ();
  }
  if (period_ms < 1 || period_ms > 10000 || duration < 0) {
    fprintf (stderr, "bwss-lab-sample: bad --period or --duration\n");
    return 2;
  }
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);

  static struct { uint64_t inode, bytes; } seen[MAX_SEEN];
  size_t n_seen = 0;
  KnobDump dump = { 0 };
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  while (!stop) {
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    double t = ts.tv_sec + ts.tv_nsec / 1e9;
    if (duration > 0 && t - (start.tv_sec + start.tv_nsec / 1e9) > duration)
      break;
    if (knob_dump (&dump) == 0) {
      for (size_t i = 0; i < dump.n; i++) {
        const KnobInfo *k = &dump.items[i];
        if (k->bytes_received == 0)
          continue;
        size_t j;
        for (j = 0; j < n_seen && seen[j].inode != k->inode; j++)
          ;
        if (j < n_seen && seen[j].bytes == k->bytes_received)
          continue;
        if (j == n_seen && n_seen < MAX_SEEN)
          seen[n_seen++].inode = k->inode;
        if (j < MAX_SEEN)
          seen[j].bytes = k->bytes_received;
        printf ("%.6f %s %llu %llu %u\n", t, k->remote, (unsigned long long) k->bytes_received,
                (unsigned long long) k->inode, k->rtt_us);
      }
    }
    fflush (stdout);
    struct timespec sl = { .tv_sec = 0, .tv_nsec = (long) (period_ms * 1e6) };
    if (period_ms >= 1000) {
      sl.tv_sec = (time_t) (period_ms / 1000);
      sl.tv_nsec = (long) ((period_ms - sl.tv_sec * 1000) * 1e6);
    }
    nanosleep (&sl, NULL);
  }
  knob_dump_clear (&dump);
  return 0;
}

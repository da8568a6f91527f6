/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-lab-domain — the lab's reader of the controller's state.  Every
 * --period ms it reads the BWSS domain --domain NAME, if one exists, without
 * joining it, and prints one line
 *     D <t_seconds CLOCK_MONOTONIC> <sigma_bps> <queue_us> <queue_target_us> <phase>
 * (sigma and queue negative, phase "none", while no controller runs).
 *
 * The lab starts it in the modes that run bwss only.  It is apart from the
 * recorder (bwss-lab-sample) so that the recorder, which runs in every mode,
 * links none of the domain: a baseline run's key (the files its programs are
 * built from, tests/lab/bwsslab/baseline.py) then does not change with the
 * domain or the parameters it reads.
 *
 * Runs until SIGTERM/SIGINT or --duration seconds.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bwss/domain.h>

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
  fprintf (stderr, "usage: bwss-lab-domain --domain NAME [--period MS] [--duration S]\n");
  exit (2);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Prints the domain's line, opening the domain on first sight. */
static void
sample_domain (const char *name, BwssDomain **d, double t)
{
  if (*d == NULL && bwss_domain_open (name, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, d) != 0)
    return;
  BwssDomainStats st;
  if (bwss_domain_get_stats (*d, &st) != 0)
    return;
  bool live = st.controller_pid != 0;
  printf ("D %.6f %.0f %.0f %.0f %s\n", t, live ? st.sigma_bps : -1.0,
          live ? st.queue_us : -1.0, live ? st.queue_target_us : -1.0,
          live ? bwss_phase_name (st.phase) : "none");
}

int
main (int argc, char **argv)
{
  double period_ms = 50, duration = 0;
  const char *domain = NULL;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc)
      usage ();
    if (strcmp (argv[i], "--period") == 0)
      period_ms = atof (argv[i + 1]);
    else if (strcmp (argv[i], "--duration") == 0)
      duration = atof (argv[i + 1]);
    else if (strcmp (argv[i], "--domain") == 0)
      domain = argv[i + 1];
    else
      usage ();
  }
  if (domain == NULL || domain[0] == '\0')
    usage ();
  if (period_ms < 1 || period_ms > 10000 || duration < 0) {
    fprintf (stderr, "bwss-lab-domain: bad --period or --duration\n");
    return 2;
  }
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);

  BwssDomain *d = NULL;
  double start = now_s ();
  while (!stop) {
    double t = now_s ();
    if (duration > 0 && t - start > duration)
      break;
    sample_domain (domain, &d, t);
    fflush (stdout);
    struct timespec sl = { .tv_sec = (time_t) (period_ms / 1000),
                           .tv_nsec = (long) ((period_ms - (time_t) (period_ms / 1000) * 1000) * 1e6) };
    nanosleep (&sl, NULL);
  }
  if (d)
    bwss_domain_close (d);
  return 0;
}

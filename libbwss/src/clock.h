/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clock.h — the one clock of the socket layer: CLOCK_MONOTONIC in µs, the
 * clock bwss_domain_dispatch() and the controller's heartbeat use. */
#ifndef BWSS_CLOCK_H
#define BWSS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
bwss_clock_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

#endif

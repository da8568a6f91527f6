/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-controller — cost of one controller tick (σ loop + TRAS + every FCS)
 * and of one observe() per flow, for 1 to 10 000 flows.  A benchmark, not a
 * test: `meson test -C build --benchmark` or run it directly.
 *
 * The flows are fed a steady synthetic byte count so every part of the loop
 * runs (estimates complete, the FCS decides, σ judges); the clock is a
 * simulated one advancing 10 ms per tick, the real controller's period.
 */
#include <stdio.h>
#include <glib.h>
#include <bwss/control.h>

#define TICK_US 10000ull

static void
bench (unsigned n_flows, unsigned ticks)
{
  BwssController *c;
  if (bwss_controller_new (NULL, &c) != 0)
    g_error ("controller");
  for (unsigned i = 0; i < n_flows; i++) {
    BwssPrefs p = { .priority = (int32_t) (i % 3), .min_rate_bps = (i % 5 == 0) ? 100e3 : 0,
                    .weight = 1 + i % 4 };
    bwss_controller_add_flow (c, i, &p, 0);
  }
  uint64_t now = 0;
  gint64 spent = 0;
  for (unsigned t = 0; t < ticks; t++) {
    now += TICK_US;
    gint64 start = g_get_monotonic_time ();
    for (unsigned i = 0; i < n_flows; i++) {
      /* 1 Mbit/s each, 40 ms RTT */
      BwssSample s = { .now_us = now, .bytes_received = now / 8, .rtt_us = 40000, .mss = 1448 };
      bwss_controller_observe (c, i, &s);
    }
    bwss_controller_tick (c, now);
    spent += g_get_monotonic_time () - start;
  }
  BwssControllerStats st;
  bwss_controller_stats (c, &st);
  printf ("%5u flows: %8.2f µs per 10 ms tick (observe all + tick), %5.2f %% of one core; "
          "phase %s\n", n_flows, (double) spent / ticks, 100.0 * spent / ticks / TICK_US,
          bwss_phase_name (st.phase));
  bwss_controller_free (c);
}

int
main (void)
{
  bench (1, 20000);
  bench (10, 20000);
  bench (100, 5000);
  bench (1000, 500);
  bench (10000, 50);
  return 0;
}

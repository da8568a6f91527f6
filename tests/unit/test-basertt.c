/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-basertt.c — the base RTT filter (basertt.c): the smallest sample of
 * the flow's life, and the seed a newcomer takes from the others' queue.
 */
#include <glib.h>
#include "laws.h"

static void
test_lifetime_minimum (void)
{
  BwssBaseRtt b;
  bwss__base_rtt_init (&b);
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 0);
  bwss__base_rtt_sample (&b, 0);                 /* "unknown" is not a sample */
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 0);
  bwss__base_rtt_sample (&b, 52000);
  bwss__base_rtt_sample (&b, 41000);
  bwss__base_rtt_sample (&b, 180000);            /* a full queue later: kept */
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 41000);
  g_assert_cmpuint (b.samples, ==, 3);
  /* a shorter path is taken at once */
  bwss__base_rtt_sample (&b, 30000);
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 30000);
}

/* A flow that joins at 75 ms while the others measure 45 ms of queue: its
 * path is 30 ms; a lower sample still wins; a bigger "queue" than its RTT
 * leaves it at 1 µs, not below. */
static void
test_seed_from_queue (void)
{
  BwssBaseRtt b;
  bwss__base_rtt_init (&b);
  bwss__base_rtt_seed (&b, 75000, 45000.0);
  bwss__base_rtt_sample (&b, 75000);
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 30000);
  g_assert_true (b.seeded);
  bwss__base_rtt_sample (&b, 28000);
  g_assert_cmpuint (bwss__base_rtt_get (&b), ==, 28000);
  /* no queue measured (negative or zero): no seed */
  BwssBaseRtt c;
  bwss__base_rtt_init (&c);
  bwss__base_rtt_seed (&c, 75000, -1.0);
  bwss__base_rtt_seed (&c, 75000, 0.0);
  g_assert_cmpuint (bwss__base_rtt_get (&c), ==, 0);
  g_assert_false (c.seeded);
  bwss__base_rtt_seed (&c, 20000, 45000.0);
  g_assert_cmpuint (bwss__base_rtt_get (&c), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/basertt/lifetime-minimum", test_lifetime_minimum);
  g_test_add_func ("/basertt/seed-from-queue", test_seed_from_queue);
  return g_test_run ();
}

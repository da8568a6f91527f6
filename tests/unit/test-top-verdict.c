/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-top-verdict.c — bwss-top's first line (top-verdict.h): the video's
 * rate against its minimum, the downloads' count and rate, each case of the
 * rule table, and what it says without a controller or while suspended. */
#include <string.h>
#include <glib.h>
#include <bwss/domain.h>
#include "top-verdict.h"

static BwssFlowInfo
flow (double min_bps, double target_bps, double rate_bps)
{
  BwssFlowInfo f;
  memset (&f, 0, sizeof f);
  f.stats.prefs.min_rate_bps = min_bps;
  f.stats.prefs.weight = 1;
  f.stats.target_bps = target_bps;
  f.stats.rate_bps = rate_bps;
  return f;
}

static char *
verdict (const BwssDomainStats *ds, const BwssFlowInfo *rows, size_t n, int utf8)
{
  char buf[256];
  top_verdict (buf, sizeof buf, ds, rows, n, utf8);
  return g_strdup (buf);
}

static const BwssDomainStats controlled = { .controller_pid = 42 };

/* V >= M: OK, with the downloads summed (the example) */
static void
test_ok (void)
{
  BwssFlowInfo rows[] = { flow (3.5e6, 3.6e6, 4.1e6), flow (0, 1.5e6, 1.2e6), flow (0, 1.5e6, 1.4e6),
                          flow (0, 1.5e6, 1.6e6) };
  g_autofree char *s = verdict (&controlled, rows, G_N_ELEMENTS (rows), TRUE);
  g_assert_cmpstr (s, ==, "video 4.1 of 3.5 Mbit/s needed \xe2\x80\x94 OK; 3 downloads share 4.2 Mbit/s");
  g_autofree char *a = verdict (&controlled, rows, G_N_ELEMENTS (rows), FALSE);
  g_assert_cmpstr (a, ==, "video 4.1 of 3.5 Mbit/s needed - OK; 3 downloads share 4.2 Mbit/s");
}

/* V < M <= T: offered, the player takes less; T < M: short */
static void
test_reads_less_and_short (void)
{
  BwssFlowInfo less[] = { flow (3.5e6, 3.5e6, 2.0e6), flow (0, 4e6, 4e6) };
  g_autofree char *a = verdict (&controlled, less, 2, FALSE);
  g_assert_cmpstr (a, ==, "video 2.0 of 3.5 Mbit/s needed - OK (offered 3.5, the player reads less); "
                          "1 download shares 4.0 Mbit/s");
  BwssFlowInfo short_[] = { flow (3.5e6, 2.5e6, 2.4e6) };
  g_autofree char *b = verdict (&controlled, short_, 1, FALSE);
  g_assert_cmpstr (b, ==, "video 2.4 of 3.5 Mbit/s needed - SHORT (the link offers 2.5); no other download");
}

/* two flows with a minimum (audio and video of one stream) are one video;
 * a slow link in kbit/s; unknown rates (negative) count as 0 */
static void
test_sums_and_units (void)
{
  BwssFlowInfo rows[] = { flow (450e3, 450e3, 430e3), flow (64e3, 64e3, 66e3), flow (0, 400e3, -1) };
  g_autofree char *s = verdict (&controlled, rows, 3, FALSE);
  g_assert_cmpstr (s, ==, "video 496 of 514 kbit/s needed - OK (offered 514, the player reads less); "
                          "1 download shares 0.0 kbit/s");
}

/* nobody allocates: it says so instead of judging; no video at all */
static void
test_no_controller_suspended_no_video (void)
{
  BwssFlowInfo rows[] = { flow (3e6, 0, 1e6), flow (0, 0, 5e6) };
  BwssDomainStats none = { .controller_pid = 0 };
  g_autofree char *a = verdict (&none, rows, 2, FALSE);
  g_assert_cmpstr (a, ==, "video 1.0 of 3.0 Mbit/s needed - no controller, nothing is protected; "
                          "1 download shares 5.0 Mbit/s");
  BwssDomainStats suspended = { .controller_pid = 42, .suspended = TRUE };
  g_autofree char *b = verdict (&suspended, rows, 2, FALSE);
  g_assert_cmpstr (b, ==, "video 1.0 of 3.0 Mbit/s needed - sharing suspended, nothing is protected; "
                          "1 download shares 5.0 Mbit/s");
  g_autofree char *c = verdict (&controlled, rows + 1, 1, FALSE);
  g_assert_cmpstr (c, ==, "no video (no flow has a minimum rate); 1 download shares 5.0 Mbit/s");
  g_autofree char *d = verdict (&controlled, NULL, 0, FALSE);
  g_assert_cmpstr (d, ==, "no video (no flow has a minimum rate); no other download");
}

/* what the loop does: the queue kept short, or the link shared with
 * traffic bwss does not control (COMPETE); nothing while it starts idle,
 * without a controller or suspended */
static void
test_mode (void)
{
  BwssFlowInfo rows[] = { flow (2e6, 2.1e6, 2.0e6), flow (0, 2e6, 1.9e6), flow (0, 2e6, 1.8e6) };
  BwssDomainStats track = { .controller_pid = 42, .loop = BWSS_LOOP_DELAY,
                            .phase = BWSS_PHASE_TRACK };
  g_autofree char *a = verdict (&track, rows, 3, FALSE);
  g_assert_cmpstr (a, ==, "video 2.0 of 2.0 Mbit/s needed - OK; 2 downloads share 3.7 Mbit/s; "
                          "keeping the queue short");
  BwssDomainStats compete = track;
  compete.phase = BWSS_PHASE_COMPETE;
  g_autofree char *b = verdict (&compete, rows, 3, FALSE);
  g_assert_cmpstr (b, ==, "video 2.0 of 2.0 Mbit/s needed - OK; 2 downloads share 3.7 Mbit/s; "
                          "sharing the link with traffic bwss does not control");
  BwssDomainStats suspended = compete;
  suspended.suspended = TRUE;
  g_autofree char *c = verdict (&suspended, rows, 3, FALSE);
  g_assert_cmpstr (c, ==, "video 2.0 of 2.0 Mbit/s needed - sharing suspended, nothing is protected; "
                          "2 downloads share 3.7 Mbit/s");
  BwssDomainStats none = compete;
  none.controller_pid = 0;
  g_autofree char *d = verdict (&none, rows, 3, FALSE);
  g_assert_cmpstr (d, ==, "video 2.0 of 2.0 Mbit/s needed - no controller, nothing is protected; "
                          "2 downloads share 3.7 Mbit/s");
  BwssDomainStats idle = track;
  idle.phase = BWSS_PHASE_IDLE;
  g_autofree char *e = verdict (&idle, rows, 3, FALSE);
  g_assert_cmpstr (e, ==, "video 2.0 of 2.0 Mbit/s needed - OK; 2 downloads share 3.7 Mbit/s");
}

/* a buffer too small is cut, NUL-terminated */
static void
test_truncated (void)
{
  BwssFlowInfo rows[] = { flow (3.5e6, 3.6e6, 4.1e6) };
  char buf[12];
  memset (buf, 'x', sizeof buf);
  top_verdict (buf, sizeof buf, &controlled, rows, 1, FALSE);
  g_assert_cmpstr (buf, ==, "video 4.1 o");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/top-verdict/ok", test_ok);
  g_test_add_func ("/top-verdict/reads-less-and-short", test_reads_less_and_short);
  g_test_add_func ("/top-verdict/sums-and-units", test_sums_and_units);
  g_test_add_func ("/top-verdict/no-controller-suspended-no-video", test_no_controller_suspended_no_video);
  g_test_add_func ("/top-verdict/mode", test_mode);
  g_test_add_func ("/top-verdict/truncated", test_truncated);
  return g_test_run ();
}

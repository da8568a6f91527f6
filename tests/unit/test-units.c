/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-units.c — bwss_parse_rate: the units every tool and the element accept. */
#include <glib.h>
#include <bwss/bwss.h>

static void
test_valid (void)
{
  struct { const char *text; double bps; } ok[] = {
    { "960000", 960000 }, { "500k", 500e3 }, { "500K", 500e3 }, { "2.5M", 2.5e6 },
    { "2.5m", 2.5e6 }, { "1G", 1e9 }, { "0", 0 }, { ".5k", 500 },
    { "1.5Mbit/s", 1.5e6 }, { "496kbps", 496e3 }, { "64kb", 64e3 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (ok); i++) {
    double v = -1;
    g_assert_cmpint (bwss_parse_rate (ok[i].text, &v), ==, 0);
    g_assert_cmpfloat_with_epsilon (v, ok[i].bps, 1e-6);
  }
}

static void
test_invalid (void)
{
  const char *bad[] = { "", "k", "-5k", " 5k", "5k ", "5kk", "5 k", "nan", "inf", "0x10",
                        "1e400", "2P", "5T", "1e16", "abc", "5kbit/h", "+5" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    double v = 42;
    g_assert_cmpint (bwss_parse_rate (bad[i], &v), ==, BWSS_EINVAL);
    g_assert_cmpfloat (v, ==, 42);
  }
  g_assert_cmpint (bwss_parse_rate (NULL, NULL), ==, BWSS_EINVAL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/units/rate/valid", test_valid);
  g_test_add_func ("/units/rate/invalid", test_invalid);
  return g_test_run ();
}

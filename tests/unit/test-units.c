/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-units.c — the one parser per unit every tool, the shim and the
 * element use (bwss/bwss.h): decimal only, bounded, all or nothing. */
#include <math.h>
#include <stdint.h>
#include <glib.h>
#include <bwss/bwss.h>

static void
test_rate_valid (void)
{
  struct { const char *text; double bps; } ok[] = {
    { "960000", 960000 }, { "500k", 500e3 }, { "500K", 500e3 }, { "2.5M", 2.5e6 },
    { "2.5m", 2.5e6 }, { "1G", 1e9 }, { "0", 0 }, { ".5k", 500 }, { "5.", 5 },
    { "1.5Mbit/s", 1.5e6 }, { "496kbps", 496e3 }, { "64kb", 64e3 },
    { "1000000000000000", 1e15 }, { "1000000G", 1e15 }, { "010", 10 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (ok); i++) {
    double v = -1;
    g_assert_cmpint (bwss_parse_rate (ok[i].text, &v), ==, 0);
    g_assert_cmpfloat_with_epsilon (v, ok[i].bps, 1e-6);
  }
}

static void
test_rate_invalid (void)
{
  const char *bad[] = { "", "k", "-5k", " 5k", "5k ", "5kk", "5 k", "nan", "inf", "0x10",
                        "1e400", "2P", "5T", "1e16", "abc", "5kbit/h", "+5", ".", "1.2.3",
                        "1000000000000001", "1000001G", "1e3",
                        "000000000000000000000000000000001" /* 33 characters */ };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    double v = 42;
    g_assert_cmpint (bwss_parse_rate (bad[i], &v), ==, BWSS_EINVAL);
    g_assert_cmpfloat (v, ==, 42);
  }
  g_assert_cmpint (bwss_parse_rate (NULL, NULL), ==, BWSS_EINVAL);
}

/* "010" is ten, never eight; hex, exponents, signs and spaces are refused;
 * the limits are the shared ones. */
static void
test_priority (void)
{
  struct { const char *text; int32_t v; } ok[] = {
    { "0", 0 }, { "10", 10 }, { "010", 10 }, { "-5", -5 }, { "-0", 0 },
    { "1000", BWSS_PRIORITY_MAX }, { "-1000", BWSS_PRIORITY_MIN }, { "00000000000000000000000000000007", 7 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (ok); i++) {
    int32_t v = 42;
    g_assert_cmpint (bwss_parse_priority (ok[i].text, &v), ==, 0);
    g_assert_cmpint (v, ==, ok[i].v);
  }
  const char *bad[] = { "", "-", "0x10", "1e3", "+5", " 5", "5 ", "1001", "-1001", "5.0",
                        "99999999999999999999999", "--5", "high" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    int32_t v = 42;
    g_assert_cmpint (bwss_parse_priority (bad[i], &v), ==, BWSS_EINVAL);
    g_assert_cmpint (v, ==, 42);
  }
  g_assert_cmpint (bwss_parse_priority (NULL, NULL), ==, BWSS_EINVAL);
}

static void
test_weight (void)
{
  struct { const char *text; double v; } ok[] = {
    { "1", 1 }, { "0", 0 }, { "0.5", 0.5 }, { ".25", 0.25 }, { "1000000000", 1e9 },
    { "0.000000000000000000000000000001", 1e-30 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (ok); i++) {
    double v = 42;
    g_assert_cmpint (bwss_parse_weight (ok[i].text, &v), ==, 0);
    g_assert_cmpfloat (v, ==, ok[i].v);
  }
  const char *bad[] = { "", "1e308", "1e3", "inf", "nan", "-1", "0x10", "1000000000.1",
                        "2000000000", " 1", "1 ", "1,5", "1k" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    double v = 42;
    g_assert_cmpint (bwss_parse_weight (bad[i], &v), ==, BWSS_EINVAL);
    g_assert_cmpfloat (v, ==, 42);
  }
}

static void
test_decimal_and_count (void)
{
  double d = 0;
  g_assert_cmpint (bwss_parse_decimal ("3600", 3600, &d), ==, 0);
  g_assert_cmpfloat (d, ==, 3600);
  g_assert_cmpint (bwss_parse_decimal ("3600.5", 3600, &d), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_parse_decimal ("1", -1, &d), ==, BWSS_EINVAL);
  uint64_t n = 0;
  g_assert_cmpint (bwss_parse_count ("18446744073709551615", UINT64_MAX, &n), ==, 0);
  g_assert_cmpuint (n, ==, UINT64_MAX);
  const char *bad[] = { "18446744073709551616", "-1", "1.0", "", "0x1", "1 " };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    n = 42;
    g_assert_cmpint (bwss_parse_count (bad[i], UINT64_MAX, &n), ==, BWSS_EINVAL);
    g_assert_cmpuint (n, ==, 42);
  }
  g_assert_cmpint (bwss_parse_count ("6", 5, &n), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_parse_count ("5", 5, &n), ==, 0);
  g_assert_cmpint (bwss_parse_count ("1", 0, &n), ==, BWSS_EINVAL);
}

/* The domain's check of preferences: the parsers' limits, inclusive. */
static void
test_prefs_check (void)
{
  BwssPrefs p = { .priority = BWSS_PRIORITY_MAX, .min_rate_bps = BWSS_RATE_MAX_BPS,
                  .weight = BWSS_WEIGHT_MAX };
  g_assert_cmpint (bwss_prefs_check (&p), ==, 0);
  p.priority = BWSS_PRIORITY_MAX + 1;
  g_assert_cmpint (bwss_prefs_check (&p), ==, BWSS_EINVAL);
  p.priority = BWSS_PRIORITY_MIN;
  p.weight = 1e308;
  g_assert_cmpint (bwss_prefs_check (&p), ==, BWSS_EINVAL);
  p.weight = 1;
  p.min_rate_bps = 2e15;
  g_assert_cmpint (bwss_prefs_check (&p), ==, BWSS_EINVAL);
  g_assert_cmpint (bwss_prefs_check (NULL), ==, BWSS_EINVAL);
  /* one check: the laws refuse what the domain refuses, NaN included */
  BwssController *c;
  g_assert_cmpint (bwss_controller_new (NULL, &c), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &p, 0), ==, BWSS_EINVAL);
  p.min_rate_bps = NAN;
  g_assert_cmpint (bwss_prefs_check (&p), ==, BWSS_EINVAL);
  p.min_rate_bps = BWSS_RATE_MAX_BPS;
  p.priority = BWSS_PRIORITY_MIN - 1;
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &p, 0), ==, BWSS_EINVAL);
  p.priority = BWSS_PRIORITY_MIN;
  g_assert_cmpint (bwss_prefs_check (&p), ==, 0);
  g_assert_cmpint (bwss_controller_add_flow (c, 1, &p, 0), ==, 0);
  bwss_controller_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/units/rate/valid", test_rate_valid);
  g_test_add_func ("/units/rate/invalid", test_rate_invalid);
  g_test_add_func ("/units/priority", test_priority);
  g_test_add_func ("/units/weight", test_weight);
  g_test_add_func ("/units/decimal-and-count", test_decimal_and_count);
  g_test_add_func ("/units/prefs-check", test_prefs_check);
  return g_test_run ();
}

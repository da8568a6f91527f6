/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-units.c — the parsers of bwss/bwss.h against an independent oracle:
 * the grammar as POSIX regular expressions and the value from libc's own
 * strtod/strtoll/strtoull.  For every input each parser must accept exactly
 * what the oracle accepts, with the same value, and leave its output alone
 * when it refuses.
 */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bwss/bwss.h>

const char fuzz_target_name[] = "units";
const char *const fuzz_dictionary[] = {
  "k", "M", "G", "bit/s", "bps", "b", "-", ".", "0x", "e9", "inf", "nan", "1000", "010",
  "1000000000", "1000000000000000", "18446744073709551615", NULL,
};

static regex_t re_decimal, re_rate, re_priority, re_count;

static void
compile (regex_t *re, const char *pattern)
{
  if (regcomp (re, pattern, REG_EXTENDED) != 0)
    abort ();
}

static void
init (void)
{
  static int done;
  if (done++)
    return;
  compile (&re_decimal, "^([0-9]+[.]?[0-9]*|[.][0-9]+)$");
  compile (&re_rate, "^([0-9]+[.]?[0-9]*|[.][0-9]+)([kKmMgG]?)(b|bps|bit/s)?$");
  compile (&re_priority, "^-?[0-9]+$");
  compile (&re_count, "^[0-9]+$");
}

#define CHECK(cond) do { if (!(cond)) { fprintf (stderr, "fuzz-units: %s: '%s'\n", #cond, text); abort (); } } while (0)

/* The oracle of a decimal number of at most 32 characters in [0, max]. */
static int
oracle_decimal (const char *text, size_t len, double max, double *out)
{
  char tok[64];
  if (len > BWSS_NUMBER_MAX_CHARS || len >= sizeof tok)
    return -1;
  memcpy (tok, text, len);
  tok[len] = '\0';
  if (regexec (&re_decimal, tok, 0, NULL, 0) != 0)
    return -1;
  double v = strtod (tok, NULL);
  if (!(v <= max))
    return -1;
  *out = v;
  return 0;
}

static void
check_decimal (const char *text, double max)
{
  double got = -1, want;
  int r = bwss_parse_decimal (text, max, &got);
  int o = oracle_decimal (text, strlen (text), max, &want);
  CHECK ((r == 0) == (o == 0));
  CHECK (r == 0 ? got == want : got == -1);
}

static void
check_rate (const char *text)
{
  double got = -1, want = -1;
  int r = bwss_parse_rate (text, &got);
  regmatch_t m[4];
  int o = -1;
  if (regexec (&re_rate, text, 4, m, 0) == 0
      && oracle_decimal (text, (size_t) m[1].rm_eo, 1e300, &want) == 0) {
    double mult = 1;
    if (m[2].rm_eo > m[2].rm_so)
      switch (text[m[2].rm_so]) {
        case 'k': case 'K': mult = 1e3; break;
        case 'm': case 'M': mult = 1e6; break;
        default: mult = 1e9; break;
      }
    want *= mult;
    o = want <= BWSS_RATE_MAX_BPS ? 0 : -1;
  }
  CHECK ((r == 0) == (o == 0));
  CHECK (r == 0 ? got == want : got == -1);
}

static void
check_priority (const char *text)
{
  int32_t got = 4242;
  int r = bwss_parse_priority (text, &got);
  int o = -1;
  long long want = 0;
  size_t digits = strlen (text) - (text[0] == '-');
  if (regexec (&re_priority, text, 0, NULL, 0) == 0 && digits <= BWSS_NUMBER_MAX_CHARS) {
    errno = 0;
    want = strtoll (text, NULL, 10);
    o = errno == 0 && want >= BWSS_PRIORITY_MIN && want <= BWSS_PRIORITY_MAX ? 0 : -1;
  }
  CHECK ((r == 0) == (o == 0));
  CHECK (r == 0 ? got == want : got == 4242);
}

static void
check_count (const char *text, uint64_t max)
{
  uint64_t got = 4242;
  int r = bwss_parse_count (text, max, &got);
  int o = -1;
  unsigned long long want = 0;
  if (regexec (&re_count, text, 0, NULL, 0) == 0 && strlen (text) <= BWSS_NUMBER_MAX_CHARS) {
    errno = 0;
    want = strtoull (text, NULL, 10);
    o = errno == 0 && want <= max ? 0 : -1;
  }
  CHECK ((r == 0) == (o == 0));
  CHECK (r == 0 ? got == want : got == 4242);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  init ();
  char *text = malloc (size + 1);
  memcpy (text, data, size);
  text[size] = '\0';                      /* a C string: up to the first NUL */
  check_decimal (text, 3600);
  check_decimal (text, 1e12);
  check_decimal (text, 0);
  double w = -1;
  int r = bwss_parse_weight (text, &w);
  double want;
  CHECK ((r == 0) == (oracle_decimal (text, strlen (text), BWSS_WEIGHT_MAX, &want) == 0));
  CHECK (r != 0 || w == want);
  check_rate (text);
  check_priority (text);
  check_count (text, UINT64_MAX);
  check_count (text, UINT64_C (1) << 53);
  check_count (text, 4294967295u);
  free (text);
  return 0;
}

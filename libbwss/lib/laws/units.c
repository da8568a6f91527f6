/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * units.c — the one parser per unit (rates, weights, priorities, plain
 * decimals and counts) and the limits every front end shares.
 *
 * Model: a number is a token of the grammar
 *     decimal  := digit* [ '.' digit* ]      (at least one digit)
 *     count    := digit+
 *     priority := [ '-' ] digit+
 * of at most BWSS_NUMBER_MAX_CHARS characters, read in base ten whatever
 * the process's locale; a parser either consumes its whole text or refuses
 * it (BWSS_EINVAL, output untouched).  strtod()/strtol() alone would also
 * take spaces, signs, exponents, hex, octal, "inf" and "nan", and strtod()
 * reads "2.5" as 2 under a locale whose decimal point is ','.
 */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bwss/control.h>   /* bwss_prefs_check: BwssPrefs */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
make_c_locale (void)
{
  c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
}

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* Returns the length of the decimal token at the start of @text (0 if there
 * is none: no digit, two points or more than BWSS_NUMBER_MAX_CHARS). */
static size_t
decimal_token (const char *text)
{
  size_t len = 0, digits = 0, points = 0;
  for (; is_digit (text[len]) || text[len] == '.'; len++) {
    if (text[len] == '.')
      points++;
    else
      digits++;
    if (len >= BWSS_NUMBER_MAX_CHARS)
      return 0;
  }
  return digits > 0 && points <= 1 ? len : 0;
}

/* Returns the value of the decimal token @text[0..len) (correctly rounded,
 * in the C locale), or NAN if it cannot be converted. */
static double
decimal_value (const char *text, size_t len)
{
  char number[BWSS_NUMBER_MAX_CHARS + 1];
  memcpy (number, text, len);
  number[len] = '\0';
  pthread_once (&c_locale_once, make_c_locale);
  if (c_locale == (locale_t) 0)
    return NAN;
  char *end = NULL;
  double v = strtod_l (number, &end, c_locale);
  return end == number + len ? v : NAN;
}

int
bwss_parse_decimal (const char *text, double max, double *out)
{
  if (text == NULL || out == NULL || !(max >= 0.0))
    return BWSS_EINVAL;
  size_t len = decimal_token (text);
  if (len == 0 || text[len] != '\0')
    return BWSS_EINVAL;
  double v = decimal_value (text, len);
  if (!isfinite (v) || v > max)
    return BWSS_EINVAL;
  *out = v;
  return BWSS_OK;
}

/* Reads the digits of @text[0..len) into *out, refusing values above @max
 * without ever overflowing.  Returns 0 or BWSS_EINVAL. */
static int
digits_value (const char *text, size_t len, uint64_t max, uint64_t *out)
{
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned d = (unsigned) (text[i] - '0');
    if (d > max || v > (max - d) / 10)
      return BWSS_EINVAL;
    v = v * 10 + d;
  }
  *out = v;
  return BWSS_OK;
}

/* Returns the number of leading digits of @text, 0 if more than
 * BWSS_NUMBER_MAX_CHARS. */
static size_t
digits_token (const char *text)
{
  size_t len = 0;
  while (is_digit (text[len]))
    if (++len > BWSS_NUMBER_MAX_CHARS)
      return 0;
  return len;
}

int
bwss_parse_count (const char *text, uint64_t max, uint64_t *out)
{
  if (text == NULL || out == NULL)
    return BWSS_EINVAL;
  size_t len = digits_token (text);
  uint64_t v;
  if (len == 0 || text[len] != '\0' || digits_value (text, len, max, &v) != BWSS_OK)
    return BWSS_EINVAL;
  *out = v;
  return BWSS_OK;
}

int
bwss_parse_rate (const char *text, double *out_bps)
{
  if (text == NULL || out_bps == NULL)
    return BWSS_EINVAL;
  size_t len = decimal_token (text);
  if (len == 0)
    return BWSS_EINVAL;
  double v = decimal_value (text, len);
  const char *end = text + len;
  double mult = 1.0;
  switch (*end) {
    case 'k': case 'K': mult = 1e3; end++; break;
    case 'm': case 'M': mult = 1e6; end++; break;
    case 'g': case 'G': mult = 1e9; end++; break;
    default: break;
  }
  /* an optional unit name after the prefix */
  if (strcmp (end, "bit/s") == 0 || strcmp (end, "bps") == 0 || strcmp (end, "b") == 0)
    end += strlen (end);
  if (*end != '\0' || !isfinite (v))
    return BWSS_EINVAL;
  v *= mult;
  if (v > BWSS_RATE_MAX_BPS)
    return BWSS_EINVAL;
  *out_bps = v;
  return BWSS_OK;
}

int
bwss_parse_weight (const char *text, double *out)
{
  return bwss_parse_decimal (text, BWSS_WEIGHT_MAX, out);
}

int
bwss_parse_priority (const char *text, int32_t *out)
{
  if (text == NULL || out == NULL)
    return BWSS_EINVAL;
  bool negative = text[0] == '-';
  const char *digits = text + negative;
  size_t len = digits_token (digits);
  uint64_t max = negative ? (uint64_t) -(int64_t) BWSS_PRIORITY_MIN : (uint64_t) BWSS_PRIORITY_MAX;
  uint64_t v;
  if (len == 0 || digits[len] != '\0' || digits_value (digits, len, max, &v) != BWSS_OK)
    return BWSS_EINVAL;
  *out = negative ? -(int32_t) v : (int32_t) v;
  return BWSS_OK;
}

/* BwssShare's names; the last, "stream", is never parsed (its key is a
 * number the process gives, bwss_flow_set_stream()). */
static const char *const share_names[] = { "flow", "process", "unit", "stream" };

const char *
bwss_share_name (BwssShare share)
{
  return (unsigned) share < sizeof share_names / sizeof share_names[0] ? share_names[share] : NULL;
}

int
bwss_share_parse (const char *text, BwssShare *out)
{
  for (unsigned i = 0; text && out && i < BWSS_SHARE_STREAM; i++)
    if (strcmp (text, share_names[i]) == 0) {
      *out = (BwssShare) i;
      return 0;
    }
  return BWSS_EINVAL;
}

int
bwss_prefs_check (const BwssPrefs *prefs)
{
  /* the comparisons are false for NaN: a NaN is refused with the rest */
  if (prefs == NULL || prefs->priority < BWSS_PRIORITY_MIN || prefs->priority > BWSS_PRIORITY_MAX
      || !(prefs->min_rate_bps >= 0.0 && prefs->min_rate_bps <= BWSS_RATE_MAX_BPS)
      || !(prefs->weight >= 0.0 && prefs->weight <= BWSS_WEIGHT_MAX))
    return BWSS_EINVAL;
  return BWSS_OK;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* units.c — parsing rates with units, shared by the tools and the element. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <bwss/bwss.h>

/* Largest rate accepted, bit/s: 1 Pbit/s, far above any link, small enough
 * that window arithmetic in doubles stays exact to the bit. */
#define MAX_RATE_BPS 1e15

int
bwss_parse_rate (const char *text, double *out_bps)
{
  if (text == NULL || out_bps == NULL)
    return BWSS_EINVAL;
  /* The number is plain decimal: digits with at most one point (strtod
   * alone would also take "inf", "nan", hex, exponents, signs and spaces). */
  size_t len = 0, digits = 0, points = 0;
  for (; (text[len] >= '0' && text[len] <= '9') || text[len] == '.'; len++) {
    if (text[len] == '.')
      points++;
    else
      digits++;
  }
  if (digits == 0 || points > 1 || len > 32)
    return BWSS_EINVAL;
  char number[33];
  memcpy (number, text, len);
  number[len] = '\0';
  errno = 0;
  double v = strtod (number, NULL);
  if (errno || !isfinite (v) || v < 0.0)
    return BWSS_EINVAL;
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
  if (*end != '\0')
    return BWSS_EINVAL;
  v *= mult;
  if (v > MAX_RATE_BPS)
    return BWSS_EINVAL;
  *out_bps = v;
  return BWSS_OK;
}

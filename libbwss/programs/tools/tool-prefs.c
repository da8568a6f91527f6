/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-prefs.c — see tool-prefs.h. */
#include <stdio.h>
#include "tool-prefs.h"

const char *const tool_pref_var[TOOL_PREF_N] = { "BWSS_PRIORITY", "BWSS_MIN_RATE", "BWSS_WEIGHT", "BWSS_SHARE" };
const char *const tool_pref_option[TOOL_PREF_N] = { "--priority", "--min-rate", "--weight", "--share" };

ToolPref
tool_prefs_parse (const char *const text[TOOL_PREF_N], BwssPrefs *prefs, BwssShare *share)
{
  *prefs = (BwssPrefs) { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  *share = BWSS_SHARE_PROCESS;
  if (text[TOOL_PREF_PRIORITY] && bwss_parse_priority (text[TOOL_PREF_PRIORITY], &prefs->priority) != 0)
    return TOOL_PREF_PRIORITY;
  if (text[TOOL_PREF_MIN_RATE] && bwss_parse_rate (text[TOOL_PREF_MIN_RATE], &prefs->min_rate_bps) != 0)
    return TOOL_PREF_MIN_RATE;
  if (text[TOOL_PREF_WEIGHT] && bwss_parse_weight (text[TOOL_PREF_WEIGHT], &prefs->weight) != 0)
    return TOOL_PREF_WEIGHT;
  if (text[TOOL_PREF_SHARE] && bwss_share_parse (text[TOOL_PREF_SHARE], share) != 0)
    return TOOL_PREF_SHARE;
  return TOOL_PREF_N;
}

void
tool_pref_valid (ToolPref p, char *buf, size_t len)
{
  if (p == TOOL_PREF_PRIORITY)
    snprintf (buf, len, "a priority (a decimal integer from %d to %d)", BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX);
  else if (p == TOOL_PREF_MIN_RATE)
    snprintf (buf, len, "a rate in bit/s (decimal, with k, M or G: 500k, 2.5M; at most %g)",
              BWSS_RATE_MAX_BPS);
  else if (p == TOOL_PREF_WEIGHT)
    snprintf (buf, len, "a weight (a decimal number from 0 to %g)", BWSS_WEIGHT_MAX);
  else
    snprintf (buf, len, "a share (process, flow or unit)");
}

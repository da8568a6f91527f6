/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool-prefs.h — the preferences a command runs with: bwss-run's options,
 * which it hands the preload shim as they were given, in its environment
 * ($BWSS_PRIORITY, $BWSS_MIN_RATE, $BWSS_WEIGHT, $BWSS_SHARE).  One parser
 * for both, on the library's (bwss/bwss.h: decimal only, within the limits
 * every front end shares), so the shim reads exactly what bwss-run checked.
 * Plain C, no GLib: the shim goes into any program.
 */
#ifndef BWSS_TOOL_PREFS_H
#define BWSS_TOOL_PREFS_H

#include <stddef.h>
#include <bwss/bwss.h>

typedef enum { TOOL_PREF_PRIORITY, TOOL_PREF_MIN_RATE, TOOL_PREF_WEIGHT, TOOL_PREF_SHARE, TOOL_PREF_N } ToolPref;

/* Each preference's variable and bwss-run's option. */
extern const char *const tool_pref_var[TOOL_PREF_N], *const tool_pref_option[TOOL_PREF_N];

/* Parses @text (by ToolPref; NULL: the default, priority 0, no minimum,
 * weight 1, share process) into *@prefs and *@share.  Returns TOOL_PREF_N,
 * or the first that is malformed (then the outputs are partly set). */
ToolPref tool_prefs_parse (const char *const text[TOOL_PREF_N], BwssPrefs *prefs, BwssShare *share);

/* Writes what a good value of @p is ("a weight (a decimal number from 0 to
 * 1e+09)") to @buf, for a message. */
void tool_pref_valid (ToolPref p, char *buf, size_t len);

#endif

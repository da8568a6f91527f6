/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * late-trace.c — reading a bwss-late trace and reporting on it (see
 * late-trace.h).  Lines are read whole (getline), so a long line is one
 * line and the line numbers in messages are the file's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <bwss/bwss.h>
#include "late-trace.h"
#include "tool-json.h"

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

/* Copies the field at @p (up to a blank or @end) into @out (@len bytes).
 * Returns the position after it, or NULL if it does not fit. */
static const char *
take_field (const char *p, const char *end, char *out, size_t len)
{
  size_t n = 0;
  while (p < end && !is_blank (*p)) {
    if (n + 1 >= len)
      return NULL;
    out[n++] = *p++;
  }
  out[n] = '\0';
  return p;
}

enum { LATE_LINE_DATA, LATE_LINE_SKIP, LATE_LINE_BAD };

/* Parses one line of @len bytes (without its newline).  Returns
 * LATE_LINE_DATA with *t and *bytes set, LATE_LINE_SKIP (blank or comment)
 * or LATE_LINE_BAD. */
static int
parse_line (const char *line, size_t len, double *t, uint64_t *bytes)
{
  const char *p = line, *end = line + len;
  if (len > 0 && end[-1] == '\r')
    end--;
  if (memchr (line, '\0', (size_t) (end - line)))
    return LATE_LINE_BAD;
  while (p < end && is_blank (*p))
    p++;
  if (p == end || *p == '#')
    return LATE_LINE_SKIP;
  char tf[BWSS_NUMBER_MAX_CHARS + 2], bf[BWSS_NUMBER_MAX_CHARS + 2];
  if ((p = take_field (p, end, tf, sizeof tf)) == NULL)
    return LATE_LINE_BAD;
  while (p < end && is_blank (*p))
    p++;
  if ((p = take_field (p, end, bf, sizeof bf)) == NULL)
    return LATE_LINE_BAD;
  while (p < end && is_blank (*p))
    p++;
  double tv;
  uint64_t bv;
  if (p != end || bwss_parse_decimal (tf, LATE_TRACE_MAX_TIME_S, &tv) != 0
      || bwss_parse_count (bf, LATE_TRACE_MAX_BYTES, &bv) != 0)
    return LATE_LINE_BAD;
  *t = tv;
  *bytes = bv;
  return LATE_LINE_DATA;
}

void
late_trace_init (LateTrace *tr, BwssLate *late)
{
  tr->late = late;
  tr->t0 = NAN;
  tr->last = NAN;
  tr->bytes = 0;
  tr->worst_at = NAN;
  tr->lineno = 0;
}

/* Feeds one data line.  Returns NULL, or what is wrong with it. */
static const char *
feed (LateTrace *tr, double t, uint64_t b)
{
  if (!isnan (tr->last) && t < tr->last)
    return "time goes backwards";
  if (b > LATE_TRACE_MAX_BYTES - tr->bytes)
    return "the byte total exceeds 2^53";
  if (isnan (tr->t0))
    tr->t0 = t;
  tr->last = t;
  tr->bytes += b;
  /* times relative to the first line, in µs (at most 1e18: fits) */
  double worst = tr->late->max_lateness_s;
  bwss_late_add (tr->late, (uint64_t) llround ((t - tr->t0) * 1e6), tr->bytes);
  if (tr->late->max_lateness_s > worst)
    tr->worst_at = t;
  return NULL;
}

gboolean
late_trace_read (LateTrace *tr, FILE *in, const char *name, GError **error)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  const char *problem = NULL;
  while (problem == NULL && (len = getline (&line, &cap, in)) >= 0) {
    tr->lineno++;
    if (len > 0 && line[len - 1] == '\n')
      len--;
    double t;
    uint64_t b;
    switch (parse_line (line, (size_t) len, &t, &b)) {
      case LATE_LINE_SKIP: break;
      case LATE_LINE_DATA: problem = feed (tr, t, b); break;
      default: problem = "expected \"<t_seconds> <bytes>\" (decimal numbers)"; break;
    }
  }
  free (line);
  if (problem == NULL && ferror (in))
    problem = g_strerror (errno);
  if (problem) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%lu: %s", name, tr->lineno, problem);
    return FALSE;
  }
  return TRUE;
}

char *
late_trace_report (const LateTrace *tr, double end)
{
  const BwssLate *late = tr->late;
  uint64_t end_us = (uint64_t) llround ((end - tr->t0) * 1e6);
  /* t0 of the metric is the first line that carried bytes */
  double first_byte_s = tr->t0 + (double) late->t0_us / 1e6;
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "late_fraction");
  json_builder_begin_object (jb);
  for (size_t i = 0; i < late->n_thresholds; i++) {
    char key[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd (key, sizeof key, "%g", late->thresholds_s[i]);
    tool_json_add_number (jb, key, bwss_late_fraction (late, i, end_us));
  }
  json_builder_end_object (jb);
  double need = bwss_late_required_prebuffer (late, end_us);
  tool_json_add_number (jb, "required_prebuffer_s", need);
  /* where it was set: the latest packet's arrival, or the end if the one
   * still missing then has waited longer */
  double at = 0.0;
  if (need > 0.0)
    at = need > late->max_lateness_s || isnan (tr->worst_at) ? end - first_byte_s
                                                              : tr->worst_at - first_byte_s;
  tool_json_add_number (jb, "required_prebuffer_at_s", at);
  tool_json_add_number (jb, "packets", (double) late->arrived);
  tool_json_add_number (jb, "bytes", (double) late->bytes);
  tool_json_add_number (jb, "t0", first_byte_s);
  tool_json_add_number (jb, "end", end);
  json_builder_end_object (jb);
  return tool_json_to_string (jb);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * late-trace.h — the trace bwss-late reads and the JSON report it prints,
 * apart from the tool so that the fuzz driver runs exactly this code.
 *
 * A trace has one line per read, "<t_seconds> <bytes>": the time on any
 * clock (a decimal number, at most LATE_TRACE_MAX_TIME_S) and the bytes
 * that read returned (decimal digits); fields are separated by spaces or
 * tabs, '#' starts a comment line, blank lines are skipped.  Times never go
 * backwards and the byte total stays within LATE_TRACE_MAX_BYTES, so every
 * count is exact and every result finite.
 */
#ifndef BWSS_LATE_TRACE_H
#define BWSS_LATE_TRACE_H

#include <stdio.h>
#include <glib.h>
#include <bwss/late.h>

#define LATE_TRACE_MAX_TIME_S 1e12                  /* seconds: any clock, ~31 700 years */
#define LATE_TRACE_MAX_BYTES  (UINT64_C (1) << 53)  /* total: exact in a double */

typedef struct {
  BwssLate     *late;       /* fed with every data line */
  double        t0;         /* time of the first data line; NAN before */
  double        last;       /* time of the latest one */
  uint64_t      bytes;      /* total so far */
  double        worst_at;   /* time of the line whose packet was the latest of
                             * all (where the required prebuffer is set); NAN
                             * while none was late */
  unsigned long lineno;     /* lines read so far */
} LateTrace;

/* Prepares @tr to feed @late (initialised by the caller). */
void late_trace_init (LateTrace *tr, BwssLate *late);

/* Reads @in to its end into @tr.  Returns TRUE, or FALSE with @error saying
 * "NAME:LINE: what" for the first bad line (nothing after it is read). */
gboolean late_trace_read (LateTrace *tr, FILE *in, const char *name, GError **error);

/* Returns the report at observation end @end (seconds on the trace's clock,
 * t0 <= end <= LATE_TRACE_MAX_TIME_S) as one line of JSON:
 * {"late_fraction": {"0.5": f, …}, "required_prebuffer_s": x,
 *  "required_prebuffer_at_s": a, "packets": n, "bytes": b, "t0": t, "end": t},
 * a the seconds from the first byte to the arrival that set x (to @end if
 * the packet still missing then sets it; 0 if nothing was late).  g_free()
 * it. */
char *late_trace_report (const LateTrace *tr, double end);

#endif

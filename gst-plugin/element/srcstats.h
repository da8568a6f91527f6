/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcstats.h — bwsshttpsrc's statistics: bytes and rates, the late-packet
 * metric, and the bwss-stats structure (docs/element.md lists its fields).
 *
 * The streaming thread counts (src_stats_add) and publishes the bitrate and
 * minimum in use (src_stats_set_stream); any thread may read
 * (src_stats_get).  One lock guards it all.
 */
#ifndef BWSS_SRC_STATS_H
#define BWSS_SRC_STATS_H

#include <gst/gst.h>
#include <bwss/control.h>
#include <bwss/late.h>
#include "srcflow.h"

/* The late-packet metric cuts the stream in the paper's 1000-byte packets. */
#define LATE_PACKET_BYTES 1000

typedef struct {
  GMutex        lock;
  guint64       bytes;
  gint64        start_us;      /* first byte, monotonic µs; 0 = none yet */
  gint64        next_us;       /* next message due */
  BwssEstimator meter;         /* libbwss's rate meter, fed the byte count */
  guint64       meter_step_us; /* its history step (the library's default) */
  double        current_bps;   /* mean over the last interval (at most the
                                * meter's history, 3.2 s), bit/s */
  BwssLate      late;
  gboolean      late_on;
  guint64       bitrate;       /* the stream bitrate in use, bit/s */
  const char   *source;        /* where it comes from */
  double        min_rate;      /* the minimum registered, bit/s */
  guint         connections;   /* reading over how many (1, or n: srcstripes.h) */
  GstStructure *last;          /* the last message's structure */
} SrcStats;

/* Bytes over a time span in bit/s (0 for an empty span): the lifetime mean
 * and the consumption meter's window; rates over recent windows come from
 * libbwss's estimator. */
double        src_stats_rate_bps (guint64 bytes, gint64 span_us);

void          src_stats_init (SrcStats *s);
void          src_stats_clear (SrcStats *s);
/* A new stream (start): every count back to zero. */
void          src_stats_reset (SrcStats *s);
/* @n bytes went out at @now (µs); TRUE if a message is due (every
 * @interval_ns, 0 = never but at the end). */
gboolean      src_stats_add (SrcStats *s, gsize n, gint64 now, guint64 interval_ns);
/* The bitrate and minimum in use (the late metric starts with the first
 * known bitrate). */
void          src_stats_set_stream (SrcStats *s, guint64 bitrate, const char *source, double min_rate);
/* Reading over @n connections now. */
void          src_stats_set_connections (SrcStats *s, guint n);
/* The mean rate over the last interval, bit/s (0: none yet). */
double        src_stats_current_rate (SrcStats *s);
/* The stream ended: packets still missing count as late. */
void          src_stats_finish (SrcStats *s);
/* Builds the structure at @now from the counts and @flow, stores a copy as
 * the last one, and returns it. */
GstStructure *src_stats_publish (SrcStats *s, gint64 now, SrcFlow *flow);
/* A copy of the last structure, or one built now if none was published. */
GstStructure *src_stats_get (SrcStats *s, SrcFlow *flow);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bitrate.h — where bwsshttpsrc learns the stream's bitrate, and the
 * minimum rate it registers from it.
 *
 * Sources, the first that knows wins:
 *   1. the `bitrate` property;
 *   2. the variant being played, when the source fetches the fragments of a
 *      legacy adaptive demuxer (hlsdemux, dashdemux): the variant's declared
 *      bandwidth and the ABR-aware minimum of abrrule.h
 *      (adaptivewatch.h says what the demuxer plays); when the demuxer was
 *      not watched from its start, the fragment size over its duration that
 *      the demuxer itself computes and tags its output with
 *      (GST_TAG_NOMINAL_BITRATE);
 *   3. a bitrate query answered downstream (queue2, demuxers, parsers);
 *   4. Content-Length over the duration downstream reports;
 *   5. the rate downstream consumes, once it pushes back: when more than
 *      half of a CONSUMPTION_WINDOW_US window is spent waiting for
 *      downstream to take a buffer (a live pipeline, a sink that syncs to
 *      the clock behind a full queue), the rate delivered over that window
 *      is the rate the pipeline consumes.
 * The minimum is `min-rate` if set, the ABR minimum for a variant, else
 * bitrate × rate-headroom.
 *
 * Two steps: bitrate_choose() learns from the sources (queries downstream,
 * the demuxer: the streaming thread, no lock held); bitrate_settle()
 * applies the properties to what was learned (pure; the element calls it
 * under its prefs_lock with the properties of now, so a property set
 * while the sources were asked is not lost).
 */
#ifndef BWSS_SRC_BITRATE_H
#define BWSS_SRC_BITRATE_H

#include <gst/gst.h>

#define CONSUMPTION_WINDOW_US  1000000
#define CONSUMPTION_PUSHBACK   0.5      /* share of the window spent downstream */

typedef enum {
  BITRATE_NONE,
  BITRATE_PROPERTY,
  BITRATE_VARIANT,
  BITRATE_FRAGMENT,
  BITRATE_QUERY,
  BITRATE_LENGTH,
  BITRATE_CONSUMPTION,
} BitrateSource;

/* "none", "property", "variant", "fragment-size/duration", "bitrate-query",
 * "content-length/duration", "consumption" */
const char *bitrate_source_name (BitrateSource s);

typedef struct {
  gint64  left_us;         /* when create() last handed a buffer over, 0 = never */
  gint64  window_us;       /* start of the window */
  gint64  downstream_us;   /* time spent downstream in the window */
  guint64 bytes;           /* handed over in the window */
  double  rate_bps;        /* the consumption rate, 0 while downstream keeps up */
} ConsumptionMeter;

void consumption_reset (ConsumptionMeter *m);
/* create() was called at @now: downstream gave the thread back. */
void consumption_enter (ConsumptionMeter *m, gint64 now);
/* create() hands @bytes over at @now. */
void consumption_leave (ConsumptionMeter *m, gint64 now, gsize bytes);

typedef struct {
  guint64     bitrate_prop;     /* the property, 0 = unset */
  gboolean    have_size;
  guint64     size;             /* bytes */
  double      sigma;            /* the domain's σ, bit/s, < 0 unknown */
  GstElement *demuxer;          /* the legacy adaptive demuxer, or NULL */
  const ConsumptionMeter *meter;
} BitrateInputs;

typedef struct {
  guint64       bitrate;        /* bit/s, 0 unknown */
  BitrateSource source;
  double        min_rate;       /* bit/s: the ABR minimum of a variant (0 for
                                 * the other sources) after bitrate_choose,
                                 * the one to register after bitrate_settle */
  guint64       abr_previous;   /* the ABR rule's last choice (kept across calls) */
} BitrateChoice;

/* Asks the sources, in order, for @src (its src pad for queries). */
void bitrate_choose (GstElement *src, const BitrateInputs *in, BitrateChoice *io);

/* The bitrate and minimum the properties make of @learned: the bitrate
 * property if set (none once it is cleared, until the sources are asked
 * again); min-rate if set, else the ABR minimum for a variant or a
 * fragment, else bitrate × @headroom. */
void bitrate_settle (const BitrateChoice *learned, guint64 bitrate_prop, guint64 min_rate_prop,
                     double headroom, BitrateChoice *out);

#endif

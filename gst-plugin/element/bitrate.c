/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bitrate.c — the bitrate sources and the minimum (see bitrate.h). */
#include <gst/base/gstbasesrc.h>
#include "abrrule.h"
#include "adaptivewatch.h"
#include "bitrate.h"
#include "srcstats.h"

const char *
bitrate_source_name (BitrateSource s)
{
  switch (s) {
    case BITRATE_PROPERTY: return "property";
    case BITRATE_VARIANT: return "variant";
    case BITRATE_FRAGMENT: return "fragment-size/duration";
    case BITRATE_QUERY: return "bitrate-query";
    case BITRATE_LENGTH: return "content-length/duration";
    case BITRATE_CONSUMPTION: return "consumption";
    case BITRATE_NONE: default: return "none";
  }
}

/* ---- consumption ---- */

void
consumption_reset (ConsumptionMeter *m)
{
  memset (m, 0, sizeof *m);
}

void
consumption_enter (ConsumptionMeter *m, gint64 now)
{
  if (m->left_us)
    m->downstream_us += now - m->left_us;
  m->left_us = 0;
}

void
consumption_leave (ConsumptionMeter *m, gint64 now, gsize bytes)
{
  if (m->window_us == 0)
    m->window_us = now;
  m->bytes += bytes;
  m->left_us = now;
  gint64 span = now - m->window_us;
  if (span < CONSUMPTION_WINDOW_US)
    return;
  if (m->downstream_us >= CONSUMPTION_PUSHBACK * (double) span) {
    double r = src_stats_rate_bps (m->bytes, span);
    m->rate_bps = m->rate_bps > 0 ? 0.5 * m->rate_bps + 0.5 * r : r;
  } else {
    m->rate_bps = 0;                  /* downstream keeps up: not its rate */
  }
  m->window_us = now;
  m->downstream_us = 0;
  m->bytes = 0;
}

/* ---- the sources ---- */

static guint64
from_query (GstPad *pad)
{
  GstQuery *q = gst_query_new_bitrate ();
  guint nominal = 0;
  if (gst_pad_peer_query (pad, q))
    gst_query_parse_bitrate (q, &nominal);
  gst_query_unref (q);
  return nominal;
}

static guint64
from_length (GstPad *pad, guint64 size)
{
  GstQuery *q = gst_query_new_duration (GST_FORMAT_TIME);
  gint64 dur = 0;
  if (gst_pad_peer_query (pad, q))
    gst_query_parse_duration (q, NULL, &dur);
  gst_query_unref (q);
  return dur > 0 ? gst_util_uint64_scale (size, 8 * GST_SECOND, (guint64) dur) : 0;
}

/* The nominal bitrate the legacy demuxer tagged its output with (fragment
 * size over duration), on the pad our "srcbin-PAD" feeds; 0 if none. */
static guint64
from_demuxer_tag (GstElement *src, GstElement *demux)
{
  guint64 rate = 0;
  GstObject *bin = gst_object_get_parent (GST_OBJECT (src));
  if (bin == NULL)
    return 0;
  g_autofree char *name = gst_object_get_name (bin);
  gst_object_unref (bin);
  if (name == NULL || !g_str_has_prefix (name, "srcbin-"))
    return 0;
  GstPad *pad = gst_element_get_static_pad (demux, name + strlen ("srcbin-"));
  if (pad == NULL)
    return 0;
  GstEvent *ev = gst_pad_get_sticky_event (pad, GST_EVENT_TAG, 0);
  if (ev) {
    GstTagList *tl;
    guint v = 0;
    gst_event_parse_tag (ev, &tl);
    if (gst_tag_list_get_uint (tl, GST_TAG_NOMINAL_BITRATE, &v))
      rate = v;
    gst_event_unref (ev);
  }
  gst_object_unref (pad);
  return rate;
}

/* The legacy demuxer's variant: TRUE if it told anything. */
static gboolean
from_variant (GstElement *src, const BitrateInputs *in, BitrateChoice *io)
{
  AdaptiveState st;
  if (!adaptive_watch_get (in->demuxer, &st)) {
    adaptive_watch_add (in->demuxer);   /* found late: its switches from now on */
    if (!adaptive_watch_get (in->demuxer, &st))
      return FALSE;
  }
  gboolean told = TRUE;
  if (st.ladder->len) {
    AbrInput a = { .ladder = (const guint64 *) st.ladder->data, .n = st.ladder->len,
                   .current = st.current, .usage = st.usage, .sigma = in->sigma,
                   .previous = io->abr_previous };
    guint64 chosen = 0;
    io->min_rate = abr_min_rate (&a, &chosen);
    io->abr_previous = chosen;
    io->bitrate = st.current ? st.current : chosen;
    io->source = BITRATE_VARIANT;
  } else if (st.current) {
    io->bitrate = st.current;
    io->min_rate = abr_need (st.current, st.usage);
    io->source = BITRATE_VARIANT;
  } else {
    guint64 tagged = from_demuxer_tag (src, in->demuxer);
    if (tagged) {
      io->bitrate = tagged;
      io->min_rate = abr_need (tagged, st.usage);
      io->source = BITRATE_FRAGMENT;
    } else {
      told = FALSE;
    }
  }
  adaptive_state_clear (&st);
  return told;
}

void
bitrate_choose (GstElement *src, const BitrateInputs *in, BitrateChoice *io)
{
  GstPad *pad = GST_BASE_SRC_PAD (src);
  guint64 rate = 0;
  io->min_rate = 0;
  if (in->bitrate_prop) {
    io->bitrate = in->bitrate_prop;
    io->source = BITRATE_PROPERTY;
  } else if (in->demuxer && from_variant (src, in, io)) {
    ;                                   /* bitrate and minimum set */
  } else if ((rate = from_query (pad))) {
    io->bitrate = rate;
    io->source = BITRATE_QUERY;
  } else if (in->have_size && in->size && (rate = from_length (pad, in->size))) {
    io->bitrate = rate;
    io->source = BITRATE_LENGTH;
  } else if (in->meter && in->meter->rate_bps > 0) {
    io->bitrate = (guint64) in->meter->rate_bps;
    io->source = BITRATE_CONSUMPTION;
  } else if (io->source == BITRATE_PROPERTY || io->source == BITRATE_VARIANT
             || io->source == BITRATE_FRAGMENT) {
    io->bitrate = 0;                    /* that source is gone */
    io->source = BITRATE_NONE;
  }
  /* else nothing knows now: the last estimate stays (a consumption rate is
   * seen only while downstream pushes back) */
}

void
bitrate_settle (const BitrateChoice *learned, guint64 bitrate_prop, guint64 min_rate_prop,
                double headroom, BitrateChoice *out)
{
  *out = *learned;
  if (bitrate_prop) {
    out->bitrate = bitrate_prop;
    out->source = BITRATE_PROPERTY;
  } else if (learned->source == BITRATE_PROPERTY) {
    out->bitrate = 0;                   /* cleared: the sources will tell */
    out->source = BITRATE_NONE;
  }
  gboolean abr = out->source == BITRATE_VARIANT || out->source == BITRATE_FRAGMENT;
  out->min_rate = min_rate_prop ? (double) min_rate_prop
                : abr ? learned->min_rate : (double) out->bitrate * headroom;
}

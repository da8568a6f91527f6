/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * manifest.h — the bitrate ladder of an adaptive stream, from its manifest
 * as it enters the demuxer (pure; no GStreamer).
 *
 * HLS: a master playlist's #EXT-X-STREAM-INF BANDWIDTH values (I-frame
 * variants are left out) and the URI of each variant, in the order listed
 * (the demuxers start on the first one listed).  DASH: the bandwidth of each
 * video Representation (an AdaptationSet or Representation whose mimeType
 * or contentType is video; every Representation if none says so) and every
 * absolute BaseURL.  Anything else has no ladder.
 */
#ifndef BWSS_SRC_MANIFEST_H
#define BWSS_SRC_MANIFEST_H

#include <glib.h>

typedef enum { MANIFEST_UNKNOWN, MANIFEST_HLS, MANIFEST_DASH } ManifestKind;

typedef struct {
  ManifestKind kind;
  GArray      *ladder;       /* guint64 bit/s, ascending, unique */
  guint64      first_listed; /* HLS: BANDWIDTH of the first variant listed, 0 if none */
  GPtrArray   *uris;         /* variant URIs (HLS) or BaseURLs (DASH), as written */
} Manifest;

/* Parses @len bytes of @text.  Never fails: an unknown or broken manifest
 * has kind MANIFEST_UNKNOWN and an empty ladder. */
Manifest *manifest_parse (const char *text, gsize len);
void      manifest_free (Manifest *m);

#endif

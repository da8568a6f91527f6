/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srclimits.h — the ranges of bwsshttpsrc's BWSS properties, in one place.
 *
 * They are the limits the rest of bwss applies to the same quantities: a
 * rate is at most 1 Pbit/s (libbwss's rate parser), a weight at most 1e9
 * (bwss-run), a priority any 32-bit integer.  When libbwss exports shared
 * limits with its unified rate/weight/priority parser, these definitions
 * become its constants and nothing else in the plugin changes.
 */
#ifndef BWSS_SRC_LIMITS_H
#define BWSS_SRC_LIMITS_H

#include <glib.h>

#define SRC_PRIORITY_MIN     G_MININT32
#define SRC_PRIORITY_MAX     G_MAXINT32
#define SRC_WEIGHT_MIN       0.0
#define SRC_WEIGHT_MAX       1e9
/* bit/s */
#define SRC_RATE_MAX         G_GUINT64_CONSTANT (1000000000000000)
#define SRC_HEADROOM_MIN     1.0
#define SRC_HEADROOM_MAX     10.0

#endif

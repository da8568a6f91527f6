/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srclimits.h — the ranges of bwsshttpsrc's BWSS properties, in one place:
 * the limits every front end of bwss shares (bwss/bwss.h; a domain refuses
 * preferences outside them).
 */
#ifndef BWSS_SRC_LIMITS_H
#define BWSS_SRC_LIMITS_H

#include <glib.h>
#include <bwss/bwss.h>

#define SRC_PRIORITY_MIN     BWSS_PRIORITY_MIN
#define SRC_PRIORITY_MAX     BWSS_PRIORITY_MAX
#define SRC_WEIGHT_MIN       0.0
#define SRC_WEIGHT_MAX       BWSS_WEIGHT_MAX
/* bit/s */
#define SRC_RATE_MAX         ((guint64) BWSS_RATE_MAX_BPS)
#define SRC_HEADROOM_MIN     1.0
#define SRC_HEADROOM_MAX     10.0

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* abrrule.c — the ABR-aware minimum rate (the rule is in abrrule.h). */
#include "abrrule.h"

double
abr_usable_sigma (const BwssDomainStats *ds)
{
  if (ds == NULL || ds->controller_pid == 0 || ds->suspended)
    return -1.0;
  switch (ds->phase) {
    case BWSS_PHASE_REACTIVE:          /* paper loop, past its raise */
    case BWSS_PHASE_LINK_CONGESTED:
    case BWSS_PHASE_TRACK:             /* delay loop, past its start */
      return ds->sigma_bps;
    default:                           /* idle, start, release, raise */
      return -1.0;
  }
}

double
abr_need (guint64 bandwidth, double usage)
{
  double f = CLAMP (usage, 0.05, 1.0);
  if (!(usage == usage))               /* NaN: the demuxer's default */
    f = 0.8;
  return (double) bandwidth / f * ABR_MARGIN;
}

double
abr_min_rate (const AbrInput *in, guint64 *chosen)
{
  guint64 pick = 0;
  if (in->n == 0) {
    *chosen = 0;
    return 0.0;
  }
  if (!(in->sigma >= 0.0)) {
    pick = in->ladder[0];
    for (guint i = 0; i < in->n; i++)
      if (in->ladder[i] == in->current)
        pick = in->current;
  } else {
    pick = in->ladder[0];
    for (guint i = 0; i < in->n; i++) {
      double need = abr_need (in->ladder[i], in->usage);
      if (in->ladder[i] > in->previous)
        need *= ABR_UP_MARGIN;
      if (need <= in->sigma || in->ladder[i] == in->current)
        pick = in->ladder[i];
    }
  }
  *chosen = pick;
  return abr_need (pick, in->usage);
}

void
player_prefs (const PlayerInput *in, BwssPrefs *out)
{
  out->priority = in->priority;
  out->weight = in->weight;
  if (!in->fetching) {
    out->min_rate_bps = 0.0;           /* no request: the reservation is the others' */
    if (in->buffer == PLAYER_BUFFER_FULL)
      out->weight = 0.0;               /* ... and, with nothing to refill, the share */
    return;
  }
  out->min_rate_bps = in->min_rate;
  if (in->buffer == PLAYER_BUFFER_FULL && in->min_rate > 0.0)
    out->weight = 0.0;                 /* eq. 6 with w = 0: the target is the minimum */
}

PlayerBuffer
player_buffer_of_level (gint64 level_ns, guint64 target_ns)
{
  if (level_ns < 0)
    return PLAYER_BUFFER_UNKNOWN;
  if (target_ns == 0)
    target_ns = PLAYER_DEFAULT_TARGET_NS;
  return (double) level_ns >= PLAYER_FULL_FRACTION * (double) target_ns ? PLAYER_BUFFER_FULL
                                                                         : PLAYER_BUFFER_LOW;
}

double
player_fetch_hold_ms (guint32 rtt_us, guint32 mss, double min_rate)
{
  if (rtt_us == 0 || mss == 0 || !(min_rate > 0.0))
    return PLAYER_FETCH_HOLD_MAX_MS;
  double rtt_ms = rtt_us / 1e3, segment_ms = 8.0 * mss / min_rate * 1e3;
  double hold = 2.0 * MAX (rtt_ms, segment_ms);
  return MAX (hold, PLAYER_FETCH_HOLD_MIN_MS);
}

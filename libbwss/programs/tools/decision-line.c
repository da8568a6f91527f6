/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decision-line.c — a delay-loop decision as a line (see decision-line.h). */
#define BWSS_USE_UNSTABLE_API
#include <stdio.h>
#include "decision-line.h"

static const char *const detect_names[] = {
  "no-bulk", "unfloored", "overrun", "short-min", "has-link", "no-queue", "held",
};

static const char *
seen_name (BwssSeen s)
{
  switch (s) {
    case BWSS_SEEN_FOREIGN: return "foreign";
    case BWSS_SEEN_OURS:    return "ours";
    case BWSS_SEEN_NEITHER: return "neither";
    default:                return "-";
  }
}

size_t
decision_line (char *buf, size_t len, const BwssDecision *d, uint64_t zero_us)
{
  char missing[128] = "-";
  size_t m = 0;
  for (size_t i = 0; i < sizeof detect_names / sizeof detect_names[0]; i++)
    if (d->missing & (1u << i)) {
      int k = snprintf (missing + m, sizeof missing - m, "%s%s", m ? "," : "", detect_names[i]);
      if (k < 0 || (size_t) k >= sizeof missing - m)
        return 0;
      m += (size_t) k;
    }
  uint64_t t = d->at_us >= zero_us ? d->at_us - zero_us : 0;
  int n = snprintf (buf, len, "%llu.%06llu phase=%s rule=%s sigma=%.0f u=%.0f q=%.0f qt=%.0f seen=%s"
                    " score=%.3f missing=%s bulk=%u floored=%u lost=%u short=%u overrun=%u\n",
                    (unsigned long long) (t / 1000000), (unsigned long long) (t % 1000000),
                    bwss_phase_name (d->phase), d->rule ? d->rule : "-", d->sigma_bps,
                    d->aggregate_bps, d->queue_us, d->queue_target_us, seen_name (d->seen), d->score,
                    missing, d->bulk, d->bulk_floored, d->lost, d->short_min, d->overrun);
  return n > 0 && (size_t) n < len ? (size_t) n : 0;
}

size_t
decision_flow_line (char *buf, size_t len, uint64_t at_us, uint64_t zero_us, uint64_t id,
                    const BwssFlowState *st)
{
  uint64_t t = at_us >= zero_us ? at_us - zero_us : 0;
  int n = snprintf (buf, len, "%llu.%06llu flow id=%llu min=%.0f target=%.0f rate=%.0f window=%u"
                    " pace=%.0f rtt=%u\n", (unsigned long long) (t / 1000000),
                    (unsigned long long) (t % 1000000), (unsigned long long) id,
                    st->prefs.min_rate_bps, st->target_bps, st->rate_bps, st->window_bytes,
                    st->read_rate_bps, st->rtt_us);
  return n > 0 && (size_t) n < len ? (size_t) n : 0;
}

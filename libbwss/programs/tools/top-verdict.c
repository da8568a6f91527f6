/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* top-verdict.c — bwss-top's first line (top-verdict.h). */
#include <math.h>
#include <stdio.h>
#include "top-verdict.h"

/* Rates under this are written in kbit/s, from it in Mbit/s. */
#define MBIT_FROM_BPS 1e6

/* Writes @bps in the unit @unit_bps (1e3 or 1e6) with one decimal below 100,
 * none from 100 (a rate unknown, i.e. negative, is 0). */
static void
fmt_in (char *buf, size_t len, double bps, double unit_bps)
{
  double v = bps > 0 && isfinite (bps) ? bps / unit_bps : 0.0;
  snprintf (buf, len, v < 100 ? "%.1f" : "%.0f", v);
}

static const char *
unit_name (double unit_bps)
{
  return unit_bps >= MBIT_FROM_BPS ? "Mbit/s" : "kbit/s";
}

void
top_verdict (char *buf, size_t len, const BwssDomainStats *ds, const BwssFlowInfo *rows, size_t n,
             int utf8)
{
  double v = 0, m = 0, t = 0, d = 0;
  size_t videos = 0, downloads = 0;
  for (size_t i = 0; i < n; i++) {
    const BwssFlowStats *f = &rows[i].stats;
    double rate = f->rate_bps > 0 ? f->rate_bps : 0;
    if (f->prefs.min_rate_bps > 0) {
      videos++;
      v += rate;
      m += f->prefs.min_rate_bps;
      t += f->target_bps > 0 ? f->target_bps : 0;
    } else {
      downloads++;
      d += rate;
    }
  }
  const char *dash = utf8 ? "\xe2\x80\x94" : "-";
  char video[160], rest[96], a[32], b[32], c[32];
  double vu = m >= MBIT_FROM_BPS || v >= MBIT_FROM_BPS ? MBIT_FROM_BPS : 1e3;
  double du = d >= MBIT_FROM_BPS ? MBIT_FROM_BPS : 1e3;
  fmt_in (a, sizeof a, v, vu);
  fmt_in (b, sizeof b, m, vu);
  fmt_in (c, sizeof c, t, vu);
  if (videos == 0)
    snprintf (video, sizeof video, "no video (no flow has a minimum rate)");
  else if (ds->suspended)
    snprintf (video, sizeof video, "video %s of %s %s needed %s sharing suspended, nothing is protected",
              a, b, unit_name (vu), dash);
  else if (ds->controller_pid == 0)
    snprintf (video, sizeof video, "video %s of %s %s needed %s no controller, nothing is protected",
              a, b, unit_name (vu), dash);
  else if (v >= m)
    snprintf (video, sizeof video, "video %s of %s %s needed %s OK", a, b, unit_name (vu), dash);
  else if (t >= m)
    snprintf (video, sizeof video, "video %s of %s %s needed %s OK (offered %s, the player reads less)",
              a, b, unit_name (vu), dash, c);
  else
    snprintf (video, sizeof video, "video %s of %s %s needed %s SHORT (the link offers %s)",
              a, b, unit_name (vu), dash, c);
  fmt_in (a, sizeof a, d, du);
  if (downloads == 0)
    snprintf (rest, sizeof rest, "no other download");
  else
    snprintf (rest, sizeof rest, "%zu download%s share%s %s %s", downloads, downloads == 1 ? "" : "s",
              downloads == 1 ? "s" : "", a, unit_name (du));
  /* what the loop does, where one allocates */
  const char *mode = ds->controller_pid && !ds->suspended ? bwss_phase_mode (ds->phase) : NULL;
  snprintf (buf, len, "%s; %s%s%s", video, rest, mode ? "; " : "", mode ? mode : "");
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * params.c — the tunables of the control laws and their defaults.
 *
 * Values marked "paper" are the ones of Mehra, De Vleeschouwer and Zakhor
 * (Sec. IV and V); the others fill what the paper leaves open, each with the
 * reason beside it.
 */
#include <math.h>
#include <bwss/control.h>

/* FCS (Sec. IV) */
#define DEFAULT_ALPHA            0.05  /* rate slack: ±5 % desired interval; below
                                        * one MSS/RTT step at the windows we see
                                        * (4–64 segments), so the law settles */
#define DEFAULT_BETA             0.7   /* paper: stability factor of eq. (4) */
#define DEFAULT_EPSILON          0.3   /* paper: EWMA weight of the old R */
#define DEFAULT_PHI_RTTS         2.0   /* paper: φ = 2·RTT */
#define DEFAULT_WAIT_PHIS        3.0   /* paper: no adjustment before RTT + 3φ */
#define DEFAULT_MIN_PHI_US       10000 /* 10 ms: the socket layer ticks every 10 ms,
                                        * a shorter period would be mostly jitter */
#define DEFAULT_MIN_WINDOW       1     /* paper: w >= 1 so every RTT moves data */
#define DEFAULT_MAX_WINDOW_FACTOR 4.0  /* anti-windup: a flow that cannot reach T
                                        * (limited elsewhere) must not grow w without
                                        * bound; 4× the model leaves room for RTT
                                        * estimates that undershoot by 4× */
#define DEFAULT_MSS              1448  /* Ethernet MSS with timestamps, bytes */

/* σ loop (Sec. V-C) */
#define DEFAULT_GAMMA            0.8   /* paper */
#define DEFAULT_RAISE_STEP       0.10  /* +10 % per probe: from a 2× underestimate
                                        * the raise phase reaches the link in ~8 probes */
#define DEFAULT_RAISE_FLOOR_BPS  64000.0 /* so σ can leave 0 (idle start) */
#define DEFAULT_RISE_THRESHOLD   0.03  /* U must grow by 3 %: above the FCS slack
                                        * noise (α = 5 % split over several flows) */
#define DEFAULT_RELEASE_US       2000000 /* 2 s of plain TCP to measure U: ~20 RTTs
                                          * at 100 ms, enough for slow start to end */
#define DEFAULT_PROBE_MIN_US     500000  /* 0.5 s */
#define DEFAULT_PROBE_MAX_US     5000000 /* 5 s: FCS settling at 350 ms RTT */
#define DEFAULT_REINIT_PERIOD_US (300ull * 1000000ull) /* paper: "a few minutes" */

void
bwss_params_init (BwssParams *p)
{
  p->alpha = DEFAULT_ALPHA;
  p->beta = DEFAULT_BETA;
  p->epsilon = DEFAULT_EPSILON;
  p->phi_rtts = DEFAULT_PHI_RTTS;
  p->wait_phis = DEFAULT_WAIT_PHIS;
  p->min_phi_us = DEFAULT_MIN_PHI_US;
  p->min_window_segments = DEFAULT_MIN_WINDOW;
  p->max_window_factor = DEFAULT_MAX_WINDOW_FACTOR;
  p->default_mss = DEFAULT_MSS;
  p->gamma = DEFAULT_GAMMA;
  p->raise_step = DEFAULT_RAISE_STEP;
  p->raise_floor_bps = DEFAULT_RAISE_FLOOR_BPS;
  p->rise_threshold = DEFAULT_RISE_THRESHOLD;
  p->release_us = DEFAULT_RELEASE_US;
  p->probe_min_us = DEFAULT_PROBE_MIN_US;
  p->probe_max_us = DEFAULT_PROBE_MAX_US;
  p->reinit_period_us = DEFAULT_REINIT_PERIOD_US;
}

static bool
in_open_range (double v, double lo, double hi)
{
  return isfinite (v) && v > lo && v < hi;
}

#define CHECK(cond, name) \
  do { if (!(cond)) { if (field) *field = (name); return BWSS_EINVAL; } } while (0)

int
bwss_params_validate (const BwssParams *p, const char **field)
{
  if (field)
    *field = NULL;
  CHECK (p != NULL, "params");
  CHECK (in_open_range (p->alpha, 0.0, 1.0), "alpha");
  CHECK (isfinite (p->beta) && p->beta > 0.0 && p->beta <= 1.0, "beta");
  CHECK (isfinite (p->epsilon) && p->epsilon >= 0.0 && p->epsilon < 1.0, "epsilon");
  CHECK (isfinite (p->phi_rtts) && p->phi_rtts > 0.0 && p->phi_rtts <= 100.0, "phi_rtts");
  CHECK (isfinite (p->wait_phis) && p->wait_phis >= 1.0 && p->wait_phis <= 100.0, "wait_phis");
  CHECK (p->min_phi_us <= 10000000, "min_phi_us");
  CHECK (p->min_window_segments >= 1 && p->min_window_segments <= 65535, "min_window_segments");
  CHECK (isfinite (p->max_window_factor) && p->max_window_factor >= 1.0
         && p->max_window_factor <= 1000.0, "max_window_factor");
  CHECK (p->default_mss >= 64 && p->default_mss <= 65535, "default_mss");
  CHECK (in_open_range (p->gamma, 0.0, 1.0), "gamma");
  CHECK (isfinite (p->raise_step) && p->raise_step > 0.0 && p->raise_step <= 10.0, "raise_step");
  CHECK (isfinite (p->raise_floor_bps) && p->raise_floor_bps >= 0.0, "raise_floor_bps");
  CHECK (isfinite (p->rise_threshold) && p->rise_threshold > 0.0 && p->rise_threshold < 1.0,
         "rise_threshold");
  CHECK (p->release_us >= 1000 && p->release_us <= 600000000ull, "release_us");
  CHECK (p->probe_min_us >= 1000 && p->probe_min_us <= p->probe_max_us, "probe_min_us");
  CHECK (p->probe_max_us <= 600000000ull, "probe_max_us");
  CHECK (p->reinit_period_us == 0 || p->reinit_period_us >= 1000000, "reinit_period_us");
  return BWSS_OK;
}
